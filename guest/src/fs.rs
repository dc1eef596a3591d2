//! Every filesystem call of the component, descriptor by descriptor.
//!
//! Nothing is ever opened by a path string: a directory is opened by one
//! name relative to a directory already opened (and checked), never
//! following a link; a file likewise, then checked to be a regular file on
//! the descriptor itself. Links are read, never followed by the host:
//! [`crate::confine`] resolves them and checks where they lead before
//! anything is opened there. So a deny check and the open it guards see the
//! same object, whatever another process renames or swaps meanwhile.
//!
//! It is also the cheaper way: per file an open of one name, one stat and
//! one read per 64 KiB; per directory one listing (the host stats each entry
//! once). Through the standard library a WASI file costs an open, three
//! stats, a 3-byte read and a read at EOF, and the host resolves the whole
//! path again on every open.

use std::io::{self, Read};
use std::rc::Rc;

/// The first read takes up to this much; later reads are the caller's size.
const FIRST_READ: u64 = 64 * 1024;

/// What a directory entry (not followed) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// FIFOs, sockets, devices: never opened.
    Other,
}

/// A directory of the workspace, open.
pub struct Dir(raw::Dir);

impl std::fmt::Debug for Dir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dir")
    }
}

/// A regular file of the workspace, open for reading, with its size when
/// opened.
pub struct SearchFile {
    raw: Rc<raw::File>,
    size: u64,
    offset: u64,
    /// The first chunk, served to small reads (BOM sniffing) from memory.
    head: Vec<u8>,
    head_pos: usize,
}

/// Size and modification time (UNIX seconds) of an entry.
pub struct Meta {
    pub size: u64,
    pub modified: Option<i64>,
    /// Modification and status-change times in nanoseconds (0: unknown),
    /// what tells the index a file is the one it read.
    pub modified_ns: u64,
    pub changed_ns: u64,
    /// Last access in nanoseconds (0: unknown).
    pub accessed_ns: u64,
    /// Hard links to the file (a change through one outside the workspace
    /// reaches no watcher of it).
    pub links: u64,
}

fn invalid(message: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// The index directory the host preopened, if it did (inside the component).
pub fn index_preopen() -> Option<std::path::PathBuf> {
    #[cfg(target_arch = "wasm32")]
    {
        let dirs = wasip2::filesystem::preopens::get_directories();
        if dirs.iter().any(|(_, name)| name == crate::index::PREOPEN) {
            return Some(crate::index::PREOPEN.into());
        }
    }
    None
}

/// A single name: no separator, not `.` or `..`.
fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(invalid("not a single name"));
    }
    Ok(())
}

impl Dir {
    /// The workspace root (inside the component, the preopened directory).
    pub fn root(native_root: &std::path::Path) -> io::Result<Rc<Dir>> {
        raw::Dir::root(native_root).map(|d| Rc::new(Dir(d)))
    }

    /// The entries: names and kinds, unsorted, and how many names could not
    /// be read (not UTF-8: WASI cannot carry them).
    pub fn list(&self) -> io::Result<(Vec<(String, Kind)>, usize)> {
        self.0.list()
    }

    /// What `name` is, without following a link.
    pub fn kind(&self, name: &str) -> io::Result<Kind> {
        check_name(name)?;
        self.0.stat_at(name).map(|(kind, _)| kind)
    }

    /// Size and modification time of `name`, without following a link.
    pub fn meta(&self, name: &str) -> io::Result<Meta> {
        check_name(name)?;
        self.0.stat_at(name).map(|(_, meta)| meta)
    }

    /// The subdirectory `name`; a link there is an error, not followed.
    pub fn open_dir(&self, name: &str) -> io::Result<Rc<Dir>> {
        check_name(name)?;
        self.0.open_dir(name).map(|d| Rc::new(Dir(d)))
    }

    /// The regular file `name`. A link is an error, not followed; what is
    /// not a regular file once open is refused.
    pub fn open_file(&self, name: &str) -> io::Result<SearchFile> {
        check_name(name)?;
        let (raw, size) = self.0.open_file(name)?;
        Ok(SearchFile { raw: Rc::new(raw), size, offset: 0, head: Vec::new(), head_pos: 0 })
    }

    /// The target of the link `name`, as written.
    pub fn read_link(&self, name: &str) -> io::Result<String> {
        check_name(name)?;
        self.0.read_link(name)
    }

    /// Which directory this is (device and inode, as the host hashes them):
    /// the same after it is opened again only if it was not replaced.
    pub fn identity(&self) -> io::Result<(u64, u64)> {
        self.0.identity()
    }
}

