//! `search-text`: walk the roots in order, search each file through the sink,
//! and assemble one page of the sorted result stream.

use std::borrow::Cow;
use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;
use std::time::Instant;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, MmapChoice, Searcher, SearcherBuilder};

mod assemble;
mod batch;
pub(crate) use batch::Dirs;
mod bytes;
mod literal;
mod own;
pub(crate) mod shard;
mod zip;

pub use batch::{search_files, walk_files};
pub use bytes::search_bytes;
pub use own::walk_search;
pub use shard::merge_shards;

use assemble::Page;
use literal::QueryKind;
pub use literal::SearchMatcher;

use crate::cursor::Position;
use crate::error::{error_message, io_error};
use crate::fs::FileAt;
use crate::index::{Narrowing, Unread};
use crate::request::{TextQuery, HEAP_LIMIT};
use crate::sink::{FileSink, SinkConfig};
use crate::walk::{self, walk_deadline, Step, Walker};
use crate::{page, session};
use crate::{
    BinaryMode, BinaryNotice, CaseMode, FileOutcome, IndexUse, OutputMode, QueryMode, RegexEngine, SearchError,
    SearchTextRequest, SearchTextResponse, ShardEventKind, Workspace,
};

/// A file's outcome before its search: nothing found, nothing read.
fn no_outcome() -> FileOutcome {
    FileOutcome {
        bytes_searched: 0,
        error: None,
        too_long: false,
        binary: false,
        matches: Vec::new(),
        count: 0,
        more: false,
        timed_out: false,
        binary_notice: None,
    }
}

pub fn search_text(ws: &Workspace, request: SearchTextRequest) -> Result<SearchTextResponse, SearchError> {
    let mut search = Searching::new(ws, request, true)?;
    let (walker, roots) = search.walk(ws)?;
    let mut page = search.page(&roots);
    // Events between two entries sort just after the first one: the last
    // entry walked (its key is made only for such an event: an indexed
    // search replays a kept walk of every entry, and skips most).
    let mut last: Option<Cow<'_, Step>> = None;
    let seen = Rc::new(Cell::new(walk::Skips::default()));
    // A kept instance replays a whole walk it made at this generation, or
    // records this one (a first page only: a cursor starts mid-walk).
    let q = search.q.clone();
    let after = search.resume.as_ref().map(|r| r.path.clone());
    let mut key = session::listing_key(&q.paths, &q.walk, ws.index_policy());
    if let Some(n) = &search.narrowing {
        key = n.walk_key(ws, &q.paths, &q.walk, key, after.is_none());
    }
    let replay = session::Replay::new(key, after.is_none(), walk::Reopen::for_walk(ws, &q.walk, &roots));
    let marks = search.narrowing.as_ref().and_then(|n| replay.marks(|steps| n.marks(steps)));
    let mut walk = walk::steps(walker.clone(), roots, after, seen.clone());
    let mut at = 0;
    loop {
        // A kept walk passes the files the index rules out by the run.
        if let (Some(marks), Some(n)) = (&marks, &search.narrowing) {
            let run = n.quiet_run(marks, at, q.max_filesize, page.names_files());
            if let Some(Step::Entry(file)) = run.last.and_then(|i| replay.kept_step(i)) {
                page.accept(&file.rel, ShardEventKind::IndexSkippedRun((run.files, run.binary)));
            }
            if run.end > at {
                last = replay.kept_step(run.end - 1).map(Cow::Borrowed);
                at = run.end;
            }
        }
        let Some(step) = replay.step(at, &mut walk) else { break };
        at += 1;
        let Step::Entry(entry) = &*step else {
            let anchor = page::anchor_after(last.as_deref());
            page.accept(&anchor, walk_event(&step));
            if let Step::TimedOut = &*step {
                // Out of time in the walk itself (a tree of links and skipped
                // entries): what was walked is done.
                page.paging.time_out();
                page.paging.walked_to(&anchor);
            }
            continue;
        };
        let is_file = entry.is_file;
        if is_file {
            if let Some(kind) = search.file(&mut page, entry) {
                page.accept(&entry.rel, kind);
            }
        }
        last = Some(step);
        if is_file && page.paging.stopped() {
            break;
        }
    }
    let left = walker.skips().since(seen.get());
    if left.any() {
        page.accept(&page::anchor_after(last.as_deref()), ShardEventKind::Skipped(left.wit()));
        replay.push(Step::Skipped(left));
    }
    // A walk that stopped early (page full, out of time) is not whole.
    replay.keep(!page.paging.stopped());
    Ok(search.finish(page))
}

/// The event of a walk step that is not an entry, for the key just after
/// the entry before it. (A walk out of time marks how far it went; an entry
/// is no event of the walk's own.)
fn walk_event(step: &Step) -> ShardEventKind {
    match step {
        Step::Skipped(n) => ShardEventKind::Skipped(n.wit()),
        Step::Problem(e) => ShardEventKind::Problem((e.message.clone(), e.unreadable)),
        Step::TimedOut | Step::Entry(_) => ShardEventKind::Skipped(walk::Skips::default().wit()),
    }
}

/// What searching the files of one request needs, made once (and kept
/// between the calls of an instance searching batches: see [`batch`]).
pub(crate) struct Searching {
    q: Rc<TextQuery>,
    stream_key: String,
    resume: Option<Position>,
    warnings: Vec<String>,
    matcher: SearchMatcher,
    /// Inverted, every line goes to the sink, which selects those the query
    /// does not match as callers see them (redacted).
    every_line: Option<SearchMatcher>,
    searcher: Searcher,
    narrowing: Option<Narrowing>,
    index_use: IndexUse,
    redact: bool,
    started: Instant,
    deadline: Instant,
}

impl Searching {
    /// The search of `request`, narrowed by the index when `indexed`.
    fn new(ws: &Workspace, request: SearchTextRequest, indexed: bool) -> Result<Searching, SearchError> {
        let started = Instant::now();
        let mut warnings = Vec::new();
        let q = TextQuery::from_request(request, &mut warnings)?;
        let stream_key = ws.stream_key(q.stream_key());
        let resume = page::resume_from(&stream_key, q.cursor.as_deref())?;
        let matcher = build_matcher(&q)?;
        let every_line = if q.invert { Some(every_line_matcher(q.crlf, q.null_data)?) } else { None };
        let searcher = build_searcher(&q);
        let (index_use, narrowing) =
            if indexed { Narrowing::open(ws, &q, matcher.is_pcre2()) } else { (IndexUse::None, None) };
        let deadline = started + q.timeout;
        Ok(Searching {
            q: Rc::new(q),
            stream_key,
            resume,
            warnings,
            matcher,
            every_line,
            searcher,
            narrowing,
            index_use,
            redact: ws.redact,
            started,
            deadline,
        })
    }

