//! `quarry serve` with real clients: Debian's `psql` and Python's psycopg
//! against the server the test starts on 127.0.0.1 (port 0: it says which
//! port it took), its model the scripted server.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use quarry::model::test_server::{Action, Rule, TestServer};

use crate::common::{corpus, corpus_with, python, quarry};

#[path = "../support/served.rs"]
mod served;
use served::Served;

/// Starts `quarry serve --listen 127.0.0.1:0 ARGS` with `env`.
fn serve(args: &[&str], env: &[(&str, &str)]) -> Served {
    let mut cmd = quarry();
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("QUARRY_SERVE_PASSWORD");
    for (k, v) in env {
        cmd.env(k, v);
    }
    Served::start(cmd)
}

/// `psql` on the served port running `sql` (unaligned, tuples only),
/// with `password` in PGPASSWORD.
fn psql(port: u16, sql: &str, password: Option<&str>) -> Output {
    psql_to(
        &format!("host=127.0.0.1 port={port} user=analyst dbname=quarry"),
        sql,
        password,
    )
}

/// `psql` with the connection string `conn` (libpq's key=value form).
fn psql_to(conn: &str, sql: &str, password: Option<&str>) -> Output {
    psql_command(conn, sql, password)
        .output()
        .expect("psql (Debian: postgresql-client) is needed for the serve tests")
}

