//! `numbers_in(text [, lang])`: the numbers a text states, one reading per
//! written number, in the forms papers write them: "1,204", "1 204" (a
//! space, no-break, thin or narrow no-break space between valid thousands
//! groups), "0,45", "0·84", "3.2 x 10^-5", "3.2e-5", "10⁻⁵", "1.2 million",
//! "$1.2 bn", "54%" (54 and 0.54), number words in English, French, Spanish,
//! Portuguese, Italian, German and Dutch (through the `text2num` crate, with
//! the language told by the sentence itself), spelled fractions and mixed
//! numbers ("a quarter", "two thirds", "one and a half", "un an et demi",
//! "zweieinhalb": that number only), "one in five" (1, 5 and 0.2), and
//! "no deaths" / "none" as zero. "the first visit" states no 1, "no
//! difference" no zero, "hundreds of" no 100, and an indefinite article
//! ("un patient", "ein Patient") no 1.
//!
//! A writing decides its reading where it can: "1,204" is 1204 in English,
//! "0,45" is 0.45 anywhere, "3 400" is 3400 (not 3 and 400). Where it
//! cannot ("1,204" or "1.204" in a language that writes decimal commas, in
//! a text that shows no other decimal), both readings are given and marked
//! ambiguous (see [`readings_in`]); `verify_quote` accepts neither.

use std::sync::{Arc, LazyLock};

#[cfg(feature = "sql")]
use datafusion::arrow::array::{Array, ArrayRef, Float64Builder, ListBuilder};
#[cfg(feature = "sql")]
use datafusion::arrow::datatypes::DataType;
#[cfg(feature = "sql")]
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
#[cfg(feature = "sql")]
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};
use regex::{Captures, Regex};
use text2num::{replace_numbers_in_text, text2digits};

pub use crate::lang::{decimal_convention, Decimal, Lang};
#[cfg(feature = "sql")]
use crate::util::string_array;

/// One reading of a written number.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// The number.
    pub value: f64,
    /// Why the writing does not decide between this reading and another
    /// ("'1,204' is 1204 or 1.204 in Spanish ..."); `None` when it does.
    pub ambiguous: Option<String>,
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| unreachable!("static regex: {e}"))
}

/// A number written with digits: a thousands grouping ([`GROUPED`]), or
/// digits with one decimal separator. When a digit follows a grouping
/// ("3 4000", "1,2045"), it was none, and the text is read again without it.
const NUMBER_HEAD: &str = r"(?xi)
    (?P<sign>(?:^|[\s(\[=<>:;])[-−+])?
    (?P<num>";
const GROUPED: &str = r"\d{1,3}(?:(?:,\d{3})+|(?:\.\d{3}){2,}|(?:[\x20\u{00A0}\u{202F}\u{2009}]\d{3})+)(?:[.·,]\d+)? |";
const NUMBER_TAIL: &str = r"\d+(?:[.·,]\d+)? | [.·]\d+ )
    (?:
        (?P<sci>\s*[x×\*]\s*10\s*(?:\^\s*)?(?P<exp>(?:[-−⁻]\s*)?[0-9⁰¹²³⁴⁵⁶⁷⁸⁹]+))
      | e(?P<eexp>[-−+]?\d+)
    )?
    (?P<tail>[\p{L}ºª]*)
    (?P<pct>\s*(?:%|percent\b|per\x20cent\b|pour\x20cent\b|por\x20ciento\b|por\x20cento\b|per\x20cento\b|prozent\b|procent\b))?
    (?P<scale>\s*(?:millions?|mio\.?|mln|billions?|bn|milliards?|mrd\.?|thousands?|mil\x20millones|millones|milhões|milioni|miljoen)\b)?";

static NUMBER: LazyLock<Regex> =
    LazyLock::new(|| re(&[NUMBER_HEAD, GROUPED, NUMBER_TAIL].concat()));
static PLAIN: LazyLock<Regex> = LazyLock::new(|| re(&[NUMBER_HEAD, NUMBER_TAIL].concat()));

static NONE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:none|nil|nobody|no\s+one)\b|\bno\s+(?:[a-z-]+\s+){0,2}?([a-z-]+s)\b")
});

/// Ordinal suffixes in each language ("1st", "1er", "2e", "3º", "1o",
/// "8ste"); without a language, any of them.
fn ordinals(lang: Option<Lang>) -> &'static [&'static str] {
    const EN: &[&str] = &["st", "nd", "rd", "th"];
    const FR: &[&str] = &["er", "re", "ère", "e", "ème", "eme", "nd", "nde"];
    const ROMANCE: &[&str] = &["º", "ª", "o", "a", "°"];
    const DE: &[&str] = &["te", "ste", "ten", "sten"];
    const NL: &[&str] = &["e", "de", "ste"];
    const ANY: &[&str] = &[
        "st", "nd", "rd", "th", "er", "re", "ère", "e", "ème", "eme", "º", "ª", "o", "a", "te",
        "ste", "de",
    ];
    match lang {
        Some(Lang::En) => EN,
        Some(Lang::Fr) => FR,
        Some(Lang::Es | Lang::Pt | Lang::It) => ROMANCE,
        Some(Lang::De) => DE,
        Some(Lang::Nl) => NL,
        None => ANY,
    }
}

