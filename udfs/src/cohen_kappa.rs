//! `cohen_kappa(a, b)`: Cohen's kappa between two raters' labels over the
//! rows of a group (an aggregate): the agreement beyond what their own label
//! rates would give by chance, `(p_o - p_e) / (1 - p_e)`. Rows where either
//! label is NULL are left out; NULL when no row is left or chance agreement
//! is total (both raters gave one and the same label to everything), where
//! kappa is undefined. Labels are compared as text, so `'include'` from a
//! model and `'include'` from a person agree, and `'Include'` does not.
//!
//! A screening calibration reports kappa rather than accuracy: a screener
//! that excludes everything at a 5% inclusion rate is 95% accurate and has
//! a kappa of 0.

use std::collections::BTreeMap;
use std::sync::Arc;

#[cfg(feature = "sql")]
use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray};
#[cfg(feature = "sql")]
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
#[cfg(feature = "sql")]
use datafusion::common::{exec_err, Result, ScalarValue};
#[cfg(feature = "sql")]
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
#[cfg(feature = "sql")]
use datafusion::logical_expr::{Accumulator, AggregateUDFImpl, Signature, Volatility};

#[cfg(feature = "sql")]
use crate::util::string_array;

/// Kappa from a square table of counts (`table[i][j]`: rater 1 said `i`,
/// rater 2 said `j`); `None` when the table is empty or chance agreement is 1.
///
/// ```
/// use quarry_udfs::cohen_kappa::kappa;
/// let k = kappa(&[vec![20.0, 5.0], vec![10.0, 15.0]]).unwrap();
/// assert!((k - 0.4).abs() < 1e-12);
/// ```
pub fn kappa(table: &[Vec<f64>]) -> Option<f64> {
    let k = table.len();
    let total: f64 = table.iter().flatten().sum();
    if total <= 0.0 || table.iter().any(|r| r.len() != k) {
        return None;
    }
    let observed: f64 = (0..k).map(|i| table[i][i]).sum::<f64>() / total;
    let chance: f64 = (0..k)
        .map(|i| {
            let row: f64 = table[i].iter().sum();
            let col: f64 = table.iter().map(|r| r[i]).sum();
            row * col
        })
        .sum::<f64>()
        / (total * total);
    if (1.0 - chance).abs() < 1e-15 {
        return None;
    }
    Some((observed - chance) / (1.0 - chance))
}

/// Kappa from pairs of labels.
pub fn kappa_of_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<f64> {
    let mut counts: BTreeMap<(String, String), f64> = BTreeMap::new();
    for (a, b) in pairs {
        *counts.entry((a.to_string(), b.to_string())).or_default() += 1.0;
    }
    kappa_of_counts(&counts)
}

fn kappa_of_counts(counts: &BTreeMap<(String, String), f64>) -> Option<f64> {
    let mut labels: Vec<&String> = counts.keys().flat_map(|(a, b)| [a, b]).collect();
    labels.sort();
    labels.dedup();
    let index = |l: &String| labels.binary_search(&l).expect("a label of the table");
    let mut table = vec![vec![0.0; labels.len()]; labels.len()];
    for ((a, b), n) in counts {
        table[index(a)][index(b)] += n;
    }
    kappa(&table)
}

#[cfg(feature = "sql")]
pub use adapter::CohenKappa;

/// The DataFusion adapter (with the `sql` feature).
#[cfg(feature = "sql")]
mod adapter {
    use super::*;

    /// The `cohen_kappa(a, b)` aggregate.
    #[derive(Debug, PartialEq, Eq, Hash)]
    pub struct CohenKappa {
        signature: Signature,
    }

    impl Default for CohenKappa {
        fn default() -> Self {
            Self {
                signature: Signature::any(2, Volatility::Immutable),
            }
        }
    }

