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
//! The PRISMA flow and the calibration are not kept in the store (both are
//! computed on demand from files the review keeps): [`Options`] names their
//! inputs, and the page draws them (the flow as a PRISMA 2020 diagram, the
//! calibration's rates with their intervals), both as inline SVG. It also
//! picks one extraction (by protocol), one `ask` run or one write-up;
//! by default the page covers the latest extraction and every run.

use std::fmt::Write as _;

use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;

use crate::review::sql_text;

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
    /// Claims argued in a write-up, and of those, claims resting on a
    /// study (for or against) the write-up does not cite.
    pub claims: u64,
    /// See `claims`.
    pub claims_uncited: u64,
    /// With a flow: reports sought and not retrieved, and export entries
    /// that could not be read.
    pub not_retrieved: Option<u64>,
    /// See `not_retrieved`.
    pub unreadable_records: Option<u64>,
    /// With a calibration: eligible studies the person found among the
    /// sampled records the screening excluded.
    pub missed: Option<u64>,
    /// Model requests recorded.
    pub calls: u64,
    /// Of those, requests that failed.
    pub failed_calls: u64,
}

/// What a report covers beyond the store's tables as they stand.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The extraction and screening made under this protocol (its hash, or
    /// the start of it); by default the latest extraction and every screening.
    pub protocol: Option<String>,
    /// The protocol file the runs were to be made under: shown as fixed in
    /// advance, with its hash, and (when `protocol` is not given) the runs
    /// it picks; flagged when no run in the store was made under it.
    pub protocol_file: Option<std::path::PathBuf>,
    /// The `ask` run (its `run_id`, or the start of it); by default every one.
    pub ask: Option<String>,
    /// The write-up (its `synthesis_id`, or the start of it); by default every one.
    pub synthesis: Option<String>,
    /// `flow(exports, options)`'s two arguments: the PRISMA flow to draw.
    pub flow: Option<(String, String)>,
    /// `calibrate(screening, sample.csv)`'s two arguments: the calibration to draw.
    pub calibration: Option<(String, String)>,
}

