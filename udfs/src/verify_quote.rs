//! `verify_quote(quote, text, value [, type])`: whether a quotation is in
//! the text it is attributed to and carries the value drawn from it.
//!
//! Verified means: every passage of the quote (passages are separated by
//! line breaks, bullets or an ellipsis) is in the text once whitespace, quote
//! marks, dashes and case are folded; the quote does not start or end inside
//! a word; what an elision leaves out, or what lies between two passages in
//! one sentence, is not a negation; and the quote carries the value: a number
//! must be one of the numbers the quote states (see `numbers_in`; a writing
//! that could be either of two numbers, such as "1,204" in a language that
//! writes decimal commas, supports neither, with the reason), a
//! one-word fragment supports only a value it spells, and a string value must
//! appear in it. A quote in a script whose number words are not read, with no
//! readable number, is only checked for presence.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

#[cfg(feature = "sql")]
use datafusion::arrow::array::{
    Array, ArrayRef, BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, StructArray,
};
#[cfg(feature = "sql")]
use datafusion::arrow::datatypes::{DataType, Field, Fields};
#[cfg(feature = "sql")]
use datafusion::common::{plan_err, Result, ScalarValue};
#[cfg(feature = "sql")]
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use crate::fold::{words, Folded};
use crate::numbers_in::{decimal_convention, readings_in, Lang, Reading};
use crate::quote_match::quote_match;
use crate::same_value::canonical;
#[cfg(feature = "sql")]
use crate::util::{string_array, two_strings};

/// The outcome of a verification.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Whether the quote is verbatim and carries the value.
    pub verified: bool,
    /// 1.0 when every passage is verbatim, else `quote_match`.
    pub matched: f64,
    /// Char offset where the quote starts in the text, when found.
    pub char_start: Option<usize>,
    /// Char offset where it ends (excluded), when found.
    pub char_end: Option<usize>,
    /// Why it is not verified.
    pub reason: Option<String>,
}

const NEGATIONS: &[&str] = &[
    "not", "no", "never", "without", "neither", "nor", "none", "nothing", "cannot", "nobody",
    "n't", "non", "pas", "ne", "ni", "nicht", "kein", "keine", "niet", "geen", "nunca", "sin",
    "sem", "nessun", "senza",
];

