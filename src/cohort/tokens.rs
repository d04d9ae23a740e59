//! Tokens of a table cell and the statistical measures a text names.
//!
//! A value cell ("56.7 ± 10.2", "285 (33.2%)", "6.1 [5.4–7.0]", "19/5",
//! "–0.15 (–0.39, 0.09)") is cut into numbers and the symbols between them;
//! its *shape* says how many numbers it holds and how they are bracketed.
//! A descriptor ("mean ± SD", "n (%)", "median (25th–75th percentiles)",
//! "Values are numbers (percentages) unless otherwise indicated") is read
//! into the measure sequences it names, clause by clause.

/// A statistical measure (the `measure` column's vocabulary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Measure {
    Mean,
    Sd,
    Se,
    Median,
    IqrLow,
    IqrHigh,
    RangeLow,
    RangeHigh,
    CiLow,
    CiHigh,
    Count,
    Percent,
    GeometricMean,
    PopulationSize,
    Other,
}

impl Measure {
    /// The name used in the `measure` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mean => "mean",
            Self::Sd => "sd",
            Self::Se => "se",
            Self::Median => "median",
            Self::IqrLow => "iqr_low",
            Self::IqrHigh => "iqr_high",
            Self::RangeLow => "range_low",
            Self::RangeHigh => "range_high",
            Self::CiLow => "ci_low",
            Self::CiHigh => "ci_high",
            Self::Count => "count",
            Self::Percent => "percent",
            Self::GeometricMean => "geometric_mean",
            Self::PopulationSize => "population_size",
            Self::Other => "other",
        }
    }

    /// Parses a `measure` column value (`other` for anything unknown).
    pub fn parse(s: &str) -> Self {
        [
            Self::Mean,
            Self::Sd,
            Self::Se,
            Self::Median,
            Self::IqrLow,
            Self::IqrHigh,
            Self::RangeLow,
            Self::RangeHigh,
            Self::CiLow,
            Self::CiHigh,
            Self::Count,
            Self::Percent,
            Self::GeometricMean,
            Self::PopulationSize,
        ]
        .into_iter()
        .find(|m| m.as_str() == s)
        .unwrap_or(Self::Other)
    }

    fn central(self) -> bool {
        matches!(self, Self::Mean | Self::Median | Self::GeometricMean)
    }

    fn dispersion(self) -> bool {
        matches!(self, Self::Sd | Self::Se)
    }

    fn interval_low(self) -> bool {
        matches!(self, Self::IqrLow | Self::RangeLow | Self::CiLow)
    }
}

/// One token of a value cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A number, and whether a `%` follows it.
    Num(f64, bool),
    /// `±`.
    PlusMinus,
    /// An opening bracket.
    Open,
    /// A closing bracket.
    Close,
    /// A dash or "to" between two numbers.
    RangeDash,
    /// `/`.
    Slash,
    /// `,` or `;` between numbers.
    Sep,
    /// Anything else (footnote letters, "NA", "NS", "*").
    Other,
}

fn is_dash(c: char) -> bool {
    matches!(c, '-' | '\u{2013}' | '\u{2212}' | '\u{2010}' | '\u{2011}')
}

