//! stdin searched as rg searches it, and a closed pipe on stdout.
//!
//! With no PATH, no `--root`, and stdin a pipe, a file or a socket (rg's
//! `is_readable_stdin`), or with `-` among the paths, the search reads
//! stdin. Its bytes go to the component (`search-bytes`), never a path, in
//! pieces of whole lines as they arrive; each piece's results are printed
//! and flushed at once, so `tail -f app.log | sandgrep ERROR` shows each
//! line as it comes. Each piece goes with the lines before it (64 KiB,
//! and the context's lines): redaction reads back that far, and context
//! and its `--` separators come out as rg's across pieces.
//!
//! Memory is bounded whatever stdin holds: a piece is 256 KiB of new lines
//! or fewer, the lines sent again with it 32 MiB or fewer, and a line
//! longer than 32 MiB (the longest the component searches in a file) is
//! searched in its first 32 MiB, the rest dropped and said; a multi-line
//! search (`-U`) reads stdin whole, up to 32 MiB. (About 100 MiB of the
//! host's memory in the worst case, lines of 32 MiB; a few hundred KiB for
//! lines as logs have them; and the reads stdin's reader has made ahead of
//! the search: two, of rg's buffer each, more in a line longer than it.)
//!
//! When stdout is a pipe whose reader goes away (`| head`), the run ends at
//! once (a watcher sees it even while the component is busy), with rg's
//! exit status.

use std::collections::BTreeSet;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};

use sandgrep::limits::{HEAP_LIMIT, MAX_RESULTS, TIMEOUT_MS};
use sandgrep::{ByteChunk, FileCount, OutputMode, Sandbox, SearchStats, SearchTextRequest, SearchTextResponse};

use super::flags::SearchArgs;
use super::search::{Results, Run};

/// stdin among the paths, and the name its results carry.
pub(crate) const NAME: &str = "-";
/// How rg names stdin where it names it.
pub(crate) const SHOWN: &str = "<stdin>";

/// New bytes of one piece, or fewer (a faster writer's lines wait for the
/// next; measured: counting with redaction slows down in larger pieces).
const PIECE: usize = 256 << 10;
/// The lines before a piece sent again with it: what redaction reads back.
const LOOKBACK: usize = 64 << 10;
/// The longest line searched, and the most of the lines before a piece
/// sent again (the component's bound for a line of a file).
const LINE_MAX: usize = HEAP_LIMIT;
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Whether stdin is for searching, as rg decides (`grep_cli::is_readable_stdin`):
/// not a terminal, and a regular file, a FIFO or a socket (not /dev/null,
/// nor a closed descriptor).
pub(crate) fn readable() -> bool {
    use std::io::IsTerminal;
    if io::stdin().is_terminal() {
        return false;
    }
    // (fstat on the descriptor itself: no path, nothing opened.)
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat fills the local struct; a closed descriptor fails.
    if unsafe { libc::fstat(0, &mut st) } != 0 {
        return false;
    }
    matches!(st.st_mode & libc::S_IFMT, libc::S_IFREG | libc::S_IFIFO | libc::S_IFSOCK)
}

/// Settles which paths a search reads: stdin when no PATH is given, the
/// workspace was not named (`--root`: an agent's harness may leave a pipe
/// open on stdin), and stdin is readable; `-` is stdin wherever given.
/// (`given` names what is printed: `<stdin>` for `-`.)
pub(crate) fn choose(args: &mut SearchArgs, root_given: bool) {
    let stdin_used = args.pattern_files.iter().any(|f| f.as_os_str() == NAME);
    if args.paths.is_empty()
        && !root_given
        && !args.files
        && !args.type_list
        && !args.pcre2_version
        && !stdin_used
        && readable()
    {
        args.paths = vec![NAME.to_string()];
    }
    args.given = args.paths.iter().map(|p| if p == NAME { SHOWN.to_string() } else { p.clone() }).collect();
    if args.paths == [NAME] {
        // (Read from now on, as rg reads it from its start: see `Fed`.)
        let (before, after) = args.contexts();
        let context = (before > 0 || after > 0).then_some(before as usize);
        let reader = start_reading(context, !(args.text || args.null_data));
        *FEED.lock().unwrap_or_else(|e| e.into_inner()) = Some(reader);
    }
}

