//! The commands, one module each, and the arguments they share.

pub(crate) mod accounts;
pub(crate) mod credits;
pub(crate) mod enrich;
pub(crate) mod keys;
pub(crate) mod mcp;
pub(crate) mod reparse;
pub(crate) mod scrape;
pub(crate) mod search;
pub(crate) mod serve;
pub(crate) mod webhooks;

pub(crate) use company_data::config::{DbArg, DomainArg};

/// Where a command that can also run here does its work: on a company-data server, through its API and the Rust
/// client, or (without `--server`) here, on `--db`.
#[derive(clap::Args, Debug)]
pub(crate) struct ServerArg {
    /// A company-data server to do the work on, e.g. `http://127.0.0.1:8080`. Without it the work is done here,
    /// on `--db`.
    #[arg(long, env = "COMPANY_DATA_SERVER", requires = "key")]
    pub(crate) server: Option<String>,
    /// The API key for `--server`.
    #[arg(long, env = "COMPANY_DATA_KEY")]
    pub(crate) key: Option<String>,
}

impl ServerArg {
    /// A client of the server named, or `None` to work here.
    pub(crate) fn client(&self) -> anyhow::Result<Option<company_data_client::Client>> {
        match (&self.server, &self.key) {
            (Some(base), Some(key)) => Ok(Some(company_data_client::Client::new(base, key)?)),
            _ => Ok(None),
        }
    }
}
