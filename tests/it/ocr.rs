//! OCR on real scans: pages of the bundled trial paper rasterised by
//! poppler's `pdftoppm` and wrapped back into image-only PDFs (as JPEG, as
//! Flate-compressed grey pixels, as bilevel pixels, and as a filter chain
//! only a renderer draws), a PNG and a two-page TIFF; each read back by
//! Tesseract and its words compared with the original page's text layer.
//! Needs `tesseract` (with English) and `pdftoppm` on PATH, as `.ci/run`
//! installs them.

use std::path::Path;

use lopdf::Document;

use crate::common::{ctx, quarry, strings, table};

#[path = "../support/scans.rs"]
mod scans;
use scans::{
    bilevel, image_pdf, missed, paper, pgm, recall, render, stamped_pdf, tiff, words, Scan,
};

/// The text of a document's blocks on `page`, read with `options`.
async fn page_text(
    c: &datafusion::prelude::SessionContext,
    file: &Path,
    page: u32,
    options: &str,
) -> String {
    let b = crate::common::sql(
        c,
        &format!(
            "SELECT text FROM blocks('{}', '{options}') WHERE page = {page} ORDER BY block_id",
            file.display()
        ),
    )
    .await
    .unwrap();
    strings(&b, "text")
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn scanned_pages_and_images_read_back_by_ocr_with_the_words_of_the_text_layer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Three pages of the trial paper, each scanned a different way, and a
    // fourth stored so that only the renderer can draw it.
    let (w1, h1, g1) = pgm(&render(1, 300, None));
    let jpeg1 = render(1, 300, Some("-jpeg"));
    let (w3, h3, g3) = pgm(&render(3, 300, None));
    let (w5, h5, g5) = pgm(&render(5, 300, None));
    let (w8, h8, _) = pgm(&render(8, 200, None));
    let jpeg8 = render(8, 200, Some("-jpeg"));
    let scans = image_pdf(vec![
        Scan::Jpeg(jpeg1, w1, h1),
        Scan::Grey(g3, w3, h3),
        Scan::Bilevel(bilevel(w5, h5, &g5), w5, h5),
    ]);
    std::fs::write(d.join("scanned.pdf"), &scans).unwrap();
    std::fs::write(
        d.join("rendered.pdf"),
        image_pdf(vec![Scan::Chained(jpeg8, w8, h8)]),
    )
    .unwrap();
    drop(g1);
    // A PNG of page 2, and a two-page TIFF of pages 4 and 7.
    std::fs::write(d.join("page2.png"), render(2, 300, Some("-png"))).unwrap();
    let p4 = pgm(&render(4, 300, None));
    let p7 = pgm(&render(7, 300, None));
    std::fs::write(d.join("pages4and7.tif"), tiff(&[p4, p7], 300)).unwrap();

    let c = ctx(None);
    let t = table(
        &c,
        &format!(
            "SELECT file_name, extractor, status, pages, error FROM documents('{}') ORDER BY file_name",
            d.display()
        ),
    )
    .await;
    let row = |name: &str| {
        t.lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name}: {t}"))
            .to_string()
    };
    for (name, extractor, pages) in [
        ("scanned.pdf", "pdf+ocr", "3"),
        ("rendered.pdf", "pdf+ocr", "1"),
        ("page2.png", "image+ocr", "1"),
        ("pages4and7.tif", "image+ocr", "2"),
    ] {
        let r = row(name);
        assert!(
            r.contains(&format!("| {extractor} "))
                && r.contains("| ok ")
                && r.contains(&format!("| {pages} ")),
            "{name}: {t}"
        );
        assert!(r.contains("read by OCR, mean word confidence"), "{t}");
    }

    // Every scanned page holds the words of the original's text layer.
    let original = paper();
    let mut seen = Vec::new();
    for (file, page, of) in [
        ("scanned.pdf", 1, 1),
        ("scanned.pdf", 2, 3),
        ("scanned.pdf", 3, 5),
        ("rendered.pdf", 1, 8),
        ("page2.png", 1, 2),
        ("pages4and7.tif", 1, 4),
        ("pages4and7.tif", 2, 7),
    ] {
        let truth = page_text(&c, &original, of, "ocr=never").await;
        let read = page_text(&c, &d.join(file), page, "").await;
        let (lost, r) = missed(&truth, &read);
        seen.push(format!(
            "{file} p{page} (original p{of}): {r:.4} of {} words",
            words(&truth).len()
        ));
        assert!(words(&truth).len() > 200, "{file} p{page}: {truth}");
        assert!(
            r >= 0.95,
            "{file} page {page} recalls {r:.4} of the text layer's words:\n{}\nnot found: {lost:?}\nread:\n{read}",
            seen.join("\n")
        );
    }
    println!("{}", seen.join("\n"));

    // OCR'd blocks keep their pages and carry a confidence; a text
    // layer's carry none.
    let b = table(
        &c,
        &format!(
            "SELECT page, count(*) AS n, min(ocr_confidence) > 0.3 AS lo, max(ocr_confidence) <= 1.0 AS hi, count(ocr_confidence) = count(*) AS all_ocr FROM blocks('{}') GROUP BY page ORDER BY page",
            d.join("scanned.pdf").display()
        ),
    )
    .await;
    for p in 1..=3 {
        assert!(
            b.lines()
                .any(|l| l.starts_with(&format!("| {p} "))
                    && l.ends_with("| true | true | true    |")),
            "{b}"
        );
    }
    let none = table(
        &c,
        &format!(
            "SELECT count(ocr_confidence) AS n FROM blocks('{}')",
            original.display()
        ),
    )
    .await;
    assert!(none.contains("| 0 "), "{none}");

    // ocr=never: the scans are unread, as before OCR; the images too.
    let never = table(
        &c,
        &format!(
            "SELECT file_name, status, error FROM documents('{}', 'ocr=never') ORDER BY file_name",
            d.display()
        ),
    )
    .await;
    for name in ["scanned.pdf", "rendered.pdf", "page2.png", "pages4and7.tif"] {
        let r = never.lines().find(|l| l.contains(name)).unwrap();
        assert!(
            r.contains("| no_text ") && r.contains("ocr=never"),
            "{never}"
        );
    }
}

