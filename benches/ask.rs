//! `ask` with `map_reduce` over a corpus against quarry's scripted
//! OpenAI-compatible server on 127.0.0.1 at a fixed latency: wall time as a
//! fraction of the physical limit, the peak requests in flight, peak memory.
//!
//! The limit: a document's reduce can only start when its maps have
//! answered, so each document's critical path is (1 + reduce levels) x
//! latency; with `C` requests in flight the whole run also needs at least
//! `requests x latency / C`. The limit is the larger of the two (here the
//! second: 1,000 documents of 4 chunks are 5,000 requests).
//!
//! Two passes: through the run engine (a store, as `quarry sql` has:
//! windows, rows kept per document), then `engine=false` (one stream).
//!
//! Run: `cargo bench --bench ask` (release). Environment:
//! `QUARRY_BENCH_ASK_DOCS` (default 1000), `QUARRY_BENCH_ASK_IN_FLIGHT`
//! (default 64), `QUARRY_BENCH_ASK_LATENCY_MS` (default 200).

use std::time::{Duration, Instant};

mod common;

use common::{env_num, proc_status};
use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int64Type;
use quarry::model::test_server::TestServer;

fn main() {
    quarry::process::runtime()
        .expect("a tokio runtime")
        .block_on(bench());
}

async fn bench() {
    let docs = env_num("QUARRY_BENCH_ASK_DOCS", 1000);
    let c = env_num("QUARRY_BENCH_ASK_IN_FLIGHT", 64) as usize;
    let latency = Duration::from_millis(env_num("QUARRY_BENCH_ASK_LATENCY_MS", 200));
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    for i in 0..docs {
        let text = format!(
            "Report {i}. The trial ran in {} hospitals.\n\nIn all, {} adults were randomised in study {i}.\n\nRetention in study {i} was measured at {} weeks.\n\nStudy {i} was funded by grant {}.\n",
            2 + i % 5,
            100 + i,
            4 + i % 9,
            7000 + i
        );
        std::fs::write(corpus.join(format!("r{i:04}.txt")), text).unwrap();
    }
    let srv = TestServer::start_with(vec![], latency, false)
        .await
        .expect("server");
    // The run engine a store gives (what `quarry sql` runs), then the
    // direct stream, each over a store of its own (no cache shared).
    for engine in [true, false] {
        let store = tempfile::tempdir().unwrap();
        let ctx = quarry::model::test_server::session_in(
            store.path(),
            &format!(
                "[model]\nname = \"bench\"\n[models.bench]\ncontext_window = 8192\nmax_output = 256\n\
                 usd_per_1m_in = 0.0\nusd_per_1m_out = 0.0\n[endpoints.default]\nbase_url = \"{}\"\n\
                 max_in_flight = {c}\ntimeout_seconds = 60\n",
                srv.base_url()
            ),
        )
        .unwrap();
        let q = format!(
            "SELECT count(*) AS docs, sum(calls) AS calls, sum(chunks) AS chunks, count(*) FILTER (WHERE partial) AS partial \
             FROM ask('{}', 'How many adults were randomised?', 'reader=map_reduce, max_tokens=20{}')",
            corpus.display(),
            if engine { "" } else { ", engine=false" }
        );
        if engine {
            println!(
            "ask(map_reduce) over {docs} documents: scripted server on 127.0.0.1, fixed latency {} ms, {c} requests in flight, {} cores; store on local disk (trace + cache written)",
            latency.as_millis(),
            std::thread::available_parallelism().map_or(0, |n| n.get())
        );
        }
        println!(
            "{}: {q}",
            if engine {
                "run engine (windows, rows kept in the store)"
            } else {
                "engine=false (one stream, nothing kept)"
            }
        );
        let sent = srv.count();
        let t0 = Instant::now();
        let b: Vec<RecordBatch> = ctx.sql(&q).await.unwrap().collect().await.unwrap();
        let secs = t0.elapsed().as_secs_f64();
        let get = |i: usize| b[0].column(i).as_primitive::<Int64Type>().value(0);
        let (n, calls, chunks, partial) = (get(0), get(1), get(2), get(3));
        assert_eq!(n as u64, docs, "a row per document");
        assert_eq!(
            (srv.count() - sent) as i64,
            calls,
            "every request sent once"
        );
        let lat = latency.as_secs_f64();
        // Maps then one reduce level (4 short answers fit one request).
        let critical = 2.0 * lat;
        let throughput = calls as f64 * lat / c as f64;
        let limit = critical.max(throughput);
        println!(
            "{:>6} {:>7} {:>7} {:>8} {:>9} {:>9} {:>9} {:>8} {:>13}",
            "docs",
            "chunks",
            "calls",
            "partial",
            "seconds",
            "limit s",
            "of limit",
            "peak in",
            "peak RSS MiB"
        );
        println!(
            "{n:>6} {chunks:>7} {calls:>7} {partial:>8} {secs:>9.2} {limit:>9.2} {:>7.1}% {:>8} {:>13.1}",
            100.0 * limit / secs,
            srv.peak_in_flight(),
            proc_status("VmHWM:")
        );
        println!(
            "limit = max(critical path {critical:.2} s = (map + reduce) x latency, {calls} requests x latency / {c} in flight = {throughput:.2} s)"
        );
    }
}
