//! Protocols: a TOML or JSON file fixed before reading. It names the review
//! (name, question, goal), the screening criteria, the fields to extract
//! (name, description, type, enum values), the outline, and the ingest and
//! segmentation to use. Loading validates the whole file and names every
//! problem at once; the hash of the validated protocol is stamped on every
//! output row and is part of every request (so of every cache key).

use std::path::Path;

use quarry_udfs::parse_value::FieldType;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::{QuarryError, Result};

/// One field to extract.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldSpec {
    /// The column name.
    pub name: String,
    /// What the field means, as the model is told.
    pub description: String,
    /// The type as `parse_value` reads it: `integer`, `number`, `boolean`,
    /// `date`, `string`, `list` or `enum(a, b)`.
    pub kind: String,
}

/// How documents are cut for extraction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentSpec {
    /// The segmenter.
    pub method: String,
    /// The cap.
    pub max_tokens: u64,
    /// The overlap.
    pub overlap_tokens: u64,
}

/// A validated protocol.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Protocol {
    /// The review's name.
    pub name: String,
    /// The review question.
    pub question: Option<String>,
    /// One sentence of context.
    pub goal: Option<String>,
    /// Inclusion criteria.
    pub inclusion: Vec<String>,
    /// Exclusion criteria.
    pub exclusion: Vec<String>,
    /// Fields to extract.
    pub fields: Vec<FieldSpec>,
    /// Sections of the write-up ("Heading: brief").
    pub outline: Vec<String>,
    /// The claims across studies each section argues (an outline entry
    /// written as a table, `{ heading = "...", brief = "...", claims =
    /// ["C1", "C3"] }`, as `synthesis_outline` gives it), one list per
    /// section; left out of the hash when no section names a claim, so
    /// protocols written before it keep their hash.
    #[serde(skip_serializing_if = "no_claims")]
    pub outline_claims: Vec<Vec<String>>,
    /// Corpus options (`recursive=..., clean=...`).
    pub ingest: String,
    /// Segmentation.
    pub segment: SegmentSpec,
    /// `first` or `model`.
    pub resolve: String,
    /// Drop unverified values.
    pub require_quote: bool,
    /// `continue` or `stop`.
    pub on_error: String,
    /// One repair round: a reply that cannot be read as asked goes back to
    /// the model once with its problems (off by default; left out of the
    /// hash when off, so protocols written before it keep their hash).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub repair: bool,
    /// The same for screening (`[screen] repair`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub screen_repair: bool,
    /// Tokens of each document's start sent for screening.
    pub screen_tokens: u64,
    /// The model, when the protocol fixes one.
    pub model: Option<String>,
    /// The output cap per request.
    pub max_output: Option<u64>,
    /// The sampling temperature.
    pub temperature: Option<f64>,
}

const RESERVED: &[&str] = &[
    "document_id",
    "source",
    "n_filled",
    "n_unverified",
    "conflicts",
    "status",
    "duplicate_of",
    "error",
    "protocol_hash",
];

const TOP: &[&str] = &[
    "name",
    "question",
    "goal",
    "inclusion",
    "exclusion",
    "fields",
    "outline",
    "ingest",
    "segment",
    "extract",
    "screen",
    "model",
];

