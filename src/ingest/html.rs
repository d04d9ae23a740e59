//! HTML: readable text only. Scripts, styles, navigation, forms and page
//! chrome are dropped; headings become sections; tables are kept as table
//! blocks with their cells (colspan and rowspan honoured).

use scraper::{ElementRef, Html, Node};

use super::{grid, table_text, txt::decode, BlockKind, Cell, Extracted, GridCell, RawBlock};

const SKIP: &[&str] = &[
    "script", "style", "noscript", "template", "nav", "footer", "aside", "form", "svg", "iframe",
    "button", "select", "textarea", "head", "object", "embed", "canvas", "menu", "dialog",
];
const SKIP_ROLES: &[&str] = &[
    "navigation",
    "banner",
    "contentinfo",
    "search",
    "menu",
    "menubar",
    "complementary",
];
const SKIP_CLASSES: &[&str] = &[
    "nav",
    "navbar",
    "navigation",
    "menu",
    "breadcrumb",
    "breadcrumbs",
    "cookie",
    "cookie-banner",
    "sidebar",
    "site-footer",
    "site-header",
    "skip-link",
    "advert",
    "ads",
    "share",
    "social",
];
const BLOCK: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "body",
    "blockquote",
    "pre",
    "dd",
    "dt",
    "dl",
    "address",
    "figure",
    "header",
    "ul",
    "ol",
    "hr",
    "center",
    "details",
    "summary",
    "fieldset",
];

struct Walker {
    blocks: Vec<RawBlock>,
    buf: String,
    kind: BlockKind,
    section: Option<String>,
}

impl Walker {
    fn flush(&mut self) {
        let t = collapse(&self.buf);
        if !t.is_empty() {
            let mut b = RawBlock::new(self.kind, t);
            b.section = self.section.clone();
            self.blocks.push(b);
        }
        self.buf.clear();
        self.kind = BlockKind::Paragraph;
    }

    fn walk(&mut self, el: ElementRef) {
        let name = el.value().name();
        if skipped(el) {
            return;
        }
        match name {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.flush();
                let h = collapse(&inline_text(el));
                if !h.is_empty() {
                    self.section = Some(h.clone());
                    let mut b = RawBlock::new(BlockKind::Heading, h);
                    b.section = self.section.clone();
                    self.blocks.push(b);
                }
                return;
            }
            "table" => {
                self.flush();
                for cap in el
                    .children()
                    .filter_map(ElementRef::wrap)
                    .filter(|c| c.value().name() == "caption")
                {
                    let t = collapse(&inline_text(cap));
                    if !t.is_empty() {
                        let mut b = RawBlock::new(BlockKind::Caption, t);
                        b.section = self.section.clone();
                        self.blocks.push(b);
                    }
                }
                let cells = table_cells(el);
                let text = table_text(&cells);
                if !text.trim().is_empty() {
                    let mut b = RawBlock::new(BlockKind::Table, text);
                    b.section = self.section.clone();
                    b.cells = cells;
                    self.blocks.push(b);
                }
                return;
            }
            "li" => {
                self.flush();
                self.kind = BlockKind::List;
                self.children(el);
                self.kind = BlockKind::List;
                self.flush();
                return;
            }
            "figcaption" | "caption" => {
                self.flush();
                self.kind = BlockKind::Caption;
                self.children(el);
                self.kind = BlockKind::Caption;
                self.flush();
                return;
            }
            "br" => {
                self.buf.push('\n');
                return;
            }
            _ => {}
        }
        let block = BLOCK.contains(&name);
        if block {
            self.flush();
        }
        self.children(el);
        if block {
            self.flush();
        }
    }

    fn children(&mut self, el: ElementRef) {
        for child in el.children() {
            match child.value() {
                Node::Text(t) => self.buf.push_str(t),
                Node::Element(_) => {
                    if let Some(c) = ElementRef::wrap(child) {
                        self.walk(c);
                    }
                }
                _ => {}
            }
        }
    }
}

fn skipped(el: ElementRef) -> bool {
    let v = el.value();
    if SKIP.contains(&v.name())
        || v.attr("hidden").is_some()
        || v.attr("aria-hidden") == Some("true")
    {
        return true;
    }
    if v.attr("role").is_some_and(|r| SKIP_ROLES.contains(&r)) {
        return true;
    }
    if v.name() == "header"
        && v.attr("role").is_none()
        && el
            .ancestors()
            .filter_map(ElementRef::wrap)
            .all(|a| !matches!(a.value().name(), "article" | "main" | "section"))
    {
        // A page-level header is site chrome; an article's header is content.
        return el.select(&heading_selector()).next().is_none();
    }
    v.classes()
        .any(|c| SKIP_CLASSES.contains(&c.to_ascii_lowercase().as_str()))
        || v.id()
            .is_some_and(|id| SKIP_CLASSES.contains(&id.to_ascii_lowercase().as_str()))
}

