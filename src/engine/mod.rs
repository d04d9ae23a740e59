//! The run engine: a model-driven stage (screening, extraction, claims)
//! over a corpus, window by window. The corpus is listed,
//! read and deduplicated as one stream, cut into windows of a few documents,
//! and each window runs the rendered SQL's stages and output queries over
//! its own documents only (the corpus functions in the window's session read
//! those documents instead of the source). A few windows run at once, so the
//! endpoint's requests stay in flight across window ends, and memory holds
//! those windows, never the corpus.
//!
//! With a store, the rows of every table the run makes (`extraction` and
//! `evidence`, `screening`, a claims run's rows) are committed to the
//! store's Delta tables as each window completes, one commit per table
//! (see [`crate::store::results`]), keyed on the document (path, size,
//! modification time or ETag, status, the copy it repeats), the rendered
//! SQL and the model; a later run restores them instead of reading the
//! document again. A run killed at any moment and started again redoes
//! only the windows it had not written, and their answered requests come
//! from the cache.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{cast, concat_batches, sort_to_indices, take_record_batch};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::TableProvider;
use datafusion::common::{plan_err, DataFusionError, Result};
use datafusion::execution::{SessionState, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::physical_plan::{collect, SendableRecordBatchStream};
use futures::{StreamExt, TryStreamExt};
use sha2::{Digest, Sha256};

pub mod staged;

use staged::{physical, plan_stages, private_state, run_stages, Stages};

use crate::corpus::{CorpusOptions, Share};
use crate::ingest::Document;
use crate::source::Source;
use crate::store::results::RunStore;
use crate::store::{parquet_bytes, read_parquet_meta, Store};
use crate::tables::conform;

/// Documents per window, at least: a window holds enough documents for
/// half the endpoint's requests in flight even at one request a document
/// (screening), so the windows running at once keep it busy.
pub const WINDOW_DOCS: usize = 16;

/// The documents of one window for an endpoint that takes `max_in_flight`
/// requests at once.
pub fn window_docs(max_in_flight: usize) -> usize {
    WINDOW_DOCS.max(max_in_flight / 2)
}

/// Windows running at once.
pub const WINDOWS_AT_ONCE: usize = 4;

/// The Parquet file naming the protocol whose extraction the store's
/// `extraction` table shows (the one run last), with that table's schema.
pub const LATEST_EXTRACTION: &str = "tables/extraction/latest.parquet";

/// The Parquet metadata key holding that protocol.
const LATEST_KEY: &str = "quarry.protocol";

/// Documents whose stored rows the plan check reads at once.
const PLAN_BATCH: usize = 64;

/// A fixed set of documents, already read and deduplicated, that a corpus
/// function reads instead of listing its source when it is called with this
/// source and these options: one window of a long run. A window's session
/// carries it as an extension of its configuration.
#[derive(Debug)]
pub struct Preset {
    /// The source as given (`Source::spec`).
    pub source: String,
    /// The corpus options, as `CorpusOptions` prints them.
    pub opts: String,
    /// The documents, in listing order.
    pub docs: Vec<Arc<Document>>,
}

impl Preset {
    /// Whether a corpus function over `source` with `opts` reads these documents.
    pub fn serves(&self, source: &Source, opts: &CorpusOptions) -> bool {
        self.source == source.spec && self.opts == format!("{opts:?}")
    }
}

/// One table a run makes.
#[derive(Debug, Clone)]
pub struct Output {
    /// `extraction`, `evidence` or `screening`.
    pub table: &'static str,
    /// Its query over the stages.
    pub sql: String,
    /// Its schema (fixed for `evidence` and `screening`).
    pub schema: Option<SchemaRef>,
}

/// What a run will ask, for checking a run's ceilings before anything is
/// sent (requests it adds later, such as adjudications or repairs, are not
/// known up front).
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// One screening request per readable document: the length of the
    /// instructions and schema, and of the most text sent.
    pub screen: Option<(usize, usize)>,
    /// One extraction request per chunk (unless the screening decides
    /// which): the segmenter and the length of the instructions and schema.
    pub extract: Option<(crate::segment::SegmentSpec, usize)>,
    /// The model the requests name.
    pub model: String,
    /// Their output cap.
    pub max_output: Option<u32>,
}

