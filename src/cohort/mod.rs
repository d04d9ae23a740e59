//! Baseline-characteristics tables ("Table 1" of a trial paper) to data
//! items and an RDF knowledge graph, after seed 003: table → tree table →
//! tokens and measures → templates (column = study arm, row = subject
//! characteristic, cell = statistical measures with their values).
//!
//! Rule-based and model-free. The same cells come from JATS/HTML/DOCX tables
//! (real cells) and from PDF tables (cells from layout), so one interpreter
//! serves both.
//!
//! - **Header rows**: the first row, then rows with no value and an empty
//!   (or spanned) first cell ("N = 326" under each arm, "n (%)", "N | %").
//! - **Stub columns**: leading columns whose body cells are mostly not values;
//!   each is a level of row headers ("Background characteristics" ›
//!   "Gender, n (%)" › "Male").
//! - **Arms**: the other columns, grouped under their top header; P value,
//!   test statistic, odds ratio, difference and reference-population
//!   columns are not arms (by header, or by cells that are all P values).
//! - **Tree**: within a stub column, indentation nests rows; a row with no
//!   values opens a group (a categorical characteristic or a heading);
//!   without indentation the group runs to the next such row, or closes
//!   once its categories' percentages add up to 100.
//! - **Measures**: from the row label, the column's headers, the parent
//!   rows, the caption, then the table's footnotes, taking the first named
//!   measure sequence that fits the cell's shape; else "±" is mean ± SD, a
//!   percentage sign or a share of the arm's size is count (percent), and an
//!   interval after a number is median (IQR). A cell nothing fits is one
//!   item with measure `other`.

mod arms;
mod grid;
mod items;
mod measures;
pub mod score;
pub mod tokens;
pub mod turtle;

use arms::{arm_like, column_headers, find_arms, stated_n, Arm};
use grid::{header_rows, is_value, merge_layout_rows, row_parts, stub_end, Grid};
use items::{tree_items, with_sizes, Body};
pub use measures::strip_annotation;
use measures::{is_size_label, note_marks, push_cell_items, unit_of, CellContext};
use tokens::{descriptors, measure_only, shape, tokenize, Measure};

use unicode_normalization::UnicodeNormalization;

use crate::ingest::{BlockKind, Cell, Document};

/// One data item: one number in a table cell, placed.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// "Table 1", or "table 3" (its position) when the caption has no label.
    pub table_id: String,
    /// The table's caption.
    pub caption: String,
    /// The study arm (column header path without sizes and measure names).
    pub arm: Option<String>,
    /// The arm's size where a header or an "n" row states it.
    pub arm_n: Option<i64>,
    /// Row headers from the top (measure-only rows left out).
    pub characteristic: Vec<String>,
    /// The sub-population a count or percentage describes.
    pub category: Option<String>,
    /// The statistical measure.
    pub measure: Measure,
    /// The number.
    pub value: Option<f64>,
    /// The unit the row headers name.
    pub unit: Option<String>,
    /// The cell's text.
    pub cell_text: String,
    /// Why a table or cell was not interpreted, or how a measure was chosen
    /// when it was a guess.
    pub note: Option<String>,
}

/// A table as the interpreter sees it.
#[derive(Debug, Clone)]
pub struct TableIn {
    /// Its id ("Table 1").
    pub table_id: String,
    /// Its caption.
    pub caption: String,
    /// Its footnotes.
    pub notes: Vec<String>,
    /// Its cells.
    pub cells: Vec<Cell>,
    /// Whether the cells come from page layout (a PDF), where a cell's
    /// text can wrap onto rows of its own.
    pub layout: bool,
}

