//! Sources: a local path, glob, `file://` URL, `s3://` prefix or one
//! `http(s)://` document, resolved to an object store and listed lazily.

use std::sync::Arc;

use bytes::Bytes;
use futures::TryStreamExt;
use globset::{Glob, GlobMatcher};
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjPath;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};

use crate::error::{QuarryError, Result};

mod entry;
pub use entry::{ext_of, Entry};

/// A resolved source: where it lives and what to list.
#[derive(Debug, Clone)]
pub struct Source {
    /// The text the user passed.
    pub spec: String,
    kind: SourceKind,
}

#[derive(Debug, Clone)]
enum SourceKind {
    /// A store with a root prefix to list (a folder or an S3 prefix).
    Listing {
        store: Arc<dyn ObjectStore>,
        uri_base: String,
        /// How to print a location: `display_base` + path relative to `root`.
        display_base: String,
        root: ObjPath,
        glob: Option<GlobMatcher>,
        recursive_glob: bool,
    },
    /// A single object in a store.
    Single {
        store: Arc<dyn ObjectStore>,
        uri_base: String,
        location: ObjPath,
        display: String,
    },
    /// One document over HTTP(S).
    Http { url: url::Url },
}

/// A store path from a user's text, kept as written (`Path::from` would
/// percent-encode non-ASCII names, which then do not match the listing).
fn obj_path(s: &str) -> ObjPath {
    ObjPath::parse(s).unwrap_or_else(|_| ObjPath::from(s))
}

fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Builds an S3 store for `bucket` from the usual AWS environment variables
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
/// `AWS_ENDPOINT_URL` for an S3-compatible server, `AWS_ALLOW_HTTP`).
pub fn s3_store(bucket: &str) -> Result<Arc<dyn ObjectStore>> {
    let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
    let endpoint = std::env::var("AWS_ENDPOINT_URL")
        .or_else(|_| std::env::var("AWS_ENDPOINT"))
        .ok();
    if let Some(ep) = endpoint {
        b = b
            .with_endpoint(&ep)
            .with_virtual_hosted_style_request(false);
        if ep.starts_with("http://") {
            b = b.with_allow_http(true);
        }
    }
    if std::env::var("AWS_REGION").is_err() && std::env::var("AWS_DEFAULT_REGION").is_err() {
        b = b.with_region("us-east-1");
    }
    let store = b.build().map_err(|e| QuarryError::Source {
        source_spec: format!("s3://{bucket}/"),
        message: format!("cannot configure S3 access: {e}"),
    })?;
    // Reads and listings whose answer came back cut are tried again.
    Ok(Arc::new(crate::store::steady::Steady::new(Arc::new(store))))
}

impl Source {
    /// Whether the source is one document (a file, an object, a URL)
    /// rather than a folder, prefix or glob to list.
    pub fn is_single(&self) -> bool {
        !matches!(self.kind, SourceKind::Listing { .. })
    }

