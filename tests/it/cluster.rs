//! The same SQL on a Ballista cluster (feature `cluster`): a scheduler and
//! two executors in this process, the corpus and the shared store on the S3
//! test server; every result equals a single process's, row for row.

use datafusion::prelude::SessionContext;
use object_store::path::Path as ObjPath;
use object_store::{ObjectStoreExt, PutPayload};

use crate::common::{root, table};
use crate::s3::{bucket, upload};

fn session(store: &str) -> SessionContext {
    quarry::session(&quarry::Settings {
        store: Some(store.to_string()),
        ..Default::default()
    })
    .expect("session")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cluster_gives_what_one_process_gives() {
    let s3 = bucket("cluster").await;
    // A corpus of every kind, with a byte-identical copy of a PDF (in
    // another folder), a corrupt PDF and an empty file.
    upload(&s3, &root().join("examples/corpus"), "corpus").await;
    upload(
        &s3,
        &root().join("tests/data/rct_baseline/pdf"),
        "corpus/pdf",
    )
    .await;
    for (name, bytes) in [
        ("corpus/broken.pdf", b"%PDF-1.7\nnot a pdf at all".to_vec()),
        ("corpus/empty.txt", vec![]),
    ] {
        s3.put(&ObjPath::from(name), PutPayload::from(bytes))
            .await
            .unwrap();
    }
    let src = "s3://cluster/corpus/";
    let local = session("s3://cluster/store-local/");
    let shared = session("s3://cluster/store-cluster/");
    // Three parts for two executors: parts are not executors.
    shared
        .sql("SET datafusion.execution.target_partitions = 3")
        .await
        .unwrap();
    let url = quarry::cluster::standalone(&shared, 2, 2).await.unwrap();
    let client = client_of(&url, &shared, 3).await;

    // The plan runs on the cluster, in three parts merged in listing order.
    let plan = table(
        &client,
        &format!("EXPLAIN SELECT file_name FROM documents('{src}', 'recursive=true')"),
    )
    .await;
    assert!(
        plan.contains("distributed_plan")
            && plan.contains("ShuffleWriterExec")
            && plan.contains("parts=3"),
        "{plan}"
    );

    let queries = [
        // No ORDER BY: the merge gives the listing's order.
        format!("SELECT source, status, document_id, tokens, duplicate_of, error FROM documents('{src}', 'recursive=true')"),
        format!("SELECT source, status, bytes, note FROM inventory('{src}') ORDER BY source"),
        format!("SELECT document_id, count(*) AS n, sum(length(text)) AS chars FROM blocks('{src}', 'recursive=true') GROUP BY document_id ORDER BY document_id"),
        format!("SELECT * FROM chunks('{src}', 'sentence', 300, 0, 'recursive=true') ORDER BY document_id, chunk_id"),
        format!("SELECT source, table_id, arm, arm_n, characteristic, category, measure, value, unit, cell_text FROM cohort_tables('{src}', 'recursive=true')"),
    ];
    for q in &queries {
        let one = table(&local, q).await;
        let many = table(&client, q).await;
        assert_eq!(one, many, "{q}");
    }
    // What the comparison covered: the copy is a duplicate, the broken and
    // the empty files are rows of their own.
    let docs = table(&client, &queries[0]).await;
    assert!(docs.contains("duplicate"), "{docs}");
    assert!(
        docs.contains("broken.pdf") && docs.contains("failed"),
        "{docs}"
    );
    assert!(docs.contains("empty.txt"), "{docs}");
    let n = table(
        &client,
        &format!("SELECT count(*) FROM cohort_tables('{src}', 'recursive=true')"),
    )
    .await;
    assert!(!n.contains("| 0 "), "{n}");
}

/// A session whose model is the scripted server at `url`, its store at
/// `store` (its quarry.toml written into `dir`).
fn scripted(url: &str, dir: &std::path::Path, store: &str) -> SessionContext {
    scripted_with(url, dir, store, "")
}

/// [`scripted`] with `extra` at the end of its quarry.toml.
fn scripted_with(url: &str, dir: &std::path::Path, store: &str, extra: &str) -> SessionContext {
    let cfg = dir.join("quarry.toml");
    std::fs::write(
        &cfg,
        format!("[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{url}\"\nbackoff_initial_ms = 5\nmax_attempts = 2\n{extra}"),
    )
    .unwrap();
    quarry::session(&quarry::Settings {
        store: Some(store.to_string()),
        config: Some(cfg),
        ..Default::default()
    })
    .expect("session")
}

/// `extract`'s 50-document corpus with every kind of reply on the S3 bucket
/// `NAME` (`s3://NAME/corpus/`): one process's scripted server and session
/// (store `s3://NAME/one/`), a second server and session for the cluster
/// (store `s3://NAME/many/`, quarry.toml in `many_dir`), and the query both
/// run (the servers' ports in error messages made one).
struct Fifty {
    _dir: tempfile::TempDir,
    one_srv: quarry::model::test_server::TestServer,
    many_srv: quarry::model::test_server::TestServer,
    one: SessionContext,
    shared: SessionContext,
    many_dir: std::path::PathBuf,
    many_store: String,
    query: String,
}

/// The cluster side's `max_in_flight` (each process's).
const PER_PROCESS: usize = 3;

impl Fifty {
    /// One server each, as a rule's replies are taken in order; the
    /// cluster's answers after `latency`.
    async fn on_s3(name: &str, latency: std::time::Duration) -> Self {
        use quarry::model::test_server::TestServer;
        let dir = tempfile::tempdir().unwrap();
        let (corpus, rules) = crate::extract::fifty_documents(dir.path());
        let s3 = bucket(name).await;
        upload(&s3, &corpus, "corpus").await;
        let proto = crate::extract::protocol_file(
            dir.path(),
            format!(
                "{}\n[segment]\nmethod = \"paragraph\"\nmax_tokens = 50\noverlap_tokens = 0\n",
                crate::extract::PROTOCOL
            ),
        );
        let one_srv = TestServer::start(rules.clone(), std::time::Duration::ZERO)
            .await
            .unwrap();
        let many_srv = TestServer::start(rules, latency).await.unwrap();
        let (one_dir, many_dir) = (dir.path().join("one"), dir.path().join("many"));
        std::fs::create_dir_all(&one_dir).unwrap();
        std::fs::create_dir_all(&many_dir).unwrap();
        let one = scripted(&one_srv.base_url(), &one_dir, &format!("s3://{name}/one/"));
        let many_store = format!("s3://{name}/many/");
        // Each process sends at most 3 requests at once, so more held at
        // once means more than one executor was at work.
        let shared = scripted_with(
            &many_srv.base_url(),
            &many_dir,
            &many_store,
            &format!("max_in_flight = {PER_PROCESS}\n"),
        );
        let query = format!(
            "SELECT source, design, n, n_filled, n_unverified, conflicts, status, duplicate_of, \
             regexp_replace(error, '127\\.0\\.0\\.1:[0-9]+', 'SERVER') AS error \
             FROM extract('s3://{name}/corpus/', '{}') ORDER BY source",
            proto.display()
        );
        Fifty {
            _dir: dir,
            one_srv,
            many_srv,
            one,
            shared,
            many_dir,
            many_store,
            query,
        }
    }
}

/// `extract` over 50 documents with every kind of reply, split between two
/// executors: the same rows as one process, each request sent as often as
/// one process sends it, and a second run on the cluster sends nothing (the
/// response cache and the run's rows are in the shared store).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn extract_on_a_cluster_gives_one_processs_rows_and_pays_once() {
    let f = Fifty::on_s3("cluster-extract", std::time::Duration::from_millis(5)).await;
    let (one, one_srv, shared, many_srv, q) =
        (&f.one, &f.one_srv, &f.shared, &f.many_srv, &f.query);
    shared
        .sql("SET datafusion.execution.target_partitions = 4")
        .await
        .unwrap();
    let url = quarry::cluster::standalone(shared, 2, 2).await.unwrap();
    let client = client_of(&url, shared, 4).await;
    let plan = table(&client, &format!("EXPLAIN {q}")).await;
    assert!(
        plan.contains("CallExec: extract") && plan.contains("parts=4"),
        "{plan}"
    );
    let a = table(one, q).await;
    let b = table(&client, q).await;
    assert_eq!(a, b);
    assert_eq!(
        a.lines().filter(|l| l.starts_with("| s3://")).count(),
        50,
        "{a}"
    );
    // Every request as often as one process sends it (retries included).
    let mut sent1 = crate::common::answered(one_srv);
    let mut sent2 = crate::common::answered(many_srv);
    sent1.sort();
    sent2.sort();
    assert_eq!(sent1.len(), sent2.len());
    assert_eq!(sent1, sent2);
    // Again on the cluster: the shared store answers, nothing is sent.
    let before = many_srv.count();
    let c = table(&client, q).await;
    assert_eq!(a, c);
    assert_eq!(many_srv.count(), before, "a second run sent requests");
    // The executors' trace, read on the cluster from the shared store: the
    // calls one process made, by stage and outcome.
    let calls = "SELECT stage, ok, cached, count(*) AS n FROM calls \
                 GROUP BY stage, ok, cached ORDER BY stage, ok, cached";
    let plan = table(&client, &format!("EXPLAIN {calls}")).await;
    assert!(plan.contains("CallExec: table:calls()"), "{plan}");
    assert_eq!(table(one, calls).await, table(&client, calls).await);
    // A scalar model call on the executors: the same answers.
    let asked = format!(
        "SELECT file_name, llm('Say the name ' || file_name) AS a \
         FROM documents('s3://{}/corpus/') ORDER BY file_name LIMIT 4",
        "cluster-extract"
    );
    assert_eq!(table(one, &asked).await, table(&client, &asked).await);
}

