//! `sandgrep mcp`: the agent tools (`tools.rs`) as an MCP server on stdio,
//! on the official Rust SDK (`rmcp`). Malformed arguments and failed
//! operations are tool errors (`isError`) with the CLI's messages; only an
//! unknown tool is a protocol error. Each call runs on the blocking pool in
//! its own sandboxed instance, so a slow or failed call affects no other.

use std::sync::{Arc, Weak};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::serve::{Refusal, Tenant};
use crate::tools::{self, ToolError};
use crate::{render, Sandbox};

/// The MCP server for one workspace.
#[derive(Clone)]
pub struct McpServer {
    sandbox: Sandbox,
    /// In `serve`: the tenant whose limits and counters calls go through.
    tenant: Option<Weak<Tenant>>,
}

impl McpServer {
    pub fn new(sandbox: Sandbox) -> McpServer {
        McpServer { sandbox, tenant: None }
    }

    pub fn for_tenant(sandbox: Sandbox, tenant: Weak<Tenant>) -> McpServer {
        McpServer { sandbox, tenant: Some(tenant) }
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
                let mut t = Tool::new(d.name, d.description, object(d.input_schema))
                    .with_raw_output_schema(object(d.output_schema));
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
        let outcome = match self.tenant.as_ref().and_then(Weak::upgrade) {
            Some(tenant) => tenant.call(&name, args).await,
            None => {
                let sandbox = self.sandbox.clone();
                tokio::task::spawn_blocking(move || tools::call(&sandbox, &name, &args))
                    .await
                    .map_err(|e| ErrorData::internal_error(format!("the call failed: {e}"), None))?
                    .map_err(Refusal::Tool)
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
            Err(Refusal::Tool(e @ ToolError::UnknownTool(_))) => {
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
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let service = McpServer::new(sandbox).serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
        service.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    })
}
