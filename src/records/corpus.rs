//! A folder (or prefix, or file) of exports read as one set of records:
//! the first pass settles duplicates and matches to files with a few keys a
//! record, the second gives the records export by export with what the
//! first pass settled.

use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt};

use super::dedup::Dedup;
use super::matching::{self, File};
use super::{read_export_parts, Field, Fields, Record, Status};
use crate::error::{QuarryError, Result};
use crate::source::{Entry, Source};

/// Exports larger than this are refused (a reference export of a million
/// records is about 2 GB; this is far past any one database's export).
pub const MAX_EXPORT_BYTES: u64 = 4 << 30;

/// Where the records come from, and the files they are matched to.
#[derive(Debug, Clone)]
pub struct RecordSource {
    /// The exports.
    pub exports: Arc<Source>,
    /// The corpus the records are matched to.
    pub files: Option<Arc<Source>>,
    /// List subfolders of both.
    pub recursive: bool,
    /// The fields records are read with ([`Fields::ALL`] unless a query
    /// reads only some columns); matching to files adds what it needs.
    pub fields: Fields,
}

/// What the first pass settled for one record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// The record it repeats (its id), and the rule.
    pub duplicate_of: Option<(String, &'static str)>,
    /// The matched file (index into [`Settled::files`]) and the rule.
    pub matched: Option<(usize, &'static str)>,
    /// Why it has no file, when files were given.
    pub match_note: Option<String>,
}

/// Records of one export with what was settled for each.
pub type Rows = Vec<(Record, Outcome)>;

/// The first pass's result.
#[derive(Debug, Default)]
pub struct Settled {
    /// The exports, in listing order.
    pub exports: Vec<Entry>,
    /// The files records may be matched to, with their entries.
    pub files: Vec<(File, Entry)>,
    /// One outcome per record, in order (exports in order, records in order).
    pub outcomes: Vec<Outcome>,
}

/// Parts of an export read ahead of the one being settled: the reader
/// parses while the records before are settled and made into columns.
const PARTS_AHEAD: usize = 1;

/// Exports read ahead of the one being parsed: reading the next file
/// overlaps parsing this one (memory holds at most this many exports' text
/// beside the one being parsed).
const EXPORTS_AHEAD: usize = 1;

/// An export's bytes being read in a task of their own; dropping it stops
/// the read (a query that ends early does not read on).
struct Reading(tokio::task::JoinHandle<Result<bytes::Bytes>>);

impl Drop for Reading {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Reading {
    fn start(source: Arc<Source>, entry: Entry) -> Self {
        Self(tokio::spawn(async move {
            source.read(&entry, MAX_EXPORT_BYTES).await
        }))
    }

    async fn bytes(mut self) -> std::result::Result<bytes::Bytes, String> {
        match (&mut self.0).await {
            Ok(Ok(b)) => Ok(b),
            Ok(Err(e)) => Err(e.to_string()),
            Err(e) => Err(format!("reading this export stopped unexpectedly: {e}")),
        }
    }
}

/// One export's records, part by part (see [`read_export_parts`]), from its
/// bytes being read; a file that cannot be read is one failed row.
/// The one row of an export that could not be read (or whose reading
/// stopped), named like the export's records so it can be found and joined.
fn failed(entry: &Entry, note: String) -> Record {
    Record {
        record_id: format!("failed:{}", entry.file_name),
        export: Some(entry.source.as_str().into()),
        database: Some(entry.file_name.as_str().into()),
        status: Some(Status::Failed),
        note: Some(note),
        ..Default::default()
    }
}

fn read_one(entry: Entry, reading: Reading, fields: Fields) -> BoxStream<'static, Vec<Record>> {
    enum State {
        Start(Reading, Entry),
        Reading(
            tokio::sync::mpsc::Receiver<Vec<Record>>,
            tokio::task::JoinHandle<()>,
            Entry,
        ),
        Done,
    }
    // The next part, or at the end nothing more (or one failed row when the
    // reader stopped unexpectedly).
    async fn next_part(
        part: Option<Vec<Record>>,
        rx: tokio::sync::mpsc::Receiver<Vec<Record>>,
        reader: tokio::task::JoinHandle<()>,
        entry: Entry,
    ) -> Option<(Vec<Record>, State)> {
        match part {
            Some(part) => Some((part, State::Reading(rx, reader, entry))),
            None => match reader.await {
                Ok(()) => None,
                Err(e) => Some((
                    vec![failed(
                        &entry,
                        format!("reading this export stopped unexpectedly: {e}; please report it with the file attached"),
                    )],
                    State::Done,
                )),
            },
        }
    }
    stream::unfold(State::Start(reading, entry), move |state| async move {
        match state {
            State::Start(reading, entry) => {
                let bytes = match reading.bytes().await {
                    Ok(b) => b,
                    Err(e) => return Some((vec![failed(&entry, e)], State::Done)),
                };
                let (tx, mut rx) = tokio::sync::mpsc::channel(PARTS_AHEAD);
                let (src, name, ext) = (
                    entry.source.clone(),
                    entry.file_name.clone(),
                    entry.ext.clone(),
                );
                let reader = tokio::task::spawn_blocking(move || {
                    read_export_parts(&src, &name, &ext, &bytes, fields, &mut |part| {
                        tx.blocking_send(part).is_ok()
                    })
                });
                next_part(rx.recv().await, rx, reader, entry).await
            }
            State::Reading(mut rx, reader, entry) => {
                next_part(rx.recv().await, rx, reader, entry).await
            }
            State::Done => None,
        }
    })
    .boxed()
}

/// Duplicates settled record by record, in order, and (when records are
/// matched to files) the keys each group is matched on. What it keeps per
/// record is small: the id as a number, and the digests dedup compares.
#[derive(Debug, Default)]
struct Settler {
    dedup: Dedup,
    /// The global index and id of each record dedup saw, in its order.
    seen: Vec<(u32, u64)>,
    /// One key per record (groups' first records only), when matching.
    keys: Option<Vec<Option<matching::Key>>>,
    count: usize,
}

impl Settler {
    fn take(&mut self, r: &Record) -> Outcome {
        let i = self.count;
        self.count += 1;
        let mut out = Outcome::default();
        if let Some(k) = &mut self.keys {
            k.push(None);
        }
        if r.status == Some(Status::Failed) {
            return out;
        }
        let dup = self.dedup.add_marked(&r.marks);
        self.seen.push((i as u32, r.id));
        match (dup, &mut self.keys) {
            (Some((head, rule)), keys) => {
                let (head, head_id) = self.seen[head as usize];
                out.duplicate_of = Some((format!("{head_id:016x}"), rule));
                // The group's recorded paths and DOI are its first record's to match on.
                if let Some(k) = keys.as_mut().and_then(|k| k[head as usize].as_mut()) {
                    k.paths.extend(r.file_path.clone());
                    if k.doi.is_none() {
                        k.doi = r.doi.clone();
                    }
                }
            }
            (None, Some(keys)) => {
                keys[i] = Some(matching::Key {
                    paths: r.file_path.clone().into_iter().collect(),
                    doi: r.doi.clone(),
                    title: r.title.clone(),
                    year: r.year,
                    first_author: r.authors.first().cloned(),
                });
            }
            (None, None) => {}
        }
        out
    }
}

/// The stream a fallible future makes, its error as the one item.
fn flat<T: Send + 'static>(
    f: impl std::future::Future<Output = Result<BoxStream<'static, Result<T>>>> + Send + 'static,
) -> BoxStream<'static, Result<T>> {
    stream::once(f)
        .map(|r| match r {
            Ok(s) => s,
            Err(e) => stream::iter(vec![Err(e)]).boxed(),
        })
        .flatten()
        .boxed()
}

