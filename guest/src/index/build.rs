//! Building and refreshing the index, in one instance ([`refresh`]) or
//! spread over several (the WIT's `index-walk`, `index-read`,
//! `index-split`, `index-merge`, `index-finish`): one instance walks and
//! hands out the files to read in batches, any instance reads them (its
//! pairs written out as runs beside the index); the walking one settles the
//! table and splits the trigrams into ranges of about equal bytes, any
//! instance merges a range's lists from every run and the old index into a
//! part, and the walking one joins the parts into the index. The index is
//! the same either way.
// (The spread build is called through the WIT only: natively, by tests.)
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use std::cell::RefCell;

use super::*;
use crate::{IndexBatch, IndexFile, IndexMergePlan, IndexMerged, IndexOldLists, IndexPart, ReadOutcome};
use sandgrep_contract::index_file::Scratch;

/// Bytes of files a single instance reads between two steps of its walk.
const BATCH_BYTES: u64 = 1 << 20;
/// Bytes of lists (as the runs hold them) below which a build's merge is
/// not split over instances.
const SPLIT_BYTES: u128 = if cfg!(test) { 0 } else { 16 << 20 };
/// Files in one batch at most (each holds its directory open while the
/// batch waits, in a single instance).
const BATCH_FILES: usize = 256;
/// Entries a walk step passes at most before it hands out what it has (so
/// the host can stop a walk of a tree with nothing to read).
const STEP_ENTRIES: usize = 4096;

thread_local! {
    /// The build this instance walks for, between `index-walk` calls.
    static BUILD: RefCell<Option<Build>> = const { RefCell::new(None) };
    /// What this instance read for a build, between `index-read` calls.
    static READER: RefCell<Option<Reader>> = const { RefCell::new(None) };
    /// The build this instance walked for, settled, between `index-split`
    /// and `index-finish`.
    static SETTLED: RefCell<Option<Settle>> = const { RefCell::new(None) };
}

/// Builds the index of `ws`, or brings it up to date: files whose size and
/// times are unchanged keep their entries unread; the rest are read.
pub fn refresh(ws: &Workspace) -> Result<IndexReport, SearchError> {
    let started = Instant::now();
    let dir = index_dir(ws)?;
    let report = match Loaded::open(dir, ws.index_policy()) {
        Ok(old) => match one_instance(ws, Some(old), None)? {
            Ok(report) => report,
            // A posting list failed its checksum: start again.
            Err(why) => one_instance(ws, None, Some(why))?.map_err(SearchError::Io)?,
        },
        Err(why) => one_instance(ws, None, Some(why))?.map_err(SearchError::Io)?,
    };
    Ok(IndexReport { elapsed_ms: started.elapsed().as_millis() as u64, ..report })
}

fn index_dir(ws: &Workspace) -> Result<&Path, SearchError> {
    ws.index_dir().ok_or_else(|| SearchError::InvalidArgument("no index directory was given to the component".into()))
}

/// A whole build in this instance: `Ok(Err(why))` when `old` turned out
/// corrupt.
fn one_instance(
    ws: &Workspace,
    old: Option<Loaded>,
    why_rebuilt: Option<String>,
) -> Result<Result<IndexReport, String>, SearchError> {
    let mut build = Build::start(ws, old, why_rebuilt)?;
    let mut reader = Reader::new(index_dir(ws)?);
    while !build.done {
        for file in &build.next(BATCH_BYTES) {
            let outcome = reader.read(ws, file)?;
            build.apply(file.number, outcome);
        }
    }
    if !reader.pairs.is_empty() {
        reader.write_run()?;
    }
    let runs = reader.runs.take();
    let settled = match build.settle(runs, reader.files_read, reader.bytes_read)? {
        Settle::Done(report) => return Ok(report),
        Settle::Merge(settled) => settled,
    };
    let part = write_part(&settled.runs.dir, &settled.runs.paths, settled.old_lists(), 0..1 << 24, settled.header())?;
    Ok(match part {
        Ok(part) => Ok(settled.finish(vec![part])?),
        Err(why) => Err(why),
    })
}

