//! Paging, the same for `search-text`, `search-ast` and `list-files`: where a
//! page starts (the position a cursor names, results to skip), what it takes
//! (the result cap and the output-size budget), where the stream stands when
//! it stops, the cursor that goes on from there, and the warnings that say
//! so.

use crate::confine::path_cmp;
use crate::cursor::{self, Position};
use crate::request::MAX_OUTPUT_BYTES;
use crate::{SearchError, SearchStats, SkipCounts};

/// Sets `key` to the key of walk events that follow the entry `rel`: its
/// path and a NUL, so that they sort just after it and before whatever
/// follows it, beneath it or not ([`crate::confine::path_cmp`];
/// [`Paging::walked_to`] reads it back). In place: this runs for every
/// entry of a walk.
pub fn walk_anchor(key: &mut String, rel: &str) {
    key.clear();
    if rel != "." {
        key.push_str(rel);
    }
    key.push('\0');
}

/// The key of walk events after `last`, the last step walked: its
/// [`walk_anchor`] if an entry, or the start of the walk.
pub fn anchor_after(last: Option<&crate::walk::Step>) -> String {
    let mut anchor = String::new();
    if let Some(crate::walk::Step::Entry(entry)) = last {
        walk_anchor(&mut anchor, &entry.rel);
    }
    anchor
}

/// The position a request's cursor names, if it passed one.
pub fn resume_from(stream_key: &str, cursor: Option<&str>) -> Result<Option<Position>, SearchError> {
    cursor.map(|c| cursor::decode(stream_key, c)).transpose()
}

/// Where a page resuming at `resume` starts in the file at `rel` (see
/// [`Paging::resume_point`]).
pub fn resume_point(resume: Option<&Position>, rel: &str) -> Option<(u64, u64)> {
    match resume {
        Some(r) if path_cmp(rel, &r.path).is_lt() => None,
        Some(r) if rel == r.path => (r.line != u64::MAX).then_some((r.line, r.taken)),
        _ => Some((0, 0)),
    }
}

/// One page of a sorted result stream: what it skipped, took and spent, and
/// where the stream stands.
pub struct Paging {
    resume: Option<Position>,
    max_results: usize,
    skip_left: u64,
    returned: usize,
    /// Results taken so far, skipped ones included, and how many it takes.
    taken: u64,
    takes: u64,
    /// What the results so far cost as JSON.
    output_bytes: usize,
    /// Everything up to here has been delivered or skipped.
    position: Option<Position>,
    /// A cap stopped the page with results left over: hand out a cursor.
    done: bool,
    timed_out: bool,
    truncated: bool,
}

impl Paging {
    pub fn new(resume: Option<Position>, skip: u64, max_results: usize) -> Paging {
        Paging {
            resume,
            max_results,
            skip_left: skip,
            returned: 0,
            taken: 0,
            takes: skip.saturating_add(max_results as u64),
            output_bytes: 0,
            position: None,
            done: false,
            timed_out: false,
            truncated: false,
        }
    }

    /// Where to start in the file at `rel` — after line `min_line`, with
    /// `taken` results already delivered from it — or `None` if the cursor
    /// is past it.
    pub fn resume_point(&self, rel: &str) -> Option<(u64, u64)> {
        resume_point(self.resume.as_ref(), rel)
    }

    /// Results this page still wants (skipped ones included).
    pub fn wanted(&self) -> u64 {
        self.skip_left + (self.max_results - self.returned) as u64
    }

    /// Results delivered on this page.
    pub fn returned(&self) -> usize {
        self.returned
    }

    /// Whether the page has room for one more result; if not, it is done and
    /// truncated (a result exists past its end).
    pub fn take(&mut self) -> bool {
        if self.takes_no_more() {
            self.cut();
            return false;
        }
        self.taken += 1;
        true
    }

    /// Whether the next result would cut the page.
    pub fn takes_no_more(&self) -> bool {
        self.skip_left == 0 && self.returned >= self.max_results
    }

    /// Results taken so far, skipped ones included (the pages of several
    /// instances add up: see the WIT's `shard-result`).
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Results a page takes before one more cuts it: those it skips and
    /// those it returns.
    pub fn takes(&self) -> u64 {
        self.takes
    }

    /// Whether the page holds as many results, or as many bytes, as it may.
    pub fn full(&self) -> bool {
        self.returned >= self.max_results || self.output_bytes > MAX_OUTPUT_BYTES
    }

    /// Whether the next result is one to skip (and counts it as skipped).
    pub fn skipping(&mut self) -> bool {
        if self.skip_left > 0 {
            self.skip_left -= 1;
            return true;
        }
        false
    }

    /// Counts a result of `cost` bytes delivered; whether the output has
    /// reached its budget, less `headroom`.
    pub fn delivered(&mut self, cost: usize, headroom: usize) -> bool {
        self.returned += 1;
        self.output_bytes += cost;
        self.output_bytes > MAX_OUTPUT_BYTES - headroom
    }

    /// Bytes of output the page may still spend.
    pub fn budget_left(&self) -> usize {
        MAX_OUTPUT_BYTES.saturating_sub(self.output_bytes)
    }

    /// Where the stream stands.
    pub fn position(&self) -> Option<&Position> {
        self.position.as_ref()
    }

    /// The stream has reached `pos`.
    pub fn reached(&mut self, pos: Position) {
        self.position = Some(pos);
    }

