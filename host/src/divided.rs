//! A text search divided among instances that each walk a part of the tree
//! and search what they walk (the WIT's `walk-search`), as ripgrep's threads
//! divide a tree: no path crosses from one instance to another. One instance
//! begins the whole walk; an instance with nothing to do waits, and the next
//! call of one still walking asks it to hand the end of its part off. The
//! parts are runs of the walk order: put in that order, they are one shard
//! for `merge-shards`.

use std::collections::BTreeMap;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::bindings::exports::sandgrep::search::parallel::{ShardEvent, ShardResult, ShardStop, WalkPart};
use crate::limits::MAX_RESULTS;
use crate::{bindings, engine, Error, IndexUse, SearchError, SearchTextRequest, SearchTextResponse};

/// Files an instance searches in one call: few enough that one waiting
/// for a part of its own gets one soon. A call asked to hand a part off
/// searches one file and gives.
const FILES_PER_CALL: u32 = 32;

/// Where a part begins, ordered as the walk is.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Key(String);

impl Ord for Key {
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        sandgrep_contract::path_cmp(&self.0, &other.0)
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Key {
    fn of(part: &WalkPart) -> Key {
        Key(if part.dir == "." { part.first.clone() } else { format!("{}/{}", part.dir, part.first) })
    }
}

/// What is known of one part: its events so far, the results they gave the
/// page, whether it is over, and why its instance stopped in it.
#[derive(Default)]
struct Part {
    events: Vec<ShardEvent>,
    results: u64,
    over: bool,
    stop: Option<ShardStop>,
}

/// What the instances of one search share.
#[derive(Default)]
struct Parts {
    /// Parts handed off, not taken yet.
    waiting: BTreeMap<Key, WalkPart>,
    /// Instances waiting for one.
    idle: usize,
    /// Parts being walked.
    running: usize,
    /// Every part begun or handed off, by where it begins.
    parts: BTreeMap<Key, Part>,
    /// No part after this one is needed, nor more of it when the page ends
    /// in what it searched (`true`): the first part an instance stopped in,
    /// or where the page ends.
    cut: Option<(Key, bool)>,
    /// An instance failed, the search cannot be divided, or the reader of
    /// the first page wants no more of it: the others stop.
    over: bool,
    /// The first page was merged to be shown (or is not wanted).
    shown: bool,
}

impl Parts {
    /// Whether the part at `key` is needed no further.
    fn cut_off(&self, key: &Key) -> bool {
        self.over || self.cut.as_ref().is_some_and(|(cut, ends)| key > cut || (*ends && key == cut))
    }

    fn cut_at(&mut self, key: &Key, ends: bool) {
        if self.cut.as_ref().is_none_or(|(cut, _)| key < cut) {
            self.cut = Some((key.clone(), ends));
        }
    }

    /// Where a page that takes `takes` results ends, once the parts in walk
    /// order up to one (in it as far as it went) gave more.
    fn page_end(&self, takes: u64) -> Option<Key> {
        let mut results = 0u64;
        for (key, part) in &self.parts {
            results = results.saturating_add(part.results);
            if results > takes {
                return Some(key.clone());
            }
            if !part.over {
                return None;
            }
        }
        None
    }
}

/// A first page shown as soon as the walk order holds it, from a search
/// that goes on to the page after it.
pub(crate) struct First<'a> {
    /// The first page's request (the search's asks for it and the next).
    pub(crate) request: &'a SearchTextRequest,
    /// Shows the first page; whether the search goes on.
    pub(crate) show: &'a mut dyn FnMut(SearchTextResponse) -> bool,
}

/// Stops every instance when dropped in a panic (none waits for a part
/// the panicking one would have handed off).
struct EndsOnDrop<'a>(&'a Mutex<Parts>, &'a Condvar);

impl Drop for EndsOnDrop<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().unwrap_or_else(|e| e.into_inner()).over = true;
            self.1.notify_all();
        }
    }
}

