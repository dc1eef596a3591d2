//! Keeping a long-lived server's index fresh (SPEC §6): built in the
//! background when it is missing, refreshed after files change, as a
//! filesystem watcher reports them.
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
//! is a call ever told the tree is unchanged; elsewhere the index is
//! refreshed every few minutes.
//!
//! On shared storage (a network or FUSE file system, [`crate::shared`])
//! other machines write what no watcher here hears of: there the watcher
//! only starts refreshes, and every call checks the tree itself.
//!
//! The watcher asks inotify for changes only: not for the opens every
//! search makes (ours, and any other process's reading the workspace),
//! which would cost a wakeup of the watcher per file read.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use crate::engine::dir_identity;
use crate::Sandbox;

/// How long the tree must be quiet before a refresh: past the time in which
/// the index distrusts a file's times, so what it reads then it can trust.
const QUIET: Duration = Duration::from_millis(crate::limits::INDEX_QUIET_MS);
const _: () = assert!(crate::limits::INDEX_QUIET_MS > crate::limits::INDEX_RACY_MS);
/// Without a watcher (none available, or too many directories to watch).
const POLL: Duration = Duration::from_secs(300);
/// What a long-lived host says of a workspace on shared storage.
pub const SHARED_STORAGE: &str =
    "the workspace is on shared storage: a watcher sees only this machine's writes there, so every call checks \
     file metadata against the index";
/// How long a call waits for the watcher to catch up before it checks the
/// tree itself.
const SETTLE: Duration = Duration::from_millis(200);

/// While alive, keeps the index of its sandbox's workspace fresh.
pub struct IndexKeeper {
    watch: Arc<Watch>,
    /// The refresher stops when its channel closes: when this and the
    /// watcher's sender are gone.
    _alive: mpsc::Sender<()>,
    /// Its index is kept out of reach of another workspace's cache cap.
    _in_use: crate::cache::InUse,
}

impl IndexKeeper {
    /// Why every call checks file metadata itself whatever the watcher saw
    /// (the type of the shared file system), if it does: said by the caller
    /// ([`SHARED_STORAGE`]).
    pub fn per_call_checks(&self) -> Option<&str> {
        self.watch.shared.get().map(String::as_str)
    }
}

impl Drop for IndexKeeper {
    fn drop(&mut self) {
        self.watch.stopped.store(true, Ordering::Relaxed);
        // Wakes the watcher, which then sees it is stopped.
        self.watch.mark();
    }
}

/// What the watcher has seen, for the calls to ask.
struct Watch {
    dir: PathBuf,
    /// The start of this watch's barrier files' names: its own, random, so
    /// that another server's barriers in the same index directory (or any
    /// file named like one) vouch for nothing here.
    barriers: String,
    seen: Mutex<Seen>,
    arrived: Condvar,
    tickets: AtomicU64,
    /// Whether the watcher covers the whole workspace, in order.
    exact: AtomicBool,
    stopped: AtomicBool,
    /// The workspace, and which directory it was when the watch began: a
    /// workspace removed and made again is one the watcher no longer sees.
    root: PathBuf,
    root_id: Option<(u64, u64)>,
    /// The shared file system the workspace lies on or holds (see
    /// [`crate::shared`]), once known: from then on every call checks the
    /// tree itself.
    shared: OnceLock<String>,
    /// Mounts to look at again when the mount table changes (unless the
    /// operator said whether the workspace is shared), and who to tell.
    mounts: Option<crate::shared::Mounts>,
    on_shared: Box<dyn Fn(&str) + Send + Sync>,
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
    fn new(
        dir: PathBuf,
        root: PathBuf,
        mounts: Option<crate::shared::Mounts>,
        on_shared: Box<dyn Fn(&str) + Send + Sync>,
    ) -> Watch {
        use std::hash::{BuildHasher, Hasher};
        let nonce = std::collections::hash_map::RandomState::new().build_hasher().finish();
        Watch {
            dir,
            barriers: format!(".barrier-{}-{nonce:016x}-", std::process::id()),
            seen: Mutex::default(),
            arrived: Condvar::new(),
            tickets: AtomicU64::new(0),
            exact: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            root_id: dir_identity(&root),
            root,
            shared: OnceLock::new(),
            mounts,
            on_shared,
        }
    }

