//! DOCX (Office Open XML): paragraphs; headings found by outline level (so a
//! German "Überschrift 1" is a heading too); each table row kept together
//! with its cells; footnotes and endnotes placed after the paragraph citing
//! them. ZIP bombs are bounded: no part is inflated past a fixed limit.

use std::collections::HashMap;
use std::io::Read;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::{table_text, BlockKind, Cell, Extracted, RawBlock};

/// The most any one XML part may inflate to.
const MAX_PART_BYTES: u64 = 64 * 1024 * 1024;
/// The most entries a DOCX may hold.
const MAX_ENTRIES: usize = 10_000;

fn read_part(
    zip: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
    name: &str,
) -> Result<Option<String>, String> {
    let file = match zip.by_name(name) {
        Ok(f) => f,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => {
            return Err(format!(
                "the DOCX is damaged ({name}: {e}); re-save it from Word"
            ))
        }
    };
    let mut out = Vec::new();
    file.take(MAX_PART_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("the DOCX is damaged ({name}: {e}); re-save it from Word"))?;
    if out.len() as u64 > MAX_PART_BYTES {
        return Err(format!(
            "{name} inflates to more than {} MiB (a ZIP bomb or an extraordinarily large document); refusing to read it",
            MAX_PART_BYTES / (1024 * 1024)
        ));
    }
    Ok(Some(String::from_utf8_lossy(&out).into_owned()))
}

fn attr(e: &BytesStart, local: &[u8]) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        (a.key.local_name().as_ref() == local).then(|| {
            a.unescape_value()
                .map(|v| v.into_owned())
                .unwrap_or_default()
        })
    })
}

/// What a paragraph style says: (outline level, heading level from its
/// built-in name, the style it is based on).
type StyleInfo = (Option<u32>, Option<u32>, Option<String>);

/// Style id → what it says about headings.
struct Styles {
    styles: HashMap<String, StyleInfo>,
}

impl Styles {
    fn parse(xml: &str) -> Self {
        let mut styles = HashMap::new();
        let mut r = Reader::from_str(xml);
        let mut cur: Option<(String, StyleInfo)> = None;
        loop {
            match r.read_event() {
                Ok(Event::Start(e)) | Ok(Event::Empty(e)) => match e.local_name().as_ref() {
                    b"style" => {
                        if let Some((id, info)) = cur.take() {
                            styles.insert(id, info);
                        }
                        cur = attr(&e, b"styleId").map(|id| (id, (None, None, None)));
                    }
                    b"name" => {
                        if let (Some(c), Some(v)) = (cur.as_mut(), attr(&e, b"val")) {
                            c.1 .1 = heading_level(&v);
                        }
                    }
                    b"outlineLvl" => {
                        if let (Some(c), Some(v)) = (cur.as_mut(), attr(&e, b"val")) {
                            c.1 .0 = v.parse().ok();
                        }
                    }
                    b"basedOn" => {
                        if let Some(c) = cur.as_mut() {
                            c.1 .2 = attr(&e, b"val");
                        }
                    }
                    _ => {}
                },
                Ok(Event::End(e)) if e.local_name().as_ref() == b"style" => {
                    if let Some((id, info)) = cur.take() {
                        styles.insert(id, info);
                    }
                }
                Ok(Event::Eof) | Err(_) => break,
                _ => {}
            }
        }
        Self { styles }
    }

    /// The outline level (0 = top) of a paragraph style, following `basedOn`;
    /// a style the styles part does not define is judged by its id
    /// ("Heading1", "berschrift1", "Titre2": Word's ids are its localised
    /// names less spaces and non-ASCII letters).
    fn level(&self, id: &str) -> Option<u32> {
        if !self.styles.contains_key(id) {
            return heading_level(id);
        }
        let mut id = id.to_string();
        for _ in 0..16 {
            let (lvl, by_name, based) = self.styles.get(&id)?;
            if let Some(l) = lvl.filter(|&l| l < 9) {
                return Some(l);
            }
            if let Some(l) = by_name {
                return Some(*l);
            }
            id = based.clone()?;
        }
        None
    }
}

