//! Requests with defaults applied and every number clamped, by the table of
//! limits (`sandgrep_contract::limits`). Every request passes through here
//! before anything touches the filesystem.

use std::time::Duration;

use crate::{
    BinaryMode, CaseMode, IgnoreOptions, ListFilesRequest, OutputMode, QueryMode, RangeType, ReadFileRequest,
    RegexEngine, SearchAstRequest, SearchError, SearchTextRequest, TypeChange,
};

pub use sandgrep_contract::limits::{
    Limit, AST_FILESIZE, CONTEXT, HEAP_LIMIT, LIST_COUNT_BUDGET, LIST_RESULTS, MAX_AST_TEXT, MAX_COLUMNS, MAX_FILESIZE,
    MAX_GLOBS, MAX_OUTPUT_BYTES, MAX_PATHS, MAX_QUERY_BYTES, MAX_READ_LINES_BYTES, MAX_RESULTS, MAX_TYPES, PER_FILE,
    READ_BYTES, READ_LINES, TIMEOUT_MS,
};

/// How many unreadable paths a warning names before it only counts.
pub const WARN_NAMES: usize = 5;

/// A `search-text` request with defaults applied and every number clamped.
#[derive(Clone, Debug)]
pub struct TextQuery {
    pub query: String,
    pub mode: QueryMode,
    pub case: CaseMode,
    pub word: bool,
    pub multiline: bool,
    pub paths: Vec<String>,
    pub walk: WalkOptions,
    pub before: usize,
    pub after: usize,
    pub output: OutputMode,
    pub max_results: usize,
    /// Matching lines per file; `None` means no per-file cap.
    pub per_file: Option<usize>,
    pub max_columns: usize,
    /// The results are the lines that do not match.
    pub invert: bool,
    /// A count is of matches, not of matching lines.
    pub count_matches: bool,
    /// Each match shown replaced by this (`rg -r`).
    pub replace: Option<String>,
    /// The caller streams every result: lines come as they are (a
    /// carriage return before the newline kept).
    pub streaming: bool,
    /// How files holding a NUL byte are searched.
    pub binary: BinaryMode,
    /// Lines may end in `\r\n` (rg's `--crlf`).
    pub crlf: bool,
    /// Lines end at NUL bytes (rg's `--null-data`).
    pub null_data: bool,
    /// Content output: every line of a file searched comes back, those that
    /// are no result as lines of context of their own (rg's `--passthru`).
    pub passthru: bool,
    /// A file's search stops at its first line that is no result after one
    /// that is (rg's `--stop-on-nonmatch`; not with multiline, as rg).
    pub stop_on_nonmatch: bool,
    /// The regex engine for `mode: regex` (rg's `--engine`).
    pub engine: RegexEngine,
    /// Files named as compressed are decompressed and searched (rg's `-z`).
    pub search_zip: bool,
    /// Each file is searched as one slice (rg's `--mmap`): NUL bytes are
    /// looked for only near its start and in the lines returned.
    pub mmap: bool,
    /// Content output goes on past binary data in a file searched on past
    /// it (rg's JSON), not only to its first result there (rg's text).
    pub binary_results: bool,
    /// The files' encoding (rg's `-E`): `None` UTF-8 with BOM sniffing.
    /// (`none`: the bytes as they are, no BOM sniffing.)
    pub encoding: Option<String>,
    pub max_filesize: u64,
    pub timeout: Duration,
    pub cursor: Option<String>,
    pub skip: u64,
}

/// What decides which files a walk yields.
#[derive(Clone, Debug, Default, Hash, PartialEq)]
pub struct WalkOptions {
    pub include_globs: Vec<String>,
    pub exclude_globs: Vec<String>,
    pub types: Vec<String>,
    pub hidden: bool,
    pub no_ignore: bool,
    pub follow_symlinks: bool,
    /// `Some(1)`: only the root's own entries.
    pub max_depth: Option<usize>,
    /// Which ignore files apply (with `no_ignore` false).
    pub ignore: IgnoreRules,
    /// rg's `--type-add` / `--type-clear`, in order, before `types`.
    pub type_changes: Vec<TypeEdit>,
}

