//! The `quarry` command: `quarry sql` runs SQL over document corpora, from
//! `-c`, from `-f FILE.sql`, or in an interactive shell; `quarry kg SRC
//! OUT.ttl` writes the knowledge graph of the baseline tables in a corpus.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use quarry::output::Format;
use quarry::repl::{one_line, repl, run_sql};
use quarry::Settings;

/// mimalloc, as DataFusion's own CLI uses: reading exports and documents
/// makes many small strings, and glibc's allocator spent a quarter of
/// `records(...)`'s time on them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "quarry",
    version,
    about = "A SQL engine for reading document corpora with language models"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run SQL: `-c "SQL"`, `-f FILE.sql`, statements on standard input, or an interactive shell.
    Sql {
        /// SQL to run (several statements separated by ';'); may be repeated.
        #[arg(short = 'c', long = "command")]
        command: Vec<String>,
        /// A file of SQL statements to run.
        #[arg(short = 'f', long = "file")]
        file: Vec<PathBuf>,
        /// How to print results.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Where ingestion results and run tables are kept: a folder or s3://bucket/prefix/.
        #[arg(long, default_value = "./.quarry/", env = "QUARRY_STORE")]
        store: String,
        /// Keep nothing in the store: parse every file again.
        #[arg(long)]
        no_store: bool,
        /// A quarry.toml naming endpoints, models, headers and limits (default: $QUARRY_CONFIG or ./quarry.toml).
        #[arg(long, env = "QUARRY_CONFIG")]
        config: Option<PathBuf>,
        /// Answer model calls from the calls recorded in this store (a folder or s3://...), sending nothing.
        #[arg(long, value_name = "STORE")]
        replay: Option<String>,
        /// With --replay: a request with no recording is a failed call (NULL) instead of an error.
        #[arg(long, requires = "replay")]
        replay_partial: bool,
        /// Send screening/extraction requests that failed in an earlier run again (by default a run
        /// started again over the same store restores their failures, so it finishes with the same tables).
        #[arg(long)]
        retry_failed: bool,
        /// Open the interactive shell even when standard input is not a terminal.
        #[arg(short = 'i', long)]
        interactive: bool,
        /// Run the SQL on a Ballista cluster: the scheduler at df://HOST:PORT plans it and its
        /// executors run it (`quarry scheduler`, `quarry executor`; needs the `cluster` feature).
        #[arg(long, value_name = "df://HOST:PORT")]
        cluster: Option<String>,
    },
    /// A cluster's scheduler: plans the SQL that `quarry sql --cluster` sends and hands its
    /// parts to the executors.
    #[cfg(feature = "cluster")]
    Scheduler {
        /// Where to listen for clients and executors.
        #[arg(long, default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
        /// Seconds without an executor's heartbeat (sent every 2 s) before it is taken for dead and
        /// its tasks run again elsewhere.
        #[arg(long, default_value_t = 30)]
        executor_timeout: u64,
        /// The store the executors share (a folder all of them see, or s3://bucket/prefix/).
        #[arg(long, default_value = "./.quarry/", env = "QUARRY_STORE")]
        store: String,
        /// Keep nothing in the store.
        #[arg(long)]
        no_store: bool,
        /// A quarry.toml (default: $QUARRY_CONFIG or ./quarry.toml).
        #[arg(long, env = "QUARRY_CONFIG")]
        config: Option<PathBuf>,
    },
    /// A cluster's executor: takes parts of plans from the scheduler and runs them here, with
    /// this machine's store, quarry.toml and keys.
    #[cfg(feature = "cluster")]
    Executor {
        /// The scheduler: HOST:PORT.
        #[arg(long, default_value = "127.0.0.1:50050")]
        scheduler: String,
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        bind_host: String,
        /// The host name the scheduler and the other executors reach this one by (default: the bind address).
        #[arg(long)]
        external_host: Option<String>,
        /// The port other executors fetch this one's results from (Arrow Flight).
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// The port of the executor's gRPC service.
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Tasks run at once (default: the cores).
        #[arg(long)]
        slots: Option<usize>,
        /// Where intermediate results are written (default: a temporary folder).
        #[arg(long)]
        work_dir: Option<String>,
        /// The store the executors share (a folder all of them see, or s3://bucket/prefix/).
        #[arg(long, default_value = "./.quarry/", env = "QUARRY_STORE")]
        store: String,
        /// Keep nothing in the store.
        #[arg(long)]
        no_store: bool,
        /// A quarry.toml (default: $QUARRY_CONFIG or ./quarry.toml).
        #[arg(long, env = "QUARRY_CONFIG")]
        config: Option<PathBuf>,
    },
    /// Write the audit report over a store: one self-contained HTML page (no
    /// script, nothing fetched) with what failed counted first.
    Report {
        /// The HTML file to write.
        out: PathBuf,
        /// The store the runs kept their tables in: a folder or s3://bucket/prefix/.
        #[arg(long, default_value = "./.quarry/", env = "QUARRY_STORE")]
        store: String,
        /// The extraction and screening of one protocol: its file (shown as fixed in advance,
        /// with its hash) or its hash (or the start of it). Default: the latest extraction.
        #[arg(long, value_name = "FILE|HASH")]
        protocol: Option<String>,
        /// One `ask` run (its run_id, or the start of it). Default: every one.
        #[arg(long, value_name = "RUN_ID")]
        ask: Option<String>,
        /// One write-up (its synthesis_id, or the start of it). Default: every one.
        #[arg(long, value_name = "SYNTHESIS_ID")]
        synthesis: Option<String>,
        /// Draw the PRISMA flow of these exports (`flow(EXPORTS, FLOW_OPTIONS)`).
        #[arg(long, value_name = "EXPORTS")]
        flow: Option<String>,
        /// flow's options, e.g. 'files=pdfs/, search=search.toml, protocol=protocol.toml'.
        #[arg(long, requires = "flow", default_value = "")]
        flow_options: String,
        /// Draw the calibration of the screening against this filled sample (`calibrate(SCREENING, SAMPLE)`).
        #[arg(long, value_name = "SAMPLE.csv")]
        calibration: Option<String>,
        /// With --calibration: the screening (a table of the store, or a CSV file).
        #[arg(long, requires = "calibration", default_value = "screening")]
        screening: String,
        /// A quarry.toml for the model calls a flow's screening makes (they come from the store's cache when it ran).
        #[arg(long, env = "QUARRY_CONFIG")]
        config: Option<PathBuf>,
        /// Answer a flow's screening from the calls recorded in this store, sending nothing.
        #[arg(long, value_name = "STORE")]
        replay: Option<String>,
    },
    /// Serve the shell's SQL over the Postgres protocol (psql, drivers, BI tools): every table
    /// function, UDF and store table, one session for every client.
    #[cfg(feature = "serve")]
    Serve {
        /// Where to listen. A non-loopback address needs a password.
        #[arg(long, default_value = "127.0.0.1:5432")]
        listen: String,
        /// Where ingestion results and run tables are kept: a folder or s3://bucket/prefix/.
        #[arg(long, default_value = "./.quarry/", env = "QUARRY_STORE")]
        store: String,
        /// Keep nothing in the store: parse every file again.
        #[arg(long)]
        no_store: bool,
        /// A quarry.toml naming endpoints, models, headers and limits (default: $QUARRY_CONFIG or ./quarry.toml).
        #[arg(long, env = "QUARRY_CONFIG")]
        config: Option<PathBuf>,
        /// Answer model calls from the calls recorded in this store, sending nothing.
        #[arg(long, value_name = "STORE")]
        replay: Option<String>,
        /// A file holding the password clients must give (its first line). The password may also
        /// come from $QUARRY_SERVE_PASSWORD; it is never taken on the command line.
        #[arg(long, value_name = "FILE")]
        password_file: Option<PathBuf>,
        /// A PEM certificate chain: connections may then use TLS.
        #[arg(long, requires = "tls_key", value_name = "FILE")]
        tls_cert: Option<PathBuf>,
        /// The certificate's PEM private key.
        #[arg(long, requires = "tls_cert", value_name = "FILE")]
        tls_key: Option<PathBuf>,
        /// Let clients run CREATE TABLE ... AS (saved in the store, never replacing a table) and CREATE VIEW (otherwise only queries run).
        #[arg(long)]
        allow_writes: bool,
    },
    /// Write the baseline-characteristics tables of a corpus (`cohort_tables`) as an RDF
    /// knowledge graph in Turtle, in the Study Cohort Ontology's patterns.
    Kg {
        /// The corpus: a file, a folder, a glob or s3://bucket/prefix/.
        src: String,
        /// The Turtle file to write ("-" for standard output).
        out: PathBuf,
        /// Where ingestion results are kept: a folder or s3://bucket/prefix/.
        #[arg(long, default_value = "./.quarry/", env = "QUARRY_STORE")]
        store: String,
        /// Keep nothing in the store: parse every file again.
        #[arg(long)]
        no_store: bool,
    },
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Report {
            out,
            store,
            protocol,
            ask,
            synthesis,
            flow,
            flow_options,
            calibration,
            screening,
            config,
            replay,
        } => {
            let (protocol_file, protocol) = match protocol {
                Some(p) if std::path::Path::new(&p).is_file() => (Some(PathBuf::from(p)), None),
                p => (None, p),
            };
            let opts = quarry::report::Options {
                protocol,
                protocol_file,
                ask,
                synthesis,
                flow: flow.map(|f| (f, flow_options)),
                calibration: calibration.map(|c| (screening, c)),
            };
            let settings = Settings {
                store: Some(store.clone()),
                config,
                replay,
                replay_partial: false,
                client: None,
                progress: false,
                retry_failed: false,
            };
            let ctx = quarry::session(&settings)?;
            let (html, s) = quarry::report::render(&ctx, &store, &opts)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            std::fs::write(&out, &html)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
            eprintln!(
                "{} document(s) ({} failed), {} value(s) ({} unverified, {} without a quote), {} request(s) ({} failed) -> {} ({} bytes)",
                s.documents,
                s.failed,
                s.values,
                s.unverified,
                s.unquoted,
                s.calls,
                s.failed_calls,
                out.display(),
                html.len()
            );
            Ok(())
        }
        Command::Kg {
            src,
            out,
            store,
            no_store,
        } => {
            let settings = Settings {
                store: (!no_store).then_some(store),
                config: None,
                replay: None,
                replay_partial: false,
                client: None,
                progress: false,
                retry_failed: false,
            };
            let ctx = quarry::session(&settings)?;
            let mut ttl = String::new();
            let (docs, arms, items, skipped) =
                quarry::functions::cohort::write_kg(&ctx, &src, &mut ttl).await?;
            if out.as_os_str() == "-" {
                print!("{ttl}");
            } else {
                std::fs::write(&out, &ttl)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
            }
            eprintln!(
                "{docs} document(s) with tables, {arms} arm(s), {items} data item(s){}",
                if out.as_os_str() == "-" {
                    String::new()
                } else {
                    format!(" -> {}", out.display())
                }
            );
            for s in &skipped {
                eprintln!("  {s}");
            }
            Ok(())
        }
        #[cfg(feature = "serve")]
        Command::Serve {
            listen,
            store,
            no_store,
            config,
            replay,
            password_file,
            tls_cert,
            tls_key,
            allow_writes,
        } => {
            let password = match &password_file {
                Some(f) => {
                    let text = std::fs::read_to_string(f).map_err(|e| {
                        anyhow::anyhow!("cannot read the password file {}: {e}", f.display())
                    })?;
                    let line = text
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .trim_end()
                        .to_string();
                    if line.is_empty() {
                        anyhow::bail!("the password file {} is empty", f.display());
                    }
                    Some(line)
                }
                None => std::env::var("QUARRY_SERVE_PASSWORD")
                    .ok()
                    .filter(|p| !p.is_empty()),
            };
            if let Some(r) = &replay {
                eprintln!("replaying the model calls recorded in {r}: nothing is sent and no key is needed");
            }
            let settings = Settings {
                store: (!no_store).then_some(store),
                config,
                replay,
                replay_partial: false,
                client: None,
                progress: false,
                retry_failed: false,
            };
            let ctx = quarry::session(&settings)?;
            let opts = quarry::serve::ServeOptions {
                listen,
                password,
                tls: tls_cert.zip(tls_key),
                allow_writes,
                store: settings.store.clone(),
            };
            let auth = if opts.password.is_some() {
                "password"
            } else {
                "no password (loopback only)"
            };
            let tls = if opts.tls.is_some() { ", TLS" } else { "" };
            quarry::serve::serve(ctx, opts, |addr| {
                eprintln!("quarry serve: listening on {addr} ({auth}{tls}); connect with psql -h {} -p {}", addr.ip(), addr.port());
            })
            .await
        }
        #[cfg(feature = "cluster")]
        Command::Scheduler {
            bind,
            executor_timeout,
            store,
            no_store,
            config,
        } => {
            let ctx = cluster_session(store, no_store, config)?;
            let addr = quarry::cluster::scheduler(
                bind,
                std::time::Duration::from_secs(executor_timeout),
                &ctx,
            )
            .await?;
            eprintln!("quarry scheduler: listening on {addr}; executors: quarry executor --scheduler {addr}; clients: quarry sql --cluster df://{addr}");
            std::future::pending::<()>().await;
            Ok(())
        }
        #[cfg(feature = "cluster")]
        Command::Executor {
            scheduler,
            bind_host,
            external_host,
            port,
            grpc_port,
            slots,
            work_dir,
            store,
            no_store,
            config,
        } => {
            let ctx = cluster_session(store, no_store, config)?;
            let Some((host, sport)) = scheduler
                .trim_start_matches("http://")
                .rsplit_once(':')
                .and_then(|(h, p)| Some((h.to_string(), p.parse::<u16>().ok()?)))
            else {
                anyhow::bail!("--scheduler takes HOST:PORT, got {scheduler}");
            };
            let slots = slots
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
            eprintln!("quarry executor: taking work from {host}:{sport}, {slots} task(s) at once, results served on {bind_host}:{port}");
            let opts = quarry::cluster::ExecutorOptions {
                scheduler: (host, sport),
                bind_host,
                external_host,
                port,
                grpc_port,
                slots,
                work_dir,
            };
            quarry::cluster::executor_process(opts, &ctx).await?;
            Ok(())
        }
        Command::Sql {
            command,
            file,
            format,
            store,
            no_store,
            config,
            replay,
            replay_partial,
            retry_failed,
            interactive,
            cluster,
        } => {
            if let Some(r) = &replay {
                eprintln!(
                    "replaying the model calls recorded in {r}: nothing is sent and no key is needed{}",
                    if replay_partial { " (requests with no recording fail)" } else { "" }
                );
            }
            let settings = Settings {
                store: (!no_store).then_some(store),
                config,
                replay,
                replay_partial,
                client: None,
                progress: std::io::stderr().is_terminal(),
                retry_failed,
            };
            let ctx = quarry::session(&settings)?;
            let ctx = match cluster {
                None => ctx,
                Some(url) => on_cluster(&url, &ctx).await?,
            };
            let mut out = std::io::stdout().lock();
            if command.is_empty() && file.is_empty() {
                if interactive || std::io::stdin().is_terminal() {
                    drop(out);
                    return repl(&ctx, format).await;
                }
                let mut sql = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut sql)?;
                run_sql(&ctx, &sql, format, &mut out).await?;
                return Ok(());
            }
            for f in &file {
                let sql = std::fs::read_to_string(f)
                    .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", f.display()))?;
                run_sql(&ctx, &sql, format, &mut out).await?;
            }
            for sql in &command {
                run_sql(&ctx, sql, format, &mut out).await?;
            }
            Ok(())
        }
    }
}

