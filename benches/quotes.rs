//! Quote location throughput and agreement: quarry's difflib port against
//! CPython's `difflib` on the same (quote, chunk) pairs in the same run.
//!
//! Pairs: the evidence spans doctors annotated in the Evidence Inference 2.0
//! sample (../shared/data/evidence_inference, MIT), each against windows of
//! its own article (2,000 chars, stride 1,000), as written and in four
//! perturbed copies (last word changed, a digit changed, a word dropped,
//! case and spacing changed), cycled up to QUARRY_BENCH_PAIRS pairs
//! (default 100,000). For each pair both sides compute
//! `find_longest_match` over the whole quote and chunk, align the quote's
//! span in the chunk from it, and score `SequenceMatcher.ratio()` (no
//! autojunk) of the quote against that span. Every span and ratio must agree.
//!
//! Run: `cargo bench --bench quotes` (release; needs python3).

mod common;

use std::io::Write;
use std::time::Instant;

use quarry_udfs::difflib::{find_longest_match, ratio};

const PY: &str = r#"
import difflib, json, sys, time
pairs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
t0 = time.perf_counter()
out = []
for q, c in pairs:
    sm = difflib.SequenceMatcher(None, q, c, autojunk=False)
    i, j, k = sm.find_longest_match(0, len(q), 0, len(c))
    s = max(j - i, 0); e = min(s + len(q), len(c))
    r = difflib.SequenceMatcher(None, q, c[s:e], autojunk=False).ratio()
    out.append((s, e, r))
dt = time.perf_counter() - t0
json.dump({"seconds": dt, "results": out}, sys.stdout)
"#;

fn locate(q: &[char], c: &[char]) -> (usize, usize, f64) {
    let (i, j, _) = find_longest_match(q, c);
    let s = j.saturating_sub(i);
    let e = (s + q.len()).min(c.len());
    (s, e, ratio(q, &c[s..e]))
}

fn perturb(q: &str) -> Vec<String> {
    let words: Vec<&str> = q.split_whitespace().collect();
    let mut out = vec![q.to_string()];
    if words.len() > 2 {
        let mut w = words.clone();
        let last = w.len() - 1;
        w[last] = "whatever";
        out.push(w.join(" "));
        let mut w = words.clone();
        w.remove(words.len() / 2);
        out.push(w.join(" "));
    }
    if let Some(p) = q.find(|c: char| c.is_ascii_digit()) {
        let mut s = q.to_string();
        let d = q.as_bytes()[p];
        s.replace_range(p..p + 1, if d == b'9' { "1" } else { "9" });
        out.push(s);
    }
    out.push(
        q.to_uppercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join("  "),
    );
    out
}

fn main() {
    let n: usize = std::env::var("QUARRY_BENCH_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let Some(root) = common::shared_data(
        "evidence_inference",
        "the Evidence Inference 2.0 sample (v2_annotations.csv and txt_sample/, MIT)",
    ) else {
        std::process::exit(2);
    };
    let mut rdr =
        csv::Reader::from_path(root.join("v2_annotations.csv")).expect("v2_annotations.csv");
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut sources = Vec::new();
    for rec in rdr.records().flatten() {
        let (pmcid, quote) = (
            rec.get(2).unwrap_or_default(),
            rec.get(6).unwrap_or_default(),
        );
        let Ok(article) = std::fs::read_to_string(root.join(format!("txt_sample/PMC{pmcid}.txt")))
        else {
            continue;
        };
        if quote.trim().is_empty() {
            continue;
        }
        let chars: Vec<char> = article.chars().collect();
        let chunks: Vec<String> = (0..chars.len().max(1))
            .step_by(1000)
            .map(|s| chars[s..(s + 2000).min(chars.len())].iter().collect())
            .collect();
        sources.push((perturb(quote), chunks));
    }
    'fill: loop {
        for (quotes, chunks) in &sources {
            for q in quotes {
                for c in chunks {
                    if pairs.len() >= n {
                        break 'fill;
                    }
                    pairs.push((q.clone(), c.clone()));
                }
            }
        }
        if sources.is_empty() {
            break;
        }
    }
    let file =
        std::env::temp_dir().join(format!("quarry-quote-pairs-{}.jsonl", std::process::id()));
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&file).expect("pairs file"));
        for (q, c) in &pairs {
            serde_json::to_writer(&mut f, &(q, c)).expect("write");
            f.write_all(b"\n").expect("write");
        }
    }
    let annotated = sources.len();
    println!("input: {} (quote, chunk) pairs from {annotated} annotated evidence spans of the Evidence Inference sample", pairs.len());
    println!(
        "machine: {} cores, one thread each; command: cargo bench --bench quotes",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );

    let t0 = Instant::now();
    let ours: Vec<(usize, usize, f64)> = pairs
        .iter()
        .map(|(q, c)| {
            locate(
                &q.chars().collect::<Vec<_>>(),
                &c.chars().collect::<Vec<_>>(),
            )
        })
        .collect();
    let rust_s = t0.elapsed().as_secs_f64();

    let py = std::process::Command::new("python3")
        .arg("-c")
        .arg(PY)
        .arg(&file)
        .output()
        .expect("python3");
    let _ = std::fs::remove_file(&file);
    assert!(
        py.status.success(),
        "python: {}",
        String::from_utf8_lossy(&py.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&py.stdout).expect("python output");
    let py_s = v["seconds"].as_f64().unwrap_or(f64::NAN);
    let theirs = v["results"].as_array().expect("results");
    let mut disagree = 0;
    for (o, t) in ours.iter().zip(theirs) {
        let (s, e, r) = (
            t[0].as_u64().unwrap_or(0) as usize,
            t[1].as_u64().unwrap_or(0) as usize,
            t[2].as_f64().unwrap_or(-1.0),
        );
        if o.0 != s || o.1 != e || (o.2 - r).abs() > 1e-12 {
            disagree += 1;
        }
    }
    println!("{:<28} {:>10} {:>14}", "job", "seconds", "pairs/s");
    println!(
        "{:<28} {rust_s:>10.2} {:>14.0}",
        "quarry (Rust difflib port)",
        pairs.len() as f64 / rust_s
    );
    println!(
        "{:<28} {py_s:>10.2} {:>14.0}",
        "CPython difflib",
        pairs.len() as f64 / py_s
    );
    println!(
        "speed-up: {:.1}x; spans and ratios that disagree: {disagree} of {}",
        py_s / rust_s,
        pairs.len()
    );
    assert_eq!(disagree, 0, "quarry and difflib disagree");
}
