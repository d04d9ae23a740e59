//! Chunking throughput: quarry's `sentence` and `recursive` segmenters on the
//! bundled example corpus, beside the `text-splitter` crate (the peer) doing
//! the same job (o200k_base tokens, same cap) on the same cleaned text in the
//! same run. Prints MB/s, chunk counts and the largest chunk for each.
//!
//! Run: `cargo bench --bench chunking` (release build). Inputs: every
//! readable file in examples/corpus/, then the 30 trial full texts of
//! ../shared/data/evidence_inference/txt_sample/ (MIT), each ingested with the
//! default cleaners.

mod common;

use std::time::{Duration, Instant};

use quarry::ingest::{ingest_file, Document, IngestSpec, Status};
use quarry::segment::{segment, Method, SegDoc, SegmentSpec};
use quarry_udfs::Tokenizer;
use text_splitter::{ChunkConfig, TextSplitter};

fn corpus(rel: &str) -> Vec<Document> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/corpus")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| ingest_file(&p, &IngestSpec::default()).expect("read"))
        .filter(|d| d.status == Status::Ok)
        .collect()
}

/// Runs `f` over the corpus until at least `min` has passed; returns MB/s and
/// what the last pass produced (chunks, largest chunk in tokens).
fn measure(
    bytes: usize,
    min: Duration,
    mut f: impl FnMut() -> (usize, usize),
) -> (f64, usize, usize) {
    let start = Instant::now();
    let mut passes = 0u32;
    let mut last = (0, 0);
    while start.elapsed() < min || passes < 3 {
        last = f();
        passes += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    (
        bytes as f64 * f64::from(passes) / secs / 1e6,
        last.0,
        last.1,
    )
}

fn main() {
    println!(
        "machine: {} cores, one thread used; command: cargo bench --bench chunking",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    run("examples/corpus");
    match common::shared_data(
        "evidence_inference/txt_sample",
        "the 30 trial full texts of the Evidence Inference 2.0 sample (MIT)",
    ) {
        Some(dir) => run(&dir.display().to_string()),
        None => println!("\nskipped: the Evidence Inference full texts are not here (see above)"),
    }
}

fn run(rel: &str) {
    let docs = corpus(rel);
    let bytes: usize = docs.iter().map(|d| d.text.len()).sum();
    println!(
        "\ninput: {} documents from {rel}/, {:.2} MB of cleaned text",
        docs.len(),
        bytes as f64 / 1e6
    );
    let tk = Tokenizer::O200k;
    let bpe = tiktoken_rs::o200k_base().expect("o200k");
    let min = Duration::from_secs(3);
    println!(
        "{:<34} {:>9} {:>8} {:>11}",
        "job (max_tokens)", "MB/s", "chunks", "max tokens"
    );
    for cap in [120usize, 500] {
        for method in [Method::Sentence, Method::Recursive] {
            let spec = SegmentSpec::new(method, cap);
            let (mbs, n, mx) = measure(bytes, min, || {
                let mut n = 0;
                let mut mx = 0;
                for d in &docs {
                    let s = segment(
                        &SegDoc {
                            text: &d.text,
                            blocks: &d.blocks,
                        },
                        &spec,
                    );
                    n += s.chunks.len();
                    mx = mx.max(s.chunks.iter().map(|c| c.tokens).max().unwrap_or(0));
                }
                (n, mx)
            });
            println!(
                "{:<34} {mbs:>9.2} {n:>8} {mx:>11}",
                format!("quarry {} ({cap})", method.name())
            );
        }
        let splitter = TextSplitter::new(ChunkConfig::new(cap).with_sizer(&bpe));
        let (mbs, n, mx) = measure(bytes, min, || {
            let mut n = 0;
            let mut mx = 0;
            for d in &docs {
                for c in splitter.chunks(&d.text) {
                    n += 1;
                    mx = mx.max(tk.count(c));
                }
            }
            (n, mx)
        });
        println!(
            "{:<34} {mbs:>9.2} {n:>8} {mx:>11}",
            format!("text-splitter TextSplitter ({cap})")
        );
    }
}
