//! Keeping a long-lived server's index fresh (SPEC §6): built in the
//! background when it is missing, refreshed after files change, as a
//! filesystem watcher (`notify`) reports them.
//!
//! Calls never wait for a refresh. While the watcher has seen no change
//! since a refresh began, a call tells its kept instance so
//! (`unchanged-since`), and the instance answers from the index and the
//! walk it remembers, without a look at the tree; otherwise the call walks
//! and checks every file's size and times against the index, so a stale
//! index costs speed, never a different answer. Before each call the host
//! makes sure the watcher has handed over every event queued before it (a
//! file created and removed in the index directory, watched by the same
//! inotify instance, comes out behind them): a change made before a call
//! starts is in its answer. Only where that ordering holds (Linux's inotify)
//! is a call ever told the tree is unchanged.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecursiveMode, Watcher};

use crate::engine::dir_identity;
use crate::Sandbox;

/// How long the tree must be quiet before a refresh: past the time in which
/// the index distrusts a file's times, so what it reads then it can trust.
const QUIET: Duration = Duration::from_millis(crate::limits::INDEX_QUIET_MS);
const _: () = assert!(crate::limits::INDEX_QUIET_MS > crate::limits::INDEX_RACY_MS);
/// Without a watcher (none available, or too many directories to watch).
const POLL: Duration = Duration::from_secs(300);
/// How long a call waits for the watcher to catch up before it checks the
/// tree itself.
const SETTLE: Duration = Duration::from_millis(200);
const BARRIER: &str = ".barrier-";

/// While alive, keeps the index of its sandbox's workspace fresh.
pub struct IndexKeeper {
    _watcher: Option<notify::RecommendedWatcher>,
}

/// What the watcher has seen, for the calls to ask.
struct Watch {
    dir: PathBuf,
    seen: Mutex<Seen>,
    arrived: Condvar,
    tickets: AtomicU64,
    /// Whether the watcher covers the whole workspace, in order.
    exact: AtomicBool,
    /// The workspace, and which directory it was when the watch began: a
    /// workspace removed and made again is one the watcher no longer sees.
    root: PathBuf,
    root_id: Option<(u64, u64)>,
}

#[derive(Default)]
struct Seen {
    /// Changes the watcher has reported.
    changes: u64,
    /// The highest barrier ticket that came through.
    barrier: u64,
    /// The last refresh that succeeded: its number, and the change count
    /// when it began.
    refreshed: Option<(u64, u64)>,
}

impl Watch {
    /// Waits until every event queued before now has been handed over.
    fn settle(&self) -> bool {
        if self.exact.load(Ordering::Relaxed) && dir_identity(&self.root) != self.root_id {
            self.exact.store(false, Ordering::Relaxed);
        }
        if !self.exact.load(Ordering::Relaxed) {
            return false;
        }
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed) + 1;
        let marker = self.dir.join(format!("{BARRIER}{ticket}"));
        if std::fs::File::create(&marker).is_err() {
            return false;
        }
        let _ = std::fs::remove_file(&marker);
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let (seen, wait) =
            self.arrived.wait_timeout_while(seen, SETTLE, |s| s.barrier < ticket).unwrap_or_else(|e| e.into_inner());
        drop(seen);
        !wait.timed_out()
    }

    /// The refresh the workspace is unchanged since, if the watcher can
    /// vouch for it.
    fn unchanged_since(&self) -> Option<u64> {
        if !self.settle() {
            return None;
        }
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.refreshed.filter(|&(_, at)| at == seen.changes).map(|(number, _)| number)
    }

    fn changes(&self) -> u64 {
        self.settle();
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).changes
    }

    fn refreshed(&self, began_at: u64) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let number = seen.refreshed.map_or(1, |(n, _)| n + 1);
        seen.refreshed = Some((number, began_at));
    }

    /// Takes in one event from the watcher; whether it is a change.
    fn event(&self, event: notify::Result<notify::Event>) -> bool {
        let Ok(event) = event else {
            // A lost or overflowed queue: anything may have changed.
            self.seen.lock().unwrap_or_else(|e| e.into_inner()).changes += 1;
            return true;
        };
        let ticket = event.paths.iter().find_map(|p| {
            let name = p.strip_prefix(&self.dir).ok()?.to_str()?;
            name.strip_prefix(BARRIER)?.parse::<u64>().ok()
        });
        if let Some(ticket) = ticket {
            if event.kind.is_create() {
                let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
                seen.barrier = seen.barrier.max(ticket);
                self.arrived.notify_all();
            }
            return false;
        }
        // Opening and reading (the searches' own) change nothing; the
        // index's own writes are no change of the workspace.
        let read = matches!(event.kind, EventKind::Access(a) if a != AccessKind::Close(AccessMode::Write));
        if read || event.paths.iter().all(|p| p.starts_with(&self.dir)) && !event.paths.is_empty() {
            return false;
        }
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).changes += 1;
        true
    }
}

