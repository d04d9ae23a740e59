//! claims(src, spec), rejections(src, spec), the store's claims table and
//! changes_since, against the scripted model server on 127.0.0.1.

use std::path::{Path, PathBuf};
use std::time::Duration;

use quarry::model::test_server::{Action, Rule, TestServer};
use sha2::Digest;

use crate::common::{
    answered, assert_none_sent_again, corpus_with, finished, python_words, scripted_session, sql,
    sql_command, stdout_of, strings, table,
};

/// Seed 004's example: measurements of an ultra-diffuse galaxy, with the
/// band they were made in as context.
pub const SPEC: &str = r#"
name = "udg measurements"
instructions = "List every measurement of an ultra-diffuse galaxy in the paper."
kinds = ["measurement"]
context_keys = ["band"]
"#;

pub const GALAXY: &str = "Dragonfly 44 (DF44) is an ultra-diffuse galaxy in the Coma cluster. \
DF44 has an effective radius of 4.7 kpc in the g band, as in Fig. 3 of van Dokkum et al. (2016). \
In the i band its effective radius is 4.1 kpc. We do not resolve its globular clusters.\n";

/// The model's reply for the galaxy: two measurements with their bands,
/// and one whose quote the paper does not contain.
pub fn galaxy_reply() -> String {
    serde_json::json!({"claims": [
        {"kind": "measurement", "subject": "DF44", "predicate": "effective_radius",
         "quantity": {"verbatim": "4.7 kpc", "value": 4.7, "unit_text": "kpc"},
         "context": {"band": "g"},
         "quote": "DF44 has an effective radius of 4.7 kpc in the g band"},
        {"kind": "measurement", "subject": "DF44", "predicate": "effective_radius",
         "quantity": {"verbatim": "4.1 kpc", "value": 4.1, "unit_text": "kpc"},
         "context": {"band": "i"},
         "quote": "In the i band its effective radius is 4.1 kpc."},
        {"kind": "measurement", "subject": "DF44", "predicate": "velocity_dispersion",
         "quantity": {"verbatim": "47 km/s", "value": 47, "unit_text": "km/s"},
         "quote": "DF44 has a stellar velocity dispersion of 47 km/s."}
    ]})
    .to_string()
}

pub(crate) fn spec_file(dir: &Path) -> PathBuf {
    let p = dir.join("claims.toml");
    std::fs::write(&p, SPEC).unwrap();
    p
}

/// A claim's id as seed 004 defines it, computed here on its own: the
/// SHA-256 of the document, kind, subject, predicate, object, polarity,
/// sorted context, the quantity's verbatim text, the span and the schema
/// hash (32 hex digits).
fn expected_id(
    doc: &str,
    subject: &str,
    predicate: &str,
    context: &[[&str; 2]],
    verbatim: &str,
    span: (i64, i64),
    schema_hash: &str,
) -> String {
    let identity = serde_json::json!([
        doc,
        "measurement",
        subject,
        predicate,
        null,
        "positive",
        context,
        verbatim,
        span.0,
        span.1,
        schema_hash
    ]);
    hex::encode(&sha2::Sha256::digest(identity.to_string().as_bytes())[..16])
}

