//! The persistent index (SPEC §6): for each file of the workspace, the
//! three-byte sequences it holds (bytes as they are), so a search
//! can leave unread the files that cannot match.
//!
//! It only ever narrows: the search still walks the tree (ignore files,
//! globs, denylist, order: the scan's rules) and reads every file it does
//! not skip. A file is skipped only when the index read it, its size,
//! modification and status-change times are still the ones read then, those
//! times were not within [`RACY_NS`] of the read (a write in the same clock
//! tick would leave them unchanged), and the query's plan rules it out. So
//! an index that is stale, partial or from before an edit gives the answer
//! a scan gives; one that is corrupt (checksums), of another format or built
//! under another policy is not used at all.
//!
//! One file, `index.v1` in the index directory, replaced atomically (written
//! beside, then renamed): header, postings (delta-coded file numbers, one
//! list per trigram), file table (in path order, [`path_cmp`]), dictionary
//! (trigram → its postings).
//!
//! A refresh that read few files (at most one in [`DELTA_SHARE`] of the
//! table read since the index was written) leaves the index as it is and
//! writes `index.v1.delta` beside it, in the same layout: the whole new
//! table and walk, for each file whether the index's lists still hold it
//! (and as which number), and the lists of the files read since. Its
//! header names the index it belongs to (that index's header checksum): a
//! new index leaves an old delta naming another, which is never used. So a
//! refresh after a branch switch writes the table and the changed files'
//! lists, not every list; once the delta grows past that share, the next
//! refresh folds it into a new index.
//!
//! A build holds a bounded number of (trigram, file) pairs in memory: past
//! [`RUN_PAIRS`] it writes them out, sorted, as a run beside the index, and
//! at the end merges the runs (and the old index's lists, renumbered) into
//! the postings, trigram by trigram — split by ranges of trigrams over
//! instances, each range's lists a part joined into the index, a
//! [`WINDOW`] of trigrams' lists held at a time. So its memory grows with
//! the table of files and the dictionary, not with the tree's bytes.

mod build;
mod plan;

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Instant, SystemTime};

#[cfg_attr(not(target_arch = "wasm32"), allow(unused_imports))]
pub use build::{finish, merge_range, read_batch, refresh, split, walk_batch};
pub use plan::{plan, Query};

use crate::confine::path_cmp;
use crate::cursor::{read_varint, varint};
use crate::fs::Meta;
use crate::request::WalkOptions;
use crate::walk::{self, Entry, Reopen, Skips, Step, Walker};
use crate::{redact, session};
use crate::{IndexReport, IndexUse, SearchError, Workspace};
use sandgrep_contract::index_file::{self, checksum, DELTA_HEADER, DELTA_MAGIC, DELTA_NAME, HEADER, MAGIC, VERSION};
use sandgrep_contract::limits::INDEX_FILESIZE;

/// Where a component finds its index directory (the host's second preopen).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub const PREOPEN: &str = "/sandgrep-index";
const FILE: &str = index_file::NAME;
/// (trigram, file) pairs a build holds before writing them out as a run:
/// 64 MiB of them, and as much again to sort them (in tests, a few: every
/// build merges runs).
const RUN_PAIRS: usize = if cfg!(test) { 100 } else { 8 << 20 };
/// A refresh writes a delta beside the index (not a new index) while the
/// files read since that index are at most one in this many of the table:
/// a refresh after a few changes writes the table, not every list.
const DELTA_SHARE: usize = 8;
/// Files whose times are this close to the moment they were read are not
/// trusted: another write in the same clock tick would not change them.
const RACY_NS: u64 = sandgrep_contract::limits::INDEX_RACY_MS * 1_000_000;

/// Flags of a file in the table.
const UNTRUSTED: u8 = 1;
const BINARY: u8 = 2;
/// Untrusted for as long as its metadata stays (too large, unreadable,
/// another name): a refresh reads it again only once it changes.
const LASTING: u8 = 4;
/// A UTF-16 file (it starts with a byte order mark): indexed as the UTF-8 it
/// transcodes to, which only a search that sniffs the mark reads.
const DECODED: u8 = 8;

#[derive(Clone, Debug)]
struct FileRec {
    path: String,
    size: u64,
    modified_ns: u64,
    changed_ns: u64,
    flags: u8,
}

impl FileRec {
    fn same(&self, m: &Meta) -> bool {
        self.size == m.size && self.modified_ns == m.modified_ns && self.changed_ns == m.changed_ns && m.changed_ns != 0
    }
}

/// The default walk from the root as the build made it, beside the table
/// (whose files are that walk's files, in its order): what it left out
/// before each file and after the last, and whether it was whole (no
/// problem met, no file without a record). A host that vouches for the
/// index can have a search replay it instead of walking ([`Loaded::steps`]).
#[derive(Debug, Default, PartialEq)]
struct WalkRecord {
    whole: bool,
    /// (file number, entries left out just before it), by file number.
    skips: Vec<(u32, Skips)>,
    /// Left out after the last file.
    tail: Skips,
}

impl WalkRecord {
    fn write(&self, out: &mut Vec<u8>) {
        varint(out, u64::from(self.whole));
        varint(out, self.skips.len() as u64);
        let mut next = 0;
        for &(file, n) in &self.skips {
            varint(out, u64::from(file - next));
            next = file + 1;
            Self::write_skips(out, n);
        }
        Self::write_skips(out, self.tail);
    }

    fn write_skips(out: &mut Vec<u8>, n: Skips) {
        for v in [n.denied, n.ignored, n.hidden] {
            varint(out, v);
        }
    }

    /// As written after a table of `files` records; `None` if malformed.
    fn read(buf: &[u8], at: &mut usize, files: usize) -> Option<WalkRecord> {
        let whole = match read_varint(buf, at)? {
            0 => false,
            1 => true,
            _ => return None,
        };
        let count = usize::try_from(read_varint(buf, at)?).ok().filter(|&n| n <= files)?;
        let mut skips = Vec::with_capacity(count);
        let mut next = 0u64;
        for _ in 0..count {
            let file = next.checked_add(read_varint(buf, at)?)?;
            if file >= files as u64 {
                return None;
            }
            next = file + 1;
            skips.push((file as u32, Self::read_skips(buf, at)?));
        }
        let tail = Self::read_skips(buf, at)?;
        Some(WalkRecord { whole, skips, tail })
    }

    fn read_skips(buf: &[u8], at: &mut usize) -> Option<Skips> {
        Some(Skips { denied: read_varint(buf, at)?, ignored: read_varint(buf, at)?, hidden: read_varint(buf, at)? })
    }
}

/// Posting lists as written: `(trigram, offset, length, checksum)` of each,
/// by trigram, and the file (index or delta) they lie in.
struct Lists {
    dict: Vec<(u32, u64, u32, u32)>,
    file: std::fs::File,
    at: u64,
    /// The file numbers in them are below this.
    files: usize,
}

