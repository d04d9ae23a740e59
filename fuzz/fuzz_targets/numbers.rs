//! The number and quote kernels that decide whether a value is verified:
//! `numbers_in`, `verify_quote`, `parse_value`, `locate_quote` and
//! `quote_match`, on any quote, text, value and type. The input is split
//! at NUL bytes into the quote, the text, the value and the type's name.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quarry_udfs::locate_quote::locate_quote;
use quarry_udfs::numbers_in::{numbers_in, Lang};
use quarry_udfs::parse_value::{parse_value, FieldType};
use quarry_udfs::quote_match::quote_match;
use quarry_udfs::verify_quote::verify_quote;

fuzz_target!(|data: &[u8]| {
    let p = quarry_fuzz::parts(data, 4);
    let (quote, text, value, kind) = (&p[0], &p[1], &p[2], &p[3]);
    let chars = text.chars().count();

    for lang in [
        None,
        Lang::parse("en"),
        Lang::parse("fr"),
        Lang::parse("de"),
    ] {
        let _ = numbers_in(text, lang);
    }

    let kind = (!kind.is_empty()).then_some(kind.as_str());
    let v = verify_quote(quote, text, value, kind);
    assert!(
        (0.0..=1.0).contains(&v.matched),
        "matched {} outside [0, 1]",
        v.matched
    );
    if let (Some(a), Some(b)) = (v.char_start, v.char_end) {
        assert!(
            a <= b && b <= chars,
            "verify_quote span {a}..{b} outside {chars} chars"
        );
    }
    assert!(
        !v.verified || v.char_start.is_some(),
        "verified without a place in the text"
    );

    let m = quote_match(quote, text);
    assert!((0.0..=1.0).contains(&m), "quote_match {m} outside [0, 1]");
    if let Some(l) = locate_quote(quote, text, 0.8) {
        assert!(l.char_start <= l.match_start && l.match_start <= l.match_end);
        assert!(
            l.match_end <= l.char_end && l.char_end <= chars,
            "locate_quote outside the text"
        );
    }

    let types = [
        FieldType::Integer,
        FieldType::Number,
        FieldType::Boolean,
        FieldType::Date,
        FieldType::String,
        FieldType::List,
    ];
    for ty in types.iter().cloned().chain(kind.and_then(FieldType::parse)) {
        let _ = parse_value(value, &ty);
    }
});
