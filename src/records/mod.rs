//! Bibliographic records from reference-manager exports (RIS, Web of
//! Science, PubMed/MEDLINE, BibTeX, CSV): one record per entry with its
//! fields, a stable `record_id`, duplicates settled by DOI (else by title
//! and year, never across two different DOIs), and records matched to the
//! files of a corpus (the path the export recorded, a DOI in the file name,
//! the title, first author and year; an ambiguous match is no match).
//!
//! A corpus of exports is read twice: once to settle duplicates and
//! matches (keeping a few short keys a record), once to give the rows, so
//! memory holds one export's text and the keys, never every record.

pub mod bibtex;
#[cfg(feature = "engine")]
pub mod corpus;
pub mod csv_export;
pub mod dedup;
pub mod matching;
pub mod medline;
pub mod ris;
#[cfg(test)]
mod rispy_compat;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

/// A hasher for keys that are digests already (or small numbers): FxHash's
/// multiply and rotate, without SipHash's cost per record.
#[derive(Default)]
pub(crate) struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map with [`Fx`] hashing.
pub(crate) type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fx>>;

/// One tag of a tagged record with its lines (the first line, then any
/// continuation lines).
#[derive(Debug, Clone, PartialEq)]
pub struct TagValue<'a> {
    /// The tag (`TI`, `AU`, a BibTeX field name, a CSV column).
    pub tag: Cow<'a, str>,
    /// The value's lines (borrowed from the export's text where the
    /// format allows).
    pub lines: Lines<'a>,
    /// The tag as a number ([`tag_code`]), compared instead of the text.
    code: u64,
}

/// A tag of up to 8 ASCII characters as a number, upper-cased: two tags
/// are the same, case aside, when their numbers are (0 for longer tags,
/// which are compared as text).
#[inline]
fn tag_code(tag: &str) -> u64 {
    let b = tag.as_bytes();
    if b.len() > 8 {
        return 0;
    }
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    let x = u64::from_le_bytes(w);
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    if x & HIGH != 0 {
        return 0;
    }
    // Each byte's high bit set where it is 'a'..='z' (all are ASCII here,
    // so no byte carries into the next), and those bytes' 0x20 cleared.
    let at_least_a = x + ONES * (0x80 - u64::from(b'a'));
    let above_z = x + ONES * (0x80 - u64::from(b'z') - 1);
    let lower = at_least_a & !above_z & HIGH;
    x ^ (lower >> 2)
}

impl<'a> TagValue<'a> {
    /// A tag with its first line.
    pub fn new(tag: impl Into<Cow<'a, str>>, first: impl Into<Cow<'a, str>>) -> Self {
        let tag = tag.into();
        Self {
            code: tag_code(&tag),
            tag,
            lines: Lines::One(first.into()),
        }
    }

    /// The lines joined into one value (borrowed when there is one line).
    pub fn joined(&self) -> Cow<'_, str> {
        match &self.lines {
            Lines::One(l) => Cow::Borrowed(l),
            Lines::Many(v) => Cow::Owned(v.join(" ")),
        }
    }
}

/// A tag's lines: nearly always one, held without a list of its own (a
/// large export has millions of tags).
#[derive(Debug, Clone, PartialEq)]
pub enum Lines<'a> {
    /// One line.
    One(Cow<'a, str>),
    /// A first line and its continuation lines.
    Many(Vec<Cow<'a, str>>),
}

impl<'a> Lines<'a> {
    /// Adds a continuation line.
    pub fn push(&mut self, line: Cow<'a, str>) {
        match self {
            Lines::One(first) => {
                let first = std::mem::take(first);
                *self = Lines::Many(vec![first, line]);
            }
            Lines::Many(v) => v.push(line),
        }
    }
}

impl<'a> std::ops::Deref for Lines<'a> {
    type Target = [Cow<'a, str>];
    fn deref(&self) -> &Self::Target {
        match self {
            Lines::One(l) => std::slice::from_ref(l),
            Lines::Many(v) => v,
        }
    }
}

/// A record as the export wrote it: its tags in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw<'a> {
    /// The line the record starts at (from 1).
    pub line: usize,
    /// Its tags.
    pub tags: Vec<TagValue<'a>>,
}

impl<'a> Raw<'a> {
    fn new(line: usize, tag: &'a str, value: Cow<'a, str>) -> Self {
        // Room for a typical record's tags at once, not grown tag by tag.
        let mut tags = Vec::with_capacity(12);
        tags.push(TagValue::new(tag, value));
        Self { line, tags }
    }
}

/// A record's tags, looked up by their numbers.
struct Index<'r, 'a> {
    line: usize,
    tags: &'r [TagValue<'a>],
}

impl<'r, 'a> Index<'r, 'a> {
    fn new(raw: &'r Raw<'a>) -> Self {
        Self {
            line: raw.line,
            tags: &raw.tags,
        }
    }

    /// The places of tag `t`, in order.
    fn places<'s>(&'s self, t: &'s str) -> impl Iterator<Item = usize> + 's {
        let code = tag_code(t);
        self.tags
            .iter()
            .enumerate()
            .filter(move |&(_, tag)| {
                if code != 0 {
                    tag.code == code
                } else {
                    tag.tag.eq_ignore_ascii_case(t)
                }
            })
            .map(|(i, _)| i)
    }

    /// The first value of the first of `tags` the record has (lines joined).
    fn first(&self, tags: &[&str]) -> Option<String> {
        self.value(tags).map(Cow::into_owned)
    }

    /// [`Index::first`] without a copy when the value is one line.
    fn value(&self, tags: &[&str]) -> Option<Cow<'r, str>> {
        tags.iter().find_map(|t| {
            let tag: &'r TagValue<'a> = &self.tags[self.places(t).next()?];
            Some(tag.joined()).filter(|v| !v.trim().is_empty())
        })
    }

    /// Every line of every occurrence of `tags`, in order of `tags`.
    fn every(&self, tags: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        for t in tags {
            for i in self.places(t) {
                out.extend(
                    self.tags[i]
                        .lines
                        .iter()
                        .filter(|l| !l.trim().is_empty())
                        .map(|l| l.to_string()),
                );
            }
        }
        out
    }
}

/// A problem in an export, at a line.
#[derive(Debug, Clone, PartialEq)]
pub struct RawError {
    /// The line (from 1).
    pub line: usize,
    /// What is wrong, naming the line.
    pub message: String,
}

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// RIS.
    Ris,
    /// Web of Science plain text.
    Wos,
    /// PubMed / MEDLINE.
    Medline,
    /// BibTeX / BibLaTeX.
    Bibtex,
    /// CSV or tab-separated, with a header row.
    Csv,
}

impl Format {
    /// The `format` column value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ris => "ris",
            Self::Wos => "wos",
            Self::Medline => "medline",
            Self::Bibtex => "bibtex",
            Self::Csv => "csv",
        }
    }
}