/// What stdin's reader hands over: a read's bytes, as read, with where the
/// fill of rg's buffer that read the first NUL byte starts when this read
/// brought it (see [`RgBuffer`]); the end; an error.
enum Fed {
    Read(Vec<u8>, Option<u64>),
    End,
    Failed(io::Error),
}

/// stdin's reader, started as soon as the run knows it searches stdin
/// alone, before the component is loaded: rg reads its first bytes at
/// once, and a reader that waited would take in one read what rg reads in
/// several (and so see a NUL in another of rg's buffers).
static FEED: Mutex<Option<mpsc::Receiver<Fed>>> = Mutex::new(None);

/// Starts a thread that reads stdin as rg reads it (`context`: rg's
/// before-context when any context was asked for; `convert`: NUL bytes are
/// line breaks) and hands over each read, at most two ahead of the search.
fn start_reading(context: Option<usize>, convert: bool) -> mpsc::Receiver<Fed> {
    let (tx, rx) = mpsc::sync_channel(2);
    let said = tx.clone();
    let mut rg = RgBuffer::new();
    rg.context = context;
    let spawned = std::thread::Builder::new().name("stdin".into()).spawn(move || read_as_rg(&tx, rg, convert));
    if let Err(e) = spawned {
        let _ = said.try_send(Fed::Failed(e));
    }
    rx
}

fn read_as_rg(tx: &mpsc::SyncSender<Fed>, mut rg: RgBuffer, convert: bool) {
    let stdin = io::stdin();
    let mut binary_from = None;
    loop {
        let sniffed = rg.sniffed;
        let mut buf = vec![0u8; if sniffed { rg.room() } else { BOM.len() }];
        let read = match sniffed {
            true => stdin.lock().read(&mut buf),
            false => read_full(&mut stdin.lock(), &mut buf),
        };
        let n = match read {
            Ok(0) => {
                let _ = tx.send(Fed::End);
                return;
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Fed::Failed(e));
                return;
            }
        };
        buf.truncate(n);
        buf.shrink_to_fit();
        let nul = buf.contains(&0);
        let mut found = None;
        if nul && binary_from.is_none() {
            binary_from = Some(rg.searched_to);
            found = binary_from;
        }
        rg.sniffed = true;
        // (rg's buffer holds no byte order mark, and its offsets, as the
        // search's, count from after it; its NUL bytes are line breaks.)
        if sniffed || buf != BOM {
            match convert && nul {
                true => rg.add(&buf.iter().map(|&b| if b == 0 { b'\n' } else { b }).collect::<Vec<u8>>()),
                false => rg.add(&buf),
            }
        }
        if tx.send(Fed::Read(buf, found)).is_err() {
            return;
        }
    }
}

/// Whether the search reads stdin.
pub(crate) fn searched(args: &SearchArgs) -> bool {
    args.paths.iter().any(|p| p == NAME)
}

/// stdin read as it comes: pieces of whole lines.
struct Input {
    /// Its reads (see [`Fed`]).
    feed: mpsc::Receiver<Fed>,
    /// Read, not yet handed out (at most a line's start past the last
    /// line break, and what a fast writer sent past `PIECE`).
    pending: Vec<u8>,
    /// Where `pending` starts in the stream (after a byte order mark).
    offset: u64,
    eof: bool,
    /// Where the first NUL byte is (rg calls such a stream binary).
    nul: Option<u64>,
    /// The rest of a line cut at `LINE_MAX` is being dropped.
    dropping: bool,
    /// Lines cut at `LINE_MAX`: their numbers.
    cut: Vec<u64>,
    /// A byte order mark is looked for at the start (rg drops a UTF-8 one).
    bom_checked: bool,
    /// NUL bytes become line breaks (not in a multi-line search, as rg).
    convert: bool,
    /// Where the buffer fill that read the first NUL byte starts: rg
    /// searched (and printed) the lines before it, and stops printing at
    /// its first line to print from there on (the stream is binary).
    binary_from: Option<u64>,
}

