//! The store's claims table: a Delta Lake table (`tables/claims/` of the
//! store) holding every document's current claims and rejections (`code`
//! is NULL for a claim). A run replaces a window's documents' rows in one
//! commit; the commit's version is the rows' `revision`, so revisions only
//! grow across the store and a document's revision says which commit last
//! changed it. Commits are conditional puts of the next log entry (Delta's
//! protocol), so two processes writing one store (a folder or S3) never
//! lose a revision: the one that loses the race reads the table again and
//! commits its rows under the next version. The change data feed gives
//! [`ClaimStore::changes_since`]; any engine that reads Delta (DuckDB,
//! Spark, polars) reads the table.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::compute::{cast, concat_batches};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::execution::context::SessionContext;
use datafusion::logical_expr::{col, lit};
use datafusion::physical_plan::collect;
use deltalake::kernel::transaction::CommitProperties;
use deltalake::DeltaTable;

use super::delta::{rows_by, CommitError, Delta, ATTEMPTS};
use super::Store;
use crate::error::{QuarryError, Result};

/// Where the claims table lives in a store.
pub const CLAIMS_TABLE: &str = "tables/claims";

/// The column a document's rows are replaced by: its path.
const KEY: &str = "source";

/// The claims table of a store.
#[derive(Clone, Debug)]
pub struct ClaimStore {
    table: Delta,
}

/// What one commit did to a document: its revision now.
pub type Revisions = HashMap<String, i64>;

/// One change: a claim added to or removed from a document, or kept with
/// a new stamp (another model, prompt or release).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    /// The revision that made it.
    pub revision: i64,
    /// The document.
    pub document_id: String,
    /// `added`, `removed` or `restamped`.
    pub change: &'static str,
    /// The claim.
    pub claim_id: String,
}

impl ClaimStore {
    /// The claims table of `store` (nothing is read or written yet).
    pub fn new(store: &Store) -> Result<Self> {
        Ok(Self {
            table: Delta::new(store, CLAIMS_TABLE, "the claims table")?.keeping_history(),
        })
    }

    /// The Delta table itself.
    pub fn delta(&self) -> &Delta {
        &self.table
    }

    /// The table at its latest version, or `None` before its first commit.
    pub async fn load(&self) -> Result<Option<DeltaTable>> {
        self.table.load().await
    }

    /// The table at `version`.
    pub async fn load_version(&self, version: i64) -> Result<DeltaTable> {
        self.table.load_version(version).await
    }

    /// Makes the table's rows of spec `spec` (its name: a spec keeps its
    /// documents' claims beside another spec's, and a fixed prompt under
    /// the same name replaces what the old one gave) of each document of
    /// `rows` (by its path, `source`: an edited file is a new document at
    /// the same path) these rows, in one commit, unless they are already (the same rows but for
    /// `revision`): a run started again after a kill commits nothing new.
    /// Returns every given path's revision (the new commit's, or the one
    /// its rows already carry; `None` for a path with no rows that the
    /// table never held).
    pub async fn replace(
        &self,
        spec: &str,
        rows: Vec<(String, RecordBatch)>,
        schema: &SchemaRef,
    ) -> Result<HashMap<String, Option<i64>>> {
        let sources: Vec<String> = rows.iter().map(|(d, _)| d.clone()).collect();
        for _ in 0..ATTEMPTS {
            let _turn = self.table.turn().await;
            let table = self.table.up_to_date().await?;
            let (held, base) = match &table {
                Some(t) => (
                    Some(self.table.rows(t, of(spec, &sources)).await?),
                    t.version(),
                ),
                None => (None, None),
            };
            let held_by_doc = match &held {
                Some(b) => rows_by(b, KEY)?,
                None => BTreeMap::new(),
            };
            let mut out: HashMap<String, Option<i64>> = HashMap::new();
            let mut changed: Vec<&(String, RecordBatch)> = Vec::new();
            for r in &rows {
                let (doc, batch) = r;
                let had = held_by_doc.get(doc);
                let same = match had {
                    Some(h) => fingerprint(h)? == fingerprint(batch)?,
                    None => batch.num_rows() == 0,
                };
                if same {
                    out.insert(doc.clone(), had.and_then(revision_of));
                } else {
                    changed.push(r);
                }
            }
            if changed.is_empty() {
                return Ok(out);
            }
            let revision = base.map_or(0, |v| v as i64 + 1);
            let mut batches = Vec::new();
            for (doc, b) in &changed {
                batches.push(with_revision(b, schema, revision)?);
                out.insert(doc.clone(), Some(revision));
            }
            let batch = concat_batches(schema, &batches)?;
            let ids: Vec<String> = changed.iter().map(|(d, _)| d.clone()).collect();
            let commit = CommitProperties::default().with_metadata([(
                "quarry.sources".to_string(),
                serde_json::json!(changed.iter().map(|(d, _)| d).collect::<Vec<_>>()),
            )]);
            match self
                .table
                .replace(table, of(spec, &ids), batch, commit, "claims", true)
                .await
            {
                Ok(t) => {
                    if t.version().map(|v| v as i64) != Some(revision) {
                        return Err(self.table.error(format!(
                            "committed as version {:?}, expected {revision}",
                            t.version()
                        )));
                    }
                    return Ok(out);
                }
                Err(CommitError::LostRace) => continue,
                Err(CommitError::Failed(e)) => return Err(e),
            }
        }
        Err(self.table.error(format!(
            "{ATTEMPTS} commits in a row lost to other writers; run again"
        )))
    }