/// A run: the rendered stages, the tables it makes, what it reads.
#[derive(Debug, Clone)]
pub struct Run {
    /// The source as given.
    pub source: String,
    /// The protocol's corpus options.
    pub opts: CorpusOptions,
    /// The protocol's short hash.
    pub protocol: String,
    /// What else decides the rows: the rendered SQL, the model and where
    /// it is served.
    pub salt: String,
    /// The stages (their `output` is unused).
    pub stages: Stages,
    /// The tables, in the order they are written.
    pub outputs: Vec<Output>,
    /// The one the table function returns.
    pub want: usize,
    /// The store: with one, the rows of each document are kept and a run
    /// started again restores them.
    pub store: Option<Store>,
    /// Rerun documents whose stored rows record failed requests.
    pub retry_failed: bool,
    /// What it will ask.
    pub plan: Plan,
    /// Documents per window.
    pub window: usize,
    /// The source is reference-manager exports: the run reads their
    /// records (the matched file, else title and abstract) instead of
    /// listing the source's files.
    pub records: Option<crate::records::corpus::RecordSource>,
    /// Where the wanted table's rows go besides the run's own results (the
    /// store's claims table), window by window.
    pub publish: Option<Arc<dyn Publish>>,
}

/// A table of the store that a run's rows are put into as each window
/// completes (restored windows too, so a run killed between the two writes
/// catches up), which may fill in columns of those rows (a revision).
#[async_trait::async_trait]
pub trait Publish: Send + Sync + fmt::Debug {
    /// Puts the window's documents' rows (`rows[i]` is `docs[i]`'s) in.
    async fn publish(
        &self,
        docs: &[Arc<Document>],
        rows: &mut [Option<RecordBatch>],
    ) -> crate::error::Result<()>;

    /// Called once a run has gone through its whole listing of `source`
    /// (not when a query stopped early or failed), with every path the
    /// listing gave (files below the scanned depth too): what the store
    /// holds of paths under `source` that are not listed any more (a file
    /// taken out of the corpus) is cleared.
    async fn finish(
        &self,
        _source: &str,
        _listed: &std::collections::HashSet<String>,
    ) -> crate::error::Result<()> {
        Ok(())
    }
}

/// Whether the path `path` of a listing lies under the source `source`
/// (the file itself, or a path below the folder or prefix).
pub fn under_source(source: &str, path: &str) -> bool {
    let root = source.trim_end_matches('/');
    path == root
        || path
            .strip_prefix(root)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// What decides a run's rows besides the documents, hashed: the rendered
/// SQL of its stages and outputs (for any source), `extra`, the model
/// defaults and where they are served.
pub fn run_salt(
    src: &str,
    stages: &Stages,
    outputs: &[Output],
    extra: &str,
    rt: Option<&crate::model::Runtime>,
) -> String {
    let src = crate::review::sql_text(src);
    let mut salt = String::new();
    for (_, sql) in &stages.stages {
        salt.push_str(&sql.replace(&src, ""));
    }
    for o in outputs {
        salt.push_str(&o.sql.replace(&src, ""));
    }
    salt.push_str(extra);
    if let Some(rt) = rt {
        let c = rt.config();
        salt.push_str(&format!("{:?}", c.model));
        if let Some(e) = c.endpoints.get(&c.default_endpoint_name()) {
            salt.push_str(&format!("|{}|{:?}", e.base_url, e.api));
        }
    }
    hex::encode(Sha256::digest(salt.as_bytes()))
}

/// The default endpoint's `max_in_flight` (0 without a model layer).
pub fn endpoint_in_flight(rt: Option<&crate::model::Runtime>) -> usize {
    rt.map_or(0, |rt| {
        let c = rt.config();
        c.endpoints
            .get(&c.default_endpoint_name())
            .map_or(0, |e| e.max_in_flight)
    })
}

/// The documents a run reads, in order.
fn run_documents(
    run: &Run,
    source: Arc<Source>,
    opts: crate::corpus::CorpusOptions,
    share: Option<Share>,
) -> futures::stream::BoxStream<'static, crate::error::Result<Document>> {
    match &run.records {
        // Records are not split: the first part reads them all.
        Some(_) if share.is_some_and(|s| s.index > 0) => futures::stream::empty().boxed(),
        Some(r) => r.screening_documents(run.store.clone(), opts.ingest),
        None => crate::corpus::listed_documents(source, run.store.clone(), opts, false, share)
            .map(|d| d.map(|(_, d)| d))
            .boxed(),
    }
}

