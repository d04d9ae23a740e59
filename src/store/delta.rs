//! One Delta Lake table of the store, as quarry's tables use it: loaded
//! lazily and kept between commits (each use reads only the commits since),
//! rows replaced by a predicate in one conditional commit (the commit is a
//! put that succeeds only if the next log entry is absent, so two processes
//! writing one store, a folder or S3, never overwrite each other: the one
//! that loses reads the winner's commit and tries again), and its small
//! files compacted every few commits. Any engine that reads Delta (DuckDB,
//! Spark, polars) reads the table.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{Array, AsArray, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{cast, concat_batches, take_record_batch};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::provider_as_source;
use datafusion::execution::context::SessionContext;
use datafusion::logical_expr::{col, Expr, LogicalPlanBuilder, TableType};
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::ExecutionPlan;
use deltalake::kernel::transaction::CommitProperties;
use deltalake::logstore::{default_logstore, logstore_factories, LogStoreFactory, StorageConfig};
use deltalake::protocol::SaveMode;
use deltalake::{DeltaTable, DeltaTableBuilder, DeltaTableError};
use object_store::ObjectStore;

use super::Store;
use crate::error::{QuarryError, Result};

/// Commits between compactions of a table's small files.
pub const COMPACT_EVERY: i64 = 32;

/// The size a compaction makes files up to: a file this large is left as
/// it is, so each compaction rewrites only the small files since the last
/// one and a partly filled file or two (Delta's default, 100 MiB, rewrote
/// the whole table of a 4,000-document run at every compaction, its memory
/// and time growing with the table).
pub const COMPACT_TARGET: std::num::NonZeroU64 = std::num::NonZeroU64::new(16 << 20).unwrap();

/// Attempts at one commit when other writers keep winning.
pub const ATTEMPTS: usize = 50;

/// How long a table without history keeps the files a compaction replaced
/// (a reader that loaded the table before the compaction reads them
/// within this), and its log entries older than a checkpoint.
const FILE_RETENTION: &str = "interval 5 minutes";
const LOG_RETENTION: &str = "interval 1 hours";

/// One Delta table of a store.
#[derive(Clone)]
pub struct Delta {
    url: url::Url,
    root: Arc<dyn ObjectStore>,
    location: String,
    /// What the table is, for messages (`the claims table`).
    what: String,
    /// The table as last read or written, brought up to date before each
    /// use (reading only the commits since) instead of read again.
    latest: Arc<tokio::sync::Mutex<Option<DeltaTable>>>,
    /// Held across a read and the commit that depends on it, so the
    /// windows of one process take turns instead of racing each other.
    turn: Arc<tokio::sync::Mutex<()>>,
    /// See [`Delta::keeping_history`].
    history: bool,
}

impl std::fmt::Debug for Delta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delta")
            .field("url", &self.url.as_str())
            .finish()
    }
}

/// A Delta application transaction: commits of one writer (`app_id`,
/// unique to it) numbered by `version`, which only grows. A table holding
/// a transaction's version holds its commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Txn {
    /// The writer.
    pub app_id: String,
    /// The commit, counted from 1 within the writer.
    pub version: i64,
}

/// How a commit failed.
#[derive(Debug)]
pub enum CommitError {
    /// Another writer committed that version first: read and try again.
    LostRace,
    /// Anything else.
    Failed(QuarryError),
}

/// Delta's log store for `s3://` tables: the object store quarry built
/// (its endpoint, credentials and conditional puts) with Delta's default
/// commit protocol (a put that succeeds only if the entry is absent).
struct S3LogStores;

impl LogStoreFactory for S3LogStores {
    fn with_options(
        &self,
        prefixed_store: deltalake::logstore::ObjectStoreRef,
        root_store: deltalake::logstore::ObjectStoreRef,
        location: &url::Url,
        options: &StorageConfig,
    ) -> deltalake::DeltaResult<Arc<dyn deltalake::logstore::LogStore>> {
        Ok(default_logstore(
            prefixed_store,
            root_store,
            location,
            options,
        ))
    }
}

fn register_s3() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let scheme = url::Url::parse("s3://").expect("url");
        let factories = logstore_factories();
        if !factories.contains_key(&scheme) {
            factories.insert(scheme, Arc::new(S3LogStores));
        }
    });
}

