//! Recipes: a segmenter and a reader with their settings, under one name
//! (seed 001's ten). They are data: the built-ins are `recipes.toml`
//! beside this file, and a recipe file of the user's (the same shape)
//! adds more. `auto` is not a recipe but a rule for one document: `fast`
//! when the document fits `AUTO_TOKENS` (or the model's window, if
//! smaller), else `thorough`; both send every chunk.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::segment::Method;

/// The built-in recipes' file.
const BUILTIN: &str = include_str!("recipes.toml");

/// The built-ins in the order `recipes()` lists them.
const ORDER: [&str; 10] = [
    "fast",
    "precise",
    "needle",
    "thorough",
    "survey",
    "narrative",
    "scanned",
    "research",
    "consensus",
    "legacy",
];

/// The largest document `auto` reads with `fast`, in tokens.
pub const AUTO_TOKENS: usize = 50_000;

/// How a recipe cuts and reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Recipe {
    /// Its name.
    #[serde(skip)]
    pub name: String,
    /// Where it comes from: `built-in` or the file.
    #[serde(skip)]
    pub origin: String,
    /// When to use it.
    #[serde(rename = "use")]
    pub use_for: String,
    /// The segmenter.
    pub segment: String,
    /// Where `contextual`'s blurbs come from: `heading` (free) or `llm`
    /// (one request per chunk).
    pub context_source: String,
    /// Its cap on a chunk's tokens.
    pub max_tokens: usize,
    /// Tokens repeated from one chunk into the next.
    pub overlap_tokens: usize,
    /// The reader.
    pub reader: String,
    /// Chunks `retrieve`, `rerank`, `iterative` (per hop) and `preview` send.
    pub top_k: usize,
    /// Most requests `iterative` makes.
    pub max_hops: usize,
    /// The readers `ensemble` asks.
    pub members: Vec<String>,
    /// Digits removed from the chunks before they are sent (`legacy`
    /// only: it reproduces what that cost).
    pub remove_numbers: bool,
}

impl Default for Recipe {
    fn default() -> Self {
        Self {
            name: String::new(),
            origin: String::new(),
            use_for: String::new(),
            segment: "paragraph".into(),
            context_source: "heading".into(),
            max_tokens: 800,
            overlap_tokens: 0,
            reader: "stuff".into(),
            top_k: 4,
            max_hops: 3,
            members: super::Settings::new(0).members,
            remove_numbers: false,
        }
    }
}

/// The settings a recipe (or an option) may set.
pub const SETTINGS: [&str; 9] = [
    "segment",
    "context_source",
    "max_tokens",
    "overlap_tokens",
    "reader",
    "top_k",
    "max_hops",
    "members",
    "remove_numbers",
];

impl Recipe {
    /// One setting's value as text.
    fn value(&self, key: &str) -> String {
        match key {
            "segment" => self.segment.clone(),
            "context_source" => self.context_source.clone(),
            "max_tokens" => self.max_tokens.to_string(),
            "overlap_tokens" => self.overlap_tokens.to_string(),
            "reader" => self.reader.clone(),
            "top_k" => self.top_k.to_string(),
            "max_hops" => self.max_hops.to_string(),
            "members" => self.members.join("+"),
            "remove_numbers" => self.remove_numbers.to_string(),
            _ => String::new(),
        }
    }

