//! Cleaners: fifteen named steps, each switchable, five on by default.
//! Every document records how many characters each step removed or
//! replaced. `remove_numbers` exists and is off: it would make every figure,
//! date and percentage unanswerable.

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use regex::Regex;
use unicode_normalization::UnicodeNormalization;

use super::RawBlock;

/// One cleaning step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cleaner {
    /// Unicode NFC normalisation (composed accents).
    UnicodeNfc,
    /// Typographic ligatures (ﬁ, ﬂ, ﬀ, ...) expanded to letters.
    Ligatures,
    /// Control and zero-width characters, soft hyphens, BOMs removed.
    ControlChars,
    /// Words hyphenated across a line break joined ("treat-\nment").
    Dehyphenate,
    /// Runs of spaces and tabs collapsed, line ends trimmed, blank runs cut.
    Whitespace,
    /// Single line breaks inside a paragraph joined into spaces (hard-wrapped text).
    JoinLines,
    /// Lines that are only a page number ("12", "Page 3 of 9", "- 4 -") dropped.
    PageNumbers,
    /// Lines repeated at the top or bottom of most pages dropped.
    HeadersFooters,
    /// Curly quotes and primes made straight.
    Quotes,
    /// En and em dashes, minus signs and hyphen variants made "-".
    Dashes,
    /// Unicode NFKC (superscripts, full-width forms, ...).
    Nfkc,
    /// URLs removed.
    RemoveUrls,
    /// E-mail addresses removed.
    RemoveEmails,
    /// Numeric citation brackets ("[1]", "[2, 5–7]") removed.
    RemoveCitations,
    /// Every digit removed. Off by default, and rarely what you want.
    RemoveNumbers,
}

/// Every cleaner, in the order they run.
pub const ALL: [Cleaner; 15] = [
    Cleaner::UnicodeNfc,
    Cleaner::Nfkc,
    Cleaner::Ligatures,
    Cleaner::ControlChars,
    Cleaner::Quotes,
    Cleaner::Dashes,
    Cleaner::PageNumbers,
    Cleaner::HeadersFooters,
    Cleaner::Dehyphenate,
    Cleaner::JoinLines,
    Cleaner::RemoveUrls,
    Cleaner::RemoveEmails,
    Cleaner::RemoveCitations,
    Cleaner::RemoveNumbers,
    Cleaner::Whitespace,
];

/// The cleaners on by default.
pub const DEFAULT: [Cleaner; 5] = [
    Cleaner::UnicodeNfc,
    Cleaner::Ligatures,
    Cleaner::ControlChars,
    Cleaner::Dehyphenate,
    Cleaner::Whitespace,
];

