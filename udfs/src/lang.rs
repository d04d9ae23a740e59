//! The languages whose numbers quarry reads, how to tell them apart on a
//! single sentence, and how a text writes its decimal point.

use std::collections::HashMap;
use std::sync::LazyLock;

use text2num::{text2digits, Language};

/// The languages whose number words are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// English.
    En,
    /// French.
    Fr,
    /// Spanish.
    Es,
    /// Portuguese.
    Pt,
    /// Italian.
    It,
    /// German.
    De,
    /// Dutch.
    Nl,
}

/// How a text writes the decimal point of its numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decimal {
    /// "0.45", "1,204.5".
    Point,
    /// "0,45", "1.204,5".
    Comma,
}

const ALL: [Lang; 7] = [
    Lang::En,
    Lang::Fr,
    Lang::Es,
    Lang::Pt,
    Lang::It,
    Lang::De,
    Lang::Nl,
];

/// Frequent words of each language (function words, and the commonest words
/// of trial reports), lower case. A word in several lists counts for each.
const WORDS: [(Lang, &[&str]); 7] = [
    (
        Lang::En,
        &[
            "no",
            "one",
            "the",
            "and",
            "of",
            "was",
            "were",
            "with",
            "to",
            "is",
            "for",
            "that",
            "this",
            "are",
            "by",
            "from",
            "at",
            "had",
            "have",
            "has",
            "been",
            "which",
            "or",
            "than",
            "after",
            "who",
            "their",
            "these",
            "in",
            "a",
            "an",
            "group",
            "groups",
            "years",
            "study",
            "trial",
            "treatment",
            "randomized",
            "randomised",
            "participants",
            "women",
            "men",
            "received",
            "each",
            "between",
            "total",
            "mean",
            "not",
            "on",
            "all",
        ],
    ),
    (
        Lang::Fr,
        &[
            "un",
            "a",
            "ans",
            "le",
            "la",
            "les",
            "des",
            "et",
            "est",
            "une",
            "du",
            "dans",
            "avec",
            "pour",
            "sont",
            "ont",
            "été",
            "au",
            "aux",
            "par",
            "sur",
            "qui",
            "que",
            "ne",
            "pas",
            "ces",
            "cette",
            "était",
            "étaient",
            "ans",
            "groupe",
            "groupes",
            "étude",
            "essai",
            "femmes",
            "hommes",
            "randomisés",
            "randomisées",
            "total",
            "chaque",
            "entre",
            "ou",
            "il",
            "elle",
            "se",
            "plus",
            "d",
            "l",
            "qu",
            "moyenne",
            "été",
        ],
    ),
    (
        Lang::Es,
        &[
            "no",
            "a",
            "el",
            "los",
            "las",
            "y",
            "del",
            "una",
            "con",
            "por",
            "para",
            "fue",
            "fueron",
            "es",
            "en",
            "se",
            "al",
            "que",
            "su",
            "sus",
            "como",
            "más",
            "entre",
            "años",
            "pacientes",
            "grupo",
            "grupos",
            "estudio",
            "ensayo",
            "mujeres",
            "hombres",
            "aleatorizados",
            "total",
            "cada",
            "o",
            "un",
            "media",
            "tratamiento",
            "participantes",
            "fueran",
        ],
    ),
    (
        Lang::Pt,
        &[
            "a",
            "o",
            "os",
            "as",
            "e",
            "do",
            "da",
            "dos",
            "das",
            "uma",
            "com",
            "não",
            "foi",
            "foram",
            "em",
            "no",
            "na",
            "nos",
            "nas",
            "ao",
            "pelo",
            "pela",
            "anos",
            "pacientes",
            "doentes",
            "grupo",
            "grupos",
            "estudo",
            "ensaio",
            "mulheres",
            "homens",
            "randomizados",
            "um",
            "que",
            "para",
            "por",
            "entre",
            "cada",
            "média",
            "tratamento",
            "participantes",
            "total",
        ],
    ),
    (
        Lang::It,
        &[
            "a",
            "il",
            "gli",
            "della",
            "di",
            "e",
            "che",
            "una",
            "con",
            "per",
            "sono",
            "è",
            "nel",
            "nella",
            "dei",
            "delle",
            "del",
            "al",
            "alla",
            "stati",
            "stato",
            "state",
            "anni",
            "pazienti",
            "gruppo",
            "gruppi",
            "studio",
            "donne",
            "uomini",
            "randomizzati",
            "un",
            "lo",
            "le",
            "in",
            "tra",
            "fra",
            "ogni",
            "media",
            "trattamento",
            "partecipanti",
            "totale",
        ],
    ),
    (
        Lang::De,
        &[
            "der",
            "die",
            "das",
            "und",
            "mit",
            "ist",
            "ein",
            "eine",
            "einer",
            "wurde",
            "wurden",
            "von",
            "zu",
            "nicht",
            "den",
            "dem",
            "des",
            "im",
            "auf",
            "für",
            "bei",
            "nach",
            "sich",
            "sind",
            "waren",
            "jahre",
            "jahren",
            "patienten",
            "gruppe",
            "gruppen",
            "studie",
            "frauen",
            "männer",
            "randomisiert",
            "insgesamt",
            "in",
            "oder",
            "jeder",
            "zwischen",
            "behandlung",
            "teilnehmer",
        ],
    ),
    (
        Lang::Nl,
        &[
            "de",
            "het",
            "een",
            "en",
            "van",
            "met",
            "is",
            "werd",
            "werden",
            "zijn",
            "niet",
            "op",
            "voor",
            "in",
            "te",
            "bij",
            "naar",
            "dat",
            "die",
            "jaar",
            "patiënten",
            "groep",
            "groepen",
            "studie",
            "onderzoek",
            "vrouwen",
            "mannen",
            "gerandomiseerd",
            "totaal",
            "deelnemers",
            "door",
            "ook",
            "er",
            "of",
            "elke",
            "tussen",
            "gemiddeld",
            "behandeling",
        ],
    ),
];

