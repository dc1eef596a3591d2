//! The indexes in the user's cache, managed (SPEC §6 "Scale"): listed
//! (`sandgrep index --list`), pruned (`--prune`: workspaces gone, indexes of
//! another format, leftovers of interrupted builds) and kept under a size
//! cap (`SANDGREP_CACHE_MAX`, the least recently used going first).
//!
//! Paranoid by design: only directories named as sandgrep names index
//! directories, directly under `index/` and not links, are looked at; only
//! files named as sandgrep names its files are removed (a directory holding
//! anything else is left whole); nothing is removed from a directory whose
//! lock another process holds (a build, a refresh).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::{is_index_name, open_regular, read_owner, OWNER};

use sandgrep_contract::index_file::{
    checksum, DELTA_MAGIC, DELTA_NAME as DELTA, HEADER, MAGIC, NAME as INDEX, VERSION,
};
/// The file whose time says when searches last used an index.
const USED: &str = "used";
/// How stale the mark may get before a search writes it again.
const USED_EVERY: Duration = Duration::from_secs(60);

/// What an index directory's `index.v1` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// This build's: used as it is.
    Current,
    /// Another version's: the next build of its workspace rebuilds it.
    Old(u32),
    /// Not an index (damaged, truncated): rebuilt too.
    Damaged,
    /// No index file (a first build interrupted).
    Missing,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Current => "current",
            Format::Old(_) => "old",
            Format::Damaged => "damaged",
            Format::Missing => "none",
        }
    }
}

/// One index directory of the cache.
#[derive(Clone, Debug)]
pub struct IndexInfo {
    pub dir: PathBuf,
    /// The workspace it records (none for one made before owners were).
    pub workspace: Option<PathBuf>,
    /// Whether that workspace is there (not known without one).
    pub workspace_exists: Option<bool>,
    pub format: Format,
    /// Files in its table (from the header of a current index).
    pub files: Option<u64>,
    /// Bytes on disk of the whole directory, leftovers included.
    pub bytes: u64,
    /// Leftovers of interrupted builds among them (and a delta that belongs
    /// to no index there): files, and their bytes.
    pub leftover_files: u64,
    pub leftover_bytes: u64,
    /// When it was built (from the header of a current index).
    pub built: Option<SystemTime>,
    /// When a build or a search last used it.
    pub used: Option<SystemTime>,
}

/// The directory holding the index directories: `index/` of the real cache
/// directory, if it is one (not a link).
pub fn index_root() -> Option<PathBuf> {
    let root = crate::engine::real_cache_dir()?.join("index");
    std::fs::symlink_metadata(&root).ok().filter(|m| m.is_dir()).map(|_| root)
}

/// The index directories under `root` (named as sandgrep names them; links
/// and other entries left out), by name.
fn index_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|d| is_index_name(d))
        .collect();
    dirs.sort();
    dirs
}

/// What a build writes beside the index and removes when done.
fn is_leftover_name(name: &str) -> bool {
    sandgrep_contract::index_file::scratch(name).is_some()
}

/// Whether the delta in `dir` belongs to no index there: its header names
/// another index than the one beside it (or there is none of this
/// format). Searches ignore such a delta and the next refresh replaces it;
/// until then it is a leftover.
fn stale_delta(dir: &Path) -> bool {
    use std::io::Read;
    let head = |name: &str, len: usize| {
        let mut head = vec![0u8; len];
        let f = open_regular(&dir.join(name), std::fs::OpenOptions::new().read(true));
        f.and_then(|mut f| f.read_exact(&mut head)).ok().map(|_| head)
    };
    let Some(delta) = head(DELTA, 24) else { return false };
    if &delta[..8] != DELTA_MAGIC || delta[8..12] != VERSION.to_le_bytes() {
        return false;
    }
    // The index's header checksum is the id a delta names it by.
    let index = head(INDEX, HEADER).filter(|h| &h[..8] == MAGIC && h[8..12] == VERSION.to_le_bytes());
    index.is_none_or(|h| h[HEADER - 8..] != delta[16..24])
}

/// A file sandgrep makes in an index directory.
fn is_sandgrep_file(name: &str) -> bool {
    [INDEX, DELTA, "lock", OWNER, USED].contains(&name) || is_leftover_name(name)
}

/// Bytes a file takes on disk.
fn on_disk(m: &std::fs::Metadata) -> u64 {
    if m.blocks() == 0 {
        m.len()
    } else {
        m.blocks() * 512
    }
}

