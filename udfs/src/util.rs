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
