//! Help, the man page and the shell completions, all made from the table of
//! flags (`flags.rs`). As with rg, the bare command is a search: its help
//! shows the search flags first, the other commands after them.

use std::io::{self, Write};

use clap::builder::PossibleValuesParser;
use clap::{Command, CommandFactory};

use super::flags::Cli;

const ABOUT: &str = "sandgrep searches files for lines matching a pattern, as ripgrep does, from inside a \
WebAssembly sandbox that can read only the workspace (--root, default the current directory). It \
respects gitignore rules, skips hidden and binary files, never reads the secrets on its denylist and \
shows secrets in matching lines as [REDACTED].";

const USAGE: &str = "sandgrep [OPTIONS] PATTERN [PATH ...]
       sandgrep [OPTIONS] -e PATTERN ... [PATH ...]
       sandgrep [OPTIONS] --files [PATH ...]
       sandgrep [OPTIONS] --type-list
       command | sandgrep [OPTIONS] PATTERN
       sandgrep [OPTIONS] COMMAND ...";

const EXIT_STATUS: &str = "0 when something was found (or the command succeeded), 1 when nothing was found, 2 when \
an error occurred — a search stopped by its --timeout too, after printing what it found. As rg, an \
error on one of several paths is said on stderr and the others are searched; the status is then 2.";

/// (command line, what it does)
const EXAMPLES: &[(&str, &str)] = &[
    ("sandgrep -n 'fn main'", "Lines with `fn main`, with line numbers, in the current directory."),
    ("sandgrep -i -t rust todo src", "Case-insensitive, only Rust files under src."),
    ("sandgrep -F 'a.b(' -g '!vendor/**'", "A literal string, leaving out vendor/."),
    ("sandgrep -C 2 --json error", "rg's JSON Lines, with two lines of context."),
    ("sandgrep --files -g '*.md'", "The Markdown files a search would read."),
    ("git log -p | sandgrep -n TODO", "Search standard input."),
    ("sandgrep ls --tree docs", "The files under docs as a tree."),
    ("sandgrep read src/main.rs --lines 40:20", "Lines 40 to 59 of a file."),
    ("sandgrep ast 'unwrap($A)' --lang rust", "Structural search with an ast-grep pattern."),
    ("sandgrep --root ~/project mcp", "Serve the MCP tools on stdio for an agent."),
];

/// The bare command as rg's: the search's flags first (under rg's
/// headings), then the global options, then the other commands.
fn bare() -> Command {
    let mut cli = Cli::command();
    cli.build();
    let commands: Vec<(String, String)> = cli
        .get_subcommands()
        .filter(|c| !matches!(c.get_name(), "search" | "help"))
        .map(|c| (c.get_name().to_string(), c.get_about().map(|a| a.to_string()).unwrap_or_default()))
        .collect();
    let width = commands.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut after = String::from("Commands (sandgrep COMMAND --help for each):\n");
    for (name, about) in &commands {
        after.push_str(&format!("  {name:width$}  {about}\n"));
    }
    let search = cli.find_subcommand("search").expect("the search command").clone();
    search
        .name("sandgrep")
        .bin_name("sandgrep")
        .display_name("sandgrep")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Code search inside a WebAssembly capability sandbox, with ripgrep's flags")
        .long_about(ABOUT)
        .override_usage(USAGE)
        .after_help(after.trim_end().to_string())
}

/// Whether `args` (past the program's name and the global options) ask for
/// the bare command's help: `-h`, `--help` or `help` alone; long or not.
pub(crate) fn asked(args: &[std::ffi::OsString]) -> Option<bool> {
    let rest: Vec<&str> = args.iter().filter_map(|a| a.to_str()).collect();
    match rest.as_slice() {
        ["-h"] => Some(false),
        ["--help"] | ["help"] => Some(true),
        _ => None,
    }
}