/// Starts keeping `sandbox`'s index fresh, when indexing is on: the sandbox
/// its calls should go through (one that keeps an instance and asks the
/// watcher), and the keeper to hold while they do.
pub fn keep_fresh(sandbox: Sandbox) -> (Sandbox, Option<IndexKeeper>) {
    let Some(dir) = sandbox.index_path().map(Path::to_path_buf) else { return (sandbox, None) };
    // The directory must exist to be watched (the lock creates it, 0700).
    if crate::lock_index_dir(&dir).is_err() {
        return (sandbox, None);
    }
    let watch = Arc::new(Watch {
        dir: dir.clone(),
        seen: Mutex::default(),
        arrived: Condvar::new(),
        tickets: AtomicU64::new(0),
        exact: AtomicBool::new(false),
        root: sandbox.workspace().to_path_buf(),
        root_id: dir_identity(sandbox.workspace()),
    });
    let (tx, rx) = mpsc::channel::<()>();
    let mut watcher = {
        let watch = watch.clone();
        notify::recommended_watcher(move |event| {
            if watch.event(event) {
                let _ = tx.send(());
            }
        })
        .ok()
    };
    if let Some(w) = watcher.as_mut() {
        if w.watch(sandbox.workspace(), RecursiveMode::Recursive).is_err()
            || w.watch(&dir, RecursiveMode::NonRecursive).is_err()
        {
            watcher = None;
        }
    }
    let mut polling = watcher.is_none();
    // Events of one inotify instance come out in the order they happened.
    watch.exact.store(!polling && cfg!(target_os = "linux"), Ordering::Relaxed);
    let refresher = sandbox.clone();
    let keeping = watch.clone();
    let started = std::thread::Builder::new().name("sandgrep-index".into()).spawn(move || {
        let refresh = || {
            let began_at = keeping.changes();
            if refresher.refresh_index().is_ok() {
                keeping.refreshed(began_at);
            }
        };
        refresh();
        // Files written just before the first build were too new to trust
        // (`INDEX_RACY_MS`); once the tree has been quiet past that, a second
        // refresh reads them again and trusts them.
        let mut again = true;
        loop {
            let wait = if again {
                QUIET
            } else if polling {
                POLL
            } else {
                Duration::MAX
            };
            again = false;
            match rx.recv_timeout(wait) {
                Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) if polling => std::thread::sleep(POLL),
                Err(RecvTimeoutError::Disconnected) => return,
            }
            // The rest of the burst.
            while let Ok(()) = rx.recv_timeout(QUIET) {}
            refresh();
            // The workspace was removed and made again: the watcher saw the
            // last of the old one; poll the new one (restart to watch it).
            polling |= dir_identity(&keeping.root) != keeping.root_id;
        }
    });
    if started.is_err() {
        return (sandbox, None);
    }
    (sandbox.with_session(move || watch.unchanged_since()), Some(IndexKeeper { _watcher: watcher }))
}
