//! A scripted OpenAI-compatible HTTP server on 127.0.0.1 for tests and
//! benchmarks: chat and responses shapes, scripted replies, latency, 429
//! with `Retry-After`, 5xx, dropped connections, malformed and truncated
//! bodies. It speaks plain HTTP/1.1 with keep-alive over tokio, so the real
//! client code runs against it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::mock::example_of;

/// What the server does with one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A normal reply with this text.
    Reply(String),
    /// A reply cut at the output cap (`finish_reason = "length"`).
    ReplyCut(String),
    /// An HTTP status with a short error body and an optional `Retry-After` (seconds).
    Status(u16, Option<f64>),
    /// Close the connection without answering.
    Drop,
    /// A 200 whose body is this raw text (malformed JSON, a wrong shape).
    Raw(String),
    /// A 200 that promises a whole body and closes the connection half-way.
    Truncate,
    /// Wait this long before the next action (on top of the latency).
    Sleep(Duration, Box<Action>),
}

/// Actions for requests whose last user message contains `needle` (every
/// request when empty): taken in order, the last one repeating.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The text to look for.
    pub needle: String,
    /// What to do, in order.
    pub actions: Vec<Action>,
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The path (`/v1/chat/completions`, `/v1/responses`).
    pub path: String,
    /// Header names (lower case) and values.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Value,
}

#[derive(Debug, Default)]
struct State {
    rules: Vec<Rule>,
    /// Keep each request's headers and body (off for benchmarks, which
    /// only count, so the server's memory does not count as quarry's).
    keep: bool,
    count: AtomicUsize,
    answered: Mutex<Vec<Value>>,
    /// The bodies given a whole reply of status 200.
    paid: Mutex<Vec<Value>>,
    /// Answers given or promised; requests beyond `hold_after` wait.
    granted: AtomicUsize,
    hold_after: AtomicUsize,
    /// Requests whose last user message contains this wait.
    hold_matching: Mutex<Option<String>>,
    taken: Mutex<HashMap<usize, usize>>,
    seen: Mutex<Vec<Seen>>,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    /// Requests in a hundred given a fault instead of their answer, and
    /// the seed that picks which (see [`TestServer::inject_faults`]).
    fault_percent: AtomicUsize,
    fault_seed: std::sync::atomic::AtomicU64,
    slow: Mutex<Duration>,
    faults: AtomicUsize,
    /// Replies of status 200 given whole.
    ok_replies: AtomicUsize,
}

