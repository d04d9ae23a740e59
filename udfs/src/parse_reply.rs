//! `parse_reply(text, schema)`: a model's reply read the way a careful person
//! would, and nothing repaired. The value is the first fenced ```json or
//! ```yaml block that parses and has the shape the JSON schema asks for;
//! when no block does, the whole text read as JSON. Every problem is a row
//! with where, problem and severity: a block that cannot be parsed (with the
//! parser's line), a block that is not closed (a cut-off answer), a key the
//! schema does not have, a required key that is missing, a value of the
//! wrong type. Problems of blocks passed over are warnings once a later block
//! is read.

use std::sync::{Arc, LazyLock};

#[cfg(feature = "sql")]
use datafusion::arrow::array::{ArrayRef, ListBuilder, StringBuilder, StructBuilder};
#[cfg(feature = "sql")]
use datafusion::arrow::datatypes::{DataType, Field, Fields};
#[cfg(feature = "sql")]
use datafusion::common::{exec_err, Result};
#[cfg(feature = "sql")]
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};
use serde_json::Value;

#[cfg(feature = "sql")]
use crate::util::two_strings;

/// One thing wrong with a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where: `line 4`, `block 2 (line 3)`, `key n`.
    pub place: String,
    /// What is wrong.
    pub problem: String,
    /// `error` or `warning`.
    pub severity: &'static str,
}

/// A reply as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// The value, when one could be read.
    pub value: Option<Value>,
    /// `json` or `yaml`.
    pub format: Option<&'static str>,
    /// Everything wrong, in order.
    pub problems: Vec<Problem>,
}

struct Block {
    lang: String,
    body: String,
    line: usize,
    closed: bool,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut cur: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(b) = cur.as_mut() {
            if t.starts_with("```") && t.trim_end() == "```" {
                b.closed = true;
                out.push(cur.take().expect("open block"));
            } else {
                b.body.push_str(line);
                b.body.push('\n');
            }
        } else if let Some(rest) = t.strip_prefix("```") {
            cur = Some(Block {
                lang: rest.trim().to_ascii_lowercase(),
                body: String::new(),
                line: i + 1,
                closed: false,
            });
        }
    }
    out.extend(cur);
    out
}

fn err(place: impl Into<String>, problem: impl Into<String>) -> Problem {
    Problem {
        place: place.into(),
        problem: problem.into(),
        severity: "error",
    }
}

