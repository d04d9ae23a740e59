//! A run's tables in the store, as Delta Lake tables: `tables/screening/`
//! and `tables/evidence/` (every protocol's rows, told apart by
//! `protocol_hash`), `tables/extraction/<protocol hash>/` (one table per
//! protocol, whose columns are its fields), and `tables/runs/claims/` (the
//! rows a claims run gave, before the claims table takes them). Each window
//! of a run replaces its documents' rows in one commit per table, so a long
//! run leaves a few files per table, not one per document, and compaction
//! keeps them few.
//!
//! Beside the rows, `tables/runs/ledger/` says which documents a run has
//! finished: one row per run, document and table with the key the rows were
//! made under (the document's version, the rendered SQL, the model) and how
//! many rows there are. Every stored row carries its `result_key` too, and a
//! document's rows are restored only when the ledger's key is the run's and
//! the table holds exactly that many rows under it: a run killed between
//! its commits, or another run that replaced the rows since, reads the
//! document again instead of restoring a mix. The ledger is committed after
//! the rows.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::compute::{cast, concat_batches};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::logical_expr::{col, lit, Expr};
use deltalake::kernel::transaction::CommitProperties;

use super::delta::{rows_by, Delta, DeltaView};
use super::Store;
use crate::error::{QuarryError, Result};
use crate::tables::conform;

/// Where the ledger of finished documents lives in a store.
pub const LEDGER_TABLE: &str = "tables/runs/ledger";

/// The column holding the key a stored row was made under.
pub const RESULT_KEY: &str = "result_key";

/// The column a shared table tells protocols apart by.
const PROTOCOL: &str = "protocol_hash";

/// The store folder of run table `table` of protocol `protocol`, and
/// whether protocols share it.
pub fn table_rel(table: &str, protocol: &str) -> (String, bool) {
    match table {
        "extraction" => (format!("tables/extraction/{protocol}"), false),
        "claims" => ("tables/runs/claims".into(), true),
        t => (format!("tables/{t}"), true),
    }
}

/// The ledger's columns.
fn ledger_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("run", DataType::Utf8, false),
        Field::new("source", DataType::Utf8, false),
        Field::new("table", DataType::Utf8, false),
        Field::new(RESULT_KEY, DataType::Utf8, false),
        Field::new("rows", DataType::Int64, false),
    ]))
}

/// One table a run writes.
#[derive(Debug, Clone)]
struct RunTable {
    name: &'static str,
    delta: Delta,
    /// Its rows are told apart from other protocols' by `protocol_hash`.
    shared: bool,
    /// The columns the run gives.
    declared: SchemaRef,
    /// The columns kept: the declared ones, then `source` (when the
    /// declared ones lack it: a row's document), `protocol_hash` (in a
    /// shared table that lacks it) and `result_key`.
    stored: SchemaRef,
}

/// The tables of one run (one protocol's screening, or extraction and
/// evidence, or one claims spec's rows) and the ledger.
#[derive(Debug, Clone)]
pub struct RunStore {
    run: String,
    protocol: String,
    tables: Vec<RunTable>,
    ledger: Delta,
}

/// One document's rows of every table, as the run gave them.
pub type DocRows = Vec<Option<RecordBatch>>;

