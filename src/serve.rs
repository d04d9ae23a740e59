//! `quarry serve`: the shell's session over the Postgres wire protocol, so
//! psql, a notebook's driver or a BI tool runs the same SQL (every table
//! function, UDF and store table) with the same model calls, rails, cache
//! and trace. One session serves every connection, so the endpoint's
//! limiter and the run ceilings hold across clients.
//!
//! The protocol, the `pg_catalog` tables and the query handlers are
//! `datafusion-postgres`'s; this module adds what a served corpus needs:
//! loopback only unless a password is set (read from the environment or a
//! file, never the command line), TLS when a certificate is given (a bad
//! one stops the server rather than serving in clear), a wrong password
//! refused and logged without the value tried, and the store's tables
//! read-only (statements other than queries refused) unless
//! `--allow-writes` lets `CREATE TABLE ... AS` (saved in the store, see
//! `store::saved`) and `CREATE VIEW` through.

use std::fmt::Debug;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::common::ParamValues;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::Statement;
use datafusion_postgres::datafusion_pg_catalog::pg_catalog::context::EmptyContextProvider;
use datafusion_postgres::datafusion_pg_catalog::pg_catalog::setup_pg_catalog;
use datafusion_postgres::hooks::cursor::CursorStatementHook;
use datafusion_postgres::hooks::set_show::SetShowHook;
use datafusion_postgres::hooks::transactions::TransactionStatementHook;
use datafusion_postgres::hooks::{HookClient, QueryHook};
use datafusion_postgres::pgwire;
use datafusion_postgres::DfSessionService;
use futures::future::{select, Either};
use futures::StreamExt;
use futures::{Sink, SinkExt};
use pgwire::api::auth::{
    finish_authentication, protocol_negotiation, save_startup_parameters_to_metadata,
    DefaultServerParameterProvider, LoginInfo, StartupHandler,
};
use pgwire::api::cancel::CancelHandler;
use pgwire::api::portal::{Portal, PortalExecutionState};
use pgwire::api::query::{send_execution_response, ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::{QueryResponse, Response, SendableRowStream, Tag};
use pgwire::api::store::{Entry, PortalStore};
use pgwire::api::{
    ClientInfo, ClientPortalStore, PgWireConnectionState, PgWireServerHandlers,
    PidSecretKeyGenerator, RandomPidSecretKeyGenerator, DEFAULT_NAME,
};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::cancel::CancelRequest;
use pgwire::messages::extendedquery::Execute;
use pgwire::messages::response::EmptyQueryResponse;
use pgwire::messages::startup::Authentication;
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// How `quarry serve` listens and whom it lets in.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Where to listen (`127.0.0.1:5432`; port 0 picks a free one).
    pub listen: String,
    /// The password every client must give; `None` lets in anyone who can
    /// connect, which is allowed on a loopback address only.
    pub password: Option<String>,
    /// A PEM certificate chain and its PEM private key, for TLS.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Let `CREATE TABLE ... AS` (saved in the store when there is one)
    /// and `CREATE VIEW` (the session's) through; otherwise only queries run.
    pub allow_writes: bool,
    /// The store's location, where `CREATE TABLE ... AS` saves.
    pub store: Option<String>,
}

/// Why the server cannot start, said so the user knows what to do.
fn refuse(msg: impl Into<String>) -> anyhow::Error {
    anyhow::anyhow!(msg.into())
}

