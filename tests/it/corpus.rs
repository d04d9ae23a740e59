//! Ingestion over real folders: statuses, dedup, nothing lost, the store.

use std::sync::atomic::Ordering;

use datafusion::arrow::array::AsArray;

use crate::common::{corpus, ctx, sql, table, write_docx};

/// A folder with the cases the foundation issue names.
fn mixed_folder() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(
        p.join("report.txt"),
        "The 2019 cohort had 482 participants.\n\nFollow-up was 12 months.\n",
    )
    .unwrap();
    std::fs::write(
        p.join("report_copy.txt"),
        "The 2019 cohort had 482 participants.\n\nFollow-up was 12 months.\n",
    )
    .unwrap();
    write_docx(
        &p.join("trial.docx"),
        r#"<w:p><w:r><w:t>Randomised trial of vitamin D.</w:t></w:r></w:p>"#,
    );
    std::fs::copy(corpus().join("PMC3751573.html"), p.join("page.html")).unwrap();
    std::fs::write(p.join("empty.txt"), b"").unwrap();
    std::fs::write(
        p.join("scan.txt"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0",
    )
    .unwrap();
    std::fs::write(
        p.join("legacy.doc"),
        b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1rest",
    )
    .unwrap();
    d
}

#[tokio::test]
async fn every_file_is_one_row_with_its_status() {
    let d = mixed_folder();
    let c = ctx(None);
    let q = format!(
        "SELECT file_name, status, duplicate_of IS NOT NULL AS dup, error IS NOT NULL AS has_error \
         FROM documents('{}/') ORDER BY file_name",
        d.path().display()
    );
    let got = table(&c, &q).await;
    let want = "\
+-----------------+--------------+-------+-----------+
| file_name       | status       | dup   | has_error |
+-----------------+--------------+-------+-----------+
| empty.txt       | failed       | false | true      |
| legacy.doc      | no_extractor | false | true      |
| page.html       | ok           | false | false     |
| report.txt      | ok           | false | false     |
| report_copy.txt | duplicate    | true  | false     |
| scan.txt        | failed       | false | true      |
| trial.docx      | ok           | false | false     |
+-----------------+--------------+-------+-----------+";
    assert_eq!(got, want);
    // The messages say what to do.
    let errs = table(
        &c,
        &format!(
            "SELECT file_name, error FROM documents('{}/') WHERE error IS NOT NULL ORDER BY 1",
            d.path().display()
        ),
    )
    .await;
    assert!(errs.contains("empty (0 bytes)"), "{errs}");
    assert!(errs.contains("content is a PNG image"), "{errs}");
    assert!(errs.contains("save it as .docx"), "{errs}");
}

#[tokio::test]
async fn a_duplicate_has_the_same_id_and_no_chunks() {
    let d = mixed_folder();
    let c = ctx(None);
    let q = format!(
        "SELECT count(DISTINCT document_id) AS ids, count(*) AS n FROM documents('{}/') WHERE file_name LIKE 'report%'",
        d.path().display()
    );
    assert!(table(&c, &q).await.contains("| 1   | 2 |"));
    let q = format!(
        "SELECT DISTINCT document_id FROM chunks('{}/', 'paragraph', 50)",
        d.path().display()
    );
    let b = sql(&c, &q).await.unwrap();
    let ids: usize = b.iter().map(|b| b.num_rows()).sum();
    assert_eq!(
        ids, 3,
        "report, trial and page have chunks; the copy does not"
    );
}

