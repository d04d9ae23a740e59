//! `recursive`: use the strongest separator that still fits. The text is
//! split at blank lines, then line breaks, then sentences, then words, then
//! tokens, only as far down as a piece needs; neighbours are then packed.
//! Works on the whole text, so chunks carry no page or section.

use super::{finish_spans, hard_split, sentence_units, trim, SegDoc, SegmentSpec, Unit};
use quarry_udfs::Tokenizer;

/// Recursive pieces, packed up to the cap.
pub fn spans(doc: &SegDoc, spec: &SegmentSpec) -> Vec<(usize, usize)> {
    let cap = spec.max_tokens - spec.overlap_tokens;
    let mut units = Vec::new();
    split(
        doc.text,
        0,
        doc.text.len(),
        0,
        cap,
        spec.tokenizer,
        &mut units,
    );
    finish_spans(doc.text, &units, spec, |_| 0)
}

fn split(
    text: &str,
    start: usize,
    end: usize,
    level: usize,
    cap: usize,
    tk: Tokenizer,
    out: &mut Vec<Unit>,
) {
    let Some((start, end)) = trim(text, start, end) else {
        return;
    };
    if tk.count(&text[start..end]) <= cap {
        out.push(Unit {
            start,
            end,
            group: 0,
        });
        return;
    }
    let pieces: Vec<(usize, usize)> = match level {
        0 => by_sep(text, start, end, "\n\n"),
        1 => by_sep(text, start, end, "\n"),
        2 => sentence_units(text, start, end, 0)
            .into_iter()
            .map(|u| (u.start, u.end))
            .collect(),
        3 => by_sep(text, start, end, " "),
        _ => {
            out.extend(
                hard_split(text, start, end, cap, tk)
                    .into_iter()
                    .map(|(s, e)| Unit {
                        start: s,
                        end: e,
                        group: 0,
                    }),
            );
            return;
        }
    };
    if pieces.len() <= 1 {
        split(text, start, end, level + 1, cap, tk, out);
        return;
    }
    for (s, e) in pieces {
        split(text, s, e, level + 1, cap, tk, out);
    }
}

fn by_sep(text: &str, start: usize, end: usize, sep: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = start;
    for piece in text[start..end].split(sep) {
        out.push((pos, pos + piece.len()));
        pos += piece.len() + sep.len();
    }
    out
}
