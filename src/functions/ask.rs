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

use datafusion::arrow::array::BooleanArray;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, Result};
use datafusion::execution::{SessionState, TaskContext};
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
use crate::model::{Message, ModelError, Request, Runtime};
use crate::read::embed::Embedder;
use crate::read::recipes::{self, Recipe};
use crate::read::{self, Ask, Passage, Reply, Settings};
use crate::segment::{segment_with, SegDoc, SegmentSpec};
use crate::source::Source;

const USAGE: &str = "ask(src, question [, recipe [, 'reader=stuff|map_reduce|refine|skim|retrieve|rerank|hierarchical|iterative|ensemble|preview, segment=paragraph, max_tokens=800, overlap_tokens=0, top_k=4, max_hops=3, members=stuff+map_reduce+retrieve, embedder=lexical|api, embed_model=..., embed_query_model=..., embed_endpoint=..., recipes=FILE.toml, model=..., max_output=...']])";

const COMPARE_USAGE: &str =
    "compare(src, question, 'recipe,recipe,...' [, 'recipes=FILE.toml, model=..., top_k=...'])";

/// Which table an `ask` run gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ask`: the answers.
    Answers,
    /// `ask_evidence`: what they rest on.
    Evidence,
    /// `compare`: one answer per recipe.
    Compare,
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
        Field::new("recipe", DataType::Utf8, true),
        Field::new("reader", DataType::Utf8, true),
        Field::new("segmentation", DataType::Utf8, true),
        Field::new("answer", DataType::Utf8, true),
        Field::new("partial", DataType::Boolean, true),
        Field::new("not_found", DataType::Boolean, true),
        Field::new("status", DataType::Utf8, true),
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

/// `compare`'s columns: the answers' with each recipe's signature and
/// the settings it changes, beside its reader.
pub fn compare_schema() -> SchemaRef {
    let a = answers_schema();
    let mut fields: Vec<Field> = Vec::new();
    for f in a.fields() {
        fields.push(f.as_ref().clone());
        if f.name() == "reader" {
            fields.push(Field::new("signature", DataType::Utf8, true));
            fields.push(Field::new("settings", DataType::Utf8, true));
        }
    }
    Arc::new(Schema::new(fields))
}

/// The `answer_evidence` table's columns.
pub fn evidence_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("run_id", DataType::Utf8, true),
        Field::new("document_id", DataType::Utf8, true),
        Field::new("source", DataType::Utf8, true),
        Field::new("recipe", DataType::Utf8, true),
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
    recipe: Option<String>,
    reader: String,
    signature: String,
    settings: String,
    segmentation: Option<String>,
    answer: Option<String>,
    partial: bool,
    not_found: bool,
    /// `ok`; `failed` (a request failed, or the document could not be
    /// read: `retry_failed` reads it again); `skipped` (a run ceiling
    /// stopped a request: the next run reads it).
    status: &'static str,
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
    recipe: Option<String>,
    #[serde(flatten)]
    e: read::Evidence,
}

/// One way of reading: a segmenter and a reader with their settings (a
/// recipe, with the options over it).
#[derive(Debug, Clone)]
struct Arm {
    /// The recipe as the row names it (`None` when none was named).
    recipe: Option<String>,
    reader: &'static str,
    signature: &'static str,
    spec: SegmentSpec,
    settings: Settings,
    remove_numbers: bool,
    /// The settings that differ from the defaults.
    changed: String,
}

/// How a run reads each document.
#[derive(Debug, Clone)]
struct Plan {
    question: String,
    /// One arm for `ask`; one per recipe for `compare`; `fast` and
    /// `thorough` for `auto`.
    arms: Vec<Arm>,
    /// `auto`: the first arm when the document has at most this many
    /// tokens, else the second.
    auto: Option<usize>,
    /// What retrieve, iterative and rerank's fallback rank with.
    embedder: Embedder,
    model: String,
    max_output: u32,
    temperature: Option<f64>,
}

