//! Reliability and security (issue 22). Secrets: a key planted in
//! every place a key can be given (the environment's `OPENAI_API_KEY`, a
//! config's `api_key`, `api_key_env`, a header given literally and one
//! read through `${VAR}`), every command path a user takes with a model
//! (extract, screen, ask, llm with a refused and a failing request, the
//! store's tables printed whole, the report, a configuration that cannot
//! be used), and then the store, the report, standard output, standard
//! error and error messages searched for each key.

use std::path::Path;

use crate::common::walk_files;
use quarry::model::test_server::{Action, Rule, TestServer};

const KEYS: [&str; 5] = [
    "sk-env-5e1c2a7f93",
    "sk-cfg-0b8d6e4a21",
    "sk-named-77c3f1d0e9",
    "hdr-literal-4f2a9b",
    "hdr-var-8d31c6e2",
];

/// The places `text` (from `whence`) holds a planted key.
fn leaks(text: &[u8], whence: &str) -> Vec<String> {
    KEYS.iter()
        .filter(|k| text.windows(k.len()).any(|w| w == k.as_bytes()))
        .map(|k| format!("{k} in {whence}"))
        .collect()
}

/// `quarry ARGS` with the planted environment; its output and status.
fn run(dir: &Path, config: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_quarry"))
        .current_dir(dir)
        .args(args)
        .env("QUARRY_CONFIG", config)
        .env("OPENAI_API_KEY", KEYS[0])
        .env("QUARRY_TEST_NAMED_KEY", KEYS[2])
        .env("QUARRY_TEST_HEADER", KEYS[4])
        .env_remove("OPENAI_BASE_URL")
        .env_remove("QUARRY_STORE")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_given_anywhere_is_written_nowhere() {
    // The detector finds a key where there is one.
    assert_eq!(
        leaks(format!("x{}y", KEYS[3]).as_bytes(), "control").len(),
        1
    );
    let srv = TestServer::start(
        vec![
            Rule {
                needle: "refuse me".into(),
                actions: vec![Action::Status(401, None)],
            },
            Rule {
                needle: "fail me".into(),
                actions: vec![Action::Status(500, None)],
            },
            Rule {
                needle: "cut me".into(),
                actions: vec![Action::Truncate],
            },
        ],
        std::time::Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let corpus = crate::common::corpus_with(
        d,
        &[
            (
                "a.txt",
                "Trial A. We ran a randomised controlled trial of spaced practice. We enrolled 120 participants.\n",
            ),
            ("b.txt", "Trial B. A cohort study of retention. 80 adults took part.\n"),
            ("broken.pdf", "%PDF-1.4 not a PDF"),
        ],
    );
    std::fs::write(
        d.join("protocol.toml"),
        "name = \"secrets\"\nquestion = \"Does spaced practice improve retention?\"\n\
         inclusion = [\"a randomised trial\"]\nexclusion = [\"not a trial\"]\n\
         [[fields]]\nname = \"design\"\ndescription = \"The study design\"\n\
         [[fields]]\nname = \"n\"\ndescription = \"Participants\"\ntype = \"integer\"\n",
    )
    .unwrap();
    let url = srv.base_url();
    // Each way of giving a key, one configuration each; the environment's
    // OPENAI_API_KEY is the one in force where the configuration names none.
    let configs = [
        ("env", String::new()),
        ("api_key", format!("api_key = \"{}\"\n", KEYS[1])),
        (
            "api_key_env",
            "api_key_env = \"QUARRY_TEST_NAMED_KEY\"\n".to_string(),
        ),
        (
            "headers",
            format!(
                "headers = {{ \"api-key\" = \"${{QUARRY_TEST_HEADER}}\", \"x-org\" = \"{}\" }}\n",
                KEYS[3]
            ),
        ),
    ];
    let mut found = Vec::new();
    let mut outputs = 0;
    for (name, auth) in &configs {
        let config = d.join(format!("{name}.toml"));
        std::fs::write(
            &config,
            format!(
                "[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{url}\"\n{auth}\
                 max_attempts = 2\nbackoff_initial_ms = 5\n"
            ),
        )
        .unwrap();
        let store = d.join(format!("store-{name}"));
        let s = store.display().to_string();
        let c = corpus.display().to_string();
        let mut outs = vec![
            run(
                d,
                &config,
                &[
                    "sql",
                    "--store",
                    &s,
                    "-c",
                    &format!("SELECT count(*) FROM extract('{c}', 'protocol.toml')"),
                    "-c",
                    &format!("SELECT count(*) FROM screen('{c}', 'protocol.toml')"),
                    "-c",
                    &format!(
                        "SELECT count(*) FROM ask('{c}', 'How many participants?', 'reader=stuff')"
                    ),
                    "-c",
                    "SELECT llm('refuse me') AS a, llm('fail me') AS b, llm('cut me') AS c",
                ],
            ),
            run(
                d,
                &config,
                &[
                    "sql",
                    "--store",
                    &s,
                    "--format",
                    "json",
                    "-c",
                    "SELECT * FROM calls",
                    "-c",
                    "SELECT * FROM reply_problems()",
                    "-c",
                    "SELECT * FROM models()",
                    "-c",
                    "SELECT * FROM cache_stats()",
                ],
            ),
        ];
        let page = d.join(format!("report-{name}.html"));
        outs.push(run(
            d,
            &config,
            &["report", "--store", &s, &page.display().to_string()],
        ));
        for (k, o) in outs.iter().enumerate() {
            assert!(
                o.status.success(),
                "{name} command {k}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        // The calls were made, with the key: the server saw them.
        let calls = String::from_utf8_lossy(&outs[1].stdout).to_string();
        assert!(
            calls.contains("\"stage\": \"extract\"") && calls.contains("\"stage\": \"screen\""),
            "{name}: {}",
            &calls[..calls.len().min(2000)]
        );
        for o in &outs {
            found.extend(leaks(&o.stdout, &format!("{name}: standard output")));
            found.extend(leaks(&o.stderr, &format!("{name}: standard error")));
            outputs += 1;
        }
        for f in walk_files(&store).into_iter().chain([page]) {
            found.extend(leaks(&std::fs::read(&f).unwrap(), &f.display().to_string()));
            outputs += 1;
        }
    }
    // The server saw every way of giving a key, so the search above looked
    // for keys that were in use.
    let seen: Vec<String> = srv
        .requests()
        .iter()
        .flat_map(|r| r.headers.iter().map(|(k, v)| format!("{k}: {v}")))
        .collect();
    for (k, want) in [
        (KEYS[0], "authorization: Bearer "),
        (KEYS[1], "authorization: Bearer "),
        (KEYS[2], "authorization: Bearer "),
        (KEYS[3], "x-org: "),
        (KEYS[4], "api-key: "),
    ] {
        assert!(
            seen.iter().any(|h| h == &format!("{want}{k}")),
            "{k} was never sent as {want}"
        );
    }
    // A configuration that cannot be used: its error names the variable,
    // not a value.
    let config = d.join("unset.toml");
    std::fs::write(
        &config,
        format!(
            "[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{url}\"\napi_key = \"{}\"\n\
             headers = {{ \"api-key\" = \"${{QUARRY_TEST_UNSET_9f}}\" }}\n",
            KEYS[1]
        ),
    )
    .unwrap();
    let o = run(
        d,
        &config,
        &["sql", "--no-store", "-c", "SELECT llm('hello')"],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("QUARRY_TEST_UNSET_9f"), "{err}");
    found.extend(leaks(&o.stdout, "unset: standard output"));
    found.extend(leaks(&o.stderr, "unset: standard error"));
    assert!(outputs > 40, "searched {outputs} outputs and files");
    eprintln!(
        "secrets: {} keys, {} configurations, {outputs} outputs and files searched",
        KEYS.len(),
        configs.len()
    );
    assert!(found.is_empty(), "{found:#?}");
}

/// A protocol's text cannot change the SQL it is rendered into: field
/// descriptions, criteria and the question holding quotes, semicolons,
/// SQL, `${VAR}`, backslashes and control characters reach the model
/// verbatim, and the run is the ordinary one. Text holding the templates'
/// own marks (a `{{slot}}`, a line starting `-- @`) is refused, naming
/// where (it once filled a later slot: `{{llm_options}}` in a criterion
/// vanished from the screening prompt), and so is a field name that is
/// not a column name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protocols_text_reaches_the_model_verbatim_and_changes_no_sql() {
    let srv = TestServer::start(vec![], std::time::Duration::ZERO)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let corpus = crate::common::corpus_with(
        d,
        &[(
            "a.txt",
            "Trial A. We ran a randomised controlled trial. We enrolled 120 participants.\n",
        )],
    );
    let hostile = "It's the design'); DROP TABLE evidence; -- { {prompt} } ${HOME} \\u0007 \"quoted\" \\\\ end";
    let toml_text = |s: &str| format!("\"{}\"", s.replace('"', "\\\""));
    let proto = d.join("protocol.toml");
    std::fs::write(
        &proto,
        format!(
            "name = {n}\nquestion = {q}\ninclusion = [{q}]\nexclusion = [{q}]\n\
             [[fields]]\nname = \"design\"\ndescription = {q}\n\
             [[fields]]\nname = \"n\"\ndescription = {q}\ntype = \"integer\"\n",
            n = toml_text("x'; --"),
            q = toml_text(hostile)
        ),
    )
    .unwrap();
    let ctx = crate::common::scripted_session(&srv.base_url(), d, "");
    let (c, p) = (corpus.display(), proto.display());
    let t = crate::common::table(
        &ctx,
        &format!("SELECT status FROM extract('{c}', '{p}') UNION ALL SELECT status FROM screen('{c}', '{p}')"),
    )
    .await;
    assert_eq!(t.matches("| ok     |").count(), 2, "{t}");
    // The text as the TOML gives it (the \u0007 escape a BEL character).
    let want = hostile.replace("\\u0007", "\u{7}").replace("\\\\", "\\");
    let prompts: Vec<String> = srv
        .requests()
        .iter()
        .map(|r| r.body["messages"].to_string())
        .collect();
    assert_eq!(
        prompts.len(),
        2,
        "one extraction request, one screening request"
    );
    for m in &prompts {
        let text: String = serde_json::from_str::<serde_json::Value>(m)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["content"].as_str())
            .collect();
        assert!(text.contains(&want), "{want:?} not verbatim in {text:?}");
    }
    let n = crate::common::table(&ctx, "SELECT count(*) AS n FROM calls WHERE ok").await;
    assert!(n.contains("| 2 |"), "{n}");
    // The templates' own marks.
    for (text, want) in [
        (
            "a {{llm_options}} slot",
            "exclusion[0]: the text holds '{{' or '}}'",
        ),
        (
            "first line\\n-- @stage dropped",
            "exclusion[0]: a line of the text starts with '-- @'",
        ),
    ] {
        std::fs::write(
            &proto,
            format!("name = \"x\"\nexclusion = [\"{text}\"]\n[[fields]]\nname = \"n\"\ndescription = \"d\"\n"),
        )
        .unwrap();
        let err = crate::common::sql(&ctx, &format!("SELECT * FROM screen('{c}', '{p}')"))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{err}");
    }
    // A field name that is not a column name.
    std::fs::write(
        &proto,
        "name = \"x\"\n[[fields]]\nname = \"n\\\"; DROP TABLE t; --\"\ndescription = \"d\"\n",
    )
    .unwrap();
    let err = crate::common::sql(&ctx, &format!("SELECT * FROM extract('{c}', '{p}')"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("must be lower-case letters, digits and _"),
        "{err}"
    );
}

/// `name` from the environment as a number, else `default`.
fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// A `corpus` folder under `dir` of `n` one-line trial reports.
fn trials(dir: &Path, n: usize) -> std::path::PathBuf {
    let corpus = dir.join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    for i in 0..n {
        std::fs::write(
            corpus.join(format!("doc{i:04}.txt")),
            format!(
                "Trial {i}. We ran a randomised controlled trial. We enrolled {} participants.\n",
                20 + i
            ),
        )
        .unwrap();
    }
    corpus
}

/// The fault soak, at CI's size: an extraction of 200 documents against a
/// server that gives about 30% of its requests a fault (429 with and
/// without Retry-After, 500, 503, a dropped connection, a body cut
/// half-way, a reply past the client's timeout). The run completes with
/// every document a row; every fault is a failed `calls` row and every
/// whole reply an ok one, so nothing is lost or counted twice; only whole
/// replies cost anything; and after `--retry-failed` against the server
/// made healthy, the tables equal a fault-free run's. `QUARRY_SOAK_DOCS`
/// sets the size (the README's figure is from 1,000).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_thirty_percent_faults_nothing_is_lost_or_paid_twice() {
    let docs = env_or("QUARRY_SOAK_DOCS", 200);
    let srv = TestServer::start_with(vec![], std::time::Duration::ZERO, false)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let corpus = trials(d, docs);
    let proto = d.join("protocol.toml");
    std::fs::write(
        &proto,
        "name = \"soak\"\n[[fields]]\nname = \"design\"\ndescription = \"The study design\"\n\
         [[fields]]\nname = \"n\"\ndescription = \"Participants\"\ntype = \"integer\"\n",
    )
    .unwrap();
    let session_with = |store: &str, retry_failed: bool, limits: &str| {
        let cfg = d.join("quarry.toml");
        std::fs::write(
            &cfg,
            format!(
                "[models.soak]\ncontext_window = 8192\nmax_output = 512\nusd_per_1m_in = 1.0\nusd_per_1m_out = 2.0\n\
                 [model]\nname = \"soak\"\n[endpoints.default]\nbase_url = \"{}\"\nmax_in_flight = 32\n\
                 max_attempts = 2\nbackoff_initial_ms = 5\ntimeout_seconds = 1\n[limits]\n{limits}",
                srv.base_url()
            ),
        )
        .unwrap();
        quarry::session(&quarry::Settings {
            store: Some(d.join(store).display().to_string()),
            config: Some(cfg),
            retry_failed,
            ..Default::default()
        })
        .unwrap()
    };
    let session = |store: &str, retry_failed: bool| session_with(store, retry_failed, "");
    let q = format!(
        "SELECT count(*) FROM extract('{}', '{}')",
        corpus.display(),
        proto.display()
    );
    // The fault-free run.
    let clean = session("clean", false);
    assert_eq!(crate::common::number(&clean, &q).await, docs as i64);

    srv.inject_faults(30, 7, std::time::Duration::from_millis(2500));
    let (f0, ok0) = srv.faults();
    let faulty = session("faulty", false);
    assert_eq!(
        crate::common::number(&faulty, &q).await,
        docs as i64,
        "every document is a row"
    );
    let (f1, ok1) = srv.faults();
    let (faults, whole) = ((f1 - f0) as i64, (ok1 - ok0) as i64);
    assert!(faults > docs as i64 / 5, "{faults} faults given");
    let failed_rows = crate::common::number(
        &faulty,
        "SELECT count(*) FROM calls WHERE attempt >= 1 AND NOT ok",
    )
    .await;
    let ok_rows = crate::common::number(
        &faulty,
        "SELECT count(*) FROM calls WHERE attempt >= 1 AND ok",
    )
    .await;
    assert_eq!(failed_rows, faults, "every fault is a failed calls row");
    assert_eq!(ok_rows, whole, "every whole reply is one ok calls row");
    assert_eq!(
        crate::common::number(
            &faulty,
            "SELECT count(*) FROM calls WHERE NOT ok AND coalesce(usd, 0) > 0"
        )
        .await,
        0,
        "a failed attempt costs nothing"
    );
    let left = crate::common::number(
        &faulty,
        "SELECT count(*) FROM extraction WHERE status <> 'ok'",
    )
    .await;
    eprintln!("soak: {docs} documents, {faults} faults, {whole} whole replies, {left} documents left failed");

    // Run ceilings under the same faults. A plan one call over the call
    // ceiling, or past a dollar ceiling of a millionth, is refused before
    // anything is sent; the run's own worst case taken from that refusal,
    // the ceilings set exactly at the plan are never passed, however many
    // attempts the faults cost (a request's retries are the one request).
    let mut refusals = Vec::new();
    for limits in [
        format!("max_total_calls = {}\n", docs - 1),
        "max_total_usd = 0.000001\n".to_string(),
    ] {
        let s = session_with("capped", false, &limits);
        let before = srv.count();
        let e = match crate::common::sql(&s, &q).await {
            Ok(_) => panic!("{limits}: a plan past the ceiling ran"),
            Err(e) => e.to_string(),
        };
        assert_eq!(srv.count(), before, "{limits}: refused, yet sent: {e}");
        refusals.push(e);
    }
    assert!(refusals[0].contains("call_cap"), "{}", refusals[0]);
    let e = &refusals[1];
    let worst: f64 = regex::Regex::new(r"output cap\) is \$([0-9.]+)")
        .unwrap()
        .captures(e)
        .unwrap_or_else(|| panic!("the refusal names the plan's worst case: {e}"))[1]
        .parse()
        .unwrap();
    // The refusal rounds to a hundredth of a cent: the ceiling is that
    // much above the plan's worst case (far less than one request's).
    let worst = worst + 0.0001;
    let capped = session_with(
        "capped",
        false,
        &format!("max_total_calls = {docs}\nmax_total_usd = {worst}\n"),
    );
    let (_, okc0) = srv.faults();
    let sent0 = srv.count();
    assert_eq!(crate::common::number(&capped, &q).await, docs as i64);
    let requests = crate::common::number(
        &capped,
        "SELECT count(DISTINCT call_id) FROM calls WHERE attempt >= 1",
    )
    .await;
    let nano = crate::common::number(
        &capped,
        "SELECT CAST(coalesce(sum(usd), 0) * 1e9 AS BIGINT) FROM calls",
    )
    .await;
    let spent = nano as f64 / 1e9;
    let capped_out = crate::common::number(
        &capped,
        "SELECT count(*) FROM calls WHERE error LIKE '%max_total_%'",
    )
    .await;
    eprintln!(
        "soak ceilings: {requests} requests of max_total_calls = {docs}, {} attempts, ${spent:.6} of max_total_usd = {worst}, {capped_out} refused by a ceiling",
        srv.count() - sent0
    );
    assert!(
        requests <= docs as i64,
        "{requests} requests past max_total_calls = {docs}"
    );
    assert!(
        spent <= worst,
        "${spent} spent past max_total_usd = {worst}"
    );
    assert!(srv.faults().1 > okc0, "the capped run was answered");
    assert_eq!(capped_out, 0, "retries took no other document's share");
    drop(capped);
    let (_, ok1) = srv.faults();

    // Healthy again: the failures sent again, and the tables are the
    // fault-free run's.
    srv.inject_faults(0, 0, std::time::Duration::ZERO);
    drop(faulty);
    let again = session("faulty", true);
    assert_eq!(crate::common::number(&again, &q).await, docs as i64);
    let (_, ok2) = srv.faults();
    assert!(
        left > 0,
        "some documents were left failed, so --retry-failed had work"
    );
    assert_eq!(
        (ok2 - ok1) as i64,
        left,
        "only the failed documents' requests (one each) were sent again"
    );
    for t in [
        "SELECT source, status, design, n FROM extraction ORDER BY source",
        "SELECT document_id, field, value, quote, verified FROM evidence ORDER BY document_id, field",
    ] {
        let a = crate::common::table(&clean, t).await;
        let b = crate::common::table(&again, t).await;
        assert!(a == b, "{t}: the faulty run, once retried, differs from the clean one");
    }
}

/// Where a kill loop keeps its corpus and its stores: a local folder, or
/// a bucket of the S3 test server (the corpus uploaded there too).
enum Place {
    Local,
    S3(&'static str),
}

/// The kill loop, at CI's size: a screen-then-extract run over 200
/// documents killed with SIGKILL 5 times at seeded moments (after a drawn
/// number of answers) and started again each time. After the last start
/// the tables are an uninterrupted run's; a request answered before a kill
/// is sent again only when its answer was still in flight (at most the
/// requests in flight, 4, per kill); and every Parquet file the store
/// holds is read by DuckDB. `QUARRY_KILLS` sets the number of kills.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_five_times_the_run_ends_with_an_uninterrupted_runs_tables() {
    kill_loop(env_or("QUARRY_KILLS", 5), Place::Local).await;
}

/// The kill loop with the corpus and the store on the S3 test server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_five_times_on_s3_the_run_ends_with_an_uninterrupted_runs_tables() {
    kill_loop(env_or("QUARRY_KILLS", 5), Place::S3("killloop")).await;
}

async fn kill_loop(kills: usize, place: Place) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let docs = 200;
    let local = trials(d, docs);
    let (corpus, store_a, store_b) = match &place {
        Place::Local => (
            local.display().to_string(),
            d.join("a").display().to_string(),
            d.join("b").display().to_string(),
        ),
        Place::S3(bucket) => {
            let s3 = crate::s3::bucket(bucket).await;
            crate::s3::upload(&s3, &local, "trials").await;
            (
                format!("s3://{bucket}/trials/"),
                format!("s3://{bucket}/a/"),
                format!("s3://{bucket}/b/"),
            )
        }
    };
    let proto = d.join("protocol.toml");
    std::fs::write(
        &proto,
        "name = \"kill\"\ninclusion = [\"a randomised trial\"]\n\
         [[fields]]\nname = \"design\"\ndescription = \"The study design\"\n\
         [[fields]]\nname = \"n\"\ndescription = \"Participants\"\ntype = \"integer\"\n",
    )
    .unwrap();
    let (c, p) = (&corpus, proto.display());
    let f = "regexp_replace(source, '^.*/', '') AS f";
    let queries = [
        format!("SELECT {f}, decision, status FROM screen('{c}', '{p}') ORDER BY f"),
        format!("SELECT {f}, design, n, status FROM extract('{c}', '{p}') ORDER BY f"),
        format!("SELECT {f}, decision, status, protocol_hash FROM screening ORDER BY f"),
        format!("SELECT {f}, design, n, n_filled, status, protocol_hash FROM extraction ORDER BY f"),
        "SELECT document_id, field, value, quote, verified FROM evidence ORDER BY document_id, field".into(),
    ];
    let port = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let norm = |out: std::process::Output| {
        port.replace_all(&crate::common::stdout_of(out), "127.0.0.1:PORT")
            .to_string()
    };
    let command = |url: &str, store: &str, cfg: &str| {
        crate::common::sql_command_at(url, store, &d.join(cfg), &queries)
    };
    let a = TestServer::start(vec![], std::time::Duration::from_millis(5))
        .await
        .unwrap();
    let want = norm(command(&a.base_url(), &store_a, "a.toml").output().unwrap());
    let total = a.count();
    assert_eq!(
        total,
        2 * docs,
        "one screening and one extraction request a document"
    );
    assert!(want.contains("doc0199.txt"), "{want}");

    let b = TestServer::start(vec![], std::time::Duration::from_millis(5))
        .await
        .unwrap();
    // The moments: a drawn number of answers, in order (xorshift, seed 42).
    let mut x: u64 = 42;
    let mut at: Vec<usize> = (0..kills)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            20 + (x % (total as u64 - 40)) as usize
        })
        .collect();
    at.sort_unstable();
    let mut killed = 0;
    for &n in &at {
        let mut child = command(&b.base_url(), &store_b, "b.toml").spawn().unwrap();
        let t0 = std::time::Instant::now();
        while b.answered().len() < n && child.try_wait().unwrap().is_none() {
            assert!(t0.elapsed() < std::time::Duration::from_secs(300));
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed += 1;
        }
        child.wait().unwrap();
    }
    assert!(
        killed >= kills.saturating_sub(1),
        "killed {killed} of {kills}"
    );
    let out = command(&b.base_url(), &store_b, "b.toml").output().unwrap();
    assert!(
        norm(out) == want,
        "after {killed} kills the tables differ from an uninterrupted run's"
    );
    let answers = crate::common::answered(&b);
    let mut seen = std::collections::HashSet::new();
    let again = answers.iter().filter(|a| !seen.insert(a.as_str())).count();
    eprintln!("kill loop ({store_b}): {docs} documents, {killed} kills, {} answers ({total} uninterrupted), {again} answered twice", answers.len());
    assert!(
        again <= killed * 4,
        "{again} requests answered twice in {killed} kills"
    );

    // Every Parquet file of the store, read by DuckDB (an S3 store's
    // files fetched first).
    let files: Vec<std::path::PathBuf> = match &place {
        Place::Local => walk_files(Path::new(&store_b)),
        Place::S3(bucket) => {
            let s3 = crate::s3::bucket(bucket).await;
            crate::s3::download(&s3, "b", &d.join("fetched")).await
        }
    }
    .into_iter()
    .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
    .collect();
    assert!(files.len() > 10, "{} parquet files", files.len());
    let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let words = crate::common::python_words(
        "import sys, duckdb\n\
         c = duckdb.connect()\n\
         ok = sum(1 for p in sys.argv[1:] if c.execute('SELECT count(*) FROM read_parquet(?)', [p]).fetchone() is not None)\n\
         print(ok)",
        &refs,
    );
    assert_eq!(words, [files.len().to_string()], "files DuckDB read");
}

