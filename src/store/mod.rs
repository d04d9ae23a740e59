//! The run store: a folder or object-store prefix holding Parquet. For now it
//! keeps ingestion results, keyed on the file's identity, size, modification
//! time (or ETag) and the ingest spec, so an unchanged corpus is parsed once.

pub mod claims;
pub mod delta;
pub mod packs;
pub mod results;
pub mod saved;
pub mod steady;

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::file::metadata::KeyValue;
use datafusion::parquet::file::properties::WriterProperties;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{QuarryError, Result};
use crate::ingest::{Block, BlockKind, Document, IngestSpec, Status};
use crate::source::{s3_store, Entry};
use crate::tables;

/// Where a run's tables and caches live.
#[derive(Debug, Clone)]
pub struct Store {
    store: Arc<dyn ObjectStore>,
    prefix: ObjPath,
    /// The location as the user gave it.
    pub location: String,
    /// The folder, for a local store.
    local_dir: Option<std::path::PathBuf>,
    /// The ingest cache (shared by the store's clones).
    ingest: Arc<packs::Packs>,
}

/// The folder of the ingest cache in a store.
pub const INGEST_DIR: &str = "ingest";

/// The document-level fields kept beside a cached document's blocks.
#[derive(Debug, Serialize, Deserialize)]
struct CachedDoc {
    extractor: Option<String>,
    status: Status,
    error: Option<String>,
    document_id: Option<String>,
    pages: Option<u32>,
    tokens: Option<u64>,
    chars_removed: BTreeMap<String, u64>,
}

impl Store {
    /// Opens (creating if needed) a store at a local folder or `s3://bucket/prefix/`.
    pub fn open(location: &str) -> Result<Self> {
        let err = |m: String| QuarryError::Store {
            location: location.to_string(),
            message: m,
        };
        if let Some(rest) = location.strip_prefix("s3://") {
            let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
            let store = s3_store(bucket)?;
            return Ok(Self {
                store,
                prefix: ObjPath::from(key.trim_end_matches('/')),
                location: location.to_string(),
                local_dir: None,
                ingest: Self::ingest_packs(),
            });
        }
        let dir = location.strip_prefix("file://").unwrap_or(location);
        std::fs::create_dir_all(dir)
            .map_err(|e| err(format!("cannot create the store folder: {e}")))?;
        let fs = LocalFileSystem::new_with_prefix(dir).map_err(|e| err(e.to_string()))?;
        Ok(Self {
            store: Arc::new(fs),
            prefix: ObjPath::default(),
            location: location.to_string(),
            local_dir: std::fs::canonicalize(dir).ok(),
            ingest: Self::ingest_packs(),
        })
    }

    fn ingest_packs() -> Arc<packs::Packs> {
        Arc::new(packs::Packs::new(INGEST_DIR, "parquet"))
    }

    /// The URL of table folder `rel` for Delta Lake, and the object store
    /// that URL's paths are read from (the file system's root, or the S3
    /// bucket's).
    pub fn delta_location(&self, rel: &str) -> Result<(url::Url, Arc<dyn ObjectStore>)> {
        let bad = |m: String| QuarryError::Store {
            location: self.location.clone(),
            message: m,
        };
        if let Some(dir) = &self.local_dir {
            // Not created here: a table is read where it may not exist
            // (a replay of a store written before it), and the first
            // commit makes the folders it needs.
            let d = dir.join(rel);
            let u = url::Url::from_directory_path(&d)
                .map_err(|_| bad(format!("{} is not an absolute path", d.display())))?;
            return Ok((u, Arc::new(LocalFileSystem::new())));
        }
        let rest = self
            .location
            .strip_prefix("s3://")
            .unwrap_or(&self.location);
        let bucket = rest.split('/').next().unwrap_or_default();
        let u = url::Url::parse(&format!("s3://{bucket}/{}/", self.path(rel)))
            .map_err(|e| bad(e.to_string()))?;
        Ok((u, self.store.clone()))
    }

    /// The object store and the prefix every store path is under.
    pub fn object_store(&self) -> (Arc<dyn ObjectStore>, ObjPath) {
        (self.store.clone(), self.prefix.clone())
    }

