//! The same SQL on a Ballista cluster (feature `cluster`, on by default): a
//! scheduler plans, executors run the plan's parts, the client only sends
//! the SQL's logical plan and reads the result.
//!
//! What crosses the wire for quarry's functions is the call, never a table:
//! `documents('s3://b/papers/', 'recursive=true')` travels as its name and
//! its literal arguments ([`CallTable`] in the logical plan, [`CallExec`] in
//! the physical one), and whoever receives it calls the function again in
//! its own quarry session (its own store, model configuration and keys,
//! which never travel). A corpus function (`documents`, `inventory`,
//! `blocks`, `chunks`, `cohort_tables`) is split into as many parts as the
//! session's `target_partitions`: each part lists the corpus and reads the
//! files its [`Share`] holds (chosen by size and a digest of the bytes, so
//! byte-identical copies meet in one part and the later ones are marked
//! duplicates there), and its rows carry their document's position in the
//! whole listing, by which one merge puts the parts back into the order a
//! single process gives. A run (`extract`, `evidence`, `screen`, `claims`,
//! `rejections`) is split the same way: each part runs the model stages
//! over its documents against the shared store and response cache (with
//! run ceilings counted per query on each executor), and the parts are
//! merged on `source`. Every other table function runs whole, as one part
//! on one executor, and so do the session's tables (`calls`, `evidence`,
//! `extraction`, ...), which travel as their names (`table:calls`) and are
//! read by an executor from its own session over the same store.
//!
//! ```no_run
//! # async fn demo() -> datafusion::error::Result<()> {
//! let local = quarry::session::session(&Default::default())?;
//! let url = quarry::cluster::standalone(&local, 2, 1).await?;
//! let ctx = quarry::cluster::client(&url, &local).await?;
//! ctx.sql("SELECT count(*) FROM documents('examples/corpus/')").await?.show().await?;
//! # Ok(()) }
//! ```

use std::any::Any;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use async_trait::async_trait;
use ballista::prelude::SessionContextExt;
use ballista_core::extension::SessionConfigExt;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{plan_err, DataFusionError, Result, ScalarValue, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::{SessionState, SessionStateBuilder, TaskContext};
use datafusion::logical_expr::{Expr, Extension, LogicalPlan, TableType};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{
    EquivalenceProperties, LexOrdering, PhysicalExpr, PhysicalSortExpr,
};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    execute_stream, ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan,
    Partitioning, PlanProperties, ReplaceChildrenOptions, SendableRecordBatchStream,
};
use datafusion::prelude::SessionContext;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use futures::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};

use crate::corpus::Share;
use crate::functions::{literal_args, with_listing_order};

/// How a call's parts are put back together, which decides whether it is
/// split at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Merge {
    /// Not split: one part runs the whole call.
    Whole,
    /// A corpus function: each part's rows carry their document's position
    /// in the listing ([`LISTING_ORDER`](crate::functions::LISTING_ORDER), appended), merged on it.
    Listing,
    /// A run (`extract`, `evidence`, `screen`, `claims`, `rejections`):
    /// each part runs the model stages over its documents, against the
    /// shared store and response cache, and gives its rows ordered by
    /// `source`, merged on it.
    Source,
}

/// How the call `name` returning `table` is split.
fn merge_of(name: &str, table: &datafusion::arrow::datatypes::Schema) -> Merge {
    match name {
        "documents" | "inventory" | "blocks" | "chunks" | "cohort_tables" => Merge::Listing,
        "extract" | "evidence" | "screen" | "claims" | "rejections"
            if table.index_of("source").is_ok() =>
        {
            Merge::Source
        }
        _ => Merge::Whole,
    }
}

/// What begins quarry's own parts of a serialised plan. Protobuf never
/// begins a message with a zero byte (field number 0 does not exist), so
/// Ballista's and DataFusion's encodings cannot be mistaken for it.
const MAGIC: &[u8] = b"\0quarry-call\0";

/// A table function call as it travels: the function and its arguments,
/// each a DataFusion protobuf `ScalarValue` in hex.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct CallWire {
    name: String,
    args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    projection: Option<Vec<usize>>,
}

