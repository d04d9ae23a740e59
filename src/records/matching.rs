//! Records matched to the files of a corpus, by the rules people name
//! downloads by, in order: the path the export recorded (`path`), the DOI
//! in the file name (`doi`), the title (`title`), the first author's surname
//! and the year (`author_year`). A rule matches a record to a file only when
//! that file is the record's one candidate and no other record claims it;
//! otherwise the record is ambiguous, matches nothing, and its note names
//! the candidates: a coin flip presented as a match is how one paper's
//! findings get attributed to another.

use std::collections::HashMap;

use super::{fold_words, surname};

/// What matching looks at in a record.
#[derive(Debug, Clone, Default)]
pub struct Key {
    /// Paths the export recorded (the group's, duplicates included).
    pub paths: Vec<String>,
    /// Normalised DOI.
    pub doi: Option<String>,
    /// Title.
    pub title: Option<String>,
    /// Year.
    pub year: Option<i32>,
    /// First author, as written.
    pub first_author: Option<String>,
}

/// A file that records may be matched to.
#[derive(Debug, Clone)]
pub struct File {
    /// The file as listed (the `matched_source` value).
    pub source: String,
    /// Its name.
    pub name: String,
}

/// A record's match, or why it has none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Match {
    /// The index of the matched file.
    pub file: Option<usize>,
    /// The rule that matched.
    pub rule: Option<&'static str>,
    /// Why there is no match (ambiguous, or nothing found).
    pub note: Option<String>,
}

/// The rules in order.
pub const RULES: [&str; 4] = ["path", "doi", "title", "author_year"];

