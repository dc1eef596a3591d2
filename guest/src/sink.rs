//! The one seam between searching and output: a `grep-searcher` sink that
//! collects one file's results, attaches context to every match, applies the
//! file's result limit and stops early (returning `false`) once it has seen
//! one result past it — which is how callers learn that more exist.

use std::collections::VecDeque;
use std::io;
use std::time::Instant;

use crate::search::SearchMatcher;
use grep_matcher::{Captures, LineTerminator, Matcher};
use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkFinish, SinkMatch};

use crate::fs::FileAt;
use crate::redact::{self, Edit};
use crate::shape::{context_text, cut_to_json, json_len, line_body, line_col, match_cost, match_text};
use crate::{OutputMode, Redaction, TextMatch};

/// What is fixed for a whole search.
pub struct SinkConfig<'m> {
    /// The query's matcher.
    pub matcher: &'m SearchMatcher,
    /// The matcher the searcher runs: the query's, or with `invert` one of
    /// every line.
    pub scan: &'m SearchMatcher,
    /// The results are the lines the query does not match.
    pub invert: bool,
    pub output: OutputMode,
    /// A count is of matches (a per-file limit still counts lines).
    pub count_matches: bool,
    /// Matches shown replaced by this (`rg -r`).
    pub replace: Option<&'m [u8]>,
    pub before: usize,
    pub after: usize,
    pub max_columns: usize,
    /// Returned lines keep a carriage return before their newline.
    pub keep_cr: bool,
    /// A caller streaming every result, as rg: past a file's cap, lines
    /// that match within the after-context still owed come back as
    /// results, as rg 15 prints them (`-m 1 -A 2`).
    pub trailing_matches: bool,
    /// Replace secrets in returned text.
    pub redact: bool,
    /// Every line is returned: those that are no result as lines of
    /// context of their own (see [`FileSink::passthru_line`]).
    pub passthru: bool,
    /// Lines end at NUL bytes (rg's `--null-data`).
    pub null_data: bool,
}

/// One file's results.
#[derive(Default)]
pub struct FileResults {
    /// `content` output: the matches, in line order.
    pub matches: Vec<TextMatch>,
    /// Results found: matching lines (`rg -c`'s count), capped at the limit.
    pub count: u64,
    /// A result past the limit (or past the text budget) exists.
    pub more: bool,
    pub binary: bool,
    /// Where the searcher found binary data (a NUL byte), if it did.
    pub binary_offset: Option<u64>,
    /// A result came after binary data in a file searched on past it:
    /// the search stopped there, the result not taken (rg's "binary file
    /// matches"), its (matches, lines) counted as rg's `--stats` counts them.
    pub binary_hit: Option<(u64, u64)>,
    /// That line came after a break in the context (rg's `--` before its
    /// message).
    pub binary_break: bool,
    pub timed_out: bool,
    /// Bytes read, as rg counts them (see `text-match.bytes-searched`).
    pub bytes_searched: u64,
    /// Bytes of text in `matches` (match text and context).
    pub text_bytes: usize,
}

/// One searcher buffer redacted whole (see [`FileSink::buffer_edits`]).
#[derive(Default)]
struct BufferRedaction {
    /// Where the buffer starts in the file's text.
    start: Option<u64>,
    /// Lines asked for in it.
    asked: u32,
    /// Its edits, in the buffer's coordinates, once made, and where the
    /// text they cover ends.
    edits: Option<(Vec<Edit>, usize)>,
}

pub struct FileSink<'a, 'm> {
    cfg: &'a SinkConfig<'m>,
    path: &'a str,
    /// What `path` costs as JSON.
    path_cost: usize,
    /// The file, to read the lines before a returned one (redaction looks
    /// back for the key a value belongs to, or a private-key block).
    file: FileAt,
    /// The last text read for that: (offset, bytes).
    lookback: Option<(u64, Vec<u8>)>,
    /// What redaction learned of this file's lines.
    memo: redact::Memo,
    /// Counts and file lists: the searcher's buffer redacted whole, once
    /// it holds many matches (see [`FileSink::visible`]).
    buffer_redaction: BufferRedaction,
    /// Lines up to this one were delivered on an earlier page.
    min_line: u64,
    /// Results among those lines whose after-context reaches past them
    /// are returned again, uncounted (a stream searched piece by piece:
    /// `search-bytes`).
    pub repeat_seen: bool,
    /// Results to collect from this file.
    limit: u64,
    /// `limit` is the file's own cap (max-matches-per-file), not the room
    /// left in the page: rg's search of the file ends at it.
    pub capped: bool,
    /// Passthru: results to take (the file's cap); later ones come back
    /// as lines of context, as rg's -m with --passthru shows them.
    pub hit_cap: u64,
    /// Passthru: results taken (`taken` counts every line returned).
    hits: u64,
    /// stop-on-nonmatch with an inverted search (which hands the searcher
    /// every line): a result was seen, and the line that ended the first
    /// run of them passed over (see `matched`).
    selected: bool,
    passed_over: bool,
    /// The searcher goes on past binary data (rg's convert): content output
    /// stops at the first line after it, as rg's printer does, unless
    /// `binary_results` (rg's JSON printer, which goes on).
    pub convert_binary: bool,
    pub binary_results: bool,
    /// Results collected (lines; `results.count` may count matches).
    taken: u64,
    /// When to stop early with what was found, if at all.
    deadline: Option<Instant>,
    /// Bytes of text this file may still return (the response's cap).
    budget: usize,
    /// Recent lines (number, shaped text, the rules that redacted in it)
    /// for before-context.
    recent: VecDeque<(u64, String, Vec<&'static str>)>,
    /// Matches still owed after-context: (index, last line of the match).
    owed: Vec<(usize, u64)>,
    /// The searcher broke the context (rg's `--`) and no line came since.
    break_pending: bool,
    /// Lines of before-context handed over since the last other line
    /// (number, offset, length): rg prints each as it comes, so a search
    /// that stops at binary data before their match shows them.
    before_run: Vec<(u64, u64, u64)>,
    /// Where the last match recorded ends (its lines' terminator included):
    /// where rg's search stops once the file's limit is reached.
    last_match_end: u64,
    /// The last line of the last result taken (see [`Self::trailing`]).
    last_taken_line: u64,
    pub results: FileResults,
    /// For a file searched redacted whole (see `search_file`): the rules
    /// that redacted each line before the search, which the lines handed to
    /// this sink no longer show.
    pub redacted_before: std::collections::BTreeMap<u64, Vec<&'static str>>,
    /// And its redactions: the searcher's offsets are in the redacted text.
    whole_edits: Vec<Edit>,
    /// Whether the text searched is the file's redacted whole: its offsets
    /// are not the file's.
    whole: bool,
}

impl<'a, 'm> FileSink<'a, 'm> {
    /// What the search found, its byte offsets in the file's text (not in
    /// the text redacted whole: a secret's mark is not its length).
    pub fn into_results(self) -> FileResults {
        let mut r = self.results;
        if !self.whole_edits.is_empty() {
            let edits = &self.whole_edits;
            let unmap = |at: u64, end: bool| redact::unmap(at as usize, edits, end) as u64;
            for m in &mut r.matches {
                (m.offset, m.bytes_searched) = (unmap(m.offset, false), unmap(m.bytes_searched, true));
            }
            r.bytes_searched = unmap(r.bytes_searched, true);
            r.binary_offset = r.binary_offset.map(|at| unmap(at, false));
        }
        r
    }

