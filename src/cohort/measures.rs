//! Measures (seed 003's tokens → measures stage): which statistical
//! measures a value cell's numbers are, from the texts around it (row
//! label, column headers, parents, the footnote a mark points to, caption,
//! notes) or the cell's own shape; footnote marks; sizes and categories in
//! labels; units.

use super::arms::{arm_name, stated_n};
use super::tokens::{descriptors, fit, measure_only, tokenize, Measure, Shape, Tok};
use super::Item;

/// What a value cell is read with.
pub(super) struct CellContext<'a> {
    /// Measure sequences named by each source, nearest first.
    pub(super) sources: &'a [Vec<Vec<Measure>>],
    /// Sources from this index on speak for the whole table (caption, notes).
    pub(super) weak_from: usize,
    /// The arm's size.
    pub(super) arm_n: Option<i64>,
    /// Whether the row is a category.
    pub(super) categorical: bool,
    /// Category names per number ("male/female" over "19/5").
    pub(super) split: Option<Vec<String>>,
    /// The row's label, whose name a count or percentage is of.
    pub(super) category: String,
    /// The source that is the note the label's footnote mark points to: when
    /// it is the one read, the mark is not part of the category's name.
    pub(super) marked: Option<usize>,
}

/// The items of one value cell: the first named measure sequence that fits
/// its shape, else the shape's default, else one `other` item per number. A
/// table-wide statement ("mean (SD)" in the caption) gives way to a cell
/// whose second number is exactly the first's share of the arm: n (%).
pub(super) fn push_cell_items(
    items: &mut Vec<Item>,
    item: Item,
    vals: &[f64],
    sh: &Shape,
    cx: &CellContext,
) {
    // The first source naming measures that fit; when it names several
    // ("mean ± SD or number (%)"), the one for the row's kind: counts for
    // a categorical row, a central measure for a continuous one.
    let found = cx.sources.iter().enumerate().find_map(|(k, s)| {
        let fitting: Vec<Vec<Measure>> = s.iter().filter_map(|ms| fit(ms, sh)).collect();
        let counts = |f: &&Vec<Measure>| f.first() == Some(&Measure::Count);
        fitting
            .iter()
            .find(|f| counts(f) == cx.categorical)
            .or(fitting.first())
            .map(|f| (k, f.clone()))
    });
    let share = |a: f64, b: f64| {
        cx.arm_n.is_some_and(|n| {
            n > 0 && a.fract() == 0.0 && a > 0.0 && (a / n as f64 * 100.0 - b).abs() <= 0.15
        })
    };
    let from_mark = found.as_ref().is_some_and(|(k, _)| Some(*k) == cx.marked);
    let chosen = match (found, sh) {
        (Some((k, _)), Shape::Paren2(false)) if k >= cx.weak_from && share(vals[0], vals[1]) => {
            Some((
                vec![Measure::Count, Measure::Percent],
                Some(
                    "read as n (%): the second number is the first's share of the arm".to_string(),
                ),
            ))
        }
        (Some((_, ms)), _) => Some((ms, None)),
        (None, _) => default_measures(vals, sh, cx.arm_n, cx.categorical),
    };
    // "19/27" under "No. (%)": the second number is no percentage (no
    // decimals, no %, not the first's share of the arm, not below the
    // first) but the total the first is counted of.
    let chosen = chosen.map(|(ms, why)| match (sh, ms.as_slice()) {
        (Shape::Slash(2), [Measure::Count, Measure::Percent])
            if cx.split.is_none()
                && count_of_total(&item.cell_text, vals)
                && !share(vals[0], vals[1]) =>
        {
            (
                vec![Measure::Count, Measure::PopulationSize],
                Some(
                    "read as n/N: the second number is the total the first is counted of"
                        .to_string(),
                ),
            )
        }
        _ => (ms, why),
    });
    let Some((ms, why)) = chosen else {
        for v in vals {
            items.push(Item {
                measure: Measure::Other,
                value: Some(*v),
                note: Some("no measure fits this cell".into()),
                ..item.clone()
            });
        }
        return;
    };
    let split = &cx.split;
    for (k, (v, m)) in vals.iter().zip(ms.iter()).enumerate() {
        let category = if let Some(names) = &split {
            Some(names[k].clone())
        } else if matches!(m, Measure::Count | Measure::Percent) && !item.characteristic.is_empty()
        {
            let label = if cx.category.is_empty() {
                item.characteristic.last().unwrap().clone()
            } else {
                cx.category.clone()
            };
            Some(if from_mark {
                let mut l = label.trim_end().to_string();
                l.pop();
                strip_annotation(&l)
            } else {
                strip_annotation(&label)
            })
        } else {
            None
        };
        items.push(Item {
            measure: *m,
            value: Some(*v),
            category,
            note: why.clone(),
            ..item.clone()
        });
    }
}

