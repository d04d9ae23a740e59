//! The embedder registry. `lexical` is a hashed bag of words: free,
//! offline, the same vector on every machine, so a ranking made with it
//! replays exactly; word overlap stands in for meaning. `api` asks an
//! OpenAI-compatible `/embeddings` endpoint (a query model and a passage
//! model, the same by default); its vectors are cached like replies but
//! not recorded in a trace, since they are not deterministic, so a replay
//! falls back to `lexical` and says so (`embed_fallback`).

use std::collections::BTreeMap;

/// An embedder as `embedders()` lists it.
#[derive(Debug, Clone, Copy)]
pub struct EmbedderInfo {
    /// Its name.
    pub name: &'static str,
    /// Whether the same text always gets the same vector, everywhere.
    pub deterministic: bool,
    /// What it is.
    pub description: &'static str,
}

/// The embedders.
pub const EMBEDDERS: &[EmbedderInfo] = &[
    EmbedderInfo {
        name: "lexical",
        deterministic: true,
        description: "hashed bag of words (1,024 dimensions); free, offline, word overlap not meaning",
    },
    EmbedderInfo {
        name: "api",
        deterministic: false,
        description: "an OpenAI-compatible /embeddings endpoint (embed_endpoint=, embed_model=, embed_query_model=); cached, not replayed",
    },
];

/// The options that choose an embedder.
pub const OPTIONS: [&str; 4] = [
    "embedder",
    "embed_model",
    "embed_query_model",
    "embed_endpoint",
];

/// Which embedder a run ranks with.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Embedder {
    /// The hashed bag of words.
    #[default]
    Lexical,
    /// An `/embeddings` endpoint.
    Api {
        /// The endpoint's name (the default endpoint when `None`).
        endpoint: Option<String>,
        /// The model for passages.
        model: String,
        /// The model for queries.
        query_model: String,
    },
}

impl Embedder {
    /// The embedder `options` name (`embedder=lexical|api` and the `embed_`
    /// options).
    pub fn from_options(o: &BTreeMap<String, String>) -> Result<Self, String> {
        match o.get("embedder").map(|s| s.trim()) {
            None | Some("lexical") => {
                if let Some(k) = OPTIONS[1..].iter().find(|k| o.contains_key(**k)) {
                    return Err(format!("{k}= is for embedder=api"));
                }
                Ok(Self::Lexical)
            }
            Some("api") => {
                let model = o
                    .get("embed_model")
                    .cloned()
                    .unwrap_or_else(|| "text-embedding-3-small".into());
                Ok(Self::Api {
                    endpoint: o.get("embed_endpoint").cloned(),
                    query_model: o
                        .get("embed_query_model")
                        .cloned()
                        .unwrap_or_else(|| model.clone()),
                    model,
                })
            }
            Some(other) => Err(format!(
                "no embedder '{other}'; embedders: {}",
                EMBEDDERS
                    .iter()
                    .map(|e| e.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// Its name in the registry.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Lexical => "lexical",
            Self::Api { .. } => "api",
        }
    }

    /// Vectors for `texts`, L2-normalised.
    pub async fn embed(
        &self,
        rt: &crate::model::Runtime,
        texts: &[String],
        query: bool,
    ) -> Result<Vec<Vec<f32>>, String> {
        match self {
            Self::Lexical => Ok(texts.iter().map(|t| super::lexical_embedding(t)).collect()),
            Self::Api {
                endpoint,
                model,
                query_model,
            } => {
                let m = if query { query_model } else { model };
                let mut v = rt.embed(endpoint.as_deref(), m, texts).await?;
                for x in &mut v {
                    let n = x.iter().map(|a| a * a).sum::<f32>().sqrt();
                    if n > 0.0 {
                        x.iter_mut().for_each(|a| *a /= n);
                    }
                }
                Ok(v)
            }
        }
    }
}
