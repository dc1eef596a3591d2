//! `search-zip` (rg's `-z`): files whose names say they are compressed are
//! decompressed here, inside the component, by pure-Rust decoders — never
//! by a decompressor process (the sandbox runs none) — and the text they
//! hold is what the search reads.
//!
//! Which files: the names ripgrep 15.2.0 decompresses (grep-cli 0.1.12,
//! `default_decompression_commands`: `*.gz`, `*.tgz`, `*.bz2`, `*.tbz2`,
//! `*.xz`, `*.txz`, `*.lz4`, `*.lzma`, `*.br`, `*.zst`, `*.zstd`, `*.Z`;
//! case-sensitive, as its globs are). Concatenated streams (members,
//! frames) are read on to the end, as the command-line tools read them.
//!
//! Bounds, whatever a hostile workspace holds: the text is held in memory
//! in chunks (so a search reads it like a file, and redaction can look
//! back in it) and never grows past the search's max-filesize — one byte
//! more and the file is counted as too large, as a larger file is; each
//! chunk is reserved fallibly (an instance out of memory gets an error on
//! the file, not a trap); a decoder's own window is capped
//! ([`DECODER_MEMORY`]); the search's deadline is looked at after every
//! chunk.

use std::io::{self, BufRead, BufReader, Read};
use std::time::Instant;

mod lzw;

/// What a decoder's error says after the format's name: how such an error
/// is told from others (a file that could not be read at all).
pub const FAILED: &str = " decompression failed: ";

/// The warning that names the compressed files whose stream broke off
/// (the command line tells it by these words: such a file is an error, as
/// in rg).
pub const BROKEN: &str = "compressed file(s) could not be decompressed";

/// What a decoder may allocate for its own window (an xz or lzma
/// dictionary, a zstd window): enough for `xz -9` (64 MiB) and zstd's
/// default limit; a file asking for more is an error, never an allocation.
pub const DECODER_MEMORY: u64 = sandgrep_contract::limits::DECOMPRESS_WINDOW;

/// The compressed formats, by the tool that would decompress them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Gzip,
    Bzip2,
    Xz,
    Lzma,
    Lz4,
    Brotli,
    Zstd,
    /// Unix `compress` (LZW).
    Compress,
}

/// The name endings rg's globs (`*.gz` …) match, and their formats.
const ENDINGS: [(&str, Format); 12] = [
    (".gz", Format::Gzip),
    (".tgz", Format::Gzip),
    (".bz2", Format::Bzip2),
    (".tbz2", Format::Bzip2),
    (".xz", Format::Xz),
    (".txz", Format::Xz),
    (".lz4", Format::Lz4),
    (".lzma", Format::Lzma),
    (".br", Format::Brotli),
    (".zst", Format::Zstd),
    (".zstd", Format::Zstd),
    (".Z", Format::Compress),
];

impl Format {
    /// The format of the file at `path`, by its name, as rg decides.
    pub fn of(path: &str) -> Option<Format> {
        ENDINGS.iter().find(|(ending, _)| path.ends_with(ending)).map(|&(_, f)| f)
    }

    /// The format's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Gzip => "gzip",
            Format::Bzip2 => "bzip2",
            Format::Xz => "xz",
            Format::Lzma => "lzma",
            Format::Lz4 => "lz4",
            Format::Brotli => "brotli",
            Format::Zstd => "zstd",
            Format::Compress => "compress",
        }
    }
}

/// Decompressed text, in chunks.
#[derive(Default)]
pub struct Text {
    chunks: Vec<Vec<u8>>,
    len: u64,
}

impl Text {
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Drops what follows the last `byte` (all of it when there is none).
    pub fn cut_after_last(&mut self, byte: u8) {
        while let Some(chunk) = self.chunks.last_mut() {
            match chunk.iter().rposition(|&b| b == byte) {
                Some(i) => {
                    self.len -= (chunk.len() - i - 1) as u64;
                    chunk.truncate(i + 1);
                    return;
                }
                None => {
                    self.len -= chunk.len() as u64;
                    self.chunks.pop();
                }
            }
        }
    }

    /// Up to `len` bytes at `offset`.
    pub fn read_at(&self, offset: u64, len: u64) -> Vec<u8> {
        let end = offset.saturating_add(len).min(self.len);
        let mut out = Vec::with_capacity(end.saturating_sub(offset) as usize);
        let mut start = 0u64;
        for chunk in &self.chunks {
            let chunk_end = start + chunk.len() as u64;
            if chunk_end > offset && start < end {
                let from = offset.max(start) - start;
                let to = end.min(chunk_end) - start;
                out.extend_from_slice(&chunk[from as usize..to as usize]);
            }
            if chunk_end >= end {
                break;
            }
            start = chunk_end;
        }
        out
    }

    /// The text as a reader, from its start.
    pub fn reader(text: std::rc::Rc<Text>) -> TextReader {
        TextReader { text, chunk: 0, at: 0 }
    }
}

/// Reads a [`Text`] through.
pub struct TextReader {
    text: std::rc::Rc<Text>,
    chunk: usize,
    at: usize,
}

