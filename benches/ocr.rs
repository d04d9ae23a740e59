//! OCR speed and quality: the bundled trial paper's pages scanned (drawn at
//! 300 dpi in grey by `pdftoppm` and wrapped into an image-only PDF, one
//! Flate-compressed image a page) and read back through quarry's whole path
//! (the PDF opened, each page's image taken out as PNM, Tesseract, hOCR
//! read, the layout), beside the `tesseract` command run alone on the same
//! images: one at a time, and as many at once as quarry runs (one a core).
//! The difference is the overhead of quarry's path. Word recall of what was
//! read against the paper's own text layer is printed beside it, page by
//! page. Then born-digital PDF text speed with OCR on (`ocr=auto`, the
//! default, which only looks for scanned pages) and off, on the eight
//! trial papers of tests/data/rct_baseline/pdf.
//!
//! Run: `cargo bench --bench ocr` (needs `tesseract` with English and
//! `pdftoppm` on PATH: Debian's tesseract-ocr, tesseract-ocr-eng,
//! poppler-utils). `QUARRY_OCR_PAGES=N` reads only the first N pages.

mod common;

#[path = "../tests/support/scans.rs"]
mod scans;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use quarry::ingest::ocr::{OcrMode, OcrSpec};
use quarry::ingest::{ingest_file, IngestSpec};

fn spec(mode: OcrMode) -> IngestSpec {
    IngestSpec {
        ocr: OcrSpec {
            mode,
            ..OcrSpec::default()
        },
        ..IngestSpec::default()
    }
}

/// Runs `tesseract` on each image, `jobs` at a time, as quarry calls it
/// (hOCR to standard output, one thread each); wall seconds.
fn tesseract_alone(images: &[PathBuf], jobs: usize, dpi: u32) -> f64 {
    let t = Instant::now();
    for batch in images.chunks(jobs) {
        let children: Vec<_> = batch
            .iter()
            .map(|p| {
                Command::new("tesseract")
                    .arg(p)
                    .arg("stdout")
                    .args(["-l", "eng", "--dpi", &dpi.to_string(), "hocr"])
                    .env("OMP_THREAD_LIMIT", "1")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("tesseract")
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
    }
    t.elapsed().as_secs_f64()
}

/// The text of one page of a document read with `spec`.
fn page_texts(path: &Path, spec: &IngestSpec) -> Vec<String> {
    let doc = ingest_file(path, spec).unwrap();
    let pages = doc.pages.unwrap_or(0) as usize;
    let mut out = vec![String::new(); pages];
    for b in &doc.blocks {
        if let Some(p) = b.page {
            let t = &mut out[p as usize - 1];
            t.push_str(doc.block_text(b));
            t.push('\n');
        }
    }
    out
}

fn main() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n_pages: u32 = lopdf::Document::load(scans::paper())
        .unwrap()
        .get_pages()
        .len() as u32;
    let n: u32 = std::env::var("QUARRY_OCR_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n_pages)
        .min(n_pages);
    println!(
        "input: {} pages {}-{} at 300 dpi grey; {cores} cores",
        scans::paper().display(),
        1,
        n
    );
    // The same pixels for both: PGM files for tesseract alone, and the
    // image-only PDF quarry reads them from.
    let mut images = Vec::new();
    let mut scans_ = Vec::new();
    for p in 1..=n {
        let pgm = scans::render(p, 300, None);
        let f = d.join(format!("page{p}.pgm"));
        std::fs::write(&f, &pgm).unwrap();
        images.push(f);
        let (w, h, px) = scans::pgm(&pgm);
        scans_.push(scans::Scan::Grey(px, w, h));
    }
    let pdf = d.join("scanned.pdf");
    std::fs::write(&pdf, scans::image_pdf(scans_)).unwrap();

    // One warm-up of each (Tesseract loads its model on every start).
    tesseract_alone(&images[..1], 1, 300);
    let t = Instant::now();
    let doc = ingest_file(&pdf, &spec(OcrMode::Auto)).unwrap();
    let quarry_s = t.elapsed().as_secs_f64();
    assert_eq!(doc.extractor.as_deref(), Some("pdf+ocr"), "{:?}", doc.error);
    let alone_par = tesseract_alone(&images, cores, 300);
    let alone_seq = tesseract_alone(&images, 1, 300);
    let rate = |s: f64| n as f64 / s;
    println!(
        "quarry (documents over the image-only PDF, pages in parallel): {quarry_s:.2} s, {:.2} pages/s",
        rate(quarry_s)
    );
    println!(
        "tesseract alone, {cores} at once:                         {alone_par:.2} s, {:.2} pages/s  (quarry's overhead {:+.1}%)",
        rate(alone_par),
        (quarry_s / alone_par - 1.0) * 100.0
    );
    println!(
        "tesseract alone, one at a time:                    {alone_seq:.2} s, {:.2} pages/s",
        rate(alone_seq)
    );

    // What was read, page by page, against the text layer.
    let truth = page_texts(&scans::paper(), &spec(OcrMode::Never));
    let read = page_texts(&pdf, &spec(OcrMode::Auto));
    let (mut found, mut all) = (0.0, 0usize);
    for p in 0..n as usize {
        let k = scans::words(&truth[p]).len();
        let r = scans::recall(&truth[p], &read[p]);
        found += r * k as f64;
        all += k;
        println!("  page {}: word recall {r:.4} of {k} words", p + 1);
    }
    println!(
        "word recall, all pages: {:.4} of {all} words",
        found / all.max(1) as f64
    );

    // Born-digital PDFs: ocr=auto only looks for scanned pages.
    let papers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/rct_baseline/pdf");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&papers)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut pages = 0u32;
    for f in &files {
        pages += ingest_file(f, &spec(OcrMode::Never))
            .unwrap()
            .pages
            .unwrap_or(0);
    }
    for round in 0..2 {
        for mode in [OcrMode::Never, OcrMode::Auto] {
            let t = Instant::now();
            for f in &files {
                let doc = ingest_file(f, &spec(mode)).unwrap();
                assert_eq!(doc.extractor.as_deref(), Some("pdf"));
            }
            let s = t.elapsed().as_secs_f64();
            if round == 1 {
                println!(
                    "born-digital, {} papers, {pages} pages, ocr={}: {s:.2} s, {:.1} pages/s",
                    files.len(),
                    mode.as_str(),
                    pages as f64 / s
                );
            }
        }
    }
}
