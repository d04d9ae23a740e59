//! Title and abstract screening of every record of one Cohen et al. (2006)
//! systematic review (Antihistamines, 310 records with the reviewers'
//! abstract-level decisions), exported as RIS here, screened against a
//! scripted server over real HTTP, then calibrated against the reviewers:
//! kappa, sensitivity and their intervals equal a computation written out
//! in this test. The records' titles and abstracts come from MEDLINE with no
//! licence to copy them into this repository, so the test reads them from
//! the project's shared material (`../shared/data/`, or the folder
//! `QUARRY_SHARED_DATA` names) and is ignored by the plain test command;
//! `.ci/run` runs it (`cargo test -- --ignored shared_data`) where that
//! material is.

use std::collections::HashMap;
use std::path::PathBuf;

use datafusion::arrow::array::AsArray;
use quarry::model::test_server::{Action, Rule, TestServer};

use crate::common::{sql, strings, wilson_by_hand};

fn shared(rel: &str) -> PathBuf {
    let base = std::env::var("QUARRY_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    let p = base.join(rel);
    assert!(
        p.exists(),
        "{} is missing: this test needs the project's shared material",
        p.display()
    );
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "reads ../shared/data (MEDLINE abstracts are not in the repository); .ci/run runs it"]
async fn shared_data_cohen_2006_title_abstract_screening_calibrated() {
    let csv_path = shared("screening/asreview_legacy_cohen2006/Cohen_2006_Antihistamines.csv");
    let mut r = csv::Reader::from_path(&csv_path).expect("csv");
    // pmid -> (title, abstract, year, authors, abstract-level label)
    let mut rows: Vec<(String, String, String, String, String, bool)> = Vec::new();
    for rec in r.deserialize::<HashMap<String, String>>() {
        let m = rec.expect("row");
        rows.push((
            m["pubmedID"].clone(),
            m["title"].clone(),
            m["abstract"].clone(),
            m["year"].clone(),
            m["authors"].clone(),
            m["label_abstract_screening"] == "1",
        ));
    }
    assert_eq!(rows.len(), 310);
    // The export, as Ovid would write it.
    let dir = tempfile::tempdir().expect("tempdir");
    let ex = dir.path().join("exports");
    std::fs::create_dir_all(&ex).expect("dir");
    let mut ris = String::new();
    for (pmid, title, abs, year, authors, _) in &rows {
        ris.push_str("TY  - JOUR\n");
        for a in authors.split(';').map(str::trim).filter(|a| !a.is_empty()) {
            ris.push_str(&format!("AU  - {a}\n"));
        }
        ris.push_str(&format!(
            "TI  - {title}\nPY  - {year}\nAN  - {pmid}\nDB  - Ovid MEDLINE(R)\n"
        ));
        if !abs.trim().is_empty() {
            ris.push_str(&format!("AB  - {}\n", abs.replace('\n', " ")));
        }
        ris.push_str("ER  - \n\n");
    }
    std::fs::write(ex.join("medline.ris"), ris).expect("write");
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        "name = \"antihistamines\"\ninclusion = [\"a trial of an antihistamine for allergic rhinitis or urticaria\"]\nexclusion = [\"not a trial of an antihistamine\"]\n",
    )
    .expect("protocol");
    // The scripted screener: agrees with the reviewers on most records,
    // misses every fourth eligible one, keeps every ninth ineligible one,
    // and is unsure of every seventh record. Keyed on each record's pmid's
    // place in the export, found by its abstract's opening words.
    let decide = |i: usize, eligible: bool| -> &'static str {
        if i % 7 == 3 {
            "unclear"
        } else if eligible {
            if i % 4 == 1 {
                "exclude"
            } else {
                "include"
            }
        } else if i % 9 == 2 {
            "include"
        } else {
            "exclude"
        }
    };
    let mut rules = Vec::new();
    let mut scripted: HashMap<String, &'static str> = HashMap::new();
    for (i, (pmid, _, abs, _, _, eligible)) in rows.iter().enumerate() {
        if abs.trim().is_empty() {
            continue;
        }
        let d = decide(i, *eligible);
        scripted.insert(pmid.clone(), d);
        let needle: String = abs
            .split_whitespace()
            .take(14)
            .collect::<Vec<_>>()
            .join(" ");
        let quote: String = abs.split_whitespace().take(8).collect::<Vec<_>>().join(" ");
        rules.push(Rule {
            needle,
            actions: vec![Action::Reply(
                serde_json::json!({"decision": d, "reason": "scripted", "criterion": null, "quote": quote}).to_string(),
            )],
        });
    }
    let srv = TestServer::start(rules, std::time::Duration::ZERO)
        .await
        .expect("server");
    let c = crate::common::scripted_session(&srv.base_url(), dir.path(), "max_in_flight = 16");
    let exs = format!("{}/", ex.display());
    sql(
        &c,
        &format!(
            "CREATE TABLE s AS SELECT s.source, s.decision, s.status, r.pmid FROM screen('{exs}', '{}', 'records') s JOIN records('{exs}') r ON r.record_id = s.source",
            proto.display()
        ),
    )
    .await
    .expect("screen");
    let b = sql(
        &c,
        "SELECT source, decision, status, pmid FROM s ORDER BY source",
    )
    .await
    .expect("s");
    let (src, dec, status, pmid) = (
        strings(&b, "source"),
        strings(&b, "decision"),
        strings(&b, "status"),
        strings(&b, "pmid"),
    );
    let dups = sql(
        &c,
        &format!("SELECT count(*) AS n FROM records('{exs}') WHERE status = 'duplicate'"),
    )
    .await
    .expect("dups");
    let dups = dups[0]
        .column(0)
        .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
        .value(0) as usize;
    assert_eq!(
        src.len() + dups,
        310,
        "one screening row per record that is not a duplicate"
    );
    assert!(
        status.iter().all(|s| s.as_deref() == Some("ok")),
        "every record screened"
    );
    // Each decision is the scripted one; a record with no abstract is
    // unclear and was never sent.
    for (p, d) in pmid.iter().zip(&dec) {
        let p = p.as_deref().expect("pmid");
        let want = scripted.get(p).copied().unwrap_or("unclear");
        assert_eq!(d.as_deref(), Some(want), "pmid {p}");
    }
    assert!(srv.count() <= scripted.len());
    // Everything into the sample, filled with the reviewers' decisions.
    let sample = dir.path().join("sample.csv");
    sql(
        &c,
        &format!(
            "SELECT * FROM reference_sample('s', 1000, 'all', 3, '{}')",
            sample.display()
        ),
    )
    .await
    .expect("sample");
    let label: HashMap<&str, bool> = rows.iter().map(|r| (r.0.as_str(), r.5)).collect();
    let pmid_of: HashMap<&str, &str> = src
        .iter()
        .zip(&pmid)
        .map(|(s, p)| (s.as_deref().unwrap(), p.as_deref().unwrap()))
        .collect();
    let mut rd = csv::Reader::from_path(&sample).expect("sample");
    let header = rd.headers().expect("h").clone();
    let filled: Vec<Vec<String>> = rd
        .records()
        .map(|x| {
            let mut v: Vec<String> = x.expect("row").iter().map(str::to_string).collect();
            v[6] = if label[pmid_of[v[1].as_str()]] {
                "include".into()
            } else {
                "exclude".into()
            };
            v
        })
        .collect();
    assert_eq!(filled.len(), src.len());
    let mut w = csv::Writer::from_path(&sample).expect("w");
    w.write_record(&header).expect("h");
    for v in &filled {
        w.write_record(v).expect("row");
    }
    w.flush().expect("flush");
    // The computation, written out.
    let pairs: Vec<(&str, bool)> = dec
        .iter()
        .zip(&pmid)
        .map(|(d, p)| (d.as_deref().unwrap(), label[p.as_deref().unwrap()]))
        .collect();
    let n = pairs.len() as f64;
    let count = |f: &dyn Fn(&(&str, bool)) -> bool| pairs.iter().filter(|p| f(p)).count() as f64;
    let pos = count(&|p| p.1);
    let neg = n - pos;
    let kept_pos = count(&|p| p.1 && p.0 != "exclude");
    let incl_pos = count(&|p| p.1 && p.0 == "include");
    let excl_neg = count(&|p| !p.1 && p.0 == "exclude");
    let kept = count(&|p| p.0 != "exclude");
    let po = (kept_pos + excl_neg) / n;
    let pe = kept / n * pos / n + (n - kept) / n * neg / n;
    let kappa = (po - pe) / (1.0 - pe);
    let got = sql(
        &c,
        &format!(
            "SELECT measure, value, low, high FROM calibrate('s', '{}')",
            sample.display()
        ),
    )
    .await
    .expect("calibrate");
    let (m, v, lo, hi) = (
        strings(&got, "measure"),
        strings(&got, "value"),
        strings(&got, "low"),
        strings(&got, "high"),
    );
    let at = |name: &str| {
        m.iter()
            .position(|x| x.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("{name}"))
    };
    let f = |x: &Option<String>| x.as_deref().and_then(|s| s.parse::<f64>().ok());
    for (name, x, of) in [
        ("sensitivity_deployed", kept_pos, pos),
        ("sensitivity_strict", incl_pos, pos),
        ("specificity", excl_neg, neg),
    ] {
        let i = at(name);
        let (wl, wh) = wilson_by_hand(x, of);
        assert!((f(&v[i]).unwrap() - x / of).abs() < 1e-9, "{name}");
        assert!((f(&lo[i]).unwrap() - wl).abs() < 1e-9, "{name} low");
        assert!((f(&hi[i]).unwrap() - wh).abs() < 1e-9, "{name} high");
    }
    let k = f(&v[at("kappa")]).unwrap();
    assert!((k - kappa).abs() < 1e-9, "kappa {k} vs {kappa}");
    assert!(
        kappa > 0.2 && kappa < 0.95,
        "a screener that disagrees sometimes: kappa {kappa}"
    );
    assert!(pos >= 10.0);
}
