//! Claims across studies (seed 001's `gr_claims`): the model is shown the
//! extraction table's studies, numbered, and proposes claims, each naming
//! the studies that support it, those that contradict it, and the field
//! (moderator) that tells them apart. Every study number is checked
//! against the table: one that is not a study is dropped and counted; a
//! claim left with no supporting study is dropped whole (a claim attached
//! to nothing is an opinion); a moderator naming a column the table does
//! not have is cleared (an invented explanation of a real disagreement is
//! the most convincing error this step can make). What was dropped is kept
//! with why, so a thin claims table can be told from a thin literature.
//! Nothing in a reply is repaired: a reply that cannot be read is one
//! dropped row saying so.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{json, Value};

use super::{model_options, sql_text, Protocol};

/// The SQL, as shipped in `sql/study_claims.sql`.
pub const STUDY_CLAIMS_SQL: &str = include_str!("../../sql/study_claims.sql");

/// The stage the study files start with: the extraction's studies,
/// numbered (`sql/studies.sql`).
pub const STUDIES_SQL: &str = include_str!("../../sql/studies.sql");

/// The gaps, as shipped in `sql/gaps.sql` (an output over the stages of
/// `sql/study_claims.sql`).
pub const GAPS_SQL: &str = include_str!("../../sql/gaps.sql");

/// The outputs (the `-- @output NAME` sections of the two files).
pub const OUTPUTS: &[&str] = &["claims", "support", "dropped", "gaps"];

/// One row `study_claims_read` gives: a claim (`row_kind = 'claim'`) or
/// something dropped (`'dropped'`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Read {
    /// `claim` or `dropped`.
    pub row_kind: &'static str,
    /// `C1`, `C2`, ... in the reply's order (a dropped row names the claim
    /// it came from, when it came from one).
    pub claim_id: Option<String>,
    /// The claim's statement.
    pub claim: Option<String>,
    /// The field that distinguishes supporting from contradicting studies.
    pub moderator: Option<String>,
    /// The supporting studies' numbers.
    pub support: Vec<i64>,
    /// The contradicting studies' numbers.
    pub contradict: Vec<i64>,
    /// For a dropped row: `unknown_study`, `both_roles`, `no_support`,
    /// `unknown_moderator`, `invalid`, `unreadable` or `failed`.
    pub what: Option<&'static str>,
    /// For a dropped row: what exactly (the number, the moderator, the
    /// problem).
    pub detail: Option<String>,
}

impl Read {
    fn dropped(claim_id: Option<&str>, what: &'static str, detail: String) -> Self {
        Self {
            row_kind: "dropped",
            claim_id: claim_id.map(str::to_string),
            claim: None,
            moderator: None,
            support: vec![],
            contradict: vec![],
            what: Some(what),
            detail: Some(detail),
        }
    }
}

/// The reply's JSON schema.
pub fn schema() -> Value {
    json!({"type": "object", "properties": {"claims": {"type": "array", "items": {
        "type": "object", "properties": {
            "claim": {"type": "string"},
            "support": {"type": "array", "items": {"type": "integer"}},
            "contradict": {"type": "array", "items": {"type": "integer"}},
            "moderator": {"type": ["string", "null"]}
        }, "required": ["claim", "support", "contradict", "moderator"], "additionalProperties": false}}},
        "required": ["claims"], "additionalProperties": false})
}

