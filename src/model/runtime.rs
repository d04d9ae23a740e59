//! The runtime every model-driven stage calls: rails, cache, retries with
//! backoff, pricing and the trace, around whichever client an endpoint uses.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use futures::future::{BoxFuture, FutureExt, Shared};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::cache::Cache;
use super::http::OpenAiClient;
use super::mock::MockClient;
use super::rails::Rails;
use super::trace::{CallRow, Sink, Trace};
use super::{Config, EndpointConfig, ModelClient, ModelError, Reply, Request};
use crate::error::{QuarryError, Result};
use crate::store::Store;

/// Who is asking, for the trace and the per-document rails.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// The document the request is about.
    pub document_id: Option<String>,
    /// The stage (`llm`, `llm_json`, `screen`, ...).
    pub stage: String,
    /// A free label.
    pub label: Option<String>,
    /// The endpoint name (default when `None`).
    pub endpoint: Option<String>,
    /// Part of a resumable run (screening, extraction): a failure is kept in
    /// the store too, so a run started again gives the same result without
    /// sending the request again.
    pub resume: bool,
}

/// What a call came to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// The reply text (also kept for a reply that failed a check).
    pub text: Option<String>,
    /// The error of the last attempt, if the call failed.
    pub error: Option<ModelError>,
    /// Answered from the cache.
    pub cached: bool,
    /// Input tokens of the successful attempt.
    pub tokens_in: Option<u64>,
    /// Output tokens of the successful attempt.
    pub tokens_out: Option<u64>,
    /// Price of all attempts; `None` when the price is unknown.
    pub usd: Option<f64>,
    /// Attempts sent.
    pub attempts: u32,
}

impl Outcome {
    /// A call that came to nothing but `error` (no reply, no tokens).
    pub fn failed(error: ModelError) -> Self {
        Self {
            error: Some(error),
            ..Self::default()
        }
    }

    /// Whether the call gave a usable reply.
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }
}

/// One endpoint: its client and its retry policy.
#[derive(Debug)]
struct Endpoint {
    client: Arc<dyn ModelClient>,
    cfg: EndpointConfig,
}

/// The model layer of a session.
#[derive(Debug)]
pub struct Runtime {
    core: Arc<RuntimeCore>,
    /// The run ceilings' count (see [`Runtime::for_query`]).
    rails: Rails,
}

/// What every scope of a session's model layer shares: the endpoints and
/// their limits, the cache, the trace, what a statement remembers.
#[derive(Debug)]
pub struct RuntimeCore {
    config: Config,
    endpoints: BTreeMap<String, Endpoint>,
    cache: Option<Cache>,
    trace: Trace,
    call_ids: AtomicI64,
    secrets: Vec<String>,
    replay_strict: bool,
    warned: Mutex<HashSet<String>>,
    /// Vectors already fetched this session, by cache key.
    embed_memo: Mutex<HashMap<String, Vec<f32>>>,
    memo: Mutex<HashMap<String, Memo>>,
    progress: Option<Mutex<Progress>>,
    store: Option<Store>,
    /// The failures of resumable requests, packed like the cache.
    journal: crate::store::packs::Packs,
    retry_failed: bool,
}

/// How many answered requests a statement remembers before it forgets them
/// (the cache still has them).
const MEMO_CACHED: usize = 8_192;

/// What a statement remembers of a request it sent.
#[derive(Clone)]
enum Memo {
    /// Sent (or being sent): every asker gets this outcome.
    Sent(Shared<BoxFuture<'static, Outcome>>),
    /// Answered and kept in the cache: a later ask gets this outcome with
    /// the reply's text read from the cache, so the statement's memory
    /// does not grow with its answers.
    Cached(Outcome),
}

impl fmt::Debug for Memo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Memo::Sent(_) => "Sent",
            Memo::Cached(_) => "Cached",
        })
    }
}