/// Whether what follows a number's digits makes it an ordinal in `lang`:
/// "1st", "2e", "3º", "2os", "22ᵒˢ". In English "120º/s" is an angle
/// and "Fig. 2a" a panel.
fn is_ordinal(tail: &str, lang: Option<Lang>) -> bool {
    // "1ST" is an ordinal; "2A" (a figure's panel) is a label.
    let upper = tail.chars().all(char::is_uppercase);
    if tail.is_empty() || (upper && tail.chars().count() < 2) {
        return false;
    }
    let t = tail.to_lowercase();
    let list = ordinals(lang);
    let singular = t.strip_suffix('s').unwrap_or(&t);
    list.contains(&t.as_str())
        || (t.chars().count() > 1 && list.contains(&singular))
        || (lang != Some(Lang::En)
            && t.starts_with(['º', 'ª', 'ᵉ', 'ᵒ', 'ᵃ', 'ʳ', 'ˢ', 'ᵗ', 'ʰ', 'ⁿ', 'ᵈ', 'ᵐ']))
}

/// Words after "no" that are not counted things ("no difference").
const NOT_COUNTS: &[&str] = &[
    "differences",
    "effects",
    "changes",
    "associations",
    "improvements",
    "signs",
    "evidence",
    "trends",
    "was",
    "has",
    "is",
    "as",
    "this",
    "less",
];

/// Where a spelled number's words are read in each language: the forms
/// `text2num` leaves alone or misreads, fixed before it runs.
struct Words {
    /// "hundreds of", "des centaines": no number.
    vague: Regex,
    /// Indefinite articles, which `text2num` reads as 1.
    article: Option<Regex>,
    /// "X and a half", "X ans et demi": the whole is X + a part.
    mixed: Regex,
    /// "two thirds", "un tiers", "die Hälfte".
    fraction: Regex,
    /// "one in five", "1 sur 5": the ratio (both numbers stay).
    one_in: Regex,
}

fn words_for(lang: Lang) -> &'static Words {
    static EN: LazyLock<Words> = LazyLock::new(|| Words {
        vague: re(r"(?i)\b(?:hundreds|thousands|millions|billions|dozens|scores|tens\s+of)\b"),
        article: None,
        mixed: re(
            r"(?i)\b(\d+(?:\.\d+)?|an?|one)\s+(?:(\p{L}+)\s+)?and\s+((?:a|one|1)\s+(?:half|quarter)|(?:3|three)\s+quarters)\b",
        ),
        fraction: re(
            r"(?i)\b(?:(an?|one|two|three|four|five|six|seven|eight|nine|ten|\d+)[\s-]+(halves|half|thirds?|3rds?|quarters?|fourths?|4ths?|fifths?|5ths?|sixths?|6ths?|sevenths?|7ths?|eighths?|8ths?|ninths?|9ths?|tenths?|10ths?)|(half)\s+(?:of|an?|the)|(half))\b",
        ),
        one_in: re(r"(?i)\b(\d+)\s+(?:in|out\s+of)\s+(\d+)\b"),
    });
    static FR: LazyLock<Words> = LazyLock::new(|| Words {
        vague: re(r"(?i)\b(?:centaines|milliers|dizaines|douzaines|vingtaines|trentaines)\b"),
        article: Some(re(r"(?i)\b(?:un|une)\b")),
        mixed: re(r"(?i)\b(\d+(?:[.,]\d+)?|une?)\s+(?:(\p{L}+)\s+)?et\s+(demie?|quart)\b"),
        fraction: re(
            r"(?i)\b(?:(une?|deux|trois|quatre|cinq|\d+)[\s-]+(demis?|tiers|quarts?|cinquièmes?|sixièmes?|dixièmes?)|(moitié))\b",
        ),
        one_in: re(r"(?i)\b(\d+)\s+sur\s+(\d+)\b"),
    });
    static ES: LazyLock<Words> = LazyLock::new(|| Words {
        vague: re(r"(?i)\b(?:centenares|cientos|miles|decenas|docenas)\b"),
        article: Some(re(r"(?i)\b(?:un|una)\b")),
        mixed: re(r"(?i)\b(\d+(?:[.,]\d+)?|una?|uno)\s+(?:(\p{L}+)\s+)?y\s+(medi[oa]|cuarto)\b"),
        fraction: re(
            r"(?i)\b(?:(una?|dos|tres|cuatro|\d+)\s+(medios?|tercios?|cuartos?|quintos?|3º|4º|5º)|(mitad))\b",
        ),
        one_in: re(r"(?i)\b(\d+)\s+de\s+cada\s+(\d+)\b"),
    });
    static PT: LazyLock<Words> = LazyLock::new(|| Words {
        vague: re(r"(?i)\b(?:centenas|milhares|dezenas|dúzias)\b"),
        article: Some(re(r"(?i)\b(?:um|uma)\b")),
        mixed: re(
            r"(?i)\b(\d+(?:[.,]\d+)?|uma?)\s+(?:(\p{L}+)\s+)?e\s+(mei[oa]|(?:um|1)\s+(?:quarto|4º))",
        ),
        fraction: re(
            r"(?i)\b(?:(uma?|dois|duas|três|\d+)\s+(meios?|terços?|quartos?|quintos?|3º|4º|5º)|(metade))\b",
        ),
        one_in: re(r"(?i)\b(\d+)\s+em\s+(?:cada\s+)?(\d+)\b"),
    });
    static IT: LazyLock<Words> = LazyLock::new(|| Words {
        vague: re(r"(?i)\b(?:centinaia|migliaia|decine|dozzine)\b"),
        article: Some(re(r"(?i)\b(?:un|una|uno)\b")),
        mixed: re(
            r"(?i)\b(\d+(?:[.,]\d+)?|una?|uno)\s+(?:(\p{L}+)\s+)?e\s+(mezz[oa]|(?:un|1)\s+(?:quarto|4º))",
        ),
        fraction: re(
            r"(?i)\b(?:(una?|uno|due|tre|\d+)\s+(mezz[oi]|terz[oi]|quart[oi]|quint[oi]|3º|4º|5º)|(metà))",
        ),
        one_in: re(r"(?i)\b(\d+)\s+su\s+(\d+)\b"),
    });
    static DE: LazyLock<Words> = LazyLock::new(|| Words {
        vague: re(r"(?i)\b(?:hunderte|tausende|dutzende)\b"),
        article: Some(re(r"(?i)\b(?:ein|eine|einen|einem|einer|eines)\b")),
        mixed: re(
            r"(?i)\b(\d+(?:[.,]\d+)?|eine?)\s+(?:(\p{L}+)\s+)?und\s+((?:ein|1)\s+(?:halb|viertel))\b",
        ),
        fraction: re(
            r"(?i)\b(?:(eine?|zwei|drei|vier|\d+)\s+(halbe[nsr]?|drittel|viertel|fünftel|zehntel)|(hälfte)|(dreiviertel))\b",
        ),
        one_in: re(r"(?i)\b(\d+)\s+von\s+(\d+)\b"),
    });
    static NL: LazyLock<Words> = LazyLock::new(|| Words {
        vague: re(r"(?i)\b(?:honderden|duizenden|tientallen|dozijnen)\b"),
        article: Some(re(r"(?i)\been\b")),
        mixed: re(
            r"(?i)\b(\d+(?:[.,]\d+)?|één|een)\s+(?:(\p{L}+)\s+)?en\s+((?:een|1)\s+(?:half|kwart))\b",
        ),
        fraction: re(
            r"(?i)\b(?:(één|een|twee|drie|vier|\d+)\s+(half|halve|derde|3e|kwart|vierde|4e|vijfde|5e)|(helft)|(driekwart))\b",
        ),
        one_in: re(r"(?i)\b(\d+)\s+op\s+(\d+)\b"),
    });
    match lang {
        Lang::En => &EN,
        Lang::Fr => &FR,
        Lang::Es => &ES,
        Lang::Pt => &PT,
        Lang::It => &IT,
        Lang::De => &DE,
        Lang::Nl => &NL,
    }
}

