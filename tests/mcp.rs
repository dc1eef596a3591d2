//! `sandgrep mcp` driven by a real MCP client: the official Python SDK
//! (`mcp` on PyPI, installed into `.venv` by `scripts/test`), running
//! `tests/mcp_client.py` against the real binary.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

use crate::util::{run, Tree};

#[test]
fn the_python_sdk_drives_every_tool() {
    let t = Tree::new();
    t.mkdir(".git");
    t.write(".gitignore", "big/\n");
    t.write("src/a.rs", "one\ntwo\nlet needle.x = 1;\nfour\nfive\n");
    t.write("src/b.rs", "fn b() { needle.y }\n");
    t.write("notes.txt", "line 1\nline 2\nline 3\nline 4\nkey AKIAIOSFODNN7EXAMPLE line 5\n");
    t.write("bin.dat", b"a\x00b".to_vec());
    t.write(".env", "X=1\n");
    for i in 0..3000 {
        t.write(&format!("big/d{}/f{i}.txt", i % 30), "line\n".repeat(200));
    }
    for i in 0..100 {
        t.write(&format!("big/py/m{i}.py"), "def f(a):\n    return g(a)\n".repeat(50));
    }
    run(t.path(), &["search", "warm-up-the-artifact-cache"]);

    client(
        "mcp_client.py",
        &[t.path().as_os_str(), env!("SANDGREP_RUNAWAY_WASM").as_ref()],
        "MCP CLIENT CHECKS PASSED",
    );
}

/// Runs `tests/SCRIPT BINARY ARGS...` with the MCP SDK's Python (`.venv`)
/// and requires it to pass.
fn client(script: &str, args: &[&OsStr], passed: &str) {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let python = repo.join(".venv/bin/python");
    assert!(python.exists(), "{} is missing: run scripts/test", python.display());
    let out = Command::new(python)
        .arg(repo.join("tests").join(script))
        .arg(env!("CARGO_BIN_EXE_sandgrep"))
        .args(args)
        .env("SANDGREP_CACHE_DIR", crate::util::cache_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stdout.contains(passed), "stdout:\n{stdout}\nstderr:\n{stderr}");
}

#[test]
fn a_long_lived_server_answers_every_change_made_before_a_call() {
    let t = Tree::new();
    t.write("src/a.txt", "hay hay hay hay hay hay\n");
    t.write("src/b.txt", "a needle here\n");
    t.write("src/c.txt", "needle hay\n");
    t.write("deep/d.txt", "needle deep\n");
    // Two hits: a page of one ends in it, between files the index rules out.
    t.write("mid/m.txt", "needle one\nneedle two\n");
    for i in 0..200 {
        t.write(&format!("filler/f{i}.txt"), "nothing to see\n");
    }
    // Binary files among them (skipped, and counted, as a scan would).
    for i in [0, 1, 2, 50, 120] {
        t.write(&format!("filler/f{i}.dat"), "a needle\0 in binary\n");
    }
    // Many directories: a kept walk must not hold them open.
    for i in 0..300 {
        t.write(&format!("dirs/d{i}/x.txt"), "nothing here\n");
    }
    // And a deep one, searched last: a walk (or a chain of directories
    // opened again to read a file) keeps only its innermost open.
    let chain: Vec<String> = (0..60).map(|i| format!("c{i}")).collect();
    t.write(&format!("zz/{}/x.txt", chain.join("/")), "nothing here\n");
    // Written right before the server starts: its first build finds them
    // all too new to trust, and must look again once they are not.
    client("mcp_fresh.py", &[t.path().as_os_str()], "MCP FRESHNESS CHECKS PASSED");
}
