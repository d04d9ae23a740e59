//! The OpenAI-compatible HTTP client: `/chat/completions` and `/responses`,
//! JSON-schema structured output, custom headers, one limiter per endpoint.
//! One `complete` is one attempt; the runtime retries.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use serde_json::{json, Value};

use super::limiter::Limiter;
use super::{Api, EndpointConfig, ModelClient, ModelError, Reply, Request};
use crate::error::{QuarryError, Result};

/// A client for one OpenAI-compatible endpoint.
#[derive(Debug)]
pub struct OpenAiClient {
    cfg: EndpointConfig,
    headers: HeaderMap,
    http: reqwest::Client,
    limiter: Limiter,
}

impl OpenAiClient {
    /// Builds the client; bad header names or values are configuration errors.
    pub fn new(cfg: EndpointConfig) -> Result<Self> {
        let mut headers = HeaderMap::new();
        for (k, v) in cfg.resolved_headers()? {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| QuarryError::Invalid(format!("'{k}' is not a valid header name")))?;
            let mut value = HeaderValue::from_str(&v).map_err(|_| {
                QuarryError::Invalid(format!("the value of header '{k}' is not valid in HTTP"))
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(cfg.max_in_flight.max(1))
            .tcp_nodelay(true)
            .build()
            .map_err(|e| QuarryError::Invalid(format!("cannot build the HTTP client: {e}")))?;
        let limiter = Limiter::new(
            cfg.max_in_flight,
            cfg.requests_per_minute,
            cfg.tokens_per_minute,
        );
        Ok(Self {
            cfg,
            headers,
            http,
            limiter,
        })
    }

    /// The endpoint's configuration.
    pub fn config(&self) -> &EndpointConfig {
        &self.cfg
    }

    fn url(&self, api: Api) -> String {
        let base = self.cfg.base_url.trim_end_matches('/');
        match api {
            Api::Chat => format!("{base}/chat/completions"),
            Api::Responses => format!("{base}/responses"),
        }
    }

    /// OpenAI's own API and its reasoning models want
    /// `max_completion_tokens`; most compatible servers read `max_tokens`.
    fn cap_field(&self, model: &str) -> &'static str {
        let openai = self.cfg.base_url.contains("api.openai.com")
            || self.cfg.base_url.contains(".openai.azure.com");
        let reasoning = ["o1", "o3", "o4", "gpt-5"]
            .iter()
            .any(|p| model.starts_with(p));
        if openai || reasoning {
            "max_completion_tokens"
        } else {
            "max_tokens"
        }
    }

    /// The JSON body of a request.
    pub fn body(&self, req: &Request) -> Value {
        let messages: Vec<Value> = req
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect();
        let mut body = match req.api {
            Api::Chat => {
                let mut b = json!({"model": req.model, "messages": messages});
                b[self.cap_field(&req.model)] = json!(req.max_output);
                if let Some(s) = &req.schema {
                    b["response_format"] = json!({"type": "json_schema",
                        "json_schema": {"name": "reply", "schema": s}});
                }
                b
            }
            Api::Responses => {
                let mut b = json!({"model": req.model, "input": messages,
                    "max_output_tokens": req.max_output, "store": false});
                if let Some(s) = &req.schema {
                    b["text"] =
                        json!({"format": {"type": "json_schema", "name": "reply", "schema": s}});
                }
                b
            }
        };
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        body
    }
}

/// `Retry-After` as seconds or an HTTP date; `retry-after-ms` when sent.
fn retry_after(h: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = h
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_secs_f64((ms / 1000.0).max(0.0)));
    }
    let v = h.get(RETRY_AFTER)?.to_str().ok()?.trim().to_string();
    if let Ok(s) = v.parse::<f64>() {
        return Some(Duration::from_secs_f64(s.max(0.0)));
    }
    let when = chrono::DateTime::parse_from_rfc2822(&v).ok()?;
    let secs = (when.timestamp_millis() - chrono::Utc::now().timestamp_millis()) as f64 / 1000.0;
    Some(Duration::from_secs_f64(secs.max(0.0)))
}

