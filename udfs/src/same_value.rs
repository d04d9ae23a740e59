//! `same_value(a, b)`: whether two values are one value written two ways.
//! Case, whitespace, quote marks (and quotes around the whole value), dashes
//! and a trailing full stop do not make a difference; used when reconciling
//! what several chunks gave for one field.

use std::sync::Arc;

#[cfg(feature = "sql")]
use datafusion::arrow::array::{Array, ArrayRef, BooleanBuilder};
#[cfg(feature = "sql")]
use datafusion::arrow::datatypes::DataType;
#[cfg(feature = "sql")]
use datafusion::common::Result;
#[cfg(feature = "sql")]
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

use crate::fold::Folded;
#[cfg(feature = "sql")]
use crate::util::two_strings;

/// The canonical spelling `same_value` compares.
pub fn canonical(value: &str) -> String {
    let folded = Folded::new(value).as_string();
    let mut s = folded.as_str().trim();
    loop {
        let before = s;
        s = s.trim_end_matches('.').trim();
        if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
            s = s[1..s.len() - 1].trim();
        }
        if s == before {
            return s.to_string();
        }
    }
}

/// Whether `a` and `b` are one value.
///
/// ```
/// use quarry_udfs::same_value::same_value;
/// assert!(same_value("Randomised controlled trial.", "“randomised controlled trial”"));
/// assert!(!same_value("placebo", "placebos"));
/// ```
pub fn same_value(a: &str, b: &str) -> bool {
    canonical(a) == canonical(b)
}

#[cfg(feature = "sql")]
pub use adapter::SameValue;

/// The DataFusion adapter (with the `sql` feature).
#[cfg(feature = "sql")]
mod adapter {
    use super::*;

    /// The `same_value` SQL function. NULL in either argument gives NULL.
    #[derive(Debug, PartialEq, Eq, Hash)]
    pub struct SameValue {
        signature: Signature,
    }

    impl Default for SameValue {
        fn default() -> Self {
            Self {
                signature: Signature::any(2, Volatility::Immutable),
            }
        }
    }

    impl ScalarUDFImpl for SameValue {
        fn name(&self) -> &str {
            "same_value"
        }
        fn signature(&self) -> &Signature {
            &self.signature
        }
        fn return_type(&self, _: &[DataType]) -> Result<DataType> {
            Ok(DataType::Boolean)
        }
        fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let (a, b) = two_strings(&args.args, args.number_rows, "same_value", ["a", "b"])?;
            let mut out = BooleanBuilder::with_capacity(a.len());
            for (x, y) in a.iter().zip(b.iter()) {
                out.append_option(x.zip(y).map(|(x, y)| same_value(x, y)));
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
    fn spellings_of_one_value() {
        assert!(same_value("Placebo", "placebo."));
        assert!(same_value("'double-blind'", "Double–blind"));
        assert!(same_value("  open   label ", "Open label."));
        assert!(!same_value("240 mg", "250 mg"));
        assert!(!same_value("", "x"));
        assert!(same_value("", "..."));
    }
}
