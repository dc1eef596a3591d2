//! Structural search against the ast-grep CLI itself (the same version as
//! the ast-grep-core inside the component, installed in .venv by
//! scripts/test): on generated sources in every built-in language, for
//! patterns with and without meta-variables, the matches — path, start, end,
//! text and meta-variables — agree. Then paging, errors and limits.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::util::{json, on_terminal, run, stderr, stdout, Tree};

fn ast_grep() -> std::path::PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/ast-grep");
    assert!(bin.exists(), "{} is missing: run scripts/test", bin.display());
    bin
}

/// A small deterministic generator: `pick` chooses among `n`.
struct Gen(u64);

impl Gen {
    fn pick(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize % n
    }

    fn name(&mut self) -> String {
        ["alpha", "beta", "gamma", "delta", "x", "y"][self.pick(6)].to_string()
    }

    fn args(&mut self) -> String {
        (0..self.pick(4))
            .map(|i| if self.pick(2) == 0 { self.name() } else { i.to_string() })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// (extension, language, file text from statements, statement templates).
/// In templates: V a variable, F a function, A arguments, N a number.
type Lang = (&'static str, &'static str, fn(usize, &str) -> String, &'static [&'static str]);

const LANGS: &[Lang] = &[
    (
        "rs",
        "rust",
        |i, body| format!("fn f{i}(a: i32) -> i32 {{\n{body}    a\n}}\n"),
        &[
            "    let V = F(A);",
            "    let V = V.unwrap();",
            "    if V > N { F(V); }",
            "    V.push(N);",
            "    let V = V.iter().map(|x| x + N).count();",
        ],
    ),
    (
        "py",
        "python",
        |i, body| format!("def f{i}(a, b):\n{body}    return a\n"),
        &["    V = F(A)", "    print(V)", "    if V > N:\n        F(V)", "    V = V + N", "    V.append(N)"],
    ),
    (
        "js",
        "javascript",
        |i, body| format!("function f{i}(a, b) {{\n{body}  return a;\n}}\n"),
        &["  const V = F(A);", "  console.log(V);", "  if (V === N) { F(V); }", "  let V = V + N;"],
    ),
    (
        "ts",
        "typescript",
        |i, body| format!("function f{i}(a: number): number {{\n{body}  return a;\n}}\n"),
        &["  const V: number = F(A);", "  console.log(V);", "  if (V === N) { F(V); }", "  let V = V as number;"],
    ),
    (
        "tsx",
        "tsx",
        |i, body| format!("function C{i}() {{\n{body}  return <div className=\"c{i}\">{{a}}</div>;\n}}\n"),
        &["  const V = F(A);", "  const V = <span>{V}</span>;", "  if (V === N) { F(V); }"],
    ),
    (
        "go",
        "go",
        |i, body| format!("package main\n\nfunc f{i}(a int) int {{\n{body}\treturn a\n}}\n"),
        &["\tV := F(A)", "\tfmt.Println(V)", "\tif V > N {\n\t\tF(V)\n\t}", "\tV = V + N"],
    ),
    (
        "java",
        "java",
        |i, body| format!("class C{i} {{\n  int f(int a) {{\n{body}    return a;\n  }}\n}}\n"),
        &["    int V = F(A);", "    System.out.println(V);", "    if (V > N) { F(V); }", "    V = V + N;"],
    ),
    (
        "c",
        "c",
        |i, body| format!("int f{i}(int a) {{\n{body}  return a;\n}}\n"),
        &["  int V = F(A);", "  printf(\"%d\", V);", "  if (V > N) { F(V); }", "  V = V + N;"],
    ),
    (
        "cpp",
        "cpp",
        |i, body| format!("int f{i}(int a) {{\n{body}  return a;\n}}\n"),
        &["  int V = F(A);", "  std::cout << V;", "  if (V > N) { F(V); }", "  auto V = std::make_pair(V, N);"],
    ),
    (
        "json",
        "json",
        |i, body| format!("{{\n  \"id\": {i},\n{body}  \"end\": true\n}}\n"),
        &["  \"name\": \"V\",", "  \"n\": N,", "  \"items\": [N, N, \"V\"],", "  \"obj\": {\"name\": \"V\"},"],
    ),
];

/// Patterns per language, with and without meta-variables.
fn patterns(lang: &str) -> &'static [&'static str] {
    match lang {
        "rust" => &["$F($$$A)", "$X.unwrap()", "let $V = $E;", "if $C { $$$B }", "$A.push($B)", "count()"],
        "python" => &["$F($$$A)", "print($X)", "$A + $B", "if $C: $$$B", "$L.append(1)"],
        "javascript" => &["console.log($$$A)", "$A === $B", "const $V = $E", "function $F($$$P) { $$$B }"],
        "typescript" => &["const $V: number = $E", "$F($$$A)", "$X as number", "console.log(alpha)"],
        "tsx" => &["<div className=$C>$$$K</div>", "$F($$$A)", "<span>{$X}</span>"],
        "go" => &["fmt.Println($$$A)", "$V := $E", "if $C { $$$B }", "return a"],
        "java" => &["System.out.println($X)", "int $V = $E;", "$F($$$A)"],
        "c" => &["printf($$$A)", "int $V = $E;", "return $X;", "$A + $B"],
        "cpp" => &["std::cout << $X", "return $X;", "$F($$$A)", "std::make_pair($A, $B)"],
        "json" => &["\"name\": $V", "[$$$A]", "{\"name\": $N}", "\"name\"", "[$A, $B, $C]"],
        _ => unreachable!(),
    }
}

