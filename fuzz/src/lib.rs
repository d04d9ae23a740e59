//! What every fuzz target checks beyond "does not crash": the invariants a
//! caller of quarry relies on, so a wrong answer is a finding too.

use quarry::ingest::ocr::OcrSpec;
use quarry::ingest::{ingest_bytes, Document, IngestSpec, Status};
use quarry::source::Entry;

/// Ingests `data` as a file with extension `ext` (the whole path a corpus
/// file takes: sniff, extract, clean, lay out, hash, count tokens) and
/// checks the document it gives. OCR is off: it runs Tesseract, another
/// program, on a page's image, and would make every input with an image a
/// process started.
pub fn ingest(ext: &str, data: &[u8]) -> Document {
    let name = format!("fuzz.{ext}");
    let entry = Entry::local(std::path::Path::new(&name), data.len() as u64);
    let spec = IngestSpec {
        ocr: OcrSpec::never(),
        ..IngestSpec::default()
    };
    let doc = ingest_bytes(entry, data, &spec);
    check_document(&doc);
    doc
}

/// A document's promises: a failure says why, blocks lie inside the text on
/// character boundaries and in order, and an `ok` document has its hash.
pub fn check_document(doc: &Document) {
    match doc.status {
        Status::Failed | Status::NoExtractor => {
            let msg = doc.error.as_deref().unwrap_or_default();
            assert!(
                !msg.trim().is_empty(),
                "a failed document without a message"
            );
            assert!(
                !msg.contains("crashed"),
                "the extractor panicked (caught): {msg}"
            );
        }
        Status::Ok => assert!(doc.document_id.is_some(), "an ok document without its id"),
        _ => {}
    }
    let mut last = 0;
    for b in &doc.blocks {
        assert!(
            b.start <= b.end && b.end <= doc.text.len(),
            "a block outside the text"
        );
        assert!(b.start >= last, "blocks out of order");
        assert!(
            doc.text.is_char_boundary(b.start) && doc.text.is_char_boundary(b.end),
            "a block cut inside a character"
        );
        last = b.end;
    }
}

/// Splits fuzz input into `n` text parts at NUL bytes (missing parts are
/// empty), decoding each lossily.
pub fn parts(data: &[u8], n: usize) -> Vec<String> {
    let mut out: Vec<String> = data
        .splitn(n, |&b| b == 0)
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    out.resize(n, String::new());
    out
}