/// Cuts a cell into tokens. A dash is a sign when it starts a word and a
/// digit follows; between numbers it is a range dash. "1,349" is one
/// thousand three hundred and forty-nine; "0.98, 1.00" is two numbers;
/// "56·7" (a raised decimal point) is 56.7.
pub fn tokenize(text: &str) -> Vec<Tok> {
    let cs: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        // A dash right after a number ("72.3 –113.2") is a range dash even
        // with a space before it; after a bracket or a separator it is a sign.
        let after_number = matches!(out.last(), Some(Tok::Num(..)));
        let prev_boundary = i == 0
            || (cs[i - 1].is_whitespace() && !after_number)
            || matches!(cs[i - 1], '(' | '[' | ',' | ';' | '{');
        let next_digit = cs.get(i + 1).is_some_and(|d| d.is_ascii_digit());
        if c.is_ascii_digit() || (is_dash(c) && prev_boundary && next_digit) {
            let neg = is_dash(c);
            let start = if neg { i + 1 } else { i };
            let mut j = start;
            let mut s = String::new();
            while j < cs.len() {
                let d = cs[j];
                if d.is_ascii_digit() {
                    s.push(d);
                } else if (d == '.' || d == '\u{b7}')
                    && cs.get(j + 1).is_some_and(|x| x.is_ascii_digit())
                    && !s.contains('.')
                {
                    s.push('.');
                } else if d == ','
                    && !s.contains('.')
                    && !out.iter().any(|t| matches!(t, Tok::Num(..)))
                    && cs.get(j + 1).is_some_and(|x| x.is_ascii_digit())
                    && {
                        let run = cs[j + 1..]
                            .iter()
                            .take_while(|x| x.is_ascii_digit())
                            .count();
                        run != 3
                    }
                {
                    // A decimal comma ("4,78 (0.65)"): digits follow that are
                    // not a group of three.
                    s.push('.');
                } else if d == ','
                    && !s.contains('.')
                    && s.len() <= 3
                    && j + 3 < cs.len() + 1
                    && cs
                        .get(j + 1..j + 4)
                        .is_some_and(|w| w.iter().all(|x| x.is_ascii_digit()))
                    && !cs
                        .get(j + 4)
                        .is_some_and(|x| x.is_ascii_digit() || *x == '.')
                {
                    // A thousands separator: exactly three digits follow.
                    j += 1;
                    continue;
                } else {
                    break;
                }
                j += 1;
            }
            let mut v: f64 = s.parse().unwrap_or(0.0);
            if neg {
                v = -v;
            }
            let mut k = j;
            while k < cs.len() && cs[k] == ' ' {
                k += 1;
            }
            let pct = cs.get(k) == Some(&'%');
            out.push(Tok::Num(v, pct));
            i = if pct { k + 1 } else { j };
            continue;
        }
        match c {
            '\u{b1}' => out.push(Tok::PlusMinus),
            '(' | '[' | '{' => out.push(Tok::Open),
            ')' | ']' | '}' => out.push(Tok::Close),
            '/' | ':' => out.push(Tok::Slash),
            ',' | ';' => out.push(Tok::Sep),
            c if is_dash(c) || c == '\u{2014}' => out.push(Tok::RangeDash),
            c if c.is_whitespace() => {}
            c if c.is_alphabetic() => {
                let mut j = i;
                while j < cs.len() && cs[j].is_alphabetic() {
                    j += 1;
                }
                let w: String = cs[i..j].iter().collect::<String>().to_lowercase();
                out.push(if w == "to" {
                    Tok::RangeDash
                } else {
                    Tok::Other
                });
                i = j;
                continue;
            }
            _ => out.push(Tok::Other),
        }
        i += 1;
    }
    out
}

/// How a cell's numbers are laid out.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// One number.
    Single,
    /// `a ± b`.
    PlusMinus,
    /// `a (b)`; whether `b` carries `%`.
    Paren2(bool),
    /// `a (b–c)`, `a [b, c]`, `a (b; c)`, `a b–c`.
    Interval,
    /// `a ± b (c–d)`.
    PlusMinusInterval,
    /// `a/b/...`: that many numbers.
    Slash(usize),
    /// `a/b (c)`: a count of a total, and its percentage.
    CountOfTotal,
    /// `a/b (c/d)`: two counts and their percentages.
    SlashPercents,
    /// `a–b` alone: an interval.
    Range,
    /// `a%` alone.
    Percent,
    /// Anything else, with its number of numbers.
    Unknown(usize),
}

/// A cell's numbers and shape; `None` when it holds no number.
pub fn shape(toks: &[Tok]) -> Option<(Vec<f64>, Shape)> {
    let nums: Vec<(f64, bool)> = toks
        .iter()
        .filter_map(|t| match t {
            Tok::Num(v, p) => Some((*v, *p)),
            _ => None,
        })
        .collect();
    if nums.is_empty() {
        return None;
    }
    // The structural tokens only (footnote letters and asterisks dropped).
    let sig: String = toks
        .iter()
        .filter_map(|t| match t {
            Tok::Num(..) => Some('n'),
            Tok::PlusMinus => Some('±'),
            Tok::Open => Some('('),
            Tok::Close => Some(')'),
            Tok::RangeDash => Some('-'),
            Tok::Slash => Some('/'),
            Tok::Sep => Some(','),
            Tok::Other => None,
        })
        .collect();
    let sig = sig.trim_end_matches([',', '-']).to_string();
    let values: Vec<f64> = nums.iter().map(|n| n.0).collect();
    let s = match sig.as_str() {
        "n" if nums[0].1 => Shape::Percent,
        "n" => Shape::Single,
        "n±n" | "n(±n)" => Shape::PlusMinus,
        "n(n)" | "nn)" | "n(n" => Shape::Paren2(nums[1].1),
        "n(n-n)" | "n(n,n)" | "nn-n" | "n(n-n" | "n(n,n" | "n,n-n" => Shape::Interval,
        "n±n(n-n)" | "n±n(n,n)" | "n±nn-n" => Shape::PlusMinusInterval,
        "n/n(n)" => Shape::CountOfTotal,
        "n/n(n/n)" => Shape::SlashPercents,
        "n-n" | "(n-n)" | "(n,n)" => Shape::Range,
        _ if sig.chars().all(|c| c == 'n' || c == '/') && sig.contains('/') => {
            Shape::Slash(nums.len())
        }
        _ => Shape::Unknown(nums.len()),
    };
    Some((values, s))
}