/// Word's heading style "Heading N" in its interface languages (Word
/// stores a localised name where the document was made by another
/// program, or its style was copied), each also as Word writes it in a
/// style id: spaces and non-ASCII letters left out ("Überschrift 1" is
/// `berschrift1`, "Título 1" `Ttulo1`).
const HEADING_NAMES: &[&str] = &[
    "heading",
    "überschrift",
    "titre",
    "título",
    "titulo",
    "titolo",
    "títol",
    "titlu",
    "kop",
    "nagłówek",
    "заголовок",
    "заглавие",
    "rubrik",
    "overskrift",
    "otsikko",
    "nadpis",
    "címsor",
    "başlık",
    "naslov",
    "judul",
    "pealkiri",
    "virsraksts",
    "antraštė",
    "επικεφαλίδα",
    "見出し",
    "标题",
    "標題",
    "제목",
    "כותרת",
    "عنوان",
    "หัวเรื่อง",
    "đầu đề",
];

/// Word's "Title" style in its interface languages.
const TITLE_NAMES: &[&str] = &[
    "title",
    "titel",
    "titre",
    "título",
    "titulo",
    "titolo",
    "títol",
    "titlu",
    "tytuł",
    "название",
    "otsikko",
    "název",
    "cím",
    "konu başlığı",
    "表題",
    "标题",
    "標題",
    "제목",
];

/// A style name's heading level (0 = the top, "Heading 1" and "Title"),
/// in any of Word's interface languages, spelt as a name or as an id.
pub fn heading_level(name: &str) -> Option<u32> {
    let lower = name.trim().to_lowercase();
    let digits = lower.len() - lower.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (word, number) = lower.split_at(lower.len() - digits);
    let word = word.trim_end_matches([' ', '_', '-']);
    // An id drops what is not ASCII: compare that way too.
    let ascii = |s: &str| -> String { s.chars().filter(|c| c.is_ascii_alphanumeric()).collect() };
    let is = |names: &[&str]| {
        names.iter().any(|n| {
            *n == word || (word.is_ascii() && ascii(n).len() >= 3 && ascii(n) == ascii(word))
        })
    };
    if number.is_empty() {
        return is(TITLE_NAMES).then_some(0);
    }
    let n: u32 = number.parse().ok()?;
    (is(HEADING_NAMES) && (1..=9).contains(&n)).then(|| n - 1)
}