/// The request's `ignore-options`, rg's defaults when absent.
#[derive(Clone, Debug, Default, Hash, PartialEq)]
pub struct IgnoreRules {
    pub no_vcs: bool,
    pub no_exclude: bool,
    pub no_parent: bool,
    pub no_dot: bool,
    pub no_require_git: bool,
    /// Workspace-relative ignore files (rg's `--ignore-file`), in order.
    pub files: Vec<String>,
    pub case_insensitive: bool,
}

/// One of the request's `type-changes`.
#[derive(Clone, Debug, Hash, PartialEq)]
pub enum TypeEdit {
    /// `name:glob[,glob...]` or `name:include:type[,type...]`.
    Add(String),
    Clear(String),
}

impl IgnoreRules {
    fn from_request(o: Option<IgnoreOptions>) -> Result<IgnoreRules, SearchError> {
        let Some(o) = o else { return Ok(IgnoreRules::default()) };
        check_count("ignore.files", o.files.len(), MAX_GLOBS)?;
        Ok(IgnoreRules {
            no_vcs: o.no_vcs,
            no_exclude: o.no_exclude,
            no_parent: o.no_parent,
            no_dot: o.no_dot,
            no_require_git: o.no_require_git,
            files: o.files,
            case_insensitive: o.case_insensitive,
        })
    }
}

fn type_edits(changes: Vec<TypeChange>) -> Result<Vec<TypeEdit>, SearchError> {
    check_count("type-changes", changes.len(), MAX_TYPES)?;
    Ok(changes
        .into_iter()
        .map(|c| match c {
            TypeChange::Add(spec) => TypeEdit::Add(spec),
            TypeChange::Clear(name) => TypeEdit::Clear(name),
        })
        .collect())
}

/// Clamps `value` (or the limit's default when absent) into the limit's
/// range, noting any change in `warnings`.
fn clamp<T: Into<u64>>(name: &str, value: Option<T>, limit: Limit, warnings: &mut Vec<String>) -> u64 {
    let v = value.map_or(limit.default, Into::into);
    let applied = limit.applied(Some(v));
    if applied < v {
        warnings.push(format!("{name} {v} lowered to the maximum, {applied}"));
    } else if applied > v {
        warnings.push(format!("{name} {v} raised to the minimum, {applied}"));
    }
    applied
}

fn check_query(name: &str, query: &str) -> Result<(), SearchError> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(SearchError::InvalidArgument(format!(
            "{name} is {} bytes, at most {MAX_QUERY_BYTES} allowed",
            query.len()
        )));
    }
    Ok(())
}

fn timeout(ms: Option<u32>, warnings: &mut Vec<String>) -> Duration {
    Duration::from_millis(clamp("timeout-ms", ms, TIMEOUT_MS, warnings))
}

fn check_count(name: &str, len: usize, max: usize) -> Result<(), SearchError> {
    if len > max {
        return Err(SearchError::InvalidArgument(format!("{name}: {len} given, at most {max} allowed")));
    }
    Ok(())
}

