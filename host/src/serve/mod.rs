//! `sandgrep serve`: one process serving many tenants' searches side by
//! side. Every tenant has its own workspace, bearer tokens and limits; the
//! token alone selects the tenant, so nothing in a request can name another
//! tenant's files. Each call runs in a fresh instance of the component (the
//! engine, compiled artifact and epoch ticker are shared), so nothing leaks
//! between calls or tenants.
//!
//! Routes: `POST /v1/search-text`, `/v1/search-ast`, `/v1/list-files`,
//! `/v1/read-file` (body: the MCP tool's arguments; answer: the CLI's
//! `--json` object), MCP over streamable HTTP at `/mcp`, `GET /healthz`,
//! `GET /metrics` (Prometheus text, with the admin token), and `GET /`: a
//! search page for people, on the same endpoints.
//!
//! What an unauthenticated peer can hold is bounded: a request's headers must
//! arrive within `header_timeout_ms` (so must its body, after them, and the
//! next request on a kept-alive connection), and at most `max_connections`
//! are open at once — past that, new connections get a 503 and are closed.
//! Creating an MCP session counts against the tenant's rate like a call, and
//! a tenant holds at most `max_sessions` sessions.
//!
//! - `config`: the config file and its checks;
//! - `tenant`: a tenant at run time, the admission of its calls and the
//!   refusals;
//! - `metrics`: the counters and their Prometheus text;
//! - here: the routes, authentication and the accept loop.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

mod config;
mod metrics;
mod tenant;

use config::DEFAULT_LISTEN;
pub use config::{Config, TenantConfig};
use metrics::Connections;
use sandgrep_contract::limits::{HEADER_TIMEOUT_MS, MAX_BODY, MAX_CONNECTIONS, STOP_DRAIN_MS, STOP_TIMEOUT_MS};
pub use tenant::{Permit, Refusal, Tenant};

/// One structured log line on stderr.
fn log(mut event: Value) {
    let ts = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    event["ts"] = json!((ts * 1000.0).round() / 1000.0);
    eprintln!("{event}");
}

struct App {
    tenants: Vec<Arc<Tenant>>,
    by_token: HashMap<[u8; 32], usize>,
    admin: Option<[u8; 32]>,
    /// How long a request's body may take to arrive after its headers.
    body_timeout: Duration,
    connections: Arc<Connections>,
}

impl App {
    /// The tenant a request's bearer token selects. A `Sandgrep-Tenant`
    /// header (what a proxy in front of several nodes routes by) must name
    /// that same tenant: a wrong one would send the tenant's calls where its
    /// index is cold, so it is refused at once (it selects nothing).
    fn tenant(&self, headers: &HeaderMap) -> Result<&Arc<Tenant>, Response> {
        let token = bearer(headers).ok_or_else(|| unauthorized("missing bearer token (Authorization: Bearer …)"))?;
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let tenant =
            self.by_token.get(&hash).map(|&i| &self.tenants[i]).ok_or_else(|| unauthorized("unknown token"))?;
        match headers.get(TENANT_HEADER) {
            Some(named) if named.as_bytes() != tenant.name.as_bytes() => Err(error(
                StatusCode::BAD_REQUEST,
                "the Sandgrep-Tenant header names another tenant than the token's (send the token's tenant name: \
                 proxies route by it)",
            )),
            _ => Ok(tenant),
        }
    }
}

/// The header a client sends with its token to name its tenant, for a
/// proxy's consistent hash (deploy/nginx/sandgrep.conf, docs/deploy.md).
const TENANT_HEADER: &str = "sandgrep-tenant";

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({"error": message}))).into_response()
}

fn unauthorized(message: &str) -> Response {
    let mut r = error(StatusCode::UNAUTHORIZED, message);
    r.headers_mut().insert(header::WWW_AUTHENTICATE, "Bearer".parse().unwrap());
    r
}

/// Builds the router for `config` (tenants opened, MCP services made).
pub fn router(config: &Config, listen: &SocketAddr) -> Result<Router, String> {
    router_with(config, listen, Arc::default())
}

