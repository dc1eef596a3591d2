//! `search-bytes`: `search-text` over a piece of a stream the caller hands
//! in (the CLI's stdin) rather than files. No file is opened: the bytes are
//! searched where they lie, through the sink every file's search uses, so
//! matching, redaction, context, outputs and caps are the same.

use std::rc::Rc;
use std::time::Instant;

use grep_searcher::{BinaryDetection, SearcherBuilder};

use super::{build_matcher, every_line_matcher};
use crate::fs::FileAt;
use crate::page;
use crate::request::{TextQuery, MAX_OUTPUT_BYTES};
use crate::sink::{FileSink, SinkConfig};
use crate::{
    BinaryMode, ByteChunk, FileCount, OutputMode, SearchError, SearchTextRequest, SearchTextResponse, Workspace,
};

pub fn search_bytes(
    ws: &Workspace,
    request: SearchTextRequest,
    chunk: ByteChunk,
) -> Result<SearchTextResponse, SearchError> {
    let started = Instant::now();
    let mut warnings = Vec::new();
    let q = TextQuery::from_request(request, &mut warnings)?;
    let matcher = build_matcher(&q)?;
    let every_line = if q.invert { Some(every_line_matcher(q.crlf, q.null_data)?) } else { None };
    let scan = every_line.as_ref().unwrap_or(&matcher);
    let content = q.output == OutputMode::Content;
    let ByteChunk { name, mut data, first_line, offset, seen_lines, taken } = chunk;
    // As rg reads stdin: a NUL byte is a line break (but where a match may
    // span lines, or all is text: -a).
    let convert = !q.multiline && q.binary != BinaryMode::Text;
    let nuls: Vec<usize> = if convert { memchr::memchr_iter(0, &data).collect() } else { Vec::new() };
    for i in nuls {
        data[i] = b'\n';
    }
    // The lines an earlier call searched: how many `data` holds, and where
    // the new ones start.
    let (seen, seen_end) = match seen_lines.checked_sub(1) {
        None => (0, 0),
        Some(last) => match memchr::memchr_iter(b'\n', &data).nth(usize::try_from(last).unwrap_or(usize::MAX)) {
            Some(i) => (seen_lines, i + 1),
            None => (memchr::memchr_iter(b'\n', &data).count() as u64, data.len()),
        },
    };
    let data: Rc<[u8]> = data.into();
    let cfg = SinkConfig {
        matcher: &matcher,
        scan,
        invert: q.invert,
        output: q.output,
        count_matches: q.count_matches,
        replace: q.replace.as_deref().map(str::as_bytes),
        before: q.before,
        after: q.after,
        max_columns: q.max_columns,
        keep_cr: q.streaming,
        trailing_matches: q.streaming,
        redact: ws.redact,
        passthru: q.passthru,
        null_data: q.null_data,
    };
    // The per-file cap is the stream's; a page holds at most max-results
    // lines (counts and file lists: one entry).
    let per_file = q.per_file.map_or(u64::MAX, |cap| (cap as u64).saturating_sub(taken));
    // (Passthru: a page holds at most max-results lines, results or not;
    // the cap is of results.)
    let (limit, hit_cap) = match (content, q.passthru) {
        (true, true) => (q.max_results as u64, per_file),
        (true, false) => (per_file.min(q.max_results as u64), u64::MAX),
        (false, _) => (per_file, u64::MAX),
    };
    let mut searcher = SearcherBuilder::new();
    if q.crlf {
        searcher.line_terminator(grep_matcher::LineTerminator::crlf());
    } else if q.null_data {
        searcher.line_terminator(grep_matcher::LineTerminator::byte(b'\0'));
    }
    let mut searcher = searcher
        // (Lines are numbered whatever the output: the seen ones are told
        // apart by their numbers.)
        .line_number(true)
        .multi_line(q.multiline)
        .before_context(if content { q.before } else { 0 })
        .after_context(if content { q.after } else { 0 })
        .binary_detection(BinaryDetection::none())
        .passthru(q.passthru)
        .stop_on_nonmatch(q.stop_on_nonmatch)
        .build();
    let deadline = started + q.timeout;
    let mut sink =
        FileSink::new(&cfg, &name, FileAt::bytes(data.clone()), seen, limit, Some(deadline), MAX_OUTPUT_BYTES);
    sink.repeat_seen = content && q.after > 0;
    sink.hit_cap = hit_cap;
    sink.capped = q.per_file.is_some() && limit == per_file && !q.passthru;
    super::literal::set_deadline(Some(deadline));
    let outcome = if cfg.redact && (searcher.multi_line_with_matcher(scan) || q.stop_on_nonmatch || matcher.is_pcre2())
    {
        // As a file's multi-line search (see `search_file`): the text is
        // redacted whole and searched as callers see it, so that a secret
        // neither joins nor splits the blocks of lines around it (nor,
        // with stop-on-nonmatch, moves where the search ends; nor, with
        // PCRE2, is seen by a look-around next to a match).
        let shown = sink.redact_whole(&data, false);
        searcher.search_slice(scan, shown.as_deref().unwrap_or(&data), &mut sink)
    } else {
        searcher.search_slice(scan, &data, &mut sink)
    };
    let mut pcre2_late = false;
    match outcome {
        Err(e) if super::literal::timed_out(&e) => pcre2_late = true,
        Err(e) => return Err(SearchError::Io(format!("{name}: {e}"))),
        Ok(()) => {}
    }
    let taken = sink.taken();
    let mut r = sink.into_results();
    r.timed_out |= pcre2_late;
    // Lines and offsets in the stream.
    let before = first_line.max(1) - 1;
    let mut matches = r.matches;
    for m in &mut matches {
        m.line += before;
        m.end_line += before;
        m.offset += offset;
        m.bytes_searched += offset;
        for x in &mut m.redactions {
            x.line += before;
        }
    }
    let mut stats = page::empty_stats();
    stats.files_scanned = 1;
    // (Passthru's lines of context are returned, but are no results.)
    let results = match q.passthru {
        true => matches.iter().filter(|m| !super::assemble::is_context(m)).count() as u64,
        false => taken,
    };
    stats.files_matched = u64::from(results > 0);
    stats.bytes_searched = r.bytes_searched.saturating_sub(seen_end as u64);
    stats.matches_returned = taken;
    (stats.lines_redacted, stats.redacted_by) =
        page::redaction_counts(matches.iter().map(|m| (m.path.as_str(), m.redactions.as_slice())));
    stats.elapsed_ms = started.elapsed().as_millis() as u64;
    let files = match content || r.count == 0 {
        true => Vec::new(),
        false => vec![FileCount { path: name, count: r.count }],
    };
    Ok(SearchTextResponse {
        matches,
        files,
        truncated: r.more,
        timed_out: r.timed_out,
        next_cursor: None,
        stats,
        warnings,
        binary_notices: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use crate::{ByteChunk, OutputMode, QueryMode, SearchTextRequest, Workspace};
    use std::collections::BTreeMap;

    fn request(query: &str, before: u32, after: u32, output: OutputMode) -> SearchTextRequest {
        SearchTextRequest {
            mode: Some(QueryMode::Regex),
            context_before: Some(before),
            context_after: Some(after),
            output: Some(output),
            max_results: Some(5000),
            streaming: true,
            ..SearchTextRequest::new(query)
        }
    }

    /// Every line an answer shows (matches as `:`, context as `-`), by
    /// number, and the results' lines, as a printer merges them.
    type Shown = (BTreeMap<u64, String>, Vec<u64>);

    fn show(shown: &mut Shown, r: &crate::SearchTextResponse, new_from: u64) {
        for m in &r.matches {
            let first = m.line - m.context_before.len() as u64;
            for (i, t) in m.context_before.iter().enumerate() {
                shown.0.entry(first + i as u64).or_insert(format!("-{t}"));
            }
            shown.0.insert(m.line, format!(":{}", m.text));
            for (i, t) in m.context_after.iter().enumerate() {
                shown.0.entry(m.end_line + 1 + i as u64).or_insert(format!("-{t}"));
            }
            if m.line >= new_from {
                shown.1.push(m.line);
            }
        }
    }

    /// `text` searched in pieces of `each` lines, each sent after the
    /// `seen` lines before it.
    fn in_pieces(ws: &Workspace, r: &SearchTextRequest, text: &str, each: usize, seen: usize) -> Shown {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut shown = Shown::default();
        let mut at = 0;
        while at < lines.len() {
            let from = at.saturating_sub(seen);
            let data: String = lines[from..(at + each).min(lines.len())].concat();
            let offset = lines[..from].concat().len() as u64;
            let chunk = ByteChunk {
                name: "-".into(),
                data: data.into_bytes(),
                first_line: from as u64 + 1,
                offset,
                seen_lines: (at - from) as u64,
                taken: shown.1.len() as u64,
            };
            let answer = ws.search_bytes(r.clone(), chunk).unwrap();
            show(&mut shown, &answer, at as u64 + 1);
            at += each;
        }
        shown
    }

    #[test]
    fn a_stream_in_pieces_shows_what_it_shows_whole() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let mut text = String::new();
        let mut seed = 11u64;
        for n in 0..120 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let word = ["foo", "bar", "baz", "foo bar", "x"][(seed >> 33) as usize % 5];
            text.push_str(&format!("{n} {word}\n"));
        }
        for (before, after) in [(0, 0), (2, 0), (0, 3), (2, 2), (5, 1)] {
            for invert in [false, true] {
                let mut r = request("foo", before, after, OutputMode::Content);
                r.invert_match = invert;
                let whole = in_pieces(&ws, &r, &text, 1000, 0);
                assert!(!whole.1.is_empty());
                for each in [1, 2, 3, 7, 50] {
                    let seen = before.max(after) as usize;
                    assert_eq!(
                        in_pieces(&ws, &r, &text, each, seen),
                        whole,
                        "-B{before} -A{after} -v {invert} by {each}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_stream_caps_and_counts_and_nul_bytes_break_lines() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let chunk = |data: &str, first_line: u64, seen_lines: u64, taken: u64| ByteChunk {
            name: "-".into(),
            data: data.as_bytes().to_vec(),
            first_line,
            offset: 100,
            seen_lines,
            taken,
        };
        // -m 3: two taken before, one more now.
        let mut r = request("foo", 0, 0, OutputMode::Content);
        r.max_matches_per_file = Some(3);
        let a = ws.search_bytes(r.clone(), chunk("foo\nfoo\nfoo\n", 5, 1, 2)).unwrap();
        assert_eq!(a.matches.iter().map(|m| (m.line, m.offset)).collect::<Vec<_>>(), [(6, 104)]);
        assert!(a.truncated);
        // Counts are of the new lines; a NUL is a line break.
        let c =
            ws.search_bytes(request("^foo", 0, 0, OutputMode::Count), chunk("foo\nx\0foo\nfoo\n", 1, 1, 0)).unwrap();
        assert_eq!((c.files[0].path.as_str(), c.files[0].count, c.stats.bytes_searched), ("-", 2, 10));
        let none = ws.search_bytes(request("zzz", 0, 0, OutputMode::Count), chunk("foo\n", 1, 0, 0)).unwrap();
        assert!(none.files.is_empty());
    }

    #[test]
    fn redaction_reads_the_seen_lines_before_a_piece() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun";
        let text = format!(
            "-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nid AKIAIOSFODNN7EXAMPLE\n"
        );
        let r = request("MIIE|^-----END|id", 1, 0, OutputMode::Content);
        let whole = in_pieces(&ws, &r, &text, 100, 0);
        assert!(whole.0.values().all(|l| !l.contains("MIIE") && !l.contains("AKIA")), "{whole:?}");
        assert_eq!(in_pieces(&ws, &r, &text, 1, 3), whole);
        assert_eq!(in_pieces(&ws, &r, &text, 2, 3), whole);
    }
}
