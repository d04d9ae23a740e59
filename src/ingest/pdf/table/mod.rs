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

impl TCell {
    /// Takes in another piece of the same cell: bold only if both are, the
    /// box round both. The text is the caller's to join.
    fn take_in(&mut self, c: &TCell) {
        self.bold &= c.bold;
        self.bbox = (
            self.bbox.0.min(c.bbox.0),
            self.bbox.1.min(c.bbox.1),
            self.bbox.2.max(c.bbox.2),
            self.bbox.3.max(c.bbox.3),
        );
    }
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

/// A value in a row of values: mostly digits, with a word that is a number
/// (after a sign, bracket or comparison: "C1" and "T2" over columns are
/// visits' names), and no group's size set in a heading ("n=19", "(n =
/// 24)", "[N = 7]").
fn is_value(t: &str) -> bool {
    let number = t.split_whitespace().any(|w| {
        w.trim_start_matches(|c: char| "([<>≤≥−–-+±.=".contains(c))
            .starts_with(|c: char| c.is_ascii_digit())
    });
    let size = {
        let t = t.trim_start_matches(['(', '[']).trim_start();
        (t.starts_with('n') || t.starts_with('N')) && t[1..].trim_start().starts_with('=')
    };
    is_numeric_cell(t) && number && !size
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
        let mut cells = cells(&m);
        let mut m = m;
        let mut r = regions[k];
        // The table's notes taken in as its last rows go back to the text
        // flow, to be read after it as its notes.
        if let Some(top) = trailing_notes(&cells) {
            let (kept, notes): (Vec<Line>, Vec<Line>) =
                m.into_iter().partition(|l| l.top() < top - 0.5);
            m = kept;
            rest.extend(notes);
            cells = self::cells(&m);
            r.3 = m.iter().map(Line::bottom).fold(r.1, f32::max);
        }
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

/// Where a table's notes start when the region took them in as its last
/// rows: at the first row reading as a note (a mark or "Note" first, a list
/// of abbreviations, a DOI) in the run of rows at the bottom that are each
/// one cell (notes, and the text after them that the region also took). The
/// table keeps at least two rows.
fn trailing_notes(cells: &[TCell]) -> Option<f32> {
    let last = cells.iter().map(|c| c.row).max()?;
    let mut first_note = None;
    for row in (0..=last).rev() {
        let here: Vec<&TCell> = cells.iter().filter(|c| c.row == row).collect();
        match here.as_slice() {
            [c] => {
                if reads_as_note(&c.text) {
                    first_note = Some(row);
                }
            }
            _ => break,
        }
    }
    let first = first_note.filter(|&r| r >= 2)?;
    Some(
        cells
            .iter()
            .filter(|c| c.row >= first)
            .map(|c| c.bbox.1)
            .fold(f32::MAX, f32::min),
    )
}

/// Text that reads as a table's note: a note mark and a capital
/// ("a Abbreviation", "* P < 0.05", "#: χ2-Test"), a note's opening words,
/// a DOI, or a list of abbreviations ("BMI = body mass index, SD = standard
/// deviation"; "EP, externship program; SD, standard deviation").
pub fn reads_as_note(t: &str) -> bool {
    let t = t.trim();
    let l = t.to_lowercase();
    let opener = [
        "abbreviation",
        "note:",
        "notes:",
        "note.",
        "notes.",
        "data are",
        "data is",
        "data presented",
        "data expressed",
        "data shown",
        "values are",
        "values presented",
        "values expressed",
        "all values",
        "all data",
        "results are",
        "numbers are",
        "doi:",
        "source:",
    ]
    .iter()
    .any(|p| l.starts_with(p));
    let mark = t.chars().next().is_some_and(|c| "*†‡§¶#".contains(c))
        && t.chars().any(char::is_alphabetic);
    opener || mark || detect::starts_note(t) || definitions(t) >= 2
}

/// How many abbreviations a text defines: pieces between ';' or ',' of the
/// form "ABBR = words", "ABBR: words" or (between ';') "ABBR, words", with
/// a capital in the short name.
fn definitions(t: &str) -> usize {
    let short = |name: &str| {
        let name = name.trim();
        !name.is_empty()
            && name.chars().count() <= 16
            && name.split_whitespace().count() <= 3
            && name.chars().filter(|c| c.is_uppercase()).count() >= 2
    };
    let mut n = 0;
    for semi in t.split(';') {
        let mut counted = false;
        for piece in semi.split(',') {
            if let Some((name, _)) = piece.split_once(" = ").or_else(|| piece.split_once(": ")) {
                if short(name) {
                    n += 1;
                    counted = true;
                }
            }
        }
        if !counted {
            if let Some((name, rest)) = semi.split_once(", ") {
                if short(name) && rest.chars().any(char::is_lowercase) {
                    n += 1;
                }
            }
        }
    }
    n
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
    let out = merge::continuations(wrapped, first_body);
    let mut out = merge::prose_lines(out, first_body);
    let first_body = header::stub_heading_between(&mut out, first_body);
    header::group_spans(&mut out, first_body);
    header::title_spans(&mut out);
    grid::centred_stub(&mut out);
    grid::same_cell_joined(out)
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
    fn notes_taken_in_as_the_last_rows_go_back_to_the_text() {
        let mut lines = simple();
        lines.push(line(
            50.0,
            170.0,
            "BMI = body mass index, SD = standard deviation, IQR = interquartile range",
        ));
        lines.push(line(50.0, 184.0, "* P < 0.05"));
        let (tables, rest) = tables(lines, &[], 600.0);
        assert_eq!(tables.len(), 1);
        let cells = tables[0].table.as_ref().unwrap();
        assert_eq!(cells.iter().map(|c| c.row).max(), Some(4));
        let texts: Vec<String> = rest.iter().map(Line::text).collect();
        assert!(
            texts.iter().any(|t| t.starts_with("BMI = body")),
            "{texts:?}"
        );
        assert!(tables[0].y1 < 170.0);
    }

    #[test]
    fn notes_read_as_notes_and_labels_do_not() {
        for t in [
            "ADL = Activities of daily living, IADL = Instrumental activities",
            "EP group, the externship program; CACP Group, the corporate program",
            "#: χ2-Test (Fisher's Exact test)",
            "Abbreviations: BMI, body mass index.",
            "doi:10.1371/journal.pone.0137824.t003",
            "a Data are mean (SD)",
        ] {
            assert!(reads_as_note(t), "{t}");
        }
        for t in [
            "Age, years",
            "Depression (GDS) (n = 586)",
            "Risk of falls (Tinetti Score)",
            "BMI, kg/m2",
            "Secondary outcomes",
        ] {
            assert!(!reads_as_note(t), "{t}");
        }
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
