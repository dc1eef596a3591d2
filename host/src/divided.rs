//! A text search divided among instances that each walk a part of the tree
//! and search what they walk (the WIT's `walk-search`), as ripgrep's threads
//! divide a tree: no path crosses from one instance to another. One instance
//! begins the whole walk; an instance with nothing to do waits, and the next
//! call of one still walking asks it to hand the end of its part off. The
//! parts are runs of the walk order: put in that order, they are one shard
//! for `merge-shards`.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::bindings::exports::sandgrep::search::parallel::{
    ShardEvent, ShardEventKind, ShardResult, ShardStop, WalkPart,
};
use crate::{bindings, engine, Error, IndexUse, SearchError, SearchTextRequest};

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
    /// An instance failed, or the search cannot be divided: the others stop.
    over: bool,
    /// What is past the page's end is kept for the next page (see
    /// [`Walked::carry`]), and so far it can be.
    kept: bool,
}

impl Parts {
    /// Whether the part at `key` is needed no further.
    fn cut_off(&self, key: &Key) -> bool {
        self.over || self.cut.as_ref().is_some_and(|(cut, ends)| key > cut || (*ends && key == cut))
    }

    /// The first part waiting to be walked, unless the page needs none.
    fn next_waiting(&self) -> Option<Key> {
        self.waiting.first_key_value().map(|(key, _)| key.clone()).filter(|key| !self.cut_off(key))
    }

