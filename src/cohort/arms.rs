//! Study arms (seed 003's columns): the sizes headers state, arm names,
//! and the columns that are not arms (P values, statistics, differences).

use super::grid::Grid;
use super::tokens::measure_only;

/// "n = 56", "N=94", "(n = 71)": the size a header states.
pub(super) fn stated_n(t: &str) -> Option<i64> {
    let mut from = 0;
    while let Some(i) = find_n_eq(&t[from..]).map(|i| i + from) {
        let rest = t[i + 1..].trim_start().trim_start_matches('=').trim_start();
        let digits: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        if let Ok(v) = digits.parse() {
            return Some(v);
        }
        from = i + 1;
    }
    None
}

/// A header text without the size it states and the measures it names:
/// "EP group (n=19) Mean ± SD" → "EP group"; "Nonsmokers n = 56" → "Nonsmokers".
pub(super) fn arm_name(t: &str) -> String {
    let mut s = t.to_string();
    // Sizes: "(n = 19)", "n = 56", ", N = 94".
    while let Some(k) = find_n_eq(&s) {
        let mut end = k + 1;
        let b = s.as_bytes();
        while end < b.len() && (b[end] == b' ' || b[end] == b'=') {
            end += 1;
        }
        while end < b.len() && (b[end].is_ascii_digit() || b[end] == b',') {
            end += 1;
        }
        let mut start = k;
        let open = s[..start].trim_end().ends_with('(');
        if open {
            start = s[..start].trim_end().len() - 1;
            if s[end..].trim_start().starts_with(')') {
                end = s.len() - s[end..].trim_start()[1..].len();
            }
        }
        s.replace_range(start..end, " ");
    }
    // Trailing measure names ("Mean ± SD", "n (%)").
    let words: Vec<&str> = s.split_whitespace().collect();
    let mut keep = words.len();
    while keep > 0 && measure_only(&words[keep - 1..].join(" ")) {
        keep -= 1;
    }
    let mut best = keep;
    for k in (0..keep).rev() {
        if measure_only(&words[k..].join(" ")) {
            best = k;
        }
    }
    let out = words[..best].join(" ");
    out.trim_matches(|c: char| c == ',' || c == ';' || c == ':' || c.is_whitespace())
        .to_string()
}

pub(super) fn find_n_eq(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    (0..b.len()).find(|&i| {
        (b[i] == b'n' || b[i] == b'N')
            && (i == 0 || !(b[i - 1] as char).is_ascii_alphanumeric())
            && s[i + 1..].trim_start().starts_with('=')
    })
}

/// Whether a header names something that is not a study arm.
pub(super) fn not_an_arm(header: &str) -> bool {
    let l = header.to_lowercase();
    let words: Vec<&str> = l
        .split(|c: char| !c.is_alphanumeric() && c != '²' && c != '-')
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return false;
    }
    let first = words[0];
    if (first == "p" || first == "pa" || first == "p-value" || first == "valuea")
        && words.len() <= 3
    {
        return true;
    }
    let any = |ws: &[&str]| words.iter().any(|w| ws.contains(w));
    any(&[
        "value",
        "valuea",
        "valueb",
        "significance",
        "statistic",
        "statistics",
        "χ2",
        "x2",
        "chi",
        "or",
        "hr",
        "rr",
        "irr",
        "difference",
        "differences",
        "vs",
        "versus",
        "national",
        "reference",
        "norm",
        "norms",
        "possible",
        "t-test",
        "test",
        "smd",
        "effect",
        "ratio",
    ]) || l.contains("p value")
        || l.contains("p-value")
        || l.trim() == "t"
        || l.trim() == "f"
        || l.starts_with("x2")
        || l.starts_with("χ")
}

/// Whether a header or label reads as a study arm's: it states a size
/// ("n = 40") or names a group, arm or comparator ("Control group",
/// "Placebo", "Usual care", "Intervention").
pub(super) fn arm_like(t: &str) -> bool {
    let l = t.to_lowercase();
    find_n_eq(t).is_some()
        || l.split(|c: char| !c.is_alphanumeric()).any(|w| {
            matches!(
                w,
                "group"
                    | "groups"
                    | "arm"
                    | "control"
                    | "controls"
                    | "placebo"
                    | "intervention"
                    | "sham"
                    | "usual"
                    | "experimental"
                    | "comparison"
            )
        })
}

