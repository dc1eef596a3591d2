//! A tenant at run time: its sandbox, its MCP service, and the admission of
//! its calls (concurrency, rate, sessions) with the refusals that says why.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use rmcp::model::JsonObject;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Map, Value};

use super::config::TenantConfig;
use super::log;
use super::metrics::Metrics;
use crate::mcp::{CallError, CallGate, GatedCall, McpServer};
use crate::tools::{self, ToolError};
use crate::{Error, Policy, Sandbox, SearchError};
use sandgrep_contract::limits::{
    MAX_CONCURRENT, MAX_SESSIONS, MEMORY, REQUESTS_PER_SECOND, SERVE_DEADLINE_GRACE_MS, TIMEOUT_MS,
};

/// One tenant at run time: its sandbox, limits and counters.
pub struct Tenant {
    pub name: String,
    sandbox: Sandbox,
    max_concurrent: usize,
    rate: f64,
    gate: Mutex<Gate>,
    pub(super) metrics: Mutex<Metrics>,
    pub(super) mcp: StreamableHttpService<McpServer, LocalSessionManager>,
    /// The MCP sessions `mcp` holds (rmcp's own map: a session leaves it
    /// when it closes or idles out).
    pub(super) sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
    /// `initialize` requests admitted and not yet answered.
    opening: AtomicUsize,
    pub(super) index: Option<crate::keeper::IndexKeeper>,
}

struct Gate {
    running: usize,
    /// Token bucket: calls that may start now.
    allowance: f64,
    refilled: Instant,
}

/// A call admitted under its tenant's limits; dropping it frees the slot.
pub struct Permit(Arc<Tenant>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.gate.lock().unwrap().running -= 1;
    }
}

/// An MCP session being opened, counted against the tenant's cap until the
/// session is in rmcp's map (or its creation failed).
pub(super) struct Opening(Arc<Tenant>);

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
            self.metrics.lock().unwrap().limit_hit(limit);
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
    pub(super) async fn open_session(self: &Arc<Self>) -> Result<Opening, &'static str> {
        // Counted first, so that concurrent `initialize`s cannot all pass.
        let opening = self.opening.fetch_add(1, Ordering::SeqCst) + 1;
        let guard = Opening(self.clone());
        if self.sessions.sessions.read().await.len() + opening > self.max_sessions {
            self.metrics.lock().unwrap().limit_hit("sessions");
            return Err("sessions");
        }
        self.admit_within(false)?;
        Ok(guard)
    }

    /// Counts a finished call and logs it (never contents, never tokens).
    pub fn record(&self, op: &str, status: u16, took: Duration) {
        let ms = took.as_secs_f64() * 1000.0;
        self.metrics.lock().unwrap().call(op, status, ms);
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

impl Tenant {
    /// Opens the tenant `t` configures: its sandbox under its limits, and
    /// its MCP service (which accepts `allowed_hosts` in `Host`).
    pub(super) fn open(t: &TenantConfig, allowed_hosts: &[String]) -> Result<Arc<Tenant>, String> {
        let timeout =
            Duration::from_millis(t.timeout_ms.unwrap_or(TIMEOUT_MS.max).clamp(TIMEOUT_MS.min, TIMEOUT_MS.max));
        let memory = t.memory_mib.map_or(MEMORY.default, |mib| (mib as u64).saturating_mul(1 << 20));
        let policy = Policy {
            memory_limit: memory.clamp(MEMORY.min, MEMORY.max) as usize,
            max_timeout: timeout,
            deadline_grace: Duration::from_millis(SERVE_DEADLINE_GRACE_MS),
            cursor_key: format!("tenant:{}", t.name),
            disabled_redaction_rules: t.disabled_redaction_rules.clone(),
            ..Policy::default()
        };
        let sandbox = Sandbox::open(&t.workspace, policy)
            .map_err(|e| format!("tenant {}: {e}", t.name))?
            .with_index(t.index.unwrap_or(true));
        let name = t.name.clone();
        let (sandbox, index) = crate::keeper::keep_fresh(sandbox, t.shared_storage, move |fs| {
            let message = crate::keeper::SHARED_STORAGE;
            super::log(serde_json::json!({"event": "shared_storage", "tenant": name, "fs": fs, "message": message}));
        });
        let rate = t.requests_per_second.unwrap_or(REQUESTS_PER_SECOND as f64);
        let sessions = Arc::new(LocalSessionManager::default());
        Ok(Arc::new_cyclic(|weak: &Weak<Tenant>| {
            let gate: Arc<dyn CallGate> = Arc::new(TenantGate(weak.clone()));
            let sandbox_for_mcp = sandbox.clone();
            let mcp = StreamableHttpService::new(
                move || Ok(McpServer::with_gate(sandbox_for_mcp.clone(), gate.clone())),
                sessions.clone(),
                StreamableHttpServerConfig::default().with_allowed_hosts(allowed_hosts.to_vec()),
            );
            Tenant {
                name: t.name.clone(),
                sandbox,
                max_concurrent: t.max_concurrent.unwrap_or(MAX_CONCURRENT),
                rate,
                gate: Mutex::new(Gate { running: 0, allowance: rate.max(1.0), refilled: Instant::now() }),
                metrics: Mutex::new(Metrics::default()),
                mcp,
                sessions,
                max_sessions: t.max_sessions.unwrap_or(MAX_SESSIONS),
                opening: AtomicUsize::new(0),
                index,
            }
        }))
    }
}

/// The tenant's MCP calls go through its admission and accounting. Weak:
/// the tenant holds the MCP service that holds this.
struct TenantGate(Weak<Tenant>);

impl CallGate for TenantGate {
    fn call(&self, name: &str, args: JsonObject) -> Result<GatedCall, JsonObject> {
        let Some(tenant) = self.0.upgrade() else { return Err(args) };
        let name = name.to_string();
        Ok(Box::pin(async move {
            tenant.call(&name, args).await.map_err(|refusal| match refusal {
                Refusal::Tool(e) => CallError::Tool(e),
                limit @ Refusal::Limit(_) => CallError::Refused(limit.to_string()),
            })
        }))
    }
}

/// Why a call got no result.
#[derive(Debug)]
pub enum Refusal {
    Limit(&'static str),
    Tool(ToolError),
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