    /// `text` redacted whole, for a multi-line search to see it as callers
    /// do (a secret then neither joins nor splits the blocks of lines
    /// around it), each line's rules noted for the answer to count; `None`
    /// when nothing was redacted.
    /// `nul_breaks`: the searcher reads a NUL byte as a line break (binary
    /// data converted, reading a buffer at a time).
    pub fn redact_whole(&mut self, text: &[u8], nul_breaks: bool) -> Option<Vec<u8>> {
        // (NUL-terminated records are lines, to redaction as to the searcher.)
        let lines = records_as_lines(text, self.cfg.null_data || nul_breaks);
        let edits = redact::edits_at(b"", &lines, 0, &mut redact::Memo::default());
        self.whole_edits.clone_from(&edits);
        self.whole = true;
        let (mut line, mut at) = (1, 0);
        for e in &edits {
            let before = &text[at..e.start];
            line += match (self.cfg.null_data, nul_breaks) {
                (true, _) => memchr::memchr_iter(b'\0', before).count(),
                (false, true) => memchr::memchr2_iter(b'\0', b'\n', before).count(),
                (false, false) => memchr::memchr_iter(b'\n', before).count(),
            } as u64;
            at = e.start;
            let rules = self.redacted_before.entry(line).or_default();
            if !rules.contains(&e.rule.name()) {
                rules.push(e.rule.name());
            }
        }
        (!edits.is_empty()).then(|| redact::apply(text, &edits))
    }

    pub fn new(
        cfg: &'a SinkConfig<'m>,
        path: &'a str,
        file: FileAt,
        min_line: u64,
        limit: u64,
        deadline: Option<Instant>,
        budget: usize,
    ) -> FileSink<'a, 'm> {
        FileSink {
            cfg,
            path,
            path_cost: json_len(path),
            file,
            lookback: None,
            memo: redact::Memo::default(),
            buffer_redaction: BufferRedaction::default(),
            min_line,
            repeat_seen: false,
            limit,
            capped: false,
            hit_cap: u64::MAX,
            hits: 0,
            selected: false,
            passed_over: false,
            convert_binary: false,
            binary_results: false,
            taken: 0,
            deadline,
            budget,
            recent: VecDeque::new(),
            owed: Vec::new(),
            break_pending: false,
            before_run: Vec::new(),
            last_match_end: 0,
            last_taken_line: 0,
            results: FileResults::default(),
            redacted_before: Default::default(),
            whole_edits: Vec::new(),
            whole: false,
        }
    }

    /// `bytes` — whole lines, starting at byte `offset` of the file's text —
    /// with secrets redacted, and the edits made (see [`FileSink::edits`]).
    fn redacted(&mut self, bytes: &[u8], offset: u64, buffer: Option<(&[u8], usize)>) -> (Vec<u8>, Vec<Edit>) {
        let edits = self.edits(bytes, offset, buffer);
        (redact::apply(bytes, &edits), edits)
    }

    /// The redactions of `bytes` — whole lines, starting at byte `offset` of
    /// the file's text —, in its coordinates. The text before them comes
    /// from `buffer` (the searcher's, which holds `bytes` at `at`) when it
    /// reaches back far enough, else from the file.
    fn edits(&mut self, bytes: &[u8], offset: u64, buffer: Option<(&[u8], usize)>) -> Vec<Edit> {
        if !self.cfg.redact {
            return Vec::new();
        }
        if let Some((buffer, at)) = buffer {
            if let Some(edits) = self.buffer_edits(bytes.len(), offset, buffer, at) {
                return edits;
            }
        }
        self.edits_alone(bytes, offset, buffer)
    }

