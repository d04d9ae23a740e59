//! Duplicates among records, settled in the order the records come: the
//! same DOI is the same paper (`doi`); with no DOI to go by, the same
//! normalised title and year (`title_year`). Two records that both have
//! DOIs and differ are never merged, and neither is a record whose DOI
//! differs from one its would-be group already has: similar titles happen,
//! and merging two studies is the error this exists to prevent.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use super::fold_words;

/// 128 bits of a key's SHA-256: what dedup remembers of each DOI and title
/// (a collision among a billion records is about 1 in 10^20).
type Mark = [u8; 16];

fn mark(s: &str) -> Mark {
    let d = Sha256::digest(s.as_bytes());
    let mut m = [0u8; 16];
    m.copy_from_slice(&d[..16]);
    m
}

/// What dedup looks at in a record.
#[derive(Debug, Clone, Default)]
pub struct Key {
    /// The normalised DOI.
    pub doi: Option<String>,
    /// The title.
    pub title: Option<String>,
    /// The year.
    pub year: Option<i32>,
}

/// Titles shorter than this many words are never merged on title alone
/// ("Editorial", "Letter to the editor").
const MIN_TITLE_WORDS: usize = 4;

/// The running state of deduplication.
#[derive(Debug, Default)]
pub struct Dedup {
    by_doi: HashMap<Mark, u32>,
    by_title: HashMap<(Mark, Option<i32>), Vec<u32>>,
    /// The DOIs of each group, by its first record.
    group_dois: HashMap<u32, Vec<Mark>>,
    next: u32,
}

impl Dedup {
    /// Adds the next record; returns the first record of its group and the
    /// rule when it repeats an earlier one (records count from 0 in the
    /// order they were added).
    pub fn add(&mut self, key: &Key) -> Option<(u32, &'static str)> {
        let me = self.next;
        self.next += 1;
        let doi = key.doi.as_deref().map(mark);
        if let Some(doi) = &doi {
            if let Some(&head) = self.by_doi.get(doi) {
                return Some((head, "doi"));
            }
        }
        let title = key
            .title
            .as_deref()
            .map(fold_words)
            .filter(|t| t.split(' ').count() >= MIN_TITLE_WORDS)
            .map(|t| mark(&t));
        if let Some(t) = &title {
            if let Some(heads) = self.by_title.get(&(*t, key.year)) {
                let joinable = heads.iter().copied().find(|h| match &doi {
                    None => true,
                    Some(d) => self
                        .group_dois
                        .get(h)
                        .is_none_or(|ds| ds.is_empty() || ds.contains(d)),
                });
                if let Some(head) = joinable {
                    if let Some(d) = doi {
                        self.group_dois.entry(head).or_default().push(d);
                        self.by_doi.insert(d, head);
                    }
                    return Some((head, "title_year"));
                }
            }
        }
        // A new group.
        if let Some(d) = doi {
            self.by_doi.insert(d, me);
            self.group_dois.entry(me).or_default().push(d);
        }
        if let Some(t) = title {
            self.by_title.entry((t, key.year)).or_default().push(me);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(doi: Option<&str>, title: &str, year: i32) -> Key {
        Key {
            doi: doi.map(str::to_string),
            title: Some(title.to_string()),
            year: Some(year),
        }
    }

    #[test]
    fn by_doi_then_title_and_year() {
        let mut d = Dedup::default();
        assert_eq!(
            d.add(&key(Some("10.1/a"), "Cognitive load and retention", 2019)),
            None
        );
        assert_eq!(
            d.add(&key(Some("10.1/a"), "Something else entirely here", 2020)),
            Some((0, "doi"))
        );
        assert_eq!(
            d.add(&key(None, "Cognitive Load and Retention.", 2019)),
            Some((0, "title_year"))
        );
        // The same title a year apart is another record.
        assert_eq!(
            d.add(&key(None, "Cognitive load and retention", 2020)),
            None
        );
    }

    #[test]
    fn two_different_dois_are_never_merged() {
        let mut d = Dedup::default();
        assert_eq!(
            d.add(&key(Some("10.1/a"), "A randomised trial of spacing", 2019)),
            None
        );
        assert_eq!(
            d.add(&key(Some("10.1/b"), "A randomised trial of spacing", 2019)),
            None
        );
        // A record without a DOI joins the first group with that title.
        assert_eq!(
            d.add(&key(None, "A randomised trial of spacing", 2019)),
            Some((0, "title_year"))
        );
        // A group that took a DOI by title refuses another DOI.
        let mut d = Dedup::default();
        assert_eq!(
            d.add(&key(None, "A randomised trial of spacing", 2019)),
            None
        );
        assert_eq!(
            d.add(&key(Some("10.1/a"), "A randomised trial of spacing", 2019)),
            Some((0, "title_year"))
        );
        assert_eq!(
            d.add(&key(Some("10.1/b"), "A randomised trial of spacing", 2019)),
            None
        );
        assert_eq!(d.add(&key(Some("10.1/a"), "x", 2001)), Some((0, "doi")));
    }

    #[test]
    fn short_titles_are_not_merged() {
        let mut d = Dedup::default();
        assert_eq!(d.add(&key(None, "Editorial", 2019)), None);
        assert_eq!(d.add(&key(None, "Editorial", 2019)), None);
    }
}