/// Serves `ctx` until the process is stopped. `ready` is told the address
/// bound (the port a `:0` listen picked) once connections are accepted.
pub async fn serve(
    ctx: SessionContext,
    opts: ServeOptions,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(&opts.listen)
        .await
        .map_err(|e| refuse(format!("cannot listen on '{}': {e}", opts.listen)))?
        .collect();
    let Some(addr) = addrs.first().copied() else {
        return Err(refuse(format!("'{}' names no address", opts.listen)));
    };
    if !addr.ip().is_loopback() && opts.password.is_none() {
        return Err(refuse(format!(
            "{addr} is not a loopback address: serving there needs a password; set QUARRY_SERVE_PASSWORD or pass --password-file FILE (and --tls-cert/--tls-key so it does not travel in clear)"
        )));
    }
    let tls = match &opts.tls {
        Some((cert, key)) => Some(acceptor(cert, key)?),
        None => None,
    };
    if !addr.ip().is_loopback() && tls.is_none() {
        eprintln!(
            "warning: listening on {addr} without TLS: passwords and results travel in clear; give --tls-cert and --tls-key"
        );
    }
    setup_pg_catalog(&ctx, "datafusion", EmptyContextProvider)
        .map_err(|e| refuse(format!("the Postgres catalog could not be set up: {e}")))?;
    let ctx = Arc::new(ctx);
    let hooks: Vec<Arc<dyn QueryHook>> = vec![
        Arc::new(ReadOnly {
            allow_writes: opts.allow_writes,
            store: match &opts.store {
                Some(loc) => {
                    Some(crate::store::Store::open(loc).map_err(|e| refuse(e.to_string()))?)
                }
                None => None,
            },
        }),
        Arc::new(CursorStatementHook),
        Arc::new(SetShowHook),
        Arc::new(TransactionStatementHook),
    ];
    let stops = Arc::new(Stops::default());
    let handlers = Arc::new(Handlers {
        streamed: Arc::new(Streamed {
            inner: Arc::new(DfSessionService::new_with_hooks(ctx, hooks)),
        }),
        stops: stops.clone(),
        gate: Arc::new(Gate {
            password: opts.password.clone(),
            tls: tls.is_some(),
            params: DefaultServerParameterProvider::default(),
            keys: RandomPidSecretKeyGenerator::default(),
            stops,
        }),
    });
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| refuse(format!("cannot listen on {addr}: {e}")))?;
    let bound = listener.local_addr()?;
    ready(bound);
    loop {
        let (socket, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                eprintln!("quarry serve: a connection could not be accepted: {e}");
                continue;
            }
        };
        let handlers = handlers.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            if let Err(e) = pgwire::tokio::process_socket(socket, tls, handlers).await {
                eprintln!("quarry serve: connection from {peer} ended: {e}");
            }
        });
    }
}