    /// [`FileSink::edits`], of `bytes` alone.
    fn edits_alone(&mut self, bytes: &[u8], offset: u64, buffer: Option<(&[u8], usize)>) -> Vec<Edit> {
        // (Redacted whole, a line is redacted again — what the whole
        // redaction may not have seen as the searcher shows it: standard
        // input a UTF-16 BOM makes it decode, a NUL byte it keeps in a line —
        // with the searcher's own text before it, never the file's: its
        // offsets are the redacted text's.)
        if let Some((buffer, at)) = buffer {
            if self.whole || at >= redact::LOOKBACK || at as u64 == offset {
                let before = &buffer[at.saturating_sub(redact::LOOKBACK)..at];
                let before = records_as_lines(before, self.cfg.null_data);
                return redact::edits_at(&before, bytes, offset, &mut self.memo);
            }
        }
        if self.whole {
            return redact::edits_at(b"", bytes, offset, &mut self.memo);
        }
        let from = offset.saturating_sub(redact::LOOKBACK as u64);
        // Lines close together share one read of what comes before them.
        let fresh = match &self.lookback {
            Some((start, text)) => *start > from || start + text.len() as u64 <= offset,
            None => true,
        };
        if fresh {
            let text = self.file.text_range(from, offset - from + 64 * 1024).unwrap_or_default();
            self.lookback = Some((from, text));
        }
        let (start, text) = self.lookback.as_ref().expect("just filled");
        let skip = ((from - start) as usize).min(text.len());
        let upto = ((offset - start) as usize).min(text.len());
        let before = records_as_lines(&text[skip..upto], self.cfg.null_data || self.convert_binary);
        if upto as u64 != offset - start {
            // The file ended early (it changed): where these lines are is
            // not known.
            return redact::edits_at(&before, bytes, before.len() as u64, &mut redact::Memo::default());
        }
        redact::edits_at(&before, bytes, offset, &mut self.memo)
    }

    /// The edits of the `len` bytes of whole lines at `at` in the searcher's
    /// `buffer` (at byte `offset` of the file), in their coordinates, from
    /// the whole buffer redacted at once — once the buffer has asked
    /// for many lines (for its size, or for the text up to them: one
    /// redaction of a line costs about what a buffer's 160 bytes do); `None`
    /// until then. A line's redaction depends only on it and the text before
    /// it, so the answer is the same.
    fn buffer_edits(&mut self, len: usize, offset: u64, buffer: &[u8], at: usize) -> Option<Vec<Edit>> {
        // (NUL-terminated records: the buffer read whole would be one line.)
        if self.cfg.null_data {
            return None;
        }
        let start = offset - at as u64;
        if self.buffer_redaction.start != Some(start) {
            self.buffer_redaction = BufferRedaction { start: Some(start), ..Default::default() };
        }
        self.buffer_redaction.asked += 1;
        let asked = self.buffer_redaction.asked as usize;
        // (Or as soon as the lines asked so far cost more than the text up
        // to them would: a buffer where most lines are asked for.)
        if asked <= (buffer.len() / 160).clamp(16, 400) && (asked <= 16 || asked * 160 < at + len) {
            return None;
        }
        if self.buffer_redaction.edits.is_none() {
            let end = buffer.iter().rposition(|&c| c == b'\n').map_or(buffer.len(), |i| i + 1).max(at + len);
            // (At the file's start nothing comes before it: no read.)
            let edits = self.edits_alone(&buffer[..end], start, Some((buffer, 0)));
            self.buffer_redaction.edits = Some((edits, end));
        }
        let (edits, end) = self.buffer_redaction.edits.as_ref().expect("just set");
        if at + len > *end {
            return None;
        }
        // (Sorted and disjoint, each inside one line.)
        let first = edits.partition_point(|e| e.end <= at);
        let line = edits[first..].iter().take_while(|e| e.start < at + len);
        let within = |x: usize| x.clamp(at, at + len) - at;
        Some(line.map(|e| Edit { start: within(e.start), end: within(e.end), rule: e.rule }).collect())
    }

    /// Whether the match `block` (at byte `offset`; at `at` in the
    /// searcher's `buffer`) is still a match once redacted — for outputs
    /// that return no text.
    fn visible(&mut self, block: &[u8], offset: u64, buffer: &[u8], at: usize) -> bool {
        // What the matcher saw: a carriage return before the newline stays.
        let body = self.body(block);
        let edits = self.edits(body, offset, Some((buffer, at)));
        edits.is_empty() || clear_match(self.cfg.matcher, &redact::apply(body, &edits), &marks(&edits))
    }

    /// Records one line the searcher reported (matched or context), which
    /// starts at byte `offset`, for the context of matches around it.
    fn saw_line(&mut self, number: u64, offset: u64, bytes: &[u8], buffer: Option<(&[u8], usize)>) {
        if self.cfg.output != OutputMode::Content || (self.cfg.before == 0 && self.owed.is_empty()) {
            return;
        }
        let (shown, edits) = self.redacted(self.body(bytes), offset, buffer);
        let text = self.context_text(&shown);
        let mut rules = rules_of(&edits);
        for r in self.redacted_before.get(&number).into_iter().flatten() {
            if !rules.contains(r) {
                rules.push(r);
            }
        }
        let mut still_owed = Vec::with_capacity(self.owed.len());
        for &(i, last) in &self.owed {
            let m = &mut self.results.matches[i];
            if number > last && number <= last + self.cfg.after as u64 {
                self.results.text_bytes += json_len(&text) + 4;
                m.context_after.push(text.clone());
                m.redactions.extend(rules.iter().map(|r| Redaction { line: number, rule: r.to_string() }));
            }
            if m.context_after.len() < self.cfg.after && number < last + self.cfg.after as u64 {
                still_owed.push((i, last));
            }
        }
        self.owed = still_owed;
        if self.cfg.before > 0 {
            if self.recent.len() == self.cfg.before {
                self.recent.pop_front();
            }
            self.recent.push_back((number, text, rules));
        }
    }

    /// The contiguous run of recent lines ending just before `line`, and
    /// their redactions.
    fn context_before(&self, line: u64) -> (Vec<String>, Vec<Redaction>) {
        let (mut out, mut redactions) = (Vec::new(), Vec::new());
        let mut want = line;
        for (n, text, rules) in self.recent.iter().rev() {
            if *n + 1 != want || out.len() == self.cfg.before {
                break;
            }
            out.push(text.clone());
            redactions.extend(rules.iter().map(|r| Redaction { line: *n, rule: r.to_string() }));
            want = *n;
        }
        out.reverse();
        redactions.reverse();
        (out, redactions)
    }