impl Cleaner {
    /// The cleaner's name, as options and the `chars_removed` column use it.
    pub fn name(self) -> &'static str {
        match self {
            Self::UnicodeNfc => "unicode_nfc",
            Self::Ligatures => "ligatures",
            Self::ControlChars => "control_chars",
            Self::Dehyphenate => "dehyphenate",
            Self::Whitespace => "whitespace",
            Self::JoinLines => "join_lines",
            Self::PageNumbers => "page_numbers",
            Self::HeadersFooters => "headers_footers",
            Self::Quotes => "quotes",
            Self::Dashes => "dashes",
            Self::Nfkc => "nfkc",
            Self::RemoveUrls => "remove_urls",
            Self::RemoveEmails => "remove_emails",
            Self::RemoveCitations => "remove_citations",
            Self::RemoveNumbers => "remove_numbers",
        }
    }

    /// Looks a cleaner up by name.
    pub fn parse(name: &str) -> Option<Self> {
        ALL.into_iter().find(|c| c.name() == name.trim())
    }

    /// Cleans one text; returns it with the number of characters removed or replaced.
    fn clean(self, text: &str) -> (String, u64) {
        match self {
            Self::UnicodeNfc => changed(text, text.nfc().collect()),
            Self::Nfkc => changed(text, text.nfkc().collect()),
            Self::Ligatures => {
                let mut n = 0;
                let mut out = String::with_capacity(text.len());
                for c in text.chars() {
                    match ligature(c) {
                        Some(s) => {
                            n += 1;
                            out.push_str(s);
                        }
                        None => out.push(c),
                    }
                }
                (out, n)
            }
            Self::ControlChars => filter(text, |c| {
                let control = c.is_control() && c != '\n' && c != '\t';
                !control
                    && !matches!(
                        c,
                        '\u{200B}'
                            | '\u{200C}'
                            | '\u{200D}'
                            | '\u{2060}'
                            | '\u{FEFF}'
                            | '\u{00AD}'
                            | '\u{FFFD}'
                    )
            }),
            Self::Quotes => map_chars(text, |c| match c {
                '“' | '”' | '„' | '‟' | '″' | '«' | '»' => Some('"'),
                '‘' | '’' | '‚' | '‛' | '′' => Some('\''),
                _ => None,
            }),
            Self::Dashes => map_chars(text, |c| match c {
                '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
                | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => Some('-'),
                _ => None,
            }),
            Self::Dehyphenate => replace_count(&DEHYPHEN, text, "$a$b"),
            Self::JoinLines => replace_count(&SINGLE_BREAK, text, "$a $b"),
            Self::PageNumbers => {
                let mut n = 0u64;
                let kept: Vec<&str> = text
                    .split('\n')
                    .filter(|l| {
                        let drop = PAGE_NUMBER.is_match(l.trim());
                        if drop {
                            n += l.chars().count() as u64 + 1;
                        }
                        !drop
                    })
                    .collect();
                (kept.join("\n"), n)
            }
            Self::HeadersFooters => (text.to_string(), 0), // works across pages: see `apply`
            Self::RemoveUrls => replace_count(&URL, text, ""),
            Self::RemoveEmails => replace_count(&EMAIL, text, ""),
            Self::RemoveCitations => replace_count(&CITATION, text, ""),
            Self::RemoveNumbers => filter(text, |c| !c.is_ascii_digit()),
            Self::Whitespace => {
                let mut out = String::with_capacity(text.len());
                let mut blank_run = 0;
                for line in text.split('\n') {
                    let collapsed = line
                        .split([' ', '\t', '\u{00A0}', '\u{2009}', '\u{202F}', '\u{3000}'])
                        .filter(|w| !w.is_empty())
                        .collect::<Vec<_>>()
                        .join(" ");
                    if collapsed.is_empty() {
                        blank_run += 1;
                        if blank_run > 1 {
                            continue;
                        }
                    } else {
                        blank_run = 0;
                    }
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(&collapsed);
                }
                let out = out.trim().to_string();
                let removed =
                    (text.chars().count() as u64).saturating_sub(out.chars().count() as u64);
                (out, removed)
            }
        }
    }
}

fn ligature(c: char) -> Option<&'static str> {
    Some(match c {
        'ﬀ' => "ff",
        'ﬁ' => "fi",
        'ﬂ' => "fl",
        'ﬃ' => "ffi",
        'ﬄ' => "ffl",
        'ﬅ' | 'ﬆ' => "st",
        'Ĳ' => "IJ",
        'ĳ' => "ij",
        'Œ' => "OE",
        'œ' => "oe",
        'Ꜳ' => "AA",
        'ꜳ' => "aa",
        _ => return None,
    })
}

static DEHYPHEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?P<a>\p{L})[-\u{2010}\u{00AD}][ \t]*\n[ \t]*(?P<b>\p{Ll})")
        .unwrap_or_else(|_| unreachable!())
});
static SINGLE_BREAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?P<a>[^\n])[ \t]*\n[ \t]*(?P<b>[^\n\s•\-*])").unwrap_or_else(|_| unreachable!())
});
static PAGE_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:page\s+)?[-–—]?\s*\d{1,4}\s*[-–—]?(?:\s*(?:of|/)\s*\d{1,4})?$")
        .unwrap_or_else(|_| unreachable!())
});
static URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:https?://|www\.)[^\s<>()\[\]]+[^\s<>()\[\].,;:!?]")
        .unwrap_or_else(|_| unreachable!())
});
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b").unwrap_or_else(|_| unreachable!())
});
static CITATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\s?\[\d{1,4}(?:\s*[-–,]\s*\d{1,4})*\]").unwrap_or_else(|_| unreachable!())
});

fn changed(before: &str, after: String) -> (String, u64) {
    let n = if before == after {
        0
    } else {
        let b: Vec<char> = before.chars().collect();
        let a: Vec<char> = after.chars().collect();
        let diff = b.len().abs_diff(a.len()) as u64;
        diff.max(
            b.iter()
                .zip(a.iter())
                .filter(|(x, y)| x != y)
                .count()
                .min(1) as u64,
        )
    };
    (after, n)
}