/// ripgrep's line buffer on stdin (grep-searcher's `LineBuffer` and
/// `ReadByLine`), followed so that the stream is read as rg reads it: its
/// first read is its byte order mark sniffer's, 3 bytes (encoding_rs_io's
/// `BomPeeker`); then each read asks for the room the buffer has left
/// (64 KiB, less what it keeps of the last fill: the line it had not
/// finished, and with context the last lines, which rg keeps unless it
/// printed them; its room tripled when a line fills it), and a fill ends
/// with the read that brings a line break. Both read through Rust's
/// `Stdin` (its 8 KiB buffer: the first fill is 8 KiB of a file). rg looks
/// for a NUL byte in each fill before it searches it: the fill's lines
/// then print nothing. So which lines rg printed before a NUL depends on
/// its reads, and sandgrep's are the same for the same pipe or file.
struct RgBuffer {
    /// The first 3 bytes were read (and a byte order mark dropped).
    sniffed: bool,
    capacity: usize,
    /// Bytes in the buffer: kept from the last fill, and read since.
    held: usize,
    /// Bytes read from the stream.
    read: u64,
    /// Where the last fill's searched lines end (after its last line break).
    searched_to: u64,
    /// Lines of before-context (`Some`: context was asked for at all).
    context: Option<usize>,
    /// Where the last lines read end (enough for the context).
    ends: std::collections::VecDeque<u64>,
}

impl RgBuffer {
    /// rg's `DEFAULT_BUFFER_CAPACITY`.
    const CAPACITY: usize = 64 << 10;

    fn new() -> RgBuffer {
        RgBuffer {
            sniffed: false,
            capacity: RgBuffer::CAPACITY,
            held: 0,
            read: 0,
            searched_to: 0,
            context: None,
            ends: Default::default(),
        }
    }

    /// The most one read asks for: a line that long fills one of rg's
    /// buffers however it is read.
    const READ_MOST: usize = 4 << 20;

    /// What the next read asks for (rg's `ensure_capacity` then
    /// `free_buffer`, up to `READ_MOST`).
    fn room(&mut self) -> usize {
        if self.held >= self.capacity {
            self.capacity = self.capacity.saturating_mul(3);
        }
        (self.capacity - self.held).clamp(1, RgBuffer::READ_MOST)
    }

    /// `new` bytes were read (NUL bytes already turned to line breaks, as
    /// rg turns them); when they end a fill, the buffer is rolled as rg's
    /// searcher rolls it.
    fn add(&mut self, new: &[u8]) {
        let at = self.read;
        let start = at - self.held as u64;
        self.read += new.len() as u64;
        self.held += new.len();
        let Some(last) = new.iter().rposition(|&b| b == b'\n') else { return };
        let keep = self.context.map_or(0, |n| n + 1);
        for (i, _) in new.iter().enumerate().filter(|(_, &b)| b == b'\n') {
            if keep > 0 {
                if self.ends.len() > keep {
                    self.ends.pop_front();
                }
                self.ends.push_back(at + i as u64 + 1);
            }
        }
        self.searched_to = at + last as u64 + 1;
        // (rg's `roll`: the lines of context before the end kept — the
        // last line and `before` more — else nothing but the unfinished line.)
        let from = match self.context {
            None => self.searched_to,
            Some(_) => match self.ends.len() > keep {
                true => self.ends[self.ends.len() - 1 - keep].max(start),
                false => start,
            },
        };
        self.held = (self.read - from) as usize;
    }
}

/// Bytes of the stream: whole lines (the last one may end without a line
/// break: the stream's end, or a line cut).
struct Piece {
    bytes: Vec<u8>,
    offset: u64,
}

impl Input {
    fn new(feed: mpsc::Receiver<Fed>) -> Input {
        Input {
            feed,
            pending: Vec::new(),
            offset: 0,
            eof: false,
            nul: None,
            dropping: false,
            cut: Vec::new(),
            bom_checked: false,
            convert: true,
            binary_from: None,
        }
    }

    /// The next piece, `None` at the end. `line` is the number of the
    /// piece's first line (for saying which line was cut).
    fn next(&mut self, line: u64) -> io::Result<Option<Piece>> {
        loop {
            if let Some(piece) = self.take(line) {
                return Ok(Some(piece));
            }
            if self.eof {
                if self.pending.is_empty() {
                    return Ok(None);
                }
                let bytes = std::mem::take(&mut self.pending);
                let piece = Piece { offset: self.offset, bytes };
                self.offset += piece.bytes.len() as u64;
                return Ok(Some(piece));
            }
            self.fill()?;
        }
    }

