//! The agent tools' arguments, read as `sandgrep serve` reads them: its own
//! files (host/src/tools/), compiled here against this crate's types, with
//! the two small types they expect of their parent module.

use serde_json::{Map, Value};

use crate::SearchError;

#[path = "../../host/src/tools/args.rs"]
mod args;
#[path = "../../host/src/tools/requests.rs"]
mod requests;
// (Only the tools' definitions are used here: `INSTRUCTIONS` is MCP's.)
#[allow(dead_code)]
#[path = "../../host/src/tools/schema.rs"]
mod schema;

/// Why a call got no answer: its arguments, or the operation (the host's
/// `ToolError`, less what only a host meets: its deadline, memory cap and
/// crashes, which a platform answers in its own way here).
#[derive(Debug)]
pub enum ToolError {
    Arguments(String),
    Failed(SearchError),
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::Arguments(m) => write!(f, "invalid arguments: {m}"),
            ToolError::Failed(e) => f.write_str(&sandgrep_contract::search_error_message!(e)),
        }
    }
}

/// The request of tool `name` (one of the four) from its JSON arguments.
pub enum Request {
    SearchText(crate::SearchTextRequest),
    SearchAst(crate::SearchAstRequest),
    ListFiles(crate::ListFilesRequest),
    ReadFile(crate::ReadFileRequest),
}

/// Reads the arguments of tool `name` into its request, as the host's
/// `tools::call` does.
pub fn request(name: &str, args: &Map<String, Value>) -> Result<Request, ToolError> {
    let def = schema::definitions().into_iter().find(|d| d.name == name);
    let def = def.ok_or_else(|| ToolError::Arguments(format!("unknown tool {name:?}")))?;
    let mut a = args::Args::new(args, &def.arguments(), name)?;
    Ok(match name {
        "search_text" => Request::SearchText(requests::search_text(&mut a)?),
        "search_ast" => Request::SearchAst(requests::search_ast(&mut a)?),
        "list_files" => Request::ListFiles(requests::list_files(&mut a)?),
        _ => Request::ReadFile(requests::read_file(&mut a)?),
    })
}