impl TextQuery {
    pub fn from_request(r: SearchTextRequest, warnings: &mut Vec<String>) -> Result<TextQuery, SearchError> {
        check_query("query", &r.query)?;
        check_count("paths", r.paths.len(), MAX_PATHS)?;
        check_count("include-globs", r.include_globs.len(), MAX_GLOBS)?;
        check_count("exclude-globs", r.exclude_globs.len(), MAX_GLOBS)?;
        check_count("types", r.types.len(), MAX_TYPES)?;
        check_query("replace", r.replace.as_deref().unwrap_or_default())?;
        let output = r.output.unwrap_or(OutputMode::Content);
        if r.invert_match && r.multiline {
            return Err(SearchError::InvalidArgument("invert-match selects lines: it cannot be multiline".into()));
        }
        // A caller streaming every result caps only what it asks to (each
        // page is still bounded by max-results and the output budget).
        let uncapped = |limit: Limit| if r.streaming { Limit { max: u64::MAX, ..limit } } else { limit };
        // The per-file cap bounds content output; counts are exact unless the
        // caller asks for a cap (as `rg -c -m N`).
        let per_file = match (output, r.max_matches_per_file) {
            (OutputMode::Content, None) if !r.streaming => Some(PER_FILE.default),
            (_, v) => v.map(u64::from),
        }
        .map(|v| clamp("max-matches-per-file", Some(v), uncapped(PER_FILE), warnings) as usize);
        let max_columns = match r.max_columns {
            None if r.streaming => usize::MAX,
            v => clamp("max-columns", v, uncapped(MAX_COLUMNS), warnings) as usize,
        };
        let paths = if r.paths.is_empty() { vec![".".to_string()] } else { r.paths };
        // (Counts and file lists are of results: passthru changes nothing
        // there, as rg's -c and -l win over it.)
        let passthru = r.passthru && output == OutputMode::Content;
        let encoding = match r.encoding.as_deref().map(str::trim) {
            None | Some("auto") => None,
            Some(label) if label.eq_ignore_ascii_case("none") => Some("none".to_string()),
            Some(label) => match grep_searcher::Encoding::new(label) {
                Ok(_) => Some(label.to_ascii_lowercase()),
                Err(e) => return Err(SearchError::InvalidArgument(e.to_string())),
            },
        };
        Ok(TextQuery {
            query: r.query,
            mode: r.mode.unwrap_or(QueryMode::Literal),
            case: r.case.unwrap_or(CaseMode::Insensitive),
            word: r.word,
            multiline: r.multiline,
            paths,
            walk: WalkOptions {
                include_globs: r.include_globs,
                exclude_globs: r.exclude_globs,
                types: r.types,
                hidden: r.hidden,
                no_ignore: r.no_ignore,
                follow_symlinks: r.follow_symlinks,
                max_depth: r.max_depth.map(|d| d as usize),
                ignore: IgnoreRules::from_request(r.ignore)?,
                type_changes: type_edits(r.type_changes)?,
            },
            // (Passthru: every line comes back, none as a match's context.)
            before: if passthru {
                0
            } else {
                clamp("context-before", r.context_before, uncapped(CONTEXT), warnings) as usize
            },
            after: if passthru {
                0
            } else {
                clamp("context-after", r.context_after, uncapped(CONTEXT), warnings) as usize
            },
            output,
            max_results: clamp("max-results", r.max_results, MAX_RESULTS, warnings) as usize,
            per_file,
            max_columns,
            invert: r.invert_match,
            count_matches: r.count_matches && output == OutputMode::Count,
            replace: r.replace,
            streaming: r.streaming,
            // (With NUL bytes as line breaks nothing is binary, as rg.)
            binary: if r.null_data { BinaryMode::Text } else { r.binary.unwrap_or(BinaryMode::Skip) },
            crlf: r.crlf,
            null_data: r.null_data,
            passthru,
            // (As rg's: a multi-line search never stops at such a line.)
            stop_on_nonmatch: r.stop_on_nonmatch && !r.multiline,
            engine: r.engine.unwrap_or(RegexEngine::Default),
            search_zip: r.search_zip,
            mmap: r.mmap,
            binary_results: r.binary_results,
            encoding,
            max_filesize: clamp("max-filesize", r.max_filesize, MAX_FILESIZE, warnings),
            timeout: timeout(r.timeout_ms, warnings),
            cursor: r.cursor,
            skip: r.skip.unwrap_or(0).into(),
        })
    }