/// A record's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Read.
    Ok,
    /// Repeats an earlier record (`duplicate_of`).
    Duplicate,
    /// Part of an export that could not be read; `note` says where and why.
    Failed,
}

impl Status {
    /// The `status` column value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Duplicate => "duplicate",
            Self::Failed => "failed",
        }
    }
}

/// A field of [`Record`] a reader fills only when asked ([`Fields`]); the
/// year, the id as a number and the marks dedup compares are always there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `record_id` (the id spelt out).
    RecordId,
    /// `title`.
    Title,
    /// `doi`.
    Doi,
    /// `ty`.
    Type,
    /// `authors`.
    Authors,
    /// `venue`.
    Venue,
    /// `volume`.
    Volume,
    /// `issue`.
    Issue,
    /// `pages`.
    Pages,
    /// `pmid`.
    Pmid,
    /// `abstract_text`.
    Abstract,
    /// `keywords`.
    Keywords,
    /// `url`.
    Url,
    /// `file_path`.
    FilePath,
    /// `extra`.
    Extra,
    /// `database` (the record's own tag, else the export's).
    Database,
    /// `export`.
    Export,
}

/// The fields of [`Record`] a reader fills (the rest are left empty), so
/// that a query reading a few columns does not pay for making the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields(u32);

impl Default for Fields {
    fn default() -> Self {
        Self::ALL
    }
}

impl Fields {
    /// Every field.
    pub const ALL: Fields = Fields(u32::MAX);
    /// Only what every record has (the year, the id as a number, the
    /// marks, the status).
    pub const NONE: Fields = Fields(0);

    /// These fields and `f`.
    pub const fn with(self, f: Field) -> Self {
        Self(self.0 | 1 << f as u32)
    }

    /// Whether `f` is filled.
    pub const fn has(self, f: Field) -> bool {
        self.0 & (1 << f as u32) != 0
    }

    /// The fields the `records` columns `names` are made from.
    pub fn of_columns<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        names.into_iter().fold(Self::NONE, |f, n| {
            let field = match n {
                "record_id" => Field::RecordId,
                "title" => Field::Title,
                "doi" => Field::Doi,
                "type" => Field::Type,
                "authors" => Field::Authors,
                "venue" => Field::Venue,
                "volume" => Field::Volume,
                "issue" => Field::Issue,
                "pages" => Field::Pages,
                "pmid" => Field::Pmid,
                "abstract" => Field::Abstract,
                "keywords" => Field::Keywords,
                "url" => Field::Url,
                "file_path" => Field::FilePath,
                "extra" => Field::Extra,
                "database" => Field::Database,
                "export" => Field::Export,
                _ => return f,
            };
            f.with(field)
        })
    }
}

/// One bibliographic record, or one `failed` row of an export.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Record {
    /// Stable across runs and machines: a digest of the export's file name
    /// and the record's tags.
    pub record_id: String,
    /// The digest `record_id` spells (0 for a failed row).
    pub id: u64,
    /// What dedup compares (made with the record, in parallel).
    pub marks: dedup::Marks,
    /// The export it came from, as listed (when [`Field::Export`] is read:
    /// the records of one part share it, and counting its references from
    /// two threads costs more than the rest of a small record).
    pub export: Option<Arc<str>>,
    /// The line of the export it starts at.
    pub line: usize,
    /// The export's format.
    pub format: Option<Format>,
    /// The database: the export's `DB` tag (or the database it names), else
    /// the file name (when [`Field::Database`] is read).
    pub database: Option<Arc<str>>,
    /// The reference type as the export wrote it (`JOUR`, `article`, `J`).
    pub ty: Option<String>,
    /// Title.
    pub title: Option<String>,
    /// Authors in order, as written.
    pub authors: Vec<String>,
    /// Publication year.
    pub year: Option<i32>,
    /// Journal, book or proceedings.
    pub venue: Option<String>,
    /// Volume.
    pub volume: Option<String>,
    /// Issue.
    pub issue: Option<String>,
    /// Pages (`379-423`).
    pub pages: Option<String>,
    /// The DOI, normalised (`normalize_doi`).
    pub doi: Option<String>,
    /// The PubMed id.
    pub pmid: Option<String>,
    /// Abstract.
    pub abstract_text: Option<String>,
    /// Keywords.
    pub keywords: Vec<String>,
    /// The first URL.
    pub url: Option<String>,
    /// A path to the full text the export recorded.
    pub file_path: Option<String>,
    /// Every other tag with its values, unknown tags included.
    pub extra: Vec<(String, Vec<String>)>,
    /// `Ok` or `Failed` when read (`Duplicate` is decided later).
    pub status: Option<Status>,
    /// What went wrong (failed rows), or a note.
    pub note: Option<String>,
}

/// Text of an export: UTF-8 (a BOM dropped), UTF-16 with a BOM, or the
/// legacy encoding the bytes look like; `Err` for what is not text.
pub fn decode(bytes: &[u8]) -> Result<Cow<'_, str>, String> {
    if bytes.is_empty() {
        return Err("the file is empty (0 bytes): export the records again".into());
    }
    // UTF-8 (most exports) is read where it lies, without a copy.
    let text = match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(crate::ingest::txt::decode(bytes)),
    };
    if text.contains('\0') {
        return Err("this is not a text file (it holds NUL bytes): export the records as RIS, MEDLINE (.nbib), BibTeX or CSV".into());
    }
    Ok(text)
}

/// The format of an export, from its extension and its text.
pub fn detect(ext: &str, text: &str) -> Option<Format> {
    match ext {
        "bib" | "bibtex" | "biblatex" => return Some(Format::Bibtex),
        "nbib" | "medline" => return Some(Format::Medline),
        "csv" | "tsv" => return Some(Format::Csv),
        _ => {}
    }
    if medline::is_medline(text) {
        return Some(Format::Medline);
    }
    // A tab-separated export under another name (Web of Science's
    // "savedrecs.txt"): a header row of tabs naming a title column.
    let header = text.lines().next().unwrap_or_default();
    if header.matches('\t').count() >= 2
        && header.split('\t').any(|h| {
            matches!(
                header_key(h).as_str(),
                "ti" | "title" | "articletitle" | "documenttitle"
            )
        })
    {
        return Some(Format::Csv);
    }
    if ris::is_wos(text) {
        return Some(Format::Wos);
    }
    if text.lines().any(|l| {
        let l = l.trim_start_matches('\u{feff}');
        l.starts_with("TY  -") || l.starts_with("TY -")
    }) {
        return Some(Format::Ris);
    }
    let t = text.trim_start();
    if t.starts_with('@') || text.lines().any(|l| l.trim_start().starts_with("@article")) {
        return Some(Format::Bibtex);
    }
    None
}

