//! TEDS, the tree-edit-distance-based similarity of two tables that
//! PubTabNet introduced (Zhong et al., "Image-based table recognition:
//! data, model, and evaluation", ECCV 2020), computed as its reference
//! implementation does: each table is a tree (table, its row groups, rows
//! and cells, the cell's tokens its content); inserting or deleting a node
//! costs 1, renaming a node costs 1 unless the two have the same tag and
//! spans, and then, for cells, the Levenshtein distance of their tokens over
//! the longer token list; TEDS = 1 - distance / the larger table's element
//! count. The edit distance is Zhang and Shasha's exact ordered tree edit
//! distance.

use crate::ingest::Cell;

/// A node of a table tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The element's tag: table, thead, tbody, tr, td.
    pub tag: String,
    /// colspan and rowspan of a cell (1 when not given); 0 elsewhere.
    pub spans: (u32, u32),
    /// A cell's tokens: its characters, and its inline elements as
    /// `<b>` ... `</b>`.
    pub content: Vec<String>,
    /// Child nodes (a cell's are not kept: its content stands for them).
    pub children: Vec<Node>,
}

impl Node {
    fn new(tag: &str) -> Self {
        Self {
            tag: tag.to_string(),
            spans: (0, 0),
            content: Vec::new(),
            children: Vec::new(),
        }
    }
}

/// An HTML element as parsed: tag, attributes, children.
#[derive(Debug, Default)]
struct Element {
    tag: String,
    attrs: Vec<(String, String)>,
    children: Vec<Item>,
}

#[derive(Debug)]
enum Item {
    Text(String),
    Element(Element),
}

