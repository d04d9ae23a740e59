//! BibTeX and BibLaTeX exports: `@type{key, field = {value} | "value" |
//! number | macro, ...}`. Braces nest; `#` joins parts; `@string` macros
//! are expanded; `@comment` and `@preamble` are skipped; common LaTeX accents
//! (`{\"o}`, `\'e`, `\c{c}`) become the letters they spell.

use std::collections::HashMap;

use super::{Raw, RawError, TagValue};

/// The letter a LaTeX accent command makes of a base letter.
fn accent(cmd: char, base: char) -> Option<char> {
    let table: &[(char, &str, &str)] = &[
        ('"', "aeiouyAEIOU", "äëïöüÿÄËÏÖÜ"),
        ('\'', "aeiouyAEIOUYcnCN", "áéíóúýÁÉÍÓÚÝćńĆŃ"),
        ('`', "aeiouAEIOU", "àèìòùÀÈÌÒÙ"),
        ('^', "aeiouAEIOU", "âêîôûÂÊÎÔÛ"),
        ('~', "anoANO", "ãñõÃÑÕ"),
        ('c', "cCsS", "çÇşŞ"),
        ('v', "csznrCSZNR", "čšžňřČŠŽŇŘ"),
    ];
    let (_, from, to) = table.iter().find(|(c, _, _)| *c == cmd)?;
    let i = from.chars().position(|c| c == base)?;
    to.chars().nth(i)
}

/// Plain text of a LaTeX value: accents made letters, `\&`-style escapes
/// unescaped, grouping braces dropped, whitespace collapsed.
pub fn delatex(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let cmd = chars[i + 1];
            if "\"'`^~cv".contains(cmd) {
                // \"o, \"{o}, \c{c}, \c c
                let mut j = i + 2;
                while j < chars.len() && (chars[j] == ' ' && cmd.is_alphabetic() || chars[j] == '{')
                {
                    j += 1;
                }
                if let Some(&base) = chars.get(j) {
                    if let Some(a) = accent(cmd, base) {
                        out.push(a);
                        i = j + 1;
                        while i < chars.len() && chars[i] == '}' && out_opens(&chars[..i]) {
                            i += 1;
                        }
                        continue;
                    }
                }
            }
            if "&%$#_{}".contains(cmd) {
                out.push(cmd);
                i += 2;
                continue;
            }
            // Another command: keep its argument's text.
            let mut j = i + 1;
            while j < chars.len() && chars[j].is_ascii_alphabetic() {
                j += 1;
            }
            let name: String = chars[i + 1..j].iter().collect();
            match name.as_str() {
                "ss" => out.push('ß'),
                "o" => out.push('ø'),
                "O" => out.push('Ø'),
                "ae" => out.push('æ'),
                "l" => out.push('ł'),
                _ => {}
            }
            i = j.max(i + 2);
            continue;
        }
        if c != '{' && c != '}' {
            out.push(if c.is_whitespace() { ' ' } else { c });
        }
        i += 1;
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether the text before has more `{` than `}` (a group still open).
fn out_opens(before: &[char]) -> bool {
    let open = before.iter().filter(|&&c| c == '{').count();
    let close = before.iter().filter(|&&c| c == '}').count();
    open > close
}

struct Cursor<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    /// The line number at `seen` (the cursor only moves forward).
    seen: usize,
    lines: usize,
}

impl Cursor<'_> {
    fn line(&mut self) -> usize {
        let to = self.i.min(self.s.len());
        if to > self.seen {
            self.lines += self.s[self.seen..to]
                .iter()
                .filter(|&&c| c == b'\n')
                .count();
            self.seen = to;
        }
        1 + self.lines
    }
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn ident(&mut self) -> String {
        let start = self.i;
        while self.i < self.s.len()
            && !self.s[self.i].is_ascii_whitespace()
            && !b"{}(),=#\"@".contains(&self.s[self.i])
        {
            self.i += 1;
        }
        self.text[start..self.i].to_string()
    }
    /// A braced or quoted value, without its delimiters.
    fn delimited(&mut self) -> Result<String, String> {
        let open = self.s[self.i];
        let start = self.i + 1;
        let mut depth = 0usize;
        let mut j = start;
        while j < self.s.len() {
            let closes = match self.s[j] {
                b'\\' => {
                    j += 2;
                    continue;
                }
                b'{' => {
                    depth += 1;
                    false
                }
                b'}' if depth > 0 => {
                    depth -= 1;
                    false
                }
                b'}' => open == b'{',
                b'"' => open == b'"' && depth == 0,
                _ => false,
            };
            if closes {
                self.i = j + 1;
                return Ok(self.text[start..j].to_string());
            }
            j += 1;
        }
        Err("a value's braces or quotes are not closed".into())
    }
}