/// Number words of one language that are everyday words of another
/// ("once", "cent"): no evidence of either.
const SHARED_WORDS: &[&str] = &[
    "once", "cent", "sept", "mille", "zero", "nove", "vier", "due", "tre", "sei", "elf", "mil",
    "ten",
];

/// How many words of a text language detection looks at.
const DETECT_WORDS: usize = 400;

/// How many words not among the frequent ones it tries as number words.
const NUMBER_WORDS: usize = 60;

impl Lang {
    /// Parses an ISO 639-1 code.
    pub fn parse(code: &str) -> Option<Self> {
        Some(match code.trim().to_ascii_lowercase().as_str() {
            "en" => Self::En,
            "fr" => Self::Fr,
            "es" => Self::Es,
            "pt" => Self::Pt,
            "it" => Self::It,
            "de" => Self::De,
            "nl" => Self::Nl,
            _ => return None,
        })
    }

    /// The language's English name.
    pub fn name(self) -> &'static str {
        match self {
            Self::En => "English",
            Self::Fr => "French",
            Self::Es => "Spanish",
            Self::Pt => "Portuguese",
            Self::It => "Italian",
            Self::De => "German",
            Self::Nl => "Dutch",
        }
    }

    pub(crate) fn language(self) -> Language {
        match self {
            Self::En => Language::english(),
            Self::Fr => Language::french(),
            Self::Es => Language::spanish(),
            Self::Pt => Language::portugese(), // (sic: the crate spells it so)
            Self::It => Language::italian(),
            Self::De => Language::german(),
            Self::Nl => Language::dutch(),
        }
    }

    /// Whether a decimal comma is the language's own spelling.
    pub fn decimal_comma(self) -> bool {
        self != Self::En
    }

    /// The language's own decimal point.
    pub fn decimal(self) -> Decimal {
        if self.decimal_comma() {
            Decimal::Comma
        } else {
            Decimal::Point
        }
    }

    /// Guesses the language of a text, even of one sentence, from its
    /// frequent words and its number words ("achtendertig" is Dutch);
    /// English when Latin-script words give no evidence; `None` when it has
    /// no Latin-script words to go on.
    pub fn detect(text: &str) -> Option<Self> {
        let (mut score, unknown) = frequent(text)?;
        if !decided(score) {
            number_words(&mut score, &unknown);
        }
        Some(pick(score))
    }

    /// The language of a quote from a document: its own words count twice,
    /// the document's (`context`, its frequent words only) once, so a short
    /// fragment ("uno coma uno", "75 patients") is read in the language
    /// around it. `None` when neither has Latin-script words. Number words
    /// (dearer to test) are tried only when frequent words do not decide.
    pub fn detect_in(quote: &str, context: &str) -> Option<Self> {
        let c = frequent(context).map(|(c, _)| c);
        let Some((q, unknown)) = frequent(quote) else {
            return c.map(pick);
        };
        let combine = |q: [u32; 7]| match c {
            Some(c) => std::array::from_fn(|i| 2 * q[i] + c[i]),
            None => q,
        };
        let mut s = combine(q);
        if !decided(s) && !decided(q) {
            let mut q = q;
            number_words(&mut q, &unknown);
            s = combine(q);
        }
        Some(pick(s))
    }
}

