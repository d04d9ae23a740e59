//! Layout: glyphs → words → lines → blocks, tables found from aligned text
//! and ruling lines, and blocks put in reading order by recursive XY cuts
//! (columns read in turn, full-width parts in between).

use super::interp::{Glyph, PageContent};
use super::table::TCell;

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
    /// OCR's confidence in the word (0 to 1); `None` for a text layer's.
    pub conf: Option<f32>,
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
    pub(crate) fn new(words: Vec<Word>) -> Line {
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

    pub(crate) fn top(&self) -> f32 {
        self.y - 0.75 * self.size
    }
    pub(crate) fn bottom(&self) -> f32 {
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
                        conf: None,
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
    // A page gutter running through a gap splits the row first (unless the
    // row is one justified line); then each part is split on its own word
    // spacing, so the words of the column beside it (a table's cells, a
    // looser or tighter column) do not set the spacing of this one.
    let cuts: Vec<Vec<usize>> = rows
        .iter()
        .zip(&gutters)
        .enumerate()
        .map(|(i, (row, gutter))| {
            let cuts: Vec<usize> = (1..row.len())
                .filter(|&k| {
                    let (p, w) = (&row[k - 1], &row[k]);
                    w.x0 - p.x1 >= 0.4 * p.size.min(w.size)
                        && gutter.iter().any(|&(a, b)| a < w.x0 && b > p.x1)
                })
                .collect();
            let near = &rows[i.saturating_sub(6)..(i + 7).min(rows.len())];
            justified_cuts(row, cuts, near)
        })
        .collect();
    let mut out = Vec::new();
    for (mut row, cuts) in rows.into_iter().zip(cuts) {
        for &k in cuts.iter().rev() {
            let part = row.split_off(k);
            split_spaced(part, &mut out);
        }
        split_spaced(row, &mut out);
    }
    out.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.x0.total_cmp(&b.x0)));
    out
}

/// The cuts of a row at gutters (indices of the words that start a part)
/// less those inside one justified line: a short line stretched to its
/// column's width (a caption's "Table 3. Characteristics reported in") has
/// every gap the same width, and the gaps can fall on the column gaps of a
/// table below it. Parts are joined while every gap of the joined run is
/// the same width; a run of two parts or more is kept joined only if it
/// holds four words or more, mostly words, and a line of ordinary word
/// spacing on a row near it (`near`) starts and ends where it does (the
/// column's edges). A table's row seldom has equal gaps, and a page gutter
/// is not crossed by the lines of ordinary spacing beside it.
fn justified_cuts(row: &[Word], cuts: Vec<usize>, near: &[Vec<Word>]) -> Vec<usize> {
    if cuts.is_empty() {
        return cuts;
    }
    let even = |ws: &[Word]| {
        let gaps = ws.windows(2).map(|w| w[1].x0 - w[0].x1);
        let lo = gaps.clone().fold(f32::MAX, f32::min);
        let hi = gaps.fold(f32::MIN, f32::max);
        hi - lo <= 0.5 + 0.03 * hi
    };
    // A line of the column: six or more words of text from `x0` to `x1`,
    // at ordinary spacing.
    let column_line = |x0: f32, x1: f32| {
        near.iter().any(|r| {
            let Some(a) = r.iter().position(|w| (w.x0 - x0).abs() < 1.5) else {
                return false;
            };
            let Some(b) = r.iter().position(|w| (w.x1 - x1).abs() < 1.5) else {
                return false;
            };
            b >= a + 5
                && mostly_words(&r[a..=b])
                && r[a..=b]
                    .windows(2)
                    .all(|w| w[1].x0 - w[0].x1 < 0.8 * w[0].size)
        })
    };
    // Whether the run of parts from word `start` to the cut at `end`
    // (`parts` of them) is one justified line.
    let justified = |start: usize, end: usize, parts: usize| {
        let run = &row[start..end];
        parts >= 2
            && run.len() >= 4
            && mostly_words(run)
            && column_line(run[0].x0, run[run.len() - 1].x1)
    };
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().copied())
        .chain(std::iter::once(row.len()))
        .collect();
    let mut kept = Vec::with_capacity(cuts.len());
    // The run: its first word and how many parts it holds.
    let (mut start, mut parts) = (0, 1);
    for w in bounds.windows(3) {
        let (cut, end) = (w[1], w[2]);
        if row[cut].x0 >= row[cut - 1].x1 && even(&row[start..end]) {
            parts += 1;
            continue;
        }
        if !justified(start, cut, parts) {
            kept.extend(cuts.iter().copied().filter(|&k| k > start && k < cut));
        }
        kept.push(cut);
        (start, parts) = (cut, 1);
    }
    if !justified(start, row.len(), parts) {
        kept.extend(cuts.iter().copied().filter(|&k| k > start));
    }
    kept.sort_unstable();
    kept
}

