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

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::DataFusionError;
use datafusion::logical_expr::{col, lit};

use super::{literal_args, str_arg};
use crate::engine::staged::{staged_table, Keep};
use crate::review::study_claims::{read, render, Source};
use crate::review::synthesis::{passes, Bibliography, Outline, Write};
use crate::review::{split_stages, sql_text, Protocol};
use crate::store::delta::{Delta, DeltaView};
use crate::store::Store;
use crate::tables;
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
    /// `synthesis_claims`: the claims its sections argue, study by study.
    SectionClaims,
}

/// The table functions.
#[derive(Debug)]
pub struct StudyClaimsFn {
    /// Which one.
    pub kind: Kind,
    /// The store: with one, every write-up is kept in its `synthesis_*`
    /// tables.
    pub store: Option<Store>,
}

impl Kind {
    /// The write-up's functions (the others read the claims file).
    fn writes(self) -> bool {
        matches!(
            self,
            Kind::Sections
                | Kind::Review
                | Kind::Citations
                | Kind::SynthesiseSql
                | Kind::Coherence
                | Kind::Outline
                | Kind::SectionClaims
        )
    }
}

impl StudyClaimsFn {
    fn usage(&self) -> &'static str {
        match self.kind {
            Kind::Claims => "study_claims(src, protocol [, extraction options])",
            Kind::Support => "study_claim_support(src, protocol [, extraction options])",
            Kind::Dropped => "study_claims_dropped(src, protocol [, extraction options])",
            Kind::Gaps => "gaps(src, protocol [, extraction options])",
            Kind::Sections => {
                "synthesise(src, protocol [, 'coherence=all|structure+cut+register, outline=protocol|claims|each_claim, bibliography=EXPORTS'])"
            }
            Kind::Review => "synthesis(src, protocol [, options])",
            Kind::Citations => "synthesis_citations(src, protocol [, options])",
            Kind::SynthesiseSql => "synthesise_sql(src, protocol [, options])",
            Kind::Coherence => "synthesis_coherence(src, protocol, 'coherence=...')",
            Kind::Outline => "synthesis_outline(src, protocol [, 'outline=claims|each_claim'])",
            Kind::SectionClaims => "synthesis_claims(src, protocol [, options])",
            Kind::Sql => "study_claims_sql(src, protocol [, extraction options])",
        }
    }
}

/// The options of the studies' functions, split: the write-up's own
/// (`own`, those `allowed`), and the extraction's (`records`, `included`,
/// `all`, and records' `files=`/`recursive=`), which are `extract`'s third
/// argument as given, with the records' options alone.
struct StudyOptions {
    own: std::collections::BTreeMap<String, String>,
    extract: Option<String>,
    records: Option<String>,
}

fn study_options(s: &str, usage: &str, allowed: &[&str]) -> Result<StudyOptions> {
    let (mut own, mut extract, mut records_opts) = (Vec::new(), Vec::new(), Vec::new());
    let mut records = false;
    for item in s.split([',', ';']).map(str::trim).filter(|i| !i.is_empty()) {
        let key = item
            .split_once('=')
            .map_or(item, |(k, _)| k)
            .trim()
            .to_ascii_lowercase();
        match key.as_str() {
            "records" if !item.contains('=') => {
                records = true;
                extract.push(item);
            }
            "included" | "all" if !item.contains('=') => extract.push(item),
            k if super::records::OPTIONS.contains(&k) => {
                extract.push(item);
                records_opts.push(item);
            }
            _ if item.contains('=') && allowed.contains(&key.as_str()) => own.push(item),
            _ => {
                let mut all: Vec<&str> = allowed.to_vec();
                all.extend(["records", "included", "all", "files=", "recursive="]);
                return plan_err!(
                    "{usage}: unknown option '{item}'; options: {} (the last five are the extraction's: 'records, files=DIR, included' for an extraction of reference records)",
                    all.join(", ")
                );
            }
        }
    }
    Ok(StudyOptions {
        own: super::parse_options(&own.join(", "), usage, allowed)?,
        extract: (!extract.is_empty()).then(|| extract.join(", ")),
        records: records.then(|| records_opts.join(", ")),
    })
}

