//! From the extraction table to a review (issue 19): claims across
//! studies against the scripted model server on 127.0.0.1.

use std::time::Duration;

use quarry::model::test_server::{Action, Rule, TestServer};

use crate::common::{corpus_with, table};

const PROTOCOL: &str = r#"
name = "spacing"
question = "Does spaced practice improve retention?"
[[fields]]
name = "design"
description = "The study design"
type = "enum"
values = ["randomised controlled trial", "cohort", "case-control"]
[[fields]]
name = "setting"
description = "Where the study ran"
[[fields]]
name = "n"
description = "Number of participants"
type = "integer"
"#;

/// 24 studies: an extraction (one reply per document, its quotes in the
/// text), then one study_claims request whose reply names invented
/// studies, a claim with no real support and an invented moderator: each
/// dropped and counted, the rest kept, the support table joined to the
/// studies' documents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_across_studies_drop_invented_studies_and_moderators() {
    let files: Vec<(String, String)> = (1..=24)
        .map(|i| {
            (
                format!("s{i:02}.txt"),
                format!("We ran a randomised controlled trial. We enrolled 120 participants. This was site {i}.\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let extraction = |i: usize| {
        serde_json::json!({"design": "randomised controlled trial", "n": 120, "setting": format!("site {i}"),
            "design__quote": "We ran a randomised controlled trial.", "n__quote": "We enrolled 120 participants.",
            "setting__quote": format!("This was site {i}.")})
        .to_string()
    };
    let claims = serde_json::json!({"claims": [
        {"claim": "Spaced practice improved retention", "support": [1, 2, 3, 97], "contradict": [4, 98], "moderator": "design"},
        {"claim": "An effect only in invented studies", "support": [40, 41], "contradict": [], "moderator": null},
        {"claim": "Larger trials found smaller effects", "support": [5, 6], "contradict": [7], "moderator": "funding_source"},
        {"claim": "Retention held at one year", "support": [8], "contradict": [], "moderator": null}
    ]})
    .to_string();
    let mut rules = vec![Rule {
        needle: "Propose the claims the studies bear on".into(),
        actions: vec![Action::Reply(claims)],
    }];
    rules.extend((1..=24).map(|i| Rule {
        needle: format!("This was site {i}."),
        actions: vec![Action::Reply(extraction(i))],
    }));
    let srv = TestServer::start(rules, Duration::ZERO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(dir.path(), &refs);
    let proto = dir.path().join("protocol.toml");
    std::fs::write(&proto, PROTOCOL).unwrap();
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let (c, p) = (corpus.display(), proto.display());
    let n = table(
        &ctx,
        &format!("SELECT count(*) AS n FROM extract('{c}', '{p}') WHERE status = 'ok'"),
    )
    .await;
    assert!(n.contains("| 24 |"), "{n}");
    let sent = srv.count();
    let t = table(
        &ctx,
        &format!("SELECT claim_id, claim, moderator, n_support, n_contradict FROM study_claims('{c}', '{p}')"),
    )
    .await;
    assert_eq!(
        srv.count(),
        sent + 1,
        "one request for the claims, none to extract again"
    );
    let want = [
        "| C1       | Spaced practice improved retention  | design    | 3         | 1            |",
        "| C3       | Larger trials found smaller effects |           | 2         | 1            |",
        "| C4       | Retention held at one year          |           | 1         | 0            |",
    ];
    for w in want {
        assert!(t.contains(w), "{t}");
    }
    assert!(!t.contains("invented studies"), "{t}");
    let d = table(
        &ctx,
        &format!("SELECT what, count(*) AS n FROM study_claims_dropped('{c}', '{p}') GROUP BY what ORDER BY what"),
    )
    .await;
    for w in [
        "| no_support        | 1 |",
        "| unknown_moderator | 1 |",
        "| unknown_study     | 4 |",
    ] {
        assert!(d.contains(w), "{d}");
    }
    // The long support table names each study's document.
    let s = table(
        &ctx,
        &format!("SELECT claim_id, study, role, regexp_replace(source, '.*/', '') AS file FROM study_claim_support('{c}', '{p}') WHERE claim_id = 'C1'"),
    )
    .await;
    for w in [
        "| C1       | 1     | support    | s01.txt |",
        "| C1       | 3     | support    | s03.txt |",
        "| C1       | 4     | contradict | s04.txt |",
    ] {
        assert!(s.contains(w), "{s}");
    }
    assert_eq!(s.matches("| C1 ").count(), 4, "{s}");
    // The gaps: each planted one and nothing else, with no request (the
    // claims' is answered from the cache).
    let g = table(
        &ctx,
        &format!("SELECT gap, field, value, claim_id, n, n_studies FROM gaps('{c}', '{p}')"),
    )
    .await;
    let rows: Vec<String> = g
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| gap "))
        .map(|l| {
            l.split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect::<Vec<_>>()
                .join(" / ")
        })
        .collect();
    assert_eq!(
        rows,
        [
            "no_variation / design / randomised controlled trial / 24 / 24",
            "no_variation / n / 120 / 24 / 24",
            "single_study / C4 / 1 / 24",
            "unexplained_disagreement / C3 / 1 / 24",
            "unstudied_category / design / case-control / 0 / 24",
            "unstudied_category / design / cohort / 0 / 24",
        ],
        "{g}"
    );
    assert_eq!(srv.count(), sent + 1, "the gaps sent nothing");
}

/// The protocol of seed 001's rendering example: bibliographic fields
/// beside the review's own, and an outline.
fn spacing_protocol(outline: &str) -> String {
    format!(
        r#"
name = "spacing-review"
question = "Does spaced practice improve retention in adult learners?"
outline = [{outline}]
[[fields]]
name = "authors"
description = "All authors, surname first"
[[fields]]
name = "year"
description = "Year of publication"
type = "integer"
[[fields]]
name = "title"
description = "Article title"
[[fields]]
name = "venue"
description = "Journal, volume and issue"
[[fields]]
name = "effect"
description = "Effect size with its interval"
"#
    )
}

/// Seed 001's three studies: file name, authors, year, title, venue, effect.
const SPACING: [(&str, &str, i64, &str, &str, &str); 3] = [
    (
        "smith.txt",
        "Smith, J., Okafor, A.",
        2019,
        "Cognitive Load and Retention in Adult Learners",
        "Journal of Educational Psychology 44(2)",
        "d = 0.61",
    ),
    (
        "lee.txt",
        "Lee, M., Petrov, K.",
        2021,
        "Spacing Effects in Online Instruction",
        "Learning and Instruction 61(4)",
        "d = 0.22",
    ),
    (
        "garcia.txt",
        "Garcia, R.",
        2022,
        "No Effect of Spacing on Procedural Skill Acquisition",
        "Applied Cognitive Psychology 36(1)",
        "d = 0.04",
    ),
];

/// The scripted server: each study's extraction, and `sections` (a
/// needle in the section's brief, the reply).
async fn spacing_server(sections: &[(&str, &str)]) -> TestServer {
    spacing_server_with(vec![], sections).await
}

/// The same, with `first` (matched before the others).
async fn spacing_server_with(first: Vec<Rule>, sections: &[(&str, &str)]) -> TestServer {
    let mut rules = first;
    rules.extend(sections.iter().map(|(needle, reply)| Rule {
        needle: format!("Brief: {needle}"),
        actions: vec![Action::Reply(reply.to_string())],
    }));
    for (_, authors, year, title, venue, effect) in SPACING {
        let reply = serde_json::json!({
            "authors": authors, "year": year, "title": title, "venue": venue, "effect": effect,
            "authors__quote": authors, "year__quote": year.to_string(), "title__quote": title,
            "venue__quote": venue, "effect__quote": format!("The effect was {effect}.")});
        rules.push(Rule {
            needle: title.to_string(),
            actions: vec![Action::Reply(reply.to_string())],
        });
    }
    TestServer::start(rules, Duration::ZERO).await.unwrap()
}

fn spacing_corpus(dir: &std::path::Path) -> std::path::PathBuf {
    let files: Vec<(String, String)> = SPACING
        .iter()
        .map(|(f, a, y, t, v, e)| (f.to_string(), format!("{a} ({y}). {t}. {v}.\n\nWe compared spaced with massed practice. The effect was {e}.\n")))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    corpus_with(dir, &refs)
}

/// Seed 001's rendering example through SQL: the model writes markers,
/// the citations are rendered from the extraction, exactly as the seed
/// prints them, with the reference list of the studies cited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seed_write_up_renders_author_year_citations_from_the_table() {
    let srv = spacing_server(&[(
        "How many, of what designs",
        "Three studies met the criteria [study 1] [study 2] [study 3].",
    )])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let corpus = spacing_corpus(dir.path());
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        spacing_protocol(r#""Included studies: How many, of what designs""#),
    )
    .unwrap();
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let (c, p) = (corpus.display(), proto.display());
    let b = ctx
        .sql(&format!(
            "SELECT text, author_year, partial FROM synthesis('{c}', '{p}')"
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let text = b[0]
        .column(0)
        .as_any()
        .downcast_ref::<datafusion::arrow::array::StringArray>()
        .unwrap()
        .value(0)
        .to_string();
    assert_eq!(
        text,
        "## Included studies\n\
         Three studies met the criteria (Garcia, 2022; Lee & Petrov, 2021; Smith & Okafor, 2019).\n\
         ## References\n\
         - Garcia, R. (2022). No Effect of Spacing on Procedural Skill Acquisition. Applied Cognitive Psychology 36(1).\n\
         - Lee, M., Petrov, K. (2021). Spacing Effects in Online Instruction. Learning and Instruction 61(4).\n\
         - Smith, J., Okafor, A. (2019). Cognitive Load and Retention in Adult Learners. Journal of Educational Psychology 44(2).\n"
    );
    let t = table(
        &ctx,
        &format!("SELECT author_year, partial FROM synthesis('{c}', '{p}')"),
    )
    .await;
    assert!(t.contains("| true        | false   |"), "{t}");
    let cites = table(
        &ctx,
        &format!("SELECT marker, regexp_replace(source, '.*/', '') AS file FROM synthesis_citations('{c}', '{p}')"),
    )
    .await;
    for w in [
        "| [study 1] | garcia.txt |",
        "| [study 2] | lee.txt    |",
        "| [study 3] | smith.txt  |",
    ] {
        assert!(cites.contains(w), "{cites}");
    }
}

/// A section citing a study that is not in the table is partial and says
/// which; the other section is not; the marker is never rendered as a name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_citing_an_unknown_study_is_partial() {
    let srv = spacing_server(&[
        (
            "How many, of what designs",
            "Three studies met the criteria [study 1] [study 2] [study 3].",
        ),
        (
            "The effect, and where studies disagree",
            "The effect was larger in one study [study 3] than in another [study 7].",
        ),
        (
            "What is still unknown",
            "Longer follow-up is needed in future research.",
        ),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let corpus = spacing_corpus(dir.path());
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        spacing_protocol(r#""Included studies: How many, of what designs", "Findings: The effect, and where studies disagree", "Gaps: What is still unknown""#),
    )
    .unwrap();
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let (c, p) = (corpus.display(), proto.display());
    let t = table(
        &ctx,
        &format!("SELECT section, heading, partial, notes FROM synthesise('{c}', '{p}')"),
    )
    .await;
    assert!(
        t.contains("| 1       | Included studies | false   |"),
        "{t}"
    );
    assert!(
        t.contains(
            "| 2       | Findings         | true    | cites studies that are not in the table: 7 "
        ),
        "{t}"
    );
    // A section citing no study at all is tied to no row: partial.
    assert!(
        t.contains(
            "| 3       | Gaps             | true    | cites no study: nothing in it is tied to a row of the table |"
        ),
        "{t}"
    );
    let r = table(
        &ctx,
        &format!("SELECT partial FROM synthesis('{c}', '{p}')"),
    )
    .await;
    assert!(r.contains("| true "), "{r}");
    let text = table(&ctx, &format!("SELECT text FROM synthesis('{c}', '{p}')")).await;
    assert!(
        text.contains("[study 7]") && text.contains("(Smith & Okafor, 2019)"),
        "{text}"
    );
}

/// Coherence passes over the assembled draft: a `cut` that loses a
/// citation is discarded (the draft stands, the reason is a row); a
/// `register` that rewords and keeps every marker and hedge is kept, and
/// the final text is its revision, rendered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coherence_pass_that_loses_a_citation_is_discarded_and_one_that_keeps_them_is_kept() {
    let draft_section =
        "Three small trials suggest a modest benefit [study 1] [study 2] [study 3].";
    // The passes' rules go first: the draft they revise also matches less
    // specific needles.
    let passes = vec![
        Rule {
            needle: "Cut repetition".into(),
            actions: vec![Action::Reply(
                "## Included studies\nThree small trials suggest a modest benefit [study 1] [study 2].\n".into(),
            )],
        },
        Rule {
            needle: "Polish the register".into(),
            actions: vec![Action::Reply(
                "## Included studies\nThree small trials may suggest a modest benefit [study 1] [study 2] [study 3].\n".into(),
            )],
        },
    ];
    let srv = spacing_server_with(passes, &[("How many, of what designs", draft_section)]).await;
    let dir = tempfile::tempdir().unwrap();
    let corpus = spacing_corpus(dir.path());
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        spacing_protocol(r#""Included studies: How many, of what designs""#),
    )
    .unwrap();
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let (c, p) = (corpus.display(), proto.display());
    let opts = "coherence=cut+register";
    let t = table(
        &ctx,
        &format!(
            "SELECT pass, step, kept, reason FROM synthesis_coherence('{c}', '{p}', '{opts}')"
        ),
    )
    .await;
    assert!(
        t.contains("| cut      | 1    | false | the revision loses citations [study 3] |"),
        "{t}"
    );
    assert!(t.contains("| register | 2    | true  |"), "{t}");
    let r = table(
        &ctx,
        &format!("SELECT text FROM synthesis('{c}', '{p}', '{opts}')"),
    )
    .await;
    assert!(
        r.contains("Three small trials may suggest a modest benefit (Garcia, 2022; Lee & Petrov, 2021; Smith & Okafor, 2019)."),
        "{r}"
    );
    let d = table(
        &ctx,
        &format!("SELECT draft FROM synthesis('{c}', '{p}', '{opts}')"),
    )
    .await;
    assert!(d.contains("[study 3]"), "the draft is kept beside: {d}");
    let bad = ctx
        .sql(&format!(
            "SELECT * FROM synthesis('{c}', '{p}', 'coherence=shorten')"
        ))
        .await;
    assert!(bad.unwrap_err().to_string().contains("no pass 'shorten'"));
}

/// Sections from the claims across studies (`outline=claims`): a section
/// per claim, shown only the studies that claim rests on; a section that
/// cites none of its claim's supporting studies is partial and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sections_from_claims_see_only_their_studies_and_a_claim_not_written_up_is_partial() {
    let claims = serde_json::json!({"claims": [
        {"claim": "Spacing improved retention.", "support": [2, 3], "contradict": [1], "moderator": null},
        {"claim": "The effect was largest in classrooms.", "support": [3], "contradict": [], "moderator": null}
    ]})
    .to_string();
    let first = vec![Rule {
        needle: "Propose the claims the studies bear on".into(),
        actions: vec![Action::Reply(claims)],
    }];
    let srv = spacing_server_with(
        first,
        &[
            (
                "Argue this claim across the studies that bear on it: Spacing improved retention.",
                "Retention improved in two studies [study 2] [study 3] but not in a third [study 1].",
            ),
            (
                "Argue this claim across the studies that bear on it: The effect was largest",
                "Retention held at follow-up [study 1].",
            ),
        ],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let corpus = spacing_corpus(dir.path());
    let proto = dir.path().join("protocol.toml");
    // No outline of its own: the claims give it.
    std::fs::write(&proto, spacing_protocol("")).unwrap();
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let (c, p) = (corpus.display(), proto.display());
    let o = "outline=each_claim";
    let outline = table(
        &ctx,
        &format!("SELECT section, claim_ids, heading FROM synthesis_outline('{c}', '{p}', '{o}')"),
    )
    .await;
    assert!(
        outline.contains("| 1       | [C1]      | Spacing improved retention.           |"),
        "{outline}"
    );
    assert!(
        outline.contains("| 2       | [C2]      | The effect was largest in classrooms. |"),
        "{outline}"
    );
    let t = table(
        &ctx,
        &format!("SELECT section, partial, notes FROM synthesise('{c}', '{p}', '{o}')"),
    )
    .await;
    assert!(t.contains("| 1       | false   |"), "{t}");
    assert!(
        t.contains("| 2       | true    | a claim handed to it is not written up (C2): none of its supporting studies is cited |"),
        "{t}"
    );
    // Section 2 was shown only study 3 (Smith & Okafor); section 1 all three.
    let shown = table(
        &ctx,
        "SELECT label, strpos(request, 'Smith, J.') > 0 AS smith, strpos(request, 'Garcia, R.') > 0 AS garcia FROM calls WHERE stage = 'synthesise' AND attempt = 1 ORDER BY label",
    )
    .await;
    assert!(shown.contains("| section 1 | true  | true   |"), "{shown}");
    assert!(shown.contains("| section 2 | true  | false  |"), "{shown}");
    // The claims each section argued, study by study, kept in the store:
    // for and against, each study's document, and whether it is cited.
    let argued = table(
        &ctx,
        "SELECT section, claim_id, study, role, regexp_replace(source, '.*/', '') AS file, cited FROM synthesis_claims ORDER BY section, role DESC, study",
    )
    .await;
    for w in [
        "| 1       | C1       | 2     | support    | lee.txt    | true  |",
        "| 1       | C1       | 3     | support    | smith.txt  | true  |",
        "| 1       | C1       | 1     | contradict | garcia.txt | true  |",
        "| 2       | C2       | 3     | support    | smith.txt  | true  |",
    ] {
        assert!(argued.contains(w), "{w} in {argued}");
    }
    assert_eq!(argued.lines().count(), 4 + 4, "{argued}");
    // The report lists each claim with its studies for and against, each
    // linked to the row of the study the write-up cites.
    let store = dir.path().join("store").display().to_string();
    let (html, sum) = quarry::report::render(&ctx, &store, &Default::default())
        .await
        .unwrap();
    assert_eq!((sum.claims, sum.claims_uncited), (2, 0), "{html}");
    let at = html.find("Claims argued").expect("the claims table");
    let claims = &html[at..];
    let c1 = &claims[claims.find("<b>C1</b>").unwrap()..];
    let c1 = &c1[..c1.find("</tr>").unwrap()];
    assert!(
        c1.contains("[study 2] lee.txt</a><br><a href=\"#syn1-3\">[study 3] smith.txt</a></td><td><a href=\"#syn1-1\">[study 1] garcia.txt</a>"),
        "{c1}"
    );
    assert!(html.contains("<tr id=\"syn1-1\">"), "the cited study's row");
    // Without an outline and without outline=claims there is nothing to write.
    let err = ctx
        .sql(&format!("SELECT * FROM synthesise('{c}', '{p}')"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("outline=claims"), "{err}");
}

/// An extraction that read no study (every request failed): every section
/// is still a row, partial, saying why; no section or coherence request is
/// sent; the review is one row with nothing rendered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_study_read_every_section_is_a_row_saying_why_and_nothing_is_asked() {
    let srv = TestServer::start(
        vec![Rule {
            needle: String::new(),
            actions: vec![Action::Status(500, None)],
        }],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = spacing_corpus(dir.path());
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        spacing_protocol(r#""Included studies: How many", "Findings: The effect""#),
    )
    .unwrap();
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "max_attempts = 1\n");
    let (c, p) = (corpus.display(), proto.display());
    let o = "coherence=all";
    let t = table(
        &ctx,
        &format!("SELECT section, partial, notes FROM synthesise('{c}', '{p}', '{o}')"),
    )
    .await;
    for s in ["| 1 ", "| 2 "] {
        assert!(
            t.lines()
                .any(|l| l.starts_with(s) && l.contains("| true    | no study to write it from")),
            "{t}"
        );
    }
    let sent = srv.count();
    let k = table(
        &ctx,
        &format!("SELECT pass, kept, reason FROM synthesis_coherence('{c}', '{p}', '{o}')"),
    )
    .await;
    assert_eq!(
        k.matches("not run: no section was written").count(),
        3,
        "{k}"
    );
    let r = table(&ctx, &format!("SELECT count(*) AS n, bool_and(partial) AS partial FROM synthesis('{c}', '{p}', '{o}')")).await;
    assert!(r.contains("| 1 | true    |"), "{r}");
    let asked = table(
        &ctx,
        "SELECT count(*) AS n FROM calls WHERE stage IN ('synthesise', 'coherence')",
    )
    .await;
    let detail = table(&ctx, "SELECT stage, label, attempt, cached, error FROM calls WHERE stage IN ('synthesise', 'coherence')").await;
    assert!(asked.contains("| 0 |"), "{asked}{detail}");
    assert_eq!(srv.count(), sent, "nothing more sent");
}

/// The references from reference exports (`bibliography=EXPORTS`, the
/// records matched to the extraction's files), and the write-up kept in
/// the store: `synthesis_sections`, `synthesis_review`,
/// `synthesis_citations` (marker, document, record, reference),
/// `synthesis_coherence` and `synthesis_outline` are registered by name,
/// read by a later session, and a write-up made again with the same
/// options replaces its rows while other options add a write-up beside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_come_from_the_exports_and_the_write_up_is_kept_in_the_store() {
    let srv = spacing_server(&[(
        "How many, of what designs",
        "Three studies met the criteria [study 1] [study 2] [study 3].",
    )])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let corpus = spacing_corpus(dir.path());
    let exports = dir.path().join("exports");
    std::fs::create_dir_all(&exports).unwrap();
    // Two databases: Smith's record twice (a duplicate by DOI), every
    // record with its attachment; the records' author lists and venues
    // differ from what the papers' first lines give.
    std::fs::write(
        exports.join("pubmed.ris"),
        "TY  - JOUR\nAU  - Smith, John\nAU  - Okafor, Ada\nPY  - 2019\nTI  - Cognitive load and retention in adult learners\nJO  - J Educ Psychol\nVL  - 44\nIS  - 2\nSP  - 101\nEP  - 110\nDO  - 10.1037/edu0000123\nL1  - internal-pdf://0001/smith.txt\nER  - \n\n\
         TY  - JOUR\nAU  - Lee, Min\nAU  - Petrov, Kiril\nPY  - 2021\nTI  - Spacing effects in online instruction\nJO  - Learn Instr\nVL  - 61\nIS  - 4\nL1  - internal-pdf://0002/lee.txt\nER  - \n",
    )
    .unwrap();
    std::fs::write(
        exports.join("scopus.ris"),
        "TY  - JOUR\nAU  - Smith, J.\nAU  - Okafor, A.\nPY  - 2019\nTI  - Cognitive Load and Retention\nDO  - https://doi.org/10.1037/EDU0000123\nER  - \n\n\
         TY  - JOUR\nAU  - Garcia, Rosa\nPY  - 2022\nTI  - No effect of spacing on procedural skill acquisition\nJO  - Appl Cogn Psychol\nVL  - 36\nL1  - garcia.txt\nER  - \n",
    )
    .unwrap();
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        spacing_protocol(r#""Included studies: How many, of what designs""#),
    )
    .unwrap();
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let (c, p, x) = (corpus.display(), proto.display(), exports.display());
    let opts = format!("bibliography={x}");
    let text = table(
        &ctx,
        &format!("SELECT text FROM synthesis('{c}', '{p}', '{opts}')"),
    )
    .await;
    for w in [
        "Three studies met the criteria (Garcia, 2022; Lee & Petrov, 2021; Smith & Okafor, 2019).",
        "- Smith, John; Okafor, Ada (2019). Cognitive load and retention in adult learners. J Educ Psychol, 44(2), 101-110.",
        "- Lee, Min; Petrov, Kiril (2021). Spacing effects in online instruction. Learn Instr, 61(4).",
        "- Garcia, Rosa (2022). No effect of spacing on procedural skill acquisition. Appl Cogn Psychol, 36.",
    ] {
        assert!(text.contains(w), "{w} in {text}");
    }
    // The citations name each study's record (the first of Smith's two).
    let records = table(
        &ctx,
        &format!("SELECT regexp_replace(matched_source, '.*/', '') AS file, record_id FROM records('{x}', 'files={c}') WHERE matched_source IS NOT NULL ORDER BY file"),
    )
    .await;
    let cited = table(
        &ctx,
        &format!("SELECT regexp_replace(source, '.*/', '') AS file, record_id FROM synthesis_citations('{c}', '{p}', '{opts}') ORDER BY file"),
    )
    .await;
    assert_eq!(records, cited);
    assert!(cited.contains("garcia.txt"), "{cited}");
    // Kept in the store, by name, for a session opened afterwards.
    let again = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let kept = table(
        &again,
        "SELECT marker, regexp_replace(source, '.*/', '') AS file, record_id IS NOT NULL AS has_record, substr(reference, 1, 18) AS reference FROM synthesis_citations ORDER BY marker",
    )
    .await;
    for w in [
        "| [study 1] | garcia.txt | true       | Garcia, Rosa (2022 |",
        "| [study 2] | lee.txt    | true       | Lee, Min; Petrov,  |",
        "| [study 3] | smith.txt  | true       | Smith, John; Okafo |",
    ] {
        assert!(kept.contains(w), "{kept}");
    }
    let sections = table(
        &again,
        "SELECT count(DISTINCT synthesis_id) AS n, count(*) AS rows, bool_or(partial) AS partial FROM synthesis_sections",
    )
    .await;
    assert!(sections.contains("| 1 | 1    | false   |"), "{sections}");
    for name in [
        "synthesis_review",
        "synthesis_outline",
        "synthesis_coherence",
    ] {
        let t = table(&again, &format!("SELECT count(*) AS n FROM {name}")).await;
        let want = if name == "synthesis_coherence" {
            "| 0 |"
        } else {
            "| 1 |"
        };
        assert!(t.contains(want), "{name}: {t}");
    }
    // The same write-up again replaces its rows; other options add one.
    table(
        &again,
        &format!("SELECT * FROM synthesise('{c}', '{p}', '{opts}')"),
    )
    .await;
    table(&again, &format!("SELECT * FROM synthesise('{c}', '{p}')")).await;
    let n = table(
        &again,
        &format!("SELECT count(*) FILTER (WHERE options = '') AS plain, count(*) FILTER (WHERE options = '{opts}') AS bib, count(*) AS n FROM synthesis_sections"),
    )
    .await;
    assert!(n.contains("| 1     | 1   | 2 |"), "{n}");
    let review = table(
        &again,
        "SELECT options = '' AS plain, strpos(text, 'Smith, John') > 0 AS records FROM synthesis_review ORDER BY plain",
    )
    .await;
    assert!(review.contains("| false | true    |"), "{review}");
    assert!(review.contains("| true  | false   |"), "{review}");
    // An extraction of the records themselves: each study's reference is
    // its own record (the duplicate is not a study).
    let of_records = table(
        &ctx,
        &format!("SELECT text FROM synthesis('{x}', '{p}', 'records, files={c}')"),
    )
    .await;
    assert!(
        of_records.contains("- Smith, John; Okafor, Ada (2019). Cognitive load and retention in adult learners. J Educ Psychol, 44(2), 101-110."),
        "{of_records}"
    );
    let studies = table(
        &ctx,
        &format!("SELECT count(*) AS n, count(record_id) AS with_record FROM synthesis_citations('{x}', '{p}', 'records, files={c}')"),
    )
    .await;
    assert!(studies.contains("| 3 | 3           |"), "{studies}");
    // bibliography= with an extraction of records is refused.
    let err = ctx
        .sql(&format!(
            "SELECT * FROM synthesis('{x}', '{p}', 'records, files={c}, {opts}')"
        ))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("bibliography= and 'records'"),
        "{err}"
    );
}

/// `outline=claims`: the model groups the claims into sections (one
/// request); what it got wrong is left out and noted, never repaired
/// silently: an invented claim id, a claim put in two sections, a section
/// with no claim kept, a claim placed nowhere (a section of its own). Each
/// section's request names its claims and shows only their studies. The
/// outline comes back as protocol entries: pasted into the protocol,
/// edited, it is the write-up's outline with no grouping request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_groups_claims_into_sections_and_the_outline_can_be_edited_back() {
    let claims = serde_json::json!({"claims": [
        {"claim": "Spacing improved retention.", "support": [2, 3], "contradict": [1], "moderator": null},
        {"claim": "The effect was largest in classrooms.", "support": [3], "contradict": [], "moderator": null},
        {"claim": "Procedural skills did not benefit.", "support": [1], "contradict": [], "moderator": null},
        {"claim": "Retention held at follow-up.", "support": [2], "contradict": [], "moderator": null}
    ]})
    .to_string();
    let grouping = serde_json::json!({"sections": [
        {"heading": "Retention", "brief": "What the trials agree on.", "claims": ["C1", "c3", "C9"]},
        {"heading": "Setting", "brief": "Where effects differed.", "claims": ["C2", "C1"]},
        {"heading": "Empty", "brief": "Nothing.", "claims": ["C8"]}
    ]})
    .to_string();
    let first = vec![
        Rule {
            needle: "Group the claims into the sections".into(),
            actions: vec![Action::Reply(grouping)],
        },
        Rule {
            needle: "Propose the claims the studies bear on".into(),
            actions: vec![Action::Reply(claims)],
        },
    ];
    let srv = spacing_server_with(
        first,
        &[
            (
                "What the trials agree on.",
                "Retention improved in two studies [study 2] [study 3] but not in a third [study 1].",
            ),
            ("Where effects differed.", "It held in classrooms [study 1]."),
            (
                "Argue these claims across the studies that bear on them: Retention held at follow-up.",
                "Retention held [study 2].",
            ),
        ],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let corpus = spacing_corpus(dir.path());
    let proto = dir.path().join("protocol.toml");
    std::fs::write(&proto, spacing_protocol("")).unwrap();
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let (c, p) = (corpus.display(), proto.display());
    let o = "outline=claims";
    let outline = table(
        &ctx,
        &format!(
            "SELECT section, heading, claim_ids, note FROM synthesis_outline('{c}', '{p}', '{o}')"
        ),
    )
    .await;
    for w in [
        "| 1       | Retention                    | [C1, C3]  | names C9, not a claim kept: left out; the outline: the grouping's section 'Empty' argues no claim kept: left out |",
        "| 2       | Setting                      | [C2]      | C1 argued in an earlier section: left out here ",
        "| 3       | Retention held at follow-up. | [C4]      | the grouping placed this claim in no section: a section of its own ",
    ] {
        assert!(outline.contains(w), "{w}\n{outline}");
    }
    let t = table(
        &ctx,
        &format!("SELECT section, partial, notes FROM synthesise('{c}', '{p}', '{o}')"),
    )
    .await;
    assert!(t.contains("| 1       | false   | names C9"), "{t}");
    assert!(
        t.contains("| 2       | true    | a claim handed to it is not written up (C2): none of its supporting studies is cited; C1 argued"),
        "{t}"
    );
    assert!(
        t.contains("| 3       | false   | the grouping placed"),
        "{t}"
    );
    // Each section was shown only its claims' studies, and told them.
    let shown = table(
        &ctx,
        "SELECT label, strpos(request, 'Garcia, R.') > 0 AS s1, strpos(request, 'Lee, M.') > 0 AS s2, strpos(request, 'Smith, J.') > 0 AS s3, strpos(request, 'Procedural skills did not benefit. (supported by 1)') > 0 AS c3 FROM calls WHERE stage = 'synthesise' AND attempt = 1 ORDER BY label",
    )
    .await;
    for w in [
        "| section 1 | true  | true  | true  | true  |",
        "| section 2 | false | false | true  | false |",
        "| section 3 | false | true  | false | false |",
    ] {
        assert!(shown.contains(w), "{w}\n{shown}");
    }
    // The outline accepted and edited: section 1 renamed, section 2 thrown
    // away, pasted into the protocol as its outline.
    let entries = crate::common::sql(
        &ctx,
        &format!("SELECT entry FROM synthesis_outline('{c}', '{p}', '{o}') WHERE section <> 2 ORDER BY section"),
    )
    .await
    .unwrap();
    let entries: Vec<String> = crate::common::strings(&entries, "entry")
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(
        entries[0],
        r#"{ heading = "Retention", brief = "What the trials agree on.", claims = ["C1", "C3"] }"#
    );
    let edited = entries
        .join(", ")
        .replace(r#""Retention""#, r#""Retention across trials""#);
    std::fs::write(&proto, spacing_protocol(&edited)).unwrap();
    let t = table(
        &ctx,
        &format!(
            "SELECT section, heading, claim_ids, partial, notes FROM synthesise('{c}', '{p}')"
        ),
    )
    .await;
    assert!(
        t.contains("| 1       | Retention across trials      | [C1, C3]  | false   | the outline: no section argues C2 |"),
        "{t}"
    );
    assert!(
        t.contains("| 2       | Retention held at follow-up. | [C4]      | false   |"),
        "{t}"
    );
    let asked = table(
        &ctx,
        "SELECT count(*) AS n FROM calls WHERE stage = 'outline'",
    )
    .await;
    assert!(
        asked.contains("| 1 |"),
        "one grouping request in all: {asked}"
    );
}

/// A model whose context window holds two of the three studies' lines: a
/// section's request carries the two largest and says the third was left
/// out (partial); the claims request shows the first two and counts the
/// third as `not_shown`, and a claim naming it is dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn studies_past_the_context_window_are_left_out_counted_and_make_the_result_partial() {
    let claims = serde_json::json!({"claims": [
        {"claim": "Spacing improved retention.", "support": [1, 3], "contradict": [], "moderator": null}
    ]})
    .to_string();
    let first = vec![Rule {
        needle: "Propose the claims the studies bear on".into(),
        actions: vec![Action::Reply(claims)],
    }];
    let srv = spacing_server_with(
        first,
        &[(
            "How many, of what designs",
            "Two studies met the criteria [study 1] [study 2].",
        )],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let corpus = spacing_corpus(dir.path());
    let proto = dir.path().join("protocol.toml");
    std::fs::write(
        &proto,
        spacing_protocol(r#""Included studies: How many, of what designs""#),
    )
    .unwrap();
    // 917 - 100 tokens: 451 characters of study lines (each about 170).
    let ctx = crate::common::scripted_session(
        &srv.base_url(),
        dir.path(),
        "[models.\"gpt-4o-mini\"]\ncontext_window = 917\nmax_output = 100\n",
    );
    let (c, p) = (corpus.display(), proto.display());
    let t = table(
        &ctx,
        &format!("SELECT section, partial, notes FROM synthesise('{c}', '{p}')"),
    )
    .await;
    assert!(
        t.contains("| 1       | true    | 1 of its studies (the last by number) were left out of its request: the model's context window holds 451 characters of study lines |"),
        "{t}"
    );
    let sent = table(
        &ctx,
        "SELECT strpos(request, '[study 1]') > 0 AS s1, strpos(request, '[study 2]') > 0 AS s2, strpos(request, '[study 3]') > 0 AS s3 FROM calls WHERE stage = 'synthesise'",
    )
    .await;
    assert!(sent.contains("| true | true | false |"), "{sent}");
    let dropped = table(
        &ctx,
        &format!("SELECT what, detail FROM study_claims_dropped('{c}', '{p}') ORDER BY what"),
    )
    .await;
    assert!(
        dropped
            .contains("| not_shown     | 1 studies (the last by number) did not fit the request"),
        "{dropped}"
    );
    assert!(dropped.contains("| unknown_study |"), "{dropped}");
    let kept = table(
        &ctx,
        &format!("SELECT claim_id, support FROM study_claims('{c}', '{p}')"),
    )
    .await;
    assert!(kept.contains("| C1       | [1]     |"), "{kept}");
}
