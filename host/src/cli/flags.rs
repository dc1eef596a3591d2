//! The table of flags: every subcommand's arguments, their help, and the
//! parsers of their values. Help, the man page and the completions are
//! generated from it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use sandgrep::limits::{Limit, LIST_RESULTS, MAX_RESULTS, READ_BYTES, READ_LINES};

/// The heading of the search flags sandgrep does not share with rg (its
/// paging). Every other search flag is rg's, prints what rg prints with
/// it, and has a case in the tests that compare with rg
/// (`tests/rg_output.rs`, `tests/rg_json.rs`; a unit test below checks).
const SANDGREP_ONLY: &str = "Paging (sandgrep's own)";

/// Where `--help` lists the options every subcommand takes (after its own).
pub(crate) const GLOBAL: &str = "Global options";

#[derive(Parser)]
#[command(name = "sandgrep", version, about = "Code search inside a WebAssembly capability sandbox")]
pub(crate) struct Cli {
    /// The workspace: the only directory sandgrep can read.
    #[arg(long, global = true, default_value = ".", value_name = "DIR", help_heading = GLOBAL)]
    pub(crate) root: PathBuf,
    /// Also deny paths matching GLOB (on top of the built-in secrets list).
    #[arg(long = "deny", global = true, value_name = "GLOB", help_heading = GLOBAL)]
    pub(crate) deny: Vec<String>,
    /// Show secrets instead of [REDACTED] (the operator's choice, not an agent's).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub(crate) no_redact: bool,
    /// Switch off one redaction rule by name, e.g. jwt (the operator's
    /// choice; the names are listed in docs/safety.md).
    #[arg(long = "no-redact-rule", global = true, value_name = "RULE", help_heading = GLOBAL)]
    pub(crate) no_redact_rule: Vec<String>,
    /// Memory cap of the sandboxed instance (bytes, or with K, M, G suffix).
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_size, help_heading = GLOBAL)]
    pub(crate) memory_limit: Option<u64>,
    /// Instances searching side by side (default: one per core).
    #[arg(short = 'j', long = "threads", global = true, value_name = "N", help_heading = GLOBAL)]
    pub(crate) threads: Option<usize>,
    /// Run another build of the sandgrep component instead of the embedded one.
    #[arg(long, global = true, value_name = "FILE", help_heading = GLOBAL)]
    pub(crate) component: Option<PathBuf>,
    /// Read every file instead of using the workspace's index (see `sandgrep index`).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub(crate) no_index: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Search file contents (regex and case-sensitive by default, as rg).
    // (A flag given twice is taken once, its last value wins: as rg.)
    #[command(args_override_self = true)]
    Search(Box<SearchArgs>),
    /// List files, gitignore-aware (as `rg --files`), sorted by path.
    #[command(args_override_self = true)]
    Ls(LsArgs),
    /// Read a file, or a range of its lines or bytes.
    Read(ReadArgs),
    /// Structural search with an ast-grep pattern (`$X` one node, `$$$X` any).
    Ast(AstArgs),
    /// Serve search_text, search_ast, list_files and read_file to an MCP client on stdio.
    #[cfg(feature = "mcp")]
    Mcp,
    /// Serve many tenants' workspaces over HTTP (JSON endpoints and MCP).
    #[cfg(feature = "serve")]
    Serve(ServeArgs),
    /// Build or refresh the workspace's index (kept in the user's cache), so
    /// searches read only the files that can match; or list or prune the
    /// cache's indexes.
    Index {
        /// Print the report as one JSON object.
        #[arg(long)]
        json: bool,
        /// List every index in the cache (workspace, whether it is still
        /// there, format, files, size, when built) instead of building.
        #[arg(long, conflicts_with = "prune")]
        list: bool,
        /// Remove the indexes of workspaces that are gone, those of another
        /// format, and what interrupted builds left, instead of building
        /// (never one another process is building).
        #[arg(long)]
        prune: bool,
    },
    /// Print a shell's completion script (e.g. `sandgrep completions bash > /etc/bash_completion.d/sandgrep`).
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff: `sandgrep man > sandgrep.1; man ./sandgrep.1`).
    Man,
    /// Write the embedded component (sandgrep.wasm) for other hosts.
    Component {
        /// Where to write it (default: sandgrep.wasm, or sandgrep-http.wasm with --http).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Write the wasi:http/proxy component instead: the /v1 operations over
        /// HTTP on its one preopened directory, for `wasmtime serve -S cli
        /// --dir WORKSPACE::/` and the WebAssembly platforms (docs/deploy.md).
        #[arg(long)]
        http: bool,
    },
}

#[derive(Args)]
pub(crate) struct LsArgs {
    /// Directory to list, relative to the workspace.
    #[arg(value_name = "PATH", default_value = ".")]
    pub(crate) path: String,
    /// Include paths matching GLOB; `!GLOB` excludes.
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    pub(crate) globs: Vec<String>,
    /// List hidden files and directories.
    #[arg(long = "hidden", short = '.')]
    pub(crate) hidden: bool,
    /// Do not respect .gitignore, .ignore and .rgignore.
    #[arg(long)]
    pub(crate) no_ignore: bool,
    /// Follow symbolic links (inside the workspace only).
    #[arg(short = 'L', long)]
    pub(crate) follow: bool,
    /// List directories too (shown with a trailing `/`).
    #[arg(long)]
    pub(crate) dirs: bool,
    /// Show size and modification time (on a terminal as `1.2K` and an ISO
    /// time; piped, bytes and UNIX seconds).
    #[arg(long)]
    pub(crate) metadata: bool,
    /// Draw the listing as a tree (├── and └──), bounded and paged as the list.
    #[arg(long)]
    pub(crate) tree: bool,
    /// Only the directory's own entries.
    #[arg(long)]
    pub(crate) no_recursive: bool,
    #[arg(long, value_name = "N", help = limit_help("Entries returned", LIST_RESULTS))]
    pub(crate) max_results: Option<u64>,
    /// Skip this many entries first.
    #[arg(long, value_name = "N")]
    pub(crate) skip: Option<u64>,
    /// Continue after the entry a previous call's cursor names.
    #[arg(long, value_name = "TOKEN")]
    pub(crate) cursor: Option<String>,
    /// Print the response as one JSON object (one bounded page; as --json-page).
    #[arg(long, overrides_with = "json_page")]
    pub(crate) json: bool,
    /// Print the response as one JSON object (one bounded page).
    #[arg(long, overrides_with = "json")]
    pub(crate) json_page: bool,
}

