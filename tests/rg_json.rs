//! `search --json` against `rg --json --sort path`: the same JSON Lines,
//! message for message (begin, match, context, end, summary), timings
//! aside, and the same exit status — on a generated tree and on a copy of
//! real source.

use std::path::Path;

use serde_json::Value;

use crate::conformance::rg;
use crate::util::{run, stderr, stdout, Tree};

/// Files with matches spread over lines and directories, context groups
/// that merge, several matches per line, a file with more matching lines
/// than one page, CRLF, no final newline, unicode, blocks for -U, and a
/// binary file (skipped, but searched and counted as rg counts it).
fn tree() -> Tree {
    let t = Tree::new();
    let mut seed = 7u64;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let words = ["foo", "bar", "foo bar foo", "Foo", "foobar", "baz\tfoo", "qux", "food", "x", "FOO"];
    for dir in ["", "src/", "src/deep/", "docs/"] {
        for f in 0..4 {
            let text: String =
                (0..5 + next(30)).map(|i| format!("{i} {}\n", words[next(words.len() as u64) as usize])).collect();
            t.write(&format!("{dir}f{f}.txt"), text);
        }
    }
    t.write("big.txt", (0..6000).map(|i| format!("foo {i}\n")).collect::<String>());
    t.write("crlf.txt", "foo\r\nbar\r\nfoo bar\r\n");
    t.write("last.txt", "bar\nfoo at the end");
    t.write("twice.txt", "foofoo barbar\n");
    t.write("utf8.txt", "ſkip foo\né\nüber foo → bar\n");
    t.write("blocks.txt", "start\nfoo\nbar\nend\nfoo\nbar\nx\nstart\nend\n");
    t.write("bin.dat", b"foo\0binary\n");
    t
}

/// The messages of `out`, one a line, with their timings zeroed.
fn messages(out: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(out);
    text.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            untimed(&mut v);
            v
        })
        .collect()
}

