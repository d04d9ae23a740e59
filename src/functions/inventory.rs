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
use datafusion::common::{plan_err, Result};

use super::{
    corpus_options, corpus_table, literal_args, parse_options, source_arg, str_arg, Env,
    CORPUS_OPTIONS,
};
use crate::tables;

const USAGE: &str =
    "inventory(src [, 'recursive=true, clean=default, max_bytes=N, tokenizer=o200k_base'])";

/// The `inventory` table function.
#[derive(Debug, Default)]
pub struct Inventory {
    /// Shared settings.
    pub env: Env,
}

impl TableFunctionImpl for Inventory {
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
            tables::INVENTORY.clone(),
            source,
            &self.env,
            opts,
            true,
            Arc::new(|d| Ok(vec![tables::inventory_batch(&[d])?])),
        )
    }
}
