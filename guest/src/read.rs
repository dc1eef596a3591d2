//! `read-file`: a byte range or a line range of one file, read in bounded
//! pieces (a file larger than memory is never read whole), with where to
//! continue.

use std::io::{BufRead, BufReader, Read};

use encoding_rs_io::DecodeReaderBytesBuilder;

use crate::confine::Target;
use crate::error::io_error;
use crate::fs::FileAt;
use crate::redact;
use crate::request::{ReadPlan, MAX_READ_LINES_BYTES};
use crate::{RangeType, ReadFileRequest, ReadFileResponse, ReadRange, Redaction, SearchError, Workspace};

/// How much of a file's start is checked for a NUL byte (binary).
const SNIFF_BYTES: u64 = 8 * 1024;

/// How far past a range's edges redaction looks for the ends of the lines it
/// cuts (a longer line is redacted as far as this reaches).
const MAX_LINE_SCAN: u64 = 8 << 20;

pub fn read_file(ws: &Workspace, request: ReadFileRequest) -> Result<ReadFileResponse, SearchError> {
    let mut warnings = Vec::new();
    let plan = ReadPlan::from_request(&request, &mut warnings)?;
    let (rel, opened) = ws.resolve(&request.path)?;
    let mut file = match opened.target {
        Target::File(dir, name) => dir.open_file(&name).map_err(|e| io_error(&rel, &e))?,
        Target::Dir(_) => {
            return Err(SearchError::InvalidArgument(format!("{rel} is a directory; list it with list-files")))
        }
        // FIFOs, sockets, devices: opening one could block or never end.
        Target::Other => return Err(SearchError::InvalidArgument(format!("{rel} is not a regular file"))),
    };
    let total_bytes = file.size();
    let at = file.at();
    let binary = || SearchError::BinaryFile(rel.clone());
    let head = at.read_at(0, SNIFF_BYTES).map_err(|e| io_error(&rel, &e))?;
    // UTF-16 with a BOM is text: transcoded, as search does.
    let utf16 = head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]);
    if !utf16 && head.contains(&0) {
        return Err(binary());
    }
    let read = if utf16 {
        warnings.push("UTF-16 file, transcoded to UTF-8: offsets count bytes of the UTF-8 text".into());
        let mut text = DecodeReaderBytesBuilder::new().bom_sniffing(true).build(file);
        match plan {
            ReadPlan::Bytes { offset, max } => std::io::copy(&mut (&mut text).take(offset), &mut std::io::sink())
                .and_then(|_| read_bytes(&mut text, offset, max)),
            ReadPlan::Lines { start, max } => read_lines(text, start, max, &mut warnings),
        }
    } else {
        match plan {
            ReadPlan::Bytes { offset, max } => read_bytes(&mut RangeReader { at: &at, offset }, offset, max),
            ReadPlan::Lines { start, max } => read_lines(&mut file, start, max, &mut warnings),
        }
    }
    .map_err(|e| io_error(&rel, &e))?;
    if read.content.contains(&0) {
        return Err(binary());
    }
    let mut bytes = read.content;
    let mut redactions = Vec::new();
    if ws.redact && !bytes.is_empty() {
        let (redacted, found) = redact_range(&at, read.start, &bytes).map_err(|e| io_error(&rel, &e))?;
        if !found.is_empty() {
            bytes = redacted;
            redactions = found;
        }
    }
    let (lines_redacted, redacted_by) = crate::page::redaction_counts(std::iter::once(("", redactions.as_slice())));
    if lines_redacted > 0 {
        let rules: Vec<String> = redacted_by.iter().map(|r| format!("{} {}", r.rule, r.lines)).collect();
        warnings.push(format!(
            "{lines_redacted} line(s) with secrets replaced by [REDACTED] (by rule: {})",
            rules.join(", ")
        ));
    }

    let content = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            warnings.push("content is not valid UTF-8: invalid bytes were replaced with U+FFFD".into());
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    let range = match plan {
        ReadPlan::Bytes { offset, max } => ReadRange {
            range_type: RangeType::Bytes,
            offset_bytes: Some(offset),
            max_bytes: Some(max),
            start_line: None,
            max_lines: None,
        },
        ReadPlan::Lines { start, max } => ReadRange {
            range_type: RangeType::Lines,
            offset_bytes: None,
            max_bytes: None,
            start_line: Some(start),
            max_lines: Some(max),
        },
    };
    Ok(ReadFileResponse {
        path: rel,
        content,
        is_truncated: read.next_offset.is_some(),
        range,
        total_bytes,
        total_lines: read.total_lines,
        next_offset: read.next_offset,
        next_line: read.next_line,
        lines_redacted,
        redacted_by,
        warnings,
    })
}