#[cfg(feature = "serve")]
#[derive(Args)]
pub(crate) struct ServeArgs {
    /// The config file (TOML): listen address, tenants, their tokens and limits.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: PathBuf,
    /// Listen here instead of the config's address.
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<String>,
}

#[derive(Args)]
pub(crate) struct AstArgs {
    /// An ast-grep pattern, e.g. 'foo($A, $$$REST)'.
    #[arg(value_name = "PATTERN")]
    pub(crate) pattern: String,
    /// Files or directories to search, relative to the workspace.
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<String>,
    /// The pattern's language (rust, python, javascript, typescript, tsx, go,
    /// java, c, cpp, json); default: each file's, by extension.
    #[arg(long = "lang", value_name = "LANG")]
    pub(crate) lang: Option<String>,
    /// Include files matching GLOB; `!GLOB` excludes.
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    pub(crate) globs: Vec<String>,
    /// Search hidden files and directories.
    #[arg(long = "hidden", short = '.')]
    pub(crate) hidden: bool,
    /// Do not respect .gitignore, .ignore and .rgignore.
    #[arg(long)]
    pub(crate) no_ignore: bool,
    /// Follow symbolic links (escapes are still refused).
    #[arg(short = 'L', long)]
    pub(crate) follow: bool,
    #[arg(long, value_name = "N", help = limit_help("Matches returned", MAX_RESULTS))]
    pub(crate) max_results: Option<u64>,
    /// Skip files larger than SIZE (bytes, or with K, M, G suffix).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub(crate) max_filesize: Option<u64>,
    /// Continue after the last match of a previous call.
    #[arg(long, value_name = "TOKEN")]
    pub(crate) cursor: Option<String>,
    /// Skip this many matches first.
    #[arg(long, value_name = "N")]
    pub(crate) skip: Option<u64>,
    /// Stop after this long with partial results (milliseconds).
    #[arg(long = "timeout", value_name = "MS")]
    pub(crate) timeout_ms: Option<u64>,
    /// Print each match as a JSON object on a line of its own, as
    /// `ast-grep --json=stream`.
    #[arg(long, overrides_with = "json_page")]
    pub(crate) json: bool,
    /// Print the response as one JSON object (one bounded page).
    #[arg(long, overrides_with = "json")]
    pub(crate) json_page: bool,
}

#[derive(Args)]
pub(crate) struct ReadArgs {
    /// The file, relative to the workspace.
    #[arg(value_name = "PATH")]
    pub(crate) path: String,
    #[arg(long, value_name = "START:COUNT", value_parser = parse_range, conflicts_with = "bytes",
          help = format!("Lines START (1-based) to START+COUNT-1; COUNT defaults to {}", READ_LINES.default))]
    pub(crate) lines: Option<(u64, Option<u64>)>,
    #[arg(long, value_name = "OFFSET:COUNT", value_parser = parse_range,
          help = format!("COUNT bytes from OFFSET (0-based); COUNT defaults to {}", READ_BYTES.default))]
    pub(crate) bytes: Option<(u64, Option<u64>)>,
    /// Print the response as one JSON object (one bounded page; as --json-page).
    #[arg(long, overrides_with = "json_page")]
    pub(crate) json: bool,
    /// Print the response as one JSON object (one bounded page).
    #[arg(long, overrides_with = "json")]
    pub(crate) json_page: bool,
}

/// "WHAT (default D, max M)", from the limits table.
pub(crate) fn limit_help(what: &str, limit: Limit) -> String {
    format!("{what} (default {}, max {})", limit.default, limit.max)
}

/// `N`, `N:` or `N:M`.
pub(crate) fn parse_range(s: &str) -> Result<(u64, Option<u64>), String> {
    let (a, b) = s.split_once(':').unwrap_or((s, ""));
    let a = a.parse().map_err(|_| format!("invalid range {s:?}: expected START:COUNT"))?;
    let b = if b.is_empty() {
        None
    } else {
        Some(b.parse().map_err(|_| format!("invalid range {s:?}: expected START:COUNT"))?)
    };
    Ok((a, b))
}