fn heading_selector() -> scraper::Selector {
    scraper::Selector::parse("h1, h2").unwrap_or_else(|_| unreachable!("static selector parses"))
}

fn inline_text(el: ElementRef) -> String {
    let mut s = String::new();
    for d in el.descendants() {
        if let Node::Text(t) = d.value() {
            if d.ancestors().filter_map(ElementRef::wrap).any(skipped) {
                continue;
            }
            s.push_str(t);
        } else if let Some(e) = ElementRef::wrap(d) {
            if e.value().name() == "br" {
                s.push(' ');
            }
        }
    }
    s
}

/// Collapses runs of spaces and tabs (keeping `<br>` line breaks).
fn collapse(s: &str) -> String {
    s.split('\n')
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn table_cells(table: ElementRef) -> Vec<Cell> {
    let mut rows = Vec::new();
    for row in table
        .descendants()
        .filter_map(ElementRef::wrap)
        .filter(|e| e.value().name() == "tr")
    {
        // Skip rows of nested tables.
        let owner = row
            .ancestors()
            .filter_map(ElementRef::wrap)
            .find(|a| a.value().name() == "table");
        if owner.map(|o| o.id()) != Some(table.id()) {
            continue;
        }
        let mut cells = Vec::new();
        for cell in row.children().filter_map(ElementRef::wrap) {
            let name = cell.value().name();
            if name != "td" && name != "th" {
                continue;
            }
            let span = |a: &str| {
                cell.value()
                    .attr(a)
                    .and_then(|v| v.trim().parse::<u32>().ok())
                    .unwrap_or(1)
                    .clamp(1, 1000)
            };
            let bold = name == "th"
                || cell
                    .descendants()
                    .filter_map(ElementRef::wrap)
                    .any(|e| matches!(e.value().name(), "b" | "strong"));
            let style = cell.value().attr("style").unwrap_or("");
            let indent = style
                .split(';')
                .find_map(|d| {
                    let (k, v) = d.split_once(':')?;
                    (k.trim() == "padding-left" || k.trim() == "text-indent")
                        .then(|| {
                            v.trim()
                                .trim_end_matches("px")
                                .trim_end_matches("em")
                                .parse::<f32>()
                                .ok()
                        })
                        .flatten()
                })
                .map(|v| v.max(0.0) as u32)
                .unwrap_or(0);
            cells.push(GridCell {
                text: collapse(&inline_text(cell)).replace('\n', " "),
                row_span: span("rowspan"),
                col_span: span("colspan"),
                bold,
                indent,
            });
        }
        rows.push(cells);
    }
    grid(rows)
}

/// The HTML extractor.
pub fn extract(bytes: &[u8]) -> Result<Extracted, String> {
    let text = decode(bytes);
    let doc = Html::parse_document(&text);
    let mut w = Walker {
        blocks: Vec::new(),
        buf: String::new(),
        kind: BlockKind::Paragraph,
        section: None,
    };
    w.walk(doc.root_element());
    w.flush();
    Ok(Extracted {
        blocks: w.blocks,
        pages: None,
        extractor: "html",
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_chrome_keeps_content_and_tables() {
        let html = br#"<html><head><title>t</title><style>p{}</style></head><body>
          <nav><a href="/">Home</a></nav>
          <h1>Trial</h1><p>We enrolled <b>40</b> adults.</p><script>var x=1;</script>
          <table><tr><th rowspan="2">Arm</th><th colspan="2">Age</th></tr>
                 <tr><th>mean</th><th>SD</th></tr>
                 <tr><td>Drug</td><td>56.7</td><td>10.2</td></tr></table>
          <footer>Copyright</footer></body></html>"#;
        let x = extract(html).unwrap();
        let texts: Vec<&str> = x.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts[0], "Trial");
        assert_eq!(texts[1], "We enrolled 40 adults.");
        assert_eq!(texts[2], "Arm | Age\nmean | SD\nDrug | 56.7 | 10.2");
        assert_eq!(texts.len(), 3);
        let t = &x.blocks[2];
        assert_eq!(t.section.as_deref(), Some("Trial"));
        let mean = t.cells.iter().find(|c| c.text == "mean").unwrap();
        assert_eq!((mean.row, mean.col), (1, 1));
        let age = t.cells.iter().find(|c| c.text == "Age").unwrap();
        assert_eq!(age.col_span, 2);
    }
}
