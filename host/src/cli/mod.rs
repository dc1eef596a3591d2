//! The `sandgrep` command line: ripgrep-style flags in, ripgrep-style text or
//! JSON out. Exit status: 0 found, 1 nothing found, 2 error.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod args;
mod ast_print;
mod commands;
mod config;
mod flags;
mod help;
mod jsonl;
mod printer;
mod search;
mod stdin;

use flags::{Cli, Command};
use sandgrep::limits::MIN_OPEN_FILES;
use sandgrep::{render, Policy, Sandbox};

pub fn main() -> ExitCode {
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
    // As rg's: the bare command's help is the search's.
    if let Some(long) = help::asked(&args[past_globals(&args).min(args.len())..]) {
        return match help::print(long) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::from(2),
        };
    }
    // (Parsed as `Cli::parse_from` does, with the matches kept: -p reads
    // where the flags stand.)
    let args = search_by_default(args);
    let at = past_globals(&args);
    let matches = <Cli as clap::CommandFactory>::command().get_matches_from(config::with_config(args, at));
    let mut cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches)
        .map_err(|e| e.format(&mut <Cli as clap::CommandFactory>::command()))
        .unwrap_or_else(|e| e.exit());
    if let (Command::Search(args), Some(("search", m))) = (&mut cli.command, matches.subcommand()) {
        args.pretty_where_given(m);
        args.passthru_where_given(m);
        args.type_changes_where_given(m);
        args.ignore_where_given(m);
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
        // (No PATH: stdin when it is a pipe or a file and no --root was given.)
        stdin::choose(args, matches.value_source("root") == Some(clap::parser::ValueSource::CommandLine));
    }
    cli.paths_in_workspace();
    if let Command::Search(args) = &mut cli.command {
        if let Err(e) = args.ignore_files_in(&cli.root) {
            eprintln!("sandgrep: {e}");
            return ExitCode::from(2);
        }
        args.mmap_as_rg(&cli.root);
    }
    match run(&cli) {
        Ok(Outcome::Found) => ExitCode::from(0),
        Ok(Outcome::Nothing) => ExitCode::from(1),
        // What was found is printed, and the stop said on stderr.
        Ok(Outcome::Partial) => ExitCode::from(2),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::from(stdin::closed_status()),
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
pub(crate) fn search_by_default(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    use clap::CommandFactory;
    let i = past_globals(&args);
    let first = args.get(i).map(|a| a.to_string_lossy().into_owned());
    let command = Cli::command();
    let named = |name: &str| command.get_subcommands().any(|c| c.get_name() == name) || name == "help";
    match first.as_deref() {
        None | Some("-h" | "--help" | "-V" | "--version") => {}
        Some(arg) if named(arg) => {}
        Some(_) => args.insert(i, "search".into()),
    }
    args
}

/// Where the arguments past the program's name and the global options
/// start.
fn past_globals(args: &[std::ffi::OsString]) -> usize {
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
    i
}

impl Cli {
    /// Paths given absolute, inside the workspace, made relative to it (the
    /// component takes workspace-relative paths and refuses the rest).
    pub(crate) fn paths_in_workspace(&mut self) {
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
pub(crate) enum Outcome {
    Found,
    Nothing,
    Partial,
}

impl Outcome {
    pub(crate) fn of(found: bool, timed_out: bool) -> Outcome {
        match (found, timed_out) {
            (_, true) => Outcome::Partial,
            (true, false) => Outcome::Found,
            (false, false) => Outcome::Nothing,
        }
    }
}

pub(crate) fn run(cli: &Cli) -> io::Result<Outcome> {
    match &cli.command {
        Command::Completions { shell } => {
            help::completions(*shell, &mut io::stdout());
            return Ok(Outcome::Found);
        }
        Command::Man => {
            help::man(&mut io::stdout())?;
            return Ok(Outcome::Found);
        }
        _ => {}
    }
    // The cache's indexes, managed: no workspace opened.
    if let Command::Index { json, list, prune } = cli.command {
        if list || prune {
            let stdout = io::stdout();
            let mut out = io::BufWriter::new(stdout.lock());
            if list {
                commands::index_list(json, &mut out)?;
            } else {
                commands::index_prune(json, &mut out)?;
            }
            out.flush()?;
            return Ok(Outcome::Found);
        }
    }
    if let Command::Component { out, http } = &cli.command {
        let (bytes, default) = if *http {
            // (build.rs: the composition's bytes around sandgrep.wasm, which
            // the binary keeps once.)
            let head: &[u8] = include_bytes!(env!("SANDGREP_HTTP_HEAD"));
            let tail: &[u8] = include_bytes!(env!("SANDGREP_HTTP_TAIL"));
            ([head, sandgrep::component(), tail].concat(), "sandgrep-http.wasm")
        } else {
            (sandgrep::component().to_vec(), "sandgrep.wasm")
        };
        let out = out.clone().unwrap_or_else(|| default.into());
        std::fs::write(&out, &bytes).map_err(|e| io::Error::other(format!("{}: {e}", out.display())))?;
        eprintln!("wrote {} ({} bytes)", out.display(), bytes.len());
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
    // A reader of stdout that goes away (`| head`) ends the run at once.
    stdin::watch_stdout();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let outcome = match &cli.command {
        Command::Component { .. } | Command::Completions { .. } | Command::Man => unreachable!("handled above"),
        #[cfg(feature = "mcp")]
        Command::Mcp => unreachable!("handled above"),
        #[cfg(feature = "serve")]
        Command::Serve(_) => unreachable!("handled above"),
        Command::Search(args) => search::search(&sandbox, args, &mut out)?,
        Command::Ls(args) => commands::ls(&sandbox, args, &mut out)?,
        Command::Read(args) => commands::read(&sandbox, args, &mut out)?,
        Command::Ast(args) => commands::ast(&sandbox, args, &mut out)?,
        Command::Index { json, .. } => commands::index(&sandbox, *json, &mut out)?,
    };
    out.flush()?;
    Ok(outcome)
}

pub(crate) fn json_line(out: &mut impl Write, response: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &sandgrep::json::to_value(response))?;
    writeln!(out)
}

/// How the CLI says to pass a cursor back.
pub(crate) fn go_on(cursor: &str) -> String {
    format!("--cursor {cursor}")
}

/// Warnings and where to continue go to stderr, as rg's messages do
/// (escaped: a warning may quote a file's name).
pub(crate) fn notes(warnings: &[String], continuation: Option<String>) {
    for w in warnings {
        eprintln!("sandgrep: warning: {}", render::path(w));
    }
    if let Some(c) = continuation {
        eprintln!("sandgrep: {c}");
    }
}

/// Raises this process's soft limit on open files to its hard limit, as
/// many servers do (a long-lived host keeps several instances, and running
/// out fails a call); the limit it ends at.
pub(crate) fn raise_descriptor_limit() -> u64 {
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