    /// Parts handed off: to be walked.
    fn hand_off(&mut self, given: Vec<WalkPart>) {
        for part in given {
            let at = Key::of(&part);
            self.parts.insert(at.clone(), Part::default());
            self.waiting.insert(at, part);
        }
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

/// What the walk of one page of a stream leaves for the next page's (see
/// [`crate::Sandbox::search_text_stream`]): the parts walked past the
/// page's end, each over as far as its events go, and the parts not walked
/// yet. The next page's instances walk only those.
pub(crate) struct Carry {
    parts: BTreeMap<Key, Part>,
    waiting: BTreeMap<Key, WalkPart>,
}

impl Carry {
    /// The files whose events the next page cannot take as they are: the
    /// one the page ended in (`ended_in`: a walk resumed there searches it
    /// from the cursor), and the last file of a part that stopped with a
    /// full page of its own (its results were cut).
    pub(crate) fn searched_again(&self, ended_in: Option<&str>) -> Vec<String> {
        let mut again: Vec<String> = ended_in.map(str::to_string).into_iter().collect();
        for part in self.parts.values().filter(|p| p.stop.is_some()) {
            let last = part.events.iter().rev().find(|e| matches!(e.kind, ShardEventKind::Searched(_)));
            again.extend(last.map(|e| e.key.clone()).filter(|k| !again.contains(k)));
        }
        again.retain(|path| self.parts.values().any(|p| p.events.iter().any(|e| e.key == *path)));
        again
    }

    /// Puts `events`, the search of `path` again, in place of its event.
    pub(crate) fn replace(&mut self, path: &str, events: Vec<ShardEvent>) {
        for part in self.parts.values_mut() {
            if let Some(at) = part.events.iter().position(|e| e.key == path) {
                part.events.splice(at..=at, events);
                part.stop = None;
                return;
            }
        }
    }
}

/// A divided search's parts once its instances are done.
pub(crate) struct Walked {
    parts: BTreeMap<Key, Part>,
    waiting: BTreeMap<Key, WalkPart>,
    cut: Option<(Key, bool)>,
    /// Asked to keep what is past the page's end, it could: every part not
    /// over was handed off whole (`waiting`), none stopped by time.
    kept: bool,
}

impl Walked {
    /// The events of the parts in walk order up to the cut (the first an
    /// instance stopped in, or where the page ends), for `merge-shards`. A
    /// page that, merged, does not fill by then (one cut by its page-end
    /// file's change since it was searched, say) ends there too: past it
    /// the parts are not known.
    pub(crate) fn shard(&self) -> ShardResult {
        let mut shard = nothing();
        for (key, part) in &self.parts {
            shard.events.extend(part.events.iter().cloned());
            if self.cut.as_ref().is_some_and(|(cut, _)| cut == key) {
                shard.stopped = Some(part.stop.unwrap_or(ShardStop::PageFull));
                break;
            }
        }
        shard
    }

    /// What the next page, which resumes in or after the file `at` (the
    /// page's last result is in it), can take from this walk: the part
    /// `at` is in and those after it.
    pub(crate) fn carry(self, at: &str) -> Option<Carry> {
        if !self.kept {
            return None;
        }
        let mut parts = self.parts;
        let from = parts.range(..=Key(at.to_string())).next_back()?.0.clone();
        let mut parts = parts.split_off(&from);
        // (What the part gave the page it ended in is not known here: the
        // next page counts none of it, so it may walk on past its own end,
        // never stop short of it.)
        parts.values_mut().next()?.results = 0;
        Some(Carry { parts, waiting: self.waiting })
    }
}

impl crate::Sandbox {
    /// `request` divided among `jobs` instances (see the module's comment),
    /// or `None` when the search cannot be divided (the first instance says
    /// so before it searches anything). From `carry`, only what the page
    /// before left is walked. With `keep`, what is past the page's end is
    /// kept for the next page: the instances hand off what is left of the
    /// parts they end in.
    pub(crate) fn divided(
        &self,
        timeout: Duration,
        request: &SearchTextRequest,
        carry: Option<Carry>,
        keep: bool,
    ) -> Result<Option<Walked>, Error> {
        let p = &self.guest_policy;
        let started = Instant::now();
        let whole = Key(String::new());
        // The first instance begins the whole walk, unless the page before
        // left parts to walk.
        let (parts, first) = match carry {
            Some(c) => (Parts { parts: c.parts, waiting: c.waiting, ..Parts::default() }, None),
            None => {
                let mut parts = Parts { running: 1, ..Parts::default() };
                parts.parts.insert(whole.clone(), Part::default());
                (parts, Some((whole, None)))
            }
        };
        let parts = Mutex::new(Parts { kept: keep, ..parts });
        let changed = Condvar::new();
        let lock = || parts.lock().unwrap_or_else(|e| e.into_inner());
        // The next part for an instance: waits while others still walk.
        let take = || {
            let mut parts = lock();
            loop {
                if let Some(key) = parts.next_waiting() {
                    let part = parts.waiting.remove(&key);
                    parts.running += 1;
                    return Some((key, part));
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
                    first: Option<(Key, Option<WalkPart>)>|
         -> wasmtime::Result<Result<bool, SearchError>> {
            // However this instance ends (a panic included), none waits for it.
            let _ends = EndsOnDrop(&parts, &changed);
            let stop = || {
                lock().over = true;
                changed.notify_all();
            };
            let mut begun = false;
            let mut timed_out = false;
            let mut next = first;
            while let Some((key, mut part)) = next.take().or_else(take) {
                let (mut done, mut stopped) = (false, false);
                loop {
                    let give = {
                        let parts = lock();
                        if parts.cut_off(&key) {
                            break;
                        }
                        parts.idle > 0 && parts.next_waiting().is_none()
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
                    done = r.done;
                    let mut parts = lock();
                    parts.hand_off(r.given);
                    changed.notify_all();
                    let ours = parts.parts.entry(key.clone()).or_default();
                    ours.events.extend(r.events);
                    ours.results = ours.results.saturating_add(r.results);
                    ours.over |= r.done;
                    if let Some(stop) = r.stopped {
                        ours.stop = Some(stop);
                        parts.cut_at(&key, false);
                        parts.kept &= stop == ShardStop::PageFull;
                        timed_out = stop == ShardStop::TimedOut;
                        stopped = true;
                    }
                    if let Some(end) = parts.page_end(r.page_takes) {
                        parts.cut_at(&end, true);
                    }
                    if r.done || stopped {
                        break;
                    }
                }
                // What is left of a part the page ended before, for the next
                // page: all of it handed off (not begun: as it was).
                if let Some(part) = part.take() {
                    lock().waiting.insert(key.clone(), part);
                } else if !done && begun && lock().kept {
                    let call = i.sandgrep_search_parallel().call_walk_search(&mut *s, request, p, false, None, 0, true);
                    let r = match call {
                        Ok(Ok(r)) => r,
                        failed => {
                            stop();
                            return failed.map(|r| r.map(|_| false));
                        }
                    };
                    let mut parts = lock();
                    parts.kept &= r.done;
                    parts.hand_off(r.given);
                    let ours = parts.parts.entry(key.clone()).or_default();
                    ours.events.extend(r.events);
                    ours.over |= r.done;
                }
                let mut parts = lock();
                parts.running -= 1;
                changed.notify_all();
                // (A part with a full page of its own ends the page there,
                // but parts before it may still be walking.)
                if timed_out {
                    break;
                }
            }
            Ok(Ok(true))
        };
        let instances: Vec<Result<bool, Error>> = std::thread::scope(|scope| {
            let (walk, changed) = (&walk, &changed);
            let threads: Vec<_> = (0..self.jobs)
                .map(|n| {
                    let first = if n == 0 { first.clone() } else { None };
                    scope.spawn(move || {
                        let r = if n == 0 {
                            self.call(timeout, |i, s| walk(i, s, first.clone()))
                        } else {
                            self.helper_call(timeout, |i, s| walk(i, s, None))
                        };
                        if r.is_err() {
                            lock().over = true;
                            changed.notify_all();
                        }
                        r
                    })
                })
                .collect();
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
        let parts = parts.into_inner().unwrap_or_else(|e| e.into_inner());
        let kept = parts.kept && !parts.over;
        Ok(Some(Walked { parts: parts.parts, waiting: parts.waiting, cut: parts.cut, kept }))
    }
}

/// A shard with no events.
fn nothing() -> ShardResult {
    ShardResult { events: Vec::new(), stopped: None, index: IndexUse::None, results: 0, page_takes: 0 }
}