#[tokio::test]
async fn document_id_is_sha256_of_the_cleaned_text() {
    let d = mixed_folder();
    let c = ctx(None);
    let q = format!(
        "SELECT document_id = encode(sha256(text), 'hex') AS same FROM documents('{}/') WHERE status = 'ok'",
        d.path().display()
    );
    let b = sql(&c, &q).await;
    match b {
        Ok(b) => {
            for batch in b {
                assert!(batch.column(0).as_boolean().iter().all(|v| v == Some(true)));
            }
        }
        // Without crypto functions compiled in, check in Rust instead.
        Err(_) => {
            use sha2::{Digest, Sha256};
            let b = sql(
                &c,
                &format!(
                    "SELECT document_id, text FROM documents('{}/') WHERE status = 'ok'",
                    d.path().display()
                ),
            )
            .await
            .unwrap();
            for batch in b {
                let ids = batch.column(0).as_string::<i32>();
                let texts = batch.column(1).as_string::<i32>();
                for i in 0..batch.num_rows() {
                    assert_eq!(
                        ids.value(i),
                        hex::encode(Sha256::digest(texts.value(i).as_bytes()))
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn recursive_is_off_by_default_and_inventory_says_so() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("2019")).unwrap();
    std::fs::write(
        d.path().join("2019/report.txt"),
        "The 2019 cohort had 482 participants.",
    )
    .unwrap();
    std::fs::write(d.path().join("top.md"), "# Top\n\nText.").unwrap();
    let c = ctx(None);
    let src = d.path().display();
    let inv = table(
        &c,
        &format!("SELECT folder, file_name, status FROM inventory('{src}/') ORDER BY 1"),
    )
    .await;
    assert!(
        inv.contains("| 2019   | report.txt | not_scanned |"),
        "{inv}"
    );
    let n = table(
        &c,
        &format!("SELECT count(*) AS n FROM documents('{src}/')"),
    )
    .await;
    assert!(n.contains("| 1 |"), "{n}");
    let n = table(
        &c,
        &format!("SELECT count(*) AS n FROM documents('{src}/', 'recursive=true')"),
    )
    .await;
    assert!(n.contains("| 2 |"), "{n}");
    let n = table(
        &c,
        &format!("SELECT count(*) AS n FROM documents('{src}/**/*.txt')"),
    )
    .await;
    assert!(n.contains("| 1 |"), "glob: {n}");
}

#[tokio::test]
async fn a_second_query_over_an_unchanged_corpus_parses_nothing() {
    let d = mixed_folder();
    let store = tempfile::tempdir().unwrap();
    let src = d.path().display().to_string();
    let q = format!("SELECT file_name, status, tokens, document_id, cached FROM documents('{src}/') ORDER BY file_name");
    let first = sql(&ctx(Some(store.path())), &q).await.unwrap();
    let before = quarry::ingest::PARSE_COUNT.load(Ordering::SeqCst);
    let second = sql(&ctx(Some(store.path())), &q).await.unwrap();
    let after = quarry::ingest::PARSE_COUNT.load(Ordering::SeqCst);
    // Other tests parse concurrently, so compare what *this* query reports.
    let cached: Vec<bool> = second
        .iter()
        .flat_map(|b| b.column(4).as_boolean().iter().map(|v| v.unwrap()))
        .collect();
    let statuses: Vec<String> = second
        .iter()
        .flat_map(|b| {
            b.column(1)
                .as_string::<i32>()
                .iter()
                .map(|v| v.unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    for (c, s) in cached.iter().zip(&statuses) {
        // .doc is refused by name, never read, so there is nothing to cache.
        assert!(*c || s == "no_extractor", "status {s} was parsed again");
    }
    assert!(after >= before);
    let strip = |b: &[datafusion::arrow::array::RecordBatch]| {
        datafusion::arrow::util::pretty::pretty_format_batches(
            &b.iter()
                .map(|b| b.project(&[0, 1, 2, 3]).unwrap())
                .collect::<Vec<_>>(),
        )
        .unwrap()
        .to_string()
    };
    assert_eq!(
        strip(&first),
        strip(&second),
        "the cache gives the same rows"
    );
    // An edited file is parsed again.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(
        d.path().join("report.txt"),
        "Edited: the 2019 cohort had 483 participants.\n",
    )
    .unwrap();
    let third = table(
        &ctx(Some(store.path())),
        &format!("SELECT cached FROM documents('{src}/') WHERE file_name = 'report.txt'"),
    )
    .await;
    assert!(third.contains("false"), "{third}");
    let copy = table(
        &ctx(Some(store.path())),
        &format!("SELECT status FROM documents('{src}/') WHERE file_name = 'report_copy.txt'"),
    )
    .await;
    assert!(
        copy.contains("| ok "),
        "the copy is no longer a duplicate: {copy}"
    );
}

#[tokio::test]
async fn latin1_and_utf16_text_never_fail() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("latin1.txt"),
        b"Caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve fa\xe7ade.",
    )
    .unwrap();
    let mut u16 = vec![0xFF, 0xFE];
    u16.extend("Größe: 12 cm".encode_utf16().flat_map(|u| u.to_le_bytes()));
    std::fs::write(d.path().join("utf16.txt"), u16).unwrap();
    let t = table(
        &ctx(None),
        &format!(
            "SELECT file_name, status, text FROM documents('{}/') ORDER BY 1",
            d.path().display()
        ),
    )
    .await;
    assert!(t.contains("Café crème brûlée, naïve façade."), "{t}");
    assert!(t.contains("Größe: 12 cm"), "{t}");
}

#[tokio::test]
async fn huge_files_and_zip_bombs_fail_with_a_message() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("big.txt"), vec![b'a'; 5000]).unwrap();
    // A DOCX whose document.xml inflates far beyond the limit.
    {
        use std::io::Write;
        let f = std::fs::File::create(d.path().join("bomb.docx")).unwrap();
        let mut z = zip::ZipWriter::new(f);
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        z.start_file("word/document.xml", o).unwrap();
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..70 {
            z.write_all(&chunk).unwrap();
        }
        z.finish().unwrap();
    }
    assert!(std::fs::metadata(d.path().join("bomb.docx")).unwrap().len() < 1 << 20);
    let t = table(
        &ctx(None),
        &format!(
            "SELECT file_name, status, error FROM documents('{}/', 'max_bytes=4096') ORDER BY 1",
            d.path().display()
        ),
    )
    .await;
    assert!(t.contains("| big.txt   | failed |"), "{t}");
    assert!(t.contains("over the 4096-byte limit"), "{t}");
    let t = table(
        &ctx(None),
        &format!(
            "SELECT file_name, status, error FROM documents('{}/') ORDER BY 1",
            d.path().display()
        ),
    )
    .await;
    assert!(
        t.contains("| bomb.docx | failed | word/document.xml inflates to more than 64 MiB"),
        "{t}"
    );
}

#[tokio::test]
async fn blocks_keep_sections_tables_and_cells() {
    let c = ctx(None);
    let t = table(
        &c,
        "SELECT kind, count(*) AS n FROM blocks('examples/corpus/') WHERE kind IN ('heading', 'table') GROUP BY kind ORDER BY kind",
    )
    .await;
    assert!(
        t.contains("| heading |") && t.contains("| table   |"),
        "{t}"
    );
    // The HTML page's navigation and script are gone; its headings are sections.
    let t = table(
        &c,
        "SELECT count(*) AS n FROM blocks('examples/corpus/PMC3751573.html') WHERE text LIKE '%analytics%' OR text LIKE 'Home |%'",
    )
    .await;
    assert!(t.contains("| 0 |"), "{t}");
    let t = table(
        &c,
        "SELECT section FROM blocks('examples/corpus/PMC3751573.html') WHERE kind = 'paragraph' AND text LIKE '%externship%' LIMIT 1",
    )
    .await;
    assert!(
        !t.contains("|         |"),
        "paragraphs carry a section: {t}"
    );
    // Table cells are recorded with row and column.
    let t = table(
        &c,
        "SELECT max(c['row']) > 3 AS rows, max(c['col']) > 1 AS cols FROM \
         (SELECT unnest(cells) AS c FROM blocks('examples/corpus/PMC3321528.docx') WHERE kind = 'table')",
    )
    .await;
    assert!(t.contains("| true | true |"), "{t}");
}

/// Serves fixed responses over HTTP on 127.0.0.1 until dropped.
async fn http_server() -> (u16, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let n = sock.read(&mut buf).await.unwrap_or(0);
                let req = String::from_utf8_lossy(&buf[..n]).to_string();
                let resp = if req.starts_with("GET /trial.html ") {
                    let body =
                        "<html><body><h1>Trial</h1><p>We enrolled 40 adults.</p></body></html>";
                    format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
                } else {
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .to_string()
                };
                let _ = sock.write_all(resp.as_bytes()).await;
            });
        }
    });
    (port, handle)
}

