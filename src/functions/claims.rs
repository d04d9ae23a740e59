//! `claims(src, spec)`, `rejections(src, spec)`, `claims_sql(src, spec)`:
//! `sql/claims.sql` rendered with a claims spec and run window by window
//! like an extraction; with a store, each window's documents' rows replace
//! their earlier ones in the store's claims table (one commit, a new
//! revision). `claim_drafts(...)` reads one reply's drafts (the step of the
//! SQL that checks and locates them); `changes_since(revision [,
//! max_revisions])` and the store tables `claims` and `rejections` read
//! the store.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::datasource::{provider_as_source, MemTable};
use datafusion::execution::SessionState;
use datafusion::logical_expr::{
    col, ColumnarValue, LogicalPlanBuilder, ScalarFunctionArgs, ScalarUDFImpl, Signature,
    TypeSignature, Volatility,
};

use super::{int_arg, literal_args, str_arg, Env};
use crate::engine::{
    endpoint_in_flight, run_salt, run_table, window_docs, Output, Plan, Publish, Run,
};
use crate::ingest::Document;
use crate::model::Runtime;
use crate::review::claims::{read_drafts, render_claims, Chunk, ClaimsSpec, Rules};
use crate::review::split_stages;
use crate::store::claims::{changes_batch, changes_schema, set_revision, ClaimStore};
use crate::store::delta::DeltaView;
use crate::store::Store;
use crate::tables::{drafted_fields, CLAIM_COLUMNS, CLAIM_ROWS, REJECTION_COLUMNS};
use quarry_udfs::util::string_array;

/// `claim_drafts(reply, ok, error, chunk_text, chunk_start, document_id,
/// rules)`: one reply's drafts, read (see `review::claims::read_drafts`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ClaimDrafts {
    signature: Signature,
}

impl Default for ClaimDrafts {
    fn default() -> Self {
        Self {
            signature: Signature::one_of(vec![TypeSignature::Any(7)], Volatility::Immutable),
        }
    }
}

const DRAFTS_USAGE: &str =
    "claim_drafts(reply, ok, error, chunk_text, chunk_start, document_id, rules)";

fn drafts_type() -> DataType {
    DataType::List(Arc::new(Field::new(
        "item",
        DataType::Struct(drafted_fields()),
        true,
    )))
}

impl ScalarUDFImpl for ClaimDrafts {
    fn name(&self) -> &str {
        "claim_drafts"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(drafts_type())
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let ColumnarValue::Scalar(rules) = &args.args[6] else {
            return plan_err!("{DRAFTS_USAGE}: rules must be a constant");
        };
        let rules: Rules = match rules.cast_to(&DataType::Utf8)? {
            ScalarValue::Utf8(Some(r)) => serde_json::from_str(&r)
                .or_else(|e| plan_err!("{DRAFTS_USAGE}: rules are not readable: {e}"))?,
            _ => return plan_err!("{DRAFTS_USAGE}: rules must be text"),
        };
        let reply_schema = serde_json::json!({"type": "object",
            "properties": {"claims": {"type": "array"}},
            "required": ["claims"], "additionalProperties": false});
        let n = args.number_rows;
        let arr = |i: usize| args.args[i].to_array(n);
        let (reply, ok, error, text, start, doc) =
            (arr(0)?, arr(1)?, arr(2)?, arr(3)?, arr(4)?, arr(5)?);
        let reply = string_array(&reply, "claim_drafts", "reply")?;
        let error = string_array(&error, "claim_drafts", "error")?;
        let text = string_array(&text, "claim_drafts", "chunk_text")?;
        let doc = string_array(&doc, "claim_drafts", "document_id")?;
        let ok = datafusion::arrow::compute::cast(&ok, &DataType::Boolean)?;
        let ok = ok.as_boolean();
        let start = datafusion::arrow::compute::cast(&start, &DataType::Int64)?;
        let start = start.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
        let mut all = Vec::new();
        let mut offsets = vec![0i32];
        for r in 0..n {
            if text.is_valid(r) && doc.is_valid(r) {
                let drafts = read_drafts(
                    reply.is_valid(r).then(|| reply.value(r)),
                    ok.is_valid(r) && ok.value(r),
                    error.is_valid(r).then(|| error.value(r)),
                    Chunk {
                        document_id: doc.value(r),
                        text: text.value(r),
                        char_start: if start.is_valid(r) { start.value(r) } else { 0 },
                    },
                    &rules,
                    &reply_schema,
                );
                all.extend(drafts);
            }
            offsets.push(
                i32::try_from(all.len())
                    .or_else(|_| exec_err!("{DRAFTS_USAGE}: too many drafts"))?,
            );
        }
        super::struct_lists(&all, offsets, drafted_fields())
    }
}

