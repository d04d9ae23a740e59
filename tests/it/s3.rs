//! Sources and the store on a real S3-compatible server (moto_server) that
//! the test starts on 127.0.0.1. A test that cannot start it fails.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjPath;
use object_store::{ObjectStoreExt, PutPayload};

use crate::common::{ctx, table};

struct Moto {
    port: u16,
    _child: Child,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self._child.kill();
    }
}

fn moto() -> &'static Moto {
    static MOTO: OnceLock<Moto> = OnceLock::new();
    MOTO.get_or_init(|| {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // A static is never dropped, so a watchdog stops moto when this test
        // binary exits; no server outlives its tests.
        let script = format!(
            "command -v moto_server >/dev/null || exit 127; moto_server -H 127.0.0.1 -p {port} & m=$!; \
             while kill -0 {} 2>/dev/null; do sleep 1; done; kill $m",
            std::process::id()
        );
        let mut child = Command::new("sh")
            .args(["-c", &script])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sh starts moto_server");
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("moto_server exited ({status}): it must be installed (pip install 'moto[server]'); .ci/run installs it");
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "moto_server did not start on port {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // The AWS variables every S3 user sets; the endpoint points at moto.
        std::env::set_var("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"));
        std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
        std::env::set_var("AWS_REGION", "us-east-1");
        Moto {
            port,
            _child: child,
        }
    })
}

/// The bucket `name` on the S3 test server (made if it is not there), and
/// a client for it.
pub async fn bucket(name: &str) -> impl ObjectStoreExt {
    let m = moto();
    let url = format!("http://127.0.0.1:{}/{name}", m.port);
    let resp = reqwest::Client::new()
        .put(&url)
        .send()
        .await
        .expect("create bucket");
    assert!(
        resp.status().is_success() || resp.status().as_u16() == 409,
        "create bucket: {}",
        resp.status()
    );
    AmazonS3Builder::new()
        .with_bucket_name(name)
        .with_endpoint(format!("http://127.0.0.1:{}", m.port))
        .with_allow_http(true)
        .with_virtual_hosted_style_request(false)
        .with_region("us-east-1")
        .with_access_key_id("testing")
        .with_secret_access_key("testing")
        .build()
        .expect("s3 client")
}

/// Puts every file of the local folder `dir` under `prefix/`.
pub async fn upload(s3: &impl ObjectStoreExt, dir: &std::path::Path, prefix: &str) {
    for p in crate::common::walk_files(dir) {
        let rel = p.strip_prefix(dir).unwrap().display().to_string();
        s3.put(
            &ObjPath::from(format!("{prefix}/{rel}")),
            PutPayload::from(std::fs::read(&p).unwrap()),
        )
        .await
        .unwrap();
    }
}

/// Fetches every object under `prefix/` into the local folder `to`, and
/// returns the files written.
pub async fn download(
    s3: &impl ObjectStoreExt,
    prefix: &str,
    to: &std::path::Path,
) -> Vec<std::path::PathBuf> {
    use futures::TryStreamExt;
    let metas: Vec<_> = s3
        .list(Some(&ObjPath::from(prefix)))
        .try_collect()
        .await
        .unwrap();
    let mut out = Vec::new();
    for m in metas {
        let bytes = s3.get(&m.location).await.unwrap().bytes().await.unwrap();
        let file = to.join(m.location.as_ref());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &bytes).unwrap();
        out.push(file);
    }
    out.sort();
    out
}

/// What the storage proxy did with requests so far.
#[derive(Debug, Default)]
pub struct ProxyCounts {
    /// Requests received.
    pub requests: std::sync::atomic::AtomicUsize,
    /// Answered 500 or 503 without reaching the server.
    pub errors: std::sync::atomic::AtomicUsize,
    /// The connection closed before the request reached the server.
    pub dropped: std::sync::atomic::AtomicUsize,
    /// The request reached the server and its answer was lost.
    pub lost: std::sync::atomic::AtomicUsize,
    /// The answer cut half-way.
    pub cut: std::sync::atomic::AtomicUsize,
}

