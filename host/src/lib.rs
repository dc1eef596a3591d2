//! sandgrep: code search for AI agents inside a WebAssembly capability
//! sandbox.
//!
//! The search logic is a `wasm32-wasip2` component embedded in this crate.
//! Every call runs in a fresh instance whose only filesystem is the
//! workspace directory, preopened read-only, with no environment, arguments,
//! network or stdio, under a wall-clock deadline and a memory cap.
//!
//! The README's example (it needs none of the front-end features: depend
//! with `default-features = false` for the library alone):
//!
//! ```no_run
//! use sandgrep::{Policy, Sandbox, SearchTextRequest};
//!
//! let sandbox = Sandbox::open("path/to/repo", Policy::default())?;
//! let mut request = SearchTextRequest::new("fn main");
//! request.include_globs = vec!["*.rs".into()];
//! let response = sandbox.search_text(&request)?;
//! let listing = sandbox.list_files(&sandgrep::ListFilesRequest::new("src"))?;
//! let calls = sandbox.search_ast(&sandgrep::SearchAstRequest::new("$X.unwrap()"))?;
//! let file = sandbox.read_file(&sandgrep::ReadFileRequest::new("src/main.rs"))?;
//! for m in &response.matches {
//!     println!("{}:{}:{}", m.path, m.line, m.text);
//! }
//! # let _ = (listing, calls, file);
//! # Ok::<(), sandgrep::Error>(())
//! ```
//!
//! Features: `cli` (the `sandgrep` binary), `mcp` (the agent tools over MCP
//! on stdio) and `serve` (the multi-tenant HTTP server); all on by default.

pub mod cache;
mod defaults;
mod divided;
mod engine;
mod engine_config;
pub mod json;
#[cfg(feature = "mcp")]
pub mod keeper;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(any(feature = "cli", feature = "mcp"))]
pub mod render;
#[cfg(feature = "serve")]
pub mod serve;
#[cfg(feature = "mcp")]
mod shared;
#[cfg(feature = "mcp")]
pub mod tools;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "sandgrep",
        additional_derives: [serde::Serialize, serde::Deserialize, PartialEq],
    });
}

pub use bindings::exports::sandgrep::search::files::{
    FileEntry, ListFilesRequest, ListFilesResponse, RangeType, ReadFileRequest, ReadFileResponse, ReadRange,
};
pub use bindings::exports::sandgrep::search::index::IndexReport;
use bindings::exports::sandgrep::search::index::{IndexFile, IndexPart};
use bindings::exports::sandgrep::search::parallel::{ShardEvent, ShardEventKind, ShardResult, ShardStop, WalkedFile};
pub use bindings::exports::sandgrep::search::search::{
    AstMatch, BinaryMode, BinaryNotice, ByteChunk, CaseMode, FileCount, MetaVariable, OutputMode, QueryMode,
    RegexEngine, SearchAstRequest, SearchAstResponse, SearchTextRequest, SearchTextResponse, Submatch, TextMatch,
};
use bindings::sandgrep::search::types::Policy as GuestPolicy;
pub use bindings::sandgrep::search::types::{
    IgnoreOptions, IndexUse, Redaction, RedactionCount, SearchError, SearchStats, SkipCounts, TypeChange,
};
/// Every default and hard maximum: what the component clamps requests to,
/// and the library's and front ends' own defaults.
pub use sandgrep_contract::limits;

/// The embedded component (`sandgrep.wasm`, a `wasm32-wasip2` component of
/// the `sandgrep` world), for other hosts: wasmtime's CLI, jco, wasmtime-py.
pub fn component() -> &'static [u8] {
    engine::WASM
}

use limits::{DEADLINE_GRACE_MS, INDEX_MEMORY, MEMORY, TIMEOUT_MS};
use wasmtime_wasi::FsPerms;

/// What the host, not the request, decides. Front ends must never fill it
/// from caller input.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Replace secrets in returned text with `[REDACTED]` (default: on).
    pub redact: bool,
    /// Redaction rules switched off by name (see `sandgrep
    /// --list-redaction-rules`); an unknown name fails every call.
    pub disabled_redaction_rules: Vec<String>,
    /// Gitignore-style globs (case-insensitive) denied on top of the built-in
    /// denylist.
    pub extra_deny: Vec<String>,
    /// Largest linear memory an instance may grow to.
    pub memory_limit: usize,
    /// Extra wall-clock time past a request's own timeout before the host
    /// interrupts the instance.
    pub deadline_grace: Duration,
    /// The longest a call may run (a request's timeout is lowered to it).
    pub max_timeout: Duration,
    /// Mixed into cursors, so that a cursor made under another key (another
    /// tenant's) is refused.
    pub cursor_key: String,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            redact: true,
            disabled_redaction_rules: Vec::new(),
            extra_deny: Vec::new(),
            memory_limit: MEMORY.default as usize,
            deadline_grace: Duration::from_millis(DEADLINE_GRACE_MS),
            max_timeout: Duration::from_millis(TIMEOUT_MS.max),
            cursor_key: String::new(),
        }
    }
}

