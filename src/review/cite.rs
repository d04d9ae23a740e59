//! Citations in a write-up (seed 001): the model writes `[study n]`
//! markers, n being a study's number in the table it was shown; the
//! markers are parsed back out and checked against the studies that exist,
//! and only then rendered, from the table, as author-year citations with a
//! reference list of the studies the text cites. A citation in the finished
//! prose is so a fact about the extraction, never a name the model wrote.
//!
//! A study that cannot be named (no author list that parses, no year)
//! makes the whole text keep its markers: citing some studies by name and
//! others by number reads as a mistake, and "n.d." would assert what the
//! extraction never found.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;

/// One study a text may cite: its number in the table, and the
/// bibliographic fields citations are rendered from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Study {
    /// The number its markers carry (1-based, the table's order).
    pub number: usize,
    /// The author list as extracted ("Smith, J., Okafor, A.").
    pub authors: Option<String>,
    /// The year of publication.
    pub year: Option<i64>,
    /// The title.
    pub title: Option<String>,
    /// Journal, volume and issue.
    pub venue: Option<String>,
}

/// A `[study n]` marker: where it is in the text and its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// Byte offsets of the marker in the text.
    pub start: usize,
    /// End of the marker.
    pub end: usize,
    /// The study number it names.
    pub number: usize,
}

static MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\[\s*study\s+(\d{1,9})\s*\]").expect("marker pattern"));

/// The `[study n]` markers of `text`, in order.
pub fn markers(text: &str) -> Vec<Marker> {
    MARKER
        .captures_iter(text)
        .filter_map(|c| {
            let m = c.get(0)?;
            Some(Marker {
                start: m.start(),
                end: m.end(),
                number: c[1].parse().ok()?,
            })
        })
        .collect()
}

/// The numbers `text` cites that are not among `known` (each once, in
/// order of first use): a section citing one is partial.
pub fn unknown_markers(text: &str, known: &BTreeSet<usize>) -> Vec<usize> {
    let mut out = Vec::new();
    for m in markers(text) {
        if !known.contains(&m.number) && !out.contains(&m.number) {
            out.push(m.number);
        }
    }
    out
}

/// The surnames of an author list, or `None` when it cannot be read as
/// one (parsing an arbitrary author list is a heuristic, and treated as
/// one: what it is not sure of, it does not name). `et al.` in the list
/// gives `(surnames, true)`.
pub fn surnames(authors: &str) -> Option<(Vec<String>, bool)> {
    static ET_AL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\bet\s+al\b|\band\s+others\b").expect("et al pattern"));
    let mut text = authors.trim();
    let et_al = match ET_AL.find(text) {
        Some(m) => {
            text = &text[..m.start()];
            true
        }
        None => false,
    };
    let text = text.trim().trim_end_matches([',', ';', '.']).trim();
    if text.is_empty() {
        return None;
    }
    let names: Vec<String> = if text.contains(';') {
        // "Smith, John; Okafor, Ada" or "Smith J; Okafor A".
        text.split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|item| match item.split_once(',') {
                Some((surname, _)) => Some(surname.trim().to_string()),
                None => full_name_surname(item),
            })
            .collect::<Option<_>>()?
    } else {
        let parts: Vec<&str> = split_and(text);
        let pairs = parts.len() >= 2
            && parts.len().is_multiple_of(2)
            && parts.iter().skip(1).step_by(2).all(|p| initials(p))
            && parts.iter().step_by(2).all(|p| !initials(p));
        if pairs {
            // "Smith, J., Okafor, A.": surname, initials, ...
            parts.iter().step_by(2).map(|s| s.to_string()).collect()
        } else if let Some(surname) = surname_given(text) {
            // "Garcia, Rosa", "van der Berg, Anna M.": one author.
            vec![surname]
        } else {
            parts
                .iter()
                .map(|p| full_name_surname(p))
                .collect::<Option<_>>()?
        }
    };
    let ok = |s: &str| {
        s.chars().any(char::is_alphabetic)
            && s.chars()
                .all(|c| c.is_alphabetic() || matches!(c, ' ' | '-' | '\'' | '’' | '.'))
            && !initials(s)
    };
    (!names.is_empty() && names.iter().all(|n| ok(n))).then_some((names, et_al))
}