/// Which function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `claims(src, spec)`.
    Claims,
    /// `rejections(src, spec)`.
    Rejections,
    /// `claims_sql(src, spec)`: the rendered SQL, one row.
    Sql,
}

/// The table function.
#[derive(Debug)]
pub struct ClaimsFn {
    /// Which output.
    pub kind: Kind,
    /// The store.
    pub env: Env,
}

impl ClaimsFn {
    fn usage(&self) -> &'static str {
        match self.kind {
            Kind::Claims => "claims(src, spec)",
            Kind::Rejections => "rejections(src, spec)",
            Kind::Sql => "claims_sql(src, spec)",
        }
    }
}

impl TableFunctionImpl for ClaimsFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let usage = self.usage();
        let vals = literal_args(&args)?;
        if vals.len() != 2 {
            return plan_err!(
                "{usage}: takes a source and a claims spec file, got {} argument(s)",
                vals.len()
            );
        }
        let Some(src) = str_arg(&vals, 0, usage, "the source")? else {
            return plan_err!("{usage}: the source is missing");
        };
        let Some(path) = str_arg(&vals, 1, usage, "the claims spec")? else {
            return plan_err!("{usage}: the claims spec is missing");
        };
        let spec = ClaimsSpec::load(Path::new(&path)).or_else(|e| plan_err!("{usage}: {e}"))?;
        let Some(state) = args.session().as_any().downcast_ref::<SessionState>() else {
            return plan_err!("{usage}: needs a quarry session");
        };
        let runtime = state.config().get_extension::<Runtime>();
        let model = spec
            .model
            .clone()
            .or_else(|| runtime.as_ref().map(|rt| rt.config().default_model()))
            .unwrap_or_default();
        let sql = render_claims(&src, &spec, &model);
        if self.kind == Kind::Sql {
            return super::sql_table(sql);
        }
        let run = self.run(&src, &spec, sql, &model, runtime.as_deref())?;
        let table = run_table(state, run).map_err(|e| e.context(usage))?;
        let columns = if self.kind == Kind::Claims {
            CLAIM_COLUMNS
        } else {
            REJECTION_COLUMNS
        };
        let is_claim = col("code").is_null();
        let plan = LogicalPlanBuilder::scan("claim_rows", provider_as_source(table), None)?
            .filter(if self.kind == Kind::Claims {
                is_claim
            } else {
                col("code").is_not_null()
            })?
            .project(columns.iter().map(|c| col(*c)))?
            .build()?;
        Ok(Arc::new(datafusion::datasource::ViewTable::new(plan, None)))
    }
}

impl ClaimsFn {
    fn run(
        &self,
        src: &str,
        spec: &ClaimsSpec,
        sql: String,
        model: &str,
        rt: Option<&Runtime>,
    ) -> Result<Run> {
        let stages = split_stages(&sql);
        let outputs = vec![Output {
            table: "claims",
            sql: stages.output.clone(),
            schema: Some(CLAIM_ROWS.clone()),
        }];
        let salt = run_salt(src, &stages, &outputs, "", rt);
        let extract = crate::segment::Method::parse(&spec.segment.method).map(|m| {
            let mut s = crate::segment::SegmentSpec::new(m, spec.segment.max_tokens as usize);
            s.overlap_tokens = spec.segment.overlap_tokens as usize;
            (
                s,
                spec.prompt().len() + spec.reply_schema().to_string().len(),
            )
        });
        let in_flight = endpoint_in_flight(rt);
        let publish: Option<Arc<dyn Publish>> = match &self.env.store {
            Some(store) => Some(Arc::new(StoreClaims {
                store: ClaimStore::new(store).map_err(datafusion::error::DataFusionError::from)?,
                spec: spec.name.clone(),
            })),
            None => None,
        };
        Ok(Run {
            plan: Plan {
                screen: None,
                extract,
                model: model.to_string(),
                max_output: spec.max_output.map(|m| m as u32),
            },
            window: window_docs(in_flight),
            source: src.to_string(),
            opts: super::run_options(&spec.ingest)?,
            protocol: format!("claims_{}", spec.short_hash()),
            salt,
            stages,
            outputs,
            want: 0,
            store: self.env.store.clone(),
            retry_failed: rt.is_some_and(Runtime::retry_failed),
            records: None,
            publish,
        })
    }
}

/// Puts a window's claims rows into the store's claims table and gives
/// them their revision.
#[derive(Debug)]
struct StoreClaims {
    store: ClaimStore,
    /// The spec's name: the rows replaced are this spec's.
    spec: String,
}

