//! Walking the workspace: ignore rules as ripgrep applies them, globs, file
//! types, the denylist, and the order of `rg --sort path`
//! ([`confine::path_cmp`]): each directory's names bytewise, a directory's
//! contents right after it.
//!
//! The walk is our own, on `ignore`'s matchers (gitignore files, globs,
//! types), and goes descriptor by descriptor ([`crate::fs`]): each directory
//! is listed once through the descriptor it was opened as, each child opened
//! by its name relative to it, never following a link; with
//! follow-symlinks a link is resolved by [`confine::open`], which checks
//! where it leads first. Ignore files are read the same way (a FIFO is never
//! opened, a link to a denied file is denied) and their content is never
//! quoted back. Precedence is `ignore`'s: overrides (globs) first, then
//! ignore files — `.rgignore` over `.ignore` over `.gitignore` over
//! `.git/info/exclude` over the request's own (rg's `--ignore-file`), each
//! from the deepest directory up, the git ones only inside a git repository
//! and not past its root (unless no-require-git) — then file types, then
//! hidden names. The request's ignore options turn each kind off as rg's
//! flags do. The ancestors of a root inside the workspace count as levels
//! of the walk (rg reads them as parents); above the workspace, the host
//! only says whether a `.git` lies there. A walk checks its deadline as it
//! goes, so a tree with no file to search in it still ends in time.

use std::cell::{Cell, RefCell};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{Types, TypesBuilder};
use ignore::Match;
use sandgrep_contract::limits::OPEN_DIRS;

use crate::confine::{self, path_cmp, Opened, Target};
use crate::error::{error_message, plain_io_message};
use crate::fs::{Dir, Kind, SearchFile};
use crate::request::{TypeEdit, WalkOptions};
use crate::{SearchError, WalkPart as Part, Workspace};

/// Largest ignore file read; a larger one is left out with a warning.
const MAX_IGNORE_FILE: u64 = 1 << 20;

/// A root to walk: a normalized workspace-relative path that exists, opened.
#[derive(Clone, Debug)]
pub struct Root {
    pub rel: String,
    pub is_dir: bool,
    /// A regular file (not a FIFO, socket or device).
    pub is_file: bool,
    opened: Opened,
}

impl Root {
    /// Whether the root is reached through a link (`-L`, or a root named
    /// by a link): what is below it is walked by where the link leads.
    pub fn through_link(&self) -> bool {
        self.opened.real != self.rel
    }
}

/// The roots that are files: named by the request, not found in a walk.
pub fn named_files(roots: &[Root]) -> Vec<String> {
    roots.iter().filter(|r| r.is_file).map(|r| r.rel.clone()).collect()
}

/// One entry the walk yields.
#[derive(Clone, Debug)]
pub struct Entry {
    pub rel: String,
    /// The path ignore matchers see (not for opening: see [`Entry::open`]).
    pub path: PathBuf,
    pub is_file: bool,
    pub is_dir: bool,
    /// Where a followed link led: the real path, when it is not `rel`.
    pub real: Option<String>,
    /// Where the entry really is: its directory and its name there.
    at: Option<(Rc<Dir>, String)>,
    /// In a walk kept between calls (which holds no descriptors: a long-lived
    /// host would run out), its directory is found again from the root.
    kept: Option<Rc<Reopen>>,
}

/// The directories of the last path opened again after a walk (an entry of
/// a kept walk, a file handed out to search), from the root down, each
/// without following a link; the next is mostly in the same one. At most
/// [`OPEN_DIRS`] of them stay open (a deeper path's outer ones are opened
/// again from the root when needed). A kept walk's holds its root only
/// while a call replays it (see [`Reopen::release`]).
#[derive(Debug, Default)]
pub struct Reopen {
    root: RefCell<Option<Rc<Dir>>>,
    open: RefCell<(String, Vec<Option<Rc<Dir>>>)>,
}

impl Reopen {
    /// For a walk of `roots` under `opts` that may be kept: one that follows
    /// no link, from roots named as they are (so every entry's path is
    /// where it is).
    pub fn for_walk(ws: &Workspace, opts: &WalkOptions, roots: &[Root]) -> Option<Rc<Reopen>> {
        let plain = !opts.follow_symlinks && roots.iter().all(|r| r.opened.real == r.rel);
        Some(Reopen::new(ws.root_dir().ok().filter(|_| plain)?))
    }

    /// Directories opened from `root`.
    pub fn new(root: Rc<Dir>) -> Rc<Reopen> {
        Rc::new(Reopen { root: RefCell::new(Some(root)), open: Default::default() })
    }

    /// Opens from `other`'s root from now on (a kept walk replayed by a new call).
    pub fn take_root(&self, other: &Reopen) {
        self.release();
        *self.root.borrow_mut() = other.root.take();
    }

    /// Closes everything it holds open (at the end of a call).
    pub fn release(&self) {
        self.root.take();
        *self.open.borrow_mut() = Default::default();
    }

    /// The directory `path` (`""`: the root), open. Each directory not
    /// open yet is first passed to `denied` (its path, name and parent's
    /// name): `Err(None)` if it says so.
    pub fn dir(
        &self,
        path: &str,
        denied: impl Fn(&str, &str, Option<&str>) -> bool,
    ) -> Result<Rc<Dir>, Option<std::io::Error>> {
        let root = self.root.borrow().clone().ok_or_else(|| {
            Some(std::io::Error::new(std::io::ErrorKind::NotFound, "the walk's directories are closed"))
        })?;
        let mut open = self.open.borrow_mut();
        let (at, dirs) = &mut *open;
        let names = || path.split('/').filter(|_| !path.is_empty());
        if *at != path {
            let same = at.split('/').filter(|_| !at.is_empty()).zip(names()).take_while(|(a, b)| a == b).count();
            dirs.truncate(same);
            // From the deepest one still open.
            dirs.truncate(dirs.iter().rposition(Option::is_some).map_or(0, |i| i + 1));
            let from = dirs.len();
            at.clear();
            let mut up = from.checked_sub(1).and_then(|i| names().nth(i));
            for (depth, name) in names().enumerate().skip(from) {
                let here = path.match_indices('/').nth(depth).map_or(path, |(end, _)| &path[..end]);
                let parent = dirs.last().and_then(Option::as_ref).unwrap_or(&root);
                let dir = if denied(here, name, up) {
                    Err(None)
                } else {
                    parent.open_dir(name).map_err(Some).and_then(|dir| {
                        // As the walk: no bare repository below the top level
                        // (one may have been put where the walk saw a directory).
                        if depth >= 1 && confine::is_bare_repository(&dir) {
                            return Err(None);
                        }
                        Ok(dir)
                    })
                };
                match dir {
                    Ok(dir) => {
                        dirs.push(Some(dir));
                        if let Some(outer) = dirs.len().checked_sub(OPEN_DIRS + 1) {
                            dirs[outer] = None;
                        }
                    }
                    Err(e) => {
                        dirs.clear();
                        return Err(e);
                    }
                }
                up = Some(name);
            }
            at.push_str(path);
        }
        Ok(dirs.last().and_then(Option::clone).unwrap_or(root))
    }
}

impl Entry {
    /// The regular file `name` of `dir` (opened by the caller, who checked
    /// its path), known to callers as `rel`.
    pub fn file(ws: &Workspace, rel: String, dir: Rc<Dir>, name: String) -> Entry {
        Entry {
            path: ws.fs_path(&rel),
            rel,
            is_file: true,
            is_dir: false,
            real: None,
            at: Some((dir, name)),
            kept: None,
        }
    }

    /// The regular file at `rel`, as a kept walk keeps it: the walk that
    /// found it checked its path.
    pub fn file_kept(ws: &Workspace, rel: String, reopen: &Rc<Reopen>) -> Entry {
        let path = ws.fs_path(&rel);
        Entry { rel, path, is_file: true, is_dir: false, real: None, at: None, kept: Some(reopen.clone()) }
    }

    /// The entry as a kept walk keeps it: without its directory, found again
    /// through `reopen` when needed.
    pub fn kept(mut self, reopen: &Rc<Reopen>) -> Entry {
        self.at = None;
        self.kept = Some(reopen.clone());
        self
    }

    /// Its directory and its name there.
    fn place(&self) -> std::io::Result<(Rc<Dir>, &str)> {
        match (&self.at, &self.kept) {
            (Some((dir, name)), _) => Ok((dir.clone(), name)),
            (None, Some(reopen)) => {
                let (parent, name) = self.rel.rsplit_once('/').unwrap_or(("", &self.rel));
                // (The walk checked every name on the way.)
                let dir = reopen.dir(parent, |_, _, _| false).map_err(|e| {
                    e.unwrap_or_else(|| {
                        std::io::Error::new(std::io::ErrorKind::PermissionDenied, "a bare git repository")
                    })
                })?;
                Ok((dir, name))
            }
            (None, None) => Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file")),
        }
    }

    /// The entry's file, open (a regular file, reached without following a
    /// link the walk did not check).
    pub fn open(&self) -> std::io::Result<SearchFile> {
        if !self.is_file {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
        }
        let (dir, name) = self.place()?;
        dir.open_file(name)
    }

    /// Size and modification time, if they can be read.
    pub fn meta(&self) -> Option<crate::fs::Meta> {
        let (dir, name) = self.place().ok()?;
        dir.meta(name).ok()
    }
}

/// A problem met while walking, already phrased with workspace-relative paths.
#[derive(Clone, Debug)]
pub struct WalkError {
    pub message: String,
    /// An entry that could not be read (as opposed to, say, a bad line in
    /// an ignore file).
    pub unreadable: bool,
}

/// Entries a walk left out, by reason (counted where they are left out: a
/// directory once, its contents never walked to be counted).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Skips {
    pub denied: u64,
    pub ignored: u64,
    pub hidden: u64,
}

impl Skips {
    /// What was left out since `seen`.
    pub fn since(self, seen: Skips) -> Skips {
        Skips {
            denied: self.denied - seen.denied,
            ignored: self.ignored - seen.ignored,
            hidden: self.hidden - seen.hidden,
        }
    }

    pub fn any(self) -> bool {
        self != Skips::default()
    }

    pub fn add(&mut self, other: Skips) {
        self.denied += other.denied;
        self.ignored += other.ignored;
        self.hidden += other.hidden;
    }

    pub fn wit(self) -> crate::WalkSkips {
        crate::WalkSkips { denied: self.denied, ignored: self.ignored, hidden: self.hidden }
    }
}

