//! `numbers_in(text [, lang])`: every number a text states, in the forms
//! papers write them: "1,204", "1 204", "0,45", "0·84", "3.2 x 10^-5",
//! "10⁻⁵", "1.2 million", "$1.2 bn", "54%" (54 and 0.54), number words in
//! English, French, Spanish, Portuguese, Italian, German and Dutch (through
//! the `text2num` crate), "a quarter", "one in five", "two and a half", and
//! "no deaths" / "none" as zero. "the first visit" states no 1, and "no
//! difference" states no zero.
//!
//! The list is generous where a form is ambiguous ("1,204" in a French text
//! is given as 1204 and 1.204): it answers "does this text state N?", so a
//! reading a reader could make is kept.

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, ArrayRef, Float64Builder, ListBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};
use regex::Regex;
use text2num::{replace_numbers_in_text, Language};

use crate::util::string_array;

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

    fn language(self) -> Language {
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

    /// Whether a decimal comma is the usual spelling.
    fn decimal_comma(self) -> bool {
        self != Self::En
    }

    /// Guesses the language of a text from its commonest short words;
    /// `None` when it has no Latin-script words to go on.
    pub fn detect(text: &str) -> Option<Self> {
        const WORDS: [(Lang, &[&str]); 7] = [
            (
                Lang::En,
                &[
                    "the", "and", "of", "was", "were", "with", "in", "to", "a", "patients", "is",
                    "for",
                ],
            ),
            (
                Lang::Fr,
                &[
                    "le", "la", "les", "des", "et", "est", "une", "du", "dans", "avec", "pour",
                    "sont",
                ],
            ),
            (
                Lang::Es,
                &[
                    "el", "los", "las", "y", "del", "una", "con", "por", "para", "fue", "es", "en",
                ],
            ),
            (
                Lang::Pt,
                &[
                    "o", "os", "as", "e", "do", "da", "uma", "com", "não", "foi", "para", "em",
                ],
            ),
            (
                Lang::It,
                &[
                    "il", "gli", "della", "di", "e", "che", "una", "con", "per", "sono", "è", "nel",
                ],
            ),
            (
                Lang::De,
                &[
                    "der", "die", "das", "und", "mit", "ist", "ein", "eine", "wurde", "von", "zu",
                    "nicht",
                ],
            ),
            (
                Lang::Nl,
                &[
                    "de", "het", "een", "en", "van", "met", "is", "werd", "zijn", "niet", "op",
                    "voor",
                ],
            ),
        ];
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphabetic())
            .filter(|w| !w.is_empty())
            .collect();
        if !words.iter().any(|w| {
            w.chars()
                .all(|c| c.is_ascii_alphabetic() || "àâäçéèêëîïôöùûüÿñáíóúãõœæß".contains(c))
        }) {
            return None;
        }
        let mut best = (Lang::En, 0usize);
        for (lang, list) in WORDS {
            let n = words.iter().filter(|w| list.contains(w)).count();
            if n > best.1 {
                best = (lang, n);
            }
        }
        Some(best.0)
    }
}

static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?xi)
        (?P<sign>(?:^|[\s(\[=<>:;])[-−+])?
        (?P<num>
            \d{1,3}(?:(?:,\d{3})+|(?:\.\d{3}){2,}|(?:[\x20\u{00A0}\u{202F}\u{2009}]\d{3})+)(?:[.·,]\d+)?
          | \d+(?:[.·,]\d+)?
          | [.·]\d+
        )
        (?P<sci>\s*[x×\*]\s*10\s*(?:\^\s*)?(?P<exp>(?:[-−⁻]\s*)?[0-9⁰¹²³⁴⁵⁶⁷⁸⁹]+))?
        (?P<tail>[a-zºª]*)
        (?P<pct>\s*(?:%|percent\b|per\x20cent\b|pour\x20cent\b|por\x20ciento\b|por\x20cento\b|per\x20cento\b|prozent\b|procent\b))?
        (?P<scale>\s*(?:millions?|mio\.?|mln|billions?|bn|milliards?|mrd\.?|thousands?|mil\x20millones|millones|milhões|milioni|miljoen)\b)?",
    )
    .unwrap_or_else(|_| unreachable!("static regex"))
});

static FRACTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(a|one|two|three)\s+(half|halves|third|thirds|quarter|quarters|fifth|fifths)\b",
    )
    .unwrap_or_else(|_| unreachable!())
});
static AND_A_HALF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(\d+(?:\.\d+)?)\s+and\s+a\s+half\b").unwrap_or_else(|_| unreachable!())
});
static ONE_IN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(\d+)\s+(?:in|out\s+of)\s+(\d+)\b").unwrap_or_else(|_| unreachable!())
});
static NONE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:none|nil|nobody|no\s+one)\b|\bno\s+(?:[a-z-]+\s+){0,2}?([a-z-]+s)\b")
        .unwrap_or_else(|_| unreachable!())
});

/// Ordinal suffixes: "1st", "2nd", "1er", "2e", "3º".
const ORDINAL: &[&str] = &[
    "st", "nd", "rd", "th", "er", "re", "ère", "e", "ème", "eme", "º", "ª", "o", "a", "te", "ste",
];

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

/// Readings of one written number ("1,204" may be 1204 or, with a decimal
/// comma, 1.204).
fn readings(num: &str, lang: Option<Lang>) -> Vec<f64> {
    let n: String = num
        .chars()
        .map(|c| if c == '·' { '.' } else { c })
        .filter(|c| !matches!(c, '\u{00A0}' | '\u{202F}' | '\u{2009}'))
        .collect();
    let comma_decimal = lang.is_some_and(Lang::decimal_comma);
    let mut out = Vec::new();
    let has_comma = n.contains(',');
    let has_dot = n.contains('.');
    let parse = |s: &str| s.parse::<f64>().ok();
    if n.contains(' ') {
        // "1 204": one number, or two written side by side.
        out.extend(parse(&n.replace(' ', "").replace(',', ".")));
        out.extend(n.split(' ').filter_map(|p| parse(&p.replace(',', "."))));
        return out;
    }
    match (has_comma, has_dot) {
        (false, false) => out.extend(parse(&n)),
        (true, false) => {
            let groups: Vec<&str> = n.split(',').collect();
            let thousands = groups.len() > 1 && groups[1..].iter().all(|g| g.len() == 3);
            if thousands {
                out.extend(parse(&n.replace(',', "")));
            }
            if groups.len() == 2 && (!thousands || comma_decimal) {
                out.extend(parse(&n.replace(',', ".")));
            }
        }
        (false, true) => {
            let groups: Vec<&str> = n.split('.').collect();
            if groups.len() == 2 {
                out.extend(parse(&n));
                if comma_decimal && groups[1].len() == 3 {
                    out.extend(parse(&n.replace('.', "")));
                }
            } else {
                out.extend(parse(&n.replace('.', "")));
            }
        }
        (true, true) => {
            // "1,204.5" or "1.204,5": the last separator is the decimal point.
            let (thou, dec) = if n.rfind(',') > n.rfind('.') {
                ('.', ',')
            } else {
                (',', '.')
            };
            out.extend(parse(&n.replace(thou, "").replace(dec, ".")));
        }
    }
    out
}

/// Every number `text` states, in order of appearance, without repeats.
///
/// ```
/// use quarry_udfs::numbers_in::numbers_in;
/// let v = numbers_in("Fifty-four percent of 1,204 patients (0·84) had 3.2 x 10^-5.", None);
/// for x in [54.0, 0.54, 1204.0, 0.84, 3.2e-5] {
///     assert!(v.iter().any(|y| (y - x).abs() < 1e-12), "{x} in {v:?}");
/// }
/// assert!(numbers_in("at the first visit", None).is_empty());
/// ```
pub fn numbers_in(text: &str, lang: Option<Lang>) -> Vec<f64> {
    let lang = lang.or_else(|| Lang::detect(text));
    let mut out: Vec<f64> = Vec::new();
    // Numbers written in digits, with their scale words and percent signs.
    scan_digits(text, lang, &mut out);
    // Number words, read with the digit forms masked out, so "1.2 million"
    // is not read again as "1.2" and "1000000".
    if let Some(l) = lang {
        let masked = NUMBER.replace_all(text, " \u{B6} ");
        let replaced = replace_numbers_in_text(&masked, &l.language(), 0.0);
        scan_digits(&replaced, lang, &mut out);
        phrases(&replaced, l, &mut out);
    }
    if let Some(l) = lang {
        phrases(text, l, &mut out);
    }
    out
}

fn push(v: f64, out: &mut Vec<f64>) {
    if v.is_finite()
        && !out
            .iter()
            .any(|x| (x - v).abs() <= 1e-12 * v.abs().max(1.0))
    {
        out.push(v);
    }
}