impl Lists {
    /// The file numbers holding `tri`, in order.
    fn get(&self, tri: u32) -> Result<Vec<u32>, String> {
        let Ok(i) = self.dict.binary_search_by_key(&tri, |e| e.0) else { return Ok(Vec::new()) };
        let (_, off, len, sum) = self.dict[i];
        let corrupt = || "it was corrupt".to_string();
        let mut buf = vec![0u8; len as usize];
        let mut file = &self.file;
        file.seek(SeekFrom::Start(self.at + off)).map_err(|e| e.to_string())?;
        file.read_exact(&mut buf).map_err(|_| corrupt())?;
        if checksum(&buf) as u32 != sum {
            return Err(corrupt());
        }
        let (mut ids, mut at, mut last) = (Vec::new(), 0, 0u64);
        while at < buf.len() {
            last = last.checked_add(read_varint(&buf, &mut at).ok_or_else(corrupt)?).ok_or_else(corrupt)?;
            if last >= self.files as u64 {
                return Err(corrupt());
            }
            ids.push(last as u32);
            last += 1;
        }
        Ok(ids)
    }

    /// Checks every list against its checksum, one list at a time.
    fn verify(&self) -> Result<(), String> {
        let mut postings = std::io::BufReader::with_capacity(1 << 20, &self.file);
        postings.seek(SeekFrom::Start(self.at)).map_err(|e| e.to_string())?;
        let (mut at, mut list) = (0u64, Vec::new());
        for &(_, off, len, sum) in &self.dict {
            // (The lists lie one after another, in the dictionary's order.)
            if off != at {
                return Err("it was corrupt".into());
            }
            list.resize(len as usize, 0);
            postings.read_exact(&mut list).map_err(|_| "it was truncated".to_string())?;
            if checksum(&list) as u32 != sum {
                return Err("it was corrupt".into());
            }
            at += u64::from(len);
        }
        Ok(())
    }
}

/// An index file or its delta, its header checked and its table read.
struct Part {
    head: Vec<u8>,
    /// Where the fields after the spare bytes start (the delta has one more
    /// before them: the index it belongs to).
    fields: usize,
    table: Vec<u8>,
    file: std::fs::File,
}

impl Part {
    fn read(path: &Path, magic: &[u8; 8], header: usize) -> Result<Part, String> {
        let mut file = std::fs::File::open(path).map_err(|_| "there was none".to_string())?;
        let mut head = vec![0u8; header];
        file.read_exact(&mut head).map_err(|_| "it was truncated".to_string())?;
        if &head[..8] != magic {
            return Err("it had another format".into());
        }
        match u32_at(&head, 8) {
            VERSION => {}
            // (Said as such: a newer sandgrep's, an older one rebuilds it.)
            newer if newer > VERSION => {
                return Err(format!(
                    "it was written by a newer sandgrep (index format {newer}; this one reads {VERSION})"
                ))
            }
            _ => return Err("it had another format".into()),
        }
        if u64_at(&head, header - 8) != checksum(&head[..header - 8]) {
            return Err("it was corrupt".into());
        }
        let fields = header - 64;
        let (table_len, post_len) = (u64_at(&head, fields + 24), u64_at(&head, fields + 32));
        let len = file.metadata().map_err(|e| e.to_string())?.len();
        if (header as u64).checked_add(table_len).and_then(|n| n.checked_add(post_len)) != Some(len) {
            return Err("it was truncated".into());
        }
        let table_len = usize::try_from(table_len).map_err(|_| "it was corrupt".to_string())?;
        let mut table = vec![0u8; table_len];
        file.seek(SeekFrom::Start(header as u64 + post_len)).map_err(|e| e.to_string())?;
        file.read_exact(&mut table).map_err(|_| "it was truncated".to_string())?;
        if checksum(&table) != u64_at(&head, fields + 40) {
            return Err("it was corrupt".into());
        }
        Ok(Part { head, fields, table, file })
    }

    fn field(&self, i: usize) -> u64 {
        u64_at(&self.head, self.fields + 8 * i)
    }

    fn policy(&self) -> u64 {
        self.field(0)
    }

    /// Its posting lists (numbering `files` files), from the dictionary at
    /// the end of its table; the table before the dictionary.
    fn lists(self, files: usize) -> Result<(Lists, Vec<u8>), String> {
        let corrupt = || "it was corrupt".to_string();
        let (n_tri, post_len) = (self.field(2), self.field(4));
        let dict_len = usize::try_from(n_tri).ok().and_then(|n| n.checked_mul(20)).ok_or_else(corrupt)?;
        let mut table = self.table;
        let rest = table.len().checked_sub(dict_len).ok_or_else(corrupt)?;
        let dict: Vec<(u32, u64, u32, u32)> = table[rest..]
            .chunks_exact(20)
            .map(|e| (u32_at(e, 0), u64_at(e, 4), u32_at(e, 12), u32_at(e, 16)))
            .collect();
        // Sorted, each a trigram's, each list inside the postings: lookups
        // (and a build's merge) can trust it.
        let bad = |e: &(u32, u64, u32, u32)| {
            e.0 >= 1 << 24 || e.1.checked_add(u64::from(e.2)).is_none_or(|end| end > post_len)
        };
        if dict.windows(2).any(|w| w[0].0 >= w[1].0) || dict.iter().any(bad) {
            return Err(corrupt());
        }
        table.truncate(rest);
        let at = self.head.len() as u64;
        Ok((Lists { dict, file: self.file, at, files }, table))
    }
}

/// The table's files, as written from `at` on; `at` moved past them.
fn read_files(table: &[u8], at: &mut usize, n_files: u64) -> Result<Vec<FileRec>, String> {
    let corrupt = || "it was corrupt".to_string();
    // (Each entry takes five bytes at least: the table bounds the count.)
    let mut files = Vec::with_capacity(n_files.min(table.len() as u64 / 5) as usize);
    for _ in 0..n_files {
        let n = usize::try_from(read_varint(table, at).ok_or_else(corrupt)?).map_err(|_| corrupt())?;
        let path = table.get(*at..at.checked_add(n).ok_or_else(corrupt)?).ok_or_else(corrupt)?;
        let path = String::from_utf8(path.to_vec()).map_err(|_| corrupt())?;
        *at += n;
        let size = read_varint(table, at).ok_or_else(corrupt)?;
        let modified_ns = read_varint(table, at).ok_or_else(corrupt)?;
        let changed_ns = read_varint(table, at).ok_or_else(corrupt)?;
        let flags = *table.get(*at).ok_or_else(corrupt)?;
        *at += 1;
        if files.last().is_some_and(|f: &FileRec| path_cmp(&f.path, &path).is_ge()) {
            return Err(corrupt());
        }
        files.push(FileRec { path, size, modified_ns, changed_ns, flags });
    }
    Ok(files)
}

/// An index, its table and dictionary read, its postings read on demand;
/// with its delta, when one belongs to it.
pub struct Loaded {
    /// The table of files as of the last refresh (the delta's, if any).
    files: Vec<FileRec>,
    walk: WalkRecord,
    /// The index's own lists (numbered by its own table).
    base: Lists,
    /// The delta's: its lists (numbered as `files`), and for each file of
    /// the index's own table, its number in `files` (`u32::MAX`: gone, or
    /// read since, its trigrams in the delta's lists).
    delta: Option<(Lists, Vec<u32>)>,
    /// The index's header checksum: what a delta written for it names.
    id: u64,
    /// Bytes of the index, and of the index and its delta.
    base_bytes: u64,
    bytes: u64,
    /// Posting lists already read, as bitmaps over file numbers: a kept
    /// instance's later calls (a query repeated, its next page, a query
    /// sharing trigrams) read each once, up to [`BITMAP_CACHE_BYTES`].
    bitmaps: std::cell::RefCell<HashMap<u32, Rc<Vec<u64>>>>,
}