fn router_with(config: &Config, listen: &SocketAddr, connections: Arc<Connections>) -> Result<Router, String> {
    let mut tenants = Vec::new();
    let mut by_token = HashMap::new();
    let mut allowed_hosts = config.allowed_hosts.clone();
    if allowed_hosts.is_empty() {
        allowed_hosts = vec!["localhost".into(), "127.0.0.1".into(), "::1".into(), listen.ip().to_string()];
    }
    for (i, t) in config.tenant.iter().enumerate() {
        let tenant = Tenant::open(t, &allowed_hosts)?;
        for h in t.token_hashes()? {
            by_token.insert(h, i);
        }
        tenants.push(tenant);
    }
    let admin = config.admin_token.as_ref().map(|t| Sha256::digest(t.as_bytes()).into());
    let body_timeout = Duration::from_millis(config.header_timeout_ms.unwrap_or(HEADER_TIMEOUT_MS.default));
    let app = Arc::new(App { tenants, by_token, admin, body_timeout, connections });
    Ok(Router::new()
        .route("/", get(page))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/v1/{op}", post(operation))
        .route("/mcp", any(mcp))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such endpoint") })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(app))
}

/// The search page: one file, embedded, talking to the `/v1` endpoints with
/// the token the user signs in with (kept in the tab's session storage).
async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; \
                 base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        include_str!("../web/index.html"),
    )
        .into_response()
}

/// A request's body, read only after its token was checked: at most
/// `MAX_BODY` bytes (413 past it), arriving within `timeout` (408 past it,
/// and the connection is closed: a slow body holds a connection like slow
/// headers would).
async fn read_body(headers: &HeaderMap, mut body: Body, timeout: Duration) -> Result<Bytes, Response> {
    let too_large = || error(StatusCode::PAYLOAD_TOO_LARGE, &format!("the body is over {} bytes", MAX_BODY));
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    let read = async {
        let mut out = Vec::new();
        while let Some(frame) = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await {
            let frame = frame.map_err(|e| error(StatusCode::BAD_REQUEST, &format!("reading the body: {e}")))?;
            if let Ok(data) = frame.into_data() {
                if out.len() + data.len() > MAX_BODY {
                    return Err(too_large());
                }
                out.extend_from_slice(&data);
            }
        }
        Ok(Bytes::from(out))
    };
    match tokio::time::timeout(timeout, read).await {
        Ok(result) => result,
        Err(_) => {
            let mut r = error(StatusCode::REQUEST_TIMEOUT, "the body did not arrive in time");
            r.headers_mut().insert(header::CONNECTION, "close".parse().unwrap());
            Err(r)
        }
    }
}

async fn operation(
    State(app): State<Arc<App>>,
    axum::extract::Path(op): axum::extract::Path<String>,
    request: Request<Body>,
) -> Response {
    let (parts, body) = request.into_parts();
    let tenant = match app.tenant(&parts.headers) {
        Ok(t) => t.clone(),
        Err(r) => return r,
    };
    let tool = match op.as_str() {
        "search-text" => "search_text",
        "search-ast" => "search_ast",
        "list-files" => "list_files",
        "read-file" => "read_file",
        _ => return error(StatusCode::NOT_FOUND, "no such operation (search-text, search-ast, list-files, read-file)"),
    };
    let body = match read_body(&parts.headers, body, app.body_timeout).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let args = match serde_json::from_slice::<Value>(if body.is_empty() { b"{}" } else { &body }) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return error(StatusCode::BAD_REQUEST, "the body must be a JSON object of arguments"),
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("the body is not JSON: {e}")),
    };
    match tenant.call(tool, args).await {
        Ok(out) => axum::Json(out.response).into_response(),
        Err(Refusal::Limit(limit)) => limited(limit),
        Err(refusal) => error(refusal.status(), &refusal.to_string()),
    }
}

