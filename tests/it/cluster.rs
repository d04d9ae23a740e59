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
