//! The wasmtime side: one engine per process, the embedded component loaded
//! from the machine code `build.rs` compiled into the binary (never from a
//! file: see [`load_component`]), pre-instantiated, and a fresh store and
//! instance per call whose only filesystem is the workspace,
//! read-only, under a wall-clock deadline and a memory cap.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Engine, ResourceLimiter, Store, Trap};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::bindings::{Sandgrep, SandgrepPre};
use crate::Error;

/// The component, built from `guest/` by `build.rs`.
pub(crate) static WASM: &[u8] = include_bytes!(env!("SANDGREP_WASM"));

/// [`WASM`] compiled to this machine's code by `build.rs`, with the engine
/// configuration of [`crate::engine_config`] (empty when it was not: a
/// build for another target). On Linux it lies in the binary's own
/// executable code and runs where it is: no copy of its tens of MB at each
/// start. wasmtime aligns the code's sections to the page size and checks
/// where the code begins against it: 64 KiB is the largest page size Linux
/// has (4 KiB on x86-64, up to 64 KiB on aarch64).
#[cfg_attr(target_os = "linux", link_section = ".text.sandgrep_component")]
static PRECOMPILED: Aligned<{ include_bytes!(env!("SANDGREP_CWASM")).len() }> =
    Aligned(*include_bytes!(env!("SANDGREP_CWASM")));

#[repr(C, align(65536))]
struct Aligned<const N: usize>([u8; N]);

/// The name the component looks for its index directory under.
const INDEX_PREOPEN: &str = "/sandgrep-index";

/// How often the epoch advances; deadlines are counted in these ticks.
const TICK: Duration = Duration::from_millis(10);

/// How long past the guest's own timeout a blocked host call is interrupted
/// (the guest checks its clock first, and usually returns by then).
const INTERRUPT_MARGIN: Duration = Duration::from_millis(50);

/// What one call's store holds.
pub(crate) struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryCap,
    /// Counts the call's file looks and opens, for someone to watch.
    pub(crate) progress: Option<Arc<crate::Progress>>,
    /// What the last `open-at` learned of the file it opened, kept for the
    /// `stat` the guest asks of it next (see [`files`]).
    opened: Option<(std::sync::Weak<std::fs::File>, cap_primitives::fs::Metadata)>,
}

