//! JATS / NLM article XML (PubMed Central's `.nxml`): the article title,
//! abstract, body sections (nested titles become sections), paragraphs,
//! lists, figure and table captions, tables with their real cells (header
//! rows, `colspan` / `rowspan`, bold, indentation from leading spaces or
//! the cell's `style` padding),
//! table footnotes, acknowledgements, notes and references.

use quick_xml::events::Event;

use super::{grid, table_text, BlockKind, Extracted, GridCell, RawBlock};

/// A parsed XML element.
#[derive(Debug, Default)]
struct El {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Node>,
}

#[derive(Debug)]
enum Node {
    El(El),
    Text(String),
}

impl El {
    fn attr(&self, k: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(a, _)| a == k)
            .map(|(_, v)| v.as_str())
    }
    fn els(&self) -> impl Iterator<Item = &El> {
        self.children.iter().filter_map(|c| match c {
            Node::El(e) => Some(e),
            Node::Text(_) => None,
        })
    }
    fn child(&self, name: &str) -> Option<&El> {
        self.els().find(|e| e.name == name)
    }
    fn find(&self, name: &str) -> Option<&El> {
        for e in self.els() {
            if e.name == name {
                return Some(e);
            }
            if let Some(x) = e.find(name) {
                return Some(x);
            }
        }
        None
    }
    /// All text inside, with a space for `<break/>`.
    fn text(&self) -> String {
        let mut s = String::new();
        self.text_into(&mut s);
        s
    }
    fn text_into(&self, s: &mut String) {
        for c in &self.children {
            match c {
                Node::Text(t) => s.push_str(t),
                Node::El(e) if e.name == "break" => s.push(' '),
                Node::El(e) => e.text_into(s),
            }
        }
    }
}

fn local(name: &[u8]) -> String {
    let n = String::from_utf8_lossy(name);
    n.rsplit(':').next().unwrap_or(&n).to_string()
}

/// The text of an XML entity or character reference (`amp`, `#x00A0`).
pub fn entity(name: &str) -> String {
    match name {
        "amp" => "&".into(),
        "lt" => "<".into(),
        "gt" => ">".into(),
        "quot" => "\"".into(),
        "apos" => "'".into(),
        n if n.starts_with("#x") || n.starts_with("#X") => u32::from_str_radix(&n[2..], 16)
            .ok()
            .and_then(char::from_u32)
            .map(String::from)
            .unwrap_or_default(),
        n if n.starts_with('#') => n[1..]
            .parse::<u32>()
            .ok()
            .and_then(char::from_u32)
            .map(String::from)
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// An element with its attributes, no children yet.
fn element(e: &quick_xml::events::BytesStart) -> El {
    let attrs = e
        .attributes()
        .flatten()
        .map(|a| {
            (
                local(a.key.as_ref()),
                a.unescape_value()
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
            )
        })
        .collect();
    El {
        name: local(e.name().as_ref()),
        attrs,
        children: Vec::new(),
    }
}

fn parse(xml: &str) -> Result<El, String> {
    let mut r = quick_xml::Reader::from_str(xml);
    let mut stack: Vec<El> = vec![El::default()];
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) => {
                stack.push(element(&e));
                if stack.len() > 256 {
                    return Err("the XML nests more than 256 levels deep".into());
                }
            }
            Ok(Event::Empty(e)) => {
                let el = element(&e);
                stack.last_mut().unwrap().children.push(Node::El(el));
            }
            Ok(Event::End(_)) if stack.len() > 1 => {
                let el = stack.pop().unwrap();
                stack.last_mut().unwrap().children.push(Node::El(el));
            }
            Ok(Event::Text(t)) => {
                let s = t.xml_content().map(|c| c.to_string()).unwrap_or_default();
                stack.last_mut().unwrap().children.push(Node::Text(s));
            }
            Ok(Event::CData(t)) => {
                stack
                    .last_mut()
                    .unwrap()
                    .children
                    .push(Node::Text(String::from_utf8_lossy(&t).to_string()));
            }
            Ok(Event::GeneralRef(g)) => {
                let s = entity(&String::from_utf8_lossy(&g));
                stack.last_mut().unwrap().children.push(Node::Text(s));
            }
            Ok(Event::Eof) => break,
            Err(e) => {
                return Err(format!(
                    "the XML is malformed at byte {}: {e}; re-download it",
                    r.buffer_position()
                ))
            }
            _ => {}
        }
    }
    while stack.len() > 1 {
        let el = stack.pop().unwrap();
        stack.last_mut().unwrap().children.push(Node::El(el));
    }
    Ok(stack.pop().unwrap())
}