#[derive(Args, Clone)]
pub(crate) struct SearchArgs {
    /// The pattern (a Rust regex, PCRE2's with -P; a literal string with -F).
    #[arg(value_name = "PATTERN", required_unless_present_any = ["regexp", "pattern_files", "files", "type_list", "pcre2_version"])]
    pub(crate) pattern: Option<String>,
    /// Files or directories to search, relative to the workspace.
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<String>,
    /// A pattern to search for (repeatable: lines matching any); every
    /// positional argument is then a path.
    #[arg(
        help_heading = "Input options",
        short = 'e',
        long = "regexp",
        value_name = "PATTERN",
        allow_hyphen_values = true
    )]
    pub(crate) regexp: Vec<String>,
    /// Patterns from FILE, one per line (`-`: standard input), as with -e.
    #[arg(help_heading = "Input options", short = 'f', long = "file", value_name = "PATTERNFILE")]
    pub(crate) pattern_files: Vec<std::path::PathBuf>,
    /// Case-sensitive (the default).
    #[arg(help_heading = "Search options", short = 's', long, overrides_with_all = ["ignore_case", "smart_case"])]
    pub(crate) case_sensitive: bool,
    /// Treat the pattern as a literal string.
    #[arg(help_heading = "Search options", short = 'F', long, overrides_with = "no_fixed_strings")]
    pub(crate) fixed_strings: bool,
    /// Undoes --fixed-strings.
    #[arg(help_heading = "Search options", long, overrides_with = "fixed_strings")]
    pub(crate) no_fixed_strings: bool,
    /// Case-insensitive.
    #[arg(help_heading = "Search options", short = 'i', long, overrides_with_all = ["case_sensitive", "smart_case"])]
    pub(crate) ignore_case: bool,
    /// Select the lines that do not match.
    #[arg(help_heading = "Search options", short = 'v', long, overrides_with = "no_invert_match")]
    pub(crate) invert_match: bool,
    /// Undoes --invert-match.
    #[arg(help_heading = "Search options", long, overrides_with = "invert_match")]
    pub(crate) no_invert_match: bool,
    /// Only lines the pattern matches whole.
    #[arg(help_heading = "Search options", short = 'x', long, overrides_with = "word_regexp")]
    pub(crate) line_regexp: bool,
    /// Matching lines per file.
    #[arg(help_heading = "Search options", short = 'm', long = "max-count", value_name = "PER_FILE")]
    pub(crate) max_count: Option<u64>,
    /// Let matches span lines.
    #[arg(help_heading = "Search options", short = 'U', long, overrides_with_all = ["no_multiline", "stop_on_nonmatch"])]
    pub(crate) multiline: bool,
    /// Undoes --multiline.
    #[arg(help_heading = "Search options", long, overrides_with = "multiline")]
    pub(crate) no_multiline: bool,
    /// With -U, `.` matches line ends too.
    #[arg(help_heading = "Search options", long, overrides_with = "no_multiline_dotall")]
    pub(crate) multiline_dotall: bool,
    /// Undoes --multiline-dotall.
    #[arg(help_heading = "Search options", long, overrides_with = "multiline_dotall")]
    pub(crate) no_multiline_dotall: bool,
    /// Case-insensitive unless the pattern has an upper-case letter.
    #[arg(help_heading = "Search options", short = 'S', long, overrides_with_all = ["ignore_case", "case_sensitive"])]
    pub(crate) smart_case: bool,
    /// Match whole words only.
    #[arg(help_heading = "Search options", short = 'w', long, overrides_with = "line_regexp")]
    pub(crate) word_regexp: bool,
    /// Search binary files as if they were text. (It, --no-text, --binary
    /// and --no-binary set one mode: the last given wins, as rg's.)
    #[arg(help_heading = "Search options", short = 'a', long, overrides_with_all = ["no_text", "binary", "no_binary"])]
    pub(crate) text: bool,
    /// Binary files are binary (the default).
    #[arg(help_heading = "Search options", long, overrides_with_all = ["text", "binary", "no_binary"])]
    pub(crate) no_text: bool,
    /// Lines may end in CRLF: `$` matches before `\r\n`. (It and
    /// --null-data override each other, as rg's.)
    #[arg(help_heading = "Search options", long, overrides_with_all = ["no_crlf", "null_data"])]
    pub(crate) crlf: bool,
    /// Lines end in LF (the default).
    #[arg(help_heading = "Search options", long, overrides_with = "crlf")]
    pub(crate) no_crlf: bool,
    /// Lines end at NUL bytes, not line breaks (and printed lines too); no
    /// file is binary then.
    #[arg(help_heading = "Search options", long)]
    pub(crate) null_data: bool,
    /// A file's search stops at its first line without a match after one
    /// with a match. (It and -U override each other, as rg's.)
    #[arg(help_heading = "Search options", long, overrides_with = "multiline")]
    pub(crate) stop_on_nonmatch: bool,
    /// The files' text encoding (an encoding_rs label; `none`: no BOM sniffing).
    #[arg(help_heading = "Search options", short = 'E', long, value_name = "ENCODING", overrides_with = "no_encoding")]
    pub(crate) encoding: Option<String>,
    /// UTF-8, with BOM sniffing (the default).
    #[arg(help_heading = "Search options", long, overrides_with = "encoding")]
    pub(crate) no_encoding: bool,
    /// Accepted as rg's: the regex engine's own limit on its lazy DFA
    /// (sandgrep's component sets its own).
    #[arg(help_heading = "Search options", long, value_name = "NUM+SUFFIX?", value_parser = parse_rg_size)]
    pub(crate) dfa_size_limit: Option<u64>,
    /// Accepted as rg's: the regex engine's own limit on a compiled regex
    /// (sandgrep's component sets its own).
    #[arg(help_heading = "Search options", long, value_name = "NUM+SUFFIX?", value_parser = parse_rg_size)]
    pub(crate) regex_size_limit: Option<u64>,
    /// The regex engine: `default` (Rust's regex), `pcre2` (as -P), or
    /// `auto` (the default, or PCRE2 where the default cannot build the
    /// pattern).
    #[arg(help_heading = "Search options", long, value_name = "ENGINE", value_parser = ["default", "pcre2", "auto"], overrides_with_all = ["pcre2", "no_pcre2", "auto_hybrid_regex", "no_auto_hybrid_regex"])]
    pub(crate) engine: Option<String>,
    /// PCRE2 reads the pattern: look-around, backreferences (PCRE2 10.45
    /// in the component, its interpreter: no JIT in wasm).
    #[arg(help_heading = "Search options", short = 'P', long, overrides_with_all = ["engine", "no_pcre2", "auto_hybrid_regex", "no_auto_hybrid_regex"])]
    pub(crate) pcre2: bool,
    /// The default regex engine (undoes -P).
    #[arg(help_heading = "Search options", long, overrides_with_all = ["engine", "pcre2", "auto_hybrid_regex", "no_auto_hybrid_regex"])]
    pub(crate) no_pcre2: bool,
    /// (Deprecated in rg) As --engine auto.
    #[arg(help_heading = "Search options", long, hide = true, overrides_with_all = ["engine", "pcre2", "no_pcre2", "no_auto_hybrid_regex"])]
    pub(crate) auto_hybrid_regex: bool,
    /// (Deprecated in rg) As --engine default.
    #[arg(help_heading = "Search options", long, hide = true, overrides_with_all = ["engine", "pcre2", "no_pcre2", "auto_hybrid_regex"])]
    pub(crate) no_auto_hybrid_regex: bool,
    /// Search inside files compressed with gzip, bzip2, xz, lzma, lz4,
    /// brotli, zstd or compress, decompressed inside the sandbox.
    #[arg(help_heading = "Search options", short = 'z', long, overrides_with = "no_search_zip")]
    pub(crate) search_zip: bool,
    /// Compressed files are searched as they are (the default).
    #[arg(help_heading = "Search options", long, overrides_with = "search_zip")]
    pub(crate) no_search_zip: bool,
    /// Search each file as one slice, as rg searches a memory map: NUL
    /// bytes are looked for only in its first 64 KiB and in the lines
    /// printed (the default for at most 10 PATHs, all files, as rg's).
    #[arg(help_heading = "Search options", long, overrides_with = "no_mmap")]
    pub(crate) mmap: bool,
    /// Read every file a buffer at a time, each buffer checked for NUL bytes
    /// (the default for directories and more than 10 PATHs, as rg's).
    #[arg(help_heading = "Search options", long, overrides_with = "mmap")]
    pub(crate) no_mmap: bool,
    /// The pattern without Unicode: `\w`, `\d`, `\s`, `\b` and case
    /// folding are ASCII's, `.` any byte (rg's `(?-u)`).
    #[arg(help_heading = "Search options", long, alias = "no-pcre2-unicode", overrides_with = "unicode")]
    pub(crate) no_unicode: bool,
    /// Undoes --no-unicode (the default).
    #[arg(help_heading = "Search options", long, alias = "pcre2-unicode", overrides_with = "no_unicode")]
    pub(crate) unicode: bool,
    /// Refused: sandgrep runs no program, and rg's preprocessor would run
    /// COMMAND outside the sandbox on files anyone may have written.
    #[arg(help_heading = "Search options", long, value_name = "COMMAND", overrides_with = "no_pre")]
    pub(crate) pre: Option<String>,
    /// No preprocessor (the default).
    #[arg(help_heading = "Search options", long, overrides_with = "pre")]
    pub(crate) no_pre: bool,
    /// Accepted as rg's (the files a preprocessor would read: none).
    #[arg(help_heading = "Search options", long, value_name = "GLOB", allow_hyphen_values = true)]
    pub(crate) pre_glob: Vec<String>,
    /// Follow symbolic links (escapes are still refused).
    #[arg(help_heading = "Filter options", short = 'L', long, overrides_with = "no_follow")]
    pub(crate) follow: bool,
    /// Undoes --follow.
    #[arg(help_heading = "Filter options", long, overrides_with = "follow")]
    pub(crate) no_follow: bool,
    /// Include files matching GLOB; `!GLOB` excludes.
    #[arg(
        help_heading = "Filter options",
        short = 'g',
        long = "glob",
        value_name = "GLOB",
        allow_hyphen_values = true
    )]
    pub(crate) globs: Vec<String>,
    /// Every -g glob matches either case.
    #[arg(help_heading = "Filter options", long, overrides_with = "no_glob_case_insensitive")]
    pub(crate) glob_case_insensitive: bool,
    /// Undoes --glob-case-insensitive.
    #[arg(help_heading = "Filter options", long, overrides_with = "glob_case_insensitive")]
    pub(crate) no_glob_case_insensitive: bool,
    /// Search hidden files and directories.
    #[arg(help_heading = "Filter options", long = "hidden", short = '.', overrides_with = "no_hidden")]
    pub(crate) hidden: bool,
    /// Undoes --hidden.
    #[arg(help_heading = "Filter options", long, overrides_with = "hidden")]
    pub(crate) no_hidden: bool,
    /// As -g, matching either case.
    #[arg(help_heading = "Filter options", long = "iglob", value_name = "GLOB", allow_hyphen_values = true)]
    pub(crate) iglobs: Vec<String>,
    /// Descend at most NUM directories below each path (0: only the paths named).
    #[arg(help_heading = "Filter options", short = 'd', long, alias = "maxdepth", value_name = "NUM")]
    pub(crate) max_depth: Option<u32>,
    /// Skip files larger than SIZE (bytes, or with K, M, G suffix).
    #[arg(help_heading = "Filter options", long, value_name = "NUM+SUFFIX?", value_parser = parse_rg_size)]
    pub(crate) max_filesize: Option<u64>,
    /// Do not respect .gitignore, .ignore, .rgignore and .git/info/exclude
    /// (as --no-ignore-dot, -exclude, -global, -parent and -vcs; not
    /// --ignore-file files).
    #[arg(help_heading = "Filter options", long, overrides_with = "ignore")]
    pub(crate) no_ignore: bool,
    /// Undoes --no-ignore (the default).
    #[arg(help_heading = "Filter options", long, overrides_with = "no_ignore")]
    pub(crate) ignore: bool,
    /// Also respect the gitignore-style rules in PATH (relative to the
    /// workspace, inside it), below every ignore file the walk finds, their
    /// globs matched from the workspace root; a later file ranks above an
    /// earlier one. Repeatable.
    #[arg(help_heading = "Filter options", long = "ignore-file", value_name = "PATH")]
    pub(crate) ignore_file: Vec<String>,
    /// Match the globs of ignore files case-insensitively (not those of --ignore-file, as rg).
    #[arg(help_heading = "Filter options", long, overrides_with = "no_ignore_file_case_insensitive")]
    pub(crate) ignore_file_case_insensitive: bool,
    /// Undoes --ignore-file-case-insensitive (the default).
    #[arg(help_heading = "Filter options", long, overrides_with = "ignore_file_case_insensitive")]
    pub(crate) no_ignore_file_case_insensitive: bool,
    /// Do not respect .ignore and .rgignore.
    #[arg(help_heading = "Filter options", long, overrides_with = "ignore_dot")]
    pub(crate) no_ignore_dot: bool,
    /// Undoes --no-ignore-dot (the default).
    #[arg(help_heading = "Filter options", long, overrides_with = "no_ignore_dot")]
    pub(crate) ignore_dot: bool,
    /// Do not respect .git/info/exclude.
    #[arg(help_heading = "Filter options", long, overrides_with = "ignore_exclude")]
    pub(crate) no_ignore_exclude: bool,
    /// Undoes --no-ignore-exclude (the default).
    #[arg(help_heading = "Filter options", long, overrides_with = "no_ignore_exclude")]
    pub(crate) ignore_exclude: bool,
    /// Leave out the --ignore-file files, even those given after it.
    #[arg(help_heading = "Filter options", long, overrides_with = "ignore_files")]
    pub(crate) no_ignore_files: bool,
    /// Undoes --no-ignore-files (the default).
    #[arg(help_heading = "Filter options", long, overrides_with = "no_ignore_files")]
    pub(crate) ignore_files: bool,
    /// Accepted as rg's: sandgrep never reads a global gitignore (git's
    /// core.excludesFile lies outside the workspace).
    #[arg(help_heading = "Filter options", long, overrides_with = "ignore_global")]
    pub(crate) no_ignore_global: bool,
    /// Accepted as rg's (no global gitignore is read either way).
    #[arg(help_heading = "Filter options", long, overrides_with = "no_ignore_global")]
    pub(crate) ignore_global: bool,
    /// Do not respect ignore files in the directories above a PATH (those
    /// inside the workspace: nothing above it is read).
    #[arg(help_heading = "Filter options", long, overrides_with = "ignore_parent")]
    pub(crate) no_ignore_parent: bool,
    /// Undoes --no-ignore-parent (the default).
    #[arg(help_heading = "Filter options", long, overrides_with = "no_ignore_parent")]
    pub(crate) ignore_parent: bool,
    /// Do not respect .gitignore and .git/info/exclude.
    #[arg(help_heading = "Filter options", long, overrides_with = "ignore_vcs")]
    pub(crate) no_ignore_vcs: bool,
    /// Undoes --no-ignore-vcs (the default).
    #[arg(help_heading = "Filter options", long, overrides_with = "no_ignore_vcs")]
    pub(crate) ignore_vcs: bool,
    /// Respect .gitignore outside a git repository too.
    #[arg(help_heading = "Filter options", long, overrides_with = "require_git")]
    pub(crate) no_require_git: bool,
    /// Undoes --no-require-git (the default).
    #[arg(help_heading = "Filter options", long, overrides_with = "no_require_git")]
    pub(crate) require_git: bool,
    /// Only search files of this ripgrep type (rust, py, js, ...; see --type-list).
    #[arg(help_heading = "Filter options", short = 't', long = "type", value_name = "TYPE")]
    pub(crate) types: Vec<String>,
    /// Leave out files of this type.
    #[arg(help_heading = "Filter options", short = 'T', long = "type-not", value_name = "TYPE")]
    pub(crate) types_not: Vec<String>,
    /// Add globs to a file type (`name:glob[,glob...]`, or
    /// `name:include:type[,type...]` for other types' globs); repeatable.
    #[arg(help_heading = "Filter options", long, value_name = "TYPESPEC")]
    pub(crate) type_add: Vec<String>,
    /// Remove every glob of a file type (the built-in ones too); repeatable.
    #[arg(help_heading = "Filter options", long, value_name = "TYPE")]
    pub(crate) type_clear: Vec<String>,
    /// -u: --no-ignore; -uu: and --hidden; -uuu: and --binary.
    #[arg(help_heading = "Filter options", short = 'u', long = "unrestricted", action = clap::ArgAction::Count)]
    pub(crate) unrestricted: u8,
    /// Search binary files found by the walk too (as files named are:
    /// "binary file matches").
    #[arg(help_heading = "Filter options", long, overrides_with_all = ["no_binary", "text", "no_text"])]
    pub(crate) binary: bool,
    /// Files found by the walk stop at their first NUL byte (the default).
    #[arg(help_heading = "Filter options", long, overrides_with_all = ["binary", "text", "no_text"])]
    pub(crate) no_binary: bool,
    /// Lines of context after each match.
    #[arg(help_heading = "Output options", short = 'A', long, value_name = "N")]
    pub(crate) after_context: Option<u64>,
    /// Lines of context before each match.
    #[arg(help_heading = "Output options", short = 'B', long, value_name = "N")]
    pub(crate) before_context: Option<u64>,
    /// Accepted as rg's (output is written in blocks when piped).
    #[arg(help_heading = "Output options", long, overrides_with = "no_block_buffered")]
    pub(crate) block_buffered: bool,
    /// Undoes --block-buffered.
    #[arg(help_heading = "Output options", long, overrides_with = "block_buffered")]
    pub(crate) no_block_buffered: bool,
    /// Each line's byte offset in its file (with -o, each match's), after
    /// its line and column.
    #[arg(help_heading = "Output options", short = 'b', long, overrides_with = "no_byte_offset")]
    pub(crate) byte_offset: bool,
    /// Undoes -b (the default).
    #[arg(help_heading = "Output options", long, overrides_with = "byte_offset")]
    pub(crate) no_byte_offset: bool,
    /// Colors: never, auto (on a terminal), always.
    #[arg(help_heading = "Output options", long, value_name = "WHEN", default_value = "auto", value_parser = ["never", "auto", "always", "ansi"])]
    pub(crate) color: String,
    /// Show the column of the first match (and line numbers).
    #[arg(help_heading = "Output options", long, overrides_with = "no_column")]
    pub(crate) column: bool,
    /// No columns (also under --vimgrep).
    #[arg(help_heading = "Output options", long, overrides_with = "column")]
    pub(crate) no_column: bool,
    /// Lines of context before and after each match (-A and -B override its part, wherever given).
    #[arg(help_heading = "Output options", short = 'C', long, value_name = "N")]
    pub(crate) context: Option<u64>,
    /// Between groups of context lines (escapes such as \t and \x7F allowed).
    #[arg(
        help_heading = "Output options",
        long,
        value_name = "SEPARATOR",
        default_value = "--",
        allow_hyphen_values = true,
        overrides_with = "no_context_separator"
    )]
    pub(crate) context_separator: String,
    /// No line between groups of context.
    #[arg(help_heading = "Output options", long, overrides_with = "context_separator")]
    pub(crate) no_context_separator: bool,
    /// After the path and line of a context line.
    #[arg(
        help_heading = "Output options",
        long,
        value_name = "SEPARATOR",
        default_value = "-",
        allow_hyphen_values = true
    )]
    pub(crate) field_context_separator: String,
    /// After the path, line and column of a matching line.
    #[arg(
        help_heading = "Output options",
        long,
        value_name = "SEPARATOR",
        default_value = ":",
        allow_hyphen_values = true
    )]
    pub(crate) field_match_separator: String,
    /// Each file's name once above its lines (the default on a terminal).
    #[arg(help_heading = "Output options", long, overrides_with = "no_heading")]
    pub(crate) heading: bool,
    /// The file's name on every line.
    #[arg(help_heading = "Output options", long, overrides_with = "heading")]
    pub(crate) no_heading: bool,
    /// With -c, files without a match too (count 0).
    #[arg(help_heading = "Output options", long, overrides_with = "no_include_zero")]
    pub(crate) include_zero: bool,
    /// Undoes --include-zero.
    #[arg(help_heading = "Output options", long, overrides_with = "include_zero")]
    pub(crate) no_include_zero: bool,
    /// Accepted as rg's (each line is written whole).
    #[arg(help_heading = "Output options", long, overrides_with = "no_line_buffered")]
    pub(crate) line_buffered: bool,
    /// Undoes --line-buffered.
    #[arg(help_heading = "Output options", long, overrides_with = "line_buffered")]
    pub(crate) no_line_buffered: bool,
    /// Show line numbers (the default on a terminal).
    #[arg(help_heading = "Output options", short = 'n', long, overrides_with = "no_line_number")]
    pub(crate) line_number: bool,
    /// Hide line numbers.
    #[arg(help_heading = "Output options", short = 'N', long, overrides_with = "line_number")]
    pub(crate) no_line_number: bool,
    /// Lines of N bytes or more are left out (as rg; --json-page: cut to a window around the match).
    #[arg(help_heading = "Output options", short = 'M', long, value_name = "N")]
    pub(crate) max_columns: Option<u64>,
    /// With -M, a long line's first N characters and how many matches
    /// follow, instead of leaving it out.
    #[arg(help_heading = "Output options", long, overrides_with = "no_max_columns_preview")]
    pub(crate) max_columns_preview: bool,
    /// Colors as rg's `{type}:{attribute}:{value}` (types path, line,
    /// column, match; fg, bg, style; `{type}:none` clears); repeatable.
    #[arg(help_heading = "Output options", long, value_name = "COLOR_SPEC")]
    pub(crate) colors: Vec<String>,
    /// Accepted as rg's when empty or `none`: sandgrep writes no hyperlinks
    /// (they would carry the host's paths).
    #[arg(help_heading = "Output options", long, value_name = "FORMAT")]
    pub(crate) hyperlink_format: Option<String>,
    /// Leave long lines out (the default).
    #[arg(help_heading = "Output options", long, overrides_with = "max_columns_preview")]
    pub(crate) no_max_columns_preview: bool,
    /// A NUL byte after each path printed (for `xargs -0`).
    #[arg(help_heading = "Output options", short = '0', long)]
    pub(crate) null: bool,
    /// Print each match (not its whole line) on a line of its own.
    #[arg(help_heading = "Output options", short = 'o', long)]
    pub(crate) only_matching: bool,
    /// Print every line of every file searched, those without a match as
    /// context (`-`); -A, -B and -C given after it win over it, and it over
    /// them given before.
    #[arg(help_heading = "Output options", long, alias = "passthrough")]
    pub(crate) passthru: bool,
    /// Print each `/` of a path as SEPARATOR.
    #[arg(help_heading = "Output options", long, value_name = "SEPARATOR")]
    pub(crate) path_separator: Option<String>,
    /// --color always --heading --line-number (those given after it win).
    #[arg(help_heading = "Output options", short = 'p', long)]
    pub(crate) pretty: bool,
    /// Print nothing; exit 0 at the first match, 1 if none.
    #[arg(help_heading = "Output options", short = 'q', long)]
    pub(crate) quiet: bool,
    /// Print each match replaced by TEXT (`$1`, `$name`, `${name}`: its groups; `$$`: a dollar).
    #[arg(help_heading = "Output options", short = 'r', long, value_name = "TEXT", allow_hyphen_values = true)]
    pub(crate) replace: Option<String>,
    /// Results in this order of their files: path (the default, as rg
    /// --sort path's), modified or accessed (oldest first, then path), none
    /// (as path); created is refused (WASI gives no creation time).
    #[arg(help_heading = "Output options", long, value_name = "SORTBY",
          value_parser = ["path", "modified", "accessed", "created", "none"],
          overrides_with_all = ["sortr", "sort_files", "no_sort_files"])]
    pub(crate) sort: Option<String>,
    /// As --sort, in reverse: path (from the last path), modified or
    /// accessed (newest first), none.
    #[arg(help_heading = "Output options", long, value_name = "SORTBY",
          value_parser = ["path", "modified", "accessed", "created", "none"],
          overrides_with_all = ["sort", "sort_files", "no_sort_files"])]
    pub(crate) sortr: Option<String>,
    /// Deprecated in rg: as --sort path.
    #[arg(help_heading = "Output options", long, overrides_with_all = ["no_sort_files", "sort", "sortr"])]
    pub(crate) sort_files: bool,
    /// Deprecated in rg: as --sort none.
    #[arg(help_heading = "Output options", long, overrides_with_all = ["sort_files", "sort", "sortr"])]
    pub(crate) no_sort_files: bool,
    /// Leave out leading whitespace of printed lines.
    #[arg(help_heading = "Output options", long, overrides_with = "no_trim")]
    pub(crate) trim: bool,
    /// Undoes --trim.
    #[arg(help_heading = "Output options", long, overrides_with = "trim")]
    pub(crate) no_trim: bool,
    /// Each match as `path:line:column:line` (vim's format).
    #[arg(help_heading = "Output options", long)]
    pub(crate) vimgrep: bool,
    /// Show the file's name on every line even for one file.
    #[arg(help_heading = "Output options", short = 'H', long, overrides_with = "no_filename")]
    pub(crate) with_filename: bool,
    /// Never show file names.
    #[arg(help_heading = "Output options", short = 'I', long, overrides_with = "with_filename")]
    pub(crate) no_filename: bool,
    /// Print the number of matching lines per file (with -U or -o, of matches).
    #[arg(help_heading = "Output modes", short = 'c', long, overrides_with_all = ["count_matches", "files_with_matches", "files_without_match", "json"])]
    pub(crate) count: bool,
    /// Print the number of matches per file.
    #[arg(help_heading = "Output modes", long, overrides_with_all = ["count", "files_with_matches", "files_without_match", "json"])]
    pub(crate) count_matches: bool,
    /// Print only the paths of files with matches.
    // (Of -l, -c, --count-matches, --files-without-match and --json, the
    // last given wins, as in rg 15.)
    #[arg(help_heading = "Output modes", short = 'l', long, overrides_with_all = ["files_without_match", "count", "count_matches", "json"])]
    pub(crate) files_with_matches: bool,
    /// Print only the paths of files searched without a match.
    #[arg(help_heading = "Output modes", long, overrides_with_all = ["files_with_matches", "count", "count_matches", "json"])]
    pub(crate) files_without_match: bool,
    /// Print JSON Lines as `rg --json` does (begin, match, context, end,
    /// summary messages), every result.
    #[arg(help_heading = "Output modes", long, overrides_with_all = ["no_json", "json_page", "count", "count_matches", "files_with_matches", "files_without_match"])]
    pub(crate) json: bool,
    /// Undoes --json.
    #[arg(help_heading = "Output modes", long, overrides_with = "json")]
    pub(crate) no_json: bool,
    /// No warnings about files that could not be searched.
    #[arg(help_heading = "Logging options", long)]
    pub(crate) no_messages: bool,
    /// Accepted as rg's (sandgrep writes no debug messages).
    #[arg(help_heading = "Logging options", long)]
    pub(crate) debug: bool,
    /// Accepted as rg's (sandgrep writes no trace messages).
    #[arg(help_heading = "Logging options", long)]
    pub(crate) trace: bool,
    /// Refused: sandgrep runs no program (rg's finds the host name of
    /// hyperlinks, which sandgrep does not write).
    #[arg(help_heading = "Output options", long, value_name = "COMMAND")]
    pub(crate) hostname_bin: Option<String>,
    /// Refused, for now: the walk cannot tell one file system from another
    /// (WASI has no device numbers).
    #[arg(help_heading = "Filter options", long, overrides_with = "no_one_file_system")]
    pub(crate) one_file_system: bool,
    /// Directories on other file systems are searched too (the default).
    #[arg(help_heading = "Filter options", long, overrides_with = "one_file_system")]
    pub(crate) no_one_file_system: bool,
    /// Accepted as rg's: sandgrep says nothing of ignore files it cannot parse.
    #[arg(help_heading = "Logging options", long, overrides_with = "ignore_messages")]
    pub(crate) no_ignore_messages: bool,
    /// Accepted as rg's (the default).
    #[arg(help_heading = "Logging options", long, overrides_with = "no_ignore_messages")]
    pub(crate) ignore_messages: bool,
    /// After the results, what was searched and found (as `rg --stats`).
    #[arg(help_heading = "Logging options", long, overrides_with = "no_stats")]
    pub(crate) stats: bool,
    /// Undoes --stats.
    #[arg(help_heading = "Logging options", long, overrides_with = "stats")]
    pub(crate) no_stats: bool,
    /// List the files that would be searched (as `rg --files`), no search.
    #[arg(help_heading = "Other behaviors", long)]
    pub(crate) files: bool,
    /// Read no config file (RIPGREP_CONFIG_PATH names one: search flags,
    /// one argument a line, before the command line's own).
    #[arg(help_heading = "Other behaviors", long)]
    pub(crate) no_config: bool,
    /// List the file types `-t` knows, with their globs.
    #[arg(help_heading = "Other behaviors", long)]
    pub(crate) type_list: bool,
    /// Print the version of PCRE2 that -P uses (the component's), as rg.
    #[arg(help_heading = "Other behaviors", long)]
    pub(crate) pcre2_version: bool,
    /// Results in all (every result unless given; --json-page: one page of at most N).
    #[arg(help_heading = SANDGREP_ONLY, long, value_name = "N")]
    pub(crate) max_results: Option<u64>,
    /// Continue after the result a previous call's cursor names.
    #[arg(help_heading = SANDGREP_ONLY, long, value_name = "TOKEN")]
    pub(crate) cursor: Option<String>,
    /// Skip this many results first.
    #[arg(help_heading = SANDGREP_ONLY, long, value_name = "N")]
    pub(crate) skip: Option<u64>,
    /// Stop after MS milliseconds and return what was found.
    #[arg(help_heading = SANDGREP_ONLY, long = "timeout", value_name = "MS")]
    pub(crate) timeout_ms: Option<u64>,
    /// Print the response as one JSON object (one bounded page).
    #[arg(help_heading = SANDGREP_ONLY, long, overrides_with = "json")]
    pub(crate) json_page: bool,
    /// The paths as given (results are shown under these names, as rg does).
    #[arg(skip)]
    pub(crate) given: Vec<String>,
    /// Of each path, whether a walk found it, not named (a sorted search
    /// names each file it listed): searched as the walk's files are.
    #[arg(skip)]
    pub(crate) walked: Vec<bool>,
    /// --type-add and --type-clear in the order given.
    #[arg(skip)]
    pub(crate) type_changes: Vec<sandgrep::TypeChange>,
}

