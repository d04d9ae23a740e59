//! The Arrow schemas of the `documents`, `inventory`, `blocks` and `chunks`
//! tables, and the builders that turn ingested documents into batches.

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, BooleanBuilder, Float32Builder, Int32Array,
    Int32Builder, Int64Builder, ListArray, RecordBatch, StringArray, StringBuilder, StructArray,
    TimestampMillisecondBuilder,
};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};

use crate::error::Result;
use crate::ingest::cleaners::ALL as ALL_CLEANERS;
use crate::ingest::{Block, CharIndex, Document};
use crate::segment::Segmented;

fn cell_fields() -> Fields {
    Fields::from(vec![
        Field::new("row", DataType::Int32, false),
        Field::new("col", DataType::Int32, false),
        Field::new("row_span", DataType::Int32, false),
        Field::new("col_span", DataType::Int32, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("indent", DataType::Int32, false),
        Field::new("bold", DataType::Boolean, false),
    ])
}

fn cells_type() -> DataType {
    DataType::List(Arc::new(Field::new(
        "item",
        DataType::Struct(cell_fields()),
        true,
    )))
}

fn chars_removed_fields() -> Fields {
    Fields::from(
        ALL_CLEANERS
            .iter()
            .map(|c| Field::new(c.name(), DataType::Int64, true))
            .collect::<Vec<_>>(),
    )
}

fn ts() -> DataType {
    DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
}

/// `documents`: one row per file read (or refused).
pub static DOCUMENTS: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        Field::new("document_id", DataType::Utf8, true),
        Field::new("source", DataType::Utf8, false),
        Field::new("folder", DataType::Utf8, false),
        Field::new("file_name", DataType::Utf8, false),
        Field::new("ext", DataType::Utf8, false),
        Field::new("extractor", DataType::Utf8, true),
        Field::new("bytes", DataType::Int64, false),
        Field::new("modified", ts(), true),
        Field::new("pages", DataType::Int32, true),
        Field::new("blocks", DataType::Int32, false),
        Field::new("tokens", DataType::Int64, true),
        Field::new(
            "chars_removed",
            DataType::Struct(chars_removed_fields()),
            true,
        ),
        Field::new("status", DataType::Utf8, false),
        Field::new("duplicate_of", DataType::Utf8, true),
        Field::new("error", DataType::Utf8, true),
        Field::new("cached", DataType::Boolean, false),
        Field::new("text", DataType::Utf8, true),
    ]))
});

/// The `documents` columns `inventory` shows, in order; `error` is shown as `note`.
const INVENTORY_COLUMNS: [&str; 13] = [
    "source",
    "folder",
    "file_name",
    "ext",
    "extractor",
    "bytes",
    "modified",
    "status",
    "pages",
    "tokens",
    "document_id",
    "duplicate_of",
    "error",
];

/// `inventory`: every file under a source, read or not, with no model call.
pub static INVENTORY: LazyLock<SchemaRef> = LazyLock::new(|| {
    let fields: Vec<Field> = INVENTORY_COLUMNS
        .iter()
        .filter_map(|name| DOCUMENTS.field_with_name(name).ok())
        .map(|f| {
            if f.name() == "error" {
                f.clone().with_name("note")
            } else {
                f.clone()
            }
        })
        .collect();
    Arc::new(Schema::new(fields))
});

/// `blocks`: the typed blocks of every document read.
pub static BLOCKS: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        Field::new("document_id", DataType::Utf8, false),
        Field::new("block_id", DataType::Int32, false),
        Field::new("page", DataType::Int32, true),
        Field::new("section", DataType::Utf8, true),
        Field::new("kind", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("char_start", DataType::Int64, false),
        Field::new("char_end", DataType::Int64, false),
        Field::new("cells", cells_type(), true),
        Field::new("ocr_confidence", DataType::Float32, true),
    ]))
});