fn encode_args(args: &[ScalarValue]) -> Result<Vec<String>> {
    use prost::Message;
    args.iter()
        .map(|v| {
            let p = datafusion_proto::protobuf::ScalarValue::try_from(v).map_err(|e| {
                DataFusionError::Plan(format!(
                    "the argument {v} cannot be sent to the cluster: {e}"
                ))
            })?;
            Ok(hex::encode(p.encode_to_vec()))
        })
        .collect()
}

fn decode_args(args: &[String]) -> Result<Vec<ScalarValue>> {
    use prost::Message;
    args.iter()
        .map(|h| {
            let bytes = hex::decode(h)
                .map_err(|e| DataFusionError::Internal(format!("a call's argument: {e}")))?;
            let p = datafusion_proto::protobuf::ScalarValue::decode(bytes.as_slice())
                .map_err(|e| DataFusionError::Internal(format!("a call's argument: {e}")))?;
            ScalarValue::try_from(&p)
                .map_err(|e| DataFusionError::Internal(format!("a call's argument: {e}")))
        })
        .collect()
}

fn write_wire(wire: &CallWire, buf: &mut Vec<u8>) -> Result<()> {
    buf.extend_from_slice(MAGIC);
    serde_json::to_writer(buf, wire)
        .map_err(|e| DataFusionError::Internal(format!("writing a call: {e}")))
}

fn read_wire(buf: &[u8]) -> Option<Result<CallWire>> {
    let rest = buf.strip_prefix(MAGIC)?;
    Some(
        serde_json::from_slice(rest)
            .map_err(|e| DataFusionError::Internal(format!("reading a call: {e}"))),
    )
}

/// What begins a call's name when it reads a table of the session by its
/// name (`calls`, `evidence`, `extraction`, ...) rather than calling a
/// function: `table:calls`.
const TABLE: &str = "table:";

/// Calls the table function `name` of `state` with `args` (literals), or
/// gives its table `name` (after [`TABLE`]).
fn call(state: &SessionState, name: &str, args: &[ScalarValue]) -> Result<Arc<dyn TableProvider>> {
    if let Some(table) = name.strip_prefix(TABLE) {
        use futures::FutureExt;
        let found = state
            .schema_for_ref(TableReference::bare(table))?
            .table(table)
            .now_or_never();
        return match found {
            Some(Ok(Some(t))) => Ok(t),
            Some(Err(e)) => Err(e),
            _ => plan_err!(
                "this quarry's session has no table {table}: a quarry process registers the \
                 store's tables when it starts, so start the executors again after the run \
                 that made it, with the client's --store"
            ),
        };
    }
    let Some(f) = state.table_functions().get(name) else {
        return plan_err!(
            "this quarry has no table function {name}() (is it the same release as the client's?)"
        );
    };
    let exprs: Vec<Expr> = args
        .iter()
        .map(|v| Expr::Literal(v.clone(), None))
        .collect();
    f.function()
        .call_with_args(TableFunctionArgs::new(&exprs, state))
}

/// `base` with `share` in its configuration, for a part's call of the
/// query `query`, with that query's model layer.
fn with_share(base: &SessionState, share: Option<Share>, query: &str) -> SessionState {
    let config = base
        .config()
        .clone()
        .with_extension(Arc::new(crate::corpus::PartOf(share)));
    let Some(rt) = query_runtime(base, query) else {
        return reconfigured(base.clone(), config);
    };
    let mut state = reconfigured(base.clone(), config.with_extension(rt.clone()));
    // The model calls of the part's stages go through the query's layer.
    for f in crate::session::model_udfs(&rt) {
        use datafusion::execution::FunctionRegistry;
        let _ = state.register_udf(Arc::new(f));
    }
    state
}

/// The queries this process has run parts for, each with its model layer
/// ([`Runtime::for_query`](crate::model::Runtime::for_query)): a query's
/// parts here count against the run ceilings from zero, whatever else the
/// executor ran before. Keyed by the process's own model layer (one per
/// quarry session) and the query (its Ballista job); the latest 256 are
/// kept.
type Queries = std::collections::VecDeque<((usize, String), Arc<crate::model::Runtime>)>;
static QUERIES: std::sync::LazyLock<std::sync::Mutex<Queries>> =
    std::sync::LazyLock::new(Default::default);

