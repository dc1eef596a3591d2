//! The CLI end to end: text output, exit codes, errors, caps, paging,
//! timeouts and the denylist.

use serde_json::Value;

use crate::util::{json, run, stderr, stdout, Tree};

fn lines_of(v: &Value) -> Vec<(String, u64)> {
    v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["path"].as_str().unwrap().to_string(), m["line"].as_u64().unwrap()))
        .collect()
}

#[test]
fn text_output_is_ripgreps_with_exit_codes() {
    let t = Tree::new();
    t.write("a.txt", "alpha\nfoo one\nbeta\ngamma\ndelta\nfoo two\n").write("b.txt", "nothing\n");
    let out = run(t.path(), &["search", "foo"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "a.txt:foo one\na.txt:foo two\n");

    let out = run(t.path(), &["search", "-n", "-C", "1", "foo"]);
    assert_eq!(stdout(&out), "a.txt-1-alpha\na.txt:2:foo one\na.txt-3-beta\n--\na.txt-5-delta\na.txt:6:foo two\n");

    assert_eq!(stdout(&run(t.path(), &["search", "-l", "o"])), "a.txt\nb.txt\n");
    assert_eq!(stdout(&run(t.path(), &["search", "-c", "foo"])), "a.txt:2\n");

    let out = run(t.path(), &["search", "absent"]);
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(1), ""));
}

#[test]
fn regex_and_case_defaults_follow_rg_on_the_cli() {
    let t = Tree::new();
    t.write("a.txt", "Foo\nfoo\nf.o\n");
    let count = |args: &[&str]| {
        json(t.path(), &[&["search", "--json-page"][..], args].concat())["matches"].as_array().unwrap().len()
    };
    assert_eq!(count(&["f.o"]), 2, "regex, case-sensitive by default");
    assert_eq!(count(&["-F", "f.o"]), 1);
    assert_eq!(count(&["-i", "foo"]), 2);
    assert_eq!(count(&["-S", "foo"]), 2);
    assert_eq!(count(&["-S", "Foo"]), 1);
    assert_eq!(count(&["-i", "-s", "foo"]), 1, "the last case flag wins");
}

