//! `locate_quote(quote, text [, min_ratio])`: where a quotation sits in a
//! text, snapped out to whole sentences.
//!
//! First exactly, after folding whitespace, quote marks, dashes and case;
//! else fuzzily: every window of consecutive sentences up to twice the
//! quote's length is scored with difflib's `SequenceMatcher.ratio()` (no
//! junk heuristic) on the folded texts, and the best window at or above
//! `min_ratio` (default 0.9) wins; ties go to the earliest, then shortest.

use std::sync::Arc;

#[cfg(feature = "sql")]
use datafusion::arrow::array::{
    Array, ArrayRef, BooleanBuilder, Float64Builder, Int64Builder, StructArray,
};
#[cfg(feature = "sql")]
use datafusion::arrow::buffer::NullBuffer;
#[cfg(feature = "sql")]
use datafusion::arrow::datatypes::{DataType, Field, Fields};
#[cfg(feature = "sql")]
use datafusion::common::{plan_err, Result, ScalarValue};
#[cfg(feature = "sql")]
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use crate::difflib;
use crate::fold::Folded;
use crate::sentences::sentence_spans;
#[cfg(feature = "sql")]
use crate::util::two_strings;

/// Where a quote was found, in char offsets into the text (end excluded).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Located {
    /// Start of the whole sentences holding the match.
    pub char_start: usize,
    /// End of those sentences.
    pub char_end: usize,
    /// Start of the matched text itself.
    pub match_start: usize,
    /// End of the matched text itself.
    pub match_end: usize,
    /// 1.0 for an exact match (after folding), else difflib's ratio.
    pub ratio: f64,
    /// Whether the match is exact after folding.
    pub exact: bool,
}

/// The default similarity a fuzzy match needs.
pub const DEFAULT_MIN_RATIO: f64 = 0.9;

/// Sentence spans of `text` in char offsets.
fn sentence_chars(text: &str) -> Vec<(usize, usize)> {
    let spans = sentence_spans(text);
    let mut out = Vec::with_capacity(spans.len());
    let mut chars = 0;
    let mut byte = 0;
    for (a, b) in spans {
        chars += text[byte..a].chars().count();
        let ca = chars;
        chars += text[a..b].chars().count();
        byte = b;
        out.push((ca, chars));
    }
    out
}

/// Locates `quote` in `text`; `None` when it is not there.
///
/// ```
/// use quarry_udfs::locate_quote::locate_quote;
/// let text = "Methods were standard. The dose was 240 mg daily. Nothing else.";
/// let l = locate_quote("dose was 240 mg", text, 0.9).unwrap();
/// assert_eq!((l.char_start, l.char_end), (23, 49));   // the whole sentence
/// assert_eq!((l.match_start, l.match_end), (27, 42)); // the words quoted
/// assert!(l.exact);
/// ```
pub fn locate_quote(quote: &str, text: &str, min_ratio: f64) -> Option<Located> {
    let q = Folded::new(quote);
    if q.chars.is_empty() {
        return None;
    }
    let t = Folded::new(text);
    let sentences = sentence_chars(text);
    let snap = |s: usize, e: usize| {
        let start = sentences
            .iter()
            .find(|&&(a, b)| a <= s && s < b)
            .map_or(s, |&(a, _)| a);
        let end = sentences
            .iter()
            .find(|&&(a, b)| a < e && e <= b)
            .map_or(e, |&(_, b)| b);
        (start.min(s), end.max(e))
    };
    if let Some(i) = t.find(&q.chars) {
        let (ms, me) = t.span(i, i + q.chars.len());
        let (cs, ce) = snap(ms, me);
        return Some(Located {
            char_start: cs,
            char_end: ce,
            match_start: ms,
            match_end: me,
            ratio: 1.0,
            exact: true,
        });
    }
    // Fuzzy: windows of consecutive sentences, each folded on its own.
    let chars: Vec<char> = text.chars().collect();
    let limit = 2 * q.chars.len();
    let mut best: Option<(f64, usize, usize)> = None;
    for s in 0..sentences.len() {
        for e in s..sentences.len() {
            let (a, b) = (sentences[s].0, sentences[e].1);
            let window: String = chars[a..b].iter().collect();
            let w = Folded::new(&window);
            if e > s && w.chars.len() > limit {
                break;
            }
            let r = difflib::ratio(&q.chars, &w.chars);
            if best.is_none_or(|(br, _, _)| r > br) {
                best = Some((r, a, b));
            }
        }
    }
    let (r, a, b) = best?;
    (r >= min_ratio).then_some(Located {
        char_start: a,
        char_end: b,
        match_start: a,
        match_end: b,
        ratio: r,
        exact: false,
    })
}

#[cfg(feature = "sql")]
fn fields() -> Fields {
    Fields::from(vec![
        Field::new("char_start", DataType::Int64, false),
        Field::new("char_end", DataType::Int64, false),
        Field::new("match_start", DataType::Int64, false),
        Field::new("match_end", DataType::Int64, false),
        Field::new("ratio", DataType::Float64, false),
        Field::new("exact", DataType::Boolean, false),
    ])
}

#[cfg(feature = "sql")]
pub use adapter::LocateQuote;

/// The DataFusion adapter (with the `sql` feature).
#[cfg(feature = "sql")]
mod adapter {
    use super::*;

    /// The `locate_quote` SQL function: a struct of `char_start`, `char_end`
    /// (the whole sentences), `match_start`, `match_end`, `ratio` and `exact`,
    /// 0-based char offsets with the end excluded. NULL when the quote is not
    /// there, or either argument is NULL.
    ///
    /// ```sql
    /// SELECT locate_quote('dose was 240 mg', text)['char_start'] FROM chunks(...);
    /// ```
    #[derive(Debug, PartialEq, Eq, Hash)]
    pub struct LocateQuote {
        signature: Signature,
    }

