//! The `sandgrep` command line: ripgrep-style flags in, ripgrep-style text or
//! one JSON object out. Exit status: 0 found, 1 nothing found, 2 error.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};

mod printer;
use sandgrep::limits::{Limit, LIST_RESULTS, MAX_RESULTS, MIN_OPEN_FILES, READ_BYTES, READ_LINES};
use sandgrep::{
    render, CaseMode, FileCount, ListFilesRequest, OutputMode, Policy, Progress, QueryMode, RangeType, ReadFileRequest,
    Sandbox, SearchAstRequest, SearchError, SearchTextRequest,
};

/// Where `--help` lists the options every subcommand takes (after its own).
const GLOBAL: &str = "Global options";

#[derive(Parser)]
#[command(name = "sandgrep", version, about = "Code search inside a WebAssembly capability sandbox")]
struct Cli {
    /// The workspace: the only directory sandgrep can read.
    #[arg(long, global = true, default_value = ".", value_name = "DIR", help_heading = GLOBAL)]
    root: PathBuf,
    /// Also deny paths matching GLOB (on top of the built-in secrets list).
    #[arg(long = "deny", global = true, value_name = "GLOB", help_heading = GLOBAL)]
    deny: Vec<String>,
    /// Show secrets instead of [REDACTED] (the operator's choice, not an agent's).
    #[arg(long, global = true, help_heading = GLOBAL)]
    no_redact: bool,
    /// Switch off one redaction rule by name, e.g. jwt (the operator's
    /// choice; the names are listed in docs/safety.md).
    #[arg(long = "no-redact-rule", global = true, value_name = "RULE", help_heading = GLOBAL)]
    no_redact_rule: Vec<String>,
    /// Memory cap of the sandboxed instance (bytes, or with K, M, G suffix).
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_size, help_heading = GLOBAL)]
    memory_limit: Option<u64>,
    /// Instances searching side by side (default: one per core).
    #[arg(short = 'j', long = "threads", global = true, value_name = "N", help_heading = GLOBAL)]
    threads: Option<usize>,
    /// Run another build of the sandgrep component instead of the embedded one.
    #[arg(long, global = true, value_name = "FILE", help_heading = GLOBAL)]
    component: Option<PathBuf>,
    /// Read every file instead of using the workspace's index (see `sandgrep index`).
    #[arg(long, global = true, help_heading = GLOBAL)]
    no_index: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
struct LsArgs {
    /// Directory to list, relative to the workspace.
    #[arg(value_name = "PATH", default_value = ".")]
    path: String,
    /// Include paths matching GLOB; `!GLOB` excludes.
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    globs: Vec<String>,
    /// List hidden files and directories.
    #[arg(long = "hidden", short = '.')]
    hidden: bool,
    /// Do not respect .gitignore, .ignore and .rgignore.
    #[arg(long)]
    no_ignore: bool,
    /// Follow symbolic links (inside the workspace only).
    #[arg(short = 'L', long)]
    follow: bool,
    /// List directories too (shown with a trailing `/`).
    #[arg(long)]
    dirs: bool,
    /// Show size and modification time (on a terminal as `1.2K` and an ISO
    /// time; piped, bytes and UNIX seconds).
    #[arg(long)]
    metadata: bool,
    /// Draw the listing as a tree (├── and └──), bounded and paged as the list.
    #[arg(long)]
    tree: bool,
    /// Only the directory's own entries.
    #[arg(long)]
    no_recursive: bool,
    #[arg(long, value_name = "N", help = limit_help("Entries returned", LIST_RESULTS))]
    max_results: Option<u64>,
    /// Skip this many entries first.
    #[arg(long, value_name = "N")]
    skip: Option<u64>,
    /// Continue after the entry a previous call's cursor names.
    #[arg(long, value_name = "TOKEN")]
    cursor: Option<String>,
    /// Print one JSON object (the full response) instead of text.
    #[arg(long)]
    json: bool,
}

#[cfg(feature = "serve")]
#[derive(Args)]
struct ServeArgs {
    /// The config file (TOML): listen address, tenants, their tokens and limits.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Listen here instead of the config's address.
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
}

#[derive(Args)]
struct AstArgs {
    /// An ast-grep pattern, e.g. 'foo($A, $$$REST)'.
    #[arg(value_name = "PATTERN")]
    pattern: String,
    /// Files or directories to search, relative to the workspace.
    #[arg(value_name = "PATH")]
    paths: Vec<String>,
    /// The pattern's language (rust, python, javascript, typescript, tsx, go,
    /// java, c, cpp, json); default: each file's, by extension.
    #[arg(long = "lang", value_name = "LANG")]
    lang: Option<String>,
    /// Include files matching GLOB; `!GLOB` excludes.
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    globs: Vec<String>,
    /// Search hidden files and directories.
    #[arg(long = "hidden", short = '.')]
    hidden: bool,
    /// Do not respect .gitignore, .ignore and .rgignore.
    #[arg(long)]
    no_ignore: bool,
    /// Follow symbolic links (escapes are still refused).
    #[arg(short = 'L', long)]
    follow: bool,
    #[arg(long, value_name = "N", help = limit_help("Matches returned", MAX_RESULTS))]
    max_results: Option<u64>,
    /// Skip files larger than SIZE (bytes, or with K, M, G suffix).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_filesize: Option<u64>,
    /// Continue after the last match of a previous call.
    #[arg(long, value_name = "TOKEN")]
    cursor: Option<String>,
    /// Skip this many matches first.
    #[arg(long, value_name = "N")]
    skip: Option<u64>,
    /// Stop after this long with partial results (milliseconds).
    #[arg(long = "timeout", value_name = "MS")]
    timeout_ms: Option<u64>,
    /// Print one JSON object (the full response) instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ReadArgs {
    /// The file, relative to the workspace.
    #[arg(value_name = "PATH")]
    path: String,
    #[arg(long, value_name = "START:COUNT", value_parser = parse_range, conflicts_with = "bytes",
          help = format!("Lines START (1-based) to START+COUNT-1; COUNT defaults to {}", READ_LINES.default))]
    lines: Option<(u64, Option<u64>)>,
    #[arg(long, value_name = "OFFSET:COUNT", value_parser = parse_range,
          help = format!("COUNT bytes from OFFSET (0-based); COUNT defaults to {}", READ_BYTES.default))]
    bytes: Option<(u64, Option<u64>)>,
    /// Print one JSON object (the full response) instead of text.
    #[arg(long)]
    json: bool,
}

/// "WHAT (default D, max M)", from the limits table.
fn limit_help(what: &str, limit: Limit) -> String {
    format!("{what} (default {}, max {})", limit.default, limit.max)
}