#[test]
fn bad_input_is_a_clear_error_with_exit_2() {
    let t = Tree::new();
    t.write("a.txt", "foo\n");
    for (args, expect) in [
        (&["search", "a("][..], "invalid pattern"),
        (&["search", "-t", "nosuchtype", "foo"], "unknown file type"),
        (&["search", "foo", "../x"], "../x: outside the workspace"),
        (&["search", "foo", "/etc"], "/etc: outside the workspace"),
        (&["search", "foo", "missing/dir"], "missing/dir: not found"),
        (&["search", "foo", ".git/config"], "denied"),
        (&["search", "--cursor", "bogus", "foo"], "cursor"),
        (&["search", "-g", "a[", "foo"], "invalid glob"),
        // The pattern as written, not as the matcher wraps it for -w.
        (&["search", "-w", "a("], "unclosed group, at column 2 of the pattern"),
        // A structural pattern that does not parse: refused before any file is read.
        (&["ast", "--lang", "rust", "foo("], "does not parse as rust"),
    ] {
        let out = run(t.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains(expect), "{args:?}: {err}");
        assert!(!err.contains(t.path().to_str().unwrap()), "a host path leaked: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = run(t.path().join("nonexistent").as_path(), &["search", "foo"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn numbers_are_clamped_with_warnings() {
    let t = Tree::new();
    t.write("a.txt", "foo\n");
    let v = json(
        t.path(),
        &["search", "--json-page", "--max-results", "0", "-C", "99999999999", "--max-columns", "4294967296", "foo"],
    );
    assert_eq!(v["matches"].as_array().unwrap().len(), 1);
    let warnings = v["warnings"].to_string();
    for w in ["max-results 0 raised", "context-before 4294967295 lowered to the maximum, 10", "max-columns"] {
        assert!(warnings.contains(w), "{w} missing from {warnings}");
    }
}

#[test]
fn results_are_sorted_by_path_then_line() {
    let t = Tree::new();
    for f in ["a/x", "a.txt", "a-b/y", "a0", "B", "b/c/d", "ü"] {
        t.write(f, "hit\nmiss\nhit\n");
    }
    let v = json(t.path(), &["search", "--json-page", "hit"]);
    let got = lines_of(&v);
    // Paths as `rg --sort path` orders them: component by component.
    let mut sorted = got.clone();
    sorted.sort_by(|a, b| (std::path::Path::new(&a.0), a.1).cmp(&(std::path::Path::new(&b.0), b.1)));
    assert_eq!(got, sorted);
    assert_eq!(got.len(), 14);
    assert_eq!(got[2].0, "a/x");
}

#[test]
fn caps_truncate_and_say_so() {
    let t = Tree::new();
    t.write("many.txt", "foo\n".repeat(30)).write("one.txt", "foo\n");
    // The per-file cap cuts many.txt; no page follows, the warning names it.
    let v = json(t.path(), &["search", "--json-page", "-m", "5", "foo"]);
    assert_eq!(lines_of(&v).len(), 6);
    assert_eq!(v["truncated"], true);
    assert!(v["next_cursor"].is_null());
    assert!(v["warnings"].to_string().contains("many.txt"), "{}", v["warnings"]);
    // The total cap: a cursor to continue.
    let v = json(t.path(), &["search", "--json-page", "--max-results", "10", "foo"]);
    assert_eq!(lines_of(&v).len(), 10);
    assert_eq!(v["truncated"], true);
    assert!(v["next_cursor"].is_string());
    // Exactly at the cap with nothing after: not truncated.
    let v = json(t.path(), &["search", "--json-page", "--max-results", "31", "-m", "1000", "foo"]);
    assert_eq!((lines_of(&v).len(), &v["truncated"]), (31, &Value::Bool(false)));
}

#[test]
fn cursor_paging_yields_every_result_exactly_once_in_order() {
    let t = Tree::new();
    for i in 0..12 {
        t.write(&format!("d{}/f{i}.txt", i % 3), "x\nfoo\nfoo bar\ny\nfoo\n".repeat(1 + i % 4));
    }
    t.write("d1.txt", "foo\n");
    let all = lines_of(&json(t.path(), &["search", "--json-page", "--max-results", "5000", "foo"]));
    assert!(all.len() > 60);
    for (page, per_file) in [("7", "50"), ("1", "50"), ("10", "4")] {
        let mut got = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut args = vec!["search", "--json-page", "--max-results", page, "-m", per_file, "-C", "1", "foo"];
            if let Some(c) = &cursor {
                args.extend(["--cursor", c.as_str()]);
            }
            let v = json(t.path(), &args);
            got.extend(lines_of(&v));
            match v["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        let want: Vec<(String, u64)> = if per_file == "50" {
            all.clone()
        } else {
            let per: usize = per_file.parse().unwrap();
            let mut seen = std::collections::HashMap::new();
            all.iter()
                .filter(|(p, _)| {
                    let n = seen.entry(p.clone()).or_insert(0);
                    *n += 1;
                    *n <= per
                })
                .cloned()
                .collect()
        };
        assert_eq!(got, want, "pages of {page}, {per_file} per file");
    }
    // Skip paging agrees with the cursor.
    let mut got = Vec::new();
    for skip in (0..all.len()).step_by(9) {
        got.extend(lines_of(&json(
            t.path(),
            &["search", "--json-page", "--max-results", "9", "--skip", &skip.to_string(), "foo"],
        )));
    }
    assert_eq!(got, all);
}

#[test]
fn flags_that_would_run_a_program_are_refused_by_name() {
    // rg's --pre runs a program on each file, --hostname-bin one for the
    // hyperlinks' host: sandgrep runs none, and says so before any search
    // (an empty value, rg's way to turn them off, is accepted).
    let t = Tree::new();
    t.write("a.txt", "foo\n");
    for (args, flag) in [
        (&["--pre", "cat", "foo"][..], "--pre"),
        (&["--hostname-bin", "hostname", "foo"], "--hostname-bin"),
        (&["--one-file-system", "foo"], "--one-file-system"),
    ] {
        let out = run(t.path(), &[&["search"][..], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stdout(&out).is_empty() && stderr(&out).contains(flag), "{args:?}: {}", stderr(&out));
    }
    for args in [&["--pre", "", "foo"][..], &["--pre", "cat", "--no-pre", "foo"], &["--no-one-file-system", "foo"]] {
        let out = run(t.path(), &[&["search"][..], args].concat());
        assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), "a.txt:foo\n"), "{args:?}");
    }
}