/// The bytes of posting-list bitmaps one loaded index keeps.
const BITMAP_CACHE_BYTES: usize = 4 << 20;

fn index_file(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().unwrap_or_default())
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().unwrap_or_default())
}

impl Loaded {
    /// The index in `dir` (with its delta), or why it cannot be used.
    fn open(dir: &Path, policy: u64) -> Result<Loaded, String> {
        let corrupt = || "it was corrupt".to_string();
        let base = Part::read(&index_file(dir), MAGIC, HEADER)?;
        if base.policy() != policy {
            return Err("it was built under another policy (denylist)".into());
        }
        let id = u64_at(&base.head, HEADER - 8);
        let base_files = base.field(1);
        let base_bytes = (HEADER + base.table.len()) as u64 + base.field(4);
        let mut bytes = base_bytes;
        // A delta written for another index (left by a refresh stopped
        // between writing that index and removing it) is none of this one's.
        let delta = match Part::read(&dir.join(DELTA_NAME), DELTA_MAGIC, DELTA_HEADER) {
            Err(why) if why == "there was none" => None,
            Err(why) => return Err(why),
            Ok(d) if u64_at(&d.head, 16) != id => None,
            Ok(d) if d.policy() != policy => return Err(corrupt()),
            Ok(d) => Some(d),
        };
        let n_base = usize::try_from(base_files).map_err(|_| corrupt())?;
        let (base, base_table) = base.lists(n_base)?;
        let mut at = 0;
        let (files, walk, delta) = match delta {
            None => {
                let files = read_files(&base_table, &mut at, base_files)?;
                let walk = WalkRecord::read(&base_table, &mut at, files.len()).ok_or_else(corrupt)?;
                if at != base_table.len() {
                    return Err(corrupt());
                }
                (files, walk, None)
            }
            Some(d) => {
                bytes += (DELTA_HEADER + d.table.len()) as u64 + d.field(4);
                let n_files = d.field(1);
                let (lists, table) = d.lists(usize::try_from(n_files).map_err(|_| corrupt())?)?;
                let files = read_files(&table, &mut at, n_files)?;
                let walk = WalkRecord::read(&table, &mut at, files.len()).ok_or_else(corrupt)?;
                // Each file's number in the index's table plus one (0: read
                // since), as the step from the last one that has one.
                let mut map = vec![u32::MAX; n_base];
                let mut next = 0u64;
                for n in 0..files.len() {
                    match read_varint(&table, &mut at).ok_or_else(corrupt)? {
                        0 => {}
                        step => {
                            let b = next.checked_add(step - 1).filter(|&b| b < base_files).ok_or_else(corrupt)?;
                            map[b as usize] = n as u32;
                            next = b + 1;
                        }
                    }
                }
                if at != table.len() {
                    return Err(corrupt());
                }
                (files, walk, Some((lists, map)))
            }
        };
        Ok(Loaded { files, walk, base, delta, id, base_bytes, bytes, bitmaps: Default::default() })
    }

    /// The file numbers holding `tri`, in order.
    fn postings(&self, tri: u32) -> Result<Vec<u32>, String> {
        let base = self.base.get(tri)?;
        let Some((lists, map)) = &self.delta else { return Ok(base) };
        let mut ids: Vec<u32> = base.into_iter().map(|b| map[b as usize]).filter(|&n| n != u32::MAX).collect();
        let read_since = lists.get(tri)?;
        if !read_since.is_empty() {
            ids.extend(read_since);
            ids.sort_unstable();
            ids.dedup();
        }
        Ok(ids)
    }

    /// For each file of the table, its number in the index's own lists
    /// (`u32::MAX`: read since, in the delta's).
    fn base_numbers(&self) -> Vec<u32> {
        match &self.delta {
            None => (0..self.files.len() as u32).collect(),
            Some((_, map)) => {
                let mut numbers = vec![u32::MAX; self.files.len()];
                for (b, &n) in map.iter().enumerate().filter(|(_, &n)| n != u32::MAX) {
                    numbers[n as usize] = b as u32;
                }
                numbers
            }
        }
    }

    /// The trigrams with a list, in order: the delta's only, or all.
    fn trigrams(&self, delta_only: bool) -> Vec<u32> {
        let delta = self.delta.as_ref().map_or(&[][..], |(d, _)| &d.dict[..]);
        if delta_only {
            return delta.iter().map(|e| e.0).collect();
        }
        let mut all: Vec<u32> = self.base.dict.iter().chain(delta).map(|e| e.0).collect();
        if !delta.is_empty() {
            all.sort_unstable();
            all.dedup();
        }
        all
    }

    /// The files holding `tri` in the delta's lists only, or in all.
    fn listed(&self, tri: u32, delta_only: bool) -> Result<Vec<u32>, String> {
        match &self.delta {
            Some((lists, _)) if delta_only => lists.get(tri),
            _ if delta_only => Ok(Vec::new()),
            _ => self.postings(tri),
        }
    }

    /// Checks every posting list against its checksum.
    fn verify(&self) -> Result<(), String> {
        self.base.verify()?;
        self.delta.as_ref().map_or(Ok(()), |(lists, _)| lists.verify())
    }

    /// The default walk from the root, as the build made it (when it was
    /// whole): the table's files in order, each after what the walk left
    /// out before it, then what it left out after the last. No directory
    /// entries: a search's walk, not a listing's.
    fn steps(&self, ws: &Workspace, reopen: &Rc<Reopen>) -> Option<Vec<Step>> {
        let walk = self.walk.whole.then_some(&self.walk)?;
        // (Not made when too many to keep.)
        if !session::may_keep(self.files.len() + walk.skips.len() + 1) {
            return None;
        }
        let mut steps = Vec::with_capacity(self.files.len() + walk.skips.len() + 1);
        let mut skips = walk.skips.iter().peekable();
        for (i, f) in self.files.iter().enumerate() {
            if let Some((_, n)) = skips.next_if(|(at, _)| *at as usize == i) {
                steps.push(Step::Skipped(*n));
            }
            steps.push(Step::Entry(Entry::file_kept(ws, f.path.clone(), reopen)));
        }
        if walk.tail.any() {
            steps.push(Step::Skipped(walk.tail));
        }
        Some(steps)
    }

    /// The number of the record of the file at `rel`, looked for at
    /// `likely` first (a walk and the table go in nearly the same order).
    fn record(&self, rel: &str, likely: usize) -> Option<usize> {
        match likely {
            i if self.files.get(i).is_some_and(|f| f.path == rel) => Some(i),
            _ => self.files.binary_search_by(|f| path_cmp(&f.path, rel)).ok(),
        }
    }

    /// The files holding `tri`, as a bitmap over file numbers.
    fn bitmap(&self, tri: u32) -> Result<Rc<Vec<u64>>, String> {
        if let Some(bits) = self.bitmaps.borrow().get(&tri) {
            return Ok(bits.clone());
        }
        let mut bits = vec![0u64; self.files.len().div_ceil(64)];
        for id in self.postings(tri)? {
            bits[id as usize / 64] |= 1 << (id % 64);
        }
        let bits = Rc::new(bits);
        let mut cache = self.bitmaps.borrow_mut();
        if (cache.len() + 1) * bits.len() * 8 > BITMAP_CACHE_BYTES {
            cache.clear();
        }
        cache.insert(tri, bits.clone());
        Ok(bits)
    }