impl Protocol {
    /// Loads a `.toml` or `.json` protocol.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            QuarryError::Invalid(format!("protocol {}: cannot read it: {e}", path.display()))
        })?;
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        Self::parse(&text, is_json)
            .map_err(|e| QuarryError::Invalid(format!("protocol {}: {e}", path.display())))
    }

    /// Parses and validates a protocol's text; every problem is named.
    pub fn parse(text: &str, json: bool) -> std::result::Result<Self, String> {
        let v: Value = if json {
            serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?
        } else {
            let t: toml::Table =
                toml::from_str(text).map_err(|e| format!("not valid TOML: {e}"))?;
            serde_json::to_value(t).map_err(|e| e.to_string())?
        };
        let mut p = Problems::default();
        let Some(obj) = v.as_object() else {
            return Err("the protocol must be a table of settings".into());
        };
        template_safe(&v, "", &mut p);
        for k in obj.keys().filter(|k| !TOP.contains(&k.as_str())) {
            p.add(format!(
                "unknown setting '{k}' (settings: {})",
                TOP.join(", ")
            ));
        }
        let name = p.string(&v, "name", true).unwrap_or_default();
        let question = p.string(&v, "question", false);
        let goal = p.string(&v, "goal", false);
        let inclusion = p.strings(&v, "inclusion");
        let exclusion = p.strings(&v, "exclusion");
        let (outline, outline_claims) = p.outline(&v);
        let mut fields = Vec::new();
        match &v["fields"] {
            Value::Null => {}
            Value::Array(items) => {
                for (i, f) in items.iter().enumerate() {
                    if let Some(f) = p.field(i, f) {
                        if fields.iter().any(|g: &FieldSpec| g.name == f.name) {
                            p.add(format!("fields[{i}]: the name '{}' is used twice", f.name));
                        }
                        fields.push(f);
                    }
                }
            }
            _ => p.add("fields must be a list of [[fields]] tables".into()),
        }
        let shared = shared_settings(&mut p, &v);
        let ex = &v["extract"];
        p.keys(
            ex,
            "extract",
            &["resolve", "require_quote", "on_error", "repair"],
        );
        let resolve = p
            .string(ex, "resolve", false)
            .unwrap_or_else(|| "first".into());
        if resolve != "first" && resolve != "model" {
            p.add(format!(
                "extract.resolve must be \"first\" or \"model\", got \"{resolve}\""
            ));
        }
        let require_quote = p.flag(ex, "extract.require_quote", "require_quote");
        let repair = p.flag(ex, "extract.repair", "repair");
        let on_error = p
            .string(ex, "on_error", false)
            .unwrap_or_else(|| "continue".into());
        if on_error != "continue" && on_error != "stop" {
            p.add(format!(
                "extract.on_error must be \"continue\" or \"stop\", got \"{on_error}\""
            ));
        }
        let sc = &v["screen"];
        p.keys(sc, "screen", &["max_tokens", "repair"]);
        let screen_repair = p.flag(sc, "screen.repair", "repair");
        let screen_tokens = p
            .uint(sc, "screen.max_tokens", "max_tokens")
            .unwrap_or(3000);
        if screen_tokens < 100 {
            p.add(format!(
                "screen.max_tokens must be at least 100, got {screen_tokens}"
            ));
        }
        if !p.0.is_empty() {
            return Err(format!("{} problem(s): {}", p.0.len(), p.0.join("; ")));
        }
        Ok(Self {
            name,
            question,
            goal,
            inclusion,
            exclusion,
            fields,
            outline,
            outline_claims,
            ingest: shared.ingest,
            segment: shared.segment,
            resolve,
            require_quote,
            on_error,
            repair,
            screen_repair,
            screen_tokens,
            model: shared.model,
            max_output: shared.max_output,
            temperature: shared.temperature,
        })
    }

    /// The SHA-256 of the validated protocol (hex).
    pub fn hash(&self) -> String {
        hex::encode(Sha256::digest(
            serde_json::to_vec(self).expect("serialises"),
        ))
    }

    /// The first 16 hex digits of the hash: what rows carry.
    pub fn short_hash(&self) -> String {
        self.hash()[..16].to_string()
    }
}

/// Refuses text that could change the SQL a protocol is rendered into:
/// quarry's SQL templates mark their slots `{{name}}` and their stages
/// with lines starting `-- @`, and a protocol's text is put in those
/// templates, so text holding either could fill a later slot or start a
/// stage of its own. Quotes, semicolons and SQL are safe (every text is
/// quoted); these two are not, and no protocol needs them.
fn template_safe(v: &Value, at: &str, p: &mut Problems) {
    match v {
        Value::String(s) => {
            if s.contains("{{") || s.contains("}}") {
                p.add(format!(
                    "{at}: the text holds '{{{{' or '}}}}', which quarry's SQL templates use to mark their slots: write it another way (e.g. '{{ {{')"
                ));
            }
            if s.lines().any(|l| l.trim_start().starts_with("-- @")) {
                p.add(format!(
                    "{at}: a line of the text starts with '-- @', which marks a stage in quarry's SQL templates: write it another way"
                ));
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                template_safe(x, &format!("{at}[{i}]"), p);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                let here = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                template_safe(x, &here, p);
            }
        }
        _ => {}
    }
}

/// Whether no section of an outline names a claim.
fn no_claims(c: &[Vec<String>]) -> bool {
    c.iter().all(Vec::is_empty)
}

