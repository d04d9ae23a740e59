//! Reading a document to answer a question (seed 001's readers): how the
//! chunks of a document reach the model is a choice of its own, separate
//! from how the document was cut. Each reader has a traversal signature,
//! `select|calls|state`: which chunks it reads (`all`, `topk`, `prefix`),
//! how many requests that takes for `N` chunks, and what is carried from
//! one request to the next (`none`, `tree`, `carry`); no two readers share
//! one (a test checks), which is how two methods are told apart from two
//! names for one method.
//!
//! Nothing degrades silently: chunks that did not fit, failed requests, a
//! merge that fell back to concatenation, quotations not found in their
//! chunk, citations of chunks never sent are `notes` and make the answer
//! `partial`. The model is asked to reply `NOT_IN_DOCUMENT` when the text
//! does not hold the answer; [`is_not_found`] recognises it however the
//! model decorates it.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// What the model replies when the text does not hold the answer.
pub const NOT_FOUND: &str = "NOT_IN_DOCUMENT";

/// A reader as the registry lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReaderInfo {
    /// Its name.
    pub name: &'static str,
    /// `select|calls|state`.
    pub signature: &'static str,
    /// Its requests for a document of `N` chunks (`K` = `top_k`).
    pub cost: &'static str,
    /// What it does, in a line.
    pub method: &'static str,
}

/// The readers, in the order `readers()` lists them.
pub const READERS: &[ReaderInfo] = &[
    ReaderInfo {
        name: "stuff",
        signature: "all|1|none",
        cost: "1",
        method: "every chunk in one request (as many as the context window holds; the rest are dropped_chunks)",
    },
    ReaderInfo {
        name: "map_reduce",
        signature: "all|N+logN|tree",
        cost: "N, then one reduce per group of answers at each level of the merge tree (none when every chunk is NOT_IN_DOCUMENT)",
        method: "each chunk answered alone (map), the answers merged in a tree of requests that fit the window (reduce)",
    },
    ReaderInfo {
        name: "refine",
        signature: "all|N|carry",
        cost: "N",
        method: "the chunks in order, each request refining the answer so far with one more chunk",
    },
    ReaderInfo {
        name: "skim",
        signature: "all|N+1|none",
        cost: "N, then 1 over the passages found (none when no chunk has one)",
        method: "each chunk asked for its relevant passages, quoted verbatim (checked against the chunk), then one answer from the passages",
    },
    ReaderInfo {
        name: "retrieve",
        signature: "topk|1|none",
        cost: "1",
        method: "the top_k chunks by cosine similarity of the lexical embedder's vectors to the question, in one request",
    },
    ReaderInfo {
        name: "preview",
        signature: "prefix|1|none",
        cost: "1",
        method: "the document's opening chunks (top_k of them: title, abstract, introduction) in one request",
    },
];

/// The reader named `name`.
pub fn reader(name: &str) -> Option<&'static ReaderInfo> {
    READERS.iter().find(|r| r.name == name)
}

/// One chunk a reader may send.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    /// Its id in the document (as `chunks(...)` numbers it).
    pub chunk_id: i64,
    /// Its text.
    pub text: String,
    /// Its token count.
    pub tokens: usize,
    /// First page, where known.
    pub page: Option<u32>,
    /// Section, where known.
    pub section: Option<String>,
}

/// What an answer rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// The chunk.
    pub chunk_id: i64,
    /// Verbatim chunk text (`chunk`), a passage the model quoted (`quote`),
    /// or one chunk's own answer (`map_answer`).
    pub text: String,
    /// First page of the chunk.
    pub page: Option<u32>,
    /// Its section.
    pub section: Option<String>,
    /// Cosine similarity (`retrieve`).
    pub score: Option<f64>,
    /// `chunk`, `quote` or `map_answer`.
    pub kind: String,
    /// For a quote: whether it stands in its chunk.
    pub verified: Option<bool>,
    /// For a quote: how closely (1.0 exact after folding).
    pub matched: Option<f64>,
}

/// One request's reply as a reader sees it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// The text, when the request succeeded.
    pub text: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
}

/// Sends one request: the prompt, an optional JSON schema, a label for
/// the trace.
#[async_trait::async_trait]
pub trait Ask: Send + Sync {
    /// The reply to `prompt`.
    async fn ask(&self, prompt: String, schema: Option<serde_json::Value>, label: String) -> Reply;
}

