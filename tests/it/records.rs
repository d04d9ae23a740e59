//! `records(...)` and `flow(...)`: reference-manager exports of every
//! format to one row per record, duplicates, matching to files, failed rows
//! that name the line, and the PRISMA flow counted from those rows.

use crate::common::{ctx, root, table};

fn q(s: &str) -> String {
    s.replace('\'', "''")
}

/// Seed 001's records example: 3 records from 2 exports, 1 duplicate,
/// 2 screened, 2 sought, 1 retrieved, 1 not retrieved.
#[tokio::test]
async fn the_seed_records_example() {
    let c = ctx(None);
    let ex = root().join("examples/review");
    let exports = q(&ex.join("exports/").display().to_string());
    let pdfs = q(&ex.join("pdfs/").display().to_string());
    let search = q(&ex.join("search.toml").display().to_string());
    let got = table(
        &c,
        &format!(
            "SELECT database, count(*) AS n, count(duplicate_of) AS duplicates, count(matched_source) AS matched FROM records('{exports}', 'files={pdfs}') GROUP BY database ORDER BY database"
        ),
    )
    .await;
    assert_eq!(
        got,
        "+------------+---+------------+---------+\n\
         | database   | n | duplicates | matched |\n\
         +------------+---+------------+---------+\n\
         | Scopus     | 2 | 1          | 0       |\n\
         | pubmed.ris | 1 | 0          | 1       |\n\
         +------------+---+------------+---------+"
    );
    let got = table(
        &c,
        &format!("SELECT stage, n FROM flow('{exports}', 'files={pdfs}, search={search}') WHERE database IS NULL AND n IS NOT NULL"),
    )
    .await;
    assert_eq!(
        got,
        "+--------------------+---+\n\
         | stage              | n |\n\
         +--------------------+---+\n\
         | identified         | 3 |\n\
         | unreadable         | 0 |\n\
         | duplicates_removed | 1 |\n\
         | screened           | 2 |\n\
         | sought             | 2 |\n\
         | not_retrieved      | 1 |\n\
         | retrieved          | 1 |\n\
         | assessed           | 1 |\n\
         +--------------------+---+"
    );
    // The duplicate names the row it repeats, by DOI.
    let got = table(
        &c,
        &format!(
            "SELECT r.title, d.title AS repeats, r.dedup_rule FROM records('{exports}') r JOIN records('{exports}') d ON r.duplicate_of = d.record_id"
        ),
    )
    .await;
    assert!(
        got.contains("| Cognitive load and retention | Cognitive Load and Retention. | doi"),
        "{got}"
    );
}

/// Matching to files goes by the DOI and title whether or not a query reads
/// those columns: the same matches with only the match columns read.
#[tokio::test]
async fn matching_does_not_depend_on_the_columns_read() {
    let c = ctx(None);
    let dir = tempfile::tempdir().unwrap();
    let (exports, pdfs) = (dir.path().join("exports"), dir.path().join("pdfs"));
    std::fs::create_dir_all(&exports).unwrap();
    std::fs::create_dir_all(&pdfs).unwrap();
    std::fs::write(
        exports.join("a.ris"),
        "TY  - JOUR\nTI  - Retrieval practice improves long term retention\nAU  - Okafor, A.\nPY  - 2020\nDO  - 10.1234/abc.5\nER  - \n\n\
TY  - JOUR\nTI  - A randomised trial of interleaved practice\nAU  - Smith, J.\nPY  - 2019\nER  - \n",
    )
    .unwrap();
    let pdf = std::fs::read(root().join("examples/corpus/PMC3751573.pdf")).unwrap();
    // One file named by the DOI, one by the title.
    std::fs::write(pdfs.join("10.1234_abc.5.pdf"), &pdf).unwrap();
    std::fs::write(
        pdfs.join("A randomised trial of interleaved practice.pdf"),
        &pdf,
    )
    .unwrap();
    let (e, f) = (
        q(&exports.display().to_string()),
        q(&pdfs.display().to_string()),
    );
    let rows =
        |cols: &str| format!("SELECT {cols} FROM records('{e}/', 'files={f}/') ORDER BY line");
    let few = table(
        &c,
        &rows("regexp_replace(matched_source, '^.*/', '') AS file, match_rule"),
    )
    .await;
    let all =
        table(
            &c,
            &format!(
            "SELECT file, match_rule FROM ({})",
            rows("regexp_replace(matched_source, '^.*/', '') AS file, match_rule, title, doi, line")
        ),
        )
        .await;
    assert_eq!(few, all);
    assert!(few.contains("| 10.1234_abc.5.pdf "), "{few}");
    assert!(
        few.contains("| A randomised trial of interleaved practice.pdf "),
        "{few}"
    );
}