/// Whether a commit failed because another writer committed first.
pub fn lost_race(e: &DeltaTableError) -> bool {
    matches!(e, DeltaTableError::VersionAlreadyExists(_))
        || matches!(
            e,
            DeltaTableError::Transaction {
                source: deltalake::kernel::transaction::TransactionError::MaxCommitAttempts(_)
                    | deltalake::kernel::transaction::TransactionError::VersionAlreadyExists(_)
            }
        )
}

impl Delta {
    /// The table at folder `rel` of `store` (nothing is read or written yet).
    pub fn new(store: &Store, rel: &str, what: &str) -> Result<Self> {
        register_s3();
        let (url, root) = store.delta_location(rel)?;
        Ok(Self {
            url,
            root,
            location: store.location.clone(),
            what: what.to_string(),
            latest: Arc::default(),
            turn: Arc::default(),
            history: false,
        })
    }

    /// An error about this table.
    pub fn error(&self, e: impl std::fmt::Display) -> QuarryError {
        QuarryError::Store {
            location: self.location.clone(),
            message: format!("{}: {e}", self.what),
        }
    }

    fn builder(&self) -> Result<DeltaTableBuilder> {
        Ok(DeltaTableBuilder::from_url(self.url.clone())
            .map_err(|e| self.error(e))?
            .with_storage_backend(self.root.clone(), self.url.clone()))
    }

    /// The table at its latest version, read afresh, or `None` before its
    /// first commit.
    pub async fn load(&self) -> Result<Option<DeltaTable>> {
        match self.builder()?.load().await {
            Ok(t) => Ok(Some(t)),
            Err(DeltaTableError::NotATable(_) | DeltaTableError::InvalidTableLocation(_)) => {
                Ok(None)
            }
            // A folder with no log yet (the kernel's words for it).
            Err(e) if e.to_string().contains("does not exist") => Ok(None),
            Err(e) => Err(self.error(e)),
        }
    }

    /// How many data files the table's latest version is made of (what a
    /// reader of the table opens; older files may still be on disk).
    pub async fn current_files(&self) -> Result<usize> {
        match self.load().await? {
            Some(t) => Ok(t.get_file_uris().map_err(|e| self.error(e))?.count()),
            None => Ok(0),
        }
    }

    /// The table at `version`.
    pub async fn load_version(&self, version: i64) -> Result<DeltaTable> {
        self.builder()?
            .with_version(
                u64::try_from(version).map_err(|_| self.error(format!("no revision {version}")))?,
            )
            .load()
            .await
            .map_err(|e| self.error(e))
    }

    /// The table at its latest version, from the one kept since the last
    /// use (only the commits after it are read).
    pub async fn up_to_date(&self) -> Result<Option<DeltaTable>> {
        let mut kept = self.latest.lock().await;
        if let Some(t) = kept.as_mut() {
            t.update_incremental(None)
                .await
                .map_err(|e| self.error(e))?;
            return Ok(Some(t.clone()));
        }
        let t = self.load().await?;
        kept.clone_from(&t);
        Ok(t)
    }

    /// The table's history is kept (its change data feed reads old
    /// versions' files): compaction removes no file. Without it, each
    /// compaction also deletes the files earlier compactions replaced more
    /// than five minutes ago, and old log entries go after a checkpoint,
    /// so a long run leaves a bounded number of files.
    pub fn keeping_history(mut self) -> Self {
        self.history = true;
        self
    }