/// The tables of a document with their captions and footnotes: a table's
/// caption is the nearest on the side the document puts them (above in
/// most journals, below in some), else the one right next to it on the
/// other side that no table claimed; footnotes right after it are its
/// notes.
pub fn tables_of(doc: &Document) -> Vec<TableIn> {
    let text = |k: usize| doc.text[doc.blocks[k].start..doc.blocks[k].end].to_string();
    let tables: Vec<usize> = doc
        .blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.kind == BlockKind::Table && !b.cells.is_empty())
        .map(|(k, _)| k)
        .collect();
    // A caption block, or (formats without captions: Markdown, text, Word
    // without caption styles) a short paragraph right next to the table
    // that starts with its label ("Table 3 The effects of ...").
    let is_table_caption = |j: usize, k: usize| {
        let kind = doc.blocks[j].kind;
        let next_to = j + 1 == k || j == k + 1;
        (kind == BlockKind::Caption
            || kind == BlockKind::Paragraph && next_to && text(j).len() < 400)
            && table_label(&text(j)).is_some()
    };
    // Which side a document puts its table captions on: most journals
    // above the table, some below. Each table caption votes for the side
    // its nearest table (within four blocks) is on; a tie is above.
    let is_table = |j: usize| {
        doc.blocks
            .get(j)
            .is_some_and(|b| b.kind == BlockKind::Table)
    };
    let (mut above, mut below) = (0, 0);
    for j in 0..doc.blocks.len() {
        if doc.blocks[j].kind == BlockKind::Caption && table_label(&text(j)).is_some() {
            let after = (1..=4).find(|d| is_table(j + d));
            let before = (1..=4.min(j)).find(|d| is_table(j - d));
            match (after, before) {
                (Some(a), Some(b)) if b < a => below += 1,
                (None, Some(_)) => below += 1,
                (Some(_), _) => above += 1,
                (None, None) => {}
            }
        }
    }
    // The blocks to look at for a table's caption on one side: the nearest
    // first, up to `reach` (other blocks may sit between in a PDF), never
    // past another table; past four, only on the table's page.
    let side = |k: usize, before: bool, reach: usize| -> Vec<usize> {
        let range: Vec<usize> = if before {
            (k.saturating_sub(reach)..k).rev().collect()
        } else {
            (k + 1..doc.blocks.len().min(k + reach + 1)).collect()
        };
        let page = doc.blocks[k].page;
        range
            .into_iter()
            .take_while(|&j| !is_table(j) && (reach <= 4 || doc.blocks[j].page == page))
            .collect()
    };
    let mut used_caption = vec![false; doc.blocks.len()];
    let mut captions: Vec<Option<usize>> = vec![None; tables.len()];
    // First every table takes the nearest free caption on the document's
    // side, so that a neighbouring table (or text read as one) cannot take
    // it from the other side; then a table with none looks right after
    // (captions above) or right before (below) it.
    // Last, a table still without one takes a free caption further off on
    // the document's side, on its page (a narrow caption over a table
    // across both columns is read before the column beside it).
    let captions_above = above >= below;
    for (before, reach) in [
        (captions_above, 4),
        (!captions_above, 1),
        (captions_above, 8),
    ] {
        for (t, &k) in tables.iter().enumerate() {
            if captions[t].is_some() {
                continue;
            }
            if let Some(j) = side(k, before, reach)
                .into_iter()
                .find(|&j| !used_caption[j] && is_table_caption(j, k))
            {
                captions[t] = Some(j);
                used_caption[j] = true;
            }
        }
    }
    let mut out = Vec::new();
    for (t, &k) in tables.iter().enumerate() {
        let b = &doc.blocks[k];
        let caption = captions[t];
        let caption_text = caption.map(&text).unwrap_or_default();
        let table_id =
            table_label(&caption_text).unwrap_or_else(|| format!("table {}", out.len() + 1));
        let mut notes = Vec::new();
        for j in k + 1..doc.blocks.len().min(k + 16) {
            match doc.blocks[j].kind {
                BlockKind::Footnote => notes.push(text(j)),
                BlockKind::Caption if Some(j) == caption => {}
                BlockKind::Paragraph if notes.is_empty() && j <= k + 2 => {
                    let note = text(j);
                    if note.len() < 600 && !descriptors(&note).is_empty() && states_measures(&note)
                    {
                        notes.push(note);
                    }
                }
                _ => break,
            }
        }
        out.push(TableIn {
            table_id,
            caption: caption_text,
            notes,
            cells: b.cells.clone(),
            layout: doc
                .extractor
                .as_deref()
                .is_some_and(|x| x.starts_with("pdf")),
        });
    }
    // The parts of a table continued across pages that were not joined
    // carry one label; the notes under the last part are all the parts'.
    for t in 0..out.len() {
        if out[t].notes.is_empty() && table_label(&out[t].caption).is_some() {
            if let Some(notes) = out
                .iter()
                .find(|o| o.table_id == out[t].table_id && !o.notes.is_empty())
                .map(|o| o.notes.clone())
            {
                out[t].notes = notes;
            }
        }
    }
    out
}

