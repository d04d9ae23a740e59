//! The PDF extractor, on lopdf: positioned text from the content streams,
//! put back in reading order (columns read in turn), running heads and feet
//! dropped, headings turned into sections, captions and footnotes marked,
//! tables found and split into cells, line-end hyphens joined. Pages are
//! interpreted in parallel on rayon's pool.

pub mod fonts;
pub mod interp;
pub mod layout;
pub mod scan;
pub mod table;

use std::collections::{BTreeMap, HashMap, HashSet};

use lopdf::Document;
use rayon::prelude::*;

use super::ocr::{OcrMode, OcrSpec};
use super::{table_columns, BlockKind, Cell, Extracted, RawBlock};
use interp::{FontCache, Rule};
use layout::{LBlock, Line};

/// A page after interpretation and line-finding.
pub struct PageLines {
    /// Page number, from 1.
    pub number: u32,
    /// Lines (row pieces), top to bottom.
    pub lines: Vec<Line>,
    /// Ruling lines.
    pub rules: Vec<Rule>,
    /// Width in points.
    pub width: f32,
    /// Height in points.
    pub height: f32,
    /// Codes without Unicode.
    pub unmapped: usize,
    /// Glyphs with text.
    pub glyphs: usize,
    /// Images drawn.
    pub images: usize,
    /// Image XObjects drawn, with where.
    pub drawn: Vec<interp::Drawn>,
    /// Whether its lines were read by OCR.
    pub ocr: bool,
    /// Content problem, if any.
    pub problem: Option<String>,
}

const ENCRYPTED: &str = "the PDF is encrypted and needs a password to open: save an unprotected copy (print to PDF, or qpdf --decrypt with the password) and read that";

/// Whether the file lacks the end-of-file marker near its end (cut short).
fn truncated(bytes: &[u8]) -> bool {
    !bytes[bytes.len().saturating_sub(2048)..]
        .windows(5)
        .any(|w| w == b"%%EOF")
}

/// Opens a PDF: parses it, and where it is encrypted, opens it with the
/// empty user password (what a viewer does without asking).
pub fn open(bytes: &[u8]) -> Result<Document, String> {
    if !bytes.starts_with(b"%PDF")
        && !bytes[..bytes.len().min(1024)]
            .windows(5)
            .any(|w| w == b"%PDF-")
    {
        return Err(
            "this is not a PDF (no %PDF header): check the file's real type and rename it".into(),
        );
    }
    let doc = match Document::load_mem(bytes) {
        Ok(d) => d,
        Err(e) => {
            let msg = e.to_string();
            if msg.to_ascii_lowercase().contains("decrypt")
                || msg.to_ascii_lowercase().contains("password")
                || bytes.windows(8).any(|w| w == b"/Encrypt")
            {
                return Err(ENCRYPTED.into());
            }
            if truncated(bytes) {
                return Err(format!("the PDF is truncated (no end-of-file marker) and could not be recovered ({msg}): download or export it again"));
            }
            return Err(format!("the PDF could not be parsed ({msg}): it may be damaged; re-download it, or re-save it with a PDF viewer"));
        }
    };
    if doc.is_encrypted() {
        return Err(ENCRYPTED.into());
    }
    Ok(doc)
}

/// Interprets every page (in parallel) down to lines.
pub fn page_lines(doc: &Document) -> Vec<PageLines> {
    let pages: Vec<(u32, lopdf::ObjectId)> = doc.get_pages().into_iter().collect();
    let fonts = FontCache::default();
    pages
        .par_iter()
        .map(|&(number, id)| {
            let pc = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                interp::run_page(doc, id, &fonts)
            }))
            .unwrap_or_else(|_| interp::PageContent {
                problem: Some("the page's content could not be read".into()),
                ..Default::default()
            });
            let glyphs = pc
                .glyphs
                .iter()
                .filter(|g| !g.text.trim().is_empty())
                .count();
            let words = layout::words(&pc);
            let lines = layout::lines(words);
            PageLines {
                number,
                lines,
                rules: pc.rules,
                width: pc.width,
                height: pc.height,
                unmapped: pc.unmapped,
                glyphs,
                images: pc.images,
                drawn: pc.drawn,
                ocr: false,
                problem: pc.problem,
            }
        })
        .collect()
}

