//! Text as the pages hold it, tidied: whitespace collapsed or trimmed, and control characters (a character
//! reference such as `&#1;` survives HTML parsing as one) read as spaces: no record member holds one.

/// Whether `c` is a control character other than whitespace.
fn is_stray_control(c: char) -> bool {
    c.is_control() && !c.is_whitespace()
}

/// `text` with its control characters other than whitespace as spaces (borrowed when it has none).
pub(crate) fn without_stray_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(is_stray_control) {
        std::borrow::Cow::Owned(
            text.chars()
                .map(|c| if is_stray_control(c) { ' ' } else { c })
                .collect(),
        )
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Collapses all whitespace and control characters to single spaces and trims; `None` when nothing is left.
pub(crate) fn clean_line(text: &str) -> Option<String> {
    let line = text
        .split(|c: char| c.is_whitespace() || is_stray_control(c))
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    (!line.is_empty()).then_some(line)
}

/// Trims the ends but keeps line breaks, control characters as spaces; `None` when blank.
pub(crate) fn clean_block(text: &str) -> Option<String> {
    let text = without_stray_controls(text);
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}