/// The first year (1500-2099) in a text.
pub fn year_in(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    (0..b.len().saturating_sub(3)).find_map(|i| {
        let w = &b[i..i + 4];
        let before = i.checked_sub(1).map(|j| b[j]);
        let after = b.get(i + 4);
        let digits = w.iter().all(u8::is_ascii_digit);
        let alone = !before.is_some_and(|c| c.is_ascii_digit())
            && !after.is_some_and(|c| c.is_ascii_digit());
        if digits && alone {
            let y: i32 = s[i..i + 4].parse().ok()?;
            (1500..2100).contains(&y).then_some(y)
        } else {
            None
        }
    })
}

/// Lower-case letters and digits of a text, accents dropped, words joined
/// by one space: the key titles are compared on.
pub fn fold_words(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    fold_words_into(s, &mut out);
    out
}

/// [`fold_words`] into `out` (cleared first), so that a caller folding many
/// texts keeps one buffer; returns the number of words. Each character is
/// decomposed on its own (NFKD) and its combining marks dropped, which is
/// NFKD of the whole text less its marks (canonical reordering only moves
/// marks), without buffering the text's decomposition.
pub fn fold_words_into(s: &str, out: &mut String) -> usize {
    out.clear();
    if s.is_ascii() {
        let mut v = std::mem::take(out).into_bytes();
        let words = fold_ascii_into(s.as_bytes(), &mut v);
        *out = String::from_utf8(v).expect("folded ASCII is UTF-8");
        return words;
    }
    let mut words = 0;
    let mut gap = true;
    let mut put = |c: char, out: &mut String| {
        if c.is_alphanumeric() {
            if gap {
                if !out.is_empty() {
                    out.push(' ');
                }
                words += 1;
                gap = false;
            }
            if c.is_ascii() {
                out.push(c.to_ascii_lowercase());
            } else {
                out.extend(c.to_lowercase());
            }
        } else {
            gap = true;
        }
    };
    for c in s.chars() {
        if c.is_ascii() {
            put(c, out);
        } else {
            unicode_normalization::char::decompose_compatible(c, |d| {
                if !unicode_normalization::char::is_combining_mark(d) {
                    put(d, out);
                }
            });
        }
    }
    words
}

/// Each ASCII byte folded: its lower case when a letter or digit, else 0.
static FOLD_ASCII: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        let b = i as u8;
        if b.is_ascii_alphanumeric() {
            t[i] = b.to_ascii_lowercase();
        }
        i += 1;
    }
    t
};

/// [`fold_words_into`] of ASCII text into bytes, without a branch a byte
/// (letters and spaces alternate too often for a branch to be predicted):
/// each byte's folded form is written where the next one goes and kept
/// only when it is a letter or digit, into a buffer as long as the text
/// (the folded text is never longer: a space stands for at least one byte
/// that is not a letter or digit).
fn fold_ascii_into(s: &[u8], out: &mut Vec<u8>) -> usize {
    out.clear();
    out.resize(s.len() + 1, 0);
    let mut w = 0;
    let mut words = 0;
    let mut gap = 1;
    for &b in s {
        let c = FOLD_ASCII[usize::from(b & 0x7f)];
        let is = usize::from(c != 0);
        let starts = is & gap;
        // A space before every word but the first.
        out[w] = b' ';
        w += starts & usize::from(words != 0);
        words += starts;
        out[w] = c;
        w += is;
        gap = 1 - is;
    }
    out.truncate(w);
    words
}

/// [`fold_words_into`] into bytes (the UTF-8 of the folded text).
pub(crate) fn fold_words_bytes(s: &str, out: &mut Vec<u8>) -> usize {
    if s.is_ascii() {
        return fold_ascii_into(s.as_bytes(), out);
    }
    let mut folded = String::new();
    let words = fold_words_into(s, &mut folded);
    out.clear();
    out.extend_from_slice(folded.as_bytes());
    words
}

/// The surname of an author as exports write them: `Smith, J.`, `Smith J`,
/// `Smith JA`, `John Smith`, `van der Berg, A.`.
pub fn surname(author: &str) -> Option<String> {
    let a = author.trim();
    let name = if let Some((last, _)) = a.split_once(',') {
        last.to_string()
    } else {
        let words: Vec<&str> = a.split_whitespace().collect();
        let initials = |w: &str| {
            let w = w.trim_end_matches('.');
            !w.is_empty() && w.len() <= 3 && w.chars().all(|c| c.is_uppercase() || c == '.')
        };
        match words.as_slice() {
            [] => return None,
            [one] => one.to_string(),
            // "Smith J", "Smith JA"
            [.., last] if initials(last) => {
                let n = words.iter().rev().take_while(|w| initials(w)).count();
                words[..words.len() - n].join(" ")
            }
            // "John Smith"
            [.., last] => last.to_string(),
        }
    };
    let key = fold_words(&name).replace(' ', "");
    (!key.is_empty()).then_some(key)
}

