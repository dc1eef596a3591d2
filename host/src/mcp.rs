//! `sandgrep mcp`: the agent tools (`tools`) as an MCP server on stdio,
//! on the official Rust SDK (`rmcp`). Malformed arguments and failed
//! operations are tool errors (`isError`) with the CLI's messages; only an
//! unknown tool is a protocol error. Each call runs on the blocking pool in
//! its own sandboxed instance, so a slow or failed call affects no other.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::tools::{self, ToolError, ToolOutput};
use crate::{render, Sandbox};

/// The MCP server for one workspace.
#[derive(Clone)]
pub struct McpServer {
    sandbox: Sandbox,
    /// Set by a server in front (`serve`): what admits and counts calls.
    gate: Option<Arc<dyn CallGate>>,
}

/// What a server in front of an MCP server runs its tool calls through
/// (`serve` passes one that admits each call under its tenant's limits and
/// counts it), so that this server knows nothing of tenants.
pub trait CallGate: Send + Sync + 'static {
    /// Runs tool `name` with `args`; or, when the gate is gone (its server is
    /// shutting down), gives `args` back for the call to run directly.
    fn call(&self, name: &str, args: JsonObject) -> Result<GatedCall, JsonObject>;
}

/// A call running through a [`CallGate`].
pub type GatedCall = Pin<Box<dyn Future<Output = Result<ToolOutput, CallError>> + Send>>;

/// Why a call got no result.
#[derive(Debug)]
pub enum CallError {
    /// The tool refused it or failed (an unknown tool is a protocol error).
    Tool(ToolError),
    /// The server in front refused it (a limit); the message says why.
    Refused(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Tool(e) => write!(f, "{e}"),
            CallError::Refused(m) => f.write_str(m),
        }
    }
}

impl McpServer {
    pub fn new(sandbox: Sandbox) -> McpServer {
        McpServer { sandbox, gate: None }
    }

    /// A server whose calls go through `gate`.
    pub fn with_gate(sandbox: Sandbox, gate: Arc<dyn CallGate>) -> McpServer {
        McpServer { sandbox, gate: Some(gate) }
    }
}

fn object(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("schemas are objects"),
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("sandgrep", env!("CARGO_PKG_VERSION")))
            .with_instructions(tools::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = tools::definitions()
            .into_iter()
            .map(|d| {
                // Every tool only reads the one workspace: hosts may run
                // them without asking.
                let annotations = ToolAnnotations::with_title(d.title)
                    .read_only(true)
                    .destructive(false)
                    .idempotent(true)
                    .open_world(false);
                let mut t = Tool::new(d.name, d.description, object(d.input_schema))
                    .with_raw_output_schema(object(d.output_schema))
                    .annotate(annotations);
                t.title = Some(d.title.into());
                t
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let gated = match &self.gate {
            Some(gate) => gate.call(&name, args),
            None => Err(args),
        };
        let outcome = match gated {
            Ok(call) => call.await,
            Err(args) => {
                let sandbox = self.sandbox.clone();
                tokio::task::spawn_blocking(move || tools::call(&sandbox, &name, &args))
                    .await
                    .map_err(|e| ErrorData::internal_error(format!("the call failed: {e}"), None))?
                    .map_err(CallError::Tool)
            }
        };
        let result = match outcome {
            Ok(out) => {
                // The notes in a block of their own: a path or a line of the
                // text cannot pass for one.
                let mut content = vec![ContentBlock::text(out.text)];
                if !out.notes.is_empty() {
                    content.push(ContentBlock::text(out.notes));
                }
                let mut r = CallToolResult::success(content);
                r.structured_content = Some(out.structured);
                r
            }
            Err(CallError::Tool(e @ ToolError::UnknownTool(_))) => {
                return Err(ErrorData::invalid_params(e.to_string(), None));
            }
            // A message may quote a workspace path: escaped like the results.
            Err(e) => {
                CallToolResult::error(vec![ContentBlock::text(format!("Error: {}", render::path(&e.to_string())))])
            }
        };
        Ok(result.into())
    }
}

/// Serves `sandbox` over MCP on stdin/stdout until the client goes away.
pub fn serve_stdio(sandbox: Sandbox) -> std::io::Result<()> {
    // The index is built (when missing) and kept fresh beside the calls.
    let (sandbox, _keeper) =
        crate::keeper::keep_fresh(sandbox, None, |fs| eprintln!("sandgrep: {} ({fs})", crate::keeper::SHARED_STORAGE));
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let service = McpServer::new(sandbox).serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
        service.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    })
}
