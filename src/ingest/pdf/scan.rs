//! Scanned pages: which pages of a PDF are read by OCR, the image each is
//! read from, and their words put back on the page.
//!
//! Under `ocr=auto` a page is read by OCR when its text layer is not usable:
//! it has no text but draws an image, most of its text has no Unicode
//! mapping, or it is one image covering the page with next to no text on
//! it (the line a library stamps on a scanned article: kept, and the
//! image's words added to it). Under `always` every page is, its text
//! layer set aside; under `never` none.

use lopdf::{Document, Object};
use rayon::prelude::*;

use super::interp::{Drawn, MAX_INFLATED};
use super::PageLines;
use crate::ingest::ocr::{self, OcrMode, OcrSpec};

/// What OCR did to a PDF's pages.
#[derive(Debug, Default)]
pub struct Scanned {
    /// Pages read by OCR.
    pub pages: usize,
    /// Notes for the document's `error` column (pages OCR could not read,
    /// and what was read).
    pub notes: Vec<String>,
    /// Why OCR could not run at all, when pages needed it.
    pub unavailable: Option<String>,
    /// Pages OCR tried and could not read.
    pub failed: Vec<u32>,
}

/// A page with at most this many characters of text under one image that
/// covers most of it counts as a scan.
const STAMP_CHARS: usize = 200;

/// The resolution pages are rendered at when they are not one plain image.
const RENDER_DPI: u32 = 300;

/// The share of the page an image covers.
fn coverage(p: &PageLines, d: &Drawn) -> f32 {
    let [x0, y0, x1, y1] = d.bbox;
    let w = (x1.min(p.width) - x0.max(0.0)).max(0.0);
    let h = (y1.min(p.height) - y0.max(0.0)).max(0.0);
    w * h / (p.width * p.height).max(1.0)
}

/// Whether OCR should read this page.
pub fn wanted(p: &PageLines, mode: OcrMode) -> bool {
    match mode {
        OcrMode::Never => false,
        OcrMode::Always => true,
        OcrMode::Auto => {
            let page_image = p.drawn.iter().any(|d| coverage(p, d) >= 0.9);
            (p.glyphs == 0 && p.images > 0)
                || (p.glyphs > 0 && p.unmapped * 5 > p.glyphs)
                || (page_image && p.glyphs <= STAMP_CHARS)
        }
    }
}

/// Reads the pages OCR should read, in parallel, replacing their lines.
/// Under `always` a missing Tesseract is an error; otherwise it is said in
/// `unavailable` and the pages stay as they were.
pub fn read_pages(
    doc: &Document,
    bytes: &[u8],
    pages: &mut [PageLines],
    spec: &OcrSpec,
) -> Result<Scanned, String> {
    let mut out = Scanned::default();
    let want: Vec<usize> = (0..pages.len())
        .filter(|&i| wanted(&pages[i], spec.mode))
        .collect();
    if want.is_empty() {
        return Ok(out);
    }
    if let Err(e) = ocr::available(&spec.lang) {
        if spec.mode == OcrMode::Always {
            return Err(format!("ocr=always, but {e}"));
        }
        out.unavailable = Some(e);
        return Ok(out);
    }
    // Pages that are not one plain image are drawn by the renderer, which
    // reads the PDF from a file: written once, only when needed.
    let file: std::sync::OnceLock<Result<tempfile::NamedTempFile, String>> =
        std::sync::OnceLock::new();
    let render = |number: u32| -> Result<Vec<u8>, String> {
        let f = file.get_or_init(|| {
            let mut f = tempfile::Builder::new()
                .prefix("quarry-ocr-")
                .suffix(".pdf")
                .tempfile()
                .map_err(|e| {
                    format!("a temporary file for the renderer could not be made ({e})")
                })?;
            std::io::Write::write_all(&mut f, bytes).map_err(|e| {
                format!("a temporary file for the renderer could not be written ({e})")
            })?;
            Ok(f)
        });
        match f {
            Ok(f) => ocr::render_page(f.path(), number, RENDER_DPI),
            Err(e) => Err(e.clone()),
        }
    };
    type Read = Result<(Vec<super::layout::Word>, bool), String>;
    let read: Vec<(usize, Read)> = want
        .par_iter()
        .map(|&i| {
            let p = &pages[i];
            let words = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                read_page(doc, p, &render, &spec.lang)
            }))
            .unwrap_or_else(|_| Err("OCR of the page crashed".into()));
            (i, words)
        })
        .collect();
    let mut failed = Vec::new();
    for (i, r) in read {
        match r {
            Ok((mut words, from_image)) => {
                let p = &mut pages[i];
                // A usable text layer beside a page image (a stamp, a
                // caption) is kept when the image alone was read; a
                // rendering holds it already.
                let usable = p.glyphs > 0 && p.unmapped * 5 <= p.glyphs;
                if spec.mode == OcrMode::Auto && usable && from_image {
                    words.extend(
                        std::mem::take(&mut p.lines)
                            .into_iter()
                            .flat_map(|l| l.words),
                    );
                }
                p.glyphs = words.iter().map(|w| w.text.chars().count()).sum();
                p.unmapped = 0;
                p.lines = super::layout::lines(words);
                p.ocr = true;
                out.pages += 1;
            }
            Err(e) => failed.push((pages[i].number, e)),
        }
    }
    if let Some(s) = ocr::summary(pages) {
        out.notes.push(s);
    }
    for (n, e) in failed {
        out.notes
            .push(format!("page {n}: OCR could not read it ({e})"));
        out.failed.push(n);
    }
    Ok(out)
}

