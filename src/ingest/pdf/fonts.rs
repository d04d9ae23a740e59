//! PDF fonts: from a font dictionary to "which characters and how wide" for
//! every code in a shown string. Simple fonts (Type1, TrueType, Type3) map one
//! byte to a glyph through their encoding (Standard, WinAnsi, MacRoman,
//! Symbol, `/Differences` with Adobe Glyph List names); Type0 (CID) fonts read
//! codes of the length their CMap says (two bytes for Identity-H/V). A
//! `ToUnicode` CMap, parsed by lopdf, wins over both where it maps a code.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use lopdf::{Dictionary, Document, Encoding, Object};

/// A ToUnicode CMap as lopdf parsed it (always the `UnicodeMapEncoding`
/// variant; lopdf does not export the map type by name).
struct ToUnicodeCMap(Encoding<'static>);

impl ToUnicodeCMap {
    fn get(&self, code: u32, len: u8) -> Option<Vec<u16>> {
        match &self.0 {
            Encoding::UnicodeMapEncoding(m) => m.get(code, len),
            _ => None,
        }
    }
}

/// Resolves a possibly indirect object.
pub fn deref<'a>(doc: &'a Document, o: &'a Object) -> &'a Object {
    match o {
        Object::Reference(id) => doc.get_object(*id).unwrap_or(o),
        _ => o,
    }
}

/// A dictionary entry, dereferenced.
pub fn get<'a>(doc: &'a Document, d: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
    d.get(key).ok().map(|o| deref(doc, o))
}

/// A number entry.
pub fn num(doc: &Document, d: &Dictionary, key: &[u8]) -> Option<f32> {
    get(doc, d, key).and_then(|o| o.as_float().ok())
}

/// A name entry.
pub fn name<'a>(doc: &'a Document, d: &'a Dictionary, key: &[u8]) -> Option<&'a [u8]> {
    get(doc, d, key).and_then(|o| o.as_name().ok())
}

/// A dictionary entry that is a dictionary (or a stream's dictionary).
pub fn dict<'a>(doc: &'a Document, d: &'a Dictionary, key: &[u8]) -> Option<&'a Dictionary> {
    match get(doc, d, key)? {
        Object::Dictionary(x) => Some(x),
        Object::Stream(s) => Some(&s.dict),
        _ => None,
    }
}

/// One decoded code of a shown string.
#[derive(Debug, Clone)]
pub struct Code {
    /// The text it stands for (empty when the font does not say).
    pub text: String,
    /// Advance width in text space units per unit of font size.
    pub width: f32,
    /// Whether the code is the single byte 32 (word spacing applies).
    pub is_space_byte: bool,
    /// Whether the font gave no Unicode for this code.
    pub unmapped: bool,
}

/// What quarry knows about one font.
pub struct Font {
    /// Codes are read by the CMap's lengths (Type0) rather than one byte each.
    cid: bool,
    /// The `ToUnicode` map, when the font has one.
    to_unicode: Option<ToUnicodeCMap>,
    /// CID fonts whose CMap is UCS-2 / UTF-16: the codes are Unicode.
    utf16_direct: bool,
    /// Simple fonts: the encoding's character for every byte.
    simple: Option<Box<Table>>,
    /// Widths by code, in glyph space thousandths (or Type3 glyph units).
    widths: HashMap<u32, f32>,
    /// Width of a code with no entry.
    default_width: f32,
    /// Glyph-space to text-space scale (0.001, or a Type3 FontMatrix's a).
    scale: f32,
    /// The font's name suggests or its descriptor says it is bold.
    pub bold: bool,
    /// Whether the font can give Unicode at all.
    pub has_unicode: bool,
    /// Standard-14 metrics used when the font has no widths.
    builtin: Option<Builtin>,
}

#[derive(Clone, Copy)]
enum Builtin {
    Helvetica,
    Times,
    Courier,
}