impl SearchFile {
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Another handle on the same open file, for reads at offsets while
    /// this one is being read through.
    pub fn at(&self) -> FileAt {
        FileAt { raw: Some(self.raw.clone()), size: self.size, bytes: None, text: None, ..FileAt::TEXT }
    }
}

/// An open file read at offsets (the same descriptor as a [`SearchFile`]),
/// or bytes a caller handed in (`search-bytes`), or the text a compressed
/// file decompressed to (`search-zip`), read the same way.
#[derive(Clone)]
pub struct FileAt {
    raw: Option<Rc<raw::File>>,
    size: u64,
    /// The bytes, when there is no file.
    bytes: Option<Rc<[u8]>>,
    /// The decompressed text, when the file was compressed.
    text: Option<Rc<crate::decompress::Text>>,
    /// A UTF-16 byte order mark makes it the UTF-8 it transcodes to (not
    /// with `-E none`).
    sniffed: bool,
    /// The encoding asked for (`-E`): the text is the UTF-8 it transcodes
    /// to, as the searcher decodes it.
    encoding: Option<&'static encoding_rs::Encoding>,
    /// The searcher drops a UTF-8 byte order mark (sniffed, not `-E none`).
    strip_utf8_bom: bool,
}

impl FileAt {
    const TEXT: FileAt =
        FileAt { raw: None, size: 0, bytes: None, text: None, sniffed: true, encoding: None, strip_utf8_bom: false };

    /// Bytes in memory read as a file.
    pub fn bytes(bytes: Rc<[u8]>) -> FileAt {
        FileAt { raw: None, size: bytes.len() as u64, bytes: Some(bytes), text: None, ..FileAt::TEXT }
    }

    /// A compressed file's text read as the file (UTF-16 sniffed as a
    /// file's is).
    pub fn decompressed(text: Rc<crate::decompress::Text>) -> FileAt {
        FileAt { raw: None, size: text.len(), bytes: None, text: Some(text), ..FileAt::TEXT }
    }

    /// The same, its bytes as they are even after a UTF-16 byte order mark
    /// (searched with `-E none`).
    pub fn unsniffed(self) -> FileAt {
        FileAt { sniffed: false, ..self }
    }

    /// The same, its text as the searcher sees it: transcoded from the
    /// `encoding` asked for (a label `-E` checked; not `none`), and without
    /// a UTF-8 byte order mark (grep-searcher decodes a file that starts
    /// with one, read whole or a buffer at a time, and drops it).
    pub fn as_searched(self, encoding: Option<&str>) -> FileAt {
        let encoding = encoding.and_then(|label| encoding_rs::Encoding::for_label_no_replacement(label.as_bytes()));
        FileAt { encoding, strip_utf8_bom: self.sniffed, ..self }
    }

    /// Whether its text is transcoded (see [`FileAt::text_range`]).
    pub fn transcoded(&self) -> bool {
        self.encoding.is_some() || self.is_utf16()
    }

