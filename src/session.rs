//! Builds the DataFusion session: configuration, quarry's functions (pure
//! ones from `quarry-udfs`, corpus table functions from `functions/`, the
//! model functions), the store and the tables kept in it.

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::catalog::memory::PartitionData;
use datafusion::datasource::MemTable;
use datafusion::execution::context::SessionContext;
use datafusion::logical_expr::async_udf::AsyncScalarUDF;
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionConfig;

use crate::error::Result;
use crate::functions::extract::{ExtractFn, Kind as ExtractKind};
use crate::functions::llm::Llm;
use crate::functions::model_tables::{CacheStatsFn, ModelsFn};
use crate::functions::{
    blocks::Blocks, chunks::Chunks, documents::Documents, inventory::Inventory, segment::Segment,
    Env,
};
use crate::model::replay::ReplayClient;
use crate::model::runtime::RuntimeOptions;
use crate::model::trace::{self, Sink, CALLS_TABLE};
use crate::model::{Config, ModelClient, Runtime};
use crate::store::{results, Store};
use crate::tables;

/// How a session is set up.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The store location (a folder or `s3://bucket/prefix/`); `None` keeps
    /// nothing between runs (no ingest cache, no response cache, the trace
    /// in memory).
    pub store: Option<String>,
    /// A `quarry.toml`; `None` reads `$QUARRY_CONFIG` or `./quarry.toml`.
    pub config: Option<PathBuf>,
    /// Answer model calls from the `calls` recorded in this store instead
    /// of sending them.
    pub replay: Option<String>,
    /// With `replay`: a request with no recording is a failed call (NULL)
    /// instead of an error that stops the query.
    pub replay_partial: bool,
    /// A client for every endpoint (a mock, or a user's own transport).
    pub client: Option<Arc<dyn ModelClient>>,
    /// Show model-call progress on stderr (for an interactive terminal).
    pub progress: bool,
    /// Send screening and extraction requests that failed in an earlier run
    /// again (by default a run started again restores their failures).
    pub retry_failed: bool,
}

