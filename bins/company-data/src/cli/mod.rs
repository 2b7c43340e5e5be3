//! The commands, one module each, and the arguments they share.

pub(crate) mod accounts;
pub(crate) mod credits;
pub(crate) mod keys;
pub(crate) mod reparse;
pub(crate) mod scrape;
pub(crate) mod serve;

use std::path::PathBuf;

use clap::Args;
use page_url::NetworkDomain;

#[derive(Args)]
pub(crate) struct DbArg {
    /// The SQLite database file.
    #[arg(long, env = "COMPANY_DATA_DB", default_value = "company-data.db")]
    pub(crate) db: PathBuf,
}

impl DbArg {
    /// Opens every store on the database.
    pub(crate) async fn open(&self) -> anyhow::Result<company_data::Stores> {
        company_data::Stores::open(&self.db).await
    }
}

#[derive(Args)]
pub(crate) struct DomainArg {
    /// The professional network's domain; records carry `https://www.<domain>/...` URLs.
    #[arg(long, env = "COMPANY_DATA_NETWORK_DOMAIN", default_value = "linkedin.com", value_parser = parse_domain)]
    pub(crate) network_domain: NetworkDomain,
}

fn parse_domain(text: &str) -> Result<NetworkDomain, String> {
    NetworkDomain::parse(text).map_err(|e| e.to_string())
}