/// `N`, `N:` or `N:M`.
fn parse_range(s: &str) -> Result<(u64, Option<u64>), String> {
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
struct SearchArgs {
    /// The pattern (a Rust regex; a literal string with -F).
    #[arg(value_name = "PATTERN", required_unless_present_any = ["regexp", "pattern_files", "files", "type_list"])]
    pattern: Option<String>,
    /// Files or directories to search, relative to the workspace.
    #[arg(value_name = "PATH")]
    paths: Vec<String>,
    /// A pattern to search for (repeatable: lines matching any); every
    /// positional argument is then a path.
    #[arg(short = 'e', long = "regexp", value_name = "PATTERN", allow_hyphen_values = true)]
    regexp: Vec<String>,
    /// Treat the pattern as a literal string.
    #[arg(short = 'F', long)]
    fixed_strings: bool,
    /// Case-insensitive.
    #[arg(short = 'i', long, overrides_with_all = ["case_sensitive", "smart_case"])]
    ignore_case: bool,
    /// Case-sensitive (the default).
    #[arg(short = 's', long, overrides_with_all = ["ignore_case", "smart_case"])]
    case_sensitive: bool,
    /// Case-insensitive unless the pattern has an upper-case letter.
    #[arg(short = 'S', long, overrides_with_all = ["ignore_case", "case_sensitive"])]
    smart_case: bool,
    /// Match whole words only.
    #[arg(short = 'w', long, overrides_with = "line_regexp")]
    word_regexp: bool,
    /// Select the lines that do not match.
    #[arg(short = 'v', long)]
    invert_match: bool,
    /// Let matches span lines.
    #[arg(short = 'U', long)]
    multiline: bool,
    /// With -U, `.` matches line ends too.
    #[arg(long)]
    multiline_dotall: bool,
    /// Only lines the pattern matches whole.
    #[arg(short = 'x', long, overrides_with = "word_regexp")]
    line_regexp: bool,
    /// Patterns from FILE, one per line (`-`: standard input), as with -e.
    #[arg(short = 'f', long = "file", value_name = "PATTERNFILE")]
    pattern_files: Vec<std::path::PathBuf>,
    /// Include files matching GLOB; `!GLOB` excludes.
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    globs: Vec<String>,
    /// As -g, matching either case.
    #[arg(long = "iglob", value_name = "GLOB")]
    iglobs: Vec<String>,
    /// Every -g glob matches either case.
    #[arg(long)]
    glob_case_insensitive: bool,
    /// Only search files of this ripgrep type (rust, py, js, ...; see --type-list).
    #[arg(short = 't', long = "type", value_name = "TYPE")]
    types: Vec<String>,
    /// Leave out files of this type.
    #[arg(short = 'T', long = "type-not", value_name = "TYPE")]
    types_not: Vec<String>,
    /// Descend at most NUM directories below each path (0: only the paths named).
    #[arg(short = 'd', long, alias = "maxdepth", value_name = "NUM")]
    max_depth: Option<u32>,
    /// Lines of context after each match.
    #[arg(short = 'A', long, value_name = "N")]
    after_context: Option<u64>,
    /// Lines of context before each match.
    #[arg(short = 'B', long, value_name = "N")]
    before_context: Option<u64>,
    /// Lines of context before and after each match (-A and -B override its part, wherever given).
    #[arg(short = 'C', long, value_name = "N")]
    context: Option<u64>,
    /// Matching lines per file.
    #[arg(short = 'm', long = "max-count", value_name = "PER_FILE")]
    max_count: Option<u64>,
    /// Results in all (text output: every result unless given; --json: one page).
    #[arg(long, value_name = "N")]
    max_results: Option<u64>,
    /// Lines of N bytes or more are left out (as rg; --json: cut to a window around the match).
    #[arg(short = 'M', long, value_name = "N")]
    max_columns: Option<u64>,
    /// Skip files larger than SIZE (bytes, or with K, M, G suffix).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_filesize: Option<u64>,
    /// Search hidden files and directories.
    #[arg(long = "hidden", short = '.')]
    hidden: bool,
    /// Do not respect .gitignore, .ignore and .rgignore.
    #[arg(long)]
    no_ignore: bool,
    /// -u: --no-ignore; -uu: and --hidden (binary files are never searched).
    #[arg(short = 'u', long = "unrestricted", action = clap::ArgAction::Count)]
    unrestricted: u8,
    /// Follow symbolic links (escapes are still refused).
    #[arg(short = 'L', long)]
    follow: bool,
    /// Print only the paths of files with matches (of -l, -c, --count-matches
    /// and --files-without-match, the last given wins, as in rg 15).
    #[arg(short = 'l', long, overrides_with_all = ["files_without_match", "count", "count_matches"])]
    files_with_matches: bool,
    /// Print only the paths of files searched without a match.
    #[arg(long, overrides_with_all = ["files_with_matches", "count", "count_matches"])]
    files_without_match: bool,
    /// With -c, files without a match too (count 0).
    #[arg(long)]
    include_zero: bool,
    /// Print the number of matching lines per file (with -U or -o, of matches).
    #[arg(short = 'c', long, overrides_with_all = ["count_matches", "files_with_matches", "files_without_match"])]
    count: bool,
    /// Print the number of matches per file.
    #[arg(long, overrides_with_all = ["count", "files_with_matches", "files_without_match"])]
    count_matches: bool,
    /// Print each match (not its whole line) on a line of its own.
    #[arg(short = 'o', long)]
    only_matching: bool,
    /// Show line numbers (the default on a terminal).
    #[arg(short = 'n', long, overrides_with = "no_line_number")]
    line_number: bool,
    /// Hide line numbers.
    #[arg(short = 'N', long, overrides_with = "line_number")]
    no_line_number: bool,
    /// Show the column of the first match (and line numbers).
    #[arg(long)]
    column: bool,
    /// Each file's name once above its lines (the default on a terminal).
    #[arg(long, overrides_with = "no_heading")]
    heading: bool,
    /// The file's name on every line.
    #[arg(long, overrides_with = "heading")]
    no_heading: bool,
    /// Show the file's name on every line even for one file.
    #[arg(short = 'H', long, overrides_with = "no_filename")]
    with_filename: bool,
    /// Never show file names.
    #[arg(short = 'I', long, overrides_with = "with_filename")]
    no_filename: bool,
    /// Colors: never, auto (on a terminal), always.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["never", "auto", "always", "ansi"])]
    color: String,
    /// Results come in path order; `path` and `none` are accepted as rg's.
    #[arg(long, value_name = "SORTBY", value_parser = ["path", "none"])]
    sort: Option<String>,
    /// List the files that would be searched (as `rg --files`), no search.
    #[arg(long)]
    files: bool,
    /// List the file types `-t` knows, with their globs.
    #[arg(long)]
    type_list: bool,
    /// After the results, what was searched and found (as `rg --stats`).
    #[arg(long)]
    stats: bool,
    /// Print nothing; exit 0 at the first match, 1 if none.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Between groups of context lines (escapes such as \t and \x7F allowed).
    #[arg(long, value_name = "SEPARATOR", default_value = "--", allow_hyphen_values = true)]
    context_separator: String,
    /// No line between groups of context.
    #[arg(long)]
    no_context_separator: bool,
    /// After the path, line and column of a matching line.
    #[arg(long, value_name = "SEPARATOR", default_value = ":", allow_hyphen_values = true)]
    field_match_separator: String,
    /// After the path and line of a context line.
    #[arg(long, value_name = "SEPARATOR", default_value = "-", allow_hyphen_values = true)]
    field_context_separator: String,
    /// Print each `/` of a path as SEPARATOR.
    #[arg(long, value_name = "SEPARATOR")]
    path_separator: Option<String>,
    /// Each match as `path:line:column:line` (vim's format).
    #[arg(long)]
    vimgrep: bool,
    /// Print each match replaced by TEXT (`$1`, `$name`, `${name}`: its groups; `$$`: a dollar).
    #[arg(short = 'r', long, value_name = "TEXT", allow_hyphen_values = true)]
    replace: Option<String>,
    /// Leave out leading whitespace of printed lines.
    #[arg(long)]
    trim: bool,
    /// A NUL byte after each path printed (for `xargs -0`).
    #[arg(short = '0', long)]
    null: bool,
    /// No warnings about files that could not be searched.
    #[arg(long)]
    no_messages: bool,
    /// --color always --heading --line-number (those given after it win).
    #[arg(short = 'p', long)]
    pretty: bool,
    /// Accepted as rg's, and nothing to change: sandgrep reads no config
    /// file and no global gitignore (nothing outside the workspace), and
    /// writes each line whole.
    #[arg(long, hide = true)]
    no_config: bool,
    #[arg(long, hide = true)]
    no_ignore_global: bool,
    #[arg(long, hide = true)]
    line_buffered: bool,
    #[arg(long, hide = true)]
    block_buffered: bool,
    /// Continue after the result a previous call's cursor names.
    #[arg(long, value_name = "TOKEN")]
    cursor: Option<String>,
    /// Skip this many results first.
    #[arg(long, value_name = "N")]
    skip: Option<u64>,
    /// Stop after MS milliseconds and return what was found.
    #[arg(long = "timeout", value_name = "MS")]
    timeout_ms: Option<u64>,
    /// Print one JSON object (the full response) instead of text.
    #[arg(long)]
    json: bool,
    /// The paths as given (results are shown under these names, as rg does).
    #[arg(skip)]
    given: Vec<String>,
}

/// Numbers past `u32` reach the guest as `u32::MAX`, which clamps them to the
/// contract's maximum and says so.
fn sat(n: Option<u64>) -> Option<u32> {
    n.map(|n| n.min(u32::MAX.into()) as u32)
}

fn parse_size(s: &str) -> Result<u64, String> {
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

/// `glob` matching either case (rg's --iglob): each letter a class of both
/// (`*.RS` → `*.[rR][sS]`), each class with its letters' other case.
fn either_case(glob: &str) -> String {
    // (ASCII letters only, as rg's: globs match bytes.)
    let other = |c: char| match c {
        'a'..='z' => Some(c.to_ascii_uppercase()),
        'A'..='Z' => Some(c.to_ascii_lowercase()),
        _ => None,
    };
    let (mut out, mut chars) = (String::new(), glob.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e) => match other(e) {
                    Some(o) => out.extend(['[', e, o, ']']),
                    None => out.extend(['\\', e]),
                },
                None => out.push('\\'),
            },
            '[' => {
                // The class as written, then the other case of its letters
                // and ranges of letters.
                let mut class = String::from('[');
                if let Some(&n) = chars.peek().filter(|&&n| n == '!' || n == '^') {
                    class.push(n);
                    chars.next();
                }
                let (mut body, mut closed) = (Vec::new(), false);
                for k in chars.by_ref() {
                    if k == ']' && !body.is_empty() {
                        closed = true;
                        break;
                    }
                    body.push(k);
                }
                class.extend(&body);
                if !closed {
                    // (Not a class: as written, for the glob's own error.)
                    out.push_str(&class);
                    continue;
                }
                let mut i = 0;
                while i < body.len() {
                    match (body.get(i + 1), body.get(i + 2).and_then(|&z| other(z)), other(body[i])) {
                        (Some('-'), Some(z), Some(a)) => {
                            class.extend([a, '-', z]);
                            i += 3;
                        }
                        (_, _, Some(a)) => {
                            class.push(a);
                            i += 1;
                        }
                        _ => i += 1,
                    }
                }
                class.push(']');
                out.push_str(&class);
            }
            c => match other(c) {
                Some(o) => out.extend(['[', c, o, ']']),
                None => out.push(c),
            },
        }
    }
    out
}

