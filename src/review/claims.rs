//! Claims with provenance (seed 004): a claims spec (TOML or JSON, checked
//! like a protocol and hashed) gives the instructions and narrows what a
//! draft may say (kinds, predicates, context keys); the model answers each
//! chunk with drafts; code reads every draft, checks it against the spec,
//! finds its quote in the chunk it was sent with (exactly after folding,
//! else difflib at 0.9, snapped to whole sentences) and computes its id and
//! span. A draft that fails is a rejection with a code and its problems,
//! never a claim and never dropped.
//!
//! `claim_id` digests the document, kind, subject, predicate, object,
//! polarity, the sorted context, the quantity's verbatim text, the span
//! and the schema hash; the model, prompt and release are the `stamp`,
//! never part of the id, so extracting again with another model gives the
//! same ids wherever the fields agree.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::protocol::{shared_settings, Problems, SegmentSpec};
use crate::error::{QuarryError, Result};

/// The claims steps, as shipped in `sql/claims.sql`.
pub const CLAIMS_SQL: &str = include_str!("../../sql/claims.sql");

/// The kinds of claim.
pub const KINDS: &[&str] = &["measurement", "assertion"];

/// A validated claims spec.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimsSpec {
    /// Its name.
    pub name: String,
    /// What to list, as the model is told.
    pub instructions: String,
    /// The kinds a draft may have (both unless narrowed).
    pub kinds: Vec<String>,
    /// The predicates a draft may use (any when empty).
    pub predicates: Vec<String>,
    /// The context keys a draft may give (any when empty).
    pub context_keys: Vec<String>,
    /// Corpus options.
    pub ingest: String,
    /// Segmentation.
    pub segment: SegmentSpec,
    /// The model, when the spec fixes one.
    pub model: Option<String>,
    /// The output cap per request.
    pub max_output: Option<u64>,
    /// The sampling temperature.
    pub temperature: Option<f64>,
}

const TOP: &[&str] = &[
    "name",
    "instructions",
    "kinds",
    "predicates",
    "context_keys",
    "ingest",
    "segment",
    "model",
];

