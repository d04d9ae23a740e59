//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;

/// The project root (tests run from it).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The bundled example corpus.
pub fn corpus() -> PathBuf {
    root().join("examples/corpus")
}

/// A session with a store in `store` (or none).
pub fn ctx(store: Option<&Path>) -> SessionContext {
    quarry::session(&quarry::Settings {
        store: store.map(|p| p.display().to_string()),
        ..Default::default()
    })
    .expect("session")
}

/// Runs one query and collects its batches.
pub async fn sql(ctx: &SessionContext, q: &str) -> datafusion::error::Result<Vec<RecordBatch>> {
    ctx.sql(q).await?.collect().await
}

/// Runs one query and renders it as a table.
pub async fn table(ctx: &SessionContext, q: &str) -> String {
    let b = sql(ctx, q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
    pretty_format_batches(&b).expect("pretty").to_string()
}

/// A TCP port free on 127.0.0.1 just now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The quarry binary.
pub fn quarry() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_quarry"));
    c.current_dir(root());
    c
}

/// Writes a minimal DOCX with the given body XML.
pub fn write_docx(path: &Path, body: &str) {
    use std::io::Write;
    let f = std::fs::File::create(path).expect("create docx");
    let mut z = zip::ZipWriter::new(f);
    let o = zip::write::SimpleFileOptions::default();
    let w = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;
    z.start_file("word/document.xml", o).expect("zip");
    z.write_all(
        format!(r#"<?xml version="1.0"?><w:document {w}><w:body>{body}</w:body></w:document>"#)
            .as_bytes(),
    )
    .expect("zip");
    z.finish().expect("zip");
}

/// One column of a query's batches as text (NULL as `None`).
pub fn strings(b: &[RecordBatch], name: &str) -> Vec<Option<String>> {
    use datafusion::arrow::array::{Array, AsArray};
    b.iter()
        .flat_map(|b| {
            let c = datafusion::arrow::compute::cast(
                b.column_by_name(name).expect("column"),
                &datafusion::arrow::datatypes::DataType::Utf8,
            )
            .expect("cast");
            let c = c.as_string::<i32>().clone();
            (0..c.len())
                .map(move |i| c.is_valid(i).then(|| c.value(i).to_string()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The 95% Wilson score interval of `x` in `n`, written out from the
/// formula (the calibration tests check quarry's against it).
pub fn wilson_by_hand(x: f64, n: f64) -> (f64, f64) {
    let z = 1.959_963_984_540_054_f64;
    let p = x / n;
    let den = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / den;
    let h = z / den * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((c - h).max(0.0), (c + h).min(1.0))
}

/// A session whose model is served by a scripted test server at `url`
/// (`extra`: more `[endpoints.default]` lines), with its store in `dir`.
pub fn scripted_session(url: &str, dir: &Path, extra: &str) -> SessionContext {
    let cfg = format!(
        "[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{url}\"\nbackoff_initial_ms = 5\n{extra}\n"
    );
    quarry::model::test_server::session_in(dir, &cfg).expect("session")
}

/// A `corpus` folder under `dir` holding these files.
pub fn corpus_with(dir: &std::path::Path, files: &[(&str, &str)]) -> std::path::PathBuf {
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for (name, text) in files {
        std::fs::write(corpus.join(name), text).unwrap();
    }
    corpus
}

/// The Python that `.ci/run` installs the tests' tools into (rdflib,
/// duckdb, deltalake): `$QUARRY_VENV`, else ~/.cache/quarry/venv.
pub fn python() -> std::path::PathBuf {
    let venv = std::env::var_os("QUARRY_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                .join(".cache/quarry/venv")
        });
    venv.join("bin/python")
}

/// Every file under `dir`, sorted (none when it does not exist).
pub fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The standard output of a finished command, which must have succeeded
/// (else its standard error is the failure).
pub fn stdout_of(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// `quarry sql` running `queries` with its store in `store` and its model
/// at the scripted server `url` (4 requests in flight, 2 attempts; the
/// configuration is written beside the store), none of the environment's
/// model settings, its output captured.
pub fn sql_command(url: &str, store: &Path, queries: &[String]) -> std::process::Command {
    sql_command_at(
        url,
        &store.display().to_string(),
        &store.with_extension("toml"),
        queries,
    )
}

/// [`sql_command`] with the store at `store` (a folder or an `s3://`
/// prefix) and the configuration written to `cfg`.
pub fn sql_command_at(
    url: &str,
    store: &str,
    cfg: &Path,
    queries: &[String],
) -> std::process::Command {
    std::fs::write(cfg, format!("[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{url}\"\nmax_in_flight = 4\nmax_attempts = 2\nbackoff_initial_ms = 5\n")).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_quarry"));
    cmd.args([
        "sql",
        "--store",
        store,
        "--config",
        &cfg.display().to_string(),
    ]);
    for q in queries {
        cmd.args(["-c", q]);
    }
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("QUARRY_MODEL")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    cmd
}

/// How many documents the ledger of the store at `store` lists as finished
/// for `table` (read on a thread of its own, so a test can poll it while
/// another process writes the store).
pub fn finished(store: &Path, table: &str) -> usize {
    let store = quarry::store::Store::open(store.to_str().unwrap()).unwrap();
    let table = table.to_string();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(quarry::store::results::finished(&store))
            .unwrap_or_default()
            .get(&table)
            .copied()
            .unwrap_or(0)
    })
    .join()
    .unwrap()
}

/// The first value of a query's first column, as a whole number.
pub async fn number(ctx: &SessionContext, q: &str) -> i64 {
    let b = sql(ctx, q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
    let c = datafusion::arrow::compute::cast(
        b[0].column(0),
        &datafusion::arrow::datatypes::DataType::Int64,
    )
    .unwrap();
    datafusion::arrow::array::AsArray::as_primitive::<datafusion::arrow::datatypes::Int64Type>(&c)
        .value(0)
}

/// The messages of every request `srv` has answered, in order.
pub fn answered(srv: &quarry::model::test_server::TestServer) -> Vec<String> {
    srv.answered()
        .iter()
        .map(|v| v["messages"].to_string())
        .collect()
}

/// The messages of the requests `srv` gave a whole reply of status 200
/// (what a provider charges for), in order.
pub fn paid(srv: &quarry::model::test_server::TestServer) -> Vec<String> {
    srv.paid()
        .iter()
        .map(|v| v["messages"].to_string())
        .collect()
}

/// After a killed run started again: no request among `before` (answered
/// before the kill) was answered again in `all`, and `all` is at most one
/// more than an uninterrupted run's `total` (the request held at the kill,
/// answered into a closed connection and sent again).
pub fn assert_none_sent_again(before: &[String], all: &[String], total: usize) {
    let again: Vec<&String> = all[before.len()..]
        .iter()
        .filter(|a| before.contains(a))
        .collect();
    assert!(again.is_empty(), "sent again after an answer: {again:#?}");
    assert!(all.len() <= total + 1, "{} of {total}", all.len());
}

/// Runs `script` in the tests' Python with `args` (DuckDB and deltalake
/// reading the store) and gives its words of output.
pub fn python_words(script: &str, args: &[&Path]) -> Vec<String> {
    let out = std::process::Command::new(python())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "duckdb and deltalake in $QUARRY_VENV (.ci/run installs them): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}
