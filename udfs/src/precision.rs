//! Verification precision, generated rather than hand-picked: quotes from
//! the Evidence Inference 2.0 spans (doctors' evidence sentences, MIT) and
//! the `text2num` crate's number-word vectors (MIT), each paired with the
//! values it states and with wrong values made from them: off by one, a
//! digit dropped, two digits swapped, a part of a grouped or decimal number,
//! the other number of a range read as negative, a percentage rounded to a
//! count. A wrong value is kept only when the quote states it nowhere, by
//! a reading written here independently of `numbers_in` (and more generous
//! than it). No wrong value may verify; the right ones must, at 99% at least.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use text2num::replace_numbers_in_text;

use crate::lang::Lang;
use crate::verify_quote::verify_quote;

/// A number as a quote writes it: its text, value and where it is.
#[derive(Debug, Clone)]
struct Written {
    text: String,
    value: f64,
    start: usize,
    end: usize,
}

/// The numbers an English or Romance text writes with digits, read the
/// plain way: commas (or points, with `comma`) between groups of three
/// group thousands, spaces between groups of three too, one other
/// separator is the decimal point. A leading minus counts after a space or
/// bracket only. Numbers glued to a letter on their left (CD4) are names.
fn written(text: &str, comma: bool) -> Vec<Written> {
    written_with(text, comma, true)
}

/// [`written`], with spaces between groups of three read as grouping or
/// not (`text2num` writes two spelled numbers side by side: "88 700").
fn written_with(text: &str, comma: bool, spaced: bool) -> Vec<Written> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\d{1,3}(?:(?:,\d{3})+|(?:\.\d{3}){2,}|(?:[ \u{A0}\u{202F}\u{2009}]\d{3})+)(?:[.,·]\d+)?|\d+(?:[.,·]\d+)?|[.·]\d+",
        )
        .unwrap_or_else(|_| unreachable!())
    });
    static PLAIN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\d+(?:[.,·]\d+)?").unwrap_or_else(|_| unreachable!()));
    let mut out = Vec::new();
    let mut pos = 0;
    let re: &Regex = if spaced { &RE } else { &PLAIN };
    while let Some(m) = re.find_at(text, pos) {
        pos = m.end();
        let mut s = m.as_str().to_string();
        let mut end = m.end();
        if text[end..].starts_with(|c: char| c.is_ascii_digit()) {
            // Not a grouping after all ("0.0313"): digits and one separator.
            let Some(p) = PLAIN.find_at(text, m.start()) else {
                break;
            };
            end = p.end();
            pos = end;
            s = p.as_str().to_string();
        }
        let before = text[..m.start()].chars().next_back();
        if before.is_some_and(|c| c.is_alphabetic()) {
            continue;
        }
        let (thou, dec) = if comma { ('.', ',') } else { (',', '.') };
        let plain: String = s
            .chars()
            .filter(|c| !matches!(c, ' ' | '\u{A0}' | '\u{202F}' | '\u{2009}'))
            .collect();
        let grouped = plain.matches(thou).count() > 1
            || plain
                .split(thou)
                .skip(1)
                .all(|g| g.chars().take_while(char::is_ascii_digit).count() == 3)
                && plain.contains(thou);
        let p = if grouped {
            plain.replace(thou, "")
        } else {
            plain.clone()
        };
        let p = p.replace([dec, '·'], ".").replace(thou, ".");
        let Ok(mut v) = p.parse::<f64>() else {
            continue;
        };
        let mut start = m.start();
        let neg = text[..start].ends_with(['-', '−'])
            && text[..start]
                .trim_end_matches(['-', '−'])
                .chars()
                .next_back()
                .is_none_or(|c| c.is_whitespace() || "([=<>:;".contains(c));
        if neg {
            v = -v;
            start -= text[..start].chars().next_back().map_or(0, char::len_utf8);
        }
        out.push(Written {
            text: s,
            value: v,
            start,
            end,
        });
    }
    out
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Every value a reader could take the text to state, generously: each
/// written number, with its sign dropped, as a fraction of 100, its parts
/// in both separator conventions, the numbers its words spell, fractions
/// and zero. A wrong value must be none of these.
fn stated(text: &str, lang: Lang) -> Vec<f64> {
    let mut all = Vec::new();
    for comma in [false, true] {
        for w in written(text, comma) {
            all.extend([
                w.value,
                w.value.abs(),
                w.value / 100.0,
                w.value.abs() / 100.0,
            ]);
        }
    }
    let spelled = replace_numbers_in_text(text, &lang.language(), 0.0);
    for comma in [false, true] {
        for spaced in [false, true] {
            for w in written_with(&spelled, comma, spaced) {
                all.extend([w.value, w.value / 100.0]);
            }
        }
    }
    // Scientific notation, its superscript flattened or not ("0.35 × 102"
    // is 35, "3.2 x 10^-5" is 0.000032).
    static SCI: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(\d+(?:[.,·]\d+)?)\s*[x×*]\s*10\s*\^?\s*([-−⁻]?\s*[0-9⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
            .unwrap_or_else(|_| unreachable!())
    });
    for c in SCI.captures_iter(text) {
        let m: f64 = c[1].replace([',', '·'], ".").parse().unwrap_or(f64::NAN);
        let e: String = c[2]
            .chars()
            .filter_map(|ch| match ch {
                '-' | '−' | '⁻' => Some('-'),
                '⁰'..='⁹' | '¹' | '²' | '³' => "⁰¹²³⁴⁵⁶⁷⁸⁹"
                    .chars()
                    .position(|x| x == ch)
                    .and_then(|d| char::from_digit(d as u32, 10)),
                d if d.is_ascii_digit() => Some(d),
                _ => None,
            })
            .collect();
        if let Ok(e) = e.parse::<i32>() {
            all.extend([m * 10f64.powi(e), m / 10f64.powi(-e)]);
        }
    }
    // Products and ratios the text may write ("3.2 x 10^-5", "one in five")
    // and fractions in words are not wrong values either.
    all.extend([0.0, 0.5, 0.25, 0.75, 1.0 / 3.0, 2.0 / 3.0, 0.2, 1.5, 2.5]);
    all
}

