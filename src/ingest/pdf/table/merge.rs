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
    let rows = by_row(out);
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
        return by_content(rows, first_body);
    };
    let mut first_body = first_body;
    let mut kept: Vec<Vec<TCell>> = Vec::new();
    // The top of the last line joined into each kept row.
    let mut last_top: Vec<f32> = Vec::new();
    // Where the next filled row's label starts (None: no label, or no row).
    let next_label: Vec<Option<f32>> = (0..rows.len())
        .map(|r| {
            rows[r + 1..]
                .iter()
                .find(|n| !n.is_empty())
                .and_then(|n| n.iter().find(|c| c.col == 0).map(|c| c.bbox.0))
        })
        .collect();
    let last_filled = rows.iter().rposition(|n| !n.is_empty()).unwrap_or(0);
    // How far the labels reach: a label wraps only where its next word
    // would not have fitted.
    let label_right = rows
        .iter()
        .flatten()
        .filter(|c| c.col == 0 && c.col_span == 1)
        .map(|c| c.bbox.2)
        .fold(f32::MIN, f32::max);
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
                && (row.iter().all(|c| same_columns(above, c).is_some())
                    || r < first_body && headings_go_on(above, &row))
                && (r < first_body
                    || row.iter().all(|c| {
                        same_columns(above, c).is_some_and(|a| continues(&a.text, &c.text))
                    })
                    || value_left_open(above, &row)
                    || label_line_under_values(above, &row, label_right)
                        && (r == last_filled
                            || next_label[r].is_some_and(|x| x <= row[0].bbox.0 + 2.0)))
        });
        if joins {
            join_below(kept.last_mut().expect("a row to join"), row);
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

/// Wrapped lines in a table set without space between rows, where only
/// the text can tell a cell's next line from a new row: a row each of
/// whose cells lies under a cell of the same columns in the row above and
/// reads as its rest ([`continues`]), with at least one cell above left
/// open (a bracket not closed, a trailing comma, dash or joining word:
/// "Patient global assessment of" / "disease activity (100"), or every
/// cell of the row a bracketed remainder ("(%)" / "(97%)"), or the row a
/// label's lone lower-case line under a row of values ("Number with one
/// or more trained" / "medical staff (%)"), is those cells' next lines; a
/// header line joins the header row above only when it has two cells or
/// more and every cell above is left open ("Drug vs" / "placebo"), since
/// header rows of their own ("(N = 357)", "n (%)") are common. Rows that
/// are merely close ("Male" / "female") stay rows. Returns the cells and
/// the first body row after the rows removed.
fn by_content(rows: Vec<Vec<TCell>>, first_body: usize) -> (Vec<TCell>, usize) {
    let mut first = first_body;
    let mut kept: Vec<Vec<TCell>> = Vec::new();
    for (r, row) in rows.into_iter().enumerate() {
        if row.is_empty() {
            if r < first_body {
                first -= 1;
            }
            continue;
        }
        let joins = kept.last().is_some_and(|above| {
            // A header line joins a header row, a body line a body row;
            // a kept row's cells keep the grid row it started on (empty
            // rows between are skipped).
            let above_r = above[0].row as usize;
            let pairs: Option<Vec<(&TCell, &TCell)>> = row
                .iter()
                .map(|c| same_columns(above, c).map(|a| (a, c)))
                .collect();
            let Some(pairs) = pairs else { return false };
            if r < first_body {
                // Header lines: two or more cells, each left open.
                return above_r < first_body
                    && pairs.len() >= 2
                    && pairs.iter().all(|(a, _)| left_open(&a.text));
            }
            // A label's lone next line, lower-case, under a row of values
            // ("Number with one or more trained" / "medical staff (%)"):
            // a row's own label starts with a capital or a digit, or is an
            // abbreviation with capitals in its first word ("d-BT (mmHg)").
            let lone_label = row.len() == 1
                && row[0].col == 0
                && above.len() >= 2
                && row[0].text.split(' ').next().is_some_and(|w| {
                    let w = w.trim_end_matches([',', ';', ':']);
                    !w.is_empty() && w.chars().all(char::is_lowercase)
                });
            above_r >= first_body
                && (value_left_open(above, &row)
                    || pairs.iter().all(|(a, c)| continues(&a.text, &c.text))
                        && (lone_label
                            || pairs.iter().any(|(a, _)| left_open(&a.text))
                            || pairs
                                .iter()
                                .all(|(_, c)| c.text.trim_start().starts_with(['(', '[']))))
        });
        if joins {
            join_below(kept.last_mut().expect("a row to join"), row);
            if r < first_body {
                first -= 1;
            }
            continue;
        }
        kept.push(row);
    }
    (renumber(kept), first)
}

/// A label's next line alone in the first column, under a row of a label
/// and its values, closer than rows are ("Social-Emotional Standardised" /
/// "Score"), is the label's rest whatever its first letter when its first
/// word would not have fitted after the line above (labels reach no further
/// than `label_right`), and (checked by the caller) the row after it is not
/// indented under it: a heading set close under a short label ("Plus vs
/// basic" / "Saturated fat intake") or over indented rows ("Severity of
/// surgery" over "Moderate") is a row of its own.
fn label_line_under_values(above: &[TCell], row: &[TCell], label_right: f32) -> bool {
    let Some(label) = above.iter().find(|a| aligned(a, &row[0])) else {
        return false;
    };
    let line = &row[0];
    let text = line.text.trim();
    let chars = text.chars().count().max(1) as f32;
    let first_word = text.split(' ').next().unwrap_or("").chars().count() as f32;
    let per_char = (line.bbox.2 - line.bbox.0) / chars;
    row.len() == 1
        && line.col == 0
        && above.len() >= 2
        && label.bbox.2 + per_char * (first_word + 1.0) > label_right
}

/// Whether a value above a row's cell is left open ("1.4 ±", "12
/// (3.4–", "0.049, 0.042,", "5 to"), so the row below is its rest, and with
/// it the label beside it, whatever its first letter ("Total" /
/// "Cholesterol (mg/dl)"): a number is not left open by chance. A trailing
/// "+" or "*" after a number is a mark ("19.54 ± 7.50+"), not an operator.
fn value_left_open(above: &[TCell], row: &[TCell]) -> bool {
    row.iter().any(|c| {
        same_columns(above, c).is_some_and(|a| {
            let t = a.text.trim_end();
            let open = |o: char, c: char| t.matches(o).count() > t.matches(c).count();
            a.col > 0
                && t.contains(|ch: char| ch.is_ascii_digit())
                && (open('(', ')')
                    || open('[', ']')
                    || t.ends_with(['\u{b1}', '\u{2013}', ',', '('])
                    || t.ends_with(" -")
                    || t.ends_with(" to"))
        })
    })
}

/// Whether `a` spans the columns `c` is in.
fn covers(a: &TCell, c: &TCell) -> bool {
    a.col <= c.col && c.col + c.col_span <= a.col + a.col_span
}

/// Whether every piece of a header row goes on a heading above it, each a
/// heading of its own: in the same columns, or inside a heading's columns
/// and either going on from a heading left open ("16)" under "Pioglitazone
/// (n =" set over two columns) or set within its extent, flush with it or
/// centred under it ("Groupa" under "Intervention", which reaches into the
/// next column): the grid gave the two lines different spans.
fn headings_go_on(above: &[TCell], row: &[TCell]) -> bool {
    let mut taken = vec![false; above.len()];
    row.iter().all(|c| {
        let k = above.iter().position(|a| aligned(a, c)).or_else(|| {
            above
                .iter()
                .position(|a| covers(a, c) && (left_open(&a.text) || set_under(a, c)))
        });
        match k {
            Some(k) if !taken[k] => {
                taken[k] = true;
                true
            }
            _ => false,
        }
    })
}

/// A line set under another within its extent, flush with one of its
/// edges or centred under it.
fn set_under(a: &TCell, c: &TCell) -> bool {
    let near = |x: f32, y: f32| (x - y).abs() < 1.0;
    let inside = c.bbox.0 > a.bbox.0 - 1.0 && c.bbox.2 < a.bbox.2 + 1.0;
    inside
        && (near(c.bbox.0, a.bbox.0)
            || near(c.bbox.2, a.bbox.2)
            || near(c.bbox.0 + c.bbox.2, a.bbox.0 + a.bbox.2))
}

/// Whether two cells are set in the same columns.
fn aligned(a: &TCell, c: &TCell) -> bool {
    a.col == c.col && a.col_span == c.col_span
}

/// The cell of `row` set in the same columns as `c`.
fn same_columns<'a>(row: &'a [TCell], c: &TCell) -> Option<&'a TCell> {
    row.iter().find(|a| aligned(a, c))
}