/// A proxy on 127.0.0.1 in front of the S3 test server that gives about
/// `percent`% of requests a storage fault, drawn from `seed`: a 500 or a
/// 503 (S3's `InternalError`, `SlowDown`), the connection closed before the
/// request is passed on, the request passed on and its answer lost (the
/// write happened; the client cannot know), or the answer cut half-way.
/// Every other request is passed on whole, one connection each.
pub struct StorageProxy {
    /// The proxy's port.
    pub port: u16,
    /// What it did.
    pub counts: std::sync::Arc<ProxyCounts>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StorageProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl StorageProxy {
    /// Starts the proxy in front of the S3 test server.
    pub async fn start(percent: usize, seed: u64) -> Self {
        Self::serve(percent, seed, None).await
    }

    /// A proxy that passes every request on and loses the answers to the
    /// first `n` PUTs whose path holds `pattern` (the write happens; the
    /// client is not told).
    pub async fn losing_answers(pattern: &str, n: usize) -> Self {
        Self::serve(
            0,
            1,
            Some((pattern.to_string(), std::sync::atomic::AtomicUsize::new(n))),
        )
        .await
    }

    async fn serve(
        percent: usize,
        seed: u64,
        lose: Option<(String, std::sync::atomic::AtomicUsize)>,
    ) -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::sync::Arc;
        let lose = Arc::new(lose);
        let upstream = moto().port;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let counts = Arc::new(ProxyCounts::default());

        let draws = Arc::new(AtomicU64::new(seed.max(1)));
        let c = counts.clone();
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let (c, draws, lose) = (c.clone(), draws.clone(), lose.clone());
                tokio::spawn(async move {
                    // One draw a request: xorshift over a shared state.
                    let draw = || {
                        let mut x = draws.load(Ordering::SeqCst);
                        loop {
                            let mut y = x;
                            y ^= y << 13;
                            y ^= y >> 7;
                            y ^= y << 17;
                            match draws.compare_exchange(x, y, Ordering::SeqCst, Ordering::SeqCst) {
                                Ok(_) => return y,
                                Err(now) => x = now,
                            }
                        }
                    };
                    let _ = proxy_one(
                        sock,
                        upstream,
                        &c,
                        percent as u64,
                        draw,
                        lose.as_ref().as_ref(),
                    )
                    .await;
                });
            }
        });
        Self { port, counts, task }
    }

    /// `http://127.0.0.1:PORT`, for `AWS_ENDPOINT_URL`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Faults given so far (every kind).
    pub fn faults(&self) -> usize {
        use std::sync::atomic::Ordering::SeqCst;
        let c = &self.counts;
        c.errors.load(SeqCst) + c.dropped.load(SeqCst) + c.lost.load(SeqCst) + c.cut.load(SeqCst)
    }
}

/// An HTTP head (without its blank line) with `Connection: close` in place
/// of any `Connection` header, and the blank line.
fn closing(head: &str) -> String {
    let mut out: String = head
        .split("\r\n")
        .filter(|l| {
            !l.split_once(':')
                .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("connection"))
        })
        .map(|l| format!("{l}\r\n"))
        .collect();
    out.push_str("Connection: close\r\n\r\n");
    out
}