/// The walk of a search's roots as one stream (what a kept instance can
/// replay: see [`crate::session`]).
#[derive(Clone, Debug)]
pub enum Step {
    Entry(Entry),
    Problem(WalkError),
    /// Entries the walk left out since the last step.
    Skipped(Skips),
    /// The walk stopped at its deadline.
    TimedOut,
}

pub struct Walker {
    ws: Workspace,
    opts: WalkOptions,
    overrides: Override,
    types: Types,
    /// Entries left out so far, by reason.
    skips: Cell<Skips>,
    /// When the walk stops (see [`Walk::timed_out`]).
    deadline: Option<Instant>,
    /// The request's ignore files (rg's `--ignore-file`), in the order
    /// given: below every ignore file the walk finds, the later above the
    /// earlier.
    explicit: Vec<Rc<Gitignore>>,
    /// Problems reading them, handed out by the first walk.
    problems: RefCell<Vec<WalkError>>,
}

/// The ignore files of one directory, and its parent's.
struct Level {
    parent: Option<Rc<Level>>,
    rgignore: Option<Rc<Gitignore>>,
    ignore: Option<Rc<Gitignore>>,
    gitignore: Option<Rc<Gitignore>>,
    /// `.git/info/exclude`, when `.git` is a directory here.
    exclude: Option<Rc<Gitignore>>,
    /// The directory holds `.git` (or `.jj`): a repository root.
    has_git: bool,
    /// Bytes of the workspace-relative path of an entry below this
    /// directory before the part its ignore files match (`dir/`): their
    /// globs are built from `.`, so `ignore` strips no prefix by components.
    under: usize,
}

impl Level {
    fn chain(self: &Rc<Level>) -> impl Iterator<Item = &Level> {
        std::iter::successors(Some(&**self), |l| l.parent.as_deref())
    }

    fn empty() -> Level {
        Level { parent: None, rgignore: None, ignore: None, gitignore: None, exclude: None, has_git: false, under: 0 }
    }
}

/// One directory being walked: its remaining children, sorted.
struct Frame {
    children: std::vec::IntoIter<(String, Kind)>,
    rel: String,
    /// Where the directory really is, when a followed link led here (else
    /// `rel`): its entries are checked against the denylist by their real
    /// paths too.
    real: Option<String>,
    /// Open while it is among the [`OPEN_DIRS`] innermost directories of
    /// the walk (its children are listed: it is only needed to open them).
    dir: Option<Rc<Dir>>,
    /// Which directory it was, taken when it was closed, to check it when
    /// it is opened again.
    identity: Option<(u64, u64)>,
    level: Rc<Level>,
    /// Depth of the children below the root.
    depth: usize,
    /// Where its children end when part of them were handed off (see
    /// [`Walk::hand_off`]): the first name not among them.
    end: Option<String>,
}

impl Frame {
    /// Where it really is.
    fn place(&self) -> &str {
        self.real.as_deref().unwrap_or(&self.rel)
    }
}

impl Walker {
    /// Whether an include glob selects the directory `path` (to list it).
    pub fn dir_selected(&self, path: &Path) -> bool {
        self.opts.include_globs.is_empty() || self.overrides.matched(path, true).is_whitelist()
    }

    pub fn new(ws: &Workspace, opts: &WalkOptions) -> Result<Walker, SearchError> {
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
        // (Building every type's globs costs more than many a served call.)
        if !opts.types.is_empty() || !opts.type_changes.is_empty() {
            tb.add_defaults();
            // rg's --type-add and --type-clear, in the order given.
            for edit in &opts.type_changes {
                match edit {
                    TypeEdit::Add(spec) => tb.add_def(spec).map_err(|e| SearchError::InvalidArgument(e.to_string()))?,
                    TypeEdit::Clear(name) => {
                        tb.clear(name);
                    }
                }
            }
        }
        // `TYPE` selects, `!TYPE` leaves out (rg's -t and -T).
        for t in &opts.types {
            let name = t.strip_prefix('!').unwrap_or(t);
            if !tb.definitions().iter().any(|d| d.name() == name) {
                return Err(SearchError::InvalidArgument(format!(
                    "unknown file type {name:?} (ripgrep's type names, e.g. rust, py, js, ts, go, java, c, cpp, json, md)"
                )));
            }
            if name.len() < t.len() {
                tb.negate(name);
            } else {
                tb.select(name);
            }
        }
        let types = tb.build().map_err(|e| SearchError::InvalidArgument(e.to_string()))?;
        let (ws, opts) = (ws.clone(), opts.clone());
        let mut walker = Walker {
            ws,
            opts,
            overrides,
            types,
            skips: Cell::default(),
            deadline: None,
            explicit: Vec::new(),
            problems: RefCell::default(),
        };
        walker.explicit = walker.explicit_ignores()?;
        Ok(walker)
    }

    /// The request's ignore files (rg's `--ignore-file`), read and parsed,
    /// their globs matched from the workspace root (rg's: from its current
    /// directory). Each is named as a path is (a link is followed inside
    /// the workspace only, a denied file is denied); one that cannot be read
    /// (a link out of the workspace included) is left out with a warning,
    /// as rg leaves it out with a message. A path outside the workspace is
    /// an error. (rg matches these
    /// case-sensitively even with --ignore-file-case-insensitive.)
    fn explicit_ignores(&self) -> Result<Vec<Rc<Gitignore>>, SearchError> {
        let mut all = Vec::new();
        if self.opts.no_ignore {
            return Ok(all);
        }
        let mut problems = Vec::new();
        for path in &self.opts.ignore.files {
            let shown = confine::normalize(path)?;
            let text = match self.ws.resolve(path) {
                Ok((_, Opened { target: Target::File(dir, name), .. })) => {
                    self.read_ignore_file(&dir, "", &name, Kind::File).map_err(|m| format!("{shown}: {m}"))
                }
                Ok((_, Opened { target: Target::Dir(_), .. })) => Err(format!("{shown}: is a directory; left out")),
                Ok((_, Opened { target: Target::Other, .. })) => Err(format!("{shown}: not a regular file; left out")),
                Err(SearchError::Denied(_)) => {
                    self.skip(|s| s.denied += 1);
                    Ok(None)
                }
                // (The message names the path.)
                Err(e) => Err(format!("{}; left out", error_message(&e))),
            };
            let text = match text {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(message) => {
                    // (A file of rules, not one searched: as rg, no error.)
                    problems.push(WalkError { message, unreadable: false });
                    continue;
                }
            };
            let from = self.ws.fs_path(&shown);
            if let Some(gi) = parse_ignore(&self.ws.root, from, &text, &shown, false, &mut problems) {
                all.push(gi);
            }
        }
        *self.problems.borrow_mut() = problems;
        Ok(all)
    }

    /// Whether `.ignore` and `.rgignore` apply.
    fn dot(&self) -> bool {
        !self.opts.ignore.no_dot
    }

    /// Whether `.gitignore` applies.
    fn vcs(&self) -> bool {
        !self.opts.ignore.no_vcs
    }

    /// Whether `.git/info/exclude` applies.
    fn exclude(&self) -> bool {
        !self.opts.ignore.no_vcs && !self.opts.ignore.no_exclude
    }

    /// Stop walking at `deadline`.
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Normalizes the requested roots, opens them, and orders them so their
    /// walks concatenate into one stream in path order (a root inside
    /// another is dropped: its files are already covered). (The CLI searches
    /// several roots in the order given, as rg does, one call each.)
    pub fn roots(&self, paths: &[String]) -> Result<Vec<Root>, SearchError> {
        let mut roots = Vec::with_capacity(paths.len());
        for p in paths {
            let (rel, opened) = self.ws.resolve(p)?;
            let (is_dir, is_file) = match opened.target {
                Target::Dir(_) => (true, false),
                Target::File(..) => (false, true),
                // (A FIFO, socket or device named: refused aloud, never
                // waited on, and never left out unsaid.)
                Target::Other => {
                    return Err(SearchError::Io(format!(
                        "{rel}: not a regular file or directory (a FIFO, socket or device): not read"
                    )))
                }
            };
            roots.push(Root { rel, is_dir, is_file, opened });
        }
        roots.sort_by(|a, b| path_cmp(&a.rel, &b.rel));
        let mut kept: Vec<Root> = Vec::with_capacity(roots.len());
        for r in roots {
            if !kept.iter().any(|k| k.is_dir && confine::is_within(&r.rel, &k.rel)) {
                kept.push(r);
            }
        }
        Ok(kept)
    }

    /// Walks one root in path order: the root itself, then
    /// (directories) everything below it. With `after`, directories whose
    /// whole subtree sorts before it are not entered (cursor resumption).
    pub fn walk(self: &Rc<Self>, root: &Root, after: Option<&str>) -> Walk {
        let at = match &root.opened.target {
            Target::File(dir, name) => Some((dir.clone(), name.clone())),
            _ => None,
        };
        let entry = Entry {
            rel: root.rel.clone(),
            path: self.ws.fs_path(&root.rel),
            is_file: root.is_file,
            is_dir: root.is_dir,
            real: root.through_link().then(|| root.opened.real.clone()),
            at,
            kept: None,
        };
        let after = after.map(str::to_string);
        let walker = self.clone();
        let mut walk = Walk { walker, after, stack: Vec::new(), queue: Vec::new(), steps: 0, timed_out: false };
        walk.queue.push(Ok(entry));
        // (Said once, by the first walk.)
        walk.queue.extend(self.problems.take().into_iter().map(Err));
        if let Target::Dir(dir) = &root.opened.target {
            let mut problems = Vec::new();
            let parent = self.ancestor_levels(root, &mut problems);
            walk.queue.extend(problems.into_iter().map(Err));
            // A root is entered even when it is a bare repository: it was named.
            let real = (root.opened.real != root.rel).then(|| root.opened.real.clone());
            walk.enter(root.rel.clone(), real, dir.clone(), parent, 1);
        }
        walk.queue.reverse();
        walk
    }