/// How the runtime is built.
#[derive(Debug, Default)]
pub struct RuntimeOptions {
    /// A client to use for every endpoint instead of HTTP (mock, replay, or a
    /// user's own transport).
    pub client: Option<Arc<dyn ModelClient>>,
    /// Whether a replay miss stops the query (true) or is a failed call.
    pub replay_strict: bool,
    /// Use no response cache even with a store.
    pub no_cache: bool,
    /// Keep one line on stderr up to date with calls, spend and time (for
    /// an interactive terminal).
    pub progress: bool,
    /// Send resumable requests that failed in an earlier run again instead
    /// of restoring their failure.
    pub retry_failed: bool,
}

/// Where the failures of resumable requests are kept in a store.
pub const FAILURES_DIR: &str = "failures";

/// Counts for the progress line.
#[derive(Debug, Default)]
struct Progress {
    started: Option<Instant>,
    shown: Option<Instant>,
    calls: u64,
    cached: u64,
    failed: u64,
    usd: f64,
    usd_unknown: bool,
    stage: String,
    /// Documents a screening or extraction run has finished, of how many.
    docs: Option<(u64, Option<u64>)>,
}

impl Progress {
    fn line(&self, now: Instant) -> String {
        let docs = match self.docs {
            Some((done, Some(total))) => format!("{done} of {total} documents, "),
            Some((done, None)) => format!("{done} documents, "),
            None => String::new(),
        };
        format!(
            "\r{}: {docs}{} calls ({} cached, {} failed), ${:.4}{}, {:.0}s   ",
            self.stage,
            self.calls,
            self.cached,
            self.failed,
            self.usd,
            if self.usd_unknown { " + unknown" } else { "" },
            self.started
                .map_or(0.0, |s| now.duration_since(s).as_secs_f64())
        )
    }
}

impl std::ops::Deref for Runtime {
    type Target = RuntimeCore;

    fn deref(&self) -> &RuntimeCore {
        &self.core
    }
}

fn new_run_id() -> String {
    let now = chrono::Utc::now();
    let salt = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
        format!("{:?}{}", now, std::process::id()).as_bytes(),
    ));
    format!("run_{}_{}", now.format("%Y%m%dT%H%M%S%.3f"), &salt[..6])
}

impl Runtime {
    /// Builds the runtime: one client per configured endpoint, the cache and
    /// the trace in `store` (memory when there is none).
    pub fn new(
        config: Config,
        store: Option<Store>,
        memory: Sink,
        opts: RuntimeOptions,
    ) -> Result<Self> {
        let mut endpoints = BTreeMap::new();
        let mut secrets = Vec::new();
        for (name, cfg) in &config.endpoints {
            let client: Arc<dyn ModelClient> = match &opts.client {
                Some(c) => c.clone(),
                None if cfg.base_url.starts_with("mock:") => Arc::new(MockClient::new()),
                None => Arc::new(OpenAiClient::new(cfg.clone())?),
            };
            secrets.extend(cfg.secrets().into_iter().filter(|s| s.len() >= 4));
            endpoints.insert(
                name.clone(),
                Endpoint {
                    client,
                    cfg: cfg.clone(),
                },
            );
        }
        let store_for_journal = store.clone();
        let sink = match &store {
            Some(s) => Sink::Store(s.clone()),
            None => memory,
        };
        Ok(Self {
            rails: Rails::new(config.limits),
            core: Arc::new(RuntimeCore {
                cache: store.filter(|_| !opts.no_cache).map(Cache::new),
                trace: Trace::new(new_run_id(), sink),
                endpoints,
                config,
                call_ids: AtomicI64::new(0),
                secrets,
                replay_strict: opts.replay_strict,
                warned: Mutex::new(HashSet::new()),
                memo: Mutex::new(HashMap::new()),
                embed_memo: Mutex::new(HashMap::new()),
                progress: opts.progress.then(Default::default),
                store: store_for_journal,
                journal: crate::store::packs::Packs::new(FAILURES_DIR, "txt"),
                retry_failed: opts.retry_failed,
            }),
        })
    }