/// A record with what was settled for it: a repeat is `duplicate`.
fn settled_row(mut r: Record, o: Outcome) -> (Record, Outcome) {
    if o.duplicate_of.is_some() {
        r.status = Some(Status::Duplicate);
    }
    (r, o)
}

impl RecordSource {
    /// The records with what was settled for them: in one pass when they
    /// are not matched to files, else the two passes.
    pub fn records(&self) -> BoxStream<'static, Result<(Arc<Settled>, Rows)>> {
        let this = self.clone();
        flat(async move {
            if this.files.is_none() {
                // One pass: what it settles travels with the rows; the
                // exports are listed once, for the rows and for a reader.
                let exports = this.exports().await?;
                let settled = Arc::new(Settled {
                    exports: exports.clone(),
                    ..Default::default()
                });
                return Ok(this
                    .single_pass(exports)
                    .map(move |r| r.map(|rows| (settled.clone(), rows)))
                    .boxed());
            }
            let settled = Arc::new(this.settle().await?);
            Ok(this
                .rows(settled.clone())
                .map(move |r| r.map(|rows| (settled.clone(), rows)))
                .boxed())
        })
    }

    async fn exports(&self) -> Result<Vec<Entry>> {
        let exports: Vec<Entry> = self
            .exports
            .entries(self.recursive)
            .await?
            .into_iter()
            .filter(|e| !e.not_scanned)
            .collect();
        if exports.is_empty() {
            return Err(QuarryError::Source {
                source_spec: self.exports.spec.clone(),
                message: "no exports here: pass a folder or file of RIS, MEDLINE (.nbib), BibTeX or CSV exports".into(),
            });
        }
        Ok(exports)
    }

    /// Every export's records, in listing order.
    fn read_all(&self, exports: Vec<Entry>) -> BoxStream<'static, Vec<Record>> {
        let source = self.exports.clone();
        // Matching a record to its file goes by its recorded path, DOI,
        // title and first author, whichever columns the query reads.
        let fields = match self.files {
            Some(_) => self
                .fields
                .with(Field::FilePath)
                .with(Field::Authors)
                .with(Field::Doi)
                .with(Field::Title),
            None => self.fields,
        };
        stream::iter(exports)
            .map(move |e| {
                let reading = Reading::start(source.clone(), e.clone());
                futures::future::ready((e, reading))
            })
            .buffered(EXPORTS_AHEAD + 1)
            .map(move |(e, reading)| read_one(e, reading, fields))
            .flatten()
            .boxed()
    }

    /// Records with their duplicates settled, in one pass, when they are
    /// not matched to files (duplicates point back, so the order decides).
    fn single_pass(&self, exports: Vec<Entry>) -> BoxStream<'static, Result<Rows>> {
        self.read_all(exports)
            .scan(Settler::default(), |settler, recs| {
                let rows = recs
                    .into_iter()
                    .map(|r| {
                        let o = settler.take(&r);
                        settled_row(r, o)
                    })
                    .collect();
                futures::future::ready(Some(Ok(rows)))
            })
            .boxed()
    }

    /// The first pass: every export read once, duplicates settled, records
    /// matched to files.
    pub async fn settle(&self) -> Result<Settled> {
        let exports = self.exports().await?;
        let files: Vec<(File, Entry)> = match &self.files {
            None => Vec::new(),
            Some(f) => f
                .entries(self.recursive)
                .await?
                .into_iter()
                .filter(|e| !e.not_scanned)
                .map(|e| {
                    (
                        File {
                            source: e.source.clone(),
                            name: e.file_name.clone(),
                        },
                        e,
                    )
                })
                .collect(),
        };
        let matching = self.files.is_some();
        let mut settler = Settler {
            keys: matching.then(Vec::new),
            ..Default::default()
        };
        let mut outcomes: Vec<Outcome> = Vec::new();
        let mut all = self.read_all(exports.clone());
        while let Some(recs) = all.next().await {
            outcomes.extend(recs.iter().map(|r| settler.take(r)));
        }
        let keys = settler.keys.take().unwrap_or_default();
        if matching {
            let file_keys: Vec<File> = files.iter().map(|(f, _)| f.clone()).collect();
            for (o, m) in outcomes
                .iter_mut()
                .zip(matching::match_files(&keys, &file_keys))
            {
                if let (Some(f), Some(rule)) = (m.file, m.rule) {
                    o.matched = Some((f, rule));
                }
                o.match_note = m.note;
            }
        }
        Ok(Settled {
            exports,
            files,
            outcomes,
        })
    }

    /// The second pass: each export's records with their outcomes, in order.
    pub fn rows(
        &self,
        settled: Arc<Settled>,
    ) -> BoxStream<'static, Result<Vec<(Record, Outcome)>>> {
        let all = self.read_all(settled.exports.clone());
        all.map(move |recs| (settled.clone(), recs))
            .scan(0usize, |offset, (settled, recs)| {
                let start = *offset;
                *offset += recs.len();
                let out = if *offset > settled.outcomes.len() {
                    Err(QuarryError::Invalid(
                        "an export changed while it was being read: run the query again".into(),
                    ))
                } else {
                    Ok(recs
                        .into_iter()
                        .zip(settled.outcomes[start..*offset].iter().cloned())
                        .map(|(r, o)| settled_row(r, o))
                        .collect())
                };
                futures::future::ready(Some(out))
            })
            .boxed()
    }
}