/// With a run ceiling set (`max_total_calls`, `max_total_usd`), the whole
/// run's requests counted and priced at their worst case before any is
/// sent, and the run refused when they exceed it. This reads (or takes from
/// the store) and segments every document once more, streaming.
async fn check_plan(
    rt: &crate::model::Runtime,
    run: &Run,
    results: Option<&RunStore>,
    source: Arc<Source>,
    opts: crate::corpus::CorpusOptions,
) -> Result<()> {
    let limits = rt.rails().limits();
    if limits.max_total_calls.is_none() && limits.max_total_usd.is_none() {
        return Ok(());
    }
    let plan = &run.plan;
    let max_output = rt.resolve_max_output(&plan.model, plan.max_output) as u64;
    let info = rt.config().registry.info(&plan.model);
    // As the rails estimate a request: about three characters a token.
    let worst = |chars: usize| info.usd((chars as u64).div_ceil(3) + 8, max_output);
    let mut tokenizer_spec = plan.extract.clone();
    if let Some((spec, _)) = &mut tokenizer_spec {
        spec.tokenizer = opts.ingest.tokenizer;
    }
    // The whole run's, whichever part of it this process runs.
    let docs = run_documents(run, source, opts, None);
    let counts = docs
        .chunks(PLAN_BATCH)
        .map(|docs| {
            let spec = tokenizer_spec.clone();
            let screen = plan.screen;
            async move {
                let docs: Vec<Document> = docs
                    .into_iter()
                    .collect::<crate::error::Result<Vec<_>>>()?
                    .into_iter()
                    .filter(|d| d.status == crate::ingest::Status::Ok)
                    .collect();
                // A document whose rows the store has asks nothing.
                let restored: Vec<bool> = match results {
                    Some(r) => {
                        let keys: Vec<String> =
                            docs.iter().map(|d| result_key(&run.salt, d)).collect();
                        stored(r, &docs, &keys)
                            .await
                            .iter()
                            .map(|got| restorable(got, run.retry_failed))
                            .collect()
                    }
                    None => vec![false; docs.len()],
                };
                let todo: Vec<Document> = docs
                    .into_iter()
                    .zip(restored)
                    .filter(|(_, r)| !r)
                    .map(|(d, _)| d)
                    .collect();
                tokio::task::spawn_blocking(move || {
                    let mut sizes = Vec::new();
                    for d in &todo {
                        if let Some((fixed, most)) = screen {
                            sizes.push(fixed + d.text.len().min(most));
                        }
                        if let Some((spec, fixed)) = &spec {
                            let seg = crate::segment::segment(
                                &crate::segment::SegDoc {
                                    text: &d.text,
                                    blocks: &d.blocks,
                                },
                                spec,
                            );
                            sizes.extend(seg.chunks.iter().map(|c| fixed + (c.end - c.start)));
                        }
                    }
                    sizes
                })
                .await
                .map_err(|e| DataFusionError::Execution(format!("planning stopped: {e}")))
            }
        })
        .buffered(2);
    let (mut calls, mut usd) = (0u64, Some(0.0));
    let mut counts = std::pin::pin!(counts);
    while let Some(sizes) = counts.next().await {
        for chars in sizes? {
            calls += 1;
            usd = usd.zip(worst(chars)).map(|(a, b)| a + b);
        }
    }
    rt.rails().check_plan(calls, usd).map_err(|e| {
        DataFusionError::Execution(format!("{} of {}: {e}", run.outputs[0].table, run.source))
    })
}

