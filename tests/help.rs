//! Help, the man page and the shell completions: made from the one table of
//! flags, they show what a ripgrep user looks for.

use std::process::Command;

use crate::util::{run, stdout, Tree};

/// Where `needle` first stands in `text` (a panic naming it if nowhere).
fn at(text: &str, needle: &str) -> usize {
    text.find(needle).unwrap_or_else(|| panic!("{needle:?} is not in:\n{text}"))
}

#[test]
fn the_bare_commands_help_shows_the_search_flags_first() {
    let t = Tree::new();
    for args in [&["--help"][..], &["-h"], &["help"], &["-j", "1", "--help"]] {
        let out = run(t.path(), args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let help = stdout(&out);
        let usage = at(&help, "sandgrep [OPTIONS] PATTERN [PATH ...]");
        // rg's sections, in rg's order, then the commands.
        let sections = ["Search options:", "Filter options:", "Output options:", "Output modes:", "Commands"];
        let places: Vec<usize> = sections.iter().map(|s| at(&help, s)).collect();
        assert!(usage < places[0] && places.windows(2).all(|w| w[0] < w[1]), "{args:?}: {help}");
        for flag in ["--ignore-case", "--context", "--glob", "--json", "--files", "--type-list", "--root"] {
            at(&help, flag);
        }
        at(&help[places[4]..], "ls ");
        at(&help[places[4]..], "mcp ");
    }
    // A command's own help is its own.
    let ls = stdout(&run(t.path(), &["ls", "--help"]));
    assert!(ls.contains("--tree") && !ls.contains("--ignore-case"), "{ls}");
}

#[test]
fn the_man_page_covers_every_flag_exit_codes_and_examples() {
    let t = Tree::new();
    let out = run(t.path(), &["man"]);
    assert_eq!(out.status.code(), Some(0));
    let page = stdout(&out);
    for section in
        [".SH SYNOPSIS", ".SH \"EXIT STATUS\"", ".SH EXAMPLES", ".SH \"SANDGREP LS\"", ".SH \"SANDGREP AST\""]
    {
        at(&page, section);
    }
    // Every search flag and every command's flags (roff writes `-` as `\-`).
    for flag in ["ignore\\-case", "after\\-context", "files\\-without\\-match", "json\\-page", "tree", "lang", "lines"]
    {
        at(&page, flag);
    }
    // man itself reads it without a warning.
    let dir = Tree::new();
    dir.write("sandgrep.1", &out.stdout);
    let man = Command::new("man").args(["--warnings", "-l"]).arg(dir.path().join("sandgrep.1")).output();
    if let Some(man) = man.ok().filter(|m| m.status.success()) {
        let stderr = String::from_utf8_lossy(&man.stderr);
        assert!(!stderr.contains("warning"), "{stderr}");
        assert!(stdout(&man).contains("EXIT STATUS"));
    }
}

/// What bash completes for the words `line` (the last one being completed).
fn bash_completes(script: &str, line: &[&str]) -> Vec<String> {
    let words: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
    let (cur, prev) = (line[line.len() - 1], line[line.len() - 2]);
    let program = format!(
        "{script}\nCOMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{}'; COMP_POINT=${{#COMP_LINE}}\n\
         _sandgrep sandgrep '{cur}' '{prev}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        words.join(" "),
        line.len() - 1,
        line.join(" ")
    );
    let out = Command::new("bash").args(["--norc", "--noprofile", "-c", &program]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    stdout(&out).lines().map(str::to_string).collect()
}

#[test]
fn completions_offer_the_search_flags_and_the_type_names() {
    let t = Tree::new();
    let bash = stdout(&run(t.path(), &["completions", "bash"]));
    // Flags of the bare command (a search), after another flag.
    assert!(bash_completes(&bash, &["sandgrep", "-i", "--no-he"]).contains(&"--no-heading".to_string()));
    assert!(bash_completes(&bash, &["sandgrep", "--fil"]).contains(&"--files-with-matches".to_string()));
    // Type names after -t, not file names.
    let types = bash_completes(&bash, &["sandgrep", "-t", "ru"]);
    assert!(types.contains(&"rust".to_string()) && types.contains(&"ruby".to_string()), "{types:?}");
    let types = bash_completes(&bash, &["sandgrep", "search", "-T", "py"]);
    assert!(types.contains(&"py".to_string()), "{types:?}");
    // The other shells' scripts know the flags and the types too.
    for shell in ["zsh", "fish"] {
        let script = stdout(&run(t.path(), &["completions", shell]));
        for word in ["ignore-case", "max-count", "rust", "typescript"] {
            at(&script, word);
        }
    }
}
