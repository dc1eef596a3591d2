//! What a file's search reads: the file, or with `search-zip` (rg's `-z`)
//! the text a compressed file holds, decompressed in memory first (see
//! [`crate::decompress`]), so it is searched, redacted and checked for
//! NUL bytes exactly as a file holding that text is.

use std::io::{self, Read};
use std::rc::Rc;
use std::time::Instant;

use crate::decompress::{self, Decompressed, Format, TextReader};
use crate::error::error_message;
use crate::fs::{FileAt, SearchFile};
use crate::request::TextQuery;
use crate::{FileOutcome, SearchError, ShardEventKind};

/// The bytes a file's search reads.
pub(super) enum Input {
    File(SearchFile),
    Text(TextReader),
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::File(f) => f.read(buf),
            Input::Text(t) => t.read(buf),
        }
    }
}

/// What the search of `file` (at `rel`) reads: the file (read at offsets
/// by the [`FileAt`]) or, for a compressed file with `search-zip`, its
/// text, with the decoder's error when it broke off (the text before the
/// break is searched, as rg searches what the decompressor wrote before it
/// failed). `Err`: the file's outcome without a search (too large, out of
/// time).
pub(super) fn open(
    q: &TextQuery,
    rel: &str,
    file: SearchFile,
    deadline: Option<Instant>,
) -> Result<(FileAt, Input, Option<String>), ShardEventKind> {
    let Some(format) = Format::of(rel).filter(|_| q.search_zip) else {
        return Ok((file.at(), Input::File(file), None));
    };
    let (text, broken) = match decompress::decompress(format, file, q.max_filesize, deadline) {
        Decompressed::Whole(text) => (text, None),
        Decompressed::Failed(mut text, message) => {
            // rg reads the decompressor's output line by line: the read
            // that fails is the one past its last line break, so a line
            // the break left unfinished is never searched.
            text.cut_after_last(if q.null_data { b'\0' } else { b'\n' });
            (text, Some(error_message(&SearchError::Io(format!("{rel}: {message}")))))
        }
        Decompressed::TooLarge => return Err(ShardEventKind::TooLarge),
        Decompressed::TimedOut => return Err(ShardEventKind::Searched(timed_out())),
    };
    let text = Rc::new(text);
    Ok((FileAt::decompressed(text.clone()), Input::Text(decompress::Text::reader(text)), broken))
}

/// A file not searched for want of time (searched again on the next page,
/// or named as not searched to its end when it is a page's first).
fn timed_out() -> FileOutcome {
    FileOutcome { timed_out: true, ..super::no_outcome() }
}
