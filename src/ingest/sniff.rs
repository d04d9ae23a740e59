//! Content sniffing: a file whose bytes contradict its extension (a renamed
//! image, a ZIP called .txt, binary junk) fails with a message, never
//! garbage text.

/// What the first bytes of a file say it is, when they say anything.
pub fn magic(bytes: &[u8]) -> Option<&'static str> {
    let b = bytes;
    Some(if b.starts_with(b"%PDF") {
        "a PDF document"
    } else if b.starts_with(b"PK\x03\x04") || b.starts_with(b"PK\x05\x06") {
        "a ZIP archive (for example .docx, .xlsx or .zip)"
    } else if b.starts_with(b"\x89PNG") {
        "a PNG image"
    } else if b.starts_with(b"\xFF\xD8\xFF") {
        "a JPEG image"
    } else if b.starts_with(b"GIF8") {
        "a GIF image"
    } else if b.starts_with(b"II*\0") || b.starts_with(b"MM\0*") {
        "a TIFF image"
    } else if b.starts_with(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1") {
        "a legacy Office file (.doc, .xls or .ppt)"
    } else if b.starts_with(b"{\\rtf") {
        "an RTF document"
    } else if b.starts_with(b"\x1F\x8B") {
        "a gzip archive"
    } else if b.starts_with(b"7z\xBC\xAF") {
        "a 7-Zip archive"
    } else if b.starts_with(b"Rar!") {
        "a RAR archive"
    } else if b.starts_with(b"\x7FELF") {
        "an executable"
    } else if b.starts_with(b"RIFF") {
        "a RIFF media file"
    } else if b.len() > 8 && &b[4..8] == b"ftyp" {
        "an MP4/MOV media file"
    } else {
        return None;
    })
}

/// True when the bytes look like binary data rather than text in any
/// encoding: NUL bytes outside a UTF-16 pattern, or many control bytes.
pub fn looks_binary(bytes: &[u8]) -> bool {
    let sample = &bytes[..bytes.len().min(64 * 1024)];
    if sample.starts_with(b"\xFF\xFE") || sample.starts_with(b"\xFE\xFF") {
        return false;
    }
    let nul = sample.iter().filter(|&&c| c == 0).count();
    if nul > 0 {
        // UTF-16 without a BOM puts NULs at every other byte of ASCII text.
        let even = sample.iter().step_by(2).filter(|&&c| c == 0).count();
        let odd = sample
            .iter()
            .skip(1)
            .step_by(2)
            .filter(|&&c| c == 0)
            .count();
        let half = sample.len() / 2;
        let utf16 =
            half > 0 && (even * 10 > half * 8 || odd * 10 > half * 8) && (even == 0 || odd == 0);
        return !utf16;
    }
    let control = sample
        .iter()
        .filter(|&&c| c < 0x20 && !matches!(c, b'\n' | b'\r' | b'\t' | 0x0C | 0x1B))
        .count();
    control * 20 > sample.len()
}

/// Checks that a file's bytes fit the extractor its extension picked.
pub fn check(bytes: &[u8], extractor: &str, ext: &str) -> Result<(), String> {
    let found = magic(bytes);
    let named = if ext.is_empty() {
        "no extension".to_string()
    } else {
        format!(".{ext}")
    };
    match extractor {
        "pdf" => match found {
            Some("a PDF document") => Ok(()),
            // A PDF may have junk before its header (up to 1 KB is allowed).
            None if bytes[..bytes.len().min(1024)].windows(5).any(|w| w == b"%PDF-") => Ok(()),
            Some(m) => Err(format!(
                "the file is named {named} but its content is {m}: rename it to its real type or remove it"
            )),
            None => Err(format!(
                "the file is named {named} but is not a PDF (no %PDF header): it may be corrupt or mislabelled; check where it came from"
            )),
        },
        "image" => match found {
            Some(m) if m.ends_with(" image") => Ok(()),
            // BMP, WebP and JPEG 2000 are left for Tesseract to judge.
            None if bytes.starts_with(b"BM")
                || (bytes.len() > 12 && &bytes[8..12] == b"WEBP")
                || bytes.starts_with(b"\0\0\0\x0cjP")
                || bytes.starts_with(b"\xff\x4f\xff\x51") =>
            {
                Ok(())
            }
            Some("a RIFF media file") if bytes.len() > 12 && &bytes[8..12] == b"WEBP" => Ok(()),
            Some(m) => Err(format!(
                "the file is named {named} but its content is {m}: rename it to its real type or remove it"
            )),
            None => Err(format!(
                "the file is named {named} but is not an image quarry knows (PNG, JPEG, TIFF, BMP, GIF, WebP, JPEG 2000): it may be corrupt or mislabelled; check where it came from"
            )),
        },
        "docx" => match found {
            Some(m) if m.starts_with("a ZIP") => Ok(()),
            Some(m) if m.starts_with("a legacy Office") => Err(
                "the file is password-protected (encrypted Word files are stored as OLE containers) or is a legacy .doc renamed to .docx: remove the password, or save it as .docx in Word".into(),
            ),
            Some(m) => Err(format!(
                "the file is named {named} but its content is {m}: rename it to its real type or remove it"
            )),
            None => Err(format!(
                "the file is named {named} but is not a Word document (not a ZIP container): it may be corrupt or mislabelled; re-save it from Word as .docx"
            )),
        },
        _ => match found {
            Some(m) => Err(format!(
                "the file is named {named} but its content is {m}: rename it to its real type or remove it"
            )),
            None if looks_binary(bytes) => Err(format!(
                "the file is named {named} but holds binary data, not text: it may be corrupt or mislabelled; check where it came from"
            )),
            None => Ok(()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renamed_png_is_caught() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let e = check(png, "txt", "txt").unwrap_err();
        assert!(e.contains("PNG image"), "{e}");
    }

    #[test]
    fn utf16_text_is_not_binary() {
        let t: Vec<u8> = "Hello world, this is text"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert!(!looks_binary(&t));
        assert!(looks_binary(&[0, 1, 2, 3, 200, 0, 0, 7, 8, 9, 0, 4]));
    }
}
