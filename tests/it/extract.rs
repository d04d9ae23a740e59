//! extract(src, protocol) and evidence(src, protocol) against the scripted
//! model server on 127.0.0.1.

use std::path::Path;
use std::time::Duration;

use quarry::model::test_server::{Action, Rule, TestServer};

use crate::common::{
    answered, assert_none_sent_again, corpus_with, finished, python_words, sql, sql_command,
    stdout_of, table, walk_files,
};

pub(crate) const PROTOCOL: &str = r#"
name = "seed example"
[[fields]]
name = "design"
description = "The study design"
[[fields]]
name = "n"
description = "Number of participants"
type = "integer"
"#;

/// The seed's example document, and the reply that extracts both fields
/// with their quotes.
const SEED_TEXT: &str = "We ran a randomised controlled trial. We enrolled 120 participants.\n";
const SEED_REPLY: &str = r#"{"design":"randomised controlled trial","n":120,
    "design__quote":"We ran a randomised controlled trial.","n__quote":"We enrolled 120 participants."}"#;

/// A protocol file in `dir` with this text.
pub(crate) fn protocol_file(dir: &Path, text: impl AsRef<str>) -> std::path::PathBuf {
    let proto = dir.join("protocol.toml");
    std::fs::write(&proto, text.as_ref()).unwrap();
    proto
}

/// A session against `url` with its store and config in `dir`; `extra` is
/// added to the endpoint's settings.
fn session_with(url: &str, dir: &Path, extra: &str) -> datafusion::prelude::SessionContext {
    crate::common::scripted_session(url, dir, extra)
}

