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

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

use crate::mcp::McpServer;
use crate::tools::{self, ToolError};
use crate::{Error, Policy, Sandbox, SearchError};

/// Largest request body (the arguments of one call).
const MAX_BODY: usize = 1 << 20;
const DEFAULT_LISTEN: &str = "127.0.0.1:7878";
/// How long a client may take to send a request's headers (default).
const DEFAULT_HEADER_TIMEOUT_MS: u64 = 10_000;
/// Connections open at once (default).
const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// MCP sessions one tenant may hold at once (default).
const DEFAULT_MAX_SESSIONS: usize = 64;
/// The shortest token (and admin token) the server starts with.
const MIN_TOKEN_CHARS: usize = 16;

/// The config file (TOML). Unknown keys are allowed.
#[derive(Deserialize, Debug)]
pub struct Config {
    pub listen: Option<String>,
    /// A token for `/metrics`; without it, metrics are not served.
    pub admin_token: Option<String>,
    /// Host names the MCP endpoint accepts in `Host` (DNS-rebinding
    /// protection); default: loopback names and the listen address.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// How long a client may take to send a request's headers, ms (default
    /// 10000); its body must follow within the same time, and a kept-alive
    /// connection is closed when its next request takes longer to start.
    pub header_timeout_ms: Option<u64>,
    /// Connections open at once (default 512); past it, new connections get
    /// a 503 and are closed.
    pub max_connections: Option<usize>,
    #[serde(default)]
    pub tenant: Vec<TenantConfig>,
}

#[derive(Deserialize, Debug)]
pub struct TenantConfig {
    pub name: String,
    pub workspace: PathBuf,
    #[serde(default)]
    pub tokens: Vec<String>,
    /// SHA-256 of tokens, hex, for configs that should not hold them.
    #[serde(default)]
    pub token_sha256: Vec<String>,
    /// Calls running at once (default 4).
    pub max_concurrent: Option<usize>,
    /// Calls per second, sustained (default 20; bursts up to that many).
    pub requests_per_second: Option<f64>,
    /// Longest a call may run (default and cap 60000).
    pub timeout_ms: Option<u64>,
    /// Memory cap of one call's instance (default 256).
    pub memory_mib: Option<usize>,
    /// MCP sessions open at once (default 64); `initialize` past it is a 429.
    pub max_sessions: Option<usize>,
}

impl Config {
    /// Reads and checks a config file: every problem is a clear message.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let config: Config = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        config.check()?;
        Ok(config)
    }

    fn check(&self) -> Result<(), String> {
        if self.tenant.is_empty() {
            return Err("no [[tenant]] in the config".into());
        }
        if self.header_timeout_ms.is_some_and(|ms| ms == 0 || ms > 600_000) {
            return Err("header_timeout_ms must be between 1 and 600000".into());
        }
        if self.max_connections.is_some_and(|n| n == 0 || n > 1_000_000) {
            return Err("max_connections must be between 1 and 1000000".into());
        }
        let admin = match &self.admin_token {
            Some(t) => {
                check_token(t).map_err(|why| format!("admin_token {why}"))?;
                Some(<[u8; 32]>::from(Sha256::digest(t.as_bytes())))
            }
            None => None,
        };
        let mut names = HashMap::new();
        let mut tokens: HashMap<[u8; 32], &str> = HashMap::new();
        let mut workspaces: Vec<(PathBuf, &str)> = Vec::new();
        for t in &self.tenant {
            let name = t.name.as_str();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                return Err(format!("tenant name {name:?}: use letters, digits, - and _"));
            }
            if names.insert(name, ()).is_some() {
                return Err(format!("tenant {name:?} is listed twice"));
            }
            let ws = std::fs::canonicalize(&t.workspace)
                .map_err(|e| format!("tenant {name}: workspace {}: {e}", t.workspace.display()))?;
            if !ws.is_dir() {
                return Err(format!("tenant {name}: workspace {} is not a directory", t.workspace.display()));
            }
            for (other_ws, other) in &workspaces {
                if ws.starts_with(other_ws) || other_ws.starts_with(&ws) {
                    return Err(format!(
                        "tenant {name}: workspace {} overlaps tenant {other}'s {}",
                        ws.display(),
                        other_ws.display()
                    ));
                }
            }
            workspaces.push((ws, name));
            let hashes = t.token_hashes()?;
            if hashes.is_empty() {
                return Err(format!("tenant {name}: no tokens (tokens or token_sha256)"));
            }
            for h in hashes {
                if admin == Some(h) {
                    return Err(format!("tenant {name}: a token is also the admin_token"));
                }
                if let Some(other) = tokens.insert(h, name) {
                    return Err(format!("tenant {name}: a token is also tenant {other}'s"));
                }
            }
            if t.max_concurrent == Some(0)
                || t.max_sessions == Some(0)
                || t.requests_per_second.is_some_and(|r| r.is_nan() || r <= 0.0)
            {
                return Err(format!(
                    "tenant {name}: max_concurrent, max_sessions and requests_per_second must be positive"
                ));
            }
        }
        Ok(())
    }
}

