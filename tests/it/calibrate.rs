//! `reference_sample` and `calibrate`: seed 001's calibration example, and a
//! sample of everything checked against the statistics computed here.

use crate::common::{ctx, sql, strings, table, wilson_by_hand};
use datafusion::arrow::array::RecordBatch;

/// 412 screened: 340 excluded, 60 included, 12 unclear (seed 001).
const SCREENING: &str = "CREATE TABLE s AS SELECT 'rec' || lpad(CAST(i AS VARCHAR), 3, '0') || '.pdf' AS source, CASE WHEN i <= 340 THEN 'exclude' WHEN i <= 400 THEN 'include' ELSE 'unclear' END AS decision FROM generate_series(1, 412) t(i)";

fn fill(path: &std::path::Path, mut decide: impl FnMut(usize, &str) -> &'static str) {
    let mut r = csv::Reader::from_path(path).expect("sample");
    let h = r.headers().expect("header").clone();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.expect("row")).collect();
    let mut w = csv::Writer::from_path(path).expect("write");
    w.write_record(&h).expect("header");
    for (i, row) in rows.iter().enumerate() {
        let mut v: Vec<String> = row.iter().map(str::to_string).collect();
        assert_eq!(v[6], "", "the sample is blind: human_decision starts empty");
        v[6] = decide(i, &v[1]).to_string();
        w.write_record(&v).expect("row");
    }
    w.flush().expect("flush");
}

fn col(b: &[RecordBatch], name: &str) -> Vec<String> {
    strings(b, name)
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect()
}

#[tokio::test]
async fn the_seed_calibration_example() {
    let dir = tempfile::tempdir().expect("tempdir");
    let check = dir.path().join("check.csv");
    let c = ctx(None);
    sql(&c, SCREENING).await.expect("screening");
    let q = format!(
        "SELECT * FROM reference_sample('s', 60, 'excluded', 1, '{}')",
        check.display()
    );
    let first = sql(&c, &q).await.expect("sample");
    // Seeded: the same sample again; every row from the excluded frame.
    assert_eq!(
        col(&first, "source"),
        col(&sql(&c, &q).await.expect("again"), "source")
    );
    assert_eq!(
        col(&first, "frame")
            .iter()
            .filter(|f| *f == "excluded")
            .count(),
        60
    );
    assert!(col(&first, "frame_size").iter().all(|n| n == "340"));
    // A person marks the last three eligible, as in the seed.
    fill(&check, |i, _| if i >= 57 { "include" } else { "exclude" });
    let missed: Vec<String> = col(&first, "source")[57..].to_vec();
    let got = table(
        &c,
        &format!("SELECT measure, round(value * 100, 1) AS pct, round(low * 100, 1) AS low, round(high * 100, 1) AS high, n FROM calibrate('s', '{}') WHERE measure IN ('eligible_among_excluded', 'correctly_excluded')", check.display()),
    )
    .await;
    assert_eq!(
        got,
        "+-------------------------+------+------+------+----+\n\
         | measure                 | pct  | low  | high | n  |\n\
         +-------------------------+------+------+------+----+\n\
         | eligible_among_excluded | 5.0  | 1.7  | 13.7 | 60 |\n\
         | correctly_excluded      | 95.0 | 86.3 | 98.3 | 60 |\n\
         +-------------------------+------+------+------+----+"
    );
    let b = sql(
        &c,
        &format!(
            "SELECT measure, value, detail FROM calibrate('s', '{}')",
            check.display()
        ),
    )
    .await
    .expect("calibrate");
    let (m, v, d) = (col(&b, "measure"), col(&b, "value"), col(&b, "detail"));
    let row = |name: &str| {
        m.iter()
            .position(|x| x == name)
            .unwrap_or_else(|| panic!("{name} in {m:?}"))
    };
    assert!(
        d[row("lost")].contains("about 17 eligible studies lost (6 to 47"),
        "{}",
        d[row("lost")]
    );
    for refused in [
        "sensitivity_deployed",
        "sensitivity_strict",
        "specificity",
        "kappa",
    ] {
        assert_eq!(v[row(refused)], "", "{refused} has no value in this frame");
        assert!(
            d[row(refused)].starts_with("refused: "),
            "{}",
            d[row(refused)]
        );
    }
    assert!(d[row("sensitivity_deployed")].contains("sampled from exclusions only"));
    assert_eq!(v[row("adequate")], "0.0");
    assert!(d[row("adequate")].contains("only 3 eligible studies"));
    let listed: Vec<String> = m
        .iter()
        .zip(&d)
        .filter(|(m, _)| *m == "missed")
        .map(|(_, d)| d.clone())
        .collect();
    assert_eq!(listed, missed);
    assert!(!m.iter().any(|x| x.contains("accuracy")));
}