fn clean(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

struct Walker {
    blocks: Vec<RawBlock>,
    section: Option<String>,
}

impl Walker {
    fn push(&mut self, kind: BlockKind, text: &str) {
        let t = clean(text);
        if t.is_empty() {
            return;
        }
        if kind == BlockKind::Heading {
            self.section = Some(t.clone());
        }
        let mut b = RawBlock::new(kind, t);
        b.section = self.section.clone();
        self.blocks.push(b);
    }

    /// Walks a container of block-level content (body, sec, abstract...).
    fn walk(&mut self, el: &El) {
        for c in &el.children {
            let Node::El(e) = c else { continue };
            match e.name.as_str() {
                "title" => self.push(BlockKind::Heading, &e.text()),
                "label" => {}
                "p" => self.paragraph(e),
                "sec" | "app" | "boxed-text" | "glossary" | "notes" | "fn-group" | "app-group"
                | "ack" | "sec-meta" => {
                    let before = self.section.clone();
                    if e.name == "ack" && e.child("title").is_none() {
                        self.push(BlockKind::Heading, "Acknowledgements");
                    }
                    self.walk(e);
                    self.section = before;
                }
                "list" => self.list(e),
                "table-wrap" | "table-wrap-group" => self.table_wrap(e),
                "fig" | "fig-group" => self.caption(e),
                "disp-formula" | "disp-quote" | "speech" | "statement" | "verse-group"
                | "preformat" | "def-list" => self.push(BlockKind::Paragraph, &e.text()),
                "fn" => self.push(BlockKind::Footnote, &e.text()),
                "ref-list" => {
                    let before = self.section.clone();
                    self.push(
                        BlockKind::Heading,
                        &e.child("title")
                            .map(El::text)
                            .unwrap_or_else(|| "References".into()),
                    );
                    for r in e.els().filter(|x| x.name == "ref") {
                        self.push(BlockKind::Paragraph, &reference(r));
                    }
                    self.section = before;
                }
                "supplementary-material" | "media" | "graphic" | "alternatives" => self.caption(e),
                _ => self.walk(e),
            }
        }
    }

    /// A paragraph: its inline text, with any block-level content it
    /// carries (lists, tables, figures) as blocks of their own after it.
    fn paragraph(&mut self, p: &El) {
        let mut text = String::new();
        let mut nested: Vec<&El> = Vec::new();
        for c in &p.children {
            match c {
                Node::Text(t) => text.push_str(t),
                Node::El(e)
                    if matches!(
                        e.name.as_str(),
                        "list" | "table-wrap" | "fig" | "disp-quote" | "boxed-text"
                    ) =>
                {
                    nested.push(e)
                }
                Node::El(e) if e.name == "break" => text.push(' '),
                Node::El(e) => e.text_into(&mut text),
            }
        }
        self.push(BlockKind::Paragraph, &text);
        for e in nested {
            match e.name.as_str() {
                "list" => self.list(e),
                "table-wrap" => self.table_wrap(e),
                "fig" => self.caption(e),
                _ => self.walk(e),
            }
        }
    }

    fn list(&mut self, l: &El) {
        for item in l.els().filter(|e| e.name == "list-item") {
            let label = item.child("label").map(El::text).unwrap_or_default();
            let body: String = item
                .els()
                .filter(|e| e.name != "label" && e.name != "list")
                .map(El::text)
                .collect::<Vec<_>>()
                .join(" ");
            self.push(BlockKind::List, &format!("{label} {body}"));
            for sub in item.els().filter(|e| e.name == "list") {
                self.list(sub);
            }
        }
    }

    fn caption(&mut self, e: &El) {
        let label = e.child("label").map(El::text).unwrap_or_default();
        let cap = e.child("caption").map(El::text).unwrap_or_default();
        if !label.trim().is_empty() || !cap.trim().is_empty() {
            self.push(BlockKind::Caption, &format!("{label} {cap}"));
        }
    }

    fn table_wrap(&mut self, tw: &El) {
        if tw.name == "table-wrap-group" {
            self.caption(tw);
            for t in tw.els().filter(|e| e.name == "table-wrap") {
                self.table_wrap(t);
            }
            return;
        }
        self.caption(tw);
        for t in collect(tw, "table") {
            let cells = grid(table_rows(t));
            if cells.is_empty() {
                continue;
            }
            let mut b = RawBlock::new(BlockKind::Table, table_text(&cells));
            b.cells = cells;
            b.section = self.section.clone();
            self.blocks.push(b);
        }
        if let Some(foot) = tw.child("table-wrap-foot") {
            for f in foot.els() {
                match f.name.as_str() {
                    "fn-group" => {
                        for x in f.els() {
                            self.push(BlockKind::Footnote, &x.text());
                        }
                    }
                    _ => self.push(BlockKind::Footnote, &f.text()),
                }
            }
        }
    }
}

fn collect<'a>(el: &'a El, name: &str) -> Vec<&'a El> {
    let mut out = Vec::new();
    for e in el.els() {
        if e.name == name {
            out.push(e);
        } else {
            out.extend(collect(e, name));
        }
    }
    out
}

