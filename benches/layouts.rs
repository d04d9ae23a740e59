//! PDF tables in layouts no paper set can show: the tables of publisher XML
//! (JATS) rendered to HTML in many styles and printed to PDF by headless
//! Chromium, then read back by quarry and scored against the cells that
//! were rendered (the truth is exact: it is what went into the page).
//!
//! Each style is one HTML document per set: every table on a page of its
//! own after a marker caption "Table K. …" (with the paper's own prose
//! around it where the style has prose), so the PDF's table blocks are
//! assigned to the table whose marker precedes them in reading order. A
//! table read as several blocks (across pages, or cut in two) is scored by
//! the union of their relations: what a split costs is the relations across
//! the cut. Score: cell adjacency (ICDAR 2013) per style; tables with no
//! block at all are counted as "missed".
//!
//! Inputs: the tables of ../shared/data/evidence_inference/xml_sample/ (30
//! trial papers), tests/data/rct_baseline/jats/ and
//! ../shared/data/rct_tables_more/jats/. The papers are split by a rule
//! fixed before any was looked at (a PMCID whose digits sum to an odd
//! number is held out); both halves are scored, per style.
//!
//! Needs `chromium` on the PATH (Debian package `chromium`), or the binary
//! `QUARRY_CHROMIUM` names. PDFs are kept in `$TMPDIR/quarry-layouts/`
//! under a hash of their HTML, so a second run prints nothing again.
//! `QUARRY_LAYOUTS_STYLE=name` runs one style; `QUARRY_LAYOUTS_LIST=1` lists
//! the looked-at half table by table; `QUARRY_LAYOUTS_SHOW=K`
//! prints table K's truth and what was read, for the looked-at half;
//! `QUARRY_LAYOUTS_MISSES=K` the items of table K the PDF side lost or got
//! wrong (looked-at half).
//!
//! Beside adjacency, `cohort_tables` items: each table's items read from
//! the rendered cells (the truth) against those read from its PDF blocks,
//! under the same caption, as the tables bench scores PDF against XML.
//!
//! Run: `cargo bench --profile dev --bench layouts` (it times nothing).

mod common;

use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use quarry::cohort::score::{score, Gold, Score};
use quarry::cohort::{interpret, TableIn};
use quarry::eval::adjacency::{relations, Relation, Tally};
use quarry::ingest::{ingest_file, table_columns, BlockKind, Cell, Document, IngestSpec};

/// One table to render: its cells (the truth) and prose of its paper.
struct Source {
    paper: String,
    cells: Vec<Cell>,
    prose: Vec<String>,
}

/// How a style arranges the page.
#[derive(Clone, Copy, PartialEq)]
enum Flow {
    /// One column, the table across it.
    Single,
    /// Two text columns, the table inside one of them.
    InColumn,
    /// Two text columns, the table across both.
    AcrossColumns,
}

struct Style {
    name: &'static str,
    css: &'static str,
    flow: Flow,
    /// Add a header row grouping every value column ("All participants").
    group_header: bool,
    /// Footnote marks on some labels, with the footnotes under the table.
    marks: bool,
    /// Repeat each table's body rows until it runs over a page.
    long: bool,
}

const BASE: &str = "body { font-family: 'DejaVu Serif', serif; font-size: 10pt; margin: 0 } \
  p { text-align: justify; margin: 0 0 6pt 0 } \
  table { border-collapse: collapse; margin: 6pt 0 } \
  td, th { padding: 1pt 6pt; text-align: left; vertical-align: top; font-weight: normal } \
  .cap { font-weight: bold; margin-top: 0 } .foot { font-size: 8pt } \
  @page { size: A4; margin: 1.5cm }";

