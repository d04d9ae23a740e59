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
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
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

/// One batch of records with what the first pass settled.
pub fn records_batch(rows: &[(Record, Outcome)], settled: &Settled) -> Result<RecordBatch> {
    let n = rows.len();
    let text = || StringBuilder::with_capacity(n, n * 16);
    let (mut id, mut export, mut format, mut database, mut ty, mut title) =
        (text(), text(), text(), text(), text(), text());
    let (mut venue, mut volume, mut issue, mut pages, mut doi, mut pmid) =
        (text(), text(), text(), text(), text(), text());
    let (mut abs, mut url, mut file_path, mut dup, mut dup_rule, mut matched) =
        (text(), text(), text(), text(), text(), text());
    let (mut match_rule, mut status, mut note) = (text(), text(), text());
    let mut line = Int64Builder::with_capacity(n);
    let mut year = Int32Builder::with_capacity(n);
    let mut authors = ListBuilder::new(StringBuilder::new());
    let mut keywords = ListBuilder::new(StringBuilder::new());
    let mut extra = MapBuilder::new(
        None,
        StringBuilder::new(),
        ListBuilder::new(StringBuilder::new()),
    );
    for (r, o) in rows {
        id.append_value(&r.record_id);
        export.append_value(&r.export);
        line.append_option((r.line > 0).then_some(r.line as i64));
        format.append_option(r.format.map(|f| f.as_str()));
        database.append_value(&r.database);
        ty.append_option(r.ty.as_deref());
        title.append_option(r.title.as_deref());
        for a in &r.authors {
            authors.values().append_value(a);
        }
        authors.append(true);
        year.append_option(r.year);
        venue.append_option(r.venue.as_deref());
        volume.append_option(r.volume.as_deref());
        issue.append_option(r.issue.as_deref());
        pages.append_option(r.pages.as_deref());
        doi.append_option(r.doi.as_deref());
        pmid.append_option(r.pmid.as_deref());
        abs.append_option(r.abstract_text.as_deref());
        for k in &r.keywords {
            keywords.values().append_value(k);
        }
        keywords.append(true);
        url.append_option(r.url.as_deref());
        file_path.append_option(r.file_path.as_deref());
        for (k, vs) in &r.extra {
            extra.keys().append_value(k);
            for v in vs {
                extra.values().values().append_value(v);
            }
            extra.values().append(true);
        }
        extra.append(true)?;
        dup.append_option(o.duplicate_of.as_ref().map(|(d, _)| d.as_str()));
        dup_rule.append_option(o.duplicate_of.as_ref().map(|(_, r)| *r));
        matched.append_option(o.matched.map(|(f, _)| settled.files[f].0.source.as_str()));
        match_rule.append_option(o.matched.map(|(_, r)| r));
        status.append_value(r.status.map_or("failed", |s| s.as_str()));
        let n = match (&o.duplicate_of, &r.note) {
            (_, Some(n)) => Some(n.clone()),
            (Some(_), None) => None,
            (None, None) => o.match_note.clone(),
        };
        note.append_option(n);
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(id.finish()),
        Arc::new(export.finish()),
        Arc::new(line.finish()),
        Arc::new(format.finish()),
        Arc::new(database.finish()),
        Arc::new(ty.finish()),
        Arc::new(title.finish()),
        Arc::new(authors.finish()),
        Arc::new(year.finish()),
        Arc::new(venue.finish()),
        Arc::new(volume.finish()),
        Arc::new(issue.finish()),
        Arc::new(pages.finish()),
        Arc::new(doi.finish()),
        Arc::new(pmid.finish()),
        Arc::new(abs.finish()),
        Arc::new(keywords.finish()),
        Arc::new(url.finish()),
        Arc::new(file_path.finish()),
        Arc::new(extra.finish()),
        Arc::new(dup.finish()),
        Arc::new(dup_rule.finish()),
        Arc::new(matched.finish()),
        Arc::new(match_rule.finish()),
        Arc::new(status.finish()),
        Arc::new(note.finish()),
    ];
    // The builders' own field names are the schema's.
    let schema = RECORDS.clone();
    let cols = cols
        .into_iter()
        .zip(schema.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c)
            } else {
                datafusion::arrow::compute::cast(&c, f.data_type()).map_err(|e| {
                    DataFusionError::Execution(format!("records: column {}: {e}", f.name()))
                })
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new(schema, cols)?)
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
        let part = RecordsPartition { source };
        Ok(Arc::new(StreamingTable::try_new(
            RECORDS.clone(),
            vec![Arc::new(part)],
        )?))
    }
}

struct RecordsPartition {
    source: RecordSource,
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
        &RECORDS
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let source = self.source.clone();
        let stream = source
            .records()
            .map(|r| {
                let (settled, rows) = r.map_err(DataFusionError::from)?;
                records_batch(&rows, &settled)
            })
            .boxed();
        Box::pin(RecordBatchStreamAdapter::new(RECORDS.clone(), stream))
    }
}
