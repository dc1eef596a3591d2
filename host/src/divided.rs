//! A text search divided among instances that each walk a part of the tree
//! and search what they walk (the WIT's `walk-search`), as ripgrep's threads
//! divide a tree: no path crosses from one instance to another. One instance
//! begins the whole walk; an instance with nothing to do waits, and the next
//! call of one still walking asks it to hand the end of its part off. The
//! parts are runs of the walk order: each instance's, put in that order, is
//! one shard for `merge-shards`.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::bindings::exports::sandgrep::search::parallel::{ShardEvent, ShardResult, ShardStop, WalkPart};
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

/// What the instances of one search share.
#[derive(Default)]
struct Parts {
    /// Parts handed off, not taken yet.
    waiting: BTreeMap<Key, WalkPart>,
    /// Instances waiting for one.
    idle: usize,
    /// Parts being walked.
    running: usize,
    /// The results of each part so far, and whether it is over.
    tally: BTreeMap<Key, (u64, bool)>,
    /// No part after this one is needed, nor more of it when the page ends
    /// in what it searched (`true`): the first part an instance stopped in,
    /// or where the tally's page ends.
    cut: Option<(Key, bool)>,
    /// An instance failed, or the search cannot be divided: the others stop.
    over: bool,
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

    /// Once the parts, in walk order, up to one (in it as far as it went)
    /// gave more results than a page `takes`, the page ends in them.
    fn tally(&mut self, takes: u64) {
        let mut results = 0u64;
        let mut end = None;
        for (key, &(n, over)) in &self.tally {
            results = results.saturating_add(n);
            if results > takes {
                end = Some(key.clone());
                break;
            }
            if !over {
                break;
            }
        }
        if let Some(key) = end {
            self.cut_at(&key, true);
        }
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

/// One instance's parts: each one's events, by where it begins, and where
/// and why it stopped, if it did.
type Walked = (Vec<(Key, Vec<ShardEvent>)>, Option<(Key, ShardStop)>);

impl crate::Sandbox {
    /// `request` divided among `jobs` instances (see the module's comment):
    /// the shards for `merge-shards`, or `None` when the search cannot be
    /// divided (the first instance says so before it searches anything).
    pub(crate) fn divided(
        &self,
        timeout: Duration,
        request: &SearchTextRequest,
    ) -> Result<Option<Vec<ShardResult>>, Error> {
        let p = &self.guest_policy;
        let started = Instant::now();
        let parts = Mutex::new(Parts { running: 1, ..Parts::default() });
        let changed = Condvar::new();
        let lock = || parts.lock().unwrap_or_else(|e| e.into_inner());
        let whole = Key(String::new());
        lock().tally.insert(whole.clone(), (0, false));
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
        // One instance: the parts it walks and searches, the first given.
        let walk = |i: &bindings::Sandgrep,
                    s: &mut wasmtime::Store<engine::State>,
                    first: Option<(Key, Option<WalkPart>)>|
         -> wasmtime::Result<Result<Option<Walked>, SearchError>> {
            // However this instance ends (a panic included), none waits for it.
            let _ends = EndsOnDrop(&parts, &changed);
            let (mut walked, mut stopped): Walked = (Vec::new(), None);
            let mut begun = false;
            let mut next = first;
            while let Some((key, mut part)) = next.take().or_else(take) {
                let mut events = Vec::new();
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
                            lock().over = true;
                            changed.notify_all();
                            return failed.map(|r| r.map(|_| None));
                        }
                    };
                    if !r.divided {
                        lock().over = true;
                        changed.notify_all();
                        return Ok(Ok(None));
                    }
                    begun = true;
                    events.extend(r.events);
                    let mut parts = lock();
                    for given in r.given {
                        let at = Key::of(&given);
                        parts.tally.insert(at.clone(), (0, false));
                        parts.waiting.insert(at, given);
                        changed.notify_one();
                    }
                    if let Some(counted) = parts.tally.get_mut(&key) {
                        counted.0 = counted.0.saturating_add(r.results);
                        counted.1 |= r.done;
                    }
                    if let Some(stop) = r.stopped {
                        parts.cut_at(&key, false);
                        stopped = Some((key.clone(), stop));
                    }
                    parts.tally(r.page_takes);
                    if r.done || r.stopped.is_some() {
                        break;
                    }
                }
                walked.push((key, events));
                let mut parts = lock();
                parts.running -= 1;
                changed.notify_all();
                if stopped.is_some() {
                    break;
                }
            }
            Ok(Ok(Some((walked, stopped))))
        };
        let instances: Vec<Result<Option<Walked>, Error>> = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..self.jobs)
                .map(|_| {
                    scope.spawn(|| {
                        let r = self.helper_call(timeout, |i, s| walk(i, s, None));
                        if r.is_err() {
                            lock().over = true;
                            changed.notify_all();
                        }
                        r
                    })
                })
                .collect();
            let first = self.call(timeout, |i, s| walk(i, s, Some((whole.clone(), None))));
            if first.is_err() {
                lock().over = true;
                changed.notify_all();
            }
            let mut all = vec![first];
            all.extend(
                helpers
                    .into_iter()
                    .map(|t| t.join().unwrap_or_else(|_| Err(Error::Crashed("a search thread panicked".into())))),
            );
            all
        });
        let mut shards = Vec::with_capacity(instances.len());
        for instance in instances {
            // An instance that found the search cannot be divided (the root
            // swapped for a file as it began, say) stopped the others: one
            // walk handing files out searches it all again.
            let Some((mut walked, stopped)) = instance? else { return Ok(None) };
            // In walk order; past the part it stopped in, nothing counts
            // (the merge cuts where it stopped).
            walked.sort_by(|a, b| a.0.cmp(&b.0));
            if let Some((at, _)) = &stopped {
                walked.retain(|(key, _)| key <= at);
            }
            shards.push(ShardResult {
                events: walked.into_iter().flat_map(|(_, events)| events).collect(),
                stopped: stopped.map(|(_, stop)| stop),
                index: IndexUse::None,
                results: 0,
                page_takes: 0,
            });
        }
        Ok(Some(shards))
    }
}
