//! Stage 2, the grid: a region's lines cut into rows (by baseline) and
//! columns (from the gaps in the horizontal projection of its fullest
//! rows), and each line placed in the column(s) it covers.

use super::super::layout::{starts_value, Line, Word};
use super::{header, same_row, TCell};

/// Rows of lines and column intervals of one table region.
pub struct Grid<'a> {
    /// Rows top to bottom, each left to right.
    pub rows: Vec<Vec<&'a Line>>,
    /// Column intervals (x0, x1), left to right.
    pub cols: Vec<(f32, f32)>,
}

impl<'a> Grid<'a> {
    /// Rows by baseline; column intervals from the rows with the most cells
    /// when there are three or more of them (a row whose label ran into the
    /// first value would otherwise merge two columns), else from rows with
    /// at least half the widest row's cells (so a spanning header cell does
    /// not merge columns).
    pub fn new(lines: &'a [Line]) -> Grid<'a> {
        let mut rows: Vec<Vec<&Line>> = Vec::new();
        let mut sorted: Vec<&Line> = lines.iter().collect();
        sorted.sort_by(|a, b| a.y.total_cmp(&b.y));
        for l in sorted {
            match rows.last_mut() {
                Some(r) if same_row(r[0], l) => r.push(l),
                _ => rows.push(vec![l]),
            }
        }
        for r in &mut rows {
            r.sort_by(|a, b| a.x0.total_cmp(&b.x0));
        }
        let maxn = rows.iter().map(|r| r.len()).max().unwrap_or(0);
        let full = rows.iter().filter(|r| r.len() == maxn).count();
        let mut iv: Vec<(f32, f32)> = rows
            .iter()
            .filter(|r| {
                if full >= 3 && maxn >= 3 {
                    r.len() == maxn
                } else {
                    r.len() * 2 >= maxn && r.len() >= 2
                }
            })
            .flat_map(|r| r.iter().map(|l| (l.x0, l.x1)))
            .collect();
        if iv.is_empty() {
            iv = lines.iter().map(|l| (l.x0, l.x1)).collect();
        }
        iv.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut cols: Vec<(f32, f32)> = Vec::new();
        for (a, b) in iv {
            match cols.last_mut() {
                Some(c) if a <= c.1 + 1.0 => c.1 = c.1.max(b),
                _ => cols.push((a, b)),
            }
        }
        let mut cols: Vec<(f32, f32)> =
            cols.into_iter().flat_map(|c| unbridged(c, &rows)).collect();
        // Lines left of the first column, none reaching into it, are a stub
        // column no row filled with the rest (labels wrapped onto lines of
        // their own, each value set between its label's lines). Group labels
        // left of indented ones reach into them, some of them at least.
        if let Some(&(first, _)) = cols.first() {
            let stub: Vec<&Line> = lines.iter().filter(|l| l.x0 < first - 1.0).collect();
            let x0 = stub.iter().map(|l| l.x0).fold(f32::MAX, f32::min);
            let x1 = stub.iter().map(|l| l.x1).fold(f32::MIN, f32::max);
            if !stub.is_empty() && x1 < first - 1.0 {
                cols.insert(0, (x0, x1));
            }
        }
        Grid { rows, cols }
    }

    /// The column an x falls in (the first whose right edge is past it).
    pub fn col_of(&self, x: f32) -> usize {
        self.cols
            .iter()
            .position(|c| x < c.1 + 0.5)
            .unwrap_or(self.cols.len().saturating_sub(1))
    }

    /// Every line as cells: a body line crossing column boundaries is split
    /// by the column its words' centres are in; a header line (rows before
    /// `first_body`) spans the columns it reaches into unless its words
    /// stand apart like separate headings (see [`header::span`]). Indent is
    /// the first-column cell's level (see `indent_levels` below).
    pub fn place(&self, first_body: usize) -> Vec<TCell> {
        let cols = &self.cols;
        let left = self
            .rows
            .iter()
            .flat_map(|r| r.first())
            .filter(|l| self.col_of(l.x0) == 0)
            .map(|l| l.x0)
            .fold(f32::MAX, f32::min);
        let right = self
            .rows
            .iter()
            .flatten()
            .map(|l| l.x1)
            .fold(f32::MIN, f32::max);
        // The deepest start of a label inside the first column.
        let deepest = self
            .rows
            .iter()
            .flatten()
            .filter(|l| self.col_of(l.x0) == 0 && cols.get(1).is_none_or(|c| l.x1 < c.0))
            .map(|l| l.x0)
            .fold(f32::MIN, f32::max);
        let mut out = Vec::new();
        // First-column cells' distances from the column's left edge, in ems.
        let mut offsets: Vec<(usize, f32)> = Vec::new();
        for (ri, r) in self.rows.iter().enumerate() {
            for l in r {
                let is_header = ri < first_body;
                // The last column the line reaches into (past its start), so
                // a header wider than its column does not span the next one.
                let c0 = self.col_of(l.x0);
                let c1 = cols
                    .iter()
                    .rposition(|c| c.0 < l.x1 - 1.0)
                    .unwrap_or(0)
                    .max(c0);
                let (c0, c1) = if is_header {
                    header::span(cols, l, c0, c1)
                } else {
                    (c0, c1)
                };
                let by_column = (c1 > c0).then(|| self.by_column(l));
                // One phrase across columns ("Place of residence (ie,
                // cities in the Netherlands), n (%)") is one cell spanning
                // them, wherever most of it lies.
                let pieces: Vec<(usize, usize, Vec<&Word>)> = match by_column {
                    Some(p) if p.len() > 1 && (!is_header || header::spaced(&p, l.size)) => p,
                    _ => vec![(c0, c1.max(c0), l.words.iter().collect())],
                };
                for (a, b, ws) in pieces {
                    let text = ws
                        .iter()
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    let x0 = ws.iter().map(|w| w.x0).fold(f32::MAX, f32::min);
                    let x1 = ws.iter().map(|w| w.x1).fold(f32::MIN, f32::max);
                    let nb = ws.iter().filter(|w| w.bold).count();
                    // A heading centred across the table ("Regression 1 (n =
                    // 60): ..." over its rows), starting further in than any
                    // label, is not nested by where it starts: it is at the
                    // top level. (A long label crossing columns from where
                    // its siblings start keeps its level.)
                    let centred_across = b > a
                        && x0 > left + 2.0 * l.size
                        && x0 > deepest + l.size
                        && ((x0 + x1) / 2.0 - (left + right) / 2.0).abs() < 2.0 * l.size;
                    if a == 0 && left < f32::MAX && !centred_across {
                        offsets.push((out.len(), ((x0 - left) / l.size).max(0.0)));
                    }
                    out.push(TCell {
                        row: ri as u32,
                        col: a as u32,
                        col_span: (b - a + 1) as u32,
                        text,
                        indent: 0,
                        bold: nb * 2 > ws.len(),
                        bbox: (x0, l.top(), x1, l.bottom()),
                    });
                }
            }
        }
        for (i, level) in indent_levels(&offsets) {
            out[i].indent = level;
        }
        out
    }

    /// A line's words grouped by column: words a word space apart are one
    /// phrase ("Etoricoxib 90"), and a phrase goes to the column it
    /// overlaps most (the column its centre is in when it overlaps none),
    /// so a phrase wider than its column does not hand its last word to
    /// the next one.
    fn by_column<'l>(&self, l: &'l Line) -> Vec<(usize, usize, Vec<&'l Word>)> {
        let mut phrases: Vec<Vec<&Word>> = Vec::new();
        for w in &l.words {
            match phrases.last_mut() {
                Some(p) if w.x0 - p.last().unwrap().x1 <= 0.5 * w.size.min(l.size) => p.push(w),
                _ => phrases.push(vec![w]),
            }
        }
        let mut p: Vec<(usize, usize, Vec<&Word>)> = Vec::new();
        for ph in phrases {
            let (x0, x1) = (ph[0].x0, ph.last().unwrap().x1);
            let overlap = |c: &(f32, f32)| x1.min(c.1) - x0.max(c.0);
            let c = self
                .cols
                .iter()
                .enumerate()
                .filter(|(_, c)| overlap(c) > 0.0)
                .max_by(|a, b| overlap(a.1).total_cmp(&overlap(b.1)))
                .map(|(i, _)| i)
                .unwrap_or_else(|| self.col_of((x0 + x1) / 2.0));
            match p.last_mut() {
                Some((a, _, ws)) if *a == c => ws.extend(ph),
                _ => p.push((c, c, ph)),
            }
        }
        p
    }
}