fn query_runtime(base: &SessionState, query: &str) -> Option<Arc<crate::model::Runtime>> {
    let rt = base.config().get_extension::<crate::model::Runtime>()?;
    let key = (Arc::as_ptr(&rt) as usize, query.to_string());
    let mut all = QUERIES.lock().expect("queries");
    if let Some((_, r)) = all.iter().find(|(k, _)| *k == key) {
        return Some(r.clone());
    }
    let scoped = Arc::new(rt.for_query());
    all.push_back((key, scoped.clone()));
    if all.len() > 256 {
        all.pop_front();
    }
    Some(scoped)
}

/// `state` with `config`. (A state builder handed a configuration makes
/// the default catalog afresh when that configuration says to, and puts it
/// into the catalog list the new state shares with `state`'s session: the
/// session's tables, the store's `calls` among them, would be gone.)
fn reconfigured(state: SessionState, config: datafusion::prelude::SessionConfig) -> SessionState {
    let mut state = SessionStateBuilder::new_from_existing(state).build();
    *state.config_mut() = config;
    state
}

/// A table function of a cluster session: calls quarry's own and keeps the
/// call, so the plan can carry it to the scheduler.
#[derive(Debug)]
struct ClusterCall {
    name: String,
    inner: Arc<dyn TableFunctionImpl>,
    base: Arc<SessionState>,
}

impl TableFunctionImpl for ClusterCall {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let inner = self
            .inner
            .call_with_args(TableFunctionArgs::new(args.exprs(), args.session()))?;
        let args = literal_args(&args)?;
        Ok(Arc::new(CallTable {
            name: self.name.clone(),
            args,
            schema: inner.schema(),
            base: self.base.clone(),
        }))
    }
}

/// A table function call in a logical plan: its schema, and how to make it
/// again where it runs.
#[derive(Debug)]
pub struct CallTable {
    name: String,
    args: Vec<ScalarValue>,
    schema: SchemaRef,
    base: Arc<SessionState>,
}

#[async_trait]
impl TableProvider for CallTable {
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
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let merge = merge_of(&self.name, &self.schema);
        let parts = match merge {
            Merge::Whole => 1,
            _ => state.config().target_partitions().max(1),
        };
        let exec = CallExec::try_new(
            self.base.clone(),
            self.name.clone(),
            self.args.clone(),
            projection.cloned(),
            &self.schema,
            parts_plan(parts)?,
        )?;
        let Some(key) = exec.key else {
            return Ok(Arc::new(exec));
        };
        // The parts merged back into one order, a column added for it
        // dropped.
        let width = exec.width;
        let schema = exec.schema.clone();
        let ordering = LexOrdering::new([PhysicalSortExpr::new_default(Arc::new(Column::new(
            schema.field(key).name(),
            key,
        )))])
        .expect("one sort expression");
        let merged: Arc<dyn ExecutionPlan> =
            Arc::new(SortPreservingMergeExec::new(ordering, Arc::new(exec)));
        if width == schema.fields().len() {
            return Ok(merged);
        }
        let columns: Vec<(Arc<dyn PhysicalExpr>, String)> = schema
            .fields()
            .iter()
            .take(width)
            .enumerate()
            .map(|(i, f)| {
                (
                    Arc::new(Column::new(f.name(), i)) as Arc<dyn PhysicalExpr>,
                    f.name().clone(),
                )
            })
            .collect();
        Ok(Arc::new(ProjectionExec::try_new(columns, merged)?))
    }
}

/// The parts of a call as a plan Ballista can split between its tasks: one
/// partition per part, each one row (the part, the number of parts). A
/// task that runs some of a stage's partitions restricts its leaves to
/// them, and only scans it knows can be restricted; so the parts are such a
/// scan (an in-memory one), and [`CallExec`] above it runs the part each of
/// its partitions holds.
fn parts_plan(parts: usize) -> Result<Arc<dyn ExecutionPlan>> {
    use datafusion::arrow::array::{RecordBatch, UInt64Array};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    let schema = Arc::new(Schema::new(vec![
        Field::new("part", DataType::UInt64, false),
        Field::new("parts", DataType::UInt64, false),
    ]));
    let partitions = (0..parts.max(1))
        .map(|i| {
            Ok(vec![RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(UInt64Array::from(vec![i as u64])),
                    Arc::new(UInt64Array::from(vec![parts.max(1) as u64])),
                ],
            )?])
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(
        datafusion::datasource::memory::MemorySourceConfig::try_new_exec(
            &partitions,
            schema,
            None,
        )?,
    )
}

