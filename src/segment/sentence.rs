//! `sentence`: sentences are atomic; they are packed tightly up to the cap.

use super::{block_units, finish_spans, sentence_units, SegDoc, SegmentSpec, Unit};
use crate::ingest::BlockKind;

/// Sentence units of every block (table rows stay whole), packed across blocks.
pub fn spans(doc: &SegDoc, spec: &SegmentSpec) -> Vec<(usize, usize)> {
    finish_spans(doc.text, &units(doc), spec, |_| 0)
}

/// The sentences of every block in order, a table's rows whole, in group 0.
pub fn units(doc: &SegDoc) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    for b in doc.blocks {
        for u in block_units(doc.text, b, 0) {
            if b.kind == BlockKind::Table {
                units.push(u);
            } else {
                units.extend(sentence_units(doc.text, u.start, u.end, 0));
            }
        }
    }
    units
}