    /// Resolves a user's source string. Local paths are checked now, so a
    /// missing folder is an error before anything runs.
    pub fn parse(spec: &str) -> Result<Self> {
        let trimmed = spec.trim();
        if trimmed.is_empty() {
            return Err(QuarryError::Source {
                source_spec: spec.into(),
                message: "the source is empty: pass a folder, a file, a glob, s3://bucket/prefix/ or an https:// URL".into(),
            });
        }
        if let Some(rest) = trimmed.strip_prefix("s3://") {
            let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(QuarryError::Source {
                    source_spec: spec.into(),
                    message: "an s3:// source needs a bucket: s3://bucket/prefix/".into(),
                });
            }
            let store = s3_store(bucket)?;
            return Ok(Self::from_store_key(
                spec,
                store,
                &format!("s3://{bucket}/"),
                key,
            ));
        }
        if trimmed.starts_with("http://") || trimmed.starts_with("https://") {
            let url = url::Url::parse(trimmed).map_err(|e| QuarryError::Source {
                source_spec: spec.into(),
                message: format!("not a valid URL: {e}"),
            })?;
            return Ok(Self {
                spec: spec.into(),
                kind: SourceKind::Http { url },
            });
        }
        let local = if let Some(rest) = trimmed.strip_prefix("file://") {
            rest.to_string()
        } else if trimmed.contains("://") {
            return Err(QuarryError::Source {
                source_spec: spec.into(),
                message: "unsupported scheme: use a local path, file://, s3:// or https://".into(),
            });
        } else {
            trimmed.to_string()
        };
        Self::local(spec, &local)
    }

    fn from_store_key(spec: &str, store: Arc<dyn ObjectStore>, base: &str, key: &str) -> Self {
        if is_glob(key) {
            let (root, pattern) = split_glob(key);
            return Self::listing_glob(spec, store, base, &root, &pattern);
        }
        if key.is_empty() || key.ends_with('/') {
            let root = obj_path(key.trim_end_matches('/'));
            return Self {
                spec: spec.into(),
                kind: SourceKind::Listing {
                    store,
                    uri_base: base.to_string(),
                    display_base: format!("{base}{key}"),
                    root,
                    glob: None,
                    recursive_glob: false,
                },
            };
        }
        // A key without a trailing slash: one object (listing falls back to a
        // prefix if it is not there; see `entries`).
        Self {
            spec: spec.into(),
            kind: SourceKind::Single {
                store,
                uri_base: base.to_string(),
                location: obj_path(key),
                display: format!("{base}{key}"),
            },
        }
    }

    fn listing_glob(
        spec: &str,
        store: Arc<dyn ObjectStore>,
        base: &str,
        root: &str,
        pattern: &str,
    ) -> Self {
        let matcher = Glob::new(pattern).ok().map(|g| g.compile_matcher());
        Self {
            spec: spec.into(),
            kind: SourceKind::Listing {
                store,
                uri_base: base.to_string(),
                display_base: format!(
                    "{base}{}",
                    if root.is_empty() {
                        String::new()
                    } else {
                        format!("{root}/")
                    }
                ),
                root: obj_path(root),
                recursive_glob: pattern.contains('/') || pattern.contains("**"),
                glob: matcher,
            },
        }
    }

    fn local(spec: &str, path: &str) -> Result<Self> {
        let (dir_part, pattern) = if is_glob(path) {
            let (root, pat) = split_glob(path);
            (
                if root.is_empty() {
                    ".".to_string()
                } else {
                    root
                },
                Some(pat),
            )
        } else {
            (path.to_string(), None)
        };
        let p = std::path::Path::new(&dir_part);
        let meta = std::fs::metadata(p).map_err(|e| QuarryError::Source {
            source_spec: spec.into(),
            message: if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "'{dir_part}' does not exist: check the path (relative paths start from {})",
                    std::env::current_dir()
                        .map(|d| d.display().to_string())
                        .unwrap_or_default()
                )
            } else {
                format!("cannot open '{dir_part}': {e}")
            },
        })?;
        let canonical = std::fs::canonicalize(p).map_err(|e| QuarryError::Source {
            source_spec: spec.into(),
            message: format!("cannot resolve '{dir_part}': {e}"),
        })?;
        if meta.is_file() {
            let parent = canonical.parent().unwrap_or(std::path::Path::new("/"));
            let name = canonical
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let store =
                LocalFileSystem::new_with_prefix(parent).map_err(|e| QuarryError::Source {
                    source_spec: spec.into(),
                    message: e.to_string(),
                })?;
            return Ok(Self {
                spec: spec.into(),
                kind: SourceKind::Single {
                    store: Arc::new(store),
                    uri_base: format!("file://{}/", parent.display()),
                    location: obj_path(&name),
                    display: path.to_string(),
                },
            });
        }
        let store =
            LocalFileSystem::new_with_prefix(&canonical).map_err(|e| QuarryError::Source {
                source_spec: spec.into(),
                message: e.to_string(),
            })?;
        let mut display_base = dir_part.clone();
        if !display_base.ends_with('/') {
            display_base.push('/');
        }
        if display_base == "./" && pattern.is_some() {
            display_base.clear();
        }
        Ok(Self {
            spec: spec.into(),
            kind: SourceKind::Listing {
                store: Arc::new(store),
                uri_base: format!("file://{}/", canonical.display()),
                display_base,
                root: ObjPath::default(),
                recursive_glob: pattern
                    .as_deref()
                    .is_some_and(|p| p.contains('/') || p.contains("**")),
                glob: pattern
                    .and_then(|p| Glob::new(&p).ok())
                    .map(|g| g.compile_matcher()),
            },
        })
    }

    /// Lists the files of the source, sorted by path so every run sees the
    /// same order. Only names and sizes are read here, never contents.
    /// Files one level below a non-recursive listing come back with
    /// `not_scanned` set, so a survey can say they were left out.
    pub async fn entries(&self, recursive: bool) -> Result<Vec<Entry>> {
        match &self.kind {
            SourceKind::Http { url } => {
                let name = url
                    .path_segments()
                    .and_then(|mut s| s.next_back().map(str::to_string))
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "index.html".into());
                Ok(vec![Entry::unlisted(
                    url.to_string(),
                    url.to_string(),
                    ObjPath::from(name.as_str()),
                    ".".into(),
                    name,
                )])
            }
            SourceKind::Single {
                store,
                uri_base,
                location,
                display,
            } => match store.head(location).await {
                Ok(meta) => Ok(vec![entry_from_meta(
                    &meta,
                    uri_base,
                    display.clone(),
                    ".".into(),
                    false,
                )]),
                Err(object_store::Error::NotFound { .. }) if display.contains("://") => {
                    // "s3://b/prefix" without a slash: list it as a folder.
                    let sub = Source {
                        spec: self.spec.clone(),
                        kind: SourceKind::Listing {
                            store: store.clone(),
                            uri_base: uri_base.clone(),
                            display_base: format!("{display}/"),
                            root: location.clone(),
                            glob: None,
                            recursive_glob: false,
                        },
                    };
                    Box::pin(sub.entries(recursive)).await
                }
                Err(e) => Err(QuarryError::Source {
                    source_spec: self.spec.clone(),
                    message: not_found_message(&e, display),
                }),
            },
            SourceKind::Listing {
                store,
                uri_base,
                display_base,
                root,
                glob,
                recursive_glob,
            } => {
                let deep = recursive || *recursive_glob;
                let root_opt = if root.as_ref().is_empty() {
                    None
                } else {
                    Some(root)
                };
                let mut out = Vec::new();
                if deep {
                    let metas: Vec<ObjectMeta> = store
                        .list(root_opt)
                        .try_collect()
                        .await
                        .map_err(|e| self.list_error(&e))?;
                    for m in metas {
                        let rel = relative(root, &m.location);
                        if glob.as_ref().is_some_and(|g| !g.is_match(&rel)) {
                            continue;
                        }
                        out.push(entry_from_meta(
                            &m,
                            uri_base,
                            format!("{display_base}{rel}"),
                            folder_of(&rel),
                            false,
                        ));
                    }
                } else {
                    let listing = store
                        .list_with_delimiter(root_opt)
                        .await
                        .map_err(|e| self.list_error(&e))?;
                    for m in &listing.objects {
                        let rel = relative(root, &m.location);
                        if glob.as_ref().is_some_and(|g| !g.is_match(&rel)) {
                            continue;
                        }
                        out.push(entry_from_meta(
                            m,
                            uri_base,
                            format!("{display_base}{rel}"),
                            ".".into(),
                            false,
                        ));
                    }
                    // One level further down: listed, not read.
                    for sub in &listing.common_prefixes {
                        let below = store
                            .list_with_delimiter(Some(sub))
                            .await
                            .map_err(|e| self.list_error(&e))?;
                        for m in &below.objects {
                            let rel = relative(root, &m.location);
                            if glob.as_ref().is_some_and(|g| {
                                !g.is_match(rel.rsplit('/').next().unwrap_or(&rel))
                            }) {
                                continue;
                            }
                            out.push(entry_from_meta(
                                m,
                                uri_base,
                                format!("{display_base}{rel}"),
                                folder_of(&rel),
                                true,
                            ));
                        }
                    }
                }
                // The object store's listing passes over a link whose
                // target is gone; a local folder lists it here, so that it
                // is a failed row that says so rather than a file lost.
                if let Some(dir) = uri_base.strip_prefix("file://") {
                    for rel in broken_links(std::path::Path::new(dir), deep) {
                        if glob.as_ref().is_some_and(|g| !g.is_match(&rel)) {
                            continue;
                        }
                        let name = rel.rsplit('/').next().unwrap_or(&rel).to_string();
                        out.push(Entry::unlisted(
                            format!("{display_base}{rel}"),
                            format!("{uri_base}{rel}"),
                            obj_path(&rel),
                            folder_of(&rel),
                            name,
                        ));
                    }
                }
                out.retain(|e| !is_hidden(&e.location));
                out.sort_by(|a, b| (a.not_scanned, &a.source).cmp(&(b.not_scanned, &b.source)));
                Ok(out)
            }
        }
    }

    fn list_error(&self, e: &object_store::Error) -> QuarryError {
        QuarryError::Source {
            source_spec: self.spec.clone(),
            message: not_found_message(e, &self.spec),
        }
    }

    /// The last `n` bytes of a listed file (all of it when smaller), or
    /// `None` for a document fetched over HTTP. What is read is checked
    /// against the listed size: a file that changed since is an error.
    pub async fn tail(&self, entry: &Entry, n: u64) -> Result<Option<Bytes>> {
        let store = match &self.kind {
            SourceKind::Listing { store, .. } | SourceKind::Single { store, .. } => store,
            SourceKind::Http { .. } => return Ok(None),
        };
        if entry.bytes == 0 {
            return Ok(Some(Bytes::new()));
        }
        let range = entry.bytes.saturating_sub(n)..entry.bytes;
        let got = store
            .get_range(&entry.location, range.clone())
            .await
            .map_err(|e| QuarryError::Read {
                path: entry.source.clone(),
                message: e.to_string(),
            })?;
        if got.len() as u64 != range.end - range.start {
            return Err(QuarryError::Read {
                path: entry.source.clone(),
                message: format!(
                    "the file changed while it was read: {} bytes where the listing said {}",
                    got.len(),
                    range.end - range.start
                ),
            });
        }
        Ok(Some(got))
    }

    /// Reads a whole file, refusing one larger than `max_bytes` before
    /// downloading it.
    pub async fn read(&self, entry: &Entry, max_bytes: u64) -> Result<Bytes> {
        let too_big = |n: u64| QuarryError::TooLarge {
            path: entry.source.clone(),
            bytes: n,
            limit: max_bytes,
        };
        if entry.bytes > max_bytes {
            return Err(too_big(entry.bytes));
        }
        let store = match &self.kind {
            SourceKind::Listing { store, .. } | SourceKind::Single { store, .. } => store,
            SourceKind::Http { url } => return fetch_http(url, max_bytes, &entry.source).await,
        };
        let got = store
            .get(&entry.location)
            .await
            .map_err(|e| QuarryError::Read {
                path: entry.source.clone(),
                message: broken_link_message(entry).unwrap_or_else(|| e.to_string()),
            })?;
        let bytes = got.bytes().await.map_err(|e| QuarryError::Read {
            path: entry.source.clone(),
            message: e.to_string(),
        })?;
        if bytes.len() as u64 > max_bytes {
            return Err(too_big(bytes.len() as u64));
        }
        Ok(bytes)
    }
}

