//! Walking the workspace: ignore rules as ripgrep applies them, globs, file
//! types, the denylist, and an order that is bytewise by full path.
//!
//! Built on `ignore`'s serial walker (its parallel walker yields nothing on
//! wasip2). Two things it cannot do inside the sandbox are done here:
//! - ignore files of a root's parent directories: `ignore` finds them through
//!   `canonicalize`, which WASI lacks, so [`Walker::walk`] adds those inside
//!   the workspace explicitly, and tells `ignore` when a `.git` lies above;
//! - bytewise order: sorting siblings by name visits `a/` before `a.txt`;
//!   [`sibling_order`] compares a directory as `name/`.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{Types, TypesBuilder};
use ignore::WalkBuilder;

use crate::confine::{self, dir_sort_key, realpath};
use crate::request::WalkOptions;
use crate::{SearchError, Workspace};

/// A root to walk: a normalized workspace-relative path that exists.
#[derive(Clone, Debug)]
pub struct Root {
    pub rel: String,
    pub is_dir: bool,
}

impl Root {
    fn key(&self) -> String {
        dir_sort_key(&self.rel, self.is_dir)
    }
}

/// One entry the walk yields.
#[derive(Debug)]
pub struct Entry {
    pub rel: String,
    pub path: PathBuf,
    pub is_file: bool,
    pub is_dir: bool,
}

/// A problem met while walking, already phrased with workspace-relative paths.
#[derive(Debug)]
pub struct WalkError {
    pub message: String,
    /// An entry that could not be read (as opposed to, say, a bad line in
    /// an ignore file).
    pub unreadable: bool,
}

pub struct Walker<'a> {
    ws: &'a Workspace,
    opts: &'a WalkOptions,
    overrides: Override,
    types: Types,
    /// Entries skipped by the denylist, shared with the walk's filter.
    pub denied: Arc<AtomicU64>,
}

impl<'a> Walker<'a> {
    /// Whether an include glob selects the directory `path` (to list it).
    pub fn dir_selected(&self, path: &Path) -> bool {
        self.opts.include_globs.is_empty() || self.overrides.matched(path, true).is_whitelist()
    }

