//! Layout: glyphs → words → lines → blocks, tables found from aligned text
//! and ruling lines, and blocks put in reading order by recursive XY cuts
//! (columns read in turn, full-width parts in between).

use super::interp::{Glyph, PageContent, Rule};

/// A word: glyphs on one baseline with no gap between them.
#[derive(Debug, Clone)]
pub struct Word {
    /// Its text.
    pub text: String,
    /// Left.
    pub x0: f32,
    /// Right.
    pub x1: f32,
    /// Baseline (from the top).
    pub y: f32,
    /// Font size.
    pub size: f32,
    /// Bold.
    pub bold: bool,
}

impl Word {
    fn top(&self) -> f32 {
        self.y - 0.75 * self.size
    }
    fn bottom(&self) -> f32 {
        self.y + 0.22 * self.size
    }
}

/// A line: words on one baseline, with no column-sized gap between them.
#[derive(Debug, Clone)]
pub struct Line {
    /// Words, left to right.
    pub words: Vec<Word>,
    /// Left.
    pub x0: f32,
    /// Right.
    pub x1: f32,
    /// Baseline of its main words.
    pub y: f32,
    /// Main font size.
    pub size: f32,
    /// Most of its characters are bold.
    pub bold: bool,
}

impl Line {
    fn new(words: Vec<Word>) -> Line {
        let x0 = words.iter().map(|w| w.x0).fold(f32::MAX, f32::min);
        let x1 = words.iter().map(|w| w.x1).fold(f32::MIN, f32::max);
        // The main baseline and size are those of the longest words (so a
        // superscript does not move the line).
        let main = words
            .iter()
            .max_by(|a, b| {
                (a.text.len() as f32 * a.size).total_cmp(&(b.text.len() as f32 * b.size))
            })
            .unwrap();
        let (y, size) = (main.y, main.size);
        let n: usize = words.iter().map(|w| w.text.chars().count()).sum();
        let nb: usize = words
            .iter()
            .filter(|w| w.bold)
            .map(|w| w.text.chars().count())
            .sum();
        Line {
            bold: nb * 3 >= n * 2 && n > 0,
            words,
            x0,
            x1,
            y,
            size,
        }
    }

    /// Its text, words joined by spaces.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for w in &self.words {
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(&w.text);
        }
        s
    }

    fn top(&self) -> f32 {
        self.y - 0.75 * self.size
    }
    fn bottom(&self) -> f32 {
        self.y + 0.22 * self.size
    }
}

/// Splits glyphs into words (content order; a space or a gap ends a word).
pub fn words(page: &PageContent) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::new();
    let mut cur: Option<(Word, usize, usize)> = None; // word, chars, bold chars
    let flush = |cur: &mut Option<(Word, usize, usize)>, out: &mut Vec<Word>| {
        if let Some((mut w, n, nb)) = cur.take() {
            w.bold = nb * 2 > n;
            if !w.text.trim().is_empty() {
                w.text = w.text.trim().to_string();
                out.push(w);
            }
        }
    };
    for g in &page.glyphs {
        if !g.upright {
            flush(&mut cur, &mut out);
            continue;
        }
        if g.space || g.text.is_empty() || g.size <= 0.1 {
            flush(&mut cur, &mut out);
            continue;
        }
        let joins = cur.as_ref().is_some_and(|(w, _, _)| same_word(w, g));
        if !joins {
            flush(&mut cur, &mut out);
        }
        let n = g.text.chars().count();
        match &mut cur {
            Some((w, c, b)) => {
                w.text.push_str(&g.text);
                w.x1 = w.x1.max(g.x1);
                w.x0 = w.x0.min(g.x0);
                *c += n;
                *b += if g.bold { n } else { 0 };
            }
            None => {
                cur = Some((
                    Word {
                        text: g.text.clone(),
                        x0: g.x0,
                        x1: g.x1,
                        y: g.y,
                        size: g.size,
                        bold: g.bold,
                    },
                    n,
                    if g.bold { n } else { 0 },
                ))
            }
        }
    }
    flush(&mut cur, &mut out);
    out
}