/// Whether a body cell reads as a P value or a test result.
pub(super) fn p_like(t: &str) -> bool {
    let l = t.trim().to_lowercase();
    if l == "ns" || l == "n.s." || l.starts_with('p') {
        return true;
    }
    let core = l.trim_end_matches(|c: char| !c.is_ascii_digit());
    let core = core.trim_start_matches(['<', '>', '=', '≤', '≥', ' ']);
    let core = core.replace(',', ".");
    core.parse::<f64>().is_ok_and(|v| (0.0..=1.0).contains(&v))
        && !l.contains('(')
        && !l.contains('±')
}

/// A study arm: its columns and name.
#[derive(Debug, Clone)]
pub(super) struct Arm {
    pub(super) cols: Vec<usize>,
    pub(super) name: String,
    pub(super) n: Option<i64>,
    pub(super) header: String,
}

/// Each column's header path (the header rows' texts from the top, repeats
/// left out); in a laid-out table a header line that goes on from the one
/// above ("(95% CI)b" under "Mean change") joins it.
pub(super) fn column_headers(g: &Grid, nhead: usize, layout: bool) -> Vec<Vec<String>> {
    (0..g.ncols)
        .map(|c| {
            let mut p: Vec<String> = Vec::new();
            for r in 0..nhead {
                if let Some((cell, _)) = g.at(r, c) {
                    let tx = cell.text.trim().to_string();
                    if tx.is_empty() || p.last() == Some(&tx) {
                        continue;
                    }
                    // A laid-out header wraps: "(95% CI)b" under "Mean change".
                    let goes_on =
                        tx.starts_with(|ch: char| ch.is_lowercase() || ch == '(' || ch == '[');
                    match p.last_mut() {
                        Some(last)
                            if layout && (goes_on && !measure_only(&tx) || last.ends_with(',')) =>
                        {
                            last.push(' ');
                            last.push_str(&tx);
                        }
                        _ => p.push(tx),
                    }
                }
            }
            p
        })
        .collect()
}

/// The study arms: data columns grouped by their header path without its
/// measure-only parts; columns headed as P values, statistics or
/// differences, or whose cells are mostly P values, are not arms.
pub(super) fn find_arms(
    g: &Grid,
    col_headers: &[Vec<String>],
    body: &[usize],
    data_start: usize,
) -> Vec<Arm> {
    // Arms: data columns grouped by their header path without measure-only
    // parts.
    let mut arms: Vec<Arm> = Vec::new();
    for (c, hp) in col_headers.iter().enumerate().skip(data_start) {
        if hp.iter().any(|h| not_an_arm(h)) {
            continue;
        }
        let (mut p, mut n) = (0, 0);
        for &r in body {
            if let Some(tx) = g.origin_text(r, c) {
                n += 1;
                if p_like(tx) {
                    p += 1;
                }
            }
        }
        if n == 0 || p * 10 >= n * 6 {
            continue;
        }
        let named: Vec<String> = hp
            .iter()
            .filter(|h| !measure_only(h))
            .map(|h| arm_name(h))
            .filter(|h| !h.is_empty())
            .collect();
        // A column whose header names no arm (empty, or only measures:
        // "n (%)", "Median") has an empty name here, named below.
        let name = named.join(" / ");
        let n_stated = hp.iter().rev().find_map(|h| stated_n(h));
        let header = hp.join(" / ");
        match arms.last_mut() {
            Some(a)
                if a.cols.last() == Some(&(c - 1))
                    && a.name == name
                    && (!name.is_empty() || unnamed_goes_on(a, c, col_headers)) =>
            {
                a.cols.push(c);
                a.n = a.n.or(n_stated);
            }
            _ => arms.push(Arm {
                cols: vec![c],
                name,
                n: n_stated,
                header,
            }),
        }
    }
    // Unnamed arms are named by their order among the table's arms, not
    // by the column they start in (a PDF has no spacer columns, its XML may
    // have several); a table of one unnamed arm describes its whole sample.
    let unnamed = arms.iter().filter(|a| a.name.is_empty()).count();
    let only = arms.len() == 1;
    let mut k = 0;
    for a in arms.iter_mut().filter(|a| a.name.is_empty()) {
        k += 1;
        a.name = if only {
            "all participants".to_string()
        } else if unnamed == 1 {
            "unnamed arm".to_string()
        } else {
            format!("unnamed arm {k}")
        };
    }
    arms
}