    pub fn new(ws: &'a Workspace, opts: &'a WalkOptions) -> Result<Walker<'a>, SearchError> {
        let mut ob = OverrideBuilder::new(&ws.root);
        let bad_glob = |g: &str, e: ignore::Error| SearchError::InvalidArgument(format!("invalid glob {g:?}: {e}"));
        for g in &opts.include_globs {
            ob.add(g).map_err(|e| bad_glob(g, e))?;
        }
        for g in &opts.exclude_globs {
            let g = g.strip_prefix('!').unwrap_or(g);
            ob.add(&format!("!{g}")).map_err(|e| bad_glob(g, e))?;
        }
        let overrides = ob.build().map_err(|e| SearchError::InvalidArgument(e.to_string()))?;
        let mut tb = TypesBuilder::new();
        tb.add_defaults();
        for t in &opts.types {
            if !tb.definitions().iter().any(|d| d.name() == t) {
                return Err(SearchError::InvalidArgument(format!(
                    "unknown file type {t:?} (ripgrep's type names, e.g. rust, py, js, ts, go, java, c, cpp, json, md)"
                )));
            }
            tb.select(t);
        }
        let types = tb.build().map_err(|e| SearchError::InvalidArgument(e.to_string()))?;
        Ok(Walker { ws, opts, overrides, types, denied: Arc::new(AtomicU64::new(0)) })
    }

    /// Normalizes the requested roots, checks they exist, and orders them so
    /// their walks concatenate into one bytewise-sorted stream (a root inside
    /// another is dropped: its files are already covered).
    pub fn roots(&self, paths: &[String]) -> Result<Vec<Root>, SearchError> {
        let mut roots = Vec::with_capacity(paths.len());
        for p in paths {
            let rel = self.ws.resolve(p)?;
            let meta = std::fs::metadata(self.ws.fs_path(&rel)).map_err(|e| io_error(&rel, &e))?;
            roots.push(Root { rel, is_dir: meta.is_dir() });
        }
        roots.sort_by_key(Root::key);
        let mut kept: Vec<Root> = Vec::with_capacity(roots.len());
        for r in roots {
            if !kept.iter().any(|k| k.is_dir && confine::is_within(&r.rel, &k.rel)) {
                kept.push(r);
            }
        }
        Ok(kept)
    }

    /// Walks one root in bytewise path order. With `after`, directories whose
    /// whole subtree sorts before it are not entered (cursor resumption).
    pub fn walk<'w>(&'w self, root: &Root, after: Option<&'w str>) -> Walk<'w, 'a> {
        Walk { walker: self, after, stack: vec![self.build(&root.rel, root.is_dir, after)] }
    }

    fn build(&self, rel: &str, is_dir: bool, after: Option<&str>) -> ignore::Walk {
        let opts = self.opts;
        let mut b = WalkBuilder::new(self.ws.fs_path(rel));
        b.standard_filters(!opts.no_ignore)
            .hidden(!opts.hidden)
            // Parent ignore files are added below; .git internals are never read.
            .parents(false)
            .git_global(false)
            .git_exclude(false)
            // Links are followed by `Walk` itself: walkdir's loop check needs
            // same-file, which WASI lacks.
            .follow_links(false)
            .max_depth(opts.max_depth)
            .overrides(self.overrides.clone())
            .types(self.types.clone());
        if !opts.no_ignore {
            b.add_custom_ignore_filename(".rgignore");
            let git_above = is_dir && self.add_parent_ignores(&mut b, rel);
            b.require_git(!(git_above || self.ws.inside_git));
        }
        let follow = opts.follow_symlinks;
        b.sort_by_file_path(move |a, b| sibling_order(a, b, follow));
        let denied = self.denied.clone();
        let ws = self.ws.clone();
        let after = after.map(str::to_string);
        b.filter_entry(move |ent| {
            let name = ent.file_name().to_string_lossy();
            let parent = ent.path().parent().and_then(Path::file_name).map(|p| p.to_string_lossy());
            let is_dir = ent.file_type().is_some_and(|t| t.is_dir());
            let rel = if ws.deny.has_extra() { ws.rel_path(ent.path()) } else { String::new() };
            if ws.deny.entry_denied(&rel, &name, parent.as_deref(), is_dir) {
                denied.fetch_add(1, AtomicOrdering::Relaxed);
                return false;
            }
            match (&after, ent.file_type()) {
                (Some(after), Some(ft)) if ft.is_dir() => !subtree_before(&ws.rel_path(ent.path()), true, after),
                _ => true,
            }
        });
        b.build()
    }

    /// With follow-symlinks: what a link at `rel` leads to, as a walk entry
    /// (a file), a nested walk (a directory), or an error (broken, a loop,
    /// or leading outside the workspace).
    fn follow(&self, rel: &str, path: PathBuf, after: Option<&str>) -> Option<Result<Followed, WalkError>> {
        let err = |message: String| Some(Err(WalkError { message, unreadable: true }));
        let target = match realpath(self.ws, rel) {
            Ok(t) => t,
            Err(e) => return err(crate::error_message(&e)),
        };
        if self.ws.denied(&target) {
            self.denied.fetch_add(1, AtomicOrdering::Relaxed);
            return None;
        }
        match std::fs::metadata(self.ws.fs_path(&target)) {
            Ok(m) if m.is_dir() => {
                if after.is_some_and(|a| subtree_before(rel, true, a)) {
                    return None;
                }
                // A loop: the link leads to a directory the path already passes through.
                let parts: Vec<&str> = rel.split('/').collect();
                for i in 0..parts.len() {
                    let ancestor = if i == 0 { ".".to_string() } else { parts[..i].join("/") };
                    if realpath(self.ws, &ancestor).is_ok_and(|a| a == target) {
                        return err(format!("{rel}: symbolic link loop"));
                    }
                }
                Some(Ok(Followed::Dir(self.build(rel, true, after))))
            }
            Ok(m) if m.is_file() => {
                Some(Ok(Followed::File(Entry { rel: rel.to_string(), path, is_file: true, is_dir: false })))
            }
            Ok(_) => None,
            Err(e) => err(crate::error_message(&io_error(rel, &e))),
        }
    }

    /// Adds the ignore files of `rel`'s ancestors inside the workspace, with
    /// ripgrep's precedence (`.rgignore` over `.ignore` over `.gitignore`,
    /// deeper over shallower). Returns whether a `.git` exists above `rel`.
    fn add_parent_ignores(&self, b: &mut WalkBuilder, rel: &str) -> bool {
        if rel == "." {
            return false;
        }
        let mut ancestors = vec![".".to_string()];
        let parts: Vec<&str> = rel.split('/').collect();
        for i in 1..parts.len() {
            ancestors.push(parts[..i].join("/"));
        }
        let mut git_seen = false;
        let mut files: [Vec<PathBuf>; 3] = Default::default();
        for a in &ancestors {
            let dir = self.ws.fs_path(a);
            git_seen |= dir.join(".git").exists();
            for (i, name) in [".gitignore", ".ignore", ".rgignore"].iter().enumerate() {
                let f = dir.join(name);
                if (i > 0 || git_seen) && f.is_file() {
                    files[i].push(f);
                }
            }
        }
        for f in files.iter().flatten() {
            // An unreadable or malformed parent ignore file is skipped, as
            // ripgrep does.
            let _ = b.add_ignore(f);
        }
        git_seen
    }
}