/// What a document's stored rows must have been made from.
fn result_key(salt: &str, d: &Document) -> String {
    let s = format!(
        "{salt}|{}|{:?}|{}|{}",
        d.entry.version(),
        d.status,
        d.duplicate_of.as_deref().unwrap_or_default(),
        d.document_id.as_deref().unwrap_or_default(),
    );
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// Whether stored rows must be made again: a document skipped past a run
/// ceiling is read by the next run; with `retry_failed`, so is one whose
/// requests failed.
fn rerun(batches: &[RecordBatch], retry_failed: bool) -> bool {
    batches.iter().any(|b| {
        let Some(c) = b.column_by_name("status") else {
            return false;
        };
        let Ok(c) = cast(c, &DataType::Utf8) else {
            return true;
        };
        c.as_string::<i32>()
            .iter()
            .flatten()
            .any(|s| s == "skipped" || (retry_failed && matches!(s, "failed" | "incomplete")))
    })
}

/// The table a run gives, planned now (every stage and output) so schemas
/// and errors are known at planning.
pub fn run_table(base: &SessionState, mut run: Run) -> Result<Arc<dyn TableProvider>> {
    let sqls: Vec<&str> = run.outputs.iter().map(|o| o.sql.as_str()).collect();
    let planned = plan_stages(base, &run.stages, &sqls)?;
    for (o, p) in run.outputs.iter_mut().zip(planned) {
        match &o.schema {
            None => o.schema = Some(p),
            Some(fixed) => {
                let names = |s: &SchemaRef| -> Vec<String> {
                    s.fields().iter().map(|f| f.name().clone()).collect()
                };
                if names(fixed) != names(&p) {
                    return plan_err!(
                        "the rendered SQL's {} columns {:?} are not the table's {:?}",
                        o.table,
                        names(&p),
                        names(fixed)
                    );
                }
            }
        }
    }
    let schema = run.outputs[run.want]
        .schema
        .clone()
        .unwrap_or_else(|| Arc::new(datafusion::arrow::datatypes::Schema::empty()));
    let results = match &run.store {
        Some(store) => {
            let outputs: Vec<(&'static str, SchemaRef)> = run
                .outputs
                .iter()
                .map(|o| (o.table, o.schema.clone().expect("planned")))
                .collect();
            Some(RunStore::new(store, &run.protocol, &outputs).map_err(DataFusionError::from)?)
        }
        None => None,
    };
    let part = RunPartition {
        base: base.clone(),
        share: base
            .config()
            .get_extension::<crate::corpus::PartOf>()
            .and_then(|s| s.0),
        run: Arc::new(run),
        results,
        schema: schema.clone(),
    };
    let by_source = schema.index_of("source").is_ok();
    let table = StreamingTable::try_new(schema, vec![Arc::new(part)])?;
    Ok(Arc::new(if by_source {
        table.with_sort_order(vec![datafusion::prelude::col("source").sort(true, false)])
    } else {
        table
    }))
}

struct RunPartition {
    base: SessionState,
    /// The part of the corpus this process runs, on a cluster: its
    /// documents' rows (the store and the response cache are shared).
    share: Option<Share>,
    run: Arc<Run>,
    /// The run's tables in the store.
    results: Option<RunStore>,
    schema: SchemaRef,
}

impl fmt::Debug for RunPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunPartition")
            .field("source", &self.run.source)
            .field("protocol", &self.run.protocol)
            .finish()
    }
}