    /// Identifies the result stream this query produces, so a cursor from
    /// another request is refused. Paging and presentation fields (limits on
    /// one page, context, columns, timeout, skip) do not change the stream.
    pub fn stream_key(&self) -> String {
        format!(
            "text\0{}\0{:?}\0{:?}\0{}\0{}\0{}\0{}\0{:?}\0{:?}\0{:?}\0{:?}\0{}\0{:?}\0{}\0{}\0{:?}\0{}\0{}\0{:?}\0{}\0{}",
            self.query,
            self.mode,
            self.case,
            self.word,
            self.multiline,
            self.invert,
            self.count_matches,
            self.paths,
            self.walk,
            self.output,
            self.per_file,
            self.max_filesize,
            self.binary,
            self.crlf,
            self.null_data,
            self.encoding,
            self.passthru,
            self.stop_on_nonmatch,
            self.engine,
            self.search_zip,
            self.mmap,
        )
    }
}

/// A `search-ast` request with defaults applied and every number clamped.
#[derive(Clone, Debug)]
pub struct AstQuery {
    pub pattern: String,
    pub language: Option<String>,
    pub paths: Vec<String>,
    pub walk: WalkOptions,
    pub max_results: usize,
    pub max_filesize: u64,
    pub timeout: Duration,
    pub cursor: Option<String>,
    pub skip: u64,
}

impl AstQuery {
    pub fn from_request(r: SearchAstRequest, warnings: &mut Vec<String>) -> Result<AstQuery, SearchError> {
        check_query("pattern", &r.pattern)?;
        if r.pattern.trim().is_empty() {
            return Err(SearchError::InvalidPattern("the pattern is empty".into()));
        }
        check_count("paths", r.paths.len(), MAX_PATHS)?;
        check_count("include-globs", r.include_globs.len(), MAX_GLOBS)?;
        check_count("exclude-globs", r.exclude_globs.len(), MAX_GLOBS)?;
        Ok(AstQuery {
            pattern: r.pattern,
            language: r.language,
            paths: if r.paths.is_empty() { vec![".".to_string()] } else { r.paths },
            walk: WalkOptions {
                include_globs: r.include_globs,
                exclude_globs: r.exclude_globs,
                types: Vec::new(),
                hidden: r.hidden,
                no_ignore: r.no_ignore,
                follow_symlinks: r.follow_symlinks,
                max_depth: None,
                ignore: IgnoreRules::default(),
                type_changes: Vec::new(),
            },
            max_results: clamp("max-results", r.max_results, MAX_RESULTS, warnings) as usize,
            max_filesize: clamp("max-filesize", r.max_filesize, AST_FILESIZE, warnings),
            timeout: timeout(r.timeout_ms, warnings),
            cursor: r.cursor,
            skip: r.skip.unwrap_or(0).into(),
        })
    }

    /// As [`TextQuery::stream_key`].
    pub fn stream_key(&self) -> String {
        format!("ast\0{}\0{:?}\0{:?}\0{:?}\0{}", self.pattern, self.language, self.paths, self.walk, self.max_filesize)
    }
}

/// A `list-files` request with defaults applied and numbers clamped.
#[derive(Clone, Debug)]
pub struct ListQuery {
    pub root: String,
    pub walk: WalkOptions,
    pub include_dirs: bool,
    pub include_metadata: bool,
    pub max_results: usize,
    pub skip: u64,
    pub cursor: Option<String>,
    pub no_total: bool,
    /// Larger files are left out (rg's `--files --max-filesize`).
    pub max_filesize: Option<u64>,
}