/// Whether a measure sequence fits a shape.
pub fn fits(ms: &[Measure], s: &Shape) -> bool {
    match (s, ms) {
        (Shape::Single, [m]) => *m != Measure::Other,
        (Shape::Percent, [Measure::Percent]) => true,
        (Shape::PlusMinus, [a, b]) => a.central() && b.dispersion(),
        (Shape::Paren2(true), [Measure::Count, Measure::Percent]) => true,
        (Shape::Paren2(false), [a, b]) => {
            (*a == Measure::Count && *b == Measure::Percent) || (a.central() && b.dispersion())
        }
        (Shape::Interval, [a, b, _]) => a.central() && b.interval_low(),
        (Shape::PlusMinusInterval, [a, b, c, _]) => {
            a.central() && b.dispersion() && c.interval_low()
        }
        (Shape::CountOfTotal, [Measure::Count, Measure::PopulationSize, Measure::Percent]) => true,
        (
            Shape::SlashPercents,
            [Measure::Count, Measure::Count, Measure::Percent, Measure::Percent],
        ) => true,
        (Shape::Range, [a, _]) => a.interval_low(),
        (Shape::Slash(k), ms) => {
            ms.len() == *k
                && ms
                    .iter()
                    .all(|m| matches!(m, Measure::Count | Measure::Percent))
        }
        _ => false,
    }
}

/// Expands a descriptor's measure sequence to fit a shape, when it can:
/// a single measure over `a/b` applies to each number.
pub fn fit(ms: &[Measure], s: &Shape) -> Option<Vec<Measure>> {
    if let Some(f) = fit_whole(ms, s) {
        return Some(f);
    }
    // "mean ± standard deviation and median (minimum – maximum)" names two
    // sequences in one clause: a run of it that fits the cell is the one.
    for len in (2..ms.len()).rev() {
        for w in ms.windows(len) {
            if fits(w, s) {
                return Some(w.to_vec());
            }
        }
    }
    None
}

fn fit_whole(ms: &[Measure], s: &Shape) -> Option<Vec<Measure>> {
    if fits(ms, s) {
        return Some(ms.to_vec());
    }
    if let (Shape::Slash(k), [m @ (Measure::Count | Measure::Percent)]) = (s, ms) {
        return Some(vec![*m; *k]);
    }
    // "mean percent", "mean score (range 0–105)" over one number: the
    // central measure it names first.
    if let (Shape::Single, [c, ..]) = (s, ms) {
        if c.central() {
            return Some(vec![*c]);
        }
    }
    if let (Shape::Percent, [Measure::Count, Measure::Percent]) = (s, ms) {
        return Some(vec![Measure::Percent]);
    }
    if let (Shape::CountOfTotal, [Measure::Count, Measure::Percent]) = (s, ms) {
        return Some(vec![
            Measure::Count,
            Measure::PopulationSize,
            Measure::Percent,
        ]);
    }
    if let (Shape::SlashPercents, [Measure::Count, Measure::Percent]) = (s, ms) {
        return Some(vec![
            Measure::Count,
            Measure::Count,
            Measure::Percent,
            Measure::Percent,
        ]);
    }
    // "median (range)" over a bare "a–b" names its interval.
    if let (Shape::Range, [c, lo, hi]) = (s, ms) {
        if c.central() && lo.interval_low() {
            return Some(vec![*lo, *hi]);
        }
    }
    // "mean ± SD" over "a ± b (c–d)" still reads the range after it.
    if let (Shape::PlusMinusInterval, [a, b]) = (s, ms) {
        if a.central() && b.dispersion() {
            return Some(vec![*a, *b, Measure::RangeLow, Measure::RangeHigh]);
        }
    }
    None
}