impl Arm {
    fn new(
        r: &Recipe,
        label: Option<String>,
        opts: &crate::corpus::CorpusOptions,
        budget: usize,
        usage: &str,
    ) -> Result<Self> {
        if let Err(e) = r.check() {
            return plan_err!("{usage}: {e}");
        }
        let method = super::chunks::method_arg(&r.segment, usage)?;
        let mut spec = SegmentSpec::new(method, r.max_tokens);
        spec.overlap_tokens = r.overlap_tokens;
        spec.tokenizer = opts.ingest.tokenizer;
        spec.context_source =
            match crate::segment::contextual::ContextSource::parse(&r.context_source) {
                Ok(s) => s,
                Err(e) => return plan_err!("{usage}: {e}"),
            };
        if let Err(e) = spec.validate() {
            return plan_err!("{usage}: {e}");
        }
        let info = read::reader(&r.reader).expect("checked");
        Ok(Self {
            recipe: label,
            reader: info.name,
            signature: info.signature,
            spec,
            settings: Settings {
                top_k: r.top_k,
                max_hops: r.max_hops,
                members: r.members.clone(),
                ..Settings::new(budget)
            },
            remove_numbers: r.remove_numbers,
            changed: r.changed(),
        })
    }
}

impl AskFn {
    /// The run engine's run for this call: `answers` and `answer_evidence`
    /// (or `comparisons`), each window's rows made by this function again
    /// over the window's documents. The ceilings are checked up front
    /// against the fewest requests each reader makes: one per chunk for
    /// the readers that read every chunk alone, one per document for the
    /// others.
    fn engine_run(
        &self,
        args_sql: &str,
        source: &Source,
        opts: crate::corpus::CorpusOptions,
        plan: &Plan,
        rt: &Runtime,
    ) -> crate::engine::Run {
        use crate::engine::{Output, Run};
        let out = |table: &'static str, f: &str, schema: SchemaRef| Output {
            table,
            sql: format!("SELECT * FROM {f}({args_sql})"),
            schema: Some(schema),
        };
        let outputs = match self.kind {
            Kind::Compare => vec![out("comparisons", "compare", compare_schema())],
            _ => vec![
                out("answers", "ask", answers_schema()),
                out("answer_evidence", "ask_evidence", evidence_schema()),
            ],
        };
        let stages = crate::engine::staged::Stages {
            stages: vec![],
            output: String::new(),
            keep: vec![],
        };
        let salt = crate::engine::run_salt(&source.spec, &stages, &outputs, "", Some(rt));
        let mut estimate = crate::engine::Plan {
            model: plan.model.clone(),
            max_output: Some(plan.max_output),
            ..Default::default()
        };
        // About 600 tokens of instructions, three characters a token.
        let fixed = 1800;
        for arm in &plan.arms {
            if matches!(
                arm.reader,
                "map_reduce" | "refine" | "skim" | "rerank" | "hierarchical" | "ensemble"
            ) {
                estimate.extract = Some((arm.spec.clone(), fixed));
            } else {
                let tokens = match arm.reader {
                    "stuff" => arm.settings.budget_tokens,
                    _ => (arm.settings.top_k * arm.spec.max_tokens).min(arm.settings.budget_tokens),
                };
                estimate.screen = Some((fixed, tokens * 4));
            }
        }
        Run {
            source: source.spec.clone(),
            opts,
            protocol: salt[..16].to_string(),
            salt,
            stages,
            outputs,
            want: usize::from(self.kind == Kind::Evidence),
            store: self.env.store.clone(),
            retry_failed: rt.retry_failed(),
            plan: estimate,
            window: crate::engine::window_docs(crate::engine::endpoint_in_flight(Some(rt))),
            records: None,
            publish: None,
        }
    }
}

