//! ripgrep as the oracle: on generated trees (nested ignore files with
//! negations, hidden files, binary, long-line, non-UTF-8 and UTF-16 files,
//! unusual names, symlinks), for a matrix of queries and options, sandgrep
//! finds the same (path, line) hits, the same context lines, the same files
//! (`-l`) and the same counts (`-c`) as `rg` — denylisted files aside, which
//! sandgrep never reads and rg is told to skip.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::util::{json, Tree};

/// Files sandgrep's denylist hides; rg gets them as exclusions.
const DENIED_GLOBS: &[&str] = &["!.git", "!.env", "!id_rsa", "!*.pem"];

const WORDS: &[&str] = &[
    "foo",
    "Foo",
    "FOO",
    "foobar",
    "bar",
    "needle",
    "Needle",
    "a.b",
    "axb",
    "fn",
    "let",
    "x123",
    "42",
    "hello world",
    "über",
    "naïve",
    "foo_bar",
    "(foo)",
    "tab\there",
    "NEEDLE",
    "baz",
    // `k` and `s` also fold to KELVIN SIGN and LONG S: case-insensitive
    // literals must find them as rg does.
    "mask",
    "MA\u{17f}K",
    "\u{212a}EY",
    "key",
];

/// A small deterministic generator (no dependency, same tree every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }

    fn text(&mut self) -> String {
        let mut s = String::new();
        for _ in 0..10 + self.next(40) {
            let words: Vec<&str> = (0..1 + self.next(6)).map(|_| WORDS[self.next(WORDS.len())]).collect();
            s.push_str(&words.join(" "));
            s.push('\n');
        }
        s
    }
}

pub fn git_tree() -> Tree {
    let t = Tree::new();
    let mut g = Lcg(7);
    for f in [
        "src/lib.rs",
        "src/main.rs",
        "src/parser.rs",
        "src/parser/mod.rs",
        "src/parser/expr.rs",
        "lib/util.py",
        "web/app.js",
        "web/app.ts",
        "docs/README.md",
        "notes.txt",
        "data/config.json",
        "build/out.rs",
        "app.log",
        "keep.log",
        "rootonly.txt",
        "sub/rootonly.txt",
        "sub/x.tmp",
        "sub/important.tmp",
        "sub/deeper/secret_dir/f.txt",
        "sub/deeper/f.txt",
        "sub/deeper/g.rs",
        "rgskip.txt",
        ".hidden.txt",
        ".config/settings.txt",
        "dir with space/file name.txt",
        "ünïcode/ö.txt",
        "-dash.txt",
        "a.txt",
        "a/b.txt",
        "a-b/c.txt",
        "a0.txt",
        // Denylisted: never read by sandgrep.
        ".env",
        "id_rsa",
        "certs/server.pem",
        ".git/config",
    ] {
        t.write(f, g.text());
    }
    t.mkdir(".git");
    t.write(".gitignore", "*.log\nbuild/\n!keep.log\n/rootonly.txt\n");
    t.write("sub/.gitignore", "*.tmp\n!important.tmp\n");
    t.write("sub/deeper/.ignore", "secret_dir/\n");
    t.write(".rgignore", "rgskip.txt\n");
    // Binary: a NUL in the first block, so rg and sandgrep both skip it.
    t.write("bin/blob.dat", b"\x00\x01foo needle\nfoo\n".to_vec());
    // A minified line far longer than max-columns.
    let long = format!("{}needle{}foo{}\n", "x".repeat(3000), "y".repeat(2000), "z".repeat(500));
    t.write("long/min.js", format!("start\n{long}end foo\n"));
    // Latin-1: invalid UTF-8 around the matches.
    t.write("latin1.txt", b"caf\xe9 foo\nna\xefve needle\nplain\n".to_vec());
    // UTF-16LE with a BOM: transcoded before searching.
    let mut utf16 = vec![0xFF, 0xFE];
    for u in "hello foo\nneedle bar\nFoo again\n".encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    t.write("utf16.txt", utf16);
    // Links: a directory, a file, a loop back to the root, a dangling one.
    std::os::unix::fs::symlink("src", t.path().join("linkdir")).unwrap();
    std::os::unix::fs::symlink("notes.txt", t.path().join("notes-link.txt")).unwrap();
    std::os::unix::fs::symlink("../..", t.path().join("src/parser/up")).unwrap();
    std::os::unix::fs::symlink("nope", t.path().join("dangling")).unwrap();
    t
}

/// Not a git repository: its `.gitignore` must not apply, `.ignore` must.
pub fn plain_tree() -> Tree {
    let t = Tree::new();
    let mut g = Lcg(11);
    for f in ["a.txt", "b.rs", "skipme/c.txt", "keep/d.txt", "keep/e.log"] {
        t.write(f, g.text());
    }
    t.write(".gitignore", "*.txt\n");
    t.write(".ignore", "skipme/\n");
    t
}