/// A table function call in a physical plan. Its partitions are its
/// input's ([`parts_plan`]): the partition holding part `i` of `n` runs the
/// call over `Share { index: i, count: n }` of the corpus (a call that is
/// not split runs whole in its one partition).
#[derive(Debug, Clone)]
pub struct CallExec {
    base: Arc<SessionState>,
    name: String,
    args: Vec<ScalarValue>,
    /// The whole table's columns (before the projection).
    table: SchemaRef,
    /// The columns the query reads.
    projection: Option<Vec<usize>>,
    merge: Merge,
    /// The columns asked of the part's own table: the projection, and the
    /// merge's column if it was not among them.
    inner: Option<Vec<usize>>,
    /// What it gives: the projection's columns, then the merge's column if
    /// it was not among them.
    schema: SchemaRef,
    /// How many of those the query reads.
    width: usize,
    /// The column the parts are merged on.
    key: Option<usize>,
    parts: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
}

impl CallExec {
    fn try_new(
        base: Arc<SessionState>,
        name: String,
        args: Vec<ScalarValue>,
        projection: Option<Vec<usize>>,
        table: &SchemaRef,
        parts: Arc<dyn ExecutionPlan>,
    ) -> Result<Self> {
        let merge = merge_of(&name, table);
        let projected = match &projection {
            Some(p) => Arc::new(table.project(p)?),
            None => table.clone(),
        };
        let width = projected.fields().len();
        let all = |extra: usize| -> Vec<usize> {
            let mut p = projection
                .clone()
                .unwrap_or_else(|| (0..table.fields().len()).collect());
            p.push(extra);
            p
        };
        let (schema, inner, key) = match merge {
            Merge::Whole => (projected, projection.clone(), None),
            // The part's table has the order column after the table's.
            Merge::Listing => (
                with_listing_order(&projected),
                projection.as_ref().map(|_| all(table.fields().len())),
                Some(width),
            ),
            Merge::Source => {
                let at = table.index_of("source")?;
                match &projection {
                    None => (projected, None, Some(at)),
                    Some(p) => match p.iter().position(|&i| i == at) {
                        Some(k) => (projected, projection.clone(), Some(k)),
                        None => {
                            let inner = all(at);
                            (Arc::new(table.project(&inner)?), Some(inner), Some(width))
                        }
                    },
                }
            }
        };
        let eq = match key {
            Some(k) => {
                let ordering = LexOrdering::new([PhysicalSortExpr::new_default(Arc::new(
                    Column::new(schema.field(k).name(), k),
                ))])
                .expect("one sort expression");
                EquivalenceProperties::new_with_orderings(schema.clone(), [ordering])
            }
            None => EquivalenceProperties::new(schema.clone()),
        };
        let properties = Arc::new(PlanProperties::new(
            eq,
            Partitioning::UnknownPartitioning(
                parts.properties().output_partitioning().partition_count(),
            ),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(Self {
            base,
            name,
            args,
            table: table.clone(),
            projection,
            merge,
            inner,
            schema,
            width,
            key,
            parts,
            properties,
        })
    }

    fn wire(&self) -> Result<CallWire> {
        Ok(CallWire {
            name: self.name.clone(),
            args: encode_args(&self.args)?,
            projection: self.projection.clone(),
        })
    }

    /// The rows of `share`'s part (of the whole call with none).
    fn run(&self, share: Option<Share>, query: &str) -> SendableRecordBatchStream {
        let state = with_share(&self.base, share, query);
        let name = self.name.clone();
        let args = self.args.clone();
        let inner = self.inner.clone();
        let run = async move {
            let provider = call(&state, &name, &args)?;
            let plan = provider.scan(&state, inner.as_ref(), &[], None).await?;
            execute_stream(plan, Arc::new(TaskContext::from(&state)))
        };
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::once(run).try_flatten(),
        ))
    }
}

impl DisplayAs for CallExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "CallExec: {}(", self.name)?;
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{a}")?;
        }
        write!(
            f,
            "), parts={}",
            self.properties.output_partitioning().partition_count()
        )
    }
}

