//! The lines a rule within a line has to look at. Most lines of code hold
//! none of the literals that every match of the table of formats, of the
//! auth-scheme and attribute patterns, or of a secret-named key's keyword
//! must hold: one pass over a text finds the lines that hold one (sixteen
//! bytes at a time where wasm has SIMD; the regex crate's prefilter for
//! many literals is an Aho-Corasick automaton there, a byte at a time),
//! and each of those rules then runs on its own lines alone.
//!
//! # Why the edits are the same
//! - Every match of a gated rule holds one of its literals ([`gates`];
//!   the test `gates_cover_their_patterns` checks them against the
//!   patterns' own literal prefixes), and no match crosses a newline: a
//!   line without one of a rule's literals holds no match of it.
//! - A pattern run over one line finds there what it finds when run over
//!   the whole text: a match starts at the same place and ends within the
//!   line either way, and a line's ends read as a text's ends do for the
//!   gated patterns (a newline is no word byte, for `\b`; they have no `^`
//!   or `$`). The keyword scan restarts at each line alike (no keyword
//!   holds a newline). Rules run over their lines in order, so their edits
//!   come in the same order as over the whole text.
//! - The scan lets through more than it should, never less: a place is
//!   looked at when the three bytes there have, each, a low and a high half
//!   that some literal's window has at that place ([`Teddy`]); each literal
//!   is then compared whole (ASCII case aside where its rule ignores case).
//!   Bytes past the text's end match any window.

#[allow(unused_imports)]
use super::*;

/// The rules a line can be gated for, a bit each.
pub(super) const KEYWORD: u8 = 1;
pub(super) const AUTH: u8 = 2;
pub(super) const ATTR: u8 = 4;
pub(super) const FORMAT: u8 = 8;

/// A line holding a literal of `rules`: `start..end`, without its newline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Line {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) rules: u8,
}

/// The literals one of which every match of a rule holds, and whether the
/// rule ignores ASCII case.
pub(super) fn gates() -> Vec<(u8, bool, String)> {
    let mut out = Vec::new();
    // `keywords` finds these words, ASCII case aside, and nothing else.
    out.extend(KEYWORDS.split_ascii_whitespace().map(|w| (KEYWORD, true, w.to_string())));
    // `[Bb]earer|BEARER|[Bb]asic|BASIC` or `(?i:authorization)` starts every match.
    out.extend(["bearer", "basic", "authorization"].map(|w| (AUTH, true, w.to_string())));
    // `(?i)\b(?:key|name)` starts every match.
    out.extend(["key", "name"].map(|w| (ATTR, true, w.to_string())));
    // The keywords of the rows scanned together, and the markers.
    out.extend(format_gates().into_iter().map(|(w, fold)| (FORMAT, fold, w)));
    out
}

/// A literal looked for: its bytes, whether ASCII case is ignored, the
/// rules it gates, and where its window (three bytes, or all of a shorter
/// one) starts.
struct Literal {
    bytes: Vec<u8>,
    fold: bool,
    rules: u8,
    rare: usize,
}

/// How common a byte is in code, roughly: a window of rare bytes lets few
/// places through.
fn rank(b: u8) -> u32 {
    const LETTERS: &[u8] = b"zqjxkvbywgpfmucdlhrsnioate";
    match b.to_ascii_lowercase() {
        c @ b'a'..=b'z' => 4 + LETTERS.iter().position(|&l| l == c).unwrap_or(0) as u32,
        b' ' | b'\t' => 40,
        b'_' | b'.' | b'(' | b')' | b',' | b';' | b'=' | b'"' | b'\'' | b'/' | b'-' | b'*' | b':' => 12,
        b'0'..=b'9' => 4,
        _ => 3,
    }
}

/// Up to eight buckets of literals, looked for at once after Teddy (as in
/// `search/literal.rs`): for each of a window's three bytes, two tables give
/// the buckets whose literals have there a byte with that low and that high
/// half (a window shorter than three matches any byte past its end).
struct Set {
    lo: [[u8; 16]; 3],
    hi: [[u8; 16]; 3],
    buckets: [Vec<usize>; 8],
}

/// How many [`Set`]s: one for the literals that ignore case, the others
/// for those that do not (more buckets, fewer literals each: fewer places
/// let through).
const SETS: usize = 4;

/// The literals, in [`SETS`] sets.
pub(super) struct Teddy {
    lits: Vec<Literal>,
    sets: [Set; SETS],
}

