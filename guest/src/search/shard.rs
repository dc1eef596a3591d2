//! Parallel search (the WIT's `parallel` interface): each instance reports
//! events in walk order for the files it searched; a merge replays them into
//! the page one instance would have made.

use std::time::Instant;

use super::Page;
use crate::confine::path_cmp;
use crate::cursor;
use crate::page::{self, Paging};
use crate::request::TextQuery;
use crate::walk::{self, Walker};
use crate::{SearchError, SearchTextRequest, SearchTextResponse, ShardResult, ShardStop, Workspace};

/// The page `search-text` returns, from the events of every shard: they are
/// replayed in walk order up to where the first stopped shard stopped (past
/// it, that shard's files are unknown).
pub fn merge_shards(
    ws: &Workspace,
    request: SearchTextRequest,
    shards: Vec<ShardResult>,
) -> Result<SearchTextResponse, SearchError> {
    let started = Instant::now();
    let mut warnings = Vec::new();
    let q = TextQuery::from_request(request, &mut warnings)?;
    let stream_key = ws.stream_key(q.stream_key());
    let resume = page::resume_from(&stream_key, q.cursor.as_deref())?;
    // (Instances that searched handed-out files had no index: the walk's says.)
    let index = shards.iter().map(|s| s.index).find(|i| *i != crate::IndexUse::None).unwrap_or(crate::IndexUse::None);
    let (mut events, cut) = in_walk_order(shards.into_iter().map(|s| (s.events, s.stopped)).collect(), |e| &e.key);
    // A walk that began before where the page resumes (the CLI's first two
    // pages share one) saw what a walk resumed there does not: the files
    // before it, and the one it ends, if done.
    if let Some(r) = &resume {
        let before = |key: &str| match path_cmp(key, &r.path) {
            std::cmp::Ordering::Equal => r.line == u64::MAX,
            order => order.is_lt(),
        };
        events.drain(..events.partition_point(|e| before(&e.key)));
    }
    let roots = Walker::new(ws, &q.walk)?.roots(&q.paths)?;
    let mut page = Page::new(std::rc::Rc::new(q), resume, warnings, walk::named_files(&roots));
    for event in events {
        if page.paging.stopped() {
            break;
        }
        page.accept(&event.key, event.kind);
    }
    stop_at(&mut page.paging, cut);
    let mut resp = page.finish(&stream_key, started);
    resp.stats.index = index;
    Ok(resp)
}

/// Refuses a shard that does not exist.
pub(crate) fn exists(index: u32, count: u32) -> Result<(), SearchError> {
    if count == 0 || index >= count {
        return Err(SearchError::InvalidArgument(format!("shard {index} of {count} does not exist")));
    }
    Ok(())
}

/// The events of every shard in walk order, as far as a merge may replay
/// them: up to where the first shard that stopped early stopped (past it,
/// that shard's files are unknown) — and that stop.
pub(crate) fn in_walk_order<E>(
    shards: Vec<(Vec<E>, Option<ShardStop>)>,
    key: impl Fn(&E) -> &String,
) -> (Vec<E>, Option<(String, ShardStop)>) {
    let cut = shards
        .iter()
        .filter_map(|(events, stopped)| Some((events.last().map_or(String::new(), |e| key(e).clone()), (*stopped)?)))
        .min_by(|a, b| path_cmp(&a.0, &b.0));
    let mut events = merged(shards.into_iter().map(|(events, _)| events).collect(), &key);
    if let Some((last, _)) = &cut {
        events.truncate(events.partition_point(|e| path_cmp(key(e), last).is_le()));
    }
    (events, cut)
}

/// The events of every shard in walk order; equal keys (shard 0's walk
/// events) keep their order, and those of an earlier shard come first.
/// Each shard's events come in walk order (an instance takes its batches in
/// order): they are merged, not sorted, unless one does not.
fn merged<E>(shards: Vec<Vec<E>>, key: impl Fn(&E) -> &String) -> Vec<E> {
    let in_order = |events: &Vec<E>| events.windows(2).all(|w| path_cmp(key(&w[0]), key(&w[1])).is_le());
    let total = shards.iter().map(Vec::len).sum();
    if !shards.iter().all(in_order) {
        let mut events: Vec<E> = shards.into_iter().flatten().collect();
        events.sort_by(|a, b| path_cmp(key(a), key(b)));
        return events;
    }
    let mut heads: Vec<_> = shards.into_iter().map(|s| s.into_iter().peekable()).collect();
    let mut events = Vec::with_capacity(total);
    loop {
        // The shard whose next event comes first (the earliest, on a tie).
        let mut first: Option<(usize, &String)> = None;
        for (i, head) in heads.iter_mut().enumerate() {
            if let Some(e) = head.peek() {
                if first.is_none_or(|(_, k)| path_cmp(key(e), k).is_lt()) {
                    first = Some((i, key(e)));
                }
            }
        }
        let Some((i, _)) = first else { return events };
        events.extend(heads[i].next());
    }
}

/// After a merge's replay: the page stops as the shard it was cut at
/// stopped, unless it stopped before.
pub(crate) fn stop_at(paging: &mut Paging, cut: Option<(String, ShardStop)>) {
    let Some((key, stop)) = cut.filter(|_| !paging.stopped()) else { return };
    match stop {
        ShardStop::TimedOut => {
            paging.time_out();
            paging.walked_to(&key);
        }
        ShardStop::PageFull => paging.cut(),
    }
}

/// Which shard of `count` searches the file at `rel` (structural search).
pub(crate) fn shard_of(rel: &str, count: u32) -> u32 {
    (cursor::fingerprint(rel) % u64::from(count)) as u32
}
