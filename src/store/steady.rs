//! An S3 store whose reads are tried again when an answer came back cut
//! or garbled. object_store retries a 5xx, a refused connection and an
//! object's body cut half-way, but not a listing whose answer was cut, nor
//! a reply it could not read (a non-200 answer cut before its end): those
//! reach the caller as a generic error, and one such answer would stop a
//! run over an S3 corpus or store. Reads and listings change nothing, so
//! they are tried again here, a few times with a growing pause; writes are
//! passed on as they are (a put whose answer was lost may have landed, and
//! only its caller can tell: see `Delta::append_once`).

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, Error, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result,
};

/// Attempts at one read (the first and the tries again).
pub const ATTEMPTS: u32 = 4;

/// The pause before try `n` (1, 2, ...): 200 ms, 800 ms, 3.2 s.
fn pause(n: u32) -> Duration {
    Duration::from_millis(200 * 4u64.pow(n.saturating_sub(1)))
}

/// Whether a read that failed with `e` is worth trying again: an error
/// object_store could not name (a cut or unreadable answer). A missing
/// object, a refusal, a failed precondition and a bad path are answers,
/// the same each time.
fn transient(e: &Error) -> bool {
    matches!(e, Error::Generic { .. })
}

/// `inner`, its reads and listings tried again (see the module).
#[derive(Debug)]
pub struct Steady {
    inner: Arc<dyn ObjectStore>,
}

impl Steady {
    /// `inner` with its reads tried again.
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Self { inner }
    }
}

impl std::fmt::Display for Steady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

/// Runs `read` until it succeeds, fails with an answer, or has been tried
/// [`ATTEMPTS`] times.
async fn again<T, F, Fut>(mut read: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut tries = 1;
    loop {
        match read().await {
            Err(e) if transient(&e) && tries < ATTEMPTS => {
                tokio::time::sleep(pause(tries)).await;
                tries += 1;
            }
            r => return r,
        }
    }
}

/// A listing of `prefix` (after `offset`) that, when its answer is cut,
/// lists again from after the last object it gave. S3 lists keys in
/// ascending order, so nothing is given twice or left out.
fn listing(
    inner: Arc<dyn ObjectStore>,
    prefix: Option<Path>,
    offset: Option<Path>,
) -> BoxStream<'static, Result<ObjectMeta>> {
    struct State {
        inner: Arc<dyn ObjectStore>,
        prefix: Option<Path>,
        last: Option<Path>,
        tries: u32,
        stream: Option<BoxStream<'static, Result<ObjectMeta>>>,
    }
    let state = State {
        inner,
        prefix,
        last: offset,
        tries: 1,
        stream: None,
    };
    futures::stream::unfold(Some(state), |state| async move {
        let mut s = state?;
        loop {
            let stream = s.stream.get_or_insert_with(|| match &s.last {
                Some(after) => s.inner.list_with_offset(s.prefix.as_ref(), after),
                None => s.inner.list(s.prefix.as_ref()),
            });
            match stream.next().await {
                None => return None,
                Some(Ok(m)) => {
                    s.last = Some(m.location.clone());
                    s.tries = 1;
                    return Some((Ok(m), Some(s)));
                }
                Some(Err(e)) if transient(&e) && s.tries < ATTEMPTS => {
                    tokio::time::sleep(pause(s.tries)).await;
                    s.tries += 1;
                    s.stream = None;
                }
                Some(Err(e)) => return Some((Err(e), None)),
            }
        }
    })
    .boxed()
}

