//! `quarry serve` against the shell: rows per second of `SELECT * FROM
//! chunks(...)` through `psql` (the Postgres protocol, text format) beside
//! the same query printed by `quarry sql --format csv`, both to /dev/null,
//! over one store (the corpus parsed once in a warm-up, so both read the
//! ingest cache and cut the chunks). Each runs three times; the median is
//! shown.
//!
//! Input: a generated corpus of `QUARRY_SERVE_DOCS` (default 300) text
//! files of about 30 sentences of the bundled trial paper each (every file
//! different), cut into 40-token sentence chunks.
//!
//! Run: `cargo bench --bench serve` (needs `psql`: Debian's
//! postgresql-client).

mod common;

#[path = "../tests/support/served.rs"]
mod served;

use std::process::{Command, Stdio};
use std::time::Instant;

use served::{sentence_corpus, Served};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn quarry() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quarry"))
}

fn time(mut c: Command) -> f64 {
    let t = Instant::now();
    let out = c
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.elapsed().as_secs_f64()
}

fn main() {
    let docs: usize = std::env::var("QUARRY_SERVE_DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let corpus = d.join("corpus");
    sentence_corpus(&corpus, docs);
    let store = d.join("store");
    let (c, s) = (corpus.display().to_string(), store.display().to_string());
    let q = format!("SELECT * FROM chunks('{c}', 'sentence', 40)");
    let rows: usize = {
        let out = quarry()
            .args([
                "sql",
                "--store",
                &s,
                "--format",
                "csv",
                "-c",
                &format!("SELECT count(*) AS n FROM chunks('{c}', 'sentence', 40)"),
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };

    let mut cmd = quarry();
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--store", &s])
        .env_remove("QUARRY_SERVE_PASSWORD");
    let server = Served::start(cmd);
    let port = server.port;

    let shell = || {
        let mut c = quarry();
        c.args(["sql", "--store", &s, "--format", "csv", "-c", &q]);
        c
    };
    let psql = || {
        let mut c = Command::new("psql");
        c.args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "bench",
            "-d",
            "quarry",
            "-X",
            "-A",
            "-t",
            "-c",
            &q,
        ]);
        c
    };
    // Warm-up: each once (the first parses the corpus into the store).
    time(shell());
    time(psql());
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        a.push(time(shell()));
        b.push(time(psql()));
    }
    drop(server);
    let (sa, sb) = (median(a), median(b));
    println!("input: {docs} generated text files, {rows} chunks (sentence, 40 tokens), store warm");
    println!(
        "quarry sql --format csv:     {sa:.3} s, {:.0} rows/s",
        rows as f64 / sa
    );
    println!(
        "psql through quarry serve:   {sb:.3} s, {:.0} rows/s  ({:.0}% of the shell's rate)",
        rows as f64 / sb,
        sa / sb * 100.0
    );
}
