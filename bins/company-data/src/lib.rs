//! The command line's configuration (`serve`'s flags and the shared `--db`, `--domain`), as a library so the
//! end-to-end harness starts servers with the very flags the binary takes. The service itself is the `service`
//! crate's.

pub mod config;