impl PartitionStream for RunPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (base, run) = (self.base.clone(), self.run.clone());
        let results = self.results.clone();
        let registered = Arc::new(AtomicBool::new(false));
        let share = self.share;
        let windows = futures::stream::once(async move {
            let source = Source::parse(&run.source).map_err(DataFusionError::from)?;
            let opts = run.opts.clone();
            let preset_opts = format!("{opts:?}");
            let source = Arc::new(source);
            let rt = base.config().get_extension::<crate::model::Runtime>();
            if let Some(rt) = &rt {
                check_plan(rt, &run, results.as_ref(), source.clone(), opts.clone()).await?;
            }
            // The progress line counts documents of the listing's total
            // (listed once more, only for a terminal).
            let total = match &rt {
                Some(rt) if rt.shows_progress() && run.records.is_none() => source
                    .entries(opts.recursive)
                    .await
                    .ok()
                    .map(|e| e.iter().filter(|e| !e.not_scanned).count() as u64),
                _ => None,
            };
            let ingest = opts.ingest.clone();
            let docs = run_documents(&run, source.clone(), opts, share);
            Ok::<_, DataFusionError>(
                docs.chunks(run.window.max(1))
                    .map(move |w| {
                        let (base, run, ctx) = (base.clone(), run.clone(), ctx.clone());
                        let results = results.clone();
                        let read = Reading {
                            source: source.clone(),
                            opts: preset_opts.clone(),
                            ingest: ingest.clone(),
                        };
                        let registered = registered.clone();
                        let rt = rt.clone();
                        async move {
                            let docs = w
                                .into_iter()
                                .map(|d| d.map(Arc::new))
                                .collect::<crate::error::Result<Vec<_>>>()?;
                            let n = docs.len() as u64;
                            let out =
                                window(&base, &run, results.as_ref(), docs, &read, ctx).await?;
                            if let Some(rt) = &rt {
                                rt.documents_done(run.outputs[0].table, n, total);
                            }
                            if !registered.swap(true, Ordering::SeqCst) {
                                register_extraction(&base, &run).await;
                            }
                            Ok::<_, DataFusionError>(out)
                        }
                    })
                    .buffered(WINDOWS_AT_ONCE)
                    .map_ok(|bs| futures::stream::iter(bs.into_iter().map(Ok)))
                    .try_flatten(),
            )
        })
        .try_flatten();
        // Once every window is through: what the store holds of files no
        // longer listed is cleared (see [`Publish::finish`]).
        let (run, results) = (self.run.clone(), self.results.clone());
        let first = self.share.is_none_or(|s| s.index == 0);
        let finish = futures::stream::once(async move {
            // On a cluster, the first part clears (for the whole listing).
            if first {
                finish_run(&run, results.as_ref()).await?;
            }
            Ok::<_, DataFusionError>(None)
        });
        let windows = windows
            .map_ok(Some)
            .chain(finish)
            .try_filter_map(|b| futures::future::ready(Ok(b)))
            .boxed();
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), windows))
    }
}

/// The end of a run that went through its whole listing: what the store
/// holds of paths the source no longer lists is cleared, from the run's
/// tables and through its publisher (a run over records lists no files).
async fn finish_run(run: &Run, results: Option<&RunStore>) -> Result<()> {
    if run.records.is_some() || (results.is_none() && run.publish.is_none()) {
        return Ok(());
    }
    let source = Source::parse(&run.source).map_err(DataFusionError::from)?;
    let listed: std::collections::HashSet<String> = source
        .entries(run.opts.recursive)
        .await
        .map_err(DataFusionError::from)?
        .into_iter()
        .map(|e| e.source)
        .collect();
    if let Some(results) = results {
        results
            .finish(&run.source, &listed)
            .await
            .map_err(DataFusionError::from)?;
    }
    if let Some(publish) = &run.publish {
        publish
            .finish(&run.source, &listed)
            .await
            .map_err(DataFusionError::from)?;
    }
    Ok(())
}

