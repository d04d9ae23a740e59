//! `records(src [, options])`: reference-manager exports (RIS, Web of
//! Science, PubMed/MEDLINE `.nbib`, BibTeX, CSV from Scopus, Web of Science
//! or any table with a title column) as one row per record, duplicates
//! settled and, with `files=FOLDER`, each record matched to its full text.
//!
//! ```sql
//! SELECT database, count(*) FROM records('review/exports/') GROUP BY database;
//! SELECT title, matched_source, match_rule, note FROM records('review/exports/', 'files=review/pdfs/');
//! ```

use std::fmt;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{
    ArrayRef, Int32Builder, Int64Builder, ListBuilder, MapBuilder, RecordBatch, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::physical_plan::streaming::StreamingTableExec;
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::StreamExt;

use super::{literal_args, parse_bool, parse_options, source_arg, str_arg};
use crate::records::corpus::{Outcome, RecordSource, Settled};
use crate::records::Record;
use crate::source::Source;

/// How `records` is called.
pub const USAGE: &str = "records(src [, 'files=FOLDER, recursive=false'])";

/// The options `records` takes.
pub const OPTIONS: &[&str] = &["files", "recursive"];

fn list_of_text() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

fn extra_type() -> DataType {
    DataType::Map(
        Arc::new(Field::new(
            "entries",
            DataType::Struct(Fields::from(vec![
                Field::new("keys", DataType::Utf8, false),
                Field::new("values", list_of_text(), true),
            ])),
            false,
        )),
        false,
    )
}

/// The `records` table.
pub static RECORDS: LazyLock<SchemaRef> = LazyLock::new(|| {
    let s = |n: &str| Field::new(n, DataType::Utf8, true);
    Arc::new(Schema::new(vec![
        Field::new("record_id", DataType::Utf8, false),
        Field::new("export", DataType::Utf8, false),
        Field::new("line", DataType::Int64, true),
        s("format"),
        Field::new("database", DataType::Utf8, false),
        s("type"),
        s("title"),
        Field::new("authors", list_of_text(), false),
        Field::new("year", DataType::Int32, true),
        s("venue"),
        s("volume"),
        s("issue"),
        s("pages"),
        s("doi"),
        s("pmid"),
        s("abstract"),
        Field::new("keywords", list_of_text(), false),
        s("url"),
        s("file_path"),
        Field::new("extra", extra_type(), true),
        s("duplicate_of"),
        s("dedup_rule"),
        s("matched_source"),
        s("match_rule"),
        Field::new("status", DataType::Utf8, false),
        s("note"),
    ]))
});

/// One column of the `records` table.
fn column<'a>(name: &str, rows: &'a [(Record, Outcome)], settled: &'a Settled) -> Result<ArrayRef> {
    let text = |f: &dyn Fn(&'a Record, &'a Outcome) -> Option<&'a str>| -> ArrayRef {
        let mut b = StringBuilder::with_capacity(rows.len(), rows.len() * 16);
        for (r, o) in rows {
            b.append_option(f(r, o));
        }
        Arc::new(b.finish())
    };
    let list = |f: &dyn Fn(&Record) -> &[String]| -> ArrayRef {
        let mut b = ListBuilder::new(StringBuilder::new());
        for (r, _) in rows {
            for v in f(r) {
                b.values().append_value(v);
            }
            b.append(true);
        }
        Arc::new(b.finish())
    };
    Ok(match name {
        "record_id" => text(&|r, _| Some(&r.record_id)),
        "export" => text(&|r, _| Some(r.export.as_deref().unwrap_or_default())),
        "line" => {
            let mut b = Int64Builder::with_capacity(rows.len());
            for (r, _) in rows {
                b.append_option((r.line > 0).then_some(r.line as i64));
            }
            Arc::new(b.finish())
        }
        "format" => text(&|r, _| r.format.map(|f| f.as_str())),
        "database" => text(&|r, _| Some(r.database.as_deref().unwrap_or_default())),
        "type" => text(&|r, _| r.ty.as_deref()),
        "title" => text(&|r, _| r.title.as_deref()),
        "authors" => list(&|r| &r.authors),
        "year" => {
            let mut b = Int32Builder::with_capacity(rows.len());
            for (r, _) in rows {
                b.append_option(r.year);
            }
            Arc::new(b.finish())
        }
        "venue" => text(&|r, _| r.venue.as_deref()),
        "volume" => text(&|r, _| r.volume.as_deref()),
        "issue" => text(&|r, _| r.issue.as_deref()),
        "pages" => text(&|r, _| r.pages.as_deref()),
        "doi" => text(&|r, _| r.doi.as_deref()),
        "pmid" => text(&|r, _| r.pmid.as_deref()),
        "abstract" => text(&|r, _| r.abstract_text.as_deref()),
        "keywords" => list(&|r| &r.keywords),
        "url" => text(&|r, _| r.url.as_deref()),
        "file_path" => text(&|r, _| r.file_path.as_deref()),
        "extra" => {
            let mut b = MapBuilder::new(
                None,
                StringBuilder::new(),
                ListBuilder::new(StringBuilder::new()),
            );
            for (r, _) in rows {
                for (k, vs) in &r.extra {
                    b.keys().append_value(k);
                    for v in vs {
                        b.values().values().append_value(v);
                    }
                    b.values().append(true);
                }
                b.append(true)?;
            }
            Arc::new(b.finish())
        }
        "duplicate_of" => text(&|_, o| o.duplicate_of.as_ref().map(|(d, _)| d.as_str())),
        "dedup_rule" => text(&|_, o| o.duplicate_of.as_ref().map(|(_, r)| *r)),
        "matched_source" => {
            text(&|_, o| o.matched.map(|(f, _)| settled.files[f].0.source.as_str()))
        }
        "match_rule" => text(&|_, o| o.matched.map(|(_, r)| r)),
        "status" => text(&|r, _| Some(r.status.map_or("failed", |s| s.as_str()))),
        "note" => text(&|r, o| match (&o.duplicate_of, &r.note) {
            (_, Some(n)) => Some(n),
            (Some(_), None) => None,
            (None, None) => o.match_note.as_deref(),
        }),
        other => {
            return Err(DataFusionError::Internal(format!(
                "records has no column {other}"
            )));
        }
    })
}