    /// The files `q` lets through, as a bitmap over file numbers.
    fn eval(&self, q: &Query) -> Result<Rc<Vec<u64>>, String> {
        let words = self.files.len().div_ceil(64);
        let fold = |parts: &[Query], start: u64, f: fn(&mut u64, u64)| {
            let mut bits = vec![start; words];
            for p in parts {
                bits.iter_mut().zip(self.eval(p)?.iter()).for_each(|(a, &b)| f(a, b));
            }
            Ok::<_, String>(Rc::new(bits))
        };
        match q {
            Query::All => Ok(Rc::new(vec![u64::MAX; words])),
            Query::Trigram(t) => self.bitmap(*t),
            Query::And(parts) => fold(parts, u64::MAX, |a, b| *a &= b),
            Query::Or(parts) => fold(parts, 0, |a, b| *a |= b),
        }
    }
}

/// What the index says about the files of one search.
pub struct Narrowing {
    loaded: Rc<Loaded>,
    /// The search reads binary files: it looks for NUL bytes only near the
    /// start and in what it returns (multiline, rg's `--mmap`).
    reads_binary: bool,
    /// The host vouched that nothing changed since this index was made
    /// ([`crate::session`]): its records stand without a look at each file.
    current: bool,
    /// Files the plan lets through (a file not in the index is always read).
    candidates: Vec<u64>,
    /// Where the next entry's record likely is: the walk and the table go
    /// in nearly the same order.
    next: std::cell::Cell<usize>,
}

/// Marks of steps ([`Narrowing::marks`]) that are not a file with a
/// record: an entry that is no file, anything else.
const ENTRY: u32 = u32::MAX - 1;
const OTHER: u32 = u32::MAX;
/// Set in the mark of a file that holds a NUL (with its record's number).
const BINARY_MARK: u32 = 1 << 31;

/// Steps a search passes by ([`Narrowing::quiet_run`]): where the run ends,
/// how many files it holds (and how many of them are binary), and the step
/// of the last of them.
pub struct QuietRun {
    pub end: usize,
    pub files: u64,
    pub binary: u64,
    pub last: Option<usize>,
}

/// What a skipped file would have been to the search that reads it.
pub enum Unread {
    /// Larger than the search's max-filesize (checked before a read).
    TooLarge,
    /// Holds a NUL: the search would stop there and skip it as binary.
    Binary,
    /// No match can be in it.
    NoMatch,
}

impl Narrowing {
    /// How the index serves a search for `q` in `ws`, and the narrowing
    /// when it does. `pcre2`: PCRE2 reads the pattern (as `-P` asks, or as
    /// `auto` chose), whose syntax and meaning the plan's parser (Rust's
    /// regex syntax) does not know: no plan, every file is read (binary
    /// and too-large files are still skipped by the index).
    pub fn open(ws: &Workspace, q: &crate::request::TextQuery, pcre2: bool) -> (IndexUse, Option<Narrowing>) {
        // The index holds files' bytes as they are on disk: with
        // search-zip, a compressed file's text is in none of its postings
        // (and its bytes look binary); read in another encoding (rg's `-E`,
        // but for `none`), a file's text is not its bytes (`é` in Latin-1,
        // and UTF-16 has NUL bytes). Such a search reads every file, as one
        // that prints every line of every file (rg's `--passthru`) does.
        if q.search_zip || q.passthru || q.encoding.as_deref().is_some_and(|e| e != "none") {
            return (IndexUse::None, None);
        }
        // Only a search that leaves out every file with a NUL byte may skip
        // the binary files unread: rg's way searches one up to its NUL (or
        // as text, or whole), and a multiline search (or rg's --mmap) looks
        // for NULs only near the start and in what it matches.
        let reads_binary = q.multiline || q.binary != crate::BinaryMode::Skip;
        Narrowing::for_plan(ws, if pcre2 { None } else { plan(q) }, reads_binary, q.encoding.is_none())
    }

    /// How the index serves a search whose matching files all hold `texts`
    /// (as they are, case and all).
    pub fn for_texts(ws: &Workspace, texts: &[&[u8]]) -> (IndexUse, Option<Narrowing>) {
        let query = plan::and(texts.iter().map(|t| plan::trigrams_of(t, false)).collect());
        Narrowing::for_plan(ws, Some(query).filter(|q| *q != Query::All), false, false)
    }

    /// `decodes`: the search reads a UTF-16 file as the UTF-8 it transcodes
    /// to, as the index holds it; otherwise such files are read.
    fn for_plan(
        ws: &Workspace,
        query: Option<Query>,
        reads_binary: bool,
        decodes: bool,
    ) -> (IndexUse, Option<Narrowing>) {
        let Some(dir) = ws.index_dir() else { return (IndexUse::None, None) };
        let policy = ws.index_policy();
        let current = session::generation().is_some();
        let loaded = match session::index(policy) {
            Some(loaded) => loaded,
            None => match Loaded::open(dir, policy) {
                Ok(loaded) => session::keep_index(policy, Rc::new(loaded)),
                Err(_) => return (IndexUse::None, None),
            },
        };
        // Binary files are skipped whatever the query: no plan needed.
        let query = query.unwrap_or(Query::All);
        let use_ = if query == Query::All { IndexUse::CannotNarrow } else { IndexUse::Served };
        match loaded.eval(&query).map(Rc::unwrap_or_clone) {
            Ok(mut candidates) => {
                if !decodes {
                    for (i, _) in loaded.files.iter().enumerate().filter(|(_, f)| f.flags & DECODED != 0) {
                        candidates[i / 64] |= 1 << (i % 64);
                    }
                }
                let next = Default::default();
                (use_, Some(Narrowing { loaded, reads_binary, current, candidates, next }))
            }
            Err(_) => (IndexUse::None, None),
        }
    }

    /// The key of the walk a first page of a search of `paths` with `opts`
    /// replays, given its own (`key`, [`session::listing_key`]). When the
    /// host vouches for this index, no walk is kept under `key` and the
    /// search walks as the build did (the default options from the root):
    /// the index's own walk ([`Loaded::steps`]), kept under a key of its own
    /// (it holds no directories, which a listing shows). So a vouched
    /// search walks nothing.
    pub fn walk_key(&self, ws: &Workspace, paths: &[String], opts: &WalkOptions, key: String, first: bool) -> String {
        let own = first && self.current && paths == ["."] && *opts == WalkOptions::default();
        if !own || session::has_listing(&key) {
            return key;
        }
        let indexed = format!("{key}\0index");
        let kept = Rc::new(Reopen::default());
        if session::has_listing(&indexed)
            || self.loaded.steps(ws, &kept).is_some_and(|steps| session::keep_listing(indexed.clone(), steps, kept))
        {
            return indexed;
        }
        key
    }

    /// Whether the search may leave `entry` unread, and as what.
    pub fn unread(&self, entry: &Entry, max_filesize: u64) -> Option<Unread> {
        let files = &self.loaded.files;
        let i = self.loaded.record(&entry.rel, self.next.get())?;
        self.next.set(i + 1);
        let rec = &files[i];
        if rec.flags & UNTRUSTED != 0 || !self.current && !rec.same(&entry.meta()?) {
            return None;
        }
        if rec.size > max_filesize {
            Some(Unread::TooLarge)
        } else if rec.flags & BINARY != 0 {
            (!self.reads_binary).then_some(Unread::Binary)
        } else if self.candidates[i / 64] & (1 << (i % 64)) == 0 {
            Some(Unread::NoMatch)
        } else {
            None
        }
    }