/// Lines cut where a word starts a column: a label set so close to its
/// first value that the two are one line ("≥1 from baseline to day 21 34
/// responders" in a narrow column), or two values of a tight table half an
/// em apart ("−1.1)  <0.0001"), is cut before a word when the space before
/// it is wider than twice the line's own word spacing and than 0.4 em, and
/// the piece it starts (up to the next such space) lines up with whole
/// lines of two or more other rows: the same left edge (a left-aligned
/// column), centre (a centred one) or, for a piece starting like a value,
/// right edge (numbers set flush right: labels ending alike, "(12
/// tablets)" and "(18 tablets)", are no column), or with one whole line of
/// the very same extent ("<0.0001" over "<0.0001" where only two rows hold
/// values). Pieces of other lines do not count (like cells of other rows
/// line up with each other, "25.0 (−2.9 to 52.9)" with "10.9 (−5.9 to
/// 27.7)"), so the cutting is repeated while it cuts: a header line cut
/// once lines up with the values under it. A word after an ordinary space that happens
/// to line up stays, and so does one inside a phrase ([`bridged`]).
pub fn cut_at_column_starts(lines: &[Line]) -> Vec<Line> {
    let mut lines = lines.to_vec();
    for _ in 0..4 {
        let (cut, changed) = cut_once(&lines);
        lines = cut;
        if !changed {
            break;
        }
    }
    lines
}

