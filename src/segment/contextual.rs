//! `contextual`: each chunk prefixed with where it sits (Anthropic's
//! contextual retrieval, 2024: a short blurb situating a chunk in its
//! document is prepended before the chunk is ranked or read, so a chunk that
//! says "the second arm" still says which trial). The chunk itself is cut as
//! `paragraph` cuts it, under a cap lowered by the room the blurb may take
//! (a quarter of the cap, at most [`PREFIX_MAX`] tokens), so blurb and
//! chunk together stay within `max_tokens`.
//!
//! The blurb is free by default (`context_source = heading`: the document's
//! title, the chunk's section and pages, from the blocks), or one request
//! per chunk (`context_source = llm`: the model sees the document, cut to
//! what the window allows, and the chunk, and answers with one or two
//! sentences; Anthropic's prompt). Without a client the llm source falls
//! back to the heading one and the method says so
//! (`contextual(llm->heading)`); a chunk whose request failed gets its
//! heading blurb and a note. A chunk's offsets are those of its own text in
//! the document: the blurb is not the document's and is never quoted from.

use futures::future::join_all;

use super::{Chunk, Method, SegDoc, SegmentSpec, Segmented};
use crate::ingest::BlockKind;
use crate::read::Ask;

/// The most tokens a blurb takes.
pub const PREFIX_MAX: usize = 64;

/// Where a contextual chunk's blurb comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ContextSource {
    /// The title, section and pages: free.
    #[default]
    Heading,
    /// One request per chunk.
    Llm,
}

impl ContextSource {
    /// Parses `heading` or `llm`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "heading" => Ok(Self::Heading),
            "llm" => Ok(Self::Llm),
            other => Err(format!(
                "context_source must be 'heading' or 'llm', got '{other}'"
            )),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Heading => "heading",
            Self::Llm => "llm",
        }
    }
}

/// The tokens kept for the blurb under a cap of `cap`.
fn reserve(cap: usize) -> usize {
    (cap / 4).min(PREFIX_MAX)
}

/// The chunks without their blurbs: `paragraph` under the lowered cap.
fn base(doc: &SegDoc, spec: &SegmentSpec) -> Segmented {
    let mut s = spec.clone();
    s.method = Method::Paragraph;
    s.max_tokens = (spec.max_tokens - reserve(spec.max_tokens)).max(1);
    s.overlap_tokens = spec.overlap_tokens.min(s.max_tokens - 1);
    s.min_tokens = spec.min_tokens.min(s.max_tokens);
    super::segment(doc, &s)
}

/// The document's title: its first heading, where it has one.
fn title(doc: &SegDoc) -> Option<String> {
    let b = doc.blocks.iter().find(|b| b.kind == BlockKind::Heading)?;
    let t = doc.text[b.start..b.end]
        .split_whitespace()
        .collect::<Vec<_>>();
    (!t.is_empty()).then(|| t.join(" "))
}

/// The free blurb: `From "Title", section "Methods", pages 3-4.`
fn heading_blurb(title: Option<&str>, c: &Chunk) -> String {
    let mut parts = Vec::new();
    if let Some(t) = title {
        parts.push(format!("From \"{t}\""));
    }
    if let Some(s) = c.section.as_deref().filter(|s| Some(*s) != title) {
        parts.push(format!("section \"{s}\""));
    }
    match (c.page_start, c.page_end) {
        (Some(a), Some(b)) if a != b => parts.push(format!("pages {a}-{b}")),
        (Some(a), _) => parts.push(format!("page {a}")),
        _ => {}
    }
    if parts.is_empty() {
        return String::new();
    }
    let mut s = parts.join(", ");
    if let Some(first) = s.get(..1) {
        s = first.to_uppercase() + &s[1..];
    }
    s + "."
}

/// Prefixes each chunk with its blurb, cutting a blurb (at a word) where
/// blurb and chunk would pass the cap. The number of blurbs cut.
fn apply(doc: &SegDoc, spec: &SegmentSpec, seg: &mut Segmented, blurbs: &[String]) -> usize {
    let tk = spec.tokenizer;
    let mut cut = 0;
    for (c, blurb) in seg.chunks.iter_mut().zip(blurbs) {
        let body = &doc.text[c.start..c.end];
        let mut blurb = blurb.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut room = reserve(spec.max_tokens);
        let mut was_cut = false;
        loop {
            if blurb.is_empty() {
                break;
            }
            if tk.count(&blurb) > room {
                let keep = tk.prefix_len(&blurb, room);
                let keep = blurb[..keep].rfind(' ').unwrap_or(0);
                blurb.truncate(keep);
                blurb.truncate(blurb.trim_end_matches([',', ';', ':', ' ']).len());
                was_cut = true;
                continue;
            }
            let text = format!("{blurb}\n\n{body}");
            let n = tk.count(&text);
            if n <= spec.max_tokens {
                c.tokens = n;
                c.text = Some(text);
                break;
            }
            room = room
                .saturating_sub(n - spec.max_tokens)
                .min(tk.count(&blurb) - 1);
        }
        cut += usize::from(was_cut);
    }
    cut
}

/// `contextual` with heading blurbs; `llm` asked for without a client falls
/// back to them, and the method says so.
pub fn segment(doc: &SegDoc, spec: &SegmentSpec, source: ContextSource) -> Segmented {
    let mut seg = base(doc, spec);
    let t = title(doc);
    let blurbs: Vec<String> = seg
        .chunks
        .iter()
        .map(|c| heading_blurb(t.as_deref(), c))
        .collect();
    apply(doc, spec, &mut seg, &blurbs);
    seg.method = match source {
        ContextSource::Heading => "contextual".into(),
        ContextSource::Llm => "contextual(llm->heading)".into(),
    };
    if source == ContextSource::Llm {
        seg.notes.push(
            "segment_fallback: contextual's llm blurbs need a client; the heading blurbs were used"
                .into(),
        );
    }
    seg
}