    /// Records a match starting at `line`: its redacted text (`shown`, the
    /// bytes the matcher saw — a carriage return before the newline kept —
    /// with the marks `edits` made). Spans and columns are found in that
    /// text, clear of the marks: where a match falls inside a secret, or how
    /// long the secret was, does not show. With `broken`, the block's last
    /// line break (not in `shown`) may end a match: it is found with it, and
    /// shown up to it (as rg).
    /// `offset` and `end`: where the block starts and ends in the file.
    /// `around`: the searcher's buffer and the block's range in it, where
    /// PCRE2 finds the block's matches again (see [`Around`]).
    #[allow(clippy::too_many_arguments)]
    fn record_match(
        &mut self,
        line: u64,
        lines_in_block: usize,
        mut shown: Vec<u8>,
        edits: Vec<Edit>,
        broken: bool,
        offset: u64,
        end: u64,
        around: Option<Around<'_>>,
    ) {
        let marks = marks(&edits);
        // Each mark's line (a record's, with null-data), and the rule that
        // made it (once per line).
        let terminator = if self.cfg.null_data { b'\0' } else { b'\n' };
        let mut redactions: Vec<Redaction> = Vec::new();
        for (e, &(at, _)) in edits.iter().zip(&marks) {
            let r = Redaction {
                line: line + memchr::memchr_iter(terminator, &shown[..at]).count() as u64,
                rule: e.rule.name().into(),
            };
            if !redactions.contains(&r) {
                redactions.push(r);
            }
        }
        let last = line + lines_in_block as u64 - 1;
        for (&n, rules) in self.redacted_before.range(line..=last) {
            for r in rules {
                let r = Redaction { line: n, rule: r.to_string() };
                if !redactions.contains(&r) {
                    redactions.push(r);
                }
            }
        }
        // The matches as found (with the line break, when it can end one),
        // then cut to the text shown.
        let (mut found, mut body) = (Vec::new(), shown.len());
        // PCRE2 looks around: its matches found again in the text around
        // the block, as rg's printer finds them (where the block shows as
        // it is in the searcher's buffer: no redaction of its own).
        let around = around.filter(|_| self.cfg.matcher.is_pcre2() && edits.is_empty() && !self.cfg.invert);
        if broken {
            shown.push(b'\n');
        }
        if let Some(a) = &around {
            found = a.matches(self.cfg.matcher).into_iter().filter(|&(s, _)| s <= body).collect();
        } else if !self.cfg.invert {
            let _ = self.cfg.matcher.find_iter(&shown, |m| {
                if m.start() <= body && marks.iter().all(|&(a, z)| m.end() < a || m.start() > z) {
                    found.push((m.start(), m.end()));
                }
                true
            });
        }
        if self.cfg.invert && broken {
            shown.pop();
        }
        if !self.cfg.keep_cr && shown[..body].last() == Some(&b'\r') {
            body -= 1;
        }
        // (Cut in place but where a replacement needs the matches as found.)
        let clip = |(s, e): (usize, usize)| (s.min(body), e.min(body));
        // Where the last match ends as found: past the text when it takes
        // the block's line terminator (-U), said by the match's end (the
        // next line's start), as rg's JSON gives its span whole.
        let found_end = found.last().map(|&(_, e)| e.min(shown.len()));
        let mut spans = match self.cfg.replace {
            Some(_) => found.iter().copied().map(clip).collect(),
            None => {
                let mut spans = std::mem::take(&mut found);
                spans.iter_mut().for_each(|s| *s = clip(*s));
                spans
            }
        };
        let (column, end_line, end_column) = match (spans.first(), spans.last()) {
            (Some(&(s, _)), Some(&(_, e))) => {
                let (_, col) = line_col(&shown, line, s);
                let (el, ec) = line_col(&shown, line, e.max(found_end.filter(|_| e >= body).unwrap_or(e)));
                (col, el, ec)
            }
            _ => (1, line, 1),
        };
        match self.cfg.replace {
            Some(replacement) if !found.is_empty() => {
                // What follows the last match and is not shown stays out.
                let hidden = shown.len().saturating_sub(body.max(found.last().map_or(0, |m| m.1)));
                let room = self.budget.saturating_sub(self.results.text_bytes);
                let hay = around.as_ref().map(|a| (a.buffer, a.range.start));
                (shown, spans) = replaced(self.cfg.matcher, &shown, hay, &found, replacement, room);
                shown.truncate(shown.len() - hidden.min(shown.len()));
                let len = shown.len();
                spans.iter_mut().for_each(|s| *s = (s.0.min(len), s.1.min(len)));
            }
            _ => shown.truncate(body),
        }
        let (text, mut submatches) = match_text(&shown, &spans, self.cfg.max_columns.saturating_mul(lines_in_block));
        // One match may not take more than what is left of the response.
        let room = self.budget.saturating_sub(self.results.text_bytes + self.path_cost + 1024);
        let whole = text.len();
        let (text, text_cost) = cut_to_json(text, room);
        if text.len() < whole {
            // The response is full: this match ends it, as a cut.
            self.results.more = true;
        }
        submatches.retain(|s| s.end as usize <= text.len());
        let (context_before, before_redactions) = self.context_before(line);
        redactions.splice(0..0, before_redactions);
        let last_line = line + lines_in_block as u64 - 1;
        let m = TextMatch {
            path: self.path.to_string(),
            line,
            column,
            end_line,
            end_column,
            text,
            submatches,
            context_before,
            context_after: Vec::new(),
            redactions,
            offset,
            // (Known once the search ends: see `finish`.)
            bytes_searched: end,
        };
        self.results.text_bytes += match_cost(self.path_cost, text_cost, &m);
        self.results.matches.push(m);
        if self.cfg.after > 0 {
            self.owed.push((self.results.matches.len() - 1, last_line));
        }
    }