    /// Writes `bytes` at `rel` (atomically: object stores publish whole
    /// objects, the local store writes then renames).
    pub async fn put(&self, rel: &str, bytes: Vec<u8>) -> Result<()> {
        self.store
            .put(&self.path(rel), PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(|e| self.error(e))
    }

    /// Reads `rel`, `None` when it does not exist.
    pub async fn get(&self, rel: &str) -> Result<Option<Bytes>> {
        match self.store.get(&self.path(rel)).await {
            Ok(g) => g.bytes().await.map(Some).map_err(|e| self.error(e)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error(e)),
        }
    }

    /// Bytes `range` of `rel`, `None` when it does not exist.
    pub async fn get_range(&self, rel: &str, range: std::ops::Range<u64>) -> Result<Option<Bytes>> {
        match self.store.get_range(&self.path(rel), range).await {
            Ok(b) => Ok(Some(b)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error(e)),
        }
    }

    /// Every object under `rel/`: paths relative to the store and sizes, sorted.
    pub async fn list(&self, rel: &str) -> Result<Vec<(String, u64)>> {
        use futures::TryStreamExt;
        let base = self.path(rel);
        let metas: Vec<object_store::ObjectMeta> = self
            .store
            .list(Some(&base))
            .try_collect()
            .await
            .map_err(|e| self.error(e))?;
        let skip = if self.prefix.as_ref().is_empty() {
            0
        } else {
            self.prefix.as_ref().len() + 1
        };
        let mut out: Vec<(String, u64)> = metas
            .into_iter()
            .map(|m| (m.location.as_ref()[skip..].to_string(), m.size))
            .collect();
        out.sort();
        Ok(out)
    }

    /// Deletes `rel` (missing is fine).
    pub async fn delete(&self, rel: &str) -> Result<()> {
        match self.store.delete(&self.path(rel)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error(e)),
        }
    }

    fn error(&self, e: object_store::Error) -> QuarryError {
        QuarryError::Store {
            location: self.location.clone(),
            message: e.to_string(),
        }
    }

    fn path(&self, rel: &str) -> ObjPath {
        if self.prefix.as_ref().is_empty() {
            ObjPath::from(rel)
        } else {
            ObjPath::from(format!("{}/{rel}", self.prefix))
        }
    }

    /// The cache key of one file under one ingest spec.
    pub fn ingest_key(entry: &Entry, spec: &IngestSpec) -> String {
        let s = format!("{}|{}", entry.version(), spec.fingerprint());
        hex::encode(Sha256::digest(s.as_bytes()))
    }

    /// A cached ingestion of `entry`, if the store has one for this spec.
    pub async fn get_ingest(&self, entry: &Entry, spec: &IngestSpec) -> Option<Document> {
        if entry.uri.starts_with("http") && entry.modified_ms.is_none() {
            return None; // a URL without a version cannot be known unchanged
        }
        let key = Self::ingest_key(entry, spec);
        let bytes = self.ingest.get(self, &key).await?;
        decode_document(entry.clone(), bytes).ok()
    }

    /// Keeps an ingestion for later runs. A failure to write is returned,
    /// not hidden, but callers may go on without the cache.
    pub async fn put_ingest(&self, doc: &Document, spec: &IngestSpec) -> Result<()> {
        let key = Self::ingest_key(&doc.entry, spec);
        self.ingest.put(self, &key, encode_document(doc)?).await
    }

    /// Packs the ingestions kept since the last fold (see [`packs`]).
    pub async fn flush_ingest(&self) -> Result<()> {
        self.ingest.flush(self).await
    }
}

/// One batch as a ZSTD-compressed Parquet file, with optional key-value metadata.
pub fn parquet_bytes(batch: &RecordBatch, meta: Option<(&str, String)>) -> Result<Vec<u8>> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_key_value_metadata(meta.map(|(k, v)| vec![KeyValue::new(k.into(), v)]))
        .build();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props))
        .map_err(|e| QuarryError::DataFusion(e.into()))?;
    w.write(batch)
        .map_err(|e| QuarryError::DataFusion(e.into()))?;
    w.close().map_err(|e| QuarryError::DataFusion(e.into()))?;
    Ok(buf)
}

