//! `cohort_tables(src [, options])`: the baseline-characteristics tables of
//! every document read, as one row per data item (one number in a cell):
//! its arm and arm size, characteristic path, category, statistical measure,
//! value, unit and cell text (see `crate::cohort`). A table that cannot be
//! interpreted is one row with `measure = 'other'` and a `note` saying why;
//! a cell no measure fits gives `other` rows with its text.
//!
//! ```sql
//! SELECT arm, characteristic, measure, value
//! FROM cohort_tables('../shared/data/rct_baseline/jats/')
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

const USAGE: &str = "cohort_tables(src [, 'recursive=true, clean=default, max_bytes=N'])";

/// The `cohort_tables` schema.
pub static COHORT: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        Field::new("document_id", DataType::Utf8, false),
        Field::new("table_id", DataType::Utf8, false),
        Field::new("caption", DataType::Utf8, false),
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
pub fn cohort_batch(document_id: &str, items: &[Item]) -> Result<RecordBatch> {
    let mut doc = StringBuilder::new();
    let mut table = StringBuilder::new();
    let mut caption = StringBuilder::new();
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
        table.append_value(&it.table_id);
        caption.append_value(&it.caption);
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
    let ch = ch.finish();
    let ch = datafusion::arrow::array::ListArray::new(
        Arc::new(Field::new("item", DataType::Utf8, true)),
        ch.offsets().clone(),
        ch.values().clone(),
        None,
    );
    Ok(RecordBatch::try_new(
        schema,
        vec![
            Arc::new(doc.finish()),
            Arc::new(table.finish()),
            Arc::new(caption.finish()),
            Arc::new(arm.finish()),
            Arc::new(arm_n.finish()),
            Arc::new(ch),
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
                    &items,
                )?])
            }),
        )
    }
}