impl Font {
    /// Reads a font dictionary. Never fails: what cannot be read falls back
    /// to the standard encoding and average widths.
    pub fn load(doc: &Document, fd: &Dictionary) -> Font {
        let subtype = name(doc, fd, b"Subtype").unwrap_or(b"Type1").to_vec();
        let base = name(doc, fd, b"BaseFont")
            .map(|b| String::from_utf8_lossy(b).to_string())
            .unwrap_or_default();
        let cid = subtype == b"Type0";
        let to_unicode = get(doc, fd, b"ToUnicode")
            .and_then(|o| o.as_stream().ok())
            .and_then(parse_cmap);
        let mut descriptor = dict(doc, fd, b"FontDescriptor");
        let mut widths = HashMap::new();
        let mut default_width = 0.0;
        let mut scale = 0.001;
        let mut cid_unicode = false;
        if cid {
            let enc = name(doc, fd, b"Encoding").unwrap_or(b"");
            // UCS-2 / UTF-16 CMaps carry Unicode directly.
            cid_unicode = enc.starts_with(b"Uni")
                && (enc.windows(3).any(|w| w == b"UCS") || enc.windows(3).any(|w| w == b"UTF"));
            if let Some(Object::Array(desc)) = get(doc, fd, b"DescendantFonts") {
                if let Some(Object::Dictionary(df)) = desc.first().map(|o| deref(doc, o)) {
                    descriptor = dict(doc, df, b"FontDescriptor").or(descriptor);
                    default_width = num(doc, df, b"DW").unwrap_or(1000.0);
                    if let Some(Object::Array(w)) = get(doc, df, b"W") {
                        read_cid_widths(doc, w, &mut widths);
                    }
                }
            }
        } else {
            if subtype == b"Type3" {
                if let Some(Object::Array(m)) = get(doc, fd, b"FontMatrix") {
                    scale = m
                        .first()
                        .and_then(|o| deref(doc, o).as_float().ok())
                        .unwrap_or(0.001);
                }
            }
            let first = num(doc, fd, b"FirstChar").unwrap_or(0.0) as u32;
            if let Some(Object::Array(w)) = get(doc, fd, b"Widths") {
                for (i, o) in w.iter().enumerate() {
                    if let Ok(v) = deref(doc, o).as_float() {
                        widths.insert(first + i as u32, v);
                    }
                }
            }
            default_width = descriptor
                .and_then(|d| num(doc, d, b"MissingWidth"))
                .unwrap_or(0.0);
        }
        let flags = descriptor
            .and_then(|d| num(doc, d, b"Flags"))
            .unwrap_or(0.0) as u32;
        let weight = descriptor
            .and_then(|d| num(doc, d, b"FontWeight"))
            .unwrap_or(400.0);
        let lname = base.to_ascii_lowercase();
        let bold = weight >= 600.0
            || flags & (1 << 18) != 0
            || [
                "bold", "black", "heavy", "semibold", "demi", ".b", "-bd", ",bd",
            ]
            .iter()
            .any(|k| lname.contains(k));
        let symbolic = flags & 4 != 0 && flags & 32 == 0;
        let simple = (!cid).then(|| {
            Box::new(simple_encoding(
                doc, fd, &subtype, &lname, symbolic, descriptor,
            ))
        });
        let builtin = if widths.is_empty() && !cid {
            Some(if lname.contains("courier") || lname.contains("mono") {
                Builtin::Courier
            } else if lname.contains("times") || lname.contains("serif") && !lname.contains("sans")
            {
                Builtin::Times
            } else {
                Builtin::Helvetica
            })
        } else {
            None
        };
        let has_unicode = to_unicode.is_some()
            || cid_unicode
            || simple
                .as_ref()
                .is_some_and(|s| s.iter().any(|c| c.is_some()));
        Font {
            cid,
            utf16_direct: cid && cid_unicode && to_unicode.is_none(),
            to_unicode,
            simple,
            widths,
            default_width,
            scale,
            bold,
            has_unicode,
            builtin,
        }
    }