    /// The rest of the walk of `root` that another instance's walk handed
    /// off ([`Walk::hand_off`]). Its directory and those above it are
    /// opened from the workspace root again, each checked against the
    /// denylist, none through a link, and their ignore files read again
    /// (what they held that was wrong was said by the walk that entered
    /// them, and is not said twice). One replaced meanwhile is a problem.
    /// With `after`, as [`Walker::walk`].
    pub fn walk_rest(self: &Rc<Self>, root: &Root, part: &Part, after: Option<&str>) -> Walk {
        let (rel, depth) = (part.dir.as_str(), part.depth as usize);
        let walker = self.clone();
        let after = after.map(str::to_string);
        let mut walk = Walk { walker, after, stack: Vec::new(), queue: Vec::new(), steps: 0, timed_out: false };
        let counted = self.skips();
        let Ok(mut dir) = self.ws.root_dir() else { return walk.replaced(rel) };
        let mut level = None;
        let (mut at, mut up) = (String::from("."), None);
        let mut names = rel.split('/').filter(|n| !n.is_empty() && *n != ".");
        loop {
            // (As the walk: no bare repository below the root; the root
            // and what is above it were named.)
            let below = at != root.rel && confine::is_within(&at, &root.rel);
            let above = at != root.rel && confine::is_within(&root.rel, &at);
            let listing = dir.list().ok().map(|l| l.0).filter(|names| !below || !confine::lists_bare_repository(names));
            // (An ancestor of the root that cannot be listed has rules no
            // one knows, as in a walk; the walk listed the others.)
            let mut listing = match listing {
                Some(listing) => listing,
                None if above => Vec::new(),
                None => {
                    self.skips.set(counted);
                    return walk.replaced(rel);
                }
            };
            if !self.opts.no_ignore {
                level = Some(Rc::new(if above && self.opts.ignore.no_parent {
                    Level { has_git: has_git(&listing), parent: level, ..Level::empty() }
                } else {
                    self.level(&at, &at, &dir, &listing, level, &mut Vec::new())
                }));
            }
            let Some(name) = names.next() else {
                self.skips.set(counted);
                let (first, end) = (part.first.as_bytes(), part.end.as_ref().map(String::as_bytes));
                listing.retain(|(n, _)| n.as_bytes() >= first && end.is_none_or(|end| n.as_bytes() < end));
                listing.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                let level = level.unwrap_or_else(|| Rc::new(Level::empty()));
                walk.stack.push(Frame {
                    children: listing.into_iter(),
                    rel: rel.to_string(),
                    real: None,
                    dir: Some(dir),
                    identity: None,
                    level,
                    depth,
                    end: part.end.clone(),
                });
                return walk;
            };
            at = join(&at, name);
            let opened = (!self.ws.deny.entry_denied(&at, name, up, true)).then(|| dir.open_dir(name).ok()).flatten();
            let Some(opened) = opened else {
                self.skips.set(counted);
                return walk.replaced(rel);
            };
            (dir, up) = (opened, Some(name));
        }
    }

    /// The levels of the ancestors of a root inside the workspace,
    /// outermost first: the directories its real path passes through, opened
    /// on the way to it (a root reached through a link takes the rules of
    /// where it really is).
    fn ancestor_levels(&self, root: &Root, problems: &mut Vec<WalkError>) -> Option<Rc<Level>> {
        if root.rel == "." || self.opts.no_ignore {
            return None;
        }
        let mut level = None;
        // (Opened again one by one: a deep root keeps few open.)
        let reopen = Reopen::new(self.ws.root_dir().ok()?);
        for dir in &root.opened.ancestors {
            // An unreadable ancestor is no reason to fail: its rules are unknown.
            let handle = reopen.dir(if dir == "." { "" } else { dir }, |_, _, _| false);
            if let Some((handle, (names, _))) = handle.ok().and_then(|h| Some((h.clone(), h.list().ok()?))) {
                level = Some(Rc::new(if self.opts.ignore.no_parent {
                    // (rg's --no-ignore-parent: their rules do not apply;
                    // a repository among them still counts.)
                    Level { has_git: has_git(&names), parent: level, ..Level::empty() }
                } else {
                    self.level(dir, dir, &handle, &names, level, problems)
                }));
            }
        }
        level
    }

    /// The ignore files of the directory `rel` (really at `real`), open as
    /// `dir`, which holds `names`.
    fn level(
        &self,
        rel: &str,
        real: &str,
        dir: &Dir,
        names: &[(String, Kind)],
        parent: Option<Rc<Level>>,
        problems: &mut Vec<WalkError>,
    ) -> Level {
        let case_insensitive = self.opts.ignore.case_insensitive;
        // (Matched with paths relative to this directory: see `Level::under`.)
        let root = Path::new(".");
        let mut read = |name: &str| -> Option<Rc<Gitignore>> {
            let kind = names.iter().find(|(n, _)| n == name)?.1;
            let shown = join(rel, name);
            let text = match self.read_ignore_file(dir, &join(real, name), name, kind) {
                Ok(Some(text)) => text,
                Ok(None) => return None,
                Err(message) => {
                    // (A file of rules, not one searched: as rg, no error.)
                    problems.push(WalkError { message: format!("{shown}: {message}"), unreadable: false });
                    return None;
                }
            };
            parse_ignore(root, self.ws.fs_path(&shown), &text, &shown, case_insensitive, problems)
        };
        let (rgignore, ignore) = if self.dot() { (read(".rgignore"), read(".ignore")) } else { (None, None) };
        let gitignore = if self.vcs() { read(".gitignore") } else { None };
        let exclude = match names.iter().find(|(n, _)| n == ".git") {
            Some((_, kind @ (Kind::Dir | Kind::File))) if self.exclude() => {
                let shown = join(rel, ".git/info/exclude");
                let text =
                    if *kind == Kind::Dir { self.read_git_exclude(dir) } else { Ok(self.read_worktree_exclude(dir)) };
                match text {
                    Ok(Some(text)) => {
                        parse_ignore(root, self.ws.fs_path(&shown), &text, &shown, case_insensitive, problems)
                    }
                    Ok(None) => None,
                    Err(message) => {
                        problems.push(WalkError { message: format!("{shown}: {message}"), unreadable: false });
                        None
                    }
                }
            }
            _ => None,
        };
        let under = if rel == "." { 0 } else { rel.len() + 1 };
        Level { rgignore, ignore, gitignore, exclude, has_git: has_git(names), parent, under }
    }

    /// For a worktree (`dir`'s `.git` is a file, `gitdir: PATH`): the bytes
    /// of `info/exclude` in its repository's common directory (PATH's
    /// `commondir`), as `ignore` finds it — with PATH relative to the
    /// workspace root (rg's: to its current directory), and the common
    /// directory relative to PATH. Only inside the workspace, each directory
    /// opened without following a link, past no denied name but `.git`'s
    /// own; anything else is no exclude file (as rg, silently).
    fn read_worktree_exclude(&self, dir: &Dir) -> Option<Vec<u8>> {
        let first_line = |dir: &Dir, name: &str| -> Option<String> {
            let kind = dir.kind(name).ok().filter(|k| *k == Kind::File)?;
            let text = self.read_ignore_file(dir, "", name, kind).ok()??;
            let line = text.split(|&b| b == b'\n').next()?;
            Some(String::from_utf8(line.strip_suffix(b"\r").unwrap_or(line).to_vec()).ok()?)
        };
        let gitdir = first_line(dir, ".git")?.strip_prefix("gitdir: ")?.to_string();
        let gitdir = confine::normalize(&gitdir).ok()?;
        let common = first_line(&*self.open_git_dir(&gitdir)?, "commondir")?;
        if !common.starts_with('.') {
            return None;
        }
        let info = self.open_git_dir(&confine::normalize(&format!("{gitdir}/{common}/info")).ok()?)?;
        match info.kind("exclude").ok()? {
            Kind::File => self.read_ignore_file(&info, "", "exclude", Kind::File).ok()?,
            _ => None,
        }
    }

    /// The directory at the normalized path `rel`, opened from the root
    /// without following a link, through no denied name but `.git` and what
    /// is inside one.
    fn open_git_dir(&self, rel: &str) -> Option<Rc<Dir>> {
        let mut dir = self.ws.root_dir().ok()?;
        let (mut at, mut in_git) = (String::new(), false);
        for name in rel.split('/').filter(|n| *n != ".") {
            let parent = at.rsplit('/').next().filter(|p| !p.is_empty()).map(str::to_string);
            at = if at.is_empty() { name.to_string() } else { format!("{at}/{name}") };
            in_git |= name.eq_ignore_ascii_case(".git");
            if !in_git && self.ws.entry_denied(&at, name, parent.as_deref()) {
                return None;
            }
            dir = dir.open_dir(name).ok()?;
        }
        Some(dir)
    }

    /// The bytes of `.git/info/exclude` in `dir`, whose `.git` is a
    /// directory: reached without following a link (the walk never enters
    /// `.git`, and a link there is not followed), read only if it is a
    /// regular file, bounded as any ignore file.
    fn read_git_exclude(&self, dir: &Dir) -> Result<Option<Vec<u8>>, String> {
        let Ok(git) = dir.open_dir(".git") else { return Ok(None) };
        let Ok(info) = git.open_dir("info") else { return Ok(None) };
        match info.kind("exclude") {
            Ok(Kind::File) => self.read_ignore_file(&info, "", "exclude", Kind::File),
            Ok(Kind::Dir) | Err(_) => Ok(None),
            Ok(Kind::Symlink) => Err("a link; not followed, left out".into()),
            Ok(Kind::Other) => Err("not a regular file; left out".into()),
        }
    }

    /// The bytes of the ignore file `name` in `dir` (really at `real`), which
    /// the listing says is a `kind`. Only a regular file is read: a link is
    /// resolved and checked like any other (a link to a denied file counts
    /// as denied), and a FIFO, socket or device is never opened.
    fn read_ignore_file(&self, dir: &Dir, real: &str, name: &str, kind: Kind) -> Result<Option<Vec<u8>>, String> {
        let mut file = match kind {
            Kind::Dir => return Ok(None),
            Kind::File => dir.open_file(name).map_err(|e| plain_io_message(&e))?,
            Kind::Symlink => match confine::open(&self.ws, real, false, real) {
                Ok(Opened { target: Target::File(dir, name), .. }) => {
                    dir.open_file(&name).map_err(|e| plain_io_message(&e))?
                }
                Ok(Opened { target: Target::Dir(_), .. }) => return Ok(None),
                Ok(Opened { target: Target::Other, .. }) => return Err("not a regular file; left out".into()),
                Err(SearchError::Denied(_)) => {
                    self.skip(|s| s.denied += 1);
                    return Ok(None);
                }
                Err(e) => return Err(format!("left out: {}", error_message(&e))),
            },
            Kind::Other => return Err("not a regular file; left out".into()),
        };
        if file.size() > MAX_IGNORE_FILE {
            return Err(format!("larger than {MAX_IGNORE_FILE} bytes; left out"));
        }
        let mut text = Vec::with_capacity(file.size() as usize);
        file.read_to_end(&mut text).map_err(|e| plain_io_message(&e))?;
        Ok(Some(text))
    }