/// Reads one HTTP/1.1 request from `sock` (head, then Content-Length bytes)
/// and passes it on to `upstream` or gives it a fault (`lose`: a path's
/// pattern and how many more PUTs to it lose their answer).
async fn proxy_one(
    mut sock: tokio::net::TcpStream,
    upstream: u16,
    counts: &ProxyCounts,
    percent: u64,
    mut draw: impl FnMut() -> u64,
    lose: Option<&(String, std::sync::atomic::AtomicUsize)>,
) -> std::io::Result<()> {
    use std::sync::atomic::Ordering::SeqCst;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = Vec::with_capacity(16 * 1024);
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    assert!(
        !head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "the storage proxy reads Content-Length bodies only: {head}"
    );
    let len: usize = head
        .split("\r\n")
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + 4 + len {
        let mut chunk = [0u8; 16 * 1024];
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    counts.requests.fetch_add(1, SeqCst);
    let roll = draw();
    let mut fault = (roll % 100 < percent).then_some((roll >> 8) % 5);
    if let Some((pattern, left)) = lose {
        let line = head.lines().next().unwrap_or_default();
        if line.starts_with("PUT ")
            && line.contains(pattern.as_str())
            && left
                .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
                .is_ok()
        {
            fault = Some(3);
        }
    }
    match fault {
        Some(k @ (0 | 1)) => {
            counts.errors.fetch_add(1, SeqCst);
            let (status, code) = if k == 0 {
                ("500 Internal Server Error", "InternalError")
            } else {
                ("503 Slow Down", "SlowDown")
            };
            let body = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code><Message>injected by the test's storage proxy</Message></Error>"
            );
            let reply = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            sock.write_all(reply.as_bytes()).await?;
            return sock.shutdown().await;
        }
        Some(2) => {
            counts.dropped.fetch_add(1, SeqCst);
            return Ok(());
        }
        _ => {}
    }
    // Passed on, one connection a request.
    let mut up = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await?;
    let mut req = closing(&head).into_bytes();
    req.extend_from_slice(&buf[head_end + 4..]);
    up.write_all(&req).await?;
    let mut reply = Vec::new();
    up.read_to_end(&mut reply).await?;
    // The answer says the connection closes after it, as it does.
    if let Some(i) = reply.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = closing(&String::from_utf8_lossy(&reply[..i]));
        reply = [head.as_bytes(), &reply[i + 4..]].concat();
    }
    match fault {
        Some(3) => {
            counts.lost.fetch_add(1, SeqCst);
            Ok(())
        }
        Some(_) => {
            counts.cut.fetch_add(1, SeqCst);
            sock.write_all(&reply[..reply.len() / 2]).await?;
            sock.shutdown().await
        }
        None => {
            sock.write_all(&reply).await?;
            sock.shutdown().await
        }
    }
}

#[tokio::test]
async fn documents_inventory_and_chunks_from_s3() {
    let s3 = bucket("corpus").await;
    for f in [
        "PMC3546023.md",
        "PMC3751573.html",
        "PMC3321528.docx",
        "PMC3751573.pdf",
    ] {
        let bytes = std::fs::read(crate::common::corpus().join(f)).unwrap();
        s3.put(
            &ObjPath::from(format!("trials/{f}")),
            PutPayload::from(bytes),
        )
        .await
        .unwrap();
    }
    s3.put(
        &ObjPath::from("trials/2020/extra.txt"),
        PutPayload::from("An extra report."),
    )
    .await
    .unwrap();
    let c = ctx(None);
    let t = table(
        &c,
        "SELECT file_name, status FROM documents('s3://corpus/trials/') ORDER BY 1",
    )
    .await;
    assert_eq!(
        t,
        "\
+-----------------+--------+
| file_name       | status |
+-----------------+--------+
| PMC3321528.docx | ok     |
| PMC3546023.md   | ok     |
| PMC3751573.html | ok     |
| PMC3751573.pdf  | ok     |
+-----------------+--------+"
    );
    let t = table(
        &c,
        "SELECT source, status FROM inventory('s3://corpus/trials/') WHERE folder = '2020'",
    )
    .await;
    assert!(
        t.contains("s3://corpus/trials/2020/extra.txt | not_scanned"),
        "{t}"
    );
    let t = table(
        &c,
        "SELECT count(*) AS n FROM documents('s3://corpus/trials/', 'recursive=true')",
    )
    .await;
    assert!(t.contains("| 5 |"), "{t}");
    // The same text gives the same document_id from S3 and from disk.
    let disk = table(
        &c,
        "SELECT document_id FROM documents('examples/corpus/PMC3546023.md')",
    )
    .await;
    let remote = table(
        &c,
        "SELECT document_id FROM documents('s3://corpus/trials/PMC3546023.md')",
    )
    .await;
    assert_eq!(disk, remote);
    let t = table(
        &c,
        "SELECT max(tokens) <= 100 AS capped FROM chunks('s3://corpus/trials/', 'sentence', 100)",
    )
    .await;
    assert!(t.contains("| true "), "{t}");
    let e = c
        .sql("SELECT * FROM documents('s3://corpus/nothing-here/')")
        .await;
    let n = match e {
        Ok(df) => df
            .collect()
            .await
            .map(|b| b.iter().map(|b| b.num_rows()).sum::<usize>())
            .unwrap_or(0),
        Err(_) => 0,
    };
    assert_eq!(n, 0, "an empty prefix has no rows");
}

