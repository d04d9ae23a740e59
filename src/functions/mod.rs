//! Table functions and engine-side scalar functions exposed to SQL, one per
//! file, plus the argument and option parsing they share.

pub mod ask;
pub mod blocks;
pub mod calibrate;
pub mod catalog;
pub mod chunks;
pub mod claims;
pub mod cohort;
pub mod documents;
pub mod embed;
pub mod extract;
pub mod flow;
pub mod inventory;
pub mod llm;
pub mod model_tables;
pub mod records;
pub mod segment;
pub mod study_claims;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatchOptions;
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{TableFunctionArgs, TableProvider};
use datafusion::common::{plan_err, DFSchema, Result, ScalarValue};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{ColumnarValue, Expr};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::stream::BoxStream;
use futures::StreamExt;

use crate::corpus::CorpusOptions;
use crate::engine::Preset;
use crate::ingest::cleaners::CleanerSet;
use crate::ingest::ocr::{self, OcrMode};
use crate::ingest::Document;
use crate::source::Source;
use crate::store::Store;
use quarry_udfs::Tokenizer;

/// A registry listed by a table function of no arguments (`readers()`,
/// `segmenters()` and the like): one batch of the named columns. `call` is
/// the function's name, for the error when it is given arguments.
pub fn registry_table(
    args: &TableFunctionArgs,
    call: &str,
    cols: Vec<(&str, datafusion::arrow::array::ArrayRef)>,
) -> Result<Arc<dyn TableProvider>> {
    if !args.exprs().is_empty() {
        return plan_err!("{call}() takes no arguments");
    }
    one_batch_table(cols)
}

/// A table of one batch of the named columns.
pub fn one_batch_table(
    cols: Vec<(&str, datafusion::arrow::array::ArrayRef)>,
) -> Result<Arc<dyn TableProvider>> {
    let b = RecordBatch::try_from_iter(cols)?;
    Ok(Arc::new(datafusion::datasource::MemTable::try_new(
        b.schema(),
        vec![vec![b]],
    )?))
}

/// A text column of a registry: `f` of each item.
pub fn text_column<T>(items: &[T], f: impl Fn(&T) -> &str) -> datafusion::arrow::array::ArrayRef {
    Arc::new(datafusion::arrow::array::StringArray::from_iter_values(
        items.iter().map(f),
    ))
}

/// What every corpus table function shares: the store for the ingest cache.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// The store, when caching is on.
    pub store: Option<Store>,
}

/// The window of a run that a corpus function called in `args`' session
/// reads instead of its source, if that session is one window's (see
/// [`Preset`]).
pub fn preset_of(args: &TableFunctionArgs) -> Option<Arc<Preset>> {
    args.session().config().get_extension::<Preset>()
}

/// The part of the listing a corpus function called in `args`' session
/// reads, when a cluster splits the corpus between its executors (see
/// [`crate::corpus::Share`]); its rows then carry [`LISTING_ORDER`].
pub fn share_of(args: &TableFunctionArgs) -> Option<crate::corpus::Share> {
    args.session()
        .config()
        .get_extension::<crate::corpus::PartOf>()
        .and_then(|s| s.0)
}

/// The column a shared corpus table adds: each row's document's position in
/// the whole listing, by which the parts are merged back into its order.
pub const LISTING_ORDER: &str = "__quarry_listing_order";

/// `schema` with [`LISTING_ORDER`] last.
pub fn with_listing_order(schema: &SchemaRef) -> SchemaRef {
    let mut fields: Vec<_> = schema.fields().iter().cloned().collect();
    fields.push(Arc::new(datafusion::arrow::datatypes::Field::new(
        LISTING_ORDER,
        datafusion::arrow::datatypes::DataType::UInt64,
        false,
    )));
    Arc::new(datafusion::arrow::datatypes::Schema::new_with_metadata(
        fields,
        schema.metadata().clone(),
    ))
}

/// The corpus options a protocol or claims spec gives its run.
pub fn run_options(s: &str) -> Result<CorpusOptions> {
    let usage = "the run's corpus options";
    corpus_options(&parse_options(s, usage, CORPUS_OPTIONS)?, usage)
}