fn styles() -> Vec<Style> {
    let s = |name, css, flow| Style {
        name,
        css,
        flow,
        group_header: false,
        marks: false,
        long: false,
    };
    vec![
        // Journal style: rules above and below the header and at the end.
        s(
            "booktabs",
            "table { width: 100% } thead tr:first-child th { border-top: 1.2pt solid black } \
             thead tr:last-child th { border-bottom: 0.6pt solid black } \
             tbody tr:last-child td { border-bottom: 1.2pt solid black }",
            Flow::Single,
        ),
        // Every cell boxed.
        s(
            "grid",
            "table { font-family: 'DejaVu Sans', sans-serif; font-size: 9pt } \
             td, th { border: 0.5pt solid black }",
            Flow::Single,
        ),
        // No rules at all, the table as wide as its text.
        s("unruled", "", Flow::Single),
        // Shaded alternate rows, no rules.
        s(
            "zebra",
            "table { width: 100%; font-family: 'DejaVu Sans', sans-serif; font-size: 9pt } \
             thead th { background: #d0d8e8; font-weight: bold } \
             tbody tr:nth-child(even) td { background: #eeeeee }",
            Flow::Single,
        ),
        // Small type, tight cells, numbers centred.
        s(
            "small-centred",
            "table { width: 100%; font-size: 7pt; font-family: 'Liberation Serif', serif } \
             td, th { padding: 0 3pt } td + td, th + th { text-align: center } \
             thead tr:first-child th { border-top: 0.8pt solid black } \
             tbody tr:first-child td { border-top: 0.5pt solid black } \
             tbody tr:last-child td { border-bottom: 0.8pt solid black }",
            Flow::Single,
        ),
        // Large sans type on a landscape page.
        s(
            "landscape",
            "@page { size: A4 landscape; margin: 1.5cm } \
             table { width: 100%; font-family: 'Liberation Sans', sans-serif; font-size: 11pt } \
             thead th { border-bottom: 1pt solid black } td + td { text-align: right }",
            Flow::Single,
        ),
        // Two text columns, the table inside one.
        s(
            "in-column",
            "section { columns: 2; column-gap: 18pt } table { width: 100%; font-size: 7pt } \
             td, th { padding: 0 2pt } \
             thead tr:first-child th { border-top: 0.8pt solid black } \
             thead tr:last-child th { border-bottom: 0.5pt solid black } \
             tbody tr:last-child td { border-bottom: 0.8pt solid black }",
            Flow::InColumn,
        ),
        // Two text columns, the table across both.
        s(
            "across-columns",
            "section { columns: 2; column-gap: 18pt } \
             .wide { column-span: all } table { width: 100%; font-size: 8.5pt } \
             thead tr:first-child th { border-top: 0.8pt solid black } \
             thead tr:last-child th { border-bottom: 0.5pt solid black } \
             tbody tr:last-child td { border-bottom: 0.8pt solid black }",
            Flow::AcrossColumns,
        ),
        // Cells centred vertically in their rows, labels in a narrow stub
        // column so that they wrap: a one-line value sits between the two
        // lines of its label.
        s(
            "middle",
            "table { width: 100% } td, th { vertical-align: middle; padding: 3pt 4pt } \
             td:first-child, th:first-child { width: 22% } \
             thead tr:first-child th { border-top: 1pt solid black } \
             thead tr:last-child th { border-bottom: 0.5pt solid black } \
             tbody tr:last-child td { border-bottom: 1pt solid black }",
            Flow::Single,
        ),
        Style {
            // A header row grouping the value columns, over the table's own.
            group_header: true,
            ..s(
                "group-header",
                "table { width: 100% } thead tr:first-child th { border-top: 1pt solid black; \
                 text-align: center } thead tr:last-child th { border-bottom: 0.5pt solid black } \
                 tbody tr:last-child td { border-bottom: 1pt solid black }",
                Flow::Single,
            )
        },
        Style {
            // Footnote marks on labels and headers, footnotes under the table.
            marks: true,
            ..s(
                "footnote-marks",
                "table { width: 100% } thead tr:last-child th { border-bottom: 0.5pt solid black } \
                 sup { font-size: 6pt }",
                Flow::Single,
            )
        },
        Style {
            // A table running over two pages, its header repeated.
            long: true,
            ..s(
                "two-pages",
                "table { width: 100% } thead tr:last-child th { border-bottom: 0.5pt solid black } \
                 tbody tr:last-child td { border-bottom: 1pt solid black }",
                Flow::Single,
            )
        },
    ]
}

