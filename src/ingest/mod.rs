//! Ingestion: bytes of one file → typed blocks (with page, section, kind and
//! table cells) → cleaned text with offsets and a `document_id`.

pub mod cleaners;
pub mod csv;
pub mod docx;
pub mod html;
pub mod jats;
pub mod md;
pub mod ocr;
pub mod pdf;
pub mod sniff;
pub mod txt;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::source::Entry;
use cleaners::CleanerSet;
use quarry_udfs::Tokenizer;

/// The version of the extractors and cleaners: part of every ingest cache
/// key, so a changed extractor never serves stale text.
pub const INGEST_VERSION: &str = "ingest-4";

/// How many files have been parsed by this process (cache hits excluded).
pub static PARSE_COUNT: AtomicU64 = AtomicU64::new(0);

/// What a block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockKind {
    /// A heading; it opens the section it names.
    Heading,
    /// Running text.
    Paragraph,
    /// One list item.
    List,
    /// A table, with its cells.
    Table,
    /// A footnote or endnote, placed after the text citing it.
    Footnote,
    /// A figure or table caption.
    Caption,
}

impl BlockKind {
    /// The name used in the `kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Heading => "heading",
            Self::Paragraph => "paragraph",
            Self::List => "list",
            Self::Table => "table",
            Self::Footnote => "footnote",
            Self::Caption => "caption",
        }
    }

    /// Parses a `kind` column value.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "heading" => Self::Heading,
            "paragraph" => Self::Paragraph,
            "list" => Self::List,
            "table" => Self::Table,
            "footnote" => Self::Footnote,
            "caption" => Self::Caption,
            _ => return None,
        })
    }
}

/// One table cell.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Cell {
    /// Row index, from 0.
    pub row: u32,
    /// Column index, from 0 (spans counted).
    pub col: u32,
    /// Rows spanned (1 for a plain cell).
    pub row_span: u32,
    /// Columns spanned.
    pub col_span: u32,
    /// The cell's text.
    pub text: String,
    /// Indentation level of the text (leading spaces, or the source's indent).
    pub indent: u32,
    /// Whether the cell is bold (or a header cell).
    pub bold: bool,
}

/// A block as an extractor produces it.
#[derive(Debug, Clone, PartialEq)]
pub struct RawBlock {
    /// Its kind.
    pub kind: BlockKind,
    /// Its text (tables: one line per row, cells separated by " | ").
    pub text: String,
    /// The page, from 1, where the source has pages.
    pub page: Option<u32>,
    /// The nearest heading above it, where the source has headings.
    pub section: Option<String>,
    /// Table cells (tables only).
    pub cells: Vec<Cell>,
    /// The mean confidence (0 to 1) of its words where OCR read it.
    pub confidence: Option<f32>,
}

impl RawBlock {
    /// A block of `kind` with no page, section or cells.
    pub fn new(kind: BlockKind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            page: None,
            section: None,
            cells: Vec::new(),
            confidence: None,
        }
    }
}

/// How many columns a table's cells take (spans counted).
pub fn table_columns(cells: &[Cell]) -> u32 {
    cells.iter().map(|c| c.col + c.col_span).max().unwrap_or(0)
}