/// Every format, a malformed export, and what is not an export.
#[tokio::test]
async fn every_format_and_the_broken_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let w = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).expect("write");
    w(
        "pubmed.nbib",
        "PMID- 31000001\nTI  - Spacing and retention in\n      adolescents.\nFAU - Okafor, Ada\nAU  - Okafor A\nDP  - 2021 Jan\nJT  - Learning\nLID - 10.1000/ABC.1 [doi]\nAB  - We randomised.\n\nPMID- 31000002\nTI  - Second\nDP  - 2020\n",
    );
    w(
        "zotero.bib",
        "@article{okafor2021,\n  author = {Okafor, Ada and Smith, J.},\n  title = {Spacing and Retention in Adolescents},\n  year = {2021},\n  doi = {https://doi.org/10.1000/abc.1},\n  file = {Full Text:files/3/okafor.pdf:application/pdf},\n}\n@article{broken,\n  title = {Never closed,\n",
    );
    w(
        "scopus.csv",
        "Authors,Title,Year,Source title,Volume,DOI,Abstract,Source,EID\n\"Lee K., Park S.\",A third trial of spacing,2019,Memory,4,10.1000/xyz,Abstract text,Scopus,2-s2.0-1\n",
    );
    w("cut.ris", "TY  - JOUR\nTI  - Cut off\nAU  - A, B\n");
    w("notes.md", "# not an export\n");
    let c = ctx(None);
    let src = q(&format!("{}/", dir.path().display()));
    let got = table(
        &c,
        &format!(
            "SELECT regexp_replace(export, '^.*/', '') AS export, line, format, database, title, year, doi, pmid, status, dedup_rule, substr(note, 1, 60) AS note FROM records('{src}') ORDER BY export, line"
        ),
    )
    .await;
    for needle in [
        "| zotero.bib  | 1    | bibtex  | zotero.bib  | Spacing and Retention in Adolescents",
        "| 10.1000/abc.1 |          | duplicate | doi        |",
        "| scopus.csv  | 2    | csv     | Scopus      | A third trial of spacing",
        "| zotero.bib  | 8    |         | zotero.bib  |                                       |      |               |          | failed    |            | line 9: field 'title' of the @article entry starting at line |",
        "| pubmed.nbib | 1    | medline | pubmed.nbib | Spacing and retention in adolescents. | 2021 | 10.1000/abc.1 | 31000001 | ok ",
        "line 1: the file ends inside the record starting here",
        "not a reference export",
    ] {
        assert!(got.contains(needle), "{needle} not in\n{got}");
    }
    // The BibTeX copy repeats the MEDLINE record by DOI; the recorded file path is kept.
    let got = table(
        &c,
        &format!("SELECT dedup_rule, file_path, authors FROM records('{src}') WHERE status = 'duplicate'"),
    )
    .await;
    assert!(
        got.contains("| doi        | files/3/okafor.pdf | [Okafor, Ada, Smith, J.] |"),
        "{got}"
    );
    let got = table(
        &c,
        &format!(
            "SELECT authors FROM records('{}')",
            q(&dir.path().join("scopus.csv").display().to_string())
        ),
    )
    .await;
    assert!(got.contains("[Lee K., Park S.]"), "{got}");
}

/// Unknown tags are kept in `extra`, and a Web of Science export reads.
#[tokio::test]
async fn unknown_tags_and_web_of_science() {
    let c = ctx(None);
    let ris = root().join("tests/data/rispy/ris");
    let got = table(
        &c,
        &format!(
            "SELECT authors, extra['JP'] AS jp, extra['DC'] AS dc FROM records('{}')",
            q(&ris
                .join("example_multi_unknown_tags.ris")
                .display()
                .to_string())
        ),
    )
    .await;
    assert!(
        got.contains("| [Shannon,Claude E.] | [CRISPR] | [Direct Current] |"),
        "{got}"
    );
    let got = table(
        &c,
        &format!("SELECT format, database, count(*) AS n, count(doi) AS dois FROM records('{}') GROUP BY format, database", q(&ris.join("example_wos.ris").display().to_string())),
    )
    .await;
    assert!(got.contains("| wos    | Web of Science | 2 |"), "{got}");
}

