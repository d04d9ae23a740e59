//! Builds the DataFusion session: configuration, quarry's functions (pure
//! ones from `quarry-udfs`, corpus table functions from `functions/`) and the
//! store.

use std::sync::Arc;

use datafusion::execution::context::SessionContext;
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionConfig;

use crate::error::Result;
use crate::functions::{
    blocks::Blocks, chunks::Chunks, documents::Documents, inventory::Inventory, segment::Segment,
    Env,
};
use crate::store::Store;

/// How a session is set up.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The store location (a folder or `s3://bucket/prefix/`); `None` keeps
    /// nothing between runs.
    pub store: Option<String>,
}

/// A session with every quarry function registered.
pub fn session(settings: &Settings) -> Result<SessionContext> {
    let mut cfg = SessionConfig::new().with_information_schema(true);
    // Files written from Utf8View tables must merge with later Utf8 ones.
    cfg.options_mut().execution.parquet.skip_arrow_metadata = true;
    let ctx = SessionContext::new_with_config(cfg);
    for f in quarry_udfs::scalar_functions() {
        ctx.register_udf(f.as_ref().clone());
    }
    ctx.register_udf(ScalarUDF::from(Segment::default()));
    let env = Env {
        store: settings.store.as_deref().map(Store::open).transpose()?,
    };
    ctx.register_udtf("documents", Arc::new(Documents { env: env.clone() }));
    ctx.register_udtf("inventory", Arc::new(Inventory { env: env.clone() }));
    ctx.register_udtf("blocks", Arc::new(Blocks { env: env.clone() }));
    ctx.register_udtf("chunks", Arc::new(Chunks { env }));
    Ok(ctx)
}
