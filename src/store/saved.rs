//! Tables a user saved into the store with `CREATE TABLE name AS SELECT
//! ...` (through `quarry serve --allow-writes`): each a Delta table under
//! `tables/saved/NAME/`, registered by name in every later session over
//! the store (the shell's and the server's), so a result computed once by
//! one client is there for the next and for DuckDB, Spark or polars.
//!
//! A saved table is never replaced or dropped by a client: a name in use
//! (a saved table's or one of quarry's own) is refused, so no client
//! deletes another's results.

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::{cast, concat_batches};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use deltalake::kernel::transaction::CommitProperties;

use super::delta::{Delta, DeltaView};
use super::Store;
use crate::error::{QuarryError, Result};

/// Where saved tables live in a store.
pub const SAVED_DIR: &str = "tables/saved";

/// Why `name` cannot name a saved table, if it cannot: lower-case letters,
/// digits and `_`, starting with a letter, at most 63 characters (what
/// Postgres takes unquoted), so the folder and the SQL name agree.
pub fn check_name(name: &str) -> std::result::Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{name}' cannot name a saved table: use lower-case letters, digits and _, starting with a letter (at most 63)"
        ))
    }
}

fn table(store: &Store, name: &str) -> Result<Delta> {
    Delta::new(
        store,
        &format!("{SAVED_DIR}/{name}"),
        &format!("the saved table {name}"),
    )
}

/// The type a column is stored with: text and binary views as plain text
/// and binary (what Delta's readers know), everything else as it is.
fn stored(t: &DataType) -> DataType {
    match t {
        DataType::Utf8View => DataType::Utf8,
        DataType::BinaryView => DataType::Binary,
        other => other.clone(),
    }
}

/// Saves `batches` (of `schema`) as the new table `name`, refused when
/// the store holds one by that name already; the number of rows saved.
/// The rows are one commit: a reader sees all of them or none.
pub async fn save(
    store: &Store,
    name: &str,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> Result<usize> {
    check_name(name).map_err(QuarryError::Invalid)?;
    let delta = table(store, name)?;
    if delta.load().await?.is_some() {
        return Err(QuarryError::Invalid(format!(
            "the store holds a table '{name}' already; saved tables are not replaced: pick another name"
        )));
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| Field::new(f.name(), stored(f.data_type()), true))
        .collect();
    let target = Arc::new(Schema::new(fields));
    let mut cast_batches = Vec::with_capacity(batches.len());
    for b in &batches {
        let cols = b
            .columns()
            .iter()
            .zip(target.fields())
            .map(|(c, f)| cast(c, f.data_type()))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        cast_batches.push(RecordBatch::try_new(target.clone(), cols)?);
    }
    let batch = concat_batches(&target, &cast_batches)?;
    let rows = batch.num_rows();
    delta
        .commit_retrying(None, batch, CommitProperties::default(), name)
        .await?;
    Ok(rows)
}

/// Every saved table of `store`: its name and columns.
pub async fn list(store: &Store) -> Result<Vec<(String, SchemaRef)>> {
    let mut names: Vec<String> = store
        .list(SAVED_DIR)
        .await?
        .into_iter()
        .filter_map(|(path, _)| {
            let rest = path.split(&format!("{SAVED_DIR}/")).nth(1)?;
            let (name, tail) = rest.split_once('/')?;
            tail.starts_with("_delta_log/").then(|| name.to_string())
        })
        .filter(|n| check_name(n).is_ok())
        .collect();
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        if let Some(schema) = stored_schema(store, &name).await? {
            out.push((name, schema));
        }
    }
    Ok(out)
}

/// The columns of the saved table `name` as the store holds them (what a
/// session registers), or `None` when there is no such table.
pub async fn stored_schema(store: &Store, name: &str) -> Result<Option<SchemaRef>> {
    let delta = table(store, name)?;
    match delta.load().await? {
        Some(t) => Ok(Some(
            t.snapshot()
                .map_err(|e| delta.error(e))?
                .snapshot()
                .arrow_schema(),
        )),
        None => Ok(None),
    }
}

/// The saved table `name` as a table of a session.
pub fn view(store: &Store, name: &str, schema: SchemaRef) -> Result<DeltaView> {
    Ok(DeltaView::new(table(store, name)?, None, schema))
}