/// Wrong values made from one written number.
fn wrongs(w: &Written, text: &str) -> Vec<(f64, &'static str)> {
    let mut out = Vec::new();
    let digits: String = w.text.chars().filter(char::is_ascii_digit).collect();
    let sign = if w.value < 0.0 { -1.0 } else { 1.0 };
    let scale = match w.text.rfind(['.', ',', '·']) {
        // Decimal places: the number of digits after the last separator,
        // unless that separator groups thousands.
        Some(i) if w.value.fract() != 0.0 => (w.text.len() - i - 1) as i32,
        _ => 0,
    };
    let unit = 10f64.powi(-scale);
    out.push((w.value + unit, "off by one"));
    out.push((w.value - unit, "off by one"));
    let with_digits = |d: &str| -> Option<f64> {
        if d.is_empty() {
            return None;
        }
        let v = d.parse::<f64>().ok()? * 10f64.powi(-scale);
        Some(sign * v)
    };
    let chars: Vec<char> = digits.chars().collect();
    if chars.len() >= 2 {
        for i in 0..chars.len() {
            let d: String = chars
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, c)| c)
                .collect();
            out.extend(with_digits(&d).map(|v| (v, "digit dropped")));
        }
        for i in 0..chars.len() - 1 {
            if chars[i] != chars[i + 1] {
                let mut c = chars.clone();
                c.swap(i, i + 1);
                let d: String = c.iter().collect();
                out.extend(with_digits(&d).map(|v| (v, "digits swapped")));
            }
        }
    }
    // Parts of a grouped or decimal number: "3 400" is not 3 or 400.
    for part in w
        .text
        .split([',', '.', ' ', '\u{A0}', '\u{202F}', '\u{2009}', '·'])
    {
        if part.len() < w.text.len() {
            if let Ok(v) = part.parse::<f64>() {
                out.push((v, "part of a grouped number"));
            }
        }
    }
    // The other number of a range, its dash read as a minus: "12-15" is not -15.
    if w.start > 0 {
        let before: String = text[..w.start].chars().rev().take(2).collect();
        let mut b = before.chars();
        if let (Some(dash), Some(d)) = (b.next(), b.next()) {
            if matches!(dash, '-' | '–' | '—') && d.is_ascii_digit() {
                out.push((-w.value.abs(), "other end of a range as negative"));
            }
        }
    }
    // A percentage as a count: "32.6%" does not state 32 or 33.
    if text[w.end..].trim_start().starts_with('%') && w.value.fract() != 0.0 {
        out.push((w.value.round(), "percentage as a count"));
        out.push((w.value.trunc(), "percentage as a count"));
    }
    out
}

