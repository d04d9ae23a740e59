//! Duplicates among records, settled in the order the records come: the
//! same DOI is the same paper (`doi`); with no DOI to go by, the same
//! normalised title and year (`title_year`). Two records that both have
//! DOIs and differ are never merged, and neither is a record whose DOI
//! differs from one its would-be group already has: similar titles happen,
//! and merging two studies is the error this exists to prevent.

use super::{fold_words_bytes, FxMap};

/// 128 bits of a key's XXH3-128 digest (a collision among a billion
/// records is about 1 in 10^20).
type Mark = u128;

fn mark(s: &[u8]) -> Mark {
    xxhash_rust::xxh3::xxh3_128(s)
}

/// What dedup compares of a record, made where the record is made (in
/// parallel), so that settling duplicates in order only looks them up.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Marks {
    /// The normalised DOI's mark.
    doi: Option<Mark>,
    /// The folded title's mark, when it has enough words to merge on.
    title: Option<Mark>,
    /// The year.
    year: Option<i32>,
}

/// What dedup looks at in a record.
#[derive(Debug, Clone, Copy, Default)]
pub struct Key<'a> {
    /// The normalised DOI.
    pub doi: Option<&'a str>,
    /// The title.
    pub title: Option<&'a str>,
    /// The year.
    pub year: Option<i32>,
}

impl Key<'_> {
    /// The key's marks.
    pub fn marks(&self) -> Marks {
        thread_local! {
            static FOLDED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        Marks {
            doi: self.doi.map(|d| mark(d.as_bytes())),
            title: self.title.and_then(|t| {
                FOLDED.with_borrow_mut(|f| {
                    (fold_words_bytes(t, f) >= MIN_TITLE_WORDS).then(|| mark(f))
                })
            }),
            year: self.year,
        }
    }
}

/// Titles shorter than this many words are never merged on title alone
/// ("Editorial", "Letter to the editor").
const MIN_TITLE_WORDS: usize = 4;

/// The running state of deduplication: per group a few dozen bytes (its
/// DOI's and title's marks), nothing of the records' text.
#[derive(Debug, Default)]
pub struct Dedup {
    by_doi: FxMap<Mark, u32>,
    /// The first group with each title and year.
    by_title: FxMap<(Mark, Option<i32>), u32>,
    /// Later groups with a title and year already taken (the same title
    /// under two DOIs): rare.
    more_by_title: FxMap<(Mark, Option<i32>), Vec<u32>>,
    /// The DOI of each group that has one, by its first record. A group
    /// has at most one: a record whose DOI differs never joins it.
    group_doi: FxMap<u32, Mark>,
    next: u32,
}

impl Dedup {
    /// Adds the next record; returns the first record of its group and the
    /// rule when it repeats an earlier one (records count from 0 in the
    /// order they were added).
    pub fn add(&mut self, key: &Key) -> Option<(u32, &'static str)> {
        self.add_marked(&key.marks())
    }

    /// [`Dedup::add`] with the key's marks made already.
    pub fn add_marked(&mut self, marks: &Marks) -> Option<(u32, &'static str)> {
        let me = self.next;
        self.next += 1;
        let doi = marks.doi;
        if let Some(doi) = &doi {
            if let Some(&head) = self.by_doi.get(doi) {
                return Some((head, "doi"));
            }
        }
        let title = marks.title.map(|t| (t, marks.year));
        if let Some(t) = &title {
            let first = self.by_title.get(t).copied();
            let more = self
                .more_by_title
                .get(t)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let joinable = first
                .into_iter()
                .chain(more.iter().copied())
                .find(|h| match &doi {
                    None => true,
                    Some(d) => self.group_doi.get(h).is_none_or(|g| g == d),
                });
            if let Some(head) = joinable {
                if let Some(d) = doi {
                    self.group_doi.insert(head, d);
                    self.by_doi.insert(d, head);
                }
                return Some((head, "title_year"));
            }
        }
        // A new group.
        if let Some(d) = doi {
            self.by_doi.insert(d, me);
            self.group_doi.insert(me, d);
        }
        if let Some(t) = title {
            match self.by_title.entry(t) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(me);
                }
                std::collections::hash_map::Entry::Occupied(_) => {
                    self.more_by_title.entry(t).or_default().push(me);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key<'a>(doi: Option<&'a str>, title: &'a str, year: i32) -> Key<'a> {
        Key {
            doi,
            title: Some(title),
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