impl ExecutionPlan for CallExec {
    fn name(&self) -> &str {
        "CallExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.parts]
    }

    // More partitions than parts would read files twice.
    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(parts) = children.pop().filter(|_| children.is_empty()) else {
            return plan_err!("CallExec takes one input, its parts");
        };
        Ok(Arc::new(CallExec::try_new(
            self.base.clone(),
            self.name.clone(),
            self.args.clone(),
            self.projection.clone(),
            &self.table,
            parts,
        )?))
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    fn execute(
        &self,
        partition: usize,
        ctx: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        use datafusion::arrow::array::AsArray;
        use datafusion::arrow::datatypes::UInt64Type;
        // The query: its Ballista job ("TID job/stage.attempt/task.attempt"),
        // else the client's session.
        let query = ctx
            .task_id()
            .and_then(|t| Some(t.strip_prefix("TID ")?.split('/').next()?.to_string()))
            .unwrap_or_else(|| ctx.session_id());
        let parts = self.parts.execute(partition, ctx)?;
        let this = self.clone();
        let split = self.merge != Merge::Whole;
        // Each row of the partition is a part to run (one, unless a task
        // was handed its parts otherwise).
        let rows = parts
            .map_ok(move |b| {
                let part = b.column(0).as_primitive::<UInt64Type>().clone();
                let count = b.column(1).as_primitive::<UInt64Type>().clone();
                futures::stream::iter(
                    (0..b.num_rows())
                        .map(|r| Share {
                            index: part.value(r) as usize,
                            count: count.value(r) as usize,
                        })
                        .collect::<Vec<_>>(),
                )
                .map(Ok::<_, DataFusionError>)
            })
            .try_flatten();
        let this = Arc::new(this);
        let out = rows
            .map_ok(move |share| this.run(split.then_some(share), &query))
            .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            out,
        )))
    }
}

/// Encodes quarry's calls in logical plans; everything else goes to
/// Ballista's own codec.
#[derive(Debug)]
pub struct LogicalCodec {
    base: Arc<SessionState>,
    ballista: BallistaLogicalExtensionCodec,
}

impl LogicalExtensionCodec for LogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.ballista.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.ballista.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match read_wire(buf) {
            Some(wire) => {
                let wire = wire?;
                Ok(Arc::new(CallTable {
                    args: decode_args(&wire.args)?,
                    name: wire.name,
                    schema,
                    base: self.base.clone(),
                }))
            }
            None => self
                .ballista
                .try_decode_table_provider(buf, table_ref, schema, ctx),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        if let Some(t) = (node.as_ref() as &dyn Any).downcast_ref::<CallTable>() {
            return write_wire(
                &CallWire {
                    name: t.name.clone(),
                    args: encode_args(&t.args)?,
                    projection: None,
                },
                buf,
            );
        }
        self.ballista
            .try_encode_table_provider(table_ref, node, buf)
            .map_err(|e| {
                DataFusionError::Plan(format!(
                    "the table {table_ref} cannot be sent to the cluster (a cluster runs quarry's table functions and files the executors can read): {e}"
                ))
            })
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.ballista.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.ballista.try_encode_file_format(buf, node)
    }
}

/// Encodes [`CallExec`] in physical plans; everything else goes to
/// Ballista's own codec.
#[derive(Debug)]
pub struct PhysicalCodec {
    base: Arc<SessionState>,
    ballista: BallistaPhysicalExtensionCodec,
}

impl PhysicalExtensionCodec for PhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(wire) = read_wire(buf) else {
            return self.ballista.try_decode(buf, inputs, ctx, proto_converter);
        };
        let wire = wire?;
        let args = decode_args(&wire.args)?;
        // The table's schema, from the function itself (it does not list
        // or read anything to give it).
        let table = call(&self.base, &wire.name, &args)?.schema();
        let [parts] = inputs else {
            return plan_err!("a call arrived with {} inputs, not its parts", inputs.len());
        };
        Ok(Arc::new(CallExec::try_new(
            self.base.clone(),
            wire.name.clone(),
            args,
            wire.projection,
            &table,
            parts.clone(),
        )?))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        match node.downcast_ref::<CallExec>() {
            Some(exec) => write_wire(&exec.wire()?, buf),
            None => self.ballista.try_encode(node, buf, proto_converter),
        }
    }
}