/// Cells of one row left in the same columns by the stages (a line cut
/// apart where no column of the grid starts: "t" and "p" over one column
/// when the rows under them hold "0.804 .423" as one line) are one cell,
/// in reading order.
pub fn same_cell_joined(cells: Vec<TCell>) -> Vec<TCell> {
    let mut out: Vec<TCell> = Vec::with_capacity(cells.len());
    for c in cells {
        match out
            .iter_mut()
            .find(|o| o.row == c.row && o.col == c.col && o.col_span == c.col_span)
        {
            Some(o) => {
                o.text.push(' ');
                o.text.push_str(&c.text);
                o.take_in(&c);
            }
            None => out.push(c),
        }
    }
    out
}

/// One pass of [`cut_at_column_starts`]; whether it cut anything.
fn cut_once(lines: &[Line]) -> (Vec<Line>, bool) {
    // A line's word spacing: its lower quartile gap (in a line of a few
    // words the median can be a column gap), at most half an em (headings
    // of several columns on one line, "India  Madhya  Dhar  Khargone",
    // have no word space).
    let spacing = |l: &Line| {
        let mut gaps: Vec<f32> = l.words.windows(2).map(|w| w[1].x0 - w[0].x1).collect();
        gaps.sort_by(f32::total_cmp);
        let q = gaps.len().saturating_sub(1) / 4;
        gaps.get(q)
            .copied()
            .unwrap_or(0.0)
            .clamp(0.1 * l.size, 0.5 * l.size)
    };
    // The gaps of a line wider than twice its word spacing and 0.4 em.
    let wide = |l: &Line| -> Vec<bool> {
        let sp = spacing(l);
        l.words
            .windows(2)
            .map(|w| {
                let gap = w[1].x0 - w[0].x1;
                gap > 2.0 * sp && gap > 0.4 * l.size
            })
            .collect()
    };
    // Whole lines of other rows lined up with (a, b), and whether one of
    // them has its very extent.
    let lined_up = |a: f32, b: f32, y: f32, size: f32, value: bool| {
        let others = || lines.iter().filter(move |p| (p.y - y).abs() > 0.5 * size);
        let edge = others()
            .filter(|p| {
                (p.x0 - a).abs() < 1.0
                    || value && (p.x1 - b).abs() < 1.0
                    || ((p.x0 + p.x1) - (a + b)).abs() < 2.0
            })
            .count();
        edge >= 2 || others().any(|p| (p.x0 - a).abs() < 1.0 && (p.x1 - b).abs() < 1.0)
    };
    let text = |ws: &[Word]| {
        ws.iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = Vec::with_capacity(lines.len());
    let mut changed = false;
    for l in lines {
        if l.words.len() < 2 {
            out.push(l.clone());
            continue;
        }
        let wide = wide(l);
        let mut cur: Vec<Word> = vec![l.words[0].clone()];
        for (i, &w) in wide.iter().enumerate() {
            if w {
                // The piece the next word starts, up to the next wide gap.
                let end = (i + 1..wide.len()).find(|&j| wide[j]).unwrap_or(wide.len());
                let (a, b) = (l.words[i + 1].x0, l.words[end].x1);
                let value = starts_value(&l.words[i + 1].text);
                if lined_up(a, b, l.y, l.size, value)
                    && !bridged(&text(&cur), &text(&l.words[i + 1..=end]))
                {
                    out.push(Line::new(std::mem::take(&mut cur)));
                    changed = true;
                }
            }
            cur.push(l.words[i + 1].clone());
        }
        out.push(Line::new(cur));
    }
    (out, changed)
}

/// Whether a phrase goes on over a gap: the text before it ends open
/// ("Weeks 10–14 to"), or leaves a bracket open that the piece after it
/// closes ("Low (" / "≥24 pts.)"; "Difference [95%" / "Difference [95%"
/// are two headings).
fn bridged(before: &str, after: &str) -> bool {
    let open =
        |t: &str, o: char, c: char| t.matches(o).count() as i64 - t.matches(c).count() as i64;
    super::merge::ends_open(before)
        || [('(', ')'), ('[', ']')]
            .iter()
            .any(|&(o, c)| open(before, o, c) > 0 && open(after, o, c) < 0)
}

/// A column interval cut where rows show a gap that a few long lines
/// bridge: a long question or label ("Overall, to what extent did you find
/// it easy to use?") running over the next column's start merges two
/// columns in the union of the rows' pieces, while most rows hold two pieces
/// apart inside it. Cut at the place inside the interval where the rows
/// with a gap there outnumber the rows with a line across it at least two
/// to one (and are three or more); each side is cut again the same way. A
/// line centred over the gap is a heading spanning both columns, not a
/// line across the gap.
fn unbridged(c: (f32, f32), rows: &[Vec<&Line>]) -> Vec<(f32, f32)> {
    // Each row's pieces inside the interval.
    let inside: Vec<Vec<(f32, f32)>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .filter(|l| l.x0 >= c.0 - 0.5 && l.x1 <= c.1 + 0.5)
                .map(|l| (l.x0, l.x1))
                .collect()
        })
        .collect();
    // Candidate cuts: the middle of each gap between two pieces of a row.
    let gaps: Vec<(f32, f32)> = inside
        .iter()
        .flat_map(|ps| ps.windows(2).map(|w| (w[0].1, w[1].0)))
        .filter(|(a, b)| b > a)
        .collect();
    let mut best: Option<(i64, f32)> = None;
    for &(a, b) in &gaps {
        let x = (a + b) / 2.0;
        let open = gaps.iter().filter(|g| g.0 < x && g.1 > x).count();
        // Rows with a line across the gap; a line centred over it is a
        // heading or value spanning the two columns, not bridging them.
        let crossing = |centred: bool| {
            inside
                .iter()
                .filter(|ps| {
                    ps.iter().any(|p| {
                        p.0 < x
                            && p.1 > x
                            && (centred
                                || ((p.0 + p.1) / 2.0 - x).abs() > (0.1 * (p.1 - p.0)).max(3.0))
                    })
                })
                .count()
        };
        let across = crossing(false);
        if open >= 3 && open >= 2 * across && crossing(true) > 0 {
            let score = open as i64 - across as i64;
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, x));
            }
        }
    }
    let Some((_, x)) = best else {
        return vec![c];
    };
    // The sides: what lies wholly left and wholly right of the cut.
    let pieces = || inside.iter().flatten();
    let left_end = pieces()
        .filter(|p| p.1 <= x)
        .map(|p| p.1)
        .fold(f32::MIN, f32::max);
    let right_start = pieces()
        .filter(|p| p.0 >= x)
        .map(|p| p.0)
        .fold(f32::MAX, f32::min);
    if left_end == f32::MIN || right_start == f32::MAX {
        return vec![c];
    }
    let mut out = unbridged((c.0, left_end), rows);
    out.extend(unbridged((right_start, c.1), rows));
    out
}