/// Words a count may follow that make an article a numeral ("un seul").
const ONLY: &[&str] = &[
    "seul", "seule", "seuls", "seules", "solo", "sola", "único", "única", "unico", "unica",
    "einzige", "einziger", "einzigen", "einziges", "enkele", "enkel", "apenas",
];

/// Words for the decimal point in spelled numbers ("un virgule cinq").
const POINT_WORDS: &[&str] = &[
    "point", "virgule", "coma", "punto", "vírgula", "virgola", "komma", "punt", "ponto",
];

/// Conjunctions inside a spelled number ("vingt et un", "vinte e um").
const AND_WORDS: &[&str] = &["et", "y", "e", "und", "en"];

/// The value of a small numerator word or digits.
fn small(word: &str) -> Option<f64> {
    let w = word.trim().to_lowercase();
    if let Ok(v) = w.replace(',', ".").parse::<f64>() {
        return Some(v);
    }
    Some(match w.as_str() {
        "a" | "an" | "one" | "un" | "une" | "una" | "uno" | "um" | "uma" | "ein" | "eine"
        | "een" | "één" => 1.0,
        "two" | "deux" | "dos" | "dois" | "duas" | "due" | "zwei" | "twee" => 2.0,
        "three" | "trois" | "tres" | "três" | "tre" | "drei" | "drie" => 3.0,
        "four" | "quatre" | "cuatro" | "vier" => 4.0,
        "five" | "cinq" => 5.0,
        "six" => 6.0,
        "seven" => 7.0,
        "eight" => 8.0,
        "nine" => 9.0,
        "ten" => 10.0,
        _ => return None,
    })
}

/// The denominator a fraction word names.
fn denominator(word: &str) -> Option<f64> {
    let w = word.to_lowercase();
    const TABLE: [(&[&str], f64); 9] = [
        (
            &[
                "half", "halve", "demi", "medio", "meio", "mezz", "halb", "helft",
            ],
            2.0,
        ),
        (
            &[
                "third", "3rd", "tier", "terc", "terç", "terz", "drittel", "derde", "3e", "3º",
            ],
            3.0,
        ),
        (
            &[
                "quart", "fourth", "4th", "cuart", "viertel", "kwart", "vierde", "4e", "4º",
            ],
            4.0,
        ),
        (
            &[
                "fifth", "5th", "cinqui", "quint", "fünftel", "vijfde", "5e", "5º",
            ],
            5.0,
        ),
        (&["sixth", "6th", "sixi"], 6.0),
        (&["seventh", "7th"], 7.0),
        (&["eighth", "8th"], 8.0),
        (&["ninth", "9th"], 9.0),
        (&["tenth", "10th", "dixi", "zehntel"], 10.0),
    ];
    TABLE
        .iter()
        .find(|(stems, _)| stems.iter().any(|s| w.starts_with(s)))
        .map(|(_, d)| *d)
}

