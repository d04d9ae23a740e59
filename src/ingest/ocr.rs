//! OCR: scanned PDF pages and images read with Tesseract.
//!
//! Tesseract runs as its command (`tesseract`, or `$QUARRY_TESSERACT`), one
//! process a page image, fed on standard input and read back as hOCR: words
//! with their boxes and confidences, lines with their baselines and sizes.
//! Those words go through the PDF reader's own layout (lines, columns,
//! headings, tables), so an OCR'd page comes out as the same kinds of block
//! as a born-digital one, each with the mean confidence of its words.
//!
//! The page image is the PDF's own image where a scan is one image a page
//! (JPEG and JPEG 2000 passed as they are, raw or Flate-compressed grey, RGB
//! and bilevel pixels written as PNM), with no renderer; anything else
//! (CCITT or JBIG2 scans, indexed colours, a born-digital page under
//! `ocr=always`, text without a Unicode mapping) is rendered by poppler's
//! `pdftoppm` (`$QUARRY_PDFTOPPM`): the renderer Debian and every Linux
//! distribution ship, which draws every filter a PDF may use, and whose
//! output Tesseract reads without conversion.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use quick_xml::events::Event;

use super::pdf::layout::Word;

/// When pages are read by OCR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OcrMode {
    /// Pages with no usable text layer: none at all under an image, text
    /// without a Unicode mapping, or almost no text on a page that is one
    /// large image. Images are always OCR'd.
    #[default]
    Auto,
    /// Every page, its text layer set aside.
    Always,
    /// None: a scanned page stays unread (`no_text`), an image is not read.
    Never,
}

impl OcrMode {
    /// Parses an `ocr=` option.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(Self::Auto),
            "always" => Some(Self::Always),
            "never" | "off" | "false" => Some(Self::Never),
            _ => None,
        }
    }

    /// The option's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Always => "always",
            Self::Never => "never",
        }
    }
}

/// When and in which languages OCR reads: the `ocr=` and `ocr_lang=`
/// options.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OcrSpec {
    /// When.
    pub mode: OcrMode,
    /// Tesseract's language names joined by `+` ("eng", "eng+deu").
    pub lang: String,
}

impl Default for OcrSpec {
    fn default() -> Self {
        Self {
            mode: OcrMode::Auto,
            lang: "eng".into(),
        }
    }
}

impl OcrSpec {
    /// No OCR at all.
    pub fn never() -> Self {
        Self {
            mode: OcrMode::Never,
            ..Self::default()
        }
    }
}

