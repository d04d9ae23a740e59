//! Markdown: headings become sections; paragraphs, list items, code, tables
//! (with cells) and footnotes become blocks.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::{table_text, txt::decode, BlockKind, Cell, Extracted, RawBlock};

/// The Markdown extractor.
pub fn extract(bytes: &[u8]) -> Result<Extracted, String> {
    let text = decode(bytes);
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut blocks: Vec<RawBlock> = Vec::new();
    let mut section: Option<String> = None;
    let mut buf = String::new();
    let mut kind_stack: Vec<BlockKind> = Vec::new();
    let mut in_heading = false;
    let mut table: Option<(Vec<Cell>, u32, u32)> = None; // cells, row, col
    let mut cell_buf = String::new();
    let mut in_cell = false;
    let mut in_head_row = false;
    let mut in_metadata = false;

    let flush = |buf: &mut String,
                 kind: BlockKind,
                 section: &Option<String>,
                 blocks: &mut Vec<RawBlock>| {
        let t = buf.trim();
        if !t.is_empty() {
            let mut b = RawBlock::new(kind, t.to_string());
            b.section = section.clone();
            blocks.push(b);
        }
        buf.clear();
    };

    for ev in Parser::new_ext(&text, opts) {
        match ev {
            Event::Start(Tag::Heading { .. }) => {
                flush(
                    &mut buf,
                    *kind_stack.last().unwrap_or(&BlockKind::Paragraph),
                    &section,
                    &mut blocks,
                );
                in_heading = true;
            }
            Event::End(TagEnd::Heading(_)) => {
                in_heading = false;
                let h = buf.trim().to_string();
                buf.clear();
                if !h.is_empty() {
                    section = Some(h.clone());
                    let mut b = RawBlock::new(BlockKind::Heading, h);
                    b.section = section.clone();
                    blocks.push(b);
                }
            }
            Event::Start(Tag::Item) => {
                flush(
                    &mut buf,
                    *kind_stack.last().unwrap_or(&BlockKind::Paragraph),
                    &section,
                    &mut blocks,
                );
                kind_stack.push(BlockKind::List);
            }
            Event::End(TagEnd::Item) => {
                flush(&mut buf, BlockKind::List, &section, &mut blocks);
                kind_stack.pop();
            }
            Event::Start(Tag::FootnoteDefinition(label)) => {
                flush(
                    &mut buf,
                    *kind_stack.last().unwrap_or(&BlockKind::Paragraph),
                    &section,
                    &mut blocks,
                );
                kind_stack.push(BlockKind::Footnote);
                buf.push_str(&format!("[{label}] "));
            }
            Event::End(TagEnd::FootnoteDefinition) => {
                flush(&mut buf, BlockKind::Footnote, &section, &mut blocks);
                kind_stack.pop();
            }
            Event::Start(Tag::Paragraph)
            | Event::Start(Tag::CodeBlock(_))
            | Event::Start(Tag::BlockQuote(_)) => {
                if kind_stack.is_empty() {
                    flush(&mut buf, BlockKind::Paragraph, &section, &mut blocks);
                } else if !buf.is_empty() {
                    buf.push('\n');
                }
            }
            Event::End(TagEnd::Paragraph)
            | Event::End(TagEnd::CodeBlock)
            | Event::End(TagEnd::BlockQuote(_))
                if kind_stack.is_empty() =>
            {
                flush(&mut buf, BlockKind::Paragraph, &section, &mut blocks);
            }
            Event::Start(Tag::Table(_)) => {
                flush(&mut buf, BlockKind::Paragraph, &section, &mut blocks);
                table = Some((Vec::new(), 0, 0));
            }
            Event::End(TagEnd::Table) => {
                if let Some((cells, _, _)) = table.take() {
                    let mut b = RawBlock::new(BlockKind::Table, table_text(&cells));
                    b.section = section.clone();
                    b.cells = cells;
                    if !b.text.trim().is_empty() {
                        blocks.push(b);
                    }
                }
            }
            Event::Start(Tag::TableHead) => in_head_row = true,
            Event::End(TagEnd::TableHead) => {
                in_head_row = false;
                if let Some((_, row, col)) = table.as_mut() {
                    *row += 1;
                    *col = 0;
                }
            }
            Event::End(TagEnd::TableRow) => {
                if let Some((_, row, col)) = table.as_mut() {
                    *row += 1;
                    *col = 0;
                }
            }
            Event::Start(Tag::TableCell) => {
                in_cell = true;
                cell_buf.clear();
            }
            Event::End(TagEnd::TableCell) => {
                in_cell = false;
                if let Some((cells, row, col)) = table.as_mut() {
                    cells.push(Cell {
                        row: *row,
                        col: *col,
                        row_span: 1,
                        col_span: 1,
                        text: cell_buf.trim().to_string(),
                        indent: 0,
                        bold: in_head_row,
                    });
                    *col += 1;
                }
            }
            Event::Start(Tag::MetadataBlock(_)) => in_metadata = true,
            Event::End(TagEnd::MetadataBlock(_)) => in_metadata = false,
            Event::Text(_) if in_metadata => {}
            Event::Text(t) | Event::Code(t) => {
                if in_cell {
                    cell_buf.push_str(&t);
                } else {
                    buf.push_str(&t);
                }
            }
            Event::SoftBreak => {
                if in_cell {
                    cell_buf.push(' ');
                } else if in_heading {
                    buf.push(' ');
                } else {
                    buf.push('\n');
                }
            }
            Event::HardBreak => buf.push('\n'),
            Event::FootnoteReference(label) => buf.push_str(&format!("[{label}]")),
            _ => {}
        }
    }
    flush(&mut buf, BlockKind::Paragraph, &section, &mut blocks);
    Ok(Extracted {
        blocks,
        pages: None,
        extractor: "md",
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_not_text() {
        let x = extract(b"---\ntitle: A trial\nauthor: Smith\n---\n\n# Results\n\nIt worked.\n")
            .unwrap();
        let texts: Vec<&str> = x.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["Results", "It worked."]);
    }

    #[test]
    fn headings_become_sections() {
        let x = extract(b"# Methods\n\nWe enrolled 40.\n\n## Outcomes\n\n- pain\n- sleep\n\n| a | b |\n|---|---|\n| 1 | 2 |\n").unwrap();
        let kinds: Vec<_> = x
            .blocks
            .iter()
            .map(|b| (b.kind, b.section.as_deref(), b.text.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                (BlockKind::Heading, Some("Methods"), "Methods"),
                (BlockKind::Paragraph, Some("Methods"), "We enrolled 40."),
                (BlockKind::Heading, Some("Outcomes"), "Outcomes"),
                (BlockKind::List, Some("Outcomes"), "pain"),
                (BlockKind::List, Some("Outcomes"), "sleep"),
                (BlockKind::Table, Some("Outcomes"), "a | b\n1 | 2"),
            ]
        );
    }
}