    /// Entries left out so far.
    pub fn skips(&self) -> Skips {
        self.skips.get()
    }

    fn skip(&self, count: impl FnOnce(&mut Skips)) {
        let mut s = self.skips.get();
        count(&mut s);
        self.skips.set(s);
    }

    /// Whether the ignore rules, globs, types or hidden-ness leave out the
    /// entry at `path` (named `name`) in a directory with `level`. What the
    /// ignore rules and the hidden rule leave out is counted; what the
    /// request's globs and types leave out, it asked for.
    fn skipped(
        &self,
        level: Option<&Rc<Level>>,
        rel: &str,
        path: &Path,
        name: &str,
        is_dir: bool,
        counted: bool,
    ) -> bool {
        let m = self.overrides.matched(path, is_dir);
        if !m.is_none() {
            return m.is_ignore();
        }
        let mut whitelisted = false;
        let mut ignored = false;
        if let Some(level) = level {
            match self.ignore_match(level, rel, path, is_dir) {
                Match::Ignore(_) => ignored = true,
                Match::Whitelist(_) => whitelisted = true,
                Match::None => {}
            }
        }
        let m = self.types.matched(path, is_dir);
        if m.is_ignore() {
            return true;
        }
        if ignored {
            if counted {
                self.skip(|s| s.ignored += 1);
            }
            return true;
        }
        whitelisted |= m.is_whitelist();
        let hidden = !whitelisted && !self.opts.hidden && name.starts_with('.');
        // (`.git` is denied: `hidden` would not include it.)
        if hidden && counted && !name.eq_ignore_ascii_case(".git") {
            self.skip(|s| s.hidden += 1);
        }
        hidden
    }

    /// As `ignore`'s `Ignore::matched_ignore`: for each kind of ignore file,
    /// the deepest level's that matches; `.rgignore` over `.ignore` over
    /// `.gitignore` over `.git/info/exclude` (these two only in a git
    /// repository and not past its root, unless no-require-git) over the
    /// request's files (the last given first). The entry's path: `rel`,
    /// workspace-relative, and `path`.
    fn ignore_match<'l>(
        &'l self,
        level: &'l Rc<Level>,
        rel: &str,
        path: &Path,
        is_dir: bool,
    ) -> Match<&'l ignore::gitignore::Glob> {
        // (With no-require-git, as `ignore` builds its matchers, no directory
        // counts as a repository root: a `.gitignore` applies past one.)
        let require_git = !self.opts.ignore.no_require_git;
        let any_git = !require_git || self.ws.inside_git || level.chain().any(|l| l.has_git);
        let (mut rg, mut ig, mut gi, mut ex) = (Match::None, Match::None, Match::None, Match::None);
        let mut saw_git = false;
        for l in level.chain() {
            // (Below `l`'s directory: always, as the walk goes down from it.)
            let below = Path::new(rel.get(l.under..).unwrap_or(rel));
            let matched = |g: &'l Option<Rc<Gitignore>>| g.as_deref().map_or(Match::None, |g| g.matched(below, is_dir));
            if rg.is_none() {
                rg = matched(&l.rgignore);
            }
            if ig.is_none() {
                ig = matched(&l.ignore);
            }
            if any_git && !saw_git && gi.is_none() {
                gi = matched(&l.gitignore);
            }
            if any_git && !saw_git && ex.is_none() {
                ex = matched(&l.exclude);
            }
            saw_git |= require_git && l.has_git;
        }
        let explicit = self.explicit.iter().rev().map(|g| g.matched(path, is_dir)).find(|m| !m.is_none());
        rg.or(ig).or(gi).or(ex).or(explicit.unwrap_or(Match::None))
    }

    /// With follow-symlinks: what the link really at `real` leads to,
    /// opened — or `None` when it is denied (counted) or neither a file nor a
    /// directory, or a problem (broken, leading outside, too many links).
    fn follow(&self, rel: &str, real: &str) -> Option<Result<Opened, WalkError>> {
        match confine::open(&self.ws, real, false, rel) {
            Ok(Opened { target: Target::Other, .. }) => None,
            Ok(opened) => Some(Ok(opened)),
            Err(SearchError::Denied(_)) => {
                self.skip(|s| s.denied += 1);
                None
            }
            Err(e) => Some(Err(WalkError { message: error_message(&e), unreadable: true })),
        }
    }
}

/// The walk of every root (those past `after`) as one stream: a `Denied`
/// step before the entry whose walk denied something, `TimedOut` where the
/// walk ran out of time (and nothing after it).
pub fn steps(
    walker: Rc<Walker>,
    roots: Vec<Root>,
    after: Option<String>,
    seen: Rc<Cell<Skips>>,
) -> impl Iterator<Item = Step> {
    let mut roots = roots.into_iter();
    let (mut current, mut pending, mut done) = (None::<Walk>, None, false);
    std::iter::from_fn(move || loop {
        if let Some(step) = pending.take() {
            return Some(step);
        }
        if done {
            return None;
        }
        let Some(walk) = current.as_mut() else {
            let Some(root) = roots.next() else {
                done = true;
                return None;
            };
            if !after.as_deref().is_some_and(|a| subtree_before(&root.rel, root.is_dir, a)) {
                current = Some(walker.walk(&root, after.as_deref()));
            }
            continue;
        };
        let step = match walk.next() {
            Some(Ok(entry)) => Step::Entry(entry),
            Some(Err(e)) => Step::Problem(e),
            None if walk.timed_out() => {
                done = true;
                return Some(Step::TimedOut);
            }
            None => {
                current = None;
                continue;
            }
        };
        let skips = walker.skips();
        if skips != seen.get() {
            pending = Some(step);
            return Some(Step::Skipped(skips.since(seen.replace(skips))));
        }
        return Some(step);
    })
}

/// The least time a walk gets to find a first file, whatever the timeout:
/// a search stops at its own deadline once it has searched one file (so
/// paging always makes progress), and the walk's deadline only ends walks
/// that find no file to search at all.
const MIN_WALK: std::time::Duration = std::time::Duration::from_secs(1);

/// When a walk for a call started at `started` with `deadline` stops.
pub fn walk_deadline(started: Instant, deadline: Instant) -> Instant {
    deadline.max(started + MIN_WALK)
}

/// The part of `path` below the directory `dir` (workspace-relative, `.` the
/// root), if it is below it.
fn below<'p>(path: &'p str, dir: &str) -> Option<&'p str> {
    if dir == "." {
        return (path != ".").then_some(path);
    }
    path.strip_prefix(dir)?.strip_prefix('/')
}

/// Whether a directory holding `names` is a repository's root (it holds
/// `.git` or `.jj`).
fn has_git(names: &[(String, Kind)]) -> bool {
    names.iter().any(|(n, _)| n == ".git" || n == ".jj")
}

/// The ignore file `shown` (at `from`), its globs matched from `root`, as
/// `ignore` reads one: lines up to the first that is not UTF-8, a BOM and
/// each line's `\r` dropped. A line is never quoted in a problem: it may be a
/// denied file's.
fn parse_ignore(
    root: &Path,
    from: PathBuf,
    text: &[u8],
    shown: &str,
    case_insensitive: bool,
    problems: &mut Vec<WalkError>,
) -> Option<Rc<Gitignore>> {
    let key = (root.to_path_buf(), case_insensitive, text.to_vec());
    if let Some(gi) = PARSED.with_borrow(|p| p.files.get(&key).cloned()) {
        return Some(gi);
    }
    let before = problems.len();
    let gi = Rc::new(build_ignore(root, from, text, shown, case_insensitive, problems)?);
    // (One with problems is made again: its warnings name each file.)
    if problems.len() == before {
        PARSED.with_borrow_mut(|p| {
            p.bytes += text.len();
            if p.bytes > PARSED_BYTES || p.files.len() >= PARSED_FILES {
                (p.files, p.bytes) = (Default::default(), text.len());
            }
            p.files.insert(key, gi.clone());
        });
    }
    Some(gi)
}

/// Ignore files made into matchers, by root, case and text: trees hold
/// many copies of one (copied and vendored projects), and making one
/// compiles each of its globs (~40 µs a line). Up to [`PARSED_FILES`] files
/// and [`PARSED_BYTES`] of their text (a quarter of one ignore file's cap:
/// what is kept adds less than one more such file's matchers), then it
/// starts again.
#[derive(Default)]
struct Parsed {
    files: std::collections::HashMap<(PathBuf, bool, Vec<u8>), Rc<Gitignore>>,
    bytes: usize,
}

const PARSED_FILES: usize = 1024;
const PARSED_BYTES: usize = 256 << 10;

thread_local! {
    static PARSED: RefCell<Parsed> = RefCell::default();
}

/// [`parse_ignore`]'s matcher, made.
fn build_ignore(
    root: &Path,
    from: PathBuf,
    text: &[u8],
    shown: &str,
    case_insensitive: bool,
    problems: &mut Vec<WalkError>,
) -> Option<Gitignore> {
    let mut b = GitignoreBuilder::new(root);
    b.case_insensitive(case_insensitive).ok()?;
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else {
            problems.push(WalkError {
                message: format!("{shown}: line {} is not UTF-8; the rest of the file is left out", i + 1),
                unreadable: false,
            });
            break;
        };
        let line = if i == 0 { line.trim_start_matches('\u{feff}') } else { line };
        if b.add_line(Some(from.clone()), line).is_err() {
            problems.push(WalkError {
                message: format!("{shown}: line {} is not a valid glob and is left out", i + 1),
                unreadable: false,
            });
        }
    }
    match b.build() {
        Ok(gi) => Some(gi),
        Err(_) => {
            problems.push(WalkError { message: format!("{shown}: cannot be used"), unreadable: false });
            None
        }
    }
}

pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir == "." {
        return name.to_string();
    }
    let mut path = String::with_capacity(dir.len() + 1 + name.len());
    path.push_str(dir);
    path.push('/');
    path.push_str(name);
    path
}