fn read_format(dir: &Path) -> (Format, Option<u64>, Option<SystemTime>) {
    use std::io::Read;
    let Ok(mut f) = open_regular(&dir.join(INDEX), std::fs::OpenOptions::new().read(true)) else {
        return (Format::Missing, None, None);
    };
    let mut head = [0u8; HEADER];
    if f.read_exact(&mut head).is_err() || &head[..8] != MAGIC {
        return (Format::Damaged, None, None);
    }
    let at = |i: usize| u64::from_le_bytes(head[i..i + 8].try_into().unwrap_or([0; 8]));
    let version = u32::from_le_bytes(head[8..12].try_into().unwrap_or([0; 4]));
    if version != VERSION {
        return (Format::Old(version), None, None);
    }
    if at(72) != checksum(&head[..72]) {
        return (Format::Damaged, None, None);
    }
    (Format::Current, Some(at(24)), Some(SystemTime::UNIX_EPOCH + Duration::from_nanos(at(64))))
}

/// What the index directory `dir` holds.
pub fn info(dir: &Path) -> IndexInfo {
    let workspace = read_owner(dir).ok();
    let workspace_exists = workspace
        .as_ref()
        .map(|w| !std::fs::symlink_metadata(w).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound));
    let (format, files, built) = read_format(dir);
    let (mut bytes, mut leftover_files, mut leftover_bytes, mut used) = (0, 0, 0, None::<SystemTime>);
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(m) = e.metadata() else { continue };
        bytes += on_disk(&m);
        let name = e.file_name();
        let name = name.to_string_lossy();
        if m.is_file() && (is_leftover_name(&name) || name == DELTA && stale_delta(dir)) {
            leftover_files += 1;
            leftover_bytes += on_disk(&m);
        }
        if m.is_file() && [INDEX, DELTA, USED].contains(&&*name) {
            used = used.max(m.modified().ok());
        }
    }
    IndexInfo {
        dir: dir.to_path_buf(),
        workspace,
        workspace_exists,
        format,
        files,
        bytes,
        leftover_files,
        leftover_bytes,
        built,
        used,
    }
}

/// Every index directory of the cache, by name.
pub fn list() -> Vec<IndexInfo> {
    index_root().map(|root| index_dirs(&root).iter().map(|d| info(d)).collect()).unwrap_or_default()
}

/// Marks the index directory `dir` (holding an index) as used now, unless
/// it was within [`USED_EVERY`] (or `always`): what the size cap's "least
/// recently used" reads. One `stat` a call; errors are ignored.
pub(crate) fn mark_used(dir: &Path, always: bool) {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(USED);
    let fresh = std::fs::symlink_metadata(&path)
        .ok()
        .and_then(|m| m.modified().ok())
        .is_some_and(|t| t.elapsed().is_ok_and(|age| age < USED_EVERY));
    if always || !fresh {
        let opts = &mut std::fs::OpenOptions::new();
        if let Ok(f) = open_regular(&path, opts.write(true).create(true).truncate(false).mode(0o600)) {
            let _ = f.set_modified(SystemTime::now());
        }
    }
}

/// Why an index directory (or part of it) was removed, or was not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Its workspace is gone.
    WorkspaceGone,
    /// Its index has another format (rebuilt at the next build anyway).
    OldFormat,
    /// Files an interrupted build left, or a delta of no index there (the
    /// index itself stays).
    Leftovers,
    /// Least recently used, and the cache was over its cap.
    OverCap,
    /// Kept: another process holds its lock (a build or refresh).
    Locked,
    /// Kept: it holds files sandgrep did not make.
    Foreign,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::WorkspaceGone => "workspace_gone",
            Reason::OldFormat => "old_format",
            Reason::Leftovers => "leftovers",
            Reason::OverCap => "over_cap",
            Reason::Locked => "locked",
            Reason::Foreign => "foreign_files",
        }
    }
}

/// One index directory pruned, evicted, or kept.
#[derive(Clone, Debug)]
pub struct Removal {
    pub dir: PathBuf,
    pub workspace: Option<PathBuf>,
    pub reason: Reason,
    /// Bytes freed (none when kept).
    pub bytes: u64,
}

/// Runs `remove` with `dir`'s lock held, if no one else holds it (and the
/// directory has one: sandgrep makes it before anything else).
fn locked<T>(dir: &Path, remove: impl FnOnce() -> T) -> Option<T> {
    let lock = open_regular(&dir.join("lock"), std::fs::OpenOptions::new().write(true)).ok()?;
    lock.try_lock().ok()?;
    let done = remove();
    drop(lock);
    Some(done)
}

