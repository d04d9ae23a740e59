//! The guards on a coherence pass (seed 001): a revision of an assembled
//! draft (`structure`, `cut`, `register`) is the one step of a write-up that
//! is not trusted, since it could quietly undo what the checks above it
//! established. It is discarded, and the draft stands, when it
//!
//! - adds or loses a citation (the `[study n]` markers, counted);
//! - introduces a universal quantifier ("all", "every", "always", ...) in
//!   the sentences that carry a citation, more often than the draft did;
//! - uses a booster ("demonstrates", "establishes", "confirms", ...) more
//!   often than the draft, anywhere in the prose but the headings;
//! - carries fewer hedges in its cited sentences than the draft's rate
//!   implies for the cited prose that survived (rounded down, but never
//!   none where the draft had any).
//!
//! Every word is matched whole and counted: "improved" is not "proved",
//! and "unproven" is not "proven". Hedges and quantifiers are measured on
//! cited sentences, because headings, framing and transitions are what an
//! editing pass should be free to rewrite.

use std::collections::BTreeMap;

use quarry_udfs::sentences::sentence_spans;

use super::cite::markers;

/// Universal quantifiers.
pub const QUANTIFIERS: &[&str] = &[
    "all",
    "every",
    "always",
    "never",
    "none",
    "invariably",
    "universally",
    "without exception",
    "no study",
    "no studies",
    "entirely",
    "uniformly",
];

/// Boosters: words that claim more certainty than evidence gives.
pub const BOOSTERS: &[&str] = &[
    "demonstrate",
    "demonstrates",
    "demonstrated",
    "demonstrating",
    "establish",
    "establishes",
    "established",
    "establishing",
    "confirm",
    "confirms",
    "confirmed",
    "confirming",
    "prove",
    "proves",
    "proved",
    "proven",
    "proving",
    "clearly",
    "conclusively",
    "definitively",
    "definitely",
    "undoubtedly",
    "unequivocally",
    "certainly",
    "decisively",
    "indisputably",
    "beyond doubt",
    "show",
    "shows",
    "showed",
];

/// Hedges: words that carry the uncertainty.
pub const HEDGES: &[&str] = &[
    "may",
    "might",
    "could",
    "suggest",
    "suggests",
    "suggested",
    "suggesting",
    "appear",
    "appears",
    "appeared",
    "seem",
    "seems",
    "seemed",
    "likely",
    "unlikely",
    "possibly",
    "possible",
    "potentially",
    "perhaps",
    "probably",
    "tentatively",
    "tentative",
    "modest",
    "limited",
    "uncertain",
    "unclear",
    "preliminary",
    "somewhat",
    "indicate",
    "indicates",
    "indicated",
    "small",
];

/// What a text holds that the guards look at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    /// How many times each `[study n]` is cited.
    pub citations: BTreeMap<usize, usize>,
    /// Quantifiers in cited sentences, by word.
    pub quantifiers: BTreeMap<&'static str, usize>,
    /// Boosters in the prose but the headings, by word.
    pub boosters: BTreeMap<&'static str, usize>,
    /// Hedges in cited sentences.
    pub hedges: usize,
    /// Words in cited sentences (the claim-bearing prose).
    pub cited_words: usize,
}

/// The words of `text`, lower case: runs of letters (apostrophes inside a
/// word kept), so every match is of whole words.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let inner_apostrophe = matches!(c, '\'' | '’')
            && !cur.is_empty()
            && chars.get(i + 1).is_some_and(|n| n.is_alphabetic());
        if c.is_alphabetic() || inner_apostrophe {
            cur.extend(c.to_lowercase());
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// How many times each entry of `list` (one word or several) occurs in
/// `ws` as whole words.
fn count(ws: &[String], list: &'static [&'static str], into: &mut BTreeMap<&'static str, usize>) {
    for entry in list {
        let parts: Vec<&str> = entry.split(' ').collect();
        let n = ws
            .windows(parts.len())
            .filter(|w| w.iter().zip(&parts).all(|(a, b)| a == b))
            .count();
        if n > 0 {
            *into.entry(entry).or_default() += n;
        }
    }
}