impl ClaimsSpec {
    /// Loads a `.toml` or `.json` claims spec.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            QuarryError::Invalid(format!(
                "claims spec {}: cannot read it: {e}",
                path.display()
            ))
        })?;
        let json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        Self::parse(&text, json)
            .map_err(|e| QuarryError::Invalid(format!("claims spec {}: {e}", path.display())))
    }

    /// Parses and checks a spec's text; every problem is named.
    pub fn parse(text: &str, json: bool) -> std::result::Result<Self, String> {
        let v: Value = if json {
            serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?
        } else {
            let t: toml::Table =
                toml::from_str(text).map_err(|e| format!("not valid TOML: {e}"))?;
            serde_json::to_value(t).map_err(|e| e.to_string())?
        };
        let Some(obj) = v.as_object() else {
            return Err("the claims spec must be a table of settings".into());
        };
        let mut p = Problems::default();
        for k in obj.keys().filter(|k| !TOP.contains(&k.as_str())) {
            p.add(format!(
                "unknown setting '{k}' (settings: {})",
                TOP.join(", ")
            ));
        }
        let name = p.string(&v, "name", true).unwrap_or_default();
        let instructions = p.string(&v, "instructions", true).unwrap_or_default();
        let mut kinds = p.strings(&v, "kinds");
        for k in &kinds {
            if !KINDS.contains(&k.as_str()) {
                p.add(format!(
                    "kinds: '{k}' is not a kind of claim (measurement, assertion)"
                ));
            }
        }
        if kinds.is_empty() {
            kinds = KINDS.iter().map(|k| k.to_string()).collect();
        }
        let predicates = p.strings(&v, "predicates");
        let context_keys = p.strings(&v, "context_keys");
        for (what, list) in [("predicates", &predicates), ("context_keys", &context_keys)] {
            let mut seen = std::collections::HashSet::new();
            for x in list {
                if x.trim().is_empty() {
                    p.add(format!("{what}: an entry is empty"));
                } else if !seen.insert(x) {
                    p.add(format!("{what}: '{x}' is listed twice"));
                }
            }
        }
        let shared = shared_settings(&mut p, &v);
        if !p.0.is_empty() {
            return Err(format!("{} problem(s): {}", p.0.len(), p.0.join("; ")));
        }
        Ok(Self {
            name,
            instructions,
            kinds,
            predicates,
            context_keys,
            ingest: shared.ingest,
            segment: shared.segment,
            model: shared.model,
            max_output: shared.max_output,
            temperature: shared.temperature,
        })
    }

    /// The first 16 hex digits of the SHA-256 of the checked spec.
    pub fn short_hash(&self) -> String {
        short(&serde_json::to_vec(self).expect("serialises"))
    }

    /// The JSON schema of one draft, narrowed by the spec.
    pub fn draft_schema(&self) -> Value {
        let text = json!({"type": "string"});
        let opt_text = json!({"type": ["string", "null"]});
        let opt_number = json!({"type": ["number", "null"]});
        let mut predicate = text.clone();
        if !self.predicates.is_empty() {
            predicate["enum"] = json!(self.predicates);
        }
        let mut context = json!({"type": ["object", "null"],
            "additionalProperties": {"type": ["string", "number", "boolean"]}});
        if !self.context_keys.is_empty() {
            context["propertyNames"] = json!({"enum": self.context_keys});
        }
        json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": self.kinds},
                "subject": text,
                "predicate": predicate,
                "object": opt_text,
                "polarity": {"type": ["string", "null"], "enum": ["positive", "negative", null]},
                "quantity": {"type": ["object", "null"], "properties": {
                    "verbatim": text, "value": opt_number, "unit_text": opt_text,
                    "qualifier": opt_text, "uncertainty": opt_text
                }, "required": ["verbatim"], "additionalProperties": false},
                "statistics": {"type": ["object", "null"], "properties": {
                    "effect_size": opt_number, "effect_kind": opt_text,
                    "ci_lower": opt_number, "ci_upper": opt_number, "ci_level": opt_number,
                    "p_value": opt_number, "test_statistic": opt_number, "test_kind": opt_text,
                    "group_sizes": {"type": ["array", "null"], "items": {"type": "integer"}}
                }, "additionalProperties": false},
                "context": context,
                "quote": text
            },
            "required": ["kind", "subject", "predicate", "quote"],
            "additionalProperties": false
        })
    }

    /// The JSON schema of one reply: `{"claims": [draft, ...]}`.
    pub fn reply_schema(&self) -> Value {
        json!({"type": "object",
               "properties": {"claims": {"type": "array", "items": self.draft_schema()}},
               "required": ["claims"], "additionalProperties": false})
    }

    /// The first 16 hex digits of the SHA-256 of the draft schema: part of
    /// every claim's id.
    pub fn schema_hash(&self) -> String {
        short(self.draft_schema().to_string().as_bytes())
    }

    /// The instructions sent before each chunk.
    pub fn prompt(&self) -> String {
        let mut s =
            String::from("You are listing claims made in a document, for a research synthesis.\n");
        s.push_str(&format!("Task: {}\n", self.instructions));
        s.push_str(&format!(
            "A claim is one of: {}. ",
            self.kinds
                .iter()
                .map(|k| match k.as_str() {
                    "measurement" =>
                        "a measurement (a value the excerpt reports, with its quantity)",
                    _ => "an assertion (a statement relating a subject to an object)",
                })
                .collect::<Vec<_>>()
                .join("; ")
        ));
        if !self.predicates.is_empty() {
            s.push_str(&format!(
                "Use only these predicates: {}. ",
                self.predicates.join(", ")
            ));
        }
        if !self.context_keys.is_empty() {
            s.push_str(&format!(
                "Context may only use these keys: {}. ",
                self.context_keys.join(", ")
            ));
        }
        s.push_str(
            "For each claim give kind, subject (as the excerpt names it), predicate, object (assertions), \
             polarity (positive or negative), quantity (measurements: verbatim as written, value as a number, \
             unit_text, qualifier, uncertainty), statistics when reported (effect_size, effect_kind, ci_lower, \
             ci_upper, ci_level, p_value, test_statistic, test_kind, group_sizes), context (conditions as key-value \
             pairs) and quote: the sentence of the excerpt that states it, copied word for word. List only what the \
             excerpt states; never use knowledge from outside it. Reply with one JSON object: {\"claims\": [...]} \
             (an empty list when the excerpt states none).\n\nExcerpt:\n\"\"\"\n",
        );
        s
    }

    /// The first 16 hex digits of the SHA-256 of the instructions.
    pub fn prompt_hash(&self) -> String {
        short(self.prompt().as_bytes())
    }

    /// The rules drafts are read by.
    pub fn rules(&self) -> Rules {
        Rules {
            kinds: self.kinds.clone(),
            predicates: self.predicates.clone(),
            context_keys: self.context_keys.clone(),
            schema_hash: self.schema_hash(),
        }
    }
}