/// The TLS acceptor of a certificate chain and key (PEM), or why not.
fn acceptor(cert: &PathBuf, key: &PathBuf) -> anyhow::Result<TlsAcceptor> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| {
            refuse(format!(
                "the TLS certificate {} cannot be read: {e}",
                cert.display()
            ))
        })?
        .collect::<Result<_, _>>()
        .map_err(|e| {
            refuse(format!(
                "the TLS certificate {} cannot be read: {e}",
                cert.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(refuse(format!(
            "{} holds no PEM certificate",
            cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| refuse(format!("the TLS key {} cannot be read: {e}", key.display())))?;
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| {
            refuse(format!(
                "the TLS certificate and key do not make a server identity: {e}"
            ))
        })?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The handlers of every connection: datafusion-postgres's query handlers
/// over the one session, rows streamed and stoppable, behind quarry's gate.
struct Handlers {
    streamed: Arc<Streamed>,
    stops: Arc<Stops>,
    gate: Arc<Gate>,
}

impl PgWireServerHandlers for Handlers {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        self.streamed.clone()
    }

    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        self.streamed.clone()
    }

    fn startup_handler(&self) -> Arc<impl StartupHandler> {
        self.gate.clone()
    }

    fn cancel_handler(&self) -> Arc<impl CancelHandler> {
        self.stops.clone()
    }
}

/// The connections a client's cancel request (psql's Ctrl-C, a driver's
/// `cancel()`) can name, by process id and secret key. pgwire's own cancel
/// covers planning only; rows are made while they are sent, so the stop
/// must reach the row stream.
#[derive(Default)]
struct Stops {
    by_key: std::sync::Mutex<std::collections::HashMap<CancelKey, Arc<Stop>>>,
}

/// A connection's process id and secret key.
type CancelKey = (i32, Vec<u8>);

/// One connection's stop: a count of cancel requests and a wake-up for
/// the query waiting on it.
#[derive(Default)]
struct Stop {
    asked: AtomicU64,
    wake: Notify,
}

/// Takes a connection's stop out of [`Stops`] when the connection ends.
struct StopGuard {
    stops: Arc<Stops>,
    key: CancelKey,
}

impl Drop for StopGuard {
    fn drop(&mut self) {
        if let Ok(mut m) = self.stops.by_key.lock() {
            m.remove(&self.key);
        }
    }
}

impl Stops {
    /// A new connection's stop, kept in its session until it ends.
    fn register<C: ClientInfo>(self: &Arc<Self>, client: &C) {
        let (pid, key) = client.pid_and_secret_key();
        let key = (pid, key.to_bytes().to_vec());
        let stop = Arc::new(Stop::default());
        if let Ok(mut m) = self.by_key.lock() {
            m.insert(key.clone(), stop.clone());
        }
        client.session_extensions().insert::<Arc<Stop>>(stop);
        client.session_extensions().insert(StopGuard {
            stops: self.clone(),
            key,
        });
    }
}

#[async_trait]
impl CancelHandler for Stops {
    async fn on_cancel_request(&self, request: CancelRequest) {
        let key = (request.pid, request.secret_key.to_bytes().to_vec());
        let stop = self.by_key.lock().ok().and_then(|m| m.get(&key).cloned());
        if let Some(stop) = stop {
            stop.asked.fetch_add(1, Ordering::SeqCst);
            stop.wake.notify_waiters();
        }
    }
}

/// `rows` ending with "canceling statement due to user request" as soon as
/// a cancel request for this connection arrives after the query began
/// (while a row is being made, not only between rows); the query's plan is
/// dropped with the stream.
fn stoppable(stop: Option<Arc<Stop>>, rows: SendableRowStream) -> SendableRowStream {
    let Some(stop) = stop else { return rows };
    let at = stop.asked.load(Ordering::SeqCst);
    let stopped = async move {
        loop {
            let woken = stop.wake.notified();
            if stop.asked.load(Ordering::SeqCst) != at {
                return;
            }
            woken.await;
        }
    };
    let state = (rows, Box::pin(stopped));
    Box::pin(futures::stream::unfold(Some(state), |state| async move {
        let (mut rows, mut stopped) = state?;
        let next = match select(rows.next(), &mut stopped).await {
            Either::Left((row, _)) => Some(row),
            Either::Right(_) => None,
        };
        match next {
            Some(Some(row)) => Some((row, Some((rows, stopped)))),
            Some(None) => None,
            None => Some((Err(PgWireError::QueryCanceled), None)),
        }
    }))
}

/// `responses` with each query's rows made stoppable by the connection's
/// cancel requests.
fn stoppable_all<C: ClientInfo>(client: &C, responses: Vec<Response>) -> Vec<Response> {
    let stop = client
        .session_extensions()
        .get::<Arc<Stop>>()
        .map(|s| (*s).clone());
    responses
        .into_iter()
        .map(|r| match r {
            Response::Query(mut q) => {
                q.data_rows = stoppable(stop.clone(), q.data_rows);
                Response::Query(q)
            }
            other => other,
        })
        .collect()
}

#[async_trait]
impl SimpleQueryHandler for Streamed {
    async fn do_query<C>(&self, client: &mut C, query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let responses = SimpleQueryHandler::do_query(&*self.inner, client, query).await?;
        Ok(stoppable_all(client, responses))
    }
}

/// The extended protocol (what psycopg, JDBC and most drivers use) with
/// rows sent as the query makes them. pgwire's own `Execute` with no row
/// limit gathers every row of the portal before sending the first (its
/// `Portal::fetch`), so a long `extract` would show nothing until it ended
/// and hold its whole result in memory; here a query's rows go out as they
/// come, and a client's cancel request stops it. Everything else (other
/// statements, `Execute` with a row limit, a portal already started) is
/// pgwire's way.
struct Streamed {
    inner: Arc<DfSessionService>,
}

type DfStatement = <DfSessionService as ExtendedQueryHandler>::Statement;

#[async_trait]
impl ExtendedQueryHandler for Streamed {
    type Statement = DfStatement;
    type QueryParser = <DfSessionService as ExtendedQueryHandler>::QueryParser;

    fn query_parser(&self) -> Arc<Self::QueryParser> {
        self.inner.query_parser()
    }

    async fn do_query<C>(
        &self,
        client: &mut C,
        portal: &Portal<Self::Statement>,
        max_rows: usize,
    ) -> PgWireResult<Response>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let response =
            ExtendedQueryHandler::do_query(&*self.inner, client, portal, max_rows).await?;
        Ok(stoppable_all(client, vec![response])
            .pop()
            .unwrap_or(Response::EmptyQuery))
    }

    async fn on_execute<C>(&self, client: &mut C, message: Execute) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let name = message.name.as_deref().unwrap_or(DEFAULT_NAME);
        let portal = match client.portal_store().get_portal(name) {
            Some(Entry::Value(p)) if message.max_rows == 0 => p,
            _ => return self._on_execute(client, message).await,
        };
        let is_query = matches!(portal.statement.statement.1, Some((Statement::Query(_), _)));
        let fresh = matches!(*portal.state().lock().await, PortalExecutionState::Initial);
        if !is_query || !fresh || !matches!(client.state(), PgWireConnectionState::ReadyForQuery) {
            return self._on_execute(client, message).await;
        }
        client.set_state(PgWireConnectionState::QueryInProgress);
        let sent = self.stream_rows(client, &portal).await;
        // The portal is done either way: a second Execute gets no rows.
        portal
            .start(QueryResponse::new(
                Arc::new(vec![]),
                futures::stream::empty(),
            ))
            .await;
        let _ = portal.fetch(0).await;
        sent?;
        client.set_state(PgWireConnectionState::ReadyForQuery);
        Ok(())
    }
}

impl Streamed {
    /// Runs a query portal and sends its rows as they come, then the
    /// command's completion.
    async fn stream_rows<C>(&self, client: &mut C, portal: &Portal<DfStatement>) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = DfStatement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        match ExtendedQueryHandler::do_query(self, client, portal, 0).await? {
            Response::Query(mut q) => {
                let tag = q.command_tag().to_owned();
                let mut rows = 0;
                // `feed` writes into the connection's buffer, which goes
                // out whenever it is full, so rows leave as they are made
                // without a system call each.
                while let Some(row) = q.data_rows().next().await {
                    client.feed(PgWireBackendMessage::DataRow(row?)).await?;
                    rows += 1;
                }
                client
                    .send(PgWireBackendMessage::CommandComplete(
                        Tag::new(&tag).with_rows(rows).into(),
                    ))
                    .await?;
                Ok(())
            }
            Response::Error(e) => Err(PgWireError::UserError(e)),
            Response::Execution(tag) => send_execution_response(client, tag).await,
            Response::EmptyQuery => {
                client
                    .send(PgWireBackendMessage::EmptyQueryResponse(
                        EmptyQueryResponse::new(),
                    ))
                    .await?;
                Ok(())
            }
            _ => Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                "ERROR".into(),
                "0A000".into(),
                "quarry serve: this statement's answer is not served".into(),
            )))),
        }
    }
}