/// Checks an `ocr_lang=` value: Tesseract language names joined by `+`.
pub fn valid_lang(s: &str) -> bool {
    !s.is_empty()
        && s.split('+').all(|l| {
            !l.is_empty()
                && l.len() <= 32
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// What to install, said in every message about a missing Tesseract.
const INSTALL: &str = "install Tesseract (Debian/Ubuntu: apt-get install tesseract-ocr tesseract-ocr-eng; macOS: brew install tesseract) or set QUARRY_TESSERACT to its path";

/// The Tesseract command to run.
fn tesseract_path() -> String {
    std::env::var("QUARRY_TESSERACT").unwrap_or_else(|_| "tesseract".into())
}

/// The renderer's command.
fn pdftoppm_path() -> String {
    std::env::var("QUARRY_PDFTOPPM").unwrap_or_else(|_| "pdftoppm".into())
}

/// What is known about one Tesseract command: its version and languages,
/// or why it cannot be used. Looked up once per command path.
#[derive(Debug, Clone)]
struct Engine {
    version: String,
    langs: Vec<String>,
}

fn engines() -> &'static Mutex<HashMap<String, Result<Engine, String>>> {
    static E: OnceLock<Mutex<HashMap<String, Result<Engine, String>>>> = OnceLock::new();
    E.get_or_init(Default::default)
}

fn probe(path: &str) -> Result<Engine, String> {
    let out = Command::new(path)
        .arg("--list-langs")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("the tesseract command '{path}' could not be run ({e}): {INSTALL}"))?;
    if !out.status.success() {
        return Err(format!(
            "the tesseract command '{path}' failed ({}): {INSTALL}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    // "List of available languages in "/usr/share/...": then one a line.
    let text = String::from_utf8_lossy(&out.stdout);
    let langs = text
        .lines()
        .skip_while(|l| !l.starts_with("List of"))
        .skip(1)
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let version = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()
        .and_then(|o| {
            let all = [o.stdout, o.stderr].concat();
            String::from_utf8_lossy(&all)
                .lines()
                .next()
                .map(|l| l.trim().to_string())
        })
        .unwrap_or_else(|| "tesseract".into());
    Ok(Engine { version, langs })
}

/// Checks that Tesseract can be run with these languages; the error names
/// what to install.
pub fn available(lang: &str) -> Result<String, String> {
    let path = tesseract_path();
    let engine = {
        let mut map = engines().lock().unwrap_or_else(|e| e.into_inner());
        map.entry(path.clone())
            .or_insert_with(|| probe(&path))
            .clone()
    }?;
    let missing: Vec<&str> = lang
        .split('+')
        .filter(|l| !engine.langs.iter().any(|x| x == l))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "Tesseract has no data for the language{} {} (it has: {}): install {} (Debian/Ubuntu), or choose another with ocr_lang=",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            engine.langs.join(", "),
            missing
                .iter()
                .map(|l| format!("tesseract-ocr-{}", l.replace('_', "-").to_ascii_lowercase()))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    Ok(engine.version)
}

/// The most one page's OCR may take before it is given up.
const PAGE_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs a command with `input` on its standard input and gives back its
/// standard output, within `timeout` (killed past it).
fn run(mut cmd: Command, input: &[u8], timeout: Duration, what: &str) -> Result<Vec<u8>, String> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{what} could not be started ({e})"))?;
    let mut stdin = child.stdin.take();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            // A process that exits early closes the pipe: not our error.
            let _ = s.write_all(&input);
        }
        drop(stdin);
    });
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_end(&mut v);
        }
        v
    });
    let mut stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.take(64 * 1024).read_to_end(&mut v);
        }
        v
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = writer.join();
                let _ = reader.join();
                let _ = err_reader.join();
                return Err(format!(
                    "{what} took over {} s and was stopped",
                    timeout.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("{what} could not be waited for ({e})")),
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    if !status.success() {
        let msg = String::from_utf8_lossy(&err);
        let msg = msg.trim();
        return Err(format!(
            "{what} failed ({status}){}",
            if msg.is_empty() {
                String::new()
            } else {
                format!(": {}", msg.chars().take(300).collect::<String>())
            }
        ));
    }
    Ok(out)
}

/// One word Tesseract read, in image pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct OcrWord {
    /// Its text.
    pub text: String,
    /// Box: left, top, right, bottom.
    pub bbox: [f32; 4],
    /// Tesseract's confidence, 0 to 1.
    pub conf: f32,
}

/// One line: its words, baseline and text size in pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct OcrLine {
    /// Words, left to right.
    pub words: Vec<OcrWord>,
    /// The baseline's height from the top (at the line's middle).
    pub baseline: f32,
    /// Tesseract's `x_size`: the height of the line's letters, ascenders to
    /// descenders.
    pub x_size: f32,
}

/// One page image read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OcrPage {
    /// Image width in pixels.
    pub width: f32,
    /// Image height in pixels.
    pub height: f32,
    /// Its lines in Tesseract's reading order.
    pub lines: Vec<OcrLine>,
}

impl OcrPage {
    /// The page's words as layout words in a frame of the page (points,
    /// from the top left): pixel (0, 0) at (x0, y0), the image's far corner
    /// at (x1, y1).
    pub fn words_in(&self, frame: [f32; 4]) -> Vec<Word> {
        let [fx0, fy0, fx1, fy1] = frame;
        let sx = (fx1 - fx0) / self.width.max(1.0);
        let sy = (fy1 - fy0) / self.height.max(1.0);
        // Tesseract's sizes wander a little from line to line of one
        // paragraph (a line without descenders is measured smaller): sizes
        // within a quarter of the page's most common one are taken as it,
        // so the layout does not cut paragraphs at every line.
        let mut sizes: Vec<f32> = self.lines.iter().map(|l| l.x_size).collect();
        sizes.sort_by(f32::total_cmp);
        let body = sizes.get(sizes.len() / 2).copied().unwrap_or(0.0);
        let mut out = Vec::new();
        for l in &self.lines {
            let x = if body > 0.0 && (l.x_size - body).abs() <= 0.25 * body {
                body
            } else {
                l.x_size
            };
            // A line's letters span about 0.97 of the size the layout
            // expects (0.75 above the baseline, 0.22 below); x_size is
            // ascender to descender.
            let size = (x * sy / 0.97).max(1.0);
            let y = fy0 + l.baseline * sy;
            for w in &l.words {
                out.push(Word {
                    text: w.text.clone(),
                    x0: fx0 + w.bbox[0] * sx,
                    x1: fx0 + w.bbox[2] * sx,
                    y,
                    size,
                    bold: false,
                    conf: Some(w.conf),
                });
            }
        }
        out
    }
}

