//! `parse_value(text, type)`: a model's answer read as a field's type, or
//! NULL with the reason it could not be. Nothing is guessed: "120 (60 per
//! arm)" or "3 million" for an integer and "unclear" for a boolean are NULL
//! with a reason; "None" and "N/A" are not values (keep one only where its
//! quote says so itself, which `verify_quote` checks).

use std::sync::Arc;

#[cfg(feature = "sql")]
use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Date32Builder, Float64Builder, Int64Builder, ListBuilder,
    StringBuilder, StructArray,
};
#[cfg(feature = "sql")]
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
#[cfg(feature = "sql")]
use datafusion::common::{plan_err, Result, ScalarValue};
#[cfg(feature = "sql")]
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

use crate::numbers_in::{decimal_convention, numbers_in, readings_in};
use crate::same_value::canonical;
#[cfg(feature = "sql")]
use crate::util::string_array;

/// A field type.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldType {
    /// A whole count.
    Integer,
    /// Any number.
    Number,
    /// Yes or no.
    Boolean,
    /// A calendar day.
    Date,
    /// Free text.
    String,
    /// One of the listed values.
    Enum(Vec<String>),
    /// Several strings.
    List,
}

impl FieldType {
    /// Parses `integer`, `number`, `boolean`, `date`, `string`, `list` or `enum(a, b, c)`.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        let lower = s.to_ascii_lowercase();
        Some(match lower.as_str() {
            "integer" | "int" => Self::Integer,
            "number" | "float" | "double" => Self::Number,
            "boolean" | "bool" => Self::Boolean,
            "date" => Self::Date,
            "string" | "text" => Self::String,
            "list" => Self::List,
            _ if lower.starts_with("enum(") && lower.ends_with(')') => Self::Enum(
                s[5..s.len() - 1]
                    .split(',')
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
                    .collect(),
            ),
            _ => return None,
        })
    }

    #[cfg(feature = "sql")]
    fn data_type(&self) -> DataType {
        match self {
            Self::Integer => DataType::Int64,
            Self::Number => DataType::Float64,
            Self::Boolean => DataType::Boolean,
            Self::Date => DataType::Date32,
            Self::String | Self::Enum(_) => DataType::Utf8,
            Self::List => DataType::new_list(DataType::Utf8, true),
        }
    }
}

/// A parsed value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A number.
    Num(f64),
    /// A boolean.
    Bool(bool),
    /// Days since 1970-01-01.
    Date(i32),
    /// A string (or enum member).
    Str(String),
    /// A list.
    List(Vec<String>),
}

const NO_VALUE: &[&str] = &[
    "none",
    "n/a",
    "na",
    "n.a.",
    "nr",
    "not reported",
    "not stated",
    "not available",
    "unknown",
    "-",
    "—",
    "null",
    "nil",
    "",
];