impl TableFunctionImpl for AskFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let usage = match self.kind {
            Kind::Compare => COMPARE_USAGE,
            _ => USAGE,
        };
        let vals = literal_args(&args)?;
        let least = if self.kind == Kind::Compare { 3 } else { 2 };
        if vals.len() < least || vals.len() > 4 {
            return plan_err!("{usage}: takes {least} to 4 arguments, got {}", vals.len());
        }
        let source = source_arg(&vals, usage)?;
        let Some(question) =
            str_arg(&vals, 1, usage, "the question")?.filter(|q| !q.trim().is_empty())
        else {
            return plan_err!("{usage}: the question is missing");
        };
        let third = str_arg(&vals, 2, usage, "the recipe")?.unwrap_or_default();
        // ask(src, q, 'reader=...') keeps its options in the third place.
        let (named, options) =
            if self.kind != Kind::Compare && vals.len() == 3 && third.contains('=') {
                (String::new(), third)
            } else {
                (
                    third,
                    str_arg(&vals, 3, usage, "options")?.unwrap_or_default(),
                )
            };
        let named_text = named.clone();
        let mut allowed = CORPUS_OPTIONS.to_vec();
        allowed.extend(recipes::SETTINGS);
        allowed.extend(["model", "max_output", "recipes", "engine"]);
        allowed.extend(read::embed::OPTIONS);
        let raw = parse_options(&options, usage, &allowed)?;
        let opts = corpus_options(&raw, usage)?;
        let Some(rt) = args.session().config().get_extension::<Runtime>() else {
            return plan_err!("{usage}: needs a quarry session with a model layer");
        };
        let model = raw
            .get("model")
            .cloned()
            .unwrap_or_else(|| rt.config().default_model());
        let asked_out =
            match raw.get("max_output") {
                None => None,
                Some(v) => Some(v.parse().or_else(|_| {
                    plan_err!("{usage}: max_output must be a whole number, got '{v}'")
                })?),
            };
        let max_output = rt.resolve_max_output(&model, asked_out);
        let info_m = rt.config().registry.info(&model);
        // The window less the answer and about 600 tokens of instructions.
        let budget = (info_m.context_window as usize)
            .saturating_sub(max_output as usize)
            .saturating_sub(600)
            .max(1);
        let embedder = match Embedder::from_options(&raw) {
            Ok(e) => e,
            Err(e) => return plan_err!("{usage}: {e}"),
        };
        let book = match recipes::load(raw.get("recipes").map(String::as_str)) {
            Ok(b) => b,
            Err(e) => return plan_err!("{usage}: {e}"),
        };
        let find = |name: &str| -> Result<Recipe> {
            match book.iter().find(|r| r.name == name) {
                Some(r) => {
                    let mut r = r.clone();
                    for k in recipes::SETTINGS {
                        if let Some(v) = raw.get(k) {
                            if let Err(e) = r.set(k, v) {
                                return plan_err!("{usage}: {e}");
                            }
                        }
                    }
                    Ok(r)
                }
                None => plan_err!(
                    "{usage}: no recipe '{name}'; recipes: {}{}",
                    book.iter()
                        .map(|r| r.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    if self.kind == Kind::Compare {
                        ""
                    } else {
                        ", auto (or options alone: 'reader=..., segment=...')"
                    }
                ),
            }
        };
        let named: Vec<String> = named
            .split(',')
            .map(|n| n.trim().to_ascii_lowercase())
            .filter(|n| !n.is_empty())
            .collect();
        let mut auto = None;
        let arms: Vec<Arm> = if self.kind == Kind::Compare {
            if named.is_empty() {
                return plan_err!(
                    "{usage}: name the recipes to compare, e.g. 'fast,needle,thorough'"
                );
            }
            let mut arms = Vec::new();
            for (i, n) in named.iter().enumerate() {
                if n == "auto" {
                    return plan_err!("{usage}: auto picks a recipe per document, so it cannot be compared; name fixed recipes");
                }
                if named[..i].contains(n) {
                    return plan_err!("{usage}: recipe '{n}' is named twice");
                }
                arms.push(Arm::new(&find(n)?, Some(n.clone()), &opts, budget, usage)?);
            }
            arms
        } else {
            match named.as_slice() {
                [] => {
                    let mut r = Recipe::default();
                    for k in recipes::SETTINGS {
                        if let Some(v) = raw.get(k) {
                            if let Err(e) = r.set(k, v) {
                                return plan_err!("{usage}: {e}");
                            }
                        }
                    }
                    r.name = "(options)".into();
                    vec![Arm::new(&r, None, &opts, budget, usage)?]
                }
                [n] if n == "auto" => {
                    if !source.is_single() {
                        return plan_err!(
                            "{usage}: auto picks a recipe for one document; a folder, prefix or glob needs one fixed recipe (recipes() lists them)"
                        );
                    }
                    auto = Some(recipes::AUTO_TOKENS.min(budget));
                    vec![
                        Arm::new(&find("fast")?, Some("auto:fast".into()), &opts, budget, usage)?,
                        Arm::new(
                            &find("thorough")?,
                            Some("auto:thorough".into()),
                            &opts,
                            budget,
                            usage,
                        )?,
                    ]
                }
                [n] => vec![Arm::new(&find(n)?, Some(n.clone()), &opts, budget, usage)?],
                _ => {
                    return plan_err!(
                        "{usage}: ask reads with one recipe; compare(src, question, '{}') reads with several",
                        named.join(",")
                    )
                }
            }
        };
        let plan = Plan {
            question,
            arms,
            auto,
            embedder,
            temperature: rt.config().model.temperature,
            model,
            max_output,
        };
        let preset = super::preset_of(&args).filter(|p| p.serves(&source, &opts));
        // A corpus run with a store goes window by window through the run
        // engine (rows kept per document, a run started again restores
        // them, ceilings checked up front); inside a window, the window's
        // documents are read here.
        let engine = match raw.get("engine").map(String::as_str) {
            None | Some("true") => true,
            Some("false") => false,
            Some(v) => return plan_err!("{usage}: engine must be true or false, got '{v}'"),
        };
        if engine && preset.is_none() && self.env.store.is_some() {
            if let Some(state) = args.session().as_any().downcast_ref::<SessionState>() {
                // Each window runs this call again, read directly.
                let options = match options.trim() {
                    "" => "engine=false".to_string(),
                    o => format!("{o}, engine=false"),
                };
                let args_sql = [&source.spec, &plan.question, &named_text, &options]
                    .map(|a| format!("'{}'", crate::review::sql_text(a)))
                    .join(", ");
                let run = self.engine_run(&args_sql, &source, opts, &plan, &rt);
                return crate::engine::run_table(state, run).map_err(|e| e.context(usage));
            }
        }
        let schema = match self.kind {
            Kind::Answers => answers_schema(),
            Kind::Evidence => evidence_schema(),
            Kind::Compare => compare_schema(),
        };
        let part = AskPartition {
            preset,
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
    /// The documents of the window this call runs in, if it is one's.
    preset: Option<Arc<crate::engine::Preset>>,
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
            .field("arms", &self.plan.arms.len())
            .finish()
    }
}

