//! How many items one page of each list holds: the contract's bounds, and a job's results page, which is as many
//! input positions as the job store reads at once.

pub(crate) use api_contract::paging::{
    DEFAULT_DELIVERIES_PER_PAGE, DEFAULT_EVENTS_PER_PAGE, DEFAULT_JOBS_PER_PAGE,
    DEFAULT_WATCHES_PER_PAGE, MOST_DELIVERIES_PER_PAGE, MOST_EVENTS_PER_PAGE, MOST_JOBS_PER_PAGE,
    MOST_WATCHES_PER_PAGE,
};

/// Most input positions in one page of a job's results, and the default.
pub(crate) const MOST_RESULTS_PER_PAGE: u32 = bulk_jobs::MOST_ROWS_PER_READ;