struct Chunk {
    /// Byte offset of `content` in the file.
    start: u64,
    content: Vec<u8>,
    next_offset: Option<u64>,
    next_line: Option<u64>,
    total_lines: Option<u64>,
}

/// Reads a file from an offset through its descriptor.
struct RangeReader<'a> {
    at: &'a FileAt,
    offset: u64,
}

impl Read for RangeReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let bytes = self.at.read_at(self.offset, buf.len() as u64)?;
        buf[..bytes.len()].copy_from_slice(&bytes);
        self.offset += bytes.len() as u64;
        Ok(bytes.len())
    }
}

/// Redacts `content` — bytes `start..` of the text of `file` — as it is
/// redacted within its whole lines, with the lines before them as context:
/// the same answer search gives for those lines, so that a range edge can
/// neither cut a secret into pieces that no longer look like one nor hide
/// the key a value belongs to. A secret across an edge comes back as a whole
/// `[REDACTED]`. Returns the text and the redactions in it.
fn redact_range(file: &FileAt, start: u64, content: &[u8]) -> std::io::Result<(Vec<u8>, Vec<Redaction>)> {
    let line_start = line_start_before(file, start)?;
    let end = start + content.len() as u64;
    let mut after = Vec::new();
    if content.last() != Some(&b'\n') {
        let mut at = end;
        while (after.len() as u64) < MAX_LINE_SCAN {
            let chunk = file.text_range(at, 64 * 1024)?;
            match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    after.extend_from_slice(&chunk[..=i]);
                    break;
                }
                None if chunk.is_empty() => break,
                None => after.extend_from_slice(&chunk),
            }
            at += chunk.len() as u64;
        }
    }
    let context_start = line_start.saturating_sub(redact::LOOKBACK as u64);
    let before = file.text_range(context_start, line_start - context_start)?;
    let mut whole = file.text_range(line_start, start - line_start)?;
    let a = whole.len();
    whole.extend_from_slice(content);
    let b = whole.len();
    whole.extend_from_slice(&after);
    let (redacted, edits) = redact::redact_lines(&before, &whole);
    // Each redaction in the range, by its line there (1 is the range's first).
    let touched = edits
        .iter()
        .filter(|e| e.end > a && e.start < b)
        .map(|e| Redaction {
            line: 1 + memchr::memchr_iter(b'\n', &whole[a.min(e.start)..e.start]).count() as u64,
            rule: e.rule.name().to_string(),
        })
        .collect();
    let (a, b) = (redact::remap(a, &edits, false), redact::remap(b, &edits, true));
    Ok((redacted[a..b].to_vec(), touched))
}

/// Where the line holding byte `offset` of `file`'s text starts (looking
/// back at most [`MAX_LINE_SCAN`] bytes).
fn line_start_before(file: &FileAt, offset: u64) -> std::io::Result<u64> {
    let floor = offset.saturating_sub(MAX_LINE_SCAN);
    let mut end = offset;
    while end > floor {
        let from = end.saturating_sub(64 * 1024).max(floor);
        let chunk = file.text_range(from, end - from)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(from + i as u64 + 1);
        }
        end = from;
    }
    Ok(floor)
}