/// `local`'s session made a cluster's: its table functions keep their calls
/// ([`CallTable`]) and its plans carry them ([`LogicalCodec`],
/// [`PhysicalCodec`]). The scheduler, every executor and the client each
/// make theirs from their own quarry session.
pub fn cluster_state(local: &SessionContext) -> SessionState {
    let base = Arc::new(local.state());
    let mut state = local.state();
    let calls: Vec<(String, Arc<dyn TableFunctionImpl>)> = base
        .table_functions()
        .iter()
        .map(|(name, f)| {
            (
                name.clone(),
                Arc::new(ClusterCall {
                    name: name.clone(),
                    inner: f.function().clone(),
                    base: base.clone(),
                }) as Arc<dyn TableFunctionImpl>,
            )
        })
        .collect();
    let config = state
        .config()
        .clone()
        .with_ballista_logical_extension_codec(Arc::new(LogicalCodec {
            base: base.clone(),
            ballista: BallistaLogicalExtensionCodec::default(),
        }))
        .with_ballista_physical_extension_codec(Arc::new(PhysicalCodec {
            base: base.clone(),
            ballista: BallistaPhysicalExtensionCodec::default(),
        }));
    // Its own list of catalogs (holding the session's): a state built from
    // it (Ballista builds the client's and each job's) may put a fresh
    // default catalog into its list, which must not be the session's.
    use datafusion::catalog::CatalogProviderList;
    let list = Arc::new(datafusion::catalog::MemoryCatalogProviderList::new());
    for name in local.catalog_names() {
        if let Some(c) = local.catalog(&name) {
            list.register_catalog(name, c);
        }
    }
    state = reconfigured(
        SessionStateBuilder::new_from_existing(state)
            .with_catalog_list(list)
            .build(),
        config,
    );
    for (name, f) in calls {
        state.register_udtf(&name, f);
    }
    state
}

/// A client's tables: its quarry session's (the store's `calls`, `evidence`,
/// `extraction`, ...), each sent to the cluster as its name ([`TABLE`]) and
/// read there by an executor in its own session over the same store; and
/// the tables the client makes itself (`CREATE VIEW`), kept here.
#[derive(Debug)]
struct StoreTables {
    local: Arc<dyn datafusion::catalog::SchemaProvider>,
    own: Arc<dyn datafusion::catalog::SchemaProvider>,
    base: Arc<SessionState>,
}

#[async_trait]
impl datafusion::catalog::SchemaProvider for StoreTables {
    fn table_names(&self) -> Vec<String> {
        let mut names = self.own.table_names();
        names.extend(
            self.local
                .table_names()
                .into_iter()
                .filter(|n| !self.own.table_exist(n)),
        );
        names
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(t) = self.own.table(name).await? {
            return Ok(Some(t));
        }
        Ok(self.local.table(name).await?.map(|t| {
            Arc::new(CallTable {
                name: format!("{TABLE}{name}"),
                args: Vec::new(),
                schema: t.schema(),
                base: self.base.clone(),
            }) as Arc<dyn TableProvider>
        }))
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        self.own.register_table(name, table)
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        self.own.deregister_table(name)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.own.table_exist(name) || self.local.table_exist(name)
    }
}

/// A client session: the SQL is planned by the scheduler at `url`
/// (`df://HOST:PORT`) and run by its executors.
pub async fn client(url: &str, local: &SessionContext) -> Result<SessionContext> {
    let state = cluster_state(local);
    let base = Arc::new(local.state());
    let ctx = SessionContext::remote_with_state(url, state).await?;
    // The quarry session's tables are read on the cluster by name, in a
    // catalog of the client's own.
    let options = base.config().options().catalog.clone();
    if let Some(local_schema) = local
        .catalog(&options.default_catalog)
        .and_then(|c| c.schema(&options.default_schema))
    {
        use datafusion::catalog::{CatalogProvider, MemoryCatalogProvider, MemorySchemaProvider};
        let catalog = MemoryCatalogProvider::new();
        catalog.register_schema(
            &options.default_schema,
            Arc::new(StoreTables {
                local: local_schema,
                own: Arc::new(MemorySchemaProvider::new()),
                base,
            }),
        )?;
        ctx.register_catalog(&options.default_catalog, Arc::new(catalog));
    }
    // Ballista's session keeps only DataFusion's own functions: quarry's
    // (`llm`, `segment`, `normalize_doi`, ...) go back in.
    let state = local.state();
    for f in state.scalar_functions().values() {
        ctx.register_udf(f.as_ref().clone());
    }
    for f in state.aggregate_functions().values() {
        ctx.register_udaf(f.as_ref().clone());
    }
    for f in state.window_functions().values() {
        ctx.register_udwf(f.as_ref().clone());
    }
    Ok(ctx)
}