/// A reference's text: the mixed or element citation, flattened.
fn reference(r: &El) -> String {
    let label = r.child("label").map(El::text).unwrap_or_default();
    let mut parts = Vec::new();
    for c in r.els().filter(|e| e.name != "label") {
        // Element citations have no punctuation between their parts.
        if c.name == "element-citation" {
            parts.push(
                c.els()
                    .map(El::text)
                    .map(|t| clean(&t))
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
                    .join(". "),
            );
        } else {
            parts.push(c.text());
        }
    }
    format!("{label} {}", parts.join(" "))
}

/// The rows of a table (thead, tbody, tfoot, or bare tr), each a list of
/// cells with spans, weight and indent.
fn table_rows(t: &El) -> Vec<Vec<GridCell>> {
    let mut rows = Vec::new();
    let mut trs: Vec<(&El, bool)> = Vec::new();
    for part in t.els() {
        match part.name.as_str() {
            "tr" => trs.push((part, false)),
            "thead" | "tbody" | "tfoot" => trs.extend(
                part.els()
                    .filter(|e| e.name == "tr")
                    .map(|tr| (tr, part.name == "thead")),
            ),
            _ => {}
        }
    }
    for (tr, head) in trs {
        let mut row = Vec::new();
        for c in tr.els().filter(|e| e.name == "td" || e.name == "th") {
            let raw = c.text();
            let lead: usize = raw
                .chars()
                .take_while(|ch| ch.is_whitespace() && *ch != '\n')
                .map(|ch| {
                    if ch == '\u{2003}' || ch == '\u{2001}' {
                        2
                    } else {
                        1
                    }
                })
                .sum();
            // JATS tables follow the XHTML (HTML 4) table model, where a
            // `colspan` of 0 runs to the end of the row: kept as 0 for
            // `grid` to resolve. A `rowspan` of 0 is taken as 1.
            let span = |k: &str| {
                c.attr(k)
                    .and_then(|v| v.trim().parse::<u32>().ok())
                    .unwrap_or(1)
                    .clamp(u32::from(k == "rowspan"), 1000)
            };
            let text = clean(&raw);
            let all_bold = !text.is_empty()
                && c.els().any(|e| e.name == "bold")
                && clean(
                    &c.els()
                        .filter(|e| e.name == "bold")
                        .map(El::text)
                        .collect::<String>(),
                ) == text;
            row.push(GridCell {
                text,
                row_span: span("rowspan"),
                col_span: span("colspan"),
                bold: c.name == "th" || head || all_bold,
                indent: lead.div_ceil(2) as u32 + style_indent(c.attr("style").unwrap_or("")),
            });
        }
        rows.push(row);
    }
    rows
}