    /// This process's turn at a read and the commit that depends on it.
    pub async fn turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.turn.lock().await
    }

    /// The rows of `table` that `filter` keeps, as one batch of its schema.
    pub async fn rows(&self, table: &DeltaTable, filter: Expr) -> Result<RecordBatch> {
        let rows = self.filtered(table, filter).await?;
        let schema = rows.schema().as_arrow().clone();
        Ok(concat_batches(&Arc::new(schema), &rows.collect().await?)?)
    }

    /// The rows of `table` that `filter` matches, as a query to run.
    async fn filtered(
        &self,
        table: &DeltaTable,
        filter: Expr,
    ) -> Result<datafusion::dataframe::DataFrame> {
        let provider = table.table_provider().await.map_err(|e| self.error(e))?;
        Ok(SessionContext::new().read_table(provider)?.filter(filter)?)
    }

    /// The distinct values of the text column `column` among the rows
    /// `filter` matches.
    pub async fn distinct(
        &self,
        table: &DeltaTable,
        filter: Expr,
        column: &str,
    ) -> Result<std::collections::BTreeSet<String>> {
        let batches = self
            .filtered(table, filter)
            .await?
            .select_columns(&[column])?
            .distinct()?
            .collect()
            .await?;
        let mut out = std::collections::BTreeSet::new();
        for b in &batches {
            let c = cast(b.column(0), &DataType::Utf8)?;
            out.extend(c.as_string::<i32>().iter().flatten().map(str::to_string));
        }
        Ok(out)
    }

    /// Commits `batch` in place of the rows `replace` matches (every row
    /// on the table's first commit, which creates it with `name` and, with
    /// `change_feed`, Delta's change data feed on). The commit is the next
    /// version of `table` or fails with [`CommitError::LostRace`]; every
    /// [`COMPACT_EVERY`] versions the table's small files are compacted.
    pub async fn replace(
        &self,
        table: Option<DeltaTable>,
        replace: Expr,
        batch: RecordBatch,
        props: CommitProperties,
        name: &str,
        change_feed: bool,
    ) -> std::result::Result<DeltaTable, CommitError> {
        self.commit(table, Some(replace), batch, props, name, change_feed)
            .await
    }

    /// Appends `batch` in one commit (creating the table with `name` on
    /// its first), reading the table again while other writers win.
    ///
    /// The commit is the application transaction `txn` (Delta's `txn`
    /// action: an application id and a version that only grows), and an
    /// append whose transaction the table already holds is not made again.
    /// So a commit that landed although its answer was lost (the log
    /// entry's put reached the store, the reply did not, and the put's
    /// retry found the entry there, or the error reached the caller, which
    /// tries the same rows again) is not a second copy of its rows.
    pub async fn append_once(&self, batch: RecordBatch, name: &str, txn: &Txn) -> Result<()> {
        self.commit_retrying_once(None, batch, CommitProperties::default(), name, Some(txn))
            .await
    }

    /// Whether the latest version of `table` holds `txn` (its application
    /// id at `txn`'s version or later).
    async fn holds(&self, table: &DeltaTable, txn: &Txn) -> Result<bool> {
        let had = table
            .snapshot()
            .map_err(|e| self.error(e))?
            .transaction_version(table.log_store().as_ref(), &txn.app_id)
            .await
            .map_err(|e| self.error(e))?;
        Ok(had.is_some_and(|v| v >= txn.version))
    }

    /// Commits `batch` in place of the rows `replace` matches, or appended
    /// without one (no change feed), reading the table again while other
    /// writers win, up to [`ATTEMPTS`] times.
    pub async fn commit_retrying(
        &self,
        replace: Option<Expr>,
        batch: RecordBatch,
        props: CommitProperties,
        name: &str,
    ) -> Result<()> {
        self.commit_retrying_once(replace, batch, props, name, None)
            .await
    }

    /// [`Delta::commit_retrying`], made as the application transaction
    /// `txn` when given, and not made when the table already holds it.
    async fn commit_retrying_once(
        &self,
        replace: Option<Expr>,
        batch: RecordBatch,
        props: CommitProperties,
        name: &str,
        txn: Option<&Txn>,
    ) -> Result<()> {
        let props = match txn {
            Some(t) => props.with_application_transaction(deltalake::kernel::Transaction::new(
                &t.app_id, t.version,
            )),
            None => props,
        };
        for _ in 0..ATTEMPTS {
            let _turn = self.turn().await;
            let table = self.up_to_date().await?;
            if let (Some(t), Some(txn)) = (&table, txn) {
                if self.holds(t, txn).await? {
                    return Ok(());
                }
            }
            match self
                .commit(
                    table,
                    replace.clone(),
                    batch.clone(),
                    props.clone(),
                    name,
                    false,
                )
                .await
            {
                Ok(_) => return Ok(()),
                Err(CommitError::LostRace) => continue,
                Err(CommitError::Failed(e)) => return Err(e),
            }
        }
        Err(self.error(format!(
            "{ATTEMPTS} commits in a row lost to other writers; run again"
        )))
    }

    async fn commit(
        &self,
        table: Option<DeltaTable>,
        replace: Option<Expr>,
        batch: RecordBatch,
        props: CommitProperties,
        name: &str,
        change_feed: bool,
    ) -> std::result::Result<DeltaTable, CommitError> {
        let props = props.with_max_retries(0);
        let written = match (table, replace) {
            (Some(t), Some(replace)) => {
                t.write(vec![batch])
                    .with_save_mode(SaveMode::Overwrite)
                    .with_replace_where(replace)
                    .with_commit_properties(props)
                    .await
            }
            (Some(t), None) => {
                t.write(vec![batch])
                    .with_save_mode(SaveMode::Append)
                    .with_commit_properties(props)
                    .await
            }
            (None, _) => {
                let t = self
                    .builder()
                    .map_err(CommitError::Failed)?
                    .build()
                    .map_err(|e| CommitError::Failed(self.error(e)))?;
                let mut w = t
                    .write(vec![batch])
                    .with_save_mode(SaveMode::Append)
                    .with_table_name(name)
                    .with_commit_properties(props);
                // Delta's default checkpoint interval (100): a checkpoint
                // every 10 commits was measured slower (claims bench, 1,000
                // documents: 1.97 against 0.41 ms a chunk) and no smaller.
                let mut config = Vec::new();
                if change_feed {
                    config.push(("delta.enableChangeDataFeed", Some("true")));
                }
                if !self.history {
                    config.push(("delta.deletedFileRetentionDuration", Some(FILE_RETENTION)));
                    config.push(("delta.logRetentionDuration", Some(LOG_RETENTION)));
                }
                w = w.with_configuration(config);
                w.await
            }
        };
        match written {
            Ok(t) => {
                *self.latest.lock().await = Some(t.clone());
                if let Some(v) = t.version() {
                    if v > 0 && v as i64 % COMPACT_EVERY == 0 {
                        self.compact(t.clone()).await;
                    }
                }
                Ok(t)
            }
            Err(e) if lost_race(&e) => Err(CommitError::LostRace),
            Err(e) => Err(CommitError::Failed(self.error(e))),
        }
    }

    /// Rewrites the table's small files into a few (its own commit, which
    /// changes no row: the change feed shows nothing for it), then writes
    /// a checkpoint of the result.
    async fn compact(&self, t: DeltaTable) {
        match t
            .optimize()
            .with_target_size(COMPACT_TARGET)
            .with_commit_properties(CommitProperties::default().with_max_retries(0))
            .await
        {
            Ok((t, _)) => {
                let t = if self.history {
                    t
                } else {
                    // Lite: only files the log says were removed, once
                    // the table's retention has passed.
                    match t
                        .clone()
                        .vacuum()
                        .with_commit_properties(CommitProperties::default().with_max_retries(0))
                        .await
                    {
                        Ok((t, _)) => t,
                        Err(e) => {
                            if !lost_race(&e) {
                                eprintln!("warning: removing {}'s replaced files: {e}", self.what);
                            }
                            t
                        }
                    }
                };
                // A checkpoint of the compacted version, so loading the
                // table reads one Parquet file and the commits after it
                // rather than every commit since the table began (Delta's
                // own checkpoint, every 100 commits, came after the end of
                // a 4,000-document run).
                if let Err(e) = deltalake::checkpoints::create_checkpoint(&t, None).await {
                    eprintln!("warning: checkpointing {}: {e}", self.what);
                } else if !self.history {
                    if let Err(e) = deltalake::checkpoints::cleanup_metadata(&t, None).await {
                        eprintln!("warning: removing {}'s old log entries: {e}", self.what);
                    }
                }
                *self.latest.lock().await = Some(t);
            }
            Err(e) if lost_race(&e) => {}
            Err(e) => eprintln!("warning: compacting {}: {e}", self.what),
        }
    }
}

