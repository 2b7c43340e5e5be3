//! Times as the stores' columns hold them: SQLite columns named `*_ms` hold milliseconds since the Unix epoch
//! (UTC), PostgreSQL columns are `timestamptz` (read and written by the driver as [`SystemTime`]). Both are read
//! back as a [`jiff::Timestamp`]; a value outside jiff's range (which no column the service writes holds) reads
//! as the Unix epoch rather than failing the row.

use std::time::SystemTime;

use jiff::Timestamp;

/// A SQLite time column's milliseconds as a timestamp.
pub fn from_millis(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// A timestamp as a SQLite time column holds it: milliseconds since the Unix epoch.
pub fn millis(at: Timestamp) -> i64 {
    at.as_millisecond()
}

/// Now, as a SQLite time column holds it.
pub fn now_millis() -> i64 {
    millis(Timestamp::now())
}

/// A PostgreSQL `timestamptz` column's value as a timestamp.
pub fn from_system(at: SystemTime) -> Timestamp {
    Timestamp::try_from(at).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// A timestamp as a PostgreSQL `timestamptz` parameter.
pub fn system(at: Timestamp) -> SystemTime {
    SystemTime::from(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_columns_read_back_what_was_written() {
        let at: Timestamp = "2026-11-27T18:30:00.123Z".parse().expect("a time");
        assert_eq!(from_millis(millis(at)), at);
        assert_eq!(from_system(system(at)), at);
        assert_eq!(from_millis(i64::MAX), Timestamp::UNIX_EPOCH);
    }
}
