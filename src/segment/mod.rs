//! Segmentation: a cleaned document → chunks with offsets, pages and
//! sections. Nine methods (one file each); `max_tokens` is enforced on every
//! one of them (no chunk is ever over the cap), `overlap_tokens` and
//! `min_tokens` are honoured everywhere except `page` and `proposition`.
//! Two may ask a model: `contextual` (with `context_source = llm`) and
//! `proposition`; [`segment_with`] runs them with a client, [`segment`]
//! falls back and the method says so.

pub mod contextual;
pub mod fixed;
pub mod page;
pub mod paragraph;
pub mod proposition;
pub mod recursive;
pub mod semantic;
pub mod sentence;
pub mod structural;

use sha2::{Digest, Sha256};

use crate::ingest::{Block, BlockKind};
use quarry_udfs::Tokenizer;

/// A segmentation method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// Cut on a ruler of tokens: the control condition.
    Fixed,
    /// Pack whole paragraphs.
    Paragraph,
    /// Pack whole sentences.
    Sentence,
    /// Use the strongest separator that still fits.
    Recursive,
    /// Headings are boundaries: never merge across sections.
    Structural,
    /// One page per chunk (falls back to paragraph without pages).
    Page,
    /// Cut where consecutive sentences' embeddings diverge most.
    Semantic,
    /// Paragraph chunks prefixed with where they sit.
    Contextual,
    /// The text rewritten as standalone statements (one request per batch).
    Proposition,
}

impl Method {
    /// All methods.
    pub const ALL: [Method; 9] = [
        Method::Fixed,
        Method::Paragraph,
        Method::Sentence,
        Method::Recursive,
        Method::Structural,
        Method::Page,
        Method::Semantic,
        Method::Contextual,
        Method::Proposition,
    ];

    /// Parses a method name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s.trim().to_ascii_lowercase())
    }

    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::Paragraph => "paragraph",
            Self::Sentence => "sentence",
            Self::Recursive => "recursive",
            Self::Structural => "structural",
            Self::Page => "page",
            Self::Semantic => "semantic",
            Self::Contextual => "contextual",
            Self::Proposition => "proposition",
        }
    }

    /// The registry's row: the boundary hypothesis, the cost, whether it
    /// needs a client, and the provenance its chunks carry.
    pub fn about(self) -> [&'static str; 4] {
        match self {
            Self::Fixed => [
                "meaning is uniform; cut on a ruler (the control condition)",
                "free",
                "no",
                "none",
            ],
            Self::Paragraph => [
                "the author's paragraph breaks are real",
                "free",
                "no",
                "page, section",
            ],
            Self::Sentence => [
                "sentences are atomic; pack tightly",
                "free",
                "no",
                "page, section",
            ],
            Self::Recursive => [
                "use the strongest separator that still fits",
                "free",
                "no",
                "none",
            ],
            Self::Structural => [
                "headings are boundaries; never merge across sections",
                "free",
                "no",
                "page, section",
            ],
            Self::Page => [
                "the page is the unit: forms, invoices, scanned records",
                "free",
                "no",
                "page, section",
            ],
            Self::Semantic => [
                "cut where consecutive passages' embeddings diverge most",
                "free (the lexical embedder)",
                "no",
                "page, section",
            ],
            Self::Contextual => [
                "chunks prefixed with where they sit",
                "free, or 1 request per chunk",
                "only for context_source=llm",
                "page, section",
            ],
            Self::Proposition => [
                "rewrite into standalone factual statements",
                "1 request per ~900-token batch",
                "yes",
                "page, section of the batch",
            ],
        }
    }
}

/// Everything that decides how a document is cut.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SegmentSpec {
    /// The method.
    pub method: Method,
    /// No chunk has more tokens than this.
    pub max_tokens: usize,
    /// Tokens of the previous chunk repeated at the start of the next.
    pub overlap_tokens: usize,
    /// Chunks smaller than this are merged with a neighbour where the cap allows.
    pub min_tokens: usize,
    /// How tokens are counted.
    pub tokenizer: Tokenizer,
    /// Where `contextual`'s blurbs come from (other methods ignore it).
    pub context_source: contextual::ContextSource,
}

impl SegmentSpec {
    /// A spec with no overlap and no minimum.
    pub fn new(method: Method, max_tokens: usize) -> Self {
        Self {
            method,
            max_tokens,
            overlap_tokens: 0,
            min_tokens: 0,
            tokenizer: Tokenizer::default(),
            context_source: contextual::ContextSource::Heading,
        }
    }