/// The model layer as a reader asks it, counting what the document cost.
struct DocAsk {
    rt: Arc<Runtime>,
    plan: Arc<Plan>,
    reader: &'static str,
    document_id: Option<String>,
    spent: Mutex<(i64, i64, Option<f64>)>,
    /// Requests that failed, and whether a run ceiling stopped one.
    failed: Mutex<(usize, bool)>,
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
            label: Some(format!("{}: {label}", self.reader)),
            endpoint: None,
            resume: false,
        };
        let out = self.rt.call(req, &ctx).await;
        if let Some(e) = &out.error {
            let mut f = self.failed.lock().expect("failed");
            f.0 += 1;
            f.1 |= matches!(e, ModelError::CallCap(_) | ModelError::CostCap(_));
        }
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

    async fn embed(&self, texts: &[String], query: bool) -> Result<Vec<Vec<f32>>, String> {
        self.plan.embedder.embed(&self.rt, texts, query).await
    }
}

/// One document read by each arm the run uses: for each, its answer row
/// and its evidence rows.
async fn answer_document(
    doc: Document,
    plan: Arc<Plan>,
    rt: Arc<Runtime>,
    kind: Kind,
) -> Vec<(AnswerRow, Vec<EvidenceRow>)> {
    let arms: Vec<&Arm> = match (kind, plan.auto) {
        (Kind::Compare, _) => plan.arms.iter().collect(),
        (_, Some(limit)) => {
            let tokens = plan.arms[0].spec.tokenizer.count(&doc.text);
            vec![&plan.arms[usize::from(tokens > limit)]]
        }
        _ => vec![&plan.arms[0]],
    };
    let doc = &doc;
    futures::future::join_all(
        arms.into_iter()
            .map(|arm| read_with(doc, arm, plan.clone(), rt.clone())),
    )
    .await
}