fn byte_to_char(text: &str, byte: usize) -> i64 {
    text[..byte].chars().count() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seed_example_gives_claims_with_spans_and_ids_and_an_invented_quote_is_ungrounded() {
    let srv = TestServer::start(
        vec![Rule {
            needle: "Dragonfly 44".into(),
            actions: vec![Action::Reply(galaxy_reply())],
        }],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(dir.path(), &[("df44.txt", GALAXY)]);
    let spec = spec_file(dir.path());
    let ctx = scripted_session(&srv.base_url(), dir.path(), "");
    let (c, s) = (corpus.display(), spec.display());
    let got = table(
        &ctx,
        &format!(
            "SELECT subject, predicate, quantity['verbatim'] AS verbatim, quantity['value'] AS value, \
             context[1]['value'] AS band, span['char_start'] AS char_start, span['char_end'] AS char_end, \
             span['match'] AS m, stamp['model'] AS model, revision \
             FROM claims('{c}', '{s}') ORDER BY char_start"
        ),
    )
    .await;
    let g = GALAXY.find("DF44 has").unwrap();
    let g_end = GALAXY.find(" In the i band").unwrap();
    let i = GALAXY.find("In the i band").unwrap();
    let i_end = GALAXY.find(" We do not").unwrap();
    let (g, g_end, i, i_end) = (
        byte_to_char(GALAXY, g),
        byte_to_char(GALAXY, g_end),
        byte_to_char(GALAXY, i),
        byte_to_char(GALAXY, i_end),
    );
    let expected = format!(
        "+---------+------------------+----------+-------+------+------------+----------+-----+-------------+----------+
| subject | predicate        | verbatim | value | band | char_start | char_end | m   | model       | revision |
+---------+------------------+----------+-------+------+------------+----------+-----+-------------+----------+
| DF44    | effective_radius | 4.7 kpc  | 4.7   | g    | {g:<10} | {g_end:<8} | 1.0 | gpt-4o-mini | 0        |
| DF44    | effective_radius | 4.1 kpc  | 4.1   | i    | {i:<10} | {i_end:<8} | 1.0 | gpt-4o-mini | 0        |
+---------+------------------+----------+-------+------+------------+----------+-----+-------------+----------+"
    );
    assert_eq!(
        got.trim(),
        expected,
        "the g-band sentence is whole: Fig. 3 and et al. do not end it"
    );
    // The ids, computed here from the fields.
    let b = sql(
        &ctx,
        &format!(
            "SELECT claim_id, document_id, stamp['schema_hash'] AS h FROM claims('{c}', '{s}') ORDER BY span['char_start']"
        ),
    )
    .await
    .unwrap();
    let ids = strings(&b, "claim_id");
    let doc = strings(&b, "document_id")[0].clone().unwrap();
    let h = strings(&b, "h")[0].clone().unwrap();
    assert_eq!(
        ids,
        vec![
            Some(expected_id(
                &doc,
                "DF44",
                "effective_radius",
                &[["band", "g"]],
                "4.7 kpc",
                (g, g_end),
                &h
            )),
            Some(expected_id(
                &doc,
                "DF44",
                "effective_radius",
                &[["band", "i"]],
                "4.1 kpc",
                (i, i_end),
                &h
            )),
        ]
    );
    // The invented quote is a rejection, with the draft and the reason.
    let r = table(
        &ctx,
        &format!("SELECT code, problems[1] AS problem, draft LIKE '%velocity_dispersion%' AS has_draft FROM rejections('{c}', '{s}')"),
    )
    .await;
    assert!(
        r.contains("| ungrounded | claims[2].quote: not found in the text the model was sent"),
        "{r}"
    );
    assert!(r.contains("| true      |"), "{r}");
    assert_eq!(r.trim().lines().count(), 5, "one rejection: {r}");
    assert_eq!(
        srv.count(),
        1,
        "rejections() was answered from the run's results"
    );
    // The store's tables, by name.
    let stored = table(&ctx, "SELECT count(*) AS n, min(revision) AS r FROM claims").await;
    assert!(stored.contains("| 2 | 0 |"), "{stored}");
    let rej = table(&ctx, "SELECT code FROM rejections").await;
    assert!(rej.contains("| ungrounded |"), "{rej}");
    // Which paper says so: a claim joins to its document.
    let which = table(
        &ctx,
        &format!(
            "SELECT regexp_replace(d.source, '^.*/', '') AS paper, c.quantity['verbatim'] AS v \
             FROM claims c JOIN documents('{c}') d ON c.document_id = d.document_id \
             WHERE c.context[1]['value'] = 'g'"
        ),
    )
    .await;
    assert!(which.contains("| df44.txt | 4.7 kpc |"), "{which}");
}

/// Claims from every reply shape that is not a clean list: a failed
/// request, a reply that cannot be read, a draft that breaks the spec.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_draft_is_a_claim_or_a_rejection_and_failures_are_rows() {
    let srv = TestServer::start(
        vec![
            Rule {
                needle: "Dragonfly 44".into(),
                actions: vec![Action::Reply(galaxy_reply())],
            },
            Rule {
                needle: "Cut off".into(),
                actions: vec![Action::Reply(r#"{"claims": [{"kind": "measure"#.into())],
            },
            Rule {
                needle: "Broken".into(),
                actions: vec![Action::Status(500, None)],
            },
            Rule {
                needle: "Assertion".into(),
                actions: vec![Action::Reply(
                    serde_json::json!({"claims": [
                        {"kind": "assertion", "subject": "DF44", "predicate": "is", "object": "dark",
                         "quote": "Assertion: DF44 is dark."},
                        {"kind": "measurement", "subject": "DF44", "predicate": "mass",
                         "quote": "Assertion: DF44 is dark."}
                    ]})
                    .to_string(),
                )],
            },
        ],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(
        dir.path(),
        &[
            ("a.txt", GALAXY),
            ("b.txt", "Cut off. This reply ends early.\n"),
            ("c.txt", "Broken. The server fails.\n"),
            ("d.txt", "Assertion: DF44 is dark.\n"),
        ],
    );
    let spec = spec_file(dir.path());
    let ctx = scripted_session(&srv.base_url(), dir.path(), "max_attempts = 1");
    let (c, s) = (corpus.display(), spec.display());
    let r = table(
        &ctx,
        &format!(
            "SELECT code, count(*) AS n FROM rejections('{c}', '{s}') GROUP BY code ORDER BY code"
        ),
    )
    .await;
    assert_eq!(
        r.trim(),
        "+------------+---+
| code       | n |
+------------+---+
| failed     | 1 |
| invalid    | 2 |
| ungrounded | 1 |
| unreadable | 1 |
+------------+---+",
        "the assertion is not a kind this spec allows; the measurement has no quantity"
    );
    let n = table(
        &ctx,
        &format!("SELECT count(*) AS n FROM claims('{c}', '{s}')"),
    )
    .await;
    assert!(n.contains("| 2 |"), "{n}");
    let why = table(
        &ctx,
        &format!(
            "SELECT problems FROM rejections('{c}', '{s}') WHERE code = 'invalid' ORDER BY ordinal"
        ),
    )
    .await;
    assert!(
        why.contains("'assertion' is not one of measurement"),
        "{why}"
    );
    assert!(why.contains("a measurement needs a quantity"), "{why}");
}

/// A second paper, with one measurement in context.
const MALIN1: &str = "Malin 1 is a giant low surface brightness galaxy. \
Malin 1 has a disk scale length of 70 kpc in the g band.\n";

/// The model's reply for [`MALIN1`].
fn malin1_reply() -> String {
    serde_json::json!({"claims": [
        {"kind": "measurement", "subject": "Malin 1", "predicate": "scale_length",
         "quantity": {"verbatim": "70 kpc", "value": 70, "unit_text": "kpc"}, "context": {"band": "g"},
         "quote": "Malin 1 has a disk scale length of 70 kpc in the g band."}]})
    .to_string()
}

fn session_for_model(url: &str, dir: &Path, model: &str) -> datafusion::prelude::SessionContext {
    let cfg = format!(
        "[model]\nname = \"{model}\"\n[endpoints.default]\nbase_url = \"{url}\"\nbackoff_initial_ms = 5\n"
    );
    quarry::model::test_server::session_in(dir, &cfg).expect("session")
}

/// Another model: the same ids, new stamps, a new revision per document.
/// An edited document: only its claims change, and changes_since says
/// exactly what.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revisions_follow_models_and_edits_and_changes_since_lists_them() {
    let (other, other_reply) = (MALIN1, malin1_reply());
    // The edited paper: the i-band radius corrected, the g-band one kept.
    let edited = GALAXY.replace("is 4.1 kpc", "is 3.9 kpc");
    let edited_reply = galaxy_reply().replace("4.1", "3.9");
    let srv = TestServer::start(
        vec![
            Rule {
                needle: "is 3.9 kpc".into(),
                actions: vec![Action::Reply(edited_reply)],
            },
            Rule {
                needle: "Dragonfly 44".into(),
                actions: vec![Action::Reply(galaxy_reply())],
            },
            Rule {
                needle: "Malin 1".into(),
                actions: vec![Action::Reply(other_reply)],
            },
        ],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(dir.path(), &[("df44.txt", GALAXY), ("malin1.txt", other)]);
    let spec = spec_file(dir.path());
    let (c, s) = (corpus.display(), spec.display());
    let q = format!("SELECT count(*) AS n FROM claims('{c}', '{s}')");
    let ids = "SELECT claim_id, document_id, stamp['model'] AS model, revision FROM claims ORDER BY claim_id";

    let ctx = session_for_model(&srv.base_url(), dir.path(), "gpt-4o-mini");
    assert!(table(&ctx, &q).await.contains("| 3 |"));
    let first = sql(&ctx, ids).await.unwrap();
    assert_eq!(
        strings(&first, "revision"),
        vec![Some("0".into()); 3],
        "one window, one commit"
    );

    // The same run again: nothing changed, nothing committed.
    assert!(table(&ctx, &q).await.contains("| 3 |"));
    let again = sql(&ctx, ids).await.unwrap();
    assert_eq!(strings(&again, "revision"), vec![Some("0".into()); 3]);
    assert!(table(&ctx, "SELECT count(*) AS n FROM changes_since(0)")
        .await
        .contains("| 0 |"));

    // Another model: the same ids, its stamp, a new revision.
    let ctx = session_for_model(&srv.base_url(), dir.path(), "llama-3.1-8b");
    assert!(table(&ctx, &q).await.contains("| 3 |"));
    let second = sql(&ctx, ids).await.unwrap();
    assert_eq!(strings(&second, "claim_id"), strings(&first, "claim_id"));
    assert_eq!(
        strings(&second, "model"),
        vec![Some("llama-3.1-8b".into()); 3]
    );
    assert_eq!(strings(&second, "revision"), vec![Some("1".into()); 3]);
    let restamped = table(
        &ctx,
        "SELECT revision, change, count(*) AS n FROM changes_since(0) GROUP BY revision, change",
    )
    .await;
    assert!(
        restamped.contains("| 1        | restamped | 3 |"),
        "{restamped}"
    );

    // One document edited: only its changed claim is new.
    std::fs::write(corpus.join("df44.txt"), &edited).unwrap();
    assert!(table(&ctx, &q).await.contains("| 3 |"));
    // A document's id is its text's digest, so the edited paper is a new
    // document at the same path: its rows replace the old ones (by path),
    // its claims have new ids, the other paper's are untouched.
    let changes = table(
        &ctx,
        "SELECT revision, change, claim_id FROM changes_since(1)",
    )
    .await;
    let lines: Vec<&str> = changes
        .trim()
        .lines()
        .skip(3)
        .filter(|l| l.starts_with("| "))
        .collect();
    assert_eq!(
        lines.len(),
        4,
        "the old paper's two claims removed, the new one's two added: {changes}"
    );
    assert!(
        lines.iter().all(|l| l.starts_with("| 2        |")),
        "{changes}"
    );
    assert_eq!(changes.matches("| added ").count(), 2, "{changes}");
    assert_eq!(changes.matches("| removed ").count(), 2, "{changes}");
    let kept = table(
        &ctx,
        "SELECT quantity['verbatim'] AS v, revision FROM claims ORDER BY v",
    )
    .await;
    assert_eq!(
        kept.trim(),
        "+---------+----------+
| v       | revision |
+---------+----------+
| 3.9 kpc | 2        |
| 4.7 kpc | 2        |
| 70 kpc  | 1        |
+---------+----------+",
        "the edited paper's claims are revision 2, the other paper's stay at 1"
    );
    // Paging: one revision at a time.
    let paged = table(&ctx, "SELECT DISTINCT revision FROM changes_since(-1, 1)").await;
    assert!(
        paged.contains("| 0        |") && !paged.contains("| 1        |"),
        "{paged}"
    );
    // What the last prompt change would redo: every claim of a prompt.
    let blast = table(
        &ctx,
        "SELECT count(*) AS n FROM claims WHERE stamp['prompt_hash'] = (SELECT max(stamp['prompt_hash']) FROM claims)",
    )
    .await;
    assert!(blast.contains("| 3 |"), "{blast}");
}

/// A file taken out of the corpus: the next full run clears its claims in
/// one revision (changes_since lists them removed); another folder's
/// claims under the same spec, and a run that stopped early, clear nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_taken_out_of_the_corpus_loses_its_claims_and_nothing_else_does() {
    let (other, other_reply) = (MALIN1, malin1_reply());
    let srv = TestServer::start(
        vec![
            Rule {
                needle: "Dragonfly 44".into(),
                actions: vec![Action::Reply(galaxy_reply())],
            },
            Rule {
                needle: "Malin 1".into(),
                actions: vec![Action::Reply(other_reply)],
            },
        ],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(dir.path(), &[("df44.txt", GALAXY), ("malin1.txt", other)]);
    // A second corpus whose folder name starts like the first's.
    let elsewhere = dir.path().join("corpus2");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("malin1.txt"), other).unwrap();
    let spec = spec_file(dir.path());
    let s = spec.display();
    let run = |c: &Path| format!("SELECT count(*) AS n FROM claims('{}', '{s}')", c.display());
    let by_doc =
        "SELECT document_id, count(*) AS n FROM claims GROUP BY document_id ORDER BY document_id";
    let ctx = session_for_model(&srv.base_url(), dir.path(), "gpt-4o-mini");
    assert!(table(&ctx, &run(&corpus)).await.contains("| 3 |"));
    assert!(table(&ctx, &run(&elsewhere)).await.contains("| 1 |"));
    let sources = "SELECT DISTINCT document_id FROM claims";
    assert_eq!(
        sql(&ctx, sources)
            .await
            .unwrap()
            .iter()
            .map(|b| b.num_rows())
            .sum::<usize>(),
        2,
        "the two copies of malin1.txt are one document (one text): {}",
        table(&ctx, by_doc).await
    );
    let before = table(&ctx, "SELECT count(*) AS n FROM claims").await;
    assert!(before.contains("| 4 |"), "{before}");
    let latest = |t: String| -> i64 {
        t.lines()
            .filter_map(|l| l.trim().trim_matches('|').trim().parse().ok())
            .next()
            .unwrap_or(-1)
    };
    let rev = latest(table(&ctx, "SELECT max(revision) AS r FROM claims").await);

    // A query that stops early does not go through the listing: nothing
    // is cleared even though a file is gone.
    std::fs::remove_file(corpus.join("malin1.txt")).unwrap();
    let _ = table(
        &ctx,
        &format!(
            "SELECT source FROM claims('{}', '{s}') LIMIT 1",
            corpus.display()
        ),
    )
    .await;
    // The whole run: malin1.txt's claim from this folder is removed, in one revision.
    assert!(table(&ctx, &run(&corpus)).await.contains("| 2 |"));
    let changes = table(
        &ctx,
        &format!("SELECT revision, change, count(*) AS n FROM changes_since({rev}) GROUP BY revision, change"),
    )
    .await;
    assert!(changes.contains("| removed | 1 |"), "{changes}");
    assert_eq!(changes.matches("| removed").count(), 1, "{changes}");
    assert!(!changes.contains("| added"), "{changes}");
    // The other folder's copy keeps its claim; df44's are untouched.
    let after = table(
        &ctx,
        "SELECT source, count(*) AS n FROM claims GROUP BY source ORDER BY source",
    )
    .await;
    assert!(after.contains("corpus2/malin1.txt | 1 "), "{after}");
    assert!(after.contains("corpus/df44.txt    | 2 "), "{after}");
    assert!(!after.contains("corpus/malin1.txt"), "{after}");
    // Running again clears nothing more.
    let cleared = latest(table(&ctx, "SELECT max(revision) AS r FROM changes_since(-1)").await);
    assert!(cleared > rev, "the clearing is a revision of its own");
    assert!(table(&ctx, &run(&corpus)).await.contains("| 2 |"));
    let again = latest(table(&ctx, "SELECT max(revision) AS r FROM changes_since(-1)").await);
    assert_eq!(again, cleared, "nothing more was committed");
}

/// Another engine reads the store: DuckDB over the claims table's current
/// files as the Delta log lists them (the Python `deltalake` package), with
/// the counts quarry gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duckdb_reads_the_stores_claims_table_with_quarrys_counts() {
    let srv = TestServer::start(
        vec![Rule {
            needle: "Dragonfly 44".into(),
            actions: vec![Action::Reply(galaxy_reply())],
        }],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let other = GALAXY.replace("Coma cluster", "Virgo cluster");
    let corpus = corpus_with(dir.path(), &[("df44.txt", GALAXY), ("copy.txt", &other)]);
    let spec = spec_file(dir.path());
    let ctx = scripted_session(&srv.base_url(), dir.path(), "");
    let (c, s) = (corpus.display(), spec.display());
    table(&ctx, &format!("SELECT count(*) FROM claims('{c}', '{s}')")).await;
    // An edit, so the table has a second revision and files no longer current.
    std::fs::write(
        corpus.join("copy.txt"),
        other.replace("4.1 kpc", "4.1 kpc."),
    )
    .unwrap();
    table(&ctx, &format!("SELECT count(*) FROM claims('{c}', '{s}')")).await;
    let ours = table(
        &ctx,
        "SELECT (SELECT count(*) FROM claims) AS claims, (SELECT count(*) FROM rejections) AS rejections",
    )
    .await;
    let theirs = python_words(
        "import sys, duckdb, deltalake\n\
         t = deltalake.DeltaTable(sys.argv[1])\n\
         n = duckdb.connect().execute(\"SELECT count(*) FILTER (WHERE code IS NULL), count(*) FILTER (WHERE code IS NOT NULL) FROM read_parquet(?)\", [t.file_uris()]).fetchone()\n\
         print(n[0], n[1], t.version())",
        &[&dir.path().join("store/tables/claims")],
    );
    let o = theirs.join(" ");
    assert!(
        ours.contains(&format!("| {}      | {}          |", theirs[0], theirs[1])),
        "quarry {ours} DuckDB {o}"
    );
    assert_eq!(theirs[0], "4", "{o}");
    assert_eq!(theirs[2], "1", "two commits: {o}");
}

/// A spec's claims are kept by its name: two specs over one corpus keep
/// theirs side by side, and a prompt fix under the same name replaces only
/// what the old prompt gave.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn specs_keep_their_claims_apart_and_a_fixed_prompt_replaces_its_own() {
    let srv = TestServer::start(
        vec![Rule {
            needle: "Dragonfly 44".into(),
            actions: vec![Action::Reply(galaxy_reply())],
        }],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(dir.path(), &[("df44.txt", GALAXY)]);
    let a = spec_file(dir.path());
    let b = dir.path().join("sizes.toml");
    std::fs::write(&b, SPEC.replace("udg measurements", "udg sizes")).unwrap();
    let ctx = scripted_session(&srv.base_url(), dir.path(), "");
    let c = corpus.display();
    for s in [&a, &b] {
        table(
            &ctx,
            &format!("SELECT count(*) FROM claims('{c}', '{}')", s.display()),
        )
        .await;
    }
    let per =
        "SELECT spec, count(*) AS n, max(revision) AS r FROM claims GROUP BY spec ORDER BY spec";
    assert_eq!(
        table(&ctx, per).await.trim(),
        "+------------------+---+---+
| spec             | n | r |
+------------------+---+---+
| udg measurements | 2 | 0 |
| udg sizes        | 2 | 1 |
+------------------+---+---+"
    );
    // The first spec's prompt fixed: its claims are redone and restamped.
    std::fs::write(
        &a,
        SPEC.replace("in the paper.", "in the paper, with its band."),
    )
    .unwrap();
    table(
        &ctx,
        &format!("SELECT count(*) FROM claims('{c}', '{}')", a.display()),
    )
    .await;
    assert_eq!(
        table(&ctx, per).await.trim(),
        "+------------------+---+---+
| spec             | n | r |
+------------------+---+---+
| udg measurements | 2 | 2 |
| udg sizes        | 2 | 1 |
+------------------+---+---+"
    );
    let prompts = table(
        &ctx,
        "SELECT count(DISTINCT stamp['prompt_hash']) AS prompts FROM claims",
    )
    .await;
    assert!(prompts.contains("| 2       |"), "{prompts}");
}

/// A claims run over 40 papers killed with SIGKILL while one paper's
/// request is held, then started again, finishes with the claims and
/// rejections of an uninterrupted run (what `claims(...)` returns and the
/// store's tables), and sends no answered request again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_claims_run_started_again_ends_with_the_same_claims() {
    let dir = tempfile::tempdir().unwrap();
    let papers: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("p{i:02}.txt"),
                format!(
                    "Paper P{i:02}. DF{i} has an effective radius of {i}.5 kpc in the g band.\n"
                ),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = papers
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let corpus = corpus_with(dir.path(), &files);
    // Each paper: one grounded measurement and one draft whose quote the
    // paper does not contain.
    let rules: Vec<Rule> = (0..40)
        .map(|i| Rule {
            needle: format!("Paper P{i:02}."),
            actions: vec![Action::Reply(
                serde_json::json!({"claims": [
                    {"kind": "measurement", "subject": format!("DF{i}"), "predicate": "effective_radius",
                     "quantity": {"verbatim": format!("{i}.5 kpc"), "value": i as f64 + 0.5, "unit_text": "kpc"},
                     "context": {"band": "g"},
                     "quote": format!("DF{i} has an effective radius of {i}.5 kpc in the g band.")},
                    {"kind": "measurement", "subject": format!("DF{i}"), "predicate": "mass",
                     "quantity": {"verbatim": "1e8 Msun"},
                     "quote": format!("DF{i} weighs 1e8 solar masses.")}
                ]})
                .to_string(),
            )],
        })
        .collect();
    let spec = spec_file(dir.path());
    let (c, s) = (corpus.display().to_string(), spec.display().to_string());
    let f = "regexp_replace(source, '^.*/', '') AS d";
    let queries = [
        format!("SELECT claim_id, subject, predicate, quantity['verbatim'] AS v, span['quote'] AS quote FROM claims('{c}', '{s}') ORDER BY claim_id"),
        format!("SELECT {f}, code, problems FROM rejections('{c}', '{s}') ORDER BY d, code"),
        // The store's tables (revisions are left out: they number commits).
        "SELECT claim_id, subject, predicate, quantity['verbatim'] AS v, span['quote'] AS quote FROM claims ORDER BY claim_id".to_string(),
        format!("SELECT {f}, code, problems FROM rejections ORDER BY d, code"),
    ];
    let run = |url: &str, store: &Path| sql_command(url, store, &queries);
    let a = TestServer::start(rules.clone(), Duration::ZERO)
        .await
        .unwrap();
    let want = stdout_of(run(&a.base_url(), &dir.path().join("a")).output().unwrap());
    let total = a.count();
    assert_eq!(total, 40, "one request a paper");
    // 40 claims from the function and 40 in the store; as many rejections.
    let rows = want.lines().filter(|l| l.starts_with("| ")).count();
    assert_eq!(rows, 4 * 41, "{want}");
    assert!(want.contains("| p07.txt | ungrounded |"), "{want}");

    // Killed with the last paper's request held: the windows before it
    // are in the store, the requests after them in the response cache.
    let b = TestServer::start(rules, Duration::ZERO).await.unwrap();
    b.hold_matching("Paper P39.");
    let store_b = dir.path().join("b");
    let mut child = run(&b.base_url(), &store_b).spawn().unwrap();
    let kept = || finished(&store_b, "claims");
    let t0 = std::time::Instant::now();
    while b.answered().len() < total - 1 || kept() < 32 {
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "the run never got that far: {} of {total} answered, {} papers kept",
            b.answered().len(),
            kept()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before the kill"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let before = answered(&b);
    b.release();
    assert_eq!(
        stdout_of(run(&b.base_url(), &store_b).output().unwrap()),
        want,
        "the resumed run's claims differ"
    );
    assert_none_sent_again(&before, &answered(&b), total);
}