/// Whether a word starts like a value: a digit, or a sign, bracket or
/// comparison before one ("-0.4", "(12)", "<0.001", "±2").
pub fn starts_value(t: &str) -> bool {
    let t = t.trim_start_matches([
        '-', '\u{2212}', '+', '(', '[', '<', '>', '\u{2264}', '\u{2265}', '\u{b1}',
    ]);
    t.starts_with(|c: char| c.is_ascii_digit())
}

/// Under a third of the words hold a digit: a line of text, not a
/// table's row of values.
fn mostly_words(ws: &[Word]) -> bool {
    ws.iter()
        .filter(|w| w.text.chars().any(|c| c.is_ascii_digit()))
        .count()
        * 3
        < ws.len()
}

/// Fewest letters set apart one by one that are read as letter-spaced
/// text: a shorter run of one-letter words is more likely real words
/// ("a", "I", "A and B").
const SPACED_RUN: usize = 4;

/// Letter-spaced text ("R E S E A R C H  A R T I C L E", "a b s t r a c
/// t"), each letter its own word, joined back into words: a run of
/// one-letter words of one size on one baseline, each gap under an em,
/// holding at least [`SPACED_RUN`] letters (digits end a run: "a 2 m 6"
/// is words, "1 2 3 4" a scale), is one word or several, cut where a gap
/// is clearly wider than the run's letter spacing (its median gap); a
/// longer piece set against either end at that spacing (a kerned pair
/// "ssions" after "s e") joins its word. Real one-letter words stay
/// apart: they come one or two at a time between longer words.
fn join_letter_spaced(words: Vec<Word>) -> Vec<Word> {
    // A letter, or punctuation set spaced inside a spaced word or URL.
    let single = |w: &Word| {
        let mut cs = w.text.chars();
        cs.next()
            .is_some_and(|c| c.is_alphabetic() || ".:/-@&'’".contains(c))
            && cs.next().is_none()
    };
    let follows = |p: &Word, w: &Word| {
        let s = p.size.max(w.size);
        let gap = w.x0 - p.x1;
        (p.size - w.size).abs() < 0.1 * s
            && (p.y - w.y).abs() < 0.2 * s
            && gap > -0.05 * s
            && gap < s
    };
    // Whether the gap from `p` to `w` is a word break in a run whose
    // letters are `letter` apart.
    let breaks = |p: &Word, w: &Word, letter: f32| {
        let gap = w.x0 - p.x1;
        gap > 1.6 * letter && gap - letter > 0.12 * w.size
    };
    let mut out: Vec<Word> = Vec::with_capacity(words.len());
    let mut run: Vec<Word> = Vec::new();
    // `None` at the end closes the last run.
    for w in words.into_iter().map(Some).chain(std::iter::once(None)) {
        let extends = w
            .as_ref()
            .is_some_and(|w| single(w) && run.last().is_none_or(|p| follows(p, w)));
        let mut letter = None;
        if !extends && !run.is_empty() {
            let letters = run
                .iter()
                .filter(|w| w.text.chars().all(char::is_alphabetic))
                .count();
            if letters < SPACED_RUN {
                out.append(&mut run);
            } else {
                let mut gaps: Vec<f32> = run.windows(2).map(|w| w[1].x0 - w[0].x1).collect();
                gaps.sort_by(f32::total_cmp);
                let l = gaps[gaps.len() / 2].max(0.0);
                // A longer piece just before the run joins its first word.
                let mut cur: Option<Word> = out
                    .last()
                    .is_some_and(|p| follows(p, &run[0]) && !breaks(p, &run[0], l))
                    .then(|| out.pop())
                    .flatten();
                for c in run.drain(..) {
                    match cur.as_mut() {
                        Some(j) if !breaks(j, &c, l) => {
                            j.text.push_str(&c.text);
                            j.x1 = j.x1.max(c.x1);
                            j.bold &= c.bold;
                        }
                        _ => out.extend(cur.replace(c)),
                    }
                }
                out.extend(cur);
                letter = Some(l);
            }
        }
        let Some(w) = w else { break };
        if let (Some(l), Some(p)) = (letter, out.last_mut()) {
            // A longer piece just after the run joins its last word.
            if !single(&w) && follows(p, &w) && !breaks(p, &w, l) {
                p.text.push_str(&w.text);
                p.x1 = p.x1.max(w.x1);
                continue;
            }
        }
        if single(&w) {
            run.push(w);
        } else {
            out.push(w);
        }
    }
    out
}