/// Whether a paragraph after a table reads as its note on measures
/// ("Data are mean ± SD", "Values are n (%)").
fn states_measures(t: &str) -> bool {
    let l = t.to_lowercase();
    [
        "data are",
        "values are",
        "presented as",
        "expressed as",
        "given as",
        "shown as",
        "reported as",
        "data is",
        "results are",
    ]
    .iter()
    .any(|p| l.contains(p))
}

/// Whether a caption names a table of the participants' characteristics at
/// the start ("Baseline characteristics", "Demographic and clinical
/// characteristics of the study population", "… at randomisation").
pub fn is_baseline(caption: &str) -> bool {
    let l = caption.to_lowercase();
    [
        "baseline",
        "characteristic",
        "demographic",
        "at entry",
        "at study entry",
        "at enrolment",
        "at enrollment",
        "at randomisation",
        "at randomization",
        "at inclusion",
        "at admission",
        "study population",
        "of the participants",
        "of participants",
        "of the patients",
        "of patients",
        "of the subjects",
        "of the study sample",
        "of the cohort",
    ]
    .iter()
    .any(|k| l.contains(k))
}

/// "Table 1", "Table S2", "Supplementary Table 3" at the start of a caption.
pub fn table_label(caption: &str) -> Option<String> {
    let t = caption.trim_start();
    let lower = t.to_lowercase();
    let start = lower.find("table")?;
    if start > 20 {
        return None;
    }
    let rest = &t[start + 5..];
    let id: String = rest
        .trim_start_matches([' ', '\u{a0}'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    // A number ("2", "S2", "3a") or a Roman numeral in capitals ("II").
    let roman = !id.is_empty() && id.len() <= 6 && id.chars().all(|c| "IVXL".contains(c));
    if id.is_empty() || !id.chars().any(|c| c.is_ascii_digit()) && !roman {
        return None;
    }
    Some(format!("Table {id}"))
}

/// Interprets one table into data items.
pub fn interpret(t: &TableIn) -> Vec<Item> {
    // A caption laid out inside the table region (a PDF table whose rules
    // enclose its title) is its first row: take it as the caption.
    let mut t = t.clone();
    // Compatibility forms read as their plain letters: a math-italic "𝑁"
    // header is "N", "kg/m²" is "kg/m2", "ﬁ" is "fi".
    for c in &mut t.cells {
        if !c.text.is_ascii() {
            c.text = c.text.nfkc().collect();
        }
    }
    let first_row: Vec<&Cell> = t.cells.iter().filter(|c| c.row == 0).collect();
    if let [only] = first_row[..] {
        if let Some(label) = table_label(&only.text) {
            if t.caption.is_empty() || t.table_id.starts_with("table ") {
                t.caption = only.text.clone();
                t.table_id = label;
            }
            t.cells.retain(|c| c.row != 0);
            for c in &mut t.cells {
                c.row -= 1;
            }
        }
    }
    let t = &t;
    let g = Grid::new(&t.cells);
    let base = Item {
        table_id: t.table_id.clone(),
        caption: t.caption.clone(),
        arm: None,
        arm_n: None,
        characteristic: vec![],
        category: None,
        measure: Measure::Other,
        value: None,
        unit: None,
        cell_text: String::new(),
        note: None,
    };
    let skip = |why: &str| {
        vec![Item {
            note: Some(format!("table skipped: {why}")),
            ..base.clone()
        }]
    };
    if g.nrows < 2 || g.ncols < 2 {
        return skip("fewer than two rows or columns");
    }
    // Header rows.
    let nhead = header_rows(&g);
    let merged;
    let g = if t.layout {
        merged = merge_layout_rows(&t.cells, nhead);
        Grid::new(&merged)
    } else {
        g
    };
    let body: Vec<usize> = (nhead..g.nrows).collect();
    let data_start = stub_end(&g, &body);
    if data_start >= g.ncols {
        return skip("no column of values");
    }
    let col_headers = column_headers(&g, nhead, t.layout);
    let mut arms = find_arms(&g, &col_headers, &body, data_start);
    if arms.is_empty() {
        return skip(
            "no column looks like a study arm (all are P values, statistics or differences)",
        );
    }
    // A single arm takes its size from the caption ("participants (n=40)").
    if arms.len() == 1 && arms[0].n.is_none() {
        arms[0].n = stated_n(&t.caption);
    }
    let table_desc: Vec<Vec<Measure>> = descriptors(&t.caption);
    let note_desc: Vec<Vec<Measure>> = t.notes.iter().flat_map(|n| descriptors(n)).collect();
    let marks = note_marks(&t.notes);
    if let Some(items) = transposed(
        &g,
        &body,
        data_start,
        &arms,
        &col_headers,
        &table_desc,
        &note_desc,
        &base,
    ) {
        return items;
    }

    let items = tree_items(&Body {
        g: &g,
        body: &body,
        data_start,
        nhead,
        arms: &arms,
        col_headers: &col_headers,
        table_desc: &table_desc,
        note_desc: &note_desc,
        marks: &marks,
        base: &base,
    });
    if items.is_empty() {
        return skip("no cell held a number under an arm");
    }
    with_sizes(items, &arms, &base)
}

/// A table with its arms in rows and characteristics in columns: the same
/// run of row labels (e.g. "Control", "Basic", "Plus") repeats under two or
/// more group rows (time points), and the labels name no measures. Each
/// valued row is then an arm (its group and label), each column a
/// characteristic (its headers without measure names), and the column
/// headers' measure names ("Mean (SE)") read the cells.
#[allow(clippy::too_many_arguments)]
fn transposed(
    g: &Grid,
    body: &[usize],
    data_start: usize,
    arms: &[Arm],
    col_headers: &[Vec<String>],
    table_desc: &[Vec<Measure>],
    note_desc: &[Vec<Measure>],
    base: &Item,
) -> Option<Vec<Item>> {
    let nhead = body.first().copied()?;
    let valued =
        |r: usize| (data_start..g.ncols).any(|c| g.origin_text(r, c).is_some_and(is_value));
    // Runs of valued-row labels under each valueless group row.
    let mut groups: Vec<(String, Vec<(usize, String)>)> = Vec::new();
    for &r in body {
        let parts = row_parts(g, r, data_start, nhead);
        let label = parts
            .iter()
            .map(|p| p.1.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if !valued(r) {
            if !label.is_empty() {
                groups.push((label, vec![]));
            }
        } else if let Some(gr) = groups.last_mut() {
            gr.1.push((r, label));
        } else {
            return None;
        }
    }
    let seq = |v: &Vec<(usize, String)>| v.iter().map(|x| x.1.clone()).collect::<Vec<_>>();
    let first = seq(&groups.first()?.1);
    if groups.len() < 2
        || first.len() < 2
        || groups.iter().any(|gr| seq(&gr.1) != first)
        || first
            .iter()
            .any(|l| !descriptors(l).is_empty() || is_size_label(l))
    {
        return None;
    }
    // Columns headed as arms ("Control group", "Placebo (n = 40)") over
    // rows that are not: the repeated rows are subgroups under each
    // outcome ("All households", "Below poverty line"), not arms.
    if arms.iter().any(|a| arm_like(&a.header)) && !first.iter().any(|l| arm_like(l)) {
        return None;
    }
    let mut items = Vec::new();
    let cols: Vec<usize> = arms.iter().flat_map(|a| a.cols.iter().copied()).collect();
    for (group, rows) in &groups {
        for (r, label) in rows {
            let arm = format!("{group} / {label}");
            for &c in &cols {
                let Some(text) = g.origin_text(*r, c) else {
                    continue;
                };
                let Some((vals, sh)) = shape(&tokenize(text)) else {
                    continue;
                };
                let path: Vec<String> = col_headers[c]
                    .iter()
                    .filter(|h| !measure_only(h))
                    .cloned()
                    .collect();
                let mut sources: Vec<Vec<Vec<Measure>>> = col_headers[c]
                    .iter()
                    .rev()
                    .map(|h| descriptors(h))
                    .collect();
                sources.push(descriptors(&col_headers[c].join(" ")));
                sources.push(table_desc.to_vec());
                sources.push(note_desc.to_vec());
                let item = Item {
                    arm: Some(arm.clone()),
                    characteristic: path.clone(),
                    unit: unit_of(&path),
                    cell_text: text.to_string(),
                    ..base.clone()
                };
                let weak_from = sources.len() - 2;
                push_cell_items(
                    &mut items,
                    item,
                    &vals,
                    &sh,
                    &CellContext {
                        sources: &sources,
                        weak_from,
                        arm_n: None,
                        categorical: false,
                        split: None,
                        category: String::new(),
                        marked: None,
                    },
                );
            }
        }
    }
    (!items.is_empty()).then_some(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(caption: &str, notes: &[&str], cells: Vec<Cell>) -> Vec<Item> {
        interpret(&TableIn {
            table_id: "Table 1".into(),
            caption: caption.into(),
            notes: notes.iter().map(|n| n.to_string()).collect(),
            cells,
            layout: false,
        })
    }

    /// A one-row, one-column cell (the stages' tests use it too).
    pub(super) fn cell(row: u32, col: u32, text: &str) -> Cell {
        Cell {
            row,
            col,
            row_span: 1,
            col_span: 1,
            text: text.into(),
            indent: 0,
            bold: false,
        }
    }

    /// A document of blocks (kind, text), tables with one cell.
    fn doc(blocks: &[(BlockKind, &str)]) -> Document {
        let mut d = Document::empty(
            crate::source::Entry::local(std::path::Path::new("t.pdf"), 0),
            crate::ingest::Status::Ok,
            Some("pdf"),
            None,
        );
        for (kind, text) in blocks {
            let start = d.text.len();
            d.text.push_str(text);
            d.blocks.push(crate::ingest::Block {
                kind: *kind,
                page: Some(1),
                section: None,
                start,
                end: d.text.len(),
                cells: if *kind == BlockKind::Table {
                    vec![cell(0, 0, text)]
                } else {
                    Vec::new()
                },
                confidence: None,
            });
            d.text.push('\n');
        }
        d
    }

    fn ids(d: &Document) -> Vec<(String, String)> {
        tables_of(d)
            .into_iter()
            .map(|t| (t.cells[0].text.clone(), t.table_id))
            .collect()
    }

    #[test]
    fn captions_go_with_the_table_on_the_documents_side() {
        use BlockKind::{Caption, Paragraph, Table};
        // Captions above: text read as a table before "Table 1" does not
        // take it from the table below it.
        let d = doc(&[
            (Table, "two columns of text"),
            (Caption, "Table 1. Results"),
            (Table, "first"),
            (Caption, "Table 2. Course"),
            (Table, "second"),
        ]);
        assert_eq!(
            ids(&d),
            [
                ("two columns of text".into(), "table 1".into()),
                ("first".into(), "Table 1".into()),
                ("second".into(), "Table 2".into())
            ]
        );
        // Captions below, with text between a caption and the next table.
        let d = doc(&[
            (Table, "first"),
            (Caption, "Table 1. Baseline"),
            (Paragraph, "Results text."),
            (Table, "second"),
            (Caption, "Table 2. Outcomes"),
        ]);
        assert_eq!(
            ids(&d),
            [
                ("first".into(), "Table 1".into()),
                ("second".into(), "Table 2".into())
            ]
        );
    }

    #[test]
    fn a_caption_further_off_on_the_tables_page_is_its_caption() {
        use BlockKind::{Caption, Paragraph, Table};
        let mut d = doc(&[
            (Caption, "Table 1. Baseline"),
            (Paragraph, "The other column's text."),
            (Paragraph, "More of it."),
            (Paragraph, "And more."),
            (Paragraph, "The end of it."),
            (Table, "first"),
            (Caption, "Table 2. Outcomes"),
            (Table, "second"),
        ]);
        assert_eq!(
            ids(&d),
            [
                ("first".into(), "Table 1".into()),
                ("second".into(), "Table 2".into())
            ]
        );
        // On another page it is not.
        d.blocks[0].page = Some(0);
        assert_eq!(ids(&d)[0].1, "table 1");
    }

    #[test]
    fn parts_of_a_table_not_joined_share_the_notes_under_the_last() {
        use BlockKind::{Caption, Footnote, Table};
        let d = doc(&[
            (Caption, "Table 2. Baseline"),
            (Table, "first part"),
            (Caption, "Table 2. (continued)"),
            (Table, "second part"),
            (Footnote, "Values are mean (SD)."),
        ]);
        let t = tables_of(&d);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].table_id, "Table 2");
        assert_eq!(t[0].notes, ["Values are mean (SD)."]);
        assert_eq!(t[1].notes, ["Values are mean (SD)."]);
    }

    /// Rows of text: "|" between cells, the first row the header.
    fn rows(lines: &[&str]) -> Vec<Cell> {
        lines
            .iter()
            .enumerate()
            .flat_map(|(r, l)| {
                l.split('|')
                    .enumerate()
                    .map(move |(c, t)| cell(r as u32, c as u32, t.trim()))
            })
            .collect()
    }

    #[test]
    fn arms_in_rows_repeat_under_group_rows_unless_the_columns_are_arms() {
        // Columns that are characteristics, rows the arms at each time.
        let by_rows = rows(&[
            "| Weight (kg) | Waist (cm)",
            "Baseline | |",
            "Control | 80.1 | 95.0",
            "Diet | 81.3 | 96.2",
            "12 months | |",
            "Control | 79.8 | 94.1",
            "Diet | 76.0 | 90.3",
        ]);
        let items = table("Table 1. Outcomes", &[], by_rows);
        let it = items.iter().find(|i| i.value == Some(76.0)).unwrap();
        assert_eq!(it.arm.as_deref(), Some("12 months / Diet"));
        assert_eq!(it.characteristic, ["Weight (kg)"]);
        // Columns headed as arms: the repeated rows are subgroups.
        let by_columns = rows(&[
            "Characteristic | Control group | Intervention group",
            "Latrine use | |",
            "All households | 1,512 | 1,522",
            "Below poverty line | 551 | 452",
            "Open defecation | |",
            "All households | 1,514 | 1,525",
            "Below poverty line | 551 | 453",
        ]);
        let items = table("Table 5. Outcomes", &[], by_columns);
        let it = items.iter().find(|i| i.value == Some(453.0)).unwrap();
        assert_eq!(it.arm.as_deref(), Some("Intervention group"));
        assert_eq!(it.characteristic, ["Open defecation", "Below poverty line"]);
    }

    #[test]
    fn table_labels() {
        assert_eq!(
            table_label("Table 1 Baseline characteristics"),
            Some("Table 1".into())
        );
        assert_eq!(table_label("Table S2. Extra"), Some("Table S2".into()));
        assert_eq!(table_label("Fig 1 Flow"), None);
        assert_eq!(table_label("TABLE II. Outcomes"), Some("Table II".into()));
        assert_eq!(table_label("Table IV"), Some("Table IV".into()));
        assert_eq!(table_label("Table Information"), None);
        assert_eq!(table_label("Tablets were given"), None);
    }

    #[test]
    fn a_count_of_a_total_under_a_count_and_percent_note() {
        let cells = vec![
            cell(0, 1, "With stent"),
            cell(0, 2, "Without stent"),
            cell(1, 0, "Hematuria"),
            cell(1, 1, "19/27"),
            cell(1, 2, "32/32"),
            cell(2, 0, "Extravasation"),
            cell(2, 1, "2 (6.7)"),
            cell(2, 2, "8 (15.3)"),
        ];
        let items = table(
            "Postoperative course",
            &["aData are presented as No. (%)."],
            cells,
        );
        let got = |arm: &str, v: f64| {
            items
                .iter()
                .find(|i| i.arm.as_deref() == Some(arm) && i.value == Some(v))
                .map(|i| i.measure)
        };
        assert_eq!(got("With stent", 19.0), Some(Measure::Count));
        assert_eq!(got("With stent", 27.0), Some(Measure::PopulationSize));
        assert_eq!(got("Without stent", 32.0), Some(Measure::Count));
        assert_eq!(got("With stent", 6.7), Some(Measure::Percent));
    }

    #[test]
    fn a_note_naming_two_kinds_of_measure_gives_each_row_its_own() {
        for note in [
            "Values are presented as mean ± SD or number (%).",
            "aData are expressed as No. (%) or mean ± SD",
        ] {
            let cells = vec![
                cell(0, 1, "Study group"),
                cell(0, 2, "Control group"),
                cell(1, 0, "Age (yr)"),
                cell(1, 1, "35.6 (14.5)"),
                cell(1, 2, "37.4 (18.3)"),
                cell(2, 0, "Sex"),
                Cell {
                    indent: 1,
                    ..cell(3, 0, "Men")
                },
                cell(3, 1, "19 (58)"),
                cell(3, 2, "18 (60)"),
            ];
            let items = table("Age and sex", &[note], cells);
            let measure = |v: f64| items.iter().find(|i| i.value == Some(v)).map(|i| i.measure);
            assert_eq!(measure(35.6), Some(Measure::Mean), "{note}");
            assert_eq!(measure(14.5), Some(Measure::Sd), "{note}");
            assert_eq!(measure(19.0), Some(Measure::Count), "{note}");
            assert_eq!(measure(58.0), Some(Measure::Percent), "{note}");
        }
    }

    #[test]
    fn a_small_table_with_a_categorical_group() {
        let cells = vec![
            cell(0, 1, "Drug (n = 50)"),
            cell(0, 2, "Placebo (n = 40)"),
            cell(0, 3, "P value"),
            cell(1, 0, "Age, years"),
            cell(1, 1, "56.7 ± 10.2"),
            cell(1, 2, "55.0 ± 9.9"),
            cell(1, 3, "0.41"),
            cell(2, 0, "Sex"),
            cell(3, 0, "Male"),
            cell(3, 1, "20 (40.0)"),
            cell(3, 2, "18 (45.0)"),
            cell(4, 0, "Female"),
            cell(4, 1, "30 (60.0)"),
            cell(4, 2, "22 (55.0)"),
            cell(5, 0, "Smoker"),
            cell(5, 1, "10 (20.0)"),
            cell(5, 2, "8 (20.0)"),
            cell(6, 0, "HbA1c, median (IQR)"),
            cell(6, 1, "6.1 [5.4–7.0]"),
            cell(6, 2, "6.3 [5.5–7.2]"),
        ];
        let items = table("Baseline characteristics", &[], cells);
        let find = |arm: &str, path: &[&str], m: Measure| {
            items
                .iter()
                .find(|i| {
                    i.arm.as_deref() == Some(arm) && i.characteristic == path && i.measure == m
                })
                .and_then(|i| i.value)
        };
        assert_eq!(find("Drug", &[], Measure::PopulationSize), Some(50.0));
        assert_eq!(find("Drug", &["Age, years"], Measure::Mean), Some(56.7));
        assert_eq!(find("Placebo", &["Age, years"], Measure::Sd), Some(9.9));
        assert_eq!(find("Drug", &["Sex", "Male"], Measure::Count), Some(20.0));
        assert_eq!(
            find("Placebo", &["Sex", "Female"], Measure::Percent),
            Some(55.0)
        );
        // The group closed at 100%: "Smoker" is its own characteristic.
        assert_eq!(find("Drug", &["Smoker"], Measure::Count), Some(10.0));
        assert_eq!(
            find("Drug", &["HbA1c, median (IQR)"], Measure::IqrHigh),
            Some(7.0)
        );
        assert!(items.iter().all(|i| i.arm.as_deref() != Some("P value")));
        let age = items
            .iter()
            .find(|i| i.characteristic == ["Age, years"])
            .unwrap();
        assert_eq!(age.unit.as_deref(), Some("years"));
        assert_eq!(age.arm_n, Some(50));
    }

    #[test]
    fn footnote_marks_shares_of_the_arm_and_sizes_inside_cells() {
        let cells = vec![
            cell(0, 1, "Iodine (n = 29)"),
            cell(0, 2, "Placebo (n = 30)"),
            cell(1, 0, "Age, yearsa"),
            cell(1, 1, "29.1 (5.7)"),
            cell(1, 2, "29.8 (5.1)"),
            cell(2, 0, "Primiparousb"),
            cell(2, 1, "13 (44.8)"),
            cell(2, 2, "13 (43.3)"),
            cell(3, 0, "Smoker"),
            cell(3, 1, "8 (27.6)"),
            cell(3, 2, "41% (n = 12)"),
        ];
        let items = table(
            "Baseline characteristics, mean (SD)",
            &[
                "aData are presented as mean (standard deviation)",
                "bData are presented as number (percentage)",
            ],
            cells,
        );
        let get = |arm: &str, path: &str, m: Measure| {
            items
                .iter()
                .find(|i| {
                    i.arm.as_deref() == Some(arm) && i.characteristic == [path] && i.measure == m
                })
                .map(|i| (i.value, i.category.clone()))
        };
        assert_eq!(
            get("Iodine", "Age, yearsa", Measure::Sd),
            Some((Some(5.7), None))
        );
        // The mark points to "number (percentage)": the category loses it.
        assert_eq!(
            get("Iodine", "Primiparousb", Measure::Percent),
            Some((Some(44.8), Some("Primiparous".into())))
        );
        // The caption says mean (SD), but 8 is 27.6% of 29: n (%).
        assert_eq!(
            get("Iodine", "Smoker", Measure::Count),
            Some((Some(8.0), Some("Smoker".into())))
        );
        assert_eq!(
            get("Placebo", "Smoker", Measure::Percent).map(|x| x.0),
            Some(Some(41.0))
        );
        assert_eq!(
            get("Placebo", "Smoker", Measure::PopulationSize).map(|x| x.0),
            Some(Some(12.0))
        );
        // The arms' own sizes are still there.
        assert!(items.iter().any(|i| i.arm.as_deref() == Some("Placebo")
            && i.characteristic.is_empty()
            && i.value == Some(30.0)));
    }

    #[test]
    fn a_table_with_no_arm_is_listed_with_its_reason() {
        let cells = vec![
            cell(0, 0, "Outcome"),
            cell(0, 1, "P"),
            cell(1, 0, "Death"),
            cell(1, 1, "0.03"),
        ];
        let items = interpret(&TableIn {
            table_id: "Table 3".into(),
            caption: String::new(),
            notes: vec![],
            cells,
            layout: false,
        });
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].measure, Measure::Other);
        assert!(items[0]
            .note
            .as_deref()
            .unwrap()
            .starts_with("table skipped"));
    }
}