    /// The workspace is on shared storage (`fs`): said once, and from now
    /// on calls check the tree themselves.
    fn shared(&self, fs: String) {
        self.exact.store(false, Ordering::Relaxed);
        if self.shared.set(fs).is_ok() {
            (self.on_shared)(self.shared.get().map_or("", String::as_str));
        }
    }

    /// Looks at the mounts again if the mount table changed: a shared file
    /// system mounted inside the workspace since is one whose writes the
    /// watcher never hears of.
    fn check_mounts(&self) {
        let changed = self.mounts.as_ref().is_some_and(|m| m.changed());
        if changed && self.shared.get().is_none() {
            if let Some(fs) = crate::shared::shared_storage(&self.root) {
                self.shared(fs);
            }
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates and removes a barrier file in the index directory; its
    /// ticket, once the watcher could see it.
    fn mark(&self) -> Option<u64> {
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed) + 1;
        let marker = self.dir.join(format!("{}{ticket}", self.barriers));
        std::fs::File::create(&marker).ok()?;
        let _ = std::fs::remove_file(&marker);
        Some(ticket)
    }

    /// Waits until every event queued before now has been handed over.
    fn settle(&self) -> bool {
        self.check_mounts();
        if self.exact.load(Ordering::Relaxed) && dir_identity(&self.root) != self.root_id {
            self.exact.store(false, Ordering::Relaxed);
        }
        if !self.exact.load(Ordering::Relaxed) {
            return false;
        }
        let Some(ticket) = self.mark() else { return false };
        let (seen, wait) = self
            .arrived
            .wait_timeout_while(self.seen(), SETTLE, |s| s.barrier < ticket)
            .unwrap_or_else(|e| e.into_inner());
        drop(seen);
        !wait.timed_out()
    }

    /// The refresh the workspace is unchanged since, if the watcher can
    /// vouch for it.
    fn unchanged_since(&self) -> Option<u64> {
        if !self.settle() {
            return None;
        }
        let seen = self.seen();
        seen.refreshed.filter(|&(_, at)| at == seen.changes).map(|(number, _)| number)
    }

    fn changes(&self) -> u64 {
        self.settle();
        self.seen().changes
    }

    /// A refresh that began at change count `began_at` succeeded, having
    /// `read` files or not. One that read nothing with no change since the
    /// last began found what that one did: the instances keep what they
    /// hold for it (the index they loaded, the walks they made).
    fn refreshed(&self, began_at: u64, read: bool) {
        let mut seen = self.seen();
        seen.refreshed = match seen.refreshed {
            Some((number, at)) if at == began_at && !read => Some((number, at)),
            Some((number, _)) => Some((number + 1, began_at)),
            None => Some((1, began_at)),
        };
    }

    /// The watcher saw a change in the workspace.
    fn changed(&self) {
        self.seen().changes += 1;
    }

    /// The watcher saw barrier `ticket`: every event before it is counted.
    fn barrier(&self, ticket: u64) {
        let mut seen = self.seen();
        seen.barrier = seen.barrier.max(ticket);
        self.arrived.notify_all();
    }

    /// The watcher no longer covers the whole workspace (events lost, or a
    /// new directory it could not watch): anything may have changed, and
    /// from now on calls check the tree themselves.
    fn lost(&self) {
        self.exact.store(false, Ordering::Relaxed);
        self.changed();
    }
}

/// Starts keeping `sandbox`'s index fresh, when indexing is on: the sandbox
/// its calls should go through (one that keeps an instance and asks the
/// watcher), and the keeper to hold while they do.
/// How long a long-lived host waits before trying again after `failures`
/// failed refreshes in a row (a change seen meanwhile tries at once).
fn retry_wait(failures: u32) -> Duration {
    let first = crate::limits::INDEX_RETRY_MS;
    Duration::from_millis(
        first.saturating_mul(1 << failures.saturating_sub(1).min(16)).min(crate::limits::INDEX_RETRY_MAX_MS),
    )
}

/// `shared_storage`: whether the workspace is on shared storage, as the
/// operator says (`None`: as detected, at the start and whenever the mount
/// table changes). `on_shared` is told the shared file system's type when
/// calls start checking the tree themselves (for [`SHARED_STORAGE`]).
pub fn keep_fresh(
    sandbox: Sandbox,
    shared_storage: Option<bool>,
    on_shared: impl Fn(&str) + Send + Sync + 'static,
) -> (Sandbox, Option<IndexKeeper>) {
    // Indexing off: no index to keep fresh, nor one that could appear later
    // and find the kept instance made without it.
    let Some(dir) = sandbox.index_path().map(Path::to_path_buf) else { return (sandbox.with_kept_instance(), None) };
    // The directory must exist to be watched (the lock creates it, 0700).
    if crate::lock_index_dir(&dir).is_err() {
        return (sandbox, None);
    }
    // (Watched before the first look, so no mount between them is missed.)
    let mounts = if shared_storage.is_none() { crate::shared::Mounts::watch() } else { None };
    let per_call = match shared_storage {
        Some(false) => None,
        Some(true) => {
            Some(crate::shared::shared_storage(sandbox.workspace()).unwrap_or_else(|| "as configured".into()))
        }
        None => crate::shared::shared_storage(sandbox.workspace()),
    };
    let watch = Arc::new(Watch::new(dir.clone(), sandbox.workspace().to_path_buf(), mounts, Box::new(on_shared)));
    let (tx, rx) = mpsc::channel::<()>();
    if let Some(tree) = tree::TreeWatch::start(sandbox.workspace(), &dir) {
        let (watching, tx) = (watch.clone(), tx.clone());
        let started = std::thread::Builder::new().name("sandgrep-watch".into()).spawn(move || tree.run(&watching, &tx));
        // Events of one inotify instance come out in the order they happened
        // (and cover every write only where no other machine writes).
        watch.exact.store(started.is_ok(), Ordering::Relaxed);
    }
    if let Some(fs) = per_call {
        watch.shared(fs);
    }
    // Dropped, it stops the watcher (and the refresher, once both are gone).
    let keeper = IndexKeeper { watch: watch.clone(), _alive: tx, _in_use: crate::cache::InUse::new(&dir) };
    let refresher = sandbox.clone();
    let keeping = watch.clone();
    let started = std::thread::Builder::new().name("sandgrep-index".into()).spawn(move || {
        // Failures in a row; the next try waits longer after each.
        let mut failures = 0u32;
        // Whether the last refresh read files (some perhaps too new to trust).
        let read = std::cell::Cell::new(false);
        let mut refresh = || {
            let began_at = keeping.changes();
            match refresher.refresh_index() {
                Ok(report) => {
                    read.set(report.files_read > 0 || report.files_removed > 0 || report.rebuilt.is_some());
                    keeping.refreshed(began_at, read.get());
                    failures = 0;
                }
                // (Calls go on without it, exact and slower: said, not dropped.)
                Err(e) => {
                    failures += 1;
                    let wait = retry_wait(failures).as_secs();
                    eprintln!("sandgrep: the index could not be refreshed: {e} (trying again in {wait} s)");
                }
            }
            failures
        };
        let mut failed = refresh();
        refresher.prune_indexes();
        // The cache's size cap, as `sandgrep index` keeps it (said on stderr:
        // stdout may be the protocol's).
        for r in refresher.cap_cache().unwrap_or_default() {
            eprintln!("sandgrep: {}", crate::cache::evicted_line(&r));
        }
        // Files written just before the first refresh read them were too new
        // to trust (`INDEX_RACY_MS`); once the tree has been quiet past that,
        // a second refresh reads them again and trusts them. A first refresh
        // that read nothing (the index was fresh) leaves none: the start-up
        // check is then one metadata walk (SPEC §6).
        let mut again = read.get();
        loop {
            // The workspace was removed and made again: the watcher saw the
            // last of the old one; poll the new one (restart to watch it).
            if dir_identity(&keeping.root) != keeping.root_id {
                keeping.exact.store(false, Ordering::Relaxed);
            }
            let wait = if failed > 0 {
                retry_wait(failed)
            } else if again {
                QUIET
            } else if keeping.exact.load(Ordering::Relaxed) {
                Duration::MAX
            } else {
                POLL
            };
            again = false;
            if let Err(RecvTimeoutError::Disconnected) = rx.recv_timeout(wait) {
                return;
            }
            // The rest of the burst.
            while let Ok(()) = rx.recv_timeout(QUIET) {}
            if keeping.stopped.load(Ordering::Relaxed) {
                return;
            }
            failed = refresh();
        }
    });
    if started.is_err() {
        return (sandbox, None);
    }
    (sandbox.with_session(move || watch.unchanged_since()), Some(keeper))
}

#[cfg(target_os = "linux")]
mod tree {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::Ordering;
    use std::sync::mpsc::Sender;

    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};

