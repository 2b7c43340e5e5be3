//! Numbers as pages print them.

/// Reads the first count in localized text: `"37,814,363 followers"` → 37814363, `"10,001+ employees"` →
/// 10001, `"1.2K"` → 1200, `"3 M"` → 3000000, `"5 750 abonnés"` → 5750, `"1,2 Mio. Follower"` → 1200000,
/// `"12 mil seguidores"` → 12000, `"1.2万人"` → 12000.
///
/// Thousands separators `,` `.` `'` and (narrow) no-break spaces are dropped; with a magnitude after the number
/// (`K`, `M`, `B` and the words and signs the country subdomains print, listed in docs/record.md) the last `.`
/// or `,` is a decimal mark. Returns `None` when the text holds no digit or the count overflows.
pub fn parse_count(text: &str) -> Option<u64> {
    read_count(text).map(|count| count.value)
}

/// A count as read from text, and whether the page rounded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Count {
    /// The number.
    pub(crate) value: u64,
    /// Printed with a magnitude (`5.7K`, `1,2 Mio.`): rounded by the page, so an exact count elsewhere is better.
    pub(crate) rounded: bool,
}

/// [`parse_count`], saying whether the number was printed rounded.
pub(crate) fn read_count(text: &str) -> Option<Count> {
    let start = text.find(|c: char| c.is_ascii_digit())?;
    let rest = &text[start..];
    let mut end = 0;
    for (i, c) in rest.char_indices() {
        let separator_then_digit = matches!(c, ',' | '.' | '\'' | ' ' | '\u{a0}' | '\u{202f}')
            && rest[i + c.len_utf8()..].starts_with(|d: char| d.is_ascii_digit());
        if c.is_ascii_digit() || separator_then_digit {
            end = i + c.len_utf8();
        } else {
            break;
        }
    }
    let number = &rest[..end];
    let multiplier = magnitude(&rest[end..]);
    if let Some(multiplier) = multiplier {
        let decimal: String = match number.rfind(['.', ',']) {
            Some(mark) => {
                let whole: String = number[..mark]
                    .chars()
                    .filter(char::is_ascii_digit)
                    .collect();
                format!("{whole}.{}", &number[mark + 1..])
            }
            None => number.chars().filter(char::is_ascii_digit).collect(),
        };
        let value: f64 = decimal.parse().ok()?;
        return Some(Count {
            value: (value * multiplier).round() as u64,
            rounded: true,
        });
    }
    let value = number
        .chars()
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    Some(Count {
        value,
        rounded: false,
    })
}

/// The magnitude a number is followed by, as the network's locales print it: a whole word (so `5 Mitarbeiter`
/// is not 5 million), or one CJK sign right after the number.
///
/// | magnitude | English | German | French | Spanish | Portuguese | Japanese / Chinese |
/// |---|---|---|---|---|---|---|
/// | thousand | `K`, `k`, `thousand` | `Tsd.`, `Tausend` | `k` | `mil` | `mil` | `千` |
/// | ten thousand | | | | | | `万`, `萬` |
/// | million | `M`, `m`, `million`, `mn` | `Mio.`, `Millionen` | `M`, `millions` | `M`, `millones` | `mi`, `milhões` | |
/// | hundred million | | | | | | `億`, `亿` |
/// | billion | `B`, `bn`, `billion` | `Mrd.` | `Md`, `milliards` | `mil millones` | `bi` | |
fn magnitude(after: &str) -> Option<f64> {
    let after = after.trim_start_matches([' ', '\u{a0}', '\u{202f}']);
    match after.chars().next()? {
        '千' => return Some(1e3),
        '万' | '萬' => return Some(1e4),
        '億' | '亿' => return Some(1e8),
        _ => {}
    }
    let words: Vec<String> = after
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .take(2)
        .map(str::to_lowercase)
        .collect();
    let word = words.first()?;
    // The word must follow the number (`10,001+ employees` has no magnitude); being a whole word, `5 Mitarbeiter`
    // is not 5 million, while `3 M` and `3M followers` are.
    if !after.to_lowercase().starts_with(word.as_str()) {
        return None;
    }
    match word.as_str() {
        "mil" if words.get(1).is_some_and(|w| w == "millones") => Some(1e9),
        "k" | "thousand" | "tsd" | "tausend" | "mil" => Some(1e3),
        "m" | "mn" | "million" | "millions" | "mio" | "millionen" | "millones" | "mi"
        | "milhões" | "milhoes" => Some(1e6),
        "b" | "bn" | "billion" | "billions" | "mrd" | "md" | "milliard" | "milliards" | "bi" => {
            Some(1e9)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::parse_count;

    #[test]
    fn counts() {
        for (text, expected) in [
            ("37,814,363 followers", Some(37_814_363)),
            ("10,001+ employees", Some(10_001)),
            ("Discover all 310,860 employees", Some(310_860)),
            ("View all 69 employees", Some(69)),
            ("1.2K followers", Some(1_200)),
            ("3 M", Some(3_000_000)),
            ("2,5K", Some(2_500)),
            ("5 750 abonnés", Some(5_750)),
            ("37.814.363 Follower", Some(37_814_363)),
            ("1,2 Mio. Follower", Some(1_200_000)),
            ("3 Tsd. Follower", Some(3_000)),
            ("12 mil seguidores", Some(12_000)),
            ("1,2 mil seguidores", Some(1_200)),
            ("1,5 mi seguidores", Some(1_500_000)),
            ("2,1 M abonnés", Some(2_100_000)),
            ("1.2万人のフォロワー", Some(12_000)),
            ("3 mil millones", Some(3_000_000_000)),
            ("1.2 million followers", Some(1_200_000)),
            ("5 Mitarbeiter", Some(5)),
            ("51-200 employees", Some(51)),
            ("12K", Some(12_000)),
            ("1 234", Some(1_234)),
            ("1.234", Some(1_234)),
            ("no digits", None),
            ("99999999999999999999999", None),
        ] {
            assert_eq!(parse_count(text), expected, "{text}");
        }
    }
}