/// Scores verification on one (quote, text, language) case; returns
/// (right values verified, right values, false verifications, wrong values).
#[derive(Default)]
struct Tally {
    right: usize,
    right_ok: usize,
    wrong: usize,
    false_ok: Vec<String>,
    missed: Vec<String>,
}

impl Tally {
    fn case(&mut self, quote: &str, text: &str, lang: Lang, rights: &[f64], ws: &[Written]) {
        let truth = stated(quote, lang);
        for &v in rights {
            self.right += 1;
            let r = verify_quote(quote, text, &format!("{v}"), Some("number"));
            if r.verified {
                self.right_ok += 1;
            } else {
                self.missed
                    .push(format!("{quote:?} {v}: {}", r.reason.unwrap_or_default()));
            }
        }
        let mut seen = BTreeSet::new();
        for w in ws {
            for (v, how) in wrongs(w, quote) {
                if truth.iter().any(|t| near(*t, v)) || !seen.insert(format!("{v}")) {
                    continue;
                }
                self.wrong += 1;
                if verify_quote(quote, text, &format!("{v}"), Some("number")).verified {
                    self.false_ok
                        .push(format!("{quote:?} verified {v} ({how} of {})", w.text));
                }
            }
        }
    }

    /// Prints the figures and asserts the bar: at least `min_wrong` wrong
    /// values, none verified, and 99% of the right ones verified.
    fn holds(&self, what: &str, min_wrong: usize) {
        self.report(what);
        assert!(self.wrong >= min_wrong, "only {} wrong values", self.wrong);
        assert!(
            self.false_ok.is_empty(),
            "{} false verifications",
            self.false_ok.len()
        );
        let recall = self.right_ok as f64 / self.right as f64;
        assert!(recall >= 0.99, "recall {recall:.4}");
    }

    fn report(&self, what: &str) {
        for m in self.missed.iter().take(40) {
            eprintln!("missed: {m}");
        }
        for f in self.false_ok.iter().take(40) {
            eprintln!("FALSE: {f}");
        }
        eprintln!(
            "{what}: {} wrong values, {} verified; right values {}/{} verified ({:.4})",
            self.wrong,
            self.false_ok.len(),
            self.right_ok,
            self.right,
            self.right_ok as f64 / self.right.max(1) as f64
        );
    }
}

/// Does the span write a number in a way this generator cannot read plainly
/// (scientific notation, ordinals)? Its right values are not scored then.
fn plain_numbers(text: &str) -> bool {
    static SCI: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\d\s*[x×*]\s*10|10\s*\^|10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]|\de[-+]?\d|\d(?:st|nd|rd|th)\b")
            .unwrap_or_else(|_| unreachable!())
    });
    !SCI.is_match(text)
}

