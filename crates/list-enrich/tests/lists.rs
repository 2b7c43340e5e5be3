//! Lists read from the files people keep (a CRM's CSV, NDJSON, a text file of URLs) and written back with each
//! row's answer beside its own fields.

use list_enrich::{List, ListError, ListFormat};
use page_url::NetworkDomain;

#[test]
fn lists_are_read_from_csv_ndjson_and_text_and_written_beside_their_rows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let domain = NetworkDomain::default();
    let csv = dir.path().join("crm.csv");
    std::fs::write(
        &csv,
        "name,site,profile\nGoogle,google.com,https://www.linkedin.com/company/google\nNobody,x.com,not a url\n",
    )
    .expect("written");
    let list = List::read(&csv, None, &domain).expect("read");
    assert_eq!(
        list.url_column, "profile",
        "the first column holding page URLs"
    );
    assert_eq!(
        list.to_send(),
        (
            vec!["https://www.linkedin.com/company/google".to_owned()],
            vec![0]
        )
    );
    assert!(list.rows[1].page.is_err());
    assert!(matches!(
        List::read(&csv, Some("linkedin"), &domain),
        Err(ListError::NoSuchColumn(_))
    ));
    assert!(
        matches!(List::read(&csv, Some("site"), &domain), Ok(list) if list.to_send().0.is_empty())
    );

    let ndjson = dir.path().join("list.ndjson");
    std::fs::write(
        &ndjson,
        "{\"id\": 1, \"url\": \"https://www.linkedin.com/school/stanford\"}\n\n{\"id\": 2}\n",
    )
    .expect("written");
    let list = List::read(&ndjson, None, &domain).expect("read");
    assert_eq!((list.url_column.as_str(), list.rows.len()), ("url", 2));
    assert_eq!(list.rows[0].fields[0], ("id".to_owned(), "1".to_owned()));

    let text = dir.path().join("urls.txt");
    std::fs::write(
        &text,
        "# targets\nhttps://www.linkedin.com/company/google\n\nlinkedin.com/company/x\n",
    )
    .expect("written");
    let list = List::read(&text, None, &domain).expect("read");
    assert_eq!(list.rows.len(), 2);
    assert!(list.rows[1].page.is_err(), "not https");

    // Written with nothing answered (a job cancelled at once): every row once, its own columns kept.
    let list = List::read(&csv, None, &domain).expect("read");
    let mut out = Vec::new();
    list.write_results(
        &std::collections::BTreeMap::new(),
        (ListFormat::Csv, list_enrich::CsvCells::default()),
        None,
        &mut out,
    )
    .expect("written");
    let mut reader = csv::Reader::from_reader(out.as_slice());
    let header = reader.headers().expect("header").clone();
    assert_eq!(&header[0], "name");
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    let error = header
        .iter()
        .position(|h| h == "error")
        .expect("error column");
    assert_eq!(
        (&rows[0][error], &rows[1][error]),
        ("not_looked_up", "invalid_url")
    );
    assert_eq!(
        ListFormat::of(std::path::Path::new("x.JSONL")),
        ListFormat::Ndjson
    );
}