fn session(url: &str, dir: &Path) -> datafusion::prelude::SessionContext {
    session_with(url, dir, "")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seed_example_design_and_n_with_both_quotes_verified() {
    let srv = TestServer::start(
        vec![Rule {
            needle: "We ran a randomised".into(),
            actions: vec![Action::Reply(SEED_REPLY.into())],
        }],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(dir.path(), &[("trial.txt", SEED_TEXT)]);
    let proto = protocol_file(dir.path(), PROTOCOL);
    let ctx = session(&srv.base_url(), dir.path());
    let (c, p) = (corpus.display(), proto.display());
    let t = table(&ctx, &format!("SELECT design, n, n_filled, n_unverified, conflicts, status FROM extract('{c}', '{p}')")).await;
    assert_eq!(
        t.trim(),
        "+-----------------------------+-----+----------+--------------+-----------+--------+
| design                      | n   | n_filled | n_unverified | conflicts | status |
+-----------------------------+-----+----------+--------------+-----------+--------+
| randomised controlled trial | 120 | 2        | 0            | 0         | ok     |
+-----------------------------+-----+----------+--------------+-----------+--------+"
    );
    let e = table(&ctx, &format!("SELECT field, quote, verified, \"match\", char_start, char_end FROM evidence('{c}', '{p}')")).await;
    assert_eq!(
        e.trim(),
        "+--------+---------------------------------------+----------+-------+------------+----------+
| field  | quote                                 | verified | match | char_start | char_end |
+--------+---------------------------------------+----------+-------+------------+----------+
| design | We ran a randomised controlled trial. | true     | 1.0   | 0          | 37       |
| n      | We enrolled 120 participants.         | true     | 1.0   | 38         | 67       |
+--------+---------------------------------------+----------+-------+------------+----------+"
    );
    assert_eq!(srv.count(), 1, "evidence() was answered from the cache");
    // The n column is typed.
    let b = sql(&ctx, &format!("SELECT n FROM extract('{c}', '{p}')"))
        .await
        .unwrap();
    assert_eq!(
        b[0].schema().field(0).data_type(),
        &datafusion::arrow::datatypes::DataType::Int64
    );
}

const FILLER: &str = "Participants were followed for twelve months at outpatient clinics, and outcomes were assessed by staff who did not know the allocation of any participant.";

fn reply(design: Option<(&str, &str)>, n: Option<(serde_json::Value, &str)>) -> Action {
    let (d, dq) = design.map_or(
        (serde_json::Value::Null, serde_json::Value::Null),
        |(v, q)| (v.into(), q.into()),
    );
    let (n, nq) = n.map_or(
        (serde_json::Value::Null, serde_json::Value::Null),
        |(v, q)| (v, q.into()),
    );
    Action::Reply(
        serde_json::json!({"design": d, "design__quote": dq, "n": n, "n__quote": nq}).to_string(),
    )
}

fn rule(needle: &str, actions: Vec<Action>) -> Rule {
    Rule {
        needle: needle.into(),
        actions,
    }
}

/// The 50-document corpus in several formats, and the scripted replies
/// that cover every case: chunks that agree, that disagree, a paraphrased
/// quote, a number the quote does not state, a value that is not its type,
/// some and all requests failing, a duplicate, a reply cut off mid-JSON, a
/// corrupt file.
pub(crate) fn fifty_documents(dir: &Path) -> (std::path::PathBuf, Vec<Rule>) {
    use serde_json::json;
    let corpus = dir.join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    let mut rules = Vec::new();
    // 40 plain reports, one chunk each, as text, Markdown and HTML.
    for i in 0..40 {
        let body = format!("Trial R{i:02} report. We ran a randomised controlled trial. We enrolled {} participants.", 100 + i);
        match i % 3 {
            0 => std::fs::write(corpus.join(format!("r{i:02}.txt")), &body),
            1 => std::fs::write(corpus.join(format!("r{i:02}.md")), &body),
            _ => std::fs::write(
                corpus.join(format!("r{i:02}.html")),
                format!("<html><body><p>{body}</p></body></html>"),
            ),
        }
        .unwrap();
        rules.push(rule(
            &format!("Trial R{i:02} report."),
            vec![reply(
                Some((
                    "randomised controlled trial",
                    "We ran a randomised controlled trial.",
                )),
                Some((
                    json!(100 + i),
                    &format!("We enrolled {} participants.", 100 + i),
                )),
            )],
        ));
    }
    let two = |a: &str, b: &str| format!("{a} {FILLER}\n\n{b} {FILLER}\n");
    let w = |name: &str, text: &str| std::fs::write(corpus.join(name), text).unwrap();
    // Chunks that agree (two spellings of one value).
    w(
        "s1_agree.txt",
        &two(
            "Trial S1 part one. We ran a randomised controlled trial.",
            "Trial S1 part two. This was a Randomised Controlled Trial.",
        ),
    );
    rules.push(rule(
        "Trial S1 part one.",
        vec![reply(
            Some((
                "randomised controlled trial",
                "We ran a randomised controlled trial.",
            )),
            None,
        )],
    ));
    rules.push(rule(
        "Trial S1 part two.",
        vec![reply(
            Some((
                "Randomised Controlled Trial.",
                "This was a Randomised Controlled Trial.",
            )),
            None,
        )],
    ));
    // Chunks that disagree.
    w(
        "s2_disagree.txt",
        &two(
            "Trial S2 part one. We enrolled 200 participants.",
            "Trial S2 part two. A further analysis included 180 participants.",
        ),
    );
    rules.push(rule(
        "Trial S2 part one.",
        vec![reply(
            None,
            Some((json!(200), "We enrolled 200 participants.")),
        )],
    ));
    rules.push(rule(
        "Trial S2 part two.",
        vec![reply(
            None,
            Some((json!(180), "A further analysis included 180 participants.")),
        )],
    ));
    // A paraphrased quote: kept, unverified, counted.
    w(
        "s3_paraphrase.txt",
        "Trial S3. We ran a randomised controlled trial.\n",
    );
    rules.push(rule(
        "Trial S3.",
        vec![reply(
            Some((
                "randomised controlled trial",
                "The study was a randomized trial with controls.",
            )),
            None,
        )],
    ));
    // A number the quote does not state.
    w(
        "s4_number.txt",
        "Trial S4. We enrolled many participants.\n",
    );
    rules.push(rule(
        "Trial S4.",
        vec![reply(
            None,
            Some((json!(150), "We enrolled many participants.")),
        )],
    ));
    // A value that does not parse as its type.
    w("s5_unparseable.txt", "Trial S5. We ran a randomised controlled trial. We enrolled 120 participants (60 per arm).\n");
    rules.push(rule(
        "Trial S5.",
        vec![reply(
            Some((
                "randomised controlled trial",
                "We ran a randomised controlled trial.",
            )),
            Some((
                json!("120 (60 per arm)"),
                "We enrolled 120 participants (60 per arm).",
            )),
        )],
    ));
    // Some requests failing, and all failing.
    w(
        "s6_some_fail.txt",
        &two(
            "Trial S6 part one. We ran a randomised controlled trial.",
            "Trial S6 part two. Nothing else here.",
        ),
    );
    rules.push(rule(
        "Trial S6 part one.",
        vec![reply(
            Some((
                "randomised controlled trial",
                "We ran a randomised controlled trial.",
            )),
            None,
        )],
    ));
    rules.push(rule("Trial S6 part two.", vec![Action::Status(500, None)]));
    w("s7_all_fail.txt", "Trial S7. We ran a cohort study.\n");
    rules.push(rule("Trial S7.", vec![Action::Status(503, None)]));
    // A duplicate of r00 under another name.
    w(
        "s8_duplicate.txt",
        "Trial R00 report. We ran a randomised controlled trial. We enrolled 100 participants.",
    );
    // A reply cut off mid-JSON.
    w("s9_cut.txt", "Trial S9. We ran a case series.\n");
    rules.push(rule(
        "Trial S9.",
        vec![Action::ReplyCut(r#"{"design": "case se"#.into())],
    ));
    // A corrupt Word file.
    w("s10_corrupt.docx", "this is not a zip archive");

    (corpus, rules)
}

/// A 50-document corpus in several formats against scripted replies: every
/// expected cell and evidence row is checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_documents_with_every_kind_of_reply() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, rules) = fifty_documents(dir.path());
    let srv = TestServer::start(rules, Duration::ZERO).await.unwrap();
    let proto = protocol_file(
        dir.path(),
        format!(
            "{PROTOCOL}\n[segment]\nmethod = \"paragraph\"\nmax_tokens = 50\noverlap_tokens = 0\n"
        ),
    );
    let ctx = session_with(&srv.base_url(), dir.path(), "max_attempts = 2");
    let (c, p) = (corpus.display(), proto.display());
    let rows = sql(
        &ctx,
        &format!(
            "SELECT regexp_replace(source, '^.*/', '') AS f, design, n, n_filled, n_unverified, conflicts, status, \
             regexp_replace(duplicate_of, '^.*/', '') AS dup, error FROM extract('{c}', '{p}') ORDER BY f"
        ),
    )
    .await
    .unwrap();
    let t = datafusion::arrow::util::pretty::pretty_format_batches(&rows)
        .unwrap()
        .to_string();
    let get = |f: &str| -> String {
        t.lines()
            .find(|l| l.starts_with(&format!("| {f} ")))
            .unwrap_or_else(|| panic!("no row {f}: {t}"))
            .to_string()
    };
    let cells = |f: &str| -> Vec<String> {
        get(f)
            .split('|')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    };
    assert_eq!(
        t.lines().filter(|l| l.starts_with("| ")).count(),
        51,
        "50 documents and the header: {t}"
    );
    for i in 0..40 {
        let f = match i % 3 {
            0 => format!("r{i:02}.txt"),
            1 => format!("r{i:02}.md"),
            _ => format!("r{i:02}.html"),
        };
        assert_eq!(
            cells(&f),
            vec![
                f.clone(),
                "randomised controlled trial".into(),
                (100 + i).to_string(),
                "2".into(),
                "0".into(),
                "0".into(),
                "ok".into()
            ],
            "{f}"
        );
    }
    assert_eq!(
        cells("s1_agree.txt")[1..],
        ["randomised controlled trial", "1", "0", "0", "ok"]
    );
    assert_eq!(cells("s2_disagree.txt")[1..], ["200", "1", "0", "1", "ok"]);
    assert_eq!(
        cells("s3_paraphrase.txt")[1..],
        ["randomised controlled trial", "1", "1", "0", "ok"]
    );
    assert_eq!(cells("s4_number.txt")[1..], ["150", "1", "1", "0", "ok"]);
    assert_eq!(
        cells("s5_unparseable.txt")[1..],
        ["randomised controlled trial", "1", "1", "0", "ok"]
    );
    let s6 = cells("s6_some_fail.txt");
    assert_eq!(
        s6[1..6],
        ["randomised controlled trial", "1", "0", "0", "incomplete"]
    );
    assert!(
        s6[6].starts_with("1 of 2 requests failed; first: http_error: HTTP 500"),
        "{s6:?}"
    );
    let s7 = cells("s7_all_fail.txt");
    assert_eq!(s7[1..5], ["0", "0", "0", "failed"]);
    assert!(
        s7[5].starts_with("1 of 1 requests failed; first: http_error: HTTP 503"),
        "{s7:?}"
    );
    assert_eq!(
        cells("s8_duplicate.txt")[1..],
        [
            "randomised controlled trial",
            "100",
            "2",
            "0",
            "0",
            "duplicate",
            "r00.txt"
        ]
    );
    let s9 = cells("s9_cut.txt");
    assert_eq!(s9[1..5], ["0", "0", "0", "failed"]);
    assert!(
        s9[5].contains("malformed_reply: the reply is not valid JSON")
            && s9[5].contains("output cap"),
        "{s9:?}"
    );
    let s10 = cells("s10_corrupt.docx");
    assert_eq!(s10[1..5], ["0", "0", "0", "failed"]);

    // Evidence: one row per supported cell, the best quote for the value that stands.
    let e = table(
        &ctx,
        &format!(
            "SELECT regexp_replace(d.source, '^.*/', '') AS f, e.field, e.value, e.quote, e.verified, round(e.\"match\", 2) AS m \
             FROM evidence('{c}', '{p}') e JOIN documents('{c}') d ON d.document_id = e.document_id AND d.duplicate_of IS NULL \
             WHERE d.file_name LIKE 's%' ORDER BY f, e.field"
        ),
    )
    .await;
    let norm = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| {
                l.split('|')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .collect()
    };
    let got = norm(&e);
    for want in [
        "s1_agree.txt | design | randomised controlled trial | We ran a randomised controlled trial. | true | 1.0",
        "s2_disagree.txt | n | 200 | We enrolled 200 participants. | true | 1.0",
        "s3_paraphrase.txt | design | randomised controlled trial | The study was a randomized trial with controls. | false | 0.13",
        "s4_number.txt | n | 150 | We enrolled many participants. | false | 1.0",
        "s5_unparseable.txt | design | randomised controlled trial | We ran a randomised controlled trial. | true | 1.0",
        "s6_some_fail.txt | design | randomised controlled trial | We ran a randomised controlled trial. | true | 1.0",
    ] {
        assert!(got.iter().any(|l| l == want), "missing: {want}\n{e}");
    }
    // Nothing else: no evidence for an unreadable value, a failed request or a corrupt file.
    assert_eq!(got.iter().filter(|l| l.starts_with('s')).count(), 6, "{e}");
    let n_evidence = table(
        &ctx,
        &format!("SELECT count(*) AS n FROM evidence('{c}', '{p}')"),
    )
    .await;
    // 40 plain x 2, s1 1, s2 1, s3 1, s4 1, s5 1 (design), s6 1.
    assert!(n_evidence.contains("| 86 |"), "{n_evidence}");
    // Each chunk was asked once, however many times the steps read it.
    let requests = srv.requests().len();
    // r00..r39 40; s1, s2 two chunks each; s3, s4, s5 one; s6 one + two attempts
    // at its failing chunk; s7 two attempts; s9 one (a cut reply is not retried).
    assert_eq!(
        requests,
        40 + 2 + 2 + 1 + 1 + 1 + (1 + 2) + 2 + 1,
        "{requests}"
    );
}

/// screen(src, protocol): one decision per document, quotes checked, and a
/// document that could not be read is failed with no decision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screening_decides_every_document_and_never_excludes_an_unread_one() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    let w = |name: &str, text: &str| std::fs::write(corpus.join(name), text).unwrap();
    w(
        "a.txt",
        "Paper A. Adults with hypertension were randomised to a statin or placebo.",
    );
    w(
        "b.txt",
        "Paper B. This narrative review summarises statin trials.",
    );
    w("c.txt", "Paper C. A study of statins.");
    w("d.txt", "Paper D. Children were randomised to exercise.");
    w("e.docx", "not a zip");
    w(
        "f.txt",
        "Paper A. Adults with hypertension were randomised to a statin or placebo.",
    );
    let decide = |d: &str, crit: Option<&str>, quote: &str| {
        Action::Reply(
            json!({"decision": d, "reason": "as stated", "criterion": crit, "quote": quote})
                .to_string(),
        )
    };
    let srv = TestServer::start(
        vec![
            rule(
                "Paper A.",
                vec![decide(
                    "include",
                    None,
                    "Adults with hypertension were randomised to a statin or placebo.",
                )],
            ),
            rule(
                "Paper B.",
                vec![decide(
                    "exclude",
                    Some("E1"),
                    "This narrative review summarises statin trials.",
                )],
            ),
            rule(
                "Paper C.",
                vec![decide("unclear", None, "A study of statins.")],
            ),
            rule(
                "Paper D.",
                vec![decide(
                    "maybe",
                    None,
                    "Children were randomised to exercise.",
                )],
            ),
        ],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let proto = protocol_file(dir.path(), "name = \"statins\"\nquestion = \"Do statins prevent events?\"\ninclusion = [\"randomised trial\", \"adults\"]\nexclusion = [\"a review\"]\n");
    let ctx = session(&srv.base_url(), dir.path());
    let (c, p) = (corpus.display(), proto.display());
    let t = table(
        &ctx,
        &format!(
            "SELECT regexp_replace(source, '^.*/', '') AS f, decision, criterion, verified, status, \
             substr(error, 1, 40) AS error FROM screen('{c}', '{p}') ORDER BY f"
        ),
    )
    .await;
    let want = "\
+--------+----------+-----------+----------+-----------+------------------------------------------+
| f      | decision | criterion | verified | status    | error                                    |
+--------+----------+-----------+----------+-----------+------------------------------------------+
| a.txt  | include  |           | true     | ok        |                                          |
| b.txt  | exclude  | E1        | true     | ok        |                                          |
| c.txt  | unclear  |           | true     | ok        |                                          |
| d.txt  |          |           | true     | failed    | the reply gave no decision of include, e |
| e.docx |          |           | false    | failed    | the file is named .docx but is not a Wor |
| f.txt  | include  |           | true     | duplicate |                                          |
+--------+----------+-----------+----------+-----------+------------------------------------------+";
    assert_eq!(t.trim(), want);
    assert_eq!(srv.count(), 4, "one request per distinct readable document");
    let prompt = srv.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        prompt.contains("I1. randomised trial") && prompt.contains("E1. a review"),
        "{prompt}"
    );
}

/// resolve = "model": one extra request per disagreeing field; the value it
/// chooses stands; if it fails the first stays with a warning naming the
/// field; if it chooses none the first stays, unverified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_model_adjudicates_disagreements() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    let mut rules = Vec::new();
    for (doc, a, b) in [("M1", 200, 180), ("M2", 300, 280), ("M3", 400, 380)] {
        std::fs::write(
            corpus.join(format!("{doc}.txt")),
            format!("Trial {doc} part one. We enrolled {a} participants. {FILLER}\n\nTrial {doc} part two. In all, {b} participants were analysed. {FILLER}\n"),
        )
        .unwrap();
        rules.push(rule(
            &format!("Trial {doc} part one."),
            vec![reply(
                None,
                Some((json!(a), &format!("We enrolled {a} participants."))),
            )],
        ));
        rules.push(rule(
            &format!("Trial {doc} part two."),
            vec![reply(
                None,
                Some((
                    json!(b),
                    &format!("In all, {b} participants were analysed."),
                )),
            )],
        ));
    }
    rules.push(rule(
        "- 200 (quote:",
        vec![Action::Reply(
            json!({"value": "180", "reason": "the analysed number"}).to_string(),
        )],
    ));
    rules.push(rule("- 300 (quote:", vec![Action::Status(500, None)]));
    rules.push(rule(
        "- 400 (quote:",
        vec![Action::Reply(
            json!({"value": null, "reason": "neither"}).to_string(),
        )],
    ));
    let srv = TestServer::start(rules, Duration::ZERO).await.unwrap();
    let proto = protocol_file(dir.path(), format!("{PROTOCOL}\n[segment]\nmethod = \"paragraph\"\nmax_tokens = 50\noverlap_tokens = 0\n[extract]\nresolve = \"model\"\n"));
    let ctx = session_with(&srv.base_url(), dir.path(), "max_attempts = 1");
    let (c, p) = (corpus.display(), proto.display());
    let t = table(
        &ctx,
        &format!(
            "SELECT regexp_replace(source, '^.*/', '') AS f, n, n_unverified, conflicts, status, warnings \
             FROM extract('{c}', '{p}') ORDER BY f"
        ),
    )
    .await;
    let norm: Vec<String> = t
        .lines()
        .filter(|l| l.starts_with("| M"))
        .map(|l| {
            l.split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect();
    assert_eq!(norm[0], "M1.txt | 180 | 0 | 1 | ok", "{t}");
    assert!(norm[1].starts_with("M2.txt | 300 | 0 | 1 | ok | resolve: the request to choose a value of n failed; the first value stands"), "{t}");
    assert_eq!(norm[2], "M3.txt | 400 | 1 | 1 | ok | resolve: the model chose none of the values of n; the first stands, unverified", "{t}");
    let e = table(
        &ctx,
        &format!("SELECT value, quote, verified FROM evidence('{c}', '{p}') ORDER BY value"),
    )
    .await;
    assert!(
        e.contains("| 180   | In all, 180 participants were analysed. | true     |"),
        "{e}"
    );
    assert!(
        e.contains("| 400   | We enrolled 400 participants.           | false    |"),
        "{e}"
    );
    // Six chunk requests and three adjudications, each sent once.
    assert_eq!(srv.count(), 9);
}

/// extract(src, protocol, 'included'): the screening runs first and only
/// what it includes is extracted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extraction_of_what_the_screening_included() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(
        dir.path(),
        &[
            (
                "a.txt",
                "Paper A. We ran a randomised controlled trial. We enrolled 120 participants.",
            ),
            ("b.txt", "Paper B. This narrative review summarises trials."),
        ],
    );
    let screen_reply = |d: &str, q: &str| {
        Action::Reply(
            json!({"decision": d, "reason": "r", "criterion": null, "quote": q}).to_string(),
        )
    };
    let srv = TestServer::start(
        vec![
            rule(
                "Document:\n\"\"\"\nPaper A.",
                vec![screen_reply(
                    "include",
                    "We ran a randomised controlled trial.",
                )],
            ),
            rule(
                "Document:\n\"\"\"\nPaper B.",
                vec![screen_reply(
                    "exclude",
                    "This narrative review summarises trials.",
                )],
            ),
            rule(
                "Excerpt:\n\"\"\"\nPaper A.",
                vec![reply(
                    Some((
                        "randomised controlled trial",
                        "We ran a randomised controlled trial.",
                    )),
                    Some((json!(120), "We enrolled 120 participants.")),
                )],
            ),
        ],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let proto = protocol_file(
        dir.path(),
        format!("inclusion = [\"a randomised trial\"]\n{PROTOCOL}"),
    );
    let ctx = session(&srv.base_url(), dir.path());
    let (c, p) = (corpus.display(), proto.display());
    let t = table(
        &ctx,
        &format!("SELECT regexp_replace(source, '^.*/', '') AS f, design, n, status FROM extract('{c}', '{p}', 'included')"),
    )
    .await;
    assert_eq!(
        t.trim(),
        "+-------+-----------------------------+-----+--------+
| f     | design                      | n   | status |
+-------+-----------------------------+-----+--------+
| a.txt | randomised controlled trial | 120 | ok     |
+-------+-----------------------------+-----+--------+"
    );
    let seen: Vec<String> = srv
        .requests()
        .iter()
        .map(|r| {
            let m = r.body["messages"][0]["content"]
                .as_str()
                .unwrap_or_default();
            m.chars()
                .skip(m.chars().count().saturating_sub(80))
                .collect()
        })
        .collect();
    assert_eq!(
        srv.count(),
        3,
        "two screening requests and one extraction request: {seen:#?}"
    );
    let err = sql(
        &ctx,
        &format!("SELECT * FROM extract('{c}', '{p}', 'some')"),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("'included'"), "{err}");
}

/// The protocol of the 50-document runs: the seed's two fields, paragraph
/// chunks, one inclusion criterion.
fn fifty_protocol(dir: &Path) -> std::path::PathBuf {
    protocol_file(
        dir,
        format!(
            "inclusion = [\"a randomised controlled trial\"]\n{PROTOCOL}\n[segment]\nmethod = \"paragraph\"\nmax_tokens = 50\noverlap_tokens = 0\n"
        ),
    )
}

/// The 50-document run, screening then extraction, killed with SIGKILL in
/// the middle and started again, finishes with the same tables as an
/// uninterrupted run (what the queries return and the store's
/// `extraction`, `evidence` and `screening` tables), and no request that
/// was answered is sent again (successes come from the cache, failures from
/// the store's record of them, finished windows from the store's results).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_started_again_ends_with_the_same_tables() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let (corpus, extraction_rules) = fifty_documents(dir.path());
    // Screening: every seventh report excluded, the rest included; these
    // rules come first (a screening request holds the document's text).
    let mut rules = Vec::new();
    for i in (3..40).step_by(7) {
        rules.push(rule(
            &format!("Document:\n\"\"\"\nTrial R{i:02} report."),
            vec![Action::Reply(
                json!({"decision": "exclude", "reason": "not a trial", "criterion": "I1",
                       "quote": "We ran a randomised controlled trial."})
                .to_string(),
            )],
        ));
    }
    rules.push(rule(
        "You are screening",
        vec![Action::Reply(
            json!({"decision": "include", "reason": "a trial", "criterion": null, "quote": null})
                .to_string(),
        )],
    ));
    rules.extend(extraction_rules);
    let proto = fifty_protocol(dir.path());
    let (c, p) = (corpus.display().to_string(), proto.display().to_string());
    let f = "regexp_replace(source, '^.*/', '') AS f";
    let screening =
        format!("SELECT {f}, decision, criterion, quote, verified, status, error, protocol_hash");
    let extraction = format!(
        "SELECT {f}, design, n, n_filled, n_unverified, conflicts, status, \
         regexp_replace(duplicate_of, '^.*/', '') AS dup, error, protocol_hash"
    );
    let evidence = "SELECT document_id, field, value, chunk_id, page, section, quote, char_start, \
                    char_end, verified, \"match\", protocol_hash";
    let queries = [
        format!("{screening} FROM screen('{c}', '{p}') ORDER BY f"),
        format!("{extraction} FROM extract('{c}', '{p}') ORDER BY f"),
        format!("{evidence} FROM evidence('{c}', '{p}') ORDER BY document_id, field"),
        // The store's tables.
        format!("{screening} FROM screening ORDER BY f"),
        format!("{extraction} FROM extraction ORDER BY f"),
        format!("{evidence} FROM evidence ORDER BY document_id, field"),
    ];
    let run = |url: &str, store: &Path| sql_command(url, store, &queries);
    // Uninterrupted.
    let a = TestServer::start(rules.clone(), Duration::ZERO)
        .await
        .unwrap();
    let out = run(&a.base_url(), &dir.path().join("a")).output().unwrap();
    // The two servers differ only in their port.
    let port = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let norm = |out: std::process::Output| {
        port.replace_all(&stdout_of(out), "127.0.0.1:PORT")
            .to_string()
    };
    let want = norm(out);
    let total = a.count();
    // Each table has three border lines (top, under the header, bottom).
    let mut tables: Vec<String> = vec![String::new()];
    let mut borders = 0;
    for line in want.lines() {
        tables.last_mut().unwrap().push_str(&format!("{line}\n"));
        if line.starts_with("+-") {
            borders += 1;
            if borders % 3 == 0 {
                tables.push(String::new());
            }
        }
    }
    tables.retain(|t| !t.trim().is_empty());
    assert_eq!(tables.len(), 6, "{want}");
    // The store's tables are what the queries returned.
    for k in 0..3 {
        assert_eq!(tables[k], tables[k + 3], "table {k}");
    }
    // 50 rows each (and the header) for screening and extraction.
    for k in [0, 1] {
        assert_eq!(
            tables[k].lines().filter(|l| l.starts_with("| ")).count(),
            51,
            "{}",
            tables[k]
        );
    }
    let row = |t: &str, f: &str| -> Vec<String> {
        t.lines()
            .find(|l| l.starts_with(&format!("| {f} ")))
            .unwrap_or_else(|| panic!("no row {f}: {t}"))
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    assert_eq!(row(&tables[0], "r03.txt")[2..4], ["exclude", "I1"]);
    assert_eq!(row(&tables[0], "r04.md")[2..4], ["include", ""]);
    assert_eq!(row(&tables[0], "s10_corrupt.docx")[2], "");
    assert_eq!(row(&tables[0], "s10_corrupt.docx")[6], "failed");
    assert_eq!(
        row(&tables[1], "s8_duplicate.txt")[2..4],
        ["randomised controlled trial", "100"]
    );
    assert_eq!(row(&tables[1], "s9_cut.txt")[7], "failed");

    // Killed with the last window's one extraction request (the reply cut
    // off mid-JSON) held by the server: the other windows are written.
    let b = TestServer::start(rules, Duration::ZERO).await.unwrap();
    b.hold_matching("Excerpt:\n\"\"\"\nTrial S9.");
    let store_b = dir.path().join("b");
    let mut child = run(&b.base_url(), &store_b).spawn().unwrap();
    let kept = |t: &str| finished(&store_b, t);
    let t0 = std::time::Instant::now();
    while b.answered().len() < total - 1
        || kept("screening") < 50
        || kept("extraction") < 48
        || kept("evidence") < 48
    {
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "the client never got that far: {} of {total} answered, results {} {} {}",
            b.answered().len(),
            kept("screening"),
            kept("extraction"),
            kept("evidence")
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before the kill"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = answered(&b);
    b.release();
    let out = run(&b.base_url(), &store_b).output().unwrap();
    assert_eq!(norm(out), want, "the resumed run's tables differ");
    // No request answered before the kill was sent again; the one held at
    // the kill is answered into a closed connection and sent again.
    assert_none_sent_again(&before, &answered(&b), total);
}

/// on_error = "stop": the first failure stops the query with its message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_error_stop_stops_at_the_first_failure() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(
        dir.path(),
        &[
            ("a.txt", "Trial A. We enrolled 10 participants."),
            ("b.txt", "Trial B. We enrolled 20 participants."),
        ],
    );
    let srv = TestServer::start(
        vec![rule("Trial B.", vec![Action::Status(500, None)])],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let ctx = session_with(&srv.base_url(), dir.path(), "max_attempts = 1");
    let (stop, go) = (dir.path().join("stop.toml"), dir.path().join("go.toml"));
    std::fs::write(
        &stop,
        format!("{PROTOCOL}\n[extract]\non_error = \"stop\"\n"),
    )
    .unwrap();
    std::fs::write(&go, PROTOCOL).unwrap();
    let c = corpus.display();
    let err = sql(
        &ctx,
        &format!("SELECT * FROM extract('{c}', '{}')", stop.display()),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("on_error = stop: document") && err.contains("HTTP 500"),
        "{err}"
    );
    // The default goes on: b is failed, a is ok.
    let t = table(
        &ctx,
        &format!(
            "SELECT status FROM extract('{c}', '{}') ORDER BY source",
            go.display()
        ),
    )
    .await;
    assert!(t.contains("| ok     |") && t.contains("| failed |"), "{t}");
}

/// `[extract] repair = true`: a reply that cannot be read as asked (a key
/// missing) goes back once with its problems; the second reply stands when
/// it reads cleanly. Off (the default), the first reply stands, one request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repair_round_sends_a_bad_reply_back_once_when_asked_to() {
    let text = SEED_TEXT;
    let bad = r#"{"design":"randomised controlled trial","design__quote":"We ran a randomised controlled trial."}"#;
    let good = SEED_REPLY;
    for repair in [false, true] {
        let srv = TestServer::start(
            vec![rule(
                "We ran a randomised",
                vec![Action::Reply(bad.into()), Action::Reply(good.into())],
            )],
            Duration::ZERO,
        )
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let corpus = corpus_with(dir.path(), &[("trial.txt", text)]);
        let extra = if repair {
            "[extract]\nrepair = true\n"
        } else {
            ""
        };
        let proto = protocol_file(dir.path(), format!("{PROTOCOL}{extra}"));
        let ctx = session(&srv.base_url(), dir.path());
        let (c, p) = (corpus.display(), proto.display());
        let t = table(
            &ctx,
            &format!("SELECT design, n, n_filled, n_unverified, status FROM extract('{c}', '{p}')"),
        )
        .await;
        let seen = srv.requests();
        if repair {
            assert!(
                t.contains(
                    "| randomised controlled trial | 120 | 2        | 0            | ok     |"
                ),
                "{t}"
            );
            assert_eq!(seen.len(), 2, "one request and one repair");
            let second = seen[1].body.to_string();
            assert!(second.contains("could not be read as asked"), "{second}");
            assert!(
                second.contains("n__quote") && second.contains("missing"),
                "the problems go back: {second}"
            );
            let stages = table(
                &ctx,
                "SELECT stage, count(*) AS n FROM calls GROUP BY stage ORDER BY stage",
            )
            .await;
            assert!(
                stages.contains("| extract | 1 |") && stages.contains("| repair  | 1 |"),
                "{stages}"
            );
            // The first reply's problems stay on record; the repair has none.
            let probs = table(
                &ctx,
                "SELECT stage, count(*) AS n FROM reply_problems() GROUP BY stage",
            )
            .await;
            assert!(
                probs.contains("| extract | 2 |") && !probs.contains("repair"),
                "{probs}"
            );
        } else {
            // The reply lacks a required key: the call failed, nothing is
            // taken from it.
            assert!(t.contains("| 0        | 0            | failed |"), "{t}");
            assert_eq!(seen.len(), 1, "no repair when it is off");
            // The reply's problems are kept with its call.
            let probs = table(
                &ctx,
                "SELECT stage, place, severity FROM reply_problems() ORDER BY place",
            )
            .await;
            assert!(
                probs.contains("| extract | key n        | error    |"),
                "{probs}"
            );
            assert!(
                probs.contains("| extract | key n__quote | error    |"),
                "{probs}"
            );
        }
        // Run again: everything from the cache, nothing sent.
        let before = srv.count();
        let again = table(
            &ctx,
            &format!("SELECT design, n, n_filled, n_unverified, status FROM extract('{c}', '{p}')"),
        )
        .await;
        assert_eq!(again, t);
        assert_eq!(srv.count(), before, "a second run sends nothing");
    }
}

/// `[screen] repair = true`: a screening reply without its quote goes back
/// once; the repaired decision stands. Off, the document is `failed` (never
/// excluded). With `extract(..., 'included')` the screening's repair round
/// runs first and the included document is extracted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repair_round_also_reads_screening_replies() {
    use serde_json::json;
    let text = SEED_TEXT;
    let bad = json!({"decision": "include", "reason": "a trial", "criterion": "randomised trials"})
        .to_string();
    let good = json!({"decision": "include", "reason": "a trial", "criterion": "randomised trials",
                      "quote": "We ran a randomised controlled trial."})
    .to_string();
    let extracted = SEED_REPLY;
    for repair in [false, true] {
        let srv = TestServer::start(
            vec![
                rule(
                    "You are screening",
                    vec![Action::Reply(bad.clone()), Action::Reply(good.clone())],
                ),
                rule("You are extracting", vec![Action::Reply(extracted.into())]),
            ],
            Duration::ZERO,
        )
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let corpus = corpus_with(dir.path(), &[("trial.txt", text)]);
        let extra = if repair {
            "[screen]\nrepair = true\n"
        } else {
            ""
        };
        let proto = protocol_file(
            dir.path(),
            format!("inclusion = [\"randomised trials\"]\n{PROTOCOL}{extra}"),
        );
        let ctx = session(&srv.base_url(), dir.path());
        let (c, p) = (corpus.display(), proto.display());
        let t = table(
            &ctx,
            &format!("SELECT decision, verified, status FROM screen('{c}', '{p}')"),
        )
        .await;
        if repair {
            assert!(t.contains("| include  | true     | ok     |"), "{t}");
            assert_eq!(srv.count(), 2, "one request and one repair");
            let e = table(
                &ctx,
                &format!("SELECT design, n, status FROM extract('{c}', '{p}', 'included')"),
            )
            .await;
            assert!(
                e.contains("| randomised controlled trial | 120 | ok     |"),
                "{e}"
            );
            assert_eq!(
                srv.count(),
                3,
                "the screening came from the cache, then one extraction"
            );
        } else {
            assert!(t.contains("|          | false    | failed |"), "{t}");
            assert_eq!(srv.count(), 1);
        }
    }
}