enum Followed {
    File(Entry),
    Dir(ignore::Walk),
}

/// The entries of one root, in order, with followed directory links walked
/// in place.
pub struct Walk<'w, 'a> {
    walker: &'w Walker<'a>,
    after: Option<&'w str>,
    stack: Vec<ignore::Walk>,
}

impl Iterator for Walk<'_, '_> {
    type Item = Result<Entry, WalkError>;

    fn next(&mut self) -> Option<Self::Item> {
        let ws = self.walker.ws;
        loop {
            let item = match self.stack.last_mut()?.next() {
                Some(item) => item,
                None => {
                    self.stack.pop();
                    continue;
                }
            };
            let ent = match item {
                Ok(ent) => ent,
                Err(err) => return Some(Err(describe(ws, &err))),
            };
            let rel = ws.rel_path(ent.path());
            let ft = ent.file_type();
            if ent.path_is_symlink() && self.walker.opts.follow_symlinks && ent.depth() > 0 {
                match self.walker.follow(&rel, ent.into_path(), self.after) {
                    None => continue,
                    Some(Ok(Followed::Dir(walk))) => {
                        self.stack.push(walk);
                        continue;
                    }
                    Some(Ok(Followed::File(entry))) => return Some(Ok(entry)),
                    Some(Err(e)) => return Some(Err(e)),
                }
            }
            return Some(Ok(Entry {
                rel,
                is_file: ft.is_some_and(|t| t.is_file()),
                is_dir: ft.is_some_and(|t| t.is_dir()),
                path: ent.into_path(),
            }));
        }
    }
}

/// Whether everything at or under `rel` sorts before the cursor path `after`
/// (so a resumed walk can skip it). `after` itself is not "before": the
/// caller decides whether to resume inside it.
pub fn subtree_before(rel: &str, is_dir: bool, after: &str) -> bool {
    if rel == "." {
        return false;
    }
    if is_dir {
        let key = dir_sort_key(rel, true);
        key.as_str() < after && !after.starts_with(&key)
    } else {
        rel < after
    }
}

/// Orders two siblings as their full paths (and their contents') sort
/// bytewise: a directory `a` compares as `a/`. Only a name that is a prefix of
/// its sibling's, followed by a byte below `/`, needs the file type.
fn sibling_order(a: &Path, b: &Path, follow: bool) -> Ordering {
    let name = |p: &Path| p.file_name().map(|n| n.as_encoded_bytes().to_vec()).unwrap_or_default();
    let (an, bn) = (name(a), name(b));
    let is_dir = |p: &Path| {
        let meta = if follow { std::fs::metadata(p) } else { std::fs::symlink_metadata(p) };
        meta.map(|m| m.is_dir()).unwrap_or(false)
    };
    if bn.len() > an.len() && bn.starts_with(&an) && bn[an.len()] < b'/' {
        return if is_dir(a) { Ordering::Greater } else { Ordering::Less };
    }
    if an.len() > bn.len() && an.starts_with(&bn) && an[bn.len()] < b'/' {
        return if is_dir(b) { Ordering::Less } else { Ordering::Greater };
    }
    an.cmp(&bn)
}

