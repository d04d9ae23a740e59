//! The content-stream interpreter: runs a page's operators (graphics and
//! text state, matrices, `Tj`/`TJ`/`'`/`"`, form XObjects) and gives back
//! every glyph with its position, size and weight, plus the ruling lines
//! drawn on the page (for tables). Coordinates are PDF points with y
//! measured from the top of the page.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Object, ObjectId};

use super::fonts::{deref, dict, get, Code, Font};

/// A 2-D affine matrix `[a b c d e f]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Matrix(pub [f32; 6]);

impl Matrix {
    /// The identity.
    pub const ID: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    /// `self × m`.
    pub fn mul(&self, m: &Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [a2, b2, c2, d2, e2, f2] = m.0;
        Matrix([
            a * a2 + b * c2,
            a * b2 + b * d2,
            c * a2 + d * c2,
            c * b2 + d * d2,
            e * a2 + f * c2 + e2,
            e * b2 + f * d2 + f2,
        ])
    }

    /// Applies the matrix to a point.
    pub fn apply(&self, x: f32, y: f32) -> (f32, f32) {
        let [a, b, c, d, e, f] = self.0;
        (a * x + c * y + e, b * x + d * y + f)
    }

    fn translate(tx: f32, ty: f32) -> Matrix {
        Matrix([1.0, 0.0, 0.0, 1.0, tx, ty])
    }

    fn from_operands(ops: &[Object]) -> Option<Matrix> {
        if ops.len() < 6 {
            return None;
        }
        let mut m = [0.0; 6];
        for (i, o) in ops.iter().take(6).enumerate() {
            m[i] = o.as_float().ok()?;
        }
        Some(Matrix(m))
    }
}

/// One glyph (or the characters one code stands for).
#[derive(Debug, Clone)]
pub struct Glyph {
    /// Its text (one or more characters; empty when the font gives none).
    pub text: String,
    /// Left edge.
    pub x0: f32,
    /// Right edge (origin + advance).
    pub x1: f32,
    /// Baseline, from the top of the page.
    pub y: f32,
    /// Font size on the page (points).
    pub size: f32,
    /// Bold font (or fill-and-stroke rendering).
    pub bold: bool,
    /// Whether the text runs left to right, upright.
    pub upright: bool,
    /// A space character.
    pub space: bool,
    /// Writing direction on the page: 0 left to right, 1 bottom to top,
    /// 2 right to left (upside down), 3 top to bottom; 4 skewed.
    pub dir: u8,
    /// The end point's y before the page is turned (see [`orient`]).
    pub ey: f32,
}

/// A horizontal or vertical line drawn on the page.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Left.
    pub x0: f32,
    /// Top.
    pub y0: f32,
    /// Right.
    pub x1: f32,
    /// Bottom.
    pub y1: f32,
}

impl Rule {
    /// Whether it is horizontal.
    pub fn horizontal(&self) -> bool {
        self.x1 - self.x0 >= self.y1 - self.y0
    }
}

/// What one page holds.
#[derive(Debug, Default)]
pub struct PageContent {
    /// Every glyph, in content order.
    pub glyphs: Vec<Glyph>,
    /// Ruling lines.
    pub rules: Vec<Rule>,
    /// Page width.
    pub width: f32,
    /// Page height.
    pub height: f32,
    /// Codes the font could not turn into Unicode.
    pub unmapped: usize,
    /// Images drawn.
    pub images: usize,
    /// Image XObjects drawn, with where (for OCR of a scanned page).
    pub drawn: Vec<Drawn>,
    /// A problem reading the page's content, if any.
    pub problem: Option<String>,
}

/// An image XObject drawn on a page.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    /// The image's object, where it is one (not an inline dictionary).
    pub id: Option<ObjectId>,
    /// Where it is drawn: left, top, right, bottom (points from the top left).
    pub bbox: [f32; 4],
    /// Whether it is drawn upright (not turned or mirrored).
    pub upright: bool,
}

/// Fonts loaded once per document, keyed by object id.
#[derive(Default)]
pub struct FontCache(Mutex<HashMap<ObjectId, Arc<Font>>>);

