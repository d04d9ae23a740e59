//! Running a rendered SQL template in stages: each stage query runs once and
//! is kept in memory as a table the later stages read, then the output query
//! streams. DataFusion inlines a CTE at every place it is used, so without
//! stages the model requests (and the corpus reading) under a CTE would run
//! once per use; here they run once.

use std::sync::Arc;

use datafusion::arrow::array::Array;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::memory::{
    MemoryCatalogProvider, MemoryCatalogProviderList, MemorySchemaProvider,
};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{CatalogProvider, CatalogProviderList, SchemaProvider, TableProvider};
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::MemTable;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::execution::{SessionState, TaskContext};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::physical_plan::{
    collect, execute_stream, ExecutionPlan, SendableRecordBatchStream,
};
use futures::{StreamExt, TryStreamExt};

/// Stack for planning a rendered template (DataFusion's planner recurses).
const PLAN_STACK: usize = 64 << 20;

/// A query split into stages.
#[derive(Debug, Clone)]
pub struct Stages {
    /// `(table name, query)`, run in order.
    pub stages: Vec<(String, String)>,
    /// The query whose rows are the table's.
    pub output: String,
    /// Queries over the stages whose rows are kept in the store once the
    /// stages have run (before the output streams).
    pub keep: Vec<Keep>,
}

/// Rows a staged query keeps in a table of the store: `sql`'s rows, in
/// columns `schema`, in place of the rows `replace` matches (one commit).
#[derive(Debug, Clone)]
pub struct Keep {
    /// The query, over the stages.
    pub sql: String,
    /// The store's table.
    pub table: crate::store::delta::Delta,
    /// Its name, for its first commit.
    pub name: String,
    /// The table's columns (the query's, by position).
    pub schema: SchemaRef,
    /// The rows the query's replace.
    pub replace: datafusion::logical_expr::Expr,
}

impl Keep {
    /// Runs the query and commits its rows.
    async fn run(&self, state: &SessionState, ctx: Arc<TaskContext>) -> Result<()> {
        let plan = physical(state, &self.sql).await?;
        let batches = collect(plan, ctx).await?;
        let batches = batches
            .into_iter()
            .map(|b| crate::tables::conform(b, &self.schema))
            .collect::<Result<Vec<_>>>()?;
        let batch = datafusion::arrow::compute::concat_batches(&self.schema, &batches)?;
        self.table
            .commit_retrying(
                Some(self.replace.clone()),
                batch,
                deltalake::kernel::transaction::CommitProperties::default(),
                &self.name,
            )
            .await
            .map_err(DataFusionError::from)
    }
}

/// A session like `base` with a catalog of its own holding only `calls` (the
/// functions stay), so stage tables never touch the user's catalog. With
/// `preset`, the corpus functions read that window's documents (see
/// [`super::Preset`]).
pub(crate) fn private_state(
    base: &SessionState,
    preset: Option<Arc<super::Preset>>,
) -> Result<(SessionState, Arc<MemorySchemaProvider>)> {
    let opts = base.config_options();
    let (cat, sch) = (
        opts.catalog.default_catalog.clone(),
        opts.catalog.default_schema.clone(),
    );
    let schema = Arc::new(MemorySchemaProvider::new());
    // The trace stays readable from a stage (`reply_problems()` reads it).
    if let Some(s) = base
        .catalog_list()
        .catalog(&cat)
        .and_then(|c| c.schema(&sch))
    {
        // The session's schema answers at once; polling once needs no
        // executor, so this works inside another plan's (flow's stages plan
        // a screening).
        if let Some(Ok(Some(t))) = futures::FutureExt::now_or_never(s.table("calls")) {
            schema.register_table("calls".into(), t)?;
        }
    }
    let catalog = Arc::new(MemoryCatalogProvider::new());
    catalog.register_schema(&sch, schema.clone())?;
    let list = Arc::new(MemoryCatalogProviderList::new());
    list.register_catalog(cat, catalog);
    let mut state = SessionStateBuilder::new_from_existing(base.clone())
        .with_catalog_list(list)
        .build();
    if let Some(p) = preset {
        state.config_mut().set_extension(p);
    }
    // A stage reads what it is handed, never a cluster's part of a corpus.
    state
        .config_mut()
        .set_extension(Arc::new(crate::corpus::PartOf(None)));
    Ok((state, schema))
}

/// Starts `f` on a planning thread with room for DataFusion's recursion,
/// inside the caller's tokio runtime (planning a scan may read a table's
/// log: the store's Delta tables are opened when a query is planned).
fn planner<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<std::thread::JoinHandle<T>> {
    let runtime = tokio::runtime::Handle::try_current().ok();
    std::thread::Builder::new()
        .name("quarry-plan".into())
        .stack_size(PLAN_STACK)
        .spawn(move || {
            let _entered = runtime.as_ref().map(|h| h.enter());
            f()
        })
        .map_err(|e| DataFusionError::Execution(format!("cannot start planning: {e}")))
}

fn stopped() -> DataFusionError {
    DataFusionError::Execution("planning the rendered SQL stopped".into())
}