/// The measure sequences a text names, one per clause ("mean ± SD; in
/// medication variables: median (25th–75th percentiles)" names two).
pub fn descriptors(text: &str) -> Vec<Vec<Measure>> {
    let mut lower = text
        .to_lowercase()
        .replace(['\u{2013}', '\u{2014}', '\u{2212}'], "-");
    // "minimum – maximum", "25th - 75th": a spaced dash reads as a dash.
    while lower.contains(" -") || lower.contains("- ") {
        lower = lower.replace(" -", "-").replace("- ", "-");
    }
    let mut out: Vec<Vec<Measure>> = Vec::new();
    for clause in split_clauses(&lower) {
        let ms = clause_measures(&clause);
        if !ms.is_empty() && !out.contains(&ms) {
            out.push(ms);
        }
    }
    out
}

/// Whether a period after `before` ends a sentence: it follows a closing
/// bracket, or a word that is not an abbreviation ("no. (%)", "s.d.",
/// "vs.", "e.g.") whose period belongs to it.
fn ends_sentence(before: &str) -> bool {
    if before.ends_with(')') {
        return true;
    }
    if !before.ends_with(|c: char| c.is_alphabetic()) {
        return false;
    }
    let word = before
        .rsplit(|c: char| !(c.is_alphabetic() || c == '.'))
        .next()
        .unwrap_or("");
    let last = word.rsplit('.').next().unwrap_or("");
    // One letter ("s" of "s.d.", an initial) or a known abbreviation.
    !(last.chars().count() == 1
        || matches!(
            word,
            "no" | "nos" | "vs" | "e.g" | "i.e" | "approx" | "resp" | "incl" | "max" | "min"
        ))
}

fn split_clauses(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let words: Vec<&str> = s.split_inclusive(|c: char| c.is_whitespace()).collect();
    for w in words {
        let t = w.trim();
        if matches!(t, "or" | "and/or" | "unless" | "except" | "otherwise") {
            out.push(std::mem::take(&mut cur));
            continue;
        }
        for ch in w.chars() {
            if matches!(ch, ';' | ':') || (ch == '.' && ends_sentence(&cur)) {
                out.push(std::mem::take(&mut cur));
            } else {
                cur.push(ch);
            }
        }
    }
    out.push(cur);
    out.into_iter().filter(|c| !c.trim().is_empty()).collect()
}

