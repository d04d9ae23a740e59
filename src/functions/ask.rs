//! `ask(src, question [, options])`: one row per document of the
//! `answers` table, each document cut into chunks and read by one reader
//! (see [`crate::read`]); `ask_evidence(...)`, the same run's evidence (its
//! requests answered again by the statement's memo or the cache, so no
//! request is paid twice); `readers()`, the registry; `is_not_found(text)`.
//!
//! ```sql
//! SELECT source, answer, partial, notes FROM ask('corpus/', 'How many were randomised?', 'reader=map_reduce');
//! SELECT chunk_id, kind, text FROM ask_evidence('corpus/', 'How many were randomised?', 'reader=retrieve, top_k=3');
//! ```

use std::sync::{Arc, Mutex};
use std::time::Instant;

use datafusion::arrow::array::{ArrayRef, BooleanArray, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::StreamExt;
use serde::Serialize;

use super::{
    corpus_options, literal_args, parse_options, source_arg, str_arg, Env, CORPUS_OPTIONS,
};
use crate::ingest::{Document, Status};
use crate::model::runtime::CallContext;
use crate::model::{Message, Request, Runtime};
use crate::read::{self, Ask, Passage, Reply, Settings};
use crate::segment::{segment, SegDoc, SegmentSpec};
use crate::source::Source;

const USAGE: &str = "ask(src, question [, 'reader=stuff|map_reduce|refine|skim|retrieve|preview, segment=paragraph, max_tokens=800, overlap_tokens=0, top_k=4, model=..., max_output=...'])";

/// Which table an `ask` run gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ask`: the answers.
    Answers,
    /// `ask_evidence`: what they rest on.
    Evidence,
}

/// `ask` and `ask_evidence`.
#[derive(Debug)]
pub struct AskFn {
    /// Which.
    pub kind: Kind,
    /// Shared settings (the store's ingest cache).
    pub env: Env,
}

/// The `answers` table's columns.
pub fn answers_schema() -> SchemaRef {
    let list = |n: &str, t: DataType| {
        Field::new(
            n,
            DataType::List(Arc::new(Field::new("item", t, true))),
            true,
        )
    };
    Arc::new(Schema::new(vec![
        Field::new("run_id", DataType::Utf8, true),
        Field::new("document_id", DataType::Utf8, true),
        Field::new("source", DataType::Utf8, true),
        Field::new("question", DataType::Utf8, true),
        Field::new("reader", DataType::Utf8, true),
        Field::new("segmentation", DataType::Utf8, true),
        Field::new("answer", DataType::Utf8, true),
        Field::new("partial", DataType::Boolean, true),
        Field::new("not_found", DataType::Boolean, true),
        list("notes", DataType::Utf8),
        list("chunks_used", DataType::Int64),
        Field::new("chunks", DataType::Int64, true),
        Field::new("calls", DataType::Int64, true),
        Field::new("tokens_in", DataType::Int64, true),
        Field::new("tokens_out", DataType::Int64, true),
        Field::new("usd", DataType::Float64, true),
        Field::new("seconds", DataType::Float64, true),
    ]))
}

/// The `answer_evidence` table's columns.
pub fn evidence_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("run_id", DataType::Utf8, true),
        Field::new("document_id", DataType::Utf8, true),
        Field::new("source", DataType::Utf8, true),
        Field::new("chunk_id", DataType::Int64, true),
        Field::new("text", DataType::Utf8, true),
        Field::new("page", DataType::Int64, true),
        Field::new("section", DataType::Utf8, true),
        Field::new("score", DataType::Float64, true),
        Field::new("kind", DataType::Utf8, true),
        Field::new("verified", DataType::Boolean, true),
        Field::new("matched", DataType::Float64, true),
    ]))
}

#[derive(Serialize)]
struct AnswerRow {
    run_id: Option<String>,
    document_id: Option<String>,
    source: String,
    question: String,
    reader: String,
    segmentation: Option<String>,
    answer: Option<String>,
    partial: bool,
    not_found: bool,
    notes: Vec<String>,
    chunks_used: Vec<i64>,
    chunks: i64,
    calls: i64,
    tokens_in: i64,
    tokens_out: i64,
    usd: Option<f64>,
    seconds: f64,
}

