//! sandgrep's `/v1` JSON operations as a `wasi:http/proxy` component, for
//! the WebAssembly platforms (`wasmtime serve`, Spin, wasmCloud, runwasi):
//! `POST /v1/search-text`, `/v1/search-ast`, `/v1/list-files` and
//! `/v1/read-file` take the same body and give the same answer, error JSON
//! and status codes as `sandgrep serve` (host/src/serve), on one workspace:
//! the directory the platform preopens (at `/`). There are no tenants and no
//! tokens here: the platform routes and authenticates.
//!
//! This crate is only the front: it imports `sandgrep:search/search` and
//! `sandgrep:search/files`, and host/build.rs plugs those imports with the
//! exports of `sandgrep.wasm` (wasm-compose) into `sandgrep-http.wasm`,
//! which exports `wasi:http/incoming-handler` alone — the policy-taking
//! functions of the search component are not reachable from outside.
//!
//! One mapping, not two: the arguments are read by the tools' own parser and
//! request builder (host/src/tools/args.rs, requests.rs and schema.rs) and
//! answers are shaped by host/src/json.rs — the same files, compiled here
//! against this crate's bindings of the same WIT. What is this crate's own
//! is small: the routes, the error statuses (serve's `Refusal::status`), the
//! policy, and the wasi:http plumbing. tests/wasi_http.rs compares the two
//! servers' answers request by request.

mod bindings {
    wit_bindgen::generate!({
        inline: r#"
            package sandgrep:http-front;

            world front {
                import sandgrep:search/search@0.6.0;
                import sandgrep:search/files@0.6.0;
            }
        "#,
        path: "../wit",
        additional_derives: [serde::Serialize],
        generate_all,
    });
}

#[path = "../../host/src/defaults.rs"]
mod defaults;
#[path = "../../host/src/json.rs"]
mod json;
mod route;
mod tools;
#[cfg(target_arch = "wasm32")]
mod wasi;

pub use bindings::sandgrep::search::files::{
    FileEntry, ListFilesRequest, ListFilesResponse, RangeType, ReadFileRequest, ReadFileResponse, ReadRange,
};
pub use bindings::sandgrep::search::search::{
    CaseMode, OutputMode, QueryMode, SearchAstRequest, SearchAstResponse, SearchTextRequest, SearchTextResponse,
};
pub use bindings::sandgrep::search::types::{Policy, SearchError};
pub use route::{answer, Answer, Body, Operations};

/// The policy of every call: `sandgrep serve`'s defaults (redaction on, the
/// built-in denylist, every redaction rule). Nothing in a request reaches
/// it. The workspace's surroundings are out of sight here: its own name
/// (`sandgrep serve` denies more in a workspace that is a `.ssh`, `.git`,
/// `.aws`, `.docker` or `.kube` directory), which the operator gives as
/// `SANDGREP_WORKSPACE_NAME` (the platform's environment, as `wasmtime serve
/// --env`), and whether a git repository lies above it (`.gitignore` files
/// then apply) — docs/deploy.md says so.
pub fn policy() -> Policy {
    policy_for(std::env::var("SANDGREP_WORKSPACE_NAME").ok().as_deref())
}

/// [`policy`] for a workspace directory named `name`, when known.
fn policy_for(name: Option<&str>) -> Policy {
    Policy {
        redact: true,
        extra_deny: name.map(sandgrep_contract::deny::inside).unwrap_or_default(),
        inside_git_repository: false,
        cursor_key: String::new(),
        disabled_redaction_rules: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_is_serves_default_and_fixed() {
        // What `sandgrep serve` gives a tenant with no policy keys: redaction
        // on, every rule, the built-in denylist alone.
        let p = policy_for(None);
        assert!(p.redact);
        assert!(p.extra_deny.is_empty() && p.disabled_redaction_rules.is_empty());
        assert!(!p.inside_git_repository && p.cursor_key.is_empty());
        // A workspace the operator names as a credentials directory: its
        // files denied, as `sandgrep serve` denies them there.
        assert_eq!(policy_for(Some(".aws")).extra_deny, ["/credentials"]);
        assert_eq!(policy_for(Some(".SSH")).extra_deny, ["*"]);
        assert!(policy_for(Some("src")).extra_deny.is_empty());
    }
}
