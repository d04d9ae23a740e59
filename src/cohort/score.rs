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
    score_into(gold, pred, misses, label, &mut Vec::new())
}

/// As [`score`], also pushing `(table, gold measure, predicted measure)`
/// for each gold item found with its value but under another measure.
pub fn score_into(
    gold: &[Gold],
    pred: &[Item],
    misses: bool,
    label: &str,
    wrong_measures: &mut Vec<(String, String, String)>,
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
                    wrong_measures.push((
                        g.table.clone(),
                        g.measure.clone(),
                        p.measure.as_str().to_string(),
                    ));
                }
                s.grouped += gr as usize;
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