/// rg's `-g`: `GLOB` includes, `!GLOB` excludes.
fn split_globs(globs: &[String]) -> (Vec<String>, Vec<String>) {
    let (ex, inc): (Vec<&String>, Vec<&String>) = globs.iter().partition(|g| g.starts_with('!'));
    (inc.into_iter().cloned().collect(), ex.into_iter().map(|g| g[1..].to_string()).collect())
}

impl SearchArgs {
    /// With `-e` (or `--files`), every positional argument is a path.
    fn settle(&mut self) -> io::Result<()> {
        for file in &self.pattern_files {
            let text =
                if file.as_os_str() == "-" { io::read_to_string(io::stdin()) } else { std::fs::read_to_string(file) };
            let text = text.map_err(|e| io::Error::other(format!("{}: {e}", file.display())))?;
            self.regexp.extend(text.lines().map(str::to_string));
        }
        if !self.regexp.is_empty() || !self.pattern_files.is_empty() || self.files || self.type_list {
            if let Some(p) = self.pattern.take() {
                self.paths.insert(0, p);
            }
        }
        if self.paths.iter().any(String::is_empty) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a path is empty"));
        }
        // (As rg: an empty one is the default.)
        self.path_separator = self.path_separator.take().filter(|sep| !sep.is_empty());
        if let Some(sep) = &self.path_separator {
            if unescaped(sep).len() != 1 {
                let message = format!("--path-separator takes one byte, not {sep:?}");
                return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
            }
        }
        if self.glob_case_insensitive {
            self.iglobs.splice(0..0, std::mem::take(&mut self.globs));
        }
        for g in std::mem::take(&mut self.iglobs) {
            let (not, glob) = g.strip_prefix('!').map_or(("", g.as_str()), |rest| ("!", rest));
            self.globs.push(format!("{not}{}", either_case(glob)));
        }
        if self.unrestricted >= 1 {
            self.no_ignore = true;
        }
        if self.unrestricted >= 2 {
            self.hidden = true;
        }
        Ok(())
    }

    /// -p as rg 15 reads it: `--color always --heading --line-number` where
    /// it stands, so that these flags (or their opposites) given after it
    /// win over it, and those before it lose.
    fn pretty_where_given(&mut self, m: &clap::ArgMatches) {
        // (Where each was given last; a default is given nowhere.)
        let at = |id: &str| {
            m.indices_of(id)
                .and_then(Iterator::max)
                .filter(|_| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
        };
        let Some(pretty) = at("pretty") else { return };
        let after = |ids: &[&str]| ids.iter().any(|&id| at(id).is_some_and(|i| i > pretty));
        if !after(&["color"]) {
            self.color = "always".into();
        }
        if !after(&["heading", "no_heading"]) {
            (self.heading, self.no_heading) = (true, false);
        }
        if !after(&["line_number", "no_line_number"]) {
            (self.line_number, self.no_line_number) = (true, false);
        }
    }

    /// The query: the pattern, or the `-e` patterns as one alternation.
    fn query(&self) -> (String, QueryMode) {
        let mode = if self.fixed_strings { QueryMode::Literal } else { QueryMode::Regex };
        let (query, mode) = match (self.regexp.as_slice(), &self.pattern) {
            ([one], _) => (one.clone(), mode),
            ([], Some(p)) => (p.clone(), mode),
            // No patterns (an empty -f file): no line matches (so with -v
            // every line does, rg 15).
            ([], None) if !self.pattern_files.is_empty() => (r"[^\s\S]".to_string(), QueryMode::Regex),
            ([], None) => (String::new(), mode),
            (many, _) => {
                let each = |p: &String| if self.fixed_strings { regex_syntax::escape(p) } else { format!("(?:{p})") };
                (many.iter().map(each).collect::<Vec<_>>().join("|"), QueryMode::Regex)
            }
        };
        if !(self.line_regexp || self.multiline && self.multiline_dotall) {
            return (query, mode);
        }
        let mut query = if mode == QueryMode::Literal { regex_syntax::escape(&query) } else { query };
        if self.line_regexp {
            query = format!("^(?:{query})$");
        }
        if self.multiline && self.multiline_dotall {
            query = format!("(?s:{query})");
        }
        (query, QueryMode::Regex)
    }

    /// Lines of context before and after, as rg 15 reads -A, -B and -C:
    /// -B and -A override -C's before and after parts, wherever each is
    /// given.
    fn contexts(&self) -> (u64, u64) {
        let both = self.context.unwrap_or(0);
        (self.before_context.unwrap_or(both), self.after_context.unwrap_or(both))
    }

    /// -t's types, and -T's as `!TYPE`.
    fn all_types(&self) -> Vec<String> {
        self.types.iter().cloned().chain(self.types_not.iter().map(|t| format!("!{t}"))).collect()
    }

    fn request(&self) -> SearchTextRequest {
        let (query, mode) = self.query();
        let mut r = SearchTextRequest::new(query);
        r.mode = Some(mode);
        r.case = Some(if self.ignore_case {
            CaseMode::Insensitive
        } else if self.smart_case {
            CaseMode::Smart
        } else {
            CaseMode::Sensitive
        });
        r.word = self.word_regexp;
        r.multiline = self.multiline;
        r.invert_match = self.invert_match;
        // (As rg: -c with -o counts matches.)
        r.count_matches = self.count_matches || self.count && self.only_matching;
        r.paths = self.paths.clone();
        // (-g globs go in order, `!GLOB` as given: the last that matches a
        // path decides, as in rg.)
        r.include_globs = self.globs.clone();
        r.types = self.all_types();
        r.max_depth = self.max_depth;
        r.replace = self.replace.clone();
        r.hidden = self.hidden;
        r.no_ignore = self.no_ignore;
        r.follow_symlinks = self.follow;
        // As rg: no context unless asked for.
        let (before, after) = self.contexts();
        (r.context_before, r.context_after) = (sat(Some(before)), sat(Some(after)));
        r.output = Some(if self.count || self.count_matches {
            OutputMode::Count
        } else if self.files_with_matches {
            OutputMode::FilesWithMatches
        } else {
            OutputMode::Content
        });
        r.max_results = sat(self.max_results);
        r.max_matches_per_file = sat(self.max_count);
        r.max_columns = sat(self.max_columns);
        r.max_filesize = self.max_filesize;
        r.timeout_ms = sat(self.timeout_ms);
        r.cursor = self.cursor.clone();
        r.skip = sat(self.skip);
        r
    }
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // What an operator pins (`sandgrep --root /proj "$@"`) is not changed
    // by giving it again after (other flags given twice: the last wins).
    for name in ["--root", "--component", "--memory-limit"] {
        let given =
            |a: &&std::ffi::OsString| a.to_str().is_some_and(|a| a == name || a.starts_with(&format!("{name}=")));
        if args.iter().take_while(|a| *a != "--").filter(given).count() > 1 {
            eprintln!("sandgrep: {name} was given more than once");
            return ExitCode::from(2);
        }
    }
    // (Parsed as `Cli::parse_from` does, with the matches kept: -p reads
    // where the flags stand.)
    let matches = <Cli as clap::CommandFactory>::command().get_matches_from(search_by_default(args));
    let mut cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches)
        .map_err(|e| e.format(&mut <Cli as clap::CommandFactory>::command()))
        .unwrap_or_else(|e| e.exit());
    if let (Command::Search(args), Some(("search", m))) = (&mut cli.command, matches.subcommand()) {
        args.pretty_where_given(m);
    }
    let open_files = raise_descriptor_limit();
    if open_files < MIN_OPEN_FILES {
        eprintln!(
            "sandgrep: {open_files} open files are allowed (`ulimit -n`); sandgrep needs at least {}",
            MIN_OPEN_FILES
        );
        return ExitCode::from(2);
    }
    if let Command::Search(args) = &mut cli.command {
        if let Err(e) = args.settle() {
            eprintln!("sandgrep: {e}");
            return ExitCode::from(2);
        }
        args.given = args.paths.clone();
    }
    cli.paths_in_workspace();
    match run(&cli) {
        Ok(Outcome::Found) => ExitCode::from(0),
        Ok(Outcome::Nothing) => ExitCode::from(1),
        // What was found is printed, and the stop said on stderr.
        Ok(Outcome::Partial) => ExitCode::from(2),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            // A message may quote a workspace path: escaped like any output.
            eprintln!("sandgrep: {}", render::path(&e.to_string()));
            ExitCode::from(2)
        }
    }
}

