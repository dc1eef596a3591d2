//! Several `sandgrep serve` nodes behind the real nginx on loopback, with
//! the shipped configuration (deploy/nginx/sandgrep.conf): one node stopped
//! with SIGTERM and one killed mid-load, and no call lost or answered
//! differently. The load, the checks and the processes are in
//! `tests/cluster.py` (it drives the MCP sessions with the official MCP SDK,
//! in `.venv`); this runs it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// nginx: `$NGINX`, else on `PATH`, else where Debian and Homebrew put it.
fn nginx() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NGINX") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin", "/usr/local/bin"].map(PathBuf::from))
        .map(|d| d.join("nginx"))
        .find(|p| p.is_file())
}

#[test]
fn nodes_behind_nginx_lose_no_call_when_one_stops_and_one_is_killed() {
    let nginx = nginx().unwrap_or_else(|| {
        panic!(
            "nginx not found (NGINX, PATH, /usr/sbin): run scripts/test, which installs it (Debian's \
             nginx-light, Homebrew's nginx), or set NGINX to an nginx binary"
        )
    });
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let python = repo.join(".venv/bin/python");
    assert!(python.exists(), "{} is missing: run scripts/test", python.display());
    let out = Command::new(python)
        .arg(repo.join("tests/cluster.py"))
        .arg(env!("CARGO_BIN_EXE_sandgrep"))
        .arg(&nginx)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success() && stdout.ends_with("ok\n"), "stdout:\n{stdout}\nstderr:\n{stderr}");
}
