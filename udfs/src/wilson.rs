//! `wilson_lower(x, n [, confidence])` and `wilson_upper(x, n [, confidence])`:
//! the Wilson score interval for a proportion of `x` in `n` (without
//! continuity correction, as R's `binom.confint(method = "wilson")`). It
//! stays inside [0, 1] and keeps a width at 0 and at `n`, where the textbook
//! (Wald) interval collapses to a point: the interval a screening
//! calibration reports for "3 eligible of 60 excluded".

use std::sync::Arc;

#[cfg(feature = "sql")]
use datafusion::arrow::array::{Array, ArrayRef, Float64Array, Float64Builder};
#[cfg(feature = "sql")]
use datafusion::arrow::compute::cast;
#[cfg(feature = "sql")]
use datafusion::arrow::datatypes::DataType;
#[cfg(feature = "sql")]
use datafusion::common::{exec_err, Result};
#[cfg(feature = "sql")]
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

/// The standard normal quantile (Wichura's algorithm AS 241, PPND16:
/// about 16 digits). The coefficients are as published.
#[allow(clippy::excessive_precision)]
pub fn normal_quantile(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        return q
            * (((((((2_509.080_928_730_122_7 * r + 33_430.575_583_588_128) * r
                + 67_265.770_927_008_7)
                * r
                + 45_921.953_931_549_87)
                * r
                + 13_731.693_765_509_461)
                * r
                + 1_971.590_950_306_551_3)
                * r
                + 133.141_667_891_784_38)
                * r
                + 3.387_132_872_796_366_5)
            / (((((((5_226.495_278_852_545 * r + 28_729.085_735_721_943) * r
                + 39_307.895_800_092_71)
                * r
                + 21_213.794_301_586_597)
                * r
                + 5_394.196_021_424_751)
                * r
                + 687.187_007_492_057_9)
                * r
                + 42.313_330_701_600_91)
                * r
                + 1.0);
    }
    let mut r = if q < 0.0 { p } else { 1.0 - p };
    r = (-r.ln()).sqrt();
    let v = if r <= 5.0 {
        r -= 1.6;
        (((((((7.745_450_142_783_414e-4 * r + 0.022_723_844_989_269_184) * r
            + 0.241_780_725_177_450_6)
            * r
            + 1.270_458_252_452_368_4)
            * r
            + 3.647_848_324_763_204_5)
            * r
            + 5.769_497_221_460_691)
            * r
            + 4.630_337_846_156_546)
            * r
            + 1.423_437_110_749_683_5)
            / (((((((1.050_750_071_644_416_9e-9 * r + 5.475_938_084_995_345e-4) * r
                + 0.015_198_666_563_616_457)
                * r
                + 0.148_103_976_427_480_08)
                * r
                + 0.689_767_334_985_1)
                * r
                + 1.676_384_830_183_803_8)
                * r
                + 2.053_191_626_637_759)
                * r
                + 1.0)
    } else {
        r -= 5.0;
        (((((((2.010_334_399_292_288_1e-7 * r + 2.711_555_568_743_487_6e-5) * r
            + 0.001_242_660_947_388_078_4)
            * r
            + 0.026_532_189_526_576_124)
            * r
            + 0.296_560_571_828_504_87)
            * r
            + 1.784_826_539_917_291_3)
            * r
            + 5.463_784_911_164_114)
            * r
            + 6.657_904_643_501_103)
            / (((((((2.044_263_103_389_939_7e-15 * r + 1.421_511_758_316_446e-7) * r
                + 1.846_318_317_510_054_8e-5)
                * r
                + 7.868_691_311_456_133e-4)
                * r
                + 0.014_875_361_290_850_615)
                * r
                + 0.136_929_880_922_735_8)
                * r
                + 0.599_832_206_555_888)
                * r
                + 1.0)
    };
    if q < 0.0 {
        -v
    } else {
        v
    }
}

/// The two-sided Wilson score interval for `x` of `n` at `confidence`
/// (0.95 for 95%); `None` when `n` is not positive, `x` is outside
/// `0..=n`, or the confidence is not strictly between 0 and 1.
///
/// ```
/// use quarry_udfs::wilson::wilson;
/// let (lo, hi) = wilson(3.0, 60.0, 0.95).unwrap();
/// assert_eq!((format!("{lo:.3}"), format!("{hi:.3}")), ("0.017".into(), "0.137".into()));
/// ```
pub fn wilson(x: f64, n: f64, confidence: f64) -> Option<(f64, f64)> {
    let valid = n > 0.0 && (0.0..=n).contains(&x) && confidence > 0.0 && confidence < 1.0;
    if !valid {
        return None;
    }
    let z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
    let p = x / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At the ends the bound is exact, not a rounding away from it.
    let lo = if x == 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if x == n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    Some((lo, hi))
}

#[cfg(feature = "sql")]
pub use adapter::WilsonBound;

/// The DataFusion adapter (with the `sql` feature).
#[cfg(feature = "sql")]
mod adapter {
    use super::*;

    /// `wilson_lower` or `wilson_upper`.
    #[derive(Debug, PartialEq, Eq, Hash)]
    pub struct WilsonBound {
        upper: bool,
        signature: Signature,
    }

    impl WilsonBound {
        /// The lower bound's function.
        pub fn lower() -> Self {
            Self {
                upper: false,
                signature: Signature::variadic_any(Volatility::Immutable),
            }
        }
        /// The upper bound's function.
        pub fn upper() -> Self {
            Self {
                upper: true,
                signature: Signature::variadic_any(Volatility::Immutable),
            }
        }
    }