    /// Takes what stdin's reader read: waits for some, then takes whatever
    /// more it has read, up to a piece.
    fn fill(&mut self) -> io::Result<()> {
        let mut first = true;
        loop {
            let fed = match first {
                true => self.feed.recv().unwrap_or(Fed::End),
                false if self.pending.len() < PIECE => match self.feed.try_recv() {
                    Ok(fed) => fed,
                    Err(_) => break,
                },
                false => break,
            };
            first = false;
            let (bytes, binary_from) = match fed {
                Fed::Read(bytes, binary_from) => (bytes, binary_from),
                Fed::End => {
                    self.eof = true;
                    break;
                }
                Fed::Failed(e) => return Err(io::Error::new(e.kind(), format!("{SHOWN}: {e}"))),
            };
            let start = self.pending.len();
            self.pending.extend_from_slice(&bytes);
            // As rg reads stdin: a NUL is a line break (and the stream binary).
            for (i, b) in self.pending[start..].iter_mut().enumerate().filter(|(_, b)| **b == 0) {
                self.nul.get_or_insert(self.offset + (start + i) as u64);
                if self.convert {
                    *b = b'\n';
                }
            }
            if self.binary_from.is_none() {
                self.binary_from = binary_from;
            }
        }
        Ok(())
    }

    /// The whole lines read, or a line past `LINE_MAX` cut there.
    fn take(&mut self, line: u64) -> Option<Piece> {
        if !self.bom_checked {
            if self.pending.len() < BOM.len() && BOM.starts_with(&self.pending) && !self.eof {
                return None;
            }
            self.bom_checked = true;
            if self.pending.starts_with(BOM) {
                // (rg's offsets count from after it.)
                self.pending.drain(..BOM.len());
            }
        }
        if self.dropping {
            self.take_dropped();
        }
        // (No piece holds lines from both sides of where the binary fill
        // starts: the lines before it print, those after it do not.)
        let mut most = self.pending.len().min(PIECE);
        if let Some(b) = self.binary_from.filter(|&b| b > self.offset) {
            most = most.min((b - self.offset) as usize);
        }
        let end = match self.pending[..most].iter().rposition(|&b| b == b'\n') {
            Some(i) => i + 1,
            None => match newline(&self.pending) {
                Some(i) if i < LINE_MAX => i + 1,
                _ if self.pending.len() >= LINE_MAX => {
                    self.dropping = true;
                    self.cut.push(line);
                    LINE_MAX
                }
                _ => return None,
            },
        };
        let rest = self.pending.split_off(end);
        let bytes = std::mem::replace(&mut self.pending, rest);
        let piece = Piece { offset: self.offset, bytes };
        self.offset += end as u64;
        // (What a cut line had past LINE_MAX is dropped up to its end.)
        if self.dropping {
            self.take_dropped();
        }
        Some(piece)
    }

    fn take_dropped(&mut self) {
        let end = newline(&self.pending).map(|i| i + 1);
        self.dropping = end.is_none();
        let n = end.unwrap_or(self.pending.len());
        self.pending.drain(..n);
        self.offset += n as u64;
    }
}

/// Reads until `buf` is full or the end: how much was read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// Lines of `bytes` (a last one without a line break counts).
fn lines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64 + u64::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// The lines before the next piece kept to send again with it.
#[derive(Default)]
struct Before {
    bytes: Vec<u8>,
    /// The number of its first line.
    first: u64,
    lines: u64,
}

impl Before {
    /// Adds `piece` and keeps what the next piece needs: the lines within
    /// `LOOKBACK` bytes of the end, and at least `keep` lines; never more
    /// than `LINE_MAX` bytes (but the last line).
    fn add(&mut self, piece: &[u8], keep: u64) {
        self.bytes.extend_from_slice(piece);
        if self.bytes.last().is_some_and(|&b| b != b'\n') {
            // (A cut line ends here.)
            self.bytes.push(b'\n');
        }
        self.lines += lines(piece);
        let len = self.bytes.len();
        let (mut from, mut count) = (len, 0);
        let body = &self.bytes[..len - 1];
        let starts = body.iter().enumerate().rev().filter(|(_, &b)| b == b'\n').map(|(i, _)| i + 1).chain([0]);
        for start in starts {
            if count >= keep && len - from >= LOOKBACK || count > 0 && len - start > LINE_MAX {
                break;
            }
            (from, count) = (start, count + 1);
        }
        let dropped = lines(&self.bytes[..from]);
        self.bytes.drain(..from);
        self.first += dropped;
        self.lines -= dropped;
    }
}

