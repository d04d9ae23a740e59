//! The PDF extractor on real PDFs: ones the tests write with lopdf (two
//! columns, running heads, headings, a hyphenated line end, a ruled table,
//! no pages, only an image, encrypted), a truncated copy of a real paper,
//! and the real trial papers of tests/data/rct_baseline/pdf/; and the
//! same papers' JATS XML, whose tables are checked cell by cell.

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};

use crate::common::{ctx, root, table};

/// One piece of text on a page: x, y from the top, size, text, bold.
type Text<'a> = (f32, f32, f32, &'a str, bool);

/// A page: its texts and its horizontal rules (x0, x1, y from the top).
type Page<'a> = (Vec<Text<'a>>, Vec<(f32, f32, f32)>);

/// Writes a PDF whose pages hold the given texts (Helvetica, no embedded
/// fonts), the given horizontal rules (x0, x1, y from the top) and, where
/// `image` is set, a small image and no text.
fn write_pdf(pages: &[Page], image: bool) -> Vec<u8> {
    write_pdf_turned(pages, image, false)
}

/// As [`write_pdf`]; with `sideways`, every page's content is turned 90
/// degrees (text running bottom to top, as a landscape table is set).
fn write_pdf_turned(pages: &[Page], image: bool, sideways: bool) -> Vec<u8> {
    write_pdf_tracked(pages, image, sideways, &|_| 0.0)
}

/// As [`write_pdf_turned`], each text set with the character spacing
/// (`Tc`, points added after every glyph) that `tracking` gives it.
fn write_pdf_tracked(
    pages: &[Page],
    image: bool,
    sideways: bool,
    tracking: &dyn Fn(&str) -> f32,
) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let regular = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding"});
    let bold = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica-Bold", "Encoding" => "WinAnsiEncoding"});
    let img = doc.add_object(Stream::new(
        dictionary! {"Type" => "XObject", "Subtype" => "Image", "Width" => 2, "Height" => 2, "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8},
        vec![0, 255, 255, 0],
    ));
    let mut kids = Vec::new();
    for (texts, rules) in pages {
        let mut ops = Vec::new();
        if sideways {
            ops.push(Operation::new("q", vec![]));
            ops.push(Operation::new(
                "cm",
                vec![
                    0.into(),
                    1.into(),
                    (-1).into(),
                    0.into(),
                    612.into(),
                    0.into(),
                ],
            ));
        }
        for &(x, y, size, text, b) in texts {
            ops.push(Operation::new("BT", vec![]));
            ops.push(Operation::new(
                "Tf",
                vec![(if b { "F2" } else { "F1" }).into(), size.into()],
            ));
            ops.push(Operation::new("Tc", vec![tracking(text).into()]));
            ops.push(Operation::new("Td", vec![x.into(), (792.0 - y).into()]));
            ops.push(Operation::new("Tj", vec![Object::string_literal(text)]));
            ops.push(Operation::new("ET", vec![]));
        }
        for &(x0, x1, y) in rules {
            ops.push(Operation::new(
                "re",
                vec![x0.into(), (792.0 - y).into(), (x1 - x0).into(), 0.5.into()],
            ));
            ops.push(Operation::new("f", vec![]));
        }
        if sideways {
            ops.push(Operation::new("Q", vec![]));
        }
        if image {
            ops.push(Operation::new("q", vec![]));
            ops.push(Operation::new(
                "cm",
                vec![
                    500.into(),
                    0.into(),
                    0.into(),
                    700.into(),
                    50.into(),
                    50.into(),
                ],
            ));
            ops.push(Operation::new("Do", vec!["Im1".into()]));
            ops.push(Operation::new("Q", vec![]));
        }
        let content = doc.add_object(Stream::new(
            dictionary! {},
            Content { operations: ops }.encode().unwrap(),
        ));
        kids.push(Object::Reference(doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Contents" => content,
            "Resources" => dictionary! {
                "Font" => dictionary! {"F1" => regular, "F2" => bold},
                "XObject" => dictionary! {"Im1" => img},
            },
        })));
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {"Type" => "Pages", "Kids" => kids, "Count" => count}),
    );
    let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// `pdf` written as `name` in a new temporary folder (kept while the