/// `sql/claims.sql` rendered for `src` and `spec`; `model` is the model
/// the requests name (the stamp's).
pub fn render_claims(src: &str, spec: &ClaimsSpec, model: &str) -> String {
    use super::sql_text;
    let llm = super::model_options(spec.model.as_deref(), spec.max_output, spec.temperature);
    let seg = &spec.segment;
    let (src, ingest) = (sql_text(src), sql_text(&spec.ingest));
    let chunk_source = format!(
        "chunks('{src}', '{}', {}, {}, '{ingest}')",
        seg.method, seg.max_tokens, seg.overlap_tokens
    );
    let block_source = format!("blocks('{src}', '{ingest}')");
    let prompt = format!("'{}'", sql_text(&spec.prompt()));
    let rules = sql_text(&serde_json::to_string(&spec.rules()).expect("serialises"));
    super::fill(
        CLAIMS_SQL,
        &[
            ("chunk_source", &chunk_source),
            ("block_source", &block_source),
            ("src", &src),
            ("ingest", &ingest),
            ("prompt", &prompt),
            ("schema", &sql_text(&spec.reply_schema().to_string())),
            ("llm_options", &sql_text(&llm)),
            ("rules", &rules),
            ("model", &sql_text(model)),
            ("prompt_hash", &spec.prompt_hash()),
            ("schema_hash", &spec.schema_hash()),
            ("spec_hash", &spec.short_hash()),
            ("spec_name", &sql_text(&spec.name)),
            ("release", env!("CARGO_PKG_VERSION")),
        ],
    )
}

fn short(bytes: &[u8]) -> String {
    hex::encode(&Sha256::digest(bytes)[..8])
}

/// What a draft is checked against.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Rules {
    /// Allowed kinds.
    pub kinds: Vec<String>,
    /// Allowed predicates (any when empty).
    pub predicates: Vec<String>,
    /// Allowed context keys (any when empty).
    pub context_keys: Vec<String>,
    /// The schema hash claim ids carry.
    pub schema_hash: String,
}

/// A draft's number as the paper writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Quantity {
    /// As written (`2.9 kpc`).
    pub verbatim: String,
    /// The number.
    pub value: Option<f64>,
    /// The unit as written.
    pub unit_text: Option<String>,
    /// `about`, `<`, `at least`.
    pub qualifier: Option<String>,
    /// `± 0.3`.
    pub uncertainty: Option<String>,
}

/// A draft's statistics, each optional.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Statistics {
    /// The effect size.
    pub effect_size: Option<f64>,
    /// Its kind (`odds ratio`, `mean difference`).
    pub effect_kind: Option<String>,
    /// Lower confidence bound.
    pub ci_lower: Option<f64>,
    /// Upper confidence bound.
    pub ci_upper: Option<f64>,
    /// The interval's level (0.95).
    pub ci_level: Option<f64>,
    /// The p value.
    pub p_value: Option<f64>,
    /// The test statistic.
    pub test_statistic: Option<f64>,
    /// Its kind (`t`, `chi-square`).
    pub test_kind: Option<String>,
    /// Group sizes.
    pub group_sizes: Option<Vec<i64>>,
}

