//! `flow(exports [, options])` and `flow_sql(exports [, options])`: the
//! PRISMA 2020 flow of a review's records, from `sql/flow.sql` over
//! `records(exports, options)`. Options are `records`' (`files=`,
//! `recursive=`), `protocol=FILE` (the records are screened by it, and the
//! flow counts what the screening excluded and included), and
//! `search=FILE.toml`, the search description that travels with the flow:
//!
//! ```toml
//! dates = "2026-02-14"
//! limits = "English; 2000 onwards; primary studies only"
//! registration = "PROSPERO CRD42026000000"
//! [databases]
//! PubMed = "(spaced practice[tiab]) AND (retention[tiab])"
//! Scopus = 'TITLE-ABS-KEY("spaced practice" AND retention)'
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, Result};
use datafusion::execution::SessionState;

use super::records::OPTIONS as RECORD_OPTIONS;
use super::{literal_args, parse_options, str_arg};
use crate::engine::staged::staged_table;
use crate::review::{split_stages, sql_text};

/// The template.
pub const FLOW_SQL: &str = include_str!("../../sql/flow.sql");

const USAGE: &str =
    "flow(exports [, 'files=FOLDER, search=search.toml, protocol=protocol.toml, recursive=false'])";

/// A search description (what PRISMA asks a review to report of its search).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Search {
    /// Database name to the query run in it.
    #[serde(default)]
    pub databases: BTreeMap<String, String>,
    /// When the searches were run.
    pub dates: Option<String>,
    /// Limits applied (language, years, designs).
    pub limits: Option<String>,
    /// The protocol's registration.
    pub registration: Option<String>,
}

impl Search {
    /// Reads a search description, naming what is wrong.
    pub fn load(path: &Path) -> std::result::Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the search description {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| {
            format!(
                "the search description {} is not valid (keys: databases, dates, limits, registration): {e}",
                path.display()
            )
        })
    }

    /// Its `search` rows, as SQL selects each followed by `UNION ALL`.
    fn rows_sql(&self) -> String {
        let mut out = String::new();
        let mut row = |step: u32, db: Option<&str>, detail: &str| {
            out.push_str(&format!(
                "SELECT {step} AS step, 'search' AS stage, {} AS database, CAST(NULL AS BIGINT) AS n, '{}' AS detail\n  UNION ALL\n  ",
                db.map_or("CAST(NULL AS VARCHAR)".to_string(), |d| format!("'{}'", sql_text(d))),
                sql_text(detail)
            ));
        };
        for (db, q) in &self.databases {
            row(1, Some(db), &format!("query: {q}"));
        }
        for (k, v) in [
            ("dates", &self.dates),
            ("limits", &self.limits),
            ("registration", &self.registration),
        ] {
            if let Some(v) = v {
                row(2, None, &format!("{k}: {v}"));
            }
        }
        out
    }
}

/// The rendered flow SQL; with a protocol, the records' screening counts
/// too (without one the screening stages count nothing).
pub fn render_flow(
    exports: &str,
    records_opts: &str,
    search: Option<&Search>,
    protocol: Option<&str>,
) -> String {
    let screening = match protocol {
        Some(p) => format!(
            "SELECT source AS record_id, decision, criterion, status AS screen_status FROM screen('{}', '{}', '{}')",
            sql_text(exports),
            sql_text(p),
            sql_text(&format!("records, {records_opts}"))
        ),
        None => "SELECT CAST(NULL AS VARCHAR) AS record_id, CAST(NULL AS VARCHAR) AS decision, CAST(NULL AS VARCHAR) AS criterion, CAST(NULL AS VARCHAR) AS screen_status WHERE false".into(),
    };
    let records = format!(
        "records('{}', '{}')",
        sql_text(exports),
        sql_text(records_opts)
    );
    let search_rows = search.map(Search::rows_sql).unwrap_or_default();
    crate::review::fill(
        FLOW_SQL,
        &[
            ("records", &records),
            ("screening", &screening),
            (
                "has_screening",
                if protocol.is_some() { "true" } else { "false" },
            ),
            ("search_rows", &search_rows),
        ],
    )
}

/// `flow` (`sql = false`) or `flow_sql`.
#[derive(Debug)]
pub struct Flow {
    /// Print the rendered SQL instead of running it.
    pub sql: bool,
}

impl TableFunctionImpl for Flow {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let vals = literal_args(&args)?;
        if vals.is_empty() || vals.len() > 2 {
            return plan_err!("{USAGE}: takes 1 or 2 arguments, got {}", vals.len());
        }
        let Some(exports) = str_arg(&vals, 0, USAGE, "the exports")? else {
            return plan_err!("{USAGE}: the exports are missing");
        };
        let mut allowed: Vec<&str> = RECORD_OPTIONS.to_vec();
        allowed.extend(["search", "protocol"]);
        let raw = parse_options(
            &str_arg(&vals, 1, USAGE, "options")?.unwrap_or_default(),
            USAGE,
            &allowed,
        )?;
        let search = match raw.get("search") {
            Some(p) => Some(Search::load(Path::new(p)).or_else(|e| plan_err!("{USAGE}: {e}"))?),
            None => None,
        };
        let records_opts: Vec<String> = raw
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "search" | "protocol"))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let sql = render_flow(
            &exports,
            &records_opts.join(", "),
            search.as_ref(),
            raw.get("protocol").map(String::as_str),
        );
        if self.sql {
            return super::sql_table(sql);
        }
        let Some(state) = args.session().as_any().downcast_ref::<SessionState>() else {
            return plan_err!("{USAGE}: needs a quarry session");
        };
        staged_table(state, split_stages(&sql)).map_err(|e| e.context(USAGE))
    }
}
