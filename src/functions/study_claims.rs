//! `study_claims(src, protocol)`, `study_claim_support(src, protocol)`,
//! `study_claims_dropped(src, protocol)` and `study_claims_sql(src,
//! protocol)`: claims across the studies of an extraction, from
//! `sql/study_claims.sql` (see `review::study_claims`), `gaps(src,
//! protocol)`, what the corpus does not contain (`sql/gaps.sql`),
//! `synthesise(src, protocol)`, `synthesis(src, protocol)`,
//! `synthesis_citations(src, protocol)` and `synthesise_sql(src,
//! protocol)`: the write-up (`sql/synthesise.sql`, see
//! `review::synthesis`); and the steps those files call:
//! `study_claims_read(...)`, which reads and checks a claims reply, and
//! `cite_unknown`, `cite_numbers` and `cite_render` (`review::cite`).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, StructArray};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Int64Type};
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
    /// `synthesise`: the write-up's sections.
    Sections,
    /// `synthesis`: the whole write-up, rendered.
    Review,
    /// `synthesis_citations`: the studies it cites.
    Citations,
    /// `synthesise_sql`: the rendered text.
    SynthesiseSql,
    /// `synthesis_coherence`: the coherence passes.
    Coherence,
    /// `synthesis_outline`: the outline used.
    Outline,
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
            Kind::Sections => {
                "synthesise(src, protocol [, 'coherence=all|structure+cut+register'])"
            }
            Kind::Review => "synthesis(src, protocol [, 'coherence=...'])",
            Kind::Citations => "synthesis_citations(src, protocol [, 'coherence=...'])",
            Kind::SynthesiseSql => "synthesise_sql(src, protocol [, 'coherence=...'])",
            Kind::Coherence => "synthesis_coherence(src, protocol, 'coherence=...')",
            Kind::Outline => "synthesis_outline(src, protocol [, 'outline=claims'])",
            Kind::Sql => "study_claims_sql(src, protocol)",
        }
    }
}

impl TableFunctionImpl for StudyClaimsFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let usage = self.usage();
        let vals = literal_args(&args)?;
        let writes = matches!(
            self.kind,
            Kind::Sections
                | Kind::Review
                | Kind::Citations
                | Kind::SynthesiseSql
                | Kind::Coherence
                | Kind::Outline
        );
        if vals.len() < 2 || vals.len() > 2 + usize::from(writes) {
            return plan_err!(
                "{usage}: takes the extraction's source and protocol file{}, got {} argument(s)",
                if writes {
                    " (and optionally options)"
                } else {
                    ""
                },
                vals.len()
            );
        }
        let options = super::parse_options(
            &str_arg(&vals, 2, usage, "options")?.unwrap_or_default(),
            usage,
            &["coherence", "outline"],
        )?;
        let from = match options.get("outline").map(|o| o.trim().to_lowercase()) {
            None => crate::review::synthesis::Outline::Protocol,
            Some(o) if o == "protocol" => crate::review::synthesis::Outline::Protocol,
            Some(o) if o == "claims" => crate::review::synthesis::Outline::Claims,
            Some(o) => {
                return plan_err!("{usage}: outline={o}: the outline is 'protocol' (the protocol's) or 'claims' (a section per claim across studies)")
            }
        };
        let passes =
            crate::review::synthesis::passes(options.get("coherence").map_or("", String::as_str))
                .or_else(|e| plan_err!("{usage}: {e}"))?;
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
        let sql = match self.kind {
            Kind::Claims | Kind::Sql => render(&src, &path, &protocol, "claims"),
            Kind::Support => render(&src, &path, &protocol, "support"),
            Kind::Dropped => render(&src, &path, &protocol, "dropped"),
            Kind::Gaps => render(&src, &path, &protocol, "gaps"),
            Kind::Sections
            | Kind::SynthesiseSql
            | Kind::Review
            | Kind::Citations
            | Kind::Coherence
            | Kind::Outline => {
                let output = match self.kind {
                    Kind::Review => "review",
                    Kind::Citations => "citations",
                    Kind::Coherence => "coherence",
                    Kind::Outline => "outline",
                    _ => "sections",
                };
                crate::review::synthesis::render(&src, &path, &protocol, &passes, from, output)
                    .or_else(|e| plan_err!("{usage}: {e}"))?
            }
        };
        if matches!(self.kind, Kind::Sql | Kind::SynthesiseSql) {
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
        super::struct_lists(&all, offsets, read_fields())
    }
}

/// Which citation step a [`CiteFn`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cite {
    /// `cite_unknown(text, studies)`: the numbers cited that are not studies.
    Unknown,
    /// `cite_numbers(text)`: every number cited, each once.
    Numbers,
    /// `cite_render(text, bib)`: the text with author-year citations and a
    /// reference list (`{text, author_year, note}`).
    Render,
    /// `coherence_refusal(draft, revision)`: why a revision is discarded,
    /// or NULL (`review::coherence::refuse`).
    Refusal,
}

/// The citation steps of `sql/synthesise.sql`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct CiteFn {
    kind: Cite,
    signature: Signature,
}

impl CiteFn {
    /// The step `kind`.
    pub fn new(kind: Cite) -> Self {
        let n = if kind == Cite::Numbers { 1 } else { 2 };
        Self {
            kind,
            signature: Signature::one_of(vec![TypeSignature::Any(n)], Volatility::Immutable),
        }
    }
}

fn rendered_fields() -> Fields {
    Fields::from(vec![
        Field::new("text", DataType::Utf8, true),
        Field::new("author_year", DataType::Boolean, true),
        Field::new("note", DataType::Utf8, true),
    ])
}

