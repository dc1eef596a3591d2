//! stdin searched as rg searches it (the real binary, real pipes): with no
//! PATH and a pipe on stdin, or `-` among the paths; byte for byte as rg
//! 15.2 (the oracle), piece by piece as the bytes arrive; and a reader of
//! stdout that goes away ends the run at once, with rg's exit status.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{cache_dir, rg_command, stderr, stdout, Tree};

/// sandgrep in `dir` with no --root (an explicit --root is never stdin).
fn sandgrep(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgrep"));
    cmd.env("SANDGREP_CACHE_DIR", cache_dir()).current_dir(dir);
    cmd
}

fn rg(dir: &Path) -> Command {
    let mut cmd = rg_command();
    cmd.current_dir(dir);
    cmd
}

/// Runs `cmd` with `pieces` written to its stdin one after another, `pause`
/// between them (so they reach it as separate reads), then stdin closed.
fn fed(mut cmd: Command, args: &[&str], pieces: &[&[u8]], pause: Duration) -> Output {
    let mut child = cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let pieces: Vec<Vec<u8>> = pieces.iter().map(|p| p.to_vec()).collect();
    let writer = std::thread::spawn(move || {
        for p in pieces {
            // (A search that answered early, -l or -q, stops reading.)
            if stdin.write_all(&p).and_then(|_| stdin.flush()).is_err() {
                return;
            }
            std::thread::sleep(pause);
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// rg's JSON Lines without their timings.
fn untimed(out: &[u8]) -> Vec<Value> {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, _| k != "elapsed" && k != "elapsed_total");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let text = String::from_utf8_lossy(out);
    text.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            strip(&mut v);
            v
        })
        .collect()
}

/// sandgrep and rg, fed the same pieces, print the same bytes and end alike.
fn same(dir: &Path, args: &[&str], pieces: &[&[u8]], pause: Duration) {
    let ours = fed(sandgrep(dir), args, pieces, pause);
    let theirs = fed(rg(dir), args, pieces, pause);
    let what = format!("{args:?} on {:?}", pieces.concat().escape_ascii().to_string());
    if args.contains(&"--json") {
        assert_eq!(untimed(&ours.stdout), untimed(&theirs.stdout), "{what}: {}", stderr(&ours));
    } else {
        assert_eq!(stdout(&ours), stdout(&theirs), "{what}: {}", stderr(&ours));
    }
    assert_eq!(ours.status.code(), theirs.status.code(), "{what}: {}", stderr(&ours));
}

#[test]
fn stdin_alone_prints_what_rg_prints() {
    let t = Tree::new();
    t.write("a.txt", "foo in a file\n");
    let text = b"hello foo\nbar\nfoo2 x\nbaz\nFOO\nlast foo";
    let flags: &[&[&str]] = &[
        &[],
        &["-n"],
        &["-H"],
        &["-H", "--heading", "-n"],
        &["-c"],
        &["-c", "-H"],
        &["--count-matches"],
        &["-n", "-m", "1", "-A", "2", "-i"],
        &["-c", "-m", "1", "-A", "4", "-i"],
        &["-l"],
        &["-q"],
        &["-v", "-n"],
        &["-o"],
        &["-i", "-n", "--column"],
        &["-w", "-n"],
        &["-m", "2", "-n"],
        &["-n", "-C", "1"],
        &["-r", "X", "-n"],
        &["--files-without-match"],
        &["-c", "--include-zero"],
        &["--json"],
        &["--json", "-C", "1"],
    ];
    for f in flags {
        let mut args = f.to_vec();
        args.push("foo");
        same(t.path(), &args, &[text], Duration::ZERO);
        // (And a pattern that finds nothing.)
        let mut none = f.to_vec();
        none.push("zzz");
        same(t.path(), &none, &[text], Duration::ZERO);
    }
    // `-` names stdin, among other paths too, in their order.
    t.write("b/c.txt", "foo in c\n");
    for args in
        [&["foo", "-"][..], &["-n", "foo", "a.txt", "-", "b"], &["-c", "foo", "-", "a.txt"], &["-l", "foo", "b", "-"]]
    {
        let ours = fed(sandgrep(t.path()), args, &[text], Duration::ZERO);
        let mut sorted = vec!["--sort", "path"];
        sorted.extend_from_slice(args);
        let theirs = fed(rg(t.path()), &sorted, &[text], Duration::ZERO);
        assert_eq!(stdout(&ours), stdout(&theirs), "{args:?}: {}", stderr(&ours));
        assert_eq!(ours.status.code(), theirs.status.code(), "{args:?}");
    }
}

#[test]
fn stats_of_counts_on_stdin_are_rgs() {
    // (Standard input is read once: the counting search that gives --stats
    // its figures for files cannot read it again.)
    let t = Tree::new();
    t.write("a.txt", "foo in a file\nfoo again\n");
    let untimed = |o: &Output| stdout(o).lines().filter(|l| !l.contains("seconds")).collect::<Vec<_>>().join("\n");
    let inputs: [&[u8]; 2] = [b"hello foo\nbar\nfoo foo\nbaz\n", b"foo\0bar foo\n"];
    let flags: &[&[&str]] = &[
        &["-c"],
        &["--count-matches"],
        &["-l"],
        &["--files-without-match"],
        &["-q"],
        &["-c", "-v"],
        &["-c", "--include-zero"],
    ];
    for input in inputs {
        for f in flags {
            for (pattern, paths) in [("foo", &[][..]), ("zzz", &[]), ("foo", &["-", "a.txt"])] {
                let mut args = vec!["--stats"];
                args.extend_from_slice(f);
                args.push(pattern);
                args.extend_from_slice(paths);
                let ours = fed(sandgrep(t.path()), &args, &[input], Duration::ZERO);
                let theirs = fed(rg(t.path()), &[&["--sort", "path"], &args[..]].concat(), &[input], Duration::ZERO);
                let what = format!("{args:?} on {:?}", input.escape_ascii().to_string());
                assert_eq!(untimed(&ours), untimed(&theirs), "{what}: {}", stderr(&ours));
                assert_eq!(ours.status.code(), theirs.status.code(), "{what}");
            }
        }
    }
}

#[test]
fn odd_bytes_on_stdin_are_read_as_rg_reads_them() {
    let t = Tree::new();
    let cases: &[&[u8]] = &[
        // Binary: rg prints nothing past a NUL, and says so.
        b"foo\nbar\0\nfoo2\n",
        b"xx\nbar\0\nzz\n",
        b"xx\nbar\0\nfoo\n",
        // Line ends, a last line without one, a byte order mark.
        b"foo\r\nbar\r\n",
        b"\xEF\xBB\xBFfoo\nfoo\n",
        b"no end foo",
        b"",
        b"\n\n\nfoo\n\n",
    ];
    for text in cases {
        for args in
            [&["-n", "foo"][..], &["-c", "foo"], &["-H", "foo"], &["-v", "-c", "foo"], &["-l", "foo"], &["-nA1", "foo"]]
        {
            same(t.path(), args, &[text], Duration::ZERO);
        }
    }
    // A NUL in a later piece, after a match: the match, then the note.
    same(t.path(), &["-n", "foo"], &[b"foo\n", b"x\0\nzz\n"], Duration::from_millis(150));
    same(t.path(), &["-n", "foo"], &[b"foo\n", b"x\0\nfoo\nfoo\n"], Duration::from_millis(150));
    same(t.path(), &["-nA1", "foo"], &[b"foo\n", b"x\0\nzz\n"], Duration::from_millis(150));
    // -a: NUL bytes are text; --crlf: lines end at \r\n.
    same(t.path(), &["-a", "-c", "^bar"], &[b"foo\0bar\nbar\n"], Duration::ZERO);
    same(t.path(), &["-n", "--crlf", "o$"], &[b"foo\r\nbar\r\nfoo\n"], Duration::ZERO);
    // Invalid UTF-8 is searched as bytes (and shown lossily, SPEC §2).
    let out = fed(sandgrep(t.path()), &["-n", "foo"], &[b"a\xffb foo\n"], Duration::ZERO);
    assert_eq!(stdout(&out), "1:a\u{fffd}b foo\n");
}

/// Lines 0..n with matches here and there, written in pieces that split
/// groups of context.
fn stream_text(n: usize) -> Vec<u8> {
    let words = ["foo", "bar", "baz", "foo bar", "x", "x", "x"];
    (0..n).map(|i| format!("{i} {}\n", words[(i * 5 + 3) % words.len()])).collect::<String>().into_bytes()
}

fn split_at_lines<'a>(text: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let starts: Vec<usize> =
        std::iter::once(0).chain(text.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| i + 1)).collect();
    let mut pieces = Vec::new();
    let mut from = 0;
    for &c in cuts {
        let to = starts[c];
        pieces.push(&text[from..to]);
        from = to;
    }
    pieces.push(&text[from..]);
    pieces
}

