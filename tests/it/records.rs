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
