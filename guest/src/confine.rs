//! Path confinement: every path a caller names passes through [`normalize`]
//! before any filesystem call. The read-only preopen is the real guarantee;
//! this turns attempts to leave it into a clear `outside-workspace` error
//! instead of an opaque I/O failure, and gives every path one canonical,
//! workspace-relative spelling.

use std::collections::VecDeque;
use std::rc::Rc;

use sandgrep_contract::limits::OPEN_DIRS;
pub use sandgrep_contract::path_cmp;

use crate::error::io_error;
use crate::fs::{Dir, Kind};
use crate::{SearchError, Workspace};

/// Normalizes a caller-given path to `a/b/c` form (or `.` for the root).
///
/// Refused: NUL bytes; absolute paths; Windows drive (`C:\`, `C:/`), UNC
/// (`\\host`) and device forms; a `..` that would leave the root — also when
/// `\` is read as a separator, so `..\x` cannot slip through on a host that
/// reads it so. Otherwise `\` is an ordinary character of a name, as it is on
/// the POSIX filesystems sandgrep runs on.
pub fn normalize(path: &str) -> Result<String, SearchError> {
    if path.contains('\0') {
        return Err(SearchError::InvalidArgument(format!("path {:?} contains a NUL byte", path.replace('\0', "\\0"))));
    }
    let outside = || SearchError::OutsideWorkspace(path.to_string());
    let bytes = path.as_bytes();
    if path.starts_with('/') || path.starts_with('\\') {
        return Err(outside());
    }
    let drive = bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic();
    if drive && matches!(bytes.get(2), None | Some(b'/') | Some(b'\\')) {
        return Err(outside());
    }
    lexical(path.split(['/', '\\'])).ok_or_else(outside)?;
    let parts = lexical(path.split('/')).ok_or_else(outside)?;
    Ok(if parts.is_empty() { ".".to_string() } else { parts.join("/") })
}

/// Resolves `.` and `..` among path components; `None` if `..` leaves the root.
fn lexical<'p>(components: impl Iterator<Item = &'p str>) -> Option<Vec<&'p str>> {
    let mut parts = Vec::new();
    for part in components {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts)
}

/// What a path leads to, opened.
#[derive(Clone, Debug)]
pub enum Target {
    Dir(Rc<Dir>),
    /// A regular file: the directory it is in, and its name there.
    File(Rc<Dir>, String),
    /// A FIFO, socket or device: never opened.
    Other,
}

/// A path opened, and where it really is (links resolved).
#[derive(Clone, Debug)]
pub struct Opened {
    pub real: String,
    pub target: Target,
    /// The directories the real path passes through, outermost (the root,
    /// `.`) first: their workspace-relative paths.
    pub ancestors: Vec<String>,
}

/// Most links followed while resolving one path.
const MAX_HOPS: usize = 40;

/// Most path components one resolution goes through, links' included (a
/// chain of links to long paths must not cost a call its time).
const MAX_STEPS: usize = 1024;

