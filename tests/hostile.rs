//! Hostile inputs, one named test per case, through every operation.
//! Expected: a clear error or a counted skip; never bytes from outside the
//! workspace, a secret, a panic or a hang.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{command, gzip, json, run, stderr, stdout, Tree};

/// A marker every "outside" file holds: it must never show up in any output.
const OUTSIDE: &str = "OUTSIDE-THE-WORKSPACE";

/// Runs the binary, killing it (and failing) if it takes longer than `limit`.
fn bounded(root: &Path, args: &[&str], limit: Duration) -> Output {
    run(root, &["search", "warm-up-the-cache"]);
    let mut child = command(root).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("sandgrep {args:?} hung for more than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!stderr(&out).contains("panicked"), "{args:?}: {}", stderr(&out));
    out
}

fn quick(root: &Path, args: &[&str]) -> Output {
    bounded(root, args, Duration::from_secs(60))
}

/// The output of an operation on `given` (a path the caller named, which an
/// error may echo) must not leak the marker or any other host path.
fn assert_no_leak(out: &Output, given: &str) {
    let what = given;
    let all = format!("{}{}", stdout(out), stderr(out)).replace(given, "GIVEN");
    assert!(!all.contains(OUTSIDE), "{what} leaked outside bytes: {all}");
    assert!(!all.contains("/tmp/"), "{what} leaked a host path: {all}");
}

/// A workspace inside a parent that also holds a sibling with a secret.
struct Setup {
    parent: Tree,
}

impl Setup {
    fn new() -> Setup {
        let parent = Tree::new();
        parent.write("ws/inside.txt", "hello inside\n");
        parent.write("ws_evil/secret.txt", format!("hello {OUTSIDE}\n"));
        parent.write("outside.txt", format!("hello {OUTSIDE}\n"));
        Setup { parent }
    }

    fn ws(&self) -> std::path::PathBuf {
        self.parent.path().join("ws")
    }
}

/// Every operation on a path the caller names: all must fail without leaking.
fn every_op_refuses(ws: &Path, path: &str, expect: &str) {
    for args in
        [vec!["read", path], vec!["ls", path], vec!["search", "hello", path], vec!["search", "-L", "hello", path]]
    {
        let out = quick(ws, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?} must fail: {}", stdout(&out));
        assert!(stderr(&out).contains(expect), "{args:?}: {}", stderr(&out));
        assert_no_leak(&out, path);
    }
}

#[test]
fn traversal_with_dot_dot() {
    let s = Setup::new();
    for p in [
        "..",
        "../outside.txt",
        "../ws_evil/secret.txt",
        "a/./b/../../..",
        "inside.txt/../../outside.txt",
        "./../ws/../outside.txt",
    ] {
        every_op_refuses(&s.ws(), p, "outside the workspace");
    }
}

#[test]
fn traversal_with_backslashes_and_mixed_separators() {
    let s = Setup::new();
    for p in ["..\\outside.txt", "a\\..\\..\\outside.txt", "..\\/outside.txt", "./..\\ws_evil/secret.txt"] {
        every_op_refuses(&s.ws(), p, "outside the workspace");
    }
}

#[test]
fn percent_encoded_traversal_is_just_a_name() {
    let s = Setup::new();
    every_op_refuses(&s.ws(), "%2e%2e/outside.txt", "not found");
}

#[test]
fn absolute_and_windows_paths() {
    let s = Setup::new();
    let abs = s.parent.path().join("outside.txt");
    for p in [
        abs.to_str().unwrap(),
        "/etc/passwd",
        "/",
        "C:\\Windows\\win.ini",
        "c:/x",
        "\\\\server\\share\\x",
        "\\etc\\passwd",
    ] {
        every_op_refuses(&s.ws(), p, "outside the workspace");
    }
}

#[test]
fn sibling_prefix_paths() {
    // CVE-2025-53110: `/allowed_evil` passing a prefix check for `/allowed`.
    let s = Setup::new();
    let sibling = format!("{}_evil/secret.txt", s.ws().display());
    every_op_refuses(&s.ws(), &sibling, "outside the workspace");
    every_op_refuses(&s.ws(), "../ws_evil/secret.txt", "outside the workspace");
    symlink("../ws_evil", s.ws().join("evil")).unwrap();
    for args in [vec!["read", "evil/secret.txt"], vec!["search", "-L", "hello"], vec!["ls", "evil"]] {
        let out = quick(&s.ws(), &args);
        assert_no_leak(&out, args[1]);
    }
}

#[test]
fn symlinks_leading_outside() {
    // CVE-2025-53109: a symlink escape hidden by a swallowed error.
    let s = Setup::new();
    let ws = s.ws();
    symlink("../outside.txt", ws.join("rel-file")).unwrap();
    symlink(s.parent.path().join("outside.txt"), ws.join("abs-file")).unwrap();
    symlink("..", ws.join("rel-dir")).unwrap();
    symlink(s.parent.path(), ws.join("abs-dir")).unwrap();
    symlink("/", ws.join("root")).unwrap();
    symlink("/proc/self/environ", ws.join("environ")).unwrap();
    for p in ["rel-file", "abs-file", "rel-dir/outside.txt", "abs-dir/outside.txt", "root/etc/passwd", "environ"] {
        every_op_refuses(&ws, p, "outside the workspace");
    }
    // Walking with -L finds the inside file only, and says what it skipped.
    let v = json(&ws, &["search", "--json-page", "-L", "--hidden", "hello"]);
    assert_eq!(v["matches"].as_array().unwrap().len(), 1, "{v}");
    assert!(v["stats"]["skipped"]["unreadable"].as_u64().unwrap() >= 6, "{}", v["stats"]);
    assert!(!v.to_string().contains(OUTSIDE));
    let out = quick(&ws, &["ls", "--hidden", "--dirs"]);
    assert_eq!(stdout(&out), "inside.txt\n", "links are not listed");
}

#[test]
fn symlinks_inside_work_and_loops_end() {
    let t = Tree::new();
    t.write("real/a.txt", "needle\n");
    symlink("real", t.path().join("link-dir")).unwrap();
    symlink("real/a.txt", t.path().join("link-file")).unwrap();
    symlink("link-file", t.path().join("chain")).unwrap();
    symlink("chain", t.path().join("chain2")).unwrap();
    symlink("loop-b", t.path().join("loop-a")).unwrap();
    symlink("loop-a", t.path().join("loop-b")).unwrap();
    symlink("self", t.path().join("self")).unwrap();
    symlink(".", t.path().join("real/dot")).unwrap();
    symlink("nowhere", t.path().join("dangling")).unwrap();
    let out = quick(t.path(), &["search", "--column", "-L", "needle"]);
    assert_eq!(
        stdout(&out),
        "chain:1:1:needle\nchain2:1:1:needle\nlink-dir/a.txt:1:1:needle\nlink-file:1:1:needle\nreal/a.txt:1:1:needle\n"
    );
    assert!(stderr(&out).contains("could not be read"), "{}", stderr(&out));
    assert_eq!(stdout(&quick(t.path(), &["read", "chain2"])), "needle\n");
    for p in ["loop-a", "self"] {
        let out = quick(t.path(), &["read", p]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("loop"), "{p}: {}", stderr(&out));
    }
    let out = quick(t.path(), &["read", "dangling"]);
    assert!(stderr(&out).contains("not found"), "{}", stderr(&out));
}

#[test]
fn fifos_and_sockets_do_not_hang() {
    let t = Tree::new();
    t.write("a.txt", "needle\n");
    let fifo = t.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let _sock = std::os::unix::net::UnixListener::bind(t.path().join("sock")).unwrap();
    let out = quick(t.path(), &["search", "--column", "needle"]);
    assert_eq!(stdout(&out), "a.txt:1:1:needle\n");
    // Named, it is refused by name (never waited on, never left out unsaid).
    let out = quick(t.path(), &["search", "-L", "needle", "pipe"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("pipe: not a regular file"), "{}", stderr(&out));
    for p in ["pipe", "sock"] {
        let out = quick(t.path(), &["read", p]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("not a regular file"), "{}", stderr(&out));
    }
    assert_eq!(stdout(&quick(t.path(), &["ls"])), "a.txt\n");
}

#[test]
fn huge_sparse_files() {
    let t = Tree::new();
    let f = std::fs::File::create(t.path().join("sparse.bin")).unwrap();
    f.set_len(20 << 30).unwrap();
    t.write("a.txt", "needle\n");
    let v = json(t.path(), &["search", "--json-page", "--max-filesize", "1G", "needle"]);
    assert_eq!(v["matches"].as_array().unwrap().len(), 1);
    assert_eq!(v["stats"]["skipped"]["too_large"], 1);
    let out = quick(t.path(), &["read", "sparse.bin", "--bytes", "10737418240:100"]);
    assert!(stderr(&out).contains("binary"), "{}", stderr(&out));
    let v = json(t.path(), &["ls", "--json", "--metadata", "sparse.bin"]);
    assert_eq!(v["entries"][0]["size"], 20u64 << 30);
}

#[test]
fn multi_megabyte_single_line() {
    let t = Tree::new();
    let mut line = "x".repeat(20 << 20);
    line.push_str("NEEDLE\n");
    t.write("one-line.js", &line);
    t.write("too-long.js", format!("{}NEEDLE\n", "y".repeat(40 << 20)));
    let v = json(t.path(), &["search", "--json-page", "--max-filesize", "100M", "NEEDLE"]);
    let m = &v["matches"][0];
    assert_eq!(m["path"], "one-line.js");
    assert!(m["text"].as_str().unwrap().len() < 600);
    assert_eq!(v["matches"].as_array().unwrap().len(), 1, "the 40 MiB line is skipped");
    assert_eq!(v["stats"]["skipped"]["too_large"], 1);
    assert!(v["warnings"].to_string().contains("too-long.js"), "{}", v["warnings"]);
    let v = json(t.path(), &["read", "one-line.js", "--json", "--lines", "1:1"]);
    assert_eq!(v["content"].as_str().unwrap().len(), 2 << 20);
    assert_eq!(v["next_offset"], 2u64 << 20);
    assert!(v["warnings"].to_string().contains("cut"), "{}", v["warnings"]);
}

#[test]
fn binary_after_64_kib() {
    let t = Tree::new();
    // A few matches, text past 64 KiB (the searcher's first buffer), a NUL.
    let mut b = "needle\n".repeat(10).into_bytes();
    b.extend("filler\n".repeat(20_000).into_bytes());
    b.push(0);
    t.write("late.bin", b);
    let v = json(t.path(), &["search", "--json-page", "needle"]);
    assert!(v["matches"].as_array().unwrap().is_empty(), "{}", v["matches"].as_array().unwrap().len());
    assert_eq!(v["stats"]["skipped"]["binary"], 1);
}

#[test]
fn invalid_utf8_and_utf16_in_every_operation() {
    let t = Tree::new();
    t.write("latin1.txt", b"caf\xe9 needle\n\xff\xfe\xfd\n".to_vec());
    let mut u16 = vec![0xFF, 0xFE];
    for u in "héllo needle\nline two\n".encode_utf16() {
        u16.extend_from_slice(&u.to_le_bytes());
    }
    t.write("utf16.txt", u16);
    let v = json(t.path(), &["search", "--json-page", "needle"]);
    let texts: Vec<&str> = v["matches"].as_array().unwrap().iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["caf\u{FFFD} needle", "héllo needle"]);
    let v = json(t.path(), &["read", "latin1.txt", "--json"]);
    assert_eq!(v["content"], "caf\u{FFFD} needle\n\u{FFFD}\u{FFFD}\u{FFFD}\n");
    let v = json(t.path(), &["read", "utf16.txt", "--json", "--lines", "2:1"]);
    assert_eq!(v["content"], "line two\n");
    assert!(v["warnings"].to_string().contains("UTF-16"));
    assert_eq!(stdout(&quick(t.path(), &["ls"])), "latin1.txt\nutf16.txt\n");
}

#[test]
fn names_that_are_not_utf8_are_left_out_and_said() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let t = Tree::new();
    t.write("a.txt", "needle\n");
    t.write("z.txt", "needle\n");
    std::fs::write(t.path().join(OsStr::from_bytes(b"m\xff.txt")), "needle\n").unwrap();
    std::fs::create_dir(t.path().join(OsStr::from_bytes(b"d\xfe"))).unwrap();
    std::fs::write(t.path().join(OsStr::from_bytes(b"d\xfe/inner.txt")), "needle\n").unwrap();
    // The names after them in the listing are still there.
    let v = json(t.path(), &["search", "--json-page", "needle"]);
    let paths: Vec<&str> = v["matches"].as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["a.txt", "z.txt"]);
    assert!(v["warnings"].to_string().contains("2 name(s) that are not UTF-8"), "{}", v["warnings"]);
    assert_eq!(stdout(&quick(t.path(), &["ls"])), "a.txt\nz.txt\n");
}