/// A session with every quarry function registered.
pub fn session(settings: &Settings) -> Result<SessionContext> {
    crate::process::small_pages();
    let mut cfg = SessionConfig::new().with_information_schema(true);
    let config = Config::load(settings.config.as_deref())?;
    // Files written from Utf8View tables must merge with later Utf8 ones.
    cfg.options_mut().execution.parquet.skip_arrow_metadata = true;
    let store = settings.store.as_deref().map(Store::open).transpose()?;
    // The model layer.
    let client: Option<Arc<dyn ModelClient>> = match &settings.replay {
        Some(loc) => Some(Arc::new(ReplayClient::new(Store::open(loc)?))),
        None => settings.client.clone(),
    };
    let memory = PartitionData::default();
    let runtime = Arc::new(Runtime::new(
        config,
        store.clone(),
        Sink::Memory(memory.clone()),
        RuntimeOptions {
            client,
            replay_strict: settings.replay.is_some() && !settings.replay_partial,
            no_cache: false,
            progress: settings.progress,
            retry_failed: settings.retry_failed,
        },
    )?);
    cfg = cfg.with_extension(runtime.clone());
    let ctx = SessionContext::new_with_config(cfg);
    for f in quarry_udfs::scalar_functions() {
        ctx.register_udf(f.as_ref().clone());
    }
    for f in quarry_udfs::aggregate_functions() {
        ctx.register_udaf(f.as_ref().clone());
    }
    ctx.register_udf(ScalarUDF::from(Segment::default()));
    let env = Env {
        store: store.clone(),
    };
    ctx.register_udtf("documents", Arc::new(Documents { env: env.clone() }));
    ctx.register_udtf("inventory", Arc::new(Inventory { env: env.clone() }));
    ctx.register_udtf("blocks", Arc::new(Blocks { env: env.clone() }));
    ctx.register_udtf("chunks", Arc::new(Chunks { env: env.clone() }));
    ctx.register_udtf("records", Arc::new(crate::functions::records::Records));
    for (name, kind) in [
        ("ask", crate::functions::ask::Kind::Answers),
        ("ask_evidence", crate::functions::ask::Kind::Evidence),
        ("compare", crate::functions::ask::Kind::Compare),
    ] {
        ctx.register_udtf(
            name,
            Arc::new(crate::functions::ask::AskFn {
                kind,
                env: env.clone(),
            }),
        );
    }
    ctx.register_udtf("readers", Arc::new(crate::functions::ask::ReadersFn));
    ctx.register_udtf("recipes", Arc::new(crate::functions::ask::RecipesFn));
    ctx.register_udtf("catalog", Arc::new(crate::functions::catalog::CatalogFn));
    ctx.register_udtf(
        "segmenters",
        Arc::new(crate::functions::chunks::SegmentersFn),
    );
    ctx.register_udf(ScalarUDF::from(crate::functions::ask::IsNotFound::default()));
    ctx.register_udtf(
        "reference_sample",
        Arc::new(crate::functions::calibrate::ReferenceSample),
    );
    ctx.register_udtf(
        "calibrate",
        Arc::new(crate::functions::calibrate::Calibrate),
    );
    ctx.register_udtf(
        "flow",
        Arc::new(crate::functions::flow::Flow { sql: false }),
    );
    ctx.register_udtf(
        "flow_sql",
        Arc::new(crate::functions::flow::Flow { sql: true }),
    );
    ctx.register_udtf(
        "cohort_tables",
        Arc::new(crate::functions::cohort::CohortTables { env: env.clone() }),
    );

    for f in model_udfs(&runtime) {
        ctx.register_udf(f);
    }
    ctx.register_udtf("embedders", Arc::new(crate::functions::embed::EmbeddersFn));
    ctx.register_udtf(
        "cache_stats",
        Arc::new(CacheStatsFn {
            runtime: runtime.clone(),
        }),
    );
    ctx.register_udtf("models", Arc::new(ModelsFn { runtime }));
    ctx.register_udtf(
        "reply_problems",
        Arc::new(crate::functions::model_tables::ReplyProblemsFn),
    );
    for (name, kind) in [
        ("extract", ExtractKind::Extract),
        ("evidence", ExtractKind::Evidence),
        ("extract_sql", ExtractKind::Sql),
        ("screen", ExtractKind::Screen),
        ("screen_sql", ExtractKind::ScreenSql),
    ] {
        ctx.register_udtf(
            name,
            Arc::new(ExtractFn {
                kind,
                env: env.clone(),
            }),
        );
    }

    ctx.register_udf(ScalarUDF::from(
        crate::functions::claims::ClaimDrafts::default(),
    ));
    ctx.register_udf(ScalarUDF::from(
        crate::functions::study_claims::StudyClaimsRead::default(),
    ));
    for entry in [false, true] {
        ctx.register_udf(ScalarUDF::from(
            crate::functions::study_claims::OutlineFn::new(entry),
        ));
    }
    for kind in [
        crate::functions::study_claims::Cite::Unknown,
        crate::functions::study_claims::Cite::Numbers,
        crate::functions::study_claims::Cite::Render,
        crate::functions::study_claims::Cite::Refusal,
    ] {
        ctx.register_udf(ScalarUDF::from(
            crate::functions::study_claims::CiteFn::new(kind),
        ));
    }
    for (name, kind) in [
        ("study_claims", crate::functions::study_claims::Kind::Claims),
        (
            "study_claim_support",
            crate::functions::study_claims::Kind::Support,
        ),
        (
            "study_claims_dropped",
            crate::functions::study_claims::Kind::Dropped,
        ),
        (
            "study_claims_sql",
            crate::functions::study_claims::Kind::Sql,
        ),
        ("gaps", crate::functions::study_claims::Kind::Gaps),
        ("synthesise", crate::functions::study_claims::Kind::Sections),
        ("synthesis", crate::functions::study_claims::Kind::Review),
        (
            "synthesis_citations",
            crate::functions::study_claims::Kind::Citations,
        ),
        (
            "synthesise_sql",
            crate::functions::study_claims::Kind::SynthesiseSql,
        ),
        (
            "synthesis_coherence",
            crate::functions::study_claims::Kind::Coherence,
        ),
        (
            "synthesis_outline",
            crate::functions::study_claims::Kind::Outline,
        ),
        (
            "synthesis_claims",
            crate::functions::study_claims::Kind::SectionClaims,
        ),
    ] {
        ctx.register_udtf(
            name,
            Arc::new(crate::functions::study_claims::StudyClaimsFn {
                kind,
                store: store.clone(),
            }),
        );
    }
    for (name, kind) in [
        ("claims", crate::functions::claims::Kind::Claims),
        ("rejections", crate::functions::claims::Kind::Rejections),
        ("claims_sql", crate::functions::claims::Kind::Sql),
    ] {
        ctx.register_udtf(
            name,
            Arc::new(crate::functions::claims::ClaimsFn {
                kind,
                env: env.clone(),
            }),
        );
    }
    crate::functions::claims::register(&ctx, store.as_ref())?;

    // The store's tables, by name.
    match &store {
        None => {
            let t = MemTable::try_new(trace::schema(), vec![vec![]])?;
            let mut t = t;
            t.batches = vec![memory];
            ctx.register_table("calls", Arc::new(t))?;
        }
        Some(s) => {
            ctx.register_table(
                "calls",
                Arc::new(crate::store::delta::DeltaView::new(
                    crate::store::delta::Delta::new(s, CALLS_TABLE, "the store's calls table")?,
                    None,
                    trace::schema(),
                )),
            )?;
            // Screening and extraction results, kept window by window as
            // runs complete.
            for (name, schema) in [
                ("evidence", tables::EVIDENCE.clone()),
                ("screening", tables::SCREENING.clone()),
                ("answers", crate::functions::ask::answers_schema()),
                ("answer_evidence", crate::functions::ask::evidence_schema()),
            ] {
                ctx.register_table(name, Arc::new(results::view(s, name, "", schema)?))?;
            }
            crate::functions::study_claims::register(&ctx, s)?;
            // Tables clients saved (`CREATE TABLE ... AS` through `quarry
            // serve --allow-writes`).
            for (name, schema) in saved_tables_of(s) {
                if !ctx.table_exist(name.as_str())? {
                    ctx.register_table(
                        name.as_str(),
                        Arc::new(crate::store::saved::view(s, &name, schema)?),
                    )?;
                }
            }
            if let Some((protocol, schema)) = latest_extraction_of(s) {
                ctx.register_table(
                    "extraction",
                    Arc::new(results::view(s, "extraction", &protocol, schema)?),
                )?;
            }
        }
    }
    Ok(ctx)
}