impl FontCache {
    fn font(&self, doc: &Document, o: &Object) -> Option<Arc<Font>> {
        match o {
            Object::Reference(id) => {
                if let Some(f) = self.0.lock().ok()?.get(id) {
                    return Some(f.clone());
                }
                let d = doc.get_object(*id).ok()?.as_dict().ok()?;
                let f = Arc::new(Font::load(doc, d));
                self.0.lock().ok()?.insert(*id, f.clone());
                Some(f)
            }
            Object::Dictionary(d) => Some(Arc::new(Font::load(doc, d))),
            _ => None,
        }
    }
}

#[derive(Clone)]
struct GState {
    ctm: Matrix,
    font: Option<Arc<Font>>,
    size: f32,
    char_space: f32,
    word_space: f32,
    hscale: f32,
    leading: f32,
    rise: f32,
    render: i64,
    /// The fill and stroke colours, as far as telling white goes.
    fill: Paint,
    stroke: Paint,
}

/// What a colour operator set, as far as the rules go: a path filled or
/// stroked in white (a box blanking the paper under a table's notes)
/// draws nothing one can see.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Paint {
    /// The colour is white.
    white: bool,
    /// The colour space's components when it is a device space (gray 1,
    /// RGB 3, CMYK 4), so that `sc`/`scn` can be read; 0 for any other
    /// space (a separation's tint 0 is no ink, its 1 full ink: not read).
    device: usize,
}

impl Paint {
    /// The paint after `cs`/`CS` with the space's name.
    fn space(name: &[u8]) -> Self {
        let device = match name {
            b"DeviceGray" | b"G" => 1,
            b"DeviceRGB" | b"RGB" => 3,
            b"DeviceCMYK" | b"CMYK" => 4,
            _ => 0,
        };
        // A space's initial colour is black (or no tint).
        Self {
            white: false,
            device,
        }
    }

    /// The paint after setting the colour `c` in a device space of
    /// `c.len()` components (`g`, `rg`, `k`, or `sc` in such a space).
    fn device_colour(c: &[f32]) -> Self {
        let white = match c {
            [g] => *g >= 0.99,
            [r, g, b] => [r, g, b].iter().all(|v| **v >= 0.99),
            [c, m, y, k] => [c, m, y, k].iter().all(|v| **v <= 0.01),
            _ => false,
        };
        Self {
            white,
            device: c.len(),
        }
    }
}

/// Operators run per page at most (a guard against pathological streams).
const MAX_OPS: usize = 5_000_000;
/// Form XObjects nest at most this deep.
const MAX_DEPTH: usize = 12;

struct Interp<'a> {
    doc: &'a Document,
    fonts: &'a FontCache,
    out: PageContent,
    ops: usize,
    codes: Vec<Code>,
}

/// Page size: the CropBox (or MediaBox), inherited through the page tree.
pub fn page_box(doc: &Document, page: ObjectId) -> (f32, f32, f32, f32) {
    let mut node = doc.get_dictionary(page).ok();
    let mut depth = 0;
    while let Some(d) = node {
        for key in [b"CropBox".as_slice(), b"MediaBox"] {
            if let Some(Object::Array(a)) = get(doc, d, key) {
                let v: Vec<f32> = a
                    .iter()
                    .filter_map(|o| deref(doc, o).as_float().ok())
                    .collect();
                if v.len() == 4 {
                    return (
                        v[0].min(v[2]),
                        v[1].min(v[3]),
                        v[0].max(v[2]),
                        v[1].max(v[3]),
                    );
                }
            }
        }
        depth += 1;
        node = if depth < 32 {
            dict(doc, d, b"Parent")
        } else {
            None
        };
    }
    (0.0, 0.0, 612.0, 792.0)
}

/// The most a page's content (or one form or font stream) may inflate to:
/// real pages stay far below it (a dense vector map is a few MiB), a
/// decompression bomb (a small stream that inflates to gigabytes) is
/// refused here instead of exhausting memory.
pub const MAX_INFLATED: usize = 128 << 20;

/// Whether lopdf refused a stream for inflating past the limit.
pub fn is_over_limit(e: &lopdf::Error) -> bool {
    matches!(
        e,
        lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })
    )
}