/// Measure words in a clause, in order, expanded to the numbers they name.
fn clause_measures(c: &str) -> Vec<Measure> {
    use Measure::*;
    let cs: Vec<char> = c.chars().collect();
    let n = cs.len();
    let word_at = |i: usize, w: &str| -> bool {
        let wc: Vec<char> = w.chars().collect();
        i + wc.len() <= n
            && cs[i..i + wc.len()] == wc[..]
            && (i == 0 || !cs[i - 1].is_alphanumeric())
            && (i + wc.len() == n
                || !cs[i + wc.len()].is_alphanumeric()
                || !wc.last().unwrap().is_alphanumeric())
    };
    // (pattern, measures), longest first where they overlap.
    const TABLE: &[(&str, &[Measure])] = &[
        ("geometric mean", &[GeometricMean]),
        ("interquartile range", &[IqrLow, IqrHigh]),
        ("inter-quartile range", &[IqrLow, IqrHigh]),
        ("25th-75th percentiles", &[IqrLow, IqrHigh]),
        ("25th-75th percentile", &[IqrLow, IqrHigh]),
        ("25th and 75th percentiles", &[IqrLow, IqrHigh]),
        ("25th to 75th percentile", &[IqrLow, IqrHigh]),
        ("25-75th percentile", &[IqrLow, IqrHigh]),
        ("quartiles", &[IqrLow, IqrHigh]),
        ("q1-q3", &[IqrLow, IqrHigh]),
        ("q1, q3", &[IqrLow, IqrHigh]),
        ("iqr", &[IqrLow, IqrHigh]),
        ("standard deviation", &[Sd]),
        ("standard error", &[Se]),
        ("confidence interval", &[CiLow, CiHigh]),
        ("95% ci", &[CiLow, CiHigh]),
        ("ci", &[CiLow, CiHigh]),
        ("min-max", &[RangeLow, RangeHigh]),
        ("minimum-maximum", &[RangeLow, RangeHigh]),
        ("range", &[RangeLow, RangeHigh]),
        ("s.d.", &[Sd]),
        ("sd", &[Sd]),
        ("std", &[Sd]),
        ("sem", &[Se]),
        ("s.e.", &[Se]),
        ("se", &[Se]),
        ("means", &[Mean]),
        ("mean", &[Mean]),
        ("average", &[Mean]),
        ("medians", &[Median]),
        ("median", &[Median]),
        ("percentages", &[Percent]),
        ("percentage", &[Percent]),
        ("percent", &[Percent]),
        ("proportion", &[Percent]),
        ("%", &[Percent]),
        ("numbers", &[Count]),
        ("number", &[Count]),
        ("no.", &[Count]),
        ("frequency", &[Count]),
        ("n", &[Count]),
    ];
    let mut out: Vec<Measure> = Vec::new();
    let mut i = 0;
    while i < n {
        let mut hit = None;
        for (w, ms) in TABLE {
            if word_at(i, w) {
                // "n = 62" and "N=94" state a size, not a measure; a letter
                // glued to "%" or ")" is a footnote mark ("%n").
                if *w == "n" {
                    let rest: String = cs[i + 1..].iter().collect();
                    if rest.trim_start().starts_with('=')
                        || (i > 0 && matches!(cs[i - 1], '%' | ')' | ']'))
                    {
                        continue;
                    }
                }
                hit = Some((w.chars().count(), *ms));
                break;
            }
        }
        match hit {
            Some((len, ms)) => {
                for m in ms {
                    if !out.contains(m) {
                        out.push(*m);
                    }
                }
                i += len;
            }
            None => i += 1,
        }
    }
    // An interval named after a central measure belongs to it ("median
    // (IQR)"); one named alone is still an interval.
    // "Mean white cell count (SD)": a count word beside a central measure
    // names the characteristic, not a measure.
    if out.iter().any(|m| m.central()) {
        out.retain(|m| *m != Count);
    }
    out
}

/// Whether a row or column label names only measures (and punctuation):
/// "Mean (SD)", "Median", "Interquartile range", "n (%)", "N", "%".
pub fn measure_only(label: &str) -> bool {
    let lower = label.to_lowercase();
    if descriptors(&lower).is_empty() {
        return false;
    }
    let mut rest = lower.clone();
    for w in [
        "geometric mean",
        "interquartile range",
        "standard deviation",
        "standard error",
        "confidence interval",
        "percentages",
        "percentage",
        "numbers",
        "number",
        "means",
        "mean",
        "medians",
        "median",
        "range",
        "iqr",
        "s.d.",
        "sd",
        "sem",
        "se",
        "95% ci",
        "ci",
        "no.",
        "n",
        "%",
        "values",
        "value",
        "of",
        "and",
    ] {
        rest = replace_word(&rest, w);
    }
    rest.chars()
        .all(|c| !c.is_alphanumeric() || c.is_ascii_digit())
        && !rest
            .chars()
            .any(|c| c.is_ascii_digit() && c != '9' && c != '5')
}