impl Read for TextReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while let Some(chunk) = self.text.chunks.get(self.chunk) {
            if self.at < chunk.len() {
                let n = buf.len().min(chunk.len() - self.at);
                buf[..n].copy_from_slice(&chunk[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            (self.chunk, self.at) = (self.chunk + 1, 0);
        }
        Ok(0)
    }
}

/// How decompressing a file ended.
pub enum Decompressed {
    /// The whole text.
    Whole(Text),
    /// The decoder failed (not in the format, truncated, corrupt): the text
    /// decoded before that, and the decoder's message.
    Failed(Text, String),
    /// The text is larger than the cap.
    TooLarge,
    /// The deadline passed first.
    TimedOut,
}

/// Decompresses `input` (in `format`) into memory: at most `cap` bytes of
/// text, by `deadline`.
pub fn decompress(format: Format, input: impl Read, cap: u64, deadline: Option<Instant>) -> Decompressed {
    const FIRST: usize = 64 << 10;
    const MOST: usize = 1 << 20;
    let mut input = BufReader::with_capacity(64 << 10, input);
    let mut text = Text::default();
    // An empty file is no stream: every tool but lz4 says it ends early.
    match input.fill_buf() {
        Ok([]) if format != Format::Lz4 => {
            let e = io::Error::from(io::ErrorKind::UnexpectedEof);
            return Decompressed::Failed(text, message(format, &e));
        }
        Ok(_) => {}
        Err(e) => return Decompressed::Failed(text, message(format, &e)),
    }
    let mut decoder = decoder(format, input);
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Decompressed::TimedOut;
        }
        // One byte past the cap tells a larger text.
        let room = cap.saturating_add(1).saturating_sub(text.len).min(MOST as u64) as usize;
        let size = (text.len.min(MOST as u64) as usize).clamp(FIRST, MOST).min(room);
        let mut chunk = Vec::new();
        if chunk.try_reserve_exact(size).is_err() {
            let message = format!("{}{FAILED}out of memory after {} bytes of text", format.name(), text.len);
            return Decompressed::Failed(text, message);
        }
        chunk.resize(size, 0);
        let mut filled = 0;
        let mut failed = None;
        while filled < size {
            match decoder.read(&mut chunk[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(message(format, &e));
                    break;
                }
            }
        }
        chunk.truncate(filled);
        text.len += filled as u64;
        if text.len > cap {
            return Decompressed::TooLarge;
        }
        if filled > 0 {
            text.chunks.push(chunk);
        }
        if let Some(message) = failed {
            return Decompressed::Failed(text, message);
        }
        if filled < size {
            return Decompressed::Whole(text);
        }
    }
}

/// A decoder's error as the caller reads it: never a path (the caller
/// names the file), never the file's bytes (a decoder that quotes a field
/// it read, a magic number or a size, says "corrupt input" instead).
fn message(format: Format, e: &io::Error) -> String {
    let said = e.to_string();
    let quotes = said.contains("0x") || said.as_bytes().windows(3).any(|w| w.iter().all(u8::is_ascii_digit));
    let detail = match e.kind() {
        io::ErrorKind::UnexpectedEof => "unexpected end of file",
        _ if said.is_empty() || quotes => "corrupt input",
        _ => &said,
    };
    format!("{}{FAILED}{detail}", format.name())
}

/// A reader of the text `input` holds in `format`.
fn decoder<'a>(format: Format, input: BufReader<impl Read + 'a>) -> Box<dyn Read + 'a> {
    match format {
        Format::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(input)),
        Format::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(input)),
        Format::Xz => {
            let kib = (DECODER_MEMORY >> 10) as u32;
            Box::new(lzma_rust2::XzReader::new_mem_limit(input, true, kib))
        }
        Format::Lzma => Box::new(Lzma::Header(input)),
        Format::Lz4 => Box::new(Frames::new(input, lz4_frame)),
        Format::Brotli => Box::new(brotli_decompressor::Decompressor::new(input, 64 << 10)),
        Format::Zstd => Box::new(Frames::new(input, zstd_frame)),
        Format::Compress => Box::new(lzw::Decoder::new(input)),
    }
}

/// An `.lzma` file (the "lzma alone" format: a 13-byte header, then the
/// stream), opened on the first read.
enum Lzma<R: Read> {
    Header(R),
    Stream(Box<lzma_rust2::LzmaReader<R>>),
    Done,
}

impl<R: Read> Read for Lzma<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match std::mem::replace(self, Lzma::Done) {
                Lzma::Header(input) => {
                    let kib = (DECODER_MEMORY >> 10) as u32;
                    *self = Lzma::Stream(Box::new(lzma_rust2::LzmaReader::new_mem_limit(input, kib, None)?));
                }
                Lzma::Stream(mut stream) => {
                    let n = stream.read(buf);
                    *self = Lzma::Stream(stream);
                    return n;
                }
                Lzma::Done => return Ok(0),
            }
        }
    }
}