/// `chunks`: the segments of every document read.
pub static CHUNKS: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        Field::new("document_id", DataType::Utf8, false),
        Field::new("segmentation", DataType::Utf8, false),
        Field::new("chunk_id", DataType::Int32, false),
        Field::new("method", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("tokens", DataType::Int64, false),
        Field::new("char_start", DataType::Int64, false),
        Field::new("char_end", DataType::Int64, false),
        Field::new("page_start", DataType::Int32, true),
        Field::new("page_end", DataType::Int32, true),
        Field::new("section", DataType::Utf8, true),
    ]))
});

/// `evidence(src, protocol)` and the store's `evidence` table: one row per
/// supported cell.
pub static EVIDENCE: LazyLock<SchemaRef> = LazyLock::new(|| {
    let s = |n: &str| Field::new(n, DataType::Utf8, true);
    Arc::new(Schema::new(vec![
        s("document_id"),
        s("field"),
        s("value"),
        Field::new("chunk_id", DataType::Int32, true),
        Field::new("page", DataType::Int32, true),
        s("section"),
        s("quote"),
        Field::new("char_start", DataType::Int64, true),
        Field::new("char_end", DataType::Int64, true),
        Field::new("verified", DataType::Boolean, true),
        Field::new("match", DataType::Float64, true),
        s("protocol_hash"),
    ]))
});

/// `screen(src, protocol)` and the store's `screening` table: one row per
/// document.
pub static SCREENING: LazyLock<SchemaRef> = LazyLock::new(|| {
    let s = |n: &str| Field::new(n, DataType::Utf8, true);
    Arc::new(Schema::new(vec![
        s("document_id"),
        s("source"),
        s("decision"),
        s("reason"),
        s("criterion"),
        s("quote"),
        Field::new("verified", DataType::Boolean, true),
        Field::new("match", DataType::Float64, true),
        s("status"),
        s("error"),
        s("duplicate_of"),
        s("protocol_hash"),
    ]))
});