/// Storage faults: the corpus and the store on the S3 test server, reached
/// through a proxy that gives about 15% of storage requests a fault (500,
/// 503, the connection closed before the request is passed on, the request
/// passed on and its answer lost, the answer cut half-way). The run ends,
/// each affected request retried or its document failed with a message;
/// no object is left half-written (every Parquet file is read by DuckDB,
/// every log entry is JSON); and the next run, on the healthy server, ends
/// with an undisturbed run's tables. `QUARRY_STORAGE_DOCS` sets the size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_faults_are_retried_or_failed_rows_and_leave_nothing_half_written() {
    let docs = env_or("QUARRY_STORAGE_DOCS", 60);
    let bucket = "storagefaults";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let local = trials(d, docs);
    let s3 = crate::s3::bucket(bucket).await;
    crate::s3::upload(&s3, &local, "trials").await;
    let proto = d.join("protocol.toml");
    std::fs::write(
        &proto,
        "name = \"storage\"\ninclusion = [\"a randomised trial\"]\n\
         [[fields]]\nname = \"n\"\ndescription = \"Participants\"\ntype = \"integer\"\n",
    )
    .unwrap();
    let (c, p) = (format!("s3://{bucket}/trials/"), proto.display());
    let f = "regexp_replace(source, '^.*/', '') AS f";
    let queries = [
        format!("SELECT {f}, decision, status FROM screen('{c}', '{p}') ORDER BY f"),
        format!("SELECT {f}, n, status FROM extract('{c}', '{p}') ORDER BY f"),
        format!("SELECT {f}, decision, status FROM screening ORDER BY f"),
        format!("SELECT {f}, n, n_filled, status FROM extraction ORDER BY f"),
        "SELECT document_id, field, value, quote, verified FROM evidence ORDER BY document_id, field".into(),
    ];
    let port = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let norm = |out: &std::process::Output| {
        port.replace_all(&String::from_utf8_lossy(&out.stdout), "127.0.0.1:PORT")
            .to_string()
    };
    let srv = TestServer::start(vec![], std::time::Duration::ZERO)
        .await
        .unwrap();
    let command = |store: &str, cfg: &str| {
        crate::common::sql_command_at(&srv.base_url(), store, &d.join(cfg), &queries)
    };
    let clean = command(&format!("s3://{bucket}/clean/"), "clean.toml")
        .output()
        .unwrap();
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    let want = norm(&clean);
    assert!(want.contains(&format!("doc{:04}.txt", docs - 1)), "{want}");

    let proxy = crate::s3::StorageProxy::start(15, 11).await;
    let store = format!("s3://{bucket}/faulty/");
    let faulty = command(&store, "faulty.toml")
        .env("AWS_ENDPOINT_URL", proxy.endpoint())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&faulty.stderr).to_string();
    let got = norm(&faulty);
    let failed_rows = got.lines().filter(|l| l.contains("| failed")).count();
    use std::sync::atomic::Ordering::SeqCst;
    let k = &proxy.counts;
    eprintln!(
        "storage faults: {} requests, {} faults ({} 500/503, {} dropped, {} answers lost, {} cut); run {}; {failed_rows} failed rows; stderr: {}",
        k.requests.load(SeqCst),
        proxy.faults(),
        k.errors.load(SeqCst),
        k.dropped.load(SeqCst),
        k.lost.load(SeqCst),
        k.cut.load(SeqCst),
        faulty.status,
        err.chars().take(2000).collect::<String>()
    );
    assert!(proxy.faults() > 10, "{} faults given", proxy.faults());
    // object_store retries a 5xx, a refused connection and a cut body of
    // a whole object; a cut answer to a listing, or to a request whose
    // status was not 200, quarry's S3 store tries again (`store::steady`).
    // What still fails (a read cut at every try, a write whose answer was
    // cut) quarry says the cost of: rows a run could not keep (read again
    // by the next run), or the query that could not read the store.
    if faulty.status.success() {
        assert!(
            got == want || failed_rows > 0 || err.contains("could not be kept in the store"),
            "a run that ended well has an undisturbed run's tables, says which documents failed, \
             or warns which rows it could not keep:\n{err}"
        );
    } else {
        let stop = err
            .lines()
            .find(|l| l.starts_with("error:"))
            .unwrap_or_else(|| panic!("a run that stopped says why: {err}"));
        assert!(
            stop.contains(&format!("store '{store}'"))
                || stop.contains(&format!("source 's3://{bucket}/trials/'")),
            "a run that stopped names the store or the corpus that failed it: {stop}"
        );
    }
    drop(proxy);

    // Nothing half-written: every Parquet file read by DuckDB, every log
    // entry JSON.
    let files = crate::s3::download(&s3, "faulty", &d.join("fetched")).await;
    let parquet: Vec<&Path> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .map(|p| p.as_path())
        .collect();
    assert!(!parquet.is_empty(), "the store has Parquet files");
    let words = crate::common::python_words(
        "import sys, duckdb\n\
         c = duckdb.connect()\n\
         ok = sum(1 for p in sys.argv[1:] if c.execute('SELECT count(*) FROM read_parquet(?)', [p]).fetchone() is not None)\n\
         print(ok)",
        &parquet,
    );
    assert_eq!(words, [parquet.len().to_string()], "files DuckDB read");
    for log in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        for line in std::fs::read_to_string(log).unwrap().lines() {
            serde_json::from_str::<serde_json::Value>(line)
                .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {line}", log.display()));
        }
    }

    // The next run, on the healthy server, ends with an undisturbed run's
    // tables (documents the faults failed read again).
    let next = command(&store, "faulty.toml")
        .arg("--retry-failed")
        .output()
        .unwrap();
    assert!(
        next.status.success(),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
    assert!(
        norm(&next) == want,
        "after storage faults the next run's tables differ from an undisturbed run's:\n{}",
        norm(&next)
    );
    // No call written twice: a commit whose answer was lost is not made
    // again as a second copy of its rows.
    let dup = "SELECT count(*) AS twice FROM (SELECT call_id, attempt, started_at FROM calls GROUP BY 1, 2, 3 HAVING count(*) > 1)".to_string();
    let out =
        crate::common::sql_command_at(&srv.base_url(), &store, &d.join("faulty.toml"), &[dup])
            .output()
            .unwrap();
    let twice = String::from_utf8_lossy(&out.stdout).to_string();
    eprintln!("calls written twice: {twice}");
    assert!(
        twice.contains("| 0 "),
        "calls rows written twice: {twice}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A commit of the calls table that lands although its answer is lost (the
/// log entry's put reached the store; the client heard nothing): the rows
/// are not written a second time when the commit is tried again, at the
/// next flush or by a retry of the put that finds the entry there. The
/// proxy loses the answers to the first two puts of the calls table's log
/// entries; every call is then one row, as in a run without the fault.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calls_commit_whose_answer_was_lost_is_not_written_again() {
    let bucket = "lostanswers";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let local = trials(d, 12);
    let s3 = crate::s3::bucket(bucket).await;
    crate::s3::upload(&s3, &local, "trials").await;
    let proto = d.join("protocol.toml");
    std::fs::write(
        &proto,
        "name = \"lost\"\ninclusion = [\"a randomised trial\"]\n\
         [[fields]]\nname = \"n\"\ndescription = \"Participants\"\ntype = \"integer\"\n",
    )
    .unwrap();
    let (c, p) = (format!("s3://{bucket}/trials/"), proto.display());
    let srv = TestServer::start(vec![], std::time::Duration::ZERO)
        .await
        .unwrap();
    let counts = "SELECT (SELECT count(*) FROM calls) AS rows, count(*) AS distinct_rows FROM (SELECT DISTINCT call_id, attempt, started_at FROM calls)".to_string();
    let queries = [
        format!("SELECT count(*) FROM screen('{c}', '{p}')"),
        format!("SELECT count(*) FROM extract('{c}', '{p}')"),
    ];
    // The calls table's (rows, distinct rows) after the run into `store`,
    // reaching the server at `endpoint` (the proxy) when given.
    let run = |store: String, endpoint: Option<String>| {
        let cfg = d.join("run.toml");
        let mut cmd = crate::common::sql_command_at(&srv.base_url(), &store, &cfg, &queries);
        if let Some(e) = endpoint {
            cmd.env("AWS_ENDPOINT_URL", e);
        }
        let run = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&run.stderr).to_string();
        assert!(run.status.success(), "{err}");
        let out = crate::common::sql_command_at(
            &srv.base_url(),
            &store,
            &cfg,
            std::slice::from_ref(&counts),
        )
        .output()
        .unwrap();
        let table = String::from_utf8_lossy(&out.stdout).to_string();
        eprintln!("calls in {store}: {table}stderr: {err}");
        let row = table
            .lines()
            .find(|l| l.starts_with("| ") && l.chars().any(|c| c.is_ascii_digit()))
            .unwrap_or_else(|| {
                panic!("no counts: {table}{}", String::from_utf8_lossy(&out.stderr))
            });
        let n: Vec<String> = row
            .split('|')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect();
        n
    };
    let clean = run(format!("s3://{bucket}/clean/"), None);
    assert_eq!(clean[0], clean[1], "a clean run's calls rows are distinct");
    assert!(clean[0].parse::<usize>().unwrap() >= 24, "{clean:?}");
    let proxy = crate::s3::StorageProxy::losing_answers("/tables/calls/_delta_log/", 2).await;
    let faulty = run(format!("s3://{bucket}/faulty/"), Some(proxy.endpoint()));
    use std::sync::atomic::Ordering::SeqCst;
    assert_eq!(proxy.counts.lost.load(SeqCst), 2, "answers lost");
    assert_eq!(
        faulty, clean,
        "calls rows and distinct rows after two lost answers, against a clean run's"
    );
}

