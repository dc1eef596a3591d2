//! The agent-facing tools — `search_text`, `search_ast`, `list_files`,
//! `read_file` — as
//! front ends that take JSON arguments serve them (the MCP server, and the
//! JSON endpoints of a server): argument names, aliases, defaults and result
//! shapes of the tool guide the contract adopts (SPEC §4), JSON Schemas, and
//! a compact text rendering beside the structured result.
//!
//! Lenient where agents slip (`pattern`/`regex` for `query`, `directory`/
//! `dir`/`path` for `root`, a single string where a list is expected);
//! strict where a slip would silently change the answer (unknown argument
//! names and wrong types are errors that name the argument).

use serde_json::{json, Map, Value};

use crate::{
    json::to_value, render, CaseMode, Error, ListFilesRequest, OutputMode, QueryMode, RangeType, ReadFileRequest,
    Sandbox, SearchAstRequest, SearchTextRequest,
};

/// A tool as `tools/list` describes it.
pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub input_schema: Value,
    pub output_schema: Value,
}

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

/// The longest text rendering (bytes). Escaped again as JSON it is at most
/// twice this (the renderer writes printable ASCII for anything unsafe), so
/// with the structured result the answer stays under 16 MiB.
const MAX_TEXT: usize = 3 << 20;

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

pub const INSTRUCTIONS: &str = "sandgrep searches, lists and reads files of one workspace, read-only, inside a \
sandbox. Work search → read: search_text narrowly (a specific identifier or phrase, include_globs or types to \
limit files), then read_file just the lines you need (start_line/max_lines around a hit's line). Use list_files \
to find files by name or glob, not search_text. Paths are relative to the workspace root. Results are sorted and \
paged: when has_more is true, pass next_cursor back as cursor. For code structure (calls, definitions, \
patterns text cannot pin down) use search_ast with an ast-grep pattern. Secrets are shown as [REDACTED]; .env, keys and \
.git internals are never read.";

fn search_text_def() -> ToolDef {
    ToolDef {
        name: "search_text",
        title: "Search file contents",
        description: "Search text across files, gitignore-aware, sorted by path then line. Literal by default \
(mode \"regex\" for Rust regex syntax), case-insensitive by default. Each hit has path, 1-based line and column, \
the line text, and context lines. Search narrowly, then read_file the lines you need; to find files by name use \
list_files. When has_more is true, pass next_cursor as cursor for the next page.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 65536, "description": "Text or regex to find. Aliases: pattern, regex."},
                "mode": {"type": "string", "enum": ["literal", "regex"], "default": "literal", "description": "literal: the query as is; regex: Rust regex syntax, line-based unless multiline."},
                "case_sensitive": {"type": "boolean", "default": false},
                "root": {"type": "string", "default": ".", "description": "Directory or file to search, relative to the workspace. Aliases: directory, dir, path."},
                "include_globs": {"type": "array", "items": {"type": "string"}, "maxItems": 256, "description": "Only files matching any of these gitignore-style globs, e.g. [\"**/*.rs\"]. Alias: include."},
                "exclude_globs": {"type": "array", "items": {"type": "string"}, "maxItems": 256, "description": "Skip paths matching these globs."},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 5000, "default": 200, "description": "Hits (or files) per page."},
                "context_lines": {"type": "integer", "minimum": 0, "maximum": 10, "default": 2, "description": "Lines of context before and after each hit."},
                "skip": {"type": "integer", "minimum": 0, "default": 0, "description": "Skip this many hits first (simple paging)."},
                "cursor": {"type": "string", "description": "next_cursor of the previous page of the same search."},
                "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "default": "content", "description": "content: hits with context; files_with_matches: paths only; count: matching lines per file."},
                "word": {"type": "boolean", "default": false, "description": "Whole words only."},
                "multiline": {"type": "boolean", "default": false, "description": "Let a match span lines ((?s) makes . cross them)."},
                "types": {"type": "array", "items": {"type": "string"}, "description": "ripgrep file types, e.g. [\"rust\", \"py\", \"ts\"]."},
                "max_matches_per_file": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50},
                "hidden": {"type": "boolean", "default": false, "description": "Search dotfiles and dot-directories."},
                "no_ignore": {"type": "boolean", "default": false, "description": "Do not apply .gitignore/.ignore/.rgignore."},
                "timeout_ms": {"type": "integer", "minimum": 1, "maximum": 60000, "default": 10000, "description": "Return what was found after this long (timed_out: true; pass next_cursor to go on)."}
            },
            "required": ["query"]
        }),
        output_schema: json!({
            "type": "object",
            "properties": {
                "hits": {"type": "array", "items": {"type": "object", "properties": {
                    "path": {"type": "string"}, "line": {"type": "integer"}, "column": {"type": "integer"},
                    "end_line": {"type": "integer"}, "end_column": {"type": "integer"},
                    "line_text": {"type": "string"},
                    "submatches": {"type": "array", "items": {"type": "object", "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}}}},
                    "context_before": {"type": "array", "items": {"type": "string"}},
                    "context_after": {"type": "array", "items": {"type": "string"}}
                }, "required": ["path", "line", "column", "line_text", "context_before", "context_after"]}},
                "files": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "string"}, "count": {"type": "integer"}}, "required": ["path", "count"]}},
                "has_more": {"type": "boolean"},
                "next_cursor": {"type": ["string", "null"]},
                "truncated": {"type": "boolean"},
                "timed_out": {"type": "boolean"},
                "stats": {"type": "object"},
                "warnings": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["hits", "has_more"]
        }),
    }
}