/// One page's words by OCR: from its own image where the page is one plain
/// image, else from the renderer; and whether they came from the image.
fn read_page(
    doc: &Document,
    p: &PageLines,
    render: &(dyn Fn(u32) -> Result<Vec<u8>, String> + Sync),
    lang: &str,
) -> Result<(Vec<super::layout::Word>, bool), String> {
    let scan = p
        .drawn
        .iter()
        .filter(|d| d.upright && coverage(p, d) >= 0.5)
        .max_by(|a, b| coverage(p, a).total_cmp(&coverage(p, b)));
    // The page's own image serves when it is the page: no text of the
    // text layer kept beside it, nothing else drawn that OCR would miss.
    if let Some(d) = scan.filter(|_| p.drawn.len() == 1) {
        if let Some((image, width)) = d.id.and_then(|id| image_bytes(doc, id)) {
            let inches = (d.bbox[2] - d.bbox[0]) / 72.0;
            let dpi = (width as f32 / inches.max(0.1)).round() as u32;
            let read = ocr::recognise(&image, Some(dpi), lang)?;
            let page = read.into_iter().next().unwrap_or_default();
            return Ok((page.words_in(d.bbox), true));
        }
    }
    let image = render(p.number)?;
    let read = ocr::recognise(&image, Some(RENDER_DPI), lang)?;
    let page = read.into_iter().next().unwrap_or_default();
    Ok((page.words_in([0.0, 0.0, p.width, p.height]), false))
}

/// A name, or the last of an array of names (the filter applied last).
fn names(o: Option<&Object>, doc: &Document) -> Vec<Vec<u8>> {
    let deref = |o: &Object| match o {
        Object::Reference(id) => doc.get_object(*id).ok().cloned(),
        o => Some(o.clone()),
    };
    match o.and_then(deref) {
        Some(Object::Name(n)) => vec![n],
        Some(Object::Array(a)) => a
            .iter()
            .filter_map(|x| deref(x).and_then(|x| x.as_name().ok().map(<[u8]>::to_vec)))
            .collect(),
        _ => Vec::new(),
    }
}

