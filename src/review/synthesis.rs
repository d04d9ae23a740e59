//! The write-up of an extraction (seed 001's `gr_synthesise`): one request
//! per section of the protocol's outline, each shown the studies (largest
//! first where the protocol has a sample size), its `[study n]` markers
//! checked against the studies, the sections assembled and their citations
//! rendered from the table (see [`super::cite`]).

use super::study_claims::fill;
use super::{sql_text, Protocol};

/// The SQL, as shipped in `sql/synthesise.sql`.
pub const SYNTHESISE_SQL: &str = include_str!("../../sql/synthesise.sql");

/// The outputs of the file.
pub const OUTPUTS: &[&str] = &["sections", "review", "citations"];

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
    let question = p
        .question
        .as_deref()
        .map(|q| format!(" The review question: {q}"))
        .unwrap_or_default();
    format!(
        "Write one section of a systematic review from the studies listed below, in formal academic prose: hedge claims as the evidence warrants, past tense for findings, and where studies disagree say so and say how they differ.{question}\n\
         Cite each study you draw on as [study n] right after the statement it supports, using only the numbers shown. \
         Never name authors or years; never invent a study. Write the section's prose only, without its heading.\n\n"
    )
}

/// `sql/synthesise.sql` rendered for source `src` and protocol `p`, with
/// output `output` (one of [`OUTPUTS`]); an error when the protocol has no
/// outline.
pub fn render(
    src: &str,
    protocol_path: &str,
    p: &Protocol,
    output: &str,
) -> Result<String, String> {
    let sections = outline(p);
    if sections.is_empty() {
        return Err(format!(
            "the protocol {protocol_path} has no outline to write: add outline = [\"Heading: what the section covers\", ...]"
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
    let text = SYNTHESISE_SQL
        .replace("{{outline}}", &rows.join(", "))
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
        &fill(&text, src, protocol_path, p),
        output,
    ))
}