#[tokio::test]
async fn ocr_always_reads_a_born_digital_page_from_its_rendering() {
    // A one-page PDF with a real text layer: ocr=always sets it aside and
    // reads the rendered page; the words agree with the text layer.
    let dir = tempfile::tempdir().unwrap();
    let mut doc = Document::load(paper()).unwrap();
    let pages: Vec<u32> = doc
        .get_pages()
        .keys()
        .copied()
        .filter(|&n| n != 3)
        .collect();
    doc.delete_pages(&pages);
    let one = dir.path().join("page3.pdf");
    doc.save(&one).unwrap();
    let c = ctx(None);
    let t = table(
        &c,
        &format!(
            "SELECT extractor, status, pages FROM documents('{}', 'ocr=always')",
            one.display()
        ),
    )
    .await;
    assert!(t.contains("| pdf+ocr ") && t.contains("| ok "), "{t}");
    let truth = page_text(&c, &one, 1, "ocr=never").await;
    let read = page_text(&c, &one, 1, "ocr=always").await;
    let r = recall(&truth, &read);
    assert!(r >= 0.95, "{r}");
    let n = table(
        &c,
        &format!(
            "SELECT count(*) - count(ocr_confidence) AS text_layer FROM blocks('{}', 'ocr=always')",
            one.display()
        ),
    )
    .await;
    assert!(n.contains("| 0 "), "{n}");
    // auto leaves a born-digital page to its text layer.
    let auto = table(
        &c,
        &format!("SELECT extractor FROM documents('{}')", one.display()),
    )
    .await;
    assert!(auto.contains("| pdf "), "{auto}");
}

