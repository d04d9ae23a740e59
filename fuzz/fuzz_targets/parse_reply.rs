//! The reader of a model's reply: any text against a schema gives a value
//! or the problems that stopped it, never a panic and never silence.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use quarry_udfs::parse_reply::{json_field, parse_reply};
use serde_json::{json, Value};

static SCHEMAS: LazyLock<Vec<Value>> = LazyLock::new(|| {
    vec![
        Value::Null,
        json!({"type": "object", "properties": {
            "include": {"type": "boolean"}, "reason": {"type": "string"}},
            "required": ["include", "reason"]}),
        json!({"type": "object", "properties": {
            "n": {"type": ["integer", "null"]}, "quote": {"type": "string"},
            "arms": {"type": "array", "items": {"type": "string"}}},
            "required": ["n", "quote"], "additionalProperties": false}),
    ]
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for schema in SCHEMAS.iter() {
        let r = parse_reply(&text, schema);
        assert!(
            r.value.is_some() || !r.problems.is_empty(),
            "no value and no problem named for {text:?}"
        );
    }
    let _ = json_field(&text, "reason");
});
