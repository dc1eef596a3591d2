//! A tool's JSON arguments to the operation's typed request: the one
//! mapping from the tools' argument names, aliases and defaults to the WIT
//! records. The tools (MCP, `sandgrep serve`'s `/v1` endpoints) use it here;
//! the `wasi:http` component (`http/`) compiles this same file against its
//! own bindings of the same WIT, so both read a request alike.

use super::args::Args;
use super::ToolError;
use crate::{
    CaseMode, ListFilesRequest, OutputMode, QueryMode, RangeType, ReadFileRequest, SearchAstRequest, SearchTextRequest,
};

pub(crate) fn search_text(a: &mut Args) -> Result<SearchTextRequest, ToolError> {
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
    r.max_depth = a.u32("max_depth")?;
    r.max_matches_per_file = a.u32("max_matches_per_file")?;
    r.hidden = a.bool("hidden")?.unwrap_or(false);
    r.no_ignore = a.bool("no_ignore")?.unwrap_or(false);
    r.timeout_ms = a.u32("timeout_ms")?;
    Ok(r)
}

pub(crate) fn search_ast(a: &mut Args) -> Result<SearchAstRequest, ToolError> {
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
    Ok(r)
}

pub(crate) fn list_files(a: &mut Args) -> Result<ListFilesRequest, ToolError> {
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
    r.types = a.strings("types")?;
    r.max_depth = a.u32("max_depth")?;
    Ok(r)
}

pub(crate) fn read_file(a: &mut Args) -> Result<ReadFileRequest, ToolError> {
    let path = a
        .string("path")?
        .ok_or_else(|| ToolError::Arguments("path is required (a file relative to the workspace)".into()))?;
    let mut r = ReadFileRequest::new(path);
    r.range_type = a.choice("range_type", &[("bytes", RangeType::Bytes), ("lines", RangeType::Lines)])?;
    r.offset_bytes = a.u64("offset_bytes")?;
    r.max_bytes = a.u64("max_bytes")?;
    r.start_line = a.u64("start_line")?;
    r.max_lines = a.u64("max_lines")?;
    Ok(r)
}