/// A table's block text: one line per row, cells joined by " | ".
pub fn table_text(cells: &[Cell]) -> String {
    let mut rows: BTreeMap<u32, Vec<&Cell>> = BTreeMap::new();
    for c in cells {
        rows.entry(c.row).or_default().push(c);
    }
    rows.values()
        .map(|r| {
            let mut r = r.clone();
            r.sort_by_key(|c| c.col);
            r.iter()
                .map(|c| c.text.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A table cell before it is placed on the grid.
#[derive(Debug, Clone, Default)]
pub struct GridCell {
    /// Its text.
    pub text: String,
    /// Rows spanned (at least 1).
    pub row_span: u32,
    /// Columns spanned (at least 1).
    pub col_span: u32,
    /// Bold or a header cell.
    pub bold: bool,
    /// Indentation level.
    pub indent: u32,
}

/// Places rows of cells on a grid: each cell takes the first column not
/// held by a `rowspan` from a row above, so column indexes count spans.
/// A `colspan` of 0 (HTML 4's "to the end of the row", which converted
/// tables write for a header over a group of columns) spans the columns
/// its row leaves over, shared evenly when the row has several such cells.
pub fn grid(mut rows: Vec<Vec<GridCell>>) -> Vec<Cell> {
    if rows.iter().flatten().any(|g| g.col_span == 0) {
        let width = table_columns(&place(&rows));
        let free = free_columns(&rows, width);
        for (row, free) in rows.iter_mut().zip(free) {
            let zero = row.iter().filter(|g| g.col_span == 0).count() as u32;
            if zero == 0 {
                continue;
            }
            let taken: u32 = row.iter().map(|g| g.col_span).sum();
            let left = free.saturating_sub(taken);
            for (k, g) in row.iter_mut().filter(|g| g.col_span == 0).enumerate() {
                // The first cells take the remainder.
                g.col_span = (left / zero + u32::from((k as u32) < left % zero)).max(1);
            }
        }
    }
    place(&rows)
}

/// For each row, the columns of a table `width` wide that no rowspan from
/// a row above holds.
fn free_columns(rows: &[Vec<GridCell>], width: u32) -> Vec<u32> {
    let cells = place(rows);
    (0..rows.len() as u32)
        .map(|r| {
            let held: u32 = cells
                .iter()
                .filter(|c| c.row < r && c.row + c.row_span > r)
                .map(|c| c.col_span)
                .sum();
            width.saturating_sub(held)
        })
        .collect()
}

/// Places rows on a grid, a span of 0 taken as 1.
fn place(rows: &[Vec<GridCell>]) -> Vec<Cell> {
    let mut cells = Vec::new();
    // Columns still occupied by a rowspan from above: col -> rows left.
    let mut occupied: Vec<u32> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let mut c = 0u32;
        for g in row {
            while (c as usize) < occupied.len() && occupied[c as usize] > 0 {
                c += 1;
            }
            let (rs, cs) = (g.row_span.max(1), g.col_span.max(1));
            cells.push(Cell {
                row: r as u32,
                col: c,
                row_span: rs,
                col_span: cs,
                text: g.text.clone(),
                indent: g.indent,
                bold: g.bold,
            });
            let end = (c + cs) as usize;
            if occupied.len() < end {
                occupied.resize(end, 0);
            }
            for slot in &mut occupied[c as usize..end] {
                *slot = rs;
            }
            c += cs;
        }
        for slot in &mut occupied {
            *slot = slot.saturating_sub(1);
        }
    }
    cells
}

/// What an extractor gives back.
#[derive(Debug, Default)]
pub struct Extracted {
    /// Blocks in reading order.
    pub blocks: Vec<RawBlock>,
    /// Number of pages, where the format has pages.
    pub pages: Option<u32>,
    /// The extractor's name.
    pub extractor: &'static str,
    /// Warnings about parts that could not be read (pages without a text
    /// layer, fonts without Unicode): kept in the document's `error` column.
    pub notes: Vec<String>,
    /// Characters the extractor itself dropped, by step (merged into the
    /// cleaner log).
    pub removed: BTreeMap<String, u64>,
}

/// A block of a cleaned document, with offsets into its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// Its kind.
    pub kind: BlockKind,
    /// Page, from 1, where known.
    pub page: Option<u32>,
    /// Section, where known.
    pub section: Option<String>,
    /// Byte offset of the block in the document text.
    pub start: usize,
    /// Byte offset of its end (exclusive).
    pub end: usize,
    /// Table cells.
    pub cells: Vec<Cell>,
    /// OCR's mean word confidence (0 to 1) where OCR read the block.
    pub confidence: Option<f32>,
}

/// A document's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Read, with text.
    Ok,
    /// Could not be read; `error` says why and what to do.
    Failed,
    /// The same cleaned text as an earlier document; not read again.
    Duplicate,
    /// No extractor for this kind of file.
    NoExtractor,
    /// Read, but there is no text in it.
    NoText,
    /// Below the scanned depth (inventory only).
    NotScanned,
}

impl Status {
    /// The `status` column value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Duplicate => "duplicate",
            Self::NoExtractor => "no_extractor",
            Self::NoText => "no_text",
            Self::NotScanned => "not_scanned",
        }
    }
}

/// A file after ingestion: cleaned text, blocks, and how it went.
#[derive(Debug, Clone)]
pub struct Document {
    /// Where it came from.
    pub entry: Entry,
    /// The extractor used (or that would be used).
    pub extractor: Option<String>,
    /// How it went.
    pub status: Status,
    /// Why it failed, or a note.
    pub error: Option<String>,
    /// Hex SHA-256 of the cleaned text.
    pub document_id: Option<String>,
    /// The cleaned text: blocks joined by blank lines.
    pub text: String,
    /// Blocks with offsets into `text`.
    pub blocks: Vec<Block>,
    /// Number of pages, where the format has them.
    pub pages: Option<u32>,
    /// Characters removed by each cleaner that ran.
    pub chars_removed: BTreeMap<String, u64>,
    /// The document this one repeats.
    pub duplicate_of: Option<String>,
    /// The entry of the document this one repeats (to read it again).
    pub original: Option<Entry>,
    /// Whether the ingestion came from the store rather than a parse.
    pub cached: bool,
    /// Token count of `text`.
    pub tokens: Option<u64>,
}

