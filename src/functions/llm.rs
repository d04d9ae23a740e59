//! `llm(prompt [, options])` and `llm_json(prompt, schema [, options])`:
//! async scalar functions that send one request per non-NULL row, all rows
//! of a batch concurrently (the endpoint's limiter bounds what is in
//! flight), through the runtime's rails, cache and trace. A failed call is
//! NULL (its error is in `calls`); `detail=true` (a literal option) or the
//! names `llm_detail` / `llm_json_detail` return a struct instead.
//!
//! Options (`key=value`, separated by `,` or `;`; a column expression may
//! give them per row): `model`, `max_output`, `temperature`, `system`,
//! `document`, `stage`, `label`, `endpoint`, `api` (`chat`/`responses`),
//! `detail`.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Float64Array, Int64Array, StringArray, StructArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::async_udf::AsyncScalarUDFImpl;
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};
use futures::StreamExt;

use super::{parse_bool, parse_options};
use crate::model::{Api, CallContext, Message, ModelError, Outcome, Request, Runtime};

const OPTIONS: &[&str] = &[
    "resume",
    "model",
    "max_output",
    "temperature",
    "system",
    "document",
    "stage",
    "label",
    "endpoint",
    "api",
    "detail",
];

static DETAIL: LazyLock<Fields> = LazyLock::new(|| {
    Fields::from(vec![
        Field::new("text", DataType::Utf8, true),
        Field::new("ok", DataType::Boolean, false),
        Field::new("error", DataType::Utf8, true),
        Field::new("cached", DataType::Boolean, false),
        Field::new("tokens_in", DataType::Int64, true),
        Field::new("tokens_out", DataType::Int64, true),
        Field::new("usd", DataType::Float64, true),
    ])
});

/// `llm` or `llm_json`.
#[derive(Debug)]
pub struct Llm {
    runtime: Arc<Runtime>,
    json: bool,
    detail: bool,
    signature: Signature,
}

impl PartialEq for Llm {
    fn eq(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.runtime, &o.runtime) && self.json == o.json && self.detail == o.detail
    }
}
impl Eq for Llm {}
impl Hash for Llm {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.json.hash(h);
        self.detail.hash(h);
    }
}

impl Llm {
    /// `llm(prompt [, options])` (`json` false) or `llm_json(prompt, schema
    /// [, options])`; with `detail`, `llm_detail` / `llm_json_detail`, which
    /// always return the struct (for options computed per row).
    pub fn new(runtime: Arc<Runtime>, json: bool, detail: bool) -> Self {
        Self {
            runtime,
            json,
            detail,
            signature: Signature::variadic_any(Volatility::Volatile),
        }
    }

    fn usage(&self) -> &'static str {
        match (self.json, self.detail) {
            (true, false) => "llm_json(prompt, json_schema [, options])",
            (false, false) => "llm(prompt [, options])",
            (true, true) => "llm_json_detail(prompt, json_schema [, options])",
            (false, true) => "llm_detail(prompt [, options])",
        }
    }

    fn options_index(&self) -> usize {
        if self.json {
            2
        } else {
            1
        }
    }
}

/// The per-row request settings.
struct RowOptions {
    map: BTreeMap<String, String>,
}

impl RowOptions {
    fn parse(s: Option<&str>, usage: &str) -> Result<Self> {
        let map = parse_options(s.unwrap_or_default(), usage, OPTIONS)?;
        let r = Self { map };
        r.validate(usage)?;
        Ok(r)
    }

    fn validate(&self, usage: &str) -> Result<()> {
        if let Some(v) = self.map.get("max_output") {
            if v.parse::<u32>().ok().filter(|n| *n > 0).is_none() {
                return plan_err!(
                    "{usage}: max_output must be a positive whole number of tokens, got '{v}'"
                );
            }
        }
        if let Some(v) = self.map.get("temperature") {
            if v.parse::<f64>()
                .ok()
                .filter(|t| (0.0..=2.0).contains(t))
                .is_none()
            {
                return plan_err!("{usage}: temperature must be a number from 0 to 2, got '{v}'");
            }
        }
        if let Some(v) = self.map.get("api") {
            if Api::parse(v).is_none() {
                return plan_err!("{usage}: api must be chat or responses, got '{v}'");
            }
        }
        if let Some(v) = self.map.get("resume") {
            if parse_bool(v).is_none() {
                return plan_err!("{usage}: resume must be true or false, got '{v}'");
            }
        }
        if let Some(v) = self.map.get("detail") {
            if parse_bool(v).is_none() {
                return plan_err!("{usage}: detail must be true or false, got '{v}'");
            }
        }
        Ok(())
    }