impl Teddy {
    fn new(gates: Vec<(u8, bool, String)>) -> Teddy {
        let mut lits: Vec<Literal> = Vec::new();
        for (rule, fold, word) in gates {
            let bytes = word.into_bytes();
            match lits.iter_mut().find(|l| l.fold == fold && l.bytes == bytes) {
                Some(l) => l.rules |= rule,
                None => {
                    let n = bytes.len().min(3);
                    let rare = (0..=bytes.len() - n)
                        .min_by_key(|&w| bytes[w..w + n].iter().map(|&b| rank(b)).sum::<u32>())
                        .unwrap_or(0);
                    lits.push(Literal { bytes, fold, rules: rule, rare });
                }
            }
        }
        // A literal that holds another of the same rules (and case rule, or
        // the other ignoring case) is there only where that one is:
        // `password` where `pass` is.
        let holds = |l: &Literal, m: &Literal| {
            m.rules & l.rules == l.rules
                && (m.fold || !l.fold)
                && m.bytes.len() < l.bytes.len()
                && l.bytes.windows(m.bytes.len()).any(|w| {
                    if m.fold {
                        w.eq_ignore_ascii_case(&m.bytes)
                    } else {
                        w == m.bytes
                    }
                })
        };
        let keep: Vec<bool> = lits.iter().map(|l| !lits.iter().any(|m| holds(l, m))).collect();
        let mut kept = keep.iter();
        lits.retain(|_| *kept.next().unwrap());
        let window = |i: &usize| {
            let l = &lits[*i];
            let w = &l.bytes[l.rare..(l.rare + 3).min(l.bytes.len())];
            if l.fold {
                w.to_ascii_lowercase()
            } else {
                w.to_vec()
            }
        };
        // Alike windows in one bucket let fewer places through.
        let mut folded: Vec<usize> = (0..lits.len()).filter(|&i| lits[i].fold).collect();
        let mut exact: Vec<usize> = (0..lits.len()).filter(|&i| !lits[i].fold).collect();
        folded.sort_by_key(window);
        exact.sort_by_key(window);
        let per = exact.len().div_ceil(8 * (SETS - 1)).max(1);
        let mut chunks = exact.chunks(per);
        let sets = std::array::from_fn(|s| {
            let mut set = Set { lo: [[0; 16]; 3], hi: [[0; 16]; 3], buckets: Default::default() };
            let buckets: Vec<&[usize]> = if s == 0 {
                folded.chunks(folded.len().div_ceil(8).max(1)).collect()
            } else {
                chunks.by_ref().take(8).collect()
            };
            for (k, chunk) in buckets.into_iter().enumerate() {
                let bit = 1u8 << k;
                for &i in chunk {
                    let l = &lits[i];
                    for p in 0..3 {
                        let Some(&b) = l.bytes.get(l.rare + p) else {
                            set.lo[p].iter_mut().chain(set.hi[p].iter_mut()).for_each(|t| *t |= bit);
                            continue;
                        };
                        let other = if l.fold && b.is_ascii_alphabetic() { b ^ 0x20 } else { b };
                        for v in [b, other] {
                            set.lo[p][usize::from(v & 15)] |= bit;
                            set.hi[p][usize::from(v >> 4)] |= bit;
                        }
                    }
                    set.buckets[k].push(i);
                }
            }
            set
        });
        assert!(chunks.next().is_none());
        Teddy { lits, sets }
    }

    /// The buckets of each set whose window may start at `q`.
    fn at(&self, text: &[u8], q: usize) -> [u8; SETS] {
        self.sets.each_ref().map(|s| {
            (0..3).fold(0xff, |bits, p| {
                bits & text.get(q + p).map_or(0xff, |&b| s.lo[p][usize::from(b & 15)] & s.hi[p][usize::from(b >> 4)])
            })
        })
    }
}

fn teddy() -> &'static Teddy {
    static T: OnceLock<Teddy> = OnceLock::new();
    T.get_or_init(|| Teddy::new(gates()))
}

/// The lines found so far, as [`lines`] builds them.
struct Scan<'a> {
    teddy: &'a Teddy,
    text: &'a [u8],
    out: Vec<Line>,
}