/// An executor process.
struct Executor(std::process::Child);

impl Drop for Executor {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `quarry executor` for the scheduler on `port`, with the store and
/// the model configuration of `dir`.
fn executor_process(port: u16, store: &str, config: &std::path::Path) -> Executor {
    let free = crate::common::free_port;
    let (flight, grpc) = (free(), free());
    Executor(
        crate::common::quarry()
            .args(["executor", "--scheduler"])
            .arg(format!("127.0.0.1:{port}"))
            .args([
                "--port",
                &flight.to_string(),
                "--grpc-port",
                &grpc.to_string(),
            ])
            .args(["--slots", "2", "--store", store, "--config"])
            .arg(config)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("quarry executor starts"),
    )
}

/// A client of the cluster at `url` from `local`, splitting calls into
/// `parts`.
async fn client_of(url: &str, local: &SessionContext, parts: usize) -> SessionContext {
    let client = quarry::cluster::client(url, local).await.unwrap();
    client
        .sql(&format!(
            "SET datafusion.execution.target_partitions = {parts}"
        ))
        .await
        .unwrap();
    client
}

/// A scheduler in this process (an executor unheard of for `timeout` is
/// dead) and `n` executor processes with `store` and `config`, and a client
/// of it from `local` that splits calls into 4 parts.
async fn processes(
    local: &SessionContext,
    store: &str,
    config: &std::path::Path,
    n: usize,
    timeout: std::time::Duration,
) -> (SessionContext, Vec<Executor>) {
    let addr = quarry::cluster::scheduler("127.0.0.1:0".parse().unwrap(), timeout, local)
        .await
        .unwrap();
    let executors = (0..n)
        .map(|_| executor_process(addr.port(), store, config))
        .collect();
    let client = client_of(&format!("df://127.0.0.1:{}", addr.port()), local, 4).await;
    (client, executors)
}

/// An executor killed (SIGKILL) while its parts of an `extract` wait on the
/// model: the scheduler takes it for dead, its parts run again on the other
/// executor, the rows are one process's, and no request answered (paid
/// for) is sent again (the answers were in the shared store's response
/// cache).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_executor_killed_during_extract_changes_nothing() {
    use std::time::{Duration, Instant};
    let f = Fifty::on_s3("cluster-kill", Duration::ZERO).await;
    let (one, one_srv, shared, many_srv, q) =
        (&f.one, &f.one_srv, &f.shared, &f.many_srv, &f.query);
    let cfg = f.many_dir.join("quarry.toml");
    let (client, mut executors) =
        processes(shared, &f.many_store, &cfg, 2, Duration::from_secs(4)).await;
    let mut first = Some(executors.remove(0));
    let want = table(one, q).await;
    let total = one_srv.count();
    // Answer a third of the run, hold the rest, kill an executor, go on.
    many_srv.hold_after(total / 3);
    let run = {
        let (client, q) = (client.clone(), q.clone());
        tokio::spawn(async move { table(&client, &q).await })
    };
    let start = Instant::now();
    while many_srv.count() <= total / 3 + 1 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the run did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // An answer is the cache's once its put to the store has returned: give
    // the answers just given time to land (a reply in the air at a kill is
    // a request in flight, sent again, like one held).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = crate::common::answered(many_srv);
    let paid_before = crate::common::paid(many_srv);
    // SIGKILL.
    drop(first.take());
    // What had arrived and was held, unanswered, at the kill: the killed
    // executor's are answered into a closed connection at the release and
    // sent again by the part that runs again (as a model provider would have
    // been paid for them: the bound on what a kill costs twice).
    let held: Vec<String> = many_srv
        .requests()
        .iter()
        .map(|r| r.body["messages"].to_string())
        .filter(|m| !before.contains(m))
        .collect();
    // Both executors had parts running: the requests held are more than
    // one process sends at once.
    assert!(
        held.len() > PER_PROCESS,
        "{} requests held at the kill: the parts were not spread over both executors",
        held.len()
    );
    many_srv.release();
    let got = tokio::time::timeout(Duration::from_secs(240), run)
        .await
        .expect("the run finished after the kill")
        .unwrap();
    assert_eq!(want, got);
    // Nothing paid for before the kill was paid for again (an error status,
    // which is not paid for and not kept, is asked again by the part that
    // runs again, as by a second run).
    let all = crate::common::paid(many_srv);
    let again: Vec<&String> = all[paid_before.len()..]
        .iter()
        .filter(|a| paid_before.contains(a))
        .collect();
    assert!(again.is_empty(), "paid again after an answer: {again:#?}");
    // Every request one process is paid for, and besides those only
    // requests held at the kill, each at most once more.
    let mut extra = all.clone();
    for m in crate::common::paid(one_srv) {
        let at = extra
            .iter()
            .position(|x| *x == m)
            .unwrap_or_else(|| panic!("never paid for on the cluster: {m}"));
        extra.swap_remove(at);
    }
    for m in &extra {
        assert!(held.contains(m), "paid twice, not held at the kill: {m}");
    }
    assert!(
        extra.len() <= held.len(),
        "{} extra, {} held",
        extra.len(),
        held.len()
    );
}