/// Prints stdin's results as its pieces come (`stream`'s part for `-`).
pub(crate) fn stream(
    sandbox: &Sandbox,
    request: &mut SearchTextRequest,
    args: &SearchArgs,
    printer: &mut impl Results,
    run: &mut Run,
) -> io::Result<(bool, Option<String>, SearchStats)> {
    SEARCHING.store(true, Ordering::Relaxed);
    let mut request = request.clone();
    request.paths = Vec::new();
    (request.cursor, request.skip) = (None, None);
    if request.timeout_ms.is_none() {
        // (Each piece has the time: a stream has no end to wait for.)
        request.timeout_ms = Some(TIMEOUT_MS.max as u32);
    }
    let counting = args.count || args.count_matches;
    let without_match = args.files_without_match && !counting;
    if without_match {
        request.output = Some(OutputMode::FilesWithMatches);
    }
    let output = request.output.unwrap_or(OutputMode::Content);
    let content = output == OutputMode::Content;
    if args.stats && !content {
        return counted(sandbox, &request, args, printer, run, output, without_match);
    }
    let (before, after) = (request.context_before.unwrap_or(0), request.context_after.unwrap_or(0));
    // (--passthru: past the cap the stream goes on, its matches context;
    // the component counts the cap from `taken`.)
    let cap = request.max_matches_per_file.map(u64::from).filter(|_| !request.passthru);
    // (-a: NUL bytes are text; --null-data: they end its lines.)
    let text = request.binary == Some(sandgrep::BinaryMode::Text) || request.null_data;
    let started = FEED.lock().unwrap_or_else(|e| e.into_inner()).take();
    let context = (before > 0 || after > 0).then_some(before as usize);
    let mut input = Input::new(started.unwrap_or_else(|| start_reading(context, !text)));
    input.convert = !text;
    let mut kept = Before { first: 1, ..Before::default() };
    let (mut taken, mut count, mut found) = (0u64, 0u64, false);
    let mut stats = sandgrep_stats();
    let mut counted = Counted::default();
    let t = printer.totals();
    t.files_searched += 1;
    // The end of the last result and where its after-context ends; the
    // last line printed.
    let (mut owed_to, mut shown_to) = (0u64, 0u64);
    let mut binary_said = false;
    // A match may span any lines (-U), lines end at NUL bytes
    // (--null-data), or the search ends at a line that does not match
    // (--stop-on-nonmatch, which no piece knows of the pieces before it):
    // the stream is searched whole, up to the bound of a file's.
    let whole = request.multiline || request.null_data || request.stop_on_nonmatch;
    if whole {
        // (rg reads a multi-line search's stream whole too.)
        let mut all = Vec::new();
        input.convert = !(request.multiline || request.null_data);
        while !input.eof && all.len() <= LINE_MAX {
            input.fill()?;
            // (So that a NUL the next read holds is placed in the whole.)
            input.offset += input.pending.len() as u64;
            all.append(&mut input.pending);
        }
        if all.starts_with(BOM) {
            all.drain(..BOM.len());
        }
        if all.len() > LINE_MAX {
            all.truncate(LINE_MAX);
            run.errored = true;
            run.warnings.push(format!(
                "{SHOWN}: only its first {LINE_MAX} bytes were searched (a search of it whole holds at most that)"
            ));
        }
        input.pending = all;
        input.eof = true;
        input.bom_checked = true;
    }
    loop {
        let line = kept.first + kept.lines;
        let Some(piece) = (if whole {
            (!input.pending.is_empty()).then(|| Piece { bytes: std::mem::take(&mut input.pending), offset: 0 })
        } else {
            input.next(line)?
        }) else {
            break;
        };
        // (rg looks for a NUL in each buffer it fills, and reads a
        // multi-line search's stream whole: its one buffer.)
        let binary_from = if whole { input.nul } else { input.binary_from };
        let binary = !text && binary_from.is_some_and(|at| at < piece.offset + piece.bytes.len() as u64);
        printer.totals().bytes_searched += piece.bytes.len() as u64;
        let mut data = kept.bytes.clone();
        data.extend_from_slice(&piece.bytes);
        let mut chunk = ByteChunk {
            name: NAME.to_string(),
            data,
            first_line: kept.first,
            offset: piece.offset - kept.bytes.len() as u64,
            seen_lines: kept.lines,
            taken,
        };
        let last_line = line + lines(&piece.bytes) - 1;
        if binary && content && printer.stops_at_binary() {
            // rg's standard printer prints nothing past the NUL: at the
            // first line it would print (a result, or context still owed),
            // it says the stream is binary and stops.
            let mut probe = request.clone();
            // (Its first match: with --passthru too, whose lines are no results.)
            (probe.context_before, probe.context_after, probe.max_results) = (Some(0), Some(0), Some(1));
            probe.passthru = false;
            let r = sandbox.search_bytes(&probe, &chunk).map_err(io::Error::other)?;
            run.searching += r.stats.elapsed_ms;
            let first = r.matches.first().map(|m| m.line);
            if owed_to >= line || first.is_some() {
                // rg's printer stops at the first line it is handed past
                // the NUL (context still owed, a match's first line of
                // before-context, or the match), counting it when it is
                // the match; its notice needs a match counted. When that
                // line is not next to the last it printed, its `--` comes
                // first.
                let next = match first {
                    Some(m) if owed_to < line => m.saturating_sub(before as u64).max(shown_to + 1),
                    _ => line,
                };
                let hit = r.matches.first().filter(|_| first == Some(next) && owed_to < line);
                found |= hit.is_some();
                if found {
                    run.found = true;
                    let separated = shown_to > 0 && next > shown_to + 1;
                    let notice = sandgrep::BinaryNotice {
                        path: NAME.to_string(),
                        offset: input.nul.unwrap_or(0),
                        stopped: false,
                        separated,
                        hit_lines: hit.map_or(0, |m| (m.end_line.max(m.line) - m.line + 1) as u32),
                        hit_matches: hit.map_or(0, |m| {
                            if request.invert_match {
                                0
                            } else {
                                m.submatches.len().max(1) as u32
                            }
                        }),
                    };
                    printer.binary_notice(&notice)?;
                }
                printer.flush(true)?;
                binary_said = true;
                break;
            }
            kept.add(&piece.bytes, before.max(after) as u64);
            continue;
        }
        loop {
            request.max_results = Some(run.left.min(MAX_RESULTS.max).max(1) as u32);
            let r = sandbox.search_bytes(&request, &chunk).map_err(io::Error::other)?;
            run.searching += r.stats.elapsed_ms;
            let seen_to = chunk.first_line + chunk.seen_lines;
            let mut last_result = None;
            for m in &r.matches {
                if m.line < seen_to {
                    // Shown again for its after-context: counted once.
                    let t = printer.totals();
                    let (matches, matched_lines) = (t.matches, t.matched_lines);
                    printer.text_match(m)?;
                    let t = printer.totals();
                    (t.matches, t.matched_lines) = (matches, matched_lines);
                } else {
                    printer.text_match(m)?;
                    // (A match that takes its last line's terminator ends
                    // at the next line's start.)
                    let end_line = m.end_line - u64::from(m.end_column == 1 && m.end_line > m.line);
                    last_result = Some(end_line);
                    owed_to = end_line + after as u64;
                }
                shown_to = shown_to.max(m.end_line.max(m.line) + m.context_after.len() as u64);
            }
            let mut shown = sandgrep_stats();
            counted.add(&r, kept.first, &mut shown);
            run.withheld.add(&shown);
            // (--passthru: the lines of context, column 0, are no results.)
            taken += match request.passthru {
                true => r.matches.iter().filter(|m| m.column != 0 && m.line >= seen_to).count() as u64,
                false => r.stats.matches_returned,
            };
            if content {
                run.left = run.left.saturating_sub(r.stats.matches_returned);
            }
            if let Some(f) = r.files.first() {
                count += f.count;
            }
            found |= r.stats.files_matched > 0;
            stats.files_matched = u64::from(found);
            stats.matches_returned += r.stats.matches_returned;
            for w in r.warnings {
                if !run.warnings.contains(&w) {
                    run.warnings.push(w);
                }
            }
            if r.timed_out {
                printer.flush(true)?;
                return Ok((true, None, stats));
            }
            // A page's worth: again past its last result.
            let capped = cap.is_some_and(|c| taken >= c);
            match last_result {
                Some(end) if r.truncated && !capped && run.left > 0 => {
                    chunk.seen_lines = end + 1 - chunk.first_line;
                    chunk.taken = taken;
                }
                _ => break,
            }
        }
        printer.flush(true)?;
        run.found |= found && !without_match;
        if found && output == OutputMode::FilesWithMatches {
            // -l and -q: the first match answers.
            break;
        }
        let capped = cap.is_some_and(|c| taken >= c) || content && run.left == 0;
        if capped && owed_to <= last_line {
            break;
        }
        kept.add(&piece.bytes, before.max(after) as u64);
    }
    for line in &input.cut {
        let w =
            format!("{SHOWN}: line {line} is longer than {LINE_MAX} bytes: only its first {LINE_MAX} were searched");
        run.warnings.push(w);
    }
    if let Some(offset) = input.nul.filter(|_| content && !text && !binary_said) {
        if !printer.stops_at_binary() {
            // (rg's JSON says where the NUL was, in the stream's `end`.)
            let notice = sandgrep::BinaryNotice {
                path: NAME.to_string(),
                offset,
                stopped: false,
                separated: false,
                hit_lines: 0,
                hit_matches: 0,
            };
            printer.binary_notice(&notice)?;
        } else if found {
            printer.binary_matches(NAME, offset)?;
        }
    }
    match output {
        OutputMode::Count if count > 0 || args.include_zero => {
            printer.file_count(&FileCount { path: NAME.into(), count }, true)?;
        }
        OutputMode::FilesWithMatches if found != without_match => {
            printer.file_count(&FileCount { path: NAME.into(), count }, false)?;
            run.found = true;
        }
        _ => {}
    }
    printer.flush(true)?;
    stats.files_scanned = 1;
    Ok((false, None, stats))
}

