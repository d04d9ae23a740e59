//! Printing results: an aligned table (long cells shortened), CSV with a
//! header, or JSON (one array of objects).

use std::io::Write;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::error::Result;

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// An aligned table; cells over 80 characters are shortened with "…".
    #[default]
    Table,
    /// CSV with a header row; values in full.
    Csv,
    /// A JSON array of objects; values in full.
    Json,
}

const MAX_CELL: usize = 80;

fn cell_strings(col: &ArrayRef) -> Result<Vec<Option<String>>> {
    let opts = FormatOptions::default().with_null("");
    let f = ArrayFormatter::try_new(col.as_ref(), &opts)?;
    Ok((0..col.len())
        .map(|i| (!col.is_null(i)).then(|| f.value(i).to_string()))
        .collect())
}

/// Every cell of a batch as display text, column by column.
fn batch_strings(b: &RecordBatch) -> Result<Vec<Vec<Option<String>>>> {
    b.columns().iter().map(cell_strings).collect()
}

fn shorten(s: &str) -> String {
    let one_line = s.replace('\n', "⏎");
    if one_line.chars().count() <= MAX_CELL {
        return one_line;
    }
    let mut t: String = one_line.chars().take(MAX_CELL - 1).collect();
    t.push('…');
    t
}

/// Writes batches in the chosen format; an empty result still shows its columns.
pub fn write(
    out: &mut dyn Write,
    schema: SchemaRef,
    batches: &[RecordBatch],
    format: Format,
) -> Result<()> {
    // A statement with no result columns (CREATE TABLE, CREATE VIEW, SET)
    // prints nothing.
    if schema.fields().is_empty() {
        return Ok(());
    }
    let empty;
    let batches = if batches.is_empty() {
        empty = [RecordBatch::new_empty(schema.clone())];
        &empty[..]
    } else {
        batches
    };
    match format {
        Format::Table => {
            let fields: Vec<Field> = schema
                .fields()
                .iter()
                .map(|f| Field::new(f.name(), DataType::Utf8, true))
                .collect();
            let short = Arc::new(Schema::new(fields));
            let mut shown = Vec::new();
            for b in batches {
                let cols: Vec<ArrayRef> = b
                    .columns()
                    .iter()
                    .map(|c| {
                        let v = cell_strings(c)?;
                        Ok(Arc::new(StringArray::from(
                            v.into_iter()
                                .map(|s| s.map(|s| shorten(&s)))
                                .collect::<Vec<_>>(),
                        )) as ArrayRef)
                    })
                    .collect::<Result<_>>()?;
                shown.push(RecordBatch::try_new(short.clone(), cols)?);
            }
            writeln!(out, "{}", pretty_format_batches(&shown)?)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            let header: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            w.write_record(&header)
                .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?;
            for b in batches {
                let cols = batch_strings(b)?;
                for r in 0..b.num_rows() {
                    let row: Vec<&str> =
                        cols.iter().map(|c| c[r].as_deref().unwrap_or("")).collect();
                    w.write_record(&row)
                        .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?;
                }
            }
            w.flush()?;
        }
        Format::Json => {
            let mut rows = Vec::new();
            for b in batches {
                let cols = batch_strings(b)?;
                for r in 0..b.num_rows() {
                    let mut obj = serde_json::Map::new();
                    for ((f, col), shown) in schema.fields().iter().zip(b.columns()).zip(&cols) {
                        obj.insert(f.name().clone(), json_value(col, r, shown[r].as_deref()));
                    }
                    rows.push(serde_json::Value::Object(obj));
                }
            }
            let s = serde_json::to_string_pretty(&rows)
                .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?;
            writeln!(out, "{s}")?;
        }
    }
    Ok(())
}

fn json_value(col: &ArrayRef, row: usize, shown: Option<&str>) -> serde_json::Value {
    use serde_json::Value;
    let Some(s) = shown else { return Value::Null };
    if col.is_null(row) {
        return Value::Null;
    }
    match col.data_type() {
        DataType::Boolean => Value::Bool(s == "true"),
        t if t.is_integer() => s
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(s.into())),
        t if t.is_floating() => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(s.into())),
        _ => Value::String(s.into()),
    }
}
