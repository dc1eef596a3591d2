//! Redaction (SPEC §3.3): secrets in returned text — match lines, context,
//! read content — are replaced by `[REDACTED]` before anything leaves the
//! component. Covered: AWS access key ids, GitHub tokens, private-key blocks,
//! and `key/token/secret/password = <long high-entropy value>` assignments.
//!
//! Works on raw bytes, before windowing and decoding, so a window can never
//! show half a secret. Returns the edits made so callers can move byte spans
//! (submatches) along.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::OnceLock;

use encoding_rs_io::DecodeReaderBytesBuilder;
use regex::bytes::Regex;

pub const MARK: &[u8] = b"[REDACTED]";

/// How far before a line to look for the start of a private-key block it may
/// sit in (a PEM block of an 8192-bit RSA key is under 7 KiB).
pub const KEY_BLOCK_LOOKBACK: u64 = 64 * 1024;

/// One replacement: `start..end` of the input became `MARK`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
}

struct Patterns {
    tokens: Regex,
    assignment: Regex,
    key_begin: Regex,
    key_end: Regex,
    key_body: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        // ASCII classes only: Unicode classes cost milliseconds to compile.
        tokens: Regex::new(
            r"(?-u)\b(?:(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        )
        .unwrap(),
        assignment: Regex::new(
            r#"(?i-u)(?:key|token|secret|passw(?:or)?d|pwd|credential|auth)[a-z0-9_.\-]*["']?\s*(?::=|=>|:|=)\s*["'`]?([A-Za-z0-9+/=_.~!@#$%^&*\-]{16,})"#,
        )
        .unwrap(),
        key_begin: Regex::new(r"(?-u)-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----").unwrap(),
        key_end: Regex::new(r"(?-u)-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----").unwrap(),
        key_body: Regex::new(r"(?-u)^\s*[A-Za-z0-9+/]{40,}={0,2}\s*$").unwrap(),
    })
}

/// Shannon entropy in bits per byte.
fn entropy(s: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in s {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| -(c as f64 / n) * (c as f64 / n).log2()).sum()
}

/// Whether a line looks like the body of a PEM block (worth checking whether
/// it sits inside a private key).
pub fn looks_like_key_body(line: &[u8]) -> bool {
    line.len() >= 40 && patterns().key_body.is_match(line)
}

/// Whether the text before some point leaves that point inside a private-key
/// block (a BEGIN after the last END).
pub fn ends_inside_key_block(before: &[u8]) -> bool {
    let p = patterns();
    let begin = p.key_begin.find_iter(before).last().map(|m| m.start());
    let end = p.key_end.find_iter(before).last().map(|m| m.start());
    matches!((begin, end), (Some(b), e) if e.is_none_or(|e| e < b))
}

/// Whether byte `offset` of the file at `path` lies inside a private-key
/// block, judging by the bytes before it.
pub fn key_block_before(path: &Path, offset: u64) -> bool {
    let start = offset.saturating_sub(KEY_BLOCK_LOOKBACK);
    // Unreadable now: assume the worst.
    text_range(path, start, offset - start).map_or(true, |before| ends_inside_key_block(&before))
}

/// Bytes `from..from + len` of the text of the file at `path`: its bytes,
/// or for a UTF-16 file (with a BOM) the UTF-8 it is transcoded to, which is
/// what search and read offsets count.
pub fn text_range(path: &Path, from: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut file = File::open(path)?;
    let mut head = [0u8; 2];
    let utf16 = file.read_exact(&mut head).is_ok() && (head == [0xFF, 0xFE] || head == [0xFE, 0xFF]);
    let mut out = Vec::new();
    if utf16 {
        file.seek(SeekFrom::Start(0))?;
        let mut text = DecodeReaderBytesBuilder::new().bom_sniffing(true).build(file);
        std::io::copy(&mut (&mut text).take(from), &mut std::io::sink())?;
        text.take(len).read_to_end(&mut out)?;
    } else {
        file.seek(SeekFrom::Start(from))?;
        file.take(len).read_to_end(&mut out)?;
    }
    Ok(out)
}

