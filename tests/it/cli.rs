//! The command line: -c, -f, formats, errors, the interactive shell.

use std::io::Write;
use std::process::Stdio;

use crate::common::quarry;

#[test]
fn count_of_the_example_corpus_is_its_file_count() {
    let files = std::fs::read_dir(crate::common::corpus()).unwrap().count();
    let out = quarry()
        .args([
            "sql",
            "--no-store",
            "--format",
            "csv",
            "-c",
            "SELECT count(*) AS n FROM documents('examples/corpus/')",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("n\n{files}\n")
    );
}

#[test]
fn json_and_table_formats() {
    let out = quarry()
        .args([
            "sql",
            "--no-store",
            "--format",
            "json",
            "-c",
            "SELECT 1 AS one, 'a' AS s, true AS b",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v, serde_json::json!([{"one": 1, "s": "a", "b": true}]));
    let out = quarry()
        .args(["sql", "--no-store", "-c", "SELECT 1 AS one"])
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("| one |") && s.contains("| 1   |"), "{s}");
}

#[test]
fn errors_are_one_line_on_stderr_and_exit_non_zero() {
    let out = quarry()
        .args([
            "sql",
            "--no-store",
            "-c",
            "SELECT * FROM documents('no/such/folder/')",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("does not exist"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn file_of_statements_runs_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("q.sql");
    std::fs::write(&f, "SELECT 'a;b' AS x;\n-- a comment\nSELECT 2 AS y;\n").unwrap();
    let out = quarry()
        .args(["sql", "--no-store", "--format", "csv", "-f"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "x\na;b\ny\n2\n");
}

/// A statement with no result columns (CREATE TABLE ... AS, CREATE VIEW)
/// prints nothing, and what it made is there for the next statement.
#[test]
fn create_table_as_prints_nothing_and_keeps_the_table() {
    for format in ["table", "csv", "json"] {
        let out = quarry()
            .args([
                "sql",
                "--no-store",
                "--format",
                format,
                "-c",
                "CREATE TABLE t AS SELECT 1 AS x UNION ALL SELECT 2",
                "-c",
                "CREATE VIEW v AS SELECT sum(x) AS s FROM t",
                "-c",
                "SELECT s FROM v",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains('3') && !text.contains("count"),
            "{format}: {text}"
        );
        if format == "csv" {
            assert_eq!(text, "s\n3\n");
        }
    }
}

#[test]
fn interactive_shell_takes_multi_line_statements_and_commands() {
    let home = tempfile::tempdir().unwrap();
    let mut child = quarry()
        .args(["sql", "--no-store", "--interactive", "--format", "csv"])
        .env("HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"SELECT 40\n + 2 AS answer;\n\\d chunks\n\\d\n\\d ask\n\\q\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("answer\n42\n"), "{s}");
    assert!(s.contains("char_start,Int64"), "describe chunks: {s}");
    // \d lists every table function with its line, and the tables.
    for name in [
        "screen",
        "extract",
        "cohort_tables",
        "ask",
        "compare",
        "recipes",
        "synthesise",
    ] {
        assert!(
            s.lines()
                .any(|l| l.starts_with(&format!("{name},table function,"))),
            "\\d lists {name}: {s}"
        );
    }
    assert!(s.contains("calls,table,\"every model call"), "{s}");
    // \d ask: how to call it, then its columns.
    assert!(
        s.contains("\"ask(src, question [, recipe [, options]])\""),
        "{s}"
    );
    assert!(s.contains("chunks_used,List("), "{s}");
    assert!(home.path().join(".quarry_history").exists());
}

/// The README's first command: the bundled protocol over the bundled corpus,
/// replaying the recorded real run (no key, no server), says it is a replay.
#[test]
fn the_quickstart_replays_the_recorded_run() {
    let store = tempfile::tempdir().unwrap();
    let out = quarry()
        .args([
            "sql",
            "--replay",
            "examples/recording",
            "-f",
            "examples/quickstart.sql",
        ])
        .env("QUARRY_STORE", store.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("QUARRY_CONFIG")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("replaying the model calls recorded in examples/recording"),
        "{stderr}"
    );
    for header in [
        "| decision |",
        "| n_randomised |",
        "| n_unverified |",
        "| verified |",
    ] {
        assert!(stdout.contains(header), "{header}: {stdout}");
    }
    // Every document of the corpus has an extraction row.
    for f in [
        "PMC3321528.docx",
        "PMC3546023.md",
        "PMC3654355_table1.csv",
        "PMC3751573.html",
        "PMC3751573.pdf",
        "PMC4486927.txt",
    ] {
        assert!(
            stdout.matches(&format!("| {f}")).count() >= 3,
            "{f}: {stdout}"
        );
    }
}

/// Every table function a session registers has its line in `catalog()`
/// (so `\d` lists it), and the catalog names none that is not there.
#[test]
fn every_table_function_is_in_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = quarry::model::test_server::session_in(dir.path(), "").unwrap();
    let registered: std::collections::BTreeSet<String> =
        ctx.state().table_functions().keys().cloned().collect();
    let listed: std::collections::BTreeSet<String> = quarry::functions::catalog::ENTRIES
        .iter()
        .filter(|e| e.kind == "table function")
        .map(|e| e.name.to_string())
        .collect();
    let missing: Vec<_> = registered.difference(&listed).collect();
    let extra: Vec<_> = listed.difference(&registered).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "not in the catalog: {missing:?}; not registered: {extra:?}"
    );
}