fn search_ast_def() -> ToolDef {
    ToolDef {
        name: "search_ast",
        title: "Search code structure",
        description: "Structural search with an ast-grep pattern: code with meta-variables, matched against \
syntax trees, so formatting and comments do not matter. `$X` matches one node, `$$$ARGS` any number, `$_` one \
without capturing; e.g. \"$OBJ.unwrap()\" or \"def $F($$$ARGS): $$$BODY\". Languages: rust, python, javascript, \
typescript, tsx, go, java, c, cpp, json (by file extension unless language is given). Each match has path, \
1-based line and column, end, the matched text and the meta-variables by name. Sorted by path then position; \
when has_more is true, pass next_cursor as cursor.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "minLength": 1, "maxLength": 65536, "description": "An ast-grep pattern, valid code of the language with meta-variables. Alias: query."},
                "language": {"type": "string", "description": "The pattern's language (rust, python, javascript, typescript, tsx, go, java, c, cpp, json; or rs, py, js, ts). Default: every file's own, by extension. Alias: lang."},
                "root": {"type": "string", "default": ".", "description": "Directory or file to search, relative to the workspace. Aliases: directory, dir, path."},
                "paths": {"type": "array", "items": {"type": "string"}, "maxItems": 256, "description": "Several directories or files to search instead of root."},
                "include_globs": {"type": "array", "items": {"type": "string"}, "maxItems": 256, "description": "Only files matching any of these globs. Alias: include."},
                "exclude_globs": {"type": "array", "items": {"type": "string"}, "maxItems": 256},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 5000, "default": 200},
                "skip": {"type": "integer", "minimum": 0, "default": 0},
                "cursor": {"type": "string", "description": "next_cursor of the previous page of the same search."},
                "hidden": {"type": "boolean", "default": false},
                "no_ignore": {"type": "boolean", "default": false},
                "timeout_ms": {"type": "integer", "minimum": 1, "maximum": 60000, "default": 10000}
            },
            "required": ["pattern"]
        }),
        output_schema: json!({
            "type": "object",
            "properties": {
                "matches": {"type": "array", "items": {"type": "object", "properties": {
                    "path": {"type": "string"}, "line": {"type": "integer"}, "column": {"type": "integer"},
                    "end_line": {"type": "integer"}, "end_column": {"type": "integer"},
                    "text": {"type": "string"},
                    "meta_variables": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "text": {"type": "string"}}}}
                }, "required": ["path", "line", "column", "text"]}},
                "has_more": {"type": "boolean"},
                "next_cursor": {"type": ["string", "null"]},
                "truncated": {"type": "boolean"},
                "timed_out": {"type": "boolean"},
                "stats": {"type": "object"},
                "warnings": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["matches", "has_more"]
        }),
    }
}

