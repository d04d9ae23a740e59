//! `study_claims(src, protocol)`, `study_claim_support(src, protocol)`,
//! `study_claims_dropped(src, protocol)` and `study_claims_sql(src,
//! protocol)`: claims across the studies of an extraction, from
//! `sql/study_claims.sql` (see `review::study_claims`), `gaps(src,
//! protocol)`, what the corpus does not contain (`sql/gaps.sql`), and
//! `study_claims_read(...)`, the step that reads and checks the reply.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, RecordBatch, StructArray};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Field, Fields, Int64Type, Schema};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::execution::SessionState;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use super::{literal_args, str_arg};
use crate::engine::staged::staged_table;
use crate::review::study_claims::{read, render};
use crate::review::{split_stages, Protocol};
use quarry_udfs::util::string_array;

/// Which of the file's outputs a function gives.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// `study_claims`.
    Claims,
    /// `study_claim_support`.
    Support,
    /// `study_claims_dropped`.
    Dropped,
    /// `gaps`.
    Gaps,
    /// `study_claims_sql`: the rendered text.
    Sql,
}

/// The table functions.
#[derive(Debug)]
pub struct StudyClaimsFn {
    /// Which one.
    pub kind: Kind,
}

impl StudyClaimsFn {
    fn usage(&self) -> &'static str {
        match self.kind {
            Kind::Claims => "study_claims(src, protocol)",
            Kind::Support => "study_claim_support(src, protocol)",
            Kind::Dropped => "study_claims_dropped(src, protocol)",
            Kind::Gaps => "gaps(src, protocol)",
            Kind::Sql => "study_claims_sql(src, protocol)",
        }
    }
}

impl TableFunctionImpl for StudyClaimsFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let usage = self.usage();
        let vals = literal_args(&args)?;
        if vals.len() != 2 {
            return plan_err!(
                "{usage}: takes the extraction's source and protocol file, got {} argument(s)",
                vals.len()
            );
        }
        let Some(src) = str_arg(&vals, 0, usage, "the source")? else {
            return plan_err!("{usage}: the source is missing");
        };
        let Some(path) = str_arg(&vals, 1, usage, "the protocol")? else {
            return plan_err!("{usage}: the protocol is missing");
        };
        let protocol = Protocol::load(Path::new(&path)).or_else(|e| plan_err!("{usage}: {e}"))?;
        if protocol.fields.is_empty() {
            return plan_err!("{usage}: the protocol {path} has no [[fields]]: there is no extraction to compare studies on");
        }
        let output = match self.kind {
            Kind::Claims | Kind::Sql => "claims",
            Kind::Support => "support",
            Kind::Dropped => "dropped",
            Kind::Gaps => "gaps",
        };
        let sql = render(&src, &path, &protocol, output);
        if matches!(self.kind, Kind::Sql) {
            return super::sql_table(sql);
        }
        let Some(state) = args.session().as_any().downcast_ref::<SessionState>() else {
            return plan_err!("{usage}: needs a quarry session");
        };
        staged_table(state, split_stages(&sql)).map_err(|e| e.context(usage))
    }
}

/// `study_claims_read(reply, ok, error, studies, columns)`: one reply's
/// claims, checked (see `review::study_claims::read`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct StudyClaimsRead {
    signature: Signature,
}

impl Default for StudyClaimsRead {
    fn default() -> Self {
        Self {
            signature: Signature::one_of(vec![TypeSignature::Any(5)], Volatility::Immutable),
        }
    }
}

const READ_USAGE: &str = "study_claims_read(reply, ok, error, studies, columns)";

fn numbers() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Int64, true)))
}

fn read_fields() -> Fields {
    let text = |n: &str| Field::new(n, DataType::Utf8, true);
    Fields::from(vec![
        text("row_kind"),
        text("claim_id"),
        text("claim"),
        text("moderator"),
        Field::new("support", numbers(), true),
        Field::new("contradict", numbers(), true),
        text("what"),
        text("detail"),
    ])
}

impl ScalarUDFImpl for StudyClaimsRead {
    fn name(&self) -> &str {
        "study_claims_read"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::List(Arc::new(Field::new(
            "item",
            DataType::Struct(read_fields()),
            true,
        ))))
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let ColumnarValue::Scalar(columns) = &args.args[4] else {
            return plan_err!("{READ_USAGE}: columns must be a constant");
        };
        let columns: Vec<String> = match columns.cast_to(&DataType::Utf8)? {
            ScalarValue::Utf8(Some(c)) => serde_json::from_str(&c)
                .or_else(|e| plan_err!("{READ_USAGE}: columns are not a JSON list: {e}"))?,
            _ => return plan_err!("{READ_USAGE}: columns must be text"),
        };
        let n = args.number_rows;
        let arr = |i: usize| args.args[i].to_array(n);
        let (reply, ok, error, studies) = (arr(0)?, arr(1)?, arr(2)?, arr(3)?);
        let reply = string_array(&reply, "study_claims_read", "reply")?;
        let error = string_array(&error, "study_claims_read", "error")?;
        let ok = datafusion::arrow::compute::cast(&ok, &DataType::Boolean)?;
        let ok = ok.as_boolean();
        let studies = datafusion::arrow::compute::cast(&studies, &numbers())?;
        let studies = studies.as_list::<i32>();
        let mut all = Vec::new();
        let mut offsets = vec![0i32];
        for r in 0..n {
            let known: BTreeSet<i64> = if studies.is_valid(r) {
                let v = studies.value(r);
                v.as_primitive::<Int64Type>().iter().flatten().collect()
            } else {
                BTreeSet::new()
            };
            all.extend(read(
                reply.is_valid(r).then(|| reply.value(r)),
                ok.is_valid(r) && ok.value(r),
                error.is_valid(r).then(|| error.value(r)),
                &known,
                &columns,
            ));
            offsets.push(
                i32::try_from(all.len()).or_else(|_| exec_err!("{READ_USAGE}: too many claims"))?,
            );
        }
        let fields = read_fields();
        let schema = Arc::new(Schema::new(fields.clone()));
        let mut decoder =
            datafusion::arrow::json::ReaderBuilder::new(schema.clone()).build_decoder()?;
        decoder.serialize(&all)?;
        let batch = decoder
            .flush()?
            .unwrap_or_else(|| RecordBatch::new_empty(schema.clone()));
        let values: ArrayRef = Arc::new(StructArray::from(batch));
        let list = ListArray::try_new(
            Arc::new(Field::new("item", DataType::Struct(fields), true)),
            OffsetBuffer::new(offsets.into()),
            values,
            None,
        )?;
        Ok(ColumnarValue::Array(Arc::new(list)))
    }
}