impl ListQuery {
    pub fn from_request(r: ListFilesRequest, warnings: &mut Vec<String>) -> Result<ListQuery, SearchError> {
        check_count("include-globs", r.include_globs.len(), MAX_GLOBS)?;
        check_count("exclude-globs", r.exclude_globs.len(), MAX_GLOBS)?;
        check_count("types", r.types.len(), MAX_TYPES)?;
        let one_level = (!r.recursive.unwrap_or(true)).then_some(1);
        Ok(ListQuery {
            root: r.root.unwrap_or_else(|| ".".into()),
            walk: WalkOptions {
                include_globs: r.include_globs,
                exclude_globs: r.exclude_globs,
                types: r.types,
                hidden: r.hidden,
                no_ignore: r.no_ignore,
                follow_symlinks: r.follow_symlinks,
                max_depth: r.max_depth.map(|d| d as usize).into_iter().chain(one_level).min(),
                ignore: IgnoreRules::from_request(r.ignore)?,
                type_changes: type_edits(r.type_changes)?,
            },
            max_filesize: r.max_filesize,
            include_dirs: r.include_dirs,
            include_metadata: r.include_metadata,
            max_results: clamp("max-results", r.max_results, LIST_RESULTS, warnings) as usize,
            skip: r.skip.unwrap_or(0).into(),
            cursor: r.cursor,
            no_total: r.no_total,
        })
    }

    /// See [`TextQuery::stream_key`].
    pub fn stream_key(&self) -> String {
        format!("list\0{}\0{:?}\0{}\0{:?}", self.root, self.walk, self.include_dirs, self.max_filesize)
    }
}

/// A `read-file` range with defaults applied and numbers clamped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReadPlan {
    Bytes { offset: u64, max: u64 },
    Lines { start: u64, max: u64 },
}

