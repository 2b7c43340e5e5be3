"""Python peers for the parsing benchmark (`just bench`): the same core fields the Rust parser extracts, from the
same captured pages, with the two stacks Python scrapers use.

- BeautifulSoup 4 on lxml: what most open-source scrapers of these pages are built on.
- selectolax on lexbor (C): the fastest HTML parser Python scrapers reach for.

Core fields: name (JSON-LD `name`, else the top card's title), description (JSON-LD, else the About section),
slogan, website, industry, size, type, founded, headquarters, specialties, follower count, logo, and the names
and links of the similar pages. Prints one JSON object: pages per second per round for each stack, and how many
pages gave a name (a check that both really extract).

Usage: python peers.py [--seconds S] [--rounds N] DIR...
"""

import json
import re
import sys
import time
from pathlib import Path

from bs4 import BeautifulSoup
from selectolax.lexbor import LexborHTMLParser

ABOUT_ROWS = {
    "website": "about-us__website",
    "industry": "about-us__industry",
    "size": "about-us__size",
    "type": "about-us__organizationType",
    "founded": "about-us__foundedOn",
    "headquarters": "about-us__headquarters",
    "specialties": "about-us__specialties",
}
FOLLOWERS = re.compile(r"([\d,.]+)\s+followers")


def clean(text):
    text = " ".join(text.split()) if text else ""
    return text or None


def organization(ld_texts):
    for text in ld_texts:
        try:
            data = json.loads(text)
        except ValueError:
            continue
        items = data.get("@graph", [data]) if isinstance(data, dict) else data
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get("@type") == "Organization":
                return item
    return {}


def followers(subline):
    match = FOLLOWERS.search(subline or "")
    return int(re.sub(r"[,.]", "", match.group(1))) if match else None


def extract_bs4(html):
    soup = BeautifulSoup(html, "lxml")
    org = organization(s.get_text() for s in soup.select('script[type="application/ld+json"]'))
    title = soup.select_one("h1.top-card-layout__title")
    record = {
        "name": org.get("name") or (clean(title.get_text()) if title else None),
        "description": org.get("description"),
        "slogan": org.get("slogan"),
    }
    for field, test_id in ABOUT_ROWS.items():
        row = soup.select_one(f'[data-test-id="{test_id}"] dd')
        record[field] = clean(row.get_text()) if row else None
    if not record["description"]:
        about = soup.select_one('[data-test-id="about-us__description"]')
        record["description"] = clean(about.get_text()) if about else None
    subline = soup.select_one("h3.top-card-layout__first-subline")
    record["followers"] = followers(subline.get_text() if subline else None)
    logo = soup.select_one("img.top-card-layout__entity-image")
    record["logo"] = logo and (logo.get("src") or logo.get("data-delayed-url"))
    record["similar"] = [
        (clean(a.get_text()), a.get("href"))
        for a in soup.select('[data-test-id="similar-pages"] a')
    ]
    return record


def extract_selectolax(html):
    tree = LexborHTMLParser(html)
    org = organization(s.text() for s in tree.css('script[type="application/ld+json"]'))
    title = tree.css_first("h1.top-card-layout__title")
    record = {
        "name": org.get("name") or (clean(title.text()) if title else None),
        "description": org.get("description"),
        "slogan": org.get("slogan"),
    }
    for field, test_id in ABOUT_ROWS.items():
        row = tree.css_first(f'[data-test-id="{test_id}"] dd')
        record[field] = clean(row.text()) if row else None
    if not record["description"]:
        about = tree.css_first('[data-test-id="about-us__description"]')
        record["description"] = clean(about.text()) if about else None
    subline = tree.css_first("h3.top-card-layout__first-subline")
    record["followers"] = followers(subline.text() if subline else None)
    logo = tree.css_first("img.top-card-layout__entity-image")
    record["logo"] = logo and (logo.attributes.get("src") or logo.attributes.get("data-delayed-url"))
    record["similar"] = [
        (clean(a.text()), a.attributes.get("href"))
        for a in tree.css('[data-test-id="similar-pages"] a')
    ]
    return record


def rounds(pages, extract, count, seconds):
    per_second = []
    for _ in range(count):
        started = time.perf_counter()
        done = 0
        while time.perf_counter() - started < seconds:
            for html in pages:
                extract(html)
                done += 1
        per_second.append(done / (time.perf_counter() - started))
    return per_second


def main(argv):
    seconds, count, folders = 2.0, 3, []
    args = iter(argv)
    for arg in args:
        if arg == "--seconds":
            seconds = float(next(args))
        elif arg == "--rounds":
            count = int(next(args))
        else:
            folders.append(arg)
    files = sorted(p for folder in folders for p in Path(folder).rglob("*.html"))
    pages = [f.read_text(encoding="utf-8") for f in files]
    if not pages:
        sys.exit("no .html files under the given folders")
    report = {"pages": len(pages)}
    for name, extract in [("beautifulsoup_lxml", extract_bs4), ("selectolax_lexbor", extract_selectolax)]:
        report[name] = {
            "names_found": sum(1 for html in pages if extract(html)["name"]),
            "per_second": rounds(pages, extract, count, seconds),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
