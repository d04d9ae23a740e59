//! Running SQL text (several statements, `;`-separated) and the interactive
//! shell: line editing, history, multi-line statements ending in `;`, and
//! backslash commands to list and describe tables.

use std::io::Write;

use datafusion::arrow::array::RecordBatch;
use datafusion::error::Result;
use datafusion::execution::context::SessionContext;
use datafusion::sql::parser::DFParser;
use rustyline::error::ReadlineError;

use crate::output::{write, Format};

/// Runs every statement in `sql` in order, printing each result.
pub async fn run_sql(
    ctx: &SessionContext,
    sql: &str,
    format: Format,
    out: &mut dyn Write,
) -> Result<()> {
    let statements = DFParser::parse_sql(sql)?;
    for stmt in statements {
        crate::session::begin_statement(ctx);
        let plan = ctx.state().statement_to_plan(stmt).await?;
        let df = ctx.execute_logical_plan(plan).await?;
        let schema = std::sync::Arc::new(df.schema().as_arrow().clone());
        let batches: Result<Vec<RecordBatch>> = df.collect().await;
        // Ends the progress line before the table is printed.
        crate::session::begin_statement(ctx);
        let batches = batches?;
        write(out, schema, &batches, format)?;
    }
    Ok(())
}

const HELP: &str =
    "\\d            list every table function and table, each with a line saying what it gives
\\d NAME       how to call a table function and its columns, or a table's columns (e.g. \\d ask)
\\f FORMAT     switch output: table, csv or json
\\q            quit (or Ctrl-D)
Statements end with ';' and may span lines.";

/// A backslash command's SQL statements, or `None` when it is not one we
/// know. `\d` lists every table function (from `catalog()`) and every table
/// the session has, each with its line; `\d NAME` gives a table
/// function's call and line, then its columns when it plans without files,
/// or a table's columns.
fn command_sql(cmd: &str) -> Option<Vec<String>> {
    let mut parts = cmd.split_whitespace();
    match (parts.next()?, parts.next()) {
        ("\\d", None) => Some(vec![
            "SELECT * FROM (SELECT name, kind, description FROM catalog() WHERE kind = 'table function' \
             UNION ALL \
             SELECT t.table_name, 'table', coalesce(c.description, '') FROM information_schema.tables t \
             LEFT JOIN (SELECT * FROM catalog() WHERE kind = 'table') c ON c.name = t.table_name \
             WHERE t.table_schema = 'public') ORDER BY kind DESC, name"
                .into(),
        ]),
        ("\\d", Some(name)) => {
            let name = name.trim_end_matches(';');
            let table = format!("DESCRIBE {name}");
            Some(match crate::functions::catalog::ENTRIES
                .iter()
                .find(|e| e.name == name && e.kind == "table function")
            {
                Some(e) => {
                    let mut v = vec![format!(
                        "SELECT call, description FROM catalog() WHERE name = '{name}' AND kind = 'table function'"
                    )];
                    if let Some(x) = e.example {
                        v.push(format!("DESCRIBE SELECT * FROM {x}"));
                    }
                    v
                }
                None => vec![table],
            })
        }
        _ => None,
    }
}

/// The interactive shell. Returns when the user quits.
pub async fn repl(ctx: &SessionContext, mut format: Format) -> anyhow::Result<()> {
    let mut rl = rustyline::DefaultEditor::new()?;
    let history =
        std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".quarry_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    println!(
        "quarry {} SQL shell. \\? for help, \\q to quit.",
        env!("CARGO_PKG_VERSION")
    );
    let mut buf = String::new();
    loop {
        let prompt = if buf.is_empty() {
            "quarry> "
        } else {
            "   ...> "
        };
        match rl.readline(prompt) {
            Ok(line) => {
                let trimmed = line.trim();
                if buf.is_empty() && trimmed.starts_with('\\') {
                    let _ = rl.add_history_entry(trimmed);
                    match trimmed {
                        "\\q" | "\\quit" => break,
                        "\\?" | "\\h" | "\\help" => println!("{HELP}"),
                        t if t.starts_with("\\f") => match t.split_whitespace().nth(1) {
                            Some("table") => format = Format::Table,
                            Some("csv") => format = Format::Csv,
                            Some("json") => format = Format::Json,
                            _ => eprintln!("usage: \\f table|csv|json"),
                        },
                        t => match command_sql(t) {
                            Some(stmts) => {
                                for sql in stmts {
                                    report(
                                        run_sql(ctx, &sql, format, &mut std::io::stdout()).await,
                                    );
                                }
                            }
                            None => eprintln!("unknown command {t}; \\? lists the commands"),
                        },
                    }
                    continue;
                }
                buf.push_str(&line);
                buf.push('\n');
                if !trimmed.ends_with(';') {
                    continue;
                }
                let sql = std::mem::take(&mut buf);
                let _ = rl.add_history_entry(sql.trim());
                report(run_sql(ctx, &sql, format, &mut std::io::stdout()).await);
            }
            Err(ReadlineError::Interrupted) => buf.clear(),
            Err(ReadlineError::Eof) => {
                if !buf.trim().is_empty() {
                    let sql = std::mem::take(&mut buf);
                    report(run_sql(ctx, &sql, format, &mut std::io::stdout()).await);
                }
                break;
            }
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    Ok(())
}

fn report(r: Result<()>) {
    if let Err(e) = r {
        eprintln!("error: {}", one_line(&e.to_string()));
    }
}

/// An error message on one line.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
