//! Tables on a PDF page, in stages, each in its own file with its own tests:
//! [`detect`] finds table regions among a page's lines (rules, aligned runs
//! of short pieces); [`grid`] cuts a region into rows and columns and places
//! each line; [`header`] decides the header rows and what each header cell
//! spans; [`merge`] joins a cell's lines set on several rows.

pub mod detect;
pub mod grid;
pub mod header;
pub mod merge;

use super::interp::Rule;
use super::layout::{LBlock, Line};

/// A table cell found on the page.
#[derive(Debug, Clone)]
pub struct TCell {
    /// Row, from 0.
    pub row: u32,
    /// Column, from 0.
    pub col: u32,
    /// Columns spanned.
    pub col_span: u32,
    /// Text.
    pub text: String,
    /// Indent level (ems from the column's left edge, first column).
    pub indent: u32,
    /// Bold.
    pub bold: bool,
    /// Bounding box (x0, y0, x1, y1), top-down.
    pub bbox: (f32, f32, f32, f32),
}

impl From<&TCell> for crate::ingest::Cell {
    /// A PDF table cell as a block's cell (a PDF cell spans one row).
    fn from(c: &TCell) -> Self {
        Self {
            row: c.row,
            col: c.col,
            row_span: 1,
            col_span: c.col_span,
            text: c.text.clone(),
            indent: c.indent,
            bold: c.bold,
        }
    }
}

/// Whether two lines share a baseline (one table row).
fn same_row(a: &Line, b: &Line) -> bool {
    (a.y - b.y).abs() < 0.5 * a.size.max(b.size)
}

/// A cell mostly of digits.
fn is_numeric_cell(s: &str) -> bool {
    let digits = s.chars().filter(|c| c.is_ascii_digit()).count();
    let letters = s.chars().filter(|c| c.is_alphabetic()).count();
    digits > 0 && digits >= letters
}

/// Finds table regions among a page's lines and turns each into a table
/// block; returns the blocks and the lines left for the text flow.
pub fn tables(lines: Vec<Line>, rules: &[Rule], page_width: f32) -> (Vec<LBlock>, Vec<Line>) {
    if lines.is_empty() {
        return (Vec::new(), lines);
    }
    let rows = detect::rows(&lines);
    let regions = detect::regions(&lines, &rows, rules, page_width);
    if regions.is_empty() {
        return (Vec::new(), lines);
    }
    let mut tables = Vec::new();
    let mut rest = Vec::new();
    let mut members: Vec<Vec<Line>> = vec![Vec::new(); regions.len()];
    for l in lines {
        let cy = l.y - 0.3 * l.size;
        let cx = (l.x0 + l.x1) / 2.0;
        match regions
            .iter()
            .position(|r| cx >= r.0 && cx <= r.2 && cy >= r.1 && cy <= r.3)
        {
            Some(k) => members[k].push(l),
            None => rest.push(l),
        }
    }
    for (k, m) in members.into_iter().enumerate() {
        if m.is_empty() {
            continue;
        }
        let cells = cells(&m);
        let r = regions[k];
        tables.push(LBlock {
            lines: m,
            x0: r.0,
            y0: r.1,
            x1: r.2,
            y1: r.3,
            table: Some(cells),
        });
    }
    (tables, rest)
}

/// The cells of one table region, stage by stage.
pub fn cells(lines: &[Line]) -> Vec<TCell> {
    let lines = grid::cut_at_column_starts(lines);
    let grid = grid::Grid::new(&lines);
    let first_body = header::first_body(&grid.rows);
    let mut placed = grid.place(first_body);
    header::aligned_apart(&mut placed, first_body);
    let (centred, first_body) = merge::centred(placed, first_body);
    let (wrapped, first_body) = merge::wrapped(centred, first_body);
    let mut out = merge::continuations(wrapped, first_body);
    let first_body = header::stub_heading_between(&mut out, first_body);
    header::group_spans(&mut out, first_body);
    header::title_spans(&mut out);
    grid::centred_stub(&mut out);
    out
}

/// Lines for the stages' tests: words of 5 pt a character, 2.5 pt apart.
#[cfg(test)]
pub(crate) mod fixture {
    use super::super::layout::{Line, Word};

    /// One line at (x0, baseline y), 10 pt.
    pub fn line(x0: f32, y: f32, text: &str) -> Line {
        let mut x = x0;
        let words = text
            .split(' ')
            .map(|t| {
                let w = Word {
                    text: t.to_string(),
                    x0: x,
                    x1: x + 5.0 * t.chars().count() as f32,
                    y,
                    size: 10.0,
                    bold: false,
                    conf: None,
                };
                x = w.x1 + 2.5;
                w
            })
            .collect();
        Line::new(words)
    }

    /// A table written as rows of (x0, text) pieces, 14 pt apart from y=100.
    pub fn laid_out(rows: &[&[(f32, &str)]]) -> Vec<Line> {
        rows.iter()
            .enumerate()
            .flat_map(|(i, r)| {
                r.iter()
                    .map(move |(x, t)| line(*x, 100.0 + 14.0 * i as f32, t))
            })
            .collect()
    }

    /// A plain three-arm table: a header row and four body rows.
    pub fn simple() -> Vec<Line> {
        laid_out(&[
            &[(200.0, "Drug"), (300.0, "Placebo"), (400.0, "P")],
            &[
                (50.0, "Age"),
                (200.0, "34.1"),
                (300.0, "35.2"),
                (400.0, "0.41"),
            ],
            &[
                (50.0, "Women"),
                (200.0, "12"),
                (300.0, "14"),
                (400.0, "0.52"),
            ],
            &[
                (50.0, "Weight"),
                (200.0, "71.2"),
                (300.0, "70.9"),
                (400.0, "0.88"),
            ],
            &[
                (50.0, "Smokers"),
                (200.0, "5"),
                (300.0, "7"),
                (400.0, "0.30"),
            ],
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::*;
    use super::*;

    fn grid_of(cells: &[TCell]) -> Vec<(u32, u32, u32, String)> {
        cells
            .iter()
            .map(|c| (c.row, c.col, c.col_span, c.text.clone()))
            .collect()
    }

    #[test]
    fn an_unruled_table_is_found_and_cut_into_its_cells() {
        let mut lines = simple();
        lines.push(line(
            50.0,
            40.0,
            "Table 1 Baseline characteristics of the participants",
        ));
        lines.sort_by(|a, b| a.y.total_cmp(&b.y));
        let (tables, rest) = tables(lines, &[], 600.0);
        assert_eq!(tables.len(), 1);
        assert_eq!(rest.len(), 1, "the caption stays in the text flow");
        let cells = tables[0].table.as_ref().unwrap();
        let g = grid_of(cells);
        assert_eq!(g.len(), 19);
        assert!(g.contains(&(0, 1, 1, "Drug".into())));
        assert!(g.contains(&(2, 0, 1, "Women".into())));
        assert!(g.contains(&(4, 3, 1, "0.30".into())));
    }
}