fn snippet(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// Reads a reply body in either API shape. Nothing is repaired: a body that
/// is not the expected JSON is a `Malformed` error quoting where it failed.
pub fn parse_reply(api: Api, body: &str) -> Result<Reply, ModelError> {
    let v: Value = serde_json::from_str(body).map_err(|e| {
        ModelError::Malformed(format!(
            "the body is not valid JSON ({e}; {} bytes{}): {}",
            body.len(),
            if e.is_eof() { ", cut off" } else { "" },
            snippet(body)
        ))
    })?;
    let shape =
        |what: &str| ModelError::Malformed(format!("the reply has no {what}: {}", snippet(body)));
    let u = |k: &str| v["usage"][k].as_u64();
    match api {
        Api::Chat => {
            let choice = v["choices"].get(0).ok_or_else(|| shape("choices[0]"))?;
            let msg = &choice["message"];
            let text = match msg["content"].as_str() {
                Some(t) => t.to_string(),
                None => {
                    if let Some(r) = msg["refusal"].as_str() {
                        return Err(ModelError::Malformed(format!("the model refused: {r}")));
                    }
                    return Err(shape("choices[0].message.content"));
                }
            };
            Ok(Reply {
                text,
                tokens_in: u("prompt_tokens"),
                tokens_out: u("completion_tokens"),
                finish_reason: choice["finish_reason"].as_str().map(str::to_string),
            })
        }
        Api::Responses => {
            let output = v["output"].as_array().ok_or_else(|| shape("output"))?;
            let mut text = String::new();
            let mut found = false;
            for item in output.iter().filter(|i| i["type"] == "message") {
                for c in item["content"].as_array().into_iter().flatten() {
                    match c["type"].as_str() {
                        Some("output_text") => {
                            found = true;
                            text.push_str(c["text"].as_str().unwrap_or_default());
                        }
                        Some("refusal") => {
                            return Err(ModelError::Malformed(format!(
                                "the model refused: {}",
                                c["refusal"].as_str().unwrap_or_default()
                            )))
                        }
                        _ => {}
                    }
                }
            }
            if !found {
                return Err(shape("output message with output_text"));
            }
            let finish = match v["status"].as_str() {
                Some("incomplete") => Some(v["incomplete_details"]["reason"].as_str().map_or(
                    "length".to_string(),
                    |r| {
                        if r == "max_output_tokens" {
                            "length".into()
                        } else {
                            r.to_string()
                        }
                    },
                )),
                Some(s) => Some(if s == "completed" {
                    "stop".into()
                } else {
                    s.to_string()
                }),
                None => None,
            };
            Ok(Reply {
                text,
                tokens_in: u("input_tokens"),
                tokens_out: u("output_tokens"),
                finish_reason: finish,
            })
        }
    }
}

#[async_trait::async_trait]
impl ModelClient for OpenAiClient {
    fn endpoint(&self) -> String {
        self.cfg.base_url.trim_end_matches('/').to_string()
    }

    async fn complete(&self, req: &Request) -> Result<Reply, ModelError> {
        let body = self
            .post(
                self.url(req.api),
                &self.body(req),
                req.estimated_tokens_in() + req.max_output as u64,
            )
            .await?;
        parse_reply(req.api, &body)
    }

    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        let tokens: u64 = inputs.iter().map(|t| t.len() as u64 / 4 + 1).sum();
        let url = format!("{}/embeddings", self.endpoint());
        let body = self
            .post(url, &json!({"model": model, "input": inputs}), tokens)
            .await?;
        parse_embeddings(&body, inputs.len())
    }
}

