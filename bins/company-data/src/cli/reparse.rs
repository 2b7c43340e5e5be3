//! `company-data reparse`: every stored page parsed again with this version's parser.

use super::DbArg;

pub(crate) async fn run(db: &DbArg) -> anyhow::Result<()> {
    let stores = db.open().await?;
    let summary = company_lookup::reparse_stored(stores.snapshots.as_ref(), |url, error| {
        eprintln!("{url}: {error}; its stored record is kept");
    })
    .await?;
    println!(
        "Reparsed {} stored pages ({} records replaced, {} failed).",
        summary.reparsed, summary.replaced, summary.failed
    );
    Ok(())
}