/// Whether an unnamed column goes on the unnamed arm before it: its header
/// names a measure (a column of medians beside one of counts describes the
/// same people) that none of the arm's columns names already (a second
/// "Mean (SD)" is another arm's).
fn unnamed_goes_on(a: &Arm, c: usize, col_headers: &[Vec<String>]) -> bool {
    let measures = |hp: &[String]| !hp.is_empty() && hp.iter().all(|h| measure_only(h));
    measures(&col_headers[c])
        && a.cols
            .iter()
            .all(|&k| measures(&col_headers[k]) && col_headers[k] != col_headers[c])
}

#[cfg(test)]
mod tests {
    use super::super::grid::Grid;
    use super::super::tests::cell;
    use super::*;

    #[test]
    fn sizes_and_arm_names() {
        assert_eq!(stated_n("SD48W, N = 94"), Some(94));
        assert_eq!(stated_n("Total n=1,349"), Some(1349));
        assert_eq!(arm_name("EP group (n=19) Mean ± SD"), "EP group");
        assert_eq!(arm_name("Nonsmokers n = 56"), "Nonsmokers");
        assert_eq!(arm_name("SD48W, N = 94"), "SD48W");
        assert_eq!(arm_name("Placebo (N=120)"), "Placebo");
        assert!(not_an_arm("P value"));
        assert!(not_an_arm("P a"));
        assert!(not_an_arm("Group comparison, OR (95% CI)a"));
        assert!(!not_an_arm("Placebo"));
        assert!(!not_an_arm("Total"));
    }

    #[test]
    fn arms_are_value_columns_under_one_header_and_p_values_are_not() {
        let cells = vec![
            cell(0, 1, "Drug"),
            cell(0, 2, "Placebo"),
            cell(0, 3, "P"),
            cell(1, 1, "n = 50"),
            cell(1, 2, "n = 40"),
            cell(2, 0, "Age"),
            cell(2, 1, "56.7 ± 10.2"),
            cell(2, 2, "55.0 ± 9.9"),
            cell(2, 3, "0.41"),
            cell(3, 0, "Women"),
            cell(3, 1, "20 (40.0)"),
            cell(3, 2, "18 (45.0)"),
            cell(3, 3, "<0.001"),
        ];
        let g = Grid::new(&cells);
        let heads = column_headers(&g, 2, false);
        assert_eq!(heads[1], vec!["Drug", "n = 50"]);
        let arms = find_arms(&g, &heads, &[2, 3], 1);
        let names: Vec<(&str, Option<i64>)> = arms.iter().map(|a| (a.name.as_str(), a.n)).collect();
        assert_eq!(names, vec![("Drug", Some(50)), ("Placebo", Some(40))]);
    }

    #[test]
    fn unnamed_arms_are_named_by_order_and_measure_columns_of_one_sample_join() {
        // Columns headed only by measures, after two spacer columns: one
        // arm, the whole sample, whatever column it starts in.
        let cells = vec![
            cell(0, 0, "Measure"),
            cell(0, 3, "n (%)"),
            cell(0, 4, "Median"),
            cell(1, 2, "Liked it"),
            cell(1, 3, "10 (40)"),
            cell(2, 2, "Useful"),
            cell(2, 4, "4"),
        ];
        let g = Grid::new(&cells);
        let heads = column_headers(&g, 1, false);
        let arms = find_arms(&g, &heads, &[1, 2], 3);
        assert_eq!(arms.len(), 1);
        assert_eq!(arms[0].name, "all participants");
        assert_eq!(arms[0].cols, vec![3, 4]);
        // The same measure twice is two arms; sizes alone name none.
        let cells = vec![
            cell(0, 1, "Mean (SD)"),
            cell(0, 2, "Mean (SD)"),
            cell(0, 3, "n = 40"),
            cell(0, 4, "n = 38"),
            cell(1, 0, "Age"),
            cell(1, 1, "56 (10)"),
            cell(1, 2, "55 (9)"),
            cell(1, 3, "57 (8)"),
            cell(1, 4, "54 (11)"),
        ];
        let g = Grid::new(&cells);
        let heads = column_headers(&g, 1, false);
        let arms = find_arms(&g, &heads, &[1], 1);
        let names: Vec<&str> = arms.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "unnamed arm 1",
                "unnamed arm 2",
                "unnamed arm 3",
                "unnamed arm 4"
            ]
        );
        assert_eq!(arms[2].n, Some(40));
    }
}