/// `index-walk`: the next files to read of the build this instance walks
/// for (`start`: a new one).
pub fn walk_batch(ws: &Workspace, start: bool, max_bytes: u64) -> Result<IndexBatch, SearchError> {
    if start {
        BUILD.take();
        let dir = index_dir(ws)?;
        let build = match Loaded::open(dir, ws.index_policy()) {
            Ok(old) => Build::start(ws, Some(old), None)?,
            Err(why) => Build::start(ws, None, Some(why))?,
        };
        BUILD.set(Some(build));
    }
    BUILD.with_borrow_mut(|build| {
        let build = build.as_mut().ok_or_else(|| SearchError::InvalidArgument("no index build was started".into()))?;
        let files = build.next(max_bytes.max(1));
        let files = files.into_iter().map(|f| IndexFile { number: f.number, path: f.path, size: f.size }).collect();
        Ok(IndexBatch { files, done: build.done })
    })
}

/// `index-read`: reads `files` for a build (`last`: the end of this
/// instance's part, its runs named).
pub fn read_batch(ws: &Workspace, files: Vec<IndexFile>, last: bool) -> Result<IndexPart, SearchError> {
    let dir = index_dir(ws)?;
    READER.with_borrow_mut(|reader| {
        let r = reader.get_or_insert_with(|| Reader::new(dir));
        let mut outcomes = Vec::with_capacity(files.len());
        for f in files {
            let file = ToRead { number: f.number, path: f.path, size: f.size, entry: None };
            outcomes.push((f.number, r.read(ws, &file)?.wit()));
        }
        let mut read = IndexPart { outcomes, runs: Vec::new(), files_read: 0, bytes_read: 0 };
        if last {
            let mut r = reader.take().expect("just made");
            if !r.pairs.is_empty() {
                r.write_run()?;
            }
            let names = r.runs.take().into_iter().filter_map(|p| Some(p.file_name()?.to_str()?.to_string()));
            read.runs = names.collect();
            (read.files_read, read.bytes_read) = (r.files_read, r.bytes_read);
        }
        Ok(read)
    })
}

/// `index-split`: the build this instance walked for, once every file
/// handed out was read (`reads`: every instance's), its table settled; the
/// merge of its lists split into `count` ranges of trigrams, about equal in
/// bytes (none: nothing to merge, `index-finish` tells the outcome).
pub fn split(ws: &Workspace, reads: Vec<IndexPart>, count: u32) -> Result<IndexMergePlan, SearchError> {
    let mut build = BUILD.take().ok_or_else(|| SearchError::InvalidArgument("no index build was started".into()))?;
    let dir = index_dir(ws)?;
    let mut runs = Runs::new(dir);
    let (mut files_read, mut bytes_read) = (0, 0);
    for read in reads {
        for (number, outcome) in read.outcomes {
            build.apply(number, Outcome::from_wit(outcome));
        }
        for name in read.runs {
            // (Only a run's name: nothing else in the directory is merged.)
            if index_file::scratch(&name) != Some(Scratch::Run) {
                return Err(SearchError::InvalidArgument(format!("{name:?} is not an index run")));
            }
            runs.paths.push(dir.join(name));
        }
        files_read += read.files_read;
        bytes_read += read.bytes_read;
    }
    let settle = build.settle(runs.take(), files_read, bytes_read)?;
    let plan = match &settle {
        Settle::Done(_) => IndexMergePlan { runs: Vec::new(), bounds: Vec::new(), old: None },
        Settle::Merge(settled) => settled.plan(count)?,
    };
    SETTLED.set(Some(settle));
    Ok(plan)
}