/// The part a mixed number adds: "a half", "demi", "un quarto".
fn part(word: &str) -> f64 {
    let w = word.to_lowercase();
    if w.contains("three") || w.starts_with('3') || w.contains("drei") {
        0.75
    } else if w.contains("quar")
        || w.contains("cuart")
        || w.contains("viertel")
        || w.contains("kwart")
        || w.contains('4')
    {
        0.25
    } else {
        0.5
    }
}

/// What a spelled phrase leaves in the text once read: nothing a later
/// pass could read again.
const MASK: &str = " \u{B6} ";

/// Replaces every match of `re` in `text` that `read` reads (a value) by
/// [`MASK`], pushing the value; matches it declines stay.
fn take(
    text: &str,
    re: &Regex,
    out: &mut Vec<Reading>,
    mut read: impl FnMut(&Captures) -> Option<f64>,
) -> String {
    let mut s = String::with_capacity(text.len());
    let mut last = 0;
    for c in re.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        if let Some(v) = read(&c) {
            push(out, v, None);
            s.push_str(&text[last..m.start()]);
            s.push_str(MASK);
            last = m.end();
        }
    }
    s.push_str(&text[last..]);
    s
}

/// The word before byte `at`, and the one before that.
fn words_before(text: &str, at: usize) -> (Option<&str>, Option<&str>) {
    let mut it = text[..at]
        .rsplit(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty());
    (it.next(), it.next())
}

fn word_after(text: &str, at: usize) -> Option<&str> {
    text[at..]
        .split(|c: char| !c.is_alphabetic())
        .find(|w| !w.is_empty())
}

/// Forms `text2num` misses or misreads, settled before it runs: vague
/// plurals and articles masked, elisions and apocopes spelled out,
/// "zweieinhalb" and "anderhalf" read.
fn prepare(text: &str, lang: Lang, out: &mut Vec<Reading>) -> String {
    let w = words_for(lang);
    let l = lang.language();
    let is_number = |w: Option<&str>| w.is_some_and(|w| text2digits(w, &l).is_ok());
    // "hundreds of" states no number; "sixty hundreds" is 6000.
    let mut t = String::with_capacity(text.len());
    let mut last = 0;
    for m in w.vague.find_iter(text) {
        let (prev, _) = words_before(text, m.start());
        let after_digits = text[..m.start()]
            .trim_end()
            .ends_with(|c: char| c.is_ascii_digit());
        if is_number(prev) || after_digits {
            continue;
        }
        t.push_str(&text[last..m.start()]);
        t.push_str(MASK);
        last = m.end();
    }
    t.push_str(&text[last..]);
    match lang {
        Lang::En => {
            static NO_ONE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\bno\s+one\b"));
            t = NO_ONE.replace_all(&t, MASK).into_owned();
        }
        Lang::Es => {
            // "veintiún pacientes": the apocope text2num does not know.
            static APOCOPE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\bveintiún\b"));
            t = APOCOPE.replace_all(&t, "veintiuno").into_owned();
        }
        Lang::It => {
            static ELIDED: LazyLock<Regex> = LazyLock::new(|| {
                re(r"(?i)\b(vent|trent|quarant|cinquant|sessant|settant|ottant|novant)['’]")
            });
            t = ELIDED
                .replace_all(&t, |c: &Captures| {
                    let stem = c[1].to_lowercase();
                    let end = if stem == "vent" { "i " } else { "a " };
                    format!("{}{end}", &c[1])
                })
                .into_owned();
        }
        Lang::De | Lang::Nl => {
            // "anderthalb", "zweieinhalb"; "anderhalf", "tweeënhalf".
            static DE: LazyLock<Regex> =
                LazyLock::new(|| re(r"(?i)\b(?:(anderthalb)|(\p{L}+?)einhalb)\b"));
            static NL: LazyLock<Regex> =
                LazyLock::new(|| re(r"(?i)\b(?:(anderhalf)|(\p{L}+?)(?:ë|e)nhalf)\b"));
            let half: &Regex = if lang == Lang::De { &DE } else { &NL };
            t = take(&t, half, out, |c| {
                if c.get(1).is_some() {
                    return Some(1.5);
                }
                let n = text2digits(&c[2], &l).ok()?.parse::<f64>().ok()?;
                Some(n + 0.5)
            });
        }
        _ => {}
    }
    t
}