    /// The walk of the request's roots, and the roots.
    fn walk(&self, ws: &Workspace) -> Result<(Rc<Walker>, Vec<walk::Root>), SearchError> {
        walk_of(ws, &self.q, self.started)
    }

    /// An empty page of this search (the request's files named in `roots`).
    fn page(&mut self, roots: &[walk::Root]) -> Page {
        let warnings = std::mem::take(&mut self.warnings);
        Page::new(self.q.clone(), self.resume.clone(), warnings, walk::named_files(roots))
    }

    /// Searches the file `entry` for `page`: what it found, or nothing when
    /// the page resumes past it or has run out of time (then it is stopped).
    fn file(&mut self, page: &mut Page, entry: &walk::Entry) -> Option<ShardEventKind> {
        let (min_line, taken) = page.paging.resume_point(&entry.rel)?;
        // Left unread before a look at the clock (an indexed search skips
        // most files).
        if let Some(unread) = self.narrowing.as_ref().and_then(|n| n.unread(entry, self.q.max_filesize)) {
            return Some(match unread {
                Unread::TooLarge => ShardEventKind::TooLarge,
                Unread::Binary => ShardEventKind::IndexSkipped(true),
                Unread::NoMatch => ShardEventKind::IndexSkipped(false),
            });
        }
        // Every call searches at least one file, so paging past a timeout
        // always makes progress; the first gets at least the walk's time
        // (see `Page::searched` for one that overruns it).
        let first = page.stats.files_scanned == 0;
        if !first && Instant::now() >= self.deadline {
            page.paging.time_out();
            return None;
        }
        let deadline = Some(if first { walk_deadline(self.started, self.deadline) } else { self.deadline });
        let q = &*self.q;
        let cfg = SinkConfig {
            matcher: &self.matcher,
            scan: self.every_line.as_ref().unwrap_or(&self.matcher),
            invert: q.invert,
            output: q.output,
            count_matches: q.count_matches,
            replace: q.replace.as_deref().map(str::as_bytes),
            before: q.before,
            after: q.after,
            max_columns: q.max_columns,
            keep_cr: q.streaming,
            trailing_matches: q.streaming,
            redact: self.redact,
            passthru: q.passthru,
            null_data: q.null_data,
        };
        let (mut limit, budget) = (page.limit(taken), page.paging.budget_left());
        // (The file's own cap, not the page's room: where rg's search of it ends.)
        let mut capped = q.per_file.is_some() && (limit < page.paging.wanted() || q.output != OutputMode::Content);
        // Passthru: the page's room is of lines returned, the file's cap of
        // results (`taken` counts those); past the cap the search goes on,
        // its results then lines of context (as rg's -m with --passthru).
        let mut hit_cap = u64::MAX;
        if q.passthru {
            (limit, hit_cap, capped) = (page.paging.wanted(), page.per_file_left(taken), false);
        }
        let named = page.is_named(&entry.rel);
        let limits = FileLimits { limit, capped, hit_cap, taken_before: taken };
        Some(search_file(&mut self.searcher, &cfg, q, entry, min_line, limits, deadline, budget, named))
    }

    fn finish(&self, page: Page) -> SearchTextResponse {
        let mut resp = page.finish(&self.stream_key, self.started);
        resp.stats.index = self.index_use;
        resp
    }
}

/// The walk of `q`'s roots for a search that started at `started`.
fn walk_of(ws: &Workspace, q: &TextQuery, started: Instant) -> Result<(Rc<Walker>, Vec<walk::Root>), SearchError> {
    let deadline = walk_deadline(started, started + q.timeout);
    let walker = Walker::new(ws, &q.walk)?.with_deadline(deadline);
    let roots = walker.roots(&q.paths)?;
    Ok((Rc::new(walker), roots))
}

/// How much one file's search may return.
struct FileLimits {
    /// Results (passthru: lines) to take, and one more to tell that more exist.
    limit: u64,
    /// `limit` is the file's own cap.
    capped: bool,
    /// Passthru: results to take before the rest are lines of context.
    hit_cap: u64,
    /// Results of the file an earlier page returned.
    taken_before: u64,
}