/// `index-merge`: range `range` of a build's merge (`plan`, from
/// `index-split`), written beside the index as a part.
pub fn merge_range(ws: &Workspace, plan: &IndexMergePlan, range: u32) -> Result<IndexMerged, SearchError> {
    let dir = index_dir(ws)?;
    let bad =
        |what: &str| SearchError::InvalidArgument(format!("the merge plan's {what} is not one index-split makes"));
    let r = range as usize;
    let (from, to) = match plan.bounds.get(r..r + 2) {
        Some(&[from, to]) => (from, to),
        _ => return Err(bad("range")),
    };
    let aligned = |b: u32| b.is_multiple_of(1 << SLICE_BITS) && b <= 1 << 24;
    if from > to || !aligned(from) || !aligned(to) {
        return Err(bad("range"));
    }
    let mut runs = Vec::new();
    for name in &plan.runs {
        if index_file::scratch(name) != Some(Scratch::Run) {
            return Err(SearchError::InvalidArgument(format!("{name:?} is not an index run")));
        }
        runs.push(dir.join(name));
    }
    let corrupt = |why: String| IndexMerged { name: String::new(), corrupt: Some(why) };
    let header = match &plan.old {
        Some(o) if o.delta_only && range == 0 => DELTA_HEADER,
        _ if range == 0 => HEADER,
        _ => 0,
    };
    SETTLED.with_borrow(|settled| {
        // The old index: this instance's own (it settled the build), or opened.
        let own = match settled {
            Some(Settle::Merge(s)) => s.old.as_ref().map(|(o, _)| o),
            _ => None,
        };
        let opened;
        let old = match &plan.old {
            None => None,
            Some(o) => {
                let old = match own.filter(|own| own.id == o.id) {
                    Some(own) => own,
                    None => match Loaded::open(dir, ws.index_policy()) {
                        Ok(l) if l.id == o.id => {
                            opened = l;
                            &opened
                        }
                        Ok(_) => return Ok(corrupt("it was replaced during the build".into())),
                        Err(why) => return Ok(corrupt(why)),
                    },
                };
                if o.renumber.len() != old.files.len() {
                    return Err(bad("renumbering"));
                }
                Some((old, &o.renumber[..], o.delta_only))
            }
        };
        Ok(match write_part(dir, &runs, old, from..to, header)? {
            Ok(path) => {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                IndexMerged { name: name.to_string(), corrupt: None }
            }
            Err(why) => corrupt(why),
        })
    })
}

/// `index-finish`: the build this instance split, its index written from
/// the ranges merged (`merged`, in order).
pub fn finish(ws: &Workspace, merged: Vec<IndexMerged>) -> Result<IndexReport, SearchError> {
    let dir = index_dir(ws)?;
    let settled = match SETTLED.take() {
        None => return Err(SearchError::InvalidArgument("no index build was split".into())),
        Some(Settle::Done(Ok(report))) => return Ok(report),
        Some(Settle::Done(Err(why))) => return one_instance(ws, None, Some(why))?.map_err(SearchError::Io),
        Some(Settle::Merge(settled)) => settled,
    };
    let (mut parts, mut corrupt) = (Vec::new(), None);
    for m in merged {
        if m.corrupt.is_some() {
            corrupt = corrupt.or(m.corrupt);
            continue;
        }
        if index_file::scratch(&m.name) != Some(Scratch::Part) {
            return Err(SearchError::InvalidArgument(format!("{:?} is not a merged part of the index", m.name)));
        }
        parts.push(dir.join(m.name));
    }
    if let Some(why) = corrupt {
        // The old index was corrupt: built again, here, from scratch (the
        // parts removed with the runs).
        let mut settled = settled;
        settled.runs.paths.extend(parts);
        let spent = settled.started.elapsed();
        drop(settled);
        let report = one_instance(ws, None, Some(why))?.map_err(SearchError::Io)?;
        return Ok(IndexReport { elapsed_ms: report.elapsed_ms + spent.as_millis() as u64, ..report });
    }
    settled.finish(parts)
}

impl Runs {
    /// Its runs, no longer removed when it is dropped.
    fn take(&mut self) -> Vec<PathBuf> {
        std::mem::take(&mut self.paths)
    }
}

/// A file handed out to read.
struct ToRead {
    number: u32,
    path: String,
    /// Its size when walked.
    size: u64,
    /// As the walk found it (read in the walking instance).
    entry: Option<Entry>,
}

/// What reading a file handed out found ([`ReadOutcome`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Outcome {
    Text,
    Binary,
    Unusable,
    Changing,
    Decoded,
}

impl Outcome {
    fn wit(self) -> ReadOutcome {
        match self {
            Outcome::Text => ReadOutcome::Text,
            Outcome::Binary => ReadOutcome::Binary,
            Outcome::Unusable => ReadOutcome::Unusable,
            Outcome::Changing => ReadOutcome::Changing,
            Outcome::Decoded => ReadOutcome::Decoded,
        }
    }

    fn from_wit(outcome: ReadOutcome) -> Outcome {
        match outcome {
            ReadOutcome::Text => Outcome::Text,
            ReadOutcome::Binary => Outcome::Binary,
            ReadOutcome::Unusable => Outcome::Unusable,
            ReadOutcome::Changing => Outcome::Changing,
            ReadOutcome::Decoded => Outcome::Decoded,
        }
    }
}

