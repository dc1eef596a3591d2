//! Temporary trees and a runner for the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Once;

use serde_json::Value;

/// A temporary workspace.
pub struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    pub fn new() -> Tree {
        Tree { dir: tempfile::tempdir().unwrap() }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `contents` to `rel`, creating parent directories.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> &Tree {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, contents).unwrap();
        self
    }

    pub fn mkdir(&self, rel: &str) -> &Tree {
        std::fs::create_dir_all(self.dir.path().join(rel)).unwrap();
        self
    }
}

/// ripgrep 15.2.0, the oracle: `scripts/test` installs it in `.tools/bin`
/// (a distribution's older rg prints other bytes in places, so it is never
/// taken instead).
pub fn rg_command() -> Command {
    let rg = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/bin/rg");
    assert!(rg.exists(), "ripgrep 15.2.0 must be in .tools/bin: scripts/test installs it");
    Command::new(rg)
}

/// The tests' cache directory (where indexes are kept): this user's alone
/// and outside any git work tree, as sandgrep requires of an index's home
/// (the checkout is one).
pub fn cache_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        use std::os::unix::fs::DirBuilderExt;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        let dir = std::env::temp_dir().join(format!("sandgrep-tests-{me}"));
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).unwrap();
        dir
    })
    .clone()
}

pub fn command(root: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgrep"));
    cmd.env("SANDGREP_CACHE_DIR", cache_dir()).arg("--root").arg(root);
    cmd
}

/// Runs `sandgrep --root ROOT ARGS...` (the first call once more before it:
/// the page cache then holds the binary for the timed tests).
pub fn run(root: &Path, args: &[&str]) -> Output {
    static WARM: Once = Once::new();
    WARM.call_once(|| {
        let t = Tree::new();
        command(t.path()).args(["search", "x"]).output().unwrap();
    });
    command(root).args(args).output().unwrap()
}

/// Runs a command expected to succeed (exit 0 or 1; 2 after a timeout, as
/// the answer says) and print one JSON object.
pub fn json(root: &Path, args: &[&str]) -> Value {
    let out = run(root, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "--json must print exactly one line: {stdout} {stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let want: &[i32] = if v["timed_out"] == true { &[2] } else { &[0, 1] };
    assert!(out.status.code().is_some_and(|c| want.contains(&c)), "sandgrep {args:?}: {:?}: {stderr}", out.status);
    v
}

/// Runs the shell command `line` on a terminal of its own (`script`, from
/// util-linux), with the tests' artifact cache; its output as the terminal
/// showed it.
pub fn on_terminal(line: &str) -> Output {
    Command::new("script")
        .args(["-qec", line, "/dev/null"])
        .env("SANDGREP_CACHE_DIR", cache_dir())
        .env("TERM", "xterm")
        .output()
        .expect("script (util-linux) runs a command on a terminal")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `input` through `gzip -c -n` (one member, no name or time).
pub fn gzip(input: &[u8]) -> Vec<u8> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child =
        Command::new("gzip").args(["-c", "-n"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    out.stdout
}