    /// Decodes a shown string into codes.
    pub fn decode(&self, bytes: &[u8], out: &mut Vec<Code>) {
        if self.cid {
            let utf16_direct = self.utf16_direct;
            let mut i = 0;
            while i < bytes.len() {
                let (code, len) = if i + 1 < bytes.len() {
                    ((bytes[i] as u32) << 8 | bytes[i + 1] as u32, 2)
                } else {
                    (bytes[i] as u32, 1)
                };
                i += len;
                let mut text = String::new();
                let mut unmapped = false;
                if utf16_direct {
                    text.extend(char::decode_utf16([code as u16]).flatten());
                } else {
                    match self
                        .to_unicode
                        .as_ref()
                        .and_then(|m| m.get(code, len as u8))
                    {
                        Some(u) => {
                            text.extend(char::decode_utf16(u).map(|r| r.unwrap_or('\u{FFFD}')))
                        }
                        None => unmapped = true,
                    }
                }
                let w = self
                    .widths
                    .get(&code)
                    .copied()
                    .unwrap_or(self.default_width);
                out.push(Code {
                    text,
                    width: w * self.scale,
                    is_space_byte: false,
                    unmapped,
                });
            }
            return;
        }
        for &b in bytes {
            let code = b as u32;
            let mut text = String::new();
            let mut unmapped = false;
            match self.to_unicode.as_ref().and_then(|m| m.get(code, 1)) {
                Some(u) if !u.is_empty() => {
                    text.extend(char::decode_utf16(u).map(|r| r.unwrap_or('\u{FFFD}')))
                }
                _ => match self.simple.as_ref().and_then(|s| s[b as usize]) {
                    Some(c) => text.push(c),
                    None => unmapped = b != 0,
                },
            }
            let w = match self.widths.get(&code) {
                Some(w) => *w * self.scale,
                None => match self.builtin {
                    Some(f) => builtin_width(f, text.chars().next().unwrap_or(' ')) * 0.001,
                    None => self.default_width * self.scale,
                },
            };
            let w = if w == 0.0 && self.widths.is_empty() {
                0.5
            } else {
                w
            };
            out.push(Code {
                text,
                width: w,
                is_space_byte: b == 32,
                unmapped,
            });
        }
    }
}

/// Parses a ToUnicode stream with lopdf's CMap parser (reached through a
/// font dictionary that has nothing else, so lopdf takes the ToUnicode path).
fn parse_cmap(s: &lopdf::Stream) -> Option<ToUnicodeCMap> {
    let mut d = Dictionary::new();
    d.set("Type", Object::Name(b"Font".to_vec()));
    let mut s2 = s.clone();
    if let Err(e) = s2.decompress_with_limit(super::interp::MAX_INFLATED) {
        if super::interp::is_over_limit(&e) {
            return None;
        }
    }
    d.set("ToUnicode", Object::Stream(s2));
    let doc = Document::new();
    match d.get_font_encoding(&doc).ok()? {
        Encoding::UnicodeMapEncoding(m) => Some(ToUnicodeCMap(Encoding::UnicodeMapEncoding(m))),
        _ => None,
    }
}

/// Decodes single bytes through the encoding lopdf builds for a synthetic
/// font dictionary with the given `/Encoding` value.
fn via_lopdf(encoding: Object, codes: impl Iterator<Item = u8>) -> Vec<Option<char>> {
    let mut d = Dictionary::new();
    d.set("Type", Object::Name(b"Font".to_vec()));
    d.set("Encoding", encoding);
    let doc = Document::new();
    let Ok(enc) = d.get_font_encoding(&doc) else {
        return codes.map(|_| None).collect();
    };
    codes
        .map(|b| {
            enc.bytes_to_string(&[b])
                .ok()
                .and_then(|s| s.chars().next())
                .filter(|c| *c != '\u{FFFD}')
        })
        .collect()
}

type Table = [Option<char>; 256];

/// A named base encoding (WinAnsi, MacRoman, MacExpert, Standard, PDFDoc) as
/// a byte table, from lopdf's tables.
fn base_table(n: &[u8]) -> Option<&'static Table> {
    static TABLES: LazyLock<HashMap<&'static [u8], Table>> = LazyLock::new(|| {
        let mut m = HashMap::new();
        for name in [
            b"WinAnsiEncoding".as_slice(),
            b"MacRomanEncoding",
            b"MacExpertEncoding",
            b"StandardEncoding",
            b"PDFDocEncoding",
        ] {
            let v = via_lopdf(Object::Name(name.to_vec()), 0..=255u8);
            let mut t = [None; 256];
            t.copy_from_slice(&v);
            m.insert(name, t);
        }
        m.insert(b"SymbolEncoding".as_slice(), symbol_table());
        m
    });
    TABLES.get(n)
}

