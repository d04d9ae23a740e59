//! The audit report: one self-contained HTML page over a store, for a
//! co-author who asks "how do you know?" (seed 001's `gr_audit_report`).
//! Everything is read with SQL from the store's tables (`screening`,
//! `extraction`, `evidence`, `calls`); a section is there when its stage
//! ran. The page has no script, no style sheet and no figure of its own to
//! fetch: it reads offline and prints as it shows.
//!
//! It does not flatter the run: what failed or could not be checked is
//! counted at the top (unreadable documents, unverified quotes, values with
//! no quote, failed requests), and it says what the checks do not
//! establish. Every string that came from a document or a model is
//! escaped, so a document holding `<script>` or an `onerror=` attribute
//! shows as text.
//!
//! Not yet in it (issue 21): the PRISMA flow, calibration, the write-up
//! and its citations, `ask` answers, the quote highlighted within its chunk.

use std::fmt::Write as _;

use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;

/// What a report counted, for the command's summary line and for tests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Documents the runs saw (screened or extracted).
    pub documents: u64,
    /// Of those, documents whose screening or extraction failed.
    pub failed: u64,
    /// Extracted values.
    pub values: u64,
    /// Values whose quote was not found in the document.
    pub unverified: u64,
    /// Values with no quote at all.
    pub unquoted: u64,
    /// Screening decisions that are neither include nor exclude.
    pub undecided: u64,
    /// Model requests recorded.
    pub calls: u64,
    /// Of those, requests that failed.
    pub failed_calls: u64,
}

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A query's rows as text (`None` for NULL), with its column names; an
/// error when the table is not in the store.
async fn rows(ctx: &SessionContext, sql: &str) -> Result<Table, String> {
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let batches: Vec<RecordBatch> = df.collect().await.map_err(|e| e.to_string())?;
    let mut t = Table::default();
    let Some(first) = batches.first() else {
        return Ok(t);
    };
    t.columns = first
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let opts = FormatOptions::default();
    for b in &batches {
        let fmts: Vec<ArrayFormatter> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        for r in 0..b.num_rows() {
            t.rows.push(
                b.columns()
                    .iter()
                    .zip(&fmts)
                    .map(|(c, f)| (!c.is_null(r)).then(|| f.value(r).to_string()))
                    .collect(),
            );
        }
    }
    Ok(t)
}

/// Rows of text.
#[derive(Debug, Default)]
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<Option<String>>>,
}

/// Rows a table section shows before the rest is folded away, so a
/// corpus of 10,000 documents is not one long page.
const SHOWN: usize = 200;

