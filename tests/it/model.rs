//! The model layer against a real HTTP server on 127.0.0.1 (quarry's scripted
//! test server): retries, Retry-After, timeouts, malformed and truncated
//! replies, the cache, replay, rails, and that no secret reaches the store.

use std::path::Path;
use std::time::{Duration, Instant};

use quarry::model::test_server::{Action, Rule, TestServer};
use tempfile::TempDir;

use crate::common::{sql, table};

/// A session whose default endpoint is `url`, with `extra` TOML appended
/// to the endpoint section and `rest` after it.
fn session(
    url: &str,
    store: Option<&Path>,
    endpoint_extra: &str,
    rest: &str,
) -> (datafusion::prelude::SessionContext, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("quarry.toml");
    let mut endpoint = format!("base_url = \"{url}\"\n{endpoint_extra}\n");
    for (k, v) in [("backoff_initial_ms", "20"), ("timeout_seconds", "5")] {
        if !endpoint_extra.contains(k) {
            endpoint.push_str(&format!("{k} = {v}\n"));
        }
    }
    std::fs::write(
        &cfg,
        format!("[model]\nname = \"gpt-4o-mini\"\n\n[endpoints.default]\n{endpoint}\n{rest}\n"),
    )
    .unwrap();
    let ctx = quarry::session(&quarry::Settings {
        store: store.map(|p| p.display().to_string()),
        config: Some(cfg),
        ..Default::default()
    })
    .unwrap();
    (ctx, dir)
}

fn rule(needle: &str, actions: Vec<Action>) -> Rule {
    Rule {
        needle: needle.into(),
        actions,
    }
}