/// Lines as `sed` numbers them: a last line without a newline counts.
fn count_lines(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// Up to `max` bytes from `r`, which stands at byte `offset`.
fn read_bytes(r: &mut impl Read, offset: u64, max: u64) -> std::io::Result<Chunk> {
    let mut content = Vec::new();
    r.take(max).read_to_end(&mut content)?;
    let more = content.len() as u64 == max && r.read(&mut [0u8])? > 0;
    let end = offset.saturating_add(content.len() as u64);
    Ok(Chunk {
        start: offset,
        total_lines: (offset == 0 && !more).then(|| count_lines(&content)),
        next_offset: more.then_some(end),
        next_line: None,
        content,
    })
}

fn read_lines(file: impl Read, start: u64, max: u64, warnings: &mut Vec<String>) -> std::io::Result<Chunk> {
    let mut r = BufReader::with_capacity(64 * 1024, file);
    let mut content = Vec::new();
    let mut line = 1u64; // the line the reader is in
    let mut offset = 0u64; // bytes consumed
    let mut at_line_start = true;
    let mut taken = 0u64;
    let mut first = 0u64; // byte offset of the start line
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            // End of file: everything about it is known now.
            let total = line - 1 + u64::from(!at_line_start);
            return Ok(Chunk { start: first, content, next_offset: None, next_line: None, total_lines: Some(total) });
        }
        let newline = buf.iter().position(|&b| b == b'\n');
        let n = newline.map_or(buf.len(), |i| i + 1);
        if line < start {
            first = offset + n as u64;
        } else {
            let room = (MAX_READ_LINES_BYTES - content.len() as u64) as usize;
            if n > room {
                // One line is over the cap: return its start, say where it goes on.
                content.extend_from_slice(&buf[..room]);
                offset += room as u64;
                warnings.push(format!(
                    "line {line} is longer than {MAX_READ_LINES_BYTES} bytes and was cut; read the rest as bytes from offset {offset}"
                ));
                return Ok(Chunk {
                    start: first,
                    content,
                    next_offset: Some(offset),
                    next_line: Some(line + 1),
                    total_lines: None,
                });
            }
            content.extend_from_slice(&buf[..n]);
        }
        r.consume(n);
        offset += n as u64;
        at_line_start = newline.is_some();
        if newline.is_some() {
            if line >= start {
                taken += 1;
            }
            line += 1;
            if taken == max {
                let more = !r.fill_buf()?.is_empty();
                return Ok(Chunk {
                    start: first,
                    content,
                    next_offset: more.then_some(offset),
                    next_line: more.then_some(line),
                    total_lines: (!more).then_some(line - 1),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            std::fs::write(dir.path().join(name), bytes).unwrap();
        }
        let ws = Workspace::new(dir.path());
        (dir, ws)
    }

    fn req(path: &str) -> ReadFileRequest {
        ReadFileRequest::new(path)
    }

    fn lines(ws: &Workspace, path: &str, start: u64, max: u64) -> ReadFileResponse {
        ws.read_file(ReadFileRequest { start_line: Some(start), max_lines: Some(max), ..req(path) }).unwrap()
    }

    #[test]
    fn line_ranges_and_continuations() {
        let (_d, ws) = ws_with(&[("a.txt", b"one\r\ntwo\nthree"), ("e.txt", b"")]);
        let r = lines(&ws, "a.txt", 2, 1);
        assert_eq!((r.content.as_str(), r.is_truncated, r.next_line, r.next_offset), ("two\n", true, Some(3), Some(9)));
        let r = lines(&ws, "a.txt", 3, 5);
        assert_eq!((r.content.as_str(), r.is_truncated, r.total_lines), ("three", false, Some(3)));
        let r = lines(&ws, "a.txt", 1, 2);
        assert_eq!(r.content, "one\r\ntwo\n");
        let r = lines(&ws, "a.txt", 9, 2);
        assert_eq!((r.content.as_str(), r.is_truncated, r.total_lines), ("", false, Some(3)));
        let r = lines(&ws, "e.txt", 1, 2);
        assert_eq!((r.content.as_str(), r.total_lines, r.total_bytes), ("", Some(0), 0));
    }

    #[test]
    fn byte_ranges() {
        let (_d, ws) = ws_with(&[("a.txt", b"hello\nworld\n")]);
        let r = ws.read_file(ReadFileRequest { offset_bytes: Some(3), max_bytes: Some(4), ..req("a.txt") }).unwrap();
        assert_eq!((r.content.as_str(), r.next_offset, r.total_lines), ("lo\nw", Some(7), None));
        let r = ws.read_file(req("a.txt")).unwrap();
        assert_eq!((r.content.as_str(), r.is_truncated, r.total_lines), ("hello\nworld\n", false, Some(2)));
        let r = ws.read_file(ReadFileRequest { offset_bytes: Some(99), ..req("a.txt") }).unwrap();
        assert_eq!((r.content.as_str(), r.is_truncated), ("", false));
    }

    #[test]
    fn utf16_is_transcoded() {
        let (_d, ws) = ws_with(&[("u16.txt", &utf16le("one\ntwo\nthree\n"))]);
        let r = lines(&ws, "u16.txt", 2, 1);
        assert_eq!((r.content.as_str(), r.next_line), ("two\n", Some(3)));
        let r = ws.read_file(req("u16.txt")).unwrap();
        assert_eq!((r.content.as_str(), r.total_lines), ("one\ntwo\nthree\n", Some(3)));
        let r = ws.read_file(ReadFileRequest { offset_bytes: Some(4), max_bytes: Some(3), ..req("u16.txt") }).unwrap();
        assert_eq!((r.content.as_str(), r.next_offset), ("two", Some(7)));
    }

    fn utf16le(text: &str) -> Vec<u8> {
        let mut bytes = vec![0xFF, 0xFE];
        text.encode_utf16().for_each(|u| bytes.extend_from_slice(&u.to_le_bytes()));
        bytes
    }

    #[test]
    fn secrets_cut_by_a_range_edge_stay_hidden() {
        let text = "aws = AKIAIOSFODNN7EXAMPLE\ntoken: x\n";
        let (_d, ws) = ws_with(&[("cfg.txt", text.as_bytes()), ("u16.txt", &utf16le(text))]);
        for file in ["cfg.txt", "u16.txt"] {
            for (offset, max) in [(0, 16), (16, 30), (8, 10), (0, 100), (6, 20), (4, 6)] {
                let r = ws
                    .read_file(ReadFileRequest { offset_bytes: Some(offset), max_bytes: Some(max), ..req(file) })
                    .unwrap();
                for piece in ["AKIA", "IOSF", "ODNN", "7EXA", "MPLE"] {
                    assert!(!r.content.contains(piece), "{file} {offset}:{max} shows {piece}: {:?}", r.content);
                }
            }
        }
        let r = ws.read_file(ReadFileRequest { offset_bytes: Some(0), max_bytes: Some(10), ..req("cfg.txt") }).unwrap();
        assert_eq!(r.content, "aws = [REDACTED]");
        assert_eq!(r.next_offset, Some(10));
    }

    #[test]
    fn key_block_lines_in_utf16_stay_hidden() {
        let key = "x\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n";
        let (_d, ws) = ws_with(&[("k.txt", &utf16le(key))]);
        let r = lines(&ws, "k.txt", 3, 1);
        assert!(!r.content.contains("MIIE"), "{:?}", r.content);
    }

    #[test]
    fn errors_and_lossy_text() {
        let (d, ws) = ws_with(&[("bin", b"ab\0cd"), ("latin1.txt", b"caf\xe9\n")]);
        std::fs::create_dir(d.path().join("sub")).unwrap();
        assert!(matches!(ws.read_file(req("bin")), Err(SearchError::BinaryFile(p)) if p == "bin"));
        assert!(matches!(ws.read_file(req("sub")), Err(SearchError::InvalidArgument(m)) if m.contains("directory")));
        assert!(matches!(ws.read_file(req(".")), Err(SearchError::InvalidArgument(_))));
        assert!(matches!(ws.read_file(req("nope")), Err(SearchError::NotFound(p)) if p == "nope"));
        assert!(matches!(ws.read_file(req("../x")), Err(SearchError::OutsideWorkspace(_))));
        let r = ws.read_file(req("latin1.txt")).unwrap();
        assert_eq!(r.content, "caf\u{FFFD}\n");
        assert_eq!(r.warnings.len(), 1);
    }
}