/// Whether frequent words alone settle the language: three at least, and
/// twice as many as for any other language.
fn decided(score: [u32; 7]) -> bool {
    let mut sorted = score;
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    sorted[0] >= 3 && sorted[0] >= 2 * sorted[1]
}

/// The best-scoring language; on a tie the earlier one (English first).
fn pick(score: [u32; 7]) -> Lang {
    let mut best = 0;
    for i in 1..7 {
        if score[i] > score[best] {
            best = i;
        }
    }
    ALL[best]
}

/// Each frequent word and the languages (bits in `ALL`'s order) it is a
/// frequent word of.
static FREQUENT: LazyLock<HashMap<&'static str, u8>> = LazyLock::new(|| {
    let mut m: HashMap<&str, u8> = HashMap::new();
    for (i, (_, list)) in WORDS.iter().enumerate() {
        for w in *list {
            *m.entry(w).or_default() |= 1 << i;
        }
    }
    m
});

/// Evidence for each language in `text`, one point a frequent word, and
/// the words that are none that could be number words (lower case); `None`
/// when the text has no Latin-script words.
fn frequent(text: &str) -> Option<([u32; 7], Vec<String>)> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .take(DETECT_WORDS)
        .collect();
    if !words.iter().any(|w| w.chars().all(latin)) {
        return None;
    }
    let mut score = [0u32; 7];
    let mut unknown = Vec::new();
    let mut tried = 0;
    for w in &words {
        match FREQUENT.get(w) {
            Some(bits) => {
                for (i, s) in score.iter_mut().enumerate() {
                    if bits & (1 << i) != 0 {
                        *s += 1;
                    }
                }
            }
            None => {
                // The first NUMBER_WORDS words that are none, short and
                // shared ones passed over.
                tried += 1;
                if tried <= NUMBER_WORDS && w.chars().count() >= 3 && !SHARED_WORDS.contains(w) {
                    unknown.push(w.to_string());
                }
            }
        }
    }
    Some((score, unknown))
}

/// Two points to a language for each word that only it spells as a number
/// (cardinals only: ordinals such as "segundo" are everyday words too).
fn number_words(score: &mut [u32; 7], words: &[String]) {
    for w in words {
        let mut hit = None;
        let mut hits = 0;
        for (i, l) in ALL.iter().enumerate() {
            let cardinal = text2digits(w, &l.language()).is_ok_and(|d| {
                d.chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
            });
            if cardinal {
                hit = Some(i);
                hits += 1;
            }
        }
        if let (Some(i), 1) = (hit, hits) {
            score[i] += 2;
        }
    }
}