    fn detail(&self) -> bool {
        self.map
            .get("detail")
            .and_then(|v| parse_bool(v))
            .unwrap_or(false)
    }
}

fn literal_str(v: Option<&ScalarValue>) -> Option<Option<String>> {
    match v? {
        ScalarValue::Utf8(s) | ScalarValue::Utf8View(s) | ScalarValue::LargeUtf8(s) => {
            Some(s.clone())
        }
        ScalarValue::Null => Some(None),
        _ => None,
    }
}

/// A prompt is messages when it is a JSON array of `{role, content}`.
fn messages_of(prompt: &str, system: Option<&String>) -> Vec<Message> {
    let t = prompt.trim_start();
    let mut msgs = if t.starts_with('[') {
        serde_json::from_str::<Vec<Message>>(t)
            .ok()
            .filter(|m| !m.is_empty())
    } else {
        None
    }
    .unwrap_or_else(|| vec![Message::user(prompt)]);
    if let Some(s) = system {
        if msgs.first().is_none_or(|m| m.role != "system") {
            msgs.insert(0, Message::system(s.clone()));
        }
    }
    msgs
}

fn strings(a: &ArrayRef, rows: usize) -> Result<Vec<Option<String>>> {
    let a = cast(a, &DataType::Utf8)?;
    let a = a.as_string::<i32>();
    Ok((0..rows)
        .map(|i| (!a.is_null(i)).then(|| a.value(i).to_string()))
        .collect())
}

impl ScalarUDFImpl for Llm {
    fn name(&self) -> &str {
        match (self.json, self.detail) {
            (true, false) => "llm_json",
            (false, false) => "llm",
            (true, true) => "llm_json_detail",
            (false, true) => "llm_detail",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let usage = self.usage();
        let n = args.arg_fields.len();
        let (min, max) = if self.json { (2, 3) } else { (1, 2) };
        if n < min || n > max {
            return plan_err!("{usage}: takes {min} or {max} arguments, got {n}");
        }
        let mut detail = self.detail;
        let mut endpoint = None;
        if let Some(Some(opts)) = literal_str(
            args.scalar_arguments
                .get(self.options_index())
                .copied()
                .flatten(),
        ) {
            let o = RowOptions::parse(Some(&opts), usage)?;
            detail |= o.detail();
            endpoint = o.map.get("endpoint").cloned();
        }
        if self.json {
            if let Some(Some(s)) = literal_str(args.scalar_arguments.get(1).copied().flatten()) {
                if let Err(e) = serde_json::from_str::<serde_json::Value>(&s) {
                    return plan_err!("{usage}: json_schema is not valid JSON: {e}");
                }
            }
        }
        // A missing key stops the query here, before any document is read.
        self.runtime
            .check_credentials(endpoint.as_deref())
            .or_else(|e| plan_err!("{usage}: {e}"))?;
        let ty = if detail {
            DataType::Struct(DETAIL.clone())
        } else {
            DataType::Utf8
        };
        Ok(Arc::new(Field::new(self.name(), ty, true)))
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        exec_err!("{} runs asynchronously", self.name())
    }
}

#[async_trait::async_trait]
impl AsyncScalarUDFImpl for Llm {
    fn ideal_batch_size(&self) -> Option<usize> {
        // Slices of a batch are awaited one after another; take it whole.
        None
    }