#[tokio::test]
async fn one_document_over_http() {
    let (port, server) = http_server().await;
    let c = ctx(None);
    let t = table(&c, &format!("SELECT file_name, ext, status, text FROM documents('http://127.0.0.1:{port}/trial.html')")).await;
    assert!(t.contains("| trial.html | html | ok     | Trial"), "{t}");
    assert!(t.contains("We enrolled 40 adults."), "{t}");
    let t = table(
        &c,
        &format!("SELECT status, error FROM documents('http://127.0.0.1:{port}/missing.html')"),
    )
    .await;
    assert!(t.contains("failed") && t.contains("404"), "{t}");
    server.abort();
}

#[tokio::test]
async fn non_ascii_and_spaced_file_names_open_as_single_files() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("My Folder");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("résumé final.txt"), "Résumé of the trial.").unwrap();
    std::fs::write(dir.join("a#b%20c.txt"), "Odd characters.").unwrap();
    let c = ctx(None);
    for name in ["résumé final.txt", "a#b%20c.txt"] {
        let t = table(
            &c,
            &format!(
                "SELECT file_name, status FROM documents('{}')",
                dir.join(name).display()
            ),
        )
        .await;
        assert!(t.contains(&format!("| {name} | ok ")), "{t}");
    }
    let t = table(
        &c,
        &format!("SELECT count(*) AS n FROM documents('{}/')", dir.display()),
    )
    .await;
    assert!(t.contains("| 2 |"), "{t}");
}

#[tokio::test]
async fn corrupt_encrypted_and_mislabelled_word_files_fail_with_advice() {
    let d = tempfile::tempdir().unwrap();
    let good = std::fs::read(corpus().join("PMC3321528.docx")).unwrap();
    std::fs::write(d.path().join("truncated.docx"), &good[..good.len() / 2]).unwrap();
    std::fs::write(
        d.path().join("locked.docx"),
        b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1 encrypted package",
    )
    .unwrap();
    std::fs::write(
        d.path().join("notes.docx"),
        "just some text saved with the wrong name",
    )
    .unwrap();
    std::fs::copy(corpus().join("PMC3321528.docx"), d.path().join("fine.docx")).unwrap();
    let t = table(
        &ctx(None),
        &format!(
            "SELECT file_name, status, error FROM documents('{}/') ORDER BY 1",
            d.path().display()
        ),
    )
    .await;
    let row = |name: &str| {
        t.lines()
            .find(|l| l.contains(name))
            .unwrap_or_default()
            .to_string()
    };
    assert!(row("fine.docx").contains("| ok "), "{t}");
    assert!(
        row("truncated.docx").contains("failed")
            && row("truncated.docx").contains("re-save it from Word"),
        "{t}"
    );
    assert!(row("locked.docx").contains("password"), "{t}");
    assert!(row("notes.docx").contains("not a Word document"), "{t}");
}