/// `sandgrep PATTERN [PATH...]` (and `sandgrep -i PATTERN`) is `sandgrep
/// search ...`, as with rg: a first argument, past the global options, that
/// is neither a subcommand nor help or version, starts a search.
fn search_by_default(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    use clap::CommandFactory;
    let command = Cli::command();
    let takes_value = |arg: &str| {
        command.get_arguments().any(|a| {
            a.get_action().takes_values()
                && (a.get_long().is_some_and(|l| arg == format!("--{l}"))
                    || a.get_short().is_some_and(|s| arg == format!("-{s}")))
        })
    };
    let global = |arg: &str| {
        command.get_arguments().any(|a| {
            a.get_long().is_some_and(|l| arg == format!("--{l}") || arg.starts_with(&format!("--{l}=")))
                || a.get_short().is_some_and(|s| arg.starts_with(&format!("-{s}")) && arg.len() > 1)
        })
    };
    let mut i = 1;
    while let Some(arg) = args.get(i).and_then(|a| a.to_str()) {
        if takes_value(arg) {
            i += 2;
        } else if global(arg) && !matches!(arg, "-h" | "--help" | "-V" | "--version") {
            i += 1;
        } else {
            break;
        }
    }
    let first = args.get(i).map(|a| a.to_string_lossy().into_owned());
    let named = |name: &str| command.get_subcommands().any(|c| c.get_name() == name) || name == "help";
    match first.as_deref() {
        None | Some("-h" | "--help" | "-V" | "--version") => {}
        Some(arg) if named(arg) => {}
        Some(_) => args.insert(i, "search".into()),
    }
    args
}

impl Cli {
    /// Paths given absolute, inside the workspace, made relative to it (the
    /// component takes workspace-relative paths and refuses the rest).
    fn paths_in_workspace(&mut self) {
        let roots: Vec<PathBuf> = [std::fs::canonicalize(&self.root).ok(), std::path::absolute(&self.root).ok()]
            .into_iter()
            .flatten()
            .collect();
        let relative = |p: &mut String| {
            let Some(inside) = roots.iter().find_map(|r| Path::new(p.as_str()).strip_prefix(r).ok()) else { return };
            let inside = inside.to_string_lossy();
            *p = if inside.is_empty() { ".".into() } else { inside.into_owned() };
        };
        match &mut self.command {
            Command::Search(a) => a.paths.iter_mut().for_each(relative),
            Command::Ast(a) => a.paths.iter_mut().for_each(relative),
            Command::Ls(a) => relative(&mut a.path),
            Command::Read(a) => relative(&mut a.path),
            _ => {}
        }
    }
}

/// How a command went, for its exit status (as rg's: 0 found, 1 nothing, 2
/// error — and a search cut by its time limit is not "nothing").
enum Outcome {
    Found,
    Nothing,
    Partial,
}

impl Outcome {
    fn of(found: bool, timed_out: bool) -> Outcome {
        match (found, timed_out) {
            (_, true) => Outcome::Partial,
            (true, false) => Outcome::Found,
            (false, false) => Outcome::Nothing,
        }
    }
}