impl RunStore {
    /// The tables `outputs` (name and declared columns) of the run of
    /// protocol `protocol` in `store`.
    pub fn new(
        store: &Store,
        protocol: &str,
        outputs: &[(&'static str, SchemaRef)],
    ) -> Result<Self> {
        let mut tables = Vec::new();
        for (name, declared) in outputs {
            if declared.index_of(RESULT_KEY).is_ok() {
                return Err(QuarryError::Invalid(format!(
                    "the {name} table has a column named {RESULT_KEY}, which the store keeps for itself; rename that field"
                )));
            }
            let (rel, shared) = table_rel(name, protocol);
            let mut fields: Vec<Field> = declared
                .fields()
                .iter()
                .map(|f| f.as_ref().clone())
                .collect();
            if declared.index_of("source").is_err() {
                fields.push(Field::new("source", DataType::Utf8, true));
            }
            if shared && declared.index_of(PROTOCOL).is_err() {
                fields.push(Field::new(PROTOCOL, DataType::Utf8, true));
            }
            fields.push(Field::new(RESULT_KEY, DataType::Utf8, true));
            tables.push(RunTable {
                name,
                delta: Delta::new(store, &rel, &format!("the store's {name} table"))?,
                shared,
                declared: declared.clone(),
                stored: Arc::new(Schema::new(fields)),
            });
        }
        let run = format!(
            "{protocol}:{}",
            outputs.iter().map(|o| o.0).collect::<Vec<_>>().join(",")
        );
        Ok(Self {
            run,
            protocol: protocol.to_string(),
            tables,
            ledger: Delta::new(
                store,
                LEDGER_TABLE,
                "the store's ledger of finished documents",
            )?,
        })
    }

    /// This run's rows of `t` among `sources`.
    fn of(&self, t: &RunTable, sources: &[&str]) -> Expr {
        let docs = col("source").in_list(sources.iter().map(|s| lit(*s)).collect(), false);
        if t.shared {
            col(PROTOCOL).eq(lit(self.protocol.as_str())).and(docs)
        } else {
            docs
        }
    }

    fn ledger_of(&self, sources: &[&str]) -> Expr {
        col("run")
            .eq(lit(self.run.as_str()))
            .and(col("source").in_list(sources.iter().map(|s| lit(*s)).collect(), false))
    }

    /// The stored rows of each document (`docs[i]` is a path and the key
    /// its rows must have been made under): `out[i][t]` is its rows of
    /// table `t`, where the store holds them whole under that key.
    pub async fn stored(&self, docs: &[(&str, &str)]) -> Result<Vec<DocRows>> {
        let n = self.tables.len();
        let mut out: Vec<DocRows> = vec![vec![None; n]; docs.len()];
        if docs.is_empty() {
            return Ok(out);
        }
        let sources: Vec<&str> = docs.iter().map(|d| d.0).collect();
        let Some(ledger) = self.ledger.up_to_date().await? else {
            return Ok(out);
        };
        let done = self.ledger.rows(&ledger, self.ledger_of(&sources)).await?;
        // (source, table) -> (key, rows)
        let mut finished: HashMap<(String, String), (String, i64)> = HashMap::new();
        {
            let text = |name: &str| -> Result<StringArray> {
                let c = done
                    .column_by_name(name)
                    .ok_or_else(|| self.ledger.error(format!("no column {name}")))?;
                Ok(cast(c, &DataType::Utf8)?.as_string::<i32>().clone())
            };
            let (src, table, key) = (text("source")?, text("table")?, text(RESULT_KEY)?);
            let rows = cast(
                done.column_by_name("rows")
                    .ok_or_else(|| self.ledger.error("no column rows"))?,
                &DataType::Int64,
            )?;
            let rows = rows.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
            for r in 0..done.num_rows() {
                finished.insert(
                    (src.value(r).to_string(), table.value(r).to_string()),
                    (key.value(r).to_string(), rows.value(r)),
                );
            }
        }
        for (t, table) in self.tables.iter().enumerate() {
            // The documents the ledger says this run finished under their key.
            let want: Vec<(usize, i64)> = docs
                .iter()
                .enumerate()
                .filter_map(|(i, (s, k))| {
                    let (key, rows) = finished.get(&(s.to_string(), table.name.to_string()))?;
                    (key == k).then_some((i, *rows))
                })
                .collect();
            if want.is_empty() {
                continue;
            }
            let held = match table.delta.up_to_date().await? {
                Some(d) => {
                    let srcs: Vec<&str> = want.iter().map(|(i, _)| docs[*i].0).collect();
                    Some(table.delta.rows(&d, self.of(table, &srcs)).await?)
                }
                None => None,
            };
            let by_doc = match &held {
                Some(b) => rows_by(b, "source")?,
                None => BTreeMap::new(),
            };
            for (i, rows) in want {
                let (source, key) = docs[i];
                let got = by_doc.get(source);
                let n_held = got.map_or(0, |b| b.num_rows()) as i64;
                if n_held != rows {
                    continue;
                }
                let batch = match got {
                    Some(b) => {
                        if !all_under(b, key)? {
                            continue;
                        }
                        declared(b, &table.declared)?
                    }
                    None => RecordBatch::new_empty(table.declared.clone()),
                };
                out[i][t] = Some(batch);
            }
        }
        Ok(out)
    }

    /// Keeps the rows of each document of `docs` (a path, the key its rows
    /// were made under, and its rows of each table, `None` for a table it
    /// has none of): one commit per table, then one to the ledger.
    pub async fn write(&self, docs: &[(&str, &str, DocRows)]) -> Result<()> {
        if docs.is_empty() {
            return Ok(());
        }
        let sources: Vec<&str> = docs.iter().map(|d| d.0).collect();
        let mut ledger: Vec<(String, String, String, i64)> = Vec::new();
        for (t, table) in self.tables.iter().enumerate() {
            let mut batches = Vec::new();
            for (source, key, rows) in docs {
                let n = match &rows[t] {
                    Some(b) => {
                        batches.push(self.stored_rows(table, b, source, key)?);
                        b.num_rows() as i64
                    }
                    None => 0,
                };
                ledger.push((
                    source.to_string(),
                    table.name.to_string(),
                    key.to_string(),
                    n,
                ));
            }
            let batch = concat_batches(&table.stored, &batches)?;
            let replace = self.of(table, &sources);
            commit(&table.delta, batch, replace, table.name, &sources).await?;
        }
        let schema = ledger_schema();
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec![self.run.as_str(); ledger.len()])) as ArrayRef,
                Arc::new(StringArray::from_iter_values(
                    ledger.iter().map(|l| l.0.as_str()),
                )),
                Arc::new(StringArray::from_iter_values(
                    ledger.iter().map(|l| l.1.as_str()),
                )),
                Arc::new(StringArray::from_iter_values(
                    ledger.iter().map(|l| l.2.as_str()),
                )),
                Arc::new(Int64Array::from_iter_values(ledger.iter().map(|l| l.3))),
            ],
        )?;
        commit(
            &self.ledger,
            batch,
            self.ledger_of(&sources),
            "ledger",
            &sources,
        )
        .await
    }

    /// A run that went through its whole listing of `source`: the rows
    /// (and ledger entries) this run's tables hold of paths under `source`
    /// that the listing `listed` no longer gives (a file taken out of the
    /// corpus, or moved) are removed, one commit per table that held any,
    /// so the store's tables are the corpus as it is. Another corpus's
    /// rows, and other protocols' rows of a shared table, stay; a file
    /// still listed but unreadable now keeps its rows (the next run tries
    /// it again).
    pub async fn finish(
        &self,
        source: &str,
        listed: &std::collections::HashSet<String>,
    ) -> Result<usize> {
        let gone_of = |held: std::collections::BTreeSet<String>| -> Vec<String> {
            held.into_iter()
                .filter(|p| crate::engine::under_source(source, p) && !listed.contains(p))
                .collect()
        };
        let mut cleared = std::collections::BTreeSet::new();
        for table in &self.tables {
            let Some(t) = table.delta.up_to_date().await? else {
                continue;
            };
            let filter = if table.shared {
                col(PROTOCOL).eq(lit(self.protocol.as_str()))
            } else {
                lit(true)
            };
            let gone = gone_of(table.delta.distinct(&t, filter, "source").await?);
            if gone.is_empty() {
                continue;
            }
            let paths: Vec<&str> = gone.iter().map(String::as_str).collect();
            let empty = RecordBatch::new_empty(table.stored.clone());
            commit(
                &table.delta,
                empty,
                self.of(table, &paths),
                table.name,
                &paths,
            )
            .await?;
            cleared.extend(gone);
        }
        if let Some(t) = self.ledger.up_to_date().await? {
            let mine = col("run").eq(lit(self.run.as_str()));
            cleared.extend(gone_of(self.ledger.distinct(&t, mine, "source").await?));
            if !cleared.is_empty() {
                let paths: Vec<&str> = cleared.iter().map(String::as_str).collect();
                let empty = RecordBatch::new_empty(ledger_schema());
                commit(
                    &self.ledger,
                    empty,
                    self.ledger_of(&paths),
                    "ledger",
                    &paths,
                )
                .await?;
            }
        }
        Ok(cleared.len())
    }

    /// A document's rows of `table` in its stored columns.
    fn stored_rows(
        &self,
        table: &RunTable,
        b: &RecordBatch,
        source: &str,
        key: &str,
    ) -> Result<RecordBatch> {
        let b = conform(b.clone(), &table.declared)?;
        let n = b.num_rows();
        let mut cols = b.columns().to_vec();
        for f in table
            .stored
            .fields()
            .iter()
            .skip(table.declared.fields().len())
        {
            let v = match f.name().as_str() {
                "source" => source,
                PROTOCOL => self.protocol.as_str(),
                _ => key,
            };
            cols.push(Arc::new(StringArray::from(vec![v; n])));
        }
        Ok(RecordBatch::try_new(table.stored.clone(), cols)?)
    }
}