/// The memory cap, remembering whether the guest ran into it (so the error
/// can say so instead of showing a trap).
struct MemoryCap {
    limit: usize,
    hit: bool,
    /// The most the instance's memory has grown to.
    size: usize,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.hit |= desired > self.limit;
        if desired <= self.limit {
            self.size = self.size.max(desired);
        }
        Ok(desired <= self.limit)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl crate::bindings::sandgrep::search::types::Host for State {}

pub(crate) struct Runtime {
    engine: Engine,
    pre: SandgrepPre<State>,
}

/// The process-wide runtime of the embedded component, set up on first use.
pub(crate) fn runtime() -> Result<Arc<Runtime>, Error> {
    static RUNTIME: OnceLock<Result<Arc<Runtime>, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| Runtime::new(WASM, true).map(Arc::new).map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(Error::Setup)
}

impl Runtime {
    /// A runtime for `wasm`, a build of the `sandgrep` world; `embedded`
    /// when it is [`WASM`], whose machine code this binary holds.
    pub(crate) fn new(wasm: &[u8], embedded: bool) -> wasmtime::Result<Runtime> {
        let mut config = crate::engine_config::config();
        // `perf` names the guest's functions (a /tmp/perf-PID.map) when asked.
        // For profiling only: wasmtime appends to that predictable name and
        // follows a link there, so not on a machine whose /tmp others share.
        if std::env::var_os("SANDGREP_PERFMAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let (engine, component) = load_component(&mut config, wasm, embedded)?;
        let mut linker = Linker::<State>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        files::add_to_linker(&mut linker)?;
        Sandgrep::add_to_linker::<State, wasmtime::component::HasSelf<State>>(&mut linker, |s| s)?;
        let pre = SandgrepPre::new(linker.instantiate_pre(&component)?)?;
        let ticker = engine.weak();
        std::thread::Builder::new().name("sandgrep-epoch".into()).spawn(move || {
            while let Some(engine) = ticker.upgrade() {
                engine.increment_epoch();
                drop(engine);
                interrupt::tick();
                std::thread::sleep(TICK);
            }
        })?;
        Ok(Runtime { engine, pre })
    }

    /// Runs `f` against a fresh instance confined to `workspace`. Past
    /// `timeout` (the guest's own), a host call it is blocked in is
    /// interrupted; past `deadline` the instance is stopped.
    pub(crate) fn call<T>(
        &self,
        workspace: &Path,
        index: Option<(&Path, FsPerms)>,
        memory_limit: usize,
        timeout: Duration,
        deadline: Duration,
        f: impl FnOnce(&Sandgrep, &mut Store<State>) -> wasmtime::Result<T>,
    ) -> Result<T, Error> {
        self.call_kept(&mut None, workspace, index, memory_limit, timeout, deadline, f)
    }

    /// As [`Runtime::call`], on the instance in `kept` (made first if there
    /// is none; kept only while calls succeed: a trapped instance is done).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn call_kept<T>(
        &self,
        kept: &mut Option<Kept>,
        workspace: &Path,
        index: Option<(&Path, FsPerms)>,
        memory_limit: usize,
        timeout: Duration,
        deadline: Duration,
        f: impl FnOnce(&Sandgrep, &mut Store<State>) -> wasmtime::Result<T>,
    ) -> Result<T, Error> {
        // A kept instance holds the directory it was made with open: one
        // removed and made again (or renamed over) since needs a new instance.
        let root = dir_identity(workspace);
        let mut k = match kept.take().filter(|k| k.root == root) {
            Some(k) => k,
            None => {
                let mut store = self.store(workspace, index, memory_limit)?;
                let instance = self.run(&mut store, timeout, deadline, |store| self.instantiate(store))?;
                Kept { store, instance, root }
            }
        };
        let result = self.run(&mut k.store, timeout, deadline, |store| f(&k.instance, store));
        if result.is_ok() {
            *kept = Some(k);
        }
        result
    }

    /// An instance of the component in `store`. The first one makes the
    /// component's memory image: its data written to a memfd, which is then
    /// sealed, and Linux refuses the seal (EBUSY) while a page of it is
    /// briefly pinned; wasmtime makes the image again at the next try.
    fn instantiate(&self, store: &mut Store<State>) -> wasmtime::Result<Sandgrep> {
        let mut tries = 0;
        loop {
            match self.pre.instantiate(&mut *store) {
                Err(e) if tries < 5 && e.root_cause().to_string().contains("(os error 16)") => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(5 << tries));
                }
                r => return r,
            }
        }
    }

    /// A store whose only filesystem is `workspace`, read-only (and the
    /// index directory, when given).
    fn store(
        &self,
        workspace: &Path,
        index: Option<(&Path, FsPerms)>,
        memory_limit: usize,
    ) -> Result<Store<State>, Error> {
        let mut wasi = WasiCtxBuilder::new();
        // Before the preopen: each preopen captures this setting, and blocking
        // in place is several times faster than hopping to a worker thread.
        wasi.allow_blocking_current_thread(true);
        wasi.preopened_dir(workspace, ".", FsPerms::ReadOnly)
            .map_err(|e| Error::Setup(format!("cannot open the workspace: {e}")))?;
        // The index directory (outside the workspace), when there is one.
        if let Some((dir, perms)) = index {
            wasi.preopened_dir(dir, INDEX_PREOPEN, perms)
                .map_err(|e| Error::Setup(format!("cannot open the index directory: {e}")))?;
        }
        let state = State {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            memory: MemoryCap { limit: memory_limit, hit: false, size: 0 },
            progress: None,
            opened: None,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.memory);
        store.epoch_deadline_trap();
        Ok(store)
    }

    /// Runs `f` under the deadlines (see [`Runtime::call`]).
    fn run<T>(
        &self,
        store: &mut Store<State>,
        timeout: Duration,
        deadline: Duration,
        f: impl FnOnce(&mut Store<State>) -> wasmtime::Result<T>,
    ) -> Result<T, Error> {
        store.data_mut().memory.hit = false;
        store.set_epoch_deadline((deadline.as_millis() / TICK.as_millis()).max(1) as u64);
        let _watch = interrupt::watch(std::time::Instant::now() + timeout + INTERRUPT_MARGIN);
        f(store).map_err(|e| match e.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => Error::Deadline(deadline),
            _ if store.data().memory.hit => Error::OutOfMemory(store.data().memory.limit),
            Some(Trap::StackOverflow) => Error::Crashed("the call ran out of stack".into()),
            Some(trap) => Error::Crashed(format!("the call trapped: {trap}")),
            // Not a trap: the message's first line (no backtrace).
            None => Error::Crashed(e.root_cause().to_string().lines().next().unwrap_or_default().to_string()),
        })
    }
}