/// The footnote under a table of the `footnote-marks` style.
const FOOTNOTE: &str = "a Measured at the screening visit.";

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Header rows: the leading rows whose cells are all bold (JATS `thead`
/// cells are bold).
fn header_rows(cells: &[Cell]) -> u32 {
    let rows = cells.iter().map(|c| c.row + c.row_span).max().unwrap_or(0);
    (0..rows)
        .take_while(|&r| {
            let row: Vec<&Cell> = cells.iter().filter(|c| c.row == r).collect();
            !row.is_empty() && row.iter().all(|c| c.bold)
        })
        .count() as u32
}

/// The cells the style renders (the truth for the PDF): the source's,
/// with a grouping header row added, marks appended, rows repeated.
fn styled_cells(src: &[Cell], style: &Style) -> Vec<Cell> {
    let mut cells = src.to_vec();
    let ncols = table_columns(&cells);
    if style.group_header && ncols >= 3 {
        for c in &mut cells {
            c.row += 1;
        }
        cells.push(Cell {
            row: 0,
            col: 1,
            row_span: 1,
            col_span: ncols - 1,
            text: "All participants".into(),
            indent: 0,
            bold: true,
        });
    }
    let head = header_rows(&cells);
    if style.marks {
        for c in cells.iter_mut().filter(|c| c.col == 0 && c.row >= head) {
            if c.row % 4 == 1 && !c.text.trim().is_empty() {
                c.text.push_str(" a");
            }
        }
    }
    if style.long {
        let rows = cells.iter().map(|c| c.row + c.row_span).max().unwrap_or(0);
        let body: Vec<Cell> = cells.iter().filter(|c| c.row >= head).cloned().collect();
        let per = rows - head;
        let mut k = 1;
        while per > 0 && (rows + k * per) < 70 {
            for c in &body {
                cells.push(Cell {
                    row: c.row + k * per,
                    ..c.clone()
                });
            }
            k += 1;
        }
    }
    cells
}

/// The table as HTML: `thead` for the header rows, spans as written, empty
/// cells where nothing starts, indentation as padding.
fn table_html(cells: &[Cell], style: &Style) -> String {
    let head = header_rows(cells);
    let rows = cells.iter().map(|c| c.row + c.row_span).max().unwrap_or(0);
    let ncols = table_columns(cells);
    let mut covered = vec![vec![false; ncols as usize]; rows as usize];
    for c in cells {
        for r in c.row..c.row + c.row_span.max(1) {
            for k in c.col..c.col + c.col_span.max(1) {
                covered[r as usize][k as usize] = true;
            }
        }
    }
    let mut h = String::from("<table>");
    for r in 0..rows {
        if r == 0 && head > 0 {
            h.push_str("<thead>");
        }
        if r == head {
            h.push_str("<tbody>");
        }
        h.push_str("<tr>");
        let tag = if r < head { "th" } else { "td" };
        for k in 0..ncols {
            if let Some(c) = cells.iter().find(|c| c.row == r && c.col == k) {
                let text = match c.text.strip_suffix(" a") {
                    Some(t) if style.marks && c.col == 0 && r >= head => {
                        format!("{}<sup>a</sup>", esc(t))
                    }
                    _ => esc(&c.text),
                };
                let pad = if c.indent > 0 && k == 0 {
                    format!(" style=\"padding-left: {}em\"", c.indent)
                } else {
                    String::new()
                };
                let _ = write!(
                    h,
                    "<{tag} rowspan=\"{}\" colspan=\"{}\"{pad}>{text}</{tag}>",
                    c.row_span.max(1),
                    c.col_span.max(1)
                );
            } else if !covered[r as usize][k as usize] {
                let _ = write!(h, "<{tag}></{tag}>");
            }
        }
        h.push_str("</tr>");
        if r + 1 == head {
            h.push_str("</thead>");
        }
    }
    h.push_str("</tbody></table>");
    h
}

fn page_html(sources: &[&Source], style: &Style) -> String {
    let mut h = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>{BASE} {}</style></head><body>",
        style.css
    );
    for (k, s) in sources.iter().enumerate() {
        let cells = styled_cells(&s.cells, style);
        let cap = format!(
            "<p class=\"cap\">Table {}. Characteristics reported in {}</p>",
            k + 1,
            s.paper
        );
        let table = table_html(&cells, style);
        let foot = if style.marks {
            format!("<p class=\"foot\"><sup>a</sup> {}</p>", &FOOTNOTE[2..])
        } else {
            String::new()
        };
        let prose: Vec<String> = s
            .prose
            .iter()
            .take(3)
            .map(|p| format!("<p>{}</p>", esc(p)))
            .collect();
        let before = prose.first().cloned().unwrap_or_default();
        let after = prose[1.min(prose.len())..].join("");
        let body = match style.flow {
            Flow::Single => format!("{before}{cap}{table}{foot}{after}"),
            Flow::InColumn => format!("<section>{before}{cap}{table}{foot}{after}</section>"),
            Flow::AcrossColumns => {
                format!("<section>{before}<div class=\"wide\">{cap}{table}{foot}</div>{after}</section>")
            }
        };
        let _ = write!(h, "<div style=\"break-before: page\">{body}</div>");
    }
    h.push_str("</body></html>");
    h
}