fn same_word(w: &Word, g: &Glyph) -> bool {
    let s = w.size.max(g.size);
    let gap = g.x0 - w.x1;
    if gap > 0.1 * s || gap < -0.6 * s {
        return false;
    }
    let dy = (g.y - w.y).abs();
    // Same line and size, or a superscript / subscript set against the word.
    (dy < 0.25 * s && (g.size - w.size).abs() < 0.3 * s)
        || (dy < 0.7 * s && gap < 0.06 * s && (g.size - w.size).abs() > 0.1 * s)
}

/// Groups words into rows (shared vertical extent), then cuts each row into
/// lines at gaps wider than a column gutter.
pub fn lines(mut words: Vec<Word>) -> Vec<Line> {
    words.sort_by(|a, b| a.y.total_cmp(&b.y));
    let mut rows: Vec<Vec<Word>> = Vec::new();
    let mut extent: Vec<(f32, f32)> = Vec::new();
    for w in words {
        let (t, b) = (w.top(), w.bottom());
        let mut best: Option<(usize, f32)> = None;
        for i in (0..rows.len()).rev() {
            let (rt, rb) = extent[i];
            if rb < t - 3.0 * w.size {
                break;
            }
            let ov = b.min(rb) - t.max(rt);
            let frac = ov / (b - t).min(rb - rt).max(0.01);
            if frac > 0.5 && best.is_none_or(|(_, f)| frac > f) {
                best = Some((i, frac));
            }
        }
        match best {
            Some((i, _)) => {
                // The row keeps the extent of its first (main-sized) words.
                rows[i].push(w);
            }
            None => {
                extent.push((t, b));
                rows.push(vec![w]);
            }
        }
    }
    for row in &mut rows {
        row.sort_by(|a, b| a.x0.total_cmp(&b.x0));
    }
    // Gutters are found among the rows near each row (twenty rows), so a
    // full-width part elsewhere on the page does not hide them.
    let gutters: Vec<Vec<(f32, f32)>> = (0..rows.len())
        .map(|i| gutter_map(&rows[i.saturating_sub(10)..(i + 11).min(rows.len())]))
        .collect();
    let mut out = Vec::new();
    for (row, gutter) in rows.into_iter().zip(gutters) {
        // A gap splits the row when a page gutter runs through it, when it
        // is wide enough to be a table's column gap, or when it is clearly
        // wider than the row's own word spacing (a widely justified line
        // stays one line).
        let mut gaps: Vec<f32> = row.windows(2).map(|w| w[1].x0 - w[0].x1).collect();
        gaps.sort_by(f32::total_cmp);
        // The row's word spacing: the median gap, the widest one left out.
        gaps.pop();
        let median = gaps.get(gaps.len() / 2).copied().unwrap_or(0.0).max(0.0);
        let numeric = row
            .iter()
            .filter(|w| w.text.chars().any(|c| c.is_ascii_digit()))
            .count()
            * 3
            >= row.len();
        let mut cur: Vec<Word> = Vec::new();
        for w in row {
            if let Some(p) = cur.last() {
                let s = p.size.min(w.size);
                let gap = w.x0 - p.x1;
                let through_gutter =
                    gap >= 0.4 * s && gutter.iter().any(|&(a, b)| a < w.x0 && b > p.x1);
                if through_gutter
                    || (gap > 2.0 * s && (median < s || numeric))
                    || (gap > 0.9 * s && gap > 2.0 * median)
                {
                    out.push(Line::new(std::mem::take(&mut cur)));
                }
            }
            cur.push(w);
        }
        if !cur.is_empty() {
            out.push(Line::new(cur));
        }
    }
    out.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.x0.total_cmp(&b.x0)));
    out
}