fn generated(seed: u64) -> Tree {
    let mut g = Gen(seed);
    let t = Tree::new();
    for (ext, _, wrap, stmts) in LANGS {
        for f in 0..8 {
            let mut body = String::new();
            for _ in 0..g.pick(12) {
                let s = stmts[g.pick(stmts.len())];
                let mut line = String::new();
                for c in s.chars() {
                    match c {
                        'V' => line.push_str(&g.name()),
                        'F' => line.push_str(["foo", "bar", "calc"][g.pick(3)]),
                        'A' => line.push_str(&g.args()),
                        'N' => line.push_str(&g.pick(100).to_string()),
                        c => line.push(c),
                    }
                }
                body.push_str(&line);
                body.push('\n');
            }
            let dir = ["", "src/", "src/deep/"][g.pick(3)];
            t.write(&format!("{dir}f{f}.{ext}"), wrap(f, &body));
        }
    }
    t
}

/// A match as both tools describe it: path, 1-based start and end, text,
/// and meta-variables (a multiple one as its text from first to last node).
type Spot = (String, u64, u64, u64, u64, String, BTreeMap<String, String>);

fn oracle(root: &Path, pattern: &str, lang: Option<&str>) -> Option<Vec<Spot>> {
    let mut cmd = Command::new(ast_grep());
    cmd.current_dir(root).args(["run", "--json=compact", "-p", pattern]);
    if let Some(l) = lang {
        cmd.args(["-l", l]);
    }
    let out = cmd.arg(".").output().unwrap();
    // As grep: 1 is "no match", anything else an error.
    if !matches!(out.status.code(), Some(0 | 1)) {
        return None;
    }
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut spots = Vec::new();
    for m in v.as_array().unwrap() {
        let path = m["file"].as_str().unwrap().trim_start_matches("./").to_string();
        let source = std::fs::read(root.join(&path)).unwrap();
        let pos = |p: &Value| (p["line"].as_u64().unwrap() + 1, p["column"].as_u64().unwrap() + 1);
        let (line, col) = pos(&m["range"]["start"]);
        let (end_line, end_col) = pos(&m["range"]["end"]);
        let mut vars = BTreeMap::new();
        let none = serde_json::Map::new();
        let group = |k: &str| m["metaVariables"][k].as_object().unwrap_or(&none).clone();
        for (name, n) in &group("single") {
            vars.insert(name.clone(), n["text"].as_str().unwrap().to_string());
        }
        for (name, nodes) in &group("multi") {
            let nodes = nodes.as_array().unwrap();
            let text = match (nodes.first(), nodes.last()) {
                (Some(a), Some(b)) => {
                    let (s, e) = (
                        a["range"]["byteOffset"]["start"].as_u64().unwrap(),
                        b["range"]["byteOffset"]["end"].as_u64().unwrap(),
                    );
                    String::from_utf8(source[s as usize..e as usize].to_vec()).unwrap()
                }
                _ => String::new(),
            };
            vars.insert(name.clone(), text);
        }
        // The CLI lists `$$$` captures that matched nothing only sometimes;
        // an empty one says nothing either way.
        vars.retain(|_, t| !t.is_empty());
        spots.push((path, line, col, end_line, end_col, m["text"].as_str().unwrap().to_string(), vars));
    }
    spots.sort();
    Some(spots)
}