    /// The matches in the block `mat` (as rg counts them: starting in it,
    /// with a byte after it to look at, but where redaction is on), or where
    /// it shows redacted, those clear of the redactions — of which the
    /// searcher finds no more than `left` (see [`count_up_to`]). The count,
    /// how many the searcher found, and whether a match past those exists.
    fn matches_in(&mut self, searcher: &Searcher, mat: &SinkMatch<'_>, left: u64) -> (u64, u64, bool) {
        let (buffer, range) = (mat.buffer(), mat.bytes_range_in_buffer());
        if self.cfg.redact {
            let (shown, edits) =
                self.redacted(self.body(mat.bytes()), mat.absolute_byte_offset(), Some((buffer, range.start)));
            if !edits.is_empty() {
                let marks = marks(&edits);
                let clear = |s: usize, e: usize| marks.iter().all(|&(a, z)| e < a || s > z);
                return count_up_to(self.cfg.matcher, &shown, 0..usize::MAX, clear, left);
            }
        }
        if self.cfg.matcher.is_pcre2() {
            // (PCRE2 looks around: as rg's printer, see [`Around`].)
            let multi_line = searcher.multi_line_with_matcher(self.cfg.matcher);
            let end = Around::end(buffer, &range, multi_line, searcher.line_terminator());
            return count_up_to(self.cfg.matcher, &buffer[..end], range, |_, _| true, left);
        }
        // (Not with redaction: the byte after may begin a secret.)
        let text = &buffer[..(range.end + usize::from(!self.cfg.redact)).min(buffer.len())];
        count_up_to(self.cfg.matcher, text, range, |_, _| true, left)
    }

    /// Whether a matching line at `line` is past the file's own cap, within
    /// the after-context of the last result taken (see
    /// `SinkConfig::trailing_matches`): rg's searcher reports those only
    /// on its fast line-by-line path (not with PCRE2, stop-on-nonmatch, or
    /// a pattern that may span lines).
    fn trailing(&self, searcher: &Searcher, line: u64) -> bool {
        self.cfg.trailing_matches
            && !self.cfg.matcher.is_pcre2()
            && !searcher.stop_on_nonmatch()
            && !searcher.multi_line_with_matcher(self.cfg.matcher)
            && self.cfg.output != OutputMode::FilesWithMatches
            && self.results.text_bytes <= self.budget
            && self.capped
            && self.taken >= self.limit
            && line > self.last_taken_line
            && line <= self.last_taken_line + self.cfg.after as u64
    }

    /// Results counted against the limit.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Past the limit, the search goes on only to finish owed after-context.
    fn go_on(&self) -> bool {
        !self.results.more || !self.owed.is_empty()
    }

    fn expired(&mut self) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.results.timed_out = true;
        }
        self.results.timed_out
    }
}

impl Sink for FileSink<'_, '_> {
    type Error = io::Error;

    fn matched(&mut self, searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        if self.expired() {
            return Ok(false);
        }
        let line = mat.line_number().unwrap_or(1);
        let offset = mat.absolute_byte_offset();
        let block = mat.bytes();
        self.break_pending = false;
        if self.past_binary() {
            return Ok(self.past_binary_line(searcher, mat));
        }
        self.before_run.clear();
        if self.cfg.invert && searcher.stop_on_nonmatch() {
            // (Inverted, the searcher sees every line match: where its
            // results end is told here, as rg's searcher tells it.)
            let selected = !self.cfg.matcher.is_match(self.body(block)).unwrap_or(false);
            // As rg's searcher, whose fast line-by-line search (not with
            // passthru, nor with NUL-terminated lines) takes the first run
            // of results and the matching line after it at once, and only
            // then looks line by line: that line is passed over, unshown.
            let fast = !self.cfg.passthru && !self.cfg.null_data;
            if !selected && self.selected && fast && !self.passed_over {
                self.passed_over = true;
                return Ok(true);
            }
            if !selected && self.selected {
                if self.cfg.passthru {
                    self.passthru_line(line, offset, block, Some((mat.buffer(), mat.bytes_range_in_buffer().start)));
                } else {
                    self.saw_line(line, offset, block, Some((mat.buffer(), mat.bytes_range_in_buffer().start)));
                }
                return Ok(false);
            }
            self.selected |= selected;
        }
        // (A result before the new lines of a stream's piece, shown again
        // for its after-context: see `repeat_seen`.)
        let repeat = self.repeat_seen && line <= self.min_line && line + self.cfg.after as u64 > self.min_line;
        if (line > self.min_line || repeat) && !self.results.more {
            // A line matches only as callers see it: redaction is no oracle
            // for what it hides (a pattern that matched only inside a secret
            // finds nothing).
            let buffer = (mat.buffer(), mat.bytes_range_in_buffer().start);
            let shaped = match self.cfg.output {
                // (What the matcher saw: a carriage return before the newline stays.)
                OutputMode::Content => Some(self.redacted(self.body(block), offset, Some(buffer))),
                _ => None,
            };
            // Inverted, the searcher hands over every line.
            let raw_hit = !self.cfg.invert || self.cfg.matcher.is_match(self.body(block)).unwrap_or(false);
            let hit = raw_hit
                && match &shaped {
                    Some((shown, edits)) => edits.is_empty() || clear_match(self.cfg.matcher, shown, &marks(edits)),
                    None => !self.cfg.redact || self.visible(block, offset, buffer.0, buffer.1),
                };
            let passthru_context = self.cfg.passthru && (hit == self.cfg.invert || self.hits >= self.hit_cap);
            if passthru_context {
                // Passthru: a line that is no result (or one past the
                // file's cap) comes back as a line of context.
                let (mut at, mut in_buffer) = (offset, mat.bytes_range_in_buffer().start);
                for (i, l) in mat.lines().enumerate() {
                    if !self.passthru_line(line + i as u64, at, l, Some((mat.buffer(), in_buffer))) {
                        return Ok(false);
                    }
                    at += l.len() as u64;
                    in_buffer += l.len();
                }
                return Ok(true);
            } else if hit == self.cfg.invert {
            } else if repeat {
                if let Some((shown, edits)) = shaped {
                    let lines = mat.lines().count().max(1);
                    let around = Around::of(searcher, self.cfg.matcher, mat);
                    self.record_match(line, lines, shown, edits, false, offset, offset + block.len() as u64, around);
                }
            } else if self.trailing(searcher, line) {
                // As rg 15: past the file's cap, a line that matches within
                // the after-context of the last result taken is a result too
                // (shown, counted; owed no context of its own).
                let end = offset + block.len() as u64;
                self.last_match_end = end;
                let many = self.cfg.count_matches && !self.cfg.invert;
                self.results.count += if many { self.matches_in(searcher, mat, u64::MAX).0.max(1) } else { 1 };
                if let Some((shown, edits)) = shaped {
                    let lines = mat.lines().count().max(1);
                    let around = Around::of(searcher, self.cfg.matcher, mat);
                    let owed = self.owed.len();
                    self.record_match(line, lines, shown, edits, false, offset, end, around);
                    self.owed.truncate(owed);
                }
            } else if self.taken >= self.limit || self.results.text_bytes > self.budget {
                self.results.more = true;
            } else {
                // As `rg -c` (rg 15): one per matching line; with -U, when
                // the pattern can span lines, one per match — and a per-file
                // limit then counts the matches the searcher finds (see
                // `count_up_to`); with `count-matches`, one per match.
                let multiline = self.cfg.output == OutputMode::Count
                    && !self.cfg.invert
                    && searcher.multi_line_with_matcher(self.cfg.matcher);
                let matches = multiline || self.cfg.count_matches && !self.cfg.invert;
                let left = if multiline { self.limit - self.taken } else { u64::MAX };
                let (n, found, past) = if matches { self.matches_in(searcher, mat, left) } else { (1, 1, false) };
                self.results.count += n.max(1);
                self.last_match_end = offset + block.len() as u64;
                self.last_taken_line = line + mat.lines().count().max(1) as u64 - 1;
                self.taken += if multiline { found.max(1) } else { 1 };
                self.hits += 1;
                self.results.more |= past;
                match (self.cfg.output, shaped) {
                    (OutputMode::Content, Some((shown, edits))) => {
                        let lines = mat.lines().count().max(1);
                        let broken = block.ends_with(b"\n") && searcher.multi_line_with_matcher(self.cfg.matcher);
                        let around = Around::of(searcher, self.cfg.matcher, mat);
                        let end = offset + block.len() as u64;
                        self.record_match(line, lines, shown, edits, broken, offset, end, around)
                    }
                    (OutputMode::Content, None) => unreachable!("content is always shaped"),
                    (OutputMode::FilesWithMatches, _) => return Ok(false),
                    (OutputMode::Count, _) => {}
                }
            }
        }
        // After record_match, so a match's own lines are not its context.
        let (mut at, mut in_buffer) = (offset, mat.bytes_range_in_buffer().start);
        for (i, l) in mat.lines().enumerate() {
            self.saw_line(line + i as u64, at, l, Some((mat.buffer(), in_buffer)));
            at += l.len() as u64;
            in_buffer += l.len();
        }
        Ok(self.go_on())
    }

