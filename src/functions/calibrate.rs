//! Screening calibration against a person: `reference_sample(screening, n,
//! frame [, seed [, out.csv]])` draws a seeded sample of a screening's
//! records for a person to screen blind, and `calibrate(screening,
//! sample.csv)` reads the filled sample back and reports, after
//! `sql/calibrate.sql`, what its frame supports (Wilson intervals, the
//! number of eligible studies lost, sensitivity as deployed and strict,
//! specificity, Cohen's kappa, whether enough eligible studies back a rate,
//! the studies missed) and refuses the rest with the reason.
//!
//! `screening` is a table of the session with `source` (or `document`) and
//! `decision` columns (the store's `screening`, or one made with `CREATE
//! TABLE`), or a CSV file with those columns. The frame (`excluded`,
//! `included`, `unclear`, `all`, or `stratified`: `n` from each decision)
//! is a column of the sample, so it survives the file being opened in a
//! spreadsheet and read back weeks later; the screener's decision is not,
//! so the person screens blind.
//!
//! ```sql
//! SELECT * FROM reference_sample('screening', 60, 'excluded', 1, 'check.csv');
//! -- ... a person fills in human_decision ...
//! SELECT * FROM calibrate('screening', 'check.csv');
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{SchemaProvider, TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, DataFusionError, Result};
use datafusion::datasource::MemTable;
use datafusion::execution::{SessionState, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::physical_plan::{collect, SendableRecordBatchStream};
use sha2::{Digest, Sha256};

use super::{int_arg, literal_args, str_arg};
use crate::engine::staged::{physical, private_state, run_stages};
use crate::review::split_stages;
use crate::tables::conform;

/// The template.
pub const CALIBRATE_SQL: &str = include_str!("../../sql/calibrate.sql");

const SAMPLE_USAGE: &str =
    "reference_sample(screening, n, frame [, seed [, out.csv]]) with frame excluded, included, unclear, all or stratified";
const CALIBRATE_USAGE: &str = "calibrate(screening, sample.csv)";

/// The sample's columns (and the CSV's).
pub static SAMPLE: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        Field::new("sample_id", DataType::Int64, false),
        Field::new("source", DataType::Utf8, false),
        Field::new("frame", DataType::Utf8, false),
        Field::new("frame_size", DataType::Int64, false),
        Field::new("screened", DataType::Int64, false),
        Field::new("seed", DataType::Int64, false),
        Field::new("human_decision", DataType::Utf8, true),
    ]))
});

/// The calibration's columns.
pub static CALIBRATION: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        Field::new("measure", DataType::Utf8, false),
        Field::new("frame", DataType::Utf8, false),
        Field::new("value", DataType::Float64, true),
        Field::new("low", DataType::Float64, true),
        Field::new("high", DataType::Float64, true),
        Field::new("n", DataType::Int64, true),
        Field::new("detail", DataType::Utf8, true),
    ]))
});

/// The frame a decision falls in.
fn frame_of(decision: &str) -> Option<&'static str> {
    match decision {
        "exclude" => Some("excluded"),
        "include" => Some("included"),
        "unclear" => Some("unclear"),
        _ => None,
    }
}

/// The columns a screening names its records by, in order of preference.
const SOURCE_COLUMNS: &[&str] = &["source", "document", "record_id"];

/// Where the screening's decisions come from.
#[derive(Debug, Clone)]
enum Screening {
    /// A table of the session.
    Table(String, Box<SessionState>),
    /// A CSV file.
    Csv(String),
}

impl Screening {
    fn parse(name: &str, args: &TableFunctionArgs, usage: &str) -> Result<Self> {
        if name.to_ascii_lowercase().ends_with(".csv") {
            return Ok(Self::Csv(name.to_string()));
        }
        let Some(state) = args.session().as_any().downcast_ref::<SessionState>() else {
            return plan_err!("{usage}: needs a quarry session");
        };
        Ok(Self::Table(name.to_string(), Box::new(state.clone())))
    }