/// Column gutters of a page: x ranges (1 pt bins) that fall between words
/// on many rows and inside a word on few (fewer than a third as many), so
/// a full-width title above two columns does not hide the gutter between
/// them, and a river of spaces in one column is never taken for one.
fn gutter_map(rows: &[Vec<Word>]) -> Vec<(f32, f32)> {
    fn bump(v: &mut [u32], a: f32, b: f32) {
        let hi = (b.max(0.0) as usize).min(v.len());
        let lo = (a.max(0.0) as usize).min(hi);
        for c in &mut v[lo..hi] {
            *c += 1;
        }
    }
    let right = rows
        .iter()
        .flatten()
        .map(|w| w.x1)
        .fold(0.0f32, f32::max)
        .clamp(0.0, 5000.0) as usize
        + 1;
    let mut covered = vec![0u32; right];
    let mut between = vec![0u32; right];
    for row in rows {
        if row.len() < 2 {
            for w in row {
                bump(&mut covered, w.x0, w.x1);
            }
            continue;
        }
        for (i, w) in row.iter().enumerate() {
            bump(&mut covered, w.x0, w.x1);
            if let Some(n) = row.get(i + 1) {
                if n.x0 - w.x1 >= 0.4 * w.size.min(n.size) {
                    bump(&mut between, w.x1.ceil(), n.x0);
                }
            }
        }
    }
    let mut out: Vec<(f32, f32)> = Vec::new();
    for x in 0..right {
        if between[x] >= 4 && covered[x] * 3 < between[x] {
            match out.last_mut() {
                Some(r) if r.1 as usize + 1 >= x => r.1 = x as f32 + 1.0,
                _ => out.push((x as f32, x as f32 + 1.0)),
            }
        }
    }
    out
}

/// A block of lines (a paragraph, heading, caption...) or a table.
#[derive(Debug, Clone)]
pub struct LBlock {
    /// Its lines, top to bottom.
    pub lines: Vec<Line>,
    /// Bounding box.
    pub x0: f32,
    /// Top.
    pub y0: f32,
    /// Right.
    pub x1: f32,
    /// Bottom.
    pub y1: f32,
    /// Table cells, when the block is a table.
    pub table: Option<Vec<TCell>>,
}

impl LBlock {
    fn from_line(l: Line) -> LBlock {
        LBlock {
            x0: l.x0,
            y0: l.top(),
            x1: l.x1,
            y1: l.bottom(),
            lines: vec![l],
            table: None,
        }
    }
    fn push(&mut self, l: Line) {
        self.x0 = self.x0.min(l.x0);
        self.x1 = self.x1.max(l.x1);
        self.y0 = self.y0.min(l.top());
        self.y1 = self.y1.max(l.bottom());
        self.lines.push(l);
    }
    /// Main font size.
    pub fn size(&self) -> f32 {
        let mut v: Vec<(f32, usize)> = self
            .lines
            .iter()
            .map(|l| (l.size, l.text().len()))
            .collect();
        v.sort_by_key(|x| std::cmp::Reverse(x.1));
        v.first().map(|x| x.0).unwrap_or(0.0)
    }
    /// Whether all its lines are bold.
    pub fn bold(&self) -> bool {
        self.lines.iter().all(|l| l.bold)
    }
}

/// Groups lines into blocks: a line joins the block above it when it is
/// the next line at the block's pitch, overlaps it horizontally and has
/// the same size and weight; a short last line or an indented first line
/// starts a new paragraph.
pub fn blocks(lines: Vec<Line>) -> Vec<LBlock> {
    let mut blocks: Vec<LBlock> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for l in lines {
        let mut best: Option<(usize, f32)> = None;
        for &bi in &open {
            let b = &blocks[bi];
            let last = b.lines.last().unwrap();
            let dy = l.y - last.y;
            let s = last.size.max(l.size);
            let pitch = if b.lines.len() >= 2 {
                b.lines[b.lines.len() - 1].y - b.lines[b.lines.len() - 2].y
            } else {
                1.25 * s
            };
            let max_dy = if b.lines.len() >= 2 {
                (pitch * 1.25).min(2.0 * s)
            } else {
                1.7 * s
            };
            if dy <= 0.3 * s || dy > max_dy {
                continue;
            }
            if (last.size - l.size).abs() > 0.06 * s || last.bold != l.bold && (l.text().len() > 3)
            {
                continue;
            }
            let ov = l.x1.min(b.x1) - l.x0.max(b.x0);
            if ov <= 0.0 {
                continue;
            }
            // Left edges roughly agree (first-line indents and centred lines aside).
            let w = (b.x1 - b.x0).max(l.x1 - l.x0);
            if (l.x0 - b.x0).abs() > 0.5 * w && (l.x1 - b.x1).abs() > 0.5 * w {
                continue;
            }
            // A short previous line closes a paragraph.
            if b.lines.len() >= 2
                && last.x1 < b.x1 - 4.0 * s
                && l.x0 <= last.x0 + s
                && !last.text().ends_with('-')
            {
                continue;
            }
            if best.is_none_or(|(_, d)| dy < d) {
                best = Some((bi, dy));
            }
        }
        match best {
            Some((bi, _)) => blocks[bi].push(l),
            None => {
                blocks.push(LBlock::from_line(l));
                open.push(blocks.len() - 1);
            }
        }
        // Blocks far above are closed.
        let y = blocks.last().map(|b| b.y1).unwrap_or(0.0);
        open.retain(|&bi| blocks[bi].y1 > y - 200.0);
    }
    blocks
}