/// A Delta table of the store as a table of declared columns, read when a
/// query runs (so a session sees commits made after it began); empty
/// before the table's first commit. `keep` narrows its rows.
#[derive(Debug)]
pub struct DeltaView {
    table: Delta,
    keep: Option<Expr>,
    schema: SchemaRef,
}

impl DeltaView {
    /// The rows of `table` that `keep` keeps, in columns `schema`.
    pub fn new(table: Delta, keep: Option<Expr>, schema: SchemaRef) -> Self {
        Self {
            table,
            keep,
            schema,
        }
    }
}

#[async_trait]
impl TableProvider for DeltaView {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn table_type(&self) -> TableType {
        TableType::Base
    }
    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        let projected = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        let Some(table) = self.table.load().await? else {
            return Ok(Arc::new(EmptyExec::new(projected)));
        };
        let provider = table
            .table_provider()
            .await
            .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?;
        // The columns as declared (the scan may give text as views).
        let columns = projected.fields().iter().map(|f| {
            datafusion::logical_expr::cast(col(f.name()), f.data_type().clone()).alias(f.name())
        });
        let mut b = LogicalPlanBuilder::scan("delta_table", provider_as_source(provider), None)?;
        if let Some(keep) = &self.keep {
            b = b.filter(keep.clone())?;
        }
        let mut b = b.project(columns)?;
        if let Some(l) = limit {
            b = b.limit(0, Some(l))?;
        }
        state.create_physical_plan(&b.build()?).await
    }
}

