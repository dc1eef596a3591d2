//! Keeping a long-lived server's index fresh (SPEC §6): built in the
//! background when it is missing, refreshed after files change, as a
//! filesystem watcher (`notify`) reports them. Calls never wait for it: a
//! search checks every file's size and times against the index and reads
//! what changed, so a stale index costs speed, never a different answer.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use crate::Sandbox;

/// How long the tree must be quiet before a refresh: past the time in which
/// the index distrusts a file's times, so what it reads then it can trust.
const QUIET: Duration = Duration::from_millis(crate::limits::INDEX_QUIET_MS);
const _: () = assert!(crate::limits::INDEX_QUIET_MS > crate::limits::INDEX_RACY_MS);
/// Without a watcher (none available, or too many directories to watch).
const POLL: Duration = Duration::from_secs(300);

/// While alive, keeps the index of its sandbox's workspace fresh.
pub struct IndexKeeper {
    _watcher: Option<notify::RecommendedWatcher>,
}

/// Starts keeping `sandbox`'s index fresh, when indexing is on.
pub fn keep_fresh(sandbox: Sandbox) -> Option<IndexKeeper> {
    let own = sandbox.index_path()?.to_path_buf();
    let (tx, rx) = mpsc::channel::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // The index's own writes (should the cache sit inside the workspace) are no change.
        if event.is_ok_and(|e| !e.paths.iter().all(|p| p.starts_with(&own))) {
            let _ = tx.send(());
        }
    })
    .ok();
    if let Some(w) = watcher.as_mut() {
        if w.watch(sandbox.workspace(), RecursiveMode::Recursive).is_err() {
            watcher = None;
        }
    }
    let polling = watcher.is_none();
    std::thread::Builder::new()
        .name("sandgrep-index".into())
        .spawn(move || {
            let _ = sandbox.refresh_index();
            loop {
                match rx.recv_timeout(if polling { POLL } else { Duration::MAX }) {
                    Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) if polling => std::thread::sleep(POLL),
                    Err(RecvTimeoutError::Disconnected) => return,
                }
                // The rest of the burst.
                while let Ok(()) = rx.recv_timeout(QUIET) {}
                let _ = sandbox.refresh_index();
            }
        })
        .ok()?;
    Some(IndexKeeper { _watcher: watcher })
}
