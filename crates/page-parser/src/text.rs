//! Text as the pages hold it, tidied: whitespace collapsed or trimmed.

/// Collapses all whitespace to single spaces and trims; `None` when nothing is left.
pub(crate) fn clean_line(text: &str) -> Option<String> {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!line.is_empty()).then_some(line)
}

/// Trims the ends and each line's indentation but keeps line breaks; `None` when blank.
pub(crate) fn clean_block(text: &str) -> Option<String> {
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}
