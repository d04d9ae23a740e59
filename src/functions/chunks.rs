//! `chunks(src, method, max_tokens [, overlap_tokens [, options]])`: every
//! document read, cut by one of nine segmenters (`segmenters()` lists them).
//! No chunk is ever over `max_tokens`. Duplicates and unread files have no
//! chunks. Here no model is asked: `contextual` takes its free heading
//! blurbs and `proposition` falls back to `paragraph`, and the `method`
//! column says so (`proposition->paragraph`); `ask` runs both with the model
//! (`segment=proposition` or `context_source=llm` in its options).
//!
//! ```sql
//! SELECT method, count(*) n, sum(tokens), max(tokens)
//! FROM chunks('examples/corpus/', 'sentence', 120) GROUP BY method;
//! SELECT * FROM chunks('corpus/', 'structural', 800, 80, 'min_tokens=50, recursive=true');
//! ```

use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, Result};

use super::{
    corpus_options, corpus_table, int_arg, literal_args, parse_options, source_arg, str_arg, Env,
    CORPUS_OPTIONS,
};
use crate::ingest::Status;
use crate::segment::{segment, Method, SegDoc, SegmentSpec};
use crate::tables;

const USAGE: &str = "chunks(src, method, max_tokens [, overlap_tokens [, 'min_tokens=N, recursive=true, clean=default, tokenizer=o200k_base']])";

/// The `chunks` table function.
#[derive(Debug, Default)]
pub struct Chunks {
    /// Shared settings.
    pub env: Env,
}

/// Parses a segmenter method name, naming the accepted ones on error.
pub fn method_arg(name: &str, usage: &str) -> Result<Method> {
    Method::parse(name).map_or_else(
        || {
            plan_err!(
                "{usage}: unknown method '{name}'; use one of: {}",
                Method::ALL
                    .iter()
                    .map(|m| m.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        Ok,
    )
}

impl TableFunctionImpl for Chunks {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let vals = literal_args(&args)?;
        if vals.len() < 3 || vals.len() > 5 {
            return plan_err!("{USAGE}: takes 3 to 5 arguments, got {}", vals.len());
        }
        let method = method_arg(
            &str_arg(&vals, 1, USAGE, "method")?.unwrap_or_default(),
            USAGE,
        )?;
        let max_tokens = int_arg(&vals, 2, USAGE, "max_tokens")?.unwrap_or_default();
        let overlap = int_arg(&vals, 3, USAGE, "overlap_tokens")?.unwrap_or(0);
        let mut allowed = CORPUS_OPTIONS.to_vec();
        allowed.push("min_tokens");
        let raw = parse_options(
            &str_arg(&vals, 4, USAGE, "options")?.unwrap_or_default(),
            USAGE,
            &allowed,
        )?;
        let opts = corpus_options(&raw, USAGE)?;
        let mut spec = SegmentSpec::new(method, max_tokens);
        spec.overlap_tokens = overlap;
        spec.tokenizer = opts.ingest.tokenizer;
        if let Some(v) = raw.get("min_tokens") {
            spec.min_tokens = v
                .parse()
                .or_else(|_| plan_err!("{USAGE}: min_tokens must be a whole number, got '{v}'"))?;
        }
        if let Err(e) = spec.validate() {
            return plan_err!("{USAGE}: {e}");
        }
        let source = source_arg(&vals, USAGE)?;
        let hash = spec.hash();
        corpus_table(
            tables::CHUNKS.clone(),
            source,
            &self.env,
            &args,
            opts,
            false,
            Arc::new(move |d| {
                if d.status != Status::Ok || d.text.is_empty() {
                    return Ok(vec![]);
                }
                let seg = segment(
                    &SegDoc {
                        text: &d.text,
                        blocks: &d.blocks,
                    },
                    &spec,
                );
                Ok(vec![tables::chunks_batch(d, &seg, &hash)?])
            }),
        )
    }
}

/// `segmenters()`: the registry, one row per segmenter: name, boundary
/// hypothesis, cost, whether it needs a client, the provenance its chunks
/// carry.
#[derive(Debug)]
pub struct SegmentersFn;

impl TableFunctionImpl for SegmentersFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let m = &Method::ALL;
        super::registry_table(
            &args,
            "segmenters",
            vec![
                ("name", super::text_column(m, |m| m.name())),
                ("hypothesis", super::text_column(m, |m| m.about()[0])),
                ("cost", super::text_column(m, |m| m.about()[1])),
                ("needs_client", super::text_column(m, |m| m.about()[2])),
                ("provenance", super::text_column(m, |m| m.about()[3])),
            ],
        )
    }
}
