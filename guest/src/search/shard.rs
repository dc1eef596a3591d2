//! Parallel search (the WIT's `parallel` interface): each instance searches
//! the files of its shard and reports events in walk order; a merge replays
//! them into the page one instance would have made.

use std::time::Instant;

use super::{run, Page};
use crate::cursor;
use crate::page;
use crate::request::TextQuery;
use crate::walk::{self, Walker};
use crate::{SearchError, SearchTextRequest, SearchTextResponse, ShardEvent, ShardResult, ShardStop, Workspace};

/// Searches the files of shard `index` of `count` (by a hash of their path)
/// and reports every event in walk order, for [`merge_shards`].
pub fn search_shard(
    ws: &Workspace,
    request: SearchTextRequest,
    index: u32,
    count: u32,
) -> Result<ShardResult, SearchError> {
    if count == 0 || index >= count {
        return Err(SearchError::InvalidArgument(format!("shard {index} of {count} does not exist")));
    }
    run(ws, request, Some((index, count))).map(|(_, shard)| shard)
}

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
    let cut = shards
        .iter()
        .filter_map(|s| Some((s.events.last().map_or(String::new(), |e| e.key.clone()), s.stopped?)))
        .min_by(|a, b| a.0.cmp(&b.0));
    let index = shards.first().map_or(crate::IndexUse::None, |s| s.index);
    let mut events: Vec<ShardEvent> = shards.into_iter().flat_map(|s| s.events).collect();
    // Stable: equal keys (shard 0's walk events) keep their order.
    events.sort_by(|a, b| a.key.cmp(&b.key));
    let roots = Walker::new(ws, &q.walk)?.roots(&q.paths)?;
    let mut page = Page::new(&q, resume, warnings, walk::named_files(&roots));
    for event in events {
        if cut.as_ref().is_some_and(|(key, _)| event.key > *key) || page.paging.stopped() {
            break;
        }
        page.accept(&event.key, event.kind);
    }
    if let Some((key, stop)) = cut {
        if !page.paging.stopped() {
            match stop {
                ShardStop::TimedOut => {
                    page.paging.time_out();
                    page.paging.walked_to(&key);
                }
                ShardStop::PageFull => page.paging.cut(),
            }
        }
    }
    let mut resp = page.finish(&stream_key, started);
    resp.stats.index = index;
    Ok(resp)
}

/// Which shard of `count` searches the file at `rel`.
pub(crate) fn shard_of(rel: &str, count: u32) -> u32 {
    (cursor::fingerprint(rel) % u64::from(count)) as u32
}
