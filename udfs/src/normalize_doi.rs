//! `normalize_doi(text)`: one spelling for a DOI however an export wrote
//! it, so that two records of one paper compare equal. Case is folded (DOIs
//! are case-insensitive), `doi:` and resolver prefixes (`https://doi.org/`,
//! `http://dx.doi.org/`) are dropped, URL escapes are decoded, and spaces and
//! trailing punctuation (`.`, `,`, `;`, `:`, closing brackets that open
//! nowhere in the DOI) are cut. Text that holds no DOI (no `10.NNNN/suffix`)
//! is NULL: an export's "n/a" must not make records equal.

use std::borrow::Cow;
use std::sync::Arc;

#[cfg(feature = "sql")]
use datafusion::arrow::array::{Array, ArrayRef, StringBuilder};
#[cfg(feature = "sql")]
use datafusion::arrow::datatypes::DataType;
#[cfg(feature = "sql")]
use datafusion::common::{exec_err, Result};
#[cfg(feature = "sql")]
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

#[cfg(feature = "sql")]
use crate::util::string_array;

/// Decodes `%XX` escapes (a DOI or a path copied from a URL); bytes that do
/// not make UTF-8 keep their escapes.
pub fn percent_decode(s: &str) -> Cow<'_, str> {
    if !s.contains('%') {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| s.to_string()))
}

/// The normalised DOI, or `None` when the text holds none.
///
/// ```
/// use quarry_udfs::normalize_doi::normalize_doi;
/// let a = normalize_doi("https://doi.org/10.1037/EDU0000123");
/// assert_eq!(a.as_deref(), Some("10.1037/edu0000123"));
/// assert_eq!(normalize_doi("doi: 10.1037/edu0000123."), a);
/// assert_eq!(normalize_doi("n/a"), None);
/// ```
pub fn normalize_doi(text: &str) -> Option<String> {
    let decoded = percent_decode(text.trim());
    let mut doi = if decoded.is_ascii() {
        let mut d = decoded.into_owned();
        d.make_ascii_lowercase();
        d
    } else {
        decoded.to_lowercase()
    };
    // The DOI starts at its directory indicator; whatever comes before
    // (a resolver URL, `doi:`, `DOI `) is a prefix; it ends at a space.
    let start = find_prefix(&doi)?;
    let end = doi[start..]
        .find(char::is_whitespace)
        .map_or(doi.len(), |e| start + e);
    doi.truncate(end);
    doi.replace_range(..start, "");
    // Trailing punctuation belongs to the sentence, not the DOI; a closing
    // bracket stays when the DOI opens it (10.1016/s0140-6736(20)30183-5).
    while let Some(last) = doi.chars().last() {
        let cut = match last {
            '.' | ',' | ';' | ':' | '"' | '\'' | '>' => true,
            ')' => doi.matches('(').count() < doi.matches(')').count(),
            ']' => doi.matches('[').count() < doi.matches(']').count(),
            _ => false,
        };
        if !cut {
            break;
        }
        doi.pop();
    }
    let (prefix, suffix) = doi.split_once('/')?;
    if suffix.is_empty() || prefix.len() < 7 {
        return None;
    }
    Some(doi)
}

/// The byte offset of `10.NNNN` (four to nine digits, then `/` or `.`
/// for sub-registrants) in lower-case text.
fn find_prefix(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(off) = s[from..].find("10.") {
        let i = from + off;
        // Not the middle of a number ("110.5").
        let starts_word = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        let digits = b[i + 3..].iter().take_while(|c| c.is_ascii_digit()).count();
        let after = b.get(i + 3 + digits);
        if starts_word && (4..=9).contains(&digits) && matches!(after, Some(b'/') | Some(b'.')) {
            return Some(i);
        }
        from = i + 3;
    }
    None
}

#[cfg(feature = "sql")]
pub use adapter::NormalizeDoi;

/// The DataFusion adapter (with the `sql` feature).
#[cfg(feature = "sql")]
mod adapter {
    use super::*;

    /// The `normalize_doi` SQL function.
    #[derive(Debug, PartialEq, Eq, Hash)]
    pub struct NormalizeDoi {
        signature: Signature,
    }

    impl Default for NormalizeDoi {
        fn default() -> Self {
            Self {
                signature: Signature::any(1, Volatility::Immutable),
            }
        }
    }

    impl ScalarUDFImpl for NormalizeDoi {
        fn name(&self) -> &str {
            "normalize_doi"
        }
        fn signature(&self) -> &Signature {
            &self.signature
        }
        fn return_type(&self, _: &[DataType]) -> Result<DataType> {
            Ok(DataType::Utf8)
        }
        fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let Some(a) = args.args.first() else {
                return exec_err!("normalize_doi takes one argument, the DOI text");
            };
            let a = a.to_array(args.number_rows)?;
            let s = string_array(&a, "normalize_doi", "doi")?;
            let mut out = StringBuilder::with_capacity(s.len(), s.len() * 24);
            for v in s.iter() {
                out.append_option(v.and_then(normalize_doi));
            }
            let arr: ArrayRef = Arc::new(out.finish());
            Ok(ColumnarValue::Array(arr))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::normalize_doi as n;

    #[test]
    fn spellings_of_one_doi() {
        let want = Some("10.1037/edu0000123".to_string());
        for s in [
            "10.1037/edu0000123",
            "10.1037/EDU0000123",
            "https://doi.org/10.1037/EDU0000123",
            "http://dx.doi.org/10.1037/edu0000123",
            "doi:10.1037/edu0000123",
            "DOI: 10.1037/edu0000123.",
            "https://doi.org/10.1037%2Fedu0000123",
            " 10.1037/edu0000123; ",
            "(10.1037/edu0000123)",
            "doi.org/10.1037/edu0000123,",
        ] {
            assert_eq!(n(s), want, "{s}");
        }
    }

    #[test]
    fn brackets_that_belong_to_the_doi_stay() {
        assert_eq!(
            n("https://doi.org/10.1016/S0140-6736(20)30183-5.").as_deref(),
            Some("10.1016/s0140-6736(20)30183-5")
        );
        assert_eq!(
            n("10.1002/(SICI)1097-0258(19980815/30)17:15/16<1661::AID-SIM968>3.0.CO;2-2")
                .as_deref(),
            Some("10.1002/(sici)1097-0258(19980815/30)17:15/16<1661::aid-sim968>3.0.co;2-2")
        );
    }

    #[test]
    fn text_without_a_doi_is_none() {
        for s in [
            "",
            "n/a",
            "10.5",
            "110.1037/x",
            "10.12/abc",
            "10.1037/",
            "pmid 123456",
        ] {
            assert_eq!(n(s), None, "{s}");
        }
    }

    #[test]
    fn different_dois_stay_different() {
        assert_ne!(n("10.1000/abc1"), n("10.1000/abc2"));
        assert_eq!(n("10.1000.10/ABC").as_deref(), Some("10.1000.10/abc"));
    }
}