    use super::Watch;

    /// What changes a workspace: everything but opens, reads and closes
    /// after reading. Directories only, not through links.
    const CHANGES: WatchMask = WatchMask::ATTRIB
        .union(WatchMask::CREATE)
        .union(WatchMask::DELETE)
        .union(WatchMask::MODIFY)
        .union(WatchMask::CLOSE_WRITE)
        .union(WatchMask::MOVED_FROM)
        .union(WatchMask::MOVED_TO)
        .union(WatchMask::DELETE_SELF)
        .union(WatchMask::MOVE_SELF)
        .union(WatchMask::ONLYDIR)
        .union(WatchMask::DONT_FOLLOW);

    /// One inotify instance watching every directory of the workspace, and
    /// the index directory for barriers.
    pub(super) struct TreeWatch {
        inotify: Inotify,
        /// Where each watched directory is (as of its last creation or move).
        dirs: HashMap<WatchDescriptor, PathBuf>,
        index: WatchDescriptor,
    }

    impl TreeWatch {
        pub(super) fn start(root: &Path, index_dir: &Path) -> Option<TreeWatch> {
            let inotify = Inotify::init().ok()?;
            let index = inotify.watches().add(index_dir, WatchMask::CREATE | WatchMask::ONLYDIR).ok()?;
            let mut tree = TreeWatch { inotify, dirs: HashMap::new(), index };
            tree.add(root.to_path_buf()).then_some(tree)
        }