/// Numbers past `u32` reach the guest as `u32::MAX`, which clamps them to the
/// contract's maximum and says so.
pub(crate) fn sat(n: Option<u64>) -> Option<u32> {
    n.map(|n| n.min(u32::MAX.into()) as u32)
}

/// rg's sizes: digits and an optional `K`, `M` or `G`, in rg's words when
/// not.
pub(crate) fn parse_rg_size(size: &str) -> Result<u64, String> {
    let digits = &size[..size.bytes().take_while(u8::is_ascii_digit).count()];
    if digits.is_empty() {
        return Err(format!(
            "invalid format for size '{size}', which should be a non-empty sequence of digits followed by an optional 'K', 'M' or 'G' suffix"
        ));
    }
    let value: u64 = digits.parse().map_err(|e| format!("invalid integer found in size '{size}': {e}"))?;
    let shift = match &size[digits.len()..] {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => {
            return Err(format!(
                "invalid format for size '{size}', which should be a non-empty sequence of digits followed by an optional 'K', 'M' or 'G' suffix"
            ))
        }
    };
    value.checked_mul(1 << shift).ok_or_else(|| format!("size too big in '{size}'"))
}

pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (digits, mult) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m: u64 = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                _ => return Err(format!("unknown size suffix {c:?} (use K, M or G)")),
            };
            (&s[..i], m)
        }
        _ => (s, 1),
    };
    let n: u64 = digits.parse().map_err(|_| format!("invalid size {s:?}"))?;
    Ok(n.saturating_mul(mult))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// The tests that run rg beside sandgrep and compare their output.
    const ORACLE_CASES: &[&str] =
        &[include_str!("../../../tests/rg_output.rs"), include_str!("../../../tests/rg_json.rs")];

    #[test]
    fn every_flag_shared_with_rg_has_an_oracle_case() {
        let command = Cli::command();
        let search = command.find_subcommand("search").unwrap();
        let mut missing = Vec::new();
        for arg in search.get_arguments().filter(|a| !a.is_positional()) {
            let Some(long) = arg.get_long() else { continue };
            // (Refused by name, with why: `cli::flags_that_would_run_a_program_are_refused_by_name`.)
            if arg.get_help_heading() == Some(SANDGREP_ONLY) || long == "one-file-system" {
                continue;
            }
            let mut spellings = vec![format!("\"--{long}\""), format!("\"--{long}=")];
            if let Some(short) = arg.get_short() {
                spellings.push(format!("\"-{short}\""));
                spellings.push(format!("\"-{short}{short}\""));
            }
            if !ORACLE_CASES.iter().any(|cases| spellings.iter().any(|s| cases.contains(s.as_str()))) {
                missing.push(long);
            }
        }
        assert!(missing.is_empty(), "flags shared with rg without a case that compares with rg: {missing:?}");
    }
}