#[tokio::test]
async fn an_unreadable_scan_is_a_note_and_a_missing_tesseract_says_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Page 1 a real scan, page 2 an image whose JPEG is junk.
    let (w, h, _) = pgm(&render(1, 150, None));
    let good = render(1, 150, Some("-jpeg"));
    let pdf = image_pdf(vec![
        Scan::Jpeg(good, w, h),
        Scan::Jpeg(b"\xFF\xD8\xFF this is not a JPEG at all".to_vec(), w, h),
    ]);
    std::fs::write(d.join("half.pdf"), &pdf).unwrap();
    std::fs::write(
        d.join("junk.pdf"),
        image_pdf(vec![Scan::Jpeg(b"\xFF\xD8\xFFjunk".to_vec(), 100, 100)]),
    )
    .unwrap();
    std::fs::write(d.join("page.png"), render(1, 100, Some("-png"))).unwrap();
    // A scan under a library's stamp (a line of real text): read by OCR,
    // the stamp kept.
    let (w3, h3, g3) = pgm(&render(3, 200, None));
    std::fs::write(
        d.join("stamped.pdf"),
        stamped_pdf(
            vec![Scan::Grey(g3, w3, h3)],
            Some("Downloaded from the library on 5 December 2026"),
        ),
    )
    .unwrap();
    let c = ctx(None);
    let t = table(
        &c,
        &format!(
            "SELECT file_name, status, error FROM documents('{}') ORDER BY file_name",
            d.display()
        ),
    )
    .await;
    let row = |name: &str| {
        t.lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name}: {t}"))
            .to_string()
    };
    assert!(row("half.pdf").contains("| ok "), "{t}");
    let errs = crate::common::sql(
        &c,
        &format!(
            "SELECT file_name, error FROM documents('{}') ORDER BY file_name",
            d.display()
        ),
    )
    .await
    .unwrap();
    let errors = strings(&errs, "error");
    let names = strings(&errs, "file_name");
    let error_of = |name: &str| {
        let i = names
            .iter()
            .position(|n| n.as_deref() == Some(name))
            .unwrap();
        errors[i].clone().unwrap_or_default()
    };
    assert!(
        error_of("half.pdf").contains("page 2: OCR could not read it"),
        "{}",
        error_of("half.pdf")
    );
    assert!(row("junk.pdf").contains("| no_text "), "{t}");
    assert!(row("stamped.pdf").contains("| ok "), "{t}");
    let stamped = page_text(&c, &d.join("stamped.pdf"), 1, "").await;
    assert!(stamped.contains("Downloaded from the library"), "{stamped}");
    let r = recall(&page_text(&c, &paper(), 3, "ocr=never").await, &stamped);
    assert!(r >= 0.95, "{r}: {stamped}");
    assert!(
        error_of("junk.pdf").contains("OCR could not read"),
        "{}",
        error_of("junk.pdf")
    );

    // No Tesseract: ocr=always is refused before anything is read, auto
    // leaves scans unread with a note naming what to install, and an image
    // is one failed row saying so.
    let missing = "/nonexistent/tesseract";
    let q = |opts: &str| {
        quarry()
            .env("QUARRY_TESSERACT", missing)
            .args([
                "sql",
                "--no-store",
                "--format",
                "json",
                "-c",
                &format!(
                    "SELECT file_name, status, error FROM documents('{}'{opts}) ORDER BY file_name",
                    d.display()
                ),
            ])
            .output()
            .unwrap()
    };
    let always = q(", 'ocr=always'");
    assert!(!always.status.success());
    let err = String::from_utf8_lossy(&always.stderr);
    assert!(
        err.contains("ocr=always") && err.contains("apt-get install tesseract-ocr"),
        "{err}"
    );
    let auto = q("");
    assert!(
        auto.status.success(),
        "{}",
        String::from_utf8_lossy(&auto.stderr)
    );
    let out = String::from_utf8_lossy(&auto.stdout);
    let v: serde_json::Value =
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let rows = v.as_array().unwrap();
    let by = |n: &str| rows.iter().find(|r| r["file_name"] == n).unwrap().clone();
    assert_eq!(by("junk.pdf")["status"], "no_text");
    assert!(
        by("junk.pdf")["error"]
            .as_str()
            .unwrap()
            .contains("apt-get install tesseract-ocr"),
        "{out}"
    );
    assert_eq!(by("page.png")["status"], "failed");
    assert!(
        by("page.png")["error"]
            .as_str()
            .unwrap()
            .contains("apt-get install tesseract-ocr"),
        "{out}"
    );
    // A language Tesseract has no data for is refused, naming the package.
    let lang = quarry()
        .args([
            "sql",
            "--no-store",
            "-c",
            &format!(
                "SELECT count(*) FROM documents('{}', 'ocr_lang=xyz')",
                d.display()
            ),
        ])
        .output()
        .unwrap();
    assert!(!lang.status.success());
    let err = String::from_utf8_lossy(&lang.stderr);
    assert!(err.contains("tesseract-ocr-xyz"), "{err}");
}