impl ReadPlan {
    pub fn from_request(r: &ReadFileRequest, warnings: &mut Vec<String>) -> Result<ReadPlan, SearchError> {
        let has_bytes = r.offset_bytes.is_some() || r.max_bytes.is_some();
        let has_lines = r.start_line.is_some() || r.max_lines.is_some();
        let kind = r.range_type.unwrap_or(if has_lines { RangeType::Lines } else { RangeType::Bytes });
        let mixed = match kind {
            RangeType::Bytes => has_lines.then_some("start-line/max-lines"),
            RangeType::Lines => has_bytes.then_some("offset-bytes/max-bytes"),
        };
        if let Some(fields) = mixed {
            return Err(SearchError::InvalidArgument(format!(
                "{fields} cannot be used with range-type {}; use offset-bytes/max-bytes for bytes, start-line/max-lines for lines",
                if kind == RangeType::Bytes { "bytes" } else { "lines" }
            )));
        }
        Ok(match kind {
            RangeType::Bytes => ReadPlan::Bytes {
                offset: r.offset_bytes.unwrap_or(0),
                max: clamp("max-bytes", r.max_bytes, READ_BYTES, warnings),
            },
            RangeType::Lines => ReadPlan::Lines {
                start: clamp("start-line", r.start_line, Limit { default: 1, min: 1, max: u64::MAX }, warnings),
                max: clamp("max-lines", r.max_lines, READ_LINES, warnings),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(query: &str) -> SearchTextRequest {
        SearchTextRequest::new(query)
    }

    #[test]
    fn defaults_follow_the_contract() {
        let mut w = vec![];
        let q = TextQuery::from_request(req("x"), &mut w).unwrap();
        assert_eq!(q.mode, QueryMode::Literal);
        assert_eq!(q.case, CaseMode::Insensitive);
        assert_eq!((q.before, q.after), (2, 2));
        assert_eq!(q.max_results, 200);
        assert_eq!(q.per_file, Some(50));
        assert_eq!(q.max_columns, 500);
        assert_eq!(q.max_filesize, 8 << 20);
        assert_eq!(q.paths, vec!["."]);
        assert!(w.is_empty());
    }

    #[test]
    fn numbers_are_clamped_with_warnings() {
        let mut r = req("x");
        r.max_results = Some(u32::MAX);
        r.context_before = Some(99);
        r.max_columns = Some(0);
        r.max_filesize = Some(u64::MAX);
        let mut w = vec![];
        let q = TextQuery::from_request(r, &mut w).unwrap();
        assert_eq!(q.max_results, MAX_RESULTS.max as usize);
        assert_eq!(q.before, CONTEXT.max as usize);
        assert_eq!(q.max_columns, MAX_COLUMNS.min as usize);
        assert_eq!(q.max_filesize, MAX_FILESIZE.max);
        assert_eq!(w.len(), 4, "{w:?}");
    }

    #[test]
    fn count_output_has_no_per_file_cap_unless_asked() {
        let mut r = req("x");
        r.output = Some(OutputMode::Count);
        let mut w = vec![];
        assert_eq!(TextQuery::from_request(r.clone(), &mut w).unwrap().per_file, None);
        r.max_matches_per_file = Some(3);
        assert_eq!(TextQuery::from_request(r, &mut w).unwrap().per_file, Some(3));
    }

    #[test]
    fn a_streaming_caller_caps_only_what_it_asks() {
        let mut r = req("x");
        r.streaming = true;
        let mut w = vec![];
        let q = TextQuery::from_request(r.clone(), &mut w).unwrap();
        assert_eq!((q.per_file, q.max_columns), (None, usize::MAX));
        r.context_before = Some(40);
        r.context_after = Some(0);
        r.max_matches_per_file = Some(5000);
        r.max_results = Some(u32::MAX);
        let q = TextQuery::from_request(r.clone(), &mut w).unwrap();
        assert_eq!((q.before, q.after, q.per_file), (40, 0, Some(5000)));
        // Pages stay bounded.
        assert_eq!(q.max_results as u64, MAX_RESULTS.max);
        r.streaming = false;
        let q = TextQuery::from_request(r, &mut w).unwrap();
        assert_eq!((q.before, q.per_file), (CONTEXT.max as usize, Some(PER_FILE.max as usize)));
    }

    #[test]
    fn inverted_lines_are_not_multiline() {
        let mut r = req("x");
        r.invert_match = true;
        assert!(TextQuery::from_request(r.clone(), &mut vec![]).is_ok());
        r.multiline = true;
        assert!(matches!(TextQuery::from_request(r, &mut vec![]), Err(SearchError::InvalidArgument(_))));
    }

    fn read(offset: Option<u64>, start: Option<u64>, kind: Option<RangeType>) -> Result<ReadPlan, SearchError> {
        let r = ReadFileRequest {
            path: "x".into(),
            range_type: kind,
            offset_bytes: offset,
            max_bytes: None,
            start_line: start,
            max_lines: None,
        };
        ReadPlan::from_request(&r, &mut vec![])
    }

    #[test]
    fn read_ranges_infer_their_mode_and_refuse_mixing() {
        assert_eq!(read(None, None, None).unwrap(), ReadPlan::Bytes { offset: 0, max: READ_BYTES.default });
        assert_eq!(read(None, Some(5), None).unwrap(), ReadPlan::Lines { start: 5, max: READ_LINES.default });
        assert_eq!(read(None, None, Some(RangeType::Lines)).unwrap(), ReadPlan::Lines { start: 1, max: 200 });
        assert!(read(Some(1), Some(1), None).is_err());
        assert!(read(Some(1), None, Some(RangeType::Lines)).is_err());
        assert!(read(None, Some(1), Some(RangeType::Bytes)).is_err());
        let mut w = vec![];
        let r = ReadFileRequest {
            path: "x".into(),
            range_type: None,
            offset_bytes: None,
            max_bytes: Some(u64::MAX),
            start_line: None,
            max_lines: None,
        };
        assert_eq!(ReadPlan::from_request(&r, &mut w).unwrap(), ReadPlan::Bytes { offset: 0, max: READ_BYTES.max });
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn oversized_inputs_are_refused() {
        let mut w = vec![];
        assert!(TextQuery::from_request(req(&"a".repeat(MAX_QUERY_BYTES + 1)), &mut w).is_err());
        let mut r = req("x");
        r.paths = vec![".".into(); MAX_PATHS + 1];
        assert!(TextQuery::from_request(r, &mut w).is_err());
    }
}
