//! `token_count(text [, encoding])`: exact BPE token counts (o200k, cl100k)
//! or a cheap heuristic, plus the prefix arithmetic segmenters need.

use std::sync::Arc;

#[cfg(feature = "sql")]
use datafusion::arrow::array::{Array, ArrayRef, Int64Builder};
#[cfg(feature = "sql")]
use datafusion::arrow::datatypes::DataType;
#[cfg(feature = "sql")]
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
#[cfg(feature = "sql")]
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};
use tiktoken_rs::CoreBPE;

#[cfg(feature = "sql")]
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
    ///
    /// Long texts are counted in pieces cut just before a single space
    /// between two words: BPE pre-tokenization never joins across such a
    /// point, so the sum is exact, and the cost stays linear (BPE on one huge
    /// piece is quadratic). Only a run of more than [`PIECE`] bytes with no
    /// such space is cut blindly.
    pub fn count(self, text: &str) -> usize {
        let Some(bpe) = self.bpe() else {
            return text.len().div_ceil(4);
        };
        if text.len() <= PIECE {
            return bpe.encode_ordinary(text).len();
        }
        let mut total = 0;
        let mut start = 0;
        while start < text.len() {
            let end = piece_end(text, start);
            total += bpe.encode_ordinary(&text[start..end]).len();
            start = end;
        }
        total
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

/// The size of the pieces long texts are counted in.
pub const PIECE: usize = 8 * 1024;

/// Where the piece starting at `start` ends: the last point before
/// `start + PIECE` where BPE pre-tokenization always starts a new
/// pre-token, else (a run with no such point) a char boundary. Such points
/// are a single space between two non-whitespace chars (the space opens the
/// next pre-token, " word") and a non-whitespace char right after a line
/// break ("\n\n" is one pre-token, "Next" the next).
fn piece_end(text: &str, start: usize) -> usize {
    if text.len() - start <= PIECE {
        return text.len();
    }
    let limit = floor_char_boundary(text, start + PIECE);
    let b = text.as_bytes();
    let non_ws_before = |i: usize| {
        text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_whitespace())
    };
    let non_ws_at = |i: usize| text[i..].chars().next().is_some_and(|c| !c.is_whitespace());
    let mut i = limit;
    while i > start + 1 {
        i -= 1;
        let cut = match b[i] {
            b' ' => non_ws_before(i) && i + 1 < text.len() && non_ws_at(i + 1),
            b'\n' | b'\r' => i + 1 < text.len() && non_ws_at(i + 1) && i + 1 < limit,
            _ => false,
        };
        if cut {
            return if b[i] == b' ' { i } else { i + 1 };
        }
    }
    if limit > start {
        limit
    } else {
        ceil_char_boundary(text, start + 1)
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

#[cfg(feature = "sql")]
pub use adapter::TokenCount;

/// The DataFusion adapter (with the `sql` feature).
#[cfg(feature = "sql")]
mod adapter {
    use super::*;

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
    }

    #[test]
    fn long_texts_count_exactly_in_pieces() {
        let words = [
            "the",
            "trial",
            "enrolled",
            "482",
            "patients;",
            "mean",
            "age",
            "56.7",
            "(SD",
            "10.2)",
            "\n\n",
            "end.\n\nNext",
            "a\n b",
            "x\t\ty",
            "Über",
            "naïve",
            "—",
        ];
        let mut t = String::new();
        let mut i = 7usize;
        while t.len() < 5 * PIECE {
            i = i.wrapping_mul(31).wrapping_add(17) % 1009;
            t.push_str(words[i % words.len()]);
            t.push_str(match i % 7 {
                0 => "  ",
                1 => "\n\n",
                2 => "\n",
                _ => " ",
            });
        }
        // Texts whose only breaks are line breaks, or blank lines.
        let lines: String = (0..6000).map(|n| format!("{n}\n")).collect();
        let paras = "Results were similar.\n\nNext paragraph here.\n\n".repeat(400);
        let indented = "Value:\n  indented line\n".repeat(800);
        for text in [&t, &lines, &paras, &indented] {
            assert!(text.len() > 2 * PIECE);
            for tk in [Tokenizer::O200k, Tokenizer::Cl100k] {
                let bpe = tk.bpe().unwrap();
                assert_eq!(tk.count(text), bpe.encode_ordinary(text).len(), "{tk:?}");
            }
        }
        // And on real papers, markup and all.
        for f in ["PMC3546023.md", "PMC3751573.html", "PMC4486927.txt"] {
            let p = format!("{}/../examples/corpus/{f}", env!("CARGO_MANIFEST_DIR"));
            let t = std::fs::read_to_string(&p).expect("example corpus");
            assert!(t.len() > PIECE);
            for tk in [Tokenizer::O200k, Tokenizer::Cl100k] {
                assert_eq!(
                    tk.count(&t),
                    tk.bpe().unwrap().encode_ordinary(&t).len(),
                    "{f} {tk:?}"
                );
            }
        }
        assert_eq!(Tokenizer::Heuristic.count("Hello world"), 3);
    }
}