#[derive(Serialize)]
struct EvidenceRow {
    run_id: Option<String>,
    document_id: Option<String>,
    source: String,
    #[serde(flatten)]
    e: read::Evidence,
}

/// How a run reads each document.
#[derive(Debug, Clone)]
struct Plan {
    question: String,
    reader: &'static str,
    spec: SegmentSpec,
    settings: Settings,
    model: String,
    max_output: u32,
    temperature: Option<f64>,
}

impl TableFunctionImpl for AskFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let vals = literal_args(&args)?;
        if vals.len() < 2 || vals.len() > 3 {
            return plan_err!("{USAGE}: takes 2 or 3 arguments, got {}", vals.len());
        }
        let source = source_arg(&vals, USAGE)?;
        let Some(question) =
            str_arg(&vals, 1, USAGE, "the question")?.filter(|q| !q.trim().is_empty())
        else {
            return plan_err!("{USAGE}: the question is missing");
        };
        let mut allowed = CORPUS_OPTIONS.to_vec();
        allowed.extend([
            "reader",
            "segment",
            "max_tokens",
            "overlap_tokens",
            "top_k",
            "model",
            "max_output",
            "max_hops",
            "members",
        ]);
        let raw = parse_options(
            &str_arg(&vals, 2, USAGE, "options")?.unwrap_or_default(),
            USAGE,
            &allowed,
        )?;
        let opts = corpus_options(&raw, USAGE)?;
        let reader_name = raw.get("reader").map_or("stuff", String::as_str);
        let Some(info) = read::reader(reader_name) else {
            return plan_err!(
                "{USAGE}: no reader '{reader_name}'; readers: {}",
                read::READERS
                    .iter()
                    .map(|r| r.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        };
        let members: Vec<String> = match raw.get("members") {
            None => Settings::new(0).members,
            Some(m) => m
                .split('+')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect(),
        };
        if let Some(bad) = members
            .iter()
            .find(|m| *m == "ensemble" || read::reader(m).is_none())
        {
            return plan_err!(
                "{USAGE}: members= names readers joined by '+' (e.g. stuff+map_reduce+retrieve); '{bad}' is not a reader an ensemble can ask"
            );
        }
        let num = |k: &str, default: usize| -> Result<usize> {
            match raw.get(k) {
                None => Ok(default),
                Some(v) => v
                    .parse()
                    .or_else(|_| plan_err!("{USAGE}: {k} must be a whole number, got '{v}'")),
            }
        };
        let method_name = raw.get("segment").map_or("paragraph", String::as_str);
        let method = super::chunks::method_arg(method_name, USAGE)?;
        let mut spec = SegmentSpec::new(method, num("max_tokens", 800)?);
        spec.overlap_tokens = num("overlap_tokens", 0)?;
        spec.tokenizer = opts.ingest.tokenizer;
        if let Err(e) = spec.validate() {
            return plan_err!("{USAGE}: {e}");
        }
        let Some(rt) = args.session().config().get_extension::<Runtime>() else {
            return plan_err!("{USAGE}: needs a quarry session with a model layer");
        };
        let model = raw
            .get("model")
            .cloned()
            .unwrap_or_else(|| rt.config().default_model());
        let asked_out =
            match raw.get("max_output") {
                None => None,
                Some(v) => Some(v.parse().or_else(|_| {
                    plan_err!("{USAGE}: max_output must be a whole number, got '{v}'")
                })?),
            };
        let max_output = rt.resolve_max_output(&model, asked_out);
        let info_m = rt.config().registry.info(&model);
        // The window less the answer and about 600 tokens of instructions.
        let budget = (info_m.context_window as usize)
            .saturating_sub(max_output as usize)
            .saturating_sub(600)
            .max(1);
        let plan = Plan {
            question,
            reader: info.name,
            spec,
            settings: Settings {
                top_k: num("top_k", 4)?.max(1),
                max_hops: num("max_hops", 3)?.max(1),
                members,
                ..Settings::new(budget)
            },
            temperature: rt.config().model.temperature,
            model,
            max_output,
        };
        let schema = match self.kind {
            Kind::Answers => answers_schema(),
            Kind::Evidence => evidence_schema(),
        };
        let part = AskPartition {
            kind: self.kind,
            schema: schema.clone(),
            source,
            env: self.env.clone(),
            opts,
            plan: Arc::new(plan),
            rt,
        };
        Ok(Arc::new(StreamingTable::try_new(
            schema,
            vec![Arc::new(part)],
        )?))
    }
}

