//! `extract(src, protocol)`, `evidence(src, protocol)` and
//! `extract_sql(src, protocol)`, and `screen(src, protocol)` /
//! `screen_sql(src, protocol)`: the protocol is loaded and validated at
//! planning, `sql/extract.sql` (or `sql/screen.sql`) is rendered with its parameters and planned
//! as a view, so the steps a user can read are the steps that run.

use std::path::Path;
use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, Result};
use datafusion::execution::SessionState;

use super::{literal_args, str_arg, Env};
use crate::engine::{endpoint_in_flight, run_salt, run_table, window_docs, Output, Plan, Run};
use crate::model::Runtime;
use crate::review::{
    extraction_prompt, extraction_schema, render_extract, render_screen, screening_prompt,
    screening_schema, split_stages, ExtractOutput, Protocol, Scope,
};
use crate::tables;

/// Which function this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `extract(src, protocol)`.
    Extract,
    /// `evidence(src, protocol)`.
    Evidence,
    /// `extract_sql(src, protocol)`: the rendered SQL, one row.
    Sql,
    /// `screen(src, protocol)`.
    Screen,
    /// `screen_sql(src, protocol)`: the rendered SQL, one row.
    ScreenSql,
}

/// The table function.
#[derive(Debug)]
pub struct ExtractFn {
    /// Which output.
    pub kind: Kind,
    /// The store (ingest cache, results).
    pub env: Env,
}

impl ExtractFn {
    fn usage(&self) -> &'static str {
        match self.kind {
            Kind::Extract => {
                "extract(src, protocol [, 'included' | 'records, files=FOLDER[, included]'])"
            }
            Kind::Evidence => {
                "evidence(src, protocol [, 'included' | 'records, files=FOLDER[, included]'])"
            }
            Kind::Sql => {
                "extract_sql(src, protocol [, 'included' | 'records, files=FOLDER[, included]'])"
            }
            Kind::Screen => "screen(src, protocol [, 'records, files=FOLDER'])",
            Kind::ScreenSql => "screen_sql(src, protocol [, 'records, files=FOLDER'])",
        }
    }
}

impl TableFunctionImpl for ExtractFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let usage = self.usage();
        let vals = literal_args(&args)?;
        let screening = matches!(self.kind, Kind::Screen | Kind::ScreenSql);
        if vals.len() < 2 || vals.len() > 3 {
            return plan_err!(
                "{usage}: takes a source and a protocol file{}, got {} argument(s)",
                if screening {
                    " (and optionally 'records, files=FOLDER')"
                } else {
                    " (and optionally 'included')"
                },
                vals.len()
            );
        }
        let third = str_arg(&vals, 2, usage, "the third argument")?;
        let (scope, records) = third_argument(third.as_deref(), screening, usage)?;
        let Some(src) = str_arg(&vals, 0, usage, "the source")? else {
            return plan_err!("{usage}: the source is missing");
        };
        let Some(path) = str_arg(&vals, 1, usage, "the protocol")? else {
            return plan_err!("{usage}: the protocol is missing");
        };
        let protocol = Protocol::load(Path::new(&path)).or_else(|e| plan_err!("{usage}: {e}"))?;
        if screening && protocol.inclusion.is_empty() && protocol.exclusion.is_empty() {
            return plan_err!(
                "{usage}: the protocol {path} has no inclusion or exclusion criteria to screen by"
            );
        }
        if scope == Scope::Included
            && protocol.inclusion.is_empty()
            && protocol.exclusion.is_empty()
        {
            return plan_err!("{usage}: 'included' needs a protocol with inclusion or exclusion criteria; {path} has none");
        }
        if !screening && protocol.fields.is_empty() {
            return plan_err!("{usage}: the protocol {path} has no [[fields]] to extract");
        }
        if matches!(self.kind, Kind::Sql | Kind::ScreenSql) {
            let sql = if screening {
                render_screen(&src, &protocol)
            } else {
                render_extract(&src, &protocol, ExtractOutput::Extraction, scope)
            };
            return super::sql_table(sql);
        }
        let Some(state) = args.session().as_any().downcast_ref::<SessionState>() else {
            return plan_err!("{usage}: needs a quarry session");
        };
        let runtime = state.config().get_extension::<Runtime>();
        let records = match records {
            Some(raw) => Some(super::records::record_source_from(
                super::source_arg(&vals, usage)?,
                &raw,
                usage,
            )?),
            None => None,
        };
        let run = self.run(&src, &protocol, scope, runtime.as_deref(), records)?;
        run_table(state, run).map_err(|e| e.context(usage))
    }
}