/// Splits a quote into its passages.
fn passages(quote: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in quote.split(['\n', '\r']) {
        for part in line
            .split("...")
            .flat_map(|p| p.split('…'))
            .flat_map(|p| p.split(['•', '▪', '◦']))
        {
            // A bullet ("- item"), not a minus sign ("-3.82").
            let p = part.trim();
            let p = match p.strip_prefix(['-', '*']) {
                Some(rest) if rest.starts_with(char::is_whitespace) => rest.trim(),
                Some(rest) if p.starts_with('*') => rest.trim(),
                _ => p,
            };
            let p = p
                .trim_start_matches(['[', '('])
                .trim_end_matches([']', ')'])
                .trim();
            if p.chars().any(char::is_alphanumeric) {
                out.push(p.to_string());
            }
        }
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// Whether the script of `s` has number words quarry reads (Latin script).
fn readable_script(s: &str) -> bool {
    s.chars()
        .filter(|c| c.is_alphabetic())
        .all(|c| c.is_ascii() || ('\u{00C0}'..='\u{024F}').contains(&c))
}

fn has_negation(s: &str) -> bool {
    let lower = s.to_lowercase();
    lower.contains("n't")
        || lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| NEGATIONS.contains(&w))
}

/// A quote, its text and the numbers read from it.
type LastQuote = (String, String, Rc<Vec<Reading>>);

/// The numbers a quote states, read in its language with the text's words
/// as context (a fragment such as "75 patients" is read in the language
/// around it, and so is its decimal point when the quote shows none).
/// The last quote's readings are kept: the fields of a row often cite one
/// sentence, and each is verified against the same quote and text.
fn quote_readings(quoted: &str, text: &str) -> Rc<Vec<Reading>> {
    thread_local! {
        static LAST: RefCell<Option<LastQuote>> = const { RefCell::new(None) };
    }
    LAST.with(|last| {
        if let Some((q, t, r)) = &*last.borrow() {
            if q == quoted && t == text {
                return Rc::clone(r);
            }
        }
        let lang = Lang::detect_in(quoted, text);
        let decimal = decimal_convention(quoted).or_else(|| decimal_convention(text));
        let r = Rc::new(readings_in(quoted, lang, decimal));
        *last.borrow_mut() = Some((quoted.to_string(), text.to_string(), Rc::clone(&r)));
        r
    })
}

/// A value as a number: "1204", "1,204" (thousands), "0,45" (a decimal
/// comma), "-3.5e-2".
fn number_value(value: &str) -> Option<f64> {
    let v: String = value
        .trim()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if let Ok(x) = v.parse::<f64>() {
        return Some(x);
    }
    let (int, frac) = v.split_once('.').unwrap_or((&v, ""));
    let groups: Vec<&str> = int.trim_start_matches(['-', '+']).split(',').collect();
    let thousands = groups.len() > 1
        && (1..=3).contains(&groups[0].len())
        && groups[1..].iter().all(|g| g.len() == 3);
    if thousands {
        return format!("{}.{frac}", int.replace(',', ""))
            .trim_end_matches('.')
            .parse()
            .ok();
    }
    if groups.len() == 2 && frac.is_empty() {
        return v.replace(',', ".").parse().ok();
    }
    None
}

/// Verifies `quote` against `text` for `value` of `kind` (`integer`,
/// `number`, `boolean`, `date`, `string`, `enum`, `list`; `None` infers a
/// number from the value).
///
/// ```
/// use quarry_udfs::verify_quote::verify_quote;
/// let text = "Methods. The dose was 240 mg daily. Results.";
/// assert!(verify_quote("The dose was 240 mg daily.", text, "240", None).verified);
/// let v = verify_quote("The dose was 250 mg daily.", text, "250", None);
/// assert!(!v.verified && v.matched < 1.0);
/// let v = verify_quote("The dose was 240 mg daily.", text, "120", None);
/// assert!(!v.verified && v.matched == 1.0); // a real sentence that does not carry the value
/// ```
pub fn verify_quote(quote: &str, text: &str, value: &str, kind: Option<&str>) -> Verdict {
    let fail = |matched: f64, span: Option<(usize, usize)>, reason: String| Verdict {
        verified: false,
        matched,
        char_start: span.map(|s| s.0),
        char_end: span.map(|s| s.1),
        reason: Some(reason),
    };
    let parts = passages(quote);
    if parts.is_empty() {
        return fail(0.0, None, "no quote".into());
    }
    let t = Folded::new(text);
    let text_chars: Vec<char> = text.chars().collect();
    // Find each passage, in order, after the previous one.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut from = 0;
    let boundary_ok = |s: usize, e: usize, first: bool, last: bool| {
        let starts_inside =
            first && s > 0 && is_word_char(text_chars[s - 1]) && is_word_char(text_chars[s]);
        let ends_inside = last
            && e < text_chars.len()
            && e > 0
            && is_word_char(text_chars[e])
            && is_word_char(text_chars[e - 1]);
        !starts_inside && !ends_inside
    };
    for (k, p) in parts.iter().enumerate() {
        let q = Folded::new(p);
        let (first, last) = (k == 0, k + 1 == parts.len());
        // The first occurrence at whole words ("cien", not inside
        // "pacientes"), else the first at all (its error says where).
        let mut at_all = None;
        let mut whole = None;
        for i in from..t.chars.len() {
            if t.chars[i..].starts_with(&q.chars) {
                at_all.get_or_insert(i);
                let (s, e) = t.span(i, i + q.chars.len());
                if boundary_ok(s, e, first, last) {
                    whole = Some(i);
                    break;
                }
            }
        }
        match whole.or(at_all) {
            Some(i) => {
                spans.push(t.span(i, i + q.chars.len()));
                from = i + q.chars.len();
            }
            None => {
                let m = quote_match(quote, text);
                return fail(m, None, format!("not in the text (match {m:.2})"));
            }
        }
    }
    let span = (spans[0].0, spans[spans.len() - 1].1);
    // Whole words at both ends.
    if !boundary_ok(span.0, span.1, true, true) {
        return fail(1.0, Some(span), "starts or ends inside a word".into());
    }
    // What elisions leave out may not be a negation.
    for w in spans.windows(2) {
        let gap: String = text_chars[w[0].1..w[1].0].iter().collect();
        if has_negation(&gap) {
            return fail(
                1.0,
                Some(span),
                format!("the elision leaves out a negation: '{}'", gap.trim()),
            );
        }
    }
    // The value.
    let kind = kind.map(|k| k.trim().to_ascii_lowercase());
    let value_num = number_value(value);
    let numeric = match kind.as_deref() {
        Some("integer" | "number") => true,
        Some(_) => false,
        None => value_num.is_some(),
    };
    // One passage a line: a space between "[13, 19" and "800 mg" would
    // make them one spaced number.
    let quoted: String = parts.join("\n");
    let q_words = words(&Folded::new(&quoted)).len();
    let carried = if numeric {
        match value_num {
            None => {
                return fail(
                    1.0,
                    Some(span),
                    format!("the value '{value}' is not a number"),
                )
            }
            Some(v) => {
                let nums = quote_readings(&quoted, text);
                let same = |x: f64| (x - v).abs() <= 1e-9 * v.abs().max(1.0);
                // A script whose number words are not read: presence only.
                let unread = nums.is_empty() && !readable_script(&quoted);
                if unread || nums.iter().any(|r| r.ambiguous.is_none() && same(r.value)) {
                    true
                } else if let Some(why) = nums
                    .iter()
                    .find(|r| same(r.value))
                    .and_then(|r| r.ambiguous.clone())
                {
                    // Either reading may be the one meant: accept neither.
                    return fail(1.0, Some(span), format!("ambiguous: {why}"));
                } else {
                    false
                }
            }
        }
    } else if matches!(kind.as_deref(), Some("boolean")) {
        true
    } else if q_words <= 1 {
        canonical(&quoted) == canonical(value)
    } else {
        let v = canonical(value);
        v.is_empty() || canonical(&quoted).contains(&v)
    };
    if !carried {
        let what = if numeric {
            format!("does not state the number {value}")
        } else if q_words <= 1 {
            format!("a one-word fragment does not spell '{value}'")
        } else {
            format!("does not contain '{value}'")
        };
        return fail(1.0, Some(span), what);
    }
    Verdict {
        verified: true,
        matched: 1.0,
        char_start: Some(span.0),
        char_end: Some(span.1),
        reason: None,
    }
}

#[cfg(feature = "sql")]
fn fields() -> Fields {
    Fields::from(vec![
        Field::new("verified", DataType::Boolean, false),
        Field::new("match", DataType::Float64, false),
        Field::new("char_start", DataType::Int64, true),
        Field::new("char_end", DataType::Int64, true),
        Field::new("reason", DataType::Utf8, true),
    ])
}

#[cfg(feature = "sql")]
pub use adapter::VerifyQuote;

/// The DataFusion adapter (with the `sql` feature).
#[cfg(feature = "sql")]
mod adapter {
    use super::*;

    /// The `verify_quote` SQL function: a struct of `verified`, `match`,
    /// `char_start`, `char_end` (0-based chars, end excluded) and `reason`.
    /// NULL quote, text or value gives NULL.
    #[derive(Debug, PartialEq, Eq, Hash)]
    pub struct VerifyQuote {
        signature: Signature,
    }

    impl Default for VerifyQuote {
        fn default() -> Self {
            Self {
                signature: Signature::one_of(
                    vec![TypeSignature::Any(3), TypeSignature::Any(4)],
                    Volatility::Immutable,
                ),
            }
        }
    }

    impl ScalarUDFImpl for VerifyQuote {
        fn name(&self) -> &str {
            "verify_quote"
        }
        fn signature(&self) -> &Signature {
            &self.signature
        }
        fn return_type(&self, _: &[DataType]) -> Result<DataType> {
            Ok(DataType::Struct(fields()))
        }
        fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let kind = match args.args.get(3) {
                None => None,
                Some(ColumnarValue::Scalar(s)) => match s.cast_to(&DataType::Utf8)? {
                    ScalarValue::Utf8(k) => k,
                    _ => None,
                },
                Some(_) => return plan_err!("verify_quote: the type must be a constant"),
            };
            if let Some(k) = &kind {
                let base = k
                    .split('(')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase();
                if ![
                    "integer", "number", "boolean", "date", "string", "enum", "list",
                ]
                .contains(&base.as_str())
                {
                    return plan_err!("verify_quote: unknown type '{k}'; use integer, number, boolean, date, string, enum or list");
                }
            }
            let (quote, text) = two_strings(
                &args.args,
                args.number_rows,
                "verify_quote",
                ["quote", "text"],
            )?;
            let value = args.args[2].to_array(args.number_rows)?;
            let value = string_array(&value, "verify_quote", "value")?;
            let n = quote.len();
            let (mut ver, mut mat) = (
                BooleanBuilder::with_capacity(n),
                Float64Builder::with_capacity(n),
            );
            let (mut cs, mut ce) = (
                Int64Builder::with_capacity(n),
                Int64Builder::with_capacity(n),
            );
            let mut reason = StringBuilder::new();
            let mut valid = Vec::with_capacity(n);
            for i in 0..n {
                let row = (!quote.is_null(i) && !text.is_null(i) && !value.is_null(i)).then(|| {
                    verify_quote(
                        quote.value(i),
                        text.value(i),
                        value.value(i),
                        kind.as_deref(),
                    )
                });
                let v = row.clone().unwrap_or(Verdict {
                    verified: false,
                    matched: 0.0,
                    char_start: None,
                    char_end: None,
                    reason: None,
                });
                ver.append_value(v.verified);
                mat.append_value(v.matched);
                cs.append_option(v.char_start.map(|x| x as i64));
                ce.append_option(v.char_end.map(|x| x as i64));
                reason.append_option(v.reason.as_deref());
                valid.push(row.is_some());
            }
            let cols: Vec<ArrayRef> = vec![
                Arc::new(ver.finish()),
                Arc::new(mat.finish()),
                Arc::new(cs.finish()),
                Arc::new(ce.finish()),
                Arc::new(reason.finish()),
            ];
            Ok(ColumnarValue::Array(Arc::new(StructArray::try_new(
                fields(),
                cols,
                Some(valid.into()),
            )?)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "Methods. 240 patients were randomised. The dose was 240 mg daily. There was no significant difference in pain. Conflicts of interest: None.";

    #[test]
    fn the_seed_examples() {
        assert!(verify_quote("The dose was 240 mg daily.", TEXT, "240", None).verified);
        assert!(
            verify_quote(
                "240 patients were randomised.",
                TEXT,
                "240",
                Some("integer")
            )
            .verified
        );
        let v = verify_quote("The dose was 240 mg daily.", TEXT, "120", None);
        assert!(!v.verified && v.matched == 1.0, "{v:?}");
        let v = verify_quote("The daily dose was 240 mg.", TEXT, "240", None);
        assert!(!v.verified && v.matched < 1.0, "{v:?}");
        assert!(v.reason.is_some_and(|r| r.starts_with("not in the text")));
    }

    #[test]
    fn whole_words_and_one_word_fragments() {
        let v = verify_quote("ose was 240 mg", TEXT, "240", None);
        assert_eq!(v.reason.as_deref(), Some("starts or ends inside a word"));
        assert!(verify_quote("None", TEXT, "None", Some("string")).verified);
        assert!(!verify_quote("None", TEXT, "Pfizer", Some("string")).verified);
        assert!(
            verify_quote("Conflicts of interest: None.", TEXT, "None", Some("string")).verified
        );
    }

    #[test]
    fn elisions_may_not_hide_a_negation() {
        let v = verify_quote(
            "There was ... significant difference in pain.",
            TEXT,
            "significant difference",
            Some("string"),
        );
        assert!(
            !v.verified && v.reason.as_deref().is_some_and(|r| r.contains("negation")),
            "{v:?}"
        );
        let v = verify_quote(
            "240 patients were randomised. ... The dose was 240 mg daily.",
            TEXT,
            "240",
            None,
        );
        assert!(v.verified, "{v:?}");
    }

    #[test]
    fn unread_scripts_are_checked_for_presence_only() {
        let t = "В исследовании участвовало двести сорок человек.";
        assert!(verify_quote("участвовало двести сорок человек", t, "240", None).verified);
        assert!(!verify_quote("участвовало двести сорок", "другой текст", "240", None).verified);
    }
}