    /// For a walk kept at this generation, replayed: each step's mark for
    /// [`Narrowing::quiet_run`] (computed once per walk and generation).
    pub fn marks(&self, steps: &[Step]) -> Vec<u32> {
        let files = &self.loaded.files;
        let mut next = 0;
        steps
            .iter()
            .map(|step| match step {
                Step::Entry(e) if !e.is_file => ENTRY,
                Step::Entry(e) => {
                    let i = self.loaded.record(&e.rel, next);
                    next = i.map_or(next, |i| i + 1);
                    // (A file read for the index is no larger than `INDEX_FILESIZE`.)
                    let quiet = |i: &usize| files[*i].flags & UNTRUSTED == 0 && files[*i].size <= INDEX_FILESIZE;
                    let binary = |i: usize| if files[i].flags & BINARY != 0 { BINARY_MARK } else { 0 };
                    i.filter(quiet).map_or(OTHER, |i| i as u32 | binary(i))
                }
                _ => OTHER,
            })
            .collect()
    }

    /// The steps from `at` on, by their `marks`, that a search passes by
    /// without a look: files this index shows cannot match (not over
    /// `max_filesize`), files a search skips as binary (unless the request
    /// `named` files: a named one is named in its warning) and entries that
    /// are not files. Empty unless the host vouches for the index
    /// ([`crate::session`]).
    pub fn quiet_run(&self, marks: &[u32], at: usize, max_filesize: u64, named: bool) -> QuietRun {
        let mut run = QuietRun { end: at, files: 0, binary: 0, last: None };
        // A file marked is no larger than `INDEX_FILESIZE`: its size needs a
        // look only under a lower bound.
        let sizes = max_filesize < INDEX_FILESIZE;
        let binary_quiet = !self.reads_binary && !named;
        while self.current {
            match marks.get(run.end) {
                Some(&ENTRY) => {}
                Some(&rec) if rec != OTHER => {
                    let (binary, i) = (rec & BINARY_MARK != 0, (rec & !BINARY_MARK) as usize);
                    let read = if binary { !binary_quiet } else { self.candidates[i / 64] & (1 << (i % 64)) != 0 };
                    if read || sizes && self.loaded.files[i].size > max_filesize {
                        break;
                    }
                    run.files += 1;
                    run.binary += u64::from(binary);
                    run.last = Some(run.end);
                    // Where `unread` looks for the next file's record first.
                    self.next.set(i + 1);
                }
                _ => break,
            }
            run.end += 1;
        }
        run
    }

    /// The size the index holds for the file at `rel`, when `unread` just
    /// looked it up.
    pub fn recorded_size(&self, rel: &str) -> Option<u64> {
        let rec = self.loaded.files.get(self.next.get().checked_sub(1)?)?;
        (rec.path == rel).then_some(rec.size)
    }
}

/// The policy an index is built under (what decides which files it may
/// hold, and how): the host's extra denials, whether `.gitignore` applies,
/// whether secrets are redacted, and by which rules.
pub fn policy_fingerprint(extra_deny: &[String], inside_git: bool, redact: bool, disabled_rules: &[String]) -> u64 {
    let mut bytes = vec![u8::from(inside_git), u8::from(redact)];
    // The tables themselves: an index holds what they let through, so one
    // built under other tables (an older sandgrep) is rebuilt, never trusted.
    bytes.extend_from_slice(&crate::deny::table());
    if redact {
        bytes.extend_from_slice(&crate::redact::table_fingerprint().to_le_bytes());
        for r in disabled_rules {
            bytes.extend_from_slice(r.as_bytes());
            bytes.push(0);
        }
    }
    bytes.push(2);
    for g in extra_deny {
        bytes.extend_from_slice(g.as_bytes());
        bytes.push(0);
    }
    checksum(&bytes)
}

/// The trigrams of `bytes`, each once: `out[..n]`, `n` returned (`out`
/// only grows). `seen` (a 2^24-bit map, all clear) is scratch.
fn trigrams(bytes: &[u8], seen: &mut [u64], out: &mut Vec<u32>) -> usize {
    if bytes.len() < 3 {
        return 0;
    }
    let seen: &mut [u64; 1 << 18] = seen.try_into().expect("a 2^24-bit map");
    if out.len() < bytes.len() - 2 {
        out.resize(bytes.len() - 2, 0);
    }
    // (Without a branch on whether a trigram is new, which no predictor
    // guesses: each is written at the end, which moves on past a new one.)
    let mut n = 0;
    let mut t = u32::from(bytes[0]) << 8 | u32::from(bytes[1]);
    for &b in &bytes[2..] {
        t = (t << 8 | u32::from(b)) & 0xff_ffff;
        let (w, bit) = ((t >> 6) as usize, 1u64 << (t & 63));
        let new = seen[w] & bit == 0;
        seen[w] |= bit;
        out[n] = t;
        n += usize::from(new);
    }
    for &t in &out[..n] {
        seen[(t >> 6) as usize] &= !(1u64 << (t & 63));
    }
    n
}

/// Sorts `pairs` (trigram << 32 | file) and drops repeats. Pairs that came
/// in file order (`in_order`) need only be put in trigram order, keeping
/// their order within a trigram: a radix sort of the trigram's two halves
/// (12 bits each), through `scratch` — several times faster than a
/// comparison sort of them.
fn sort_pairs(pairs: &mut Vec<u64>, scratch: &mut Vec<u64>, in_order: bool) {
    const BUCKETS: usize = 1 << 12;
    if !in_order {
        pairs.sort_unstable();
        pairs.dedup();
        return;
    }
    let digit = |p: u64, shift: u32| (p >> shift) as usize & (BUCKETS - 1);
    // (Both halves counted in one pass.)
    let (mut low, mut high) = (vec![0usize; BUCKETS], vec![0usize; BUCKETS]);
    for &p in pairs.iter() {
        low[digit(p, 32)] += 1;
        high[digit(p, 44)] += 1;
    }
    scratch.clear();
    scratch.resize(pairs.len(), 0);
    for (at, shift) in [(low, 32), (high, 44)] {
        // (All in one bucket: this half is in order already.)
        if at.contains(&pairs.len()) {
            continue;
        }
        let mut at = at;
        let mut start = 0;
        for n in at.iter_mut() {
            (*n, start) = (start, start + *n);
        }
        for &p in pairs.iter() {
            let b = digit(p, shift);
            scratch[at[b]] = p;
            at[b] += 1;
        }
        std::mem::swap(pairs, scratch);
    }
    pairs.dedup();
}

fn now_ns() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

fn io_error(e: std::io::Error) -> SearchError {
    SearchError::Io(format!("the index could not be written: {e}"))
}

/// A posting list in a dictionary: (trigram, offset, length, checksum).
type DictEntry = (u32, u64, u32, u32);

/// A run records where each slice of this many trigrams starts in it (the
/// trigram's top 12 bits), so a merge of a range of trigrams reads only its
/// part of each run: a build's merge is split by range over instances.
const SLICE_BITS: u32 = 12;
const SLICES: usize = 1 << (24 - SLICE_BITS);
/// A slice's entry in a run's table: where its first list starts, and the
/// trigram that list's step counts from.
const SLICE_ENTRY: usize = 12;

