//! Text renderings of responses, in one place: the CLI prints them, the MCP
//! server returns them beside the structured result.
//!
//! Every path and every piece of file text goes through [`escape`] first: the
//! workspace may be hostile, and a file name such as `a.txt:1:1:FAKE\nsrc`
//! or one holding `ESC ] 52 ; c ; … BEL` (OSC 52, "set the clipboard") must
//! neither forge a result line nor drive the terminal that shows it. JSON
//! output needs none of this: serde escapes every control character.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use crate::{ListFilesResponse, ReadFileResponse, SearchAstResponse, SearchStats, SearchTextResponse, TextMatch};

/// Where a string is shown, which decides what stays raw.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Field {
    /// A path (or a message, which may quote one): nothing stays raw, not
    /// even a tab (it would forge a column of `ls --metadata`).
    Path,
    /// One line of file text: tabs stay, as rg prints them, and so does a
    /// carriage return that ends the line (a CRLF file's line, harmless
    /// before the newline the renderer adds).
    Line,
    /// Several lines of file text (a byte range as read): tabs and newlines
    /// stay, and a carriage return right before a newline or at the end.
    Block,
}

/// Whether `c` is shown escaped in every field: C0 controls (tab, newline
/// and carriage return are decided by the field), DEL, C1 controls, and the
/// invisible characters that reorder or hide text: Unicode's default-
/// ignorable code points (bidi embeddings, overrides and isolates — "Trojan
/// Source" —, zero-width characters, variation selectors, Hangul fillers,
/// tags), the line and paragraph separators, BOM, interlinear annotations,
/// and the blank braille pattern. The list starts from fd's `sanitize.rs`.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{34f}'
                | '\u{61c}'
                | '\u{115f}'..='\u{1160}'
                | '\u{17b4}'..='\u{17b5}'
                | '\u{180b}'..='\u{180f}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff0}'..='\u{fffb}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0000}'..='\u{e0fff}'
        )
}

/// A variation selector after another (or first): a run of them carries
/// hidden data; one after a character picks its look (an emoji's) and stays.
fn hidden_selector(c: char, prev: Option<char>) -> bool {
    let selector = |c: char| matches!(c, '\u{fe00}'..='\u{fe0f}');
    selector(c) && prev.is_none_or(selector)
}

/// `s` as it may be shown on a terminal or to an agent: every unsafe
/// character (see [`Field`] for the ones a field keeps) written as an escape
/// — `\t`, `\n`, `\r`; `\xHH` (two lower-case hex digits) for other C0
/// controls and DEL; `\u{H…}` (lower-case hex, Rust's spelling) for
/// anything else, e.g. `\u{9b}` (C1 CSI) or `\u{202e}` (right-to-left
/// override). Backslashes are not escaped: an escape is for reading, and the
/// exact name is in the JSON output. Borrows `s` when nothing needs escaping.
pub fn escape(s: &str, field: Field) -> Cow<'_, str> {
    let mut chars = s.char_indices().peekable();
    let mut prev = None;
    let first = loop {
        match chars.next() {
            None => return Cow::Borrowed(s),
            Some((i, ' ')) if field == Field::Path && i + 1 == s.len() => break i,
            // The common case: printable ASCII.
            Some((_, c @ ' '..='~')) => prev = Some(c),
            Some((i, c)) if escaped(field, c, prev, chars.peek().map(|&(_, n)| n)) => break i,
            Some((_, c)) => prev = Some(c),
        }
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    push_escaped(&mut out, s, first, s.len(), field);
    Cow::Owned(out)
}

/// `s` escaped as [`escape`] escapes it, in pieces cut at the byte offsets
/// `cuts` (ascending, on character boundaries): a front end colors some
/// pieces, and an escape depends on the characters around it, so the pieces
/// are escaped as parts of the whole.
pub fn escape_pieces(s: &str, field: Field, cuts: &[usize]) -> Vec<String> {
    let mut pieces = Vec::with_capacity(cuts.len() + 1);
    let mut from = 0;
    for &cut in cuts.iter().chain(std::iter::once(&s.len())) {
        let cut = cut.clamp(from, s.len());
        let mut piece = String::with_capacity(cut - from);
        push_escaped(&mut piece, s, from, cut, field);
        pieces.push(piece);
        from = cut;
    }
    pieces
}