/// An instance kept for many calls (a long-lived host's), with its store.
pub(crate) struct Kept {
    store: Store<State>,
    instance: Sandgrep,
    /// The workspace directory it was made with ([`dir_identity`]).
    root: Option<(u64, u64)>,
}

impl Kept {
    /// The size its memory has grown to.
    pub(crate) fn memory(&self) -> usize {
        self.store.data().memory.size
    }
}

/// Which directory `path` names now (device and inode), where the platform
/// says; `None` where it does not (or the path is gone).
pub(crate) fn dir_identity(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Where this host's `wasi:filesystem` differs from wasmtime-wasi's: the
/// calls a walk makes for every entry (list a directory, open, stat, read)
/// are replaced in the linker, the rest are wasmtime-wasi's.
///
/// wasmtime-wasi 48 stats every entry of a directory it lists (for a type
/// the directory entry already has), stats every file it opens (to tell a
/// directory from a file) and enters its async runtime on each call; the
/// guest then stats the file it opened. Here a listing takes the types the
/// directory gives, an open stats once and keeps the answer for the guest's
/// `stat` of it, and reads go straight to `pread`: one `statx` per file
/// where there were three.
mod files {
    use std::path::Path;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;
    use std::time::{Duration, Instant, SystemTime};

    use cap_primitives::fs::{FileType, FollowSymlinks, Metadata, MetadataExt, OpenOptions};
    use wasmtime::component::{Linker, Resource, ResourceType};
    use wasmtime::StoreContextMut;
    use wasmtime_wasi::filesystem::{Descriptor, Dir, File, OpenMode, WasiFilesystemView};
    use wasmtime_wasi::p2::bindings::sync::filesystem::types::{
        Datetime, DescriptorFlags, DescriptorStat, DescriptorType, DirectoryEntry, ErrorCode, HostDescriptor,
        OpenFlags, PathFlags,
    };
    use wasmtime_wasi::p2::FsResult;

    use super::{interrupt, State};

    type Answer<T> = wasmtime::Result<(Result<T, ErrorCode>,)>;

    /// The most one `read` returns (wasmtime-wasi's own bound).
    const MAX_READ: usize = 64 * 1024;

    /// A directory's entries, listed when the guest asks for the stream.
    #[cfg(unix)]
    pub(crate) struct Entries(std::vec::IntoIter<Result<DirectoryEntry, ErrorCode>>);

    pub(super) fn add_to_linker(linker: &mut Linker<State>) -> wasmtime::Result<()> {
        linker.allow_shadowing(true);
        let mut types = linker.instance("wasi:filesystem/types@0.2.12")?;
        // wasmtime-wasi 48 reports a file's creation time as its
        // status-change time. The index trusts a file only while its ctime is
        // unchanged, and only the real one moves on every write (a writer can
        // set the mtime back), so stats here carry the real ctime.
        types.func_wrap(
            "[method]descriptor.stat",
            |mut cx: StoreContextMut<'_, State>, (fd,): (Resource<Descriptor>,)| -> Answer<DescriptorStat> {
                // The guest stats each file right after opening it: the
                // open's own stat answers (taken after the open, as a stat
                // now would be).
                // (The same file, not the same handle number: numbers are
                // reused once a descriptor is dropped.)
                let file = match cx.data().table.get(&fd)? {
                    Descriptor::File(f) => Arc::clone(&f.file),
                    Descriptor::Dir(d) => Arc::clone(&d.dir),
                };
                let opened = cx.data_mut().opened.take();
                if let Some((_, m)) = opened.filter(|(was, _)| std::ptr::eq(was.as_ptr(), Arc::as_ptr(&file))) {
                    return Ok((Ok(stat(m)),));
                }
                Ok((Metadata::from_file(&file).map(stat).map_err(error),))
            },
        )?;
        types.func_wrap(
            "[method]descriptor.stat-at",
            |cx: StoreContextMut<'_, State>,
             (fd, flags, path): (Resource<Descriptor>, PathFlags, String)|
             -> Answer<DescriptorStat> {
                let Descriptor::Dir(d) = cx.data().table.get(&fd)? else {
                    return Ok((Err(ErrorCode::NotDirectory),));
                };
                if let Some(p) = &cx.data().progress {
                    p.looked.fetch_add(1, Ordering::Relaxed);
                }
                // cap-primitives resolves `path` beneath the directory, as
                // wasmtime-wasi's own stat-at does.
                Ok((cap_primitives::fs::stat(&d.dir, Path::new(&path), follow(flags)).map(stat).map_err(error),))
            },
        )?;
        // Opening a FIFO blocks until a writer comes, and a hostile workspace
        // can swap one in for a file after the guest checked it: opens do not
        // wait for one, and any open that still blocks (a file system that
        // never answers) is interrupted past its own bound, so no call (an
        // index refresh included, whose deadline is long) waits on it.
        types.func_wrap(
            "[method]descriptor.open-at",
            |mut cx: StoreContextMut<'_, State>,
             (fd, path_flags, path, open_flags, flags): (
                Resource<Descriptor>,
                PathFlags,
                String,
                OpenFlags,
                DescriptorFlags,
            )|
             -> Answer<Resource<Descriptor>> {
                let bound = Duration::from_millis(crate::limits::OPEN_TIMEOUT_MS);
                let _watch = interrupt::watch(Instant::now() + bound);
                cx.data_mut().opened = None;
                let read_only = flags == DescriptorFlags::READ
                    && (open_flags == OpenFlags::empty() || open_flags == OpenFlags::DIRECTORY);
                if !read_only {
                    let mut view = cx.data_mut().filesystem();
                    return answer(HostDescriptor::open_at(&mut view, fd, path_flags, path, open_flags, flags));
                }
                // What wasmtime-wasi's open-at does for a read-only open,
                // with one stat. (Descriptors block in place: this host's
                // contexts all allow it, see `store`.)
                let Descriptor::Dir(d) = cx.data().table.get(&fd)? else {
                    return Ok((Err(ErrorCode::NotDirectory),));
                };
                let (dir, perms) = (Arc::clone(&d.dir), d.perms);
                // A directory the walk descends into: the OS checks the type.
                if open_flags == OpenFlags::DIRECTORY && !path_flags.contains(PathFlags::SYMLINK_FOLLOW) {
                    return Ok((match cap_primitives::fs::open_dir_nofollow(&dir, Path::new(&path)) {
                        Ok(file) => Ok(cx.data_mut().table.push(Descriptor::Dir(Dir::new(
                            file,
                            perms,
                            OpenMode::READ,
                            true,
                        )))?),
                        // A link is refused as wasmtime-wasi refuses it (where
                        // O_PATH makes Linux say "not a directory").
                        Err(e)
                            if e.raw_os_error() == Some(libc::ENOTDIR)
                                && cap_primitives::fs::stat(&dir, Path::new(&path), FollowSymlinks::No)
                                    .is_ok_and(|m| m.file_type().is_symlink()) =>
                        {
                            Err(ErrorCode::Loop)
                        }
                        Err(e) => Err(open_error(e)?),
                    },));
                }
                // Without waiting: a FIFO opens at once this way (and is
                // refused below); a regular file reads the same.
                let mut opts = OpenOptions::new();
                opts.read(true)._cap_fs_ext_follow(follow(path_flags));
                #[cfg(unix)]
                cap_primitives::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NONBLOCK | libc::O_NOCTTY);
                let opened = cap_primitives::fs::open(&dir, Path::new(&path), &opts)
                    .and_then(|file| Ok((Metadata::from_file(&file)?, file)));
                let (meta, file) = match opened {
                    Ok(opened) => opened,
                    Err(e) => return Ok((Err(open_error(e)?),)),
                };
                // Only files and directories are ever read: a FIFO, socket
                // or device put there after the guest looked is refused.
                if !meta.is_dir() && !meta.is_file() {
                    return Ok((Err(ErrorCode::Unsupported),));
                }
                let (descriptor, kept) = if meta.is_dir() {
                    let dir = Dir::new(file, perms, OpenMode::READ, true);
                    let kept = Arc::downgrade(&dir.dir);
                    (Descriptor::Dir(dir), kept)
                } else if open_flags.contains(OpenFlags::DIRECTORY) {
                    return Ok((Err(ErrorCode::NotDirectory),));
                } else {
                    let file = File::new(file, perms, OpenMode::READ, true);
                    let kept = Arc::downgrade(&file.file);
                    (Descriptor::File(file), kept)
                };
                cx.data_mut().opened = Some((kept, meta));
                Ok((Ok(cx.data_mut().table.push(descriptor)?),))
            },
        )?;
        // Listings (elsewhere wasmtime-wasi's own, which stats every entry).
        #[cfg(unix)]
        types.resource("directory-entry-stream", ResourceType::host::<Entries>(), |mut cx, rep| {
            cx.data_mut().table.delete(Resource::<Entries>::new_own(rep))?;
            Ok(())
        })?;
        #[cfg(unix)]
        types.func_wrap(
            "[method]descriptor.read-directory",
            |mut cx: StoreContextMut<'_, State>, (fd,): (Resource<Descriptor>,)| -> Answer<Resource<Entries>> {
                let Descriptor::Dir(d) = cx.data().table.get(&fd)? else {
                    return Ok((Err(ErrorCode::NotDirectory),));
                };
                let entries = match list(&d.dir) {
                    Ok(entries) => entries,
                    Err(e) => return Ok((Err(open_error(e.into())?),)),
                };
                Ok((Ok(cx.data_mut().table.push(Entries(entries.into_iter()))?),))
            },
        )?;
        #[cfg(unix)]
        types.func_wrap(
            "[method]directory-entry-stream.read-directory-entry",
            |mut cx: StoreContextMut<'_, State>, (stream,): (Resource<Entries>,)| -> Answer<Option<DirectoryEntry>> {
                Ok((cx.data_mut().table.get_mut(&stream)?.0.next().transpose(),))
            },
        )?;
        #[cfg(unix)]
        types.func_wrap(
            "[method]descriptor.read",
            |cx: StoreContextMut<'_, State>,
             (fd, len, offset): (Resource<Descriptor>, u64, u64)|
             -> Answer<(Vec<u8>, bool)> {
                let Descriptor::File(f) = cx.data().table.get(&fd)? else {
                    return Ok((Err(ErrorCode::BadDescriptor),));
                };
                // (Read into the buffer's spare room: nothing to zero first.)
                let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(usize::MAX).min(MAX_READ));
                Ok((match rustix::io::pread(&f.file, rustix::buffer::spare_capacity(&mut buf), offset) {
                    Ok(0) => Ok((Vec::new(), true)),
                    Ok(_) => Ok((buf, false)),
                    Err(e) => Err(error(e.into())),
                },))
            },
        )?;
        linker.allow_shadowing(false);
        Ok(())
    }

    /// The entries of the directory open as `dir` (without read access:
    /// `O_PATH` on Linux), through a descriptor of the listing's own, so each
    /// listing starts at the beginning: one `openat` (cap-primitives'
    /// `read_base_dir` makes two and an `fcntl`). Each entry's type is the
    /// listing's; an `lstat` only where the filesystem leaves it out.
    #[cfg(unix)]
    fn list(dir: &std::fs::File) -> rustix::io::Result<Vec<Result<DirectoryEntry, ErrorCode>>> {
        use rustix::fs::{AtFlags, FileType as Type, Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut listing = rustix::fs::Dir::new(rustix::fs::openat(dir, c".", flags, Mode::empty())?)?;
        let mut entries = Vec::new();
        while let Some(entry) = listing.read() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    entries.push(Err(error(e.into())));
                    break;
                }
            };
            let name = entry.file_name();
            if matches!(name.to_bytes(), b"." | b"..") {
                continue;
            }
            let type_ = match entry.file_type() {
                Type::Unknown => rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|st| Type::from_raw_mode(st.st_mode))
                    .map_err(|e| error(e.into())),
                t => Ok(t),
            };
            entries.push(type_.and_then(|t| {
                let name = name.to_str().map_err(|_| ErrorCode::IllegalByteSequence)?;
                Ok(DirectoryEntry { type_: listed_type(t), name: name.to_string() })
            }));
        }
        Ok(entries)
    }

    #[cfg(unix)]
    fn listed_type(t: rustix::fs::FileType) -> DescriptorType {
        use rustix::fs::FileType as Type;
        match t {
            Type::RegularFile => DescriptorType::RegularFile,
            Type::Directory => DescriptorType::Directory,
            Type::Symlink => DescriptorType::SymbolicLink,
            Type::Fifo => DescriptorType::Fifo,
            Type::Socket => DescriptorType::Socket,
            Type::BlockDevice => DescriptorType::BlockDevice,
            Type::CharacterDevice => DescriptorType::CharacterDevice,
            Type::Unknown => DescriptorType::Unknown,
        }
    }

    fn follow(flags: PathFlags) -> FollowSymlinks {
        if flags.contains(PathFlags::SYMLINK_FOLLOW) {
            FollowSymlinks::Yes
        } else {
            FollowSymlinks::No
        }
    }

    fn answer<T>(r: FsResult<T>) -> Answer<T> {
        match r {
            Ok(v) => Ok((Ok(v),)),
            Err(e) => Ok((Err(e.downcast()?.into()),)),
        }
    }

    /// An open's (or a listing's) error for the guest; out of descriptors,
    /// the call fails (the guest would count files as unreadable and answer
    /// without them).
    fn open_error(e: std::io::Error) -> wasmtime::Result<ErrorCode> {
        match e.raw_os_error() {
            Some(libc::EMFILE | libc::ENFILE) => {
                Err(wasmtime::Error::msg("the host ran out of file descriptors (see `ulimit -n`)"))
            }
            _ => Ok(error(e)),
        }
    }

    fn error(e: std::io::Error) -> ErrorCode {
        wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode::from(e).into()
    }

    fn descriptor_type(t: FileType) -> DescriptorType {
        use cap_primitives::fs::FileTypeExt;
        if t.is_file() {
            DescriptorType::RegularFile
        } else if t.is_dir() {
            DescriptorType::Directory
        } else if t.is_symlink() {
            DescriptorType::SymbolicLink
        } else if t.is_fifo() {
            DescriptorType::Fifo
        } else if t.is_socket() {
            DescriptorType::Socket
        } else if t.is_block_device() {
            DescriptorType::BlockDevice
        } else if t.is_char_device() {
            DescriptorType::CharacterDevice
        } else {
            DescriptorType::Unknown
        }
    }

    fn stat(m: Metadata) -> DescriptorStat {
        let time = |t: std::io::Result<SystemTime>| t.ok().and_then(datetime);
        let ctime = u64::try_from(m.ctime()).ok().zip(u32::try_from(m.ctime_nsec()).ok());
        DescriptorStat {
            type_: descriptor_type(m.file_type()),
            link_count: m.nlink(),
            size: m.len(),
            data_access_timestamp: time(m.accessed().map(|t| t.into_std())),
            data_modification_timestamp: time(m.modified().map(|t| t.into_std())),
            status_change_timestamp: ctime.map(|(seconds, nanoseconds)| Datetime { seconds, nanoseconds }),
        }
    }

    fn datetime(t: SystemTime) -> Option<Datetime> {
        let d = t.duration_since(SystemTime::UNIX_EPOCH).ok()?;
        Some(Datetime { seconds: d.as_secs(), nanoseconds: d.subsec_nanos() })
    }
}