fn untimed(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if k == "elapsed" || k == "elapsed_total" {
                    *x = Value::Null;
                } else {
                    untimed(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(untimed),
        _ => {}
    }
}

/// Runs `rg --json --sort path ARGS` and `sandgrep search --json ARGS`:
/// their messages (or, where rg prints text, their text) and exit status.
fn compare(root: &Path, flags: &[&str], args: &[&str]) {
    let mut theirs = vec!["--json", "--sort", "path"];
    theirs.extend_from_slice(args);
    let theirs = rg(root, &theirs);
    let mut ours = flags.to_vec();
    ours.extend_from_slice(&["search", "--json"]);
    ours.extend_from_slice(args);
    let ours = run(root, &ours);
    assert_eq!(ours.status.code(), theirs.status.code(), "{args:?}: {}", stderr(&ours));
    let json = theirs.stdout.first() == Some(&b'{');
    if json {
        let (want, got) = (messages(&theirs.stdout), messages(&ours.stdout));
        for (i, (w, g)) in want.iter().zip(&got).enumerate() {
            assert_eq!(g, w, "{args:?}: message {i}");
        }
        assert_eq!(got.len(), want.len(), "{args:?}: {}", stdout(&ours));
        // The messages as rg writes them, key order and all.
        let want: Vec<String> = want.iter().map(|v| v.to_string()).collect();
        let got: Vec<String> = got.iter().map(|v| v.to_string()).collect();
        assert_eq!(got, want, "{args:?}");
    } else {
        assert_eq!(stdout(&ours), stdout(&theirs), "{args:?}");
    }
}

#[test]
fn json_lines_are_rgs_message_for_message() {
    let t = tree();
    let sets: &[&[&str]] = &[
        &["foo"],
        // Context: groups that merge, and that do not.
        &["-C", "1", "foo"],
        &["-C", "3", "bar"],
        &["-A", "2", "-B", "1", "qux"],
        &["-m", "1", "foo"],
        &["-m", "2", "bar"],
        // Past -m, matches within the last result's after-context.
        &["-m", "1", "-A", "2", "foo"],
        &["-m", "2", "-C", "1", "bar"],
        &["-i", "foo"],
        &["-w", "foo"],
        &["-F", "o b"],
        &["-e", "bar", "-e", "qux"],
        &["-g", "*.txt", "-g", "!src/**", "foo"],
        &["-t", "txt", "bar"],
        // Matches over several lines, with context.
        &["-U", "foo\\nbar"],
        &["-U", "-C", "1", "(?s)start.*?end"],
        &["-v", "foo"],
        // Nothing found: the summary alone (exit 1).
        &["nothing-is-here"],
        // Several paths, in the order given.
        &["foo", "src", "docs"],
        &["foo", "docs", "src/deep", "twice.txt"],
        &["foo", "./src"],
        &["foo", "crlf.txt"],
        &["-C", "2", "end", "last.txt"],
        &["é|→"],
        // Empty matches, and one at the end of a last line with no newline.
        // (Not in `ſ`: the component moves an empty match inside a
        // character to its start, where rg's JSON names the byte.)
        &["x|", "last.txt", "twice.txt", "crlf.txt"],
        // rg's JSON ignores these.
        &["-o", "foo"],
        &["--stats", "bar"],
        &["--vimgrep", "bar"],
        // A replacement shows beside each match.
        &["-r", "X$$<$0>", "foo"],
        // -q: the summary alone.
        &["-q", "foo"],
        // -c and -l print their text, --json or not.
        &["-c", "foo"],
        &["-l", "foo"],
        &["--count-matches", "foo"],
        // … unless --json comes after them: the last given wins.
        &["-c", "--json", "foo"],
        &["-l", "--json", "foo"],
        &["--files-without-match", "--json", "qux"],
        &["--json", "--no-json", "-c", "foo"],
        // -N: no line numbers.
        &["-N", "-C", "1", "qux"],
        // A path that cannot be searched: the summary still comes.
        &["foo", "missing.txt"],
        // VS Code's text search (its ripgrep engine's argument list).
        &[
            "--hidden",
            "--no-require-git",
            "--ignore-case",
            "-g",
            "!**/.git",
            "-g",
            "!**/.svn",
            "-g",
            "!**/.DS_Store",
            "--no-ignore-parent",
            "--follow",
            "--no-config",
            "--no-ignore-global",
            "--fixed-strings",
            "--",
            "foo bar",
            ".",
        ],
    ];
    for args in sets {
        compare(t.path(), &[], args);
    }
}

/// Files with NUL bytes: a file named (searched on past its NUL: every
/// match, the lines as rg splits them, `end` with its `binary_offset`),
/// one the walk found (stopped at the buffer with its NUL), --binary, -v,
/// context, -m, --no-mmap; and a stream on stdin.
/// Past a file's -m, after-context starts where rg's count of the file
/// ended: an empty line there still ends in its line break.
#[test]
fn after_context_past_a_cap_is_rgs() {
    let t = Tree::new();
    t.write("e.txt", "x\na 1.2\n\nb\nc 3.4\n\nlast 5.6");
    for args in [&["-m", "1", "-A", "2", "[0-9]\\.[0-9]"][..], &["-m", "2", "-A", "3", "[0-9]"], &["-A", "1", "[0-9]"]]
    {
        compare(t.path(), &[], args);
    }
}

#[test]
fn json_lines_of_binary_files_are_rgs() {
    let t = Tree::new();
    t.write("b.dat", b"hello\nworld\0bin\nhello again\n");
    t.write("n.dat", b"hello\n\0\nhello two\nhello three\n");
    // (The NUL past rg's first buffer: what comes before it stands.)
    let mut late = b"hello\n".to_vec();
    late.extend((0..8000).flat_map(|_| b"filler line of text\n".iter().copied()));
    late.extend_from_slice(b"x\0y\nhello again\n");
    t.write("w.txt", &late);
    t.write("plain.txt", "hello plain\n");
    let sets: &[&[&str]] = &[
        &["hello"],
        &["hello", "b.dat"],
        &["hello", "n.dat", "w.txt"],
        &["--binary", "hello"],
        &["-v", "hello", "b.dat"],
        &["-C", "1", "hello", "n.dat"],
        &["-m", "1", "hello", "n.dat"],
        &["--no-mmap", "hello", "n.dat", "w.txt"],
        &["--binary", "-v", "hello", "b.dat", "n.dat"],
        &["-a", "hello", "b.dat"],
    ];
    for args in sets {
        compare(t.path(), &[], args);
    }
    // (A stream read whole, --stop-on-nonmatch, in many reads: its NUL
    // where it is in all of it.)
    let mut big = "head\n".to_string();
    big.push_str(&"filler line of text\n".repeat(5000));
    big.push_str("x\0y\nplain hello\n");
    t.write("big.in", &big);
    let piped = |cmd: &mut std::process::Command, file: &str| {
        let input = std::fs::File::open(t.path().join(file)).unwrap();
        let out = cmd.current_dir(t.path()).stdin(input).output().unwrap();
        (messages(&out.stdout), out.status.code())
    };
    for (file, args) in [
        ("b.dat", &["--json", "hello"][..]),
        ("b.dat", &["--json", "-v", "hello"]),
        ("big.in", &["--json", "--stop-on-nonmatch", "hello"]),
    ] {
        let piped = |cmd: &mut std::process::Command| piped(cmd, file);
        let theirs = piped(crate::util::rg_command().args(args));
        let ours = piped(
            std::process::Command::new(env!("CARGO_BIN_EXE_sandgrep"))
                .env("SANDGREP_CACHE_DIR", crate::util::cache_dir())
                .args(args),
        );
        assert_eq!(ours, theirs, "stdin {args:?}");
    }
}

/// Files with more matching lines than a page are printed whole, each
/// line once, and counted once.
#[test]
fn json_lines_stream_every_page() {
    let t = tree();
    for args in [&["foo"][..], &["-C", "2", "[0-9]"], &["-A", "1", "foo", "big.txt", "src"]] {
        compare(t.path(), &["-j1"], args);
        compare(t.path(), &[], args);
    }
}

/// Real source (a copy of this project's own, redaction off: its tests
/// hold made-up secrets).
#[test]
fn json_lines_on_real_source() {
    let t = Tree::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for dir in ["guest/src/search", "host/src/cli", "wit"] {
        copy(&root.join(dir), &t.path().join(dir));
    }
    for args in [
        &["fn [a-z_]+\\("][..],
        &["-C", "2", "-w", "request"],
        // (Not ending with the line break: rg's submatch then holds it,
        // sandgrep's stops before it.)
        &["-i", "-U", "match \\w+ \\{\\n\\s+\\w+"],
        &["-F", "pub(crate)", "host", "guest"],
    ] {
        compare(t.path(), &["--no-redact"], args);
    }
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// --passthru (files without a match too, as context), --null-data and
/// --stop-on-nonmatch in rg's JSON Lines.
#[test]
fn passthru_null_data_and_stop_on_nonmatch_json_are_rgs() {
    let t = tree();
    t.write("records.dat", b"foo\0bar\0\0\0baz foo\0qux\0tail");
    t.write("broken.dat", b"foo\nbar\0baz\0foo x\ny\0x\n\0");
    for args in [
        &["--passthru", "qux"][..],
        &["--passthru", "nothing-is-here", "last.txt", "crlf.txt"],
        &["--passthru", "-m", "1", "foo", "src"],
        &["--null-data", "foo", "records.dat"],
        &["--null-data", "-C", "1", "baz", "records.dat"],
        // (A line break inside a record is no line's end.)
        &["--null-data", "foo", "broken.dat"],
        &["--null-data", "-C", "1", "x", "broken.dat"],
        &["--stop-on-nonmatch", "-A", "1", "foo"],
    ] {
        compare(t.path(), &[], args);
    }
}

/// -z: compressed files' text as rg's JSON gives it (begin, matches,
/// context, end with the decompressed bytes searched, summary).
#[test]
fn json_lines_of_compressed_files_are_rgs() {
    let t = tree();
    let text: String = (0..50).map(|i| format!("{i} {}\n", ["foo", "bar", "qux foo"][i % 3])).collect();
    for (tool, args, name) in
        [("gzip", &["-c", "-n"][..], "a.gz"), ("xz", &["-c"], "a.xz"), ("zstd", &["-q", "-c"], "a.zst")]
    {
        use std::io::Write;
        let Ok(mut child) = std::process::Command::new(tool)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
        else {
            eprintln!("{tool} is not installed: {name} is left out");
            continue;
        };
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        t.write(name, child.wait_with_output().unwrap().stdout);
    }
    for args in [&["-z", "foo"][..], &["--search-zip", "-C", "1", "qux"], &["-z", "--no-search-zip", "foo"]] {
        compare(t.path(), &[], args);
    }
    // A stream cut short is an error, as rg's search of it: the lines
    // before the break (not the one it cut), no `end`, nothing of it in the
    // summary — over several pages too; a stream with no whole line
    // prints nothing.
    let long: String = (0..30000).map(|i| format!("{i} foo\n")).collect();
    let gz = crate::util::gzip(long.as_bytes());
    t.write("broken/cut.gz", &gz[..gz.len() / 2]);
    t.write("broken/short.gz", &gz[..40]);
    for args in [&["-z", "foo", "broken", "a.gz"][..], &["-z", "-C", "1", "99 foo", "broken"], &["-z", "bar", "broken"]]
    {
        compare(t.path(), &[], args);
    }
}

/// -U: a match that takes a line's terminator, at the end of the lines a
/// message holds, has its span whole, with CRLF and --crlf too (rg's
/// r1095); --crlf with -U lets a pattern name `\n`.
#[test]
fn json_spans_take_the_line_terminator_as_rgs() {
    let t = Tree::new();
    t.write("crlf-empty.txt", "test\r\n\n");
    t.write("lines.txt", "test\nfoo\n");
    t.write("crlf.txt", "test\r\nfoo\r\n");
    for args in [
        &["-U", "\\n", "crlf-empty.txt"][..],
        &["-U", "--crlf", "\\n", "crlf-empty.txt"],
        &["-U", "test\\n", "lines.txt"],
        &["-U", "\\n", "lines.txt"],
        &["-U", "-C", "1", "test\\n", "lines.txt"],
        &["-U", "test\\r?\\n", "crlf.txt"],
        &["-U", "--crlf", "test\\r?\\n|foo", "crlf.txt"],
        &["-U", "x*", "lines.txt"],
    ] {
        compare(t.path(), &[], args);
    }
}