    impl AggregateUDFImpl for CohenKappa {
        fn name(&self) -> &str {
            "cohen_kappa"
        }
        fn signature(&self) -> &Signature {
            &self.signature
        }
        fn return_type(&self, _: &[DataType]) -> Result<DataType> {
            Ok(DataType::Float64)
        }
        fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
            Ok(Box::new(KappaAcc::default()))
        }
        fn state_fields(&self, _: StateFieldsArgs) -> Result<Vec<FieldRef>> {
            let item = |t: DataType| Arc::new(Field::new("item", t, true));
            Ok(vec![
                Arc::new(Field::new("a", DataType::List(item(DataType::Utf8)), true)),
                Arc::new(Field::new("b", DataType::List(item(DataType::Utf8)), true)),
                Arc::new(Field::new(
                    "n",
                    DataType::List(item(DataType::Float64)),
                    true,
                )),
            ])
        }
    }

    /// The table of label pairs seen so far.
    #[derive(Debug, Default)]
    struct KappaAcc {
        counts: BTreeMap<(String, String), f64>,
    }

    impl Accumulator for KappaAcc {
        fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
            if values.len() != 2 {
                return exec_err!("cohen_kappa(a, b) takes two columns of labels");
            }
            let a = string_array(&values[0], "cohen_kappa", "a")?;
            let b = string_array(&values[1], "cohen_kappa", "b")?;
            for (x, y) in a.iter().zip(b.iter()) {
                if let (Some(x), Some(y)) = (x, y) {
                    *self
                        .counts
                        .entry((x.to_string(), y.to_string()))
                        .or_default() += 1.0;
                }
            }
            Ok(())
        }

        fn evaluate(&mut self) -> Result<ScalarValue> {
            Ok(ScalarValue::Float64(kappa_of_counts(&self.counts)))
        }

        fn size(&self) -> usize {
            std::mem::size_of_val(self)
                + self
                    .counts
                    .keys()
                    .map(|(a, b)| a.capacity() + b.capacity() + 64)
                    .sum::<usize>()
        }

        fn state(&mut self) -> Result<Vec<ScalarValue>> {
            let a: Vec<ScalarValue> = self
                .counts
                .keys()
                .map(|(a, _)| ScalarValue::Utf8(Some(a.clone())))
                .collect();
            let b: Vec<ScalarValue> = self
                .counts
                .keys()
                .map(|(_, b)| ScalarValue::Utf8(Some(b.clone())))
                .collect();
            let n: Vec<ScalarValue> = self
                .counts
                .values()
                .map(|n| ScalarValue::Float64(Some(*n)))
                .collect();
            Ok(vec![
                ScalarValue::List(ScalarValue::new_list_nullable(&a, &DataType::Utf8)),
                ScalarValue::List(ScalarValue::new_list_nullable(&b, &DataType::Utf8)),
                ScalarValue::List(ScalarValue::new_list_nullable(&n, &DataType::Float64)),
            ])
        }

        fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
            let list = |i: usize| -> Result<&ListArray> {
                match states.get(i).and_then(|s| s.as_list_opt::<i32>()) {
                    Some(l) => Ok(l),
                    None => exec_err!("cohen_kappa: a partial state is not a list"),
                }
            };
            let (a, b, n) = (list(0)?, list(1)?, list(2)?);
            for row in 0..a.len() {
                if a.is_null(row) {
                    continue;
                }
                let (av, bv, nv) = (a.value(row), b.value(row), n.value(row));
                let av = string_array(&av, "cohen_kappa", "state")?.into_owned();
                let bv = string_array(&bv, "cohen_kappa", "state")?.into_owned();
                let nv = nv.as_primitive::<datafusion::arrow::datatypes::Float64Type>();
                for i in 0..av.len() {
                    *self
                        .counts
                        .entry((av.value(i).to_string(), bv.value(i).to_string()))
                        .or_default() += nv.value(i);
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::fixture;

    fn table_of(v: &serde_json::Value) -> Vec<Vec<f64>> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r.as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_f64().unwrap())
                    .collect()
            })
            .collect()
    }

    /// SAS PROC FREQ's and statsmodels' unweighted kappa, to 1e-6 (SAS
    /// prints four decimals).
    #[test]
    fn matches_sas_and_statsmodels() {
        let f = fixture("stats/proportion_ci_and_kappa_reference.json");
        let sas = &f["cohens_kappa_SAS"];
        let k = kappa(&table_of(&sas["table"])).unwrap();
        assert!(
            (k - sas["unweighted"]["kappa"].as_f64().unwrap()).abs() < 5e-5,
            "{k}"
        );
        let sm = &f["cohens_kappa_statsmodels"];
        let want = sm["table10_unweighted"]["kappa"].as_f64().unwrap();
        assert!((k - want).abs() < 1e-6, "{k} vs {want}");
        let mut checked = 0;
        for t in sm["more_tables"].as_array().unwrap() {
            let table = table_of(&t["table"]);
            let want = t["unweighted"]["kappa"].as_f64().unwrap();
            let got = kappa(&table).unwrap();
            assert!((got - want).abs() < 1e-6, "{table:?}: {got} vs {want}");
            // The same table as label pairs, as the aggregate sees rows.
            let pairs: Vec<(String, String)> = table
                .iter()
                .enumerate()
                .flat_map(|(i, r)| {
                    r.iter().enumerate().flat_map(move |(j, n)| {
                        std::iter::repeat_n((format!("l{i}"), format!("l{j}")), *n as usize)
                    })
                })
                .collect();
            let got = kappa_of_pairs(pairs.iter().map(|(a, b)| (a.as_str(), b.as_str()))).unwrap();
            assert!(
                (got - want).abs() < 1e-6,
                "{table:?} as pairs: {got} vs {want}"
            );
            checked += 1;
        }
        assert!(checked >= 4);
    }

    #[test]
    fn undefined_and_chance_level() {
        assert_eq!(kappa_of_pairs([("a", "a"), ("a", "a")]), None);
        assert_eq!(kappa_of_pairs(std::iter::empty()), None);
        // Excluding everything at 5% eligible: accurate, and no better than chance.
        let mut pairs = vec![("exclude", "exclude"); 95];
        pairs.extend(vec![("exclude", "include"); 5]);
        assert_eq!(kappa_of_pairs(pairs), Some(0.0));
        // A label only one rater used still counts.
        let k = kappa_of_pairs([("a", "a"), ("b", "b"), ("a", "c")]).unwrap();
        assert!(k > 0.0 && k < 1.0);
    }
}
