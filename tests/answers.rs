//! What an agent reads: the agent tools' text for a search is as compact as
//! ripgrep's `--heading` output for the same hits, and the structured result
//! loses none of them (the real component under the real host; `rg` is the
//! oracle).

use std::path::Path;

use sandgrep::{tools, Policy, Sandbox};
use serde_json::{json, Value};

use crate::conformance::rg;
use crate::util::Tree;

/// A tree of code-like files: `Create` calls here and there, some on
/// adjacent lines (their context overlaps), some files without any.
fn code_tree() -> Tree {
    let t = Tree::new();
    let mut seed = 11u64;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for f in 0..24 {
        let mut text = String::from("package client\n\nimport (\n\t\"context\"\n\t\"net/http\"\n)\n\n");
        for l in 0..(40 + next(200)) {
            let line = match next(40) {
                0 => format!("\tresp, err := cli.ContainerCreate(ctx, config{l}, hostConfig, nil, name)\n"),
                1 => "\t// ContainerCreate creates a new container based on the given configuration.\n".to_string(),
                2..=6 => String::from("\n"),
                7..=12 => format!("\tif err != nil {{\n\t\treturn response{l}, err\n\t}}\n"),
                _ => format!("\tvalue{l} := options.Get(\"key-{l}\") // {}\n", "x".repeat(next(60) as usize)),
            };
            text.push_str(&line);
        }
        t.write(&format!("{}/file{f:02}.go", ["api", "client", "daemon/cluster"][f % 3]), text);
    }
    t
}

/// The tool's answer as an agent reads it: text and notes.
fn tool_text(root: &Path, args: Value) -> (String, Value) {
    let sandbox = Sandbox::open(root, Policy::default()).unwrap();
    let out = tools::call(&sandbox, "search_text", args.as_object().unwrap()).unwrap();
    (out.text + &out.notes, out.structured)
}

#[test]
fn search_text_reads_about_as_short_as_rg_heading() {
    let t = code_tree();
    for (query, context) in [("ContainerCreate", 2), ("containercreate(ctx", 2), ("return response17,", 0), ("http", 5)]
    {
        let (text, structured) = tool_text(t.path(), json!({"query": query, "context_lines": context}));
        let hits = structured["hits"].as_array().unwrap();
        assert_eq!(structured["has_more"], false, "{query}: fewer hits than a page");
        let c = context.to_string();
        let out = rg(t.path(), &["-n", "--heading", "-i", "-F", "-C", &c, "--max-columns", "500", query]);
        let rg_text = String::from_utf8(out.stdout).unwrap();
        // The same hits: every matching line rg prints is a hit.
        let rg_hits = rg_text.lines().filter(|l| l.split_once(':').is_some_and(|(n, _)| n.parse::<u64>().is_ok()));
        assert_eq!(hits.len(), rg_hits.count(), "{query}: {text}");
        let ratio = text.len() as f64 / rg_text.len() as f64;
        assert!(ratio <= 1.2, "{query}: {} bytes where rg prints {} ({ratio:.2}x):\n{text}", text.len(), rg_text.len());
        // Each line once: no line number repeats within a file's group.
        for group in text.split("\n\n") {
            let mut numbers: Vec<&str> = group.lines().skip(1).filter_map(|l| l.split([':', '-']).next()).collect();
            let all = numbers.len();
            numbers.dedup();
            assert_eq!(numbers.len(), all, "{query}: a line shown twice in\n{group}");
        }
    }
}
