//! Text search walked once and searched in many instances (the WIT's
//! `walk-files` and `search-files`): one instance walks and hands out the
//! files to search in batches, in walk order; others search whole batches,
//! each keeping its own part of the page between calls. Every instance's
//! events go to [`super::merge_shards`], which makes the page one instance
//! would have made: a searcher's part alone filling a page means the whole
//! page is full by then, so its stop is where the merge cuts.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::{walk_event, walk_of, Page, Searching};
use crate::cursor::Position;
use crate::error::{error_message, io_error};
use crate::index::{Narrowing, Unread};
use crate::request::TextQuery;
use crate::walk::{self, Entry, Reopen, Step, Walker};
use crate::{page, session};
use crate::{
    FileOutcome, IndexUse, SearchError, SearchTextRequest, ShardEvent, ShardEventKind, ShardResult, ShardStop,
    WalkedFile, WalkedFiles, Workspace,
};

/// About how many bytes of files (by the index's sizes) a batch holds: few
/// enough that the instances share a served call's reads evenly, enough
/// that a batch costs little beside them.
const BATCH_BYTES: u64 = 1 << 20;

/// The walk an instance hands out files from.
pub(crate) struct Listing {
    /// The walk kept at this generation, or `live`, recorded.
    replay: session::Replay,
    live: Box<dyn Iterator<Item = Step>>,
    /// Steps taken so far.
    at: usize,
    walker: Rc<Walker>,
    seen: Rc<Cell<walk::Skips>>,
    /// The last entry walked (its key is made only for an event after it).
    last: Last,
    /// With an index, the files it rules out are not handed out.
    narrowing: Option<Narrowing>,
    /// What the index says of the steps of a kept walk.
    marks: Option<Rc<Vec<u32>>>,
    index_use: IndexUse,
    resume: Option<Position>,
    max_filesize: u64,
    /// The request named files (binary ones are named in a warning).
    named: bool,
    done: bool,
}

/// The last entry walked: its step number in the kept walk, or itself.
enum Last {
    Start,
    Kept(usize),
    Live(Step),
}

/// The search an instance makes of the batches it is given.
pub(crate) struct Batches {
    search: Searching,
    page: Page,
    dirs: Dirs,
}

thread_local! {
    static LISTING: RefCell<Option<Listing>> = const { RefCell::new(None) };
    static BATCHES: RefCell<Option<Batches>> = const { RefCell::new(None) };
}

/// The next files of the walk of `request` (a new walk with `start`).
pub fn walk_files(
    ws: &Workspace,
    request: SearchTextRequest,
    start: bool,
    max: u32,
) -> Result<WalkedFiles, SearchError> {
    LISTING.with_borrow_mut(|kept| {
        if start || kept.is_none() {
            *kept = None;
            *kept = Some(Listing::new(ws, request)?);
        }
        Ok(kept.as_mut().expect("just made").next(max))
    })
}

/// Searches a batch of `walk-files`' files as part of the search of
/// `request` (a new one with `start`; later calls go on with the request
/// the search began with).
pub fn search_files(
    ws: &Workspace,
    request: SearchTextRequest,
    start: bool,
    files: Vec<WalkedFile>,
) -> Result<ShardResult, SearchError> {
    BATCHES.with_borrow_mut(|kept| {
        if start || kept.is_none() {
            *kept = None;
            *kept = Some(Batches::new(ws, request)?);
        }
        kept.as_mut().expect("just made").search(ws, files)
    })
}

