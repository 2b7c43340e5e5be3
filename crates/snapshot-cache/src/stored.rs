//! How both backends read back what they stored.

use std::io::Read;

use company_model::{CompanyRecord, RECORD_FORMAT, RecordJson};

/// The HTML of a kept page (invalid UTF-8 replaced, as the parser read it when it was fetched).
pub(crate) fn gunzip(bytes: &[u8]) -> std::io::Result<String> {
    let mut html = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut html)?;
    Ok(String::from_utf8(html)
        .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned()))
}

/// A stored record as it can be answered: as kept when in today's shape, else converted through the record type.
pub(crate) fn stored_record(text: String, format: u32) -> Result<RecordJson, String> {
    if format == RECORD_FORMAT {
        RecordJson::from_stored(text).map_err(|e| e.to_string())
    } else {
        let record: CompanyRecord = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        Ok(RecordJson::from_record(&record))
    }
}