struct AskPartition {
    kind: Kind,
    schema: SchemaRef,
    source: Arc<Source>,
    env: Env,
    opts: crate::corpus::CorpusOptions,
    plan: Arc<Plan>,
    rt: Arc<Runtime>,
}

impl std::fmt::Debug for AskPartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AskPartition")
            .field("reader", &self.plan.reader)
            .finish()
    }
}

/// The model layer as a reader asks it, counting what the document cost.
struct DocAsk {
    rt: Arc<Runtime>,
    plan: Arc<Plan>,
    document_id: Option<String>,
    spent: Mutex<(i64, i64, Option<f64>)>,
}

#[async_trait::async_trait]
impl Ask for DocAsk {
    async fn ask(&self, prompt: String, schema: Option<serde_json::Value>, label: String) -> Reply {
        let api = match self.rt.api_of(None) {
            Ok(a) => a,
            Err(e) => {
                return Reply {
                    text: None,
                    error: Some(e.to_string()),
                }
            }
        };
        let req = Request {
            api,
            model: self.plan.model.clone(),
            messages: vec![Message::user(prompt)],
            max_output: self.plan.max_output,
            temperature: self.plan.temperature,
            schema,
        };
        let ctx = CallContext {
            document_id: self.document_id.clone(),
            stage: "ask".into(),
            label: Some(format!("{}: {label}", self.plan.reader)),
            endpoint: None,
            resume: false,
        };
        let out = self.rt.call(req, &ctx).await;
        {
            let mut s = self.spent.lock().expect("spent");
            s.0 += out.tokens_in.unwrap_or(0) as i64;
            s.1 += out.tokens_out.unwrap_or(0) as i64;
            s.2 = match (s.2, out.usd) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
        }
        Reply {
            error: out.error.as_ref().map(ToString::to_string),
            text: if out.error.is_none() { out.text } else { None },
        }
    }
}

/// One document read: its answer row and its evidence rows.
async fn answer_document(
    doc: Document,
    plan: Arc<Plan>,
    rt: Arc<Runtime>,
) -> (AnswerRow, Vec<EvidenceRow>) {
    let started = Instant::now();
    let run_id = Some(rt.trace().run_id().to_string());
    let mut row = AnswerRow {
        run_id: run_id.clone(),
        document_id: doc.document_id.clone(),
        source: doc.entry.source.clone(),
        question: plan.question.clone(),
        reader: plan.reader.to_string(),
        segmentation: None,
        answer: None,
        partial: true,
        not_found: false,
        notes: vec![],
        chunks_used: vec![],
        chunks: 0,
        calls: 0,
        tokens_in: 0,
        tokens_out: 0,
        usd: Some(0.0),
        seconds: 0.0,
    };
    if doc.status != Status::Ok || doc.text.trim().is_empty() {
        row.notes.push(match (&doc.duplicate_of, &doc.error) {
            (Some(d), _) => format!("duplicate: the same text as {d}, which is read instead"),
            (None, Some(e)) => format!("unread: {e}"),
            (None, None) => format!("unread: the document is {}", doc.status.as_str()),
        });
        return (row, vec![]);
    }
    let seg = segment(
        &SegDoc {
            text: &doc.text,
            blocks: &doc.blocks,
        },
        &plan.spec,
    );
    row.segmentation = Some(seg.method.clone());
    if seg.method.contains("->") {
        row.notes.push(format!("segment_fallback: {}", seg.method));
    }
    let passages: Vec<Passage> = seg
        .chunks
        .iter()
        .enumerate()
        .map(|(i, c)| Passage {
            chunk_id: i as i64,
            text: doc.text[c.start..c.end].to_string(),
            tokens: c.tokens,
            page: c.page_start,
            section: c.section.clone(),
        })
        .collect();
    row.chunks = passages.len() as i64;
    let ask = DocAsk {
        rt: rt.clone(),
        plan: plan.clone(),
        document_id: doc.document_id.clone(),
        spent: Mutex::new((0, 0, Some(0.0))),
    };
    let a = read::read(plan.reader, &plan.question, &passages, &plan.settings, &ask).await;
    let (ti, to, usd) = *ask.spent.lock().expect("spent");
    row.answer = a.answer;
    row.not_found = a.not_found;
    row.notes.extend(a.notes);
    row.partial = a.partial || !row.notes.is_empty();
    row.chunks_used = a.chunks_used;
    row.calls = a.calls as i64;
    row.tokens_in = ti;
    row.tokens_out = to;
    row.usd = usd;
    row.seconds = started.elapsed().as_secs_f64();
    let ev = a
        .evidence
        .into_iter()
        .map(|e| EvidenceRow {
            run_id: run_id.clone(),
            document_id: doc.document_id.clone(),
            source: doc.entry.source.clone(),
            e,
        })
        .collect();
    (row, ev)
}

