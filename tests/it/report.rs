//! The audit report (issue 21, first part): `quarry report` over the store
//! the quickstart's replayed run leaves, its counts against SQL over the
//! same store, nothing it would fetch or run, and what failed flagged.

use crate::common::quarry;

/// One number of a query over the store (a new session, as a user's).
async fn count(store: &std::path::Path, sql: &str) -> u64 {
    count_replayed(store, None, sql).await
}

/// [`count`] with the model calls answered from `replay` (a flow with
/// `protocol=` screens its records).
async fn count_replayed(store: &std::path::Path, replay: Option<&str>, sql: &str) -> u64 {
    let ctx = quarry::session(&quarry::Settings {
        store: Some(store.display().to_string()),
        replay: replay.map(str::to_string),
        ..Default::default()
    })
    .unwrap();
    u64::try_from(crate::common::number(&ctx, sql).await).expect("a count")
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
    // The committed example is this page (made over `.quarry`): the README
    // links it, so it must not drift from what quarry writes.
    let example = std::fs::read_to_string("examples/report/report.html").unwrap();
    // The seconds a replayed call took are this run's: the cost table's
    // figures are left out of the comparison.
    let timeless = |page: &str| -> String {
        let start = page.find("<h2 id=\"cost\">").expect("the cost section");
        let end = start + page[start..].find("</table>").unwrap();
        format!("{}{}", &page[..start], &page[end..])
    };
    let example = timeless(&example);
    let fresh = timeless(&html.replace(&store.path().display().to_string(), ".quarry"));
    if fresh != example {
        let _ = std::fs::write(
            std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report.html"),
            &fresh,
        );
    }
    assert!(
        fresh == example,
        "examples/report/report.html is not what `quarry report` writes today: make it again \
         (README, \"The audit report\"; this run's page is in {})",
        env!("CARGO_TARGET_TMPDIR")
    );
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

/// Debian's Chromium (`$QUARRY_CHROMIUM` to name another), which `.ci/run`
/// installs.
fn chromium() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("QUARRY_CHROMIUM") {
        return p.into();
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!("no Chromium on PATH: `apt-get install chromium` (.ci/run installs it), or set QUARRY_CHROMIUM");
}

/// Headless Chromium over `page` with `extra` arguments (its own profile,
/// console messages logged to standard error): its standard output and
/// standard error.
fn browse(page: &std::path::Path, extra: &[String]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=2000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A listener on 127.0.0.1 that counts the connections made to it: the
/// page's network requests, had it any.
fn beacon() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(s);
        }
    });
    (port, hits)
}

/// The console lines Chromium logged for the page (messages and policy
/// violations alike).
fn console(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("CONSOLE")).collect()
}

