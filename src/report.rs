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
//! Not yet in it (issue 21): the PRISMA flow and the calibration (both
//! computed on demand, not kept in the store), options to pick one run.

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
    /// `ask` answers kept in the store.
    pub answers: u64,
    /// Of those, answers that are partial or whose run failed.
    pub partial_answers: u64,
    /// Citations in a write-up of a study that is not among its studies.
    pub unknown_citations: u64,
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

/// Rows a table section holds at most (flagged rows first), so the page of
/// a large corpus stays a few megabytes; the rest is counted, with the SQL
/// that lists them.
pub const LIMIT: usize = 1000;

/// The rows a section shows, in their order: every flagged row first (up
/// to [`LIMIT`]), then the others while there is room.
fn pick(rows: &[Vec<Option<String>>], bad: impl Fn(&[Option<String>]) -> bool) -> Vec<usize> {
    if rows.len() <= LIMIT {
        return (0..rows.len()).collect();
    }
    let flagged: Vec<usize> = (0..rows.len()).filter(|&i| bad(&rows[i])).collect();
    let mut shown: Vec<usize> = flagged.iter().copied().take(LIMIT).collect();
    let room = LIMIT - shown.len();
    shown.extend((0..rows.len()).filter(|&i| !bad(&rows[i])).take(room));
    shown.sort_unstable();
    shown
}

/// The line under a section that could not show every row.
fn omitted(out: &mut String, n: usize, store: &str, sql: &str) {
    if n == 0 {
        return;
    }
    let _ = write!(
        out,
        "<p class=\"note\">{n} more rows are not on this page (every flagged row is shown first). \
         To list them: <code>quarry sql --store {} -c \"{}\"</code></p>",
        esc(&shell_word(store)),
        esc(sql)
    );
}

/// `s` as one shell word.
fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-:".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// An HTML table of `t`'s rows `shown`; `class` marks a row (e.g. `bad`)
/// from its values.
fn html_table(
    out: &mut String,
    t: &Table,
    shown: &[usize],
    class: impl Fn(&[Option<String>]) -> Option<&'static str>,
) {
    let columns: Vec<&str> = t.columns.iter().map(String::as_str).collect();
    folded(out, &columns, shown.len(), |out, k| {
        let r = &t.rows[shown[k]];
        row_open(out, class(r));
        for v in r {
            cell(out, v.as_deref());
        }
        out.push_str("</tr>");
    });
}

/// One `<td>` of escaped text, or the mark of a NULL.
fn cell(out: &mut String, v: Option<&str>) {
    match v {
        Some(v) => {
            let _ = write!(out, "<td>{}</td>", esc(v));
        }
        None => out.push_str("<td class=\"null\">—</td>"),
    }
}

/// The file name at the end of a path.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A section's table of `t` holding at most [`LIMIT`] rows (those `bad`
/// picks out first, marked), and the line saying how to list the rest
/// with `sql`.
fn capped_table(
    out: &mut String,
    t: &Table,
    store: &str,
    sql: &str,
    bad: impl Fn(&[Option<String>]) -> bool,
) {
    let shown = pick(&t.rows, &bad);
    html_table(out, t, &shown, |r| bad(r).then_some("bad"));
    omitted(out, t.rows.len() - shown.len(), store, sql);
}

/// `<tr>` with a class or without.
fn row_open(out: &mut String, class: Option<&str>) {
    match class {
        Some(c) => {
            let _ = write!(out, "<tr class=\"{c}\">");
        }
        None => out.push_str("<tr>"),
    }
}

/// A table of `n` rows that `row` writes, under `columns`, the rows past
/// [`SHOWN`] folded into a `<details>`.
fn folded(out: &mut String, columns: &[&str], n: usize, mut row: impl FnMut(&mut String, usize)) {
    let head = |out: &mut String| {
        out.push_str("<table><thead><tr>");
        for c in columns {
            let _ = write!(out, "<th>{}</th>", esc(c));
        }
        out.push_str("</tr></thead><tbody>");
    };
    head(out);
    for k in 0..n {
        if k == SHOWN {
            let _ = write!(
                out,
                "</tbody></table><details><summary>{} more rows</summary>",
                n - SHOWN
            );
            head(out);
        }
        row(out, k);
    }
    out.push_str("</tbody></table>");
    if n > SHOWN {
        out.push_str("</details>");
    }
}