/// Reads one reply: its claims, verified against `studies` (the numbers
/// of the studies shown) and `columns` (the fields a moderator may name),
/// and what was dropped.
pub fn read(
    reply: Option<&str>,
    ok: bool,
    error: Option<&str>,
    studies: &BTreeSet<i64>,
    columns: &[String],
) -> Vec<Read> {
    if !ok {
        return vec![Read::dropped(
            None,
            "failed",
            error.unwrap_or("the request failed").to_string(),
        )];
    }
    let parsed: Option<Value> = reply.and_then(|r| serde_json::from_str(r).ok());
    let Some(items) = parsed
        .as_ref()
        .and_then(|v| v.get("claims"))
        .and_then(Value::as_array)
    else {
        return vec![Read::dropped(
            None,
            "unreadable",
            format!(
                "the reply is not a JSON object with a claims array: {}",
                reply
                    .unwrap_or("(no text)")
                    .chars()
                    .take(200)
                    .collect::<String>()
            ),
        )];
    };
    let mut out = Vec::new();
    let mut seen_claims: BTreeSet<String> = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let id = format!("C{}", i + 1);
        let claim = item.get("claim").and_then(Value::as_str).map(str::trim);
        let Some(claim) = claim.filter(|c| !c.is_empty()) else {
            out.push(Read::dropped(
                Some(&id),
                "invalid",
                format!("no claim statement: {item}"),
            ));
            continue;
        };
        if !seen_claims.insert(claim.to_lowercase()) {
            out.push(Read::dropped(
                Some(&id),
                "invalid",
                format!("the same claim as an earlier one: {claim}"),
            ));
            continue;
        }
        let numbers = |key: &str| -> std::result::Result<Vec<i64>, String> {
            match item.get(key) {
                None | Some(Value::Null) => Ok(vec![]),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| {
                        v.as_i64()
                            .ok_or_else(|| format!("{key} holds {v}, not a study number"))
                    })
                    .collect(),
                Some(v) => Err(format!("{key} is {v}, not a list of study numbers")),
            }
        };
        let (support, contradict) = match (numbers("support"), numbers("contradict")) {
            (Ok(s), Ok(c)) => (s, c),
            (Err(e), _) | (_, Err(e)) => {
                out.push(Read::dropped(Some(&id), "invalid", e));
                continue;
            }
        };
        let keep = |list: Vec<i64>, role: &str, other: &[i64], out: &mut Vec<Read>| {
            let mut kept: Vec<i64> = Vec::new();
            for n in list {
                if !studies.contains(&n) {
                    out.push(Read::dropped(
                        Some(&id),
                        "unknown_study",
                        format!("{role}: study {n} is not in the table"),
                    ));
                } else if other.contains(&n) {
                    if role == "support" {
                        out.push(Read::dropped(
                            Some(&id),
                            "both_roles",
                            format!("study {n} is named as supporting and as contradicting"),
                        ));
                    }
                } else if !kept.contains(&n) {
                    kept.push(n);
                }
            }
            kept
        };
        let s = keep(support.clone(), "support", &contradict, &mut out);
        let c = keep(contradict, "contradict", &support, &mut out);
        if s.is_empty() {
            out.push(Read::dropped(
                Some(&id),
                "no_support",
                format!("no study in the table supports it: {claim}"),
            ));
            continue;
        }
        let moderator = match item.get("moderator").and_then(Value::as_str).map(str::trim) {
            Some(m) if !m.is_empty() => {
                if columns.iter().any(|c| c == m) {
                    Some(m.to_string())
                } else {
                    out.push(Read::dropped(
                        Some(&id),
                        "unknown_moderator",
                        format!("the moderator '{m}' is not a column of the table (cleared)"),
                    ));
                    None
                }
            }
            _ => None,
        };
        out.push(Read {
            row_kind: "claim",
            claim_id: Some(id.clone()),
            claim: Some(claim.to_string()),
            moderator,
            support: s,
            contradict: c,
            what: None,
            detail: None,
        });
    }
    out
}

/// The instructions before the studies.
fn prompt(p: &Protocol) -> String {
    let fields: Vec<String> = p
        .fields
        .iter()
        .map(|f| format!("- {} ({}): {}", f.name, f.kind, f.description))
        .collect();
    let question = super::question_sentence(p);
    format!(
        "You are given the rows an extraction gave for the studies of a systematic review, one line each, numbered [study n].{question}\n\
         Propose the claims the studies bear on, across studies: what several agree on, and where they disagree. \
         For each claim give the numbers of the studies that support it (support) and of those that contradict it (contradict), \
         and, where the two sides differ in one of the fields below, that field's name as the moderator (else null). \
         Use only the study numbers shown and only these field names:\n{}\n\
         Reply with one JSON object: {{\"claims\": [{{\"claim\": \"...\", \"support\": [1, 2], \"contradict\": [3], \"moderator\": \"field or null\"}}]}}.\n\nStudies:\n",
        fields.join("\n")
    )
}

