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

pub mod embed;
pub mod recipes;

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
        method: "the top_k chunks by cosine similarity of the embedder's vectors to the question (lexical unless embedder=api), in one request",
    },
    ReaderInfo {
        name: "rerank",
        signature: "topk|N+1|none",
        cost: "N, then 1",
        method: "every chunk scored 0-10 for the question by the model (pointwise LLM reranking); the top_k by score in one request (a chunk left unscored is ranked by cosine x 10: rerank_degraded)",
    },
    ReaderInfo {
        name: "hierarchical",
        signature: "all|N+S+1|tree",
        cost: "N, then one per section with two or more answering chunks (S), then 1 (none after the first N when no chunk answers)",
        method: "each chunk answered alone, the answers summarised per section (consecutive chunks under one heading), then one answer from the section summaries (hierarchical summarisation along the document's own structure)",
    },
    ReaderInfo {
        name: "iterative",
        signature: "topk|H|carry",
        cost: "at most max_hops (H, default 3)",
        method: "retrieve top_k by cosine, ask for an answer or the next thing to look for, retrieve top_k more for that, carrying what was found (iterative retrieval for multi-hop questions, as IRCoT); the last hop must answer",
    },
    ReaderInfo {
        name: "ensemble",
        signature: "union|M+1|vote",
        cost: "the member readers' requests (M), then 1 to judge them (none when no member answers)",
        method: "several readers (members=, default stuff+map_reduce+retrieve) answer independently; one request judges their answers against each other (universal self-consistency)",
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

    /// Vectors for `texts` (the question's when `query`), L2-normalised;
    /// an error when the embedder cannot give them (the reader then ranks
    /// with the lexical embedder and says so: `embed_fallback`). The
    /// lexical embedder unless the run names another.
    async fn embed(&self, texts: &[String], query: bool) -> Result<Vec<Vec<f32>>, String> {
        let _ = query;
        Ok(texts.iter().map(|t| lexical_embedding(t)).collect())
    }
}

/// How a reader reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Chunks `retrieve` and `preview` send.
    pub top_k: usize,
    /// Tokens of chunk text one request may carry (the context window,
    /// less the output cap and the instructions).
    pub budget_tokens: usize,
    /// Most requests `iterative` makes.
    pub max_hops: usize,
    /// The readers `ensemble` asks.
    pub members: Vec<String>,
}

