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
//! `--allow-writes` lets `CREATE TABLE ... AS` and `CREATE VIEW` through.

use std::fmt::Debug;
use std::net::SocketAddr;
use std::path::PathBuf;
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
use futures::{Sink, SinkExt};
use pgwire::api::auth::{
    finish_authentication, protocol_negotiation, save_startup_parameters_to_metadata,
    DefaultServerParameterProvider, LoginInfo, StartupHandler,
};
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::Response;
use pgwire::api::{ClientInfo, PgWireConnectionState, PgWireServerHandlers};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::startup::Authentication;
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use tokio::net::TcpListener;
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
    /// Let `CREATE TABLE ... AS` and `CREATE VIEW` through (session tables
    /// every client sees); otherwise only queries run.
    pub allow_writes: bool,
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
        }),
        Arc::new(CursorStatementHook),
        Arc::new(SetShowHook),
        Arc::new(TransactionStatementHook),
    ];
    let handlers = Arc::new(Handlers {
        service: Arc::new(DfSessionService::new_with_hooks(ctx, hooks)),
        gate: Arc::new(Gate {
            password: opts.password.clone(),
            params: DefaultServerParameterProvider::default(),
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
/// over the one session, behind quarry's gate.
struct Handlers {
    service: Arc<DfSessionService>,
    gate: Arc<Gate>,
}

impl PgWireServerHandlers for Handlers {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        self.service.clone()
    }

    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        self.service.clone()
    }

    fn startup_handler(&self) -> Arc<impl StartupHandler> {
        self.gate.clone()
    }
}

/// The start of a connection: no question on loopback without a password,
/// otherwise the password asked for (cleartext: under TLS when given) and
/// compared; a wrong one is refused and logged with the user and address,
/// never the value tried.
struct Gate {
    password: Option<String>,
    params: DefaultServerParameterProvider,
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
                protocol_negotiation(client, startup).await?;
                save_startup_parameters_to_metadata(client, startup);
                if self.password.is_none() {
                    finish_authentication(client, &self.params).await?;
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
                    finish_authentication(client, &self.params).await?;
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
}

impl ReadOnly {
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
        _ctx: &SessionContext,
        _client: &mut dyn HookClient,
    ) -> Option<PgWireResult<Response>> {
        self.check(statement).map(Err)
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
        _ctx: &SessionContext,
        _client: &mut dyn HookClient,
    ) -> Option<PgWireResult<Response>> {
        self.check(statement).map(Err)
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
        ReadOnly { allow_writes }.check(&s).is_some()
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
