//! How many items one page of each list holds, and how many by default: what the server enforces and the answers'
//! schemas state (`maxItems`).

/// Most jobs in one page of `GET …/jobs`.
pub const MOST_JOBS_PER_PAGE: u32 = 100;
/// Jobs in a page of `GET …/jobs` without `limit`.
pub const DEFAULT_JOBS_PER_PAGE: u32 = 20;
/// Most watches in one page of `GET …/watches`.
pub const MOST_WATCHES_PER_PAGE: u32 = 100;
/// Watches in a page of `GET …/watches` without `limit`.
pub const DEFAULT_WATCHES_PER_PAGE: u32 = 20;
/// Most deliveries in one page of `GET /v1/webhook-endpoints/{id}/deliveries`.
pub const MOST_DELIVERIES_PER_PAGE: u32 = 100;
/// Deliveries in a page of `GET /v1/webhook-endpoints/{id}/deliveries` without `limit`.
pub const DEFAULT_DELIVERIES_PER_PAGE: u32 = 20;
/// Most events in one page of `GET /v1/events`.
pub const MOST_EVENTS_PER_PAGE: u32 = 100;
/// Events in a page of `GET /v1/events` without `limit`.
pub const DEFAULT_EVENTS_PER_PAGE: u32 = 20;
