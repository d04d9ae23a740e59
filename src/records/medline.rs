//! PubMed / MEDLINE exports (`.nbib`, or `.txt` saved as "PubMed" format):
//! tags of up to four letters padded to four, `- `, the value; continuation
//! lines indented by six spaces; each record starts with `PMID- ` and ends
//! at a blank line (or the next `PMID- `).

use super::{Raw, RawError, TagValue};

/// A MEDLINE tag at the start of a line: up to four upper-case letters or
/// digits, padded with spaces to four, then `- `.
fn medline_tag(line: &str) -> Option<(&str, &str)> {
    let head = line.get(..5)?;
    if !head.ends_with('-') {
        return None;
    }
    let tag = head[..4].trim_end();
    if tag.is_empty()
        || !tag
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        || !head[..4][tag.len()..].bytes().all(|c| c == b' ')
    {
        return None;
    }
    let value = &line[5..];
    if !(value.is_empty() || value.starts_with(' ')) {
        return None;
    }
    Some((tag, value.trim()))
}

/// Whether a text reads as a MEDLINE export.
pub fn is_medline(text: &str) -> bool {
    text.lines()
        .map(|l| l.trim_start_matches('\u{feff}'))
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.starts_with("PMID-"))
}

/// Reads MEDLINE text into records.
pub fn parse(text: &str) -> (Vec<Raw<'_>>, Vec<RawError>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut current: Option<Raw> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            if let Some(r) = current.take() {
                out.push(r);
            }
            continue;
        }
        match (medline_tag(line), &mut current) {
            (Some(("PMID", v)), cur) => {
                if let Some(r) = cur.take() {
                    out.push(r);
                }
                current = Some(Raw::new(n, "PMID", v.into()));
            }
            (Some((tag, v)), Some(rec)) => rec.tags.push(TagValue::new(tag, v)),
            (None, Some(rec)) if line.starts_with(' ') => {
                if let Some(last) = rec.tags.last_mut() {
                    last.lines.push(line.trim().into());
                }
            }
            (None, Some(_)) => errors.push(RawError {
                line: n,
                message: format!(
                    "line {n}: neither a MEDLINE tag ('XXXX- ') nor an indented continuation; the line was left out"
                ),
            }),
            (_, None) => errors.push(RawError {
                line: n,
                message: format!(
                    "line {n}: a field outside a record (a MEDLINE record starts with 'PMID- '); the line was left out"
                ),
            }),
        }
    }
    if let Some(r) = current {
        out.push(r);
    }
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_tags_and_continuations() {
        let text = "PMID- 111\nTI  - A long\n      title\nAU  - Smith J\nLID - 10.1/x [doi]\n\nPMID- 222\nTI  - Two\n";
        let (recs, errs) = parse(text);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(recs.len(), 2);
        assert_eq!(*recs[0].tags[1].lines, ["A long", "title"]);
        assert_eq!(recs[1].line, 7);
        assert_eq!(
            medline_tag("FAU - Smith, John"),
            Some(("FAU", "Smith, John"))
        );
        assert_eq!(medline_tag("TI  - x"), Some(("TI", "x")));
        assert_eq!(medline_tag("TY  -x"), None);
    }
}
