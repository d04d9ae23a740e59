//! `proposition`: the text rewritten as standalone factual statements
//! (Chen et al. 2023, "Dense X Retrieval: What Retrieval Granularity Should
//! We Use?", with their Propositionizer's instructions). The document is cut
//! into batches of about [`BATCH_TOKENS`] tokens (whole paragraphs, as
//! `paragraph` packs them); each batch is one request whose reply is
//! `{"propositions": ["...", ...]}`; the statements are then packed up to
//! the cap, never across batches, with no overlap (a statement stands
//! alone, so repeating one would only count it twice).
//!
//! A chunk's offsets, pages and section are its batch's: the statements are
//! not the document's words, so they point back to the passage they were
//! written from rather than to a quote. A batch the model could not
//! decompose (a failed call, a reply not of that shape, no statements) is
//! kept as written, cut as `paragraph` cuts it, and counted
//! (`batches_kept_as_written`). A statement carrying a number its passage
//! does not is kept and counted (`new_numbers`): a rewrite may not invent
//! figures, and the reader should know where one did. Without a client the
//! method is `proposition->paragraph`.

use futures::future::join_all;

use super::{pack, trim, Chunk, Method, SegDoc, SegmentSpec, Segmented, Unit};
use crate::read::Ask;

/// Tokens of document text in one request.
pub const BATCH_TOKENS: usize = 900;

/// The reply's shape.
fn schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "propositions": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["propositions"]
    })
}

/// The request for one batch.
fn prompt(section: Option<&str>, content: &str) -> String {
    let section = section.map_or(String::new(), |s| format!("Section: {s}\n"));
    format!(
        "Decompose the \"Content\" into clear and simple propositions, ensuring they are \
         interpretable out of context.\n\
         1. Split compound sentence into simple sentences. Maintain the original phrasing \
         from the input whenever possible.\n\
         2. For any named entity that is accompanied by additional descriptive information, \
         separate this information into its own distinct proposition.\n\
         3. Decontextualize the proposition by adding necessary modifier to nouns or entire \
         sentences and replacing pronouns (e.g., \"it\", \"he\", \"she\", \"they\", \"this\", \
         \"that\") with the full name of the entities they refer to.\n\
         4. Present the results as a JSON object {{\"propositions\": [...]}}, one string per \
         proposition, and nothing else.\n\n\
         {section}Content: {content}"
    )
}

/// The statements of a reply, or why there are none.
pub fn parse(reply: &str) -> Result<Vec<String>, String> {
    let v: serde_json::Value =
        serde_json::from_str(reply.trim()).map_err(|e| format!("not JSON ({e})"))?;
    let list = v
        .get("propositions")
        .and_then(|p| p.as_array())
        .ok_or("no \"propositions\" list")?;
    let mut out = Vec::with_capacity(list.len());
    for (i, p) in list.iter().enumerate() {
        let s = p
            .as_str()
            .ok_or_else(|| format!("proposition {i} is not a string"))?;
        let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        if !s.is_empty() {
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err("no propositions".into());
    }
    Ok(out)
}

/// The numbers written in `text` (runs of digits, with their decimal points).
fn numbers(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|s| s.trim_matches('.'))
        .filter(|s| s.chars().any(|c| c.is_ascii_digit()))
        .collect()
}

/// The batches: paragraph chunks of at most `BATCH_TOKENS` (less where the
/// window is smaller).
fn batches(doc: &SegDoc, spec: &SegmentSpec, window_tokens: usize) -> Vec<Chunk> {
    let mut s = SegmentSpec::new(
        Method::Paragraph,
        BATCH_TOKENS.min(window_tokens / 3).max(16),
    );
    s.tokenizer = spec.tokenizer;
    super::segment(doc, &s).chunks
}

/// A batch kept as written: its text cut as `paragraph` would.
fn as_written(doc: &SegDoc, spec: &SegmentSpec, b: &Chunk) -> Vec<Chunk> {
    let tk = spec.tokenizer;
    let units = super::sentence_units(doc.text, b.start, b.end, 0);
    pack(doc.text, &units, spec.max_tokens, tk)
        .into_iter()
        .filter_map(|(s, e)| trim(doc.text, s, e))
        .map(|(start, end)| {
            let (page_start, page_end, section) = super::provenance_of(doc.blocks, start, end);
            Chunk {
                start,
                end,
                tokens: tk.count(&doc.text[start..end]),
                page_start,
                page_end,
                section,
                text: None,
            }
        })
        .collect()
}

