//! The write-up of an extraction (seed 001's `gr_synthesise`): one request
//! per section of the protocol's outline, each shown the studies (largest
//! first where the protocol has a sample size), its `[study n]` markers
//! checked against the studies, the sections assembled, revised by the
//! coherence passes asked for (each discarded when its guards refuse it,
//! see [`super::coherence`]), and their citations rendered from the table
//! (see [`super::cite`]).

use super::study_claims::{fill, Source};
use super::{sql_text, Protocol};

/// The SQL, as shipped in `sql/synthesise.sql`.
pub const SYNTHESISE_SQL: &str = include_str!("../../sql/synthesise.sql");

/// The outputs of the file.
pub const OUTPUTS: &[&str] = &["sections", "review", "coherence", "citations", "outline"];

/// Where a write-up's sections come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outline {
    /// The protocol's `outline`: each section shown every study.
    Protocol,
    /// One section per claim across studies (`study_claims`), shown only
    /// the studies that claim rests on.
    Claims,
}

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
    CAST(NULL AS VARCHAR) AS note\n\
FROM verified WHERE c['row_kind'] = 'claim'";

/// The claims of the claims outline's sections: its own claim each.
const CLAIM_SECTION_CLAIMS: &str =
    "SELECT s.section, c['claim_id'] AS claim_id, c['support'] AS support\n\
FROM sections s JOIN verified v ON v.c['row_kind'] = 'claim' AND v.c['claim_id'] = s.claim_ids[1]";

/// No section argues a claim (the protocol's outline).
const NO_SECTION_CLAIMS: &str = "SELECT CAST(NULL AS BIGINT) AS section, CAST(NULL AS VARCHAR) AS claim_id, make_array(CAST(-1 AS BIGINT)) AS support WHERE false";

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

/// The outline's sections: "Heading: brief" (or a heading alone).
pub fn outline(p: &Protocol) -> Vec<(String, String)> {
    p.outline
        .iter()
        .map(|o| match o.split_once(':') {
            Some((h, b)) => (h.trim().to_string(), b.trim().to_string()),
            None => (o.trim().to_string(), String::new()),
        })
        .filter(|(h, _)| !h.is_empty())
        .collect()
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
            "the protocol {} has no outline to write: add outline = [\"Heading: what the section covers\", ...], or derive the sections from the claims across studies with 'outline=claims'",
            source.protocol_path
        ));
    }
    let rows: Vec<String> = sections
        .iter()
        .enumerate()
        .map(|(i, (h, b))| format!("({}, '{}', '{}')", i + 1, sql_text(h), sql_text(b)))
        .collect();
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
    let (claims_stages, sections_sql, section_claims) = match w.outline {
        Outline::Protocol => (
            String::new(),
            format!(
                "SELECT o.*, make_array('')[1:0] AS claim_ids, CAST(NULL AS BIGINT[]) AS shown, CAST(NULL AS VARCHAR) AS note\nFROM (VALUES {}) AS o(section, heading, brief)",
                rows.join(", ")
            ),
            NO_SECTION_CLAIMS.to_string(),
        ),
        Outline::Claims => (
            super::study_claims::claims_stages(p),
            CLAIM_SECTIONS.to_string(),
            CLAIM_SECTION_CLAIMS.to_string(),
        ),
    };
    let text = SYNTHESISE_SQL
        .replace("{{claims_stages}}", claims_stages.trim_end())
        .replace("{{sections}}", &sections_sql)
        .replace("{{section_claims}}", &section_claims)
        .replace("{{records}}", &records_sql(&source.src, &w.bibliography))
        .replace("{{coherence_stages}}", coherence_stages.trim_end())
        .replace("{{final_from}}", &final_from)
        .replace("{{coherence_output}}", &coherence_output)
        .replace("{{prompt}}", &format!("'{}'", sql_text(&prompt(p))))
        .replace(
            "{{size_order}}",
            &size.map_or(String::new(), |f| format!("{} DESC NULLS LAST,", ident(f))),
        )
        .replace("{{size_field}}", size.unwrap_or("none"))
        .replace(
            "{{authors}}",
            &text_or_null(field(p, &["authors", "author", "author_list"], &[])),
        )
        .replace("{{year}}", &year)
        .replace("{{title}}", &text_or_null(field(p, &["title"], &[])))
        .replace(
            "{{venue}}",
            &text_or_null(field(p, &["venue", "journal", "source_title"], &[])),
        );
    Ok(super::study_claims::keep_output(
        &fill(&text, source, p),
        output,
    ))
}
