//! One page of `search-text` results, assembled from the search's events
//! (a single instance's, or every shard's replayed in walk order).

use std::rc::Rc;
use std::time::Instant;

use crate::cursor::Position;
use crate::page::{self, empty_stats, Paging};
use crate::request::{TextQuery, HEAP_LIMIT};
use crate::shape::{json_len, match_cost, named_warning, RESULT_OVERHEAD};
use crate::{FileCount, FileOutcome, OutputMode, SearchStats, SearchTextResponse, ShardEventKind};

/// One page of results being assembled from the search's events.
pub(super) struct Page {
    q: Rc<TextQuery>,
    pub(super) paging: Paging,
    resp: SearchTextResponse,
    pub(super) stats: SearchStats,
    capped_files: Vec<String>,
    unreadable: Vec<String>,
    /// Compressed files (search-zip) whose stream broke off.
    broken: Vec<String>,
    too_long: Vec<String>,
    other_problems: Vec<String>,
    /// Files the request named (not found by a walk of a directory).
    named: Vec<String>,
    binary_named: Vec<String>,
}

impl Page {
    pub(super) fn new(q: Rc<TextQuery>, resume: Option<Position>, warnings: Vec<String>, named: Vec<String>) -> Page {
        // (Files a caller's own walk found: none named, see `as-rg-walked`.)
        let named = if q.binary == crate::BinaryMode::AsRgWalked { Vec::new() } else { named };
        Page {
            paging: Paging::new(resume, q.skip, q.max_results),
            q,
            resp: SearchTextResponse {
                matches: Vec::new(),
                files: Vec::new(),
                truncated: false,
                timed_out: false,
                next_cursor: None,
                stats: empty_stats(),
                warnings,
                binary_notices: Vec::new(),
            },
            stats: empty_stats(),
            capped_files: Vec::new(),
            unreadable: Vec::new(),
            broken: Vec::new(),
            too_long: Vec::new(),
            other_problems: Vec::new(),
            named,
            binary_named: Vec::new(),
        }
    }

    fn problem(&mut self, message: String, unreadable: bool) {
        if unreadable {
            self.stats.skipped.unreadable += 1;
            if message.contains(crate::decompress::FAILED) {
                self.broken.push(message);
            } else {
                self.unreadable.push(message);
            }
        } else {
            self.other_problems.push(message);
        }
    }

    pub(super) fn per_file_left(&self, taken: u64) -> u64 {
        self.q.per_file.map_or(u64::MAX, |cap| (cap as u64).saturating_sub(taken))
    }

    /// Results to take from the next file, which had `taken` delivered.
    pub(super) fn limit(&self, taken: u64) -> u64 {
        let wanted = self.paging.wanted();
        match self.q.output {
            OutputMode::Content => self.per_file_left(taken).min(wanted),
            // A file is one result: found or not, and how many lines.
            OutputMode::FilesWithMatches => wanted.min(1),
            OutputMode::Count => {
                if wanted == 0 {
                    0
                } else {
                    self.per_file_left(taken)
                }
            }
        }
    }

    pub(super) fn accept(&mut self, key: &str, kind: ShardEventKind) {
        // A file left out is behind the stream's position too, so a page cut
        // short (by time) after it hands out a cursor past it.
        match kind {
            ShardEventKind::Skipped(n) => page::count_skips(&mut self.stats.skipped, &n),
            ShardEventKind::Problem((message, unreadable)) => {
                self.problem(message, unreadable);
                // Keys of walk problems end in NUL; an open failure's is its file.
                if !key.is_empty() && !key.ends_with('\0') {
                    self.paging.file_done(key);
                }
            }
            ShardEventKind::TooLarge => {
                self.stats.skipped.too_large += 1;
                self.paging.file_done(key);
            }
            ShardEventKind::IndexSkipped(binary) => {
                self.stats.files_skipped_by_index += 1;
                if binary {
                    self.binary(key);
                }
                self.paging.file_done(key);
            }
            ShardEventKind::IndexSkippedRun((files, binary)) => {
                self.stats.files_skipped_by_index += files;
                self.stats.skipped.binary += binary;
                self.paging.file_done(key);
            }
            ShardEventKind::Searched(r) => self.searched(key, r),
            // As `searched` for each of them: only the last one's place in
            // the stream can stand (the others are before it).
            ShardEventKind::Unmatched((files, bytes)) => {
                self.stats.files_scanned += files;
                self.stats.bytes_searched += bytes;
                if self.paging.resume_point(key).is_some() {
                    self.paging.file_done(key);
                }
            }
        }
    }

