//! `fixed`: cut on a ruler of tokens, ignoring structure (the control
//! condition). Chunks carry no page or section.

use super::{add_overlap, hard_split, SegDoc, SegmentSpec};

/// Spans of at most `max_tokens - overlap_tokens` tokens, then overlapped.
pub fn spans(doc: &SegDoc, spec: &SegmentSpec) -> Vec<(usize, usize)> {
    let cap = spec.max_tokens - spec.overlap_tokens;
    let cut = hard_split(doc.text, 0, doc.text.len(), cap, spec.tokenizer);
    add_overlap(doc.text, cut, spec, |_| 0)
}
