//! `inventory(src [, options])`: a survey of a folder before anything is
//! spent on it. Every file has a row, including the ones that will not be
//! read (`no_extractor`, `no_text`, `failed`) and those one level below a
//! non-recursive scan (`not_scanned`). No model call is made.
//!
//! ```sql
//! SELECT folder, status, count(*) FROM inventory('corpus/') GROUP BY 1, 2;
//! ```

use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::Result;

use super::{simple_corpus_call, Env};
use crate::tables;

const USAGE: &str =
    "inventory(src [, 'recursive=true, clean=default, max_bytes=N, tokenizer=o200k_base, ocr=auto, ocr_lang=eng'])";

/// The `inventory` table function.
#[derive(Debug, Default)]
pub struct Inventory {
    /// Shared settings.
    pub env: Env,
}

impl TableFunctionImpl for Inventory {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        simple_corpus_call(
            &args,
            USAGE,
            &self.env,
            tables::INVENTORY.clone(),
            true,
            Arc::new(|d| Ok(vec![tables::inventory_batch(&[d])?])),
        )
    }
}