        /// Watches `top` and every directory below it; false if one that is
        /// there could not be watched (the limit of watches reached).
        fn add(&mut self, top: PathBuf) -> bool {
            let mut stack = vec![top];
            while let Some(dir) = stack.pop() {
                match self.inotify.watches().add(&dir, CHANGES) {
                    // (The index directory is never in the workspace, see
                    // `index_dir`: its writes are no change of it.)
                    Ok(wd) if wd == self.index => continue,
                    Ok(wd) => self.dirs.insert(wd, dir.clone()),
                    // Gone again, or not a directory (any longer): its
                    // parent's events tell.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR | libc::EACCES)) => continue,
                    Err(_) => return false,
                };
                let Ok(entries) = std::fs::read_dir(&dir) else { continue };
                for entry in entries.flatten() {
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
                        stack.push(entry.path());
                    }
                }
            }
            true
        }

        /// Hands the events to `watch` (and a wakeup to the refresher) until
        /// the keeper is dropped.
        pub(super) fn run(mut self, watch: &Watch, refresher: &Sender<()>) {
            let mut buffer = vec![0; 64 << 10];
            while !watch.stopped.load(Ordering::Relaxed) {
                let Ok(events) = self.inotify.read_events_blocking(&mut buffer) else {
                    watch.lost();
                    let _ = refresher.send(());
                    return;
                };
                let mut changed = false;
                for event in events {
                    if event.wd == self.index {
                        let ticket =
                            event.name.and_then(|n| n.to_str()?.strip_prefix(watch.barriers.as_str())?.parse().ok());
                        if let Some(ticket) = ticket {
                            watch.barrier(ticket);
                        }
                        continue;
                    }
                    if event.mask.contains(EventMask::IGNORED) {
                        self.dirs.remove(&event.wd);
                        continue;
                    }
                    // A directory made or moved in (or within: the paths
                    // below it change), or whose permissions changed (it
                    // may be watchable now), is watched with all it holds
                    // before its change is counted, so the refresh this
                    // leads to walks it after its watch began. (Named: a
                    // watched directory's event about itself has no name.)
                    let new_dir = event.name.is_some()
                        && event.mask.contains(EventMask::ISDIR)
                        && event.mask.intersects(EventMask::CREATE | EventMask::MOVED_TO | EventMask::ATTRIB);
                    let path = self.dirs.get(&event.wd).zip(event.name).map(|(dir, name)| dir.join(name));
                    if event.mask.contains(EventMask::Q_OVERFLOW) || new_dir && !path.is_some_and(|p| self.add(p)) {
                        watch.lost();
                    } else {
                        watch.changed();
                    }
                    changed = true;
                }
                if changed {
                    let _ = refresher.send(());
                }
            }
        }
    }
}

