//! A faithful port of Python's `difflib.SequenceMatcher` ratio (no junk,
//! `autojunk=False`): the same longest-match rule and tie-breaking, so a span
//! quarry locates is the span difflib would choose.

use std::collections::HashMap;

/// The state of a `SequenceMatcher` over a fixed `b`: where each char of
/// `b` occurs, and the run-length buffers reused between searches.
struct Matcher<'b> {
    b: &'b [char],
    b2j: HashMap<char, Vec<usize>>,
    prev: Vec<u32>,
    cur: Vec<u32>,
    touched: Vec<usize>,
    cur_touched: Vec<usize>,
}

impl<'b> Matcher<'b> {
    fn new(b: &'b [char]) -> Self {
        let mut b2j: HashMap<char, Vec<usize>> = HashMap::new();
        for (j, &c) in b.iter().enumerate() {
            b2j.entry(c).or_default().push(j);
        }
        Self {
            b,
            b2j,
            prev: vec![0; b.len() + 1],
            cur: vec![0; b.len() + 1],
            touched: Vec::new(),
            cur_touched: Vec::new(),
        }
    }

    /// `find_longest_match(alo, ahi, blo, bhi)`: the longest common block,
    /// the one ending earliest in `a` among the longest, then earliest in `b`.
    fn longest(
        &mut self,
        a: &[char],
        (alo, ahi, blo, bhi): (usize, usize, usize, usize),
    ) -> (usize, usize, usize) {
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0usize);
        for &t in &self.touched {
            self.prev[t] = 0;
        }
        self.touched.clear();
        for (i, ch) in a.iter().enumerate().take(ahi).skip(alo) {
            self.cur_touched.clear();
            if let Some(js) = self.b2j.get(ch) {
                for &j in js {
                    if j < blo {
                        continue;
                    }
                    if j >= bhi {
                        break;
                    }
                    // prev is indexed by j + 1: prev[j] is the run ending at j - 1.
                    let k = self.prev[j] + 1;
                    self.cur[j + 1] = k;
                    self.cur_touched.push(j + 1);
                    if k as usize > bestsize {
                        besti = i + 1 - k as usize;
                        bestj = j + 1 - k as usize;
                        bestsize = k as usize;
                    }
                }
            }
            for &t in &self.touched {
                self.prev[t] = 0;
            }
            std::mem::swap(&mut self.prev, &mut self.cur);
            std::mem::swap(&mut self.touched, &mut self.cur_touched);
        }
        (besti, bestj, bestsize)
    }
}

/// `SequenceMatcher(None, a, b, autojunk=False).find_longest_match()` over
/// the whole of both: `(i, j, k)` with `a[i..i+k] == b[j..j+k]`.
pub fn find_longest_match(a: &[char], b: &[char]) -> (usize, usize, usize) {
    Matcher::new(b).longest(a, (0, a.len(), 0, b.len()))
}

/// The number of matching chars difflib finds between `a` and `b`.
pub fn matches(a: &[char], b: &[char]) -> usize {
    let mut m = Matcher::new(b);
    let mut queue = vec![(0, a.len(), 0, m.b.len())];
    let mut total = 0;
    while let Some(q) = queue.pop() {
        let (alo, ahi, blo, bhi) = q;
        let (i, j, k) = m.longest(a, q);
        if k > 0 {
            total += k;
            if alo < i && blo < j {
                queue.push((alo, i, blo, j));
            }
            if i + k < ahi && j + k < bhi {
                queue.push((i + k, ahi, j + k, bhi));
            }
        }
    }
    total
}

/// `SequenceMatcher(None, a, b, autojunk=False).ratio()`.
pub fn ratio(a: &[char], b: &[char]) -> f64 {
    let t = a.len() + b.len();
    if t == 0 {
        return 1.0;
    }
    2.0 * matches(a, b) as f64 / t as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: &str, b: &str) -> f64 {
        ratio(
            &a.chars().collect::<Vec<_>>(),
            &b.chars().collect::<Vec<_>>(),
        )
    }

    /// Values printed by CPython 3.11's difflib for the same pairs.
    #[test]
    fn agrees_with_python() {
        assert_eq!(r("abcd", "bcde"), 0.75);
        assert_eq!(r("", ""), 1.0);
        assert_eq!(r("abc", ""), 0.0);
        assert!(
            (r(
                "private Thread currentThread;",
                "private volatile Thread currentThread;"
            ) - 0.8656716417910447)
                .abs()
                < 1e-12
        );
        assert!((r("qabxcd", "abycdf") - 0.6666666666666666).abs() < 1e-12);
    }
}

#[cfg(test)]
mod vectors {
    use super::ratio;

    /// 300 random pairs scored by CPython's difflib (testdata/make_difflib_vectors.py).
    #[test]
    fn matches_cpython_on_random_pairs() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/difflib_ratio.json");
        let raw = std::fs::read_to_string(path).expect("difflib vectors");
        let pairs: Vec<(String, String, f64)> = serde_json::from_str(&raw).expect("json");
        assert_eq!(pairs.len(), 300);
        for (a, b, want) in pairs {
            let got = ratio(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            );
            assert!((got - want).abs() < 1e-12, "{a:?} {b:?}: {got} != {want}");
        }
    }
}