/// `sql/study_claims.sql` and `sql/gaps.sql` rendered for source `src`
/// and protocol `p`, with output `output` (one of [`OUTPUTS`]).
pub fn render(source: &Source, p: &Protocol, output: &str) -> String {
    let text = format!("{STUDY_CLAIMS_SQL}\n{GAPS_SQL}");
    let gaps = field_gaps(p);
    let (prompt, schema) = request_slots(p);
    let extra = [
        ("field_gaps", gaps.as_str()),
        ("prompt", prompt.as_str()),
        ("schema", schema.as_str()),
    ];
    keep_output(&fill_with(&text, source, p, &extra, &[]), output)
}

/// Where the studies come from: the extraction's source and protocol
/// file, and the third argument `extract` is called with, if any
/// (`'records, files=DIR, included'`: an extraction of reference records).
#[derive(Debug, Clone)]
pub struct Source {
    /// The extraction's source.
    pub src: String,
    /// The protocol file.
    pub protocol_path: String,
    /// `extract`'s third argument.
    pub extract: Option<String>,
    /// How many characters of study lines one request may carry (see
    /// [`line_budget`]): the studies past it are left out of that request,
    /// counted, and the result says so.
    pub line_budget: u64,
}

/// Characters of study lines a request may carry for a model of
/// `context_window` tokens answering in at most `max_output`: three
/// characters a token (names and numbers tokenise densely; English prose
/// is nearer four), less 2,000 for the instructions and a section's brief.
pub fn line_budget(context_window: u64, max_output: u64) -> u64 {
    context_window
        .saturating_sub(max_output)
        .saturating_mul(3)
        .saturating_sub(2_000)
}

/// The stages of `sql/study_claims.sql` after the studies (the request and
/// the reading of its reply), its prompt and schema filled in, for a file
/// that builds on its `verified` rows (the write-up's claims outline).
pub fn claims_stages(p: &Protocol) -> String {
    let body = STUDY_CLAIMS_SQL
        .split_once("-- @stage asked")
        .map(|(_, rest)| format!("-- @stage asked{rest}"))
        .unwrap_or_default();
    let stages = body
        .split_once("\n-- @output")
        .map_or(body.as_str(), |(s, _)| s);
    with_request(stages, p)
}

/// The claims request's prompt (a SQL literal) and schema (a literal's
/// contents).
fn request_slots(p: &Protocol) -> (String, String) {
    (
        format!("'{}'", sql_text(&prompt(p))),
        sql_text(&schema().to_string()),
    )
}

/// `text` with the claims request's prompt and schema filled in.
fn with_request(text: &str, p: &Protocol) -> String {
    let (prompt, schema) = request_slots(p);
    super::fill(text, &[("prompt", &prompt), ("schema", &schema)])
}

/// `text` with the studies stage (`{{studies_stage}}`) and a protocol's
/// parameters filled in: the source, the protocol's path and `extract`'s
/// third argument, the fields a study's line shows (`{{study_line}}`) and
/// a moderator may name (`{{columns}}`), and the model options.
pub fn fill(text: &str, source: &Source, p: &Protocol) -> String {
    fill_with(text, source, p, &[], &[])
}