/// The indentation levels a cell's `style` gives (`padding-left: 20pt`,
/// `text-indent: 1em`, `margin-left: 16px`, as publishers' conversions
/// write the stub column's nesting): about one level an em (12 pt, 16 px),
/// at least one for any positive indent; 0 when there is none.
fn style_indent(style: &str) -> u32 {
    style
        .split(';')
        .filter_map(|d| {
            let (k, v) = d.split_once(':')?;
            let k = k.trim().to_ascii_lowercase();
            if !matches!(k.as_str(), "padding-left" | "text-indent" | "margin-left") {
                return None;
            }
            let v = v.trim().to_ascii_lowercase();
            let (num, per_em) = [
                ("em", 1.0),
                ("rem", 1.0),
                ("pt", 12.0),
                ("px", 16.0),
                ("mm", 4.2),
                ("cm", 0.42),
            ]
            .iter()
            .find_map(|(unit, per)| v.strip_suffix(unit).map(|n| (n.trim().to_string(), *per)))
            // A bare number is CSS pixels.
            .unwrap_or((v.clone(), 16.0));
            let em = num.parse::<f32>().ok()? / per_em;
            (em > 0.0).then(|| (em.round() as u32).max(1))
        })
        .sum()
}

/// Whether bytes look like a JATS/NLM article.
pub fn is_jats(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    let s = String::from_utf8_lossy(head);
    s.contains("<article")
        && (s.contains("JATS")
            || s.contains("NLM")
            || s.contains("jats")
            || s.contains("article-type")
            || s.contains("<front"))
}