/// `AND column LIKE 'start%'` when a run is named, else nothing.
fn run_filter(column: &str, start: Option<&str>) -> String {
    start.map_or(String::new(), |p| {
        format!(" AND {column} LIKE '{}%'", sql_text(p).replace('%', ""))
    })
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

impl Table {
    /// Drops the columns among `names` that are NULL in every row.
    fn drop_empty(&mut self, names: &[&str]) {
        let empty: Vec<usize> = (0..self.columns.len())
            .filter(|&i| {
                names.contains(&self.columns[i].as_str())
                    && !self.rows.is_empty()
                    && self.rows.iter().all(|r| r[i].is_none())
            })
            .collect();
        for &i in empty.iter().rev() {
            self.columns.remove(i);
            for r in &mut self.rows {
                r.remove(i);
            }
        }
    }
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

/// A section whose query failed for another reason than its table not
/// being in the store (its stage did not run): said on the page, not
/// left out in silence.
fn section_error(body: &mut String, what: &str, e: &str) {
    if e.contains("not found") {
        return;
    }
    let _ = write!(
        body,
        "<p class=\"note\"><b>{}: this section could not be made.</b> {}</p>",
        esc(what),
        esc(e)
    );
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
            sql_text(src)
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
q{background:#fff3b0}mark{background:#ffe066}mark.missing{background:#f8b4b4}td.ctx{max-width:40em}pre.protocol{background:#f6f6f6;padding:.6em;white-space:pre-wrap}.figure{overflow-x:auto}blockquote{margin:.3em 0;padding:.2em .6em;border-left:3px solid #ccc}blockquote.bad{border-color:#e55}.writeup{max-width:48em}\
@media print{details{display:block}details>summary{display:none}}";

/// Makes the session's `extraction` the one of protocol `start` (or drops
/// it when only a screening was made under that protocol); an error
/// naming the store's protocols when none starts so.
async fn pick_protocol(ctx: &SessionContext, store: &str, start: &str) -> Result<(), String> {
    let st = crate::store::Store::open(store).map_err(|e| e.to_string())?;
    let mut folders: Vec<String> = st
        .list("tables/extraction/")
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter_map(|(p, _)| {
            let rest = p.split("tables/extraction/").nth(1)?;
            let (dir, _) = rest.split_once('/')?;
            Some(dir.to_string())
        })
        .collect();
    folders.sort();
    folders.dedup();
    let hits: Vec<&String> = folders.iter().filter(|f| f.starts_with(start)).collect();
    let screened = rows(
        ctx,
        &format!(
            "SELECT DISTINCT protocol_hash FROM screening WHERE protocol_hash LIKE '{}%'",
            sql_text(start)
        ),
    )
    .await
    .map(|t| t.rows.len())
    .unwrap_or(0);
    match hits.as_slice() {
        [one] => {
            let text = |n: &str| datafusion::arrow::datatypes::Field::new(n, datafusion::arrow::datatypes::DataType::Utf8, true);
            let schema = std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new(
                ["document_id", "source", "status", "error", "duplicate_of", "protocol_hash"]
                    .map(text)
                    .to_vec(),
            ));
            let view = crate::store::results::view(&st, "extraction", one, schema)
                .map_err(|e| e.to_string())?;
            ctx.deregister_table("extraction").map_err(|e| e.to_string())?;
            ctx.register_table("extraction", std::sync::Arc::new(view))
                .map_err(|e| e.to_string())?;
            Ok(())
        }
        [] if screened > 0 => {
            ctx.deregister_table("extraction").map_err(|e| e.to_string())?;
            Ok(())
        }
        [] => Err(format!(
            "no extraction or screening in the store {store} was made under a protocol whose hash starts with {start}; its extractions' protocols: {}",
            if folders.is_empty() { "none".to_string() } else { folders.join(", ") }
        )),
        _ => Err(format!(
            "several extractions' protocols start with {start} ({}): give more of the hash",
            hits.iter().map(|h| h.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The report over the store `ctx` opens, with what `opts` adds or picks:
/// the HTML and what it counted; an error when a run it names is not in
/// the store or the flow or calibration it asks for cannot be made.
pub async fn render(
    ctx: &SessionContext,
    store: &str,
    opts: &Options,
) -> Result<(String, Summary), String> {
    let title = format!("quarry audit report: {store}");
    let mut s = Summary::default();
    let mut body = String::new();
    let mut protocol = opts.protocol.clone();
    if let Some(f) = &opts.protocol_file {
        let p = crate::review::protocol::Protocol::load(f).map_err(|e| e.to_string())?;
        let hash = p.short_hash();
        let text = std::fs::read_to_string(f)
            .map_err(|e| format!("cannot read the protocol {}: {e}", f.display()))?;
        body.push_str("<h2 id=\"fixed\">The protocol, as fixed in advance</h2>");
        let _ = write!(
            body,
            "<p><code>{}</code>, hash <code>{}</code> (the SHA-256 of the protocol as quarry validated it; rows made under it carry <code>protocol_hash = '{}'</code>). A run made under an edited protocol has another hash and is not shown as this one's.</p><pre class=\"protocol\">{}</pre>",
            esc(&f.display().to_string()),
            esc(&p.hash()),
            esc(&hash),
            esc(&text)
        );
        protocol.get_or_insert(hash);
    }
    if let Some(p) = &protocol {
        pick_protocol(ctx, store, p).await?;
    }
    let pf = |col: &str| run_filter(col, protocol.as_deref());
    let screening = format!(
        "(SELECT * FROM screening WHERE true{})",
        pf("protocol_hash")
    );
    if let Some((exports, options)) = &opts.flow {
        flow_section(ctx, exports, options, &mut body, &mut s).await?;
    }
    // What happened to every document: its screening and its extraction.
    let docs = rows(
        ctx,
        &format!(
            "SELECT coalesce(s.source, e.source) AS source, s.decision, s.status AS screening, \
         s.error AS screening_error, e.status AS extraction, e.error AS extraction_error, \
         coalesce(e.duplicate_of, s.duplicate_of) AS duplicate_of \
         FROM {screening} s FULL OUTER JOIN extraction e ON s.source = e.source \
         ORDER BY source"
        ),
    )
    .await;
    let mut docs = match docs {
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
                &format!("SELECT source, decision, status AS screening, error AS screening_error, duplicate_of FROM {screening} s ORDER BY source"),
            )
            .await,
        },
    };
    if let Ok(d) = &mut docs {
        // A run that did not happen leaves its columns empty: not shown.
        d.drop_empty(&[
            "decision",
            "screening",
            "screening_error",
            "extraction",
            "extraction_error",
        ]);
    }
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
        if !d.rows.is_empty() {
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
    }
    if let Ok(t) = rows(
        ctx,
        &format!("SELECT regexp_replace(source, '^.*/', '') AS document, decision, criterion, reason, quote, verified, status \
         FROM {screening} s ORDER BY source"),
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
        &format!("SELECT e.document_id, x.source, e.field, e.value, e.quote, e.page, e.section, e.verified, \
         e.\"match\", e.char_start, e.char_end \
         FROM evidence e LEFT JOIN (SELECT DISTINCT document_id, source FROM extraction) x \
         ON e.document_id = x.document_id WHERE true{} ORDER BY x.source, e.document_id, e.field", pf("e.protocol_hash")),
    )
    .await;
    let evidence = match evidence {
        Ok(t) => Ok(t),
        Err(_) => rows(
        ctx,
        &format!("SELECT document_id, CAST(NULL AS VARCHAR) AS source, field, value, quote, page, section, verified, \
         \"match\", char_start, char_end FROM evidence WHERE true{} ORDER BY document_id, field", pf("protocol_hash")),
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
    if let Some((screening, sample)) = &opts.calibration {
        calibration_section(ctx, screening, sample, &mut body, &mut s).await?;
    }
    answers_section(ctx, store, opts.ask.as_deref(), &mut body, &mut s).await;
    synthesis_section(ctx, opts.synthesis.as_deref(), &mut body, &mut s).await;
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
    if let Some(n) = s.unreadable_records {
        count(&mut head, "export entries that could not be read", n, true);
    }
    if let Some(n) = s.not_retrieved {
        count(&mut head, "reports sought and not retrieved", n, true);
    }
    if let Some(n) = s.missed {
        count(
            &mut head,
            "eligible studies a person found among the sampled exclusions",
            n,
            true,
        );
    }
    count(
        &mut head,
        "write-up citations of studies that do not exist",
        s.unknown_citations,
        true,
    );
    if s.claims > 0 {
        count(&mut head, "claims argued in a write-up", s.claims, false);
        count(
            &mut head,
            "claims resting on a study the write-up does not cite",
            s.claims_uncited,
            true,
        );
    }
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
    Ok((html, s))
}

/// One box of the flow diagram: its lines of text (the first in bold).
type FlowBox = Vec<String>;

/// Lines of at most `width` characters, broken at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for w in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    out
}

/// The `n` of a flow stage's total row (the one with no database or
/// criterion).
fn flow_total<'a>(t: &'a Table, stage: &str) -> Option<&'a str> {
    t.rows
        .iter()
        .find(|r| r[0].as_deref() == Some(stage) && r[1].is_none())
        .and_then(|r| r[2].as_deref())
}

/// The PRISMA 2020 flow diagram (new reviews, databases and registers
/// only) of `flow(...)`'s rows (`stage`, `database`, `n`, `detail`), as
/// inline SVG: each stage's box on the left, what left the review at that
/// stage on the right, every count the row's `n`.
fn flow_svg(t: &Table) -> String {
    let n_of = |stage: &str| flow_total(t, stage).map(str::to_string);
    let by = |stage: &str| -> Vec<(String, String)> {
        t.rows
            .iter()
            .filter(|r| r[0].as_deref() == Some(stage))
            .filter_map(|r| Some((r[1].clone()?, r[2].clone()?)))
            .collect()
    };
    let count = |label: &str, stage: &str| -> Option<String> {
        n_of(stage).map(|n| format!("{label} (n = {n})"))
    };
    let mut ident: FlowBox = vec![count("Records identified", "identified").unwrap_or_default()];
    ident.extend(
        by("identified")
            .into_iter()
            .map(|(d, n)| format!("{d} (n = {n})")),
    );
    let mut removed: FlowBox = vec!["Records removed before screening:".into()];
    removed.extend(count("Duplicate records", "duplicates_removed"));
    removed.extend(count("Unreadable export entries", "unreadable"));
    let with_criteria = |head: Option<String>, stage: &str| -> FlowBox {
        let mut b: FlowBox = head.into_iter().collect();
        b.extend(by(stage).into_iter().map(|(c, n)| format!("{c} (n = {n})")));
        b
    };
    let screened_out = match n_of("excluded") {
        Some(_) => with_criteria(count("Records excluded", "excluded"), "excluded"),
        None => vec![
            "Records excluded: no screening given".into(),
            "(flow without protocol=)".into(),
        ],
    };
    let mut assessed_out = match n_of("reports_excluded") {
        Some(_) => with_criteria(
            count("Reports excluded", "reports_excluded"),
            "reports_excluded",
        ),
        None => vec!["Reports excluded: no screening given".into()],
    };
    assessed_out.extend(count("Awaiting a person", "awaiting"));
    let included = match count("Studies included in review", "included") {
        Some(c) => vec![c],
        None => vec!["Studies included: no screening given".into()],
    };
    let steps: Vec<(&str, FlowBox, FlowBox)> = vec![
        ("Identification", ident, removed),
        (
            "Screening",
            count("Records screened", "screened").into_iter().collect(),
            screened_out,
        ),
        (
            "",
            count("Reports sought for retrieval", "sought")
                .into_iter()
                .collect(),
            count("Reports not retrieved", "not_retrieved")
                .into_iter()
                .collect(),
        ),
        (
            "",
            count("Reports assessed for eligibility", "assessed")
                .into_iter()
                .collect(),
            assessed_out,
        ),
        ("Included", included, vec![]),
    ];
    const W: usize = 300;
    const LINE: usize = 16;
    const WRAP: usize = 44;
    let (left_x, right_x, gap) = (120usize, 480usize, 34usize);
    let mut y = 10usize;
    let mut parts = String::new();
    let draw = |parts: &mut String, x: usize, y: usize, h: usize, lines: &[String]| {
        let _ = write!(
            parts,
            "<rect x=\"{x}\" y=\"{y}\" width=\"{W}\" height=\"{h}\" fill=\"#fff\" stroke=\"#444\"/>"
        );
        for (k, l) in lines.iter().enumerate() {
            let _ = write!(
                parts,
                "<text x=\"{}\" y=\"{}\"{}>{}</text>",
                x + 8,
                y + 18 + k * LINE,
                if k == 0 { " font-weight=\"bold\"" } else { "" },
                esc(l)
            );
        }
    };
    let mut prev_bottom: Option<usize> = None;
    for (phase, left, right) in &steps {
        let wrapped =
            |b: &FlowBox| -> Vec<String> { b.iter().flat_map(|l| wrap(l, WRAP)).collect() };
        let (l, r) = (wrapped(left), wrapped(right));
        let h = 12 + LINE * l.len().max(r.len()).max(1);
        if let Some(b) = prev_bottom {
            let _ = write!(
                parts,
                "<line x1=\"{0}\" y1=\"{b}\" x2=\"{0}\" y2=\"{y}\" stroke=\"#444\" marker-end=\"url(#arrow)\"/>",
                left_x + W / 2
            );
        }
        if !phase.is_empty() {
            let _ = write!(
                parts,
                "<text x=\"12\" y=\"{}\" font-weight=\"bold\" fill=\"#555\">{}</text>",
                y + 18,
                esc(phase)
            );
        }
        draw(&mut parts, left_x, y, h, &l);
        if !right.is_empty() {
            draw(&mut parts, right_x, y, h, &r);
            let _ = write!(
                parts,
                "<line x1=\"{}\" y1=\"{1}\" x2=\"{right_x}\" y2=\"{1}\" stroke=\"#444\" marker-end=\"url(#arrow)\"/>",
                left_x + W,
                y + h / 2
            );
        }
        prev_bottom = Some(y + h);
        y += h + gap;
    }
    let height = y - gap + 10;
    let width = right_x + W + 10;
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flow\" role=\"img\" aria-label=\"PRISMA 2020 flow diagram\" \
         viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" font-size=\"13\" font-family=\"system-ui,sans-serif\">\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">\
         <path d=\"M0,0L10,5L0,10z\" fill=\"#444\"/></marker></defs>{parts}</svg>"
    )
}

/// The PRISMA flow of `flow(exports, options)`: the diagram, the search as
/// reported, and every row with its detail. An error when the flow cannot
/// be made (the exports or an option named in it are not there).
async fn flow_section(
    ctx: &SessionContext,
    exports: &str,
    options: &str,
    body: &mut String,
    s: &mut Summary,
) -> Result<(), String> {
    let sql = format!(
        "SELECT stage, database, CAST(n AS VARCHAR) AS n, detail FROM flow('{}', '{}')",
        sql_text(exports),
        sql_text(options)
    );
    let t = rows(ctx, &sql)
        .await
        .map_err(|e| format!("the PRISMA flow ({sql}) could not be made: {e}"))?;
    let total = |stage: &str| flow_total(&t, stage)?.parse::<u64>().ok();
    s.not_retrieved = total("not_retrieved");
    s.unreadable_records = total("unreadable");
    body.push_str("<h2 id=\"flow\">The search and the PRISMA flow</h2>");
    let _ = write!(
        body,
        "<p>PRISMA 2020, counted by <code>sql/flow.sql</code> from the records of <code>{}</code>{}: every count is a row of <code>flow(...)</code> below, so the diagram and the rows agree.</p>",
        esc(exports),
        if options.is_empty() { String::new() } else { format!(" with <code>{}</code>", esc(options)) }
    );
    let search: Vec<usize> = (0..t.rows.len())
        .filter(|&i| t.rows[i][0].as_deref() == Some("search"))
        .collect();
    if !search.is_empty() {
        body.push_str("<h3>The search, as reported</h3>");
        html_table(body, &t, &search, |_| None);
    }
    body.push_str("<div class=\"figure\">");
    body.push_str(&flow_svg(&t));
    body.push_str("</div>");
    let rest: Vec<usize> = (0..t.rows.len())
        .filter(|&i| t.rows[i][0].as_deref() != Some("search"))
        .collect();
    body.push_str("<details><summary>The flow's rows</summary>");
    html_table(body, &t, &rest, |r| {
        (matches!(
            r[0].as_deref(),
            Some("unreadable" | "not_retrieved" | "awaiting")
        ) && r[2].as_deref().is_some_and(|n| n != "0"))
        .then_some("bad")
    });
    body.push_str("</details>");
    Ok(())
}

/// Whether a calibration row is a rate with an interval to draw on 0–100%.
fn drawn_rate(r: &[Option<String>]) -> Option<(f64, f64, f64)> {
    if r[0].as_deref() == Some("lost") {
        return None;
    }
    let f = |i: usize| r[i].as_deref()?.parse::<f64>().ok();
    let (v, lo, hi) = (f(2)?, f(3)?, f(4)?);
    (0.0 <= lo && lo <= v && v <= hi && hi <= 1.0).then_some((v, lo, hi))
}

/// The calibration's rates with their intervals, as inline SVG: one row a
/// rate, its Wilson interval a bar on 0–100%, the estimate a dot.
fn calibration_svg(t: &Table) -> String {
    type Rate<'a> = (&'a Vec<Option<String>>, (f64, f64, f64));
    let drawn: Vec<Rate> = t
        .rows
        .iter()
        .filter_map(|r| Some((r, drawn_rate(r)?)))
        .collect();
    let (label_w, axis_w, row_h) = (230.0, 400.0, 26.0);
    let x = |p: f64| label_w + p * axis_w;
    let height = 30.0 + row_h * drawn.len() as f64 + 20.0;
    let width = label_w + axis_w + 190.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"calibration\" role=\"img\" aria-label=\"calibration rates with their intervals\" \
         viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" font-size=\"12\" font-family=\"system-ui,sans-serif\">"
    );
    for k in 0..=10 {
        let p = k as f64 / 10.0;
        let _ = write!(
            svg,
            "<line x1=\"{0:.1}\" y1=\"20\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"#e3e3e3\"/><text x=\"{0:.1}\" y=\"14\" text-anchor=\"middle\" fill=\"#666\">{2}%</text>",
            x(p),
            height - 16.0,
            k * 10
        );
    }
    for (k, (r, (v, lo, hi))) in drawn.iter().enumerate() {
        let y = 30.0 + row_h * k as f64 + row_h / 2.0;
        let label = format!(
            "{} ({})",
            r[0].as_deref().unwrap_or(""),
            r[1].as_deref().unwrap_or("")
        );
        let _ = write!(
            svg,
            "<text x=\"4\" y=\"{:.1}\">{}</text>\
             <line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#2a6fb0\" stroke-width=\"4\"/>\
             <circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"#123\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{:.1}% ({:.1}–{:.1}), n = {}</text>",
            y + 4.0,
            esc(&label),
            x(*lo),
            x(*hi),
            x(*v),
            label_w + axis_w + 10.0,
            y + 4.0,
            v * 100.0,
            lo * 100.0,
            hi * 100.0,
            esc(r[5].as_deref().unwrap_or("?"))
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The calibration of `calibrate(screening, sample)`: the rates drawn with
/// their intervals, then every row (what was refused, and why; the
/// studies missed). An error when it cannot be made.
async fn calibration_section(
    ctx: &SessionContext,
    screening: &str,
    sample: &str,
    body: &mut String,
    s: &mut Summary,
) -> Result<(), String> {
    let sql = format!(
        "SELECT measure, frame, CAST(round(value, 4) AS VARCHAR) AS value, CAST(round(low, 4) AS VARCHAR) AS low, \
         CAST(round(high, 4) AS VARCHAR) AS high, CAST(n AS VARCHAR) AS n, detail FROM calibrate('{}', '{}')",
        sql_text(screening),
        sql_text(sample)
    );
    let t = rows(ctx, &sql)
        .await
        .map_err(|e| format!("the calibration ({sql}) could not be made: {e}"))?;
    s.missed = Some(
        t.rows
            .iter()
            .filter(|r| r[0].as_deref() == Some("missed"))
            .count() as u64,
    );
    body.push_str("<h2 id=\"calibration\">The screening against a person</h2>");
    let _ = write!(
        body,
        "<p>A person's decisions on the sample <code>{}</code> against the screening <code>{}</code>, by <code>sql/calibrate.sql</code>: each rate with its 95% Wilson score interval (the bar) and estimate (the dot). What the sample's frame cannot support is refused with the reason, not estimated.</p>",
        esc(sample),
        esc(screening)
    );
    if t.rows.iter().any(|r| drawn_rate(r).is_some()) {
        body.push_str("<div class=\"figure\">");
        body.push_str(&calibration_svg(&t));
        body.push_str("</div>");
    }
    let all: Vec<usize> = (0..t.rows.len()).collect();
    html_table(body, &t, &all, |r| {
        let d = r[6].as_deref().unwrap_or("");
        (d.starts_with("refused")
            || r[0].as_deref() == Some("missed")
            || (r[0].as_deref() == Some("adequate") && d.starts_with("only")))
        .then_some("bad")
    });
    Ok(())
}

/// The `ask` answers kept in the store, question by question: each
/// document's answer, whether it is partial and why, and the passages it
/// read in document order.
async fn answers_section(
    ctx: &SessionContext,
    store: &str,
    run: Option<&str>,
    body: &mut String,
    s: &mut Summary,
) {
    let Ok(t) = rows(
        ctx,
        &format!("SELECT run_id, document_id, source, question, recipe, reader, answer, partial, not_found, status, \
         array_to_string(notes, '; ') AS notes, calls, usd FROM answers WHERE true{} ORDER BY question, run_id, source",
         run_filter("run_id", run)),
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
async fn synthesis_section(
    ctx: &SessionContext,
    which: Option<&str>,
    body: &mut String,
    s: &mut Summary,
) {
    let w = match rows(
        ctx,
        &format!("SELECT synthesis_id, src, protocol_hash, options, CAST(written_at AS VARCHAR) AS written, text_marked, partial, note \
         FROM synthesis_review WHERE true{} ORDER BY written_at, synthesis_id", run_filter("synthesis_id", which)),
    )
    .await
    {
        Ok(w) => w,
        Err(e) => {
            section_error(body, "The write-up", &e);
            return;
        }
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
    .unwrap_or_else(|e| {
        section_error(body, "The studies the write-up cites", &e);
        Table::default()
    });
    let claims = rows(
        ctx,
        "SELECT synthesis_id, CAST(section AS VARCHAR) AS sec, claim_id, claim, moderator, CAST(study AS VARCHAR) AS st, role, source, cited \
         FROM synthesis_claims ORDER BY synthesis_id, section, CAST(substr(claim_id, 2) AS BIGINT), role DESC, study",
    )
    .await
    .unwrap_or_else(|e| {
        section_error(body, "The claims the write-up argues", &e);
        Table::default()
    });
    body.push_str("<h2 id=\"synthesis\">The write-up</h2><p>Each <code>[study n]</code> links to the study it cites. A marker that names no study of the extraction is <mark class=\"missing\">flagged</mark> and counted at the top. Where the sections argue claims across the studies, each claim is listed with the studies for and against it; a study a claim rests on that the write-up never cites is flagged.</p>");
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
        let (n, flagged) = claims_table(body, &claims, sid, |study| {
            known.get(&format!("[study {study}]")).map(|c| anchor(c))
        });
        s.claims += n;
        s.claims_uncited += flagged;
    }
}

/// The claims a write-up's sections argue (rows of `synthesis_claims`:
/// synthesis_id, section, claim_id, claim, moderator, study, role, source,
/// cited): each claim with the studies for it and against it, a cited
/// study linked to its row (`anchor`), one the write-up does not cite
/// flagged.
fn claims_table(
    body: &mut String,
    claims: &Table,
    sid: &str,
    anchor: impl Fn(&str) -> Option<String>,
) -> (u64, u64) {
    let mine: Vec<&Vec<Option<String>>> = claims
        .rows
        .iter()
        .filter(|c| c[0].as_deref() == Some(sid))
        .collect();
    if mine.is_empty() {
        return (0, 0);
    }
    let (mut n, mut flagged) = (0, 0);
    body.push_str("<h4>Claims argued, and the studies for and against them</h4><table><thead><tr><th>section</th><th>claim</th><th>for</th><th>against</th><th>the studies differ in</th></tr></thead><tbody>");
    // One group a claim: its rows are together (section, then claim).
    for group in mine.chunk_by(|a, b| (&a[1], &a[2]) == (&b[1], &b[2])) {
        let studies = |role: &str| -> (String, bool) {
            let mut out = Vec::new();
            let mut uncited = false;
            for c in group.iter().filter(|c| c[6].as_deref() == Some(role)) {
                let n = c[5].as_deref().unwrap_or("?");
                let label = format!("[study {n}] {}", file_name(c[7].as_deref().unwrap_or("")));
                match (anchor(n), c[8].as_deref() == Some("true")) {
                    (Some(a), true) => {
                        out.push(format!("<a href=\"#{}\">{}</a>", esc(&a), esc(&label)))
                    }
                    _ => {
                        uncited = true;
                        out.push(format!(
                            "{} <mark class=\"missing\">not cited</mark>",
                            esc(&label)
                        ));
                    }
                }
            }
            (
                if out.is_empty() {
                    "—".into()
                } else {
                    out.join("<br>")
                },
                uncited,
            )
        };
        let ((pro, u1), (con, u2)) = (studies("support"), studies("contradict"));
        let g = |i: usize| group[0][i].as_deref().unwrap_or("");
        n += 1;
        flagged += u64::from(u1 || u2);
        row_open(body, (u1 || u2).then_some("bad"));
        let _ = write!(
            body,
            "<td>{}</td><td><b>{}</b> {}</td><td>{pro}</td><td>{con}</td><td>{}</td></tr>",
            esc(g(1)),
            esc(g(2)),
            esc(g(3)),
            esc(g(4))
        );
    }
    body.push_str("</tbody></table>");
    (n, flagged)
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