/// A file written for a build (a run, a merged part, the index before it is
/// renamed into place); removed when dropped unless `done`.
struct Output {
    path: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
    done: bool,
}

/// Runs of (trigram, file) pairs written beside the index under a name no
/// other writer uses (`index.v1.<16 hex>.run<N>`); removed when dropped
/// (and so are the merged parts added to them).
struct Runs {
    dir: PathBuf,
    stem: String,
    paths: Vec<PathBuf>,
}

/// A name for a build's files no other writer uses (`index.v1.<16 hex>`).
fn fresh_stem() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(now_ns());
    format!("{FILE}.{:016x}", h.finish())
}

impl Runs {
    fn new(dir: &Path) -> Runs {
        Runs { dir: dir.to_path_buf(), stem: fresh_stem(), paths: Vec::new() }
    }

    /// `pairs` (trigram << 32 | file, sorted: [`sort_pairs`]) as a run
    /// file, then its table of slices and the table's offset; `pairs`
    /// emptied.
    fn write(&mut self, pairs: &mut Vec<u64>) -> Result<(), SearchError> {
        let path = self.dir.join(format!("{}.run{}", self.stem, self.paths.len()));
        self.paths.push(path.clone());
        let mut run = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).map_err(io_error)?);
        let (mut buf, mut next_tri, mut written) = (Vec::new(), 0u32, 0u64);
        let mut slices = Vec::with_capacity(SLICES * SLICE_ENTRY);
        let mark = |slices: &mut Vec<u8>, written: u64, next_tri: u32| {
            slices.extend_from_slice(&written.to_le_bytes());
            slices.extend_from_slice(&next_tri.to_le_bytes());
        };
        for list in pairs.chunk_by(|a, b| a >> 32 == b >> 32) {
            let tri = (list[0] >> 32) as u32;
            // (Each slice up to this list's starts with it.)
            while slices.len() <= (tri >> SLICE_BITS) as usize * SLICE_ENTRY {
                mark(&mut slices, written, next_tri);
            }
            buf.clear();
            varint(&mut buf, u64::from(tri - next_tri));
            varint(&mut buf, list.len() as u64);
            let mut next = 0u32;
            for &p in list {
                varint(&mut buf, u64::from(p as u32 - next));
                next = p as u32 + 1;
            }
            run.write_all(&buf).map_err(io_error)?;
            written += buf.len() as u64;
            next_tri = tri + 1;
        }
        while slices.len() < SLICES * SLICE_ENTRY {
            mark(&mut slices, written, next_tri);
        }
        slices.extend_from_slice(&written.to_le_bytes());
        run.write_all(&slices).map_err(io_error)?;
        run.flush().map_err(io_error)?;
        pairs.clear();
        Ok(())
    }
}

impl Drop for Runs {
    fn drop(&mut self) {
        for run in &self.paths {
            let _ = std::fs::remove_file(run);
        }
    }
}

/// A run's table of slices: where each starts and the trigram its first
/// list counts from; and where the lists end.
fn slice_table(file: &mut std::fs::File) -> std::io::Result<(Vec<(u64, u32)>, u64)> {
    let bad = || std::io::Error::from(std::io::ErrorKind::InvalidData);
    let len = file.metadata()?.len();
    let end = len.checked_sub((SLICES * SLICE_ENTRY + 8) as u64).ok_or_else(bad)?;
    let mut table = vec![0u8; SLICES * SLICE_ENTRY + 8];
    file.seek(SeekFrom::Start(end))?;
    file.read_exact(&mut table)?;
    let slices: Vec<(u64, u32)> =
        table[..SLICES * SLICE_ENTRY].chunks_exact(SLICE_ENTRY).map(|e| (u64_at(e, 0), u32_at(e, 8))).collect();
    let ordered = slices.windows(2).all(|w| w[0].0 <= w[1].0) && slices.last().is_some_and(|l| l.0 <= end);
    if u64_at(&table, SLICES * SLICE_ENTRY) != end || !ordered {
        return Err(bad());
    }
    Ok((slices, end))
}

/// The bytes of each slice's lists in the run at `path`.
fn slice_bytes(path: &Path) -> std::io::Result<Vec<u64>> {
    let (slices, end) = slice_table(&mut std::fs::File::open(path)?)?;
    Ok((0..SLICES).map(|s| slices.get(s + 1).map_or(end, |n| n.0) - slices[s].0).collect())
}

/// One run's lists of a range of trigrams, read in order (a chunk at a
/// time, its numbers decoded where they lie).
struct RunReader {
    file: std::fs::File,
    buf: Vec<u8>,
    at: usize,
    /// Bytes of the range not read yet.
    left: u64,
    next_tri: u32,
    /// The next list's trigram and length, read ahead.
    head: Option<(u32, u64)>,
}

impl RunReader {
    /// Bytes read at a time (in tests, a few: numbers across reads).
    const CHUNK: usize = if cfg!(test) { 16 } else { 256 << 10 };

    /// The run at `path`, from the list of the first trigram of `range` on
    /// (both ends a slice's start, or the end of all trigrams).
    fn open(path: &Path, range: &std::ops::Range<u32>) -> std::io::Result<RunReader> {
        let mut file = std::fs::File::open(path)?;
        let (slices, end) = slice_table(&mut file)?;
        let at = |tri: u32| slices.get((tri >> SLICE_BITS) as usize).copied().unwrap_or((end, 0));
        let ((from, next_tri), (to, _)) = (at(range.start), at(range.end));
        file.seek(SeekFrom::Start(from))?;
        let mut run = RunReader { file, buf: Vec::new(), at: 0, left: to.saturating_sub(from), next_tri, head: None };
        run.read_head()?;
        Ok(run)
    }

    /// The next list's trigram, if the range has another.
    fn peek(&self) -> Option<u32> {
        self.head.map(|h| h.0)
    }

    /// At least 10 bytes (a number's most) left in the buffer, unless the
    /// range ends first.
    #[cold]
    fn refill(&mut self) -> std::io::Result<()> {
        self.buf.drain(..self.at);
        self.at = 0;
        let kept = self.buf.len();
        let want = Self::CHUNK.min(kept + usize::try_from(self.left).unwrap_or(usize::MAX));
        self.buf.resize(want, 0);
        let mut filled = kept;
        while filled < want {
            match self.file.read(&mut self.buf[filled..])? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                n => filled += n,
            }
        }
        self.left -= (want - kept) as u64;
        Ok(())
    }

    /// The next number (past the range's end: an error).
    #[inline]
    fn varint(&mut self) -> std::io::Result<u64> {
        if self.buf.len() - self.at < 10 && self.left > 0 {
            self.refill()?;
        }
        match self.buf.get(self.at) {
            // (Most steps between files take one byte.)
            Some(&b) if b < 0x80 => {
                self.at += 1;
                Ok(u64::from(b))
            }
            _ => read_varint(&self.buf, &mut self.at).ok_or_else(|| std::io::ErrorKind::InvalidData.into()),
        }
    }

    /// The next list's trigram and length read ahead (none at the range's end).
    fn read_head(&mut self) -> std::io::Result<()> {
        self.head = None;
        if self.at == self.buf.len() && self.left == 0 {
            return Ok(());
        }
        let bad = || std::io::Error::from(std::io::ErrorKind::InvalidData);
        let delta = self.varint()?;
        let tri = u64::from(self.next_tri).checked_add(delta).and_then(|t| u32::try_from(t).ok()).ok_or_else(bad)?;
        self.next_tri = tri.checked_add(1).ok_or_else(bad)?;
        self.head = Some((tri, self.varint()?));
        Ok(())
    }

    /// The list read ahead: its files appended to `ids`; whether they come
    /// after the files already there.
    fn take(&mut self, ids: &mut Vec<u32>) -> std::io::Result<bool> {
        let bad = || std::io::Error::from(std::io::ErrorKind::InvalidData);
        let (_, mut left) = self.head.ok_or_else(bad)?;
        let (last, start) = (ids.last().copied(), ids.len());
        let mut id = 0u64;
        while left > 0 {
            if self.buf.len() - self.at < 10 && self.left > 0 {
                self.refill()?;
            }
            // (A number that starts 10 bytes or more before the end is whole.)
            let whole = if self.left == 0 { self.buf.len() } else { self.buf.len() - 9 };
            if self.at >= whole {
                return Err(bad());
            }
            while left > 0 && self.at < whole {
                let b = self.buf[self.at];
                let step = if b < 0x80 {
                    self.at += 1;
                    u64::from(b)
                } else {
                    read_varint(&self.buf, &mut self.at).ok_or_else(bad)?
                };
                id = id.checked_add(step).ok_or_else(bad)?;
                ids.push(u32::try_from(id).map_err(|_| bad())?);
                id += 1;
                left -= 1;
            }
        }
        self.read_head()?;
        Ok(last.is_none_or(|last| ids.get(start).is_none_or(|&first| last < first)))
    }
}