/// The element type of the `segment(...)` scalar's list.
pub fn segment_struct_fields() -> Fields {
    Fields::from(vec![
        Field::new("chunk_id", DataType::Int32, false),
        Field::new("method", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("tokens", DataType::Int64, false),
        Field::new("char_start", DataType::Int64, false),
        Field::new("char_end", DataType::Int64, false),
    ])
}

fn chars_removed_array(docs: &[&Document]) -> Result<ArrayRef> {
    let fields = chars_removed_fields();
    let mut cols: Vec<ArrayRef> = Vec::new();
    for c in ALL_CLEANERS {
        let mut b = Int64Builder::new();
        for d in docs {
            b.append_option(d.chars_removed.get(c.name()).map(|&n| n as i64));
        }
        cols.push(Arc::new(b.finish()));
    }
    let nulls: Vec<bool> = docs.iter().map(|d| !d.chars_removed.is_empty()).collect();
    Ok(Arc::new(StructArray::try_new(
        fields,
        cols,
        Some(nulls.into()),
    )?))
}

/// A `documents` batch.
pub fn documents_batch(docs: &[&Document]) -> Result<RecordBatch> {
    let mut id = StringBuilder::new();
    let mut source = StringBuilder::new();
    let mut folder = StringBuilder::new();
    let mut name = StringBuilder::new();
    let mut ext = StringBuilder::new();
    let mut extractor = StringBuilder::new();
    let mut bytes = Int64Builder::new();
    let mut modified = TimestampMillisecondBuilder::new().with_timezone("UTC");
    let mut pages = Int32Builder::new();
    let mut blocks = Int32Builder::new();
    let mut tokens = Int64Builder::new();
    let mut status = StringBuilder::new();
    let mut dup = StringBuilder::new();
    let mut error = StringBuilder::new();
    let mut cached = BooleanBuilder::new();
    let mut text = StringBuilder::new();
    for d in docs {
        id.append_option(d.document_id.as_deref());
        source.append_value(&d.entry.source);
        folder.append_value(&d.entry.folder);
        name.append_value(&d.entry.file_name);
        ext.append_value(&d.entry.ext);
        extractor.append_option(d.extractor.as_deref());
        bytes.append_value(d.entry.bytes as i64);
        modified.append_option(d.entry.modified_ms);
        pages.append_option(d.pages.map(|p| p as i32));
        blocks.append_value(d.blocks.len() as i32);
        tokens.append_option(d.tokens.map(|t| t as i64));
        status.append_value(d.status.as_str());
        dup.append_option(d.duplicate_of.as_deref());
        error.append_option(d.error.as_deref());
        cached.append_value(d.cached);
        text.append_option((!d.text.is_empty()).then_some(d.text.as_str()));
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(id.finish()),
        Arc::new(source.finish()),
        Arc::new(folder.finish()),
        Arc::new(name.finish()),
        Arc::new(ext.finish()),
        Arc::new(extractor.finish()),
        Arc::new(bytes.finish()),
        Arc::new(modified.finish()),
        Arc::new(pages.finish()),
        Arc::new(blocks.finish()),
        Arc::new(tokens.finish()),
        chars_removed_array(docs)?,
        Arc::new(status.finish()),
        Arc::new(dup.finish()),
        Arc::new(error.finish()),
        Arc::new(cached.finish()),
        Arc::new(text.finish()),
    ];
    Ok(RecordBatch::try_new(DOCUMENTS.clone(), cols)?)
}

/// An `inventory` batch: the survey columns of the `documents` batch, with
/// `error` shown as `note` (for unread files it says what to do).
pub fn inventory_batch(docs: &[&Document]) -> Result<RecordBatch> {
    let full = documents_batch(docs)?;
    let cols: Vec<ArrayRef> = INVENTORY
        .fields()
        .iter()
        .map(|f| {
            let name = if f.name() == "note" {
                "error"
            } else {
                f.name().as_str()
            };
            full.column_by_name(name).cloned().ok_or_else(|| {
                crate::error::QuarryError::Invalid(format!("documents has no column {name}"))
            })
        })
        .collect::<Result<_>>()?;
    Ok(RecordBatch::try_new(INVENTORY.clone(), cols)?)
}

/// A `blocks` batch for one document (empty for a document without text).
pub fn blocks_batch(doc: &Document) -> Result<RecordBatch> {
    let id = doc.document_id.as_deref().unwrap_or_default();
    let ix = CharIndex::new(&doc.text);
    let n = doc.blocks.len();
    let mut ids = StringBuilder::new();
    let mut bid = Int32Builder::new();
    let mut page = Int32Builder::new();
    let mut section = StringBuilder::new();
    let mut kind = StringBuilder::new();
    let mut text = StringBuilder::new();
    let mut cs = Int64Builder::new();
    let mut ce = Int64Builder::new();
    let mut conf = Float32Builder::new();
    for (i, b) in doc.blocks.iter().enumerate() {
        ids.append_value(id);
        bid.append_value(i as i32);
        page.append_option(b.page.map(|p| p as i32));
        section.append_option(b.section.as_deref());
        kind.append_value(b.kind.as_str());
        text.append_value(doc.block_text(b));
        cs.append_value(ix.char_of(b.start) as i64);
        ce.append_value(ix.char_of(b.end) as i64);
        conf.append_option(b.confidence);
    }
    let cells = cells_array(&doc.blocks)?;
    debug_assert_eq!(cells.len(), n);
    let cols: Vec<ArrayRef> = vec![
        Arc::new(ids.finish()),
        Arc::new(bid.finish()),
        Arc::new(page.finish()),
        Arc::new(section.finish()),
        Arc::new(kind.finish()),
        Arc::new(text.finish()),
        Arc::new(cs.finish()),
        Arc::new(ce.finish()),
        cells,
        Arc::new(conf.finish()),
    ];
    Ok(RecordBatch::try_new(BLOCKS.clone(), cols)?)
}

fn cells_array(blocks: &[Block]) -> Result<ArrayRef> {
    let (mut row, mut col, mut rs, mut cs, mut indent) = (vec![], vec![], vec![], vec![], vec![]);
    let mut text = StringBuilder::new();
    let mut bold = vec![];
    let mut offsets = vec![0i32];
    let mut valid = vec![];
    for b in blocks {
        for c in &b.cells {
            row.push(c.row as i32);
            col.push(c.col as i32);
            rs.push(c.row_span as i32);
            cs.push(c.col_span as i32);
            indent.push(c.indent as i32);
            text.append_value(&c.text);
            bold.push(c.bold);
        }
        offsets.push(row.len() as i32);
        valid.push(!b.cells.is_empty());
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(row)),
        Arc::new(Int32Array::from(col)),
        Arc::new(Int32Array::from(rs)),
        Arc::new(Int32Array::from(cs)),
        Arc::new(text.finish()),
        Arc::new(Int32Array::from(indent)),
        Arc::new(BooleanArray::from(bold)),
    ];
    let structs = StructArray::try_new(cell_fields(), cols, None)?;
    let field = Arc::new(Field::new("item", DataType::Struct(cell_fields()), true));
    Ok(Arc::new(ListArray::try_new(
        field,
        OffsetBuffer::new(offsets.into()),
        Arc::new(structs),
        Some(valid.into()),
    )?))
}

