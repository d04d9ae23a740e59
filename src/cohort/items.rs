//! The tree and its items (seed 003's templates): body rows nest by stub
//! column and indentation, a row without values opens a group (closed at
//! 100% of its categories, or when rows turn from counts to continuous),
//! and each value cell under an arm becomes items with the measures read
//! from the texts around it.

use std::collections::BTreeMap;

use super::arms::Arm;
use super::grid::{is_value, row_parts, Grid};
use super::measures::{
    is_size_label, looks_categorical, marked_note, push_cell_items, rounding, split_label,
    split_stated_n, strip_annotation, unit_of, CellContext,
};
use super::tokens::{descriptors, measure_only, shape, tokenize, Measure, Shape};
use super::Item;

/// What the tree is built from: the grid and the stages before.
pub(super) struct Body<'a> {
    pub(super) g: &'a Grid<'a>,
    pub(super) body: &'a [usize],
    pub(super) data_start: usize,
    pub(super) nhead: usize,
    pub(super) arms: &'a [Arm],
    pub(super) col_headers: &'a [Vec<String>],
    pub(super) table_desc: &'a [Vec<Measure>],
    pub(super) note_desc: &'a [Vec<Measure>],
    pub(super) marks: &'a [(char, Vec<Vec<Measure>>)],
    pub(super) base: &'a Item,
}