/// The text a record is screened on when it has no file: its title and
/// abstract.
fn title_and_abstract(r: &Record) -> Option<crate::ingest::Extracted> {
    use crate::ingest::{BlockKind, Extracted, RawBlock};
    let abstract_text = r
        .abstract_text
        .as_deref()
        .filter(|a| !a.trim().is_empty())?;
    let mut blocks = Vec::new();
    if let Some(t) = r.title.as_deref().filter(|t| !t.trim().is_empty()) {
        blocks.push(RawBlock::new(BlockKind::Heading, t.trim().to_string()));
    }
    blocks.push(RawBlock::new(
        BlockKind::Paragraph,
        abstract_text.trim().to_string(),
    ));
    Some(Extracted {
        blocks,
        extractor: RECORD_EXTRACTOR,
        ..Default::default()
    })
}

/// The extractor name of a record's title and abstract.
pub const RECORD_EXTRACTOR: &str = "record";

impl RecordSource {
    /// The documents a screening of these records reads, one per record
    /// that is neither a duplicate nor a failed row, each with the record's
    /// id as its `source`: the matched file, else the title and abstract,
    /// else a `no_text` document saying there is nothing to screen on. Two
    /// records whose texts are the same are one document (the second a
    /// duplicate), as in a corpus.
    pub fn screening_documents(
        &self,
        store: Option<crate::store::Store>,
        spec: crate::ingest::IngestSpec,
    ) -> BoxStream<'static, Result<crate::ingest::Document>> {
        use crate::ingest::{finish, Document, Status as DocStatus};
        let files = self.files.clone();
        self.records()
                .map(move |batch| -> BoxStream<'static, Result<Document>> {
                    let (settled, batch) = match batch {
                        Ok(b) => b,
                        Err(e) => return stream::iter(vec![Err(e)]).boxed(),
                    };
                    let wanted: Vec<(Record, Outcome)> = batch
                        .into_iter()
                        .filter(|(r, _)| r.status == Some(Status::Ok))
                        .collect();
                    let (files, store, spec) = (files.clone(), store.clone(), spec.clone());
                    stream::iter(wanted)
                        .map(move |(r, o)| {
                            let (settled, files, store, spec) =
                                (settled.clone(), files.clone(), store.clone(), spec.clone());
                            async move {
                                let mut doc = match (o.matched, &files) {
                                    (Some((f, _)), Some(src)) => {
                                        let entry = settled.files[f].1.clone();
                                        crate::corpus::read_entry(src, store.as_ref(), entry, &spec).await
                                    }
                                    _ => {
                                        let export = settled
                                            .exports
                                            .iter()
                                            .find(|e| Some(e.source.as_str()) == r.export.as_deref())
                                            .cloned()
                                            .unwrap_or_else(|| Entry::local(std::path::Path::new(r.export.as_deref().unwrap_or_default()), 0));
                                        let mut entry = export.clone();
                                        entry.uri = format!("record:{}#{}", export.uri, r.record_id);
                                        entry.ext = RECORD_EXTRACTOR.into();
                                        match title_and_abstract(&r) {
                                            Some(x) => {
                                                let spec = spec.clone();
                                                tokio::task::spawn_blocking(move || finish(entry, x, &spec))
                                                    .await
                                                    .map_err(|e| QuarryError::Invalid(format!("reading a record stopped: {e}")))?
                                            }
                                            None => Document::empty(
                                                entry,
                                                DocStatus::NoText,
                                                Some(RECORD_EXTRACTOR),
                                                Some(if files.is_some() {
                                                    "nothing to screen on: the record has no abstract and no file matched it; screen it by hand, or add its full text to the files folder".to_string()
                                                } else {
                                                    "nothing to screen on: the record has no abstract, and no files= folder was given to find its full text".to_string()
                                                }),
                                            ),
                                        }
                                    }
                                };
                                doc.entry.source = r.record_id.clone();
                                Ok(doc)
                            }
                        })
                        .buffered(4)
                        .boxed()
                })
                .flatten()
                .scan(std::collections::HashMap::new(), |seen, doc: Result<Document>| {
                    let doc = doc.map(|mut d| {
                        crate::corpus::mark_duplicate(seen, &mut d, false);
                        d
                    });
                    futures::future::ready(Some(doc))
                })
                .boxed()
    }
}
