//! `quarry report` over a generated store at two corpus sizes: the time to
//! write the page and its size, beside a peer measured in the same run:
//! reading the tables the page is made from (`SELECT *` of `extraction`,
//! `evidence` and `calls`, collected) and their size in the store.
//!
//! The store is made by `extract(...)` over generated `.txt` documents
//! against quarry's scripted server (no latency): one chunk and one
//! request per document, two fields each with a verbatim quote; every
//! fiftieth document gets a paraphrased quote (unverified, flagged), and every
//! fiftieth is a corrupt PDF (a failed row). So the page has flagged rows
//! to put first, quotes to show in their documents, and more rows than a
//! section holds (1,000).
//!
//! Run: `cargo bench --bench report`. Environment: `QUARRY_BENCH_DOCS`
//! (comma-separated sizes, default "1000,10000"). Peak RSS is the
//! process's high-water mark so far (the store's making included): run
//! one size per process to read each size's own.

use std::time::{Duration, Instant};

mod common;

use common::proc_status;
use quarry::model::test_server::{Action, Rule, TestServer};

/// On the runtime the `quarry` command uses.
fn main() {
    quarry::process::runtime()
        .expect("a tokio runtime")
        .block_on(bench());
}

const DESIGN: &str = "Randomisation used computer-generated blocks stratified by site and sex.";
const N: &str = "We enrolled 120 participants from outpatient clinics.";

async fn bench() {
    let sizes: Vec<u64> = std::env::var("QUARRY_BENCH_DOCS")
        .unwrap_or_else(|_| "1000,10000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    println!(
        "quarry report over a generated store: {} cores; documents of 3 paragraphs, 1 chunk and 2 quoted values each",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("(every 50th document's quote paraphrased, another 50th a corrupt PDF; peer: SELECT * of the tables the page reads)");
    println!(
        "{:>6} {:>7} {:>9} {:>10} {:>9} {:>11} {:>10} {:>11} {:>13}",
        "docs",
        "values",
        "setup s",
        "report s",
        "page MiB",
        "tables read",
        "SELECT* s",
        "tables MiB",
        "peak RSS MiB"
    );
    for &n in &sizes {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus");
        std::fs::create_dir(&corpus).unwrap();
        for d in 0..n {
            if d % 50 == 49 {
                std::fs::write(corpus.join(format!("doc{d:05}.pdf")), b"%PDF-1.7 cut short")
                    .unwrap();
                continue;
            }
            let variant = if d % 50 == 3 { " Variant arm." } else { "" };
            let text = format!(
                "Trial {d} of spaced practice.{variant} The primary outcome was retention at twelve weeks.\n\n\
                 {DESIGN} Allocation was concealed from the assessors.\n\n\
                 {N} Analysis followed the intention-to-treat principle."
            );
            std::fs::write(corpus.join(format!("doc{d:05}.txt")), text).unwrap();
        }
        let proto = dir.path().join("protocol.toml");
        std::fs::write(
            &proto,
            "name = \"bench\"\n[[fields]]\nname = \"design\"\ndescription = \"The design\"\n\
             [[fields]]\nname = \"n\"\ndescription = \"Participants\"\ntype = \"integer\"\n\
             [segment]\nmethod = \"paragraph\"\nmax_tokens = 400\noverlap_tokens = 0\n[model]\nname = \"bench\"\n",
        )
        .unwrap();
        let good = serde_json::json!({"design": "computer-generated blocks", "design__quote": DESIGN, "n": 120, "n__quote": N});
        let paraphrased = serde_json::json!({"design": "blocks by site", "design__quote": "Randomised in blocks by site.", "n": 120, "n__quote": N});
        let rules = vec![
            Rule {
                needle: "Variant arm.".into(),
                actions: vec![Action::Reply(paraphrased.to_string())],
            },
            Rule {
                needle: String::new(),
                actions: vec![Action::Reply(good.to_string())],
            },
        ];
        let srv = TestServer::start_with(rules, Duration::ZERO, false)
            .await
            .unwrap();
        let ctx = quarry::model::test_server::session_in(
            dir.path(),
            &format!(
                "[models.bench]\ncontext_window = 8192\nmax_output = 1024\nusd_per_1m_in = 0.5\nusd_per_1m_out = 1.5\n\
                 [endpoints.default]\nbase_url = \"{}\"\nmax_in_flight = 64\ntimeout_seconds = 60\n",
                srv.base_url()
            ),
        )
        .unwrap();
        let t0 = Instant::now();
        ctx.sql(&format!(
            "SELECT count(*) FROM extract('{}', '{}')",
            corpus.display(),
            proto.display()
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
        let setup = t0.elapsed().as_secs_f64();
        drop(ctx);
        // A new session over the store, as `quarry report` opens it.
        let store = dir.path().join("store").display().to_string();
        let ctx = quarry::session(&quarry::Settings {
            store: Some(store.clone()),
            ..Default::default()
        })
        .unwrap();
        let t0 = Instant::now();
        let (html, s) = quarry::report::render(&ctx, &store, &Default::default())
            .await
            .unwrap();
        let report = t0.elapsed().as_secs_f64();
        assert_eq!(s.documents, n, "every document is on the page");
        std::fs::write(dir.path().join("report.html"), &html).unwrap();
        // The peer: the rows the page is made from, read whole.
        let t0 = Instant::now();
        let mut read = 0usize;
        for t in ["extraction", "evidence", "calls"] {
            let b = ctx
                .sql(&format!("SELECT * FROM {t}"))
                .await
                .unwrap()
                .collect()
                .await
                .unwrap();
            read += b.iter().map(|b| b.num_rows()).sum::<usize>();
        }
        let select = t0.elapsed().as_secs_f64();
        let tables: u64 = common::walk(&dir.path().join("store/tables"))
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        println!(
            "{n:>6} {:>7} {setup:>9.2} {report:>10.2} {:>9.2} {read:>11} {select:>10.2} {:>11.2} {:>13.1}",
            s.values,
            html.len() as f64 / (1024.0 * 1024.0),
            tables as f64 / (1024.0 * 1024.0),
            proc_status("VmHWM:")
        );
        println!(
            "        on the page: {} documents ({} failed), {} values ({} unverified), {} requests; sections capped at {} rows",
            s.documents,
            s.failed,
            s.values,
            s.unverified,
            s.calls,
            quarry::report::LIMIT
        );
    }
}
