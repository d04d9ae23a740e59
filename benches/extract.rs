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

mod common;

use common::{cpu_seconds, env_num, proc_status};
use quarry::model::test_server::TestServer;

const SENTENCES: &[&str] = &[
    "Participants were recruited from outpatient clinics between 2015 and 2018.",
    "Randomisation used computer-generated blocks stratified by site and sex.",
    "The primary outcome was the change in systolic blood pressure at twelve weeks.",
    "Adverse events were recorded at every visit by staff unaware of allocation.",
    "Analysis followed the intention-to-treat principle with multiple imputation.",
];

/// On the runtime the `quarry` command uses.
fn main() {
    quarry::process::runtime()
        .expect("a tokio runtime")
        .block_on(bench());
}

async fn bench() {
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
        println!(
            "        files in the store: {}",
            store_files(&dir.path().join("store"))
        );
        let store =
            quarry::store::Store::open(&dir.path().join("store").display().to_string()).unwrap();
        let mut current = Vec::new();
        for (name, rel) in [
            (
                "extraction",
                format!(
                    "tables/extraction/{}",
                    protocol_dir(&dir.path().join("store"))
                ),
            ),
            ("evidence", "tables/evidence".into()),
            ("ledger", "tables/runs/ledger".into()),
            ("calls", "tables/calls".into()),
        ] {
            let t = quarry::store::delta::Delta::new(&store, &rel, name).unwrap();
            current.push(format!("{name} {}", t.current_files().await.unwrap()));
        }
        println!(
            "        data files of each table's latest version: {}",
            current.join(", ")
        );
        if std::env::var_os("QUARRY_BENCH_KEEP").is_some() {
            println!("        kept: {}", dir.keep().display());
        }
    }
    println!("files: by folder of the store (tables/<name> are Delta Lake tables: data files and _delta_log entries; cache the response cache and ingest the parsed documents, packs and their indexes plus single files not yet packed)");
}

/// The one protocol folder under `tables/extraction/`.
fn protocol_dir(store: &std::path::Path) -> String {
    std::fs::read_dir(store.join("tables/extraction"))
        .unwrap()
        .flatten()
        .find(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .unwrap_or_default()
}

/// Files in the store by folder (`tables/<name>` counted apart).
fn store_files(store: &std::path::Path) -> String {
    let mut by: std::collections::BTreeMap<String, usize> = Default::default();
    for p in common::walk(store) {
        let rel = p.strip_prefix(store).unwrap().to_string_lossy().to_string();
        let parts: Vec<&str> = rel.split('/').collect();
        let key = match parts.as_slice() {
            ["tables", "runs", t, ..] => format!("tables/runs/{t}"),
            ["tables", t, rest @ ..] if !rest.is_empty() => format!("tables/{t}"),
            [one, _, ..] => one.to_string(),
            _ => "(top)".into(),
        };
        *by.entry(key).or_default() += 1;
    }
    by.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}
