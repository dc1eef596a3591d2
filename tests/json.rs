//! The `--json` contract: exactly one object whose shape is pinned by mirror
//! structs that refuse unknown fields (snake_case names, as docs/cli.md's JSON section shows).

use serde::Deserialize;

use crate::util::{run, stdout, Tree};

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Response {
    matches: Vec<Match>,
    files: Vec<FileCount>,
    truncated: bool,
    timed_out: bool,
    next_cursor: Option<String>,
    stats: Stats,
    warnings: Vec<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Match {
    path: String,
    line: u64,
    column: u64,
    end_line: u64,
    end_column: u64,
    text: String,
    submatches: Vec<Submatch>,
    context_before: Vec<String>,
    context_after: Vec<String>,
    redactions: Vec<Redaction>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Redaction {
    line: u64,
    rule: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct RedactionCount {
    rule: String,
    lines: u64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Submatch {
    start: usize,
    end: usize,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct FileCount {
    path: String,
    count: u64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Stats {
    files_scanned: u64,
    files_matched: u64,
    bytes_searched: u64,
    matches_returned: u64,
    elapsed_ms: u64,
    skipped: Skipped,
    /// "none", "cannot_narrow" or "served".
    index: String,
    files_skipped_by_index: u64,
    lines_redacted: u64,
    redacted_by: Vec<RedactionCount>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Skipped {
    binary: u64,
    too_large: u64,
    denied: u64,
    unreadable: u64,
    ignored: u64,
    hidden: u64,
}

fn decode(tree: &Tree, args: &[&str]) -> Response {
    let out = run(tree.path(), args);
    let text = stdout(&out);
    assert_eq!(text.matches('\n').count(), 1, "one JSON object on one line: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn content_output_has_the_documented_shape() {
    let t = Tree::new();
    t.write("src/a.rs", "one\nlet x = foo(foo);\nthree\n");
    let r = decode(&t, &["search", "--json-page", "-C", "1", "foo"]);
    assert_eq!(r.matches.len(), 1);
    let m = &r.matches[0];
    assert_eq!((m.path.as_str(), m.line, m.column, m.end_line, m.end_column), ("src/a.rs", 2, 9, 2, 16));
    assert_eq!(m.text, "let x = foo(foo);");
    let spans: Vec<&str> = m.submatches.iter().map(|s| &m.text[s.start..s.end]).collect();
    assert_eq!(spans, ["foo", "foo"]);
    assert_eq!(
        (m.context_before.as_slice(), m.context_after.as_slice()),
        (&["one".to_string()][..], &["three".to_string()][..])
    );
    assert!(r.files.is_empty() && !r.truncated && !r.timed_out && r.next_cursor.is_none());
    assert_eq!((r.stats.files_scanned, r.stats.files_matched, r.stats.matches_returned), (1, 1, 1));
    assert_eq!(r.stats.bytes_searched, 28);
}

#[test]
fn files_and_count_outputs_have_the_documented_shape() {
    let t = Tree::new();
    t.write("a.txt", "foo\nfoo\nbar\n").write("b.txt", "foo\n").write("c.txt", "nothing\n");
    let r = decode(&t, &["search", "--json-page", "-c", "foo"]);
    let got: Vec<(&str, u64)> = r.files.iter().map(|f| (f.path.as_str(), f.count)).collect();
    assert_eq!(got, [("a.txt", 2), ("b.txt", 1)]);
    assert!(r.matches.is_empty());
    let r = decode(&t, &["search", "--json-page", "-l", "foo"]);
    assert_eq!(r.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["a.txt", "b.txt"]);
}

#[test]
fn skip_reasons_are_counted() {
    let t = Tree::new();
    t.write("bin.dat", b"foo\x00foo\n".to_vec())
        .write("big.txt", "foo\n".repeat(1000))
        .write("id_rsa", "foo\n")
        .write("ok.txt", "foo\n");
    let r = decode(&t, &["search", "--json-page", "--max-filesize", "1K", "foo"]);
    assert_eq!(r.matches.iter().map(|m| m.path.as_str()).collect::<Vec<_>>(), ["ok.txt"]);
    assert_eq!((r.stats.skipped.binary, r.stats.skipped.too_large, r.stats.skipped.denied), (1, 1, 1));
    assert!(r.warnings.iter().any(|w| w.contains("max-filesize")), "{:?}", r.warnings);
    // A binary file skipped is only counted, as rg says nothing of it...
    assert!(!r.warnings.iter().any(|w| w.contains("binary")), "{:?}", r.warnings);
    // ...unless nothing was found, or the caller named it.
    let r = decode(&t, &["search", "--json-page", "nothing-matches-this"]);
    assert!(r.warnings.iter().any(|w| w == "1 binary file(s) skipped"), "{:?}", r.warnings);
    let r = decode(&t, &["search", "--json-page", "foo", "bin.dat", "ok.txt"]);
    assert_eq!(r.matches.len(), 1);
    assert_eq!(r.warnings, ["bin.dat: binary file, not searched"]);
}
