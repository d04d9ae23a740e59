//! Stage 3, header rows: how many rows head the table, and which columns
//! each header cell spans.

use super::super::layout::{Line, Word};
use super::{is_numeric_cell, is_value, TCell};

/// The first body row: a label and a value after it ("n=19" and "(n = 24)"
/// are header sizes, not values, and so is the end of a heading wrapped
/// onto the next line, "94" under "SD48W, N =" or "393)" under "(n =").
/// Rows above it are header rows; 0 when no row qualifies.
pub fn first_body(rows: &[Vec<&Line>]) -> usize {
    // A heading left open on the row above, over this line.
    let ends_heading = |r: usize, l: &Line| {
        r > 0
            && rows[r - 1].iter().any(|a| {
                let t = a.text();
                let t = t.trim_end();
                let opens = t.matches(['(', '[']).count() > t.matches([')', ']']).count();
                a.x0 < l.x1 && l.x0 < a.x1 && (t.ends_with('=') || opens)
            })
    };
    let values = |r: usize| {
        rows[r]
            .iter()
            .skip(1)
            .filter(|l| {
                let t = l.text();
                is_value(&t) && !ends_heading(r, l)
            })
            .count()
    };
    // A heading row with a number in a heading or two ("ICC | 95% CI | f"):
    // its numbers carry words, its other headings outnumber them, and the
    // row under it has values in more columns.
    let headings = |r: usize| {
        let n = values(r);
        let worded = rows[r].iter().skip(1).all(|l| {
            let t = l.text();
            !is_numeric_cell(&t)
                || t.split_whitespace()
                    .any(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2)
        });
        worded && 2 * n < rows[r].len() - 1 && r + 1 < rows.len() && values(r + 1) > n
    };
    let Some(r) = (0..rows.len()).find(|&r| rows[r].len() >= 2 && values(r) > 0 && !headings(r))
    else {
        return 0;
    };
    // A line alone in the label column just above is the body's too: the
    // first line of a label whose values are set level with its second
    // ("Completed" / "treatment 69.8 (20.9) ..."), or a group label.
    let lone_label = r > 0 && rows[r - 1].len() == 1 && {
        let (lone, row) = (rows[r - 1][0], &rows[r]);
        let first_value = row
            .iter()
            .find(|l| is_numeric_cell(&l.text()))
            .map_or(f32::MAX, |l| l.x0);
        lone.x1 < first_value && lone.x0 <= row[0].x0 + row[0].size
    };
    if lone_label {
        r - 1
    } else {
        r
    }
}

/// The columns a header line spans, given the first and last column it
/// reaches into: a header inside one column but centred over the gap between
/// it and a neighbour heads both ("Fruit (pieces)" over "Mean (SE)" and
/// "Mean change").
pub fn span(cols: &[(f32, f32)], l: &Line, c0: usize, c1: usize) -> (usize, usize) {
    if c1 != c0 {
        return (c0, c1);
    }
    let mid = (l.x0 + l.x1) / 2.0;
    let over_gap = |a: usize| {
        let gap = (cols[a].1, cols[a + 1].0);
        let half = (cols[a + 1].1 - cols[a].0) / 2.0;
        (mid - (gap.0 + gap.1) / 2.0).abs() < 0.15 * half
    };
    if c0 + 1 < cols.len() && over_gap(c0) && l.x1 > cols[c0].1 {
        (c0, c0 + 1)
    } else if c0 > 1 && over_gap(c0 - 1) && l.x0 < cols[c0].0 {
        (c0 - 1, c1)
    } else {
        (c0, c1)
    }
}

/// Whether a header line crossing columns is separate headings set on one
/// line ("CACP group  Total  p"): its pieces (words by column) stand further
/// apart than its word spacing. A heading spanning columns does not.
pub fn spaced(p: &[(usize, usize, Vec<&Word>)], size: f32) -> bool {
    let gaps_between: Vec<f32> = p
        .windows(2)
        .map(|w| w[1].2[0].x0 - w[0].2.last().unwrap().x1)
        .collect();
    let within: Vec<f32> = p
        .iter()
        .flat_map(|(_, _, ws)| ws.windows(2).map(|w| w[1].x0 - w[0].x1))
        .collect();
    let space = within
        .iter()
        .copied()
        .fold(0.0f32, f32::max)
        .max(0.25 * size);
    p.len() >= 2 && gaps_between.iter().all(|g| *g > 1.8 * space)
}

