//! Output shaping: turning matched bytes into the text a caller gets back —
//! line terminators stripped, invalid UTF-8 decoded lossily, long lines cut
//! to a window around the match with `…` marks, submatch spans re-measured in
//! the returned text; structural matches bounded and placed by line and
//! column.

use crate::request::{MAX_AST_TEXT, WARN_NAMES};
use crate::{Submatch, TextMatch};

pub const ELLIPSIS: &str = "…";

/// `bytes` without its final line terminator (`\n` or `\r\n`).
pub fn strip_terminator(bytes: &[u8]) -> &[u8] {
    let b = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    b.strip_suffix(b"\r").unwrap_or(b)
}

/// A line's text: without its terminator, or (`keep_cr`, for a caller that
/// prints lines as they are) without only the newline.
pub fn line_body(bytes: &[u8], keep_cr: bool) -> &[u8] {
    if keep_cr {
        bytes.strip_suffix(b"\n").unwrap_or(bytes)
    } else {
        strip_terminator(bytes)
    }
}

/// Moves `i` back to the start of the UTF-8 sequence it points into.
fn floor_char(bytes: &[u8], mut i: usize) -> usize {
    while i > 0 && i < bytes.len() && (bytes[i] & 0xC0) == 0x80 {
        i -= 1;
    }
    i
}

/// The character of `bytes` that `i` falls strictly inside, if any (or the
/// invalid sequence that decodes as one `�`, as lossy decoding groups
/// them): its start and end.
fn inside_char(bytes: &[u8], i: usize) -> Option<(usize, usize)> {
    // (A character starts at a byte that does not continue one.)
    let j = (i.saturating_sub(3)..i).rev().find(|&j| bytes[j] & 0xC0 != 0x80)?;
    let first = bytes[j..(j + 4).min(bytes.len())].utf8_chunks().next()?;
    let len = first.valid().chars().next().map_or(first.invalid().len(), char::len_utf8);
    (j + len > i).then_some((j, j + len))
}

/// A span moved off the middle of a character (an empty match a byte into
/// `ſ`, a byte pattern): an empty one to the character's start, another
/// out to the whole characters, so that no character is split in two.
fn whole_chars(bytes: &[u8], (s, e): (usize, usize)) -> (usize, usize) {
    let start = inside_char(bytes, s).map_or(s, |c| c.0);
    if s == e {
        return (start, start);
    }
    (start, inside_char(bytes, e).map_or(e, |c| c.1))
}

/// The byte range of `line` to return so that it holds at most `max` bytes
/// and shows the first span (centered when it fits).
fn window(line: &[u8], first: Option<(usize, usize)>, max: usize) -> (usize, usize) {
    if line.len() <= max {
        return (0, line.len());
    }
    let (s, e) = first.unwrap_or((0, 0));
    let m = e.saturating_sub(s);
    let start = if m >= max { s } else { s.saturating_sub((max - m) / 2) };
    let end = (start + max).min(line.len());
    let start = end.saturating_sub(max).min(start);
    (floor_char(line, start), floor_char(line, end))
}

/// The returned text for matched bytes (terminator already stripped) and its
/// submatch spans, measured in the returned text.
pub fn match_text(bytes: &[u8], spans: &[(usize, usize)], max_columns: usize) -> (String, Vec<Submatch>) {
    let (ws, we) = window(bytes, spans.first().copied(), max_columns);
    let mut text = String::with_capacity(we - ws + 8);
    if ws > 0 {
        text.push_str(ELLIPSIS);
    }
    let mut subs = Vec::with_capacity(spans.len());
    // The line checked once: most are UTF-8, and pieces of it cut at
    // characters' starts are then pushed as they are.
    let valid = std::str::from_utf8(bytes).ok();
    let push = |text: &mut String, s: usize, e: usize| match valid {
        Some(line) if line.is_char_boundary(s) && line.is_char_boundary(e) => text.push_str(&line[s..e]),
        _ => text.push_str(&String::from_utf8_lossy(&bytes[s..e])),
    };
    let mut at = ws;
    for &span in spans {
        let (s, e) = whole_chars(bytes, span);
        let visible = if s == e { ws <= s && s <= we } else { e > ws && s < we };
        let (s, e) = (s.max(ws), e.min(we));
        if !visible || s < at {
            continue;
        }
        push(&mut text, at, s);
        let start = text.len();
        push(&mut text, s, e);
        subs.push(Submatch { start: start as u32, end: text.len() as u32 });
        at = e;
    }
    push(&mut text, at, we);
    if we < bytes.len() {
        text.push_str(ELLIPSIS);
    }
    (text, subs)
}