fn mask(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| {
            if c.is_ascii_digit() {
                '#'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

fn is_page_number(s: &str) -> bool {
    let t = s.trim().to_ascii_lowercase();
    let t = t.trim_matches(|c: char| c == '-' || c == '–' || c == '—' || c.is_whitespace());
    if !t.is_empty() && t.len() <= 4 && t.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    if !t.is_empty() && t.len() <= 6 && t.chars().all(|c| "ivxlc".contains(c)) {
        return true;
    }
    let words: Vec<&str> = t.split_whitespace().collect();
    matches!(words.as_slice(), ["page", n] if n.chars().all(|c| c.is_ascii_digit()))
        || matches!(words.as_slice(), ["page", n, "of", m] if n.chars().chain(m.chars()).all(|c| c.is_ascii_digit()))
        || matches!(words.as_slice(), [n, "of", m] if n.chars().chain(m.chars()).all(|c| c.is_ascii_digit()))
}

/// Drops running heads and feet: lines in the top or bottom band of a page
/// whose text (digits masked) recurs on at least three pages and on at
/// least a quarter of them, and bare page numbers there; never a caption. Returns the
/// characters removed.
pub fn strip_running(pages: &mut [PageLines]) -> u64 {
    let edge = |h: f32, l: &Line| l.y < h * 0.1 || l.y > h * 0.9;
    let mut counts: HashMap<String, HashSet<u32>> = HashMap::new();
    for p in pages.iter() {
        for l in p.lines.iter().filter(|l| edge(p.height, l)) {
            counts.entry(mask(&l.text())).or_default().insert(p.number);
        }
    }
    let n = pages.len();
    let running: HashSet<String> = counts
        .into_iter()
        .filter(|(k, v)| !k.is_empty() && v.len() >= 3 && v.len() * 4 >= n)
        .map(|(k, _)| k)
        .collect();
    let mut removed = 0u64;
    for p in pages.iter_mut() {
        let h = p.height;
        p.lines.retain(|l| {
            let t = l.text();
            // A caption is never a running head ("Table 3 (continued)" at
            // the top of several pages is the table's).
            let drop = edge(h, l)
                && !caption_like(&t)
                && (running.contains(&mask(&t)) || is_page_number(&t));
            if drop {
                removed += t.chars().count() as u64;
            }
            !drop
        });
    }
    removed
}

/// Lays out one page's blocks in reading order (tables found first).
pub fn page_blocks(p: &mut PageLines) -> Vec<LBlock> {
    let lines = std::mem::take(&mut p.lines);
    let (mut tables, rest) = table::tables(lines, &p.rules, p.width);
    let mut blocks = layout::blocks(rest);
    blocks.append(&mut tables);
    layout::order(blocks)
}

fn caption_like(s: &str) -> bool {
    let l = s.trim_start().to_ascii_lowercase();
    for k in [
        "table",
        "fig.",
        "fig ",
        "figure",
        "supplementary table",
        "supplementary figure",
        "box",
        "chart",
        "scheme",
    ] {
        if let Some(rest) = l.strip_prefix(k) {
            let rest = rest.trim_start();
            let mut it = rest.chars();
            if let Some(c) = it.next() {
                if c.is_ascii_digit()
                    || ("ivx".contains(c) && {
                        // A Roman numeral ("II", "iv") then no more letters.
                        let after = rest.trim_start_matches(['i', 'v', 'x', 'l']);
                        !after.starts_with(char::is_alphabetic) && rest.len() - after.len() <= 6
                    })
                    || (c.is_ascii_alphabetic()
                        && rest.len() > 1
                        && rest.as_bytes()[1] == b'.'
                        && k != "box")
                {
                    return true;
                }
            }
        }
    }
    false
}

/// A block's box and text size.
#[derive(Debug, Clone, Copy)]
struct Bbox {
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
    size: f32,
}

impl Bbox {
    /// A laid-out block's box, its text taken as `size`.
    fn of(b: &LBlock, size: f32) -> Bbox {
        Bbox {
            x0: b.x0,
            y0: b.y0,
            x1: b.x1,
            y1: b.y1,
            size,
        }
    }
}

/// A caption that is its label only: "Table 2", "TABLE II.", "Fig. 3:".
fn bare_label(t: &str) -> bool {
    caption_like(t) && t.split_whitespace().count() <= 3 && t.chars().count() <= 25
}

/// Whether the block after a bare caption label is the caption's title:
/// a few lines set just below the label (within two and a half lines,
/// overlapping it across the page) or on its line just right of it, and not
/// itself a caption. Author manuscripts and many journals set "Table 2" on
/// a line of its own above the title.
fn titles_label(label: &Bbox, next: &Bbox, lines: usize, text: &str) -> bool {
    let em = label.size.max(next.size);
    let gap = next.y0 - label.y1;
    let below = gap > -0.5 * em
        && gap < 2.5 * em
        && next.x0 < label.x1 + 2.0 * em
        && next.x1 > label.x0 - 2.0 * em;
    let beside = (next.y0 - label.y0).abs() < 0.6 * em
        && next.x0 >= label.x1 - 0.5 * em
        && next.x0 - label.x1 < 4.0 * em;
    (below || beside) && lines <= 3 && text.chars().count() <= 300 && !caption_like(text)
}

/// Whether a block is set right under another (within two and a half
/// lines), across the same stretch of the page: where a table's notes are.
fn right_under(above: &Bbox, b: &Bbox) -> bool {
    let gap = b.y0 - above.y1;
    let em = b.size.max(1.0);
    gap > -0.5 * em
        && gap < 2.5 * em
        && b.x0 < above.x1
        && b.x1 > above.x0
        && b.x0 >= above.x0 - 2.0 * em
}

fn numbered_heading(s: &str) -> bool {
    let mut chars = s.chars().peekable();
    let mut saw_digit = false;
    while let Some(&c) = chars.peek() {
        if c.is_ascii_digit() || c == '.' {
            saw_digit |= c.is_ascii_digit();
            chars.next();
        } else {
            break;
        }
    }
    saw_digit
        && chars.next().is_some_and(|c| c == ' ')
        && chars.next().is_some_and(|c| c.is_uppercase())
}

/// Joins a block's lines into one text: line-end hyphens between lower-case
/// letters are dropped unless the hyphenated word occurs elsewhere in the
/// document and the joined one does not.
fn join_lines(lines: &[Line], vocab: &HashSet<String>) -> String {
    let mut out = String::new();
    for l in lines {
        let t = l.text();
        if out.is_empty() {
            out = t;
            continue;
        }
        let hyphen = out.ends_with('-') || out.ends_with('\u{2010}') || out.ends_with('\u{00AD}');
        let prev_lower = out.chars().rev().nth(1).is_some_and(|c| c.is_lowercase());
        let next_lower = t.chars().next().is_some_and(|c| c.is_lowercase());
        if hyphen && prev_lower && next_lower {
            let head: String = out
                .chars()
                .rev()
                .skip(1)
                .take_while(|c| c.is_alphabetic())
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let tail: String = t.chars().take_while(|c| c.is_alphabetic()).collect();
            let joined = format!("{head}{tail}").to_lowercase();
            let hyphenated = format!("{head}-{tail}").to_lowercase();
            let keep = vocab.contains(&hyphenated) && !vocab.contains(&joined);
            if !keep {
                out.pop();
            }
            out.push_str(&t);
        } else {
            out.push(' ');
            out.push_str(&t);
        }
    }
    out
}

/// Extracts a PDF from its text layer alone (no OCR).
pub fn extract(bytes: &[u8]) -> Result<Extracted, String> {
    extract_with(bytes, &OcrSpec::never())
}

/// Extracts a PDF, reading pages by OCR as `ocr` says.
pub fn extract_with(bytes: &[u8], ocr: &OcrSpec) -> Result<Extracted, String> {
    let doc = open(bytes)?;
    let n_pages = doc.get_pages().len() as u32;
    if n_pages == 0 {
        if truncated(bytes) {
            return Err("the PDF is truncated (no end-of-file marker) and no page could be recovered: download or export it again".into());
        }
        return Err("the PDF has no pages: export it again from its source".into());
    }
    let mut pages = page_lines(&doc);
    let mut notes = Vec::new();
    let scanned = scan::read_pages(&doc, bytes, &mut pages, ocr)?;
    drop(doc);
    let mut no_text = Vec::new();
    let mut unmapped = Vec::new();
    for p in &pages {
        if p.ocr {
            continue;
        }
        if p.glyphs == 0 {
            no_text.push(p.number);
        } else if p.unmapped * 5 > p.glyphs {
            unmapped.push(p.number);
        }
    }
    for p in &pages {
        if let Some(pr) = &p.problem {
            notes.push(format!("page {}: {pr}", p.number));
        }
    }
    notes.extend(scanned.notes.iter().cloned());
    if !no_text.is_empty() {
        let why = match (&scanned.unavailable, ocr.mode) {
            (_, OcrMode::Never) => {
                "they were not read because ocr=never: read them with ocr=auto".to_string()
            }
            (Some(e), _) => format!("OCR could not read them: {e}"),
            (None, _) if no_text.iter().all(|n| scanned.failed.contains(n)) => {
                "OCR could not read them (see above)".to_string()
            }
            (None, _) => {
                "they draw no image to read by OCR (blank, or drawn as shapes)".to_string()
            }
        };
        notes.push(format!(
            "{} of {} pages have no text layer (pages {}): {why}",
            no_text.len(),
            n_pages,
            ranges(&no_text)
        ));
    }
    if !unmapped.is_empty() {
        notes.push(format!(
            "pages {} use fonts with no Unicode mapping: their text could not be decoded and was left out rather than guessed{}",
            ranges(&unmapped),
            match (&scanned.unavailable, ocr.mode) {
                (_, OcrMode::Never) => " (ocr=auto would read them by OCR)".to_string(),
                (Some(e), _) => format!(" (OCR could not read them: {e})"),
                (None, _) => String::new(),
            }
        ));
    }
    let extractor = if scanned.pages > 0 { "pdf+ocr" } else { "pdf" };
    Ok(lay_out(pages, n_pages, notes, extractor))
}

/// Blocks in reading order from pages of lines (a PDF's, or OCR'd images'):
/// running heads and feet dropped, tables found, headings, captions and
/// footnotes told apart, tables continued on the next page joined.
pub fn lay_out(
    mut pages: Vec<PageLines>,
    n_pages: u32,
    notes: Vec<String>,
    extractor: &'static str,
) -> Extracted {
    let removed = strip_running(&mut pages);
    // Body size: the size most characters are set in.
    let mut sizes: HashMap<i32, usize> = HashMap::new();
    let mut vocab: HashSet<String> = HashSet::new();
    for p in &pages {
        for l in &p.lines {
            for w in &l.words {
                *sizes.entry((w.size * 2.0).round() as i32).or_default() += w.text.chars().count();
                let t = w
                    .text
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase();
                if t.len() > 2 {
                    vocab.insert(t);
                }
            }
        }
    }
    // (Ties go to the larger size, so the choice never depends on the
    // map's order.)
    let body = sizes
        .iter()
        .max_by_key(|(s, n)| (**n, **s))
        .map(|(s, _)| *s as f32 / 2.0)
        .unwrap_or(10.0);
    let mut laid: Vec<(u32, f32, Vec<LBlock>)> = pages
        .par_iter_mut()
        .map(|p| (p.number, p.height, page_blocks(p)))
        .collect();
    laid.sort_by_key(|x| x.0);
    // The title: the largest text on the first page.
    let title_size = laid
        .first()
        .map(|(_, _, bs)| {
            bs.iter()
                .filter(|b| b.table.is_none())
                .map(|b| b.size())
                .fold(0.0, f32::max)
        })
        .unwrap_or(0.0);
    let mut out = Vec::new();
    let mut section: Option<String> = None;
    for (number, height, blocks) in laid {
        // A caption that is only its label ("Table 2") on its own line,
        // waiting for the title set below or beside it.
        let mut label: Option<(usize, Bbox)> = None;
        // The box of the table read last on this page, or of the last note
        // read under it: a block set right under it that reads as a note
        // is the table's footnote.
        let mut under: Option<Bbox> = None;
        for b in blocks {
            if let Some(cells) = &b.table {
                label = None;
                under = Some(Bbox::of(&b, body));
                let cells: Vec<Cell> = cells.iter().map(Cell::from).collect();
                let mut rb = RawBlock::new(BlockKind::Table, super::table_text(&cells));
                rb.cells = cells;
                rb.confidence = confidence(b.lines.iter().flat_map(|l| &l.words));
                rb.page = Some(number);
                rb.section = section.clone();
                out.push(rb);
                continue;
            }
            let text = join_lines(&b.lines, &vocab);
            let t = text.trim();
            if t.is_empty() {
                continue;
            }
            let size = b.size();
            let here = Bbox::of(&b, size);
            if let Some((i, l)) = label.take() {
                if titles_label(&l, &here, b.lines.len(), t) {
                    out[i].text = format!("{} {t}", out[i].text);
                    continue;
                }
            }
            let short = b.lines.len() <= 3 && t.chars().count() <= 160;
            // A bold run of a few words ending in a full stop is a run-in heading.
            let run_in = b.bold() && t.ends_with('.') && t.split_whitespace().count() <= 6;
            let ends_sentence = t.ends_with('.') && !numbered_heading(t) && !run_in
                || t.ends_with(',')
                || t.ends_with(';');
            let letters = t.chars().filter(|c| c.is_alphabetic()).count();
            let is_title =
                number == 1 && size >= title_size && size >= body * 1.3 && t.chars().count() <= 400;
            // A caption set right under the table passes the notes under
            // it on to the table.
            let above = under.take().filter(|u| right_under(u, &here));
            // (A caption is told first, below: it is never a note.)
            let note_under = above.is_some()
                && b.lines.len() <= 12
                && (table::reads_as_note(t) || size < body * 0.95);
            if above.is_some() && (note_under || caption_like(t)) {
                under = Some(here);
            }
            let kind = if caption_like(t) {
                BlockKind::Caption
            } else if note_under {
                BlockKind::Footnote
            } else if is_title
                || short
                    && letters >= 3
                    && !ends_sentence
                    && (size >= body * 1.15
                        || (b.bold() && size >= body * 0.95 && t.chars().count() <= 100)
                        || (numbered_heading(t) && (b.bold() || size > body * 1.05)))
            {
                BlockKind::Heading
            } else if size < body * 0.9
                && b.y0 > height * 0.7
                && !section
                    .as_deref()
                    .is_some_and(|s| s.to_ascii_lowercase().contains("reference"))
                && t.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit() || "*†‡§¶#abcdef".contains(c))
                && b.lines.len() <= 6
            {
                BlockKind::Footnote
            } else {
                BlockKind::Paragraph
            };
            if kind == BlockKind::Heading {
                section = Some(t.to_string());
            }
            if kind == BlockKind::Caption && bare_label(t) {
                label = Some((out.len(), here));
            }
            let mut rb = RawBlock::new(kind, t.to_string());
            rb.page = Some(number);
            rb.section = section.clone();
            rb.confidence = confidence(b.lines.iter().flat_map(|l| &l.words));
            out.push(rb);
        }
    }
    let mut removed_map = BTreeMap::new();
    removed_map.insert("headers_footers".to_string(), removed);
    Extracted {
        blocks: join_continued(out),
        pages: Some(n_pages),
        extractor,
        notes,
        removed: removed_map,
    }
}

/// The mean OCR confidence of words, weighted by their length; `None`
/// when none was read by OCR.
pub fn confidence<'a>(words: impl IntoIterator<Item = &'a layout::Word>) -> Option<f32> {
    let (mut sum, mut n) = (0.0f64, 0usize);
    for w in words {
        if let Some(c) = w.conf {
            let k = w.text.chars().count().max(1);
            sum += f64::from(c) * k as f64;
            n += k;
        }
    }
    (n > 0).then(|| (sum / n as f64) as f32)
}

/// A table continued on the next page joined to its first part: the next
/// table block on the following page, with nothing between the two but
/// footnotes and a caption saying the table continues ("Table 2
/// (continued)"), with as many columns; or on the same page (the next
/// column) when it repeats the header. Header rows the second part repeats
/// are dropped, and so is the "continued" caption.
fn join_continued(blocks: Vec<RawBlock>) -> Vec<RawBlock> {
    let continued = |b: &RawBlock| {
        let t = b.text.to_ascii_lowercase();
        b.kind == BlockKind::Caption
            && (t.contains("continued") || t.contains("cont.") || t.contains("(cont"))
    };
    let mut out: Vec<RawBlock> = Vec::with_capacity(blocks.len());
    let mut last_table: Option<usize> = None;
    for b in blocks {
        if b.kind != BlockKind::Table {
            out.push(b);
            continue;
        }
        if let Some(t) = last_table {
            let quiet = out[t + 1..]
                .iter()
                .all(|x| x.kind == BlockKind::Footnote || continued(x));
            let next_page = matches!((out[t].page, b.page), (Some(a), Some(c)) if c == a + 1);
            // On the same page, the part in the next column repeats the
            // header (a table without a caption of its own between them).
            let same_page = out[t].page.is_some()
                && out[t].page == b.page
                && repeated_header(&out[t].cells, &b.cells, 2) > 0;
            if quiet
                && (next_page || same_page)
                && table_columns(&out[t].cells) == table_columns(&b.cells)
            {
                // The first part, then its footnotes after the whole table.
                let first = out.remove(t);
                let notes: Vec<RawBlock> = out.drain(t..).filter(|x| !continued(x)).collect();
                out.push(joined_parts(first, b));
                out.extend(notes);
                last_table = Some(t);
                continue;
            }
        }
        last_table = Some(out.len());
        out.push(b);
    }
    out
}

/// How many of the second part's first rows repeat one of the first
/// part's first rows (its header), each with at least `cells` cells,
/// compared on their letters and digits.
fn repeated_header(first: &[Cell], second: &[Cell], cells: usize) -> u32 {
    use unicode_normalization::UnicodeNormalization;
    let row = |cells: &[Cell], r: u32| -> Vec<(u32, String)> {
        let mut v: Vec<(u32, String)> = cells
            .iter()
            .filter(|c| c.row == r)
            .map(|c| {
                let t: String = c.text.nfkc().filter(|ch| ch.is_alphanumeric()).collect();
                (c.col, t.to_lowercase())
            })
            .filter(|(_, t)| !t.is_empty())
            .collect();
        v.sort();
        v
    };
    let head: Vec<Vec<(u32, String)>> = (0..4).map(|r| row(first, r)).collect();
    let mut repeated = 0;
    while repeated < 4 && {
        let r = row(second, repeated);
        r.len() >= cells.max(1) && head.contains(&r)
    } {
        repeated += 1;
    }
    repeated
}

/// Two parts of one table as one: the second's rows after the first's,
/// less the leading rows that repeat its header ([`repeated_header`]).
fn joined_parts(mut first: RawBlock, second: RawBlock) -> RawBlock {
    let repeated = repeated_header(&first.cells, &second.cells, 1);
    let next = first
        .cells
        .iter()
        .map(|c| c.row + c.row_span)
        .max()
        .unwrap_or(0);
    first.cells.extend(
        second
            .cells
            .into_iter()
            .filter(|c| c.row >= repeated)
            .map(|mut c| {
                c.row = c.row - repeated + next;
                c
            }),
    );
    first.text = super::table_text(&first.cells);
    first
}

/// "1-3, 7".
pub fn ranges(v: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", v[i], v[j])
        } else {
            v[i].to_string()
        });
        i = j + 1;
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_numbers_and_captions() {
        assert!(is_page_number("12"));
        assert!(is_page_number("Page 3 of 9"));
        assert!(is_page_number("- 4 -"));
        assert!(!is_page_number("Results"));
        assert!(caption_like("Table 1 Baseline characteristics"));
        assert!(caption_like("Fig. 2. Flow"));
        assert!(!caption_like("Tablets were given"));
        assert!(caption_like("TABLE III. Outcomes"));
        assert!(!caption_like("Table ivory"));
        assert!(bare_label("Table 2"));
        assert!(bare_label("TABLE II."));
        assert!(bare_label("Supplementary Table 1"));
        assert!(!bare_label("Table 2 Baseline characteristics"));
        assert!(numbered_heading("2.1 Participants"));
        assert!(!numbered_heading("12 patients"));
        assert_eq!(ranges(&[1, 2, 3, 7]), "1-3, 7");
    }

    #[test]
    fn notes_set_right_under_a_table_are_its_footnotes() {
        use table::fixture::{line, simple};
        // Body text far above the table sets the body size; a note right
        // under it, then prose further down.
        let mut lines = vec![line(50.0, 40.0, "Some prose above the table that runs on.")];
        lines.extend(simple());
        lines.push(line(
            50.0,
            170.0,
            "Values are mean (SD); BMI, body mass index.",
        ));
        lines.push(line(50.0, 184.0, "* P < 0.05 against placebo."));
        lines.push(line(
            50.0,
            260.0,
            "The results are given in the text that follows.",
        ));
        let page = PageLines {
            number: 1,
            lines,
            rules: Vec::new(),
            width: 600.0,
            height: 800.0,
            unmapped: 0,
            glyphs: 0,
            images: 0,
            drawn: Vec::new(),
            ocr: false,
            problem: None,
        };
        let out = lay_out(vec![page], 1, Vec::new(), "pdf");
        let kinds: Vec<(BlockKind, &str)> = out
            .blocks
            .iter()
            .map(|b| (b.kind, b.text.as_str()))
            .collect();
        assert_eq!(kinds[1].0, BlockKind::Table, "{kinds:?}");
        assert_eq!(kinds[2].0, BlockKind::Footnote, "{kinds:?}");
        assert!(kinds[2].1.starts_with("Values are mean"), "{kinds:?}");
        assert_eq!(kinds.last().unwrap().0, BlockKind::Paragraph, "{kinds:?}");
    }

    #[test]
    fn a_table_continued_on_the_next_page_is_one_table() {
        let table = |page: u32, rows: &[&[&str]]| {
            let cells: Vec<Cell> = rows
                .iter()
                .enumerate()
                .flat_map(|(r, row)| {
                    row.iter().enumerate().map(move |(c, t)| Cell {
                        row: r as u32,
                        col: c as u32,
                        row_span: 1,
                        col_span: 1,
                        text: t.to_string(),
                        indent: 0,
                        bold: false,
                    })
                })
                .collect();
            let mut b = RawBlock::new(BlockKind::Table, super::super::table_text(&cells));
            b.cells = cells;
            b.page = Some(page);
            b
        };
        let block = |kind: BlockKind, page: u32, text: &str| {
            let mut b = RawBlock::new(kind, text.to_string());
            b.page = Some(page);
            b
        };
        let first = table(
            3,
            &[&["", "A", "B"], &["Age", "1", "2"], &["BMI", "3", "4"]],
        );
        let second = table(4, &[&["", "A", "B"], &["Sex", "5", "6"]]);
        let joined = join_continued(vec![
            block(BlockKind::Caption, 3, "Table 2 Baseline"),
            first.clone(),
            block(BlockKind::Footnote, 3, "a Mean (SD)."),
            block(BlockKind::Caption, 4, "Table 2 (continued)"),
            second.clone(),
            block(BlockKind::Paragraph, 4, "Text after it."),
        ]);
        let kinds: Vec<BlockKind> = joined.iter().map(|b| b.kind).collect();
        assert_eq!(
            kinds,
            [
                BlockKind::Caption,
                BlockKind::Table,
                BlockKind::Footnote,
                BlockKind::Paragraph
            ]
        );
        assert_eq!(
            joined[1].text,
            " | A | B\nAge | 1 | 2\nBMI | 3 | 4\nSex | 5 | 6"
        );
        // Prose between, another page, or other columns: two tables.
        for blocks in [
            vec![
                first.clone(),
                block(BlockKind::Paragraph, 3, "Text."),
                second.clone(),
            ],
            vec![first.clone(), table(6, &[&["Sex", "5", "6"]])],
            vec![first.clone(), table(4, &[&["Sex", "5"]])],
            // On the same page, a table that does not repeat the header.
            vec![first.clone(), table(3, &[&["Sex", "5", "6"]])],
        ] {
            let n = join_continued(blocks)
                .iter()
                .filter(|b| b.kind == BlockKind::Table)
                .count();
            assert_eq!(n, 2);
        }
        // On the same page, the part in the next column repeats the header.
        let joined = join_continued(vec![
            first.clone(),
            table(3, &[&["", "A", "B"], &["Sex", "5", "6"]]),
        ]);
        assert_eq!(joined.len(), 1);
        assert_eq!(
            joined[0].text,
            " | A | B\nAge | 1 | 2\nBMI | 3 | 4\nSex | 5 | 6"
        );
    }

    #[test]
    fn a_title_under_a_bare_label_is_its_caption() {
        let bx = |x0: f32, y0: f32, x1: f32, y1: f32| Bbox {
            x0,
            y0,
            x1,
            y1,
            size: 10.0,
        };
        let label = bx(72.0, 100.0, 110.0, 111.0);
        let title = "Demographic characteristics of participants";
        // The next line down, from the same margin.
        assert!(titles_label(
            &label,
            &bx(72.0, 114.0, 300.0, 125.0),
            1,
            title
        ));
        // On the label's line, just right of it.
        assert!(titles_label(
            &label,
            &bx(116.0, 100.5, 300.0, 111.0),
            1,
            title
        ));
        // Far below (a paragraph after a table), in the other column, or long.
        assert!(!titles_label(
            &label,
            &bx(72.0, 160.0, 300.0, 171.0),
            1,
            title
        ));
        assert!(!titles_label(
            &label,
            &bx(320.0, 114.0, 540.0, 125.0),
            1,
            title
        ));
        assert!(!titles_label(
            &label,
            &bx(72.0, 114.0, 300.0, 160.0),
            6,
            title
        ));
        // Another caption.
        assert!(!titles_label(
            &label,
            &bx(72.0, 114.0, 300.0, 125.0),
            1,
            "Table 3"
        ));
    }
}