    fn context(&mut self, _searcher: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        let broken = std::mem::take(&mut self.break_pending);
        if self.expired() {
            return Ok(false);
        }
        if self.past_binary() {
            // (The searcher broke the context before this line, then found
            // the NUL byte in it — as rg's --mmap looks at each line.)
            self.results.binary_break |= broken;
            self.stopped_at_binary();
            return Ok(false);
        }
        match ctx.kind() {
            SinkContextKind::Before => {
                let n = ctx.line_number().unwrap_or(0);
                self.before_run.push((n, ctx.absolute_byte_offset(), ctx.bytes().len() as u64));
            }
            _ => self.before_run.clear(),
        }
        if self.cfg.passthru && *ctx.kind() == SinkContextKind::Other {
            let line = ctx.line_number().unwrap_or(0);
            return Ok(self.passthru_line(line, ctx.absolute_byte_offset(), ctx.bytes(), None));
        }
        self.saw_line(ctx.line_number().unwrap_or(0), ctx.absolute_byte_offset(), ctx.bytes(), None);
        Ok(self.go_on())
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, io::Error> {
        if self.past_binary() {
            self.results.binary_break = true;
        } else {
            self.break_pending = true;
        }
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, offset: u64) -> Result<bool, io::Error> {
        self.results.binary_offset = Some(offset);
        if self.convert_binary {
            return Ok(true);
        }
        self.results.binary = true;
        Ok(false)
    }

    fn finish(&mut self, searcher: &Searcher, finish: &SinkFinish) -> Result<(), io::Error> {
        // As rg: a search the file's limit ended stopped at the end of its
        // last match (its after-context is no part of its count) — but a
        // multi-line one, which held the whole file.
        let limited = self.taken >= self.limit
            && (self.capped || self.results.more)
            && !searcher.multi_line_with_matcher(self.cfg.scan);
        self.results.bytes_searched = if limited { self.last_match_end } else { finish.byte_count() };
        for m in &mut self.results.matches {
            m.bytes_searched = self.results.bytes_searched;
        }
        if let Some(offset) = finish.binary_byte_offset() {
            self.results.binary_offset.get_or_insert(offset);
            self.results.binary |= !self.convert_binary;
        }
        Ok(())
    }
}

impl FileSink<'_, '_> {
    /// A line's text without its terminator, as the matcher saw it (a
    /// carriage return before the newline stays; with null-data, the NUL
    /// goes).
    fn body<'b>(&self, bytes: &'b [u8]) -> &'b [u8] {
        if self.cfg.null_data {
            bytes.strip_suffix(b"\0").unwrap_or(bytes)
        } else {
            line_body(bytes, true)
        }
    }

    /// The text returned for a line of context (`shown`: its body, redacted).
    fn context_text(&self, shown: &[u8]) -> String {
        if self.cfg.null_data {
            // (A record's line breaks are its text.)
            match_text(shown, &[], self.cfg.max_columns).0
        } else {
            context_text(shown, self.cfg.max_columns, self.cfg.keep_cr)
        }
    }

    /// Passthru: line `number` (at `offset`; at `buffer.1` in the
    /// searcher's buffer when given), which is no result, returned as a line
    /// of context of its own: column 0, no submatches, its redactions
    /// counted as any line's. Counted against the page's room (not the
    /// file's cap). Whether the search goes on.
    fn passthru_line(&mut self, number: u64, offset: u64, bytes: &[u8], buffer: Option<(&[u8], usize)>) -> bool {
        if number <= self.min_line {
            return true;
        }
        if self.results.more || self.taken >= self.limit || self.results.text_bytes > self.budget {
            self.results.more = true;
            return false;
        }
        let (shown, edits) = self.redacted(self.body(bytes), offset, buffer);
        let mut rules = rules_of(&edits);
        for r in self.redacted_before.get(&number).into_iter().flatten() {
            if !rules.contains(r) {
                rules.push(r);
            }
        }
        let text = self.context_text(&shown);
        let room = self.budget.saturating_sub(self.results.text_bytes + self.path_cost + 1024);
        let whole = text.len();
        let (text, text_cost) = cut_to_json(text, room);
        if text.len() < whole {
            self.results.more = true;
        }
        let end = offset + bytes.len() as u64;
        let m = self.line_alone(number, offset, end, text, &rules);
        self.results.text_bytes += match_cost(self.path_cost, text_cost, &m);
        self.results.matches.push(m);
        self.taken += 1;
        self.last_match_end = end;
        !self.results.more
    }

    /// The search stops at binary data: the lines of before-context rg
    /// printed as they came, whose match it never reached, come back on
    /// their own (column 0, as passthru's lines of context).
    fn stopped_at_binary(&mut self) {
        for (number, offset, len) in std::mem::take(&mut self.before_run) {
            let Some((_, text, rules)) = self.recent.iter().find(|(n, ..)| *n == number) else { continue };
            if number <= self.min_line {
                continue;
            }
            let m = self.line_alone(number, offset, offset + len, text.clone(), rules);
            self.results.text_bytes += match_cost(self.path_cost, json_len(&m.text), &m);
            self.results.matches.push(m);
        }
    }

    /// Line `number` (at `offset`, searched up to `end`) returned as no
    /// result: column 0, no submatches, its redactions by `rules`.
    fn line_alone(&self, number: u64, offset: u64, end: u64, text: String, rules: &[&str]) -> TextMatch {
        TextMatch {
            path: self.path.to_string(),
            line: number,
            column: 0,
            end_line: number,
            end_column: 0,
            text,
            submatches: Vec::new(),
            context_before: Vec::new(),
            context_after: Vec::new(),
            redactions: rules.iter().map(|r| Redaction { line: number, rule: r.to_string() }).collect(),
            offset,
            bytes_searched: end,
        }
    }

    /// Content output of a file searched on past binary data, once there
    /// (and only to its first result there: rg's text).
    fn past_binary(&self) -> bool {
        self.convert_binary
            && !self.binary_results
            && self.results.binary_offset.is_some()
            && self.cfg.output == OutputMode::Content
    }

    /// A line the searcher matched past binary data, where rg's printer
    /// prints nothing more: the search stops at the first result, counted
    /// but not taken, or at a line rg shows as context; any other line is
    /// passed over (inverted, the searcher hands over every line). A result
    /// is one as callers see it: a match hidden in a secret is none, or
    /// "binary file matches" would tell a guess at the secret right.
    /// Whether to go on.
    fn past_binary_line(&mut self, searcher: &Searcher, mat: &SinkMatch<'_>) -> bool {
        let (block, offset) = (mat.bytes(), mat.absolute_byte_offset());
        let (shown, edits) =
            self.redacted(self.body(block), offset, Some((mat.buffer(), mat.bytes_range_in_buffer().start)));
        let raw_hit = !self.cfg.invert || self.cfg.matcher.is_match(self.body(block)).unwrap_or(false);
        let hit = raw_hit && (edits.is_empty() || clear_match(self.cfg.matcher, &shown, &marks(&edits)));
        if hit != self.cfg.invert {
            let matches = if self.cfg.invert { 0 } else { self.matches_in(searcher, mat, u64::MAX).0 };
            self.results.binary_hit = Some((matches, mat.lines().count().max(1) as u64));
        } else if self.owed.is_empty() && self.cfg.before == 0 && !self.cfg.passthru {
            // (No context asked for around it: rg's searcher never shows it.
            // With before-context, it is taken for the next result's, which
            // rg would show if one comes within reach.)
            return true;
        }
        self.stopped_at_binary();
        false
    }
}