/// A run over its call ceiling is refused on the cluster before any request
/// (every part checks the whole run), and one at its ceiling runs; later
/// queries on the same executors, from another client session or the same,
/// each have the whole ceiling (an executor counts per query).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cluster_run_over_its_ceiling_sends_nothing() {
    use quarry::model::test_server::TestServer;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let corpus = crate::extract::forty_trials(dir.path());
    let proto = crate::extract::protocol_file(dir.path(), crate::extract::PROTOCOL);
    let srv = TestServer::start(vec![], Duration::ZERO).await.unwrap();
    let q = format!(
        "SELECT status, count(*) AS n FROM extract('{}', '{}') GROUP BY status",
        corpus.display(),
        proto.display()
    );
    for (limit, refused) in [(39, true), (40, false)] {
        let d = dir.path().join(format!("limit{limit}"));
        std::fs::create_dir_all(&d).unwrap();
        let shared = scripted_with(
            &srv.base_url(),
            &d,
            &d.join("store").display().to_string(),
            &format!("[limits]\nmax_total_calls = {limit}\n"),
        );
        let url = quarry::cluster::standalone(&shared, 2, 2).await.unwrap();
        let client = client_of(&url, &shared, 4).await;
        let got = crate::common::sql(&client, &q).await;
        if refused {
            let err = got.unwrap_err().to_string();
            assert!(
                err.contains("call_cap") && err.contains("at least 40 model calls"),
                "{err}"
            );
            assert_eq!(srv.count(), 0, "refused before any request");
        } else {
            let t = datafusion::arrow::util::pretty::pretty_format_batches(&got.unwrap())
                .unwrap()
                .to_string();
            assert!(t.contains("| ok     | 40 |"), "{t}");
            assert_eq!(srv.count(), 40);
            // Another query on the same executors has the whole ceiling for
            // itself (each executor counts per query), in another client
            // session or the same.
            let other = |i: usize| {
                let pd = dir.path().join(format!("p{i}"));
                std::fs::create_dir_all(&pd).unwrap();
                let p = crate::extract::protocol_file(
                    &pd,
                    crate::extract::PROTOCOL
                        .replace("The study design", &format!("The study design ({i})")),
                );
                format!(
                    "SELECT status, count(*) AS n FROM extract('{}', '{}') GROUP BY status",
                    corpus.display(),
                    p.display()
                )
            };
            let second = client_of(&url, &shared, 4).await;
            for (i, c) in [(2, &second), (3, &second), (4, &client)] {
                let t = crate::common::table(c, &other(i)).await;
                assert!(t.contains("| ok     | 40 |"), "{t}");
            }
            assert_eq!(srv.count(), 160);
        }
    }
}

