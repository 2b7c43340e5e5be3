//! One module per page or page group, each with its handlers and its markup.

pub(crate) mod admin;
pub(crate) mod credits;
pub(crate) mod invitations;
pub(crate) mod jobs;
pub(crate) mod keys;
pub(crate) mod search;
pub(crate) mod sign_in;
pub(crate) mod try_it;
pub(crate) mod usage;
pub(crate) mod watches;
pub(crate) mod webhooks;