/// The entries of one root, in order, with followed directory links walked
/// in place.
pub struct Walk {
    walker: Rc<Walker>,
    after: Option<String>,
    stack: Vec<Frame>,
    /// Entries and problems to hand out before going on, last first.
    queue: Vec<Result<Entry, WalkError>>,
    /// Children looked at, for checking the clock now and then.
    steps: u64,
    timed_out: bool,
}

impl Walk {
    /// Whether the walk stopped at its deadline (it then yields nothing more).
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// Lists the directory `rel` (really at `real`, when a link led there;
    /// open as `dir`) and pushes it, its children at `depth`. `false` if it
    /// holds a bare repository.
    fn enter(
        &mut self,
        rel: String,
        real: Option<String>,
        dir: Rc<Dir>,
        parent: Option<Rc<Level>>,
        depth: usize,
    ) -> bool {
        let walker = self.walker.clone();
        if walker.opts.max_depth.is_some_and(|max| depth > max) {
            return true;
        }
        let (mut names, unnamed) = match dir.list() {
            Ok(listing) => listing,
            Err(e) => {
                let message = format!("{rel}: {}", plain_io_message(&e));
                self.queue.push(Err(WalkError { message, unreadable: true }));
                return true;
            }
        };
        if depth > 1 && confine::lists_bare_repository(&names) {
            return false;
        }
        if unnamed > 0 {
            self.queue.push(Err(WalkError {
                message: format!(
                    "{rel}: {unnamed} name(s) that are not UTF-8 cannot be read inside the sandbox and were left out"
                ),
                unreadable: true,
            }));
        }
        let level = if walker.opts.no_ignore {
            None
        } else {
            let mut problems = Vec::new();
            let level = walker.level(&rel, real.as_deref().unwrap_or(&rel), &dir, &names, parent, &mut problems);
            self.queue.extend(problems.into_iter().map(Err));
            Some(Rc::new(level))
        };
        // Path order: siblings by name, bytewise (names are unique, and
        // a directory's contents follow it whatever its name).
        names.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let level = level.unwrap_or_else(|| Rc::new(Level::empty()));
        let frame =
            Frame { children: names.into_iter(), rel, real, dir: Some(dir), identity: None, level, depth, end: None };
        self.stack.push(frame);
        self.close_outer();
        true
    }

    /// Closes the outermost directories open while more than [`OPEN_DIRS`]
    /// are (a deep tree costs no more descriptors than that).
    fn close_outer(&mut self) {
        let mut open = self.stack.iter().filter(|f| f.dir.is_some()).count();
        for frame in self.stack.iter_mut() {
            if open <= OPEN_DIRS {
                break;
            }
            if let Some(dir) = frame.dir.take() {
                frame.identity = dir.identity().ok();
                open -= 1;
            }
        }
    }

    /// The innermost directory's descriptor, opened again (without following
    /// a link) from the nearest one still open that holds it, or from the
    /// workspace root, if it was closed; directories of the walk met on the
    /// way are open again too. Each must be the directory it was: one
    /// replaced or moved meanwhile is an error, and is not searched further.
    fn reopen_top(&mut self) -> Result<Rc<Dir>, WalkError> {
        let top = self.stack.len() - 1;
        if let Some(dir) = &self.stack[top].dir {
            return Ok(dir.clone());
        }
        let changed = |rel: &str| WalkError {
            message: format!("{rel}: replaced or moved while searching; the rest of it was left out"),
            unreadable: true,
        };
        let path = self.stack[top].place().to_string();
        let from = self.stack[..top]
            .iter()
            .rev()
            .find_map(|f| Some((f.dir.clone()?, f.place().to_string(), below(&path, f.place())?.to_string())));
        let (mut dir, mut at, rest) = match from {
            Some(from) => from,
            None => (self.walker.ws.root_dir().map_err(|_| changed(&self.stack[top].rel))?, ".".into(), path.clone()),
        };
        self.adopt(&at, &dir);
        let mut failed = None;
        for name in rest.split('/').filter(|n| !n.is_empty() && *n != ".") {
            match dir.open_dir(name) {
                Ok(opened) => dir = opened,
                Err(e) => {
                    let message = format!("{}: {}", self.stack[top].rel, plain_io_message(&e));
                    failed = Some(WalkError { message, unreadable: true });
                    break;
                }
            }
            at = join(&at, name);
            self.adopt(&at, &dir);
        }
        self.close_outer();
        match (failed, &self.stack[top].dir) {
            (None, Some(dir)) => Ok(dir.clone()),
            (failed, _) => Err(failed.unwrap_or_else(|| changed(&self.stack[top].rel))),
        }
    }

    /// `dir`, opened again at `at`, back in the closed frame there if it is
    /// the directory that frame was, and among the innermost (see
    /// [`Walk::close_outer`]).
    /// (With links followed, two frames can be the same directory.)
    fn adopt(&mut self, at: &str, dir: &Rc<Dir>) {
        let inner = self.stack.len().saturating_sub(OPEN_DIRS);
        let mut identity = None;
        for frame in self.stack[inner..].iter_mut().filter(|f| f.dir.is_none() && f.place() == at) {
            let identity = identity.get_or_insert_with(|| dir.identity().ok());
            if frame.identity.is_some() && frame.identity == *identity {
                frame.dir = Some(dir.clone());
            }
        }
    }

    /// A walk of nothing but the problem that `rel` changed.
    fn replaced(mut self, rel: &str) -> Walk {
        let message = format!("{rel}: replaced or moved while searching; the rest of it was left out");
        self.queue.push(Err(WalkError { message, unreadable: true }));
        self
    }

    /// Gives up the end of what is left of this walk, for other instances
    /// to walk ([`Walker::walk_rest`]), as parts in walk order: the nearer
    /// first (a page that ends soon needs it first), each big enough to be
    /// worth a walk. The children left of each directory the walk is in,
    /// but the innermost's, which it keeps; when only one has any, all but
    /// its first third of them, in two parts (or its one directory left).
    /// Not in a walk that follows links (where a link leads depends on the
    /// way there).
    pub fn hand_off(&mut self) -> Vec<Part> {
        if self.stack.iter().any(|f| f.real.is_some()) {
            return Vec::new();
        }
        let mut frames: Vec<&mut Frame> = self.stack.iter_mut().filter(|f| f.children.len() > 0).collect();
        let mut parts = Vec::new();
        if frames.len() > 1 {
            frames.pop();
            for frame in frames.into_iter().rev() {
                let first = frame.children.as_slice()[0].0.clone();
                frame.children = Vec::new().into_iter();
                let end = frame.end.replace(first.clone());
                parts.push(Part { dir: frame.rel.clone(), first, end, depth: frame.depth as u32 });
            }
            return parts;
        }
        let Some(frame) = frames.pop() else { return parts };
        let left = frame.children.as_slice();
        if left.len() == 1 && left[0].1 != Kind::Dir {
            return parts;
        }
        let keep = left.len() / 3;
        let near = keep + (left.len() - keep).div_ceil(2);
        let mut starts = vec![left[keep].0.clone()];
        starts.extend(left.get(near).map(|c| c.0.clone()));
        frame.children = left[..keep].to_vec().into_iter();
        let mut end = frame.end.replace(starts[0].clone());
        for first in starts.into_iter().rev() {
            parts.push(Part {
                dir: frame.rel.clone(),
                first: first.clone(),
                end: end.take(),
                depth: frame.depth as u32,
            });
            end = Some(first);
        }
        parts.reverse();
        parts
    }

    /// Gives up all that is left of this walk, as parts in walk order (see
    /// [`Walk::hand_off`]), and ends it; `None`, and nothing given, where
    /// it cannot: it holds entries or problems not handed out yet, it ran
    /// out of time, or it follows links.
    pub fn hand_off_all(&mut self) -> Option<Vec<Part>> {
        if !self.queue.is_empty() || self.timed_out || self.stack.iter().any(|f| f.real.is_some()) {
            return None;
        }
        let parts = self.stack.iter().rev().filter_map(|frame| {
            let first = frame.children.as_slice().first()?.0.clone();
            Some(Part { dir: frame.rel.clone(), first, end: frame.end.clone(), depth: frame.depth as u32 })
        });
        let parts = parts.collect();
        self.stack.clear();
        Some(parts)
    }

    fn expired(&mut self) -> bool {
        self.steps += 1;
        if self.steps % 64 == 0 && self.walker.deadline.is_some_and(|d| Instant::now() >= d) {
            self.timed_out = true;
            self.stack.clear();
            self.queue.clear();
        }
        self.timed_out
    }
}

impl Iterator for Walk {
    type Item = Result<Entry, WalkError>;

