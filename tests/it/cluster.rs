//! The same SQL on a Ballista cluster (feature `cluster`): a scheduler and
//! two executors in this process, the corpus and the shared store on the S3
//! test server; every result equals a single process's, row for row.

use datafusion::prelude::SessionContext;
use object_store::path::Path as ObjPath;
use object_store::{ObjectStoreExt, PutPayload};

use crate::common::{root, table};
use crate::s3::{bucket, upload};

fn session(store: &str) -> SessionContext {
    quarry::session(&quarry::Settings {
        store: Some(store.to_string()),
        ..Default::default()
    })
    .expect("session")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cluster_gives_what_one_process_gives() {
    let s3 = bucket("cluster").await;
    // A corpus of every kind, with a byte-identical copy of a PDF (in
    // another folder), a corrupt PDF and an empty file.
    upload(&s3, &root().join("examples/corpus"), "corpus").await;
    upload(
        &s3,
        &root().join("tests/data/rct_baseline/pdf"),
        "corpus/pdf",
    )
    .await;
    for (name, bytes) in [
        ("corpus/broken.pdf", b"%PDF-1.7\nnot a pdf at all".to_vec()),
        ("corpus/empty.txt", vec![]),
    ] {
        s3.put(&ObjPath::from(name), PutPayload::from(bytes))
            .await
            .unwrap();
    }
    let src = "s3://cluster/corpus/";
    let local = session("s3://cluster/store-local/");
    let shared = session("s3://cluster/store-cluster/");
    // Three parts for two executors: parts are not executors.
    shared
        .sql("SET datafusion.execution.target_partitions = 3")
        .await
        .unwrap();
    let url = quarry::cluster::standalone(&shared, 2, 2).await.unwrap();
    let client = quarry::cluster::client(&url, &shared).await.unwrap();
    client
        .sql("SET datafusion.execution.target_partitions = 3")
        .await
        .unwrap();

    // The plan runs on the cluster, in three parts merged in listing order.
    let plan = table(
        &client,
        &format!("EXPLAIN SELECT file_name FROM documents('{src}', 'recursive=true')"),
    )
    .await;
    assert!(
        plan.contains("distributed_plan")
            && plan.contains("ShuffleWriterExec")
            && plan.contains("parts=3"),
        "{plan}"
    );

    let queries = [
        // No ORDER BY: the merge gives the listing's order.
        format!("SELECT source, status, document_id, tokens, duplicate_of, error FROM documents('{src}', 'recursive=true')"),
        format!("SELECT source, status, bytes, note FROM inventory('{src}') ORDER BY source"),
        format!("SELECT document_id, count(*) AS n, sum(length(text)) AS chars FROM blocks('{src}', 'recursive=true') GROUP BY document_id ORDER BY document_id"),
        format!("SELECT * FROM chunks('{src}', 'sentence', 300, 0, 'recursive=true') ORDER BY document_id, chunk_id"),
        format!("SELECT source, table_id, arm, arm_n, characteristic, category, measure, value, unit, cell_text FROM cohort_tables('{src}', 'recursive=true')"),
    ];
    for q in &queries {
        let one = table(&local, q).await;
        let many = table(&client, q).await;
        assert_eq!(one, many, "{q}");
    }
    // What the comparison covered: the copy is a duplicate, the broken and
    // the empty files are rows of their own.
    let docs = table(&client, &queries[0]).await;
    assert!(docs.contains("duplicate"), "{docs}");
    assert!(
        docs.contains("broken.pdf") && docs.contains("failed"),
        "{docs}"
    );
    assert!(docs.contains("empty.txt"), "{docs}");
    let n = table(
        &client,
        &format!("SELECT count(*) FROM cohort_tables('{src}', 'recursive=true')"),
    )
    .await;
    assert!(!n.contains("| 0 "), "{n}");
}

/// A session whose model is the scripted server at `url`, its store at
/// `store` (its quarry.toml written into `dir`).
fn scripted(url: &str, dir: &std::path::Path, store: &str) -> SessionContext {
    let cfg = dir.join("quarry.toml");
    std::fs::write(
        &cfg,
        format!("[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{url}\"\nbackoff_initial_ms = 5\nmax_attempts = 2\n"),
    )
    .unwrap();
    quarry::session(&quarry::Settings {
        store: Some(store.to_string()),
        config: Some(cfg),
        ..Default::default()
    })
    .expect("session")
}

/// `extract` over 50 documents with every kind of reply, split between two
/// executors: the same rows as one process, each request sent as often as
/// one process sends it, and a second run on the cluster sends nothing (the
/// response cache and the run's rows are in the shared store).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn extract_on_a_cluster_gives_one_processs_rows_and_pays_once() {
    use quarry::model::test_server::TestServer;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let (corpus, rules) = crate::extract::fifty_documents(dir.path());
    let s3 = bucket("cluster-extract").await;
    upload(&s3, &corpus, "corpus").await;
    let proto = crate::extract::protocol_file(
        dir.path(),
        format!(
            "{}\n[segment]\nmethod = \"paragraph\"\nmax_tokens = 50\noverlap_tokens = 0\n",
            crate::extract::PROTOCOL
        ),
    );
    // One server each: a rule's replies are taken in order.
    let one_srv = TestServer::start(rules.clone(), Duration::ZERO)
        .await
        .unwrap();
    let many_srv = TestServer::start(rules, Duration::from_millis(5))
        .await
        .unwrap();
    let (d1, d2) = (dir.path().join("one"), dir.path().join("many"));
    std::fs::create_dir_all(&d1).unwrap();
    std::fs::create_dir_all(&d2).unwrap();
    let one = scripted(&one_srv.base_url(), &d1, "s3://cluster-extract/one/");
    let shared = scripted(&many_srv.base_url(), &d2, "s3://cluster-extract/many/");
    shared
        .sql("SET datafusion.execution.target_partitions = 4")
        .await
        .unwrap();
    let url = quarry::cluster::standalone(&shared, 2, 2).await.unwrap();
    let client = quarry::cluster::client(&url, &shared).await.unwrap();
    client
        .sql("SET datafusion.execution.target_partitions = 4")
        .await
        .unwrap();
    let q = format!(
        "SELECT source, design, n, n_filled, n_unverified, conflicts, status, duplicate_of, \
         regexp_replace(error, '127\\.0\\.0\\.1:[0-9]+', 'SERVER') AS error \
         FROM extract('s3://cluster-extract/corpus/', '{}') ORDER BY source",
        proto.display()
    );
    let plan = table(&client, &format!("EXPLAIN {q}")).await;
    assert!(
        plan.contains("CallExec: extract") && plan.contains("parts=4"),
        "{plan}"
    );
    let a = table(&one, &q).await;
    let b = table(&client, &q).await;
    assert_eq!(a, b);
    assert_eq!(
        a.lines().filter(|l| l.starts_with("| s3://")).count(),
        50,
        "{a}"
    );
    // Every request as often as one process sends it (retries included).
    let mut sent1 = crate::common::answered(&one_srv);
    let mut sent2 = crate::common::answered(&many_srv);
    sent1.sort();
    sent2.sort();
    assert_eq!(sent1.len(), sent2.len());
    assert_eq!(sent1, sent2);
    // Again on the cluster: the shared store answers, nothing is sent.
    let before = many_srv.count();
    let c = table(&client, &q).await;
    assert_eq!(a, c);
    assert_eq!(many_srv.count(), before, "a second run sent requests");
}