/// Masks the lone indefinite articles of `t`, which `text2num` would
/// read as the number one. An article stays where it is a word of a larger
/// number ("vingt et un", "un million"), of a sequence ("un, deux, trois"),
/// of a fraction ("un tiers"), or says "only one" ("un seul").
fn mask_articles(t: &str, lang: Lang) -> String {
    let Some(article) = &words_for(lang).article else {
        return t.to_string();
    };
    let l = lang.language();
    let is_number = |w: Option<&str>| w.is_some_and(|w| text2digits(w, &l).is_ok());
    let mut s = String::with_capacity(t.len());
    let mut last = 0;
    for m in article.find_iter(t) {
        let (prev, prev2) = words_before(t, m.start());
        let next = word_after(t, m.end());
        let part_of_number = is_number(prev)
            || (prev.is_some_and(|p| AND_WORDS.contains(&p.to_lowercase().as_str()))
                && is_number(prev2));
        let only = next.is_some_and(|n| ONLY.contains(&n.to_lowercase().as_str()));
        // "un, deux, trois", "un million", "um vírgula um".
        let in_sequence = is_number(next)
            || next.is_some_and(|n| text2digits(&format!("{} {n}", m.as_str()), &l).is_ok())
            || next.is_some_and(|n| POINT_WORDS.contains(&n.to_lowercase().as_str()))
            || prev.is_some_and(|p| POINT_WORDS.contains(&p.to_lowercase().as_str()));
        let fraction = next.is_some_and(|n| denominator(n).is_some());
        if next.is_none() || part_of_number || only || in_sequence || fraction {
            continue;
        }
        s.push_str(&t[last..m.start()]);
        s.push_str(MASK);
        last = m.end();
    }
    s.push_str(&t[last..]);
    s
}

/// Mixed numbers ("2 and a half") in `text`, read and masked.
fn mixed(text: &str, lang: Lang, out: &mut Vec<Reading>) -> String {
    take(text, &words_for(lang).mixed, out, |c| {
        Some(small(&c[1])? + part(&c[3]))
    })
}

/// Mixed numbers and fractions in `text` once its number words are
/// digits ("2 and a half", "2 3rds", "a quarter"), read and masked.
fn phrases(text: &str, lang: Lang, out: &mut Vec<Reading>) -> String {
    let w = words_for(lang);
    let t = mixed(text, lang, out);
    take(&t, &w.fraction, out, |c| {
        // Numerator and denominator, or a word that is a fraction alone.
        match (c.get(1), c.get(2)) {
            (Some(n), Some(d)) => Some(small(n.as_str())? / denominator(d.as_str())?),
            _ => {
                let whole = c.get(0)?.as_str().to_lowercase();
                Some(if whole.contains("drei") || whole.contains("drie") {
                    0.75
                } else {
                    0.5
                })
            }
        }
    })
}

/// "one in five": the ratio, beside the two numbers.
fn ratios(text: &str, lang: Lang, out: &mut Vec<Reading>) {
    for c in words_for(lang).one_in.captures_iter(text) {
        if let (Ok(a), Ok(b)) = (c[1].parse::<f64>(), c[2].parse::<f64>()) {
            if b > 0.0 && a <= b {
                push(out, a / b, None);
            }
        }
    }
}

fn push(out: &mut Vec<Reading>, v: f64, ambiguous: Option<String>) {
    if !v.is_finite() {
        return;
    }
    match out
        .iter_mut()
        .find(|r| (r.value - v).abs() <= 1e-12 * v.abs().max(1.0))
    {
        // A reading the writing decides elsewhere is decided.
        Some(r) => {
            if ambiguous.is_none() {
                r.ambiguous = None;
            }
        }
        None => out.push(Reading {
            value: v,
            ambiguous,
        }),
    }
}

/// Every reading of the numbers `text` states, in order of appearance.
/// `lang` is the language whose number words and decimal habits apply
/// (`None`: digits only, read as English writes them); `decimal` is how the
/// surrounding text writes its decimals, when known (see
/// [`decimal_convention`]), which settles "1,204" in a language that writes
/// decimal commas.
///
/// ```
/// use quarry_udfs::numbers_in::{readings_in, Lang};
/// let r = readings_in("1,204 pacientes", Some(Lang::Es), None);
/// assert!(r.iter().all(|r| r.ambiguous.is_some()));
/// let r = readings_in("1,204 patients", Some(Lang::En), None);
/// assert_eq!((r[0].value, r.len()), (1204.0, 1));
/// ```
pub fn readings_in(text: &str, lang: Option<Lang>, decimal: Option<Decimal>) -> Vec<Reading> {
    let mut out = Vec::new();
    let Some(l) = lang else {
        scan_digits(text, None, decimal, true, &mut out);
        return out;
    };
    // Digits: mixed numbers first ("2 and a half"), then the rest.
    let t = prepare(text, l, &mut out);
    ratios(&t, l, &mut out);
    let t = mixed(&t, l, &mut out);
    let t = mask_articles(&t, l);
    let masked = scan_digits(&t, lang, decimal, true, &mut out);
    // Words, with the digits masked so "1.2 million" is not read again as
    // "1.2" and "1000000"; what text2num writes has the language's decimals.
    let spelled = replace_numbers_in_text(&masked, &l.language(), 0.0);
    ratios(&spelled, l, &mut out);
    let spelled = phrases(&spelled, l, &mut out);
    scan_digits(&spelled, lang, Some(l.decimal()), false, &mut out);
    if l == Lang::En {
        zeros(text, &mut out);
    }
    out
}