/// A `corpus` folder under `dir` of 40 one-line trial reports, one chunk and
/// one extraction request each.
pub(crate) fn forty_trials(dir: &Path) -> std::path::PathBuf {
    let files: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("t{i:02}.txt"),
                format!("Trial T{i:02}. We enrolled {i} participants."),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    corpus_with(dir, &files)
}

/// A run ceiling is checked against the whole run before anything is sent:
/// every chunk of every document (or every document, for screening), not
/// just the first window's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_over_its_call_ceiling_is_refused_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = forty_trials(dir.path());
    let srv = TestServer::start(vec![], Duration::ZERO).await.unwrap();
    let proto = protocol_file(dir.path(), format!("inclusion = [\"a trial\"]\n{PROTOCOL}"));
    let (c, p) = (corpus.display(), proto.display());
    for (limit, query) in [
        (39, format!("SELECT count(*) FROM extract('{c}', '{p}')")),
        (39, format!("SELECT count(*) FROM screen('{c}', '{p}')")),
        (
            39,
            format!("SELECT count(*) FROM extract('{c}', '{p}', 'included')"),
        ),
    ] {
        let ctx = session_with(
            &srv.base_url(),
            dir.path(),
            &format!("\n[limits]\nmax_total_calls = {limit}"),
        );
        let err = sql(&ctx, &query).await.unwrap_err().to_string();
        assert!(
            err.contains("call_cap") && err.contains("at least 40 model calls"),
            "{err}"
        );
        assert_eq!(srv.count(), 0, "refused before any request: {query}");
    }
    let ctx = session_with(
        &srv.base_url(),
        dir.path(),
        "\n[limits]\nmax_total_calls = 40",
    );
    let t = table(
        &ctx,
        &format!("SELECT status, count(*) AS n FROM extract('{c}', '{p}') GROUP BY status"),
    )
    .await;
    assert!(t.contains("| ok     | 40 |"), "{t}");
    assert_eq!(srv.count(), 40);
    // The table streams in order of source across windows (three here),
    // as it declares; ORDER BY gives that order, or its reverse.
    let names = |b: Vec<datafusion::arrow::array::RecordBatch>| -> Vec<String> {
        b.iter()
            .flat_map(|b| {
                let c = datafusion::arrow::compute::cast(
                    b.column(0),
                    &datafusion::arrow::datatypes::DataType::Utf8,
                )
                .unwrap();
                let c = c
                    .as_any()
                    .downcast_ref::<datafusion::arrow::array::StringArray>()
                    .unwrap()
                    .clone();
                (0..datafusion::arrow::array::Array::len(&c)).map(move |i| c.value(i).to_string())
            })
            .collect()
    };
    let want: Vec<String> = (0..40).map(|i| format!("t{i:02}.txt")).collect();
    let q = |order: &str| {
        format!("SELECT regexp_replace(source, '^.*/', '') AS f FROM extract('{c}', '{p}'){order}")
    };
    assert_eq!(
        names(sql(&ctx, &q(" ORDER BY source")).await.unwrap()),
        want
    );
    let mut desc = want.clone();
    desc.reverse();
    assert_eq!(
        names(sql(&ctx, &q(" ORDER BY source DESC")).await.unwrap()),
        desc
    );
}