/// How the run reads its source.
struct Reading {
    source: Arc<Source>,
    /// The corpus options as a preset matches them.
    opts: String,
    ingest: crate::ingest::IngestSpec,
}

/// Each document's stored rows of each table the run makes, where the
/// store has them from the same run (the same key). A store that cannot be
/// read restores nothing (the documents are read again), with a warning.
async fn stored(
    results: &RunStore,
    docs: &[impl std::borrow::Borrow<Document>],
    keys: &[String],
) -> Vec<Vec<Option<RecordBatch>>> {
    let pairs: Vec<(&str, &str)> = docs
        .iter()
        .zip(keys)
        .map(|(d, k)| (d.borrow().entry.source.as_str(), k.as_str()))
        .collect();
    match results.stored(&pairs).await {
        Ok(got) => got,
        Err(e) => {
            eprintln!(
                "warning: the store's rows could not be read (the documents are read again): {e}"
            );
            vec![Vec::new(); docs.len()]
        }
    }
}

/// Whether stored rows stand for a document: every table's, and none that
/// must be made again (see [`rerun`]).
fn restorable(got: &[Option<RecordBatch>], retry_failed: bool) -> bool {
    if got.is_empty() {
        return false;
    }
    let all: Option<Vec<RecordBatch>> = got.iter().cloned().collect();
    all.is_some_and(|b| !rerun(&b, retry_failed))
}