    /// Whether the request named the file `rel` (rg searches it whole).
    pub(super) fn is_named(&self, rel: &str) -> bool {
        self.named.iter().any(|n| n == rel)
    }

    /// Whether the request named any file.
    pub(super) fn names_files(&self) -> bool {
        !self.named.is_empty()
    }

    fn binary(&mut self, rel: &str) {
        self.stats.skipped.binary += 1;
        if self.named.iter().any(|n| n == rel) {
            self.binary_named.push(rel.to_string());
        }
    }

    fn searched(&mut self, rel: &str, mut r: FileOutcome) {
        self.stats.files_scanned += 1;
        self.stats.bytes_searched += r.bytes_searched;
        // (As rg's stats: a search that ended in an error, a compressed
        // file whose stream broke off, counts no search nor bytes: taken
        // back on the page that finishes the file. A page that ended inside
        // it counted it; the caller takes that back as the next page
        // searches the file again.)
        let bytes = r.bytes_searched;
        // (A compressed file whose stream broke off returns the lines
        // before the break too, as rg prints them: its error counts once
        // the file is done, below.)
        let broken = match r.error.take() {
            Some(message) if r.matches.is_empty() || self.q.output != OutputMode::Content => {
                self.stats.files_scanned -= 1;
                self.stats.bytes_searched -= bytes;
                self.problem(message, true);
                self.paging.file_done(rel);
                return;
            }
            broken => broken,
        };
        if r.too_long {
            self.stats.skipped.too_large += 1;
            self.too_long.push(rel.to_string());
            self.paging.file_done(rel);
            return;
        }
        if r.binary {
            self.binary(rel);
            self.paging.file_done(rel);
            return;
        }
        let Some((_, taken)) = self.paging.resume_point(rel) else { return };
        // A file with results for a page that takes no more is the next
        // page's: it counts there (rg counts each file once).
        // (A search given no room for one says only that there is `more`.)
        let results = r.more || if self.q.output == OutputMode::Content { !r.matches.is_empty() } else { r.count > 0 };
        if results && self.paging.takes_no_more() {
            self.stats.files_scanned -= 1;
            self.stats.bytes_searched -= bytes;
            self.paging.cut();
            return;
        }
        if r.timed_out && self.stats.files_scanned == 1 {
            self.overran(rel, &r);
        }
        // A shard may have searched with a larger limit (it had fewer results
        // before this file): `take` cuts the results to this page's.
        let per_file_left = self.per_file_left(taken);
        let notice = r.binary_notice.clone();
        if r.count > 0 || r.more || notice.as_ref().is_some_and(|n| !n.stopped) {
            self.stats.files_matched += 1;
        }
        if notice.as_ref().is_some_and(|n| n.stopped) {
            self.stats.skipped.binary += 1;
        }
        if r.timed_out {
            self.paging.time_out();
        }
        // (Passthru: past the cap the file goes on, its results context.)
        let file_capped = r.more && r.count >= per_file_left && !self.q.passthru;
        match self.q.output {
            OutputMode::Content => {
                let mut taken = taken;
                let path_cost = json_len(rel);
                for m in r.matches {
                    if !self.paging.take() {
                        return;
                    }
                    // (A passthru line of context is no result of the
                    // file's: its cap counts results.)
                    taken += u64::from(!is_context(&m));
                    // (A match that takes its last line's terminator ends
                    // at the next line's start: that line is still to come.)
                    let end_line = m.end_line - u64::from(m.end_column == 1 && m.end_line > m.line);
                    self.paging.reached_line(rel, end_line, taken);
                    if self.paging.skipping() {
                        continue;
                    }
                    let cost = match_cost(path_cost, json_len(&m.text), &m);
                    self.resp.matches.push(m);
                    // (A match the sink cut to fit leaves less than a line.)
                    if self.paging.delivered(cost, 4096) {
                        self.output_full();
                        return;
                    }
                }
            }
            // A count cut short by the timeout is wrong: search the file again
            // on the next page.
            OutputMode::Count if r.timed_out => return,
            OutputMode::FilesWithMatches | OutputMode::Count => {
                if r.count > 0 {
                    if !self.paging.take() {
                        return;
                    }
                    if !self.paging.skipping() {
                        let cost = RESULT_OVERHEAD + json_len(rel);
                        self.resp.files.push(FileCount { path: rel.to_string(), count: r.count });
                        if self.paging.delivered(cost, 0) {
                            self.output_full();
                            return;
                        }
                    }
                }
            }
        }
        if r.timed_out {
            return;
        }
        if r.more && !file_capped {
            // A result past this page's end exists in this file.
            self.paging.cut();
            return;
        }
        if file_capped && self.q.output != OutputMode::FilesWithMatches {
            self.paging.truncate();
            self.capped_files.push(rel.to_string());
        }
        if let Some(n) = notice.filter(|_| !self.paging.skipping()) {
            self.resp.binary_notices.push(n);
        }
        if let Some(message) = broken {
            self.stats.files_scanned -= 1;
            self.stats.bytes_searched -= bytes;
            self.problem(message, true);
        }
        self.paging.file_done(rel);
    }