/// A build as its walk goes: the table so far, and the files handed out.
struct Build {
    dir: PathBuf,
    policy: u64,
    steps: Box<dyn Iterator<Item = Step>>,
    /// The walk's, for what it left out after its last step.
    walker: Rc<Walker>,
    seen: Rc<std::cell::Cell<Skips>>,
    /// The walk is over.
    done: bool,
    old: Option<Loaded>,
    /// (entry, its number in `old`) in walk order.
    kept: Vec<(FileRec, Option<usize>)>,
    /// (racy, linked) of each file handed out and not read yet, by number.
    handed: HashMap<u32, (bool, bool)>,
    walked: WalkRecord,
    skipped: Skips,
    report: IndexReport,
    started: Instant,
}

impl Build {
    fn start(ws: &Workspace, old: Option<Loaded>, why_rebuilt: Option<String>) -> Result<Build, SearchError> {
        // The files of a default search's walk, as that walk finds them.
        let walker = Rc::new(Walker::new(ws, &WalkOptions::default())?);
        let roots = walker.roots(&[".".to_string()])?;
        let report = IndexReport {
            files: 0,
            files_read: 0,
            bytes_read: 0,
            files_removed: 0,
            trigrams: 0,
            index_bytes: 0,
            rebuilt: why_rebuilt.map(|why| format!("built from scratch: {why}")),
            elapsed_ms: 0,
            warnings: Vec::new(),
        };
        let seen = Rc::new(std::cell::Cell::new(Skips::default()));
        Ok(Build {
            dir: index_dir(ws)?.to_path_buf(),
            policy: ws.index_policy(),
            steps: Box::new(walk::steps(walker.clone(), roots, None, seen.clone())),
            walker,
            seen,
            done: false,
            old,
            kept: Vec::new(),
            handed: HashMap::new(),
            walked: WalkRecord { whole: true, ..WalkRecord::default() },
            skipped: Skips::default(),
            report,
            started: Instant::now(),
        })
    }

    /// Walks on to the next files to read: about `max_bytes` of them (at
    /// most [`BATCH_FILES`]), or those found in [`STEP_ENTRIES`] entries,
    /// or those up to the walk's end (then `done`).
    fn next(&mut self, max_bytes: u64) -> Vec<ToRead> {
        let (mut batch, mut bytes) = (Vec::new(), 0);
        for _ in 0..STEP_ENTRIES {
            if bytes >= max_bytes || batch.len() >= BATCH_FILES {
                break;
            }
            let Some(step) = self.steps.next() else {
                // What it left out after its last step.
                self.skipped.add(self.walker.skips().since(self.seen.get()));
                self.done = true;
                break;
            };
            let entry = match step {
                Step::Entry(entry) if entry.is_file => entry,
                Step::Entry(_) => continue,
                Step::Skipped(n) => {
                    self.skipped.add(n);
                    continue;
                }
                Step::Problem(_) | Step::TimedOut => {
                    self.walked.whole = false;
                    continue;
                }
            };
            // Numbered as walked, in path order (a file out of it, or twice,
            // gets no record: a search reads it).
            if self.kept.last().is_some_and(|k| path_cmp(&k.0.path, &entry.rel).is_ge()) {
                self.walked.whole = false;
                continue;
            }
            let Some(meta) = entry.meta() else {
                self.walked.whole = false;
                continue;
            };
            let number = self.kept.len() as u32;
            if self.skipped.any() {
                self.walked.skips.push((number, std::mem::take(&mut self.skipped)));
            }
            if let Some(old) = self.old.as_ref() {
                // (Looked for first just after the last file kept as it was.)
                let likely = self.kept.last().and_then(|k| k.1).map_or(0, |i| i + 1);
                if let Some(i) = old.record(&entry.rel, likely) {
                    let rec = &old.files[i];
                    if rec.flags & (UNTRUSTED | LASTING) != UNTRUSTED && rec.same(&meta) {
                        self.kept.push((rec.clone(), Some(i)));
                        continue;
                    }
                }
            }
            let racy = meta.modified_ns.max(meta.changed_ns).saturating_add(RACY_NS) > now_ns();
            let rec = FileRec {
                path: entry.rel.clone(),
                size: meta.size,
                modified_ns: meta.modified_ns,
                changed_ns: meta.changed_ns,
                // (Until it is read: untrusted, and for as long as its
                // metadata stays unless that is too new to tell.)
                flags: UNTRUSTED | if racy { 0 } else { LASTING },
            };
            self.kept.push((rec, None));
            if meta.size <= INDEX_FILESIZE && meta.changed_ns != 0 {
                // A file with other names may change through one no watcher
                // of the workspace sees: a long-lived host would miss it.
                self.handed.insert(number, (racy, meta.links > 1));
                bytes += meta.size.max(1);
                batch.push(ToRead { number, path: entry.rel.clone(), size: meta.size, entry: Some(entry) });
            }
        }
        batch
    }