/// One batch of records with what the first pass settled, with the columns
/// of `schema` (the `records` table's, or a projection of it) only.
pub fn records_batch(
    rows: &[(Record, Outcome)],
    settled: &Settled,
    schema: &SchemaRef,
) -> Result<RecordBatch> {
    let cols = schema
        .fields()
        .iter()
        .map(|f| {
            let c = column(f.name(), rows, settled)?;
            if c.data_type() == f.data_type() {
                Ok(c)
            } else {
                datafusion::arrow::compute::cast(&c, f.data_type()).map_err(|e| {
                    DataFusionError::Execution(format!("records: column {}: {e}", f.name()))
                })
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        cols,
        &datafusion::arrow::record_batch::RecordBatchOptions::new()
            .with_row_count(Some(rows.len())),
    )?)
}

/// Parses `records`' arguments into a record source.
pub fn record_source(
    vals: &[datafusion::common::ScalarValue],
    usage: &str,
    opts_at: usize,
) -> Result<RecordSource> {
    let exports = source_arg(vals, usage)?;
    let raw = parse_options(
        &str_arg(vals, opts_at, usage, "options")?.unwrap_or_default(),
        usage,
        OPTIONS,
    )?;
    record_source_from(exports, &raw, usage)
}

/// A record source from parsed options.
pub fn record_source_from(
    exports: Arc<Source>,
    raw: &std::collections::BTreeMap<String, String>,
    usage: &str,
) -> Result<RecordSource> {
    let recursive = match raw.get("recursive") {
        None => false,
        Some(v) => match parse_bool(v) {
            Some(b) => b,
            None => return plan_err!("{usage}: recursive must be true or false, got '{v}'"),
        },
    };
    let files = match raw.get("files") {
        None => None,
        Some(f) => Some(Arc::new(
            Source::parse(f).or_else(|e| plan_err!("{usage}: files: {e}"))?,
        )),
    };
    Ok(RecordSource {
        exports,
        files,
        recursive,
        fields: crate::records::Fields::ALL,
    })
}

/// The `records` table function.
#[derive(Debug, Default)]
pub struct Records;

impl TableFunctionImpl for Records {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let vals = literal_args(&args)?;
        if vals.is_empty() || vals.len() > 2 {
            return plan_err!("{USAGE}: takes 1 or 2 arguments, got {}", vals.len());
        }
        let source = record_source(&vals, USAGE, 1)?;
        Ok(Arc::new(RecordsTable { source }))
    }
}

/// The records of a source, building only the columns a query reads.
#[derive(Debug)]
struct RecordsTable {
    source: RecordSource,
}

#[async_trait::async_trait]
impl TableProvider for RecordsTable {
    fn schema(&self) -> SchemaRef {
        RECORDS.clone()
    }

    fn table_type(&self) -> datafusion::logical_expr::TableType {
        datafusion::logical_expr::TableType::Temporary
    }

    async fn scan(
        &self,
        _state: &dyn datafusion::catalog::Session,
        projection: Option<&Vec<usize>>,
        _filters: &[datafusion::logical_expr::Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
        let schema = match projection {
            Some(p) => Arc::new(RECORDS.project(p)?),
            None => RECORDS.clone(),
        };
        let mut source = self.source.clone();
        source.fields =
            crate::records::Fields::of_columns(schema.fields().iter().map(|f| f.name().as_str()));
        let part = RecordsPartition {
            source,
            schema: schema.clone(),
        };
        Ok(Arc::new(StreamingTableExec::try_new(
            schema,
            vec![Arc::new(part)],
            None,
            Vec::<datafusion::physical_expr::LexOrdering>::new(),
            false,
            limit,
        )?))
    }
}

struct RecordsPartition {
    source: RecordSource,
    schema: SchemaRef,
}

impl fmt::Debug for RecordsPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordsPartition")
            .field("exports", &self.source.exports.spec)
            .finish()
    }
}

impl PartitionStream for RecordsPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let schema = self.schema.clone();
        let stream = self
            .source
            .records()
            .map(move |r| {
                let (settled, rows) = r.map_err(DataFusionError::from)?;
                records_batch(&rows, &settled, &schema)
            })
            .boxed();
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream))
    }
}
