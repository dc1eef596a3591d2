//! `search-text`: walk the roots in order, search each file through the sink,
//! and assemble one page of the sorted result stream.

use std::fs::File;
use std::io::Read;
use std::time::Instant;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, MmapChoice, Searcher, SearcherBuilder};

use crate::cursor::{self, Position};
use crate::request::{TextQuery, HEAP_LIMIT, MAX_OUTPUT_BYTES};
use crate::shape::named_warning;
use crate::sink::{FileSink, SinkConfig};
use crate::walk::{self, Walker};
use crate::{
    CaseMode, FileCount, OutputMode, QueryMode, SearchError, SearchStats, SearchTextRequest, SearchTextResponse,
    SkipCounts, Workspace,
};

pub fn search_text(ws: &Workspace, request: SearchTextRequest) -> Result<SearchTextResponse, SearchError> {
    let started = Instant::now();
    let mut warnings = Vec::new();
    let q = TextQuery::from_request(request, &mut warnings)?;
    let stream_key = q.stream_key();
    let resume = q.cursor.as_deref().map(|c| cursor::decode(&stream_key, c)).transpose()?;
    let matcher = build_matcher(&q)?;
    let mut searcher = build_searcher(&q);
    let walker = Walker::new(ws, &q.walk)?;
    let roots = walker.roots(&q.paths)?;
    let cfg = SinkConfig {
        matcher: &matcher,
        output: q.output,
        before: q.before,
        after: q.after,
        max_columns: q.max_columns,
        redact: ws.redact,
    };
    let deadline = started + q.timeout;
    let mut page = Page::new(&q, warnings);
    let after = resume.as_ref().map(|r| r.path.as_str());
    'roots: for root in &roots {
        if after.is_some_and(|a| walk::subtree_before(&root.rel, root.is_dir, a)) {
            continue;
        }
        for item in walker.walk(root, after) {
            let entry = match item {
                Ok(entry) => entry,
                Err(e) => {
                    page.problem(e.message, e.unreadable);
                    continue;
                }
            };
            if !entry.is_file {
                continue;
            }
            let (min_line, taken) = match &resume {
                Some(r) if entry.rel < r.path => continue,
                Some(r) if entry.rel == r.path => match r.line {
                    u64::MAX => continue,
                    line => (line, r.taken),
                },
                _ => (0, 0),
            };
            // Every call searches at least one file, so paging past a
            // timeout always makes progress.
            let deadline = (page.stats.files_scanned > 0).then_some(deadline);
            if deadline.is_some_and(|d| Instant::now() >= d) {
                page.timed_out = true;
                break 'roots;
            }
            page.search_file(&mut searcher, &cfg, &entry.rel, &entry.path, min_line, taken, deadline);
            if page.done || page.timed_out {
                break 'roots;
            }
        }
    }
    page.stats.skipped.denied = walker.denied.load(std::sync::atomic::Ordering::Relaxed);
    Ok(page.finish(&stream_key, started))
}

/// Whether the part of `file` the searcher has not read holds a NUL byte.
/// (UTF-16 files, transcoded before searching, are full of them: not binary.)
fn nul_in_rest(path: &std::path::Path, mut file: File) -> bool {
    let mut head = [0u8; 2];
    let utf16 = File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok()
        && (head == [0xFF, 0xFE] || head == [0xFE, 0xFF]);
    if utf16 {
        return false;
    }
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) if buf[..n].contains(&0) => return true,
            Ok(_) => {}
        }
    }
}

fn build_matcher(q: &TextQuery) -> Result<RegexMatcher, SearchError> {
    let mut b = RegexMatcherBuilder::new();
    // As ripgrep: `^`/`$` match at line boundaries; `.` never crosses lines
    // unless the pattern says `(?s)`.
    b.multi_line(true)
        .unicode(true)
        .octal(false)
        .fixed_strings(q.mode == QueryMode::Literal)
        .word(q.word)
        .dot_matches_new_line(false)
        .size_limit(32 << 20)
        .dfa_size_limit(32 << 20);
    match q.case {
        CaseMode::Sensitive => {}
        CaseMode::Insensitive => {
            b.case_insensitive(true);
        }
        CaseMode::Smart => {
            b.case_smart(true);
        }
    }
    if !q.multiline {
        b.line_terminator(Some(b'\n'));
    }
    b.build(&q.query).map_err(|e| SearchError::InvalidPattern(e.to_string()))
}