/// The items of the body rows, placed in the tree of row labels.
pub(super) fn tree_items(b: &Body) -> Vec<Item> {
    let Body {
        g,
        body,
        data_start,
        nhead,
        arms,
        col_headers,
        table_desc,
        note_desc,
        marks,
        base,
    } = *b;
    // Rows: label parts per stub column, values per arm.
    struct Row {
        r: usize,
        level: (usize, u32),
        parts: Vec<(usize, String)>,
        has_values: bool,
    }
    let mut rows: Vec<Row> = Vec::new();
    for &r in body {
        let parts = row_parts(g, r, data_start, nhead);
        let level = parts
            .first()
            .map(|(c, _)| (*c, g.at(r, *c).map(|x| x.0.indent).unwrap_or(0)))
            .unwrap_or((data_start, 0));
        let has_values = arms.iter().any(|a| {
            a.cols.iter().any(|&c| {
                g.at(r, c).is_some_and(|(cell, origin)| {
                    origin && cell.col as usize >= data_start && is_value(&cell.text)
                })
            })
        });
        // A row with no value whose label says nothing (".", "NS", "—")
        // is not a heading.
        let says_something = parts.iter().any(|(_, p)| {
            p.split(|c: char| !c.is_alphanumeric())
                .any(|w| !w.is_empty() && !w.eq_ignore_ascii_case("ns"))
        });
        if !has_values && !says_something {
            continue;
        }
        rows.push(Row {
            r,
            level,
            parts,
            has_values,
        });
    }

    // The tree: a path of (stub column, indent, label, group state) entries.
    #[derive(Clone)]
    struct Entry {
        col: usize,
        indent: u32,
        label: String,
        /// A row with no values: a heading or a categorical characteristic.
        group: bool,
        /// Whether its children sit at its own level (no indentation).
        flat: Option<bool>,
        /// Percentages of its categories so far (first arm), with the
        /// rounding they may carry.
        pct: f64,
        slack: f64,
        kids: usize,
        /// Whether its first valued child was a count/percentage row.
        categorical: Option<bool>,
        closed: bool,
    }
    let mut stack: Vec<Entry> = Vec::new();
    let mut items = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let (col, indent) = row.level;
        // A valueless row whose next row is deeper is a characteristic with
        // its own sub-rows ("Gender, n (%)" over "Male"); it can sit inside a
        // flat section ("Background characteristics") at its own level.
        let opens_deeper = !row.has_values && rows.get(i + 1).is_some_and(|n| n.level > row.level);
        // Pop entries this row is not inside of.
        while let Some(top) = stack.last() {
            let deeper = (top.col, top.indent) < (col, indent);
            let inside = deeper
                || (top.col == col
                    && top.indent == indent
                    && top.group
                    && top.flat != Some(false)
                    && (row.has_values || opens_deeper));
            if inside && !(top.group && top.closed) {
                break;
            }
            stack.pop();
        }
        let label_text = row
            .parts
            .iter()
            .map(|p| p.1.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let leaf = row.parts.last().map(|p| p.1.clone()).unwrap_or_default();
        if row.has_values {
            let n_row = is_size_label(&label_text) && stack.is_empty();
            // The row's items under the current parents; a flat group whose
            // rows so far were of the other kind (continuous vs categorical)
            // does not hold this one.
            let mut retried = false;
            let (row_items, row_pct, is_cat) = loop {
                let parent_path: Vec<String> = stack.iter().map(|e| e.label.clone()).collect();
                let mut path = parent_path.clone();
                path.extend(row.parts.iter().map(|p| p.1.clone()));
                let clean_path: Vec<String> =
                    path.iter().filter(|p| !measure_only(p)).cloned().collect();
                let in_group = stack.last().is_some_and(|e| e.group);
                let categorical = in_group || looks_categorical(&leaf);
                let mut its: Vec<Item> = Vec::new();
                let mut row_pct: Option<(f64, f64)> = None;
                for (ai, a) in arms.iter().enumerate() {
                    for &c in &a.cols {
                        let Some((cell, origin)) = g.at(row.r, c) else {
                            continue;
                        };
                        if !origin || (cell.col as usize) < data_start {
                            continue;
                        }
                        let text = cell.text.trim();
                        if !is_value(text) {
                            continue;
                        }
                        // "41% (n = 74)": the size the share is of is its own item.
                        let (inner_n, rest) = split_stated_n(text);
                        let Some((vals, sh)) = shape(&tokenize(&rest)) else {
                            continue;
                        };
                        let item = Item {
                            arm: Some(a.name.clone()),
                            arm_n: a.n,
                            characteristic: clean_path.clone(),
                            unit: unit_of(&path),
                            cell_text: text.to_string(),
                            ..base.clone()
                        };
                        if let Some(n) = inner_n {
                            its.push(Item {
                                measure: Measure::PopulationSize,
                                value: Some(n as f64),
                                category: (!clean_path.is_empty()).then(|| strip_annotation(&leaf)),
                                ..item.clone()
                            });
                        }
                        if n_row && vals.len() == 1 {
                            its.push(Item {
                                characteristic: vec![],
                                measure: Measure::PopulationSize,
                                value: Some(vals[0]),
                                ..item
                            });
                            continue;
                        }
                        // Measures: row label, column headers, parents, the note
                        // the label's footnote mark points to, caption, notes.
                        // (A mark glued to a word, "Primiparousb", can be the
                        // word's own last letter: the parents speak first.)
                        let mut sources: Vec<Vec<Vec<Measure>>> = vec![descriptors(&label_text)];
                        sources.extend(col_headers[c].iter().rev().map(|h| descriptors(h)));
                        sources.push(descriptors(&col_headers[c].join(" ")));
                        sources.extend(parent_path.iter().rev().map(|p| descriptors(p)));
                        let marked = marked_note(&label_text, marks).map(|d| {
                            sources.push(d);
                            sources.len() - 1
                        });
                        let weak_from = sources.len();
                        sources.push(table_desc.to_vec());
                        sources.push(note_desc.to_vec());
                        let split = match sh {
                            Shape::Slash(k) => split_label(&leaf, k),
                            Shape::SlashPercents => {
                                split_label(&leaf, 2).map(|n| [n.clone(), n].concat())
                            }
                            _ => None,
                        };
                        let before = its.len();
                        push_cell_items(
                            &mut its,
                            item,
                            &vals,
                            &sh,
                            &CellContext {
                                sources: &sources,
                                weak_from,
                                arm_n: a.n,
                                categorical,
                                split,
                                category: leaf.clone(),
                                marked,
                            },
                        );
                        if ai == 0 && row_pct.is_none() {
                            if let Some(p) =
                                its[before..].iter().find(|i| i.measure == Measure::Percent)
                            {
                                row_pct =
                                    Some((p.value.unwrap_or_default(), rounding(&p.cell_text)));
                            }
                        }
                    }
                }
                let is_cat = its
                    .iter()
                    .any(|i| matches!(i.measure, Measure::Count | Measure::Percent));
                let top_mismatch = stack.last().is_some_and(|e| {
                    e.group && e.flat == Some(true) && e.categorical.is_some_and(|k| k != is_cat)
                });
                if top_mismatch
                    && !retried
                    && (stack.last().map(|e| (e.col, e.indent)) == Some((col, indent)))
                {
                    stack.pop();
                    retried = true;
                    continue;
                }
                break (its, row_pct, is_cat);
            };
            items.extend(row_items);
            if let Some(top) = stack.last_mut() {
                if top.group && top.flat.is_none() {
                    top.flat = Some((top.col, top.indent) == (col, indent));
                }
                if top.group && top.categorical.is_none() {
                    top.categorical = Some(is_cat);
                }
                // Close a flat group whose categories add up to 100%.
                if let (Some((p, slack)), true) = (row_pct, top.group && top.flat == Some(true)) {
                    top.pct += p;
                    top.slack += slack;
                    top.kids += 1;
                    if top.kids >= 2 && (top.pct - 100.0).abs() <= top.slack.max(0.05) + 1e-9 {
                        top.closed = true;
                    }
                }
            }
        } else if let Some(top) = stack.last_mut() {
            if top.group && top.flat.is_none() {
                top.flat = Some((top.col, top.indent) == (col, indent));
            }
        }
        // The row becomes a parent for deeper rows (a group if it has no
        // values); multi-column labels put their earlier parts on the stack
        // too. The first part is where the row stands (its column and
        // indentation): the next row at that level is its sibling, not its
        // child; later parts sit in columns of their own.
        let n = row.parts.len();
        for (k, (pc, p)) in row.parts.iter().enumerate() {
            // The last part (the leaf) of a row without values is a group.
            let group = k + 1 == n && !row.has_values;
            stack.push(Entry {
                col: *pc,
                indent: if k == 0 { indent } else { 0 },
                label: p.clone(),
                group,
                flat: if group { None } else { Some(false) },
                pct: 0.0,
                slack: 0.0,
                kids: 0,
                categorical: None,
                closed: false,
            });
        }
    }
    items
}