/// The store tables a write-up is kept in, with their columns, and the
/// output of `sql/synthesise.sql` each holds.
fn kept_tables() -> [(&'static str, &'static str, SchemaRef); 6] {
    [
        (
            "synthesis_sections",
            "sections",
            tables::SYNTHESIS_SECTIONS.clone(),
        ),
        (
            "synthesis_review",
            "review",
            tables::SYNTHESIS_REVIEW.clone(),
        ),
        (
            "synthesis_coherence",
            "coherence",
            tables::SYNTHESIS_COHERENCE.clone(),
        ),
        (
            "synthesis_citations",
            "citations",
            tables::SYNTHESIS_CITATIONS.clone(),
        ),
        (
            "synthesis_outline",
            "outline",
            tables::SYNTHESIS_OUTLINE.clone(),
        ),
        (
            "synthesis_claims",
            "claims",
            tables::SYNTHESIS_CLAIMS.clone(),
        ),
    ]
}

/// The store's write-up table `name` (`tables/synthesis/...`).
fn kept_table(store: &Store, name: &str) -> crate::error::Result<Delta> {
    let rel = format!("tables/synthesis/{}", name.trim_start_matches("synthesis_"));
    Delta::new(store, &rel, &format!("the store's {name} table"))
}

/// The store's write-up tables, by name: every write-up made with the
/// store, told apart by `synthesis_id` (the same source, protocol and
/// options make the same id, and replace its rows).
pub fn register(
    ctx: &datafusion::prelude::SessionContext,
    store: &Store,
) -> crate::error::Result<()> {
    for (name, _, schema) in kept_tables() {
        ctx.register_table(
            name,
            Arc::new(DeltaView::new(kept_table(store, name)?, None, schema)),
        )?;
    }
    Ok(())
}