/// The component's machine code comes from this binary, never from a file:
/// a file of compiled code is run as it is, so one that a workspace, a
/// request or another user could write (a cache under a workspace, a
/// predictable name in a shared directory) would run outside the sandbox.
/// `build.rs` compiled [`WASM`] into the binary; when that code does not
/// fit this engine (a binary built on a machine with other CPU features),
/// the component is compiled here, in memory, for this process (seconds;
/// said on a terminal).
fn load_component(config: &mut wasmtime::Config, wasm: &[u8], embedded: bool) -> wasmtime::Result<(Engine, Component)> {
    let code: &'static [u8] = &PRECOMPILED.0;
    if embedded && !code.is_empty() {
        // SAFETY: sysconf takes no memory.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(usize::MAX);
        // SAFETY (both deserializations): `code` is part of this executable
        // (read-only, as trusted as the host's own code): `build.rs` compiled
        // it from `WASM` with this engine's configuration. wasmtime still
        // checks that it was made for this engine and CPU, and refuses it
        // otherwise.
        if cfg!(target_os = "linux") && (code.as_ptr() as usize) % page == 0 {
            // In place: it is already executable and never written.
            let range = code.as_ptr_range();
            config.with_custom_code_memory(Some(Arc::new(InPlace(range.start as usize..range.end as usize))));
            let engine = Engine::new(config)?;
            if let Ok(component) = unsafe { Component::deserialize_raw(&engine, std::ptr::NonNull::from(code)) } {
                return Ok((engine, component));
            }
            // (Code compiled here lies elsewhere: that engine would refuse it.)
            config.with_custom_code_memory(None);
        } else {
            let engine = Engine::new(config)?;
            if let Ok(component) = unsafe { Component::deserialize(&engine, code) } {
                return Ok((engine, component));
            }
        }
    }
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("sandgrep: compiling the search component for this machine (a few seconds, once per process)");
    }
    let engine = Engine::new(config)?;
    let component = Component::new(&engine, wasm)?;
    Ok((engine, component))
}