/// Trigrams merged at once: their lists from every source are held
/// together, so a window's memory is at most this many lists of every file.
const WINDOW: u32 = 64;

/// The lists of the trigrams in `range`: every run's and `old`'s
/// (renumbered; its delta's lists only, or all), merged trigram by trigram
/// and written to `out`. The dictionary (offsets from where `out` was), or
/// why `old` is corrupt.
fn merge(
    out: &mut impl Write,
    runs: &[PathBuf],
    old: Option<(&Loaded, &[u32], bool)>,
    range: std::ops::Range<u32>,
) -> Result<Result<Vec<DictEntry>, String>, SearchError> {
    let mut runs: Vec<RunReader> =
        runs.iter().map(|p| RunReader::open(p, &range)).collect::<Result<_, _>>().map_err(io_error)?;
    let mut old_tris = old.map(|(o, _, delta_only)| o.trigrams(delta_only)).unwrap_or_default();
    old_tris.retain(|t| range.contains(t));
    let mut old_tris = old_tris.into_iter().peekable();
    // A window of trigrams at a time: each one's files from every source,
    // in the sources' order.
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); WINDOW as usize];
    // (Whether a list's files came out of order: from sources that interleave.)
    let mut unsorted = [false; WINDOW as usize];
    let (mut dict, mut list, mut at) = (Vec::new(), Vec::new(), 0u64);
    let (mut scratch, mut bounds) = (Vec::new(), Vec::new());
    loop {
        // The window of the first trigram any source has left.
        let next = runs.iter().filter_map(RunReader::peek).chain(old_tris.peek().copied()).min();
        let Some(first) = next.map(|t| t - t % WINDOW) else { break };
        // (Only a run that is not ours has lists out of its range.)
        if !range.contains(&first) {
            return Err(io_error(std::io::ErrorKind::InvalidData.into()));
        }
        for run in &mut runs {
            while let Some(tri) = run.peek().filter(|&t| t < first + WINDOW) {
                let place = (tri - first) as usize;
                unsorted[place] |= !run.take(&mut lists[place]).map_err(io_error)?;
            }
        }
        while let Some(tri) = old_tris.next_if(|&t| t < first + WINDOW) {
            let (old, renumber, delta_only) = old.expect("old trigrams come from old");
            let listed = match old.listed(tri, delta_only) {
                Ok(listed) => listed,
                Err(why) => return Ok(Err(why)),
            };
            let place = (tri - first) as usize;
            let ids = &mut lists[place];
            let start = ids.len();
            ids.extend(listed.into_iter().map(|id| renumber[id as usize]).filter(|&n| n != u32::MAX));
            unsorted[place] |= start > 0 && ids.get(start).is_some_and(|&first| ids[start - 1] >= first);
        }
        for (i, ids) in lists.iter_mut().enumerate().filter(|(_, ids)| !ids.is_empty()) {
            if std::mem::take(&mut unsorted[i]) {
                merge_runs(ids, &mut scratch, &mut bounds);
            }
            list.clear();
            let mut next = 0u32;
            for &id in ids.iter() {
                varint(&mut list, u64::from(id - next));
                next = id + 1;
            }
            // (Kept for the next window only when small: the windows' lists
            // at each place may all be long.)
            if ids.capacity() > 1 << 12 {
                *ids = Vec::new();
            } else {
                ids.clear();
            }
            out.write_all(&list).map_err(io_error)?;
            dict.push((first + i as u32, at, list.len() as u32, checksum(&list) as u32));
            at += list.len() as u64;
        }
    }
    Ok(Ok(dict))
}

/// `ids` sorted, repeats dropped, by merging the ascending runs it is made
/// of (each source's files come in order: a few runs, not a sort of them
/// all); `scratch` and `bounds` are scratch.
fn merge_runs(ids: &mut Vec<u32>, scratch: &mut Vec<u32>, bounds: &mut Vec<usize>) {
    bounds.clear();
    bounds.push(0);
    for (k, pair) in ids.windows(2).enumerate() {
        if pair[1] <= pair[0] {
            bounds.push(k + 1);
        }
    }
    bounds.push(ids.len());
    // Adjacent runs merged in pairs until one is left (each pair's end
    // written over the bounds already read).
    while bounds.len() > 2 {
        scratch.clear();
        let runs = bounds.len() - 1;
        for p in 0..runs.div_ceil(2) {
            let (from, mid) = (bounds[2 * p], bounds[2 * p + 1]);
            let to = bounds.get(2 * p + 2).copied().unwrap_or(mid);
            let (mut a, mut b) = (&ids[from..mid], &ids[mid..to]);
            while let (Some(&x), Some(&y)) = (a.first(), b.first()) {
                scratch.push(x.min(y));
                a = if x <= y { &a[1..] } else { a };
                b = if y <= x { &b[1..] } else { b };
            }
            scratch.extend_from_slice(a);
            scratch.extend_from_slice(b);
            bounds[p + 1] = scratch.len();
        }
        bounds.truncate(runs.div_ceil(2) + 1);
        std::mem::swap(ids, scratch);
    }
}

/// One range of a build's merge written beside the index (as a part:
/// `header` zero bytes, the lists, their dictionary and its length): the
/// part's path, or why `old` is corrupt.
fn write_part(
    dir: &Path,
    runs: &[PathBuf],
    old: Option<(&Loaded, &[u32], bool)>,
    range: std::ops::Range<u32>,
    header: usize,
) -> Result<Result<PathBuf, String>, SearchError> {
    let mut out = Output::create(dir.join(format!("{}.part", fresh_stem())), header)?;
    let dict = match merge(&mut out.file, runs, old, range)? {
        Ok(dict) => dict,
        Err(why) => return Ok(Err(why)),
    };
    let mut tail = Vec::with_capacity(dict.len() * 20 + 8);
    for &(tri, off, len, sum) in &dict {
        tail.extend_from_slice(&tri.to_le_bytes());
        tail.extend_from_slice(&off.to_le_bytes());
        tail.extend_from_slice(&len.to_le_bytes());
        tail.extend_from_slice(&sum.to_le_bytes());
    }
    tail.extend_from_slice(&(dict.len() as u64).to_le_bytes());
    out.file.write_all(&tail).map_err(io_error)?;
    out.file.flush().map_err(io_error)?;
    out.done = true;
    Ok(Ok(out.path.clone()))
}

