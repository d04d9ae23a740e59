//! `paragraph`: the author's paragraph breaks are real; whole paragraphs are
//! packed up to the cap, and only a paragraph over the cap is cut (by
//! sentences).

use super::{block_units, finish_spans, SegDoc, SegmentSpec, Unit};

/// Paragraph units of every block, packed across blocks.
pub fn spans(doc: &SegDoc, spec: &SegmentSpec) -> Vec<(usize, usize)> {
    let units: Vec<Unit> = doc
        .blocks
        .iter()
        .flat_map(|b| block_units(doc.text, b, 0))
        .collect();
    finish_spans(doc.text, &units, spec, |_| 0)
}