/// Code memory that is part of this binary's executable code: published as
/// it is. Anything else wasmtime would make executable is refused, so an
/// engine with it runs [`PRECOMPILED`] alone.
struct InPlace(std::ops::Range<usize>);

impl wasmtime::CustomCodeMemory for InPlace {
    fn required_alignment(&self) -> usize {
        1
    }

    fn publish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        let start = ptr as usize;
        if self.0.start <= start && start.saturating_add(len) <= self.0.end {
            Ok(())
        } else {
            Err(wasmtime::format_err!("code outside the binary's own"))
        }
    }

    fn unpublish_executable(&self, _ptr: *const u8, _len: usize) -> wasmtime::Result<()> {
        Ok(())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod in_place_tests {
    /// The embedded component runs where it lies in the binary: its image
    /// is the binary's own bytes, not a copy of them.
    #[test]
    fn the_embedded_code_runs_where_it_lies() {
        let (_, component) = super::load_component(&mut crate::engine_config::config(), super::WASM, true).unwrap();
        assert_eq!(component.image_range(), super::PRECOMPILED.0.as_ptr_range());
    }
}

/// The user's cache directory for sandgrep (the index lives there):
/// `$SANDGREP_CACHE_DIR`, else `$XDG_CACHE_HOME/sandgrep`, else
/// `~/.cache/sandgrep`.
pub(crate) fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("SANDGREP_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("sandgrep")))
        .or_else(|| std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/sandgrep")))
}

/// [`cache_dir`] as it really is: its longest existing ancestor resolved
/// (links and all), the rest as named.
pub(crate) fn real_cache_dir() -> Option<PathBuf> {
    let cache = cache_dir()?;
    cache
        .ancestors()
        .find_map(|a| std::fs::canonicalize(a).ok().map(|r| r.join(cache.strip_prefix(a).unwrap_or(Path::new("")))))
}

/// The epoch deadline stops wasm code, not a host call: a guest blocked in
/// `open` on a FIFO (which WASI cannot open without blocking, and which a
/// hostile workspace can swap in between the guest's check and its open)
/// would hold its thread forever. Past a call's timeout, its thread is sent
/// a signal whose handler does nothing and does not restart system calls, so
/// the blocked call returns `EINTR`; the guest sees an error on that file
/// and returns what it found. The handler is installed only where the
/// signal (`SIGURG`, ignored by default) has no handler of the embedder's.
#[cfg(unix)]
mod interrupt {
    use std::marker::PhantomData;
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::Instant;

    /// A thread's deadline: each thread has its own, so watching (twice per
    /// `open`) takes a lock no other thread takes but the ticker.
    struct Slot {
        thread: libc::pthread_t,
        at: Mutex<Option<Instant>>,
    }

    /// Every thread's slot, from its first watch to its end.
    static SLOTS: Mutex<Vec<Arc<Slot>>> = Mutex::new(Vec::new());

    /// The current thread's slot, listed while the thread lives.
    struct Mine(Arc<Slot>);

    impl Drop for Mine {
        fn drop(&mut self) {
            SLOTS.lock().unwrap_or_else(|e| e.into_inner()).retain(|s| !Arc::ptr_eq(s, &self.0));
        }
    }

    thread_local! {
        static MINE: Mine = {
            // SAFETY: pthread_self has no preconditions.
            let slot = Arc::new(Slot { thread: unsafe { libc::pthread_self() }, at: Mutex::new(None) });
            SLOTS.lock().unwrap_or_else(|e| e.into_inner()).push(slot.clone());
            Mine(slot)
        };
    }

    extern "C" fn nothing(_: libc::c_int) {}

    /// Installs the handler once; `false` if the embedder handles the signal.
    fn installed() -> bool {
        static INSTALLED: OnceLock<bool> = OnceLock::new();
        *INSTALLED.get_or_init(|| unsafe {
            // SAFETY: plain sigaction calls on a zeroed struct; the handler
            // is async-signal-safe (it does nothing).
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGURG, std::ptr::null(), &mut old) != 0 || old.sa_sigaction != libc::SIG_DFL {
                return false;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = nothing as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = 0; // no SA_RESTART: a blocked call returns EINTR
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGURG, &action, std::ptr::null_mut()) == 0
        })
    }

    /// While the guard lives, the current thread is interrupted from `at` on
    /// (or from an earlier time an enclosing guard set). Guards end in the
    /// reverse order they began, on the thread that made them.
    pub struct Guard {
        before: Option<Instant>,
        _thread: PhantomData<*const ()>,
    }

    pub fn watch(at: Instant) -> Option<Guard> {
        if !installed() {
            return None;
        }
        MINE.try_with(|mine| {
            let mut slot = mine.0.at.lock().unwrap_or_else(|e| e.into_inner());
            let before = *slot;
            *slot = Some(before.map_or(at, |b| b.min(at)));
            Guard { before, _thread: PhantomData }
        })
        .ok()
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            let _ = MINE.try_with(|mine| *mine.0.at.lock().unwrap_or_else(|e| e.into_inner()) = self.before);
        }
    }

    /// Signals every watched thread that is past its time.
    pub fn tick() {
        let now = Instant::now();
        for slot in SLOTS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let at = slot.at.lock().unwrap_or_else(|e| e.into_inner());
            if at.is_some_and(|at| now >= at) {
                // SAFETY: the thread is alive: it takes its slot out of
                // `SLOTS` (under that lock) before it ends; and it is still
                // watched: it ends its guard under the slot's lock.
                unsafe { libc::pthread_kill(slot.thread, libc::SIGURG) };
            }
        }
    }
}

#[cfg(not(unix))]
mod interrupt {
    pub fn watch(_: std::time::Instant) -> Option<()> {
        None
    }

    pub fn tick() {}
}