/// Arm sizes stated in headers as items of their own (unless an "n" row
/// gave them), and every item's arm size from an "n" row where the header
/// stated none.
pub(super) fn with_sizes(mut items: Vec<Item>, arms: &[Arm], base: &Item) -> Vec<Item> {
    // Arm sizes stated in headers, one item each.
    let mut sized: Vec<Item> = arms
        .iter()
        .filter_map(|a| {
            let n = a.n?;
            if items.iter().any(|it| {
                it.measure == Measure::PopulationSize
                    && it.characteristic.is_empty()
                    && it.arm.as_deref() == Some(&a.name)
            }) {
                return None;
            }
            Some(Item {
                arm: Some(a.name.clone()),
                arm_n: Some(n),
                measure: Measure::PopulationSize,
                value: Some(n as f64),
                cell_text: a.header.clone(),
                ..base.clone()
            })
        })
        .collect();
    // An "n" row gives the arm its size.
    let sizes: BTreeMap<String, i64> = items
        .iter()
        .filter(|it| it.measure == Measure::PopulationSize && it.characteristic.is_empty())
        .filter_map(|it| Some((it.arm.clone()?, it.value? as i64)))
        .collect();
    for it in &mut items {
        if it.arm_n.is_none() {
            it.arm_n = it.arm.as_ref().and_then(|a| sizes.get(a).copied());
        }
    }
    sized.extend(items);
    sized
}

#[cfg(test)]
mod tests {
    use super::super::tests::cell;
    use super::super::{interpret, TableIn};

    #[test]
    fn a_row_with_two_stub_parts_is_the_sibling_of_the_next_row_at_its_level() {
        use crate::ingest::Cell;
        let indented = |r: u32, text: &str, indent: u32| Cell {
            indent,
            ..cell(r, 0, text)
        };
        let mut cells = vec![
            cell(0, 0, "Outcome measure"),
            cell(0, 1, "F (df)"),
            cell(0, 2, "Ba (95% CI)"),
            cell(0, 3, "ES"),
            indented(1, "Fruit intake", 0),
            indented(2, "Group×time", 1),
            cell(2, 1, "0.64 (4, 522.34)"),
            indented(3, "Time", 1),
            cell(3, 1, "3.61 (4, 523.71)"),
            indented(4, "Differences after 1 month", 1),
        ];
        for (r, label, b, es) in [
            (5, "Basic vs control", "0.16 (-0.07, 0.38)", "0.14"),
            (6, "Plus vs control", "0.40 (0.18, 0.63)", "0.37"),
            (7, "Plus vs basic", "0.25 (0.01, 0.48)", "0.22"),
        ] {
            cells.extend([
                indented(r, label, 2),
                cell(r, 1, "—"),
                cell(r, 2, b),
                cell(r, 3, es),
            ]);
        }
        let items = interpret(&TableIn {
            table_id: "Table 5".into(),
            caption: "Results of linear mixed model analyses".into(),
            notes: vec![],
            cells,
            layout: false,
        });
        let path = items
            .iter()
            .find(|i| i.value == Some(0.25))
            .map(|i| i.characteristic.clone())
            .unwrap();
        assert!(
            path.iter().any(|p| p == "Differences after 1 month"),
            "{path:?}"
        );
        assert!(
            !path.iter().any(|p| p == "Group×time" || p == "Time"),
            "{path:?}"
        );
    }

    #[test]
    fn a_flat_group_closes_when_its_categories_reach_100_percent() {
        let rows = [
            ("Sex, n (%)", "", ""),
            ("Male", "20 (40.0)", "18 (45.0)"),
            ("Female", "30 (60.0)", "22 (55.0)"),
            ("Smokers, n (%)", "12 (24.0)", "9 (22.5)"),
        ];
        let mut cells = vec![cell(0, 1, "Drug (n = 50)"), cell(0, 2, "Placebo (n = 40)")];
        for (i, (a, b, c)) in rows.iter().enumerate() {
            let r = i as u32 + 1;
            cells.extend([cell(r, 0, a), cell(r, 1, b), cell(r, 2, c)]);
        }
        let items = interpret(&TableIn {
            table_id: "Table 1".into(),
            caption: "Baseline characteristics".into(),
            notes: vec![],
            cells,
            layout: false,
        });
        let path = |v: f64| {
            items
                .iter()
                .find(|i| i.value == Some(v) && i.arm.as_deref() == Some("Drug"))
                .map(|i| i.characteristic.join(" › "))
        };
        assert_eq!(path(20.0).as_deref(), Some("Sex, n (%) › Male"));
        // After Male and Female make 100%, "Smokers" is not inside "Sex".
        assert_eq!(path(12.0).as_deref(), Some("Smokers, n (%)"));
        // The header sizes are items of their own.
        assert!(items.iter().any(|i| i.arm.as_deref() == Some("Placebo")
            && i.characteristic.is_empty()
            && i.value == Some(40.0)));
    }
}
