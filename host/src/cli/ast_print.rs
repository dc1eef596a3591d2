//! `ast`'s output as the `ast-grep` CLI prints it: piped, each line of a
//! match whole as `path:line:text`; on a terminal, under a heading, with
//! line numbers and colors; `--json`, its `--json=stream` (one match object
//! a line). The component gives each match's place and text; the lines
//! around it are read (through the component, so redacted as ever) once a
//! file.

use std::io::{self, Write};

use sandgrep::{render, AstMatch, RangeType, ReadFileRequest, Sandbox};
use serde_json::{json, Map, Value};

/// Lines a read asks for at once.
const CHUNK: u64 = 5000;

/// The lines of the file last asked for, from its first, as far as read.
#[derive(Default)]
struct Lines {
    path: String,
    /// Each with its terminator.
    lines: Vec<String>,
    /// Byte offset of each line's start.
    starts: Vec<u64>,
    /// The file has no more lines (or could not be read).
    done: bool,
}

impl Lines {
    /// Line `n` (1-based) of `path`, without its terminator, if it can be read.
    fn get(&mut self, sandbox: &Sandbox, path: &str, n: u64) -> Option<&str> {
        self.have(sandbox, path, n).then(|| {
            let l = &self.lines[n as usize - 1];
            let l = l.strip_suffix('\n').unwrap_or(l);
            l.strip_suffix('\r').unwrap_or(l)
        })
    }

    /// The byte offset of line `n`'s start.
    fn start(&mut self, sandbox: &Sandbox, path: &str, n: u64) -> Option<u64> {
        self.have(sandbox, path, n).then(|| self.starts[n as usize - 1])
    }

    fn have(&mut self, sandbox: &Sandbox, path: &str, n: u64) -> bool {
        if self.path != path {
            *self = Lines { path: path.to_string(), ..Lines::default() };
        }
        while (self.lines.len() as u64) < n && !self.done {
            let mut r = ReadFileRequest::new(path);
            r.range_type = Some(RangeType::Lines);
            r.start_line = Some(self.lines.len() as u64 + 1);
            r.max_lines = Some(CHUNK);
            let Ok(got) = sandbox.read_file(&r) else {
                self.done = true;
                break;
            };
            let before = self.lines.len();
            let mut at = self.starts.last().zip(self.lines.last()).map_or(0, |(s, l)| s + l.len() as u64);
            for line in got.content.split_inclusive('\n') {
                self.starts.push(at);
                at += line.len() as u64;
                self.lines.push(line.to_string());
            }
            self.done |= !got.is_truncated || self.lines.len() == before;
        }
        n >= 1 && (self.lines.len() as u64) >= n
    }
}

/// The byte offset in `line` of 1-based byte column `column`, on a
/// character boundary.
fn at(line: &str, column: u64) -> usize {
    let mut i = (column.saturating_sub(1) as usize).min(line.len());
    while !line.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Text escaped as sandgrep shows it, line by line.
fn esc(s: &str) -> String {
    s.split('\n').map(|l| render::line(l).into_owned()).collect::<Vec<_>>().join("\n")
}

/// Whether colors suit standard output (ast-grep's `--color auto`).
pub(crate) fn colors() -> bool {
    use std::io::IsTerminal;
    io::stdout().is_terminal()
        && std::env::var_os("TERM").is_some_and(|t| t != "dumb")
        && std::env::var_os("NO_COLOR").is_none()
}

const PATH_STYLE: &str = "\x1b[3;36m";
const MATCH_STYLE: &str = "\x1b[1;31m";
const NUMBER_STYLE: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// Matches on lines next to each other print together, as ast-grep
/// merges them: the lines from the first one's start to the last one's
/// end, once, each match highlighted.
struct Block {
    path: String,
    line: u64,
    /// The end line of the match that began the block (ast-grep merges a
    /// match that starts at most one line after it).
    first_end: u64,
    end: (u64, u64),
    /// The text from the start of the block's first line, matches marked.
    text: String,
}

/// Prints matches as ast-grep's text does.
pub(crate) struct TextPrinter<'s, W: Write> {
    out: W,
    sandbox: &'s Sandbox,
    lines: Lines,
    heading: bool,
    color: bool,
    block: Option<Block>,
    /// The file whose heading was printed last.
    headed: Option<String>,
}

