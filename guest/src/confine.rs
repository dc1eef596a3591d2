//! Path confinement: every path a caller names passes through [`normalize`]
//! before any filesystem call. The read-only preopen is the real guarantee;
//! this turns attempts to leave it into a clear `outside-workspace` error
//! instead of an opaque I/O failure, and gives every path one canonical,
//! workspace-relative spelling.

use crate::{deny, SearchError};

/// Normalizes a caller-given path to `a/b/c` form (or `.` for the root).
///
/// Refused: NUL bytes; absolute paths; Windows drive (`C:`), UNC (`\\host`)
/// and device forms; a `..` that would leave the root. `\` counts as a
/// separator so `..\x` cannot slip through. Denylisted paths are refused too,
/// so an explicit path cannot reach what a walk would skip.
pub fn normalize(path: &str) -> Result<String, SearchError> {
    if path.contains('\0') {
        return Err(SearchError::InvalidArgument(format!(
            "path {:?} contains a NUL byte",
            path.replace('\0', "\\0")
        )));
    }
    let outside = || SearchError::OutsideWorkspace(path.to_string());
    let bytes = path.as_bytes();
    if path.starts_with('/') || path.starts_with('\\') {
        return Err(outside());
    }
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        return Err(outside());
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(outside());
                }
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Ok(".".to_string());
    }
    let norm = parts.join("/");
    if deny::path_is_denied(&norm) {
        return Err(SearchError::Denied(norm));
    }
    Ok(norm)
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
    }

    #[test]
    fn escapes_are_refused() {
        for p in ["..", "../x", "a/../../x", "/etc/passwd", "/", "\\\\server\\share", "C:\\x", "c:/x", "..\\x", "a\\..\\..\\x"] {
            assert!(
                matches!(normalize(p), Err(SearchError::OutsideWorkspace(_))),
                "{p} was not refused"
            );
        }
        assert!(matches!(normalize("a\0b"), Err(SearchError::InvalidArgument(_))));
    }

    #[test]
    fn denied_paths_are_refused() {
        assert!(matches!(normalize(".git/config"), Err(SearchError::Denied(_))));
        assert!(matches!(normalize("deploy/.ENV"), Err(SearchError::Denied(_))));
        assert!(matches!(normalize("a/../.ssh"), Err(SearchError::Denied(_))));
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
