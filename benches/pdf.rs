//! PDF extraction quality and speed, beside `pdftotext` (poppler-utils)
//! scored the same way in the same run, and table detection on the ICDAR
//! 2013 competition (EU half) with the competition's measures.
//!
//! Run: `cargo bench --bench pdf` (release). Needs `pdftotext` on PATH
//! (Debian: poppler-utils). Inputs:
//! - tests/data/rct_baseline/pdf/*.pdf (8 CC BY trial papers, in the
//!   repository) against the body text of rct_baseline/jats/*.nxml (the
//!   publisher's XML; tables and figures left out). Words: NFKC, lower case, runs of letters and digits. Recall = the
//!   share of the XML's words (as a multiset) found in the extracted text;
//!   order = the longest common subsequence of the two word sequences over
//!   the XML's word count.
//! - ../shared/data/icdar2013/competition-dataset-eu/ (MIT, via
//!   tabula-java; not in the repository): table regions
//!   (`-reg.xml`) scored by the words inside them (recall of each true
//!   region by its best detected region, precision of each detected region
//!   by its best true one), and cell adjacency relations (`-str.xml`: each
//!   cell with its next neighbour to the right and below, text normalised
//!   by dropping whitespace and case) as precision, recall and F1.
//!
//! `QUARRY_PDF_DUMP=DIR` writes quarry's and pdftotext's text per paper there.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use quarry::eval::adjacency::{relations, Relation, Tally};
use quarry::ingest::{pdf, Cell};
use quick_xml::events::Event;
use unicode_normalization::UnicodeNormalization;

/// The eight trial papers, in the repository (tests/data/rct_baseline).
fn rct(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/rct_baseline")
        .join(rel)
}

/// The ICDAR 2013 competition's EU half, from the shared data folder.
fn icdar() -> Option<PathBuf> {
    common::shared_data(
        "icdar2013/competition-dataset-eu",
        "the ICDAR 2013 table competition's EU half (MIT, via tabula-java)",
    )
}

fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .unwrap_or(0.0)
        / 1024.0
}