/// A one-page PDF whose content stream is `text` drawn, then `mib` MiB of
/// spaces, deflated: a few KiB per GiB (the same deflate block repeated
/// after full flushes, so building it costs one MiB of compression).
fn bomb_pdf(text: &str, mib: usize) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    let mut z = Compress::new(Compression::best(), true);
    let mut deflate = |input: &[u8], flush| {
        let mut out = Vec::with_capacity(input.len() / 100 + 1024);
        z.compress_vec(input, &mut out, flush).unwrap();
        out
    };
    let mut stream = deflate(
        format!("BT /F1 12 Tf 72 700 Td ({text}) Tj ET\n").as_bytes(),
        FlushCompress::Full,
    );
    let block = deflate(&vec![b' '; 1 << 20], FlushCompress::Full);
    for _ in 0..mib {
        stream.extend_from_slice(&block);
    }
    stream.extend(deflate(b"", FlushCompress::Finish));
    let mut objs: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /Font << /F1 3 0 R >> >> >>".to_vec(),
    ];
    let mut s = format!(
        "<< /Length {} /Filter /FlateDecode >>\nstream\n",
        stream.len()
    )
    .into_bytes();
    s.extend_from_slice(&stream);
    s.extend_from_slice(b"\nendstream");
    objs.push(s);
    let mut pdf = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objs.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend(format!("{} 0 obj\n", i + 1).bytes());
        pdf.extend_from_slice(o);
        pdf.extend_from_slice(b"\nendobj\n");
    }
    let xref = pdf.len();
    pdf.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objs.len() + 1).bytes());
    for o in offsets {
        pdf.extend(format!("{o:010} 00000 n \n").bytes());
    }
    pdf.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objs.len() + 1
        )
        .bytes(),
    );
    pdf
}