/// A list split at commas and at "and" / "&" (the last author's).
fn split_and(text: &str) -> Vec<&str> {
    static AND: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\s*(?:,|\s&\s|\sand\s)\s*").expect("and pattern"));
    AND.split(text)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The surname of a list that is one author written "Surname, Given
/// names" ("Garcia, Rosa", "van der Berg, Anna M."): one comma, no "and",
/// the part before it a surname (one word, or particles and one word: not
/// a whole name, as in "John Smith, Ada Okafor") and the part after it
/// given names or initials.
fn surname_given(text: &str) -> Option<String> {
    const PARTICLES: &[&str] = &[
        "van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "la", "le", "ter",
        "bin", "al", "el",
    ];
    let (surname, given) = text.split_once(',')?;
    let (surname, given) = (surname.trim(), given.trim());
    if given.contains(',') || given.is_empty() || split_and(text).len() != 2 {
        return None;
    }
    let words: Vec<&str> = surname.split_whitespace().collect();
    let (last, before) = words.split_last()?;
    let particles = before
        .iter()
        .all(|w| PARTICLES.contains(&w.to_lowercase().as_str()));
    let given_names = given.split_whitespace().all(|w| {
        initials(w)
            || w.chars().next().is_some_and(char::is_uppercase)
                && w.chars().skip(1).all(|c| c.is_lowercase() || c == '-')
    });
    (particles && given_names && !last.is_empty()).then(|| surname.to_string())
}

/// Whether `s` is initials ("J.", "A.B.", "J-P", "JA").
fn initials(s: &str) -> bool {
    let s = s.trim();
    let letters: Vec<char> = s.chars().filter(|c| c.is_alphabetic()).collect();
    if letters.is_empty() {
        return false;
    }
    let dotted = s.contains('.')
        && s.split(['.', ' ', '-'])
            .filter(|w| !w.is_empty())
            .all(|w| w.chars().count() <= 2);
    let capitals =
        letters.len() <= 3 && letters.iter().all(|c| c.is_uppercase()) && !s.contains(' ');
    dotted || capitals
}

/// The surname of one name written whole: "Smith J" (Vancouver) is
/// Smith, "John Smith" and "J. Smith" are Smith.
fn full_name_surname(name: &str) -> Option<String> {
    let words: Vec<&str> = name.split_whitespace().collect();
    match words.as_slice() {
        [] => None,
        [one] => Some(one.to_string()),
        [.., last] if initials(last) => Some(words[..words.len() - 1].join(" ")),
        [.., last] => Some(last.to_string()),
    }
}

/// How a study is cited in the text ("Smith & Okafor, 2019"), without the
/// year's letter.
fn short_form(names: &[String], et_al: bool) -> String {
    match (names, et_al) {
        ([one], false) => one.clone(),
        ([a, b], false) => format!("{a} & {b}"),
        ([first, ..], _) => format!("{first} et al."),
        ([], _) => String::new(),
    }
}

/// A write-up with its citations rendered.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The text with author-year citations and a reference list, or the
    /// marked text itself when a cited study cannot be named.
    pub text: String,
    /// Whether the citations were rendered (else the markers stand).
    pub author_year: bool,
    /// Why not, when they were not.
    pub note: Option<String>,
    /// The cited studies' numbers, in reference-list order.
    pub cited: Vec<usize>,
    /// Each cited study's reference-list entry, in list order (empty when
    /// the markers stand).
    pub references: Vec<(usize, String)>,
}