/// A batch's rows by their `column` (text), rows with NULL there left out.
pub fn rows_by(b: &RecordBatch, column: &str) -> Result<BTreeMap<String, RecordBatch>> {
    let docs = cast(
        b.column_by_name(column)
            .ok_or_else(|| QuarryError::Invalid(format!("stored rows have no {column}")))?,
        &DataType::Utf8,
    )?;
    let docs = docs.as_string::<i32>();
    let mut idx: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for r in 0..b.num_rows() {
        if docs.is_valid(r) {
            idx.entry(docs.value(r).to_string())
                .or_default()
                .push(r as u32);
        }
    }
    idx.into_iter()
        .map(|(d, rows)| Ok((d, take_record_batch(b, &UInt32Array::from(rows))?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{Field, Schema};

    fn rows(from: i64, n: i64) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        RecordBatch::try_new(
            schema,
            vec![Arc::new(Int64Array::from_iter_values(from..from + n))],
        )
        .unwrap()
    }

    async fn count(t: &Delta) -> usize {
        let table = t.load().await.unwrap().unwrap();
        t.rows(&table, datafusion::logical_expr::lit(true))
            .await
            .unwrap()
            .num_rows()
    }

    /// An append tried again as the same transaction (its first commit
    /// landed, its answer lost) is not a second copy; a later transaction
    /// of the writer, and another writer's, are appended; a table read
    /// afresh (another process) knows the transactions too.
    #[tokio::test]
    async fn an_append_tried_again_as_its_transaction_is_made_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().display().to_string()).unwrap();
        let t = Delta::new(&store, "tables/t", "the test table").unwrap();
        let txn = |app: &str, version| Txn {
            app_id: app.to_string(),
            version,
        };
        t.append_once(rows(0, 3), "t", &txn("a", 1)).await.unwrap();
        t.append_once(rows(0, 3), "t", &txn("a", 1)).await.unwrap();
        assert_eq!(count(&t).await, 3);
        t.append_once(rows(3, 2), "t", &txn("a", 2)).await.unwrap();
        t.append_once(rows(5, 4), "t", &txn("b", 1)).await.unwrap();
        assert_eq!(count(&t).await, 9);
        let fresh = Delta::new(&store, "tables/t", "the test table").unwrap();
        fresh
            .append_once(rows(3, 2), "t", &txn("a", 2))
            .await
            .unwrap();
        fresh
            .append_once(rows(0, 3), "t", &txn("a", 1))
            .await
            .unwrap();
        assert_eq!(count(&fresh).await, 9);
        // Without a transaction an append is always made.
        fresh
            .commit_retrying(None, rows(0, 1), CommitProperties::default(), "t")
            .await
            .unwrap();
        assert_eq!(count(&fresh).await, 10);
    }
}