/// The character an Adobe Glyph List name stands for (lopdf's list).
fn agl(name: &[u8]) -> Option<char> {
    static CACHE: LazyLock<Mutex<HashMap<Vec<u8>, Option<char>>>> = LazyLock::new(Default::default);
    if let Some(c) = CACHE.lock().ok().and_then(|m| m.get(name).copied()) {
        return c;
    }
    let mut enc = Dictionary::new();
    enc.set(
        "Differences",
        Object::Array(vec![Object::Integer(0), Object::Name(name.to_vec())]),
    );
    let c = via_lopdf(Object::Dictionary(enc), std::iter::once(0u8))[0];
    if let Ok(mut m) = CACHE.lock() {
        m.insert(name.to_vec(), c);
    }
    c
}

/// The Symbol font's built-in encoding (Greek letters and math signs).
fn symbol_table() -> Table {
    let mut t = [None; 256];
    for b in 0x20u8..0x40 {
        t[b as usize] = Some(b as char);
    }
    for (b, c) in [
        (0x22, '∀'),
        (0x24, '∃'),
        (0x27, '∋'),
        (0x2A, '∗'),
        (0x2D, '−'),
        (0x40, '≅'),
    ] {
        t[b] = Some(c);
    }
    let greek_upper = "ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ";
    let greek_lower = "αβχδεφγηιϕκλμνοπθρστυϖωξψζ";
    for (i, c) in greek_upper.chars().enumerate() {
        t[0x41 + i] = Some(c);
    }
    for (i, c) in greek_lower.chars().enumerate() {
        t[0x61 + i] = Some(c);
    }
    for (b, c) in [
        (0x5B, '['),
        (0x5D, ']'),
        (0x5C, '∴'),
        (0x5E, '⊥'),
        (0x5F, '_'),
        (0x7B, '{'),
        (0x7C, '|'),
        (0x7D, '}'),
        (0x7E, '∼'),
        (0xA2, '′'),
        (0xA3, '≤'),
        (0xA5, '∞'),
        (0xAB, '↔'),
        (0xAC, '←'),
        (0xAD, '↑'),
        (0xAE, '→'),
        (0xAF, '↓'),
        (0xB0, '°'),
        (0xB1, '±'),
        (0xB2, '″'),
        (0xB3, '≥'),
        (0xB4, '×'),
        (0xB5, '∝'),
        (0xB6, '∂'),
        (0xB7, '•'),
        (0xB8, '÷'),
        (0xB9, '≠'),
        (0xBA, '≡'),
        (0xBB, '≈'),
        (0xBC, '…'),
        (0xC5, '⊕'),
        (0xC6, '∅'),
        (0xC7, '∩'),
        (0xC8, '∪'),
        (0xD6, '√'),
        (0xD7, '⋅'),
        (0xD9, '∧'),
        (0xDA, '∨'),
        (0xE5, '∑'),
        (0xF2, '∫'),
    ] {
        t[b] = Some(c);
    }
    t
}

fn read_cid_widths(doc: &Document, w: &[Object], out: &mut HashMap<u32, f32>) {
    let mut i = 0;
    while i < w.len() {
        let Ok(first) = deref(doc, &w[i]).as_float() else {
            break;
        };
        let first = first as u32;
        match w.get(i + 1).map(|o| deref(doc, o)) {
            Some(Object::Array(ws)) => {
                for (k, o) in ws.iter().enumerate() {
                    if let Ok(v) = deref(doc, o).as_float() {
                        out.insert(first + k as u32, v);
                    }
                }
                i += 2;
            }
            Some(o) => {
                let last = o.as_float().unwrap_or(first as f32) as u32;
                let v = w
                    .get(i + 2)
                    .and_then(|o| deref(doc, o).as_float().ok())
                    .unwrap_or(1000.0);
                if last >= first && last - first < 65536 {
                    for c in first..=last {
                        out.insert(c, v);
                    }
                }
                i += 3;
            }
            None => break,
        }
    }
}