/// Searches one file for at most `limit` results (and one more, to tell that
/// more exist; `capped`: the limit is the file's own cap) and `budget`
/// bytes of text.
#[allow(clippy::too_many_arguments)]
fn search_file(
    searcher: &mut Searcher,
    cfg: &SinkConfig<'_>,
    q: &TextQuery,
    entry: &walk::Entry,
    min_line: u64,
    FileLimits { limit, capped, hit_cap, taken_before }: FileLimits,
    deadline: Option<Instant>,
    budget: usize,
    named: bool,
) -> ShardEventKind {
    let rel = entry.rel.as_str();
    let file = match entry.open() {
        Ok(f) => f,
        Err(e) => return ShardEventKind::Problem((error_message(&io_error(rel, &e)), true)),
    };
    let size = file.size();
    if size > q.max_filesize {
        return ShardEventKind::TooLarge;
    }
    // (-z: a compressed file's text; `broken`, its stream broke off.)
    let (at, mut file, broken) = match zip::open(q, rel, file, deadline) {
        Ok(opened) => opened,
        Err(kind) => return kind,
    };
    let at = if q.encoding.as_deref() == Some("none") { at.unsniffed() } else { at };
    // As rg's --mmap: the file searched as one slice, NUL bytes looked for
    // only in its first 64 KiB and in the lines returned. (rg reads a
    // decompressed text as a stream; `skip` leaves out a file with a NUL
    // anywhere, which only a read of every buffer sees.)
    let slice = q.mmap && q.binary != BinaryMode::Skip && matches!(file, zip::Input::File(_));
    let mut out = no_outcome();
    let detect = binary_detection(q.binary, named);
    searcher.set_binary_detection(detect.clone());
    let convert_binary = detect.convert_byte().is_some();
    // (Context around lines past a NUL byte: see below.)
    let context = q.output == OutputMode::Content && (q.before > 0 || q.after > 0 || q.passthru);
    let whole = cfg.redact
        && (searcher.multi_line_with_matcher(cfg.scan)
            || q.stop_on_nonmatch
            || cfg.matcher.is_pcre2()
            || convert_binary && context);
    // (Redaction reads the text before a line as the searcher has it.)
    let at = at.as_searched(q.encoding.as_deref());
    let mut sink = FileSink::new(cfg, rel, at.clone(), min_line, limit, deadline, budget);
    sink.capped = capped;
    sink.hit_cap = hit_cap;
    sink.convert_binary = convert_binary;
    sink.binary_results = q.binary_results;
    literal::set_deadline(deadline);
    let outcome = if whole {
        // Matches that may span lines decide which lines join one block
        // from the whole text: on the raw text, a secret a guess matched
        // would join (or split) the block around it, and show. So the file
        // is redacted whole and searched as callers see it (the file is
        // held whole for a multi-line search anyway). So too where a
        // search ends at the first line that does not match
        // (stop-on-nonmatch): on the raw text, a line matched only inside
        // its secret would let the search go on (or, first, end it early),
        // and the lines shown after it would tell a guess right. So too
        // with PCRE2, whose matches look around them as far as they like:
        // on the raw text, `x(?=guess)` tells a guess at the secret after
        // `x` right, however far from it the match itself stays. So too
        // with context in a file searched on past a NUL byte, which stops
        // at the first line rg would show there: on the raw text, a match
        // only inside a secret would make the next line context (or a
        // line before a result context), and stop it short of its notice.
        match at.text_range(0, HEAP_LIMIT as u64 + 1) {
            Ok(text) if text.len() > HEAP_LIMIT => {
                out.too_long = true;
                return ShardEventKind::Searched(out);
            }
            Ok(text) => {
                let by_slice = slice || searcher.multi_line_with_matcher(cfg.scan) || q.stop_on_nonmatch;
                // (Read a buffer at a time, binary data converted has its
                // NUL bytes as line breaks.)
                let shown = sink.redact_whole(&text, sink.convert_binary && !by_slice);
                let shown = shown.as_deref().unwrap_or(&text);
                // A transcoded text (UTF-16, or the encoding asked for) is
                // the UTF-8 it transcodes to: not to be decoded again.
                let mut utf8;
                let searcher = if at.transcoded() && q.encoding.is_some() {
                    utf8 = searcher_with(q, None);
                    utf8.set_binary_detection(detect.clone());
                    &mut utf8
                } else {
                    searcher
                };
                if by_slice {
                    searcher.search_slice(cfg.scan, shown, &mut sink)
                } else {
                    // (PCRE2 line by line: read as a file is, a buffer at a
                    // time, so binary data is found where rg finds it.)
                    searcher.search_reader(cfg.scan, shown, &mut sink)
                }
            }
            Err(e) => Err(e),
        }
    } else if slice {
        // (As a memory map holds what the file held when it was
        // opened: no more than its size then.)
        let mut whole = Vec::new();
        match (&mut file).take(size).read_to_end(&mut whole) {
            Ok(_) => searcher.search_slice(cfg.scan, &whole, &mut sink),
            Err(e) => Err(e),
        }
    } else {
        searcher.search_reader(cfg.scan, &mut file, &mut sink)
    };
    let mut r = sink.into_results();
    out.bytes_searched = r.bytes_searched;
    // (PCRE2 stopped by the deadline: what was found, as the sink's own stop.)
    let outcome = match outcome {
        Err(e) if literal::timed_out(&e) => {
            r.timed_out = true;
            Ok(())
        }
        outcome => outcome,
    };
    if let Err(e) = outcome {
        if e.to_string().contains("allocation limit") {
            out.too_long = true;
        } else {
            out.error = Some(error_message(&io_error(rel, &e)));
        }
        return ShardEventKind::Searched(out);
    }
    match (q.binary, r.binary_offset) {
        // A search that stopped early has not seen the rest of the file: a
        // NUL there still makes it binary, whatever the page size.
        (BinaryMode::Skip, _) => {
            if r.binary || (r.more || r.count > 0 && q.output == OutputMode::FilesWithMatches) && nul_in_rest(&at, file)
            {
                out.binary = true;
                return ShardEventKind::Searched(out);
            }
        }
        (_, None) => {}
        // As rg: a file the walk found stops at its NUL; what it found
        // before stands (a count of part of it would mislead: none).
        (_, Some(offset)) if detect.quit_byte().is_some() => {
            // (Passthru: the lines before it stand too, no match among
            // them or not; its notice needs a match, on this page or one
            // before.)
            let lines = q.passthru && (!r.matches.is_empty() || min_line > 0);
            if r.count == 0 && !lines || q.output == OutputMode::Count {
                out.binary = true;
                return ShardEventKind::Searched(out);
            }
            if q.output == OutputMode::Content && (r.count > 0 || taken_before > 0) {
                out.binary_notice = Some(BinaryNotice {
                    path: rel.to_string(),
                    offset,
                    stopped: true,
                    separated: false,
                    hit_lines: 0,
                    hit_matches: 0,
                });
            }
        }
        // Searched on: rg says it matched when it did.
        (_, Some(offset)) => {
            // (An earlier page's passthru lines are no results: rg's
            // notice needs a match.)
            let earlier = min_line > 0 && (!q.passthru || taken_before > 0);
            if q.output == OutputMode::Content && (r.count > 0 || r.binary_hit.is_some() || earlier) {
                let (matches, lines) = r.binary_hit.unwrap_or_default();
                out.binary_notice = Some(BinaryNotice {
                    path: rel.to_string(),
                    offset,
                    stopped: false,
                    separated: r.binary_break,
                    hit_lines: lines as u32,
                    hit_matches: matches as u32,
                });
            }
        }
    }
    // A compressed file whose stream broke off is an error, after the
    // lines found before the break (as rg shows them); not for a file
    // list, whose search ends at a match before the break, as rg's does.
    if !(q.output == OutputMode::FilesWithMatches && r.count > 0) {
        out.error = broken;
    }
    out.matches = r.matches;
    out.count = r.count;
    out.more = r.more;
    out.timed_out = r.timed_out;
    ShardEventKind::Searched(out)
}

/// How rg reads a file for NUL bytes: a file `named` by the request is
/// searched on (NUL bytes as line breaks), one the walk found stops there.
fn binary_detection(mode: BinaryMode, named: bool) -> BinaryDetection {
    match mode {
        BinaryMode::Text => BinaryDetection::none(),
        BinaryMode::Search => BinaryDetection::convert(b'\x00'),
        BinaryMode::AsRg if named => BinaryDetection::convert(b'\x00'),
        BinaryMode::Skip | BinaryMode::AsRg | BinaryMode::AsRgWalked => BinaryDetection::quit(b'\x00'),
    }
}