/// One HTTP client for every download: it holds the connection pool.
static HTTP: std::sync::LazyLock<std::result::Result<reqwest::Client, String>> =
    std::sync::LazyLock::new(|| {
        reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(120))
            .user_agent(concat!("quarry/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot start an HTTP client: {e}"))
    });

async fn fetch_http(url: &url::Url, max_bytes: u64, display: &str) -> Result<Bytes> {
    use futures::StreamExt;
    let err = |m: String| QuarryError::Read {
        path: display.to_string(),
        message: m,
    };
    let client = HTTP.as_ref().map_err(|e| err(e.clone()))?;
    let resp = client
        .get(url.clone())
        .send()
        .await
        .map_err(|e| err(format!("download failed: {e}")))?;
    if !resp.status().is_success() {
        return Err(err(format!("the server answered {}", resp.status())));
    }
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| err(format!("download failed: {e}")))?;
        body.extend_from_slice(&chunk);
        if body.len() as u64 > max_bytes {
            return Err(QuarryError::TooLarge {
                path: display.to_string(),
                bytes: body.len() as u64,
                limit: max_bytes,
            });
        }
    }
    Ok(Bytes::from(body))
}

fn not_found_message(e: &object_store::Error, what: &str) -> String {
    match e {
        object_store::Error::NotFound { .. } => format!("'{what}' does not exist"),
        other => other.to_string(),
    }
}

