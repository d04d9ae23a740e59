//! Importing and deduplicating reference-manager exports: quarry's
//! `records(...)` beside the Python `rispy` parser (plus a dictionary
//! dedup by normalised DOI, the least a script would do) on the same RIS
//! files, in the same run: records per second and peak memory (each tool
//! run as its own process under GNU time, whose `%M` is the peak resident
//! set).
//!
//! Input: RIS generated from the titles, authors, years and abstract
//! openings of the four Cohen et al. (2006) reviews in
//! `../shared/data/screening/asreview_legacy_cohen2006/` (1,881 records,
//! repeated with a suffix to reach the size), with every 10th record a copy
//! of an earlier one under a DOI spelled another way (`https://doi.org/`,
//! upper case) and every 20th a copy with no DOI and the same title and
//! year. Written as exports of 10,000 records (as databases export in
//! chunks), at 25,000, 50,000 and 100,000 records (`QUARRY_BENCH_RECORDS`
//! sets the largest), and once as one export of the largest size.
//!
//! Each tool runs three times on each input (after one run of each on the
//! smallest, so that neither pays for loading its program from disk) and
//! the run with the median time is reported. quarry runs twice a size:
//! the dedup counts (two columns), and the same with the titles, abstracts
//! and authors read too (rispy makes every field of every record).
//!
//! Run: `cargo bench --bench records` (release). Needs a Python with
//! `rispy` 0.10 (`$QUARRY_VENV/bin/python`, else `python3`).
//! `QUARRY_BENCH_KEEP=1` keeps the exports (the folder is printed).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

struct Base {
    title: String,
    authors: Vec<String>,
    year: String,
    abstract_start: String,
}