    /// The documents (paths) the table holds rows of for spec `spec`.
    pub async fn sources(&self, spec: &str) -> Result<BTreeSet<String>> {
        match self.table.load().await? {
            Some(t) => {
                self.table
                    .distinct(&t, col("spec").eq(lit(spec)), KEY)
                    .await
            }
            None => Ok(BTreeSet::new()),
        }
    }

    /// What changed after `revision`, revision by revision (at most
    /// `max_revisions` of them): each claim added or removed, or kept with
    /// a new stamp. Unchanged claims of a replaced document are not listed.
    pub async fn changes_since(
        &self,
        revision: i64,
        max_revisions: Option<usize>,
    ) -> Result<Vec<Change>> {
        let Some(table) = self.table.load().await? else {
            return Ok(Vec::new());
        };
        let latest = table.version().map_or(-1, |v| v as i64);
        let from = revision + 1;
        if from > latest {
            return Ok(Vec::new());
        }
        let ctx = SessionContext::new();
        let state = ctx.state();
        let plan = table
            .scan_cdf()
            .with_starting_version(from as u64)
            .build(&state, None)
            .await
            .map_err(|e| self.table.error(e))?;
        let batches = collect(plan, ctx.task_ctx()).await?;
        // (revision, document, claim) -> (inserted stamps, deleted stamps)
        type Seen = (Vec<String>, Vec<String>);
        let mut seen: BTreeMap<(i64, String, String), Seen> = BTreeMap::new();
        for b in &batches {
            let text = |name: &str| -> Result<StringArray> {
                let c = b
                    .column_by_name(name)
                    .ok_or_else(|| self.table.error(format!("the change feed has no {name}")))?;
                Ok(cast(c, &DataType::Utf8)?.as_string::<i32>().clone())
            };
            let (kind, doc, claim, code) = (
                text("_change_type")?,
                text("document_id")?,
                text("claim_id")?,
                text("code")?,
            );
            let version = cast(
                b.column_by_name("_commit_version")
                    .ok_or_else(|| self.table.error("the change feed has no _commit_version"))?,
                &DataType::Int64,
            )?;
            let version = version.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
            let stamp = b
                .column_by_name("stamp")
                .ok_or_else(|| self.table.error("the change feed has no stamp"))?;
            let stamps = ArrayFormatter::try_new(stamp.as_ref(), &FormatOptions::default())?;
            for r in 0..b.num_rows() {
                if code.is_valid(r) || !claim.is_valid(r) {
                    continue;
                }
                let e = seen
                    .entry((
                        version.value(r),
                        doc.value(r).to_string(),
                        claim.value(r).to_string(),
                    ))
                    .or_default();
                match kind.value(r) {
                    "insert" | "update_postimage" => e.0.push(stamps.value(r).to_string()),
                    "delete" | "update_preimage" => e.1.push(stamps.value(r).to_string()),
                    _ => {}
                }
            }
        }
        let revisions: BTreeSet<i64> = seen.keys().map(|k| k.0).collect();
        let keep: BTreeSet<i64> = match max_revisions {
            Some(n) => revisions.into_iter().take(n).collect(),
            None => revisions,
        };
        let mut out = Vec::new();
        for ((rev, doc, claim), (ins, del)) in seen {
            if !keep.contains(&rev) {
                continue;
            }
            let change = match (ins.is_empty(), del.is_empty()) {
                (false, true) => "added",
                (true, false) => "removed",
                (false, false) if ins != del => "restamped",
                _ => continue,
            };
            out.push(Change {
                revision: rev,
                document_id: doc,
                change,
                claim_id: claim,
            });
        }
        out.sort();
        Ok(out)
    }
}