fn ours(root: &Path, pattern: &str, lang: Option<&str>) -> Option<Vec<Spot>> {
    let mut args = vec!["ast", "--json-page", "--max-results", "5000", pattern];
    if let Some(l) = lang {
        args.extend(["--lang", l]);
    }
    let out = run(root, &args);
    if out.status.code() == Some(2) {
        return None;
    }
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["truncated"], false);
    let mut spots: Vec<Spot> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let n = |k: &str| m[k].as_u64().unwrap();
            let mut vars: BTreeMap<String, String> = m["meta_variables"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| (v["name"].as_str().unwrap().to_string(), v["text"].as_str().unwrap().to_string()))
                .collect();
            vars.retain(|_, t| !t.is_empty());
            let text = m["text"].as_str().unwrap().to_string();
            (
                m["path"].as_str().unwrap().to_string(),
                n("line"),
                n("column"),
                n("end_line"),
                n("end_column"),
                text,
                vars,
            )
        })
        .collect();
    let starts: Vec<_> = spots.iter().map(|s| (s.0.clone(), s.1, s.2)).collect();
    assert!(starts.is_sorted(), "sandgrep's matches come sorted by path and start: {starts:?}");
    spots.sort();
    Some(spots)
}

#[test]
fn matches_agree_with_the_ast_grep_cli_in_every_language() {
    for seed in [11, 12] {
        let t = generated(seed);
        // Scanned, then through an index (built once the files are past the
        // window in which it distrusts their times).
        for indexed in [false, true] {
            if indexed {
                std::thread::sleep(std::time::Duration::from_millis(2200));
                assert!(run(t.path(), &["index"]).status.success());
            }
            let mut compared = 0;
            for (_, lang, _, _) in LANGS {
                for pattern in patterns(lang) {
                    let want = oracle(t.path(), pattern, Some(lang));
                    let got = ours(t.path(), pattern, Some(lang));
                    assert_eq!(got, want, "{lang} {pattern:?} (seed {seed}, indexed: {indexed})");
                    compared += want.map_or(0, |w| w.len());
                }
            }
            assert!(compared > 300, "too few matches to compare: {compared}");
            // Without a language, each file's own (by extension).
            for pattern in ["$F($$$A)", "foo($X)", "return a"] {
                let (got, want) = (ours(t.path(), pattern, None), oracle(t.path(), pattern, None));
                assert_eq!(got, want, "{pattern:?} in every language (indexed: {indexed})");
            }
        }
        // The index left files unread where the pattern names words.
        let v = json(t.path(), &["ast", "--json-page", "fmt.Println($$$A)"]);
        assert_eq!(v["stats"]["index"], "served", "{v}");
        assert!(v["stats"]["files_skipped_by_index"].as_u64() > Some(0), "{v}");
    }
}