impl TenantConfig {
    fn token_hashes(&self) -> Result<Vec<[u8; 32]>, String> {
        let mut out = Vec::new();
        for (i, t) in self.tokens.iter().enumerate() {
            check_token(t)
                .map_err(|why| format!("tenant {}: token {} of {} {why}", self.name, i + 1, self.tokens.len()))?;
            out.push(Sha256::digest(t.as_bytes()).into());
        }
        for h in &self.token_sha256 {
            let bytes: Option<Vec<u8>> = (h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| (0..32).map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok()).collect())
                .flatten();
            match bytes {
                Some(b) => out.push(b.try_into().expect("32 bytes")),
                None => return Err(format!("tenant {}: token_sha256 entries are 64 hex digits", self.name)),
            }
        }
        Ok(out)
    }
}

/// Whether `token` is one a client can send and an attacker cannot guess:
/// at least 16 characters once surrounding whitespace is trimmed, and only
/// visible ASCII (a space, a control character or a non-ASCII letter could
/// never arrive intact in an `Authorization` header, so such a token would
/// silently lock its tenant out). The reason names no part of the token.
fn check_token(token: &str) -> Result<(), String> {
    let len = token.trim().chars().count();
    if len < MIN_TOKEN_CHARS {
        return Err(format!(
            "is too short: tokens must be at least {MIN_TOKEN_CHARS} characters, not counting surrounding \
             whitespace (this one has {len})"
        ));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("holds whitespace, a control character or non-ASCII: tokens are visible ASCII only \
                    (a client could never send this one)"
            .into());
    }
    Ok(())
}

/// One tenant at run time: its sandbox, limits and counters.
pub struct Tenant {
    pub name: String,
    sandbox: Sandbox,
    max_concurrent: usize,
    rate: f64,
    gate: Mutex<Gate>,
    metrics: Mutex<Metrics>,
    mcp: StreamableHttpService<McpServer, LocalSessionManager>,
    /// The MCP sessions `mcp` holds (rmcp's own map: a session leaves it
    /// when it closes or idles out).
    sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
    /// `initialize` requests admitted and not yet answered.
    opening: AtomicUsize,
}

struct Gate {
    running: usize,
    /// Token bucket: calls that may start now.
    allowance: f64,
    refilled: Instant,
}

#[derive(Default)]
struct Metrics {
    /// (operation, HTTP status) → calls.
    calls: BTreeMap<(String, u16), u64>,
    /// Refusals by limit: "concurrency", "rate", "sessions".
    limit_hits: BTreeMap<&'static str, u64>,
    /// Durations of answered calls, ms, bucketed by the upper bounds below.
    buckets: [u64; BUCKETS_MS.len() + 1],
    total_ms: f64,
}

const BUCKETS_MS: [f64; 12] = [1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 5000.0, 30000.0];

/// A call admitted under its tenant's limits; dropping it frees the slot.
pub struct Permit(Arc<Tenant>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.gate.lock().unwrap().running -= 1;
    }
}

/// An MCP session being opened, counted against the tenant's cap until the
/// session is in rmcp's map (or its creation failed).
struct Opening(Arc<Tenant>);

