//! Stage 1, detection: where a page's tables are. Ruled tables are runs of
//! horizontal rules of one extent with aligned rows between them; unruled
//! ones are runs of rows cut into short, aligned pieces, most holding a
//! number, with header and label rows taken along.

use super::super::interp::Rule;
use super::super::layout::Line;
use super::{is_numeric_cell, is_value, same_row};

/// A region of the page: (x0, y0, x1, y1), top-down.
pub type Region = (f32, f32, f32, f32);

/// The page's lines grouped into rows (indices into `lines`), top to
/// bottom. A row of only small lines (a footnote mark raised above its
/// row's baseline) joins the row it is raised from, so it does not cut a
/// table; each row's first line is a full-size one, the rest left to right.
pub fn rows(lines: &[Line]) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        match rows.last_mut() {
            Some(r) if same_row(&lines[r[0]], l) => r.push(i),
            _ => rows.push(vec![i]),
        }
    }
    let body_size = body_size(lines);
    let mut k = 0;
    while k < rows.len() {
        let small = rows[k].iter().all(|&i| lines[i].size < 0.8 * body_size);
        if small && rows.len() > 1 {
            let y = lines[rows[k][0]].y;
            let next = rows
                .get(k + 1)
                .map(|r| (lines[r[0]].y - y, lines[r[0]].size));
            let prev = k
                .checked_sub(1)
                .map(|p| (y - lines[rows[p][0]].y, lines[rows[p][0]].size));
            if next.is_some_and(|(dy, s)| dy >= 0.0 && dy < 0.6 * s) {
                let r = rows.remove(k);
                rows[k].extend(r);
                continue;
            } else if prev.is_some_and(|(dy, s)| dy >= -0.6 * s && dy < 0.6 * s) {
                let r = rows.remove(k);
                rows[k - 1].extend(r);
                continue;
            }
        }
        k += 1;
    }
    for r in &mut rows {
        r.sort_by(|&a, &b| {
            (lines[a].size < 0.8 * body_size)
                .cmp(&(lines[b].size < 0.8 * body_size))
                .then(lines[a].x0.total_cmp(&lines[b].x0))
        });
    }
    rows
}

/// The median font size of the lines.
fn body_size(lines: &[Line]) -> f32 {
    let mut sizes: Vec<f32> = lines.iter().map(|l| l.size).collect();
    sizes.sort_by(f32::total_cmp);
    sizes[sizes.len() / 2]
}

/// Horizontal rules drawn in pieces joined into one: a border drawn cell by
/// cell (as browsers and many typesetters draw them) is segments on one
/// line, touching or a hair apart.
pub fn joined_rules(rules: &[Rule]) -> Vec<Rule> {
    let mut hr: Vec<Rule> = rules.iter().filter(|r| r.horizontal()).copied().collect();
    let mut out: Vec<Rule> = rules.iter().filter(|r| !r.horizontal()).copied().collect();
    let mid = |r: &Rule| (r.y0 + r.y1) / 2.0;
    hr.sort_by(|a, b| mid(a).total_cmp(&mid(b)).then(a.x0.total_cmp(&b.x0)));
    let flush = |line: &mut Vec<Rule>, out: &mut Vec<Rule>| {
        line.sort_by(|a, b| a.x0.total_cmp(&b.x0));
        let mut cur: Option<Rule> = None;
        for r in line.drain(..) {
            match cur.as_mut() {
                Some(c) if r.x0 <= c.x1 + 2.0 => {
                    c.x1 = c.x1.max(r.x1);
                    c.y0 = c.y0.min(r.y0);
                    c.y1 = c.y1.max(r.y1);
                }
                _ => out.extend(cur.replace(r)),
            }
        }
        out.extend(cur);
    };
    let mut line: Vec<Rule> = Vec::new();
    for r in hr {
        if line.last().is_some_and(|l| (mid(l) - mid(&r)).abs() > 1.0) {
            flush(&mut line, &mut out);
        }
        line.push(r);
    }
    flush(&mut line, &mut out);
    out
}

/// The page's table regions, ruled ones first.
pub fn regions(
    lines: &[Line],
    rows: &[Vec<usize>],
    rules: &[Rule],
    page_width: f32,
) -> Vec<Region> {
    let page = Page {
        lines,
        rows,
        page_width,
    };
    let rules = joined_rules(rules);
    let mut regions = page.ruled(&rules);
    // Unruled tables are looked for without the lines of a text column:
    // on a two-column page a table in one column shares its rows with
    // the other column's prose.
    let table_rows = without_column_prose(lines, rows, page_width);
    let page = Page {
        rows: &table_rows,
        ..page
    };
    page.unruled(&mut regions);
    regions
}

/// A two-column page's gutter: (the left column's right edge, the right
/// column's left edge), where at least four lines of prose (six words or
/// more, across a third of the page or more) end, and four start, within
/// a point and a half of each other, the first left of the second and
/// at most a tenth of the page apart.
fn column_gutter(lines: &[Line], page_width: f32) -> Option<(f32, f32)> {
    let prose: Vec<&Line> = lines
        .iter()
        .filter(|l| l.words.len() >= 6 && l.x1 - l.x0 > 0.3 * page_width)
        .collect();
    // The x most of `xs` lie within 1.5 pt of, with how many.
    let mode = |xs: Vec<f32>| -> Option<(f32, usize)> {
        xs.iter()
            .map(|&x| (x, xs.iter().filter(|&&o| (o - x).abs() < 1.5).count()))
            .max_by_key(|&(_, n)| n)
    };
    let (right, nr) = mode(
        prose
            .iter()
            .map(|l| l.x1)
            .filter(|&x| x < 0.6 * page_width)
            .collect(),
    )?;
    let (left, nl) = mode(
        prose
            .iter()
            .map(|l| l.x0)
            .filter(|&x| x > 0.4 * page_width)
            .collect(),
    )?;
    (nr >= 4 && nl >= 4 && right < left && left - right < 0.1 * page_width).then_some((right, left))
}