    /// The first file of a page ran out of time. Content up to there is
    /// kept (the cursor goes on inside the file); a count, or a file that
    /// gave nothing before the time ran out, would never get further on a
    /// page of its own, so it is passed over with a warning naming it.
    fn overran(&mut self, rel: &str, r: &FileOutcome) {
        let progress = self.q.output == OutputMode::Content && !r.matches.is_empty();
        if !progress {
            self.stats.skipped.unreadable += 1;
            self.unreadable
                .push(format!("{rel}: not searched to its end: the time limit ran out inside it (raise timeout-ms)"));
            self.paging.file_done(rel);
        }
    }

    /// The response is as large as one may be: done, truncated.
    fn output_full(&mut self) {
        self.resp.warnings.push(page::output_reached());
        self.paging.cut();
    }

    pub(super) fn finish(mut self, stream_key: &str, started: Instant) -> SearchTextResponse {
        let s = &self.stats.skipped;
        let w = &mut self.resp.warnings;
        let found = self.paging.returned() > 0;
        if !found {
            w.extend(page::left_out_warnings(s.denied, s.ignored, s.hidden));
        }
        page::binary_skipped(w, s.binary, &self.binary_named, found);
        let over_size = s.too_large - self.too_long.len() as u64;
        if over_size > 0 {
            w.push(format!("{over_size} file(s) skipped as larger than max-filesize ({} bytes)", self.q.max_filesize));
        }
        named_warning(w, "entries could not be read", &self.unreadable);
        named_warning(w, crate::decompress::BROKEN, &self.broken);
        named_warning(w, "problems with ignore files", &self.other_problems);
        named_warning(
            w,
            &format!("file(s) skipped: a line (with multiline, the file) is over {HEAP_LIMIT} bytes"),
            &self.too_long,
        );
        if let Some(cap) = self.q.per_file {
            named_warning(
                w,
                &format!("file(s) had more than {cap} matching lines (max-matches-per-file)"),
                &self.capped_files,
            );
        }
        self.resp.next_cursor = self.paging.finish(stream_key);
        self.resp.truncated = self.paging.truncated();
        self.resp.timed_out = self.paging.timed_out();
        self.stats.matches_returned = self.paging.returned() as u64;
        self.stats.elapsed_ms = started.elapsed().as_millis() as u64;
        (self.stats.lines_redacted, self.stats.redacted_by) =
            page::redaction_counts(self.resp.matches.iter().map(|m| (m.path.as_str(), m.redactions.as_slice())));
        self.resp.stats = self.stats;
        self.resp
    }
}

/// Whether `m` is a line of context returned on its own (passthru): its
/// column is 0, never a result's.
pub(crate) fn is_context(m: &crate::TextMatch) -> bool {
    m.column == 0
}