/// Why a call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The request was refused or failed inside the sandbox.
    Search(SearchError),
    /// The host interrupted a call that overran its deadline.
    Deadline(Duration),
    /// The call needed more memory than the policy's cap (bytes).
    OutOfMemory(usize),
    /// The instance trapped (a bug, or the stack ran out).
    Crashed(String),
    /// The sandbox could not be set up (workspace missing, engine failure).
    Setup(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Search(e) => f.write_str(&search_error_message(e)),
            Error::Deadline(d) => write!(f, "the call was stopped after {} ms (host deadline)", d.as_millis()),
            Error::OutOfMemory(limit) => write!(
                f,
                "the call ran out of memory (cap {} MiB): narrow it (paths, globs) or ask for less (max-results, context)",
                limit >> 20
            ),
            Error::Crashed(m) => write!(f, "the sandboxed search failed: {m}"),
            Error::Setup(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// The message for a guest error, naming workspace-relative paths only.
pub fn search_error_message(e: &SearchError) -> String {
    sandgrep_contract::search_error_message!(e)
}

/// What an index refresh has done so far
/// ([`Sandbox::refresh_index_counted`]).
#[derive(Debug, Default)]
pub struct Progress {
    /// Entries whose size and times were looked at.
    pub looked: std::sync::atomic::AtomicU64,
    /// Files the walk found to read (new or changed), and their bytes.
    pub to_read: std::sync::atomic::AtomicU64,
    pub to_read_bytes: std::sync::atomic::AtomicU64,
    /// Of those, files read so far, and their bytes.
    pub read: std::sync::atomic::AtomicU64,
    pub read_bytes: std::sync::atomic::AtomicU64,
    /// The walk is over: `to_read` is the whole of it.
    pub walked: std::sync::atomic::AtomicBool,
    /// Set by the caller: the walk stops where it is, what was read is
    /// written as an index that the next refresh goes on from.
    pub stop: std::sync::atomic::AtomicBool,
}

/// One workspace, searched through the sandbox.
#[derive(Clone)]
pub struct Sandbox {
    workspace: PathBuf,
    policy: Policy,
    guest_policy: GuestPolicy,
    runtime: Arc<engine::Runtime>,
    jobs: usize,
    /// This workspace's index directory (SPEC §6), unless indexing is off.
    index: Option<PathBuf>,
    /// A long-lived host's (see [`keeper`]).
    session: Option<Arc<Session>>,
}

/// A batch of files a walk handed out, numbered in walk order.
type Batch = (usize, Vec<WalkedFile>);

/// The batches waiting for a searching (or reading) instance, oldest
/// first: at most `ahead`, so the walk runs ahead of busy instances by a
/// few batches (none of them waits for the walk while the walk searches
/// one itself) but searches rather than run ahead further.
struct Queue<T = Batch> {
    /// The batches waiting, and whether the walk is over.
    state: std::sync::Mutex<(std::collections::VecDeque<T>, bool)>,
    ready: std::sync::Condvar,
    ahead: usize,
}

impl<T> Queue<T> {
    /// A queue for `jobs` instances, the walk's among them.
    fn new(jobs: usize) -> Self {
        Queue::ahead(2 * jobs.saturating_sub(1).max(1))
    }

    /// A queue the walk runs `ahead` batches ahead of.
    fn ahead(ahead: usize) -> Self {
        Queue { state: Default::default(), ready: Default::default(), ahead }
    }

    /// Leaves `batch` for an instance; the oldest batch waiting, if more
    /// than `ahead` are, comes back (for the caller to search).
    fn offer(&self, batch: T) -> Option<T> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.0.push_back(batch);
        self.ready.notify_one();
        if state.0.len() > self.ahead {
            state.0.pop_front()
        } else {
            None
        }
    }

    /// The oldest batch, waiting for one; `None` once the walk is over
    /// and none is left.
    fn take(&self) -> Option<T> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(batch) = state.0.pop_front() {
                return Some(batch);
            }
            if state.1 {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// No more batches: instances waiting go on.
    fn close(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.ready.notify_all();
    }
}

/// The results each batch of a search over instances gave (see the WIT's
/// `shard-result`), for the first batches, in walk order, that end the
/// page.
#[derive(Default)]
struct Tally {
    /// By batch number: the results of each batch searched so far.
    batches: Vec<Option<u64>>,
    /// The batches before this one were all searched, and gave `results`.
    next: usize,
    results: u64,
}

impl Tally {
    /// Batch `number` gave `results`; the batch the page ends in, once the
    /// batches up to it gave more results than a page `takes`.
    fn add(&mut self, number: usize, results: u64, takes: u64) -> Option<usize> {
        if self.batches.len() <= number {
            self.batches.resize(number + 1, None);
        }
        self.batches[number] = Some(results);
        while let Some(&Some(n)) = self.batches.get(self.next) {
            self.results = self.results.saturating_add(n);
            self.next += 1;
            if self.results > takes {
                return Some(self.next - 1);
            }
        }
        None
    }
}

/// What a helper instance's thread came to, joined.
fn joined<T, E: std::fmt::Display>(
    thread: std::thread::ScopedJoinHandle<'_, Result<Result<T, SearchError>, E>>,
) -> wasmtime::Result<Result<T, SearchError>> {
    match thread.join() {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(wasmtime::Error::msg(e.to_string())),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Closes a queue when dropped.
struct CloseOnDrop<'q, T = Batch>(&'q Queue<T>);

impl<T> Drop for CloseOnDrop<'_, T> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The linear memory of the helper instances kept, all sandboxes of this
/// process together (bounded by [`limits::HELPERS_MEMORY`]).
static HELPERS_KEPT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One instance kept for a long-lived host's calls, and its watcher's word
/// on what changed.
struct Session {
    kept: std::sync::Mutex<Option<engine::Kept>>,
    /// Instances without the index that searched files the kept one handed
    /// out, for the next call (their matcher and memory ready), with their
    /// memory as counted in [`HELPERS_KEPT`].
    helpers: std::sync::Mutex<Vec<(engine::Kept, usize)>>,
    /// The index refresh the workspace is unchanged since, if the watcher
    /// can vouch for one.
    unchanged_since: Box<dyn Fn() -> Option<u64> + Send + Sync>,
    /// Keep the instance when there is no index too.
    always: bool,
}

impl Drop for Session {
    fn drop(&mut self) {
        let helpers = self.helpers.get_mut().unwrap_or_else(|e| e.into_inner());
        HELPERS_KEPT.fetch_sub(helpers.iter().map(|h| h.1).sum(), Ordering::Relaxed);
    }
}

impl Sandbox {
    /// Opens `workspace` (a directory) for searching under `policy`.
    pub fn open(workspace: impl AsRef<Path>, policy: Policy) -> Result<Sandbox, Error> {
        Sandbox::with_runtime(workspace, policy, engine::runtime()?)
    }

    /// As [`Sandbox::open`], with another build of the component (a
    /// `sandgrep` world) instead of the embedded one — for testing hosts.
    pub fn open_with_component(workspace: impl AsRef<Path>, policy: Policy, wasm: &[u8]) -> Result<Sandbox, Error> {
        let runtime = engine::Runtime::new(wasm, false).map_err(|e| Error::Setup(format!("{e:#}")))?;
        Sandbox::with_runtime(workspace, policy, Arc::new(runtime))
    }

    fn with_runtime(
        workspace: impl AsRef<Path>,
        policy: Policy,
        runtime: Arc<engine::Runtime>,
    ) -> Result<Sandbox, Error> {
        let given = workspace.as_ref();
        let workspace =
            std::fs::canonicalize(given).map_err(|e| Error::Setup(format!("workspace {}: {e}", given.display())))?;
        if !workspace.is_dir() {
            return Err(Error::Setup(format!("workspace {}: not a directory", given.display())));
        }
        // Above the workspace is out of the component's sight: the host says
        // whether it sits in a git repository, so `.gitignore` files apply as
        // they do for rg run there.
        let inside_git_repository = workspace.ancestors().skip(1).any(|a| a.join(".git").exists());
        // A workspace that is itself a directory of credentials (`--root
        // ~/.aws`, or anywhere in `~/.ssh`): its files have no parent in the
        // component's sight, so the host denies what the list denies there.
        let mut extra_deny = policy.extra_deny.clone();
        for (i, dir) in workspace.iter().rev().enumerate() {
            let globs = sandgrep_contract::deny::inside(&dir.to_string_lossy());
            if i == 0 || globs.iter().any(|g| g == "*") {
                extra_deny.extend(globs);
            }
        }
        let guest_policy = GuestPolicy {
            redact: policy.redact,
            extra_deny,
            inside_git_repository,
            cursor_key: policy.cursor_key.clone(),
            disabled_redaction_rules: policy.disabled_redaction_rules.clone(),
        };
        let index = index_dir(&workspace, &guest_policy);
        Ok(Sandbox { workspace, policy, guest_policy, runtime, jobs: 1, index, session: None })
    }

    /// Spreads each text search over `jobs` instances running side by side
    /// (one per core is the most that helps); the answer is the one a single
    /// instance gives. Default 1.
    pub fn with_jobs(mut self, jobs: usize) -> Sandbox {
        self.jobs = jobs.max(1);
        self
    }

    /// Whether searches use the workspace's index (when one has been
    /// built) and [`Sandbox::refresh_index`] may build one. Default: on.
    pub fn with_index(mut self, on: bool) -> Sandbox {
        self.index = if on { index_dir(&self.workspace, &self.guest_policy) } else { None };
        self
    }

    /// Calls go to one kept instance (when it is free) and, while the
    /// watcher has seen no change since an index refresh, answer from the index
    /// and remembered walks without looking at the tree.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    fn with_session(self, unchanged_since: impl Fn() -> Option<u64> + Send + Sync + 'static) -> Sandbox {
        self.session_of(Box::new(unchanged_since), false)
    }

    /// Calls go to one kept instance (when it is free), and to kept helpers
    /// with `jobs`; nothing about the tree is remembered between calls. For
    /// a front end making calls in a row, such as the pages of one search:
    /// each call is spared an instance's start (its memory, the patterns
    /// it compiles).
    pub fn with_kept_instance(self) -> Sandbox {
        self.session_of(Box::new(|| None), true)
    }

    fn session_of(mut self, unchanged_since: Box<dyn Fn() -> Option<u64> + Send + Sync>, always: bool) -> Sandbox {
        let (kept, helpers) = Default::default();
        self.session = Some(Arc::new(Session { kept, helpers, unchanged_since, always }));
        self
    }

    /// Where this workspace's index lives (outside the workspace), if
    /// indexing is on and the user has a cache directory.
    pub fn index_path(&self) -> Option<&Path> {
        self.index.as_deref()
    }

    /// Builds the workspace's index, or refreshes it reading only files
    /// whose size or times changed (SPEC §6). Another process refreshing
    /// the same index waits its turn.
    pub fn refresh_index(&self) -> Result<IndexReport, Error> {
        self.refresh_index_counted(None)
    }

    /// [`Sandbox::refresh_index`], counting into `progress` as it goes (for
    /// a progress line: watch it from another thread).
    pub fn refresh_index_counted(&self, progress: Option<Arc<Progress>>) -> Result<IndexReport, Error> {
        let dir = self.index.as_deref().ok_or_else(|| {
            Error::Setup(
                "indexing is off: no cache directory, or it lies in the workspace or in a git work tree (set \
                 SANDGREP_CACHE_DIR to a directory of your own outside both)"
                    .into(),
            )
        })?;
        let lock = lock_index_dir(dir).map_err(|e| Error::Setup(format!("index directory {}: {e}", dir.display())))?;
        // Whose index it is, so that it can go when the workspace does.
        write_owner(dir, &self.workspace)
            .map_err(|e| Error::Setup(format!("index directory {}: {e}", dir.display())))?;
        let report = self.refresh_spread(dir, progress.unwrap_or_default());
        // What a failed build left (runs of an instance that trapped, …):
        // the lock is still held, so nothing of another build's.
        cache::remove_leftovers(dir);
        let report = report?.map_err(Error::Search);
        drop(lock);
        if report.is_ok() {
            cache::mark_used(dir, true);
        }
        report
    }

    /// The refresh spread over `jobs` instances (the WIT's `index-walk`,
    /// `index-read`, `index-split`, `index-merge`, `index-finish`): one
    /// walks and hands out batches of files to read, reading a batch itself
    /// when the other instances leave too many waiting (see [`Queue`]); then
    /// every instance merges a range of trigrams of what they all read, and
    /// the walking one joins the ranges into the index.
    fn refresh_spread(&self, dir: &Path, progress: Arc<Progress>) -> Result<Result<IndexReport, SearchError>, Error> {
        /// Bytes of files per batch: enough that a call costs little beside
        /// them, few enough that every instance starts at once.
        const BATCH_BYTES: u64 = 4 << 20;
        type Store = wasmtime::Store<engine::State>;
        type Read = wasmtime::Result<Result<IndexPart, SearchError>>;
        let p = &self.guest_policy;
        let long = Duration::from_secs(24 * 3600);
        // (Batches vary in cost: with few of them waiting, the others ran
        // out while the walking instance read one; 16 a reader cut their
        // wait at 511k files from 1.9 s to 0.1–0.2 s. Alone, it reads each
        // batch as it comes.)
        let queue: Queue<Vec<IndexFile>> = Queue::ahead(16 * self.jobs.saturating_sub(1));
        let work = Some((dir, FsPerms::ReadWrite));
        let read = |i: &bindings::Sandgrep, s: &mut Store, batch: &[IndexFile], last: bool| -> Read {
            let part = i.sandgrep_search_index().call_index_read(&mut *s, p, batch, last)?;
            progress.read.fetch_add(batch.len() as u64, Ordering::Relaxed);
            progress.read_bytes.fetch_add(batch.iter().map(|f| f.size).sum(), Ordering::Relaxed);
            Ok(part)
        };
        // Reads what is handed out, then names its runs.
        let reader = |i: &bindings::Sandgrep, s: &mut Store| -> wasmtime::Result<Result<Vec<IndexPart>, SearchError>> {
            s.data_mut().progress = Some(progress.clone());
            let mut parts = Vec::new();
            // (Asked to stop: what waits is left unread, and the index
            // says so: a refresh reads it.)
            while let Some(batch) = queue.take().filter(|_| !progress.stop.load(Ordering::Relaxed)) {
                match read(i, s, &batch, false)? {
                    Ok(part) => parts.push(part),
                    Err(e) => return Ok(Err(e)),
                }
            }
            Ok(read(i, s, &[], true)?.map(|last| {
                parts.push(last);
                parts
            }))
        };
        std::thread::scope(|scope| {
            let spawn_reader = || {
                scope.spawn(|| {
                    self.runtime.call(&self.workspace, work, INDEX_MEMORY as usize, long, long, |i, s| reader(i, s))
                })
            };
            // (Closed whatever happens, so no reader waits for ever.)
            let _close = CloseOnDrop(&queue);
            self.runtime.call(&self.workspace, work, INDEX_MEMORY as usize, long, long, |i, s| {
                s.data_mut().progress = Some(progress.clone());
                let mut parts = Vec::new();
                // The other instances, started with the first file to read
                // (a refresh with nothing to read starts none).
                let mut readers = Vec::new();
                let mut start = true;
                while !progress.stop.load(Ordering::Relaxed) {
                    let batch = match i.sandgrep_search_index().call_index_walk(&mut *s, p, start, BATCH_BYTES)? {
                        Ok(batch) => batch,
                        Err(e) => return Ok(Err(e)),
                    };
                    start = false;
                    let files = batch.files;
                    progress.to_read.fetch_add(files.len() as u64, Ordering::Relaxed);
                    progress.to_read_bytes.fetch_add(files.iter().map(|f| f.size).sum(), Ordering::Relaxed);
                    if !files.is_empty() {
                        if readers.is_empty() {
                            readers.extend((1..self.jobs).map(|_| spawn_reader()));
                        }
                        if let Some(waiting) = queue.offer(files) {
                            match read(i, s, &waiting, false)? {
                                Ok(part) => parts.push(part),
                                Err(e) => return Ok(Err(e)),
                            }
                        }
                    }
                    if batch.done {
                        progress.walked.store(true, Ordering::Relaxed);
                        break;
                    }
                }
                queue.close();
                // What no other instance took is read here; then every
                // instance's part is merged.
                match reader(i, s)? {
                    Ok(mine) => parts.extend(mine),
                    Err(e) => return Ok(Err(e)),
                }
                for r in readers {
                    match joined(r)? {
                        Ok(theirs) => parts.extend(theirs),
                        Err(e) => return Ok(Err(e)),
                    }
                }
                // The merge, its ranges of trigrams in as many instances
                // (the first here), then joined into the index here.
                let plan = match i.sandgrep_search_index().call_index_split(&mut *s, p, &parts, self.jobs as u32)? {
                    Ok(plan) => Arc::new(plan),
                    Err(e) => return Ok(Err(e)),
                };
                let ranges = plan.bounds.len().saturating_sub(1) as u32;
                let others: Vec<_> = (1..ranges)
                    .map(|range| {
                        let plan = plan.clone();
                        scope.spawn(move || {
                            self.runtime.call(&self.workspace, work, INDEX_MEMORY as usize, long, long, |i, s| {
                                i.sandgrep_search_index().call_index_merge(s, p, &plan, range)
                            })
                        })
                    })
                    .collect();
                let mut merged = Vec::new();
                if ranges > 0 {
                    match i.sandgrep_search_index().call_index_merge(&mut *s, p, &plan, 0)? {
                        Ok(part) => merged.push(part),
                        Err(e) => return Ok(Err(e)),
                    }
                }
                for other in others {
                    match joined(other)? {
                        Ok(part) => merged.push(part),
                        Err(e) => return Ok(Err(e)),
                    }
                }
                i.sandgrep_search_index().call_index_finish(&mut *s, p, &merged)
            })
        })
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Removes the indexes (beside this workspace's) of workspaces that are
    /// gone and were not refreshed for [`GONE_DAYS`] days, unless something
    /// holds them; their workspaces, named.
    pub fn prune_indexes(&self) -> Vec<PathBuf> {
        let Some(all) = self.index.as_deref().and_then(Path::parent) else { return Vec::new() };
        let Ok(dirs) = std::fs::read_dir(all) else { return Vec::new() };
        let mut pruned = Vec::new();
        for dir in dirs.flatten().filter(|d| d.file_type().is_ok_and(|t| t.is_dir())) {
            let dir = dir.path();
            if Some(dir.as_path()) == self.index.as_deref() || !is_index_name(&dir) || orphaned(&dir).is_none() {
                continue;
            }
            let Ok(lock) = open_regular(&dir.join("lock"), std::fs::OpenOptions::new().write(true)) else { continue };
            if lock.try_lock().is_err() {
                continue;
            }
            // Looked at again now that it is ours, and removed as `index
            // --prune` removes one: sandgrep's own files only.
            let Some(owner) = orphaned(&dir) else { continue };
            if cache::remove_dir(all, &dir).is_ok() {
                pruned.push(owner);
            }
        }
        pruned
    }

    /// Keeps the indexes in the user's cache within its cap
    /// ([`cache::cap`]): removes the least recently used others (not this
    /// workspace's, not one another process holds) until they fit. What it
    /// removed; an error for a cap it cannot read.
    pub fn cap_cache(&self) -> Result<Vec<cache::Removal>, String> {
        match self.index.as_deref() {
            Some(dir) => cache::enforce_cap(dir),
            None => Ok(Vec::new()),
        }
    }

    /// The index directory, when it holds an index: searches read it, they
    /// never create one.
    fn indexed(&self) -> Option<&Path> {
        self.index.as_deref().filter(|d| d.join("index.v1").is_file())
    }

    pub fn search_text(&self, request: &SearchTextRequest) -> Result<SearchTextResponse, Error> {
        let p = &self.guest_policy;
        let (timeout, request) = self.capped(request);
        let request = &*request;
        if self.jobs == 1 {
            return self.call(timeout, |i, s| i.sandgrep_search_search().call_search_text(s, request, p));
        }
        let started = Instant::now();
        let shards =
            match self.divisible(request).then(|| self.divided(timeout, request, None, false)).transpose()?.flatten() {
                Some(walked) => vec![walked.shard()],
                None => self.walked_once(timeout, request)?,
            };
        self.merged(timeout, request, &shards, started)
    }

    /// `search_text` page after page, for a reader of the whole stream (the
    /// CLI): `show` takes each page, readies `request` for the next one (its
    /// cursor and size) and says whether to go on. Where the instances
    /// divide the walk, what they walked past a page's end is the next
    /// page's, not walked again (but for the file the page ended in, and the
    /// last file of a part cut by a full page of its own: searched again).
    pub fn search_text_stream(
        &self,
        request: &mut SearchTextRequest,
        show: &mut dyn FnMut(SearchTextResponse, &mut SearchTextRequest) -> bool,
    ) -> Result<(), Error> {
        // What the last page's walk left, the file it ended in, and when.
        let mut next: Option<(divided::Carry, Option<String>, Instant)> = None;
        loop {
            let started = Instant::now();
            let (timeout, asked) = self.capped(request);
            let walked = match self.jobs > 1 && self.divisible(&asked) {
                true => {
                    let fresh = next.take().filter(|(_, _, walked)| walked.elapsed() <= CARRIED);
                    let carry = fresh.map(|(carry, ended_in, _)| self.again(timeout, &asked, carry, ended_in));
                    self.divided(timeout, &asked, carry.transpose()?.flatten(), true)?
                }
                false => None,
            };
            let at = Instant::now();
            let Some(walked) = walked else {
                if !show(self.search_text(request)?, request) {
                    return Ok(());
                }
                continue;
            };
            let page = self.merged(timeout, &asked, &[walked.shard()], started)?;
            let ended_in = page.matches.last().map(|m| m.path.clone());
            let last = page.matches.last().map(|m| &m.path).into_iter().chain(page.files.last().map(|f| &f.path));
            let last = last.max_by(|a, b| sandgrep_contract::path_cmp(a, b)).cloned();
            next = last.filter(|_| !page.timed_out).and_then(|last| walked.carry(&last)).map(|c| (c, ended_in, at));
            if !show(page, request) {
                return Ok(());
            }
        }
    }

    /// `carry` for the page `request` asks for, with the files whose events
    /// it cannot take as they are searched again, as a walk resumed at its
    /// cursor searches them — or none, for a walk anew, if one is no longer
    /// a file the walk searched (gone, a directory, a link, ...).
    fn again(
        &self,
        timeout: Duration,
        request: &SearchTextRequest,
        mut carry: divided::Carry,
        ended_in: Option<String>,
    ) -> Result<Option<divided::Carry>, Error> {
        let p = &self.guest_policy;
        for path in carry.searched_again(ended_in.as_deref()) {
            let file = [WalkedFile { path: path.clone(), real: None }];
            let again =
                self.call(timeout, |i, s| i.sandgrep_search_parallel().call_search_files(s, request, p, true, &file))?;
            let searched = |e: &ShardEvent| {
                e.key == path && matches!(e.kind, ShardEventKind::Searched(_) | ShardEventKind::Unmatched(_))
            };
            if !again.events.iter().all(searched) {
                return Ok(None);
            }
            carry.replace(&path, again.events);
        }
        Ok(Some(carry))
    }

    /// Whether the instances may each walk a part of the tree: nothing is
    /// kept between calls (no index, no kept walk); else one walk hands
    /// paths out. (The guest refuses the rest before it searches.)
    fn divisible(&self, request: &SearchTextRequest) -> bool {
        self.indexed().is_none()
            && self.session.as_ref().is_none_or(|s| (s.unchanged_since)().is_none())
            && request.paths.len() <= 1
            && !request.follow_symlinks
    }

    /// The page one instance would have made, from the events of `shards`.
    fn merged(
        &self,
        timeout: Duration,
        request: &SearchTextRequest,
        shards: &[ShardResult],
        started: Instant,
    ) -> Result<SearchTextResponse, Error> {
        let p = &self.guest_policy;
        let mut response =
            self.call(timeout, |i, s| i.sandgrep_search_parallel().call_merge_shards(s, request, p, shards))?;
        response.stats.elapsed_ms = started.elapsed().as_millis() as u64;
        Ok(response)
    }

    /// `search-text` over a piece of a stream (stdin) the caller hands in:
    /// the bytes go to the component, no file is opened (see the WIT's
    /// `search-bytes`). One instance (the kept one, when there is one: a
    /// stream is many calls).
    pub fn search_bytes(&self, request: &SearchTextRequest, chunk: &ByteChunk) -> Result<SearchTextResponse, Error> {
        let p = &self.guest_policy;
        let (timeout, request) = self.capped(request);
        let request = &*request;
        self.call(timeout, |i, s| i.sandgrep_search_search().call_search_bytes(s, request, p, chunk))
    }

    /// A text search walked once and searched by `jobs` instances. This
    /// thread's instance walks and hands out batches of files in walk order
    /// to the other instances, searching the oldest batch itself when too
    /// many wait (see [`Queue`]; and what is left once the walk is over):
    /// each instance searches batches in walk order. Each instance searches its
    /// batches as its part of the page; once one stops (its part is full,
    /// or out of time), no batch after that one is searched — every batch
    /// before it still is, or the merge would miss its files. Nor after the
    /// first batches that together gave more results than the page takes
    /// (the page ends in them: see [`Tally`]). The events of every
    /// instance, for `merge-shards`.
    fn walked_once(&self, timeout: Duration, request: &SearchTextRequest) -> Result<Vec<ShardResult>, Error> {
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        /// Files per batch: enough that a call costs little beside them,
        /// few enough that every instance starts at once.
        const BATCH: u32 = 256;
        type Store = wasmtime::Store<engine::State>;
        let p = &self.guest_policy;
        let started = Instant::now();
        let queue = Queue::new(self.jobs);
        // The last batch the page needs: the first an instance stopped in,
        // or the one the tally's page ends in (none known yet: MAX).
        let cut = AtomicUsize::new(usize::MAX);
        let tally = std::sync::Mutex::new(Tally::default());
        let empty =
            || ShardResult { events: Vec::new(), stopped: None, index: IndexUse::None, results: 0, page_takes: 0 };
        // Searches one batch as part of `part` (started: `begun`).
        let search = |i: &bindings::Sandgrep, s: &mut Store, part: &mut ShardResult, begun: &mut bool, batch: Batch| {
            let (number, files) = batch;
            if number > cut.load(Relaxed) || part.stopped.is_some() {
                return Ok(Ok(()));
            }
            // An instance that starts late has what is left of the time.
            let late;
            let asked = if *begun {
                request
            } else {
                let left = timeout.saturating_sub(started.elapsed()).as_millis().clamp(1, u32::MAX.into());
                late = SearchTextRequest { timeout_ms: Some(left as u32), ..request.clone() };
                &late
            };
            let r = match i.sandgrep_search_parallel().call_search_files(&mut *s, asked, p, !*begun, &files) {
                Ok(Ok(r)) => r,
                failed => {
                    cut.store(0, Relaxed);
                    return failed.map(|r| r.map(drop));
                }
            };
            *begun = true;
            part.events.extend(r.events);
            part.index = r.index;
            if r.stopped.is_some() {
                part.stopped = r.stopped;
                cut.fetch_min(number, Relaxed);
            }
            if let Some(last) = tally.lock().unwrap_or_else(|e| e.into_inner()).add(number, r.results, r.page_takes) {
                cut.fetch_min(last, Relaxed);
            }
            wasmtime::Result::Ok(Ok(()))
        };
        std::thread::scope(|scope| {
            let searchers: Vec<_> = (1..self.jobs)
                .map(|_| {
                    scope.spawn(|| {
                        // (The files handed out were narrowed: no index.)
                        let part = self.helper_call(timeout, |i, s| {
                            let (mut part, mut begun) = (empty(), false);
                            while let Some(batch) = queue.take() {
                                if let Err(e) = search(i, s, &mut part, &mut begun, batch)? {
                                    return Ok(Err(e));
                                }
                            }
                            Ok(Ok(part))
                        });
                        if part.is_err() {
                            cut.store(0, Relaxed);
                        }
                        part
                    })
                })
                .collect();
            // However the walk ends (a panic included), instances waiting go on.
            let _close = CloseOnDrop(&queue);
            let walked = self.call(timeout, |i, s| {
                let (mut walked, mut part, mut begun) = (empty(), empty(), false);
                let mut number = 0;
                while cut.load(Relaxed) == usize::MAX {
                    let w =
                        match i.sandgrep_search_parallel().call_walk_files(&mut *s, request, p, number == 0, BATCH)? {
                            Ok(w) => w,
                            Err(e) => return Ok(Err(e)),
                        };
                    walked.events.extend(w.events);
                    walked.index = w.index;
                    if w.timed_out {
                        walked.stopped = Some(ShardStop::TimedOut);
                    }
                    if !w.files.is_empty() {
                        // The instances are behind: search the oldest batch
                        // here (every instance takes batches in walk order).
                        if let Some(older) = queue.offer((number, w.files)) {
                            if let Err(e) = search(i, s, &mut part, &mut begun, older)? {
                                return Ok(Err(e));
                            }
                        }
                        number += 1;
                    }
                    if w.done {
                        break;
                    }
                }
                // The walk is over: help with what is left.
                queue.close();
                while let Some(batch) = queue.take() {
                    if let Err(e) = search(i, s, &mut part, &mut begun, batch)? {
                        return Ok(Err(e));
                    }
                }
                Ok(Ok((walked, part)))
            });
            queue.close();
            let mut parts: Vec<ShardResult> = searchers
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|_| Err(Error::Crashed("a search thread panicked".into()))))
                .collect::<Result<_, _>>()?;
            let (walked, part) = walked?;
            parts.push(part);
            parts.push(walked);
            Ok(parts)
        })
    }

    /// Structural search (ast-grep patterns), spread over instances as text
    /// search is: each parses the files whose path hashes to it.
    pub fn search_ast(&self, request: &SearchAstRequest) -> Result<SearchAstResponse, Error> {
        let p = &self.guest_policy;
        let (timeout, capped) = self.timeout(request.timeout_ms);
        let request = &SearchAstRequest { timeout_ms: capped.or(request.timeout_ms), ..request.clone() };
        if self.jobs == 1 || self.indexed().is_some() {
            return self.call(timeout, |i, s| i.sandgrep_search_search().call_search_ast(s, request, p));
        }
        let started = Instant::now();
        let shards = self.in_shards(timeout, |i, s, index, count| {
            i.sandgrep_search_parallel().call_search_ast_shard(s, request, p, index, count)
        })?;
        let mut response =
            self.call(timeout, |i, s| i.sandgrep_search_parallel().call_merge_ast_shards(s, request, p, &shards))?;
        response.stats.elapsed_ms = started.elapsed().as_millis() as u64;
        Ok(response)
    }

    /// `shard(index, count)` on one instance per job, side by side.
    fn in_shards<T: Send>(
        &self,
        timeout: Duration,
        shard: impl Fn(
                &bindings::Sandgrep,
                &mut wasmtime::Store<engine::State>,
                u32,
                u32,
            ) -> wasmtime::Result<Result<T, SearchError>>
            + Sync,
    ) -> Result<Vec<T>, Error> {
        let count = self.jobs as u32;
        let shard = &shard;
        std::thread::scope(|scope| {
            let running: Vec<_> = (0..count)
                .map(|index| scope.spawn(move || self.call(timeout, |i, s| shard(i, s, index, count))))
                .collect();
            running
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|_| Err(Error::Crashed("a search thread panicked".into()))))
                .collect()
        })
    }

    /// The timeout of a call asking for `ms`, and the value to pass the
    /// guest instead when the policy lowers it.
    /// A text search's time limit, and the request with the host's cap on
    /// it when it asked for more.
    fn capped<'r>(&self, request: &'r SearchTextRequest) -> (Duration, std::borrow::Cow<'r, SearchTextRequest>) {
        match self.timeout(request.timeout_ms) {
            (timeout, Some(ms)) => {
                (timeout, std::borrow::Cow::Owned(SearchTextRequest { timeout_ms: Some(ms), ..request.clone() }))
            }
            (timeout, None) => (timeout, std::borrow::Cow::Borrowed(request)),
        }
    }

    fn timeout(&self, ms: Option<u32>) -> (Duration, Option<u32>) {
        let asked = guest_timeout(ms);
        if asked <= self.policy.max_timeout {
            (asked, None)
        } else {
            let max = self.policy.max_timeout;
            (max, Some(max.as_millis().min(u32::MAX.into()) as u32))
        }
    }

    pub fn list_files(&self, request: &ListFilesRequest) -> Result<ListFilesResponse, Error> {
        let p = &self.guest_policy;
        self.call(guest_timeout(None).min(self.policy.max_timeout), |i, s| {
            i.sandgrep_search_files().call_list_files(s, request, p)
        })
    }

    pub fn read_file(&self, request: &ReadFileRequest) -> Result<ReadFileResponse, Error> {
        let p = &self.guest_policy;
        self.call(guest_timeout(None).min(self.policy.max_timeout), |i, s| {
            i.sandgrep_search_files().call_read_file(s, request, p)
        })
    }

    /// `f` on a fresh instance, given the index directory `index`.
    fn fresh_call<T>(
        &self,
        index: Option<(&Path, FsPerms)>,
        timeout: Duration,
        f: impl Fn(&bindings::Sandgrep, &mut wasmtime::Store<engine::State>) -> wasmtime::Result<Result<T, SearchError>>,
    ) -> Result<T, Error> {
        let deadline = timeout + self.policy.deadline_grace;
        let memory = self.policy.memory_limit;
        self.runtime.call(&self.workspace, index, memory, timeout, deadline, f)?.map_err(Error::Search)
    }

    /// `f` on an instance without the index: one a long-lived host kept
    /// from an earlier call if there is one free, else a new one (kept
    /// after, one per job, while the process's kept helpers fit in
    /// [`limits::HELPERS_MEMORY`] and each in a quarter of it: searching
    /// batches of files needs a few MiB, one that met a huge line is let go).
    fn helper_call<T>(
        &self,
        timeout: Duration,
        f: impl Fn(&bindings::Sandgrep, &mut wasmtime::Store<engine::State>) -> wasmtime::Result<Result<T, SearchError>>,
    ) -> Result<T, Error> {
        let Some(session) = &self.session else { return self.fresh_call(None, timeout, f) };
        let pool = || session.helpers.lock().unwrap_or_else(|e| e.into_inner());
        let mut slot = pool().pop().map(|(helper, counted)| {
            HELPERS_KEPT.fetch_sub(counted, Ordering::Relaxed);
            helper
        });
        let deadline = timeout + self.policy.deadline_grace;
        let memory = self.policy.memory_limit;
        let answer = self.runtime.call_kept(&mut slot, &self.workspace, None, memory, timeout, deadline, f);
        if let Some(helper) = slot {
            let memory = helper.memory();
            let mut pool = pool();
            let most = limits::HELPERS_MEMORY as usize;
            if pool.len() < self.jobs && memory <= most / 4 {
                if HELPERS_KEPT.fetch_add(memory, Ordering::Relaxed) + memory <= most {
                    pool.push((helper, memory));
                } else {
                    HELPERS_KEPT.fetch_sub(memory, Ordering::Relaxed);
                }
            }
        }
        answer?.map_err(Error::Search)
    }

    /// `f` on the kept instance of a long-lived host when it is free, else
    /// on a fresh one; with the index directory, when there is an index.
    fn call<T>(
        &self,
        timeout: Duration,
        f: impl Fn(&bindings::Sandgrep, &mut wasmtime::Store<engine::State>) -> wasmtime::Result<Result<T, SearchError>>,
    ) -> Result<T, Error> {
        let deadline = timeout + self.policy.deadline_grace;
        let index = self.indexed().map(|d| (d, FsPerms::ReadOnly));
        if let Some((dir, _)) = index {
            cache::mark_used(dir, false);
        }
        let memory = self.policy.memory_limit;
        let kept = self
            .session
            .as_ref()
            .filter(|s| s.always || index.is_some())
            .and_then(|s| Some((s, s.kept.try_lock().ok()?)));
        if let Some((session, mut kept)) = kept {
            let generation = (session.unchanged_since)();
            let answer =
                self.runtime.call_kept(&mut kept, &self.workspace, index, memory, timeout, deadline, |i, s| {
                    i.sandgrep_search_index().call_unchanged_since(&mut *s, generation)?;
                    f(i, s)
                });
            // What the kept instance holds counts against its memory: a call
            // it cannot fit gets a fresh instance.
            if !matches!(answer, Err(Error::OutOfMemory(_))) {
                return answer?.map_err(Error::Search);
            }
        }
        self.fresh_call(index, timeout, f)
    }
}

