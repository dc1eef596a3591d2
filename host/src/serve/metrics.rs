//! The server's counters and their Prometheus text (`GET /metrics`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use axum::http::StatusCode;

use super::tenant::Tenant;

/// One tenant's counters.
#[derive(Default)]
pub(super) struct Metrics {
    /// (operation, HTTP status) → calls.
    calls: BTreeMap<(String, u16), u64>,
    /// Refusals by limit: "concurrency", "rate", "sessions".
    limit_hits: BTreeMap<&'static str, u64>,
    /// Durations of answered calls, ms, bucketed by the upper bounds below.
    buckets: [u64; BUCKETS_MS.len() + 1],
    total_ms: f64,
}

const BUCKETS_MS: [f64; 12] = [1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 5000.0, 30000.0];

impl Metrics {
    /// Counts a finished call of `op` that took `ms`.
    pub(super) fn call(&mut self, op: &str, status: u16, ms: f64) {
        *self.calls.entry((op.to_string(), status)).or_default() += 1;
        // Latencies are of calls that ran; refusals are counted above.
        if status != StatusCode::TOO_MANY_REQUESTS.as_u16() {
            let i = BUCKETS_MS.iter().position(|&b| ms <= b).unwrap_or(BUCKETS_MS.len());
            self.buckets[i] += 1;
            self.total_ms += ms;
        }
    }

    /// Counts a refusal by `limit`.
    pub(super) fn limit_hit(&mut self, limit: &'static str) {
        *self.limit_hits.entry(limit).or_default() += 1;
    }
}

/// The accept loop's counters.
#[derive(Default)]
pub(super) struct Connections {
    pub(super) open: AtomicUsize,
    pub(super) refused: AtomicU64,
}

/// Every counter, as Prometheus text.
pub(super) async fn prometheus(tenants: &[Arc<Tenant>], connections: &Connections) -> String {
    let mut out = String::new();
    out.push_str("# TYPE sandgrep_calls_total counter\n");
    for t in tenants {
        let m = t.metrics.lock().unwrap();
        for ((op, status), n) in &m.calls {
            out.push_str(&format!(
                "sandgrep_calls_total{{tenant=\"{}\",op=\"{op}\",status=\"{status}\"}} {n}\n",
                t.name
            ));
        }
    }
    out.push_str("# TYPE sandgrep_limit_hits_total counter\n");
    for t in tenants {
        for (limit, n) in &t.metrics.lock().unwrap().limit_hits {
            out.push_str(&format!("sandgrep_limit_hits_total{{tenant=\"{}\",limit=\"{limit}\"}} {n}\n", t.name));
        }
    }
    // 1: the tenant's workspace is on shared storage, and every call checks
    // file metadata itself (its watcher sees only this machine's writes).
    out.push_str("# TYPE sandgrep_index_checks_per_call gauge\n");
    for t in tenants {
        let Some(index) = &t.index else { continue };
        let n = u8::from(index.per_call_checks().is_some());
        out.push_str(&format!("sandgrep_index_checks_per_call{{tenant=\"{}\"}} {n}\n", t.name));
    }
    out.push_str("# TYPE sandgrep_mcp_sessions gauge\n");
    for t in tenants {
        let n = t.sessions.sessions.read().await.len();
        out.push_str(&format!("sandgrep_mcp_sessions{{tenant=\"{}\"}} {n}\n", t.name));
    }
    out.push_str("# TYPE sandgrep_connections_open gauge\n");
    out.push_str(&format!("sandgrep_connections_open {}\n", connections.open.load(Ordering::Relaxed)));
    out.push_str("# TYPE sandgrep_connections_refused_total counter\n");
    out.push_str(&format!("sandgrep_connections_refused_total {}\n", connections.refused.load(Ordering::Relaxed)));
    out.push_str("# TYPE sandgrep_call_duration_ms histogram\n");
    for t in tenants {
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
    out
}