    /// What reading the file handed out as `number` found.
    fn apply(&mut self, number: u32, outcome: Outcome) {
        let Some((racy, linked)) = self.handed.remove(&number) else { return };
        let rec = &mut self.kept[number as usize].0;
        rec.flags = match outcome {
            Outcome::Text | Outcome::Binary | Outcome::Decoded => {
                (if racy || linked { UNTRUSTED } else { 0 })
                    | match outcome {
                        Outcome::Binary => BINARY,
                        Outcome::Decoded => DECODED,
                        _ => 0,
                    }
            }
            Outcome::Unusable | Outcome::Changing => UNTRUSTED,
        };
        // (Read while it was being written: read it again next time.)
        if rec.flags & UNTRUSTED != 0 && !racy && outcome != Outcome::Changing {
            rec.flags |= LASTING;
        }
    }

    /// The table settled once every file handed out was read (`runs`:
    /// every instance's): nothing to write (the index stands as it is, or
    /// the old one turned out corrupt), or its lists to merge.
    fn settle(mut self, runs: Vec<PathBuf>, files_read: u64, bytes_read: u64) -> Result<Settle, SearchError> {
        let mut source = Runs::new(&self.dir);
        source.paths = runs;
        let mut report = self.report;
        (report.files_read, report.bytes_read) = (files_read, bytes_read);
        self.walked.tail = self.skipped;
        // Stopped before the end of the walk (the host was asked to stop):
        // the index holds what was walked, a refresh goes on from there.
        if !self.done {
            self.walked.whole = false;
            report.warnings.push(format!(
                "stopped: the index holds the first {} files of the walk; a refresh goes on from there",
                self.kept.len()
            ));
        }
        // Handed out and not read (stopped too): read by every search, and
        // by the next refresh.
        for (number, _) in self.handed.drain() {
            self.kept[number as usize].0.flags = UNTRUSTED;
        }
        let kept = self.kept;
        // Nothing changed: the index stands as it is (if it is sound).
        let walked = &self.walked;
        let same = |o: &Loaded| o.files.len() == kept.len() && kept.iter().all(|k| k.1.is_some()) && o.walk == *walked;
        if let Some(old) = self.old.as_ref().filter(|o| same(o)) {
            if let Err(why) = old.verify() {
                return Ok(Settle::Done(Err(why)));
            }
            report.files = kept.len() as u64;
            report.trigrams = old.trigrams(false).len() as u64;
            report.index_bytes = old.bytes;
            report.elapsed_ms = self.started.elapsed().as_millis() as u64;
            return Ok(Settle::Done(Ok(report)));
        }
        // Each kept file's number in the old index's own lists (u32::MAX:
        // read now, or read since that index and in its delta's lists).
        let in_base: Vec<u32> = match &self.old {
            Some(old) => {
                let numbers = old.base_numbers();
                kept.iter().map(|(_, was)| was.map_or(u32::MAX, |w| numbers[w])).collect()
            }
            None => Vec::new(),
        };
        let read_since = in_base.iter().filter(|&&b| b == u32::MAX).count();
        // Few files read since the old index: only a delta beside it (its
        // lists: the files read now, and those of the old delta kept).
        let delta = self.old.is_some() && read_since * DELTA_SHARE <= kept.len();
        if let Some(old) = self.old.as_ref() {
            let walked = |path: &str| kept.binary_search_by(|k| path_cmp(&k.0.path, path)).is_ok();
            report.files_removed = old.files.iter().filter(|f| !walked(&f.path)).count() as u64;
        }
        // The old lists, renumbered: a source of the merge as a run is (for
        // a delta, only the old delta's lists of files kept as they were).
        let renumber = self.old.as_ref().map(|old| {
            let mut renumber = vec![u32::MAX; old.files.len()];
            for (new, (_, was)) in kept.iter().enumerate() {
                if let Some(was) = was.filter(|_| !delta || in_base[new] == u32::MAX) {
                    renumber[was] = new as u32;
                }
            }
            renumber
        });
        Ok(Settle::Merge(Settled {
            policy: self.policy,
            report,
            files: kept.into_iter().map(|(rec, _)| rec).collect(),
            walked: self.walked,
            old: self.old.zip(renumber),
            in_base: delta.then_some(in_base),
            runs: source,
            started: self.started,
        }))
    }
}

