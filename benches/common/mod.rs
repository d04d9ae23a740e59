//! Where the benches find the public test material the repository does not
//! carry (large sets and ones whose licence forbids copying): the project's
//! shared data folder, `../shared/data/` beside the project root, or the
//! folder `QUARRY_SHARED_DATA` names. The tests never read it; see the
//! README's "Benchmarks" for what each bench needs.

use std::path::PathBuf;

/// The allocator the `quarry` command uses (mimalloc), so a bench's peak
/// memory is what a user's run takes. Built with `--features
/// system-alloc`, a bench uses the C library's, which heaptrack follows.
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `REL` inside the shared data folder, holding `what`; `None`, after
/// printing what is missing and where it comes from, when it is not there.
#[allow(dead_code)]
pub fn shared_data(rel: &str, what: &str) -> Option<PathBuf> {
    let base = std::env::var("QUARRY_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    let dir = base.join(rel);
    if dir.exists() {
        return Some(dir);
    }
    eprintln!(
        "this bench needs {what} in {} (the project's shared test material, beside the clone \
         as ../shared/data/, or the folder QUARRY_SHARED_DATA names); it is not there. \
         The README's \"Benchmarks\" section says where each set comes from.",
        dir.display()
    );
    None
}

/// Prints a table's cells row by row: `[col+span] text |`.
#[allow(dead_code)]
pub fn dump_cells(cells: &[quarry::ingest::Cell]) {
    let mut cs: Vec<&quarry::ingest::Cell> = cells.iter().collect();
    cs.sort_by_key(|c| (c.row, c.col));
    let mut row = u32::MAX;
    for c in cs {
        if c.row != row {
            print!("\n  r{:<3}", c.row);
            row = c.row;
        }
        // An indent level shows as ">N".
        let indent = if c.indent > 0 {
            format!(">{}", c.indent)
        } else {
            String::new()
        };
        print!(" [{}+{}{indent}] {} |", c.col, c.col_span, c.text);
    }
    println!();
}

/// The held-out rule of the table benches, fixed before any paper was
/// looked at: a PMCID whose digits sum to an odd number is held out.
#[allow(dead_code)]
pub fn held_out(pmcid: &str) -> bool {
    pmcid.chars().filter_map(|c| c.to_digit(10)).sum::<u32>() % 2 == 1
}

/// A `/proc/self/status` figure in MiB (`VmHWM:` is the peak RSS so far).
#[allow(dead_code)]
pub fn proc_status(key: &str) -> f64 {
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
#[allow(dead_code)]
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = after
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the ')'.
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
}

/// A number from the environment, or `default`.
#[allow(dead_code)]
pub fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Every file under `dir` (recursively; none when it does not exist).
#[allow(dead_code)]
pub fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// Files under `dir` (recursively) whose path contains `part`.
#[allow(dead_code)]
pub fn files(dir: &std::path::Path, part: &str) -> usize {
    walk(dir)
        .iter()
        .filter(|p| p.to_string_lossy().contains(part))
        .count()
}