/// One document read with one arm.
async fn read_with(
    doc: &Document,
    arm: &Arm,
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
        recipe: arm.recipe.clone(),
        reader: arm.reader.to_string(),
        signature: arm.signature.to_string(),
        settings: arm.changed.clone(),
        segmentation: None,
        answer: None,
        partial: true,
        not_found: false,
        status: "failed",
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
    let ask = DocAsk {
        rt: rt.clone(),
        plan: plan.clone(),
        reader: arm.reader,
        document_id: doc.document_id.clone(),
        spent: Mutex::new((0, 0, Some(0.0))),
        failed: Mutex::new((0, false)),
    };
    let seg = segment_with(
        &SegDoc {
            text: &doc.text,
            blocks: &doc.blocks,
        },
        &arm.spec,
        &ask,
        arm.settings.budget_tokens,
    )
    .await;
    row.segmentation = Some(seg.method.clone());
    if seg.method.contains("->") && seg.notes.is_empty() {
        row.notes.push(format!("segment_fallback: {}", seg.method));
    }
    row.notes.extend(seg.notes.iter().cloned());
    let passages: Vec<Passage> = seg
        .chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let text = c.text(&doc.text);
            Passage {
                chunk_id: i as i64,
                text: if arm.remove_numbers {
                    text.chars().filter(|c| !c.is_ascii_digit()).collect()
                } else {
                    text.to_string()
                },
                tokens: c.tokens,
                page: c.page_start,
                section: c.section.clone(),
            }
        })
        .collect();
    row.chunks = passages.len() as i64;
    let a = read::read(arm.reader, &plan.question, &passages, &arm.settings, &ask).await;
    let (ti, to, usd) = *ask.spent.lock().expect("spent");
    row.answer = a.answer;
    row.not_found = a.not_found;
    row.notes.extend(a.notes);
    row.partial = a.partial || !row.notes.is_empty();
    row.chunks_used = a.chunks_used;
    row.calls = (a.calls + seg.calls) as i64;
    row.tokens_in = ti;
    row.tokens_out = to;
    row.usd = usd;
    row.seconds = started.elapsed().as_secs_f64();
    let (failed, capped) = *ask.failed.lock().expect("failed");
    row.status = match (failed, capped) {
        (_, true) => "skipped",
        (0, _) => "ok",
        _ => "failed",
    };
    let ev = a
        .evidence
        .into_iter()
        .map(|e| EvidenceRow {
            run_id: run_id.clone(),
            document_id: doc.document_id.clone(),
            source: doc.entry.source.clone(),
            recipe: arm.recipe.clone(),
            e,
        })
        .collect();
    (row, ev)
}

/// Documents read at once: at least 8, and four times the requests the
/// endpoint takes in flight. A document's stage may send one request (a
/// reduce), and rows leave in document order, so a finished document holds
/// its place until those before it finish; with fewer the endpoint idles
/// between stages. Its limiter, not the reading, bounds what is in flight.
fn documents_at_once(rt: &Runtime) -> usize {
    let c = rt.config();
    c.endpoints
        .get(&c.default_endpoint_name())
        .map_or(8, |e| 4 * e.max_in_flight)
        .clamp(8, 1024)
}