/// The request for one chunk's blurb (Anthropic's contextual retrieval prompt).
fn prompt(document: &str, chunk: &str) -> String {
    format!(
        "<document>\n{document}\n</document>\n\
         Here is the chunk we want to situate within the whole document\n\
         <chunk>\n{chunk}\n</chunk>\n\
         Please give a short succinct context to situate this chunk within the overall \
         document for the purposes of improving search retrieval of the chunk. \
         Answer only with the succinct context and nothing else."
    )
}

/// `contextual` with one request per chunk; `window_tokens` is what one
/// request may carry (the document is cut to fit beside the chunk).
pub async fn with_model(
    doc: &SegDoc<'_>,
    spec: &SegmentSpec,
    ask: &dyn Ask,
    window_tokens: usize,
) -> Segmented {
    let tk = spec.tokenizer;
    let mut seg = base(doc, spec);
    let room = window_tokens.saturating_sub(spec.max_tokens + 120).max(1);
    let whole = tk.count(doc.text);
    let document = &doc.text[..tk.prefix_len(doc.text, room)];
    let replies = join_all(seg.chunks.iter().enumerate().map(|(i, c)| {
        ask.ask(
            prompt(document, &doc.text[c.start..c.end]),
            None,
            format!("contextual blurb for chunk {i}"),
        )
    }))
    .await;
    seg.calls = replies.len();
    let t = title(doc);
    let mut failed = Vec::new();
    let blurbs: Vec<String> = seg
        .chunks
        .iter()
        .zip(replies)
        .enumerate()
        .map(
            |(i, (c, r))| match r.text.filter(|t| !t.trim().is_empty()) {
                Some(text) => text.trim().to_string(),
                None => {
                    failed.push(format!(
                        "{i} ({})",
                        r.error.as_deref().unwrap_or("empty reply")
                    ));
                    heading_blurb(t.as_deref(), c)
                }
            },
        )
        .collect();
    let cut = apply(doc, spec, &mut seg, &blurbs);
    seg.method = "contextual(llm)".into();
    if !failed.is_empty() {
        seg.notes.push(format!(
            "context_failed: {} of {} chunks have their heading blurb, their requests failed: {}",
            failed.len(),
            seg.chunks.len(),
            failed.join("; ")
        ));
    }
    if cut > 0 {
        seg.extra.push(("contexts_cut".into(), cut.to_string()));
    }
    if document.len() < doc.text.len() {
        seg.extra.push((
            "context_document_tokens".into(),
            format!("{} of {whole}", tk.count(document)),
        ));
    }
    seg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Block;

    fn doc_blocks(text: &str) -> Vec<Block> {
        let mut blocks = Vec::new();
        let mut pos = 0;
        for (i, p) in text.split("\n\n").enumerate() {
            let kind = if i == 0 || p.starts_with("Methods") {
                BlockKind::Heading
            } else {
                BlockKind::Paragraph
            };
            let section = if i >= 2 && text[..pos].contains("Methods") {
                Some("Methods".to_string())
            } else {
                None
            };
            blocks.push(Block {
                kind,
                page: Some(1 + (i as u32) / 3),
                section,
                start: pos,
                end: pos + p.len(),
                cells: vec![],
                confidence: None,
            });
            pos += p.len() + 2;
        }
        blocks
    }

    #[test]
    fn heading_blurbs_name_the_title_section_and_page_within_the_cap() {
        let text = "Inhaled steroids in asthma\n\nWe asked whether inhaled steroids help adults whose asthma is not controlled by a reliever alone, and whether any benefit lasts after the inhaler is stopped at twelve weeks.\n\nMethods\n\nAdults were randomised to two arms of equal size in three hospitals, with nurses who did not know the allocation scoring symptoms every week.\n\nThe second arm received placebo.";
        let blocks = doc_blocks(text);
        let doc = SegDoc {
            text,
            blocks: &blocks,
        };
        let spec = SegmentSpec::new(Method::Contextual, 80);
        let seg = segment(&doc, &spec, ContextSource::Heading);
        assert_eq!(seg.method, "contextual");
        let last = seg.chunks.last().unwrap();
        let t = last.text(text);
        assert!(
            t.starts_with("From \"Inhaled steroids in asthma\", section \"Methods\", page "),
            "{t}"
        );
        assert!(t.ends_with("The second arm received placebo."), "{t}");
        for c in &seg.chunks {
            assert!(c.tokens <= 80);
            assert_eq!(spec.tokenizer.count(c.text(text)), c.tokens);
            assert!(c.text(text).ends_with(&text[c.start..c.end]));
        }
        let fallback = segment(&doc, &spec, ContextSource::Llm);
        assert_eq!(fallback.method, "contextual(llm->heading)");
        assert_eq!(fallback.notes.len(), 1);
    }

    #[test]
    fn a_tiny_cap_cuts_the_blurb_not_the_text() {
        let text = "A title\n\nOne two three four five six seven eight nine ten eleven twelve.";
        let blocks = doc_blocks(text);
        let doc = SegDoc {
            text,
            blocks: &blocks,
        };
        for cap in [3, 8, 20] {
            let seg = segment(
                &doc,
                &SegmentSpec::new(Method::Contextual, cap),
                ContextSource::Heading,
            );
            let covered: String = seg.chunks.iter().map(|c| &text[c.start..c.end]).collect();
            assert!(covered.contains("twelve."), "{cap}");
            assert!(seg.chunks.iter().all(|c| c.tokens <= cap), "{cap}");
        }
    }
}
