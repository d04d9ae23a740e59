//! CSV and TSV: table blocks of up to 50 rows, each repeating the header row,
//! with every cell recorded.

use super::{table_text, txt::decode, BlockKind, Cell, Extracted, RawBlock};

const ROWS_PER_BLOCK: usize = 50;

/// The delimited-text extractor.
pub fn extract(bytes: &[u8], ext: &str) -> Result<Extracted, String> {
    let text = decode(bytes);
    let delim = if ext == "tsv" {
        b'\t'
    } else {
        sniff_delimiter(&text)
    };
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(delim)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let rec =
            rec.map_err(|e| format!("malformed {} at record {}: {e}", ext.to_uppercase(), i + 1))?;
        rows.push(rec.iter().map(str::to_string).collect());
    }
    let Some(header) = rows.first().cloned() else {
        return Ok(Extracted {
            extractor: "csv",
            ..Default::default()
        });
    };
    let mut blocks = Vec::new();
    for group in rows[1..].chunks(ROWS_PER_BLOCK) {
        blocks.push(table_block(&header, group));
    }
    if rows.len() == 1 {
        blocks.push(table_block(&header, &[]));
    }
    Ok(Extracted {
        blocks,
        pages: None,
        extractor: "csv",
        ..Default::default()
    })
}

fn table_block(header: &[String], rows: &[Vec<String>]) -> RawBlock {
    let mut cells = Vec::new();
    for (r, row) in std::iter::once(header)
        .chain(rows.iter().map(Vec::as_slice))
        .enumerate()
    {
        for (c, v) in row.iter().enumerate() {
            cells.push(Cell {
                row: r as u32,
                col: c as u32,
                row_span: 1,
                col_span: 1,
                text: v.clone(),
                indent: (v.len() - v.trim_start().len()) as u32,
                bold: r == 0,
            });
        }
    }
    let mut b = RawBlock::new(BlockKind::Table, table_text(&cells));
    b.cells = cells;
    b
}

fn sniff_delimiter(text: &str) -> u8 {
    let head: Vec<&str> = text.lines().take(5).collect();
    [b',', b';', b'\t', b'|']
        .into_iter()
        .max_by_key(|&d| {
            let counts: Vec<usize> = head
                .iter()
                .map(|l| l.bytes().filter(|&b| b == d).count())
                .collect();
            let min = counts.iter().copied().min().unwrap_or(0);
            (min, counts.first().copied().unwrap_or(0))
        })
        .unwrap_or(b',')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semicolon_csv_with_header() {
        let x = extract(b"arm;n\ndrug;120\nplacebo;118\n", "csv").unwrap();
        assert_eq!(x.blocks.len(), 1);
        assert_eq!(x.blocks[0].text, "arm | n\ndrug | 120\nplacebo | 118");
        assert_eq!(x.blocks[0].cells.len(), 6);
    }
}