/// Whether the part of `file` the searcher has not read holds a NUL byte.
/// (UTF-16 files, transcoded before searching, are full of them: not binary.)
fn nul_in_rest(at: &FileAt, mut file: impl Read) -> bool {
    if at.is_utf16() {
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

thread_local! {
    /// The last matcher built, by what it was built from: the instances of
    /// one call build the same, and a kept instance sees one query paged.
    static MATCHER: std::cell::RefCell<Option<(String, SearchMatcher)>> = const { std::cell::RefCell::new(None) };
}

fn build_matcher(q: &TextQuery) -> Result<SearchMatcher, SearchError> {
    let key = format!(
        "{:?}\0{:?}\0{}\0{}\0{}\0{}\0{:?}\0{}",
        q.mode, q.case, q.word, q.multiline, q.crlf, q.null_data, q.engine, q.query
    );
    if let Some(m) = MATCHER.with_borrow(|m| m.as_ref().filter(|(k, _)| *k == key).map(|(_, m)| m.clone())) {
        return Ok(m);
    }
    let m = new_matcher(q)?;
    MATCHER.set(Some((key, m.clone())));
    Ok(m)
}

/// The query's matcher on the engine asked for; `auto` is rg's: the
/// default engine, or PCRE2 where that cannot build the pattern.
fn new_matcher(q: &TextQuery) -> Result<SearchMatcher, SearchError> {
    match q.engine {
        RegexEngine::Default => rust_matcher(q),
        RegexEngine::Pcre2 => pcre2_matcher(q),
        RegexEngine::Auto => rust_matcher(q).or_else(|rust| {
            pcre2_matcher(q).map_err(|pcre2| match (rust, pcre2) {
                (SearchError::InvalidPattern(rust), SearchError::InvalidPattern(pcre2)) => SearchError::InvalidPattern(
                    format!("the pattern compiles with neither the default regex engine ({rust}) nor PCRE2 ({pcre2})"),
                ),
                (_, e) => e,
            })
        }),
    }
}

/// The query on PCRE2, configured as rg 15.2's `-P` (its interpreter:
/// wasm runs no code PCRE2's JIT would make). Lines are searched one at a
/// time (the matcher names no line terminator it never matches). The
/// call's deadline (epoch interruption) stops PCRE2's C code as it stops
/// Rust's; PCRE2's own limits (match: its default, as rg's; heap: 64 MiB,
/// host/build.rs) end a runaway match as an error of that file.
fn pcre2_matcher(q: &TextQuery) -> Result<SearchMatcher, SearchError> {
    // Rust's syntax for a pattern without Unicode, `(?-u:…)` around it
    // whole (rg's --no-unicode, as the CLI asks it), which PCRE2's syntax
    // cannot say: PCRE2 without UTF (bytes; ASCII's classes and case).
    let (query, utf) = match q.mode {
        QueryMode::Regex => match q.query.strip_prefix("(?-u:").and_then(|p| p.strip_suffix(')')) {
            Some(inner) if balanced(inner) => (inner, false),
            _ => (q.query.as_str(), true),
        },
        QueryMode::Literal => (q.query.as_str(), true),
    };
    let mut b = grep_pcre2::RegexMatcherBuilder::new();
    b.multi_line(true).fixed_strings(q.mode == QueryMode::Literal).word(q.word).utf(utf).ucp(utf);
    match q.case {
        CaseMode::Sensitive => b.caseless(false),
        CaseMode::Insensitive => b.caseless(true),
        CaseMode::Smart => b.case_smart(true),
    };
    if q.multiline {
        b.dotall(false);
    }
    if q.crlf {
        b.crlf(true);
    }
    let regex = b.build(query).map_err(|e| {
        // PCRE2's message on the pattern as the caller wrote it (the
        // matcher's quotes its offset in the pattern as it wraps it).
        let literal = q.mode == QueryMode::Literal;
        let own = if literal { None } else { pcre2::bytes::RegexBuilder::new().utf(utf).ucp(utf).build(query).err() };
        SearchError::InvalidPattern(own.map_or_else(|| e.to_string(), |own| own.to_string()))
    })?;
    Ok(SearchMatcher::pcre2(regex))
}

/// Whether `inner`'s parentheses (outside escapes and classes) pair up, so
/// that `(?-u:` and the last `)` around it are one group.
fn balanced(inner: &str) -> bool {
    let (mut depth, mut escaped, mut class) = (0i64, false, false);
    for c in inner.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' if !class => class = true,
            ']' if class => class = false,
            '(' if !class => depth += 1,
            ')' if !class => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

fn rust_matcher(q: &TextQuery) -> Result<SearchMatcher, SearchError> {
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
    // (As rg sets them: --crlf sets a line terminator, which -U takes
    // away; with --null-data, records end at NUL bytes.)
    if q.multiline {
        if q.crlf {
            b.crlf(true).line_terminator(None);
        }
    } else {
        b.line_terminator(Some(b'\n'));
        if q.crlf {
            b.crlf(true);
        }
        if q.null_data {
            b.line_terminator(Some(b'\0'));
        }
    }
    let regex = b.build(&q.query).map_err(|e| {
        SearchError::InvalidPattern(match q.mode {
            QueryMode::Regex => pattern_error(&q.query, e),
            // A literal fails only on a line break the search cannot cross.
            QueryMode::Literal if q.query.contains('\n') => {
                "the query holds a line break: search with multiline to match across lines".into()
            }
            QueryMode::Literal => e.to_string(),
        })
    })?;
    let insensitive = match q.case {
        CaseMode::Sensitive => false,
        CaseMode::Insensitive => true,
        CaseMode::Smart => !q.query.chars().any(char::is_uppercase),
    };
    let kind = QueryKind {
        literal: q.mode == QueryMode::Literal,
        ignore_case: insensitive,
        multiline: q.multiline,
        word: q.word,
    };
    Ok(SearchMatcher::new(regex, &q.query, kind))
}

/// A matcher of every line (the empty pattern); with `null_data`, of
/// every NUL-terminated record.
fn every_line_matcher(crlf: bool, null_data: bool) -> Result<SearchMatcher, SearchError> {
    // (Lines end as the searcher's do: see `searcher_with`.)
    let mut b = RegexMatcherBuilder::new();
    b.line_terminator(Some(if null_data && !crlf { b'\0' } else { b'\n' })).crlf(crlf);
    let regex = b.build("").map_err(|e| SearchError::InvalidPattern(e.to_string()))?;
    Ok(SearchMatcher::new(regex, "", QueryKind { literal: false, ignore_case: false, multiline: false, word: false }))
}

/// Why `query` does not compile, shown on the pattern as the caller wrote
/// it: the matcher's own message quotes the pattern as it wraps it (for
/// words, for case), which the caller never typed.
fn pattern_error(query: &str, e: grep_regex::Error) -> String {
    let at = |what: &dyn std::fmt::Display, span: &regex_syntax::ast::Span| {
        format!("{what}, at column {} of the pattern", span.start.column)
    };
    match regex_syntax::Parser::new().parse(query) {
        Err(regex_syntax::Error::Parse(e)) => at(e.kind(), e.span()),
        Err(regex_syntax::Error::Translate(e)) => at(e.kind(), e.span()),
        _ => e.to_string(),
    }
}

fn build_searcher(q: &TextQuery) -> Searcher {
    searcher_with(q, q.encoding.as_deref())
}

/// The searcher of `q`, reading its files in `encoding` (rg's `-E`).
fn searcher_with(q: &TextQuery, encoding: Option<&str>) -> Searcher {
    let content = q.output == OutputMode::Content;
    let mut b = SearcherBuilder::new();
    match encoding {
        None => {}
        Some("none") => {
            b.bom_sniffing(false);
        }
        // (Checked in `TextQuery::from_request`.)
        Some(label) => {
            b.encoding(grep_searcher::Encoding::new(label).ok());
        }
    }
    if q.crlf {
        b.line_terminator(grep_matcher::LineTerminator::crlf());
    } else if q.null_data {
        b.line_terminator(grep_matcher::LineTerminator::byte(b'\0'));
    }
    b
        // Counts and file lists need no line numbers (nor does a cursor in
        // them: they resume at file boundaries); counting lines costs as
        // much as the search of a file with no match.
        // (But where rg's count of a file goes past its cap: the lines
        // within the after-context of its last result, see `trailing`.)
        .line_number(content || q.streaming && q.after > 0 && q.per_file.is_some())
        .multi_line(q.multiline)
        .before_context(if content { q.before } else { 0 })
        .after_context(if content { q.after } else { 0 })
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .memory_map(MmapChoice::never())
        .heap_limit(Some(HEAP_LIMIT))
        // (Passthru: lines that are no match come as context of the kind
        // `Other`; see `FileSink::context`.)
        .passthru(q.passthru)
        .stop_on_nonmatch(q.stop_on_nonmatch)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host prints the contract's PCRE2 version for `--pcre2-version`.
    #[test]
    fn pcre2_version_is_the_contracts() {
        assert_eq!(grep_pcre2::version(), sandgrep_contract::PCRE2_VERSION);
    }

    #[test]
    fn multiline_counts_are_matches_clear_of_redactions() {
        // `E\nx` matches twice in one block of lines: once from the last
        // letter of an access key id (redacted), once from a plain line.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "AKIAIOSFODNN7EXAMPLE\nxE\nx\n").unwrap();
        let count = |redact: bool| {
            let policy = crate::Policy {
                redact,
                extra_deny: vec![],
                inside_git_repository: false,
                cursor_key: String::new(),
                disabled_redaction_rules: vec![],
            };
            let ws = Workspace::new(dir.path()).with_policy(&policy).unwrap();
            let request = crate::SearchTextRequest {
                mode: Some(crate::QueryMode::Regex),
                multiline: true,
                output: Some(crate::OutputMode::Count),
                ..SearchTextRequest::new("E\\nx")
            };
            ws.search_text(request).unwrap().files.iter().map(|f| f.count).sum::<u64>()
        };
        assert_eq!(count(false), 2);
        assert_eq!(count(true), 1);
    }

    #[test]
    fn a_multiline_block_is_neither_joined_nor_split_by_a_secret() {
        // A guess at a secret, alternated with a visible neighbour's text:
        // matched on the raw text, a right guess joined the secret's line to
        // its neighbour's block (or, across a key block, its BEGIN line's
        // match touched the body and vanished). Right and wrong guesses
        // answer alike.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "note = \"Q marker\"\npassword = \"Xk9mQ2vL8pR4wZ7tB3nY\"\nend = 1\n")
            .unwrap();
        let body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun";
        std::fs::write(
            dir.path().join("k.txt"),
            format!("-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n"),
        )
        .unwrap();
        let ws = Workspace::new(dir.path());
        let answer = |q: &str, output: crate::OutputMode| {
            let r = ws
                .search_text(crate::SearchTextRequest {
                    mode: Some(crate::QueryMode::Regex),
                    multiline: true,
                    output: Some(output),
                    ..SearchTextRequest::new(q)
                })
                .unwrap();
            let m: Vec<_> = r.matches.iter().map(|m| (m.path.clone(), m.line, m.end_line, m.text.clone())).collect();
            let f: Vec<_> = r.files.iter().map(|f| (f.path.clone(), f.count)).collect();
            format!("{m:?} {f:?} {}", r.stats.lines_redacted)
        };
        for output in [crate::OutputMode::Content, crate::OutputMode::Count, crate::OutputMode::FilesWithMatches] {
            for (right, wrong) in [("Xk9", "Xk8"), ("password = \"Xk9", "password = \"Xk8")] {
                let q = |g: &str| format!("(?:Q marker|{g})[^\\n]*\\n");
                assert_eq!(answer(&q(right), output), answer(&q(wrong), output), "{output:?} {right}");
            }
            let q = |g: &str| format!("(?:BEGIN|^{g})[^\\n]*\\n");
            assert_eq!(answer(&q("MIIEow"), output), answer(&q("MIIEox"), output), "{output:?} key body");
        }
        // A line the file's redaction changed before the search is counted.
        let r = ws
            .search_text(crate::SearchTextRequest {
                mode: Some(crate::QueryMode::Regex),
                multiline: true,
                ..SearchTextRequest::new("Q marker[^\\n]*\\npassword")
            })
            .unwrap();
        assert_eq!((r.matches.len(), r.stats.lines_redacted), (1, 1), "{r:?}");
        assert_eq!(r.matches[0].redactions.iter().map(|x| x.line).collect::<Vec<_>>(), [2], "{r:?}");
    }

    #[test]
    fn replacements_fill_groups_end_at_line_breaks_and_leave_secrets_shut() {
        let dir = tempfile::tempdir().unwrap();
        let key = "AKIAIOSFODNN7EXAMPLE";
        std::fs::write(dir.path().join("a.txt"), format!("k1 = v1\nfoo\nbar\nid {key} k2\n")).unwrap();
        let ws = Workspace::new(dir.path())
            .with_policy(&crate::Policy {
                redact: true,
                extra_deny: vec![],
                inside_git_repository: false,
                cursor_key: String::new(),
                disabled_redaction_rules: vec![],
            })
            .unwrap();
        let shown = |query: &str, replace: &str, multiline: bool| {
            let request = crate::SearchTextRequest {
                mode: Some(crate::QueryMode::Regex),
                case: Some(crate::CaseMode::Sensitive),
                multiline,
                context_before: Some(0),
                context_after: Some(0),
                replace: Some(replace.into()),
                ..SearchTextRequest::new(query)
            };
            let r = ws.search_text(request).unwrap();
            r.matches
                .iter()
                .map(|m| {
                    let spans: Vec<&str> =
                        m.submatches.iter().map(|s| &m.text[s.start as usize..s.end as usize]).collect();
                    (m.line, m.column, m.text.clone(), spans.join("|"))
                })
                .collect::<Vec<_>>()
        };
        // Groups by number and name; columns stay the matches'.
        assert_eq!(shown(r"(?P<k>k\d) = (v\d)", "$2=${k}$$", false)[0], (1, 1, "v1=k1$".into(), "v1=k1$".into()));
        // A match that takes its line's break is replaced whole.
        assert_eq!(shown(r"foo\n", "X", true)[0], (2, 1, "X".into(), "X".into()));
        // Groups never reach inside a secret: matches touching it are not
        // shown, others around it are replaced in the redacted text.
        let around = shown(r"(\w+)$", "<$1>", false);
        assert_eq!(around.last().unwrap().2, "id [REDACTED] <k2>");
        assert!(shown(r"id (\S+)", "$1", false).is_empty());
    }
    #[test]
    fn passthru_pages_every_line_once_bounded_by_max_results() {
        let dir = tempfile::tempdir().unwrap();
        let text: String =
            (1..=50).map(|i| if i % 7 == 0 { format!("foo {i}\n") } else { format!("line {i}\n") }).collect();
        std::fs::write(dir.path().join("a.txt"), &text).unwrap();
        std::fs::write(dir.path().join("b.txt"), "no match\npassword = \"Zq8rT3vL0xN7aB2cD4eF\"\n").unwrap();
        let ws = Workspace::new(dir.path());
        for per_file in [None, Some(3)] {
            let mut r = crate::SearchTextRequest {
                passthru: true,
                max_results: Some(8),
                max_matches_per_file: per_file,
                ..SearchTextRequest::new("foo")
            };
            let (mut lines, mut results, mut redacted) = (Vec::new(), 0, 0);
            loop {
                let page = ws.search_text(r.clone()).unwrap();
                assert!(page.matches.len() <= 8, "a page holds at most max-results lines");
                for m in &page.matches {
                    lines.push((m.path.clone(), m.line));
                    results += u64::from(m.column != 0);
                    assert!(m.context_before.is_empty() && m.context_after.is_empty());
                }
                redacted += page.stats.lines_redacted;
                match page.next_cursor {
                    Some(c) => r.cursor = Some(c),
                    None => break,
                }
            }
            let want: Vec<(String, u64)> =
                (1..=50).map(|i| ("a.txt".into(), i)).chain((1..=2).map(|i| ("b.txt".into(), i))).collect();
            assert_eq!(lines, want, "every line once, in order ({per_file:?})");
            // Past the file's cap, results come back as context.
            assert_eq!(results, per_file.map_or(7, u64::from), "{per_file:?}");
            assert_eq!(redacted, 1);
        }
    }

    #[test]
    fn stop_on_nonmatch_ends_a_files_search() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x\nfoo 1\nfoo 2\nbar\nfoo 3\n").unwrap();
        let ws = Workspace::new(dir.path());
        let r = crate::SearchTextRequest { stop_on_nonmatch: true, ..SearchTextRequest::new("foo") };
        let lines: Vec<u64> = ws.search_text(r).unwrap().matches.iter().map(|m| m.line).collect();
        assert_eq!(lines, [2, 3]);
    }

    #[test]
    fn null_data_records_are_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.dat"), b"foo\0bar\0\0baz\nfoo\0").unwrap();
        let ws = Workspace::new(dir.path());
        let r = crate::SearchTextRequest {
            null_data: true,
            mode: Some(crate::QueryMode::Regex),
            ..SearchTextRequest::new("^bar$|baz")
        };
        let found: Vec<(u64, String)> =
            ws.search_text(r).unwrap().matches.iter().map(|m| (m.line, m.text.clone())).collect();
        assert_eq!(found, [(2, "bar".to_string()), (4, "baz\nfoo".to_string())]);
    }

    use crate::{ShardEvent, ShardResult, ShardStop};

    /// A tree with matches spread over files and directories, a binary file,
    /// a denied one, an ignored one and one over a size cap.
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for d in ["", "a/", "a/b/", "a-b/", "c/"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
            for f in 0..9 {
                let mut text = String::new();
                for line in 0..next() % 30 {
                    let word = ["foo", "bar", "foo bar foo", "baz", "x"][next() % 5];
                    text.push_str(&format!("{line} {word}\n"));
                }
                std::fs::write(dir.path().join(format!("{d}f{f}.txt")), text).unwrap();
            }
        }
        std::fs::write(dir.path().join("a/bin.dat"), b"foo\n\0foo\n").unwrap();
        std::fs::write(dir.path().join("a/.env"), b"foo\n").unwrap();
        // Denied last in the walk: counted after every other entry.
        std::fs::create_dir_all(dir.path().join("zz")).unwrap();
        std::fs::write(dir.path().join("zz/.env"), b"foo\n").unwrap();
        std::fs::write(dir.path().join(".ignore"), b"c/f1.txt\n").unwrap();
        std::fs::write(dir.path().join("big.txt"), "foo\n".repeat(500)).unwrap();
        // A run of files with nothing to find (a part hands them on as one).
        std::fs::create_dir_all(dir.path().join("quiet")).unwrap();
        for f in 0..6 {
            std::fs::write(dir.path().join(format!("quiet/q{f}.txt")), "nothing here\n").unwrap();
        }
        dir
    }

    fn request(output: OutputMode, max: u32, per_file: Option<u32>, context: u32, skip: u32) -> SearchTextRequest {
        SearchTextRequest {
            hidden: true,
            context_before: Some(context),
            context_after: Some(context),
            output: Some(output),
            max_results: Some(max),
            max_matches_per_file: per_file,
            max_filesize: Some(1000),
            skip: Some(skip),
            ..SearchTextRequest::new("foo")
        }
    }

    #[test]
    fn where_a_guess_matches_inside_a_secret_shows_nowhere() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.txt"), "password = \"Zq8rT3vL0xN7aB2cD4eF\" foo\n").unwrap();
        std::fs::write(dir.path().join("c.txt"), "aws_key = \"AKIAIOSFODNN7EXAMPLE\";\r\nplain z\r\n").unwrap();
        let ws = Workspace::new(dir.path());
        let answer = |query: String, output: OutputMode, invert: bool| {
            let mut r = request(output, 100, None, 0, 0);
            (r.query, r.mode, r.invert_match, r.hidden) = (query, Some(QueryMode::Regex), invert, false);
            let mut resp = ws.search_text(r).unwrap();
            (resp.stats.elapsed_ms, resp.stats.bytes_searched) = (0, 0);
            (resp.matches, resp.files, resp.stats.files_matched)
        };
        for (right, wrong, other) in
            [("Zq8r", "XXXX", "foo"), ("AKIAIOSF", "AKIAIOSX", "[^\\r]$"), ("Zq8r", "Zq9r", "z$")]
        {
            for output in [OutputMode::Content, OutputMode::Count, OutputMode::FilesWithMatches] {
                for invert in [false, true] {
                    let guess = |g: &str| answer(format!("{g}|{other}"), output, invert);
                    assert_eq!(guess(right), guess(wrong), "{right}|{other} {output:?} invert {invert}");
                }
            }
        }
        // The match is shown where it is in the text shown.
        let (matches, _, _) = answer("foo".into(), OutputMode::Content, false);
        let m = &matches[0];
        assert_eq!((m.text.as_str(), m.column), ("password = \"[REDACTED]\" foo", 25));
        assert_eq!(&m.text[m.submatches[0].start as usize..m.submatches[0].end as usize], "foo");
    }

    /// PCRE2's look-around sees past its match: it never sees a secret
    /// (the text is redacted whole first), so a guess at one beside a
    /// visible match answers as a wrong one, in every output, inverted or
    /// not, line by line or multi-line.
    #[test]
    fn a_pcre2_look_around_never_sees_a_secret() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.txt"), "password = \"Zq8rT3vL0xN7aB2cD4eF\" foo\nplain\n").unwrap();
        std::fs::write(dir.path().join("c.txt"), "aws_key = \"AKIAIOSFODNN7EXAMPLE\";\r\nplain z\r\n").unwrap();
        let ws = Workspace::new(dir.path());
        let answer = |query: String, output: OutputMode, invert: bool, multiline: bool| {
            let mut r = request(output, 100, None, 1, 0);
            (r.query, r.mode, r.invert_match, r.hidden) = (query, Some(QueryMode::Regex), invert, false);
            (r.engine, r.multiline) = (Some(RegexEngine::Pcre2), multiline);
            let mut resp = ws.search_text(r).unwrap();
            (resp.stats.elapsed_ms, resp.stats.bytes_searched) = (0, 0);
            (resp.matches, resp.files, resp.stats.files_matched)
        };
        for (right, wrong) in [
            ("foo(?<=Zq8r.{16}\" foo)", "foo(?<=Zq9r.{16}\" foo)"),
            ("password(?= = \"Zq8r)|plain", "password(?= = \"Zq9r)|plain"),
            ("aws_key(?=.*AKIAIOSF)|z$", "aws_key(?=.*AKIAIOSX)|z$"),
            ("(?<!AKIAIOSF.{12})\";", "(?<!AKIAIOSX.{12})\";"),
            ("(\"Z)q8r[^\"]*\"|\\1", "(\"Z)q9r[^\"]*\"|\\1"),
        ] {
            for output in [OutputMode::Content, OutputMode::Count, OutputMode::FilesWithMatches] {
                for (invert, multiline) in [(false, false), (true, false), (false, true)] {
                    let guess = |g: &str| answer(g.to_string(), output, invert, multiline);
                    assert_eq!(guess(right), guess(wrong), "{right} {output:?} invert {invert} -U {multiline}");
                }
            }
        }
        // What is shown is still found, look-around and all.
        let (matches, _, _) = answer("(?<=\\[REDACTED\\]\" )foo".into(), OutputMode::Content, false, false);
        assert_eq!(matches.len(), 1);
        assert_eq!((matches[0].text.as_str(), matches[0].column), ("password = \"[REDACTED]\" foo", 25));
    }

    /// PCRE2 backtracking on every line of a file, each under its match
    /// limit, finding nothing: the call's timeout ends the search there,
    /// as partial, not the host's deadline.
    #[test]
    fn a_backtracking_pcre2_search_ends_at_its_timeout() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), format!("{}!\n", "a".repeat(27)).repeat(20_000)).unwrap();
        let ws = Workspace::new(dir.path());
        let mut r = request(OutputMode::Content, 100, None, 0, 0);
        (r.query, r.mode, r.engine, r.timeout_ms, r.max_filesize) =
            ("^(a|aa)+$".into(), Some(QueryMode::Regex), Some(RegexEngine::Pcre2), Some(300), None);
        let started = Instant::now();
        let resp = ws.search_text(r).unwrap();
        assert!(resp.timed_out, "{:?}", resp.warnings);
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[test]
    fn inverted_results_are_the_lines_that_are_no_hit_as_callers_see_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.txt"), "aws = AKIAIOSFODNN7EXAMPLE\nplain\nfoo\n").unwrap();
        let ws = Workspace::new(dir.path());
        let lines = |query: &str, output: OutputMode| {
            let mut r = request(output, 100, None, 0, 0);
            (r.query, r.mode, r.invert_match) = (query.into(), Some(QueryMode::Regex), true);
            let resp = ws.search_text(r).unwrap();
            let texts: Vec<String> = resp.matches.iter().map(|m| format!("{}:{}", m.line, m.text)).collect();
            (texts, resp.files.iter().map(|f| f.count).collect::<Vec<_>>())
        };
        let not_foo = (vec!["1:aws = [REDACTED]".to_string(), "2:plain".into()], vec![]);
        assert_eq!(lines("foo", OutputMode::Content), not_foo);
        assert_eq!(lines("foo", OutputMode::Count).1, [2]);
        // Whether the pattern matches inside the secret shows nowhere.
        for guess in ["foo", "AKIAI", "AKIAX", "EXAMPLE"] {
            assert_eq!(lines(&format!("{guess}|^foo"), OutputMode::Content), not_foo, "{guess}");
            assert_eq!(lines(&format!("{guess}|^foo"), OutputMode::Count).1, [2], "{guess}");
        }
        assert_eq!(lines("o", OutputMode::Content).0, ["1:aws = [REDACTED]", "2:plain"]);
        assert_eq!(lines("a", OutputMode::Content).0, ["3:foo"]);
    }

    fn no_shard() -> ShardResult {
        ShardResult { events: Vec::new(), stopped: None, index: IndexUse::None, results: 0, page_takes: 0 }
    }

    /// The search walked once and searched by `count` instances, as the
    /// host runs it: batches of `batch` files handed out in turn, none after
    /// one whose searcher stopped, nor after those that gave more results
    /// than the page takes.
    fn sharded(ws: &Workspace, request: &SearchTextRequest, count: usize, batch: u32) -> SearchTextResponse {
        let mut listing = batch::Listing::new(ws, request.clone()).unwrap();
        let mut searchers: Vec<_> = (0..count).map(|_| batch::Batches::new(ws, request.clone()).unwrap()).collect();
        let mut results: Vec<ShardResult> = (0..count).map(|_| no_shard()).collect();
        let mut walked = no_shard();
        let (mut turn, mut taken) = (0, 0);
        loop {
            let out = listing.next(batch);
            walked.events.extend(out.events);
            if out.timed_out {
                walked.stopped = Some(ShardStop::TimedOut);
            }
            let i = turn % count;
            turn += 1;
            let r = searchers[i].search(ws, out.files).unwrap();
            results[i].events.extend(r.events);
            results[i].stopped = r.stopped;
            taken += r.results;
            if out.done || r.stopped.is_some() || taken > r.page_takes {
                break;
            }
        }
        results.push(walked);
        ws.merge_shards(request.clone(), results).unwrap()
    }

    #[test]
    fn shards_merge_into_the_single_instance_pages() {
        let dir = tree();
        let ws = Workspace::new(dir.path());
        for output in [OutputMode::Content, OutputMode::FilesWithMatches, OutputMode::Count] {
            for (max, per_file, context, skip) in
                [(1, None, 0, 0), (3, Some(2), 1, 0), (7, None, 2, 2), (1000, Some(3), 0, 1), (5, Some(1), 0, 0)]
            {
                let mut request = request(output, max, per_file, context, skip);
                // Inverted too, where a page holds few lines.
                request.invert_match = max < 5;
                let mut pages = 0;
                loop {
                    // Time and bytes read are the work done, not the answer: a
                    // shard may read further into a file than one instance.
                    // (A match's bytes-searched, its file's, too.)
                    let work_done = |r: &mut SearchTextResponse| {
                        (r.stats.elapsed_ms, r.stats.bytes_searched) = (0, 0);
                        r.matches.iter_mut().for_each(|m| m.bytes_searched = 0);
                    };
                    let mut single = ws.search_text(request.clone()).unwrap();
                    work_done(&mut single);
                    for (count, batch) in [(2, 1), (2, 4), (3, 2), (3, 100)] {
                        let mut merged = sharded(&ws, &request, count, batch);
                        work_done(&mut merged);
                        assert_eq!(
                            merged, single,
                            "{output:?} max {max} per-file {per_file:?} page {pages} in {count} by {batch}"
                        );
                    }
                    pages += 1;
                    match single.next_cursor {
                        Some(c) => request.cursor = Some(c),
                        None => break,
                    }
                }
                assert!(pages > 1 || max == 1000, "{output:?} {max}: one page");
            }
        }
    }

    /// search-zip: compressed files' text searched whole, a broken stream's
    /// lines before the break then its error (said once, on the page where
    /// the file ends), a text over max-filesize counted too large; paged
    /// and sharded alike.
    #[test]
    fn compressed_files_page_and_shard_as_files_do() {
        use std::io::Write;
        let gz = |text: &str| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(text.as_bytes()).unwrap();
            e.finish().unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        let lines = |n: usize, word: &str| (0..n).map(|i| format!("{i} {word}\n")).collect::<String>();
        std::fs::write(dir.path().join("a.gz"), gz(&lines(12, "foo"))).unwrap();
        let long = gz(&lines(1200, "foo bar"));
        std::fs::write(dir.path().join("b-cut.gz"), &long[..long.len() / 2]).unwrap();
        std::fs::write(dir.path().join("c.txt"), lines(5, "foo")).unwrap();
        std::fs::write(dir.path().join("d-big.gz"), gz(&lines(2500, "foo"))).unwrap();
        std::fs::write(dir.path().join("e.gz"), gz("password = \"Zq8rT3vL0xN7aB2cD4eF\" foo\n")).unwrap();
        let ws = Workspace::new(dir.path());
        for output in [OutputMode::Content, OutputMode::FilesWithMatches, OutputMode::Count] {
            for (max, context) in [(7, 1), (1000, 0)] {
                let mut request = request(output, max, None, context, 0);
                (request.search_zip, request.max_filesize) = (true, Some(20_000));
                let (mut broken, mut too_large, mut pages, mut paths) = (0, 0, 0, Vec::new());
                loop {
                    let work_done = |r: &mut SearchTextResponse| {
                        (r.stats.elapsed_ms, r.stats.bytes_searched) = (0, 0);
                        r.matches.iter_mut().for_each(|m| m.bytes_searched = 0);
                    };
                    let mut single = ws.search_text(request.clone()).unwrap();
                    work_done(&mut single);
                    for (count, batch) in [(2, 1), (3, 2)] {
                        let mut merged = sharded(&ws, &request, count, batch);
                        work_done(&mut merged);
                        assert_eq!(merged, single, "{output:?} {max} page {pages} in {count} by {batch}");
                    }
                    too_large += single.stats.skipped.too_large;
                    assert!(single.matches.iter().all(|m| !m.text.contains("Zq8r")), "{single:?}");
                    broken += single.warnings.iter().filter(|w| w.contains("b-cut.gz: gzip")).count();
                    paths.extend(single.matches.iter().map(|m| m.path.clone()));
                    paths.extend(single.files.iter().map(|f| f.path.clone()));
                    pages += 1;
                    match single.next_cursor {
                        Some(c) => request.cursor = Some(c),
                        None => break,
                    }
                }
                // (A file list's search of it ends at a match before the break.)
                let said = usize::from(output != OutputMode::FilesWithMatches);
                assert_eq!(broken, said, "{output:?} {max}: the broken file is said once");
                assert_eq!(too_large, 1, "{output:?} {max}: d-big.gz, counted once");
                paths.dedup();
                let want: &[&str] = match output {
                    // Its lines before the break, as rg prints them.
                    OutputMode::Content => &["a.gz", "b-cut.gz", "c.txt", "e.gz"],
                    // A count of part of a file is no count; a file list's
                    // match comes before the break.
                    OutputMode::Count => &["a.gz", "c.txt", "e.gz"],
                    OutputMode::FilesWithMatches => &["a.gz", "b-cut.gz", "c.txt", "e.gz"],
                };
                assert_eq!(paths, want, "{output:?} {max}");
            }
        }
    }

    #[test]
    fn a_page_cut_by_time_after_skipped_files_still_goes_on() {
        // Only skipped files (binary, unreadable, too large) before the
        // deadline: the cursor must still lead past them.
        let dir = tree();
        let ws = Workspace::new(dir.path());
        let outcome = |binary| FileOutcome {
            bytes_searched: 9,
            error: None,
            too_long: false,
            binary,
            matches: Vec::new(),
            count: 0,
            more: false,
            timed_out: false,
            binary_notice: None,
        };
        let events = vec![
            ShardEvent { key: "a/bin.dat".into(), kind: ShardEventKind::Searched(outcome(true)) },
            ShardEvent { key: "a/gone.txt".into(), kind: ShardEventKind::Problem(("a/gone.txt: gone".into(), true)) },
            ShardEvent { key: "big.txt".into(), kind: ShardEventKind::TooLarge },
        ];
        let shards = vec![ShardResult { events, stopped: Some(ShardStop::TimedOut), ..no_shard() }];
        let r = request(OutputMode::Content, 10, None, 0, 0);
        let page = ws.merge_shards(r.clone(), shards).unwrap();
        assert!(page.timed_out);
        let cursor = page.next_cursor.expect("a cursor past the skipped files");
        let next = ws.search_text(SearchTextRequest { cursor: Some(cursor), ..r }).unwrap();
        assert!(next.matches.iter().all(|m| m.path.as_str() > "big.txt"), "{:?}", next.matches);
    }
}
