//! Asking a question (issue 20): each reader against the scripted model
//! server on 127.0.0.1, on a document whose answer sits in one known chunk.

use std::time::Duration;

use quarry::model::test_server::{Action, Rule, TestServer};

use crate::common::{corpus_with, table};

/// Four paragraphs, one chunk each at 12 tokens; the answer is chunk 1.
const DOC: &str = "The trial ran in three hospitals in Lyon.\n\nIn all, 240 adults were randomised.\n\nRetention was measured at four weeks.\n\nFunding came from a public grant.\n";
const Q: &str = "How many adults were randomised?";
const ANSWER: &str = "240 adults were randomised [chunk 1].";

fn reply(needle: &str, text: &str) -> Rule {
    Rule {
        needle: needle.into(),
        actions: vec![Action::Reply(text.into())],
    }
}

/// The scripted model: it answers from chunk 1 and from nothing else.
fn rules() -> Vec<Rule> {
    vec![
        reply(
            "In all, 240 adults were randomised.\n\nReply with one JSON object: {\"score\"",
            r#"{"score": 9}"#,
        ),
        reply("Reply with one JSON object: {\"score\"", r#"{"score": 2}"#),
        // iterative: chunk 1 alone leaves the place open; with chunk 0 it
        // answers.
        reply(
            "Passages found so far:\n[chunk 0]",
            &format!(r#"{{"answer": "{ANSWER} In three hospitals [chunk 0]."}}"#),
        ),
        reply(
            "Passages found so far:\n[chunk 1]",
            r#"{"search": "which hospitals ran the trial"}"#,
        ),
        reply("Below is what each section of a document says", ANSWER),
        reply("Several independent readings", ANSWER),
        reply("Merge them into one answer", ANSWER),
        reply(
            "Passage:\nIn all, 240 adults were randomised.",
            r#"{"passages": ["In all, 240 adults were randomised."]}"#,
        ),
        reply("Copy, word for word", r#"{"passages": []}"#),
        reply("Passage [chunk 1]:", "240 adults were randomised."),
        reply("From this one passage only", "NOT_IN_DOCUMENT"),
        reply("Next passage [chunk 1]", ANSWER),
        reply("Answer so far: 240", ANSWER),
        reply("Answer so far: NOT_IN_DOCUMENT", "**NOT_IN_DOCUMENT.**"),
        reply("[chunk 1]\nIn all, 240", ANSWER),
        reply(
            "Answer the question from the passages below only",
            "NOT_IN_DOCUMENT",
        ),
    ]
}

/// Every reader: the chunks it sent, its request count (its declared
/// cost for four chunks), its evidence, and the trace agreeing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reader_sends_what_its_signature_says_and_finds_the_answer() {
    let srv = TestServer::start(rules(), Duration::ZERO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(dir.path(), &[("trial.txt", DOC)]);
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let c = corpus.display();
    let opts = |r: &str| format!("reader={r}, max_tokens=12, top_k=1");
    // reader, answer found, calls, chunks used, evidence (chunk, kind)
    let iterative = format!("{ANSWER} In three hospitals [chunk 0].");
    let cases: [(&str, &str, &str, &str, &str); 10] = [
        (
            "stuff",
            ANSWER,
            "1",
            "0,1,2,3",
            "0:chunk 1:chunk 2:chunk 3:chunk",
        ),
        ("map_reduce", ANSWER, "5", "0,1,2,3", "1:map_answer"),
        ("refine", ANSWER, "4", "0,1,2,3", ""),
        ("skim", ANSWER, "5", "0,1,2,3", "1:quote"),
        ("retrieve", ANSWER, "1", "1", "1:chunk"),
        // Four scores, then the best chunk.
        ("rerank", ANSWER, "5", "0,1,2,3", "1:chunk"),
        // Four map requests, no section with two answers, the answer.
        ("hierarchical", ANSWER, "5", "0,1,2,3", ""),
        // Hop 1 finds chunk 1 and asks where; hop 2 adds chunk 0.
        ("iterative", &iterative, "2", "0,1", "0:chunk 1:chunk"),
        // stuff (1) + map_reduce (5) + retrieve (1) + the judge.
        (
            "ensemble",
            ANSWER,
            "8",
            "0,1,2,3",
            "0:chunk 1:chunk 1:map_answer 2:chunk 3:chunk",
        ),
        ("preview", "NOT_IN_DOCUMENT", "1", "0", "0:chunk"),
    ];
    for (reader, answer, calls, used, evidence) in cases {
        let found = answer != "NOT_IN_DOCUMENT";
        let o = opts(reader);
        // Each query a statement of its own, as the shell runs them (an
        // answer repeated within one statement is not traced again).
        quarry::session::begin_statement(&ctx);
        let t = table(
            &ctx,
            &format!("SELECT answer || ' ; ' || CAST(partial AS VARCHAR) || ' ; ' || CAST(not_found AS VARCHAR) || ' ; ' || CAST(calls AS VARCHAR) || ' ; ' || array_to_string(chunks_used, ',') || ' ; ' || CAST(chunks AS VARCHAR) || ' ; ' || CAST(cardinality(notes) AS VARCHAR) AS r FROM ask('{c}', '{Q}', '{o}')"),
        )
        .await;
        let want = format!("| {answer} ; false ; {} ; {calls} ; {used} ; 4 ; 0", !found);
        assert!(t.contains(&want), "{reader}: {want}\n{t}");
        quarry::session::begin_statement(&ctx);
        let ev = table(
            &ctx,
            &format!("SELECT '<' || coalesce(string_agg(CAST(chunk_id AS VARCHAR) || ':' || kind, ' ' ORDER BY chunk_id, kind), '') || '>' AS e FROM ask_evidence('{c}', '{Q}', '{o}')"),
        )
        .await;
        assert!(ev.contains(&format!("<{evidence}>")), "{reader}: {ev}");
        // The trace holds exactly the reader's requests (some answered by
        // the cache: skim's last request is retrieve's; ask_evidence asks
        // them all again and the cache answers).
        let sent = table(
            &ctx,
            &format!("SELECT count(DISTINCT request) AS n FROM calls WHERE stage = 'ask' AND label LIKE '{reader}:%'"),
        )
        .await;
        assert!(sent.contains(&format!("| {calls} |")), "{reader}: {sent}");
    }
    let readers = table(
        &ctx,
        "SELECT count(*) AS n, count(DISTINCT signature) AS s FROM readers()",
    )
    .await;
    assert!(readers.contains("| 10 | 10 |"), "{readers}");
}

/// What degrades is said: a citation of a chunk never sent, a quotation
/// not in its chunk, a failed request; each makes the answer partial. A
/// file that cannot be read is a row saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_citations_invented_quotes_and_failures_make_the_answer_partial() {
    let srv = TestServer::start(
        vec![
            reply("Reply with one JSON object: {\"score\"", "very useful"),
            reply("Passages found so far", r#"{"guess": "240"}"#),
            reply(
                "Passage:\nIn all, 240 adults were randomised.",
                r#"{"passages": ["In all, 420 adults were randomised."]}"#,
            ),
            reply("Copy, word for word", r#"{"passages": []}"#),
            Rule {
                needle: "Passage [chunk 2]:".into(),
                actions: vec![Action::Status(500, None)],
            },
            reply("Passage [chunk 1]:", "240 adults were randomised."),
            reply("From this one passage only", "NOT_IN_DOCUMENT"),
            reply(
                "Merge them into one answer",
                "240 adults [chunk 1] [chunk 9].",
            ),
            reply(
                "Answer the question from the passages below only",
                "About 240 [chunk 7].",
            ),
        ],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(
        dir.path(),
        &[("trial.txt", DOC), ("broken.pdf", "not a pdf")],
    );
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "max_attempts = 1\n");
    let c = corpus.display();
    let t = table(
        &ctx,
        &format!("SELECT regexp_replace(source, '.*/', '') AS file, partial, array_to_string(notes, ' / ') AS notes FROM ask('{c}', '{Q}', 'reader=stuff, max_tokens=12') ORDER BY file"),
    )
    .await;
    assert!(t.contains("| broken.pdf | true    | unread: "), "{t}");
    assert!(t.contains("| trial.txt  | true    | cited_unknown: the answer cites chunk(s) 7 that no request carried"), "{t}");
    let t = table(
        &ctx,
        &format!("SELECT partial, array_to_string(notes, ' / ') AS notes FROM ask('{c}', '{Q}', 'reader=map_reduce, max_tokens=12') WHERE source LIKE '%trial.txt'"),
    )
    .await;
    assert!(t.contains("failed_calls: 1 of 5 requests failed"), "{t}");
    assert!(
        t.contains("cited_unknown: the answer cites chunk(s) 9"),
        "{t}"
    );
    let t = table(
        &ctx,
        &format!("SELECT partial, array_to_string(notes, ' / ') AS notes FROM ask('{c}', '{Q}', 'reader=skim, max_tokens=12') WHERE source LIKE '%trial.txt'"),
    )
    .await;
    assert!(
        t.contains("| true    | unverified_evidence: 1 quoted passage(s)"),
        "{t}"
    );
    let ev = table(
        &ctx,
        &format!("SELECT chunk_id, verified, matched < 1 AS off FROM ask_evidence('{c}', '{Q}', 'reader=skim, max_tokens=12')"),
    )
    .await;
    assert!(ev.contains("| 1        | false    | true |"), "{ev}");
    for (reader, note) in [
        ("rerank", "rerank_degraded: 4 of 4 chunks got no score from the model"),
        ("iterative", "iterative_degraded: hop 1's reply has neither an answer nor a search; the reply is taken as the answer as it stands"),
        ("ensemble", "failed_calls: [map_reduce] 1 of 5 requests failed"),
    ] {
        let t = table(
            &ctx,
            &format!("SELECT partial, array_to_string(notes, ' / ') AS notes FROM ask('{c}', '{Q}', 'reader={reader}, max_tokens=12, top_k=1') WHERE source LIKE '%trial.txt'"),
        )
        .await;
        assert!(t.contains("| true ") && t.contains(note), "{reader}: {t}");
    }
    let err = ctx
        .sql(&format!(
            "SELECT * FROM ask('{c}', '{Q}', 'reader=ensemble, members=stuff+ensemble')"
        ))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("'ensemble' is not a reader an ensemble can ask"),
        "{err}"
    );
    let t = table(
        &ctx,
        &format!("SELECT array_to_string(notes, ' / ') AS notes FROM ask('{c}', '{Q}', 'reader=ensemble, members=stuff+stuff, max_tokens=12') WHERE source LIKE '%trial.txt'"),
    )
    .await;
    assert!(
        t.contains("ensemble_degenerate: 1 distinct member reader(s)"),
        "{t}"
    );
    let nf = table(
        &ctx,
        "SELECT is_not_found('**NOT_IN_DOCUMENT.**') AS a, is_not_found('It says NOT_IN_DOCUMENT.') AS b",
    )
    .await;
    assert!(nf.contains("| true | false |"), "{nf}");
    let err = ctx
        .sql(&format!("SELECT * FROM ask('{c}', '{Q}', 'reader=guess')"))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("no reader 'guess'; readers: stuff, map_reduce"),
        "{err}"
    );
}

/// `hierarchical` follows the document's headings: the two answering
/// chunks under one heading are summarised by one request, the section
/// with one answer is passed on as it is, and the last request sees one
/// line per section.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hierarchical_summarises_by_section_and_answers_from_the_sections() {
    let srv = TestServer::start(
        vec![
            reply("]:\nIn all, 240 adults", "240 adults were randomised."),
            reply("]:\nRandomisation was 1:1", "120 per arm were randomised."),
            reply("]:\nOf the 240 randomised", "240 randomised, 12 withdrew."),
            reply("From this one passage only", "NOT_IN_DOCUMENT"),
            reply("of the section 'Methods'", "240 adults, 120 per arm."),
            reply(
                "Below is what each section of a document says",
                "240 adults were randomised, 120 per arm; 12 withdrew.",
            ),
        ],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let md = "# Methods\n\nThe trial ran in three hospitals in Lyon.\n\nIn all, 240 adults were randomised.\n\nRandomisation was 1:1 in blocks of four.\n\n# Results\n\nRetention was high at four weeks.\n\nOf the 240 randomised, 12 withdrew.\n";
    let corpus = corpus_with(dir.path(), &[("trial.md", md)]);
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let c = corpus.display();
    let t = table(
        &ctx,
        &format!("SELECT answer, partial, calls - chunks AS after_map FROM ask('{c}', '{Q}', 'reader=hierarchical, segment=structural, max_tokens=12')"),
    )
    .await;
    assert!(
        t.contains("| 240 adults were randomised, 120 per arm; 12 withdrew. | false   | 2 "),
        "{t}"
    );
    let sections = table(
        &ctx,
        "SELECT count(*) FILTER (WHERE label LIKE 'hierarchical: section %') AS s, \
         count(*) FILTER (WHERE label = 'hierarchical: hierarchical answer' AND request LIKE '%Section ''Methods'': 240 adults, 120 per arm.%' \
           AND request LIKE '%Section ''Results'': 240 randomised, 12 withdrew. [chunk%') AS last FROM calls",
    )
    .await;
    assert!(sections.contains("| 1 | 1    |"), "{sections}");
}

/// `compare` over the bundled corpus: one ingestion, one row per document
/// and recipe, each with its segmenter, reader, signature and changed
/// settings; a recipe read beside others gives the answers and chunks a
/// run of it alone gives (in another session, with a cache of its own).
/// `auto` picks for one document and is refused for a folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_reads_one_ingestion_with_each_recipe_as_a_run_alone_would() {
    let srv = TestServer::start(
        vec![
            reply("Reply with one JSON object: {\"score\"", r#"{"score": 5}"#),
            reply("From this one passage only", "A partial answer."),
            reply("Merge them into one answer", "Merged [chunk 0]."),
            reply("[chunk 2]\n", "From the third passage [chunk 2]."),
            reply("[chunk 1]\n", "From the second passage [chunk 1]."),
            reply("[chunk 0]\n", "From the first passage [chunk 0]."),
        ],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let corpus = crate::common::corpus();
    let c = corpus.display();
    let q = "How many participants were randomised?";
    let one = tempfile::tempdir().unwrap();
    let ctx = crate::common::scripted_session(&srv.base_url(), one.path(), "");
    let t = table(
        &ctx,
        &format!("SELECT count(*) AS n, count(DISTINCT source) AS docs, count(DISTINCT recipe) AS recipes FROM compare('{c}', '{q}', 'fast,needle,thorough')"),
    )
    .await;
    let docs = std::fs::read_dir(&corpus).unwrap().count();
    assert!(
        t.contains(&format!("| {} | {docs}    | 3       |", 3 * docs)),
        "{t}"
    );
    let t = table(
        &ctx,
        &format!("SELECT DISTINCT c.recipe, c.segmentation, c.reader, c.signature = r.signature AS sig, c.settings FROM compare('{c}', '{q}', 'fast,needle,thorough') c JOIN readers() r ON r.name = c.reader WHERE c.source LIKE '%PMC4486927.txt' ORDER BY 1"),
    )
    .await;
    let cells: Vec<String> = t
        .lines()
        .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>().join("|"))
        .collect();
    for want in [
        "|fast|paragraph|stuff|true|max_tokens=4000|",
        "|needle|semantic|retrieve|true|max_tokens=500, overlap_tokens=50, top_k=8|",
        "|thorough|paragraph|map_reduce|true|overlap_tokens=120|",
    ] {
        assert!(cells.iter().any(|l| l == want), "{want}\n{t}");
    }
    let rows = |b: Vec<datafusion::arrow::array::RecordBatch>| {
        datafusion::arrow::util::pretty::pretty_format_batches(&b)
            .unwrap()
            .to_string()
    };
    let pick = "SELECT source, answer, array_to_string(chunks_used, ',') AS used, calls FROM";
    quarry::session::begin_statement(&ctx);
    let beside = rows(
        crate::common::sql(
            &ctx,
            &format!("{pick} compare('{c}', '{q}', 'fast,needle,thorough') WHERE recipe = 'needle' ORDER BY source"),
        )
        .await
        .unwrap(),
    );
    let two = tempfile::tempdir().unwrap();
    let alone_ctx = crate::common::scripted_session(&srv.base_url(), two.path(), "");
    let alone = rows(
        crate::common::sql(
            &alone_ctx,
            &format!("{pick} ask('{c}', '{q}', 'needle') ORDER BY source"),
        )
        .await
        .unwrap(),
    );
    assert_eq!(beside, alone);
    assert!(beside.contains("From the"), "{beside}");
    let t = table(
        &ctx,
        "SELECT count(*) AS n, count(DISTINCT reader) AS r, string_agg(name, ',') AS names FROM recipes()",
    )
    .await;
    // legacy reads as thorough does; what differs is its cutting.
    assert!(
        t.contains("| 10 | 9 | fast,precise,needle,thorough,survey,narrative,scanned,research,consensus,legacy |"),
        "{t}"
    );
    let t = table(
        &ctx,
        &format!("SELECT recipe FROM ask('{c}/PMC4486927.txt', '{q}', 'auto')"),
    )
    .await;
    assert!(t.contains("| auto:fast |"), "{t}");
    for (args, err) in [
        (
            "ask('{c}', '{q}', 'auto')",
            "auto picks a recipe for one document",
        ),
        (
            "compare('{c}', '{q}', 'fast,fast')",
            "recipe 'fast' is named twice",
        ),
        (
            "compare('{c}', '{q}', 'auto,fast')",
            "it cannot be compared",
        ),
        (
            "ask('{c}', '{q}', 'quick')",
            "no recipe 'quick'; recipes: fast, precise, needle",
        ),
    ] {
        let e = ctx
            .sql(&format!(
                "SELECT * FROM {}",
                args.replace("{c}", &c.to_string()).replace("{q}", q)
            ))
            .await
            .unwrap_err();
        assert!(e.to_string().contains(err), "{args}: {e}");
    }
}

/// The two segmenters that ask a model: `proposition` (one request per
/// batch; a batch the model could not decompose kept as written; a new
/// number flagged) and `contextual` with `context_source=llm` (one request
/// per chunk; a failed one falls back to the heading blurb), their
/// requests counted in `calls`; without a client, `chunks()` falls back
/// and says so; `segmenters()` lists all nine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_segmenters_that_ask_a_model_ask_it_and_say_what_degraded() {
    let props = r#"{"propositions": ["The trial ran in three hospitals in Lyon.", "240 adults were randomised in the trial.", "The trial measured retention at four weeks.", "A public grant funded the trial."]}"#;
    let srv = TestServer::start(
        vec![
            reply("Content: The trial ran", props),
            reply(
                "Content: Funding",
                "Here are the propositions you asked for.",
            ),
            reply(
                "Content: Retention",
                r#"{"propositions": ["Retention was measured at 4 weeks."]}"#,
            ),
            reply("<chunk>\nThe trial ran", "Lyon setting."),
            Rule {
                needle: "Please give a short succinct context".into(),
                actions: vec![Action::Status(500, None)],
            },
            reply("Answer the question from the passages below only", ANSWER),
        ],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(
        dir.path(),
        &[
            ("trial.txt", DOC),
            ("funding.txt", "Funding came from a public grant.\n\nThe grant paid for staff.\n"),
            ("retention.txt", "Retention was measured at four weeks.\n"),
            ("report.md", "# Lyon asthma trial\n\nWe asked whether inhaled steroids help adults whose asthma is not controlled by a reliever alone, and whether any benefit lasts after the inhaler is stopped.\n\n## Methods\n\nIn all, 240 adults were randomised to steroid or placebo inhalers in three hospitals, and their symptoms were scored weekly for twelve weeks by nurses who did not know the allocation.\n"),
        ],
    );
    let ctx = crate::common::scripted_session(&srv.base_url(), dir.path(), "max_attempts = 1\n");
    let c = corpus.display();
    let row = |file: &str, opts: &str| {
        format!("SELECT segmentation || ' ; ' || CAST(chunks AS VARCHAR) || ' ; ' || CAST(calls AS VARCHAR) || ' ; ' || CAST(partial AS VARCHAR) || ' ; ' || array_to_string(notes, ' / ') AS r FROM ask('{c}', '{Q}', '{opts}') WHERE source LIKE '%/{file}'")
    };
    let p = "segment=proposition, reader=stuff, max_tokens=12";
    // One batch, four statements, one chunk each at 12 tokens; then stuff.
    let t = table(&ctx, &row("trial.txt", p)).await;
    assert!(t.contains("| proposition ; 4 ; 2 ; false ;  |"), "{t}");
    let ev = table(
        &ctx,
        &format!("SELECT chunk_id, text FROM ask_evidence('{c}', '{Q}', '{p}') WHERE source LIKE '%/trial.txt' AND chunk_id = 1"),
    )
    .await;
    assert!(
        ev.contains("| 240 adults were randomised in the trial. |"),
        "{ev}"
    );
    let t = table(&ctx, &row("funding.txt", p)).await;
    assert!(
        t.contains("| proposition ; 2 ; 2 ; true ; proposition_kept_as_written: 1 of 1 batches could not be decomposed and are kept as written: 0 ("),
        "{t}"
    );
    let t = table(&ctx, &row("retention.txt", p)).await;
    assert!(
        t.contains("proposition_new_numbers: 1 statements carry a number their passage does not"),
        "{t}"
    );
    // contextual with the model's blurbs: the first chunk's request is
    // answered, the others fail and take the heading blurb.
    let o = "segment=contextual, context_source=llm, reader=stuff, max_tokens=16";
    let t = table(&ctx, &row("trial.txt", o)).await;
    assert!(t.contains("| contextual(llm) ; 4 ; 5 ; true ; context_failed: 3 of 4 chunks have their heading blurb"), "{t}");
    let ev = table(
        &ctx,
        &format!("SELECT chunk_id, replace(text, chr(10), '|') AS text FROM ask_evidence('{c}', '{Q}', '{o}') WHERE source LIKE '%/trial.txt' ORDER BY chunk_id"),
    )
    .await;
    assert!(
        ev.contains("| 0        | Lyon setting.||The trial ran in three hospitals in Lyon. |"),
        "{ev}"
    );
    assert!(
        ev.contains("| 1        | In all, 240 adults were randomised.  "),
        "{ev}"
    );
    // No model in chunks(): heading blurbs, and proposition falls back.
    let t = table(
        &ctx,
        &format!("SELECT method, replace(text, chr(10), '|') AS text FROM chunks('{c}', 'contextual', 80) WHERE text LIKE '%240%'"),
    )
    .await;
    assert!(
        t.contains("| contextual | From \"Lyon asthma trial\", section \""),
        "{t}"
    );
    assert!(
        t.contains("||In all, 240 adults were randomised to steroid"),
        "{t}"
    );
    let t = table(
        &ctx,
        &format!("SELECT DISTINCT method FROM chunks('{c}', 'proposition', 40)"),
    )
    .await;
    assert!(t.contains("| proposition->paragraph |"), "{t}");
    let t = table(
        &ctx,
        "SELECT count(*) AS n, count(DISTINCT hypothesis) AS h FROM segmenters()",
    )
    .await;
    assert!(t.contains("| 9 | 9 |"), "{t}");
}

/// A corpus run of `ask` with a store goes window by window through the
/// run engine: killed with SIGKILL while the last window's one request is
/// held, and started again, it ends with the same answers and evidence as
/// an uninterrupted run, sends no answered request again, and keeps its
/// rows in the store's `answers` and `answer_evidence` tables. A document
/// whose request failed is `status = 'failed'`, restored as it is, and read
/// again with `retry_failed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_ask_run_started_again_ends_with_the_same_answers() {
    use crate::common::{answered, assert_none_sent_again, finished, sql_command, stdout_of};
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for i in 0..40 {
        files.push((
            format!("r{i:02}.txt"),
            format!(
                "Report R{i:02}.\n\nIn all, {} adults were randomised.\n",
                100 + i
            ),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let corpus = corpus_with(dir.path(), &files);
    let mut rules = vec![Rule {
        needle: "Report R07.".into(),
        actions: vec![Action::Status(500, None)],
    }];
    for i in 0..40 {
        rules.push(reply(
            &format!("Report R{i:02}."),
            &format!("{} adults were randomised [chunk 1].", 100 + i),
        ));
    }
    let c = corpus.display();
    let f = "regexp_replace(source, '^.*/', '') AS f";
    let queries = [
        format!("SELECT {f}, answer, partial, status, calls, array_to_string(chunks_used, ',') AS used, array_to_string(notes, ' / ') AS notes FROM ask('{c}', '{Q}', 'reader=stuff, max_tokens=12') ORDER BY f"),
        format!("SELECT {f}, chunk_id, kind, text FROM ask_evidence('{c}', '{Q}', 'reader=stuff, max_tokens=12') ORDER BY f, chunk_id"),
    ];
    let run = |url: &str, store: &std::path::Path| sql_command(url, store, &queries);
    let port = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let norm = |out: std::process::Output| {
        port.replace_all(&stdout_of(out), "127.0.0.1:PORT")
            .to_string()
    };
    let a = TestServer::start(rules.clone(), Duration::ZERO)
        .await
        .unwrap();
    let want = norm(run(&a.base_url(), &dir.path().join("a")).output().unwrap());
    let total = a.count();
    // 40 documents of one request each; R07's fails twice (two attempts).
    assert_eq!(total, 41, "{want}");
    let row = |t: &str, f: &str| -> Vec<String> {
        t.lines()
            .find(|l| l.starts_with(&format!("| {f} ")))
            .unwrap_or_else(|| panic!("no row {f}: {t}"))
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    assert_eq!(
        row(&want, "r12.txt")[2..7],
        [
            "112 adults were randomised [chunk 1].",
            "false",
            "ok",
            "1",
            "0,1"
        ]
    );
    assert_eq!(
        row(&want, "r07.txt")[2..7],
        ["", "true", "failed", "1", "0,1"]
    );
    assert!(
        row(&want, "r07.txt")[7].starts_with("failed_calls:"),
        "{want}"
    );
    let kept = finished(&dir.path().join("a"), "answers");
    assert_eq!(kept, 40);
    assert_eq!(finished(&dir.path().join("a"), "answer_evidence"), 40);

    let b = TestServer::start(rules, Duration::ZERO).await.unwrap();
    b.hold_matching("Report R39.");
    let store_b = dir.path().join("b");
    let mut child = run(&b.base_url(), &store_b).spawn().unwrap();
    let t0 = std::time::Instant::now();
    // Windows of 16: the first two are written, the last holds R39.
    while b.answered().len() < total - 1 || finished(&store_b, "answers") < 32 {
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "the run never got that far: {} of {total} answered, {} kept",
            b.answered().len(),
            finished(&store_b, "answers")
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before the kill"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let before = answered(&b);
    b.release();
    let out = norm(run(&b.base_url(), &store_b).output().unwrap());
    assert_eq!(out, want, "the resumed run's answers differ");
    assert_none_sent_again(&before, &answered(&b), total);

    // Restored as it is; read again with retry_failed (R07 now fails
    // again, so its row stays failed, and its request was sent).
    let sent = b.count();
    let mut cmd = run(&b.base_url(), &store_b);
    assert_eq!(norm(cmd.output().unwrap()), want);
    assert_eq!(b.count(), sent, "a restored run sends nothing");
    cmd.arg("--retry-failed");
    let again = norm(cmd.output().unwrap());
    assert!(again.contains("| r07.txt |"), "{again}");
    assert!(
        b.count() > sent,
        "retry_failed reads the failed document again"
    );
}

/// A run ceiling refuses a corpus run up front, before anything is sent,
/// when the fewest requests its reader makes already pass it: map_reduce
/// sends at least one per chunk (four here), stuff one per document.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_ceiling_refuses_the_ask_before_anything_is_sent() {
    let srv = TestServer::start(
        vec![reply(
            "Answer the question from the passages below only",
            ANSWER,
        )],
        Duration::ZERO,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_with(dir.path(), &[("trial.txt", DOC)]);
    let ctx = crate::common::scripted_session(
        &srv.base_url(),
        dir.path(),
        "[limits]\nmax_total_calls = 3\n",
    );
    let c = corpus.display();
    let e = ctx
        .sql(&format!(
            "SELECT * FROM ask('{c}', '{Q}', 'reader=map_reduce, max_tokens=12')"
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("call_cap: this would make at least 4 model calls"),
        "{e}"
    );
    assert_eq!(srv.count(), 0);
    let t = table(
        &ctx,
        &format!("SELECT status, calls FROM ask('{c}', '{Q}', 'reader=stuff, max_tokens=12')"),
    )
    .await;
    assert!(t.contains("| ok     | 1     |"), "{t}");
}
