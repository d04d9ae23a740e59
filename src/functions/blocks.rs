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
use datafusion::common::{plan_err, Result};

use super::{
    corpus_options, corpus_table, literal_args, parse_options, source_arg, str_arg, Env,
    CORPUS_OPTIONS,
};
use crate::ingest::Status;
use crate::tables;

const USAGE: &str = "blocks(src [, 'recursive=true, clean=default, max_bytes=N'])";

/// The `blocks` table function.
#[derive(Debug, Default)]
pub struct Blocks {
    /// Shared settings.
    pub env: Env,
}

impl TableFunctionImpl for Blocks {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let vals = literal_args(&args)?;
        if vals.is_empty() || vals.len() > 2 {
            return plan_err!("{USAGE}: takes 1 or 2 arguments, got {}", vals.len());
        }
        let source = source_arg(&vals, USAGE)?;
        let opts = parse_options(
            &str_arg(&vals, 1, USAGE, "options")?.unwrap_or_default(),
            USAGE,
            CORPUS_OPTIONS,
        )?;
        let opts = corpus_options(&opts, USAGE)?;
        corpus_table(
            tables::BLOCKS.clone(),
            source,
            &self.env,
            opts,
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