/// Whether `c` (between `prev` and `next`) is written as an escape.
fn escaped(field: Field, c: char, prev: Option<char>, next: Option<char>) -> bool {
    let keep = match c {
        '\t' => field != Field::Path,
        '\n' => field == Field::Block,
        '\r' => field != Field::Path && (next.is_none() || (field == Field::Block && next == Some('\n'))),
        _ => false,
    };
    // In a path, a space that would pass unseen: one that ends it (a
    // heading `config.py ` reads as `config.py`), or one of the other
    // widths of space.
    let odd_space = field == Field::Path
        && (c == ' ' && next.is_none()
            || matches!(c, '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}'));
    (unsafe_char(c) || hidden_selector(c, prev) || odd_space) && !keep
}

/// Appends `s[from..to]`, escaped, to `out` (the characters around the
/// range decide as they do in the whole).
fn push_escaped(out: &mut String, s: &str, from: usize, to: usize, field: Field) {
    let mut prev = s[..from].chars().next_back();
    let mut chars = s[from..to].chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied().or_else(|| s[to..].chars().next());
        let before = prev;
        prev = Some(c);
        if !escaped(field, c, before, next) {
            out.push(c);
            continue;
        }
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\0'..='\x1f' | '\x7f' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            _ => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
}

/// A path or message, escaped ([`Field::Path`]).
pub fn path(s: &str) -> Cow<'_, str> {
    escape(s, Field::Path)
}

/// One line of file text, escaped ([`Field::Line`]).
pub fn line(s: &str) -> Cow<'_, str> {
    escape(s, Field::Line)
}

/// ripgrep's text format: `path:line:col:text` for matches, `path-line-text`
/// for context, `--` between groups of lines that are not adjacent; `path`
/// with -l, `path:count` with -c.
pub fn search(out: &mut impl Write, r: &SearchTextResponse, counts: bool) -> io::Result<()> {
    files(out, r, counts)?;
    let mut first_group = true;
    for group in r.matches.chunk_by(|a, b| a.path == b.path) {
        let name = path(&group[0].path);
        let mut prev: Option<u64> = None;
        for (n, (col, text)) in merged(group) {
            if has_context(group) && prev.map_or(!first_group, |p| n > p + 1) {
                writeln!(out, "--")?;
            }
            match col {
                Some(col) => writeln!(out, "{name}:{n}:{col}:{}", line(text))?,
                None => writeln!(out, "{name}-{n}-{}", line(text))?,
            }
            prev = Some(n);
        }
        first_group = false;
    }
    Ok(())
}

/// The text an agent reads: ripgrep's `--heading` form (`rg -n --heading`),
/// the shortest that still cites every line: each file's path once, then
/// `line:text` for matching lines and `line-text` for context, `--` between
/// groups of lines that are not adjacent, a blank line between files.
/// Columns and spans are in the structured result.
pub fn search_grouped(out: &mut impl Write, r: &SearchTextResponse, counts: bool) -> io::Result<()> {
    files(out, r, counts)?;
    for (i, group) in r.matches.chunk_by(|a, b| a.path == b.path).enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{}", path(&group[0].path))?;
        let mut prev: Option<u64> = None;
        for (n, (col, text)) in merged(group) {
            if has_context(group) && prev.is_some_and(|p| n > p + 1) {
                writeln!(out, "--")?;
            }
            let sep = if col.is_some() { ':' } else { '-' };
            writeln!(out, "{n}{sep}{}", line(text))?;
            prev = Some(n);
        }
    }
    Ok(())
}

/// `path` (with -l) or `path:count` (with -c) lines.
fn files(out: &mut impl Write, r: &SearchTextResponse, counts: bool) -> io::Result<()> {
    for f in &r.files {
        if counts {
            writeln!(out, "{}:{}", path(&f.path), f.count)?;
        } else {
            writeln!(out, "{}", path(&f.path))?;
        }
    }
    Ok(())
}