/// Renders the `[study n]` markers of `marked` as author-year citations:
/// adjacent markers become one parenthetical, its citations in
/// alphabetical order ("(Garcia, 2022; Lee & Petrov, 2021)"); two studies
/// with the same short form and year get "2019a", "2019b"; a reference
/// list of the cited studies follows under `## References`. Markers whose
/// number is not a study stay as they are (the checks report them). When
/// any cited study cannot be named, the text keeps every marker.
pub fn render(marked: &str, studies: &[Study]) -> Rendered {
    let by_number: BTreeMap<usize, &Study> = studies.iter().map(|s| (s.number, s)).collect();
    let found = markers(marked);
    let cited: BTreeSet<usize> = found
        .iter()
        .map(|m| m.number)
        .filter(|n| by_number.contains_key(n))
        .collect();
    // The short form and year of each cited study.
    let mut forms: BTreeMap<usize, (String, i64)> = BTreeMap::new();
    for n in &cited {
        let s = by_number[n];
        let named = s.authors.as_deref().and_then(surnames).zip(s.year);
        let Some(((names, et_al), year)) = named else {
            let what = if s.year.is_none() {
                "no year"
            } else {
                "no author list that can be read"
            };
            return Rendered {
                text: marked.to_string(),
                author_year: false,
                note: Some(format!(
                    "study {n} has {what}: the whole text keeps its [study n] markers (extract a citation field, or the authors and year, to render them)"
                )),
                cited: cited.iter().copied().collect(),
                references: vec![],
            };
        };
        forms.insert(*n, (short_form(&names, et_al), year));
    }
    // Letters for studies sharing a short form and year, in the order of
    // their titles (then numbers).
    let mut same: BTreeMap<(String, i64), Vec<usize>> = BTreeMap::new();
    for (n, f) in &forms {
        same.entry(f.clone()).or_default().push(*n);
    }
    let mut label: BTreeMap<usize, String> = BTreeMap::new();
    for ((form, year), mut ns) in same {
        ns.sort_by_key(|n| (by_number[n].title.clone().unwrap_or_default(), *n));
        let lettered = ns.len() > 1;
        for (i, n) in ns.iter().enumerate() {
            let suffix = if lettered {
                char::from(b'a' + (i % 26) as u8).to_string()
            } else {
                String::new()
            };
            label.insert(*n, format!("{form}, {year}{suffix}"));
        }
    }
    // Runs of adjacent markers (only spaces between) become one citation.
    let mut text = String::with_capacity(marked.len());
    let mut at = 0;
    let mut i = 0;
    while i < found.len() {
        let mut j = i;
        while j + 1 < found.len() && marked[found[j].end..found[j + 1].start].trim().is_empty() {
            j += 1;
        }
        let run = &found[i..=j];
        // The run's studies as one parenthetical; a marker naming no
        // study stays as written after it (the checks report it).
        let mut cites: Vec<&str> = Vec::new();
        let mut unknown: Vec<&str> = Vec::new();
        for m in run {
            match label.get(&m.number) {
                Some(l) if !cites.contains(&l.as_str()) => cites.push(l),
                Some(_) => {}
                None => unknown.push(&marked[m.start..m.end]),
            }
        }
        if !cites.is_empty() {
            cites.sort_by_key(|c| c.to_lowercase());
            text.push_str(&marked[at..run[0].start]);
            text.push('(');
            text.push_str(&cites.join("; "));
            text.push(')');
            for u in unknown {
                text.push(' ');
                text.push_str(u);
            }
            at = run[run.len() - 1].end;
        }
        i = j + 1;
    }
    text.push_str(&marked[at..]);
    // The reference list, alphabetical by its entries.
    let mut refs: Vec<(String, usize)> = cited
        .iter()
        .map(|n| (reference(by_number[n], &label[n]), *n))
        .collect();
    refs.sort_by_key(|r| (r.0.to_lowercase(), r.1));
    if !refs.is_empty() {
        let body = text.trim_end();
        text = format!("{body}\n## References\n");
        for (r, _) in &refs {
            text.push_str("- ");
            text.push_str(r);
            text.push('\n');
        }
    }
    Rendered {
        text,
        author_year: true,
        note: None,
        cited: refs.iter().map(|r| r.1).collect(),
        references: refs.into_iter().map(|(e, n)| (n, e)).collect(),
    }
}

