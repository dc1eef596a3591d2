//! Text search over instances that each walk a part of the tree and search
//! what they walk (the WIT's `walk-search`), as ripgrep's threads do: no
//! path crosses from one instance to another. The first instance begins the
//! whole walk; asked, an instance hands the end of its part off
//! ([`Walk::hand_off`]) for another to walk ([`Walker::walk_rest`]). A part
//! is a run of the walk order, so each part's events come in walk order and
//! [`super::merge_shards`] makes the page one instance would have made; each
//! part has a page of its own, so a part that fills a page alone fills the
//! whole page by then (its stop is where the merge cuts).

use std::cell::RefCell;
use std::rc::Rc;

use super::batch::push_event;
use super::{walk_event, Page, Searching};
use crate::walk::{self, Root, Skips, Step, Walk, Walker};
use crate::{page, session};
use crate::{SearchError, SearchTextRequest, ShardEvent, ShardEventKind, ShardStop, WalkPart, WalkSearched, Workspace};

/// An instance's search of the parts it is given.
struct Own {
    search: Searching,
    walker: Rc<Walker>,
    root: Root,
    /// The part walked now and its page.
    part: Option<(Walk, Page)>,
    /// Where the part begins, as a key (events before its first entry).
    start: String,
    /// The last entry walked in the part (events after it sort just after).
    last: Option<String>,
    /// Entries left out that events have counted so far.
    seen: Skips,
}

thread_local! {
    static OWN: RefCell<Option<Own>> = const { RefCell::new(None) };
}

/// The next events of the search of `request` in this instance's part (see
/// the WIT's `walk-search`).
pub fn walk_search(
    ws: &Workspace,
    request: SearchTextRequest,
    start: bool,
    part: Option<WalkPart>,
    max: u32,
    give: bool,
) -> Result<WalkSearched, SearchError> {
    OWN.with_borrow_mut(|kept| {
        if start || kept.is_none() {
            *kept = None;
            *kept = Own::new(ws, request)?;
        }
        let Some(own) = kept.as_mut() else { return Ok(nothing(false)) };
        if start || part.is_some() {
            own.begin(part);
        }
        Ok(own.next(max, give))
    })
}

impl Own {
    /// The search of `request`, if it can be divided: no index, no kept
    /// walk (a long-lived host replays one), no link followed (where one
    /// leads depends on the way there, so a walk under one hands nothing
    /// off), one root that is a directory, not reached through a link.
    fn new(ws: &Workspace, request: SearchTextRequest) -> Result<Option<Own>, SearchError> {
        let search = Searching::new(ws, request, true)?;
        if search.narrowing.is_some() || session::generation().is_some() || search.q.walk.follow_symlinks {
            return Ok(None);
        }
        let (walker, mut roots) = search.walk(ws)?;
        if roots.len() != 1 || !roots[0].is_dir || roots[0].through_link() {
            return Ok(None);
        }
        let root = roots.remove(0);
        Ok(Some(Own { search, walker, root, part: None, start: String::new(), last: None, seen: Skips::default() }))
    }

    /// Begins `part` (none: the whole walk) with a page of its own.
    fn begin(&mut self, part: Option<WalkPart>) {
        let after = self.search.resume.as_ref().map(|r| r.path.as_str());
        let walk = match &part {
            // (What the walker counted before it began, it counts too.)
            None => self.walker.walk(&self.root, after),
            Some(p) => {
                self.seen = self.walker.skips();
                self.walker.walk_rest(&self.root, p, after)
            }
        };
        let page = self.search.page(std::slice::from_ref(&self.root));
        self.part = Some((walk, page));
        self.start = part.map_or(String::new(), |p| walk::join(&p.dir, &p.first));
        self.last = None;
    }

    /// Walks and searches on in the part: at most `max` files (asked to
    /// give with none: hands off all that is left of it instead).
    fn next(&mut self, max: u32, give: bool) -> WalkSearched {
        let mut out = nothing(true);
        if give && max == 0 {
            let all = self.part.take().and_then(|(mut walk, _)| walk.hand_off_all());
            out.done = all.is_some();
            out.given = all.unwrap_or_default();
            return out;
        }
        let Some((walk, page)) = self.part.as_mut() else { return out };
        out.done = false;
        let before = page.paging.taken();
        let mut files = 0;
        while !page.paging.stopped() && files < max.max(1) {
            let item = walk.next();
            // Entries left out since the last step: before it.
            let skips = self.walker.skips();
            if skips != self.seen {
                let anchor = anchor(&self.start, self.last.as_deref());
                out.events
                    .push(ShardEvent { key: anchor, kind: ShardEventKind::Skipped(skips.since(self.seen).wit()) });
                self.seen = skips;
            }
            match item {
                Some(Ok(entry)) => {
                    if entry.is_file {
                        files += 1;
                        if let Some(kind) = self.search.file(page, &entry) {
                            push_event(&mut out.events, &entry.rel, &kind);
                            page.accept(&entry.rel, kind);
                        }
                    }
                    self.last = Some(entry.rel);
                }
                Some(Err(e)) => {
                    let key = anchor(&self.start, self.last.as_deref());
                    out.events.push(ShardEvent { key, kind: walk_event(&Step::Problem(e)) });
                }
                None => {
                    if walk.timed_out() {
                        let key = anchor(&self.start, self.last.as_deref());
                        out.events.push(ShardEvent { key, kind: walk_event(&Step::TimedOut) });
                        page.paging.time_out();
                    }
                    out.done = true;
                    break;
                }
            }
        }
        out.stopped = if page.paging.done() {
            Some(ShardStop::PageFull)
        } else {
            page.paging.timed_out().then_some(ShardStop::TimedOut)
        };
        (out.results, out.page_takes) = (page.paging.taken() - before, page.paging.takes());
        if give && !out.done && out.stopped.is_none() {
            out.given = walk.hand_off();
        }
        // (A part whose page is full may still be handed off.)
        if out.done || page.paging.timed_out() {
            self.part = None;
        }
        out
    }
}

/// An answer with nothing in it: the part over (or, not `divided`, no
/// part at all).
fn nothing(divided: bool) -> WalkSearched {
    WalkSearched {
        events: Vec::new(),
        given: Vec::new(),
        done: true,
        stopped: None,
        results: 0,
        page_takes: 0,
        divided,
    }
}

/// The key of events after the entry `last` of a part that begins at
/// `start` (before its first entry: `start`).
fn anchor(start: &str, last: Option<&str>) -> String {
    match last {
        Some(rel) => {
            let mut key = String::new();
            page::walk_anchor(&mut key, rel);
            key
        }
        None => start.to_string(),
    }
}