    /// `(source, decision)` of every screened record, in source order.
    async fn decisions(&self, ctx: Arc<TaskContext>) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        match self {
            Self::Csv(path) => {
                let mut r = csv::Reader::from_path(path).map_err(|e| {
                    DataFusionError::Execution(format!("cannot read the screening {path}: {e}"))
                })?;
                let h: Vec<String> = r
                    .headers()
                    .map_err(|e| DataFusionError::Execution(format!("{path}: {e}")))?
                    .iter()
                    .map(|s| s.trim().to_ascii_lowercase())
                    .collect();
                let col = |names: &[&str]| h.iter().position(|c| names.contains(&c.as_str()));
                let (Some(s), Some(d)) = (col(SOURCE_COLUMNS), col(&["decision"])) else {
                    return Err(DataFusionError::Execution(format!(
                        "the screening {path} needs a source (or document) column and a decision column"
                    )));
                };
                for row in r.records() {
                    let row =
                        row.map_err(|e| DataFusionError::Execution(format!("{path}: {e}")))?;
                    out.push((row[s].to_string(), screened_decision(&row[d])));
                }
            }
            Self::Table(name, state) => {
                let plan = physical(
                    state,
                    &format!("SELECT * FROM \"{}\"", name.replace('"', "\"\"")),
                )
                .await?;
                for b in collect(plan, ctx).await? {
                    let col =
                        |names: &[&str]| names.iter().find_map(|n| b.column_by_name(n).cloned());
                    let (Some(s), Some(d)) = (col(SOURCE_COLUMNS), col(&["decision"])) else {
                        return Err(DataFusionError::Execution(format!(
                            "the screening table {name} needs a source (or document) column and a decision column"
                        )));
                    };
                    let s = cast(&s, &DataType::Utf8)?;
                    let d = cast(&d, &DataType::Utf8)?;
                    let (s, d) = (s.as_string::<i32>(), d.as_string::<i32>());
                    for i in 0..b.num_rows() {
                        if s.is_valid(i) {
                            out.push((
                                s.value(i).to_string(),
                                if d.is_valid(i) {
                                    screened_decision(d.value(i))
                                } else {
                                    String::new()
                                },
                            ));
                        }
                    }
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

/// The seeded order of a record in a sample: the same on every machine.
fn rank(seed: u64, source: &str) -> [u8; 32] {
    Sha256::digest(format!("{seed}\u{1f}{source}").as_bytes()).into()
}

/// Draws the sample: `n` records of the frame (of each decision when
/// stratified), by seeded digest, listed by frame then source.
pub fn draw(
    decisions: &[(String, String)],
    n: usize,
    frame: &str,
    seed: u64,
) -> Result<RecordBatch> {
    let screened = decisions
        .iter()
        .filter(|(_, d)| frame_of(d).is_some())
        .count();
    let frames: Vec<&str> = match frame {
        "stratified" => vec!["excluded", "included", "unclear"],
        f => vec![f],
    };
    let mut rows: Vec<(String, String, usize)> = Vec::new();
    for f in frames {
        let mut pool: Vec<&String> = decisions
            .iter()
            .filter(|(_, d)| f == "all" && frame_of(d).is_some() || frame_of(d) == Some(f))
            .map(|(s, _)| s)
            .collect();
        let size = pool.len();
        pool.sort_by_key(|s| rank(seed, s));
        let mut picked: Vec<&String> = pool.into_iter().take(n).collect();
        picked.sort();
        rows.extend(picked.into_iter().map(|s| (s.clone(), f.to_string(), size)));
    }
    let len = rows.len();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(1..=len as i64)),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.0.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.1.as_str()),
        )),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| r.2 as i64),
        )),
        Arc::new(Int64Array::from_iter_values(std::iter::repeat_n(
            screened as i64,
            len,
        ))),
        Arc::new(Int64Array::from_iter_values(std::iter::repeat_n(
            seed as i64,
            len,
        ))),
        Arc::new(StringArray::from(vec![None::<&str>; len])),
    ];
    Ok(RecordBatch::try_new(SAMPLE.clone(), cols)?)
}

/// Writes a sample as CSV for a person to fill (`human_decision` empty).
fn write_csv(batch: &RecordBatch, path: &str) -> Result<()> {
    let err = |e: &dyn fmt::Display| {
        DataFusionError::Execution(format!("cannot write the sample to {path}: {e}"))
    };
    let mut w = csv::Writer::from_path(path).map_err(|e| err(&e))?;
    let names: Vec<&str> = SAMPLE.fields().iter().map(|f| f.name().as_str()).collect();
    w.write_record(&names).map_err(|e| err(&e))?;
    let text: Vec<ArrayRef> = batch
        .columns()
        .iter()
        .map(|c| cast(c, &DataType::Utf8))
        .collect::<std::result::Result<_, _>>()?;
    for i in 0..batch.num_rows() {
        let row: Vec<&str> = text
            .iter()
            .map(|c| {
                let c = c.as_string::<i32>();
                if c.is_valid(i) {
                    c.value(i)
                } else {
                    ""
                }
            })
            .collect();
        w.write_record(&row).map_err(|e| err(&e))?;
    }
    w.flush().map_err(|e| err(&e))
}