    /// Checks the numbers, naming what would be accepted.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_tokens == 0 {
            return Err("max_tokens must be at least 1".into());
        }
        if self.overlap_tokens >= self.max_tokens {
            return Err(format!(
                "overlap_tokens ({}) must be smaller than max_tokens ({})",
                self.overlap_tokens, self.max_tokens
            ));
        }
        if self.min_tokens > self.max_tokens {
            return Err(format!(
                "min_tokens ({}) must not exceed max_tokens ({})",
                self.min_tokens, self.max_tokens
            ));
        }
        Ok(())
    }

    /// A short hash of the spec: the `segmentation` column.
    pub fn hash(&self) -> String {
        let mut s = format!(
            "{}|{}|{}|{}|{}",
            self.method.name(),
            self.max_tokens,
            self.overlap_tokens,
            self.min_tokens,
            self.tokenizer.name()
        );
        if self.method == Method::Contextual {
            s.push('|');
            s.push_str(self.context_source.name());
        }
        hex::encode(&Sha256::digest(s.as_bytes())[..8])
    }
}

/// A document to segment: its text and its blocks (offsets into the text).
pub struct SegDoc<'a> {
    /// The cleaned text.
    pub text: &'a str,
    /// Blocks in order.
    pub blocks: &'a [Block],
}

/// One chunk: byte offsets into the document text, plus provenance.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// Byte offset of the start.
    pub start: usize,
    /// Byte offset of the end (exclusive).
    pub end: usize,
    /// Token count of `text[start..end]`.
    pub tokens: usize,
    /// First page, where known.
    pub page_start: Option<u32>,
    /// Last page, where known.
    pub page_end: Option<u32>,
    /// Section of the chunk's start, where known.
    pub section: Option<String>,
    /// The chunk's text when it is not `text[start..end]`: a contextual
    /// blurb before it, or the statements a proposition batch became.
    pub text: Option<String>,
}

impl Chunk {
    /// The chunk's text: its own, or its span of the document's.
    pub fn text<'a>(&'a self, doc_text: &'a str) -> &'a str {
        self.text
            .as_deref()
            .unwrap_or(&doc_text[self.start..self.end])
    }
}

/// What a segmentation produced, with the method that really ran
/// (`page->paragraph` when pages were missing).
#[derive(Debug, Clone, Default)]
pub struct Segmented {
    /// The method as run.
    pub method: String,
    /// The chunks in order.
    pub chunks: Vec<Chunk>,
    /// What degraded (a fallback, a failed request, a batch kept as
    /// written), one line each, `kind: detail`.
    pub notes: Vec<String>,
    /// Counts worth reporting that are not degradations (`key`, `value`).
    pub extra: Vec<(String, String)>,
    /// Requests the segmentation made.
    pub calls: usize,
}

/// Splits a document into chunks, asking `ask` where the method needs a
/// model (`window_tokens` is what one request may carry); the others run as
/// [`segment`] runs them.
pub async fn segment_with(
    doc: &SegDoc<'_>,
    spec: &SegmentSpec,
    ask: &dyn crate::read::Ask,
    window_tokens: usize,
) -> Segmented {
    match (spec.method, spec.context_source) {
        (Method::Contextual, contextual::ContextSource::Llm) => {
            contextual::with_model(doc, spec, ask, window_tokens).await
        }
        (Method::Proposition, _) => proposition::with_model(doc, spec, ask, window_tokens).await,
        _ => segment(doc, spec),
    }
}

