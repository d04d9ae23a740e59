//! CSV (and tab-separated) exports: Scopus, Web of Science, and any table
//! with a header row naming title, authors, year, DOI and so on. Each row is
//! one record whose tags are the header's column names.

use super::{Raw, RawError, TagValue};

/// Reads a CSV export. The delimiter is the one of `,`, `;` and tab that
/// the header row holds most of.
pub fn parse(text: &str) -> (Vec<Raw<'static>>, Vec<RawError>) {
    let header = text.lines().next().unwrap_or_default();
    let delimiter = [b',', b'\t', b';']
        .into_iter()
        .max_by_key(|d| header.bytes().filter(|b| b == d).count())
        .unwrap_or(b',');
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(false)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let names: Vec<String> = match reader.headers() {
        Ok(h) => h.iter().map(|s| s.trim().to_string()).collect(),
        Err(e) => {
            errors.push(RawError {
                line: 1,
                message: format!("line 1: the header row cannot be read: {e}"),
            });
            return (out, errors);
        }
    };
    for row in reader.records() {
        match row {
            Ok(r) => {
                let line = r.position().map_or(0, |p| p.line() as usize);
                let mut rec = Raw {
                    line,
                    tags: Vec::with_capacity(names.len()),
                };
                for (name, value) in names.iter().zip(r.iter()) {
                    let value = value.trim();
                    if !value.is_empty() {
                        rec.tags
                            .push(TagValue::new(name.clone(), value.to_string()));
                    }
                }
                out.push(rec);
            }
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
                errors.push(RawError {
                    line,
                    message: format!("line {line}: {e}; the row was left out"),
                });
            }
        }
    }
    (out, errors)
}