impl Settings {
    /// The defaults for a context of `budget_tokens`.
    pub fn new(budget_tokens: usize) -> Self {
        Self {
            top_k: 4,
            budget_tokens,
            max_hops: 3,
            members: ["stuff", "map_reduce", "retrieve"]
                .map(String::from)
                .to_vec(),
        }
    }
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

fn rerank_prompt(question: &str, p: &Passage) -> String {
    format!(
        "How useful is this passage for answering the question? Score it from 0 (no bearing) to 10 (it holds the answer).\n\nQuestion: {question}\n\nPassage:\n{}\n\nReply with one JSON object: {{\"score\": n}}.",
        p.text.trim()
    )
}

fn score_schema() -> serde_json::Value {
    serde_json::json!({"type": "object", "properties": {"score": {"type": "number", "minimum": 0, "maximum": 10}},
        "required": ["score"], "additionalProperties": false})
}

/// The 0-10 score of a rerank reply, when it is one.
fn relevance_score(reply: &str) -> Option<f64> {
    let v: serde_json::Value = serde_json::from_str(reply.trim()).ok()?;
    v.get("score")?
        .as_f64()
        .filter(|x| (0.0..=10.0).contains(x))
}

fn section_prompt(question: &str, heading: &str, parts: &[(String, String)]) -> String {
    let lines: Vec<String> = parts.iter().map(|(c, a)| format!("{c} {a}")).collect();
    format!(
        "Each line below answers the question from one passage of the section '{heading}' of a document. Summarise what the section says on the question in a few sentences, keeping the [chunk n] citations of what you use.\n\nQuestion: {question}\n\nPartial answers:\n{}",
        lines.join("\n")
    )
}

fn sections_prompt(question: &str, summaries: &[(String, String, String)]) -> String {
    let lines: Vec<String> = summaries
        .iter()
        .map(|(h, c, t)| {
            if t.contains("[chunk") {
                format!("Section '{h}': {t}")
            } else {
                format!("Section '{h}': {t} {c}")
            }
        })
        .collect();
    format!(
        "Below is what each section of a document says on the question. Write the answer for the whole document, keeping the [chunk n] citations of what you use; where sections disagree, say so. If none answers it, reply exactly {NOT_FOUND}.\n\nQuestion: {question}\n\nSections:\n{}",
        lines.join("\n")
    )
}

fn iterative_prompt(question: &str, searches: &[String], ps: &[&Passage], last: bool) -> String {
    let earlier = if searches.is_empty() {
        String::new()
    } else {
        format!(
            "\n\nEarlier you asked to look for: {}.",
            searches
                .iter()
                .map(|q| format!("'{q}'"))
                .collect::<Vec<_>>()
                .join(", then ")
        )
    };
    let reply = if last {
        format!("This is the last step: reply with one JSON object {{\"answer\": \"...\"}}, citing each passage you use as [chunk n], or {{\"answer\": \"{NOT_FOUND}\"}} if the passages do not hold it.")
    } else {
        format!("If the passages answer the question, reply with one JSON object {{\"answer\": \"...\"}}, citing each passage you use as [chunk n]. If answering needs something they do not hold yet (a step of the question they leave open), reply {{\"search\": \"what to look for next, in a few words\"}}. If the document plainly cannot hold it, reply {{\"answer\": \"{NOT_FOUND}\"}}.")
    };
    format!(
        "Question: {question}{earlier}\n\nPassages found so far:\n{}\n\n{reply}",
        passages_text(ps)
    )
}

fn iterative_schema(last: bool) -> serde_json::Value {
    if last {
        serde_json::json!({"type": "object", "properties": {"answer": {"type": "string"}},
            "required": ["answer"], "additionalProperties": false})
    } else {
        serde_json::json!({"type": "object", "properties": {"answer": {"type": "string"}, "search": {"type": "string"}},
            "additionalProperties": false})
    }
}

/// An iterative hop's reply: an answer or the next search.
#[derive(Debug, PartialEq)]
enum Step {
    Answer(String),
    Search(String),
}

/// Reads a hop's reply; what is wrong with it when it is not the JSON
/// asked for.
fn iterative_step(reply: &str) -> Result<Step, &'static str> {
    let v: serde_json::Value =
        serde_json::from_str(reply.trim()).map_err(|_| "is not a JSON object")?;
    let field = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(str::to_string)
    };
    match (field("answer"), field("search")) {
        (Some(a), None) => Ok(Step::Answer(a)),
        (None, Some(q)) => Ok(Step::Search(q)),
        (Some(_), Some(_)) => Err("gives both an answer and a search"),
        (None, None) => Err("has neither an answer nor a search"),
    }
}

fn judge_prompt(question: &str, answers: &[(&str, String)]) -> String {
    let lines: Vec<String> = answers
        .iter()
        .enumerate()
        .map(|(i, (_, t))| format!("Reading {}: {}", i + 1, t.trim()))
        .collect();
    format!(
        "Several independent readings of one document answered the question as below. Give the answer the readings support, keeping the [chunk n] citations of what you use; where they disagree, say which reading says what and which the cited passages bear out. A reading of {NOT_FOUND} found nothing. If none answers it, reply exactly {NOT_FOUND}.\n\nQuestion: {question}\n\n{}",
        lines.join("\n")
    )
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

/// The cosine of two L2-normalised vectors (their dot product).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

/// One read in progress: what it asked, which chunks its requests
/// carried, what failed.
struct Run<'a> {
    ask: &'a dyn Ask,
    a: Answer,
    sent: BTreeSet<i64>,
    failures: Vec<String>,
}

