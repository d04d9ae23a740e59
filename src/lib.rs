//! quarry: a SQL engine for reading document corpora with language models.
//!
//! This crate is the engine (everything with I/O or state) and the `quarry`
//! binary; pure SQL functions live in `quarry-udfs`.

pub mod cohort;
pub mod corpus;
pub mod engine;
pub mod error;
pub mod eval;
pub mod functions;
pub mod ingest;
pub mod model;
pub mod output;
pub mod process;
pub mod read;
pub mod records;
pub mod repl;
pub mod report;
pub mod review;
pub mod segment;
pub mod session;
pub mod source;
pub mod store;
pub mod tables;

pub use error::{QuarryError, Result};
pub use session::{session, Settings};