/// Splits a document into chunks without a model: `contextual` takes its
/// heading blurbs, `proposition` falls back to `paragraph`.
pub fn segment(doc: &SegDoc, spec: &SegmentSpec) -> Segmented {
    let (method, spans, provenance) = match spec.method {
        Method::Contextual => return contextual::segment(doc, spec, spec.context_source),
        Method::Proposition => return proposition::segment(doc, spec),
        Method::Fixed => ("fixed".to_string(), fixed::spans(doc, spec), false),
        Method::Recursive => ("recursive".to_string(), recursive::spans(doc, spec), false),
        Method::Paragraph => ("paragraph".to_string(), paragraph::spans(doc, spec), true),
        Method::Sentence => ("sentence".to_string(), sentence::spans(doc, spec), true),
        Method::Structural => ("structural".to_string(), structural::spans(doc, spec), true),
        Method::Semantic => ("semantic".to_string(), semantic::spans(doc, spec), true),
        Method::Page => match page::spans(doc, spec) {
            Some(s) => ("page".to_string(), s, true),
            None => (
                "page->paragraph".to_string(),
                paragraph::spans(doc, spec),
                true,
            ),
        },
    };
    let tk = spec.tokenizer;
    let chunks = spans
        .into_iter()
        .filter_map(|(s, e)| trim(doc.text, s, e))
        // The cap is never passed: a span over it (which the packers do not
        // produce) is cut on the ruler here rather than let through.
        .flat_map(|(s, e)| {
            let n = tk.count(&doc.text[s..e]);
            if n <= spec.max_tokens {
                vec![(s, e, n)]
            } else {
                hard_split(doc.text, s, e, spec.max_tokens, tk)
                    .into_iter()
                    .filter_map(|(a, b)| trim(doc.text, a, b))
                    .map(|(a, b)| (a, b, tk.count(&doc.text[a..b])))
                    .collect()
            }
        })
        .map(|(start, end, tokens)| {
            let (page_start, page_end, section) = if provenance {
                provenance_of(doc.blocks, start, end)
            } else {
                (None, None, None)
            };
            Chunk {
                start,
                end,
                tokens,
                page_start,
                page_end,
                section,
                text: None,
            }
        })
        .collect();
    Segmented {
        method,
        chunks,
        ..Segmented::default()
    }
}

/// Narrows a span to exclude surrounding whitespace; `None` when blank.
pub fn trim(text: &str, start: usize, end: usize) -> Option<(usize, usize)> {
    let piece = &text[start..end];
    let lead = piece.len() - piece.trim_start().len();
    let trail = piece.len() - piece.trim_end().len();
    (lead + trail < piece.len()).then_some((start + lead, end - trail))
}

fn provenance_of(
    blocks: &[Block],
    start: usize,
    end: usize,
) -> (Option<u32>, Option<u32>, Option<String>) {
    let first = blocks.partition_point(|b| b.end <= start);
    let mut pages = None::<(u32, u32)>;
    let mut section = None;
    for (i, b) in blocks[first..].iter().enumerate() {
        if b.start >= end {
            break;
        }
        if i == 0 {
            section = b.section.clone();
        }
        if let Some(p) = b.page {
            pages = Some(match pages {
                None => (p, p),
                Some((a, z)) => (a.min(p), z.max(p)),
            });
        }
    }
    (pages.map(|p| p.0), pages.map(|p| p.1), section)
}

/// Paragraph blocks of a plain text with no other structure (split at blank
/// lines, no page or section), for segmenting a bare string.
pub fn paragraph_blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut pos = 0;
    for p in text.split("\n\n") {
        let (s, e) = (pos, pos + p.len());
        pos = e + 2;
        if let Some((start, end)) = trim(text, s, e) {
            out.push(Block {
                kind: BlockKind::Paragraph,
                page: None,
                section: None,
                start,
                end,
                cells: vec![],
                confidence: None,
            });
        }
    }
    out
}

/// An atomic piece of text the packers place whole when it fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// Byte start.
    pub start: usize,
    /// Byte end.
    pub end: usize,
    /// A group id: units of different groups are never packed together.
    pub group: usize,
}

/// The paragraph units of a block: table rows for a table, lines for a
/// list, else the block split at blank lines.
pub fn block_units(text: &str, b: &Block, group: usize) -> Vec<Unit> {
    let sep = if b.kind == BlockKind::Table {
        "\n"
    } else {
        "\n\n"
    };
    let mut out = Vec::new();
    let mut pos = b.start;
    for piece in text[b.start..b.end].split(sep) {
        let s = pos;
        let e = s + piece.len();
        pos = e + sep.len();
        if let Some((s, e)) = trim(text, s, e) {
            out.push(Unit {
                start: s,
                end: e,
                group,
            });
        }
    }
    out
}

/// Sentence units inside a span.
pub fn sentence_units(text: &str, start: usize, end: usize, group: usize) -> Vec<Unit> {
    quarry_udfs::sentence_spans(&text[start..end])
        .into_iter()
        .map(|(a, b)| Unit {
            start: start + a,
            end: start + b,
            group,
        })
        .collect()
}

