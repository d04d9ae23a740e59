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
//! wrong, beside what it got. `QUARRY_TABLES_EACH=1` prints each looked-at
//! table pair's adjacency and TEDS.
//!
//! Run: `cargo bench --bench tables` (release), or `--profile dev`: it
//! times nothing, so the profile does not change its figures.

mod common;

use std::path::{Path, PathBuf};

use quarry::cohort::score::{score_into, Gold, Score, Wrong};
use quarry::cohort::tokens::descriptors;
use quarry::cohort::{tables_of, TableIn};
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
    /// (gold measure, PDF measure, where the XML names its measures) of
    /// items found under another measure.
    wrong_measures: Vec<(String, String, String)>,
    /// What differs in each item grouped otherwise.
    wrong_groups: Vec<&'static str>,
    /// Why each item not found was not.
    missing: Vec<&'static str>,
    /// Tables whose XML caption or notes name measures and whose PDF
    /// caption and notes do not (counted with `QUARRY_TABLES_NOTES`).
    notes_lost: usize,
    /// Where the PDF has the notes those tables lost (block kind, blocks
    /// after the table, pages after).
    notes_where: Vec<String>,
}

impl Row {
    fn add(&mut self, o: &Row) {
        self.xml_tables += o.xml_tables;
        self.pdf_tables += o.pdf_tables;
        self.paired += o.paired;
        self.adjacency.add(o.adjacency);
        self.teds_sum += o.teds_sum;
        self.cohort.add(&o.cohort);
        self.wrong_measures.extend(o.wrong_measures.iter().cloned());
        self.wrong_groups.extend(o.wrong_groups.iter().cloned());
        self.missing.extend(o.missing.iter().cloned());
        self.notes_lost += o.notes_lost;
        self.notes_where.extend(o.notes_where.iter().cloned());
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

fn score_paper(pmcid: &str, xml: &Path, pdf: &Path, held: bool) -> Row {
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
        let t = Tally::of(&relations(&xt[i]), &relations(&pt[j]));
        if !held && std::env::var("QUARRY_TABLES_EACH").is_ok() {
            println!(
                "{pmcid} xml table {} / pdf table {}: adj P {:.3} R {:.3} F1 {:.3}, TEDS {:.3}",
                i + 1,
                j + 1,
                t.precision(),
                t.recall(),
                t.f1(),
                s
            );
        }
        row.adjacency.add(t);
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
        let mut wrong = Wrong::default();
        row.cohort = score_into(&gold, &document_items(&p), misses, "pdf", &mut wrong);
        row.wrong_groups = wrong.groups.iter().map(|g| g.1).collect();
        row.missing = wrong.missing.iter().map(|g| g.1).collect();
        // Where each wrongly measured item's table names its measures: in
        // the XML's caption or notes, and whether the PDF side has them.
        let (xt, pt) = (tables_of(&x), tables_of(&p));
        let named = |ts: &[TableIn], id: &str| {
            ts.iter().find(|t| t.table_id == id).map(|t| {
                let text = format!("{} {}", t.caption, t.notes.join(" "));
                !descriptors(&text).iter().all(|d| d.is_empty())
            })
        };
        if std::env::var("QUARRY_TABLES_NOTES").is_ok() {
            for t in &xt {
                if named(&xt, &t.table_id) == Some(true) && named(&pt, &t.table_id) != Some(true) {
                    row.notes_lost += 1;
                    row.notes_where.push(notes_where(t, &p, &pt));
                    if !held {
                        let pdf = pt.iter().find(|q| q.table_id == t.table_id);
                        println!(
                            "notes lost: {pmcid} {}\n  xml caption {:?}\n  xml notes {:?}\n  pdf {:?}",
                            t.table_id,
                            t.caption,
                            t.notes,
                            pdf.map(|q| (&q.caption, &q.notes))
                        );
                    }
                }
            }
        }
        for (table, g, p) in wrong.measures {
            let place = match (named(&xt, &table), named(&pt, &table)) {
                (Some(true), Some(true)) => "notes in both",
                (Some(true), _) => "notes lost",
                (_, Some(true)) => "notes only in PDF",
                _ => "in the cells",
            };
            row.wrong_measures.push((g, p, place.to_string()));
        }
    }
    row
}

/// Where a PDF has an XML table's note naming measures: the kind of the
/// block holding its opening words, how many blocks after the table's and
/// how many pages after (structure only: printed for held-out papers too).
fn notes_where(t: &TableIn, p: &quarry::ingest::Document, pt: &[TableIn]) -> String {
    let fold = |s: &str| -> String {
        use unicode_normalization::UnicodeNormalization;
        s.nfkc()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let Some(note) = t
        .notes
        .iter()
        .chain(std::iter::once(&t.caption))
        .find(|n| !descriptors(n).iter().all(|d| d.is_empty()))
    else {
        return "no note".into();
    };
    // Past a leading note mark.
    let key: String = fold(note).chars().skip(1).take(20).collect();
    // How many blocks on from block `j` the nearest table block is.
    let nearest_table = |j: usize| {
        p.blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.kind == BlockKind::Table)
            .map(|(k, _)| k as i64 - j as i64)
            .min_by_key(|d| d.abs())
    };
    let Some(pdf) = pt.iter().find(|q| q.table_id == t.table_id) else {
        // Whether a caption with that label is there at all, and how far
        // from the nearest table block.
        let caption = p.blocks.iter().position(|b| {
            quarry::cohort::table_label(&p.text[b.start..b.end]).as_deref()
                == Some(t.table_id.as_str())
        });
        return match caption {
            None => {
                // Where the label is, if anywhere: a block's kind and the
                // label's offset in it.
                let label = t.table_id.to_lowercase();
                let at = p.blocks.iter().enumerate().find_map(|(j, b)| {
                    let text = p.text[b.start..b.end].to_lowercase();
                    text.find(&label).map(|o| (j, b.kind, o, b.end - b.start))
                });
                match at {
                    None => "no PDF table of that label; the label is nowhere in the text".into(),
                    Some((j, kind, o, len)) => {
                        let nearest = nearest_table(j);
                        format!(
                            "no PDF table of that label; the label is {o} chars into a {kind:?} block of {len}, nearest table {nearest:?} blocks on"
                        )
                    }
                }
            }
            Some(j) => {
                let nearest = nearest_table(j);
                let between: Vec<String> = nearest
                    .map(|d| {
                        let k = (j as i64 + d) as usize;
                        (k.min(j) + 1..k.max(j))
                            .map(|i| {
                                let b = &p.blocks[i];
                                format!("{:?} ({} chars)", b.kind, b.end - b.start)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                format!(
                    "no PDF table of that label; the label starts a {:?} block, nearest table {:?} blocks on, between: {}",
                    p.blocks[j].kind,
                    nearest,
                    between.join(" ")
                )
            }
        };
    };
    let k = p
        .blocks
        .iter()
        .position(|b| b.kind == BlockKind::Table && b.cells == pdf.cells);
    let found = p
        .blocks
        .iter()
        .position(|b| fold(&p.text[b.start..b.end]).contains(&key));
    match (k, found) {
        (Some(k), Some(j)) => {
            let between: Vec<String> = (k.min(j) + 1..k.max(j))
                .map(|i| format!("{:?}", p.blocks[i].kind))
                .collect();
            format!(
                "{:?} {:+} blocks {:+} pages, between: {}",
                p.blocks[j].kind,
                j as i64 - k as i64,
                p.blocks[j].page.unwrap_or(0) as i64 - p.blocks[k].page.unwrap_or(0) as i64,
                between.join(" ")
            )
        }
        (_, None) => {
            let short: String = key.chars().take(10).collect();
            let cells: String = pdf.cells.iter().map(|c| fold(&c.text)).collect();
            if cells.contains(&short) {
                "its start in the table's cells".into()
            } else if fold(&p.text).contains(&short) {
                // The first character where the PDF's text parts from the
                // note's (not folded away: what the PDF has there).
                let xml: Vec<char> = note.chars().filter(|c| !c.is_whitespace()).collect();
                let raw: Vec<char> = p.text.chars().filter(|c| !c.is_whitespace()).collect();
                let rs: String = raw.iter().collect();
                let start: String = xml.iter().skip(1).take(8).collect();
                let part = rs
                    .find(&start)
                    .and_then(|r0| {
                        let r = &raw[rs[..r0].chars().count()..];
                        let x = &xml[1..];
                        (0..x.len().min(r.len()))
                            .find(|&i| x[i] != r[i])
                            .map(|i| format!("XML {:?}, PDF {:?}", x[i], r[i]))
                    })
                    .unwrap_or_else(|| "?".into());
                format!("its start elsewhere in the text, parting at {part}")
            } else {
                "not in the PDF text".into()
            }
        }
        (None, _) => "table block not found".into(),
    }
}

/// How many times each item occurs.
fn tally<T: Ord>(items: &[T]) -> std::collections::BTreeMap<&T, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for i in items {
        *counts.entry(i).or_default() += 1;
    }
    counts
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
        let r = score_paper(&pmcid, &x, &p, false);
        println!("{}", r.line(&format!("{pmcid} (baseline)")));
        sets[0].1.add(&r);
    }
    match common::shared_data(
        "rct_tables_more",
        "17 trial papers as PDF and publisher XML (rct_tables_more, licences in its README)",
    ) {
        Some(dir) => {
            for (pmcid, x, p) in papers(&dir) {
                let held = common::held_out(&pmcid);
                let r = score_paper(&pmcid, &x, &p, held);
                if held {
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
    // Which measures the PDF side names wrongly, per set (counts only).
    println!();
    println!("items found under another measure (truth -> PDF side: count)");
    for (name, r) in &sets {
        let mut counts: Vec<_> = tally(&r.wrong_measures).into_iter().collect();
        counts.sort_by_key(|c| std::cmp::Reverse(c.1));
        let text: Vec<String> = counts
            .iter()
            .map(|((g, p, place), n)| format!("{g} -> {p} ({place}): {n}"))
            .collect();
        println!("  {name}: {}", text.join(", "));
        println!(
            "  {name}, grouped otherwise by: {:?}",
            tally(&r.wrong_groups)
        );
        println!("  {name}, not found: {:?}", tally(&r.missing));
        if std::env::var("QUARRY_TABLES_NOTES").is_ok() {
            println!(
                "  {name}: {} tables lost the notes naming their measures: {:?}",
                r.notes_lost, r.notes_where
            );
        }
    }
}
