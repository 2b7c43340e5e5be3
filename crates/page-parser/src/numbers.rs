//! Numbers as pages print them.

/// Reads the first count in localized text: `"37,814,363 followers"` → 37814363, `"10,001+ employees"` →
/// 10001, `"1.2K"` → 1200, `"3 M"` → 3000000, `"5 750 abonnés"` → 5750.
///
/// Thousands separators `,` `.` `'` and (narrow) no-break spaces are dropped; with a `K`, `M` or `B` suffix
/// the last `.` or `,` is a decimal mark. Returns `None` when the text holds no digit or the count overflows.
pub fn parse_count(text: &str) -> Option<u64> {
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
    let multiplier = match rest[end..].trim_start().chars().next() {
        Some('K' | 'k') => Some(1_000.0),
        Some('M') => Some(1_000_000.0),
        Some('B') => Some(1_000_000_000.0),
        _ => None,
    };
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
        return Some((value * multiplier).round() as u64);
    }
    number
        .chars()
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
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
            ("no digits", None),
            ("99999999999999999999999", None),
        ] {
            assert_eq!(parse_count(text), expected, "{text}");
        }
    }
}