/// `--stats` with `-c`, `-l` or `--files-without-match`: rg's figures
/// count every match and line, which the second, counting search of files
/// (`search::counted`) cannot do here (the stream is read once). This
/// search counts them itself: its results printed nowhere, its count
/// printed, its figures added to the second search's (`Run::stdin`).
fn counted(
    sandbox: &Sandbox,
    request: &SearchTextRequest,
    args: &SearchArgs,
    printer: &mut impl Results,
    run: &mut Run,
    output: OutputMode,
    without_match: bool,
) -> io::Result<(bool, Option<String>, SearchStats)> {
    let mut counter = super::printer::Printer::new(
        io::sink(),
        super::search::style(args),
        super::printer::Names::new(&args.given, &args.paths),
    );
    counter.counting = true;
    let mut lines = request.clone();
    (lines.output, lines.count_matches) = (Some(OutputMode::Content), false);
    // (rg's counting printers go on past a NUL byte: every match counts.)
    lines.binary_results = true;
    let mut plain = args.clone();
    (plain.count, plain.count_matches, plain.files_with_matches, plain.files_without_match) =
        (false, false, false, false);
    let mut inner = Run { left: u64::MAX, searching: run.searching, ..Run::default() };
    let ended = stream(sandbox, &mut lines, &plain, &mut counter, &mut inner)?;
    (run.searching, run.errored) = (inner.searching, run.errored || inner.errored);
    run.warnings.extend(inner.warnings);
    let (t, _) = counter.finish()?;
    let count = if args.count_matches { t.matches } else { t.matched_lines };
    let found = t.files_matched > 0;
    match output {
        OutputMode::Count if count > 0 || args.include_zero => {
            printer.file_count(&FileCount { path: NAME.into(), count }, true)?;
        }
        OutputMode::FilesWithMatches if found != without_match => {
            printer.file_count(&FileCount { path: NAME.into(), count }, false)?;
        }
        _ => {}
    }
    printer.flush(true)?;
    run.found |= found != without_match;
    // (Its figures are this printer's, as any search's, and kept for the
    // counting search, which cannot read the stream again.)
    let shown = printer.totals();
    shown.add_counts(&t);
    shown.files_searched += t.files_searched;
    run.stdin.add_counts(&t);
    Ok(ended)
}