/// Whether "a/b" reads as a count of a total: two whole numbers, the
/// second written without decimals or a percent sign and not below the first.
fn count_of_total(cell: &str, vals: &[f64]) -> bool {
    let [a, b] = vals else {
        return false;
    };
    let second = cell.split_once('/').map_or("", |(_, r)| r);
    a.fract() == 0.0 && b.fract() == 0.0 && a <= b && !second.contains(['.', '%'])
}

/// Half a unit of the last decimal place of a cell's percentage (the
/// rounding it may carry): "33.2" → 0.05, "38%" → 0.5.
pub(super) fn rounding(cell: &str) -> f64 {
    let toks = tokenize(cell);
    let mut pct_text = None;
    // The percentage is the second number of "a (b)" or the one with "%".
    let nums: Vec<&str> = cell
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|s| !s.is_empty() && s.chars().any(|c| c.is_ascii_digit()))
        .collect();
    if toks.iter().filter(|t| matches!(t, Tok::Num(..))).count() >= 2 {
        pct_text = nums.get(1).copied();
    } else if let Some(n) = nums.first() {
        pct_text = Some(n);
    }
    let decimals = pct_text
        .and_then(|t| t.split_once('.'))
        .map(|(_, d)| d.len())
        .unwrap_or(0);
    0.5 * 10f64.powi(-(decimals as i32))
}

/// The symbols that mark a table's notes (besides letters).
const NOTE_SYMBOLS: &str = "*†‡§¶#";

/// Footnotes that start with a mark ("aData are presented as mean (SD)",
/// "b Number (%)", "* Median (IQR)"), with the measures they name.
pub(super) fn note_marks(notes: &[String]) -> Vec<(char, Vec<Vec<Measure>>)> {
    let mut out = Vec::new();
    for n in notes.iter().flat_map(|n| marked_parts(n)) {
        let mut cs = n.trim_start().chars();
        let (Some(m), Some(next)) = (cs.next(), cs.next()) else {
            continue;
        };
        let letter_mark =
            m.is_ascii_lowercase() && (next.is_uppercase() || next == ' ' || next == ':');
        let symbol_mark = NOTE_SYMBOLS.contains(m);
        if !(letter_mark || symbol_mark) {
            continue;
        }
        let d = descriptors(n);
        if !d.is_empty() && !out.iter().any(|(c, _)| *c == m) {
            out.push((m, d));
        }
    }
    out
}

/// A table's notes set as one paragraph ("a Abbreviation: IVP b Data are
/// presented as No. (%). c Urine ..."), cut where the next mark in
/// sequence starts a note: the letter after the last one (or a note
/// symbol), alone between a space and a capital. A note that starts with
/// no mark is one part.
fn marked_parts(note: &str) -> Vec<&str> {
    let t = note.trim_start();
    let Some(first) = t.chars().next() else {
        return vec![];
    };
    if !(first.is_ascii_lowercase() || NOTE_SYMBOLS.contains(first)) {
        return vec![t];
    }
    let mut next = (first as u8).wrapping_add(1) as char;
    let mut parts = Vec::new();
    let mut start = 0;
    let b = t.as_bytes();
    for (i, c) in t.char_indices().skip(1) {
        let starts = if first.is_ascii_lowercase() {
            c == next
        } else {
            NOTE_SYMBOLS.contains(c)
        };
        let after = &t[i + c.len_utf8()..];
        let capital_after = after
            .trim_start_matches(' ')
            .starts_with(|x: char| x.is_uppercase());
        if starts && b[i - 1] == b' ' && capital_after {
            parts.push(t[start..i].trim_end());
            start = i;
            if first.is_ascii_lowercase() {
                next = (next as u8).wrapping_add(1) as char;
            }
        }
    }
    parts.push(t[start..].trim_end());
    parts
}

/// The mark a row label ends with, when a footnote starts with it:
/// "Age at trial entry, yearsa" → 'a'.
pub(super) fn label_mark(label: &str, marks: &[(char, Vec<Vec<Measure>>)]) -> Option<char> {
    let t = label.trim_end();
    let last = t.chars().last()?;
    if !marks.iter().any(|(c, _)| *c == last) {
        return None;
    }
    if last.is_ascii_lowercase() {
        // A letter mark is glued to a word, or follows a bracket or a digit.
        let before = t.chars().rev().nth(1)?;
        (before.is_alphanumeric() || before == ')').then_some(last)
    } else {
        Some(last)
    }
}

/// The measures of the footnote a row label's mark points to.
pub(super) fn marked_note(
    label: &str,
    marks: &[(char, Vec<Vec<Measure>>)],
) -> Option<Vec<Vec<Measure>>> {
    let m = label_mark(label, marks)?;
    marks.iter().find(|(c, _)| *c == m).map(|(_, d)| d.clone())
}