fn list_files_def() -> ToolDef {
    ToolDef {
        name: "list_files",
        title: "List files",
        description: "List files (and optionally directories) under a directory, gitignore-aware like `rg --files`, \
sorted by path. Use it to find files by name or glob (include_globs: [\"**/*.rs\"]), not search_text. When \
has_more is true, pass next_cursor as cursor (or raise skip) for the next page.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "root": {"type": "string", "default": ".", "description": "Directory to list, relative to the workspace. Aliases: directory, dir, path."},
                "recursive": {"type": "boolean", "default": true},
                "include_globs": {"type": "array", "items": {"type": "string"}, "maxItems": 256, "description": "Only paths matching any of these gitignore-style globs. Alias: include."},
                "exclude_globs": {"type": "array", "items": {"type": "string"}, "maxItems": 256},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 500},
                "include_dirs": {"type": "boolean", "default": false, "description": "List directories too."},
                "include_metadata": {"type": "boolean", "default": false, "description": "Add size (bytes) and modified (UNIX seconds)."},
                "skip": {"type": "integer", "minimum": 0, "default": 0},
                "cursor": {"type": "string", "description": "next_cursor of the previous page of the same listing."},
                "hidden": {"type": "boolean", "default": false},
                "no_ignore": {"type": "boolean", "default": false}
            }
        }),
        output_schema: json!({
            "type": "object",
            "properties": {
                "entries": {"type": "array", "items": {"type": "object", "properties": {
                    "path": {"type": "string"}, "is_dir": {"type": "boolean"},
                    "size": {"type": "integer"}, "modified": {"type": "integer"}
                }, "required": ["path", "is_dir"]}},
                "has_more": {"type": "boolean"},
                "next_cursor": {"type": ["string", "null"]},
                "total": {"type": ["integer", "null"]},
                "warnings": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["entries", "has_more"]
        }),
    }
}

fn read_file_def() -> ToolDef {
    ToolDef {
        name: "read_file",
        title: "Read a file",
        description: "Read a file or a range of it, by lines (start_line, max_lines: 1-based, default 1 and 200) or \
by bytes (offset_bytes, max_bytes: default 0 and 65536). Line fields imply range_type \"lines\"; do not mix \
the two kinds. Read only the lines you need, around a search hit. is_truncated says the file goes on; \
next_line / next_offset say where.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "description": "File path relative to the workspace. Aliases: file, file_path."},
                "range_type": {"type": "string", "enum": ["bytes", "lines"]},
                "offset_bytes": {"type": "integer", "minimum": 0, "default": 0},
                "max_bytes": {"type": "integer", "minimum": 1, "maximum": 1048576, "default": 65536},
                "start_line": {"type": "integer", "minimum": 1, "default": 1},
                "max_lines": {"type": "integer", "minimum": 1, "maximum": 5000, "default": 200}
            },
            "required": ["path"]
        }),
        output_schema: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "is_truncated": {"type": "boolean"},
                "range": {"type": "object", "properties": {
                    "range_type": {"type": "string", "enum": ["bytes", "lines"]},
                    "offset_bytes": {"type": ["integer", "null"]}, "max_bytes": {"type": ["integer", "null"]},
                    "start_line": {"type": ["integer", "null"]}, "max_lines": {"type": ["integer", "null"]}
                }},
                "total_bytes": {"type": "integer"},
                "total_lines": {"type": ["integer", "null"]},
                "next_offset": {"type": ["integer", "null"]},
                "next_line": {"type": ["integer", "null"]},
                "warnings": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["path", "content", "is_truncated", "range"]
        }),
    }
}

pub fn definitions() -> Vec<ToolDef> {
    vec![search_text_def(), search_ast_def(), list_files_def(), read_file_def()]
}

