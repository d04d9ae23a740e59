//! The tree table's grid (seed 003's first stage): cells on a grid of
//! slots (spans cover their slots), the header rows, a laid-out table's
//! label rows joined, and a body row's label parts.

use std::collections::BTreeMap;

use super::arms::stated_n;
use crate::ingest::Cell;

/// A grid position: which cell covers it.
#[derive(Clone, Copy)]
pub(super) struct Slot {
    cell: usize,
    origin: bool,
}

pub(super) struct Grid<'a> {
    cells: &'a [Cell],
    slots: Vec<Vec<Option<Slot>>>,
    pub(super) nrows: usize,
    pub(super) ncols: usize,
}

impl<'a> Grid<'a> {
    pub(super) fn new(cells: &'a [Cell]) -> Self {
        let nrows = cells
            .iter()
            .map(|c| (c.row + c.row_span.max(1)) as usize)
            .max()
            .unwrap_or(0);
        let ncols = cells
            .iter()
            .map(|c| (c.col + c.col_span.max(1)) as usize)
            .max()
            .unwrap_or(0);
        let mut slots = vec![vec![None; ncols]; nrows];
        for (k, c) in cells.iter().enumerate() {
            for r in c.row..c.row + c.row_span.max(1) {
                for col in c.col..c.col + c.col_span.max(1) {
                    let s = &mut slots[r as usize][col as usize];
                    if s.is_none() {
                        *s = Some(Slot {
                            cell: k,
                            origin: r == c.row && col == c.col,
                        });
                    }
                }
            }
        }
        Self {
            cells,
            slots,
            nrows,
            ncols,
        }
    }

    /// The cell covering (r, c), and whether it starts there.
    pub(super) fn at(&self, r: usize, c: usize) -> Option<(&'a Cell, bool)> {
        self.slots
            .get(r)?
            .get(c)?
            .map(|s| (&self.cells[s.cell], s.origin))
    }

    /// The text of the cell starting at (r, c) (its first row, any column
    /// it covers from `c`), when it is not empty.
    pub(super) fn origin_text(&self, r: usize, c: usize) -> Option<&'a str> {
        let (cell, _) = self.at(r, c)?;
        (cell.row as usize == r && cell.col as usize == c && !cell.text.trim().is_empty())
            .then_some(cell.text.trim())
    }
}

/// Whether a cell's text reads as a data value ("56 (12)", "0.49", "<0.001",
/// "NA" is not).
pub(super) fn is_value(t: &str) -> bool {
    let t = t
        .trim()
        .trim_start_matches(['<', '>', '≤', '≥', '~', '=', ' ']);
    // "24-week placebo-controlled period" starts with a number but is text.
    let letters = t.chars().filter(|c| c.is_alphabetic()).count();
    let digits = t.chars().filter(|c| c.is_ascii_digit()).count();
    if letters > digits + 3 {
        return false;
    }
    let mut cs = t.chars();
    match cs.next() {
        Some(c) if c.is_ascii_digit() => true,
        Some(c) if "-\u{2013}\u{2212}".contains(c) => cs.next().is_some_and(|d| d.is_ascii_digit()),
        Some('.') => cs.next().is_some_and(|d| d.is_ascii_digit()),
        _ => false,
    }
}

/// The number of header rows: the first row, then rows with no value whose
/// first cell is empty (or spanned from above), or that label two or more
/// columns ("Characteristic | n=1349 | n=434").
pub(super) fn header_rows(g: &Grid) -> usize {
    let mut nhead = 1;
    while nhead < g.nrows.min(5) {
        let r = nhead;
        let first_empty = match g.at(r, 0) {
            None => true,
            Some((c, origin)) => !origin && (c.row as usize) < nhead || c.text.trim().is_empty(),
        };
        let mut texts = 0;
        let mut has_value = false;
        for c in 1..g.ncols {
            if let Some(tx) = g.origin_text(r, c) {
                texts += 1;
                if is_value(tx) && stated_n(tx).is_none() {
                    has_value = true;
                }
            }
        }
        if texts > 0 && !has_value && (first_empty || texts >= 2) {
            nhead += 1;
        } else {
            break;
        }
    }
    nhead
}

