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

/// A group of records as dedup keeps it: its first record, and its DOI's
/// mark once it has one (a group has at most one: a record whose DOI
/// differs never joins it).
#[derive(Debug, Clone, Copy)]
struct Group {
    head: u32,
    doi: Option<Mark>,
}

impl Group {
    /// Whether a record with `doi` may join the group by its title.
    fn takes(&self, doi: Option<Mark>) -> bool {
        match (doi, self.doi) {
            (Some(d), Some(g)) => d == g,
            _ => true,
        }
    }
}

/// The running state of deduplication: per group a few dozen bytes (its
/// DOI's and title's marks), nothing of the records' text. A new record
/// costs three lookups in tables larger than the cache (its DOI looked up
/// and put in, its title looked up or put in), so the group's DOI lives
/// with its title.
#[derive(Debug, Default)]
pub struct Dedup {
    by_doi: FxMap<Mark, u32>,
    /// The first group with each title and year.
    by_title: FxMap<(Mark, Option<i32>), Group>,
    /// Later groups with a title and year already taken (the same title
    /// under two DOIs): rare.
    more_by_title: FxMap<(Mark, Option<i32>), Vec<Group>>,
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
        use std::collections::hash_map::Entry;
        let me = self.next;
        self.next += 1;
        let doi = marks.doi;
        if let Some(d) = &doi {
            if let Some(&head) = self.by_doi.get(d) {
                return Some((head, "doi"));
            }
        }
        let Some(title) = marks.title.map(|t| (t, marks.year)) else {
            if let Some(d) = doi {
                self.by_doi.insert(d, me);
            }
            return None;
        };
        let joined = match self.by_title.entry(title) {
            Entry::Vacant(v) => {
                v.insert(Group { head: me, doi });
                None
            }
            Entry::Occupied(o) => {
                // The first group with the title, else a later one, that
                // the record's DOI does not rule out.
                let first = o.into_mut();
                let group = if first.takes(doi) {
                    Some(first)
                } else {
                    self.more_by_title
                        .get_mut(&title)
                        .and_then(|more| more.iter_mut().find(|g| g.takes(doi)))
                };
                match group {
                    Some(g) => {
                        if doi.is_some() {
                            g.doi = doi;
                        }
                        Some(g.head)
                    }
                    None => {
                        self.more_by_title
                            .entry(title)
                            .or_default()
                            .push(Group { head: me, doi });
                        None
                    }
                }
            }
        };
        let head = joined.unwrap_or(me);
        if let Some(d) = doi {
            self.by_doi.insert(d, head);
        }
        joined.map(|h| (h, "title_year"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

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

    /// Dedup as first written (a map of each group's DOI by its head),
    /// to check the one that keeps the DOI with the title against.
    #[derive(Default)]
    struct Reference {
        by_doi: HashMap<Mark, u32>,
        by_title: HashMap<(Mark, Option<i32>), Vec<u32>>,
        group_doi: HashMap<u32, Mark>,
        next: u32,
    }

    impl Reference {
        fn add(&mut self, m: &Marks) -> Option<(u32, &'static str)> {
            let me = self.next;
            self.next += 1;
            if let Some(h) = m.doi.and_then(|d| self.by_doi.get(&d).copied()) {
                return Some((h, "doi"));
            }
            let title = m.title.map(|t| (t, m.year));
            if let Some(t) = title {
                let heads = self.by_title.get(&t).cloned().unwrap_or_default();
                let fits = heads.into_iter().find(|h| match m.doi {
                    None => true,
                    Some(d) => self.group_doi.get(h).is_none_or(|g| *g == d),
                });
                if let Some(h) = fits {
                    if let Some(d) = m.doi {
                        self.group_doi.insert(h, d);
                        self.by_doi.insert(d, h);
                    }
                    return Some((h, "title_year"));
                }
            }
            if let Some(d) = m.doi {
                self.by_doi.insert(d, me);
                self.group_doi.insert(me, d);
            }
            if let Some(t) = title {
                self.by_title.entry(t).or_default().push(me);
            }
            None
        }
    }

    #[test]
    fn dedup_agrees_with_the_reference_on_random_records() {
        let dois = [
            None,
            Some("10.1234/a"),
            Some("10.1234/b"),
            Some("10.1234/c"),
        ];
        let titles = [
            None,
            Some("A trial of spaced retrieval practice"),
            Some("Spaced practice in the classroom today"),
            Some("Editorial"),
        ];
        let mut next = crate::records::tests::xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..300 {
            let (mut d, mut r) = (Dedup::default(), Reference::default());
            for _ in 0..(next() % 40) {
                let k = Key {
                    doi: dois[(next() % 4) as usize],
                    title: titles[(next() % 4) as usize],
                    year: Some(2019 + (next() % 2) as i32),
                };
                let m = k.marks();
                assert_eq!(d.add_marked(&m), r.add(&m), "{k:?}");
            }
        }
    }

    #[test]
    fn short_titles_are_not_merged() {
        let mut d = Dedup::default();
        assert_eq!(d.add(&key(None, "Editorial", 2019)), None);
        assert_eq!(d.add(&key(None, "Editorial", 2019)), None);
    }
}
