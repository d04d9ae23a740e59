//! The replay client: answers from a recorded `calls` table, with no key
//! and no spend. A request it has no recording for is a `replay_miss`, never
//! an invented answer. A request that failed in the recording fails the
//! same way in the replay (a reply that failed a check is checked again).

use std::collections::HashMap;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int64Type;
use sha2::{Digest, Sha256};

use super::trace::{CALLS_DIR, CALLS_TABLE};
use super::{ModelClient, ModelError, Reply, Request};
use crate::error::{QuarryError, Result};
use crate::store::delta::Delta;
use crate::store::{read_parquet, Store};

/// Recorded outcomes by the content hash of their request: a reply, or the
/// error of a request that never got one.
type Recording = HashMap<String, std::result::Result<Reply, String>>;

/// Answers from a recording, loaded on the first request.
#[derive(Debug)]
pub struct ReplayClient {
    store: Store,
    replies: tokio::sync::OnceCell<std::result::Result<Recording, String>>,
}

impl ReplayClient {
    /// A replay of the `calls` recorded in `store` (read on first use).
    pub fn new(store: Store) -> Self {
        Self {
            store,
            replies: tokio::sync::OnceCell::new(),
        }
    }

    /// Reads the recording now; errors say what is wrong with it.
    pub async fn load(&self) -> Result<usize> {
        match self
            .replies
            .get_or_init(|| async { Self::read(&self.store).await.map_err(|e| e.to_string()) })
            .await
        {
            Ok(m) => Ok(m.len()),
            Err(e) => Err(QuarryError::Invalid(e.clone())),
        }
    }

    /// Every successful reply recorded in the `calls` folder of `store`, by
    /// the content hash of its request.
    async fn read(store: &Store) -> Result<Recording> {
        let mut replies = HashMap::new();
        // The calls table, then the files of stores written before it.
        let mut batches: Vec<(String, RecordBatch)> = Vec::new();
        let table = Delta::new(store, CALLS_TABLE, "the recorded calls")?;
        if let Some(t) = table.load().await? {
            let rows = table.rows(&t, datafusion::logical_expr::lit(true)).await?;
            batches.push((format!("{CALLS_TABLE}/"), rows));
        }
        let files = store.list(CALLS_DIR).await?;
        for (path, _) in files.iter().filter(|(p, _)| p.ends_with(".parquet")) {
            let Some(bytes) = store.get(path).await? else {
                continue;
            };
            for b in read_parquet(bytes)? {
                batches.push((path.clone(), b));
            }
        }
        if batches.is_empty() {
            return Err(QuarryError::Invalid(format!(
                "replay: the store '{}' has no recorded calls (looked in {CALLS_TABLE}/ and {CALLS_DIR}/)",
                store.location
            )));
        }
        {
            for (path, b) in &batches {
                let col = |n: &str| {
                    b.column_by_name(n).cloned().ok_or_else(|| {
                        QuarryError::Invalid(format!("replay: {path} has no column {n}"))
                    })
                };
                let cast = |n: &str| -> Result<std::sync::Arc<dyn Array>> {
                    Ok(datafusion::arrow::compute::cast(
                        &col(n)?,
                        &datafusion::arrow::datatypes::DataType::Utf8,
                    )?)
                };
                let (req, reply, fin) = (cast("request")?, cast("reply")?, cast("finish_reason")?);
                let (req, reply, fin) = (
                    req.as_string::<i32>(),
                    reply.as_string::<i32>(),
                    fin.as_string::<i32>(),
                );
                let ok = col("ok")?;
                let ok = ok.as_boolean();
                let err = cast("error")?;
                let err = err.as_string::<i32>();
                let attempt = col("attempt")?;
                let attempt = attempt.as_primitive::<datafusion::arrow::datatypes::Int32Type>();
                let (ti, to) = (col("tokens_in")?, col("tokens_out")?);
                let (ti, to) = (
                    ti.as_primitive::<Int64Type>(),
                    to.as_primitive::<Int64Type>(),
                );
                for i in 0..b.num_rows() {
                    if attempt.value(i) == 0 {
                        continue; // refused by a rail: nothing was sent
                    }
                    let hash = hex::encode(Sha256::digest(req.value(i).as_bytes()));
                    if reply.is_null(i) {
                        // A failure with no reply: replayed as that failure,
                        // unless the request also succeeded.
                        let e = if err.is_null(i) { "" } else { err.value(i) };
                        replies.entry(hash).or_insert_with(|| Err(e.to_string()));
                        continue;
                    }
                    let better = ok.value(i) || !matches!(replies.get(&hash), Some(Ok(_)));
                    if !better {
                        continue;
                    }
                    replies.insert(
                        hash,
                        Ok(Reply {
                            text: reply.value(i).to_string(),
                            tokens_in: (!ti.is_null(i)).then(|| ti.value(i) as u64),
                            tokens_out: (!to.is_null(i)).then(|| to.value(i) as u64),
                            finish_reason: (!fin.is_null(i)).then(|| fin.value(i).to_string()),
                        }),
                    );
                }
            }
        }
        Ok(replies)
    }
}

#[async_trait::async_trait]
impl ModelClient for ReplayClient {
    fn endpoint(&self) -> String {
        format!("replay://{}", self.store.location)
    }

    fn is_live(&self) -> bool {
        false
    }

    async fn complete(&self, req: &Request) -> Result<Reply, ModelError> {
        self.load()
            .await
            .map_err(|e| ModelError::Transport(format!("replay: {e}")))?;
        let hash = req.content_hash();
        let Some(Ok(replies)) = self.replies.get() else {
            unreachable!("loaded above")
        };
        match replies.get(&hash) {
            Some(Ok(r)) => Ok(r.clone()),
            Some(Err(e)) => Err(ModelError::Recorded(e.clone())),
            None => Err(ModelError::ReplayMiss {
                model: req.model.clone(),
                hash,
            }),
        }
    }
}