/// One context pair.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ContextPair {
    /// The key.
    pub key: String,
    /// The value as text.
    pub value: String,
}

/// One draft read: a claim (`code` is `None`) or a rejection.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Drafted {
    /// `None` for a claim; else `ungrounded`, `invalid`, `unreadable`
    /// (the reply could not be read) or `failed` (the request failed).
    pub code: Option<&'static str>,
    /// The claim's id (claims only).
    pub claim_id: Option<String>,
    /// `measurement` or `assertion`.
    pub kind: Option<String>,
    /// What the claim is about.
    pub subject: Option<String>,
    /// What is said of it.
    pub predicate: Option<String>,
    /// The object (assertions).
    pub object: Option<String>,
    /// `positive` (the default) or `negative`.
    pub polarity: Option<String>,
    /// The quantity (measurements).
    pub quantity: Option<Quantity>,
    /// The statistics.
    pub statistics: Option<Statistics>,
    /// The context, sorted by key.
    pub context: Vec<ContextPair>,
    /// The quote as the model gave it.
    pub quote: Option<String>,
    /// Document offsets (chars) of the sentences the quote was found in.
    pub char_start: Option<i64>,
    /// End of those sentences.
    pub char_end: Option<i64>,
    /// 1.0 for an exact match after folding, else difflib's ratio.
    #[serde(rename = "match")]
    pub match_ratio: Option<f64>,
    /// The draft as the model wrote it (rejections).
    pub draft: Option<String>,
    /// What is wrong (rejections), each naming where.
    pub problems: Vec<String>,
    /// Its place among the reply's drafts (from 0).
    pub ordinal: i32,
}

/// The chunk a reply answers.
#[derive(Debug, Clone, Copy)]
pub struct Chunk<'a> {
    /// Its document.
    pub document_id: &'a str,
    /// Its text, as sent.
    pub text: &'a str,
    /// Its first char's offset in the document.
    pub char_start: i64,
}

/// Every draft of one reply, read: claims and rejections in the reply's
/// order; one rejection for a failed request or a reply that cannot be
/// read as `{"claims": [...]}` (with the reader's problems).
pub fn read_drafts(
    reply: Option<&str>,
    ok: bool,
    error: Option<&str>,
    chunk: Chunk,
    rules: &Rules,
    reply_schema: &Value,
) -> Vec<Drafted> {
    let whole = |code, problems: Vec<String>| Drafted {
        code: Some(code),
        draft: reply.map(str::to_string),
        problems,
        ..Default::default()
    };
    if !ok && reply.is_some_and(|r| !r.trim().is_empty()) {
        // An answer the client could not accept as asked (not JSON, a key
        // missing): the reply is kept with what is wrong with it.
        let mut problems = vec![format!(
            "reply: {}",
            error.unwrap_or("not readable as asked")
        )];
        let reading =
            quarry_udfs::parse_reply::parse_reply(reply.unwrap_or_default(), reply_schema);
        problems.extend(
            reading
                .problems
                .iter()
                .filter(|p| p.severity == "error")
                .map(|p| format!("{}: {}", p.place, p.problem)),
        );
        return vec![whole("unreadable", problems)];
    }
    if !ok {
        return vec![whole(
            "failed",
            vec![format!(
                "request: {}",
                error.unwrap_or("the request failed and gave no reason")
            )],
        )];
    }
    let Some(reply) = reply else {
        return vec![whole("unreadable", vec!["reply: empty".into()])];
    };
    let reading = quarry_udfs::parse_reply::parse_reply(reply, reply_schema);
    let Some(value) = reading.value else {
        return vec![whole(
            "unreadable",
            reading
                .problems
                .iter()
                .map(|p| format!("{}: {}", p.place, p.problem))
                .collect(),
        )];
    };
    let Some(drafts) = value.get("claims").and_then(Value::as_array) else {
        return vec![whole(
            "unreadable",
            vec!["key claims: missing or not a list of drafts".into()],
        )];
    };
    drafts
        .iter()
        .enumerate()
        .map(|(i, d)| Drafted {
            ordinal: i as i32,
            ..read_draft(i, d, chunk, rules)
        })
        .collect()
}

