//! ripgrep's JSON Lines (`rg --json`), message for message: a `begin` for
//! each file with a match, its `match` and `context` lines, its `end` with
//! the file's stats, and a `summary` after the last. The CLI feeds it every
//! page of a search in order, as it feeds the text printer
//! (`search::Results`); it merges a file's matches and context across
//! pages so that no line shows twice.
//!
//! What differs from rg's, by design: text comes as WIT strings, so bytes
//! that are not UTF-8 are lossily decoded (rg sends them as `bytes`, in
//! base64), and lines with a secret show `[REDACTED]`; timings are this
//! search's own.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use sandgrep::TextMatch;

use crate::cli::printer::{Names, Totals};

/// A line (or, for a match over several, lines) waiting to be printed.
enum Line {
    Match { lines: String, offset: u64, spans: Vec<(usize, usize)>, last: u64 },
    Context { lines: String, offset: u64 },
}

/// The file being printed.
struct File {
    /// As the component names it, and as printed.
    path: String,
    name: String,
    started: Instant,
    bytes_printed: u64,
    bytes_searched: u64,
    matched_lines: u64,
    matches: u64,
    /// A match was printed (not only passthru's lines of context).
    matched: bool,
    /// Where its search met a NUL byte.
    binary_offset: Option<u64>,
    /// The last line printed.
    last: Option<u64>,
    pending: BTreeMap<u64, Line>,
}

pub struct Printer<W: Write> {
    out: W,
    /// `-q`: the summary alone.
    quiet: bool,
    names: Names,
    /// The paths named (as given, as workspace paths), for each root's names.
    given: Vec<String>,
    paths: Vec<String>,
    /// `-r`: each submatch's replacement (see [`interpolate`]).
    replacement: Option<String>,
    /// `--null-data`: lines end at NUL bytes.
    pub null_data: bool,
    /// `-N`: no line numbers (`null`).
    pub line_numbers: bool,
    file: Option<File>,
    pub totals: Totals,
    bytes_printed: u64,
    /// Bytes counted twice: files a page cut short searched again by the next.
    searched_again: u64,
    searches_with_match: u64,
    matched_lines: u64,
    matches: u64,
    elapsed: Duration,
    /// Compressed files whose stream broke off: an error, as rg's search
    /// of them (no `end`, nothing of them in the summary).
    broken: std::collections::BTreeSet<String>,
}

impl<W: Write> Printer<W> {
    pub fn new(out: W, quiet: bool, given: &[String], paths: &[String], replacement: Option<String>) -> Printer<W> {
        Printer {
            out,
            quiet,
            names: Names::new(given, paths),
            given: given.to_vec(),
            paths: paths.to_vec(),
            replacement,
            null_data: false,
            line_numbers: true,
            file: None,
            totals: Totals::default(),
            bytes_printed: 0,
            searched_again: 0,
            searches_with_match: 0,
            matched_lines: 0,
            matches: 0,
            elapsed: Duration::ZERO,
            broken: Default::default(),
        }
    }

    /// The search of the file at `path` ended in an error (rg prints its
    /// lines found before it, then no `end`, and counts nothing of it).
    pub fn broken(&mut self, path: &str) {
        self.broken.insert(path.to_string());
    }

