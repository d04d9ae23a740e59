//! `semantic`: cut where the topic moves (the breakpoint method of semantic
//! chunking, as Kamradt's and LangChain's `SemanticChunker`). At each
//! boundary between sentences the two sentences before it are embedded
//! against the two after it (TextTiling's blocks, so one short sentence
//! does not decide a boundary), and the boundaries whose two sides diverge
//! most are cuts: the most
//! distant tenth of the boundaries, and only those more distant than the
//! median, so a document on one topic is not cut for the sake of it. The
//! pieces are then packed up to the cap like `sentence`'s, never across a
//! cut. The embedder is the lexical one ([`crate::read::lexical_embedding`]):
//! deterministic and offline, so the same text is cut the same way on every
//! machine; word overlap stands in for meaning.

use super::{finish_spans, SegDoc, SegmentSpec};
use crate::read::{cosine, lexical_embedding};

/// Sentence units (table rows whole), grouped between semantic cuts.
pub fn spans(doc: &SegDoc, spec: &SegmentSpec) -> Vec<(usize, usize)> {
    let mut units = super::sentence::units(doc);
    let n = units.len();
    if n >= 3 {
        // The two sentences before each boundary against the two after
        // (TextTiling's block comparison, Hearst 1997).
        let embed = |a: usize, b: usize| lexical_embedding(&doc.text[units[a].start..units[b].end]);
        let mut dist: Vec<(f64, usize)> = (0..n - 1)
            .map(|i| {
                let left = embed(i.saturating_sub(1), i);
                let right = embed(i + 1, (i + 2).min(n - 1));
                (1.0 - cosine(&left, &right), i)
            })
            .collect();
        let mut sorted: Vec<f64> = dist.iter().map(|d| d.0).collect();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        dist.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        let cuts: Vec<usize> = dist
            .iter()
            .take((n - 1).div_ceil(10))
            .filter(|(d, _)| *d > median)
            .map(|(_, i)| *i)
            .collect();
        let mut group = 0;
        for (i, u) in units.iter_mut().enumerate() {
            u.group = group;
            if cuts.contains(&i) {
                group += 1;
            }
        }
    }
    let starts: Vec<(usize, usize)> = units.iter().map(|u| (u.start, u.group)).collect();
    let group_of = |pos: usize| {
        let i = starts.partition_point(|&(s, _)| s <= pos);
        starts.get(i.saturating_sub(1)).map_or(0, |&(_, g)| g)
    };
    finish_spans(doc.text, &units, spec, group_of)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{paragraph_blocks, segment, Method};

    #[test]
    fn the_cut_falls_where_the_subject_changes() {
        let text = "The trial randomised adults with asthma. The adults with asthma used inhalers. Inhalers for asthma were given daily. \
                    Funding came from a public grant. The grant paid for staff. Staff salaries were the grant's main cost.";
        let blocks = paragraph_blocks(text);
        let doc = SegDoc {
            text,
            blocks: &blocks,
        };
        let seg = segment(&doc, &SegmentSpec::new(Method::Semantic, 200));
        assert_eq!(seg.method, "semantic");
        let pieces: Vec<&str> = seg.chunks.iter().map(|c| &text[c.start..c.end]).collect();
        assert_eq!(pieces.len(), 2, "{pieces:?}");
        assert!(pieces[0].ends_with("daily."), "{pieces:?}");
    }
}