/// Each cell of `next` joined as the next line of the cell of `above` set
/// in the same columns (a cell with none is left out: callers join a row
/// only when every cell has one).
fn join_below(above: &mut [TCell], next: Vec<TCell>) {
    for c in next {
        let k = above
            .iter()
            .position(|a| aligned(a, &c))
            .or_else(|| above.iter().position(|a| covers(a, &c)));
        if let Some(a) = k.map(|k| &mut above[k]) {
            join_text(&mut a.text, &c.text);
            a.bbox.0 = a.bbox.0.min(c.bbox.0);
            a.bbox.2 = a.bbox.2.max(c.bbox.2);
            a.bbox.3 = a.bbox.3.max(c.bbox.3);
        }
    }
}

/// Whether a cell's text is left open, so that its next line must follow:
/// a bracket not closed, or a trailing comma, dash, slash, plus, "vs" or
/// joining word in lower case ("of", "and", "with"...; "OR" is an
/// abbreviation).
pub(super) fn left_open(text: &str) -> bool {
    let t = text.trim_end();
    let open = |o: char, c: char| t.matches(o).count() > t.matches(c).count();
    open('(', ')') || open('[', ']') || ends_open(t)
}

/// Whether a text ends where its phrase must go on: a comma, dash, slash,
/// opening bracket, plus, or a joining word in lower case ("of", "vs").
pub(super) fn ends_open(text: &str) -> bool {
    const JOINING: [&str; 14] = [
        "of", "and", "or", "with", "the", "in", "to", "for", "per", "at", "by", "from", "vs", "vs.",
    ];
    let t = text.trim_end();
    t.ends_with([',', '-', '\u{2013}', '/', '(', '[', '&', '+', '\u{b1}'])
        || t.rsplit(' ')
            .next()
            .is_some_and(|w| t.contains(' ') && JOINING.contains(&w))
}