/// Documents read at once (their requests go through the endpoint's
/// limiter, which bounds what is in flight).
const DOCUMENTS_AT_ONCE: usize = 8;

impl PartitionStream for AskPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let docs = crate::corpus::documents(
            self.source.clone(),
            self.env.store.clone(),
            self.opts.clone(),
            false,
        );
        let (plan, rt, kind, schema) = (
            self.plan.clone(),
            self.rt.clone(),
            self.kind,
            self.schema.clone(),
        );
        let stream = docs
            .map(move |d| {
                let (plan, rt) = (plan.clone(), rt.clone());
                async move {
                    let d = d.map_err(datafusion::error::DataFusionError::from)?;
                    Ok::<_, datafusion::error::DataFusionError>(answer_document(d, plan, rt).await)
                }
            })
            .buffered(DOCUMENTS_AT_ONCE)
            .then({
                let rt = self.rt.clone();
                move |r| {
                    let (rt, schema) = (rt.clone(), schema.clone());
                    async move {
                        let (row, ev) = r?;
                        if let Err(e) = rt.flush().await {
                            eprintln!("warning: writing the trace: {e}");
                        }
                        match kind {
                            Kind::Answers => super::serde_batch(&schema, &[row]),
                            Kind::Evidence => super::serde_batch(&schema, &ev),
                        }
                    }
                }
            })
            .boxed();
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream))
    }
}

/// `readers()`: name, signature, cost in requests, method.
#[derive(Debug)]
pub struct ReadersFn;

impl TableFunctionImpl for ReadersFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        if !args.exprs().is_empty() {
            return plan_err!("readers() takes no arguments");
        }
        let col = |f: fn(&read::ReaderInfo) -> &'static str| -> ArrayRef {
            Arc::new(StringArray::from_iter_values(read::READERS.iter().map(f)))
        };
        let b = RecordBatch::try_from_iter(vec![
            ("name", col(|r| r.name)),
            ("signature", col(|r| r.signature)),
            ("cost_calls", col(|r| r.cost)),
            ("method", col(|r| r.method)),
        ])?;
        Ok(Arc::new(datafusion::datasource::MemTable::try_new(
            b.schema(),
            vec![vec![b]],
        )?))
    }
}

/// `is_not_found(text)`: whether a reply is the not-found sentinel,
/// however the model decorated it.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct IsNotFound {
    signature: Signature,
}

impl Default for IsNotFound {
    fn default() -> Self {
        Self {
            signature: Signature::exact(vec![DataType::Utf8], Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for IsNotFound {
    fn name(&self) -> &str {
        "is_not_found"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let a = args.args[0].to_array(args.number_rows)?;
        let t = quarry_udfs::util::string_array(&a, "is_not_found", "text")?;
        let out: BooleanArray = t.iter().map(|v| v.map(read::is_not_found)).collect();
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}
