//! A request to its answer, as `sandgrep serve` answers it
//! (host/src/serve/mod.rs: `router`, `operation`, `read_body`, and
//! tenant.rs's `Refusal::status`): the same routes, status codes and JSON,
//! less what the platform does here — authentication and tenants, rate,
//! concurrency and connection limits, the time a body may take to arrive.
//! Kept apart from the wasi:http plumbing so that its tests run natively.

use serde_json::{json, Map, Value};

use sandgrep_contract::limits::MAX_BODY;

use crate::tools::{self, Request, ToolError};
use crate::{
    ListFilesRequest, ListFilesResponse, ReadFileRequest, ReadFileResponse, SearchAstRequest, SearchAstResponse,
    SearchError, SearchTextRequest, SearchTextResponse,
};

/// An answer: status, headers and body.
#[derive(Debug, PartialEq)]
pub struct Answer {
    pub status: u16,
    /// `None` for an empty answer (a 405 or a HEAD).
    pub content_type: Option<&'static str>,
    /// The methods a route takes, for a 405.
    pub allow: Option<&'static str>,
    pub body: Vec<u8>,
}

/// A request's body as it arrived.
pub enum Body {
    Read(Vec<u8>),
    /// Over [`MAX_BODY`] bytes (declared or read): it is not read further.
    TooLarge,
    /// The stream failed.
    Failed(String),
}

/// The four operations, under the component's one policy.
pub trait Operations {
    fn search_text(&self, r: &SearchTextRequest) -> Result<SearchTextResponse, SearchError>;
    fn search_ast(&self, r: &SearchAstRequest) -> Result<SearchAstResponse, SearchError>;
    fn list_files(&self, r: &ListFilesRequest) -> Result<ListFilesResponse, SearchError>;
    fn read_file(&self, r: &ReadFileRequest) -> Result<ReadFileResponse, SearchError>;
}

fn json_answer(status: u16, value: &Value) -> Answer {
    let body = serde_json::to_vec(value).expect("JSON values serialize");
    Answer { status, content_type: Some("application/json"), allow: None, body }
}

fn error(status: u16, message: &str) -> Answer {
    json_answer(status, &json!({"error": message}))
}

fn text(method: &str, body: &str) -> Answer {
    let body = if method == "HEAD" { Vec::new() } else { body.as_bytes().to_vec() };
    Answer { status: 200, content_type: Some("text/plain; charset=utf-8"), allow: None, body }
}

fn not_allowed(allow: &'static str) -> Answer {
    Answer { status: 405, content_type: None, allow: Some(allow), body: Vec::new() }
}

/// The answer to `method` on `path` (with its query, if any); `body` is
/// read only for an operation.
pub fn answer(method: &str, path: &str, body: impl FnOnce() -> Body, ops: &impl Operations) -> Answer {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    match path {
        "/healthz" | "/readyz" if !matches!(method, "GET" | "HEAD") => return not_allowed("GET,HEAD"),
        "/healthz" => return text(method, "ok\n"),
        "/readyz" => return text(method, "ready\n"),
        _ => {}
    }
    let Some(op) = path.strip_prefix("/v1/").filter(|op| !op.is_empty() && !op.contains('/')) else {
        return error(404, "no such endpoint");
    };
    if method != "POST" {
        return not_allowed("POST");
    }
    let tool = match op {
        "search-text" => "search_text",
        "search-ast" => "search_ast",
        "list-files" => "list_files",
        "read-file" => "read_file",
        _ => return error(404, "no such operation (search-text, search-ast, list-files, read-file)"),
    };
    let body = match body() {
        Body::Read(b) => b,
        Body::TooLarge => return error(413, &format!("the body is over {MAX_BODY} bytes")),
        Body::Failed(e) => return error(400, &format!("reading the body: {e}")),
    };
    let args = match serde_json::from_slice::<Value>(if body.is_empty() { b"{}" } else { &body }) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return error(400, "the body must be a JSON object of arguments"),
        Err(e) => return error(400, &format!("the body is not JSON: {e}")),
    };
    match call(tool, &args, ops) {
        Ok(response) => json_answer(200, &response),
        Err(e) => error(status(&e), &e.to_string()),
    }
}

