//! `sandgrep ls` and `sandgrep read`: the listing equals `rg --files`, pages
//! cover it exactly once, and read ranges equal `sed -n` and `dd` byte for
//! byte.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::conformance::{git_tree, plain_tree, rg};
use crate::util::{json, run, stderr, stdout, Tree};

fn ls_paths(root: &Path, args: &[&str]) -> Vec<String> {
    let mut full = vec!["ls", "--json", "--max-results", "10000"];
    full.extend_from_slice(args);
    let v = json(root, &full);
    assert_eq!(v["has_more"], false);
    v["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap().to_string()).collect()
}

#[test]
fn listing_equals_rg_files() {
    let deep = Tree::new();
    let mut p = String::new();
    for i in 0..40 {
        p.push_str(&format!("d{i}/"));
        deep.write(&format!("{p}f.txt"), "x");
    }
    deep.write(".hidden/inner.txt", "x").write("sp ace/ü/-lead.txt", "x").write(".ignore", "d3/f.txt\n");
    for tree in [git_tree(), plain_tree(), deep] {
        for args in [
            &[][..],
            &["--hidden"],
            &["--no-ignore"],
            &["--hidden", "--no-ignore"],
            &["-g", "*.rs"],
            &["-g", "!*.txt", "--hidden"],
            &["-g", "src/**"],
        ] {
            let got = ls_paths(tree.path(), args);
            let mut sorted = got.clone();
            sorted.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
            assert_eq!(got, sorted, "ls {args:?} is not in path order");
            // The same files in the same order as `rg --files --sort path`.
            let mut rg_args = vec!["--files", "--sort", "path"];
            rg_args.extend_from_slice(args);
            let want: Vec<String> = String::from_utf8(rg(tree.path(), &rg_args).stdout)
                .unwrap()
                .lines()
                .map(|l| l.trim_start_matches("./").to_string())
                .collect();
            assert_eq!(got, want, "ls {args:?}");
        }
        // A subdirectory gets its parents' ignore rules, as with rg.
        if tree.path().join("sub").exists() {
            let got: BTreeSet<String> = ls_paths(tree.path(), &["sub"]).into_iter().collect();
            let want: BTreeSet<String> = String::from_utf8(rg(tree.path(), &["--files", "sub"]).stdout)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect();
            assert_eq!(got, want);
        }
    }
}

#[test]
fn ls_text_dirs_metadata_and_depth() {
    let t = Tree::new();
    t.write("a.txt", "12345").write("d/e.txt", "");
    assert_eq!(stdout(&run(t.path(), &["ls"])), "a.txt\nd/e.txt\n");
    assert_eq!(stdout(&run(t.path(), &["ls", "--dirs", "--no-recursive"])), "a.txt\nd/\n");
    let out = stdout(&run(t.path(), &["ls", "--metadata", "a.txt"]));
    let cols: Vec<&str> = out.trim_end().split('\t').collect();
    assert_eq!(&cols[..2], ["a.txt", "5"]);
    assert!(cols[2].parse::<i64>().unwrap() > 1_600_000_000);
    let v = json(t.path(), &["ls", "--json", "--dirs", "--metadata"]);
    assert_eq!(v["entries"][1]["path"], "d");
    assert_eq!(v["entries"][1]["is_dir"], true);
    assert_eq!(v["total"], 3);
    let empty = Tree::new();
    assert_eq!(run(empty.path(), &["ls"]).status.code(), Some(1));
}

#[test]
fn paging_a_large_tree_yields_every_entry_once_in_order() {
    let t = Tree::new();
    for i in 0..1500 {
        t.write(&format!("p{}/q{}/f{i}.rs", i % 7, i % 13), "");
    }
    let all = ls_paths(t.path(), &["--dirs"]);
    assert_eq!(all.len(), 1500 + 7 + 7 * 13);
    let mut got = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = vec!["ls", "--json", "--dirs", "--max-results", "97"];
        if let Some(c) = &cursor {
            args.extend(["--cursor", c]);
        }
        let v = json(t.path(), &args);
        assert_eq!(v["total"], all.len());
        got.extend(v["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap().to_string()));
        match v["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(got, all);
    let mut got = Vec::new();
    for skip in (0..all.len()).step_by(250) {
        let v = json(t.path(), &["ls", "--json", "--dirs", "--max-results", "250", "--skip", &skip.to_string()]);
        got.extend(v["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap().to_string()));
    }
    assert_eq!(got, all);
    // A cursor only continues the listing it came from.
    let c = json(t.path(), &["ls", "--json", "--max-results", "5"])["next_cursor"].as_str().unwrap().to_string();
    let out = run(t.path(), &["ls", "--json", "--hidden", "--cursor", &c]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("different request"), "{}", stderr(&out));
}

fn read_json(root: &Path, path: &str, range: &[&str]) -> Value {
    let mut args = vec!["read", path, "--json"];
    args.extend_from_slice(range);
    json(root, &args)
}

fn sed(root: &Path, file: &str, start: u64, count: u64) -> Vec<u8> {
    let script = format!("{start},{}p", start + count - 1);
    Command::new("sed").current_dir(root).args(["-n", &script, file]).output().unwrap().stdout
}

fn dd(root: &Path, file: &str, offset: u64, count: u64) -> Vec<u8> {
    Command::new("dd")
        .current_dir(root)
        .args([
            &format!("if={file}"),
            "bs=65536",
            "iflag=skip_bytes,count_bytes",
            &format!("skip={offset}"),
            &format!("count={count}"),
            "status=none",
        ])
        .output()
        .unwrap()
        .stdout
}

#[test]
fn read_ranges_equal_sed_and_dd() {
    let t = Tree::new();
    t.write("empty.txt", "")
        .write("nonl.txt", "one\ntwo\nthree")
        .write("crlf.txt", "a\r\nb\r\n\r\nc\r\n")
        .write("plain.txt", (1..=500).map(|i| format!("line {i}\n")).collect::<String>())
        .write("big-line.txt", format!("{}\n", "x".repeat(1 << 20)));
    for file in ["empty.txt", "nonl.txt", "crlf.txt", "plain.txt", "big-line.txt"] {
        let size = std::fs::metadata(t.path().join(file)).unwrap().len();
        for (start, count) in [(1, 1), (1, 2), (2, 3), (3, 1), (4, 10), (499, 5), (600, 3), (1, 5000)] {
            let v = read_json(t.path(), file, &["--lines", &format!("{start}:{count}")]);
            assert_eq!(
                v["content"].as_str().unwrap().as_bytes(),
                sed(t.path(), file, start, count),
                "{file} lines {start}:{count}"
            );
            assert_eq!(v["total_bytes"], size);
        }
        for (offset, count) in [
            (0, 1),
            (0, 65536),
            (1, 3),
            (5, 100),
            (size.saturating_sub(1), 10),
            (size, 5),
            (size + 10, 5),
            (1000, 1 << 20),
        ] {
            let v = read_json(t.path(), file, &["--bytes", &format!("{offset}:{count}")]);
            assert_eq!(
                v["content"].as_str().unwrap().as_bytes(),
                dd(t.path(), file, offset, count),
                "{file} bytes {offset}:{count}"
            );
            let end = (offset + count).min(size);
            assert_eq!(v["is_truncated"], end < size && offset < size, "{file} bytes {offset}:{count}");
        }
    }
    // Where to continue, and what is known of the whole.
    let v = read_json(t.path(), "plain.txt", &["--lines", "10:5"]);
    assert_eq!((v["next_line"].as_u64(), v["is_truncated"].as_bool()), (Some(15), Some(true)));
    let v = read_json(t.path(), "nonl.txt", &[]);
    assert_eq!((v["total_lines"].as_u64(), v["range"]["range_type"].as_str()), (Some(3), Some("bytes")));
    let v = read_json(t.path(), "crlf.txt", &["--lines", "3:2"]);
    assert_eq!((v["content"].as_str(), v["total_lines"].as_u64()), (Some("\r\nc\r\n"), Some(4)));
}

#[test]
fn read_text_output_numbers_lines_like_cat_n() {
    let t = Tree::new();
    t.write("a.txt", "alpha\r\nbeta\ngamma\n");
    let out = run(t.path(), &["read", "a.txt", "--lines", "2:5"]);
    assert_eq!(stdout(&out), "     2\tbeta\n     3\tgamma\n");
    assert_eq!(out.status.code(), Some(0));
    let out = run(t.path(), &["read", "a.txt", "--lines", "1:1"]);
    assert!(stderr(&out).contains("continue with --lines 2"), "{}", stderr(&out));
}

#[test]
fn read_errors_are_clear() {
    let t = Tree::new();
    t.write("bin.dat", b"abc\x00def".to_vec()).write("d/x.txt", "x").write(".env", "SECRET=1").write("ok.txt", "ok\n");
    for (args, expect) in [
        (&["read", "missing.txt"][..], "missing.txt: not found"),
        (&["read", "d"], "d is a directory"),
        (&["read", "../outside"], "../outside: outside the workspace"),
        (&["read", "/etc/passwd"], "outside the workspace"),
        (&["read", "bin.dat"], "bin.dat: binary file"),
        (&["read", ".env"], ".env: denied"),
        (&["read", "ok.txt", "--lines", "x:1"], "invalid range"),
        (&["read", "ok.txt", "--lines", "1:2", "--bytes", "0:1"], "cannot be used with"),
    ] {
        let out = run(t.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(expect), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains(t.path().to_str().unwrap()), "host path leaked: {}", stderr(&out));
    }
    // Out-of-range numbers are clamped, with a warning.
    let v = read_json(t.path(), "ok.txt", &["--lines", "0:999999"]);
    assert_eq!(v["content"], "ok\n");
    assert_eq!(v["range"]["start_line"], 1);
    assert_eq!(v["range"]["max_lines"], 5000);
    assert_eq!(v["warnings"].as_array().unwrap().len(), 2, "{}", v["warnings"]);
    // Invalid UTF-8 comes back lossily decoded, with a warning.
    t.write("latin1.txt", b"caf\xe9\n".to_vec());
    let v = read_json(t.path(), "latin1.txt", &[]);
    assert_eq!(v["content"], "caf\u{FFFD}\n");
    assert!(v["warnings"][0].as_str().unwrap().contains("UTF-8"));
}

#[test]
fn ls_lists_and_draws_in_rgs_path_order() {
    let t = crate::rg_output::order_tree();
    // The files: `rg --files --sort path`'s, piped and paged.
    let rg_files = stdout(&rg(t.path(), &["--files", "--sort", "path"]));
    assert_eq!(stdout(&run(t.path(), &["ls"])), rg_files);
    let want: Vec<String> = rg_files.lines().map(str::to_string).collect();
    for max in ["1", "3"] {
        assert_eq!(ls_pages(t.path(), &["--max-results", max]), want, "pages of {max}");
    }
    // With directories: each right before its contents, as `Path` orders
    // them; pages go on through them.
    let with_dirs = ls_paths(t.path(), &["--dirs"]);
    let mut sorted = with_dirs.clone();
    sorted.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
    assert_eq!(with_dirs, sorted);
    let files: Vec<&String> = with_dirs.iter().filter(|p| t.path().join(p).is_file()).collect();
    assert_eq!(files, want.iter().collect::<Vec<_>>());
    for max in ["1", "2", "5"] {
        assert_eq!(ls_pages(t.path(), &["--dirs", "--max-results", max]), with_dirs, "--dirs, pages of {max}");
    }
    // One level, and a tree of the same order.
    let t = Tree::new();
    for f in ["git/x.go", "git.go", "git-x", "a/b", "a+", "a.b/c", "ab", "a!"] {
        t.write(f, "");
    }
    assert_eq!(
        stdout(&run(t.path(), &["ls", "--dirs", "--no-recursive"])),
        "a/\na!\na+\na.b/\nab\ngit/\ngit-x\ngit.go\n"
    );
    assert_eq!(
        stdout(&run(t.path(), &["ls", "--tree"])),
        ".\n├── a/\n│   └── b\n├── a!\n├── a+\n├── a.b/\n│   └── c\n├── ab\n├── git/\n│   └── x.go\n├── git-x\n└── git.go\n"
    );
    // A page of a tree draws the directories its entries are in.
    let out = run(t.path(), &["ls", "--tree", "--skip", "3", "--max-results", "2"]);
    assert_eq!(stdout(&out), ".\n├── a.b/\n│   └── c\n└── ab\n");
}

/// Every page of `ls ARGS`, cursor after cursor: the paths.
fn ls_pages(root: &Path, args: &[&str]) -> Vec<String> {
    let mut got = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut full = vec!["ls", "--json-page"];
        full.extend_from_slice(args);
        if let Some(c) = &cursor {
            full.extend(["--cursor", c]);
        }
        let v = json(root, &full);
        got.extend(v["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap().to_string()));
        match v["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return got,
        }
    }
}

#[test]
fn ls_and_its_tree_stream_every_entry() {
    // More entries than a page holds (500), in directories that span pages.
    let t = Tree::new();
    for i in 0..620 {
        t.write(&format!("d{}/s{}/f{i:03}.txt", i % 4, i % 7), "x\n");
    }
    let out = run(t.path(), &["ls"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 620);
    assert_eq!(stderr(&out), "");
    let one = run(t.path(), &["ls", "--max-results", "10000"]);
    assert_eq!(stdout(&out), stdout(&one));
    // The tree drawn across pages is the tree drawn from one.
    let tree = run(t.path(), &["ls", "--tree"]);
    let whole = run(t.path(), &["ls", "--tree", "--max-results", "10000"]);
    assert_eq!(stdout(&tree), stdout(&whole));
    assert_eq!(stdout(&tree).lines().filter(|l| l.ends_with(".txt")).count(), 620);
    assert_eq!(stderr(&tree), "");
    // --json and --json-page: one page, one object.
    for flag in ["--json", "--json-page"] {
        let v = json(t.path(), &["ls", flag]);
        assert_eq!(v["entries"].as_array().unwrap().len(), 500);
        assert_eq!(v["has_more"], true);
    }
}
