//! Private-key blocks: every body line of a `-----BEGIN … PRIVATE KEY-----`
//! block (PGP, SSH2 too), however it is written — plain, commented out, as
//! string literals, in a YAML block scalar, on one line with escaped
//! newlines — decided from the line and its window alone.

#[allow(unused_imports)]
use super::*;

regex! {
    /// Private-key block markers.
    marker_re, MARKER_PAT = r"(?-u)-{4,5} ?(?:BEGIN|END)[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
}
/// Whether a line leaves the next one inside a private-key block (opened by
/// the BEGIN marker at this offset), outside one, or unknown yet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Block {
    Closed,
    Open(usize),
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Marker {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) begin: bool,
}

pub(super) fn markers(text: &[u8], base: usize) -> impl Iterator<Item = Marker> + '_ {
    marker_re().find_iter(text).map(move |m| {
        let begin = m.as_bytes().iter().find(|&&c| c != b'-' && c != b' ') == Some(&b'B');
        Marker { start: base + m.start(), end: base + m.end(), begin }
    })
}

/// `s` without what surrounds a key-body line written as a string literal,
/// list item or comment: indentation, quotes, string prefixes (`b"`, `r'`,
/// `@"`), escaped newlines, concatenation or separator punctuation, and
/// comment leaders (`#`, `//`, `*`, `;`, `--`, `>`). Returns the range of
/// what is left.
pub(super) fn core(s: &[u8]) -> (usize, usize) {
    let (mut a, mut b) = (0, s.len());
    let sep = |c: u8| matches!(c, b' ' | b'\t' | b'"' | b'\'' | b'`');
    loop {
        while a < b && is_space(s[a]) {
            a += 1;
        }
        if a < b && matches!(s[a], b'"' | b'\'' | b'`') {
            a += 1;
        } else if a + 2 < b && s[a..].starts_with(b"\\\\n") {
            a += 3;
        } else if a + 1 < b && s[a] == b'\\' && matches!(s[a + 1], b'n' | b'r' | b't' | b'"' | b'\'' | b'\\') {
            a += 2;
        } else if a < b && matches!(s[a], b'+' | b',' | b'.' | b'(' | b'-') && (a + 1 == b || sep(s[a + 1])) {
            a += 1;
        } else if let Some(p) = string_prefix(&s[a..b]) {
            a += p;
        } else if let Some(p) = [&b"//"[..], b"--", b"#", b"*", b";", b">"]
            .into_iter()
            .find(|c| s[a..b].starts_with(c) && (a + c.len() == b || is_space(s[a + c.len()])))
        {
            a += p.len();
        } else {
            break;
        }
    }
    loop {
        while b > a && is_space(s[b - 1]) {
            b -= 1;
        }
        if b > a && matches!(s[b - 1], b'"' | b'\'' | b'`' | b',' | b';' | b')' | b'\\') {
            b -= 1;
        } else if b >= a + 2 && s[b - 2] == b'\\' && matches!(s[b - 1], b'n' | b'r' | b't') {
            b -= 2;
        } else if b > a && matches!(s[b - 1], b'+' | b'.') && (b - 1 == a || sep(s[b - 2])) {
            b -= 1;
        } else {
            break;
        }
    }
    (a, b)
}

/// The length of a string-literal prefix (`b`, `r`, `rb`, `u8`, `@`…) at the
/// start of `s`, when a quote follows it.
pub(super) fn string_prefix(s: &[u8]) -> Option<usize> {
    let n = s
        .iter()
        .take(3)
        .take_while(|&&c| matches!(c, b'b' | b'B' | b'r' | b'R' | b'u' | b'U' | b'f' | b'F' | b'8' | b'@'))
        .count();
    (n > 0 && n <= 2 && matches!(s.get(n), Some(b'"' | b'\''))).then_some(n)
}

/// Base64 (with escaped newlines between pieces), as a key body is. (A NUL
/// byte too: binary data inside a block ends nothing, and a file searched
/// on past its NUL shows the lines after it.)
pub(super) fn body_shaped(c: &[u8]) -> bool {
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' | b'=' | b'\0' => i += 1,
            b'\\' if matches!(c.get(i + 1), Some(b'n' | b'r')) => i += 2,
            _ => return false,
        }
    }
    !c.is_empty()
}

