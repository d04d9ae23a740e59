//! `quote_match(quote, text)`: how much of a quotation the text carries.
//!
//! 1.0 for an exact quotation once whitespace, quote marks, dashes and case
//! are folded away. Below that, the fraction of the quote's words carried by
//! its longest consecutive run of words in the text: a changed last word of
//! ten leaves a run of nine and scores 0.9; a swapped figure mid-sentence
//! splits the quote and scores about 0.5; below about 0.3 there is no
//! quotation left, only shared vocabulary.

use std::sync::Arc;

#[cfg(feature = "sql")]
use datafusion::arrow::array::{Array, ArrayRef, Float64Builder};
#[cfg(feature = "sql")]
use datafusion::arrow::datatypes::DataType;
#[cfg(feature = "sql")]
use datafusion::common::Result;
#[cfg(feature = "sql")]
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

use crate::fold::{words, Folded};
#[cfg(feature = "sql")]
use crate::util::two_strings;

/// The match score of `quote` against `text` (see the module docs). An empty
/// quote scores 0.
///
/// ```
/// use quarry_udfs::quote_match::quote_match;
/// let text = "The dose was 240 mg daily in both arms.";
/// assert_eq!(quote_match("the DOSE was 240 mg daily", text), 1.0);
/// let s = quote_match("The dose was 250 mg daily in both arms.", text); // a swapped figure
/// assert!(s > 0.4 && s < 0.6);
/// ```
pub fn quote_match(quote: &str, text: &str) -> f64 {
    let q = Folded::new(quote);
    if q.chars.is_empty() {
        return 0.0;
    }
    let t = Folded::new(text);
    if t.find(&q.chars).is_some() {
        return 1.0;
    }
    let qw: Vec<&[char]> = words(&q).into_iter().map(|(a, b)| &q.chars[a..b]).collect();
    if qw.is_empty() {
        return 0.0;
    }
    let tw: Vec<&[char]> = words(&t).into_iter().map(|(a, b)| &t.chars[a..b]).collect();
    longest_run(&qw, &tw) as f64 / qw.len() as f64
}

/// The length of the longest run of consecutive items of `q` found
/// consecutively in `t`.
fn longest_run(q: &[&[char]], t: &[&[char]]) -> usize {
    let mut prev = vec![0usize; t.len() + 1];
    let mut cur = vec![0usize; t.len() + 1];
    let mut best = 0;
    for qi in q {
        for (j, tj) in t.iter().enumerate() {
            cur[j + 1] = if qi == tj { prev[j] + 1 } else { 0 };
            best = best.max(cur[j + 1]);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    best
}

#[cfg(feature = "sql")]
pub use adapter::QuoteMatch;

/// The DataFusion adapter (with the `sql` feature).
#[cfg(feature = "sql")]
mod adapter {
    use super::*;

    /// The `quote_match` SQL function. NULL in either argument gives NULL.
    #[derive(Debug, PartialEq, Eq, Hash)]
    pub struct QuoteMatch {
        signature: Signature,
    }

    impl Default for QuoteMatch {
        fn default() -> Self {
            Self {
                signature: Signature::any(2, Volatility::Immutable),
            }
        }
    }

    impl ScalarUDFImpl for QuoteMatch {
        fn name(&self) -> &str {
            "quote_match"
        }
        fn signature(&self) -> &Signature {
            &self.signature
        }
        fn return_type(&self, _: &[DataType]) -> Result<DataType> {
            Ok(DataType::Float64)
        }
        fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let (quote, text) = two_strings(
                &args.args,
                args.number_rows,
                "quote_match",
                ["quote", "text"],
            )?;
            let mut out = Float64Builder::with_capacity(quote.len());
            for (q, t) in quote.iter().zip(text.iter()) {
                out.append_option(q.zip(t).map(|(q, t)| quote_match(q, t)));
            }
            let arr: ArrayRef = Arc::new(out.finish());
            Ok(ColumnarValue::Array(arr))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "Methods. We randomised one hundred and twenty adults to the two arms of the trial. The dose was 240 mg daily.";

    #[test]
    fn exact_after_folding() {
        assert_eq!(quote_match("The dose was 240 mg daily.", TEXT), 1.0);
        assert_eq!(quote_match("  the DOSE  was 240 mg\ndaily ", TEXT), 1.0);
        assert_eq!(quote_match("", TEXT), 0.0);
    }

    #[test]
    fn changed_last_word_of_ten_scores_nine_tenths() {
        let q = "We randomised one hundred and twenty adults to the three";
        assert_eq!(quote_match(q, TEXT), 0.9);
    }

    #[test]
    fn swapped_figure_mid_sentence_is_about_half() {
        let q = "We randomised one hundred and ninety adults to the two arms";
        let s = quote_match(q, TEXT);
        assert!((0.4..=0.6).contains(&s), "{s}");
    }

    #[test]
    fn shared_vocabulary_is_low() {
        let s = quote_match("adults were dosed daily in two trial arms", TEXT);
        assert!(s < 0.3, "{s}");
    }
}