/// returned guard lives), and its path as a table function's source.
fn saved(name: &str, pdf: Vec<u8>) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, pdf).unwrap();
    (dir, path.display().to_string())
}

/// Lines of a column: one piece of text per line, 12 pt apart.
fn column<'a>(x: f32, y: f32, lines: &[&'a str]) -> Vec<Text<'a>> {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| (x, y + 12.0 * i as f32, 10.0, *l, false))
        .collect()
}

/// Three pages of two columns under a running head, with page numbers.
fn two_column_paper() -> Vec<u8> {
    let mut pages = Vec::new();
    for p in 1..=3 {
        let mut t: Vec<Text> = vec![
            (
                50.0,
                40.0,
                8.0,
                "Journal of Quarry Tests 2026; 12: 1-9",
                false,
            ),
            (300.0, 770.0, 8.0, ["1", "2", "3"][p - 1], false),
        ];
        if p == 1 {
            t.push((50.0, 80.0, 12.0, "Methods", true));
        }
        let left = [
            [
                "Patients were randomised to the left",
                "column treat-",
                "ment arm first and this line ends",
                "the left column of page one.",
            ],
            [
                "Page two reads its left column",
                "before its right column and",
                "this is still the left side",
                "of the second page.",
            ],
            [
                "Page three has a left column",
                "that is read first and then",
                "the right column follows it",
                "as in every journal.",
            ],
        ][p - 1];
        let right = [
            [
                "The right column of page one",
                "comes after the whole left",
                "column has been read in turn",
                "by the reader of the paper.",
            ],
            [
                "Right side of page two is",
                "read after the left side and",
                "never interleaved with it",
                "line by line.",
            ],
            [
                "The right column of page three",
                "closes the paper with its",
                "last words in their order",
                "at the very end.",
            ],
        ][p - 1];
        t.extend(column(50.0, 100.0, &left));
        t.extend(column(320.0, 100.0, &right));
        pages.push((t, vec![]));
    }
    write_pdf(&pages, false)
}

#[tokio::test]
async fn two_columns_are_read_in_turn_without_running_heads() {
    let (_dir, src) = saved("paper.pdf", two_column_paper());
    let c = ctx(None);
    let t = table(
        &c,
        &format!("SELECT status, pages, error FROM documents('{src}')"),
    )
    .await;
    assert!(t.contains("| ok     | 3     |       |"), "{t}");
    let b = crate::common::sql(
        &c,
        &format!("SELECT page, section, kind, text FROM blocks('{src}') ORDER BY block_id"),
    )
    .await
    .unwrap();
    let pretty = datafusion::arrow::util::pretty::pretty_format_batches(&b)
        .unwrap()
        .to_string();
    let text: String = crate::common::sql(
        &c,
        &format!("SELECT string_agg(text, ' ' ORDER BY block_id) AS t FROM blocks('{src}')"),
    )
    .await
    .unwrap()
    .iter()
    .map(|b| datafusion::arrow::util::display::array_value_to_string(b.column(0), 0).unwrap())
    .collect();
    // Reading order: every left column before its right column, page by page.
    let order = [
        "Patients were randomised",
        "of page one.",
        "The right column of page one",
        "Page two reads",
        "Right side of page two",
        "Page three has",
        "The right column of page three",
        "at the very end.",
    ];
    let mut last = 0;
    for o in order {
        let at = text
            .find(o)
            .unwrap_or_else(|| panic!("{o} missing: {text}"));
        assert!(at >= last, "{o} out of order: {text}");
        last = at;
    }
    // The line-end hyphen is joined; the running head and page numbers are gone.
    assert!(text.contains("column treatment arm"), "{text}");
    assert!(!text.contains("Journal of Quarry Tests"), "{text}");
    assert!(!text.contains(" 2 ") && !text.ends_with(" 3"), "{text}");
    // Every block has its page; after the heading, every block its section.
    assert!(!pretty.contains("|      |"), "{pretty}");
    let t = table(
        &c,
        &format!(
            "SELECT count(*) AS n FROM blocks('{src}') WHERE section IS DISTINCT FROM 'Methods'"
        ),
    )
    .await;
    assert!(t.contains("| 0 |"), "{t}\n{pretty}");
    let t = table(
        &c,
        &format!("SELECT kind FROM blocks('{src}') WHERE text = 'Methods'"),
    )
    .await;
    assert!(t.contains("| heading |"), "{t}");
    // The cleaner log counts what the running-head step removed.
    let t = table(
        &c,
        &format!("SELECT chars_removed['headers_footers'] > 0 AS removed FROM documents('{src}')"),
    )
    .await;
    assert!(t.contains("| true    |"), "{t}");
}

