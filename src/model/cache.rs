//! The response cache: one small JSON entry per successful reply in the
//! store (local or S3; packed, see [`crate::store::packs`]), keyed on [`Request::cache_key`](super::Request::cache_key):
//! messages, model, output cap, temperature, schema, API shape and base URL,
//! and nothing else (not the key, timeout or retry policy). Failures are
//! never cached.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::Reply;
use crate::error::Result;
use crate::store::packs::Packs;
use crate::store::Store;

/// The folder of the cache in a store.
pub const CACHE_DIR: &str = "cache";

#[derive(Serialize, Deserialize)]
struct Entry {
    reply: Reply,
    model: String,
}

/// Counts since the session started.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    /// Requests answered from the cache.
    pub hits: u64,
    /// Requests looked up and not found.
    pub misses: u64,
    /// Replies stored.
    pub writes: u64,
}

/// A response cache on a store.
#[derive(Debug)]
pub struct Cache {
    store: Store,
    packs: Packs,
    hits: AtomicU64,
    misses: AtomicU64,
    writes: AtomicU64,
}

impl Cache {
    /// A cache in `store` under `cache/`.
    pub fn new(store: Store) -> Self {
        Self {
            store,
            packs: Packs::new(CACHE_DIR, "json"),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            writes: AtomicU64::new(0),
        }
    }

    /// The stored reply for `key`. An unreadable entry is a miss.
    pub async fn get(&self, key: &str) -> Option<Reply> {
        let got = self
            .packs
            .get(&self.store, key)
            .await
            .and_then(|b| serde_json::from_slice::<Entry>(&b).ok());
        match got {
            Some(e) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(e.reply)
            }
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Stores a successful reply.
    pub async fn put(&self, key: &str, model: &str, reply: &Reply) -> Result<()> {
        let bytes = serde_json::to_vec(&Entry {
            reply: reply.clone(),
            model: model.to_string(),
        })
        .expect("a reply serialises");
        self.packs.put(&self.store, key, bytes).await?;
        self.writes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Where the cache lives.
    pub fn location(&self) -> &str {
        &self.store.location
    }

    /// Hits, misses and writes so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
        }
    }

    /// Packs the replies kept since the last fold.
    pub async fn flush(&self) -> Result<()> {
        self.packs.flush(&self.store).await
    }

    /// Entries and bytes on the store.
    pub async fn size(&self) -> Result<(u64, u64)> {
        self.packs.size(&self.store).await
    }

    /// Removes every entry; returns how many.
    pub async fn clear(&self) -> Result<u64> {
        self.packs.clear(&self.store).await
    }
}