impl TableFunctionImpl for StudyClaimsFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let usage = self.usage();
        let vals = literal_args(&args)?;
        let writes = self.kind.writes();
        if vals.len() < 2 || vals.len() > 3 {
            return plan_err!(
                "{usage}: takes the extraction's source and protocol file, and optionally options, got {} argument(s)",
                vals.len()
            );
        }
        let given = str_arg(&vals, 2, usage, "options")?.unwrap_or_default();
        let allowed: &[&str] = if writes {
            &["coherence", "outline", "bibliography"]
        } else {
            &[]
        };
        let opts = study_options(&given, usage, allowed)?;
        let outline = match opts.own.get("outline").map(|o| o.trim().to_lowercase()) {
            None => Outline::Protocol,
            Some(o) if o == "protocol" => Outline::Protocol,
            Some(o) if o == "claims" => Outline::Claims,
            Some(o) if o == "each_claim" => Outline::EachClaim,
            Some(o) => {
                return plan_err!("{usage}: outline={o}: the outline is 'protocol' (the protocol's), 'claims' (the claims across studies, grouped into sections by the model) or 'each_claim' (a section per claim)")
            }
        };
        let passes = passes(opts.own.get("coherence").map_or("", String::as_str))
            .or_else(|e| plan_err!("{usage}: {e}"))?;
        let bibliography = match (opts.own.get("bibliography"), &opts.records) {
            (Some(_), Some(_)) => {
                return plan_err!("{usage}: bibliography= and 'records' together: an extraction of records takes its references from those records; leave bibliography= out")
            }
            (Some(b), None) if b.trim().is_empty() => {
                return plan_err!("{usage}: bibliography= needs the reference exports' folder or file")
            }
            (Some(b), None) => Bibliography::Exports(b.trim().to_string()),
            (None, Some(r)) => Bibliography::Records(r.clone()),
            (None, None) => Bibliography::Extracted,
        };
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
        // The model the requests go to, and what its context window holds.
        let runtime = args
            .session()
            .config()
            .get_extension::<crate::model::Runtime>();
        let asked = protocol
            .max_output
            .map(|m| u32::try_from(m).unwrap_or(u32::MAX));
        // The output cap as the requests will carry it: the protocol's,
        // else the configuration's, else 1,024, within the model's cap.
        let (info, out) = match runtime.as_ref() {
            Some(rt) => {
                let model = protocol
                    .model
                    .clone()
                    .unwrap_or_else(|| rt.config().default_model());
                let out = rt.resolve_max_output(&model, asked);
                (rt.config().registry.info(&model), u64::from(out))
            }
            None => {
                let info = crate::model::config::ModelInfo::unregistered();
                let out = asked.unwrap_or(1024).min(info.max_output).max(1);
                (info, u64::from(out))
            }
        };
        let source = Source {
            src: src.clone(),
            protocol_path: path.clone(),
            extract: opts.extract.clone(),
            line_budget: crate::review::study_claims::line_budget(info.context_window, out),
        };
        let write = Write {
            passes,
            outline,
            bibliography,
        };
        let rendered = |output: &str| -> Result<String> {
            crate::review::synthesis::render(&source, &protocol, &write, output)
                .or_else(|e| plan_err!("{usage}: {e}"))
        };
        let sql = match self.kind {
            Kind::Claims | Kind::Sql => render(&source, &protocol, "claims"),
            Kind::Support => render(&source, &protocol, "support"),
            Kind::Dropped => render(&source, &protocol, "dropped"),
            Kind::Gaps => render(&source, &protocol, "gaps"),
            Kind::Review => rendered("review")?,
            Kind::Citations => rendered("citations")?,
            Kind::Coherence => rendered("coherence")?,
            Kind::Outline => rendered("outline")?,
            Kind::SectionClaims => rendered("claims")?,
            Kind::Sections | Kind::SynthesiseSql => rendered("sections")?,
        };
        if matches!(self.kind, Kind::Sql | Kind::SynthesiseSql) {
            return super::sql_table(sql);
        }
        let Some(state) = args.session().as_any().downcast_ref::<SessionState>() else {
            return plan_err!("{usage}: needs a quarry session");
        };
        let mut stages = split_stages(&sql);
        if let (true, Some(store)) = (writes, &self.store) {
            // Which write-up this is: the source, the protocol, and what
            // changes the text (the options as given, in order).
            let options = given.trim().to_string();
            let hash = protocol.hash();
            let id = format!(
                "{:016x}",
                xxhash_rust::xxh3::xxh3_64(format!("{src}\n{hash}\n{options}").as_bytes())
            );
            for (name, output, schema) in kept_tables() {
                let body = split_stages(&rendered(output)?).output;
                stages.keep.push(Keep {
                    sql: format!(
                        "SELECT '{id}' AS synthesis_id, '{}' AS src, '{hash}' AS protocol_hash, '{}' AS options,\n       \
                         now() AS written_at, o.*\nFROM ({body}) o",
                        sql_text(&src),
                        sql_text(&options)
                    ),
                    table: kept_table(store, name).map_err(DataFusionError::from)?,
                    name: name.to_string(),
                    schema,
                    replace: col("synthesis_id").eq(lit(id.clone())),
                });
            }
        }
        staged_table(state, stages).map_err(|e| e.context(usage))
    }
}

/// `outline_read(reply, ok, error, ids, claims, by_model)`: an outline of
/// the claims across studies, read and checked (see
/// `review::synthesis::read_outline`); `outline_entry(heading, brief,
/// claim_ids)`: a section as an entry of a protocol's outline.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct OutlineFn {
    entry: bool,
    signature: Signature,
}

impl OutlineFn {
    /// `outline_read`, or with `entry` `outline_entry`.
    pub fn new(entry: bool) -> Self {
        let n = if entry { 3 } else { 6 };
        Self {
            entry,
            signature: Signature::one_of(vec![TypeSignature::Any(n)], Volatility::Immutable),
        }
    }
}

fn texts() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

fn outline_fields() -> Fields {
    let text = |n: &str| Field::new(n, DataType::Utf8, true);
    Fields::from(vec![
        Field::new("section", DataType::Int64, true),
        text("heading"),
        text("brief"),
        Field::new("claim_ids", texts(), true),
        Field::new("every_study", DataType::Boolean, true),
        text("note"),
        text("entry"),
    ])
}

/// Row `r` of a list-of-text column, as strings (empty when NULL).
fn text_list(a: &ArrayRef, r: usize, what: &str) -> Result<Vec<String>> {
    let a = datafusion::arrow::compute::cast(a, &texts())?;
    let Some(l) = a.as_list_opt::<i32>() else {
        return exec_err!("{what} must be a list of text");
    };
    if l.is_null(r) {
        return Ok(vec![]);
    }
    let v = l.value(r);
    Ok(v.as_string::<i32>()
        .iter()
        .flatten()
        .map(str::to_string)
        .collect())
}

