//! The trace: one row of the `calls` table per request attempt (and per
//! request a rail refused), written to the store as calls finish. Rows carry
//! the request as the model saw it and never a key or header.

use std::sync::{Arc, LazyLock, Mutex};

use datafusion::arrow::array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMillisecondArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::catalog::memory::PartitionData;

use crate::error::Result;
use crate::store::delta::{Delta, Txn};
use crate::store::Store;

/// One row of `calls`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRow {
    /// The run (one per session).
    pub run_id: String,
    /// The request within the run; retries share it.
    pub call_id: i64,
    /// 1 for the first attempt, 0 for a request refused before sending.
    pub attempt: i32,
    /// The cache key (request plus endpoint).
    pub request_hash: String,
    /// The document the request was about, when known.
    pub document_id: Option<String>,
    /// Which stage asked (`llm`, `llm_json`, `screen`, `extract`, ...).
    pub stage: String,
    /// A free label.
    pub label: Option<String>,
    /// The model.
    pub model: String,
    /// Where the request went (base URL, `mock://`, `replay://`).
    pub endpoint: String,
    /// The request as JSON: messages and parameters, never a key.
    pub request: String,
    /// The reply text, when there was one.
    pub reply: Option<String>,
    /// Why generation stopped.
    pub finish_reason: Option<String>,
    /// Whether this attempt gave a usable reply.
    pub ok: bool,
    /// What went wrong.
    pub error: Option<String>,
    /// Answered from the cache (no request sent).
    pub cached: bool,
    /// Input tokens.
    pub tokens_in: Option<i64>,
    /// Output tokens.
    pub tokens_out: Option<i64>,
    /// The price of the attempt; NULL when the model's price is unknown.
    pub usd: Option<f64>,
    /// Wall time of the attempt.
    pub seconds: f64,
    /// When the attempt started (ms since the epoch).
    pub started_at: i64,
}

static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let s = |n: &str, null: bool| Field::new(n, DataType::Utf8, null);
    Arc::new(Schema::new(vec![
        s("run_id", false),
        Field::new("call_id", DataType::Int64, false),
        Field::new("attempt", DataType::Int32, false),
        s("request_hash", false),
        s("document_id", true),
        s("stage", false),
        s("label", true),
        s("model", false),
        s("endpoint", false),
        s("request", false),
        s("reply", true),
        s("finish_reason", true),
        Field::new("ok", DataType::Boolean, false),
        s("error", true),
        Field::new("cached", DataType::Boolean, false),
        Field::new("tokens_in", DataType::Int64, true),
        Field::new("tokens_out", DataType::Int64, true),
        Field::new("usd", DataType::Float64, true),
        Field::new("seconds", DataType::Float64, false),
        Field::new(
            "started_at",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            false,
        ),
    ]))
});

/// The schema of `calls`.
pub fn schema() -> SchemaRef {
    SCHEMA.clone()
}

/// Rows as one batch.
pub fn batch(rows: &[CallRow]) -> Result<RecordBatch> {
    let s = |f: fn(&CallRow) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
    };
    let o = |f: fn(&CallRow) -> Option<&str>| -> ArrayRef {
        Arc::new(rows.iter().map(f).collect::<StringArray>())
    };
    let cols: Vec<ArrayRef> = vec![
        s(|r| &r.run_id),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.call_id))),
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.attempt))),
        s(|r| &r.request_hash),
        o(|r| r.document_id.as_deref()),
        s(|r| &r.stage),
        o(|r| r.label.as_deref()),
        s(|r| &r.model),
        s(|r| &r.endpoint),
        s(|r| &r.request),
        o(|r| r.reply.as_deref()),
        o(|r| r.finish_reason.as_deref()),
        Arc::new(rows.iter().map(|r| Some(r.ok)).collect::<BooleanArray>()),
        o(|r| r.error.as_deref()),
        Arc::new(
            rows.iter()
                .map(|r| Some(r.cached))
                .collect::<BooleanArray>(),
        ),
        Arc::new(rows.iter().map(|r| r.tokens_in).collect::<Int64Array>()),
        Arc::new(rows.iter().map(|r| r.tokens_out).collect::<Int64Array>()),
        Arc::new(rows.iter().map(|r| r.usd).collect::<Float64Array>()),
        Arc::new(Float64Array::from_iter_values(
            rows.iter().map(|r| r.seconds),
        )),
        Arc::new(
            TimestampMillisecondArray::from_iter_values(rows.iter().map(|r| r.started_at))
                .with_timezone("UTC"),
        ),
    ];
    Ok(RecordBatch::try_new(schema(), cols)?)
}