fn replace_word(s: &str, w: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(k) = rest.find(w) {
        let before_ok = rest[..k]
            .chars()
            .last()
            .is_none_or(|c| !c.is_alphanumeric());
        let after = &rest[k + w.len()..];
        let after_ok = after.chars().next().is_none_or(|c| !c.is_alphanumeric())
            || !w.ends_with(|c: char| c.is_alphanumeric());
        out.push_str(&rest[..k]);
        if !(before_ok && after_ok) {
            out.push_str(w);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::Measure::*;
    use super::*;

    fn nums(s: &str) -> Vec<f64> {
        shape(&tokenize(s)).map(|x| x.0).unwrap_or_default()
    }

    #[test]
    fn numbers_signs_ranges_and_separators() {
        assert_eq!(nums("56.7 ± 10.2"), [56.7, 10.2]);
        assert_eq!(nums("5 (2–10)"), [5.0, 2.0, 10.0]);
        assert_eq!(nums("–0.15 (–0.39, 0.09)"), [-0.15, -0.39, 0.09]);
        assert_eq!(nums("1,349 (35.4%)"), [1349.0, 35.4]);
        assert_eq!(nums("0.99 (0.98, 1.00)"), [0.99, 0.98, 1.0]);
        assert_eq!(nums("56·7"), [56.7]);
        assert_eq!(nums("8c"), [8.0]);
        assert_eq!(nums("16.74 ± 2.75iii"), [16.74, 2.75]);
        assert_eq!(nums("(20.71 - 52.14)"), [20.71, 52.14]);
        assert_eq!(nums("0 (0-0)"), [0.0, 0.0, 0.0]);
        assert_eq!(nums("−1.2 to 3.4"), [-1.2, 3.4]);
        assert_eq!(nums("48.1 ± 10.1 (36.6 –68.4)"), [48.1, 10.1, 36.6, 68.4]);
        assert_eq!(nums("4,78 (0.65)"), [4.78, 0.65]);
        assert_eq!(nums("0.80 (0.60, 1.08)"), [0.8, 0.6, 1.08]);
    }

    #[test]
    fn shapes() {
        let sh = |s: &str| shape(&tokenize(s)).unwrap().1;
        assert_eq!(sh("56.7 ± 10.2"), Shape::PlusMinus);
        assert_eq!(sh("285 (33.2)"), Shape::Paren2(false));
        assert_eq!(sh("216 (66.3%)"), Shape::Paren2(true));
        assert_eq!(sh("6.1 [5.4–7.0]"), Shape::Interval);
        assert_eq!(sh("2 (2; 4)"), Shape::Interval);
        assert_eq!(sh("19/5"), Shape::Slash(2));
        assert_eq!(sh("17.96 0.29)"), Shape::Paren2(false));
        assert_eq!(sh("12.9"), Shape::Single);
        assert_eq!(sh("1.98 ± 0.27*"), Shape::PlusMinus);
        assert_eq!(sh("96.00 ± 10.8a (72.3 –113.2)"), Shape::PlusMinusInterval);
        assert_eq!(sh("42.1 ± 17.9 15.1 – 81.2"), Shape::PlusMinusInterval);
        assert_eq!(sh("5/93 (5.4)"), Shape::CountOfTotal);
        assert_eq!(sh("9/7 (56.3/43.7)"), Shape::SlashPercents);
        assert_eq!(sh("14:2"), Shape::Slash(2));
        assert_eq!(sh("39-84"), Shape::Range);
    }

    #[test]
    fn descriptors_by_clause() {
        assert_eq!(
            descriptors("mean ± SD; in medication variables: median (25th–75th percentiles)"),
            vec![vec![Mean, Sd], vec![Median, IqrLow, IqrHigh]]
        );
        assert_eq!(descriptors("Gender, n (%)"), vec![vec![Count, Percent]]);
        assert_eq!(descriptors("SD48W, N = 94"), Vec::<Vec<Measure>>::new());
        assert_eq!(
            descriptors("Data are given as mean values (standard deviation) or number of subjects and percentages."),
            vec![vec![Mean, Sd], vec![Count, Percent]]
        );
        assert_eq!(
            descriptors("*Values are numbers (percentages) unless otherwise indicated."),
            vec![vec![Count, Percent]]
        );
        assert_eq!(
            descriptors("Mean change (95% CI)b"),
            vec![vec![Mean, CiLow, CiHigh]]
        );
        assert_eq!(
            descriptors("Age (yr) of mentors (means±SD)"),
            vec![vec![Mean, Sd]]
        );
        // An abbreviation's period is not the end of a sentence.
        assert_eq!(
            descriptors("aData are expressed as No. (%) or mean ± SD"),
            vec![vec![Count, Percent], vec![Mean, Sd]]
        );
        assert_eq!(descriptors("Values are mean ± s.d."), vec![vec![Mean, Sd]]);
        assert_eq!(
            descriptors("Values are mean (SD). Other values are n (%)."),
            vec![vec![Mean, Sd], vec![Count, Percent]]
        );
    }

    #[test]
    fn measure_only_labels() {
        for l in [
            "Mean (SD)",
            "Median",
            "Interquartile range",
            "n (%)",
            "N",
            "%",
            "Mean ± SD",
        ] {
            assert!(measure_only(l), "{l}");
        }
        for l in [
            "Age (years), mean (SD)",
            "Not complying, n (%)",
            "Male",
            "(kg/m2)",
            "Women",
        ] {
            assert!(!measure_only(l), "{l}");
        }
    }
}