/// Elements HTML never closes.
const VOID: &[&str] = &[
    "br", "img", "hr", "meta", "input", "link", "col", "area", "base", "wbr",
];

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let Some(end) = after.find(';').filter(|&e| e <= 10) else {
            out.push('&');
            rest = after;
            continue;
        };
        let name = &after[..end];
        let ch = match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some('\u{a0}'),
            n if n.starts_with("#x") || n.starts_with("#X") => u32::from_str_radix(&n[2..], 16)
                .ok()
                .and_then(char::from_u32),
            n if n.starts_with('#') => n[1..].parse::<u32>().ok().and_then(char::from_u32),
            _ => None,
        };
        match ch {
            Some(c) => {
                out.push(c);
                rest = &after[end + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Parses HTML into a tree of elements under a synthetic root. Lenient as
/// browsers are: a `<` that starts no tag is text, an unmatched end tag is
/// dropped, open elements close at the end; comments, doctype and the
/// contents of `script` and `style` are skipped.
fn parse_html(html: &str) -> Element {
    let mut stack: Vec<Element> = vec![Element::default()];
    let mut text = String::new();
    let flush = |text: &mut String, stack: &mut Vec<Element>| {
        if !text.is_empty() {
            let t = decode_entities(text);
            if let Some(top) = stack.last_mut() {
                top.children.push(Item::Text(t));
            }
            text.clear();
        }
    };
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        text.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(body) = after.strip_prefix("!--") {
            flush(&mut text, &mut stack);
            rest = body.find("-->").map_or("", |e| &body[e + 3..]);
            continue;
        }
        let closing = after.starts_with('/');
        let name_start = if closing { &after[1..] } else { after };
        let is_tag = name_start.starts_with(|c: char| c.is_ascii_alphabetic())
            || (!closing && name_start.starts_with('!'));
        let Some(end) = after.find('>').filter(|_| is_tag) else {
            text.push('<');
            rest = after;
            continue;
        };
        flush(&mut text, &mut stack);
        let inner = &after[..end];
        rest = &after[end + 1..];
        if inner.starts_with('!') || inner.starts_with('?') {
            continue;
        }
        if closing {
            let name = inner[1..].trim().to_ascii_lowercase();
            if let Some(pos) = stack.iter().rposition(|e| e.tag == name) {
                while stack.len() > pos {
                    let Some(done) = stack.pop() else { break };
                    if let Some(parent) = stack.last_mut() {
                        parent.children.push(Item::Element(done));
                    }
                }
            }
            continue;
        }
        let self_closing = inner.ends_with('/');
        let inner = inner.trim_end_matches('/');
        let name_end = inner
            .find(|c: char| c.is_whitespace())
            .unwrap_or(inner.len());
        let tag = inner[..name_end].to_ascii_lowercase();
        let attrs = parse_attrs(&inner[name_end..]);
        let el = Element {
            tag: tag.clone(),
            attrs,
            children: Vec::new(),
        };
        if tag == "script" || tag == "style" {
            let close = format!("</{tag}");
            rest = rest
                .to_ascii_lowercase()
                .find(&close)
                .and_then(|p| rest[p..].find('>').map(|q| &rest[p + q + 1..]))
                .unwrap_or("");
            continue;
        }
        if self_closing || VOID.contains(&tag.as_str()) {
            if let Some(top) = stack.last_mut() {
                top.children.push(Item::Element(el));
            }
        } else {
            stack.push(el);
        }
    }
    text.push_str(rest);
    flush(&mut text, &mut stack);
    while stack.len() > 1 {
        let Some(done) = stack.pop() else { break };
        if let Some(parent) = stack.last_mut() {
            parent.children.push(Item::Element(done));
        }
    }
    stack.pop().unwrap_or_default()
}

fn parse_attrs(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let name_end = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        rest = rest[name_end..].trim_start();
        let mut value = String::new();
        if let Some(v) = rest.strip_prefix('=') {
            let v = v.trim_start();
            if let Some(q) = v.chars().next().filter(|c| *c == '"' || *c == '\'') {
                let body = &v[1..];
                let end = body.find(q).unwrap_or(body.len());
                value = body[..end].to_string();
                rest = body.get(end + 1..).unwrap_or("");
            } else {
                let end = v.find(char::is_whitespace).unwrap_or(v.len());
                value = v[..end].to_string();
                rest = &v[end..];
            }
        }
        if !name.is_empty() {
            out.push((name, decode_entities(&value)));
        }
        rest = rest.trim_start();
    }
    out
}

fn find_table(el: &Element) -> Option<&Element> {
    if el.tag == "table" {
        return Some(el);
    }
    el.children.iter().find_map(|c| match c {
        Item::Element(e) => find_table(e),
        Item::Text(_) => None,
    })
}

/// A cell's tokens as the reference implementation makes them.
fn tokens(el: &Element, out: &mut Vec<String>) {
    for c in &el.children {
        match c {
            Item::Text(t) => out.extend(t.chars().map(String::from)),
            Item::Element(e) => {
                out.push(format!("<{}>", e.tag));
                tokens(e, out);
                out.push(format!("</{}>", e.tag));
            }
        }
    }
}

fn count_elements(el: &Element) -> usize {
    el.children
        .iter()
        .map(|c| match c {
            Item::Element(e) => 1 + count_elements(e),
            Item::Text(_) => 0,
        })
        .sum()
}

fn to_tree(el: &Element) -> Node {
    let mut node = Node::new(&el.tag);
    if el.tag == "td" {
        let span = |name: &str| {
            el.attrs
                .iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.trim().parse::<u32>().ok())
                .unwrap_or(1)
        };
        node.spans = (span("colspan"), span("rowspan"));
        tokens(el, &mut node.content);
    } else {
        for c in &el.children {
            if let Item::Element(e) = c {
                node.children.push(to_tree(e));
            }
        }
    }
    node
}

/// The first table of an HTML document as a tree, and its element count
/// (every element inside the table, as TEDS normalises by it).
pub fn table_tree(html: &str) -> Option<(Node, usize)> {
    let doc = parse_html(html);
    let table = find_table(&doc)?;
    Some((to_tree(table), count_elements(table)))
}