/// A value cell with a size inside it ("41% (n = 74)"): the size, and the
/// text without it.
pub(super) fn split_stated_n(text: &str) -> (Option<i64>, String) {
    let Some(n) = stated_n(text) else {
        return (None, text.to_string());
    };
    let rest = arm_name(text);
    if rest.is_empty() {
        return (None, text.to_string());
    }
    (Some(n), rest)
}

/// "n", "N", "No. of patients", "Number of participants", "Participants, n".
pub(super) fn is_size_label(l: &str) -> bool {
    let l = l.trim().trim_end_matches([':', '*', '†']).to_lowercase();
    if matches!(
        l.as_str(),
        "n" | "no." | "no" | "number" | "total n" | "n (%)"
    ) {
        return true;
    }
    let subjects = [
        "patients",
        "participants",
        "subjects",
        "children",
        "women",
        "men",
        "individuals",
    ];
    (l.starts_with("number of ") || l.starts_with("no. of ") || l.starts_with("n of "))
        && subjects
            .iter()
            .any(|s| l.ends_with(s) || l.contains(&format!("{s},")))
        || subjects
            .iter()
            .any(|s| l == format!("{s}, n") || l == format!("{s} (n)") || l == format!("{s}, no."))
}

/// Whether a label names a category more than a quantity.
pub(super) fn looks_categorical(l: &str) -> bool {
    let d = descriptors(l);
    d.iter()
        .any(|ms| ms.contains(&Measure::Count) || ms.contains(&Measure::Percent))
}

/// A category's name: a label without its ", n (%)" or "(%)" annotation.
pub fn strip_annotation(l: &str) -> String {
    let mut s = l.trim().to_string();
    // "% women", "% in ARA functional class:".
    if let Some(rest) = s.strip_prefix('%') {
        s = rest.trim_start().to_string();
    }
    for suf in [
        ", n (%)",
        " n (%)",
        ", no. (%)",
        " — no. (%)",
        " - no. (%)",
        " no. (%)",
        "(%)",
        ", %",
        ", n",
        " %",
        "%",
    ] {
        if s.to_lowercase().ends_with(suf) {
            let k = s.len() - suf.len();
            s.truncate(k);
            s = s.trim().to_string();
            break;
        }
    }
    // A trailing bracket that only names measures: "Female sex (no. ; %)".
    let t = s.trim_end().to_string();
    if let Some(close) = t.chars().last().filter(|c| *c == ')' || *c == ']') {
        let open = if close == ')' { '(' } else { '[' };
        if let Some(k) = t.rfind(open) {
            if k > 0 && measure_only(&t[k + 1..t.len() - 1]) {
                s = t[..k].trim_end().to_string();
            }
        }
    }
    s.trim_end_matches([',', ';', ':']).trim().to_string()
}

/// "Gender, male/female" → ["male", "female"]; "Female/male" → ["Female",
/// "male"]; "Women:Men" → ["Women", "Men"].
pub(super) fn split_label(l: &str, k: usize) -> Option<Vec<String>> {
    let l = strip_annotation(l);
    for sep in ['/', ':'] {
        let tail = l
            .rsplit([',', if sep == '/' { ':' } else { ',' }])
            .next()
            .unwrap_or(&l);
        let parts: Vec<String> = tail.split(sep).map(|p| p.trim().to_string()).collect();
        if parts.len() == k && parts.iter().all(|p| !p.is_empty()) {
            return Some(parts);
        }
    }
    None
}

/// The unit the row labels name: the last bracketed part or trailing ", x"
/// that is not a measure ("Age (years)", "Weight, kg", "[kg]").
pub(super) fn unit_of(path: &[String]) -> Option<String> {
    for l in path.iter().rev() {
        let l = l.trim();
        let mut cands: Vec<String> = Vec::new();
        let mut depth = 0;
        let mut cur = String::new();
        for c in l.chars() {
            match c {
                '(' | '[' => {
                    depth += 1;
                    cur.clear();
                }
                ')' | ']' if depth > 0 => {
                    depth -= 1;
                    cands.push(cur.clone());
                }
                _ if depth > 0 => cur.push(c),
                _ => {}
            }
        }
        if let Some((_, t)) = l.rsplit_once(", ") {
            cands.push(t.to_string());
        }
        for c in cands.iter().rev() {
            let c = c.trim();
            if c.is_empty() || c.len() > 20 || measure_only(c) || stated_n(c).is_some() {
                continue;
            }
            if c.chars().all(|ch| ch.is_ascii_digit() || ch == '.') {
                continue;
            }
            let lower = c.to_lowercase();
            if UNITS
                .iter()
                .any(|u| lower == *u || lower.starts_with(&format!("{u} ")))
                || lower.contains('/')
                || lower == "%"
            {
                return Some(c.to_string());
            }
        }
    }
    None
}