/// The rows with a two-column page's prose lines taken out: a line alone
/// on its side of the gutter in its row, under a third of its words mostly
/// digits, that is either a full line of the column (four words or more
/// across half its width or more, ending at the left column's edge or
/// starting at the right one's) or a paragraph's last line in the right
/// column (two words or more, from its edge, ending with a full stop).
/// Rows left empty are dropped. A page without a gutter keeps its rows.
fn without_column_prose(lines: &[Line], rows: &[Vec<usize>], page_width: f32) -> Vec<Vec<usize>> {
    let Some((right, left)) = column_gutter(lines, page_width) else {
        return rows.to_vec();
    };
    let col_width = right.min(page_width - left);
    let prose = |l: &Line| {
        let t = l.text();
        // A paragraph's last line, or a full one.
        let last = l.words.len() >= 2 && t.ends_with('.') && (l.x0 - left).abs() < 2.0;
        (last || l.words.len() >= 4 && l.x1 - l.x0 > 0.5 * col_width)
            && l.words.iter().filter(|w| is_numeric_cell(&w.text)).count() * 3 < l.words.len()
            && (((l.x1 - right).abs() < 2.0 && l.x0 < right)
                || ((l.x0 - left).abs() < 2.0 && l.x1 > left))
    };
    rows.iter()
        .map(|r| {
            r.iter()
                .copied()
                .filter(|&i| {
                    let l = &lines[i];
                    // Alone on its side of the gutter.
                    let side = |m: &Line| {
                        if l.x0 >= left - 2.0 {
                            m.x1 > right
                        } else {
                            m.x0 < left
                        }
                    };
                    let alone = r.iter().filter(|&&m| side(&lines[m])).count() == 1;
                    !(alone && prose(l))
                })
                .collect::<Vec<usize>>()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

#[derive(Clone, Copy)]
struct Page<'a> {
    lines: &'a [Line],
    rows: &'a [Vec<usize>],
    page_width: f32,
}

impl Page<'_> {
    fn row_y(&self, r: &[usize]) -> f32 {
        self.lines[r[0]].y
    }

    fn short(&self, i: usize) -> bool {
        self.lines[i].x1 - self.lines[i].x0 < 0.3 * self.page_width
    }

    /// A row cut into short pieces: three or more, or two holding a number.
    fn tabular(&self, r: &[usize]) -> bool {
        let n = r.len();
        let shorts = r.iter().filter(|&&i| self.short(i)).count();
        let nums = r
            .iter()
            .filter(|&&i| is_numeric_cell(&self.lines[i].text()))
            .count();
        (n >= 3 && shorts >= n - 1) || (n >= 2 && shorts == n && nums >= 1)
    }

    /// How many of a run's cells line up (left, right or centre) with a
    /// cell of another row of the run, of how many: justified prose split
    /// at wide spaces does not.
    fn alignment(&self, run: &[&Vec<usize>]) -> (usize, usize) {
        let lines = self.lines;
        let mut segs = 0;
        let mut aligned = 0;
        for (a, r) in run.iter().enumerate() {
            for &k in r.iter() {
                segs += 1;
                let l = &lines[k];
                let hit = run.iter().enumerate().any(|(b, r2)| {
                    b != a
                        && r2.iter().any(|&m| {
                            let o = &lines[m];
                            (o.x0 - l.x0).abs() < 2.5
                                || (o.x1 - l.x1).abs() < 2.5
                                || ((o.x0 + o.x1) - (l.x0 + l.x1)).abs() < 5.0
                        })
                });
                aligned += usize::from(hit);
            }
        }
        (aligned, segs)
    }

    /// Ruled tables: horizontal rules of the same extent with rows between.
    fn ruled(&self, rules: &[Rule]) -> Vec<Region> {
        let lines = self.lines;
        let rows = self.rows;
        let mut regions = Vec::new();
        let mut hr: Vec<&Rule> = rules
            .iter()
            .filter(|r| r.horizontal() && r.x1 - r.x0 > 0.15 * self.page_width)
            .collect();
        hr.sort_by(|a, b| a.y0.total_cmp(&b.y0));
        let mut used = vec![false; hr.len()];
        for i in 0..hr.len() {
            if used[i] {
                continue;
            }
            let (x0, x1) = (hr[i].x0, hr[i].x1);
            // A line set between the rules' ends, not beside them (text in
            // the page's other column is not between two rules).
            let under = |l: &Line| {
                let cx = (l.x0 + l.x1) / 2.0;
                cx > x0 && cx < x1
            };
            let mut group = vec![i];
            for j in i + 1..hr.len() {
                // The same extent, or inside it from one of its ends over
                // half its width: a rule under the headings of the value
                // columns only, the stub's heading cell left open.
                let (a0, a1) = (
                    (hr[j].x0 - hr[i].x0).abs() < 6.0,
                    (hr[j].x1 - hr[i].x1).abs() < 6.0,
                );
                let inner = hr[j].x0 > hr[i].x0 - 6.0
                    && hr[j].x1 < hr[i].x1 + 6.0
                    && hr[j].x1 - hr[j].x0 > 0.5 * (x1 - x0);
                if !used[j] && (a0 && a1 || inner && (a0 || a1)) {
                    let last = hr[*group.last().unwrap()];
                    let between: Vec<&Vec<usize>> = rows
                        .iter()
                        .filter(|r| self.row_y(r) > last.y0 && self.row_y(r) < hr[j].y0)
                        .collect();
                    // Stop at prose between the rules: rows holding a line
                    // of many words across a good part of the rules' width
                    // (a paragraph, or a page's two columns of text), and
                    // no value beside it (a long question or label in a
                    // table has its value in a column to its right).
                    let prose = between
                        .iter()
                        .filter(|r| {
                            let mine: Vec<&Line> =
                                r.iter().map(|&k| &lines[k]).filter(|l| under(l)).collect();
                            let all: Vec<&Line> = r.iter().map(|&k| &lines[k]).collect();
                            prose_row(&mine, &all, x1 - x0)
                        })
                        .count();
                    // A table caption between two rules starts another table
                    // (one in the page's other column, beside them, does not).
                    let caption_between = between.iter().any(|r| {
                        r.iter()
                            .any(|&k| under(&lines[k]) && starts_table_caption(&lines[k].text()))
                    });
                    // The table's notes under its closing rule ("a Abbreviation:
                    // …", "* P < 0.05") end it, whatever rule comes after them
                    // (a box round the notes, the next table's top rule).
                    let notes_between = !between.is_empty()
                        && between.iter().all(|r| {
                            let mine: Vec<&Line> =
                                r.iter().map(|&k| &lines[k]).filter(|l| under(l)).collect();
                            mine.len() == 1 && starts_note(&mine[0].text())
                        });
                    if prose > 3 || caption_between || notes_between {
                        break;
                    }
                    group.push(j);
                }
            }
            if group.len() < 2 {
                continue;
            }
            for &g in &group {
                used[g] = true;
            }
            let (mut top, mut bot) = (hr[group[0]].y0, hr[*group.last().unwrap()].y1);
            let within = |k: usize| lines[k].x0 >= x0 - 4.0 && lines[k].x1 <= x1 + 4.0;
            // Rules round the header alone (no value between them: the end
            // of a heading wrapped inside its cell, "390)" under "(n =" or
            // "94" under "N =", is none) with the body going on below the
            // last one: a table whose closing rule is in the next column or
            // on the next page.
            let band_rows: Vec<Vec<usize>> = rows
                .iter()
                .filter(|r| self.row_y(r) > top && self.row_y(r) < bot)
                .map(|r| r.iter().copied().filter(|&k| within(k)).collect::<Vec<_>>())
                .filter(|r| !r.is_empty())
                .collect();
            let band: Vec<usize> = band_rows.iter().flatten().copied().collect();
            // A number, or a group's size ("n = 29" after a group label).
            let number = |k: usize| {
                let t = lines[k].text();
                is_numeric_cell(&t) && !unbalanced(&t) && !wrapped_from_above(lines, &band, k)
            };
            // A number in a row of values: not a size, not a name with a
            // digit ("C1" over a visit's columns).
            let value = |k: usize| number(k) && is_value(&lines[k].text());
            // A few rows, none a label with a number after it: headings over
            // the columns ("Repeated measures ANOVA" over "F(2,22)").
            let labelled_value = |r: &Vec<usize>| {
                let l = &lines[r[0]];
                l.x0 <= x0 + 2.0 * l.size
                    && !is_numeric_cell(&l.text())
                    && r[1..].iter().any(|&k| number(k))
            };
            let header_only = band.iter().all(|&k| !value(k))
                || (band_rows.len() <= 5 && !band_rows.iter().any(labelled_value));
            if header_only {
                let below_rules: Vec<f32> = hr
                    .iter()
                    .filter(|r| r.x0 < x1 && r.x1 > x0 && r.y0 > bot + 1.0)
                    .map(|r| r.y0)
                    .collect();
                if let Some(b) = self.body_below(bot, x1 - x0, &within, &below_rules) {
                    bot = b;
                    // Header rows just above the first rule join (a rule
                    // under part of the header, not above it).
                    if let Some(i) = rows.iter().position(|r| self.row_y(r) > top) {
                        top = top.min(self.header_top(i, x0, x1));
                    }
                }
            } else if band_rows.first().is_some_and(labelled_value) {
                // A body row right under the first rule: the rule is under
                // the header (a style with no rule above it), whose rows
                // just above join.
                if let Some(i) = rows.iter().position(|r| self.row_y(r) > top) {
                    top = top.min(self.header_top(i, x0, x1));
                }
            }
            let inside: Vec<&Vec<usize>> = rows
                .iter()
                .filter(|r| {
                    self.row_y(r) > top && self.row_y(r) < bot + 2.0 && r.iter().any(|&k| within(k))
                })
                .collect();
            // A row of two or more cells, or one line of a row whose cells
            // are centred vertically (a one-line value between the two lines
            // of its label: rows closer than a line, side by side).
            let interleaved = |a: &Vec<usize>, b: &Vec<usize>| {
                let (la, lb) = (&lines[a[0]], &lines[b[0]]);
                (la.y - lb.y).abs() < 0.75 * la.size.min(lb.size)
                    && a.iter().all(|&i| {
                        b.iter()
                            .all(|&j| lines[i].x1 < lines[j].x0 || lines[j].x1 < lines[i].x0)
                    })
            };
            let multi = inside
                .iter()
                .enumerate()
                .filter(|(n, r)| {
                    r.iter().filter(|&&k| within(k)).count() >= 2
                        || n.checked_sub(1).is_some_and(|p| interleaved(inside[p], r))
                        || inside.get(n + 1).is_some_and(|q| interleaved(r, q))
                })
                .count();
            // A short line of text alone at the left edge (a label's wrapped
            // line, a group label) is neither.
            let left = inside
                .iter()
                .flat_map(|r| r.iter().filter(|&&k| within(k)))
                .map(|&k| lines[k].x0)
                .fold(f32::MAX, f32::min);
            let label_only = inside
                .iter()
                .filter(|r| {
                    let mut mine = r.iter().filter(|&&k| within(k));
                    match (mine.next(), mine.next()) {
                        (Some(&k), None) => label_line(&lines[k], left, 0.5 * (x1 - x0)),
                        _ => false,
                    }
                })
                .count();
            let (aligned, segs) = self.alignment(&inside);
            if inside.len() >= 2
                && multi >= 2.min(inside.len())
                && multi * 2 >= inside.len() - label_only
                && aligned * 10 >= segs * 7
            {
                regions.push((x0 - 1.0, top - 1.0, x1 + 1.0, bot + 1.0));
            }
        }
        regions
    }

    /// The bottom of the rows going on below a header band's last rule
    /// (at `from`) inside the rules' extent: rows no more than two and a
    /// half lines apart, up to a table caption, a row of prose (see
    /// [`prose_row`]) or another rule; `None` when no row holding a value
    /// follows or fewer than half of the rows taken hold one (a line alone
    /// at the rows' left edge, a label's wrapped line, is not counted).
    fn body_below(
        &self,
        from: f32,
        width: f32,
        within: &dyn Fn(usize) -> bool,
        rules: &[f32],
    ) -> Option<f32> {
        let lines = self.lines;
        let mut last = from;
        // Each row taken: its lines, whether one holds a value, and the
        // bottom of the rows so far.
        let mut taken: Vec<(Vec<&Line>, bool, f32)> = Vec::new();
        for r in self.rows.iter().filter(|r| self.row_y(r) > from) {
            let mine: Vec<&Line> = r
                .iter()
                .filter(|&&k| within(k))
                .map(|&k| &lines[k])
                .collect();
            let Some(first) = mine.first() else { continue };
            let ruled_off = rules.iter().any(|&y| y > last && y < first.top());
            let prose = prose_row(&mine, &mine, width);
            let caption = mine.iter().any(|l| starts_table_caption(&l.text()));
            if first.top() - last > 2.5 * first.size || ruled_off || prose || caption {
                break;
            }
            last = mine.iter().map(|l| l.bottom()).fold(last, f32::max);
            let valued = mine.iter().any(|l| is_numeric_cell(&l.text()));
            taken.push((mine, valued, last));
        }
        let end = taken.iter().rposition(|t| t.1)?;
        // Most rows hold a value, as an unruled table's must: lines of text
        // set in columns (a table of lists, its cells' lines not yet joined
        // into cells) are left to be found as they were. A short line alone at
        // the left edge (a label's wrapped line, a group label) says neither.
        let left = taken
            .iter()
            .flat_map(|(m, ..)| m.iter().map(|l| l.x0))
            .fold(f32::MAX, f32::min);
        let label_only = |m: &[&Line]| m.len() == 1 && label_line(m[0], left, 0.5 * width);
        let valued = taken.iter().filter(|(_, v, _)| *v).count();
        let telling = taken
            .iter()
            .filter(|(m, v, _)| *v || !label_only(m))
            .count();
        // The last row's label goes on in the lines set tight under it.
        let mut bottom = taken[end].2;
        for (m, _, b) in &taken[end + 1..] {
            if !label_only(m) || m[0].top() - bottom > 0.6 * m[0].size {
                break;
            }
            bottom = *b;
        }
        (valued * 2 >= telling).then_some(bottom)
    }

    /// Unruled tables: runs of at least three tabular rows (up to two label
    /// rows between them), aligned, most holding a number; the header rows
    /// just above join them. A run overlapping a region already found is
    /// left out; one just under an unruled table, across its columns,
    /// extends it.
    fn unruled(&self, regions: &mut Vec<Region>) {
        let lines = self.lines;
        let rows = self.rows;
        let page_width = self.page_width;
        let ruled = regions.len();
        let mut i = 0;
        while i < rows.len() {
            if !self.tabular(&rows[i]) {
                i += 1;
                continue;
            }
            let mut j = i;
            // Rows of the run that are a value's wrapped lines.
            let mut wrapped: Vec<usize> = Vec::new();
            let left = |a: usize, b: usize| {
                rows[a..=b]
                    .iter()
                    .map(|r| lines[r[0]].x0)
                    .fold(f32::MAX, f32::min)
            };
            let near = |a: usize, b: usize| {
                self.row_y(&rows[b]) - self.row_y(&rows[a]) < 3.0 * lines[rows[a][0]].size
            };
            // A label row inside the table: one or two short text cells
            // starting at (or indented a little from) the table's first
            // column, with no number ("Gender, n (%)", "Dietary intake",
            // "BMI (SD), kg/m2"). The run's second column starts where its
            // rows' second cells do; a label sits left of it (a centred
            // first column moves short labels right, so an offset from the
            // left edge says little).
            let second = |a: usize, b: usize| {
                rows[a..=b]
                    .iter()
                    .filter(|r| r.len() >= 2)
                    .map(|r| lines[r[1]].x0)
                    .fold(f32::MAX, f32::min)
            };
            let label_row = |k: usize, x: f32, x2: f32| {
                let r = &rows[k];
                r.len() <= 2
                    && r.iter()
                        .all(|&m| lines[m].x1 - lines[m].x0 < 0.5 * page_width)
                    && lines[r[0]].x0 >= x - 2.0
                    && (lines[r[0]].x0 <= x + 40.0 || lines[r[0]].x1 < x2)
                    && !is_numeric_cell(&lines[r[0]].text())
            };
            loop {
                if j + 1 < rows.len() && self.tabular(&rows[j + 1]) && near(j, j + 1) {
                    j += 1;
                    continue;
                }
                // Up to two label rows, or a value's wrapped lines (each
                // under a value cell of the row above, right of the label
                // column, that is left open: ">0.99a," over ">0.99b"),
                // between tabular rows belong to the run.
                let x = left(i, j);
                let x2 = second(i, j);
                let wrapped_value = |k: usize| {
                    rows[k].iter().all(|&m| {
                        let l = &lines[m];
                        l.x0 >= x2 - 2.0
                            && rows[k - 1][1..].iter().any(|&a| {
                                let above = &lines[a];
                                above.x0 < l.x1
                                    && l.x0 < above.x1
                                    && super::merge::left_open(&above.text())
                            })
                    })
                };
                let mut k = j + 1;
                let mut values = Vec::new();
                while k < rows.len() && k <= j + 2 && near(k - 1, k) {
                    if !label_row(k, x, x2) {
                        if !wrapped_value(k) {
                            break;
                        }
                        values.push(k);
                    }
                    k += 1;
                }
                if k > j + 1 && k < rows.len() && self.tabular(&rows[k]) && near(k - 1, k) {
                    wrapped.extend(values);
                    j = k;
                    continue;
                }
                break;
            }
            // The run's cells must line up (left, right or centre) from row
            // to row, and most rows must hold a number: justified prose
            // split at wide spaces does neither. (A value's wrapped lines
            // are checked as the cells they belong to.)
            let run: Vec<&Vec<usize>> = (i..=j)
                .filter(|k| !wrapped.contains(k))
                .map(|k| &rows[k])
                .collect();
            let (aligned, segs) = self.alignment(&run);
            let numeric_rows = run
                .iter()
                .filter(|r| r.iter().any(|&k| is_numeric_cell(&lines[k].text())))
                .count();
            // A label's wrapped line, alone at the left edge, is neither.
            let x = left(i, j);
            let label_lines = run
                .iter()
                .filter(|r| r.len() == 1 && label_line(&lines[r[0]], x, 0.3 * page_width))
                .count();
            if j >= i + 2 && aligned * 10 >= segs * 8 && numeric_rows * 2 >= run.len() - label_lines
            {
                let members = rows[i..=j].iter().flatten();
                let x0 = members
                    .clone()
                    .map(|&k| lines[k].x0)
                    .fold(f32::MAX, f32::min);
                let x1 = members
                    .clone()
                    .map(|&k| lines[k].x1)
                    .fold(f32::MIN, f32::max);
                let first = &lines[rows[i][0]];
                let bot = lines[rows[j][0]].bottom();
                // A run just under an unruled table found before it, across
                // the same columns, goes on from it: a row that is neither
                // tabular nor a label (a value's wrapped second line, alone
                // under its column) ended that one's run.
                let goes_on = regions[ruled..].iter_mut().find(|r| {
                    r.0 < x1
                        && x0 < r.2
                        && first.top() >= r.3 - 2.0
                        && first.top() - r.3 < 2.5 * first.size
                });
                if let Some(r) = goes_on {
                    r.0 = r.0.min(x0 - 1.0);
                    r.2 = r.2.max(x1 + 1.0);
                    r.3 = bot + 1.0;
                } else {
                    let top = self.header_top(i, x0, x1);
                    if !regions.iter().any(|r| overlaps(*r, (x0, top, x1, bot))) {
                        regions.push((x0 - 1.0, top - 1.0, x1 + 1.0, bot + 1.0));
                    }
                }
            }
            i = j + 1;
        }
    }

    /// The top of a run starting at row `i`, with the header and label rows
    /// just above it inside its columns (not a caption).
    fn header_top(&self, i: usize, x0: f32, x1: f32) -> f32 {
        let lines = self.lines;
        let rows = self.rows;
        let mut top = lines[rows[i][0]].top();
        let mut k = i;
        while k > 0 {
            let r = &rows[k - 1];
            let near = self.row_y(&rows[k]) - self.row_y(r) < 2.5 * lines[r[0]].size;
            // Headings of several columns set on one line ("Pradesh
            // District District", "anodal anodal measures Test χ2 value",
            // each a heading's next line) are short pieces too: cut where
            // words stand an em and a half apart or more, every piece is
            // short.
            let spread = |m: usize| {
                let ws = &lines[m].words;
                let mut start = ws.first().map_or(0.0, |w| w.x0);
                let mut pieces = 1;
                let mut short = true;
                for w in ws.windows(2) {
                    if w[1].x0 - w[0].x1 > 1.5 * w[0].size {
                        short &= w[0].x1 - start < 0.3 * self.page_width;
                        start = w[1].x0;
                        pieces += 1;
                    }
                }
                let last = ws.last().map_or(start, |w| w.x1);
                pieces >= 2 && short && last - start < 0.3 * self.page_width
            };
            // A heading may run past its column's values ("Naproxen 1000 mg"
            // over "18 (12)"): it starts inside the run and ends near it.
            let inside = r.iter().all(|&m| {
                lines[m].x0 >= x0 - 2.0
                    && lines[m].x0 < x1
                    && lines[m].x1 <= x1 + 0.1 * self.page_width
                    && (self.short(m) || spread(m))
            });
            let caption = lines[r[0]].text().to_ascii_lowercase().starts_with("table");
            // A group label set left of the run's labels ("Number of
            // patients:" over indented rows), between them and header rows
            // above it inside the run's columns, joins with those rows.
            let group_label = !inside
                && r.len() == 1
                && self.short(r[0])
                && lines[r[0]].x0 >= x0 - 3.0 * lines[r[0]].size
                && lines[r[0]].x1 < (x0 + x1) / 2.0
                && k >= 2
                && {
                    let above = &rows[k - 2];
                    self.row_y(r) - self.row_y(above) < 2.5 * lines[above[0]].size
                        && above.len() >= 2
                        && above.iter().all(|&m| {
                            lines[m].x0 >= x0 - 2.0 && lines[m].x1 <= x1 + 2.0 && self.short(m)
                        })
                };
            if !near || !(inside || group_label) || caption {
                break;
            }
            top = lines[r[0]].top();
            k -= 1;
        }
        top
    }
}

/// A row of prose among a table's rows: one of its lines (`mine`, those
/// inside the table's extent) has many words across a good part of the
/// table's `width` and is no value, and no line of the row (`all`) is a
/// value (a long question or label in a table has its value to its right).
fn prose_row(mine: &[&Line], all: &[&Line], width: f32) -> bool {
    let long = mine
        .iter()
        .any(|l| l.words.len() >= 8 && l.x1 - l.x0 > 0.4 * width && !is_numeric_cell(&l.text()));
    long && !all.iter().any(|l| is_numeric_cell(&l.text()))
}

fn overlaps(a: Region, b: Region) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Whether a line starts a table's note with its mark: a letter or note
/// symbol, then (after a space or none) a capital ("a Abbreviation: …",
/// "bData are …", "* P < 0.05", "† Adjusted for age").
pub fn starts_note(t: &str) -> bool {
    let mut cs = t.trim_start().chars();
    let (Some(m), Some(next)) = (cs.next(), cs.next()) else {
        return false;
    };
    let after = if next == ' ' { cs.next() } else { Some(next) };
    let capital = after.is_some_and(|c| c.is_uppercase());
    (m.is_ascii_lowercase() && capital)
        || ("*†‡§¶".contains(m)
            && (capital || after.is_some_and(|c| c.is_ascii_digit() || c == 'p')))
}

/// Whether a line starts a table caption ("Table 2 Baseline…", "TABLE 1.").
pub fn starts_table_caption(t: &str) -> bool {
    let t = t.trim_start();
    let Some(rest) = t.strip_prefix("Table").or_else(|| t.strip_prefix("TABLE")) else {
        return false;
    };
    let rest = rest.trim_start_matches([' ', '\u{a0}', '|']).trim_start();
    rest.chars().next().is_some_and(|c| c.is_ascii_digit())
        || (rest.starts_with('S') && rest[1..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Whether a line is a short line of text at the rows' left edge (`left`),
/// narrower than `max_width`: a label's wrapped line or a group label, set
/// alone on its row, which says neither that a row holds values nor that
/// it does not.
fn label_line(l: &Line, left: f32, max_width: f32) -> bool {
    l.x0 <= left + 2.0 * l.size && l.x1 - l.x0 < max_width && !is_numeric_cell(&l.text())
}

/// Whether a line opens more brackets than it closes or closes more than
/// it opens: a piece of a cell wrapped onto lines ("+ MTX (n =" over
/// "390)"), not a value of its own.
fn unbalanced(s: &str) -> bool {
    let count = |c: &[char]| s.chars().filter(|x| c.contains(x)).count();
    count(&['(', '[']) != count(&[')', ']'])
}

/// Whether line `k` ends a heading begun on the line just above it, in the
/// same column, among `lines[among]`: that line ends where a heading goes on
/// ("N =", "Drug (", "Placebo,").
fn wrapped_from_above(lines: &[Line], among: &[usize], k: usize) -> bool {
    let l = &lines[k];
    among.iter().any(|&m| {
        let a = &lines[m];
        let t = a.text();
        let t = t.trim_end();
        a.y < l.y
            && l.y - a.y < 1.6 * l.size
            && a.x0 < l.x1
            && l.x0 < a.x1
            && (t.ends_with(['=', '(', ',', ':']) || unbalanced(t))
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;

    /// A horizontal rule from x0 to x1 at y, half a point thick.
    fn hrule(x0: f32, x1: f32, y: f32) -> Rule {
        Rule {
            x0,
            y0: y,
            x1,
            y1: y + 0.5,
        }
    }

    /// Rows of a label at `x[0]` and two values at `x[1]` and `x[2]`, the
    /// first at baseline `y0`, `pitch` apart.
    fn labelled_rows(
        labels: &[&str],
        x: [f32; 3],
        values: [&str; 2],
        y0: f32,
        pitch: f32,
    ) -> Vec<Line> {
        labels
            .iter()
            .enumerate()
            .flat_map(|(k, label)| {
                let y = y0 + pitch * k as f32;
                [
                    line(x[0], y, label),
                    line(x[1], y, values[0]),
                    line(x[2], y, values[1]),
                ]
            })
            .collect()
    }

    fn found(lines: &[Line], rules: &[Rule]) -> Vec<Region> {
        let rows = rows(lines);
        regions(lines, &rows, rules, 600.0)
    }

    #[test]
    fn aligned_rows_of_numbers_are_a_table_with_their_header_row() {
        let lines = simple();
        let r = found(&lines, &[]);
        assert_eq!(r.len(), 1);
        // The header row above the first numeric row is inside.
        assert!(r[0].1 < lines[0].top());
    }

    #[test]
    fn headings_set_on_one_line_wider_than_a_short_piece_join_the_header() {
        // The second lines of three headings came out as one line wider
        // than a short piece; the headings stand four ems apart, the words
        // of one a word space.
        let mut lines = laid_out(&[
            &[
                (50.0, "Indicators"),
                (150.0, "India"),
                (250.0, "Madhya"),
                (350.0, "Dhar"),
                (450.0, "Khargone"),
            ],
            &[],
            &[
                (50.0, "Total population"),
                (150.0, "1,210"),
                (250.0, "72,626"),
                (350.0, "2,185"),
                (450.0, "1,873"),
            ],
            &[
                (50.0, "Rural population"),
                (150.0, "833"),
                (250.0, "52,557"),
                (350.0, "1,772"),
                (450.0, "1,574"),
            ],
            &[
                (50.0, "Percent rural"),
                (150.0, "68.80"),
                (250.0, "72.40"),
                (350.0, "81.10"),
                (450.0, "84.00"),
            ],
        ]);
        let words: Vec<_> = [(250.0, "Pradesh"), (350.0, "District"), (450.0, "Test χ2")]
            .iter()
            .flat_map(|(x, t)| line(*x, 114.0, t).words)
            .collect();
        lines.push(Line::new(words));
        lines.sort_by(|a, b| a.y.total_cmp(&b.y));
        let r = found(&lines, &[]);
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].1 < 92.0, "the headings join: {r:?}");
    }

    #[test]
    fn a_group_label_left_of_indented_rows_joins_them_to_the_header_above() {
        // Header rows over the value columns, "n (%)", a group label at the
        // margin, then rows indented under it.
        let lines = laid_out(&[
            &[(200.0, "Drug"), (300.0, "Placebo")],
            &[(200.0, "(N = 35)"), (300.0, "(N = 36)")],
            &[(200.0, "n (%)"), (300.0, "n (%)")],
            &[(40.0, "Number of patients:")],
            &[
                (55.0, "With any event"),
                (200.0, "5 (14.3)"),
                (300.0, "7 (19.4)"),
            ],
            &[
                (55.0, "With a serious event"),
                (200.0, "1 (2.9)"),
                (300.0, "2 (5.6)"),
            ],
            &[
                (55.0, "Discontinued"),
                (200.0, "3 (8.6)"),
                (300.0, "1 (2.8)"),
            ],
        ]);
        let regions = found(&lines, &[]);
        assert_eq!(regions.len(), 1, "{regions:?}");
        assert!(regions[0].1 < 100.0, "the header rows join: {regions:?}");
    }

    #[test]
    fn justified_prose_split_at_wide_spaces_is_no_table() {
        let lines = laid_out(&[
            &[
                (50.0, "The trial enrolled"),
                (160.0, "patients who were"),
                (290.0, "followed for 12 months."),
            ],
            &[
                (50.0, "Outcomes"),
                (125.0, "were assessed by blinded"),
                (300.0, "raters at 3, 6 and 9 months"),
            ],
            &[
                (50.0, "and the primary"),
                (150.0, "outcome was the change"),
                (320.0, "in score from 0."),
            ],
        ]);
        assert!(found(&lines, &[]).is_empty());
    }

    #[test]
    fn two_rows_are_too_few_for_an_unruled_table_but_enough_between_rules() {
        let lines = laid_out(&[
            &[(50.0, "Age"), (200.0, "34.1"), (300.0, "35.2")],
            &[(50.0, "Women"), (200.0, "12"), (300.0, "14")],
        ]);
        assert!(found(&lines, &[]).is_empty());
        let rule = |y: f32| hrule(45.0, 350.0, y);
        assert_eq!(found(&lines, &[rule(85.0), rule(120.0)]).len(), 1);
    }

    #[test]
    fn a_tables_notes_under_its_closing_rule_are_not_its_rows() {
        // Rows between rules every row (shaded rows' edges), the notes under
        // the closing rule, then the next table's top rule below them.
        let lines = laid_out(&[
            &[(50.0, "Method"), (200.0, "Right"), (300.0, "Left")],
            &[(50.0, "Severe"), (200.0, "28 (34.6)"), (300.0, "35 (43.2)")],
            &[(50.0, "Mild"), (200.0, "6 (7.4)"), (300.0, "3 (3.7)")],
            &[(50.0, "Normal"), (200.0, "43 (52.4)"), (300.0, "35 (42.7)")],
            &[(50.0, "a Abbreviation: IVP, intravenous pyelography")],
            &[(50.0, "b Data are presented as No. (%).")],
        ]);
        let rule = |y: f32| hrule(45.0, 350.0, y);
        // Rows sit at y = 100, 114, ...; a rule above each row and under the last.
        let rules: Vec<Rule> = [88.0, 103.0, 117.0, 131.0, 145.0, 175.0]
            .into_iter()
            .map(rule)
            .collect();
        let r = found(&lines, &rules);
        assert_eq!(r.len(), 1, "{r:?}");
        // The region ends at the closing rule, above the first note (y 156).
        assert!(r[0].3 < 150.0, "{r:?}");
        assert!(
            starts_note("a Abbreviation: IVP")
                && starts_note("bData are")
                && starts_note("* P < 0.05")
        );
        assert!(!starts_note("Age, years") && !starts_note("a 12") && !starts_note("men"));
    }

    #[test]
    fn a_ruled_header_whose_closing_rule_is_elsewhere_takes_the_body_below() {
        // A header row over rules, the body under them with no closing rule
        // (it is in the next column or on the next page); then prose.
        let mut rows: Vec<&[(f32, &str)]> = vec![
            &[(50.0, "Indicators"), (200.0, "India"), (300.0, "District")],
            &[(200.0, "N"), (300.0, "N")],
            &[
                (50.0, "Total population"),
                (200.0, "1,210"),
                (300.0, "2,185"),
            ],
            &[(50.0, "Rural population"), (200.0, "833"), (300.0, "1,772")],
            &[(50.0, "Percent rural"), (200.0, "68.80"), (300.0, "81.10")],
        ];
        let prose: &[(f32, &str)] = &[(
            50.0,
            "The intervention led to modest increases in the availability of latrines",
        )];
        rows.push(prose);
        let lines = laid_out(&rows);
        // Rules above and below the second header row only.
        let rule = |y: f32| hrule(45.0, 350.0, y);
        let got = found(&lines, &[rule(105.0), rule(117.0)]);
        assert_eq!(got.len(), 1, "{got:?}");
        let (_, top, _, bot) = got[0];
        assert!(
            top < 92.0,
            "the header row above the first rule joins: {top}"
        );
        assert!(
            bot > 155.0 && bot < 166.0,
            "the body to its last row, not the prose: {bot}"
        );
        // Below a header band, text lines in columns with few values are
        // not taken as its body.
        let lines = laid_out(&[
            &[(50.0, "Module"), (200.0, "Title"), (300.0, "Skills")],
            &[
                (50.0, "1"),
                (200.0, "Ditch the diets"),
                (300.0, "Giving self"),
            ],
            &[(200.0, "and the rest"), (300.0, "permission to eat")],
            &[(200.0, "of the title"), (300.0, "a wide range")],
        ]);
        let got = found(&lines, &[rule(91.0), rule(103.0)]);
        assert!(got.iter().all(|r| r.3 < 110.0), "{got:?}");
    }

    #[test]
    fn a_header_band_closed_by_a_rule_under_the_value_columns_takes_the_body_below() {
        // A rule over the whole table, one under the headings of the value
        // columns only (the stub's heading cell is empty), no closing rule
        // (the table goes on over the page). The band holds visits' names
        // ("C1") and group sizes, no values.
        let lines = laid_out(&[
            &[(200.0, "C1"), (300.0, "C2")],
            &[(200.0, "(n = 44)"), (300.0, "(n = 43)")],
            &[(50.0, "Total symptoms"), (200.0, "4.9"), (300.0, "5.1")],
            &[(50.0, "Parabasal"), (200.0, "72.3%"), (300.0, "64.6%")],
            &[(50.0, "Intermediate"), (200.0, "26.8%"), (300.0, "33.9%")],
            &[(50.0, "Superficial"), (200.0, "0.9%"), (300.0, "1.4%")],
        ]);
        let got = found(
            &lines,
            &[hrule(45.0, 350.0, 89.0), hrule(195.0, 350.0, 117.0)],
        );
        assert_eq!(got.len(), 1, "{got:?}");
        let (_, top, _, bot) = got[0];
        assert!(top < 90.0, "{top}");
        assert!(bot > 166.0, "the body below the band: {bot}");
    }

    #[test]
    fn a_rule_under_the_header_alone_keeps_the_header_above_it() {
        // No rule above the header: one under it, one closing the table.
        let lines = laid_out(&[
            &[(
                50.0,
                "Table 1. Baseline characteristics of the trial's participants",
            )],
            &[
                (50.0, "Variable"),
                (200.0, "Control (n = 64)"),
                (300.0, "Drug (n = 59)"),
            ],
            &[
                (50.0, "Mean age, years (SD)"),
                (200.0, "62 (11)"),
                (300.0, "63 (9)"),
            ],
            &[(50.0, "Male, %"), (200.0, "41"), (300.0, "58")],
            &[(50.0, "Diabetes, %"), (200.0, "52"), (300.0, "59")],
        ]);
        let rule = |y: f32| hrule(45.0, 380.0, y);
        let got = found(&lines, &[rule(118.0), rule(160.0)]);
        assert_eq!(got.len(), 1, "{got:?}");
        let (_, top, _, _) = got[0];
        assert!(top < lines[1].top() && top > lines[0].y, "{got:?}");
    }

    #[test]
    fn labels_wrapped_onto_lines_of_their_own_do_not_stop_the_body_below_a_header_band() {
        // The header between rules, its closing rule in the next column;
        // each label wraps onto one or two lines under its values.
        let rows: Vec<&[(f32, &str)]> = vec![
            &[(50.0, "Indicators"), (200.0, "India"), (300.0, "District")],
            &[
                (50.0, "Percent 0-6 years"),
                (200.0, "14.60"),
                (300.0, "16.90"),
            ],
            &[(50.0, "children (of rural")],
            &[(50.0, "population)")],
            &[
                (50.0, "Percent SCST (of"),
                (200.0, "29.70"),
                (300.0, "70.60"),
            ],
            &[(50.0, "rural population)")],
            &[
                (50.0, "Percent literates"),
                (200.0, "67.80"),
                (300.0, "54.10"),
            ],
            &[(50.0, "(of >6 years rural")],
            &[(50.0, "population)")],
            &[(
                50.0,
                "The intervention led to modest increases in the availability of latrines",
            )],
        ];
        let lines = laid_out(&rows);
        let rule = |y: f32| hrule(45.0, 350.0, y);
        let got = found(&lines, &[rule(91.0), rule(103.0)]);
        assert_eq!(got.len(), 1, "{got:?}");
        let (_, top, _, bot) = got[0];
        assert!(top < 92.0, "{got:?}");
        assert!(
            bot > 212.0 && bot < 222.0,
            "the body to its last label line, not the prose: {bot}"
        );
    }

    #[test]
    fn the_end_of_a_wrapped_heading_is_no_value_in_a_header_band() {
        // Headings wrapped onto three lines between the rules, the last
        // ending "393)"; the closing rule on the next page.
        let lines = laid_out(&[
            &[(200.0, "CZP + MTX"), (300.0, "PBO + MTX")],
            &[(200.0, "(n ="), (300.0, "(n =")],
            &[(200.0, "393)"), (300.0, "199)")],
            &[
                (50.0, "Mean score"),
                (200.0, "36.1 (8.9)"),
                (300.0, "30.7 (7.1)"),
            ],
            &[
                (50.0, "Mean change"),
                (200.0, "5.8 (0.5)"),
                (300.0, "0.7 (0.6)"),
            ],
            &[(50.0, "% MCID"), (200.0, "38.2"), (300.0, "21.4")],
        ]);
        let rule = |y: f32| hrule(45.0, 350.0, y);
        let got = found(&lines, &[rule(91.0), rule(131.0)]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].3 > 165.0, "the body below is the table's: {got:?}");
        assert!(unbalanced("390)") && unbalanced("MTX (n =") && !unbalanced("36.1 (8.9)"));
        // The same with "94" under "SD48W, N =": balanced, but the line
        // above it is left open.
        let lines = laid_out(&[
            &[(200.0, "SD48W, N ="), (300.0, "SD24W, N =")],
            &[(200.0, "94"), (300.0, "93")],
            &[(50.0, "Mean age"), (200.0, "56 (12)"), (300.0, "56 (13)")],
            &[(50.0, "Male sex"), (200.0, "51 (54)"), (300.0, "52 (56)")],
            &[(50.0, "Mean BMI"), (200.0, "26.7"), (300.0, "26.3")],
        ]);
        let got = found(&lines, &[rule(91.0), rule(117.0)]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].3 > 151.0, "the body below is the table's: {got:?}");
    }

    #[test]
    fn a_value_left_open_and_wrapped_does_not_end_an_unruled_run() {
        // ">0.99a," goes on under itself: the rows after it are the same
        // table, not a table of their own under a two-row one.
        let lines = laid_out(&[
            &[(200.0, "Placebo"), (300.0, "Drug"), (400.0, "P value")],
            &[
                (50.0, "Redness"),
                (200.0, "1"),
                (300.0, "1"),
                (400.0, ">0.99a,"),
            ],
            &[(400.0, ">0.99b")],
            &[
                (50.0, "Pain"),
                (200.0, "1"),
                (300.0, "0"),
                (400.0, ">0.99a,"),
            ],
            &[(400.0, ">0.99b")],
            &[
                (50.0, "Edema"),
                (200.0, "0"),
                (300.0, "2"),
                (400.0, "0.162"),
            ],
            &[(50.0, "Anemia"), (200.0, "0"), (300.0, "0"), (400.0, "-")],
            &[(50.0, "Headache"), (200.0, "0"), (300.0, "0"), (400.0, "-")],
        ]);
        let got = found(&lines, &[]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].1 < 92.0 && got[0].3 > 195.0, "{got:?}");
    }

    #[test]
    fn a_statistic_s_name_in_a_header_band_is_no_value() {
        // "F(2,22)" under "ANOVA": a heading, though it reads as a number;
        // no row of the band is a label with values after it.
        let lines = laid_out(&[
            &[(200.0, "Sham"), (300.0, "Repeated"), (400.0, "p")],
            &[(300.0, "ANOVA"), (400.0, "value")],
            &[(300.0, "F(2,22)")],
            &[
                (50.0, "Span"),
                (200.0, "4.8 (0.9)"),
                (300.0, "0.12"),
                (400.0, "0.01"),
            ],
            &[
                (50.0, "Digits"),
                (200.0, "5.3 (1.5)"),
                (300.0, "0.31"),
                (400.0, "0.89"),
            ],
            &[
                (50.0, "Accuracy"),
                (200.0, "62.4%"),
                (300.0, "3.17"),
                (400.0, "0.20"),
            ],
        ]);
        let rule = |y: f32| hrule(45.0, 450.0, y);
        let got = found(&lines, &[rule(91.0), rule(131.0)]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].3 > 165.0, "the body below is the table's: {got:?}");
        // A band holding a labelled row of values is a table of its own.
        let got = found(&lines, &[rule(91.0), rule(145.0)]);
        assert!(got.iter().all(|r| r.3 < 150.0), "{got:?}");
    }

    #[test]
    fn an_unruled_table_whose_labels_wrap_onto_two_more_lines_is_a_table() {
        let row = |label: &'static str, a: &'static str| -> Vec<(f32, &'static str)> {
            vec![
                (50.0, label),
                (200.0, a),
                (300.0, "62.9 (21.5)"),
                (400.0, "0.9"),
            ]
        };
        let (r1, r2, r3, r4) = (
            row("Explained correct", "60.6 (21.2)"),
            row("Told not to give", "41.3 (23.3)"),
            row("Told to return to", "34.1 (20.5)"),
            row("Told about possible", "2.8 (5.1)"),
        );
        let lines = laid_out(&[
            &[(200.0, "Control"), (300.0, "Intervention"), (400.0, "P")],
            &r1,
            &[(50.0, "dose regimen")],
            &[(50.0, "and its timing")],
            &r2,
            &[(50.0, "drug to anyone else")],
            &[(50.0, "or save for later")],
            &r3,
            &[(50.0, "ADDO or go to a")],
            &[(50.0, "health facility")],
            &r4,
        ]);
        let got = found(&lines, &[]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].1 < 92.0 && got[0].3 > 235.0, "{got:?}");
    }

    #[test]
    fn a_heading_wider_than_its_columns_values_is_in_the_header() {
        // "Naproxen 1000 mg" runs past the values under it ("18 (12)"); the
        // rows above it in the table's columns are its header.
        let lines = laid_out(&[
            &[(200.0, "Placebo"), (300.0, "Naproxen 1000 mg")],
            &[(50.0, "Women"), (200.0, "82"), (300.0, "82")],
            &[(50.0, "Age"), (200.0, "52 (12)"), (300.0, "52 (12)")],
            &[(50.0, "Joints"), (200.0, "19 (12)"), (300.0, "18 (12)")],
        ]);
        let got = found(&lines, &[]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].1 < lines[0].top(), "{got:?}");
    }

    #[test]
    fn a_wrapped_value_line_does_not_end_an_unruled_table() {
        let lines = laid_out(&[
            &[(200.0, "Placebo"), (300.0, "Drug"), (400.0, "P")],
            &[
                (50.0, "Age"),
                (200.0, "46.9"),
                (300.0, "45.1"),
                (400.0, "0.74"),
            ],
            &[
                (50.0, "Men/women"),
                (200.0, "14/9"),
                (300.0, "12/9"),
                (400.0, "0.95"),
            ],
            &[(200.0, "(60.9/39.1)")],
            &[
                (50.0, "Duration"),
                (200.0, "9.1"),
                (300.0, "6.0"),
                (400.0, "0.49"),
            ],
            &[
                (50.0, "Remission"),
                (200.0, "21"),
                (300.0, "11"),
                (400.0, "0.01"),
            ],
            &[
                (50.0, "Smoking"),
                (200.0, "3"),
                (300.0, "3"),
                (400.0, "0.72"),
            ],
        ]);
        let got = found(&lines, &[]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].1 < 92.0 && got[0].3 > 180.0, "{got:?}");
    }

    #[test]
    fn rows_of_centred_cells_between_rules_are_a_table() {
        // Each label on two lines with its values centred between them:
        // most rows hold one line, but each is half a line from the next.
        let mut lines = Vec::new();
        for (k, label) in ["Drug-related adverse", "Serious adverse", "Stopped for an"]
            .iter()
            .enumerate()
        {
            let y = 100.0 + 24.0 * k as f32;
            lines.push(line(50.0, y, label));
            lines.push(line(200.0, y + 5.0, "55 (15.4)"));
            lines.push(line(300.0, y + 5.0, "82 (23.2)"));
            lines.push(line(50.0, y + 10.0, "event"));
        }
        let rule = |y: f32| hrule(45.0, 400.0, y);
        assert_eq!(found(&lines, &[rule(85.0), rule(170.0)]).len(), 1);
    }

    #[test]
    fn a_border_drawn_cell_by_cell_is_one_rule() {
        let seg = hrule;
        let rules = [
            seg(100.0, 200.0, 50.0),
            seg(200.0, 300.0, 50.2),
            seg(301.0, 400.0, 50.0),
            seg(100.0, 200.0, 80.0),
            seg(250.0, 300.0, 80.0),
        ];
        let j = joined_rules(&rules);
        assert_eq!(j.len(), 3);
        assert!(j.iter().any(|r| r.x0 == 100.0 && r.x1 == 400.0));
        let lines = simple();
        let rules = [
            seg(45.0, 200.0, 85.0),
            seg(200.0, 430.0, 85.0),
            seg(45.0, 430.0, 160.0),
        ];
        assert_eq!(found(&lines, &rules).len(), 1);
    }

    #[test]
    fn a_raised_footnote_mark_joins_its_row() {
        let mut lines = simple();
        let mut mark = line(222.0, 97.0 + 14.0, "a");
        mark.size = 6.0;
        lines.push(mark);
        lines.sort_by(|a, b| a.y.total_cmp(&b.y));
        let r = rows(&lines);
        assert_eq!(r.len(), 5);
        // The full-size line leads its row.
        assert!(r.iter().all(|r| lines[r[0]].size == 10.0));
    }

    #[test]
    fn prose_in_the_column_beside_a_ruled_table_does_not_end_it() {
        // Table rows 28 pt apart, the other column's lines 7 pt apart (a
        // smaller type), most on baselines of their own.
        let mut lines = vec![line(120.0, 100.0, "Drug"), line(180.0, 100.0, "Placebo")];
        lines.extend(labelled_rows(
            &["Age", "Women", "Weight", "Smokers"],
            [50.0, 120.0, 180.0],
            ["34.1", "35.2"],
            128.0,
            28.0,
        ));
        for k in 0..16 {
            lines.push(line(
                307.0,
                117.0 + 7.0 * k as f32,
                "and the trial went on for a year or so",
            ));
        }
        lines.sort_by(|a, b| a.y.total_cmp(&b.y));
        let rule = |y: f32| hrule(45.0, 230.0, y);
        let r = found(&lines, &[rule(85.0), rule(108.0), rule(220.0)]);
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].2 < 300.0, "{r:?}");
    }

    #[test]
    fn a_caption_in_the_other_column_does_not_end_a_ruled_table() {
        // Two ruled tables side by side on a two-column page, the right
        // one starting higher: the left one's caption lies between the
        // right one's rules, in the other column.
        let mut lines = vec![line(420.0, 100.0, "Drug"), line(480.0, 100.0, "Placebo")];
        lines.extend(labelled_rows(
            &["Age", "Women", "Weight", "Smokers", "BMI", "Height"],
            [310.0, 420.0, 480.0],
            ["34.1", "35.2"],
            114.0,
            14.0,
        ));
        lines.push(line(50.0, 130.0, "Table 1 Outcomes of the two groups"));
        lines.push(line(120.0, 150.0, "Drug"));
        lines.push(line(180.0, 150.0, "Placebo"));
        lines.extend(labelled_rows(
            &["Pain", "Sleep"],
            [50.0, 120.0, 180.0],
            ["2.1", "2.5"],
            170.0,
            14.0,
        ));
        lines.sort_by(|a, b| a.y.total_cmp(&b.y));
        let rules = [
            hrule(305.0, 540.0, 88.0),
            hrule(305.0, 540.0, 104.0),
            hrule(305.0, 540.0, 200.0),
            hrule(45.0, 230.0, 140.0),
            hrule(45.0, 230.0, 155.0),
            hrule(45.0, 230.0, 200.0),
        ];
        let r = found(&lines, &rules);
        assert_eq!(r.len(), 2, "{r:?}");
        assert!(r.iter().any(|r| r.0 > 300.0 && r.1 < 90.0), "{r:?}");
    }

    #[test]
    fn an_unruled_table_in_one_column_leaves_the_other_columns_prose() {
        // A two-column page: prose in both columns, then an unruled table
        // in the left one whose rows share baselines with the right
        // column's prose.
        let text = "and the trial went on for a year or so until it ended";
        let mut lines = Vec::new();
        for k in 0..5 {
            lines.push(line(50.0, 40.0 + 12.0 * k as f32, text));
        }
        let right_edge = lines[0].x1;
        let gutter = right_edge + 15.0;
        for k in 0..14 {
            lines.push(line(gutter, 40.0 + 12.0 * k as f32, text));
        }
        lines.push(line(gutter, 40.0 + 12.0 * 14.0, "the end of it."));
        lines.extend(labelled_rows(
            &["Age", "Women", "Weight", "Smokers", "BMI"],
            [50.0, 150.0, 220.0],
            ["34.1", "35.2"],
            112.0,
            12.0,
        ));
        lines.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.x0.total_cmp(&b.x0)));
        assert_eq!(
            column_gutter(&lines, 600.0).map(|(a, b)| (a.round(), b.round())),
            Some((right_edge.round(), gutter.round()))
        );
        let r = found(&lines, &[]);
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].0 < 51.0 && r[0].2 < gutter, "{r:?}");
    }

    #[test]
    fn table_captions_are_recognised() {
        assert!(starts_table_caption("Table 2 Baseline"));
        assert!(starts_table_caption("TABLE 1."));
        assert!(starts_table_caption("Table S3 Outcomes"));
        assert!(!starts_table_caption("Tables were drawn"));
        assert!(!starts_table_caption("Table of contents"));
    }
}
