//! claims(src, spec) over a generated corpus against quarry's scripted
//! server at a fixed latency: wall time as a fraction of the physical limit
//! (requests x latency / concurrency), quarry's CPU seconds per chunk, peak
//! memory, and what the run leaves in the store: the claims table's commits
//! and files (Delta Lake: data, change-feed and log files) beside the run
//! results kept per document.
//!
//! Every chunk's reply holds two drafts: one grounded measurement (a claim)
//! and one whose quote the chunk does not have (a rejection), so both paths
//! run at scale and the counts are checked.
//!
//! Run: `cargo bench --bench claims`. Environment: `QUARRY_BENCH_DOCS`
//! (comma-separated sizes, default "1000"), `QUARRY_BENCH_LATENCY_MS`
//! (default 200), `QUARRY_BENCH_CONCURRENCY` (default 64). Peak RSS is the
//! process's high-water mark so far: run one size per process to read each
//! size's own peak.

use std::time::{Duration, Instant};

mod common;

use common::{cpu_seconds, env_num, files, proc_status};
use quarry::model::test_server::{Action, Rule, TestServer};

const FILLER: &[&str] = &[
    "The images were taken over four nights with the Dragonfly Telephoto Array.",
    "Background subtraction used a model of the sky fitted to masked frames.",
    "Point sources were masked before the surface brightness profile was fitted.",
];

const MEASURED: &str = "The galaxy has an effective radius of 2.8 kpc in the g band.";

/// On the runtime the `quarry` command uses.
fn main() {
    quarry::process::runtime()
        .expect("a tokio runtime")
        .block_on(bench());
}

async fn bench() {
    let sizes: Vec<u64> = std::env::var("QUARRY_BENCH_DOCS")
        .unwrap_or_else(|_| "1000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let latency = Duration::from_millis(env_num("QUARRY_BENCH_LATENCY_MS", 200));
    let conc = env_num("QUARRY_BENCH_CONCURRENCY", 64);
    println!(
        "claims() throughput: scripted server on 127.0.0.1, latency {} ms, max_in_flight {conc}, {} cores",
        latency.as_millis(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("corpus: generated .txt files of 4 paragraphs (~40 tokens each), paragraph chunks of at most 60 tokens; each reply 1 claim + 1 rejection");
    println!(
        "{:>6} {:>7} {:>9} {:>9} {:>9} {:>12} {:>13} | {:>7} {:>10} {:>9} {:>9} {:>12}",
        "docs",
        "chunks",
        "seconds",
        "limit s",
        "of limit",
        "CPU ms/chunk",
        "peak RSS MiB",
        "commits",
        "data files",
        "cdc files",
        "log files",
        "run files"
    );
    let reply = serde_json::json!({"claims": [
        {"kind": "measurement", "subject": "the galaxy", "predicate": "effective_radius",
         "quantity": {"verbatim": "2.8 kpc", "value": 2.8, "unit_text": "kpc"}, "context": {"band": "g"},
         "quote": MEASURED},
        {"kind": "measurement", "subject": "the galaxy", "predicate": "stellar_mass",
         "quantity": {"verbatim": "3e8"}, "quote": "Its stellar mass is 3e8 solar masses."}]})
    .to_string();
    for &n in &sizes {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus");
        std::fs::create_dir(&corpus).unwrap();
        for d in 0..n {
            let text: Vec<String> = (0..4)
                .map(|p| {
                    let a = FILLER[(d as usize + p) % FILLER.len()];
                    format!("Galaxy {d}, field {p}. {a} {MEASURED}")
                })
                .collect();
            std::fs::write(corpus.join(format!("g{d:05}.txt")), text.join("\n\n")).unwrap();
        }
        let spec = dir.path().join("claims.toml");
        std::fs::write(
            &spec,
            "name = \"bench\"\ninstructions = \"List every measurement of a galaxy.\"\nkinds = [\"measurement\"]\n\
             [segment]\nmethod = \"paragraph\"\nmax_tokens = 60\noverlap_tokens = 0\n[model]\nname = \"bench\"\n",
        )
        .unwrap();
        let srv = TestServer::start_with(
            vec![Rule {
                needle: String::new(),
                actions: vec![Action::Reply(reply.clone())],
            }],
            latency,
            false,
        )
        .await
        .unwrap();
        let ctx = quarry::model::test_server::session_in(dir.path(), &format!(
                "[models.bench]\ncontext_window = 8192\nmax_output = 1024\nusd_per_1m_in = 0.0\nusd_per_1m_out = 0.0\n\
                 [endpoints.default]\nbase_url = \"{}\"\nmax_in_flight = {conc}\ntimeout_seconds = 60\n",
                srv.base_url()
            )).unwrap();
        let q = format!(
            "SELECT count(*) AS claims, count(DISTINCT document_id) AS docs FROM claims('{}', '{}')",
            corpus.display(),
            spec.display()
        );
        let cpu0 = cpu_seconds();
        let t0 = Instant::now();
        let b = ctx.sql(&q).await.unwrap().collect().await.unwrap();
        let secs = t0.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        let int = |c: usize| {
            b[0].column(c)
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
                .unwrap()
                .value(0) as u64
        };
        let chunks = srv.count();
        assert_eq!(int(0), chunks as u64, "one claim per chunk");
        assert_eq!(int(1), n, "every document has its claims");
        let stored = ctx
            .sql("SELECT (SELECT count(*) FROM claims) AS c, (SELECT count(*) FROM rejections) AS r, (SELECT count(DISTINCT revision) FROM claims) AS v")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let col = |c: usize| {
            stored[0]
                .column(c)
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
                .unwrap()
                .value(0) as u64
        };
        assert_eq!(
            (col(0), col(1)),
            (chunks as u64, chunks as u64),
            "the store holds every claim and rejection"
        );
        let table = dir.path().join("store/tables/claims");
        let limit = chunks as f64 * latency.as_secs_f64() / conc as f64;
        println!(
            "{n:>6} {chunks:>7} {secs:>9.2} {limit:>9.2} {:>8.1}% {:>12.2} {:>13.1} | {:>7} {:>10} {:>9} {:>9} {:>12}",
            100.0 * limit / secs,
            1000.0 * cpu / chunks as f64,
            proc_status("VmHWM:"),
            files(&table.join("_delta_log"), ".json"),
            files(&table, "part-") - files(&table.join("_change_data"), "part-"),
            files(&table.join("_change_data"), ""),
            files(&table.join("_delta_log"), ""),
            files(&dir.path().join("store/tables/runs"), ".parquet"),
        );
    }
    println!("commits: the claims table's log entries (one per window of documents, plus compactions); run files: the data files of the run's own tables (tables/runs/: its rows and the ledger of finished documents, kept for resume)");
}