/// A request that failed is restored as failed by the next run (its
/// document's stored rows come back, nothing is sent); `--retry-failed`
/// sends it again, and the document and the store's tables are made again
/// from the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_failed_sends_a_failed_request_again_and_remakes_its_rows() {
    let srv = TestServer::start(
        vec![rule(
            "We ran a randomised",
            vec![Action::Status(500, None), Action::Reply(SEED_REPLY.into())],
        )],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(dir.path(), &[("trial.txt", SEED_TEXT)]);
    let proto = protocol_file(dir.path(), PROTOCOL);
    let cfg = dir.path().join("quarry.toml");
    std::fs::write(
        &cfg,
        format!(
            "[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{}\"\nmax_attempts = 1\n",
            srv.base_url()
        ),
    )
    .unwrap();
    let settings = |retry_failed: bool| quarry::Settings {
        store: Some(dir.path().join("store").display().to_string()),
        config: Some(cfg.clone()),
        retry_failed,
        ..Default::default()
    };
    let (c, p) = (corpus.display(), proto.display());
    let q = format!("SELECT n, n_filled, status FROM extract('{c}', '{p}')");
    let stored = "SELECT n, n_filled, status FROM extraction";
    for (retry, want, sent) in [
        (false, "|   | 0        | failed |", 1),
        (false, "|   | 0        | failed |", 1),
        (true, "| 120 | 2        | ok     |", 2),
        (false, "| 120 | 2        | ok     |", 2),
    ] {
        let ctx = quarry::session(&settings(retry)).unwrap();
        let t = table(&ctx, &q).await;
        assert!(t.contains(want), "retry {retry}: {t}");
        assert_eq!(srv.count(), sent, "retry {retry}");
        let s = table(&ctx, stored).await;
        assert!(s.contains(want), "retry {retry}: {s}");
        // The failure kept for resuming is packed, not a file of its own.
        let failures = walk_files(&dir.path().join("store/failures"));
        assert!(
            !failures.is_empty()
                && failures
                    .iter()
                    .all(|p| p.to_string_lossy().contains("/packs/")),
            "{failures:?}"
        );
    }
}

