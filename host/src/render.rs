//! Text renderings of responses, in one place: the CLI prints them, the MCP
//! server returns them beside the structured result.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::{ListFilesResponse, ReadFileResponse, SearchAstResponse, SearchTextResponse};

/// ripgrep's text format: `path:line:col:text` for matches, `path-line-text`
/// for context, `--` between groups of lines that are not adjacent; `path`
/// with -l, `path:count` with -c.
pub fn search(out: &mut impl Write, r: &SearchTextResponse, counts: bool) -> io::Result<()> {
    for f in &r.files {
        if counts {
            writeln!(out, "{}:{}", f.path, f.count)?;
        } else {
            writeln!(out, "{}", f.path)?;
        }
    }
    let mut first_group = true;
    for group in r.matches.chunk_by(|a, b| a.path == b.path) {
        // Each match carries its own context; merge them into one listing
        // where a matching line always shows as a match.
        let mut lines: BTreeMap<u64, (Option<u64>, &str)> = BTreeMap::new();
        for m in group {
            let first = m.line - m.context_before.len() as u64;
            for (i, text) in m.context_before.iter().enumerate() {
                lines.entry(first + i as u64).or_insert((None, text));
            }
            let mut end = m.line;
            for (i, text) in m.text.split('\n').enumerate() {
                end = m.line + i as u64;
                let col = if i == 0 { m.column } else { 1 };
                lines.insert(end, (Some(col), text));
            }
            for (i, text) in m.context_after.iter().enumerate() {
                lines.entry(end + 1 + i as u64).or_insert((None, text));
            }
        }
        let has_context = group.iter().any(|m| !m.context_before.is_empty() || !m.context_after.is_empty());
        let mut prev: Option<u64> = None;
        for (&n, &(col, text)) in &lines {
            let gap = prev.map_or(!first_group, |p| n > p + 1);
            if has_context && gap {
                writeln!(out, "--")?;
            }
            match col {
                Some(col) => writeln!(out, "{}:{}:{}:{}", group[0].path, n, col, text)?,
                None => writeln!(out, "{}-{}-{}", group[0].path, n, text)?,
            }
            prev = Some(n);
        }
        first_group = false;
    }
    Ok(())
}

/// Structural matches as `path:line:col:text`, the text's first line (a
/// match spanning lines ends with ` …`).
pub fn ast(out: &mut impl Write, r: &SearchAstResponse) -> io::Result<()> {
    for m in &r.matches {
        let mut lines = m.text.lines();
        let first = lines.next().unwrap_or_default();
        let more = if lines.next().is_some() { " …" } else { "" };
        writeln!(out, "{}:{}:{}:{first}{more}", m.path, m.line, m.column)?;
    }
    Ok(())
}

/// One path per line (directories with a trailing `/`), with size and
/// modification time when asked for.
pub fn list(out: &mut impl Write, r: &ListFilesResponse) -> io::Result<()> {
    for e in &r.entries {
        let slash = if e.is_dir { "/" } else { "" };
        match (e.size, e.modified) {
            (Some(size), Some(modified)) => writeln!(out, "{}{slash}\t{size}\t{modified}", e.path)?,
            _ => writeln!(out, "{}{slash}", e.path)?,
        }
    }
    Ok(())
}

/// Lines numbered as `cat -n` numbers them, so they can be cited; a byte
/// range as it is.
pub fn read(out: &mut impl Write, r: &ReadFileResponse) -> io::Result<()> {
    match r.range.start_line {
        Some(start) => {
            for (i, line) in r.content.split_inclusive('\n').enumerate() {
                let line = line.strip_suffix('\n').unwrap_or(line);
                writeln!(out, "{:>6}\t{}", start + i as u64, line.strip_suffix('\r').unwrap_or(line))?;
            }
            Ok(())
        }
        None => out.write_all(r.content.as_bytes()),
    }
}

/// Where to go on from a truncated response, phrased for the front end
/// (`cursor` is how it spells the cursor argument).
pub fn continuation(next_cursor: Option<&str>, cursor: &str) -> Option<String> {
    next_cursor.map(|c| format!("more results: continue with {cursor} {c}"))
}

/// Where a read goes on (`lines`/`bytes` are the front end's spellings).
pub fn read_continuation(r: &ReadFileResponse, lines: &str, bytes: &str) -> Option<String> {
    match (r.next_line, r.next_offset) {
        (Some(line), _) => Some(format!("the file goes on: continue with {lines}{line}")),
        (None, Some(offset)) => Some(format!("the file goes on: continue with {bytes}{offset}")),
        _ => None,
    }
}