/// Cuts a run of words on one baseline into lines at gaps wide enough to be
/// a table's column gap, or clearly wider than the run's own word spacing
/// (a widely justified line stays one line).
fn split_spaced(words: Vec<Word>, out: &mut Vec<Line>) {
    if words.is_empty() {
        return;
    }
    let words = join_letter_spaced(words);
    let mut gaps: Vec<f32> = words.windows(2).map(|w| w[1].x0 - w[0].x1).collect();
    gaps.sort_by(f32::total_cmp);
    // The word spacing: the median gap, the widest one left out.
    gaps.pop();
    let median = gaps.get(gaps.len() / 2).copied().unwrap_or(0.0).max(0.0);
    let numeric = !mostly_words(&words);
    let mut cur: Vec<Word> = Vec::new();
    for w in words {
        if let Some(p) = cur.last() {
            let s = p.size.min(w.size);
            let gap = w.x0 - p.x1;
            // In a row of values, a value set an em or more after the word
            // before it starts a cell (a word space is a third of that).
            let value_after = numeric && gap > 1.0 * s && starts_value(&w.text);
            if (gap > 2.0 * s && (median < s || numeric))
                || (gap > 0.9 * s && gap > 2.0 * median)
                || value_after
            {
                out.push(Line::new(std::mem::take(&mut cur)));
            }
        }
        cur.push(w);
    }
    out.push(Line::new(cur));
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

/// A gutter between columns that one or two narrow blocks cross (a table's
/// notes a little wider than the column, under a table across both): the
/// cut with the fewest blocks across it, few against those either side of
/// it, the nearest the centre among equals. The blocks across it are then
/// read where they stand, between the columns above and below them.
fn crossed_gutter(narrow: &[LBlock], centre: f32) -> Option<f32> {
    let mut best: Option<(usize, f32)> = None;
    for c in narrow.iter().map(|b| b.x1) {
        let left = narrow.iter().filter(|b| b.x1 <= c).count();
        let Some(r0) = narrow
            .iter()
            .filter(|b| b.x0 >= c + 4.0)
            .map(|b| b.x0)
            .min_by(f32::total_cmp)
        else {
            continue;
        };
        let x = (c + r0) / 2.0;
        let right = narrow.iter().filter(|b| b.x0 >= r0).count();
        let across = narrow.len() - left - right;
        if left < 2
            || right < 2
            || across == 0
            || across * 5 > narrow.len().max(5)
            || across >= left.min(right)
        {
            continue;
        }
        let better = match best {
            None => true,
            Some((n, bx)) => across < n || across == n && (x - centre).abs() < (bx - centre).abs(),
        };
        if better {
            best = Some((across, x));
        }
    }
    best.map(|(_, x)| x)
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
    let centre = (rx0 + rx1) / 2.0;
    let gutter = gutters(&narrow)
        .into_iter()
        .min_by(|a, b| (a - centre).abs().total_cmp(&(b - centre).abs()))
        .or_else(|| crossed_gutter(&narrow, centre));
    if let Some(x) = gutter {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Words set from `x` on, each letter advancing 6 pt (10 pt type), a
    /// gap of `gap` pt after each word.
    fn set(x: f32, words: &[&str], gap: f32) -> Vec<Word> {
        let mut out = Vec::new();
        let mut x = x;
        for w in words {
            let x1 = x + 6.0 * w.chars().count() as f32;
            out.push(Word {
                text: (*w).into(),
                x0: x,
                x1,
                y: 100.0,
                size: 10.0,
                bold: false,
                conf: None,
            });
            x = x1 + gap;
        }
        out
    }

    fn texts(words: &[Word]) -> Vec<&str> {
        words.iter().map(|w| w.text.as_str()).collect()
    }

    /// Words of one row at baseline `y`: (x0, text) each, 6 pt a letter.
    fn row_at(y: f32, cells: &[(f32, &str)]) -> Vec<Word> {
        cells
            .iter()
            .flat_map(|(x, t)| {
                let mut ws = set(*x, &t.split(' ').collect::<Vec<_>>(), 3.0);
                ws.iter_mut().for_each(|w| w.y = y);
                ws
            })
            .collect()
    }

    #[test]
    fn a_value_an_em_after_the_word_before_starts_a_cell_in_a_row_of_values() {
        // A table as wide as its text, 12 pt between columns at 10 pt:
        // every gap in the row is a column gap, so the row's median gap
        // says nothing; a value an em or more after the word before it
        // starts a cell.
        let mut out = Vec::new();
        split_spaced(
            set(50.0, &["Placebo", "44", "9.9%", "14.5%"], 12.0),
            &mut out,
        );
        let parts: Vec<String> = out.iter().map(|l| l.text()).collect();
        assert_eq!(parts, ["Placebo", "44", "9.9%", "14.5%"]);
        // Prose with numbers, even with stretched spaces, stays a line.
        for gap in [3.0, 7.0] {
            let mut out = Vec::new();
            split_spaced(
                set(50.0, &["in", "2010", "45", "of", "120", "had"], gap),
                &mut out,
            );
            assert_eq!(out.len(), 1, "gap {gap}");
        }
        // A word after a wide gap in a row of values is not split on this
        // rule ("< 0.001" keeps together; words go by the others).
        let mut out = Vec::new();
        split_spaced(
            set(50.0, &["12", "34", "56", "and", "more"], 11.0),
            &mut out,
        );
        let parts: Vec<String> = out.iter().map(|l| l.text()).collect();
        assert_eq!(parts, ["12", "34", "56 and more"]);
    }

    /// A page of prose lines (50 to 377), a caption justified to the
    /// column's width, and a table whose column gaps run under the
    /// caption's stretched spaces; `prose` leaves the prose out.
    fn caption_over_table(prose: bool) -> Vec<Line> {
        let mut words = Vec::new();
        if prose {
            for k in 0..2 {
                let mut ws = set(50.0, &["words"; 10], 3.0);
                ws.iter_mut().for_each(|w| w.y = 60.0 + 12.0 * k as f32);
                words.extend(ws);
            }
        }
        // "Table 4. Characteristics reported in": 192 pt of letters in
        // 327 pt, four gaps of 33.75 pt.
        let mut x = 50.0;
        for t in ["Table", "4.", "Characteristics", "reported", "in"] {
            words.extend(row_at(84.0, &[(x, t)]));
            x += 6.0 * t.chars().count() as f32 + 33.75;
        }
        for k in 0..7 {
            words.extend(row_at(
                100.0 + 12.0 * k as f32,
                &[
                    (50.0, "Age"),
                    (115.0, "1"),
                    (160.0, "34.1 (8.2)"),
                    (284.0, "35.2"),
                    (366.0, "0"),
                ],
            ));
        }
        lines(words)
    }

    #[test]
    fn a_justified_caption_over_a_table_stays_one_line() {
        let with = caption_over_table(true);
        let texts: Vec<String> = with.iter().map(Line::text).collect();
        assert!(
            texts.contains(&"Table 4. Characteristics reported in".to_string()),
            "{texts:?}"
        );
        // The table's rows are still cut at its column gaps.
        assert_eq!(texts.iter().filter(|t| *t == "34.1 (8.2)").count(), 7);
        // Without a line of the column beside it to show the column's
        // edges, the stretched caption is cut where the table's gaps run.
        let without = caption_over_table(false);
        let texts: Vec<String> = without.iter().map(Line::text).collect();
        assert!(!texts
            .iter()
            .any(|t| t.starts_with("Table 4. Characteristics reported")));
    }

    /// A block of one line of `text` at (x0, y), `x1` wide.
    fn block_at(x0: f32, y: f32, x1: f32, text: &str) -> LBlock {
        let mut b = LBlock::from_line(Line::new(set(x0, &[text], 0.0)));
        b.x1 = x1;
        b.y0 = y;
        b.y1 = y + 10.0;
        b
    }

    #[test]
    fn a_note_a_little_wider_than_its_column_keeps_the_columns_apart() {
        // Left: a caption, a table, its notes; right: a heading and
        // paragraphs beside them; under both, a table across the page
        // whose note runs a little past the gutter.
        let blocks = vec![
            block_at(50.0, 80.0, 288.0, "left one"),
            block_at(50.0, 140.0, 288.0, "left table"),
            block_at(50.0, 230.0, 215.0, "left notes"),
            block_at(50.0, 264.0, 288.0, "left two"),
            block_at(307.0, 80.0, 546.0, "right one"),
            block_at(307.0, 105.0, 546.0, "right two"),
            block_at(307.0, 230.0, 546.0, "right three"),
            block_at(50.0, 435.0, 420.0, "wide caption"),
            block_at(48.0, 450.0, 547.0, "wide table"),
            block_at(50.0, 700.0, 329.0, "wide notes"),
        ];
        let order: Vec<String> = order(blocks).iter().map(|b| b.lines[0].text()).collect();
        assert_eq!(
            order,
            [
                "left one",
                "left table",
                "left notes",
                "left two",
                "right one",
                "right two",
                "right three",
                "wide caption",
                "wide table",
                "wide notes"
            ]
        );
    }

    #[test]
    fn letter_spaced_words_are_joined_at_their_letter_spacing() {
        // Letters 3 pt apart, words 9 pt apart.
        let mut words = set(50.0, &"R E S E A R C H".split(' ').collect::<Vec<_>>(), 3.0);
        let x = words.last().unwrap().x1 + 9.0;
        words.extend(set(x, &"A R T I C L E".split(' ').collect::<Vec<_>>(), 3.0));
        assert_eq!(texts(&join_letter_spaced(words)), ["RESEARCH", "ARTICLE"]);
        // Lower case, one word, then an ordinary word after a wider gap.
        let mut words = set(50.0, &"a b s t r a c t".split(' ').collect::<Vec<_>>(), 2.5);
        let x = words.last().unwrap().x1 + 12.0;
        words.extend(set(x, &["Background"], 3.0));
        assert_eq!(
            texts(&join_letter_spaced(words)),
            ["abstract", "Background"]
        );
        // A kerned pair set as one piece joins the spaced letters beside it.
        let mut words = set(50.0, &["E", "M", "S"], 2.0);
        for piece in [&["s", "e", "ssions"][..], &["were"]] {
            let x = words.last().unwrap().x1 + 9.0;
            words.extend(set(x, piece, 2.0));
        }
        assert_eq!(
            texts(&join_letter_spaced(words)),
            ["EMS", "sessions", "were"]
        );
    }

    #[test]
    fn real_one_letter_words_stay_apart() {
        for line in [
            "I saw a cat",
            "vitamin A and D",
            "groups A B C and the control",
            "a x b",
            "of a 2 m 6 0.5 cm structure",
            "scored 1 2 3 4 5 on a scale",
        ] {
            let words = set(50.0, &line.split(' ').collect::<Vec<_>>(), 3.0);
            assert_eq!(texts(&join_letter_spaced(words)).join(" "), line);
        }
        // Letters a column gap apart (one-letter cells of a table) are not
        // one word.
        let words = set(50.0, &["A", "B", "C", "D", "E"], 24.0);
        assert_eq!(texts(&join_letter_spaced(words)), ["A", "B", "C", "D", "E"]);
    }
}