/// Whether a JSON-RPC message (or batch) is an `initialize` request, the
/// one that opens an MCP session.
fn is_initialize(body: &[u8]) -> bool {
    let is = |m: &Value| m.get("method").and_then(Value::as_str) == Some("initialize");
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(batch)) => batch.iter().any(is),
        Ok(message) => is(&message),
        Err(_) => false,
    }
}

async fn mcp(State(app): State<Arc<App>>, request: Request<Body>) -> Response {
    let (parts, body) = request.into_parts();
    let tenant = match app.tenant(&parts.headers) {
        Ok(t) => t.clone(),
        Err(r) => return r,
    };
    let body = match read_body(&parts.headers, body, app.body_timeout).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    // Session creation is admitted like a call (and capped); the guard
    // counts it until rmcp has put the session in its map.
    let _opening = if parts.method == Method::POST && is_initialize(&body) {
        let started = Instant::now();
        match tenant.open_session().await {
            Ok(guard) => Some(guard),
            Err(limit) => {
                tenant.record("initialize", StatusCode::TOO_MANY_REQUESTS.as_u16(), started.elapsed());
                return limited(limit);
            }
        }
    } else {
        None
    };
    match tenant.mcp.clone().oneshot(Request::from_parts(parts, Body::from(body))).await {
        Ok(response) => response.map(Body::new),
        Err(e) => match e {},
    }
}

/// A refusal by one of the tenant's limits: 429, retry shortly.
fn limited(limit: &'static str) -> Response {
    let mut r = error(StatusCode::TOO_MANY_REQUESTS, &Refusal::Limit(limit).to_string());
    r.headers_mut().insert(header::RETRY_AFTER, "1".parse().unwrap());
    r
}

async fn metrics(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let Some(admin) = app.admin else {
        return error(StatusCode::NOT_FOUND, "metrics are off (no admin_token in the config)");
    };
    let given: Option<[u8; 32]> = bearer(&headers).map(|t| Sha256::digest(t.as_bytes()).into());
    match given {
        None => return unauthorized("missing bearer token"),
        Some(h) if h != admin => return error(StatusCode::FORBIDDEN, "metrics need the admin token"),
        Some(_) => {}
    }
    let out = metrics::prometheus(&app.tenants, &app.connections).await;
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
}

/// Set once the server was asked to stop: `/readyz` says 503 from then on.
static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Readiness (for a load balancer or an orchestrator's probe): 503 once the
/// server was asked to stop, while it still answers what comes in.
async fn readyz() -> Response {
    if STOPPING.load(Ordering::Relaxed) {
        return error(StatusCode::SERVICE_UNAVAILABLE, "stopping");
    }
    "ready\n".into_response()
}

/// Runs the server until interrupted.
pub fn run(config_path: &Path, listen: Option<&str>) -> Result<(), String> {
    let config = Config::load(config_path)?;
    let listen = listen.or(config.listen.as_deref()).unwrap_or(DEFAULT_LISTEN);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let listener = TcpListener::bind(listen).await.map_err(|e| format!("listen on {listen}: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let connections = Arc::new(Connections::default());
        let app = router_with(&config, &addr, connections.clone())?;
        if !addr.ip().is_loopback() && config.allowed_hosts.is_empty() {
            log(json!({"event": "warning", "message": "listening beyond loopback without allowed_hosts: /mcp accepts \
                only Host names localhost, 127.0.0.1, ::1 and the listen address; set allowed_hosts to the names \
                clients use"}));
        }
        let signals = stop_signals()?;
        log(json!({"event": "listening", "addr": addr.to_string(), "tenants": config.tenant.len()}));
        let clamp = |v: Option<u64>, l: sandgrep_contract::limits::Limit| v.unwrap_or(l.default).clamp(l.min, l.max);
        let limits = ConnLimits {
            header_timeout: Duration::from_millis(config.header_timeout_ms.unwrap_or(HEADER_TIMEOUT_MS.default)),
            max_connections: config.max_connections.unwrap_or(MAX_CONNECTIONS.default as usize),
            drain: Duration::from_millis(clamp(config.drain_ms, STOP_DRAIN_MS)),
            stop_timeout: Duration::from_millis(clamp(config.stop_timeout_ms, STOP_TIMEOUT_MS)),
        };
        accept_loop(listener, app, limits, connections, signals).await;
        Ok(())
    })
}

struct ConnLimits {
    header_timeout: Duration,
    max_connections: usize,
    drain: Duration,
    stop_timeout: Duration,
}

/// The signals that ask the server to stop, SIGTERM (as orchestrators stop
/// it) and SIGINT (Ctrl-C), caught from when this is made: made before the
/// server says it listens, so none can end it before it drains.
fn stop_signals() -> Result<[tokio::signal::unix::Signal; 2], String> {
    use tokio::signal::unix::{signal, SignalKind};
    let catch = |kind| signal(kind).map_err(|e| format!("signal handler: {e}"));
    Ok([catch(SignalKind::terminate())?, catch(SignalKind::interrupt())?])
}

/// Resolves when one of `signals` comes: its name, for the log.
async fn stop_asked(signals: [tokio::signal::unix::Signal; 2]) -> &'static str {
    let [mut term, mut int] = signals;
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}