impl OpenAiClient {
    /// One POST of `body` to `url` under the endpoint's limiter (`tokens`
    /// its estimate): the reply's body when the status is a success, else
    /// the classed error (429, another status, a timeout, the transport).
    async fn post(&self, url: String, body: &Value, tokens: u64) -> Result<String, ModelError> {
        let _permit = self.limiter.acquire(tokens).await;
        let endpoint = self.endpoint();
        let timeout = self.cfg.timeout();
        let sent = self
            .http
            .post(url)
            .headers(self.headers.clone())
            .json(body)
            .timeout(timeout)
            .send()
            .await;
        let classify = |e: reqwest::Error| {
            if e.is_timeout() {
                ModelError::Timeout {
                    endpoint: endpoint.clone(),
                    seconds: timeout.as_secs_f64(),
                }
            } else {
                // reqwest's message can carry the URL, never a header.
                ModelError::Transport(format!("{endpoint}: {}", error_chain(&e)))
            }
        };
        let resp = sent.map_err(classify)?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = resp.text().await.map_err(classify)?;
        if status.as_u16() == 429 {
            return Err(ModelError::RateLimited {
                endpoint,
                retry_after: retry_after(&headers),
            });
        }
        if !status.is_success() {
            return Err(ModelError::Status {
                status: status.as_u16(),
                endpoint,
                body: snippet(&body),
                retry_after: retry_after(&headers),
            });
        }
        Ok(body)
    }
}

/// The vectors of an `/embeddings` reply (`data[i].embedding`, put in
/// `index` order), checked: one per input, all of one length.
pub fn parse_embeddings(body: &str, n: usize) -> Result<Vec<Vec<f32>>, ModelError> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| ModelError::Malformed(format!("the embeddings reply is not JSON: {e}")))?;
    let Some(data) = v.get("data").and_then(Value::as_array) else {
        return Err(ModelError::Malformed(
            "the embeddings reply has no data list".into(),
        ));
    };
    let mut out: Vec<(u64, Vec<f32>)> = Vec::with_capacity(data.len());
    for (i, d) in data.iter().enumerate() {
        let idx = d.get("index").and_then(Value::as_u64).unwrap_or(i as u64);
        let Some(e) = d.get("embedding").and_then(Value::as_array) else {
            return Err(ModelError::Malformed(format!(
                "data[{i}] of the embeddings reply has no embedding list"
            )));
        };
        let vec: Option<Vec<f32>> = e.iter().map(|x| x.as_f64().map(|f| f as f32)).collect();
        let Some(vec) = vec else {
            return Err(ModelError::Malformed(format!(
                "data[{i}].embedding holds something that is not a number"
            )));
        };
        out.push((idx, vec));
    }
    out.sort_by_key(|(i, _)| *i);
    if out.len() != n {
        return Err(ModelError::Malformed(format!(
            "the embeddings reply holds {} vectors for {n} inputs",
            out.len()
        )));
    }
    let dims = out.first().map_or(0, |(_, v)| v.len());
    if dims == 0 || out.iter().any(|(_, v)| v.len() != dims) {
        return Err(ModelError::Malformed(
            "the embeddings reply's vectors are empty or of different lengths".into(),
        ));
    }
    Ok(out.into_iter().map(|(_, v)| v).collect())
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let m = inner.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        src = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_and_responses_shapes_parse() {
        let r = parse_reply(
            Api::Chat,
            r#"{"choices":[{"message":{"content":"yes"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}"#,
        )
        .unwrap();
        assert_eq!(
            (r.text.as_str(), r.tokens_in, r.tokens_out),
            ("yes", Some(5), Some(1))
        );
        let r = parse_reply(
            Api::Responses,
            r#"{"status":"completed","output":[{"type":"reasoning"},{"type":"message","content":[{"type":"output_text","text":"no"}]}],"usage":{"input_tokens":7,"output_tokens":2}}"#,
        )
        .unwrap();
        assert_eq!(
            (r.text.as_str(), r.tokens_in, r.finish_reason.as_deref()),
            ("no", Some(7), Some("stop"))
        );
    }

    #[test]
    fn truncated_body_is_malformed_and_says_so() {
        let e = parse_reply(Api::Chat, r#"{"choices":[{"message":{"content":"ye"#).unwrap_err();
        assert_eq!(e.class(), "malformed_reply");
        assert!(e.to_string().contains("cut off"), "{e}");
        let e = parse_reply(Api::Chat, r#"{"id":"x"}"#).unwrap_err();
        assert!(e.to_string().contains("choices[0]"), "{e}");
    }

    #[test]
    fn retry_after_reads_seconds() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
    }
}
