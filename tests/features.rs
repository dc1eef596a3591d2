//! The library without its front ends: `sandgrep` with `default-features =
//! false` depends on wasmtime and serde, and on nothing the CLI, the MCP
//! server or the multi-tenant server need. Read from `cargo tree` (no build).

use std::collections::BTreeSet;
use std::process::Command;

/// `cargo tree` of the library alone (normal dependencies), with `args`:
/// the crate names it prints, one per line.
fn tree(args: &[&str]) -> BTreeSet<String> {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let out = Command::new(option_env!("CARGO").unwrap_or("cargo"))
        .args(["tree", "--offline", "--locked", "--manifest-path", manifest, "-p", "sandgrep"])
        .args(["--no-default-features", "-e", "normal", "--prefix", "none", "--format", "{p}"])
        .args(args)
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cargo tree failed: {stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    stdout.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect()
}

#[test]
fn library_alone_compiles_no_front_end() {
    let all = tree(&[]);
    for front_end in ["axum", "hyper", "hyper-util", "tower", "rmcp", "clap", "indicatif", "toml"] {
        assert!(!all.contains(front_end), "{front_end} is in the library's tree: {all:?}");
    }
    // Its own dependencies: the runtime, the types' serde and the messages
    // it shares with the component, nothing else
    // (libc is the engine's: the epoch ticker's signal; cap-primitives is
    // wasmtime-wasi's own, for the stat that reports the real ctime, and
    // rustix cap-primitives' own, for directory listings).
    let direct = tree(&["--depth", "1"]);
    let want = [
        "cap-primitives",
        "libc",
        "rustix",
        "sandgrep",
        "sandgrep-contract",
        "serde",
        "serde_json",
        "wasmtime",
        "wasmtime-wasi",
    ];
    assert_eq!(direct, want.iter().map(|s| s.to_string()).collect(), "the library's direct dependencies");
    // tokio is wasmtime-wasi's own (its p2 implementation runs on it, with
    // no feature to leave it out); the library brings in no more of it.
    let tokio_users = tree(&["--invert", "tokio", "--depth", "1"]);
    assert_eq!(tokio_users, ["tokio", "wasmtime-wasi"].iter().map(|s| s.to_string()).collect(), "tokio's dependents");
}

/// The lines of `host/examples/embed.rs` between its README markers.
fn embed_example() -> String {
    let source = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/embed.rs")).unwrap();
    let body =
        source.split("// README example: begin\n").nth(1).unwrap().split("    // README example: end").next().unwrap();
    body.lines().map(|l| l.strip_prefix("    ").unwrap_or(l)).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_readme_shows_the_embedding_example_as_it_is() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let example = embed_example();
    assert!(readme.contains(&format!("```rust\n{example}\n```")), "README lacks:\n{example}");
}

#[test]
fn the_embedding_example_builds_with_the_library_alone() {
    // Its own target directory: the library without front ends resolves
    // other features (tokio's) than the workspace build, and must not
    // invalidate it.
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let target = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/library-alone");
    let out = Command::new(option_env!("CARGO").unwrap_or("cargo"))
        .args(["check", "--offline", "--locked", "--quiet", "--manifest-path", manifest, "-p", "sandgrep"])
        .args(["--no-default-features", "--example", "embed", "--target-dir", target])
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo check failed: {}", String::from_utf8_lossy(&out.stderr));
}