/// Constant-folds table-function arguments (`'a' || 'b'`, `60 * 2`).
pub fn literal_args(args: &TableFunctionArgs) -> Result<Vec<ScalarValue>> {
    let one_row = RecordBatch::try_new_with_options(
        Arc::new(datafusion::arrow::datatypes::Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )?;
    args.exprs()
        .iter()
        .map(|e| {
            if let Expr::Literal(v, _) = e {
                return Ok(v.clone());
            }
            match args
                .session()
                .create_physical_expr(e.clone(), &DFSchema::empty())?
                .evaluate(&one_row)?
            {
                ColumnarValue::Scalar(v) => Ok(v),
                ColumnarValue::Array(a) => ScalarValue::try_from_array(&a, 0),
            }
        })
        .collect()
}

/// A string argument, or a planning error naming the function's usage.
pub fn str_arg(vals: &[ScalarValue], i: usize, usage: &str, name: &str) -> Result<Option<String>> {
    match vals.get(i) {
        None => Ok(None),
        Some(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)),
        ) => Ok(Some(s.clone())),
        Some(v) if v.is_null() => plan_err!("{usage}: {name} is NULL; pass a string"),
        Some(v) => plan_err!(
            "{usage}: {name} must be a string, got {} ({v})",
            v.data_type()
        ),
    }
}

/// A non-negative integer argument.
pub fn int_arg(vals: &[ScalarValue], i: usize, usage: &str, name: &str) -> Result<Option<usize>> {
    let Some(v) = vals.get(i) else {
        return Ok(None);
    };
    let n = match v {
        ScalarValue::Int8(Some(n)) => *n as i64,
        ScalarValue::Int16(Some(n)) => *n as i64,
        ScalarValue::Int32(Some(n)) => *n as i64,
        ScalarValue::Int64(Some(n)) => *n,
        ScalarValue::UInt8(Some(n)) => *n as i64,
        ScalarValue::UInt16(Some(n)) => *n as i64,
        ScalarValue::UInt32(Some(n)) => *n as i64,
        ScalarValue::UInt64(Some(n)) => *n as i64,
        other => return plan_err!("{usage}: {name} must be a whole number, got {other}"),
    };
    if n < 0 {
        return plan_err!("{usage}: {name} must not be negative, got {n}");
    }
    Ok(Some(n as usize))
}

/// Parses `key=value` options separated by `,` or `;`.
pub fn parse_options(s: &str, usage: &str, allowed: &[&str]) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for item in s.split([',', ';']).map(str::trim).filter(|i| !i.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            return plan_err!(
                "{usage}: option '{item}' must be key=value; options: {}",
                allowed.join(", ")
            );
        };
        let k = k.trim().to_ascii_lowercase();
        if !allowed.contains(&k.as_str()) {
            return plan_err!(
                "{usage}: unknown option '{k}'; options: {}",
                allowed.join(", ")
            );
        }
        out.insert(k, v.trim().to_string());
    }
    Ok(out)
}

/// `true`/`yes`/`1`/`on` or `false`/`no`/`0`/`off`, any case.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "on" => Some(true),
        "false" | "no" | "0" | "off" => Some(false),
        _ => None,
    }
}

/// The corpus options every table function accepts.
pub const CORPUS_OPTIONS: &[&str] = &[
    "recursive",
    "clean",
    "max_bytes",
    "tokenizer",
    "ocr",
    "ocr_lang",
];

/// Applies corpus options from a parsed map.
pub fn corpus_options(opts: &BTreeMap<String, String>, usage: &str) -> Result<CorpusOptions> {
    let mut c = CorpusOptions::default();
    if let Some(v) = opts.get("recursive") {
        c.recursive = match parse_bool(v) {
            Some(b) => b,
            None => return plan_err!("{usage}: recursive must be true or false, got '{v}'"),
        };
    }
    if let Some(v) = opts.get("clean") {
        c.ingest.cleaners = CleanerSet::parse(v).or_else(|e| plan_err!("{usage}: {e}"))?;
    }
    if let Some(v) = opts.get("max_bytes") {
        c.ingest.max_bytes = v.parse().or_else(|_| {
            plan_err!("{usage}: max_bytes must be a whole number of bytes, got '{v}'")
        })?;
    }
    if let Some(v) = opts.get("ocr") {
        c.ingest.ocr.mode = match OcrMode::parse(v) {
            Some(m) => m,
            None => return plan_err!("{usage}: ocr must be auto, always or never, got '{v}'"),
        };
    }
    if let Some(v) = opts.get("ocr_lang") {
        if !ocr::valid_lang(v) {
            return plan_err!(
                "{usage}: ocr_lang must be Tesseract language names joined by '+' (eng, eng+deu), got '{v}'"
            );
        }
        c.ingest.ocr.lang = v.clone();
    }
    // Asked for, OCR that cannot run is refused before anything is read.
    if c.ingest.ocr.mode == OcrMode::Always || opts.contains_key("ocr_lang") {
        if let Err(e) = ocr::available(&c.ingest.ocr.lang) {
            return plan_err!("{usage}: ocr={}: {e}", c.ingest.ocr.mode.as_str());
        }
    }
    if let Some(v) = opts.get("tokenizer") {
        c.ingest.tokenizer = Tokenizer::parse(v).map_or_else(
            || {
                plan_err!(
                    "{usage}: unknown tokenizer '{v}'; use o200k_base, cl100k_base or heuristic"
                )
            },
            Ok,
        )?;
    }
    Ok(c)
}