/// Runs tool `name` with JSON `args` against `sandbox` (blocking).
pub fn call(sandbox: &Sandbox, name: &str, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
    let def = definitions().into_iter().find(|d| d.name == name).ok_or_else(|| ToolError::UnknownTool(name.into()))?;
    let mut a = Args::new(args, def.input_schema["properties"].as_object().unwrap(), name)?;
    match name {
        "search_text" => search_text(sandbox, &mut a),
        "search_ast" => search_ast(sandbox, &mut a),
        "list_files" => list_files(sandbox, &mut a),
        _ => read_file(sandbox, &mut a),
    }
}

fn search_text(sandbox: &Sandbox, a: &mut Args) -> Result<ToolOutput, ToolError> {
    let query =
        a.string("query")?.ok_or_else(|| ToolError::Arguments("query is required (the text to find)".into()))?;
    let mut r = SearchTextRequest::new(query);
    r.mode = a.choice("mode", &[("literal", QueryMode::Literal), ("regex", QueryMode::Regex)])?;
    r.case = a.bool("case_sensitive")?.map(|s| if s { CaseMode::Sensitive } else { CaseMode::Insensitive });
    r.paths = a.string("root")?.into_iter().collect();
    r.include_globs = a.strings("include_globs")?;
    r.exclude_globs = a.strings("exclude_globs")?;
    r.max_results = a.u32("max_results")?;
    let context = a.u32("context_lines")?;
    (r.context_before, r.context_after) = (context, context);
    r.skip = a.u32("skip")?;
    r.cursor = a.string("cursor")?;
    r.output = a.choice(
        "output_mode",
        &[
            ("content", OutputMode::Content),
            ("files_with_matches", OutputMode::FilesWithMatches),
            ("count", OutputMode::Count),
        ],
    )?;
    r.word = a.bool("word")?.unwrap_or(false);
    r.multiline = a.bool("multiline")?.unwrap_or(false);
    r.types = a.strings("types")?;
    r.max_matches_per_file = a.u32("max_matches_per_file")?;
    r.hidden = a.bool("hidden")?.unwrap_or(false);
    r.no_ignore = a.bool("no_ignore")?.unwrap_or(false);
    r.timeout_ms = a.u32("timeout_ms")?;
    let response = sandbox.search_text(&r).map_err(ToolError::Failed)?;

    let empty = response.matches.is_empty() && response.files.is_empty();
    let (text, notes) = rendered(
        |out| render::search(out, &response, r.output == Some(OutputMode::Count)),
        empty.then_some("No matches found"),
        &response.warnings,
        render::continuation(response.next_cursor.as_deref(), "cursor"),
    );
    let full = to_value(&response);
    let hits: Vec<Value> = response
        .matches
        .iter()
        .map(|m| {
            json!({
                "path": m.path, "line": m.line, "column": m.column, "end_line": m.end_line,
                "end_column": m.end_column, "line_text": m.text, "submatches": full_submatches(m),
                "context_before": m.context_before, "context_after": m.context_after,
            })
        })
        .collect();
    let structured = json!({
        "hits": hits,
        "files": full["files"],
        "has_more": response.next_cursor.is_some(),
        "next_cursor": response.next_cursor,
        "truncated": response.truncated,
        "timed_out": response.timed_out,
        "stats": full["stats"],
        "warnings": response.warnings,
    });
    Ok(ToolOutput { structured, text, notes, response: full })
}

fn search_ast(sandbox: &Sandbox, a: &mut Args) -> Result<ToolOutput, ToolError> {
    let pattern =
        a.string("pattern")?.ok_or_else(|| ToolError::Arguments("pattern is required (an ast-grep pattern)".into()))?;
    let mut r = SearchAstRequest::new(pattern);
    r.language = a.string("language")?;
    r.paths = a.string("root")?.into_iter().chain(a.strings("paths")?).collect();
    r.include_globs = a.strings("include_globs")?;
    r.exclude_globs = a.strings("exclude_globs")?;
    r.max_results = a.u32("max_results")?;
    r.skip = a.u32("skip")?;
    r.cursor = a.string("cursor")?;
    r.hidden = a.bool("hidden")?.unwrap_or(false);
    r.no_ignore = a.bool("no_ignore")?.unwrap_or(false);
    r.timeout_ms = a.u32("timeout_ms")?;
    let response = sandbox.search_ast(&r).map_err(ToolError::Failed)?;
    let (text, notes) = rendered(
        |out| render::ast(out, &response),
        response.matches.is_empty().then_some("No matches found"),
        &response.warnings,
        render::continuation(response.next_cursor.as_deref(), "cursor"),
    );
    let full = to_value(&response);
    let mut structured = full.clone();
    structured["has_more"] = response.next_cursor.is_some().into();
    Ok(ToolOutput { structured, text, notes, response: full })
}