/// A build's table settled: what it writes.
enum Settle {
    /// Nothing: the old index stands as it is, or (`Err`) it turned out
    /// corrupt.
    Done(Result<IndexReport, String>),
    Merge(Settled),
}

/// A build's table settled, its lists still to merge.
struct Settled {
    policy: u64,
    report: IndexReport,
    files: Vec<FileRec>,
    walked: WalkRecord,
    /// The old index, and each of its files' number now (`u32::MAX`: its
    /// lists are not merged).
    old: Option<(Loaded, Vec<u32>)>,
    /// Written as a delta of the old index: each file's number in its own
    /// lists (`u32::MAX`: read since).
    in_base: Option<Vec<u32>>,
    runs: Runs,
    started: Instant,
}

impl Settled {
    /// The old index's lists the merge takes (renumbered; its delta's only, or all).
    fn old_lists(&self) -> Option<(&Loaded, &[u32], bool)> {
        self.old.as_ref().map(|(o, r)| (o, &r[..], self.in_base.is_some()))
    }

    /// The bytes before the lists: the index's header, or a delta's.
    fn header(&self) -> usize {
        if self.in_base.is_some() {
            DELTA_HEADER
        } else {
            HEADER
        }
    }

    /// The merge split into `count` ranges of trigrams (whole slices),
    /// about equal in the bytes of the lists they read; one range when
    /// they are few (a refresh of a few files: another instance would
    /// cost more than it saves).
    fn plan(&self, count: u32) -> Result<IndexMergePlan, SearchError> {
        let mut bytes = vec![0u64; SLICES];
        if count > 1 {
            for path in &self.runs.paths {
                for (b, n) in bytes.iter_mut().zip(slice_bytes(path).map_err(io_error)?) {
                    *b += n;
                }
            }
            if let Some((old, _, delta_only)) = self.old_lists() {
                let delta = old.delta.as_ref().map_or(&[][..], |(d, _)| &d.dict[..]);
                let base = if delta_only { &[][..] } else { &old.base.dict[..] };
                for &(tri, _, len, _) in base.iter().chain(delta) {
                    bytes[(tri >> SLICE_BITS) as usize] += u64::from(len);
                }
            }
        }
        let total = u128::from(bytes.iter().sum::<u64>());
        let count = if total < SPLIT_BYTES { 1 } else { count.min(64) as u128 };
        let (mut bounds, mut at) = (vec![0u32], 0u128);
        for (s, n) in bytes.iter().enumerate() {
            at += u128::from(*n);
            while (bounds.len() as u128) < count && at * count >= total * bounds.len() as u128 {
                bounds.push(((s + 1) << SLICE_BITS) as u32);
            }
        }
        bounds.push(1 << 24);
        let runs = self.runs.paths.iter().filter_map(|p| Some(p.file_name()?.to_str()?.to_string())).collect();
        let old = self.old.as_ref().map(|(o, renumber)| IndexOldLists {
            id: o.id,
            renumber: renumber.clone(),
            delta_only: self.in_base.is_some(),
        });
        Ok(IndexMergePlan { runs, bounds, old })
    }

    /// The index (or delta) written from the merged parts among its runs
    /// (in order: see [`Output::join`]). Its report.
    fn finish(mut self, parts: Vec<PathBuf>) -> Result<IndexReport, SearchError> {
        // (Removed with the runs once joined, or if the join fails.)
        self.runs.paths.extend(parts.iter().cloned());
        let (out, dict) = Output::join(&parts, self.header())?;
        let mut report = self.report;
        report.files = self.files.len() as u64;
        report.trigrams = dict.len() as u64;
        let old = self.old.as_ref().map(|(o, _)| o);
        let as_delta = old.zip(self.in_base.as_deref()).map(|(o, numbers)| (o.id, numbers));
        report.index_bytes = out.finish(&self.files, &self.walked, &dict, self.policy, as_delta)?;
        if let Some(old) = old.filter(|_| self.in_base.is_some()) {
            report.index_bytes += old.base_bytes;
            let mut all: Vec<u32> = old.base.dict.iter().chain(&dict).map(|e| e.0).collect();
            all.sort_unstable();
            all.dedup();
            report.trigrams = all.len() as u64;
        }
        report.elapsed_ms = self.started.elapsed().as_millis() as u64;
        Ok(report)
    }
}