/// Starts a scheduler on `bind` (port 0: any free one) in this process; its
/// sessions are `local`'s. An executor not heard from for `executor_timeout`
/// is taken for dead: its tasks, and the results it held, run again on the
/// others. Returns where it listens.
pub async fn scheduler(
    bind: SocketAddr,
    executor_timeout: std::time::Duration,
    local: &SessionContext,
) -> Result<SocketAddr> {
    use ballista_core::serde::protobuf::scheduler_grpc_server::SchedulerGrpcServer;
    use ballista_core::serde::BallistaCodec;
    use ballista_core::utils::{create_grpc_server, GrpcServerConfig};
    use ballista_scheduler::cluster::BallistaCluster;
    use ballista_scheduler::config::SchedulerConfig;
    use ballista_scheduler::metrics::default_metrics_collector;
    use ballista_scheduler::scheduler_server::SchedulerServer;
    use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};

    let state = cluster_state(local);
    let codec = BallistaCodec::new(
        state.config().ballista_logical_extension_codec(),
        state.config().ballista_physical_extension_codec(),
    );
    let config = state.config().clone();
    let max_message = config.ballista_grpc_client_max_message_size();
    let sessions = state.clone();
    let listener = tokio::net::TcpListener::bind(bind).await?;
    let addr = listener.local_addr()?;
    // A job's session: this scheduler's quarry session with the settings
    // the client sent (`SET datafusion.execution.target_partitions = 8`).
    let cluster = BallistaCluster::new_memory(
        addr.to_string(),
        Arc::new(move |client: datafusion::prelude::SessionConfig| {
            let mut config = sessions.config().clone();
            *config.options_mut() = client.options().as_ref().clone();
            Ok(reconfigured(sessions.clone(), config))
        }),
        Arc::new(move || config.clone()),
    );
    let mut server: SchedulerServer<LogicalPlanNode, PhysicalPlanNode> = SchedulerServer::new(
        addr.to_string(),
        cluster,
        codec,
        Arc::new(SchedulerConfig {
            executor_timeout_seconds: executor_timeout.as_secs().max(2),
            expire_dead_executor_interval_seconds: (executor_timeout.as_secs() / 4).max(1),
            no_executors_grace_period_seconds: executor_timeout.as_secs().max(2),
            ..SchedulerConfig::default()
                .with_scheduler_policy(ballista_core::config::TaskSchedulingPolicy::PullStaged)
        }),
        default_metrics_collector().map_err(to_df)?,
    );
    server.init().await.map_err(to_df)?;
    let grpc = SchedulerGrpcServer::new(server)
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message);
    tokio::spawn(
        create_grpc_server(&GrpcServerConfig::default())
            .add_service(grpc)
            // With each connection's address: an executor that does not say
            // its host is known by it.
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );
    Ok(addr)
}