impl Scan<'_> {
    /// Compares the literals of `bits`' buckets whose window would start at
    /// `q`, and notes the rules of those that are there.
    fn check(&mut self, q: usize, bits: [u8; SETS]) {
        for (set, mut b) in self.teddy.sets.iter().zip(bits) {
            while b != 0 {
                let k = b.trailing_zeros() as usize;
                b &= b - 1;
                for &i in &set.buckets[k] {
                    let lit = &self.teddy.lits[i];
                    // (A line already gated for all its rules needs no look.)
                    if self.out.last().is_some_and(|l| q < l.end && l.rules & lit.rules == lit.rules) {
                        continue;
                    }
                    let Some(s) = q.checked_sub(lit.rare) else { continue };
                    let Some(w) = self.text.get(s..s + lit.bytes.len()) else { continue };
                    if if lit.fold { w.eq_ignore_ascii_case(&lit.bytes) } else { w == lit.bytes } {
                        self.mark(q, lit.rules);
                    }
                }
            }
        }
    }

    /// Gates the line of `q` for `rules`. (Places come in order, and a
    /// literal holds no newline: `q` is in the last line noted or after it.)
    fn mark(&mut self, q: usize, rules: u8) {
        if let Some(l) = self.out.last_mut().filter(|l| q < l.end) {
            l.rules |= rules;
            return;
        }
        let from = self.out.last().map_or(0, |l| l.end + 1).min(q);
        let start = memchr::memrchr(b'\n', &self.text[from..q]).map_or(from, |i| from + i + 1);
        let end = memchr::memchr(b'\n', &self.text[q..]).map_or(self.text.len(), |i| q + i);
        self.out.push(Line { start, end, rules });
    }
}

#[cfg(test)]
thread_local! {
    /// For the tests: every line gated for every rule, and no line passed
    /// over by the shortcuts of `find` (so that redaction reads every line).
    pub(super) static EVERY_LINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether every line is to be read (only ever in tests).
pub(super) fn every_line() -> bool {
    #[cfg(test)]
    return EVERY_LINE.get();
    #[cfg(not(test))]
    false
}

/// The lines of `text` that hold a literal of a gated rule, in order, with
/// the rules each is gated for.
pub(super) fn lines(text: &[u8]) -> Vec<Line> {
    if every_line() {
        let mut out = Vec::new();
        let mut start = 0;
        while start < text.len() {
            let end = newline(&text[start..]).map_or(text.len(), |i| start + i);
            out.push(Line { start, end, rules: !0 });
            start = end + 1;
        }
        return out;
    }
    let teddy = teddy();
    let mut scan = Scan { teddy, text, out: Vec::new() };
    let mut q = 0;
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::*;
        // SAFETY: the tables are 16 bytes each; unaligned loads are allowed.
        let table = |t: &[u8; 16]| unsafe { v128_load(t.as_ptr() as *const v128) };
        let lo = teddy.sets.each_ref().map(|s| s.lo.each_ref().map(table));
        let hi = teddy.sets.each_ref().map(|s| s.hi.each_ref().map(table));
        let low = u8x16_splat(0x0f);
        while q + 18 <= text.len() {
            let mut hits = [u8x16_splat(0xff); SETS];
            for p in 0..3 {
                // SAFETY: `q + p + 16 <= q + 18 <= text.len()`.
                let c = unsafe { v128_load(text.as_ptr().add(q + p) as *const v128) };
                let (l, h) = (v128_and(c, low), u8x16_shr(c, 4));
                for s in 0..SETS {
                    let bits = v128_and(i8x16_swizzle(lo[s][p], l), i8x16_swizzle(hi[s][p], h));
                    hits[s] = v128_and(hits[s], bits);
                }
            }
            let any = hits.iter().fold(u8x16_splat(0), |a, &h| v128_or(a, h));
            if v128_any_true(any) {
                let mut bits = [[0u8; 16]; SETS];
                for s in 0..SETS {
                    // SAFETY: 16 bytes to store into.
                    unsafe { v128_store(bits[s].as_mut_ptr() as *mut v128, hits[s]) };
                }
                let mut lanes = u8x16_bitmask(i8x16_ne(any, u8x16_splat(0)));
                while lanes != 0 {
                    let j = lanes.trailing_zeros() as usize;
                    lanes &= lanes - 1;
                    scan.check(q + j, std::array::from_fn(|s| bits[s][j]));
                }
            }
            q += 16;
        }
    }
    while q < text.len() {
        let bits = teddy.at(text, q);
        if bits != [0; SETS] {
            scan.check(q, bits);
        }
        q += 1;
    }
    scan.out
}

/// The lines of `lines` gated for `rule`: their start and end.
pub(super) fn gated(lines: &[Line], rule: u8) -> impl Iterator<Item = (usize, usize)> + '_ {
    lines.iter().filter(move |l| l.rules & rule != 0).map(|l| (l.start, l.end))
}
