//! Configuration of the model layer: `quarry.toml` (endpoints, the default
//! model, limits, model registry overrides) with the environment variables
//! users already set for OpenAI's clients on top.
//!
//! ```toml
//! [model]
//! name = "gpt-4o-mini"        # QUARRY_MODEL overrides
//! endpoint = "openai"          # which [endpoints.X] is the default
//! max_output = 1024
//! temperature = 0
//!
//! [endpoints.openai]
//! base_url = "https://api.openai.com/v1"   # OPENAI_BASE_URL overrides the default endpoint's
//! api = "chat"                             # or "responses"
//! api_key_env = "OPENAI_API_KEY"
//! headers = { "api-key" = "${AZURE_OPENAI_KEY}" }  # naming a header replaces Authorization
//! max_in_flight = 16
//! requests_per_minute = 500
//! tokens_per_minute = 200000
//! timeout_seconds = 120
//! max_attempts = 4
//!
//! [limits]
//! max_calls = 400         # per document
//! max_cost_usd = 5        # per document
//! max_total_calls = 2000  # per run
//! max_total_usd = 20      # per run
//!
//! [models."my-model"]
//! context_window = 32768
//! max_output = 4096
//! usd_per_1m_in = 0.2
//! usd_per_1m_out = 0.8
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::Api;
use crate::error::{QuarryError, Result};

const REGISTRY_TOML: &str = include_str!("models.toml");

/// A model's limits and price.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    /// Context window in tokens.
    pub context_window: u64,
    /// Output cap in tokens.
    pub max_output: u32,
    /// USD per million input tokens; `None` is unknown, not free.
    pub usd_per_1m_in: Option<f64>,
    /// USD per million output tokens; `None` is unknown, not free.
    pub usd_per_1m_out: Option<f64>,
}

impl ModelInfo {
    /// What an unregistered model is assumed to have.
    pub fn unregistered() -> Self {
        Self {
            context_window: 128_000,
            max_output: 4096,
            usd_per_1m_in: None,
            usd_per_1m_out: None,
        }
    }

    /// The price of a call, or `None` when the price is unknown.
    pub fn usd(&self, tokens_in: u64, tokens_out: u64) -> Option<f64> {
        Some(
            self.usd_per_1m_in? * tokens_in as f64 / 1e6
                + self.usd_per_1m_out? * tokens_out as f64 / 1e6,
        )
    }
}

/// Context windows, output caps and prices by model name.
#[derive(Debug, Clone, PartialEq)]
pub struct Registry {
    models: BTreeMap<String, ModelInfo>,
}

#[derive(Deserialize)]
struct RegistryFile {
    #[serde(default)]
    models: BTreeMap<String, ModelInfo>,
}

impl Default for Registry {
    fn default() -> Self {
        let f: RegistryFile = toml::from_str(REGISTRY_TOML).expect("the shipped registry parses");
        Self { models: f.models }
    }
}

impl Registry {
    /// The entry for `model`, if registered.
    pub fn get(&self, model: &str) -> Option<&ModelInfo> {
        self.models.get(model)
    }

    /// The entry for `model`, or the conservative default.
    pub fn info(&self, model: &str) -> ModelInfo {
        self.get(model)
            .cloned()
            .unwrap_or_else(ModelInfo::unregistered)
    }

    /// Adds or replaces entries.
    pub fn extend(&mut self, more: BTreeMap<String, ModelInfo>) {
        self.models.extend(more);
    }

    /// Every entry, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &ModelInfo)> {
        self.models.iter()
    }
}

