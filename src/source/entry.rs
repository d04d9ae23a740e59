//! One file a source names (the part of a source the readers need: no
//! store or network code, so the fuzz targets build without them).

use object_store::path::Path as ObjPath;

/// One file a source names, before it is read.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The path or URL a user would recognise (`corpus/2019/report.txt`, `s3://b/k.pdf`).
    pub source: String,
    /// The location inside the store.
    pub location: ObjPath,
    /// A stable identity for caching: `file:///abs/path`, `s3://bucket/key` or the URL.
    pub uri: String,
    /// The folder relative to the scanned root (`.` for the root itself).
    pub folder: String,
    /// The file name with its extension.
    pub file_name: String,
    /// The lower-case extension without the dot (`""` when there is none).
    pub ext: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Last modification, as milliseconds since the epoch (UTC).
    pub modified_ms: Option<i64>,
    /// The store's version tag (an ETag on S3).
    pub etag: Option<String>,
    /// Set when the file sits below the scanned depth and was not read.
    pub not_scanned: bool,
}

impl Entry {
    /// What says this is the same file as before: where it is, its size,
    /// and its modification time or ETag.
    pub fn version(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.uri,
            self.bytes,
            self.modified_ms.unwrap_or_default(),
            self.etag.as_deref().unwrap_or_default()
        )
    }

    /// The entry of one local file of `bytes` bytes read outside a source
    /// listing (benchmarks and tools that hand bytes to `ingest_bytes`).
    pub fn local(path: &std::path::Path, bytes: u64) -> Self {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Entry {
            bytes,
            ..Entry::unlisted(
                path.display().to_string(),
                format!("file://{}", path.display()),
                ObjPath::from(name.as_str()),
                ".".into(),
                name,
            )
        }
    }

    /// An entry no store listing gave (one web page, a link to nothing):
    /// no size, no version, read when its turn comes.
    pub fn unlisted(
        source: String,
        uri: String,
        location: ObjPath,
        folder: String,
        file_name: String,
    ) -> Self {
        Entry {
            source,
            location,
            uri,
            folder,
            ext: ext_of(&file_name),
            file_name,
            bytes: 0,
            modified_ms: None,
            etag: None,
            not_scanned: false,
        }
    }
}

/// The lower-case extension of a file name, without the dot.
pub fn ext_of(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.contains('/') => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}