    fn next(&mut self) -> Option<Self::Item> {
        let walker = self.walker.clone();
        let ws = &walker.ws;
        loop {
            if let Some(item) = self.queue.pop() {
                return Some(item);
            }
            if self.expired() {
                return None;
            }
            if self.stack.last()?.children.len() == 0 {
                self.stack.pop();
                continue;
            }
            let parent_dir = match self.reopen_top() {
                Ok(dir) => dir,
                Err(e) => {
                    self.stack.pop();
                    return Some(Err(e));
                }
            };
            let frame = self.stack.last_mut()?;
            let (name, kind) = frame.children.next()?;
            let rel = join(&frame.rel, &name);
            let (depth, level) = (frame.depth, frame.level.clone());
            // Where the entry really is, when a followed link led to it or
            // its directory (else `rel`).
            let mut real = frame.real.as_deref().map(|r| join(r, &name));
            let mut at = None;
            let mut opened_dir = None;
            let path = ws.fs_path(&rel);
            // A followed link counts as what it leads to.
            let kind = match kind {
                Kind::Symlink if walker.opts.follow_symlinks => {
                    match walker.follow(&rel, real.as_ref().unwrap_or(&rel)) {
                        Some(Ok(Opened { real: target, target: Target::Dir(dir), .. })) => {
                            // A loop: the link leads to a directory the walk is in.
                            if self.stack.iter().any(|f| f.place() == target) || target == "." {
                                return Some(Err(WalkError {
                                    message: format!("{rel}: symbolic link loop"),
                                    unreadable: true,
                                }));
                            }
                            real = Some(target);
                            opened_dir = Some(dir);
                            Kind::Dir
                        }
                        Some(Ok(Opened { real: target, target: Target::File(dir, file), .. })) => {
                            real = Some(target);
                            at = Some((dir, file));
                            Kind::File
                        }
                        Some(Ok(Opened { target: Target::Other, .. })) | None => continue,
                        Some(Err(e)) => return Some(Err(e)),
                    }
                }
                kind => kind,
            };
            let is_dir = kind == Kind::Dir;
            let level = (!walker.opts.no_ignore).then_some(&level);
            // What a resumed walk passes before its cursor, an earlier page
            // counted already.
            let counted = !self.after.as_deref().is_some_and(|a| subtree_before(&rel, is_dir, a));
            if walker.skipped(level, &rel, &path, &name, is_dir, counted) {
                continue;
            }
            let deny_rel = if ws.deny.has_extra() { rel.as_str() } else { "" };
            let parent = rel.rsplit('/').nth(1);
            // Through a link, the entry's real path must pass too (a link
            // to `.aws` must not expose `credentials`).
            if ws.deny.entry_denied(deny_rel, &name, parent, is_dir) || real.as_deref().is_some_and(|r| ws.denied(r)) {
                if counted {
                    walker.skip(|s| s.denied += 1);
                }
                continue;
            }
            if is_dir {
                if self.after.as_deref().is_some_and(|a| subtree_before(&rel, true, a)) {
                    continue;
                }
                let dir = match opened_dir {
                    Some(dir) => dir,
                    None => match parent_dir.open_dir(&name) {
                        Ok(dir) => dir,
                        Err(e) => {
                            let message = format!("{rel}: {}", plain_io_message(&e));
                            return Some(Err(WalkError { message, unreadable: true }));
                        }
                    },
                };
                let level = level.cloned();
                if !self.enter(rel.clone(), real.take(), dir, level, depth + 1) {
                    walker.skip(|s| s.denied += 1);
                    continue;
                }
                // The directory comes before what entering it found.
                self.queue.reverse();
            }
            let is_file = kind == Kind::File;
            let at = Some(at.unwrap_or((parent_dir, name)));
            let real = real.filter(|_| is_file);
            return Some(Ok(Entry { rel, path, is_file, is_dir, real, at, kept: None }));
        }
    }
}

