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

/// True when `array` has no rows or only NULLs.
pub fn all_null(array: &dyn Array) -> bool {
    array.null_count() == array.len()
}
