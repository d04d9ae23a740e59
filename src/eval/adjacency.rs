//! Cell adjacency relations, the structure measure of the ICDAR 2013 table
//! competition (Göbel et al., "ICDAR 2013 Table Competition"): each
//! non-empty cell with its nearest non-empty neighbour to the right (rows
//! overlapping) and below (columns overlapping), texts compared with
//! whitespace dropped, case folded and NFKC. Precision, recall and F1 count
//! relations as a multiset, so a relation found twice counts once unless
//! the truth has it twice.

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;

use crate::ingest::Cell;

/// One relation: (cell text, neighbour text, 'h' for right or 'v' for below).
pub type Relation = (String, String, char);

/// A cell's text as the competition compares it.
pub fn norm(s: &str) -> String {
    s.nfkc()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The adjacency relations of one table's cells.
///
/// ```
/// use quarry::eval::adjacency::relations;
/// use quarry::ingest::Cell;
/// let cell = |row, col, text: &str| Cell { row, col, row_span: 1, col_span: 1, text: text.into(), ..Cell::default() };
/// let r = relations(&[cell(0, 0, "a"), cell(0, 1, "b"), cell(1, 0, "c")]);
/// assert_eq!(r.len(), 2); // a-b across, a-c down
/// ```
pub fn relations(cells: &[Cell]) -> Vec<Relation> {
    let filled: Vec<(&Cell, String)> = cells
        .iter()
        .map(|c| (c, norm(&c.text)))
        .filter(|(_, t)| !t.is_empty())
        .collect();
    let last = |start: u32, span: u32| start + span.max(1) - 1;
    let mut out = Vec::new();
    for (a, at) in &filled {
        let (ar1, ac1) = (last(a.row, a.row_span), last(a.col, a.col_span));
        let right = filled
            .iter()
            .filter(|(b, _)| b.col > ac1 && b.row <= ar1 && a.row <= last(b.row, b.row_span))
            .min_by_key(|(b, _)| b.col);
        if let Some((_, bt)) = right {
            out.push((at.clone(), bt.clone(), 'h'));
        }
        let below = filled
            .iter()
            .filter(|(b, _)| b.row > ar1 && b.col <= ac1 && a.col <= last(b.col, b.col_span))
            .min_by_key(|(b, _)| b.row);
        if let Some((_, bt)) = below {
            out.push((at.clone(), bt.clone(), 'v'));
        }
    }
    out
}

/// Relations found against relations true, accumulated over tables.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Tally {
    /// Found relations that are true.
    pub hit: usize,
    /// True relations.
    pub truth: usize,
    /// Found relations.
    pub found: usize,
}

impl Tally {
    /// Scores the relations of one unit (a table, or a document's tables).
    pub fn of(truth: &[Relation], found: &[Relation]) -> Self {
        let mut left: HashMap<&Relation, usize> = HashMap::new();
        for r in truth {
            *left.entry(r).or_default() += 1;
        }
        let mut hit = 0;
        for r in found {
            if let Some(n) = left.get_mut(r).filter(|n| **n > 0) {
                *n -= 1;
                hit += 1;
            }
        }
        Self {
            hit,
            truth: truth.len(),
            found: found.len(),
        }
    }

    /// Adds another unit's counts.
    pub fn add(&mut self, other: Self) {
        self.hit += other.hit;
        self.truth += other.truth;
        self.found += other.found;
    }

    /// Share of found relations that are true (1 when none were found).
    pub fn precision(&self) -> f64 {
        if self.found == 0 {
            1.0
        } else {
            self.hit as f64 / self.found as f64
        }
    }

    /// Share of true relations found (1 when there are none).
    pub fn recall(&self) -> f64 {
        if self.truth == 0 {
            1.0
        } else {
            self.hit as f64 / self.truth as f64
        }
    }

    /// Harmonic mean of precision and recall.
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}