#[test]
fn context_across_pieces_is_rgs() {
    let t = Tree::new();
    let text = stream_text(70);
    // Cuts inside context groups, next to matches, one line apart; and
    // one piece ending mid-line.
    let mut pieces = split_at_lines(&text, &[3, 4, 9, 10, 11, 17, 30, 31, 44]);
    let last = pieces.pop().unwrap();
    let (a, b) = last.split_at(7);
    pieces.extend([a, b]);
    let pause = Duration::from_millis(60);
    for args in [
        &["-n", "foo"][..],
        &["-nA2", "foo"],
        &["-nB2", "foo"],
        &["-nC3", "foo"],
        &["-nA1", "-B4", "foo"],
        &["-v", "-nC1", "foo"],
        &["-c", "foo"],
        &["-n", "-m", "4", "-B1", "foo"],
        &["--json", "-C2", "foo"],
        &["-nC1", "--heading", "-H", "foo"],
    ] {
        same(t.path(), args, &pieces, pause);
    }
}

#[test]
fn a_secret_piped_in_is_redacted() {
    let t = Tree::new();
    let body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun";
    let key = "AKIAIOSFODNN7EXAMPLE";
    let head = "-----BEGIN RSA PRIVATE KEY-----\n";
    let rest = format!("{body}\n-----END RSA PRIVATE KEY-----\naws_access_key_id = {key}\nplain line\n");
    // The key block's first line comes in a piece of its own: the body is
    // still known to be inside it.
    let out = fed(
        sandgrep(t.path()),
        &["-n", "MII|aws|plain"],
        &[head.as_bytes(), rest.as_bytes()],
        Duration::from_millis(150),
    );
    let shown = stdout(&out);
    assert!(!shown.contains(body) && !shown.contains(key) && !shown.contains("MII"), "{shown}");
    assert_eq!(shown, "4:aws_access_key_id = [REDACTED]\n5:plain line\n");
    assert!(stderr(&out).contains("lines shown with secrets [REDACTED]"), "{}", stderr(&out));
    // As context too.
    let out = fed(
        sandgrep(t.path()),
        &["-n", "-B3", "plain"],
        &[head.as_bytes(), rest.as_bytes()],
        Duration::from_millis(150),
    );
    let shown = stdout(&out);
    assert!(!shown.contains(body) && !shown.contains(key), "{shown}");
    assert!(shown.contains("2-[REDACTED]"), "{shown}");
}