/// Replaces the rows `replace` matches with `batch` in one commit,
/// noting the window's paths in the commit.
async fn commit(
    delta: &Delta,
    batch: RecordBatch,
    replace: Expr,
    name: &str,
    sources: &[&str],
) -> Result<()> {
    let props = CommitProperties::default()
        .with_metadata([("quarry.sources".to_string(), serde_json::json!(sources))]);
    delta
        .commit_retrying(Some(replace), batch, props, name)
        .await
}

/// Whether every row of `b` was made under `key`.
fn all_under(b: &RecordBatch, key: &str) -> Result<bool> {
    let Some(c) = b.column_by_name(RESULT_KEY) else {
        return Ok(false);
    };
    let c = cast(c, &DataType::Utf8)?;
    let c = c.as_string::<i32>();
    Ok((0..c.len()).all(|r| c.is_valid(r) && c.value(r) == key))
}

/// A stored batch in the run's declared columns.
fn declared(b: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    let cols = schema
        .fields()
        .iter()
        .map(|f| {
            let c = b.column_by_name(f.name()).ok_or_else(|| {
                QuarryError::Invalid(format!("a stored table has no column {}", f.name()))
            })?;
            Ok(cast(c, f.data_type())?)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        cols,
        &datafusion::arrow::record_batch::RecordBatchOptions::new()
            .with_row_count(Some(b.num_rows())),
    )?)
}

/// The store's table `table` (of protocol `protocol` for `extraction`) as
/// a query sees it: the declared columns of every protocol's rows.
pub fn view(store: &Store, table: &str, protocol: &str, schema: SchemaRef) -> Result<DeltaView> {
    let (rel, _) = table_rel(table, protocol);
    Ok(DeltaView::new(
        Delta::new(store, &rel, &format!("the store's {table} table"))?,
        None,
        schema,
    ))
}

/// How many documents the ledger says are finished, by table (every run's).
pub async fn finished(store: &Store) -> Result<BTreeMap<String, usize>> {
    let ledger = Delta::new(
        store,
        LEDGER_TABLE,
        "the store's ledger of finished documents",
    )?;
    let mut out = BTreeMap::new();
    let Some(t) = ledger.load().await? else {
        return Ok(out);
    };
    let rows = ledger.rows(&t, lit(true)).await?;
    let c = cast(
        rows.column_by_name("table")
            .ok_or_else(|| ledger.error("no column table"))?,
        &DataType::Utf8,
    )?;
    for v in c.as_string::<i32>().iter().flatten() {
        *out.entry(v.to_string()).or_default() += 1;
    }
    Ok(out)
}