fn chromium() -> String {
    std::env::var("QUARRY_CHROMIUM").unwrap_or_else(|_| "chromium".into())
}

/// The PDF of an HTML page, printed once and kept under its hash.
fn print(html: &str, dir: &Path) -> Option<PathBuf> {
    let mut hs = DefaultHasher::new();
    html.hash(&mut hs);
    let stem = format!("{:016x}", hs.finish());
    let pdf = dir.join(format!("{stem}.pdf"));
    if pdf.exists() {
        return Some(pdf);
    }
    let src = dir.join(format!("{stem}.html"));
    std::fs::write(&src, html).ok()?;
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
        ])
        .arg(format!("--print-to-pdf={}", pdf.display()))
        .arg(format!("file://{}", src.display()))
        .output();
    match out {
        Ok(o) if pdf.exists() => {
            let _ = o;
            Some(pdf)
        }
        Ok(o) => {
            eprintln!(
                "chromium printed no PDF: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            None
        }
        Err(e) => {
            eprintln!(
                "this bench needs headless Chromium (`apt-get install chromium`, or QUARRY_CHROMIUM): {e}"
            );
            None
        }
    }
}

/// The table blocks of a read PDF, by the marker caption before them.
fn read_back(pdf: &Path, n: usize) -> Vec<Vec<Vec<Cell>>> {
    let mut out = vec![Vec::new(); n];
    let Ok(d) = ingest_file(pdf, &IngestSpec::default()) else {
        return out;
    };
    if std::env::var("QUARRY_LAYOUTS_MARKERS").is_ok() {
        let seen: Vec<usize> = d
            .blocks
            .iter()
            .flat_map(|b| markers(d.text.get(b.start..b.end).unwrap_or_default()))
            .collect();
        let missing: Vec<usize> = (1..=n).filter(|k| !seen.contains(k)).collect();
        eprintln!(
            "{}: {} of {n} markers, missing {missing:?}; {} pages; {:?}",
            pdf.display(),
            seen.len(),
            d.pages.unwrap_or(0),
            d.error
        );
    }
    // A marker may share its block with prose before it, or be read into
    // the table's block: every marker in a block counts, before its table.
    let mut current: Option<usize> = None;
    for b in &d.blocks {
        let text = d.text.get(b.start..b.end).unwrap_or_default();
        if let Some(k) = markers(text).last() {
            if *k >= 1 && *k <= n {
                current = Some(k - 1);
            }
        }
        if b.kind == BlockKind::Table {
            if let Some(k) = current {
                out[k].push(b.cells.clone());
            }
        }
    }
    out
}

/// The K of every "Table K. Characteristics reported in …" in a text.
fn markers(text: &str) -> Vec<usize> {
    text.match_indices("Table ")
        .filter_map(|(i, m)| marker(&text[i + m.len()..]))
        .collect()
}

/// "K. Characteristics reported in …" (after "Table ") → K.
fn marker(rest: &str) -> Option<usize> {
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let tail = &rest[digits.len()..];
    (tail.starts_with(". Characteristics reported in")).then(|| digits.parse().ok())?
}

fn sources(dirs: &[PathBuf]) -> Vec<Source> {
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "nxml" || e == "xml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for f in files {
        let paper = f.file_stem().unwrap().to_string_lossy().to_string();
        // A paper in two sets is rendered once.
        if !seen.insert(paper.clone()) {
            continue;
        }
        let Ok(d) = ingest_file(&f, &IngestSpec::default()) else {
            continue;
        };
        let prose = paragraphs(&d);
        for b in d.blocks.iter().filter(|b| b.kind == BlockKind::Table) {
            let rows = b.cells.iter().map(|c| c.row + 1).max().unwrap_or(0);
            let cols = table_columns(&b.cells);
            if rows >= 2 && cols >= 2 && rows <= 60 {
                out.push(Source {
                    paper: paper.clone(),
                    cells: b.cells.clone(),
                    prose: prose.clone(),
                });
            }
        }
    }
    out
}