fn full_submatches(m: &crate::TextMatch) -> Value {
    m.submatches.iter().map(|s| json!({"start": s.start, "end": s.end})).collect()
}

fn list_files(sandbox: &Sandbox, a: &mut Args) -> Result<ToolOutput, ToolError> {
    let mut r = ListFilesRequest::new(a.string("root")?.unwrap_or_else(|| ".".into()));
    r.recursive = a.bool("recursive")?;
    r.include_globs = a.strings("include_globs")?;
    r.exclude_globs = a.strings("exclude_globs")?;
    r.max_results = a.u32("max_results")?;
    r.include_dirs = a.bool("include_dirs")?.unwrap_or(false);
    r.include_metadata = a.bool("include_metadata")?.unwrap_or(false);
    r.skip = a.u32("skip")?;
    r.cursor = a.string("cursor")?;
    r.hidden = a.bool("hidden")?.unwrap_or(false);
    r.no_ignore = a.bool("no_ignore")?.unwrap_or(false);
    let response = sandbox.list_files(&r).map_err(ToolError::Failed)?;
    let (text, notes) = rendered(
        |out| render::list(out, &response),
        response.entries.is_empty().then_some("No files found"),
        &response.warnings,
        render::continuation(response.next_cursor.as_deref(), "cursor"),
    );
    let full = to_value(&response);
    let mut structured = full.clone();
    // As the tool guide: size and modified only when asked for.
    if !r.include_metadata {
        for e in structured["entries"].as_array_mut().unwrap() {
            let e = e.as_object_mut().unwrap();
            e.remove("size");
            e.remove("modified");
        }
    }
    Ok(ToolOutput { structured, text, notes, response: full })
}

fn read_file(sandbox: &Sandbox, a: &mut Args) -> Result<ToolOutput, ToolError> {
    let path = a
        .string("path")?
        .ok_or_else(|| ToolError::Arguments("path is required (a file relative to the workspace)".into()))?;
    let mut r = ReadFileRequest::new(path);
    r.range_type = a.choice("range_type", &[("bytes", RangeType::Bytes), ("lines", RangeType::Lines)])?;
    r.offset_bytes = a.u64("offset_bytes")?;
    r.max_bytes = a.u64("max_bytes")?;
    r.start_line = a.u64("start_line")?;
    r.max_lines = a.u64("max_lines")?;
    let response = sandbox.read_file(&r).map_err(ToolError::Failed)?;
    let go_on = render::read_continuation(&response, "start_line=", "offset_bytes=");
    let (text, notes) = rendered(|out| render::read(out, &response), None, &response.warnings, go_on);
    let full = to_value(&response);
    Ok(ToolOutput { structured: full.clone(), text, notes, response: full })
}