/// A screening table's decisions are read as a CSV's are: without case or
/// surrounding spaces (" Exclude", "INCLUDE " from a spreadsheet import).
#[tokio::test]
async fn a_tables_decisions_are_read_without_case_or_spaces() {
    let dir = tempfile::tempdir().expect("tempdir");
    let check = dir.path().join("check.csv");
    let c = ctx(None);
    sql(&c, SCREENING).await.expect("screening");
    sql(&c, "CREATE TABLE typed AS SELECT source, CASE decision WHEN 'exclude' THEN ' Exclude' WHEN 'include' THEN 'INCLUDE ' ELSE 'Unclear' END AS decision FROM s").await.expect("typed");
    let q = |t: &str| {
        format!(
            "SELECT * FROM reference_sample('{t}', 60, 'excluded', 1, '{}')",
            check.display()
        )
    };
    let typed = sql(&c, &q("typed")).await.expect("sample");
    assert!(col(&typed, "frame_size").iter().all(|n| n == "340"));
    assert_eq!(
        col(&typed, "source"),
        col(&sql(&c, &q("s")).await.expect("sample"), "source")
    );
    fill(&check, |i, _| if i >= 57 { "include" } else { "exclude" });
    let cal = |t: &str| {
        format!(
            "SELECT measure, value, low, high, n, detail FROM calibrate('{t}', '{}') ORDER BY measure, detail",
            check.display()
        )
    };
    assert_eq!(table(&c, &cal("typed")).await, table(&c, &cal("s")).await);
}

/// A sample of all records: sensitivity (deployed and strict), specificity
/// and kappa against a computation written out here.
#[tokio::test]
async fn a_sample_of_all_records_against_an_independent_computation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let check = dir.path().join("all.csv");
    let c = ctx(None);
    sql(&c, SCREENING).await.expect("screening");
    let sample = sql(
        &c,
        &format!(
            "SELECT * FROM reference_sample('s', 100, 'all', 7, '{}')",
            check.display()
        ),
    )
    .await
    .expect("sample");
    let sources = col(&sample, "source");
    assert_eq!(sources.len(), 100);
    // The person: eligible are every 3rd record number among the included,
    // and records 300-340 and 405-412.
    let eligible = |s: &str| {
        let n: usize = s[3..6].parse().expect("number");
        (341..=400).contains(&n) && n.is_multiple_of(3) || (300..=340).contains(&n) || n >= 405
    };
    fill(
        &check,
        |_, s| if eligible(s) { "include" } else { "exclude" },
    );
    let model = |s: &str| {
        let n: usize = s[3..6].parse().expect("number");
        if n <= 340 {
            "exclude"
        } else if n <= 400 {
            "include"
        } else {
            "unclear"
        }
    };
    let pairs: Vec<(&str, bool)> = sources.iter().map(|s| (model(s), eligible(s))).collect();
    let count = |f: &dyn Fn(&(&str, bool)) -> bool| pairs.iter().filter(|p| f(p)).count() as f64;
    let pos = count(&|p| p.1);
    let neg = count(&|p| !p.1);
    let sens_deployed = count(&|p| p.1 && p.0 != "exclude") / pos;
    let sens_strict = count(&|p| p.1 && p.0 == "include") / pos;
    let spec = count(&|p| !p.1 && p.0 == "exclude") / neg;
    // Kappa of kept/excluded against the person, from the 2x2 table.
    let n = pairs.len() as f64;
    let a = count(&|p| p.0 != "exclude" && p.1);
    let d = count(&|p| p.0 == "exclude" && !p.1);
    let kept = count(&|p| p.0 != "exclude");
    let po = (a + d) / n;
    let pe = (kept / n) * (pos / n) + ((n - kept) / n) * (neg / n);
    let kappa = (po - pe) / (1.0 - pe);
    let b = sql(
        &c,
        &format!(
            "SELECT measure, value, low, high FROM calibrate('s', '{}')",
            check.display()
        ),
    )
    .await
    .expect("calibrate");
    let (m, v, lo, hi) = (
        col(&b, "measure"),
        col(&b, "value"),
        col(&b, "low"),
        col(&b, "high"),
    );
    let get = |name: &str| {
        let i = m
            .iter()
            .position(|x| x == name)
            .unwrap_or_else(|| panic!("{name} in {m:?}"));
        let f = |s: &String| s.parse::<f64>().ok();
        (f(&v[i]), f(&lo[i]), f(&hi[i]))
    };
    for (name, want, x, of) in [
        (
            "sensitivity_deployed",
            sens_deployed,
            count(&|p| p.1 && p.0 != "exclude"),
            pos,
        ),
        (
            "sensitivity_strict",
            sens_strict,
            count(&|p| p.1 && p.0 == "include"),
            pos,
        ),
        (
            "specificity",
            spec,
            count(&|p| !p.1 && p.0 == "exclude"),
            neg,
        ),
    ] {
        let (value, low, high) = get(name);
        let (wl, wh) = wilson_by_hand(x, of);
        assert!((value.expect(name) - want).abs() < 1e-9, "{name}");
        assert!(
            (low.expect(name) - wl.max(0.0)).abs() < 1e-9
                && (high.expect(name) - wh.min(1.0)).abs() < 1e-9,
            "{name}"
        );
    }
    assert!(
        sens_strict < sens_deployed,
        "the sample must hold eligible unclear records"
    );
    let (k, _, _) = get("kappa");
    assert!((k.expect("kappa") - kappa).abs() < 1e-9, "{k:?} vs {kappa}");
}