/// Reads BibTeX text into records (tags are the lower-case field names, with
/// the entry type as `@type` and the key as `@key`).
pub fn parse(text: &str) -> (Vec<Raw<'static>>, Vec<RawError>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut macros: HashMap<String, String> = HashMap::new();
    for (m, v) in [
        ("jan", "January"),
        ("feb", "February"),
        ("mar", "March"),
        ("apr", "April"),
        ("may", "May"),
        ("jun", "June"),
        ("jul", "July"),
        ("aug", "August"),
        ("sep", "September"),
        ("oct", "October"),
        ("nov", "November"),
        ("dec", "December"),
    ] {
        macros.insert(m.into(), v.into());
    }
    let mut c = Cursor {
        s: text.as_bytes(),
        text,
        i: 0,
        seen: 0,
        lines: 0,
    };
    while let Some(off) = text[c.i..].find('@') {
        c.i += off + 1;
        let line = c.line();
        let kind = c.ident().to_lowercase();
        c.skip_ws();
        let Some(open) = c.peek().filter(|b| *b == b'{' || *b == b'(') else {
            continue;
        };
        let close = if open == b'{' { b'}' } else { b')' };
        if kind == "comment" || kind == "preamble" {
            let _ = c.delimited();
            continue;
        }
        c.i += 1;
        let mut rec = Raw::new(line, "@type", kind.clone().into());
        if kind != "string" {
            c.skip_ws();
            let key = c.ident();
            rec.tags.push(TagValue::new("@key", key));
            c.skip_ws();
            if c.peek() == Some(b',') {
                c.i += 1;
            }
        }
        let mut failed = None;
        loop {
            c.skip_ws();
            match c.peek() {
                None => {
                    failed = Some(format!("line {line}: the file ends inside the @{kind} entry starting here: the export may be cut off; its fields were kept"));
                    break;
                }
                Some(b) if b == close => {
                    c.i += 1;
                    break;
                }
                Some(b',') => {
                    c.i += 1;
                    continue;
                }
                Some(b'@') => {
                    failed = Some(format!("line {line}: the @{kind} entry starting here is not closed before the next entry at line {}; its fields were kept", c.line()));
                    break;
                }
                _ => {}
            }
            let field_line = c.line();
            let name = c.ident().to_lowercase();
            c.skip_ws();
            if name.is_empty() || c.peek() != Some(b'=') {
                failed = Some(format!("line {field_line}: expected 'field = value' in the @{kind} entry starting at line {line}; the rest of the entry was left out"));
                // Resynchronise at the next entry.
                break;
            }
            c.i += 1;
            let mut value = String::new();
            loop {
                c.skip_ws();
                match c.peek() {
                    Some(b'{') | Some(b'"') => match c.delimited() {
                        Ok(v) => value.push_str(&v),
                        Err(e) => {
                            failed = Some(format!("line {field_line}: field '{name}' of the @{kind} entry starting at line {line}: {e}"));
                            c.i = c.s.len();
                            break;
                        }
                    },
                    Some(_) => {
                        let word = c.ident();
                        if word.is_empty() {
                            break;
                        }
                        value.push_str(
                            macros
                                .get(&word.to_lowercase())
                                .map_or(word.as_str(), |v| v.as_str()),
                        );
                    }
                    None => break,
                }
                c.skip_ws();
                if c.peek() == Some(b'#') {
                    c.i += 1;
                    continue;
                }
                break;
            }
            if failed.is_some() {
                break;
            }
            if kind == "string" {
                macros.insert(name, value);
            } else {
                rec.tags.push(TagValue::new(name, value));
            }
        }
        if let Some(message) = &failed {
            errors.push(RawError {
                line,
                message: message.clone(),
            });
        }
        // An entry broken before any field was read leaves only its failed row.
        if kind != "string" && (failed.is_none() || rec.tags.len() > 2) {
            out.push(rec);
        }
    }
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_fields_and_macros() {
        let text = r#"
@string{jep = "Journal of Educational Psychology"}
@comment{ignored {nested}}
@Article{smith2019,
  author = {Smith, J. and Okafor, A.},
  title = {Cognitive {Load} and Retention},
  journal = jep,
  year = 2019,
  month = mar,
  doi = "10.1037/EDU0000123",
  note = "part " # {two},
}
@book{b, title={M{\"u}ller's {\c{C}}a\'e}, year={2001}}
"#;
        let (recs, errs) = parse(text);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(recs.len(), 2);
        let get = |r: &Raw, t: &str| {
            r.tags
                .iter()
                .find(|x| x.tag == t)
                .map(|x| x.lines[0].to_string())
        };
        assert_eq!(get(&recs[0], "@type").as_deref(), Some("article"));
        assert_eq!(get(&recs[0], "@key").as_deref(), Some("smith2019"));
        assert_eq!(
            get(&recs[0], "journal").as_deref(),
            Some("Journal of Educational Psychology")
        );
        assert_eq!(get(&recs[0], "year").as_deref(), Some("2019"));
        assert_eq!(get(&recs[0], "month").as_deref(), Some("March"));
        assert_eq!(get(&recs[0], "note").as_deref(), Some("part two"));
        assert_eq!(
            delatex(&get(&recs[0], "title").unwrap()),
            "Cognitive Load and Retention"
        );
        assert_eq!(delatex(&get(&recs[1], "title").unwrap()), "Müller's Çaé");
        assert_eq!(recs[1].line, 13);
    }

    #[test]
    fn a_broken_entry_keeps_what_was_read() {
        let (recs, errs) = parse("@article{a, title={One}, year={2019\n@article{b, title={Two}}\n");
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].message.contains("line 1"), "{}", errs[0].message);
        assert!(!recs.is_empty());
    }
}
