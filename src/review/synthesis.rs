//! The write-up of an extraction (seed 001's `gr_synthesise`): one request
//! per section of the protocol's outline, each shown the studies (largest
//! first where the protocol has a sample size), its `[study n]` markers
//! checked against the studies, the sections assembled, revised by the
//! coherence passes asked for (each discarded when its guards refuse it,
//! see [`super::coherence`]), and their citations rendered from the table
//! (see [`super::cite`]).

use serde::Serialize;

use super::study_claims::Source;
use super::{sql_text, Protocol};

/// The SQL, as shipped in `sql/synthesise.sql`.
pub const SYNTHESISE_SQL: &str = include_str!("../../sql/synthesise.sql");

/// The outputs of the file.
pub const OUTPUTS: &[&str] = &["sections", "review", "coherence", "citations", "outline"];

/// Where a write-up's sections come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outline {
    /// The protocol's `outline`: each section shown every study, or, for
    /// a section naming the claims it argues, the studies they rest on.
    Protocol,
    /// Sections derived from the claims across studies (`study_claims`):
    /// the model groups them, one request; each section is shown only the
    /// studies its claims rest on.
    Claims,
    /// One section per claim across studies, in claim order, no request.
    EachClaim,
}

/// One section of an outline that argues claims, as read and checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutlineSection {
    /// Its number, from 1.
    pub section: i64,
    /// Its heading.
    pub heading: String,
    /// What it covers.
    pub brief: String,
    /// The claims it argues (ids of claims kept).
    pub claim_ids: Vec<String>,
    /// Shown every study (a section of the protocol's naming no claim).
    pub every_study: bool,
    /// What the reading of the outline noted about this section.
    pub note: Option<String>,
    /// The section as an entry of a protocol's outline.
    pub entry: String,
}

/// The outline's sections: "Heading: brief" (or a heading alone), and the
/// claims each argues.
pub fn outline(p: &Protocol) -> Vec<(String, String, Vec<String>)> {
    p.outline
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let (h, b) = match o.split_once(':') {
                Some((h, b)) => (h.trim().to_string(), b.trim().to_string()),
                None => (o.trim().to_string(), String::new()),
            };
            (h, b, p.outline_claims.get(i).cloned().unwrap_or_default())
        })
        .filter(|(h, _, _)| !h.is_empty())
        .collect()
}

/// A section as an entry of a protocol's `outline`, to paste there: the
/// text "Heading: brief", or with claims a table.
pub fn outline_entry(heading: &str, brief: &str, claims: &[String]) -> String {
    let q = |t: &str| serde_json::to_string(t).expect("text");
    if claims.is_empty() {
        let text = if brief.is_empty() {
            heading.to_string()
        } else {
            format!("{heading}: {brief}")
        };
        return q(&text);
    }
    let ids: Vec<String> = claims.iter().map(|c| q(c)).collect();
    format!(
        "{{ heading = {}, brief = {}, claims = [{}] }}",
        q(heading),
        q(brief),
        ids.join(", ")
    )
}

/// The grouping request's schema.
pub fn grouping_schema() -> serde_json::Value {
    serde_json::json!({"type": "object", "properties": {"sections": {"type": "array", "items": {
        "type": "object", "properties": {
            "heading": {"type": "string"},
            "brief": {"type": "string"},
            "claims": {"type": "array", "items": {"type": "string"}}
        }, "required": ["heading", "brief", "claims"], "additionalProperties": false}}},
        "required": ["sections"], "additionalProperties": false})
}

/// The grouping request's instructions (the claims follow, a line each).
fn grouping_prompt(p: &Protocol) -> String {
    let question = super::question_sentence(p);
    format!(
        "You are given the claims a systematic review's studies bear on, one line each with its id and the studies for and against it.{question}\n\
         Group the claims into the sections of the review's write-up, so that each section argues a few related claims as one argument (what the studies agree on, where and why they disagree). \
         Give each section a short heading and a one-sentence brief. Put every claim in exactly one section, by its id, and use only the ids shown. \
         Reply with one JSON object: {{\"sections\": [{{\"heading\": \"...\", \"brief\": \"...\", \"claims\": [\"C1\", \"C3\"]}}]}}.\n\nClaims:\n"
    )
}