/// A group header heads the sub-columns under it: a column left empty in a
/// header row, with a sub-header below it, joins the header cell of that
/// row whose centre is nearest the sub-header's (the nearest on its left
/// when the row's headers are set flush with their columns), when only
/// empty columns lie between.
pub fn group_spans(out: &mut [TCell], first_body: usize) {
    let head_rows = out
        .iter()
        .filter(|c| (c.row as usize) < first_body)
        .map(|c| c.row + 1)
        .max()
        .unwrap_or(0);
    // From the lowest header row up, so a row's spans are settled before
    // the row above is spanned over them.
    for r in (0..head_rows.saturating_sub(1)).rev() {
        let covered = |out: &[TCell], k: u32| {
            out.iter()
                .any(|c| c.row == r && c.col <= k && k < c.col + c.col_span)
        };
        // Every column a sub-header covers (a spanning one covers several).
        let subs: Vec<(u32, f32)> = out
            .iter()
            .filter(|c| c.row == r + 1 && c.col > 0)
            .flat_map(|c| {
                (c.col..c.col + c.col_span).map(move |k| (k, (c.bbox.0 + c.bbox.2) / 2.0))
            })
            .collect();
        // Group headers set flush with their first column's cells (two or
        // more, each starting within a point of a cell below it in its
        // column) head the columns to their right, up to the next one:
        // the nearest centre would hand a narrow column to the next group.
        let heads: Vec<&TCell> = out.iter().filter(|c| c.row == r && c.col > 0).collect();
        let left_aligned = heads.len() >= 2
            && heads.iter().all(|h| {
                out.iter()
                    .any(|u| u.row > r && u.col == h.col && (u.bbox.0 - h.bbox.0).abs() < 1.0)
            });
        for (k, centre) in subs {
            if covered(out, k) {
                continue;
            }
            // A header stacked over its own column's next line ("Mean
            // change" over "(95% CI)") heads that column only; a group
            // header is wider than what is under it, or has nothing under it.
            let groups = |c: &TCell| {
                let w = c.bbox.2 - c.bbox.0;
                out.iter()
                    .find(|u| u.row == r + 1 && u.col == c.col)
                    .is_none_or(|u| w > 1.6 * (u.bbox.2 - u.bbox.0))
            };
            let candidates = out
                .iter()
                .enumerate()
                .filter(|(_, c)| c.row == r && c.col > 0 && groups(c));
            let best = if left_aligned {
                candidates
                    .filter(|(_, c)| c.col < k)
                    .max_by_key(|(_, c)| c.col)
                    .map(|(i, _)| i)
            } else {
                candidates
                    .min_by(|(_, a), (_, b)| {
                        let d = |c: &TCell| ((c.bbox.0 + c.bbox.2) / 2.0 - centre).abs();
                        d(a).total_cmp(&d(b))
                    })
                    .map(|(i, _)| i)
            };
            let Some(i) = best else { continue };
            let (a, b) = (out[i].col, out[i].col + out[i].col_span - 1);
            let (lo, hi) = if k < a { (k, a - 1) } else { (b + 1, k) };
            if (lo..=hi).all(|m| !covered(out, m)) {
                let (na, nb) = (a.min(k), b.max(k));
                out[i].col = na;
                out[i].col_span = nb - na + 1;
            }
        }
    }
}

/// A title set alone above the column headings ("a. Change talk" over
/// "Variable | Coefficient | 95% CI | ..."), in the first column, heads the
/// table's whole width: it spans every column, as it does in the
/// publisher's markup, instead of only the first. (Group rows inside the
/// body are left as their text reaches: publishers' markup spans them over
/// all columns, over the arms only, or not at all.)
pub fn title_spans(out: &mut [TCell]) {
    let ncols = out.iter().map(|c| c.col + c.col_span).max().unwrap_or(0);
    let first: Vec<usize> = (0..out.len()).filter(|&i| out[i].row == 0).collect();
    let below: Vec<&TCell> = out.iter().filter(|c| c.row == 1).collect();
    // Headings below: mostly words, not values, with their own first-column
    // heading.
    let words = below
        .iter()
        .filter(|c| c.col > 0 && !is_numeric_cell(&c.text))
        .count();
    let headings = below.iter().any(|c| c.col == 0) && words >= 2 && words * 2 > below.len() - 1;
    if let [i] = first[..] {
        if out[i].col == 0 && headings {
            out[i].col_span = ncols;
        }
    }
}

