//! The same queries in one process and on a Ballista cluster of one and of
//! two executors on this machine (`quarry scheduler`, `quarry executor`
//! and `quarry sql --cluster`, each its own process): `documents` over the
//! shared data's PDFs (CPU: parsing) and `extract` against quarry's scripted
//! server at a fixed latency (the model: each executor holds its endpoint's
//! `max_in_flight`). Wall time of the `quarry sql` command, start-up included.
//!
//! Run: `cargo bench --bench cluster`. Environment: `QUARRY_BENCH_DOCS`
//! (extract's documents, default 200), `QUARRY_BENCH_LATENCY_MS` (default
//! 200), `QUARRY_BENCH_CONCURRENCY` (each process's `max_in_flight`,
//! default 8).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{env_num, shared_data};
use quarry::model::test_server::TestServer;

const QUARRY: &str = env!("CARGO_BIN_EXE_quarry");

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A scheduler and `n` executors (2 task slots each), stopped on drop.
struct Cluster {
    port: u16,
    procs: Vec<Child>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for p in &mut self.procs {
            let _ = p.kill();
            let _ = p.wait();
        }
    }
}

impl Cluster {
    fn start(n: usize, store: &Path, config: &Path) -> Self {
        let port = free_port();
        let spawn = |args: Vec<String>| {
            Command::new(QUARRY)
                .args(args)
                .arg("--store")
                .arg(store)
                .arg("--config")
                .arg(config)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("quarry starts")
        };
        let mut procs = vec![spawn(vec![
            "scheduler".into(),
            "--bind".into(),
            format!("127.0.0.1:{port}"),
        ])];
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < Duration::from_secs(30), "no scheduler");
            std::thread::sleep(Duration::from_millis(50));
        }
        for _ in 0..n {
            procs.push(spawn(vec![
                "executor".into(),
                "--scheduler".into(),
                format!("127.0.0.1:{port}"),
                "--port".into(),
                free_port().to_string(),
                "--grpc-port".into(),
                free_port().to_string(),
                "--slots".into(),
                "2".into(),
            ]));
        }
        // The executors register within their first poll.
        std::thread::sleep(Duration::from_secs(2));
        Cluster { port, procs }
    }
}

/// Seconds `quarry sql` takes for `sql` (on the cluster at `port`, else in
/// one process), and its output.
fn timed(sql: &str, store: &Path, config: &Path, cluster: Option<(u16, usize)>) -> (f64, String) {
    let mut c = Command::new(QUARRY);
    c.arg("sql")
        .arg("--store")
        .arg(store)
        .arg("--config")
        .arg(config);
    if let Some((port, parts)) = cluster {
        c.arg("--cluster")
            .arg(format!("df://127.0.0.1:{port}"))
            .arg("-c")
            .arg(format!(
                "SET datafusion.execution.target_partitions = {parts}"
            ));
    }
    let start = Instant::now();
    let out = c.arg("-c").arg(sql).output().expect("quarry sql");
    let secs = start.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (secs, String::from_utf8_lossy(&out.stdout).to_string())
}

/// Runs `sql` in one process, then on 1 and on 2 executors, each time over
/// a fresh store (nothing cached); prints the seconds and the ratios.
/// `probe` says what the server saw after each run.
fn compare(what: &str, sql: &str, root: &Path, config: &Path, probe: &dyn Fn() -> String) {
    let store = |name: &str| -> PathBuf { root.join(name) };
    let (one, want) = timed(sql, &store("one"), config, None);
    let p0 = probe();
    let c1 = Cluster::start(1, &store("c1"), config);
    let (e1, got1) = timed(sql, &store("c1"), config, Some((c1.port, 2)));
    drop(c1);
    let p1 = probe();
    let c2 = Cluster::start(2, &store("c2"), config);
    let (e2, got2) = timed(sql, &store("c2"), config, Some((c2.port, 4)));
    drop(c2);
    let p2 = probe();
    if !p0.is_empty() {
        println!("  server after each: one process {p0}; 1 executor {p1}; 2 executors {p2}");
    }
    assert_eq!(want, got1, "{what}: one executor's result");
    assert_eq!(want, got2, "{what}: two executors' result");
    println!(
        "{what:<44} {one:>8.2} {e1:>10.2} {e2:>11.2} {:>12.2}x",
        e1 / e2
    );
}