    /// The stream has reached line `line` of `rel`, `taken` results into
    /// it (in place: this runs for every match).
    pub fn reached_line(&mut self, rel: &str, line: u64, taken: u64) {
        match &mut self.position {
            Some(p) => {
                if p.path != rel {
                    p.path.clear();
                    p.path.push_str(rel);
                }
                (p.line, p.taken) = (line, taken);
            }
            None => self.position = Some(Position { path: rel.to_string(), line, taken }),
        }
    }

    /// The stream is past the whole file (or entry) at `rel`.
    pub fn file_done(&mut self, rel: &str) {
        // (In place: this runs for every file of a walk.)
        match &mut self.position {
            Some(p) => {
                p.path.clear();
                p.path.push_str(rel);
                (p.line, p.taken) = (u64::MAX, 0);
            }
            None => self.position = Some(Position::file_done(rel.to_string())),
        }
    }

    /// Everything up to the walk event at `key` (ending in NUL) was walked:
    /// a cursor goes on past it.
    pub fn walked_to(&mut self, key: &str) {
        let Some(walked) = key.strip_suffix('\0').filter(|w| !w.is_empty()) else { return };
        if self.position.as_ref().is_none_or(|p| path_cmp(&p.path, walked).is_lt()) {
            self.position = Some(Position::file_done(walked.to_string()));
        }
    }

    /// The page ends with results left over: done and truncated.
    pub fn cut(&mut self) {
        self.done = true;
        self.truncated = true;
    }

    /// Results were left out (a per-file cap), though the page goes on.
    pub fn truncate(&mut self) {
        self.truncated = true;
    }

    /// The time limit ran out.
    pub fn time_out(&mut self) {
        self.timed_out = true;
    }

    pub fn done(&self) -> bool {
        self.done
    }

    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    pub fn truncated(&self) -> bool {
        self.truncated
    }

    pub fn stopped(&self) -> bool {
        self.done || self.timed_out
    }

    /// A cursor that goes on past where the stream stands.
    pub fn cursor(&self, stream_key: &str) -> Option<String> {
        self.position.as_ref().map(|p| cursor::encode(stream_key, p))
    }

    /// The page's cursor, if the stream goes on past it. (That it timed out
    /// or stopped at its cap the response's fields say: each front end
    /// words it, with its own name for the cursor.)
    pub fn finish(&self, stream_key: &str) -> Option<String> {
        if self.stopped() {
            self.cursor(stream_key)
        } else {
            None
        }
    }
}

/// The warning for a page that stopped at [`MAX_OUTPUT_BYTES`].
pub fn output_reached() -> String {
    format!("output reached {MAX_OUTPUT_BYTES} bytes of text, the most one answer holds")
}

/// The warning for binary files skipped, when the caller may have wanted
/// them: files it named, or any when nothing was found. (Otherwise the
/// count is only in the stats, as ripgrep says nothing of them.)
pub fn binary_skipped(warnings: &mut Vec<String>, count: u64, named: &[String], found: bool) {
    for rel in named {
        warnings.push(format!("{rel}: binary file, not searched"));
    }
    if !found && count > named.len() as u64 {
        warnings.push(format!("{} binary file(s) skipped", count - named.len() as u64));
    }
}

/// Statistics of a page before anything is searched.
pub fn empty_stats() -> SearchStats {
    SearchStats {
        files_scanned: 0,
        files_matched: 0,
        bytes_searched: 0,
        matches_returned: 0,
        elapsed_ms: 0,
        skipped: SkipCounts { binary: 0, too_large: 0, denied: 0, unreadable: 0, ignored: 0, hidden: 0 },
        index: crate::IndexUse::None,
        files_skipped_by_index: 0,
        lines_redacted: 0,
        redacted_by: Vec::new(),
    }
}

/// The lines returned with a secret redacted (each path and line once,
/// though context may repeat it), and those lines by rule, sorted by rule.
pub fn redaction_counts<'a>(
    items: impl Iterator<Item = (&'a str, &'a [crate::Redaction])>,
) -> (u64, Vec<crate::RedactionCount>) {
    use std::collections::{BTreeMap, BTreeSet};
    let mut lines = BTreeSet::new();
    let mut by: BTreeMap<&str, BTreeSet<(&str, u64)>> = BTreeMap::new();
    for (path, redactions) in items {
        for r in redactions {
            lines.insert((path, r.line));
            by.entry(r.rule.as_str()).or_default().insert((path, r.line));
        }
    }
    let by = by.into_iter().map(|(rule, l)| crate::RedactionCount { rule: rule.to_string(), lines: l.len() as u64 });
    (lines.len() as u64, by.collect())
}

/// Adds what a walk left out to a page's counts.
pub fn count_skips(counts: &mut SkipCounts, skips: &crate::WalkSkips) {
    counts.denied += skips.denied;
    counts.ignored += skips.ignored;
    counts.hidden += skips.hidden;
}

/// What an answer that found nothing says of the entries the rules left
/// out, and which argument includes them (none includes denied ones).
pub fn left_out_warnings(denied: u64, ignored: u64, hidden: u64) -> Vec<String> {
    let mut w = Vec::new();
    if denied > 0 {
        w.push(format!("{denied} entries withheld by the secrets denylist (no argument includes them)"));
    }
    if ignored > 0 {
        w.push(format!("{ignored} entries left out by .gitignore/.ignore/.rgignore rules (no_ignore includes them)"));
    }
    if hidden > 0 {
        w.push(format!("{hidden} hidden entries left out (hidden includes them)"));
    }
    w
}