    /// Up to `len` bytes at `offset` (within the size seen at open).
    pub fn read_at(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let len = len.min(self.size.saturating_sub(offset));
        if let Some(text) = &self.text {
            return Ok(text.read_at(offset, len));
        }
        let Some(raw) = &self.raw else {
            let bytes = self.bytes.as_deref().unwrap_or_default();
            return Ok(bytes[offset.min(self.size) as usize..][..len as usize].to_vec());
        };
        let mut out = Vec::with_capacity(len as usize);
        while (out.len() as u64) < len {
            let chunk = raw.read_at(offset + out.len() as u64, len - out.len() as u64)?;
            if chunk.is_empty() {
                break;
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }

    /// Whether the file starts with a UTF-16 byte order mark: it is then
    /// searched and read as the UTF-8 it transcodes to.
    pub fn is_utf16(&self) -> bool {
        // (No read where no mark is looked for.)
        self.sniffed && self.read_at(0, 2).is_ok_and(|head| self.utf16_head(&head))
    }

    /// Whether `head`, its first bytes, is a UTF-16 byte order mark.
    fn utf16_head(&self, head: &[u8]) -> bool {
        self.sniffed
            && (self.raw.is_some() || self.text.is_some())
            && head.get(..2).is_some_and(|h| h == [0xFF, 0xFE] || h == [0xFE, 0xFF])
    }

    /// Bytes `from..from + len` of the file's text: its bytes, or the UTF-8
    /// a UTF-16 file or the encoding asked for transcodes it to, as the
    /// searcher decodes it (what search and read offsets count).
    pub fn text_range(&self, from: u64, len: u64) -> io::Result<Vec<u8>> {
        if self.encoding.is_none() {
            // (One read for both byte order marks.)
            let head = if self.sniffed { self.read_at(0, 3)? } else { Vec::new() };
            if !self.utf16_head(&head) {
                let utf8 = self.strip_utf8_bom && head == b"\xEF\xBB\xBF";
                return self.read_at(from + if utf8 { 3 } else { 0 }, len);
            }
        }
        let reader: Box<dyn Read> = match (&self.raw, &self.text) {
            (Some(raw), _) => {
                Box::new(SearchFile { raw: raw.clone(), size: self.size, offset: 0, head: Vec::new(), head_pos: 0 })
            }
            (None, Some(text)) => Box::new(crate::decompress::Text::reader(text.clone())),
            (None, None) => return self.read_at(from, len),
        };
        // (grep-searcher's decoder, built as it builds it.)
        let mut text = encoding_rs_io::DecodeReaderBytesBuilder::new()
            .encoding(self.encoding)
            .utf8_passthru(true)
            .strip_bom(self.sniffed)
            .bom_override(true)
            .bom_sniffing(self.sniffed)
            .build(reader);
        io::copy(&mut (&mut text).take(from), &mut io::sink())?;
        let mut out = Vec::new();
        text.take(len).read_to_end(&mut out)?;
        Ok(out)
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

#[cfg(target_arch = "wasm32")]
mod raw {
    use std::io;

    use super::{Kind, Meta};
    use wasip2::filesystem::types::{
        Descriptor, DescriptorFlags, DescriptorStat, DescriptorType, ErrorCode, OpenFlags, PathFlags,
    };

    pub struct Dir(Descriptor);
    pub struct File(Descriptor);

    fn kind(t: DescriptorType) -> Kind {
        match t {
            DescriptorType::RegularFile => Kind::File,
            DescriptorType::Directory => Kind::Dir,
            DescriptorType::SymbolicLink => Kind::Symlink,
            _ => Kind::Other,
        }
    }

    fn meta(s: &DescriptorStat) -> Meta {
        let ns = |t: Option<wasip2::clocks::wall_clock::Datetime>| {
            t.map_or(0, |t| t.seconds.saturating_mul(1_000_000_000).saturating_add(u64::from(t.nanoseconds)))
        };
        Meta {
            size: s.size,
            modified: s.data_modification_timestamp.map(|t| t.seconds as i64),
            accessed_ns: ns(s.data_access_timestamp),
            modified_ns: ns(s.data_modification_timestamp),
            changed_ns: ns(s.status_change_timestamp),
            links: s.link_count,
        }
    }

    impl Dir {
        /// The preopened workspace: `.` as the sandgrep host names it, else
        /// the first preopen (other hosts may call it `/`).
        pub fn root(_: &std::path::Path) -> io::Result<Dir> {
            let mut dirs = wasip2::filesystem::preopens::get_directories();
            let i = dirs.iter().position(|(_, name)| name == ".").unwrap_or(0);
            if i >= dirs.len() {
                return Err(io::Error::new(io::ErrorKind::NotFound, "no workspace directory was given"));
            }
            // Opened again as `.`: some hosts (jco) cannot list a preopen itself.
            let preopen = dirs.swap_remove(i).0;
            preopen
                .open_at(PathFlags::empty(), ".", OpenFlags::DIRECTORY, DescriptorFlags::READ)
                .map(Dir)
                .map_err(error)
        }

        pub fn list(&self) -> io::Result<(Vec<(String, Kind)>, usize)> {
            let stream = self.0.read_directory().map_err(error)?;
            let (mut entries, mut unnamed) = (Vec::new(), 0);
            loop {
                match stream.read_directory_entry() {
                    Ok(Some(e)) => entries.push((e.name, kind(e.type_))),
                    Ok(None) => return Ok((entries, unnamed)),
                    // The host lists every entry first; a bad one is skipped.
                    Err(ErrorCode::IllegalByteSequence) => unnamed += 1,
                    Err(e) => return Err(error(e)),
                }
            }
        }

        pub fn stat_at(&self, name: &str) -> io::Result<(Kind, Meta)> {
            let s = self.0.stat_at(PathFlags::empty(), name).map_err(error)?;
            Ok((kind(s.type_), meta(&s)))
        }

        pub fn open_dir(&self, name: &str) -> io::Result<Dir> {
            self.0
                .open_at(PathFlags::empty(), name, OpenFlags::DIRECTORY, DescriptorFlags::READ)
                .map(Dir)
                .map_err(error)
        }

        pub fn open_file(&self, name: &str) -> io::Result<(File, u64)> {
            let d =
                self.0.open_at(PathFlags::empty(), name, OpenFlags::empty(), DescriptorFlags::READ).map_err(error)?;
            let s = d.stat().map_err(error)?;
            match s.type_ {
                DescriptorType::RegularFile => Ok((File(d), s.size)),
                DescriptorType::Directory => Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory")),
                _ => Err(io::Error::other("not a regular file")),
            }
        }

        pub fn read_link(&self, name: &str) -> io::Result<String> {
            self.0.readlink_at(name).map_err(error)
        }

        pub fn identity(&self) -> io::Result<(u64, u64)> {
            let h = self.0.metadata_hash().map_err(error)?;
            Ok((h.lower, h.upper))
        }
    }

    impl File {
        pub fn read_at(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
            self.0.read(len, offset).map(|(bytes, _)| bytes).map_err(error)
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
            // A link where a directory or file was listed: it changed since.
            ErrorCode::Loop => io::ErrorKind::PermissionDenied,
            ErrorCode::NotDirectory => io::ErrorKind::NotADirectory,
            ErrorCode::IsDirectory => io::ErrorKind::IsADirectory,
            ErrorCode::Interrupted => io::ErrorKind::Interrupted,
            // The host's answer to opening a FIFO, socket or device.
            ErrorCode::Unsupported => io::ErrorKind::Unsupported,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, code.message())
    }
}

/// Natively (unit tests, fuzzing) a directory is its path and every check
/// is made by `lstat` before the open: the same decisions, without the
/// descriptor discipline the component keeps.
#[cfg(not(target_arch = "wasm32"))]
mod raw {
    use std::io;
    use std::os::unix::fs::{FileExt, MetadataExt};
    use std::path::{Path, PathBuf};

    use super::{Kind, Meta};

    pub struct Dir(PathBuf);
    pub struct File(std::fs::File);

    fn kind(t: std::fs::FileType) -> Kind {
        if t.is_file() {
            Kind::File
        } else if t.is_dir() {
            Kind::Dir
        } else if t.is_symlink() {
            Kind::Symlink
        } else {
            Kind::Other
        }
    }

    impl Dir {
        pub fn root(path: &Path) -> io::Result<Dir> {
            Ok(Dir(path.to_path_buf()))
        }

        pub fn list(&self) -> io::Result<(Vec<(String, Kind)>, usize)> {
            let (mut entries, mut unnamed) = (Vec::new(), 0);
            for e in std::fs::read_dir(&self.0)? {
                let e = e?;
                let Ok(name) = e.file_name().into_string() else {
                    unnamed += 1;
                    continue;
                };
                entries.push((name, kind(e.file_type()?)));
            }
            Ok((entries, unnamed))
        }

        pub fn stat_at(&self, name: &str) -> io::Result<(Kind, Meta)> {
            let m = std::fs::symlink_metadata(self.0.join(name))?;
            let ns = |s: i64, n: i64| (s as u64).saturating_mul(1_000_000_000).saturating_add(n as u64);
            let meta = Meta {
                size: m.len(),
                modified: Some(m.mtime()),
                accessed_ns: ns(m.atime(), m.atime_nsec()),
                modified_ns: ns(m.mtime(), m.mtime_nsec()),
                changed_ns: ns(m.ctime(), m.ctime_nsec()),
                links: m.nlink(),
            };
            Ok((kind(m.file_type()), meta))
        }

        fn expect(&self, name: &str, want: Kind) -> io::Result<PathBuf> {
            let path = self.0.join(name);
            match kind(std::fs::symlink_metadata(&path)?.file_type()) {
                k if k == want => Ok(path),
                Kind::Symlink => Err(io::Error::new(io::ErrorKind::PermissionDenied, "a link")),
                Kind::Dir => Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory")),
                Kind::File => Err(io::Error::new(io::ErrorKind::NotADirectory, "not a directory")),
                Kind::Other => Err(io::Error::other("not a regular file")),
            }
        }

        pub fn open_dir(&self, name: &str) -> io::Result<Dir> {
            self.expect(name, Kind::Dir).map(Dir)
        }

        pub fn open_file(&self, name: &str) -> io::Result<(File, u64)> {
            let file = std::fs::File::open(self.expect(name, Kind::File)?)?;
            let size = file.metadata()?.len();
            Ok((File(file), size))
        }

        pub fn read_link(&self, name: &str) -> io::Result<String> {
            Ok(std::fs::read_link(self.0.join(name))?.to_string_lossy().into_owned())
        }

        pub fn identity(&self) -> io::Result<(u64, u64)> {
            let m = std::fs::metadata(&self.0)?;
            Ok((m.dev(), m.ino()))
        }
    }

    impl File {
        pub fn read_at(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
            let mut buf = vec![0; len as usize];
            let n = self.read_into(offset, &mut buf)?;
            buf.truncate(n);
            Ok(buf)
        }

        pub fn read_into(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
            self.0.read_at(buf, offset)
        }
    }
}
