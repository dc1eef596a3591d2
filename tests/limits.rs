//! One table of limits (`contract/src/limits.rs`): every number the README
//! (and `docs/*.md`), the WIT and the host's front ends state as a default,
//! maximum or limit is one the table holds.

use std::path::{Path, PathBuf};

use sandgrep::limits;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Words that make a line state a limit.
const LIMIT_WORDS: [&str; 13] = [
    "default",
    "max",
    "maximum",
    "minimum",
    "maxitems",
    "maxlength",
    "at most",
    "cap",
    "limit",
    "limits",
    "budget",
    "between",
    "longer than",
];

/// Numbers in limit-stating lines that are not sandgrep's limits: HTTP
/// statuses the server answers with, the default listen port, rmcp's idle
/// session time (5 minutes, in ms), a terminal escape's number (OSC 52).
const NOT_LIMITS: [u64; 8] = [408, 413, 429, 503, 504, 7878, 300_000, 52];

/// `line` (lower case) has `word` as a word of its own.
fn has_word(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + word.len()..].chars().next();
        !before.is_some_and(char::is_alphabetic) && !after.is_some_and(char::is_alphabetic)
    })
}

/// The numbers `line` states, in the table's units (bytes and
/// milliseconds): `64 KiB`, `10 s`, `8 << 20`, `10_000`, `1,000`; in a line
/// about a `_mib` setting, bare numbers are MiB.
fn numbers(line: &str) -> Vec<u64> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // Not inside a word, a version, a `$1` or a `--flag=600`.
        let starts =
            b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b"_-.$=".contains(&b[i - 1])));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        let mut digits = String::new();
        while j < b.len()
            && (b[j].is_ascii_digit() || (b"_,".contains(&b[j]) && j + 1 < b.len() && b[j + 1].is_ascii_digit()))
        {
            if b[j].is_ascii_digit() {
                digits.push(b[j] as char);
            }
            j += 1;
        }
        // Part of a word, a version or a list (`sha256`, `1.5`, `0-based`,
        // `5. **Item**`).
        let list_item = line[..i].trim().is_empty() && line[j..].starts_with(". ");
        if list_item
            || j < b.len()
                && (b[j].is_ascii_alphabetic()
                    || b[j] == b'.' && b.get(j + 1).is_some_and(u8::is_ascii_digit)
                    || b[j] == b'-')
        {
            i = j;
            continue;
        }
        let Ok(mut n) = digits.parse::<u64>() else {
            i = j;
            continue;
        };
        let rest = line[j..].trim_start();
        let word = rest.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or("");
        let operand = |op: &str| {
            let after = rest[op.len()..].trim_start();
            let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
            (digits.parse::<u64>().ok(), line.len() - after.len() + digits.len())
        };
        if rest.starts_with("<<") || rest.starts_with('*') {
            let (value, end) = operand(if rest.starts_with('*') { "*" } else { "<<" });
            match value {
                Some(v) if rest.starts_with('*') => n *= v,
                Some(v) => n <<= v,
                None => {}
            }
            j = end;
        } else {
            match word {
                "KiB" | "K" => n <<= 10,
                "MiB" | "M" => n <<= 20,
                "GiB" | "G" => n <<= 30,
                "s" | "seconds" => n *= 1000,
                "minutes" => n *= 60_000,
                _ if line.contains("_mib") => n <<= 20,
                _ => {}
            }
        }
        out.push(n);
        i = j;
    }
    out
}

/// Rust sources under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// (file, line number, line) of every line a front end states numbers in:
/// the README and `docs/*.md`, the WIT's comments, the host's sources (not
/// their tests, not the engine's internals).
fn stated() -> Vec<(String, usize, String)> {
    let root = Path::new(ROOT);
    let mut files = vec![root.join("README.md"), root.join("wit/sandgrep.wit")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    rust_files(&root.join("host/src"), &mut files);
    // (docs/rg-suite.md counts ripgrep's tests by the flags they use.)
    files.retain(|p| !p.ends_with("engine.rs") && !p.ends_with("docs/rg-suite.md"));
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap();
        let name = path.strip_prefix(root).unwrap().display().to_string();
        let mut in_limits_table = false;
        for (n, line) in text.lines().enumerate() {
            if name.ends_with(".md") && line.starts_with("## ") {
                in_limits_table = line == "## Limits";
            }
            let lower = line.to_lowercase();
            if in_limits_table || LIMIT_WORDS.iter().any(|w| has_word(&lower, w)) {
                out.push((name.clone(), n + 1, line.to_string()));
            }
        }
    }
    out
}

#[test]
fn front_ends_state_only_numbers_from_the_table() {
    let table = limits::numbers();
    let mut strays = Vec::new();
    for (file, n, line) in stated() {
        for number in numbers(&line) {
            if number > 1 && !table.contains(&number) && !NOT_LIMITS.contains(&number) {
                strays.push(format!("{file}:{n}: {number} in {line:?}"));
            }
        }
    }
    assert!(strays.is_empty(), "numbers the limits table does not hold:\n{}", strays.join("\n"));
}

#[test]
fn numbers_are_read_in_the_tables_units() {
    assert_eq!(numbers("max 64 KiB, default 8 MiB"), [64 << 10, 8 << 20]);
    assert_eq!(numbers("timeout 10 s (10_000 ms), 1,000,000 connections"), [10_000, 10_000, 1_000_000]);
    assert_eq!(numbers("const X: usize = 3 << 20; 64 * 1024"), [3 << 20, 64 * 1024]);
    assert_eq!(numbers("memory_mib = 512 # default 512"), [512 << 20, 512 << 20]);
    assert_eq!(numbers("sha256 u64 1-based v1.5 $1"), Vec::<u64>::new());
}

#[test]
fn the_table_is_what_the_component_clamps_to() {
    // A request past every maximum comes back clamped to the table's
    // maxima, with a warning naming each (read from the real component).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "needle\n".repeat(3)).unwrap();
    let sandbox = sandgrep::Sandbox::open(dir.path(), sandgrep::Policy::default()).unwrap();
    let mut request = sandgrep::SearchTextRequest::new("needle");
    request.max_results = Some(u32::MAX);
    request.context_before = Some(u32::MAX);
    request.max_columns = Some(0);
    let response = sandgrep::Sandbox::search_text(&sandbox, &request).unwrap();
    let warnings = response.warnings.join("\n");
    for want in [
        format!("max-results {} lowered to the maximum, {}", u32::MAX, limits::MAX_RESULTS.max),
        format!("context-before {} lowered to the maximum, {}", u32::MAX, limits::CONTEXT.max),
        format!("max-columns 0 raised to the minimum, {}", limits::MAX_COLUMNS.min),
    ] {
        assert!(warnings.contains(&want), "{want:?} not in {warnings:?}");
    }
}

#[test]
fn pcre2_is_built_with_the_tables_heap_limit() {
    // (host/build.rs compiles PCRE2's C with its HEAP_LIMIT, in KiB.)
    let build = include_str!("../host/build.rs");
    let define = format!("-DHEAP_LIMIT={}", limits::PCRE2_HEAP >> 10);
    assert!(build.contains(&define), "host/build.rs does not define {define}");
}
