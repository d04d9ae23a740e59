//! `segment(text, method, max_tokens [, overlap_tokens])`: the segmenters per
//! row, for `unnest` over an existing table. The text is taken as paragraphs
//! separated by blank lines; it has no pages or sections.
//!
//! ```sql
//! SELECT document_id, unnest(segment(text, 'sentence', 120)) AS c FROM documents('corpus/');
//! ```
//! NULL text gives NULL; an unknown method or a bad number is a planning error.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, Int32Builder, Int64Builder, ListArray, StringBuilder, StructArray,
};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use super::chunks::method_arg;
use crate::ingest::CharIndex;
use crate::segment::{segment, SegDoc, SegmentSpec};
use crate::tables::segment_struct_fields;
use quarry_udfs::util::string_array;

const USAGE: &str = "segment(text, method, max_tokens [, overlap_tokens])";

/// The `segment` scalar function.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Segment {
    signature: Signature,
}

impl Default for Segment {
    fn default() -> Self {
        Self {
            signature: Signature::one_of(
                vec![TypeSignature::Any(3), TypeSignature::Any(4)],
                Volatility::Immutable,
            ),
        }
    }
}

fn list_type() -> DataType {
    DataType::List(Arc::new(Field::new(
        "item",
        DataType::Struct(segment_struct_fields()),
        true,
    )))
}

fn scalar_int(v: &ColumnarValue, name: &str) -> Result<usize> {
    let ColumnarValue::Scalar(s) = v else {
        return plan_err!("{USAGE}: {name} must be a constant");
    };
    let n = match s.cast_to(&DataType::Int64)? {
        ScalarValue::Int64(Some(n)) => n,
        _ => return plan_err!("{USAGE}: {name} must be a whole number"),
    };
    if n < 0 {
        return plan_err!("{USAGE}: {name} must not be negative, got {n}");
    }
    Ok(n as usize)
}

impl ScalarUDFImpl for Segment {
    fn name(&self) -> &str {
        "segment"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(list_type())
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let method = match &args.args[1] {
            ColumnarValue::Scalar(s) => match s.cast_to(&DataType::Utf8)? {
                ScalarValue::Utf8(Some(m)) => method_arg(&m, USAGE)?,
                _ => return plan_err!("{USAGE}: method must be a string"),
            },
            _ => return plan_err!("{USAGE}: method must be a constant"),
        };
        let mut spec = SegmentSpec::new(method, scalar_int(&args.args[2], "max_tokens")?);
        if let Some(o) = args.args.get(3) {
            spec.overlap_tokens = scalar_int(o, "overlap_tokens")?;
        }
        if let Err(e) = spec.validate() {
            return plan_err!("{USAGE}: {e}");
        }
        let texts = args.args[0].to_array(args.number_rows)?;
        let texts = string_array(&texts, "segment", "text")?;
        let (mut id, mut m, mut t, mut tok, mut cs, mut ce) = (
            Int32Builder::new(),
            StringBuilder::new(),
            StringBuilder::new(),
            Int64Builder::new(),
            Int64Builder::new(),
            Int64Builder::new(),
        );
        let mut offsets = vec![0i32];
        let mut valid = Vec::with_capacity(texts.len());
        let mut n = 0i32;
        for row in texts.iter() {
            if let Some(text) = row {
                let blocks = crate::segment::paragraph_blocks(text);
                let seg = segment(
                    &SegDoc {
                        text,
                        blocks: &blocks,
                    },
                    &spec,
                );
                let ix = CharIndex::new(text);
                for (i, c) in seg.chunks.iter().enumerate() {
                    id.append_value(i as i32);
                    m.append_value(&seg.method);
                    t.append_value(c.text(text));
                    tok.append_value(c.tokens as i64);
                    cs.append_value(ix.char_of(c.start) as i64);
                    ce.append_value(ix.char_of(c.end) as i64);
                    n += 1;
                }
            }
            offsets.push(n);
            valid.push(row.is_some());
        }
        let cols: Vec<ArrayRef> = vec![
            Arc::new(id.finish()),
            Arc::new(m.finish()),
            Arc::new(t.finish()),
            Arc::new(tok.finish()),
            Arc::new(cs.finish()),
            Arc::new(ce.finish()),
        ];
        let structs = StructArray::try_new(segment_struct_fields(), cols, None)?;
        let field = Arc::new(Field::new(
            "item",
            DataType::Struct(segment_struct_fields()),
            true,
        ));
        let list = ListArray::try_new(
            field,
            OffsetBuffer::new(offsets.into()),
            Arc::new(structs),
            Some(valid.into()),
        )?;
        if list.len() != args.number_rows {
            return exec_err!(
                "segment: produced {} rows for {}",
                list.len(),
                args.number_rows
            );
        }
        Ok(ColumnarValue::Array(Arc::new(list)))
    }
}
