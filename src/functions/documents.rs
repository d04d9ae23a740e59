//! `documents(src [, options])`: one row per file read, with its status,
//! `document_id`, tokens, cleaner log and cleaned text.
//!
//! ```sql
//! SELECT file_name, ext, status, pages, tokens FROM documents('examples/corpus/');
//! SELECT count(*) FROM documents('s3://bucket/trials/', 'recursive=true, clean=+remove_citations');
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
    "documents(src [, 'recursive=true, clean=default, max_bytes=N, tokenizer=o200k_base'])";

/// The `documents` table function.
#[derive(Debug, Default)]
pub struct Documents {
    /// Shared settings.
    pub env: Env,
}

impl TableFunctionImpl for Documents {
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
            tables::DOCUMENTS.clone(),
            source,
            &self.env,
            opts,
            false,
            Arc::new(|d| Ok(vec![tables::documents_batch(&[d])?])),
        )
    }
}