/// Creates the index directory (the user's alone) and takes its lock,
/// following no link: whoever else can write there gets no say.
fn lock_index_dir(dir: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    // An index decides which files a search reads: only this user may have
    // written it. The index directory, `index/` and the cache directory
    // above them are this user's, no one else can write them, and none is
    // a link (a link could lead the index into a workspace).
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for d in dir.ancestors().take(3) {
        let m = std::fs::symlink_metadata(d)?;
        if m.file_type().is_symlink() {
            return Err(std::io::Error::other(format!("{} is a symbolic link", d.display())));
        }
        if m.uid() != me || m.mode() & 0o022 != 0 {
            return Err(std::io::Error::other(format!(
                "{} is not this user's alone (owner {}, mode {:o}): an index there could be forged",
                d.display(),
                m.uid(),
                m.mode() & 0o777
            )));
        }
    }
    let lock = open_regular(
        &dir.join("lock"),
        std::fs::OpenOptions::new().write(true).create(true).truncate(false).mode(0o600),
    )?;
    lock.lock()?;
    Ok(lock)
}

/// How soon after a stream's page was walked the next must be asked for to
/// take what the instances walked past its end: a reader slower than this
/// (a pager, say) sees the tree as it is when it asks, as one instance would
/// show it, not as it was a page ago.
const CARRIED: Duration = Duration::from_millis(100);