fn filter(text: &str, keep: impl Fn(char) -> bool) -> (String, u64) {
    let mut n = 0;
    let out = text
        .chars()
        .filter(|&c| {
            let k = keep(c);
            n += u64::from(!k);
            k
        })
        .collect();
    (out, n)
}

fn map_chars(text: &str, f: impl Fn(char) -> Option<char>) -> (String, u64) {
    let mut n = 0;
    let out = text
        .chars()
        .map(|c| match f(c) {
            Some(r) => {
                n += 1;
                r
            }
            None => c,
        })
        .collect();
    (out, n)
}

fn replace_count(re: &Regex, text: &str, with: &str) -> (String, u64) {
    let out = re.replace_all(text, with).into_owned();
    let n = (text.chars().count() as u64).saturating_sub(out.chars().count() as u64);
    (out, n)
}

/// A set of cleaners, as an ingest spec names them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CleanerSet(Vec<Cleaner>);

impl Default for CleanerSet {
    fn default() -> Self {
        Self(DEFAULT.to_vec())
    }
}

impl CleanerSet {
    /// No cleaning at all.
    pub fn none() -> Self {
        Self(Vec::new())
    }

    /// Parses `default`, `none`, `all`, a list (`unicode_nfc+whitespace`) or
    /// changes to the default (`+remove_numbers-dehyphenate`, `default-whitespace`).
    pub fn parse(spec: &str) -> Result<Self, String> {
        let spec = spec.trim();
        let mut set: Vec<Cleaner> = Vec::new();
        let mut rest = spec;
        if rest.is_empty() || rest.starts_with(['+', '-']) {
            set = DEFAULT.to_vec();
        }
        for word in ["default", "none", "all"] {
            if let Some(r) = rest.strip_prefix(word) {
                set = match word {
                    "default" => DEFAULT.to_vec(),
                    "all" => ALL.to_vec(),
                    _ => Vec::new(),
                };
                rest = r;
            }
        }
        let mut sign = '+';
        let mut name = String::new();
        let apply = |sign: char, name: &str, set: &mut Vec<Cleaner>| -> Result<(), String> {
            if name.is_empty() {
                return Ok(());
            }
            let c = Cleaner::parse(name).ok_or_else(|| {
                format!(
                    "unknown cleaner '{name}'; the cleaners are: {}",
                    ALL.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
                )
            })?;
            set.retain(|&x| x != c);
            if sign == '+' {
                set.push(c);
            }
            Ok(())
        };
        for ch in rest.chars() {
            if ch == '+' || ch == '-' || ch == ' ' || ch == '|' {
                apply(sign, &name, &mut set)?;
                name.clear();
                if ch != ' ' && ch != '|' {
                    sign = ch;
                }
            } else {
                name.push(ch);
            }
        }
        apply(sign, &name, &mut set)?;
        let mut ordered: Vec<Cleaner> = ALL.into_iter().filter(|c| set.contains(c)).collect();
        ordered.dedup();
        Ok(Self(ordered))
    }

    /// The names of the cleaners in the set, in run order.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|c| c.name()).collect()
    }

    /// Whether `c` is in the set.
    pub fn contains(&self, c: Cleaner) -> bool {
        self.0.contains(&c)
    }

    /// Runs the cleaners over a document's blocks (in `ALL` order). Table
    /// cells are cleaned with the character-level steps too. Blocks left
    /// empty are dropped. Returns the blocks and, per cleaner that ran, the
    /// characters it removed or replaced.
    pub fn apply(&self, mut blocks: Vec<RawBlock>) -> (Vec<RawBlock>, BTreeMap<String, u64>) {
        let mut removed: BTreeMap<String, u64> =
            self.0.iter().map(|c| (c.name().to_string(), 0)).collect();
        for &c in &self.0 {
            let mut n = 0;
            if c == Cleaner::HeadersFooters {
                n += strip_running_lines(&mut blocks);
            } else {
                for b in &mut blocks {
                    let (t, k) = c.clean(&b.text);
                    b.text = t;
                    n += k;
                    if c != Cleaner::Dehyphenate
                        && c != Cleaner::JoinLines
                        && c != Cleaner::PageNumbers
                    {
                        for cell in &mut b.cells {
                            cell.text = c.clean(&cell.text).0;
                        }
                    }
                }
            }
            removed.insert(c.name().to_string(), n);
        }
        blocks.retain(|b| !b.text.trim().is_empty());
        (blocks, removed)
    }
}

