//! RIS exports (EndNote, Zotero, Mendeley, Scopus, Ovid, ...) and the Web
//! of Science "plain text" export, read as tagged records the way the
//! Python `rispy` 0.10 parser reads them: lines before a record's first tag
//! (`1.`, `Record #1 of 2`, blank lines) are skipped, a line without a tag
//! continues the tag before it, `ER` closes the record. Unlike rispy, a tag
//! separated by one space (`TY - JOUR`) is still a tag, and a record left
//! open at the end of the file is reported instead of dropped.

use super::{Raw, RawError, TagValue};

/// Whether `line` starts with an RIS tag: two characters, upper-case letter
/// then letter or digit, then `  - ` (or one space, or nothing after the dash).
/// Returns the tag and the value.
#[inline]
fn ris_tag(line: &str) -> Option<(&str, &str)> {
    let b = line.as_bytes();
    if b.len() < 4
        || !b[0].is_ascii_uppercase()
        || !(b[1].is_ascii_uppercase() || b[1].is_ascii_digit())
        || b[2] != b' '
    {
        return None;
    }
    // One space or two before the dash.
    let dash = match (b[3], b.get(4)) {
        (b'-', _) => 3,
        (b' ', Some(b'-')) => 4,
        _ => return None,
    };
    let value = &line[dash + 1..];
    if !(value.is_empty() || value.starts_with(' ')) {
        return None;
    }
    Some((&line[..2], trim(value)))
}

/// `s.trim()`, without its cost when `s` is one space and a text that
/// starts and ends with visible ASCII (nearly every value).
#[inline]
fn trim(s: &str) -> &str {
    let t = s.strip_prefix(' ').unwrap_or(s);
    match (t.as_bytes().first(), t.as_bytes().last()) {
        (Some(&f), Some(&l)) if f > b' ' && f < 0x80 && l > b' ' && l < 0x80 => t,
        _ => t.trim(),
    }
}

/// The lines of `text` as `str::lines` gives them (split at `\n`, a `\r`
/// before it dropped), each with every trailing `\r` dropped, found with
/// `memchr`.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= text.len() {
            return None;
        }
        let rest = &text[pos..];
        let (line, next) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], pos + i + 1),
            None => (rest, text.len()),
        };
        pos = next;
        Some(line.trim_end_matches('\r'))
    })
}

/// Reads RIS text into records.
pub fn parse(text: &str) -> (Vec<Raw<'_>>, Vec<RawError>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut current: Option<Raw> = None;
    for (i, line) in lines(text).enumerate() {
        let n = i + 1;
        match &mut current {
            None => {
                // Only a type tag opens a record.
                if let Some(("TY", v)) = ris_tag(line) {
                    current = Some(Raw::new(n, "TY", v.into()));
                } else if let Some((tag, _)) = ris_tag(line) {
                    if tag != "ER" {
                        errors.push(RawError {
                            line: n,
                            message: format!(
                                "line {n}: tag {tag} outside a record (a record starts with 'TY  - '); the line was left out"
                            ),
                        });
                    }
                }
            }
            Some(rec) => match ris_tag(line) {
                Some(("ER", _)) => out.push(current.take().expect("open record")),
                Some(("TY", v)) => {
                    // A record that never closed: keep what it had.
                    let open = current.take().expect("open record");
                    errors.push(RawError {
                        line: open.line,
                        message: format!(
                            "line {}: the record starting here has no 'ER  - ' line before the next record at line {n}; its tags were kept",
                            open.line
                        ),
                    });
                    out.push(open);
                    current = Some(Raw::new(n, "TY", v.into()));
                }
                Some((tag, v)) => rec.tags.push(TagValue::new(tag, v)),
                None => {
                    // A blank continuation line carries nothing.
                    let v = line.trim();
                    if let (false, Some(last)) = (v.is_empty(), rec.tags.last_mut()) {
                        last.lines.push(v.into());
                    }
                }
            },
        }
    }
    if let Some(open) = current {
        errors.push(RawError {
            line: open.line,
            message: format!(
                "line {}: the file ends inside the record starting here (no 'ER  - ' line): the export may be cut off; its tags were kept",
                open.line
            ),
        });
        out.push(open);
    }
    (out, errors)
}