fn run(cli: &Cli) -> io::Result<Outcome> {
    use clap::CommandFactory;
    match &cli.command {
        Command::Completions { shell } => {
            clap_complete::generate(*shell, &mut Cli::command(), "sandgrep", &mut io::stdout());
            return Ok(Outcome::Found);
        }
        Command::Man => {
            clap_mangen::Man::new(Cli::command()).render(&mut io::stdout())?;
            return Ok(Outcome::Found);
        }
        _ => {}
    }
    if let Command::Component { out } = &cli.command {
        std::fs::write(out, sandgrep::component()).map_err(|e| io::Error::other(format!("{}: {e}", out.display())))?;
        eprintln!("wrote {} ({} bytes)", out.display(), sandgrep::component().len());
        return Ok(Outcome::Found);
    }
    #[cfg(feature = "serve")]
    if let Command::Serve(args) = &cli.command {
        sandgrep::serve::run(&args.config, args.listen.as_deref()).map_err(io::Error::other)?;
        return Ok(Outcome::Found);
    }
    let mut policy = Policy {
        redact: !cli.no_redact,
        disabled_redaction_rules: cli.no_redact_rule.clone(),
        extra_deny: cli.deny.clone(),
        ..Policy::default()
    };
    if let Some(limit) = cli.memory_limit {
        policy.memory_limit = usize::try_from(limit).unwrap_or(usize::MAX);
    }
    let sandbox = match &cli.component {
        Some(file) => {
            let wasm = std::fs::read(file).map_err(|e| io::Error::other(format!("{}: {e}", file.display())))?;
            Sandbox::open_with_component(&cli.root, policy, &wasm)
        }
        None => Sandbox::open(&cli.root, policy),
    }
    .map_err(io::Error::other)?
    .with_jobs(cli.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)))
    .with_index(!cli.no_index);
    #[cfg(feature = "mcp")]
    if let Command::Mcp = cli.command {
        sandgrep::mcp::serve_stdio(sandbox)?;
        return Ok(Outcome::Found);
    }
    // A search's pages, and a search again for --stats, on one instance.
    let sandbox = sandbox.with_kept_instance();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let outcome = match &cli.command {
        Command::Component { .. } | Command::Completions { .. } | Command::Man => unreachable!("handled above"),
        #[cfg(feature = "mcp")]
        Command::Mcp => unreachable!("handled above"),
        #[cfg(feature = "serve")]
        Command::Serve(_) => unreachable!("handled above"),
        Command::Search(args) => search(&sandbox, args, &mut out)?,
        Command::Ls(args) => ls(&sandbox, args, &mut out)?,
        Command::Read(args) => read(&sandbox, args, &mut out)?,
        Command::Ast(args) => ast(&sandbox, args, &mut out)?,
        Command::Index { json } => index(&sandbox, *json, &mut out)?,
    };
    out.flush()?;
    Ok(outcome)
}

/// Runs `refresh` with a progress line on standard error when that is a
/// terminal: entries looked at and files opened so far, and the time.
fn with_progress_line<T>(refresh: impl FnOnce(Option<Arc<Progress>>) -> T) -> T {
    use std::io::IsTerminal;
    if !io::stderr().is_terminal() {
        return refresh(None);
    }
    let progress = Arc::new(Progress::default());
    let bar = indicatif::ProgressBar::new_spinner().with_style(
        indicatif::ProgressStyle::with_template("{spinner} indexing: {msg} [{elapsed}]")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let (done, ticker) = std::sync::mpsc::channel::<()>();
    let shown = (progress.clone(), bar.clone());
    let ticking = std::thread::spawn(move || loop {
        let (p, bar) = &shown;
        let count = |n: &std::sync::atomic::AtomicU64| n.load(std::sync::atomic::Ordering::Relaxed);
        bar.set_message(format!("{} files looked at, {} opened", count(&p.looked), count(&p.opened)));
        bar.tick();
        if ticker.recv_timeout(std::time::Duration::from_millis(100)).is_ok() {
            return;
        }
    });
    let result = refresh(Some(progress));
    let _ = done.send(());
    let _ = ticking.join();
    bar.finish_and_clear();
    result
}

fn index(sandbox: &Sandbox, json: bool, out: &mut impl Write) -> io::Result<Outcome> {
    let r = with_progress_line(|progress| sandbox.refresh_index_counted(progress)).map_err(io::Error::other)?;
    let dir = sandbox.index_path().map(|d| d.display().to_string()).unwrap_or_default();
    let pruned: Vec<String> = sandbox.prune_indexes().iter().map(|p| p.display().to_string()).collect();
    if json {
        let mut v = sandgrep::json::to_value(&r);
        v["index_dir"] = dir.into();
        v["pruned"] = pruned.into();
        serde_json::to_writer(&mut *out, &v)?;
        writeln!(out)?;
        return Ok(Outcome::Found);
    }
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    writeln!(
        out,
        "indexed {} files in {:.2} s: {} read ({:.1} MiB), {} removed; {} trigrams, index {:.1} MiB",
        r.files,
        r.elapsed_ms as f64 / 1000.0,
        r.files_read,
        mib(r.bytes_read),
        r.files_removed,
        r.trigrams,
        mib(r.index_bytes),
    )?;
    writeln!(out, "index: {dir}")?;
    for gone in &pruned {
        writeln!(out, "removed the index of {gone} (no longer there)")?;
    }
    if let Some(why) = &r.rebuilt {
        writeln!(out, "({why})")?;
    }
    notes(&r.warnings, None);
    Ok(Outcome::Found)
}

fn json_line(out: &mut impl Write, response: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &sandgrep::json::to_value(response))?;
    writeln!(out)
}

/// How the CLI says to pass a cursor back.
fn go_on(cursor: &str) -> String {
    format!("--cursor {cursor}")
}

/// Warnings and where to continue go to stderr, as rg's messages do
/// (escaped: a warning may quote a file's name).
fn notes(warnings: &[String], continuation: Option<String>) {
    for w in warnings {
        eprintln!("sandgrep: warning: {}", render::path(w));
    }
    if let Some(c) = continuation {
        eprintln!("sandgrep: {c}");
    }
}

fn ls(sandbox: &Sandbox, args: &LsArgs, out: &mut impl Write) -> io::Result<Outcome> {
    let mut r = ListFilesRequest::new(args.path.clone());
    r.recursive = Some(!args.no_recursive);
    (r.include_globs, r.exclude_globs) = split_globs(&args.globs);
    r.include_dirs = args.dirs;
    r.include_metadata = args.metadata;
    r.hidden = args.hidden;
    r.no_ignore = args.no_ignore;
    r.follow_symlinks = args.follow;
    r.max_results = sat(args.max_results);
    r.skip = sat(args.skip);
    r.cursor = args.cursor.clone();
    let response = sandbox.list_files(&r).map_err(io::Error::other)?;
    if args.json {
        json_line(out, &response)?;
    } else {
        use std::io::IsTerminal;
        let human = args.metadata && io::stdout().is_terminal();
        if args.tree {
            render::tree(out, &args.path, &response, human)?;
        } else {
            render::list(out, &response, human)?;
        }
        notes(&response.warnings, render::listing_ending(&response, go_on));
    }
    Ok(Outcome::of(!response.entries.is_empty(), response.timed_out))
}