#[tokio::test]
async fn the_store_can_live_on_s3() {
    let _ = bucket("runs").await;
    let s3 = bucket("docs").await;
    s3.put(
        &ObjPath::from("a/report.txt"),
        PutPayload::from("The 2019 cohort had 482 participants."),
    )
    .await
    .unwrap();
    let settings = quarry::Settings {
        store: Some("s3://runs/store/".into()),
        ..Default::default()
    };
    let q = "SELECT file_name, cached FROM documents('s3://docs/a/')";
    let first = table(&quarry::session(&settings).unwrap(), q).await;
    assert!(first.contains("| report.txt | false  |"), "{first}");
    let second = table(&quarry::session(&settings).unwrap(), q).await;
    assert!(second.contains("| report.txt | true   |"), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_cache_and_trace_live_on_s3() {
    use quarry::model::test_server::TestServer;
    bucket("llmruns").await;
    let srv = TestServer::start(vec![], Duration::ZERO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("quarry.toml");
    std::fs::write(
        &cfg,
        format!("[endpoints.default]\nbase_url = \"{}\"\n", srv.base_url()),
    )
    .unwrap();
    let settings = quarry::Settings {
        store: Some("s3://llmruns/store/".into()),
        config: Some(cfg),
        ..Default::default()
    };
    let q = "SELECT llm('hello ' || v) AS a FROM (VALUES (1), (2)) t(v) ORDER BY a";
    let first = table(&quarry::session(&settings).unwrap(), q).await;
    assert!(first.contains("echo: hello 2"), "{first}");
    let ctx = quarry::session(&settings).unwrap();
    assert_eq!(table(&ctx, q).await, first);
    assert_eq!(
        srv.count(),
        2,
        "the second run was answered from the cache on S3"
    );
    let calls = table(
        &ctx,
        "SELECT cached, count(*) AS n FROM calls GROUP BY cached ORDER BY cached",
    )
    .await;
    assert!(
        calls.contains("| false  | 2 |") && calls.contains("| true   | 2 |"),
        "{calls}"
    );
}

/// An extraction over an S3 prefix with the store on S3: each document's
/// rows are kept there, the store's `extraction` and `evidence` tables read
/// them in the next session, and running the extraction again restores
/// them without a single call (none sent, none answered from the cache).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extraction_results_live_on_s3_and_are_restored() {
    use quarry::model::test_server::{Action, Rule, TestServer};
    bucket("xruns").await;
    let s3 = bucket("xdocs").await;
    for (i, n) in [(1, 120), (2, 80), (3, 45)] {
        s3.put(
            &ObjPath::from(format!("trials/t{i}.txt")),
            PutPayload::from(format!("Trial {i}. We enrolled {n} participants.")),
        )
        .await
        .unwrap();
    }
    let rules = [(1, 120), (2, 80), (3, 45)]
        .iter()
        .map(|(i, n)| Rule {
            needle: format!("Trial {i}."),
            actions: vec![Action::Reply(
                serde_json::json!({"n": n, "n__quote": format!("We enrolled {n} participants.")})
                    .to_string(),
            )],
        })
        .collect();
    let srv = TestServer::start(rules, Duration::ZERO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("quarry.toml");
    std::fs::write(
        &cfg,
        format!(
            "[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{}\"\n",
            srv.base_url()
        ),
    )
    .unwrap();
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        "name = \"n\"\n[[fields]]\nname = \"n\"\ndescription = \"Participants\"\ntype = \"integer\"\n",
    )
    .unwrap();
    let settings = quarry::Settings {
        store: Some("s3://xruns/store/".into()),
        config: Some(cfg),
        ..Default::default()
    };
    let q = format!(
        "SELECT regexp_replace(source, '^.*/', '') AS f, n, n_filled, status FROM extract('s3://xdocs/trials/', '{}') ORDER BY f",
        proto.display()
    );
    let first = table(&quarry::session(&settings).unwrap(), &q).await;
    assert!(
        first.contains("| t1.txt | 120 | 1        | ok     |")
            && first.contains("| t3.txt | 45  | 1        | ok     |"),
        "{first}"
    );
    assert_eq!(srv.count(), 3);
    let ctx = quarry::session(&settings).unwrap();
    let calls = "SELECT count(*) AS n FROM calls";
    let traced = table(&ctx, calls).await;
    assert_eq!(table(&ctx, &q).await, first);
    assert_eq!(
        table(&ctx, calls).await,
        traced,
        "restored: no call at all, not even a cached one"
    );
    let stored = table(
        &ctx,
        "SELECT regexp_replace(source, '^.*/', '') AS f, n, n_filled, status FROM extraction ORDER BY f",
    )
    .await;
    assert_eq!(stored, first);
    let ev = table(
        &ctx,
        "SELECT value, quote, verified FROM evidence ORDER BY value",
    )
    .await;
    assert!(
        ev.contains("| 120   | We enrolled 120 participants. | true     |"),
        "{ev}"
    );
    assert_eq!(ev.lines().count(), 3 + 4, "{ev}");
}

/// Records from exports on S3, matched to files on S3, and the flow.
#[tokio::test]
async fn records_and_flow_from_s3() {
    let s3 = bucket("review").await;
    let ex = crate::common::root().join("examples/review");
    for f in [
        "exports/scopus.ris",
        "exports/pubmed.ris",
        "pdfs/smith2019.txt",
    ] {
        let bytes = std::fs::read(ex.join(f)).unwrap();
        s3.put(&ObjPath::from(f), PutPayload::from(bytes))
            .await
            .unwrap();
    }
    let c = ctx(None);
    let t = table(
        &c,
        "SELECT database, count(*) AS n, count(duplicate_of) AS duplicates, max(matched_source) AS matched FROM records('s3://review/exports/', 'files=s3://review/pdfs/') GROUP BY database ORDER BY database",
    )
    .await;
    assert_eq!(
        t,
        "\
+------------+---+------------+---------------------------------+
| database   | n | duplicates | matched                         |
+------------+---+------------+---------------------------------+
| Scopus     | 2 | 1          |                                 |
| pubmed.ris | 1 | 0          | s3://review/pdfs/smith2019.txt  |
+------------+---+------------+---------------------------------+"
            .replace(
                "s3://review/pdfs/smith2019.txt  |",
                "s3://review/pdfs/smith2019.txt |"
            )
            .replace(
                "+---------------------------------+",
                "+--------------------------------+"
            )
            .replace(
                "| matched                         |",
                "| matched                        |"
            )
            .replace(
                "|                                 |",
                "|                                |"
            )
    );
    let t = table(
        &c,
        "SELECT stage, n FROM flow('s3://review/exports/', 'files=s3://review/pdfs/') WHERE stage IN ('screened', 'not_retrieved', 'assessed')",
    )
    .await;
    assert!(
        t.contains("| screened      | 2 |")
            && t.contains("| not_retrieved | 1 |")
            && t.contains("| assessed      | 1 |"),
        "{t}"
    );
}

/// Two quarry processes extracting claims into one store on S3 at once:
/// their commits race for the same log entries (conditional puts); every
/// window's commit lands under a revision of its own and none overwrites
/// another's rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_commit_claims_to_one_s3_store_and_lose_no_revision() {
    use quarry::model::test_server::{Action, Rule, TestServer};
    bucket("claimstore").await;
    let s3 = bucket("claimdocs").await;
    // 40 papers per process: three windows (16, 16, 8) and three commits each.
    for set in ["a", "b"] {
        for k in 0..40 {
            s3.put(
                &ObjPath::from(format!("{set}/udg{k}.txt")),
                PutPayload::from(format!(
                    "UDG-{set}{k} is one of the galaxies in set {set}. Every galaxy here has an effective radius of 2 kpc in the g band.\n"
                )),
            )
            .await
            .unwrap();
        }
    }
    let reply = serde_json::json!({"claims": [{"kind": "measurement", "subject": "galaxy",
        "predicate": "effective_radius", "quantity": {"verbatim": "2 kpc", "value": 2, "unit_text": "kpc"},
        "context": {"band": "g"},
        "quote": "Every galaxy here has an effective radius of 2 kpc in the g band."}]})
    .to_string();
    let srv = TestServer::start(
        vec![Rule {
            needle: String::new(),
            actions: vec![Action::Reply(reply)],
        }],
        Duration::from_millis(15),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("quarry.toml");
    std::fs::write(
        &cfg,
        format!(
            "[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{}\"\n",
            srv.base_url()
        ),
    )
    .unwrap();
    let spec = dir.path().join("claims.toml");
    std::fs::write(&spec, crate::claims::SPEC).unwrap();
    let run = |set: &str| {
        crate::common::quarry()
            .args(["sql", "--store", "s3://claimstore/store/", "--config"])
            .arg(&cfg)
            .args(["--format", "csv", "-c"])
            .arg(format!(
                "SELECT count(*) AS n FROM claims('s3://claimdocs/{set}/', '{}')",
                spec.display()
            ))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("quarry runs")
    };
    let (a, b) = (run("a"), run("b"));
    for p in [a, b] {
        let out = p.wait_with_output().unwrap();
        let (o, e) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{o}\n{e}");
        assert_eq!(o.trim(), "n\n40", "{e}");
        assert!(!e.contains("could not be put in the store"), "{e}");
    }
    let ctx = quarry::session(&quarry::Settings {
        store: Some("s3://claimstore/store/".into()),
        ..Default::default()
    })
    .unwrap();
    let t = table(
        &ctx,
        "SELECT count(*) AS n, count(DISTINCT source) AS papers, count(DISTINCT revision) AS revisions, \
         min(revision) AS first, max(revision) AS last FROM claims",
    )
    .await;
    assert!(
        t.contains("| 80 | 80     | 6         | 0     | 5    |"),
        "six commits, revisions 0 to 5, every paper's claim kept: {t}"
    );
    // Every revision's rows are one process's window: one set, 16 or 8 papers.
    let per = table(
        &ctx,
        "SELECT revision, count(DISTINCT regexp_replace(source, '^s3://claimdocs/([ab])/.*$', '\\1')) AS sets, \
         count(*) AS n FROM claims GROUP BY revision ORDER BY revision",
    )
    .await;
    assert_eq!(per.matches("| 1    | 16 |").count(), 4, "{per}");
    assert_eq!(per.matches("| 1    | 8  |").count(), 2, "{per}");
    // The change feed has each commit's additions.
    let added = table(
        &ctx,
        "SELECT count(*) AS n, count(DISTINCT revision) AS r FROM changes_since(-1) WHERE change = 'added'",
    )
    .await;
    assert!(added.contains("| 80 | 6 |"), "{added}");
}
