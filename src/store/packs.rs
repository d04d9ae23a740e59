//! Many small keyed objects kept as a few: the response cache (one reply a
//! request) and the ingest cache (one parsed document a file) in packs, so
//! a long run leaves a bounded number of files in the store, not one per
//! request or document.
//!
//! An entry is first written as an object of its own (`DIR/ab/KEY.EXT`,
//! the layout stores had before packs, still read): a run killed at any
//! moment loses no reply it paid for. Entries written since the last fold
//! are kept in memory too; a fold (at a flush, or once enough have
//! gathered) writes them as one pack `DIR/packs/L-ID.pack` (their bytes one
//! after another) and its index `DIR/packs/L-ID.idx` (a line of key,
//! offset and length an entry; written after the pack, so a listed index
//! has its whole pack), then deletes the single objects. A process's first
//! fold also takes in single objects a killed process left. A read finds
//! the key in the indexes (listed once, again when a read misses and the
//! listing is older than [`RELIST`]) and reads the entry's byte range.
//!
//! Packs are merged as they gather: when [`FANOUT`] packs of one level are
//! listed, they become one pack of the next level (a pack of
//! [`FULL_BYTES`] or more is not merged again), so the number of files
//! grows with the logarithm of the entries (and with their bytes past
//! that size). Two processes may write and merge at once: an entry in two
//! packs is the same bytes, and a read whose pack a merge removed lists the
//! indexes again and reads the merged pack.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;

use super::Store;
use crate::error::{QuarryError, Result};

/// Packs of one level merged into one of the next.
pub const FANOUT: usize = 8;
/// A pack of this size or more is not merged again.
pub const FULL_BYTES: u64 = 16 << 20;
/// At most this many bytes of packs are merged at once (they are read
/// into memory).
const MERGE_BYTES: u64 = 64 << 20;
/// Entries gathered in memory before a fold.
const FOLD_ENTRIES: usize = 256;
/// Bytes gathered in memory before a fold.
const FOLD_BYTES: usize = 8 << 20;
/// Single objects left by other processes taken into one fold.
const ADOPT_AT_ONCE: usize = 4096;
/// A read that misses lists the indexes again when the listing is older.
const RELIST: Duration = Duration::from_secs(5);
/// A pack listed without its index this long after it was first seen so
/// (its writer was killed between the two: an index follows its pack
/// within moments) is deleted; its entries are still single objects, or
/// in another pack.
const ORPHAN_AGE: Duration = Duration::from_secs(120);
/// The first line of an index.
const HEADER: &str = "quarry-pack 1";
/// The level of a pack not merged again.
const FULL_LEVEL: u32 = 99;

/// Where an entry is in a pack.
#[derive(Debug, Clone)]
struct Loc {
    pack: Arc<str>,
    offset: u64,
    len: u64,
}

/// A listed pack.
#[derive(Debug, Clone)]
struct Pack {
    level: u32,
    bytes: u64,
}

#[derive(Debug, Default)]
struct State {
    /// When the indexes were last listed.
    listed: Option<Instant>,
    /// Every listed pack, by name (`L-ID`, without the extension).
    packs: BTreeMap<String, Pack>,
    index: HashMap<String, Loc>,
    /// Entries written by this process since its last fold.
    pending: Vec<(String, Bytes)>,
    pending_bytes: usize,
    /// Single objects left by other (killed) processes are taken in once.
    adopted: bool,
    /// Packs listed without an index, and when first seen so.
    orphans: HashMap<String, Instant>,
}

impl State {
    /// Pack `name` and its entries (key, offset, length).
    fn add(&mut self, name: &str, pack: Pack, entries: Vec<(String, u64, u64)>) {
        let at: Arc<str> = Arc::from(name);
        for (key, offset, len) in entries {
            self.index.insert(
                key,
                Loc {
                    pack: at.clone(),
                    offset,
                    len,
                },
            );
        }
        self.packs.insert(name.to_string(), pack);
    }
}

