//! The requests with every field at its default, which callers fill in
//! from: the library's (host/src/lib.rs), the wasi:http front's
//! (http/src/lib.rs) and the component's own tests (guest/src/lib.rs), each
//! for its own bindings of the same WIT types.

use crate::{ListFilesRequest, ReadFileRequest, SearchAstRequest, SearchTextRequest};

impl ListFilesRequest {
    /// A request listing `root` with every other field at its default.
    pub fn new(root: impl Into<String>) -> ListFilesRequest {
        ListFilesRequest {
            root: Some(root.into()),
            recursive: None,
            include_globs: Vec::new(),
            exclude_globs: Vec::new(),
            include_dirs: false,
            include_metadata: false,
            hidden: false,
            no_ignore: false,
            follow_symlinks: false,
            types: Vec::new(),
            max_depth: None,
            max_results: None,
            skip: None,
            cursor: None,
            no_total: false,
            ignore: None,
            type_changes: Vec::new(),
            max_filesize: None,
        }
    }
}

impl ReadFileRequest {
    /// A request for the start of `path` (the first 64 KiB).
    pub fn new(path: impl Into<String>) -> ReadFileRequest {
        ReadFileRequest {
            path: path.into(),
            range_type: None,
            offset_bytes: None,
            max_bytes: None,
            start_line: None,
            max_lines: None,
        }
    }
}

impl SearchAstRequest {
    /// A request for `pattern` with every other field at its default.
    pub fn new(pattern: impl Into<String>) -> SearchAstRequest {
        SearchAstRequest {
            pattern: pattern.into(),
            language: None,
            paths: Vec::new(),
            include_globs: Vec::new(),
            exclude_globs: Vec::new(),
            hidden: false,
            no_ignore: false,
            follow_symlinks: false,
            max_results: None,
            max_filesize: None,
            timeout_ms: None,
            cursor: None,
            skip: None,
        }
    }
}

impl SearchTextRequest {
    /// A request for `query` with every other field at its default.
    pub fn new(query: impl Into<String>) -> SearchTextRequest {
        SearchTextRequest {
            query: query.into(),
            mode: None,
            case: None,
            word: false,
            multiline: false,
            paths: Vec::new(),
            include_globs: Vec::new(),
            exclude_globs: Vec::new(),
            types: Vec::new(),
            hidden: false,
            no_ignore: false,
            follow_symlinks: false,
            max_depth: None,
            context_before: None,
            context_after: None,
            output: None,
            max_results: None,
            max_matches_per_file: None,
            max_columns: None,
            max_filesize: None,
            timeout_ms: None,
            cursor: None,
            skip: None,
            invert_match: false,
            count_matches: false,
            replace: None,
            streaming: false,
            binary: None,
            crlf: false,
            null_data: false,
            encoding: None,
            passthru: false,
            ignore: None,
            type_changes: Vec::new(),
            stop_on_nonmatch: false,
            engine: None,
            search_zip: false,
            mmap: false,
            binary_results: false,
        }
    }
}
