//! Scoring `cohort_tables` items against gold items, the way seed 003
//! scores its pipeline: per gold data item, (1) its value is parsed and
//! present, (2) its statistical measure is right, (3) it sits under the right
//! characteristic and arm; overall = all three.
//!
//! Gold items are JSON lines `{"pmcid", "table", "arm", "characteristic":
//! [...], "category", "measure", "value"}` (see `tests/gold/cohort/`). Each
//! gold item takes the unused predicted item of the same table with the same
//! value that agrees with it most (grouping, then measure). Names compare
//! case-, space- and punctuation-blind, with "n = 19" sizes left out; an arm
//! matches when one name's words contain the other's; a path matches element
//! by element; a category is compared where the gold item has one.

use serde::Deserialize;

use super::Item;

/// One gold data item.
#[derive(Debug, Deserialize, Clone)]
pub struct Gold {
    /// The paper.
    pub pmcid: String,
    /// "Table 1".
    pub table: String,
    /// The study arm.
    pub arm: String,
    /// Row headers from the top.
    pub characteristic: Vec<String>,
    /// The sub-population of a count or percentage.
    pub category: Option<String>,
    /// The statistical measure.
    pub measure: String,
    /// The number.
    pub value: f64,
}

fn norm_words(s: &str) -> Vec<String> {
    use unicode_normalization::UnicodeNormalization;
    // Compatibility forms compare as their plain letters ("µg" and "μg").
    let lower = s.nfkc().collect::<String>().to_lowercase();
    let words: Vec<String> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    // Drop stated sizes: "n 19".
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if words[i] == "n"
            && words
                .get(i + 1)
                .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
        {
            i += 2;
            continue;
        }
        out.push(words[i].clone());
        i += 1;
    }
    out
}

fn norm(s: &str) -> String {
    norm_words(s).join(" ")
}

fn arm_matches(gold: &str, pred: &str) -> bool {
    let g = norm_words(gold);
    let p = norm_words(pred);
    if g.is_empty() || p.is_empty() {
        return g == p;
    }
    g.iter().all(|w| p.contains(w)) || p.iter().all(|w| g.contains(w))
}

fn path_matches(gold: &[String], pred: &[String]) -> bool {
    let g: Vec<String> = gold
        .iter()
        .map(|s| norm(s))
        .filter(|s| !s.is_empty())
        .collect();
    let p: Vec<String> = pred
        .iter()
        .map(|s| norm(s))
        .filter(|s| !s.is_empty())
        .collect();
    g == p
}

fn grouped(g: &Gold, p: &Item) -> bool {
    p.arm.as_deref().is_some_and(|a| arm_matches(&g.arm, a))
        && path_matches(&g.characteristic, &p.characteristic)
        && match &g.category {
            None => true,
            Some(c) => p.category.as_deref().is_some_and(|pc| norm(pc) == norm(c)),
        }
}

/// Counts of gold items by metric.
#[derive(Debug, Default, Clone, Copy)]
pub struct Score {
    /// Gold items.
    pub gold: usize,
    /// Found with their value.
    pub parsed: usize,
    /// With the right measure.
    pub measure: usize,
    /// Under the right characteristic and arm.
    pub grouped: usize,
    /// All three.
    pub overall: usize,
    /// Predicted items with a value in the gold tables.
    pub predicted: usize,
    /// Predicted items no gold item took.
    pub extra: usize,
}

impl Score {
    /// Adds another score.
    pub fn add(&mut self, o: &Score) {
        self.gold += o.gold;
        self.parsed += o.parsed;
        self.measure += o.measure;
        self.grouped += o.grouped;
        self.overall += o.overall;
        self.predicted += o.predicted;
        self.extra += o.extra;
    }
    /// A percentage.
    pub fn pct(n: usize, d: usize) -> f64 {
        if d == 0 {
            0.0
        } else {
            100.0 * n as f64 / d as f64
        }
    }
}

/// Scores one paper's predicted items against its gold items; with
/// `misses`, prints each gold item that is not wholly right.
pub fn score(gold: &[Gold], pred: &[Item], misses: bool, label: &str) -> Score {
    score_into(gold, pred, misses, label, &mut Wrong::default())
}