/// A child's stdout, read line by line on a thread.
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let mut out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        while let Ok(1) = out.read(&mut byte) {
            buf.push(byte[0]);
            if byte[0] == b'\n' {
                if tx.send(String::from_utf8_lossy(&buf).into_owned()).is_err() {
                    return;
                }
                buf.clear();
            }
        }
    });
    rx
}

/// Waits for `child` to end, at most `limit`.
fn ended(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    None
}

#[test]
fn a_line_is_printed_as_it_comes() {
    let t = Tree::new();
    let mut child =
        sandgrep(t.path()).args(["-n", "ERROR"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = lines_of(&mut child);
    stdin.write_all(b"ok\nERROR one\n").unwrap();
    // Printed while the writer still holds the pipe open.
    let first = lines.recv_timeout(Duration::from_secs(20)).expect("the first line before stdin closes");
    assert_eq!(first, "2:ERROR one\n");
    stdin.write_all(b"fine\nan ERROR two\n").unwrap();
    assert_eq!(lines.recv_timeout(Duration::from_secs(20)).unwrap(), "4:an ERROR two\n");
    drop(stdin);
    assert_eq!(ended(&mut child, Duration::from_secs(20)).expect("ends at stdin's end").code(), Some(0));
}

#[test]
fn root_given_or_no_pipe_is_the_directory() {
    let t = Tree::new();
    t.write("a.txt", "foo here\n");
    // An explicit --root with an open pipe that never closes (as agent
    // harnesses leave one): the directory.
    let mut child = Command::new(env!("CARGO_BIN_EXE_sandgrep"))
        .env("SANDGREP_CACHE_DIR", cache_dir())
        .args(["--root".as_ref(), t.path().as_os_str(), "foo".as_ref()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let _open = child.stdin.take().unwrap();
    let lines = lines_of(&mut child);
    assert_eq!(ended(&mut child, Duration::from_secs(30)).expect("no wait on stdin").code(), Some(0));
    assert_eq!(lines.recv_timeout(Duration::from_secs(5)).unwrap(), "a.txt:foo here\n");
    // stdin that is /dev/null (no pipe, no file): the directory, as rg.
    for args in [&["foo"][..], &["-n", "foo"]] {
        let ours = sandgrep(t.path()).args(args).stdin(std::fs::File::open("/dev/null").unwrap()).output().unwrap();
        let theirs = rg(t.path()).args(args).stdin(std::fs::File::open("/dev/null").unwrap()).output().unwrap();
        assert_eq!(stdout(&ours), stdout(&theirs), "{args:?}");
        assert_eq!(stdout(&ours), format!("a.txt:{}foo here\n", if args.len() > 1 { "1:" } else { "" }));
        assert_eq!(ours.status.code(), theirs.status.code());
    }
    // A file on stdin is stdin, as rg.
    t.write("in.txt", "foo from stdin\n");
    let ours =
        sandgrep(t.path()).arg("foo").stdin(std::fs::File::open(t.path().join("in.txt")).unwrap()).output().unwrap();
    assert_eq!(stdout(&ours), "foo from stdin\n");
}

/// A tree whose search prints far more than a pipe holds.
fn big_tree() -> Tree {
    let t = Tree::new();
    let text: String = (0..400).map(|i| format!("line {i} with an err in it\n")).collect();
    for d in 0..20 {
        for f in 0..50 {
            t.write(&format!("d{d:02}/f{f:02}.txt"), &text);
        }
    }
    t
}

/// A child's first line of output; then its stdout is closed, as `| head
/// -1` closes it.
fn first_line(child: &mut Child) -> String {
    let mut out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut line, mut byte) = (Vec::new(), [0u8; 1]);
        while let Ok(1) = out.read(&mut byte) {
            line.push(byte[0]);
            if byte[0] == b'\n' {
                break;
            }
        }
        let _ = tx.send((String::from_utf8_lossy(&line).into_owned(), out));
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok((line, out)) => {
            drop(out);
            line
        }
        Err(_) => {
            let _ = child.kill();
            panic!("no first line");
        }
    }
}

/// Runs `cmd` as `cmd | head -1`: its first line, and how it ended (it
/// must end, soon).
fn head_1(cmd: &mut Command, stdin: Stdio) -> (String, Option<i32>) {
    let mut child = cmd.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let first = first_line(&mut child);
    let status = ended(&mut child, Duration::from_secs(60)).expect("a closed pipe ends the run");
    (first, status.code())
}

#[test]
fn a_closed_pipe_ends_the_run_with_rgs_status() {
    let t = big_tree();
    // A tree: as rg, 0 (files that matched were over before the pipe closed).
    let ours = head_1(sandgrep(t.path()).args(["-n", "err"]), Stdio::null());
    let theirs = head_1(rg(t.path()).args(["-n", "err"]), Stdio::null());
    assert_eq!(ours.1, theirs.1, "{ours:?} {theirs:?}");
    assert_eq!(ours.1, Some(0));
    // A listing: 0, as `rg --files | head -1`.
    for args in [&["--files"][..], &["-l", "err"]] {
        let ours = head_1(sandgrep(t.path()).args(args), Stdio::null());
        let theirs = head_1(rg(t.path()).args(args), Stdio::null());
        assert_eq!((ours.1, theirs.1), (Some(0), Some(0)), "{args:?}");
    }
    // stdin that never ends: as `yes | rg y | head -1`, 1 (the search of
    // stdin was not over).
    let endless = || {
        let mut yes = Command::new("yes").arg("an err line").stdout(Stdio::piped()).spawn().unwrap();
        (Stdio::from(yes.stdout.take().unwrap()), yes)
    };
    let (input, mut yes_ours) = endless();
    let ours = head_1(sandgrep(t.path()).args(["err"]), input);
    let (input, mut yes_theirs) = endless();
    let theirs = head_1(rg(t.path()).args(["err"]), input);
    let _ = (yes_ours.kill(), yes_theirs.kill(), yes_ours.wait(), yes_theirs.wait());
    assert_eq!(ours, theirs);
    assert_eq!(ours.1, Some(1));
    // A pipe left open with nothing more to read: the run still ends.
    let mut child = sandgrep(t.path()).args(["err"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"one err\n").unwrap();
    assert_eq!(first_line(&mut child), "one err\n");
    assert_eq!(ended(&mut child, Duration::from_secs(20)).expect("ended while stdin is open").code(), Some(1));
    drop(stdin);
}

#[test]
fn a_line_past_the_bound_is_searched_in_part() {
    // 40 MiB without a line break, then lines: memory stays bounded, the
    // line's first 32 MiB are searched (and said), and the lines after it
    // are numbered as rg numbers them.
    let t = Tree::new();
    let long = vec![b'a'; 40 << 20];
    let out = fed(sandgrep(t.path()), &["-n", "foo"], &[&long, b"aaa\nfoo\n"], Duration::ZERO);
    assert_eq!(stdout(&out), "2:foo\n", "{}", stderr(&out));
    assert!(stderr(&out).contains("line 1 is longer than"), "{}", stderr(&out));
}

/// --passthru, --null-data and --stop-on-nonmatch on stdin, whole and in
/// pieces, as rg prints them.
#[test]
fn passthru_null_data_and_stop_on_nonmatch_on_stdin_are_rgs() {
    let t = Tree::new();
    let text: &[&[u8]] = &[b"a foo\nb\n", b"c foo\nd\n", b"foo e\nf"];
    let records: &[&[u8]] = &[b"foo\0bar\0", b"\0baz foo\0", b"qux\0tail"];
    for args in [
        &["--passthru", "-n", "foo"][..],
        &["--passthru", "zzz"],
        &["--passthru", "-m", "1", "-n", "foo"],
        &["--passthru", "-v", "-n", "foo"],
        &["--passthru", "--json", "foo"],
        &["--stop-on-nonmatch", "-n", "foo"],
        &["--stop-on-nonmatch", "-c", "[a-c]"],
    ] {
        same(t.path(), args, &[&text.concat()], Duration::ZERO);
        same(t.path(), args, text, Duration::from_millis(50));
    }
    for args in
        [&["--null-data", "-n", "foo"][..], &["--null-data", "-x", "bar"], &["--null-data", "--passthru", "qux"]]
    {
        same(t.path(), args, &[&records.concat()], Duration::ZERO);
        same(t.path(), args, records, Duration::from_millis(50));
    }
}

/// rg reads stdin into a buffer and looks for a NUL byte in each fill
/// before it searches it: the lines of earlier fills print, none of the
/// fill with the NUL (nor a line it finished), then "binary file matches".
/// stdin a file reads the same every time, for rg and sandgrep (the first
/// fill 8 KiB, Rust's stdin buffer; the next up to 64 KiB): a match in the
/// first fill, on a line across two fills, in the fill with the NUL, after
/// a line longer than the buffer; with context.
#[test]
fn binary_stdin_stops_where_rgs_buffers_do() {
    let t = Tree::new();
    // (Lines of 25 bytes.)
    let plain = |from: usize, to: usize| (from..to).map(|i| format!("line {i:05} of plain text\n")).collect::<String>();
    let nul = "x\0y\nfoo after the NUL\n";
    let cases: Vec<(&str, String)> = vec![
        // The match in the first fill, the NUL in the third (rg's own test).
        ("first", format!("foo first\n{}{nul}", plain(1, 3100))),
        // A match on a line the first fill ends in the middle of (8 KiB),
        // the NUL in the second.
        ("across", format!("{}a foo line across the fills\n{}{nul}", plain(0, 327), plain(328, 800))),
        // The same at the end of the second (8 KiB and 64 KiB less the
        // 17 bytes rolled over), the NUL in the third.
        ("across2", format!("foo\n{}foo across the second end\n{}{nul}", plain(1, 2948), plain(2949, 3100))),
        // Matches in both fills, the NUL in the second.
        ("both", format!("foo\n{}foo in the second fill\n{}{nul}", plain(1, 2700), plain(2701, 2800))),
        // A line longer than the buffer (it grows), then the NUL.
        ("long", format!("foo\n{}\nfoo after\n{}{nul}", "a".repeat(100_000), plain(0, 10))),
        // The NUL in the first fill.
        ("early", format!("foo\n{nul}{}", plain(0, 3000))),
    ];
    for (name, text) in &cases {
        let file = format!("{name}.in");
        t.write(&file, text);
        for args in [&["-n", "foo"][..], &["-c", "foo"], &["-nA1", "foo"], &["-nB2", "foo"], &["-l", "foo"]] {
            let input = || std::fs::File::open(t.path().join(&file)).unwrap();
            let ours = sandgrep(t.path()).args(args).stdin(input()).output().unwrap();
            let theirs = rg(t.path()).args(args).stdin(input()).output().unwrap();
            assert_eq!(stdout(&ours), stdout(&theirs), "{name} {args:?}: {}", stderr(&ours));
            assert_eq!(ours.status.code(), theirs.status.code(), "{name} {args:?}");
        }
    }
}