fn sandgrep_stats() -> SearchStats {
    SearchStats {
        files_scanned: 0,
        files_matched: 0,
        bytes_searched: 0,
        matches_returned: 0,
        elapsed_ms: 0,
        skipped: sandgrep::SkipCounts { binary: 0, too_large: 0, denied: 0, unreadable: 0, ignored: 0, hidden: 0 },
        index: sandgrep::IndexUse::None,
        files_skipped_by_index: 0,
        lines_redacted: 0,
        redacted_by: Vec::new(),
    }
}

/// The lines of a stream shown with a secret redacted, each counted once
/// though a piece's answer may show a line an earlier one showed.
#[derive(Default)]
struct Counted {
    lines: BTreeSet<u64>,
    by_rule: BTreeSet<(u64, String)>,
}

impl Counted {
    /// Counts what `r` shows anew into `into`; forgets lines before `first`
    /// (no later piece shows them).
    fn add(&mut self, r: &SearchTextResponse, first: u64, into: &mut SearchStats) {
        self.lines = self.lines.split_off(&first);
        self.by_rule = self.by_rule.split_off(&(first, String::new()));
        for x in r.matches.iter().flat_map(|m| &m.redactions) {
            if self.lines.insert(x.line) {
                into.lines_redacted += 1;
            }
            if self.by_rule.insert((x.line, x.rule.clone())) {
                match into.redacted_by.iter_mut().find(|c| c.rule == x.rule) {
                    Some(c) => c.lines += 1,
                    None => into.redacted_by.push(sandgrep::RedactionCount { rule: x.rule.clone(), lines: 1 }),
                }
            }
        }
    }
}