/// The ranges of `text` to redact, sorted and disjoint. With
/// `starts_in_key`, the text begins inside a private-key block.
fn find(text: &[u8], starts_in_key: bool) -> Vec<Edit> {
    let p = patterns();
    let mut edits = Vec::new();
    // Private-key blocks: through the END line, or to the end of the text.
    let mut at = 0;
    let mut open = starts_in_key.then_some(0);
    loop {
        if let Some(start) = open.take() {
            let end = p.key_end.find_at(text, start).map_or(text.len(), |m| m.end());
            edits.push(Edit { start, end });
            at = end;
        }
        match p.key_begin.find_at(text, at) {
            Some(m) => open = Some(m.start()),
            None => break,
        }
    }
    for m in p.tokens.find_iter(text) {
        edits.push(Edit { start: m.start(), end: m.end() });
    }
    for c in p.assignment.captures_iter(text) {
        let v = c.get(1).unwrap();
        if entropy(v.as_bytes()) >= 3.0 {
            edits.push(Edit { start: v.start(), end: v.end() });
        }
    }
    edits.sort_by_key(|e| (e.start, std::cmp::Reverse(e.end)));
    let mut merged: Vec<Edit> = Vec::with_capacity(edits.len());
    for e in edits {
        match merged.last_mut() {
            Some(last) if e.start < last.end => last.end = last.end.max(e.end),
            _ => merged.push(e),
        }
    }
    merged
}

/// `text` with its secrets replaced, and the edits made (empty: unchanged).
pub fn redact(text: &[u8], starts_in_key: bool) -> (Vec<u8>, Vec<Edit>) {
    let edits = find(text, starts_in_key);
    if edits.is_empty() {
        return (text.to_vec(), edits);
    }
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    for e in &edits {
        out.extend_from_slice(&text[at..e.start]);
        out.extend_from_slice(MARK);
        at = e.end;
    }
    out.extend_from_slice(&text[at..]);
    (out, edits)
}

/// Where byte offset `pos` of the original text lands after `edits`. A
/// position inside a redacted range moves to the start of its mark (or, with
/// `end_side`, to its end).
pub fn remap(pos: usize, edits: &[Edit], end_side: bool) -> usize {
    let mut shift: isize = 0;
    for e in edits {
        if pos <= e.start {
            break;
        }
        let mark_start = (e.start as isize + shift) as usize;
        if pos < e.end {
            return if end_side { mark_start + MARK.len() } else { mark_start };
        }
        shift += MARK.len() as isize - (e.end - e.start) as isize;
    }
    (pos as isize + shift) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> String {
        String::from_utf8(redact(s.as_bytes(), false).0).unwrap()
    }

    #[test]
    fn known_token_shapes() {
        assert_eq!(r("aws_key_id AKIAIOSFODNN7EXAMPLE here"), "aws_key_id [REDACTED] here");
        assert_eq!(r("t=ghp_0123456789abcdefghijABCDEFGHIJ012345;"), "t=[REDACTED];");
        assert_eq!(r("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"), "[REDACTED]");
        assert_eq!(r("AKIA is a prefix, AKIASHORT is not a key"), "AKIA is a prefix, AKIASHORT is not a key");
    }

    #[test]
    fn assignments_need_a_long_high_entropy_value() {
        assert_eq!(r(r#"API_KEY = "q8Zr3xL0vT7mN2pW5kJ9""#), r#"API_KEY = "[REDACTED]""#);
        assert_eq!(r("password: hunter2"), "password: hunter2", "short");
        assert_eq!(r("token = aaaaaaaaaaaaaaaaaaaaaaaa"), "token = aaaaaaaaaaaaaaaaaaaaaaaa", "low entropy");
        assert_eq!(r("client_secret=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"), "client_secret=[REDACTED]");
        assert_eq!(r("let keyboard_layout = default_layout();"), "let keyboard_layout = default_layout();");
    }

    #[test]
    fn private_key_blocks_whole_or_to_the_end() {
        let pem = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nxyz\n-----END RSA PRIVATE KEY-----\nb\n";
        assert_eq!(r(pem), "a\n[REDACTED]\nb\n");
        assert_eq!(r("x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk"), "x\n[REDACTED]");
        let (t, _) = redact(b"MIIEowIBAAKCAQEA\n-----END PRIVATE KEY-----\nafter", true);
        assert_eq!(t, b"[REDACTED]\nafter");
        assert!(ends_inside_key_block(b"-----BEGIN EC PRIVATE KEY-----\nabc\n"));
        assert!(!ends_inside_key_block(b"-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n"));
        assert!(looks_like_key_body(b"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"));
        assert!(!looks_like_key_body(b"fn main() {}"));
    }

    #[test]
    fn spans_move_with_the_edits() {
        let text = b"x AKIAIOSFODNN7EXAMPLE y";
        let (_, edits) = redact(text, false);
        assert_eq!(remap(0, &edits, false), 0);
        assert_eq!(remap(22, &edits, false), 2 + MARK.len());
        assert_eq!(remap(5, &edits, false), 2);
        assert_eq!(remap(5, &edits, true), 2 + MARK.len());
    }
}