/// Reads `image` (any format Tesseract's Leptonica reads: PNG, JPEG, TIFF
/// with all its pages, PNM, JPEG 2000, BMP, GIF, WebP) into pages.
pub fn recognise(image: &[u8], dpi: Option<u32>, lang: &str) -> Result<Vec<OcrPage>, String> {
    available(lang)?;
    let mut cmd = Command::new(tesseract_path());
    cmd.arg("stdin").arg("stdout").arg("-l").arg(lang);
    if let Some(d) = dpi {
        cmd.arg("--dpi").arg(d.clamp(30, 2400).to_string());
    }
    cmd.arg("hocr");
    // Pages run in parallel already: one thread a Tesseract.
    cmd.env("OMP_THREAD_LIMIT", "1");
    let out = run(cmd, image, PAGE_TIMEOUT, "tesseract")?;
    parse_hocr(&String::from_utf8_lossy(&out))
}

/// The width, in points, an image document's page is given (US Letter's):
/// an image carries no page size, and the layout measures in points.
const IMAGE_PAGE_WIDTH: f32 = 612.0;

/// Reads an image document (PNG, JPEG, TIFF with every page, BMP, GIF,
/// WebP, JPEG 2000) by OCR, through the PDF reader's layout.
pub fn extract_image(bytes: &[u8], spec: &OcrSpec) -> Result<super::Extracted, String> {
    if spec.mode == OcrMode::Never {
        return Ok(super::Extracted {
            extractor: "image",
            notes: vec![
                "an image is read only by OCR, and ocr=never: read it with ocr=auto".into(),
            ],
            ..Default::default()
        });
    }
    let read = recognise(bytes, None, &spec.lang)
        .map_err(|e| format!("the image could not be read by OCR: {e}"))?;
    if read.is_empty() {
        return Err("Tesseract found no page in the image: it may be damaged; open it in an image viewer and save it again as PNG".into());
    }
    let n = read.len() as u32;
    let pages: Vec<super::pdf::PageLines> = read
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let h = IMAGE_PAGE_WIDTH * p.height / p.width.max(1.0);
            page_lines(
                i as u32 + 1,
                p.words_in([0.0, 0.0, IMAGE_PAGE_WIDTH, h]),
                IMAGE_PAGE_WIDTH,
                h,
            )
        })
        .collect();
    let mut notes = Vec::new();
    if let Some(s) = summary(&pages) {
        notes.push(s);
    }
    Ok(super::pdf::lay_out(pages, n, notes, "image+ocr"))
}

/// A page of OCR'd words, as the PDF reader's layout takes it.
pub fn page_lines(number: u32, words: Vec<Word>, width: f32, height: f32) -> super::pdf::PageLines {
    let glyphs = words.iter().map(|w| w.text.chars().count()).sum();
    super::pdf::PageLines {
        number,
        lines: super::pdf::layout::lines(words),
        rules: Vec::new(),
        width,
        height,
        unmapped: 0,
        glyphs,
        images: 1,
        drawn: Vec::new(),
        ocr: true,
        problem: None,
    }
}

/// "pages 1-3 read by OCR (tesseract 5.3.0, eng), mean word confidence
/// 0.91": the note an OCR'd document carries.
pub fn summary(pages: &[super::pdf::PageLines]) -> Option<String> {
    let read: Vec<u32> = pages.iter().filter(|p| p.ocr).map(|p| p.number).collect();
    if read.is_empty() {
        return None;
    }
    let conf = super::pdf::confidence(
        pages
            .iter()
            .filter(|p| p.ocr)
            .flat_map(|p| &p.lines)
            .flat_map(|l| &l.words),
    );
    Some(format!(
        "{} {} read by OCR, mean word confidence {}",
        if read.len() == 1 { "page" } else { "pages" },
        super::pdf::ranges(&read),
        match conf {
            None => "- (no words found)".to_string(),
            Some(c) => format!("{c:.2}"),
        }
    ))
}

/// The numbers after `key` in an hOCR title ("bbox 1 2 3 4; x_wconf 95").
fn prop(title: &str, key: &str) -> Option<Vec<f32>> {
    title.split(';').find_map(|p| {
        let p = p.trim();
        let rest = p.strip_prefix(key)?.strip_prefix(' ')?;
        Some(
            rest.split_whitespace()
                .filter_map(|v| v.trim_matches('"').parse().ok())
                .collect(),
        )
    })
}