/// What went wrong with the items found with their value.
#[derive(Debug, Default, Clone)]
pub struct Wrong {
    /// `(table, gold measure, predicted measure)` of each item under
    /// another measure.
    pub measures: Vec<(String, String, String)>,
    /// `(table, what differs)` of each item grouped otherwise: the arm,
    /// the row headers' path (how), or the category.
    pub groups: Vec<(String, &'static str)>,
    /// `(table, why)` of each gold item not found: "no table of that
    /// label" or "not in its table".
    pub missing: Vec<(String, &'static str)>,
}

/// Why a found item is grouped otherwise than the gold item.
fn group_miss(g: &Gold, p: &Item) -> &'static str {
    if !p.arm.as_deref().is_some_and(|a| arm_matches(&g.arm, a)) {
        "arm"
    } else if !path_matches(&g.characteristic, &p.characteristic) {
        let depth = |v: &[String]| v.iter().filter(|s| !norm(s).is_empty()).count();
        let words = |v: &[String]| v.iter().map(|s| norm(s)).collect::<Vec<_>>().join(" ");
        let (gw, pw) = (words(&g.characteristic), words(&p.characteristic));
        let same_depth = depth(&g.characteristic) == depth(&p.characteristic);
        match (same_depth, gw == pw, gw.contains(&pw) || pw.contains(&gw)) {
            (false, true, _) => "path: same words, other levels",
            (false, false, true) => "path: a level more or less",
            (false, false, false) => "path: other depth, other words",
            (true, _, true) => "path: words more or less",
            (true, _, false) => "path: other words",
        }
    } else {
        "category"
    }
}

/// As [`score`], also keeping what was wrong with each item found.
pub fn score_into(
    gold: &[Gold],
    pred: &[Item],
    misses: bool,
    label: &str,
    wrong: &mut Wrong,
) -> Score {
    let tables: Vec<&str> = {
        let mut t: Vec<&str> = gold.iter().map(|g| g.table.as_str()).collect();
        t.dedup();
        t
    };
    let pred: Vec<&Item> = pred
        .iter()
        .filter(|p| tables.contains(&p.table_id.as_str()) && p.value.is_some())
        .collect();
    let mut used = vec![false; pred.len()];
    let mut s = Score {
        gold: gold.len(),
        predicted: pred.len(),
        ..Score::default()
    };
    for g in gold {
        let mut best: Option<(usize, u8)> = None;
        for (k, p) in pred.iter().enumerate() {
            if used[k] || p.table_id != g.table || (p.value.unwrap() - g.value).abs() > 1e-9 {
                continue;
            }
            let sc = 1 + 2 * grouped(g, p) as u8 + (p.measure.as_str() == g.measure) as u8;
            if best.is_none_or(|(_, b)| sc > b) {
                best = Some((k, sc));
            }
        }
        match best {
            Some((k, _)) => {
                used[k] = true;
                let p = pred[k];
                s.parsed += 1;
                let m = p.measure.as_str() == g.measure;
                let gr = grouped(g, p);
                s.measure += m as usize;
                if !m {
                    wrong.measures.push((
                        g.table.clone(),
                        g.measure.clone(),
                        p.measure.as_str().to_string(),
                    ));
                }
                s.grouped += gr as usize;
                if !gr {
                    wrong.groups.push((g.table.clone(), group_miss(g, p)));
                }
                s.overall += (m && gr) as usize;
                if misses && !(m && gr) {
                    println!(
                        "  {label} {} {} | gold {} {:?} {:?} {} {} | got {:?} {:?} {:?} {}",
                        g.pmcid,
                        g.table,
                        g.arm,
                        g.characteristic,
                        g.category,
                        g.measure,
                        g.value,
                        p.arm.as_deref().unwrap_or(""),
                        p.characteristic,
                        p.category,
                        p.measure.as_str()
                    );
                }
            }
            None => {
                let why = if pred.iter().any(|p| p.table_id == g.table) {
                    "not in its table"
                } else {
                    "no table of that label"
                };
                wrong.missing.push((g.table.clone(), why));
                if misses {
                    println!(
                        "  {label} {} {} | gold {} {:?} {:?} {} {} | not found",
                        g.pmcid, g.table, g.arm, g.characteristic, g.category, g.measure, g.value
                    );
                }
            }
        }
    }
    s.extra = used.iter().filter(|u| !**u).count();
    s
}

/// Reads the gold items of every `.jsonl` file in a folder, by paper.
pub fn load_gold(
    dir: &std::path::Path,
) -> Result<std::collections::BTreeMap<String, Vec<Gold>>, String> {
    let mut gold: std::collections::BTreeMap<String, Vec<Gold>> = Default::default();
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        for (k, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let g: Gold = serde_json::from_str(line)
                .map_err(|e| format!("{} line {}: {e}", f.display(), k + 1))?;
            gold.entry(g.pmcid.clone()).or_default().push(g);
        }
    }
    Ok(gold)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cohort::tokens::Measure;

    fn gold(path: &[&str]) -> Gold {
        Gold {
            pmcid: "P".into(),
            table: "Table 1".into(),
            arm: "Drug".into(),
            characteristic: path.iter().map(|s| s.to_string()).collect(),
            category: None,
            measure: "mean".into(),
            value: 1.0,
        }
    }

    fn item(arm: &str, path: &[&str], measure: Measure) -> Item {
        Item {
            table_id: "Table 1".into(),
            caption: String::new(),
            arm: Some(arm.into()),
            arm_n: None,
            characteristic: path.iter().map(|s| s.to_string()).collect(),
            category: None,
            measure,
            value: Some(1.0),
            unit: None,
            cell_text: "1".into(),
            note: None,
        }
    }

    #[test]
    fn what_went_wrong_is_kept_by_kind() {
        let g = [gold(&["Age", "Years"])];
        let cases = [
            (item("Placebo", &["Age", "Years"], Measure::Mean), "arm"),
            (
                item("Drug", &["Age Years"], Measure::Mean),
                "path: same words, other levels",
            ),
            (
                item("Drug", &["Years"], Measure::Mean),
                "path: a level more or less",
            ),
            (
                item("Drug", &["Age", "Years old"], Measure::Mean),
                "path: words more or less",
            ),
            (
                item("Drug", &["Age", "Months"], Measure::Mean),
                "path: other words",
            ),
        ];
        for (p, why) in cases {
            let mut wrong = Wrong::default();
            let s = score_into(&g, &[p], false, "pdf", &mut wrong);
            assert_eq!((s.parsed, s.grouped), (1, 0));
            assert_eq!(wrong.groups, [("Table 1".to_string(), why)]);
            assert!(wrong.measures.is_empty());
        }
        let mut wrong = Wrong::default();
        let s = score_into(
            &g,
            &[item("Drug", &["Age", "Years"], Measure::Sd)],
            false,
            "pdf",
            &mut wrong,
        );
        assert_eq!((s.measure, s.grouped, s.overall), (0, 1, 0));
        assert_eq!(
            wrong.measures,
            [("Table 1".into(), "mean".into(), "sd".into())]
        );
    }
}