#[tokio::test]
async fn a_ruled_table_becomes_cells_with_indent_and_bold() {
    let rows: Vec<Text> = vec![
        (60.0, 108.0, 9.0, "Characteristic", true),
        (260.0, 108.0, 9.0, "Placebo (n=50)", true),
        (420.0, 108.0, 9.0, "Drug (n=51)", true),
        (60.0, 126.0, 9.0, "Age, years", false),
        (260.0, 126.0, 9.0, "56.1 (9.2)", false),
        (420.0, 126.0, 9.0, "55.8 (10.1)", false),
        (60.0, 138.0, 9.0, "Sex, n (%)", false),
        (70.0, 150.0, 9.0, "Male", false),
        (260.0, 150.0, 9.0, "20 (40)", false),
        (420.0, 150.0, 9.0, "22 (43)", false),
        (70.0, 162.0, 9.0, "Female", false),
        (260.0, 162.0, 9.0, "30 (60)", false),
        (420.0, 162.0, 9.0, "29 (57)", false),
        (60.0, 174.0, 9.0, "BMI, kg/m2", false),
        (260.0, 174.0, 9.0, "27.0 (4.1)", false),
        (420.0, 174.0, 9.0, "26.4 (3.9)", false),
    ];
    let mut texts: Vec<Text> = vec![(
        60.0,
        80.0,
        10.0,
        "Table 1 Baseline characteristics of the participants",
        true,
    )];
    texts.extend(rows);
    texts.extend(column(
        60.0,
        220.0,
        &[
            "Values are mean (SD) or number (%). The table is followed by text",
            "that is not part of it.",
        ],
    ));
    let pdf = write_pdf(
        &[(
            texts,
            vec![
                (55.0, 520.0, 96.0),
                (55.0, 520.0, 114.0),
                (55.0, 520.0, 180.0),
            ],
        )],
        false,
    );
    let (_dir, src) = saved("t.pdf", pdf);
    let c = ctx(None);
    let t = table(
        &c,
        &format!("SELECT kind, page FROM blocks('{src}') ORDER BY block_id"),
    )
    .await;
    assert!(
        t.contains("| caption   | 1    |") && t.contains("| table     | 1    |"),
        "{t}"
    );
    let t = table(
        &c,
        &format!(
            "SELECT c['row'] AS r, c['col'] AS k, c['col_span'] AS span, c['indent'] AS indent, c['bold'] AS bold, c['text'] AS text \
             FROM (SELECT unnest(cells) AS c FROM blocks('{src}') WHERE kind = 'table') ORDER BY 1, 2"
        ),
    )
    .await;
    for row in [
        "| 0 | 0 | 1    | 0      | true  | Characteristic |",
        "| 0 | 1 | 1    | 0      | true  | Placebo (n=50) |",
        "| 0 | 2 | 1    | 0      | true  | Drug (n=51)    |",
        "| 1 | 0 | 1    | 0      | false | Age, years     |",
        "| 1 | 1 | 1    | 0      | false | 56.1 (9.2)     |",
        "| 2 | 0 | 1    | 0      | false | Sex, n (%)     |",
        "| 3 | 0 | 1    | 1      | false | Male           |",
        "| 3 | 2 | 1    | 0      | false | 22 (43)        |",
        "| 4 | 0 | 1    | 1      | false | Female         |",
        "| 5 | 2 | 1    | 0      | false | 26.4 (3.9)     |",
    ] {
        assert!(t.contains(row), "{row}\n{t}");
    }
    // The text after the table stays text.
    let t = table(
        &c,
        &format!("SELECT kind FROM blocks('{src}') WHERE text LIKE 'Values are%'"),
    )
    .await;
    assert!(t.contains("| paragraph |"), "{t}");
}

