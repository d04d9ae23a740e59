//! `cohort_tables(src [, options])`: the baseline-characteristics tables of
//! every document read, as one row per data item (one number in a cell):
//! its arm and arm size, characteristic path, category, statistical measure,
//! value, unit and cell text (see `crate::cohort`); `baseline` says whether
//! the caption names the participants' characteristics at the start (every
//! table is read; filter on it). A table that cannot be
//! interpreted is one row with `measure = 'other'` and a `note` saying why;
//! a cell no measure fits gives `other` rows with its text.
//!
//! ```sql
//! SELECT arm, characteristic, measure, value
//! FROM cohort_tables('tests/data/rct_baseline/jats/')
//! WHERE table_id = 'Table 1';
//! ```

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{
    Float64Builder, Int64Builder, ListBuilder, RecordBatch, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::Result;

use super::{simple_corpus_call, Env};
use crate::cohort::{interpret, tables_of, Item};
use crate::ingest::{Document, Status};

const USAGE: &str = "cohort_tables(src [, 'recursive=true, clean=default, max_bytes=N, ocr=auto'])";

/// The `cohort_tables` schema.
pub static COHORT: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        Field::new("document_id", DataType::Utf8, false),
        Field::new("source", DataType::Utf8, false),
        Field::new("table_id", DataType::Utf8, false),
        Field::new("caption", DataType::Utf8, false),
        Field::new("baseline", DataType::Boolean, false),
        Field::new("arm", DataType::Utf8, true),
        Field::new("arm_n", DataType::Int64, true),
        Field::new(
            "characteristic",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        ),
        Field::new("category", DataType::Utf8, true),
        Field::new("measure", DataType::Utf8, false),
        Field::new("value", DataType::Float64, true),
        Field::new("unit", DataType::Utf8, true),
        Field::new("cell_text", DataType::Utf8, false),
        Field::new("note", DataType::Utf8, true),
    ]))
});

/// The `cohort_tables` table function.
#[derive(Debug, Default)]
pub struct CohortTables {
    /// Shared settings.
    pub env: Env,
}

/// The data items of every table of a document.
pub fn document_items(d: &Document) -> Vec<Item> {
    tables_of(d).iter().flat_map(interpret).collect()
}

/// A batch of one document's items.
pub fn cohort_batch(document_id: &str, source: &str, items: &[Item]) -> Result<RecordBatch> {
    let mut doc = StringBuilder::new();
    let mut src = StringBuilder::new();
    let mut table = StringBuilder::new();
    let mut caption = StringBuilder::new();
    let mut baseline = datafusion::arrow::array::BooleanBuilder::new();
    let mut arm = StringBuilder::new();
    let mut arm_n = Int64Builder::new();
    let mut ch = ListBuilder::new(StringBuilder::new());
    let mut cat = StringBuilder::new();
    let mut measure = StringBuilder::new();
    let mut value = Float64Builder::new();
    let mut unit = StringBuilder::new();
    let mut cell = StringBuilder::new();
    let mut note = StringBuilder::new();
    for it in items {
        doc.append_value(document_id);
        src.append_value(source);
        table.append_value(&it.table_id);
        caption.append_value(&it.caption);
        baseline.append_value(crate::cohort::is_baseline(&it.caption));
        arm.append_option(it.arm.as_deref());
        arm_n.append_option(it.arm_n);
        for p in &it.characteristic {
            ch.values().append_value(p);
        }
        ch.append(true);
        cat.append_option(it.category.as_deref());
        measure.append_value(it.measure.as_str());
        value.append_option(it.value);
        unit.append_option(it.unit.as_deref());
        cell.append_value(&it.cell_text);
        note.append_option(it.note.as_deref());
    }
    let schema = COHORT.clone();
    Ok(RecordBatch::try_new(
        schema,
        vec![
            Arc::new(doc.finish()),
            Arc::new(src.finish()),
            Arc::new(table.finish()),
            Arc::new(caption.finish()),
            Arc::new(baseline.finish()),
            Arc::new(arm.finish()),
            Arc::new(arm_n.finish()),
            Arc::new(ch.finish()),
            Arc::new(cat.finish()),
            Arc::new(measure.finish()),
            Arc::new(value.finish()),
            Arc::new(unit.finish()),
            Arc::new(cell.finish()),
            Arc::new(note.finish()),
        ],
    )?)
}