const REVIEW_PROTOCOL: &str = r#"
name = "spacing"
inclusion = ["a randomised trial of spaced practice"]
exclusion = ["not a trial"]
"#;

/// A small review: a record with a file, one screened on its abstract, one
/// with nothing to screen on, and a duplicate.
fn review(dir: &std::path::Path) -> (String, String, String) {
    let ex = dir.join("exports");
    let files = dir.join("files");
    std::fs::create_dir_all(&ex).expect("exports");
    std::fs::create_dir_all(&files).expect("files");
    std::fs::write(
        ex.join("a.ris"),
        "TY  - JOUR\nTI  - A randomised trial of spacing\nAU  - Smith, J.\nPY  - 2019\nDO  - 10.1000/spacing\nAB  - We randomised 120 pupils.\nER  - \n\
         TY  - JOUR\nTI  - A survey of teachers about homework\nAU  - Lee, K.\nPY  - 2020\nAB  - We surveyed 300 teachers.\nER  - \n\
         TY  - JOUR\nTI  - Retention after a long delay: a trial\nAU  - Park, S.\nPY  - 2021\nER  - \n",
    )
    .expect("a.ris");
    std::fs::write(
        ex.join("b.nbib"),
        "PMID- 123\nTI  - A randomised trial of spacing.\nAU  - Smith J\nDP  - 2019\nLID - 10.1000/SPACING [doi]\n",
    )
    .expect("b.nbib");
    std::fs::write(
        files.join("smith2019.txt"),
        "A randomised trial of spacing in 120 pupils. Spaced practice improved retention at one month.\n",
    )
    .expect("file");
    let proto = dir.join("protocol.toml");
    std::fs::write(&proto, REVIEW_PROTOCOL).expect("protocol");
    (
        q(&format!("{}/", ex.display())),
        q(&format!("{}/", files.display())),
        q(&proto.display().to_string()),
    )
}

/// `screen` over records, against a scripted server over real HTTP: the
/// matched file is screened on its text, the other on its title and
/// abstract, the record with neither is unclear without a request, the
/// duplicate is not screened; the flow counts the screening's decisions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screening_records_on_files_and_abstracts() {
    use quarry::model::test_server::{Action, Rule, TestServer};
    let reply = |d: &str, crit: Option<&str>, quote: &str| {
        Action::Reply(serde_json::json!({"decision": d, "reason": "as stated", "criterion": crit, "quote": quote}).to_string())
    };
    let srv = TestServer::start(
        vec![
            Rule {
                needle: "Spaced practice improved retention".into(),
                actions: vec![reply(
                    "include",
                    Some("I1"),
                    "A randomised trial of spacing in 120 pupils.",
                )],
            },
            Rule {
                needle: "We surveyed 300 teachers".into(),
                actions: vec![reply("exclude", Some("E1"), "We surveyed 300 teachers.")],
            },
        ],
        std::time::Duration::ZERO,
    )
    .await
    .expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let (ex, files, proto) = review(dir.path());
    let c = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let got = table(
        &c,
        &format!(
            "SELECT r.title, r.matched_source IS NOT NULL AS has_file, s.decision, s.criterion, s.verified, s.status, substr(s.reason, 1, 40) AS reason FROM screen('{ex}', '{proto}', 'records, files={files}') s JOIN records('{ex}', 'files={files}') r ON r.record_id = s.source ORDER BY r.title"
        ),
    )
    .await;
    assert_eq!(
        got,
        "+---------------------------------------+----------+----------+-----------+----------+--------+------------------------------------------+\n\
         | title                                 | has_file | decision | criterion | verified | status | reason                                   |\n\
         +---------------------------------------+----------+----------+-----------+----------+--------+------------------------------------------+\n\
         | A randomised trial of spacing         | true     | include  | I1        | true     | ok     | as stated                                |\n\
         | A survey of teachers about homework   | false    | exclude  | E1        | true     | ok     | as stated                                |\n\
         | Retention after a long delay: a trial | false    | unclear  |           | false    | ok     | nothing to screen on: the record has no  |\n\
         +---------------------------------------+----------+----------+-----------+----------+--------+------------------------------------------+"
    );
    // Two requests: the record with nothing to read asked nothing; the
    // duplicate was not screened.
    assert_eq!(srv.count(), 2);
    let bodies: Vec<String> = srv.requests().iter().map(|r| r.body.to_string()).collect();
    assert!(
        bodies
            .iter()
            .any(|b| b.contains("A survey of teachers about homework")
                && b.contains("We surveyed 300 teachers")),
        "title and abstract sent"
    );
    let got = table(
        &c,
        &format!("SELECT stage, database, n FROM flow('{ex}', 'files={files}, protocol={proto}') WHERE stage <> 'identified' OR database IS NULL"),
    )
    .await;
    assert_eq!(
        got,
        "+--------------------+----------+---+\n\
         | stage              | database | n |\n\
         +--------------------+----------+---+\n\
         | identified         |          | 4 |\n\
         | unreadable         |          | 0 |\n\
         | duplicates_removed |          | 1 |\n\
         | screened           |          | 3 |\n\
         | excluded           | E1       | 1 |\n\
         | excluded           |          | 1 |\n\
         | sought             |          | 2 |\n\
         | not_retrieved      |          | 1 |\n\
         | retrieved          |          | 1 |\n\
         | assessed           |          | 1 |\n\
         | reports_excluded   |          | 0 |\n\
         | awaiting           |          | 0 |\n\
         | included           |          | 1 |\n\
         +--------------------+----------+---+"
    );
    // Everything the flow needed came from the store: no request again.
    assert_eq!(srv.count(), 2);
}

