//! Table functions over the model layer: `cache_stats()` (entries, bytes,
//! hits, misses, writes) and `models()` (the registry in force).

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, UInt64Array,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::physical_plan::SendableRecordBatchStream;

use crate::model::Runtime;

/// `cache_stats()`.
#[derive(Debug)]
pub struct CacheStatsFn {
    /// The session's model layer.
    pub runtime: Arc<Runtime>,
}

#[derive(Debug)]
struct StatsPartition {
    runtime: Arc<Runtime>,
    schema: SchemaRef,
}

fn stats_schema() -> SchemaRef {
    let u = |n: &str| Field::new(n, DataType::UInt64, false);
    Arc::new(Schema::new(vec![
        Field::new("location", DataType::Utf8, true),
        u("entries"),
        u("bytes"),
        u("hits"),
        u("misses"),
        u("writes"),
    ]))
}

impl PartitionStream for StatsPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let rt = self.runtime.clone();
        let schema = self.schema.clone();
        let fut = async move {
            let (loc, (entries, bytes), s) = match rt.cache() {
                Some(c) => (Some(c.location().to_string()), c.size().await?, c.stats()),
                None => (None, (0, 0), Default::default()),
            };
            let cols: Vec<ArrayRef> = vec![
                Arc::new(StringArray::from(vec![loc])),
                Arc::new(UInt64Array::from(vec![entries])),
                Arc::new(UInt64Array::from(vec![bytes])),
                Arc::new(UInt64Array::from(vec![s.hits])),
                Arc::new(UInt64Array::from(vec![s.misses])),
                Arc::new(UInt64Array::from(vec![s.writes])),
            ];
            Ok(RecordBatch::try_new(schema, cols)?)
        };
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::once(fut),
        ))
    }
}

impl TableFunctionImpl for CacheStatsFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        if !args.exprs().is_empty() {
            return plan_err!("cache_stats() takes no arguments");
        }
        let schema = stats_schema();
        let part = StatsPartition {
            runtime: self.runtime.clone(),
            schema: schema.clone(),
        };
        Ok(Arc::new(StreamingTable::try_new(
            schema,
            vec![Arc::new(part)],
        )?))
    }
}

/// `models()`: name, context window, output cap and prices (NULL: unknown).
#[derive(Debug)]
pub struct ModelsFn {
    /// The session's model layer.
    pub runtime: Arc<Runtime>,
}

impl TableFunctionImpl for ModelsFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        if !args.exprs().is_empty() {
            return plan_err!("models() takes no arguments");
        }
        let reg = &self.runtime.config().registry;
        let schema = Arc::new(Schema::new(vec![
            Field::new("model", DataType::Utf8, false),
            Field::new("context_window", DataType::Int64, false),
            Field::new("max_output", DataType::Int64, false),
            Field::new("usd_per_1m_in", DataType::Float64, true),
            Field::new("usd_per_1m_out", DataType::Float64, true),
        ]));
        let cols: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(
                reg.iter().map(|(n, _)| n.as_str()),
            )),
            Arc::new(Int64Array::from_iter_values(
                reg.iter().map(|(_, i)| i.context_window as i64),
            )),
            Arc::new(Int64Array::from_iter_values(
                reg.iter().map(|(_, i)| i.max_output as i64),
            )),
            Arc::new(
                reg.iter()
                    .map(|(_, i)| i.usd_per_1m_in)
                    .collect::<Float64Array>(),
            ),
            Arc::new(
                reg.iter()
                    .map(|(_, i)| i.usd_per_1m_out)
                    .collect::<Float64Array>(),
            ),
        ];
        let batch = RecordBatch::try_new(schema.clone(), cols)?;
        Ok(Arc::new(datafusion::datasource::MemTable::try_new(
            schema,
            vec![vec![batch]],
        )?))
    }
}

/// The SQL of `reply_problems()`: every traced reply read again with
/// `parse_reply` against the schema its request carried.
pub const REPLY_PROBLEMS_SQL: &str =
    "SELECT run_id, call_id, attempt, stage, document_id, label, ok,
       p['where'] AS place, p['problem'] AS problem, p['severity'] AS severity
FROM (SELECT run_id, call_id, attempt, stage, document_id, label, ok,
             unnest(parse_reply(reply, json_field(request, 'schema'))['problems']) AS p
      FROM calls
      WHERE reply IS NOT NULL AND json_field(request, 'schema') IS NOT NULL) x
ORDER BY run_id, call_id, attempt";

/// `reply_problems()`: one row per problem found in a traced structured
/// reply (unparseable at line N, a block not closed, a key missing or
/// unknown, a wrong type), with the call it belongs to: the problems are kept
/// with the call, derived from the reply and request the trace holds, so
/// they are the same whenever they are asked for.
#[derive(Debug, Default)]
pub struct ReplyProblemsFn;

impl TableFunctionImpl for ReplyProblemsFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        if !args.exprs().is_empty() {
            return plan_err!("reply_problems() takes no arguments");
        }
        let Some(state) = args
            .session()
            .as_any()
            .downcast_ref::<datafusion::execution::SessionState>()
        else {
            return plan_err!("reply_problems(): needs a quarry session");
        };
        crate::engine::staged::staged_table(state, crate::review::split_stages(REPLY_PROBLEMS_SQL))
    }
}