fn build_searcher(q: &TextQuery) -> Searcher {
    let content = q.output == OutputMode::Content;
    SearcherBuilder::new()
        .line_number(true)
        .multi_line(q.multiline)
        .before_context(if content { q.before } else { 0 })
        .after_context(if content { q.after } else { 0 })
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .memory_map(MmapChoice::never())
        .heap_limit(Some(HEAP_LIMIT))
        .build()
}

/// One page of results being assembled, and where the stream stands.
struct Page<'q> {
    q: &'q TextQuery,
    resp: SearchTextResponse,
    stats: SearchStats,
    skip_left: u64,
    returned: usize,
    text_bytes: usize,
    /// Everything up to here has been delivered or skipped.
    position: Option<Position>,
    /// A cap stopped the page with results left over: hand out a cursor.
    done: bool,
    timed_out: bool,
    capped_files: Vec<String>,
    unreadable: Vec<String>,
    too_long: Vec<String>,
    other_problems: Vec<String>,
}

impl<'q> Page<'q> {
    fn new(q: &'q TextQuery, warnings: Vec<String>) -> Page<'q> {
        Page {
            q,
            resp: SearchTextResponse {
                matches: Vec::new(),
                files: Vec::new(),
                truncated: false,
                timed_out: false,
                next_cursor: None,
                stats: empty_stats(),
                warnings,
            },
            stats: empty_stats(),
            skip_left: q.skip,
            returned: 0,
            text_bytes: 0,
            position: None,
            done: false,
            timed_out: false,
            capped_files: Vec::new(),
            unreadable: Vec::new(),
            too_long: Vec::new(),
            other_problems: Vec::new(),
        }
    }

    fn problem(&mut self, message: String, unreadable: bool) {
        if unreadable {
            self.stats.skipped.unreadable += 1;
            self.unreadable.push(message);
        } else {
            self.other_problems.push(message);
        }
    }

    /// Results this page still wants from any file (skipped ones included).
    fn wanted(&self) -> u64 {
        self.skip_left + (self.q.max_results - self.returned) as u64
    }

    fn search_file(
        &mut self,
        searcher: &mut Searcher,
        cfg: &SinkConfig<'_>,
        rel: &str,
        path: &std::path::Path,
        min_line: u64,
        taken: u64,
        deadline: Option<Instant>,
    ) {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) => return self.problem(crate::error_message(&walk::io_error(rel, &e)), true),
        };
        match file.metadata() {
            Ok(m) if m.len() > self.q.max_filesize => {
                self.stats.skipped.too_large += 1;
                return;
            }
            Ok(_) => {}
            Err(e) => return self.problem(crate::error_message(&walk::io_error(rel, &e)), true),
        }
        let per_file_left = self.q.per_file.map_or(u64::MAX, |cap| (cap as u64).saturating_sub(taken));
        let limit = match self.q.output {
            OutputMode::Content => per_file_left.min(self.wanted()),
            // A file is one result: found or not, and how many lines.
            OutputMode::FilesWithMatches => self.wanted().min(1),
            OutputMode::Count => {
                if self.wanted() == 0 {
                    0
                } else {
                    per_file_left
                }
            }
        };
        let budget = MAX_OUTPUT_BYTES.saturating_sub(self.text_bytes);
        let mut sink = FileSink::new(cfg, rel, path, min_line, limit, deadline, budget);
        let outcome = searcher.search_file(cfg.matcher, &file, &mut sink);
        let r = sink.results;
        self.stats.files_scanned += 1;
        self.stats.bytes_searched += r.bytes_searched;
        if let Err(e) = outcome {
            if e.to_string().contains("allocation limit") {
                self.stats.skipped.too_large += 1;
                self.too_long.push(rel.to_string());
            } else {
                self.problem(crate::error_message(&walk::io_error(rel, &e)), true);
            }
            return;
        }
        // A search that stopped early has not seen the rest of the file: a
        // NUL there still makes it binary, whatever the page size.
        if r.binary
            || (r.more || r.count > 0 && self.q.output == OutputMode::FilesWithMatches) && nul_in_rest(path, file)
        {
            self.stats.skipped.binary += 1;
            return;
        }
        if r.count > 0 || r.more {
            self.stats.files_matched += 1;
        }
        self.timed_out |= r.timed_out;
        let file_capped = r.more && r.count >= per_file_left;
        match self.q.output {
            OutputMode::Content => {
                let mut taken = taken;
                for m in r.matches {
                    if !self.take() {
                        return;
                    }
                    taken += 1;
                    self.position = Some(Position { path: rel.to_string(), line: m.end_line, taken });
                    if self.skip_left > 0 {
                        self.skip_left -= 1;
                        continue;
                    }
                    self.text_bytes +=
                        m.text.len() + m.context_before.iter().chain(&m.context_after).map(String::len).sum::<usize>();
                    self.resp.matches.push(m);
                    self.returned += 1;
                    if self.text_bytes > MAX_OUTPUT_BYTES {
                        self.resp.warnings.push(format!(
                            "output reached {MAX_OUTPUT_BYTES} bytes of text; pass next-cursor to continue"
                        ));
                        self.done = true;
                        self.resp.truncated = true;
                        return;
                    }
                }
            }
            // A count cut short by the timeout is wrong: search the file again
            // on the next page.
            OutputMode::Count if r.timed_out => return,
            OutputMode::FilesWithMatches | OutputMode::Count => {
                if r.count > 0 {
                    if !self.take() {
                        return;
                    }
                    if self.skip_left > 0 {
                        self.skip_left -= 1;
                    } else {
                        self.resp.files.push(FileCount { path: rel.to_string(), count: r.count });
                        self.returned += 1;
                    }
                }
            }
        }
        if r.timed_out {
            return;
        }
        if r.more && !file_capped {
            // A result past this page's end exists in this file.
            self.resp.truncated = true;
            self.done = true;
            return;
        }
        if file_capped && self.q.output != OutputMode::FilesWithMatches {
            self.resp.truncated = true;
            self.capped_files.push(rel.to_string());
        }
        self.position = Some(Position::file_done(rel.to_string()));
    }

    /// Whether the page has room for one more result; if not, it is done and
    /// truncated (a result exists past its end).
    fn take(&mut self) -> bool {
        if self.skip_left == 0 && self.returned >= self.q.max_results {
            self.resp.truncated = true;
            self.done = true;
            return false;
        }
        true
    }

    fn finish(mut self, stream_key: &str, started: Instant) -> SearchTextResponse {
        let s = &self.stats.skipped;
        let w = &mut self.resp.warnings;
        if s.binary > 0 {
            w.push(format!("{} binary file(s) skipped", s.binary));
        }
        let over_size = s.too_large - self.too_long.len() as u64;
        if over_size > 0 {
            w.push(format!("{over_size} file(s) skipped as larger than max-filesize ({} bytes)", self.q.max_filesize));
        }
        named_warning(w, "entries could not be read", &self.unreadable);
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
        if self.timed_out {
            w.push(format!("timed out after {} ms: partial results", self.q.timeout.as_millis()));
        }
        if (self.done || self.timed_out) && self.position.is_some() {
            let pos = self.position.as_ref().unwrap();
            self.resp.next_cursor = Some(cursor::encode(stream_key, pos));
            if self.done {
                w.push(format!("more results exist past these {}: pass next-cursor to continue", self.returned));
            }
        }
        self.resp.timed_out = self.timed_out;
        self.stats.matches_returned = self.returned as u64;
        self.stats.elapsed_ms = started.elapsed().as_millis() as u64;
        self.resp.stats = self.stats;
        self.resp
    }
}

fn empty_stats() -> SearchStats {
    SearchStats {
        files_scanned: 0,
        files_matched: 0,
        bytes_searched: 0,
        matches_returned: 0,
        elapsed_ms: 0,
        skipped: SkipCounts { binary: 0, too_large: 0, denied: 0, unreadable: 0 },
    }
}