/// The overshoot bound: requests a plan cannot count (here a repair round
/// for every reply) stop at the run ceiling on each executor, so a query on
/// two executor processes sends at most twice the ceiling, where one
/// process sends exactly the ceiling.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn calls_a_plan_cannot_count_stop_at_the_ceiling_on_each_executor() {
    use quarry::model::test_server::{Action, Rule, TestServer};
    use std::time::Duration;
    const CEILING: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    let corpus = crate::extract::forty_trials(dir.path());
    let proto = crate::extract::protocol_file(
        dir.path(),
        format!("{}\n[extract]\nrepair = true\n", crate::extract::PROTOCOL),
    );
    let q = format!(
        "SELECT count(*) AS n FROM extract('{}', '{}')",
        corpus.display(),
        proto.display()
    );
    // Every first reply lacks `n`: each of the 40 requests asks for a repair.
    let bad = r#"{"design":"trial","design__quote":"We enrolled"}"#;
    for executors in [0, 2] {
        let srv = TestServer::start(
            vec![Rule {
                needle: "Trial T".into(),
                actions: vec![Action::Reply(bad.into())],
            }],
            Duration::ZERO,
        )
        .await
        .unwrap();
        let d = dir.path().join(format!("on{executors}"));
        std::fs::create_dir_all(&d).unwrap();
        let store = d.join("store").display().to_string();
        let shared = scripted_with(
            &srv.base_url(),
            &d,
            &store,
            &format!("[limits]\nmax_total_calls = {CEILING}\n"),
        );
        let (ctx, _procs) = if executors == 0 {
            (shared.clone(), Vec::new())
        } else {
            let cfg = d.join("quarry.toml");
            processes(&shared, &store, &cfg, executors, Duration::from_secs(10)).await
        };
        let t = table(&ctx, &q).await;
        assert!(t.contains("| 40 |"), "{t}");
        let sent = srv.count();
        if executors == 0 {
            assert_eq!(sent, CEILING, "one process stops at the ceiling");
        } else {
            assert!(
                sent > CEILING && sent <= executors * CEILING,
                "{sent} requests on {executors} executors, ceiling {CEILING}"
            );
        }
    }
}