    /// This model layer with run ceilings of its own for one query's parts
    /// ([`Rails::for_parts`]), their count at zero, and all else shared
    /// (endpoints and their `max_in_flight`, cache, trace). A cluster
    /// executor keeps one per query, so what it sent for earlier queries
    /// does not count against a new one.
    pub fn for_query(&self) -> Self {
        Self {
            core: self.core.clone(),
            rails: Rails::for_parts(self.rails.limits()),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The trace.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The rails.
    pub fn rails(&self) -> &Rails {
        &self.rails
    }

    /// The cache, when there is one.
    pub fn cache(&self) -> Option<&Cache> {
        self.cache.as_ref()
    }

    /// Whether requests that failed in an earlier run are sent again.
    pub fn retry_failed(&self) -> bool {
        self.retry_failed
    }

    /// Whether a replay miss must stop the query.
    pub fn replay_strict(&self) -> bool {
        self.replay_strict
    }

    fn endpoint(&self, name: Option<&str>) -> Result<&Endpoint> {
        let name = name.map_or_else(|| self.config.default_endpoint_name(), str::to_string);
        self.endpoints.get(&name).ok_or_else(|| {
            QuarryError::Invalid(format!(
                "no endpoint '{name}'; configured: {}",
                self.endpoints
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }

    /// Checks, before anything is read, that `endpoint` can authenticate.
    pub fn check_credentials(&self, endpoint: Option<&str>) -> Result<()> {
        let e = self.endpoint(endpoint)?;
        if !e.client.is_live() {
            return Ok(());
        }
        e.cfg.check_credentials()
    }

    /// Vectors for `texts` from `model` at `endpoint`'s `/embeddings`, in
    /// order: cached like replies (by endpoint, model and text), the misses
    /// sent 64 at a time, a batch retried on a blip as a call is. An error
    /// says why there are none: a replay or a mock has no endpoint to ask
    /// (the vectors of an API embedder are not recorded: they are not
    /// deterministic), or the requests failed.
    pub async fn embed(
        &self,
        endpoint: Option<&str>,
        model: &str,
        texts: &[String],
    ) -> std::result::Result<Vec<Vec<f32>>, String> {
        let e = self.endpoint(endpoint).map_err(|e| e.to_string())?;
        if !e.client.is_live() {
            return Err(format!(
                "{} is not a live endpoint (a replay or a mock): an API embedder's vectors are not recorded, since they are not deterministic",
                e.client.endpoint()
            ));
        }
        let base = e.client.endpoint();
        let key = |t: &str| {
            hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
                format!("embeddings\0{base}\0{model}\0{t}").as_bytes(),
            ))
        };
        let keys: Vec<String> = texts.iter().map(|t| key(t)).collect();
        let mut out: Vec<Option<Vec<f32>>> = {
            let memo = self.embed_memo.lock().expect("embed memo");
            keys.iter().map(|k| memo.get(k).cloned()).collect()
        };
        if let Some(cache) = &self.cache {
            for (i, k) in keys.iter().enumerate() {
                if out[i].is_none() {
                    if let Some(r) = cache.get(k).await {
                        out[i] = serde_json::from_str(&r.text).ok();
                    }
                }
            }
        }
        let missing: Vec<usize> = (0..texts.len()).filter(|i| out[*i].is_none()).collect();
        let backoff = Duration::from_millis(e.cfg.backoff_initial_ms.max(1));
        for batch in missing.chunks(64) {
            let inputs: Vec<String> = batch.iter().map(|i| texts[*i].clone()).collect();
            let mut attempt = 0;
            let vecs = loop {
                attempt += 1;
                match e.client.embed(model, &inputs).await {
                    Ok(v) => break v,
                    Err(err) if err.retryable() && attempt < e.cfg.max_attempts => {
                        tokio::time::sleep(backoff * 2u32.pow(attempt - 1)).await;
                    }
                    Err(err) => return Err(self.redact(err.to_string())),
                }
            };
            for (i, v) in batch.iter().zip(vecs) {
                if let Some(cache) = &self.cache {
                    let reply = super::Reply {
                        text: serde_json::to_string(&v).expect("a vector serialises"),
                        tokens_in: None,
                        tokens_out: None,
                        finish_reason: None,
                    };
                    if let Err(err) = cache.put(&keys[*i], model, &reply).await {
                        eprintln!("warning: caching an embedding: {err}");
                    }
                }
                out[*i] = Some(v);
            }
        }
        let out: Vec<Vec<f32>> = out.into_iter().map(|v| v.expect("filled")).collect();
        let mut memo = self.embed_memo.lock().expect("embed memo");
        for (k, v) in keys.into_iter().zip(&out) {
            memo.insert(k, v.clone());
        }
        Ok(out)
    }

    /// The API shape an endpoint is configured for.
    pub fn api_of(&self, endpoint: Option<&str>) -> Result<super::Api> {
        Ok(self.endpoint(endpoint)?.cfg.api)
    }

    /// The output cap in force: asked, else configured, else 1,024, never
    /// above the model's own cap.
    pub fn resolve_max_output(&self, model: &str, asked: Option<u32>) -> u32 {
        let cap = self.config.registry.info(model).max_output;
        asked
            .or(self.config.model.max_output)
            .unwrap_or(1024)
            .min(cap)
            .max(1)
    }

    /// The worst-case price of a request: every input token and a reply at
    /// its output cap; `None` when the model has no registered price.
    pub fn worst_usd(&self, req: &Request) -> Option<f64> {
        self.config
            .registry
            .info(&req.model)
            .usd(req.estimated_tokens_in(), req.max_output as u64)
    }

    fn warn_once(&self, key: &str, msg: impl FnOnce() -> String) {
        if self
            .warned
            .lock()
            .expect("warn lock")
            .insert(key.to_string())
        {
            eprintln!("warning: {}", msg());
        }
    }

    fn price(&self, model: &str, reply: &Reply) -> Option<f64> {
        let info = self.config.registry.get(model);
        if info.is_none_or(|i| i.usd_per_1m_in.is_none()) {
            self.warn_once(&format!("price:{model}"), || {
                format!(
                    "model '{model}' has no registered price: its cost is unknown (NULL in calls.usd), \
                     not zero; register it under [models.\"{model}\"] in quarry.toml"
                )
            });
        }
        info?.usd(reply.tokens_in.unwrap_or(0), reply.tokens_out.unwrap_or(0))
    }

    fn redact(&self, s: String) -> String {
        self.secrets.iter().fold(s, |acc, k| {
            if acc.contains(k.as_str()) {
                acc.replace(k.as_str(), "[redacted]")
            } else {
                acc
            }
        })
    }

    fn row(
        &self,
        call_id: i64,
        attempt: i32,
        key: &str,
        req: &Request,
        ctx: &CallContext,
        endpoint: String,
    ) -> CallRow {
        CallRow {
            run_id: self.trace.run_id().to_string(),
            call_id,
            attempt,
            request_hash: key.to_string(),
            document_id: ctx.document_id.clone(),
            stage: ctx.stage.clone(),
            label: ctx.label.clone(),
            model: req.model.clone(),
            endpoint,
            request: req.to_json(),
            reply: None,
            finish_reason: None,
            ok: false,
            error: None,
            cached: false,
            tokens_in: None,
            tokens_out: None,
            usd: None,
            seconds: 0.0,
            started_at: chrono::Utc::now().timestamp_millis(),
        }
    }

    async fn record(&self, row: CallRow) {
        let mut row = row;
        row.error = row.error.map(|e| self.redact(e));
        row.reply = row.reply.map(|r| self.redact(r));
        self.trace.record(row);
        if self.trace.pending() >= 256 {
            if let Err(e) = self.trace.flush().await {
                self.warn_once("trace-flush", || {
                    format!("the trace could not be written yet: {e}")
                });
            }
        }
    }

    /// Sends one request through rails, cache, retries and the trace. Never
    /// fails: what went wrong is in the outcome (and the trace).
    ///
    /// Within one statement a request is sent once: a query that asks the
    /// same thing twice (a CTE referenced twice is evaluated twice, a column
    /// with repeated prompts) waits for the first answer and gets the same
    /// outcome, success or failure, with no second request (with a cache,
    /// an ask after the answer was cached reads the cache and is traced as
    /// cached). [`Runtime::begin_statement`] starts a new statement.
    pub async fn call(self: &Arc<Self>, req: Request, ctx: &CallContext) -> Outcome {
        let key = match self.endpoint(ctx.endpoint.as_deref()) {
            Ok(ep) => req.cache_key(&ep.client.endpoint()),
            Err(_) => return self.call_once(req, ctx).await,
        };
        // The first asker starts the request as its own task, so it goes on
        // even when the plan stops polling that asker (a hash join reads its
        // build side to the end before it polls the probe side, which may be
        // waiting for the same answer).
        let memo = self
            .memo
            .lock()
            .expect("memo lock")
            .entry(key.clone())
            .or_insert_with(|| {
                let rt = self.clone();
                let ctx = ctx.clone();
                let task = tokio::spawn(async move { rt.call_once(req, &ctx).await });
                Memo::Sent(
                    async move {
                        task.await.unwrap_or_else(|e| {
                            Outcome::failed(ModelError::Transport(format!(
                                "the request's task stopped: {e}"
                            )))
                        })
                    }
                    .boxed()
                    .shared(),
                )
            })
            .clone();
        let out = match memo {
            Memo::Sent(shared) => {
                let out = shared.await;
                // Once the cache keeps the answer, memory need not; and
                // past MEMO_CACHED answers it forgets them too (an ask after
                // that reads the cache and is traced as cached), so a
                // statement's memory stays bounded however long it runs.
                if out.ok() && self.cache.is_some() {
                    let mut memo = self.memo.lock().expect("memo lock");
                    memo.insert(
                        key.clone(),
                        Memo::Cached(Outcome {
                            text: None,
                            ..out.clone()
                        }),
                    );
                    if memo.len() > MEMO_CACHED {
                        memo.retain(|_, m| matches!(m, Memo::Sent(_)));
                    }
                }
                out
            }
            // Asked and traced already in this statement.
            Memo::Cached(first) => {
                let reply = match &self.cache {
                    Some(c) => c.get(&key).await,
                    None => None,
                };
                reply.map_or_else(
                    || {
                        Outcome::failed(ModelError::Transport(
                            "the cached answer of a request asked earlier in this statement is gone"
                                .into(),
                        ))
                    },
                    |reply| Outcome {
                        text: Some(reply.text),
                        ..first
                    },
                )
            }
        };
        self.show_progress(&ctx.stage, &out);
        out
    }

    /// Forgets the outcomes of the previous statement, so a request that
    /// failed can be tried again (successes stay in the store's cache).
    pub fn begin_statement(&self) {
        self.memo.lock().expect("memo lock").clear();
        if let Some(p) = &self.progress {
            let mut p = p.lock().expect("progress lock");
            if p.shown.is_some() {
                eprintln!("{}", p.line(Instant::now()));
            }
            *p = Progress::default();
        }
    }

    /// Whether a progress line is shown (an interactive terminal).
    pub fn shows_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// Counts `n` more documents finished by a screening or extraction run
    /// (`stage`) of `total` (when known), for the progress line.
    pub fn documents_done(&self, stage: &str, n: u64, total: Option<u64>) {
        let Some(p) = &self.progress else { return };
        let mut p = p.lock().expect("progress lock");
        p.stage = stage.to_string();
        let done = p.docs.map_or(0, |d| d.0) + n;
        p.docs = Some((done, total));
        Self::show(&mut p, true);
    }

    /// Updates the progress line (at most every half second).
    fn show_progress(&self, stage: &str, out: &Outcome) {
        let Some(p) = &self.progress else { return };
        let mut p = p.lock().expect("progress lock");
        p.stage = stage.to_string();
        p.calls += 1;
        p.cached += out.cached as u64;
        p.failed += !out.ok() as u64;
        match out.usd {
            Some(u) => p.usd += u,
            None => p.usd_unknown = true,
        }
        Self::show(&mut p, false);
    }

    fn show(p: &mut Progress, now_anyway: bool) {
        let now = Instant::now();
        p.started.get_or_insert(now);
        if !now_anyway
            && p.shown
                .is_some_and(|t| now.duration_since(t) < Duration::from_millis(500))
        {
            return;
        }
        p.shown = Some(now);
        eprint!("{}", p.line(now));
    }

    async fn call_once(&self, req: Request, ctx: &CallContext) -> Outcome {
        let call_id = self.call_ids.fetch_add(1, Ordering::SeqCst) + 1;
        let mut out = Outcome::default();
        let ep = match self.endpoint(ctx.endpoint.as_deref()) {
            Ok(e) => e,
            Err(e) => {
                out.error = Some(ModelError::Transport(e.to_string()));
                return out;
            }
        };
        let endpoint = ep.client.endpoint();
        let key = req.cache_key(&endpoint);
        if let Some(cache) = &self.cache {
            if let Some(reply) = cache.get(&key).await {
                let mut row = self.row(call_id, 1, &key, &req, ctx, endpoint);
                row.ok = true;
                row.cached = true;
                row.usd = Some(0.0);
                row.reply = Some(reply.text.clone());
                row.finish_reason = reply.finish_reason.clone();
                row.tokens_in = reply.tokens_in.map(|t| t as i64);
                row.tokens_out = reply.tokens_out.map(|t| t as i64);
                self.record(row).await;
                out.text = Some(reply.text);
                out.cached = true;
                out.tokens_in = reply.tokens_in;
                out.tokens_out = reply.tokens_out;
                out.usd = Some(0.0);
                return out;
            }
        }
        if ctx.resume && !self.retry_failed {
            if let Some(error) = self.journal_get(&key).await {
                let mut row = self.row(call_id, 0, &key, &req, ctx, endpoint);
                row.cached = true;
                row.error = Some(error.clone());
                self.record(row).await;
                out.error = Some(ModelError::Restored(error));
                out.cached = true;
                return out;
            }
        }
        let worst = self.worst_usd(&req);
        let reservation = match self.rails.reserve(ctx.document_id.as_deref(), worst) {
            Ok(r) => r,
            Err(e) => {
                let mut row = self.row(call_id, 0, &key, &req, ctx, endpoint);
                row.error = Some(e.to_string());
                self.record(row).await;
                out.error = Some(e);
                return out;
            }
        };
        let max_attempts = ep.cfg.max_attempts.max(1);
        let mut spent: Option<f64> = Some(0.0);
        loop {
            out.attempts += 1;
            let mut row = self.row(
                call_id,
                out.attempts as i32,
                &key,
                &req,
                ctx,
                endpoint.clone(),
            );
            let t0 = Instant::now();
            let mut res = ep.client.complete(&req).await;
            row.seconds = t0.elapsed().as_secs_f64();
            if let Ok(reply) = &res {
                row.reply = Some(reply.text.clone());
                row.finish_reason = reply.finish_reason.clone();
                row.tokens_in = reply.tokens_in.map(|t| t as i64);
                row.tokens_out = reply.tokens_out.map(|t| t as i64);
                row.usd = self.price(&req.model, reply);
                spent = match (spent, row.usd) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
                out.tokens_in = reply.tokens_in;
                out.tokens_out = reply.tokens_out;
                out.text = Some(reply.text.clone());
                if let Some(problem) = check_reply(&req, reply) {
                    res = Err(ModelError::Malformed(problem));
                }
            }
            match res {
                Ok(reply) => {
                    row.ok = true;
                    self.record(row).await;
                    if let Some(cache) = &self.cache {
                        if let Err(e) = cache.put(&key, &req.model, &reply).await {
                            self.warn_once("cache-put", || {
                                format!("the response cache could not be written: {e}")
                            });
                        }
                    }
                    break;
                }
                Err(e) => {
                    row.error = Some(e.to_string());
                    self.record(row).await;
                    if e.retryable() && out.attempts < max_attempts {
                        tokio::time::sleep(backoff(
                            &ep.cfg,
                            out.attempts,
                            e.retry_after(),
                            call_id,
                        ))
                        .await;
                        continue;
                    }
                    if ctx.resume && !matches!(e, ModelError::ReplayMiss { .. }) {
                        self.journal_put(&key, &e.to_string()).await;
                    }
                    out.error = Some(e);
                    break;
                }
            }
        }
        out.usd = spent;
        self.rails.settle(reservation, true, spent);
        out
    }

    /// The failure an earlier run recorded for a resumable request.
    async fn journal_get(&self, key: &str) -> Option<String> {
        let store = self.store.as_ref()?;
        let bytes = self.journal.get(store, key).await?;
        String::from_utf8(bytes.to_vec()).ok()
    }

    /// Keeps a resumable request's failure for a run started again: an
    /// object of its own at once (a kill loses none), packed with the
    /// others at the next flush (as the cache is).
    async fn journal_put(&self, key: &str, error: &str) {
        let Some(store) = &self.store else { return };
        let error = self.redact(error.to_string());
        if let Err(e) = self.journal.put(store, key, error.into_bytes()).await {
            self.warn_once("journal", || {
                format!("a failure could not be kept for resuming: {e}")
            });
        }
    }

    /// Writes the trace rows not yet written, and packs the replies the
    /// cache kept and the failures journalled since the last fold.
    pub async fn flush(&self) -> Result<()> {
        if let Some(cache) = &self.cache {
            if let Err(e) = cache.flush().await {
                self.warn_once("cache-fold", || {
                    format!("the response cache could not be packed yet (its entries stay as single files): {e}")
                });
            }
        }
        if let Some(store) = &self.store {
            if let Err(e) = self.journal.flush(store).await {
                self.warn_once("journal-fold", || {
                    format!("the failures kept for resuming could not be packed yet (they stay as single files): {e}")
                });
            }
        }
        self.trace.flush().await
    }
}

/// Checks what a structured request needs: JSON that parses and has the
/// schema's required keys. Nothing is repaired.
fn check_reply(req: &Request, reply: &Reply) -> Option<String> {
    let schema = req.schema.as_ref()?;
    let cut = if reply.finish_reason.as_deref() == Some("length") {
        format!(
            " (generation stopped at the output cap, max_output = {})",
            req.max_output
        )
    } else {
        String::new()
    };
    let v: serde_json::Value = match serde_json::from_str(&reply.text) {
        Ok(v) => v,
        Err(e) => {
            return Some(format!(
                "the reply is not valid JSON at line {} column {}: {e}{cut}",
                e.line(),
                e.column()
            ))
        }
    };
    if schema["type"] == "object" && !v.is_object() {
        return Some(format!(
            "the schema asks for an object and the reply is {}",
            kind(&v)
        ));
    }
    let missing: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| k.as_str())
        .filter(|k| v.get(k).is_none())
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "the reply lacks required key(s): {}{cut}",
            missing.join(", ")
        )
    })
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The wait before attempt `n + 1`: what the server asked for, else
/// exponential backoff with jitter (between half and all of the step).
fn backoff(cfg: &EndpointConfig, n: u32, asked: Option<Duration>, salt: i64) -> Duration {
    if let Some(d) = asked {
        return d;
    }
    let step = cfg
        .backoff_initial_ms
        .saturating_mul(1u64 << (n - 1).min(20))
        .min(cfg.backoff_max_ms) as f64;
    // A cheap deterministic-enough jitter: no need for a random crate.
    let mut x =
        (salt as u64 ^ (n as u64) << 32 ^ chrono::Utc::now().timestamp_subsec_nanos() as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    let frac = 0.5 + (x % 1000) as f64 / 2000.0;
    Duration::from_millis((step * frac) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Api, Message};

    fn req(schema: Option<serde_json::Value>) -> Request {
        Request {
            api: Api::Chat,
            model: "gpt-4o-mini".into(),
            messages: vec![Message::user("hi")],
            max_output: 50,
            temperature: Some(0.0),
            schema,
        }
    }

    #[test]
    fn structured_replies_are_checked_not_repaired() {
        let s = serde_json::json!({"type":"object","required":["a","b"]});
        let r = |t: &str, f: &str| Reply {
            text: t.into(),
            tokens_in: None,
            tokens_out: None,
            finish_reason: Some(f.into()),
        };
        assert_eq!(
            check_reply(&req(Some(s.clone())), &r(r#"{"a":1,"b":2}"#, "stop")),
            None
        );
        let p = check_reply(&req(Some(s.clone())), &r(r#"{"a":1,"#, "length")).unwrap();
        assert!(
            p.contains("not valid JSON") && p.contains("max_output = 50"),
            "{p}"
        );
        let p = check_reply(&req(Some(s)), &r(r#"{"a":1}"#, "stop")).unwrap();
        assert!(p.contains("required key(s): b"), "{p}");
        assert_eq!(check_reply(&req(None), &r("{", "stop")), None);
    }

    #[test]
    fn backoff_doubles_within_jitter_and_honours_retry_after() {
        let cfg = EndpointConfig::default();
        for n in 1..5 {
            let d = backoff(&cfg, n, None, 7).as_millis() as u64;
            let step = 500 * (1 << (n - 1));
            assert!(d >= step / 2 && d <= step, "attempt {n}: {d}");
        }
        assert_eq!(
            backoff(&cfg, 1, Some(Duration::from_secs(3)), 1),
            Duration::from_secs(3)
        );
    }

    #[tokio::test]
    async fn cache_hits_cost_nothing_and_failures_are_not_cached() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap()).unwrap();
        let rt = Arc::new(
            Runtime::new(
                Config::parse("").unwrap(),
                Some(store),
                Sink::Memory(Default::default()),
                RuntimeOptions {
                    client: Some(Arc::new(MockClient::new().rule("hi", "hello"))),
                    ..Default::default()
                },
            )
            .unwrap(),
        );
        let ctx = CallContext {
            stage: "test".into(),
            ..Default::default()
        };
        let a = rt.call(req(None), &ctx).await;
        assert_eq!((a.text.as_deref(), a.cached), (Some("hello"), false));
        // Within a statement the same outcome; in the next, the cache answers.
        assert_eq!(rt.call(req(None), &ctx).await, a);
        rt.begin_statement();
        let b = rt.call(req(None), &ctx).await;
        assert_eq!(
            (b.text.as_deref(), b.cached, b.usd),
            (Some("hello"), true, Some(0.0))
        );
        // A reply that fails its check is not cached.
        let s = serde_json::json!({"type":"object","required":["x"]});
        assert!(!rt.call(req(Some(s.clone())), &ctx).await.ok());
        rt.begin_statement();
        assert!(!rt.call(req(Some(s)), &ctx).await.cached);
        assert_eq!(rt.cache().unwrap().stats().writes, 1);
    }
}