#[test]
fn deep_nesting_and_very_many_files() {
    let t = Tree::new();
    let deep: String = (0..400).map(|i| format!("d{}/", i % 10)).collect();
    t.write(&format!("{deep}bottom.txt"), "needle\n");
    for i in 0..20_000 {
        t.write(&format!("many/f{i:05}"), "");
    }
    let v = json(t.path(), &["search", "--json-page", "needle"]);
    assert_eq!(v["matches"][0]["path"], format!("{deep}bottom.txt"));
    let v = json(t.path(), &["ls", "--json", "many", "--max-results", "10000"]);
    assert_eq!((v["entries"].as_array().unwrap().len(), &v["total"]), (10_000, &Value::from(20_000)));
    let v = json(t.path(), &["read", &format!("{deep}bottom.txt"), "--json"]);
    assert_eq!(v["content"], "needle\n");
}

#[test]
fn nul_in_arguments() {
    // Command-line arguments cannot hold NUL; the library takes any string.
    let t = Tree::new();
    t.write("a.txt", "x\n");
    let sandbox = sandgrep::Sandbox::open(t.path(), sandgrep::Policy::default()).unwrap();
    let mut r = sandgrep::SearchTextRequest::new("x");
    r.paths = vec!["a\0.txt".into()];
    assert!(matches!(sandbox.search_text(&r), Err(sandgrep::Error::Search(sandgrep::SearchError::InvalidArgument(_)))));
    let mut r = sandgrep::SearchTextRequest::new("x\0y");
    r.include_globs = vec!["*\0".into()];
    r.cursor = Some("sg3.\0".into());
    assert!(sandbox.search_text(&r).is_err());
    let r = sandgrep::ReadFileRequest::new("a.txt\0/../../etc/passwd");
    assert!(matches!(sandbox.read_file(&r), Err(sandgrep::Error::Search(sandgrep::SearchError::InvalidArgument(_)))));
    let mut r = sandgrep::ListFilesRequest::new("\0");
    r.exclude_globs = vec!["\0\0".into()];
    assert!(sandbox.list_files(&r).is_err());
    // And the next call works.
    assert_eq!(sandbox.search_text(&sandgrep::SearchTextRequest::new("x")).unwrap().matches.len(), 1);
}

#[test]
fn glob_bombs() {
    let t = Tree::new();
    t.write("a/b/c.txt", "needle\n");
    let stars = vec!["**"; 200].join("/");
    let braces = format!("{}a{}", "{".repeat(100), "}".repeat(100));
    let alternation = format!("{{{}}}", (0..5000).map(|i| format!("x{i}")).collect::<Vec<_>>().join(","));
    for g in [stars.as_str(), braces.as_str(), alternation.as_str(), "[[[[[[[[[[", "**/*/**/*/**/*/**/*.txt"] {
        for cmd in [&["search", "needle", "-g", g][..], &["ls", "-g", g]] {
            let out = bounded(t.path(), cmd, Duration::from_secs(30));
            assert!(matches!(out.status.code(), Some(0..=2)), "{g}");
        }
    }
}