/// Removes the index directory `dir` (locked by the caller) under `root`:
/// moved out of the way first (whoever indexes that workspace next makes a
/// new one), then its files one by one. Left as it is if it holds anything
/// sandgrep does not make. Bytes freed, or why not.
pub(crate) fn remove_dir(root: &Path, dir: &Path) -> Result<u64, Reason> {
    let mut names = Vec::new();
    let mut bytes = 0;
    for e in std::fs::read_dir(dir).map_err(|_| Reason::Foreign)? {
        let e = e.map_err(|_| Reason::Foreign)?;
        let name = e.file_name().into_string().map_err(|_| Reason::Foreign)?;
        let m = std::fs::symlink_metadata(e.path()).map_err(|_| Reason::Foreign)?;
        if !m.is_file() || !is_sandgrep_file(&name) {
            return Err(Reason::Foreign);
        }
        bytes += on_disk(&m);
        names.push(name);
    }
    let unique = std::time::UNIX_EPOCH.elapsed().map_or(0, |d| d.as_nanos());
    let gone = root.join(format!(".gone-{}-{unique}", std::process::id()));
    std::fs::rename(dir, &gone).map_err(|_| Reason::Foreign)?;
    for name in &names {
        let _ = std::fs::remove_file(gone.join(name));
    }
    if std::fs::remove_dir(&gone).is_err() {
        // Something came in meanwhile: put it back as it was.
        let _ = std::fs::rename(&gone, dir);
        return Err(Reason::Foreign);
    }
    Ok(bytes)
}

/// Removes the leftovers of interrupted builds in `dir` and a stale delta
/// ([`stale_delta`]), the caller holding its lock; bytes freed.
pub(crate) fn remove_leftovers(dir: &Path) -> u64 {
    let mut freed = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name();
        let Ok(m) = std::fs::symlink_metadata(e.path()) else { continue };
        let name = name.to_string_lossy();
        let leftover = is_leftover_name(&name) || name == DELTA && stale_delta(dir);
        if m.is_file() && leftover && std::fs::remove_file(e.path()).is_ok() {
            freed += on_disk(&m);
        }
    }
    freed
}

/// Why `--prune` would remove (part of) an index directory.
fn prunable(i: &IndexInfo) -> Option<Reason> {
    if i.workspace_exists == Some(false) {
        Some(Reason::WorkspaceGone)
    } else if matches!(i.format, Format::Old(_)) {
        Some(Reason::OldFormat)
    } else if i.leftover_files > 0 {
        Some(Reason::Leftovers)
    } else {
        None
    }
}

/// `sandgrep index --prune`: removes the indexes of workspaces that are
/// gone (at once: the user asked), the indexes of another format and the
/// leftovers of interrupted builds; what it removed, and what it kept that
/// it would have (locked, or holding foreign files).
pub fn prune() -> Vec<Removal> {
    let Some(root) = index_root() else { return Vec::new() };
    let mut out = Vec::new();
    for dir in index_dirs(&root) {
        if prunable(&info(&dir)).is_none() {
            continue;
        }
        let done = locked(&dir, || {
            // Looked at again now that it is ours.
            let now = info(&dir);
            let workspace = now.workspace.clone();
            match prunable(&now)? {
                Reason::Leftovers => Some(Removal {
                    dir: dir.clone(),
                    workspace,
                    reason: Reason::Leftovers,
                    bytes: remove_leftovers(&dir),
                }),
                reason => Some(match remove_dir(&root, &dir) {
                    Ok(bytes) => Removal { dir: dir.clone(), workspace, reason, bytes },
                    Err(why) => Removal { dir: dir.clone(), workspace, reason: why, bytes: 0 },
                }),
            }
        });
        match done {
            Some(Some(r)) => out.push(r),
            Some(None) => {}
            None => out.push(Removal {
                dir: dir.clone(),
                workspace: read_owner(&dir).ok(),
                reason: Reason::Locked,
                bytes: 0,
            }),
        }
    }
    out
}

