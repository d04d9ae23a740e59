//! Stage 4, cell merging: lines of one cell set on several rows joined back
//! into that cell.

use super::TCell;

/// A body row with nothing in the first column and only bracketed values
/// (the second line of "0.24 / (0.12, 0.36)") continues the row above:
/// each piece joins the cell above it that it overlaps most. Rows are
/// renumbered after the rows removed.
pub fn continuations(out: Vec<TCell>, first_body: usize) -> Vec<TCell> {
    let mut merged: Vec<TCell> = Vec::new();
    let nrows = out.iter().map(|c| c.row + 1).max().unwrap_or(0);
    let mut shift = 0u32;
    let mut prev_row: Option<u32> = None;
    for r in 0..nrows {
        let row: Vec<&TCell> = out.iter().filter(|c| c.row == r).collect();
        if row.is_empty() {
            shift += 1;
            continue;
        }
        let continues = r as usize > first_body
            && prev_row.is_some()
            && row.iter().all(|c| {
                // A bracketed remainder: "(0.12, 0.36)", "(–1.12,", "11.86)".
                let t = c.text.trim();
                c.col > 0
                    && t.chars().any(|ch| ch.is_ascii_digit())
                    && !t.contains('\u{b1}')
                    && (t.starts_with('(')
                        || t.starts_with('[')
                        || t.ends_with(')')
                        || t.ends_with(']'))
            })
            && merged.iter().any(|c| Some(c.row) == prev_row && c.col == 0);
        if continues {
            let pr = prev_row.unwrap();
            for c in row {
                let best = merged
                    .iter_mut()
                    .filter(|m| m.row == pr && m.col > 0)
                    .max_by(|a, b| {
                        let ov = |m: &TCell| m.bbox.2.min(c.bbox.2) - m.bbox.0.max(c.bbox.0);
                        ov(a).total_cmp(&ov(b))
                    });
                if let Some(m) = best {
                    m.text = format!("{} {}", m.text, c.text);
                    m.bbox.2 = m.bbox.2.max(c.bbox.2);
                    m.bbox.3 = m.bbox.3.max(c.bbox.3);
                }
            }
            shift += 1;
            continue;
        }
        for c in row {
            merged.push(TCell {
                row: r - shift,
                ..c.clone()
            });
        }
        prev_row = Some(r - shift);
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;

    #[test]
    fn a_bracketed_second_line_joins_the_cell_above() {
        let lines = laid_out(&[
            &[(200.0, "Drug"), (300.0, "Placebo")],
            &[(50.0, "Change"), (200.0, "0.24"), (300.0, "0.31")],
            &[(200.0, "(0.12, 0.36)"), (300.0, "(0.20, 0.42)")],
            &[(50.0, "Age"), (200.0, "34.1"), (300.0, "35.2")],
        ]);
        let cells = super::super::cells(&lines);
        let texts: Vec<(u32, u32, &str)> = cells
            .iter()
            .map(|c| (c.row, c.col, c.text.as_str()))
            .collect();
        assert!(texts.contains(&(1, 1, "0.24 (0.12, 0.36)")));
        assert!(texts.contains(&(1, 2, "0.31 (0.20, 0.42)")));
        assert!(texts.contains(&(2, 0, "Age")));
    }
}
