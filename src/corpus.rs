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
/// several processes read a corpus between them. Each file's part depends on
/// that file alone (never on the rest of the listing, which may change
/// between the parts' listings): on its size and a digest of its content,
/// so byte-identical copies are read by one part, which marks the later ones
/// duplicates as a whole listing would. The content digest is an S3 object's
/// ETag, else the file's last [`Share::TAIL`] bytes (one ranged read): with
/// the size alone, a corpus of same-sized files (generated, templated) would
/// all land in one part.
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
    /// How much of a file's end its part is drawn from.
    pub const TAIL: u64 = 4096;

    /// Whether `entry` of `source` is in this part. A file whose end cannot
    /// be read on local disk (gone, no permission) is placed by its size, as
    /// every part then finds it; elsewhere such a read is an error, so that
    /// no two parts can place a file differently (the task is tried again).
    pub async fn holds(&self, source: &Source, entry: &Entry) -> crate::error::Result<bool> {
        if self.count <= 1 {
            return Ok(true);
        }
        Ok(Self::key(source, entry).await? % self.count as u64 == self.index as u64)
    }

    async fn key(source: &Source, entry: &Entry) -> crate::error::Result<u64> {
        use xxhash_rust::xxh3::Xxh3;
        let mut h = Xxh3::new();
        h.update(&entry.bytes.to_le_bytes());
        match &entry.etag {
            // An S3 ETag is a digest of the object's bytes.
            Some(tag) if entry.uri.starts_with("s3://") => h.update(tag.as_bytes()),
            _ => match source.tail(entry, Self::TAIL).await {
                Ok(Some(tail)) => h.update(&tail),
                Ok(None) => {}
                Err(_) if entry.uri.starts_with("file://") => {}
                Err(e) => return Err(e),
            },
        }
        Ok(h.digest())
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
                let placing = source.clone();
                stream::iter(
                    entries
                        .into_iter()
                        .zip(0u64..)
                        .filter(move |(e, _)| with_unscanned || !e.not_scanned),
                )
                // With a share, only the files of this part (placing a file
                // may read its end: several at once).
                .map(move |(entry, at)| {
                    let source = placing.clone();
                    async move {
                        let held = match share {
                            Some(s) => s.holds(&source, &entry).await?,
                            None => true,
                        };
                        Ok::<_, crate::error::QuarryError>(held.then_some((entry, at)))
                    }
                })
                .buffered(parallel * 4)
                .filter_map(|r| futures::future::ready(r.transpose()))
                .map(move |held| {
                    let source = source.clone();
                    let store = store.clone();
                    let spec = spec.clone();
                    async move {
                        let (entry, at) = held?;
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

    /// Files of one size (a generated corpus) spread over the parts; each
    /// file is in one part, and a byte-identical copy in the same part.
    #[tokio::test]
    async fn the_parts_of_a_listing_hold_each_file_once_and_copies_together() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..400 {
            // The same size, different bytes; every tenth file also copied.
            let text = format!("document {i:04}\n");
            std::fs::write(dir.path().join(format!("d{i:04}.txt")), &text).unwrap();
            if i % 10 == 0 {
                std::fs::write(dir.path().join(format!("copy{i:04}.txt")), &text).unwrap();
            }
        }
        // One large file: only its end is read.
        let mut big = vec![b'x'; 100_000];
        big.extend_from_slice(b"end");
        std::fs::write(dir.path().join("big.txt"), &big).unwrap();
        let source = Source::parse(&format!("{}/", dir.path().display())).unwrap();
        let entries = source.entries(false).await.unwrap();
        assert_eq!(entries.len(), 441);
        for count in [1, 2, 3, 7] {
            let mut part_of = HashMap::new();
            let mut sizes = vec![0usize; count];
            for e in &entries {
                let mut holders = Vec::new();
                for index in 0..count {
                    if (Share { index, count }).holds(&source, e).await.unwrap() {
                        holders.push(index);
                    }
                }
                assert_eq!(
                    holders.len(),
                    1,
                    "{} in parts {holders:?} of {count}",
                    e.source
                );
                sizes[holders[0]] += 1;
                part_of.insert(e.file_name.clone(), holders[0]);
            }
            for i in (0..400).step_by(10) {
                assert_eq!(
                    part_of[&format!("d{i:04}.txt")],
                    part_of[&format!("copy{i:04}.txt")],
                    "copies of d{i:04}.txt apart in {count} parts"
                );
            }
            // No part is left without work, though every size is the same.
            assert!(sizes.iter().all(|&n| n > 441 / count / 2), "{sizes:?}");
        }
    }
}