/// Reads cells back from a `blocks` batch (for the ingest cache).
pub fn cells_from(batch: &RecordBatch, row: usize) -> Vec<crate::ingest::Cell> {
    let Some(list) = batch
        .column_by_name("cells")
        .and_then(|c| c.as_list_opt::<i32>())
    else {
        return Vec::new();
    };
    if list.is_null(row) {
        return Vec::new();
    }
    let v = list.value(row);
    let s = v.as_struct();
    let i32s = |i: usize| {
        s.column(i)
            .as_primitive::<datafusion::arrow::datatypes::Int32Type>()
            .clone()
    };
    let (r, c, rs, cs, ind) = (i32s(0), i32s(1), i32s(2), i32s(3), i32s(5));
    let text = s.column(4).as_string::<i32>();
    let bold = s.column(6).as_boolean();
    (0..s.len())
        .map(|k| crate::ingest::Cell {
            row: r.value(k) as u32,
            col: c.value(k) as u32,
            row_span: rs.value(k) as u32,
            col_span: cs.value(k) as u32,
            text: text.value(k).to_string(),
            indent: ind.value(k) as u32,
            bold: bold.value(k),
        })
        .collect()
}

/// A `chunks` batch for one document's segmentation.
pub fn chunks_batch(doc: &Document, seg: &Segmented, segmentation: &str) -> Result<RecordBatch> {
    let id = doc.document_id.as_deref().unwrap_or_default();
    let ix = CharIndex::new(&doc.text);
    let mut ids = StringBuilder::new();
    let mut sh = StringBuilder::new();
    let mut cid = Int32Builder::new();
    let mut method = StringBuilder::new();
    let mut text = StringBuilder::new();
    let mut tokens = Int64Builder::new();
    let mut cs = Int64Builder::new();
    let mut ce = Int64Builder::new();
    let mut ps = Int32Builder::new();
    let mut pe = Int32Builder::new();
    let mut section = StringBuilder::new();
    for (i, c) in seg.chunks.iter().enumerate() {
        ids.append_value(id);
        sh.append_value(segmentation);
        cid.append_value(i as i32);
        method.append_value(&seg.method);
        text.append_value(c.text(&doc.text));
        tokens.append_value(c.tokens as i64);
        cs.append_value(ix.char_of(c.start) as i64);
        ce.append_value(ix.char_of(c.end) as i64);
        ps.append_option(c.page_start.map(|p| p as i32));
        pe.append_option(c.page_end.map(|p| p as i32));
        section.append_option(c.section.as_deref());
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(ids.finish()),
        Arc::new(sh.finish()),
        Arc::new(cid.finish()),
        Arc::new(method.finish()),
        Arc::new(text.finish()),
        Arc::new(tokens.finish()),
        Arc::new(cs.finish()),
        Arc::new(ce.finish()),
        Arc::new(ps.finish()),
        Arc::new(pe.finish()),
        Arc::new(section.finish()),
    ];
    Ok(RecordBatch::try_new(CHUNKS.clone(), cols)?)
}

/// The text column of a batch as `Utf8`, whatever string type it holds.
pub fn strings(batch: &RecordBatch, name: &str) -> Option<StringArray> {
    let col = batch.column_by_name(name)?;
    datafusion::arrow::compute::cast(col, &DataType::Utf8)
        .ok()
        .map(|a| a.as_string::<i32>().clone())
}