/// Characters of the document shown either side of a quote.
const AROUND: usize = 160;

/// Each shown evidence row's quote as it stands in its document (by row
/// index), the documents read again through the store's ingest cache one
/// at a time, each text dropped once its rows are done. A document that
/// cannot be read (moved since the run) has none: its rows show the
/// quote alone.
async fn contexts(
    ctx: &SessionContext,
    t: &Table,
    shown: &[usize],
) -> std::collections::HashMap<usize, String> {
    let mut by_source: std::collections::BTreeMap<&str, Vec<usize>> =
        std::collections::BTreeMap::new();
    for &i in shown {
        let r = &t.rows[i];
        if let (Some(src), Some(_)) = (&r[1], &r[9]) {
            by_source.entry(src.as_str()).or_default().push(i);
        }
    }
    let mut out = std::collections::HashMap::new();
    for (src, rows_of) in by_source {
        let sql = format!(
            "SELECT document_id, text FROM documents('{}') WHERE text IS NOT NULL",
            src.replace('\'', "''")
        );
        let Ok(d) = rows(ctx, &sql).await else {
            continue;
        };
        for r in d.rows {
            let (Some(id), Some(text)) = (&r[0], &r[1]) else {
                continue;
            };
            let text: Vec<char> = text.chars().collect();
            for &i in &rows_of {
                let e = &t.rows[i];
                if e[0].as_deref() != Some(id.as_str()) {
                    continue;
                }
                let span = || {
                    let start: usize = e[9].as_deref()?.parse().ok()?;
                    let end: usize = e[10].as_deref()?.parse().ok()?;
                    in_context(&text, start, end)
                };
                if let Some(c) = span() {
                    out.insert(i, c);
                }
            }
        }
    }
    out
}

/// The quote as it stands in the document: `AROUND` characters either side
/// and the located span marked, or `None` when the span is not in `text`.
fn in_context(text: &[char], start: usize, end: usize) -> Option<String> {
    if start >= end || end > text.len() {
        return None;
    }
    let from = start.saturating_sub(AROUND);
    let to = (end + AROUND).min(text.len());
    let s = |a: usize, b: usize| esc(&text[a..b].iter().collect::<String>());
    Some(format!(
        "{}{}<mark>{}</mark>{}{}",
        if from > 0 { "…" } else { "" },
        s(from, start),
        s(start, end),
        s(end, to),
        if to < text.len() { "…" } else { "" },
    ))
}