/// `claims` and `rejections` on a cluster: each part runs the claims stages
/// over its documents and writes their revisions into the shared store; the
/// claims and rejections are one process's (revision numbers aside: two
/// executors take them in another order), and a second run sends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claims_on_a_cluster_are_one_processs() {
    use quarry::model::test_server::{Action, Rule, TestServer};
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<(String, String)> = (0..12)
        .map(|i| {
            (
                format!("g{i:02}.txt"),
                crate::claims::GALAXY.replace("Coma cluster", &format!("cluster number {i}")),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let corpus = crate::common::corpus_with(dir.path(), &files);
    let spec = crate::claims::spec_file(dir.path());
    let rules = vec![Rule {
        needle: "Dragonfly 44".into(),
        actions: vec![Action::Reply(crate::claims::galaxy_reply())],
    }];
    let one_srv = TestServer::start(rules.clone(), Duration::ZERO)
        .await
        .unwrap();
    let many_srv = TestServer::start(rules, Duration::ZERO).await.unwrap();
    let (one_dir, many_dir) = (dir.path().join("one"), dir.path().join("many"));
    std::fs::create_dir_all(&one_dir).unwrap();
    std::fs::create_dir_all(&many_dir).unwrap();
    let one = scripted(
        &one_srv.base_url(),
        &one_dir,
        &one_dir.join("store").display().to_string(),
    );
    let shared = scripted(
        &many_srv.base_url(),
        &many_dir,
        &many_dir.join("store").display().to_string(),
    );
    let url = quarry::cluster::standalone(&shared, 2, 2).await.unwrap();
    let client = client_of(&url, &shared, 4).await;
    let (c, s) = (corpus.display(), spec.display());
    let claims = format!(
        "SELECT claim_id, source, subject, predicate, quantity, span FROM claims('{c}', '{s}') \
         ORDER BY source, claim_id"
    );
    let rejections = format!(
        "SELECT source, ordinal, code, problems FROM rejections('{c}', '{s}') ORDER BY source, ordinal"
    );
    let plan = table(&client, &format!("EXPLAIN {claims}")).await;
    assert!(
        plan.contains("CallExec: claims") && plan.contains("parts=4"),
        "{plan}"
    );
    let want = table(&one, &claims).await;
    assert_eq!(want, table(&client, &claims).await);
    assert_eq!(
        want.lines().filter(|l| l.contains("DF44")).count(),
        24,
        "{want}"
    );
    let rejected = table(&one, &rejections).await;
    assert_eq!(rejected, table(&client, &rejections).await);
    assert_eq!(
        rejected
            .lines()
            .filter(|l| l.contains("ungrounded"))
            .count(),
        12,
        "{rejected}"
    );
    assert_eq!(one_srv.count(), many_srv.count());
    let before = many_srv.count();
    assert_eq!(want, table(&client, &claims).await);
    assert_eq!(many_srv.count(), before, "a second run sent requests");
}