fn encrypted(user: &str) -> Vec<u8> {
    use lopdf::{EncryptionState, EncryptionVersion, Permissions};
    let mut doc = Document::load_mem(&two_column_paper()).unwrap();
    let id = Object::string_literal(b"0123456789abcdef".to_vec());
    doc.trailer.set("ID", Object::Array(vec![id.clone(), id]));
    let state = EncryptionState::try_from(EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner",
        user_password: user,
        key_length: 128,
        permissions: Permissions::all(),
    })
    .unwrap();
    doc.encrypt(&state).unwrap();
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

#[tokio::test]
async fn broken_pdfs_are_one_row_each_with_advice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let real = std::fs::read(root().join("examples/corpus/PMC3751573.pdf")).unwrap();
    std::fs::write(d.join("truncated.pdf"), &real[..real.len() / 3]).unwrap();
    std::fs::write(
        d.join("garbage.pdf"),
        b"%PDF-1.4\n this is not a PDF at all \x00\x01\x02\n%%EOF\n",
    )
    .unwrap();
    std::fs::write(d.join("locked.pdf"), encrypted("user")).unwrap();
    std::fs::write(d.join("open_locked.pdf"), encrypted("")).unwrap();
    std::fs::write(d.join("no_pages.pdf"), write_pdf(&[], false)).unwrap();
    std::fs::write(
        d.join("scan.pdf"),
        write_pdf(&[(vec![], vec![]), (vec![], vec![])], true),
    )
    .unwrap();
    std::fs::write(d.join("renamed.pdf"), b"Plain text that someone named .pdf").unwrap();
    std::fs::write(d.join("good.pdf"), two_column_paper()).unwrap();
    let c = ctx(None);
    let t = table(
        &c,
        &format!(
            "SELECT file_name, status, pages, error FROM documents('{}') ORDER BY file_name",
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
    assert!(row("good.pdf").contains("| ok "), "{t}");
    assert!(
        row("open_locked.pdf").contains("| duplicate "),
        "opened with the empty user password, it has the same text as good.pdf: {t}"
    );
    assert!(
        row("locked.pdf").contains("failed") && row("locked.pdf").contains("encrypted"),
        "{t}"
    );
    assert!(
        row("truncated.pdf").contains("failed") && row("truncated.pdf").contains("truncated"),
        "{t}"
    );
    assert!(
        row("garbage.pdf").contains("failed") && row("garbage.pdf").contains("damaged"),
        "{t}"
    );
    assert!(
        row("no_pages.pdf").contains("failed") && row("no_pages.pdf").contains("no pages"),
        "{t}"
    );
    assert!(
        row("scan.pdf").contains("no_text") && row("scan.pdf").contains("OCR"),
        "{t}"
    );
    assert!(
        row("renamed.pdf").contains("failed") && row("renamed.pdf").contains("not a PDF"),
        "{t}"
    );
    assert_eq!(t.lines().filter(|l| l.contains(".pdf")).count(), 8, "{t}");
}

#[tokio::test]
async fn real_trial_papers_have_pages_sections_and_tables() {
    let dir = root().join("tests/data/rct_baseline/pdf");
    let c = ctx(None);
    let src = dir.display().to_string();
    let t = table(&c, &format!("SELECT count(*) AS n, sum(pages) AS pages, count(*) FILTER (WHERE status = 'ok') AS ok FROM documents('{src}')")).await;
    assert!(t.contains("| 8 | 116   | 8  |"), "{t}");
    // Every block has a page; every block after a paper's first heading has a section.
    let t = table(
        &c,
        &format!(
            "SELECT count(*) FILTER (WHERE page IS NULL) AS no_page, \
                    count(*) FILTER (WHERE section IS NULL AND block_id > first_heading) AS no_section, \
                    count(DISTINCT document_id) FILTER (WHERE kind = 'table') AS with_tables \
             FROM (SELECT *, min(block_id) FILTER (WHERE kind = 'heading') OVER (PARTITION BY document_id) AS first_heading FROM blocks('{src}'))"
        ),
    )
    .await;
    assert!(t.contains("| 0       | 0          |"), "{t}");
    let with_tables: i64 = t
        .lines()
        .nth(3)
        .and_then(|l| l.split('|').nth(3))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    assert!(
        with_tables >= 6,
        "tables found in {with_tables} of 8 papers: {t}"
    );
    // Sections are the papers' own headings.
    let t = table(&c, &format!("SELECT count(DISTINCT document_id) AS n FROM blocks('{src}') WHERE kind = 'heading' AND (text ILIKE '%method%' OR text ILIKE '%results%')")).await;
    assert!(t.contains("| 8 |"), "{t}");
}

/// A cell as the JSON records it: text, colspan, rowspan.
type GridCell = (String, i64, i64);

/// JATS article XML: every baseline table of the eight trial papers comes
/// out with the same rows, texts and spans as the cells that
/// tests/data/rct_baseline/table1_cells_from_jats.json records for them.
#[tokio::test]
async fn jats_tables_match_the_recorded_cells() {
    let data = root().join("tests/data/rct_baseline");
    let truth: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(data.join("table1_cells_from_jats.json")).unwrap(),
    )
    .unwrap();
    let c = ctx(None);
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut checked = 0;
    for (pmcid, paper) in truth.as_object().unwrap() {
        let src = data
            .join(format!("jats/{pmcid}.nxml"))
            .display()
            .to_string();
        let batches = crate::common::sql(
            &c,
            &format!(
                "SELECT block_id, c['row'] AS r, c['col'] AS k, c['text'] AS t, c['col_span'] AS cs, c['row_span'] AS rs \
                 FROM (SELECT block_id, unnest(cells) AS c FROM blocks('{src}') WHERE kind = 'table') ORDER BY 1, 2, 3"
            ),
        )
        .await
        .unwrap();
        // block -> rows of (text, colspan, rowspan)
        let mut tables: std::collections::BTreeMap<i64, Vec<Vec<GridCell>>> = Default::default();
        for b in &batches {
            let s = |i: usize, r: usize| {
                datafusion::arrow::util::display::array_value_to_string(b.column(i), r).unwrap()
            };
            for r in 0..b.num_rows() {
                let rows = tables.entry(s(0, r).parse().unwrap()).or_default();
                let row: usize = s(1, r).parse().unwrap();
                while rows.len() <= row {
                    rows.push(Vec::new());
                }
                rows[row].push((
                    norm(&s(3, r)),
                    s(4, r).parse().unwrap(),
                    s(5, r).parse().unwrap(),
                ));
            }
        }
        for t in paper["tables"].as_array().unwrap() {
            let want: Vec<Vec<GridCell>> = t["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| {
                    row.as_array()
                        .unwrap()
                        .iter()
                        .map(|c| {
                            (
                                norm(c["text"].as_str().unwrap()),
                                c["colspan"].as_i64().unwrap(),
                                c["rowspan"].as_i64().unwrap(),
                            )
                        })
                        .collect()
                })
                .collect();
            let found = tables.values().any(|got| *got == want);
            assert!(
                found,
                "{pmcid} {}: no table block has these cells: {want:?}\nblocks: {tables:?}",
                t["label"]
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 13);
}

/// Evidence from a PDF carries the page and section of the quoted span,
/// even when the segmenter keeps no pages (one `recursive` chunk holds both
/// pages here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_from_a_pdf_names_the_page_of_each_quote() {
    use quarry::model::test_server::{Action, Rule, TestServer};
    let srv = TestServer::start(
        vec![Rule {
            needle: "We ran a randomised".into(),
            actions: vec![Action::Reply(
                r#"{"design":"randomised controlled trial","n":120,
                    "design__quote":"We ran a randomised controlled trial.",
                    "n__quote":"We enrolled 120 participants."}"#
                    .into(),
            )],
        }],
        std::time::Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let pages: Vec<Page> = vec![
        (
            vec![
                (50.0, 80.0, 12.0, "Methods", true),
                (
                    50.0,
                    100.0,
                    10.0,
                    "We ran a randomised controlled trial.",
                    false,
                ),
            ],
            vec![],
        ),
        (
            vec![
                (50.0, 80.0, 12.0, "Results", true),
                (50.0, 100.0, 10.0, "We enrolled 120 participants.", false),
            ],
            vec![],
        ),
    ];
    std::fs::write(corpus.join("trial.pdf"), write_pdf(&pages, false)).unwrap();
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        "name = \"pages\"\n[[fields]]\nname = \"design\"\ndescription = \"The study design\"\n[[fields]]\nname = \"n\"\ndescription = \"Number of participants\"\ntype = \"integer\"\n[segment]\nmethod = \"recursive\"\nmax_tokens = 600\n",
    )
    .unwrap();
    let cfg = format!(
        "[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{}\"\n",
        srv.base_url()
    );
    let c = quarry::model::test_server::session_in(dir.path(), &cfg).unwrap();
    let (src, p) = (corpus.display(), proto.display());
    let t = table(
        &c,
        &format!(
            "SELECT field, page, section, verified FROM evidence('{src}', '{p}') ORDER BY field"
        ),
    )
    .await;
    assert_eq!(
        t.trim(),
        "+--------+------+---------+----------+
| field  | page | section | verified |
+--------+------+---------+----------+
| design | 1    | Methods | true     |
| n      | 2    | Results | true     |
+--------+------+---------+----------+"
    );
    assert_eq!(srv.count(), 1);
}

