//! rg's config file: `RIPGREP_CONFIG_PATH` names a file of search flags, one
//! argument a line (surrounding whitespace trimmed; empty lines and lines
//! starting with `#` skipped), read before the command line's own, unless
//! `--no-config` is given. The file is the user's, read by the host; still,
//! it is often kept in a project (a workspace), so the operator's options —
//! the workspace, the component, the memory cap, redaction — are never taken
//! from it.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

/// The options a config file cannot set, and whether each takes a value.
const OPERATORS: &[(&str, bool)] = &[
    ("--root", true),
    ("--component", true),
    ("--memory-limit", true),
    ("--no-redact", false),
    ("--no-redact-rule", true),
];

/// `args` with the config file's arguments put before the search's own
/// (`search` at `at`): what rg does. Problems with the file are said and
/// the file skipped, as rg.
pub(crate) fn with_config(mut args: Vec<OsString>, at: usize) -> Vec<OsString> {
    if args.get(at).is_none_or(|a| a != "search") || args.iter().take_while(|a| *a != "--").any(|a| a == "--no-config")
    {
        return args;
    }
    let Some(path) = std::env::var_os("RIPGREP_CONFIG_PATH").filter(|p| !p.is_empty()) else { return args };
    // (Named by the variable, not by its host path: messages name no host
    // paths.)
    let shown = "RIPGREP_CONFIG_PATH";
    let text = match read(std::path::Path::new(&path)) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("sandgrep: failed to read the file specified in {shown}: {e}");
            return args;
        }
    };
    let mut config = Vec::new();
    let mut lines = text.split(|&b| b == b'\n').enumerate().map(|(i, l)| (i + 1, l.trim_ascii()));
    while let Some((number, line)) = lines.next() {
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        let flag = line.split(|&b| b == b'=').next().unwrap_or_default();
        if let Some(&(name, takes_value)) = OPERATORS.iter().find(|(name, _)| flag == name.as_bytes()) {
            eprintln!("sandgrep: {shown}:{number}: {name} is the operator's to give: not read from a config file");
            if takes_value && flag.len() == line.len() {
                lines.next();
            }
            continue;
        }
        config.push(OsStr::from_bytes(line).to_os_string());
    }
    let given = args.clone();
    args.splice(at + 1..at + 1, config);
    // A config that ends awaiting a value (`-e`) or with `--` would take the
    // command line's next arguments: the operator's own options given after
    // the subcommand (`sandgrep search --root /proj ...`) would be read as
    // a pattern or paths, and the workspace would fall back to the current
    // directory. The file is then skipped.
    if let Some(name) = operators_moved(&given, &args) {
        eprintln!(
            "sandgrep: {shown}: skipped: its arguments would take the command line's {name} as their own \
             (a flag waiting for its value, or `--`, at its end)"
        );
        return given;
    }
    args
}

/// Most bytes a config file may hold (rg's are a few lines).
const MAX_CONFIG: u64 = 1 << 20;

/// The config file's bytes: a regular file of at most [`MAX_CONFIG`]
/// bytes, opened without blocking (a FIFO, a device such as /dev/zero, or
/// a huge file put at its name is refused, never read without bound).
fn read(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = Vec::new();
    file.take(MAX_CONFIG + 1).read_to_end(&mut text)?;
    if text.len() as u64 > MAX_CONFIG {
        return Err(std::io::Error::other(format!("larger than {MAX_CONFIG} bytes")));
    }
    Ok(text)
}

/// The operator's option that the command line `given` sets and `combined`
/// (the config's arguments put in) no longer sets the same way, if one is.
fn operators_moved(given: &[OsString], combined: &[OsString]) -> Option<&'static str> {
    use clap::parser::ValueSource;
    let command = || <super::flags::Cli as clap::CommandFactory>::command();
    let after = command().try_get_matches_from(combined).ok()?;
    let before = command().try_get_matches_from(given).ok();
    for (name, _) in OPERATORS {
        let id = name.trim_start_matches("--").replace('-', "_");
        let named = match &before {
            Some(m) => m.value_source(&id) == Some(ValueSource::CommandLine),
            // (The command line alone may lack what the config gives, a
            // pattern: its words then.)
            None => given
                .iter()
                .take_while(|a| *a != "--")
                .filter_map(|a| a.to_str())
                .any(|a| a == *name || a.strip_prefix(name).is_some_and(|r| r.starts_with('='))),
        };
        let raw = |m: &clap::ArgMatches| -> Option<Vec<OsString>> {
            m.try_get_raw(&id).ok().flatten().map(|v| v.map(OsStr::to_os_string).collect())
        };
        let kept = after.value_source(&id) == Some(ValueSource::CommandLine)
            && before.as_ref().is_none_or(|m| raw(m) == raw(&after));
        if named && !kept {
            return Some(name);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn config_flags_go_first_and_operator_options_never() {
        let dir = tempfile::tempdir().unwrap();
        let rc = dir.path().join("rc");
        std::fs::write(&rc, "# a comment\n  --ignore-case  \n\n--root\n/\n--no-redact\n--memory-limit=9G\n-C=1\n")
            .unwrap();
        std::env::set_var("RIPGREP_CONFIG_PATH", &rc);
        let given = os(&["sandgrep", "search", "-s", "x"]);
        assert_eq!(with_config(given.clone(), 1), os(&["sandgrep", "search", "--ignore-case", "-C=1", "-s", "x"]));
        let off = os(&["sandgrep", "search", "--no-config", "x"]);
        assert_eq!(with_config(off.clone(), 1), off);
        let ls = os(&["sandgrep", "ls"]);
        assert_eq!(with_config(ls.clone(), 1), ls);
        std::env::remove_var("RIPGREP_CONFIG_PATH");
        assert_eq!(with_config(given.clone(), 1), given);
    }
}
