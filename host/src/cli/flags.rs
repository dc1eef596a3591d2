//! The table of flags: every subcommand's arguments, their help, and the
//! parsers of their values. Help, the man page and the completions are
//! generated from it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use sandgrep::limits::{Limit, LIST_RESULTS, MAX_RESULTS, READ_BYTES, READ_LINES};

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
    /// searches read only the files that can match.
    Index {
        /// Print the report as one JSON object.
        #[arg(long)]
        json: bool,
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
        /// Where to write it.
        #[arg(long, value_name = "FILE", default_value = "sandgrep.wasm")]
        out: PathBuf,
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

#[derive(Args)]
pub(crate) struct SearchArgs {
    /// The pattern (a Rust regex; a literal string with -F).
    #[arg(value_name = "PATTERN", required_unless_present_any = ["regexp", "pattern_files", "files", "type_list"])]
    pub(crate) pattern: Option<String>,
    /// Files or directories to search, relative to the workspace.
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<String>,
    /// A pattern to search for (repeatable: lines matching any); every
    /// positional argument is then a path.
    #[arg(short = 'e', long = "regexp", value_name = "PATTERN", allow_hyphen_values = true)]
    pub(crate) regexp: Vec<String>,
    /// Treat the pattern as a literal string.
    #[arg(short = 'F', long)]
    pub(crate) fixed_strings: bool,
    /// Case-insensitive.
    #[arg(short = 'i', long, overrides_with_all = ["case_sensitive", "smart_case"])]
    pub(crate) ignore_case: bool,
    /// Case-sensitive (the default).
    #[arg(short = 's', long, overrides_with_all = ["ignore_case", "smart_case"])]
    pub(crate) case_sensitive: bool,
    /// Case-insensitive unless the pattern has an upper-case letter.
    #[arg(short = 'S', long, overrides_with_all = ["ignore_case", "case_sensitive"])]
    pub(crate) smart_case: bool,
    /// Match whole words only.
    #[arg(short = 'w', long, overrides_with = "line_regexp")]
    pub(crate) word_regexp: bool,
    /// Select the lines that do not match.
    #[arg(short = 'v', long)]
    pub(crate) invert_match: bool,
    /// Let matches span lines.
    #[arg(short = 'U', long)]
    pub(crate) multiline: bool,
    /// With -U, `.` matches line ends too.
    #[arg(long)]
    pub(crate) multiline_dotall: bool,
    /// Only lines the pattern matches whole.
    #[arg(short = 'x', long, overrides_with = "word_regexp")]
    pub(crate) line_regexp: bool,
    /// Patterns from FILE, one per line (`-`: standard input), as with -e.
    #[arg(short = 'f', long = "file", value_name = "PATTERNFILE")]
    pub(crate) pattern_files: Vec<std::path::PathBuf>,
    /// Include files matching GLOB; `!GLOB` excludes.
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    pub(crate) globs: Vec<String>,
    /// As -g, matching either case.
    #[arg(long = "iglob", value_name = "GLOB")]
    pub(crate) iglobs: Vec<String>,
    /// Every -g glob matches either case.
    #[arg(long)]
    pub(crate) glob_case_insensitive: bool,
    /// Only search files of this ripgrep type (rust, py, js, ...; see --type-list).
    #[arg(short = 't', long = "type", value_name = "TYPE")]
    pub(crate) types: Vec<String>,
    /// Leave out files of this type.
    #[arg(short = 'T', long = "type-not", value_name = "TYPE")]
    pub(crate) types_not: Vec<String>,
    /// Descend at most NUM directories below each path (0: only the paths named).
    #[arg(short = 'd', long, alias = "maxdepth", value_name = "NUM")]
    pub(crate) max_depth: Option<u32>,
    /// Lines of context after each match.
    #[arg(short = 'A', long, value_name = "N")]
    pub(crate) after_context: Option<u64>,
    /// Lines of context before each match.
    #[arg(short = 'B', long, value_name = "N")]
    pub(crate) before_context: Option<u64>,
    /// Lines of context before and after each match (-A and -B override its part, wherever given).
    #[arg(short = 'C', long, value_name = "N")]
    pub(crate) context: Option<u64>,
    /// Matching lines per file.
    #[arg(short = 'm', long = "max-count", value_name = "PER_FILE")]
    pub(crate) max_count: Option<u64>,
    /// Results in all (text output: every result unless given; --json: one page).
    #[arg(long, value_name = "N")]
    pub(crate) max_results: Option<u64>,
    /// Lines of N bytes or more are left out (as rg; --json: cut to a window around the match).
    #[arg(short = 'M', long, value_name = "N")]
    pub(crate) max_columns: Option<u64>,
    /// Skip files larger than SIZE (bytes, or with K, M, G suffix).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub(crate) max_filesize: Option<u64>,
    /// Search hidden files and directories.
    #[arg(long = "hidden", short = '.')]
    pub(crate) hidden: bool,
    /// Do not respect .gitignore, .ignore and .rgignore.
    #[arg(long)]
    pub(crate) no_ignore: bool,
    /// -u: --no-ignore; -uu: and --hidden (binary files are never searched).
    #[arg(short = 'u', long = "unrestricted", action = clap::ArgAction::Count)]
    pub(crate) unrestricted: u8,
    /// Follow symbolic links (escapes are still refused).
    #[arg(short = 'L', long)]
    pub(crate) follow: bool,
    /// Print only the paths of files with matches (of -l, -c, --count-matches
    /// and --files-without-match, the last given wins, as in rg 15).
    #[arg(short = 'l', long, overrides_with_all = ["files_without_match", "count", "count_matches"])]
    pub(crate) files_with_matches: bool,
    /// Print only the paths of files searched without a match.
    #[arg(long, overrides_with_all = ["files_with_matches", "count", "count_matches"])]
    pub(crate) files_without_match: bool,
    /// With -c, files without a match too (count 0).
    #[arg(long)]
    pub(crate) include_zero: bool,
    /// Print the number of matching lines per file (with -U or -o, of matches).
    #[arg(short = 'c', long, overrides_with_all = ["count_matches", "files_with_matches", "files_without_match"])]
    pub(crate) count: bool,
    /// Print the number of matches per file.
    #[arg(long, overrides_with_all = ["count", "files_with_matches", "files_without_match"])]
    pub(crate) count_matches: bool,
    /// Print each match (not its whole line) on a line of its own.
    #[arg(short = 'o', long)]
    pub(crate) only_matching: bool,
    /// Show line numbers (the default on a terminal).
    #[arg(short = 'n', long, overrides_with = "no_line_number")]
    pub(crate) line_number: bool,
    /// Hide line numbers.
    #[arg(short = 'N', long, overrides_with = "line_number")]
    pub(crate) no_line_number: bool,
    /// Show the column of the first match (and line numbers).
    #[arg(long)]
    pub(crate) column: bool,
    /// Each file's name once above its lines (the default on a terminal).
    #[arg(long, overrides_with = "no_heading")]
    pub(crate) heading: bool,
    /// The file's name on every line.
    #[arg(long, overrides_with = "heading")]
    pub(crate) no_heading: bool,
    /// Show the file's name on every line even for one file.
    #[arg(short = 'H', long, overrides_with = "no_filename")]
    pub(crate) with_filename: bool,
    /// Never show file names.
    #[arg(short = 'I', long, overrides_with = "with_filename")]
    pub(crate) no_filename: bool,
    /// Colors: never, auto (on a terminal), always.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["never", "auto", "always", "ansi"])]
    pub(crate) color: String,
    /// Results come in path order; `path` and `none` are accepted as rg's.
    #[arg(long, value_name = "SORTBY", value_parser = ["path", "none"])]
    pub(crate) sort: Option<String>,
    /// List the files that would be searched (as `rg --files`), no search.
    #[arg(long)]
    pub(crate) files: bool,
    /// List the file types `-t` knows, with their globs.
    #[arg(long)]
    pub(crate) type_list: bool,
    /// After the results, what was searched and found (as `rg --stats`).
    #[arg(long)]
    pub(crate) stats: bool,
    /// Print nothing; exit 0 at the first match, 1 if none.
    #[arg(short = 'q', long)]
    pub(crate) quiet: bool,
    /// Between groups of context lines (escapes such as \t and \x7F allowed).
    #[arg(long, value_name = "SEPARATOR", default_value = "--", allow_hyphen_values = true)]
    pub(crate) context_separator: String,
    /// No line between groups of context.
    #[arg(long)]
    pub(crate) no_context_separator: bool,
    /// After the path, line and column of a matching line.
    #[arg(long, value_name = "SEPARATOR", default_value = ":", allow_hyphen_values = true)]
    pub(crate) field_match_separator: String,
    /// After the path and line of a context line.
    #[arg(long, value_name = "SEPARATOR", default_value = "-", allow_hyphen_values = true)]
    pub(crate) field_context_separator: String,
    /// Print each `/` of a path as SEPARATOR.
    #[arg(long, value_name = "SEPARATOR")]
    pub(crate) path_separator: Option<String>,
    /// Each match as `path:line:column:line` (vim's format).
    #[arg(long)]
    pub(crate) vimgrep: bool,
    /// Print each match replaced by TEXT (`$1`, `$name`, `${name}`: its groups; `$$`: a dollar).
    #[arg(short = 'r', long, value_name = "TEXT", allow_hyphen_values = true)]
    pub(crate) replace: Option<String>,
    /// Leave out leading whitespace of printed lines.
    #[arg(long)]
    pub(crate) trim: bool,
    /// A NUL byte after each path printed (for `xargs -0`).
    #[arg(short = '0', long)]
    pub(crate) null: bool,
    /// No warnings about files that could not be searched.
    #[arg(long)]
    pub(crate) no_messages: bool,
    /// --color always --heading --line-number (those given after it win).
    #[arg(short = 'p', long)]
    pub(crate) pretty: bool,
    /// Accepted as rg's, and nothing to change: sandgrep reads no config
    /// file and no global gitignore (nothing outside the workspace), and
    /// writes each line whole.
    #[arg(long, hide = true)]
    pub(crate) no_config: bool,
    #[arg(long, hide = true)]
    pub(crate) no_ignore_global: bool,
    #[arg(long, hide = true)]
    pub(crate) line_buffered: bool,
    #[arg(long, hide = true)]
    pub(crate) block_buffered: bool,
    /// Continue after the result a previous call's cursor names.
    #[arg(long, value_name = "TOKEN")]
    pub(crate) cursor: Option<String>,
    /// Skip this many results first.
    #[arg(long, value_name = "N")]
    pub(crate) skip: Option<u64>,
    /// Stop after MS milliseconds and return what was found.
    #[arg(long = "timeout", value_name = "MS")]
    pub(crate) timeout_ms: Option<u64>,
    /// Print JSON Lines as `rg --json` does (begin, match, context, end,
    /// summary messages), every result.
    #[arg(long, overrides_with = "json_page")]
    pub(crate) json: bool,
    /// Print the response as one JSON object (one bounded page).
    #[arg(long, overrides_with = "json")]
    pub(crate) json_page: bool,
    /// The paths as given (results are shown under these names, as rg does).
    #[arg(skip)]
    pub(crate) given: Vec<String>,
}

/// Numbers past `u32` reach the guest as `u32::MAX`, which clamps them to the
/// contract's maximum and says so.
pub(crate) fn sat(n: Option<u64>) -> Option<u32> {
    n.map(|n| n.min(u32::MAX.into()) as u32)
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