impl Drop for Opening {
    fn drop(&mut self) {
        self.0.opening.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Tenant {
    /// Admits a call, or says which limit refused it.
    pub fn admit(self: &Arc<Self>) -> Result<Permit, &'static str> {
        self.admit_within(true).map(|()| Permit(self.clone()))
    }

    /// Takes one call's worth of the tenant's rate (and a concurrency slot,
    /// which the caller then owns, when `slot`), or says which limit refused.
    fn admit_within(&self, slot: bool) -> Result<(), &'static str> {
        let mut g = self.gate.lock().unwrap();
        let now = Instant::now();
        g.allowance = (g.allowance + now.duration_since(g.refilled).as_secs_f64() * self.rate).min(self.rate.max(1.0));
        g.refilled = now;
        let refused = if slot && g.running >= self.max_concurrent {
            Some("concurrency")
        } else if g.allowance < 1.0 {
            Some("rate")
        } else {
            None
        };
        if let Some(limit) = refused {
            drop(g);
            *self.metrics.lock().unwrap().limit_hits.entry(limit).or_default() += 1;
            return Err(limit);
        }
        g.allowance -= 1.0;
        if slot {
            g.running += 1;
        }
        Ok(())
    }

    /// Admits the creation of an MCP session: under the cap of sessions
    /// open at once, and against the tenant's rate like any call.
    async fn open_session(self: &Arc<Self>) -> Result<Opening, &'static str> {
        // Counted first, so that concurrent `initialize`s cannot all pass.
        let opening = self.opening.fetch_add(1, Ordering::SeqCst) + 1;
        let guard = Opening(self.clone());
        if self.sessions.sessions.read().await.len() + opening > self.max_sessions {
            *self.metrics.lock().unwrap().limit_hits.entry("sessions").or_default() += 1;
            return Err("sessions");
        }
        self.admit_within(false)?;
        Ok(guard)
    }

    /// Counts a finished call and logs it (never contents, never tokens).
    pub fn record(&self, op: &str, status: u16, took: Duration) {
        let ms = took.as_secs_f64() * 1000.0;
        {
            let mut m = self.metrics.lock().unwrap();
            *m.calls.entry((op.to_string(), status)).or_default() += 1;
            // Latencies are of calls that ran; refusals are counted above.
            if status != StatusCode::TOO_MANY_REQUESTS.as_u16() {
                let i = BUCKETS_MS.iter().position(|&b| ms <= b).unwrap_or(BUCKETS_MS.len());
                m.buckets[i] += 1;
                m.total_ms += ms;
            }
        }
        log(
            json!({"event": "call", "tenant": self.name, "op": op, "status": status, "ms": (ms * 10.0).round() / 10.0}),
        );
    }

    /// Runs tool `name` for this tenant: admission, the call on the
    /// blocking pool, accounting. The slot is held, and the call counted, by
    /// the blocking task itself: a client that goes away does not free its
    /// slot while its instance still runs.
    pub async fn call(self: &Arc<Self>, name: &str, args: Map<String, Value>) -> Result<tools::ToolOutput, Refusal> {
        if !tools::definitions().iter().any(|d| d.name == name) {
            return Err(Refusal::Tool(ToolError::UnknownTool(name.to_string())));
        }
        let started = Instant::now();
        let permit = match self.admit() {
            Ok(p) => p,
            Err(limit) => {
                self.record(name, StatusCode::TOO_MANY_REQUESTS.as_u16(), started.elapsed());
                return Err(Refusal::Limit(limit));
            }
        };
        let tenant = self.clone();
        let name = name.to_string();
        tokio::task::spawn_blocking(move || {
            let outcome = tools::call(&tenant.sandbox, &name, &args).map_err(Refusal::Tool);
            let status = outcome.as_ref().map_or_else(|r| r.status().as_u16(), |_| 200);
            tenant.record(&name, status, started.elapsed());
            drop(permit);
            outcome
        })
        .await
        .unwrap_or_else(|e| Err(Refusal::Tool(ToolError::Failed(Error::Crashed(format!("the call failed: {e}"))))))
    }
}