/// One draft checked, located and given its id.
fn read_draft(i: usize, d: &Value, chunk: Chunk, rules: &Rules) -> Drafted {
    let at = format!("claims[{i}]");
    let mut problems: Vec<String> = Vec::new();
    let mut out = Drafted {
        draft: Some(d.to_string()),
        ..Default::default()
    };
    let Some(obj) = d.as_object() else {
        out.code = Some("invalid");
        out.problems = vec![format!("{at}: a draft must be an object, got {d}")];
        return out;
    };
    const KEYS: &[&str] = &[
        "kind",
        "subject",
        "predicate",
        "object",
        "polarity",
        "quantity",
        "statistics",
        "context",
        "quote",
    ];
    for k in obj.keys().filter(|k| !KEYS.contains(&k.as_str())) {
        problems.push(format!("{at}.{k}: the schema has no such key"));
    }
    let text = |key: &str, required: bool, problems: &mut Vec<String>| -> Option<String> {
        match obj.get(key) {
            None | Some(Value::Null) => {
                if required {
                    problems.push(format!("{at}.{key}: missing: the schema requires it"));
                }
                None
            }
            Some(Value::String(s)) if s.trim().is_empty() => {
                if required {
                    problems.push(format!("{at}.{key}: empty"));
                }
                None
            }
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                problems.push(format!("{at}.{key}: expected text, got {other}"));
                None
            }
        }
    };
    out.kind = text("kind", true, &mut problems);
    out.subject = text("subject", true, &mut problems);
    out.predicate = text("predicate", true, &mut problems);
    out.object = text("object", false, &mut problems);
    out.polarity = text("polarity", false, &mut problems).or(Some("positive".into()));
    out.quote = text("quote", true, &mut problems);
    if let Some(k) = &out.kind {
        if !rules.kinds.contains(k) {
            problems.push(format!(
                "{at}.kind: '{k}' is not one of {}",
                rules.kinds.join(", ")
            ));
        }
    }
    if let Some(pr) = &out.predicate {
        if !rules.predicates.is_empty() && !rules.predicates.contains(pr) {
            problems.push(format!(
                "{at}.predicate: '{pr}' is not one of {}",
                rules.predicates.join(", ")
            ));
        }
    }
    if let Some(pol) = &out.polarity {
        if pol != "positive" && pol != "negative" {
            problems.push(format!(
                "{at}.polarity: '{pol}' is not positive or negative"
            ));
        }
    }
    out.quantity = quantity(&at, obj.get("quantity"), &mut problems);
    out.statistics = statistics(&at, obj.get("statistics"), &mut problems);
    out.context = context(&at, obj.get("context"), rules, &mut problems);
    match out.kind.as_deref() {
        Some("measurement") if out.quantity.is_none() => problems.push(format!(
            "{at}.quantity: a measurement needs a quantity (verbatim, value, unit_text)"
        )),
        Some("assertion") if out.object.is_none() => {
            problems.push(format!("{at}.object: an assertion needs an object"))
        }
        _ => {}
    }
    let invalid = !problems.is_empty();
    // Grounding: the quote in the chunk it was sent with, snapped to
    // sentences; the quantity as written inside those sentences.
    if let Some(q) = &out.quote {
        match quarry_udfs::locate_quote::locate_quote(q, chunk.text, 0.9) {
            None => problems.push(format!(
                "{at}.quote: not found in the text the model was sent (exactly after folding, or at a difflib ratio of 0.9)"
            )),
            Some(loc) => {
                out.char_start = Some(chunk.char_start + loc.char_start as i64);
                out.char_end = Some(chunk.char_start + loc.char_end as i64);
                out.match_ratio = Some(loc.ratio);
                if let Some(qty) = &out.quantity {
                    let sentences: String = chunk
                        .text
                        .chars()
                        .skip(loc.char_start)
                        .take(loc.char_end - loc.char_start)
                        .collect();
                    if !squeezed(&sentences).contains(&squeezed(&qty.verbatim)) {
                        problems.push(format!(
                            "{at}.quantity.verbatim: '{}' is not in the sentences the quote was found in",
                            qty.verbatim
                        ));
                    }
                }
            }
        }
    }
    if !problems.is_empty() {
        out.code = Some(if invalid { "invalid" } else { "ungrounded" });
        out.problems = problems;
        out.char_start = out.char_start.filter(|_| !invalid);
        return out;
    }
    out.draft = None;
    out.claim_id = Some(claim_id(chunk.document_id, &out, &rules.schema_hash));
    out
}