/// How a reader reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Chunks `retrieve` and `preview` send.
    pub top_k: usize,
    /// Tokens of chunk text one request may carry (the context window,
    /// less the output cap and the instructions).
    pub budget_tokens: usize,
}

/// A reader's answer to one document.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    /// The answer (`NOT_IN_DOCUMENT` when the text does not hold one;
    /// `None` when no request answered).
    pub answer: Option<String>,
    /// Something degraded (see `notes`).
    pub partial: bool,
    /// The document does not hold the answer.
    pub not_found: bool,
    /// What degraded, each `kind: detail`.
    pub notes: Vec<String>,
    /// The chunks the requests carried, in document order.
    pub chunks_used: Vec<i64>,
    /// What the answer rests on.
    pub evidence: Vec<Evidence>,
    /// Requests made.
    pub calls: usize,
}

/// Whether `text` is the not-found sentinel, however decorated
/// (`**NOT_IN_DOCUMENT.**`, `"not in document"`, `NOT_IN_DOCUMENT\n`): the
/// whole reply must be the sentinel, so an answer quoting it is an answer.
pub fn is_not_found(text: &str) -> bool {
    let core: String = text
        .trim()
        .trim_matches(|c: char| c.is_whitespace() || "*_`\"'.!:;()[]<>#-".contains(c))
        .chars()
        .map(|c| {
            if c == ' ' || c == '-' {
                '_'
            } else {
                c.to_ascii_uppercase()
            }
        })
        .collect();
    core == NOT_FOUND
}

static CHUNK_MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\[\s*chunk\s+(\d{1,9})\s*\]").expect("chunk marker"));

/// The chunk ids `text` cites as `[chunk n]`.
pub fn cited_chunks(text: &str) -> BTreeSet<i64> {
    CHUNK_MARKER
        .captures_iter(text)
        .filter_map(|c| c[1].parse().ok())
        .collect()
}

fn passages_text(ps: &[&Passage]) -> String {
    ps.iter()
        .map(|p| format!("[chunk {}]\n{}", p.chunk_id, p.text.trim()))
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn answer_prompt(question: &str, ps: &[&Passage]) -> String {
    format!(
        "Answer the question from the passages below only. Cite each passage you use as [chunk n] after the statement it supports. If the passages do not hold the answer, reply exactly {NOT_FOUND}.\n\nQuestion: {question}\n\nPassages:\n{}",
        passages_text(ps)
    )
}

fn map_prompt(question: &str, p: &Passage) -> String {
    format!(
        "From this one passage only, answer the question in one or two sentences, or reply exactly {NOT_FOUND} if the passage does not bear on it.\n\nQuestion: {question}\n\nPassage [chunk {}]:\n{}",
        p.chunk_id,
        p.text.trim()
    )
}

fn reduce_prompt(question: &str, parts: &[(String, String)]) -> String {
    let lines: Vec<String> = parts.iter().map(|(c, a)| format!("{c} {a}")).collect();
    format!(
        "Each line below answers the question from part of one document. Merge them into one answer, keeping the [chunk n] citations of what you use; where they disagree, say so. If none answers it, reply exactly {NOT_FOUND}.\n\nQuestion: {question}\n\nPartial answers:\n{}",
        lines.join("\n")
    )
}

fn refine_prompt(question: &str, so_far: &str, p: &Passage) -> String {
    format!(
        "An answer to the question, from the earlier passages of a document, is below, then the next passage. Refine the answer with what the passage adds, keeping its [chunk n] citations and citing this passage as [chunk {}] where you use it; keep the answer as it is if the passage adds nothing. Reply exactly {NOT_FOUND} only if neither the answer so far nor the passage answers the question.\n\nQuestion: {question}\n\nAnswer so far: {so_far}\n\nNext passage [chunk {}]:\n{}",
        p.chunk_id,
        p.chunk_id,
        p.text.trim()
    )
}

fn skim_prompt(question: &str, p: &Passage) -> String {
    format!(
        "Copy, word for word, the sentences of this passage that bear on the question (none if it does not). Do not paraphrase.\n\nQuestion: {question}\n\nPassage:\n{}\n\nReply with one JSON object: {{\"passages\": [\"...\"]}}.",
        p.text.trim()
    )
}

fn skim_schema() -> serde_json::Value {
    serde_json::json!({"type": "object", "properties": {"passages": {"type": "array", "items": {"type": "string"}}},
        "required": ["passages"], "additionalProperties": false})
}

/// Chunks in order while their tokens fit `budget`; the count left out.
fn fitting<'a>(ps: &[&'a Passage], budget: usize) -> (Vec<&'a Passage>, usize) {
    let mut used = 0;
    let mut out = Vec::new();
    for p in ps {
        if used + p.tokens > budget && !out.is_empty() {
            break;
        }
        used += p.tokens;
        out.push(*p);
    }
    let left = ps.len() - out.len();
    (out, left)
}