/// Why a call got no result.
#[derive(Debug)]
pub enum Refusal {
    Limit(&'static str),
    Tool(ToolError),
}

/// A refusal by one of the tenant's limits: 429, retry shortly.
fn limited(limit: &'static str) -> Response {
    let mut r = error(StatusCode::TOO_MANY_REQUESTS, &Refusal::Limit(limit).to_string());
    r.headers_mut().insert(header::RETRY_AFTER, "1".parse().unwrap());
    r
}

impl Refusal {
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::Limit(_) => StatusCode::TOO_MANY_REQUESTS,
            Refusal::Tool(ToolError::UnknownTool(_)) => StatusCode::NOT_FOUND,
            Refusal::Tool(ToolError::Arguments(_)) => StatusCode::BAD_REQUEST,
            Refusal::Tool(ToolError::Failed(e)) => match e {
                Error::Search(SearchError::NotFound(_)) => StatusCode::NOT_FOUND,
                Error::Search(SearchError::Denied(_)) => StatusCode::FORBIDDEN,
                Error::Search(SearchError::TooLarge(_)) | Error::OutOfMemory(_) => StatusCode::PAYLOAD_TOO_LARGE,
                Error::Search(SearchError::Io(_)) | Error::Crashed(_) | Error::Setup(_) => {
                    StatusCode::INTERNAL_SERVER_ERROR
                }
                Error::Search(_) => StatusCode::BAD_REQUEST,
                Error::Deadline(_) => StatusCode::GATEWAY_TIMEOUT,
            },
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Limit("sessions") => {
                write!(f, "this tenant has as many MCP sessions open as it may: close one (DELETE /mcp) or retry later")
            }
            Refusal::Limit(limit) => write!(f, "over this tenant's {limit} limit: retry shortly"),
            Refusal::Tool(e) => write!(f, "{e}"),
        }
    }
}

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

/// The accept loop's counters, for `/metrics`.
#[derive(Default)]
struct Connections {
    open: AtomicUsize,
    refused: AtomicU64,
}