/// A table's cells (as quarry's blocks carry them) as a tree: rows of
/// cells, a header row's cells bold (`<b>`), and the element count.
pub fn cells_tree(cells: &[Cell]) -> (Node, usize) {
    let mut table = Node::new("table");
    let rows = cells.iter().map(|c| c.row + 1).max().unwrap_or(0);
    let mut count = 0;
    for r in 0..rows {
        let mut tr = Node::new("tr");
        count += 1;
        let mut row: Vec<&Cell> = cells.iter().filter(|c| c.row == r).collect();
        row.sort_by_key(|c| c.col);
        for c in row {
            let mut td = Node::new("td");
            td.spans = (c.col_span.max(1), c.row_span.max(1));
            let text = c.text.split_whitespace().collect::<Vec<_>>().join(" ");
            td.content = text.chars().map(String::from).collect();
            count += 1;
            tr.children.push(td);
        }
        table.children.push(tr);
    }
    (table, count)
}

fn levenshtein(a: &[String], b: &[String]) -> usize {
    if a.is_empty() || b.is_empty() {
        return a.len().max(b.len());
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, x) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(x != y);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

fn rename_cost(a: &Node, b: &Node) -> f64 {
    if a.tag != b.tag || a.spans != b.spans {
        return 1.0;
    }
    if a.tag == "td" && (!a.content.is_empty() || !b.content.is_empty()) {
        let longest = a.content.len().max(b.content.len()) as f64;
        return levenshtein(&a.content, &b.content) as f64 / longest;
    }
    0.0
}

/// A tree in postorder with each node's leftmost leaf descendant.
struct Postorder<'a> {
    nodes: Vec<&'a Node>,
    leftmost: Vec<usize>,
    keyroots: Vec<usize>,
}

impl<'a> Postorder<'a> {
    fn new(root: &'a Node) -> Self {
        fn walk<'a>(n: &'a Node, nodes: &mut Vec<&'a Node>, leftmost: &mut Vec<usize>) -> usize {
            let mut first = None;
            for c in &n.children {
                let l = walk(c, nodes, leftmost);
                first.get_or_insert(l);
            }
            let me = nodes.len();
            nodes.push(n);
            let l = first.unwrap_or(me);
            leftmost.push(l);
            l
        }
        let (mut nodes, mut leftmost) = (Vec::new(), Vec::new());
        walk(root, &mut nodes, &mut leftmost);
        // A keyroot: the last node (in postorder) with its leftmost leaf.
        let mut keyroots = Vec::new();
        for i in 0..nodes.len() {
            if !(i + 1..nodes.len()).any(|k| leftmost[k] == leftmost[i]) {
                keyroots.push(i);
            }
        }
        Self {
            nodes,
            leftmost,
            keyroots,
        }
    }
}

/// Zhang and Shasha's ordered tree edit distance, insert and delete 1.
pub fn tree_edit_distance(a: &Node, b: &Node) -> f64 {
    let (t1, t2) = (Postorder::new(a), Postorder::new(b));
    let (n1, n2) = (t1.nodes.len(), t2.nodes.len());
    let mut td = vec![vec![0.0f64; n2]; n1];
    for &i in &t1.keyroots {
        for &j in &t2.keyroots {
            let (li, lj) = (t1.leftmost[i], t2.leftmost[j]);
            let (m, n) = (i - li + 2, j - lj + 2);
            let mut fd = vec![vec![0.0f64; n]; m];
            for x in 1..m {
                fd[x][0] = fd[x - 1][0] + 1.0;
            }
            for y in 1..n {
                fd[0][y] = fd[0][y - 1] + 1.0;
            }
            for x in 1..m {
                let i1 = li + x - 1;
                for y in 1..n {
                    let j1 = lj + y - 1;
                    let del = fd[x - 1][y] + 1.0;
                    let ins = fd[x][y - 1] + 1.0;
                    if t1.leftmost[i1] == li && t2.leftmost[j1] == lj {
                        let ren = fd[x - 1][y - 1] + rename_cost(t1.nodes[i1], t2.nodes[j1]);
                        fd[x][y] = del.min(ins).min(ren);
                        td[i1][j1] = fd[x][y];
                    } else {
                        let (p, q) = (t1.leftmost[i1] - li, t2.leftmost[j1] - lj);
                        fd[x][y] = del.min(ins).min(fd[p][q] + td[i1][j1]);
                    }
                }
            }
        }
    }
    td[n1 - 1][n2 - 1]
}

