//! Stage 4, cell merging: lines of one cell set on several rows joined back
//! into that cell.

use super::TCell;

/// Lines of one cell wrapped onto rows of their own, joined back: a row
/// set closer below the row above than the table's row pitch (the lower
/// quartile of the distances between consecutive rows that are both filled
/// in two or more columns), each of whose cells sits in a column where the
/// row above has a cell of the same columns, is those cells' next lines.
/// Returns the cells and the first body row after the rows removed.
///
/// A table set without space between rows (wrapped lines as far apart as
/// rows) keeps its rows: geometry cannot tell them apart there.
pub fn wrapped(out: Vec<TCell>, first_body: usize) -> (Vec<TCell>, usize) {
    let nrows = out.iter().map(|c| c.row + 1).max().unwrap_or(0) as usize;
    let mut rows: Vec<Vec<TCell>> = vec![Vec::new(); nrows];
    for c in out {
        let r = c.row as usize;
        rows[r].push(c);
    }
    // A row's top is its full-size cells' (a raised mark sits higher).
    let top = |r: &[TCell]| {
        let h = r.iter().map(|c| c.bbox.3 - c.bbox.1).fold(0.0f32, f32::max);
        r.iter()
            .filter(|c| c.bbox.3 - c.bbox.1 > 0.8 * h)
            .map(|c| c.bbox.1)
            .fold(f32::MAX, f32::min)
    };
    let height = |r: &[TCell]| r.iter().map(|c| c.bbox.3 - c.bbox.1).fold(0.0f32, f32::max);
    // Distances between consecutive rows: the closest are the font's
    // leading (wrapped lines, or every row when rows have no space between
    // them); the row pitch is the smallest distance clearly larger than
    // that which is common (a fifth of the distances at least). With no
    // such distance, wrapped lines cannot be told from rows.
    let mut dists: Vec<f32> = rows
        .windows(2)
        .filter(|w| !w[0].is_empty() && !w[1].is_empty())
        .map(|w| top(&w[1]) - top(&w[0]))
        .filter(|d| *d > 0.0)
        .collect();
    if dists.len() < 2 {
        return (renumber(rows), first_body);
    }
    dists.sort_by(f32::total_cmp);
    let lead = dists[0];
    let step = (0.08 * lead).max(1.0);
    let Some(pitch) = dists
        .iter()
        .copied()
        .filter(|d| *d > lead + step)
        .find(|d| dists.iter().filter(|e| (*e - d).abs() < 0.5 * step).count() * 5 >= dists.len())
    else {
        return (renumber(rows), first_body);
    };
    let mut first_body = first_body;
    let mut kept: Vec<Vec<TCell>> = Vec::new();
    // The top of the last line joined into each kept row.
    let mut last_top: Vec<f32> = Vec::new();
    for (r, row) in rows.into_iter().enumerate() {
        if row.is_empty() {
            if r < first_body {
                first_body -= 1;
            }
            continue;
        }
        let t = top(&row);
        let slack = (0.08 * height(&row) / 0.97).max(1.0);
        let joins = kept.last().zip(last_top.last()).is_some_and(|(above, lt)| {
            t - lt > 0.0
                && t - lt < pitch - slack
                && row.iter().all(|c| {
                    above
                        .iter()
                        .any(|a| a.col == c.col && a.col_span == c.col_span)
                })
                && (r < first_body
                    || row.iter().all(|c| {
                        above
                            .iter()
                            .find(|a| a.col == c.col && a.col_span == c.col_span)
                            .is_some_and(|a| continues(&a.text, &c.text))
                    }))
        });
        if joins {
            let above = kept.last_mut().unwrap();
            for c in row {
                let a = above
                    .iter_mut()
                    .find(|a| a.col == c.col && a.col_span == c.col_span)
                    .unwrap();
                if a.text.ends_with('-') && c.text.starts_with(char::is_lowercase) {
                    a.text.pop();
                } else {
                    a.text.push(' ');
                }
                a.text.push_str(&c.text);
                a.bbox.0 = a.bbox.0.min(c.bbox.0);
                a.bbox.2 = a.bbox.2.max(c.bbox.2);
                a.bbox.3 = a.bbox.3.max(c.bbox.3);
            }
            *last_top.last_mut().unwrap() = t;
            if r < first_body {
                first_body -= 1;
            }
            continue;
        }
        kept.push(row);
        last_top.push(t);
    }
    (renumber(kept), first_body)
}