/// The report in a real browser: a corpus with a hostile document (a
/// `<script>`, an image that would call out, in its text and its file
/// name), a value whose quote is not in its document, a file that cannot
/// be read, and an `ask` answer holding markup. The page loads with no
/// console message and no request; nothing in it runs; the counts at the
/// top are SQL's; the planted quote is flagged; the first screen is
/// photographed. A control page first shows the detectors can fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_chromium_the_report_runs_nothing_fetches_nothing_and_flags_the_planted_quote() {
    use quarry::model::test_server::{Action, Rule, TestServer};
    use std::sync::atomic::Ordering;
    let (port, hits) = beacon();
    let dir = tempfile::tempdir().unwrap();

    // The control: a page that logs an error and fetches from the beacon.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        format!("<!DOCTYPE html><html><body><script>console.error('control error'); document.title='ran';</script><img src=\"http://127.0.0.1:{port}/control.png\"></body></html>"),
    )
    .unwrap();
    let (dom, err) = browse(&control, &["--dump-dom".into()]);
    assert!(
        console(&err).iter().any(|l| l.contains("control error")),
        "the console detector sees nothing: {err}"
    );
    assert!(dom.contains("<title>ran</title>"), "{dom}");
    assert!(
        hits.load(Ordering::SeqCst) > 0,
        "the request detector sees nothing"
    );
    hits.store(0, Ordering::SeqCst);

    let hostile = format!(
        "Trial H. <script>document.title='pwned'</script> We ran a randomised controlled trial. \
         <img src=\"http://127.0.0.1:{port}/beacon.png\" onerror=\"document.title='pwned'\"> We enrolled 120 participants.\n"
    );
    let hostile_name = "hostile <img src=x onerror=alert(1)>.txt";
    let corpus = crate::common::corpus_with(
        dir.path(),
        &[
            (hostile_name, hostile.as_str()),
            (
                "planted.txt",
                "Trial P. We ran a randomised controlled trial. We enrolled 80 participants.\n",
            ),
            ("broken.pdf", "%PDF-1.4 this is not a PDF at all"),
        ],
    );
    let question = "How many participants were enrolled?";
    let srv = TestServer::start(
        vec![
            Rule {
                needle: question.into(),
                actions: vec![Action::Reply(format!(
                    "<script>document.title='pwned'</script><img src=\"http://127.0.0.1:{port}/answer.png\"> 120"
                ))],
            },
            Rule {
                needle: "Trial H.".into(),
                actions: vec![Action::Reply(
                    r#"{"design":"randomised controlled trial","n":120,"design__quote":"We ran a randomised controlled trial.","n__quote":"We enrolled 120 participants."}"#.into(),
                )],
            },
            // The planted quote: not in the document (it says 80).
            Rule {
                needle: "Trial P.".into(),
                actions: vec![Action::Reply(
                    r#"{"design":"randomised controlled trial","n":800,"design__quote":"We ran a randomised controlled trial.","n__quote":"We enrolled 800 participants."}"#.into(),
                )],
            },
        ],
        std::time::Duration::ZERO,
    )
    .await
    .unwrap();
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        "name = \"report\"\n[[fields]]\nname = \"design\"\ndescription = \"The study design\"\n[[fields]]\nname = \"n\"\ndescription = \"Number of participants\"\ntype = \"integer\"\n",
    )
    .unwrap();
    let store = dir.path().join("store");
    let (c, p) = (corpus.display(), proto.display());
    let out = crate::common::sql_command(
        &srv.base_url(),
        &store,
        &[
            format!("SELECT count(*) FROM extract('{c}', '{p}')"),
            format!("SELECT count(*) FROM ask('{c}', '{question}', 'reader=stuff')"),
        ],
    )
    .output()
    .unwrap();
    crate::common::stdout_of(out);
    let page = dir.path().join("report.html");
    let rep = quarry()
        .args(["report", "--store"])
        .arg(&store)
        .arg(&page)
        .env_remove("QUARRY_CONFIG")
        .output()
        .unwrap();
    assert!(
        rep.status.success(),
        "{}",
        String::from_utf8_lossy(&rep.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();

    // Loaded in Chromium: nothing logged, nothing fetched, nothing run.
    let (dom, err) = browse(&page, &["--dump-dom".into()]);
    assert!(console(&err).is_empty(), "console: {:?}", console(&err));
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the page made a request");
    assert!(
        dom.contains("<title>quarry audit report: "),
        "{}",
        &dom[..dom.len().min(500)]
    );
    assert!(!dom.contains("pwned</title>"));
    let lower = dom.to_ascii_lowercase();
    assert!(
        !lower.contains("<script") && !lower.contains("<img"),
        "an element from a document"
    );
    // ... and the hostile text is there, as text.
    assert!(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"));
    assert!(dom.contains("hostile &lt;img src=x onerror=alert(1)&gt;.txt"));

    // The counts at the top are SQL's over the same store.
    let s = store.as_path();
    let want = [
        (
            "documents",
            count(s, "SELECT count(DISTINCT source) FROM extraction").await,
        ),
        (
            "documents not read, or whose requests failed",
            count(s, "SELECT count(*) FROM extraction WHERE status <> 'ok'").await,
        ),
        (
            "extracted values",
            count(s, "SELECT count(*) FROM evidence").await,
        ),
        (
            "values whose quote is not in the document",
            count(s, "SELECT count(*) FROM evidence WHERE NOT verified").await,
        ),
        (
            "ask answers",
            count(s, "SELECT count(*) FROM answers").await,
        ),
        (
            "model requests",
            count(s, "SELECT count(*) FROM calls").await,
        ),
        (
            "model requests that failed",
            count(s, "SELECT count(*) FROM calls WHERE NOT ok").await,
        ),
    ];
    assert_eq!(want[0].1, 3);
    assert_eq!(want[1].1, 1, "the broken PDF");
    assert_eq!(want[3].1, 1, "the planted quote");
    assert_eq!(want[4].1, 3);
    for (label, n) in want {
        assert!(
            dom.contains(&format!("<td>{label}</td><td class=\"n\">{n}</td>")),
            "{label}: {n}"
        );
    }
    // The planted quote's row is flagged; a verified one stands marked in
    // its document's text, hostile markup and all.
    let row = |needle: &str| {
        let at = html.find(needle).unwrap_or_else(|| panic!("{needle}"));
        let start = html[..at].rfind("<tr").unwrap();
        html[start..at].to_string()
    };
    let planted = row("We enrolled 800 participants.");
    assert!(planted.starts_with("<tr class=\"bad\">"), "{planted}");
    assert!(html.contains(
        "We enrolled 800 participants.</q> <mark class=\"missing\">not in the document</mark>"
    ));
    assert!(
        html.contains("onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt; <mark>We enrolled 120 participants.</mark>"),
        "the verified quote in its context"
    );
    assert!(html.contains("Questions asked of the corpus"));

    // The first screen, photographed.
    let shot =
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-first-screen.png");
    let _ = std::fs::remove_file(&shot);
    browse(
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,900".into(),
        ],
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    eprintln!("first screen: {}", shot.display());
}

/// The review example's store with its flow and a calibration: the
/// protocol shown as fixed in advance with the hash its rows carry, the
/// PRISMA diagram's every count `flow(...)`'s, the calibration's rates
/// drawn with their intervals and its missed studies counted at the top;
/// a protocol the store has no run of is refused, naming the ones it has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_draws_the_flow_and_the_calibration_of_the_protocol_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let replay = "examples/review/recording";
    let run = quarry()
        .args(["sql", "--replay", replay, "-c"])
        .arg("SELECT count(*) FROM screen('examples/review/exports/', 'examples/review/protocol.toml', 'records, files=examples/review/pdfs/')")
        .env("QUARRY_STORE", &store)
        .env_remove("QUARRY_CONFIG")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // Seed 001's screening of 412: 340 excluded, 60 of them sampled.
    let screening = dir.path().join("screening.csv");
    let mut csv = String::from("source,decision\n");
    for i in 1..=412 {
        let d = match i {
            1..=340 => "exclude",
            341..=400 => "include",
            _ => "unclear",
        };
        csv.push_str(&format!("rec{i:03}.pdf,{d}\n"));
    }
    std::fs::write(&screening, csv).unwrap();
    let flow_options = "files=examples/review/pdfs/, search=examples/review/search.toml, protocol=examples/review/protocol.toml";
    let page = dir.path().join("report.html");
    let report = |protocol: &str| {
        quarry()
            .args(["report", "--store"])
            .arg(&store)
            .args(["--replay", replay, "--protocol", protocol])
            .args([
                "--flow",
                "examples/review/exports/",
                "--flow-options",
                flow_options,
            ])
            .args(["--calibration", "examples/review/check.csv", "--screening"])
            .arg(&screening)
            .arg(&page)
            .env_remove("QUARRY_CONFIG")
            .output()
            .unwrap()
    };
    let rep = report("examples/review/protocol.toml");
    assert!(
        rep.status.success(),
        "{}",
        String::from_utf8_lossy(&rep.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();

    // The protocol, with the hash its rows carry.
    let hash = quarry::review::protocol::Protocol::load(std::path::Path::new(
        "examples/review/protocol.toml",
    ))
    .unwrap()
    .short_hash();
    assert!(html.contains("The protocol, as fixed in advance"));
    assert!(
        html.contains(&format!("protocol_hash = '{hash}'")),
        "{hash}"
    );
    assert_eq!(
        count(
            &store,
            &format!("SELECT count(*) FROM screening WHERE protocol_hash = '{hash}'")
        )
        .await,
        2
    );

    // Every count in the diagram is the flow's.
    let svg = &html[html.find("<svg").unwrap()..html.find("</svg>").unwrap()];
    for (label, stage) in [
        ("Records identified", "identified"),
        ("Duplicate records", "duplicates_removed"),
        ("Records screened", "screened"),
        ("Reports sought for retrieval", "sought"),
        ("Reports not retrieved", "not_retrieved"),
        ("Reports assessed for eligibility", "assessed"),
        ("Reports excluded", "reports_excluded"),
        ("Studies included in review", "included"),
    ] {
        let n = count_replayed(
            &store,
            Some(replay),
            &format!("SELECT n FROM flow('examples/review/exports/', '{flow_options}') WHERE stage = '{stage}' AND database IS NULL"),
        )
        .await;
        assert!(
            svg.contains(&format!(">{label} (n = {n})</text>")),
            "{label} {n}: {svg}"
        );
    }
    assert!(svg.contains(">Scopus (n = 2)</text>"), "{svg}");
    assert!(html.contains("<td>reports sought and not retrieved</td><td class=\"n\">1</td>"));

    // The calibration: the rates drawn with their intervals, what the frame
    // cannot support refused, the missed studies counted at the top.
    let cal = &html[html
        .find("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"calibration\"")
        .expect("the calibration drawn")..];
    assert!(
        cal.contains("5.0% (1.7–13.7), n = 60"),
        "{}",
        &cal[..2000.min(cal.len())]
    );
    assert!(cal.contains("95.0% (86.3–98.3), n = 60"));
    assert!(html.contains(
        "<tr class=\"bad\"><td>eligible studies a person found among the sampled exclusions</td><td class=\"n\">3</td></tr>"
    ));
    assert!(html.contains("<td>missed</td>") && html.contains("rec322.pdf"));

    // Loaded in Chromium: nothing logged, nothing fetched.
    let (dom, err) = browse(&page, &["--dump-dom".into()]);
    assert!(console(&err).is_empty(), "console: {:?}", console(&err));
    assert!(dom.contains("class=\"flow\""));

    // A protocol the store has no run of.
    let rep = report("0000dead");
    assert!(!rep.status.success());
    let err = String::from_utf8_lossy(&rep.stderr);
    assert!(
        err.contains("no extraction or screening in the store")
            && err.contains("starts with 0000dead"),
        "{err}"
    );
}