#[async_trait]
impl ObjectStore for Steady {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        again(|| self.inner.get_opts(location, options.clone())).await
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        again(|| self.inner.get_ranges(location, ranges)).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        listing(self.inner.clone(), prefix.cloned(), None)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, Result<ObjectMeta>> {
        listing(self.inner.clone(), prefix.cloned(), Some(offset.clone()))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        again(|| self.inner.list_with_delimiter(prefix)).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;
    use object_store::ObjectStoreExt;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    /// An in-memory store whose first `cuts` listings end with a generic
    /// error after `after` objects, and whose first `cuts` reads fail so.
    #[derive(Debug)]
    struct Flaky {
        inner: Arc<InMemory>,
        cuts: usize,
        after: usize,
        lists: AtomicUsize,
        gets: AtomicUsize,
    }

    impl std::fmt::Display for Flaky {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "Flaky")
        }
    }

    fn cut() -> Error {
        Error::Generic {
            store: "Flaky",
            source: "error decoding response body".into(),
        }
    }

    #[async_trait]
    impl ObjectStore for Flaky {
        async fn put_opts(&self, l: &Path, p: PutPayload, o: PutOptions) -> Result<PutResult> {
            self.inner.put_opts(l, p, o).await
        }
        async fn put_multipart_opts(
            &self,
            l: &Path,
            o: PutMultipartOptions,
        ) -> Result<Box<dyn MultipartUpload>> {
            self.inner.put_multipart_opts(l, o).await
        }
        async fn get_opts(&self, l: &Path, o: GetOptions) -> Result<GetResult> {
            if self.gets.fetch_add(1, SeqCst) < self.cuts {
                return Err(cut());
            }
            self.inner.get_opts(l, o).await
        }
        fn delete_stream(
            &self,
            l: BoxStream<'static, Result<Path>>,
        ) -> BoxStream<'static, Result<Path>> {
            self.inner.delete_stream(l)
        }
        fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
            let whole = self.inner.list(prefix);
            if self.lists.fetch_add(1, SeqCst) < self.cuts {
                whole
                    .take(self.after)
                    .chain(futures::stream::once(async { Err(cut()) }))
                    .boxed()
            } else {
                whole
            }
        }
        async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }
        async fn copy_opts(&self, f: &Path, t: &Path, o: CopyOptions) -> Result<()> {
            self.inner.copy_opts(f, t, o).await
        }
    }

    async fn flaky(cuts: usize, after: usize) -> (Arc<Flaky>, Steady) {
        let inner = Arc::new(InMemory::new());
        for i in 0..10 {
            inner
                .put(&Path::from(format!("p/{i:02}")), format!("{i}").into())
                .await
                .unwrap();
        }
        let f = Arc::new(Flaky {
            inner,
            cuts,
            after,
            lists: AtomicUsize::new(0),
            gets: AtomicUsize::new(0),
        });
        (f.clone(), Steady::new(f))
    }

    async fn names(s: &dyn ObjectStore) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let mut l = s.list(Some(&Path::from("p")));
        while let Some(m) = l.next().await {
            out.push(m?.location.to_string());
        }
        Ok(out)
    }

    /// A listing cut twice goes on from after the last object it gave:
    /// every object once, in order.
    #[tokio::test]
    async fn a_cut_listing_goes_on_after_its_last_object() {
        let (f, s) = flaky(2, 3).await;
        let want: Vec<String> = (0..10).map(|i| format!("p/{i:02}")).collect();
        assert_eq!(names(&s).await.unwrap(), want);
        // The listing, cut after p/02; again from after p/02 (its first
        // three objects, all at or before p/02, then cut again); and again.
        assert_eq!(f.lists.load(SeqCst), 3);
        // Cut more often than the attempts: the error reaches the caller.
        let (_, s) = flaky(ATTEMPTS as usize, 3).await;
        let e = names(&s).await.unwrap_err();
        assert!(e.to_string().contains("decoding"), "{e}");
    }

    /// A read whose answer was garbled is tried again; a missing object is
    /// an answer, not tried again.
    #[tokio::test]
    async fn a_garbled_read_is_tried_again_and_a_missing_object_is_not() {
        let (f, s) = flaky(ATTEMPTS as usize - 1, 0).await;
        let b = s
            .get(&Path::from("p/04"))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(&b[..], b"4");
        assert_eq!(f.gets.load(SeqCst), ATTEMPTS as usize);
        let (f, s) = flaky(0, 0).await;
        let e = s.get(&Path::from("p/none")).await.unwrap_err();
        assert!(matches!(e, Error::NotFound { .. }), "{e}");
        assert_eq!(f.gets.load(SeqCst), 1);
    }
}