/// Tool `tool`'s answer: the response as `sandgrep serve`'s `/v1` gives it.
fn call(tool: &str, args: &Map<String, Value>, ops: &impl Operations) -> Result<Value, ToolError> {
    use crate::json::to_value;
    let failed = ToolError::Failed;
    Ok(match tools::request(tool, args)? {
        Request::SearchText(r) => to_value(&ops.search_text(&r).map_err(failed)?),
        Request::SearchAst(r) => to_value(&ops.search_ast(&r).map_err(failed)?),
        Request::ListFiles(r) => to_value(&ops.list_files(&r).map_err(failed)?),
        Request::ReadFile(r) => to_value(&ops.read_file(&r).map_err(failed)?),
    })
}

/// The status of a failed call, as `sandgrep serve`'s `Refusal::status`
/// gives it for the same error.
fn status(e: &ToolError) -> u16 {
    match e {
        ToolError::Arguments(_) => 400,
        ToolError::Failed(e) => match e {
            SearchError::NotFound(_) => 404,
            SearchError::Denied(_) => 403,
            SearchError::TooLarge(_) => 413,
            SearchError::Io(_) => 500,
            SearchError::InvalidArgument(_)
            | SearchError::InvalidPattern(_)
            | SearchError::OutsideWorkspace(_)
            | SearchError::BinaryFile(_) => 400,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::sandgrep::search::types::SkipCounts;
    use crate::{FileEntry, RangeType, ReadRange};

    /// Answers every call with the error it is given, or a one-file
    /// listing and a small read.
    struct Fake(Option<SearchError>);

    impl Fake {
        fn fail<T>(&self) -> Result<T, SearchError> {
            Err(self.0.clone().expect("a failing fake"))
        }
    }

    impl Operations for Fake {
        fn search_text(&self, _: &SearchTextRequest) -> Result<SearchTextResponse, SearchError> {
            self.fail()
        }
        fn search_ast(&self, _: &SearchAstRequest) -> Result<SearchAstResponse, SearchError> {
            self.fail()
        }
        fn list_files(&self, r: &ListFilesRequest) -> Result<ListFilesResponse, SearchError> {
            if self.0.is_some() {
                return self.fail();
            }
            let path = r.root.clone().unwrap_or_default();
            Ok(ListFilesResponse {
                entries: vec![FileEntry {
                    path,
                    is_dir: false,
                    size: None,
                    modified: None,
                    modified_ns: None,
                    accessed_ns: None,
                }],
                has_more: false,
                timed_out: false,
                next_cursor: None,
                total: Some(1),
                skipped: SkipCounts { binary: 0, too_large: 0, denied: 0, unreadable: 0, ignored: 0, hidden: 0 },
                warnings: Vec::new(),
            })
        }
        fn read_file(&self, r: &ReadFileRequest) -> Result<ReadFileResponse, SearchError> {
            if self.0.is_some() {
                return self.fail();
            }
            Ok(ReadFileResponse {
                path: r.path.clone(),
                content: "x\n".into(),
                is_truncated: false,
                range: ReadRange {
                    range_type: RangeType::Lines,
                    offset_bytes: None,
                    max_bytes: None,
                    start_line: Some(1),
                    max_lines: Some(1),
                },
                total_bytes: 2,
                total_lines: Some(1),
                next_offset: None,
                next_line: None,
                lines_redacted: 0,
                redacted_by: Vec::new(),
                warnings: Vec::new(),
            })
        }
    }

    fn post(path: &str, body: &str, ops: &Fake) -> (u16, Value) {
        let a = answer("POST", path, || Body::Read(body.as_bytes().to_vec()), ops);
        assert_eq!(a.content_type, Some("application/json"));
        (a.status, serde_json::from_slice(&a.body).unwrap())
    }

    #[test]
    fn routes_and_methods_answer_as_serve() {
        let ok = Fake(None);
        let never = || -> Body { panic!("the body is read only for an operation") };
        assert_eq!(answer("GET", "/healthz", never, &ok).body, b"ok\n");
        assert_eq!(answer("GET", "/readyz?x=1", never, &ok).body, b"ready\n");
        assert_eq!(answer("POST", "/healthz", never, &ok).status, 405);
        let a = answer("GET", "/v1/search-text", never, &ok);
        assert_eq!((a.status, a.allow, a.body.len()), (405, Some("POST"), 0));
        for path in ["/", "/mcp", "/v1", "/v1/", "/v1/list-files/x", "/v2/list-files"] {
            let a = answer("POST", path, never, &ok);
            assert_eq!((a.status, &a.body[..]), (404, &br#"{"error":"no such endpoint"}"#[..]), "{path}");
        }
        let a = answer("POST", "/v1/delete", never, &ok);
        assert_eq!(a.status, 404);
        assert!(String::from_utf8_lossy(&a.body).contains("no such operation"));
    }

    #[test]
    fn bodies_answer_as_serve() {
        let ok = Fake(None);
        let too_large = answer("POST", "/v1/list-files", || Body::TooLarge, &ok);
        assert_eq!(too_large.status, 413);
        assert_eq!(too_large.body, format!(r#"{{"error":"the body is over {MAX_BODY} bytes"}}"#).into_bytes());
        let (status, v) = post("/v1/list-files", "[1]", &ok);
        assert_eq!((status, v["error"].as_str()), (400, Some("the body must be a JSON object of arguments")));
        let (status, v) = post("/v1/list-files", "{", &ok);
        assert_eq!(status, 400);
        assert!(v["error"].as_str().unwrap().starts_with("the body is not JSON: EOF while parsing"), "{v}");
        // An empty body is no arguments.
        let (status, v) = post("/v1/list-files", "", &ok);
        assert_eq!((status, v["entries"][0]["path"].as_str()), (200, Some(".")));
        // The arguments as the tools read them: aliases, and their errors.
        let (status, v) = post("/v1/list-files", r#"{"dir": "src"}"#, &ok);
        assert_eq!((status, v["entries"][0]["path"].as_str()), (200, Some("src")));
        let (status, v) = post("/v1/read-file", r#"{"path": "a", "max_lines": -1}"#, &ok);
        assert_eq!(status, 400);
        assert_eq!(v["error"], "invalid arguments: max_lines must be a non-negative integer, not -1");
        let (status, v) = post("/v1/read-file", "{}", &ok);
        assert_eq!(
            (status, v["error"].as_str()),
            (400, Some("invalid arguments: path is required (a file relative to the workspace)"))
        );
        // Enum values in snake case, as the host's JSON.
        let (_, v) = post("/v1/read-file", r#"{"path": "a"}"#, &ok);
        assert_eq!(v["range"]["range_type"], "lines");
    }

    #[test]
    fn errors_have_serves_statuses_and_messages() {
        for (e, status, message) in [
            (SearchError::NotFound("a.txt".into()), 404, "a.txt: not found in the workspace"),
            (SearchError::Denied(".env".into()), 403, ".env: denied (secrets and .git internals are never read)"),
            (SearchError::TooLarge("big".into()), 413, "big: too large"),
            (SearchError::Io("disk".into()), 500, "disk"),
            (SearchError::InvalidPattern("(".into()), 400, "invalid pattern: ("),
            (SearchError::OutsideWorkspace("..".into()), 400, "..: outside the workspace"),
            (SearchError::BinaryFile("b".into()), 400, "b: binary file"),
            (SearchError::InvalidArgument("x".into()), 400, "invalid argument: x"),
        ] {
            let (got, v) = post("/v1/search-text", r#"{"query": "x"}"#, &Fake(Some(e)));
            assert_eq!((got, v), (status, json!({"error": message})));
        }
    }
}