/// Every number `text` states, in order of appearance, without repeats: the
/// values of [`readings_in`], with the language detected from the text
/// when not given and the decimal convention taken from the text.
///
/// ```
/// use quarry_udfs::numbers_in::numbers_in;
/// let v = numbers_in("Fifty-four percent of 1,204 patients (0·84) had 3.2 x 10^-5.", None);
/// for x in [54.0, 0.54, 1204.0, 0.84, 3.2e-5] {
///     assert!(v.iter().any(|y| (y - x).abs() < 1e-12), "{x} in {v:?}");
/// }
/// assert!(numbers_in("at the first visit", None).is_empty());
/// assert_eq!(numbers_in("Of the 3 400 women screened, 412 were eligible.", None), vec![3400.0, 412.0]);
/// ```
pub fn numbers_in(text: &str, lang: Option<Lang>) -> Vec<f64> {
    let lang = lang.or_else(|| Lang::detect(text));
    readings_in(text, lang, decimal_convention(text))
        .into_iter()
        .map(|r| r.value)
        .collect()
}

/// "no deaths", "none": zero.
fn zeros(text: &str, out: &mut Vec<Reading>) {
    for m in NONE.captures_iter(text) {
        match m.get(1) {
            None => push(out, 0.0, None),
            Some(w) if !NOT_COUNTS.contains(&w.as_str().to_lowercase().as_str()) => {
                push(out, 0.0, None)
            }
            Some(_) => {}
        }
    }
}

fn superscript(c: char) -> char {
    match c {
        '⁰' => '0',
        '¹' => '1',
        '²' => '2',
        '³' => '3',
        '⁴' => '4',
        '⁵' => '5',
        '⁶' => '6',
        '⁷' => '7',
        '⁸' => '8',
        '⁹' => '9',
        '⁻' | '−' => '-',
        c => c,
    }
}

fn scale_of(word: &str) -> f64 {
    let w = word.trim().to_lowercase();
    if w.starts_with("thousand") {
        1e3
    } else if w.starts_with("bn")
        || w.starts_with("billion")
        || w.starts_with("milliard")
        || w.starts_with("mrd")
        || w == "mil millones"
    {
        1e9
    } else {
        1e6
    }
}

fn is_group_space(c: char) -> bool {
    matches!(c, ' ' | '\u{00A0}' | '\u{202F}' | '\u{2009}')
}

/// The readings of one written number, and why the writing is ambiguous
/// when it is. `lang` and `decimal` settle a lone "1,204" or "1.204".
fn readings(num: &str, lang: Option<Lang>, decimal: Option<Decimal>) -> (Vec<f64>, Option<String>) {
    let n: String = num
        .chars()
        .map(|c| if c == '·' { '.' } else { c })
        .collect();
    let parse = |s: &str| s.parse::<f64>().ok();
    if n.contains(is_group_space) {
        // "3 400", "3 400,5": groups (the pattern made them valid) and a
        // decimal part after a point or comma.
        let joined: String = n.chars().filter(|c| !is_group_space(*c)).collect();
        return (parse(&joined.replace(',', ".")).into_iter().collect(), None);
    }
    let commas = n.matches(',').count();
    let points = n.matches('.').count();
    match (commas, points) {
        (0, 0) => (parse(&n).into_iter().collect(), None),
        (c, p) if c > 0 && p > 0 => {
            // "1,204.5" or "1.204,5": the last separator is the decimal point.
            let (thou, dec) = if n.rfind(',') > n.rfind('.') {
                ('.', ',')
            } else {
                (',', '.')
            };
            (
                parse(&n.replace(thou, "").replace(dec, "."))
                    .into_iter()
                    .collect(),
                None,
            )
        }
        (c, 0) if c > 1 => (parse(&n.replace(',', "")).into_iter().collect(), None),
        (0, p) if p > 1 => (parse(&n.replace('.', "")).into_iter().collect(), None),
        _ => {
            let sep = if commas == 1 { ',' } else { '.' };
            let (a, b) = n.split_once(sep).unwrap_or((&n, ""));
            let as_decimal = parse(&format!("{a}.{b}"));
            let as_thousands = parse(&format!("{a}{b}"));
            let grouping = b.len() == 3 && !a.is_empty() && a.len() <= 3 && !a.starts_with('0');
            if !grouping {
                return (as_decimal.into_iter().collect(), None);
            }
            // "1,204" or "1.204".
            let comma_language = lang.is_some_and(Lang::decimal_comma);
            let sep_is_decimal = if !comma_language {
                Some(sep == '.') // English: a comma groups, a point is decimal
            } else {
                decimal.map(|d| (d == Decimal::Comma) == (sep == ','))
            };
            match sep_is_decimal {
                Some(true) => (as_decimal.into_iter().collect(), None),
                Some(false) => (as_thousands.into_iter().collect(), None),
                None => {
                    let name = lang.map_or("this", Lang::name);
                    let sep_name = if sep == ',' { "comma" } else { "point" };
                    let why = format!(
                        "'{num}' is {a}{b} or {a}.{b} in {name} text (a thousands {sep_name} or a decimal {sep_name}), and the text writes no other decimal that would tell"
                    );
                    (
                        as_thousands.into_iter().chain(as_decimal).collect(),
                        Some(why),
                    )
                }
            }
        }
    }
}

