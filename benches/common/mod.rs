//! Where the benches find the public test material the repository does not
//! carry (large sets and ones whose licence forbids copying): the project's
//! shared data folder, `../shared/data/` beside the project root, or the
//! folder `QUARRY_SHARED_DATA` names. The tests never read it; see the
//! README's "Benchmarks" for what each bench needs.

use std::path::PathBuf;

/// `REL` inside the shared data folder, holding `what`; `None`, after
/// printing what is missing and where it comes from, when it is not there.
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
        print!(" [{}+{}] {} |", c.col, c.col_span, c.text);
    }
    println!();
}

/// The held-out rule of the table benches, fixed before any paper was
/// looked at: a PMCID whose digits sum to an odd number is held out.
#[allow(dead_code)]
pub fn held_out(pmcid: &str) -> bool {
    pmcid.chars().filter_map(|c| c.to_digit(10)).sum::<u32>() % 2 == 1
}
