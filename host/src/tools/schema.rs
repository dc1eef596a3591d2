//! What `tools/list` and `initialize` say: each tool's name, description and
//! JSON Schemas of its arguments and result, and the instructions for agents.

use sandgrep_contract::limits::{
    Limit, CONTEXT, LIST_RESULTS, MAX_GLOBS, MAX_PATHS, MAX_QUERY_BYTES, MAX_RESULTS, MAX_TYPES, PER_FILE, READ_BYTES,
    READ_LINES, TIMEOUT_MS,
};
use serde_json::{json, Value};

/// An integer argument bounded by `limit`, described by `description`.
fn int(limit: Limit, description: &str) -> Value {
    let mut v = json!({"type": "integer", "minimum": limit.min, "maximum": limit.max, "default": limit.default});
    if !description.is_empty() {
        v["description"] = description.into();
    }
    v
}

/// A list of strings, at most `max` of them.
fn strings(max: usize, description: &str) -> Value {
    let mut v = json!({"type": "array", "items": {"type": "string"}, "maxItems": max});
    if !description.is_empty() {
        v["description"] = description.into();
    }
    v
}

/// A search result's schema `page`, with the fields every page of a search
/// has: where it goes on, whether it was cut, its stats and warnings.
fn search_page(mut page: Value) -> Value {
    let fields = json!({
        "has_more": {"type": "boolean"},
        "next_cursor": {"type": ["string", "null"]},
        "truncated": {"type": "boolean"},
        "timed_out": {"type": "boolean"},
        "stats": {"type": "object"},
        "warnings": {"type": "array", "items": {"type": "string"}}
    });
    if let (Some(props), Value::Object(fields)) = (page["properties"].as_object_mut(), fields) {
        props.extend(fields);
    }
    page
}

/// One item of a page's list of results: an object with its `required`
/// fields, each field named and typed in `fields` (its description) rather
/// than by a schema of its own. Clients validate each answer against the
/// output schema: the MCP Python SDK's jsonschema took 30 ms for a page of
/// 200 hits whose fields each had a schema (~150 µs a hit, as long as the
/// server's own work for that page on 500k files), 1.4 ms with these items.
fn item(required: &[&str], fields: &str) -> Value {
    json!({"type": "object", "required": required, "description": fields})
}

/// ripgrep file types to keep (or, as `!TYPE`, leave out).
fn types() -> Value {
    strings(MAX_TYPES, "ripgrep file types, e.g. [\"rust\", \"py\", \"ts\"]; \"!TYPE\" leaves one out.")
}

/// How deep below the root to go.
fn depth() -> Value {
    json!({"type": "integer", "minimum": 0, "description": "Levels below root to descend (0: root itself, 1: its entries). Default: all."})
}

/// The text of a query or pattern.
fn query(description: &str) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_QUERY_BYTES, "description": description})
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
list_files. When has_more is true, pass next_cursor as cursor for the next page."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "query": query("Text or regex to find. Aliases: pattern, regex."),
                "mode": {"type": "string", "enum": ["literal", "regex"], "default": "literal", "description": "literal: the query as is; regex: Rust regex syntax, line-based unless multiline."},
                "case_sensitive": {"type": "boolean", "default": false},
                "root": {"type": "string", "default": ".", "description": "Directory or file to search, relative to the workspace. Aliases: directory, dir, path."},
                "include_globs": strings(MAX_GLOBS, "Only files matching any of these gitignore-style globs, e.g. [\"**/*.rs\"]. Alias: include."),
                "exclude_globs": strings(MAX_GLOBS, "Skip paths matching these globs."),
                "max_results": int(MAX_RESULTS, "Hits (or files) per page."),
                "context_lines": int(CONTEXT, "Lines of context before and after each hit."),
                "skip": {"type": "integer", "minimum": 0, "default": 0, "description": "Skip this many hits first (simple paging)."},
                "cursor": {"type": "string", "description": "next_cursor of the previous page of the same search."},
                "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "default": "content", "description": "content: hits with context; files_with_matches: paths only; count: matching lines per file."},
                "word": {"type": "boolean", "default": false, "description": "Whole words only."},
                "multiline": {"type": "boolean", "default": false, "description": "Let a match span lines ((?s) makes . cross them)."},
                "types": types(),
                "max_depth": depth(),
                "max_matches_per_file": int(PER_FILE, ""),
                "hidden": {"type": "boolean", "default": false, "description": "Search dotfiles and dot-directories."},
                "no_ignore": {"type": "boolean", "default": false, "description": "Do not apply .gitignore/.ignore/.rgignore."},
                "timeout_ms": int(TIMEOUT_MS, "Return what was found after this long (timed_out: true; pass next_cursor to go on).")
            },
            "required": ["query"]
        }),
        output_schema: search_page(json!({
            "type": "object",
            "properties": {
                "hits": {"type": "array", "items": item(&["path", "line", "column", "line_text", "context_before", "context_after"],
                    "path: string, relative to the workspace. line, column: integers, where the match starts (1-based; \
        columns count bytes). end_line, end_column: integers, where it ends (the column just past it). line_text: string, the \
        matching line(s). submatches: array of {start, end}, each match's byte offsets in line_text. context_before, \
        context_after: arrays of strings, the lines around it. redactions: array of {line, rule}, lines of this hit and its \
        context with a secret shown as [REDACTED], and the rule that found it.")},
                "files": {"type": "array", "items": item(&["path", "count"], "path: string. count: integer, the file's matching lines as `rg -c` counts them (output_mode count).")}
            },
            "required": ["hits", "has_more"]
        })),
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
when has_more is true, pass next_cursor as cursor."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "pattern": query("An ast-grep pattern, valid code of the language with meta-variables. Alias: query."),
                "language": {"type": "string", "description": "The pattern's language (rust, python, javascript, typescript, tsx, go, java, c, cpp, json; or rs, py, js, ts). Default: every file's own, by extension. Alias: lang."},
                "root": {"type": "string", "default": ".", "description": "Directory or file to search, relative to the workspace. Aliases: directory, dir, path."},
                "paths": strings(MAX_PATHS, "Several directories or files to search instead of root."),
                "include_globs": strings(MAX_GLOBS, "Only files matching any of these globs. Alias: include."),
                "exclude_globs": strings(MAX_GLOBS, ""),
                "max_results": int(MAX_RESULTS, ""),
                "skip": {"type": "integer", "minimum": 0, "default": 0},
                "cursor": {"type": "string", "description": "next_cursor of the previous page of the same search."},
                "hidden": {"type": "boolean", "default": false},
                "no_ignore": {"type": "boolean", "default": false},
                "timeout_ms": int(TIMEOUT_MS, "")
            },
            "required": ["pattern"]
        }),
        output_schema: search_page(json!({
            "type": "object",
            "properties": {
                "matches": {"type": "array", "items": item(&["path", "line", "column", "text"],
                    "path: string, relative to the workspace. line, column, end_line, end_column: integers, where the \
        match starts and ends (1-based; columns count bytes; the end is exclusive). text: string, the matched source. \
        meta_variables: array of {name, text}, sorted by name. redactions: array of {line, rule}, where text shows a secret \
        as [REDACTED], and the rule that found it.")}
            },
            "required": ["matches", "has_more"]
        })),
    }
}