/// Whether everything at or under `rel` sorts before the cursor path `after`
/// (so a resumed walk can skip it). `after` itself is not "before": the
/// caller decides whether to resume inside it.
pub fn subtree_before(rel: &str, is_dir: bool, after: &str) -> bool {
    // (A directory's contents follow it: they are all before `after` unless
    // `after` lies among them, or between it and them, as a walk event's
    // key does.)
    let among = |rest: &str| rest.is_empty() || rest.starts_with(['/', '\0']);
    rel != "." && path_cmp(rel, after).is_lt() && !(is_dir && after.strip_prefix(rel).is_some_and(among))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::IgnoreRules;

    #[test]
    fn a_replayed_walk_does_not_enter_a_bare_repository_put_in_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("v/x")).unwrap();
        std::fs::write(root.join("v/x/config"), "nothing here\n").unwrap();
        let ws = Workspace::new(root);
        let search = || ws.search_text(crate::SearchTextRequest::new("needle_word")).unwrap();
        // The host vouches for an unchanged tree: the walk is kept...
        crate::session::unchanged_since(Some(1));
        assert!(search().matches.is_empty());
        // ...and a bare repository is put where it saw a directory, behind
        // the host's back (a watcher that missed it).
        for d in ["v/bare/objects", "v/bare/refs"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("v/bare/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(root.join("v/bare/config"), "needle_word\n").unwrap();
        std::fs::rename(root.join("v/x"), root.join("v/old")).unwrap();
        std::fs::rename(root.join("v/bare"), root.join("v/x")).unwrap();
        let replayed = search();
        assert!(replayed.matches.is_empty(), "{:?}", replayed.matches);
        crate::session::unchanged_since(None);
        assert!(search().matches.is_empty());
    }

    #[test]
    fn a_deep_walk_keeps_few_directories_open_and_checks_those_it_opens_again() {
        // Deeper than the directories a walk keeps open: the outer ones are
        // closed on the way down and opened again on the way back.
        let deep: Vec<String> = (0..3 * OPEN_DIRS).map(|i| format!("d{i}")).collect();
        let deep = format!("a/{}", deep.join("/"));
        let dir = tree(&[&format!("{deep}/f.txt"), "a/z.txt", "b.txt"]);
        let ws = Workspace::new(dir.path());
        let all = walk_all(&ws, &WalkOptions::default(), ".", None);
        assert_eq!(all, [format!("{deep}/f.txt"), "a/z.txt".into(), "b.txt".into()]);
        // `a` is replaced while the walk is deep inside it: what is left of
        // it is not taken from the directory put in its place.
        let w = Rc::new(Walker::new(&ws, &WalkOptions::default()).unwrap());
        let roots = w.roots(&[".".to_string()]).unwrap();
        let mut walk = w.walk(&roots[0], None);
        let deepest = walk.by_ref().find(|e| e.as_ref().is_ok_and(|e| e.rel.ends_with("f.txt")));
        assert!(deepest.is_some());
        std::fs::rename(dir.path().join("a"), dir.path().join("old")).unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/z.txt"), "x\n").unwrap();
        let rest: Vec<_> = walk.map(|e| e.map(|e| e.rel).map_err(|e| e.message)).collect();
        assert_eq!(
            rest,
            [Err("a: replaced or moved while searching; the rest of it was left out".into()), Ok("b.txt".into())]
        );
    }

    #[test]
    fn a_deep_walk_through_links_finds_each_directory_again() {
        // With links followed, one directory can be two frames of the walk
        // (`c/l` and `c/l/m/e` are both `c/d/e`); both are opened again.
        let deep: Vec<String> = (0..OPEN_DIRS + 4).map(|i| format!("x{i}")).collect();
        let deep = format!("c/d/e/{}", deep.join("/"));
        let dir = tree(&[&format!("{deep}/f.txt"), "c/d/e/y.txt"]);
        std::os::unix::fs::symlink("d/e", dir.path().join("c/l")).unwrap();
        std::os::unix::fs::symlink("..", dir.path().join("c/d/e/m")).unwrap();
        let ws = Workspace::new(dir.path());
        let opts = WalkOptions { follow_symlinks: true, ..Default::default() };
        let w = Rc::new(Walker::new(&ws, &opts).unwrap());
        let roots = w.roots(&[".".to_string()]).unwrap();
        let problems: Vec<String> = w.walk(&roots[0], None).filter_map(|e| e.err()).map(|e| e.message).collect();
        assert!(problems.iter().all(|p| p.contains("loop")), "{problems:?}");
        let files = walk_all(&ws, &opts, ".", None);
        for want in ["c/d/e/y.txt", "c/l/y.txt", "c/l/m/e/y.txt", &format!("c/l/m/e/{}/f.txt", &deep[6..])] {
            assert!(files.iter().any(|f| f == want), "{want} missing: {files:?}");
        }
    }

    #[test]
    fn copies_of_an_ignore_file_each_apply_from_their_own_directory() {
        let dir = tree(&["a/x.txt", "a/sub/x.txt", "a/y.log", "b/x.txt", "b/z.txt", "c/x.txt", "c/w.txt", "d/x.txt"]);
        let rules = "/x.txt\n*.log\n";
        for d in ["a", "b"] {
            std::fs::write(dir.path().join(d).join(".ignore"), rules).unwrap();
        }
        // The same rules and a line that is not UTF-8: the rest left out,
        // with a warning naming this copy.
        std::fs::write(dir.path().join("c/.ignore"), [rules.as_bytes(), b"w.txt\xff\nw.txt\n"].concat()).unwrap();
        let ws = Workspace::new(dir.path());
        for _ in 0..2 {
            let w = Rc::new(Walker::new(&ws, &WalkOptions::default()).unwrap());
            let roots = w.roots(&[".".to_string()]).unwrap();
            let (mut files, mut problems) = (Vec::new(), Vec::new());
            for step in roots.iter().flat_map(|r| w.walk(r, None).collect::<Vec<_>>()) {
                match step {
                    Ok(e) if e.is_file => files.push(e.rel),
                    Ok(_) => {}
                    Err(e) => problems.push(e.message),
                }
            }
            assert_eq!(files, ["a/sub/x.txt", "b/z.txt", "c/w.txt", "d/x.txt"]);
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert!(problems[0].starts_with("c/.ignore: line 3"), "{problems:?}");
        }
    }

    /// The walk of `root` in parts, as instances divide it: every `every`
    /// steps a part hands its end off; the parts are walked last first, and
    /// put back in walk order. Its steps (problems as `!message`) and skips.
    fn divided(
        ws: &Workspace,
        opts: &WalkOptions,
        root: &str,
        every: usize,
        after: Option<&str>,
        all: bool,
    ) -> (Vec<String>, Skips) {
        let w = Rc::new(Walker::new(ws, opts).unwrap());
        let roots = w.roots(&[root.to_string()]).unwrap();
        let mut parts = vec![(String::new(), w.walk(&roots[0], after))];
        let mut walked = Vec::new();
        while let Some((key, mut walk)) = parts.pop() {
            let mut steps = Vec::new();
            while let Some(step) = walk.next() {
                let is_file = step.as_ref().is_ok_and(|e| e.is_file);
                steps.push(step.map_or_else(|e| format!("!{}", e.message), |e| e.rel));
                if steps.len() % every == 0 {
                    // (All of it, as a page's walk does where the page ends
                    // after a file: nothing is queued then.)
                    let given = match all && is_file {
                        true => walk.hand_off_all().expect("nothing queued after a file"),
                        false => walk.hand_off(),
                    };
                    for part in given {
                        parts.push((join(&part.dir, &part.first), w.walk_rest(&roots[0], &part, after)));
                    }
                }
            }
            walked.push((key, steps));
        }
        walked.sort_by(|a, b| path_cmp(&a.0, &b.0));
        (walked.into_iter().flat_map(|(_, steps)| steps).collect(), w.skips())
    }

    #[test]
    fn a_walk_handed_off_in_parts_is_the_walk() {
        let mut files: Vec<String> = ORDER_TREE.iter().map(|f| f.to_string()).collect();
        for d in ["p", "p/q", "p/q/r", "s", "s/t"] {
            for f in ["a.txt", "b.log", ".hid", "keep.log", "z/x.txt", ".env", "id_rsa"] {
                files.push(format!("{d}/{f}"));
            }
        }
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let dir = tree(&refs);
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "*.log\n!keep.log\n").unwrap();
        std::fs::write(root.join("p/.ignore"), "z/\n").unwrap();
        std::fs::write(root.join("p/q/.gitignore"), b"!b.log\nbad\xff\n").unwrap();
        std::fs::write(root.join("s/.rgignore"), "a.txt\n").unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        // A bare repository below the root: never entered.
        for d in ["s/bare/objects", "s/bare/refs"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("s/bare/HEAD"), "ref: refs/heads/main\n").unwrap();
        let ws = Workspace::new(root);
        let opts = [
            WalkOptions::default(),
            WalkOptions { hidden: true, ..Default::default() },
            WalkOptions { max_depth: Some(3), ..Default::default() },
            WalkOptions { no_ignore: true, hidden: true, ..Default::default() },
            WalkOptions { ignore: IgnoreRules { no_parent: true, ..Default::default() }, ..Default::default() },
        ];
        for opts in &opts {
            for (root, after) in [(".", None), ("p", None), ("p/q", None), (".", Some("p/q/a.txt"))] {
                let whole = divided(&ws, opts, root, usize::MAX, after, false);
                assert!(whole.0.iter().any(|s| s.ends_with(".txt")), "{whole:?}");
                for (every, all) in [1, 2, 3, 7].into_iter().flat_map(|n| [(n, false), (n, true)]) {
                    let got = divided(&ws, opts, root, every, after, all);
                    assert_eq!(got, whole, "{opts:?} {root} every {every} all {all}");
                }
            }
        }
    }

    #[test]
    fn a_part_whose_directory_is_swapped_for_a_link_is_not_walked() {
        let dir = tree(&["0s/secret.txt", "p/q/a.txt", "p/q/b.txt", "p/q/c.txt", "p/q/d.txt"]);
        let ws = Workspace::new(dir.path());
        let w = Rc::new(Walker::new(&ws, &WalkOptions::default()).unwrap());
        let roots = w.roots(&[".".to_string()]).unwrap();
        let mut walk = w.walk(&roots[0], None);
        assert!(walk.by_ref().any(|e| e.is_ok_and(|e| e.rel == "p/q/a.txt")));
        let parts = walk.hand_off();
        let part = parts.iter().find(|p| p.dir == "p/q").expect("p/q's files handed off").clone();
        let rest = |part: &Part| -> Vec<String> {
            w.walk_rest(&roots[0], part, None)
                .map(|e| e.map_or_else(|e| format!("!{}", e.message), |e| e.rel))
                .collect()
        };
        assert!(rest(&part).iter().all(|s| s.starts_with("p/q/")), "{:?}", rest(&part));
        std::fs::rename(dir.path().join("p/q"), dir.path().join("p/old")).unwrap();
        std::os::unix::fs::symlink("../0s", dir.path().join("p/q")).unwrap();
        assert_eq!(rest(&part), ["!p/q: replaced or moved while searching; the rest of it was left out"]);
        // The directory above it, too.
        std::fs::rename(dir.path().join("p"), dir.path().join("p2")).unwrap();
        std::os::unix::fs::symlink("0s", dir.path().join("p")).unwrap();
        assert_eq!(rest(&part), ["!p/q: replaced or moved while searching; the rest of it was left out"]);
    }

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
        let w = Rc::new(Walker::new(ws, opts).unwrap());
        let roots = w.roots(&[root.to_string()]).unwrap();
        roots
            .iter()
            .flat_map(|r| w.walk(r, after).collect::<Vec<_>>())
            .filter_map(|e| e.ok().filter(|e| e.is_file).map(|e| e.rel))
            .filter(|rel| after.is_none_or(|a| path_cmp(rel, a).is_ge()))
            .collect()
    }

    /// Names whose order differs between whole-path and component order:
    /// bytes below `/` (`!`, `-`, `.`, `+`), a directory named as a prefix
    /// of its siblings, deep nesting.
    const ORDER_TREE: &[&str] = &[
        "git/x.go",
        "git.go",
        "git-x",
        "git/x/y.go",
        "git/x.go.d/z",
        "a/b0",
        "a+",
        "a.b/c",
        "ab",
        "a!",
        "a-",
        "a.",
        "a/b!/c",
        "a/b/c/d/e/f/g/h",
        "a/b.c",
        "a/b-",
        "a/b/c!",
        "a/b/c/d!",
        "b\u{1}",
        "b/c",
        "ü/x",
        "u/x",
        "A",
        "0",
    ];

    #[test]
    fn order_is_rg_sort_path() {
        let dir = tree(ORDER_TREE);
        let ws = Workspace::new(dir.path());
        let got = walk_all(&ws, &WalkOptions::default(), ".", None);
        let mut want: Vec<String> = ORDER_TREE.iter().map(|s| s.to_string()).collect();
        want.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
        assert_eq!(got, want);
        assert_eq!(&got[..4], ["0", "A", "a/b/c/d/e/f/g/h", "a/b/c/d!"]);
        // Directories come right before their contents, whatever sorts
        // between their name and their contents' paths bytewise.
        let w = Rc::new(Walker::new(&ws, &WalkOptions::default()).unwrap());
        let root = &w.roots(&[".".to_string()]).unwrap()[0];
        let all: Vec<String> = w.walk(root, None).filter_map(|e| e.ok().map(|e| e.rel)).collect();
        let mut sorted = all.clone();
        sorted.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
        assert_eq!(all, sorted);
        let at = |p: &str| all.iter().position(|e| e == p).unwrap();
        assert!(at("git") < at("git/x.go") && at("git/x.go.d/z") < at("git-x") && at("git-x") < at("git.go"));
        // Several roots walk as one stream in the same order.
        let roots = w.roots(&["git.go".into(), "a".into(), "git".into(), "a/b".into()]).unwrap();
        let rels: Vec<&str> = roots.iter().map(|r| r.rel.as_str()).collect();
        assert_eq!(rels, ["a", "git", "git.go"]);
    }

    #[test]
    fn order_is_by_name_whatever_links_lead_to() {
        // With links followed, a link to a directory sorts by its own name
        // (its contents after it), as the directory would.
        let dir = tree(&["d/x", "l-x", "l.txt", "f/y"]);
        std::os::unix::fs::symlink("d", dir.path().join("l")).unwrap();
        std::os::unix::fs::symlink("f/y", dir.path().join("l0")).unwrap();
        let ws = Workspace::new(dir.path());
        let opts = WalkOptions { follow_symlinks: true, ..Default::default() };
        assert_eq!(walk_all(&ws, &opts, ".", None), ["d/x", "f/y", "l/x", "l-x", "l.txt", "l0"]);
        assert_eq!(walk_all(&ws, &opts, ".", Some("l/x")), ["l/x", "l-x", "l.txt", "l0"]);
    }

    #[test]
    fn a_resumed_walk_goes_on_in_path_order() {
        let dir = tree(ORDER_TREE);
        let ws = Workspace::new(dir.path());
        let opts = WalkOptions::default();
        let all = walk_all(&ws, &opts, ".", None);
        // From every file, and from every directory (a listing's cursor
        // names directories too): what follows it, and only that.
        let mut places: Vec<String> = all.clone();
        for f in &all {
            let mut p = f.as_str();
            while let Some((dir, _)) = p.rsplit_once('/') {
                places.push(dir.to_string());
                p = dir;
            }
        }
        places.extend(["a/b/c/d/e/f/g/h/zz", "a\0", "a/\0", "git.", ""].map(String::from));
        for after in &places {
            let want: Vec<&String> = all.iter().filter(|f| path_cmp(f, after).is_ge()).collect();
            let w = Rc::new(Walker::new(&ws, &opts).unwrap());
            let roots = w.roots(&[".".to_string()]).unwrap();
            let got: Vec<String> = steps(w, roots, Some(after.clone()), Default::default())
                .filter_map(|s| match s {
                    Step::Entry(e) if e.is_file => Some(e.rel),
                    _ => None,
                })
                .collect();
            // (A resumed walk may hand out the files before `after` in a
            // directory it enters, never those of a directory it skips.)
            let kept: Vec<&String> = got.iter().filter(|f| path_cmp(f, after).is_ge()).collect();
            assert_eq!(kept, want, "after {after:?}");
            for f in &got {
                if path_cmp(f, after).is_lt() {
                    let dir = f.rsplit_once('/').map_or(".", |d| d.0);
                    assert!(
                        confine::is_within(after.trim_end_matches('\0'), dir),
                        "after {after:?}: {f} is in a directory not skipped"
                    );
                }
            }
        }
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
    fn a_parent_ignore_whitelist_beats_a_child_gitignore() {
        // As rg run in `src`: `.ignore` rules, from any level, rank above
        // `.gitignore` rules.
        let dir = tree(&["src/a.log", "src/b.rs", "src/sub/c.log"]);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".ignore"), "!a.log\n").unwrap();
        std::fs::write(dir.path().join("src/.gitignore"), "*.log\n").unwrap();
        let ws = Workspace::new(dir.path());
        assert_eq!(walk_all(&ws, &WalkOptions::default(), "src", None), ["src/a.log", "src/b.rs"]);
        assert_eq!(walk_all(&ws, &WalkOptions::default(), ".", None), ["src/a.log", "src/b.rs"]);
    }

    fn ignoring(rules: IgnoreRules) -> WalkOptions {
        WalkOptions { ignore: rules, ..Default::default() }
    }

    #[test]
    fn git_exclude_ranks_below_gitignore_and_its_flags_turn_it_off() {
        let dir = tree(&["a.log", "keep.log", "b.txt", "sub/c.log"]);
        std::fs::create_dir_all(dir.path().join(".git/info")).unwrap();
        std::fs::write(dir.path().join(".git/info/exclude"), "*.log\r\n").unwrap();
        std::fs::write(dir.path().join(".gitignore"), "!keep.log\n").unwrap();
        let ws = Workspace::new(dir.path());
        assert_eq!(walk_all(&ws, &WalkOptions::default(), ".", None), ["b.txt", "keep.log"]);
        assert_eq!(walk_all(&ws, &WalkOptions::default(), "sub", None), Vec::<String>::new());
        let all = ["a.log", "b.txt", "keep.log", "sub/c.log"];
        for rules in
            [IgnoreRules { no_exclude: true, ..Default::default() }, IgnoreRules { no_vcs: true, ..Default::default() }]
        {
            assert_eq!(walk_all(&ws, &ignoring(rules), ".", None), all);
        }
        // A `.git` that is a file (a worktree's) or a link is no directory to read.
        std::fs::rename(dir.path().join(".git"), dir.path().join("gitdir")).unwrap();
        std::os::unix::fs::symlink("gitdir", dir.path().join(".git")).unwrap();
        assert_eq!(
            walk_all(&ws, &WalkOptions::default(), ".", None),
            ["a.log", "b.txt", "gitdir/info/exclude", "keep.log", "sub/c.log"]
        );
    }

    #[test]
    fn a_worktree_reads_its_repositorys_exclude_inside_the_workspace_only() {
        let dir = tree(&["tree/ignored", "tree/kept", ".ssh/info/exclude", "repo/.git/info/exclude"]);
        let p = dir.path();
        std::fs::write(p.join("repo/.git/info/exclude"), "ignored\n").unwrap();
        std::fs::create_dir_all(p.join("repo/.git/worktrees/t")).unwrap();
        std::fs::write(p.join("repo/.git/worktrees/t/commondir"), "../..\n").unwrap();
        std::fs::write(p.join(".ssh/info/exclude"), "kept\n").unwrap();
        std::fs::write(p.join(".ssh/commondir"), ".\n").unwrap();
        let ws = Workspace::new(p);
        let walk = |gitdir: &str| {
            std::fs::write(p.join("tree/.git"), format!("gitdir: {gitdir}\r\n")).unwrap();
            walk_all(&ws, &WalkOptions::default(), "tree", None)
        };
        assert_eq!(walk("repo/.git/worktrees/t"), ["tree/kept"]);
        let all = ["tree/ignored", "tree/kept"];
        // Outside the workspace, absolute, through a denied directory: none.
        for gitdir in ["../repo/.git/worktrees/t", "/etc", ".ssh", "repo/.git/worktrees/nope"] {
            assert_eq!(walk(gitdir), all, "{gitdir}");
        }
        let no_exclude = ignoring(IgnoreRules { no_exclude: true, ..Default::default() });
        walk("repo/.git/worktrees/t");
        assert_eq!(walk_all(&ws, &no_exclude, "tree", None), all);
    }

    #[test]
    fn explicit_ignore_files_rank_below_the_walks_the_later_above_the_earlier() {
        let dir = tree(&["imp.log", "wat.log", "x.txt", "sub/y.log"]);
        std::fs::write(dir.path().join("one"), "*.log\n/x.txt\n").unwrap();
        std::fs::write(dir.path().join("two"), "!wat.log\n").unwrap();
        std::fs::write(dir.path().join(".ignore"), "!imp.log\none\ntwo\n").unwrap();
        let ws = Workspace::new(dir.path());
        let files = |f: &[&str]| {
            ignoring(IgnoreRules { files: f.iter().map(|s| s.to_string()).collect(), ..Default::default() })
        };
        assert_eq!(walk_all(&ws, &files(&["one"]), ".", None), ["imp.log"]);
        assert_eq!(walk_all(&ws, &files(&["one", "two"]), ".", None), ["imp.log", "wat.log"]);
        assert_eq!(walk_all(&ws, &files(&["two", "one"]), ".", None), ["imp.log"]);
        // Anchored globs match from the workspace root, whatever the root walked.
        assert_eq!(walk_all(&ws, &files(&["./sub/../one"]), "sub", None), Vec::<String>::new());
        // --no-ignore-dot: the `.ignore` whitelist goes, the file stays.
        let no_dot = IgnoreRules { no_dot: true, files: vec!["one".into()], ..Default::default() };
        assert_eq!(walk_all(&ws, &ignoring(no_dot), ".", None), ["one", "two"]);
        // Outside the workspace: an error; missing: left out, said.
        let outside = files(&["../one"]);
        assert!(matches!(Walker::new(&ws, &outside), Err(SearchError::OutsideWorkspace(p)) if p == "../one"));
        let w = Rc::new(Walker::new(&ws, &files(&["nope", "one"])).unwrap());
        let root = &w.roots(&[".".to_string()]).unwrap()[0];
        let problems: Vec<String> = w.walk(root, None).filter_map(|e| e.err()).map(|e| e.message).collect();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("nope: "), "{problems:?}");
    }

    #[test]
    fn no_parent_no_dot_and_no_require_git() {
        let dir = tree(&["src/a.txt", "src/b.txt", "src/c.txt", "src/repo/a.txt", "src/repo/d.txt"]);
        std::fs::write(dir.path().join(".ignore"), "a.txt\n").unwrap();
        std::fs::write(dir.path().join("src/.rgignore"), "b.txt\n").unwrap();
        std::fs::write(dir.path().join("src/.gitignore"), "c.txt\na.txt\n").unwrap();
        std::fs::create_dir(dir.path().join("src/repo/.git")).unwrap();
        std::fs::write(dir.path().join("src/repo/.gitignore"), "d.txt\n").unwrap();
        let ws = Workspace::new(dir.path());
        let walk = |rules: IgnoreRules, root: &str| walk_all(&ws, &ignoring(rules), root, None);
        assert_eq!(walk(IgnoreRules::default(), "src"), ["src/c.txt"]);
        // The parent's `.ignore` no longer hides a.txt (src's own files still apply).
        let no_parent = IgnoreRules { no_parent: true, ..Default::default() };
        assert_eq!(walk(no_parent, "src"), ["src/a.txt", "src/c.txt", "src/repo/a.txt"]);
        assert_eq!(walk(IgnoreRules { no_parent: true, ..Default::default() }, "."), ["src/c.txt"]);
        let no_dot = IgnoreRules { no_dot: true, ..Default::default() };
        assert_eq!(walk(no_dot, "."), ["src/a.txt", "src/b.txt", "src/c.txt", "src/repo/a.txt"]);
        // Outside a repository, `.gitignore` applies with no-require-git,
        // and then past a repository's root too (as rg).
        let no_require_git = IgnoreRules { no_require_git: true, no_dot: true, ..Default::default() };
        assert_eq!(walk(no_require_git, "."), ["src/b.txt"]);
    }

    #[test]
    fn a_changed_ignore_file_is_seen_by_the_next_call() {
        let dir = tree(&["a.txt", "b.txt"]);
        std::fs::write(dir.path().join("rules"), "a.txt\n").unwrap();
        let ws = Workspace::new(dir.path());
        let list = |files: Vec<String>| {
            let mut r = crate::SearchTextRequest::new("^x$");
            r.mode = Some(crate::QueryMode::Regex);
            r.ignore = Some(crate::IgnoreOptions {
                no_vcs: false,
                no_exclude: false,
                no_parent: false,
                no_dot: false,
                no_require_git: false,
                files,
                case_insensitive: false,
            });
            let answer = ws.search_text(r).unwrap();
            answer.matches.into_iter().map(|m| m.path).collect::<Vec<_>>()
        };
        crate::session::unchanged_since(Some(1));
        assert_eq!(list(vec!["rules".into()]), ["b.txt"]);
        // Other options at the same generation: another walk.
        assert_eq!(list(vec![]), ["a.txt", "b.txt"]);
        std::fs::write(dir.path().join("rules"), "b.txt\n").unwrap();
        crate::session::unchanged_since(Some(2));
        assert_eq!(list(vec!["rules".into()]), ["a.txt"]);
        crate::session::unchanged_since(None);
    }

    #[test]
    fn hostile_ignore_files_are_never_opened_or_followed_out() {
        let dir = tree(&["a.txt", "b.txt"]);
        let p = dir.path();
        std::fs::create_dir_all(p.join(".git/info")).unwrap();
        let fifo = |path: &Path| assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
        fifo(&p.join(".git/info/exclude"));
        fifo(&p.join("rules"));
        std::os::unix::fs::symlink("/dev/zero", p.join("zero")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", p.join("passwd")).unwrap();
        std::os::unix::fs::symlink("../../a.txt", p.join(".git/info/exclude2")).unwrap();
        std::fs::write(p.join("big"), vec![b'#'; (MAX_IGNORE_FILE + 1) as usize]).unwrap();
        std::fs::write(p.join(".env"), "a.txt\n").unwrap();
        let ws = Workspace::new(p);
        let files = ["rules", "zero", "passwd", "big", ".env", ".git/info/exclude2", "."];
        let opts = ignoring(IgnoreRules { files: files.iter().map(|s| s.to_string()).collect(), ..Default::default() });
        let w = Rc::new(Walker::new(&ws, &opts).unwrap());
        let root = &w.roots(&[".".to_string()]).unwrap()[0];
        let steps: Vec<_> = w.walk(root, None).collect();
        let problems: Vec<&str> = steps.iter().filter_map(|e| e.as_ref().err()).map(|e| e.message.as_str()).collect();
        for f in ["rules", "zero", "passwd", "big", ".git/info/exclude"] {
            assert!(problems.iter().any(|m| m.starts_with(&format!("{f}: "))), "{f}: {problems:?}");
        }
        // A denied file (`.env`, `.git` inside) is denied, never read.
        assert!(w.skips().denied >= 2, "{:?}", w.skips());
        let files: Vec<&str> =
            steps.iter().filter_map(|e| e.as_ref().ok()).filter(|e| e.is_file).map(|e| e.rel.as_str()).collect();
        assert!(files.contains(&"a.txt") && files.contains(&"b.txt"), "{files:?}");
    }

    #[test]
    fn links_to_denied_directories_expose_nothing() {
        let dir = tree(&[".aws/credentials", "secret/key.txt", "ok.txt"]);
        std::os::unix::fs::symlink(".aws", dir.path().join("creds")).unwrap();
        std::os::unix::fs::symlink("secret", dir.path().join("alias")).unwrap();
        let policy = crate::Policy {
            redact: true,
            extra_deny: vec!["secret/**".into()],
            inside_git_repository: false,
            cursor_key: String::new(),
            disabled_redaction_rules: vec![],
        };
        let ws = Workspace::new(dir.path()).with_policy(&policy).unwrap();
        let follow = WalkOptions { hidden: true, follow_symlinks: true, ..Default::default() };
        assert_eq!(walk_all(&ws, &follow, ".", None), ["ok.txt"]);
        // Named as a root, with or without following links.
        for opts in [follow, WalkOptions { hidden: true, ..Default::default() }] {
            assert!(walk_all(&ws, &opts, "creds", None).is_empty());
            assert!(walk_all(&ws, &opts, "alias", None).is_empty());
        }
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
