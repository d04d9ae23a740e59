//! A corpus as a stream of ingested documents: listed lazily, read and parsed
//! in parallel (parsing on the blocking pool, never the async executor),
//! served from the store when unchanged, deduplicated in listing order.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt};

use crate::ingest::{extractor_for, extractor_label, ingest_bytes, Document, IngestSpec, Status};
use crate::source::{Entry, Source};
use crate::store::Store;

/// How a corpus is read.
#[derive(Debug, Clone, Default)]
pub struct CorpusOptions {
    /// List subfolders too.
    pub recursive: bool,
    /// What ingestion does.
    pub ingest: IngestSpec,
}

/// A `failed` row for a file that could not be read.
fn failed(entry: Entry, message: String) -> Document {
    let extractor = extractor_for(&entry.ext).ok();
    Document::empty(entry, Status::Failed, extractor, Some(message))
}

/// Reads one entry: from the store if it has it, else fetch and parse.
async fn ingest_entry(
    source: &Source,
    store: Option<&Store>,
    entry: Entry,
    spec: &IngestSpec,
) -> Document {
    if entry.not_scanned {
        let folder = entry.folder.clone();
        let ext = entry.ext.clone();
        return Document::empty(
            entry,
            Status::NotScanned,
            extractor_for(&ext).ok(),
            Some(format!(
                "in subfolder '{folder}', one level below the scanned folder: not read; pass recursive=true to read it"
            )),
        );
    }
    if let Err(msg) = extractor_for(&entry.ext) {
        // Decided by the name alone: nothing to read.
        let label = extractor_label(&entry.ext);
        return Document::empty(entry, Status::NoExtractor, label, Some(msg));
    }
    if let Some(store) = store {
        if let Some(doc) = store.get_ingest(&entry, spec).await {
            return doc;
        }
    }
    let bytes = match source.read(&entry, spec.max_bytes).await {
        Ok(b) => b,
        Err(e) => {
            let ext = entry.ext.clone();
            return Document::empty(
                entry,
                Status::Failed,
                extractor_for(&ext).ok(),
                Some(e.to_string()),
            );
        }
    };
    let spec2 = spec.clone();
    let entry2 = entry.clone();
    let doc = match tokio::task::spawn_blocking(move || ingest_bytes(entry2, &bytes, &spec2)).await
    {
        Ok(d) => d,
        Err(e) => return failed(entry, format!("parsing stopped unexpectedly: {e}")),
    };
    let versioned = entry.modified_ms.is_some() || entry.etag.is_some();
    if let (Some(store), true) = (store, versioned) {
        // The cache is an optimisation: a store that cannot be written must
        // not lose the document, so the error is reported and reading goes on.
        if let Err(e) = store.put_ingest(&doc, spec).await {
            eprintln!("warning: {e}");
        }
    }
    doc
}

/// Reads one entry again (from the store when it has it): the first copy
/// of a duplicate, for a window that needs its rows.
pub async fn read_entry(
    source: &Source,
    store: Option<&Store>,
    entry: Entry,
    spec: &IngestSpec,
) -> Document {
    ingest_entry(source, store, entry, spec).await
}

/// The documents of a source, in listing order. `with_unscanned` keeps the
/// rows for files below a non-recursive listing (for `inventory`).
pub fn documents(
    source: Arc<Source>,
    store: Option<Store>,
    opts: CorpusOptions,
    with_unscanned: bool,
) -> BoxStream<'static, crate::error::Result<Document>> {
    listed_documents(source, store, opts, with_unscanned, None)
        .map(|d| d.map(|(_, d)| d))
        .boxed()
}

/// One of `count` parts of a listing (`index` counts from 0), so that
/// several processes read a corpus between them: a file belongs to the part
/// its size picks, so byte-identical copies are read by one part, which
/// marks the later ones duplicates as a whole listing would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// This part.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

/// The part of its corpus a session's corpus functions read, as an
/// extension of its configuration: `None` (the whole corpus) is set where a
/// run's own stages read the documents they were handed.
#[derive(Debug, Clone, Copy)]
pub struct PartOf(pub Option<Share>);