/// What an instance read for a build: its pairs, written out as runs when
/// they grow large.
struct Reader {
    runs: Runs,
    pairs: Vec<u64>,
    /// The files whose pairs are in `pairs` came in their numbers' order
    /// (as the walk hands them out), after `last`.
    in_order: bool,
    last: Option<u32>,
    scratch: Vec<u64>,
    seen: Vec<u64>,
    tris: Vec<u32>,
    bytes: Vec<u8>,
    files_read: u64,
    bytes_read: u64,
    /// Directories of the last file read by path.
    dirs: crate::search::Dirs,
}

impl Reader {
    fn new(dir: &Path) -> Reader {
        Reader {
            runs: Runs::new(dir),
            pairs: Vec::new(),
            in_order: true,
            last: None,
            scratch: Vec::new(),
            seen: vec![0u64; 1 << 18],
            tris: Vec::new(),
            bytes: Vec::new(),
            files_read: 0,
            bytes_read: 0,
            dirs: Default::default(),
        }
    }

    fn read(&mut self, ws: &Workspace, file: &ToRead) -> Result<Outcome, SearchError> {
        self.bytes.clear();
        let by_path;
        let entry = match &file.entry {
            Some(entry) => Some(entry),
            None => {
                by_path = self.dirs.entry(ws, file.path.clone(), None).ok();
                by_path.as_ref()
            }
        };
        // (No more than the walk saw and a byte: a file swapped for a
        // larger one since is changing, never read whole.)
        let limit = file.size.saturating_add(1);
        let read = entry.and_then(|e| e.open().and_then(|f| f.take(limit).read_to_end(&mut self.bytes)).ok());
        if read.is_none() {
            return Ok(Outcome::Unusable);
        }
        if self.bytes.len() as u64 != file.size {
            return Ok(Outcome::Changing);
        }
        self.files_read += 1;
        self.bytes_read += self.bytes.len() as u64;
        // A UTF-16 file is searched as the UTF-8 it transcodes to, its mark
        // removed, whichever way a search reads it: the same decoder here.
        let utf16 = self.bytes.starts_with(&[0xff, 0xfe]) || self.bytes.starts_with(&[0xfe, 0xff]);
        if utf16 {
            let mut text = Vec::new();
            let mut decoder = encoding_rs_io::DecodeReaderBytesBuilder::new().bom_sniffing(true).build(&self.bytes[..]);
            // (A NUL in its text: binary or not as the search finds; read.)
            if decoder.read_to_end(&mut text).is_err() || text.contains(&0) {
                return Ok(Outcome::Unusable);
            }
            self.bytes = text;
        }
        let outcome = if utf16 { Outcome::Decoded } else { Outcome::Text };
        // A binary file is skipped whatever the query: its bytes need no entries.
        if self.bytes.contains(&0) {
            return Ok(Outcome::Binary);
        }
        // A file with secrets is indexed as callers see it, redacted (a match
        // counts only where it shows clear of the redactions, and each line
        // redacts alike whole or alone): whether a search skips it tells
        // nothing its answers and reads do not.
        let edits = if ws.redact { redact::edits(&self.bytes) } else { Vec::new() };
        let shown = (!edits.is_empty()).then(|| redact::apply(&self.bytes, &edits));
        let n = trigrams(shown.as_deref().unwrap_or(&self.bytes), &mut self.seen, &mut self.tris);
        self.in_order &= self.last.is_none_or(|last| last < file.number);
        self.last = Some(file.number);
        let number = u64::from(file.number);
        self.pairs.extend(self.tris[..n].iter().map(|&t| u64::from(t) << 32 | number));
        if self.pairs.len() >= RUN_PAIRS {
            self.write_run()?;
        }
        Ok(outcome)
    }

    /// Its pairs written out as a run (sorted: see [`sort_pairs`]).
    fn write_run(&mut self) -> Result<(), SearchError> {
        sort_pairs(&mut self.pairs, &mut self.scratch, self.in_order);
        (self.in_order, self.last) = (true, None);
        self.runs.write(&mut self.pairs)
    }
}