/// Reads every batch of a Parquet file and the value of one metadata key.
pub fn read_parquet_meta(bytes: Bytes, key: &str) -> Result<(Option<String>, Vec<RecordBatch>)> {
    let b = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .map_err(|e| QuarryError::DataFusion(e.into()))?;
    let value = b
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == key))
        .and_then(|k| k.value.clone());
    let reader = b.build().map_err(|e| QuarryError::DataFusion(e.into()))?;
    Ok((value, reader.collect::<Result<_, _>>()?))
}

/// Reads every batch of a Parquet file.
pub fn read_parquet(bytes: Bytes) -> Result<Vec<RecordBatch>> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .and_then(|b| b.build())
        .map_err(|e| QuarryError::DataFusion(e.into()))?;
    Ok(reader.collect::<Result<_, _>>()?)
}

fn encode_document(doc: &Document) -> Result<Vec<u8>> {
    let meta = CachedDoc {
        extractor: doc.extractor.clone(),
        status: doc.status,
        error: doc.error.clone(),
        document_id: doc.document_id.clone(),
        pages: doc.pages,
        tokens: doc.tokens,
        chars_removed: doc.chars_removed.clone(),
    };
    let json = serde_json::to_string(&meta).map_err(|e| QuarryError::Invalid(e.to_string()))?;
    let batch = tables::blocks_batch(doc)?;
    parquet_bytes(&batch, Some(("quarry.document", json)))
}

fn decode_document(entry: Entry, bytes: Bytes) -> Result<Document> {
    let uri = entry.uri.clone();
    let bad = |m: String| QuarryError::Store {
        location: uri.clone(),
        message: m,
    };
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(|e| bad(e.to_string()))?;
    let json = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| {
            kv.iter()
                .find(|k| k.key == "quarry.document")
                .and_then(|k| k.value.clone())
        })
        .ok_or_else(|| bad("cached ingestion without its document metadata".into()))?;
    let meta: CachedDoc = serde_json::from_str(&json).map_err(|e| bad(e.to_string()))?;
    let reader = builder.build().map_err(|e| bad(e.to_string()))?;
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>()?;
    let mut doc = Document::empty(entry, meta.status, meta.extractor.as_deref(), meta.error);
    doc.document_id = meta.document_id;
    doc.pages = meta.pages;
    doc.tokens = meta.tokens;
    doc.chars_removed = meta.chars_removed;
    doc.cached = true;
    for batch in &batches {
        let text = tables::strings(batch, "text").ok_or_else(|| bad("no text column".into()))?;
        let kind = tables::strings(batch, "kind").ok_or_else(|| bad("no kind column".into()))?;
        let section =
            tables::strings(batch, "section").ok_or_else(|| bad("no section column".into()))?;
        let page = batch
            .column_by_name("page")
            .map(|c| {
                c.as_primitive::<datafusion::arrow::datatypes::Int32Type>()
                    .clone()
            })
            .ok_or_else(|| bad("no page column".into()))?;
        let confidence = batch.column_by_name("ocr_confidence").map(|c| {
            c.as_primitive::<datafusion::arrow::datatypes::Float32Type>()
                .clone()
        });
        for row in 0..batch.num_rows() {
            if !doc.text.is_empty() {
                doc.text.push_str("\n\n");
            }
            let start = doc.text.len();
            doc.text.push_str(text.value(row));
            doc.blocks.push(Block {
                kind: BlockKind::parse(kind.value(row)).unwrap_or(BlockKind::Paragraph),
                page: (!page.is_null(row)).then(|| page.value(row) as u32),
                section: (!section.is_null(row)).then(|| section.value(row).to_string()),
                start,
                end: doc.text.len(),
                cells: tables::cells_from(batch, row),
                confidence: confidence
                    .as_ref()
                    .filter(|c| !c.is_null(row))
                    .map(|c| c.value(row)),
            });
        }
    }
    if let Some(id) = &doc.document_id {
        if *id != hex::encode(Sha256::digest(doc.text.as_bytes())) {
            return Err(bad("cached text does not match its document_id".into()));
        }
    }
    Ok(doc)
}