/// Resolves the source argument, turning errors into planning errors.
pub fn source_arg(vals: &[ScalarValue], usage: &str) -> Result<Arc<Source>> {
    let Some(src) = str_arg(vals, 0, usage, "the source")? else {
        return plan_err!(
            "{usage}: the first argument must be a folder, file, glob, s3:// prefix or URL"
        );
    };
    Source::parse(&src)
        .map(Arc::new)
        .or_else(|e| plan_err!("{usage}: {e}"))
}

/// A one-row table of rendered SQL (`extract_sql`, `screen_sql`, `flow_sql`).
pub fn sql_table(sql: String) -> Result<Arc<dyn TableProvider>> {
    let batch = RecordBatch::try_from_iter(vec![(
        "sql",
        Arc::new(datafusion::arrow::array::StringArray::from(vec![sql])) as _,
    )])?;
    Ok(Arc::new(datafusion::datasource::MemTable::try_new(
        batch.schema(),
        vec![vec![batch]],
    )?))
}

/// Turns a document into zero or more batches.
pub type ToBatches = Arc<dyn Fn(&Document) -> Result<Vec<RecordBatch>> + Send + Sync>;

/// A lazily evaluated corpus table: one partition that lists, reads and
/// converts documents only when polled.
pub struct CorpusPartition {
    schema: SchemaRef,
    source: Arc<Source>,
    env: Env,
    preset: Option<Arc<Preset>>,
    opts: CorpusOptions,
    with_unscanned: bool,
    parallel: usize,
    convert: ToBatches,
    /// A part of the listing (a cluster's executor): only its files, each
    /// row with its document's [`LISTING_ORDER`].
    share: Option<crate::corpus::Share>,
}

impl fmt::Debug for CorpusPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CorpusPartition")
            .field("source", &self.source.spec)
            .finish()
    }
}

impl PartitionStream for CorpusPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let docs: BoxStream<'static, crate::error::Result<(u64, Arc<Document>)>> =
            match &self.preset {
                Some(p)
                    if self.share.is_none()
                        && !self.with_unscanned
                        && p.serves(&self.source, &self.opts) =>
                {
                    futures::stream::iter(
                        p.docs
                            .clone()
                            .into_iter()
                            .zip(0u64..)
                            .map(|(d, at)| Ok((at, d))),
                    )
                    .boxed()
                }
                _ => crate::corpus::listed_documents(
                    self.source.clone(),
                    self.env.store.clone(),
                    self.opts.clone(),
                    self.with_unscanned,
                    self.share,
                )
                .map(|d| d.map(|(at, d)| (at, Arc::new(d))))
                .boxed(),
            };
        let convert = self.convert.clone();
        let ordered = self.share.is_some().then(|| self.schema.clone());
        // Converting a document (segmenting it, building its arrays) is CPU
        // work: it runs on the blocking pool, several documents at once, and
        // the order of the listing is kept.
        let stream: BoxStream<'static, Result<RecordBatch>> = docs
            .map(move |doc| {
                let convert = convert.clone();
                let ordered = ordered.clone();
                async move {
                    let (at, doc) = doc?;
                    tokio::task::spawn_blocking(move || {
                        let batches = convert(&doc)?;
                        match ordered {
                            None => Ok(batches),
                            Some(schema) => batches
                                .into_iter()
                                .map(|b| {
                                    let mut cols = b.columns().to_vec();
                                    cols.push(Arc::new(
                                        datafusion::arrow::array::UInt64Array::from(vec![
                                            at;
                                            b.num_rows()
                                        ]),
                                    ));
                                    Ok(RecordBatch::try_new(schema.clone(), cols)?)
                                })
                                .collect(),
                        }
                    })
                    .await
                    .map_err(|e| {
                        datafusion::error::DataFusionError::Execution(format!(
                            "converting a document stopped: {e}"
                        ))
                    })?
                }
            })
            .buffered(self.parallel)
            .flat_map(|batches: Result<Vec<RecordBatch>>| match batches {
                Ok(bs) => futures::stream::iter(bs.into_iter().map(Ok).collect::<Vec<_>>()),
                Err(e) => futures::stream::iter(vec![Err(e)]),
            })
            .boxed();
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream))
    }
}