fn paragraphs(d: &Document) -> Vec<String> {
    d.blocks
        .iter()
        .filter(|b| b.kind == BlockKind::Paragraph)
        .map(|b| d.text[b.start..b.end].to_string())
        .filter(|t| t.len() > 300 && t.len() < 1500)
        .take(3)
        .collect()
}

/// `cohort_tables` items of table K: the rendered cells' (the truth,
/// read as a document's cells) and the blocks read from the PDF (read as
/// page layout), under the same caption and footnote; scored as the
/// tables bench scores a paper's PDF items against its XML's.
fn items(
    k: usize,
    s: &Source,
    style: &Style,
    truth: &[Cell],
    found: &[Vec<Cell>],
    misses: bool,
) -> Score {
    let table_id = format!("Table {}", k + 1);
    let caption = format!("{table_id}. Characteristics reported in {}", s.paper);
    let notes: Vec<String> = if style.marks {
        vec![FOOTNOTE.to_string()]
    } else {
        Vec::new()
    };
    let table = |cells: &[Cell], layout: bool| TableIn {
        table_id: table_id.clone(),
        caption: caption.clone(),
        notes: notes.clone(),
        cells: cells.to_vec(),
        layout,
    };
    // The truth's labels with the marks the style appended glued on, as
    // the mark is set (raised, no space) and as publishers' XML gives it
    // ("Methotrexate<sup>a</sup>"): items keep a label's marks.
    let plain: Vec<Cell> = truth
        .iter()
        .map(|c| Cell {
            text: match c.text.strip_suffix(" a") {
                Some(t) if style.marks && c.col == 0 => format!("{t}a"),
                _ => c.text.clone(),
            },
            ..c.clone()
        })
        .collect();
    let gold: Vec<Gold> = interpret(&table(&plain, false))
        .into_iter()
        .filter_map(|it| {
            Some(Gold {
                pmcid: s.paper.clone(),
                table: it.table_id.clone(),
                arm: it.arm.clone()?,
                characteristic: it.characteristic.clone(),
                category: it.category.clone(),
                measure: it.measure.as_str().to_string(),
                value: it.value?,
            })
        })
        .collect();
    let read: Vec<_> = found
        .iter()
        .flat_map(|cells| interpret(&table(cells, true)))
        .collect();
    score(&gold, &read, misses, "pdf")
}

