//! quarry: a SQL engine for reading document corpora with language models.
//!
//! This crate is the engine (everything with I/O or state) and the `quarry`
//! binary; pure SQL functions live in `quarry-udfs`.

#[cfg(feature = "cluster")]
pub mod cluster;
#[cfg(feature = "engine")]
pub mod cohort;
#[cfg(feature = "engine")]
pub mod corpus;
#[cfg(feature = "engine")]
pub mod engine;
pub mod error;
#[cfg(feature = "engine")]
pub mod eval;
#[cfg(feature = "engine")]
pub mod functions;
pub mod ingest;
#[cfg(feature = "engine")]
pub mod model;
#[cfg(feature = "engine")]
pub mod output;
#[cfg(feature = "engine")]
pub mod process;
#[cfg(feature = "engine")]
pub mod read;
pub mod records;
#[cfg(feature = "engine")]
pub mod repl;
#[cfg(feature = "engine")]
pub mod report;
#[cfg(feature = "engine")]
pub mod review;
#[cfg(feature = "engine")]
pub mod segment;
#[cfg(feature = "serve")]
pub mod serve;
#[cfg(feature = "engine")]
pub mod session;
#[cfg(feature = "engine")]
pub mod source;
#[cfg(feature = "engine")]
pub mod store;
#[cfg(feature = "engine")]
pub mod tables;

pub use error::{QuarryError, Result};
#[cfg(feature = "engine")]
pub use session::{session, Settings};

// Without the `engine` feature (no DataFusion, no store, no model client) the
// crate is its readers, the protocol loader and the export parsers: what the
// fuzz targets (`fuzz/`) build on.
#[cfg(not(feature = "engine"))]
pub mod review {
    //! The protocol loader alone (the `engine` feature adds the rest).
    pub mod protocol;
    pub use protocol::{FieldSpec, Protocol};
}
#[cfg(not(feature = "engine"))]
pub mod source {
    //! The entry of one file alone (the `engine` feature adds the sources).
    mod entry;
    pub use entry::{ext_of, Entry};
}