/// `before` (the text before a line, for redaction to read back) with its
/// NUL bytes as line breaks when the searcher reads them so (`nul_lines`):
/// NUL-terminated records (`null_data`), redacted as lines are, or a file
/// searched on past binary data, whose buffers hold its NUL bytes as line
/// breaks (read from the file or from a buffer, the text is the same).
fn records_as_lines(before: &[u8], nul_lines: bool) -> std::borrow::Cow<'_, [u8]> {
    if nul_lines && before.contains(&0) {
        before.iter().map(|&b| if b == 0 { b'\n' } else { b }).collect::<Vec<u8>>().into()
    } else {
        before.into()
    }
}

/// The rules that made `edits` (in one line), each once.
fn rules_of(edits: &[Edit]) -> Vec<&'static str> {
    let mut rules = Vec::new();
    for e in edits {
        if !rules.contains(&e.rule.name()) {
            rules.push(e.rule.name());
        }
    }
    rules
}

/// Where the `[REDACTED]` marks of `edits` stand in the redacted text.
fn marks(edits: &[Edit]) -> Vec<(usize, usize)> {
    let mut shift = 0isize;
    edits
        .iter()
        .map(|e| {
            let start = (e.start as isize + shift) as usize;
            shift += redact::MARK.len() as isize - (e.end - e.start) as isize;
            (start, start + redact::MARK.len())
        })
        .collect()
}