fn read(sandbox: &Sandbox, args: &ReadArgs, out: &mut impl Write) -> io::Result<Outcome> {
    let mut r = ReadFileRequest::new(args.path.clone());
    if let Some((start, count)) = args.lines {
        r.range_type = Some(RangeType::Lines);
        r.start_line = Some(start);
        r.max_lines = count;
    }
    if let Some((offset, count)) = args.bytes {
        r.range_type = Some(RangeType::Bytes);
        r.offset_bytes = Some(offset);
        r.max_bytes = count;
    }
    let response = sandbox.read_file(&r).map_err(io::Error::other)?;
    if args.json {
        json_line(out, &response)?;
        return Ok(Outcome::Found);
    }
    render::read(out, &response)?;
    notes(&response.warnings, render::read_continuation(&response, "--lines ", "--bytes "));
    Ok(Outcome::Found)
}

fn ast(sandbox: &Sandbox, args: &AstArgs, out: &mut impl Write) -> io::Result<Outcome> {
    let mut r = SearchAstRequest::new(args.pattern.as_str());
    r.language = args.lang.clone();
    r.paths = args.paths.clone();
    (r.include_globs, r.exclude_globs) = split_globs(&args.globs);
    r.hidden = args.hidden;
    r.no_ignore = args.no_ignore;
    r.follow_symlinks = args.follow;
    r.max_results = sat(args.max_results);
    r.max_filesize = args.max_filesize;
    r.cursor = args.cursor.clone();
    r.skip = sat(args.skip);
    r.timeout_ms = sat(args.timeout_ms);
    let response = sandbox.search_ast(&r).map_err(io::Error::other)?;
    if args.json {
        json_line(out, &response)?;
    } else {
        render::ast(out, &response)?;
        notes(
            &response.warnings,
            render::search_ending(response.timed_out, response.next_cursor.as_deref(), &response.stats, go_on),
        );
    }
    Ok(Outcome::of(!response.matches.is_empty(), response.timed_out))
}

fn search(sandbox: &Sandbox, args: &SearchArgs, out: &mut impl Write) -> io::Result<Outcome> {
    // -q: nothing printed but --stats.
    let mut nothing = io::sink();
    let mut shown: &mut dyn Write = if args.quiet { &mut nothing } else { &mut *out };
    if args.type_list {
        return type_list(out);
    }
    if args.files {
        return files(sandbox, args, &mut shown);
    }
    let counting = args.count || args.count_matches;
    if !args.json && (args.files_without_match && !counting || args.include_zero && counting) {
        return with_unmatched(sandbox, args, &mut shown);
    }
    let mut request = args.request();
    if args.json {
        let response = sandbox.search_text(&request).map_err(io::Error::other)?;
        json_line(&mut shown, &response)?;
        let found = !response.matches.is_empty() || !response.files.is_empty();
        return Ok(Outcome::of(found, response.timed_out));
    }
    // As rg: a per-file limit of none finds nothing, nor do no patterns
    // (an empty -f file) but with -v.
    if args.max_count == Some(0) || args.regexp.is_empty() && !args.pattern_files.is_empty() && !args.invert_match {
        return Ok(Outcome::Nothing);
    }
    let started = std::time::Instant::now();
    request.streaming = true;
    // Lines longer than --max-columns are left out, as rg does (see
    // `printer::Style`), so they come whole.
    request.max_columns = None;
    let mut printer = printer::Printer::new(shown, style(args), printer::Names::new(&args.given, &args.paths));
    let mut run = Run { left: args.max_results.unwrap_or(u64::MAX), ..Run::default() };
    if args.quiet && !args.stats {
        // The first file with a match answers.
        request.output = Some(OutputMode::FilesWithMatches);
        run.left = run.left.min(1);
    }
    let (timed_out, ending) = stream_paths(sandbox, &mut request, args, &mut printer, &mut run)?;
    let (mut totals, printed) = printer.finish()?;
    if args.stats {
        if request.output != Some(OutputMode::Content) {
            totals = counted(sandbox, args, &mut request, &mut run.searching)?;
        }
        let printed = if args.quiet { 0 } else { printed };
        printer::stats(out, &totals, printed, run.searching as f64 / 1000.0, started.elapsed().as_secs_f64())?;
    }
    let found = run.found;
    if args.no_messages {
        run.warnings.clear();
    } else {
        run.withheld.say();
    }
    // (-q asked for one match: that others follow is no news.)
    notes(&run.warnings, ending.filter(|_| !args.quiet || timed_out));
    if run.errored && !(args.quiet && found) {
        return Ok(Outcome::Partial);
    }
    if args.paths.is_empty() && totals.files_searched + totals.files_left == 0 && !timed_out {
        // As rg 15.2: a search of the current directory that no file reached
        // (past the filters) is an error.
        return Err(io::Error::other(NOTHING_SEARCHED));
    }
    if !found && !timed_out && args.fixed_strings && render::looks_like_regex(&request.query) {
        eprintln!(
            "sandgrep: no match for the literal text; it reads as a regular expression: drop -F to search it as one"
        );
    }
    Ok(Outcome::of(found, timed_out))
}

/// Raises this process's soft limit on open files to its hard limit, as
/// many servers do (a long-lived host keeps several instances, and running
/// out fails a call); the limit it ends at.
fn raise_descriptor_limit() -> u64 {
    #[cfg(unix)]
    // SAFETY: plain getrlimit/setrlimit on a local struct.
    unsafe {
        let mut l: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) != 0 {
            return u64::MAX;
        }
        if l.rlim_cur < l.rlim_max {
            let raised = libc::rlimit { rlim_cur: l.rlim_max, ..l };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                l = raised;
            }
        }
        l.rlim_cur as u64
    }
    #[cfg(not(unix))]
    u64::MAX
}

const NOTHING_SEARCHED: &str =
    "no files were searched: the paths, globs, types, depth or ignore rules left out every file";

/// What `--stats` says of a search whatever it prints: rg counts matches
/// and matched lines, so they are counted from the lines, in a second
/// search printing nothing.
fn counted(
    sandbox: &Sandbox,
    args: &SearchArgs,
    request: &mut SearchTextRequest,
    searching: &mut u64,
) -> io::Result<printer::Totals> {
    let mut counter = printer::Printer::new(io::sink(), style(args), printer::Names::new(&args.given, &args.paths));
    (request.output, request.count_matches, request.streaming) = (Some(OutputMode::Content), false, true);
    let mut run = Run { left: u64::MAX, searching: *searching, ..Run::default() };
    stream_paths(sandbox, request, args, &mut counter, &mut run)?;
    *searching = run.searching;
    Ok(counter.finish()?.0)
}

/// What a command's search has come to over its pages.
#[derive(Default)]
struct Run {
    /// Results still to print.
    left: u64,
    warnings: Vec<String>,
    found: bool,
    /// The component's own time, in ms.
    searching: u64,
    /// A path named could not be searched (said on stderr; the others were).
    errored: bool,
    withheld: Withheld,
}

/// What a search or listing withheld, said once on stderr at its end (its
/// stdout stays rg's): the entries the denylist keeps out, which no flag
/// includes, and the lines shown with secrets redacted, by rule.
#[derive(Default)]
struct Withheld {
    denied: u64,
    redacted: u64,
    by_rule: std::collections::BTreeMap<String, u64>,
}

impl Withheld {
    fn add(&mut self, stats: &sandgrep::SearchStats) {
        self.denied += stats.skipped.denied;
        self.redacted += stats.lines_redacted;
        for r in &stats.redacted_by {
            *self.by_rule.entry(r.rule.clone()).or_default() += r.lines;
        }
    }

