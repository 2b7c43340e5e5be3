//! The commands, one module each, and the arguments they share.

pub(crate) mod accounts;
pub(crate) mod credits;
pub(crate) mod enrich;
pub(crate) mod keys;
pub(crate) mod mcp;
pub(crate) mod reparse;
pub(crate) mod scrape;
pub(crate) mod serve;
pub(crate) mod webhooks;

pub(crate) use company_data::config::{DbArg, DomainArg};