/// One window: its stored rows, or the stages and outputs run over the
/// documents that have none, written per document; the wanted table's rows
/// in listing order.
async fn window(
    base: &SessionState,
    run: &Run,
    results: Option<&RunStore>,
    docs: Vec<Arc<Document>>,
    read: &Reading,
    ctx: Arc<TaskContext>,
) -> Result<Vec<RecordBatch>> {
    let n_out = run.outputs.len();
    let schema = |o: usize| run.outputs[o].schema.clone().expect("planned");
    let keys: Vec<String> = docs.iter().map(|d| result_key(&run.salt, d)).collect();
    // rows[o][i]: document i's rows of output o.
    let mut rows: Vec<Vec<Option<RecordBatch>>> = vec![vec![None; docs.len()]; n_out];
    if let Some(results) = results {
        for (i, got) in stored(results, &docs, &keys).await.into_iter().enumerate() {
            for (o, b) in got.into_iter().enumerate() {
                rows[o][i] = b;
            }
        }
    }
    let todo: Vec<usize> = (0..docs.len())
        .filter(|&i| {
            let got: Vec<Option<RecordBatch>> = (0..n_out).map(|o| rows[o][i].clone()).collect();
            !restorable(&got, run.retry_failed)
        })
        .collect();
    let mut unmatched: Vec<RecordBatch> = Vec::new();
    let mut published = true;
    if !todo.is_empty() {
        // A duplicate's row repeats its first copy's values: a first copy
        // outside the window is read again (its requests answer from the
        // cache, or from this statement's memory) and its own rows are
        // left to its window.
        let mut companions: Vec<Arc<Document>> = Vec::new();
        for &i in &todo {
            let Some(first) = &docs[i].original else {
                continue;
            };
            let known = docs
                .iter()
                .chain(&companions)
                .any(|d| d.entry.source == first.source);
            if !known {
                let d = crate::corpus::read_entry(
                    &read.source,
                    run.store.as_ref(),
                    first.clone(),
                    &read.ingest,
                )
                .await;
                companions.push(Arc::new(d));
            }
        }
        // A first copy in the window but restored still has to be read
        // for its duplicate.
        let mut preset_docs: Vec<Arc<Document>> = companions.clone();
        for (i, d) in docs.iter().enumerate() {
            let needed = todo.contains(&i)
                || todo.iter().any(|&j| {
                    docs[j]
                        .original
                        .as_ref()
                        .is_some_and(|f| f.source == d.entry.source)
                });
            if needed {
                preset_docs.push(d.clone());
            }
        }
        let preset = Arc::new(Preset {
            source: read.source.spec.clone(),
            opts: read.opts.clone(),
            docs: preset_docs,
        });
        let (state, tables) = private_state(base, Some(preset))?;
        run_stages(&state, &tables, &run.stages, ctx.clone()).await?;
        for (o, out) in run.outputs.iter().enumerate() {
            let plan = physical(&state, &out.sql).await?;
            let batches = collect(plan, ctx.clone())
                .await?
                .into_iter()
                .map(|b| conform(b, &schema(o)))
                .collect::<Result<Vec<_>>>()?;
            let all = concat_batches(&schema(o), &batches)?;
            // Rows belong to a document by source, or (evidence) by the
            // id of the read document it was taken from.
            let by_source = all.schema().index_of("source").is_ok();
            let mut owner: HashMap<&str, usize> = HashMap::new();
            for &i in &todo {
                let d = &docs[i];
                if by_source {
                    owner.insert(d.entry.source.as_str(), i);
                } else if d.status == crate::ingest::Status::Ok {
                    if let Some(id) = &d.document_id {
                        owner.insert(id.as_str(), i);
                    }
                }
            }
            let col = cast(
                all.column_by_name(if by_source { "source" } else { "document_id" })
                    .ok_or_else(|| {
                        DataFusionError::Execution(format!(
                            "the {} rows have no document column",
                            out.table
                        ))
                    })?,
                &DataType::Utf8,
            )?;
            let col = col.as_string::<i32>();
            // Rows of documents read only for a duplicate belong to
            // another window (or were restored).
            let others: std::collections::HashSet<&str> = docs
                .iter()
                .enumerate()
                .filter(|(i, _)| !todo.contains(i))
                .map(|(_, d)| d)
                .chain(&companions)
                .flat_map(|d| [Some(d.entry.source.as_str()), d.document_id.as_deref()])
                .flatten()
                .collect();
            let mut take: Vec<Vec<u32>> = vec![Vec::new(); docs.len()];
            let mut rest: Vec<u32> = Vec::new();
            for r in 0..all.num_rows() {
                let v = col.is_valid(r).then(|| col.value(r));
                match v.and_then(|v| owner.get(v)) {
                    Some(&i) => take[i].push(r as u32),
                    None if v.is_some_and(|v| others.contains(v)) => {}
                    None => rest.push(r as u32),
                }
            }
            for &i in &todo {
                rows[o][i] = Some(take_record_batch(
                    &all,
                    &UInt32Array::from(std::mem::take(&mut take[i])),
                )?);
            }
            if o == run.want && !rest.is_empty() {
                unmatched.push(take_record_batch(&all, &UInt32Array::from(rest))?);
            }
        }
        if let Some(publish) = &run.publish {
            if let Err(e) = publish.publish(&docs, &mut rows[run.want]).await {
                // Not kept as done: the next run computes these again (its
                // requests answer from the cache) and puts them in.
                eprintln!("warning: {} of {} document(s) could not be put in the store (the next run tries again): {e}", run.outputs[run.want].table, docs.len());
                published = false;
            }
        }
        if let (Some(results), true) = (results, published) {
            let done: Vec<(&str, &str, Vec<Option<RecordBatch>>)> = todo
                .iter()
                .map(|&i| {
                    (
                        docs[i].entry.source.as_str(),
                        keys[i].as_str(),
                        (0..n_out).map(|o| rows[o][i].clone()).collect(),
                    )
                })
                .collect();
            if let Err(e) = results.write(&done).await {
                // A store that cannot be written loses resumability, not
                // results.
                eprintln!("warning: a window's rows could not be kept in the store (a later run reads those documents again): {e}");
            }
        }
    } else if let Some(publish) = &run.publish {
        if let Err(e) = publish.publish(&docs, &mut rows[run.want]).await {
            eprintln!("warning: {} of {} document(s) could not be put in the store (the next run tries again): {e}", run.outputs[run.want].table, docs.len());
        }
    }
    let mut out: Vec<RecordBatch> = rows[run.want]
        .iter_mut()
        .filter_map(Option::take)
        .filter(|b| b.num_rows() > 0)
        .collect();
    out.extend(unmatched);
    // One batch a window, in order of source where the table has one (the
    // listing is in that order, so the whole table is, as it declares).
    let all = concat_batches(&schema(run.want), &out)?;
    if all.num_rows() == 0 {
        return Ok(vec![]);
    }
    let all = match all.schema().index_of("source") {
        Ok(i) => take_record_batch(&all, &sort_to_indices(all.column(i), None, None)?)?,
        Err(_) => all,
    };
    Ok(vec![all])
}

