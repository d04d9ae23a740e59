//! The jats reader, whole: the path a corpus file takes through ingestion.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    quarry_fuzz::ingest("nxml", data);
});