impl<'s, W: Write> TextPrinter<'s, W> {
    pub(crate) fn new(out: W, sandbox: &'s Sandbox, heading: bool, color: bool) -> Self {
        TextPrinter { out, sandbox, lines: Lines::default(), heading, color, block: None, headed: None }
    }

    fn mark(&self, text: &mut String, matched: &str) {
        if !self.color {
            text.push_str(&esc(matched));
            return;
        }
        for (i, piece) in matched.split('\n').enumerate() {
            if i > 0 {
                text.push('\n');
            }
            if !piece.is_empty() {
                text.push_str(&format!("{MATCH_STYLE}{}{RESET}", render::line(piece)));
            }
        }
    }

    /// The text between two places of the block's file, from its lines (the
    /// file as read), or None.
    fn between(&mut self, path: &str, from: (u64, u64), to: (u64, u64)) -> Option<String> {
        let mut s = String::new();
        for n in from.0..=to.0 {
            let line = self.lines.get(self.sandbox, path, n)?.to_string();
            let a = if n == from.0 { at(&line, from.1) } else { 0 };
            let b = if n == to.0 { at(&line, to.1) } else { line.len() };
            s.push_str(line.get(a..b.max(a))?);
            if n != to.0 {
                s.push('\n');
            }
        }
        Some(s)
    }

    pub(crate) fn print(&mut self, m: &AstMatch) -> io::Result<()> {
        if let Some(b) = &self.block {
            // (A match inside the last one is shown by it.)
            if b.path == m.path && (m.line, m.column) < b.end {
                return Ok(());
            }
            if b.path == m.path && m.line <= b.first_end + 1 {
                let (path, end) = (b.path.clone(), b.end);
                let gap = self.between(&path, end, (m.line, m.column)).unwrap_or_else(|| " ".into());
                let mut text = std::mem::take(&mut self.block.as_mut().expect("a block").text);
                text.push_str(&esc(&gap));
                self.mark(&mut text, &m.text);
                let b = self.block.as_mut().expect("a block");
                b.text = text;
                b.end = (m.end_line, m.end_column);
                return Ok(());
            }
            self.end_block()?;
        }
        if self.heading && self.headed.as_deref() != Some(&m.path) {
            if self.headed.is_some() {
                writeln!(self.out)?;
            }
            let (on, off) = if self.color { (PATH_STYLE, RESET) } else { ("", "") };
            writeln!(self.out, "{on}{}{off}", render::path(&m.path))?;
            self.headed = Some(m.path.clone());
        }
        let leading = match self.lines.get(self.sandbox, &m.path, m.line) {
            // The line as read must hold the match where it says (a line
            // with a secret redacted may not).
            Some(l)
                if l.get(at(l, m.column)..)
                    .is_some_and(|rest| rest.starts_with(m.text.lines().next().unwrap_or(""))) =>
            {
                esc(&l[..at(l, m.column)])
            }
            _ => String::new(),
        };
        let mut text = leading;
        self.mark(&mut text, &m.text);
        self.block = Some(Block {
            path: m.path.clone(),
            line: m.line,
            first_end: m.end_line,
            end: (m.end_line, m.end_column),
            text,
        });
        Ok(())
    }

    fn end_block(&mut self) -> io::Result<()> {
        let Some(mut b) = self.block.take() else { return Ok(()) };
        if let Some(line) = self.lines.get(self.sandbox, &b.path, b.end.0) {
            let rest = line.get(at(line, b.end.1)..).unwrap_or("");
            b.text.push_str(&esc(rest));
        }
        let lines: Vec<&str> = b.text.split('\n').collect();
        let width = (lines.len() as u64 + b.line).to_string().len();
        for (i, line) in lines.iter().enumerate() {
            let n = b.line + i as u64;
            if self.heading {
                let (on, off) = if self.color { (NUMBER_STYLE, RESET) } else { ("", "") };
                writeln!(self.out, "{on}{n:<width$}{off}│{line}")?;
            } else {
                writeln!(self.out, "{}:{n}:{line}", render::path(&b.path))?;
            }
        }
        Ok(())
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.end_block()?;
        if self.heading && self.headed.is_some() {
            writeln!(self.out)?;
        }
        self.out.flush()
    }
}