/// The session of `quarry sql --cluster URL`.
#[cfg(feature = "cluster")]
async fn on_cluster(
    url: &str,
    local: &datafusion::prelude::SessionContext,
) -> anyhow::Result<datafusion::prelude::SessionContext> {
    Ok(quarry::cluster::client(url, local).await?)
}

#[cfg(not(feature = "cluster"))]
async fn on_cluster(
    _url: &str,
    _local: &datafusion::prelude::SessionContext,
) -> anyhow::Result<datafusion::prelude::SessionContext> {
    anyhow::bail!("this quarry was built without clusters: build it with `cargo build --release --features cluster`")
}

/// A scheduler's or an executor's own quarry session.
#[cfg(feature = "cluster")]
fn cluster_session(
    store: String,
    no_store: bool,
    config: Option<PathBuf>,
) -> anyhow::Result<datafusion::prelude::SessionContext> {
    Ok(quarry::session(&Settings {
        store: (!no_store).then_some(store),
        config,
        ..Settings::default()
    })?)
}

fn main() -> ExitCode {
    let rt = match quarry::process::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let cli = Cli::parse();
    let result = std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || rt.block_on(run(cli)))
        .map(|h| h.join());
    match result {
        Ok(Ok(r)) => report(r),
        _ => {
            eprintln!("error: quarry stopped unexpectedly");
            ExitCode::FAILURE
        }
    }
}

fn report(r: anyhow::Result<()>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", one_line(&e.to_string()));
            ExitCode::FAILURE
        }
    }
}