/// `sandgrep -h` (short) or `sandgrep --help` (long).
pub(crate) fn print(long: bool) -> io::Result<()> {
    let mut command = bare();
    let help = if long { command.render_long_help() } else { command.render_help() };
    let mut out = io::stdout().lock();
    // (Colors only on a terminal, as clap's own help.)
    use std::io::IsTerminal;
    if io::stdout().is_terminal() {
        write!(out, "{}", help.ansi())
    } else {
        write!(out, "{help}")
    }
}

/// The man page: the search and its flags, each other command with its
/// own, exit status, examples.
pub(crate) fn man(out: &mut impl Write) -> io::Result<()> {
    let page = clap_mangen::Man::new(bare()).title("SANDGREP").section("1").manual("sandgrep manual");
    let mut roff = Vec::new();
    page.render_title(&mut roff)?;
    page.render_name_section(&mut roff)?;
    writeln!(roff, ".SH SYNOPSIS")?;
    for line in USAGE.lines() {
        writeln!(roff, "{}\n.br", escape(line.trim()))?;
    }
    page.render_description_section(&mut roff)?;
    page.render_options_section(&mut roff)?;
    for sub in Cli::command().get_subcommands().filter(|c| !matches!(c.get_name(), "search" | "help")) {
        let name = format!("sandgrep {}", sub.get_name());
        // (Leaked: the process prints the page and ends.)
        let name: &'static str = Box::leak(name.into_boxed_str());
        let page = clap_mangen::Man::new(sub.clone().name(name).bin_name(name));
        writeln!(roff, ".SH \"{}\"", name.to_uppercase())?;
        let mut section = Vec::new();
        page.render_synopsis_section(&mut section)?;
        page.render_description_section(&mut section)?;
        page.render_options_section(&mut section)?;
        // (Its sections as sub-sections of the command's.)
        let section = String::from_utf8_lossy(&section).replace(".SH ", ".SS ");
        roff.extend_from_slice(section.as_bytes());
    }
    writeln!(roff, ".SH \"EXIT STATUS\"\n{}", escape(EXIT_STATUS))?;
    writeln!(roff, ".SH ENVIRONMENT")?;
    writeln!(roff, ".TP\n\\fBNO_COLOR\\fR\nNo colors on a terminal (as rg).")?;
    writeln!(roff, ".TP\n\\fBRIPGREP_CONFIG_PATH\\fR\n{}", escape(CONFIG_PATH))?;
    writeln!(roff, ".TP\n\\fBTERM\\fR\nNo colors when unset or dumb (as rg).")?;
    writeln!(roff, ".SH EXAMPLES")?;
    for (line, what) in EXAMPLES {
        writeln!(roff, ".TP\n\\fB{}\\fR\n{}", escape(line), escape(what))?;
    }
    page.render_version_section(&mut roff)?;
    out.write_all(&roff)
}

const CONFIG_PATH: &str = "A file of search flags, one argument a line, read before the command line's own \
     (as rg; not with --no-config). The operator's options (--root, --no-redact, ...) are never taken from it.";

/// Text for roff: a backslash doubled, a line's leading `.` or `'` guarded.
fn escape(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    if text.starts_with(['.', '\'']) {
        format!("\\&{text}")
    } else {
        text
    }
}

/// The completion script of `shell`: the bare command completes the
/// search's flags, and -t/-T complete the type names.
pub(crate) fn completions(shell: clap_complete::Shell, out: &mut impl Write) {
    let mut types = ignore::types::TypesBuilder::new();
    types.add_defaults();
    // (Leaked: the process prints the script and ends.)
    let names: Vec<&'static str> =
        types.definitions().iter().map(|d| &*Box::leak(d.name().to_string().into_boxed_str())).collect();
    let typed = |a: clap::Arg| a.value_parser(PossibleValuesParser::new(names.clone()));
    let search = Cli::command().find_subcommand("search").expect("the search command").clone();
    let search = search.mut_arg("types", typed).mut_arg("types_not", typed);
    let mut command = Cli::command().mut_subcommand("search", |_| search.clone());
    for arg in search.get_arguments().filter(|a| !a.is_positional()) {
        command = command.arg(arg.clone());
    }
    clap_complete::generate(shell, &mut command, "sandgrep", out);
}
