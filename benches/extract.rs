//! extract(src, protocol) over a generated corpus against quarry's scripted
//! server at a fixed latency: wall time as a fraction of the physical limit
//! (requests x latency / concurrency), quarry's CPU seconds per chunk, and
//! peak memory at two corpus sizes (it should not grow with the corpus).
//!
//! Run: `cargo bench --bench extract`. Environment: `QUARRY_BENCH_DOCS`
//! (comma-separated sizes, default "250,1000"), `QUARRY_BENCH_LATENCY_MS`
//! (default 200), `QUARRY_BENCH_CONCURRENCY` (default 64). Peak RSS is the
//! process's high-water mark so far: run one size per process
//! (`QUARRY_BENCH_DOCS=2000`) to read each size's own peak.

use std::time::{Duration, Instant};

use quarry::model::test_server::TestServer;

fn proc_status(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// User + system CPU seconds of this process so far.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = after
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the ')'.
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const SENTENCES: &[&str] = &[
    "Participants were recruited from outpatient clinics between 2015 and 2018.",
    "Randomisation used computer-generated blocks stratified by site and sex.",
    "The primary outcome was the change in systolic blood pressure at twelve weeks.",
    "Adverse events were recorded at every visit by staff unaware of allocation.",
    "Analysis followed the intention-to-treat principle with multiple imputation.",
];

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let sizes: Vec<u64> = std::env::var("QUARRY_BENCH_DOCS")
        .unwrap_or_else(|_| "250,1000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let latency = Duration::from_millis(env_num("QUARRY_BENCH_LATENCY_MS", 200));
    let conc = env_num("QUARRY_BENCH_CONCURRENCY", 64);
    println!(
        "extract() throughput: scripted server on 127.0.0.1, latency {} ms, max_in_flight {conc}, {} cores",
        latency.as_millis(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("corpus: generated .txt files of 10 paragraphs (~45 tokens each), paragraph chunks of at most 60 tokens, 3 fields");
    println!(
        "{:>6} {:>7} {:>9} {:>9} {:>9} {:>12} {:>13}",
        "docs", "chunks", "seconds", "limit s", "of limit", "CPU ms/chunk", "peak RSS MiB"
    );
    for &n in &sizes {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus");
        std::fs::create_dir(&corpus).unwrap();
        for d in 0..n {
            let text: Vec<String> = (0..10)
                .map(|p| {
                    let a = SENTENCES[(d as usize + p) % SENTENCES.len()];
                    let b = SENTENCES[(d as usize + p + 2) % SENTENCES.len()];
                    format!("Document {d} paragraph {p}. {a} {b}")
                })
                .collect();
            std::fs::write(corpus.join(format!("doc{d:05}.txt")), text.join("\n\n")).unwrap();
        }
        let proto = dir.path().join("protocol.toml");
        std::fs::write(
            &proto,
            "name = \"bench\"\n[[fields]]\nname = \"design\"\ndescription = \"The design\"\n\
             [[fields]]\nname = \"n\"\ndescription = \"Participants\"\ntype = \"integer\"\n\
             [[fields]]\nname = \"outcome\"\ndescription = \"The primary outcome\"\n\
             [segment]\nmethod = \"paragraph\"\nmax_tokens = 60\noverlap_tokens = 0\n[model]\nname = \"bench\"\n",
        )
        .unwrap();
        let srv = TestServer::start_with(vec![], latency, false)
            .await
            .unwrap();
        let ctx = quarry::model::test_server::session_in(dir.path(), &format!(
                "[models.bench]\ncontext_window = 8192\nmax_output = 1024\nusd_per_1m_in = 0.0\nusd_per_1m_out = 0.0\n\
                 [endpoints.default]\nbase_url = \"{}\"\nmax_in_flight = {conc}\ntimeout_seconds = 60\n",
                srv.base_url()
            )).unwrap();
        let q = format!(
            "SELECT count(*) AS docs, sum(n_filled) AS filled FROM extract('{}', '{}')",
            corpus.display(),
            proto.display()
        );
        let cpu0 = cpu_seconds();
        let t0 = Instant::now();
        let b = ctx.sql(&q).await.unwrap().collect().await.unwrap();
        let secs = t0.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        let docs = b[0]
            .column(0)
            .as_any()
            .downcast_ref::<datafusion::arrow::array::Int64Array>()
            .unwrap()
            .value(0);
        assert_eq!(docs as u64, n, "every document has a row");
        let chunks = srv.count();
        let limit = chunks as f64 * latency.as_secs_f64() / conc as f64;
        println!(
            "{n:>6} {chunks:>7} {secs:>9.2} {limit:>9.2} {:>8.1}% {:>12.2} {:>13.1}",
            100.0 * limit / secs,
            1000.0 * cpu / chunks as f64,
            proc_status("VmHWM:")
        );
    }
}