/// [`fill`] with `extra` slots filled in the same pass, and `fragments`:
/// slots whose values are templates of quarry's own, filled first with the
/// source's and protocol's slots (as the studies stage is).
pub fn fill_with(
    text: &str,
    source: &Source,
    p: &Protocol,
    extra: &[(&str, &str)],
    fragments: &[(&str, &str)],
) -> String {
    let columns: Vec<String> = p.fields.iter().map(|f| f.name.clone()).collect();
    let line = p
        .fields
        .iter()
        .map(|f| {
            format!(
                "'{}: ' || coalesce(CAST(\"{}\" AS VARCHAR), 'not reported')",
                sql_text(&f.name),
                f.name.replace('"', "\"\"")
            )
        })
        .collect::<Vec<_>>()
        .join(" || '; ' || ");
    let studies = STUDIES_SQL
        .split_once("-- @stage")
        .map(|(_, s)| format!("-- @stage{s}"))
        .unwrap_or_default();
    let third = source
        .extract
        .as_deref()
        .map_or(String::new(), |e| format!(", '{}'", sql_text(e)));
    let line_budget = source.line_budget.to_string();
    let src = sql_text(&source.src);
    let protocol = sql_text(&source.protocol_path);
    let columns = sql_text(&serde_json::to_string(&columns).expect("names"));
    let llm = sql_text(&model_options(
        p.model.as_deref(),
        p.max_output,
        p.temperature,
    ));
    let base: Vec<(&str, &str)> = vec![
        ("extract_arg", &third),
        ("line_budget", &line_budget),
        ("src", &src),
        ("protocol", &protocol),
        ("study_line", &line),
        ("columns", &columns),
        ("llm_options", &llm),
    ];
    let filled: Vec<(&str, String)> = std::iter::once(("studies_stage", studies.trim_end()))
        .chain(fragments.iter().copied())
        .map(|(k, t)| (k, super::fill(t, &base)))
        .collect();
    let mut slots = base.clone();
    slots.extend_from_slice(extra);
    slots.extend(filled.iter().map(|(k, v)| (*k, v.as_str())));
    super::fill(text, &slots)
}

/// The gaps in the protocol's fields, as `SELECT ... UNION ALL` lines:
/// each value an enum field declares that no study has, and each field
/// whose values (two studies or more have one) are all the same.
fn field_gaps(p: &Protocol) -> String {
    let mut out = String::new();
    for f in &p.fields {
        let name = sql_text(&f.name);
        let id = format!("\"{}\"", f.name.replace('"', "\"\""));
        let value = format!("CAST({id} AS VARCHAR)");
        if let Some(values) = f
            .kind
            .strip_prefix("enum(")
            .and_then(|k| k.strip_suffix(')'))
        {
            let rows: Vec<String> = values
                .split(',')
                .map(|v| format!("('{}')", sql_text(v.trim())))
                .collect();
            out.push_str(&format!(
                "  SELECT 'unstudied_category' AS gap, '{name}' AS field, v.value AS value, CAST(NULL AS VARCHAR) AS claim_id,\n         \
                 CAST(0 AS BIGINT) AS n, (SELECT count(*) FROM studies) AS n_studies,\n         \
                 'no study has {name} = ' || v.value AS detail\n  \
                 FROM (VALUES {}) AS v(value)\n  \
                 WHERE v.value NOT IN (SELECT {value} FROM studies WHERE {id} IS NOT NULL)\n  UNION ALL\n",
                rows.join(", ")
            ));
        }
        out.push_str(&format!(
            "  SELECT 'no_variation' AS gap, '{name}' AS field, v AS value, CAST(NULL AS VARCHAR) AS claim_id,\n         \
             n, (SELECT count(*) FROM studies) AS n_studies,\n         \
             'all ' || CAST(n AS VARCHAR) || ' studies with a value have {name} = ' || v AS detail\n  \
             FROM (SELECT min({value}) AS v, count({id}) AS n, count(DISTINCT {value}) AS k FROM studies)\n  \
             WHERE k = 1 AND n >= 2\n  UNION ALL\n"
        ));
    }
    out
}