#[test]
fn regex_bombs_are_refused_by_size_limits() {
    let t = Tree::new();
    t.write("a.txt", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\n");
    let nested = format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000));
    let huge = "a".repeat(1 << 20);
    for (p, expect) in [
        ("a{1000}{1000}{1000}", "invalid pattern"),
        ("\\w{1000}{10}", "exceeds size limit"),
        ("\\w{500}\\w{500}\\w{500}", "invalid pattern"),
        (nested.as_str(), "invalid pattern"),
        ("[", "invalid pattern"),
    ] {
        let out = bounded(t.path(), &["search", p], Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(2), "{}", &p[..p.len().min(40)]);
        assert!(stderr(&out).contains(expect), "{}: {}", &p[..p.len().min(40)], stderr(&out));
    }
    // A megabyte pattern (too long for a command line: through the library).
    let sandbox = sandgrep::Sandbox::open(t.path(), sandgrep::Policy::default()).unwrap();
    let mut r = sandgrep::SearchTextRequest::new(huge);
    r.mode = Some(sandgrep::QueryMode::Regex);
    let err = sandbox.search_text(&r).unwrap_err().to_string();
    assert!(err.contains("at most 65536"), "{err}");
    // Catastrophic backtracking shapes are linear-time in Rust's regex.
    let out = bounded(t.path(), &["search", "(a*)*b"], Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1));
    let out = bounded(t.path(), &["search", "(a|aa)+$"], Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn numeric_overflow_and_negative_values() {
    let t = Tree::new();
    t.write("a.txt", "needle\n");
    for args in [
        &["search", "--max-results", "-5", "needle"][..],
        &["search", "--max-results", "99999999999999999999999", "needle"],
        &["search", "-C", "-1", "needle"],
        &["read", "a.txt", "--lines", "-1:5"],
        &["ls", "--skip", "-1"],
    ] {
        let out = quick(t.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    for args in [
        &["search", "--json-page", "--max-results", "18446744073709551615", "--skip", "18446744073709551615", "needle"]
            [..],
        &["read", "a.txt", "--json", "--lines", "18446744073709551615:18446744073709551615"],
        &["read", "a.txt", "--json", "--bytes", "18446744073709551615:18446744073709551615"],
        &["ls", "--json", "--max-results", "0", "--skip", "4294967296"],
    ] {
        let out = quick(t.path(), args);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: {}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v.get("warnings").is_some());
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// URL-safe base64, unpadded (a cursor's spelling).
fn base64(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn unbase64(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in s.as_bytes().chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, c)| n | (B64.iter().position(|b| b == c).unwrap() as u32) << (18 - 6 * i));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

/// A cursor for `path`, `line`, `taken` made as an attacker would: the
/// request's fingerprint copied from the real cursor `real`, and the
/// checksum (FNV-1a, public) computed.
fn forge(real: &str, line: u64, taken: u64, path: &str) -> String {
    let bytes = unbase64(real.strip_prefix("sg3.").unwrap());
    let mut forged = Vec::new();
    for mut v in [line.wrapping_add(1), taken] {
        while v >= 0x80 {
            forged.push(v as u8 | 0x80);
            v >>= 7;
        }
        forged.push(v as u8);
    }
    forged.extend_from_slice(path.as_bytes());
    forged.extend_from_slice(&bytes[bytes.len() - 8..bytes.len() - 4]);
    let check = forged.iter().fold(0x9e37_79b9_7f4a_7c15u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    forged.extend_from_slice(&(check as u32).to_le_bytes());
    format!("sg3.{}", base64(&forged))
}

#[test]
fn cursor_tampering() {
    let t = Tree::new();
    t.write("a.txt", "needle\n".repeat(5)).write("b.txt", "needle\n");
    let v = json(t.path(), &["search", "--json-page", "--max-results", "2", "needle"]);
    let c = v["next_cursor"].as_str().unwrap();
    let bytes = unbase64(c.strip_prefix("sg3.").unwrap());
    let mut flipped = bytes.clone();
    flipped[0] ^= 1;
    for bad in [
        "".to_string(),
        "sg3".into(),
        "sg3.".into(),
        format!("{c}x"),
        format!("{c}AAAA"),
        c.replace("sg3.", "sg1."),
        c.replace("sg3.", "sg2."),
        format!("sg3.{}", base64(&flipped)),
        format!("sg3.{}", base64(&bytes[..bytes.len() - 1])),
        format!("sg3.{}", base64(&bytes[8..])),
    ] {
        let out = quick(t.path(), &["search", "--json-page", "--max-results", "2", "--cursor", &bad, "needle"]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(stderr(&out).contains("cursor"), "{bad}: {}", stderr(&out));
    }
    // A well-formed cursor naming another path can only skip: it never opens it.
    for path in ["../../etc/passwd", "/etc/passwd", "zzz"] {
        let forged = forge(c, u64::MAX, 0, path);
        let out = quick(t.path(), &["search", "--json-page", "--max-results", "2", "--cursor", &forged, "needle"]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{path}");
        assert_no_leak(&out, path);
        assert!(!stdout(&out).contains("root:"));
    }
}

#[test]
fn denylisted_files_in_every_operation() {
    let t = Tree::new();
    for f in [
        ".env",
        ".ENV.local",
        "deploy/Server.PEM",
        "id_RSA",
        ".git/config",
        ".Ssh/config",
        ".aws/Credentials",
        "x/secrets.yml",
    ] {
        t.write(f, "hello secret\n");
    }
    t.write("ok.txt", "hello ok\n");
    symlink(".env", t.path().join("innocent.txt")).unwrap();
    symlink(".git", t.path().join("gitlink")).unwrap();
    let v = json(t.path(), &["search", "--json-page", "--hidden", "--no-ignore", "-L", "hello"]);
    let paths: Vec<&str> = v["matches"].as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["ok.txt"]);
    assert!(v["stats"]["skipped"]["denied"].as_u64().unwrap() >= 10, "{}", v["stats"]);
    let listed = stdout(&quick(t.path(), &["ls", "--hidden", "--no-ignore", "--dirs"]));
    assert!(!listed.to_lowercase().contains("env") && !listed.contains("PEM") && !listed.contains(".git/"), "{listed}");
    for p in [
        ".env",
        ".ENV.local",
        "deploy/server.pem",
        "deploy/Server.PEM",
        "id_RSA",
        ".git/config",
        ".Ssh/config",
        ".aws/Credentials",
        "innocent.txt",
        "gitlink/config",
    ] {
        for args in [vec!["read", p], vec!["search", "hello", p], vec!["ls", p]] {
            let out = quick(t.path(), &args);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            assert!(stderr(&out).contains("denied"), "{args:?}: {}", stderr(&out));
            assert!(!stdout(&out).contains("secret"));
        }
    }
}

#[test]
fn host_policy_extends_the_denylist_and_turns_redaction_off() {
    let t = Tree::new();
    t.write("a.txt", "hello AKIAIOSFODNN7EXAMPLE\n").write("private/b.txt", "hello\n").write("c.secret", "hello\n");
    let out = quick(t.path(), &["--deny", "private/", "--deny", "*.SECRET", "search", "--column", "hello"]);
    assert_eq!(stdout(&out), "a.txt:1:1:hello [REDACTED]\n");
    let out = quick(t.path(), &["--deny", "private/", "read", "private/b.txt"]);
    assert!(stderr(&out).contains("denied"));
    let out = quick(t.path(), &["--no-redact", "search", "hello", "a.txt"]);
    assert_eq!(stdout(&out), "hello AKIAIOSFODNN7EXAMPLE\n", "one file named: no name, as rg");
}

const KEY: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\nLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo\n-----END RSA PRIVATE KEY-----\n";

#[test]
fn secrets_in_every_kind_of_returned_text() {
    let t = Tree::new();
    let config = format!(
        "# settings\naws = AKIAIOSFODNN7EXAMPLE\ngithub_token = ghp_0123456789abcdefghijABCDEFGHIJ012345\nplain line\n{KEY}api_secret = \"q8Zr3xL0vT7mN2pW5kJ9aB\"\n"
    );
    t.write("config.txt", &config);
    t.write("long.txt", format!("{}needle AKIAIOSFODNN7EXAMPLE {}\n", "x".repeat(3000), "y".repeat(3000)));
    let secrets = ["AKIAIOSFODNN7EXAMPLE", "ghp_0123", "MIIEow", "VTLw7on", "LxoS2tF", "q8Zr3x"];
    let check = |what: &str, text: &str| {
        for s in secrets {
            assert!(!text.contains(s), "{what} shows {s}: {text}");
        }
    };
    // Match lines and context.
    let out = quick(t.path(), &["search", "-C", "3", "settings|plain|api_secret|needle"]);
    check("search text", &stdout(&out));
    assert!(stdout(&out).contains("[REDACTED]"));
    // A hit inside the key block's body: redaction is no oracle, so a line
    // matches only as it is shown, redacted (it is not a hit at all).
    let out = quick(t.path(), &["search", "-C", "1", "VTLw|rq0"]);
    check("hit in key body", &stdout(&out));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let v = json(t.path(), &["search", "--json-page", "-c", "VTLw|rq0|q8Zr3x|AKIAIOSF"]);
    assert!(v["files"].as_array().unwrap().is_empty(), "counts are an oracle too: {v}");
    // Multiline matches.
    let out = quick(t.path(), &["search", "-U", "BEGIN[\\s\\S]*?END"]);
    check("multiline", &stdout(&out));
    // JSON windows of long lines.
    let v = json(t.path(), &["search", "--json-page", "--max-columns", "50", "needle"]);
    check("window", &v.to_string());
    // Byte ranges whose edges cut a secret.
    for offset in 0..30 {
        for len in [4, 10, 16] {
            let v = json(t.path(), &["read", "config.txt", "--json", "--bytes", &format!("{}:{len}", 6 + offset)]);
            let c = v["content"].as_str().unwrap();
            for piece in ["AKIAIO", "SFODNN", "N7EXAM", "ghp_01", "012345", "q8Zr3x"] {
                assert!(!c.contains(piece), "bytes {}:{len} show {piece}: {c:?}", 6 + offset);
            }
        }
    }
    // Read, whole, by lines from inside the key, by bytes from inside it.
    for range in [vec![], vec!["--lines", "7:3"], vec!["--bytes", "200:100"], vec!["--lines", "1:200"]] {
        let mut args = vec!["read", "config.txt", "--json"];
        args.extend(range.iter());
        let v = json(t.path(), &args);
        check(&format!("read {range:?}"), v["content"].as_str().unwrap());
    }
}

/// The embedded component runs where it lies in the binary's code (no copy):
/// a trap in it is caught as in any other code, and the next call works.
#[test]
fn a_trap_in_the_embedded_component_is_an_error_and_the_next_call_works() {
    let t = Tree::new();
    t.write("a.txt", "needle\n");
    t.write("one-line.js", format!("{}needle\n", "x".repeat(20 << 20)));
    let policy = sandgrep::Policy { memory_limit: 32 << 20, ..sandgrep::Policy::default() };
    let sandbox = sandgrep::Sandbox::open(t.path(), policy).unwrap();
    let mut r = sandgrep::SearchTextRequest::new("needle");
    r.max_filesize = Some(100 << 20);
    let err = sandbox.search_text(&r).err().expect("a 20 MiB line under a 32 MiB cap");
    assert!(matches!(err, sandgrep::Error::OutOfMemory(_)), "{err}");
    r.paths = vec!["a.txt".into()];
    let page = sandbox.search_text(&r).unwrap();
    assert_eq!(page.matches.len(), 1);
}

#[test]
fn a_runaway_call_is_stopped_and_the_next_one_works() {
    let t = Tree::new();
    t.write("a.txt", "needle\n");
    let policy = sandgrep::Policy {
        memory_limit: 64 << 20,
        deadline_grace: Duration::from_millis(300),
        ..sandgrep::Policy::default()
    };
    let runaway =
        sandgrep::Sandbox::open_with_component(t.path(), policy.clone(), include_bytes!(env!("SANDGREP_RUNAWAY_WASM")))
            .unwrap();
    let real = sandgrep::Sandbox::open(t.path(), policy).unwrap();
    let call = |query: &str| {
        let mut r = sandgrep::SearchTextRequest::new(query);
        r.timeout_ms = Some(200);
        let start = Instant::now();
        let result = runaway.search_text(&r);
        (result, start.elapsed())
    };
    let (result, took) = call("spin");
    assert!(matches!(result, Err(sandgrep::Error::Deadline(_))), "{:?}", result.err());
    assert!(took < Duration::from_secs(5), "{took:?}");
    let (result, _) = call("alloc");
    let err = result.err().expect("allocation without end must fail");
    assert!(matches!(err, sandgrep::Error::OutOfMemory(_)), "{err}");
    assert!(err.to_string().contains("ran out of memory (cap 64 MiB)"), "{err}");
    // Rust keeps part of its stack in linear memory: running out of either
    // is a trap, reported as such.
    let (result, _) = call("recurse");
    assert!(matches!(result, Err(sandgrep::Error::Crashed(_))), "{:?}", result.err());
    // Nothing is left broken: the same runtime and the real one still work.
    assert!(call("ok").0.is_ok());
    assert_eq!(real.search_text(&sandgrep::SearchTextRequest::new("needle")).unwrap().matches.len(), 1);
}

// Round 2: a workspace written by an attacker while it is searched.

/// Runs `f` while `swap` runs over and over on another thread.
fn while_swapping(swap: impl Fn() + Send + 'static, f: impl FnOnce()) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let swapper = std::thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            swap();
        }
    });
    f();
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

#[test]
fn fifos_named_as_ignore_files_never_hold_a_call() {
    let t = Tree::new();
    t.write("a.txt", "needle\n").write("sub/b.txt", "needle\n").mkdir(".git");
    for f in [".gitignore", ".ignore", ".rgignore", "sub/.gitignore", "sub/.rgignore"] {
        mkfifo(&t.path().join(f));
    }
    let limit = Duration::from_secs(20);
    let out = bounded(t.path(), &["search", "--column", "needle"], limit);
    assert_eq!(stdout(&out), "a.txt:1:1:needle\nsub/b.txt:1:1:needle\n", "{}", stderr(&out));
    assert!(stderr(&out).contains("not a regular file"), "{}", stderr(&out));
    let out = bounded(t.path(), &["ls"], limit);
    assert_eq!(stdout(&out), "a.txt\nsub/b.txt\n");
    let out = bounded(t.path(), &["ast", "needle", "--lang", "rust"], limit);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // A link to a FIFO, followed, is not opened either.
    symlink(".rgignore", t.path().join("sub/.ignore")).unwrap();
    let out = bounded(t.path(), &["search", "-L", "needle"], limit);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_fifo_swapped_in_before_the_open_cannot_hold_a_call() {
    // The walk sees a regular file; by the time it opens it, it may be a
    // FIFO, whose open would wait for a writer that never comes. The host
    // opens without waiting and refuses anything but files and directories:
    // no call waits at all (an index refresh, whose deadline is long,
    // included), and a read of the FIFO says what it found.
    let t = Tree::new();
    for i in 0..20 {
        t.write(&format!("f{i:02}.txt"), "needle\n");
    }
    let target = t.path().join("f10.txt");
    let (plain, fifo) = (t.path().join("plain.tmp"), t.path().join("fifo.tmp"));
    t.write("plain.tmp", "needle\n");
    mkfifo(&fifo);
    let swap = move || {
        let _ = std::fs::rename(&plain, &target);
        let _ = std::fs::rename(&target, &plain);
        let _ = std::fs::rename(&fifo, &target);
        let _ = std::fs::rename(&target, &fifo);
    };
    let (mut slowest, mut refused) = ((Duration::ZERO, String::new()), 0);
    while_swapping(swap, || {
        // At least 6 s, and on until some call met the FIFO (a race: on a
        // busy machine it can take longer to lose one).
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(6)
            || (refused == 0 && started.elapsed() < Duration::from_secs(60))
        {
            for args in [&["search", "-g", "*.txt", "needle"][..], &["read", "f10.txt"], &["index"]] {
                let t0 = Instant::now();
                let out = bounded(t.path(), args, Duration::from_secs(30));
                assert!(out.status.code().is_some(), "{args:?} was killed");
                // (The host's refusal, met after the guest looked.)
                refused += stderr(&out).contains("f10.txt: not a regular file") as usize;
                if t0.elapsed() > slowest.0 {
                    slowest = (t0.elapsed(), format!("{args:?}: {}", stderr(&out)));
                }
            }
        }
    });
    // An open that waited would take the host's bound on one (5 s).
    assert!(slowest.0 < Duration::from_secs(4), "a call took {slowest:?}");
    assert!(refused > 0, "no call opened the FIFO");
}

#[test]
fn a_walk_through_links_with_no_files_ends_at_its_timeout() {
    // 12 levels of 8 links each: 8^12 paths to walk under -L, no file.
    let t = Tree::new();
    for level in 0..12 {
        t.mkdir(&format!("d{level}"));
        for l in 0..8 {
            symlink(format!("../d{}", level + 1), t.path().join(format!("d{level}/l{l}"))).unwrap();
        }
    }
    t.mkdir("d12");
    for op in [&["search", "-L", "--json-page", "--timeout", "1000", "needle"][..]] {
        let started = Instant::now();
        let out = bounded(t.path(), op, Duration::from_secs(30));
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{op:?}: {e}: {}", stderr(&out)));
        assert!(started.elapsed() < Duration::from_secs(15), "{op:?} took {:?}", started.elapsed());
        let cursor = v["next_cursor"].as_str().unwrap_or_else(|| panic!("{op:?}: no cursor: {v}"));
        assert!(v["timed_out"] == true || v["has_more"] == true, "{op:?}: {v}");
        // The cursor goes on from where the walk stopped.
        let mut next: Vec<&str> = op.to_vec();
        next.extend(["--cursor", cursor]);
        let out = bounded(t.path(), &next, Duration::from_secs(30));
        assert!(matches!(out.status.code(), Some(0..=2)), "{}", stderr(&out));
    }
}

#[test]
fn an_ignore_file_linked_to_a_denied_file_is_denied() {
    let t = Tree::new();
    t.mkdir(".git").write("a.txt", "needle\n");
    // Lines that are not valid globs: a warning must not quote them.
    t.write(".env", "TOKEN=SECRET-SHOULD-NOT-LEAK{[\nOTHER=ALSO-SECRET[\n");
    t.write("sub/b.txt", "needle\n");
    symlink("../.env", t.path().join("sub/.rgignore")).unwrap();
    t.write("plain/.gitignore", "QUOTED-LINE-SHOULD-NOT-SHOW{[\n").write("plain/c.txt", "needle\n");
    for args in [
        &["search", "--json-page", "needle"][..],
        &["search", "-L", "--json-page", "needle"][..],
        &["ls", "--json"][..],
        &["ast", "--json-page", "needle", "--lang", "rust"][..],
    ] {
        let out = quick(t.path(), args);
        let all = format!("{}{}", stdout(&out), stderr(&out));
        for secret in ["SECRET-SHOULD-NOT-LEAK", "ALSO-SECRET", "QUOTED-LINE-SHOULD-NOT-SHOW"] {
            assert!(!all.contains(secret), "{args:?} quoted {secret}: {all}");
        }
    }
    let v = json(t.path(), &["search", "--json-page", "needle"]);
    assert_eq!(v["matches"].as_array().unwrap().len(), 3, "{v}");
    assert!(v["stats"]["skipped"]["denied"].as_u64().unwrap() >= 1, "{v}");
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("plain/.gitignore: line 1 is not a valid glob"), "{warnings}");
}

#[test]
fn deny_checks_cannot_be_raced_by_swapping_links() {
    // `d` is now a directory, now a link to `.git`; `e` now a file, now a
    // link to `.env`. No call may return what the links lead to.
    let t = Tree::new();
    t.write(".git/config", "[remote] url = https://GITSECRET@example.com\n");
    t.write(".env", "ENVSECRET=1\n");
    t.write("d.real/config", "harmless\n").write("e.real", "harmless\n");
    let root = t.path().to_path_buf();
    let swap = move || {
        let (d, e) = (root.join("d"), root.join("e"));
        let _ = std::fs::rename(root.join("d.real"), &d);
        let _ = std::fs::rename(root.join("e.real"), &e);
        let _ = std::fs::rename(&d, root.join("d.real"));
        let _ = std::fs::rename(&e, root.join("e.real"));
        let _ = symlink(".git", &d);
        let _ = symlink(".env", &e);
        std::thread::yield_now();
        let _ = std::fs::remove_file(&d);
        let _ = std::fs::remove_file(&e);
    };
    let mut calls = 0;
    while_swapping(swap, || {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(6) {
            for args in [
                &["read", "d/config"][..],
                &["read", "e"][..],
                &["search", "--hidden", "SECRET"][..],
                &["search", "-L", "--hidden", "SECRET"][..],
                &["search", "-L", "SECRET", "d", "e"][..],
                &["ls", "--hidden"][..],
            ] {
                let out = quick(t.path(), args);
                let all = format!("{}{}", stdout(&out), stderr(&out));
                assert!(!all.contains("GITSECRET") && !all.contains("ENVSECRET"), "{args:?} leaked: {all}");
                assert!(!all.contains("d/config\n") || !args.contains(&"-L"), "{args:?}: {all}");
                calls += 1;
            }
        }
    });
    assert!(calls > 30, "only {calls} calls ran");
}

#[test]
fn a_trailing_slash_after_a_file_is_not_a_directory() {
    let t = Tree::new();
    t.write("src/main.rs", "fn main() {}\n");
    symlink("main.rs", t.path().join("src/link")).unwrap();
    for path in ["src/main.rs/", "src/main.rs/.", "src/link/"] {
        for args in [vec!["read", path], vec!["ls", path], vec!["search", "main", path]] {
            let out = quick(t.path(), &args);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
            assert!(stderr(&out).contains("not a directory"), "{args:?}: {}", stderr(&out));
        }
    }
    assert_eq!(stdout(&quick(t.path(), &["read", "src/main.rs"])), "fn main() {}\n");
    assert_eq!(stdout(&quick(t.path(), &["ls", "src/"])), "src/main.rs\n");
}

#[test]
fn editor_copies_of_denied_files_and_bare_repositories_are_denied() {
    let t = Tree::new();
    for f in [".env~", "#.env#", ".env.swp", "id_rsa.bak", "conf/secrets.yml.orig"] {
        t.write(f, "needle SECRETCOPY\n");
    }
    t.write("mirror.git/HEAD", "ref: refs/heads/main\n");
    t.write("mirror.git/config", "[remote] url = https://needle:BARESECRET@example.com\n");
    t.mkdir("mirror.git/objects").mkdir("mirror.git/refs");
    t.write("ok.txt", "needle\n");
    let v = json(t.path(), &["search", "--hidden", "--json-page", "needle"]);
    assert_eq!(v["matches"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["matches"][0]["path"], "ok.txt");
    assert_eq!(v["stats"]["skipped"]["denied"], 6, "{v}");
    assert_eq!(stdout(&quick(t.path(), &["ls", "--hidden"])), "ok.txt\n");
    for path in [".env~", "#.env#", "mirror.git/config", "mirror.git/HEAD"] {
        let out = quick(t.path(), &["read", path]);
        assert_eq!(out.status.code(), Some(2), "{path}: {}", stdout(&out));
        assert!(stderr(&out).contains("denied"), "{path}: {}", stderr(&out));
    }
}

#[test]
fn a_hand_edited_cursor_cannot_wrap_counts() {
    let t = Tree::new();
    for i in 0..5 {
        t.write(&format!("f{i}.txt"), "x\n");
    }
    let v = json(t.path(), &["ls", "--json", "--max-results", "2"]);
    let c = v["next_cursor"].as_str().unwrap();
    let forged = forge(c, u64::MAX, u64::MAX, "f1.txt");
    let out = quick(t.path(), &["ls", "--json", "--max-results", "2", "--cursor", &forged]);
    assert!(matches!(out.status.code(), Some(0 | 1 | 2)), "{}", stderr(&out));
    if out.status.code() != Some(2) {
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert!(v["total"].is_null() || v["total"].as_u64().unwrap() >= 5, "{v}");
    }
}

#[test]
fn one_answer_stays_under_16_mib_whatever_the_bytes() {
    // Control bytes cost six bytes each in JSON; one multiline match over
    // them, or many matches, must still make an answer under 16 MiB.
    let t = Tree::new();
    let line = "\u{1}".repeat(9_000);
    t.write("ctl.txt", format!("START\n{}END\n", format!("{line}\n").repeat(600)));
    let name = "\u{1}".repeat(200);
    for i in 0..40 {
        t.write(&format!("{name}{i:02}.txt"), format!("{}\n", format!("x{line}\n").repeat(120)));
    }
    for args in [
        &["search", "--json-page", "-U", "--max-columns", "10000", "--max-filesize", "100M", "(?s)START.*END"][..],
        &["search", "--json-page", "-m", "1000", "--max-results", "5000", "--max-columns", "10000", "-C", "10", "x"][..],
        &["search", "--json-page", "-l", "--max-results", "5000", "x"][..],
        &["ls", "--json", "--max-results", "10000"][..],
    ] {
        // Not `bounded`: its pipe would fill with megabytes unread.
        let out = run(t.path(), args);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: {}", stderr(&out));
        let size = out.stdout.len();
        assert!(size < 16 << 20, "{args:?}: {size} bytes");
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        if size > 4 << 20 {
            assert!(v["truncated"] == true || v["has_more"] == true, "{args:?}: cut without a flag");
        }
    }
}

#[test]
fn a_replacement_cannot_build_past_the_answer() {
    // 10,000 matches, each replaced by 60,000 bytes: 600 MB if built whole,
    // past the instance's memory; the answer is cut at its size instead.
    let t = Tree::new();
    t.write("long.txt", format!("{}\n", "a".repeat(10_000)));
    let replacement = "Z".repeat(60_000);
    for args in [&["search", "--json-page", "-r", &replacement, "a"][..], &["search", "-c", "-r", &replacement, "a"]] {
        let out = run(t.path(), args);
        assert!(matches!(out.status.code(), Some(0 | 2)), "{}", stderr(&out));
        assert!(!stderr(&out).contains("memory"), "{}", stderr(&out));
        assert!(out.stdout.len() < 20 << 20, "{} bytes", out.stdout.len());
    }
    let out = run(t.path(), &["search", "-r", &replacement, "a"]);
    assert!(!stderr(&out).contains("memory"), "{}", stderr(&out));
    assert!(out.stdout.len() > 1 << 20, "{} bytes", out.stdout.len());
}

/// Runs `args` and requires an answer (not a host kill) within `limit`.
fn answered_within(root: &Path, args: &[&str], limit: Duration) -> Output {
    let started = Instant::now();
    let out = bounded(root, args, limit + Duration::from_secs(20));
    assert!(started.elapsed() < limit, "{args:?} took {:?}: {}", started.elapsed(), stderr(&out));
    assert!(!stderr(&out).contains("host deadline"), "{args:?}: {}", stderr(&out));
    out
}

#[test]
fn ignore_files_linked_into_long_link_chains_cost_bounded_time() {
    let t = Tree::new();
    let deep = "x/".repeat(1000);
    t.mkdir(&deep);
    symlink(format!("{deep}B"), t.path().join("A")).unwrap();
    symlink(format!("{}A", "../".repeat(1000)), t.path().join(format!("{deep}B"))).unwrap();
    for d in 0..30 {
        t.write(&format!("d{d}/hello.txt"), "hello\n");
        for f in [".gitignore", ".ignore", ".rgignore"] {
            symlink("../A", t.path().join(format!("d{d}/{f}"))).unwrap();
        }
    }
    // Time enough for a loaded machine (each ignore file's chain is cut at
    // a bounded number of steps; a quiet one takes about a second).
    let out = answered_within(t.path(), &["search", "--timeout", "10000", "hello"], Duration::from_secs(20));
    assert_eq!(stdout(&out).lines().count(), 30, "{}", stderr(&out));
    answered_within(t.path(), &["ls"], Duration::from_secs(12));
    let out = answered_within(t.path(), &["read", "A"], Duration::from_secs(6));
    assert!(stderr(&out).contains("A:"), "{}", stderr(&out));
}

#[test]
fn a_deep_named_path_costs_bounded_time() {
    let t = Tree::new();
    let deep = "x/".repeat(1000);
    t.write(&format!("{deep}hello.txt"), "hello\n");
    let out = answered_within(t.path(), &["search", "--timeout", "2000", "-c", "hello", &deep], Duration::from_secs(6));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn one_big_file_cannot_hold_a_call_past_its_timeout() {
    let t = Tree::new();
    t.write("x.txt", "x TODO\n".repeat(1_500_000));
    for args in [
        &["search", "-c", "--timeout", "1000", "TODO"][..],
        &["search", "--json-page", "--timeout", "1000", "-m", "1000", "--max-results", "5000", "TODO"][..],
        &["search", "-c", "x"][..],
    ] {
        let out = answered_within(t.path(), args, Duration::from_secs(15));
        assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn redaction_is_no_oracle_for_any_pattern() {
    // A right and a wrong guess at each secret must give the same answer,
    // whatever the pattern does around the mark: alternations with the
    // mark's own text, word-boundary assertions next to it, -U, -c, -l.
    let t = Tree::new();
    t.write("a.py", "aws = \"AKIAQZZZ5555ZZZZ5555\"\npassword = \"Xq9!vR2#pL7$wM4&\"\nok = 1\n");
    t.write("b.go", "package main\n\nvar password = \"Xq9!vR2#pL7$wM4&\"\n");
    t.write("k.txt", KEY);
    let probes = [
        ("REDACTED|AKIAQ", "REDACTED|AKIAB"),
        ("\\[REDACTED\\]|AKIAQ", "\\[REDACTED\\]|AKIAB"),
        ("password = \"(\\[REDACTED\\]|Xq9)", "password = \"(\\[REDACTED\\]|Aa0)"),
        ("aws = \"\\B|AKIAQ", "aws = \"\\B|AKIAB"),
        ("aws = \"\\b", "aws = \"\\B"),
        ("REDACTED|Xq9", "REDACTED|Yq9"),
        // With -U, a guess alternated with a neighbour line's text, so that
        // a right one would join the secret's line to the neighbour's block.
        ("(?:password = \"Xq9|ok = )[^\\n]*\\n", "(?:password = \"Yq9|ok = )[^\\n]*\\n"),
        ("(?:BEGIN|^MIIEow)[^\\n]*\\n", "(?:BEGIN|^MIIEox)[^\\n]*\\n"),
    ];
    for (right, wrong) in probes {
        for mode in [&["-c"][..], &["-l"][..], &[][..], &["-U"][..], &["--json-page"][..]] {
            let answer = |pattern: &str| {
                let mut args = vec!["search"];
                args.extend_from_slice(mode);
                args.push(pattern);
                let out = quick(t.path(), &args);
                let text = stdout(&out).replace(pattern, "PATTERN");
                // Time taken is not part of the answer.
                let text = match text.find("\"elapsed_ms\":") {
                    Some(i) => text[..i].to_string() + text[i..].split_once(',').map_or("", |x| x.1),
                    None => text,
                };
                (out.status.code(), text)
            };
            assert_eq!(answer(right), answer(wrong), "{mode:?}: {right} vs {wrong}");
        }
    }
    // Structural search matches the redacted text: a whole guess finds nothing.
    for (right, wrong) in [("\"Xq9!vR2#pL7$wM4&\"", "\"Yq9!vR2#pL7$wM4&\"")] {
        let a = quick(t.path(), &["ast", right, "--lang", "go"]);
        let b = quick(t.path(), &["ast", wrong, "--lang", "go"]);
        assert_eq!((a.status.code(), stdout(&a)), (b.status.code(), stdout(&b)));
    }
    // What the redacted text shows is still found, at the file's columns.
    let v = json(t.path(), &["ast", "--json-page", "var password = $V", "--lang", "go"]);
    assert_eq!(v["matches"][0]["meta_variables"][0]["text"], "\"[REDACTED]\"", "{v}");
    assert_eq!((v["matches"][0]["line"].as_u64(), v["matches"][0]["end_column"].as_u64()), (Some(3), Some(34)), "{v}");
}

#[test]
fn redaction_is_no_oracle_for_pcre2_look_around() {
    // PCRE2 (-P) looks around its match as far as it likes: a look-ahead
    // or look-behind at a secret beside a visible match, or a
    // backreference to it, must not tell a right guess from a wrong one —
    // in any output, line by line or -U, and through stdin.
    let t = Tree::new();
    t.write("a.py", "aws = \"AKIAQZZZ5555ZZZZ5555\"\npassword = \"Xq9!vR2#pL7$wM4&\"\nok = 1\n");
    t.write("k.txt", KEY);
    let probes = [
        ("aws(?= = \"AKIAQ)", "aws(?= = \"AKIAB)"),
        ("aws(?= = \"AKIAQ)|aws(?= = \"\\[RED)", "aws(?= = \"AKIAB)|aws(?= = \"\\[RED)"),
        ("a(?=ws = \"AKIAQZ)|ok", "a(?=ws = \"AKIABZ)|ok"),
        ("(?<=AKIAQZZZ)5555|ok", "(?<=AKIABZZZ)5555|ok"),
        ("password(?=.*Xq9)", "password(?=.*Yq9)"),
        ("(?<=Xq9.{13})\"$", "(?<=Yq9.{13})\"$"),
        ("\"(?!Xq9)", "\"(?!Yq9)"),
        ("(?s)ok(?<=Xq9.{0,40})", "(?s)ok(?<=Yq9.{0,40})"),
        ("(?:BEGIN|^)(?=[^\\n]*\\n?MIIEow)", "(?:BEGIN|^)(?=[^\\n]*\\n?MIIEox)"),
        ("(\"A)KIAQ[^\"]*\"|\\1", "(\"A)KIAB[^\"]*\"|\\1"),
    ];
    for (right, wrong) in probes {
        for mode in [&["-c"][..], &["-l"][..], &["-n"][..], &["-o"][..], &["-U", "-n"][..], &["--json-page"][..]] {
            let answer = |pattern: &str| {
                let mut args = vec!["search", "-P"];
                args.extend_from_slice(mode);
                args.push(pattern);
                let out = quick(t.path(), &args);
                let text = stdout(&out).replace(pattern, "PATTERN");
                // Time taken is not part of the answer.
                let text = match text.find("\"elapsed_ms\":") {
                    Some(i) => text[..i].to_string() + text[i..].split_once(',').map_or("", |x| x.1),
                    None => text,
                };
                assert!(!text.contains("AKIAQZZZ") && !text.contains("Xq9!") && !text.contains("MIIEow"), "{text}");
                (out.status.code(), text)
            };
            assert_eq!(answer(right), answer(wrong), "{mode:?}: {right} vs {wrong}");
        }
        // The same text on stdin (search-bytes).
        let piped = |pattern: &str| {
            let mut child = crate::util::command(t.path())
                .args(["search", "-P", "-n", pattern, "-"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            child.stdin.take().unwrap().write_all(std::fs::read(t.path().join("a.py")).unwrap().as_slice()).unwrap();
            let out = child.wait_with_output().unwrap();
            (out.status.code(), stdout(&out))
        };
        assert_eq!(piped(right), piped(wrong), "stdin: {right} vs {wrong}");
    }
}

#[test]
fn redaction_is_the_same_in_every_operation() {
    // The cases the issue found shown by one operation and hidden by another.
    let t = Tree::new();
    let body = [
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
        "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
        "NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ",
    ];
    let mut js = String::from("const KEY = \"-----BEGIN PRIVATE KEY-----\\n\" +\n");
    for line in body {
        js.push_str(&format!("  \"{line}\\n\" +\n"));
    }
    js.push_str("  \"Ab3dQx==\\n\" +\n  \"-----END PRIVATE KEY-----\\n\";\nconst needle = 1;\n");
    t.write("key.js", &js);
    let mut pem = String::from("-----BEGIN PRIVATE KEY-----\n");
    for line in body {
        pem.push_str(line);
        pem.push('\n');
    }
    pem.push_str("Zk9Q==\n-----END PRIVATE KEY-----\nneedle\n");
    t.write("key.txt", &pem);
    t.write("conf.yaml", "db:\n  password:\n    Zq8!rT3#vL0@xN7$\n  needle: 1\n");
    t.write("p.ini", "needle\npassword = \"p?a,s;s(w)o<r>d[1]{2}Xy9!\"\n");
    let long = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM".repeat(150);
    t.write("kube.yaml", format!("users:\n- user:\n    client-key-data: {long}\nneedle: 1\n"));
    let secrets = ["MIIEvQ", "MzEfYy", "NMoSfm", "Ab3dQx", "Zk9Q==", "Zq8!rT3", "p?a,s;s", "Xy9!", "LS0tLS1CRUdJTi"];
    let check = |what: &str, text: &str| {
        for s in secrets {
            assert!(!text.contains(s), "{what} shows {s}: {text}");
        }
    };
    // Search: every line as context of a hit nearby.
    let out = quick(t.path(), &["search", "-C", "10", "needle"]);
    check("search context", &stdout(&out));
    assert!(stdout(&out).contains("[REDACTED]"), "{}", stdout(&out));
    // Read: whole, by lines one at a time, and byte ranges deep inside values.
    for file in ["key.js", "key.txt", "conf.yaml", "p.ini", "kube.yaml"] {
        check(file, &stdout(&quick(t.path(), &["read", file])));
        for line in 1..12 {
            let l = format!("{line}:1");
            check(&format!("{file} line {line}"), &stdout(&quick(t.path(), &["read", file, "--lines", &l])));
        }
    }
    for offset in [40, 500, 3000, 5000] {
        let b = format!("{offset}:64");
        check(&format!("kube bytes {b}"), &stdout(&quick(t.path(), &["read", "kube.yaml", "--bytes", &b])));
    }
    // Structural search over the string-literal key.
    check("ast", &stdout(&quick(t.path(), &["ast", "const KEY = $V", "--lang", "js"])));
}

#[test]
fn a_deep_tree_needs_no_more_descriptors_than_a_shallow_one() {
    // A walk keeps only its innermost directories open (and so does what
    // opens them again to read their files): 300 levels are searched whole
    // within the least number of open files sandgrep asks for, at every job
    // count; below it, sandgrep refuses to start, never a partial answer.
    let t = Tree::new();
    let mut want = Vec::new();
    let (mut deep, mut named) = (String::from("top"), String::new());
    for level in 0..300 {
        deep.push_str(&format!("/d{}", level % 7));
        if level % 10 == 0 {
            t.write(&format!("{deep}/f.txt"), "needle\n");
            want.push(format!("{deep}/f.txt:1"));
        }
        if level == 100 {
            // An ignore file that is a link is resolved from the root.
            t.write(&format!("{deep}/rules"), "*.log\n");
            symlink("rules", t.path().join(&deep).join(".ignore")).unwrap();
            named = deep.clone();
        }
    }
    t.write("z.txt", "needle\n");
    want.push("z.txt:1".into());
    want.sort();
    run(t.path(), &["search", "warm-up-the-cache"]);
    let limited = |limit: &str, jobs: &str, root: &[&str]| {
        Command::new("sh")
            .args(["-c", &format!("ulimit -n {limit} && exec \"$0\" \"$@\""), env!("CARGO_BIN_EXE_sandgrep")])
            .env("SANDGREP_CACHE_DIR", crate::util::cache_dir())
            .arg("--root")
            .arg(t.path())
            .args(["search", "-c", "-j", jobs, "needle"])
            .args(root)
            .output()
            .unwrap()
    };
    let min = sandgrep::limits::MIN_OPEN_FILES.to_string();
    for jobs in ["1", "2"] {
        let out = limited(&min, jobs, &[]);
        assert_eq!(out.status.code(), Some(0), "-j {jobs}: {}", stderr(&out));
        assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), want, "-j {jobs}");
        // A root named 100 levels down.
        let out = limited(&min, jobs, &[&named]);
        assert_eq!(out.status.code(), Some(0), "-j {jobs} {named}: {}", stderr(&out));
        let below: Vec<_> = want.iter().filter(|w| w.starts_with(&format!("{named}/"))).collect();
        assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), below, "-j {jobs} {named}");
    }
    let out = limited("40", "1", &[]);
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("40 open files are allowed"), "{}", stderr(&out));
}

/// Every name under `dir`, with its size, for telling whether anything was
/// written there.
fn contents(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            out.push((e.path().strip_prefix(dir).unwrap().display().to_string(), m.len()));
        }
    }
    out.sort();
    out
}

#[test]
fn compiled_code_is_never_read_from_or_written_to_a_cache() {
    // The caches a user's settings point into the workspace: XDG_CACHE_HOME
    // in a checkout (CI set-ups), `--root ~` with ~/.cache,
    // SANDGREP_CACHE_DIR inside it. A repository that ships compiled code
    // at any name there must never have it run.
    let t = Tree::new();
    t.write("src/a.txt", "needle\n");
    let version = env!("CARGO_PKG_VERSION");
    for dir in [".cache/sandgrep", "sgcache"] {
        for name in [format!("sandgrep-{version}-0000000000000000.cwasm"), "sandgrep.cwasm".into()] {
            t.write(&format!("{dir}/{name}"), b"\x7fELF not a component");
        }
    }
    let before = contents(t.path());
    let strace = Command::new("strace").arg("-V").output().is_ok_and(|o| o.status.success());
    for (var, value) in [("XDG_CACHE_HOME", ".cache"), ("SANDGREP_CACHE_DIR", "sgcache"), ("HOME", ".")] {
        let trace = t.path().join("..").join(format!("trace-{var}"));
        let mut cmd = if strace {
            let mut c = Command::new("strace");
            c.args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
                .arg(&trace)
                .arg(env!("CARGO_BIN_EXE_sandgrep"));
            c
        } else {
            Command::new(env!("CARGO_BIN_EXE_sandgrep"))
        };
        cmd.env_remove("XDG_CACHE_HOME").env_remove("SANDGREP_CACHE_DIR").env("HOME", t.path());
        // (The search itself stays in src: it would read the planted files
        // as text, which is no harm.)
        let out = cmd
            .env(var, t.path().join(value))
            .arg("--root")
            .arg(t.path())
            .args(["search", "needle", "src"])
            .output()
            .unwrap();
        assert_eq!(stdout(&out), "src/a.txt:needle\n", "{var}: {}", stderr(&out));
        if strace {
            let opened = std::fs::read_to_string(&trace).unwrap();
            let _ = std::fs::remove_file(&trace);
            assert!(!opened.contains(".cwasm"), "{var}: a compiled artifact was opened:\n{opened}");
        }
    }
    assert_eq!(contents(t.path()), before, "nothing is written in the workspace");
}

#[test]
fn credential_files_of_other_tools_are_denied_and_the_cli_says_so() {
    let t = Tree::new();
    let denied = [
        "_netrc",
        "home/_NETRC",
        ".pgpass",
        ".git-credentials",
        ".docker/config.json",
        ".kube/config",
        "infra/prod.tfstate",
        "infra/prod.tfstate.backup",
        "app/release.jks",
        "app/upload.keystore",
        "web/.htpasswd",
    ];
    for f in denied {
        t.write(f, "hello password\n");
    }
    // Names alike that are not credentials.
    t.write("docker/config.json", "hello ok\n").write(".kube/config.go", "hello ok\n").write("netrc.go", "hello ok\n");
    let out = quick(t.path(), &["search", "--hidden", "--files"]);
    assert_eq!(stdout(&out), ".kube/config.go\ndocker/config.json\nnetrc.go\n");
    assert!(
        stderr(&out).contains(&format!("{} entries withheld by the secrets denylist", denied.len())),
        "{}",
        stderr(&out)
    );
    let out = quick(t.path(), &["search", "--hidden", "-c", "hello"]);
    assert_eq!(stdout(&out), ".kube/config.go:1\ndocker/config.json:1\nnetrc.go:1\n");
    assert_eq!(stderr(&out).matches("withheld").count(), 1, "said once: {}", stderr(&out));
    for f in denied {
        for args in [vec!["read", f], vec!["search", "hello", f], vec!["ls", f]] {
            let out = quick(t.path(), &args);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            assert!(stderr(&out).contains("denied"), "{args:?}: {}", stderr(&out));
            assert!(!stdout(&out).contains("password"), "{args:?}");
        }
    }
    // Copies of the directories, and a workspace that is such a directory
    // itself (whose files have no parent in the component's sight).
    let t = Tree::new();
    for f in [
        ".docker.old/config.json",
        ".aws.bak/credentials",
        ".kube (copy)/config",
        ".kube/config.yaml",
        ".aws/credentials",
    ] {
        t.write(f, "hello password\n");
    }
    t.write(".ssh/config", "Host x\n").write(".ssh/notes.txt", "hello\n").write(".kube/ok.txt", "hello ok\n");
    let out = quick(t.path(), &["search", "--hidden", "--files"]);
    assert_eq!(stdout(&out), ".kube/ok.txt\n");
    for (root, file) in [(".kube", "config.yaml"), (".aws", "credentials"), (".ssh", "notes.txt")] {
        let out = quick(&t.path().join(root), &["read", file]);
        assert_eq!(out.status.code(), Some(2), "--root {root} read {file}: {}", stdout(&out));
        assert!(stderr(&out).contains("denied"), "{}", stderr(&out));
    }
    assert_eq!(stdout(&quick(&t.path().join(".kube"), &["read", "ok.txt"])), "hello ok\n");
}

#[test]
fn an_answer_that_found_nothing_says_what_was_left_out() {
    let t = Tree::new();
    t.mkdir(".git");
    t.write(".gitignore", "build/\n*.log\n");
    t.write("build/a/out.txt", "needle\n").write("build/b/out.txt", "needle\n").write("x.log", "needle\n");
    t.write(".hidden/x.txt", "needle\n").write(".env", "needle\n").write("src/a.txt", "nothing\n");
    let v = json(t.path(), &["search", "--json-page", "needle"]);
    assert!(v["matches"].as_array().unwrap().is_empty(), "{v}");
    // A directory counts once, its contents unwalked; `.git` is no hidden
    // entry (hidden would not include it).
    let s = &v["stats"]["skipped"];
    assert_eq!((s["ignored"].as_u64(), s["hidden"].as_u64()), (Some(2), Some(3)), "{v}");
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("2 entries left out by .gitignore/.ignore/.rgignore rules (no_ignore"), "{warnings}");
    assert!(warnings.contains("3 hidden entries left out (hidden includes them)"), "{warnings}");
    // With them included: the denylist's part, which nothing includes.
    let v = json(t.path(), &["search", "--json-page", "--hidden", "--no-ignore", "nothing-is-here"]);
    assert!(
        v["warnings"].to_string().contains("entries withheld by the secrets denylist (no argument includes them)"),
        "{v}"
    );
    // The CLI's stdout stays rg's: nothing; its stderr says only the denied count.
    let out = quick(t.path(), &["search", "needle"]);
    assert_eq!((out.status.code(), stdout(&out).as_str(), stderr(&out).as_str()), (Some(1), "", ""));
    let out = quick(t.path(), &["search", "--hidden", "needle"]);
    assert_eq!(stdout(&out), ".hidden/x.txt:needle\n");
    assert!(
        stderr(&out).contains("entries withheld by the secrets denylist (no flag includes them)"),
        "{}",
        stderr(&out)
    );
    // A listing that finds nothing says it too (the ignored directory
    // counted once; the files the glob leaves out, asked for, not at all).
    let v = json(t.path(), &["ls", "--json", "-g", "*.zzz"]);
    assert!(v["entries"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(v["skipped"]["ignored"], 1, "{v}");
    assert!(v["warnings"].to_string().contains("1 entries left out by .gitignore"), "{v}");
}

#[test]
fn lines_shown_redacted_are_counted_by_rule_and_rules_switch_off_by_name() {
    let t = Tree::new();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    t.write("a.txt", format!("github_token = {token}\nplain line\n"));
    let v = json(t.path(), &["search", "--json-page", "-C", "1", "plain"]);
    assert_eq!(v["stats"]["lines_redacted"], 1, "{v}");
    let by = v["stats"]["redacted_by"].as_array().unwrap();
    assert_eq!(by.len(), 1, "{v}");
    let rule = by[0]["rule"].as_str().unwrap().to_string();
    assert_eq!(v["matches"][0]["redactions"], serde_json::json!([{"line": 1, "rule": rule}]), "{v}");
    // The CLI says it once on stderr; stdout is the text with the mark.
    let out = quick(t.path(), &["search", "-C", "1", "plain"]);
    assert_eq!(stdout(&out), "a.txt-github_token = [REDACTED]\na.txt:plain line\n");
    assert!(stderr(&out).contains(&format!("1 lines shown with secrets [REDACTED] ({rule} 1)")), "{}", stderr(&out));
    // Reads count too.
    let v = json(t.path(), &["read", "--json", "a.txt"]);
    assert_eq!((v["lines_redacted"].as_u64(), v["redacted_by"][0]["rule"].as_str()), (Some(1), Some(rule.as_str())));
    // The operator (never a request) switches one rule off by name.
    let out = quick(t.path(), &["--no-redact-rule", &rule, "search", "github_token"]);
    assert_eq!(stdout(&out), format!("a.txt:github_token = {token}\n"), "{}", stderr(&out));
    let out = quick(t.path(), &["--no-redact-rule", "no-such-rule", "search", "github_token"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no-such-rule"), "{}", stderr(&out));
}

#[test]
fn hostile_ignore_files_named_or_found_never_hold_or_leak() {
    let s = Setup::new();
    let ws = s.ws();
    let t = |rel: &str| ws.join(rel);
    std::fs::create_dir_all(t(".git/info")).unwrap();
    mkfifo(&t(".git/info/exclude"));
    mkfifo(&t("fifo-rules"));
    symlink("/dev/zero", t("zero-rules")).unwrap();
    symlink("../outside.txt", t("out-rules")).unwrap();
    std::fs::write(t("ctl-rules"), "\u{1b}]0;title\u{7}\n\u{1b}[31m*.nope\n").unwrap();
    let limit = Duration::from_secs(20);
    let mut args = vec!["search", "hello"];
    for f in ["fifo-rules", "zero-rules", "out-rules", "ctl-rules"] {
        args.extend(["--ignore-file", f]);
    }
    let out = bounded(&ws, &args, limit);
    assert_eq!(stdout(&out), "inside.txt:hello inside\n", "{}", stderr(&out));
    assert_no_leak(&out, "out-rules");
    assert!(!stderr(&out).contains('\u{1b}'), "{}", stderr(&out));
    // A path outside the workspace is refused, named as given.
    for given in ["../outside.txt".to_string(), s.parent.path().join("outside.txt").display().to_string()] {
        let out = bounded(&ws, &["search", "--ignore-file", &given, "hello"], limit);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(&format!("--ignore-file {given}: outside the workspace")), "{}", stderr(&out));
        assert_no_leak(&out, &given);
    }
    // `.git` a link out of the workspace, or a worktree's file pointing out.
    std::fs::remove_dir_all(t(".git")).unwrap();
    symlink(s.parent.path(), t(".git")).unwrap();
    let out = bounded(&ws, &["search", "hello"], limit);
    assert_eq!(stdout(&out), "inside.txt:hello inside\n", "{}", stderr(&out));
    std::fs::remove_file(t(".git")).unwrap();
    std::fs::write(t(".git"), "gitdir: ../ws_evil\n").unwrap();
    let out = bounded(&ws, &["search", "--files"], limit);
    assert_eq!(stdout(&out), "ctl-rules\ninside.txt\n", "{}", stderr(&out));
    assert_no_leak(&out, "ws_evil");
}

/// `sandgrep ARGS` run in `cwd` (no `--root` put first) with
/// `RIPGREP_CONFIG_PATH` set to `config`, bounded in time.
fn with_config(cwd: &Path, config: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sandgrep"))
        .current_dir(cwd)
        .env("SANDGREP_CACHE_DIR", crate::util::cache_dir())
        .env("RIPGREP_CONFIG_PATH", config)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("sandgrep {args:?} with config {config:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!stderr(&out).contains("panicked"), "{args:?}: {}", stderr(&out));
    out
}

#[test]
fn a_config_file_cannot_take_or_move_the_operators_options() {
    let s = Setup::new();
    let ws = s.ws();
    std::fs::write(ws.join("keys.txt"), "hello key = \"AKIAIOSFODNN7EXAMPLE\"\n").unwrap();
    let parent = s.parent.path();
    let ws_arg = ws.display().to_string();
    let rc = parent.join("rc");
    // Operator options in every spelling: never read.
    std::fs::write(
        &rc,
        "--no-redact\n--root=/\n--root\n/\n--no-redact-rule=aws-access-key-id\r\n--memory-limit\n1\n--component=x\n",
    )
    .unwrap();
    let out = with_config(parent, &rc, &["--root", &ws_arg, "search", "hello"]);
    assert!(stdout(&out).contains("[REDACTED]") && !stdout(&out).contains("AKIA"), "{}", stdout(&out));
    assert_no_leak(&out, &ws_arg);
    // A config ending in a flag that waits for its value, or in `--`, would
    // take the operator's `--root` given after the subcommand: the
    // workspace would become the current directory (the parent).
    for config in ["-e\nhello\nouter.txt\n-e\n", "--\n", "-e\nhello\n../outside.txt\n-e\n"] {
        std::fs::write(parent.join("outer.txt"), format!("hello {OUTSIDE}\n")).unwrap();
        std::fs::write(&rc, config).unwrap();
        for args in [vec!["search", "--root", &ws_arg, "hello"], vec!["search", "hello", "--root", &ws_arg]] {
            let out = with_config(parent, &rc, &args);
            assert_no_leak(&out, &ws_arg);
        }
    }
    // A FIFO, /dev/zero or a huge file as the config: said and skipped, at once.
    mkfifo(&parent.join("fifo-rc"));
    std::fs::write(parent.join("huge-rc"), vec![b'-'; 64 << 20]).unwrap();
    for config in [parent.join("fifo-rc"), "/dev/zero".into(), parent.join("huge-rc")] {
        let out = with_config(&ws, &config, &["search", "hello", "inside.txt"]);
        assert_eq!(stdout(&out), "hello inside\n", "{config:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("RIPGREP_CONFIG_PATH"), "{config:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("/tmp/"), "{config:?}: {}", stderr(&out));
    }
}

#[test]
fn a_path_that_cannot_be_read_spares_the_paths_after_it() {
    // A sorted search names every file it listed; one swapped meanwhile
    // for a link out of the workspace must not end the search of the rest.
    let s = Setup::new();
    let ws = s.ws();
    symlink("../outside.txt", ws.join("out")).unwrap();
    let out = quick(&ws, &["search", "hello", "out", "inside.txt"]);
    assert_eq!(stdout(&out), "inside.txt:hello inside\n", "{}", stderr(&out));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("out: "), "{}", stderr(&out));
    assert_no_leak(&out, "out");
    // A FIFO named (the search would wait on it for ever): refused aloud,
    // by name, and the other paths searched.
    let fifo = ws.join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for args in [&["search", "hello", "pipe", "inside.txt"][..], &["search", "--json-page", "hello", "pipe"]] {
        let out = quick(&ws, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("pipe: not a regular file"), "{args:?}: {}", stderr(&out));
        assert_no_leak(&out, "pipe");
    }
    assert_eq!(stdout(&quick(&ws, &["search", "hello", "pipe", "inside.txt"])), "inside.txt:hello inside\n");
}

#[test]
fn binary_file_matches_is_no_oracle_for_a_secret() {
    // A file searched on past its NUL (named, or --binary) stops at its
    // first result there, unprinted, with rg's "binary file matches": a
    // match only inside a secret is no result, or the notice (and its
    // exit status, its --stats count) would tell a guess right.
    let t = Tree::new();
    let text = "head\0er\nkey = \"AKIAIOSFODNN7EXAMPLE\"\nplain line\n";
    t.write("s.bin", text);
    for (flags, right, wrong) in [
        (vec!["s.bin"], "AKIAIOSFODNN7E", "AKIAIOSFODNN7X"),
        (vec!["--binary"], "AKIAIOSFODNN7E", "AKIAIOSFODNN7X"),
        (vec!["--stats", "s.bin"], "AKIAIOSFODNN7E", "AKIAIOSFODNN7X"),
        (vec!["--json", "s.bin"], "AKIAIOSFODNN7E", "AKIAIOSFODNN7X"),
        (vec!["-c", "s.bin"], "AKIAIOSFODNN7E", "AKIAIOSFODNN7X"),
        // Inverted: the secret's line is a result unless the guess is right.
        (vec!["-v", "-e", "head|plain", "s.bin"], "AKIAIOSFODNN7E", "AKIAIOSFODNN7X"),
        (vec!["--stats", "-v", "-e", "head|plain", "s.bin"], "AKIAIOSFODNN7E", "AKIAIOSFODNN7X"),
    ] {
        let answer = |pattern: &str| {
            let mut args = vec!["search", "-e", pattern];
            args.extend(&flags);
            let out = quick(t.path(), &args);
            let text: Vec<String> = stdout(&out)
                .lines()
                .filter(|l| !l.contains("seconds") && !l.contains("elapsed"))
                .map(String::from)
                .collect();
            (text, out.status.code())
        };
        assert_eq!(answer(right), answer(wrong), "{flags:?}");
    }
    // With context: a line the searcher matched only inside a secret would
    // make the next line context (or one before a result), where the
    // search stops short of its notice, or changes the bytes it searched.
    let mut late = String::from("head\n");
    late.push_str(&"filler line of text\n".repeat(5000));
    late.push_str("x\0y\nkey = \"AKIAIOSFODNN7EXAMPLE\"\nplain line\n");
    t.write("late.bin", &late);
    t.write("a.bin", "head\nkey = \"AKIAIOSFODNN7EXAMPLE\"\nmid\0x\nplain line\n");
    for flags in [
        vec!["-e", "plain", "-A1", "a.bin"],
        vec!["-e", "plain", "-A1", "--binary"],
        vec!["--stats", "-C1", "s.bin"],
        vec!["-e", "head", "-B1", "late.bin"],
        vec!["--json", "-C1", "late.bin"],
        vec!["--passthru", "s.bin"],
    ] {
        let answer = |pattern: &str| {
            let mut args = vec!["search", "-e", pattern];
            args.extend(&flags);
            let out = quick(t.path(), &args);
            let text = stdout(&out);
            let text: Vec<&str> = text.lines().filter(|l| !l.contains("seconds")).collect();
            let text = text.join("\n");
            // (Timings aside.)
            let text = text.split("\"elapsed").map(|p| p.split_once('}').map_or(p, |x| x.1)).collect::<String>();
            (text, out.status.code())
        };
        assert_eq!(answer("AKIAIOSFODNN7E"), answer("AKIAIOSFODNN7X"), "{flags:?}");
    }
    // A key block with a NUL inside goes on past it (the lines after a
    // named binary file's NUL are shown with --json).
    t.write(
        "k.bin",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nQyNTUxOQAAACDx\0AAAAAAAAAAAAAAAA\nZZZZAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
    );
    for flags in [&["--json", "ZZZZ", "k.bin"][..], &["-a", "ZZZZ", "k.bin"]] {
        let out = quick(t.path(), &[&["search"][..], flags].concat());
        assert!(!stdout(&out).contains("ZZZZ"), "{flags:?}: {}", stdout(&out));
    }
    // What shows clear of the redaction still says the file matches.
    let out = quick(t.path(), &["search", "key = ", "s.bin"]);
    assert!(stdout(&out).starts_with("binary file matches"), "{}", stdout(&out));
    // Also from stdin.
    let piped = |pattern: &str| {
        let mut child = command(t.path())
            .args(["search", "--stats", "-e", pattern])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let text: Vec<String> = stdout(&out).lines().filter(|l| !l.contains("seconds")).map(String::from).collect();
        (text, out.status.code())
    };
    assert_eq!(piped("AKIAIOSFODNN7E"), piped("AKIAIOSFODNN7X"));
}

#[test]
fn stop_on_nonmatch_is_no_oracle_for_a_secret() {
    // Whether the search goes on past a line with a secret must not depend
    // on whether the pattern matched inside the secret.
    let t = Tree::new();
    t.write("a.txt", "a hello\nkey = \"AKIAIOSFODNN7EXAMPLE\"\nb hello\n");
    t.write("v.txt", "zz plain\nkey = \"AKIAIOSFODNN7EXAMPLE\"\nyy plain\n");
    t.write("l.txt", "key = \"AKIAIOSFODNN7EXAMPLE\"\nzz\nyy hello\n");
    for (flags, file, right, wrong) in [
        (vec![], "a.txt", "a |AKIAIOSFODNN7E|b ", "a |AKIAIOSFODNN7X|b "),
        (vec!["-c"], "a.txt", "a |AKIAIOSFODNN7E|b ", "a |AKIAIOSFODNN7X|b "),
        (vec!["--passthru"], "v.txt", "zz|AKIAIOSFODNN7E|yy", "zz|AKIAIOSFODNN7X|yy"),
        (vec!["-v"], "v.txt", "AKIAIOSFODNN7E", "AKIAIOSFODNN7X"),
        (vec![], "l.txt", "AKIAIOSFODNN7E|hello", "AKIAIOSFODNN7X|hello"),
    ] {
        let run_with = |pattern: &str| {
            let mut args = vec!["search", "--stop-on-nonmatch"];
            args.extend(&flags);
            args.extend(["-e", pattern, file]);
            let out = quick(t.path(), &args);
            (stdout(&out), out.status.code())
        };
        assert_eq!(run_with(right), run_with(wrong), "{flags:?} {file}");
    }
    // Also from stdin.
    let piped = |pattern: &str| {
        let mut child = command(t.path())
            .args(["search", "--stop-on-nonmatch", "-e", pattern])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"a hello\nkey = \"AKIAIOSFODNN7EXAMPLE\"\nb hello\n").unwrap();
        stdout(&child.wait_with_output().unwrap())
    };
    assert_eq!(piped("a |AKIAIOSFODNN7E|b "), piped("a |AKIAIOSFODNN7X|b "));
}

#[test]
fn a_control_byte_after_a_secret_keeps_it_redacted() {
    // An environment dump (NUL-separated, searched with -a) and a form feed
    // after a value.
    let t = Tree::new();
    let v = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzXq3LkP9";
    t.write("environ.dump", format!("PATH=/usr/bin\0AWS_SECRET_ACCESS_KEY={v}\0HOME=/root hello\0"));
    t.write("ff.txt", format!("hello\nAWS_SECRET_ACCESS_KEY={v}\x0c\n"));
    for args in [
        vec!["search", "-a", "hello", "environ.dump"],
        vec!["search", "--null-data", "--passthru", "hello", "environ.dump"],
        vec!["search", "--passthru", "hello", "ff.txt"],
        vec!["search", "-a", "-o", "KEY=.{0,6}", "environ.dump"],
        vec!["search", "-o", "KEY=.{0,6}", "ff.txt"],
    ] {
        let out = quick(t.path(), &args);
        assert!(!stdout(&out).contains("wJalr"), "{args:?}: {}", stdout(&out));
    }
}

/// -z: compressed files are decompressed inside the component, bounded by
/// max-filesize (the text, not the file), by the instance's memory and
/// the deadline; a broken stream is an error on that file alone (named by
/// its workspace path), a FIFO named .gz is never opened, and the text is
/// redacted as a file's.
#[test]
fn compressed_files_are_bounded_broken_streams_said_and_secrets_redacted() {
    let t = Tree::new();
    t.write("a.txt", "needle plain\n");
    // A bomb: 48 gzip members of 8 MiB of text each, 384 MiB in all from
    // well under 1 MiB.
    let member = gzip("needle\n".repeat(8 << 20 >> 3).as_bytes());
    let bomb = member.repeat(48);
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    t.write("bomb.gz", &bomb);
    let long: String = (0..20000).map(|i| format!("{i} needle\n")).collect();
    let cut = gzip(long.as_bytes());
    t.write("logs/cut.gz", &cut[..cut.len() / 2]);
    t.write("logs/garbage.gz", "needle, but not gzip\n");
    t.write("logs/ok.gz", gzip(b"ok needle\n"));
    assert!(Command::new("mkfifo").arg(t.path().join("logs/pipe.gz")).status().unwrap().success());
    t.write("secret.gz", gzip(format!("needle aws = AKIAIOSFODNN7EXAMPLE\n{KEY}needle after\n").as_bytes()));

    // The default cap (8 MiB): the bomb is too large, counted, and the
    // rest is searched.
    let v = json(t.path(), &["search", "--json-page", "-z", "-c", "needle"]);
    assert_eq!(v["stats"]["skipped"]["too_large"], 1, "{v}");
    let files: Vec<&str> = v["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(files, ["a.txt", "logs/ok.gz", "secret.gz"], "{v}");
    // The broken ones are counted as unreadable, by name.
    assert_eq!(v["stats"]["skipped"]["unreadable"], 2, "{v}");
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("logs/cut.gz") && warnings.contains("logs/garbage.gz"), "{warnings}");
    // A cap over the text of one member, under all of them: decompressed up
    // to the cap only (no instance runs out of memory), then counted.
    let v = json(t.path(), &["search", "--json-page", "-z", "-l", "--max-filesize", "200M", "needle", "bomb.gz"]);
    assert_eq!(v["stats"]["skipped"]["too_large"], 1, "{v}");
    // With the cap over all of it (256 MiB is the hard maximum): too large.
    let v = json(t.path(), &["search", "--json-page", "-z", "-l", "--max-filesize", "1G", "needle", "bomb.gz"]);
    assert_eq!(v["stats"]["skipped"]["too_large"], 1, "{v}");

    // On the command line: what rg prints (the lines before the break,
    // then the error naming the file as the workspace has it, exit 2), the
    // other files searched, no host path.
    let out = quick(t.path(), &["search", "-z", "-n", "^1 needle$", "logs"]);
    assert_eq!(stdout(&out), "logs/cut.gz:2:1 needle\n");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("logs/cut.gz:") && err.contains("logs/garbage.gz:"), "{err}");
    assert!(err.contains("gzip"), "{err}");
    assert!(!err.contains(&t.path().display().to_string()), "{err}");
    // The FIFO is never opened: walked past, refused by name.
    let out = quick(t.path(), &["search", "-z", "ok", "logs"]);
    assert_eq!(stdout(&out), "logs/ok.gz:ok needle\n");
    let out = quick(t.path(), &["search", "-z", "needle", "logs/pipe.gz"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a regular file"), "{}", stderr(&out));

    // Redacted as a file's text: matches, context, multiline, inverted.
    for args in [
        vec!["search", "-z", "-C", "3", "needle", "secret.gz"],
        vec!["search", "-z", "-U", "BEGIN[\\s\\S]*?END", "secret.gz"],
        vec!["search", "-z", "-v", "zzz", "secret.gz"],
        vec!["search", "-z", "--json", "needle", "secret.gz"],
    ] {
        let out = quick(t.path(), &args);
        let text = stdout(&out);
        for s in ["AKIAIOSFODNN7EXAMPLE", "MIIEow", "VTLw7on"] {
            assert!(!text.contains(s), "{args:?} shows {s}: {text}");
        }
        assert!(text.contains("[REDACTED]"), "{args:?}: {text}");
    }
    // A guess at the secret matches nothing that is not shown.
    let out = quick(t.path(), &["search", "-z", "-c", "AKIAIOSF", "secret.gz"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
}