/// The studies of a `bib` list (struct of number, authors, year, title,
/// venue).
fn bib_studies(list: &ListArray, row: usize) -> Result<Vec<crate::review::cite::Study>> {
    if list.is_null(row) {
        return Ok(vec![]);
    }
    let v = list.value(row);
    let st = v.as_struct();
    let col = |name: &str| -> Result<ArrayRef> {
        match st.column_by_name(name) {
            Some(c) => Ok(c.clone()),
            None => exec_err!("cite_render: the studies have no field {name}"),
        }
    };
    let number = datafusion::arrow::compute::cast(&col("number")?, &DataType::Int64)?;
    let year = datafusion::arrow::compute::cast(&col("year")?, &DataType::Int64)?;
    let (number, year) = (
        number.as_primitive::<Int64Type>(),
        year.as_primitive::<Int64Type>(),
    );
    let text = |name: &str| -> Result<ArrayRef> {
        Ok(datafusion::arrow::compute::cast(
            &col(name)?,
            &DataType::Utf8,
        )?)
    };
    let (authors, title, venue) = (text("authors")?, text("title")?, text("venue")?);
    let (authors, title, venue) = (
        authors.as_string::<i32>(),
        title.as_string::<i32>(),
        venue.as_string::<i32>(),
    );
    let opt = |a: &datafusion::arrow::array::StringArray, i: usize| {
        a.is_valid(i).then(|| a.value(i).to_string())
    };
    Ok((0..st.len())
        .filter(|&i| number.is_valid(i))
        .map(|i| crate::review::cite::Study {
            number: number.value(i) as usize,
            authors: opt(authors, i),
            year: year.is_valid(i).then(|| year.value(i)),
            title: opt(title, i),
            venue: opt(venue, i),
        })
        .collect())
}

impl ScalarUDFImpl for CiteFn {
    fn name(&self) -> &str {
        match self.kind {
            Cite::Unknown => "cite_unknown",
            Cite::Numbers => "cite_numbers",
            Cite::Render => "cite_render",
            Cite::Refusal => "coherence_refusal",
        }
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Cite::Unknown | Cite::Numbers => numbers(),
            Cite::Render => DataType::Struct(rendered_fields()),
            Cite::Refusal => DataType::Utf8,
        })
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        use crate::review::cite;
        let n = args.number_rows;
        let name = self.name().to_string();
        let text = args.args[0].to_array(n)?;
        let text = string_array(&text, &name, "text")?;
        match self.kind {
            Cite::Unknown | Cite::Numbers => {
                let known = match self.kind {
                    Cite::Unknown => Some(datafusion::arrow::compute::cast(
                        &args.args[1].to_array(n)?,
                        &numbers(),
                    )?),
                    _ => None,
                };
                let mut b = datafusion::arrow::array::ListBuilder::new(
                    datafusion::arrow::array::Int64Builder::new(),
                );
                for r in 0..n {
                    if text.is_null(r) {
                        b.append(true);
                        continue;
                    }
                    let got: Vec<usize> = match &known {
                        Some(k) => {
                            let k = k.as_list::<i32>();
                            let set: BTreeSet<usize> = if k.is_valid(r) {
                                k.value(r)
                                    .as_primitive::<Int64Type>()
                                    .iter()
                                    .flatten()
                                    .map(|v| v as usize)
                                    .collect()
                            } else {
                                BTreeSet::new()
                            };
                            cite::unknown_markers(text.value(r), &set)
                        }
                        None => {
                            let mut seen = Vec::new();
                            for m in cite::markers(text.value(r)) {
                                if !seen.contains(&m.number) {
                                    seen.push(m.number);
                                }
                            }
                            seen
                        }
                    };
                    for v in got {
                        b.values().append_value(v as i64);
                    }
                    b.append(true);
                }
                Ok(ColumnarValue::Array(Arc::new(b.finish())))
            }
            Cite::Refusal => {
                let revision = args.args[1].to_array(n)?;
                let revision = string_array(&revision, &name, "revision")?;
                let out: datafusion::arrow::array::StringArray = (0..n)
                    .map(|r| {
                        if text.is_null(r) || revision.is_null(r) {
                            return Some("no revision to compare".to_string());
                        }
                        crate::review::coherence::refuse(text.value(r), revision.value(r))
                    })
                    .collect();
                Ok(ColumnarValue::Array(Arc::new(out)))
            }
            Cite::Render => {
                let bib = args.args[1].to_array(n)?;
                let Some(bib) = bib.as_list_opt::<i32>() else {
                    return exec_err!("{name}: the studies must be a list of structs");
                };
                let (mut t, mut a, mut note) = (Vec::new(), Vec::new(), Vec::new());
                for r in 0..n {
                    if text.is_null(r) {
                        t.push(None);
                        a.push(None);
                        note.push(None);
                        continue;
                    }
                    let out = cite::render(text.value(r), &bib_studies(bib, r)?);
                    t.push(Some(out.text));
                    a.push(Some(out.author_year));
                    note.push(out.note);
                }
                let arrays: Vec<ArrayRef> = vec![
                    Arc::new(datafusion::arrow::array::StringArray::from(t)),
                    Arc::new(datafusion::arrow::array::BooleanArray::from(a)),
                    Arc::new(datafusion::arrow::array::StringArray::from(note)),
                ];
                Ok(ColumnarValue::Array(Arc::new(StructArray::try_new(
                    rendered_fields(),
                    arrays,
                    None,
                )?)))
            }
        }
    }
}