/// The page problem for content that could not be inflated.
fn inflate_problem(what: &str, e: &lopdf::Error) -> String {
    if is_over_limit(e) {
        format!(
            "{what} inflates past {} MiB, so it was left out (a decompression bomb, or a damaged stream): if the page matters, re-save the PDF with a viewer",
            MAX_INFLATED >> 20
        )
    } else {
        format!("{what} could not be read ({e})")
    }
}

/// Runs one page.
pub fn run_page(doc: &Document, page: ObjectId, fonts: &FontCache) -> PageContent {
    let (x0, y0, x1, y1) = page_box(doc, page);
    let mut it = Interp {
        doc,
        fonts,
        out: PageContent::default(),
        ops: 0,
        codes: Vec::new(),
    };
    it.out.width = x1 - x0;
    it.out.height = y1 - y0;
    // Page space -> top-down coordinates: translate the box origin, flip y.
    let base = Matrix([1.0, 0.0, 0.0, -1.0, -x0, y1]);
    let (res, res_ids) = doc.get_page_resources(page).unwrap_or((None, Vec::new()));
    let mut resources: Vec<&Dictionary> = res.into_iter().collect();
    for id in res_ids {
        if let Ok(d) = doc.get_dictionary(id) {
            resources.push(d);
        }
    }
    match doc.get_page_content_with_limit(page, MAX_INFLATED) {
        Ok(content) => it.run(&content, &resources, base, 0),
        Err(e) => it.out.problem = Some(inflate_problem("the page's content", &e)),
    }
    orient(&mut it.out);
    it.out
}

/// Turns the page so that the direction most of its text runs in reads
/// left to right (a landscape table set sideways, a page with `/Rotate`),
/// then sets each glyph's left and right edge and baseline in that frame.
/// Text running any other way is marked not upright (and left out).
pub fn orient(page: &mut PageContent) {
    let mut counts = [0usize; 5];
    for g in &page.glyphs {
        counts[g.dir as usize] += 1;
    }
    let k = (0..4).max_by_key(|&i| (counts[i], i == 0)).unwrap_or(0);
    let d: (f32, f32) = [(1.0, 0.0), (0.0, -1.0), (-1.0, 0.0), (0.0, 1.0)][k];
    let n = (-d.1, d.0);
    let (w, h) = (page.width, page.height);
    let corners = [(0.0, 0.0), (w, 0.0), (0.0, h), (w, h)];
    let along = |p: (f32, f32)| p.0 * d.0 + p.1 * d.1;
    let across = |p: (f32, f32)| p.0 * n.0 + p.1 * n.1;
    let min_x = corners.iter().map(|&c| along(c)).fold(f32::MAX, f32::min);
    let max_x = corners.iter().map(|&c| along(c)).fold(f32::MIN, f32::max);
    let min_y = corners.iter().map(|&c| across(c)).fold(f32::MAX, f32::min);
    let max_y = corners.iter().map(|&c| across(c)).fold(f32::MIN, f32::max);
    for g in &mut page.glyphs {
        let (o, e) = ((g.x0, g.y), (g.x1, g.ey));
        let (a, b) = (along(o) - min_x, along(e) - min_x);
        g.x0 = a.min(b);
        g.x1 = a.max(b);
        g.y = across(o) - min_y;
        g.upright = g.dir as usize == k && (k != 0 || g.upright);
    }
    for r in &mut page.rules {
        let (p, q) = ((r.x0, r.y0), (r.x1, r.y1));
        let (x0, x1) = (along(p) - min_x, along(q) - min_x);
        let (y0, y1) = (across(p) - min_y, across(q) - min_y);
        *r = Rule {
            x0: x0.min(x1),
            y0: y0.min(y1),
            x1: x0.max(x1),
            y1: y0.max(y1),
        };
    }
    for d in &mut page.drawn {
        let [bx0, by0, bx1, by1] = d.bbox;
        let (x0, x1) = (along((bx0, by0)) - min_x, along((bx1, by1)) - min_x);
        let (y0, y1) = (across((bx0, by0)) - min_y, across((bx1, by1)) - min_y);
        d.bbox = [x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1)];
        d.upright &= k == 0;
    }
    page.width = max_x - min_x;
    page.height = max_y - min_y;
}