/// Elsewhere no watcher: the refresher polls.
#[cfg(not(target_os = "linux"))]
mod tree {
    pub(super) enum TreeWatch {}

    impl TreeWatch {
        pub(super) fn start(_: &std::path::Path, _: &std::path::Path) -> Option<TreeWatch> {
            None
        }

        pub(super) fn run(self, _: &super::Watch, _: &std::sync::mpsc::Sender<()>) {
            match self {}
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_failed_refresh_is_tried_again_later_each_time() {
        use crate::limits::{INDEX_RETRY_MAX_MS, INDEX_RETRY_MS};
        let waits: Vec<u64> = (1..=9).map(|n| retry_wait(n).as_millis() as u64).collect();
        let doubled: Vec<u64> = (0..9).map(|n| (INDEX_RETRY_MS << n).min(INDEX_RETRY_MAX_MS)).collect();
        assert_eq!(waits, doubled);
        assert_eq!(waits[..2], [INDEX_RETRY_MS, 2 * INDEX_RETRY_MS]);
        assert_eq!(retry_wait(u32::MAX).as_millis() as u64, INDEX_RETRY_MAX_MS);
    }

    /// A watch of a fresh workspace (`ws`, holding `src/`), its watcher running.
    fn watching() -> (tempfile::TempDir, PathBuf, Arc<Watch>) {
        let t = tempfile::tempdir().unwrap();
        let (ws, index) = (t.path().join("ws"), t.path().join("index"));
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(&index).unwrap();
        let watch = Arc::new(Watch::new(index.clone(), ws.clone(), None, Box::new(|_| {})));
        let tree = tree::TreeWatch::start(&ws, &index).unwrap();
        watch.exact.store(true, Ordering::Relaxed);
        let (tx, _rx) = mpsc::channel();
        let watching = watch.clone();
        std::thread::spawn(move || tree.run(&watching, &tx));
        (t, ws, watch)
    }

    /// Whether the watcher still vouches, and the changes it counted.
    fn state(watch: &Watch) -> (bool, u64) {
        let changes = watch.changes();
        (watch.exact.load(Ordering::Relaxed), changes)
    }

    #[test]
    fn every_change_counts_and_a_touched_directory_keeps_the_watch() {
        let (_t, ws, watch) = watching();
        assert_eq!(state(&watch), (true, 0));
        // A directory's times and mode set (`touch`, `chmod`, `tar x`): its
        // own event has no name, and is a change like any other.
        use std::os::unix::fs::PermissionsExt;
        for dir in [ws.join("src"), ws.clone()] {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
            let times = std::fs::FileTimes::new().set_accessed(std::time::SystemTime::UNIX_EPOCH);
            std::fs::File::open(&dir)
                .unwrap()
                .set_times(times.set_modified(std::time::SystemTime::UNIX_EPOCH))
                .unwrap();
        }
        let (exact, after_touch) = state(&watch);
        assert!(exact && after_touch > 0);
        // Directories made below one another, then a file in the deepest.
        std::fs::create_dir_all(ws.join("a/b/c")).unwrap();
        let (_, made) = state(&watch);
        std::fs::write(ws.join("a/b/c/f.txt"), "x").unwrap();
        let (exact, written) = state(&watch);
        assert!(exact && written > made && made > after_touch, "{after_touch} {made} {written}");
    }

    #[test]
    fn barriers_of_another_watch_vouch_for_nothing() {
        let (t, ws, watch) = watching();
        // Another server on the same index directory, and a file named like
        // an old barrier: their tickets run ahead of this watch's.
        let other = Watch::new(t.path().join("index"), ws, None, Box::new(|_| {}));
        for _ in 0..5 {
            other.mark();
        }
        std::fs::write(t.path().join("index/.barrier-999"), "").unwrap();
        assert!(watch.settle());
        assert_eq!(watch.seen().barrier, 1);
    }
}