    /// Writes one message (counted for the file's `bytes_printed`).
    fn message(&mut self, v: &Value) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        let mut line = serde_json::to_vec(v)?;
        line.push(b'\n');
        if let Some(f) = &mut self.file {
            f.bytes_printed += line.len() as u64;
        }
        self.out.write_all(&line)
    }

    /// One match of content output, with its context.
    pub fn text_match(&mut self, m: &TextMatch) -> io::Result<()> {
        if self.file.as_ref().is_none_or(|f| f.path != m.path) {
            self.end_file()?;
            let name = self.names.show(&m.path);
            self.file = Some(File {
                path: m.path.clone(),
                name: name.clone(),
                started: Instant::now(),
                bytes_printed: 0,
                bytes_searched: 0,
                matched_lines: 0,
                matches: 0,
                matched: false,
                binary_offset: None,
                last: None,
                pending: BTreeMap::new(),
            });
            self.message(&json!({"type": "begin", "data": {"path": {"text": name}}}))?;
        }
        let file = self.file.as_mut().expect("just set");
        file.bytes_searched = m.bytes_searched;
        let first = m.line - m.context_before.len() as u64;
        self.flush_before(first)?;
        let file = self.file.as_mut().expect("just set");
        // A line ends with its terminator, but the file's last line may have
        // none: it ends where the search of the file ended. (An empty one has
        // one: after-context past a file's -m starts where its search ended.)
        let end = m.bytes_searched;
        let eol = if self.null_data { '\0' } else { '\n' };
        let terminated = |text: &str, offset: u64| {
            if !text.is_empty() && offset + text.len() as u64 == end {
                text.to_string()
            } else {
                format!("{text}{eol}")
            }
        };
        if m.column == 0 {
            // --passthru: a line that is no result, on its own.
            let lines = terminated(&m.text, m.offset);
            file.pend(m.line, Line::Context { lines, offset: m.offset });
            return Ok(());
        }
        file.matched = true;
        // Context before: the lines just before the match's.
        let mut offset = m.offset;
        let mut before = Vec::with_capacity(m.context_before.len());
        for text in m.context_before.iter().rev() {
            offset = offset.saturating_sub(text.len() as u64 + 1);
            before.push((offset, format!("{text}{eol}")));
        }
        for (i, (offset, lines)) in before.into_iter().rev().enumerate() {
            file.pend(first + i as u64, Line::Context { lines, offset });
        }
        let lines = terminated(&m.text, m.offset);
        let count = m.text.matches(eol).count() as u64 + 1;
        let last = m.line + count - 1;
        let mut after = m.offset + lines.len() as u64;
        let mut spans: Vec<(usize, usize)> = m.submatches.iter().map(|s| (s.start as usize, s.end as usize)).collect();
        // A last match that takes the line terminator after the text (-U)
        // ends at the start of the line after it: rg's span takes it.
        if let Some(s) = spans.last_mut().filter(|s| s.1 == m.text.len()) {
            if m.end_line == m.line + count && m.end_column == 1 {
                s.1 = lines.len();
            }
        }
        file.pend(m.line, Line::Match { lines, offset: m.offset, spans, last });
        for (i, text) in m.context_after.iter().enumerate() {
            let lines = terminated(text, after);
            let len = lines.len() as u64;
            file.pend(last + 1 + i as u64, Line::Context { lines, offset: after });
            after += len;
        }
        Ok(())
    }

    /// Prints the queued lines before line `n` of the current file.
    fn flush_before(&mut self, n: u64) -> io::Result<()> {
        loop {
            let Some(file) = self.file.as_mut() else { return Ok(()) };
            let Some(entry) = file.pending.first_entry() else { return Ok(()) };
            if *entry.key() >= n {
                return Ok(());
            }
            let (number, line) = entry.remove_entry();
            if file.last.is_some_and(|l| number <= l) {
                continue;
            }
            let name = file.name.clone();
            let number_shown = if self.line_numbers { json!(number) } else { Value::Null };
            let message = match line {
                Line::Context { lines, offset } => {
                    file.last = Some(number);
                    json!({"type": "context", "data": {
                        "path": {"text": name}, "lines": {"text": lines}, "line_number": number_shown,
                        "absolute_offset": offset, "submatches": []}})
                }
                Line::Match { lines, offset, spans, last } => {
                    file.last = Some(last);
                    file.matched_lines += last - number + 1;
                    // (As rg: an empty match at the very end of the lines
                    // is none — past a last line with no terminator.)
                    let mut spans = spans;
                    if spans.last().is_some_and(|&(s, e)| s == e && s >= lines.len()) {
                        spans.pop();
                    }
                    file.matches += spans.len() as u64;
                    let submatches: Vec<Value> = spans
                        .into_iter()
                        .map(|(s, e)| {
                            let (s, e) = (s.min(lines.len()), e.min(lines.len()));
                            let text = lines.get(s..e).unwrap_or_default();
                            match &self.replacement {
                                Some(r) => json!({"match": {"text": text},
                                    "replacement": {"text": interpolate(r, text)}, "start": s, "end": e}),
                                None => json!({"match": {"text": text}, "start": s, "end": e}),
                            }
                        })
                        .collect();
                    json!({"type": "match", "data": {
                        "path": {"text": name}, "lines": {"text": lines}, "line_number": number_shown,
                        "absolute_offset": offset, "submatches": submatches}})
                }
            };
            self.message(&message)?;
        }
    }

    /// The search of the `i`th path named begins (rg prints a file named
    /// twice twice, under each name).
    pub fn next_root(&mut self, i: usize) -> io::Result<()> {
        self.end_file()?;
        if let (Some(g), Some(p)) = (self.given.get(i), self.paths.get(i)) {
            self.names = Names::new(std::slice::from_ref(g), std::slice::from_ref(p));
        }
        Ok(())
    }

    /// A page goes on in the file the last one ended in, which it searched
    /// again from its start: the bytes the last page read of it were
    /// counted once already.
    pub fn searched_again(&mut self) {
        if let Some(f) = &self.file {
            self.searched_again += f.bytes_searched;
        }
    }

    /// The current file's search met a NUL byte (its notice follows its
    /// last result).
    pub fn binary_notice(&mut self, n: &sandgrep::BinaryNotice) {
        if let Some(f) = self.file.as_mut().filter(|f| f.path == n.path) {
            f.binary_offset = Some(n.offset);
        }
    }

    /// Prints what is queued of the current file, and its `end`.
    fn end_file(&mut self) -> io::Result<()> {
        self.flush_before(u64::MAX)?;
        let Some(f) = self.file.take() else { return Ok(()) };
        if self.broken.contains(&f.path) {
            return Ok(());
        }
        let elapsed = f.started.elapsed();
        let message = json!({"type": "end", "data": {
        "path": {"text": f.name},
        "binary_offset": f.binary_offset,
        "stats": {
            "elapsed": duration(elapsed, false),
            "searches": 1,
            "searches_with_match": u64::from(f.matched),
            "bytes_searched": f.bytes_searched,
            "bytes_printed": f.bytes_printed,
            "matched_lines": f.matched_lines,
            "matches": f.matches,
        }}});
        self.message(&message)?;
        self.searches_with_match += u64::from(f.matched);
        self.bytes_printed += f.bytes_printed;
        self.matched_lines += f.matched_lines;
        self.matches += f.matches;
        self.elapsed += elapsed;
        Ok(())
    }

    /// Ends the last file and prints the `summary` (rg's keys in order);
    /// what was counted.
    pub fn finish(mut self, searching: Duration, total: Duration) -> io::Result<Totals> {
        self.end_file()?;
        // (The files searched spent the component's time; rg adds up each
        // file's search.)
        let elapsed = searching.max(self.elapsed);
        let summary = json!({
            "data": {
                "elapsed_total": duration(total, true),
                "stats": {
                    "bytes_printed": self.bytes_printed,
                    "bytes_searched": self.totals.bytes_searched.saturating_sub(self.searched_again),
                    "elapsed": duration(elapsed, true),
                    "matched_lines": self.matched_lines,
                    "matches": self.matches,
                    "searches": self.totals.files_searched,
                    "searches_with_match": self.searches_with_match,
                },
            },
            "type": "summary",
        });
        let mut line = serde_json::to_vec(&summary)?;
        line.push(b'\n');
        self.out.write_all(&line)?;
        self.out.flush()?;
        let mut totals = self.totals;
        (totals.matches, totals.matched_lines, totals.files_matched) =
            (self.matches, self.matched_lines, self.searches_with_match);
        Ok(totals)
    }
}