/// Rows of a laid-out table that are pieces of one label: a body row with
/// no value is one label (its cells joined: "Ethnicity (n=1348), | n (%)"
/// is one label that ran into the next columns), and such a row that goes
/// on from the row above ("mean (SD)" under "Age (years),") joins it.
pub(super) fn merge_layout_rows(cells: &[Cell], nhead: usize) -> Vec<Cell> {
    let mut rows: BTreeMap<u32, Vec<Cell>> = BTreeMap::new();
    for c in cells {
        rows.entry(c.row).or_default().push(c.clone());
    }
    let mut out: Vec<Vec<Cell>> = Vec::new();
    for (r, mut row) in rows {
        row.sort_by_key(|c| c.col);
        if (r as usize) < nhead || row.iter().any(|c| is_value(&c.text)) {
            out.push(row);
            continue;
        }
        let text = row
            .iter()
            .map(|c| c.text.trim())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let first = row[0].clone();
        // A lower-case word goes on from the label above ("diabetes" under
        // "Duration of"); a name with capitals in it does not ("d-BT
        // (mmHg)", "eGFR": a new label that starts in lower case).
        let first_word = text.split_whitespace().next().unwrap_or("");
        let goes_on = text.starts_with(|c: char| c.is_lowercase() || c == '(' || c == '[')
            && !first_word.chars().any(char::is_uppercase);
        let prev_ends_open = out.last().and_then(|p| p.first()).is_some_and(|c| {
            let t = c.text.trim_end();
            t.ends_with(',')
                || t.ends_with('(')
                || t.ends_with('-')
                || t.ends_with(" and")
                || t.ends_with(" or")
        });
        let after_body = out.len() > nhead;
        if after_body && (goes_on || prev_ends_open) {
            let prev = out.last_mut().unwrap();
            if let Some(c) = prev.iter_mut().find(|c| c.col <= first.col) {
                let sep = if c.text.ends_with('-') { "" } else { " " };
                c.text = format!("{}{sep}{text}", c.text.trim_end());
                continue;
            }
        }
        out.push(vec![Cell {
            text,
            col_span: 1,
            ..first
        }]);
    }
    out.into_iter()
        .enumerate()
        .flat_map(|(k, row)| {
            row.into_iter().map(move |c| Cell {
                row: k as u32,
                row_span: 1,
                ..c
            })
        })
        .collect()
}

/// The label cells of a body row left of the data: (stub column, text).
pub(super) fn row_parts(
    g: &Grid,
    r: usize,
    data_start: usize,
    nhead: usize,
) -> Vec<(usize, String)> {
    let mut parts = Vec::new();
    for c in 0..data_start {
        if let Some((cell, origin)) = g.at(r, c) {
            let tx = cell.text.trim();
            if tx.is_empty() || cell.col as usize != c || (!origin && (cell.row as usize) < nhead) {
                continue;
            }
            parts.push((c, tx.to_string()));
        }
    }
    parts
}

/// Where the data start: the first column after the stub columns (leading
/// columns whose body cells are mostly not values); the column count when
/// every column is a stub.
pub(super) fn stub_end(g: &Grid, body: &[usize]) -> usize {
    let mut data_start = g.ncols;
    for c in 1..g.ncols {
        let (mut v, mut n) = (0, 0);
        for &r in body {
            if let Some(tx) = g.origin_text(r, c) {
                n += 1;
                if is_value(tx) {
                    v += 1;
                }
            }
        }
        if n > 0 && v * 2 >= n {
            data_start = c;
            break;
        }
    }
    data_start
}

#[cfg(test)]
mod tests {
    use super::super::tests::cell;
    use super::*;

    #[test]
    fn header_rows_and_the_stub_end() {
        let cells = vec![
            cell(0, 1, "Drug"),
            cell(0, 2, "Placebo"),
            cell(1, 1, "n = 50"),
            cell(1, 2, "n = 40"),
            cell(2, 0, "Sex"),
            cell(3, 0, "Women"),
            cell(3, 1, "20 (40.0)"),
            cell(3, 2, "18 (45.0)"),
        ];
        let g = Grid::new(&cells);
        assert_eq!((g.nrows, g.ncols), (4, 3));
        assert_eq!(header_rows(&g), 2);
        assert_eq!(stub_end(&g, &[2, 3]), 1);
        assert_eq!(row_parts(&g, 3, 1, 2), vec![(0, "Women".to_string())]);
        assert!(is_value("56 (12)") && is_value("<0.001") && !is_value("NA"));
    }

    #[test]
    fn a_label_row_goes_on_from_the_row_above_unless_it_is_a_name() {
        let cells = vec![
            cell(0, 1, "Week 0"),
            cell(1, 0, "Duration of"),
            cell(1, 1, "12.1 (3.0)"),
            cell(2, 0, "diabetes, years"),
            cell(3, 0, "s-BP (mmHg)"),
            cell(4, 0, "All (n = 57)"),
            cell(4, 1, "132.3 (10.7)"),
            cell(5, 0, "d-BT (mmHg)"),
            cell(6, 0, "All (n = 57)"),
            cell(6, 1, "83.7 (6.1)"),
        ];
        let merged = merge_layout_rows(&cells, 1);
        let labels: Vec<&str> = merged
            .iter()
            .filter(|c| c.col == 0)
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!(
            labels,
            vec![
                "Duration of diabetes, years",
                "s-BP (mmHg)",
                "All (n = 57)",
                "d-BT (mmHg)",
                "All (n = 57)"
            ]
        );
    }

    #[test]
    fn a_spanning_cell_covers_its_slots_and_starts_at_one() {
        let mut wide = cell(0, 1, "Week 12");
        wide.col_span = 2;
        let cells = vec![wide, cell(1, 1, "Drug"), cell(1, 2, "Placebo")];
        let g = Grid::new(&cells);
        assert!(matches!(g.at(0, 2), Some((c, false)) if c.text == "Week 12"));
        assert_eq!(g.origin_text(0, 1), Some("Week 12"));
        assert_eq!(g.origin_text(0, 2), None);
    }
}