/// Starts an executor in this process that takes work from the scheduler at
/// `scheduler` (`http://HOST:PORT`), `slots` tasks at once, in `local`'s
/// quarry session (its store, configuration and keys).
pub async fn executor(scheduler: &str, slots: usize, local: &SessionContext) -> Result<()> {
    let state = cluster_state(local);
    let mut tries = 0;
    let client = loop {
        match SchedulerGrpcClient::connect(scheduler.to_string()).await {
            Ok(c) => break c,
            Err(e) if tries >= 50 => {
                return plan_err!("the scheduler at {scheduler} did not answer: {e}")
            }
            Err(_) => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    };
    ballista_executor::new_standalone_executor_from_state(client, slots.max(1), &state)
        .await
        .map_err(to_df)
}

/// How long a scheduler waits for an executor's heartbeat by default.
pub const EXECUTOR_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// How often an executor process tells the scheduler it is alive.
const HEARTBEAT_SECONDS: u64 = 2;

/// Where an executor process listens and whom it works for.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The scheduler's host and port.
    pub scheduler: (String, u16),
    /// The address to listen on.
    pub bind_host: String,
    /// The host name the scheduler and the other executors reach this one
    /// by (default: the bind address).
    pub external_host: Option<String>,
    /// The port other executors fetch this one's results from (Arrow Flight).
    pub port: u16,
    /// The port of its gRPC service.
    pub grpc_port: u16,
    /// Tasks run at once.
    pub slots: usize,
    /// Where intermediate results are written (default: a temporary folder).
    pub work_dir: Option<String>,
}

/// Runs an executor process until it is stopped (Ctrl-C or a signal): it
/// registers with the scheduler, takes tasks, and runs quarry's calls in
/// `local`'s quarry session (this machine's store, configuration and keys).
pub async fn executor_process(opts: ExecutorOptions, local: &SessionContext) -> Result<()> {
    use ballista_core::registry::BallistaFunctionRegistry;
    use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
    let state = cluster_state(local);
    let config = state.config().clone();
    let runtime = state.runtime_env().clone();
    let process = ExecutorProcessConfig {
        external_host: opts.external_host.or_else(|| {
            (!["0.0.0.0", "::"].contains(&opts.bind_host.as_str())).then(|| opts.bind_host.clone())
        }),
        bind_host: opts.bind_host,
        port: opts.port,
        grpc_port: opts.grpc_port,
        scheduler_host: opts.scheduler.0,
        scheduler_port: opts.scheduler.1,
        scheduler_connect_timeout_seconds: 30,
        vcores: opts.slots.max(1),
        task_scheduling_policy: ballista_core::config::TaskSchedulingPolicy::PullStaged,
        work_dir: opts.work_dir,
        print_thread_info: false,
        executor_heartbeat_interval_seconds: HEARTBEAT_SECONDS,
        override_function_registry: Some(Arc::new(BallistaFunctionRegistry::from(&state))),
        override_config_producer: Some(Arc::new(move || config.clone())),
        override_runtime_producer: Some(Arc::new(move |_| Ok(runtime.clone()))),
        override_logical_codec: Some(state.config().ballista_logical_extension_codec()),
        override_physical_codec: Some(state.config().ballista_physical_extension_codec()),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(process))
        .await
        .map_err(to_df)
}

/// A scheduler and `executors` executors of `slots` task slots each in this
/// process (for tests and one machine): the URL a [`client`] connects to.
pub async fn standalone(local: &SessionContext, executors: usize, slots: usize) -> Result<String> {
    let addr = scheduler(
        "127.0.0.1:0".parse().expect("an address"),
        EXECUTOR_TIMEOUT,
        local,
    )
    .await?;
    let http = format!("http://127.0.0.1:{}", addr.port());
    for _ in 0..executors.max(1) {
        executor(&http, slots, local).await?;
    }
    Ok(format!("df://127.0.0.1:{}", addr.port()))
}

fn to_df(e: ballista_core::error::BallistaError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_round_trips_and_is_not_protobuf() {
        let wire = CallWire {
            name: "documents".into(),
            args: encode_args(&[
                ScalarValue::Utf8(Some("s3://b/p/".into())),
                ScalarValue::Int64(Some(3)),
                ScalarValue::Utf8(None),
            ])
            .unwrap(),
            projection: Some(vec![0, 2]),
        };
        let mut buf = vec![];
        write_wire(&wire, &mut buf).unwrap();
        assert_eq!(buf[0], 0);
        let back = read_wire(&buf).unwrap().unwrap();
        assert_eq!(back.name, "documents");
        assert_eq!(back.projection, Some(vec![0, 2]));
        assert_eq!(
            decode_args(&back.args).unwrap(),
            vec![
                ScalarValue::Utf8(Some("s3://b/p/".into())),
                ScalarValue::Int64(Some(3)),
                ScalarValue::Utf8(None),
            ]
        );
        assert!(read_wire(b"\x0a\x03abc").is_none());
    }
}