/// Opens the normalized workspace-relative path `rel` one component at a
/// time, each relative to the directory opened before it and never letting
/// the host follow a link: a link is read and its target resolved here, and
/// every step of the real path is checked against the denylist before it is
/// opened. What is checked is what is opened, whatever changes meanwhile.
/// With `must_be_dir` (the caller wrote a trailing `/`), a file is an error,
/// as POSIX answers `ENOTDIR`. `shown` is the path as errors name it.
pub fn open(ws: &Workspace, rel: &str, must_be_dir: bool, shown: &str) -> Result<Opened, SearchError> {
    // `dirs[i]` is `names[..i]`; only the innermost few stay open (a `..`
    // back past them opens them again), the root always.
    let mut dirs = vec![Some(ws.root_dir()?)];
    let mut names: Vec<String> = Vec::new();
    let mut todo: VecDeque<String> = parts(rel).collect();
    let (mut hops, mut steps) = (0, 0);
    let io = |e: std::io::Error| io_error(shown, &e);
    while let Some(part) = todo.pop_front() {
        steps += 1;
        if steps > MAX_STEPS {
            return Err(SearchError::Io(format!("{shown}: too many path components through links")));
        }
        if part == ".." {
            names.pop().ok_or_else(|| SearchError::OutsideWorkspace(shown.to_string()))?;
            dirs.pop();
            continue;
        }
        let last = todo.is_empty();
        let dir = innermost(&mut dirs, &names).map_err(io)?;
        // The path so far passed: this name (in its parent) is what to check.
        let parent = names.last().cloned();
        names.push(part);
        let real = names.join("/");
        let name = names.last().expect("just pushed");
        if ws.entry_denied(&real, name, parent.as_deref()) {
            return Err(SearchError::Denied(shown.to_string()));
        }
        match dir.kind(name).map_err(io)? {
            Kind::Symlink => {
                hops += 1;
                if hops > MAX_HOPS {
                    return Err(SearchError::Io(format!("{shown}: symbolic link loop")));
                }
                let target = dir.read_link(name).map_err(io)?;
                // An absolute target names a host path: the sandbox cannot follow it.
                if target.starts_with('/') {
                    return Err(SearchError::OutsideWorkspace(shown.to_string()));
                }
                names.pop();
                let target: Vec<String> = parts(&target).collect();
                for part in target.into_iter().rev() {
                    todo.push_front(part);
                }
            }
            Kind::Dir => {
                let opened = dir.open_dir(name).map_err(io)?;
                if is_bare_repository(&opened) {
                    return Err(SearchError::Denied(shown.to_string()));
                }
                dirs.push(Some(opened));
                close_outer(&mut dirs);
            }
            Kind::File if last && !must_be_dir => {
                let name = names.pop().expect("just pushed");
                return Ok(Opened { real, target: Target::File(dir, name), ancestors: chain(&names) });
            }
            Kind::Other if last && !must_be_dir => {
                names.pop();
                return Ok(Opened { real, target: Target::Other, ancestors: chain(&names) });
            }
            Kind::File | Kind::Other => return Err(SearchError::Io(format!("{shown}: not a directory"))),
        }
    }
    let real = if names.is_empty() { ".".to_string() } else { names.join("/") };
    let dir = innermost(&mut dirs, &names).map_err(io)?;
    names.pop();
    Ok(Opened { real, target: Target::Dir(dir), ancestors: chain(&names) })
}

/// The innermost of `dirs` (`dirs[i]` is `names[..i]`), opened again from
/// the nearest one still open if it was closed.
fn innermost(dirs: &mut [Option<Rc<Dir>>], names: &[String]) -> std::io::Result<Rc<Dir>> {
    let open = dirs.iter().rposition(Option::is_some).expect("the root stays open");
    let mut dir = dirs[open].clone().expect("open");
    for i in open + 1..dirs.len() {
        dir = dir.open_dir(&names[i - 1])?;
        dirs[i] = Some(dir.clone());
    }
    close_outer(dirs);
    Ok(dir)
}

/// Closes all but the root and the innermost [`OPEN_DIRS`] of `dirs`.
fn close_outer(dirs: &mut [Option<Rc<Dir>>]) {
    let outer = dirs.len().saturating_sub(OPEN_DIRS);
    dirs.iter_mut().take(outer).skip(1).for_each(|d| *d = None);
}

/// The paths of the directories `names` passes through, the root first.
fn chain(names: &[String]) -> Vec<String> {
    std::iter::once(".".to_string()).chain((1..=names.len()).map(|i| names[..i].join("/"))).collect()
}

/// The components of a path that name something (`.` and empty ones dropped).
fn parts(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split('/').filter(|p| !p.is_empty() && *p != ".").map(str::to_string)
}

/// Whether a directory holds a bare git repository (`HEAD`, `objects/`,
/// `refs/`): its `config` and objects are git internals like `.git`'s.
pub fn is_bare_repository(dir: &Dir) -> bool {
    dir.kind("HEAD").is_ok_and(|k| k == Kind::File)
        && dir.kind("objects").is_ok_and(|k| k == Kind::Dir)
        && dir.kind("refs").is_ok_and(|k| k == Kind::Dir)
}

