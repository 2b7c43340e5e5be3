//! Website links as a CRM matches them: the registrable domain of a link, and the URL shorteners whose domain
//! says nothing about the company.

/// URL shorteners and redirectors: a website link on one of these hosts (or below them) names the shortener,
/// not the company, so its `domain` is taken from where the link lands instead. The one list; add hosts here.
pub const URL_SHORTENERS: [&str; 22] = [
    "goo.gle",
    "goo.gl",
    "bit.ly",
    "bitly.com",
    "lnkd.in",
    "t.co",
    "ow.ly",
    "buff.ly",
    "tinyurl.com",
    "rebrand.ly",
    "is.gd",
    "v.gd",
    "cutt.ly",
    "shorturl.at",
    "rb.gy",
    "tiny.cc",
    "bl.ink",
    "t.ly",
    "s.id",
    "dub.sh",
    "fb.me",
    "hubs.ly",
];

/// Whether `url` (absolute, or a bare host and path) points at a host of [`URL_SHORTENERS`] or below one.
pub fn is_url_shortener(url: &str) -> bool {
    host_of(url).is_some_and(|host| {
        URL_SHORTENERS.iter().any(|shortener| {
            host == *shortener
                || host
                    .strip_suffix(shortener)
                    .is_some_and(|rest| rest.ends_with('.'))
        })
    })
}

/// The registrable domain (public-suffix aware) of a website URL: `http://www.arcom.com.br/x` → `arcom.com.br`,
/// `https://careers.google.com/jobs` → `google.com`. A bare host (`www.example.org`) is read as `http://`.
pub fn registrable_domain(url: &str) -> Option<String> {
    let host = host_of(url)?;
    psl::domain_str(&host).map(str::to_owned)
}

/// The host of a URL, lower case, without a trailing dot.
fn host_of(url: &str) -> Option<String> {
    let with_scheme = if url.contains("://") {
        url.to_owned()
    } else {
        format!("http://{url}")
    };
    let host = url::Url::parse(&with_scheme)
        .ok()?
        .host_str()?
        .to_ascii_lowercase();
    Some(host.trim_end_matches('.').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_are_registrable() {
        for (website, expected) in [
            ("http://www.audiense.com", Some("audiense.com")),
            ("https://goo.gle/3DLEokh", Some("goo.gle")),
            ("http://www.arcom.com.br", Some("arcom.com.br")),
            ("https://shop.example.co.uk/path", Some("example.co.uk")),
            ("https://careers.google.com/jobs/", Some("google.com")),
            ("www.example.org", Some("example.org")),
            ("not a url", None),
        ] {
            assert_eq!(
                registrable_domain(website).as_deref(),
                expected,
                "{website}"
            );
        }
    }

    #[test]
    fn shorteners_are_known_by_host_only() {
        for shortener in [
            "https://goo.gle/3DLEokh",
            "http://BIT.LY/x",
            "https://lnkd.in/gNuhikrK",
            "https://t.co/abc",
            "https://on.ow.ly/x", // below a shortener
            "tinyurl.com/abc",
        ] {
            assert!(is_url_shortener(shortener), "{shortener}");
        }
        for site in [
            "https://www.google.com",
            "https://audiense.com/bit.ly",
            "https://notbit.ly/x", // another domain ending in the same letters
            "https://t.com",
            "not a url",
        ] {
            assert!(!is_url_shortener(site), "{site}");
        }
    }
}
