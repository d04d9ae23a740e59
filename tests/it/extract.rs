//! extract(src, protocol) and evidence(src, protocol) against the scripted
//! model server on 127.0.0.1.

use std::path::Path;
use std::time::Duration;

use quarry::model::test_server::{Action, Rule, TestServer};

use crate::common::{sql, table};

const PROTOCOL: &str = r#"
name = "seed example"
[[fields]]
name = "design"
description = "The study design"
[[fields]]
name = "n"
description = "Number of participants"
type = "integer"
"#;

fn session(url: &str, store: &Path) -> datafusion::prelude::SessionContext {
    let cfg = store.join("quarry.toml");
    std::fs::write(&cfg, format!("[model]\nname = \"gpt-4o-mini\"\n[endpoints.default]\nbase_url = \"{url}\"\nbackoff_initial_ms = 10\n")).unwrap();
    quarry::session(&quarry::Settings {
        store: Some(store.join("store").display().to_string()),
        config: Some(cfg),
        ..Default::default()
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seed_example_design_and_n_with_both_quotes_verified() {
    let srv = TestServer::start(
        vec![Rule {
            needle: "We ran a randomised".into(),
            actions: vec![Action::Reply(
                r#"{"design":"randomised controlled trial","n":120,
                    "design__quote":"We ran a randomised controlled trial.",
                    "n__quote":"We enrolled 120 participants."}"#
                    .into(),
            )],
        }],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(
        corpus.join("trial.txt"),
        "We ran a randomised controlled trial. We enrolled 120 participants.\n",
    )
    .unwrap();
    let proto = dir.path().join("protocol.toml");
    std::fs::write(&proto, PROTOCOL).unwrap();
    let ctx = session(&srv.base_url(), dir.path());
    let (c, p) = (corpus.display(), proto.display());
    let t = table(&ctx, &format!("SELECT design, n, n_filled, n_unverified, conflicts, status FROM extract('{c}', '{p}')")).await;
    assert_eq!(
        t.trim(),
        "+-----------------------------+-----+----------+--------------+-----------+--------+
| design                      | n   | n_filled | n_unverified | conflicts | status |
+-----------------------------+-----+----------+--------------+-----------+--------+
| randomised controlled trial | 120 | 2        | 0            | 0         | ok     |
+-----------------------------+-----+----------+--------------+-----------+--------+"
    );
    let e = table(&ctx, &format!("SELECT field, quote, verified, \"match\", char_start, char_end FROM evidence('{c}', '{p}')")).await;
    assert_eq!(
        e.trim(),
        "+--------+---------------------------------------+----------+-------+------------+----------+
| field  | quote                                 | verified | match | char_start | char_end |
+--------+---------------------------------------+----------+-------+------------+----------+
| design | We ran a randomised controlled trial. | true     | 1.0   | 0          | 37       |
| n      | We enrolled 120 participants.         | true     | 1.0   | 38         | 67       |
+--------+---------------------------------------+----------+-------+------------+----------+"
    );
    assert_eq!(srv.count(), 1, "evidence() was answered from the cache");
    // The n column is typed.
    let b = sql(&ctx, &format!("SELECT n FROM extract('{c}', '{p}')"))
        .await
        .unwrap();
    assert_eq!(
        b[0].schema().field(0).data_type(),
        &datafusion::arrow::datatypes::DataType::Int64
    );
}