impl PartitionStream for AskPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let docs = match &self.preset {
            Some(p) => {
                let docs: Vec<crate::error::Result<Document>> =
                    p.docs.iter().map(|d| Ok(Document::clone(d))).collect();
                futures::stream::iter(docs).boxed()
            }
            None => crate::corpus::documents(
                self.source.clone(),
                self.env.store.clone(),
                self.opts.clone(),
                false,
            ),
        };
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

                    Ok::<_, datafusion::error::DataFusionError>(
                        answer_document(d, plan, rt, kind).await,
                    )
                }
            })
            .buffered(documents_at_once(&self.rt))
            .map({
                let rt = self.rt.clone();
                let flushing = Arc::new(std::sync::atomic::AtomicBool::new(false));
                move |r| {
                    let read = r?;
                    // The trace and cache are written on a task of their
                    // own, one flush at a time: awaited here, a flush
                    // waiting for the cache's lock would stop this stream
                    // from polling the document that holds it (a cache
                    // read), and neither would go on.
                    if !flushing.swap(true, std::sync::atomic::Ordering::SeqCst) {
                        let (rt, flushing) = (rt.clone(), flushing.clone());
                        tokio::spawn(async move {
                            if let Err(e) = rt.flush().await {
                                eprintln!("warning: writing the trace: {e}");
                            }
                            flushing.store(false, std::sync::atomic::Ordering::SeqCst);
                        });
                    }
                    {
                        match kind {
                            Kind::Answers | Kind::Compare => {
                                let rows: Vec<&AnswerRow> = read.iter().map(|(r, _)| r).collect();
                                super::serde_batch(&schema, &rows)
                            }
                            Kind::Evidence => {
                                let ev: Vec<&EvidenceRow> =
                                    read.iter().flat_map(|(_, e)| e).collect();
                                super::serde_batch(&schema, &ev)
                            }
                        }
                    }
                }
            })
            // Every document read: what is left is written before the
            // stream ends.
            .chain(
                futures::stream::once({
                    let rt = self.rt.clone();
                    async move {
                        if let Err(e) = rt.flush().await {
                            eprintln!("warning: writing the trace: {e}");
                        }
                        None
                    }
                })
                .filter_map(futures::future::ready),
            )
            .boxed();
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream))
    }
}

/// `readers()`: name, signature, cost in requests, method.
#[derive(Debug)]
pub struct ReadersFn;

impl TableFunctionImpl for ReadersFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let r = read::READERS;
        super::registry_table(
            &args,
            "readers",
            vec![
                ("name", super::text_column(r, |r| r.name)),
                ("signature", super::text_column(r, |r| r.signature)),
                ("cost_calls", super::text_column(r, |r| r.cost)),
                ("method", super::text_column(r, |r| r.method)),
            ],
        )
    }
}

/// `recipes([file])`: the built-in recipes, then a recipe file's: name,
/// segmenter, reader, signature, the settings each changes from the
/// defaults, when to use it, where it comes from.
#[derive(Debug)]
pub struct RecipesFn;

impl TableFunctionImpl for RecipesFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        const U: &str = "recipes(['FILE.toml'])";
        let vals = literal_args(&args)?;
        if vals.len() > 1 {
            return plan_err!("{U}: takes no argument or a recipe file");
        }
        let file = str_arg(&vals, 0, U, "the recipe file")?;
        let book = match recipes::load(file.as_deref()) {
            Ok(b) => b,
            Err(e) => return plan_err!("{U}: {e}"),
        };
        let sig: Vec<String> = book
            .iter()
            .map(|r| {
                read::reader(&r.reader)
                    .map_or("", |i| i.signature)
                    .to_string()
            })
            .collect();
        let changed: Vec<String> = book.iter().map(Recipe::changed).collect();
        let b = &book;
        let text = |v: &[String]| super::text_column(v, |s| s);
        super::one_batch_table(vec![
            ("name", super::text_column(b, |r| &r.name)),
            ("segment", super::text_column(b, |r| &r.segment)),
            ("reader", super::text_column(b, |r| &r.reader)),
            ("signature", text(&sig)),
            ("settings", text(&changed)),
            ("use", super::text_column(b, |r| &r.use_for)),
            ("origin", super::text_column(b, |r| &r.origin)),
        ])
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