/// A screener's decision as a screening table or CSV holds it, compared
/// without case or surrounding space ("Include " from a spreadsheet is
/// `include`) whichever of the two it was read from.
fn screened_decision(v: &str) -> String {
    v.trim().to_ascii_lowercase()
}

/// A person's decision as written in a spreadsheet.
fn human(v: &str) -> Option<&'static str> {
    match v.trim().to_ascii_lowercase().as_str() {
        "include" | "included" | "yes" | "y" | "1" | "eligible" | "true" => Some("include"),
        "exclude" | "excluded" | "no" | "n" | "0" | "ineligible" | "false" => Some("exclude"),
        _ => None,
    }
}

/// The filled sample joined to the screener's decisions.
fn joined(path: &str, decisions: &[(String, String)]) -> Result<RecordBatch> {
    let e = |m: String| DataFusionError::Execution(m);
    let mut r = csv::Reader::from_path(path)
        .map_err(|x| e(format!("cannot read the sample {path}: {x}")))?;
    let h: Vec<String> = r
        .headers()
        .map_err(|x| e(format!("{path}: {x}")))?
        .iter()
        .map(|s| s.trim().trim_start_matches('\u{feff}').to_ascii_lowercase())
        .collect();
    let col = |n: &str| {
        h.iter().position(|c| c == n).ok_or_else(|| e(format!("the sample {path} has no {n} column: it must be a file reference_sample wrote (columns {})", SAMPLE.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>().join(", "))))
    };
    let (s, f, fs, sc, hd) = (
        col("source")?,
        col("frame")?,
        col("frame_size")?,
        col("screened")?,
        col("human_decision")?,
    );
    let by_source: HashMap<&str, &str> = decisions
        .iter()
        .map(|(s, d)| (s.as_str(), d.as_str()))
        .collect();
    let (mut src, mut frame, mut size, mut dec, mut hum) = (vec![], vec![], vec![], vec![], vec![]);
    let mut screened: Vec<i64> = Vec::new();
    let number = |v: &str, what: &str, line: usize| -> Result<i64> {
        v.trim()
            .parse()
            .map_err(|_| e(format!("{path} line {line}: {what} '{v}' is not a number")))
    };
    for (i, row) in r.records().enumerate() {
        let row = row.map_err(|x| e(format!("{path}: {x}")))?;
        let line = i + 2;
        let source = row[s].to_string();
        let Some(h) = human(&row[hd]) else {
            return Err(e(format!(
                "{path} line {line} ({source}): human_decision is '{}': fill every row with include or exclude, screening blind to the model's decision",
                &row[hd]
            )));
        };
        let Some(d) = by_source.get(source.as_str()) else {
            return Err(e(format!("{path} line {line}: {source} is not in the screening: calibrate against the screening the sample was drawn from")));
        };
        let n = number(&row[fs], "frame_size", line)?;
        screened.push(number(&row[sc], "screened", line)?);
        src.push(source);
        frame.push(row[f].trim().to_string());
        size.push(n);
        dec.push(d.to_string());
        hum.push(h);
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(src)),
        Arc::new(StringArray::from(frame)),
        Arc::new(Int64Array::from(size)),
        Arc::new(Int64Array::from(screened)),
        Arc::new(StringArray::from(dec)),
        Arc::new(StringArray::from(hum)),
    ];
    Ok(RecordBatch::try_from_iter(
        [
            "source",
            "frame",
            "frame_size",
            "screened",
            "decision",
            "human",
        ]
        .into_iter()
        .zip(cols),
    )?)
}

/// `reference_sample`.
#[derive(Debug, Default)]
pub struct ReferenceSample;

impl TableFunctionImpl for ReferenceSample {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let vals = literal_args(&args)?;
        if !(3..=5).contains(&vals.len()) {
            return plan_err!("{SAMPLE_USAGE}: takes 3 to 5 arguments, got {}", vals.len());
        }
        let Some(name) = str_arg(&vals, 0, SAMPLE_USAGE, "the screening")? else {
            return plan_err!("{SAMPLE_USAGE}: the screening is missing");
        };
        let n = int_arg(&vals, 1, SAMPLE_USAGE, "n")?.unwrap_or(0);
        if n == 0 {
            return plan_err!("{SAMPLE_USAGE}: n must be at least 1");
        }
        let frame = str_arg(&vals, 2, SAMPLE_USAGE, "the frame")?.unwrap_or_default();
        if !["excluded", "included", "unclear", "all", "stratified"].contains(&frame.as_str()) {
            return plan_err!("{SAMPLE_USAGE}: unknown frame '{frame}'");
        }
        let seed = int_arg(&vals, 3, SAMPLE_USAGE, "the seed")?.unwrap_or(1) as u64;
        let out = str_arg(&vals, 4, SAMPLE_USAGE, "the output file")?;
        let screening = Screening::parse(&name, &args, SAMPLE_USAGE)?;
        let job = Job::Sample {
            screening,
            n,
            frame,
            seed,
            out,
        };
        Ok(Arc::new(StreamingTable::try_new(
            SAMPLE.clone(),
            vec![Arc::new(job)],
        )?))
    }
}