fn is_hidden(p: &ObjPath) -> bool {
    p.parts().any(|part| part.as_ref().starts_with('.'))
}

fn relative(root: &ObjPath, loc: &ObjPath) -> String {
    let r = root.as_ref();
    let l = loc.as_ref();
    if r.is_empty() {
        return l.to_string();
    }
    l.strip_prefix(r)
        .map(|s| s.trim_start_matches('/').to_string())
        .unwrap_or_else(|| l.to_string())
}

fn folder_of(rel: &str) -> String {
    match rel.rsplit_once('/') {
        Some((dir, _)) => dir.to_string(),
        None => ".".into(),
    }
}

/// The paths (relative to `dir`, with `/`) of the symbolic links under
/// `dir` whose target does not exist: in `dir` itself, or in every folder
/// below it when `deep` (not through linked folders, which the listing
/// follows itself, nor hidden ones).
fn broken_links(dir: &std::path::Path, deep: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, rel)) = todo.pop() {
        let Ok(items) = std::fs::read_dir(&path) else {
            continue;
        };
        for item in items.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = item.file_type() else {
                continue;
            };
            let rel = format!("{rel}{name}");
            if kind.is_symlink() && std::fs::metadata(item.path()).is_err() {
                out.push(rel);
            } else if deep && kind.is_dir() {
                todo.push((item.path(), format!("{rel}/")));
            }
        }
    }
    out
}