/// A part's dictionary and the length of its lists (after `header` bytes),
/// checked: its lists one after another, in trigram order.
fn part_dict(file: &mut std::fs::File, header: u64) -> Result<(Vec<DictEntry>, u64), SearchError> {
    let bad = || SearchError::Io("the index could not be written: a merged part was corrupt".into());
    let len = file.metadata().map_err(io_error)?.len();
    let mut n = [0u8; 8];
    file.seek(SeekFrom::Start(len.checked_sub(8).ok_or_else(bad)?)).map_err(io_error)?;
    file.read_exact(&mut n).map_err(io_error)?;
    let dict_len = u64::from_le_bytes(n).checked_mul(20).ok_or_else(bad)?;
    let lists = len.checked_sub(8 + header).and_then(|l| l.checked_sub(dict_len)).ok_or_else(bad)?;
    let mut raw = vec![0u8; dict_len as usize];
    file.seek(SeekFrom::Start(header + lists)).map_err(io_error)?;
    file.read_exact(&mut raw).map_err(io_error)?;
    let dict: Vec<DictEntry> =
        raw.chunks_exact(20).map(|e| (u32_at(e, 0), u64_at(e, 4), u32_at(e, 12), u32_at(e, 16))).collect();
    let mut at = 0;
    for (i, e) in dict.iter().enumerate() {
        if e.1 != at || i > 0 && dict[i - 1].0 >= e.0 {
            return Err(bad());
        }
        at += u64::from(e.2);
    }
    if at != lists {
        return Err(bad());
    }
    Ok((dict, lists))
}

impl Output {
    /// A new file at `path`, `header` zero bytes at its start (a header is
    /// written last, over them).
    fn create(path: PathBuf, header: usize) -> Result<Output, SearchError> {
        let file = std::fs::File::create(&path).map_err(io_error)?;
        let mut out = Output { path, file: std::io::BufWriter::with_capacity(1 << 20, file), done: false };
        out.file.write_all(&vec![0; header]).map_err(io_error)?;
        Ok(out)
    }

    /// The index (or delta) written from `parts` in order, the first (with
    /// `header` bytes before its lists) taken as the file, the others'
    /// lists copied after its own: the dictionary of them all.
    fn join(parts: &[PathBuf], header: usize) -> Result<(Output, Vec<DictEntry>), SearchError> {
        let first = parts.first().ok_or_else(|| SearchError::InvalidArgument("no merged part was given".into()))?;
        let mut file = std::fs::OpenOptions::new().read(true).write(true).open(first).map_err(io_error)?;
        let (mut dict, mut at) = part_dict(&mut file, header as u64)?;
        file.set_len(header as u64 + at).map_err(io_error)?;
        file.seek(SeekFrom::End(0)).map_err(io_error)?;
        let mut out =
            Output { path: first.clone(), file: std::io::BufWriter::with_capacity(1 << 20, file), done: false };
        let mut chunk = vec![0u8; 1 << 20];
        for path in &parts[1..] {
            let mut part = std::fs::File::open(path).map_err(io_error)?;
            let (more, len) = part_dict(&mut part, 0)?;
            if more.first().zip(dict.last()).is_some_and(|(m, d)| m.0 <= d.0) {
                return Err(SearchError::InvalidArgument("the merged parts were not in trigram order".into()));
            }
            part.seek(SeekFrom::Start(0)).map_err(io_error)?;
            // (A MiB a call: few calls out of the component.)
            let mut left = len;
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                part.read_exact(&mut chunk[..n]).map_err(io_error)?;
                out.file.write_all(&chunk[..n]).map_err(io_error)?;
                left -= n as u64;
            }
            dict.extend(more.into_iter().map(|(tri, off, n, sum)| (tri, off + at, n, sum)));
            at += len;
        }
        Ok((out, dict))
    }

    /// The table and dictionary after the postings, then the header; the
    /// index renamed into place (and its old delta removed), or, given
    /// `delta` (the index's id, and each file's number in its lists), the
    /// delta. Its size.
    fn finish(
        mut self,
        files: &[FileRec],
        walked: &WalkRecord,
        dict: &[DictEntry],
        policy: u64,
        delta: Option<(u64, &[u32])>,
    ) -> Result<u64, SearchError> {
        let post_len = dict.last().map_or(0, |&(_, off, len, _)| off + u64::from(len));
        let mut table = Vec::new();
        for f in files {
            varint(&mut table, f.path.len() as u64);
            table.extend_from_slice(f.path.as_bytes());
            varint(&mut table, f.size);
            varint(&mut table, f.modified_ns);
            varint(&mut table, f.changed_ns);
            table.push(f.flags);
        }
        walked.write(&mut table);
        if let Some((_, numbers)) = delta {
            // (As read in `Loaded::open`: the step from the last number plus
            // one, 0 for a file read since.)
            let mut next = 0u32;
            for &b in numbers {
                if b == u32::MAX {
                    varint(&mut table, 0);
                } else {
                    varint(&mut table, u64::from(b - next) + 1);
                    next = b + 1;
                }
            }
        }
        for &(tri, off, len, sum) in dict {
            table.extend_from_slice(&tri.to_le_bytes());
            table.extend_from_slice(&off.to_le_bytes());
            table.extend_from_slice(&len.to_le_bytes());
            table.extend_from_slice(&sum.to_le_bytes());
        }
        let mut head = Vec::with_capacity(DELTA_HEADER);
        head.extend_from_slice(if delta.is_some() { DELTA_MAGIC } else { MAGIC });
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&[0; 4]);
        if let Some((id, _)) = delta {
            head.extend_from_slice(&id.to_le_bytes());
        }
        for v in
            [policy, files.len() as u64, dict.len() as u64, table.len() as u64, post_len, checksum(&table), now_ns()]
        {
            head.extend_from_slice(&v.to_le_bytes());
        }
        let sum = checksum(&head);
        head.extend_from_slice(&sum.to_le_bytes());
        self.file.write_all(&table).map_err(io_error)?;
        self.file.flush().map_err(io_error)?;
        // (Flushed: the file's own writes go where the buffer's went.)
        let file = self.file.get_mut();
        file.seek(SeekFrom::Start(0)).map_err(io_error)?;
        file.write_all(&head).map_err(io_error)?;
        file.sync_all().map_err(io_error)?;
        let dir = self.path.parent().expect("a file in the index directory");
        let delta_file = dir.join(DELTA_NAME);
        std::fs::rename(&self.path, if delta.is_some() { delta_file.clone() } else { index_file(dir) })
            .map_err(io_error)?;
        self.done = true;
        // A new index leaves the old one's delta without an index (its id
        // names the old one): removed, or the refresh fails.
        if delta.is_none() {
            match std::fs::remove_file(delta_file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_error(e)),
                _ => {}
            }
        }
        Ok((head.len() + table.len()) as u64 + post_len)
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests;