/// Indentation levels from first-column cells' distances to the column's
/// left edge (in ems): the distances are grouped, each group starting at
/// its smallest and taking what lies within a third of an em of it, and a
/// cell's level is its group's rank (0 flush left). Typesetters indent by
/// half an em or by two, and a label with a superscript or a different
/// first glyph starts a little off its siblings ("P-value for F0" 0.67 em
/// in, "Postop 1st mo" 0.72 em), so rounding ems to whole numbers put
/// siblings on two levels and two levels on one.
fn indent_levels(offsets: &[(usize, f32)]) -> Vec<(usize, u32)> {
    let mut sorted: Vec<f32> = offsets.iter().map(|o| o.1).collect();
    sorted.sort_by(f32::total_cmp);
    let mut starts: Vec<f32> = Vec::new();
    for d in sorted {
        match starts.last() {
            Some(&s) if d - s <= 1.0 / 3.0 => {}
            _ => starts.push(d),
        }
    }
    offsets
        .iter()
        .map(|&(i, d)| {
            let level = starts.iter().rposition(|&s| s <= d).unwrap_or(0);
            (i, level as u32)
        })
        .collect()
}

/// A centred first column has no indentation: its left edges vary with the
/// text's length while the centres agree. All its cells count, those running
/// on into the next column too (a few short cells alike do not make a stub
/// of long flush-left labels centred), and a stub is flush when most of its
/// cells start at one edge, whichever (a heading further left is no margin
/// the labels must meet).
pub fn centred_stub(out: &mut [TCell]) {
    let firsts: Vec<(f32, f32)> = out
        .iter()
        .filter(|c| c.col == 0)
        .map(|c| (c.bbox.0, c.bbox.2))
        .collect();
    if firsts.len() < 4 {
        return;
    }
    let mut centres: Vec<f32> = firsts.iter().map(|(a, b)| (a + b) / 2.0).collect();
    centres.sort_by(f32::total_cmp);
    let mc = centres[centres.len() / 2];
    let centred = firsts
        .iter()
        .filter(|f| ((f.0 + f.1) / 2.0 - mc).abs() < 3.0)
        .count();
    // The most cells that start at one left edge (a level of indentation,
    // or the margin): labels set flush, even when wrapped to one width.
    let flush = firsts
        .iter()
        .map(|a| firsts.iter().filter(|b| (b.0 - a.0).abs() < 1.5).count())
        .max()
        .unwrap_or(0);
    if centred * 10 >= firsts.len() * 7 && flush * 10 < firsts.len() * 7 {
        for c in out.iter_mut().filter(|c| c.col == 0) {
            c.indent = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;

    #[test]
    fn a_label_run_into_its_first_value_is_cut_where_the_column_starts() {
        // "21" ends at 180; "34" starts at 186 (6 pt on, a word space is
        // 2.5), where the header and a wrapped value start.
        let mut glued = line(50.0, 128.0, "From baseline to day 21");
        let mut value = line(186.0, 128.0, "34 responders");
        glued.words.append(&mut value.words);
        let glued = Line::new(glued.words);
        let lines = vec![
            line(186.0, 100.0, "SLT group"),
            line(186.0, 114.0, "(n=59)"),
            glued,
            line(186.0, 142.0, "responders"),
            // An ordinary space before a word that lines up is no cut.
            line(50.0, 156.0, "Women aged over 40"),
            line(85.0, 170.0, "aged"),
            line(85.0, 184.0, "aged"),
        ];
        let cut = cut_at_column_starts(&lines);
        let texts: Vec<String> = cut.iter().map(Line::text).collect();
        assert!(
            texts.contains(&"From baseline to day 21".to_string()),
            "{texts:?}"
        );
        assert!(texts.contains(&"34 responders".to_string()), "{texts:?}");
        assert!(
            texts.contains(&"Women aged over 40".to_string()),
            "{texts:?}"
        );
        assert_eq!(cut.len(), lines.len() + 1);
    }

    /// One line of pieces, each (x0, text), the words of a piece 2.5 pt
    /// apart (as [`line`] sets them).
    fn pieces(y: f32, ps: &[(f32, &str)]) -> Line {
        Line::new(ps.iter().flat_map(|(x, t)| line(*x, y, t).words).collect())
    }

    #[test]
    fn values_of_a_tight_centred_table_are_cut_apart() {
        // Columns centred at 200, 260, 320 and 380. The heading row and the
        // second row of values each came out of the page as one line (the
        // gaps between their cells are 15 to 22 pt, the values' word space
        // 2.5); the first row of values as four lines. The P value heading
        // lines up with whole lines only once the row under it is cut.
        let lines = vec![
            line(190.0, 86.0, "Mean"),
            line(310.0, 86.0, "Mean"),
            pieces(
                100.0,
                &[
                    (181.25, "Change A"),
                    (243.75, "P value"),
                    (301.25, "Change C"),
                    (363.75, "P value"),
                ],
            ),
            line(178.75, 114.0, "4.2 (3.3)"),
            line(245.0, 114.0, "<0.001"),
            line(298.75, 114.0, "4.7 (3.9)"),
            line(365.0, 114.0, "<0.001"),
            pieces(
                128.0,
                &[
                    (173.75, "-1.4 (-1.6)"),
                    (245.0, "<0.001"),
                    (293.75, "-1.2 (-1.4)"),
                    (365.0, "<0.001"),
                ],
            ),
        ];
        let texts: Vec<(i32, String)> = cut_at_column_starts(&lines)
            .iter()
            .map(|l| (l.y as i32, l.text()))
            .collect();
        for want in [
            (100, "Change A"),
            (100, "P value"),
            (100, "Change C"),
            (128, "-1.4 (-1.6)"),
            (128, "<0.001"),
            (128, "-1.2 (-1.4)"),
        ] {
            assert!(
                texts.contains(&(want.0, want.1.to_string())),
                "{want:?} in {texts:?}"
            );
        }
        assert_eq!(texts.len(), 14, "{texts:?}");
    }

    #[test]
    fn headings_set_on_one_line_with_no_word_space_are_cut_apart() {
        // Four one-word headings came out as one line, every gap between
        // them 20 pt or more (no ordinary word space to compare with); the
        // values under them start where they do.
        let mut lines = vec![pieces(
            86.0,
            &[
                (200.0, "India"),
                (260.0, "Madhya"),
                (320.0, "Dhar"),
                (380.0, "Khargone"),
            ],
        )];
        for (i, vs) in [
            ["1,210", "72,626", "2,185", "1,873"],
            ["833", "52,557", "1,772", "1,574"],
        ]
        .iter()
        .enumerate()
        {
            let y = 100.0 + 14.0 * i as f32;
            lines.push(line(50.0, y, "Population"));
            for (k, v) in vs.iter().enumerate() {
                lines.push(line(200.0 + 60.0 * k as f32, y, v));
            }
        }
        let heads: Vec<String> = cut_at_column_starts(&lines)
            .iter()
            .filter(|l| l.y < 90.0)
            .map(Line::text)
            .collect();
        assert_eq!(heads, ["India", "Madhya", "Dhar", "Khargone"]);
    }

    #[test]
    fn lines_of_one_row_in_one_column_are_one_cell() {
        // "t" and "p" head one column of the grid (the rows under them hold
        // their values as one line): one cell, not two in one place.
        let lines = laid_out(&[
            &[
                (50.0, "Variable"),
                (200.0, "SE"),
                (300.0, "t"),
                (330.0, "p"),
            ],
            &[(50.0, "Group"), (200.0, ".046"), (300.0, "0.804 .423")],
            &[(50.0, "RefST"), (200.0, "0.039"), (300.0, "1.201 .230")],
        ]);
        let cells = same_cell_joined(Grid::new(&lines).place(1));
        let at: Vec<(u32, u32, &str)> = cells
            .iter()
            .map(|c| (c.row, c.col, c.text.as_str()))
            .collect();
        assert!(at.contains(&(0, 2, "t p")), "{at:?}");
        assert_eq!(at.len(), 9, "{at:?}");
    }

    #[test]
    fn columns_come_from_the_fullest_rows() {
        let lines = simple();
        let g = Grid::new(&lines);
        assert_eq!(g.rows.len(), 5);
        assert_eq!(g.cols.len(), 4);
        assert_eq!(g.col_of(210.0), 1);
        assert_eq!(g.col_of(1000.0), 3);
    }

    #[test]
    fn a_few_long_labels_do_not_merge_two_columns() {
        // Questions run past the start of the n (%) column; their answers'
        // labels and counts stand apart.
        let q = "Overall to what extent did you find it easy to use and understand";
        let lines = laid_out(&[
            &[(50.0, "Measure"), (300.0, "n"), (400.0, "Median")],
            &[(60.0, q), (400.0, "4")],
            &[(80.0, "Not easy"), (300.0, "0 (0)")],
            &[(80.0, "Somewhat easy"), (300.0, "5 (20)")],
            &[(80.0, "Very easy"), (300.0, "12 (48)")],
            &[(60.0, q), (400.0, "3")],
            &[(80.0, "Not easy"), (300.0, "2 (8)")],
            &[(80.0, "Very easy"), (300.0, "9 (36)")],
        ]);
        assert!(lines[3].x1 > 310.0, "the question crosses the n column");
        let g = Grid::new(&lines);
        assert_eq!(g.cols.len(), 3, "{:?}", g.cols);
        let cells = g.place(1);
        let count = cells.iter().find(|c| c.text == "5 (20)").expect("cell");
        assert_eq!(count.col, 1);
        let label = cells
            .iter()
            .find(|c| c.text == "Somewhat easy")
            .expect("cell");
        assert_eq!(label.col, 0);
        // A column only a few rows fill is kept.
        let lines = laid_out(&[
            &[(50.0, "Age"), (200.0, "1"), (300.0, "2")],
            &[(50.0, "Sex"), (200.0, "3"), (250.0, "a"), (300.0, "4")],
            &[(50.0, "BMI"), (200.0, "5"), (300.0, "6")],
            &[(50.0, "Weight"), (200.0, "7"), (300.0, "8")],
        ]);
        assert_eq!(Grid::new(&lines).cols.len(), 4);
    }

    #[test]
    fn lines_centred_over_two_columns_do_not_merge_them() {
        // Pairs of columns (No / Yes) under a heading spanning both, and a
        // row whose one value spans both: centred over the gap between
        // them, they span the columns, they do not bridge them.
        let lines = laid_out(&[
            &[(213.75, "Group A")],
            &[(50.0, "Label one"), (200.0, "45.5"), (240.0, "14.7")],
            &[(50.0, "Label two"), (200.0, "11.0"), (240.0, "38.8")],
            &[(50.0, "Label three"), (193.75, "0.9450 (0.0178)")],
            &[(50.0, "Label four"), (193.75, "0.8389 (0.0356)")],
            &[(200.0, "33.1"), (240.0, "33.9")],
        ]);
        let g = Grid::new(&lines);
        assert_eq!(g.cols.len(), 3, "{:?}", g.cols);
    }

    #[test]
    fn a_body_line_across_columns_is_split_by_word() {
        let mut lines = simple();
        // "Height  170  171" came out of the page as one line.
        let mut words = line(50.0, 170.0, "Height 170 171").words;
        for (w, x) in words.iter_mut().skip(1).zip([200.0, 300.0]) {
            w.x0 = x;
            w.x1 = x + 15.0;
        }
        lines.push(Line::new(words));
        let g = Grid::new(&lines);
        let cells = g.place(1);
        let last: Vec<(u32, &str)> = cells
            .iter()
            .filter(|c| c.row == 5)
            .map(|c| (c.col, c.text.as_str()))
            .collect();
        assert_eq!(last, vec![(0, "Height"), (1, "170"), (2, "171")]);
    }

    #[test]
    fn a_stub_column_no_row_fills_is_still_a_column() {
        // Labels wrapped onto two lines, each value set between them (on no
        // label line's baseline): no row holds a label and values.
        let mut lines = laid_out(&[
            &[(200.0, "3 h group"), (300.0, "20 h group"), (400.0, "P")],
            &[(50.0, "Oocytes obtained,")],
            &[(50.0, "(n)")],
            &[(50.0, "Metaphase II")],
            &[(50.0, "oocytes, n (%)")],
        ]);
        for (y, v) in [
            (121.0, ["1139", "1136", "0.06"]),
            (149.0, ["1066", "1040", "0.20"]),
        ] {
            for (x, t) in [200.0, 300.0, 400.0].into_iter().zip(v) {
                lines.push(line(x, y, t));
            }
        }
        let g = Grid::new(&lines);
        assert_eq!(g.cols.len(), 4, "{:?}", g.cols);
        assert!(g.cols[0].1 < 200.0);
        // Group labels left of indented ones, some reaching into them: the
        // labels are one column.
        let lines = laid_out(&[
            &[(200.0, "Drug"), (300.0, "Placebo")],
            &[(50.0, "Sex")],
            &[(70.0, "Men"), (200.0, "31"), (300.0, "27")],
            &[(70.0, "Women"), (200.0, "22"), (300.0, "26")],
            &[(50.0, "Karnofsky performance")],
            &[(70.0, "100"), (200.0, "19"), (300.0, "17")],
            &[(70.0, "90"), (200.0, "14"), (300.0, "20")],
        ]);
        assert_eq!(Grid::new(&lines).cols.len(), 3);
    }

    #[test]
    fn indent_levels_group_near_offsets_and_keep_half_em_steps_apart() {
        let levels = |d: &[f32]| -> Vec<u32> {
            let o: Vec<(usize, f32)> = d.iter().copied().enumerate().collect();
            indent_levels(&o).into_iter().map(|x| x.1).collect()
        };
        // Siblings 0.67 and 0.72 em in are one level.
        assert_eq!(levels(&[0.0, 0.72, 0.72, 0.67, 0.0]), vec![0, 1, 1, 1, 0]);
        // Half-em steps are levels of their own.
        assert_eq!(levels(&[0.0, 0.5, 1.0, 1.05, 0.5]), vec![0, 1, 2, 2, 1]);
        // A glyph's side bearing is no indent.
        assert_eq!(levels(&[0.0, 0.08, 2.0]), vec![0, 0, 1]);
    }

    #[test]
    fn a_heading_centred_across_the_table_is_at_the_top_level() {
        // The stub runs 50-195, the table 50-382.5; the heading (275 wide)
        // is centred on it, starting inside the stub column.
        let lines = laid_out(&[
            &[(50.0, "Variable"), (250.0, "B"), (350.0, "P value")],
            &[(
                79.0,
                "Regression 1 (n = 60): dependent variable weight change",
            )],
            &[
                (50.0, "Change CR week 0 to 12 months"),
                (250.0, "-0.310"),
                (350.0, "0.002"),
            ],
            &[(60.0, "of which late"), (250.0, "0.252"), (350.0, "0.043")],
            &[(50.0, "Change EE"), (250.0, "0.016"), (350.0, "0.831")],
            // A long label crossing columns from where its siblings start.
            &[
                (60.0, "A long question whose label runs on into"),
                (350.0, "4"),
            ],
        ]);
        let cells = super::super::cells(&lines);
        let cell = |t: &str| cells.iter().find(|c| c.text.starts_with(t)).unwrap();
        assert_eq!(cell("A long question").indent, 1);
        assert_eq!(cell("Regression 1").col, 0);
        assert_eq!(cell("Regression 1").indent, 0);
        assert_eq!(cell("Change CR").indent, 0);
        assert_eq!(cell("of which late").indent, 1);
    }

    #[test]
    fn indentation_is_counted_in_levels_unless_the_stub_is_centred() {
        let lines = laid_out(&[
            &[(50.0, "Sex, n (%)"), (200.0, "1"), (300.0, "2")],
            &[(70.0, "Men"), (200.0, "3"), (300.0, "4")],
            &[(70.0, "Women"), (200.0, "5"), (300.0, "6")],
            &[(50.0, "Age, years"), (200.0, "7"), (300.0, "8")],
        ]);
        let g = Grid::new(&lines);
        let mut cells = g.place(0);
        centred_stub(&mut cells);
        let indents: Vec<u32> = cells
            .iter()
            .filter(|c| c.col == 0)
            .map(|c| c.indent)
            .collect();
        assert_eq!(indents, vec![0, 1, 1, 0]);
        // Centred labels: left edges differ, centres agree.
        let lines = laid_out(&[
            &[(70.0, "Sex"), (200.0, "1"), (300.0, "2")],
            &[(65.0, "Women"), (200.0, "3"), (300.0, "4")],
            &[(57.5, "Current smokers"), (200.0, "5"), (300.0, "6")],
            &[(70.0, "Age"), (200.0, "7"), (300.0, "8")],
        ]);
        let g = Grid::new(&lines);
        let mut cells = g.place(0);
        centred_stub(&mut cells);
        assert!(cells.iter().all(|c| c.indent == 0));
    }

    #[test]
    fn short_cells_alike_do_not_make_a_stub_of_long_labels_centred() {
        // Flush-left labels, some indented and long enough to cross into a
        // second stub column; the only one-column ones short and alike
        // ("1", "2" of "1 × 6" with the "×" lost).
        let cell = |x0: f32, x1: f32, span: u32, indent: u32| TCell {
            row: 0,
            col: 0,
            col_span: span,
            text: String::new(),
            indent,
            bold: false,
            bbox: (x0, 0.0, x1, 10.0),
        };
        let mut cells = vec![
            cell(50.0, 70.0, 1, 0),
            cell(60.0, 64.0, 1, 1),
            cell(60.0, 64.0, 1, 1),
            cell(60.0, 64.0, 1, 1),
            cell(60.0, 64.0, 1, 1),
            cell(60.0, 120.0, 2, 1),
            cell(60.0, 150.0, 2, 1),
            cell(60.0, 100.0, 2, 1),
            cell(50.0, 140.0, 2, 0),
            cell(60.0, 130.0, 2, 1),
        ];
        centred_stub(&mut cells);
        assert_eq!(cells.iter().filter(|c| c.indent == 1).count(), 8);
    }
}