impl File {
    /// Queues line `n`; a match replaces context (and the lines it spans),
    /// and a line printed already is not queued again.
    fn pend(&mut self, n: u64, line: Line) {
        if self.last.is_some_and(|l| n <= l) {
            return;
        }
        match line {
            Line::Match { last, .. } => {
                let covered: Vec<u64> =
                    self.pending.range(n + 1..).take_while(|(k, _)| **k <= last).map(|(k, _)| *k).collect();
                for k in covered {
                    self.pending.remove(&k);
                }
                self.pending.insert(n, line);
            }
            Line::Context { .. } => {
                // (Nor a line a match over several lines holds.)
                let inside = self
                    .pending
                    .range(..n)
                    .next_back()
                    .is_some_and(|(_, l)| matches!(l, Line::Match { last, .. } if *last >= n));
                if !inside {
                    self.pending.entry(n).or_insert(line);
                }
            }
        }
    }
}

/// rg's duration object: `{"secs", "nanos", "human"}` in a file's `end`,
/// its keys sorted in the `summary` (made with serde_json's `json!`).
fn duration(d: Duration, sorted: bool) -> Value {
    let human = format!("{:0.6}s", d.as_secs() as f64 + d.subsec_nanos() as f64 / 1e9);
    if sorted {
        json!({"human": human, "nanos": d.subsec_nanos(), "secs": d.as_secs()})
    } else {
        json!({"secs": d.as_secs(), "nanos": d.subsec_nanos(), "human": human})
    }
}

/// `-r`'s replacement for a match whose text is `m`, as rg fills it in:
/// `$$` is a dollar and `$0` (`${0}`) the match. Other groups are not known
/// here (the component returns no captures): they are shown as written.
fn interpolate(template: &str, m: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, len) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(j) => (&braced[..j], j + 2),
                None => ("", 0),
            }
        } else {
            let j = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            (&after[..j], j)
        };
        if after.starts_with('$') {
            out.push('$');
            rest = &after[1..];
        } else if name == "0" {
            out.push_str(m);
            rest = &after[len..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn replacements_fill_in_what_is_known() {
        assert_eq!(super::interpolate("X$$", "foo"), "X$");
        assert_eq!(super::interpolate("<$0>${0}", "foo"), "<foo>foo");
        assert_eq!(super::interpolate("$1-$name$", "foo"), "$1-$name$");
    }
}