/// A request: prompt, JSON schema, label.
type Req = (String, Option<serde_json::Value>, String);

impl Run<'_> {
    /// Sends `reqs` at once (the model layer's limiter bounds what is in
    /// flight) and gives each reply's text in order, `None` for a failure
    /// (recorded).
    async fn send(&mut self, reqs: Vec<Req>) -> Vec<Option<String>> {
        self.a.calls += reqs.len();
        let ask = self.ask;
        let replies = futures::future::join_all(reqs.into_iter().map(|(p, s, l)| async move {
            let r = ask.ask(p, s, l.clone()).await;
            (l, r)
        }))
        .await;
        replies
            .into_iter()
            .map(|(label, r)| match (r.text, r.error) {
                (Some(t), None) => Some(t),
                (_, e) => {
                    self.failures.push(format!(
                        "{label}: {}",
                        e.unwrap_or_else(|| "no reply".into())
                    ));
                    None
                }
            })
            .collect()
    }

    /// `among` ranked by cosine to `query` (best first, ties by position),
    /// with the run's embedder; the lexical one, noted once, when it
    /// cannot embed.
    async fn rank(&mut self, query: &str, among: &[&Passage]) -> Vec<(f64, usize)> {
        let texts: Vec<String> = among.iter().map(|p| p.text.clone()).collect();
        let got = match self.ask.embed(&[query.to_string()], true).await {
            Ok(q) => self.ask.embed(&texts, false).await.map(|v| (q, v)),
            Err(e) => Err(e),
        };
        let (q, vs) = match got {
            Ok((mut q, v)) if q.len() == 1 && v.len() == texts.len() => (q.remove(0), v),
            other => {
                if !self.a.notes.iter().any(|n| n.starts_with("embed_fallback")) {
                    let why = match other {
                        Err(e) => e,
                        Ok(_) => "the embedder gave the wrong number of vectors".into(),
                    };
                    self.a.notes.push(format!(
                        "embed_fallback: the embedder gave no vectors ({why}); the chunks are ranked by the lexical embedder"
                    ));
                }
                (
                    lexical_embedding(query),
                    texts.iter().map(|t| lexical_embedding(t)).collect(),
                )
            }
        };
        let mut scored: Vec<(f64, usize)> = vs
            .iter()
            .enumerate()
            .map(|(i, v)| (cosine(&q, v), i))
            .collect();
        scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        scored
    }

    async fn one(
        &mut self,
        prompt: String,
        schema: Option<serde_json::Value>,
        label: String,
    ) -> Option<String> {
        self.send(vec![(prompt, schema, label)])
            .await
            .pop()
            .flatten()
    }

    /// One answer from `chosen` (document order) in one request, as many
    /// chunks as fit; each sent chunk is evidence with its score.
    async fn answer_over(
        &mut self,
        label: &str,
        question: &str,
        chosen: &[(&Passage, Option<f64>)],
        budget: usize,
    ) {
        let ps: Vec<&Passage> = chosen.iter().map(|c| c.0).collect();
        let (fit, left) = fitting(&ps, budget);
        if left > 0 {
            self.a.notes.push(format!(
                "dropped_chunks: {left} of {} chunks did not fit the model's context window ({budget} tokens of text)",
                chosen.len()
            ));
        }
        if fit.is_empty() {
            self.a
                .notes
                .push("empty: the document has no chunk to read".into());
            return;
        }
        self.sent.extend(fit.iter().map(|p| p.chunk_id));
        for (p, sc) in chosen.iter().take(fit.len()) {
            self.a.evidence.push(chunk_evidence(p, *sc));
        }
        self.a.answer = self
            .one(
                answer_prompt(question, &fit),
                None,
                format!("{label} answer"),
            )
            .await;
    }

    /// Each chunk answered alone, at once; the answers that are not the
    /// sentinel, with their chunk (as `map_answer` evidence when asked).
    async fn map<'p>(
        &mut self,
        question: &str,
        ps: &[&'p Passage],
        evidence: bool,
    ) -> Vec<(&'p Passage, String)> {
        let reqs = ps
            .iter()
            .map(|p| {
                (
                    map_prompt(question, p),
                    None,
                    format!("map chunk {}", p.chunk_id),
                )
            })
            .collect();
        let replies = self.send(reqs).await;
        self.sent.extend(ps.iter().map(|p| p.chunk_id));
        let mut out = Vec::new();
        for (p, r) in ps.iter().zip(replies) {
            let Some(t) = r.filter(|t| !is_not_found(t)) else {
                continue;
            };
            if evidence {
                let mut e = chunk_evidence(p, None);
                e.kind = "map_answer".into();
                e.text = t.trim().to_string();
                self.a.evidence.push(e);
            }
            out.push((*p, t.trim().to_string()));
        }
        out
    }

    /// What an empty map leaves: the sentinel when some request answered,
    /// nothing when all failed.
    fn nothing_found(&mut self, asked: usize) {
        if self.failures.len() < asked {
            self.a.answer = Some(NOT_FOUND.into());
        }
    }

    /// Merges `(citations, answer)` parts: groups that fit one request,
    /// merged level by level (the groups of a level at once) until one
    /// answer is left. A failed merge joins its group's answers as they
    /// are (`merge_fell_back`).
    async fn reduce(
        &mut self,
        question: &str,
        mut parts: Vec<(String, String)>,
        budget: usize,
    ) -> String {
        let mut level = 0;
        while parts.len() > 1 || level == 0 {
            level += 1;
            let mut groups: Vec<Vec<(String, String)>> = vec![vec![]];
            let mut used = 0;
            for part in parts.drain(..) {
                let t = part.1.len() / 3 + 8;
                if used + t > budget && !groups.last().expect("group").is_empty() {
                    groups.push(vec![]);
                    used = 0;
                }
                used += t;
                groups.last_mut().expect("group").push(part);
            }
            let stuck = groups.len() == 1 && level > 1 && groups[0].len() > 1;
            let reqs = groups
                .iter()
                .enumerate()
                .map(|(g, group)| {
                    (
                        reduce_prompt(question, group),
                        None,
                        format!("reduce level {level} group {}", g + 1),
                    )
                })
                .collect();
            let replies = self.send(reqs).await;
            for (group, r) in groups.into_iter().zip(replies) {
                parts.push(self.merged(group, r, "a reduce request"));
            }
            if stuck || level > 8 {
                break;
            }
        }
        let merged: Vec<String> = parts.into_iter().map(|(_, t)| t).collect();
        merged.join(" ")
    }

    /// A merge's result, or its parts joined as they are when the merge
    /// request failed.
    fn merged(
        &mut self,
        group: Vec<(String, String)>,
        reply: Option<String>,
        what: &str,
    ) -> (String, String) {
        let cites: Vec<String> = group.iter().map(|(c, _)| c.clone()).collect();
        match reply {
            Some(t) => (cites.join(" "), t.trim().to_string()),
            None => {
                self.a.notes.push(format!(
                    "merge_fell_back: {what} failed; its {} answers are joined as they are",
                    group.len()
                ));
                let joined: Vec<String> = group.iter().map(|(c, t)| format!("{t} {c}")).collect();
                (cites.join(" "), joined.join(" "))
            }
        }
    }
}