/// A packed key-value folder of a store.
#[derive(Debug)]
pub struct Packs {
    dir: String,
    ext: &'static str,
    state: tokio::sync::Mutex<State>,
    /// One fold (and merge) at a time in this process.
    folding: tokio::sync::Mutex<()>,
}

impl Packs {
    /// The packed folder `dir` of a store, whose single objects end in
    /// `.ext`.
    pub fn new(dir: &str, ext: &'static str) -> Self {
        Self {
            dir: dir.to_string(),
            ext,
            state: Default::default(),
            folding: Default::default(),
        }
    }

    fn single(&self, key: &str) -> String {
        format!(
            "{}/{}/{key}.{}",
            self.dir,
            &key[..2.min(key.len())],
            self.ext
        )
    }

    fn packs_dir(&self) -> String {
        format!("{}/packs", self.dir)
    }

    fn pack_rel(&self, name: &str, ext: &str) -> String {
        format!("{}/packs/{name}.{ext}", self.dir)
    }

    /// The entry `key`, if the store has it. A store that cannot be read
    /// has nothing (the caller makes the entry again).
    pub async fn get(&self, store: &Store, key: &str) -> Option<Bytes> {
        let loc = {
            let mut st = self.state.lock().await;
            if let Some((_, b)) = st.pending.iter().find(|(k, _)| k == key) {
                return Some(b.clone());
            }
            if st.listed.is_none() {
                self.relist(store, &mut st).await.ok()?;
            }
            st.index.get(key).cloned()
        };
        if let Some(loc) = loc {
            if let Some(b) = self.read(store, &loc).await {
                return Some(b);
            }
            // Its pack was merged away since the listing: list again.
            if let Some(b) = self.relisted(store, key, Duration::ZERO).await {
                return Some(b);
            }
        }
        if let Ok(Some(b)) = store.get(&self.single(key)).await {
            return Some(b);
        }
        // Another process may have packed it since the listing.
        self.relisted(store, key, RELIST).await
    }

    /// Lists the indexes again when the listing is older than `age`, and
    /// reads `key` from them.
    async fn relisted(&self, store: &Store, key: &str, age: Duration) -> Option<Bytes> {
        let loc = {
            let mut st = self.state.lock().await;
            if st.listed.is_none_or(|t| t.elapsed() >= age) {
                self.relist(store, &mut st).await.ok()?;
            }
            st.index.get(key).cloned()
        }?;
        self.read(store, &loc).await
    }

    async fn read(&self, store: &Store, loc: &Loc) -> Option<Bytes> {
        let rel = self.pack_rel(&loc.pack, "pack");
        store
            .get_range(&rel, loc.offset..loc.offset + loc.len)
            .await
            .ok()
            .flatten()
    }

    /// How many entries the folder holds and their bytes (packed and
    /// single; an entry two packs hold is counted once).
    pub async fn size(&self, store: &Store) -> Result<(u64, u64)> {
        let mut st = self.state.lock().await;
        self.relist(store, &mut st).await?;
        let packs = format!("{}/", self.packs_dir());
        let suffix = format!(".{}", self.ext);
        let (mut n, mut bytes) = (st.index.len() as u64, 0u64);
        bytes += st.index.values().map(|l| l.len).sum::<u64>();
        for (p, size) in store.list(&self.dir).await? {
            if p.starts_with(&packs) {
                continue;
            }
            let key = p.rsplit('/').next().and_then(|f| f.strip_suffix(&suffix));
            if key.is_some_and(|k| !st.index.contains_key(k)) {
                n += 1;
                bytes += size;
            }
        }
        Ok((n, bytes))
    }

    /// Removes every entry (packed and single); returns how many there were.
    pub async fn clear(&self, store: &Store) -> Result<u64> {
        let _one = self.folding.lock().await;
        let (n, _) = self.size(store).await?;
        for (p, _) in store.list(&self.dir).await? {
            store.delete(&p).await?;
        }
        let mut st = self.state.lock().await;
        *st = State::default();
        Ok(n)
    }