impl TableFunctionImpl for CohortTables {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        simple_corpus_call(
            &args,
            USAGE,
            &self.env,
            COHORT.clone(),
            false,
            Arc::new(|d| {
                if d.status != Status::Ok || d.blocks.is_empty() {
                    return Ok(vec![]);
                }
                let items = document_items(d);
                if items.is_empty() {
                    return Ok(vec![]);
                }
                Ok(vec![cohort_batch(
                    d.document_id.as_deref().unwrap_or_default(),
                    &d.entry.source,
                    &items,
                )?])
            }),
        )
    }
}

/// The items of `cohort_tables` batches back, by document (id, source), in
/// the order they came.
pub fn items_from_batches(batches: &[RecordBatch]) -> Vec<((String, String), Vec<Item>)> {
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::datatypes::{Float64Type, Int64Type};
    let mut out: Vec<((String, String), Vec<Item>)> = Vec::new();
    for b in batches {
        let col = |name: &str| b.column_by_name(name).expect("cohort_tables column");
        let s = |name: &str| col(name).as_string::<i32>().clone();
        let (doc, src, table, caption, arm) = (
            s("document_id"),
            s("source"),
            s("table_id"),
            s("caption"),
            s("arm"),
        );
        let (cat, measure, unit, cell, note) = (
            s("category"),
            s("measure"),
            s("unit"),
            s("cell_text"),
            s("note"),
        );
        let arm_n = col("arm_n").as_primitive::<Int64Type>().clone();
        let value = col("value").as_primitive::<Float64Type>().clone();
        let ch = col("characteristic").as_list::<i32>().clone();
        let opt = |a: &datafusion::arrow::array::StringArray, i: usize| {
            (!a.is_null(i)).then(|| a.value(i).to_string())
        };
        for i in 0..b.num_rows() {
            let path: Vec<String> = {
                let v = ch.value(i);
                let v = v.as_string::<i32>();
                (0..v.len()).map(|k| v.value(k).to_string()).collect()
            };
            let item = Item {
                table_id: table.value(i).to_string(),
                caption: caption.value(i).to_string(),
                arm: opt(&arm, i),
                arm_n: (!arm_n.is_null(i)).then(|| arm_n.value(i)),
                characteristic: path,
                category: opt(&cat, i),
                measure: crate::cohort::tokens::Measure::parse(measure.value(i)),
                value: (!value.is_null(i)).then(|| value.value(i)),
                unit: opt(&unit, i),
                cell_text: cell.value(i).to_string(),
                note: opt(&note, i),
            };
            let key = (doc.value(i).to_string(), src.value(i).to_string());
            match out.last_mut() {
                Some((k, items)) if *k == key => items.push(item),
                _ => out.push((key, vec![item])),
            }
        }
    }
    out
}

/// Runs `cohort_tables(src)` and writes the knowledge graph of every
/// document as Turtle; returns (documents, arms, data items, skipped tables).
pub async fn write_kg(
    ctx: &datafusion::prelude::SessionContext,
    src: &str,
    out: &mut String,
) -> crate::error::Result<(usize, usize, usize, Vec<String>)> {
    let sql = format!("SELECT * FROM cohort_tables('{}')", src.replace('\'', "''"));
    let batches = ctx.sql(&sql).await?.collect().await?;
    out.push_str(crate::cohort::turtle::PREFIXES);
    out.push('\n');
    let docs = items_from_batches(&batches);
    let (mut arms, mut items, mut skipped) = (0, 0, Vec::new());
    for ((id, source), its) in &docs {
        for it in its {
            if let Some(n) = it
                .note
                .as_deref()
                .filter(|n| n.starts_with("table skipped"))
            {
                skipped.push(format!("{source} {}: {}", it.table_id, n));
            }
        }
        // The graph holds the baseline tables (by caption) with their values.
        let data: Vec<Item> = its
            .iter()
            .filter(|i| i.value.is_some() && crate::cohort::is_baseline(&i.caption))
            .cloned()
            .collect();
        items += data.len();
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for i in &data {
            if let Some(a) = i.arm.as_deref() {
                if !seen.contains(&(i.table_id.as_str(), a)) {
                    seen.push((i.table_id.as_str(), a));
                }
            }
        }
        arms += seen.len();
        crate::cohort::turtle::write_document(out, id, source, &data);
    }
    Ok((docs.len(), arms, items, skipped))
}