/// A page whose text is set sideways (a landscape table) is turned back and
/// read in order, not dropped.
#[tokio::test]
async fn sideways_text_is_turned_and_read() {
    let texts = column(
        50.0,
        100.0,
        &[
            "Landscape pages hold wide tables",
            "and their text runs bottom to top",
            "but reads like any other page.",
        ],
    );
    let (_dir, src) = saved(
        "landscape.pdf",
        write_pdf_turned(&[(texts, vec![])], false, true),
    );
    let c = ctx(None);
    let t = table(&c, &format!("SELECT status, text FROM documents('{src}')")).await;
    assert!(
        t.contains("| ok     | Landscape pages hold wide tables and their text runs bottom to top but reads like any other page. |"),
        "{t}"
    );
}

#[tokio::test]
async fn letter_spaced_headings_are_read_as_words() {
    // Headings set with 3 pt and 2.5 pt between letters (as journals set
    // "RESEARCH ARTICLE" and "a b s t r a c t"), body text set normally
    // with one-letter words of its own.
    let texts = vec![
        (50.0, 80.0, 11.0, "RESEARCH ARTICLE", true),
        (50.0, 110.0, 10.0, "abstract", false),
        (
            50.0,
            130.0,
            10.0,
            "The device was a 2 m 6 0.5 cm bar and",
            false,
        ),
        (50.0, 142.0, 10.0, "groups A B C were seen at once.", false),
    ];
    let spaced = |t: &str| match t {
        "RESEARCH ARTICLE" => 3.0,
        "abstract" => 2.5,
        _ => 0.0,
    };
    let (_dir, src) = saved(
        "spaced.pdf",
        write_pdf_tracked(&[(texts, vec![])], false, false, &spaced),
    );
    let c = ctx(None);
    let t = table(
        &c,
        &format!("SELECT text FROM blocks('{src}') ORDER BY block_id"),
    )
    .await;
    for want in [
        "| RESEARCH ARTICLE ",
        "| abstract ",
        "The device was a 2 m 6 0.5 cm bar and groups A B C were seen at once.",
    ] {
        assert!(t.contains(want), "{want} missing:\n{t}");
    }
}
