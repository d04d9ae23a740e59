//! Argument helpers shared by the SQL adapters.

use std::borrow::Cow;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};

/// Casts any string-like (or castable) array to `Utf8` so kernels see one
/// type whatever the source gave (Parquet yields `Utf8View`).
pub fn string_array<'a>(
    array: &'a ArrayRef,
    func: &str,
    arg: &str,
) -> Result<Cow<'a, StringArray>> {
    if let Some(s) = array.as_string_opt::<i32>() {
        return Ok(Cow::Borrowed(s));
    }
    match cast(array, &DataType::Utf8) {
        Ok(c) => Ok(Cow::Owned(c.as_string::<i32>().clone())),
        Err(_) => exec_err!(
            "{func}: argument '{arg}' must be text, got {}",
            array.data_type()
        ),
    }
}

/// The first two arguments of a call as text arrays of the call's length
/// (scalars broadcast), named for errors: `(quote, text)`, `(a, b)`, ...
pub fn two_strings(
    args: &[datafusion::logical_expr::ColumnarValue],
    rows: usize,
    func: &str,
    names: [&str; 2],
) -> Result<(StringArray, StringArray)> {
    if args.len() < 2 {
        return exec_err!("{func} takes {} and {}", names[0], names[1]);
    }
    let a = args[0].to_array(rows)?;
    let b = args[1].to_array(rows)?;
    let a = string_array(&a, func, names[0])?.into_owned();
    let b = string_array(&b, func, names[1])?.into_owned();
    Ok((a, b))
}

/// A JSON fixture from the project's shared public test material
/// (`../shared/data/fixtures/` beside the project root), for tests.
#[cfg(test)]
pub(crate) fn shared_fixture(rel: &str) -> serde_json::Value {
    let path = format!(
        "{}/../../shared/data/fixtures/{rel}",
        env!("CARGO_MANIFEST_DIR")
    );
    let raw = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("the fixture {path}: {e}"));
    serde_json::from_str(&raw).unwrap_or_else(|e| panic!("{path}: {e}"))
}