    async fn invoke_async_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let usage = self.usage();
        let rows = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let prompts = strings(&arrays[0], rows)?;
        let schemas = if self.json {
            Some(strings(&arrays[1], rows)?)
        } else {
            None
        };
        let opts = match arrays.get(self.options_index()) {
            Some(a) => strings(a, rows)?,
            None => vec![None; rows],
        };
        let rt = &self.runtime;
        let default_model = rt.config().default_model();
        let mut requests: Vec<(usize, Request, CallContext)> = Vec::new();
        let mut early: Vec<Option<Outcome>> = vec![None; rows];
        let mut parsed_cache: BTreeMap<Option<String>, RowOptions> = BTreeMap::new();
        for i in 0..rows {
            let Some(prompt) = &prompts[i] else { continue };
            if !parsed_cache.contains_key(&opts[i]) {
                parsed_cache.insert(
                    opts[i].clone(),
                    RowOptions::parse(opts[i].as_deref(), usage)?,
                );
            }
            let o = &parsed_cache[&opts[i]].map;
            let schema = match schemas.as_ref().map(|s| s[i].as_deref()) {
                None => None,
                Some(None) => continue, // a NULL schema is a NULL result
                Some(Some(s)) => match serde_json::from_str::<serde_json::Value>(s) {
                    Ok(v) => Some(v),
                    Err(e) => {
                        early[i] = Some(Outcome::failed(ModelError::Malformed(format!(
                            "json_schema is not valid JSON: {e}"
                        ))));
                        continue;
                    }
                },
            };
            let model = o
                .get("model")
                .cloned()
                .unwrap_or_else(|| default_model.clone());
            let endpoint = o.get("endpoint").cloned();
            let api = match o.get("api") {
                Some(a) => Api::parse(a).unwrap_or_default(),
                None => rt.api_of(endpoint.as_deref())?,
            };
            let req = Request {
                api,
                max_output: rt
                    .resolve_max_output(&model, o.get("max_output").and_then(|v| v.parse().ok())),
                temperature: o
                    .get("temperature")
                    .and_then(|v| v.parse().ok())
                    .or(rt.config().model.temperature),
                messages: messages_of(prompt, o.get("system")),
                model,
                schema,
            };
            let ctx = CallContext {
                document_id: o.get("document").cloned(),
                stage: o
                    .get("stage")
                    .cloned()
                    .unwrap_or_else(|| self.name().to_string()),
                label: o.get("label").cloned(),
                resume: o.get("resume").and_then(|v| parse_bool(v)).unwrap_or(false),
                endpoint,
            };
            requests.push((i, req, ctx));
        }
        // The batch is the plan: refused up front when it alone passes a run ceiling.
        let worst: Option<f64> = requests
            .iter()
            .map(|(_, r, _)| rt.worst_usd(r))
            .sum::<Option<f64>>();
        if rt.rails().used().0 == 0 {
            rt.rails().check_plan(requests.len() as u64, worst)?;
        }
        let fan_out = 4096;
        let mut outcomes: Vec<(usize, Outcome)> = futures::stream::iter(requests)
            .map(|(i, req, ctx)| async move { (i, rt.call(req, &ctx).await) })
            .buffer_unordered(fan_out)
            .collect()
            .await;
        if let Err(e) = rt.flush().await {
            eprintln!("warning: the trace could not be written: {e}");
        }
        for (i, o) in outcomes.drain(..) {
            if rt.replay_strict() {
                if let Some(e @ ModelError::ReplayMiss { .. }) = &o.error {
                    return exec_err!("{usage}: {e}");
                }
            }
            early[i] = Some(o);
        }
        let arr: ArrayRef = match args.return_field.data_type() {
            DataType::Struct(_) => Arc::new(detail_array(&early)?),
            _ => Arc::new(
                early
                    .iter()
                    .map(|o| o.as_ref().filter(|o| o.ok()).and_then(|o| o.text.clone()))
                    .collect::<StringArray>(),
            ),
        };
        Ok(ColumnarValue::Array(arr))
    }
}

fn detail_array(rows: &[Option<Outcome>]) -> Result<StructArray> {
    let cols: Vec<ArrayRef> = vec![
        Arc::new(
            rows.iter()
                .map(|o| o.as_ref().and_then(|o| o.text.clone()))
                .collect::<StringArray>(),
        ),
        Arc::new(
            rows.iter()
                .map(|o| Some(o.as_ref().is_some_and(Outcome::ok)))
                .collect::<BooleanArray>(),
        ),
        Arc::new(
            rows.iter()
                .map(|o| {
                    o.as_ref()
                        .and_then(|o| o.error.as_ref().map(|e| e.to_string()))
                })
                .collect::<StringArray>(),
        ),
        Arc::new(
            rows.iter()
                .map(|o| Some(o.as_ref().is_some_and(|o| o.cached)))
                .collect::<BooleanArray>(),
        ),
        Arc::new(
            rows.iter()
                .map(|o| o.as_ref().and_then(|o| o.tokens_in.map(|t| t as i64)))
                .collect::<Int64Array>(),
        ),
        Arc::new(
            rows.iter()
                .map(|o| o.as_ref().and_then(|o| o.tokens_out.map(|t| t as i64)))
                .collect::<Int64Array>(),
        ),
        Arc::new(
            rows.iter()
                .map(|o| o.as_ref().and_then(|o| o.usd))
                .collect::<Float64Array>(),
        ),
    ];
    let nulls = rows.iter().map(Option::is_some).collect::<Vec<_>>();
    Ok(StructArray::try_new(
        DETAIL.clone(),
        cols,
        Some(nulls.into()),
    )?)
}