#[test]
fn evidence_spans_verify_what_they_state_and_nothing_else() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/evidence_inference/v2_annotations.csv"
    );
    let mut rdr = csv::Reader::from_path(path).expect("v2_annotations.csv");
    let mut spans = BTreeSet::new();
    for rec in rdr.records().flatten() {
        let q = rec.get(6).unwrap_or_default().trim().to_string();
        if q.chars().any(|c| c.is_ascii_digit()) {
            spans.insert(q);
        }
    }
    let mut t = Tally::default();
    for q in &spans {
        let ws = written(q, false);
        let rights: Vec<f64> = if plain_numbers(q) {
            ws.iter().map(|w| w.value).collect()
        } else {
            Vec::new()
        };
        let text = format!("Results. {q} Discussion follows.");
        t.case(q, &text, Lang::En, &rights, &ws);
    }
    t.holds("Evidence Inference spans", 10_000);
}

/// A sentence in each language that a quote sits in, as a document would
/// hold it.
fn carrier(lang: Lang, quote: &str) -> String {
    match lang {
        Lang::En => {
            format!("In this study the patients received {quote} and the group was followed.")
        }
        Lang::Fr => {
            format!("Dans cette étude, les patients ont reçu {quote} et le groupe a été suivi.")
        }
        Lang::Es => {
            format!("En este estudio los pacientes recibieron {quote} y el grupo fue seguido.")
        }
        Lang::Pt => format!("Neste estudo os doentes receberam {quote} e o grupo foi acompanhado."),
        Lang::It => format!(
            "In questo studio i pazienti hanno ricevuto {quote} e il gruppo è stato seguito."
        ),
        Lang::De => format!(
            "In dieser Studie erhielten die Patienten {quote} und die Gruppe wurde nachbeobachtet."
        ),
        Lang::Nl => format!("In deze studie kregen de patiënten {quote} en de groep werd gevolgd."),
    }
}

static ORDINAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\d+(?:st|nd|rd|th|e|er|ème|º|ª|o|a|te|ste|os|as|es|ᵒ|ᵃ|ᵉ)")
        .unwrap_or_else(|_| unreachable!())
});

#[test]
fn number_word_vectors_verify_their_value_and_nothing_else() {
    let mut t = Tally::default();
    for c in crate::util::number_word_cases() {
        let (lang, kind, input, expected) =
            (c.lang, c.kind.as_str(), c.input.trim(), c.expected.as_str());
        let code = format!("{lang:?}");
        {
            // The numbers the vector says the input spells.
            let ws: Vec<Written> = match kind {
                "text2digits" => written_with(expected, lang.decimal_comma(), false),
                k if k.starts_with("replace_numbers_in_text") => {
                    written_with(expected, lang.decimal_comma(), false)
                }
                _ => continue,
            };
            // Ordinals ("1st", "2e") state no count; inputs that are no
            // number have nothing to score.
            if ws.is_empty() || ORDINAL.is_match(expected) || input.is_empty() {
                continue;
            }
            let rights: Vec<f64> = ws.iter().map(|w| w.value).collect();
            let text = carrier(lang, input);
            // Wrong values are made from the spelled numbers' digits.
            let mut tt = Tally::default();
            tt.case(input, &text, lang, &rights, &[]);
            t.right += tt.right;
            t.right_ok += tt.right_ok;
            t.missed.extend(tt.missed);
            let truth = stated(expected, lang);
            let truth_in = stated(input, lang);
            for w in &ws {
                for (v, how) in wrongs(w, expected) {
                    if truth.iter().chain(&truth_in).any(|x| near(*x, v)) {
                        continue;
                    }
                    t.wrong += 1;
                    if verify_quote(input, &text, &format!("{v}"), Some("number")).verified {
                        t.false_ok.push(format!(
                            "{code} {input:?} verified {v} ({how} of {})",
                            w.text
                        ));
                    }
                }
            }
        }
    }
    t.holds("text2num vectors", 1_000);
}
