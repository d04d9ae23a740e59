//! PDF tables against the publisher's XML of the same papers: every table,
//! not only baseline tables. For each paper the XML's tables (JATS cells,
//! the truth) and the PDF's table blocks are paired one to one, best TEDS
//! first; each pair is scored by cell adjacency (ICDAR 2013: precision,
//! recall, F1 of each cell's right and lower neighbours) and TEDS
//! (PubTabNet); an XML table with no PDF partner scores 0, a PDF table with
//! no XML partner counts against precision. Then `cohort_tables`: the PDF's
//! items against the XML's items (the XML side as the truth, scored as the
//! cohort gold is: value found, measure, grouping, all three).
//!
//! Inputs: the 8 papers of tests/data/rct_baseline/ (in the repository) and
//! the 17 of ../shared/data/rct_tables_more/ (their licences forbid
//! copying some of them), which are split in two by a rule fixed before
//! any was looked at: a PMCID whose digits sum to an odd number is held
//! out. Held-out papers are scored only in total; the others are listed.
//!
//! `QUARRY_TABLES_SHOW=PMCID` prints that paper's PDF tables, cell by cell
//! (a looked-at paper: the held-out ones are for scoring only), and
//! `QUARRY_TABLES_MISSES=PMCID` its XML items the PDF side lost or got
//! wrong, beside what it got.
//!
//! Run: `cargo bench --bench tables` (release), or `--profile dev`: it
//! times nothing, so the profile does not change its figures.

mod common;

use std::path::{Path, PathBuf};

use quarry::cohort::score::{score, Gold, Score};
use quarry::eval::adjacency::{relations, Tally};
use quarry::eval::teds::{cells_tree, teds, Node};
use quarry::functions::cohort::document_items;
use quarry::ingest::{ingest_file, BlockKind, Cell, Document, IngestSpec, Status};

fn ingest(path: &Path) -> Option<Document> {
    let d = ingest_file(path, &IngestSpec::default()).ok()?;
    if d.status != Status::Ok {
        eprintln!(
            "{}: {:?} {}",
            path.display(),
            d.status,
            d.error.as_deref().unwrap_or_default()
        );
    }
    Some(d)
}

fn tables(d: &Document) -> Vec<Vec<Cell>> {
    d.blocks
        .iter()
        .filter(|b| b.kind == BlockKind::Table && !b.cells.is_empty())
        .map(|b| b.cells.clone())
        .collect()
}

/// One paper's scores.
#[derive(Default, Clone)]
struct Row {
    xml_tables: usize,
    pdf_tables: usize,
    paired: usize,
    adjacency: Tally,
    teds_sum: f64,
    cohort: Score,
}

impl Row {
    fn add(&mut self, o: &Row) {
        self.xml_tables += o.xml_tables;
        self.pdf_tables += o.pdf_tables;
        self.paired += o.paired;
        self.adjacency.add(o.adjacency);
        self.teds_sum += o.teds_sum;
        self.cohort.add(&o.cohort);
    }

    fn line(&self, name: &str) -> String {
        format!(
            "{:<24} {:>4} {:>4} {:>4} | {:>6.3} {:>6.3} {:>6.3} | {:>6.3} | {:>6} {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}%",
            name,
            self.xml_tables,
            self.pdf_tables,
            self.paired,
            self.adjacency.precision(),
            self.adjacency.recall(),
            self.adjacency.f1(),
            self.teds_sum / self.xml_tables.max(1) as f64,
            self.cohort.gold,
            Score::pct(self.cohort.parsed, self.cohort.gold),
            Score::pct(self.cohort.measure, self.cohort.gold),
            Score::pct(self.cohort.grouped, self.cohort.gold),
            Score::pct(self.cohort.overall, self.cohort.gold),
        )
    }
}