/// The settings a protocol and a claims spec share: `[ingest]`,
/// `[segment]` and `[model]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shared {
    /// Corpus options (`recursive=..., clean=...`).
    pub ingest: String,
    /// Segmentation.
    pub segment: SegmentSpec,
    /// The model, when fixed.
    pub model: Option<String>,
    /// The output cap per request.
    pub max_output: Option<u64>,
    /// The sampling temperature.
    pub temperature: Option<f64>,
}

/// Reads and checks the shared settings, naming every problem in `p`.
pub(crate) fn shared_settings(p: &mut Problems, v: &Value) -> Shared {
    let seg = &v["segment"];
    p.keys(seg, "segment", &["method", "max_tokens", "overlap_tokens"]);
    let method = p
        .string(seg, "method", false)
        .unwrap_or_else(|| "structural".into());
    if ![
        "fixed",
        "paragraph",
        "sentence",
        "recursive",
        "structural",
        "page",
    ]
    .contains(&method.as_str())
    {
        p.add(format!("segment.method '{method}' is not a segmenter (fixed, paragraph, sentence, recursive, structural, page)"));
    }
    let max_tokens = p
        .uint(seg, "segment.max_tokens", "max_tokens")
        .unwrap_or(900);
    let overlap_tokens = p
        .uint(seg, "segment.overlap_tokens", "overlap_tokens")
        .unwrap_or(max_tokens / 10);
    if max_tokens < 50 {
        p.add(format!(
            "segment.max_tokens must be at least 50, got {max_tokens}"
        ));
    }
    if overlap_tokens >= max_tokens {
        p.add(format!(
            "segment.overlap_tokens ({overlap_tokens}) must be below max_tokens ({max_tokens})"
        ));
    }
    let ing = &v["ingest"];
    p.keys(
        ing,
        "ingest",
        &[
            "recursive",
            "clean",
            "max_bytes",
            "tokenizer",
            "ocr",
            "ocr_lang",
        ],
    );
    let mut ingest = Vec::new();
    if let Some(o) = ing.as_object() {
        for (k, val) in o {
            let s = match val {
                Value::String(s) => s.clone(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                _ => {
                    p.add(format!("ingest.{k} must be a string, number or boolean"));
                    continue;
                }
            };
            if s.contains([',', ';', '\'']) {
                p.add(format!("ingest.{k} may not contain ',', ';' or quotes"));
                continue;
            }
            ingest.push(format!("{k}={s}"));
        }
    }
    let m = &v["model"];
    p.keys(m, "model", &["name", "max_output", "temperature"]);
    let model = p.string(m, "name", false);
    let max_output = p.uint(m, "model.max_output", "max_output");
    let temperature = match &m["temperature"] {
        Value::Null => None,
        Value::Number(n) if n.as_f64().is_some_and(|t| (0.0..=2.0).contains(&t)) => n.as_f64(),
        other => {
            p.add(format!(
                "model.temperature must be a number from 0 to 2, got {other}"
            ));
            None
        }
    };
    if let Some(m) = &model {
        if m.contains([',', ';', '\'']) {
            p.add("model.name may not contain ',', ';' or quotes".into());
        }
    }
    Shared {
        ingest: ingest.join(", "),
        segment: SegmentSpec {
            method,
            max_tokens,
            overlap_tokens,
        },
        model,
        max_output,
        temperature,
    }
}

#[derive(Default)]
pub(crate) struct Problems(pub(crate) Vec<String>);

impl Problems {
    pub(crate) fn add(&mut self, s: String) {
        self.0.push(s);
    }

    pub(crate) fn string(&mut self, v: &Value, key: &str, required: bool) -> Option<String> {
        match &v[key] {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Value::Null if !required => None,
            Value::Null | Value::String(_) => {
                self.add(format!("'{key}' is required and may not be empty"));
                None
            }
            other => {
                self.add(format!("'{key}' must be text, got {other}"));
                None
            }
        }
    }

    /// The outline: each entry "Heading: brief", or a table with
    /// `heading`, `brief` and the `claims` it argues.
    fn outline(&mut self, v: &Value) -> (Vec<String>, Vec<Vec<String>>) {
        let items = match &v["outline"] {
            Value::Null => return (vec![], vec![]),
            Value::String(s) => return (vec![s.clone()], vec![vec![]]),
            Value::Array(a) => a,
            other => {
                self.add(format!(
                    "'outline' must be a list of sections (\"Heading: brief\", or {{ heading = \"...\", brief = \"...\", claims = [\"C1\"] }}), got {other}"
                ));
                return (vec![], vec![]);
            }
        };
        let (mut outline, mut claims) = (Vec::new(), Vec::new());
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) => {
                    outline.push(s.clone());
                    claims.push(vec![]);
                }
                Value::Object(o) => {
                    for k in o.keys().filter(|k| !["heading", "brief", "claims"].contains(&k.as_str())) {
                        self.add(format!("outline[{i}]: unknown setting '{k}' (settings: heading, brief, claims)"));
                    }
                    let heading = o.get("heading").and_then(Value::as_str).map(str::trim);
                    let Some(heading) = heading.filter(|h| !h.is_empty()) else {
                        self.add(format!("outline[{i}]: a section needs a heading"));
                        continue;
                    };
                    if heading.contains(':') {
                        self.add(format!("outline[{i}]: the heading '{heading}' has a ':' (it separates a heading from its brief)"));
                    }
                    let brief = match o.get("brief") {
                        None | Some(Value::Null) => "",
                        Some(Value::String(b)) => b.trim(),
                        Some(other) => {
                            self.add(format!("outline[{i}].brief must be text, got {other}"));
                            ""
                        }
                    };
                    let ids = match o.get("claims") {
                        None | Some(Value::Null) => vec![],
                        Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
                            .iter()
                            .filter_map(|c| c.as_str().map(|c| c.trim().to_uppercase()))
                            .collect(),
                        Some(other) => {
                            self.add(format!("outline[{i}].claims must be a list of claim ids (\"C1\"), got {other}"));
                            vec![]
                        }
                    };
                    outline.push(if brief.is_empty() {
                        heading.to_string()
                    } else {
                        format!("{heading}: {brief}")
                    });
                    claims.push(ids);
                }
                other => self.add(format!(
                    "outline[{i}] must be \"Heading: brief\" or a table with heading, brief and claims, got {other}"
                )),
            }
        }
        (outline, claims)
    }

    pub(crate) fn strings(&mut self, v: &Value, key: &str) -> Vec<String> {
        match &v[key] {
            Value::Null => vec![],
            Value::String(s) => vec![s.clone()],
            Value::Array(a) if a.iter().all(Value::is_string) => a
                .iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect(),
            other => {
                self.add(format!("'{key}' must be a list of text, got {other}"));
                vec![]
            }
        }
    }

    /// A true/false setting (false when absent).
    pub(crate) fn flag(&mut self, v: &Value, label: &str, key: &str) -> bool {
        match &v[key] {
            Value::Null => false,
            Value::Bool(b) => *b,
            other => {
                self.add(format!("{label} must be true or false, got {other}"));
                false
            }
        }
    }

    pub(crate) fn uint(&mut self, v: &Value, label: &str, key: &str) -> Option<u64> {
        match &v[key] {
            Value::Null => None,
            Value::Number(n) if n.as_u64().is_some() => n.as_u64(),
            other => {
                self.add(format!("{label} must be a whole number, got {other}"));
                None
            }
        }
    }

    pub(crate) fn keys(&mut self, v: &Value, section: &str, allowed: &[&str]) {
        match v {
            Value::Null => {}
            Value::Object(o) => {
                for k in o.keys().filter(|k| !allowed.contains(&k.as_str())) {
                    self.add(format!(
                        "unknown setting '{section}.{k}' ({section} takes {})",
                        allowed.join(", ")
                    ));
                }
            }
            _ => self.add(format!("'{section}' must be a table")),
        }
    }

    fn field(&mut self, i: usize, f: &Value) -> Option<FieldSpec> {
        let Some(o) = f.as_object() else {
            self.add(format!(
                "fields[{i}] must be a table with name, description and type"
            ));
            return None;
        };
        for k in o
            .keys()
            .filter(|k| !["name", "description", "type", "values"].contains(&k.as_str()))
        {
            self.add(format!("fields[{i}]: unknown setting '{k}' (a field takes name, description, type, values)"));
        }
        let before = self.0.len();
        let name = match &f["name"] {
            Value::String(s) => s.clone(),
            _ => {
                self.add(format!("fields[{i}]: 'name' is required"));
                String::new()
            }
        };
        let ok_ident = !name.is_empty()
            && name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !name.is_empty() && !ok_ident {
            self.add(format!("fields[{i}]: name '{name}' must be lower-case letters, digits and _ (a column name)"));
        }
        if RESERVED.contains(&name.as_str()) || name.ends_with("__quote") {
            self.add(format!(
                "fields[{i}]: '{name}' is a column quarry adds; choose another name"
            ));
        }
        let description = match &f["description"] {
            Value::String(s) if !s.trim().is_empty() => s.trim().to_string(),
            _ => {
                self.add(format!("fields[{i}] ({name}): 'description' is required: it is what the model is asked"));
                String::new()
            }
        };
        let ty = f["type"]
            .as_str()
            .unwrap_or("string")
            .trim()
            .to_ascii_lowercase();
        let values: Vec<String> = f["values"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let kind = if ty == "enum" {
            if values.is_empty() {
                self.add(format!(
                    "fields[{i}] ({name}): type \"enum\" needs values = [...]"
                ));
            }
            if values.iter().any(|v| v.contains([',', '(', ')', '\''])) {
                self.add(format!(
                    "fields[{i}] ({name}): enum values may not contain ',', '(', ')' or quotes"
                ));
            }
            format!("enum({})", values.join(", "))
        } else {
            if !values.is_empty() {
                self.add(format!(
                    "fields[{i}] ({name}): values is only for type \"enum\""
                ));
            }
            ty.clone()
        };
        if FieldType::parse(&kind).is_none() {
            self.add(format!(
                "fields[{i}] ({name}): unknown type '{ty}' (integer, number, boolean, date, string, list, enum)"
            ));
        }
        (self.0.len() == before).then_some(FieldSpec {
            name,
            description,
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "trials"
goal = "Trials of statins in primary prevention"
inclusion = ["randomised trial"]

[[fields]]
name = "design"
description = "The study design"

[[fields]]
name = "n"
description = "Number of participants"
type = "integer"

[[fields]]
name = "blinding"
description = "Who was blinded"
type = "enum"
values = ["open", "single", "double"]

[screen]
max_tokens = 800
"#;

    #[test]
    fn a_good_protocol_loads_with_defaults_and_a_stable_hash() {
        let p = Protocol::parse(GOOD, false).unwrap();
        assert_eq!(p.fields.len(), 3);
        assert_eq!(p.fields[2].kind, "enum(open, single, double)");
        assert_eq!(p.segment.method, "structural");
        assert_eq!(p.screen_tokens, 800);
        assert_eq!((p.segment.max_tokens, p.segment.overlap_tokens), (900, 90));
        assert_eq!(p.hash(), Protocol::parse(GOOD, false).unwrap().hash());
        let other = Protocol::parse(&GOOD.replace("Number of", "Count of"), false).unwrap();
        assert_ne!(p.hash(), other.hash());
        // The repair round off (the default, or said) leaves the hash as it
        // was before the option existed; on, it is another protocol.
        let off = Protocol::parse(&format!("{GOOD}repair = false\n"), false).unwrap();
        assert!(!p.screen_repair && !off.screen_repair);
        assert_eq!(p.hash(), off.hash());
        let on = Protocol::parse(&format!("{GOOD}repair = true\n"), false).unwrap();
        assert!(on.screen_repair);
        assert_ne!(p.hash(), on.hash());
        let bad = Protocol::parse(&format!("{GOOD}repair = \"yes\"\n"), false).unwrap_err();
        assert!(
            bad.to_string()
                .contains("screen.repair must be true or false"),
            "{bad}"
        );
    }

    #[test]
    fn every_problem_is_named_at_once() {
        let bad = r#"
titel = "x"
[[fields]]
name = "N"
type = "integr"
[[fields]]
name = "status"
description = "s"
[segment]
max_tokens = 10
"#;
        let e = Protocol::parse(bad, false).unwrap_err();
        for want in [
            "unknown setting 'titel'",
            "'name' is required",
            "name 'N' must be lower-case",
            "unknown type 'integr'",
            "'description' is required",
            "'status' is a column quarry adds",
            "max_tokens must be at least 50",
        ] {
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn json_protocols_load_too() {
        let p = Protocol::parse(
            r#"{"name": "j", "fields": [{"name": "n", "description": "N", "type": "integer"}]}"#,
            true,
        )
        .unwrap();
        assert_eq!(p.fields[0].kind, "integer");
    }
}