/// Reads `text` as `ty`: the value, or the reason there is none.
///
/// ```
/// use quarry_udfs::parse_value::{parse_value, FieldType, Value};
/// assert_eq!(parse_value("120", &FieldType::Integer), Ok(Value::Int(120)));
/// assert!(parse_value("120 (60 per arm)", &FieldType::Integer).is_err());
/// assert!(parse_value("unclear", &FieldType::Boolean).is_err());
/// ```
pub fn parse_value(text: &str, ty: &FieldType) -> std::result::Result<Value, String> {
    let t = text.trim();
    let c = canonical(t);
    if NO_VALUE.contains(&c.as_str()) {
        return Err(format!(
            "'{t}' is no value (keep it only where its quote says so itself)"
        ));
    }
    match ty {
        FieldType::Integer | FieldType::Number => {
            let pct = t.contains('%') || c.contains("percent") || c.contains("per cent");
            // A lone token with digits ("1,204", "54%", "2a") is read as
            // written, without a language: "2a" is a label or an ordinal in
            // some language, not the number 2. Words ("twenty-four",
            // "120 patients") are read in the language they are in.
            let token =
                !t.contains(char::is_whitespace) && t.contains(|c: char| c.is_ascii_digit());
            let mut nums = if token {
                readings_in(t, None, decimal_convention(t))
                    .into_iter()
                    .map(|r| r.value)
                    .collect()
            } else {
                numbers_in(t, None)
            };
            if pct {
                // "54%" is the number 54; drop the 0.54 reading.
                let written: Vec<f64> = nums
                    .iter()
                    .copied()
                    .filter(|v| !nums.iter().any(|w| (w / 100.0 - v).abs() < 1e-12 && w != v))
                    .collect();
                nums = written;
            }
            let scaled = [
                "million", "billion", "bn", "thousand", "mio", "mrd", "milliard",
            ]
            .iter()
            .any(|w| c.contains(w));
            if scaled && *ty == FieldType::Integer && !nums.is_empty() {
                return Err(format!("'{t}' is a rounded figure, not an exact count"));
            }
            match nums.as_slice() {
                [] => Err(format!("'{t}' states no number")),
                [v] if *ty == FieldType::Integer => {
                    if pct {
                        Err(format!("'{t}' is a percentage, not a count"))
                    } else if v.fract() != 0.0 || v.abs() > 9.0e15 {
                        Err(format!("'{t}' is not a whole number"))
                    } else {
                        Ok(Value::Int(*v as i64))
                    }
                }
                [v] => Ok(Value::Num(*v)),
                [_, _, ..] if scaled && nums.len() == 2 && *ty == FieldType::Number => {
                    Ok(Value::Num(nums[1]))
                }
                many => Err(format!(
                    "'{t}' states several numbers ({}); give one",
                    many.iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
        FieldType::Boolean => match c.trim_end_matches('.') {
            "yes" | "true" | "y" | "1" | "present" | "reported" | "included" => {
                Ok(Value::Bool(true))
            }
            "no" | "false" | "n" | "0" | "absent" | "excluded" => Ok(Value::Bool(false)),
            other => Err(format!("'{other}' is not a yes or no")),
        },
        FieldType::Date => parse_date(t).map(Value::Date),
        FieldType::String => Ok(Value::Str(t.to_string())),
        FieldType::Enum(options) => options
            .iter()
            .find(|o| canonical(o) == c)
            .map(|o| Value::Str(o.clone()))
            .ok_or_else(|| format!("'{t}' is not one of: {}", options.join(", "))),
        FieldType::List => {
            let items: Vec<String> = t
                .split(['\n', ';'])
                .flat_map(|p| {
                    if p.contains(',') {
                        p.split(',').collect::<Vec<_>>()
                    } else {
                        vec![p]
                    }
                })
                .map(|s| {
                    s.trim()
                        .trim_start_matches(['-', '*', '•'])
                        .trim()
                        .to_string()
                })
                .filter(|s| !s.is_empty())
                .collect();
            Ok(Value::List(items))
        }
    }
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn valid_day(y: i64, m: i64, d: i64) -> bool {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let len = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    (1..=12).contains(&m) && d >= 1 && d <= len[(m - 1) as usize]
}

/// ISO dates ("2019-03-14", "2019/03/14") and dates with a month name
/// ("14 March 2019", "March 14, 2019"). Numeric day/month orders other than
/// ISO are ambiguous and refused, as is a year or a month alone.
fn parse_date(t: &str) -> std::result::Result<i32, String> {
    let parts: Vec<&str> = t
        .split(|c: char| c == '-' || c == '/' || c == '.' || c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    let num = |s: &str| s.parse::<i64>().ok();
    let month = |s: &str| {
        let l = s.to_ascii_lowercase();
        MONTHS
            .iter()
            .position(|m| l.starts_with(m))
            .map(|i| i as i64 + 1)
    };
    let (y, m, d) = match parts.as_slice() {
        [a, b, c] if a.len() == 4 => match (num(a), num(b).or_else(|| month(b)), num(c)) {
            (Some(y), Some(m), Some(d)) => (y, m, d),
            _ => return Err(format!("'{t}' is not a date")),
        },
        [a, b, c] => match (num(a), month(b), num(c), month(a), num(b)) {
            (Some(d), Some(m), Some(y), _, _) => (y, m, d),
            (_, _, Some(y), Some(m), Some(d)) => (y, m, d),
            _ if num(a).is_some() && num(b).is_some() => {
                return Err(format!(
                    "'{t}' is ambiguous (day/month order); write it as YYYY-MM-DD"
                ))
            }
            _ => return Err(format!("'{t}' is not a date")),
        },
        [_] | [_, _] => {
            return Err(format!(
                "'{t}' is not a full date (a year or month alone is not a day)"
            ))
        }
        _ => return Err(format!("'{t}' is not a date")),
    };
    if !valid_day(y, m, d) {
        return Err(format!("'{t}' is not a day of the calendar"));
    }
    i32::try_from(days_from_civil(y, m, d)).map_err(|_| format!("'{t}' is out of range"))
}

#[cfg(feature = "sql")]
pub use adapter::ParseValue;

/// The DataFusion adapter (with the `sql` feature).
#[cfg(feature = "sql")]
mod adapter {
    use super::*;

    /// The `parse_value` SQL function: a struct of `value` (typed by the
    /// constant `type` argument) and `reason` (why `value` is NULL).
    #[derive(Debug, PartialEq, Eq, Hash)]
    pub struct ParseValue {
        signature: Signature,
    }

    impl Default for ParseValue {
        fn default() -> Self {
            Self {
                signature: Signature::any(2, Volatility::Immutable),
            }
        }
    }

    fn type_arg(s: Option<&ScalarValue>) -> Result<FieldType> {
        let Some(s) = s else {
            return plan_err!("parse_value(text, type): the type must be a constant string");
        };
        match s.cast_to(&DataType::Utf8)? {
        ScalarValue::Utf8(Some(t)) => FieldType::parse(&t).map_or_else(
            || plan_err!("parse_value: unknown type '{t}'; use integer, number, boolean, date, string, list or enum(a, b, ...)"),
            Ok,
        ),
        _ => plan_err!("parse_value: the type must be a constant string"),
    }
    }

    fn out_fields(ty: &FieldType) -> Fields {
        Fields::from(vec![
            Field::new("value", ty.data_type(), true),
            Field::new("reason", DataType::Utf8, true),
        ])
    }

    impl ScalarUDFImpl for ParseValue {
        fn name(&self) -> &str {
            "parse_value"
        }
        fn signature(&self) -> &Signature {
            &self.signature
        }
        fn return_type(&self, _: &[DataType]) -> Result<DataType> {
            plan_err!("parse_value: the return type depends on the type argument")
        }
        fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
            let ty = type_arg(args.scalar_arguments.get(1).copied().flatten())?;
            Ok(Arc::new(Field::new(
                self.name(),
                DataType::Struct(out_fields(&ty)),
                true,
            )))
        }
        fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let ty = match &args.args[1] {
                ColumnarValue::Scalar(s) => type_arg(Some(s))?,
                _ => return plan_err!("parse_value: the type must be a constant string"),
            };
            let text = args.args[0].to_array(args.number_rows)?;
            let text = string_array(&text, "parse_value", "text")?;
            let mut reason = StringBuilder::new();
            let parsed: Vec<Option<std::result::Result<Value, String>>> = text
                .iter()
                .map(|t| t.map(|t| parse_value(t, &ty)))
                .collect();
            for p in &parsed {
                reason.append_option(p.as_ref().and_then(|r| r.as_ref().err()));
            }
            let ok = |p: &Option<std::result::Result<Value, String>>| {
                p.as_ref().and_then(|r| r.as_ref().ok()).cloned()
            };
            let value: ArrayRef = match ty {
                FieldType::Integer => {
                    let mut b = Int64Builder::new();
                    parsed.iter().for_each(|p| {
                        b.append_option(if let Some(Value::Int(v)) = ok(p) {
                            Some(v)
                        } else {
                            None
                        })
                    });
                    Arc::new(b.finish())
                }
                FieldType::Number => {
                    let mut b = Float64Builder::new();
                    parsed.iter().for_each(|p| {
                        b.append_option(if let Some(Value::Num(v)) = ok(p) {
                            Some(v)
                        } else {
                            None
                        })
                    });
                    Arc::new(b.finish())
                }
                FieldType::Boolean => {
                    let mut b = BooleanBuilder::new();
                    parsed.iter().for_each(|p| {
                        b.append_option(if let Some(Value::Bool(v)) = ok(p) {
                            Some(v)
                        } else {
                            None
                        })
                    });
                    Arc::new(b.finish())
                }
                FieldType::Date => {
                    let mut b = Date32Builder::new();
                    parsed.iter().for_each(|p| {
                        b.append_option(if let Some(Value::Date(v)) = ok(p) {
                            Some(v)
                        } else {
                            None
                        })
                    });
                    Arc::new(b.finish())
                }
                FieldType::String | FieldType::Enum(_) => {
                    let mut b = StringBuilder::new();
                    parsed.iter().for_each(|p| {
                        b.append_option(if let Some(Value::Str(v)) = ok(p) {
                            Some(v)
                        } else {
                            None
                        })
                    });
                    Arc::new(b.finish())
                }
                FieldType::List => {
                    let mut b = ListBuilder::new(StringBuilder::new());
                    for p in &parsed {
                        match ok(p) {
                            Some(Value::List(items)) => {
                                for i in items {
                                    b.values().append_value(i);
                                }
                                b.append(true);
                            }
                            _ => b.append(false),
                        }
                    }
                    Arc::new(b.finish())
                }
            };
            let arr = StructArray::try_new(
                out_fields(&ty),
                vec![value, Arc::new(reason.finish())],
                None,
            )?;
            Ok(ColumnarValue::Array(Arc::new(arr)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_exact_or_null_with_a_reason() {
        assert_eq!(parse_value("120", &FieldType::Integer), Ok(Value::Int(120)));
        assert_eq!(
            parse_value("1,204 patients", &FieldType::Integer),
            Ok(Value::Int(1204))
        );
        assert_eq!(
            parse_value("Twenty-four", &FieldType::Integer),
            Ok(Value::Int(24))
        );
        assert!(parse_value("120 (60 per arm)", &FieldType::Integer)
            .unwrap_err()
            .contains("several numbers"));
        assert!(parse_value("3 million", &FieldType::Integer)
            .unwrap_err()
            .contains("rounded"));
        assert!(parse_value("12.5", &FieldType::Integer)
            .unwrap_err()
            .contains("whole"));
        assert_eq!(parse_value("54%", &FieldType::Number), Ok(Value::Num(54.0)));
        assert!(parse_value("N/A", &FieldType::Number)
            .unwrap_err()
            .contains("no value"));
    }

    #[test]
    fn booleans_enums_dates_lists() {
        assert_eq!(
            parse_value("Yes.", &FieldType::Boolean),
            Ok(Value::Bool(true))
        );
        assert!(parse_value("unclear", &FieldType::Boolean).is_err());
        let e = FieldType::parse("enum(RCT, cohort, case-control)").unwrap();
        assert_eq!(parse_value("rct", &e), Ok(Value::Str("RCT".into())));
        assert!(parse_value("trial", &e).is_err());
        assert_eq!(
            parse_value("2019-03-14", &FieldType::Date),
            Ok(Value::Date(17969))
        );
        assert_eq!(
            parse_value("14 March 2019", &FieldType::Date),
            Ok(Value::Date(17969))
        );
        assert_eq!(
            parse_value("March 14, 2019", &FieldType::Date),
            Ok(Value::Date(17969))
        );
        assert!(parse_value("03/04/2019", &FieldType::Date)
            .unwrap_err()
            .contains("ambiguous"));
        assert!(parse_value("2019", &FieldType::Date).is_err());
        assert!(parse_value("2019-02-30", &FieldType::Date).is_err());
        assert_eq!(
            parse_value("pain; sleep, mood", &FieldType::List),
            Ok(Value::List(vec![
                "pain".into(),
                "sleep".into(),
                "mood".into()
            ]))
        );
        assert!(parse_value("None", &FieldType::String).is_err());
    }
}