/// Drops lines that open or close most pages (running heads and feet,
/// compared with digits masked so "Page 3" and "Page 4" match). Needs at
/// least three pages. Returns the characters removed.
fn strip_running_lines(blocks: &mut [RawBlock]) -> u64 {
    let mut first_last: HashMap<u32, (usize, usize)> = HashMap::new();
    for (i, b) in blocks.iter().enumerate() {
        if let Some(p) = b.page {
            let e = first_last.entry(p).or_insert((i, i));
            e.1 = i;
        }
    }
    let pages = first_last.len();
    if pages < 3 {
        return 0;
    }
    let mask = |l: &str| -> String {
        l.trim()
            .chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect()
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for &(f, l) in first_last.values() {
        let mut seen = std::collections::HashSet::new();
        for line in blocks[f]
            .text
            .lines()
            .take(2)
            .chain(blocks[l].text.lines().rev().take(2))
        {
            let m = mask(line);
            if !m.is_empty() && seen.insert(m.clone()) {
                *counts.entry(m).or_default() += 1;
            }
        }
    }
    let running: std::collections::HashSet<String> = counts
        .into_iter()
        .filter(|&(_, n)| n * 2 > pages && n >= 3)
        .map(|(k, _)| k)
        .collect();
    if running.is_empty() {
        return 0;
    }
    let mut removed = 0u64;
    let edges: std::collections::HashSet<usize> =
        first_last.values().flat_map(|&(f, l)| [f, l]).collect();
    for i in edges {
        let b = &mut blocks[i];
        let lines: Vec<&str> = b.text.lines().collect();
        let n = lines.len();
        let kept: Vec<&str> = lines
            .iter()
            .enumerate()
            .filter(|&(k, l)| {
                let edge = k == 0 || k + 1 == n;
                let drop = edge && running.contains(&mask(l));
                if drop {
                    removed += l.chars().count() as u64 + 1;
                }
                !drop
            })
            .map(|(_, l)| *l)
            .collect();
        b.text = kept.join("\n");
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::BlockKind;

    #[test]
    fn defaults_and_changes_parse() {
        assert_eq!(CleanerSet::parse("").unwrap(), CleanerSet::default());
        assert_eq!(CleanerSet::parse("default").unwrap().names().len(), 5);
        let s = CleanerSet::parse("+remove_numbers-dehyphenate").unwrap();
        assert!(s.contains(Cleaner::RemoveNumbers) && !s.contains(Cleaner::Dehyphenate));
        assert_eq!(CleanerSet::parse("none").unwrap().names().len(), 0);
        assert_eq!(
            CleanerSet::parse("whitespace+quotes").unwrap().names(),
            ["quotes", "whitespace"]
        );
        assert!(CleanerSet::parse("+bogus")
            .unwrap_err()
            .contains("unknown cleaner 'bogus'"));
        assert_eq!(ALL.len(), 15);
        assert!(!DEFAULT.contains(&Cleaner::RemoveNumbers));
    }

    #[test]
    fn each_default_cleaner_counts_what_it_removed() {
        let b = RawBlock::new(
            BlockKind::Paragraph,
            "The e\u{0301}ffect of ﬁsh-\noil\u{200B} was   large.",
        );
        let (out, removed) = CleanerSet::default().apply(vec![b]);
        assert_eq!(out[0].text, "The \u{e9}ffect of fishoil was large.");
        assert_eq!(removed["ligatures"], 1);
        assert_eq!(removed["control_chars"], 1);
        assert_eq!(removed["dehyphenate"], 2);
        assert_eq!(removed["whitespace"], 2);
        assert_eq!(removed["unicode_nfc"], 1);
    }

    #[test]
    fn running_heads_need_pages() {
        let mut blocks: Vec<RawBlock> = (1..=4)
            .map(|p| {
                let mut b = RawBlock::new(
                    BlockKind::Paragraph,
                    format!(
                        "J Trial Med 2020\nBody text on page {}.\nPage {p}",
                        ["one", "two", "three", "four"][p as usize - 1]
                    ),
                );
                b.page = Some(p);
                b
            })
            .collect();
        let n = strip_running_lines(&mut blocks);
        assert!(n > 0);
        assert_eq!(blocks[2].text, "Body text on page three.");
    }
}
