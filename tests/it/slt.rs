//! Runs every `tests/slt/*.slt` file with sqllogictest against a fresh
//! quarry session each.

use async_trait::async_trait;
use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;
use sqllogictest::{DBOutput, DefaultColumnType};

struct Quarry {
    ctx: SessionContext,
    _store: tempfile::TempDir,
}

#[derive(Debug)]
struct SltError(String);

impl std::fmt::Display for SltError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SltError {}

fn column_type(t: &DataType) -> DefaultColumnType {
    if t.is_integer() {
        DefaultColumnType::Integer
    } else if t.is_floating() || matches!(t, DataType::Decimal128(..)) {
        DefaultColumnType::FloatingPoint
    } else if matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8) {
        DefaultColumnType::Text
    } else {
        DefaultColumnType::Any
    }
}

fn rows(batches: &[RecordBatch]) -> Result<Vec<Vec<String>>, SltError> {
    let opts = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let fmts: Vec<ArrayFormatter> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
            .collect::<Result<_, _>>()
            .map_err(|e| SltError(e.to_string()))?;
        for r in 0..b.num_rows() {
            out.push(
                fmts.iter()
                    .zip(b.columns())
                    .map(|(f, c)| {
                        if c.is_null(r) {
                            "NULL".to_string()
                        } else {
                            let s = f.value(r).to_string();
                            if s.is_empty() {
                                "(empty)".into()
                            } else {
                                s
                            }
                        }
                    })
                    .collect(),
            );
        }
    }
    Ok(out)
}

#[async_trait]
impl sqllogictest::AsyncDB for Quarry {
    type Error = SltError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SltError> {
        let df = self
            .ctx
            .sql(sql)
            .await
            .map_err(|e| SltError(e.to_string()))?;
        let schema = df.schema().clone();
        let batches = df.collect().await.map_err(|e| SltError(e.to_string()))?;
        let is_query = !schema.fields().is_empty();
        if !is_query {
            return Ok(DBOutput::StatementComplete(0));
        }
        Ok(DBOutput::Rows {
            types: schema
                .fields()
                .iter()
                .map(|f| column_type(f.data_type()))
                .collect(),
            rows: rows(&batches)?,
        })
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "quarry"
    }
}

#[tokio::test]
async fn sqllogictest_files() {
    let dir = crate::common::root().join("tests/slt");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/slt")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "one .slt file per table function");
    let mut failures = Vec::new();
    for f in &files {
        let mut runner = sqllogictest::Runner::new(|| async {
            let store = tempfile::tempdir().map_err(|e| SltError(e.to_string()))?;
            let ctx = crate::common::ctx(Some(store.path()));
            Ok(Quarry { ctx, _store: store })
        });
        if let Err(e) = runner.run_file_async(f).await {
            failures.push(format!("{}: {e}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