/// Where trace rows go.
#[derive(Debug, Clone)]
pub enum Sink {
    /// The Delta Lake table `tables/calls/` of the store: one commit per
    /// flush.
    Store(Store),
    /// The session's memory (no store): the `calls` table's only partition.
    Memory(PartitionData),
}

/// Collects rows and writes them out in files of finished calls.
#[derive(Debug)]
pub struct Trace {
    run_id: String,
    sink: Sink,
    pending: Mutex<Vec<CallRow>>,
    /// The store's calls table, once opened.
    table: std::sync::OnceLock<Delta>,
    /// Serialises flushes so files are written in order, and holds the
    /// batches whose commit failed (it may have landed all the same: its
    /// answer lost), each with the transaction it was tried as, to be
    /// tried again as that same transaction (see [`Delta::append_once`]).
    flushing: tokio::sync::Mutex<Vec<(Txn, RecordBatch)>>,
    /// This writer of the calls table, unique to this trace.
    app_id: String,
    /// The last transaction version given out.
    txns: std::sync::atomic::AtomicI64,
}

/// The folder where stores written before the calls table held the trace
/// (one Parquet file per flush); replay still reads it.
pub const CALLS_DIR: &str = "calls";

/// The calls table in a store.
pub const CALLS_TABLE: &str = "tables/calls";

impl Trace {
    /// A trace for `run_id` writing to `sink`.
    pub fn new(run_id: String, sink: Sink) -> Self {
        Self {
            run_id,
            sink,
            pending: Mutex::new(Vec::new()),
            table: Default::default(),
            flushing: Default::default(),
            app_id: format!("quarry.calls.{}", uuid::Uuid::new_v4()),
            txns: Default::default(),
        }
    }

    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Adds a row (written at the next flush).
    pub fn record(&self, row: CallRow) {
        self.pending.lock().expect("trace lock").push(row);
    }

    /// Rows not yet written (recorded since the last flush; a batch whose
    /// commit failed is counted by the flush that tries it again).
    pub fn pending(&self) -> usize {
        self.pending.lock().expect("trace lock").len()
    }

    /// Writes pending rows: one commit to the store's calls table per
    /// flush, or one batch in memory. A batch whose commit failed is kept
    /// and tried first at the next flush, as the same transaction, so rows
    /// whose commit landed although it failed are not written twice.
    pub async fn flush(&self) -> Result<()> {
        let mut unsent = self.flushing.lock().await;
        let rows = std::mem::take(&mut *self.pending.lock().expect("trace lock"));
        if rows.is_empty() && unsent.is_empty() {
            return Ok(());
        }
        let table = match &self.sink {
            Sink::Memory(p) => {
                if !rows.is_empty() {
                    p.write().await.push(batch(&rows)?);
                }
                return Ok(());
            }
            Sink::Store(store) => match self.table.get() {
                Some(t) => t.clone(),
                None => {
                    let t = Delta::new(store, CALLS_TABLE, "the store's calls table")?;
                    self.table.get_or_init(|| t).clone()
                }
            },
        };
        if !rows.is_empty() {
            let version = self.txns.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            let txn = Txn {
                app_id: self.app_id.clone(),
                version,
            };
            unsent.push((txn, batch(&rows)?));
        }
        while let Some((txn, b)) = unsent.first() {
            table.append_once(b.clone(), "calls", txn).await?;
            unsent.remove(0);
        }
        Ok(())
    }
}