/// TEDS of two trees with their element counts: 1 for equal tables, 0 when
/// either is missing.
pub fn teds(pred: Option<&(Node, usize)>, truth: Option<&(Node, usize)>) -> f64 {
    let (Some((p, np)), Some((t, nt))) = (pred, truth) else {
        return 0.0;
    };
    let n = (*np).max(*nt);
    if n == 0 {
        return 1.0;
    }
    1.0 - tree_edit_distance(p, t) / n as f64
}

/// TEDS of two HTML tables (PubTabNet's `TEDS().evaluate(pred, true)`).
///
/// ```
/// use quarry::eval::teds::teds_html;
/// let t = "<table><tr><td>a</td><td>b</td></tr></table>";
/// assert_eq!(teds_html(t, t), 1.0);
/// assert!(teds_html("<table><tr><td>a</td></tr></table>", t) < 1.0);
/// ```
pub fn teds_html(pred: &str, truth: &str) -> f64 {
    teds(table_tree(pred).as_ref(), table_tree(truth).as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_of_small_trees() {
        let a = table_tree("<table><tr><td>x</td></tr></table>").unwrap();
        let b = table_tree("<table><tr><td>x</td><td>y</td></tr></table>").unwrap();
        assert_eq!(tree_edit_distance(&a.0, &a.0), 0.0);
        assert_eq!(tree_edit_distance(&a.0, &b.0), 1.0);
        assert_eq!(tree_edit_distance(&b.0, &a.0), 1.0);
        let c = table_tree("<table><tr><td>xy</td></tr></table>").unwrap();
        assert_eq!(tree_edit_distance(&a.0, &c.0), 0.5);
        let d = table_tree("<table><tr><td colspan=\"2\">x</td></tr></table>").unwrap();
        assert_eq!(tree_edit_distance(&a.0, &d.0), 1.0);
    }

    #[test]
    fn html_is_read_leniently() {
        let (t, n) = table_tree(
            "<html><head><style>td{}</style></head><body><table><thead><tr><td><b>p &lt;0.05</b> <0.1</td></tr></thead></table></body></html>",
        )
        .unwrap();
        assert_eq!(n, 4); // thead, tr, td, b
        let td = &t.children[0].children[0].children[0];
        let s: String = td.content.concat();
        assert_eq!(s, "<b>p <0.05</b> <0.1");
    }
}

#[cfg(test)]
mod reference {
    use super::teds_html;

    fn data(name: &str) -> String {
        let path = format!("{}/tests/data/pubtabnet/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The scores PubTabNet's own TEDS gives its demo pair and its 20
    /// sample predictions (tests/data/pubtabnet, CDLA-Permissive-1.0).
    #[test]
    fn matches_the_reference_scores() {
        let demo: serde_json::Value = serde_json::from_str(&data("demo_single_pair.json")).unwrap();
        let got = teds_html(
            demo["pred"].as_str().unwrap(),
            demo["true"].as_str().unwrap(),
        );
        let want = demo["expected_teds"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9, "demo: {got} against {want}");
        let gt: serde_json::Value = serde_json::from_str(&data("sample_gt.json")).unwrap();
        let pred: serde_json::Value = serde_json::from_str(&data("sample_pred.json")).unwrap();
        let expected = data("expected_teds_scores_from_demo_ipynb.txt");
        let mut checked = 0;
        for line in expected.lines() {
            let Some((name, score)) = line
                .trim()
                .trim_start_matches('{')
                .trim_end_matches(['}', ','])
                .split_once(':')
            else {
                continue;
            };
            let name = name.trim().trim_matches('\'');
            let Ok(want) = score.trim().parse::<f64>() else {
                continue;
            };
            if !name.ends_with(".png") {
                continue; // the demo pair's line
            }
            let got = teds_html(
                pred[name].as_str().unwrap(),
                gt[name]["html"].as_str().unwrap(),
            );
            assert!((got - want).abs() < 1e-9, "{name}: {got} against {want}");
            checked += 1;
        }
        assert_eq!(checked, 20);
    }
}