    fn floats(a: &ArrayRef, func: &str, arg: &str) -> Result<Float64Array> {
        match cast(a, &DataType::Float64) {
            Ok(c) => Ok(c
                .as_any()
                .downcast_ref::<Float64Array>()
                .expect("cast to Float64")
                .clone()),
            Err(_) => exec_err!("{func}: {arg} must be a number, got {}", a.data_type()),
        }
    }

    impl ScalarUDFImpl for WilsonBound {
        fn name(&self) -> &str {
            if self.upper {
                "wilson_upper"
            } else {
                "wilson_lower"
            }
        }
        fn signature(&self) -> &Signature {
            &self.signature
        }
        fn return_type(&self, _: &[DataType]) -> Result<DataType> {
            Ok(DataType::Float64)
        }
        fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let name = self.name();
            if !(2..=3).contains(&args.args.len()) {
                return exec_err!(
                    "{name}(x, n [, confidence]): takes 2 or 3 arguments, got {}",
                    args.args.len()
                );
            }
            let rows = args.number_rows;
            let x = floats(&args.args[0].to_array(rows)?, name, "x")?;
            let n = floats(&args.args[1].to_array(rows)?, name, "n")?;
            let conf = match args.args.get(2) {
                Some(c) => Some(floats(&c.to_array(rows)?, name, "confidence")?),
                None => None,
            };
            let mut out = Float64Builder::with_capacity(rows);
            for i in 0..rows {
                if x.is_null(i) || n.is_null(i) || conf.as_ref().is_some_and(|c| c.is_null(i)) {
                    out.append_null();
                    continue;
                }
                let c = conf.as_ref().map_or(0.95, |c| c.value(i));
                if !(c > 0.0 && c < 1.0) {
                    return exec_err!(
                        "{name}: confidence must be between 0 and 1 (0.95 for 95%), got {c}"
                    );
                }
                let bound = wilson(x.value(i), n.value(i), c)
                    .map(|(lo, hi)| if self.upper { hi } else { lo });
                out.append_option(bound);
            }
            let arr: ArrayRef = Arc::new(out.finish());
            Ok(ColumnarValue::Array(arr))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::fixture;

    #[test]
    fn quantiles() {
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-14);
        assert!((normal_quantile(0.5)).abs() < 1e-15);
        assert!((normal_quantile(0.005) + 2.575_829_303_548_901).abs() < 1e-13);
        assert!((normal_quantile(1e-10) + 6.361_340_902_404_056).abs() < 1e-10);
    }

    /// R's `binom::binom.confint(method = "wilson")` and statsmodels'
    /// `proportion_confint(method = "wilson")`, to 1e-6.
    #[test]
    fn matches_r_and_statsmodels() {
        let f = fixture("stats/proportion_ci_and_kappa_reference.json");
        let r = &f["binom_confint_R"];
        let methods: Vec<&str> = r["methods_order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        let w = methods.iter().position(|m| *m == "wilson").unwrap();
        let mut checked = 0;
        for case in r["cases"].as_array().unwrap() {
            let (x, n) = (case["x"].as_f64().unwrap(), case["n"].as_f64().unwrap());
            let (lo, hi) = wilson(x, n, 0.95).unwrap();
            let want_lo = case["ci_low"][w].as_f64().unwrap();
            let want_hi = case["ci_upp"][w].as_f64().unwrap();
            assert!(
                (lo - want_lo).abs() < 1e-6,
                "x={x} n={n}: {lo} vs R {want_lo}"
            );
            assert!(
                (hi - want_hi).abs() < 1e-6,
                "x={x} n={n}: {hi} vs R {want_hi}"
            );
            checked += 1;
        }
        for case in f["statsmodels_proportion_confint"]["results"]["wilson"]
            .as_array()
            .unwrap()
        {
            let (x, n) = (case["x"].as_f64().unwrap(), case["n"].as_f64().unwrap());
            let conf = 1.0 - case["alpha"].as_f64().unwrap();
            let (lo, hi) = wilson(x, n, conf).unwrap();
            let want = case["ci"].as_array().unwrap();
            assert!((lo - want[0].as_f64().unwrap()).abs() < 1e-6, "x={x} n={n}");
            assert!((hi - want[1].as_f64().unwrap()).abs() < 1e-6, "x={x} n={n}");
            checked += 1;
        }
        assert!(checked >= 20, "only {checked} reference cases");
    }

    #[test]
    fn the_seed_calibration_figures() {
        // 3 eligible among 60 excluded: 5.0% [1.7%, 13.7%]; 57 correct: 95.0% [86.3%, 98.3%].
        let (lo, hi) = wilson(3.0, 60.0, 0.95).unwrap();
        assert_eq!(format!("{:.1} {:.1}", lo * 100.0, hi * 100.0), "1.7 13.7");
        let (lo, hi) = wilson(57.0, 60.0, 0.95).unwrap();
        assert_eq!(format!("{:.1} {:.1}", lo * 100.0, hi * 100.0), "86.3 98.3");
    }

    #[test]
    fn out_of_range_is_none() {
        assert_eq!(wilson(1.0, 0.0, 0.95), None);
        assert_eq!(wilson(4.0, 3.0, 0.95), None);
        assert_eq!(wilson(-1.0, 3.0, 0.95), None);
        assert_eq!(wilson(1.0, 3.0, 1.0), None);
        assert_eq!(wilson(0.0, 5.0, 0.95).unwrap().0, 0.0);
        assert_eq!(wilson(5.0, 5.0, 0.95).unwrap().1, 1.0);
    }
}