fn bases(dir: &Path) -> Vec<Base> {
    let mut out = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("cohen dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    names.sort();
    for p in names {
        let mut r = csv::Reader::from_path(&p).expect("csv");
        for row in r.deserialize::<std::collections::HashMap<String, String>>() {
            let m = row.expect("row");
            out.push(Base {
                title: m["title"].trim().to_string(),
                authors: m["authors"]
                    .split(';')
                    .map(|a| a.trim().to_string())
                    .filter(|a| !a.is_empty())
                    .collect(),
                year: m["year"].trim().to_string(),
                abstract_start: m["abstract"]
                    .chars()
                    .take(300)
                    .collect::<String>()
                    .replace('\n', " "),
            });
        }
    }
    out
}

/// Writes `n` records as exports of `per` records into `dir`; returns the
/// number of duplicates written.
fn write_exports(bases: &[Base], n: usize, per: usize, dir: &Path) -> usize {
    std::fs::create_dir_all(dir).expect("dir");
    let mut dups = 0;
    let mut f: Option<std::io::BufWriter<std::fs::File>> = None;
    for i in 0..n {
        if i % per == 0 {
            f = Some(std::io::BufWriter::new(
                std::fs::File::create(dir.join(format!("export_{:04}.ris", i / per)))
                    .expect("create"),
            ));
        }
        let w = f.as_mut().expect("file");
        // Every 10th repeats record i-5 under another DOI spelling; every
        // 20th (7 mod 20) repeats i-3 with no DOI.
        let (src, doi) = if i % 10 == 9 {
            dups += 1;
            (
                i - 5,
                Some(format!("https://doi.org/10.5555/COHEN.{}", i - 5)),
            )
        } else if i % 20 == 7 {
            dups += 1;
            (i - 3, None)
        } else {
            (i, Some(format!("10.5555/cohen.{i}")))
        };
        let b = &bases[src % bases.len()];
        let round = src / bases.len();
        writeln!(w, "TY  - JOUR").unwrap();
        for a in &b.authors {
            writeln!(w, "AU  - {a}").unwrap();
        }
        writeln!(w, "TI  - {} (record {src}, round {round})", b.title).unwrap();
        writeln!(w, "PY  - {}", b.year).unwrap();
        if let Some(d) = doi {
            writeln!(w, "DO  - {d}").unwrap();
        }
        writeln!(w, "AB  - {}", b.abstract_start).unwrap();
        writeln!(w, "DB  - Generated\nER  - \n").unwrap();
    }
    dups
}

/// Runs `cmd` three times under GNU time, returning the stdout, wall
/// seconds and peak resident set (MiB) of the run with the median time.
fn measured(cmd: &mut Command) -> (String, f64, f64) {
    let mut runs: Vec<(String, f64, f64)> = (0..3).map(|_| measured_once(cmd)).collect();
    runs.sort_by(|a, b| a.1.total_cmp(&b.1));
    runs.swap_remove(1)
}

/// Runs `cmd` under GNU time (`/usr/bin/time -f %M`), returning its
/// stdout, wall seconds and peak resident set (MiB).
fn measured_once(cmd: &mut Command) -> (String, f64, f64) {
    let t = Instant::now();
    let out = cmd
        .output()
        .expect("run (needs /usr/bin/time: Debian package time)");
    let secs = t.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{cmd:?} failed: {stderr}");
    let kib: f64 = stderr
        .lines()
        .rev()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or(f64::NAN);
    (stdout, secs, kib / 1024.0)
}

fn main() {
    let Some(dir) = common::shared_data(
        "screening/asreview_legacy_cohen2006",
        "the Cohen 2006 screening records",
    ) else {
        return;
    };
    let bases = bases(&dir);
    let largest: usize = std::env::var("QUARRY_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let python = std::env::var("QUARRY_VENV")
        .map(|v| format!("{v}/bin/python"))
        .unwrap_or_else(|_| "python3".into());
    let quarry = PathBuf::from(env!("CARGO_BIN_EXE_quarry"));
    let tmp = tempfile::tempdir().expect("tempdir");
    if std::env::var_os("QUARRY_BENCH_KEEP").is_some() {
        println!("keeping the exports in {}", tmp.path().display());
    }
    let script = tmp.path().join("rispy_dedup.py");
    std::fs::write(
        &script,
        r#"import sys, os, rispy
n = dups = 0
seen = set()
for name in sorted(os.listdir(sys.argv[1])):
    with open(os.path.join(sys.argv[1], name), encoding="utf-8") as f:
        for r in rispy.load(f):
            n += 1
            d = (r.get("doi") or "").lower().replace("https://doi.org/", "").strip()
            if d and d in seen:
                dups += 1
            elif d:
                seen.add(d)
print(n, dups)
"#,
    )
    .expect("script");
    println!(
        "records: {} base records from the Cohen 2006 reviews; machine: {} cores",
        bases.len(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:>9} {:>8} {:>7} | {:>12} {:>9} {:>9} | {:>12} {:>9} {:>9} | {:>7} | {:>8} {:>7}",
        "records",
        "exports",
        "dups",
        "quarry rec/s",
        "s",
        "peak MiB",
        "rispy rec/s",
        "s",
        "peak MiB",
        "speed x",
        "all s",
        "all x"
    );
    let mut sizes: Vec<(usize, usize)> = [25_000, 50_000, 100_000]
        .into_iter()
        .filter(|&n| n < largest)
        .map(|n| (n, 10_000))
        .collect();
    sizes.push((largest, 10_000));
    sizes.push((largest, largest));
    // The dedup counts (two columns read), and the same with the titles,
    // abstracts and authors read too (rispy makes every field of every record).
    let quarry_query = |d: &Path, all: bool| {
        let extra = if all {
            ", sum(length(title)) AS t, sum(length(abstract)) AS a, sum(cardinality(authors)) AS au"
        } else {
            ""
        };
        let q = format!(
            "SELECT count(*) AS n, count(duplicate_of) AS dups{extra} FROM records('{}/')",
            d.display()
        );
        let mut c = Command::new("/usr/bin/time");
        c.args(["-f", "%M"])
            .arg(&quarry)
            .args(["sql", "--no-store", "--format", "csv", "-c", &q]);
        c
    };
    let quarry_on = |d: &Path| quarry_query(d, false);
    let rispy_on = |d: &Path| {
        let mut c = Command::new("/usr/bin/time");
        c.args(["-f", "%M"]).arg(&python).arg(&script).arg(d);
        c
    };
    let mut warm = true;
    for (n, per) in sizes {
        let d = tmp.path().join(format!("ris_{n}_{per}"));
        let dups = write_exports(&bases, n, per, &d);
        if std::mem::take(&mut warm) {
            measured_once(&mut quarry_on(&d));
            measured_once(&mut rispy_on(&d));
        }
        let (qout, qs, qmem) = measured(&mut quarry_on(&d));
        let (_, fs, _) = measured(&mut quarry_query(&d, true));
        let (pout, ps, pmem) = measured(&mut rispy_on(&d));
        let qn: Vec<&str> = qout.lines().nth(1).unwrap_or_default().split(',').collect();
        let pn: Vec<&str> = pout.split_whitespace().collect();
        assert_eq!(
            qn.first().copied(),
            Some(n.to_string().as_str()),
            "quarry counted {qout}"
        );
        assert_eq!(
            pn.first().copied(),
            Some(n.to_string().as_str()),
            "rispy counted {pout}"
        );
        println!(
            "{:>9} {:>8} {:>7} | {:>12.0} {:>9.2} {:>9.1} | {:>12.0} {:>9.2} {:>9.1} | {:>7.1} | {:>8.2} {:>7.1}",
            n,
            n.div_ceil(per),
            format!("{}/{}", qn.get(1).unwrap_or(&"?"), dups),
            n as f64 / qs,
            qs,
            qmem,
            n as f64 / ps,
            ps,
            pmem,
            ps / qs,
            fs,
            ps / fs
        );
    }
    if std::env::var_os("QUARRY_BENCH_KEEP").is_some() {
        let _ = tmp.keep();
    }
    println!("dups: quarry's duplicates / duplicates written (rispy's script finds only the DOI ones); peak MiB: maximum resident set of the process (GNU time %M); all s, all x: quarry reading the titles, abstracts and authors too (sum of their lengths), and rispy's time over that");
}