/// Whether a body cell's next line reads as the rest of it rather than a
/// cell of a new row ("New Zealand European" then "Māori", "81.1" then
/// "10.8"): the text above is left open (a bracket not closed, a comma, a
/// dash, a slash, a plus), or the line starts lower-case or with a bracket
/// or a plus-minus ("disease activity (SD)", "(0.12, 0.36)", "± 4.2").
fn continues(above: &str, next: &str) -> bool {
    let open = |o: char, c: char| above.matches(o).count() > above.matches(c).count();
    let above_t = above.trim_end();
    open('(', ')')
        || open('[', ']')
        || above_t.ends_with([',', '-', '\u{2013}', '/', '(', '&', '+', '\u{b1}'])
        || next.starts_with(|c: char| c.is_lowercase() || "([\u{b1},;".contains(c))
}

/// Cells of rows in order, numbered from 0.
fn renumber(rows: Vec<Vec<TCell>>) -> Vec<TCell> {
    rows.into_iter()
        .filter(|r| !r.is_empty())
        .enumerate()
        .flat_map(|(i, r)| r.into_iter().map(move |c| TCell { row: i as u32, ..c }))
        .collect()
}

/// A body row with nothing in the first column and only bracketed values
/// (the second line of "0.24 / (0.12, 0.36)") continues the row above:
/// each piece joins the cell above it that it overlaps most. Rows are
/// renumbered after the rows removed.
pub fn continuations(out: Vec<TCell>, first_body: usize) -> Vec<TCell> {
    let mut merged: Vec<TCell> = Vec::new();
    let nrows = out.iter().map(|c| c.row + 1).max().unwrap_or(0);
    let mut shift = 0u32;
    let mut prev_row: Option<u32> = None;
    for r in 0..nrows {
        let row: Vec<&TCell> = out.iter().filter(|c| c.row == r).collect();
        if row.is_empty() {
            shift += 1;
            continue;
        }
        let continues = r as usize > first_body
            && prev_row.is_some()
            && row.iter().all(|c| {
                // A bracketed remainder: "(0.12, 0.36)", "(–1.12,", "11.86)".
                let t = c.text.trim();
                c.col > 0
                    && t.chars().any(|ch| ch.is_ascii_digit())
                    && !t.contains('\u{b1}')
                    && (t.starts_with('(')
                        || t.starts_with('[')
                        || t.ends_with(')')
                        || t.ends_with(']'))
            })
            && merged.iter().any(|c| Some(c.row) == prev_row && c.col == 0);
        if continues {
            let pr = prev_row.unwrap();
            for c in row {
                let best = merged
                    .iter_mut()
                    .filter(|m| m.row == pr && m.col > 0)
                    .max_by(|a, b| {
                        let ov = |m: &TCell| m.bbox.2.min(c.bbox.2) - m.bbox.0.max(c.bbox.0);
                        ov(a).total_cmp(&ov(b))
                    });
                if let Some(m) = best {
                    m.text = format!("{} {}", m.text, c.text);
                    m.bbox.2 = m.bbox.2.max(c.bbox.2);
                    m.bbox.3 = m.bbox.3.max(c.bbox.3);
                }
            }
            shift += 1;
            continue;
        }
        for c in row {
            merged.push(TCell {
                row: r - shift,
                ..c.clone()
            });
        }
        prev_row = Some(r - shift);
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;

    /// Rows at the given baselines.
    fn at(rows: &[(f32, &[(f32, &str)])]) -> Vec<super::super::super::layout::Line> {
        rows.iter()
            .flat_map(|(y, r)| r.iter().map(move |(x, t)| line(*x, *y, t)))
            .collect()
    }

    #[test]
    fn wrapped_header_and_label_lines_join_their_cells() {
        // Rows 13 pt apart, wrapped lines 11 pt.
        let lines = at(&[
            (
                100.0,
                &[
                    (50.0, "Characteristic"),
                    (200.0, "Placebo"),
                    (300.0, "Naproxen"),
                ],
            ),
            (111.0, &[(300.0, "1000 mg")]),
            (124.0, &[(200.0, "(N = 357)"), (300.0, "(N = 181)")]),
            (137.0, &[(50.0, "Women"), (200.0, "82"), (300.0, "81")]),
            (
                150.0,
                &[
                    (50.0, "Mean global assessment of"),
                    (200.0, "65 (19)"),
                    (300.0, "66 (20)"),
                ],
            ),
            (161.0, &[(50.0, "disease activity (SD)")]),
            (
                174.0,
                &[
                    (50.0, "Tender joints"),
                    (200.0, "29 (15)"),
                    (300.0, "28 (15)"),
                ],
            ),
            (
                187.0,
                &[
                    (50.0, "Swollen joints"),
                    (200.0, "19 (12)"),
                    (300.0, "18 (12)"),
                ],
            ),
        ]);
        let cells = super::super::cells(&lines);
        let texts: Vec<(u32, u32, &str)> = cells
            .iter()
            .map(|c| (c.row, c.col, c.text.as_str()))
            .collect();
        assert!(texts.contains(&(0, 2, "Naproxen 1000 mg")), "{texts:?}");
        assert!(texts.contains(&(1, 1, "(N = 357)")), "{texts:?}");
        assert!(
            texts.contains(&(3, 0, "Mean global assessment of disease activity (SD)")),
            "{texts:?}"
        );
        assert!(texts.contains(&(4, 0, "Tender joints")), "{texts:?}");
    }

    #[test]
    fn a_heading_set_close_under_a_row_is_a_row_of_its_own() {
        let lines = at(&[
            (100.0, &[(200.0, "Drug"), (300.0, "Placebo")]),
            (
                113.0,
                &[
                    (50.0, "Recurrence of cancer"),
                    (200.0, "47 (14.4)"),
                    (300.0, "44 (13.5)"),
                ],
            ),
            (124.0, &[(50.0, "Severity of surgery")]),
            (
                137.0,
                &[(70.0, "Moderate"), (200.0, "9 (2.8)"), (300.0, "9 (2.8)")],
            ),
            (
                150.0,
                &[
                    (70.0, "Major"),
                    (200.0, "183 (56.1)"),
                    (300.0, "186 (57.1)"),
                ],
            ),
        ]);
        let cells = super::super::cells(&lines);
        assert!(cells
            .iter()
            .any(|c| c.text == "Severity of surgery" && c.row == 2));
    }

    #[test]
    fn rows_as_close_as_every_row_stay_rows() {
        let lines = at(&[
            (100.0, &[(200.0, "Drug"), (300.0, "Placebo")]),
            (111.0, &[(50.0, "Sex, n (%)")]),
            (122.0, &[(70.0, "Women"), (200.0, "12"), (300.0, "14")]),
            (133.0, &[(70.0, "Men"), (200.0, "10"), (300.0, "9")]),
            (144.0, &[(50.0, "Age, years"), (200.0, "34"), (300.0, "35")]),
        ]);
        let cells = super::super::cells(&lines);
        assert_eq!(cells.iter().map(|c| c.row).max(), Some(4));
    }

    #[test]
    fn a_bracketed_second_line_joins_the_cell_above() {
        let lines = laid_out(&[
            &[(200.0, "Drug"), (300.0, "Placebo")],
            &[(50.0, "Change"), (200.0, "0.24"), (300.0, "0.31")],
            &[(200.0, "(0.12, 0.36)"), (300.0, "(0.20, 0.42)")],
            &[(50.0, "Age"), (200.0, "34.1"), (300.0, "35.2")],
        ]);
        let cells = super::super::cells(&lines);
        let texts: Vec<(u32, u32, &str)> = cells
            .iter()
            .map(|c| (c.row, c.col, c.text.as_str()))
            .collect();
        assert!(texts.contains(&(1, 1, "0.24 (0.12, 0.36)")));
        assert!(texts.contains(&(1, 2, "0.31 (0.20, 0.42)")));
        assert!(texts.contains(&(2, 0, "Age")));
    }
}