fn words(text: &str) -> Vec<String> {
    let t: String = text.nfkc().collect::<String>().to_lowercase();
    t.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The text of a JATS article's body, without tables, figures and their
/// captions, supplementary material or formulas set as images.
fn jats_body(path: &Path) -> String {
    let xml = std::fs::read_to_string(path).expect("read nxml");
    let mut r = quick_xml::Reader::from_str(&xml);
    let mut out = String::new();
    let mut in_body = 0;
    let mut skip = 0;
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) => {
                let n = e.name().as_ref().to_vec();
                if n == b"body" {
                    in_body += 1;
                } else if in_body > 0
                    && (skip > 0
                        || matches!(
                            n.as_slice(),
                            b"table-wrap"
                                | b"fig"
                                | b"supplementary-material"
                                | b"table-wrap-foot"
                                | b"disp-formula"
                        ))
                {
                    skip += 1;
                }
                if matches!(
                    n.as_slice(),
                    b"p" | b"title" | b"sec" | b"td" | b"th" | b"list-item"
                ) {
                    out.push(' ');
                }
            }
            Ok(Event::End(e)) => {
                let n = e.name().as_ref().to_vec();
                if n == b"body" {
                    in_body -= 1;
                } else if skip > 0 {
                    skip -= 1;
                }
                out.push(' ');
            }
            Ok(Event::Text(t)) if in_body > 0 && skip == 0 => {
                out.push_str(&t.xml_content().map(|c| c.to_string()).unwrap_or_default());
            }
            Ok(Event::GeneralRef(g)) if in_body > 0 && skip == 0 => {
                let name = String::from_utf8_lossy(g.as_ref()).to_string();
                let c = quarry::ingest::jats::entity(&name);
                out.push_str(&c);
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

fn recall(truth: &[String], got: &[String]) -> f64 {
    let mut bag: HashMap<&str, i64> = HashMap::new();
    for w in got {
        *bag.entry(w).or_default() += 1;
    }
    let mut hit = 0;
    for w in truth {
        if let Some(n) = bag.get_mut(w.as_str()) {
            if *n > 0 {
                *n -= 1;
                hit += 1;
            }
        }
    }
    hit as f64 / truth.len().max(1) as f64
}

fn lcs(a: &[String], b: &[String]) -> usize {
    let ids: HashMap<&str, u32> = a
        .iter()
        .chain(b.iter())
        .enumerate()
        .map(|(i, w)| (w.as_str(), i as u32))
        .collect();
    let a: Vec<u32> = a.iter().map(|w| ids[w.as_str()]).collect();
    let b: Vec<u32> = b.iter().map(|w| ids[w.as_str()]).collect();
    let mut prev = vec![0u32; b.len() + 1];
    let mut cur = vec![0u32; b.len() + 1];
    for &x in &a {
        for j in 0..b.len() {
            cur[j + 1] = if x == b[j] {
                prev[j] + 1
            } else {
                cur[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()] as usize
}

fn quarry_text(bytes: &[u8]) -> (String, u32) {
    let x = pdf::extract(bytes).expect("quarry pdf");
    let text = x
        .blocks
        .iter()
        .map(|b| b.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    (text, x.pages.unwrap_or(0))
}

fn pdftotext(path: &Path) -> String {
    let out = Command::new("pdftotext")
        .arg("-enc")
        .arg("UTF-8")
        .arg(path)
        .arg("-")
        .output()
        .expect("pdftotext (apt install poppler-utils)");
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn text_benchmark() {
    let dir = rct("pdf");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("rct_baseline/pdf")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pdf"))
        .collect();
    files.sort();
    let dump = std::env::var("QUARRY_PDF_DUMP").ok().map(PathBuf::from);
    println!(
        "PDF text against the publisher's XML body text ({} papers, tests/data/rct_baseline)",
        files.len()
    );
    println!(
        "{:<12} {:>5} {:>7} | {:>8} {:>8} | {:>8} {:>8}",
        "paper", "pages", "words", "q recall", "q order", "p recall", "p order"
    );
    let (mut tw, mut qr, mut qo, mut pr, mut po) = (0usize, 0.0, 0.0, 0.0, 0.0);
    let mut worse = Vec::new();
    for f in &files {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        let truth = words(&jats_body(&rct(&format!("jats/{stem}.nxml"))));
        let bytes = std::fs::read(f).unwrap();
        let (qt, pages) = quarry_text(&bytes);
        let pt = pdftotext(f);
        if let Some(d) = &dump {
            std::fs::create_dir_all(d).ok();
            std::fs::write(d.join(format!("{stem}.quarry.txt")), &qt).ok();
            std::fs::write(d.join(format!("{stem}.pdftotext.txt")), &pt).ok();
            std::fs::write(d.join(format!("{stem}.jats.txt")), truth.join(" ")).ok();
        }
        let (qw, pw) = (words(&qt), words(&pt));
        let (a, b) = (
            recall(&truth, &qw),
            lcs(&truth, &qw) as f64 / truth.len() as f64,
        );
        let (c, d) = (
            recall(&truth, &pw),
            lcs(&truth, &pw) as f64 / truth.len() as f64,
        );
        println!(
            "{stem:<12} {pages:>5} {:>7} | {:>8.4} {:>8.4} | {:>8.4} {:>8.4}",
            truth.len(),
            a,
            b,
            c,
            d
        );
        if a < c || b < d {
            worse.push(format!(
                "{stem} (recall {a:.4} vs {c:.4}, order {b:.4} vs {d:.4})"
            ));
        }
        let n = truth.len();
        tw += n;
        qr += a * n as f64;
        qo += b * n as f64;
        pr += c * n as f64;
        po += d * n as f64;
    }
    let t = tw as f64;
    println!(
        "{:<12} {:>5} {:>7} | {:>8.4} {:>8.4} | {:>8.4} {:>8.4}",
        "overall",
        "",
        tw,
        qr / t,
        qo / t,
        pr / t,
        po / t
    );
    if worse.is_empty() {
        println!("quarry >= pdftotext on recall and order for every paper");
    } else {
        println!("quarry below pdftotext on: {}", worse.join("; "));
    }

    // Speed: every paper, 5 rounds; quarry parses pages on rayon's pool (2
    // threads here), pdftotext runs as 2 processes at a time.
    let rounds = 5;
    let total_pages: u32 = files
        .iter()
        .map(|f| {
            pdf::open(&std::fs::read(f).unwrap())
                .unwrap()
                .get_pages()
                .len() as u32
        })
        .sum();
    let t0 = Instant::now();
    for _ in 0..rounds {
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            std::hint::black_box(quarry_text(&bytes));
        }
    }
    let q = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    for _ in 0..rounds {
        for pair in files.chunks(2) {
            let kids: Vec<_> = pair
                .iter()
                .map(|f| {
                    Command::new("pdftotext")
                        .arg("-enc")
                        .arg("UTF-8")
                        .arg(f)
                        .arg("/dev/null")
                        .spawn()
                        .unwrap()
                })
                .collect();
            for mut k in kids {
                k.wait().unwrap();
            }
        }
    }
    let p = t0.elapsed().as_secs_f64();
    let pages = (total_pages * rounds) as f64;
    println!(
        "speed ({} pages x {rounds} rounds, {} cores): quarry {:.1} pages/s, pdftotext {:.1} pages/s; quarry peak memory {:.0} MiB",
        total_pages,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        pages / q,
        pages / p,
        peak_mib()
    );
}

fn attr(e: &quick_xml::events::BytesStart, key: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .map(|a| String::from_utf8_lossy(&a.value).to_string())
}

struct GtCell {
    r0: u32,
    r1: u32,
    c0: u32,
    c1: u32,
    text: String,
}

/// Regions (page, x1, y1, x2, y2 in PDF units) and cells per table.
/// A table region: page and box.
type Region = (u32, [f32; 4]);

fn icdar_truth(dir: &Path, stem: &str) -> (Vec<Region>, Vec<Vec<GtCell>>) {
    let reg = std::fs::read_to_string(dir.join(format!("{stem}-reg.xml"))).unwrap();
    let mut regions = Vec::new();
    let mut r = quick_xml::Reader::from_str(&reg);
    let mut page = 0;
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => {
                if e.name().as_ref() == b"region" {
                    page = attr(&e, b"page").and_then(|p| p.parse().ok()).unwrap_or(1);
                } else if e.name().as_ref() == b"bounding-box" {
                    let g = |k: &[u8]| {
                        attr(&e, k)
                            .and_then(|v| v.parse::<f32>().ok())
                            .unwrap_or(0.0)
                    };
                    regions.push((page, [g(b"x1"), g(b"y1"), g(b"x2"), g(b"y2")]));
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    let st = std::fs::read_to_string(dir.join(format!("{stem}-str.xml"))).unwrap();
    let mut tables: Vec<Vec<GtCell>> = Vec::new();
    let mut r = quick_xml::Reader::from_str(&st);
    let mut cur: Option<GtCell> = None;
    let mut in_content = false;
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => match e.name().as_ref() {
                b"table" => tables.push(Vec::new()),
                b"cell" => {
                    let g = |k: &[u8]| attr(&e, k).and_then(|v| v.parse::<u32>().ok());
                    let (r0, c0) = (g(b"start-row").unwrap_or(0), g(b"start-col").unwrap_or(0));
                    cur = Some(GtCell {
                        r0,
                        c0,
                        r1: g(b"end-row").unwrap_or(r0),
                        c1: g(b"end-col").unwrap_or(c0),
                        text: String::new(),
                    });
                }
                b"content" => in_content = true,
                _ => {}
            },
            Ok(Event::End(e)) => match e.name().as_ref() {
                b"cell" => {
                    if let (Some(c), Some(t)) = (cur.take(), tables.last_mut()) {
                        t.push(c);
                    }
                }
                b"content" => in_content = false,
                _ => {}
            },
            Ok(Event::Text(t)) if in_content => {
                if let Some(c) = cur.as_mut() {
                    c.text
                        .push_str(&t.xml_content().map(|c| c.to_string()).unwrap_or_default());
                }
            }
            Ok(Event::GeneralRef(g)) if in_content => {
                if let Some(c) = cur.as_mut() {
                    c.text.push_str(match &*g {
                        b"amp" => "&",
                        b"lt" => "<",
                        b"gt" => ">",
                        _ => "",
                    });
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    (regions, tables)
}

/// A ground-truth cell as the competition's cells of rows r0..=r1,
/// columns c0..=c1.
fn as_cell(c: &GtCell) -> Cell {
    Cell {
        row: c.r0,
        col: c.c0,
        row_span: c.r1 - c.r0 + 1,
        col_span: c.c1 - c.c0 + 1,
        text: c.text.clone(),
        ..Cell::default()
    }
}

fn table_benchmark() {
    let Some(dir) = icdar() else {
        println!("\ntable detection skipped: the ICDAR 2013 set is not here (see above)");
        return;
    };
    let mut stems: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pdf"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().to_string())
        .collect();
    stems.sort();
    let (mut gt_n, mut det_n, mut rec_sum, mut prec_sum) = (0usize, 0usize, 0.0, 0.0);
    let (mut complete, mut pure) = (0, 0);
    let mut adjacency = Tally::default();
    for stem in &stems {
        let bytes = std::fs::read(dir.join(format!("{stem}.pdf"))).unwrap();
        let (gt_regions, gt_tables) = icdar_truth(&dir, stem);
        let Ok(doc) = pdf::open(&bytes) else {
            println!("{stem}: could not open");
            continue;
        };
        let mut pages = pdf::page_lines(&doc);
        // Words per page (PDF coordinates, y up) as the sub-objects.
        let mut page_words: HashMap<u32, Vec<(f32, f32)>> = HashMap::new();
        for p in &pages {
            let v = page_words.entry(p.number).or_default();
            for l in &p.lines {
                for w in &l.words {
                    v.push(((w.x0 + w.x1) / 2.0, p.height - (w.y - 0.3 * w.size)));
                }
            }
        }
        let mut det: Vec<(u32, [f32; 4], Vec<pdf::table::TCell>)> = Vec::new();
        for p in &mut pages {
            let h = p.height;
            for b in pdf::page_blocks(p) {
                if let Some(cells) = b.table {
                    det.push((p.number, [b.x0, h - b.y1, b.x1, h - b.y0], cells));
                }
            }
        }
        let inside = |page: u32, r: &[f32; 4]| -> Vec<usize> {
            page_words
                .get(&page)
                .map(|v| {
                    v.iter()
                        .enumerate()
                        .filter(|(_, (x, y))| *x >= r[0] && *x <= r[2] && *y >= r[1] && *y <= r[3])
                        .map(|(i, _)| i)
                        .collect()
                })
                .unwrap_or_default()
        };
        let inter = |a: &[usize], b: &[usize]| a.iter().filter(|x| b.contains(x)).count();
        for (page, r) in &gt_regions {
            let g = inside(*page, r);
            let best = det
                .iter()
                .filter(|d| d.0 == *page)
                .map(|d| inter(&g, &inside(d.0, &d.1)) as f64 / g.len().max(1) as f64)
                .fold(0.0, f64::max);
            rec_sum += best;
            complete += usize::from(best >= 0.999);
            gt_n += 1;
        }
        for d in &det {
            let w = inside(d.0, &d.1);
            let best = gt_regions
                .iter()
                .filter(|g| g.0 == d.0)
                .map(|g| inter(&w, &inside(g.0, &g.1)) as f64 / w.len().max(1) as f64)
                .fold(0.0, f64::max);
            prec_sum += best;
            pure += usize::from(best >= 0.999);
            det_n += 1;
        }
        // Cell adjacency over the whole document.
        let truth: Vec<Relation> = gt_tables
            .iter()
            .flat_map(|t| relations(&t.iter().map(as_cell).collect::<Vec<_>>()))
            .collect();
        let found: Vec<Relation> = det
            .iter()
            .flat_map(|d| relations(&d.2.iter().map(Cell::from).collect::<Vec<_>>()))
            .collect();
        if std::env::var("QUARRY_PDF_ICDAR_DOCS").is_ok() {
            println!(
                "{stem}: {} true, {} detected; relations {} true, {} detected",
                gt_regions.len(),
                det.len(),
                truth.len(),
                found.len()
            );
        }
        adjacency.add(Tally::of(&truth, &found));
    }
    let (rr, rp) = (rec_sum / gt_n.max(1) as f64, prec_sum / det_n.max(1) as f64);
    println!(
        "ICDAR 2013 EU ({} documents, {gt_n} true tables, {det_n} detected): region recall {:.4}, precision {:.4}, F1 {:.4}; complete {complete}/{gt_n}, pure {pure}/{det_n}",
        stems.len(),
        rr,
        rp,
        2.0 * rr * rp / (rr + rp).max(1e-9)
    );
    println!(
        "cell adjacency: precision {:.4}, recall {:.4}, F1 {:.4} ({} of {} true relations, {} detected)",
        adjacency.precision(),
        adjacency.recall(),
        adjacency.f1(),
        adjacency.hit,
        adjacency.truth,
        adjacency.found
    );
}

/// `QUARRY_PDF_TRACE=path.pdf:needle` prints the glyphs around a text.
fn trace(spec: &str) {
    let (path, needle) = spec.split_once(':').expect("path:needle");
    let doc = pdf::open(&std::fs::read(path).unwrap()).unwrap();
    let fonts = pdf::interp::FontCache::default();
    for (n, id) in doc.get_pages() {
        let pc = pdf::interp::run_page(&doc, id, &fonts);
        let s: String = pc.glyphs.iter().map(|g| g.text.as_str()).collect();
        if let Some(i) = s.find(needle) {
            let mut pos = 0;
            for g in &pc.glyphs {
                if pos + 40 >= i && pos <= i + needle.len() + 40 {
                    println!(
                        "p{n} {:?} x0={:.2} x1={:.2} y={:.2} size={:.2} bold={} space={}",
                        g.text, g.x0, g.x1, g.y, g.size, g.bold, g.space
                    );
                }
                pos += g.text.len();
            }
            return;
        }
    }
}

/// A synthetic PDF of `n` pages, each two columns of 55 lines of
/// Helvetica text under a running head, written with lopdf.
fn big_pdf(n: usize) -> Vec<u8> {
    use lopdf::content::{Content, Operation};
    use lopdf::{dictionary, Document, Object, Stream};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding"});
    let mut kids = Vec::new();
    for p in 0..n {
        let mut ops = Vec::new();
        let mut put = |x: f32, y: f32, t: String| {
            ops.push(Operation::new("BT", vec![]));
            ops.push(Operation::new("Tf", vec!["F1".into(), 9.0.into()]));
            ops.push(Operation::new("Td", vec![x.into(), y.into()]));
            ops.push(Operation::new("Tj", vec![Object::string_literal(t)]));
            ops.push(Operation::new("ET", vec![]));
        };
        put(50.0, 760.0, "Journal of Synthetic Pages".into());
        for col in 0..2 {
            for l in 0..55 {
                put(
                    50.0 + 270.0 * col as f32,
                    730.0 - 12.0 * l as f32,
                    format!("page {p} column {col} line {l} of the randomised trial text"),
                );
            }
        }
        let content = doc.add_object(Stream::new(
            dictionary! {},
            Content { operations: ops }.encode().unwrap(),
        ));
        kids.push(Object::Reference(doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Contents" => content, "Resources" => dictionary! {"Font" => dictionary! {"F1" => font}},
        })));
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {"Type" => "Pages", "Kids" => kids, "Count" => count}),
    );
    let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
    doc.trailer.set("Root", catalog);
    doc.compress();
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// Peak memory for one 1,000-page PDF, measured in a child process so the
/// rest of the benchmark does not count.
fn big_benchmark() {
    if std::env::var("QUARRY_PDF_BIG").is_ok() {
        let bytes = big_pdf(1000);
        let before = peak_mib();
        let t0 = Instant::now();
        let x = pdf::extract(&bytes).expect("big pdf");
        let secs = t0.elapsed().as_secs_f64();
        let chars: usize = x.blocks.iter().map(|b| b.text.len()).sum();
        println!(
            "1,000-page PDF ({:.1} MB, {:.1} MB of text): {:.1} s, {:.0} pages/s; peak memory {:.0} MiB (of which {:.0} MiB before extraction: the file and its generation)",
            bytes.len() as f64 / 1e6,
            chars as f64 / 1e6,
            secs,
            1000.0 / secs,
            peak_mib(),
            before
        );
        std::process::exit(0);
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .env("QUARRY_PDF_BIG", "1")
        .output()
        .expect("child");
    print!("{}", String::from_utf8_lossy(&out.stdout));
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if std::env::var("QUARRY_PDF_BIG").is_ok() {
        big_benchmark();
    }
    if let Ok(spec) = std::env::var("QUARRY_PDF_BLOCKS") {
        // path:page — the page's blocks in reading order.
        let (path, page) = spec.rsplit_once(':').expect("path:page");
        let doc = pdf::open(&std::fs::read(path).unwrap()).unwrap();
        let mut pages = pdf::page_lines(&doc);
        pdf::strip_running(&mut pages);
        let p = pages
            .iter_mut()
            .find(|p| p.number.to_string() == page)
            .expect("page");
        for b in pdf::page_blocks(p) {
            let t: String = b
                .lines
                .iter()
                .map(|l| l.text())
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .take(70)
                .collect();
            println!(
                "[{:6.1} {:6.1} {:6.1} {:6.1}] {}{t}",
                b.x0,
                b.y0,
                b.x1,
                b.y1,
                if b.table.is_some() { "TABLE " } else { "" }
            );
            if std::env::var("QUARRY_PDF_LINES").is_ok() {
                for l in &b.lines {
                    println!(
                        "    ({:6.1} {:6.1} y={:6.1} s={:4.1}) {}",
                        l.x0,
                        l.x1,
                        l.y,
                        l.size,
                        l.text()
                    );
                }
            }
        }
        return;
    }
    if let Ok(spec) = std::env::var("QUARRY_PDF_TRACE") {
        trace(&spec);
        return;
    }
    text_benchmark();
    big_benchmark();
    table_benchmark();
}
