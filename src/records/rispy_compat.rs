//! The RIS reader against the Python `rispy` 0.10 parser on rispy's own
//! fixtures (`tests/data/rispy/`): the same records, the same tags, the same
//! multi-line values. rispy names tags (`TI` is `title`) and keeps one value
//! for a tag that is not a list tag; this view of quarry's raw records does
//! the same, with rispy's published tables, so the two can be compared.

use serde_json::{json, Map, Value};

use super::{ris, Raw};

const LIST_TAGS: &[&str] = &["A1", "A2", "A3", "A4", "AU", "KW", "N1", "UR"];
const WOK_LIST_TAGS: &[&str] = &["RI", "CR", "AF", "BA", "BF", "AU", "CA", "GP"];

fn ris_name(tag: &str) -> Option<&'static str> {
    Some(match tag {
        "TY" => "type_of_reference",
        "A1" => "first_authors",
        "A2" => "secondary_authors",
        "A3" => "tertiary_authors",
        "A4" => "subsidiary_authors",
        "AB" => "abstract",
        "AD" => "author_address",
        "AN" => "accession_number",
        "AU" => "authors",
        "C1" => "custom1",
        "C2" => "custom2",
        "C3" => "custom3",
        "C4" => "custom4",
        "C5" => "custom5",
        "C6" => "custom6",
        "C7" => "custom7",
        "C8" => "custom8",
        "CA" => "caption",
        "CN" => "call_number",
        "CY" => "place_published",
        "DA" => "date",
        "DB" => "name_of_database",
        "DO" => "doi",
        "DP" => "database_provider",
        "ET" => "edition",
        "EP" => "end_page",
        "ID" => "id",
        "IS" => "number",
        "J2" => "alternate_title1",
        "JA" => "alternate_title2",
        "JF" => "alternate_title3",
        "JO" => "journal_name",
        "KW" => "keywords",
        "L1" => "file_attachments1",
        "L2" => "file_attachments2",
        "L4" => "figure",
        "LA" => "language",
        "LB" => "label",
        "M1" => "note",
        "M3" => "type_of_work",
        "N1" => "notes",
        "N2" => "notes_abstract",
        "NV" => "number_of_volumes",
        "OP" => "original_publication",
        "PB" => "publisher",
        "PY" => "year",
        "RI" => "reviewed_item",
        "RN" => "research_notes",
        "RP" => "reprint_edition",
        "SE" => "section",
        "SN" => "issn",
        "SP" => "start_page",
        "ST" => "short_title",
        "T1" => "primary_title",
        "T2" => "secondary_title",
        "T3" => "tertiary_title",
        "TA" => "translated_author",
        "TI" => "title",
        "TT" => "translated_title",
        "UR" => "urls",
        "VL" => "volume",
        "Y1" => "publication_year",
        "Y2" => "access_date",
        _ => return None,
    })
}