/// The cap on the bytes of the cache's indexes: `SANDGREP_CACHE_MAX`
/// (bytes, or with a K, M or G suffix; `none` for no cap), else
/// [`crate::limits::INDEX_CACHE_MAX`].
pub fn cap() -> Result<Option<u64>, String> {
    let Some(v) = std::env::var_os("SANDGREP_CACHE_MAX") else { return Ok(Some(crate::limits::INDEX_CACHE_MAX)) };
    let v = v.to_string_lossy();
    let s = v.trim();
    if s.is_empty() {
        return Ok(Some(crate::limits::INDEX_CACHE_MAX));
    }
    if s.eq_ignore_ascii_case("none") || s.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let (digits, unit) = match s.as_bytes()[s.len() - 1].to_ascii_uppercase() {
        b'K' => (&s[..s.len() - 1], 1u64 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("SANDGREP_CACHE_MAX={s:?}: not a size (bytes, or with K, M or G; or none)"))?;
    Ok(Some(n.saturating_mul(unit)))
}

/// Keeps the cache's indexes within [`cap`]: while they take more, removes
/// the least recently used one (by its build or a search's mark) other
/// than `keep` (the one just built) and those another process holds. What
/// it removed; an error for a cap it cannot read.
pub fn enforce_cap(keep: &Path) -> Result<Vec<Removal>, String> {
    let Some(cap) = cap()? else { return Ok(Vec::new()) };
    let Some(root) = index_root() else { return Ok(Vec::new()) };
    Ok(enforce_cap_in(&root, cap, keep))
}

/// Index directories a long-lived host of this process keeps fresh (each
/// of `serve`'s tenants, `mcp`'s workspace): the cap never removes them.
static IN_USE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// An index directory in use for as long as this lives ([`IN_USE`]).
pub(crate) struct InUse(PathBuf);

impl InUse {
    pub(crate) fn new(dir: &Path) -> InUse {
        IN_USE.lock().unwrap_or_else(|e| e.into_inner()).push(dir.to_path_buf());
        InUse(dir.to_path_buf())
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        let mut dirs = IN_USE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = dirs.iter().position(|d| *d == self.0) {
            dirs.swap_remove(at);
        }
    }
}

fn enforce_cap_in(root: &Path, cap: u64, keep: &Path) -> Vec<Removal> {
    let mut all: Vec<IndexInfo> = index_dirs(root).iter().map(|d| info(d)).collect();
    let mut total: u64 = all.iter().map(|i| i.bytes).sum();
    if total <= cap {
        return Vec::new();
    }
    let in_use = IN_USE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    all.retain(|i| i.dir != keep && !in_use.contains(&i.dir));
    all.sort_by_key(|i| i.used);
    let mut out = Vec::new();
    for i in all {
        if total <= cap {
            break;
        }
        if let Some(Ok(bytes)) = locked(&i.dir, || remove_dir(root, &i.dir)) {
            total = total.saturating_sub(bytes);
            out.push(Removal { dir: i.dir, workspace: i.workspace, reason: Reason::OverCap, bytes });
        }
    }
    out
}

/// Bytes as people read them: `812 B`, `1.5 KiB`, `42.0 MiB`, `3.2 GiB`.
pub fn size(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KiB", b / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.1} MiB", b / 1_048_576.0),
        _ => format!("{:.1} GiB", b / 1_073_741_824.0),
    }
}

/// The line saying that the cap removed an index.
pub fn evicted_line(r: &Removal) -> String {
    let whose = r.workspace.as_ref().map_or_else(|| r.dir.display().to_string(), |w| w.display().to_string());
    format!(
        "removed the index of {whose} ({}, least recently used: the index cache was over its cap, SANDGREP_CACHE_MAX)",
        size(r.bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_never_removes_an_index_this_process_keeps_fresh() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("a-0123456789abcdef"), root.path().join("b-0123456789abcdef"));
        for dir in [&a, &b] {
            std::fs::create_dir(dir).unwrap();
            std::fs::write(dir.join("lock"), b"").unwrap();
            std::fs::write(dir.join(INDEX), vec![0u8; 10_000]).unwrap();
        }
        let nobody = root.path().join("none");
        let kept = InUse::new(&a);
        let removed: Vec<_> = enforce_cap_in(root.path(), 0, &nobody).into_iter().map(|r| r.dir).collect();
        assert_eq!(removed, [b.clone()]);
        assert!(a.join(INDEX).is_file());
        drop(kept);
        let removed: Vec<_> = enforce_cap_in(root.path(), 0, &nobody).into_iter().map(|r| r.dir).collect();
        assert_eq!(removed, [a]);
    }

    #[test]
    fn only_sandgrep_names_are_leftovers() {
        for yes in [
            "index.v1.0123456789abcdef.tmp",
            "index.v1.0123456789ABCDEF.run0",
            "index.v1.0000000000000000.run12",
            "index.v1.0123456789abcdef.part",
        ] {
            assert!(is_leftover_name(yes), "{yes}");
        }
        for no in [
            "index.v1",
            "index.v1.tmp",
            "index.v1.0123456789abcdef.run",
            "index.v1.0123456789abcdeg.tmp",
            "index.v1.0123456789abcdef.tmp.bak",
            "index.v1.0123456789abcdef.runx",
            "index.v1.0123456789abcdef.part0",
            "precious",
            "index.v1.0123456789abcde.tmp",
        ] {
            assert!(!is_leftover_name(no), "{no}");
        }
        assert!(is_sandgrep_file("lock") && is_sandgrep_file("workspace") && !is_sandgrep_file("notes.txt"));
    }
}
