//! The filesystem calls of walks and searches, with as few host calls as
//! the platform allows — per-file costs are what separate a sandboxed search
//! from a native one. Through the standard library a WASI file costs an open,
//! three stats, a 3-byte read (BOM sniffing), the body and a read at EOF, and
//! a directory listing stats every entry twice; called directly,
//! `wasi:filesystem` needs an open, one stat and one read per 64 KiB for a
//! file, and one listing (the host stats each entry once) for a directory.

use std::io::{self, Read};
use std::path::Path;

/// The first read takes up to this much; later reads are the caller's size.
const FIRST_READ: u64 = 64 * 1024;

/// A file open for reading, with its size when opened.
pub struct SearchFile {
    raw: Raw,
    size: u64,
    offset: u64,
    /// The first chunk, served to small reads (BOM sniffing) from memory.
    head: Vec<u8>,
    head_pos: usize,
}

impl SearchFile {
    pub fn open(path: &Path) -> io::Result<SearchFile> {
        let (raw, size) = Raw::open(path)?;
        Ok(SearchFile { raw, size, offset: 0, head: Vec::new(), head_pos: 0 })
    }

    pub fn size(&self) -> u64 {
        self.size
    }
}

impl Read for SearchFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.offset == 0 && self.head.is_empty() && self.size > 0 {
            self.head = self.raw.read_at(0, FIRST_READ.min(self.size))?;
            self.offset = self.head.len() as u64;
        }
        if self.head_pos < self.head.len() {
            let n = buf.len().min(self.head.len() - self.head_pos);
            buf[..n].copy_from_slice(&self.head[self.head_pos..self.head_pos + n]);
            self.head_pos += n;
            return Ok(n);
        }
        // Past the size seen at open: the end (a file growing meanwhile is
        // searched as it was).
        let want = (buf.len() as u64).min(self.size.saturating_sub(self.offset));
        if want == 0 {
            return Ok(0);
        }
        let n = self.raw.read_into(self.offset, &mut buf[..want as usize])?;
        self.offset += n as u64;
        Ok(n)
    }
}

/// What a directory listing says an entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// FIFOs, sockets, devices: never opened.
    Other,
}

/// The entries of the directory at `path`: names and kinds, unsorted, and
/// how many names could not be read (not UTF-8: WASI cannot carry them).
pub fn list_dir(path: &Path) -> io::Result<(Vec<(String, Kind)>, usize)> {
    Raw::list_dir(path)
}

#[cfg(target_arch = "wasm32")]
use wasi_raw::Raw;

#[cfg(target_arch = "wasm32")]
mod wasi_raw {
    use std::io;
    use std::path::Path;

    use super::Kind;
    use wasip2::filesystem::types::{Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags};

    thread_local! {
        /// The preopened workspace: `.` as the sandgrep host names it, else
        /// the first preopen (other hosts may call it `/`).
        static WORKSPACE: Option<Descriptor> = {
            let mut dirs = wasip2::filesystem::preopens::get_directories();
            let i = dirs.iter().position(|(_, name)| name == ".").unwrap_or(0);
            (i < dirs.len()).then(|| dirs.swap_remove(i).0)
        };
    }

    pub struct Raw(Descriptor);

    impl Raw {
        pub fn open(path: &Path) -> io::Result<(Raw, u64)> {
            let path = path.to_str().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not UTF-8"))?;
            let d = WORKSPACE.with(|w| match w {
                Some(w) => w.open_at(PathFlags::SYMLINK_FOLLOW, path, OpenFlags::empty(), DescriptorFlags::READ),
                None => Err(ErrorCode::NoEntry),
            });
            let d = d.map_err(error)?;
            let stat = d.stat().map_err(error)?;
            if stat.type_ == DescriptorType::Directory {
                return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory"));
            }
            Ok((Raw(d), stat.size))
        }

        pub fn read_at(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
            self.0.read(len, offset).map(|(bytes, _)| bytes).map_err(error)
        }

        pub fn list_dir(path: &Path) -> io::Result<(Vec<(String, Kind)>, usize)> {
            let path = path.to_str().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not UTF-8"))?;
            let d = WORKSPACE.with(|w| match w {
                Some(w) => w.open_at(PathFlags::SYMLINK_FOLLOW, path, OpenFlags::DIRECTORY, DescriptorFlags::READ),
                None => Err(ErrorCode::NoEntry),
            });
            let stream = d.and_then(|d| d.read_directory()).map_err(error)?;
            let (mut entries, mut unnamed) = (Vec::new(), 0);
            loop {
                match stream.read_directory_entry() {
                    Ok(Some(e)) => {
                        let kind = match e.type_ {
                            DescriptorType::RegularFile => Kind::File,
                            DescriptorType::Directory => Kind::Dir,
                            DescriptorType::SymbolicLink => Kind::Symlink,
                            _ => Kind::Other,
                        };
                        entries.push((e.name, kind));
                    }
                    Ok(None) => return Ok((entries, unnamed)),
                    // The host lists every entry first; a bad one is skipped.
                    Err(ErrorCode::IllegalByteSequence) => unnamed += 1,
                    Err(e) => return Err(error(e)),
                }
            }
        }

        pub fn read_into(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
            let bytes = self.read_at(offset, buf.len() as u64)?;
            buf[..bytes.len()].copy_from_slice(&bytes);
            Ok(bytes.len())
        }
    }

    fn error(code: ErrorCode) -> io::Error {
        let kind = match code {
            ErrorCode::NoEntry => io::ErrorKind::NotFound,
            ErrorCode::Access | ErrorCode::NotPermitted => io::ErrorKind::PermissionDenied,
            ErrorCode::Loop => io::ErrorKind::PermissionDenied,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, code.message())
    }
}

#[cfg(not(target_arch = "wasm32"))]
struct Raw(std::fs::File);

#[cfg(not(target_arch = "wasm32"))]
impl Raw {
    fn open(path: &Path) -> io::Result<(Raw, u64)> {
        let file = std::fs::File::open(path)?;
        let size = file.metadata()?.len();
        Ok((Raw(file), size))
    }

    fn read_at(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let mut buf = vec![0; len as usize];
        let n = self.read_into(offset, &mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }

    fn read_into(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(&self.0, buf, offset)
    }

    fn list_dir(path: &Path) -> io::Result<(Vec<(String, Kind)>, usize)> {
        let (mut entries, mut unnamed) = (Vec::new(), 0);
        for e in std::fs::read_dir(path)? {
            let e = e?;
            let Ok(name) = e.file_name().into_string() else {
                unnamed += 1;
                continue;
            };
            let t = e.file_type()?;
            let kind = if t.is_file() {
                Kind::File
            } else if t.is_dir() {
                Kind::Dir
            } else if t.is_symlink() {
                Kind::Symlink
            } else {
                Kind::Other
            };
            entries.push((name, kind));
        }
        Ok((entries, unnamed))
    }
}