/// The evidence rows `shown` (columns as the evidence query selects them):
/// each quote where it stands in its document, or flagged.
fn values_table(
    out: &mut String,
    t: &Table,
    shown: &[usize],
    contexts: &std::collections::HashMap<usize, String>,
) {
    let cols = [
        "document",
        "field",
        "value",
        "quote, where it stands",
        "page",
        "section",
        "verified",
        "match",
    ];
    folded(out, &cols, shown.len(), |out, k| {
        let r = &t.rows[shown[k]];
        let get = |i: usize| r[i].as_deref();
        let context = contexts.get(&shown[k]);
        let verified = get(7) == Some("true");
        row_open(out, (!verified).then_some("bad"));
        let doc = get(1)
            .map(|s| file_name(s).to_string())
            .or(get(0).map(|id| id.chars().take(12).collect()))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<td>{}</td><td>{}</td><td>{}</td>",
            esc(&doc),
            esc(get(2).unwrap_or("")),
            get(3).map(esc).unwrap_or_else(|| "—".into())
        );
        let quote = get(4).filter(|q| !q.trim().is_empty());
        match (quote, verified) {
            (None, _) => out.push_str("<td><mark class=\"missing\">no quote</mark></td>"),
            (Some(q), false) => {
                let _ = write!(
                    out,
                    "<td><q>{}</q> <mark class=\"missing\">not in the document</mark></td>",
                    esc(q)
                );
            }
            (Some(q), true) => match context {
                Some(c) => {
                    let _ = write!(out, "<td class=\"ctx\">{c}</td>");
                }
                None => {
                    let _ = write!(out, "<td><q>{}</q></td>", esc(q));
                }
            },
        }
        for i in [5, 6, 7, 8] {
            cell(out, get(i));
        }
        out.push_str("</tr>");
    });
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:2em}\
table{border-collapse:collapse;width:100%;margin:.5em 0;font-size:13px}\
th,td{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}tr.bad td{background:#fde8e8}td.null{color:#999}\
.counts td.n{font-weight:bold;text-align:right}.counts tr.bad td{font-weight:bold}\
.note{background:#fff8e1;border-left:4px solid #f0b400;padding:.5em 1em}\
q{background:#fff3b0}mark{background:#ffe066}mark.missing{background:#f8b4b4}td.ctx{max-width:40em}blockquote{margin:.3em 0;padding:.2em .6em;border-left:3px solid #ccc}blockquote.bad{border-color:#e55}.writeup{max-width:48em}\
@media print{details{display:block}details>summary{display:none}}";

/// The report over the store `ctx` opens: the HTML and what it counted.
pub async fn render(ctx: &SessionContext, store: &str) -> (String, Summary) {
    let title = format!("quarry audit report: {store}");
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
        capped_table(
            &mut body,
            d,
            store,
            "SELECT source, status, error, duplicate_of FROM extraction ORDER BY source",
            failed,
        );
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
            let bad = |r: &[Option<String>]| {
                v.and_then(|i| r[i].as_deref()).is_some_and(|x| x == "false")
            };
            capped_table(
                &mut body,
                &t,
                store,
                "SELECT source, decision, criterion, reason, quote, verified FROM screening ORDER BY source",
                bad,
            );
        }
    }
    let evidence = rows(
        ctx,
        "SELECT e.document_id, x.source, e.field, e.value, e.quote, e.page, e.section, e.verified, \
         e.\"match\", e.char_start, e.char_end \
         FROM evidence e LEFT JOIN (SELECT DISTINCT document_id, source FROM extraction) x \
         ON e.document_id = x.document_id ORDER BY x.source, e.document_id, e.field",
    )
    .await;
    let evidence = match evidence {
        Ok(t) => Ok(t),
        Err(_) => rows(
        ctx,
        "SELECT document_id, CAST(NULL AS VARCHAR) AS source, field, value, quote, page, section, verified, \
         \"match\", char_start, char_end FROM evidence ORDER BY document_id, field",
    )
        .await,
    };
    if let Ok(t) = evidence {
        s.values = t.rows.len() as u64;
        s.unverified = t
            .rows
            .iter()
            .filter(|r| r[7].as_deref() == Some("false"))
            .count() as u64;
        s.unquoted = t
            .rows
            .iter()
            .filter(|r| r[4].as_deref().is_none_or(|q| q.trim().is_empty()))
            .count() as u64;
        if !t.rows.is_empty() {
            body.push_str("<h2 id=\"values\">Every extracted value and its quote</h2><p>Each value with the sentence the model gave for it, shown where it stands in the document (<mark>marked</mark>). Rows in red: the quote was not found in the document (or there is none), so nothing ties the value to the text.</p>");
            let shown = pick(&t.rows, |r| r[7].as_deref() != Some("true"));
            let contexts = contexts(ctx, &t, &shown).await;
            values_table(&mut body, &t, &shown, &contexts);
            omitted(
                &mut body,
                t.rows.len() - shown.len(),
                store,
                "SELECT * FROM evidence WHERE verified ORDER BY document_id, field",
            );
        }
    }
    answers_section(ctx, store, &mut body, &mut s).await;
    synthesis_section(ctx, &mut body, &mut s).await;
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
            html_table(&mut body, &t, &(0..t.rows.len()).collect::<Vec<_>>(), |_| None);
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
            html_table(&mut body, &t, &(0..t.rows.len()).collect::<Vec<_>>(), |_| None);
        }
    }
    let mut head = String::new();
    let _ = write!(
        head,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1>",
        esc(&title),
        esc(&title)
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
    if s.answers > 0 {
        count(&mut head, "ask answers", s.answers, false);
        count(
            &mut head,
            "ask answers partial, or whose requests failed",
            s.partial_answers,
            true,
        );
    }
    count(
        &mut head,
        "write-up citations of studies that do not exist",
        s.unknown_citations,
        true,
    );
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

/// The `ask` answers kept in the store, question by question: each
/// document's answer, whether it is partial and why, and the passages it
/// read in document order.
async fn answers_section(ctx: &SessionContext, store: &str, body: &mut String, s: &mut Summary) {
    let Ok(t) = rows(
        ctx,
        "SELECT run_id, document_id, source, question, recipe, reader, answer, partial, not_found, status, \
         array_to_string(notes, '; ') AS notes, calls, usd FROM answers ORDER BY question, run_id, source",
    )
    .await
    else {
        return;
    };
    if t.rows.is_empty() {
        return;
    }
    let bad =
        |r: &[Option<String>]| r[7].as_deref() != Some("false") || r[9].as_deref() != Some("ok");
    s.answers = t.rows.len() as u64;
    s.partial_answers = t.rows.iter().filter(|r| bad(r)).count() as u64;
    let shown = pick(&t.rows, bad);
    // The passages of the answers shown, in HTML, by run and document.
    let mut passages: std::collections::HashMap<(String, String), Vec<String>> = shown
        .iter()
        .filter_map(|&i| Some(((t.rows[i][0].clone()?, t.rows[i][1].clone()?), Vec::new())))
        .collect();
    if let Ok(e) = rows(
        ctx,
        "SELECT run_id, document_id, chunk_id, text, page, section, kind, verified FROM answer_evidence \
         ORDER BY run_id, document_id, chunk_id",
    )
    .await
    {
        for r in e.rows {
            let (Some(run), Some(doc)) = (r[0].clone(), r[1].clone()) else {
                continue;
            };
            let Some(of) = passages.get_mut(&(run, doc)) else {
                continue;
            };
            let mut p = String::new();
            let flagged = r[7].as_deref() == Some("false");
            let _ = write!(
                p,
                "<blockquote{}><small>chunk {} · page {} · {} · {}{}</small><br>{}</blockquote>",
                if flagged { " class=\"bad\"" } else { "" },
                esc(r[2].as_deref().unwrap_or("—")),
                esc(r[4].as_deref().unwrap_or("—")),
                esc(r[5].as_deref().unwrap_or("—")),
                esc(r[6].as_deref().unwrap_or("")),
                if flagged { " · <mark class=\"missing\">not in the document</mark>" } else { "" },
                esc(r[3].as_deref().unwrap_or(""))
            );
            of.push(p);
        }
    }
    body.push_str("<h2 id=\"answers\">Questions asked of the corpus</h2><p>Each answer with the passages its reader sent to the model, in document order. A partial answer says why (a dropped chunk, a failed call, a cap reached, a merge that fell back); its row is red.</p>");
    let mut question: Option<&str> = None;
    let cols = [
        "document",
        "recipe · reader",
        "answer",
        "partial, and why",
        "passages",
    ];
    let mut group: Vec<usize> = Vec::new();
    let flush = |body: &mut String, group: &mut Vec<usize>| {
        if group.is_empty() {
            return;
        }
        folded(body, &cols, group.len(), |out, k| {
            let r = &t.rows[group[k]];
            let get = |i: usize| r[i].as_deref().unwrap_or("");
            row_open(out, bad(r).then_some("bad"));
            let why = match (get(7), get(9)) {
                (_, st) if st != "ok" => format!("{st}: {}", get(10)),
                ("true", _) => format!("partial: {}", get(10)),
                _ if get(8) == "true" => "not found in the document".to_string(),
                _ => String::new(),
            };
            let ps = passages
                .get(&(get(0).to_string(), get(1).to_string()))
                .map(Vec::as_slice)
                .unwrap_or_default();
            let _ = write!(
                out,
                "<td>{}</td><td>{} · {}</td><td>{}</td><td>{}</td><td><details><summary>{} passage{}</summary>{}</details></td></tr>",
                esc(file_name(get(2))),
                esc(get(4)),
                esc(get(5)),
                esc(get(6)),
                esc(&why),
                ps.len(),
                if ps.len() == 1 { "" } else { "s" },
                ps.concat()
            );
        });
        group.clear();
    };
    for &i in &shown {
        let q = t.rows[i][3].as_deref().unwrap_or("");
        if question != Some(q) {
            flush(body, &mut group);
            let _ = write!(body, "<h3>{}</h3>", esc(q));
            question = Some(q);
        }
        group.push(i);
    }
    flush(body, &mut group);
    omitted(
        body,
        t.rows.len() - shown.len(),
        store,
        "SELECT source, question, recipe, answer, partial, notes FROM answers ORDER BY question, source",
    );
}

/// Every write-up kept in the store: its text with each `[study n]`
/// linked to the study it cites (a marker no study has is flagged and
/// counted), and the list of cited studies.
async fn synthesis_section(ctx: &SessionContext, body: &mut String, s: &mut Summary) {
    let Ok(w) = rows(
        ctx,
        "SELECT synthesis_id, src, protocol_hash, options, CAST(written_at AS VARCHAR), text_marked, partial, note \
         FROM synthesis_review ORDER BY written_at, synthesis_id",
    )
    .await
    else {
        return;
    };
    if w.rows.is_empty() {
        return;
    }
    let cites = rows(
        ctx,
        "SELECT synthesis_id, marker, study, regexp_replace(source, '^.*/', '') AS document, record_id, reference \
         FROM synthesis_citations ORDER BY synthesis_id, study",
    )
    .await
    .unwrap_or_default();
    body.push_str("<h2 id=\"synthesis\">The write-up</h2><p>Each <code>[study n]</code> links to the study it cites. A marker that names no study of the extraction is <mark class=\"missing\">flagged</mark> and counted at the top.</p>");
    for (k, r) in w.rows.iter().enumerate() {
        let get = |i: usize| r[i].as_deref().unwrap_or("");
        let sid = get(0);
        let known: std::collections::BTreeMap<String, &Vec<Option<String>>> = cites
            .rows
            .iter()
            .filter(|c| c[0].as_deref() == Some(sid))
            .filter_map(|c| Some((c[1].clone()?, c)))
            .collect();
        let _ = write!(
            body,
            "<h3>Write-up {} <small>of {} · protocol {} · {}{}</small></h3>",
            k + 1,
            esc(get(1)),
            esc(get(2)),
            esc(get(4)),
            if get(6) == "true" {
                " · <b>partial</b>"
            } else {
                ""
            }
        );
        if !get(7).is_empty() {
            let _ = write!(body, "<p class=\"note\">{}</p>", esc(get(7)));
        }
        body.push_str("<div class=\"writeup\">");
        let anchor =
            |c: &[Option<String>]| format!("syn{}-{}", k + 1, c[2].as_deref().unwrap_or(""));
        let (html, unknown) = marked(get(5), |m| known.get(m).map(|c| anchor(c)));
        s.unknown_citations += unknown;
        body.push_str(&html);
        body.push_str("</div><h4>Studies cited</h4><table><thead><tr><th>marker</th><th>document</th><th>record</th><th>reference</th></tr></thead><tbody>");
        for c in known.values() {
            let g = |i: usize| c[i].as_deref().unwrap_or("");
            let _ = write!(
                body,
                "<tr id=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&anchor(c)),
                esc(g(1)),
                esc(g(3)),
                esc(g(4)),
                esc(g(5))
            );
        }
        body.push_str("</tbody></table>");
    }
}

/// A write-up's marked text as HTML: `## ` lines as headings, blank lines
/// as paragraph breaks, each `[study n]` a link to the anchor `anchor`
/// gives it, or flagged when it gives none; with the count flagged.
fn marked(text: &str, anchor: impl Fn(&str) -> Option<String>) -> (String, u64) {
    let mut out = String::new();
    let mut unknown = 0;
    for para in text.split("\n\n") {
        let para = para.trim();
        if para.is_empty() {
            continue;
        }
        if let Some(h) = para.strip_prefix("## ") {
            let _ = write!(out, "<h4>{}</h4>", esc(h));
            continue;
        }
        out.push_str("<p>");
        let mut rest = para;
        while let Some(at) = rest.find("[study ") {
            out.push_str(&esc(&rest[..at]));
            let tail = &rest[at..];
            let Some(end) = tail.find(']') else {
                out.push_str(&esc(tail));
                rest = "";
                break;
            };
            let m = &tail[..=end];
            match anchor(m) {
                Some(a) => {
                    let _ = write!(out, "<a href=\"#{}\">{}</a>", esc(&a), esc(m));
                }
                None => {
                    unknown += 1;
                    let _ = write!(
                        out,
                        "<mark class=\"missing\">{} (no such study)</mark>",
                        esc(m)
                    );
                }
            }
            rest = &tail[end + 1..];
        }
        out.push_str(&esc(rest));
        out.push_str("</p>");
    }
    (out, unknown)
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
    fn a_citation_of_no_study_is_flagged_and_counted() {
        let (html, unknown) = marked("## Results\n\nA <b> [study 1] and [study 9].", |m| {
            (m == "[study 1]").then(|| "s-1".to_string())
        });
        assert_eq!(unknown, 1);
        assert_eq!(
            html,
            "<h4>Results</h4><p>A &lt;b&gt; <a href=\"#s-1\">[study 1]</a> and <mark class=\"missing\">[study 9] (no such study)</mark>.</p>"
        );
    }

    #[test]
    fn a_large_section_shows_every_flagged_row_first() {
        let rows: Vec<Vec<Option<String>>> = (0..LIMIT * 3)
            .map(|i| vec![Some(if i % 7 == 0 { "bad" } else { "ok" }.into())])
            .collect();
        let shown = pick(&rows, |r| r[0].as_deref() == Some("bad"));
        assert_eq!(shown.len(), LIMIT);
        let flagged = (0..LIMIT * 3).filter(|i| i % 7 == 0).count();
        assert_eq!(
            shown.iter().filter(|&&i| i % 7 == 0).count(),
            flagged,
            "every flagged row"
        );
        assert!(shown.windows(2).all(|w| w[0] < w[1]), "in order");
    }

    #[test]
    fn a_quote_stands_marked_in_its_text() {
        let text: Vec<char> = "Before <x> the quote after".chars().collect();
        assert_eq!(
            in_context(&text, 11, 20).unwrap(),
            "Before &lt;x&gt; <mark>the quote</mark> after"
        );
        assert!(in_context(&text, 11, 99).is_none());
    }

    #[test]
    fn long_tables_fold_past_the_first_rows() {
        let t = Table {
            columns: vec!["a".into()],
            rows: (0..SHOWN + 5).map(|i| vec![Some(i.to_string())]).collect(),
        };
        let mut out = String::new();
        html_table(&mut out, &t, &(0..t.rows.len()).collect::<Vec<_>>(), |_| {
            None
        });
        assert!(out.contains("<details><summary>5 more rows</summary>"));
        assert_eq!(out.matches("<tr>").count(), SHOWN + 5 + 2);
    }
}