/// The highest resident memory of a running process so far, in KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A PDF whose page inflates to 2 GiB (from 2 MiB on disk) is refused with
/// a page problem that says why, within the memory cap, and the corpus goes
/// on; the same PDF inflating to less than the limit is read whole.
#[test]
fn a_decompression_bomb_costs_a_page_and_stays_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(corpus.join("bomb.pdf"), bomb_pdf("Hello bomb", 2048)).unwrap();
    std::fs::write(corpus.join("fine.pdf"), bomb_pdf("Hello padded", 8)).unwrap();
    std::fs::write(corpus.join("notes.txt"), "An ordinary file beside them.\n").unwrap();
    let q = format!(
        "SELECT file_name, status, error, strpos(text, 'Hello') > 0 AS hello FROM documents('{}') ORDER BY file_name",
        corpus.display()
    );
    let mut child =
        crate::common::sql_command("http://127.0.0.1:9", &dir.path().join("store"), &[q])
            .spawn()
            .unwrap();
    let pid = child.id();
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        peak = peak.max(peak_kib(pid).unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no row for {name}: {stdout}"))
            .to_string()
    };
    assert!(
        row("bomb.pdf").contains("inflates past 128 MiB"),
        "{stdout}"
    );
    assert!(row("fine.pdf").contains("| true"), "{stdout}");
    assert!(row("notes.txt").contains("| ok"), "{stdout}");
    assert!(
        peak < 1 << 20,
        "the run's memory peaked at {peak} KiB, over 1 GiB"
    );
    eprintln!("bomb: peak {} MiB", peak >> 10);
}