/// Cells set vertically centred in their row, joined back into that row:
/// a cell of one line beside a cell of two sits half a line below the
/// other's first line ("Skeletal muscle" / "−1.7 (−2.2, −1.3)" / "mass
/// (kg)"), so its row and the other's lines come out as rows closer
/// together than one line of text. No two rows of text can be that close,
/// so consecutive rows less than three quarters of a line apart, in
/// different columns, are one row: each column's lines joined from the
/// top. Header rows join header rows and body rows body rows. Returns the
/// cells and the first body row after the rows removed.
pub fn centred(out: Vec<TCell>, first_body: usize) -> (Vec<TCell>, usize) {
    let rows = by_row(out);
    // A row's baseline and size: its full-size cells' (bbox from the top at
    // 0.75 of the size above the baseline to 0.22 below).
    let line = |r: &[TCell]| -> Option<(f32, f32)> {
        let h = r.iter().map(|c| c.bbox.3 - c.bbox.1).fold(0.0f32, f32::max);
        let c = r.iter().find(|c| c.bbox.3 - c.bbox.1 > 0.8 * h)?;
        let size = (c.bbox.3 - c.bbox.1) / 0.97;
        Some((c.bbox.3 - 0.22 * size, size))
    };
    // Each row's columns, as [start, end).
    type Spans = Vec<(u32, u32)>;
    let spans = |r: &[TCell]| -> Spans { r.iter().map(|c| (c.col, c.col + c.col_span)).collect() };
    let disjoint = |a: &[(u32, u32)], b: &[(u32, u32)]| {
        a.iter().all(|x| b.iter().all(|y| x.1 <= y.0 || y.1 <= x.0))
    };
    let mut first = first_body;
    let mut kept: Vec<Vec<TCell>> = Vec::new();
    // The last row joined into each kept row, as it was: its index,
    // baseline, size and columns.
    let mut last: Option<(usize, (f32, f32), Spans)> = None;
    for (r, row) in rows.into_iter().enumerate() {
        let Some((y, size)) = line(&row) else {
            if r < first_body {
                first -= 1;
            }
            continue;
        };
        let cols = spans(&row);
        let joins = last.as_ref().is_some_and(|(lr, (ly, ls), lcols)| {
            (*lr < first_body) == (r < first_body)
                && y - ly > 0.0
                && y - ly < 0.75 * ls.min(size)
                && disjoint(lcols, &cols)
        });
        if joins {
            let band = kept.last_mut().expect("a row to join");
            for c in row {
                match band
                    .iter_mut()
                    .find(|b| b.col < c.col + c.col_span && c.col < b.col + b.col_span)
                {
                    Some(b) => {
                        join_text(&mut b.text, &c.text);
                        let end = (b.col + b.col_span).max(c.col + c.col_span);
                        b.col = b.col.min(c.col);
                        b.col_span = end - b.col;
                        b.take_in(&c);
                    }
                    None => band.push(c),
                }
            }
            band.sort_by_key(|c| c.col);
            if r < first_body {
                first -= 1;
            }
        } else {
            kept.push(row);
        }
        last = Some((r, (y, size), cols));
    }
    (renumber(kept), first)
}

