//! quarry's one integration-test binary: CLI, corpus ingestion, segmentation,
//! the store, S3 against a real S3-compatible server, the README's examples
//! and the sqllogictest files in tests/slt/.

mod ask;
mod calibrate;
mod claims;
mod cli;
#[cfg(feature = "cluster")]
mod cluster;
mod cohen;
mod cohort;
mod common;
mod corpus;
mod embed;
mod extract;
mod llama;
mod model;
mod ocr;
mod pdf;
mod readme;
mod records;
mod reliability;
mod report;
mod s3;
mod segmenting;
mod serve;
mod slt;
mod synthesis;