fn show(truth: &[Cell], found: &[Vec<Cell>]) {
    println!("truth:");
    common::dump_cells(truth);
    for (i, f) in found.iter().enumerate() {
        println!("read, block {}:", i + 1);
        common::dump_cells(f);
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("tests/data/rct_baseline/jats")];
    if let Some(d) = common::shared_data(
        "evidence_inference/xml_sample",
        "30 trial papers as JATS XML (Evidence Inference, MIT)",
    ) {
        dirs.push(d);
    }
    if let Some(d) = common::shared_data(
        "rct_tables_more/jats",
        "17 trial papers as publisher XML (rct_tables_more)",
    ) {
        dirs.push(d);
    }
    let all = sources(&dirs);
    let dir = std::env::temp_dir().join("quarry-layouts");
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let only = std::env::var("QUARRY_LAYOUTS_STYLE").ok();
    let show_k: Option<usize> = std::env::var("QUARRY_LAYOUTS_SHOW")
        .ok()
        .and_then(|s| s.parse().ok());
    let list = std::env::var("QUARRY_LAYOUTS_LIST").is_ok();
    let misses_k: Option<usize> = std::env::var("QUARRY_LAYOUTS_MISSES")
        .ok()
        .and_then(|s| s.parse().ok());
    let (looked, held): (Vec<&Source>, Vec<&Source>) =
        all.iter().partition(|s| !common::held_out(&s.paper));
    println!(
        "{} tables from {} XML files ({} looked at, {} held out); chromium: {}",
        all.len(),
        all.iter()
            .map(|s| &s.paper)
            .collect::<std::collections::HashSet<_>>()
            .len(),
        looked.len(),
        held.len(),
        chromium()
    );
    println!(
        "{:<16} | {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} | {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "style",
        "tables",
        "missed",
        "adj P",
        "adj R",
        "adj F1",
        "items",
        "tables",
        "missed",
        "adj P",
        "adj R",
        "adj F1",
        "items"
    );
    println!("{:<16} | {:^41} | {:^41}", "", "looked at", "held out");
    let mut total = [(0usize, 0usize, Tally::default(), Score::default()); 2];
    let mut parts: Vec<(String, [Score; 2])> = Vec::new();
    for style in styles() {
        if only.as_deref().is_some_and(|o| o != style.name) {
            continue;
        }
        let mut line = format!("{:<16}", style.name);
        parts.push((style.name.to_string(), [Score::default(); 2]));
        for (part, set) in [&looked, &held].into_iter().enumerate() {
            let html = page_html(set, &style);
            let Some(pdf) = print(&html, &dir) else {
                return;
            };
            let found = read_back(&pdf, set.len());
            let mut tally = Tally::default();
            let mut cohort = Score::default();
            let mut missed = 0;
            for (k, (s, f)) in set.iter().zip(&found).enumerate() {
                let truth = styled_cells(&s.cells, &style);
                let read: Vec<Relation> = f.iter().flat_map(|c| relations(c)).collect();
                missed += usize::from(f.is_empty());
                tally.add(Tally::of(&relations(&truth), &read));
                // Misses are printed for the looked-at half only.
                let misses = part == 0 && misses_k == Some(k + 1);
                let sc = items(k, s, &style, &truth, f, misses);
                cohort.add(&sc);
                if part == 0 && list {
                    let t = Tally::of(&relations(&truth), &read);
                    println!(
                        "  {} table {:>3} {:<12} {:>3} rows {:>2} blocks  F1 {:.3}  items {:>4} {:>5.1}%",
                        style.name,
                        k + 1,
                        s.paper,
                        truth.iter().map(|c| c.row + 1).max().unwrap_or(0),
                        f.len(),
                        t.f1(),
                        sc.gold,
                        Score::pct(sc.overall, sc.gold)
                    );
                }
                if part == 0 && show_k == Some(k + 1) {
                    println!("{} table {} ({}):", style.name, k + 1, s.paper);
                    show(&truth, f);
                }
            }
            let _ = write!(
                line,
                " | {:>6} {:>6} {:>6.3} {:>6.3} {:>6.3} {:>5.1}%",
                set.len(),
                missed,
                tally.precision(),
                tally.recall(),
                tally.f1(),
                Score::pct(cohort.overall, cohort.gold)
            );
            total[part].0 += set.len();
            total[part].1 += missed;
            total[part].2.add(tally);
            total[part].3.add(&cohort);
            if let Some(p) = parts.last_mut() {
                p.1[part].add(&cohort);
            }
        }
        println!("{line}");
    }
    let mut line = format!("{:<16}", "all styles");
    for (n, missed, t, c) in total {
        let _ = write!(
            line,
            " | {:>6} {:>6} {:>6.3} {:>6.3} {:>6.3} {:>5.1}%",
            n,
            missed,
            t.precision(),
            t.recall(),
            t.f1(),
            Score::pct(c.overall, c.gold)
        );
    }
    println!("{line}");
    // Where the items are lost: the value found, its measure, its grouping
    // (each of all the truth's items).
    println!(
        "{:<16} | {:>7} {:>7} {:>7} | {:>7} {:>7} {:>7}",
        "items by part", "values", "measure", "group", "values", "measure", "group"
    );
    parts.push(("all styles".to_string(), [total[0].3, total[1].3]));
    for (name, sc) in &parts {
        let mut line = format!("{name:<16}");
        for c in sc {
            let _ = write!(
                line,
                " | {:>6.1}% {:>6.1}% {:>6.1}%",
                Score::pct(c.parsed, c.gold),
                Score::pct(c.measure, c.gold),
                Score::pct(c.grouped, c.gold)
            );
        }
        println!("{line}");
    }
    println!("PDFs and their HTML: {}", dir.display());
}
