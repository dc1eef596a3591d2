//! Error phrasing: the one message for each [`SearchError`] kind, and how an
//! I/O error on a workspace path becomes one.

use crate::SearchError;

/// The message for an error, as front ends show it (the host's too:
/// `sandgrep-contract` words each kind once).
pub fn error_message(e: &SearchError) -> String {
    sandgrep_contract::search_error_message!(e)
}

/// Phrases an I/O error on a workspace path for the caller.
pub fn io_error(rel: &str, err: &std::io::Error) -> SearchError {
    match err.kind() {
        std::io::ErrorKind::NotFound => SearchError::NotFound(rel.to_string()),
        std::io::ErrorKind::PermissionDenied => SearchError::Io(format!(
            "{rel}: not permitted (unreadable, a link leading outside the workspace, or changed while being read)"
        )),
        std::io::ErrorKind::Interrupted => SearchError::Io(format!(
            "{rel}: not opened: it blocked until the time limit (a file system that does not answer?)"
        )),
        // What the host answers when a FIFO, socket or device is opened.
        std::io::ErrorKind::Unsupported => {
            SearchError::Io(format!("{rel}: not a regular file (a FIFO, socket or device put there while searching?)"))
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