/// Links in a local corpus folder, as the README documents them: a link to
/// a file (inside or out of the folder) is read as that file, a linked
/// folder is read as a folder (with `recursive=true`), a link to nothing is
/// one failed row that says so (the object store's listing passes over
/// it), and a source path with `..` is the folder it resolves to.
#[cfg(unix)]
#[test]
fn links_in_a_corpus_folder_are_followed_and_a_broken_one_is_a_failed_row() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let (corpus, outside) = (dir.path().join("corpus"), dir.path().join("outside"));
    std::fs::create_dir_all(corpus.join("sub")).unwrap();
    std::fs::create_dir_all(outside.join("folder")).unwrap();
    std::fs::write(corpus.join("a.txt"), "A file in the folder.\n").unwrap();
    std::fs::write(outside.join("o.txt"), "A file out of the folder.\n").unwrap();
    std::fs::write(outside.join("folder/f.txt"), "A file in a linked folder.\n").unwrap();
    symlink(outside.join("o.txt"), corpus.join("out.txt")).unwrap();
    symlink(outside.join("folder"), corpus.join("linked")).unwrap();
    symlink(dir.path().join("gone.txt"), corpus.join("gone.txt")).unwrap();
    symlink(dir.path().join("gone.pdf"), corpus.join("sub/deep.pdf")).unwrap();
    let src = corpus.join("sub/..");
    let q = format!(
        "SELECT file_name, status, coalesce(strpos(error, 'does not exist: fix the link or remove it') > 0, false) AS says, \
         coalesce(strpos(text, 'file') > 0, false) AS has_text FROM documents('{}', 'recursive=true') ORDER BY file_name",
        src.display()
    );
    let out = crate::common::sql_command("http://127.0.0.1:9", &dir.path().join("store"), &[q])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.starts_with("| ") && !l.contains("file_name"))
        .map(|l| {
            l.split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            vec!["a.txt", "ok", "false", "true"],
            vec!["deep.pdf", "failed", "true", "false"],
            vec!["f.txt", "ok", "false", "true"],
            vec!["gone.txt", "failed", "true", "false"],
            vec!["out.txt", "ok", "false", "true"],
        ],
        "{stdout}"
    );
}

/// The fuzzers' findings kept under `fuzz/regressions/<target>/` (each one
/// a seed of every later fuzz run, where libFuzzer also holds it to 2 s),
/// put through their target's checks by the ordinary tests: the export
/// parsers give records, and failed rows with a note, for each.
#[test]
fn the_fuzzers_findings_stay_fixed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/exports");
    let exts = ["ris", "txt", "nbib", "bib", "csv", "tsv"];
    let mut n = 0;
    for f in walk_files(&dir) {
        let data = std::fs::read(&f).unwrap();
        let Some((&first, bytes)) = data.split_first() else {
            continue;
        };
        let ext = exts[first as usize % exts.len()];
        let name = format!("export.{ext}");
        let records = quarry::records::read_export(&name, &name, ext, bytes);
        assert!(!records.is_empty(), "{}: no row at all", f.display());
        for r in records {
            if r.status == Some(quarry::records::Status::Failed) {
                assert!(
                    r.note.as_deref().is_some_and(|e| !e.trim().is_empty()),
                    "{}: a failed record without a note",
                    f.display()
                );
            }
        }
        n += 1;
    }
    assert!(n >= 1, "the findings are in {}", dir.display());
}
