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
const OPERATORS: &[(&str, bool)] =
    &[("--root", true), ("--component", true), ("--memory-limit", true), ("--no-redact", false), ("--no-redact-rule", true)];

/// `args` with the config file's arguments put before the search's own
/// (`search` at `at`): what rg does. Problems with the file are said and
/// the file skipped, as rg.
pub(crate) fn with_config(mut args: Vec<OsString>, at: usize) -> Vec<OsString> {
    if args.get(at).is_none_or(|a| a != "search") || args.iter().take_while(|a| *a != "--").any(|a| a == "--no-config")
    {
        return args;
    }
    let Some(path) = std::env::var_os("RIPGREP_CONFIG_PATH").filter(|p| !p.is_empty()) else { return args };
    let shown = std::path::Path::new(&path).display().to_string();
    let text = match std::fs::read(&path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("sandgrep: failed to read the file specified in RIPGREP_CONFIG_PATH: {shown}: {e}");
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
    args.splice(at + 1..at + 1, config);
    args
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
        std::fs::write(&rc, "# a comment\n  --ignore-case  \n\n--root\n/\n--no-redact\n--memory-limit=9G\n-C=1\n").unwrap();
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