/// After a run's first window: the store's `extraction` table becomes this
/// protocol's, in this session and (through [`LATEST_EXTRACTION`]) the
/// sessions after it.
async fn register_extraction(base: &SessionState, run: &Run) {
    let Some(store) = &run.store else { return };
    let Some(o) = run.outputs.iter().find(|o| o.table == "extraction") else {
        return;
    };
    let Some(schema) = &o.schema else { return };
    let pointer = RecordBatch::new_empty(schema.clone());
    if let Ok(bytes) = parquet_bytes(&pointer, Some((LATEST_KEY, run.protocol.clone()))) {
        if let Err(e) = store.put(LATEST_EXTRACTION, bytes).await {
            eprintln!("warning: {e}");
        }
    }
    let opts = base.config_options();
    let Some(schema_provider) = base
        .catalog_list()
        .catalog(&opts.catalog.default_catalog)
        .and_then(|c| c.schema(&opts.catalog.default_schema))
    else {
        return;
    };
    match crate::store::results::view(store, "extraction", &run.protocol, schema.clone()) {
        Ok(table) => {
            let _ = schema_provider.deregister_table("extraction");
            let _ = schema_provider.register_table("extraction".into(), Arc::new(table));
        }
        Err(e) => eprintln!("warning: {e}"),
    }
}

/// The protocol and schema of the store's latest extraction, if any.
pub async fn latest_extraction(store: &Store) -> Option<(String, SchemaRef)> {
    let bytes = store.get(LATEST_EXTRACTION).await.ok()??;
    let b = datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        bytes.clone(),
    )
    .ok()?;
    // The columns only: the file's key-value metadata (the protocol) is not
    // the table's, and a schema carrying it would differ from the one its
    // rows are read with (DataFusion refuses such a plan).
    let schema = Arc::new(
        b.schema()
            .as_ref()
            .clone()
            .with_metadata(Default::default()),
    );
    let (protocol, _) = read_parquet_meta(bytes, LATEST_KEY).ok()?;
    Some((protocol?, schema))
}

#[cfg(test)]
mod tests {
    use super::under_source;

    #[test]
    fn paths_under_a_source() {
        assert!(under_source("corpus/", "corpus/a.pdf"));
        assert!(under_source("corpus", "corpus/2019/a.pdf"));
        assert!(under_source("s3://b/trials/", "s3://b/trials/x.pdf"));
        assert!(under_source("corpus/a.pdf", "corpus/a.pdf"));
        // A folder whose name starts like the source's is another folder.
        assert!(!under_source("corpus", "corpus2/a.pdf"));
        assert!(!under_source("corpus/a.pdf", "corpus/a.pdf.bak"));
        assert!(!under_source("s3://b/trials/", "s3://b/other/x.pdf"));
    }
}