/// Puts blocks in reading order: recursive XY cut. Where a vertical gutter
/// runs through the whole region, left is read before right; otherwise the
/// region is cut into horizontal bands, and consecutive bands that share a
/// gutter are read together (so two columns stay two columns even where
/// both happen to have a paragraph break at the same height).
pub fn order(blocks: Vec<LBlock>) -> Vec<LBlock> {
    let mut out = Vec::with_capacity(blocks.len());
    xy_cut(blocks, &mut out, 0);
    out
}

fn gutters(blocks: &[LBlock]) -> Vec<f32> {
    let mut iv: Vec<(f32, f32)> = blocks.iter().map(|b| (b.x0, b.x1)).collect();
    iv.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut cuts = Vec::new();
    let mut end = f32::MIN;
    for (i, (x0, x1)) in iv.iter().enumerate() {
        if i > 0 && *x0 - end >= 4.0 {
            cuts.push((end + x0) / 2.0);
        }
        end = end.max(*x1);
    }
    cuts
}

fn bands(mut blocks: Vec<LBlock>) -> Vec<Vec<LBlock>> {
    blocks.sort_by(|a, b| a.y0.total_cmp(&b.y0));
    let mut out: Vec<Vec<LBlock>> = Vec::new();
    let mut end = f32::MIN;
    for b in blocks {
        if b.y0 >= end - 0.5 || out.is_empty() {
            out.push(Vec::new());
        }
        end = end.max(b.y1);
        out.last_mut().unwrap().push(b);
    }
    out
}

