//! `embed(text [, 'embedder=lexical|api, embed_model=..., embed_endpoint=..., query=true'])`:
//! a text's vector (L2-normalised `List(Float32)`) by one of the embedders
//! ([`crate::read::embed`]); `embedders()`, the registry. NULL text is a
//! NULL vector; an embedder that cannot answer is an error that says why.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, Float32Builder, ListBuilder};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::async_udf::AsyncScalarUDFImpl;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use super::parse_options;
use crate::model::Runtime;
use crate::read::embed::{Embedder, EMBEDDERS, OPTIONS};

const USAGE: &str = "embed(text [, 'embedder=lexical|api, embed_model=..., embed_query_model=..., embed_endpoint=..., query=false'])";

/// `embed(...)`.
#[derive(Debug)]
pub struct Embed {
    runtime: Arc<Runtime>,
    signature: Signature,
}

impl PartialEq for Embed {
    fn eq(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.runtime, &o.runtime)
    }
}
impl Eq for Embed {}
impl Hash for Embed {
    fn hash<H: Hasher>(&self, h: &mut H) {
        "embed".hash(h);
    }
}

impl Embed {
    /// The function over a session's model layer.
    pub fn new(runtime: Arc<Runtime>) -> Self {
        Self {
            runtime,
            signature: Signature::one_of(
                vec![
                    TypeSignature::Exact(vec![DataType::Utf8]),
                    TypeSignature::Exact(vec![DataType::Utf8, DataType::Utf8]),
                ],
                Volatility::Stable,
            ),
        }
    }
}

fn item() -> Arc<Field> {
    Arc::new(Field::new("item", DataType::Float32, true))
}

impl ScalarUDFImpl for Embed {
    fn name(&self) -> &str {
        "embed"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::List(item()))
    }
    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        exec_err!("embed runs asynchronously")
    }
}

#[async_trait::async_trait]
impl AsyncScalarUDFImpl for Embed {
    fn ideal_batch_size(&self) -> Option<usize> {
        None
    }

    async fn invoke_async_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let texts = quarry_udfs::util::string_array(&arrays[0], "embed", "text")?;
        let opts = match arrays.get(1) {
            Some(a) => Some(quarry_udfs::util::string_array(a, "embed", "options")?),
            None => None,
        };
        // Rows grouped by their options, each group embedded in one go.
        let mut groups: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
        for i in 0..rows {
            if texts.is_null(i) {
                continue;
            }
            let o = opts
                .as_ref()
                .and_then(|a| (!a.is_null(i)).then(|| a.value(i).to_string()))
                .unwrap_or_default();
            groups.entry(o).or_default().push(i);
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; rows];
        let mut allowed = OPTIONS.to_vec();
        allowed.push("query");
        for (o, idx) in groups {
            let map = parse_options(&o, USAGE, &allowed)?;
            let embedder = Embedder::from_options(&map).or_else(|e| exec_err!("{USAGE}: {e}"))?;
            let query = super::parse_bool(map.get("query").map_or("false", String::as_str))
                .unwrap_or(false);
            let batch: Vec<String> = idx.iter().map(|i| texts.value(*i).to_string()).collect();
            let vecs = embedder
                .embed(&self.runtime, &batch, query)
                .await
                .or_else(|e| exec_err!("embed with {}: {e}", embedder.name()))?;
            for (i, v) in idx.into_iter().zip(vecs) {
                out[i] = Some(v);
            }
        }
        let mut b = ListBuilder::new(Float32Builder::new()).with_field(item());
        for v in out {
            match v {
                Some(v) => {
                    b.values().append_slice(&v);
                    b.append(true);
                }
                None => b.append(false),
            }
        }
        Ok(ColumnarValue::Array(Arc::new(b.finish())))
    }
}

/// `embedders()`: name, deterministic, description.
#[derive(Debug)]
pub struct EmbeddersFn;

impl TableFunctionImpl for EmbeddersFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let e = EMBEDDERS;
        let det: ArrayRef = Arc::new(BooleanArray::from(
            e.iter().map(|e| e.deterministic).collect::<Vec<_>>(),
        ));
        super::registry_table(
            &args,
            "embedders",
            vec![
                ("name", super::text_column(e, |e| e.name)),
                ("deterministic", det),
                ("description", super::text_column(e, |e| e.description)),
            ],
        )
    }
}