/// Reads `chunks` with reader `name` to answer `question`.
pub async fn read(
    name: &str,
    question: &str,
    chunks: &[Passage],
    s: &Settings,
    ask: &dyn Ask,
) -> Answer {
    let mut run = Run {
        ask,
        a: Answer::default(),
        sent: BTreeSet::new(),
        failures: Vec::new(),
    };
    let all: Vec<&Passage> = chunks.iter().collect();
    match name {
        "stuff" => {
            let chosen: Vec<(&Passage, Option<f64>)> = all.iter().map(|p| (*p, None)).collect();
            run.answer_over(name, question, &chosen, s.budget_tokens)
                .await;
        }
        "preview" => {
            let chosen: Vec<(&Passage, Option<f64>)> = all
                .iter()
                .take(s.top_k.max(1))
                .map(|p| (*p, None))
                .collect();
            run.answer_over(name, question, &chosen, s.budget_tokens)
                .await;
        }
        "retrieve" => {
            let mut top = run.rank(question, &all).await;
            top.truncate(s.top_k.max(1));
            // Sent in document order, scores kept.
            top.sort_by_key(|(_, i)| *i);
            let chosen: Vec<(&Passage, Option<f64>)> =
                top.iter().map(|(sc, i)| (all[*i], Some(*sc))).collect();
            run.answer_over(name, question, &chosen, s.budget_tokens)
                .await;
        }
        "rerank" => {
            let reqs = all
                .iter()
                .map(|p| {
                    (
                        rerank_prompt(question, p),
                        Some(score_schema()),
                        format!("score chunk {}", p.chunk_id),
                    )
                })
                .collect();
            let replies = run.send(reqs).await;
            run.sent.extend(all.iter().map(|p| p.chunk_id));
            let mut unscored = 0;
            let by_cosine: Vec<f64> = {
                let mut c = vec![0.0; all.len()];
                if replies
                    .iter()
                    .any(|r| r.as_deref().and_then(relevance_score).is_none())
                {
                    for (sc, i) in run.rank(question, &all).await {
                        c[i] = sc;
                    }
                }
                c
            };
            let mut scored: Vec<(f64, usize)> = replies
                .iter()
                .enumerate()
                .map(|(i, r)| match r.as_deref().and_then(relevance_score) {
                    Some(x) => (x, i),
                    None => {
                        unscored += 1;
                        (10.0 * by_cosine[i], i)
                    }
                })
                .collect();
            if unscored > 0 {
                run.a.notes.push(format!(
                    "rerank_degraded: {unscored} of {} chunks got no score from the model (a failed request, or a reply that is not {{\"score\": 0-10}}); they are ranked by the embedder's cosine x 10",
                    all.len()
                ));
            }
            scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
            scored.truncate(s.top_k.max(1));
            scored.sort_by_key(|(_, i)| *i);
            let chosen: Vec<(&Passage, Option<f64>)> =
                scored.iter().map(|(sc, i)| (all[*i], Some(*sc))).collect();
            if !chosen.is_empty() {
                run.answer_over(name, question, &chosen, s.budget_tokens)
                    .await;
            }
        }
        "map_reduce" => {
            let parts: Vec<(String, String)> = run
                .map(question, &all, true)
                .await
                .into_iter()
                .map(|(p, t)| (format!("[chunk {}]", p.chunk_id), t))
                .collect();
            if parts.is_empty() {
                run.nothing_found(all.len());
            } else {
                run.a.answer = Some(run.reduce(question, parts, s.budget_tokens).await);
            }
        }
        "hierarchical" => {
            let answered = run.map(question, &all, false).await;
            if answered.is_empty() {
                run.nothing_found(all.len());
            } else {
                // Consecutive answers under one heading are one section.
                let mut sections: Vec<(String, Vec<(String, String)>)> = Vec::new();
                for (p, t) in answered {
                    let heading = p.section.clone().unwrap_or_else(|| "(no heading)".into());
                    let part = (format!("[chunk {}]", p.chunk_id), t);
                    match sections.last_mut() {
                        Some((h, parts)) if *h == heading => parts.push(part),
                        _ => sections.push((heading, vec![part])),
                    }
                }
                let reqs: Vec<Req> = sections
                    .iter()
                    .filter(|(_, parts)| parts.len() > 1)
                    .map(|(h, parts)| {
                        (
                            section_prompt(question, h, parts),
                            None,
                            format!("section {h}"),
                        )
                    })
                    .collect();
                let mut replies = run.send(reqs).await.into_iter();
                let mut summaries: Vec<(String, String, String)> = Vec::new();
                for (h, mut parts) in sections {
                    let (c, t) = if parts.len() > 1 {
                        let r = replies.next().flatten();
                        run.merged(parts, r, &format!("the summary of section '{h}'"))
                    } else {
                        parts.pop().expect("one part")
                    };
                    summaries.push((h, c, t));
                }
                run.a.answer = run
                    .one(
                        sections_prompt(question, &summaries),
                        None,
                        "hierarchical answer".into(),
                    )
                    .await;
            }
        }
        "refine" => {
            let mut so_far: Option<String> = None;
            for p in &all {
                let prompt = match &so_far {
                    None => answer_prompt(question, &[*p]),
                    Some(t) => refine_prompt(question, t, p),
                };
                run.sent.insert(p.chunk_id);
                if let Some(t) = run
                    .one(prompt, None, format!("refine chunk {}", p.chunk_id))
                    .await
                {
                    so_far = Some(t.trim().to_string());
                }
            }
            run.a.answer = so_far;
        }
        "skim" => {
            let reqs = all
                .iter()
                .map(|p| {
                    (
                        skim_prompt(question, p),
                        Some(skim_schema()),
                        format!("skim chunk {}", p.chunk_id),
                    )
                })
                .collect();
            let replies = run.send(reqs).await;
            run.sent.extend(all.iter().map(|p| p.chunk_id));
            let mut found: Vec<Passage> = Vec::new();
            let mut unverified = 0;
            for (p, text) in all.iter().zip(replies) {
                let Some(text) = text else { continue };
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
                        run.failures.push(format!(
                            "skim chunk {}: the reply is not a JSON object with a passages list",
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
                    run.a.evidence.push(Evidence {
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
                run.a.notes.push(format!(
                    "unverified_evidence: {unverified} quoted passage(s) are not in the chunk they are attributed to (see the evidence's matched)"
                ));
            }
            if found.is_empty() {
                run.nothing_found(all.len());
            } else {
                let refs: Vec<&Passage> = found.iter().collect();
                run.a.answer = run
                    .one(answer_prompt(question, &refs), None, "skim answer".into())
                    .await;
            }
        }
        "iterative" => {
            let hops = s.max_hops.max(1);
            let mut have: Vec<(usize, f64)> = Vec::new();
            let mut searches: Vec<String> = Vec::new();
            let mut query = question.to_string();
            let mut dropped = false;
            for hop in 1..=hops {
                let fresh: Vec<(f64, usize)> = run
                    .rank(&query, &all)
                    .await
                    .into_iter()
                    .filter(|(_, i)| !have.iter().any(|(j, _)| j == i))
                    .take(s.top_k.max(1))
                    .collect();
                have.extend(fresh.into_iter().map(|(sc, i)| (i, sc)));
                have.sort_by_key(|(i, _)| *i);
                let ps: Vec<&Passage> = have.iter().map(|(i, _)| all[*i]).collect();
                let (fit, left) = fitting(&ps, s.budget_tokens);
                if left > 0 && !dropped {
                    dropped = true;
                    run.a.notes.push(format!(
                        "dropped_chunks: by hop {hop}, {left} of the {} chunks found did not fit the model's context window ({} tokens of text)",
                        ps.len(),
                        s.budget_tokens
                    ));
                }
                if fit.is_empty() {
                    run.a
                        .notes
                        .push("empty: the document has no chunk to read".into());
                    break;
                }
                run.sent.extend(fit.iter().map(|p| p.chunk_id));
                let last = hop == hops || have.len() == all.len();
                let Some(t) = run
                    .one(
                        iterative_prompt(question, &searches, &fit, last),
                        Some(iterative_schema(last)),
                        format!("hop {hop}"),
                    )
                    .await
                else {
                    break;
                };
                match iterative_step(&t) {
                    Ok(Step::Answer(x)) => {
                        run.a.answer = Some(x);
                        break;
                    }
                    Ok(Step::Search(q)) if !last => {
                        searches.push(q.clone());
                        query = q;
                    }
                    Ok(Step::Search(q)) => {
                        run.a.notes.push(format!(
                            "iterative_degraded: hop {hop} was the last and was asked for an answer, but asked to search again ('{q}'); there is no answer"
                        ));
                        break;
                    }
                    Err(problem) => {
                        run.a.notes.push(format!(
                            "iterative_degraded: hop {hop}'s reply {problem}; the reply is taken as the answer as it stands"
                        ));
                        run.a.answer = Some(t);
                        break;
                    }
                }
            }
            for (i, sc) in &have {
                if run.sent.contains(&all[*i].chunk_id) {
                    run.a.evidence.push(chunk_evidence(all[*i], Some(*sc)));
                }
            }
        }
        "ensemble" => ensemble(&mut run, question, chunks, s).await,
        other => run.a.notes.push(format!("error: no reader '{other}'")),
    }
    finish(run)
}

/// The ensemble: each member reader's answer (members read at once), then
/// one request that judges them against each other.
async fn ensemble(run: &mut Run<'_>, question: &str, chunks: &[Passage], s: &Settings) {
    let members: Vec<&str> = s.members.iter().map(String::as_str).collect();
    if let Some(bad) = members
        .iter()
        .find(|m| **m == "ensemble" || reader(m).is_none())
    {
        run.a.notes.push(format!(
            "error: '{bad}' cannot be a member of an ensemble (members are other readers)"
        ));
        return;
    }
    let distinct: BTreeSet<&str> = members.iter().copied().collect();
    if distinct.len() < 2 {
        run.a.notes.push(format!(
            "ensemble_degenerate: {} distinct member reader(s); nothing is cross-checked",
            distinct.len()
        ));
    }
    let ask = run.ask;
    let reads = futures::future::join_all(
        members
            .iter()
            .map(|m| Box::pin(read(m, question, chunks, s, ask))),
    )
    .await;
    let mut answers: Vec<(&str, String)> = Vec::new();
    for (m, sub) in members.iter().zip(reads) {
        run.a.calls += sub.calls;
        run.sent.extend(sub.chunks_used.iter().copied());
        for n in &sub.notes {
            let (kind, detail) = n.split_once(": ").unwrap_or(("note", n));
            run.a.notes.push(format!("{kind}: [{m}] {detail}"));
        }
        for e in sub.evidence {
            // One passage found by two members is one piece of evidence
            // (with the score one of them gave it).
            match run
                .a
                .evidence
                .iter_mut()
                .find(|x| x.chunk_id == e.chunk_id && x.kind == e.kind && x.text == e.text)
            {
                Some(x) => x.score = x.score.or(e.score),
                None => run.a.evidence.push(e),
            }
        }
        if let Some(t) = sub.answer {
            answers.push((m, t));
        }
    }
    run.a.evidence.sort_by_key(|e| e.chunk_id);
    if answers.is_empty() {
        return;
    }
    if answers.iter().all(|(_, t)| is_not_found(t)) {
        run.a.answer = Some(NOT_FOUND.into());
        return;
    }
    run.a.answer = run
        .one(judge_prompt(question, &answers), None, "judge".into())
        .await;
}

/// The notes every read ends with: failures, unknown citations, partial.
fn finish(mut run: Run<'_>) -> Answer {
    let a = &mut run.a;
    if !run.failures.is_empty() {
        a.notes.push(format!(
            "failed_calls: {} of {} requests failed (first: {})",
            run.failures.len(),
            a.calls,
            run.failures[0]
        ));
    }
    if let Some(t) = &a.answer {
        let unknown: Vec<String> = cited_chunks(t)
            .into_iter()
            .filter(|c| !run.sent.contains(c))
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
    a.chunks_used = std::mem::take(&mut run.sent).into_iter().collect();
    run.a
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