/// Plans on a planning thread; the caller awaits it without holding an
/// executor thread.
async fn on_big_stack<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = futures::channel::oneshot::channel();
    planner(move || {
        let _ = tx.send(f());
    })?;
    rx.await.map_err(|_| stopped())?
}

/// The logical plan of `sql`.
pub(crate) async fn logical(state: &SessionState, sql: &str) -> Result<LogicalPlan> {
    let (state, sql) = (state.clone(), sql.to_string());
    on_big_stack(move || futures::executor::block_on(state.create_logical_plan(&sql))).await
}

/// The logical plan of `sql`, from synchronous code (a table function
/// being planned): a planning thread of its own plans it, so a plan within
/// a plan (a stage that calls `screen(...)`) never nests one executor in
/// another.
pub(crate) fn logical_blocking(state: &SessionState, sql: &str) -> Result<LogicalPlan> {
    let (state, sql) = (state.clone(), sql.to_string());
    planner(move || futures::executor::block_on(state.create_logical_plan(&sql)))?
        .join()
        .map_err(|_| stopped())?
}

/// The physical plan of `sql`.
pub(crate) async fn physical(state: &SessionState, sql: &str) -> Result<Arc<dyn ExecutionPlan>> {
    let plan = logical(state, sql).await?;
    let state = state.clone();
    on_big_stack(move || futures::executor::block_on(state.create_physical_plan(&plan))).await
}

/// Plans every stage (as empty tables) and each of `outputs`, so their
/// schemas and errors are known at planning; the outputs' schemas.
pub(crate) fn plan_stages(
    base: &SessionState,
    stages: &Stages,
    outputs: &[&str],
) -> Result<Vec<SchemaRef>> {
    let (state, tables) = private_state(base, None)?;
    for (name, sql) in &stages.stages {
        let plan = logical_blocking(&state, sql).map_err(|e| e.context(format!("stage {name}")))?;
        let schema: SchemaRef = Arc::new(plan.schema().as_arrow().clone());
        tables.register_table(
            name.clone(),
            Arc::new(MemTable::try_new(schema, vec![vec![]])?),
        )?;
    }
    outputs
        .iter()
        .map(|sql| {
            let plan = logical_blocking(&state, sql)?;
            Ok(Arc::new(plan.schema().as_arrow().clone()) as SchemaRef)
        })
        .collect()
}

/// Runs every stage in order, each kept as a table of `tables` for the
/// stages after it. A stage named `check` stops the run with its first row.
pub(crate) async fn run_stages(
    state: &SessionState,
    tables: &MemorySchemaProvider,
    stages: &Stages,
    ctx: Arc<TaskContext>,
) -> Result<()> {
    for (name, sql) in &stages.stages {
        let plan = physical(state, sql).await?;
        let schema = plan.schema();
        let batches = collect(plan, ctx.clone())
            .await
            .map_err(|e| e.context(format!("stage {name}")))?;
        if name == "check" {
            if let Some(b) = batches.iter().find(|b| b.num_rows() > 0) {
                let msg = datafusion::arrow::compute::cast(
                    b.column(0),
                    &datafusion::arrow::datatypes::DataType::Utf8,
                )?;
                let msg = msg
                    .as_any()
                    .downcast_ref::<datafusion::arrow::array::StringArray>()
                    .map_or(String::new(), |m| m.value(0).to_string());
                return Err(DataFusionError::Execution(format!(
                    "on_error = stop: {msg}"
                )));
            }
        }
        tables.deregister_table(name)?;
        tables.register_table(
            name.clone(),
            Arc::new(MemTable::try_new(schema, vec![batches])?),
        )?;
    }
    Ok(())
}

/// The table a staged query gives, planned (not run) now so its schema and
/// its errors are known at planning.
pub fn staged_table(base: &SessionState, stages: Stages) -> Result<Arc<dyn TableProvider>> {
    let schema = plan_stages(base, &stages, &[&stages.output])?.remove(0);
    let part = StagedPartition {
        base: base.clone(),
        stages,
        schema: schema.clone(),
    };
    Ok(Arc::new(StreamingTable::try_new(
        schema,
        vec![Arc::new(part)],
    )?))
}

struct StagedPartition {
    base: SessionState,
    stages: Stages,
    schema: SchemaRef,
}

impl std::fmt::Debug for StagedPartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.stages.stages.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("StagedPartition")
            .field("stages", &names)
            .finish()
    }
}

impl PartitionStream for StagedPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (base, stages) = (self.base.clone(), self.stages.clone());
        let run = async move {
            let (state, tables) = private_state(&base, None)?;
            run_stages(&state, &tables, &stages, ctx.clone()).await?;
            for k in &stages.keep {
                k.run(&state, ctx.clone())
                    .await
                    .map_err(|e| e.context(format!("keeping the rows of {}", k.name)))?;
            }
            let plan = physical(&state, &stages.output).await?;
            execute_stream(plan, ctx)
        };
        // The plan made now may type a column differently (Utf8View for
        // Utf8) from the one the table declared at planning: cast to it.
        let declared = self.schema.clone();
        let stream = futures::stream::once(run)
            .try_flatten()
            .map(move |b| b.and_then(|b| crate::tables::conform(b, &declared)))
            .boxed();
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream))
    }
}