fn xy_cut(blocks: Vec<LBlock>, out: &mut Vec<LBlock>, depth: usize) {
    if blocks.len() <= 1 || depth > 40 {
        let mut b = blocks;
        b.sort_by(|a, b| a.y0.total_cmp(&b.y0).then(a.x0.total_cmp(&b.x0)));
        out.extend(b);
        return;
    }
    let cuts = gutters(&blocks);
    if !cuts.is_empty() {
        // Cut at the widest-supported gutter: read left of it, then right.
        let x = cuts[0];
        let (left, right): (Vec<_>, Vec<_>) = blocks.into_iter().partition(|b| b.x1 <= x);
        xy_cut(left, out, depth + 1);
        xy_cut(right, out, depth + 1);
        return;
    }
    // Something spans the region. If the narrower blocks have a gutter,
    // the blocks crossing it cut the region into slabs, read top to bottom,
    // each slab read column by column.
    let (rx0, rx1) = (
        blocks.iter().map(|b| b.x0).fold(f32::MAX, f32::min),
        blocks.iter().map(|b| b.x1).fold(f32::MIN, f32::max),
    );
    let narrow: Vec<LBlock> = blocks
        .iter()
        .filter(|b| b.x1 - b.x0 < 0.6 * (rx1 - rx0))
        .cloned()
        .collect();
    if let Some(&x) = gutters(&narrow).iter().min_by(|a, b| {
        (*a - (rx0 + rx1) / 2.0)
            .abs()
            .total_cmp(&(*b - (rx0 + rx1) / 2.0).abs())
    }) {
        let (mut spanning, rest): (Vec<LBlock>, Vec<LBlock>) =
            blocks.into_iter().partition(|b| b.x0 < x && b.x1 > x);
        spanning.sort_by(|a, b| a.y0.total_cmp(&b.y0));
        let mut slabs: Vec<Vec<LBlock>> = vec![Vec::new(); spanning.len() + 1];
        for b in rest {
            let cy = (b.y0 + b.y1) / 2.0;
            let k = spanning
                .iter()
                .position(|s| cy < (s.y0 + s.y1) / 2.0)
                .unwrap_or(spanning.len());
            slabs[k].push(b);
        }
        let mut spanning = spanning.into_iter();
        for slab in slabs {
            xy_cut(slab, out, depth + 1);
            if let Some(s) = spanning.next() {
                out.push(s);
            }
        }
        return;
    }
    let bands = bands(blocks);
    if bands.len() == 1 {
        let mut b = bands.into_iter().next().unwrap();
        b.sort_by(|a, b| a.y0.total_cmp(&b.y0).then(a.x0.total_cmp(&b.x0)));
        out.extend(b);
        return;
    }
    for g in bands {
        xy_cut(g, out, depth + 1);
    }
}

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
    // Rows: lines sharing a baseline.
    let mut rows: Vec<Vec<usize>> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        match rows.last_mut() {
            Some(r) if same_row(&lines[r[0]], l) => r.push(i),
            _ => rows.push(vec![i]),
        }
    }
    // A row of only small lines (a footnote mark raised above its row's
    // baseline) joins the row it is raised from, so it does not cut a table.
    let mut sizes: Vec<f32> = lines.iter().map(|l| l.size).collect();
    sizes.sort_by(f32::total_cmp);
    let body_size = sizes[sizes.len() / 2];
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
            if let Some((dy, s)) = next.filter(|(dy, s)| *dy >= 0.0 && *dy < 0.6 * s) {
                let _ = (dy, s);
                let r = rows.remove(k);
                rows[k].extend(r);
                continue;
            } else if let Some((dy, s)) = prev.filter(|(dy, s)| *dy >= -0.6 * s && *dy < 0.6 * s) {
                let _ = (dy, s);
                let r = rows.remove(k);
                rows[k - 1].extend(r);
                continue;
            }
        }
        k += 1;
    }
    for r in &mut rows {
        // The row's first line is its baseline: a full-size one.
        r.sort_by(|&a, &b| {
            (lines[a].size < 0.8 * body_size)
                .cmp(&(lines[b].size < 0.8 * body_size))
                .then(lines[a].x0.total_cmp(&lines[b].x0))
        });
    }
    let row_y = |r: &Vec<usize>| lines[r[0]].y;
    let short = |i: usize| lines[i].x1 - lines[i].x0 < 0.3 * page_width;
    let tabular = |r: &Vec<usize>| {
        let n = r.len();
        let shorts = r.iter().filter(|&&i| short(i)).count();
        let nums = r
            .iter()
            .filter(|&&i| is_numeric_cell(&lines[i].text()))
            .count();
        (n >= 3 && shorts >= n - 1) || (n >= 2 && shorts == n && nums >= 1)
    };
    let mut regions: Vec<(f32, f32, f32, f32)> = Vec::new();
    // How many of a run's cells line up (left, right or centre) with a
    // cell of another row of the run: justified prose split at wide spaces
    // does not.
    let alignment = |run: &[&Vec<usize>]| -> (usize, usize) {
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
    };
    // 1. Ruled tables: horizontal rules of the same extent with rows between.
    let mut hr: Vec<&Rule> = rules
        .iter()
        .filter(|r| r.horizontal() && r.x1 - r.x0 > 0.15 * page_width)
        .collect();
    hr.sort_by(|a, b| a.y0.total_cmp(&b.y0));
    let mut used = vec![false; hr.len()];
    for i in 0..hr.len() {
        if used[i] {
            continue;
        }
        let mut group = vec![i];
        for j in i + 1..hr.len() {
            if !used[j] && (hr[j].x0 - hr[i].x0).abs() < 6.0 && (hr[j].x1 - hr[i].x1).abs() < 6.0 {
                let last = hr[*group.last().unwrap()];
                // Stop at a long stretch without rows between rules.
                if hr[j].y0 - last.y0 > 250.0 {
                    break;
                }
                // A table caption between two rules starts another table.
                let caption_between = rows.iter().any(|r| {
                    let y = row_y(r);
                    y > last.y0 && y < hr[j].y0 && starts_table_caption(&lines[r[0]].text())
                });
                if caption_between {
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
        let (top, bot) = (hr[group[0]].y0, hr[*group.last().unwrap()].y1);
        let (x0, x1) = (hr[i].x0, hr[i].x1);
        let inside: Vec<&Vec<usize>> = rows
            .iter()
            .filter(|r| {
                row_y(r) > top
                    && row_y(r) < bot + 2.0
                    && r.iter()
                        .any(|&k| lines[k].x0 >= x0 - 4.0 && lines[k].x1 <= x1 + 4.0)
            })
            .collect();
        let multi = inside
            .iter()
            .filter(|r| {
                r.iter()
                    .filter(|&&k| lines[k].x0 >= x0 - 4.0 && lines[k].x1 <= x1 + 4.0)
                    .count()
                    >= 2
            })
            .count();
        let (aligned, segs) = alignment(&inside);
        if inside.len() >= 2 && multi * 2 >= inside.len() && aligned * 10 >= segs * 7 {
            regions.push((x0 - 1.0, top - 1.0, x1 + 1.0, bot + 1.0));
        }
    }
    // 2. Unruled tables: runs of at least three tabular rows.
    let mut i = 0;
    while i < rows.len() {
        if !tabular(&rows[i]) {
            i += 1;
            continue;
        }
        let mut j = i;
        let left = |a: usize, b: usize| {
            rows[a..=b]
                .iter()
                .map(|r| lines[r[0]].x0)
                .fold(f32::MAX, f32::min)
        };
        let near =
            |a: usize, b: usize| row_y(&rows[b]) - row_y(&rows[a]) < 3.0 * lines[rows[a][0]].size;
        // A label row inside the table: one or two short text cells starting
        // at (or indented a little from) the table's first column, with no
        // number ("Gender, n (%)", "Dietary intake", "BMI (SD), kg/m2").
        // The run's second column starts where its rows' second cells do;
        // a label sits left of it (a centred first column moves short
        // labels right, so an offset from the left edge says little).
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
            if j + 1 < rows.len() && tabular(&rows[j + 1]) && near(j, j + 1) {
                j += 1;
                continue;
            }
            // Up to two label rows between tabular rows belong to the run.
            let x = left(i, j);
            let x2 = second(i, j);
            let mut k = j + 1;
            while k < rows.len() && k <= j + 2 && label_row(k, x, x2) && near(k - 1, k) {
                k += 1;
            }
            if k > j + 1 && k < rows.len() && tabular(&rows[k]) && near(k - 1, k) {
                j = k;
                continue;
            }
            break;
        }
        // The run's cells must line up (left, right or centre) from row to
        // row, and most rows must hold a number: justified prose split at
        // wide spaces does neither.
        let run: Vec<&Vec<usize>> = rows[i..=j].iter().collect();
        let (aligned, segs) = alignment(&run);
        let numeric_rows = run
            .iter()
            .filter(|r| r.iter().any(|&k| is_numeric_cell(&lines[k].text())))
            .count();
        if j >= i + 2 && aligned * 10 >= segs * 8 && numeric_rows * 2 >= run.len() {
            let members = rows[i..=j].iter().flatten();
            let x0 = members
                .clone()
                .map(|&k| lines[k].x0)
                .fold(f32::MAX, f32::min);
            let x1 = members
                .clone()
                .map(|&k| lines[k].x1)
                .fold(f32::MIN, f32::max);
            let mut top = lines[rows[i][0]].top();
            let bot = lines[rows[j][0]].bottom();
            // Header and label rows just above, inside the same columns.
            let mut k = i;
            while k > 0 {
                let r = &rows[k - 1];
                let near = row_y(&rows[k]) - row_y(r) < 2.5 * lines[r[0]].size;
                let inside = r
                    .iter()
                    .all(|&m| lines[m].x0 >= x0 - 2.0 && lines[m].x1 <= x1 + 2.0 && short(m));
                let caption = lines[r[0]].text().to_ascii_lowercase().starts_with("table");
                if !near || !inside || caption {
                    break;
                }
                top = lines[r[0]].top();
                k -= 1;
            }
            if !regions.iter().any(|r| overlaps(*r, (x0, top, x1, bot))) {
                regions.push((x0 - 1.0, top - 1.0, x1 + 1.0, bot + 1.0));
            }
        }
        i = j + 1;
    }
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

fn overlaps(a: (f32, f32, f32, f32), b: (f32, f32, f32, f32)) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Cells of a table region: rows by baseline; columns from the gaps in the
/// horizontal projection of the rows with the most cells (so a spanning
/// header cell does not merge columns); a line crossing column boundaries
/// in a header row spans them, elsewhere it is split by word.
fn cells(lines: &[Line]) -> Vec<TCell> {
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
    // Column intervals from the rows with the most cells when there are
    // three or more of them (a row whose label ran into the first value
    // would otherwise merge two columns), else from rows with at least half
    // the widest row's cells.
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
    let col_of = |x: f32| -> usize {
        cols.iter()
            .position(|c| x < c.1 + 0.5)
            .unwrap_or(cols.len().saturating_sub(1))
    };
    // The first body row: a label and a value after it ("n=19" and
    // "(n = 24)" are header sizes, not values).
    let is_size = |t: &str| {
        let t = t.trim_start_matches(['(', '[']).trim_start();
        (t.starts_with('n') || t.starts_with('N')) && t[1..].trim_start().starts_with('=')
    };
    let first_body = rows
        .iter()
        .position(|r| {
            r.len() >= 2
                && r.iter().skip(1).any(|l| {
                    let t = l.text();
                    is_numeric_cell(&t) && !is_size(&t)
                })
        })
        .unwrap_or(0);
    let left = rows
        .iter()
        .flat_map(|r| r.first())
        .filter(|l| col_of(l.x0) == 0)
        .map(|l| l.x0)
        .fold(f32::MAX, f32::min);
    let mut out = Vec::new();
    for (ri, r) in rows.iter().enumerate() {
        for l in r {
            let c0 = col_of(l.x0);
            // The last column the line reaches into (past its start), so a
            // header wider than its column does not span the next one.
            let header = ri < first_body;
            let mut c1 = cols
                .iter()
                .rposition(|c| c.0 < l.x1 - 1.0)
                .unwrap_or(0)
                .max(c0);
            // A header centred over the gap between two columns heads both
            // ("Fruit (pieces)" over "Mean (SE)" and "Mean change").
            let mut c0 = c0;
            if header && c1 == c0 {
                let mid = (l.x0 + l.x1) / 2.0;
                let over_gap = |a: usize| {
                    let gap = (cols[a].1, cols[a + 1].0);
                    let half = (cols[a + 1].1 - cols[a].0) / 2.0;
                    (mid - (gap.0 + gap.1) / 2.0).abs() < 0.15 * half
                };
                if c0 + 1 < cols.len() && over_gap(c0) && l.x1 > cols[c0].1 {
                    c1 = c0 + 1;
                } else if c0 > 1 && over_gap(c0 - 1) && l.x0 < cols[c0].0 {
                    c0 -= 1;
                }
            }
            // Split the line's words by the column their centre is in: in
            // the body always, in a header only where the words stand
            // further apart than its word spacing ("CACP group  Total  p"),
            // so a heading spanning columns stays whole.
            let by_column = (c1 > c0).then(|| {
                let mut p: Vec<(usize, usize, Vec<&Word>)> = Vec::new();
                for w in &l.words {
                    let c = col_of((w.x0 + w.x1) / 2.0);
                    match p.last_mut() {
                        Some((a, _, ws)) if *a == c => ws.push(w),
                        _ => p.push((c, c, vec![w])),
                    }
                }
                p
            });
            let spaced_header = |p: &[(usize, usize, Vec<&Word>)]| {
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
                    .max(0.25 * l.size);
                p.len() >= 2 && gaps_between.iter().all(|g| *g > 1.8 * space)
            };
            let pieces: Vec<(usize, usize, Vec<&Word>)> = match by_column {
                Some(p) if !header || spaced_header(&p) => p,
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
                let indent = if a == 0 && left < f32::MAX {
                    (((x0 - left) / l.size) + 0.3).max(0.0) as u32
                } else {
                    0
                };
                out.push(TCell {
                    row: ri as u32,
                    col: a as u32,
                    col_span: (b - a + 1) as u32,
                    text,
                    indent,
                    bold: nb * 2 > ws.len(),
                    bbox: (x0, l.top(), x1, l.bottom()),
                });
            }
        }
    }
    // A body row with nothing in the first column and only values (the
    // second line of "0.24 / (0.12, 0.36)") continues the row above: each
    // piece joins the cell above it that it overlaps most.
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
    let mut out = merged;
    // A group header heads the sub-columns under it: a column left empty in
    // a header row, with a sub-header below it, joins the header cell of
    // that row whose centre is nearest the sub-header's (left-aligned or
    // centred group headers alike), when only empty columns lie between.
    let head_rows = out
        .iter()
        .filter(|c| (c.row as usize) < first_body)
        .map(|c| c.row + 1)
        .max()
        .unwrap_or(0);
    for r in 0..head_rows.saturating_sub(1) {
        let covered = |out: &[TCell], k: u32| {
            out.iter()
                .any(|c| c.row == r && c.col <= k && k < c.col + c.col_span)
        };
        let subs: Vec<(u32, f32)> = out
            .iter()
            .filter(|c| c.row == r + 1 && c.col > 0)
            .map(|c| (c.col, (c.bbox.0 + c.bbox.2) / 2.0))
            .collect();
        if out.iter().filter(|c| c.row == r && c.col > 0).count() < 2 {
            continue;
        }
        for (k, centre) in subs {
            if covered(&out, k) {
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
            let best = out
                .iter()
                .enumerate()
                .filter(|(_, c)| c.row == r && c.col > 0 && groups(c))
                .min_by(|(_, a), (_, b)| {
                    let d = |c: &TCell| ((c.bbox.0 + c.bbox.2) / 2.0 - centre).abs();
                    d(a).total_cmp(&d(b))
                })
                .map(|(i, _)| i);
            let Some(i) = best else { continue };
            let (a, b) = (out[i].col, out[i].col + out[i].col_span - 1);
            let (lo, hi) = if k < a { (k, a - 1) } else { (b + 1, k) };
            if (lo..=hi).all(|m| !covered(&out, m)) {
                let (na, nb) = (a.min(k), b.max(k));
                out[i].col = na;
                out[i].col_span = nb - na + 1;
            }
        }
    }
    // A centred first column has no indentation: its left edges vary with
    // the text's length while the centres agree.
    let firsts: Vec<(f32, f32)> = out
        .iter()
        .filter(|c| c.col == 0 && c.col_span == 1)
        .map(|c| (c.bbox.0, c.bbox.2))
        .collect();
    if firsts.len() >= 4 {
        let mut centres: Vec<f32> = firsts.iter().map(|(a, b)| (a + b) / 2.0).collect();
        centres.sort_by(f32::total_cmp);
        let mc = centres[centres.len() / 2];
        let lmin = firsts.iter().map(|f| f.0).fold(f32::MAX, f32::min);
        let centred = firsts
            .iter()
            .filter(|f| ((f.0 + f.1) / 2.0 - mc).abs() < 3.0)
            .count();
        let flush = firsts.iter().filter(|f| (f.0 - lmin).abs() < 1.5).count();
        if centred * 10 >= firsts.len() * 7 && flush * 10 < firsts.len() * 7 {
            for c in out.iter_mut().filter(|c| c.col == 0) {
                c.indent = 0;
            }
        }
    }
    out
}

/// Whether a line starts a table caption ("Table 2 Baseline…", "TABLE 1.").
fn starts_table_caption(t: &str) -> bool {
    let t = t.trim_start();
    let Some(rest) = t.strip_prefix("Table").or_else(|| t.strip_prefix("TABLE")) else {
        return false;
    };
    let rest = rest.trim_start_matches([' ', '\u{a0}', '|']).trim_start();
    rest.chars().next().is_some_and(|c| c.is_ascii_digit())
        || (rest.starts_with('S') && rest[1..].starts_with(|c: char| c.is_ascii_digit()))
}