    /// Keeps entry `key`: written at once as an object of its own, packed
    /// at the next fold.
    pub async fn put(&self, store: &Store, key: &str, bytes: Vec<u8>) -> Result<()> {
        let bytes = Bytes::from(bytes);
        store.put(&self.single(key), bytes.to_vec()).await?;
        let fold = {
            let mut st = self.state.lock().await;
            st.pending_bytes += bytes.len();
            st.pending.push((key.to_string(), bytes));
            st.pending.len() >= FOLD_ENTRIES || st.pending_bytes >= FOLD_BYTES
        };
        if fold {
            self.flush(store).await?;
        }
        Ok(())
    }

    /// Packs the entries written since the last fold (and, the first time,
    /// single objects other processes left), then merges packs that have
    /// gathered.
    pub async fn flush(&self, store: &Store) -> Result<()> {
        let _one = self.folding.lock().await;
        let (mut entries, adopt) = {
            let mut st = self.state.lock().await;
            st.pending_bytes = 0;
            let adopt = !std::mem::replace(&mut st.adopted, true);
            (std::mem::take(&mut st.pending), adopt)
        };
        if adopt {
            let (left, more) = self.left_behind(store, &entries).await;
            entries.extend(left);
            if more {
                // The rest at the next fold.
                self.state.lock().await.adopted = false;
            }
        }
        if entries.is_empty() {
            return Ok(());
        }
        let singles: Vec<String> = entries.iter().map(|(k, _)| self.single(k)).collect();
        // Packs of at most FULL_BYTES (one entry may be larger).
        let mut group: Vec<(String, Bytes)> = Vec::new();
        let mut size = 0u64;
        for e in entries {
            if !group.is_empty() && size + e.1.len() as u64 > FULL_BYTES {
                self.write_pack(store, 0, std::mem::take(&mut group))
                    .await?;
                size = 0;
            }
            size += e.1.len() as u64;
            group.push(e);
        }
        if let Err(e) = self.write_pack(store, 0, group).await {
            // The single objects stay: nothing is lost, and a later fold
            // (this process's, or the next one's) packs them.
            self.state.lock().await.adopted = false;
            return Err(e);
        }
        futures::stream::iter(singles)
            .for_each_concurrent(16, |rel| async move {
                let _ = store.delete(&rel).await;
            })
            .await;
        self.merge(store).await
    }

    /// Single objects in the folder that this process did not write (a
    /// killed process's, or a store's from before packs): at most
    /// [`ADOPT_AT_ONCE`], and whether there are more.
    async fn left_behind(
        &self,
        store: &Store,
        ours: &[(String, Bytes)],
    ) -> (Vec<(String, Bytes)>, bool) {
        let Ok(listed) = store.list(&self.dir).await else {
            return (Vec::new(), false);
        };
        let packs = format!("{}/", self.packs_dir());
        let suffix = format!(".{}", self.ext);
        let keys: Vec<String> = listed
            .into_iter()
            .filter(|(p, _)| !p.starts_with(&packs))
            .filter_map(|(p, _)| {
                let name = p.rsplit('/').next()?;
                Some(name.strip_suffix(&suffix)?.to_string())
            })
            .filter(|k| !ours.iter().any(|(o, _)| o == k))
            .collect();
        let more = keys.len() > ADOPT_AT_ONCE;
        let got = futures::stream::iter(keys.into_iter().take(ADOPT_AT_ONCE))
            .map(|k| async move {
                let b = store.get(&self.single(&k)).await.ok().flatten()?;
                Some((k, b))
            })
            .buffer_unordered(16)
            .filter_map(futures::future::ready)
            .collect()
            .await;
        (got, more)
    }