/// The JATS extractor.
pub fn extract(bytes: &[u8]) -> Result<Extracted, String> {
    let xml = std::str::from_utf8(bytes)
        .map_err(|_| "the XML is not UTF-8: re-export it as UTF-8".to_string())?;
    let root = parse(xml)?;
    let article = root.find("article").ok_or("this XML file is not a JATS article (no <article> element): only JATS/NLM article XML (PubMed Central .nxml) is read")?;
    let mut w = Walker {
        blocks: Vec::new(),
        section: None,
    };
    if let Some(front) = article.child("front") {
        if let Some(t) = front.find("article-title") {
            w.push(BlockKind::Heading, &t.text());
        }
        for ab in collect(front, "abstract") {
            if ab
                .attr("abstract-type")
                .is_some_and(|t| t == "toc" || t == "teaser")
            {
                continue;
            }
            let before = w.section.clone();
            if ab.child("title").is_none() {
                w.push(BlockKind::Heading, "Abstract");
            }
            w.walk(ab);
            w.section = before;
        }
    }
    if let Some(body) = article.child("body") {
        w.walk(body);
    }
    if let Some(back) = article.child("back") {
        w.walk(back);
    }
    // Floats kept apart from the body (floats-group).
    if let Some(fg) = article.child("floats-group") {
        w.walk(fg);
    }
    Ok(Extracted {
        blocks: w.blocks,
        pages: None,
        extractor: "jats",
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_tables_and_inline_markup() {
        let xml = r#"<?xml version="1.0"?><!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange DTD v1.0 20120330//EN" "JATS-archivearticle1.dtd">
<article article-type="research-article"><front><article-meta><title-group><article-title>A trial of <italic>things</italic></article-title></title-group>
<abstract><p>We randomised 120 people.</p></abstract></article-meta></front>
<body><sec><title>Methods</title><p>Body mass index in kg/m<sup>2</sup> &amp; more.</p>
<sec><title>Participants</title><p>Adults.</p>
<table-wrap id="t1"><label>Table 1</label><caption><p>Baseline</p></caption><table><thead><tr><th rowspan="2">Characteristic</th><th colspan="2">Arm</th></tr><tr><th>A (n=60)</th><th>B (n=60)</th></tr></thead>
<tbody><tr><td><bold>Sex</bold></td><td/><td/></tr><tr><td>&#x000a0;&#x000a0;Male</td><td>30 (50)</td><td>31 (52)</td></tr></tbody></table>
<table-wrap-foot><fn><p>Values are n (%).</p></fn></table-wrap-foot></table-wrap></sec></sec></body>
<back><ref-list><ref id="r1"><label>1</label><mixed-citation>Smith J. A paper. 2020.</mixed-citation></ref></ref-list></back></article>"#;
        let x = extract(xml.as_bytes()).unwrap();
        let kinds: Vec<(&str, &str, Option<&str>)> = x
            .blocks
            .iter()
            .map(|b| (b.kind.as_str(), b.text.as_str(), b.section.as_deref()))
            .collect();
        assert_eq!(
            kinds[0],
            ("heading", "A trial of things", Some("A trial of things"))
        );
        assert_eq!(kinds[1].0, "heading");
        assert_eq!(
            kinds[2],
            ("paragraph", "We randomised 120 people.", Some("Abstract"))
        );
        assert!(kinds.contains(&(
            "paragraph",
            "Body mass index in kg/m2 & more.",
            Some("Methods")
        )));
        assert!(kinds.contains(&("caption", "Table 1 Baseline", Some("Participants"))));
        assert!(kinds.contains(&("footnote", "Values are n (%).", Some("Participants"))));
        assert!(kinds.contains(&("paragraph", "1 Smith J. A paper. 2020.", Some("References"))));
        let t = x
            .blocks
            .iter()
            .find(|b| b.kind == BlockKind::Table)
            .unwrap();
        let cell = |r: u32, c: u32| t.cells.iter().find(|x| x.row == r && x.col == c).unwrap();
        assert_eq!(
            (cell(0, 0).text.as_str(), cell(0, 0).row_span),
            ("Characteristic", 2)
        );
        assert_eq!((cell(0, 1).text.as_str(), cell(0, 1).col_span), ("Arm", 2));
        assert_eq!(cell(1, 1).text, "A (n=60)");
        assert_eq!(cell(1, 2).text, "B (n=60)");
        assert!(cell(2, 0).bold && !cell(3, 0).bold);
        assert_eq!((cell(3, 0).text.as_str(), cell(3, 0).indent), ("Male", 1));
    }

    #[test]
    fn a_cells_style_padding_is_its_indentation() {
        assert_eq!(style_indent("padding-left: 20pt;"), 2);
        assert_eq!(style_indent("text-align: left; padding-left:1em"), 1);
        assert_eq!(style_indent("margin-left: 4px"), 1);
        assert_eq!(style_indent("padding-left: 0pt; text-align: center;"), 0);
        assert_eq!(style_indent("text-align: center;"), 0);
        assert_eq!(style_indent("padding-left: -3pt"), 0);
        let x = extract(
            br#"<article><body><table-wrap><label>Table 1</label><table><thead><tr><th>Variable</th><th>A</th></tr></thead><tbody>
<tr><td><bold>Gender</bold></td><td/></tr>
<tr><td style="padding-left: 20pt;">Female</td><td>13 (33)</td></tr>
</tbody></table></table-wrap></body></article>"#,
        )
        .unwrap();
        let t = x
            .blocks
            .iter()
            .find(|b| b.kind == BlockKind::Table)
            .unwrap();
        let female = t.cells.iter().find(|c| c.text == "Female").unwrap();
        let gender = t.cells.iter().find(|c| c.text == "Gender").unwrap();
        assert!(female.indent > gender.indent, "{female:?} {gender:?}");
    }

    #[test]
    fn not_an_article_is_an_error() {
        assert!(extract(b"<root><p>x</p></root>")
            .unwrap_err()
            .contains("not a JATS article"));
        // A file cut off mid-way keeps what was read (the open elements are closed).
        let x = extract(b"<article><body><sec><title>Intro</title><p>First words").unwrap();
        assert_eq!(x.blocks.last().unwrap().text, "First words");
    }

    #[test]
    fn a_colspan_of_zero_runs_over_the_columns_its_row_leaves() {
        let xml = r#"<article><body><table-wrap id="t1"><label>Table 1</label><table><thead>
<tr><th rowspan="2" colspan="1"/><th colspan="0">Drug</th><th colspan="0">Placebo</th><th/></tr>
<tr><th>Mean</th><th>SD</th><th>Mean</th><th>SD</th><th>p</th></tr></thead>
<tbody><tr><td>Age</td><td>60.9</td><td>6.2</td><td>62.3</td><td>6.1</td><td>0.28</td></tr></tbody></table></table-wrap></body></article>"#;
        let x = extract(xml.as_bytes()).unwrap();
        let t = x
            .blocks
            .iter()
            .find(|b| b.kind == BlockKind::Table)
            .unwrap();
        let placebo = t.cells.iter().find(|c| c.text == "Placebo").unwrap();
        assert_eq!((placebo.col, placebo.col_span), (3, 2));
    }
}