fn list_files_def() -> ToolDef {
    ToolDef {
        name: "list_files",
        title: "List files",
        description: "List files (and optionally directories) under a directory, gitignore-aware like `rg --files`, \
sorted by path. Use it to find files by name or glob (include_globs: [\"**/*.rs\"]), not search_text. When \
has_more is true, pass next_cursor as cursor (or raise skip) for the next page."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "root": {"type": "string", "default": ".", "description": "Directory to list, relative to the workspace. Aliases: directory, dir, path."},
                "recursive": {"type": "boolean", "default": true},
                "include_globs": strings(MAX_GLOBS, "Only paths matching any of these gitignore-style globs. Alias: include."),
                "exclude_globs": strings(MAX_GLOBS, ""),
                "max_results": int(LIST_RESULTS, ""),
                "include_dirs": {"type": "boolean", "default": false, "description": "List directories too."},
                "include_metadata": {"type": "boolean", "default": false, "description": "Add size (bytes) and modified (UNIX seconds)."},
                "skip": {"type": "integer", "minimum": 0, "default": 0},
                "cursor": {"type": "string", "description": "next_cursor of the previous page of the same listing."},
                "hidden": {"type": "boolean", "default": false},
                "no_ignore": {"type": "boolean", "default": false},
                "types": types(),
                "max_depth": depth()
            }
        }),
        output_schema: json!({
            "type": "object",
            "properties": {
                "entries": {"type": "array", "items": item(&["path", "is_dir"],
                    "path: string, relative to the workspace. is_dir: boolean. size (bytes), modified (UNIX seconds): \
        integers, with include_metadata.")},
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
        description: format!(
            "Read a file or a range of it, by lines (start_line, max_lines: 1-based, default 1 and {}) or \
by bytes (offset_bytes, max_bytes: default 0 and {}). Line fields imply range_type \"lines\"; do not mix \
the two kinds. Read only the lines you need, around a search hit. is_truncated says the file goes on; \
next_line / next_offset say where.",
            READ_LINES.default, READ_BYTES.default
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "description": "File path relative to the workspace. Aliases: file, file_path."},
                "range_type": {"type": "string", "enum": ["bytes", "lines"]},
                "offset_bytes": {"type": "integer", "minimum": 0, "default": 0},
                "max_bytes": int(READ_BYTES, ""),
                "start_line": {"type": "integer", "minimum": 1, "default": 1},
                "max_lines": int(READ_LINES, "")
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

/// A tool as `tools/list` describes it.
pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Value,
}

impl ToolDef {
    /// The names of the tool's arguments, in the schema's order.
    pub(super) fn arguments(&self) -> Vec<&str> {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map_or_else(Vec::new, |properties| properties.keys().map(String::as_str).collect())
    }
}