impl Listing {
    pub(crate) fn new(ws: &Workspace, request: SearchTextRequest) -> Result<Listing, SearchError> {
        let started = std::time::Instant::now();
        let q = TextQuery::from_request(request, &mut Vec::new())?;
        // A bad pattern is refused here too: a tree with no file to search
        // must not hide it.
        let matcher = super::build_matcher(&q)?;
        let resume = page::resume_from(&ws.stream_key(q.stream_key()), q.cursor.as_deref())?;
        let (walker, roots) = walk_of(ws, &q, started)?;
        let seen = Rc::new(Cell::new(walk::Skips::default()));
        let after = resume.as_ref().map(|r| r.path.clone());
        // As `search-text`: a first page replays a kept walk, or records one.
        let (index_use, narrowing) = Narrowing::open(ws, &q, matcher.is_pcre2());
        let mut key = session::listing_key(&q.paths, &q.walk, ws.index_policy());
        if let Some(n) = &narrowing {
            key = n.walk_key(ws, &q.paths, &q.walk, key, after.is_none());
        }
        let reopen = walk::Reopen::for_walk(ws, &q.walk, &roots);
        let replay = session::Replay::new(key, after.is_none(), reopen);
        let named = !walk::named_files(&roots).is_empty();
        let live = Box::new(walk::steps(walker.clone(), roots, after, seen.clone()));
        let marks = narrowing.as_ref().and_then(|n| replay.marks(|steps| n.marks(steps)));
        Ok(Listing {
            replay,
            live,
            at: 0,
            walker,
            seen,
            last: Last::Start,
            narrowing,
            marks,
            index_use,
            resume,
            max_filesize: q.max_filesize,
            named,
            done: false,
        })
    }

    /// The next files of the walk: at least one and at most `max` (or about
    /// [`BATCH_BYTES`] of them by the index's sizes), unless the walk is over.
    pub(crate) fn next(&mut self, max: u32) -> WalkedFiles {
        let mut out =
            WalkedFiles { events: Vec::new(), files: Vec::new(), done: false, timed_out: false, index: self.index_use };
        // The bytes handed out, and the run of files the index ruled out
        // since the last file handed out or event (its place in `events`).
        let (mut bytes, mut run) = (0, None);
        while !self.done && out.files.len() < max.max(1) as usize && bytes < BATCH_BYTES {
            // A kept walk passes the files the index rules out by the run.
            if let (Some(marks), Some(n)) = (&self.marks, &self.narrowing) {
                let quiet = n.quiet_run(marks, self.at, self.max_filesize, self.named);
                if let Some(Step::Entry(file)) = quiet.last.and_then(|i| self.replay.kept_step(i)) {
                    skipped(&mut out.events, &mut run, &file.rel, (quiet.files, quiet.binary));
                }
                if quiet.end > self.at {
                    (self.last, self.at) = (Last::Kept(quiet.end - 1), quiet.end);
                }
            }
            match self.replay.step(self.at, &mut self.live) {
                Some(step) => {
                    self.at += 1;
                    if let Step::Entry(entry) = &*step {
                        // (Before the page's cursor: no event, as in one instance.)
                        if entry.is_file && page::resume_point(self.resume.as_ref(), &entry.rel).is_some() {
                            match self.unread(entry) {
                                Some(ShardEventKind::IndexSkippedRun(n)) => {
                                    skipped(&mut out.events, &mut run, &entry.rel, n);
                                }
                                Some(kind) => {
                                    run = None;
                                    out.events.push(ShardEvent { key: entry.rel.clone(), kind });
                                }
                                None => {
                                    run = None;
                                    bytes +=
                                        self.narrowing.as_ref().and_then(|n| n.recorded_size(&entry.rel)).unwrap_or(0);
                                    out.files.push(WalkedFile { path: entry.rel.clone(), real: entry.real.clone() });
                                }
                            }
                        }
                        self.last = match step {
                            Cow::Borrowed(_) => Last::Kept(self.at - 1),
                            Cow::Owned(step) => Last::Live(step),
                        };
                    } else {
                        run = None;
                        out.events.push(ShardEvent { key: self.anchor(), kind: walk_event(&step) });
                        if let Step::TimedOut = &*step {
                            (self.done, out.timed_out) = (true, true);
                        }
                    }
                }
                None => self.done = true,
            }
            // Entries denied since the last step (at the end, or up to a timeout).
            if self.done {
                let skips = self.walker.skips();
                let left = skips.since(self.seen.replace(skips));
                if left.any() {
                    out.events.push(ShardEvent { key: self.anchor(), kind: ShardEventKind::Skipped(left.wit()) });
                    self.replay.push(Step::Skipped(left));
                }
                self.replay.keep(!out.timed_out);
                self.replay.release();
            }
        }
        out.done = self.done;
        out
    }