fn latin(c: char) -> bool {
    c.is_ascii_alphabetic() || ('\u{00C0}'..='\u{024F}').contains(&c)
}

/// How `text` writes its decimal point, from the numbers whose writing
/// tells ("0,45", "12,5", "1.204,5" against "0.45", "12.5", "1,204.5");
/// `None` when none does, or both ways occur. Lists such as "[1,2]" or
/// "1,2,3" are not numbers.
pub fn decimal_convention(text: &str) -> Option<Decimal> {
    let b = text.as_bytes();
    let (mut point, mut comma) = (0, 0);
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        // A run of digits and single separators between digits.
        let start = i;
        let mut seps = Vec::new();
        while i < b.len() {
            if b[i].is_ascii_digit() {
                i += 1;
            } else if matches!(b[i], b'.' | b',') && i + 1 < b.len() && b[i + 1].is_ascii_digit() {
                seps.push(i);
                i += 1;
            } else {
                break;
            }
        }
        let glued = start > 0 && (b[start - 1].is_ascii_alphabetic() || b[start - 1] == b'[');
        if glued || seps.is_empty() {
            continue;
        }
        let kinds: Vec<u8> = seps.iter().map(|&s| b[s]).collect();
        let last = *seps.last().unwrap_or(&start);
        let last_kind = b[last];
        let mixed = kinds.iter().any(|&k| k != last_kind);
        if mixed {
            // "1,204.5": the last separator is the decimal point.
            if last_kind == b'.' {
                point += 1;
            } else {
                comma += 1;
            }
            continue;
        }
        if seps.len() > 1 {
            continue; // "1,204,000" or a list "1,2,3": grouping, no decimal
        }
        let int_part = &b[start..last];
        let frac_len = i - last - 1;
        let grouping = frac_len == 3 && int_part.len() <= 3 && int_part[0] != b'0';
        if grouping {
            continue;
        }
        if last_kind == b'.' {
            point += 1;
        } else {
            comma += 1;
        }
    }
    match (point > 0, comma > 0) {
        (true, false) => Some(Decimal::Point),
        (false, true) => Some(Decimal::Comma),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sentence_is_enough() {
        let cases = [
            ("Soixante-quinze patients ont été randomisés.", Lang::Fr),
            (
                "In totaal werden achtendertig deelnemers gerandomiseerd.",
                Lang::Nl,
            ),
            ("Setenta y cinco pacientes fueron aleatorizados.", Lang::Es),
            ("Setenta e cinco doentes foram randomizados.", Lang::Pt),
            ("Settantacinque pazienti sono stati randomizzati.", Lang::It),
            ("Fünfundsiebzig Patienten wurden randomisiert.", Lang::De),
            ("Seventy-five patients were randomised.", Lang::En),
            ("Treatment lasted one and a half years.", Lang::En),
        ];
        for (t, want) in cases {
            assert_eq!(Lang::detect(t), Some(want), "{t}");
        }
        assert_eq!(Lang::detect("240"), None);
        assert_eq!(
            Lang::detect_in("75 patients", "Au total, 75 patients ont été inclus."),
            Some(Lang::Fr)
        );
        assert_eq!(
            Lang::detect_in("uno coma uno", "Los pacientes recibieron uno coma uno."),
            Some(Lang::Es)
        );
    }

    #[test]
    fn conventions() {
        assert_eq!(
            decimal_convention("p = 0,045 et 12,5 ans"),
            Some(Decimal::Comma)
        );
        assert_eq!(decimal_convention("p = 0.045"), Some(Decimal::Point));
        assert_eq!(decimal_convention("1,204 patients"), None);
        assert_eq!(decimal_convention("1.204 Patienten"), None);
        assert_eq!(decimal_convention("refs [1,2] and 1,2,3"), None);
        assert_eq!(decimal_convention("1.204,5 EUR"), Some(Decimal::Comma));
        assert_eq!(decimal_convention("0.5 and 0,5"), None);
    }
}
