//! Path confinement: every path a caller names passes through [`normalize`]
//! before any filesystem call. The read-only preopen is the real guarantee;
//! this turns attempts to leave it into a clear `outside-workspace` error
//! instead of an opaque I/O failure, and gives every path one canonical,
//! workspace-relative spelling.

use crate::walk::io_error;
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

/// Resolves the links along a workspace-relative path, lexically and inside
/// the workspace (WASI has no `canonicalize`). Absolute link targets cannot be
/// resolved inside the sandbox and are refused, as are escapes.
pub fn realpath(ws: &Workspace, rel: &str) -> Result<String, SearchError> {
    let mut done: Vec<String> = Vec::new();
    let mut todo: std::collections::VecDeque<String> = rel.split('/').map(str::to_string).collect();
    let mut hops = 0;
    while let Some(part) = todo.pop_front() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                done.pop().ok_or_else(|| SearchError::OutsideWorkspace(rel.to_string()))?;
                continue;
            }
            _ => done.push(part),
        }
        let path = ws.fs_path(&done.join("/"));
        let meta = std::fs::symlink_metadata(&path).map_err(|e| io_error(rel, &e))?;
        if meta.is_symlink() {
            hops += 1;
            if hops > 40 {
                return Err(SearchError::Io(format!("{rel}: symbolic link loop")));
            }
            let target = std::fs::read_link(&path).map_err(|e| io_error(rel, &e))?;
            let target = target.to_string_lossy();
            // An absolute target names a host path: the sandbox cannot follow it.
            if target.starts_with('/') {
                return Err(SearchError::OutsideWorkspace(rel.to_string()));
            }
            done.pop();
            for part in target.rsplit('/') {
                todo.push_front(part.to_string());
            }
        }
    }
    Ok(if done.is_empty() { ".".into() } else { done.join("/") })
}

/// Sort key that orders paths the way their contents are listed bytewise:
/// a directory `a` sorts as `a/`, after `a.txt` and before `a0`.
pub fn dir_sort_key(path: &str, is_dir: bool) -> String {
    if is_dir && path != "." {
        format!("{path}/")
    } else if path == "." {
        String::new()
    } else {
        path.to_string()
    }
}

/// Whether `path` is `root` itself or lies beneath it.
pub fn is_within(path: &str, root: &str) -> bool {
    root == "." || path == root || (path.starts_with(root) && path.as_bytes().get(root.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn sort_keys_order_like_full_paths() {
        let mut v = vec![("a", true), ("a.txt", false), ("a0", false), ("a-b", true)];
        v.sort_by_key(|(p, d)| dir_sort_key(p, *d));
        assert_eq!(v.iter().map(|x| x.0).collect::<Vec<_>>(), ["a-b", "a.txt", "a", "a0"]);
        assert!(is_within("src/a.rs", "src"));
        assert!(!is_within("srcx/a.rs", "src"));
        assert!(is_within("x", "."));
    }
}