/// Whether `matcher` matches the redacted text `shown` somewhere that
/// neither overlaps nor touches a mark. Redaction is then no oracle: such a
/// match sees the same bytes, and the same neighbours for `\b`, `^` or `$`,
/// in the file itself, so whether a line is a hit depends on its redacted
/// text alone — never on what the marks hide (`REDACTED|guess` finds
/// nothing, whatever the guess).
/// `bytes` with each match (`spans`) replaced by `replacement`, its groups
/// filled in (as `rg -r`), and where the replacements are. A match whose
/// groups cannot be found again stays as it was. Past `room` bytes the rest
/// is left out (the answer is cut there anyway).
/// `hay`: where the matches are found again (PCRE2: the searcher's buffer,
/// `bytes` starting at the offset given; else `bytes` itself).
fn replaced(
    matcher: &SearchMatcher,
    bytes: &[u8],
    hay: Option<(&[u8], usize)>,
    spans: &[(usize, usize)],
    replacement: &[u8],
    room: usize,
) -> (Vec<u8>, Vec<(usize, usize)>) {
    let Ok(mut caps) = matcher.new_captures() else { return (bytes.to_vec(), spans.to_vec()) };
    let (hay, base) = hay.unwrap_or((bytes, 0));
    let (mut out, mut at) = (Vec::with_capacity(bytes.len()), 0);
    let mut moved = Vec::with_capacity(spans.len());
    for &(s, e) in spans {
        if out.len() > room {
            return (out, moved);
        }
        // (PCRE2's matches, found in the text around, may end past `bytes`.)
        let (s_in, e_in) = (s.min(bytes.len()), e.min(bytes.len()));
        out.extend_from_slice(&bytes[at.min(s_in)..s_in]);
        let start = out.len();
        let same = matches!(matcher.captures_at(hay, base + s, &mut caps), Ok(true))
            && caps.get(0).is_some_and(|m| (m.start(), m.end()) == (base + s, base + e));
        if same {
            caps.interpolate(|name| matcher.capture_index(name), hay, replacement, &mut out);
        } else {
            out.extend_from_slice(&bytes[s_in..e_in]);
        }
        moved.push((start, out.len()));
        at = e_in;
    }
    out.extend_from_slice(&bytes[at..]);
    (out, moved)
}

/// A block of lines where the searcher's buffer holds it, for PCRE2 to find
/// its matches again with what is around them in sight, as rg's printer
/// does (`find_iter_at_in_context`): what comes before the block, and up to
/// [`Around::LOOK_AHEAD`] bytes after it (multi-line), or the block without
/// its line terminator (line by line).
pub struct Around<'b> {
    buffer: &'b [u8],
    range: std::ops::Range<usize>,
}

impl<'b> Around<'b> {
    /// rg's `MAX_LOOK_AHEAD`.
    const LOOK_AHEAD: usize = 128;

    fn of(searcher: &Searcher, matcher: &SearchMatcher, mat: &SinkMatch<'b>) -> Option<Around<'b>> {
        if !matcher.is_pcre2() {
            return None;
        }
        let (buffer, range) = (mat.buffer(), mat.bytes_range_in_buffer());
        let multi_line = searcher.multi_line_with_matcher(matcher);
        let end = Around::end(buffer, &range, multi_line, searcher.line_terminator());
        Some(Around { buffer: &buffer[..end], range })
    }

    /// Where the text a match is looked for in ends (rg's
    /// `trim_line_terminator` line by line).
    fn end(buffer: &[u8], range: &std::ops::Range<usize>, multi_line: bool, terminator: LineTerminator) -> usize {
        if multi_line {
            return (range.end + Around::LOOK_AHEAD).min(buffer.len());
        }
        let mut end = range.end;
        if end > range.start && buffer[end - 1] == terminator.as_byte() {
            end -= 1;
            if terminator.is_crlf() && end > range.start && buffer[end - 1] == b'\r' {
                end -= 1;
            }
        }
        end
    }

    /// The matches starting in the block, relative to its start.
    fn matches(&self, matcher: &SearchMatcher) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        let _ = matcher.find_iter_at(self.buffer, self.range.start, |m| {
            if m.start() >= self.range.end {
                return false;
            }
            found.push((m.start() - self.range.start, m.end() - self.range.start));
            true
        });
        found
    }
}

/// The matches of `matcher` in `text` that start in `range` and are
/// `clear` of redactions, as rg 15 counts a block's for `-c` with -U: all
/// of them — but that its searcher finds no more than `left` matches (-m
/// counts matches then), and the block that holds the last it finds ends
/// with the line that match ends on: the matches starting before that
/// count, and no others. The count, how many the searcher found (at most
/// `left`), and whether a match past that line exists.
fn count_up_to(
    matcher: &SearchMatcher,
    text: &[u8],
    range: std::ops::Range<usize>,
    clear: impl Fn(usize, usize) -> bool,
    left: u64,
) -> (u64, u64, bool) {
    let (mut n, mut found, mut end, mut past) = (0, 0, range.end, false);
    let _ = matcher.find_iter_at(text, range.start, |m| {
        if m.start() >= end {
            past = m.start() < range.end;
            return false;
        }
        if !clear(m.start(), m.end()) {
            return true;
        }
        n += 1;
        if found < left {
            found += 1;
            if found == left {
                end = end.min(line_end(text, m.start(), m.end()));
            }
        }
        true
    });
    (n, found, past)
}

/// Where the line a match (`start..end`) ends on ends, its terminator
/// included: the match's end when that is one (grep-searcher's `locate`).
fn line_end(text: &[u8], start: usize, end: usize) -> usize {
    let line_start = memchr::memrchr(b'\n', &text[..start]).map_or(0, |i| i + 1);
    if end > line_start && text[end - 1] == b'\n' {
        end
    } else {
        memchr::memchr(b'\n', &text[end..]).map_or(text.len(), |i| end + i + 1)
    }
}

fn clear_match(matcher: &SearchMatcher, shown: &[u8], marks: &[(usize, usize)]) -> bool {
    let mut clear = false;
    let _ = matcher.find_iter(shown, |m| {
        clear = marks.iter().all(|&(a, z)| m.end() < a || m.start() > z);
        !clear
    });
    clear
}