fn simple_encoding(
    doc: &Document,
    fd: &Dictionary,
    subtype: &[u8],
    lname: &str,
    symbolic: bool,
    descriptor: Option<&Dictionary>,
) -> Table {
    let encoding = get(doc, fd, b"Encoding");
    // The base encoding the PDF names, when it names one this reader knows.
    let named = match encoding {
        Some(Object::Name(n)) => base_table(n),
        Some(Object::Dictionary(d)) => name(doc, d, b"BaseEncoding").and_then(base_table),
        _ => None,
    };
    // Else an embedded Type 1 program's own encoding is the base (TeX's
    // math fonts: CMSY's code 6 is "plusminus"), as the PDF reference says;
    // the program is read only then.
    let program = match (named, subtype) {
        (None, b"Type1") => descriptor.and_then(|d| type1_encoding(doc, d)),
        _ => None,
    };
    let default: &Table = if let Some(t) = &program {
        t
    } else if lname.contains("symbol") {
        base_table(b"SymbolEncoding").unwrap()
    } else if subtype == b"TrueType" || symbolic {
        base_table(b"WinAnsiEncoding").unwrap()
    } else {
        base_table(b"StandardEncoding").unwrap()
    };
    let mut out = *named.unwrap_or(default);
    if let Some(Object::Dictionary(d)) = encoding {
        if let Some(Object::Array(diffs)) = get(doc, d, b"Differences") {
            let mut code = 0usize;
            for o in diffs {
                match deref(doc, o) {
                    Object::Integer(i) => code = (*i).clamp(0, 255) as usize,
                    Object::Name(n) => {
                        if code < 256 {
                            out[code] = glyph_char(n);
                        }
                        code += 1;
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// The built-in encoding of an embedded Type 1 font program (the
/// descriptor's `FontFile`): its clear-text part's `/Encoding` array of
/// `dup <code> /<glyph> put`, read into characters; `StandardEncoding`
/// when it names that; `None` when there is no program or no encoding.
fn type1_encoding(doc: &Document, descriptor: &Dictionary) -> Option<Table> {
    let stream = get(doc, descriptor, b"FontFile")?.as_stream().ok()?;
    let data = stream
        .decompressed_content_with_limit(super::interp::MAX_INFLATED)
        .ok()
        .unwrap_or_else(|| stream.content.clone());
    let clear_len = num(doc, &stream.dict, b"Length1")
        .map(|n| n as usize)
        .filter(|&n| n > 0 && n <= data.len())
        .unwrap_or(data.len());
    let clear = &data[..clear_len];
    // The clear text ends where the encrypted part begins.
    let clear = match clear.windows(5).position(|w| w == b"eexec") {
        Some(i) => &clear[..i],
        None => clear,
    };
    let at = clear.windows(9).position(|w| w == b"/Encoding")? + 9;
    let rest = &clear[at..];
    let head = String::from_utf8_lossy(&rest[..rest.len().min(40)]);
    if head.trim_start().starts_with("StandardEncoding") {
        return base_table(b"StandardEncoding").copied();
    }
    // The array's entries, up to the `def` that ends it (a word of its
    // own: "/.notdef" is a glyph).
    let text = String::from_utf8_lossy(rest);
    let mut table = [None; 256];
    let toks: Vec<&str> = text
        .split_ascii_whitespace()
        .take_while(|t| *t != "def")
        .collect();
    let mut found = false;
    for w in toks.windows(4) {
        if let ["dup", code, glyph, "put"] = w {
            if let (Ok(code), Some(glyph)) = (code.parse::<usize>(), glyph.strip_prefix('/')) {
                if code < 256 {
                    table[code] = glyph_char(glyph.as_bytes());
                    found = true;
                }
            }
        }
    }
    found.then_some(table)
}

/// The character an Adobe glyph name stands for: the Adobe Glyph List,
/// `uniXXXX`, `uXXXX[XX]`, and names with a suffix (`one.oldstyle`) or a
/// ligature of parts (`f_i`, which becomes the ligature character when
/// there is one).
pub fn glyph_char(n: &[u8]) -> Option<char> {
    if let Some(c) = agl(n) {
        return Some(c);
    }
    let s = std::str::from_utf8(n).ok()?;
    let hex = |h: &str| u32::from_str_radix(h, 16).ok().and_then(char::from_u32);
    if let Some(h) = s.strip_prefix("uni") {
        if h.len() >= 4 {
            return hex(&h[..4]);
        }
    }
    if let Some(h) = s.strip_prefix('u') {
        if (4..=6).contains(&h.len()) {
            return hex(h);
        }
    }
    if let Some((stem, _)) = s.split_once('.') {
        if !stem.is_empty() {
            return glyph_char(stem.as_bytes());
        }
    }
    match s {
        "f_f" => Some('\u{FB00}'),
        "f_i" => Some('\u{FB01}'),
        "f_l" => Some('\u{FB02}'),
        "f_f_i" => Some('\u{FB03}'),
        "f_f_l" => Some('\u{FB04}'),
        _ => None,
    }
}

const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 222, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667,
    611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 278, 278, 278, 469, 556, 222, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500,
    222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];
const TIMES: [u16; 95] = [
    250, 333, 408, 500, 500, 833, 778, 333, 333, 333, 500, 564, 250, 333, 250, 278, 500, 500, 500,
    500, 500, 500, 500, 500, 500, 500, 278, 278, 564, 564, 564, 444, 921, 722, 667, 667, 722, 611,
    556, 722, 722, 333, 389, 722, 611, 889, 722, 722, 556, 722, 667, 556, 611, 722, 722, 944, 722,
    722, 611, 333, 278, 333, 469, 500, 333, 444, 500, 444, 500, 444, 333, 500, 500, 278, 278, 500,
    278, 778, 500, 500, 500, 500, 333, 389, 278, 500, 500, 722, 500, 500, 444, 480, 200, 480, 541,
];

/// Width of a character in a standard-14 font that came without widths.
fn builtin_width(f: Builtin, c: char) -> f32 {
    let i = c as u32;
    match f {
        Builtin::Courier => 600.0,
        Builtin::Helvetica => HELVETICA
            .get(i.wrapping_sub(32) as usize)
            .copied()
            .unwrap_or(556) as f32,
        Builtin::Times => TIMES
            .get(i.wrapping_sub(32) as usize)
            .copied()
            .unwrap_or(500) as f32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::dictionary;

    #[test]
    fn glyph_names() {
        assert_eq!(glyph_char(b"A"), Some('A'));
        assert_eq!(glyph_char(b"fi"), Some('\u{FB01}'));
        assert_eq!(glyph_char(b"uni00E9"), Some('é'));
        assert_eq!(glyph_char(b"u1D400"), Some('\u{1D400}'));
        assert_eq!(glyph_char(b"one.oldstyle"), Some('1'));
        assert_eq!(glyph_char(b"f_f_i"), Some('\u{FB03}'));
        assert_eq!(glyph_char(b"g123"), None);
    }

    #[test]
    fn an_embedded_type1_programs_own_encoding_is_read() {
        // TeX's CMSY with no /Encoding in the PDF: code 6 is its plusminus.
        let program = b"%!PS-AdobeFont-1.0: CMSY7 003.002\n/Encoding 256 array\n0 1 255 {1 index exch /.notdef put} for\ndup 6 /plusminus put\ndup 2 /multiply put\nreadonly def\ncurrentdict end\ncurrentfile eexec\n\xd9\xd6oc;";
        let mut doc = Document::with_version("1.5");
        let len1 = program.len() - 5;
        let file = doc.add_object(lopdf::Stream::new(
            dictionary! { "Length1" => len1 as i64 },
            program.to_vec(),
        ));
        let descriptor = doc.add_object(dictionary! {
            "Type" => "FontDescriptor",
            "FontName" => "NOKHLJ+CMSY7",
            "Flags" => 4,
            "FontFile" => file,
        });
        let font = dictionary! {
            "Type" => "Font",
            "Subtype" => "Type1",
            "BaseFont" => "NOKHLJ+CMSY7",
            "FontDescriptor" => descriptor,
            "FirstChar" => 2,
            "Widths" => vec![778.into(), 0.into(), 0.into(), 0.into(), 778.into()],
        };
        let f = Font::load(&doc, &font);
        let mut codes = Vec::new();
        f.decode(&[6, 2], &mut codes);
        let text: String = codes.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(text, "±×");
    }
}