/// The `psql` command [`psql_to`] runs (unaligned, tuples only, stopping
/// at the first error), not yet started.
fn psql_command(conn: &str, sql: &str, password: Option<&str>) -> Command {
    let mut c = Command::new("psql");
    c.arg(conn)
        .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .env("PGCONNECT_TIMEOUT", "20")
        .env_remove("PGPASSWORD")
        .env_remove("PGSSLMODE");
    if let Some(p) = password {
        c.env("PGPASSWORD", p);
    }
    c
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

const PROTOCOL: &str = r#"
name = "served"
[[fields]]
name = "design"
description = "The study design"
[[fields]]
name = "n"
description = "Number of participants"
type = "integer"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psql_and_psycopg_run_the_shells_sql_over_the_postgres_protocol() {
    let srv = TestServer::start(
        vec![Rule {
            needle: "We ran a randomised".into(),
            actions: vec![Action::Reply(
                r#"{"design":"randomised controlled trial","n":120,"design__quote":"We ran a randomised controlled trial.","n__quote":"We enrolled 120 participants."}"#.into(),
            )],
        }],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trials = corpus_with(
        d,
        &[(
            "trial.txt",
            "We ran a randomised controlled trial. We enrolled 120 participants.\n",
        )],
    );
    let proto = d.join("protocol.toml");
    std::fs::write(&proto, PROTOCOL).unwrap();
    let cfg = d.join("quarry.toml");
    std::fs::write(
        &cfg,
        format!("[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{}\"\nbackoff_initial_ms = 5\n", srv.base_url()),
    )
    .unwrap();
    let store = d.join("store");
    let s = serve(
        &[
            "--store",
            &store.display().to_string(),
            "--config",
            &cfg.display().to_string(),
        ],
        &[],
    );
    let c = corpus().display().to_string();

    // The corpus functions.
    let docs = ok(psql(
        s.port,
        &format!("SELECT file_name, status FROM documents('{c}') ORDER BY file_name"),
        None,
    ));
    assert_eq!(docs.lines().count(), 6, "{docs}");
    assert!(docs.contains("PMC3751573.pdf|ok"), "{docs}");
    let chunks = ok(psql(
        s.port,
        &format!("SELECT count(*) FROM chunks('{c}', 'sentence', 120)"),
        None,
    ));
    assert_eq!(chunks.trim(), "497", "as the README's shell example counts");
    // A model-driven run, its trace, and the store's tables by name.
    let (t, p) = (trials.display(), proto.display());
    let ext = ok(psql(
        s.port,
        &format!("SELECT design, n, status FROM extract('{t}', '{p}')"),
        None,
    ));
    assert_eq!(ext.trim(), "randomised controlled trial|120|ok");
    assert_eq!(srv.count(), 1);
    let calls = ok(psql(s.port, "SELECT stage, ok FROM calls", None));
    assert_eq!(calls.trim(), "extract|t", "{calls}");
    let kept = ok(psql(s.port, "SELECT n FROM extraction", None));
    assert_eq!(kept.trim(), "120");

    // The catalog psql browses.
    let dt = ok(psql(s.port, "\\dt", None));
    assert!(dt.contains("extraction") && dt.contains("calls"), "{dt}");
    let d_calls = ok(psql(s.port, "\\d calls", None));
    assert!(
        d_calls.contains("stage") && d_calls.contains("usd"),
        "{d_calls}"
    );
    let info = ok(psql(
        s.port,
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'extraction' AND column_name = 'design'",
        None,
    ));
    assert_eq!(info.trim(), "design");

    // Read-only: no client drops or changes the store's tables.
    for q in [
        "DROP TABLE extraction",
        "DELETE FROM calls",
        "CREATE TABLE mine AS SELECT 1 AS a",
    ] {
        let o = psql(s.port, q, None);
        assert!(!o.status.success(), "{q}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("read-only"), "{q}: {e}");
    }
    assert_eq!(
        ok(psql(s.port, "SELECT count(*) FROM extraction", None)).trim(),
        "1"
    );

    // psycopg, the Python driver (extended protocol, server-side types).
    let script = format!(
        r#"
import psycopg
with psycopg.connect(host="127.0.0.1", port={port}, user="analyst", dbname="quarry", autocommit=True) as conn:
    rows = conn.execute("SELECT file_name, pages FROM documents('{c}') WHERE ext = 'pdf'").fetchall()
    print(rows)
    n = conn.execute("SELECT count(*) FROM blocks('{c}') WHERE kind = %s", ("table",)).fetchone()[0]
    print(n)
    print(conn.execute("SELECT n FROM extraction").fetchone()[0] + 1)
"#,
        port = s.port
    );
    let out = Command::new(python())
        .args(["-c", &script])
        .output()
        .unwrap();
    let text = ok(out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "[('PMC3751573.pdf', 9)]", "{text}");
    assert!(lines[1].parse::<u32>().unwrap() > 0, "{text}");
    assert_eq!(lines[2], "121", "an integer column arrives as an integer");
    drop(s);
}

#[test]
fn with_allow_writes_create_table_as_saves_into_the_store_and_replaces_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let st = store.display().to_string();
    let c = corpus().display().to_string();
    let s = serve(&["--store", &st, "--allow-writes"], &[]);
    // psql (simple protocol) and psycopg (extended) each save a table.
    let made = ok(psql(
        s.port,
        &format!(
            "CREATE TABLE pdfs AS SELECT file_name, pages FROM documents('{c}') WHERE ext = 'pdf'"
        ),
        None,
    ));
    assert!(made.trim().is_empty() || made.contains("SELECT"), "{made}");
    let script = format!(
        r#"
import psycopg
with psycopg.connect(host="127.0.0.1", port={port}, user="analyst", dbname="quarry", autocommit=True) as conn:
    cur = conn.execute("CREATE TABLE by_ext AS SELECT ext, count(*) AS n FROM documents('{c}') GROUP BY ext")
    print(cur.rowcount)
    print(conn.execute("SELECT sum(n) FROM by_ext").fetchone()[0])
"#,
        port = s.port
    );
    let out = ok(Command::new(python())
        .args(["-c", &script])
        .output()
        .unwrap());
    assert_eq!(out.lines().collect::<Vec<_>>(), ["6", "6"], "{out}");
    // Nothing is replaced or dropped: a name in use, OR REPLACE, quarry's
    // own tables, DROP.
    for (q, says) in [
        ("CREATE TABLE pdfs AS SELECT 1 AS a", "exists already"),
        (
            "CREATE OR REPLACE TABLE pdfs AS SELECT 1 AS a",
            "OR REPLACE is refused",
        ),
        ("CREATE TABLE calls AS SELECT 1 AS a", "exists already"),
        (
            "CREATE TABLE \"Odd name\" AS SELECT 1 AS a",
            "cannot name a saved table",
        ),
        ("DROP TABLE pdfs", "read-only"),
        ("DELETE FROM pdfs", "read-only"),
    ] {
        let o = psql(s.port, q, None);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && e.contains(says), "{q}: {e}");
    }
    assert!(psql(
        s.port,
        "CREATE TABLE IF NOT EXISTS pdfs AS SELECT 1 AS a",
        None
    )
    .status
    .success());
    assert_eq!(
        ok(psql(s.port, "SELECT file_name, pages FROM pdfs", None)).trim(),
        "PMC3751573.pdf|9"
    );
    drop(s);
    // A later server and the shell over the same store find them by name.
    let s2 = serve(&["--store", &st], &[]);
    assert_eq!(
        ok(psql(
            s2.port,
            "SELECT n FROM by_ext WHERE ext = 'pdf'",
            None
        ))
        .trim(),
        "1"
    );
    let shell = quarry()
        .args([
            "sql",
            "--store",
            &st,
            "--format",
            "csv",
            "-c",
            "SELECT count(*) AS n FROM by_ext",
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&shell.stdout).contains("\n6"),
        "{shell:?}"
    );
    // And any Delta reader reads them.
    let theirs = crate::common::python_words(
        "import sys, duckdb, deltalake\n\
         f = deltalake.DeltaTable(sys.argv[1]).file_uris()\n\
         print(duckdb.connect().execute('SELECT sum(n) FROM read_parquet(?)', [f]).fetchone()[0])",
        &[&store.join("tables/saved/by_ext")],
    );
    assert_eq!(theirs, ["6"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_is_asked_and_a_wrong_one_refused_without_being_logged() {
    let dir = tempfile::tempdir().unwrap();
    let pw = dir.path().join("password");
    std::fs::write(&pw, "correct horse battery\n").unwrap();
    let s = serve(
        &["--no-store", "--password-file", &pw.display().to_string()],
        &[],
    );
    assert_eq!(
        ok(psql(s.port, "SELECT 1 + 1", Some("correct horse battery"))).trim(),
        "2"
    );
    let tried = "tried-Xq7-value";
    let o = psql(s.port, "SELECT 1", Some(tried));
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.to_lowercase().contains("password"), "{e}");
    let none = psql(s.port, "SELECT 1", None);
    assert!(!none.status.success());
    std::thread::sleep(Duration::from_millis(300));
    let log = s.log();
    assert!(log.contains("wrong password for user 'analyst'"), "{log}");
    assert!(
        !log.contains(tried) && !log.contains("correct horse"),
        "{log}"
    );
    // The password from the environment works the same.
    let s2 = serve(&["--no-store"], &[("QUARRY_SERVE_PASSWORD", "from-env")]);
    assert_eq!(
        ok(psql(s2.port, "SELECT 'in'", Some("from-env"))).trim(),
        "in"
    );
    assert!(!psql(s2.port, "SELECT 1", Some("wrong")).status.success());
}

#[test]
fn a_non_loopback_address_without_a_password_is_refused_before_listening() {
    let out = quarry()
        .args(["serve", "--no-store", "--listen", "0.0.0.0:0"])
        .env_remove("QUARRY_SERVE_PASSWORD")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("not a loopback address") && e.contains("QUARRY_SERVE_PASSWORD"),
        "{e}"
    );
    assert!(!e.contains("quarry serve: listening"), "{e}");
    // A certificate that cannot be read stops the server; it never serves
    // in clear instead.
    let bad = quarry()
        .args([
            "serve",
            "--no-store",
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            "/nonexistent.pem",
            "--tls-key",
            "/nonexistent.key",
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("TLS certificate"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_certificate_clients_connect_over_tls_and_never_in_clear() {
    // A self-signed certificate for localhost made by openssl, as a user
    // would for a first try.
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    ok(Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl (Debian: openssl) makes the test certificate"));
    let pw = dir.path().join("password");
    std::fs::write(&pw, "s3cret over tls\n").unwrap();
    let s = serve(
        &[
            "--no-store",
            "--password-file",
            &pw.display().to_string(),
            "--tls-cert",
            &cert.display().to_string(),
            "--tls-key",
            &key.display().to_string(),
        ],
        &[],
    );
    let base = format!("host=localhost port={} user=analyst dbname=quarry", s.port);
    // The server's certificate checked against the file, host name included.
    let verified = format!("{base} sslmode=verify-full sslrootcert={}", cert.display());
    assert_eq!(
        ok(psql_to(&verified, "SELECT 40 + 2", Some("s3cret over tls"))).trim(),
        "42"
    );
    // A client that does not ask for TLS is refused before any password is
    // asked, and told how to connect.
    let clear = psql_to(
        &format!("{base} sslmode=disable"),
        "SELECT 1",
        Some("s3cret over tls"),
    );
    assert!(!clear.status.success());
    let e = String::from_utf8_lossy(&clear.stderr);
    assert!(
        e.contains("TLS connections only") && e.contains("sslmode=require"),
        "{e}"
    );
    // A wrong password under TLS is refused as in clear.
    assert!(!psql_to(&verified, "SELECT 1", Some("wrong"))
        .status
        .success());
    // psycopg, verifying the certificate too.
    let script = r#"
import sys, psycopg
conn = psycopg.connect(host="localhost", port=int(sys.argv[1]), user="analyst", dbname="quarry",
                       password="s3cret over tls", sslmode="verify-full", sslrootcert=sys.argv[2])
print(conn.pgconn.ssl_in_use, conn.execute("SELECT 6 * 7").fetchone()[0])
"#;
    let out = ok(Command::new(python())
        .args([
            "-c",
            script,
            &s.port.to_string(),
            &cert.display().to_string(),
        ])
        .output()
        .unwrap());
    assert_eq!(out.trim(), "True 42");
    std::thread::sleep(Duration::from_millis(300));
    let log = s.log();
    assert!(log.contains("without TLS: refused"), "{log}");
    assert!(!log.contains("s3cret"), "{log}");
}

#[test]
fn long_queries_stream_rows_as_they_come_and_stop_when_cancelled() {
    // 200 generated text files: chunks() takes seconds over them, which is
    // what lets the test see rows arrive before the end, and a cancel stop
    // the query midway.
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    served::sentence_corpus(&corpus, 200);
    let s = serve(&["--no-store"], &[]);
    let q = format!(
        "SELECT * FROM chunks('{}', 'sentence', 40)",
        corpus.display()
    );
    // psycopg's stream() is the extended protocol with no row limit: the
    // first row comes long before the last, and the rows are all there.
    let script = r#"
import sys, time, psycopg
conn = psycopg.connect(host="127.0.0.1", port=int(sys.argv[1]), user="analyst", dbname="quarry", autocommit=True)
t = time.time(); first = None; n = 0
for row in conn.cursor().stream(sys.argv[2]):
    if first is None: first = time.time() - t
    n += 1
total = time.time() - t
print(n, first, total)
# A cancel while rows come stops the query; the connection goes on.
t = time.time(); got = 0
try:
    for row in conn.cursor().stream(sys.argv[2]):
        got += 1
        if got == 5: conn.cancel_safe()
    print("not cancelled", got)
except psycopg.errors.QueryCanceled as e:
    print("cancelled", got, time.time() - t)
print(conn.execute("SELECT 'still here'").fetchone()[0])
"#;
    let out = ok(Command::new(python())
        .args(["-c", script, &s.port.to_string(), &q])
        .output()
        .unwrap());
    let lines: Vec<&str> = out.lines().collect();
    let f: Vec<f64> = lines[0].split(' ').map(|x| x.parse().unwrap()).collect();
    let n_all = ok(psql(s.port, &format!("SELECT count(*) FROM ({q})"), None));
    assert_eq!(f[0], n_all.trim().parse::<f64>().unwrap(), "{out}");
    assert!(
        f[2] > 1.0 && f[1] < f[2] / 2.0,
        "first row after {} s of {} s",
        f[1],
        f[2]
    );
    let c: Vec<&str> = lines[1].split(' ').collect();
    assert_eq!(c[0], "cancelled", "{out}");
    assert!(c[2].parse::<f64>().unwrap() < f[2] / 2.0, "{out}");
    assert_eq!(lines[2], "still here");
    // psql's Ctrl-C (the simple protocol) stops a query that is counting.
    let child = psql_command(
        &format!("host=127.0.0.1 port={} user=analyst dbname=quarry", s.port),
        &format!("SELECT count(*) FROM ({q})"),
        None,
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let started = Instant::now();
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && e.contains("canceling statement due to user request"),
        "{e}"
    );
    assert!(started.elapsed().as_secs_f64() < f[2] / 2.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_at_once_share_one_endpoint_limit() {
    // Each reply takes 300 ms; the endpoint allows one request in flight.
    // Two psql clients asking four distinct prompts each: the server never
    // sees two at once, and both clients get every answer.
    let srv = TestServer::start(
        vec![Rule {
            needle: String::new(),
            actions: vec![Action::Reply("yes".into())],
        }],
        Duration::from_millis(300),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("quarry.toml");
    std::fs::write(
        &cfg,
        format!("[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{}\"\nmax_in_flight = 1\nbackoff_initial_ms = 5\n", srv.base_url()),
    )
    .unwrap();
    let s = serve(&["--no-store", "--config", &cfg.display().to_string()], &[]);
    let port = s.port;
    let t = Instant::now();
    let clients: Vec<_> = ["a", "b"]
        .iter()
        .map(|who| {
            let q = format!(
                "SELECT count(*) FROM (SELECT llm(p) AS r FROM (VALUES ('{who}1'), ('{who}2'), ('{who}3'), ('{who}4')) t(p)) WHERE r = 'yes'"
            );
            std::thread::spawn(move || ok(psql(port, &q, None)))
        })
        .collect();
    for c in clients {
        assert_eq!(c.join().unwrap().trim(), "4");
    }
    assert_eq!(srv.count(), 8);
    assert_eq!(
        srv.peak_in_flight(),
        1,
        "the two clients shared the endpoint's limit of one"
    );
    assert!(
        t.elapsed() >= Duration::from_millis(8 * 300),
        "{:?}",
        t.elapsed()
    );
}