/// The start of a connection: no question on loopback without a password,
/// otherwise the password asked for (cleartext: under TLS when given) and
/// compared; a wrong one is refused and logged with the user and address,
/// never the value tried.
struct Gate {
    password: Option<String>,
    /// A certificate was given: a connection that did not ask for TLS is
    /// refused before any password is asked (as `hostssl` in Postgres),
    /// so a password never travels in clear by a client's mistake.
    tls: bool,
    params: DefaultServerParameterProvider,
    /// Each connection's process id and secret key, which a client's
    /// cancel request (psql's Ctrl-C, a driver's `cancel()`) names.
    keys: RandomPidSecretKeyGenerator,
    stops: Arc<Stops>,
}

impl Gate {
    /// Lets a connection in: its cancel key made and registered (so a
    /// cancel request stops its running query), then the client told
    /// authentication is done.
    async fn admit<C>(&self, client: &mut C) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let (pid, key) = self.keys.generate(client);
        client.set_pid_and_secret_key(pid, key);
        self.stops.register(client);
        finish_authentication(client, &self.params).await
    }
}

/// Compares in time that does not depend on where the values differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[async_trait]
impl StartupHandler for Gate {
    async fn on_startup<C>(
        &self,
        client: &mut C,
        message: PgWireFrontendMessage,
    ) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        match message {
            PgWireFrontendMessage::Startup(ref startup) => {
                if self.tls && !client.is_secure() {
                    eprintln!(
                        "quarry serve: a connection from {} without TLS: refused",
                        client.socket_addr()
                    );
                    return Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                        "FATAL".into(),
                        "28000".into(),
                        "this server takes TLS connections only: connect with sslmode=require (or verify-full with the server's certificate)".into(),
                    ))));
                }
                protocol_negotiation(client, startup).await?;
                save_startup_parameters_to_metadata(client, startup);
                if self.password.is_none() {
                    self.admit(client).await?;
                } else {
                    client.set_state(PgWireConnectionState::AuthenticationInProgress);
                    client
                        .send(PgWireBackendMessage::Authentication(
                            Authentication::CleartextPassword,
                        ))
                        .await?;
                }
            }
            PgWireFrontendMessage::PasswordMessageFamily(pwd) => {
                let Some(expected) = &self.password else {
                    return Ok(());
                };
                let given = pwd.into_password()?;
                let login = LoginInfo::from_client_info(client);
                let user = login.user().unwrap_or_default().to_string();
                if same(given.password.as_bytes(), expected.as_bytes()) {
                    self.admit(client).await?;
                } else {
                    eprintln!(
                        "quarry serve: wrong password for user '{user}' from {}: refused",
                        client.socket_addr()
                    );
                    return Err(PgWireError::InvalidPassword(user));
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Refuses every statement but queries (and the session statements psql
/// and drivers send: SET, SHOW, transactions, cursors), unless writes are
/// allowed, when `CREATE TABLE ... AS` and `CREATE VIEW` pass too. The
/// store's tables can then not be dropped, changed or overwritten by a
/// client, and no statement writes files on the server (`COPY ... TO`).
struct ReadOnly {
    allow_writes: bool,
    /// Where `CREATE TABLE ... AS` saves its rows (a Delta table every
    /// later session over the store registers); without a store the table
    /// lives in the served session's memory until the server stops.
    store: Option<crate::store::Store>,
}

/// An SQL error a client is shown.
fn sql_error(code: &str, message: String) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "ERROR".into(),
        code.into(),
        message,
    )))
}