/// A text search is printing (other commands end 0 when stdout's reader
/// goes away, as `rg --files | head` does).
static SEARCHING: AtomicBool = AtomicBool::new(false);
/// Whether a search that matched was over when stdout's reader went away
/// (see [`closed_status`]).
static COMPLETED_MATCH: AtomicBool = AtomicBool::new(false);
/// The path of the last result printed.
static LAST_PRINTED: Mutex<Option<String>> = Mutex::new(None);

/// Notes a page printed of a search of the files `named`. rg writes a
/// file's results found by its walk as one piece, and counts a file that
/// matched once that write succeeded: one such result printed is a search
/// over. A file named itself is searched and printed as it goes, and is over
/// once another file's results, or the end, follow it.
pub(crate) fn printed(r: &SearchTextResponse, named: &[String]) {
    SEARCHING.store(true, Ordering::Relaxed);
    let mut last = LAST_PRINTED.lock().unwrap_or_else(|e| e.into_inner());
    let paths = r.matches.iter().map(|m| m.path.as_str()).chain(r.files.iter().map(|f| f.path.as_str()));
    for p in paths {
        if last.as_deref().is_some_and(|l| l != p) || !named.iter().any(|n| n == p) {
            COMPLETED_MATCH.store(true, Ordering::Relaxed);
        }
        if last.as_deref() != Some(p) {
            *last = Some(p.to_string());
        }
    }
    // (-l and -c print whole files.)
    if last.is_some() && (r.next_cursor.is_none() || !r.files.is_empty()) {
        COMPLETED_MATCH.store(true, Ordering::Relaxed);
    }
}

/// rg's exit status where stdout's reader goes away: it counts a search
/// whose output failed as no match, so 0 when a search that matched was
/// over by then, else 1 (`rg foo dir | head -1` ends 0, `yes | rg y |
/// head -1` 1); 0 for what is no text search (`--files`, `ls`, `ast`).
pub(crate) fn closed_status() -> u8 {
    if !SEARCHING.load(Ordering::Relaxed) || COMPLETED_MATCH.load(Ordering::Relaxed) {
        0
    } else {
        1
    }
}

/// Ends the run as soon as stdout's reader goes away, when stdout is a pipe
/// or a socket: a thread waits for the error (or hang-up) that poll(2)
/// reports then, while the search may be busy in the component (which
/// would otherwise find out only at its next write).
pub(crate) fn watch_stdout() {
    // SAFETY: fstat fills the local struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(1, &mut st) } != 0 {
        return;
    }
    if !matches!(st.st_mode & libc::S_IFMT, libc::S_IFIFO | libc::S_IFSOCK) {
        return;
    }
    let watch = || loop {
        let mut p = libc::pollfd { fd: 1, events: 0, revents: 0 };
        // SAFETY: poll on one local pollfd.
        if unsafe { libc::poll(&mut p, 1, -1) } < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if p.revents & libc::POLLNVAL != 0 {
            return;
        }
        if p.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
            std::process::exit(closed_status().into());
        }
    };
    let _ = std::thread::Builder::new().name("stdout-watch".into()).spawn(watch);
}