fn has_context(group: &[TextMatch]) -> bool {
    group.iter().any(|m| !m.context_before.is_empty() || !m.context_after.is_empty())
}

/// One file's matches with their context, merged into one listing by line
/// number, each line once: a line that is a match is shown as a match (with
/// its column), even where it is also another match's context.
fn merged(group: &[TextMatch]) -> BTreeMap<u64, (Option<u64>, &str)> {
    let mut lines: BTreeMap<u64, (Option<u64>, &str)> = BTreeMap::new();
    for m in group {
        let first = m.line - m.context_before.len() as u64;
        for (i, text) in m.context_before.iter().enumerate() {
            lines.entry(first + i as u64).or_insert((None, text));
        }
        for (i, text) in m.text.split('\n').enumerate() {
            let col = if i == 0 { m.column } else { 1 };
            lines.insert(m.line + i as u64, (Some(col), text));
        }
        // After the block's last line: the match's end line, unless the
        // match ends with a line terminator (its end is then column 1 of
        // the next line); the text may be cut shorter than the block.
        let ends_at_line_start = m.end_column == 1 && m.end_line > m.line;
        let end = (m.end_line - u64::from(ends_at_line_start)).max(m.line + m.text.split('\n').count() as u64 - 1);
        for (i, text) in m.context_after.iter().enumerate() {
            lines.entry(end + 1 + i as u64).or_insert((None, text));
        }
    }
    lines
}

/// Structural matches as `path:line:col:text`, the text's first line (a
/// match spanning lines ends with ` …`).
pub fn ast(out: &mut impl Write, r: &SearchAstResponse) -> io::Result<()> {
    for m in &r.matches {
        let mut lines = m.text.lines();
        let first = lines.next().unwrap_or_default();
        let more = if lines.next().is_some() { " …" } else { "" };
        writeln!(out, "{}:{}:{}:{}{more}", path(&m.path), m.line, m.column, line(first))?;
    }
    Ok(())
}

/// One path per line (directories with a trailing `/`), with size and
/// modification time when asked for: bytes and UNIX seconds, or (`human`)
/// as `ls -lh` shows a size and an ISO 8601 time (UTC).
pub fn list(out: &mut impl Write, r: &ListFilesResponse, human: bool) -> io::Result<()> {
    for e in &r.entries {
        let slash = if e.is_dir { "/" } else { "" };
        writeln!(out, "{}{slash}{}", path(&e.path), metadata(e, human))?;
    }
    Ok(())
}

/// `\tSIZE\tTIME` of an entry that has them.
fn metadata(e: &crate::FileEntry, human: bool) -> String {
    match (e.size, e.modified) {
        (Some(size), Some(modified)) if human => format!("\t{}\t{}", human_size(size), iso_time(modified)),
        (Some(size), Some(modified)) => format!("\t{size}\t{modified}"),
        _ => String::new(),
    }
}

/// A listing drawn as a tree under `root` (as `tree` draws it): each entry
/// under its directory, `├──` before all but a directory's last entry,
/// `└──` before that one. Directories an entry is in but the page does not
/// hold are drawn too.
pub fn tree(out: &mut impl Write, root: &str, r: &ListFilesResponse, human: bool) -> io::Result<()> {
    #[derive(Default)]
    struct Node<'a> {
        name: &'a str,
        is_dir: bool,
        meta: String,
        children: Vec<Node<'a>>,
    }
    let mut root = root.trim_end_matches('/');
    while let Some(rest) = root.strip_prefix("./") {
        root = rest;
    }
    let mut top = Node { name: if root.is_empty() { "." } else { root }, is_dir: true, ..Node::default() };
    for e in &r.entries {
        let rel = match root {
            "" | "." => e.path.as_str(),
            _ => e.path.strip_prefix(root).and_then(|p| p.strip_prefix('/')).unwrap_or(&e.path),
        };
        let mut node = &mut top;
        let parts: Vec<&str> = rel.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            let last = i + 1 == parts.len();
            // A listing is in path order: a directory's entries follow it.
            let known = node.children.last().is_some_and(|c| c.name == *part && c.is_dir);
            if !known {
                node.children.push(Node { name: part, is_dir: !last || e.is_dir, ..Node::default() });
            }
            node = node.children.last_mut().expect("just pushed");
            if last {
                node.meta = metadata(e, human);
            }
        }
    }
    fn draw(out: &mut impl Write, node: &Node<'_>, indent: &str) -> io::Result<()> {
        for (i, child) in node.children.iter().enumerate() {
            let last = i + 1 == node.children.len();
            let slash = if child.is_dir { "/" } else { "" };
            let branch = if last { "└── " } else { "├── " };
            writeln!(out, "{indent}{branch}{}{slash}{}", path(child.name), child.meta)?;
            draw(out, child, &format!("{indent}{}", if last { "    " } else { "│   " }))?;
        }
        Ok(())
    }
    writeln!(out, "{}", path(top.name))?;
    draw(out, &top, "")
}

