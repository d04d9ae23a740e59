//! `blocks(src [, options])`: the typed blocks (heading, paragraph, list,
//! table, footnote, caption) of every document read, with page, section,
//! offsets into the cleaned text, and table cells. Duplicates and unread
//! files have no blocks.
//!
//! ```sql
//! SELECT section, kind, text FROM blocks('examples/corpus/') WHERE kind = 'table';
//! ```

use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::Result;

use super::{simple_corpus_call, Env};
use crate::ingest::Status;
use crate::tables;

const USAGE: &str =
    "blocks(src [, 'recursive=true, clean=default, max_bytes=N, ocr=auto, ocr_lang=eng'])";

/// The `blocks` table function.
#[derive(Debug, Default)]
pub struct Blocks {
    /// Shared settings.
    pub env: Env,
}

impl TableFunctionImpl for Blocks {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        simple_corpus_call(
            &args,
            USAGE,
            &self.env,
            tables::BLOCKS.clone(),
            false,
            Arc::new(|d| {
                if d.status != Status::Ok || d.blocks.is_empty() {
                    return Ok(vec![]);
                }
                Ok(vec![tables::blocks_batch(d)?])
            }),
        )
    }
}