/// A context line: its first `max_columns` bytes, with `…` when cut.
pub fn context_text(line: &[u8], max_columns: usize, keep_cr: bool) -> String {
    let line = line_body(line, keep_cr);
    if line.len() <= max_columns {
        return String::from_utf8_lossy(line).into_owned();
    }
    let end = floor_char(line, max_columns);
    let mut s = String::from_utf8_lossy(&line[..end]).into_owned();
    s.push_str(ELLIPSIS);
    s
}

/// 1-based (line, column) of byte offset `at` within a block of lines that
/// starts at line `first_line`.
pub fn line_col(block: &[u8], first_line: u64, at: usize) -> (u64, u64) {
    let before = &block[..at.min(block.len())];
    let newlines = before.iter().filter(|&&b| b == b'\n').count() as u64;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    (first_line + newlines, (at - line_start) as u64 + 1)
}

/// Where the lines of a text start, for line and column of any byte.
pub struct LineIndex(Vec<usize>);

impl LineIndex {
    pub fn new(src: &str) -> LineIndex {
        LineIndex(
            std::iter::once(0)
                .chain(src.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1))
                .collect(),
        )
    }

    /// 1-based line and byte column of byte `at`.
    pub fn line_col(&self, at: usize) -> (u64, u64) {
        let line = self.0.partition_point(|&start| start <= at);
        (line as u64, (at - self.0[line - 1]) as u64 + 1)
    }
}

/// `text` cut to [`MAX_AST_TEXT`] bytes (on a character boundary) with `…`.
pub fn bounded(mut text: String, cut: &mut usize) -> String {
    if text.len() > MAX_AST_TEXT {
        let mut end = MAX_AST_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
        *cut += 1;
    }
    text
}

/// The length of `s` as a JSON string body: what it costs in a response.
/// (`"`, `\\` and the named controls take one more byte, the other
/// controls, `\u0001`, five more.) Every match's text is measured: sixteen
/// bytes at a time where wasm has SIMD.
pub fn json_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    #[allow(unused_mut)]
    let (mut len, mut at) = (bytes.len(), 0);
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::*;
        let is = |c: v128, b: u8| u8x16_eq(c, u8x16_splat(b));
        while at + 16 <= bytes.len() {
            // SAFETY: 16 bytes from `at` are in `bytes`; unaligned loads are allowed.
            let c = unsafe { v128_load(bytes.as_ptr().add(at) as *const v128) };
            let named = v128_or(
                v128_or(v128_or(is(c, b'"'), is(c, b'\\')), v128_or(is(c, b'\n'), is(c, b'\r'))),
                v128_or(is(c, b'\t'), v128_or(is(c, 0x08), is(c, 0x0c))),
            );
            let other = v128_andnot(u8x16_lt(c, u8x16_splat(0x20)), named);
            len += (u8x16_bitmask(named).count_ones() + 5 * u8x16_bitmask(other).count_ones()) as usize;
            at += 16;
        }
    }
    len + bytes[at..]
        .iter()
        .map(|&b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0..=0x1f => 5,
            _ => 0,
        })
        .sum::<usize>()
}

/// Fields, numbers and punctuation of one result, beside its strings.
pub const RESULT_OVERHEAD: usize = 200;

/// What one text match costs in a response, given what its path and its
/// text cost (their [`json_len`]).
pub fn match_cost(path: usize, text: usize, m: &TextMatch) -> usize {
    RESULT_OVERHEAD
        + path
        + text
        + 24 * m.submatches.len()
        + m.context_before.iter().chain(&m.context_after).map(|c| json_len(c) + 4).sum::<usize>()
}

/// `text` cut (at a character boundary, marked with `…`) so that it costs
/// at most `max` bytes as JSON, and what it then costs.
pub fn cut_to_json(text: String, max: usize) -> (String, usize) {
    let len = json_len(&text);
    if len <= max {
        return (text, len);
    }
    let mut used = ELLIPSIS.len();
    let mut end = 0;
    for (i, c) in text.char_indices() {
        let mut buf = [0u8; 4];
        used += json_len(c.encode_utf8(&mut buf));
        if used > max {
            break;
        }
        end = i + c.len_utf8();
    }
    let mut cut = text[..end].to_string();
    cut.push_str(ELLIPSIS);
    let len = json_len(&cut);
    (cut, len)
}