/// The profile of a write-up: headings are lines starting with `#`.
pub fn profile(text: &str) -> Profile {
    let mut p = Profile::default();
    for m in markers(text) {
        *p.citations.entry(m.number).or_default() += 1;
    }
    let prose: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with('#') {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    count(&words(&prose), BOOSTERS, &mut p.boosters);
    for paragraph in prose.split("\n\n").flat_map(|b| b.split('\n')) {
        for (a, b) in sentence_spans(paragraph) {
            let s = &paragraph[a..b];
            if markers(s).is_empty() {
                continue;
            }
            // The markers themselves are not words of the claim.
            let bare = markers(s).iter().rev().fold(s.to_string(), |mut t, m| {
                t.replace_range(m.start..m.end, " ");
                t
            });
            let ws = words(&bare);
            p.cited_words += ws.len();
            count(&ws, QUANTIFIERS, &mut p.quantifiers);
            let mut h = BTreeMap::new();
            count(&ws, HEDGES, &mut h);
            p.hedges += h.values().sum::<usize>();
        }
    }
    p
}

/// Why a revision of `draft` must be discarded, or `None` to keep it.
pub fn refuse(draft: &str, revision: &str) -> Option<String> {
    let (d, r) = (profile(draft), profile(revision));
    if d.citations != r.citations {
        let added: Vec<String> = r
            .citations
            .iter()
            .filter(|(n, c)| d.citations.get(n).is_none_or(|dc| dc < c))
            .map(|(n, _)| format!("[study {n}]"))
            .collect();
        let lost: Vec<String> = d
            .citations
            .iter()
            .filter(|(n, c)| r.citations.get(n).is_none_or(|rc| rc < c))
            .map(|(n, _)| format!("[study {n}]"))
            .collect();
        let mut why = Vec::new();
        if !added.is_empty() {
            why.push(format!("adds citations {}", added.join(" ")));
        }
        if !lost.is_empty() {
            why.push(format!("loses citations {}", lost.join(" ")));
        }
        return Some(format!("the revision {}", why.join(" and ")));
    }
    if let Some((w, n)) = more(&d.quantifiers, &r.quantifiers) {
        return Some(format!(
            "the revision introduces the universal quantifier \"{w}\" into a cited sentence ({n} times, the draft {})",
            d.quantifiers.get(w).copied().unwrap_or(0)
        ));
    }
    if let Some((w, n)) = more(&d.boosters, &r.boosters) {
        return Some(format!(
            "the revision uses the booster \"{w}\" {n} times, the draft {}",
            d.boosters.get(w).copied().unwrap_or(0)
        ));
    }
    if d.hedges > 0 && d.cited_words > 0 {
        // The draft's rate over the cited prose that survived, rounded
        // down, but at least one.
        let implied = (d.hedges * r.cited_words / d.cited_words).max(1);
        if r.hedges < implied {
            return Some(format!(
                "the revision carries {} hedges in {} words of cited sentences, where the draft's rate ({} in {}) implies at least {implied}",
                r.hedges, r.cited_words, d.hedges, d.cited_words
            ));
        }
    }
    None
}

/// The first word `after` counts more often than `before`.
fn more(
    before: &BTreeMap<&'static str, usize>,
    after: &BTreeMap<&'static str, usize>,
) -> Option<(&'static str, usize)> {
    after
        .iter()
        .find(|(w, n)| before.get(*w).copied().unwrap_or(0) < **n)
        .map(|(w, n)| (*w, *n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 001: as bare substrings, "improved" counted as "prove", so a
    /// draft saying "outcomes improved" licensed "proves"; whole words do
    /// not.
    #[test]
    fn improved_does_not_license_proves() {
        let draft = "Outcomes improved in two trials [study 1] [study 2], which may reflect dose.";
        let revision = "This proves the drug works [study 1] [study 2], which may reflect dose.";
        let why = refuse(draft, revision).expect("refused");
        assert!(why.contains("booster \"proves\""), "{why}");
    }

    /// Adding the hedge "unproven" is not a booster ("proven").
    #[test]
    fn adding_unproven_is_not_a_booster() {
        let draft = "The benefit may be real [study 1].";
        let revision = "The benefit may be real but remains unproven [study 1].";
        assert_eq!(refuse(draft, revision), None);
    }

    /// A pass that drops the most hedged sentence lowers the rate and is
    /// refused, though its citations are all still there.
    #[test]
    fn dropping_the_most_hedged_sentence_is_refused() {
        let draft = "Retention rose after spaced sessions [study 1]. \
                     Retention rose in online courses too [study 2]. \
                     Three small trials suggest a modest benefit that may not hold [study 3] [study 1].";
        let revision = "Retention rose after spaced sessions [study 1] [study 1]. \
                        Retention rose in online courses too [study 2] [study 3].";
        let why = refuse(draft, revision).expect("refused");
        assert!(why.contains("hedges"), "{why}");
        // The same draft tightened, with its hedges, passes.
        let tightened = "Retention rose after spaced sessions [study 1]. \
                         It rose online too [study 2]. \
                         Three small trials suggest a modest benefit that may not hold [study 3] [study 1].";
        assert_eq!(refuse(draft, tightened), None);
    }

    /// A pass that adds (or loses) a citation is discarded.
    #[test]
    fn a_pass_that_adds_or_loses_a_citation_is_discarded() {
        let draft = "Two trials found a benefit [study 1] [study 2].";
        let added = "Three trials found a benefit [study 1] [study 2] [study 3].";
        assert!(refuse(draft, added)
            .unwrap()
            .contains("adds citations [study 3]"));
        let lost = "A trial found a benefit [study 1].";
        assert!(refuse(draft, lost)
            .unwrap()
            .contains("loses citations [study 2]"));
        // Cited once more is adding a citation too.
        let twice = "Two trials found a benefit [study 1] [study 2]. Again [study 1].";
        assert!(refuse(draft, twice)
            .unwrap()
            .contains("adds citations [study 1]"));
    }

    /// "Three small trials suggest a modest benefit" as "trials show a
    /// benefit": same markers, a stronger claim.
    #[test]
    fn the_seeds_hedge_deletion_is_refused() {
        let draft = "## Findings\nThree small trials suggest a modest benefit [study 1] [study 2] [study 3].";
        let revision = "## Findings\nTrials show a benefit [study 1] [study 2] [study 3].";
        assert!(refuse(draft, revision).is_some());
    }

    #[test]
    fn quantifiers_count_in_cited_sentences_and_boosters_anywhere_but_headings() {
        // A quantifier in a transition is free.
        let draft = "The studies differ [study 1]. We consider them in turn.";
        let framing = "The studies differ [study 1]. We consider all of them in turn.";
        assert_eq!(refuse(draft, framing), None);
        let claim = "All the studies differ [study 1]. We consider them in turn.";
        assert!(refuse(draft, claim).unwrap().contains("\"all\""));
        // A booster in a heading is free; in framing it is not.
        let heading = "## What the evidence demonstrates\nThe studies differ [study 1]. We consider them in turn.";
        assert_eq!(refuse(draft, heading), None);
        let prose = "The studies differ [study 1]. We demonstrate this in turn.";
        assert!(refuse(draft, prose).unwrap().contains("demonstrate"));
        // Counted: three where the draft had one is introducing it.
        let one = "It demonstrates X [study 1].";
        let three = "It demonstrates X [study 1]. It demonstrates Y. It demonstrates Z.";
        assert!(refuse(one, three).unwrap().contains("3 times, the draft 1"));
    }

    #[test]
    fn words_are_whole() {
        assert_eq!(
            words("Improved; un-proven, don't [study 1]"),
            ["improved", "un", "proven", "don't", "study"]
        );
        let p = profile("Outcomes improved [study 1].");
        assert!(p.boosters.is_empty());
        assert_eq!(p.cited_words, 2);
    }
}
