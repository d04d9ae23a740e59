//! The model layer: every model-driven stage goes through [`Runtime::call`],
//! which checks the rails, answers from the cache when it can, sends the
//! request through a [`ModelClient`] with retries, records every attempt in
//! the trace (the `calls` table) and prices it from the registry.
//!
//! Clients: [`http::OpenAiClient`] (OpenAI-compatible `/chat/completions`
//! and `/responses`), [`mock::MockClient`] (deterministic, for docs and unit
//! tests) and [`replay::ReplayClient`] (answers from a recorded `calls`
//! table). The cache ([`cache::Cache`]) sits in front of any of them.

pub mod cache;
pub mod config;
pub mod http;
pub mod limiter;
pub mod mock;
pub mod rails;
pub mod replay;
pub mod runtime;
pub mod test_server;
pub mod trace;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use config::{Config, EndpointConfig, Limits, ModelInfo, Registry};
pub use runtime::{CallContext, Outcome, Runtime};

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: "user".into(),
            content: text.into(),
        }
    }
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self {
            role: "system".into(),
            content: text.into(),
        }
    }
}

/// Which OpenAI-compatible API shape a request uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// `POST {base}/chat/completions`.
    #[default]
    Chat,
    /// `POST {base}/responses`.
    Responses,
}

impl Api {
    /// Parses `chat` or `responses`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "chat" | "chat_completions" | "chat/completions" => Some(Self::Chat),
            "responses" => Some(Self::Responses),
            _ => None,
        }
    }
}

/// Everything the model sees: the part of a request that can change the
/// reply. Keys, timeouts and retry policy are deliberately not here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The API shape.
    pub api: Api,
    /// The model name sent to the endpoint.
    pub model: String,
    /// The conversation.
    pub messages: Vec<Message>,
    /// The output cap in tokens, resolved (never left to the server).
    pub max_output: u32,
    /// Sampling temperature, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// A JSON schema for structured output, when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<serde_json::Value>,
}

impl Request {
    /// The request as canonical JSON (the `request` column of the trace).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a request always serialises")
    }

    /// A digest of what the model sees, independent of where it is sent:
    /// replay matches on this.
    pub fn content_hash(&self) -> String {
        hex::encode(Sha256::digest(self.to_json().as_bytes()))
    }

    /// The cache key: what the model sees plus the endpoint it is sent to.
    pub fn cache_key(&self, base_url: &str) -> String {
        let mut h = Sha256::new();
        h.update(base_url.trim_end_matches('/').as_bytes());
        h.update(b"\n");
        h.update(self.to_json().as_bytes());
        hex::encode(h.finalize())
    }

    /// A cheap, generous estimate of the input tokens (for limits and the
    /// worst case of the rails): about four characters a token, rounded up,
    /// plus a few tokens of framing per message.
    pub fn estimated_tokens_in(&self) -> u64 {
        self.messages
            .iter()
            .map(|m| (m.content.len() as u64).div_ceil(3) + 4)
            .sum::<u64>()
            + self
                .schema
                .as_ref()
                .map_or(0, |s| s.to_string().len() as u64 / 3)
    }
}

/// A successful reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The text the model returned.
    pub text: String,
    /// Input tokens, as the endpoint reported them.
    pub tokens_in: Option<u64>,
    /// Output tokens, as the endpoint reported them.
    pub tokens_out: Option<u64>,
    /// Why generation stopped (`stop`, `length`, ...), when reported.
    pub finish_reason: Option<String>,
}

/// What went wrong with one attempt, classed so callers can tell a blip from
/// a mistake.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// No credential: says how to set one.
    #[error("auth_error: {0}")]
    Auth(String),
    /// HTTP 429.
    #[error("rate_limited: HTTP 429 from {endpoint}{}", retry_after.map(|d| format!(" (Retry-After {:.1}s)", d.as_secs_f64())).unwrap_or_default())]
    RateLimited {
        /// The endpoint's base URL.
        endpoint: String,
        /// What the server asked us to wait.
        retry_after: Option<Duration>,
    },
    /// Any other HTTP error status.
    #[error("http_error: HTTP {status} from {endpoint}: {body}")]
    Status {
        /// The status code.
        status: u16,
        /// The endpoint's base URL.
        endpoint: String,
        /// The start of the body.
        body: String,
        /// What the server asked us to wait, if anything.
        retry_after: Option<Duration>,
    },
    /// No answer within the request timeout.
    #[error("timeout: no reply from {endpoint} within {seconds:.1}s")]
    Timeout {
        /// The endpoint's base URL.
        endpoint: String,
        /// The timeout in force.
        seconds: f64,
    },
    /// The connection failed or was dropped.
    #[error("transport_error: {0}")]
    Transport(String),
    /// The body was not the expected JSON (malformed, truncated, wrong shape).
    #[error("malformed_reply: {0}")]
    Malformed(String),
    /// The replay has no recording of this request.
    #[error("replay_miss: no recorded reply for this request (model {model}, content hash {hash}); the run has diverged from its recording")]
    ReplayMiss {
        /// The model asked.
        model: String,
        /// The request's content hash.
        hash: String,
    },
    /// A failure an earlier run of a resumable request recorded, restored.
    #[error("{0}")]
    Restored(String),
    /// A replayed failure: the recording holds this error for the request.
    #[error("recorded_failure: {0}")]
    Recorded(String),
    /// A per-document or per-run call ceiling refused the request.
    #[error("call_cap_reached: {0}")]
    CallCap(String),
    /// A per-document or per-run spending ceiling refused the request.
    #[error("cost_cap_reached: {0}")]
    CostCap(String),
}

impl ModelError {
    /// Whether another attempt might succeed.
    pub fn retryable(&self) -> bool {
        match self {
            Self::RateLimited { .. } | Self::Timeout { .. } | Self::Transport(_) => true,
            Self::Status { status, .. } => *status >= 500 || *status == 408 || *status == 409,
            _ => false,
        }
    }

    /// The wait the server asked for.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } | Self::Status { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }

    /// The class name (`rate_limited`, `timeout`, ...).
    pub fn class(&self) -> &'static str {
        match self {
            Self::Auth(_) => "auth_error",
            Self::RateLimited { .. } => "rate_limited",
            Self::Status { .. } => "http_error",
            Self::Timeout { .. } => "timeout",
            Self::Transport(_) => "transport_error",
            Self::Malformed(_) => "malformed_reply",
            Self::ReplayMiss { .. } => "replay_miss",
            Self::Recorded(_) => "recorded_failure",
            Self::Restored(_) => "restored_failure",
            Self::CallCap(_) => "call_cap_reached",
            Self::CostCap(_) => "cost_cap_reached",
        }
    }
}

/// A model transport. One call is one attempt: retries, the cache, rails and
/// the trace are the runtime's job, so every client gets them.
#[async_trait::async_trait]
pub trait ModelClient: Send + Sync + std::fmt::Debug {
    /// A stable description of where requests go (the base URL for HTTP):
    /// part of the cache key.
    fn endpoint(&self) -> String;

    /// Whether requests cost money and need a credential (false for mocks
    /// and replays).
    fn is_live(&self) -> bool {
        true
    }

    /// Sends one request.
    async fn complete(&self, req: &Request) -> Result<Reply, ModelError>;

    /// The vectors of `inputs` from the endpoint's `/embeddings`, in order.
    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        let _ = (model, inputs);
        Err(ModelError::Transport(format!(
            "{} has no embeddings endpoint",
            self.endpoint()
        )))
    }
}