/// The third argument: `'included'` or `'all'` (extraction), and/or
/// `'records'` with records' options (`'records, files=DIR[, included]'`):
/// the source is reference-manager exports, read as their records' files
/// or titles and abstracts.
type Third = (Scope, Option<std::collections::BTreeMap<String, String>>);

fn third_argument(third: Option<&str>, screening: bool, usage: &str) -> Result<Third> {
    let Some(third) = third.map(str::trim) else {
        return Ok((Scope::All, None));
    };
    let mut scope = Scope::All;
    let mut records = false;
    let mut options: Vec<&str> = Vec::new();
    for item in third
        .split([',', ';'])
        .map(str::trim)
        .filter(|i| !i.is_empty())
    {
        match item {
            "records" => records = true,
            "all" => scope = Scope::All,
            "included" if !screening => scope = Scope::Included,
            i if i.contains('=') => options.push(i),
            other => {
                return plan_err!(
                    "{usage}: the third argument is {}'records' (the source is reference-manager exports) with records' options ('records, files=FOLDER'), got '{other}'",
                    if screening { "" } else { "'included' (only what the protocol's screening includes), 'all', or " }
                )
            }
        }
    }
    if !options.is_empty() && !records {
        return plan_err!(
            "{usage}: options ({}) need 'records' first: 'records, files=FOLDER'",
            options.join(", ")
        );
    }
    let raw = if records {
        Some(super::parse_options(
            &options.join(", "),
            usage,
            super::records::OPTIONS,
        )?)
    } else {
        None
    };
    Ok((scope, raw))
}

impl ExtractFn {
    /// The run: the rendered stages and every table it makes (extraction
    /// and evidence, with the screening when it runs first; or screening).
    fn run(
        &self,
        src: &str,
        p: &Protocol,
        scope: Scope,
        rt: Option<&Runtime>,
        records: Option<crate::records::corpus::RecordSource>,
    ) -> Result<Run> {
        let (stages, outputs) = if matches!(self.kind, Kind::Screen | Kind::ScreenSql) {
            let st = split_stages(&render_screen(src, p));
            let o = vec![Output {
                table: "screening",
                sql: st.output.clone(),
                schema: Some(tables::SCREENING.clone()),
            }];
            (st, o)
        } else {
            let st = split_stages(&render_extract(src, p, ExtractOutput::Extraction, scope));
            let ev = split_stages(&render_extract(src, p, ExtractOutput::Evidence, scope)).output;
            let mut o = vec![
                Output {
                    table: "extraction",
                    sql: st.output.clone(),
                    schema: None,
                },
                Output {
                    table: "evidence",
                    sql: ev,
                    schema: Some(tables::EVIDENCE.clone()),
                },
            ];
            if scope == Scope::Included {
                o.push(Output {
                    table: "screening",
                    sql: "SELECT * FROM screened".into(),
                    schema: Some(tables::SCREENING.clone()),
                });
            }
            (st, o)
        };
        // Read as records, which files they are read from decides the rows too.
        let extra = records.as_ref().map_or(String::new(), |r| {
            format!(
                "|records|{:?}|{}",
                r.files.as_ref().map(|f| &f.spec),
                r.recursive
            )
        });
        let salt = run_salt(src, &stages, &outputs, &extra, rt);
        let screen = (
            screening_prompt(p).len() + screening_schema().to_string().len(),
            (p.screen_tokens * 4) as usize,
        );
        // The segmenter as `chunks(...)` in the template builds it (the
        // protocol was validated, so the method parses).
        let extract = crate::segment::Method::parse(&p.segment.method).map(|m| {
            let mut spec = crate::segment::SegmentSpec::new(m, p.segment.max_tokens as usize);
            spec.overlap_tokens = p.segment.overlap_tokens as usize;
            (
                spec,
                extraction_prompt(p).len() + extraction_schema(p).to_string().len(),
            )
        });
        let screening = matches!(self.kind, Kind::Screen | Kind::ScreenSql);
        let plan = Plan {
            screen: (screening || scope == Scope::Included).then_some(screen),
            extract: extract.filter(|_| !screening && scope == Scope::All),
            model: p
                .model
                .clone()
                .or_else(|| rt.map(|rt| rt.config().default_model()))
                .unwrap_or_default(),
            max_output: p.max_output.map(|m| m as u32),
        };
        let in_flight = endpoint_in_flight(rt);
        Ok(Run {
            plan,
            window: window_docs(in_flight),
            source: src.to_string(),
            opts: super::run_options(&p.ingest)?,
            protocol: p.short_hash(),
            salt,
            stages,
            outputs,
            want: usize::from(self.kind == Kind::Evidence),
            store: self.env.store.clone(),
            retry_failed: rt.is_some_and(Runtime::retry_failed),
            records,
            publish: None,
        })
    }
}