/// What a tag-based record becomes, by format: the title, DOI and year,
/// and of the other fields those in `fields`.
fn to_record(raw: &Raw, format: Format, database: &Arc<str>, fields: Fields) -> Record {
    let raw = &Index::new(raw);
    let pick = |tags: &[&str]| raw.first(tags);
    let want = |f: Field| fields.has(f);
    // A field's value from the first of `tags` the record has, when it is read.
    let take = |f: Field, tags: &[&str]| if want(f) { pick(tags) } else { None };
    let mut r = Record {
        line: raw.line,
        format: Some(format),
        status: Some(Status::Ok),
        database: fields.has(Field::Database).then(|| database.clone()),
        ..Default::default()
    };
    let split_semi = |v: Vec<String>| -> Vec<String> {
        v.iter()
            .flat_map(|k| {
                k.split(';')
                    .map(str::trim)
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .filter(|k| !k.is_empty())
            .collect()
    };
    let pages = |sp: Option<String>, ep: Option<String>| match (sp, ep) {
        (Some(s), Some(e)) if !s.contains('-') => Some(format!("{s}-{e}")),
        (Some(s), _) => Some(s),
        (None, e) => e,
    };
    match format {
        Format::Ris => {
            r.title = pick(&["TI", "T1", "CT", "BT"]);
            r.year = ["PY", "Y1", "DA", "DP", "Y2"]
                .iter()
                .find_map(|t| raw.value(&[t]).and_then(|v| year_in(&v)));
            r.doi = raw
                .value(&["DO"])
                .and_then(|d| quarry_udfs::normalize_doi::normalize_doi(&d))
                .or_else(|| {
                    raw.every(&["UR", "L2", "M3", "N1"])
                        .iter()
                        .filter(|u| u.contains("doi"))
                        .find_map(|u| quarry_udfs::normalize_doi::normalize_doi(u))
                });
            r.ty = take(Field::Type, &["TY"]);
            if want(Field::Authors) {
                r.authors = raw.every(&["AU", "A1"]);
            }
            r.venue = take(Field::Venue, &["JF", "JO", "T2", "JA", "J2"]);
            r.volume = take(Field::Volume, &["VL", "VO"]);
            r.issue = take(Field::Issue, &["IS", "CP"]);
            r.pages = pages(take(Field::Pages, &["SP"]), take(Field::Pages, &["EP"]));
            r.abstract_text = take(Field::Abstract, &["AB", "N2"]);
            if want(Field::Keywords) {
                r.keywords = split_semi(raw.every(&["KW"]));
            }
            if want(Field::Url) {
                r.url = split_semi(raw.every(&["UR"])).into_iter().next();
            }
            if want(Field::FilePath) {
                r.file_path = raw
                    .every(&["L1"])
                    .into_iter()
                    .chain(
                        raw.every(&["L2"])
                            .into_iter()
                            .filter(|p| looks_like_file(p)),
                    )
                    .flat_map(|p| {
                        p.split(';')
                            .map(|s| s.trim().to_string())
                            .collect::<Vec<_>>()
                    })
                    .find(|p| !p.is_empty());
            }
            if want(Field::Database) {
                if let Some(db) = raw.value(&["DB"]) {
                    r.database = Some(db.as_ref().into());
                }
            }
            if want(Field::Pmid) {
                r.pmid = pmid_in(raw, &["AN", "M1", "N1", "C1", "ID"]);
                // A MEDLINE record's accession number is its PubMed id (Ovid, EBSCO).
                if r.pmid.is_none() {
                    r.pmid = pick(&["AN"]).filter(|a| {
                        (1..=9).contains(&a.len())
                            && a.bytes().all(|b| b.is_ascii_digit())
                            && ["DB", "DP"]
                                .iter()
                                .filter_map(|t| raw.value(&[t]))
                                .any(|d| {
                                    contains_folded(&d, "medline") || contains_folded(&d, "pubmed")
                                })
                    });
                }
            }
        }
        Format::Wos => {
            r.title = pick(&["TI"]);
            r.year = pick(&["PY"]).and_then(|v| year_in(&v));
            r.doi = pick(&["DI"]).and_then(|d| quarry_udfs::normalize_doi::normalize_doi(&d));
            r.ty = take(Field::Type, &["PT"]);
            if want(Field::Authors) {
                r.authors = raw.every(&["AU"]);
            }
            r.venue = take(Field::Venue, &["SO"]);
            r.volume = take(Field::Volume, &["VL"]);
            r.issue = take(Field::Issue, &["IS"]);
            r.pages = pages(take(Field::Pages, &["BP"]), take(Field::Pages, &["EP"]));
            r.pmid = take(Field::Pmid, &["PM"]);
            r.abstract_text = take(Field::Abstract, &["AB"]);
            if want(Field::Keywords) {
                r.keywords = split_semi(vec![
                    pick(&["DE"]).unwrap_or_default(),
                    pick(&["ID"]).unwrap_or_default(),
                ]);
            }
        }
        Format::Medline => {
            r.title = pick(&["TI", "BTI"]);
            r.year = pick(&["DP", "DEP", "DA"]).and_then(|v| year_in(&v));
            r.doi = raw
                .every(&["LID", "AID"])
                .iter()
                .filter(|v| v.contains("[doi]"))
                .find_map(|v| {
                    quarry_udfs::normalize_doi::normalize_doi(v.trim_end_matches("[doi]"))
                });
            r.pmid = take(Field::Pmid, &["PMID"]);
            if want(Field::Authors) {
                r.authors = {
                    let full = raw.every(&["FAU"]);
                    if full.is_empty() {
                        raw.every(&["AU"])
                    } else {
                        full
                    }
                };
            }
            r.venue = take(Field::Venue, &["JT", "TA"]);
            r.volume = take(Field::Volume, &["VI"]);
            r.issue = take(Field::Issue, &["IP"]);
            r.pages = take(Field::Pages, &["PG"]);
            r.abstract_text = take(Field::Abstract, &["AB"]);
            if want(Field::Keywords) {
                r.keywords = raw.every(&["OT", "MH"]);
            }
            r.ty = take(Field::Type, &["PT"]);
        }
        Format::Bibtex => {
            let clean =
                |v: Option<String>| v.map(|s| bibtex::delatex(&s)).filter(|s| !s.is_empty());
            r.ty = pick(&["@type"]);
            r.title = clean(pick(&["title"]));
            r.authors = pick(&["author"])
                .map(|a| {
                    bibtex::delatex(&a)
                        .split(" and ")
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            r.year = pick(&["year", "date"]).and_then(|v| year_in(&v));
            r.venue = clean(pick(&["journal", "journaltitle", "booktitle"]));
            r.volume = clean(pick(&["volume"]));
            r.issue = clean(pick(&["number", "issue"]));
            r.pages = clean(pick(&["pages"])).map(|p| p.replace("--", "-"));
            r.doi = pick(&["doi"]).and_then(|d| quarry_udfs::normalize_doi::normalize_doi(&d));
            r.pmid = pick(&["pmid"]).or_else(|| {
                let is_pubmed =
                    pick(&["eprinttype"]).is_some_and(|t| t.eq_ignore_ascii_case("pubmed"));
                is_pubmed.then(|| pick(&["eprint"])).flatten()
            });
            r.abstract_text = clean(pick(&["abstract"]));
            r.keywords = pick(&["keywords"])
                .map(|k| {
                    bibtex::delatex(&k)
                        .split([',', ';'])
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            r.url = clean(pick(&["url"]));
            r.file_path = pick(&["file"]).and_then(|f| bibtex_file(&f));
        }
        Format::Csv => {
            // Each column's key made once (a row is looked up by some fifty
            // names; a header can be long).
            let keys: Vec<String> = raw.tags.iter().map(|t| header_key(&t.tag)).collect();
            let col = |names: &[&str]| -> Option<String> {
                names.iter().find_map(|n| {
                    keys.iter()
                        .position(|k| k == n)
                        .map(|i| raw.tags[i].joined().into_owned())
                })
            };
            let mut known: Vec<&str> = Vec::new();
            let mut take = |names: &'static [&'static str]| {
                known.extend_from_slice(names);
                col(names)
            };
            r.ty = take(&["documenttype", "publicationtype", "type", "pt", "dt"]);
            r.title = take(&[
                "title",
                "articletitle",
                "documenttitle",
                "ti",
                "primarytitle",
            ]);
            r.authors = take(&["authors", "author", "au", "authorfullnames", "af"])
                .map(|a| split_authors(&a))
                .unwrap_or_default();
            r.year = take(&["year", "publicationyear", "py", "pubyear", "date"])
                .and_then(|y| year_in(&y));
            r.venue = take(&[
                "sourcetitle",
                "journal",
                "venue",
                "so",
                "publicationname",
                "journaltitle",
                "journalbook",
            ]);
            r.volume = take(&["volume", "vl"]);
            r.issue = take(&["issue", "is", "number"]);
            let sp = take(&["pagestart", "startpage", "bp"]);
            let ep = take(&["pageend", "endpage", "ep"]);
            r.pages = take(&["pages"]).or_else(|| pages(sp, ep));
            r.doi =
                take(&["doi", "di"]).and_then(|d| quarry_udfs::normalize_doi::normalize_doi(&d));
            r.pmid = take(&["pubmedid", "pmid", "pm", "pubmed"]);
            r.abstract_text = take(&["abstract", "ab"]);
            r.keywords = split_semi(
                [
                    take(&["authorkeywords", "keywords", "de"]),
                    take(&["indexkeywords", "keywordsplus", "id"]),
                ]
                .into_iter()
                .flatten()
                .collect(),
            );
            r.url = take(&["link", "url"]);
            r.file_path = take(&["file", "filepath", "pdf", "path", "fileattachments"]);
            if let Some(db) = take(&["source", "database", "db"]) {
                r.database = Some(db.into());
            }
            r.extra = raw
                .tags
                .iter()
                .zip(&keys)
                .filter(|(_, k)| !known.contains(&k.as_str()))
                .map(|(t, _)| (t.tag.to_string(), owned(&t.lines)))
                .collect();
            return r;
        }
    }
    if !want(Field::Extra) {
        return r;
    }
    // Every tag no column took, in order of first appearance.
    let mut extra: Vec<(String, Vec<String>)> = Vec::new();
    let used = used_tags(format);
    for t in raw.tags {
        if used.has(t) {
            continue;
        }
        match extra.iter_mut().find(|(k, _)| k.as_str() == t.tag) {
            Some((_, v)) => v.extend(owned(&t.lines)),
            None => extra.push((t.tag.to_string(), owned(&t.lines))),
        }
    }
    r.extra = extra;
    r
}

/// The tags a format's columns take (the rest go to `extra`), as numbers
/// and, for tags longer than 8 characters, as text.
struct UsedTags {
    codes: Vec<u64>,
    long: Vec<&'static str>,
}

impl UsedTags {
    fn new(tags: &[&'static str]) -> Self {
        Self {
            codes: tags
                .iter()
                .map(|t| tag_code(t))
                .filter(|&c| c != 0)
                .collect(),
            long: tags.iter().copied().filter(|t| tag_code(t) == 0).collect(),
        }
    }

    fn has(&self, t: &TagValue) -> bool {
        if t.code != 0 {
            self.codes.contains(&t.code)
        } else {
            self.long.iter().any(|u| t.tag.eq_ignore_ascii_case(u))
        }
    }
}

fn used_tags(format: Format) -> &'static UsedTags {
    static USED: std::sync::LazyLock<[UsedTags; 4]> = std::sync::LazyLock::new(|| {
        [
            UsedTags::new(&[
                "TY", "TI", "T1", "AU", "A1", "PY", "Y1", "DA", "JF", "JO", "T2", "JA", "J2", "VL",
                "IS", "SP", "EP", "DO", "AB", "N2", "KW", "UR", "L1", "DB", "ER",
            ]),
            UsedTags::new(&[
                "PT", "TI", "AU", "PY", "SO", "VL", "IS", "BP", "EP", "DI", "PM", "AB", "DE", "ID",
            ]),
            UsedTags::new(&[
                "PMID", "TI", "FAU", "AU", "DP", "JT", "TA", "VI", "IP", "PG", "LID", "AID", "AB",
                "OT", "MH", "PT",
            ]),
            UsedTags::new(&[
                "@type",
                "@key",
                "title",
                "author",
                "year",
                "date",
                "journal",
                "journaltitle",
                "booktitle",
                "volume",
                "number",
                "issue",
                "pages",
                "doi",
                "pmid",
                "abstract",
                "keywords",
                "url",
                "file",
            ]),
        ]
    });
    match format {
        Format::Ris => &USED[0],
        Format::Wos => &USED[1],
        Format::Medline => &USED[2],
        // CSV keeps its own list of the columns it took.
        Format::Bibtex | Format::Csv => &USED[3],
    }
}

fn owned(lines: &[Cow<'_, str>]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

/// Whether `hay` contains `needle` (lower-case ASCII), case aside.
fn contains_folded(hay: &str, needle: &str) -> bool {
    hay.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// A CSV header compared on its letters and digits, lower-case
/// (`"Page start"` and `page_start` are `pagestart`).
fn header_key(h: &str) -> String {
    h.chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Authors in one CSV cell: `Smith J.; Okafor A.`, `Smith, J.; Okafor, A.`,
/// `Smith J., Okafor A.` (older Scopus), `J Smith and A Okafor`.
fn split_authors(s: &str) -> Vec<String> {
    let parts: Vec<String> = if s.contains(';') {
        s.split(';').map(str::to_string).collect()
    } else if s.contains(" and ") {
        s.split(" and ").map(str::to_string).collect()
    } else if s.matches(',').count() >= 1 && s.split(',').all(|p| p.split_whitespace().count() >= 2)
    {
        // "Smith J., Okafor A.": each comma-separated part is a whole name.
        s.split(',').map(str::to_string).collect()
    } else {
        vec![s.to_string()]
    };
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// A PubMed id in the tags an export may put it in (`PMID: 123`, or
/// the accession number of a MEDLINE record).
fn pmid_in(raw: &Index, tags: &[&str]) -> Option<String> {
    let re = regex_pmid();
    raw.every(tags)
        .iter()
        .find_map(|v| re.captures(v).map(|c| c[1].to_string()))
}

fn regex_pmid() -> &'static regex::Regex {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)\bPMID:?\s*(\d{1,9})\b").expect("regex")
    });
    &RE
}

/// Whether a link is a local file rather than a web page.
fn looks_like_file(p: &str) -> bool {
    let l = p.to_ascii_lowercase();
    l.starts_with("file:")
        || l.starts_with("internal-pdf:")
        || (!l.starts_with("http") && l.contains('.'))
}

/// The path in a BibTeX `file` field: Zotero's `Full Text:files/12/a.pdf:application/pdf`,
/// JabRef's `:path/a.pdf:PDF`, or a bare path; the first of several (`;`).
fn bibtex_file(f: &str) -> Option<String> {
    let first = f.split(';').next()?.trim();
    let parts: Vec<&str> = first.split(':').collect();
    let path = if parts.len() >= 3 {
        // description:path:type (a Windows drive letter adds a part).
        parts[1..parts.len() - 1].join(":")
    } else {
        first.to_string()
    };
    let path = path.replace("\\:", ":").trim().to_string();
    (!path.is_empty()).then_some(path)
}

/// A record's id: 16 hex digits of the XXH3 64-bit hash (an algorithm
/// frozen since xxHash 0.8, the same on every machine) of the export's
/// file name and the record's canonical text (each tag, `\u{1f}`, its
/// lines joined by `\n`, `\u{1e}`), written into one buffer a thread and
/// hashed at once. 64 bits: two records of a million share an id about
/// once in 40 million reviews. Records whose tags are all the same are told
/// apart by [`repeated_id`].
fn record_digest(file_name: &str, raw: &Raw) -> u64 {
    thread_local! {
        /// The canonical text, written into one buffer a thread and hashed
        /// at once (faster than feeding the hash a tag at a time).
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUF.with_borrow_mut(|b| {
        b.clear();
        b.extend_from_slice(file_name.as_bytes());
        b.push(0x1f);
        for t in &raw.tags {
            b.extend_from_slice(t.tag.as_bytes());
            b.extend_from_slice("\u{1f}".as_bytes());
            for (i, l) in t.lines.iter().enumerate() {
                if i > 0 {
                    b.push(b'\n');
                }
                b.extend_from_slice(l.as_bytes());
            }
            b.extend_from_slice("\u{1e}".as_bytes());
        }
        b.push(0x1f);
        xxhash_rust::xxh3::xxh3_64(b)
    })
}

/// The id of the `ordinal`-th (from 2) of an export's records whose tags
/// are all the same as the first's, whose id is `first`: the XXH3 64-bit
/// hash of the two numbers (little-endian), so it needs only the first's id.
fn repeated_id(first: u64, ordinal: u32) -> u64 {
    let mut b = [0u8; 12];
    b[..8].copy_from_slice(&first.to_le_bytes());
    b[8..].copy_from_slice(&ordinal.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&b)
}

/// A 64-bit digest as 16 hex digits.
fn short_hex(d: u64) -> String {
    format!("{d:016x}")
}

/// Reads one export into its records, plus one `failed` row per problem
/// (naming the line). `export` is the export as listed, `file_name` its
/// name and `ext` its extension.
pub fn read_export(export: &str, file_name: &str, ext: &str, bytes: &[u8]) -> Vec<Record> {
    let mut out = Vec::new();
    read_export_parts(export, file_name, ext, bytes, Fields::ALL, &mut |part| {
        out.extend(part);
        true
    });
    out
}

/// A parser of a tagged format's text.
type Parser = for<'a> fn(&'a str) -> (Vec<Raw<'a>>, Vec<RawError>);

/// [`read_export`] part by part, so that no more than a few parts' records
/// are held at once: a large RIS or MEDLINE export is cut where a record
/// starts into parts of about [`PART_BYTES`], parsed as many at once as
/// there are threads, and `emit` gets each part's records and failed rows
/// in line order, the parts in order (it returns `false` to stop reading).
/// Records have the title, DOI and year, and of their other fields those in
/// `fields`.
pub fn read_export_parts(
    export: &str,
    file_name: &str,
    ext: &str,
    bytes: &[u8],
    fields: Fields,
    emit: &mut dyn FnMut(Vec<Record>) -> bool,
) {
    let export: Arc<str> = export.into();
    let failed = |line: usize, message: String| Record {
        record_id: digest(&[file_name, "failed", &line.to_string(), &message]),
        export: Some(export.clone()),
        line,
        database: Some(file_name.into()),
        status: Some(Status::Failed),
        note: Some(message),
        ..Default::default()
    };
    let text = match decode(bytes) {
        Ok(t) => t,
        Err(e) => {
            emit(vec![failed(0, e)]);
            return;
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let Some(format) = detect(ext, text) else {
        emit(vec![failed(
            0,
            format!(
                "not a reference export: no RIS ('TY  - '), MEDLINE ('PMID- '), Web of Science ('PT '), BibTeX ('@article{{') or CSV header was found in this .{ext} file; export the records as RIS, MEDLINE (.nbib), BibTeX (.bib) or CSV"
            ),
        )]);
        return;
    };
    let (parser, start): (Parser, &str) = match format {
        Format::Ris => (ris::parse, "TY  -"),
        Format::Medline => (medline::parse, "PMID-"),
        Format::Bibtex => (bibtex::parse, ""),
        Format::Csv => (csv_export::parse, ""),
        Format::Wos => (ris::parse_wos, ""),
    };
    let database = match format {
        Format::Wos => ris::wos_file_name(text).map(|f| {
            if f.to_ascii_lowercase().contains("web of science") {
                "Web of Science".to_string()
            } else {
                f
            }
        }),
        _ => None,
    }
    .map_or_else(|| file_name.into(), Arc::<str>::from);
    let parts = if start.is_empty() {
        vec![(0, text)]
    } else {
        cut_parts(text, start)
    };
    // Whose tags are all the same get the same digest; the second and
    // later ones are told apart by their place among those.
    let mut seen: FxMap<u64, u32> = FxMap::default();
    seen.reserve(text.len() / 512);
    let mut rows = 0;
    for window in parts.chunks(2 * rayon::current_num_threads().max(1)) {
        // Each part's records made (and its parsed tags freed) in parallel.
        let made: Vec<(Vec<Record>, Vec<RawError>)> = window
            .par_iter()
            .map(|&(off, p)| {
                let (raws, errors) = parse_part(p, off, parser);
                let recs = raws
                    .par_iter()
                    .map(|raw| {
                        let mut r = to_record(raw, format, &database, fields);
                        if fields.has(Field::Export) {
                            r.export = Some(export.clone());
                        }
                        r.id = record_digest(file_name, raw);
                        r.marks = dedup::Key {
                            doi: r.doi.as_deref(),
                            title: r.title.as_deref(),
                            year: r.year,
                        }
                        .marks();
                        if !fields.has(Field::Title) {
                            r.title = None;
                        }
                        if !fields.has(Field::Doi) {
                            r.doi = None;
                        }
                        r
                    })
                    .collect();
                (recs, errors)
            })
            .collect();
        for (mut out, errors) in made {
            for r in out.iter_mut() {
                let k = seen.entry(r.id).or_default();
                *k += 1;
                if *k > 1 {
                    r.id = repeated_id(r.id, *k);
                }
                if fields.has(Field::RecordId) {
                    r.record_id = short_hex(r.id);
                }
            }
            if !errors.is_empty() {
                out.extend(errors.into_iter().map(|e| failed(e.line, e.message)));
                out.sort_by_key(|r| r.line);
            }
            rows += out.len();
            if !out.is_empty() && !emit(out) {
                return;
            }
        }
    }
    if rows == 0 {
        emit(vec![failed(
            0,
            format!("the {} export holds no records", format.as_str()),
        )]);
    }
}

/// Texts larger than this are parsed in parts, in parallel.
const PART_BYTES: usize = 512 << 10;

/// A tagged export's text cut into parts of about [`PART_BYTES`] where a
/// line starts a record (`start`), each with the number of lines before it.
fn cut_parts<'a>(text: &'a str, start: &str) -> Vec<(usize, &'a str)> {
    let mut cuts = vec![0usize];
    let mut at = PART_BYTES;
    let marker = format!("\n{start}");
    while at < text.len() {
        let from = text[..at].rfind('\n').map_or(0, |i| i + 1);
        match text[from..].find(&marker) {
            Some(i) => {
                let cut = from + i + 1;
                if cut > *cuts.last().expect("cuts") {
                    cuts.push(cut);
                }
                at = cut + PART_BYTES;
            }
            None => break,
        }
    }
    cuts.push(text.len());
    let mut line = 0;
    cuts.windows(2)
        .map(|w| {
            let p = &text[w[0]..w[1]];
            let off = line;
            line += memchr::memchr_iter(b'\n', p.as_bytes()).count();
            (off, p)
        })
        .collect()
}

/// One part parsed, its line numbers made the file's (`off` lines before it).
fn parse_part<'a>(p: &'a str, off: usize, parse: Parser) -> (Vec<Raw<'a>>, Vec<RawError>) {
    let (mut r, mut e) = parse(p);
    if off > 0 {
        for x in &mut r {
            x.line += off;
        }
        for x in &mut e {
            x.line += off;
            x.message = renumber(&x.message, off);
        }
    }
    (r, e)
}

/// A parser's message with its `line N` numbers moved by `off` lines.
fn renumber(message: &str, off: usize) -> String {
    if off == 0 {
        return message.to_string();
    }
    let re = regex_line();
    re.replace_all(message, |c: &regex::Captures| {
        let n: usize = c[1].parse().unwrap_or(0);
        format!("line {}", n + off)
    })
    .into_owned()
}

fn regex_line() -> &'static regex::Regex {
    static RE: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\bline (\d+)").expect("regex"));
    &RE
}

/// 16 hex digits of the SHA-256 of the parts.
fn digest(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0x1f]);
    }
    let d = h.finalize();
    short_hex(u64::from_be_bytes(d[..8].try_into().expect("8 bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded xorshift64 generator: the same numbers on every run, for
    /// tests that try many generated inputs.
    pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Folding as it was written first: NFKD of the whole text, marks
    /// dropped, letters and digits lower-cased, words joined by one space.
    fn fold_reference(s: &str) -> String {
        use unicode_normalization::UnicodeNormalization;
        let mut out = String::new();
        let mut gap = false;
        for c in s.nfkd() {
            if unicode_normalization::char::is_combining_mark(c) {
                continue;
            }
            if c.is_alphanumeric() {
                if gap && !out.is_empty() {
                    out.push(' ');
                }
                gap = false;
                out.extend(c.to_lowercase());
            } else {
                gap = true;
            }
        }
        out
    }

    #[test]
    fn folding_byte_by_byte_matches_the_reference() {
        // Every ASCII byte, in runs of letters, digits and the rest, and
        // texts that are not ASCII (accents, ligatures, full-width digits).
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut texts: Vec<String> = (0..2000)
            .map(|_| {
                let n = (next() % 60) as usize;
                (0..n).map(|_| (next() % 128) as u8 as char).collect()
            })
            .collect();
        texts.extend(
            [
                "",
                "   ",
                "A",
                " a b ",
                "Études über Lernen",
                "ﬁnal ｆｕｌｌ ２０１９",
                "Müller’s “load”—retention",
                "e\u{301}cole",
            ]
            .map(String::from),
        );
        let mut buf = String::new();
        let mut bytes = Vec::new();
        for t in &texts {
            let want = fold_reference(t);
            let words = fold_words_into(t, &mut buf);
            assert_eq!(buf, want, "{t:?}");
            assert_eq!(words, want.split(' ').filter(|w| !w.is_empty()).count());
            assert_eq!(fold_words_bytes(t, &mut bytes), words);
            assert_eq!(bytes, want.as_bytes(), "{t:?}");
        }
    }

    #[test]
    fn records_read_with_few_fields_settle_the_same() {
        // The same export read for every field and for none: the same ids,
        // years and dedup marks (so the same duplicates), the other fields empty.
        let text = "TY  - JOUR\r\nTI  - A trial of spaced retrieval practice\r\nAU  - Smith, J.\r\nPY  - 2019\r\nDO  - https://doi.org/10.1234/A\r\nAB  - Two lines\r\n  of abstract\r\nDB  - PubMed\r\nER  - \r\n\r\nTY  - JOUR\r\nTI  - A trial of spaced retrieval practice\r\nPY  - 2019\r\nER  - \r\nTY  - JOUR\r\nTI  - A trial of spaced retrieval practice\r\nPY  - 2019\r\nER  - \r\n";
        let all = read_export("x/a.ris", "a.ris", "ris", text.as_bytes());
        let mut none = Vec::new();
        read_export_parts(
            "x/a.ris",
            "a.ris",
            "ris",
            text.as_bytes(),
            Fields::NONE,
            &mut |p| {
                none.extend(p);
                true
            },
        );
        assert_eq!(all.len(), 3);
        assert_eq!(none.len(), 3);
        for (a, n) in all.iter().zip(&none) {
            assert_eq!((a.id, a.year, a.marks), (n.id, n.year, n.marks));
            assert_eq!(a.record_id, short_hex(a.id));
            assert!(n.record_id.is_empty() && n.title.is_none() && n.doi.is_none());
            assert!(n.authors.is_empty() && n.abstract_text.is_none() && n.export.is_none());
        }
        assert_eq!(all[0].doi.as_deref(), Some("10.1234/a"));
        assert_eq!(
            all[0].abstract_text.as_deref(),
            Some("Two lines of abstract")
        );
        assert_eq!(all[0].database.as_deref(), Some("PubMed"));
        assert_eq!(all[1].database.as_deref(), Some("a.ris"));
        // The second and third records have the same tags: their ids differ.
        assert_ne!(all[1].id, all[2].id);
        assert_eq!(all[2].id, repeated_id(all[1].id, 2));
        // Only the columns named are asked for.
        let f = Fields::of_columns(["title", "duplicate_of", "status"]);
        assert!(f.has(Field::Title) && !f.has(Field::Doi) && !f.has(Field::Abstract));
    }

    #[test]
    fn years_titles_and_surnames() {
        assert_eq!(year_in("2019 Mar"), Some(2019));
        assert_eq!(year_in("1948/07//"), Some(1948));
        assert_eq!(year_in("12019"), None);
        assert_eq!(year_in("n.d."), None);
        assert_eq!(
            fold_words("Cognitive Load and Retention."),
            "cognitive load and retention"
        );
        assert_eq!(
            fold_words("Müller’s “load”—retention"),
            "muller s load retention"
        );
        assert_eq!(surname("Smith, J.").as_deref(), Some("smith"));
        assert_eq!(surname("Smith J").as_deref(), Some("smith"));
        assert_eq!(surname("Smith JA").as_deref(), Some("smith"));
        assert_eq!(surname("John Smith").as_deref(), Some("smith"));
        assert_eq!(surname("van der Berg, A.").as_deref(), Some("vanderberg"));
        assert_eq!(surname("Parkes-Loach, PS").as_deref(), Some("parkesloach"));
    }

    #[test]
    fn tag_numbers_fold_case() {
        assert_eq!(tag_code("TY"), tag_code("ty"));
        assert_eq!(tag_code("Ab"), tag_code("AB"));
        assert_eq!(tag_code("PMID"), u64::from_le_bytes(*b"PMID\0\0\0\0"));
        assert_eq!(tag_code("a1z@[`{"), u64::from_le_bytes(*b"A1Z@[`{\0"));
        assert_ne!(tag_code("T1"), tag_code("TI"));
        assert_ne!(tag_code("AU"), tag_code("AU "));
        assert_eq!(tag_code("journaltitle"), 0);
        assert_eq!(tag_code("é"), 0);
    }

    #[test]
    fn folded_words_are_counted() {
        let mut buf = String::new();
        assert_eq!(fold_words_into("  A trial -- of (spacing) ", &mut buf), 4);
        assert_eq!(buf, "a trial of spacing");
        assert_eq!(fold_words_into("Études über Lernen", &mut buf), 3);
        assert_eq!(buf, "etudes uber lernen");
        assert_eq!(fold_words_into("--", &mut buf), 0);
        assert_eq!(fold_words_into("é", &mut buf), 1);
    }

    #[test]
    fn csv_authors() {
        assert_eq!(
            split_authors("Smith J.; Okafor A."),
            vec!["Smith J.", "Okafor A."]
        );
        assert_eq!(
            split_authors("Smith J., Okafor A."),
            vec!["Smith J.", "Okafor A."]
        );
        assert_eq!(split_authors("Smith, J."), vec!["Smith, J."]);
        assert_eq!(
            split_authors("N Ricard; P Kind"),
            vec!["N Ricard", "P Kind"]
        );
    }

    #[test]
    fn not_an_export_is_one_failed_row() {
        let rows = read_export(
            "x/notes.md",
            "notes.md",
            "md",
            b"# My notes\nnothing here\n",
        );
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].status, Some(Status::Failed));
        assert!(rows[0]
            .note
            .as_deref()
            .unwrap()
            .contains("not a reference export"));
        let rows = read_export("x/a.ris", "a.ris", "ris", b"");
        assert!(rows[0].note.as_deref().unwrap().contains("empty"));
        let rows = read_export("x/a.ris", "a.ris", "ris", b"TY  - JOUR\x00\x01\x02");
        assert!(rows[0].note.as_deref().unwrap().contains("not a text file"));
    }

    #[test]
    fn ids_are_stable_and_distinct() {
        let text = b"TY  - JOUR\nTI  - Same\nER  - \nTY  - JOUR\nTI  - Same\nER  - \n";
        let a = read_export("/m1/a.ris", "a.ris", "ris", text);
        let b = read_export("/other/machine/a.ris", "a.ris", "ris", text);
        assert_eq!(a.len(), 2);
        assert_ne!(a[0].record_id, a[1].record_id);
        assert_eq!(a[0].record_id, b[0].record_id);
        assert_eq!(a[1].record_id, b[1].record_id);
    }

    #[test]
    fn a_large_export_reads_the_same_in_parts() {
        let mut text = String::new();
        for i in 0..40_000 {
            text.push_str(&format!(
                "TY  - JOUR\nTI  - Record number {i} of many\nPY  - 2001\nER  - \n\n"
            ));
        }
        text.push_str("TY  - JOUR\nTI  - Cut off\n");
        assert!(text.len() > 2 * PART_BYTES / 2);
        let whole = ris::parse(&text);
        let cut = cut_parts(&text, "TY  -");
        assert!(cut.len() > 1);
        let mut parts = (Vec::new(), Vec::new());
        for (off, p) in cut {
            let (r, e) = parse_part(p, off, ris::parse);
            parts.0.extend(r);
            parts.1.extend(e);
        }
        assert_eq!(parts.0, whole.0);
        assert_eq!(parts.1, whole.1);
        // And the records read part by part are those of the whole text.
        let rows = read_export("x/a.ris", "a.ris", "ris", text.as_bytes());
        assert_eq!(rows.len(), 40_002);
        assert_eq!(rows[40_000].title.as_deref(), Some("Cut off"));
        assert_eq!(rows[40_001].status, Some(Status::Failed));
        assert_eq!(whole.1.len(), 1);
        assert!(
            whole.1[0].message.starts_with("line 200001:"),
            "{}",
            whole.1[0].message
        );
    }

    #[test]
    fn a_web_of_science_tab_export_named_txt() {
        let text = "PT\tAU\tTI\tSO\tPY\tDI\tUT\nJ\tSmith, J; Okafor, A\tCognitive load\tJ EDUC PSYCHOL\t2019\t10.1037/EDU0000123\tWOS:000123\n";
        let rows = read_export("x/savedrecs.txt", "savedrecs.txt", "txt", text.as_bytes());
        assert_eq!(rows.len(), 1, "{rows:?}");
        let r = &rows[0];
        assert_eq!(r.format, Some(Format::Csv));
        assert_eq!(r.title.as_deref(), Some("Cognitive load"));
        assert_eq!(r.authors, vec!["Smith, J", "Okafor, A"]);
        assert_eq!(r.year, Some(2019));
        assert_eq!(r.doi.as_deref(), Some("10.1037/edu0000123"));
        assert_eq!(r.venue.as_deref(), Some("J EDUC PSYCHOL"));
        assert_eq!(
            r.extra,
            vec![("UT".to_string(), vec!["WOS:000123".to_string()])]
        );
    }

    #[test]
    fn a_pubmed_csv_export() {
        let text = "PMID,Title,Authors,Citation,First Author,Journal/Book,Publication Year,Create Date,PMCID,NIHMS ID,DOI\n\
                    31000001,Spacing and retention.,\"Okafor A, Smith J\",Learning. 2021;4:1-9.,Okafor A,Learning,2021,2021/01/02,,,10.1000/abc.1\n";
        let rows = read_export("x/pubmed.csv", "pubmed.csv", "csv", text.as_bytes());
        assert_eq!(rows.len(), 1, "{rows:?}");
        let r = &rows[0];
        assert_eq!(
            (r.pmid.as_deref(), r.year, r.venue.as_deref()),
            (Some("31000001"), Some(2021), Some("Learning"))
        );
        assert_eq!(r.authors, vec!["Okafor A", "Smith J"]);
        assert_eq!(r.doi.as_deref(), Some("10.1000/abc.1"));
    }

    #[test]
    fn bibtex_file_fields() {
        assert_eq!(
            bibtex_file("Full Text:files/12/smith.pdf:application/pdf").as_deref(),
            Some("files/12/smith.pdf")
        );
        assert_eq!(
            bibtex_file(":C\\:/papers/a.pdf:PDF").as_deref(),
            Some("C:/papers/a.pdf")
        );
        assert_eq!(bibtex_file("papers/a.pdf").as_deref(), Some("papers/a.pdf"));
    }
}