/// An HTML table of `t`; `class` marks a row (e.g. `bad`) from its values.
fn html_table(
    out: &mut String,
    t: &Table,
    class: impl Fn(&[Option<String>]) -> Option<&'static str>,
) {
    let head = |out: &mut String| {
        out.push_str("<table><thead><tr>");
        for c in &t.columns {
            let _ = write!(out, "<th>{}</th>", esc(c));
        }
        out.push_str("</tr></thead><tbody>");
    };
    head(out);
    for (i, r) in t.rows.iter().enumerate() {
        if i == SHOWN {
            let _ = write!(
                out,
                "</tbody></table><details><summary>{} more rows</summary>",
                t.rows.len() - SHOWN
            );
            head(out);
        }
        match class(r) {
            Some(c) => {
                let _ = write!(out, "<tr class=\"{c}\">");
            }
            None => out.push_str("<tr>"),
        }
        for v in r {
            match v {
                Some(v) => {
                    let _ = write!(out, "<td>{}</td>", esc(v));
                }
                None => out.push_str("<td class=\"null\">—</td>"),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    if t.rows.len() > SHOWN {
        out.push_str("</details>");
    }
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:2em}\
table{border-collapse:collapse;width:100%;margin:.5em 0;font-size:13px}\
th,td{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}tr.bad td{background:#fde8e8}td.null{color:#999}\
.counts td.n{font-weight:bold;text-align:right}.counts tr.bad td{font-weight:bold}\
.note{background:#fff8e1;border-left:4px solid #f0b400;padding:.5em 1em}\
q{background:#fff3b0}mark.missing{background:#f8b4b4}\
@media print{details{display:block}details>summary{display:none}}";

/// The report over the store `ctx` opens: the HTML and what it counted.
pub async fn render(ctx: &SessionContext, title: &str) -> (String, Summary) {
    let mut s = Summary::default();
    let mut body = String::new();
    // What happened to every document: its screening and its extraction.
    let docs = rows(
        ctx,
        "SELECT coalesce(s.source, e.source) AS source, s.decision, s.status AS screening, \
         s.error AS screening_error, e.status AS extraction, e.error AS extraction_error, \
         coalesce(e.duplicate_of, s.duplicate_of) AS duplicate_of \
         FROM screening s FULL OUTER JOIN extraction e ON s.source = e.source \
         ORDER BY source",
    )
    .await;
    let docs = match docs {
        Ok(d) => Ok(d),
        // A store with extraction only (no screening ran), or screening only.
        Err(_) => match rows(
            ctx,
            "SELECT source, status AS extraction, error AS extraction_error, duplicate_of FROM extraction ORDER BY source",
        )
        .await
        {
            Ok(d) => Ok(d),
            Err(_) => rows(
                ctx,
                "SELECT source, decision, status AS screening, error AS screening_error, duplicate_of FROM screening ORDER BY source",
            )
            .await,
        },
    };
    if let Ok(d) = &docs {
        s.documents = d.rows.len() as u64;
        let status_cols: Vec<usize> = d
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c.as_str(), "screening" | "extraction"))
            .map(|(i, _)| i)
            .collect();
        let failed = |r: &[Option<String>]| {
            status_cols
                .iter()
                .any(|&i| r[i].as_deref().is_some_and(|v| v != "ok"))
        };
        s.failed = d.rows.iter().filter(|r| failed(r)).count() as u64;
        let dec = d.columns.iter().position(|c| c == "decision");
        if let Some(i) = dec {
            s.undecided = d
                .rows
                .iter()
                .filter(|r| {
                    r[i].as_deref()
                        .is_some_and(|v| v != "include" && v != "exclude")
                })
                .count() as u64;
        }
        body.push_str("<h2 id=\"documents\">What happened to every document</h2>");
        body.push_str("<p>A status other than <code>ok</code> is a document the run could not read or a request that failed; its error says what to do.</p>");
        html_table(&mut body, d, |r| failed(r).then_some("bad"));
    }
    if let Ok(t) = rows(
        ctx,
        "SELECT regexp_replace(source, '^.*/', '') AS document, decision, criterion, reason, quote, verified, status \
         FROM screening ORDER BY source",
    )
    .await
    {
        if !t.rows.is_empty() {
            body.push_str("<h2 id=\"screening\">Screening decisions</h2><p>Each decision with the sentence it rests on; <code>verified</code> is whether that sentence is verbatim in the document.</p>");
            let v = t.columns.iter().position(|c| c == "verified");
            html_table(&mut body, &t, |r| {
                v.and_then(|i| r[i].as_deref())
                    .is_some_and(|x| x == "false")
                    .then_some("bad")
            });
        }
    }
    if let Ok(t) = rows(
        ctx,
        "SELECT document_id AS document, field, value, quote, page, section, verified, \"match\" \
         FROM evidence ORDER BY document_id, field",
    )
    .await
    {
        s.values = t.rows.len() as u64;
        s.unverified = t
            .rows
            .iter()
            .filter(|r| r[6].as_deref() == Some("false"))
            .count() as u64;
        s.unquoted = t
            .rows
            .iter()
            .filter(|r| r[3].as_deref().is_none_or(|q| q.trim().is_empty()))
            .count() as u64;
        if !t.rows.is_empty() {
            body.push_str("<h2 id=\"values\">Every extracted value and its quote</h2><p>Rows in red: the quote was not found in the document (or there is none), so nothing ties the value to the text.</p>");
            html_table(&mut body, &t, |r| {
                (r[6].as_deref() != Some("true")).then_some("bad")
            });
        }
    }
    if let Ok(t) = rows(
        ctx,
        "SELECT stage, count(*) AS calls, sum(CASE WHEN ok THEN 0 ELSE 1 END) AS failed, \
         sum(CASE WHEN cached THEN 1 ELSE 0 END) AS cached, sum(tokens_in) AS tokens_in, \
         sum(tokens_out) AS tokens_out, round(sum(usd), 4) AS usd, round(sum(seconds), 1) AS seconds \
         FROM calls GROUP BY stage ORDER BY stage",
    )
    .await
    {
        s.calls = t
            .rows
            .iter()
            .filter_map(|r| r[1].as_deref()?.parse::<u64>().ok())
            .sum();
        s.failed_calls = t
            .rows
            .iter()
            .filter_map(|r| r[2].as_deref()?.parse::<u64>().ok())
            .sum();
        if !t.rows.is_empty() {
            body.push_str("<h2 id=\"cost\">Cost and time, per stage</h2><p>Every model request is in the store's <code>calls</code> table with its request and reply; a replayed or cached request costs nothing again.</p>");
            html_table(&mut body, &t, |_| None);
        }
    }
    if let Ok(t) = rows(
        ctx,
        "SELECT protocol_hash, count(*) AS documents FROM extraction GROUP BY protocol_hash ORDER BY protocol_hash",
    )
    .await
    {
        if !t.rows.is_empty() {
            body.push_str("<h2 id=\"protocol\">Protocols</h2><p>The hash of the protocol each extraction was made under: a changed protocol is a different hash, so rows made under another are not mixed in silently.</p>");
            html_table(&mut body, &t, |_| None);
        }
    }
    let mut head = String::new();
    let _ = write!(
        head,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1>",
        esc(title),
        esc(title)
    );
    let count = |out: &mut String, label: &str, n: u64, bad: bool| {
        let _ = write!(
            out,
            "<tr{}><td>{}</td><td class=\"n\">{n}</td></tr>",
            if bad && n > 0 { " class=\"bad\"" } else { "" },
            esc(label)
        );
    };
    head.push_str("<h2 id=\"counts\">What to check first</h2><table class=\"counts\"><tbody>");
    count(&mut head, "documents", s.documents, false);
    count(
        &mut head,
        "documents not read, or whose requests failed",
        s.failed,
        true,
    );
    count(
        &mut head,
        "screening decisions neither include nor exclude",
        s.undecided,
        true,
    );
    count(&mut head, "extracted values", s.values, false);
    count(
        &mut head,
        "values whose quote is not in the document",
        s.unverified,
        true,
    );
    count(&mut head, "values with no quote", s.unquoted, true);
    count(&mut head, "model requests", s.calls, false);
    count(
        &mut head,
        "model requests that failed",
        s.failed_calls,
        true,
    );
    head.push_str("</tbody></table>");
    head.push_str(
        "<p class=\"note\"><b>What these checks do not establish.</b> A verified quote is one found \
         verbatim (or nearly: see <code>match</code>) in the document; it is not evidence that the quote \
         supports the value, that the value is the one a reader would take, or that nothing the model \
         missed contradicts it. Screening decisions rest on the model's reading of the criteria. Read a \
         sample of rows against their documents before relying on them.</p>",
    );
    let html = format!("{head}{body}</body></html>\n");
    (html, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_escaped() {
        assert_eq!(
            esc("<script>alert(1)</script> <img src=x onerror=\"a()\"> & 'b'"),
            "&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=&quot;a()&quot;&gt; &amp; &#39;b&#39;"
        );
    }

    #[test]
    fn long_tables_fold_past_the_first_rows() {
        let t = Table {
            columns: vec!["a".into()],
            rows: (0..SHOWN + 5).map(|i| vec![Some(i.to_string())]).collect(),
        };
        let mut out = String::new();
        html_table(&mut out, &t, |_| None);
        assert!(out.contains("<details><summary>5 more rows</summary>"));
        assert_eq!(out.matches("<tr>").count(), SHOWN + 5 + 2);
    }
}