    fn say(&self) {
        if self.denied > 0 {
            eprintln!("sandgrep: {} entries withheld by the secrets denylist (no flag includes them)", self.denied);
        }
        if self.redacted > 0 {
            let rules: Vec<String> = self.by_rule.iter().map(|(rule, n)| format!("{rule} {n}")).collect();
            eprintln!("sandgrep: {} lines shown with secrets [REDACTED] ({})", self.redacted, rules.join(", "));
        }
    }
}

/// The guest's notes, for an answer that found nothing, of what the rules
/// left out: rg says nothing of them, and the CLI says the denied count
/// itself ([`Withheld`]).
fn left_out(warning: &str) -> bool {
    warning.contains("withheld by the secrets denylist")
        || warning.contains("entries left out by .gitignore")
        || warning.contains("hidden entries left out")
}

/// Prints the stream of each path named in turn, as rg searches them (a
/// cursor or skip belongs to the stream of all of them); whether time cut
/// it, and what to say at its end.
fn stream_paths<W: Write>(
    sandbox: &Sandbox,
    request: &mut SearchTextRequest,
    args: &SearchArgs,
    printer: &mut printer::Printer<W>,
    run: &mut Run,
) -> io::Result<(bool, Option<String>)> {
    let each: Vec<Vec<String>> = if args.paths.len() > 1 && args.cursor.is_none() && args.skip.is_none() {
        args.paths.iter().map(|p| vec![p.clone()]).collect()
    } else {
        vec![args.paths.clone()]
    };
    let (mut timed_out, mut ending) = (false, None);
    let one_by_one = each.len() > 1;
    for (i, paths) in each.into_iter().enumerate() {
        if run.left == 0 || timed_out {
            break;
        }
        if one_by_one {
            printer.next_root(i)?;
        }
        request.paths = paths;
        request.cursor = args.cursor.clone();
        request.skip = sat(args.skip);
        let (cut, cursor, stats) = match stream(sandbox, request, args, printer, run) {
            Err(e) if one_by_one && unsearchable(args, &e) => {
                run.errored = true;
                continue;
            }
            r => r?,
        };
        timed_out = cut;
        ending = render::search_ending(cut, cursor.as_deref(), &stats, go_on);
    }
    Ok((timed_out, ending))
}

/// Prints every page of `request`'s stream (up to `run.left` results), and
/// says how it ended: cut by time, the cursor past the last result printed.
fn stream<W: Write>(
    sandbox: &Sandbox,
    request: &mut SearchTextRequest,
    args: &SearchArgs,
    printer: &mut printer::Printer<W>,
    run: &mut Run,
) -> io::Result<(bool, Option<String>, sandgrep::SearchStats)> {
    // Pages through the whole stream (each page bounded); a page cut by
    // the component's time limit goes on unless --timeout asked for one.
    // Instances side by side pass every match they find on to the one that
    // merges their parts: where matches outnumber the files searched, that
    // costs more than the search they share, and the next pages (the same
    // whatever the instances) are one instance's.
    let single = sandbox.clone().with_jobs(1);
    let mut dense = false;
    loop {
        request.max_results = Some(run.left.min(MAX_RESULTS.max) as u32);
        let r = if dense { &single } else { sandbox }.search_text(request).map_err(by_path)?;
        dense |= r.stats.matches_returned > r.stats.files_scanned;
        for m in &r.matches {
            printer.text_match(m)?;
        }
        for f in &r.files {
            printer.file_count(f, args.count || args.count_matches)?;
        }
        run.found |= !r.matches.is_empty() || !r.files.is_empty();
        let t = &mut printer.totals;
        t.files_searched += r.stats.files_scanned + r.stats.files_skipped_by_index;
        // A page that goes on in the file the last one ended in searched it again.
        if request.cursor.is_some() && r.matches.first().is_some_and(|m| m.path == t.last_path) {
            t.files_searched -= 1;
        }
        t.last_path = r.matches.last().map(|m| m.path.clone()).unwrap_or_default();
        t.bytes_searched += r.stats.bytes_searched;
        t.files_left += r.stats.skipped.too_large + r.stats.skipped.unreadable;
        run.withheld.add(&r.stats);
        run.searching += r.stats.elapsed_ms;
        run.left = run.left.saturating_sub(r.stats.matches_returned);
        let cut_by_time = r.timed_out && args.timeout_ms.is_some();
        let goes_on = r.next_cursor.is_some() && run.left > 0 && !cut_by_time;
        for w in r.warnings {
            // rg says nothing of the binary files it skips in a directory,
            // nor of the files -m cut short; a page full of text is no news
            // when the next one follows.
            let as_rg = w.ends_with(" binary file(s) skipped")
                || left_out(&w)
                || w.contains("(max-matches-per-file)")
                || goes_on && w.starts_with("output reached ");
            if !as_rg && !run.warnings.contains(&w) {
                run.warnings.push(w);
            }
        }
        match r.next_cursor {
            Some(c) if goes_on => {
                request.cursor = Some(c);
                request.skip = None;
            }
            c => return Ok((r.timed_out, c, r.stats)),
        }
    }
}

/// rg's look for this output: a terminal gets headings, line numbers and
/// colors unless told otherwise; a pipe `path:text`.
fn style(args: &SearchArgs) -> printer::Style {
    use std::io::IsTerminal;
    let tty = io::stdout().is_terminal();
    // --vimgrep: every match with its line and column, under its path, no
    // headings (colors as ever, rg 15). -p was read as the flags it stands
    // for (`SearchArgs::pretty_where_given`). Colors on a terminal as
    // rg's (termcolor's): not for TERM unset or `dumb`, nor with NO_COLOR.
    let vim = args.vimgrep;
    let color = match args.color.as_str() {
        "always" | "ansi" => true,
        "never" => false,
        _ => tty && std::env::var_os("TERM").is_some_and(|t| t != "dumb") && std::env::var_os("NO_COLOR").is_none(),
    };
    let (before, after) = args.contexts();
    printer::Style {
        color,
        heading: !vim && if args.heading || args.no_heading { args.heading } else { tty },
        line_numbers: !args.no_line_number && (vim || args.line_number || args.column || tty),
        column: args.column || vim,
        only_matching: args.only_matching,
        context: before > 0 || after > 0,
        with_filename: if vim {
            Some(!args.no_filename)
        } else if args.with_filename || args.no_filename {
            Some(args.with_filename)
        } else {
            None
        },
        // (-v: rg's standard printer counts no match in a line it shows;
        // its summaries — -c, -l, --files-without-match, -q — count each
        // line as one, rg 15.)
        invert: args.invert_match
            && !(args.quiet || args.count || args.count_matches || args.files_with_matches || args.files_without_match),
        vimgrep: vim,
        trim: args.trim,
        null: args.null,
        // (rg counts a long line's matches where it finds each anyway.)
        max_columns: args
            .max_columns
            .filter(|&n| n > 0)
            .map(|n| (n, color || args.column || vim || args.stats || args.replace.is_some())),
        context_separator: (!args.no_context_separator).then(|| unescape(&args.context_separator)),
        match_field: unescape(&args.field_match_separator),
        context_field: unescape(&args.field_context_separator),
        path_separator: args.path_separator.as_deref().map(unescape),
        replaced: args.replace.is_some(),
    }
}

/// rg's escapes in a separator: `\t`, `\n`, `\r`, `\\`, `\0` and `\xHH`
/// (a byte; bytes that are not UTF-8 show as `�`).
fn unescape(s: &str) -> String {
    String::from_utf8_lossy(&unescaped(s)).into_owned()
}