impl<'a> Interp<'a> {
    fn resource(&self, res: &[&'a Dictionary], cat: &[u8], key: &[u8]) -> Option<&'a Object> {
        for r in res {
            if let Some(d) = dict(self.doc, r, cat) {
                if let Ok(o) = d.get(key) {
                    return Some(o);
                }
            }
        }
        None
    }

    fn run(&mut self, content: &[u8], res: &[&'a Dictionary], ctm: Matrix, depth: usize) {
        let mut gs = GState {
            ctm,
            font: None,
            size: 0.0,
            char_space: 0.0,
            word_space: 0.0,
            hscale: 1.0,
            leading: 0.0,
            rise: 0.0,
            render: 0,
            fill: Paint::default(),
            stroke: Paint::default(),
        };
        let mut stack: Vec<GState> = Vec::new();
        let mut tm = Matrix::ID;
        let mut tlm = Matrix::ID;
        let mut path: Vec<(f32, f32, f32, f32)> = Vec::new();
        let mut cur = (0.0f32, 0.0f32);
        let mut start = (0.0f32, 0.0f32);
        for op in Content::decode_iter(content) {
            let op = match op {
                Ok(op) => op,
                Err(e) => {
                    self.out
                        .problem
                        .get_or_insert_with(|| format!("content stream cut short: {e}"));
                    break;
                }
            };
            self.ops += 1;
            if self.ops > MAX_OPS {
                self.out.problem.get_or_insert_with(|| {
                    "page has too many drawing operations; the rest was skipped".into()
                });
                break;
            }
            let a = &op.operands;
            let f = |i: usize| a.get(i).and_then(|o| o.as_float().ok()).unwrap_or(0.0);
            match op.operator.as_str() {
                "q" => stack.push(gs.clone()),
                "Q" => {
                    if let Some(g) = stack.pop() {
                        gs = g;
                    }
                }
                "cm" => {
                    if let Some(m) = Matrix::from_operands(a) {
                        gs.ctm = m.mul(&gs.ctm);
                    }
                }
                "BT" => {
                    tm = Matrix::ID;
                    tlm = Matrix::ID;
                }
                "Tf" => {
                    gs.size = f(1);
                    gs.font = a
                        .first()
                        .and_then(|n| n.as_name().ok())
                        .and_then(|n| self.resource(res, b"Font", n))
                        .and_then(|o| self.fonts.font(self.doc, o));
                }
                "Tc" => gs.char_space = f(0),
                "Tw" => gs.word_space = f(0),
                "Tz" => gs.hscale = f(0) / 100.0,
                "TL" => gs.leading = f(0),
                "Ts" => gs.rise = f(0),
                "Tr" => gs.render = a.first().and_then(|o| o.as_i64().ok()).unwrap_or(0),
                "g" | "rg" | "k" | "G" | "RG" | "K" | "sc" | "scn" | "SC" | "SCN" => {
                    let stroke = op.operator.starts_with(|c: char| c.is_ascii_uppercase());
                    let paint = if stroke { &mut gs.stroke } else { &mut gs.fill };
                    let nums: Vec<f32> = a.iter().filter_map(|o| o.as_float().ok()).collect();
                    let device =
                        matches!(op.operator.as_str(), "g" | "rg" | "k" | "G" | "RG" | "K");
                    *paint = if (device || paint.device == nums.len()) && nums.len() == a.len() {
                        Paint::device_colour(&nums)
                    } else {
                        Paint {
                            white: false,
                            ..*paint
                        }
                    };
                }
                "cs" | "CS" => {
                    let space = a.first().and_then(|o| o.as_name().ok()).unwrap_or(b"");
                    let paint = Paint::space(space);
                    if op.operator == "cs" {
                        gs.fill = paint;
                    } else {
                        gs.stroke = paint;
                    }
                }
                "Td" => {
                    tlm = Matrix::translate(f(0), f(1)).mul(&tlm);
                    tm = tlm;
                }
                "TD" => {
                    gs.leading = -f(1);
                    tlm = Matrix::translate(f(0), f(1)).mul(&tlm);
                    tm = tlm;
                }
                "Tm" => {
                    if let Some(m) = Matrix::from_operands(a) {
                        tlm = m;
                        tm = m;
                    }
                }
                "T*" => {
                    tlm = Matrix::translate(0.0, -gs.leading).mul(&tlm);
                    tm = tlm;
                }
                "Tj" => {
                    if let Some(Object::String(s, _)) = a.first() {
                        self.show(&gs, &mut tm, s);
                    }
                }
                "'" => {
                    tlm = Matrix::translate(0.0, -gs.leading).mul(&tlm);
                    tm = tlm;
                    if let Some(Object::String(s, _)) = a.first() {
                        self.show(&gs, &mut tm, s);
                    }
                }
                "\"" => {
                    gs.word_space = f(0);
                    gs.char_space = f(1);
                    tlm = Matrix::translate(0.0, -gs.leading).mul(&tlm);
                    tm = tlm;
                    if let Some(Object::String(s, _)) = a.get(2) {
                        self.show(&gs, &mut tm, s);
                    }
                }
                "TJ" => {
                    if let Some(Object::Array(items)) = a.first() {
                        for item in items {
                            match item {
                                Object::String(s, _) => self.show(&gs, &mut tm, s),
                                o => {
                                    if let Ok(n) = o.as_float() {
                                        let tx = -n / 1000.0 * gs.size * gs.hscale;
                                        tm = Matrix::translate(tx, 0.0).mul(&tm);
                                    }
                                }
                            }
                        }
                    }
                }
                "Do" => {
                    let Some(n) = a.first().and_then(|n| n.as_name().ok()) else {
                        continue;
                    };
                    let Some(obj) = self.resource(res, b"XObject", n) else {
                        continue;
                    };
                    let Ok(stream) = deref(self.doc, obj).as_stream() else {
                        continue;
                    };
                    match stream.dict.get(b"Subtype").and_then(|o| o.as_name()) {
                        Ok(b"Image") => {
                            self.out.images += 1;
                            let c = gs.ctm;
                            let pts = [
                                c.apply(0.0, 0.0),
                                c.apply(1.0, 0.0),
                                c.apply(0.0, 1.0),
                                c.apply(1.0, 1.0),
                            ];
                            let xs = pts.iter().map(|p| p.0);
                            let ys = pts.iter().map(|p| p.1);
                            let bbox = [
                                xs.clone().fold(f32::MAX, f32::min),
                                ys.clone().fold(f32::MAX, f32::min),
                                xs.fold(f32::MIN, f32::max),
                                ys.fold(f32::MIN, f32::max),
                            ];
                            // Upright: the image's top row (unit y = 1) is
                            // drawn above its bottom one, left to right.
                            let upright = pts[2].1 < pts[0].1 && pts[1].0 > pts[0].0;
                            self.out.drawn.push(Drawn {
                                id: match obj {
                                    Object::Reference(id) => Some(*id),
                                    _ => None,
                                },
                                bbox,
                                upright,
                            });
                        }
                        Ok(b"Form") if depth < MAX_DEPTH => {
                            let m = match stream.dict.get(b"Matrix") {
                                Ok(Object::Array(v)) => {
                                    Matrix::from_operands(v).unwrap_or(Matrix::ID)
                                }
                                _ => Matrix::ID,
                            };
                            let mut inner: Vec<&'a Dictionary> = Vec::new();
                            if let Some(r) = dict(self.doc, &stream.dict, b"Resources") {
                                inner.push(r);
                            }
                            inner.extend_from_slice(res);
                            let data = match stream.decompressed_content_with_limit(MAX_INFLATED) {
                                Ok(d) => d,
                                Err(e) if is_over_limit(&e) => {
                                    self.out.problem.get_or_insert_with(|| {
                                        inflate_problem("a form on the page", &e)
                                    });
                                    continue;
                                }
                                Err(_) => stream.content.clone(),
                            };
                            self.run(&data, &inner, m.mul(&gs.ctm), depth + 1);
                        }
                        _ => {}
                    }
                }
                "BI" | "EI" => self.out.images += usize::from(op.operator == "EI"),
                "m" => {
                    cur = gs.ctm.apply(f(0), f(1));
                    start = cur;
                }
                "l" => {
                    let p = gs.ctm.apply(f(0), f(1));
                    path.push((cur.0, cur.1, p.0, p.1));
                    cur = p;
                }
                "h" => {
                    path.push((cur.0, cur.1, start.0, start.1));
                    cur = start;
                }
                "re" => {
                    let (x, y, w, h) = (f(0), f(1), f(2), f(3));
                    let p = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
                        .map(|(px, py)| gs.ctm.apply(px, py));
                    let (minx, maxx) = (
                        p.iter().map(|q| q.0).fold(f32::MAX, f32::min),
                        p.iter().map(|q| q.0).fold(f32::MIN, f32::max),
                    );
                    let (miny, maxy) = (
                        p.iter().map(|q| q.1).fold(f32::MAX, f32::min),
                        p.iter().map(|q| q.1).fold(f32::MIN, f32::max),
                    );
                    // A thin filled rectangle is a rule; a box is four.
                    if maxy - miny < 3.0 || maxx - minx < 3.0 {
                        path.push((minx, (miny + maxy) / 2.0, maxx, (miny + maxy) / 2.0));
                        if maxx - minx < 3.0 {
                            path.pop();
                            path.push(((minx + maxx) / 2.0, miny, (minx + maxx) / 2.0, maxy));
                        }
                    } else {
                        path.push((minx, miny, maxx, miny));
                        path.push((minx, maxy, maxx, maxy));
                        path.push((minx, miny, minx, maxy));
                        path.push((maxx, miny, maxx, maxy));
                    }
                    cur = p[0];
                    start = p[0];
                }
                "S" | "s" | "f" | "F" | "f*" | "B" | "B*" | "b" | "b*" => {
                    let filled = !matches!(op.operator.as_str(), "S" | "s");
                    let stroked =
                        matches!(op.operator.as_str(), "S" | "s" | "B" | "B*" | "b" | "b*");
                    // White on the paper is nothing to see.
                    let seen = (filled && !gs.fill.white) || (stroked && !gs.stroke.white);
                    if !seen {
                        path.clear();
                    }
                    for (x0, y0, x1, y1) in path.drain(..) {
                        let r = Rule {
                            x0: x0.min(x1),
                            y0: y0.min(y1),
                            x1: x0.max(x1),
                            y1: y0.max(y1),
                        };
                        let (w, h) = (r.x1 - r.x0, r.y1 - r.y0);
                        if (h < 1.5 && w > 5.0) || (w < 1.5 && h > 5.0) {
                            self.out.rules.push(r);
                        }
                    }
                }
                "n" => path.clear(),
                _ => {}
            }
        }
    }

    fn show(&mut self, gs: &GState, tm: &mut Matrix, bytes: &[u8]) {
        let Some(font) = gs.font.clone() else { return };
        self.codes.clear();
        let mut codes = std::mem::take(&mut self.codes);
        font.decode(bytes, &mut codes);
        for code in &codes {
            let rm = Matrix([gs.size * gs.hscale, 0.0, 0.0, gs.size, 0.0, gs.rise])
                .mul(tm)
                .mul(&gs.ctm);
            let adv = (code.width * gs.size
                + gs.char_space
                + if code.is_space_byte {
                    gs.word_space
                } else {
                    0.0
                })
                * gs.hscale;
            let (ox, oy) = rm.apply(0.0, 0.0);
            let next = Matrix::translate(adv, 0.0).mul(tm);
            // The glyph's visible right edge: its width, without the
            // character and word spacing that follow it.
            let (ex, ey) = rm.apply(code.width, 0.0);
            let [a, b, c, d, _, _] = rm.0;
            let size = (c * c + d * d).sqrt();
            let dir = if b.abs() <= a.abs() * 0.2 {
                if a > 0.0 {
                    0
                } else {
                    2
                }
            } else if a.abs() <= b.abs() * 0.2 {
                if b < 0.0 {
                    1
                } else {
                    3
                }
            } else {
                4
            };
            let mut upright = dir == 0 && d < 0.0;
            let (mut dir, mut text, mut ey) = (dir, code.text.as_str(), ey);
            // A plus turned a quarter of a right angle among upright text is
            // a multiplication sign ("1 × 6" set as "1", a "+" at 45°, "6"):
            // read as one, upright, on the line.
            if dir == 4 && a > 0.0 && (a.abs() - b.abs()).abs() < 0.05 * a.abs() && code.text == "+"
            {
                (dir, text, ey, upright) = (0, "\u{d7}", oy, true);
            }
            if code.unmapped {
                self.out.unmapped += 1;
            }
            let space = text.chars().all(char::is_whitespace) && !text.is_empty();
            if gs.render != 3 || !text.is_empty() {
                self.out.glyphs.push(Glyph {
                    text: text.to_string(),
                    x0: ox,
                    x1: ex,
                    y: oy,
                    size,
                    bold: font.bold || gs.render == 2,
                    upright,
                    space,
                    dir,
                    ey,
                });
            }
            *tm = next;
        }
        self.codes = codes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::{dictionary, Object, Stream};

    /// What a page whose content stream is `content` draws and shows, with
    /// Helvetica as /F1.
    fn page_of(content: &str) -> PageContent {
        let mut doc = Document::with_version("1.5");
        let pages = doc.new_object_id();
        let contents = doc.add_object(Stream::new(dictionary! {}, content.as_bytes().to_vec()));
        let font = doc.add_object(dictionary! {
            "Type" => "Font",
            "Subtype" => "Type1",
            "BaseFont" => "Helvetica",
            "Encoding" => "WinAnsiEncoding",
        });
        let page = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages,
            "Contents" => contents,
            "MediaBox" => vec![0.into(), 0.into(), 600.into(), 800.into()],
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
        });
        doc.objects.insert(
            pages,
            Object::Dictionary(dictionary! {
                "Type" => "Pages",
                "Kids" => vec![page.into()],
                "Count" => 1,
            }),
        );
        run_page(&doc, page, &FontCache::default())
    }

    /// The rules a page whose content stream is `content` draws.
    fn rules_of(content: &str) -> Vec<Rule> {
        page_of(content).rules
    }

    /// The glyphs a page whose content stream is `content` shows.
    fn glyphs_of(content: &str) -> Vec<Glyph> {
        page_of(content).glyphs
    }

    #[test]
    fn a_plus_turned_45_degrees_is_a_multiplication_sign() {
        // "1 × 6" set as "1", a "+" turned 45°, "6" (a typesetter's ×).
        let g = glyphs_of(
            "BT /F1 10 Tf 100 700 Td (1) Tj ET \
             BT 7.07 7.07 -7.07 7.07 107 699 Tm /F1 1 Tf (+) Tj ET \
             BT /F1 10 Tf 114 700 Td (6) Tj ET",
        );
        let texts: Vec<(&str, bool)> = g.iter().map(|g| (g.text.as_str(), g.upright)).collect();
        assert_eq!(texts, [("1", true), ("\u{d7}", true), ("6", true)]);
        assert!(g[1].x0 > g[0].x1 && g[1].x1 < g[2].x0, "{g:?}");
        // Other turned text stays turned, and so does a plus turned a
        // right angle.
        let g = glyphs_of(
            "BT 7.07 7.07 -7.07 7.07 107 699 Tm /F1 1 Tf (x) Tj ET \
             BT 0 10 -10 0 107 699 Tm /F1 1 Tf (+) Tj ET \
             BT /F1 10 Tf 114 700 Td (66) Tj ET",
        );
        assert!(
            g.iter().filter(|g| g.upright).all(|g| g.text == "6"),
            "{g:?}"
        );
    }

    #[test]
    fn white_paint_draws_no_rules() {
        // A black line, and a box filled grey: both seen.
        assert_eq!(rules_of("0 G 10 700 m 300 700 l S").len(), 1);
        assert_eq!(rules_of("0.9 g 10 500 300 1 re f").len(), 1);
        // A white box under a table's notes, in gray, RGB and CMYK, and a
        // white stroke: nothing to see.
        for white in [
            "1 g 10 500 300 20 re f",
            "1 1 1 rg 10 500 300 20 re f",
            "0 0 0 0 k 10 500 300 20 re f",
            "/DeviceCMYK cs 0 0 0 0 sc 10 500 300 20 re f",
            "1 G 10 700 m 300 700 l S",
        ] {
            assert!(rules_of(white).is_empty(), "{white}");
        }
        // The colour comes back with the saved state; a separation's tint
        // is not read as white.
        assert_eq!(rules_of("q 1 g Q 10 500 300 20 re f").len(), 4);
        assert_eq!(rules_of("/CS0 cs 0 sc 10 500 300 20 re f").len(), 4);
    }
}