/// Lower case with every space removed: `2.9 kpc` and `2.9kpc` compare equal.
fn squeezed(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

fn quantity(at: &str, v: Option<&Value>, problems: &mut Vec<String>) -> Option<Quantity> {
    let o = match v {
        None | Some(Value::Null) => return None,
        Some(Value::Object(o)) => o,
        Some(other) => {
            problems.push(format!("{at}.quantity: expected an object, got {other}"));
            return None;
        }
    };
    let at = format!("{at}.quantity");
    for k in o.keys().filter(|k| {
        !["verbatim", "value", "unit_text", "qualifier", "uncertainty"].contains(&k.as_str())
    }) {
        problems.push(format!("{at}.{k}: the schema has no such key"));
    }
    let verbatim = match o.get("verbatim") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::Number(n)) => {
            problems.push(format!(
                "{at}.verbatim: expected the number as written (text), got {n}"
            ));
            String::new()
        }
        _ => {
            problems.push(format!(
                "{at}.verbatim: missing: the number as the paper writes it"
            ));
            String::new()
        }
    };
    Some(Quantity {
        verbatim,
        value: number(&at, o, "value", problems),
        unit_text: opt_text(&at, o, "unit_text", problems),
        qualifier: opt_text(&at, o, "qualifier", problems),
        uncertainty: opt_text(&at, o, "uncertainty", problems),
    })
}

fn statistics(at: &str, v: Option<&Value>, problems: &mut Vec<String>) -> Option<Statistics> {
    let o = match v {
        None | Some(Value::Null) => return None,
        Some(Value::Object(o)) => o,
        Some(other) => {
            problems.push(format!("{at}.statistics: expected an object, got {other}"));
            return None;
        }
    };
    let at = format!("{at}.statistics");
    const KEYS: &[&str] = &[
        "effect_size",
        "effect_kind",
        "ci_lower",
        "ci_upper",
        "ci_level",
        "p_value",
        "test_statistic",
        "test_kind",
        "group_sizes",
    ];
    for k in o.keys().filter(|k| !KEYS.contains(&k.as_str())) {
        problems.push(format!("{at}.{k}: the schema has no such key"));
    }
    let group_sizes = match o.get("group_sizes") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) if a.iter().all(|x| x.as_i64().is_some_and(|n| n >= 0)) => {
            Some(a.iter().filter_map(Value::as_i64).collect())
        }
        Some(other) => {
            problems.push(format!(
                "{at}.group_sizes: expected a list of whole numbers, got {other}"
            ));
            None
        }
    };
    Some(Statistics {
        effect_size: number(&at, o, "effect_size", problems),
        effect_kind: opt_text(&at, o, "effect_kind", problems),
        ci_lower: number(&at, o, "ci_lower", problems),
        ci_upper: number(&at, o, "ci_upper", problems),
        ci_level: number(&at, o, "ci_level", problems),
        p_value: number(&at, o, "p_value", problems),
        test_statistic: number(&at, o, "test_statistic", problems),
        test_kind: opt_text(&at, o, "test_kind", problems),
        group_sizes,
    })
}