#[test]
fn a_cursor_from_another_request_is_refused() {
    let t = Tree::new();
    t.write("a.txt", "foo\n".repeat(10));
    let v = json(t.path(), &["search", "--json-page", "--max-results", "2", "foo"]);
    let c = v["next_cursor"].as_str().unwrap();
    let out = run(t.path(), &["search", "--json-page", "--max-results", "2", "--cursor", c, "bar"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("different request"), "{}", stderr(&out));
    // Changing only the page size keeps the cursor valid.
    let v = json(t.path(), &["search", "--json-page", "--max-results", "3", "--cursor", c, "foo"]);
    assert_eq!(lines_of(&v).iter().map(|l| l.1).collect::<Vec<_>>(), [3, 4, 5]);
}

#[test]
fn long_lines_come_back_as_a_window_around_the_match() {
    let t = Tree::new();
    t.write("min.js", format!("{}NEEDLE{}\n", "a".repeat(50_000), "b".repeat(50_000)));
    let v = json(t.path(), &["search", "--json-page", "NEEDLE"]);
    let m = &v["matches"][0];
    let text = m["text"].as_str().unwrap();
    assert!(text.len() <= 500 + 6, "{} bytes", text.len());
    assert!(text.starts_with('…') && text.ends_with('…'));
    let (s, e) =
        (m["submatches"][0]["start"].as_u64().unwrap() as usize, m["submatches"][0]["end"].as_u64().unwrap() as usize);
    assert_eq!(&text[s..e], "NEEDLE");
    assert_eq!(m["column"], 50_001);
}

#[test]
fn a_timeout_returns_partial_results_and_a_cursor() {
    let t = Tree::new();
    for i in 0..3000 {
        t.write(&format!("d{}/f{i:04}.txt", i % 10), "foo\n");
    }
    let v = json(t.path(), &["search", "--json-page", "--timeout", "1", "--max-results", "5000", "foo"]);
    assert_eq!(v["timed_out"], true);
    let mut got = lines_of(&v);
    // Even a call that times out searches one file: paging always progresses.
    assert!(!got.is_empty() && got.len() < 3000, "{}", got.len());
    let c = v["next_cursor"].as_str().expect("a cursor to resume from");
    let v = json(t.path(), &["search", "--json-page", "--max-results", "5000", "--cursor", c, "foo"]);
    assert_eq!(v["timed_out"], false);
    got.extend(lines_of(&v));
    let mut sorted = got.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!((got.len(), sorted), (3000, got));
}

#[test]
fn denylisted_files_are_never_searched() {
    let t = Tree::new();
    for f in [
        ".env",
        ".env.local",
        "id_rsa",
        "keys/server.pem",
        "a.key",
        ".ssh/config",
        ".aws/credentials",
        "secrets.yml",
        ".git/config",
        "ok.txt",
    ] {
        t.write(f, "password=hunter2\n");
    }
    let v = json(t.path(), &["search", "--json-page", "--hidden", "--no-ignore", "hunter2"]);
    assert_eq!(lines_of(&v), [("ok.txt".to_string(), 1)]);
    assert!(v["stats"]["skipped"]["denied"].as_u64().unwrap() >= 9, "{}", v["stats"]);
    // Not through an explicit path either.
    for p in [".env", "keys/server.pem", ".aws/credentials", ".ssh"] {
        let out = run(t.path(), &["search", "--hidden", "hunter2", p]);
        assert_eq!(out.status.code(), Some(2), "{p}");
        assert!(stderr(&out).contains("denied"), "{p}: {}", stderr(&out));
    }
}

#[test]
fn binary_files_are_skipped_even_after_matches() {
    let t = Tree::new();
    // Matches, then 200 KB of text, then a NUL: the file's results are dropped.
    let mut late = "foo\n".repeat(30).into_bytes();
    late.extend("filler line\n".repeat(20_000).into_bytes());
    late.push(0);
    t.write("late.bin", late).write("text.txt", "foo\n");
    let v = json(t.path(), &["search", "--json-page", "foo"]);
    assert_eq!(lines_of(&v), [("text.txt".to_string(), 1)]);
    assert_eq!(v["stats"]["skipped"]["binary"], 1);
}

#[test]
fn symlinks_cannot_lead_out_of_the_workspace() {
    let outside = Tree::new();
    outside.write("secret.txt", "foo outside\n");
    let t = Tree::new();
    t.write("in.txt", "foo inside\n");
    std::os::unix::fs::symlink(outside.path(), t.path().join("escape")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), t.path().join("escape.txt")).unwrap();
    let v = json(t.path(), &["search", "--json-page", "-L", "foo"]);
    assert_eq!(lines_of(&v), [("in.txt".to_string(), 1)]);
    assert!(v["stats"]["skipped"]["unreadable"].as_u64().unwrap() >= 1, "{}", v["stats"]);
    let out = run(t.path(), &["search", "foo", "escape"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!stdout(&out).contains("outside"));
}

#[test]
fn after_context_is_complete_when_a_cap_stops_the_search() {
    let t = Tree::new();
    t.write("f.txt", "foo 1\nfoo 2\nctx 3\nctx 4\nfoo 5\n");
    // (As rg 15: a line that matches within it is shown as a match.)
    let out = run(t.path(), &["search", "--column", "-m", "1", "-A", "2", "foo"]);
    assert_eq!(stdout(&out), "f.txt:1:1:foo 1\nf.txt:2:1:foo 2\nf.txt-3-ctx 3\n");
    let theirs = crate::conformance::rg(t.path(), &["--column", "-H", "-m", "1", "-A", "2", "foo"]);
    assert_eq!(stdout(&out), stdout(&theirs));
    // The page an agent asks for keeps to its cap: the rest is context.
    let v = json(t.path(), &["search", "--json-page", "--max-results", "1", "-A", "2", "foo"]);
    assert_eq!(v["matches"][0]["context_after"], serde_json::json!(["foo 2", "ctx 3"]));
}

#[test]
fn a_late_nul_makes_a_file_binary_whatever_the_caps() {
    let t = Tree::new();
    let mut b = b"needle 1\nneedle 2\n".to_vec();
    b.extend(vec![b'x'; 200_000]);
    b.extend(b"\nneedle 3\n\0\n");
    t.write("late.txt", b);
    // The one-object page (the tools' answer) leaves the file out whole.
    for args in [
        &["search", "--json-page", "needle"][..],
        &["search", "--json-page", "--max-results", "1", "needle"],
        &["search", "--json-page", "-l", "needle"],
        &["search", "--json-page", "-c", "-m", "1", "needle"],
    ] {
        let v = json(t.path(), args);
        assert!(v["matches"].as_array().unwrap().is_empty() && v["files"].as_array().unwrap().is_empty(), "{args:?}");
        assert_eq!(v["stats"]["skipped"]["binary"], 1, "{args:?}");
    }
    // The text is rg's: the matches before the buffer that holds the NUL,
    // then rg's warning; -c leaves the file out, -l names it (rg stops at
    // its first match, before the NUL).
    for args in [&["needle"][..], &["-l", "needle"], &["-c", "-m", "1", "needle"], &["-c", "needle"]] {
        let theirs = crate::conformance::rg(t.path(), &[&["--sort", "path"][..], args].concat());
        let ours = run(t.path(), &[&["search"][..], args].concat());
        assert_eq!((ours.status.code(), stdout(&ours)), (theirs.status.code(), stdout(&theirs)), "{args:?}");
    }
}

#[test]
fn a_count_cut_by_the_timeout_is_not_returned_half_done() {
    let t = Tree::new();
    t.write("a.txt", "hit\n").write("b.txt", "hit\n".repeat(2_000_000));
    let (mut counts, mut warnings) = (Vec::new(), String::new());
    let mut cursor: Option<String> = None;
    loop {
        let mut args = vec!["search", "--json-page", "-c", "--timeout", "5", "hit"];
        if let Some(c) = &cursor {
            args.extend(["--cursor", c]);
        }
        let v = json(t.path(), &args);
        for f in v["files"].as_array().unwrap() {
            counts.push((f["path"].as_str().unwrap().to_string(), f["count"].as_u64().unwrap()));
        }
        warnings += &v["warnings"].to_string();
        match v["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    // Whole, or (on a machine so busy that the call's first file cannot
    // be read to its end in its time) left out and said so: never a part.
    if counts.len() == 1 {
        assert!(warnings.contains("b.txt: not searched to its end"), "{counts:?} {warnings}");
        assert_eq!(counts, [("a.txt".to_string(), 1)]);
    } else {
        assert_eq!(counts, [("a.txt".to_string(), 1), ("b.txt".to_string(), 2_000_000)], "{warnings}");
    }
}

#[test]
fn a_page_stays_within_its_text_budget_and_memory() {
    let t = Tree::new();
    let wide: String = (0..1100).map(|i| format!("{}{i:09}\n", "x".repeat(9990))).collect();
    t.write("wide.txt", wide);
    let v = json(
        t.path(),
        &[
            "--memory-limit",
            "64M",
            "search",
            "--json-page",
            "-C",
            "10",
            "--max-columns",
            "10000",
            "-m",
            "1000",
            "--max-results",
            "5000",
            "--max-filesize",
            "20M",
            "x",
        ],
    );
    assert_eq!(v["truncated"], true);
    assert!(v["next_cursor"].is_string());
    assert!(v["warnings"].to_string().contains("bytes of text"), "{}", v["warnings"]);
}

#[test]
fn names_with_backslashes_and_colons_can_be_passed_back() {
    let t = Tree::new();
    t.write("back\\slash.txt", "needle\n").write("C:notes.txt", "needle\n");
    let out = run(t.path(), &["search", "--column", "needle"]);
    assert_eq!(stdout(&out), "C:notes.txt:1:1:needle\nback\\slash.txt:1:1:needle\n");
    for p in ["back\\slash.txt", "C:notes.txt"] {
        assert_eq!(stdout(&run(t.path(), &["read", p])), "needle\n", "{p}");
        assert_eq!(run(t.path(), &["search", "needle", p]).status.code(), Some(0), "{p}");
    }
}

#[test]
fn a_workspace_inside_a_git_repository_applies_its_gitignore_files() {
    let repo = Tree::new();
    repo.mkdir(".git");
    repo.write("pkg/.gitignore", "build/\n").write("pkg/build/gen.txt", "needle\n").write("pkg/src.txt", "needle\n");
    let out = run(&repo.path().join("pkg"), &["search", "--column", "needle"]);
    assert_eq!(stdout(&out), "src.txt:1:1:needle\n");
    let out = run(&repo.path().join("pkg"), &["ls"]);
    assert_eq!(stdout(&out), "src.txt\n");
}

#[test]
fn an_empty_pattern_matches_every_line_as_in_rg() {
    let t = Tree::new();
    t.write("a.txt", "one\ntwo\n");
    assert_eq!(stdout(&run(t.path(), &["search", "--column", ""])), "a.txt:1:1:one\na.txt:2:1:two\n");
}

#[test]
fn a_fixed_string_that_reads_as_a_regex_gets_a_hint() {
    let t = Tree::new();
    t.write("a.go", "func (c *Client) ContainerCreate(ctx context.Context) {}\n");
    let out = run(t.path(), &["search", "-F", "func.*ContainerCreate"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("drop -F to search it as one"), "{}", stderr(&out));
    assert_eq!(run(t.path(), &["search", "func.*ContainerCreate"]).status.code(), Some(0));
    // A plain literal that finds nothing gets no hint.
    assert!(!stderr(&run(t.path(), &["search", "-F", "nothing"])).contains("-F"));
}

#[test]
fn a_pattern_first_searches_and_absolute_paths_inside_the_root_are_taken() {
    let t = Tree::new();
    t.write("src/a.rs", "fn needle() {}\nNEEDLE\n");
    t.write("ls", "needle in a file named ls\n");
    let out = |args: &[&str]| {
        let o = run(t.path(), args);
        (o.status.code(), stdout(&o), stderr(&o))
    };
    let searched = out(&["search", "needle", "src"]);
    assert_eq!(searched.0, Some(0), "{searched:?}");
    // As rg: the pattern first, global options before it, search flags too.
    assert_eq!(out(&["needle", "src"]), searched);
    assert_eq!(out(&["-j1", "needle", "src"]), searched);
    assert_eq!(out(&["--no-index", "needle", "src"]), searched);
    assert_eq!(out(&["-i", "needle", "src"]), out(&["search", "-i", "needle", "src"]));
    // A subcommand's name is the subcommand.
    assert!(out(&["ls"]).1.contains("src/a.rs"));
    // Inside the root, absolute or relative, the same answer, named as the
    // path was given (as rg names them); outside, refused.
    let abs = t.path().join("src");
    let as_given = searched.1.replace("src/", &format!("{}/", abs.display()));
    assert_eq!(out(&["needle", abs.to_str().unwrap()]), (searched.0, as_given, searched.2.clone()));
    let whole = t.path().canonicalize().unwrap();
    let under_root = out(&["needle", "."]).1.replace("./", &format!("{}/", whole.display()));
    assert_eq!(out(&["needle", whole.to_str().unwrap()]).1, under_root);
    let file = t.path().join("src/a.rs");
    assert_eq!(out(&["read", file.to_str().unwrap()]).1, out(&["read", "src/a.rs"]).1);
    let outside = out(&["needle", "/etc"]);
    assert_eq!(outside.0, Some(2));
    assert!(outside.2.contains("outside the workspace"), "{outside:?}");
}

#[test]
fn ls_draws_a_tree_of_the_same_listing() {
    let t = Tree::new();
    t.write("src/index/mod.rs", "").write("src/index/plan.rs", "").write("src/lib.rs", "").write("README.md", "");
    let out = run(t.path(), &["ls", "--tree"]);
    assert_eq!(
        stdout(&out),
        ".\n├── README.md\n└── src/\n    ├── index/\n    │   ├── mod.rs\n    │   └── plan.rs\n    └── lib.rs\n"
    );
    // Paged as the listing: a page draws the directories its entries are in.
    let out = run(t.path(), &["ls", "--tree", "--skip", "1", "--max-results", "1", "src"]);
    assert_eq!(stdout(&out), "src\n└── index/\n    └── plan.rs\n");
    assert!(stderr(&out).contains("--cursor"), "{}", stderr(&out));
    let out = run(t.path(), &["ls", "--tree", "./src/index/"]);
    assert_eq!(stdout(&out), "src/index\n├── mod.rs\n└── plan.rs\n");
}

#[test]
fn ls_metadata_reads_as_people_read_it_on_a_terminal_and_raw_when_piped() {
    let t = Tree::new();
    t.write("big.bin.txt", "x".repeat(1536));
    let piped = stdout(&run(t.path(), &["ls", "--metadata"]));
    let fields: Vec<&str> = piped.trim_end().split('\t').collect();
    assert_eq!(fields[..2], ["big.bin.txt", "1536"]);
    assert!(fields[2].parse::<i64>().is_ok(), "{piped}");
    let line = format!("{} --root {} ls --metadata", env!("CARGO_BIN_EXE_sandgrep"), t.path().display());
    let out = crate::util::on_terminal(&line);
    let shown = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<&str> = shown.trim_end().split('\t').collect();
    assert_eq!(fields[..2], ["big.bin.txt", "1.5K"], "{shown}");
    assert!(fields[2].len() == 20 && fields[2].ends_with('Z') && fields[2].as_bytes()[10] == b'T', "{shown}");
}

#[test]
fn completions_man_page_and_help_come_from_the_cli_itself() {
    let t = Tree::new();
    for (shell, marker) in [("bash", "_sandgrep()"), ("zsh", "#compdef sandgrep"), ("fish", "complete -c sandgrep")] {
        let out = run(t.path(), &["completions", shell]);
        assert!(out.status.success() && stdout(&out).contains(marker), "{shell}: {}", stderr(&out));
        // Subcommands and their flags are in it.
        assert!(stdout(&out).contains("max-results"), "{shell}");
    }
    let man = stdout(&run(t.path(), &["man"]));
    assert!(man.contains(".TH SANDGREP 1") && man.contains("search"), "{man}");
    // A subcommand's own options come first, the global ones after.
    let help = stdout(&run(t.path(), &["read", "--help"]));
    let (own, global) = (help.find("--lines").unwrap(), help.find("Global options:").unwrap());
    assert!(own < global && help.find("--threads").unwrap() > global, "{help}");
}

#[test]
fn dense_pages_go_on_in_one_instance_with_the_same_output() {
    // Pages of many matches in few files, then files with one each: the
    // CLI moves to one instance after a dense page; the lines are rg's
    // and the same with one or two instances.
    let t = Tree::new();
    for i in 0..3 {
        t.write(&format!("a{i}.txt"), format!("hit {i}\n").repeat(4000));
    }
    for i in 0..600 {
        t.write(&format!("b/f{i:03}.txt"), format!("x\nhit b{i}\ny\n"));
    }
    let out = |jobs: &str| stdout(&run(t.path(), &["-j", jobs, "search", "-n", "--sort", "path", "hit"]));
    let one = out("1");
    assert_eq!(one.lines().count(), 12_600);
    assert_eq!(out("2"), one);
    let rg = crate::util::rg_command().args(["-n", "--sort", "path", "hit"]).current_dir(t.path()).output().unwrap();
    assert_eq!(String::from_utf8(rg.stdout).unwrap(), one);
}

#[test]
fn the_cli_streams_past_one_answers_text_without_a_warning_and_takes_repeated_flags() {
    // 7.5 MB of matching lines: more than one answer holds (6 MiB), all printed.
    let t = Tree::new();
    let line = format!("needle {}\n", "x".repeat(56));
    t.write("big.txt", line.repeat(120_000)).write("small.txt", "needle\nneedle\n");
    let out = run(t.path(), &["search", "needle", "big.txt"]);
    assert_eq!(stdout(&out).lines().count(), 120_000);
    assert!(!stderr(&out).contains("output reached"), "{}", stderr(&out));
    // As rg: a flag given twice is taken once (the last value wins); of -c
    // and -l, the last given (rg 15).
    assert_eq!(stdout(&run(t.path(), &["search", "-c", "-c", "-m", "5", "-m", "1", "needle", "small.txt"])), "1\n");
    assert_eq!(stdout(&run(t.path(), &["search", "-l", "-c", "needle", "small.txt"])), "2\n");
    assert_eq!(stdout(&run(t.path(), &["search", "-c", "-l", "needle", "small.txt"])), "small.txt\n");
    // But not the workspace an operator pinned (`sandgrep --root DIR "$@"`).
    let out = run(t.path(), &["search", "--root", "/", "needle"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--root was given more than once"), "{}", stderr(&out));
}