/// The same, from a directory's listing.
pub fn lists_bare_repository(names: &[(String, Kind)]) -> bool {
    let has = |name: &str, kind: Kind| names.iter().any(|(n, k)| n == name && *k == kind);
    has("HEAD", Kind::File) && has("objects", Kind::Dir) && has("refs", Kind::Dir)
}

/// Whether `path` is `root` itself or lies beneath it.
pub fn is_within(path: &str, root: &str) -> bool {
    root == "." || path == root || (path.starts_with(root) && path.as_bytes().get(root.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    #[test]
    fn normal_forms() {
        assert_eq!(normalize("").unwrap(), ".");
        assert_eq!(normalize(".").unwrap(), ".");
        assert_eq!(normalize("./").unwrap(), ".");
        assert_eq!(normalize("./src//lib.rs").unwrap(), "src/lib.rs");
        assert_eq!(normalize("src/../tests/./a").unwrap(), "tests/a");
        assert_eq!(normalize("a/b/..").unwrap(), "a");
        assert_eq!(normalize("-dash dir/ü.rs").unwrap(), "-dash dir/ü.rs");
        // Legal POSIX names that look Windows-ish.
        assert_eq!(normalize("back\\slash.txt").unwrap(), "back\\slash.txt");
        assert_eq!(normalize("C:notes.txt").unwrap(), "C:notes.txt");
    }

    #[test]
    fn escapes_are_refused() {
        for p in [
            "..",
            "../x",
            "a/../../x",
            "/etc/passwd",
            "/",
            "\\\\server\\share",
            "C:\\x",
            "c:/x",
            "C:",
            "..\\x",
            "a\\..\\..\\x",
        ] {
            assert!(matches!(normalize(p), Err(SearchError::OutsideWorkspace(_))), "{p} was not refused");
        }
        assert!(matches!(normalize("a\0b"), Err(SearchError::InvalidArgument(_))));
    }

    #[test]
    fn paths_order_as_rg_sort_path_orders_them() {
        // Rust's `Path` order, which `rg --sort path` follows.
        let names = [
            ".",
            "a",
            "a/b",
            "a/b/c",
            "a+",
            "a!",
            "a-",
            "a.",
            "a.b/c",
            "a0",
            "ab",
            "git/x.go",
            "git.go",
            "git-x",
            "git/x/y",
            "git/x.go/z",
            "A",
            "\u{1}",
            "a\u{1}b",
            "a/\u{1}",
            "ü",
            "z/ü/a",
            "z/u/a",
            "-x",
        ];
        for a in names {
            for b in names {
                let want = std::path::Path::new(a).cmp(std::path::Path::new(b));
                assert_eq!(path_cmp(a, b), want, "{a:?} {b:?}");
            }
        }
        // Behind shared prefixes of every length (compared eight bytes at a
        // time): the same order.
        for n in 1..=18 {
            let prefix = format!("{}/", "d".repeat(n));
            for a in names.iter().filter(|a| **a != ".") {
                for b in names.iter().filter(|b| **b != ".") {
                    let (a, b) = (format!("{prefix}{a}"), format!("{prefix}{b}"));
                    let want = std::path::Path::new(&a).cmp(std::path::Path::new(&b));
                    assert_eq!(path_cmp(&a, &b), want, "{a:?} {b:?}");
                }
            }
        }
        let mut v = vec!["git.go", "git/x.go", "git-x", "a+", "a/b", "a!", "a.b/c", "ab", "a"];
        v.sort_by(|a, b| path_cmp(a, b));
        assert_eq!(v, ["a", "a/b", "a!", "a+", "a.b/c", "ab", "git/x.go", "git-x", "git.go"]);
        // A walk event's key: just after its path, before what follows it.
        for (before, anchor, after) in
            [("a", "a\0", "a/b"), ("a", "a\0", "a!"), ("a/b", "a/b\0", "a+"), ("", "\0", "-")]
        {
            assert_eq!(path_cmp(before, anchor), Ordering::Less);
            assert_eq!(path_cmp(anchor, after), Ordering::Less, "{anchor:?} {after:?}");
        }
        assert!(is_within("src/a.rs", "src"));
        assert!(!is_within("srcx/a.rs", "src"));
        assert!(is_within("x", "."));
    }
}