    /// The event of the file `entry` when it is not to be searched: the
    /// index rules it out (`IndexSkippedRun` for one that cannot match or,
    /// not named, holds a NUL).
    fn unread(&self, entry: &Entry) -> Option<ShardEventKind> {
        Some(match self.narrowing.as_ref()?.unread(entry, self.max_filesize)? {
            Unread::TooLarge => ShardEventKind::TooLarge,
            Unread::Binary if self.named => ShardEventKind::IndexSkipped(true),
            Unread::Binary => ShardEventKind::IndexSkippedRun((1, 1)),
            Unread::NoMatch => ShardEventKind::IndexSkippedRun((1, 0)),
        })
    }

    /// The key of walk events after the last entry walked.
    fn anchor(&self) -> String {
        match &self.last {
            Last::Start => String::new(),
            Last::Kept(at) => page::anchor_after(self.replay.kept_step(*at)),
            Last::Live(step) => page::anchor_after(Some(step)),
        }
    }
}

impl Batches {
    pub(crate) fn new(ws: &Workspace, request: SearchTextRequest) -> Result<Batches, SearchError> {
        // The walk handing the files out applied the index.
        let mut search = Searching::new(ws, request, false)?;
        let (_, roots) = search.walk(ws)?;
        let page = search.page(&roots);
        Ok(Batches { search, page, dirs: Dirs::default() })
    }

    /// Searches `files`: their events, and whether this instance's part of
    /// the page is now full or out of time (then it searches no more).
    pub(crate) fn search(&mut self, ws: &Workspace, files: Vec<WalkedFile>) -> Result<ShardResult, SearchError> {
        let mut events = Vec::new();
        let before = self.page.paging.taken();
        for file in files {
            if self.page.paging.stopped() {
                break;
            }
            let rel = file.path;
            // Before the page's cursor: no event, as in one instance.
            if self.page.paging.resume_point(&rel).is_none() {
                continue;
            }
            let kind = match self.dirs.entry(ws, rel.clone(), file.real.as_deref()) {
                Ok(entry) => self.search.file(&mut self.page, &entry),
                Err(kind) => Some(kind),
            };
            if let Some(kind) = kind {
                push_event(&mut events, &rel, &kind);
                self.page.accept(&rel, kind);
            }
        }
        let stopped = if self.page.paging.done() {
            Some(ShardStop::PageFull)
        } else {
            self.page.paging.timed_out().then_some(ShardStop::TimedOut)
        };
        let paging = &self.page.paging;
        Ok(ShardResult {
            events,
            stopped,
            index: self.search.index_use,
            results: paging.taken() - before,
            page_takes: paging.takes(),
        })
    }
}

/// Adds `n` files the index rules out (so many of them binary), the last
/// at `rel`, to the walk's events: to the `run` of them open since the last
/// file handed out or event, or as a new one.
fn skipped(events: &mut Vec<ShardEvent>, run: &mut Option<usize>, rel: &str, n: (u64, u64)) {
    if let Some(ShardEvent { key, kind: ShardEventKind::IndexSkippedRun((files, binary)) }) =
        run.and_then(|i| events.get_mut(i))
    {
        key.clear();
        key.push_str(rel);
        (*files, *binary) = (*files + n.0, *binary + n.1);
    } else {
        *run = Some(events.len());
        events.push(ShardEvent { key: rel.to_string(), kind: ShardEventKind::IndexSkippedRun(n) });
    }
}

/// Adds the event of the file `rel` to a batch's; a file that gave nothing
/// to report joins the run of them just before it (the page only counts
/// those), so a merge lifts an event per file that matched, not per file.
pub(super) fn push_event(events: &mut Vec<ShardEvent>, rel: &str, kind: &ShardEventKind) {
    let quiet = |r: &FileOutcome| {
        r.count == 0
            && !r.more
            && r.matches.is_empty()
            && r.error.is_none()
            && !r.binary
            && !r.too_long
            && !r.timed_out
            && r.binary_notice.is_none()
    };
    match kind {
        ShardEventKind::Searched(r) if quiet(r) => match events.last_mut() {
            Some(ShardEvent { key, kind: ShardEventKind::Unmatched((files, bytes)) }) => {
                key.clear();
                key.push_str(rel);
                (*files, *bytes) = (*files + 1, *bytes + r.bytes_searched);
            }
            _ => {
                events.push(ShardEvent { key: rel.to_string(), kind: ShardEventKind::Unmatched((1, r.bytes_searched)) })
            }
        },
        kind => events.push(ShardEvent { key: rel.to_string(), kind: kind.clone() }),
    }
}