/// Where and how requests are sent.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointConfig {
    /// The base URL, e.g. `https://api.openai.com/v1`.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// The API shape.
    #[serde(default)]
    pub api: Api,
    /// A key given directly (prefer `api_key_env`; never written anywhere).
    #[serde(default)]
    pub api_key: Option<String>,
    /// The environment variable holding the key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// `bearer` (default) or `none` (an endpoint without authentication).
    #[serde(default)]
    pub auth: Option<String>,
    /// Extra headers; `${VAR}` in a value is read from the environment.
    /// Naming any header replaces the automatic `Authorization`; an empty
    /// value suppresses that header.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Requests in flight at once.
    #[serde(default = "default_in_flight")]
    pub max_in_flight: usize,
    /// Requests started per minute (0: no limit).
    #[serde(default)]
    pub requests_per_minute: u32,
    /// Estimated input plus output tokens per minute (0: no limit).
    #[serde(default)]
    pub tokens_per_minute: u64,
    /// Seconds before one attempt is abandoned.
    #[serde(default = "default_timeout")]
    pub timeout_seconds: f64,
    /// Attempts per request, the first included.
    #[serde(default = "default_attempts")]
    pub max_attempts: u32,
    /// First backoff, doubled each retry (with jitter).
    #[serde(default = "default_backoff")]
    pub backoff_initial_ms: u64,
    /// Longest backoff.
    #[serde(default = "default_backoff_max")]
    pub backoff_max_ms: u64,
}

fn default_base_url() -> String {
    "https://api.openai.com/v1".into()
}
fn default_in_flight() -> usize {
    16
}
fn default_timeout() -> f64 {
    120.0
}
fn default_attempts() -> u32 {
    4
}
fn default_backoff() -> u64 {
    500
}
fn default_backoff_max() -> u64 {
    30_000
}

impl Default for EndpointConfig {
    fn default() -> Self {
        toml::from_str("").expect("defaults")
    }
}

impl EndpointConfig {
    /// The per-attempt timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_seconds.max(0.001))
    }

    /// Whether the base URL points at this machine.
    pub fn is_local(&self) -> bool {
        url::Url::parse(&self.base_url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .is_some_and(|h| h == "localhost" || h == "127.0.0.1" || h == "[::1]" || h == "::1")
    }

    /// The key in force: given directly, then `api_key_env`, then
    /// `OPENAI_API_KEY`.
    pub fn key(&self) -> Option<String> {
        let nonempty = |s: String| (!s.trim().is_empty()).then_some(s);
        self.api_key
            .clone()
            .and_then(nonempty)
            .or_else(|| {
                self.api_key_env
                    .as_deref()
                    .and_then(|v| std::env::var(v).ok())
                    .and_then(nonempty)
            })
            .or_else(|| std::env::var("OPENAI_API_KEY").ok().and_then(nonempty))
    }

    /// The headers to send, with `${VAR}` expanded; `Authorization` is
    /// added from the key only when no header is named.
    pub fn resolved_headers(&self) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for (k, v) in &self.headers {
            let v = expand_env(v).map_err(|var| {
                QuarryError::Invalid(format!(
                    "header '{k}' of endpoint {} reads ${{{var}}}, which is not set",
                    self.base_url
                ))
            })?;
            if !v.is_empty() {
                out.push((k.clone(), v));
            }
        }
        if self.headers.is_empty() && self.auth.as_deref() != Some("none") {
            if let Some(key) = self.key() {
                out.push(("Authorization".into(), format!("Bearer {key}")));
            }
        }
        Ok(out)
    }

    /// Checks for a credential before anything is read: an endpoint that
    /// names headers, says `auth = "none"`, or is on this machine needs none.
    pub fn check_credentials(&self) -> Result<()> {
        if !self.headers.is_empty() || self.auth.as_deref() == Some("none") || self.is_local() {
            return Ok(());
        }
        if self.key().is_none() {
            return Err(QuarryError::Invalid(format!(
                "auth_error: no API key for {}: set OPENAI_API_KEY in the environment, or api_key_env \
                 (or headers) under [endpoints] in quarry.toml; for a server without authentication \
                 set auth = \"none\"",
                self.base_url
            )));
        }
        Ok(())
    }

    /// Every secret this endpoint may send: used to prove none is stored.
    pub fn secrets(&self) -> Vec<String> {
        let mut s: Vec<String> = self.key().into_iter().collect();
        if let Ok(h) = self.resolved_headers() {
            s.extend(h.into_iter().map(|(_, v)| v));
        }
        s
    }
}