fn text(n: &str) -> Field {
    Field::new(n, DataType::Utf8, true)
}

fn float(n: &str) -> Field {
    Field::new(n, DataType::Float64, true)
}

fn list_of(n: &str, item: DataType) -> Field {
    Field::new(
        n,
        DataType::List(Arc::new(Field::new("item", item, true))),
        true,
    )
}

/// A claim's quantity: the number as the paper writes it.
pub fn quantity_type() -> DataType {
    DataType::Struct(Fields::from(vec![
        text("verbatim"),
        float("value"),
        text("unit_text"),
        text("qualifier"),
        text("uncertainty"),
    ]))
}

/// A claim's statistics, each optional.
pub fn statistics_type() -> DataType {
    DataType::Struct(Fields::from(vec![
        float("effect_size"),
        text("effect_kind"),
        float("ci_lower"),
        float("ci_upper"),
        float("ci_level"),
        float("p_value"),
        float("test_statistic"),
        text("test_kind"),
        list_of("group_sizes", DataType::Int64),
    ]))
}

/// A claim's context: key-value pairs, sorted by key.
pub fn context_type() -> DataType {
    DataType::List(Arc::new(Field::new(
        "item",
        DataType::Struct(Fields::from(vec![text("key"), text("value")])),
        true,
    )))
}

/// One draft as `claim_drafts(...)` reads it (see `review::claims::Drafted`).
pub fn drafted_fields() -> Fields {
    Fields::from(vec![
        text("code"),
        text("claim_id"),
        text("kind"),
        text("subject"),
        text("predicate"),
        text("object"),
        text("polarity"),
        Field::new("quantity", quantity_type(), true),
        Field::new("statistics", statistics_type(), true),
        Field::new("context", context_type(), true),
        text("quote"),
        Field::new("char_start", DataType::Int64, true),
        Field::new("char_end", DataType::Int64, true),
        float("match"),
        text("draft"),
        list_of("problems", DataType::Utf8),
        Field::new("ordinal", DataType::Int32, true),
    ])
}

/// The rows of a claims run and of the store's claims table: claims and
/// rejections (`code` NULL for a claim), every column nullable.
pub static CLAIM_ROWS: LazyLock<SchemaRef> = LazyLock::new(|| {
    let span = DataType::Struct(Fields::from(vec![
        text("document_id"),
        Field::new("char_start", DataType::Int64, true),
        Field::new("char_end", DataType::Int64, true),
        text("quote"),
        float("match"),
    ]));
    let stamp = DataType::Struct(Fields::from(vec![
        text("model"),
        text("prompt_hash"),
        text("schema_hash"),
        text("spec_hash"),
        text("release"),
    ]));
    Arc::new(Schema::new(vec![
        text("claim_id"),
        text("document_id"),
        text("source"),
        text("spec"),
        Field::new("chunk_id", DataType::Int32, true),
        Field::new("ordinal", DataType::Int32, true),
        text("code"),
        text("kind"),
        text("subject"),
        text("predicate"),
        text("object"),
        text("polarity"),
        Field::new("quantity", quantity_type(), true),
        Field::new("statistics", statistics_type(), true),
        Field::new("context", context_type(), true),
        Field::new("span", span, true),
        Field::new("page", DataType::Int32, true),
        text("section"),
        Field::new("stamp", stamp, true),
        text("draft"),
        list_of("problems", DataType::Utf8),
        Field::new("revision", DataType::Int64, true),
    ]))
});

/// The columns the `claims` table shows.
pub const CLAIM_COLUMNS: &[&str] = &[
    "claim_id",
    "document_id",
    "source",
    "spec",
    "kind",
    "subject",
    "predicate",
    "object",
    "polarity",
    "quantity",
    "statistics",
    "context",
    "span",
    "page",
    "section",
    "stamp",
    "revision",
];

/// The columns the `rejections` table shows.
pub const REJECTION_COLUMNS: &[&str] = &[
    "document_id",
    "source",
    "spec",
    "chunk_id",
    "ordinal",
    "code",
    "draft",
    "problems",
    "span",
    "page",
    "stamp",
    "revision",
];

