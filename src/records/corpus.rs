//! A folder (or prefix, or file) of exports read as one set of records:
//! the first pass settles duplicates and matches to files with a few keys a
//! record, the second gives the records export by export with what the
//! first pass settled.

use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt};

use super::dedup::{self, Dedup};
use super::matching::{self, File};
use super::{read_export, Record, Status};
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

async fn read_one(source: &Source, entry: &Entry) -> Vec<Record> {
    let bytes = match source.read(entry, MAX_EXPORT_BYTES).await {
        Ok(b) => b,
        Err(e) => {
            return vec![Record {
                record_id: format!("failed:{}", entry.file_name),
                export: entry.source.clone(),
                database: entry.file_name.clone(),
                status: Some(Status::Failed),
                note: Some(e.to_string()),
                ..Default::default()
            }]
        }
    };
    let (src, name, ext) = (
        entry.source.clone(),
        entry.file_name.clone(),
        entry.ext.clone(),
    );
    tokio::task::spawn_blocking(move || read_export(&src, &name, &ext, &bytes))
        .await
        .unwrap_or_else(|e| {
            vec![Record {
                export: entry.source.clone(),
                status: Some(Status::Failed),
                note: Some(format!("reading this export stopped unexpectedly: {e}; please report it with the file attached")),
                ..Default::default()
            }]
        })
}

impl RecordSource {
    /// The first pass: every export read once, duplicates settled, records
    /// matched to files.
    pub async fn settle(&self) -> Result<Settled> {
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
        let mut dedup = Dedup::default();
        let mut outcomes: Vec<Outcome> = Vec::new();
        let mut keys: Vec<Option<matching::Key>> = Vec::new();
        // The global index and id of each record dedup saw, in its order.
        let mut seen: Vec<(usize, String)> = Vec::new();
        let matching = self.files.is_some();
        for entry in &exports {
            for r in read_one(&self.exports, entry).await {
                let i = outcomes.len();
                outcomes.push(Outcome::default());
                keys.push(None);
                if r.status == Some(Status::Failed) {
                    continue;
                }
                let dup = dedup.add(&dedup::Key {
                    doi: r.doi.clone(),
                    title: r.title.clone(),
                    year: r.year,
                });
                seen.push((i, r.record_id.clone()));
                if let Some((head, rule)) = dup {
                    let (head, head_id) = seen[head as usize].clone();
                    outcomes[i].duplicate_of = Some((head_id, rule));
                    // The group's recorded paths and DOI are the head's to match on.
                    if let Some(k) = keys[head].as_mut() {
                        k.paths.extend(r.file_path.clone());
                        if k.doi.is_none() {
                            k.doi = r.doi.clone();
                        }
                    }
                } else if matching {
                    keys[i] = Some(matching::Key {
                        paths: r.file_path.clone().into_iter().collect(),
                        doi: r.doi.clone(),
                        title: r.title.clone(),
                        year: r.year,
                        first_author: r.authors.first().cloned(),
                    });
                }
            }
        }
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
        let source = self.exports.clone();
        let n = settled.exports.len();
        stream::iter(0..n)
            .then(move |i| {
                let source = source.clone();
                let settled = settled.clone();
                async move {
                    (
                        settled.clone(),
                        read_one(&source, &settled.exports[i]).await,
                    )
                }
            })
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
                        .map(|(mut r, o)| {
                            if o.duplicate_of.is_some() {
                                r.status = Some(Status::Duplicate);
                            }
                            (r, o)
                        })
                        .collect())
                };
                futures::future::ready(Some(out))
            })
            .boxed()
    }
}
