//! Throughput of `llm()` in SQL against quarry's scripted OpenAI-compatible
//! server on 127.0.0.1 at a fixed latency: achieved requests/second as a
//! fraction of the limit `concurrency / latency`, and peak memory.
//!
//! Run: `cargo bench --bench llm` (release). Environment:
//! `QUARRY_BENCH_LLM_N` (requests per run, default 5000),
//! `QUARRY_BENCH_LLM_N1` (requests at concurrency 1, default 100: 5,000
//! sequential requests at 200 ms would take 17 minutes),
//! `QUARRY_BENCH_LLM_LATENCY_MS` (default 200).

use std::time::{Duration, Instant};

mod common;

use common::{env_num, proc_status};
use quarry::model::test_server::TestServer;

/// On the runtime the `quarry` command uses.
fn main() {
    quarry::process::runtime()
        .expect("a tokio runtime")
        .block_on(bench());
}

async fn bench() {
    let n = env_num("QUARRY_BENCH_LLM_N", 5000);
    let n1 = env_num("QUARRY_BENCH_LLM_N1", 100);
    let latency = Duration::from_millis(env_num("QUARRY_BENCH_LLM_LATENCY_MS", 200));
    println!(
        "llm() throughput: scripted server on 127.0.0.1, fixed latency {} ms, {} cores",
        latency.as_millis(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("query: SELECT count(llm('prompt ' || value)) FROM generate_series(1, N); store on local disk (trace + cache written)");
    println!(
        "{:>11} {:>6} {:>9} {:>9} {:>9} {:>8} {:>9} {:>13}",
        "concurrency", "N", "seconds", "req/s", "limit", "of limit", "peak in", "peak RSS MiB"
    );
    for c in [1usize, 16, 128] {
        let n = if c == 1 { n1 } else { n };
        let srv = TestServer::start_with(vec![], latency, false)
            .await
            .expect("server");
        let dir = tempfile::tempdir().unwrap();
        let ctx = quarry::model::test_server::session_in(dir.path(), &format!(
                "[model]\nname = \"bench\"\n[models.bench]\ncontext_window = 8192\nmax_output = 1024\n\
                 usd_per_1m_in = 0.0\nusd_per_1m_out = 0.0\n[endpoints.default]\nbase_url = \"{}\"\n\
                 max_in_flight = {c}\ntimeout_seconds = 30\n",
                srv.base_url()
            )).unwrap();
        let q = format!("SELECT count(llm('prompt ' || value)) AS n FROM generate_series(1, {n})");
        let t0 = Instant::now();
        let b = ctx.sql(&q).await.unwrap().collect().await.unwrap();
        let secs = t0.elapsed().as_secs_f64();
        let answered = b[0]
            .column(0)
            .as_any()
            .downcast_ref::<datafusion::arrow::array::Int64Array>()
            .unwrap()
            .value(0);
        assert_eq!(answered as u64, n, "every request answered");
        assert_eq!(srv.count() as u64, n);
        let rps = n as f64 / secs;
        let limit = c as f64 / latency.as_secs_f64();
        println!(
            "{c:>11} {n:>6} {secs:>9.2} {rps:>9.1} {limit:>9.1} {:>7.1}% {:>9} {:>13.1}",
            100.0 * rps / limit,
            srv.peak_in_flight(),
            proc_status("VmHWM:")
        );
    }
}
