//! How both backends read back what they stored.

use std::io::Read;

use company_model::{CompanyRecord, HistoryPoint, RECORD_FORMAT, RecordJson};

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

/// The digest a history state is stored with: SHA-256 (hex) of the record's
/// [`company_model::change_fields_text`], so a fetch that changed none of those members adds no state.
pub(crate) fn change_digest(record: &RecordJson) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(
        company_model::change_fields_text(record).as_bytes(),
    ))
}

/// The history point of a stored record (its counts), or an empty point when its text did not parse.
pub(crate) fn point_of(
    record: Option<&CompanyRecord>,
    fetched_at: jiff::Timestamp,
) -> HistoryPoint {
    record.map_or(
        HistoryPoint {
            fetched_at,
            ..HistoryPoint::default()
        },
        |r| HistoryPoint::of(r, fetched_at),
    )
}

/// A history state's record as stored: gzip-compressed JSON (records repeat their long members, and a state is
/// written only when the record changed, so compressing costs little and saves most of the bytes).
pub(crate) fn gzip_record(record: &RecordJson) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(record.as_str().as_bytes());
    encoder.finish().unwrap_or_default()
}

/// A history state's record text: from `record_gzip` when present, else the plain `record` a migration copied.
pub(crate) fn state_text(plain: Option<String>, gzip: Option<&[u8]>) -> Result<String, String> {
    match (gzip, plain) {
        (Some(bytes), _) => gunzip(bytes).map_err(|e| e.to_string()),
        (None, Some(text)) => Ok(text),
        (None, None) => Err("a history state holds no record".to_owned()),
    }
}

/// The keys a snapshot is found by besides its URL ([`crate::SnapshotStore::pages_with_domain`],
/// [`crate::SnapshotStore::pages_named`]): the record's `domain` in lower case, and
/// [`company_model::name_key`] of its `company_name`; `""` for what the record lacks, or for a record whose text
/// did not parse (so a row is keyed once).
pub(crate) fn lookup_keys(record: Option<&CompanyRecord>) -> (String, String) {
    let domain = record
        .and_then(|r| r.domain.as_deref())
        .map(|d| d.trim().trim_end_matches('.').to_ascii_lowercase())
        .unwrap_or_default();
    let name = record
        .and_then(|r| r.company_name.as_deref())
        .map(company_model::name_key)
        .unwrap_or_default();
    (domain, name)
}