/// The ast-grep name of a file's language (or the one asked for).
pub(crate) fn language(path: &str, asked: Option<&str>) -> &'static str {
    let key = match asked {
        Some(l) => l.to_ascii_lowercase(),
        None => path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default(),
    };
    match key.as_str() {
        "rs" | "rust" => "Rust",
        "py" | "py3" | "pyi" | "bzl" | "bazel" | "python" => "Python",
        "cjs" | "js" | "mjs" | "jsx" | "javascript" => "JavaScript",
        "ts" | "cts" | "mts" | "typescript" => "TypeScript",
        "tsx" => "Tsx",
        "go" | "golang" => "Go",
        "java" => "Java",
        "c" | "h" => "C",
        "cc" | "hpp" | "cpp" | "c++" | "hh" | "cxx" | "cu" | "ino" => "Cpp",
        "json" => "Json",
        _ => "",
    }
}

/// Prints matches as `ast-grep --json=stream` does.
pub(crate) struct JsonPrinter<'s, W: Write> {
    out: W,
    sandbox: &'s Sandbox,
    lines: Lines,
    lang: Option<String>,
    /// The pattern (which of its meta-variables are `$$$`).
    pattern: String,
}

impl<'s, W: Write> JsonPrinter<'s, W> {
    pub(crate) fn new(out: W, sandbox: &'s Sandbox, lang: Option<String>, pattern: &str) -> Self {
        JsonPrinter { out, sandbox, lines: Lines::default(), lang, pattern: pattern.to_string() }
    }

    /// ast-grep's range of `(line, column)` to `(end line, end column)`
    /// (1-based, byte columns): 0-based lines, columns in characters,
    /// byte offsets in the file.
    fn range(&mut self, path: &str, start: (u64, u64), end: (u64, u64)) -> Value {
        let mut point = |(line, column): (u64, u64)| {
            let offset = self.lines.start(self.sandbox, path, line).map(|s| s + column - 1);
            let chars = self.lines.get(self.sandbox, path, line).map(|l| l[..at(l, column)].chars().count() as u64);
            (offset.unwrap_or(0), json!({"line": line - 1, "column": chars.unwrap_or(column - 1)}))
        };
        let (a, from) = point(start);
        let (b, to) = point(end);
        json!({"byteOffset": {"start": a, "end": b}, "start": from, "end": to})
    }

    pub(crate) fn print(&mut self, m: &AstMatch) -> io::Result<()> {
        let path = m.path.as_str();
        let range = self.range(path, (m.line, m.column), (m.end_line, m.end_column));
        let mut lines = Vec::new();
        for n in m.line..=m.end_line {
            match self.lines.get(self.sandbox, path, n) {
                Some(l) => lines.push(l.to_string()),
                None => break,
            }
        }
        let first = lines.first().map_or("", String::as_str);
        let last = lines.last().map_or("", String::as_str);
        let leading = first[..at(first, m.column)].chars().count();
        let trailing = last.get(at(last, m.end_column)..).unwrap_or("").chars().count();
        // Each meta-variable where its text first stands in the match.
        let (mut single, mut multi) = (Map::new(), Map::new());
        for v in &m.meta_variables {
            let found = m.text.find(v.text.as_str()).filter(|_| !v.text.is_empty());
            let node = |me: &mut Self| -> Option<Value> {
                let i = found?;
                let before = &m.text[..i];
                let line = m.line + before.matches('\n').count() as u64;
                let column = match before.rfind('\n') {
                    Some(nl) => (i - nl) as u64,
                    None => m.column + i as u64,
                };
                let inner = &v.text;
                let end_line = line + inner.matches('\n').count() as u64;
                let end_column = match inner.rfind('\n') {
                    Some(nl) => (inner.len() - nl) as u64,
                    None => column + inner.len() as u64,
                };
                Some(json!({"text": v.text, "range": me.range(path, (line, column), (end_line, end_column))}))
            };
            let node = node(self);
            // (The component gives a `$$$` capture's text from its first to
            // its last node, as one.)
            if !self.pattern.contains(&format!("$$${}", v.name)) {
                if let Some(n) = node {
                    single.insert(v.name.clone(), n);
                }
            } else {
                multi.insert(v.name.clone(), Value::Array(node.into_iter().collect()));
            }
        }
        let v = json!({
            "text": m.text,
            "range": range,
            "file": path,
            "lines": lines.join("\n"),
            "charCount": {"leading": leading, "trailing": trailing},
            "language": language(path, self.lang.as_deref()),
            "metaVariables": {"single": single, "multi": multi, "transformed": {}},
        });
        serde_json::to_writer(&mut self.out, &v)?;
        writeln!(self.out)
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