#[async_trait]
impl Publish for StoreClaims {
    async fn publish(
        &self,
        docs: &[Arc<Document>],
        rows: &mut [Option<RecordBatch>],
    ) -> crate::error::Result<()> {
        // The rows of each document read (a copy under another path is the
        // same document, read once: its rows are its first copy's).
        let given: Vec<(String, RecordBatch)> = docs
            .iter()
            .zip(rows.iter())
            .filter(|(d, _)| d.status == crate::ingest::Status::Ok)
            .filter_map(|(d, r)| Some((d.entry.source.clone(), r.clone()?)))
            .collect();
        if given.is_empty() {
            return Ok(());
        }
        let revisions = self.store.replace(&self.spec, given, &CLAIM_ROWS).await?;
        for (d, r) in docs.iter().zip(rows.iter_mut()) {
            if let (Some(b), Some(rev)) = (r.as_mut(), revisions.get(&d.entry.source)) {
                *b = set_revision(b, *rev)?;
            }
        }
        Ok(())
    }

    /// A file taken out of the corpus: its claims and rejections are
    /// cleared in one commit (a revision whose change feed lists each of
    /// its claims as removed). Only paths under this run's source are
    /// looked at, so another corpus's claims under the same spec stay. A
    /// file still listed but unreadable now keeps its claims (the run
    /// failed it; the next run tries again).
    async fn finish(
        &self,
        source: &str,
        listed: &std::collections::HashSet<String>,
    ) -> crate::error::Result<()> {
        let gone: Vec<(String, RecordBatch)> = self
            .store
            .sources(&self.spec)
            .await?
            .into_iter()
            .filter(|p| crate::engine::under_source(source, p) && !listed.contains(p))
            .map(|p| (p, RecordBatch::new_empty(CLAIM_ROWS.clone())))
            .collect();
        if !gone.is_empty() {
            self.store.replace(&self.spec, gone, &CLAIM_ROWS).await?;
        }
        Ok(())
    }
}

/// The store's `claims` (`claims = true`) or `rejections`: the claims
/// table's current rows, read when a query runs (so a session sees commits
/// made after it began).
fn store_view(store: &Store, claims: bool) -> crate::error::Result<DeltaView> {
    let columns = if claims {
        CLAIM_COLUMNS
    } else {
        REJECTION_COLUMNS
    };
    let fields: Vec<Field> = columns
        .iter()
        .map(|c| CLAIM_ROWS.field_with_name(c).expect("column").clone())
        .collect();
    let keep = if claims {
        col("code").is_null()
    } else {
        col("code").is_not_null()
    };
    Ok(DeltaView::new(
        ClaimStore::new(store)?.delta().clone(),
        Some(keep),
        Arc::new(Schema::new(fields)),
    ))
}

/// `changes_since(revision [, max_revisions])`.
#[derive(Debug)]
pub struct ChangesSince {
    /// The store.
    pub store: Option<Store>,
}

impl TableFunctionImpl for ChangesSince {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let usage = "changes_since(revision [, max_revisions])";
        let vals = literal_args(&args)?;
        if vals.is_empty() || vals.len() > 2 {
            return plan_err!(
                "{usage}: takes the last revision seen (-1 for all) and optionally how many revisions to return, got {} argument(s)",
                vals.len()
            );
        }
        let revision = match vals[0].cast_to(&DataType::Int64)? {
            ScalarValue::Int64(Some(r)) if r >= -1 => r,
            other => {
                return plan_err!(
                    "{usage}: revision must be a whole number of -1 or more, got {other}"
                )
            }
        };
        let max = int_arg(&vals, 1, usage, "max_revisions")?;
        let Some(store) = &self.store else {
            return plan_err!(
                "{usage}: needs a store (the claims table lives in it); run without --no-store"
            );
        };
        let cs = ClaimStore::new(store).map_err(datafusion::error::DataFusionError::from)?;
        // Read now, on a thread of its own: planning is not async.
        let changes = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| crate::error::QuarryError::Invalid(e.to_string()))?;
            rt.block_on(cs.changes_since(revision, max))
        })
        .join()
        .map_err(|_| {
            datafusion::error::DataFusionError::Execution(format!(
                "{usage}: reading the change feed stopped"
            ))
        })?
        .map_err(datafusion::error::DataFusionError::from)?;
        let batch = changes_batch(&changes).map_err(datafusion::error::DataFusionError::from)?;
        Ok(Arc::new(MemTable::try_new(
            changes_schema(),
            vec![vec![batch]],
        )?))
    }
}

/// Registers `claims`, `rejections` (the store's tables) and
/// `changes_since` in a session.
pub fn register(
    ctx: &datafusion::prelude::SessionContext,
    store: Option<&Store>,
) -> crate::error::Result<()> {
    ctx.register_udtf(
        "changes_since",
        Arc::new(ChangesSince {
            store: store.cloned(),
        }),
    );
    if let Some(s) = store {
        ctx.register_table("claims", Arc::new(store_view(s, true)?))?;
        ctx.register_table("rejections", Arc::new(store_view(s, false)?))?;
    }
    Ok(())
}