/// The file of an index directory naming its workspace.
const OWNER: &str = "workspace";

/// Days the index of a workspace that is gone is kept (a drive unmounted, a
/// workspace only a container sees, may come back).
const GONE_DAYS: u64 = 7;

/// The workspace of the index directory `dir` if it is gone and the index
/// was not written for [`GONE_DAYS`] days.
fn orphaned(dir: &Path) -> Option<PathBuf> {
    let owner = read_owner(dir).ok()?;
    let gone = std::fs::symlink_metadata(&owner).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    let written = [sandgrep_contract::index_file::NAME, sandgrep_contract::index_file::DELTA_NAME, "lock", OWNER]
        .iter()
        .filter_map(|f| std::fs::symlink_metadata(dir.join(f)).ok()?.modified().ok())
        .max()?;
    let old = written.elapsed().is_ok_and(|age| age > Duration::from_secs(GONE_DAYS * 24 * 3600));
    (gone && old).then_some(owner)
}

/// Whether `dir` is named as [`index_dir`] names index directories.
fn is_index_name(dir: &Path) -> bool {
    let name = dir.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    name.rsplit_once('-').is_some_and(|(_, hash)| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The file `path` of an index directory opened with `opts`, without
/// following a link or waiting on a FIFO: a regular file, or an error.
fn open_regular(path: &Path, opts: &mut std::fs::OpenOptions) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(f)
}

/// Records `workspace` as the owner of the index directory `dir` (locked).
fn write_owner(dir: &Path, workspace: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    let path = workspace.as_os_str().as_bytes();
    if read_owner(dir).is_ok_and(|owner| owner == workspace) {
        return Ok(());
    }
    let mut f = open_regular(
        &dir.join(OWNER),
        std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600),
    )?;
    std::io::Write::write_all(&mut f, path)
}