/// A batch with the declared schema's column types.
pub fn conform(batch: RecordBatch, schema: &SchemaRef) -> datafusion::common::Result<RecordBatch> {
    if batch.schema().fields() == schema.fields() {
        return Ok(batch);
    }
    let cols = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else {
                Ok(datafusion::arrow::compute::cast(c, f.data_type())?)
            }
        })
        .collect::<datafusion::common::Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        cols,
        &datafusion::arrow::record_batch::RecordBatchOptions::new()
            .with_row_count(Some(batch.num_rows())),
    )?)
}

/// The columns every stored write-up table starts with: which write-up a
/// row belongs to (a digest of the source, the protocol, and the options
/// that change what is written), the source, the protocol's hash, those
/// options as given, and when it was written.
fn synthesis_key() -> Vec<Field> {
    vec![
        text("synthesis_id"),
        text("src"),
        text("protocol_hash"),
        text("options"),
        Field::new("written_at", ts(), true),
    ]
}

fn synthesis_table(rest: Vec<Field>) -> SchemaRef {
    let mut fields = synthesis_key();
    fields.extend(rest);
    Arc::new(Schema::new(fields))
}

/// The store's `synthesis_sections`: a write-up's sections, as
/// `synthesise(...)` gives them.
pub static SYNTHESIS_SECTIONS: LazyLock<SchemaRef> = LazyLock::new(|| {
    synthesis_table(vec![
        Field::new("section", DataType::Int64, true),
        text("heading"),
        list_of("claim_ids", DataType::Utf8),
        text("text_marked"),
        Field::new("partial", DataType::Boolean, true),
        list_of("unknown_markers", DataType::Int64),
        text("notes"),
    ])
});

/// The store's `synthesis_review`: the whole write-up, as `synthesis(...)`
/// gives it.
pub static SYNTHESIS_REVIEW: LazyLock<SchemaRef> = LazyLock::new(|| {
    synthesis_table(vec![
        text("text"),
        text("text_marked"),
        text("draft"),
        Field::new("author_year", DataType::Boolean, true),
        Field::new("partial", DataType::Boolean, true),
        text("note"),
    ])
});

/// The store's `synthesis_coherence`: the coherence passes, as
/// `synthesis_coherence(...)` gives them.
pub static SYNTHESIS_COHERENCE: LazyLock<SchemaRef> = LazyLock::new(|| {
    synthesis_table(vec![
        text("pass"),
        Field::new("step", DataType::Int64, true),
        Field::new("kept", DataType::Boolean, true),
        text("reason"),
    ])
});

/// The store's `synthesis_citations`: each study a write-up cites, as
/// `synthesis_citations(...)` gives them.
pub static SYNTHESIS_CITATIONS: LazyLock<SchemaRef> = LazyLock::new(|| {
    synthesis_table(vec![
        text("marker"),
        Field::new("study", DataType::Int64, true),
        text("document_id"),
        text("source"),
        text("record_id"),
        text("reference"),
    ])
});

/// The store's `synthesis_claims`: the claims a write-up's sections argue,
/// one row per claim and study, as `synthesis_claims(...)` gives them.
pub static SYNTHESIS_CLAIMS: LazyLock<SchemaRef> = LazyLock::new(|| {
    synthesis_table(vec![
        Field::new("section", DataType::Int64, true),
        text("claim_id"),
        text("claim"),
        text("moderator"),
        Field::new("study", DataType::Int64, true),
        text("role"),
        text("document_id"),
        text("source"),
        Field::new("cited", DataType::Boolean, true),
    ])
});

/// The store's `synthesis_outline`: the outline a write-up used, as
/// `synthesis_outline(...)` gives it.
pub static SYNTHESIS_OUTLINE: LazyLock<SchemaRef> = LazyLock::new(|| {
    synthesis_table(vec![
        Field::new("section", DataType::Int64, true),
        text("heading"),
        text("brief"),
        list_of("claim_ids", DataType::Utf8),
        text("note"),
        text("entry"),
    ])
});