#[derive(Default, Debug, PartialEq)]
struct Hits {
    matches: BTreeSet<(String, u64)>,
    context: BTreeSet<(String, u64)>,
}

pub fn rg(root: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = crate::util::rg_command();
    cmd.current_dir(root).env("HOME", root).arg("--no-config").arg("--no-ignore-global");
    for g in DENIED_GLOBS {
        cmd.args(["-g", g]);
    }
    cmd.args(args).output().expect("ripgrep runs")
}

fn rg_hits(root: &Path, args: &[&str]) -> Hits {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = rg(root, &full);
    let mut hits = Hits::default();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let kind = v["type"].as_str().unwrap();
        if kind != "match" && kind != "context" {
            continue;
        }
        let path = v["data"]["path"]["text"].as_str().unwrap().trim_start_matches("./").to_string();
        let n = v["data"]["line_number"].as_u64().unwrap();
        if kind == "match" {
            hits.matches.insert((path, n));
        } else {
            hits.context.insert((path, n));
        }
    }
    hits
}

pub const UNCAPPED: &[&str] = &["--json-page", "--max-results", "5000", "-m", "1000", "--max-columns", "10000"];

fn sandgrep_hits(root: &Path, args: &[&str]) -> Hits {
    let mut full = vec!["search"];
    full.extend_from_slice(UNCAPPED);
    full.extend_from_slice(args);
    let v = json(root, &full);
    assert_eq!(v["truncated"], false, "{args:?}: raise the caps in the test");
    let mut hits = Hits::default();
    for m in v["matches"].as_array().unwrap() {
        let path = m["path"].as_str().unwrap().to_string();
        let line = m["line"].as_u64().unwrap();
        let end = line + m["text"].as_str().unwrap().matches('\n').count() as u64;
        hits.matches.insert((path.clone(), line));
        let before = m["context_before"].as_array().unwrap().len() as u64;
        for n in line - before..line {
            hits.context.insert((path.clone(), n));
        }
        for i in 1..=m["context_after"].as_array().unwrap().len() as u64 {
            hits.context.insert((path.clone(), end + i));
        }
    }
    // rg reports no line of a match (nor, in multiline, of its block) as context.
    let covered: BTreeSet<(String, u64)> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| {
            let line = m["line"].as_u64().unwrap();
            let end = line + m["text"].as_str().unwrap().matches('\n').count() as u64;
            (line..=end).map(move |n| (m["path"].as_str().unwrap().to_string(), n))
        })
        .collect();
    hits.context.retain(|h| !covered.contains(h));
    hits
}

/// The argument lists both tools take, as a user would type them. The ones
/// naming paths exist only in the git tree.
pub const CASES: &[&[&str]] = &[
    &["foo"],
    &["-F", "a.b"],
    &["a.b"],
    &["-i", "foo"],
    &["-S", "foo"],
    &["-S", "Foo"],
    &["-w", "foo"],
    &["foo|needle"],
    &["[0-9]{2,}"],
    &["^let"],
    &["bar$"],
    &["\\(foo\\)"],
    &["über|naïve"],
    &["-g", "*.rs", "foo"],
    &["-g", "!*.rs", "foo"],
    &["-g", "src/**", "needle"],
    &["-g", "*.{js,ts}", "-g", "!web/app.ts", "foo"],
    &["-t", "py", "foo"],
    &["-t", "rust", "-t", "js", "needle"],
    &["--hidden", "foo"],
    &["--no-ignore", "needle"],
    &["--hidden", "--no-ignore", "foo"],
    &["-C", "2", "needle"],
    &["-A", "1", "-B", "3", "-i", "needle"],
    &["-C", "1", "-w", "bar"],
    &["zzzz-no-such-thing"],
    &["-i", "-F", "mask"],
    &["-i", "-F", "key"],
    &["-i", "-F", "needle"],
    &["-S", "-F", "hello world"],
    &["-i", "-w", "-F", "mas"],
    &["-i", "-F", "a.b"],
    &["-i", "mask|needle|fn"],
    &["-S", "foo|Needle"],
    &["-w", "let|baz|x123"],
    &["key|KEY"],
    // The index's plan joins pieces across classes, repetitions and groups.
    &["f(oo[a-z]+ar)"],
    &["fo[a-z]+ar"],
    &["x[0-9]+3"],
];

pub const PATH_CASES: &[&[&str]] = &[
    &["needle", "src"],
    &["foo", "sub/deeper"],
    &["foo", "sub"],
    &["foo", "src/lib.rs", "web"],
    &["-U", "foo\\s+needle"],
    &["-L", "needle"],
    &["needle", "long"],
    &["-i", "needle", "latin1.txt", "utf16.txt"],
];