pub(super) const UNITS: &[&str] = &[
    "years", "year", "yr", "yrs", "y", "months", "month", "weeks", "days", "hours", "minutes",
    "min", "kg", "g", "mg", "cm", "mm", "m", "kg/m2", "kg/m²", "mmhg", "mm hg", "bpm", "%",
    "mg/dl", "mmol/l", "mmol/mol", "g/dl", "g/l", "iu/l", "u/l", "pg/ml", "ng/ml", "μg/ml",
    "µmol/l", "ml/min", "l", "ml", "points", "score", "pieces", "grams",
];

/// What a cell's shape says when no text names its measures.
pub(super) fn default_measures(
    vals: &[f64],
    sh: &Shape,
    arm_n: Option<i64>,
    categorical: bool,
) -> Option<(Vec<Measure>, Option<String>)> {
    use Measure::*;
    let share = |a: f64, b: f64| -> bool {
        arm_n.is_some_and(|n| n > 0 && a.fract() == 0.0 && (a / n as f64 * 100.0 - b).abs() <= 1.0)
    };
    Some(match sh {
        Shape::PlusMinus => (vec![Mean, Sd], Some("± read as mean ± SD".into())),
        Shape::Paren2(true) => (vec![Count, Percent], None),
        Shape::Paren2(false) => {
            let (a, b) = (vals[0], vals[1]);
            if share(a, b) || (categorical && a.fract() == 0.0 && b <= 100.0) {
                (vec![Count, Percent], Some("read as n (%)".into()))
            } else {
                (vec![Mean, Sd], Some("read as mean (SD)".into()))
            }
        }
        Shape::Interval => (
            vec![Median, IqrLow, IqrHigh],
            Some("read as median (IQR)".into()),
        ),
        Shape::PlusMinusInterval => (
            vec![Mean, Sd, RangeLow, RangeHigh],
            Some("read as mean ± SD (range)".into()),
        ),
        Shape::Percent => (vec![Percent], None),
        Shape::Slash(k) => (vec![Count; *k], Some("read as counts".into())),
        Shape::CountOfTotal => (
            vec![Count, PopulationSize, Percent],
            Some("read as n/N (%)".into()),
        ),
        Shape::SlashPercents => (
            vec![Count, Count, Percent, Percent],
            Some("read as n/n (%/%)".into()),
        ),
        Shape::Range => (vec![RangeLow, RangeHigh], Some("read as a range".into())),
        Shape::Single if categorical && vals[0].fract() == 0.0 => {
            (vec![Count], Some("read as a count".into()))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_set_as_one_paragraph_are_cut_at_their_marks() {
        let one = "a Abbreviation: IVP, intravenous pyelography b Data are presented as No. (%). c Urine analysis was done in 27 patients of group a and b Only.";
        assert_eq!(
            marked_parts(one),
            vec![
                "a Abbreviation: IVP, intravenous pyelography",
                "b Data are presented as No. (%).",
                "c Urine analysis was done in 27 patients of group a and b Only."
            ]
        );
        assert_eq!(
            marked_parts("* Mean (SD). † Median (IQR)."),
            vec!["* Mean (SD).", "† Median (IQR)."]
        );
        assert_eq!(marked_parts("Values are n (%)."), vec!["Values are n (%)."]);
        // The measures go to the mark that names them, not to the first.
        let marks = note_marks(&[one.to_string()]);
        assert_eq!(
            marks,
            vec![('b', vec![vec![Measure::Count, Measure::Percent]])]
        );
    }

    #[test]
    fn label_parts_units_sizes_and_rounding() {
        assert_eq!(rounding("33.2"), 0.05);
        assert_eq!(rounding("38%"), 0.5);
        assert_eq!(
            split_label("Gender, male/female", 2),
            Some(vec!["male".to_string(), "female".to_string()])
        );
        assert_eq!(
            unit_of(&["Age (years)".to_string()]).as_deref(),
            Some("years")
        );
        assert_eq!(unit_of(&["Weight, kg".to_string()]).as_deref(), Some("kg"));
        assert_eq!(strip_annotation("Male, n (%)"), "Male");
        assert!(is_size_label("No. of patients"));
        assert!(!is_size_label("Age"));
        assert_eq!(split_stated_n("41% (n = 74)").0, Some(74));
    }

    #[test]
    fn a_label_mark_points_to_its_footnote_measures() {
        let notes = vec!["aData are presented as mean (SD)".to_string()];
        let marks = note_marks(&notes);
        assert_eq!(marks.len(), 1);
        let m = marked_note("Age at trial entry, yearsa", &marks).expect("the note's measures");
        assert_eq!(m[0], vec![Measure::Mean, Measure::Sd]);
        assert!(marked_note("Age at trial entry, years", &marks).is_none());
    }
}
