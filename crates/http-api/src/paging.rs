//! How many items one page of each list holds: what the handlers enforce and the OpenAPI document states.

/// Most jobs in one page of `GET …/jobs`, and the default.
pub(crate) const MOST_JOBS_PER_PAGE: u32 = 100;
pub(crate) const DEFAULT_JOBS_PER_PAGE: u32 = 20;
/// Most input positions in one page of a job's results, and the default: as many as the job store reads at once.
pub(crate) const MOST_RESULTS_PER_PAGE: u32 = bulk_jobs::MOST_ROWS_PER_READ;
/// Most watches in one page of `GET …/watches`, and the default.
pub(crate) const MOST_WATCHES_PER_PAGE: u32 = 100;
pub(crate) const DEFAULT_WATCHES_PER_PAGE: u32 = 20;
/// Most deliveries in one page of `GET /v1/webhook-endpoints/{id}/deliveries`, and the default.
pub(crate) const MOST_DELIVERIES_PER_PAGE: u32 = 100;
pub(crate) const DEFAULT_DELIVERIES_PER_PAGE: u32 = 20;