/// Whether a text reads as a Web of Science plain-text export.
pub fn is_wos(text: &str) -> bool {
    let first = text.lines().map(str::trim_end).find(|l| !l.is_empty());
    first.is_some_and(|l| l.starts_with("FN ") || l.starts_with("PT "))
        && text.lines().any(|l| l.starts_with("PT "))
}

/// The file's name a Web of Science export gives on its `FN` line
/// (`Clarivate Analytics Web of Science`).
pub fn wos_file_name(text: &str) -> Option<String> {
    text.lines()
        .take_while(|l| !l.starts_with("PT "))
        .find_map(|l| l.trim_end().strip_prefix("FN "))
        .map(|v| v.trim().to_string())
}

/// Reads a Web of Science export: two-character tags, a space, the value;
/// continuation lines start with three spaces; `PT` opens a record, `ER`
/// closes it, `FN`, `VR` and `EF` are the file's.
pub fn parse_wos(text: &str) -> (Vec<Raw<'_>>, Vec<RawError>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut current: Option<Raw> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let continuation = line.starts_with("  ");
        let (tag, value) = if continuation {
            ("", line.trim())
        } else {
            let tag = line.get(..2).unwrap_or(line);
            (tag, line.get(3..).unwrap_or("").trim())
        };
        match (tag, &mut current) {
            ("FN" | "VR" | "EF", _) => {}
            ("PT", cur) => {
                if let Some(open) = cur.take() {
                    errors.push(RawError {
                        line: open.line,
                        message: format!("line {}: the record starting here has no ER line before the next PT at line {n}; its fields were kept", open.line),
                    });
                    out.push(open);
                }
                current = Some(Raw::new(n, "PT", value.into()));
            }
            ("ER", cur) => {
                if let Some(r) = cur.take() {
                    out.push(r);
                }
            }
            ("", Some(rec)) => {
                if let Some(last) = rec.tags.last_mut() {
                    last.lines.push(value.into());
                }
            }
            (tag, Some(rec)) => rec.tags.push(TagValue::new(tag, value)),
            (_, None) => errors.push(RawError {
                line: n,
                message: format!("line {n}: a field outside a record (a record starts with 'PT '); the line was left out"),
            }),
        }
    }
    if let Some(open) = current {
        errors.push(RawError {
            line: open.line,
            message: format!("line {}: the file ends inside the record starting here (no ER line): the export may be cut off; its fields were kept", open.line),
        });
        out.push(open);
    }
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_with_one_or_two_spaces() {
        assert_eq!(ris_tag("TY  - JOUR"), Some(("TY", "JOUR")));
        assert_eq!(ris_tag("TY - JOUR"), Some(("TY", "JOUR")));
        assert_eq!(ris_tag("ER  -"), Some(("ER", "")));
        assert_eq!(ris_tag("ER  - "), Some(("ER", "")));
        assert_eq!(ris_tag("A1  - Marx, Karl"), Some(("A1", "Marx, Karl")));
        assert_eq!(ris_tag("ER then second line"), None);
        assert_eq!(ris_tag("1."), None);
        assert_eq!(ris_tag("Ab  - x"), None);
        assert_eq!(ris_tag("AB  -x"), None);
    }

    #[test]
    fn lines_are_split_as_str_lines_splits_them() {
        for t in [
            "",
            "\n",
            "a",
            "a\n",
            "a\r\nb",
            "a\r\r\nb\r",
            "\n\nTY  - JOUR\r\n\r\nER  - \n",
        ] {
            let want: Vec<&str> = t.lines().map(|l| l.trim_end_matches('\r')).collect();
            assert_eq!(lines(t).collect::<Vec<_>>(), want, "{t:?}");
        }
        assert_eq!(
            ris_tag("TI  -  padded value \t"),
            Some(("TI", "padded value"))
        );
        assert_eq!(ris_tag("TI  - é"), Some(("TI", "é")));
    }

    #[test]
    fn an_unclosed_record_is_kept_and_reported() {
        let (recs, errs) = parse("TY  - JOUR\nTI  - One\nER  - \nTY  - JOUR\nTI  - Two\n");
        assert_eq!(recs.len(), 2);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].line, 4);
        assert!(errs[0].message.contains("cut off"), "{}", errs[0].message);
    }
}