impl ReadOnly {
    /// `CREATE TABLE name AS query` with a store: the query's rows saved
    /// as the store's table `name` in one commit and registered in the
    /// session; a name in use is refused (`IF NOT EXISTS`: nothing done).
    /// `None` for every other statement, and without a store.
    async fn save(&self, s: &Statement, ctx: &SessionContext) -> Option<PgWireResult<Response>> {
        let (Statement::CreateTable(t), Some(store)) = (s, &self.store) else {
            return None;
        };
        let query = t.query.as_ref()?;
        let written = t.name.to_string();
        let name = if written.contains('"') {
            written
        } else {
            written.to_lowercase()
        };
        Some(async {
            crate::store::saved::check_name(&name).map_err(|m| sql_error("42602", m))?;
            let taken = ctx
                .table_exist(name.as_str())
                .map_err(|e| PgWireError::ApiError(Box::new(e)))?;
            if taken && t.if_not_exists {
                return Ok(Response::Execution(Tag::new("SELECT").with_rows(0)));
            }
            if t.or_replace {
                return Err(sql_error(
                    "42P07",
                    format!("CREATE OR REPLACE is refused: tables in the store are not replaced or dropped by a client; save under a new name instead of '{name}'"),
                ));
            }
            if taken {
                return Err(sql_error(
                    "42P07",
                    format!("a table '{name}' exists already: tables in the store are not replaced or dropped by a client; pick a new name"),
                ));
            }
            let df = ctx
                .sql(&query.to_string())
                .await
                .map_err(|e| PgWireError::ApiError(Box::new(e)))?;
            let schema = Arc::new(df.schema().as_arrow().clone());
            let batches = df
                .collect()
                .await
                .map_err(|e| PgWireError::ApiError(Box::new(e)))?;
            let rows = crate::store::saved::save(store, &name, schema, batches)
                .await
                .map_err(|e| sql_error("58030", e.to_string()))?;
            let stored = crate::store::saved::stored_schema(store, &name)
                .await
                .map_err(|e| sql_error("58030", e.to_string()))?
                .ok_or_else(|| {
                    sql_error(
                        "58030",
                        format!("the saved table '{name}' was not found after its commit"),
                    )
                })?;
            let view = crate::store::saved::view(store, &name, stored)
                .map_err(|e| sql_error("58030", e.to_string()))?;
            ctx.register_table(name.as_str(), Arc::new(view))
                .map_err(|e| PgWireError::ApiError(Box::new(e)))?;
            eprintln!("quarry serve: saved table '{name}' ({rows} rows) in the store");
            Ok(Response::Execution(Tag::new("SELECT").with_rows(rows)))
        }
        .await)
    }