impl Share {
    /// Whether `entry` is in this part.
    pub fn holds(&self, entry: &Entry) -> bool {
        self.count <= 1
            || xxhash_rust::xxh3::xxh3_64(&entry.bytes.to_le_bytes()) % self.count as u64
                == self.index as u64
    }
}

/// [`documents`] with each document's position in the whole listing, and,
/// with a `share`, only the files of that part.
pub fn listed_documents(
    source: Arc<Source>,
    store: Option<Store>,
    opts: CorpusOptions,
    with_unscanned: bool,
    share: Option<Share>,
) -> BoxStream<'static, crate::error::Result<(u64, Document)>> {
    let parallel = std::thread::available_parallelism().map_or(2, |n| n.get()) * 2;
    let flush_store = store.clone();
    let listing = {
        let source = source.clone();
        async move { source.entries(opts.recursive).await }
    };
    stream::once(listing)
        .flat_map(move |entries| match entries {
            Err(e) => stream::iter(vec![Err(e)]).boxed(),
            Ok(entries) => {
                let source = source.clone();
                let store = store.clone();
                let spec = opts.ingest.clone();
                stream::iter(
                    entries
                        .into_iter()
                        .zip(0u64..)
                        .filter(move |(e, _)| with_unscanned || !e.not_scanned)
                        .filter(move |(e, _)| share.is_none_or(|s| s.holds(e))),
                )
                .map(move |(entry, at)| {
                    let source = source.clone();
                    let store = store.clone();
                    let spec = spec.clone();
                    async move {
                        Ok((
                            at,
                            ingest_entry(&source, store.as_ref(), entry, &spec).await,
                        ))
                    }
                })
                .buffered(parallel)
                .boxed()
            }
        })
        .scan(HashMap::<String, Entry>::new(), |seen, doc| {
            let doc = doc.map(|(at, mut d)| {
                mark_duplicate(seen, &mut d, true);
                (at, d)
            });
            futures::future::ready(Some(doc))
        })
        // At the end of the listing, the ingestions kept are packed.
        .chain(
            stream::once(async move {
                if let Some(store) = flush_store {
                    if let Err(e) = store.flush_ingest().await {
                        eprintln!("warning: the ingest cache could not be packed yet (its entries stay as single files): {e}");
                    }
                }
                None
            })
            .filter_map(futures::future::ready),
        )
        .boxed()
}

/// Marks a document whose cleaned text an earlier one had (`seen`: the
/// first copy of each `document_id`) as that one's duplicate. With
/// `reread`, it keeps the first copy's entry, so a window without it can
/// read it again; a document that cannot be read again (a record's title
/// and abstract) leaves it out.
pub fn mark_duplicate(seen: &mut HashMap<String, Entry>, d: &mut Document, reread: bool) {
    if d.status != Status::Ok {
        return;
    }
    let Some(id) = &d.document_id else { return };
    match seen.get(id) {
        Some(first) => {
            d.status = Status::Duplicate;
            d.duplicate_of = Some(first.source.clone());
            if reread {
                d.original = Some(first.clone());
            }
        }
        None => {
            seen.insert(id.clone(), d.entry.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_of_a_listing_hold_each_file_once_and_copies_together() {
        let entries: Vec<Entry> = (0..500u64)
            .map(|i| {
                Entry::local(
                    std::path::Path::new(&format!("/c/{i}.pdf")),
                    1_000 + i * 37 % 211,
                )
            })
            .collect();
        for count in [1, 2, 3, 7] {
            let shares: Vec<Share> = (0..count).map(|index| Share { index, count }).collect();
            let mut sizes = vec![0usize; count];
            for e in &entries {
                let holders: Vec<usize> = shares
                    .iter()
                    .filter(|s| s.holds(e))
                    .map(|s| s.index)
                    .collect();
                assert_eq!(
                    holders.len(),
                    1,
                    "{} in parts {holders:?} of {count}",
                    e.source
                );
                sizes[holders[0]] += 1;
                // A copy of the same size (the same bytes) is in the same part.
                let copy = Entry::local(std::path::Path::new("/c/copy/x.pdf"), e.bytes);
                assert!(shares[holders[0]].holds(&copy));
            }
            // No part is left without work when there are many files.
            assert!(sizes.iter().all(|&n| n > 500 / count / 3), "{sizes:?}");
        }
    }
}