impl Document {
    /// A document with no text and the given status.
    pub fn empty(
        entry: Entry,
        status: Status,
        extractor: Option<&str>,
        error: Option<String>,
    ) -> Self {
        Self {
            entry,
            extractor: extractor.map(str::to_string),
            status,
            error,
            document_id: None,
            text: String::new(),
            blocks: Vec::new(),
            pages: None,
            chars_removed: BTreeMap::new(),
            duplicate_of: None,
            original: None,
            cached: false,
            tokens: None,
        }
    }

    /// The text of one block.
    pub fn block_text(&self, b: &Block) -> &str {
        &self.text[b.start..b.end]
    }
}

/// Everything that changes what ingestion produces.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IngestSpec {
    /// The cleaners that run.
    pub cleaners: CleanerSet,
    /// Files larger than this fail without being read.
    pub max_bytes: u64,
    /// How tokens are counted.
    pub tokenizer: Tokenizer,
    /// When pages and images are read by OCR, and in which languages.
    pub ocr: ocr::OcrSpec,
}

impl Default for IngestSpec {
    fn default() -> Self {
        Self {
            cleaners: CleanerSet::default(),
            max_bytes: 256 * 1024 * 1024,
            tokenizer: Tokenizer::default(),
            ocr: ocr::OcrSpec::default(),
        }
    }
}

impl IngestSpec {
    /// A stable string of the spec, hashed into cache keys.
    pub fn fingerprint(&self) -> String {
        format!(
            "{INGEST_VERSION};clean={};max_bytes={};tok={};ocr={}:{}",
            self.cleaners.names().join("+"),
            self.max_bytes,
            self.tokenizer.name(),
            self.ocr.mode.as_str(),
            self.ocr.lang
        )
    }
}

/// The extractor for an extension, or why there is none.
pub fn extractor_for(ext: &str) -> Result<&'static str, String> {
    Ok(match ext {
        "txt" | "text" | "log" | "" => "txt",
        "csv" | "tsv" => "csv",
        "md" | "markdown" | "mdown" | "mkd" => "md",
        "html" | "htm" | "xhtml" => "html",
        "docx" => "docx",
        "pdf" => "pdf",
        "nxml" | "xml" => "jats",
        "png" | "jpg" | "jpeg" | "tif" | "tiff" | "bmp" | "gif" | "webp" | "jp2" => "image",
        "doc" => return Err("legacy Word .doc is not supported: save it as .docx (Word, LibreOffice: File > Save As)".into()),
        "rtf" => return Err("RTF is not supported: save it as .docx or .txt".into()),
        "odt" => return Err("OpenDocument .odt is not supported: save it as .docx".into()),
        other => return Err(format!("no extractor for .{other} files; supported: txt, csv, tsv, md, html, docx, pdf, nxml/xml (JATS), and images by OCR (png, jpg, tif, bmp, gif, webp, jp2)")),
    })
}

/// The extractor name shown for an extension: the one that reads it, or the
/// format's name for known formats without one yet (`pdf`, `doc`).
pub fn extractor_label(ext: &str) -> Option<&'static str> {
    match ext {
        "pdf" => Some("pdf"),
        "doc" => Some("doc"),
        _ => extractor_for(ext).ok(),
    }
}

/// Reads a local file and ingests it (benches and tools; corpus runs list
/// and read through the source layer).
pub fn ingest_file(path: &std::path::Path, spec: &IngestSpec) -> std::io::Result<Document> {
    let bytes = std::fs::read(path)?;
    Ok(ingest_bytes(
        Entry::local(path, bytes.len() as u64),
        &bytes,
        spec,
    ))
}

/// Reads one file's bytes into a document: sniff, extract, clean, hash.
/// Never panics outward and never fails: a problem is a `failed` row.
pub fn ingest_bytes(entry: Entry, bytes: &[u8], spec: &IngestSpec) -> Document {
    PARSE_COUNT.fetch_add(1, Ordering::Relaxed);
    let ext = entry.ext.clone();
    let extractor = match extractor_for(&ext) {
        Ok(x) => x,
        Err(msg) => {
            return Document::empty(entry, Status::NoExtractor, extractor_label(&ext), Some(msg));
        }
    };
    if bytes.is_empty() {
        return Document::empty(
            entry,
            Status::Failed,
            Some(extractor),
            Some("the file is empty (0 bytes): re-export it from its source or remove it".into()),
        );
    }
    if let Err(msg) = sniff::check(bytes, extractor, &ext) {
        return Document::empty(entry, Status::Failed, Some(extractor), Some(msg));
    }
    let result = std::panic::catch_unwind(|| match extractor {
        "txt" => txt::extract(bytes),
        "csv" => csv::extract(bytes, &ext),
        "md" => md::extract(bytes),
        "html" => html::extract(bytes),
        "docx" => docx::extract(bytes),
        "pdf" => pdf::extract_with(bytes, &spec.ocr),
        "image" => ocr::extract_image(bytes, &spec.ocr),
        "jats" => jats::extract(bytes),
        _ => Err(format!("no extractor named {extractor}")),
    });
    let extracted = match result {
        Ok(Ok(x)) => x,
        Ok(Err(msg)) => return Document::empty(entry, Status::Failed, Some(extractor), Some(msg)),
        Err(_) => {
            return Document::empty(
                entry,
                Status::Failed,
                Some(extractor),
                Some(format!("the {extractor} extractor crashed on this file; please report it with the file attached")),
            )
        }
    };
    finish(entry, extracted, spec)
}