/// Fractions, "X and a half", "one in five", and zero counts.
fn phrases(text: &str, lang: Lang, out: &mut Vec<f64>) {
    for c in ONE_IN.captures_iter(text) {
        if let (Ok(a), Ok(b)) = (c[1].parse::<f64>(), c[2].parse::<f64>()) {
            if b > 0.0 && a <= b {
                push(a / b, out);
            }
        }
    }
    if lang != Lang::En {
        return;
    }
    for c in FRACTION.captures_iter(text) {
        let k = match c[1].to_lowercase().as_str() {
            "two" => 2.0,
            "three" => 3.0,
            _ => 1.0,
        };
        let d = match c[2].to_lowercase().trim_end_matches('s') {
            "half" | "halve" => 2.0,
            "third" => 3.0,
            "quarter" => 4.0,
            _ => 5.0,
        };
        push(k / d, out);
    }
    for c in AND_A_HALF.captures_iter(text) {
        if let Ok(v) = c[1].parse::<f64>() {
            push(v + 0.5, out);
        }
    }
    for m in NONE.captures_iter(text) {
        match m.get(1) {
            None => push(0.0, out),
            Some(w) if !NOT_COUNTS.contains(&w.as_str().to_lowercase().as_str()) => push(0.0, out),
            Some(_) => {}
        }
    }
}

/// Numbers written with digits.
fn scan_digits(text: &str, lang: Option<Lang>, out: &mut Vec<f64>) {
    for c in NUMBER.captures_iter(text) {
        let Some(num) = c.name("num") else { continue };
        // A number glued to a word ("COVID19", "H1N1") is a name, not a figure.
        if text[..num.start()]
            .chars()
            .next_back()
            .is_some_and(|ch| ch.is_alphabetic())
        {
            continue;
        }
        let tail = c.name("tail").map_or("", |m| m.as_str());
        if !tail.is_empty()
            && ORDINAL.contains(&tail.to_lowercase().as_str())
            && !num.as_str().contains(['.', ',', '·'])
        {
            continue; // "1st", "2e": an ordinal states no count
        }
        let negative = c
            .name("sign")
            .is_some_and(|s| s.as_str().trim_start().starts_with(['-', '−']));
        let sign = if negative { -1.0 } else { 1.0 };
        let exp = c.name("exp").and_then(|e| {
            let s: String = e
                .as_str()
                .chars()
                .map(superscript)
                .filter(|c| !c.is_whitespace())
                .collect();
            s.parse::<i32>().ok()
        });
        let pct = c.name("pct").is_some();
        let scale = c.name("scale").map(|s| scale_of(s.as_str()));
        for v in readings(num.as_str(), lang) {
            let v = sign * v;
            match exp {
                // Dividing keeps 3.2 x 10^-5 the nearest double to 0.000032.
                Some(e) if e < 0 => push(v / 10f64.powi(-e), out),
                Some(e) => push(v * 10f64.powi(e), out),
                None => push(v, out),
            }
            if pct {
                push(v / 100.0, out);
            }
            if let Some(s) = scale {
                push(v * s, out);
            }
        }
    }
}

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
    use super::{numbers_in, scan_digits, Lang};

    /// The text2num crate's own test vectors (../shared/data/fixtures/text2num,
    /// MIT) through `numbers_in`: for a whole number expression the value must
    /// be among the numbers found; for running text, every number the crate
    /// writes must be. `text2digits_is_err` cases (inputs the crate rejects as
    /// one number, such as "twenty twelve") are not checked: `numbers_in`
    /// reads the numbers a text contains, and such texts do contain some.
    #[test]
    fn text2num_vectors_pass_through_numbers_in() {
        let v = crate::util::shared_fixture("text2num/text2num_rs_test_vectors.json");
        let (mut pass, mut total) = (0, 0);
        let mut fails = Vec::new();
        for (code, cases) in v["cases"].as_object().expect("cases") {
            let Some(lang) = Lang::parse(code) else {
                continue;
            }; // Danish is not read
            for c in cases.as_array().expect("list") {
                let kind = c["kind"].as_str().unwrap_or_default();
                let input = c["input"].as_str().unwrap_or_default();
                let expected = c["expected"].as_str().unwrap_or_default();
                let want: Vec<f64> = match kind {
                    "text2digits" => expected
                        .replace(',', ".")
                        .parse::<f64>()
                        .ok()
                        .into_iter()
                        .collect(),
                    k if k.starts_with("replace_numbers_in_text") => {
                        let mut w = Vec::new();
                        scan_digits(expected, Some(lang), &mut w);
                        w
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