/// Footnote or endnote id → text.
fn notes(xml: &str, tag: &[u8]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut r = Reader::from_str(xml);
    let mut cur: Option<(String, String)> = None;
    let mut in_t = false;
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) => {
                if e.local_name().as_ref() == tag {
                    let kind = attr(&e, b"type");
                    cur = match kind.as_deref() {
                        Some("separator" | "continuationSeparator" | "continuationNotice") => None,
                        _ => attr(&e, b"id").map(|id| (id, String::new())),
                    };
                } else if e.local_name().as_ref() == b"t" {
                    in_t = true;
                } else if e.local_name().as_ref() == b"p" {
                    if let Some((_, t)) = cur.as_mut() {
                        if !t.is_empty() {
                            t.push(' ');
                        }
                    }
                }
            }
            Ok(Event::Empty(e)) if e.local_name().as_ref() == b"tab" => {
                if let Some((_, t)) = cur.as_mut() {
                    t.push(' ');
                }
            }
            Ok(Event::Text(t)) if in_t => {
                if let (Some((_, s)), Ok(v)) = (cur.as_mut(), t.decode()) {
                    s.push_str(&v);
                }
            }
            Ok(Event::GeneralRef(g)) if in_t => {
                if let Some((_, s)) = cur.as_mut() {
                    push_ref(s, &g);
                }
            }
            Ok(Event::End(e)) => {
                if e.local_name().as_ref() == b"t" {
                    in_t = false;
                } else if e.local_name().as_ref() == tag {
                    if let Some((id, t)) = cur.take() {
                        out.insert(id, t.split_whitespace().collect::<Vec<_>>().join(" "));
                    }
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

/// Appends an XML entity or character reference (`&amp;`, `&#60;`) as
/// its character; an unknown named entity adds nothing.
pub(crate) fn push_ref(s: &mut String, g: &quick_xml::events::BytesRef) {
    if let Ok(Some(c)) = g.resolve_char_ref() {
        s.push(c);
        return;
    }
    let name: &[u8] = g;
    s.push_str(match name {
        b"amp" => "&",
        b"lt" => "<",
        b"gt" => ">",
        b"quot" => "\"",
        b"apos" => "'",
        _ => "",
    });
}

struct Para {
    text: String,
    style: Option<String>,
    outline: Option<u32>,
    list: bool,
    bold_runs: usize,
    runs: usize,
    notes: Vec<(bool, String)>, // (endnote?, id)
    indent: u32,
}

impl Para {
    fn new() -> Self {
        Self {
            text: String::new(),
            style: None,
            outline: None,
            list: false,
            bold_runs: 0,
            runs: 0,
            notes: Vec::new(),
            indent: 0,
        }
    }
}

#[derive(Default)]
struct TableState {
    cells: Vec<Cell>,
    row: u32,
    col: u32,
    cell_text: String,
    span: u32,
    vmerge_continue: bool,
    bold: bool,
    indent: u32,
    notes: Vec<(bool, String)>,
}

/// The DOCX extractor.
pub fn extract(bytes: &[u8]) -> Result<Extracted, String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| format!("not a readable DOCX (ZIP) file: {e}; it may be corrupt or truncated, re-save it from Word"))?;
    if zip.len() > MAX_ENTRIES {
        return Err(format!(
            "the archive holds {} entries, more than a document could; refusing to read it",
            zip.len()
        ));
    }
    let Some(doc) = read_part(&mut zip, "word/document.xml")? else {
        if zip.file_names_raw().any(|n| n.starts_with(b"xl/")) {
            return Err(
                "this is an Excel workbook named .docx: save the sheet as CSV to read it".into(),
            );
        }
        return Err("not a Word document: the archive has no word/document.xml (it may be another Office format renamed to .docx)".into());
    };
    if read_part(&mut zip, "word/encryption")?.is_some()
        || zip.file_names_raw().any(|n| n == b"EncryptedPackage")
    {
        return Err(
            "the document is encrypted: remove the password in Word and save it again".into(),
        );
    }
    let styles = read_part(&mut zip, "word/styles.xml")?.map(|s| Styles::parse(&s));
    let footnotes = read_part(&mut zip, "word/footnotes.xml")?
        .map(|s| notes(&s, b"footnote"))
        .unwrap_or_default();
    let endnotes = read_part(&mut zip, "word/endnotes.xml")?
        .map(|s| notes(&s, b"endnote"))
        .unwrap_or_default();

    let mut blocks: Vec<RawBlock> = Vec::new();
    let mut section: Option<String> = None;
    let mut note_numbers: HashMap<(bool, String), usize> = HashMap::new();
    let mut r = Reader::from_str(&doc);
    let mut para: Option<Para> = None;
    let mut tables: Vec<TableState> = Vec::new();
    let mut in_t = false;
    let mut in_rpr = false;
    let mut in_del = 0u32;

    // A note cited twice is placed once, after the first paragraph citing it.
    let mut placed: std::collections::HashSet<(bool, String)> = Default::default();
    let emit_notes = |cited: &[(bool, String)],
                      blocks: &mut Vec<RawBlock>,
                      section: &Option<String>,
                      numbers: &HashMap<(bool, String), usize>,
                      placed: &mut std::collections::HashSet<(bool, String)>| {
        for key in cited {
            let src = if key.0 { &endnotes } else { &footnotes };
            let (Some(t), Some(n)) = (src.get(&key.1).filter(|t| !t.is_empty()), numbers.get(key))
            else {
                continue;
            };
            if placed.insert(key.clone()) {
                let mut b = RawBlock::new(BlockKind::Footnote, format!("[{n}] {t}"));
                b.section = section.clone();
                blocks.push(b);
            }
        }
    };

    loop {
        let ev = r.read_event().map_err(|e| {
            format!(
                "the DOCX XML is malformed at byte {}: {e}; re-save it from Word",
                r.buffer_position()
            )
        })?;
        match ev {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                b"p" => para = Some(Para::new()),
                b"pStyle" => {
                    if let Some(p) = para.as_mut() {
                        p.style = attr(&e, b"val");
                    }
                }
                b"outlineLvl" => {
                    if let Some(p) = para.as_mut() {
                        p.outline = attr(&e, b"val").and_then(|v| v.parse().ok());
                    }
                }
                b"numPr" => {
                    if let Some(p) = para.as_mut() {
                        p.list = true;
                    }
                }
                b"ind" => {
                    if let Some(p) = para.as_mut() {
                        let left = attr(&e, b"left").or_else(|| attr(&e, b"start"));
                        p.indent = left
                            .and_then(|v| v.parse::<i64>().ok())
                            .map(|v| (v.max(0) / 360) as u32)
                            .unwrap_or(0);
                    }
                }
                b"r" => {
                    if let Some(p) = para.as_mut() {
                        p.runs += 1;
                    }
                }
                b"rPr" => in_rpr = true,
                b"b" if in_rpr => {
                    let off = matches!(attr(&e, b"val").as_deref(), Some("0" | "false"));
                    if let (Some(p), false) = (para.as_mut(), off) {
                        p.bold_runs += 1;
                    }
                }
                b"t" => in_t = true,
                b"del" => in_del += 1,
                b"tab" if !in_rpr => {
                    if let Some(p) = para.as_mut() {
                        p.text.push('\t');
                    }
                }
                b"br" | b"cr" => {
                    if let Some(p) = para.as_mut() {
                        p.text.push('\n');
                    }
                }
                b"footnoteReference" | b"endnoteReference" if in_del == 0 => {
                    let end = e.local_name().as_ref() == b"endnoteReference";
                    if let (Some(p), Some(id)) = (para.as_mut(), attr(&e, b"id")) {
                        // The note's number where it is cited ("...[2]"),
                        // the note itself after the paragraph as "[2] ...".
                        let src = if end { &endnotes } else { &footnotes };
                        if src.get(&id).is_some_and(|t| !t.is_empty()) {
                            let n = note_numbers.len() + 1;
                            let n = *note_numbers.entry((end, id.clone())).or_insert(n);
                            p.text.push_str(&format!("[{n}]"));
                        }
                        p.notes.push((end, id));
                    }
                }
                b"tbl" => tables.push(TableState::default()),
                b"tr" => {
                    if let Some(t) = tables.last_mut() {
                        t.col = 0;
                    }
                }
                b"tc" => {
                    if let Some(t) = tables.last_mut() {
                        t.cell_text.clear();
                        t.span = 1;
                        t.vmerge_continue = false;
                        t.bold = false;
                        t.indent = 0;
                    }
                }
                b"gridSpan" => {
                    if let Some(t) = tables.last_mut() {
                        t.span = attr(&e, b"val")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(1)
                            .clamp(1, 1000);
                    }
                }
                b"vMerge" => {
                    if let Some(t) = tables.last_mut() {
                        t.vmerge_continue = attr(&e, b"val").as_deref() != Some("restart");
                    }
                }
                _ => {}
            },
            Event::Text(t) if in_t && in_del == 0 => {
                if let (Some(p), Ok(v)) = (para.as_mut(), t.decode()) {
                    p.text.push_str(&v);
                }
            }
            Event::GeneralRef(g) if in_t && in_del == 0 => {
                if let Some(p) = para.as_mut() {
                    push_ref(&mut p.text, &g);
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                b"t" => in_t = false,
                b"rPr" => in_rpr = false,
                b"del" => in_del = in_del.saturating_sub(1),
                b"p" => {
                    let Some(p) = para.take() else { continue };
                    let text = p.text.trim().to_string();
                    if let Some(t) = tables.last_mut() {
                        // A paragraph inside a table cell.
                        if !text.is_empty() {
                            if !t.cell_text.is_empty() {
                                t.cell_text.push('\n');
                            } else {
                                t.indent = p.indent;
                            }
                            t.cell_text.push_str(&text);
                        }
                        t.bold |= p.runs > 0 && p.bold_runs >= p.runs;
                        t.notes.extend(p.notes);
                        continue;
                    }
                    let level = p.outline.filter(|&l| l < 9).or_else(|| {
                        p.style
                            .as_deref()
                            .and_then(|s| styles.as_ref().and_then(|st| st.level(s)))
                    });
                    if text.is_empty() {
                        emit_notes(&p.notes, &mut blocks, &section, &note_numbers, &mut placed);
                        continue;
                    }
                    let kind = if level.is_some() {
                        section = Some(text.split_whitespace().collect::<Vec<_>>().join(" "));
                        BlockKind::Heading
                    } else if p.list {
                        BlockKind::List
                    } else if p
                        .style
                        .as_deref()
                        .is_some_and(|s| s.eq_ignore_ascii_case("caption"))
                    {
                        BlockKind::Caption
                    } else {
                        BlockKind::Paragraph
                    };
                    let mut b = RawBlock::new(kind, text);
                    b.section = section.clone();
                    blocks.push(b);
                    emit_notes(&p.notes, &mut blocks, &section, &note_numbers, &mut placed);
                }
                b"tc" => {
                    if let Some(t) = tables.last_mut() {
                        if !t.vmerge_continue {
                            let cell = Cell {
                                row: t.row,
                                col: t.col,
                                row_span: 1,
                                col_span: t.span,
                                text: t.cell_text.replace('\n', " "),
                                indent: t.indent,
                                bold: t.bold,
                            };
                            t.cells.push(cell);
                        } else if let Some(above) = t
                            .cells
                            .iter_mut()
                            .rev()
                            .find(|c| c.col == t.col && c.row < t.row)
                        {
                            above.row_span = t.row - above.row + 1;
                        }
                        t.col += t.span;
                    }
                }
                b"tr" => {
                    if let Some(t) = tables.last_mut() {
                        t.row += 1;
                    }
                }
                b"tbl" => {
                    let Some(t) = tables.pop() else { continue };
                    let text = table_text(&t.cells);
                    if let Some(outer) = tables.last_mut() {
                        // A nested table's text belongs to the outer cell.
                        if !outer.cell_text.is_empty() {
                            outer.cell_text.push('\n');
                        }
                        outer.cell_text.push_str(&text.replace('\n', "; "));
                        continue;
                    }
                    if !text.trim().is_empty() {
                        let mut b = RawBlock::new(BlockKind::Table, text);
                        b.section = section.clone();
                        b.cells = t.cells;
                        blocks.push(b);
                    }
                    emit_notes(&t.notes, &mut blocks, &section, &note_numbers, &mut placed);
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(Extracted {
        blocks,
        pages: None,
        extractor: "docx",
        ..Default::default()
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// Builds a small DOCX in memory from a body, styles and footnotes.
    pub(crate) fn make_docx(body: &str, styles: &str, footnotes: &str) -> Vec<u8> {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut z = zip::ZipWriter::new(&mut buf);
            let o = zip::write::SimpleFileOptions::default();
            let w = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;
            z.start_file("[Content_Types].xml", o).unwrap();
            z.write_all(br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>"#).unwrap();
            z.start_file("word/document.xml", o).unwrap();
            z.write_all(
                format!(
                    r#"<?xml version="1.0"?><w:document {w}><w:body>{body}</w:body></w:document>"#
                )
                .as_bytes(),
            )
            .unwrap();
            z.start_file("word/styles.xml", o).unwrap();
            z.write_all(
                format!(r#"<?xml version="1.0"?><w:styles {w}>{styles}</w:styles>"#).as_bytes(),
            )
            .unwrap();
            z.start_file("word/footnotes.xml", o).unwrap();
            z.write_all(format!(r#"<?xml version="1.0"?><w:footnotes {w}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>{footnotes}</w:footnotes>"#).as_bytes()).unwrap();
            z.finish().unwrap();
        }
        buf.into_inner()
    }

    #[test]
    fn german_headings_tables_and_footnotes() {
        let styles = r#"<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>"#;
        let body = r#"<w:p><w:pPr><w:pStyle w:val="berschrift1"/></w:pPr><w:r><w:t>Methoden</w:t></w:r></w:p>
          <w:p><w:r><w:t xml:space="preserve">Wir haben 40 Patienten &amp; Ärzte</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r><w:r><w:t> eingeschlossen.</w:t></w:r></w:p>
          <w:tbl><w:tr><w:tc><w:p><w:r><w:rPr><w:b/></w:rPr><w:t>Arm</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>n</w:t></w:r></w:p></w:tc></w:tr>
                 <w:tr><w:tc><w:p><w:r><w:t>Drug</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>120</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"#;
        let notes =
            r#"<w:footnote w:id="1"><w:p><w:r><w:t>Siehe Anhang.</w:t></w:r></w:p></w:footnote>"#;
        let x = extract(&make_docx(body, styles, notes)).unwrap();
        let got: Vec<(BlockKind, &str, Option<&str>)> = x
            .blocks
            .iter()
            .map(|b| (b.kind, b.text.as_str(), b.section.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (BlockKind::Heading, "Methoden", Some("Methoden")),
                (
                    BlockKind::Paragraph,
                    "Wir haben 40 Patienten & Ärzte[1] eingeschlossen.",
                    Some("Methoden")
                ),
                (BlockKind::Footnote, "[1] Siehe Anhang.", Some("Methoden")),
                (BlockKind::Table, "Arm | n\nDrug | 120", Some("Methoden")),
            ]
        );
        assert!(x.blocks[3].cells[0].bold);
        assert!(!x.blocks[3].cells[3].bold);
    }

    #[test]
    fn headings_by_localised_style_names_and_ids() {
        for (name, level) in [
            ("heading 1", Some(0)),
            ("Heading2", Some(1)),
            ("Überschrift 1", Some(0)),
            ("berschrift3", Some(2)),
            ("Titre 1", Some(0)),
            ("Título 2", Some(1)),
            ("Ttulo2", Some(1)),
            ("Titolo 3", Some(2)),
            ("Kop 1", Some(0)),
            ("Nagłówek 2", Some(1)),
            ("Заголовок 1", Some(0)),
            ("見出し 2", Some(1)),
            ("标题 1", Some(0)),
            ("Title", Some(0)),
            ("Titel", Some(0)),
            ("Titre", Some(0)),
            ("heading 1 Char", None),
            ("TOC Heading", None),
            ("toc 1", None),
            ("Normal", None),
            ("List Paragraph", None),
            ("heading 10", None),
            ("Caption", None),
        ] {
            assert_eq!(heading_level(name), level, "{name}");
        }
        // Names in the styles part (no outline level), and ids of styles
        // the part does not define.
        let styles = r#"<w:style w:type="paragraph" w:styleId="Titre1"><w:name w:val="Titre 1"/></w:style>
          <w:style w:type="paragraph" w:styleId="a1"><w:name w:val="見出し 2"/></w:style>
          <w:style w:type="paragraph" w:styleId="Corps"><w:name w:val="Corps de texte"/></w:style>"#;
        let body = r#"<w:p><w:pPr><w:pStyle w:val="Titre1"/></w:pPr><w:r><w:t>Méthodes</w:t></w:r></w:p>
          <w:p><w:pPr><w:pStyle w:val="a1"/></w:pPr><w:r><w:t>方法</w:t></w:r></w:p>
          <w:p><w:pPr><w:pStyle w:val="Ttulo2"/></w:pPr><w:r><w:t>Pacientes</w:t></w:r></w:p>
          <w:p><w:pPr><w:pStyle w:val="Corps"/></w:pPr><w:r><w:t>Texte.</w:t></w:r></w:p>"#;
        let x = extract(&make_docx(body, styles, "")).unwrap();
        let kinds: Vec<(BlockKind, &str)> =
            x.blocks.iter().map(|b| (b.kind, b.text.as_str())).collect();
        assert_eq!(
            kinds,
            [
                (BlockKind::Heading, "Méthodes"),
                (BlockKind::Heading, "方法"),
                (BlockKind::Heading, "Pacientes"),
                (BlockKind::Paragraph, "Texte."),
            ]
        );
        assert_eq!(x.blocks[3].section.as_deref(), Some("Pacientes"));
    }

    #[test]
    fn notes_are_numbered_where_cited_and_placed_once_after_the_first_citing_paragraph() {
        let notes = r#"<w:footnote w:id="2"><w:p><w:r><w:t>First note.</w:t></w:r></w:p></w:footnote>
          <w:footnote w:id="3"><w:p><w:r><w:t>Second note.</w:t></w:r></w:p></w:footnote>"#;
        let body = r#"<w:p><w:r><w:t>One</w:t></w:r><w:r><w:footnoteReference w:id="3"/></w:r><w:r><w:t xml:space="preserve"> two</w:t></w:r><w:r><w:footnoteReference w:id="2"/></w:r></w:p>
          <w:p><w:r><w:t>Again</w:t></w:r><w:r><w:footnoteReference w:id="3"/></w:r><w:r><w:footnoteReference w:id="9"/></w:r></w:p>
          <w:p><w:del><w:r><w:footnoteReference w:id="2"/></w:r></w:del><w:r><w:t>Kept.</w:t></w:r></w:p>"#;
        let x = extract(&make_docx(body, "", notes)).unwrap();
        let texts: Vec<&str> = x.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "One[1] two[2]",
                "[1] Second note.",
                "[2] First note.",
                "Again[1]",
                "Kept."
            ]
        );
    }
}
