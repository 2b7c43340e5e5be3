//! The documentation's links resolve in a fresh clone: every relative link of the README and of `docs/` names a
//! file of the repository (the README once linked the contract outside it, dead in a clone).

use std::path::Path;

/// The relative targets of Markdown links `[text](target)` in `text`, without `#fragment`s.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("](") {
        rest = &rest[start + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or_default().trim();
        let external = target.contains("://") || target.starts_with("mailto:");
        if !target.is_empty() && !external {
            links.push(target.to_owned());
        }
        rest = &rest[end..];
    }
    links
}

#[test]
fn every_relative_link_of_the_readme_and_the_docs_names_a_file_of_the_repository() {
    let root = tests::workspace();
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let root = root.canonicalize().expect("the workspace");
    let mut dead = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("readable");
        let folder = page.parent().unwrap_or(Path::new("."));
        for link in relative_links(&text) {
            let inside = folder
                .join(&link)
                .canonicalize()
                .is_ok_and(|target| target.starts_with(&root));
            if !inside {
                dead.push(format!("{}: {link}", page.display()));
            }
        }
    }
    assert!(pages.len() > 5, "{pages:?}");
    assert!(
        dead.is_empty(),
        "links that do not resolve inside the repository:\n{}",
        dead.join("\n")
    );
}

#[test]
fn links_are_read_as_markdown_writes_them() {
    let links = relative_links("see [a](docs/a.md#x), [b](https://x.y/z) and ![c](img/c.png).");
    assert_eq!(links, ["docs/a.md", "img/c.png"]);
}