/// Cleans extracted blocks, lays them out as one text, and hashes it.
pub fn finish(entry: Entry, extracted: Extracted, spec: &IngestSpec) -> Document {
    let (blocks, mut removed) = spec.cleaners.apply(extracted.blocks);
    for (k, v) in extracted.removed {
        *removed.entry(k).or_default() += v;
    }
    let mut text = String::new();
    let mut out = Vec::with_capacity(blocks.len());
    for b in blocks {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        let start = text.len();
        text.push_str(&b.text);
        out.push(Block {
            kind: b.kind,
            page: b.page,
            section: b.section,
            start,
            end: text.len(),
            cells: b.cells,
            confidence: b.confidence,
        });
    }
    let mut doc = Document::empty(entry, Status::Ok, Some(extracted.extractor), None);
    doc.pages = extracted.pages;
    doc.chars_removed = removed;
    if !extracted.notes.is_empty() {
        doc.error = Some(extracted.notes.join("; "));
    }
    if text.trim().is_empty() {
        doc.status = Status::NoText;
        if doc.error.is_none() {
            doc.error = Some(match extracted.extractor {
                "html" => {
                    "the page has no readable text (only scripts, styles or navigation)".into()
                }
                _ => "the file has no text in it".into(),
            });
        }
        return doc;
    }
    doc.document_id = Some(hex::encode(Sha256::digest(text.as_bytes())));
    doc.tokens = Some(spec.tokenizer.count(&text) as u64);
    doc.text = text;
    doc.blocks = out;
    doc
}

/// Maps byte offsets in a text to char offsets, for the `char_start` /
/// `char_end` columns (SQL's `substr` counts characters).
pub struct CharIndex {
    /// Byte offset of every char boundary, when the text is not ASCII.
    boundaries: Option<Vec<usize>>,
}

impl CharIndex {
    /// Indexes `text`.
    pub fn new(text: &str) -> Self {
        Self {
            boundaries: (!text.is_ascii()).then(|| text.char_indices().map(|(i, _)| i).collect()),
        }
    }

    /// The char offset of byte offset `b` (a char boundary).
    pub fn char_of(&self, b: usize) -> usize {
        match &self.boundaries {
            None => b,
            Some(v) => v.partition_point(|&x| x < b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_index_counts_chars() {
        let t = "añb€c";
        let ix = CharIndex::new(t);
        assert_eq!(ix.char_of(0), 0);
        assert_eq!(ix.char_of(t.find('b').unwrap()), 2);
        assert_eq!(ix.char_of(t.len()), 5);
    }

    #[test]
    fn a_colspan_of_zero_spans_what_its_row_leaves_shared_evenly() {
        // Two arms over Mean/SD pairs, written with colspan="0" as converted
        // JATS tables do; an empty corner cell spans both header rows.
        let g = |text: &str, row_span: u32, col_span: u32| GridCell {
            text: text.into(),
            row_span,
            col_span,
            ..GridCell::default()
        };
        let rows = vec![
            vec![
                g("", 2, 1),
                g("Drug", 1, 0),
                g("Placebo", 1, 0),
                g("", 1, 1),
            ],
            ["Mean", "SD", "Mean", "SD", "p"]
                .iter()
                .map(|t| g(t, 1, 1))
                .collect(),
            ["Age", "60.9", "6.2", "62.3", "6.1", "0.28"]
                .iter()
                .map(|t| g(t, 1, 1))
                .collect(),
        ];
        let cells = grid(rows);
        let at = |text: &str| {
            let c = cells.iter().find(|c| c.text == text).unwrap();
            (c.row, c.col, c.col_span)
        };
        assert_eq!(at("Drug"), (0, 1, 2));
        assert_eq!(at("Placebo"), (0, 3, 2));
        assert_eq!(at("p"), (1, 5, 1));
        assert_eq!(table_columns(&cells), 6);
        // Alone in its row, it runs to the end.
        let cells = grid(vec![
            vec![g("Arms", 1, 0)],
            ["a", "b", "c"].iter().map(|t| g(t, 1, 1)).collect(),
        ]);
        assert_eq!(cells[0].col_span, 3);
    }
}