/// Numbers written with digits, pushed to `out`; returns the text with
/// them masked.
///
/// `grouped` reads digit groups as thousands ("3 400"); `text2num` writes
/// the numbers it spells out without groups, and two of them side by side
/// ("achtundachtzig siebenhundert" is "88 700") are two numbers.
fn scan_digits(
    text: &str,
    lang: Option<Lang>,
    decimal: Option<Decimal>,
    grouped: bool,
    out: &mut Vec<Reading>,
) -> String {
    let mut masked = String::with_capacity(text.len());
    let mut last = 0;
    let mut pos = 0;
    let re: &Regex = if grouped { &NUMBER } else { &PLAIN };
    while let Some(mut c) = re.captures_at(text, pos) {
        let Some(mut num) = c.name("num") else { break };
        // A grouping a digit follows ("3 4000", "1,2045") was none.
        if text[num.end()..].starts_with(|ch: char| ch.is_ascii_digit()) {
            let Some(p) = c.get(0).and_then(|m| PLAIN.captures_at(text, m.start())) else {
                break;
            };
            c = p;
            let Some(n) = c.name("num") else { break };
            num = n;
        }
        let Some(whole) = c.get(0) else { break };
        pos = whole.end().max(pos + 1);
        while !text.is_char_boundary(pos) {
            pos += 1;
        }
        // A number glued to a word ("COVID19", "H1N1") is a name, not a figure.
        if text[..num.start()]
            .chars()
            .next_back()
            .is_some_and(|ch| ch.is_alphabetic())
        {
            continue;
        }
        masked.push_str(&text[last..num.start()]);
        masked.push_str(MASK);
        last = whole.end();
        let tail = c.name("tail").map_or("", |m| m.as_str());
        if is_ordinal(tail, lang)
            && !num.as_str().contains(['.', ',', '·'])
            && c.name("eexp").is_none()
        {
            continue; // "1st", "2e": an ordinal states no count
        }
        let negative = c
            .name("sign")
            .is_some_and(|s| s.as_str().ends_with(['-', '−']));
        let sign = if negative { -1.0 } else { 1.0 };
        let exp = c.name("exp").or(c.name("eexp")).and_then(|e| {
            let s: String = e
                .as_str()
                .chars()
                .map(superscript)
                .filter(|c| !c.is_whitespace() && *c != '+')
                .collect();
            s.parse::<i32>().ok()
        });
        let pct = c.name("pct").is_some();
        let scale = c.name("scale").map(|s| scale_of(s.as_str()));
        let (values, why) = readings(num.as_str(), lang, decimal);
        for v in values {
            let v = sign * v;
            match exp {
                // Dividing keeps 3.2 x 10^-5 the nearest double to 0.000032.
                Some(e) if e < 0 => push(out, v / 10f64.powi(-e), why.clone()),
                Some(e) => push(out, v * 10f64.powi(e), why.clone()),
                None => push(out, v, why.clone()),
            }
            if pct {
                push(out, v / 100.0, why.clone());
            }
            if let Some(s) = scale {
                push(out, v * s, why.clone());
            }
        }
    }
    masked.push_str(&text[last..]);
    masked
}

#[cfg(feature = "sql")]
pub use adapter::NumbersIn;

/// The DataFusion adapter (with the `sql` feature).
#[cfg(feature = "sql")]
mod adapter {
    use super::*;

    /// The `numbers_in` SQL function: a list of DOUBLE. NULL text gives NULL;
    /// an unknown language code is an error naming the accepted ones.
    #[derive(Debug, PartialEq, Eq, Hash)]
    pub struct NumbersIn {
        signature: Signature,
    }

    impl Default for NumbersIn {
        fn default() -> Self {
            Self {
                signature: Signature::one_of(
                    vec![TypeSignature::Any(1), TypeSignature::Any(2)],
                    Volatility::Immutable,
                ),
            }
        }
    }

    impl ScalarUDFImpl for NumbersIn {
        fn name(&self) -> &str {
            "numbers_in"
        }
        fn signature(&self) -> &Signature {
            &self.signature
        }
        fn return_type(&self, _: &[DataType]) -> Result<DataType> {
            Ok(DataType::new_list(DataType::Float64, true))
        }
        fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let lang = match args.args.get(1) {
                None => None,
                Some(ColumnarValue::Scalar(s)) => match s.cast_to(&DataType::Utf8)? {
                    ScalarValue::Utf8(None) => None,
                    ScalarValue::Utf8(Some(code)) => match Lang::parse(&code) {
                        Some(l) => Some(l),
                        None => {
                            return plan_err!(
                        "numbers_in: unknown language '{code}'; use en, fr, es, pt, it, de or nl"
                    )
                        }
                    },
                    _ => return exec_err!("numbers_in: the language must be a string"),
                },
                Some(_) => return plan_err!("numbers_in: the language must be a constant"),
            };
            let text = args.args[0].to_array(args.number_rows)?;
            let text = string_array(&text, "numbers_in", "text")?;
            let mut out = ListBuilder::new(Float64Builder::new());
            for row in text.iter() {
                match row {
                    None => out.append(false),
                    Some(t) => {
                        for v in numbers_in(t, lang) {
                            out.values().append_value(v);
                        }
                        out.append(true);
                    }
                }
            }
            let arr: ArrayRef = Arc::new(out.finish());
            debug_assert_eq!(arr.len(), args.number_rows);
            Ok(ColumnarValue::Array(arr))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(v: &[f64], x: f64) -> bool {
        v.iter().any(|y| (y - x).abs() <= 1e-9 * x.abs().max(1.0))
    }