/// Reads an outline of claims: the grouping the model replied
/// (`by_model`), or the protocol's own sections as JSON, checked against
/// the claims kept (`ids`, with their statements `claims`). Nothing is
/// repaired silently; each change is a section's note:
/// - a claim id that is not a claim kept is left out; so is a claim a
///   section before it argues already;
/// - a section the model gave with no claim left is left out (noted on
///   the first section), and a claim the model placed nowhere gets a
///   section of its own; a claim the protocol's outline leaves out is
///   only noted (leaving it out is the user's choice);
/// - a failed or unreadable grouping gives one section per claim, saying
///   why.
pub fn read_outline(
    reply: Option<&str>,
    ok: bool,
    error: Option<&str>,
    ids: &[String],
    claims: &[String],
    by_model: bool,
) -> Vec<OutlineSection> {
    let statement = |id: &str| {
        ids.iter()
            .position(|i| i == id)
            .and_then(|k| claims.get(k))
            .cloned()
            .unwrap_or_else(|| id.to_string())
    };
    let own = |id: &str, note: String| OutlineSection {
        section: 0,
        heading: statement(id),
        brief: String::new(),
        claim_ids: vec![id.to_string()],
        every_study: false,
        note: Some(note),
        entry: String::new(),
    };
    let mut out: Vec<OutlineSection> = Vec::new();
    let mut general: Vec<String> = Vec::new();
    let parsed: Option<serde_json::Value> = reply.and_then(|r| serde_json::from_str(r).ok());
    let items = parsed
        .as_ref()
        .and_then(|v| v.get("sections"))
        .and_then(serde_json::Value::as_array);
    match (ok, items) {
        (false, _) | (true, None) => {
            let why = if ok {
                format!(
                    "the grouping reply is not a JSON object with a sections array ({})",
                    reply
                        .unwrap_or("no text")
                        .chars()
                        .take(120)
                        .collect::<String>()
                )
            } else {
                format!(
                    "the grouping request failed ({})",
                    error.unwrap_or("no reply")
                )
            };
            for id in ids {
                out.push(own(id, format!("{why}: one section per claim")));
            }
        }
        (true, Some(items)) => {
            let mut placed: Vec<String> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let text = |k: &str| {
                    item.get(k)
                        .and_then(serde_json::Value::as_str)
                        .map(str::trim)
                        .unwrap_or_default()
                        .to_string()
                };
                let (mut heading, brief) = (text("heading"), text("brief"));
                let mut notes = Vec::new();
                if heading.is_empty() {
                    heading = format!("Section {}", i + 1);
                    notes.push("no heading was given".to_string());
                }
                if heading.contains(':') {
                    heading = heading.replace(':', " \u{2013}");
                    notes.push(
                        "the heading's ':' is written ' \u{2013}' (in a protocol's outline a ':' ends the heading)"
                            .to_string(),
                    );
                }
                let named: Vec<String> = item
                    .get("claims")
                    .and_then(serde_json::Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|c| match c {
                                serde_json::Value::String(s) => s.trim().to_uppercase(),
                                other => other.to_string(),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let mut kept = Vec::new();
                let (mut unknown, mut again) = (Vec::new(), Vec::new());
                for c in named {
                    if !ids.contains(&c) {
                        unknown.push(c);
                    } else if placed.contains(&c) || kept.contains(&c) {
                        again.push(c);
                    } else {
                        kept.push(c);
                    }
                }
                if !unknown.is_empty() {
                    notes.push(format!(
                        "names {}, not a claim kept: left out",
                        unknown.join(", ")
                    ));
                }
                if !again.is_empty() {
                    notes.push(format!(
                        "{} argued in an earlier section: left out here",
                        again.join(", ")
                    ));
                }
                if kept.is_empty() && by_model {
                    general.push(format!(
                        "the grouping's section '{heading}' argues no claim kept: left out"
                    ));
                    continue;
                }
                placed.extend(kept.iter().cloned());
                out.push(OutlineSection {
                    section: 0,
                    heading,
                    brief,
                    every_study: kept.is_empty(),
                    claim_ids: kept,
                    note: (!notes.is_empty()).then(|| notes.join("; ")),
                    entry: String::new(),
                });
            }
            let rest: Vec<&String> = ids.iter().filter(|c| !placed.contains(c)).collect();
            if by_model {
                for id in rest {
                    out.push(own(
                        id,
                        "the grouping placed this claim in no section: a section of its own".into(),
                    ));
                }
            } else if !rest.is_empty() {
                general.push(format!(
                    "no section argues {}",
                    rest.iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
    }
    if ids.is_empty() && by_model {
        out.clear();
        general.clear();
        out.push(OutlineSection {
            section: 0,
            heading: "Claims across studies".into(),
            brief: String::new(),
            claim_ids: vec![],
            every_study: false,
            note: Some(
                "no claim across studies was kept (see study_claims_dropped): nothing to argue"
                    .into(),
            ),
            entry: String::new(),
        });
    }
    if let (Some(first), false) = (out.first_mut(), general.is_empty()) {
        let g = format!("the outline: {}", general.join("; "));
        first.note = Some(match first.note.take() {
            Some(n) => format!("{n}; {g}"),
            None => g,
        });
    }
    for (i, s) in out.iter_mut().enumerate() {
        s.section = i as i64 + 1;
        s.entry = outline_entry(&s.heading, &s.brief, &s.claim_ids);
    }
    out
}

/// The protocol's outline as the JSON a grouping reply is (its sections
/// read by [`read_outline`] as the user's).
fn protocol_outline_json(sections: &[(String, String, Vec<String>)]) -> String {
    let items: Vec<serde_json::Value> = sections
        .iter()
        .map(|(h, b, c)| serde_json::json!({"heading": h, "brief": b, "claims": c}))
        .collect();
    serde_json::json!({ "sections": items }).to_string()
}

/// The stages that make `sections` (section, heading, brief, claim_ids,
/// shown: NULL for every study, note, entry) and `section_claims`
/// (section, claim_id, support) from the grouping stage's rows.
const OUTLINE_STAGES: &str = "-- @stage outline_rows
-- The outline read and checked against the claims kept (outline_read:
-- an id that is not a claim is left out, and each such change is a note).
SELECT unnest(outline_read(g.r['text'], g.r['ok'], g.r['error'], g.ids, g.claims, {{by_model}})) AS o
FROM grouping g;

-- @stage section_claims
-- The claims each section argues, with the studies for and against them.
SELECT x.section, v.c['claim_id'] AS claim_id, v.c['claim'] AS claim, v.c['support'] AS support,
       v.c['contradict'] AS contradict, v.c['moderator'] AS moderator
FROM (SELECT o['section'] AS section, unnest(o['claim_ids']) AS claim_id FROM outline_rows) x
JOIN verified v ON v.c['row_kind'] = 'claim' AND v.c['claim_id'] = x.claim_id;

-- @stage sections
-- Each section's brief names the claims it argues; it is shown the
-- studies they rest on (every study for a section naming none).
SELECT o['section'] AS section, o['heading'] AS heading,
       o['brief'] || coalesce(CASE WHEN o['brief'] = '' THEN '' ELSE ' ' END || 'Argue these claims across the studies that bear on them: ' || a.argued || '.', '') AS brief,
       o['claim_ids'] AS claim_ids,
       CASE WHEN o['every_study'] THEN CAST(NULL AS BIGINT[]) ELSE coalesce(st.shown, make_array(CAST(-1 AS BIGINT))[1:0]) END AS shown,
       o['note'] AS note, o['entry'] AS entry
FROM outline_rows
LEFT JOIN (SELECT section, string_agg(claim || ' (supported by ' || array_to_string(support, ', ')
                    || CASE WHEN cardinality(contradict) > 0 THEN '; contradicted by ' || array_to_string(contradict, ', ') ELSE '' END
                    || CASE WHEN moderator IS NOT NULL THEN '; the studies differ in ' || moderator ELSE '' END || ')',
                    '; ' ORDER BY CAST(substr(claim_id, 2) AS BIGINT)) AS argued
           FROM section_claims GROUP BY section) a ON a.section = o['section']
LEFT JOIN (SELECT section, array_agg(DISTINCT study) AS shown
           FROM (SELECT section, unnest(array_concat(support, contradict)) AS study FROM section_claims)
           GROUP BY section) st ON st.section = o['section']";

/// The grouping request (one, over the claims kept, a line each; no
/// request when none was kept: its prompt is NULL).
const GROUPING_STAGE: &str = "-- @stage grouping
-- One request: the claims kept, a line each, grouped by the model into
-- the sections of the write-up.
SELECT llm_json_detail(CASE WHEN n > 0 THEN {{grouping_prompt}} || lines END, '{{grouping_schema}}',
                       'stage=outline, label=' || CAST(n AS VARCHAR) || ' claims{{llm_options}}') AS r,
       coalesce(ids, make_array('')[1:0]) AS ids, coalesce(claims, make_array('')[1:0]) AS claims
FROM (SELECT string_agg(c['claim_id'] || ': ' || c['claim'] || ' (supported by ' || array_to_string(c['support'], ', ')
               || CASE WHEN cardinality(c['contradict']) > 0 THEN '; contradicted by ' || array_to_string(c['contradict'], ', ') ELSE '' END
               || ')', chr(10) ORDER BY ord) AS lines,
             count(*) AS n, array_agg(c['claim_id'] ORDER BY ord) AS ids, array_agg(c['claim'] ORDER BY ord) AS claims
      FROM (SELECT c, CAST(substr(c['claim_id'], 2) AS BIGINT) AS ord FROM verified WHERE c['row_kind'] = 'claim'))";

/// The protocol's own outline where a section names claims: read as the
/// user's grouping (no request).
const PROTOCOL_GROUPING_STAGE: &str = "-- @stage grouping
-- The protocol's outline, whose sections name the claims they argue.
SELECT named_struct('text', '{{outline_json}}', 'ok', true, 'error', CAST(NULL AS VARCHAR)) AS r,
       coalesce(ids, make_array('')[1:0]) AS ids, coalesce(claims, make_array('')[1:0]) AS claims
FROM (SELECT array_agg(c['claim_id'] ORDER BY ord) AS ids, array_agg(c['claim'] ORDER BY ord) AS claims
      FROM (SELECT c, CAST(substr(c['claim_id'], 2) AS BIGINT) AS ord FROM verified WHERE c['row_kind'] = 'claim'))";

/// Where a write-up's references come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bibliography {
    /// The fields extracted (authors, year, title, venue by name).
    Extracted,
    /// Reference exports (`records(...)`), matched to the extraction's
    /// files: `bibliography=EXPORTS`.
    Exports(String),
    /// The extraction is of records (`'records, files=DIR'`): each study's
    /// own record; the records' options.
    Records(String),
}

/// What a write-up is asked for beside its source and protocol.
#[derive(Debug, Clone)]
pub struct Write {
    /// The coherence passes, in order.
    pub passes: Vec<&'static str>,
    /// Where the sections come from.
    pub outline: Outline,
    /// Where the references come from.
    pub bibliography: Bibliography,
}

/// The claims outline: a section per claim kept, in claim order.
const CLAIM_SECTIONS: &str = "SELECT CAST(row_number() OVER (ORDER BY CAST(substr(c['claim_id'], 2) AS BIGINT)) AS BIGINT) AS section,\n       \
    c['claim'] AS heading,\n       \
    'Argue this claim across the studies that bear on it: ' || c['claim'] || ' Supported by '\n         \
    || array_to_string(c['support'], ', ') || CASE WHEN cardinality(c['contradict']) > 0\n         \
    THEN '; contradicted by ' || array_to_string(c['contradict'], ', ') ELSE '' END\n         \
    || CASE WHEN c['moderator'] IS NOT NULL THEN '; the studies differ in ' || c['moderator'] ELSE '' END || '.' AS brief,\n       \
    make_array(c['claim_id']) AS claim_ids, array_concat(c['support'], c['contradict']) AS shown,\n       \
    CAST(NULL AS VARCHAR) AS note, outline_entry(c['claim'], '', make_array(c['claim_id'])) AS entry\n\
FROM verified WHERE c['row_kind'] = 'claim'";

/// The claims of the claims outline's sections: its own claim each.
const CLAIM_SECTION_CLAIMS: &str =
    "SELECT s.section, c['claim_id'] AS claim_id, c['claim'] AS claim, c['support'] AS support,\n       \
c['contradict'] AS contradict, c['moderator'] AS moderator\n\
FROM sections s JOIN verified v ON v.c['row_kind'] = 'claim' AND v.c['claim_id'] = s.claim_ids[1]";

/// No section argues a claim (the protocol's outline).
const NO_SECTION_CLAIMS: &str = "SELECT CAST(NULL AS BIGINT) AS section, CAST(NULL AS VARCHAR) AS claim_id, CAST(NULL AS VARCHAR) AS claim, \
make_array(CAST(-1 AS BIGINT)) AS support, make_array(CAST(-1 AS BIGINT)) AS contradict, CAST(NULL AS VARCHAR) AS moderator WHERE false";

/// The records a bibliography reads, keyed as the studies' `source` is:
/// `r_key`, `r_record_id`, `r_authors` (joined by "; "), `r_year`,
/// `r_title`, `r_venue` (journal, volume, issue and pages).
fn records_sql(src: &str, b: &Bibliography) -> String {
    let columns = "record_id AS r_record_id,\n         \
        CASE WHEN cardinality(authors) > 0 THEN array_to_string(authors, '; ') END AS r_authors,\n         \
        CAST(year AS BIGINT) AS r_year, title AS r_title,\n         \
        venue || coalesce(', ' || volume, '') || coalesce('(' || issue || ')', '') || coalesce(', ' || pages, '') AS r_venue";
    match b {
        Bibliography::Extracted => "SELECT CAST(NULL AS VARCHAR) AS r_key, CAST(NULL AS VARCHAR) AS r_record_id, CAST(NULL AS VARCHAR) AS r_authors, CAST(NULL AS BIGINT) AS r_year, CAST(NULL AS VARCHAR) AS r_title, CAST(NULL AS VARCHAR) AS r_venue WHERE false".into(),
        // One record per file: the first (by export and line) of those
        // matched to it, duplicates of it included (they name one study).
        Bibliography::Exports(exports) => format!(
            "SELECT r_key, r_record_id, r_authors, r_year, r_title, r_venue FROM (\n  \
             SELECT matched_source AS r_key, {columns},\n         \
             row_number() OVER (PARTITION BY matched_source ORDER BY export, line) AS k\n  \
             FROM records('{}', 'files={}') WHERE matched_source IS NOT NULL AND status <> 'failed') WHERE k = 1",
            sql_text(exports),
            sql_text(src)
        ),
        Bibliography::Records(options) => format!(
            "SELECT record_id AS r_key, {columns}\nFROM records('{}', '{}') WHERE status <> 'failed'",
            sql_text(src),
            sql_text(options)
        ),
    }
}

/// The coherence passes, in the order they run.
pub const PASSES: &[&str] = &["structure", "cut", "register"];

/// What each pass may do (and, by saying only that, may not do the
/// others' job).
fn pass_instructions(pass: &str) -> &'static str {
    match pass {
        "structure" => "Reorder and merge: move material to the section where it belongs and merge what two sections say twice, so the review reads as one argument. Do not cut or reword sentences beyond the joins.",
        "cut" => "Cut repetition: delete sentences and phrases that say again what the text already says. Do not reorder, and do not reword what you keep.",
        _ => "Polish the register: transitions, consistent terms for the same thing, one academic register. Do not reorder, cut or add content.",
    }
}

/// The passes an option value names (`all`, or names joined by `+` or
/// spaces), in their fixed order.
pub fn passes(value: &str) -> Result<Vec<&'static str>, String> {
    let v = value.trim().to_lowercase();
    if matches!(v.as_str(), "all" | "true" | "yes") {
        return Ok(PASSES.to_vec());
    }
    if matches!(v.as_str(), "" | "none" | "false" | "no") {
        return Ok(vec![]);
    }
    let named: Vec<&str> = v.split(['+', ' ']).filter(|s| !s.is_empty()).collect();
    if let Some(bad) = named.iter().find(|n| !PASSES.contains(n)) {
        return Err(format!(
            "coherence: no pass '{bad}' (the passes are structure, cut and register, joined by '+', or all)"
        ));
    }
    Ok(PASSES
        .iter()
        .copied()
        .filter(|p| named.contains(p))
        .collect())
}

/// The stages of the passes, the stage the final text is in, and the
/// coherence output. A pass over a draft with no section written is not
/// asked: its prompt is NULL, which `llm_detail` answers with NULL and no
/// request (a filter would not do: the async UDF may be evaluated before
/// it).
fn coherence_sql(passes: &[&str]) -> (String, String, String) {
    let mut stages = String::new();
    let mut prev = "review".to_string();
    let mut rows = Vec::new();
    for (i, pass) in passes.iter().enumerate() {
        let k = i + 1;
        let instructions = format!(
            "Revise the draft of a systematic review below. {} Keep every [study n] marker exactly as written, attached to the statement it supports: add none and drop none. Keep the '## ' headings. Keep every hedge; add no claim, no universal quantifier (all, every, always, never) and no booster (demonstrates, proves, confirms, establishes). Reply with the revised text only.\n\nDraft:\n",
            pass_instructions(pass)
        );
        stages.push_str(&format!(
            "-- @stage pass_{k}\n\
             SELECT '{pass}' AS pass, {k} AS step, d.text_marked AS draft, x.r['text'] AS revision,\n       \
             CASE WHEN x.r IS NULL THEN 'not run: no section was written'\n            \
             WHEN NOT x.r['ok'] THEN 'the request failed: ' || coalesce(x.r['error'], '')\n            \
             ELSE coherence_refusal(d.text_marked, x.r['text']) END AS refused,\n       \
             CASE WHEN x.r['ok'] AND coherence_refusal(d.text_marked, x.r['text']) IS NULL THEN x.r['text']\n            \
             ELSE d.text_marked END AS text_marked\n\
             FROM {prev} d\n\
             CROSS JOIN (SELECT llm_detail('{}' || CASE WHEN rv.written > 0 THEN p.text_marked END,\n                                \
             'stage=coherence, label={pass}{{{{llm_options}}}}') AS r\n           \
             FROM {prev} p CROSS JOIN review rv) x;\n\n",
            sql_text(&instructions)
        ));
        rows.push(format!(
            "SELECT pass, CAST(step AS BIGINT) AS step, refused IS NULL AS kept, refused AS reason FROM pass_{k}"
        ));
        prev = format!("pass_{k}");
    }
    let output = if rows.is_empty() {
        "SELECT CAST(NULL AS VARCHAR) AS pass, CAST(NULL AS BIGINT) AS step, CAST(NULL AS BOOLEAN) AS kept, CAST(NULL AS VARCHAR) AS reason WHERE false".to_string()
    } else {
        format!("{}\nORDER BY step", rows.join("\nUNION ALL\n"))
    };
    (stages, prev, output)
}

/// The protocol's field, among `names`, of one of `kinds` (any kind when
/// empty).
fn field<'a>(p: &'a Protocol, names: &[&str], kinds: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| {
        p.fields
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(n))
            .filter(|f| kinds.is_empty() || kinds.iter().any(|k| f.kind == *k))
            .map(|f| f.name.as_str())
    })
}

fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The instructions of a section's request.
fn prompt(p: &Protocol) -> String {
    let question = super::question_sentence(p);
    format!(
        "Write one section of a systematic review from the studies listed below, in formal academic prose: hedge claims as the evidence warrants, past tense for findings, and where studies disagree say so and say how they differ.{question}\n\
         Cite each study you draw on as [study n] right after the statement it supports, using only the numbers shown. \
         Never name authors or years; never invent a study. Write the section's prose only, without its heading.\n\n"
    )
}

/// `sql/synthesise.sql` rendered for source `src` and protocol `p`, with
/// output `output` (one of [`OUTPUTS`]); an error when the protocol has no
/// outline.
pub fn render(source: &Source, p: &Protocol, w: &Write, output: &str) -> Result<String, String> {
    let (coherence_stages, final_from, coherence_output) = coherence_sql(&w.passes);
    let sections = outline(p);
    if sections.is_empty() && w.outline == Outline::Protocol {
        return Err(format!(
            "the protocol {} has no outline to write: add outline = [\"Heading: what the section covers\", ...], or derive the sections from the claims across studies with 'outline=claims' (grouped by the model) or 'outline=each_claim'",
            source.protocol_path
        ));
    }
    let rows: Vec<String> = sections
        .iter()
        .enumerate()
        .map(|(i, (h, b, c))| {
            format!(
                "({}, '{}', '{}', '{}')",
                i + 1,
                sql_text(h),
                sql_text(b),
                sql_text(&outline_entry(h, b, c))
            )
        })
        .collect();
    let claims_named = sections.iter().any(|(_, _, c)| !c.is_empty());
    let text_or_null = |f: Option<&str>| {
        f.map_or("CAST(NULL AS VARCHAR)".to_string(), |f| {
            format!("CAST({} AS VARCHAR)", ident(f))
        })
    };
    let year = field(p, &["year", "publication_year", "pub_year"], &[])
        .map_or("CAST(NULL AS BIGINT)".to_string(), |f| {
            format!("TRY_CAST({} AS BIGINT)", ident(f))
        });
    let size = field(
        p,
        &[
            "n",
            "sample_size",
            "participants",
            "n_total",
            "enrolled",
            "n_randomised",
        ],
        &["integer", "number"],
    );
    let grouped = |grouping: &str, by_model: bool| {
        format!(
            "{}\n\n{grouping}\n\n{}",
            super::study_claims::claims_stages(p).trim_end(),
            super::fill(
                OUTLINE_STAGES,
                &[("by_model", if by_model { "true" } else { "false" })]
            )
        )
    };
    let outline_stages = match (w.outline, claims_named) {
        (Outline::Protocol, false) => format!(
            "-- @stage sections\n\
             -- The protocol's outline: a heading and its brief per section, every study shown.\n\
             SELECT o.section, o.heading, o.brief, make_array('')[1:0] AS claim_ids, CAST(NULL AS BIGINT[]) AS shown,\n       \
             CAST(NULL AS VARCHAR) AS note, o.entry\nFROM (VALUES {}) AS o(section, heading, brief, entry);\n\n\
             -- @stage section_claims\n-- No section argues a claim.\n{NO_SECTION_CLAIMS}",
            rows.join(", ")
        ),
        (Outline::Protocol, true) => grouped(
            &super::fill(
                PROTOCOL_GROUPING_STAGE,
                &[("outline_json", &sql_text(&protocol_outline_json(&sections)))],
            ),
            false,
        ),
        (Outline::Claims, _) => grouped(
            &super::fill(
                GROUPING_STAGE,
                &[
                    ("grouping_prompt", &format!("'{}'", sql_text(&grouping_prompt(p)))),
                    ("grouping_schema", &sql_text(&grouping_schema().to_string())),
                ],
            ),
            true,
        ),
        (Outline::EachClaim, _) => format!(
            "{}\n\n-- @stage sections\n\
             -- One section per claim across studies, shown only the studies it rests on.\n{CLAIM_SECTIONS};\n\n\
             -- @stage section_claims\n-- Each section's own claim.\n{CLAIM_SECTION_CLAIMS}",
            super::study_claims::claims_stages(p).trim_end()
        ),
    };
    let records = records_sql(&source.src, &w.bibliography);
    let prompt = format!("'{}'", sql_text(&prompt(p)));
    let size_order = size.map_or(String::new(), |f| format!("{} DESC NULLS LAST,", ident(f)));
    let left_out_which = size.map_or("the last by number".to_string(), |f| {
        format!("the smallest by {}", sql_text(f))
    });
    let authors = text_or_null(field(p, &["authors", "author", "author_list"], &[]));
    let title = text_or_null(field(p, &["title"], &[]));
    let venue = text_or_null(field(p, &["venue", "journal", "source_title"], &[]));
    let text = super::study_claims::fill_with(
        SYNTHESISE_SQL,
        source,
        p,
        &[
            ("records", &records),
            ("final_from", &final_from),
            ("coherence_output", &coherence_output),
            ("prompt", &prompt),
            ("size_order", &size_order),
            ("size_field", size.unwrap_or("none")),
            ("left_out_which", &left_out_which),
            ("authors", &authors),
            ("year", &year),
            ("title", &title),
            ("venue", &venue),
        ],
        &[
            ("outline_stages", outline_stages.trim_end()),
            ("coherence_stages", coherence_stages.trim_end()),
        ],
    );
    Ok(super::study_claims::keep_output(&text, output))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> (Vec<String>, Vec<String>) {
        (
            vec!["C1".into(), "C2".into()],
            vec!["Spacing helped.".into(), "Effects faded.".into()],
        )
    }

    #[test]
    fn a_failed_or_unreadable_grouping_is_one_section_per_claim_saying_why() {
        let (ids, claims) = ids();
        let failed = read_outline(None, false, Some("HTTP 500"), &ids, &claims, true);
        assert_eq!(failed.len(), 2);
        assert_eq!(failed[1].heading, "Effects faded.");
        assert_eq!(failed[1].claim_ids, vec!["C2".to_string()]);
        assert!(failed[0]
            .note
            .as_deref()
            .unwrap()
            .starts_with("the grouping request failed (HTTP 500)"));
        let prose = read_outline(Some("Two sections."), true, None, &ids, &claims, true);
        assert_eq!(prose.len(), 2);
        assert!(prose[0]
            .note
            .as_deref()
            .unwrap()
            .contains("not a JSON object"));
    }

    #[test]
    fn the_users_outline_keeps_its_sections_and_only_notes_what_it_leaves_out() {
        let (ids, claims) = ids();
        let json = protocol_outline_json(&[
            ("Background".into(), "Why it matters".into(), vec![]),
            ("Findings".into(), "".into(), vec!["C1".into(), "C7".into()]),
        ]);
        let o = read_outline(Some(&json), true, None, &ids, &claims, false);
        assert_eq!(o.len(), 2);
        assert!(o[0].every_study && o[0].claim_ids.is_empty());
        assert_eq!(
            o[0].note.as_deref(),
            Some("the outline: no section argues C2")
        );
        assert_eq!(o[1].claim_ids, vec!["C1".to_string()]);
        assert_eq!(
            o[1].note.as_deref(),
            Some("names C7, not a claim kept: left out")
        );
        assert_eq!(o[0].entry, r#""Background: Why it matters""#);
        assert_eq!(
            o[1].entry,
            r#"{ heading = "Findings", brief = "", claims = ["C1"] }"#
        );
    }

    #[test]
    fn with_no_claim_kept_the_grouping_is_one_section_saying_so() {
        let o = read_outline(None, true, None, &[], &[], true);
        assert_eq!(o.len(), 1);
        assert!(!o[0].every_study && o[0].claim_ids.is_empty());
        assert!(o[0]
            .note
            .as_deref()
            .unwrap()
            .contains("no claim across studies"));
    }

    #[test]
    fn an_outline_entry_is_read_back_as_the_same_section() {
        let entry = outline_entry("Findings \"so far\"", "What held", &["C2".into()]);
        let toml = format!("name = \"x\"\noutline = [{entry}, \"Plain: brief\"]\n[[fields]]\nname = \"n\"\ndescription = \"N\"\n");
        let p = Protocol::parse(&toml, false).unwrap();
        assert_eq!(
            outline(&p),
            vec![
                (
                    "Findings \"so far\"".to_string(),
                    "What held".to_string(),
                    vec!["C2".to_string()]
                ),
                ("Plain".to_string(), "brief".to_string(), vec![]),
            ]
        );
        // A protocol naming no claim keeps the hash it had.
        let plain = Protocol::parse(
            "name = \"x\"\noutline = [\"Plain: brief\"]\n[[fields]]\nname = \"n\"\ndescription = \"N\"\n",
            false,
        )
        .unwrap();
        assert!(!serde_json::to_string(&plain)
            .unwrap()
            .contains("outline_claims"));
    }
}
