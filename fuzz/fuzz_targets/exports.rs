//! The reference-manager export parsers (RIS, Web of Science, MEDLINE,
//! BibTeX, CSV): any bytes under any of their names give records and
//! `failed` rows that name a line, never a panic. The first byte picks the
//! file's extension.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quarry::records::{read_export, Status};

const EXTS: &[&str] = &["ris", "txt", "nbib", "bib", "csv", "tsv"];

fuzz_target!(|data: &[u8]| {
    let Some((&first, bytes)) = data.split_first() else {
        return;
    };
    let ext = EXTS[first as usize % EXTS.len()];
    let name = format!("export.{ext}");
    for r in read_export(&name, &name, ext, bytes) {
        if r.status == Some(Status::Failed) {
            assert!(
                r.note.as_deref().is_some_and(|e| !e.trim().is_empty()),
                "a failed record without a note"
            );
        }
    }
});