/// The call `name(src [, options])` shared by `documents`, `inventory` and
/// `blocks`: checks the argument count, resolves the source and the options,
/// and builds the lazily evaluated table.
pub fn simple_corpus_call(
    args: &TableFunctionArgs,
    usage: &str,
    env: &Env,
    schema: SchemaRef,
    with_unscanned: bool,
    convert: ToBatches,
) -> Result<Arc<dyn TableProvider>> {
    let vals = literal_args(args)?;
    if vals.is_empty() || vals.len() > 2 {
        return plan_err!("{usage}: takes 1 or 2 arguments, got {}", vals.len());
    }
    let source = source_arg(&vals, usage)?;
    let raw = parse_options(
        &str_arg(&vals, 1, usage, "options")?.unwrap_or_default(),
        usage,
        CORPUS_OPTIONS,
    )?;
    let opts = corpus_options(&raw, usage)?;
    corpus_table(schema, source, env, args, opts, with_unscanned, convert)
}

/// Builds the provider for a corpus table function.
pub fn corpus_table(
    schema: SchemaRef,
    source: Arc<Source>,
    env: &Env,
    args: &TableFunctionArgs,
    opts: CorpusOptions,
    with_unscanned: bool,
    convert: ToBatches,
) -> Result<Arc<dyn TableProvider>> {
    // A run's window reads its preset documents; a cluster's part, its share.
    let preset = preset_of(args);
    let share = share_of(args);
    // A part of a shared listing gives its rows' listing order too.
    let schema = match share {
        Some(_) => with_listing_order(&schema),
        None => schema,
    };
    let part = CorpusPartition {
        share,
        schema: schema.clone(),
        source,
        env: env.clone(),
        preset,
        opts,
        with_unscanned,
        parallel: std::thread::available_parallelism().map_or(2, |n| n.get()),
        convert,
    };
    Ok(Arc::new(StreamingTable::try_new(
        schema,
        vec![Arc::new(part)],
    )?))
}

/// `rows` (serialised into `schema`'s columns, as Arrow's JSON decoder
/// reads them) as one batch.
pub fn serde_batch<T: serde::Serialize>(
    schema: &datafusion::arrow::datatypes::SchemaRef,
    rows: &[T],
) -> Result<RecordBatch> {
    let mut decoder =
        datafusion::arrow::json::ReaderBuilder::new(schema.clone()).build_decoder()?;
    decoder.serialize(rows)?;
    Ok(decoder
        .flush()?
        .unwrap_or_else(|| RecordBatch::new_empty(schema.clone())))
}

/// One list of structs a row: `items` (serialised into `fields`, as
/// Arrow's JSON decoder reads them) cut into rows at `offsets` (`0`, then
/// each row's end).
pub fn struct_lists<T: serde::Serialize>(
    items: &[T],
    offsets: Vec<i32>,
    fields: datafusion::arrow::datatypes::Fields,
) -> Result<ColumnarValue> {
    use datafusion::arrow::array::{ArrayRef, ListArray, StructArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    let schema = Arc::new(Schema::new(fields.clone()));
    let values: ArrayRef = Arc::new(StructArray::from(serde_batch(&schema, items)?));
    let list = ListArray::try_new(
        Arc::new(Field::new("item", DataType::Struct(fields), true)),
        datafusion::arrow::buffer::OffsetBuffer::new(offsets.into()),
        values,
        None,
    )?;
    Ok(ColumnarValue::Array(Arc::new(list)))
}
