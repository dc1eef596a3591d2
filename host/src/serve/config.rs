//! The server's config file (TOML) and its checks: every problem is a clear
//! message before the server starts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use sandgrep_contract::limits::{HEADER_TIMEOUT_MS, MAX_CONNECTIONS, MIN_TOKEN_CHARS};

pub(super) const DEFAULT_LISTEN: &str = "127.0.0.1:7878";

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
    /// `HEADER_TIMEOUT_MS`); its body must follow within the same time, and a
    /// kept-alive connection is closed when its next request takes longer to
    /// start.
    pub header_timeout_ms: Option<u64>,
    /// Connections open at once (default `MAX_CONNECTIONS`); past it, new
    /// connections get a 503 and are closed.
    pub max_connections: Option<usize>,
    /// Asked to stop (SIGTERM, Ctrl-C): how long it goes on accepting calls
    /// while `/readyz` answers 503, ms (default `STOP_DRAIN_MS`).
    pub drain_ms: Option<u64>,
    /// Then how long calls in flight have to finish before it exits, ms
    /// (default `STOP_TIMEOUT_MS`).
    pub stop_timeout_ms: Option<u64>,
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
    // Defaults and ranges: `sandgrep_contract::limits`.
    /// Calls running at once (default `MAX_CONCURRENT`).
    pub max_concurrent: Option<usize>,
    /// Calls per second, sustained (default `REQUESTS_PER_SECOND`; bursts
    /// up to that many).
    pub requests_per_second: Option<f64>,
    /// Longest a call may run (default and cap: `TIMEOUT_MS`'s maximum).
    pub timeout_ms: Option<u64>,
    /// Memory cap of one call's instance, MiB (default and range: `MEMORY`).
    pub memory_mib: Option<usize>,
    /// MCP sessions open at once (default `MAX_SESSIONS`); `initialize` past
    /// it is a 429.
    pub max_sessions: Option<usize>,
    /// Build an index of the workspace in the background, keep it fresh and
    /// search through it (default true).
    pub index: Option<bool>,
    /// Whether the workspace is on shared storage (a network or FUSE file
    /// system other machines write): then every call checks file metadata
    /// against the index instead of trusting the watcher. Unset: detected
    /// from the mount it lies on and the mounts inside it.
    pub shared_storage: Option<bool>,
    /// Redaction rules switched off for this tenant, by name (the
    /// operator's choice; a request can never change it).
    #[serde(default)]
    pub disabled_redaction_rules: Vec<String>,
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
        let out_of = |v: u64, l: sandgrep_contract::limits::Limit| v < l.min || v > l.max;
        if self.header_timeout_ms.is_some_and(|ms| out_of(ms, HEADER_TIMEOUT_MS)) {
            let l = HEADER_TIMEOUT_MS;
            return Err(format!("header_timeout_ms must be between {} and {}", l.min, l.max));
        }
        if self.max_connections.is_some_and(|n| out_of(n as u64, MAX_CONNECTIONS)) {
            let l = MAX_CONNECTIONS;
            return Err(format!("max_connections must be between {} and {}", l.min, l.max));
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
        let cache = crate::engine::real_cache_dir();
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
            // Every tenant's index lives in the cache directory: inside one
            // tenant's workspace, it would show that tenant the others'.
            if let Some(cache) = cache.as_ref().filter(|c| c.starts_with(&ws) || ws.starts_with(c)) {
                return Err(format!(
                    "tenant {name}: the cache directory {} overlaps its workspace {}: set SANDGREP_CACHE_DIR outside \
                     every workspace",
                    cache.display(),
                    ws.display()
                ));
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
    pub(super) fn token_hashes(&self) -> Result<Vec<[u8; 32]>, String> {
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