    #[test]
    fn the_forms_seed_000_lists() {
        let cases: [(&str, &[f64]); 14] = [
            ("1,204 patients", &[1204.0]),
            ("1 204 patients", &[1204.0]),
            ("a ratio of 0,45", &[0.45]),
            (
                "HR 0·84 (95% CI 0·71–0·99)",
                &[0.84, 0.71, 0.99, 95.0, 0.95],
            ),
            ("p = 3.2 x 10^-5", &[3.2e-5]),
            ("p = 3.2 × 10⁻⁵", &[3.2e-5]),
            ("revenue of 1.2 million", &[1.2e6]),
            ("it cost $1.2 bn", &[1.2e9]),
            ("54% responded", &[54.0, 0.54]),
            ("Fifty-four percent responded", &[54.0, 0.54]),
            ("a quarter of them", &[0.25]),
            ("one in five patients", &[0.2]),
            ("two and a half years", &[2.5]),
            ("Twenty-four adults and three children", &[24.0, 3.0]),
        ];
        for (t, want) in cases {
            let v = numbers_in(t, None);
            for &x in want {
                assert!(has(&v, x), "{t}: {x} not in {v:?}");
            }
        }
    }

    #[test]
    fn zero_only_where_it_counts() {
        assert!(has(&numbers_in("There were no deaths.", None), 0.0));
        assert!(has(
            &numbers_in("None of the patients withdrew.", None),
            0.0
        ));
        assert!(!has(
            &numbers_in("There was no difference between the groups.", None),
            0.0
        ));
        assert!(numbers_in("at the first visit", None).is_empty());
    }

    #[test]
    fn other_languages() {
        assert!(has(
            &numbers_in("veinticuatro pacientes", Some(Lang::Es)),
            24.0
        ));
        assert!(has(
            &numbers_in("vierundzwanzig Patienten", Some(Lang::De)),
            24.0
        ));
        assert!(has(
            &numbers_in("un coût de 1,2 millions d'euros", Some(Lang::Fr)),
            1.2e6
        ));
        assert!(has(
            &numbers_in("Il y avait vingt-quatre patients dans le groupe", None),
            24.0
        ));
    }

    #[test]
    fn names_and_unread_scripts() {
        assert!(!has(&numbers_in("COVID19 and H1N1", None), 19.0));
        assert!(has(
            &numbers_in("В исследовании участвовали 240 человек", None),
            240.0
        ));
    }
}

#[cfg(test)]
mod text2num_vectors {
    use super::{numbers_in, scan_digits};

    /// The text2num crate's own test vectors (testdata/text2num,
    /// MIT) through `numbers_in`: for a whole number expression the value must
    /// be among the numbers found; for running text, every number the crate
    /// writes must be. `text2digits_is_err` cases (inputs the crate rejects as
    /// one number, such as "twenty twelve") are not checked: `numbers_in`
    /// reads the numbers a text contains, and such texts do contain some.
    #[test]
    fn text2num_vectors_pass_through_numbers_in() {
        let (mut pass, mut total) = (0, 0);
        let mut fails = Vec::new();
        for c in crate::util::number_word_cases() {
            let (lang, kind, input, expected) = (
                c.lang,
                c.kind.as_str(),
                c.input.as_str(),
                c.expected.as_str(),
            );
            let code = format!("{lang:?}");
            {
                let want: Vec<f64> = match kind {
                    "text2digits" => expected
                        .replace(',', ".")
                        .parse::<f64>()
                        .ok()
                        .into_iter()
                        .collect(),
                    k if k.starts_with("replace_numbers_in_text") => {
                        let mut w = Vec::new();
                        scan_digits(expected, Some(lang), Some(lang.decimal()), false, &mut w);
                        w.into_iter().map(|r| r.value).collect()
                    }
                    _ => continue,
                };
                // Deliberate: ordinals ("thousandth", "millionth") state no
                // count, as "the first visit" states no 1.
                if want.is_empty() || ["un millième", "un millionième"].contains(&input) {
                    continue;
                }
                total += 1;
                let got = numbers_in(input, Some(lang));
                let ok = want
                    .iter()
                    .all(|x| got.iter().any(|y| (y - x).abs() <= 1e-9 * x.abs().max(1.0)));
                if ok {
                    pass += 1;
                } else {
                    fails.push(format!(
                        "{code} {kind}: {input:?} -> {got:?}, want {want:?}"
                    ));
                }
            }
        }
        for f in &fails {
            eprintln!("{f}");
        }
        eprintln!("text2num vectors: {pass}/{total}");
        assert!(total > 400, "{total}");
        assert!(
            pass == total,
            "{} of {total} text2num vectors fail",
            total - pass
        );
    }
}
