//! Scans made from a real paper, for the OCR tests and the OCR bench:
//! pages of the bundled trial paper drawn by poppler's `pdftoppm` and
//! wrapped back into image-only PDFs (JPEG, Flate-compressed grey, bilevel,
//! or a filter chain only a renderer draws) or a multi-page TIFF; and the
//! word recall that scores what OCR read against the text layer.
//! Included by `tests/it/ocr.rs` and `benches/ocr.rs` (`#[path]`).

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};

/// The bundled trial paper the scans are made of.
pub fn paper() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/corpus/PMC3751573.pdf")
}

/// The paper's page size in points.
pub fn page_size() -> (f32, f32) {
    let doc = Document::load(paper()).unwrap();
    let (_, id) = doc.get_pages().into_iter().next().unwrap();
    let page = doc.get_dictionary(id).unwrap();
    let mb = page.get(b"MediaBox").unwrap().as_array().unwrap();
    let v: Vec<f32> = mb.iter().map(|o| o.as_float().unwrap()).collect();
    (v[2] - v[0], v[3] - v[1])
}

/// Page `n` of the paper drawn by pdftoppm at `dpi`, greyscale, in
/// the format `flag` names (`-jpeg`, `-png`, or none for PGM).
pub fn render(n: u32, dpi: u32, flag: Option<&str>) -> Vec<u8> {
    let mut c = Command::new("pdftoppm");
    c.args([
        "-r",
        &dpi.to_string(),
        "-gray",
        "-f",
        &n.to_string(),
        "-l",
        &n.to_string(),
    ]);
    if let Some(f) = flag {
        c.arg(f);
    }
    let out = c
        .arg(paper())
        .output()
        .expect("pdftoppm (Debian: poppler-utils) is needed for the OCR tests");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A PGM's width, height and pixels.
pub fn pgm(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut fields = Vec::new();
    let mut i = 0;
    while fields.len() < 4 {
        while bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let s = i;
        while !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        fields.push(String::from_utf8_lossy(&bytes[s..i]).into_owned());
    }
    assert_eq!(fields[0], "P5");
    let (w, h) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    (w, h, bytes[i + 1..].to_vec())
}

/// How an image-only page stores its scan.
pub enum Scan {
    /// JPEG (DCTDecode), as stored (pdftoppm writes RGB JPEGs even of
    /// grey pages).
    Jpeg(Vec<u8>, u32, u32),
    /// 8-bit grey pixels, Flate-compressed.
    Grey(Vec<u8>, u32, u32),
    /// 1-bit pixels (0 black, PDF's way), Flate-compressed.
    Bilevel(Vec<u8>, u32, u32),
    /// A JPEG Flate-compressed again: a filter chain only a renderer draws.
    Chained(Vec<u8>, u32, u32),
}

pub fn deflate(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

/// A PDF whose pages are each one image covering the page, and no text.
pub fn image_pdf(scans: Vec<Scan>) -> Vec<u8> {
    stamped_pdf(scans, None)
}

/// As [`image_pdf`], with a line of real text (Helvetica, 8 pt) set at
/// the foot of every page over the image, as a library stamps a scan.
pub fn stamped_pdf(scans: Vec<Scan>, stamp: Option<&str>) -> Vec<u8> {
    let (pw, ph) = page_size();
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let mut kids = Vec::new();
    for scan in scans {
        let (dict, data) = match scan {
            Scan::Jpeg(b, w, h) => (
                dictionary! {"Type" => "XObject", "Subtype" => "Image", "Width" => w, "Height" => h, "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8, "Filter" => "DCTDecode"},
                b,
            ),
            Scan::Grey(px, w, h) => (
                dictionary! {"Type" => "XObject", "Subtype" => "Image", "Width" => w, "Height" => h, "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8, "Filter" => "FlateDecode"},
                deflate(&px),
            ),
            Scan::Bilevel(px, w, h) => (
                dictionary! {"Type" => "XObject", "Subtype" => "Image", "Width" => w, "Height" => h, "ColorSpace" => "DeviceGray", "BitsPerComponent" => 1, "Filter" => "FlateDecode"},
                deflate(&px),
            ),
            Scan::Chained(b, w, h) => (
                dictionary! {"Type" => "XObject", "Subtype" => "Image", "Width" => w, "Height" => h, "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8, "Filter" => vec![Object::Name(b"FlateDecode".to_vec()), Object::Name(b"DCTDecode".to_vec())]},
                deflate(&b),
            ),
        };
        let img = doc.add_object(Stream::new(dict, data).with_compression(false));
        let mut operations = vec![
            Operation::new("q", vec![]),
            Operation::new(
                "cm",
                vec![pw.into(), 0.into(), 0.into(), ph.into(), 0.into(), 0.into()],
            ),
            Operation::new("Do", vec!["Scan".into()]),
            Operation::new("Q", vec![]),
        ];
        if let Some(t) = stamp {
            operations.extend([
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 8.into()]),
                Operation::new("Td", vec![40.into(), 12.into()]),
                Operation::new("Tj", vec![Object::string_literal(t)]),
                Operation::new("ET", vec![]),
            ]);
        }
        let content = Content { operations };
        let cid = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        let page = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "MediaBox" => vec![0.into(), 0.into(), pw.into(), ph.into()],
            "Contents" => cid,
            "Resources" => dictionary! {
                "XObject" => dictionary! {"Scan" => img},
                "Font" => dictionary! {"F1" => dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding"}},
            },
        });
        kids.push(page.into());
    }
    let n = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {"Type" => "Pages", "Kids" => kids, "Count" => n}),
    );
    let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// Grey pixels to 1-bit rows (PDF's DeviceGray: 0 is black), at half grey.
pub fn bilevel(w: u32, h: u32, px: &[u8]) -> Vec<u8> {
    let row = (w as usize).div_ceil(8);
    let mut out = vec![0u8; row * h as usize];
    for y in 0..h as usize {
        for x in 0..w as usize {
            if px[y * w as usize + x] >= 128 {
                out[y * row + x / 8] |= 0x80 >> (x % 8);
            }
        }
    }
    out
}

/// An uncompressed greyscale TIFF holding the given pages (one IFD each).
pub fn tiff(pages: &[(u32, u32, Vec<u8>)], dpi: u32) -> Vec<u8> {
    let mut out = b"II*\0\0\0\0\0".to_vec();
    let mut link = 4usize; // where the offset of the next IFD goes
    for (w, h, px) in pages {
        let data = out.len() as u32;
        out.extend_from_slice(px);
        if out.len() % 2 == 1 {
            out.push(0);
        }
        let res = out.len() as u32;
        out.extend_from_slice(&dpi.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        let ifd = out.len() as u32;
        out[link..link + 4].copy_from_slice(&ifd.to_le_bytes());
        // (tag, type, value): type 3 SHORT, 4 LONG, 5 RATIONAL.
        let entries: [(u16, u16, u32); 12] = [
            (256, 4, *w),
            (257, 4, *h),
            (258, 3, 8),
            (259, 3, 1),
            (262, 3, 1),
            (273, 4, data),
            (277, 3, 1),
            (278, 4, *h),
            (279, 4, px.len() as u32),
            (282, 5, res),
            (283, 5, res),
            (296, 3, 2),
        ];
        out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        for (tag, ty, v) in entries {
            out.extend_from_slice(&tag.to_le_bytes());
            out.extend_from_slice(&ty.to_le_bytes());
            out.extend_from_slice(&1u32.to_le_bytes());
            if ty == 3 {
                out.extend_from_slice(&(v as u16).to_le_bytes());
                out.extend_from_slice(&[0, 0]);
            } else {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        link = out.len();
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    out
}

/// Words folded for comparison: lower case, letters and digits only.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// The share of `truth`'s words (as a multiset) found in `read`.
pub fn recall(truth: &str, read: &str) -> f64 {
    missed(truth, read).1
}

/// `truth`'s words (as a multiset) not found in `read`, and the share found.
pub fn missed(truth: &str, read: &str) -> (Vec<String>, f64) {
    let mut have: HashMap<String, usize> = HashMap::new();
    for w in words(read) {
        *have.entry(w).or_default() += 1;
    }
    let t = words(truth);
    let lost: Vec<String> = t
        .iter()
        .filter(|w| match have.get_mut(*w) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect();
    let share = 1.0 - lost.len() as f64 / t.len().max(1) as f64;
    (lost, share)
}
