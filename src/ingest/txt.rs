//! Plain text in any encoding: BOM, UTF-8, UTF-16, else a detected legacy
//! encoding (Latin-1 and friends never fail). Form feeds are page breaks.

use super::{BlockKind, Extracted, RawBlock};

/// Decodes bytes to text, detecting the encoding. Never fails.
pub fn decode(bytes: &[u8]) -> String {
    if let Some((enc, bom_len)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, _) = enc.decode_without_bom_handling(&bytes[bom_len..]);
        return text.into_owned();
    }
    if let Ok(s) = std::str::from_utf8(bytes) {
        return s.to_string();
    }
    // UTF-16 without a BOM: NULs at every other byte.
    let half = bytes.len() / 2;
    if half > 4 {
        let even = bytes.iter().step_by(2).filter(|&&c| c == 0).count();
        let odd = bytes.iter().skip(1).step_by(2).filter(|&&c| c == 0).count();
        if odd * 10 > half * 8 && even == 0 {
            return encoding_rs::UTF_16LE
                .decode_without_bom_handling(bytes)
                .0
                .into_owned();
        }
        if even * 10 > half * 8 && odd == 0 {
            return encoding_rs::UTF_16BE
                .decode_without_bom_handling(bytes)
                .0
                .into_owned();
        }
    }
    let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    det.feed(bytes, true);
    let enc = det.guess(None, chardetng::Utf8Detection::Allow);
    enc.decode_without_bom_handling(bytes).0.into_owned()
}

/// Splits text into paragraph blocks at blank lines; form feeds start pages.
pub fn paragraphs(text: &str, kind: BlockKind) -> Extracted {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let paged = text.contains('\u{000C}');
    let mut blocks = Vec::new();
    let mut pages = 0u32;
    for (i, page) in text.split('\u{000C}').enumerate() {
        pages = i as u32 + 1;
        let mut para = String::new();
        let flush = |para: &mut String, blocks: &mut Vec<RawBlock>| {
            if !para.trim().is_empty() {
                let mut b = RawBlock::new(kind, para.trim_end().to_string());
                b.page = paged.then_some(i as u32 + 1);
                blocks.push(b);
            }
            para.clear();
        };
        for line in page.split('\n') {
            if line.trim().is_empty() {
                flush(&mut para, &mut blocks);
            } else {
                if !para.is_empty() {
                    para.push('\n');
                }
                para.push_str(line);
            }
        }
        flush(&mut para, &mut blocks);
    }
    Extracted {
        blocks,
        pages: paged.then_some(pages),
        extractor: "txt",
        ..Default::default()
    }
}

/// The plain-text extractor.
pub fn extract(bytes: &[u8]) -> Result<Extracted, String> {
    Ok(paragraphs(&decode(bytes), BlockKind::Paragraph))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_is_decoded() {
        let bytes = b"Caf\xe9 cr\xe8me, na\xefve \xe0 la fa\xe7on fran\xe7aise.";
        assert_eq!(decode(bytes), "Café crème, naïve à la façon française.");
    }

    #[test]
    fn form_feeds_are_pages() {
        let x = paragraphs("one\n\ntwo\u{000C}three", BlockKind::Paragraph);
        assert_eq!(x.pages, Some(2));
        assert_eq!(
            x.blocks.iter().map(|b| b.page).collect::<Vec<_>>(),
            [Some(1), Some(1), Some(2)]
        );
    }
}