/// A reader of one frame of a format whose files may hold several.
type Frame<'a, R> = io::Result<Box<dyn FrameRead<R> + 'a>>;

/// One frame being read, which gives its input back at its end.
trait FrameRead<R>: Read {
    fn into_input(self: Box<Self>) -> R;
}

/// The frames of a stream one after another (zstd, lz4), to its end.
struct Frames<'a, R: BufRead> {
    input: Option<R>,
    frame: Option<Box<dyn FrameRead<R> + 'a>>,
    open: fn(R) -> Frame<'a, R>,
}

impl<'a, R: BufRead> Frames<'a, R> {
    fn new(input: R, open: fn(R) -> Frame<'a, R>) -> Frames<'a, R> {
        Frames { input: Some(input), frame: None, open }
    }
}

impl<R: BufRead> Read for Frames<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if let Some(frame) = &mut self.frame {
                let n = frame.read(buf)?;
                if n > 0 || buf.is_empty() {
                    return Ok(n);
                }
                self.input = self.frame.take().map(|f| f.into_input());
            }
            let Some(mut input) = self.input.take() else { return Ok(0) };
            if input.fill_buf()?.is_empty() {
                self.input = Some(input);
                return Ok(0);
            }
            self.frame = Some((self.open)(input)?);
        }
    }
}

/// One zstd frame; a skippable frame is passed over.
fn zstd_frame<'a, R: BufRead + 'a>(mut input: R) -> Frame<'a, R> {
    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    let mut decoder = ruzstd::decoding::FrameDecoder::new();
    decoder.set_max_window_size(DECODER_MEMORY);
    match decoder.init(&mut input) {
        Ok(()) => Ok(Box::new(ZstdFrame { input, decoder })),
        Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame { length, .. })) => {
            let skipped = io::copy(&mut (&mut input).take(u64::from(length)), &mut io::sink())?;
            if skipped < u64::from(length) {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "unexpected end of file"));
            }
            Ok(Box::new(Skipped(Some(input))))
        }
        Err(e) => Err(zstd_error(e)),
    }
}

fn zstd_error(e: ruzstd::decoding::errors::FrameDecoderError) -> io::Error {
    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    let said = match e {
        FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::BadMagicNumber(_)) => "not in zstd format",
        _ => "corrupt input",
    };
    io::Error::new(io::ErrorKind::InvalidData, said)
}

/// One zstd frame, its header read (as ruzstd's `StreamingDecoder`, which
/// would read the header itself).
struct ZstdFrame<R> {
    input: R,
    decoder: ruzstd::decoding::FrameDecoder,
}

impl<R: Read> Read for ZstdFrame<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let d = &mut self.decoder;
        while d.can_collect() == 0 && !d.is_finished() {
            d.decode_blocks(&mut self.input, ruzstd::decoding::BlockDecodingStrategy::UptoBlocks(1))
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "corrupt input"))?;
        }
        d.read(buf)
    }
}

impl<R: Read> FrameRead<R> for ZstdFrame<R> {
    fn into_input(self: Box<Self>) -> R {
        self.input
    }
}

/// A frame with nothing to read (a skipped one).
struct Skipped<R>(Option<R>);

impl<R> Read for Skipped<R> {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Ok(0)
    }
}

impl<R> FrameRead<R> for Skipped<R> {
    fn into_input(self: Box<Self>) -> R {
        self.0.expect("a skipped frame's input")
    }
}

/// One lz4 frame; a skippable frame (magic 0x184D2A50 to 0x184D2A5F, a
/// length, that many bytes) is passed over, as the `lz4` tool does (rg
/// runs it): lz4_flex's decoder stops at one with an error.
fn lz4_frame<'a, R: BufRead + 'a>(mut input: R) -> Frame<'a, R> {
    const SKIPPABLE: std::ops::RangeInclusive<u32> = 0x184D_2A50..=0x184D_2A5F;
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match input.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if got == 4 && SKIPPABLE.contains(&u32::from_le_bytes(magic)) {
        let mut length = [0u8; 4];
        input.read_exact(&mut length)?;
        // (A frame cut short ends the stream: the tool seeks past it, and
        // a seek past the end of a file is no error. Its length cut short is.)
        io::copy(&mut (&mut input).take(u64::from(u32::from_le_bytes(length))), &mut io::sink())?;
        return Ok(Box::new(Skipped(Some(input))));
    }
    // (The bytes read to look are given back, before the rest.)
    let head = io::Cursor::new(magic[..got].to_vec());
    Ok(Box::new(Lz4Frame(lz4_flex::frame::FrameDecoder::new(head.chain(input)))))
}

/// One lz4 frame (lz4_flex's decoder ends each frame with a read of 0).
struct Lz4Frame<R: Read>(lz4_flex::frame::FrameDecoder<io::Chain<io::Cursor<Vec<u8>>, R>>);

impl<R: Read> Read for Lz4Frame<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Read> FrameRead<R> for Lz4Frame<R> {
    fn into_input(self: Box<Self>) -> R {
        self.0.into_inner().into_inner().1
    }
}

#[cfg(test)]
mod tests;