fn warn(place: impl Into<String>, problem: impl Into<String>) -> Problem {
    Problem {
        place: place.into(),
        problem: problem.into(),
        severity: "warning",
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_ok(v: &Value, ty: &str) -> bool {
    let k = kind(v);
    k == ty || (ty == "number" && k == "integer")
}

fn allowed_types(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    }
}

/// Whether a parsed value has the top-level shape the schema asks for.
fn shape_ok(v: &Value, schema: &Value) -> bool {
    let tys = allowed_types(schema);
    tys.is_empty() || tys.iter().any(|t| type_ok(v, t))
}

/// The problems of a value against a schema (keys and types, one level deep
/// for objects, enums checked).
fn check(v: &Value, schema: &Value, problems: &mut Vec<Problem>) {
    let (Some(obj), Some(props)) = (v.as_object(), schema["properties"].as_object()) else {
        return;
    };
    for k in obj.keys().filter(|k| !props.contains_key(*k)) {
        let p = if schema["additionalProperties"] == Value::Bool(false) {
            err(format!("key {k}"), "the schema has no such key")
        } else {
            warn(format!("key {k}"), "the schema has no such key")
        };
        problems.push(p);
    }
    for k in schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !obj.contains_key(k) {
            problems.push(err(format!("key {k}"), "missing: the schema requires it"));
        }
    }
    for (k, val) in obj {
        let Some(s) = props.get(k) else { continue };
        let tys = allowed_types(s);
        if !tys.is_empty() && !tys.iter().any(|t| type_ok(val, t)) {
            problems.push(err(
                format!("key {k}"),
                format!(
                    "expected {}, got {} {}",
                    tys.join(" or "),
                    kind(val),
                    short(val)
                ),
            ));
        } else if let Some(e) = s["enum"].as_array() {
            if !val.is_null() && !e.contains(val) {
                problems.push(err(
                    format!("key {k}"),
                    format!("{} is not one of {}", short(val), Value::Array(e.clone())),
                ));
            }
        }
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

fn parse_as(lang: &str, body: &str) -> std::result::Result<(Value, &'static str), (usize, String)> {
    if lang == "yaml" || lang == "yml" {
        serde_norway::from_str::<Value>(body)
            .map(|v| (v, "yaml"))
            .map_err(|e| (e.location().map_or(0, |l| l.line()), e.to_string()))
    } else {
        serde_json::from_str::<Value>(body)
            .map(|v| (v, "json"))
            .map_err(|e| (e.line(), e.to_string()))
    }
}

/// Reads `text` against `schema` (a JSON schema; `Value::Null` for none).
pub fn parse_reply(text: &str, schema: &Value) -> Reading {
    let mut problems = Vec::new();
    let last_line = text.lines().count().max(1);
    for (i, b) in blocks(text).iter().enumerate() {
        let n = i + 1;
        let place = format!("block {n} (line {})", b.line);
        if !matches!(b.lang.as_str(), "json" | "yaml" | "yml" | "") {
            continue;
        }
        if !b.closed {
            problems.push(err(
                &place,
                "the block is not closed: the answer was cut off",
            ));
        }
        let lang = if b.lang.is_empty() {
            "json"
        } else {
            b.lang.as_str()
        };
        match parse_as(lang, &b.body) {
            Err((line, msg)) => problems.push(err(
                format!("line {}", (b.line + line.max(1)).min(last_line)),
                format!("{place}: cannot be read as {lang}: {msg}"),
            )),
            Ok((v, format)) if b.closed && shape_ok(&v, schema) => {
                for p in &mut problems {
                    p.severity = "warning";
                }
                check(&v, schema, &mut problems);
                return Reading {
                    value: Some(v),
                    format: Some(format),
                    problems,
                };
            }
            Ok((v, _)) if b.closed => problems.push(err(
                &place,
                format!(
                    "has the wrong shape: expected {}, got {}",
                    allowed_types(schema).join(" or "),
                    kind(&v)
                ),
            )),
            Ok(_) => {}
        }
    }
    let whole = text.trim();
    match serde_json::from_str::<Value>(whole) {
        Ok(v) if shape_ok(&v, schema) => {
            check(&v, schema, &mut problems);
            Reading {
                value: Some(v),
                format: Some("json"),
                problems,
            }
        }
        Ok(v) => {
            problems.push(err(
                "reply",
                format!(
                    "has the wrong shape: expected {}, got {}",
                    allowed_types(schema).join(" or "),
                    kind(&v)
                ),
            ));
            Reading {
                value: None,
                format: None,
                problems,
            }
        }
        Err(e) => {
            if problems.is_empty() {
                let what = if e.is_eof() {
                    "it ends early (cut off?)"
                } else {
                    "it is not JSON"
                };
                problems.push(err(format!("line {}", e.line()), format!("no fenced json or yaml block, and the whole reply cannot be read: {what}: {e}")));
            }
            Reading {
                value: None,
                format: None,
                problems,
            }
        }
    }
}

/// `json_field(json, key)`: one key of a JSON object as text (strings
/// unquoted, other values as JSON); NULL when absent, null or not an object.
pub fn json_field(json: &str, key: &str) -> Option<String> {
    let v: Value = serde_json::from_str(json).ok()?;
    match v.get(key)? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

#[cfg(feature = "sql")]
static PROBLEM: LazyLock<Fields> = LazyLock::new(|| {
    Fields::from(vec![
        Field::new("where", DataType::Utf8, false),
        Field::new("problem", DataType::Utf8, false),
        Field::new("severity", DataType::Utf8, false),
    ])
});

#[cfg(feature = "sql")]
fn out_fields() -> Fields {
    Fields::from(vec![
        Field::new("value", DataType::Utf8, true),
        Field::new("format", DataType::Utf8, true),
        Field::new(
            "problems",
            DataType::List(Arc::new(Field::new_struct("item", PROBLEM.clone(), true))),
            true,
        ),
    ])
}

#[cfg(feature = "sql")]
pub use adapter::{JsonField, ParseReply};

/// The DataFusion adapter (with the `sql` feature).
#[cfg(feature = "sql")]
mod adapter {
    use super::*;

    /// The SQL function `parse_reply(text, json_schema)`.
    #[derive(Debug, PartialEq, Eq, Hash)]
    pub struct ParseReply {
        signature: Signature,
    }

    impl Default for ParseReply {
        fn default() -> Self {
            Self {
                signature: Signature::any(2, Volatility::Immutable),
            }
        }
    }

    impl ScalarUDFImpl for ParseReply {
        fn name(&self) -> &str {
            "parse_reply"
        }

        fn signature(&self) -> &Signature {
            &self.signature
        }

        fn return_type(&self, _: &[DataType]) -> Result<DataType> {
            Ok(DataType::Struct(out_fields()))
        }

        fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let rows = args.number_rows;
            let (text, schema) =
                two_strings(&args.args, rows, "parse_reply", ["text", "json_schema"])?;
            let mut values = StringBuilder::new();
            let mut formats = StringBuilder::new();
            let mut probs = ListBuilder::new(StructBuilder::from_fields(PROBLEM.clone(), 0))
                .with_field(Arc::new(Field::new_struct("item", PROBLEM.clone(), true)));
            let mut nulls = Vec::with_capacity(rows);
            let mut last_schema: Option<(String, Value)> = None;
            for i in 0..rows {
                use datafusion::arrow::array::Array;
                if text.is_null(i) {
                    values.append_null();
                    formats.append_null();
                    probs.append_null();
                    nulls.push(false);
                    continue;
                }
                let s = if schema.is_null(i) {
                    ""
                } else {
                    schema.value(i)
                };
                if last_schema.as_ref().is_none_or(|(k, _)| k != s) {
                    let v = if s.trim().is_empty() {
                        Value::Null
                    } else {
                        match serde_json::from_str(s) {
                            Ok(v) => v,
                            Err(e) => {
                                return exec_err!("parse_reply: json_schema is not valid JSON: {e}")
                            }
                        }
                    };
                    last_schema = Some((s.to_string(), v));
                }
                let r = parse_reply(text.value(i), &last_schema.as_ref().expect("set above").1);
                values.append_option(r.value.map(|v| v.to_string()));
                formats.append_option(r.format);
                for p in &r.problems {
                    let sb = probs.values();
                    sb.field_builder::<StringBuilder>(0)
                        .expect("where")
                        .append_value(&p.place);
                    sb.field_builder::<StringBuilder>(1)
                        .expect("problem")
                        .append_value(&p.problem);
                    sb.field_builder::<StringBuilder>(2)
                        .expect("severity")
                        .append_value(p.severity);
                    sb.append(true);
                }
                probs.append(true);
                nulls.push(true);
            }
            let cols: Vec<ArrayRef> = vec![
                Arc::new(values.finish()),
                Arc::new(formats.finish()),
                Arc::new(probs.finish()),
            ];
            Ok(ColumnarValue::Array(Arc::new(
                datafusion::arrow::array::StructArray::try_new(
                    out_fields(),
                    cols,
                    Some(nulls.into()),
                )?,
            )))
        }
    }

    /// The SQL function `json_field(json, key)`.
    #[derive(Debug, PartialEq, Eq, Hash)]
    pub struct JsonField {
        signature: Signature,
    }

    impl Default for JsonField {
        fn default() -> Self {
            Self {
                signature: Signature::any(2, Volatility::Immutable),
            }
        }
    }

    impl ScalarUDFImpl for JsonField {
        fn name(&self) -> &str {
            "json_field"
        }

        fn signature(&self) -> &Signature {
            &self.signature
        }

        fn return_type(&self, _: &[DataType]) -> Result<DataType> {
            Ok(DataType::Utf8)
        }

        fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            use datafusion::arrow::array::{Array, StringArray};
            let rows = args.number_rows;
            let (json, key) = two_strings(&args.args, rows, "json_field", ["json", "key"])?;
            let out: StringArray = (0..rows)
                .map(|i| {
                    if json.is_null(i) || key.is_null(i) {
                        None
                    } else {
                        json_field(json.value(i), key.value(i))
                    }
                })
                .collect();
            Ok(ColumnarValue::Array(Arc::new(out)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type":"object","properties":{"design":{"type":["string","null"]},"n":{"type":["integer","null"]}},"required":["design","n"]})
    }

    #[test]
    fn the_first_block_that_reads_wins_and_earlier_failures_become_warnings() {
        let t = "Here you go:\n```json\n{\"design\": \"RCT\", n: 3}\n```\nSorry, again:\n```json\n{\"design\": \"RCT\", \"n\": 120}\n```\n";
        let r = parse_reply(t, &schema());
        assert_eq!(r.value, Some(json!({"design":"RCT","n":120})));
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.problems[0].severity, "warning");
        assert_eq!(r.problems[0].place, "line 3");
    }

    #[test]
    fn yaml_blocks_are_read() {
        let r = parse_reply("```yaml\ndesign: cohort\nn: 40\n```", &schema());
        assert_eq!(
            (r.value, r.format),
            (Some(json!({"design":"cohort","n":40})), Some("yaml"))
        );
    }

    #[test]
    fn a_cut_off_block_is_a_problem_and_nothing_is_repaired() {
        let r = parse_reply("```json\n{\"design\": \"RCT\", \"n\": 1", &schema());
        assert_eq!(r.value, None);
        assert!(
            r.problems.iter().any(|p| p.problem.contains("not closed")),
            "{:?}",
            r.problems
        );
        assert!(
            r.problems
                .iter()
                .any(|p| p.problem.contains("cannot be read as json")),
            "{:?}",
            r.problems
        );
    }

    #[test]
    fn keys_and_types_are_checked() {
        let r = parse_reply("{\"design\": 3, \"extra\": 1}", &schema());
        let got: Vec<(&str, &str)> = r
            .problems
            .iter()
            .map(|p| (p.place.as_str(), p.severity))
            .collect();
        assert_eq!(
            got,
            vec![
                ("key extra", "warning"),
                ("key n", "error"),
                ("key design", "error")
            ]
        );
        assert!(r.problems[2]
            .problem
            .contains("expected string or null, got integer 3"));
    }

    #[test]
    fn prose_is_one_problem() {
        let r = parse_reply("The design was an RCT.", &schema());
        assert_eq!(r.value, None);
        assert_eq!(r.problems.len(), 1);
        assert!(r.problems[0]
            .problem
            .contains("no fenced json or yaml block"));
    }

    #[test]
    fn json_field_reads_one_key() {
        assert_eq!(
            json_field(r#"{"a":"x","b":2,"c":null}"#, "a").as_deref(),
            Some("x")
        );
        assert_eq!(json_field(r#"{"a":"x","b":2}"#, "b").as_deref(), Some("2"));
        assert_eq!(json_field(r#"{"c":null}"#, "c"), None);
        assert_eq!(json_field("not json", "a"), None);
    }
}