/// A stub heading set between header rows ("Characteristic" centred down
/// the height of two header rows, between "No. (%)" and the arms' row
/// under it) is a row of its own on the page: it joins the header row
/// above, whose first column is empty, and its row goes. Returns the
/// first body row after the row removed.
pub fn stub_heading_between(out: &mut [TCell], first_body: usize) -> usize {
    let row = |out: &[TCell], r: usize| -> Vec<usize> {
        (0..out.len())
            .filter(|&i| out[i].row as usize == r)
            .collect()
    };
    let mut first_body = first_body;
    let mut r = 1;
    while r + 1 < first_body {
        let (above, here, below) = (row(out, r - 1), row(out, r), row(out, r + 1));
        let no_stub = |cells: &[usize]| !cells.is_empty() && cells.iter().all(|&i| out[i].col > 0);
        let lone = here.len() == 1 && out[here[0]].col == 0 && out[here[0]].col_span == 1;
        if lone && no_stub(&above) && no_stub(&below) && below.len() >= 2 {
            out[here[0]].row -= 1;
            for c in out.iter_mut() {
                if c.row as usize > r {
                    c.row -= 1;
                }
            }
            first_body -= 1;
        } else {
            r += 1;
        }
    }
    first_body
}

/// Columns whose headings and values are aligned apart, joined: a heading
/// set flush left over values set flush right ("Control (n = 64)" over
/// "62 (11)" in a wide column) share no x, so the grid finds two columns,
/// one only headings fill and, beside it, one only values fill. Two such
/// neighbours, with no header cell over the values' column and no body
/// cell under the headings', are one column.
pub fn aligned_apart(out: &mut [TCell], first_body: usize) {
    if first_body == 0 {
        return;
    }
    loop {
        let ncols = out.iter().map(|c| c.col + c.col_span).max().unwrap_or(0);
        let covers = |k: u32, header: bool| {
            out.iter().any(|c| {
                ((c.row as usize) < first_body) == header && c.col <= k && k < c.col + c.col_span
            })
        };
        let only = |k: u32, header: bool| covers(k, header) && !covers(k, !header);
        let Some(k) = (0..ncols.saturating_sub(1)).find(|&k| {
            k > 0 && (only(k, true) && only(k + 1, false) || only(k, false) && only(k + 1, true))
        }) else {
            return;
        };
        // Column k + 1 folds into k; the columns after it move left.
        let at = |c: u32| if c > k { c - 1 } else { c };
        for c in out.iter_mut() {
            let last = at(c.col + c.col_span - 1);
            c.col = at(c.col);
            c.col_span = last - c.col + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::super::grid::Grid;
    use super::*;

    #[test]
    fn a_stub_heading_centred_between_header_rows_joins_the_top_one() {
        let lines = laid_out(&[
            &[(200.0, "No. (%)")],
            &[(50.0, "Characteristic")],
            &[(200.0, "GV (n = 53)"), (300.0, "GP (n = 53)")],
            &[(50.0, "Male"), (200.0, "31 (58)"), (300.0, "27 (51)")],
            &[(50.0, "Female"), (200.0, "22 (42)"), (300.0, "26 (49)")],
        ]);
        let cells = super::super::cells(&lines);
        let at = |t: &str| cells.iter().find(|c| c.text == t).map(|c| (c.row, c.col));
        assert_eq!(at("Characteristic"), Some((0, 0)));
        assert_eq!(at("GV (n = 53)"), Some((1, 1)));
        assert_eq!(at("Male"), Some((2, 0)));
    }

    #[test]
    fn headings_set_left_over_values_set_right_are_one_column() {
        let lines = laid_out(&[
            &[
                (50.0, "Variable"),
                (200.0, "Control (n = 64)"),
                (350.0, "Drug (n = 59)"),
                (500.0, "P"),
            ],
            &[
                (50.0, "Age, years"),
                (290.0, "62 (11)"),
                (430.0, "63 (9)"),
                (500.0, "0.37"),
            ],
            &[
                (50.0, "Male, %"),
                (305.0, "41"),
                (445.0, "58"),
                (500.0, "0.06"),
            ],
            &[
                (50.0, "Diabetes, %"),
                (305.0, "52"),
                (445.0, "59"),
                (500.0, "0.39"),
            ],
        ]);
        let cells = super::super::cells(&lines);
        let at = |t: &str| cells.iter().find(|c| c.text == t).map(|c| (c.row, c.col));
        assert_eq!(at("Control (n = 64)"), Some((0, 1)));
        assert_eq!(at("62 (11)"), Some((1, 1)));
        assert_eq!(at("Drug (n = 59)"), Some((0, 2)));
        assert_eq!(at("59"), Some((3, 2)));
        assert_eq!(at("0.39"), Some((3, 3)));
    }

    #[test]
    fn sizes_in_the_header_are_not_the_first_body_row() {
        let lines = laid_out(&[
            &[(200.0, "Drug"), (300.0, "Placebo")],
            &[(200.0, "(n = 24)"), (300.0, "(n = 25)")],
            &[(50.0, "Age"), (200.0, "34.1"), (300.0, "35.2")],
            &[(50.0, "Women"), (200.0, "12"), (300.0, "14")],
        ]);
        let g = Grid::new(&lines);
        assert_eq!(first_body(&g.rows), 2);
    }

    #[test]
    fn a_heading_with_a_number_in_it_is_not_the_first_body_row() {
        let lines = laid_out(&[
            &[(300.0, "All participants")],
            &[
                (50.0, "Summary variable"),
                (200.0, "ICC"),
                (300.0, "95% CI"),
                (400.0, "f"),
                (500.0, "M (SD)"),
            ],
            &[
                (50.0, "CT"),
                (200.0, "0.93"),
                (300.0, "0.90 0.95"),
                (400.0, "19021"),
                (500.0, "31.23 (20.86)"),
            ],
            &[
                (50.0, "ST"),
                (200.0, "0.90"),
                (300.0, "0.86 0.93"),
                (400.0, "7748"),
                (500.0, "12.72 (12.29)"),
            ],
        ]);
        let g = Grid::new(&lines);
        assert_eq!(first_body(&g.rows), 2);
    }

    #[test]
    fn visits_named_with_a_digit_are_headings() {
        let lines = laid_out(&[
            &[(200.0, "C1"), (300.0, "C2")],
            &[(200.0, "Drug"), (300.0, "Placebo")],
            &[(50.0, "Age"), (200.0, "34.1"), (300.0, "35.2")],
            &[(50.0, "Women"), (200.0, "12"), (300.0, "14")],
        ]);
        let g = Grid::new(&lines);
        assert_eq!(first_body(&g.rows), 2);
    }

    #[test]
    fn the_end_of_a_wrapped_heading_is_not_the_first_body_row() {
        let lines = laid_out(&[
            &[
                (50.0, "Characteristic"),
                (200.0, "SD48W, N ="),
                (300.0, "SD24W (n ="),
            ],
            &[(200.0, "94"), (300.0, "93)")],
            &[(50.0, "Age"), (200.0, "34.1"), (300.0, "35.2")],
            &[(50.0, "Women"), (200.0, "12"), (300.0, "14")],
        ]);
        let g = Grid::new(&lines);
        assert_eq!(first_body(&g.rows), 2);
    }

    #[test]
    fn a_label_line_alone_above_the_first_values_is_the_body_s() {
        // Values set level with the second line of their label.
        let lines = laid_out(&[
            &[(200.0, "Control"), (300.0, "Intervention")],
            &[(50.0, "Completed")],
            &[(50.0, "treatment"), (200.0, "69.8"), (300.0, "68.3")],
            &[(50.0, "Timely"), (200.0, "32.6"), (300.0, "33.1")],
        ]);
        let g = Grid::new(&lines);
        assert_eq!(first_body(&g.rows), 1);
    }

    #[test]
    fn a_group_header_spans_the_columns_under_it() {
        let lines = laid_out(&[
            &[(250.0, "Week 12")],
            &[(200.0, "Drug"), (300.0, "Placebo")],
            &[(50.0, "Age"), (200.0, "34.1"), (300.0, "35.2")],
            &[(50.0, "Women"), (200.0, "12"), (300.0, "14")],
            &[(50.0, "Men"), (200.0, "10"), (300.0, "9")],
        ]);
        let cells = super::super::cells(&lines);
        let week = cells.iter().find(|c| c.text == "Week 12").unwrap();
        assert_eq!((week.row, week.col, week.col_span), (0, 1, 2));
    }

    #[test]
    fn a_lone_left_aligned_group_header_spans_the_columns_under_it() {
        let lines = laid_out(&[
            &[(50.0, "Demographics"), (200.0, "Survey population")],
            &[(200.0, "n = 210"), (320.0, "%")],
            &[(50.0, "Age (year)")],
            &[(70.0, "<35"), (200.0, "74"), (315.0, "35.2")],
            &[(70.0, "35-44"), (200.0, "120"), (315.0, "57.1")],
        ]);
        let cells = super::super::cells(&lines);
        let group = cells
            .iter()
            .find(|c| c.text == "Survey population")
            .unwrap();
        assert_eq!((group.row, group.col, group.col_span), (0, 1, 2));
    }

    #[test]
    fn group_headers_flush_with_their_columns_head_the_columns_to_their_right() {
        // Two header rows of groups set flush left over pairs of columns of
        // unequal width: "(n=1014)" is nearer the centre of the first pair's
        // second column than "(n=803)" is, but heads the second pair.
        let lines = laid_out(&[
            &[(150.0, "Fruit (pieces)"), (300.0, "Vegetables (grams)")],
            &[(150.0, "(n=803)"), (300.0, "(n=1014)")],
            &[
                (150.0, "Mean"),
                (260.0, "CI"),
                (300.0, "Mean"),
                (420.0, "CI"),
            ],
            &[
                (50.0, "Control"),
                (150.0, "1.04"),
                (260.0, "0.52"),
                (300.0, "130.53"),
                (420.0, "16.08"),
            ],
            &[
                (50.0, "Basic"),
                (150.0, "1.04"),
                (260.0, "0.64"),
                (300.0, "128.99"),
                (420.0, "17.11"),
            ],
        ]);
        let cells = super::super::cells(&lines);
        let span = |t: &str| {
            let c = cells.iter().find(|c| c.text == t).unwrap();
            (c.col, c.col_span)
        };
        assert_eq!(span("(n=803)"), (1, 2));
        assert_eq!(span("(n=1014)"), (3, 2));
        assert_eq!(span("Fruit (pieces)"), (1, 2));
    }

    #[test]
    fn a_title_row_above_the_headings_spans_the_table() {
        let lines = laid_out(&[
            &[(50.0, "a. Change talk")],
            &[
                (50.0, "Variable"),
                (200.0, "Coefficient"),
                (300.0, "95% CI"),
                (400.0, "p"),
            ],
            &[(50.0, "Effect of group assignment on reflections")],
            &[
                (50.0, "Constant"),
                (200.0, "0.265"),
                (300.0, "0.030"),
                (400.0, ".000"),
            ],
            &[
                (50.0, "Group"),
                (200.0, "0.013"),
                (300.0, "0.042"),
                (400.0, ".764"),
            ],
            &[(50.0, "Women")],
            &[(50.0, "Yes"), (200.0, "12"), (300.0, "14"), (400.0, ".52")],
        ]);
        let cells = super::super::cells(&lines);
        let span = |t: &str| {
            let c = cells.iter().find(|c| c.text == t).unwrap();
            (c.row, c.col, c.col_span)
        };
        assert_eq!(span("a. Change talk"), (0, 0, 4));
        // Group rows keep what their text reaches.
        assert_eq!(span("Effect of group assignment on reflections"), (2, 0, 2));
        assert_eq!(span("Women"), (5, 0, 1));
    }

    #[test]
    fn separate_headings_on_one_line_are_not_one_spanning_heading() {
        let l = line(200.0, 100.0, "Drug");
        let m = line(300.0, 100.0, "Placebo");
        let p = vec![
            (1, 1, l.words.iter().collect()),
            (2, 2, m.words.iter().collect()),
        ];
        assert!(spaced(&p, 10.0));
        let h = line(200.0, 100.0, "Mean change");
        let p = vec![(1, 1, vec![&h.words[0]]), (2, 2, vec![&h.words[1]])];
        assert!(!spaced(&p, 10.0));
    }
}
