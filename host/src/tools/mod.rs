//! The agent-facing tools — `search_text`, `search_ast`, `list_files`,
//! `read_file` — as front ends that take JSON arguments serve them (the MCP
//! server, and the JSON endpoints of a server): argument names, aliases,
//! defaults and result shapes of the tool guide the contract adopts, JSON
//! Schemas, and a compact text rendering beside the structured result.
//!
//! - `schema`: what `tools/list` says of each tool (names, descriptions,
//!   input and output schemas) and the instructions for agents;
//! - `args`: the argument parser, lenient where agents slip (`pattern`/`regex`
//!   for `query`, `directory`/`dir`/`path` for `root`, a single string where a
//!   list is expected), strict where a slip would silently change the answer
//!   (unknown argument names and wrong types are errors that name the
//!   argument);
//! - `requests`: arguments to the operation's typed request (the
//!   `wasi:http` component, `http/`, compiles the same file);
//! - `call`: a call — the request, the sandbox, and the response reshaped
//!   to the tool guide's result and rendered as text.

use serde_json::Value;

use crate::Error;

mod args;
mod call;
mod requests;
mod schema;

pub use call::call;
pub use schema::{definitions, ToolDef, INSTRUCTIONS};

/// A tool's answer: the structured result (the tool guide's shape), its text
/// rendering, the notes on it (warnings, where to go on) — apart, so that no
/// path or line in the text can pass for one — and the response as the CLI's
/// `--json` prints it.
pub struct ToolOutput {
    pub structured: Value,
    pub text: String,
    pub notes: String,
    pub response: Value,
}

#[derive(Debug)]
pub enum ToolError {
    /// No such tool: a protocol error.
    UnknownTool(String),
    /// The arguments are malformed: a tool error the agent can fix.
    Arguments(String),
    /// The operation failed (a bad pattern, a path outside, a deadline...).
    Failed(Error),
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::UnknownTool(n) => {
                write!(f, "unknown tool {n:?}: the tools are search_text, search_ast, list_files, read_file")
            }
            ToolError::Arguments(m) => write!(f, "invalid arguments: {m}"),
            ToolError::Failed(e) => write!(f, "{e}"),
        }
    }
}
