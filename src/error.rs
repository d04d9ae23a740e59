//! Typed errors of the engine; the CLI prints them, SQL sees them as
//! DataFusion errors with the same message.

#[cfg(feature = "engine")]
use datafusion::error::DataFusionError;

/// Everything that can go wrong inside quarry's library code.
#[derive(Debug, thiserror::Error)]
pub enum QuarryError {
    /// A source (folder, glob, URL) could not be resolved or listed.
    #[error("source '{source_spec}': {message}")]
    Source {
        /// What the user passed.
        source_spec: String,
        /// What went wrong and what to do.
        message: String,
    },
    /// A file could not be read from its store.
    #[error("cannot read '{path}': {message}")]
    Read {
        /// The file.
        path: String,
        /// The store's error.
        message: String,
    },
    /// A file is larger than the configured limit.
    #[error("'{path}' is {bytes} bytes, over the {limit}-byte limit: raise max_bytes or leave the file out")]
    TooLarge {
        /// The file.
        path: String,
        /// Its size (or the bytes seen before stopping).
        bytes: u64,
        /// The limit in force.
        limit: u64,
    },
    /// A bad option or argument.
    #[error("{0}")]
    Invalid(String),
    /// The store could not be read or written.
    #[error("store '{location}': {message}")]
    Store {
        /// The store location.
        location: String,
        /// What went wrong.
        message: String,
    },
    /// An Arrow or DataFusion error.
    #[cfg(feature = "engine")]
    #[error(transparent)]
    DataFusion(#[from] DataFusionError),
}

/// Result with [`QuarryError`].
pub type Result<T, E = QuarryError> = std::result::Result<T, E>;

#[cfg(feature = "engine")]
impl From<QuarryError> for DataFusionError {
    fn from(e: QuarryError) -> Self {
        match e {
            QuarryError::DataFusion(d) => d,
            QuarryError::Invalid(m) => DataFusionError::Plan(m),
            other => DataFusionError::Execution(other.to_string()),
        }
    }
}

#[cfg(feature = "engine")]
impl From<datafusion::arrow::error::ArrowError> for QuarryError {
    fn from(e: datafusion::arrow::error::ArrowError) -> Self {
        QuarryError::DataFusion(e.into())
    }
}