/// The rows of spec `spec` at `sources`.
fn of(spec: &str, sources: &[String]) -> datafusion::logical_expr::Expr {
    col("spec")
        .eq(lit(spec))
        .and(col(KEY).in_list(sources.iter().map(|d| lit(d.as_str())).collect(), false))
}

/// A document's rows as sorted text, `revision` left out: two sets of rows
/// are the same when these are.
fn fingerprint(b: &RecordBatch) -> Result<Vec<String>> {
    let opts = FormatOptions::default();
    let mut cols = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    let schema = b.schema();
    for (i, f) in schema.fields().iter().enumerate() {
        if f.name() == "revision" {
            continue;
        }
        names.push(f.name());
        cols.push(i);
    }
    // Columns in name order, so a table read back in another order compares.
    let mut order: Vec<usize> = (0..cols.len()).collect();
    order.sort_by_key(|&k| names[k]);
    let formatters = order
        .iter()
        .map(|&k| ArrayFormatter::try_new(b.column(cols[k]).as_ref(), &opts))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut rows: Vec<String> = (0..b.num_rows())
        .map(|r| {
            formatters
                .iter()
                .map(|f| f.value(r).to_string())
                .collect::<Vec<_>>()
                .join("\u{1f}")
        })
        .collect();
    rows.sort();
    Ok(rows)
}

/// The revision a document's stored rows carry.
fn revision_of(b: &RecordBatch) -> Option<i64> {
    let c = b.column_by_name("revision")?;
    let c = cast(c, &DataType::Int64).ok()?;
    let c = c.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
    (0..c.len())
        .filter(|&r| c.is_valid(r))
        .map(|r| c.value(r))
        .max()
}

/// `b` in `schema` with every row's `revision` set.
fn with_revision(b: &RecordBatch, schema: &SchemaRef, revision: i64) -> Result<RecordBatch> {
    set_revision(&crate::tables::conform(b.clone(), schema)?, Some(revision))
}

/// `b` with every row's `revision` set to `rev`.
pub fn set_revision(b: &RecordBatch, rev: Option<i64>) -> Result<RecordBatch> {
    let i = b
        .schema()
        .index_of("revision")
        .map_err(|_| QuarryError::Invalid("the claims rows have no revision".into()))?;
    let mut cols = b.columns().to_vec();
    cols[i] = Arc::new(Int64Array::from(vec![rev; b.num_rows()]));
    Ok(RecordBatch::try_new(b.schema(), cols)?)
}

/// The schema of [`ClaimStore::changes_since`]'s rows.
pub fn changes_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("revision", DataType::Int64, false),
        Field::new("document_id", DataType::Utf8, false),
        Field::new("change", DataType::Utf8, false),
        Field::new("claim_id", DataType::Utf8, false),
    ]))
}

/// Changes as rows.
pub fn changes_batch(changes: &[Change]) -> Result<RecordBatch> {
    Ok(RecordBatch::try_new(
        changes_schema(),
        vec![
            Arc::new(Int64Array::from_iter_values(
                changes.iter().map(|c| c.revision),
            )),
            Arc::new(StringArray::from_iter_values(
                changes.iter().map(|c| c.document_id.as_str()),
            )),
            Arc::new(StringArray::from_iter_values(
                changes.iter().map(|c| c.change),
            )),
            Arc::new(StringArray::from_iter_values(
                changes.iter().map(|c| c.claim_id.as_str()),
            )),
        ],
    )?)
}