fn chunk_evidence(p: &Passage, score: Option<f64>) -> Evidence {
    Evidence {
        chunk_id: p.chunk_id,
        text: p.text.clone(),
        page: p.page,
        section: p.section.clone(),
        score,
        kind: "chunk".into(),
        verified: None,
        matched: None,
    }
}

/// The lexical embedder: a hashed bag of words (lower-cased letters and
/// digits, 1 + ln(tf) weights, 1,024 dimensions, L2-normalised). It needs
/// no model and gives the same vector on every machine, so a ranking made
/// with it replays exactly.
pub fn lexical_embedding(text: &str) -> Vec<f32> {
    const DIMS: usize = 1024;
    let mut counts: std::collections::HashMap<u64, f32> = std::collections::HashMap::new();
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1)
    {
        let w = w.to_lowercase();
        if STOP.contains(&w.as_str()) {
            continue;
        }
        *counts
            .entry(xxhash_rust::xxh3::xxh3_64(w.as_bytes()))
            .or_default() += 1.0;
    }
    let mut v = vec![0f32; DIMS];
    for (h, tf) in counts {
        v[(h % DIMS as u64) as usize] += 1.0 + tf.ln();
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// Words too common to tell passages apart.
const STOP: &[&str] = &[
    "the", "of", "and", "to", "in", "is", "was", "for", "on", "that", "with", "as", "by", "at",
    "an", "be", "are", "were", "this", "from", "or", "it", "its", "what", "which", "who", "how",
    "did", "does", "do", "their", "there", "than",
];

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

/// Reads `chunks` with reader `name` to answer `question`.
pub async fn read(
    name: &str,
    question: &str,
    chunks: &[Passage],
    s: &Settings,
    ask: &dyn Ask,
) -> Answer {
    let mut a = Answer::default();
    let all: Vec<&Passage> = chunks.iter().collect();
    let mut sent: BTreeSet<i64> = BTreeSet::new();
    let mut failures: Vec<String> = Vec::new();
    match name {
        "stuff" | "retrieve" | "preview" => {
            let (chosen, scores): (Vec<&Passage>, Vec<Option<f64>>) = match name {
                "retrieve" => {
                    let q = lexical_embedding(question);
                    let mut scored: Vec<(f64, &Passage)> = all
                        .iter()
                        .map(|p| (cosine(&q, &lexical_embedding(&p.text)), *p))
                        .collect();
                    scored
                        .sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.chunk_id.cmp(&y.1.chunk_id)));
                    scored.truncate(s.top_k.max(1));
                    // Sent in document order, scores kept.
                    scored.sort_by_key(|(_, p)| p.chunk_id);
                    scored.into_iter().map(|(sc, p)| (p, Some(sc))).unzip()
                }
                "preview" => all.iter().take(s.top_k.max(1)).map(|p| (*p, None)).unzip(),
                _ => all.iter().map(|p| (*p, None)).unzip(),
            };
            let (fit, left) = fitting(&chosen, s.budget_tokens);
            if left > 0 {
                a.notes.push(format!(
                    "dropped_chunks: {left} of {} chunks did not fit the model's context window ({} tokens of text)",
                    chosen.len(),
                    s.budget_tokens
                ));
            }
            if fit.is_empty() {
                a.notes
                    .push("empty: the document has no chunk to read".into());
            } else {
                a.calls += 1;
                let r = ask
                    .ask(
                        answer_prompt(question, &fit),
                        None,
                        format!("{name} answer"),
                    )
                    .await;
                sent.extend(fit.iter().map(|p| p.chunk_id));
                for (p, sc) in fit.iter().zip(&scores) {
                    a.evidence.push(chunk_evidence(p, *sc));
                }
                match (r.text, r.error) {
                    (Some(t), None) => a.answer = Some(t),
                    (_, e) => failures.push(e.unwrap_or_else(|| "no reply".into())),
                }
            }
        }
        "map_reduce" => {
            let mut parts: Vec<(String, String)> = Vec::new();
            for p in &all {
                a.calls += 1;
                let r = ask
                    .ask(
                        map_prompt(question, p),
                        None,
                        format!("map chunk {}", p.chunk_id),
                    )
                    .await;
                sent.insert(p.chunk_id);
                match (r.text, r.error) {
                    (Some(t), None) => {
                        if !is_not_found(&t) {
                            let mut e = chunk_evidence(p, None);
                            e.kind = "map_answer".into();
                            e.text = t.trim().to_string();
                            a.evidence.push(e);
                            parts.push((format!("[chunk {}]", p.chunk_id), t.trim().to_string()));
                        }
                    }
                    (_, e) => failures.push(e.unwrap_or_else(|| "no reply".into())),
                }
            }
            if parts.is_empty() {
                if failures.len() < all.len() {
                    a.answer = Some(NOT_FOUND.into());
                }
            } else {
                // The reduce tree: groups of answers that fit one request,
                // merged level by level until one answer is left.
                let mut level = 0;
                while parts.len() > 1 || level == 0 {
                    level += 1;
                    let mut groups: Vec<Vec<(String, String)>> = vec![vec![]];
                    let mut used = 0;
                    for part in parts.drain(..) {
                        let t = part.1.len() / 3 + 8;
                        if used + t > s.budget_tokens && !groups.last().expect("group").is_empty() {
                            groups.push(vec![]);
                            used = 0;
                        }
                        used += t;
                        groups.last_mut().expect("group").push(part);
                    }
                    let stuck = groups.len() == 1 && level > 1 && groups[0].len() > 1;
                    for (g, group) in groups.into_iter().enumerate() {
                        a.calls += 1;
                        let r = ask
                            .ask(
                                reduce_prompt(question, &group),
                                None,
                                format!("reduce level {level} group {}", g + 1),
                            )
                            .await;
                        match (r.text, r.error) {
                            (Some(t), None) => {
                                let cites: Vec<String> =
                                    group.iter().map(|(c, _)| c.clone()).collect();
                                parts.push((cites.join(" "), t.trim().to_string()));
                            }
                            (_, e) => {
                                a.notes.push(format!(
                                    "merge_fell_back: a reduce request failed ({}); its {} answers are joined as they are",
                                    e.unwrap_or_else(|| "no reply".into()),
                                    group.len()
                                ));
                                let joined: Vec<String> =
                                    group.iter().map(|(c, t)| format!("{t} {c}")).collect();
                                parts.push((String::new(), joined.join(" ")));
                            }
                        }
                    }
                    if stuck || level > 8 {
                        break;
                    }
                }
                let merged: Vec<String> = parts.into_iter().map(|(_, t)| t).collect();
                a.answer = Some(merged.join(" "));
            }
        }
        "refine" => {
            let mut so_far: Option<String> = None;
            for p in &all {
                a.calls += 1;
                let prompt = match &so_far {
                    None => answer_prompt(question, &[*p]),
                    Some(t) => refine_prompt(question, t, p),
                };
                let r = ask
                    .ask(prompt, None, format!("refine chunk {}", p.chunk_id))
                    .await;
                sent.insert(p.chunk_id);
                match (r.text, r.error) {
                    (Some(t), None) => so_far = Some(t.trim().to_string()),
                    (_, e) => failures.push(format!(
                        "chunk {}: {}",
                        p.chunk_id,
                        e.unwrap_or_else(|| "no reply".into())
                    )),
                }
            }
            a.answer = so_far;
        }
        "skim" => {
            let mut found: Vec<Passage> = Vec::new();
            let mut unverified = 0;
            for p in &all {
                a.calls += 1;
                let r = ask
                    .ask(
                        skim_prompt(question, p),
                        Some(skim_schema()),
                        format!("skim chunk {}", p.chunk_id),
                    )
                    .await;
                sent.insert(p.chunk_id);
                let text = match (r.text, r.error) {
                    (Some(t), None) => t,
                    (_, e) => {
                        failures.push(e.unwrap_or_else(|| "no reply".into()));
                        continue;
                    }
                };
                let quotes: Vec<String> = match serde_json::from_str::<serde_json::Value>(&text)
                    .ok()
                    .and_then(|v| v.get("passages").and_then(|x| x.as_array()).cloned())
                {
                    Some(q) => q
                        .iter()
                        .filter_map(|x| x.as_str().map(|s| s.trim().to_string()))
                        .filter(|s| !s.is_empty())
                        .collect(),
                    None => {
                        failures.push(format!(
                            "chunk {}: the reply is not a JSON object with a passages list",
                            p.chunk_id
                        ));
                        continue;
                    }
                };
                for q in quotes {
                    let m = quarry_udfs::quote_match::quote_match(&q, &p.text);
                    let ok = m >= 0.999;
                    if !ok {
                        unverified += 1;
                    }
                    a.evidence.push(Evidence {
                        chunk_id: p.chunk_id,
                        text: q.clone(),
                        page: p.page,
                        section: p.section.clone(),
                        score: None,
                        kind: "quote".into(),
                        verified: Some(ok),
                        matched: Some(m),
                    });
                    found.push(Passage {
                        text: q,
                        tokens: 0,
                        ..(*p).clone()
                    });
                }
            }
            if unverified > 0 {
                a.notes.push(format!(
                    "unverified_evidence: {unverified} quoted passage(s) are not in the chunk they are attributed to (see the evidence's matched)"
                ));
            }
            if found.is_empty() {
                if failures.len() < all.len() {
                    a.answer = Some(NOT_FOUND.into());
                }
            } else {
                a.calls += 1;
                let refs: Vec<&Passage> = found.iter().collect();
                let r = ask
                    .ask(answer_prompt(question, &refs), None, "skim answer".into())
                    .await;
                match (r.text, r.error) {
                    (Some(t), None) => a.answer = Some(t),
                    (_, e) => failures.push(e.unwrap_or_else(|| "no reply".into())),
                }
            }
        }
        other => a.notes.push(format!("error: no reader '{other}'")),
    }
    if !failures.is_empty() {
        a.notes.push(format!(
            "failed_calls: {} of {} requests failed (first: {})",
            failures.len(),
            a.calls,
            failures[0]
        ));
    }
    if let Some(t) = &a.answer {
        let unknown: Vec<String> = cited_chunks(t)
            .into_iter()
            .filter(|c| !sent.contains(c))
            .map(|c| c.to_string())
            .collect();
        if !unknown.is_empty() {
            a.notes.push(format!(
                "cited_unknown: the answer cites chunk(s) {} that no request carried",
                unknown.join(", ")
            ));
        }
        a.not_found = is_not_found(t);
    } else if a.notes.is_empty() {
        a.notes.push("error: no request answered".into());
    }
    a.partial = !a.notes.is_empty() || a.answer.is_none();
    a.chunks_used = sent.into_iter().collect();
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentinel_is_recognised_however_decorated_and_not_when_quoted() {
        for t in [
            "NOT_IN_DOCUMENT",
            "**NOT_IN_DOCUMENT.**",
            " not in document\n",
            "`NOT-IN-DOCUMENT`",
            "\"NOT_IN_DOCUMENT\"",
        ] {
            assert!(is_not_found(t), "{t}");
        }
        for t in [
            "The report says NOT_IN_DOCUMENT for Q4.",
            "Revenue was 45.2 million dollars.",
            "",
        ] {
            assert!(!is_not_found(t), "{t}");
        }
    }

    #[test]
    fn no_two_readers_share_a_signature() {
        let sigs: BTreeSet<&str> = READERS.iter().map(|r| r.signature).collect();
        assert_eq!(sigs.len(), READERS.len());
        for r in READERS {
            assert_eq!(r.signature.split('|').count(), 3, "{}", r.name);
        }
    }

    #[test]
    fn the_lexical_embedder_ranks_the_passage_that_shares_the_words() {
        let q = lexical_embedding("What was the revenue in 2024?");
        let hit = lexical_embedding("Revenue in fiscal 2024 was 45.2 million dollars.");
        let miss = lexical_embedding("The board met four times during the year.");
        assert!(cosine(&q, &hit) > cosine(&q, &miss));
        assert_eq!(lexical_embedding("a b c"), lexical_embedding("a b c"));
    }
}