/// A response's text — its rendering (or `empty` when it has nothing), cut
/// at [`MAX_TEXT`] — and its notes: warnings and where to go on.
fn rendered(
    render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>,
    empty: Option<&str>,
    warnings: &[String],
    continuation: Option<String>,
) -> (String, String) {
    let mut out = Vec::new();
    render(&mut out).expect("writes to memory");
    let mut text = String::from_utf8(out).expect("rendered text is UTF-8");
    let mut notes = String::new();
    if text.len() > MAX_TEXT {
        let cut = text[..MAX_TEXT].rfind('\n').map_or(0, |i| i + 1);
        text.truncate(cut);
        notes.push_str(&format!(
            "[the text was cut at {MAX_TEXT} bytes: structuredContent holds every result of this page]\n"
        ));
    }
    if let Some(empty) = empty {
        text.push_str(empty);
        text.push('\n');
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for w in warnings {
        notes.push_str(&format!("[warning: {}]\n", render::path(w)));
    }
    if let Some(c) = continuation {
        notes.push_str(&format!("[{c}]\n"));
    }
    (text, notes)
}

/// The arguments of one call, read by canonical name (aliases folded in),
/// with type errors that name the argument.
struct Args {
    map: Map<String, Value>,
}

const ALIASES: &[(&str, &str)] = &[
    ("pattern", "query"),
    ("regex", "query"),
    ("directory", "root"),
    ("dir", "root"),
    ("include", "include_globs"),
    ("file", "path"),
    ("file_path", "path"),
];

impl Args {
    fn new(args: &Map<String, Value>, known: &Map<String, Value>, tool: &str) -> Result<Args, ToolError> {
        let mut map = Map::new();
        for (k, v) in args {
            let mut name = ALIASES.iter().find(|(alias, _)| alias == k).map_or(k.as_str(), |(_, canon)| canon);
            // search_ast's own argument is `pattern` (`query` and `regex` mean it too).
            if tool == "search_ast" && matches!(k.as_str(), "pattern" | "query" | "regex") {
                name = "pattern";
            }
            if k == "lang" {
                name = "language";
            }
            // `path` names the directory to search or list (as grep tools do).
            if name == "path" && tool != "read_file" {
                name = "root";
            }
            if !known.contains_key(name) {
                let names: Vec<&String> = known.keys().collect();
                return Err(ToolError::Arguments(format!(
                    "unknown argument {k:?} for {tool}; the arguments are {names:?}"
                )));
            }
            if v.is_null() {
                continue;
            }
            if map.insert(name.to_string(), v.clone()).is_some() {
                return Err(ToolError::Arguments(format!("{name} is given twice (under an alias)")));
            }
        }
        Ok(Args { map })
    }

    fn bad(name: &str, want: &str, v: &Value) -> ToolError {
        ToolError::Arguments(format!("{name} must be {want}, not {v}"))
    }

    fn string(&mut self, name: &str) -> Result<Option<String>, ToolError> {
        match self.map.remove(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(Self::bad(name, "a string", &v)),
        }
    }

    fn strings(&mut self, name: &str) -> Result<Vec<String>, ToolError> {
        match self.map.remove(name) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s]),
            Some(Value::Array(items)) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    v => Err(Self::bad(name, "a list of strings", &v)),
                })
                .collect(),
            Some(v) => Err(Self::bad(name, "a list of strings", &v)),
        }
    }

    fn bool(&mut self, name: &str) -> Result<Option<bool>, ToolError> {
        match self.map.remove(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
            Some(v) => Err(Self::bad(name, "true or false", &v)),
        }
    }

    /// A non-negative integer; numbers past the range saturate (the guest
    /// clamps them to the contract's maximum, with a warning).
    fn u64(&mut self, name: &str) -> Result<Option<u64>, ToolError> {
        match self.map.remove(name) {
            None => Ok(None),
            Some(v) => match &v {
                Value::Number(n) if n.as_u64().is_some() => Ok(n.as_u64()),
                Value::Number(n) if n.as_f64().is_some_and(|f| f >= 0.0 && f.fract() == 0.0) => {
                    Ok(Some(n.as_f64().unwrap() as u64))
                }
                Value::String(s) if s.parse::<u64>().is_ok() => Ok(s.parse().ok()),
                _ => Err(Self::bad(name, "a non-negative integer", &v)),
            },
        }
    }

    fn u32(&mut self, name: &str) -> Result<Option<u32>, ToolError> {
        Ok(self.u64(name)?.map(|n| n.min(u32::MAX.into()) as u32))
    }

    fn choice<T: Copy>(&mut self, name: &str, options: &[(&str, T)]) -> Result<Option<T>, ToolError> {
        match self.string(name)? {
            None => Ok(None),
            Some(s) => {
                options.iter().find(|(k, _)| k.eq_ignore_ascii_case(&s)).map(|(_, v)| Some(*v)).ok_or_else(|| {
                    let names: Vec<&str> = options.iter().map(|(k, _)| *k).collect();
                    ToolError::Arguments(format!("{name} must be one of {names:?}, not {s:?}"))
                })
            }
        }
    }
}
