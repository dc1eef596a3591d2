//! Unix `compress` (`.Z`): LZW as ncompress 4.2 and gzip's `unlzw` decode
//! it, quirks and all.
//!
//! The header is `1f 9d` and a byte of flags (bits 0-4: the largest code
//! width, 9 to 16; bit 7: block mode, where code 256 clears the table).
//! Codes follow least significant bit first, 9 bits wide to start, one bit
//! wider each time the table fills to the current width. The encoder writes
//! them in groups of eight: when the width changes (or the table is
//! cleared), the rest of the current group is padding, which the decoder
//! passes over. The stream simply ends (no length, no checksum); bits too
//! few for a whole code at the end are ignored.

use std::io::{self, BufRead, Read};

const MAGIC: [u8; 2] = [0x1f, 0x9d];
const INIT_BITS: u32 = 9;
const MAX_BITS: u32 = 16;
const BLOCK_MODE: u8 = 0x80;
const CLEAR: u32 = 256;
const FIRST: u32 = 257;

fn corrupt(message: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// A reader of the text a `.Z` stream holds.
pub struct Decoder<R> {
    input: R,
    started: bool,
    done: bool,
    block_mode: bool,
    max_bits: u32,
    /// 2^max_bits: the table's size.
    max_max_code: u32,
    n_bits: u32,
    max_code: u32,
    free_ent: u32,
    old_code: Option<u32>,
    fin_char: u8,
    prefix: Vec<u16>,
    suffix: Vec<u8>,
    /// Bits read but not yet used (the low `acc_bits` bits of `acc`).
    acc: u64,
    acc_bits: u32,
    /// Bits consumed since the current code width began (the group
    /// padding is counted from there).
    since_width: u64,
    /// Text decoded, not yet read out (`out[out_at..]`).
    out: Vec<u8>,
    out_at: usize,
}

impl<R: BufRead> Decoder<R> {
    pub fn new(input: R) -> Decoder<R> {
        Decoder {
            input,
            started: false,
            done: false,
            block_mode: false,
            max_bits: MAX_BITS,
            max_max_code: 1 << MAX_BITS,
            n_bits: INIT_BITS,
            max_code: (1 << INIT_BITS) - 1,
            free_ent: 0,
            old_code: None,
            fin_char: 0,
            prefix: Vec::new(),
            suffix: Vec::new(),
            acc: 0,
            acc_bits: 0,
            since_width: 0,
            out: Vec::new(),
            out_at: 0,
        }
    }

    fn header(&mut self) -> io::Result<()> {
        let mut head = [0u8; 3];
        let mut got = 0;
        while got < 3 {
            match self.input.read(&mut head[got..])? {
                0 if got == 0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                0 => return Err(corrupt("not in compressed format")),
                n => got += n,
            }
        }
        if head[..2] != MAGIC {
            return Err(corrupt("not in compressed format"));
        }
        self.max_bits = u32::from(head[2] & 0x1f);
        if self.max_bits > MAX_BITS {
            return Err(corrupt("compressed with more than 16 bits"));
        }
        self.block_mode = head[2] & BLOCK_MODE != 0;
        self.max_max_code = 1 << self.max_bits;
        self.free_ent = if self.block_mode { FIRST } else { 256 };
        let size = (1usize << MAX_BITS).max(256);
        self.prefix = vec![0; size];
        self.suffix = (0..size).map(|c| c as u8).collect();
        Ok(())
    }

    /// Makes `n` bits available in `acc`; false at the end of the input.
    fn want(&mut self, n: u32) -> io::Result<bool> {
        while self.acc_bits < n {
            let buf = self.input.fill_buf()?;
            let Some(&byte) = buf.first() else { return Ok(false) };
            self.input.consume(1);
            self.acc |= u64::from(byte) << self.acc_bits;
            self.acc_bits += 8;
        }
        Ok(true)
    }

    fn take(&mut self, n: u32) -> u32 {
        let v = (self.acc & ((1 << n) - 1)) as u32;
        self.acc >>= n;
        self.acc_bits -= n;
        self.since_width += u64::from(n);
        v
    }

    /// Passes over the rest of the current group of eight codes; false at
    /// the end of the input.
    fn skip_group(&mut self) -> io::Result<bool> {
        let group = u64::from(self.n_bits) * 8;
        let mut left = (group - self.since_width % group) % group;
        while left > 0 {
            let n = left.min(32) as u32;
            if !self.want(n)? {
                return Ok(false);
            }
            self.take(n);
            left -= u64::from(n);
        }
        self.since_width = 0;
        Ok(true)
    }

    /// Decodes the next code into `out`; false at the end of the stream.
    fn step(&mut self) -> io::Result<bool> {
        if self.free_ent > self.max_code {
            if !self.skip_group()? {
                return Ok(false);
            }
            self.n_bits += 1;
            self.max_code = if self.n_bits == self.max_bits { self.max_max_code } else { (1 << self.n_bits) - 1 };
        }
        if !self.want(self.n_bits)? {
            return Ok(false);
        }
        let code = self.take(self.n_bits);
        let Some(old_code) = self.old_code else {
            if code >= 256 {
                return Err(corrupt("corrupt input"));
            }
            self.old_code = Some(code);
            self.fin_char = code as u8;
            self.out.push(code as u8);
            return Ok(true);
        };
        if code == CLEAR && self.block_mode {
            if !self.skip_group()? {
                return Ok(false);
            }
            self.free_ent = FIRST - 1;
            self.n_bits = INIT_BITS;
            self.max_code = (1 << INIT_BITS) - 1;
            return Ok(true);
        }
        let in_code = code;
        let start = self.out.len();
        let mut code = code;
        // The string comes out last character first.
        if code >= self.free_ent {
            if code > self.free_ent {
                return Err(corrupt("corrupt input"));
            }
            self.out.push(self.fin_char);
            code = old_code;
        }
        let mut steps = 0usize;
        while code >= 256 {
            self.out.push(self.suffix[code as usize]);
            code = u32::from(self.prefix[code as usize]);
            steps += 1;
            if steps > self.prefix.len() {
                return Err(corrupt("corrupt input"));
            }
        }
        self.fin_char = self.suffix[code as usize];
        self.out.push(self.fin_char);
        self.out[start..].reverse();
        if self.free_ent < self.max_max_code {
            self.prefix[self.free_ent as usize] = old_code as u16;
            self.suffix[self.free_ent as usize] = self.fin_char;
            self.free_ent += 1;
        }
        self.old_code = Some(in_code);
        Ok(true)
    }
}

impl<R: BufRead> Read for Decoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.started {
            self.started = true;
            self.header()?;
        }
        while self.out_at == self.out.len() && !self.done {
            self.out.clear();
            self.out_at = 0;
            // Several codes at a time (each is a few bytes at most).
            while self.out.len() < 16 << 10 {
                if !self.step()? {
                    self.done = true;
                    break;
                }
            }
        }
        let n = buf.len().min(self.out.len() - self.out_at);
        buf[..n].copy_from_slice(&self.out[self.out_at..self.out_at + n]);
        self.out_at += n;
        Ok(n)
    }
}