fn expand_env(v: &str) -> std::result::Result<String, String> {
    let mut out = String::new();
    let mut rest = v;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(j) = after.find('}') else {
            out.push_str(&rest[i..]);
            return Ok(out);
        };
        let name = &after[..j];
        out.push_str(&std::env::var(name).map_err(|_| name.to_string())?);
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Calls and dollars, per document and per run. `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Calls per document.
    pub max_calls: Option<u64>,
    /// USD per document.
    pub max_cost_usd: Option<f64>,
    /// Calls per run.
    pub max_total_calls: Option<u64>,
    /// USD per run.
    pub max_total_usd: Option<f64>,
}

impl Limits {
    /// Refuses limits that cannot be compared (negative or not finite).
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("max_cost_usd", self.max_cost_usd),
            ("max_total_usd", self.max_total_usd),
        ] {
            if let Some(v) = v {
                if !v.is_finite() || v < 0.0 {
                    return Err(QuarryError::Invalid(format!(
                        "{name} must be a non-negative number of dollars, got {v}"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The `[model]` section: defaults for every request.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ModelDefaults {
    /// The default model name.
    pub name: Option<String>,
    /// The default endpoint's name.
    pub endpoint: Option<String>,
    /// The default output cap.
    pub max_output: Option<u32>,
    /// The default temperature.
    pub temperature: Option<f64>,
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// Request defaults.
    pub model: ModelDefaults,
    /// Endpoints by name; `default` always exists.
    pub endpoints: BTreeMap<String, EndpointConfig>,
    /// Rails.
    pub limits: Limits,
    /// The model registry (shipped entries plus overrides).
    pub registry: Registry,
    /// The file this came from, if any.
    pub path: Option<PathBuf>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    model: ModelDefaults,
    #[serde(default)]
    endpoints: BTreeMap<String, EndpointConfig>,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    models: BTreeMap<String, ModelInfo>,
}

impl Config {
    /// Loads `path` if given, else `$QUARRY_CONFIG`, else `./quarry.toml`
    /// when it exists; then applies the environment.
    pub fn load(path: Option<&Path>) -> Result<Self> {
        let path = path
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("QUARRY_CONFIG").map(PathBuf::from))
            .or_else(|| Some(PathBuf::from("quarry.toml")).filter(|p| p.exists()));
        let mut cfg = match &path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| {
                    QuarryError::Invalid(format!("cannot read config {}: {e}", p.display()))
                })?;
                Self::parse(&text)
                    .map_err(|e| QuarryError::Invalid(format!("config {}: {e}", p.display())))?
            }
            None => Self::parse("")?,
        };
        cfg.path = path;
        cfg.apply_env()?;
        Ok(cfg)
    }

    /// Parses a config file's text (no environment applied).
    pub fn parse(text: &str) -> Result<Self> {
        let f: ConfigFile =
            toml::from_str(text).map_err(|e| QuarryError::Invalid(e.to_string()))?;
        let mut registry = Registry::default();
        registry.extend(f.models);
        f.limits.validate()?;
        let mut endpoints = f.endpoints;
        let default_name = f.model.endpoint.clone().unwrap_or_else(|| "default".into());
        if let std::collections::btree_map::Entry::Vacant(v) = endpoints.entry(default_name.clone())
        {
            if f.model.endpoint.is_some() {
                return Err(QuarryError::Invalid(format!(
                    "[model] endpoint = '{default_name}' but there is no [endpoints.{default_name}]"
                )));
            }
            v.insert(EndpointConfig::default());
        }
        for (name, e) in &endpoints {
            if e.max_in_flight == 0 {
                return Err(QuarryError::Invalid(format!(
                    "[endpoints.{name}] max_in_flight must be at least 1"
                )));
            }
            if e.max_attempts == 0 {
                return Err(QuarryError::Invalid(format!(
                    "[endpoints.{name}] max_attempts must be at least 1"
                )));
            }
            if let Some(a) = &e.auth {
                if a != "bearer" && a != "none" {
                    return Err(QuarryError::Invalid(format!(
                        "[endpoints.{name}] auth must be \"bearer\" or \"none\", got \"{a}\""
                    )));
                }
            }
        }
        Ok(Self {
            model: f.model,
            endpoints,
            limits: f.limits,
            registry,
            path: None,
        })
    }

    /// Applies `OPENAI_BASE_URL`, `QUARRY_MODEL` and the `QUARRY_MAX_*`
    /// rails from the environment.
    pub fn apply_env(&mut self) -> Result<()> {
        let name = self.default_endpoint_name();
        if let Some(url) = env_nonempty("OPENAI_BASE_URL") {
            if let Some(e) = self.endpoints.get_mut(&name) {
                e.base_url = url;
            }
        }
        if let Some(m) = env_nonempty("QUARRY_MODEL") {
            self.model.name = Some(m);
        }
        let int = |v: &str| -> Result<Option<u64>> {
            env_nonempty(v)
                .map(|s| {
                    s.parse::<u64>().map_err(|_| {
                        QuarryError::Invalid(format!("{v} must be a whole number, got '{s}'"))
                    })
                })
                .transpose()
        };
        let usd = |v: &str| -> Result<Option<f64>> {
            env_nonempty(v)
                .map(|s| {
                    s.parse::<f64>().map_err(|_| {
                        QuarryError::Invalid(format!("{v} must be a number of dollars, got '{s}'"))
                    })
                })
                .transpose()
        };
        if let Some(v) = int("QUARRY_MAX_CALLS")? {
            self.limits.max_calls = Some(v);
        }
        if let Some(v) = usd("QUARRY_MAX_COST_USD")? {
            self.limits.max_cost_usd = Some(v);
        }
        if let Some(v) = int("QUARRY_MAX_TOTAL_CALLS")? {
            self.limits.max_total_calls = Some(v);
        }
        if let Some(v) = usd("QUARRY_MAX_TOTAL_USD")? {
            self.limits.max_total_usd = Some(v);
        }
        self.limits.validate()
    }

    /// The name of the default endpoint.
    pub fn default_endpoint_name(&self) -> String {
        self.model
            .endpoint
            .clone()
            .unwrap_or_else(|| "default".into())
    }

    /// The default model name: configured (or `QUARRY_MODEL`), else
    /// `gpt-4o-mini` for a remote endpoint and `local` (unregistered, so
    /// its price is unknown rather than someone else's) for a server on
    /// this machine.
    pub fn default_model(&self) -> String {
        if let Some(m) = &self.model.name {
            return m.clone();
        }
        match self.endpoints.get(&self.default_endpoint_name()) {
            Some(e) if e.is_local() => "local".into(),
            _ => "gpt-4o-mini".into(),
        }
    }
}

fn env_nonempty(v: &str) -> Option<String> {
    std::env::var(v).ok().filter(|s| !s.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_registry_parses_and_unknown_models_have_no_price() {
        let r = Registry::default();
        assert!(r.get("gpt-4o-mini").is_some());
        let u = r.info("some-new-model");
        assert_eq!(u.usd(1000, 1000), None);
        assert_eq!(u.context_window, 128_000);
    }

    #[test]
    fn headers_replace_authorization_and_empty_suppresses() {
        let c = Config::parse(
            r#"[endpoints.default]
base_url = "https://gw.example.com/v1"
api_key = "sk-test"
headers = { "api-key" = "abc", "x-empty" = "" }"#,
        )
        .unwrap();
        let h = c.endpoints["default"].resolved_headers().unwrap();
        assert_eq!(h, vec![("api-key".to_string(), "abc".to_string())]);
    }

    #[test]
    fn bad_config_is_named() {
        let e = Config::parse("[limits]\nmax_total_usd = -1").unwrap_err();
        assert!(e.to_string().contains("max_total_usd"), "{e}");
        let e = Config::parse("[limits]\nmax_calls = 'lots'").unwrap_err();
        assert!(e.to_string().contains("max_calls"), "{e}");
        let e = Config::parse("[endpoints.x]\nbase_urll = 'x'").unwrap_err();
        assert!(e.to_string().contains("base_urll"), "{e}");
    }
}