impl App {
    /// The tenant a request's bearer token selects.
    fn tenant(&self, headers: &HeaderMap) -> Result<&Arc<Tenant>, Response> {
        let token = bearer(headers).ok_or_else(|| unauthorized("missing bearer token (Authorization: Bearer …)"))?;
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        self.by_token.get(&hash).map(|&i| &self.tenants[i]).ok_or_else(|| unauthorized("unknown token"))
    }
}

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
        let timeout = Duration::from_millis(t.timeout_ms.unwrap_or(60_000).clamp(1, 60_000));
        let policy = Policy {
            memory_limit: t.memory_mib.unwrap_or(256).clamp(16, 4096) << 20,
            max_timeout: timeout,
            deadline_grace: Duration::from_secs(2),
            cursor_key: format!("tenant:{}", t.name),
            ..Policy::default()
        };
        let sandbox = Sandbox::open(&t.workspace, policy).map_err(|e| format!("tenant {}: {e}", t.name))?;
        let rate = t.requests_per_second.unwrap_or(20.0);
        let sessions = Arc::new(LocalSessionManager::default());
        let tenant = Arc::new_cyclic(|weak: &std::sync::Weak<Tenant>| {
            let weak = weak.clone();
            let sandbox_for_mcp = sandbox.clone();
            let mcp = StreamableHttpService::new(
                move || Ok(McpServer::for_tenant(sandbox_for_mcp.clone(), weak.clone())),
                sessions.clone(),
                StreamableHttpServerConfig::default().with_allowed_hosts(allowed_hosts.clone()),
            );
            Tenant {
                name: t.name.clone(),
                sandbox,
                max_concurrent: t.max_concurrent.unwrap_or(4),
                rate,
                gate: Mutex::new(Gate { running: 0, allowance: rate.max(1.0), refilled: Instant::now() }),
                metrics: Mutex::new(Metrics::default()),
                mcp,
                sessions,
                max_sessions: t.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS),
                opening: AtomicUsize::new(0),
            }
        });
        for h in t.token_hashes()? {
            by_token.insert(h, i);
        }
        tenants.push(tenant);
    }
    let admin = config.admin_token.as_ref().map(|t| Sha256::digest(t.as_bytes()).into());
    let body_timeout = Duration::from_millis(config.header_timeout_ms.unwrap_or(DEFAULT_HEADER_TIMEOUT_MS));
    let app = Arc::new(App { tenants, by_token, admin, body_timeout, connections });
    Ok(Router::new()
        .route("/", get(page))
        .route("/healthz", get(|| async { "ok\n" }))
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
        include_str!("web/index.html"),
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
    let mut out = String::new();
    out.push_str("# TYPE sandgrep_calls_total counter\n");
    for t in &app.tenants {
        let m = t.metrics.lock().unwrap();
        for ((op, status), n) in &m.calls {
            out.push_str(&format!(
                "sandgrep_calls_total{{tenant=\"{}\",op=\"{op}\",status=\"{status}\"}} {n}\n",
                t.name
            ));
        }
    }
    out.push_str("# TYPE sandgrep_limit_hits_total counter\n");
    for t in &app.tenants {
        for (limit, n) in &t.metrics.lock().unwrap().limit_hits {
            out.push_str(&format!("sandgrep_limit_hits_total{{tenant=\"{}\",limit=\"{limit}\"}} {n}\n", t.name));
        }
    }
    out.push_str("# TYPE sandgrep_mcp_sessions gauge\n");
    for t in &app.tenants {
        let n = t.sessions.sessions.read().await.len();
        out.push_str(&format!("sandgrep_mcp_sessions{{tenant=\"{}\"}} {n}\n", t.name));
    }
    out.push_str("# TYPE sandgrep_connections_open gauge\n");
    out.push_str(&format!("sandgrep_connections_open {}\n", app.connections.open.load(Ordering::Relaxed)));
    out.push_str("# TYPE sandgrep_connections_refused_total counter\n");
    out.push_str(&format!("sandgrep_connections_refused_total {}\n", app.connections.refused.load(Ordering::Relaxed)));
    out.push_str("# TYPE sandgrep_call_duration_ms histogram\n");
    for t in &app.tenants {
        let m = t.metrics.lock().unwrap();
        let mut cumulative = 0;
        for (i, bound) in BUCKETS_MS.iter().enumerate() {
            cumulative += m.buckets[i];
            out.push_str(&format!(
                "sandgrep_call_duration_ms_bucket{{tenant=\"{}\",le=\"{bound}\"}} {cumulative}\n",
                t.name
            ));
        }
        cumulative += m.buckets[BUCKETS_MS.len()];
        out.push_str(&format!("sandgrep_call_duration_ms_bucket{{tenant=\"{}\",le=\"+Inf\"}} {cumulative}\n", t.name));
        out.push_str(&format!("sandgrep_call_duration_ms_sum{{tenant=\"{}\"}} {:.1}\n", t.name, m.total_ms));
        out.push_str(&format!("sandgrep_call_duration_ms_count{{tenant=\"{}\"}} {cumulative}\n", t.name));
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
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
        log(json!({"event": "listening", "addr": addr.to_string(), "tenants": config.tenant.len()}));
        let limits = ConnLimits {
            header_timeout: Duration::from_millis(config.header_timeout_ms.unwrap_or(DEFAULT_HEADER_TIMEOUT_MS)),
            max_connections: config.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS),
        };
        accept_loop(listener, app, limits, connections).await;
        Ok(())
    })
}

struct ConnLimits {
    header_timeout: Duration,
    max_connections: usize,
}

/// Accepts connections until interrupted and serves each with hyper's
/// HTTP/1 server: a header-read timeout (which also closes a kept-alive
/// connection whose next request does not come in time), and at most
/// `max_connections` at once — one over gets a 503 and is closed, at once,
/// without a task of its own. On Ctrl-C, open connections finish what they
/// are answering (for up to 5 s).
async fn accept_loop(listener: TcpListener, app: Router, limits: ConnLimits, connections: Arc<Connections>) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;

    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(());
    let mut interrupted = pin!(tokio::signal::ctrl_c());
    let mut last_refusal_log: Option<Instant> = None;
    loop {
        let stream = tokio::select! {
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
            _ = &mut interrupted => break,
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
    log(json!({"event": "stopping", "open_connections": connections.open.load(Ordering::Relaxed)}));
    let _ = stop_tx.send(());
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(Duration::from_secs(5), slots.acquire_many(all)).await;
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