/// The workspace an index directory is of (none for one made before
/// owners were recorded).
fn read_owner(dir: &Path) -> std::io::Result<PathBuf> {
    use std::io::Read;
    use std::os::unix::ffi::OsStringExt;
    let mut bytes = Vec::new();
    open_regular(&dir.join(OWNER), std::fs::OpenOptions::new().read(true))?
        .take(libc::PATH_MAX as u64)
        .read_to_end(&mut bytes)?;
    if !bytes.starts_with(b"/") {
        return Err(std::io::Error::other("not a path"));
    }
    Ok(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// The index directory of `workspace` (canonical) in the user's cache: one
/// per workspace and policy (what the index may hold: redaction, denials),
/// named by a hash of both, so hosts with different policies do not rebuild
/// each other's. None when the cache and the workspace overlap (sandgrep
/// writes nothing in a workspace, and trusts nothing a workspace could
/// write), or when the cache lies in a git work tree (whose files a
/// repository's checkout writes: it could ship a forged index).
fn index_dir(workspace: &Path, policy: &GuestPolicy) -> Option<PathBuf> {
    let real = engine::real_cache_dir()?;
    if real.starts_with(workspace) || workspace.starts_with(&real) || real.ancestors().any(|a| a.join(".git").exists())
    {
        return None;
    }
    use std::os::unix::ffi::OsStrExt;
    let mut key = workspace.as_os_str().as_bytes().to_vec();
    key.push(u8::from(policy.redact));
    for glob in &policy.extra_deny {
        key.push(0);
        key.extend_from_slice(glob.as_bytes());
    }
    for rule in &policy.disabled_redaction_rules {
        key.push(1);
        key.extend_from_slice(rule.as_bytes());
    }
    // FNV-1a: the same name in every build.
    let hash = key.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let name: String = workspace.file_name().map_or(String::new(), |n| {
        n.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
    });
    Some(real.join("index").join(format!("{name}-{hash:016x}")))
}

fn guest_timeout(ms: Option<u32>) -> Duration {
    // The guest's own timeout, as it clamps it; the host deadline sits behind.
    Duration::from_millis(ms.map_or(TIMEOUT_MS.default, u64::from).clamp(TIMEOUT_MS.min, TIMEOUT_MS.max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_ends_in_the_first_batches_that_give_more_than_it_takes() {
        let mut tally = Tally::default();
        // Batches come back out of order: only the batches before the first
        // one not back yet count.
        assert_eq!(tally.add(1, 8, 10), None);
        assert_eq!(tally.add(3, 50, 10), None);
        // Exactly what the page takes: one more result would be needed to
        // know the page is cut.
        assert_eq!(tally.add(0, 2, 10), None);
        assert_eq!(tally.add(2, 1, 10), Some(2));
        assert_eq!(Tally::default().add(0, u64::MAX, u64::MAX), None);
    }

    #[test]
    fn kept_helpers_count_their_memory_and_give_it_back() {
        // (The only test of this binary that keeps helpers: the count is the
        // process's.)
        let t = tempfile::tempdir().unwrap();
        for i in 0..600 {
            std::fs::write(t.path().join(format!("f{i}.txt")), "a needle\n").unwrap();
        }
        let sandbox = Sandbox::open(t.path(), Policy::default()).unwrap().with_index(false).with_jobs(2);
        let sandbox = sandbox.with_session(|| None);
        for _ in 0..3 {
            let request = SearchTextRequest { output: Some(OutputMode::Count), ..SearchTextRequest::new("needle") };
            assert_eq!(sandbox.search_text(&request).unwrap().files.len(), 200);
        }
        let pool = sandbox.session.as_ref().unwrap().helpers.lock().unwrap().iter().map(|h| h.1).collect::<Vec<_>>();
        assert!(!pool.is_empty() && pool.len() <= 2, "{pool:?}");
        assert_eq!(HELPERS_KEPT.load(Ordering::Relaxed), pool.iter().sum::<usize>());
        drop(sandbox);
        assert_eq!(HELPERS_KEPT.load(Ordering::Relaxed), 0);
    }
}