    /// Writes `entries` as one pack of `level`, then its index, and adds
    /// them to this process's index.
    async fn write_pack(
        &self,
        store: &Store,
        level: u32,
        entries: Vec<(String, Bytes)>,
    ) -> Result<String> {
        let total: u64 = entries.iter().map(|e| e.1.len() as u64).sum();
        let level = if total >= FULL_BYTES {
            FULL_LEVEL
        } else {
            level
        };
        let name = format!("{level}-{}", uuid::Uuid::new_v4().simple());
        let mut body = Vec::with_capacity(total as usize);
        let mut idx = format!("{HEADER}\n");
        let mut locs = Vec::with_capacity(entries.len());
        for (k, b) in &entries {
            if k.contains(char::is_whitespace) {
                return Err(QuarryError::Invalid(format!(
                    "a pack key with a space: {k:?}"
                )));
            }
            idx.push_str(&format!("{k} {} {}\n", body.len(), b.len()));
            locs.push((k.clone(), body.len() as u64, b.len() as u64));
            body.extend_from_slice(b);
        }
        store.put(&self.pack_rel(&name, "pack"), body).await?;
        store
            .put(&self.pack_rel(&name, "idx"), idx.into_bytes())
            .await?;
        self.state.lock().await.add(
            &name,
            Pack {
                level,
                bytes: total,
            },
            locs,
        );
        Ok(name)
    }

    /// Lists the packs and reads the indexes not read yet; entries of
    /// packs gone since (merged by another process) are forgotten.
    async fn relist(&self, store: &Store, st: &mut State) -> Result<()> {
        let listed = store.list(&self.packs_dir()).await?;
        let sizes: HashMap<String, u64> = listed
            .iter()
            .filter_map(|(p, n)| {
                let name = p.rsplit('/').next()?.strip_suffix(".pack")?;
                Some((name.to_string(), *n))
            })
            .collect();
        let names: Vec<String> = listed
            .iter()
            .filter_map(|(p, _)| Some(p.rsplit('/').next()?.strip_suffix(".idx")?.to_string()))
            .filter(|n| sizes.contains_key(n))
            .collect();
        // A pack whose index never came (its writer was killed between
        // the two) goes once it has been seen so for ORPHAN_AGE.
        let orphans: Vec<String> = sizes
            .keys()
            .filter(|n| !names.contains(n))
            .cloned()
            .collect();
        st.orphans.retain(|n, _| orphans.contains(n));
        for n in orphans {
            let first = *st.orphans.entry(n.clone()).or_insert_with(Instant::now);
            if first.elapsed() >= ORPHAN_AGE {
                let _ = store.delete(&self.pack_rel(&n, "pack")).await;
                st.orphans.remove(&n);
            }
        }
        let gone: Vec<String> = st
            .packs
            .keys()
            .filter(|k| !names.contains(k))
            .cloned()
            .collect();
        if !gone.is_empty() {
            for g in &gone {
                st.packs.remove(g);
            }
            st.index.retain(|_, l| !gone.iter().any(|g| **g == *l.pack));
        }
        let new: Vec<String> = names
            .into_iter()
            .filter(|n| !st.packs.contains_key(n))
            .collect();
        let read: Vec<(String, Option<Bytes>)> = futures::stream::iter(new)
            .map(|n| async move {
                let b = store.get(&self.pack_rel(&n, "idx")).await.ok().flatten();
                (n, b)
            })
            .buffer_unordered(16)
            .collect()
            .await;
        for (name, bytes) in read {
            let Some(bytes) = bytes else { continue };
            let Some(entries) = parse_index(&bytes) else {
                continue;
            };
            let level = name
                .split('-')
                .next()
                .and_then(|l| l.parse().ok())
                .unwrap_or(FULL_LEVEL);
            let bytes = sizes.get(&name).copied().unwrap_or(0);
            st.add(&name, Pack { level, bytes }, entries);
        }
        st.listed = Some(Instant::now());
        Ok(())
    }