/// Accepts connections until interrupted and serves each with hyper's
/// HTTP/1 server: a header-read timeout (which also closes a kept-alive
/// connection whose next request does not come in time), and at most
/// `max_connections` at once — one over gets a 503 and is closed, at once,
/// without a task of its own. Asked to stop (SIGTERM, Ctrl-C): `/readyz`
/// says 503 and calls are still answered for `drain`; then no new
/// connection is taken and open ones finish what they are answering (for up
/// to `stop_timeout`).
async fn accept_loop(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    connections: Arc<Connections>,
    signals: [tokio::signal::unix::Signal; 2],
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;

    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(());
    let mut asked = pin!(stop_asked(signals));
    let mut draining: Option<tokio::time::Instant> = None;
    let mut last_refusal_log: Option<Instant> = None;
    loop {
        let drained = tokio::time::sleep_until(draining.unwrap_or_else(tokio::time::Instant::now));
        let stream = tokio::select! {
            signal = &mut asked, if draining.is_none() => {
                STOPPING.store(true, Ordering::Relaxed);
                log(json!({"event": "stop", "signal": signal, "drain_ms": limits.drain.as_millis() as u64}));
                draining = Some(tokio::time::Instant::now() + limits.drain);
                continue;
            }
            _ = drained, if draining.is_some() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors (or a connection reset before it
                    // was accepted): wait a little instead of spinning.
                    log(json!({"event": "warning", "message": format!("accept: {e}")}));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            refuse(stream);
            let refused = connections.refused.fetch_add(1, Ordering::Relaxed) + 1;
            if last_refusal_log.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                last_refusal_log = Some(Instant::now());
                log(json!({"event": "warning", "message": "connection refused: max_connections are open",
                    "max_connections": limits.max_connections, "refused_total": refused}));
            }
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let mut stop = stop_rx.clone();
        let connections = connections.clone();
        let header_timeout = limits.header_timeout;
        connections.open.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
            let mut conn = pin!(builder.serve_connection(TokioIo::new(stream), service));
            tokio::select! {
                _ = conn.as_mut() => {}
                Ok(()) = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.as_mut().await;
                }
            }
            connections.open.fetch_sub(1, Ordering::Relaxed);
            drop(slot);
        });
    }
    // No new connection from here on: a proxy's connect is refused at once
    // (and goes to the next node) instead of waiting in the backlog for an
    // answer that never comes.
    drop(listener);
    log(json!({"event": "stopping", "open_connections": connections.open.load(Ordering::Relaxed)}));
    let _ = stop_tx.send(());
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(limits.stop_timeout, slots.acquire_many(all)).await;
}

/// Answers a connection over the cap with a 503 and closes it, without
/// waiting on the peer: the answer fits the empty send buffer of a new
/// socket, and whatever does not get through is dropped with it.
fn refuse(stream: TcpStream) {
    let body = r#"{"error": "too many connections: retry shortly"}"#;
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.try_write(answer.as_bytes());
}
