//! `quarry serve` with real clients: Debian's `psql` and Python's psycopg
//! against the server the test starts on 127.0.0.1 (port 0: it says which
//! port it took), its model the scripted server.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quarry::model::test_server::{Action, Rule, TestServer};

use crate::common::{corpus, corpus_with, python, quarry};

/// A running `quarry serve`, killed when dropped; its standard error kept.
struct Served {
    child: Child,
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }
}

/// Starts `quarry serve --listen 127.0.0.1:0 ARGS` with `env`, and waits
/// for the line that names its port.
fn serve(args: &[&str], env: &[(&str, &str)]) -> Served {
    let mut cmd = quarry();
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("QUARRY_SERVE_PASSWORD")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let err = child.stderr.take().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let l = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("listening on 127.0.0.1:").nth(1) {
                let port: u16 = rest.split(' ').next().unwrap().parse().unwrap();
                let _ = tx.send(port);
            }
            l.lock().unwrap().push(line);
        }
    });
    let port = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| {
            panic!(
                "quarry serve did not start: {}",
                log.lock().unwrap().join("\n")
            )
        });
    Served { child, port, log }
}

/// `psql` on the served port running `sql` (unaligned, tuples only),
/// with `password` in PGPASSWORD.
fn psql(port: u16, sql: &str, password: Option<&str>) -> Output {
    let mut c = Command::new("psql");
    c.args([
        "-h",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "-U",
        "analyst",
        "-d",
        "quarry",
    ])
    .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
    .env("PGCONNECT_TIMEOUT", "20")
    .env_remove("PGPASSWORD");
    if let Some(p) = password {
        c.env("PGPASSWORD", p);
    }
    c.output()
        .expect("psql (Debian: postgresql-client) is needed for the serve tests")
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