/// A warning that counts `names` and shows the first few.
pub fn named_warning(warnings: &mut Vec<String>, what: &str, names: &[String]) {
    if names.is_empty() {
        return;
    }
    let shown: Vec<&str> = names.iter().take(WARN_NAMES).map(String::as_str).collect();
    let more = if names.len() > WARN_NAMES { format!(" and {} more", names.len() - WARN_NAMES) } else { String::new() };
    warnings.push(format!("{} {what}: {}{more}", names.len(), shown.join("; ")));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(subs: &[Submatch], text: &str) -> Vec<String> {
        subs.iter().map(|s| text[s.start as usize..s.end as usize].to_string()).collect()
    }

    #[test]
    fn short_lines_are_whole() {
        let (t, s) = match_text(b"let foo = foo();", &[(4, 7), (10, 13)], 500);
        assert_eq!(t, "let foo = foo();");
        assert_eq!(spans(&s, &t), ["foo", "foo"]);
    }

    #[test]
    fn no_span_splits_a_character() {
        // Empty matches at every byte of `ſkip` (`x|`): `ſ` stays whole, the
        // match inside it at its start (as many matches as rg's).
        let line = "ſkip".as_bytes();
        let every: Vec<(usize, usize)> = (0..=line.len()).map(|i| (i, i)).collect();
        let (t, s) = match_text(line, &every, 500);
        assert_eq!(t, "ſkip");
        let starts: Vec<u32> = s.iter().map(|s| s.start).collect();
        assert_eq!(starts, [0, 0, 2, 3, 4, 5]);
        // A byte pattern matching half of `é` shows all of it; a stray
        // continuation byte (not UTF-8) is its own.
        let (t, s) = match_text("aé".as_bytes(), &[(1, 2)], 500);
        assert_eq!(spans(&s, &t), ["é"]);
        let (t, s) = match_text(b"a\xbfb", &[(1, 2)], 500);
        assert_eq!((t.as_str(), spans(&s, &t)), ("a\u{fffd}b", vec!["\u{fffd}".to_string()]));
        // Whatever the spans, a line reads as lossy decoding reads it whole
        // (`\xe2\x82`, a cut sequence, is one `�`).
        let line = b"bad \xff\xfe foo \xe2\x82 x \xf0\x9f\x98";
        let whole = String::from_utf8_lossy(line);
        for spans in [(0..=line.len()).map(|i| (i, i)).collect::<Vec<_>>(), vec![(12, 13)], vec![(4, 5), (17, 19)]] {
            assert_eq!(match_text(line, &spans, 500).0, whole, "{spans:?}");
        }
    }

    #[test]
    fn long_lines_become_a_window_around_the_match() {
        let mut line = "a".repeat(5000).into_bytes();
        line.extend_from_slice(b"NEEDLE");
        line.extend(std::iter::repeat_n(b'b', 5000));
        let (t, s) = match_text(&line, &[(5000, 5006)], 100);
        assert!(t.starts_with(ELLIPSIS) && t.ends_with(ELLIPSIS), "{t}");
        assert!(t.len() <= 100 + 2 * ELLIPSIS.len());
        assert_eq!(spans(&s, &t), ["NEEDLE"]);
    }

    #[test]
    fn invalid_utf8_and_multibyte_edges() {
        let (t, s) = match_text(b"\xff\xfeab\xffcd", &[(2, 4)], 500);
        assert_eq!(spans(&s, &t), ["ab"]);
        assert!(t.contains('\u{FFFD}'));
        // A window never splits a character.
        let line = "é".repeat(100);
        let (t, _) = match_text(line.as_bytes(), &[(100, 102)], 21);
        assert!(t.trim_matches('…').chars().all(|c| c == 'é'), "{t}");
        assert_eq!(context_text("ééé\r\n".as_bytes(), 3, false), "é…");
    }

    #[test]
    fn json_costs_and_cuts() {
        assert_eq!(json_len("ab\"\u{1}é"), 2 + 2 + 6 + 2);
        let (cut, len) = cut_to_json("\u{1}".repeat(100), 60);
        assert!(len == json_len(&cut) && len <= 60 && cut.ends_with(ELLIPSIS), "{cut:?}");
        assert_eq!(cut_to_json("short".into(), 60), ("short".into(), 5));
    }

    #[test]
    fn positions_in_blocks() {
        assert_eq!(line_col(b"ab\ncd\nef", 10, 4), (11, 2));
        assert_eq!(line_col(b"ab", 1, 0), (1, 1));
    }
}