/// What to say of a local entry that is a symbolic link to nothing.
fn broken_link_message(entry: &Entry) -> Option<String> {
    let path = std::path::Path::new(entry.uri.strip_prefix("file://")?);
    let is_link = std::fs::symlink_metadata(path)
        .ok()?
        .file_type()
        .is_symlink();
    if !is_link || std::fs::metadata(path).is_ok() {
        return None;
    }
    let target = std::fs::read_link(path).ok()?;
    Some(format!(
        "it is a symbolic link to '{}', which does not exist: fix the link or remove it",
        target.display()
    ))
}

fn entry_from_meta(
    m: &ObjectMeta,
    uri_base: &str,
    source: String,
    folder: String,
    not_scanned: bool,
) -> Entry {
    let file_name = m.location.filename().unwrap_or_default().to_string();
    Entry {
        uri: format!("{uri_base}{}", m.location),
        source,
        location: m.location.clone(),
        ext: ext_of(&file_name),
        file_name,
        folder,
        bytes: m.size,
        modified_ms: Some(m.last_modified.timestamp_millis()),
        etag: m.e_tag.clone(),
        not_scanned,
    }
}

/// Splits `dir/sub/*.txt` into (`dir/sub`, `*.txt`) at the last path part
/// before the first glob character.
fn split_glob(path: &str) -> (String, String) {
    let first = path.find(['*', '?', '[']).unwrap_or(path.len());
    match path[..first].rfind('/') {
        Some(slash) => (path[..slash].to_string(), path[slash + 1..].to_string()),
        None => (String::new(), path.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_split_at_the_last_plain_folder() {
        assert_eq!(split_glob("a/b/*.txt"), ("a/b".into(), "*.txt".into()));
        assert_eq!(split_glob("*.md"), ("".into(), "*.md".into()));
        assert_eq!(split_glob("a/**/x?.txt"), ("a".into(), "**/x?.txt".into()));
    }

    #[test]
    fn extensions_are_lower_case() {
        assert_eq!(ext_of("Report.DOCX"), "docx");
        assert_eq!(ext_of(".hidden"), "");
        assert_eq!(ext_of("README"), "");
    }
}