/// Parses Tesseract's hOCR: pages, lines (also `ocr_caption`,
/// `ocr_header`, `ocr_textfloat`) and words.
pub fn parse_hocr(xml: &str) -> Result<Vec<OcrPage>, String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut pages: Vec<OcrPage> = Vec::new();
    // The word being read: its box and confidence, then its text.
    let mut word: Option<OcrWord> = None;
    let mut depth_in_word = 0usize;
    loop {
        let ev = reader
            .read_event()
            .map_err(|e| format!("tesseract's hOCR could not be read ({e})"))?;
        match ev {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(ev, Event::Empty(_));
                if word.is_some() {
                    depth_in_word += usize::from(!empty);
                    continue;
                }
                let mut class = String::new();
                let mut title = String::new();
                for a in e.attributes().flatten() {
                    let v = a
                        .unescape_value()
                        .map(|v| v.into_owned())
                        .unwrap_or_default();
                    match a.key.as_ref() {
                        b"class" => class = v,
                        b"title" => title = v,
                        _ => {}
                    }
                }
                match class.as_str() {
                    "ocr_page" => {
                        let b = prop(&title, "bbox").unwrap_or_default();
                        pages.push(OcrPage {
                            width: b.get(2).copied().unwrap_or(0.0),
                            height: b.get(3).copied().unwrap_or(0.0),
                            lines: Vec::new(),
                        });
                    }
                    "ocr_line" | "ocr_caption" | "ocr_header" | "ocr_textfloat" => {
                        let b = prop(&title, "bbox").unwrap_or_default();
                        if b.len() == 4 {
                            // "baseline slope offset": offset from the
                            // bottom at the left; taken at the middle.
                            let bl = prop(&title, "baseline").unwrap_or_default();
                            let (slope, off) = (
                                bl.first().copied().unwrap_or(0.0),
                                bl.get(1).copied().unwrap_or(0.0),
                            );
                            let baseline = b[3] + off + slope * (b[2] - b[0]) / 2.0;
                            let x_size = prop(&title, "x_size")
                                .and_then(|v| v.first().copied())
                                .unwrap_or(b[3] - b[1]);
                            if let Some(p) = pages.last_mut() {
                                p.lines.push(OcrLine {
                                    words: Vec::new(),
                                    baseline,
                                    x_size,
                                });
                            }
                        }
                    }
                    "ocrx_word" if !empty => {
                        let b = prop(&title, "bbox").unwrap_or_default();
                        let conf = prop(&title, "x_wconf")
                            .and_then(|v| v.first().copied())
                            .unwrap_or(0.0);
                        if b.len() == 4 {
                            word = Some(OcrWord {
                                text: String::new(),
                                bbox: [b[0], b[1], b[2], b[3]],
                                conf: (conf / 100.0).clamp(0.0, 1.0),
                            });
                            depth_in_word = 0;
                        }
                    }
                    _ => {}
                }
            }
            Event::Text(t) => {
                if let Some(w) = word.as_mut() {
                    // quick-xml gives entity references as events of
                    // their own, so a text event holds none.
                    let s = t.decode().map(|s| s.into_owned()).unwrap_or_default();
                    w.text.push_str(&s);
                }
            }
            Event::GeneralRef(r) => {
                if let Some(w) = word.as_mut() {
                    super::docx::push_ref(&mut w.text, &r);
                }
            }
            Event::End(_) if depth_in_word > 0 => depth_in_word -= 1,
            Event::End(_) => {
                if let Some(w) = word.take() {
                    let text = w.text.trim().to_string();
                    if !text.is_empty() {
                        if let Some(l) = pages.last_mut().and_then(|p| p.lines.last_mut()) {
                            l.words.push(OcrWord { text, ..w });
                        }
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    for p in &mut pages {
        p.lines.retain(|l| !l.words.is_empty());
    }
    Ok(pages)
}

/// Renders one page of a PDF (`path`) to a greyscale image at `dpi` with
/// pdftoppm.
pub fn render_page(path: &std::path::Path, page: u32, dpi: u32) -> Result<Vec<u8>, String> {
    let bin = pdftoppm_path();
    let mut cmd = Command::new(&bin);
    cmd.arg("-r")
        .arg(dpi.to_string())
        .arg("-gray")
        .arg("-f")
        .arg(page.to_string())
        .arg("-l")
        .arg(page.to_string())
        .arg(path);
    match run(cmd, &[], PAGE_TIMEOUT, "the renderer (pdftoppm)") {
        Err(e) if e.contains("could not be started") => Err(format!(
            "{e}: pages that are not one plain image need a renderer to be OCR'd: install poppler-utils (Debian/Ubuntu; macOS: brew install poppler) or set QUARRY_PDFTOPPM"
        )),
        Err(e) => Err(e),
        Ok(v) if v.is_empty() => Err("the renderer (pdftoppm) drew nothing".into()),
        Ok(v) => Ok(v),
    }
}

/// A PNM image (P4 bilevel, P5 grey, P6 RGB) of raw pixel rows.
pub fn pnm(width: u32, height: u32, channels: u8, bits: u8, pixels: &[u8]) -> Option<Vec<u8>> {
    let (magic, row) = match (channels, bits) {
        (1, 1) => ("P4", (width as usize).div_ceil(8)),
        (1, 8) => ("P5", width as usize),
        (3, 8) => ("P6", width as usize * 3),
        _ => return None,
    };
    let need = row.checked_mul(height as usize)?;
    if width == 0 || height == 0 || pixels.len() < need {
        return None;
    }
    let mut out = format!("{magic}\n{width} {height}\n").into_bytes();
    if bits != 1 {
        out.extend_from_slice(b"255\n");
    }
    out.extend_from_slice(&pixels[..need]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOCR: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><body>
  <div class='ocr_page' id='page_1' title='image "stdin"; bbox 0 0 1000 2000; ppageno 0'>
   <div class='ocr_carea' id='block_1_1' title="bbox 100 100 600 150">
    <p class='ocr_par' id='par_1_1' lang='eng' title="bbox 100 100 600 150">
     <span class='ocr_line' id='line_1_1' title="bbox 100 100 600 130; baseline 0 -6; x_size 29; x_descenders 6; x_ascenders 7">
      <span class='ocrx_word' id='word_1_1' title='bbox 100 101 200 130; x_wconf 96'>Baseline</span>
      <span class='ocrx_word' id='word_1_2' title='bbox 210 101 300 124; x_wconf 50'><strong>R&amp;D</strong></span>
      <span class='ocrx_word' id='word_1_3' title='bbox 310 101 330 124; x_wconf 90'> </span>
     </span>
     <span class='ocr_caption' id='line_1_2' title="bbox 100 140 300 170; baseline 0.01 -4; x_size 20">
      <span class='ocrx_word' id='word_1_4' title='bbox 100 140 300 170; x_wconf 88'>p&#60;0.05</span>
     </span>
    </p>
   </div>
  </div>
  <div class='ocr_page' id='page_2' title='bbox 0 0 500 500'></div>
</body></html>"#;

    #[test]
    fn hocr_gives_pages_lines_and_words() {
        let pages = parse_hocr(HOCR).unwrap();
        assert_eq!(pages.len(), 2);
        let p = &pages[0];
        assert_eq!((p.width, p.height), (1000.0, 2000.0));
        assert_eq!(p.lines.len(), 2);
        let words: Vec<&str> = p.lines[0].words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(words, ["Baseline", "R&D"]);
        assert_eq!(p.lines[0].baseline, 124.0);
        assert_eq!(p.lines[0].x_size, 29.0);
        assert!((p.lines[0].words[1].conf - 0.5).abs() < 1e-6);
        assert_eq!(p.lines[1].words[0].text, "p<0.05");
        assert!(pages[1].lines.is_empty());
        // Into a page frame: pixels scaled to points.
        let w = p.words_in([0.0, 0.0, 500.0, 1000.0]);
        assert_eq!(w.len(), 3);
        assert_eq!((w[0].x0, w[0].x1, w[0].y), (50.0, 100.0, 62.0));
        assert_eq!(w[0].conf, Some(0.96));
    }

    #[test]
    fn modes_and_languages() {
        assert_eq!(OcrMode::parse("Always"), Some(OcrMode::Always));
        assert_eq!(OcrMode::parse("never"), Some(OcrMode::Never));
        assert_eq!(OcrMode::parse("sometimes"), None);
        assert!(valid_lang("eng"));
        assert!(valid_lang("eng+deu+chi_sim"));
        assert!(!valid_lang("eng; rm -rf"));
        assert!(!valid_lang(""));
        assert!(!valid_lang("eng++deu"));
    }

    #[test]
    fn pnm_headers() {
        let p = pnm(2, 1, 1, 8, &[0, 255]).unwrap();
        assert_eq!(p, b"P5\n2 1\n255\n\x00\xff");
        let p = pnm(9, 1, 1, 1, &[0xff, 0x80]).unwrap();
        assert_eq!(p, b"P4\n9 1\n\xff\x80");
        assert!(pnm(3, 3, 1, 8, &[0; 8]).is_none());
        assert!(pnm(3, 3, 4, 8, &[0; 36]).is_none());
    }
}
