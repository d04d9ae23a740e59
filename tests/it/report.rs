//! The audit report (issue 21, first part): `quarry report` over the store
//! the quickstart's replayed run leaves, its counts against SQL over the
//! same store, nothing it would fetch or run, and what failed flagged.

use crate::common::quarry;

/// One number of a query over the store (a new session, as a user's).
async fn count(store: &std::path::Path, sql: &str) -> u64 {
    let ctx = quarry::session(&quarry::Settings {
        store: Some(store.display().to_string()),
        ..Default::default()
    })
    .unwrap();
    let b = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let c = datafusion::arrow::compute::cast(
        b[0].column(0),
        &datafusion::arrow::datatypes::DataType::UInt64,
    )
    .unwrap();
    c.as_any()
        .downcast_ref::<datafusion::arrow::array::UInt64Array>()
        .unwrap()
        .value(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_counts_what_sql_counts_and_flags_what_failed() {
    let store = tempfile::tempdir().unwrap();
    let run = quarry()
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
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = store.path().join("report.html");
    let rep = quarry()
        .args(["report", "--store"])
        .arg(store.path())
        .arg(&out)
        .env_remove("QUARRY_CONFIG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&rep.stderr);
    assert!(rep.status.success(), "{stderr}");
    let html = std::fs::read_to_string(&out).unwrap();
    let s = store.path();
    let want = [
        ("documents", count(s, "SELECT count(DISTINCT source) FROM (SELECT source FROM screening UNION ALL SELECT source FROM extraction)").await),
        ("documents not read, or whose requests failed", count(s, "SELECT count(DISTINCT source) FROM (SELECT source FROM screening WHERE status <> 'ok' UNION ALL SELECT source FROM extraction WHERE status <> 'ok')").await),
        ("extracted values", count(s, "SELECT count(*) FROM evidence").await),
        ("values whose quote is not in the document", count(s, "SELECT count(*) FROM evidence WHERE NOT verified").await),
        ("model requests", count(s, "SELECT count(*) FROM calls").await),
        ("model requests that failed", count(s, "SELECT count(*) FROM calls WHERE NOT ok").await),
    ];
    for (label, n) in want {
        assert!(
            html.contains(&format!("<td>{label}</td><td class=\"n\">{n}</td>")),
            "{label}: {n}\n{}",
            &html[..html.len().min(3000)]
        );
    }
    // The bundled run is the 135M model's: most of it failed, and the page
    // says so at the top and marks the rows.
    assert!(
        html.contains("<tr class=\"bad\"><td>documents not read"),
        "{html}"
    );
    assert!(html.contains("What these checks do not establish"));
    assert!(
        stderr.contains(&format!("-> {}", out.display())),
        "{stderr}"
    );
    // Nothing to run or fetch: no script, no external address in an
    // attribute, and a policy that forbids both.
    assert!(!html.to_ascii_lowercase().contains("<script"));
    assert!(!html.contains("src=") && !html.contains("href=\"http"));
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    // Every quote as the page shows it is escaped text.
    let ctx = quarry::session(&quarry::Settings {
        store: Some(s.display().to_string()),
        ..Default::default()
    })
    .unwrap();
    let b = ctx
        .sql("SELECT quote FROM evidence WHERE quote IS NOT NULL")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    for b in &b {
        let q = datafusion::arrow::array::AsArray::as_string::<i32>(b.column(0));
        for v in q.iter().flatten() {
            assert!(html.contains(&quarry::report::esc(v)), "{v}");
        }
    }
    // The store's extraction table aggregates (its schema once carried the
    // protocol as metadata, and DataFusion refused the plan).
    assert!(
        count(
            s,
            "SELECT count(*) FROM (SELECT status, count(*) FROM extraction GROUP BY status)"
        )
        .await
            >= 1
    );
}