    impl Default for LocateQuote {
        fn default() -> Self {
            Self {
                signature: Signature::one_of(
                    vec![TypeSignature::Any(2), TypeSignature::Any(3)],
                    Volatility::Immutable,
                ),
            }
        }
    }

    impl ScalarUDFImpl for LocateQuote {
        fn name(&self) -> &str {
            "locate_quote"
        }
        fn signature(&self) -> &Signature {
            &self.signature
        }
        fn return_type(&self, _: &[DataType]) -> Result<DataType> {
            Ok(DataType::Struct(fields()))
        }
        fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let min_ratio = match args.args.get(2) {
                None => DEFAULT_MIN_RATIO,
                Some(ColumnarValue::Scalar(s)) => match s.cast_to(&DataType::Float64)? {
                    ScalarValue::Float64(Some(r)) if (0.0..=1.0).contains(&r) => r,
                    other => {
                        return plan_err!(
                            "locate_quote: min_ratio must be a number from 0 to 1, got {other}"
                        )
                    }
                },
                Some(_) => return plan_err!("locate_quote: min_ratio must be a constant"),
            };
            let (quote, text) = two_strings(
                &args.args,
                args.number_rows,
                "locate_quote",
                ["quote", "text"],
            )?;
            let n = quote.len();
            let (mut cs, mut ce, mut ms, mut me) = (
                Int64Builder::with_capacity(n),
                Int64Builder::with_capacity(n),
                Int64Builder::with_capacity(n),
                Int64Builder::with_capacity(n),
            );
            let mut ratio = Float64Builder::with_capacity(n);
            let mut exact = BooleanBuilder::with_capacity(n);
            let mut valid = Vec::with_capacity(n);
            for (q, t) in quote.iter().zip(text.iter()) {
                let l = q.zip(t).and_then(|(q, t)| locate_quote(q, t, min_ratio));
                let v = l.unwrap_or(Located {
                    char_start: 0,
                    char_end: 0,
                    match_start: 0,
                    match_end: 0,
                    ratio: 0.0,
                    exact: false,
                });
                cs.append_value(v.char_start as i64);
                ce.append_value(v.char_end as i64);
                ms.append_value(v.match_start as i64);
                me.append_value(v.match_end as i64);
                ratio.append_value(v.ratio);
                exact.append_value(v.exact);
                valid.push(l.is_some());
            }
            let cols: Vec<ArrayRef> = vec![
                Arc::new(cs.finish()),
                Arc::new(ce.finish()),
                Arc::new(ms.finish()),
                Arc::new(me.finish()),
                Arc::new(ratio.finish()),
                Arc::new(exact.finish()),
            ];
            let arr = StructArray::try_new(fields(), cols, Some(NullBuffer::from(valid)))?;
            debug_assert_eq!(arr.len(), n);
            Ok(ColumnarValue::Array(Arc::new(arr)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(t: &str, a: usize, b: usize) -> String {
        t.chars().skip(a).take(b - a).collect()
    }

    #[test]
    fn exact_match_snaps_to_the_sentence() {
        let t = "Methods were standard. The “dose” was 240–250 mg daily. Nothing else.";
        let l = locate_quote("the \"dose\" was 240-250 mg", t, 0.9).unwrap();
        assert!(l.exact);
        assert_eq!(
            sub(t, l.char_start, l.char_end),
            "The “dose” was 240–250 mg daily."
        );
        assert_eq!(
            sub(t, l.match_start, l.match_end),
            "The “dose” was 240–250 mg"
        );
    }

    #[test]
    fn fuzzy_match_at_the_threshold() {
        let t = "Background text here. Participants received 240 mg of the study drug daily for twelve weeks. Results follow.";
        let q = "Participants received 240 mg of the study drug each day for twelve weeks.";
        let l = locate_quote(q, t, 0.8).unwrap();
        assert!(!l.exact && l.ratio >= 0.8, "{l:?}");
        assert_eq!(
            sub(t, l.char_start, l.char_end),
            "Participants received 240 mg of the study drug daily for twelve weeks."
        );
        assert!(locate_quote(q, t, 0.99).is_none());
        assert!(locate_quote("Completely unrelated words about astronomy.", t, 0.9).is_none());
    }

    #[test]
    fn unicode_texts_give_char_offsets() {
        let cases = [
            (
                "研究には240人が参加した。結果は良好だった。",
                "結果は良好だった",
                "結果は良好だった。",
            ),
            (
                "Исследование длилось год. В нём участвовали 240 человек.",
                "участвовали 240 человек",
                "В нём участвовали 240 человек.",
            ),
            (
                "Η μελέτη ήταν τυχαιοποιημένη. Συμμετείχαν 240 άτομα.",
                "συμμετείχαν 240 άτομα",
                "Συμμετείχαν 240 άτομα.",
            ),
            (
                "شارك 240 شخصا في الدراسة. كانت النتائج جيدة.",
                "كانت النتائج جيدة",
                "كانت النتائج جيدة.",
            ),
            (
                "Emoji 😀 first. Then cafe\u{301} au lait was served.",
                "cafe\u{301} au lait",
                "Then cafe\u{301} au lait was served.",
            ),
        ];
        for (t, q, want) in cases {
            let l = locate_quote(q, t, 0.9).unwrap_or_else(|| panic!("{q} in {t}"));
            assert_eq!(sub(t, l.char_start, l.char_end), want, "{t}");
        }
    }
}