fn unescaped(s: &str) -> Vec<u8> {
    let (mut out, mut bytes) = (Vec::new(), s.bytes());
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b't') => out.push(b'\t'),
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(b'0') => out.push(0),
            Some(b'\\') => out.push(b'\\'),
            Some(b'x') => {
                let hex: Vec<u8> = bytes.clone().take(2).collect();
                match std::str::from_utf8(&hex)
                    .ok()
                    .filter(|h| h.len() == 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(v) => {
                        out.push(v);
                        bytes.nth(1);
                    }
                    None => out.extend(b"\\x"),
                }
            }
            Some(o) => out.extend([b'\\', o]),
            None => out.push(b'\\'),
        }
    }
    out
}

/// `--files-without-match`, and `-c --include-zero`: the files a search
/// reads, each with what the search found in it. They are the files a
/// listing with the search's filters names that are empty or that a search
/// of every line finds (it leaves out binary files and those past the size
/// limit).
fn with_unmatched(sandbox: &Sandbox, args: &SearchArgs, out: &mut impl Write) -> io::Result<Outcome> {
    let started = std::time::Instant::now();
    let mut printer = printer::Printer::new(&mut *out, style(args), printer::Names::new(&args.given, &args.paths));
    let mut request = args.request();
    request.streaming = true;
    request.output = Some(if args.include_zero { OutputMode::Count } else { OutputMode::FilesWithMatches });
    let mut every_line = args.request();
    (every_line.query, every_line.mode, every_line.invert_match) = (String::new(), Some(QueryMode::Regex), false);
    (every_line.word, every_line.multiline) = (false, false);
    every_line.output = Some(OutputMode::FilesWithMatches);
    let roots = if args.paths.is_empty() { vec![".".to_string()] } else { args.paths.clone() };
    let (mut found, mut printed) = (false, false);
    let (mut errored, mut listed) = (false, false);
    for (i, root) in roots.iter().enumerate() {
        printer.next_root(i)?;
        let counted = file_counts(sandbox, &mut request, root)
            .and_then(|counts| Ok((counts, file_counts(sandbox, &mut every_line, root)?)));
        let (counts, text) = match counted {
            Err(e) if unsearchable(args, &e) => {
                errored = true;
                continue;
            }
            r => r?,
        };
        found |= !counts.is_empty();
        let mut list = listing(args, root);
        list.include_metadata = true;
        loop {
            let response = sandbox.list_files(&list).map_err(by_path)?;
            let searched = |e: &sandgrep::FileEntry| e.size == Some(0) || text.contains_key(&e.path);
            for e in response.entries.into_iter().filter(searched) {
                listed = true;
                let count = counts.get(&e.path).copied();
                if args.include_zero || count.is_none() {
                    printer.file_count(&FileCount { path: e.path, count: count.unwrap_or(0) }, args.include_zero)?;
                    printed = true;
                }
            }
            match response.next_cursor {
                Some(c) => list.cursor = Some(c),
                None => break,
            }
        }
    }
    printer.finish()?;
    if args.stats {
        let mut searching = 0;
        let totals = counted(sandbox, args, &mut args.request(), &mut searching)?;
        printer::stats(out, &totals, 0, searching as f64 / 1000.0, started.elapsed().as_secs_f64())?;
    }
    if errored {
        return Ok(Outcome::Partial);
    }
    if args.paths.is_empty() && !listed {
        return Err(io::Error::other(NOTHING_SEARCHED));
    }
    // (As rg: exit 0 when a file without a match was printed, or with
    // --include-zero when anything matched.)
    Ok(Outcome::of(if args.include_zero { found } else { printed }, false))
}

/// Each file `request` finds under `root`, with its count.
fn file_counts(sandbox: &Sandbox, request: &mut SearchTextRequest, root: &str) -> io::Result<HashMap<String, u64>> {
    (request.paths, request.cursor) = (vec![root.to_string()], None);
    let mut counts = HashMap::new();
    loop {
        let r = sandbox.search_text(request).map_err(by_path)?;
        counts.extend(r.files.into_iter().map(|f| (f.path, f.count)));
        match r.next_cursor {
            Some(c) => request.cursor = Some(c),
            None => return Ok(counts),
        }
    }
}

/// `--type-list`: the types the component's walker knows, as rg lists them.
fn type_list(out: &mut impl Write) -> io::Result<Outcome> {
    let mut types = ignore::types::TypesBuilder::new();
    types.add_defaults();
    for def in types.definitions() {
        writeln!(out, "{}: {}", def.name(), def.globs().join(", "))?;
    }
    Ok(Outcome::Found)
}

/// `--files`: every file a search would look at, as `rg --files`.
fn files(sandbox: &Sandbox, args: &SearchArgs, out: &mut impl Write) -> io::Result<Outcome> {
    let roots = if args.paths.is_empty() { vec![".".to_string()] } else { args.paths.clone() };
    let mut printer = printer::Printer::new(out, style(args), printer::Names::new(&args.given, &args.paths));
    let (mut found, mut errored) = (false, false);
    let mut withheld = Withheld::default();
    for (i, root) in roots.iter().enumerate() {
        printer.next_root(i)?;
        let mut r = listing(args, root);
        loop {
            let response = match sandbox.list_files(&r).map_err(by_path) {
                Ok(response) => response,
                Err(e) if unsearchable(args, &e) => {
                    errored = true;
                    break;
                }
                Err(e) => return Err(e),
            };
            for e in response.entries {
                printer.file_count(&FileCount { path: e.path, count: 0 }, false)?;
                found = true;
            }
            // The files the denylist withholds are said once, at the end;
            // as rg's --files, nothing of what the ignore rules leave out.
            withheld.denied += response.skipped.denied;
            let warnings: Vec<String> =
                response.warnings.into_iter().filter(|w| !args.no_messages && !left_out(w)).collect();
            notes(&warnings, None);
            match response.next_cursor {
                Some(c) => r.cursor = Some(c),
                None => break,
            }
        }
    }
    printer.finish()?;
    if !args.no_messages {
        withheld.say();
    }
    Ok(if errored { Outcome::Partial } else { Outcome::of(found, false) })
}

/// The listing of what a search of `root` reads: its filters, all entries a page.
fn listing(args: &SearchArgs, root: &str) -> ListFilesRequest {
    let mut r = ListFilesRequest::new(root);
    r.include_globs = args.globs.clone();
    r.hidden = args.hidden;
    r.no_ignore = args.no_ignore;
    r.follow_symlinks = args.follow;
    r.types = args.all_types();
    r.max_depth = args.max_depth;
    r.max_results = Some(LIST_RESULTS.max as u32);
    // Every page is printed and no total: no walk past each page's end.
    r.no_total = true;
    r
}

/// Whether `e` is of a path that cannot be searched (see [`by_path`]); if
/// so it is said (unless --no-messages), and, as in rg, the other paths
/// are searched.
fn unsearchable(args: &SearchArgs, e: &io::Error) -> bool {
    let path = e.kind() == io::ErrorKind::NotFound;
    if path && !args.no_messages {
        eprintln!("sandgrep: {}", render::path(&e.to_string()));
    }
    path
}

/// A call's error as io's: `NotFound` for a path that cannot be searched
/// (missing, outside the workspace, denied), which spares the other paths.
fn by_path(e: sandgrep::Error) -> io::Error {
    match e {
        sandgrep::Error::Search(
            SearchError::NotFound(_) | SearchError::OutsideWorkspace(_) | SearchError::Denied(_),
        ) => io::Error::new(io::ErrorKind::NotFound, e),
        e => io::Error::other(e),
    }
}