fn check_tree(tree: &Tree, cases: &[&[&str]]) {
    let mut failures = Vec::new();
    for case in cases {
        let want = rg_hits(tree.path(), case);
        let got = sandgrep_hits(tree.path(), case);
        if want != got {
            failures.push(format!(
                "{case:?}:\n  only rg matches: {:?}\n  only sandgrep matches: {:?}\n  only rg context: {:?}\n  only sandgrep context: {:?}",
                want.matches.difference(&got.matches).collect::<Vec<_>>(),
                got.matches.difference(&want.matches).collect::<Vec<_>>(),
                want.context.difference(&got.context).collect::<Vec<_>>(),
                got.context.difference(&want.context).collect::<Vec<_>>(),
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from rg:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn hits_match_ripgrep_in_a_git_tree() {
    let tree = git_tree();
    // The matrix must exercise something: most cases find hits.
    assert!(rg_hits(tree.path(), &["foo"]).matches.len() > 100);
    check_tree(&tree, &[CASES, PATH_CASES].concat());
}

#[test]
fn hits_match_ripgrep_outside_git() {
    check_tree(&plain_tree(), CASES);
}

/// Alternations of three words or more are looked for sixteen starts at a
/// time (in wasm SIMD): words at every offset around those blocks, in every
/// case, with KELVIN SIGN and LONG S where `k` and `s` may be, near misses,
/// words cut by a line break, at the end of the file without one.
#[test]
fn alternations_are_found_at_every_offset() {
    let t = Tree::new();
    let words = ["EINVAL", "errno", "kelvin", "Mask", "ſtop", "\u{212a}ey", "x_", "q", "ks", "EPERM"];
    let mut text = String::new();
    for (i, w) in words.iter().cycle().take(200).enumerate() {
        let w = if i % 3 == 0 { w.to_uppercase() } else { w.to_string() };
        let chars: Vec<char> = w.chars().collect();
        let half = |r: std::ops::Range<usize>| chars[r].iter().collect::<String>();
        let (head, tail) = (half(0..chars.len() / 2), half(chars.len() / 2..chars.len()));
        text.push_str(&"·-".repeat(i % 7));
        text.push_str(&".".repeat(i % 37));
        match i % 5 {
            0 => text.push_str(&format!("{w}\n")),
            1 => text.push_str(&format!("{head}\n{tail}\n")),
            2 => text.push_str(&format!("{w}{w} tail\n")),
            3 => text.push_str(&format!("{head}x{tail}\n")),
            _ => text.push_str(&format!("a{w}b\n")),
        }
    }
    t.write("a.txt", text);
    t.write("b.txt", format!("{}EPERM", "y".repeat(40)));
    t.write("c.txt", "errno");
    let cases: &[&[&str]] = &[
        &["EINVAL|errno|kelvin|EPERM"],
        &["-i", "EINVAL|errno|kelvin|EPERM"],
        &["-i", "mask|stop|key|ks"],
        &["-w", "-i", "mask|stop|key|ks|q|x_"],
        &["q|x_|ks"],
        &["-i", "errno|einval|perm|vin|q|x|y|z"],
    ];
    check_tree(&t, cases);
}

fn rg_lines(root: &Path, args: &[&str]) -> BTreeSet<String> {
    String::from_utf8(rg(root, args).stdout).unwrap().lines().map(|l| l.trim_start_matches("./").to_string()).collect()
}

#[test]
fn files_and_counts_match_ripgrep() {
    let tree = git_tree();
    for case in [
        &["foo"][..],
        &["-i", "needle"],
        &["-w", "bar", "src", "sub"],
        &["--hidden", "-t", "txt", "foo"],
        &["-U", "foo"],
        &["-U", "foo\\s+needle"],
        // Matches in one block of lines: with -U, rg counts matches.
        &["-U", "[a-z]\\n[a-z]"],
        &["-U", "-m", "2", "[a-z]\\n[a-z]"],
    ] {
        let mut args = vec!["search", "-l"];
        args.extend_from_slice(&UNCAPPED[..5]);
        args.extend_from_slice(case);
        let got: BTreeSet<String> = json(tree.path(), &args)["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect();
        let mut rg_args = vec!["-l"];
        rg_args.extend_from_slice(case);
        assert_eq!(got, rg_lines(tree.path(), &rg_args), "-l {case:?}");

        args[1] = "-c";
        let got: BTreeMap<String, u64> = json(tree.path(), &args)["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["path"].as_str().unwrap().to_string(), f["count"].as_u64().unwrap()))
            .collect();
        rg_args[0] = "-c";
        rg_args.insert(0, "-H");
        let want: BTreeMap<String, u64> = rg_lines(tree.path(), &rg_args)
            .iter()
            .map(|l| {
                let (p, c) = l.rsplit_once(':').unwrap();
                (p.to_string(), c.parse().unwrap())
            })
            .collect();
        assert_eq!(got, want, "-c {case:?}");
    }
}
