//! `structural`: headings are boundaries. Paragraphs are packed within a
//! section and never across one; `min_tokens` applies within a section.

use super::{block_units, finish_spans, SegDoc, SegmentSpec, Unit};
use crate::ingest::BlockKind;

/// Paragraph units grouped by section (a heading opens a new group).
pub fn spans(doc: &SegDoc, spec: &SegmentSpec) -> Vec<(usize, usize)> {
    let mut units: Vec<Unit> = Vec::new();
    let mut group = 0usize;
    let mut starts: Vec<(usize, usize)> = Vec::new(); // (byte start, group)
    let mut last_section: Option<&Option<String>> = None;
    for b in doc.blocks {
        let new_section =
            b.kind == BlockKind::Heading || last_section.is_some_and(|s| *s != b.section);
        if new_section && !units.is_empty() {
            group += 1;
        }
        last_section = Some(&b.section);
        for u in block_units(doc.text, b, group) {
            starts.push((u.start, group));
            units.push(u);
        }
    }
    let group_of = |pos: usize| {
        let i = starts.partition_point(|&(s, _)| s <= pos);
        starts.get(i.saturating_sub(1)).map_or(0, |&(_, g)| g)
    };
    finish_spans(doc.text, &units, spec, group_of)
}
