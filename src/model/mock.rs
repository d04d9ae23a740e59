//! A deterministic, rule-based client for documentation and unit tests. It
//! never touches the network; the paths users take are tested against a
//! real HTTP server as well.

use serde_json::{json, Value};

use super::{ModelClient, ModelError, Reply, Request};

/// Answers by rules: the first rule whose needle occurs in the last user
/// message wins; otherwise a JSON value that fits the requested schema, or
/// an echo of the prompt.
#[derive(Debug, Clone, Default)]
pub struct MockClient {
    rules: Vec<(String, String)>,
}

impl MockClient {
    /// A mock with no rules.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replies `reply` to any prompt containing `needle`.
    pub fn rule(mut self, needle: impl Into<String>, reply: impl Into<String>) -> Self {
        self.rules.push((needle.into(), reply.into()));
        self
    }
}

/// The smallest value of a JSON schema: first enum value, null where null
/// is allowed, empty string, zero, false, empty array, and objects with
/// every listed property.
pub fn example_of(schema: &Value) -> Value {
    if let Some(e) = schema["enum"].as_array().and_then(|e| e.first()) {
        return e.clone();
    }
    let ty = match &schema["type"] {
        Value::String(s) => s.as_str(),
        // A nullable value is "nothing stated".
        Value::Array(a) if a.iter().any(|t| t == "null") => "null",
        Value::Array(a) => a.iter().find_map(Value::as_str).unwrap_or("null"),
        _ if schema["properties"].is_object() => "object",
        _ => "string",
    };
    match ty {
        "object" => {
            let mut o = serde_json::Map::new();
            if let Some(p) = schema["properties"].as_object() {
                for (k, v) in p {
                    o.insert(k.clone(), example_of(v));
                }
            }
            Value::Object(o)
        }
        "array" => json!([]),
        "integer" | "number" => json!(0),
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => json!(""),
    }
}

#[async_trait::async_trait]
impl ModelClient for MockClient {
    fn endpoint(&self) -> String {
        "mock://".into()
    }

    fn is_live(&self) -> bool {
        false
    }

    async fn complete(&self, req: &Request) -> Result<Reply, ModelError> {
        let prompt = req
            .messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map_or("", |m| m.content.as_str());
        let text = self
            .rules
            .iter()
            .find(|(n, _)| prompt.contains(n.as_str()))
            .map(|(_, r)| r.clone())
            .unwrap_or_else(|| match &req.schema {
                Some(s) => example_of(s).to_string(),
                None => format!(
                    "mock reply to: {}",
                    prompt.chars().take(60).collect::<String>()
                ),
            });
        let tokens_out = (text.len() as u64).div_ceil(4);
        Ok(Reply {
            text,
            tokens_in: Some(req.estimated_tokens_in()),
            tokens_out: Some(tokens_out),
            finish_reason: Some("stop".into()),
        })
    }
}