/// A batch's statements packed into chunks, each pointing at the batch.
fn packed(spec: &SegmentSpec, b: &Chunk, props: &[String]) -> Vec<Chunk> {
    let tk = spec.tokenizer;
    let joined = props.join("\n");
    let mut units = Vec::with_capacity(props.len());
    let mut pos = 0;
    for p in props {
        units.push(Unit {
            start: pos,
            end: pos + p.len(),
            group: 0,
        });
        pos += p.len() + 1;
    }
    pack(&joined, &units, spec.max_tokens, tk)
        .into_iter()
        .filter_map(|(s, e)| trim(&joined, s, e))
        .map(|(s, e)| {
            let text = joined[s..e].to_string();
            Chunk {
                tokens: tk.count(&text),
                text: Some(text),
                ..b.clone()
            }
        })
        .collect()
}

/// `proposition` without a client: `paragraph`, and the method says so.
pub fn segment(doc: &SegDoc, spec: &SegmentSpec) -> Segmented {
    let mut s = spec.clone();
    s.method = Method::Paragraph;
    let mut seg = super::segment(doc, &s);
    seg.method = "proposition->paragraph".into();
    seg.notes
        .push("segment_fallback: proposition needs a client; the text was cut by paragraph".into());
    seg
}

/// `proposition` with one request per batch; `window_tokens` is what one
/// request may carry.
pub async fn with_model(
    doc: &SegDoc<'_>,
    spec: &SegmentSpec,
    ask: &dyn Ask,
    window_tokens: usize,
) -> Segmented {
    let batches = batches(doc, spec, window_tokens);
    let replies = join_all(batches.iter().enumerate().map(|(i, b)| {
        ask.ask(
            prompt(b.section.as_deref(), &doc.text[b.start..b.end]),
            Some(schema()),
            format!("proposition batch {i}"),
        )
    }))
    .await;
    let mut seg = Segmented {
        method: "proposition".into(),
        chunks: Vec::new(),
        notes: Vec::new(),
        extra: Vec::new(),
        calls: batches.len(),
    };
    let (mut kept, mut new_numbers) = (Vec::new(), 0);
    for (i, (b, r)) in batches.iter().zip(replies).enumerate() {
        let props = match (r.text, r.error) {
            (Some(t), _) => parse(&t),
            (None, e) => Err(e.unwrap_or_else(|| "no reply".into())),
        };
        match props {
            Ok(props) => {
                let passage = numbers(&doc.text[b.start..b.end]);
                new_numbers += props
                    .iter()
                    .filter(|p| numbers(p).iter().any(|n| !passage.contains(n)))
                    .count();
                seg.chunks.extend(packed(spec, b, &props));
            }
            Err(why) => {
                kept.push(format!("{i} ({why})"));
                seg.chunks.extend(as_written(doc, spec, b));
            }
        }
    }
    if !kept.is_empty() {
        seg.notes.push(format!(
            "proposition_kept_as_written: {} of {} batches could not be decomposed and are \
             kept as written: {}",
            kept.len(),
            batches.len(),
            kept.join("; ")
        ));
        seg.extra
            .push(("batches_kept_as_written".into(), kept.len().to_string()));
    }
    if new_numbers > 0 {
        seg.notes.push(format!(
            "proposition_new_numbers: {new_numbers} statements carry a number their passage \
             does not; check them against the text"
        ));
        seg.extra
            .push(("new_numbers".into(), new_numbers.to_string()));
    }
    seg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_parsed_strictly() {
        assert_eq!(
            parse(r#"{"propositions": [" A  b. ", "", "C."]}"#).unwrap(),
            vec!["A b.", "C."]
        );
        assert!(parse(r#"{"propositions": []}"#).is_err());
        assert!(parse(r#"{"propositions": [1]}"#).is_err());
        assert!(parse(r#"["A."]"#).is_err());
        assert!(parse("A. B.").is_err());
    }

    #[test]
    fn numbers_are_read_with_their_decimals() {
        assert_eq!(
            numbers("n=120, mean 4.5 (SD 1.2)."),
            vec!["120", "4.5", "1.2"]
        );
    }
}