#[test]
fn pages_of_ast_matches_concatenate_to_the_whole_answer() {
    let t = generated(13);
    let all = json(t.path(), &["ast", "--json-page", "--max-results", "5000", "$F($$$A)", "--lang", "py"]);
    let all = all["matches"].as_array().unwrap().clone();
    assert!(all.len() > 6, "{}", all.len());
    let mut got = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = vec!["ast", "--json-page", "--max-results", "3", "$F($$$A)", "--lang", "py"];
        if let Some(c) = &cursor {
            args.extend(["--cursor", c]);
        }
        let page = json(t.path(), &args);
        got.extend(page["matches"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(got, all);
}

#[test]
fn bad_patterns_languages_and_paths_are_clear_errors() {
    let t = generated(14);
    let out = run(t.path(), &["ast", "x", "--lang", "cobol"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown language \"cobol\""), "{}", stderr(&out));
    let out = run(t.path(), &["ast", "$$$A", "--lang", "rust"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("invalid pattern"), "{}", stderr(&out));
    let out = run(t.path(), &["ast", "foo($X)", "../"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("outside the workspace"), "{}", stderr(&out));
    // A file that does not parse is searched as far as the parser got, as
    // ast-grep does; binary files are skipped and counted.
    t.write("broken.py", "def f(:\n    foo(1)\n");
    t.write("bin.py", b"foo(1)\n\0\n");
    let v = json(t.path(), &["ast", "--json-page", "foo($X)", "--lang", "py", "broken.py", "bin.py"]);
    assert_eq!(v["stats"]["skipped"]["binary"], 1);
}

#[test]
fn a_timeout_returns_what_was_found_and_paging_goes_on() {
    let t = Tree::new();
    for i in 0..200 {
        t.write(&format!("m{i:03}.py"), format!("def f{i}(a):\n    return g(a, {i})\n").repeat(20));
    }
    let all = json(t.path(), &["ast", "--json-page", "--max-results", "5000", "g($A, $B)"]);
    let all = all["matches"].as_array().unwrap().clone();
    assert_eq!(all.len(), 4000);
    let (mut got, mut pages, mut timed_out) = (Vec::new(), 0, false);
    let mut cursor: Option<String> = None;
    loop {
        let mut args = vec!["ast", "--json-page", "--max-results", "5000", "--timeout", "1", "g($A, $B)"];
        if let Some(c) = &cursor {
            args.extend(["--cursor", c]);
        }
        let page = json(t.path(), &args);
        // Every page makes progress: at least one file.
        assert!(!page["matches"].as_array().unwrap().is_empty());
        timed_out |= page["timed_out"] == true;
        got.extend(page["matches"].as_array().unwrap().iter().cloned());
        pages += 1;
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert!(timed_out && pages > 1, "1 ms should not be enough for 200 files");
    assert_eq!(got, all);
}

/// `ast-grep run` in `root` with `args`, its output.
fn ast_grep_run(root: &Path, args: &[&str]) -> std::process::Output {
    Command::new(ast_grep()).current_dir(root).arg("run").args(args).output().unwrap()
}

/// JSON Lines sorted by file and start (ast-grep's file order is its
/// threads').
fn sorted_lines(text: &str) -> Vec<Value> {
    let mut v: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    v.sort_by_key(|m| (m["file"].as_str().unwrap().to_string(), m["range"]["byteOffset"]["start"].as_u64()));
    v
}

#[test]
fn every_match_streams_as_ast_grep_prints_it() {
    // More matches than a page holds (200), in files of two languages.
    let t = Tree::new();
    for i in 0..30 {
        let body: String = (0..9).map(|j| format!("x{j} = g(a{i}, é{j})\n")).collect();
        t.write(&format!("d{}/m{i:02}.py", i % 3), body);
    }
    t.write("w.rs", "fn main() {\n    let v = g(1,\n        2);\n    g(3, 4); g(5, 6);\n}\n");
    let pattern = "g($A, $B)";
    let text = run(t.path(), &["ast", pattern]);
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    assert_eq!(stderr(&text), "", "no warning for languages not asked for");
    // Piped: each file's lines as ast-grep prints them.
    let mut want: Vec<String> = Vec::new();
    let mut files: Vec<String> = (0..30).map(|i| format!("d{}/m{i:02}.py", i % 3)).collect();
    files.push("w.rs".into());
    files.sort();
    for f in &files {
        want.push(stdout(&ast_grep_run(t.path(), &["-p", pattern, f])));
    }
    assert_eq!(stdout(&text), want.concat());
    assert_eq!(stdout(&text).lines().count(), 30 * 9 + 3, "every match, the one over two lines whole");
    // --json: ast-grep's --json=stream, one match a line.
    let ours = run(t.path(), &["ast", "--json", pattern]);
    let theirs = ast_grep_run(t.path(), &["-p", pattern, "--json=stream", "."]);
    let (ours, theirs) = (stdout(&ours), stdout(&theirs));
    assert_eq!(ours.lines().count(), 30 * 9 + 3);
    let theirs: Vec<Value> = sorted_lines(&theirs.replace("\"file\":\"./", "\"file\":\""));
    let ours_sorted = sorted_lines(&ours);
    assert_eq!(ours_sorted, theirs);
    // In path order (rg's), as they come.
    let got: Vec<Value> = ours.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(got, ours_sorted);
    // One page still, where asked for.
    let v = json(t.path(), &["ast", "--json-page", pattern]);
    assert_eq!(v["matches"].as_array().unwrap().len(), 200);
    let out = run(t.path(), &["ast", pattern, "--max-results", "5"]);
    assert_eq!(stdout(&out).lines().count(), 5);
    assert!(stderr(&out).contains("--cursor"), "{}", stderr(&out));
}

#[test]
fn on_a_terminal_matches_come_under_headings_in_colors_as_ast_grep_shows_them() {
    let t = Tree::new();
    t.write("w.rs", "fn main() {\n    let v = g(1,\n        2);\n    g(3, 4); g(5, 6);\n}\n");
    let body: String = (0..12).map(|j| if j % 4 == 0 { format!("g({j}, 1)\n") } else { "pass\n".into() }).collect();
    t.write("a.py", body);
    let pattern = "'g($A, $B)'";
    let dir = t.path().display();
    let mut want = String::new();
    for f in ["a.py", "w.rs"] {
        let out = on_terminal(&format!("cd {dir} && {} run -p {pattern} {f}", ast_grep().display()));
        // (ast-grep asks the terminal for its colors first.)
        want.push_str(stdout(&out).trim_start_matches("\x1b]11;?\x07\x1b[5n"));
    }
    let ours = on_terminal(&format!("{} --root {dir} ast {pattern}", env!("CARGO_BIN_EXE_sandgrep")));
    assert_eq!(stdout(&ours), want);
    assert!(want.contains("\x1b[1;31m"), "{want:?}");
}

#[test]
fn a_pattern_error_names_the_language_of_the_files() {
    let t = Tree::new();
    t.write("main.go", "package main\n\nfunc main() {}\n").write("go.json", "{}\n");
    let out = run(t.path(), &["ast", "func ("]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("does not parse as go"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("as rust"), "{}", stderr(&out));
}