/// `calibrate`.
#[derive(Debug, Default)]
pub struct Calibrate;

impl TableFunctionImpl for Calibrate {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let vals = literal_args(&args)?;
        if vals.len() != 2 {
            return plan_err!("{CALIBRATE_USAGE}: takes 2 arguments, got {}", vals.len());
        }
        let Some(name) = str_arg(&vals, 0, CALIBRATE_USAGE, "the screening")? else {
            return plan_err!("{CALIBRATE_USAGE}: the screening is missing");
        };
        let Some(sample) = str_arg(&vals, 1, CALIBRATE_USAGE, "the sample")? else {
            return plan_err!("{CALIBRATE_USAGE}: the sample file is missing");
        };
        let Some(state) = args.session().as_any().downcast_ref::<SessionState>() else {
            return plan_err!("{CALIBRATE_USAGE}: needs a quarry session");
        };
        let screening = Screening::parse(&name, &args, CALIBRATE_USAGE)?;
        let job = Job::Calibrate {
            screening,
            sample,
            base: Box::new(state.clone()),
        };
        Ok(Arc::new(StreamingTable::try_new(
            CALIBRATION.clone(),
            vec![Arc::new(job)],
        )?))
    }
}

enum Job {
    Sample {
        screening: Screening,
        n: usize,
        frame: String,
        seed: u64,
        out: Option<String>,
    },
    Calibrate {
        screening: Screening,
        sample: String,
        base: Box<SessionState>,
    },
}

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Job::Sample { frame, n, .. } => write!(f, "reference_sample({n}, {frame})"),
            Job::Calibrate { sample, .. } => write!(f, "calibrate({sample})"),
        }
    }
}

impl PartitionStream for Job {
    fn schema(&self) -> &SchemaRef {
        match self {
            Job::Sample { .. } => &SAMPLE,
            Job::Calibrate { .. } => &CALIBRATION,
        }
    }

    fn execute(&self, ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let schema = self.schema().clone();
        let fut: futures::future::BoxFuture<'static, Result<Vec<RecordBatch>>> = match self {
            Job::Sample {
                screening,
                n,
                frame,
                seed,
                out,
            } => {
                let (screening, n, frame, seed, out) =
                    (screening.clone(), *n, frame.clone(), *seed, out.clone());
                Box::pin(async move {
                    let d = screening.decisions(ctx).await?;
                    let b = draw(&d, n, &frame, seed)?;
                    if let Some(path) = out {
                        write_csv(&b, &path)?;
                    }
                    Ok(vec![b])
                })
            }
            Job::Calibrate {
                screening,
                sample,
                base,
            } => {
                let (screening, sample, base) = (screening.clone(), sample.clone(), base.clone());
                let declared = schema.clone();
                Box::pin(async move {
                    let d = screening.decisions(ctx.clone()).await?;
                    let rows = joined(&sample, &d)?;
                    let (state, tables) = private_state(&base, None)?;
                    tables.register_table(
                        "sample".into(),
                        Arc::new(MemTable::try_new(rows.schema(), vec![vec![rows]])?),
                    )?;
                    let stages = split_stages(CALIBRATE_SQL);
                    run_stages(&state, &tables, &stages, ctx.clone()).await?;
                    let plan = physical(&state, &stages.output).await?;
                    collect(plan, ctx)
                        .await?
                        .into_iter()
                        .map(|b| conform(b, &declared))
                        .collect()
                })
            }
        };
        let stream = futures::stream::once(fut)
            .map(|r| match r {
                Ok(bs) => futures::stream::iter(bs.into_iter().map(Ok).collect::<Vec<_>>()),
                Err(e) => futures::stream::iter(vec![Err(e)]),
            })
            .flatten();
        Box::pin(RecordBatchStreamAdapter::new(schema, stream))
    }
}

use futures::StreamExt;