/// The events of a divided search for `merge-shards`, in walk order; and,
/// if a first page was shown, whether its reader wants the page after it.
pub(crate) type Divided = (ShardResult, Option<bool>);

impl crate::Sandbox {
    /// `request` divided among `jobs` instances (see the module's comment),
    /// or `None` when the search cannot be divided (the first instance says
    /// so before it searches anything). With `first`, its page is shown as
    /// soon as the parts in walk order hold it, and the search goes on to
    /// the end of `request`'s, which holds it and the page after it.
    pub(crate) fn divided(
        &self,
        timeout: Duration,
        request: &SearchTextRequest,
        mut first: Option<First<'_>>,
    ) -> Result<Option<Divided>, Error> {
        let p = &self.guest_policy;
        let started = Instant::now();
        let whole = Key(String::new());
        let parts = Mutex::new(Parts { running: 1, shown: first.is_none(), ..Parts::default() });
        let changed = Condvar::new();
        let lock = || parts.lock().unwrap_or_else(|e| e.into_inner());
        lock().parts.insert(whole.clone(), Part::default());
        // The first page's request (`request` asks for both pages: the
        // guest's `page-takes` count them together).
        let first_request = first.as_ref().map(|f| f.request);
        let max = |r: &SearchTextRequest| r.max_results.map_or(MAX_RESULTS.default, u64::from);
        // The next part for an instance: waits while others still walk.
        let take = || {
            let mut parts = lock();
            loop {
                while let Some((key, part)) = parts.waiting.pop_first() {
                    if !parts.cut_off(&key) {
                        parts.running += 1;
                        return Some((key, Some(part)));
                    }
                }
                if parts.running == 0 || parts.over {
                    return None;
                }
                parts.idle += 1;
                parts = changed.wait(parts).unwrap_or_else(|e| e.into_inner());
                parts.idle -= 1;
            }
        };
        // One instance: the parts it walks and searches, the first given;
        // whether the search could be divided.
        let walk = |i: &bindings::Sandgrep,
                    s: &mut wasmtime::Store<engine::State>,
                    first: Option<(Key, Option<WalkPart>)>,
                    shown: &Sender<SearchTextResponse>|
         -> wasmtime::Result<Result<bool, SearchError>> {
            // However this instance ends (a panic included), none waits for it.
            let _ends = EndsOnDrop(&parts, &changed);
            let stop = || {
                lock().over = true;
                changed.notify_all();
            };
            let mut begun = false;
            let mut stopped = false;
            let mut next = first;
            while let Some((key, mut part)) = next.take().or_else(take) {
                loop {
                    let give = {
                        let parts = lock();
                        if parts.cut_off(&key) {
                            break;
                        }
                        parts.idle > 0 && parts.waiting.is_empty()
                    };
                    // An instance that starts late has what is left of the time.
                    let late;
                    let asked = if begun {
                        request
                    } else {
                        let left = timeout.saturating_sub(started.elapsed()).as_millis().clamp(1, u32::MAX.into());
                        late = SearchTextRequest { timeout_ms: Some(left as u32), ..request.clone() };
                        &late
                    };
                    let call = i.sandgrep_search_parallel().call_walk_search(
                        &mut *s,
                        asked,
                        p,
                        !begun,
                        part.take().as_ref(),
                        if give { 1 } else { FILES_PER_CALL },
                        give,
                    );
                    let r = match call {
                        Ok(Ok(r)) => r,
                        failed => {
                            stop();
                            return failed.map(|r| r.map(|_| false));
                        }
                    };
                    if !r.divided {
                        stop();
                        return Ok(Ok(false));
                    }
                    begun = true;
                    let mut parts = lock();
                    for given in r.given {
                        let at = Key::of(&given);
                        parts.parts.insert(at.clone(), Part::default());
                        parts.waiting.insert(at, given);
                        changed.notify_one();
                    }
                    let ours = parts.parts.entry(key.clone()).or_default();
                    ours.events.extend(r.events);
                    ours.results = ours.results.saturating_add(r.results);
                    ours.over |= r.done;
                    if let Some(stop) = r.stopped {
                        ours.stop = Some(stop);
                        parts.cut_at(&key, false);
                        stopped = true;
                    }
                    if let Some(end) = parts.page_end(r.page_takes) {
                        parts.cut_at(&end, true);
                    }
                    // The first page, once the parts up to where it ends are
                    // known and no stop comes before that.
                    let page = match first_request.filter(|_| !parts.shown && !parts.over) {
                        Some(asked) => {
                            let end = parts.page_end(r.page_takes.saturating_sub(max(request)) + max(asked));
                            end.filter(|end| parts.cut.as_ref().is_none_or(|(cut, _)| cut >= end)).map(|end| {
                                let events = parts.parts.range(..=end).flat_map(|(_, p)| p.events.iter().cloned());
                                (asked, ShardResult { events: events.collect(), ..nothing() })
                            })
                        }
                        None => None,
                    };
                    parts.shown |= page.is_some();
                    drop(parts);
                    if let Some((asked, shard)) = page {
                        match i.sandgrep_search_parallel().call_merge_shards(&mut *s, asked, p, &[shard]) {
                            Ok(Ok(page)) => _ = shown.send(page),
                            failed => {
                                stop();
                                return failed.map(|r| r.map(|_| false));
                            }
                        }
                    }
                    if r.done || stopped {
                        break;
                    }
                }
                let mut parts = lock();
                parts.running -= 1;
                changed.notify_all();
                if stopped {
                    break;
                }
            }
            Ok(Ok(true))
        };
        let (shown, pages) = channel();
        let mut wants = None;
        let instances: Vec<Result<bool, Error>> = std::thread::scope(|scope| {
            let (walk, whole, changed) = (&walk, &whole, &changed);
            let threads: Vec<_> = (0..self.jobs)
                .map(|n| {
                    let shown = shown.clone();
                    scope.spawn(move || {
                        let r = if n == 0 {
                            self.call(timeout, |i, s| walk(i, s, Some((whole.clone(), None)), &shown))
                        } else {
                            self.helper_call(timeout, |i, s| walk(i, s, None, &shown))
                        };
                        if r.is_err() {
                            lock().over = true;
                            changed.notify_all();
                        }
                        r
                    })
                })
                .collect();
            drop(shown);
            // The first page, shown on this thread as the instances go on.
            for mut page in pages {
                if let Some(first) = first.as_mut() {
                    page.stats.elapsed_ms = started.elapsed().as_millis() as u64;
                    let go_on = (first.show)(page);
                    wants = Some(go_on);
                    if !go_on {
                        lock().over = true;
                        changed.notify_all();
                    }
                }
            }
            threads
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|_| Err(Error::Crashed("a search thread panicked".into()))))
                .collect()
        });
        for instance in instances {
            // An instance that found the search cannot be divided (the root
            // swapped for a file as it began, say) stopped the others: one
            // walk handing files out searches it all again.
            if !instance? {
                return Ok(None);
            }
        }
        // The parts in walk order up to the cut: the first an instance
        // stopped in, or where the page ends (a page that, merged, does not
        // fill by then, as one cut by its page-end file's change since it
        // was searched, ends there too: past it the parts are not known).
        let parts = parts.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut shard = nothing();
        for (key, part) in parts.parts {
            shard.events.extend(part.events);
            if let Some((cut, _)) = parts.cut.as_ref().filter(|(cut, _)| *cut == key) {
                shard.stopped = Some(part.stop.unwrap_or(ShardStop::PageFull));
                debug_assert!(cut == &key);
                break;
            }
        }
        Ok(Some((shard, wants)))
    }
}

/// A shard with no events.
fn nothing() -> ShardResult {
    ShardResult { events: Vec::new(), stopped: None, index: IndexUse::None, results: 0, page_takes: 0 }
}