fn context(
    at: &str,
    v: Option<&Value>,
    rules: &Rules,
    problems: &mut Vec<String>,
) -> Vec<ContextPair> {
    let o = match v {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Object(o)) => o,
        Some(other) => {
            problems.push(format!(
                "{at}.context: expected an object of key-value pairs, got {other}"
            ));
            return Vec::new();
        }
    };
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (k, val) in o {
        if !rules.context_keys.is_empty() && !rules.context_keys.contains(k) {
            problems.push(format!(
                "{at}.context.{k}: not a context key of this spec ({})",
                rules.context_keys.join(", ")
            ));
            continue;
        }
        let s = match val {
            Value::String(s) => s.clone(),
            Value::Number(_) | Value::Bool(_) => val.to_string(),
            other => {
                problems.push(format!(
                    "{at}.context.{k}: expected text, a number or true/false, got {other}"
                ));
                continue;
            }
        };
        out.insert(k.clone(), s);
    }
    out.into_iter()
        .map(|(key, value)| ContextPair { key, value })
        .collect()
}

fn number(at: &str, o: &Map<String, Value>, key: &str, problems: &mut Vec<String>) -> Option<f64> {
    match o.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(other) => {
            problems.push(format!("{at}.{key}: expected a number, got {other}"));
            None
        }
    }
}

fn opt_text(
    at: &str,
    o: &Map<String, Value>,
    key: &str,
    problems: &mut Vec<String>,
) -> Option<String> {
    match o.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            problems.push(format!("{at}.{key}: expected text, got {other}"));
            None
        }
    }
}

