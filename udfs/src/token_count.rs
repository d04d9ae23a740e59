//! `token_count(text [, encoding])`: exact BPE token counts (o200k, cl100k)
//! or a cheap heuristic, plus the prefix arithmetic segmenters need.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Int64Builder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};
use tiktoken_rs::CoreBPE;

use crate::util::string_array;

/// A way of counting tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Tokenizer {
    /// OpenAI's `o200k_base` BPE (GPT-4o, GPT-4.1, GPT-5, o-series): the default.
    #[default]
    O200k,
    /// OpenAI's `cl100k_base` BPE (GPT-4, GPT-3.5).
    Cl100k,
    /// One token per four bytes of UTF-8, rounded up: free, approximate.
    Heuristic,
}

impl Tokenizer {
    /// Parses a tokenizer name (`o200k`, `o200k_base`, `cl100k`, `cl100k_base`, `heuristic`).
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "o200k" | "o200k_base" | "" => Some(Self::O200k),
            "cl100k" | "cl100k_base" => Some(Self::Cl100k),
            "heuristic" | "approx" | "chars" => Some(Self::Heuristic),
            _ => None,
        }
    }

    /// The name written into specs and hashes.
    pub fn name(self) -> &'static str {
        match self {
            Self::O200k => "o200k_base",
            Self::Cl100k => "cl100k_base",
            Self::Heuristic => "heuristic",
        }
    }

    fn bpe(self) -> Option<&'static CoreBPE> {
        match self {
            Self::O200k => Some(tiktoken_rs::o200k_base_singleton()),
            Self::Cl100k => Some(tiktoken_rs::cl100k_base_singleton()),
            Self::Heuristic => None,
        }
    }

    /// The number of tokens in `text`.
    pub fn count(self, text: &str) -> usize {
        match self.bpe() {
            Some(bpe) => bpe.encode_ordinary(text).len(),
            None => text.len().div_ceil(4),
        }
    }

    /// The byte length of the longest prefix of `text` holding at most
    /// `max_tokens` tokens, on a char boundary. Returns `text.len()` when the
    /// whole text fits.
    pub fn prefix_len(self, text: &str, max_tokens: usize) -> usize {
        let end = match self.bpe() {
            Some(bpe) => {
                let tokens = bpe.encode_ordinary(text);
                if tokens.len() <= max_tokens {
                    return text.len();
                }
                bpe._decode_native_and_split(tokens[..max_tokens].to_vec())
                    .map(|b| b.len())
                    .sum::<usize>()
            }
            None => max_tokens.saturating_mul(4),
        };
        floor_char_boundary(text, end.min(text.len()))
    }

    /// The byte offset where the last `max_tokens` tokens of `text` begin, on
    /// a char boundary (0 when the whole text fits).
    pub fn suffix_start(self, text: &str, max_tokens: usize) -> usize {
        let start = match self.bpe() {
            Some(bpe) => {
                let tokens = bpe.encode_ordinary(text);
                if tokens.len() <= max_tokens {
                    return 0;
                }
                let skip = tokens.len() - max_tokens;
                bpe._decode_native_and_split(tokens[..skip].to_vec())
                    .map(|b| b.len())
                    .sum::<usize>()
            }
            None => text.len().saturating_sub(max_tokens.saturating_mul(4)),
        };
        ceil_char_boundary(text, start.min(text.len()))
    }
}

/// The largest char boundary at or below `i`.
pub fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary at or above `i`.
pub fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// `token_count(text [, encoding])`: the number of tokens in a text.
///
/// ```sql
/// SELECT token_count('Hello world');              -- 2 (o200k_base)
/// SELECT token_count('Hello world', 'heuristic'); -- 3
/// ```
/// NULL text gives NULL; an unknown encoding is an error naming the accepted ones.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TokenCount {
    signature: Signature,
}

impl Default for TokenCount {
    fn default() -> Self {
        Self {
            signature: Signature::one_of(
                vec![TypeSignature::Any(1), TypeSignature::Any(2)],
                Volatility::Immutable,
            ),
        }
    }
}

impl ScalarUDFImpl for TokenCount {
    fn name(&self) -> &str {
        "token_count"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let tokenizer = match args.args.get(1) {
            None => Tokenizer::default(),
            Some(ColumnarValue::Scalar(
                ScalarValue::Utf8(Some(s))
                | ScalarValue::Utf8View(Some(s))
                | ScalarValue::LargeUtf8(Some(s)),
            )) => match Tokenizer::parse(s) {
                Some(t) => t,
                None => {
                    return plan_err!(
                        "token_count: unknown encoding '{s}'; use 'o200k_base', 'cl100k_base' or 'heuristic'"
                    )
                }
            },
            Some(_) => return exec_err!("token_count: the encoding must be a constant string"),
        };
        let arrays = ColumnarValue::values_to_arrays(&args.args[..1])?;
        let text = string_array(&arrays[0], "token_count", "text")?;
        let mut out = Int64Builder::with_capacity(text.len());
        for row in text.iter() {
            out.append_option(row.map(|t| tokenizer.count(t) as i64));
        }
        let arr: ArrayRef = Arc::new(out.finish());
        Ok(ColumnarValue::Array(arr))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_prefixes_agree() {
        let t = "The quick brown fox jumps over the lazy dog. Ünïcödé façade naïve.";
        for tk in [Tokenizer::O200k, Tokenizer::Cl100k, Tokenizer::Heuristic] {
            let total = tk.count(t);
            assert!(total > 5);
            for n in 0..=total {
                let p = tk.prefix_len(t, n);
                assert!(t.is_char_boundary(p));
                assert!(tk.count(&t[..p]) <= n, "{tk:?} prefix {n}");
                let s = tk.suffix_start(t, n);
                assert!(t.is_char_boundary(s));
            }
            assert_eq!(tk.prefix_len(t, total), t.len());
        }
        assert_eq!(Tokenizer::O200k.count("Hello world"), 2);
        assert_eq!(Tokenizer::Heuristic.count("Hello world"), 3);
    }
}
