//! Folding text for quote comparison: case, whitespace runs, quote marks and
//! dashes are folded away, since a faithful quotation can differ in them. The
//! folded text keeps, for every char, the char offset it came from, so a
//! match in folded text maps back to the original.

/// A folded text with the original char offset of every folded char.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folded {
    /// The folded chars.
    pub chars: Vec<char>,
    /// For each folded char, the char offset in the original text.
    pub origin: Vec<usize>,
    /// The original text's length in chars.
    pub len: usize,
}

fn fold_char(c: char) -> Option<char> {
    Some(match c {
        '"' | '\'' | '`' | '´' | '‘' | '’' | '‚' | '‛' | '“' | '”' | '„' | '‟' | '′' | '″'
        | '«' | '»' | '‹' | '›' | '＂' | '＇' => '"',
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' | '\u{00AD}' => '-',
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => return None,
        c => c,
    })
}

impl Folded {
    /// Folds `text`: lower case, every whitespace run one space, leading and
    /// trailing whitespace dropped, quote marks one `"`, dashes one `-`.
    pub fn new(text: &str) -> Self {
        let mut chars = Vec::with_capacity(text.len());
        let mut origin = Vec::with_capacity(text.len());
        let mut pending_space: Option<usize> = None;
        let mut len = 0;
        for (i, c) in text.chars().enumerate() {
            len = i + 1;
            if c.is_whitespace() {
                if !chars.is_empty() && pending_space.is_none() {
                    pending_space = Some(i);
                }
                continue;
            }
            let Some(f) = fold_char(c) else { continue };
            if let Some(sp) = pending_space.take() {
                chars.push(' ');
                origin.push(sp);
            }
            for l in f.to_lowercase() {
                chars.push(l);
                origin.push(i);
            }
        }
        Self { chars, origin, len }
    }

    /// The original char span `[start, end)` covered by folded chars
    /// `[a, b)` (`b > a`).
    pub fn span(&self, a: usize, b: usize) -> (usize, usize) {
        let start = self.origin[a];
        let end = self.origin[b - 1] + 1;
        (start, end)
    }

    /// The first occurrence of `needle` in the folded chars.
    pub fn find(&self, needle: &[char]) -> Option<usize> {
        if needle.is_empty() || needle.len() > self.chars.len() {
            return None;
        }
        let first = needle[0];
        (0..=self.chars.len() - needle.len())
            .find(|&i| self.chars[i] == first && self.chars[i..i + needle.len()] == *needle)
    }

    /// The folded text as a string.
    pub fn as_string(&self) -> String {
        self.chars.iter().collect()
    }
}

/// Words of a folded text: maximal runs of letters and digits, as
/// (start, end) indices into the folded chars.
pub fn words(f: &Folded) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in f.chars.iter().enumerate() {
        if c.is_alphanumeric() || is_mark(*c) {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            out.push((s, i));
        }
    }
    if let Some(s) = start {
        out.push((s, f.chars.len()));
    }
    out
}

/// Combining marks stay inside the word they modify.
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F | 0x0610..=0x061A | 0x064B..=0x065F | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E | 0x0900..=0x0903 | 0x093A..=0x094F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_case_space_quotes_and_dashes() {
        let f = Folded::new("  The “dose”  was\n240–250 mg. ");
        assert_eq!(f.as_string(), "the \"dose\" was 240-250 mg.");
        // Offsets map back to original chars.
        let i = f.find(&"240".chars().collect::<Vec<_>>()).unwrap();
        assert_eq!(f.span(i, i + 3), (18, 21));
    }

    #[test]
    fn unicode_offsets_are_chars() {
        let t = "患者は 240 人 😀 Ελληνικά";
        let f = Folded::new(t);
        let needle: Vec<char> = "ελληνικά".chars().collect();
        let i = f.find(&needle).unwrap();
        let (s, e) = f.span(i, i + needle.len());
        assert_eq!(
            t.chars().skip(s).take(e - s).collect::<String>(),
            "Ελληνικά"
        );
    }
}