    /// Merges [`FANOUT`] packs of a level into one of the next, level by
    /// level, while a level has that many.
    async fn merge(&self, store: &Store) -> Result<()> {
        {
            let mut st = self.state.lock().await;
            self.relist(store, &mut st).await?;
        }
        let mut level = 0;
        loop {
            let take: Vec<String> = {
                let st = self.state.lock().await;
                let top = st
                    .packs
                    .values()
                    .filter(|p| p.level != FULL_LEVEL)
                    .map(|p| p.level)
                    .max();
                if top.is_none_or(|t| level > t) {
                    break;
                }
                let at: Vec<(&String, &Pack)> = st
                    .packs
                    .iter()
                    .filter(|(_, p)| p.level == level && p.bytes < FULL_BYTES)
                    .collect();
                if at.len() < FANOUT {
                    level += 1;
                    continue;
                }
                // At most MERGE_BYTES read at once.
                let mut size = 0;
                at.into_iter()
                    .take(FANOUT)
                    .take_while(|(_, p)| {
                        size += p.bytes;
                        size <= MERGE_BYTES
                    })
                    .map(|(n, _)| n.clone())
                    .collect()
            };
            if take.len() < 2 {
                level += 1;
                continue;
            }
            let mut entries: Vec<(String, Bytes)> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for name in &take {
                let (Some(idx), Some(body)) = (
                    store.get(&self.pack_rel(name, "idx")).await?,
                    store.get(&self.pack_rel(name, "pack")).await?,
                ) else {
                    // Merged by another process meanwhile: leave it to it.
                    return Ok(());
                };
                for (k, off, len) in parse_index(&idx).unwrap_or_default() {
                    let (a, b) = (off as usize, (off + len) as usize);
                    if b <= body.len() && seen.insert(k.clone()) {
                        entries.push((k, body.slice(a..b)));
                    }
                }
            }
            self.write_pack(store, level + 1, entries).await?;
            {
                let mut st = self.state.lock().await;
                for n in &take {
                    st.packs.remove(n);
                }
            }
            // The index first: a listed index always has its pack.
            for n in &take {
                store.delete(&self.pack_rel(n, "idx")).await?;
            }
            for n in &take {
                store.delete(&self.pack_rel(n, "pack")).await?;
            }
        }
        Ok(())
    }
}