fn main() {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let root = tempfile::tempdir().unwrap();
    let config = root.path().join("quarry.toml");
    println!("cluster: {cores} cores; one process, then a scheduler and 1 or 2 executors (2 task slots each, target_partitions 2 or 4), each a process on this machine");
    println!(
        "{:<44} {:>8} {:>10} {:>11} {:>13}",
        "query", "1 proc s", "1 exec s", "2 execs s", "1 vs 2 execs"
    );
    // documents over the shared PDFs: parsing, CPU-bound.
    if let (Some(a), Some(b)) = (
        shared_data("rct_baseline/pdf", "the rct_baseline PDFs"),
        shared_data("rct_tables_more/pdf", "the rct_tables_more PDFs"),
    ) {
        let pdfs = root.path().join("pdfs");
        std::fs::create_dir_all(&pdfs).unwrap();
        let mut n = 0;
        for dir in [a, b] {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                if e.path().extension().is_some_and(|x| x == "pdf") {
                    std::fs::copy(e.path(), pdfs.join(e.file_name())).unwrap();
                    n += 1;
                }
            }
        }
        std::fs::write(&config, "").unwrap();
        compare(
            &format!("documents, {n} PDFs"),
            &format!(
                "SELECT count(*), sum(tokens), sum(pages) FROM documents('{}/')",
                pdfs.display()
            ),
            &root.path().join("documents"),
            &config,
            &String::new,
        );
    }
    // extract against the scripted server: bound by the model's latency
    // and each process's requests in flight.
    let docs = env_num("QUARRY_BENCH_DOCS", 200);
    let latency = Duration::from_millis(env_num("QUARRY_BENCH_LATENCY_MS", 200));
    let conc = env_num("QUARRY_BENCH_CONCURRENCY", 8);
    let rt = quarry::process::runtime().expect("a runtime");
    let srv = rt
        .block_on(TestServer::start_with(vec![], latency, false))
        .unwrap();
    let corpus = root.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for d in 0..docs {
        let text: Vec<String> = (0..4)
            .map(|p| format!("Document {d} paragraph {p}. We enrolled {} participants in a randomised trial.", 100 + d + p))
            .collect();
        std::fs::write(corpus.join(format!("doc{d:05}.txt")), text.join("\n\n")).unwrap();
    }
    let proto = root.path().join("protocol.toml");
    std::fs::write(
        &proto,
        "name = \"bench\"\n[[fields]]\nname = \"design\"\ndescription = \"The design\"\n\
         [[fields]]\nname = \"n\"\ndescription = \"Participants\"\ntype = \"integer\"\n\
         [segment]\nmethod = \"paragraph\"\nmax_tokens = 60\noverlap_tokens = 0\n[model]\nname = \"bench\"\n",
    )
    .unwrap();
    std::fs::write(
        &config,
        format!(
            "[models.bench]\ncontext_window = 8192\nmax_output = 1024\nusd_per_1m_in = 0.0\nusd_per_1m_out = 0.0\n\
             [endpoints.default]\nbase_url = \"{}\"\nmax_in_flight = {conc}\ntimeout_seconds = 60\n",
            srv.base_url()
        ),
    )
    .unwrap();
    compare(
        &format!(
            "extract, {docs} docs, {} ms, {conc} in flight",
            latency.as_millis()
        ),
        &format!(
            "SELECT status, count(*) FROM extract('{}/', '{}') GROUP BY status",
            corpus.display(),
            proto.display()
        ),
        &root.path().join("extract"),
        &config,
        &|| {
            format!(
                "{} requests so far, peak {} in flight",
                srv.count(),
                srv.peak_in_flight()
            )
        },
    );
    // Each of the three runs sent the same requests.
    let requests = srv.count() / 3;
    println!(
        "extract's physical limit: {:.2} s for one process ({requests} requests x {} ms / {conc}), half that for two executors",
        requests as f64 * latency.as_secs_f64() / conc as f64,
        latency.as_millis()
    );
    drop(rt);
}
