//! `sentence`: sentences are atomic; they are packed tightly up to the cap.

use super::{block_units, finish_spans, sentence_units, SegDoc, SegmentSpec, Unit};
use crate::ingest::BlockKind;

/// Sentence units of every block (table rows stay whole), packed across blocks.
pub fn spans(doc: &SegDoc, spec: &SegmentSpec) -> Vec<(usize, usize)> {
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
    finish_spans(doc.text, &units, spec, |_| 0)
}