/// A reference-list entry: "Lee, M., Petrov, K. (2021). Title. Venue."
/// (the author list as extracted; the year carries the citation's letter).
fn reference(s: &Study, label: &str) -> String {
    let year = label.rsplit(", ").next().unwrap_or_default();
    let mut out = format!(
        "{} ({year}).",
        s.authors.as_deref().unwrap_or_default().trim()
    );
    for part in [&s.title, &s.venue].into_iter().flatten() {
        let p = part.trim().trim_end_matches('.');
        if !p.is_empty() {
            out.push(' ');
            out.push_str(p);
            out.push('.');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_author_written_surname_first_is_one_author() {
        let one = |a: &str| surnames(a).map(|(n, _)| n);
        assert_eq!(one("Garcia, Rosa"), Some(vec!["Garcia".to_string()]));
        assert_eq!(
            one("van der Berg, Anna M."),
            Some(vec!["van der Berg".to_string()])
        );
        assert_eq!(one("Garcia, R."), Some(vec!["Garcia".to_string()]));
        // Two whole names, and two surnames joined by "and", stay two.
        assert_eq!(
            one("John Smith, Ada Okafor"),
            Some(vec!["Smith".to_string(), "Okafor".to_string()])
        );
        assert_eq!(
            one("Smith and Okafor"),
            Some(vec!["Smith".to_string(), "Okafor".to_string()])
        );
    }

    fn seed_studies() -> Vec<Study> {
        let s = |n, a: &str, y, t: &str, v: &str| Study {
            number: n,
            authors: Some(a.into()),
            year: Some(y),
            title: Some(t.into()),
            venue: Some(v.into()),
        };
        vec![
            s(
                1,
                "Smith, J., Okafor, A.",
                2019,
                "Cognitive Load and Retention in Adult Learners",
                "Journal of Educational Psychology 44(2)",
            ),
            s(
                2,
                "Lee, M., Petrov, K.",
                2021,
                "Spacing Effects in Online Instruction",
                "Learning and Instruction 61(4)",
            ),
            s(
                3,
                "Garcia, R.",
                2022,
                "No Effect of Spacing on Procedural Skill Acquisition",
                "Applied Cognitive Psychology 36(1)",
            ),
        ]
    }

    /// Seed 001's rendering example, exactly.
    #[test]
    fn the_seed_example_renders_as_the_seed_says() {
        let marked =
            "## Included studies\nThree studies met the criteria [study 1] [study 2] [study 3].\n";
        let r = render(marked, &seed_studies());
        assert_eq!(
            r.text,
            "## Included studies\n\
             Three studies met the criteria (Garcia, 2022; Lee & Petrov, 2021; Smith & Okafor, 2019).\n\
             ## References\n\
             - Garcia, R. (2022). No Effect of Spacing on Procedural Skill Acquisition. Applied Cognitive Psychology 36(1).\n\
             - Lee, M., Petrov, K. (2021). Spacing Effects in Online Instruction. Learning and Instruction 61(4).\n\
             - Smith, J., Okafor, A. (2019). Cognitive Load and Retention in Adult Learners. Journal of Educational Psychology 44(2).\n"
        );
        assert!(r.author_year);
        assert_eq!(r.cited, vec![3, 2, 1]);
    }

    #[test]
    fn only_cited_studies_are_listed_and_markers_apart_stay_apart() {
        let r = render(
            "The south reported more [study 2] than the north [study 1].",
            &seed_studies(),
        );
        assert_eq!(
            r.text.lines().next().unwrap(),
            "The south reported more (Lee & Petrov, 2021) than the north (Smith & Okafor, 2019)."
        );
        assert_eq!(r.text.matches("\n- ").count(), 2);
        assert!(!r.text.contains("Garcia"));
    }

    #[test]
    fn a_study_that_cannot_be_named_keeps_every_marker() {
        let mut studies = seed_studies();
        studies[2].year = None;
        let marked = "A [study 1]. B [study 3].";
        let r = render(marked, &studies);
        assert_eq!(r.text, marked);
        assert!(!r.author_year);
        assert!(r.note.unwrap().contains("study 3 has no year"));
        // Not cited, it does not matter.
        let r = render("A [study 1].", &studies);
        assert!(r.author_year);
    }

    #[test]
    fn same_authors_and_year_get_letters_and_unknown_markers_stay() {
        let mut studies = seed_studies();
        studies[1].authors = Some("Smith, J., Okafor, A.".into());
        studies[1].year = Some(2019);
        let r = render(
            "X [study 1] [study 2]. Y [study 9]. Z [study 9] [study 3].",
            &studies,
        );
        let first = r.text.lines().next().unwrap();
        assert_eq!(
            first,
            "X (Smith & Okafor, 2019a; Smith & Okafor, 2019b). Y [study 9]. Z (Garcia, 2022) [study 9]."
        );
        assert!(
            r.text.contains("Okafor, A. (2019a). Cognitive"),
            "{}",
            r.text
        );
        let known: BTreeSet<usize> = [1, 2, 3].into();
        assert_eq!(
            unknown_markers("[study 9] [Study 2] [study 9] [study 0]", &known),
            vec![9, 0]
        );
    }

    #[test]
    fn author_lists_in_the_usual_shapes() {
        let s = |a: &str| surnames(a).map(|(n, e)| (n.join("|"), e));
        assert_eq!(
            s("Smith, J., Okafor, A."),
            Some(("Smith|Okafor".into(), false))
        );
        assert_eq!(s("Garcia, R."), Some(("Garcia".into(), false)));
        assert_eq!(s("Smith J, Okafor A"), Some(("Smith|Okafor".into(), false)));
        assert_eq!(
            s("John Smith and Ada Okafor"),
            Some(("Smith|Okafor".into(), false))
        );
        assert_eq!(
            s("Smith, John; Okafor, Ada; Lee, M"),
            Some(("Smith|Okafor|Lee".into(), false))
        );
        assert_eq!(s("Smith J, et al."), Some(("Smith".into(), true)));
        assert_eq!(
            s("van der Berg, K., Lee, M."),
            Some(("van der Berg|Lee".into(), false))
        );
        assert_eq!(
            s("Smith, J., Okafor, A., Lee, M."),
            Some(("Smith|Okafor|Lee".into(), false))
        );
        assert_eq!(s(""), None);
        assert_eq!(s("2019"), None);
        assert_eq!(s("J., A."), None);
        assert_eq!(
            short_form(&["A".into(), "B".into(), "C".into()], false),
            "A et al."
        );
        assert_eq!(short_form(&["A".into()], true), "A et al.");
    }
}