/// The image object as bytes Tesseract reads, with its width in pixels:
/// JPEG and JPEG 2000 as stored; raw or Flate/LZW pixels (grey, RGB,
/// bilevel, image masks) as PNM. `None` for what needs the renderer.
pub fn image_bytes(doc: &Document, id: lopdf::ObjectId) -> Option<(Vec<u8>, u32)> {
    let stream = doc.get_object(id).ok()?.as_stream().ok()?;
    let d = &stream.dict;
    let int = |k: &[u8]| match d.get(k).ok()? {
        Object::Integer(i) => u32::try_from(*i).ok(),
        Object::Reference(r) => doc
            .get_object(*r)
            .ok()?
            .as_i64()
            .ok()
            .and_then(|i| u32::try_from(i).ok()),
        _ => None,
    };
    let (width, height) = (int(b"Width")?, int(b"Height")?);
    if width == 0 || height == 0 || u64::from(width) * u64::from(height) > 400_000_000 {
        return None;
    }
    let filters = names(d.get(b"Filter").ok(), doc);
    match filters.as_slice() {
        [f] if f.as_slice() == b"DCTDecode" || f.as_slice() == b"JPXDecode" => {
            return Some((stream.content.clone(), width));
        }
        _ => {}
    }
    if !filters
        .iter()
        .all(|f| matches!(f.as_slice(), b"FlateDecode" | b"LZWDecode" | b"Fl" | b"LZW"))
    {
        return None; // CCITT, JBIG2, run-length, a chain ending in JPEG: rendered
    }
    let mask = matches!(d.get(b"ImageMask"), Ok(Object::Boolean(true)));
    let bits = if mask { 1 } else { int(b"BitsPerComponent")? };
    let channels = if mask {
        1
    } else {
        let cs = names(d.get(b"ColorSpace").ok(), doc);
        match cs.first().map(Vec::as_slice) {
            Some(b"DeviceGray") | Some(b"CalGray") | Some(b"G") => 1,
            Some(b"DeviceRGB") | Some(b"CalRGB") | Some(b"RGB") => 3,
            Some(b"ICCBased") => {
                // [/ICCBased stream]: its /N is the number of components.
                let arr = match d.get(b"ColorSpace").ok()? {
                    Object::Array(a) => a.clone(),
                    Object::Reference(r) => doc.get_object(*r).ok()?.as_array().ok()?.clone(),
                    _ => return None,
                };
                let icc = match arr.get(1)? {
                    Object::Reference(r) => doc.get_object(*r).ok()?.as_stream().ok()?,
                    _ => return None,
                };
                match icc.dict.get(b"N").ok()?.as_i64().ok()? {
                    1 => 1,
                    3 => 3,
                    _ => return None,
                }
            }
            _ => return None, // indexed, CMYK, Lab, separations: rendered
        }
    };
    if !(bits == 8 || (bits == 1 && channels == 1)) {
        return None;
    }
    let mut pixels = if filters.is_empty() {
        stream.content.clone()
    } else {
        stream.decompressed_content_with_limit(MAX_INFLATED).ok()?
    };
    // PDF's /Decode [1 0] inverts the samples.
    let inverted = matches!(d.get(b"Decode"), Ok(Object::Array(a))
        if a.first().and_then(|o| o.as_float().ok()) == Some(1.0));
    if bits == 1 {
        // PDF grey 1-bit: 0 is black; PNM P4: 1 is black. An image mask
        // paints its 0 samples (black on paper), so both flip, unless
        // /Decode already does.
        if !inverted {
            pixels.iter_mut().for_each(|b| *b = !*b);
        }
    } else if inverted {
        pixels.iter_mut().for_each(|b| *b = 255 - *b);
    }
    ocr::pnm(width, height, channels, bits as u8, &pixels).map(|v| (v, width))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(glyphs: usize, unmapped: usize, drawn: Vec<[f32; 4]>) -> PageLines {
        PageLines {
            number: 1,
            lines: Vec::new(),
            rules: Vec::new(),
            width: 600.0,
            height: 800.0,
            unmapped,
            glyphs,
            images: drawn.len(),
            drawn: drawn
                .into_iter()
                .map(|bbox| Drawn {
                    id: None,
                    bbox,
                    upright: true,
                })
                .collect(),
            ocr: false,
            problem: None,
        }
    }

    #[test]
    fn which_pages_are_scans() {
        let full = [0.0, 0.0, 600.0, 800.0];
        let figure = [100.0, 100.0, 400.0, 300.0];
        let auto = OcrMode::Auto;
        // An image and no text: a scan.
        assert!(wanted(&page(0, 0, vec![figure]), auto));
        // Text set in fonts without Unicode.
        assert!(wanted(&page(1000, 900, vec![]), auto));
        // A page-sized image under a library's one-line stamp.
        assert!(wanted(&page(120, 0, vec![full]), auto));
        // A born-digital page with a figure, a blank page, a page of text
        // over a background image: not.
        assert!(!wanted(&page(2000, 0, vec![figure]), auto));
        assert!(!wanted(&page(0, 0, vec![]), auto));
        assert!(!wanted(&page(2000, 0, vec![full]), auto));
        assert!(wanted(&page(2000, 0, vec![]), OcrMode::Always));
        assert!(!wanted(&page(0, 0, vec![full]), OcrMode::Never));
    }
}