async fn server(rules: Vec<Rule>) -> TestServer {
    TestServer::start(rules, Duration::ZERO).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_over_a_column_answers_every_row_and_traces_each_call() {
    let srv = server(vec![rule("capital", vec![Action::Reply("Paris".into())])]).await;
    let store = tempfile::tempdir().unwrap();
    let (ctx, _c) = session(&srv.base_url(), Some(store.path()), "", "");
    let t = table(
        &ctx,
        "SELECT p, llm(p) AS a FROM (VALUES ('capital of France?'), ('two plus two'), (NULL)) t(p) ORDER BY p",
    )
    .await;
    assert!(
        t.contains("| capital of France? | Paris              |"),
        "{t}"
    );
    assert!(
        t.contains("| two plus two       | echo: two plus two |"),
        "{t}"
    );
    assert_eq!(srv.count(), 2, "a NULL prompt sends nothing");
    let calls = table(
        &ctx,
        "SELECT stage, model, ok, cached, tokens_in > 0 AS t_in, tokens_out > 0 AS t_out, usd > 0 AS paid, \
         request LIKE '%capital of France%' OR request LIKE '%two plus two%' AS has_prompt \
         FROM calls ORDER BY call_id",
    )
    .await;
    assert_eq!(
        calls
            .matches("| llm   | gpt-4o-mini | true | false  | true | true  | true | true       |")
            .count(),
        2,
        "{calls}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_is_sent_once_per_statement_and_a_failure_is_retried_by_the_next() {
    let srv = server(vec![rule(
        "flaky",
        vec![Action::Status(500, None), Action::Reply("back".into())],
    )])
    .await;
    let (ctx, _c) = session(&srv.base_url(), None, "max_attempts = 1", "");
    // The same prompt three times, and a CTE evaluated twice: one request.
    let t = table(
        &ctx,
        "WITH a AS (SELECT llm(p) AS r FROM (VALUES ('same'), ('same'), ('same')) t(p)) \
         SELECT count(*) AS n, count(DISTINCT r) AS d FROM (SELECT r FROM a UNION ALL SELECT r FROM a)",
    )
    .await;
    assert!(t.contains("| 6 | 1 |"), "{t}");
    assert_eq!(srv.count(), 1);
    // Within a statement a failure is one outcome; the next statement tries again.
    quarry::session::begin_statement(&ctx);
    let first = table(&ctx, "SELECT llm('flaky') AS a, llm('flaky') AS b").await;
    assert!(first.contains("|   |   |"), "{first}");
    quarry::session::begin_statement(&ctx);
    let second = table(&ctx, "SELECT llm('flaky') AS a").await;
    assert!(second.contains("| back |"), "{second}");
    assert_eq!(srv.count(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_is_retried_after_the_wait_the_server_asked_for() {
    let srv = server(vec![rule(
        "busy",
        vec![Action::Status(429, Some(1.0)), Action::Reply("done".into())],
    )])
    .await;
    let (ctx, _c) = session(&srv.base_url(), None, "", "");
    let t0 = Instant::now();
    let t = table(&ctx, "SELECT llm('busy now?') AS a").await;
    let waited = t0.elapsed();
    assert!(t.contains("| done |"), "{t}");
    assert!(
        waited >= Duration::from_millis(950),
        "Retry-After: 1 was not honoured: {waited:?}"
    );
    let calls = table(
        &ctx,
        "SELECT call_id, attempt, ok, error FROM calls ORDER BY attempt",
    )
    .await;
    assert!(
        calls.contains(
            "| 1       | 1       | false | rate_limited: HTTP 429 from http://127.0.0.1:"
        ),
        "{calls}"
    );
    assert!(calls.contains("(Retry-After 1.0s)"), "{calls}");
    assert!(calls.contains("| 1       | 2       | true  |"), "{calls}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_give_up_after_max_attempts_and_are_recorded_not_raised() {
    let srv = server(vec![
        rule("broken", vec![Action::Status(500, None)]),
        rule(
            "dropped",
            vec![Action::Drop, Action::Reply("second try".into())],
        ),
        rule("cut", vec![Action::Truncate, Action::Reply("whole".into())]),
        rule(
            "garbled",
            vec![Action::Raw(
                r#"{"choices":[{"message":{"content":"ha"#.into(),
            )],
        ),
    ])
    .await;
    let (ctx, _c) = session(&srv.base_url(), None, "max_attempts = 3", "");
    let t = table(
        &ctx,
        "SELECT p, llm(p) AS a FROM (VALUES ('broken'), ('dropped'), ('cut'), ('garbled')) t(p) ORDER BY p",
    )
    .await;
    assert!(t.contains("| broken  |            |"), "{t}");
    assert!(t.contains("| dropped | second try |"), "{t}");
    assert!(t.contains("| cut     | whole      |"), "{t}");
    assert!(t.contains("| garbled |            |"), "{t}");
    // 3 attempts at the 500, 2 each for the drop and the cut, 1 for the garbled body (not retried).
    assert_eq!(srv.count(), 3 + 2 + 2 + 1);
    let calls = table(
        &ctx,
        "SELECT split_part(error, ':', 1) AS class, count(*) AS n FROM calls WHERE NOT ok GROUP BY 1 ORDER BY 1",
    )
    .await;
    assert!(calls.contains("| http_error      | 3 |"), "{calls}");
    assert!(calls.contains("| malformed_reply | 1 |"), "{calls}");
    assert!(calls.contains("| transport_error | 2 |"), "{calls}");
    let garbled = table(
        &ctx,
        "SELECT error FROM calls WHERE error LIKE 'malformed%'",
    )
    .await;
    assert!(garbled.contains("cut off"), "{garbled}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reply_times_out() {
    let srv = server(vec![rule(
        "slow",
        vec![Action::Sleep(
            Duration::from_secs(3),
            Box::new(Action::Reply("late".into())),
        )],
    )])
    .await;
    let (ctx, _c) = session(
        &srv.base_url(),
        None,
        "timeout_seconds = 0.3\nmax_attempts = 2",
        "",
    );
    let t0 = Instant::now();
    let t = table(&ctx, "SELECT llm('slow one', 'detail=true')['error'] AS e").await;
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    assert!(
        t.contains("timeout: no reply from http://127.0.0.1:"),
        "{t}"
    );
    let n = table(
        &ctx,
        "SELECT count(*) AS n FROM calls WHERE error LIKE 'timeout%'",
    )
    .await;
    assert!(n.contains("| 2 |"), "{n}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_json_checks_the_reply_and_records_what_is_wrong() {
    let schema = r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#;
    let srv = server(vec![
        rule("good", vec![Action::Reply(r#"{"n": 3}"#.into())]),
        rule("prose", vec![Action::Reply("The answer is 3.".into())]),
        rule("short", vec![Action::ReplyCut(r#"{"n": "#.into())]),
        rule("lacks", vec![Action::Reply(r#"{"m": 1}"#.into())]),
    ])
    .await;
    let (ctx, _c) = session(&srv.base_url(), None, "", "");
    let t = table(
        &ctx,
        &format!("SELECT p, llm_json(p, '{schema}') AS a FROM (VALUES ('good'), ('prose'), ('short'), ('lacks')) t(p) ORDER BY p"),
    )
    .await;
    assert!(t.contains(r#"| good  | {"n": 3} |"#), "{t}");
    for p in ["prose", "short", "lacks"] {
        assert!(t.contains(&format!("| {p:<5} |          |")), "{p}: {t}");
    }
    let e = table(
        &ctx,
        "SELECT reply, error FROM calls WHERE NOT ok ORDER BY error",
    )
    .await;
    assert!(e.contains("the reply is not valid JSON at line 1"), "{e}");
    assert!(e.contains("generation stopped at the output cap"), "{e}");
    assert!(e.contains("lacks required key(s): n"), "{e}");
    assert!(
        e.contains("The answer is 3."),
        "the reply is kept with its problem: {e}"
    );
    // The schema went to the server as a json_schema response format.
    let sent = srv.requests();
    assert!(sent
        .iter()
        .all(|r| r.body["response_format"]["type"] == "json_schema"));
    // A schema that is not JSON is a planning error naming the argument.
    let err = sql(&ctx, "SELECT llm_json('x', '{not json')")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("json_schema is not valid JSON"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_responses_api_shape_works() {
    let srv = server(vec![rule("hello", vec![Action::Reply("hi there".into())])]).await;
    let (ctx, _c) = session(&srv.base_url(), None, "api = \"responses\"", "");
    let t = table(
        &ctx,
        "SELECT llm('hello', 'max_output=20, temperature=0') AS a",
    )
    .await;
    assert!(t.contains("| hi there |"), "{t}");
    let r = &srv.requests()[0];
    assert_eq!(r.path, "/v1/responses");
    assert_eq!(r.body["max_output_tokens"], 20);
    assert_eq!(r.body["input"][0]["content"], "hello");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeat_is_answered_by_the_cache_with_no_request() {
    let srv = server(vec![]).await;
    let store = tempfile::tempdir().unwrap();
    let q = "SELECT llm('p' || v) AS a FROM (VALUES (1), (2), (3)) t(v) ORDER BY a";
    let (ctx, _c) = session(&srv.base_url(), Some(store.path()), "", "");
    let first = table(&ctx, q).await;
    assert_eq!(srv.count(), 3);
    // A new session over the same store: zero requests reach the server.
    let (ctx2, _c2) = session(
        &srv.base_url(),
        Some(store.path()),
        "timeout_seconds = 60",
        "",
    );
    let second = table(&ctx2, q).await;
    assert_eq!(first, second);
    assert_eq!(srv.count(), 3, "the repeat reached the server");
    let stats = table(
        &ctx2,
        "SELECT entries, hits, misses, writes FROM cache_stats()",
    )
    .await;
    assert!(
        stats.contains("| 3       | 3    | 0      | 0      |"),
        "{stats}"
    );
    let cached = table(
        &ctx2,
        "SELECT cached, count(*) AS n, sum(usd) AS usd FROM calls GROUP BY cached ORDER BY cached",
    )
    .await;
    // The calls table holds both runs: three paid, three from the cache at no cost.
    assert!(cached.contains("| true   | 3 | 0.0    |"), "{cached}");
    assert!(cached.contains("| false  | 3 |"), "{cached}");
    // A different temperature is a different request.
    table(&ctx2, "SELECT llm('p1', 'temperature=0.5') AS a").await;
    assert_eq!(srv.count(), 4);
}

/// A request recorded both as a failure and as a success (a failed attempt
/// then a retry that answered; a run that failed it and a later one that
/// answered it) replays as its success, the state the run ended in; one
/// that only failed replays as that failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_gives_a_request_that_failed_then_succeeded_its_success() {
    let mut srv = server(vec![
        rule(
            "retried",
            vec![
                Action::Status(500, None),
                Action::Reply("second attempt".into()),
            ],
        ),
        rule(
            "later run",
            vec![
                Action::Status(503, None),
                Action::Reply("second run".into()),
            ],
        ),
        rule("never", vec![Action::Status(500, None)]),
    ])
    .await;
    let recording = tempfile::tempdir().unwrap();
    let q = "SELECT llm('retried') AS a, llm('never', 'detail=true')['error'] AS e";
    let (ctx, cfg) = session(
        &srv.base_url(),
        Some(recording.path()),
        "max_attempts = 2",
        "",
    );
    let t = table(&ctx, q).await;
    assert!(
        t.contains("second attempt") && t.contains("http_error"),
        "{t}"
    );
    // One attempt each: the first run fails, the next one answers.
    for want in ["|   |", "second run"] {
        let (ctx, _c) = session(
            &srv.base_url(),
            Some(recording.path()),
            "max_attempts = 1",
            "",
        );
        let t = table(&ctx, "SELECT llm('later run') AS b").await;
        assert!(t.contains(want), "{t}");
    }
    srv.stop();
    let fresh = tempfile::tempdir().unwrap();
    let ctx = quarry::session(&quarry::Settings {
        store: Some(fresh.path().display().to_string()),
        config: Some(cfg.path().join("quarry.toml")),
        replay: Some(recording.path().display().to_string()),
        ..Default::default()
    })
    .unwrap();
    let t = table(
        &ctx,
        "SELECT llm('retried') AS a, llm('later run') AS b, llm('never', 'detail=true')['error'] AS e",
    )
    .await;
    assert!(
        t.contains("| second attempt | second run |") && t.contains("http_error"),
        "{t}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_reproduces_a_run_with_the_server_stopped_and_misses_loudly() {
    let mut srv = server(vec![rule("q2", vec![Action::Reply("two".into())])]).await;
    let recording = tempfile::tempdir().unwrap();
    let q = "SELECT v, llm('q' || v) AS a, llm_json('q' || v, '{\"type\":\"object\"}') AS j FROM (VALUES (1), (2), (3)) t(v) ORDER BY v";
    let (ctx, cfg) = session(&srv.base_url(), Some(recording.path()), "", "");
    let first = table(&ctx, q).await;
    srv.stop();
    drop(ctx);
    let replay = |partial: bool| {
        let fresh = tempfile::tempdir().unwrap();
        let ctx = quarry::session(&quarry::Settings {
            store: Some(fresh.path().display().to_string()),
            config: Some(cfg.path().join("quarry.toml")),
            replay: Some(recording.path().display().to_string()),
            replay_partial: partial,
            ..Default::default()
        })
        .unwrap();
        (ctx, fresh)
    };
    let (ctx, _f) = replay(false);
    assert_eq!(
        table(&ctx, q).await,
        first,
        "replay differs from the recording"
    );
    let miss = sql(&ctx, "SELECT llm('never asked') AS a")
        .await
        .unwrap_err()
        .to_string();
    assert!(miss.contains("replay_miss"), "{miss}");
    let (ctx, _f) = replay(true);
    let t = table(
        &ctx,
        "SELECT llm('never asked', 'detail=true')['error'] AS e, llm('q2') AS b",
    )
    .await;
    assert!(t.contains("replay_miss") && t.contains("| two |"), "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rails_refuse_up_front_and_stop_mid_run() {
    let srv = server(vec![]).await;
    // Up front: a batch of 5 under a run ceiling of 4 sends nothing.
    let (ctx, _c) = session(&srv.base_url(), None, "", "[limits]\nmax_total_calls = 4");
    let five = "SELECT llm('x' || v) FROM (VALUES (1),(2),(3),(4),(5)) t(v)";
    let err = sql(&ctx, five).await.unwrap_err().to_string();
    assert!(
        err.contains("call_cap") && err.contains("max_total_calls = 4"),
        "{err}"
    );
    assert_eq!(srv.count(), 0);
    // Mid-run: 3 calls fit, the next query gets 1 more and the rest are refused.
    let three = |s: &str| {
        format!("SELECT v, llm('{s}' || v) AS a FROM (VALUES (1),(2),(3)) t(v) ORDER BY v")
    };
    table(&ctx, &three("a")).await;
    let t = table(&ctx, &three("b")).await;
    assert_eq!(srv.count(), 4);
    assert_eq!(t.matches("| echo: b").count(), 1, "{t}");
    let refused = table(&ctx, "SELECT attempt, error FROM calls WHERE NOT ok").await;
    assert_eq!(
        refused
            .matches("call_cap_reached: the run reached max_total_calls = 4")
            .count(),
        2,
        "{refused}"
    );

    // Per document: each document stops at its own ceiling; the others go on.
    let (ctx, _c) = session(&srv.base_url(), None, "", "[limits]\nmax_calls = 2");
    let before = srv.count();
    let t = table(
        &ctx,
        "SELECT d, count(a) AS answered, count(*) AS asked FROM \
         (SELECT d, llm(d || v, 'document=' || d) AS a FROM (VALUES ('d1'),('d2')) x(d), (VALUES (1),(2),(3)) y(v)) \
         GROUP BY d ORDER BY d",
    )
    .await;
    assert!(
        t.contains("| d1 | 2        | 3     |") && t.contains("| d2 | 2        | 3     |"),
        "{t}"
    );
    assert_eq!(srv.count() - before, 4);
    let notes = table(
        &ctx,
        "SELECT document_id, error FROM calls WHERE attempt = 0 ORDER BY document_id",
    )
    .await;
    assert!(
        notes.contains("document d1 reached max_calls = 2"),
        "{notes}"
    );

    // Dollars: the worst case of a plan is checked before anything is sent.
    let (ctx, _c) = session(
        &srv.base_url(),
        None,
        "",
        "[limits]\nmax_total_usd = 0.01\n[models.\"pricey\"]\ncontext_window = 8000\nmax_output = 4000\nusd_per_1m_in = 1000\nusd_per_1m_out = 1000",
    );
    let before = srv.count();
    let err = sql(
        &ctx,
        "SELECT llm('x' || v, 'model=pricey, max_output=100') FROM (VALUES (1),(2)) t(v)",
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("cost_cap") && err.contains("max_total_usd = 0.01"),
        "{err}"
    );
    assert_eq!(srv.count(), before);
    // One request's worst case fits (about $0.11 at 100 output tokens would not; 5 tokens does).
    let t = table(&ctx, "SELECT llm('hi', 'model=pricey, max_output=5') AS a").await;
    assert!(t.contains("echo: hi"), "{t}");

    // A document's dollar ceiling: each request reserves its worst case ($0.01 here), so two
    // fit under $0.025 and the third is not sent; the other document goes on.
    let (ctx, _c) = session(
        &srv.base_url(),
        None,
        "",
        "[limits]\nmax_cost_usd = 0.025\n[models.\"pricey\"]\ncontext_window = 8000\nmax_output = 4000\nusd_per_1m_in = 1000\nusd_per_1m_out = 1000",
    );
    let before = srv.count();
    let t = table(
        &ctx,
        "SELECT d, count(a) AS answered FROM \
         (SELECT d, llm(d || v, 'model=pricey, max_output=5, document=' || d) AS a FROM (VALUES ('d1'),('d2')) x(d), (VALUES (1),(2),(3)) y(v)) \
         GROUP BY d ORDER BY d",
    )
    .await;
    assert!(
        t.contains("| d1 | 2        |") && t.contains("| d2 | 2        |"),
        "{t}"
    );
    assert_eq!(srv.count() - before, 4);
    let notes = table(&ctx, "SELECT error FROM calls WHERE attempt = 0").await;
    assert_eq!(
        notes.matches("cost_cap_reached: document d").count(),
        2,
        "{notes}"
    );
    assert!(notes.contains("of max_cost_usd = 0.025"), "{notes}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_key_or_secret_header_is_stored_anywhere() {
    let srv = server(vec![rule("fail", vec![Action::Status(500, None)])]).await;
    let store = tempfile::tempdir().unwrap();
    std::env::set_var("QUARRY_TEST_GATEWAY_KEY", "gw-secret-9c1f7e");
    let (ctx, _c) = session(
        &srv.base_url(),
        Some(store.path()),
        "api_key = \"sk-test-0a9b8c7d6e\"\nmax_attempts = 2\nheaders = { \"api-key\" = \"${QUARRY_TEST_GATEWAY_KEY}\", \"x-cost-centre\" = \"cc-secret-42\" }",
        "",
    );
    table(
        &ctx,
        "SELECT llm('hello'), llm('fail'), llm_json('x', '{\"type\":\"object\"}')",
    )
    .await;
    table(&ctx, "SELECT * FROM calls").await;
    // The headers reached the server; naming headers replaced Authorization.
    let r = &srv.requests()[0];
    assert!(
        r.headers
            .contains(&("api-key".into(), "gw-secret-9c1f7e".into())),
        "{:?}",
        r.headers
    );
    assert!(
        !r.headers.iter().any(|(k, _)| k == "authorization"),
        "{:?}",
        r.headers
    );
    let mut files = 0;
    for entry in crate::common::walk_files(store.path()) {
        let bytes = std::fs::read(&entry).unwrap();
        files += 1;
        for secret in ["sk-test-0a9b8c7d6e", "gw-secret-9c1f7e", "cc-secret-42"] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} found in {}",
                entry.display()
            );
        }
    }
    assert!(
        files >= 3,
        "expected cache entries and trace files, found {files}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_key_stops_the_query_before_any_document_is_read() {
    if std::env::var("OPENAI_API_KEY").is_ok_and(|k| !k.is_empty()) {
        eprintln!("OPENAI_API_KEY is set; this check needs it unset");
        return;
    }
    let (ctx, _c) = session("https://api.openai.example/v1", None, "", "");
    let t0 = Instant::now();
    let err = sql(&ctx, "SELECT llm(text) FROM documents('examples/corpus')")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("auth_error") && err.contains("OPENAI_API_KEY"),
        "{err}"
    );
    assert!(t0.elapsed() < Duration::from_secs(1));
    // A server without authentication needs none.
    let (ctx, _c) = session(
        "https://models.internal.example/v1",
        None,
        "auth = \"none\"",
        "",
    );
    assert!(ctx.sql("SELECT llm('x')").await.is_ok());
}

#[test]
fn openai_base_url_is_enough_with_no_config_file() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let srv = rt.block_on(server(vec![rule(
        "Say yes",
        vec![Action::Reply("yes".into())],
    )]));
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quarry"))
        .current_dir(dir.path())
        .env("OPENAI_BASE_URL", srv.base_url())
        .env_remove("OPENAI_API_KEY")
        .env_remove("QUARRY_CONFIG")
        .env_remove("QUARRY_STORE")
        .args(["sql", "--format", "csv", "-c", "SELECT llm('Say yes') AS a"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a\nyes\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("model 'local' has no registered price"),
        "{stderr}"
    );
}