#[tokio::test]
async fn an_unfilled_sample_is_refused_with_the_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let check = dir.path().join("check.csv");
    let c = ctx(None);
    sql(&c, SCREENING).await.expect("screening");
    sql(
        &c,
        &format!(
            "SELECT * FROM reference_sample('s', 5, 'stratified', 2, '{}')",
            check.display()
        ),
    )
    .await
    .expect("sample");
    let e = sql(
        &c,
        &format!("SELECT * FROM calibrate('s', '{}')", check.display()),
    )
    .await
    .expect_err("unfilled");
    assert!(
        e.to_string().contains("line 2") && e.to_string().contains("human_decision is ''"),
        "{e}"
    );
}

/// A stratified sample: each stratum's rate, and the screening's
/// sensitivity and specificity with the strata weighted by their sizes,
/// against the same weighting written out here.
#[tokio::test]
async fn a_stratified_sample_weighs_its_strata() {
    let dir = tempfile::tempdir().expect("tempdir");
    let check = dir.path().join("strat.csv");
    let c = ctx(None);
    sql(&c, SCREENING).await.expect("screening");
    let sample = sql(
        &c,
        &format!(
            "SELECT * FROM reference_sample('s', 10, 'stratified', 5, '{}')",
            check.display()
        ),
    )
    .await
    .expect("sample");
    let frames = col(&sample, "frame");
    assert_eq!(frames.iter().filter(|f| *f == "excluded").count(), 10);
    assert_eq!(frames.iter().filter(|f| *f == "included").count(), 10);
    assert_eq!(frames.iter().filter(|f| *f == "unclear").count(), 10);
    // Eligible: 2 of the sampled excluded, 7 of the included, 5 of the unclear.
    let (mut ex, mut inc, mut unc) = (0, 0, 0);
    fill(&check, |_, s| {
        let n: usize = s[3..6].parse().expect("number");
        let (count, cap) = if n <= 340 {
            (&mut ex, 2)
        } else if n <= 400 {
            (&mut inc, 7)
        } else {
            (&mut unc, 5)
        };
        *count += 1;
        if *count <= cap {
            "include"
        } else {
            "exclude"
        }
    });
    let (e_exc, e_inc, e_unc) = (340.0 * 0.2, 60.0 * 0.7, 12.0 * 0.5);
    let sens = (e_inc + e_unc) / (e_inc + e_unc + e_exc);
    let strict = e_inc / (e_inc + e_unc + e_exc);
    let spec = (340.0 - e_exc) / ((340.0 - e_exc) + (60.0 - e_inc) + (12.0 - e_unc));
    let b = sql(
        &c,
        &format!(
            "SELECT measure, frame, value, detail FROM calibrate('s', '{}')",
            check.display()
        ),
    )
    .await
    .expect("calibrate");
    let (m, f, v, d) = (
        col(&b, "measure"),
        col(&b, "frame"),
        col(&b, "value"),
        col(&b, "detail"),
    );
    let get = |measure: &str, frame: &str| {
        let i = (0..m.len())
            .find(|&i| m[i] == measure && f[i] == frame)
            .unwrap_or_else(|| panic!("{measure} {frame}"));
        (v[i].parse::<f64>().ok(), d[i].clone())
    };
    for (measure, want) in [
        ("sensitivity_deployed", sens),
        ("sensitivity_strict", strict),
        ("specificity", spec),
    ] {
        let (got, detail) = get(measure, "stratified");
        assert!(
            (got.expect(measure) - want).abs() < 1e-9,
            "{measure}: {got:?} vs {want}"
        );
        assert!(detail.contains("weighted by their sizes"), "{detail}");
        assert!(get(measure, "excluded").1.starts_with("refused: "));
    }
    assert_eq!(get("eligible_among_excluded", "excluded").0, Some(0.2));
    assert_eq!(get("precision", "included").0, Some(0.7));
    assert_eq!(get("eligible_among_unclear", "unclear").0, Some(0.5));
}