    fn check(&self, s: &Statement) -> Option<PgWireError> {
        let read = matches!(
            s,
            Statement::Query(_)
                | Statement::Explain { .. }
                | Statement::ExplainTable { .. }
                | Statement::ShowVariable { .. }
                | Statement::ShowVariables { .. }
                | Statement::ShowTables { .. }
                | Statement::ShowColumns { .. }
                | Statement::ShowFunctions { .. }
                | Statement::Set(_)
                | Statement::StartTransaction { .. }
                | Statement::Commit { .. }
                | Statement::Rollback { .. }
                | Statement::Declare { .. }
                | Statement::Fetch { .. }
                | Statement::Close { .. }
                | Statement::Discard { .. }
                | Statement::Deallocate { .. }
        );
        let write = matches!(s, Statement::CreateTable(t) if t.query.is_some())
            || matches!(s, Statement::CreateView { .. });
        if read || (write && self.allow_writes) {
            return None;
        }
        let what = s.to_string();
        let what: String = what.chars().take(60).collect();
        Some(PgWireError::UserError(Box::new(ErrorInfo::new(
            "ERROR".into(),
            "25006".into(),
            format!(
                "quarry serve is read-only: only queries run here ({what}...); start it with --allow-writes to let CREATE TABLE ... AS and CREATE VIEW through"
            ),
        ))))
    }
}

#[async_trait]
impl QueryHook for ReadOnly {
    async fn handle_simple_query(
        &self,
        statement: &Statement,
        ctx: &SessionContext,
        _client: &mut dyn HookClient,
    ) -> Option<PgWireResult<Response>> {
        if let Some(e) = self.check(statement) {
            return Some(Err(e));
        }
        self.save(statement, ctx).await
    }

    async fn handle_extended_parse_query(
        &self,
        statement: &Statement,
        _ctx: &SessionContext,
        _client: &(dyn ClientInfo + Send + Sync),
    ) -> Option<PgWireResult<LogicalPlan>> {
        self.check(statement).map(Err)
    }

    async fn handle_extended_query(
        &self,
        statement: &Statement,
        _plan: &LogicalPlan,
        _params: &ParamValues,
        ctx: &SessionContext,
        _client: &mut dyn HookClient,
    ) -> Option<PgWireResult<Response>> {
        if let Some(e) = self.check(statement) {
            return Some(Err(e));
        }
        self.save(statement, ctx).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn refused(sql: &str, allow_writes: bool) -> bool {
        let s = Parser::parse_sql(&PostgreSqlDialect {}, sql)
            .unwrap()
            .remove(0);
        ReadOnly {
            allow_writes,
            store: None,
        }
        .check(&s)
        .is_some()
    }

    #[test]
    fn only_queries_pass_unless_writes_are_allowed() {
        for q in [
            "SELECT 1",
            "WITH a AS (SELECT 1) SELECT * FROM a",
            "EXPLAIN SELECT 1",
            "SHOW search_path",
            "SET extra_float_digits = 3",
            "BEGIN",
            "COMMIT",
        ] {
            assert!(!refused(q, false), "{q}");
        }
        for q in [
            "DROP TABLE extraction",
            "DELETE FROM calls",
            "INSERT INTO calls VALUES (1)",
            "CREATE TABLE t AS SELECT 1",
            "CREATE VIEW v AS SELECT 1",
            "COPY calls TO '/tmp/x.csv'",
            "ALTER TABLE calls RENAME TO c",
            "TRUNCATE calls",
        ] {
            assert!(refused(q, false), "{q}");
        }
        assert!(!refused("CREATE TABLE t AS SELECT 1", true));
        assert!(!refused("CREATE VIEW v AS SELECT 1", true));
        assert!(refused("DROP TABLE extraction", true));
        assert!(refused("CREATE TABLE t (a INT)", true));
    }

    #[test]
    fn passwords_compare_whole() {
        assert!(same(b"secret", b"secret"));
        assert!(!same(b"secret", b"secreT"));
        assert!(!same(b"secret", b"secre"));
        assert!(!same(b"", b"x"));
    }
}