/// The scalar functions that call a model (`llm`, `llm_json`, `llm_detail`,
/// `llm_json_detail`, `embed`), each sending through `runtime`.
pub(crate) fn model_udfs(runtime: &Arc<Runtime>) -> Vec<ScalarUDF> {
    let mut fs: Vec<ScalarUDF> = [(false, false), (true, false), (false, true), (true, true)]
        .into_iter()
        .map(|(json, detail)| {
            AsyncScalarUDF::new(Arc::new(Llm::new(runtime.clone(), json, detail))).into_scalar_udf()
        })
        .collect();
    fs.push(
        AsyncScalarUDF::new(Arc::new(crate::functions::embed::Embed::new(
            runtime.clone(),
        )))
        .into_scalar_udf(),
    );
    fs
}

/// `read` run over `store` on a thread of its own, with its own runtime and
/// connection, since a session is built outside any async context; the
/// error when the runtime, the store or `read` fails.
fn read_store<T, F, Fut>(store: &Store, read: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(Store) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<T>>,
{
    let location = store.location.clone();
    std::thread::spawn(move || -> Result<T> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| crate::error::QuarryError::Invalid(e.to_string()))?;
        let store = Store::open(&location)?;
        rt.block_on(read(store))
    })
    .join()
    .unwrap_or_else(|_| {
        Err(crate::error::QuarryError::Invalid(
            "reading the store stopped unexpectedly".into(),
        ))
    })
}

/// The store's latest extraction, if it has one it can read.
fn latest_extraction_of(
    store: &Store,
) -> Option<(String, datafusion::arrow::datatypes::SchemaRef)> {
    read_store(store, |s| async move {
        Ok(crate::engine::latest_extraction(&s).await)
    })
    .ok()
    .flatten()
}

/// The store's saved tables; none, with a warning, when the store cannot
/// list them.
fn saved_tables_of(store: &Store) -> Vec<(String, datafusion::arrow::datatypes::SchemaRef)> {
    read_store(
        store,
        |s| async move { crate::store::saved::list(&s).await },
    )
    .unwrap_or_else(|e| {
        eprintln!("warning: the store's saved tables could not be listed: {e}");
        Vec::new()
    })
}

/// The model layer of a session made by [`session`].
pub fn runtime(ctx: &SessionContext) -> Option<Arc<Runtime>> {
    ctx.state().config().get_extension::<Runtime>()
}

/// Starts a new statement: requests that failed in the last one may be
/// sent again (within a statement a request is sent once).
pub fn begin_statement(ctx: &SessionContext) {
    if let Some(rt) = runtime(ctx) {
        rt.begin_statement();
    }
}