fn stem(name: &str) -> &str {
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

fn alnum(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// A file name's words, letters and digits apart (`smith2019a` is `smith`,
/// `2019`, `a`).
fn tokens(name: &str) -> Vec<String> {
    let folded = fold_words(stem(name));
    let mut out = Vec::new();
    for w in folded.split(' ') {
        let mut cur = String::new();
        let mut digit = None;
        for c in w.chars() {
            let d = c.is_ascii_digit();
            if digit.is_some_and(|x| x != d) {
                out.push(std::mem::take(&mut cur));
            }
            digit = Some(d);
            cur.push(c);
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out
}

/// The last path part of a recorded path (`file:///C:/x/a.pdf`,
/// `internal-pdf://123/a.pdf`, `files\12\a.pdf`), and the parts before it.
fn path_parts(p: &str) -> Vec<String> {
    let p = p
        .trim()
        .trim_start_matches("file://")
        .trim_start_matches("internal-pdf://");
    let decoded = quarry_udfs::normalize_doi::percent_decode(p);
    decoded
        .split(['/', '\\'])
        .filter(|s| !s.is_empty())
        .map(|s| s.to_lowercase())
        .collect()
}

/// The candidate files of one record under one rule.
fn candidates(rule: &str, r: &Key, files: &[File], prepared: &[Prepared]) -> Vec<usize> {
    match rule {
        "path" => {
            let mut best: Vec<usize> = Vec::new();
            let mut best_len = 0;
            for p in &r.paths {
                let parts = path_parts(p);
                let Some(name) = parts.last() else { continue };
                for (i, f) in prepared.iter().enumerate() {
                    if f.name_lower != *name {
                        continue;
                    }
                    // The longer the shared tail of folders, the better.
                    let shared = parts
                        .iter()
                        .rev()
                        .zip(f.parts.iter().rev())
                        .take_while(|(a, b)| a == b)
                        .count();
                    if shared > best_len {
                        best = vec![i];
                        best_len = shared;
                    } else if shared == best_len && !best.contains(&i) {
                        best.push(i);
                    }
                }
            }
            best
        }
        "doi" => {
            let Some(doi) = &r.doi else { return vec![] };
            let key = alnum(doi);
            if key.len() < 8 {
                return vec![];
            }
            (0..files.len())
                .filter(|&i| prepared[i].stem_alnum.contains(&key))
                .collect()
        }
        "title" => {
            let Some(t) = r.title.as_deref().map(fold_words) else {
                return vec![];
            };
            if t.split(' ').count() < 3 {
                return vec![];
            }
            (0..files.len())
                .filter(|&i| {
                    let s = &prepared[i].stem_words;
                    s.contains(t.as_str())
                        || (s.split(' ').count() >= 5 && t.starts_with(s.as_str()))
                })
                .collect()
        }
        "author_year" => {
            let (Some(name), Some(year)) = (r.first_author.as_deref().and_then(surname), r.year)
            else {
                return vec![];
            };
            let year = year.to_string();
            (0..files.len())
                .filter(|&i| {
                    let t = &prepared[i].tokens;
                    t.contains(&year)
                        && (t.contains(&name)
                            || prepared[i].stem_alnum.starts_with(&format!("{name}{year}")))
                })
                .collect()
        }
        _ => vec![],
    }
}

struct Prepared {
    name_lower: String,
    parts: Vec<String>,
    stem_alnum: String,
    stem_words: String,
    tokens: Vec<String>,
}

fn rule_name(rule: &str) -> &'static str {
    match rule {
        "path" => "the path the export recorded",
        "doi" => "the DOI in the file name",
        "title" => "the title",
        _ => "first author and year",
    }
}

/// Matches records (by index) to files. `records[i]` is `None` for a record
/// that takes no part (a duplicate, a failed row).
pub fn match_files(records: &[Option<Key>], files: &[File]) -> Vec<Match> {
    let prepared: Vec<Prepared> = files
        .iter()
        .map(|f| Prepared {
            name_lower: f.name.to_lowercase(),
            parts: path_parts(&f.source),
            stem_alnum: alnum(stem(&f.name)),
            stem_words: fold_words(stem(&f.name)),
            tokens: tokens(&f.name),
        })
        .collect();
    let mut out: Vec<Match> = vec![Match::default(); records.len()];
    let mut done: Vec<bool> = records.iter().map(Option::is_none).collect();
    let mut taken = vec![false; files.len()];
    for rule in RULES {
        let cands: Vec<(usize, Vec<usize>)> = records
            .iter()
            .enumerate()
            .filter(|(i, _)| !done[*i])
            .filter_map(|(i, r)| {
                let c: Vec<usize> = candidates(rule, r.as_ref()?, files, &prepared)
                    .into_iter()
                    .filter(|&f| !taken[f])
                    .collect();
                (!c.is_empty()).then_some((i, c))
            })
            .collect();
        let mut claims: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, c) in &cands {
            for &f in c {
                claims.entry(f).or_default().push(*i);
            }
        }
        for (i, c) in &cands {
            done[*i] = true;
            if let [f] = c.as_slice() {
                if claims[f].len() == 1 {
                    out[*i] = Match {
                        file: Some(*f),
                        rule: Some(rule),
                        note: None,
                    };
                    continue;
                }
            }
            let names: Vec<&str> = c.iter().map(|&f| files[f].name.as_str()).collect();
            let others: usize = c.iter().map(|f| claims[f].len() - 1).sum();
            let note = if c.len() > 1 {
                format!(
                    "no file matched: ambiguous by {}: {} files fit ({})",
                    rule_name(rule),
                    c.len(),
                    names.join(", ")
                )
            } else {
                format!(
                    "no file matched: ambiguous by {}: {} is claimed by {} other record(s) as well",
                    rule_name(rule),
                    names.join(", "),
                    others
                )
            };
            out[*i] = Match {
                file: None,
                rule: None,
                note: Some(note),
            };
        }
        for m in &out {
            if let Some(f) = m.file {
                taken[f] = true;
            }
        }
    }
    for (i, m) in out.iter_mut().enumerate() {
        if records[i].is_some() && m.file.is_none() && m.note.is_none() {
            m.note = Some("no file matched (by recorded path, DOI in the file name, title, or first author and year)".into());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str) -> File {
        File {
            source: format!("pdfs/{name}"),
            name: name.to_string(),
        }
    }

    fn rec(author: &str, year: i32, title: &str) -> Option<Key> {
        Some(Key {
            title: Some(title.into()),
            year: Some(year),
            first_author: Some(author.into()),
            ..Default::default()
        })
    }

    #[test]
    fn each_rule() {
        let files = vec![
            file("a.pdf"),
            file("10.1037_edu0000123.pdf"),
            file("Cognitive load and retention.pdf"),
            file("okafor2020.txt"),
        ];
        let recs = vec![
            Some(Key {
                paths: vec!["file:///C:/Users/x/Zotero/storage/AB12/a.pdf".into()],
                ..Default::default()
            }),
            Some(Key {
                doi: Some("10.1037/edu0000123".into()),
                ..Default::default()
            }),
            rec("Smith, J.", 2019, "Cognitive Load and Retention."),
            rec("Okafor A", 2020, "Something else"),
            None,
        ];
        let m = match_files(&recs, &files);
        let got: Vec<(Option<usize>, Option<&str>)> = m.iter().map(|m| (m.file, m.rule)).collect();
        assert_eq!(
            got,
            vec![
                (Some(0), Some("path")),
                (Some(1), Some("doi")),
                (Some(2), Some("title")),
                (Some(3), Some("author_year")),
                (None, None)
            ]
        );
        assert_eq!(m[4].note, None);
    }

    #[test]
    fn an_ambiguous_match_is_no_match() {
        // Two Smith 2019 papers and one smith2019.pdf claim nothing.
        let files = vec![file("smith2019.pdf")];
        let recs = vec![
            rec("Smith, J.", 2019, "One study of things"),
            rec("Smith, K.", 2019, "Another study of things"),
        ];
        let m = match_files(&recs, &files);
        for x in &m {
            assert_eq!(x.file, None);
            let note = x.note.as_deref().unwrap();
            assert!(
                note.contains("ambiguous") && note.contains("smith2019.pdf"),
                "{note}"
            );
        }
        // One record, two files that fit.
        let files = vec![file("smith_2019.pdf"), file("Smith 2019 (2).pdf")];
        let m = match_files(&[rec("Smith J", 2019, "A study of things")], &files);
        assert_eq!(m[0].file, None);
        assert!(
            m[0].note.as_deref().unwrap().contains("2 files fit"),
            "{:?}",
            m[0].note
        );
    }

    #[test]
    fn an_earlier_rule_takes_the_file_first() {
        let files = vec![file("smith2019.pdf"), file("A study of things.pdf")];
        let recs = vec![
            rec("Smith, J.", 2019, "A study of things"),
            rec("Smith, K.", 2019, "Another paper here"),
        ];
        let m = match_files(&recs, &files);
        assert_eq!((m[0].file, m[0].rule), (Some(1), Some("title")));
        assert_eq!((m[1].file, m[1].rule), (Some(0), Some("author_year")));
    }
}