/// The text with its stages and only the `-- @output NAME` section named
/// `name` (as `-- @output`).
pub fn keep_output(text: &str, name: &str) -> String {
    let mut parts = text.split("\n-- @");
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        let head = part.split('\n').next().unwrap_or_default().trim();
        match head.strip_prefix("output") {
            Some(rest) if rest.trim() == name => {
                out.push_str("\n-- @output");
                out.push_str(&part[head.len()..]);
            }
            Some(_) => {}
            None => {
                out.push_str("\n-- @");
                out.push_str(part);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn studies() -> BTreeSet<i64> {
        (1..=20).collect()
    }

    fn cols() -> Vec<String> {
        vec!["design".into(), "n".into()]
    }

    #[test]
    fn invented_studies_unsupported_claims_and_moderators_are_dropped_and_counted() {
        let reply = json!({"claims": [
            {"claim": "Spacing helps", "support": [1, 2, 99], "contradict": [3, 0], "moderator": "design"},
            {"claim": "Nobody checked this", "support": [41, 42], "contradict": [], "moderator": null},
            {"claim": "Funding explains it", "support": [4], "contradict": [5], "moderator": "funding"},
            {"claim": "Both ways", "support": [6, 7], "contradict": [7], "moderator": null},
            {"claim": "", "support": [1], "contradict": [], "moderator": null},
            {"claim": "spacing helps", "support": [1], "contradict": [], "moderator": null}
        ]})
        .to_string();
        let rows = read(Some(&reply), true, None, &studies(), &cols());
        let claims: Vec<&Read> = rows.iter().filter(|r| r.row_kind == "claim").collect();
        assert_eq!(claims.len(), 3);
        assert_eq!(claims[0].support, vec![1, 2]);
        assert_eq!(claims[0].contradict, vec![3]);
        assert_eq!(claims[0].moderator.as_deref(), Some("design"));
        assert_eq!(claims[1].claim_id.as_deref(), Some("C3"));
        assert_eq!(
            claims[1].moderator, None,
            "an invented moderator is cleared"
        );
        assert_eq!(claims[2].support, vec![6]);
        assert!(claims[2].contradict.is_empty());
        let what: Vec<(&str, &str)> = rows
            .iter()
            .filter(|r| r.row_kind == "dropped")
            .map(|r| (r.claim_id.as_deref().unwrap(), r.what.unwrap()))
            .collect();
        assert_eq!(
            what,
            vec![
                ("C1", "unknown_study"),
                ("C1", "unknown_study"),
                ("C2", "unknown_study"),
                ("C2", "unknown_study"),
                ("C2", "no_support"),
                ("C3", "unknown_moderator"),
                ("C4", "both_roles"),
                ("C5", "invalid"),
                ("C6", "invalid"),
            ]
        );
    }

    #[test]
    fn a_reply_that_cannot_be_read_or_a_failed_request_is_one_row_saying_so() {
        let r = read(Some("{\"claims\": [}"), true, None, &studies(), &cols());
        assert_eq!((r.len(), r[0].what), (1, Some("unreadable")));
        let r = read(None, false, Some("HTTP 500"), &studies(), &cols());
        assert_eq!(r[0].what, Some("failed"));
        assert_eq!(r[0].detail.as_deref(), Some("HTTP 500"));
        let r = read(
            Some(
                r#"{"claims": [{"claim": "x", "support": "1, 2", "contradict": [], "moderator": null}]}"#,
            ),
            true,
            None,
            &studies(),
            &cols(),
        );
        assert_eq!(
            r[0].what,
            Some("invalid"),
            "a list written as text is not repaired"
        );
    }

    #[test]
    fn one_output_section_is_kept() {
        let t = "-- head\n-- @stage a\nSELECT 1;\n-- @output claims\nSELECT 2;\n-- @output dropped\nSELECT 3;\n";
        let k = keep_output(t, "dropped");
        assert!(k.contains("-- @stage a\nSELECT 1;"));
        assert!(k.contains("-- @output\nSELECT 3;"));
        assert!(!k.contains("SELECT 2"));
    }
}