/// A PEM or PGP armor header (`Proc-Type: 4,ENCRYPTED`, `Version: …`).
pub(super) fn header_line(c: &[u8]) -> bool {
    let name = c.iter().take_while(|&&b| b.is_ascii_alphanumeric() || b == b'-').count();
    name > 0 && c[0].is_ascii_alphabetic() && c.get(name) == Some(&b':')
}

/// Whether a line can sit inside a key block without ending it.
pub(super) fn block_line(line: &[u8]) -> bool {
    let (a, b) = core(line);
    let c = &line[a..b];
    c.is_empty() || body_shaped(c) || header_line(c)
}

/// Whether what follows a BEGIN marker on its line makes it open a block:
/// nothing but quotes and punctuation, or key body.
pub(super) fn opens(rest: &[u8]) -> bool {
    let (a, b) = core(rest);
    a == b || body_shaped(&rest[a..b])
}

/// The block state after the line that ends with `line` (starting at `v`),
/// given the state before it.
pub(super) fn block_after(before: Option<Block>, line: &[u8], ms: &[Marker], v: usize) -> Option<Block> {
    match ms.last() {
        Some(m) if m.begin => Some(if opens(&line[m.end - v..]) { Block::Open(m.start) } else { Block::Closed }),
        Some(_) => Some(Block::Closed),
        None => before.map(|s| match s {
            Block::Open(b) if block_line(line) => Block::Open(b),
            _ => Block::Closed,
        }),
    }
}

/// The block state at the start of the line at `v`, from its window alone.
pub(super) fn block_at(doc: &Doc, v: usize) -> Block {
    let lo = doc.window_start(v);
    let n = doc.before.len();
    let mut last = None;
    if lo < n {
        last = markers(&doc.before[lo..n.min(v)], lo).last();
    }
    if v > n {
        last = markers(&doc.text[lo.max(n) - n..v - n], lo.max(n)).last().or(last);
    }
    let Some(m) = last.filter(|m| m.begin) else { return Block::Closed };
    let eol = doc.newline_in(m.end, v).unwrap_or(v);
    if !opens(content(doc.slice(m.end, eol))) {
        return Block::Closed;
    }
    let mut at = eol + 1;
    while at < v {
        let end = doc.newline_in(at, v).unwrap_or(v);
        if !block_line(content(doc.slice(at, end))) {
            return Block::Closed;
        }
        at = end + 1;
    }
    Block::Open(m.start)
}

/// Redacts the key-block parts of one line (at `v`, with markers `ms`):
/// body before an END, between markers, and after a BEGIN or in an open
/// block when it looks like key body. `state` gives the state before the
/// line, computed when needed.
pub(super) fn key_block_edits(
    line: &[u8],
    v: usize,
    ms: &[Marker],
    state: &mut dyn FnMut() -> Block,
    edits: &mut Vec<Edit>,
) {
    let mut push = |a: usize, b: usize| {
        let (ca, cb) = core(&line[a..b]);
        edits.push(Edit { start: v + a + ca, end: v + a + cb, rule: Rule::PRIVATE_KEY_BLOCK });
    };
    let body = |a: usize, b: usize| {
        let (ca, cb) = core(&line[a..b]);
        body_shaped(&line[a + ca..a + cb])
    };
    let mut at = 0;
    let mut inside = None;
    for m in ms {
        let (s, e) = (m.start - v, m.end - v);
        if body(at, s) && *inside.get_or_insert_with(|| matches!(state(), Block::Open(_))) {
            push(at, s);
        }
        inside = Some(m.begin);
        at = e;
    }
    // After a BEGIN on this line, only a one-line key's worth of body.
    let enough = ms.is_empty() || core(&line[at..]).1 - core(&line[at..]).0 >= 16;
    if enough && body(at, line.len()) && *inside.get_or_insert_with(|| matches!(state(), Block::Open(_))) {
        push(at, line.len());
    }
}

// Secret-named keys and their values.