/// 32 hex digits of the SHA-256 of a claim's identity: the document, kind,
/// subject, predicate, object, polarity, sorted context, the quantity's
/// verbatim text, the span's offsets and the schema hash (never the model,
/// prompt or release).
pub fn claim_id(document_id: &str, c: &Drafted, schema_hash: &str) -> String {
    let context: Vec<[&str; 2]> = c
        .context
        .iter()
        .map(|p| [p.key.as_str(), p.value.as_str()])
        .collect();
    let identity = json!([
        document_id,
        c.kind,
        c.subject,
        c.predicate,
        c.object,
        c.polarity,
        context,
        c.quantity.as_ref().map(|q| q.verbatim.as_str()),
        c.char_start,
        c.char_end,
        schema_hash
    ]);
    hex::encode(&Sha256::digest(identity.to_string().as_bytes())[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "We observed DF44 with Keck. DF44 has an effective radius of 4.7 kpc in the g band, \
                        as in Fig. 3 of van Dokkum et al. (2016). Its stellar mass is about 3e8 solar masses.";

    fn spec() -> ClaimsSpec {
        ClaimsSpec::parse(
            r#"name = "udg"
instructions = "List every measurement of an ultra-diffuse galaxy."
kinds = ["measurement"]
context_keys = ["band"]
"#,
            false,
        )
        .expect("spec")
    }

    fn read(reply: &str) -> Vec<Drafted> {
        let s = spec();
        read_drafts(
            Some(reply),
            true,
            None,
            Chunk {
                document_id: "doc1",
                text: TEXT,
                char_start: 100,
            },
            &s.rules(),
            &s.reply_schema(),
        )
    }

    #[test]
    fn a_grounded_measurement_is_a_claim_with_its_span_and_id() {
        let got = read(
            r#"{"claims": [{"kind": "measurement", "subject": "DF44", "predicate": "effective_radius",
                "quantity": {"verbatim": "4.7 kpc", "value": 4.7, "unit_text": "kpc"},
                "context": {"band": "g"}, "quote": "DF44 has an effective radius of 4.7 kpc in the g band"}]}"#,
        );
        assert_eq!(got.len(), 1);
        let c = &got[0];
        assert_eq!(c.code, None, "{:?}", c.problems);
        let start = TEXT.find("DF44 has").unwrap() as i64;
        let end = TEXT.find(" Its stellar").unwrap() as i64;
        assert_eq!(c.char_start, Some(100 + start));
        assert_eq!(
            c.char_end,
            Some(100 + end),
            "snapped to the sentence (Fig. 3 and et al. do not end it)"
        );
        assert_eq!(c.polarity.as_deref(), Some("positive"));
        assert_eq!(
            c.context,
            vec![ContextPair {
                key: "band".into(),
                value: "g".into()
            }]
        );
        assert_eq!(c.claim_id.as_ref().map(String::len), Some(32));
        assert_eq!(c.draft, None);
    }

    #[test]
    fn the_id_ignores_the_model_and_tells_subjects_apart() {
        let reply = |subject: &str| {
            format!(
                r#"{{"claims": [{{"kind": "measurement", "subject": "{subject}", "predicate": "effective_radius",
                "quantity": {{"verbatim": "4.7 kpc"}}, "quote": "DF44 has an effective radius of 4.7 kpc"}}]}}"#
            )
        };
        let a = read(&reply("DF44"));
        let b = read(&reply("DF44"));
        let c = read(&reply("DF 44"));
        assert_eq!(a[0].claim_id, b[0].claim_id);
        assert_ne!(a[0].claim_id, c[0].claim_id, "subjects compare exactly");
    }

    #[test]
    fn an_invented_quote_is_ungrounded_and_a_bad_draft_invalid() {
        let got = read(
            r#"{"claims": [
              {"kind": "measurement", "subject": "DF44", "predicate": "velocity_dispersion",
               "quantity": {"verbatim": "47 km/s", "value": 47}, "quote": "DF44 has a velocity dispersion of 47 km/s"},
              {"kind": "measurement", "subject": "DF44", "predicate": "effective_radius",
               "quote": "DF44 has an effective radius of 4.7 kpc"},
              {"kind": "assertion", "subject": "DF44", "predicate": "is", "object": "dark", "quote": "We observed DF44 with Keck."},
              {"kind": "measurement", "subject": "DF44", "predicate": "effective_radius",
               "quantity": {"verbatim": "5.1 kpc"}, "quote": "DF44 has an effective radius of 4.7 kpc"},
              {"kind": "measurement", "subject": "DF44", "predicate": "effective_radius",
               "quantity": {"verbatim": "4.7 kpc"}, "context": {"filter": "g"}, "quote": "DF44 has an effective radius of 4.7 kpc"}
            ]}"#,
        );
        let codes: Vec<_> = got.iter().map(|d| d.code).collect();
        assert_eq!(
            codes,
            vec![
                Some("ungrounded"),
                Some("invalid"),
                Some("invalid"),
                Some("ungrounded"),
                Some("invalid")
            ]
        );
        assert!(
            got[1]
                .problems
                .iter()
                .any(|p| p.contains("needs a quantity")),
            "{:?}",
            got[1].problems
        );
        assert!(got[2]
            .problems
            .iter()
            .any(|p| p.contains("'assertion' is not one of")));
        assert!(got[3].problems.iter().any(|p| p.contains("5.1 kpc")));
        assert!(got[4].problems.iter().any(|p| p.contains("context.filter")));
        assert!(got
            .iter()
            .all(|d| d.draft.is_some() && d.claim_id.is_none()));
    }

    #[test]
    fn a_reply_that_cannot_be_read_is_one_rejection_with_its_problems() {
        let got = read(r#"{"claims": [{"kind": "measurement""#);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].code, Some("unreadable"));
        assert!(!got[0].problems.is_empty());
        let none = read(r#"{"claims": []}"#);
        assert!(none.is_empty());
    }

    #[test]
    fn a_spec_names_every_problem() {
        let e = ClaimsSpec::parse("name = \"x\"\nkinds = [\"guess\"]\ncolour = 1\n", false)
            .unwrap_err();
        assert!(e.contains("'instructions' is required"), "{e}");
        assert!(e.contains("'guess' is not a kind"), "{e}");
        assert!(e.contains("unknown setting 'colour'"), "{e}");
    }
}