    /// The settings other than segment and reader that differ from the
    /// defaults, `key=value` joined by `, ` (empty when none do).
    pub fn changed(&self) -> String {
        let d = Self::default();
        SETTINGS
            .iter()
            .filter(|k| !matches!(**k, "segment" | "reader"))
            // Settings the reader or segmenter does not use are not its
            // differences.
            .filter(|k| match **k {
                "max_hops" => self.uses("iterative"),
                "members" => self.reader == "ensemble",
                "top_k" => ["retrieve", "rerank", "iterative", "preview"]
                    .iter()
                    .any(|r| self.uses(r)),
                "context_source" => self.segment == "contextual",
                _ => true,
            })
            .filter(|k| self.value(k) != d.value(k))
            .map(|k| format!("{k}={}", self.value(k)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether `reader` reads for this recipe: it is the reader, or one of
    /// an ensemble's members.
    fn uses(&self, reader: &str) -> bool {
        self.reader == reader
            || (self.reader == "ensemble" && self.members.iter().any(|m| m == reader))
    }

    /// Sets `key` to `value` (an option over the recipe).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let num = |v: &str| {
            v.trim()
                .parse::<usize>()
                .map_err(|_| format!("{key} must be a whole number, got '{v}'"))
        };
        match key {
            "segment" => self.segment = value.trim().to_string(),
            "context_source" => {
                self.context_source = crate::segment::contextual::ContextSource::parse(value)?
                    .name()
                    .to_string()
            }
            "max_tokens" => self.max_tokens = num(value)?,
            "overlap_tokens" => self.overlap_tokens = num(value)?,
            "reader" => self.reader = value.trim().to_string(),
            "top_k" => self.top_k = num(value)?,
            "max_hops" => self.max_hops = num(value)?,
            "members" => {
                self.members = value
                    .split('+')
                    .map(|x| x.trim().to_string())
                    .filter(|x| !x.is_empty())
                    .collect();
            }
            "remove_numbers" => {
                self.remove_numbers = match value.trim() {
                    "true" => true,
                    "false" => false,
                    v => return Err(format!("remove_numbers must be true or false, got '{v}'")),
                }
            }
            other => return Err(format!("'{other}' is not a recipe setting")),
        }
        Ok(())
    }

    /// Whether the recipe can run: its segmenter and reader exist, its
    /// numbers make sense, an ensemble's members are other readers.
    pub fn check(&self) -> Result<(), String> {
        let what = format!("recipe '{}'", self.name);
        if Method::parse(&self.segment).is_none() {
            return Err(format!(
                "{what}: no segmenter '{}'; segmenters: {}",
                self.segment,
                Method::ALL.map(Method::name).join(", ")
            ));
        }
        if let Err(e) = crate::segment::contextual::ContextSource::parse(&self.context_source) {
            return Err(format!("{what}: {e}"));
        }
        if super::reader(&self.reader).is_none() {
            return Err(format!(
                "{what}: no reader '{}'; readers: {}",
                self.reader,
                super::READERS
                    .iter()
                    .map(|r| r.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if self.max_tokens == 0 || self.overlap_tokens >= self.max_tokens {
            return Err(format!(
                "{what}: max_tokens ({}) must be above 0 and above overlap_tokens ({})",
                self.max_tokens, self.overlap_tokens
            ));
        }
        if self.top_k == 0 || self.max_hops == 0 {
            return Err(format!("{what}: top_k and max_hops must be at least 1"));
        }
        if self.reader == "ensemble" {
            if let Some(bad) = self
                .members
                .iter()
                .find(|m| *m == "ensemble" || super::reader(m).is_none())
            {
                return Err(format!(
                    "{what}: members= names readers joined by '+' (e.g. stuff+map_reduce+retrieve); '{bad}' is not a reader an ensemble can ask"
                ));
            }
        }
        Ok(())
    }
}

/// Recipes from TOML text (one table per recipe), checked; `origin` says
/// where they come from.
fn parse(text: &str, origin: &str) -> Result<BTreeMap<String, Recipe>, String> {
    let tables: BTreeMap<String, toml::Value> =
        toml::from_str(text).map_err(|e| format!("{origin}: {e}"))?;
    let mut out = BTreeMap::new();
    for (name, v) in tables {
        let mut r: Recipe = v
            .try_into()
            .map_err(|e| format!("{origin}: recipe '{name}': {e}"))?;
        r.name = name.clone();
        r.origin = origin.to_string();
        r.check().map_err(|e| format!("{origin}: {e}"))?;
        out.insert(name, r);
    }
    Ok(out)
}

/// The built-in recipes, then those of `file` (by name). A file's recipe
/// may not take a built-in's name, nor `auto`.
pub fn load(file: Option<&str>) -> Result<Vec<Recipe>, String> {
    let mut builtin = parse(BUILTIN, "built-in").expect("the built-in recipes parse");
    let mut out: Vec<Recipe> = ORDER
        .iter()
        .map(|n| builtin.remove(*n).expect("a built-in recipe"))
        .collect();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading the recipe file {path}: {e}"))?;
        for (name, r) in parse(&text, path)? {
            if name == "auto" || out.iter().any(|b| b.name == name) {
                return Err(format!(
                    "{path}: recipe '{name}' has the name of a built-in; give it a name of its own"
                ));
            }
            out.push(r);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ten_built_ins_are_the_seeds_and_say_what_they_change() {
        let all = load(None).unwrap();
        let names: Vec<&str> = all.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ORDER);
        let by = |n: &str| all.iter().find(|r| r.name == n).unwrap();
        assert_eq!(by("fast").changed(), "max_tokens=4000");
        assert_eq!(
            by("needle").changed(),
            "max_tokens=500, overlap_tokens=50, top_k=8"
        );
        assert_eq!(by("thorough").changed(), "overlap_tokens=120");
        assert_eq!(by("narrative").changed(), "");
        assert_eq!(
            (
                by("consensus").segment.as_str(),
                by("consensus").reader.as_str()
            ),
            ("recursive", "ensemble")
        );
        assert_eq!(
            by("legacy").changed(),
            "max_tokens=3000, remove_numbers=true"
        );
    }

    #[test]
    fn a_users_file_adds_recipes_and_may_not_shadow_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.toml");
        std::fs::write(
            &p,
            "[tables]\nsegment = \"structural\"\nreader = \"skim\"\ntop_k = 2\n",
        )
        .unwrap();
        let all = load(Some(p.to_str().unwrap())).unwrap();
        assert_eq!(all.len(), 11);
        assert_eq!(all[10].name, "tables");
        std::fs::write(&p, "[fast]\nreader = \"skim\"\n").unwrap();
        assert!(load(Some(p.to_str().unwrap()))
            .unwrap_err()
            .contains("has the name of a built-in"));
        std::fs::write(&p, "[x]\nreader = \"guess\"\n").unwrap();
        assert!(load(Some(p.to_str().unwrap()))
            .unwrap_err()
            .contains("no reader 'guess'"));
        std::fs::write(&p, "[x]\nreadr = \"skim\"\n").unwrap();
        assert!(load(Some(p.to_str().unwrap()))
            .unwrap_err()
            .contains("unknown field"));
    }
}