/// A running test server. Dropping it stops it.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl TestServer {
    /// Starts a server with `rules` and a fixed `latency` on every request.
    /// Requests no rule matches get an echo, or a JSON value that fits the
    /// requested schema.
    pub async fn start(rules: Vec<Rule>, latency: Duration) -> std::io::Result<Self> {
        Self::start_with(rules, latency, true).await
    }

    /// Like [`TestServer::start`]; `keep` false records only the count.
    pub async fn start_with(
        rules: Vec<Rule>,
        latency: Duration,
        keep: bool,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            rules,
            keep,
            hold_after: AtomicUsize::new(usize::MAX),
            ..Default::default()
        });
        let (tx, mut rx) = tokio::sync::oneshot::channel::<()>();
        let st = state.clone();
        tokio::spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            loop {
                tokio::select! {
                    _ = &mut rx => break,
                    acc = listener.accept() => {
                        let Ok((sock, _)) = acc else { continue };
                        let st = st.clone();
                        conns.spawn(async move { let _ = serve(sock, st, latency).await; });
                    }
                }
            }
            conns.abort_all();
        });
        Ok(Self {
            addr,
            state,
            stop: Some(tx),
        })
    }

    /// From now on, about `percent` requests in a hundred get a fault
    /// instead of their answer, drawn from `seed` and the request's number:
    /// 429 with and without `Retry-After`, 500, 503, a dropped connection,
    /// a body cut half-way, or a reply slower than `slow` (past a client's
    /// timeout). `percent` 0 makes the server healthy again.
    pub fn inject_faults(&self, percent: usize, seed: u64, slow: Duration) {
        self.state.fault_seed.store(seed, Ordering::SeqCst);
        self.state.fault_percent.store(percent, Ordering::SeqCst);
        *self.state.slow.lock().expect("slow") = slow;
    }

    /// Faults given so far, and replies of status 200 given whole.
    pub fn faults(&self) -> (usize, usize) {
        (
            self.state.faults.load(Ordering::SeqCst),
            self.state.ok_replies.load(Ordering::SeqCst),
        )
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Requests received so far.
    pub fn requests(&self) -> Vec<Seen> {
        self.state.seen.lock().expect("seen").clone()
    }

    /// How many requests arrived.
    pub fn count(&self) -> usize {
        self.state.count.load(Ordering::SeqCst)
    }

    /// Answers `n` requests in all, then holds every further request
    /// unanswered until [`TestServer::release`] (to stop a client at a known
    /// point).
    pub fn hold_after(&self, n: usize) {
        self.state.hold_after.store(n, Ordering::SeqCst);
    }

    /// Holds every request whose last user message contains `needle`
    /// unanswered until [`TestServer::release`] (to stop a client with one
    /// part of its work done and another not).
    pub fn hold_matching(&self, needle: &str) {
        *self.state.hold_matching.lock().expect("hold") = Some(needle.to_string());
    }

    /// Lets held requests go on.
    pub fn release(&self) {
        self.state.hold_after.store(usize::MAX, Ordering::SeqCst);
        *self.state.hold_matching.lock().expect("hold") = None;
    }

    /// The bodies of the requests answered (with a status or a reply, not a
    /// dropped or cut connection), in order.
    pub fn answered(&self) -> Vec<Value> {
        self.state.answered.lock().expect("answered").clone()
    }

    /// The bodies of the requests given a whole reply of status 200 (what
    /// a provider charges for; an error status is not), in order.
    pub fn paid(&self) -> Vec<Value> {
        self.state.paid.lock().expect("paid").clone()
    }

    /// The most requests that were in flight at once.
    pub fn peak_in_flight(&self) -> usize {
        self.state.peak.load(Ordering::SeqCst)
    }

    /// Stops accepting and closes open connections.
    pub fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn serve(mut sock: TcpStream, st: Arc<State>, latency: Duration) -> std::io::Result<()> {
    sock.set_nodelay(true)?;
    let mut buf = Vec::with_capacity(8192);
    loop {
        // Read one request: headers, then Content-Length bytes of body.
        let head_end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i;
            }
            let mut chunk = [0u8; 8192];
            let n = sock.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let mut lines = head.split("\r\n");
        let path = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or("/")
            .to_string();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let len: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + 4 + len {
            let mut chunk = [0u8; 8192];
            let n = sock.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let body: Value =
            serde_json::from_slice(&buf[head_end + 4..head_end + 4 + len]).unwrap_or(Value::Null);
        buf.drain(..head_end + 4 + len);

        let now = st.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        st.peak.fetch_max(now, Ordering::SeqCst);
        let n = st.count.fetch_add(1, Ordering::SeqCst);
        let action = match fault(&st, n) {
            Some(f) => {
                st.faults.fetch_add(1, Ordering::SeqCst);
                Some(f)
            }
            None => choose(&st, &body),
        };
        if st.keep {
            st.seen.lock().expect("seen").push(Seen {
                path: path.clone(),
                headers,
                body: body.clone(),
            });
        }
        tokio::time::sleep(latency).await;
        let prompt = last_user(&body);
        loop {
            let held = st
                .hold_matching
                .lock()
                .expect("hold")
                .as_ref()
                .is_some_and(|n| prompt.contains(n.as_str()));
            if held {
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
            let g = st.granted.load(Ordering::SeqCst);
            if g < st.hold_after.load(Ordering::SeqCst) {
                if st
                    .granted
                    .compare_exchange(g, g + 1, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    break;
                }
                continue;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let whole = !matches!(
            action,
            Some(Action::Status(..) | Action::Drop | Action::Truncate | Action::Sleep(..))
        );
        let res = answer(&mut sock, &path, &body, action).await;
        if whole && matches!(res, Ok(true)) {
            st.ok_replies.fetch_add(1, Ordering::SeqCst);
            if st.keep {
                st.paid.lock().expect("paid").push(body.clone());
            }
        }
        st.in_flight.fetch_sub(1, Ordering::SeqCst);
        if st.keep && matches!(res, Ok(true)) {
            st.answered.lock().expect("answered").push(body.clone());
        }
        if !res? {
            return Ok(());
        }
    }
}

/// The fault request `n` gets, if any (see [`TestServer::inject_faults`]).
fn fault(st: &State, n: usize) -> Option<Action> {
    let percent = st.fault_percent.load(Ordering::SeqCst) as u64;
    if percent == 0 {
        return None;
    }
    // splitmix64 of the seed and the request's number.
    let mut z = st
        .fault_seed
        .load(Ordering::SeqCst)
        .wrapping_add((n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    if z % 100 >= percent {
        return None;
    }
    let slow = *st.slow.lock().expect("slow");
    Some(match (z / 100) % 7 {
        0 => Action::Status(429, Some(0.01)),
        1 => Action::Status(429, None),
        2 => Action::Status(500, None),
        3 => Action::Status(503, None),
        4 => Action::Drop,
        5 => Action::Truncate,
        _ => Action::Sleep(slow, Box::new(Action::Reply("too late".into()))),
    })
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

fn last_user(body: &Value) -> String {
    let msgs = body["messages"].as_array().or(body["input"].as_array());
    msgs.into_iter()
        .flatten()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn choose(st: &State, body: &Value) -> Option<Action> {
    let prompt = last_user(body);
    let (i, rule) = st
        .rules
        .iter()
        .enumerate()
        .find(|(_, r)| prompt.contains(&r.needle))?;
    let mut taken = st.taken.lock().expect("taken");
    let n = taken.entry(i).or_insert(0);
    let a = rule.actions.get(*n).or(rule.actions.last()).cloned();
    *n += 1;
    a
}

fn schema_of(body: &Value) -> Option<&Value> {
    let s = &body["response_format"]["json_schema"]["schema"];
    let r = &body["text"]["format"]["schema"];
    (!s.is_null()).then_some(s).or((!r.is_null()).then_some(r))
}

fn reply_body(path: &str, body: &Value, text: &str, cut: bool) -> String {
    let tin = serde_json::to_string(&body["messages"])
        .unwrap_or_default()
        .len()
        .max(
            serde_json::to_string(&body["input"])
                .unwrap_or_default()
                .len(),
        )
        / 4;
    let tout = text.len().div_ceil(4);
    let v = if path.ends_with("/responses") {
        json!({"id": "resp_test", "object": "response", "status": if cut {"incomplete"} else {"completed"},
            "incomplete_details": if cut { json!({"reason": "max_output_tokens"}) } else { Value::Null },
            "output": [{"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": text}]}],
            "usage": {"input_tokens": tin, "output_tokens": tout}})
    } else {
        json!({"id": "chatcmpl-test", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": if cut {"length"} else {"stop"}}],
            "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}})
    };
    v.to_string()
}

/// Writes the answer; `false` when the connection was closed on purpose.
async fn answer(
    sock: &mut TcpStream,
    path: &str,
    body: &Value,
    action: Option<Action>,
) -> std::io::Result<bool> {
    let mut action = action.unwrap_or_else(|| {
        Action::Reply(match schema_of(body) {
            Some(s) => example_of(s).to_string(),
            None => format!("echo: {}", last_user(body)),
        })
    });
    while let Action::Sleep(d, next) = action {
        tokio::time::sleep(d).await;
        action = *next;
    }
    let (status, extra, payload) = match action {
        Action::Reply(t) => (200, String::new(), reply_body(path, body, &t, false)),
        Action::ReplyCut(t) => (200, String::new(), reply_body(path, body, &t, true)),
        Action::Raw(r) => (200, String::new(), r),
        Action::Status(code, ra) => (
            code,
            ra.map(|s| format!("Retry-After: {s}\r\n"))
                .unwrap_or_default(),
            json!({"error": {"message": format!("scripted {code}"), "type": "test"}}).to_string(),
        ),
        Action::Drop => return Ok(false),
        Action::Truncate => {
            let full = reply_body(path, body, "this reply never arrives whole", false);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                full.len()
            );
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(&full.as_bytes()[..full.len() / 2]).await?;
            sock.flush().await?;
            return Ok(false);
        }
        Action::Sleep(..) => unreachable!("sleeps are unwrapped above"),
    };
    let reason = match status {
        200 => "OK",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let msg = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\nConnection: keep-alive\r\n\r\n{payload}",
        payload.len()
    );
    sock.write_all(msg.as_bytes()).await?;
    Ok(true)
}

/// A session for tests and benchmarks: `config` (quarry.toml text) written
/// to `dir/quarry.toml`, the store in `dir/store`.
pub fn session_in(
    dir: &std::path::Path,
    config: &str,
) -> crate::Result<datafusion::prelude::SessionContext> {
    let cfg = dir.join("quarry.toml");
    std::fs::write(&cfg, config)
        .map_err(|e| crate::QuarryError::Invalid(format!("cannot write {}: {e}", cfg.display())))?;
    crate::session(&crate::Settings {
        store: Some(dir.join("store").display().to_string()),
        config: Some(cfg),
        ..Default::default()
    })
}
