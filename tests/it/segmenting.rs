//! Segmenters on the real example corpus: the cap always holds and every
//! chunk is the exact substring its offsets name.

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Int64Type;

use crate::common::{ctx, sql, table};

const METHODS: [&str; 6] = [
    "fixed",
    "paragraph",
    "sentence",
    "recursive",
    "structural",
    "page",
];

#[tokio::test]
async fn no_chunk_exceeds_max_tokens_for_any_segmenter() {
    let c = ctx(None);
    for m in METHODS {
        for (cap, overlap) in [(20, 0), (120, 0), (120, 30), (700, 100)] {
            let q = format!(
                "SELECT count(*) AS n, max(tokens) AS mx, sum(CASE WHEN token_count(text) > {cap} THEN 1 ELSE 0 END) AS over \
                 FROM chunks('examples/corpus/', '{m}', {cap}, {overlap})"
            );
            let b = sql(&c, &q).await.unwrap();
            let n = b[0].column(0).as_primitive::<Int64Type>().value(0);
            let mx = b[0].column(1).as_primitive::<Int64Type>().value(0);
            let over = b[0].column(2).as_primitive::<Int64Type>().value(0);
            assert!(n > 0, "{m} {cap}: no chunks");
            assert!(
                mx <= cap,
                "{m} cap {cap} overlap {overlap}: a chunk of {mx} tokens"
            );
            assert_eq!(over, 0, "{m} cap {cap}: token_count disagrees with the cap");
        }
    }
}

#[tokio::test]
async fn chunk_offsets_point_at_the_chunk_text() {
    let c = ctx(None);
    for m in METHODS {
        for cap in [40, 300] {
            let q = format!(
                "SELECT count(*) AS n, \
                        sum(CASE WHEN substr(d.text, ch.char_start + 1, ch.char_end - ch.char_start) = ch.text THEN 0 ELSE 1 END) AS bad \
                 FROM chunks('examples/corpus/', '{m}', {cap}) ch JOIN documents('examples/corpus/') d USING (document_id)"
            );
            let b = sql(&c, &q).await.unwrap();
            let n = b[0].column(0).as_primitive::<Int64Type>().value(0);
            let bad = b[0].column(1).as_primitive::<Int64Type>();
            assert!(n > 0);
            assert!(
                bad.is_null(0) || bad.value(0) == 0,
                "{m} {cap}: {} of {n} chunks are not their substring",
                bad.value(0)
            );
        }
    }
}

#[tokio::test]
async fn blocks_offsets_point_at_the_block_text() {
    let q = "SELECT count(*) AS n, sum(CASE WHEN substr(d.text, b.char_start + 1, b.char_end - b.char_start) = b.text THEN 0 ELSE 1 END) AS bad \
             FROM blocks('examples/corpus/') b JOIN documents('examples/corpus/') d USING (document_id)";
    let t = table(&ctx(None), q).await;
    assert!(t.contains("| 0   |"), "{t}");
}

#[tokio::test]
async fn page_falls_back_to_paragraph_without_pages_and_says_so() {
    let t = table(
        &ctx(None),
        "SELECT DISTINCT method FROM chunks('examples/corpus/PMC4486927.txt', 'page', 200)",
    )
    .await;
    assert!(t.contains("page->paragraph"), "{t}");
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("paged.txt"),
        "Page one text.\u{000C}Page two text.\u{000C}Page three.",
    )
    .unwrap();
    let t = table(
        &ctx(None),
        &format!("SELECT method, page_start, page_end, text FROM chunks('{}/', 'page', 200) ORDER BY chunk_id", d.path().display()),
    )
    .await;
    assert!(
        t.contains("| page   | 2          | 2        | Page two text. |"),
        "{t}"
    );
}

#[tokio::test]
async fn structural_never_merges_across_sections() {
    let q = "SELECT count(*) AS n FROM chunks('examples/corpus/PMC3546023.md', 'structural', 2000) c \
             JOIN blocks('examples/corpus/PMC3546023.md') b USING (document_id) \
             WHERE b.kind = 'heading' AND b.char_start > c.char_start AND b.char_start < c.char_end";
    assert!(table(&ctx(None), q).await.contains("| 0 |"));
}

#[tokio::test]
async fn fixed_and_recursive_carry_no_page_or_section() {
    for m in ["fixed", "recursive"] {
        let t = table(
            &ctx(None),
            &format!("SELECT count(section) AS s, count(page_start) AS p FROM chunks('examples/corpus/', '{m}', 200)"),
        )
        .await;
        assert!(t.contains("| 0 | 0 |"), "{m}: {t}");
    }
}

#[tokio::test]
async fn segment_scalar_matches_the_table_function_on_plain_text() {
    let c = ctx(None);
    let t = table(
        &c,
        "SELECT c['chunk_id'] AS id, c['tokens'] AS tokens, c['text'] AS text FROM \
         (SELECT unnest(segment('One short sentence. Another one here.\n\nA second paragraph.', 'sentence', 6)) AS c)",
    )
    .await;
    assert!(t.contains("| 0  | 4      | One short sentence. |"), "{t}");
    let b = sql(&c, "SELECT segment(NULL, 'fixed', 10) AS s")
        .await
        .unwrap();
    assert!(b[0].column(0).is_null(0));
    let e = sql(&c, "SELECT segment('x', 'bogus', 10)")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown method 'bogus'"), "{e}");
}