fn wok_name(tag: &str) -> Option<&'static str> {
    Some(match tag {
        "PT" => "publication_type",
        "AU" => "authors",
        "AF" => "author_full_name",
        "BA" => "book_authors",
        "BF" => "book_authors_full_name",
        "CA" => "group_authors",
        "GP" => "book_group_authors",
        "BE" => "editors",
        "TI" => "document_title",
        "SO" => "publication_name",
        "SE" => "book_series_title",
        "BS" => "book_series_subtitle",
        "LA" => "language",
        "DT" => "document_type",
        "CT" => "conference_title",
        "CY" => "conference_date",
        "CL" => "conference_location",
        "SP" => "conference_sponsors",
        "HO" => "conference_host",
        "DE" => "author_keywords",
        "ID" => "keywords_plus",
        "AB" => "abstract",
        "C1" => "author_address",
        "RP" => "reprint_address",
        "EM" => "email_address",
        "RI" => "researcher_id",
        "OI" => "orcid_id",
        "FU" => "funding_agency_and_grant_number",
        "FX" => "funding_text",
        "CR" => "cited_references",
        "NR" => "cited_reference_count",
        "TC" => "wos_core_collection_cited_count",
        "Z9" => "total_times_cited_count",
        "U1" => "usage_count_180",
        "U2" => "usage_count_2013",
        "PU" => "publisher",
        "PI" => "publisher_city",
        "PA" => "publisher_address",
        "SN" => "issn",
        "EI" => "eissn",
        "BN" => "isbn",
        "J9" => "source_abbreviation_29c",
        "JI" => "iso_source_abbreviation",
        "PD" => "publication_date",
        "PY" => "publication_year",
        "VL" => "volume",
        "IS" => "issue",
        "SI" => "special_issue",
        "PN" => "part_number",
        "SU" => "supplement",
        "MA" => "meeting_abstract",
        "BP" => "beginning_page",
        "EP" => "ending_page",
        "AR" => "article_number",
        "DI" => "doi",
        "D2" => "book_doi",
        "EA" => "early_access_date",
        "EY" => "early_access_year",
        "PG" => "page_count",
        "P2" => "chapter_count",
        "WC" => "wos_categories",
        "SC" => "research_areas",
        "GA" => "document_delivery_number",
        "PM" => "pubmed_id",
        "UT" => "accession_number",
        "OA" => "open_access_indicator",
        "HP" => "esi_hot_paper",
        "HC" => "esi_highly_cited_paper",
        "DA" => "date_generated",
        _ => return None,
    })
}

/// A raw record as rispy would name and shape it.
fn rispy_view(raw: &Raw, wos: bool) -> Value {
    let mut out = Map::new();
    let mut unknown: Map<String, Value> = Map::new();
    let list_tags = if wos { WOK_LIST_TAGS } else { LIST_TAGS };
    for t in &raw.tags {
        let name = if wos {
            wok_name(&t.tag)
        } else {
            ris_name(&t.tag)
        };
        let Some(name) = name else {
            let e = unknown.entry(t.tag.clone()).or_insert_with(|| json!([]));
            for l in t.lines.iter() {
                e.as_array_mut().expect("list").push(json!(l));
            }
            continue;
        };
        let split = |l: &str| -> Vec<Value> {
            if !wos && t.tag == "UR" {
                l.split(';').map(|s| json!(s.trim())).collect()
            } else {
                vec![json!(l)]
            }
        };
        if list_tags.contains(&t.tag.as_ref()) {
            let e = out.entry(name).or_insert_with(|| json!([]));
            for l in t.lines.iter() {
                e.as_array_mut().expect("list").extend(split(l));
            }
        } else if !out.contains_key(name) {
            // rispy keeps the first value of a tag that is not a list tag,
            // continuation lines joined by a space.
            out.insert(name.to_string(), json!(t.joined()));
        }
    }
    if !unknown.is_empty() {
        out.insert("unknown_tag".into(), Value::Object(unknown));
    }
    Value::Object(out)
}

#[test]
fn every_rispy_fixture_gives_what_rispy_gives() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rispy");
    let mut names: Vec<_> = std::fs::read_dir(dir.join("ris"))
        .expect("tests/data/rispy/ris")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 15, "{names:?}");
    for name in names {
        let bytes = std::fs::read(dir.join("ris").join(&name)).expect("read");
        let text = crate::records::decode(&bytes).expect("text");
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let wos = ris::is_wos(text);
        let raws = if wos {
            ris::parse_wos(text).0
        } else {
            ris::parse(text).0
        };
        let got: Vec<Value> = raws.iter().map(|r| rispy_view(r, wos)).collect();
        let want: Value = serde_json::from_slice(
            &std::fs::read(
                dir.join("expected_rispy_0.10.0")
                    .join(format!("{name}.json")),
            )
            .expect("expected"),
        )
        .expect("json");
        assert_eq!(Value::Array(got), want, "{name}");
    }
}
