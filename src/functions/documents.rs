//! `documents(src [, options])`: one row per file read, with its status,
//! `document_id`, tokens, cleaner log and cleaned text.
//!
//! ```sql
//! SELECT file_name, ext, status, pages, tokens FROM documents('examples/corpus/');
//! SELECT count(*) FROM documents('s3://bucket/trials/', 'recursive=true, clean=+remove_citations');
//! ```

use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::Result;

use super::{simple_corpus_call, Env};
use crate::tables;

const USAGE: &str =
    "documents(src [, 'recursive=true, clean=default, max_bytes=N, tokenizer=o200k_base, ocr=auto, ocr_lang=eng'])";

/// The `documents` table function.
#[derive(Debug, Default)]
pub struct Documents {
    /// Shared settings.
    pub env: Env,
}

impl TableFunctionImpl for Documents {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        simple_corpus_call(
            &args,
            USAGE,
            &self.env,
            tables::DOCUMENTS.clone(),
            false,
            Arc::new(|d| Ok(vec![tables::documents_batch(&[d])?])),
        )
    }
}