/// The directories of the last file searched, open from the root down
/// ([`Reopen`]): the next file is mostly in the same one, or near it.
#[derive(Default)]
pub(crate) struct Dirs(Option<Rc<Reopen>>);

impl Dirs {
    /// The file at `rel` (really at `real`), ready to open. Each directory
    /// on the way is checked against the denylist and opened by name,
    /// without following a link (the walk saw directories there: a link now
    /// is a change, and an error); names are single components, so nothing
    /// leaves the root. Denied paths and problems are the file's event.
    pub(crate) fn entry(&mut self, ws: &Workspace, rel: String, real: Option<&str>) -> Result<Entry, ShardEventKind> {
        let real = real.unwrap_or(&rel);
        let (parent, name) = real.rsplit_once('/').unwrap_or(("", real));
        let reopen = match &self.0 {
            Some(reopen) => reopen.clone(),
            None => {
                let root = ws.root_dir().map_err(|e| ShardEventKind::Problem((error_message(&e), true)))?;
                self.0.insert(Reopen::new(root)).clone()
            }
        };
        let dir = reopen.dir(parent, |at, dir, up| ws.deny.entry_denied(at, dir, up, true)).map_err(|e| match e {
            Some(e) => ShardEventKind::Problem((error_message(&io_error(&rel, &e)), true)),
            None => denied_one(),
        })?;
        // (The walk checked it; whoever else hands a path in is checked too.)
        if ws.deny.entry_denied(real, name, parent.rsplit('/').next().filter(|p| !p.is_empty()), false) {
            return Err(denied_one());
        }
        let name = name.to_string();
        Ok(Entry::file(ws, rel, dir, name))
    }
}

/// The event of one file the denylist keeps out.
fn denied_one() -> ShardEventKind {
    ShardEventKind::Skipped(walk::Skips { denied: 1, ..Default::default() }.wit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::OutputMode;

    #[test]
    fn a_searcher_opens_only_what_a_walk_would() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("real/a.txt"), "needle\n").unwrap();
        std::fs::write(root.join(".git/config"), "needle\n").unwrap();
        std::fs::write(root.join(".env"), "needle\n").unwrap();
        std::os::unix::fs::symlink("real", root.join("link")).unwrap();
        let ws = Workspace::new(root);
        let request =
            SearchTextRequest { hidden: true, output: Some(OutputMode::Count), ..SearchTextRequest::new("needle") };
        let mut batches = Batches::new(&ws, request).unwrap();
        let file = |path: &str, real: Option<&str>| WalkedFile { path: path.into(), real: real.map(str::to_string) };
        let files = vec![
            // A link where the walk saw a directory: not followed.
            file("link/a.txt", None),
            // Named through a link, really elsewhere: the real path is opened.
            file("shown/a.txt", Some("real/a.txt")),
            file(".git/config", None),
            file("real/../.git/config", None),
            file(".env", None),
            file("/etc/passwd", None),
        ];
        let events = batches.search(&ws, files).unwrap().events;
        let kinds: Vec<(&str, &str)> = events
            .iter()
            .map(|e| {
                let kind = match &e.kind {
                    ShardEventKind::Searched(r) if r.count == 1 => "searched",
                    ShardEventKind::Skipped(s) if s.denied == 1 => "denied",
                    ShardEventKind::Problem((_, true)) => "problem",
                    other => panic!("{}: {other:?}", e.key),
                };
                (e.key.as_str(), kind)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("link/a.txt", "problem"),
                ("shown/a.txt", "searched"),
                (".git/config", "denied"),
                ("real/../.git/config", "problem"),
                (".env", "denied"),
                ("/etc/passwd", "problem"),
            ]
        );
    }
}