/// Phrases an I/O error on a workspace path for the caller.
pub fn io_error(rel: &str, err: &std::io::Error) -> SearchError {
    match err.kind() {
        std::io::ErrorKind::NotFound => SearchError::NotFound(rel.to_string()),
        std::io::ErrorKind::PermissionDenied => {
            SearchError::Io(format!("{rel}: not permitted (unreadable, or a link leading outside the workspace)"))
        }
        _ => SearchError::Io(format!("{rel}: {}", plain_io_message(err))),
    }
}

/// An io::Error's message without the path some platforms append.
pub fn plain_io_message(err: &std::io::Error) -> String {
    match err.raw_os_error() {
        Some(_) => std::io::Error::from(err.kind()).to_string(),
        None => err.to_string(),
    }
}

fn describe(ws: &Workspace, err: &ignore::Error) -> WalkError {
    match err {
        ignore::Error::WithPath { path, err } => {
            let inner = describe(ws, err);
            WalkError { message: format!("{}: {}", ws.rel_path(path), inner.message), unreadable: inner.unreadable }
        }
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => describe(ws, err),
        ignore::Error::Partial(errs) => match errs.first() {
            Some(e) => describe(ws, e),
            None => WalkError { message: "unknown error".into(), unreadable: false },
        },
        ignore::Error::Loop { child, .. } => {
            WalkError { message: format!("{}: symbolic link loop", ws.rel_path(child)), unreadable: true }
        }
        ignore::Error::Io(e) if e.to_string().contains("Illegal byte sequence") => WalkError {
            message:
                "a file name that is not UTF-8 cannot be read inside the sandbox; the rest of its directory is missing"
                    .into(),
            unreadable: true,
        },
        ignore::Error::Io(e) => WalkError { message: plain_io_message(e), unreadable: true },
        other => WalkError { message: other.to_string(), unreadable: false },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x\n").unwrap();
        }
        dir
    }

    fn walk_all(ws: &Workspace, opts: &WalkOptions, root: &str, after: Option<&str>) -> Vec<String> {
        let w = Walker::new(ws, opts).unwrap();
        let roots = w.roots(&[root.to_string()]).unwrap();
        roots
            .iter()
            .flat_map(|r| w.walk(r, after).collect::<Vec<_>>())
            .filter_map(|e| e.ok().filter(|e| e.is_file).map(|e| e.rel))
            .filter(|rel| after.is_none_or(|a| rel.as_str() >= a))
            .collect()
    }

    #[test]
    fn order_is_bytewise_by_full_path() {
        let dir = tree(&["a/x", "a.txt", "a-b/y", "a0", "b", "A"]);
        let ws = Workspace::new(dir.path());
        let got = walk_all(&ws, &WalkOptions::default(), ".", None);
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(got, sorted);
        assert_eq!(got.len(), 6);
    }

    #[test]
    fn denylist_and_resume() {
        let dir = tree(&["a/1", "b/2", "b/c/3", "d/id_rsa", "d/ok", ".env", "e/x.pem"]);
        let ws = Workspace::new(dir.path());
        let opts = WalkOptions { hidden: true, ..Default::default() };
        assert_eq!(walk_all(&ws, &opts, ".", None), ["a/1", "b/2", "b/c/3", "d/ok"]);
        assert_eq!(walk_all(&ws, &opts, ".", Some("b/c/3")), ["b/c/3", "d/ok"]);
    }

    #[test]
    fn parent_ignore_files_apply_to_a_subdirectory_root() {
        let dir = tree(&["src/keep.rs", "src/gen/skip.rs", "src/x.log"]);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "gen/\n*.log\n").unwrap();
        let ws = Workspace::new(dir.path());
        assert_eq!(walk_all(&ws, &WalkOptions::default(), "src", None), ["src/keep.rs"]);
    }

    #[test]
    fn unknown_type_and_bad_glob_are_clear_errors() {
        let ws = Workspace::new(".");
        let opts = WalkOptions { types: vec!["nosuchtype".into()], ..Default::default() };
        assert!(matches!(Walker::new(&ws, &opts), Err(SearchError::InvalidArgument(m)) if m.contains("nosuchtype")));
        let opts = WalkOptions { include_globs: vec!["a[".into()], ..Default::default() };
        assert!(matches!(Walker::new(&ws, &opts), Err(SearchError::InvalidArgument(_))));
    }
}