/// A size as `ls -lh` shows it: bytes below 1 KiB, else one decimal below
/// 10 of the unit (`1.5K`, `12M`).
pub fn human_size(bytes: u64) -> String {
    let mut size = bytes as f64;
    for unit in ["", "K", "M", "G", "T", "P"] {
        if size < 1024.0 || unit == "P" {
            return match unit {
                "" => format!("{bytes}"),
                _ if size < 10.0 => format!("{size:.1}{unit}"),
                _ => format!("{size:.0}{unit}"),
            };
        }
        size /= 1024.0;
    }
    unreachable!("the last unit returns")
}

/// UNIX seconds as an ISO 8601 time in UTC (`2026-11-23T09:41:00Z`).
pub fn iso_time(secs: i64) -> String {
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// Lines numbered as `cat -n` numbers them, so they can be cited; a byte
/// range as it is (but escaped, as every text).
pub fn read(out: &mut impl Write, r: &ReadFileResponse) -> io::Result<()> {
    match r.range.start_line {
        Some(start) => {
            for (i, line) in r.content.split_inclusive('\n').enumerate() {
                let line = line.strip_suffix('\n').unwrap_or(line);
                writeln!(out, "{:>6}\t{}", start + i as u64, self::line(line.strip_suffix('\r').unwrap_or(line)))?;
            }
            Ok(())
        }
        None => out.write_all(escape(&r.content, Field::Block).as_bytes()),
    }
}

/// How a page of search results ended, said once, in words a caller acts
/// on: `go_on(cursor)` is how the front end says to pass the cursor back
/// (`cursor "…"` for the agent tools, `--cursor …` for the CLI).
pub fn search_ending(
    timed_out: bool,
    next_cursor: Option<&str>,
    stats: &SearchStats,
    go_on: impl Fn(&str) -> String,
) -> Option<String> {
    let partial =
        format!("stopped at the time limit after searching {} file(s): results are partial", stats.files_scanned);
    let more = format!("more results past these {}", stats.matches_returned);
    ended(timed_out, next_cursor, &partial, &more, go_on)
}

/// How a page of a listing ended (as [`search_ending`]).
pub fn listing_ending(r: &ListFilesResponse, go_on: impl Fn(&str) -> String) -> Option<String> {
    let partial = "the listing stopped at the time limit: entries are partial";
    let more = format!("more entries past these {}", r.entries.len());
    ended(r.timed_out, r.next_cursor.as_deref(), partial, &more, go_on)
}

fn ended(
    timed_out: bool,
    next: Option<&str>,
    partial: &str,
    more: &str,
    go_on: impl Fn(&str) -> String,
) -> Option<String> {
    let go_on = |c: &str| go_on(&path(c));
    match (timed_out, next) {
        (true, Some(c)) => Some(format!("{partial}; continue with {}", go_on(c))),
        (true, None) => Some(partial.to_string()),
        (false, Some(c)) => Some(format!("{more}: continue with {}", go_on(c))),
        (false, None) => None,
    }
}

/// Whether a literal `query` that found nothing reads as a regular
/// expression that means something else (`func.*Create\(`, `Start|Stop`):
/// the caller may have meant one.
pub fn looks_like_regex(query: &str) -> bool {
    use regex_syntax::hir::{Hir, HirKind};
    // Something only a regex does: a class (`.` too), a repetition or an
    // alternation — not escapes and anchors alone (`C:\temp`, `$HOME`).
    fn operates(h: &Hir) -> bool {
        match h.kind() {
            HirKind::Class(_) | HirKind::Repetition(_) | HirKind::Alternation(_) => true,
            HirKind::Capture(c) => operates(&c.sub),
            HirKind::Concat(hs) => hs.iter().any(operates),
            _ => false,
        }
    }
    regex_syntax::Parser::new().parse(query).is_ok_and(|hir| operates(&hir))
}

/// Where a read goes on (`lines`/`bytes` are the front end's spellings).
pub fn read_continuation(r: &ReadFileResponse, lines: &str, bytes: &str) -> Option<String> {
    match (r.next_line, r.next_offset) {
        (Some(line), _) => Some(format!("the file goes on: continue with {lines}{line}")),
        (None, Some(offset)) => Some(format!("the file goes on: continue with {bytes}{offset}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{escape, line, path, Field};
    use std::borrow::Cow;

    #[test]
    fn pieces_are_escaped_as_parts_of_the_whole() {
        use super::escape_pieces;
        for s in ["plain text", "over\rwrite\r", "a\u{fe0f}\u{fe01}b", "tab\tend ", "\x1b[31mred"] {
            for field in [Field::Path, Field::Line] {
                for cut in 0..=s.len() {
                    if !s.is_char_boundary(cut) {
                        continue;
                    }
                    let pieces = escape_pieces(s, field, &[cut]);
                    assert_eq!(pieces.concat(), escape(s, field), "{s:?} cut at {cut}");
                }
            }
        }
        // A carriage return inside a line stays escaped when a piece ends at it.
        assert_eq!(escape_pieces("a\rb", Field::Line, &[2]), ["a\\r", "b"]);
    }

    #[test]
    fn sizes_and_times_read_as_people_read_them() {
        use super::{human_size, iso_time};
        assert_eq!(
            [0, 1023, 1024, 1536, 10 * 1024, 5 << 20].map(human_size),
            ["0", "1023", "1.0K", "1.5K", "10K", "5.0M"]
        );
        assert_eq!(iso_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_time(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso_time(1_795_425_660), "2026-11-23T09:21:00Z");
        assert_eq!(iso_time(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn plain_text_is_borrowed_as_it_is() {
        for s in ["src/main.rs", "résumé.txt", "文档/🦀.rs", "a b", "", "heart\u{2764}\u{fe0f}", "\u{fffd}"] {
            for field in [Field::Path, Field::Line, Field::Block] {
                assert!(matches!(escape(s, field), Cow::Borrowed(_)), "{s:?} {field:?}");
            }
        }
        assert!(matches!(line("\tindented\tcode"), Cow::Borrowed(_)));
        assert!(matches!(escape("a\n\tb\r\n", Field::Block), Cow::Borrowed(_)));
    }

    #[test]
    fn only_what_only_a_regex_does_gets_the_hint() {
        use super::looks_like_regex;
        for q in ["func.*Create\\(", "Create|Start", "foo.bar", "a[0-9]+", "(?i)x"] {
            assert!(looks_like_regex(q) || q == "(?i)x", "{q}");
        }
        for q in ["C:\\temp", "$HOME", "plain", "fn(", "a\\.b", "^start$"] {
            assert!(!looks_like_regex(q), "{q}");
        }
    }

    #[test]
    fn context_after_a_cut_block_is_numbered_from_its_end() {
        let m = crate::TextMatch {
            path: "a".into(),
            line: 1,
            column: 1,
            end_line: 3,
            end_column: 4,
            // Lines 1-3 of the block, cut to their first one.
            text: "foo…".into(),
            submatches: Vec::new(),
            context_before: Vec::new(),
            context_after: vec!["after".into()],
            redactions: Vec::new(),
            offset: 0,
            bytes_searched: 0,
        };
        let lines = super::merged(std::slice::from_ref(&m));
        assert_eq!(lines.keys().copied().collect::<Vec<_>>(), [1, 4]);
        // A match ending with its line terminator ends on that line.
        let m = crate::TextMatch { end_line: 2, end_column: 1, text: "foo".into(), ..m };
        assert_eq!(super::merged(std::slice::from_ref(&m)).keys().copied().collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn spaces_a_path_would_hide_are_escaped() {
        assert_eq!(path("config.py "), "config.py\\u{20}");
        assert_eq!(path("a b"), "a b");
        assert_eq!(path("a\u{a0}b\u{2003}"), "a\\u{a0}b\\u{2003}");
        assert_eq!(line("text ends in a space "), "text ends in a space ");
    }

    #[test]
    fn runs_of_variation_selectors_are_escaped() {
        assert_eq!(line("ok\u{2764}\u{fe0f}"), "ok\u{2764}\u{fe0f}");
        assert_eq!(line("a\u{fe0f}\u{fe01}\u{fe02}"), "a\u{fe0f}\\u{fe01}\\u{fe02}");
        assert_eq!(path("\u{fe0f}x"), "\\u{fe0f}x");
        assert_eq!(line("x\u{e0101}\u{3164}"), "x\\u{e0101}\\u{3164}");
    }

    #[test]
    fn a_name_cannot_forge_a_result_line() {
        assert_eq!(path("a.txt:1:1:FAKE\nsrc"), "a.txt:1:1:FAKE\\nsrc");
        assert_eq!(path("a\r\nb"), "a\\r\\nb");
        assert_eq!(path("a\rb"), "a\\rb");
        assert_eq!(path("tab\there"), "tab\\there");
        assert_eq!(path("x\u{2028}y\u{2029}z"), "x\\u{2028}y\\u{2029}z");
        assert_eq!(line("code\nmore"), "code\\nmore");
    }

    #[test]
    fn terminal_sequences_are_escaped() {
        let osc52 = "innocent\x1b]52;c;cHduZWQ=\x07.txt";
        assert_eq!(path(osc52), "innocent\\x1b]52;c;cHduZWQ=\\x07.txt");
        assert_eq!(line("\x1b[2J\x1b[31mred"), "\\x1b[2J\\x1b[31mred");
        assert_eq!(path("a\x08\x08b\x7f\0"), "a\\x08\\x08b\\x7f\\x00");
        // C1: CSI and OSC (and NEL) are 8-bit terminal controls.
        assert_eq!(line("\u{9b}31m\u{9d}0;x\u{9c}\u{85}"), "\\u{9b}31m\\u{9d}0;x\\u{9c}\\u{85}");
        for field in [Field::Path, Field::Line, Field::Block] {
            let out = escape("\x1b]8;;https://evil\x1b\\x\u{80}\u{9f}", field);
            assert!(!out.chars().any(|c| c.is_control()), "{out:?}");
        }
    }

    #[test]
    fn bidi_and_invisible_characters_are_escaped() {
        assert_eq!(path("safe\u{202e}fdp.exe"), "safe\\u{202e}fdp.exe");
        for c in ('\u{202a}'..='\u{202e}').chain('\u{2066}'..='\u{2069}') {
            assert_eq!(line(&format!("x{c}y")), format!("x\\u{{{:x}}}y", c as u32));
        }
        assert_eq!(line("a\u{200b}b\u{feff}\u{ad}\u{61c}\u{e0041}"), "a\\u{200b}b\\u{feff}\\u{ad}\\u{61c}\\u{e0041}");
    }

    #[test]
    fn fields_keep_what_they_show_as_is() {
        // Tabs: kept in text, escaped in paths.
        assert_eq!(line("a\tb"), "a\tb");
        // A carriage return ending a line (CRLF) stays; one inside does not.
        assert_eq!(line("crlf line\r"), "crlf line\r");
        assert_eq!(line("over\rwrite"), "over\\rwrite");
        assert_eq!(path("name\r"), "name\\r");
        // A block keeps its lines, tabs and CRLF ends.
        assert_eq!(escape("a\r\n\tb\rc\x1b\n\r", Field::Block), "a\r\n\tb\\rc\\x1b\n\r");
        assert_eq!(escape("a\nb", Field::Line), "a\\nb");
    }
}