/// The entries of an index: key, offset and length.
fn parse_index(bytes: &[u8]) -> Option<Vec<(String, u64, u64)>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut f = l.split(' ');
            let key = f.next()?.to_string();
            let offset = f.next()?.parse().ok()?;
            let len = f.next()?.parse().ok()?;
            Some((key, offset, len))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: usize) -> String {
        format!("{:064x}", i * 7919 + 1)
    }

    fn value(i: usize) -> Vec<u8> {
        format!("entry {i} ").repeat(1 + i % 5).into_bytes()
    }

    /// Files in the folder: (single objects, pack files).
    async fn files(store: &Store) -> (usize, usize) {
        let l = store.list("cache").await.unwrap();
        let packs = l
            .iter()
            .filter(|(p, _)| p.starts_with("cache/packs/"))
            .count();
        (l.len() - packs, packs)
    }

    /// A pack left without its index (a writer killed between the two) is
    /// deleted once it has been listed so for ORPHAN_AGE; a pack with its
    /// index is never touched.
    #[tokio::test]
    async fn a_pack_left_without_its_index_is_deleted_after_a_while() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().display().to_string()).unwrap();
        let p = Packs::new("cache", "json");
        for i in 0..3 {
            p.put(&store, &key(i), value(i)).await.unwrap();
        }
        p.flush(&store).await.unwrap();
        store
            .put("cache/packs/0-orphan.pack", b"half a fold".to_vec())
            .await
            .unwrap();
        let mut st = p.state.lock().await;
        p.relist(&store, &mut st).await.unwrap();
        assert!(st.orphans.contains_key("0-orphan"));
        assert_eq!(files(&store).await, (0, 3), "young: kept");
        let aged = Instant::now().checked_sub(ORPHAN_AGE).unwrap();
        st.orphans.insert("0-orphan".into(), aged);
        p.relist(&store, &mut st).await.unwrap();
        drop(st);
        assert_eq!(files(&store).await, (0, 2), "old: deleted");
        for i in 0..3 {
            assert_eq!(p.get(&store, &key(i)).await.unwrap(), value(i));
        }
    }

    #[tokio::test]
    async fn entries_are_read_back_before_and_after_packing_and_by_another_process() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().display().to_string()).unwrap();
        let p = Packs::new("cache", "json");
        for i in 0..40 {
            p.put(&store, &key(i), value(i)).await.unwrap();
        }
        assert_eq!(files(&store).await, (40, 0), "each entry is kept at once");
        assert_eq!(p.get(&store, &key(3)).await.unwrap(), value(3));
        p.flush(&store).await.unwrap();
        assert_eq!(files(&store).await, (0, 2), "one pack and its index");
        for i in 0..40 {
            assert_eq!(p.get(&store, &key(i)).await.unwrap(), value(i), "{i}");
        }
        let other = Packs::new("cache", "json");
        for i in 0..40 {
            assert_eq!(other.get(&store, &key(i)).await.unwrap(), value(i), "{i}");
        }
        assert!(other.get(&store, &key(99)).await.is_none());
        assert_eq!(other.size(&store).await.unwrap().0, 40);
        assert_eq!(other.clear(&store).await.unwrap(), 40);
        assert_eq!(files(&store).await, (0, 0));
        assert!(Packs::new("cache", "json")
            .get(&store, &key(1))
            .await
            .is_none());
    }

    #[tokio::test]
    async fn many_folds_leave_few_files_and_every_entry() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().display().to_string()).unwrap();
        let p = Packs::new("cache", "json");
        // 300 folds of 3 entries: without merging, 600 files.
        for f in 0..300 {
            for j in 0..3 {
                p.put(&store, &key(f * 3 + j), value(f * 3 + j))
                    .await
                    .unwrap();
            }
            p.flush(&store).await.unwrap();
        }
        let (single, packed) = files(&store).await;
        assert_eq!(single, 0);
        // Under FANOUT packs a level, two files each: levels 0 to 2 here.
        assert!(packed < 2 * FANOUT * 3, "{packed} pack files");
        let fresh = Packs::new("cache", "json");
        for i in 0..900 {
            assert_eq!(fresh.get(&store, &key(i)).await.unwrap(), value(i), "{i}");
        }
    }

    #[tokio::test]
    async fn single_objects_a_killed_process_left_are_packed_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().display().to_string()).unwrap();
        let killed = Packs::new("cache", "json");
        for i in 0..5 {
            killed.put(&store, &key(i), value(i)).await.unwrap();
        }
        drop(killed); // never folded
        let next = Packs::new("cache", "json");
        assert_eq!(next.get(&store, &key(2)).await.unwrap(), value(2));
        next.put(&store, &key(10), value(10)).await.unwrap();
        next.flush(&store).await.unwrap();
        assert_eq!(files(&store).await, (0, 2));
        let fresh = Packs::new("cache", "json");
        for i in [0, 1, 2, 3, 4, 10] {
            assert_eq!(fresh.get(&store, &key(i)).await.unwrap(), value(i), "{i}");
        }
    }

    #[tokio::test]
    async fn a_reader_whose_pack_another_process_merged_away_still_finds_its_entries() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().display().to_string()).unwrap();
        let writer = Packs::new("cache", "json");
        for f in 0..FANOUT - 1 {
            writer.put(&store, &key(f), value(f)).await.unwrap();
            writer.flush(&store).await.unwrap();
        }
        let reader = Packs::new("cache", "json");
        assert_eq!(reader.get(&store, &key(0)).await.unwrap(), value(0));
        // One more fold merges the level's packs into one.
        writer.put(&store, &key(100), value(100)).await.unwrap();
        writer.flush(&store).await.unwrap();
        assert_eq!(files(&store).await, (0, 2));
        for f in (0..FANOUT - 1).chain([100]) {
            assert_eq!(reader.get(&store, &key(f)).await.unwrap(), value(f), "{f}");
        }
    }
}
