//! Company names compared as people read them: [`name_key`] folds case, accents, punctuation and legal-form
//! suffixes, so that `Stripe, Inc.`, `STRIPE INC` and `Stripe` are one name, and `Société Générale S.A.` is
//! `societe generale`. The snapshot cache indexes stored pages by it and the resolver verifies a page's name with
//! it, so both read the same rule.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Legal-form words dropped from the end of a name (after case and accent folding, dots removed, so `S.A.` is
/// `sa` and `L.L.C.` is `llc`). English, German, French, Spanish, Italian, Dutch, Nordic, Japanese and
/// Australian forms; a name that is only such words keeps them.
pub const LEGAL_SUFFIXES: &[&str] = &[
    "inc",
    "incorporated",
    "corp",
    "corporation",
    "co",
    "company",
    "llc",
    "llp",
    "lp",
    "ltd",
    "limited",
    "plc",
    "gmbh",
    "ag",
    "kg",
    "kgaa",
    "ug",
    "se",
    "sa",
    "sas",
    "sarl",
    "srl",
    "spa",
    "sl",
    "bv",
    "nv",
    "oy",
    "oyj",
    "ab",
    "as",
    "asa",
    "aps",
    "pty",
    "pte",
    "kk",
    "ulc",
    "group",
];

/// The name as compared: NFKD with combining marks dropped (accents), lower case, `&` read as `and`, every other
/// character that is not a letter or digit a space, runs of single letters joined (`s a` → `sa`), a leading
/// `the` and trailing [`LEGAL_SUFFIXES`] dropped, words joined by one space. Empty when nothing is left.
///
/// ```
/// use company_model::name_key;
/// assert_eq!(name_key("Stripe, Inc."), "stripe");
/// assert_eq!(name_key("Société Générale S.A."), "societe generale");
/// assert_eq!(name_key("AT&T"), "at and t");
/// assert_eq!(name_key("The Home Depot"), "home depot");
/// ```
pub fn name_key(name: &str) -> String {
    let folded: String = name
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect::<String>()
        .replace('&', " and ")
        .replace(['.', '\''], "");
    // Each word, and whether it was built only of one-letter words (`s a` → `sa`, `l l c` → `llc`).
    let mut built: Vec<(String, bool)> = Vec::new();
    for word in folded.split(|c: char| !c.is_alphanumeric()) {
        let single = word.chars().count() == 1;
        match built.last_mut() {
            _ if word.is_empty() => {}
            Some((last, true)) if single => last.push_str(word),
            _ => built.push((word.to_owned(), single)),
        }
    }
    let mut words: Vec<String> = built.into_iter().map(|(word, _)| word).collect();
    if words.len() > 1 && words[0] == "the" {
        words.remove(0);
    }
    while words.len() > 1
        && words
            .last()
            .is_some_and(|w| LEGAL_SUFFIXES.contains(&w.as_str()))
    {
        words.pop();
    }
    words.join(" ")
}

/// The page names (`/company/<name>`) a company called `name` most likely has, best first: its [`name_key`]'s
/// words joined by `-`, then run together (`Acme Widgets GmbH` → `acme-widgets`, `acmewidgets`). Empty when the
/// key is.
pub fn name_slugs(name: &str) -> Vec<String> {
    let key = name_key(name);
    let words: Vec<&str> = key.split(' ').filter(|w| !w.is_empty()).collect();
    let mut slugs = Vec::new();
    if words.is_empty() {
        return slugs;
    }
    slugs.push(words.join("-"));
    if words.len() > 1 {
        slugs.push(words.concat());
    }
    slugs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_as_people_read_them() {
        for (name, key) in [
            ("Stripe", "stripe"),
            ("STRIPE INC", "stripe"),
            ("Stripe, Inc.", "stripe"),
            ("Acme Widgets GmbH", "acme widgets"),
            ("Nestlé S.A.", "nestle"),
            ("Nestlé S. A.", "nestle"),
            ("Müller & Söhne KG", "muller and sohne"),
            ("Audiense", "audiense"),
            ("Example L.L.C.", "example"),
            ("Group", "group"),
            ("  ", ""),
            ("3M Company", "3m"),
            ("The Company", "company"),
        ] {
            assert_eq!(name_key(name), key, "{name}");
        }
    }

    #[test]
    fn slugs_join_and_run_together() {
        assert_eq!(
            name_slugs("Acme Widgets GmbH"),
            ["acme-widgets", "acmewidgets"]
        );
        assert_eq!(name_slugs("Stripe, Inc."), ["stripe"]);
        assert!(name_slugs("...").is_empty());
    }
}