/// Another engine reads the run's tables: DuckDB over the store's
/// `screening`, `evidence` and `extraction` Delta tables (their current
/// files as the log lists them, through the Python `deltalake` package)
/// counts what quarry's tables hold, after a second run over an edited
/// corpus replaced some rows; and a long run's files stay few (one commit
/// per window and table, not a file per document).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duckdb_reads_the_stores_run_tables_with_quarrys_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, rules) = fifty_documents(dir.path());
    let proto = fifty_protocol(dir.path());
    let srv = TestServer::start(rules, Duration::ZERO).await.unwrap();
    let ctx = session(&srv.base_url(), dir.path());
    let (c, p) = (corpus.display(), proto.display());
    let q = format!(
        "SELECT (SELECT count(*) FROM screen('{c}', '{p}')) AS s, (SELECT count(*) FROM extract('{c}', '{p}')) AS e"
    );
    table(&ctx, &q).await;
    // An edit, so rows are replaced and some files are no longer current.
    let first = walk_files(&corpus)
        .into_iter()
        .find(|f| f.extension().is_some_and(|e| e == "txt"))
        .unwrap();
    let text = std::fs::read_to_string(&first).unwrap();
    std::fs::write(&first, format!("{text}\n\nAn added closing line.")).unwrap();
    table(&ctx, &q).await;
    let ours = table(
        &ctx,
        "SELECT (SELECT count(*) FROM screening) AS s, (SELECT count(*) FROM evidence) AS v, (SELECT count(*) FROM extraction) AS e",
    )
    .await;
    let store = dir.path().join("store/tables");
    let extraction = std::fs::read_dir(store.join("extraction"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .unwrap();
    let theirs = python_words(
        "import sys, duckdb, deltalake\n\
         c = duckdb.connect()\n\
         n = [c.execute('SELECT count(*) FROM read_parquet(?)', [deltalake.DeltaTable(p).file_uris()]).fetchone()[0] for p in sys.argv[1:]]\n\
         print(*n)",
        &[&store.join("screening"), &store.join("evidence"), &extraction],
    );
    let o = theirs.join(" ");
    let row = ours
        .lines()
        .find(|l| l.starts_with("| ") && !l.contains(" s "))
        .unwrap();
    let cells: Vec<&str> = row
        .split('|')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(cells, theirs, "quarry {ours} DuckDB {o}");
    assert_eq!(theirs[0], "50", "{o}");
    assert_eq!(theirs[2], "50", "{o}");
    // Files: a few per table, whatever the corpus size (50 documents in
    // windows of 16: 4 windows a run, 2 runs each for screening).
    for t in ["screening", "evidence", "runs/ledger"] {
        let data = walk_files(&store.join(t))
            .iter()
            .filter(|p| {
                p.extension().is_some_and(|e| e == "parquet")
                    && !p.to_string_lossy().contains("_delta_log")
            })
            .count();
        assert!(data <= 16, "{t}: {data} data files for 50 documents");
    }
    assert!(!dir.path().join("store/results").exists());
    // The caches are packs, not a file per request or document: every
    // entry packed by the end of the runs (no single files left).
    for (c, most) in [("cache", 2 * 2 * FANOUT), ("ingest", 2 * FANOUT)] {
        let all = walk_files(&dir.path().join("store").join(c));
        let single = all
            .iter()
            .filter(|p| !p.to_string_lossy().contains("/packs/"))
            .count();
        assert_eq!(single, 0, "{c}: {all:?}");
        assert!(all.len() <= most, "{c}: {} files", all.len());
    }
}

const FANOUT: usize = quarry::store::packs::FANOUT;

/// A file taken out of the corpus leaves the store's run tables: after a
/// run through the whole listing, `extraction` and `evidence` hold no rows
/// of it (nor the ledger an entry), while another corpus's rows stay; a
/// query that stopped early (LIMIT) clears nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_taken_out_of_the_corpus_leaves_the_stores_run_tables() {
    let srv = TestServer::start(
        vec![rule(
            "We ran a randomised",
            vec![Action::Reply(SEED_REPLY.into())],
        )],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(
        dir.path(),
        &[
            ("a.txt", SEED_TEXT),
            (
                "b.txt",
                &format!("{SEED_TEXT}A second site joined later.\n"),
            ),
        ],
    );
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("c.txt"),
        format!("{SEED_TEXT}Follow-up was one year.\n"),
    )
    .unwrap();
    let proto = protocol_file(dir.path(), PROTOCOL);
    let p = proto.display();
    let ctx = session(&srv.base_url(), dir.path());
    for c in [&corpus, &other] {
        let t = table(
            &ctx,
            &format!(
                "SELECT count(*) AS n FROM extract('{}', '{p}')",
                c.display()
            ),
        )
        .await;
        assert!(!t.contains("| 0 "), "{t}");
    }
    let held = "SELECT (SELECT string_agg(DISTINCT regexp_replace(source, '.*/', ''), ',' ORDER BY regexp_replace(source, '.*/', '')) FROM extraction) AS e, \
                (SELECT count(DISTINCT document_id) FROM evidence) AS v";
    let before = table(&ctx, held).await;
    assert!(before.contains("| a.txt,b.txt,c.txt | 3 |"), "{before}");
    std::fs::remove_file(corpus.join("b.txt")).unwrap();
    let c = corpus.display();
    table(
        &ctx,
        &format!("SELECT source FROM extract('{c}', '{p}') LIMIT 1"),
    )
    .await;
    let stopped = table(&ctx, held).await;
    assert_eq!(stopped, before, "a LIMIT query cleared rows");
    table(&ctx, &format!("SELECT count(*) FROM extract('{c}', '{p}')")).await;
    let after = table(&ctx, held).await;
    assert!(after.contains("| a.txt,c.txt | 2 |"), "{after}");
    let n = finished_of(&dir.path().join("store")).await;
    assert!(n.values().all(|&n| n == 2), "ledger {n:?}");
}

/// The store's ledger's finished documents, by table.
async fn finished_of(store: &Path) -> std::collections::BTreeMap<String, usize> {
    let store = quarry::store::Store::open(&store.display().to_string()).unwrap();
    quarry::store::results::finished(&store).await.unwrap()
}