impl ScalarUDFImpl for OutlineFn {
    fn name(&self) -> &str {
        if self.entry {
            "outline_entry"
        } else {
            "outline_read"
        }
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(if self.entry {
            DataType::Utf8
        } else {
            DataType::List(Arc::new(Field::new(
                "item",
                DataType::Struct(outline_fields()),
                true,
            )))
        })
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let name = self.name();
        let arr = |i: usize| args.args[i].to_array(n);
        let first = arr(0)?;
        let first = string_array(&first, name, "text")?;
        if self.entry {
            let brief = arr(1)?;
            let brief = string_array(&brief, name, "brief")?;
            let ids = arr(2)?;
            let out: datafusion::arrow::array::StringArray = (0..n)
                .map(|r| {
                    if first.is_null(r) {
                        return Ok(None);
                    }
                    let b = if brief.is_null(r) { "" } else { brief.value(r) };
                    Ok(Some(crate::review::synthesis::outline_entry(
                        first.value(r),
                        b,
                        &text_list(&ids, r, "outline_entry: the claim ids")?,
                    )))
                })
                .collect::<Result<_>>()?;
            return Ok(ColumnarValue::Array(Arc::new(out)));
        }
        let (ok, error, ids, claims, by_model) = (arr(1)?, arr(2)?, arr(3)?, arr(4)?, arr(5)?);
        let ok = datafusion::arrow::compute::cast(&ok, &DataType::Boolean)?;
        let ok = ok.as_boolean();
        let by_model = datafusion::arrow::compute::cast(&by_model, &DataType::Boolean)?;
        let by_model = by_model.as_boolean();
        let error = string_array(&error, name, "error")?;
        let mut all = Vec::new();
        let mut offsets = vec![0i32];
        for r in 0..n {
            let got = crate::review::synthesis::read_outline(
                first.is_valid(r).then(|| first.value(r)),
                ok.is_valid(r) && ok.value(r),
                error.is_valid(r).then(|| error.value(r)),
                &text_list(&ids, r, "outline_read: the claim ids")?,
                &text_list(&claims, r, "outline_read: the claims")?,
                by_model.is_valid(r) && by_model.value(r),
            );
            all.extend(got);
            offsets.push(all.len() as i32);
        }
        super::struct_lists(&all, offsets, outline_fields())
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

fn reference_fields() -> Fields {
    Fields::from(vec![
        Field::new("study", DataType::Int64, true),
        Field::new("entry", DataType::Utf8, true),
    ])
}

fn rendered_fields() -> Fields {
    Fields::from(vec![
        Field::new("text", DataType::Utf8, true),
        Field::new("author_year", DataType::Boolean, true),
        Field::new("note", DataType::Utf8, true),
        Field::new(
            "references",
            DataType::List(Arc::new(Field::new(
                "item",
                DataType::Struct(reference_fields()),
                true,
            ))),
            true,
        ),
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
                let mut refs = datafusion::arrow::array::ListBuilder::new(
                    datafusion::arrow::array::StructBuilder::from_fields(reference_fields(), 0),
                )
                .with_field(Arc::new(Field::new(
                    "item",
                    DataType::Struct(reference_fields()),
                    true,
                )));
                for r in 0..n {
                    if text.is_null(r) {
                        t.push(None);
                        a.push(None);
                        note.push(None);
                        refs.append(false);
                        continue;
                    }
                    let out = cite::render(text.value(r), &bib_studies(bib, r)?);
                    for (study, entry) in &out.references {
                        let e = refs.values();
                        e.field_builder::<datafusion::arrow::array::Int64Builder>(0)
                            .expect("study")
                            .append_value(*study as i64);
                        e.field_builder::<datafusion::arrow::array::StringBuilder>(1)
                            .expect("entry")
                            .append_value(entry);
                        e.append(true);
                    }
                    refs.append(true);
                    t.push(Some(out.text));
                    a.push(Some(out.author_year));
                    note.push(out.note);
                }
                let arrays: Vec<ArrayRef> = vec![
                    Arc::new(datafusion::arrow::array::StringArray::from(t)),
                    Arc::new(datafusion::arrow::array::BooleanArray::from(a)),
                    Arc::new(datafusion::arrow::array::StringArray::from(note)),
                    Arc::new(refs.finish()),
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