fn score_paper(pmcid: &str, xml: &Path, pdf: &Path) -> Row {
    let mut row = Row::default();
    let (Some(x), Some(p)) = (ingest(xml), ingest(pdf)) else {
        return row;
    };
    let (xt, pt) = (tables(&x), tables(&p));
    if std::env::var("QUARRY_TABLES_SHOW").is_ok_and(|s| s == pmcid) {
        for t in &pt {
            println!("{pmcid}, a PDF table:");
            common::dump_cells(t);
        }
    }
    row.xml_tables = xt.len();
    row.pdf_tables = pt.len();
    let xtrees: Vec<(Node, usize)> = xt.iter().map(|c| cells_tree(c)).collect();
    let ptrees: Vec<(Node, usize)> = pt.iter().map(|c| cells_tree(c)).collect();
    // Pair tables one to one, the most similar pair first.
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (i, a) in xtrees.iter().enumerate() {
        for (j, b) in ptrees.iter().enumerate() {
            pairs.push((teds(Some(b), Some(a)), i, j));
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (mut xused, mut pused) = (vec![false; xt.len()], vec![false; pt.len()]);
    for (s, i, j) in pairs {
        if s <= 0.0 || xused[i] || pused[j] {
            continue;
        }
        xused[i] = true;
        pused[j] = true;
        row.paired += 1;
        row.teds_sum += s;
        row.adjacency
            .add(Tally::of(&relations(&xt[i]), &relations(&pt[j])));
    }
    for (i, used) in xused.iter().enumerate() {
        if !used {
            row.adjacency.add(Tally::of(&relations(&xt[i]), &[]));
        }
    }
    for (j, used) in pused.iter().enumerate() {
        if !used {
            row.adjacency.add(Tally::of(&[], &relations(&pt[j])));
        }
    }
    // cohort_tables: the XML's items are the truth.
    let gold: Vec<Gold> = document_items(&x)
        .into_iter()
        .filter_map(|it| {
            Some(Gold {
                pmcid: pmcid.to_string(),
                table: it.table_id.clone(),
                arm: it.arm.clone()?,
                characteristic: it.characteristic.clone(),
                category: it.category.clone(),
                measure: it.measure.as_str().to_string(),
                value: it.value?,
            })
        })
        .collect();
    if !gold.is_empty() {
        let misses = std::env::var("QUARRY_TABLES_MISSES").is_ok_and(|s| s == pmcid);
        row.cohort = score(&gold, &document_items(&p), misses, "pdf");
    }
    row
}

fn papers(dir: &Path) -> Vec<(String, PathBuf, PathBuf)> {
    let mut out: Vec<(String, PathBuf, PathBuf)> = std::fs::read_dir(dir.join("jats"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "nxml"))
                .filter_map(|x| {
                    let stem = x.file_stem()?.to_string_lossy().to_string();
                    let pdf = dir.join("pdf").join(format!("{stem}.pdf"));
                    pdf.exists().then_some((stem, x, pdf))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    println!(
        "{:<24} {:>4} {:>4} {:>4} | {:>6} {:>6} {:>6} | {:>6} | {:>6} {:>7} {:>7} {:>7} {:>7}",
        "paper",
        "xml",
        "pdf",
        "pair",
        "adj P",
        "adj R",
        "adj F1",
        "TEDS",
        "items",
        "parsed",
        "measure",
        "grouped",
        "overall"
    );
    let mut sets: Vec<(&str, Row)> = vec![
        ("rct_baseline", Row::default()),
        ("more, looked at", Row::default()),
        ("more, held out", Row::default()),
    ];
    for (pmcid, x, p) in papers(&root.join("tests/data/rct_baseline")) {
        let r = score_paper(&pmcid, &x, &p);
        println!("{}", r.line(&format!("{pmcid} (baseline)")));
        sets[0].1.add(&r);
    }
    match common::shared_data(
        "rct_tables_more",
        "17 trial papers as PDF and publisher XML (rct_tables_more, licences in its README)",
    ) {
        Some(dir) => {
            for (pmcid, x, p) in papers(&dir) {
                let r = score_paper(&pmcid, &x, &p);
                if common::held_out(&pmcid) {
                    sets[2].1.add(&r);
                } else {
                    println!("{}", r.line(&pmcid));
                    sets[1].1.add(&r);
                }
            }
        }
        None => println!("(the 17 more papers are not here: see above)"),
    }
    println!();
    let mut all = Row::default();
    for (name, r) in &sets {
        println!("{}", r.line(name));
        all.add(r);
    }
    println!("{}", all.line("all"));
}