/// Packs units greedily into spans of at most `cap` tokens, never across
/// groups. A unit over the cap is cut by sentences, then words, then tokens.
pub fn pack(text: &str, units: &[Unit], cap: usize, tk: Tokenizer) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut cur: Option<(usize, usize, usize, usize)> = None; // start, end, est tokens, group
    for u in units {
        let n = tk.count(&text[u.start..u.end]);
        if n > cap {
            if let Some((s, e, _, _)) = cur.take() {
                out.push((s, e));
            }
            out.extend(split_oversize(text, u.start, u.end, cap, tk));
            continue;
        }
        match cur {
            Some((s, e, est, g)) if g == u.group => {
                // The parts' counts bound the whole's (BPE merges at the seams
                // only lower it), so the exact count is needed only near the cap.
                let bound = est + tk.count(&text[e..u.start]) + n;
                if bound <= cap {
                    cur = Some((s, u.end, bound, g));
                    continue;
                }
                let exact = tk.count(&text[s..u.end]);
                if exact <= cap {
                    cur = Some((s, u.end, exact, g));
                    continue;
                }
                out.push((s, e));
                cur = Some((u.start, u.end, n, u.group));
            }
            Some((s, e, _, _)) => {
                out.push((s, e));
                cur = Some((u.start, u.end, n, u.group));
            }
            None => cur = Some((u.start, u.end, n, u.group)),
        }
    }
    if let Some((s, e, _, _)) = cur {
        out.push((s, e));
    }
    out
}

/// Cuts one span that is over the cap: by sentences, then words, then tokens.
pub fn split_oversize(
    text: &str,
    start: usize,
    end: usize,
    cap: usize,
    tk: Tokenizer,
) -> Vec<(usize, usize)> {
    let sentences = sentence_units(text, start, end, 0);
    if sentences.len() > 1 {
        return pack(text, &sentences, cap, tk);
    }
    let words = word_units(text, start, end);
    if words.len() > 1 {
        let mut out = Vec::new();
        let mut cur: Option<(usize, usize)> = None;
        for w in words {
            let n = tk.count(&text[w.start..w.end]);
            if n > cap {
                if let Some(c) = cur.take() {
                    out.push(c);
                }
                out.extend(hard_split(text, w.start, w.end, cap, tk));
                continue;
            }
            cur = match cur {
                Some((s, _)) if tk.count(&text[s..w.end]) <= cap => Some((s, w.end)),
                Some(c) => {
                    out.push(c);
                    Some((w.start, w.end))
                }
                None => Some((w.start, w.end)),
            };
        }
        out.extend(cur);
        return out;
    }
    hard_split(text, start, end, cap, tk)
}

fn word_units(text: &str, start: usize, end: usize) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut pos = start;
    for w in text[start..end].split_inclusive(char::is_whitespace) {
        let s = pos;
        pos += w.len();
        if let Some((a, b)) = trim(text, s, pos) {
            out.push(Unit {
                start: a,
                end: b,
                group: 0,
            });
        }
    }
    out
}

/// Cuts a span into pieces of at most `cap` tokens on char boundaries,
/// regardless of words: the ruler.
pub fn hard_split(
    text: &str,
    start: usize,
    end: usize,
    cap: usize,
    tk: Tokenizer,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = start;
    // Windows of bounded size so each step costs O(window), not O(rest).
    let window_bytes = cap.saturating_mul(16).max(64);
    while pos < end {
        let limit =
            quarry_udfs::token_count::floor_char_boundary(text, (pos + window_bytes).min(end));
        let limit = if limit <= pos {
            quarry_udfs::token_count::ceil_char_boundary(text, pos + 1)
        } else {
            limit
        };
        let mut len = tk.prefix_len(&text[pos..limit], cap);
        if len == 0 {
            // One char is more than the cap: take it anyway (the smallest unit).
            len = text[pos..].chars().next().map_or(1, char::len_utf8);
        }
        let mut e = pos + len;
        // Count what the chunk will hold once trimmed: " word" is one token
        // where "word" alone may be two.
        let trimmed_count = |e: usize| trim(text, pos, e).map_or(0, |(a, b)| tk.count(&text[a..b]));
        while e > pos + 1 && trimmed_count(e) > cap {
            e = quarry_udfs::token_count::floor_char_boundary(text, e - 1);
        }
        out.push((pos, e));
        pos = e;
    }
    out
}

