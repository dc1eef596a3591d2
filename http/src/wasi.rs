//! The `wasi:http/incoming-handler` export: a request's method, path and
//! body in, [`crate::answer`]'s answer out; the operations are the imports
//! the composition plugs with sandgrep.wasm.

use std::io::Write;

use wasip2::exports::http::incoming_handler::Guest;
use wasip2::http::types::{
    Fields, IncomingBody, IncomingRequest, Method, OutgoingBody, OutgoingResponse, ResponseOutparam,
};
use wasip2::io::streams::StreamError;

use sandgrep_contract::limits::MAX_BODY;

use crate::bindings::sandgrep::search::{files, search};
use crate::route::{answer, Answer, Body, Operations};
use crate::{
    policy, ListFilesRequest, ListFilesResponse, ReadFileRequest, ReadFileResponse, SearchAstRequest,
    SearchAstResponse, SearchError, SearchTextRequest, SearchTextResponse,
};

/// The operations of the plugged search component, each under [`policy`].
struct Imports;

impl Operations for Imports {
    fn search_text(&self, r: &SearchTextRequest) -> Result<SearchTextResponse, SearchError> {
        search::search_text(r, &policy())
    }
    fn search_ast(&self, r: &SearchAstRequest) -> Result<SearchAstResponse, SearchError> {
        search::search_ast(r, &policy())
    }
    fn list_files(&self, r: &ListFilesRequest) -> Result<ListFilesResponse, SearchError> {
        files::list_files(r, &policy())
    }
    fn read_file(&self, r: &ReadFileRequest) -> Result<ReadFileResponse, SearchError> {
        files::read_file(r, &policy())
    }
}

struct Handler;

impl Guest for Handler {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let method = match request.method() {
            Method::Get => "GET".to_string(),
            Method::Head => "HEAD".into(),
            Method::Post => "POST".into(),
            Method::Put => "PUT".into(),
            Method::Delete => "DELETE".into(),
            Method::Connect => "CONNECT".into(),
            Method::Options => "OPTIONS".into(),
            Method::Trace => "TRACE".into(),
            Method::Patch => "PATCH".into(),
            Method::Other(m) => m,
        };
        let path = request.path_with_query().unwrap_or_else(|| "/".into());
        let a = answer(&method, &path, || read_body(request), &Imports);
        respond(out, a);
    }
}

/// The body, at most [`MAX_BODY`] bytes: a larger one (as its
/// `content-length` says, or as it arrives) is not read further.
fn read_body(request: IncomingRequest) -> Body {
    let declared = request.headers().get("content-length");
    let declared = declared.first().and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Body::TooLarge;
    }
    let Ok(body) = request.consume() else { return Body::Failed("the body was already taken".into()) };
    let Ok(stream) = body.stream() else { return Body::Failed("the body has no stream".into()) };
    let mut out = Vec::new();
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) if out.len() + chunk.len() > MAX_BODY => return Body::TooLarge,
            Ok(chunk) => out.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(e)) => return Body::Failed(e.to_debug_string()),
        }
    }
    drop(stream);
    drop(IncomingBody::finish(body));
    Body::Read(out)
}

fn respond(out: ResponseOutparam, a: Answer) {
    let mut headers = vec![("content-length".to_string(), a.body.len().to_string().into_bytes())];
    if let Some(t) = a.content_type {
        headers.push(("content-type".into(), t.as_bytes().to_vec()));
    }
    if let Some(allow) = a.allow {
        headers.push(("allow".into(), allow.as_bytes().to_vec()));
    }
    let fields = Fields::from_list(&headers).expect("these headers are valid");
    let response = OutgoingResponse::new(fields);
    response.set_status_code(a.status).expect("a valid status");
    let body = response.body().expect("the response's body, taken once");
    ResponseOutparam::set(out, Ok(response));
    // A client that went away is no error of ours: the rest is dropped.
    if let Ok(mut stream) = body.write() {
        if stream.write_all(&a.body).is_ok() {
            let _ = stream.blocking_flush();
        }
    }
    let _ = OutgoingBody::finish(body, None);
}

wasip2::http::proxy::export!(Handler);