/// A cell's next line appended: a word broken at a hyphen joined whole.
fn join_text(text: &mut String, next: &str) {
    if text.ends_with('-') && next.starts_with(char::is_lowercase) {
        text.pop();
    } else {
        text.push(' ');
    }
    text.push_str(next);
}

/// Whether a body cell's next line reads as the rest of it rather than a
/// cell of a new row ("New Zealand European" then "Māori", "81.1" then
/// "10.8"): the text above is left open ([`left_open`]: a bracket not
/// closed, a comma, a dash, a slash, a plus, a joining word), or the line
/// starts lower-case or with a bracket or a plus-minus ("disease activity
/// (SD)", "(0.12, 0.36)", "± 4.2").
fn continues(above: &str, next: &str) -> bool {
    left_open(above) || next.starts_with(|c: char| c.is_lowercase() || "([\u{b1},;".contains(c))
}

/// Cells bucketed by row (an empty row where no cell is).
fn by_row(out: Vec<TCell>) -> Vec<Vec<TCell>> {
    let nrows = out.iter().map(|c| c.row + 1).max().unwrap_or(0) as usize;
    let mut rows: Vec<Vec<TCell>> = vec![Vec::new(); nrows];
    for c in out {
        let r = c.row as usize;
        rows[r].push(c);
    }
    rows
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

/// Lines of prose cells wrapped onto rows with nothing in the first
/// column, joined back: in a table of descriptions ("Module | Title | Key
/// skills | Activities"), set without space between rows, a body row with
/// no first-column cell, each of whose cells sits under a prose cell of the
/// same columns in the row above (two words or more, more letters than
/// digits) less than a line below that cell's last line, is those cells'
/// next lines, whatever its first letter ("Typed activities: ..."). A row
/// under values (a stacked value, a heading inside the body) is left to
/// the other stages. Rows are renumbered after the rows removed.
pub fn prose_lines(out: Vec<TCell>, first_body: usize) -> Vec<TCell> {
    let prose = |t: &str| {
        let letters = t.chars().filter(|c| c.is_alphabetic()).count();
        let digits = t.chars().filter(|c| c.is_ascii_digit()).count();
        t.split_whitespace().count() >= 2 && letters > digits
    };
    let mut kept: Vec<Vec<TCell>> = Vec::new();
    for (r, row) in by_row(out).into_iter().enumerate() {
        if row.is_empty() {
            continue;
        }
        let joins = r >= first_body
            && kept.last().is_some_and(|above| {
                above[0].row as usize >= first_body
                    && above.iter().any(|a| a.col == 0)
                    && row.iter().all(|c| {
                        c.col > 0
                            && same_columns(above, c).is_some_and(|a| {
                                prose(&a.text)
                                    && c.bbox.1 > a.bbox.1
                                    && c.bbox.1 - a.bbox.3 < 0.8 * (c.bbox.3 - c.bbox.1)
                            })
                    })
            });
        if joins {
            join_below(kept.last_mut().expect("a row to join"), row);
        } else {
            kept.push(row);
        }
    }
    renumber(kept)
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
    fn a_heading_wrapped_under_itself_joins_though_it_reaches_into_the_next_column() {
        // "Intervention" reaches into the next column, its second line
        // "Groupa" does not; rows 13 pt apart, wrapped lines 11 pt.
        let lines = at(&[
            (
                100.0,
                &[
                    (50.0, "Outcome"),
                    (200.0, "Control"),
                    (300.0, "Intervention"),
                ],
            ),
            (111.0, &[(200.0, "Groupa"), (300.0, "Groupa")]),
            (
                124.0,
                &[(200.0, "N"), (250.0, "Mean"), (300.0, "N"), (350.0, "Mean")],
            ),
            (
                137.0,
                &[
                    (50.0, "Diarrhea"),
                    (200.0, "2,609"),
                    (250.0, "0.077"),
                    (300.0, "2,600"),
                    (350.0, "0.074"),
                ],
            ),
            (
                150.0,
                &[
                    (50.0, "HCGI"),
                    (200.0, "2,609"),
                    (250.0, "0.120"),
                    (300.0, "2,600"),
                    (350.0, "0.115"),
                ],
            ),
            (
                163.0,
                &[
                    (50.0, "Anemia"),
                    (200.0, "1,922"),
                    (250.0, "0.508"),
                    (300.0, "1,919"),
                    (350.0, "0.562"),
                ],
            ),
        ]);
        let cells = super::super::cells(&lines);
        let texts: Vec<(u32, u32, u32, &str)> = cells
            .iter()
            .map(|c| (c.row, c.col, c.col_span, c.text.as_str()))
            .collect();
        assert!(texts.contains(&(0, 1, 2, "Control Groupa")), "{texts:?}");
        assert!(
            texts.contains(&(0, 3, 2, "Intervention Groupa")),
            "{texts:?}"
        );
        assert!(texts.contains(&(1, 2, 1, "Mean")), "{texts:?}");
    }

    #[test]
    fn cells_centred_in_their_rows_are_one_row() {
        // Rows 15 pt apart; a two-line label with its values centred
        // between its lines (5 pt below the first, 5 above the second); a
        // header whose cells are centred over two and three lines.
        let lines = at(&[
            (80.0, &[(200.0, "Drug")]),
            (85.0, &[(300.0, "Placebo")]),
            (90.0, &[(200.0, "(N = 40)")]),
            (95.0, &[(300.0, "(N = 38)")]),
            (100.0, &[(200.0, "n (%)")]),
            (
                115.0,
                &[(50.0, "Age"), (200.0, "34 (5)"), (300.0, "35 (6)")],
            ),
            (130.0, &[(50.0, "Skeletal muscle")]),
            (135.0, &[(200.0, "38.4 (7.9)"), (300.0, "37.9 (7.4)")]),
            (140.0, &[(50.0, "mass (kg)")]),
            (
                155.0,
                &[(50.0, "Women"), (200.0, "12 (30)"), (300.0, "14 (37)")],
            ),
            (
                170.0,
                &[(50.0, "Smokers"), (200.0, "5 (12)"), (300.0, "7 (18)")],
            ),
        ]);
        let cells = super::super::cells(&lines);
        let texts: Vec<(u32, u32, &str)> = cells
            .iter()
            .map(|c| (c.row, c.col, c.text.as_str()))
            .collect();
        assert!(texts.contains(&(0, 1, "Drug (N = 40) n (%)")), "{texts:?}");
        assert!(texts.contains(&(0, 2, "Placebo (N = 38)")), "{texts:?}");
        assert!(
            texts.contains(&(2, 0, "Skeletal muscle mass (kg)")),
            "{texts:?}"
        );
        assert!(texts.contains(&(2, 1, "38.4 (7.9)")), "{texts:?}");
        assert!(texts.contains(&(4, 2, "7 (18)")), "{texts:?}");
        assert_eq!(cells.iter().map(|c| c.row).max(), Some(4));
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
    fn a_body_line_never_joins_a_header_row_across_an_empty_row() {
        // Cells as `by_row` gives them: each with its grid row.
        let cell = |row: u32, col: u32, text: &str| super::super::TCell {
            row,
            col,
            col_span: 1,
            text: text.to_string(),
            indent: 0,
            bold: false,
            bbox: (0.0, 0.0, 0.0, 0.0),
        };
        // The header's cells are left open ("Drug vs"); the empty grid row
        // between is the body's first, so the line under it is body.
        let rows = vec![
            vec![cell(0, 1, "Drug vs"), cell(0, 2, "Diet vs")],
            Vec::new(),
            vec![cell(2, 1, "placebo"), cell(2, 2, "control")],
        ];
        let (cells, first_body) = super::by_content(rows, 1);
        assert_eq!(first_body, 1);
        let texts: Vec<(u32, &str)> = cells.iter().map(|c| (c.row, c.text.as_str())).collect();
        assert_eq!(
            texts,
            [
                (0, "Drug vs"),
                (0, "Diet vs"),
                (1, "placebo"),
                (1, "control")
            ]
        );
    }

    #[test]
    fn a_value_left_open_takes_the_line_below_and_its_label() {
        // "1.4 ±" goes on below, so "Cholesterol (mg/dl)" is the rest of
        // "Total" though it starts with a capital: with space between rows
        // (13 pt rows, 11 pt lines) and without (every line 11 pt).
        for (row, wrap) in [(13.0, 11.0), (11.0, 11.0)] {
            let mut y = 100.0;
            let mut rows: Vec<(f32, &[(f32, &str)])> = Vec::new();
            rows.push((y, &[(200.0, "Placebo"), (300.0, "Metformin")]));
            y += row;
            rows.push((
                y,
                &[
                    (50.0, "HDL (mg/dl)"),
                    (200.0, "-1.7 ± 6.6"),
                    (300.0, "-1.9 ± 4.6"),
                ],
            ));
            y += row;
            rows.push((y, &[(50.0, "Total"), (200.0, "1.4 ±"), (300.0, "21.8 ±")]));
            y += wrap;
            rows.push((
                y,
                &[
                    (50.0, "Cholesterol (mg/dl)"),
                    (200.0, "29.2"),
                    (300.0, "25.2"),
                ],
            ));
            y += row;
            rows.push((
                y,
                &[
                    (50.0, "LDL (mg/dl)"),
                    (200.0, "-5.9 ± 28.3"),
                    (300.0, "6.6 ± 20.0"),
                ],
            ));
            let cells = super::super::cells(&at(&rows));
            let texts: Vec<(u32, u32, &str)> = cells
                .iter()
                .map(|c| (c.row, c.col, c.text.as_str()))
                .collect();
            assert!(
                texts.contains(&(2, 0, "Total Cholesterol (mg/dl)")),
                "{texts:?}"
            );
            assert!(texts.contains(&(2, 1, "1.4 ± 29.2")), "{texts:?}");
            assert!(texts.contains(&(3, 0, "LDL (mg/dl)")), "{texts:?}");
        }
    }

    #[test]
    fn a_label_wrapped_at_the_columns_edge_takes_its_capitalised_rest() {
        // Rows 13 pt apart, a label's lines 11 pt: "Score" did not fit after
        // "Social-Emotional Standardised", so it is that label's rest; the
        // heading under the short "Plus vs basic" is a row of its own.
        let lines = at(&[
            (100.0, &[(200.0, "Iodine"), (300.0, "Placebo")]),
            (
                113.0,
                &[
                    (50.0, "Motor Standardised Score"),
                    (200.0, "93.9"),
                    (300.0, "92.4"),
                ],
            ),
            (
                126.0,
                &[
                    (50.0, "Social-Emotional Standardised"),
                    (200.0, "105.8"),
                    (300.0, "105.4"),
                ],
            ),
            (137.0, &[(50.0, "Score")]),
            (
                150.0,
                &[(50.0, "Plus vs basic"), (200.0, "0.7"), (300.0, "0.4")],
            ),
            (161.0, &[(50.0, "Saturated fat intake")]),
            (
                174.0,
                &[(50.0, "Group by time"), (200.0, "1.64"), (300.0, "3.02")],
            ),
        ]);
        let cells = super::super::cells(&lines);
        let texts: Vec<(u32, u32, &str)> = cells
            .iter()
            .map(|c| (c.row, c.col, c.text.as_str()))
            .collect();
        assert!(
            texts.contains(&(2, 0, "Social-Emotional Standardised Score")),
            "{texts:?}"
        );
        assert!(texts.contains(&(4, 0, "Saturated fat intake")), "{texts:?}");
    }

    #[test]
    fn a_heading_left_open_over_two_columns_takes_its_rest_below() {
        // "Pioglitazone (n =" spans its Mean and SD columns; "16)" under it
        // sits over one of them.
        let lines = at(&[
            (
                100.0,
                &[(200.0, "Placebo (n = 23)"), (330.0, "Pioglitazone (n =")],
            ),
            (111.0, &[(330.0, "16)")]),
            (
                124.0,
                &[
                    (200.0, "Mean"),
                    (260.0, "SD"),
                    (330.0, "Mean"),
                    (390.0, "SD"),
                ],
            ),
            (
                137.0,
                &[
                    (50.0, "Weight (kg)"),
                    (200.0, "-0.6"),
                    (260.0, "3.1"),
                    (330.0, "-0.4"),
                    (390.0, "1.7"),
                ],
            ),
            (
                150.0,
                &[
                    (50.0, "BMI (kg/m2)"),
                    (200.0, "-0.1"),
                    (260.0, "1.4"),
                    (330.0, "-0.2"),
                    (390.0, "0.7"),
                ],
            ),
        ]);
        let cells = super::super::cells(&lines);
        let texts: Vec<(u32, &str)> = cells.iter().map(|c| (c.row, c.text.as_str())).collect();
        assert!(texts.contains(&(0, "Pioglitazone (n = 16)")), "{texts:?}");
        assert!(texts.contains(&(1, "Mean")), "{texts:?}");
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

    #[test]
    fn prose_wrapped_under_a_numbered_row_joins_its_cells() {
        // A table of descriptions, every line 11 pt from the next: a row
        // starts where the first column has its number.
        let lines = at(&[
            (
                100.0,
                &[(50.0, "Module"), (100.0, "Title"), (250.0, "Activities")],
            ),
            (
                111.0,
                &[
                    (50.0, "1"),
                    (100.0, "Ditch the diets"),
                    (250.0, "Practice asking self before each meal."),
                ],
            ),
            (122.0, &[(250.0, "Typed activities: reflect on dieting.")]),
            (
                133.0,
                &[
                    (50.0, "2"),
                    (100.0, "Tuning into hunger"),
                    (250.0, "Guided audio activity."),
                ],
            ),
            (
                144.0,
                &[(100.0, "and fullness"), (250.0, "Rating hunger 0 to 10.")],
            ),
            (155.0, &[(250.0, "Typed activities: reflect.")]),
        ]);
        let cells = super::super::cells(&lines);
        let texts: Vec<(u32, u32, &str)> = cells
            .iter()
            .map(|c| (c.row, c.col, c.text.as_str()))
            .collect();
        assert!(
            texts.contains(&(
                1,
                2,
                "Practice asking self before each meal. Typed activities: reflect on dieting."
            )),
            "{texts:?}"
        );
        assert!(
            texts.contains(&(2, 1, "Tuning into hunger and fullness")),
            "{texts:?}"
        );
        assert!(
            texts.contains(&(
                2,
                2,
                "Guided audio activity. Rating hunger 0 to 10. Typed activities: reflect."
            )),
            "{texts:?}"
        );
        assert_eq!(cells.iter().map(|c| c.row).max(), Some(2));
        // Values under values stay rows.
        let lines = at(&[
            (100.0, &[(200.0, "Drug"), (300.0, "Placebo")]),
            (111.0, &[(50.0, "Visits"), (200.0, "12"), (300.0, "14")]),
            (122.0, &[(200.0, "Week 4"), (300.0, "Week 8")]),
        ]);
        let cells = super::super::cells(&lines);
        assert_eq!(cells.iter().map(|c| c.row).max(), Some(2));
    }

    #[test]
    fn lines_of_a_table_without_row_space_join_by_their_text() {
        // Every line 11 pt from the next: only the text tells a cell's
        // next line from a row.
        let lines = at(&[
            (
                100.0,
                &[(200.0, "Drug vs"), (300.0, "Drug vs"), (400.0, "Dose vs")],
            ),
            (
                111.0,
                &[(200.0, "placebo"), (300.0, "dose"), (400.0, "placebo")],
            ),
            (
                122.0,
                &[
                    (50.0, "Global assessment of"),
                    (200.0, "-9.93"),
                    (300.0, "-10.0"),
                    (400.0, "0.09 (-3.61,"),
                ],
            ),
            (
                133.0,
                &[
                    (50.0, "disease activity"),
                    (200.0, "(-12.96, -6.90)"),
                    (300.0, "(-13.7, -6.32)"),
                    (400.0, "3.79)"),
                ],
            ),
            (
                144.0,
                &[
                    (50.0, "Trained staff"),
                    (200.0, "36"),
                    (300.0, "37 (92%)"),
                    (400.0, "0.41"),
                ],
            ),
            (155.0, &[(50.0, "(%)"), (200.0, "(97%)")]),
            (
                166.0,
                &[
                    (50.0, "Blood pressure lowering"),
                    (200.0, "12"),
                    (300.0, "14"),
                    (400.0, "0.3"),
                ],
            ),
            (177.0, &[(50.0, "d-BP (mmHg)")]),
            (
                188.0,
                &[(50.0, "Male"), (200.0, "10"), (300.0, "12"), (400.0, "0.5")],
            ),
            (
                199.0,
                &[
                    (50.0, "female"),
                    (200.0, "20"),
                    (300.0, "18"),
                    (400.0, "0.5"),
                ],
            ),
        ]);
        let cells = super::super::cells(&lines);
        let texts: Vec<(u32, u32, &str)> = cells
            .iter()
            .map(|c| (c.row, c.col, c.text.as_str()))
            .collect();
        assert!(texts.contains(&(0, 1, "Drug vs placebo")), "{texts:?}");
        assert!(
            texts.contains(&(1, 0, "Global assessment of disease activity")),
            "{texts:?}"
        );
        assert!(
            texts.contains(&(1, 1, "-9.93 (-12.96, -6.90)")),
            "{texts:?}"
        );
        assert!(texts.contains(&(1, 3, "0.09 (-3.61, 3.79)")), "{texts:?}");
        assert!(texts.contains(&(2, 0, "Trained staff (%)")), "{texts:?}");
        assert!(texts.contains(&(2, 1, "36 (97%)")), "{texts:?}");
        // Rows that are only close stay rows; an abbreviation in lower
        // case starts a row of its own.
        assert!(
            texts.contains(&(3, 0, "Blood pressure lowering")),
            "{texts:?}"
        );
        assert!(texts.contains(&(4, 0, "d-BP (mmHg)")), "{texts:?}");
        assert!(texts.contains(&(5, 0, "Male")), "{texts:?}");
        assert!(texts.contains(&(6, 0, "female")), "{texts:?}");
    }
}