/// Merges spans smaller than `min` tokens into a neighbour (same group, as
/// `group_of` says) when the merged span stays within `cap`.
pub fn merge_small(
    text: &str,
    spans: Vec<(usize, usize)>,
    min: usize,
    cap: usize,
    tk: Tokenizer,
    group_of: impl Fn(usize) -> usize,
) -> Vec<(usize, usize)> {
    if min == 0 {
        return spans;
    }
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        if let Some(last) = out.last_mut() {
            let last_small = tk.count(&text[last.0..last.1]) < min;
            let this_small = tk.count(&text[s..e]) < min;
            if (last_small || this_small)
                && group_of(last.0) == group_of(s)
                && tk.count(&text[last.0..e]) <= cap
            {
                last.1 = e;
                continue;
            }
        }
        out.push((s, e));
    }
    out
}

/// Packs with room kept for the overlap, merges small chunks, then extends
/// each chunk back into its predecessor by up to `overlap_tokens`, starting
/// on a word, without passing the cap.
pub fn finish_spans(
    text: &str,
    units: &[Unit],
    spec: &SegmentSpec,
    group_of: impl Fn(usize) -> usize,
) -> Vec<(usize, usize)> {
    let cap = spec.max_tokens - spec.overlap_tokens;
    let packed = pack(text, units, cap, spec.tokenizer);
    let merged = merge_small(
        text,
        packed,
        spec.min_tokens,
        cap,
        spec.tokenizer,
        &group_of,
    );
    add_overlap(text, merged, spec, group_of)
}

/// Extends each span back into the previous one by up to `overlap_tokens`.
pub fn add_overlap(
    text: &str,
    spans: Vec<(usize, usize)>,
    spec: &SegmentSpec,
    group_of: impl Fn(usize) -> usize,
) -> Vec<(usize, usize)> {
    if spec.overlap_tokens == 0 {
        return spans;
    }
    let tk = spec.tokenizer;
    let mut out = Vec::with_capacity(spans.len());
    for i in 0..spans.len() {
        let (s, e) = spans[i];
        if i == 0 || group_of(spans[i - 1].0) != group_of(s) {
            out.push((s, e));
            continue;
        }
        let (ps, pe) = spans[i - 1];
        let mut os = ps + tk.suffix_start(&text[ps..pe], spec.overlap_tokens);
        // Start on a word: move forward to just after whitespace.
        if os > ps && !text[..os].ends_with(char::is_whitespace) {
            match text[os..pe].find(char::is_whitespace) {
                Some(k) => os += k,
                None => os = pe,
            }
        }
        let mut start = s;
        if os < pe {
            let cand = trim(text, os, pe).map_or(s, |t| t.0);
            if tk.count(&text[cand..e]) <= spec.max_tokens {
                start = cand;
            }
        }
        out.push((start, e));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_respects_the_cap_and_offsets() {
        let text = "Alpha beta gamma delta. Epsilon zeta eta theta iota.\n\nKappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega. ".repeat(20);
        let text = text.trim_end();
        let blocks = paragraph_blocks(text);
        let doc = SegDoc {
            text,
            blocks: &blocks,
        };
        for m in Method::ALL {
            for cap in [5, 17, 40, 200] {
                let spec = SegmentSpec::new(m, cap);
                let seg = segment(&doc, &spec);
                assert!(!seg.chunks.is_empty());
                for c in &seg.chunks {
                    assert!(c.tokens <= cap, "{m:?} cap {cap}: {} tokens", c.tokens);
                    assert_eq!(spec.tokenizer.count(c.text(text)), c.tokens);
                }
                // Non-overlapping chunks tile the text in order.
                for w in seg.chunks.windows(2) {
                    assert!(w[0].end <= w[1].start);
                }
            }
        }
    }

    #[test]
    fn overlap_repeats_the_tail_within_the_cap() {
        let text = "One two three four five six seven eight nine ten. ".repeat(30);
        let text = text.trim_end();
        let blocks = paragraph_blocks(text);
        let doc = SegDoc {
            text,
            blocks: &blocks,
        };
        let mut spec = SegmentSpec::new(Method::Sentence, 40);
        spec.overlap_tokens = 12;
        let seg = segment(&doc, &spec);
        assert!(seg.chunks.len() > 3);
        for w in seg.chunks.windows(2) {
            assert!(w[1].start < w[0].end, "chunks overlap");
        }
        assert!(seg.chunks.iter().all(|c| c.tokens <= 40));
    }
}
