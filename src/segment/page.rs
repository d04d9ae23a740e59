//! `page`: the page is the unit (forms, invoices, scanned records). A page
//! over the cap is cut into packed paragraphs within the page. Without page
//! provenance this returns `None` and the caller falls back to `paragraph`,
//! recording `page->paragraph`.

use super::{block_units, pack, SegDoc, SegmentSpec, Unit};

/// One span per page (or several when a page is over the cap).
pub fn spans(doc: &SegDoc, spec: &SegmentSpec) -> Option<Vec<(usize, usize)>> {
    if doc.blocks.is_empty() || doc.blocks.iter().any(|b| b.page.is_none()) {
        return None;
    }
    let mut units: Vec<Unit> = Vec::new();
    for b in doc.blocks {
        let page = b.page.unwrap_or(0) as usize;
        units.extend(block_units(doc.text, b, page));
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < units.len() {
        let g = units[i].group;
        let j = units[i..]
            .iter()
            .position(|u| u.group != g)
            .map_or(units.len(), |k| i + k);
        let (s, e) = (units[i].start, units[j - 1].end);
        if spec.tokenizer.count(&doc.text[s..e]) <= spec.max_tokens {
            out.push((s, e));
        } else {
            out.extend(pack(
                doc.text,
                &units[i..j],
                spec.max_tokens,
                spec.tokenizer,
            ));
        }
        i = j;
    }
    Some(out)
}