/// `extract` over records, only what their screening includes: the one
/// included record is extracted from its file; the rows are the records'.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extracting_the_included_records() {
    use quarry::model::test_server::{Action, Rule, TestServer};
    let screen = |d: &str, quote: &str| {
        Action::Reply(serde_json::json!({"decision": d, "reason": "as stated", "criterion": null, "quote": quote}).to_string())
    };
    let srv = TestServer::start(
        vec![
            Rule {
                needle: "You are extracting data".into(),
                actions: vec![Action::Reply(
                    serde_json::json!({"n": 120, "n__quote": "A randomised trial of spacing in 120 pupils."}).to_string(),
                )],
            },
            Rule {
                needle: "Spaced practice improved retention".into(),
                actions: vec![screen("include", "A randomised trial of spacing in 120 pupils.")],
            },
            Rule {
                needle: "We surveyed 300 teachers".into(),
                actions: vec![screen("exclude", "We surveyed 300 teachers.")],
            },
        ],
        std::time::Duration::ZERO,
    )
    .await
    .expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let (ex, files, _) = review(dir.path());
    let proto = dir.path().join("extract.toml");
    std::fs::write(
        &proto,
        format!("{REVIEW_PROTOCOL}\n[[fields]]\nname = \"n\"\ndescription = \"Number of participants\"\ntype = \"integer\"\n"),
    )
    .expect("protocol");
    let proto = q(&proto.display().to_string());
    let c = crate::common::scripted_session(&srv.base_url(), dir.path(), "");
    let got = table(
        &c,
        &format!(
            "SELECT r.title, e.n, e.n_filled, e.n_unverified, e.status FROM extract('{ex}', '{proto}', 'records, files={files}, included') e JOIN records('{ex}') r ON r.record_id = e.source ORDER BY r.title"
        ),
    )
    .await;
    assert_eq!(
        got,
        "+-------------------------------+-----+----------+--------------+--------+\n\
         | title                         | n   | n_filled | n_unverified | status |\n\
         +-------------------------------+-----+----------+--------------+--------+\n\
         | A randomised trial of spacing | 120 | 1        | 0            | ok     |\n\
         +-------------------------------+-----+----------+--------------+--------+"
    );
    let bodies: Vec<String> = srv.requests().iter().map(|r| r.body.to_string()).collect();
    assert_eq!(
        bodies
            .iter()
            .filter(|b| b.contains("You are extracting data"))
            .count(),
        1,
        "only the included record is extracted"
    );
    let e = crate::common::sql(
        &c,
        &format!("SELECT * FROM extract('{ex}', '{proto}', 'files={files}')"),
    )
    .await
    .expect_err("options without records");
    assert!(e.to_string().contains("need 'records' first"), "{e}");
}
