//! The matcher a search runs: the regex matcher, with a faster way to find
//! candidate lines for the commonest queries of all: a case-insensitive
//! literal (the agent tools' default) and an alternation of words
//! (`Create|Start`, either case).
//!
//! Natively the regex engine finds such a literal with Teddy, a SIMD
//! multi-literal search; wasm has no Teddy, and the engine falls back to an
//! Aho-Corasick automaton that steps a byte at a time over every case
//! variant (`errno`, `Errno`, … 32 of them). Here a literal's two rarest
//! bytes are looked for at their distance, in either case, sixteen starts
//! at a time with wasm SIMD, then the bytes around them are compared (for
//! an alternation of two words, each word's, nearest first; of three to
//! eight, all at once, see [`Teddy`]). Every
//! ASCII letter folds to its two ASCII cases only, but `k` (also U+212A
//! KELVIN SIGN) and `s` (also U+017F LONG S): the rare byte is never one of
//! those, and where the comparison fails but the bytes around could hold
//! one of the two signs, the line is a candidate all the same. The searcher
//! confirms every candidate line with the regex itself (word boundaries
//! and all), so the prefilter only has to miss nothing; where the query is
//! just the literals (no whole-word rule), a line that holds one is a match
//! already, and the regex is spared.

use grep_matcher::{Captures, LineMatchKind, LineTerminator, Match, Matcher, NoError};
use grep_regex::{RegexCaptures, RegexMatcher};

#[derive(Clone)]
pub struct SearchMatcher {
    regex: Engine,
    literals: Option<Literals>,
}

/// The regex engine that reads the query (rg's `--engine`).
#[derive(Clone)]
enum Engine {
    /// Rust's regex crate.
    Rust(RegexMatcher),
    /// PCRE2's interpreter (no JIT in wasm): look-around, backreferences.
    Pcre2(grep_pcre2::RegexMatcher),
}

/// The groups of a match, of either engine.
#[derive(Clone, Debug)]
pub enum SearchCaptures {
    Rust(RegexCaptures),
    Pcre2(grep_pcre2::RegexCaptures),
}

impl Captures for SearchCaptures {
    fn len(&self) -> usize {
        match self {
            SearchCaptures::Rust(c) => c.len(),
            SearchCaptures::Pcre2(c) => c.len(),
        }
    }

    fn get(&self, i: usize) -> Option<Match> {
        match self {
            SearchCaptures::Rust(c) => c.get(i),
            SearchCaptures::Pcre2(c) => c.get(i),
        }
    }
}

/// Why a search failed in the matcher: PCRE2's match errors (its match or
/// heap limit reached); Rust's engine has none.
#[derive(Debug)]
pub struct MatchError(String);

impl std::fmt::Display for MatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

thread_local! {
    /// When the search running now must end (see [`set_deadline`]).
    static DEADLINE: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// The error a PCRE2 search past its deadline ends with (see
/// [`timed_out`]).
const TIMED_OUT: &str = "the search's time ran out (PCRE2)";

/// The deadline of the file's search about to start. Rust's engine runs in
/// time linear in the text, and the searcher's sink looks at the clock at
/// each result; PCRE2 may backtrack on every line of a file for a long
/// while (up to its match limit each) and find nothing, so it looks at the
/// clock before each search it makes.
pub fn set_deadline(deadline: Option<std::time::Instant>) {
    DEADLINE.set(deadline);
}

/// Whether `e` (as the searcher hands a matcher's error on) is PCRE2's
/// search stopped by the deadline: the file was searched up to there.
pub fn timed_out(e: &std::io::Error) -> bool {
    e.to_string() == TIMED_OUT
}

fn in_time() -> Result<(), MatchError> {
    match DEADLINE.get() {
        Some(d) if std::time::Instant::now() >= d => Err(MatchError(TIMED_OUT.into())),
        _ => Ok(()),
    }
}

fn rust<T>(r: Result<T, NoError>) -> Result<T, MatchError> {
    r.map_err(|e| MatchError(e.to_string()))
}

fn pcre2<T>(r: Result<T, grep_pcre2::Error>) -> Result<T, MatchError> {
    r.map_err(|e| MatchError(e.to_string()))
}

/// The literals a query is one of, ASCII, lower-cased when the search
/// ignores case.
#[derive(Clone)]
struct Literals {
    all: Vec<Literal>,
    ignore_case: bool,
    /// The regex matches exactly where a literal is (no `-w`).
    exact: bool,
    /// Three literals or more: looked for all at once.
    teddy: Option<Teddy>,
}

/// A literal; where its two rarest bytes are (never `k` or `s`, and none
/// between them, so that their distance is the same in every match; the
/// same twice when it has one such byte), or, looked for with others at
/// once, the first and last byte of its [`window`]; how many `k`s and `s`s
/// are before the first and after it.
#[derive(Clone)]
struct Literal {
    bytes: Vec<u8>,
    rare: usize,
    second: usize,
    signs: (usize, usize),
}

/// Whether the ASCII letter `b` also matches a non-ASCII sign.
fn has_sign(b: u8) -> bool {
    matches!(b | 0x20, b'k' | b's')
}

/// How a query is matched, as far as finding its candidate lines goes.
pub struct QueryKind {
    pub literal: bool,
    pub ignore_case: bool,
    pub multiline: bool,
    pub word: bool,
}

impl SearchMatcher {
    /// `regex`, and for a line-by-line search of a literal that ignores
    /// case, or of an alternation of plain words (`Create|Start`), the fast
    /// way to their candidate lines.
    pub fn new(regex: RegexMatcher, query: &str, kind: QueryKind) -> SearchMatcher {
        let alternatives: Vec<&str> = if kind.multiline || !query.is_ascii() {
            Vec::new()
        } else if kind.literal {
            vec![query].into_iter().filter(|q| !q.contains(['\n', '\r'])).collect()
        } else if query.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'|') {
            query.split('|').collect()
        } else {
            Vec::new()
        };
        // One literal that heeds case the regex engine finds well (memmem).
        let worth = (kind.ignore_case || alternatives.len() > 1) && alternatives.len() <= 8;
        let sign = |b: u8| kind.ignore_case && has_sign(b);
        // Three words or more are looked for all at once (one pass, where a
        // pair of bytes per word takes a pass each).
        let at_once = alternatives.len() >= 3;
        let all: Option<Vec<Literal>> = alternatives
            .iter()
            .map(|a| {
                let bytes = if kind.ignore_case { a.to_ascii_lowercase().into_bytes() } else { a.as_bytes().to_vec() };
                let (rare, second) = if at_once {
                    let (w, len) = window(&bytes, sign)?;
                    (w, w + len - 1)
                } else {
                    let rare = (0..bytes.len()).filter(|&i| !sign(bytes[i])).min_by_key(|&i| rank(bytes[i]))?;
                    let no_sign_between = |i: usize| !bytes[rare.min(i)..=rare.max(i)].iter().any(|&b| sign(b));
                    let second = (0..bytes.len())
                        .filter(|&i| i != rare && no_sign_between(i))
                        .min_by_key(|&i| rank(bytes[i]))
                        .unwrap_or(rare);
                    (rare.min(second), rare.max(second))
                };
                let before = bytes[..rare].iter().filter(|&&b| sign(b)).count();
                let after = bytes[rare..].iter().filter(|&&b| sign(b)).count();
                Some(Literal { rare, second, bytes, signs: (before, after) })
            })
            .collect();
        let literals = all.filter(|all| worth && !all.is_empty()).map(|all| Literals {
            teddy: at_once.then(|| Teddy::new(&all, kind.ignore_case)),
            all,
            ignore_case: kind.ignore_case,
            exact: !kind.word,
        });
        SearchMatcher { regex: Engine::Rust(regex), literals }
    }

    /// A PCRE2 matcher (searched line by line: it names no line terminator
    /// it never matches, so no candidate lines are looked for first).
    pub fn pcre2(regex: grep_pcre2::RegexMatcher) -> SearchMatcher {
        SearchMatcher { regex: Engine::Pcre2(regex), literals: None }
    }

    /// PCRE2 reads the query: a match may look at text beyond its own
    /// bytes, as far as it likes (look-around), so redaction cannot judge
    /// a match by the bytes it spans and their neighbours.
    pub fn is_pcre2(&self) -> bool {
        matches!(self.regex, Engine::Pcre2(_))
    }
}

/// How common a byte (either case) is in source text, roughly: lower is
/// rarer. Letters by their frequency in English and code, then digits and
/// punctuation; space and the commonest letters last.
fn rank(b: u8) -> u32 {
    const LETTERS: &[u8] = b"zqjxvkwybgpfmucdlhrsniotae";
    match b {
        b'a'..=b'z' => 100 + 6 * LETTERS.iter().position(|&l| l == b).unwrap_or(0) as u32,
        b'0'..=b'9' => 170,
        b' ' | b'\t' => 300,
        b'_' | b'.' | b'(' | b')' | b',' | b';' | b'=' | b'"' => 180,
        _ => 120,
    }
}

impl Matcher for SearchMatcher {
    type Captures = SearchCaptures;
    type Error = MatchError;

    fn find_at(&self, haystack: &[u8], at: usize) -> Result<Option<Match>, MatchError> {
        match &self.regex {
            Engine::Rust(r) => rust(r.find_at(haystack, at)),
            Engine::Pcre2(r) => in_time().and_then(|()| pcre2(r.find_at(haystack, at))),
        }
    }

    fn new_captures(&self) -> Result<SearchCaptures, MatchError> {
        match &self.regex {
            Engine::Rust(r) => rust(r.new_captures()).map(SearchCaptures::Rust),
            Engine::Pcre2(r) => pcre2(r.new_captures()).map(SearchCaptures::Pcre2),
        }
    }

    fn capture_count(&self) -> usize {
        match &self.regex {
            Engine::Rust(r) => r.capture_count(),
            Engine::Pcre2(r) => r.capture_count(),
        }
    }

    fn capture_index(&self, name: &str) -> Option<usize> {
        match &self.regex {
            Engine::Rust(r) => r.capture_index(name),
            Engine::Pcre2(r) => r.capture_index(name),
        }
    }

    fn captures_at(&self, haystack: &[u8], at: usize, caps: &mut SearchCaptures) -> Result<bool, MatchError> {
        match (&self.regex, caps) {
            (Engine::Rust(r), SearchCaptures::Rust(c)) => rust(r.captures_at(haystack, at, c)),
            (Engine::Pcre2(r), SearchCaptures::Pcre2(c)) => {
                in_time().and_then(|()| pcre2(r.captures_at(haystack, at, c)))
            }
            _ => Err(MatchError("captures of another matcher".into())),
        }
    }

    fn shortest_match_at(&self, haystack: &[u8], at: usize) -> Result<Option<usize>, MatchError> {
        match &self.regex {
            Engine::Rust(r) => rust(r.shortest_match_at(haystack, at)),
            Engine::Pcre2(r) => in_time().and_then(|()| pcre2(r.shortest_match_at(haystack, at))),
        }
    }

    fn non_matching_bytes(&self) -> Option<&grep_matcher::ByteSet> {
        match &self.regex {
            Engine::Rust(r) => r.non_matching_bytes(),
            Engine::Pcre2(r) => r.non_matching_bytes(),
        }
    }

    fn line_terminator(&self) -> Option<LineTerminator> {
        match &self.regex {
            Engine::Rust(r) => r.line_terminator(),
            Engine::Pcre2(r) => r.line_terminator(),
        }
    }

    fn find_candidate_line(&self, haystack: &[u8]) -> Result<Option<LineMatchKind>, MatchError> {
        let regex = match &self.regex {
            Engine::Rust(r) => r,
            Engine::Pcre2(r) => return in_time().and_then(|()| pcre2(r.find_candidate_line(haystack))),
        };
        let Some(set) = &self.literals else { return rust(regex.find_candidate_line(haystack)) };
        let best = match &set.teddy {
            Some(teddy) => teddy.find(set, haystack),
            None => set.nearest(haystack),
        };
        Ok(best.map(|(at, found)| match found && set.exact {
            true => LineMatchKind::Confirmed(at),
            false => LineMatchKind::Candidate(at),
        }))
    }
}

impl Literals {
    /// The first offset of a line where a literal may match, and whether
    /// one is there: every literal's pair of bytes looked for in turn.
    fn nearest(&self, haystack: &[u8]) -> Option<(usize, bool)> {
        // A stretch at a time, every literal in it: the nearest candidate
        // wins, and a literal that is far away costs only a stretch.
        const STRETCH: usize = 16 * 1024;
        let mut lo = 0;
        while lo < haystack.len() {
            let hi = (lo + STRETCH).min(haystack.len());
            let mut best: Option<(usize, bool)> = None;
            for lit in &self.all {
                if let Some(c) = self.first(lit, haystack, lo, best.map_or(hi, |b| b.0)) {
                    best = Some(best.map_or(c, |b| b.min(c)));
                }
            }
            if best.is_some() {
                return best;
            }
            lo = hi;
        }
        None
    }

    /// The first offset, for starts in `from..to`, of a line where `lit`
    /// may match, and whether it is there (not only maybe, see
    /// [`Literals::candidate`]).
    fn first(&self, lit: &Literal, haystack: &[u8], mut from: usize, to: usize) -> Option<(usize, bool)> {
        let fold = |i: usize| {
            let b = lit.bytes[i];
            if self.ignore_case && b.is_ascii_alphabetic() {
                (0x20, b | 0x20)
            } else {
                (0, b)
            }
        };
        let (a, b) = ((lit.rare, fold(lit.rare)), (lit.second, fold(lit.second)));
        while from < to {
            let start = pair(haystack, from, to, a, b)?;
            if let Some(at) = self.candidate(lit, haystack, start) {
                return Some(at);
            }
            from = start + 1;
        }
        None
    }

    /// An offset in the line where `lit` may match starting at `start`
    /// (its rare bytes are where they would be), and whether it does.
    fn candidate(&self, lit: &Literal, haystack: &[u8], start: usize) -> Option<(usize, bool)> {
        let n = lit.bytes.len();
        let window = haystack.get(start..start + n);
        let same = |w: &[u8]| if self.ignore_case { w.eq_ignore_ascii_case(&lit.bytes) } else { w == lit.bytes };
        if window.is_some_and(same) {
            return Some((start, true));
        }
        // A KELVIN SIGN (E2 84 AA) or LONG S (C5 BF) where a `k` or `s`
        // could be, which moves the rare bytes along by two bytes each:
        // let the regex judge the line (it holds `at`).
        if lit.signs != (0, 0) {
            let at = start + lit.rare;
            // Within the line of `at` (a match never crosses one).
            let lo = at.saturating_sub(lit.rare + 2 * lit.signs.0);
            let lo = memchr::memrchr(b'\n', &haystack[lo..at]).map_or(lo, |i| lo + i + 1);
            let hi = (at + n - lit.rare + 2 * lit.signs.1).min(haystack.len());
            let hi = memchr::memchr(b'\n', &haystack[at..hi]).map_or(hi, |i| at + i);
            if memchr::memchr2(0xe2, 0xc5, &haystack[lo..hi]).is_some() {
                return Some((at, false));
            }
        }
        None
    }
}

/// Where a literal's fingerprint for [`Teddy`] is (start, length): its
/// three rarest consecutive bytes with no `k` or `s` among them (where a
/// non-ASCII sign could stand), or fewer where it has no such three.
fn window(bytes: &[u8], sign: impl Fn(u8) -> bool) -> Option<(usize, usize)> {
    (1..=bytes.len().min(3)).rev().find_map(|len| {
        (0..=bytes.len() - len)
            .filter(|&w| !bytes[w..w + len].iter().any(|&b| sign(b)))
            .min_by_key(|&w| bytes[w..w + len].iter().map(|&b| rank(b)).sum::<u32>())
            .map(|w| (w, len))
    })
}

/// Up to eight literals looked for at once, after Teddy (the SIMD
/// multi-literal search of the `aho-corasick` crate, which has no wasm
/// version): each literal is a bit; for each byte of the windows, two
/// tables give the bits of the literals whose window has there a byte with
/// that low and that high half (a window shorter than three matches any
/// byte past its end). Sixteen window starts take six table lookups where
/// wasm has SIMD.
#[derive(Clone)]
struct Teddy {
    lo: [[u8; 16]; 3],
    hi: [[u8; 16]; 3],
    /// The literals whose window ends before each byte (any byte will do).
    open: [u8; 3],
}

impl Teddy {
    fn new(all: &[Literal], ignore_case: bool) -> Teddy {
        let (mut lo, mut hi, mut open) = ([[0u8; 16]; 3], [[0u8; 16]; 3], [0u8; 3]);
        for (i, lit) in all.iter().enumerate() {
            let bit = 1 << i;
            for p in 0..3 {
                let at = lit.rare + p;
                if at > lit.second {
                    open[p] |= bit;
                    lo[p].iter_mut().chain(hi[p].iter_mut()).for_each(|t| *t |= bit);
                    continue;
                }
                let b = lit.bytes[at];
                let other = if ignore_case && b.is_ascii_alphabetic() { b ^ 0x20 } else { b };
                for v in [b, other] {
                    lo[p][usize::from(v & 15)] |= bit;
                    hi[p][usize::from(v >> 4)] |= bit;
                }
            }
        }
        Teddy { lo, hi, open }
    }

    /// The literals whose window may start at `q`.
    fn at(&self, haystack: &[u8], q: usize) -> u8 {
        (0..3).fold(0xff, |bits, p| {
            bits & match haystack.get(q + p) {
                Some(&b) => self.lo[p][usize::from(b & 15)] & self.hi[p][usize::from(b >> 4)],
                None => self.open[p],
            }
        })
    }

    /// An offset in the first line where one of `set`'s literals may match,
    /// and whether one is there. (A literal is within a line, and so is its
    /// window: the first window that holds up is in the first such line.)
    fn find(&self, set: &Literals, haystack: &[u8]) -> Option<(usize, bool)> {
        let check = |q: usize, mut bits: u8| {
            while bits != 0 {
                let lit = &set.all[bits.trailing_zeros() as usize];
                bits &= bits - 1;
                let found = q.checked_sub(lit.rare).and_then(|start| set.candidate(lit, haystack, start));
                if found.is_some() {
                    return found;
                }
            }
            None
        };
        let mut q = 0;
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            use core::arch::wasm32::*;
            // SAFETY: the tables are 16 bytes each; unaligned loads are allowed.
            let table = |t: &[u8; 16]| unsafe { v128_load(t.as_ptr() as *const v128) };
            let (lo, hi) = (self.lo.each_ref().map(table), self.hi.each_ref().map(table));
            let low = u8x16_splat(0x0f);
            while q + 18 <= haystack.len() {
                let mut hits = u8x16_splat(0xff);
                for p in 0..3 {
                    // SAFETY: `q + p + 16 <= q + 18 <= haystack.len()`.
                    let c = unsafe { v128_load(haystack.as_ptr().add(q + p) as *const v128) };
                    let bits = v128_and(i8x16_swizzle(lo[p], v128_and(c, low)), i8x16_swizzle(hi[p], u8x16_shr(c, 4)));
                    hits = v128_and(hits, bits);
                }
                let mut lanes = u8x16_bitmask(i8x16_ne(hits, u8x16_splat(0)));
                if lanes != 0 {
                    let mut bits = [0u8; 16];
                    // SAFETY: 16 bytes to store into.
                    unsafe { v128_store(bits.as_mut_ptr() as *mut v128, hits) };
                    while lanes != 0 {
                        let j = lanes.trailing_zeros() as usize;
                        lanes &= lanes - 1;
                        if let Some(found) = check(q + j, bits[j]) {
                            return Some(found);
                        }
                    }
                }
                q += 16;
            }
        }
        while q < haystack.len() {
            if let Some(found) = check(q, self.at(haystack, q)) {
                return Some(found);
            }
            q += 1;
        }
        None
    }
}

/// The first start `s` in `from..to` with byte `s + d` equal to `v` after
/// OR-ing `m` into it (`m` = 0x20 folds ASCII case), for both `(d, (m, v))`.
/// Sixteen starts at a time where wasm has SIMD.
fn pair(haystack: &[u8], from: usize, to: usize, a: (usize, (u8, u8)), b: (usize, (u8, u8))) -> Option<usize> {
    let (d1, (m1, v1)) = a;
    let (d2, (m2, v2)) = b;
    let end = to.min(haystack.len().saturating_sub(d2.max(d1)));
    let mut s = from;
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::*;
        let (m1, v1, m2, v2) = (u8x16_splat(m1), u8x16_splat(v1), u8x16_splat(m2), u8x16_splat(v2));
        while s + 16 <= end {
            // SAFETY: `s + d + 16 <= end + d <= haystack.len()` for both
            // distances; unaligned loads are allowed.
            let (c1, c2) = unsafe {
                (
                    v128_load(haystack.as_ptr().add(s + d1) as *const v128),
                    v128_load(haystack.as_ptr().add(s + d2) as *const v128),
                )
            };
            let hit = v128_and(u8x16_eq(v128_or(c1, m1), v1), u8x16_eq(v128_or(c2, m2), v2));
            let bits = u8x16_bitmask(hit);
            if bits != 0 {
                return Some(s + bits.trailing_zeros() as usize);
            }
            s += 16;
        }
    }
    while s < end {
        if haystack[s + d1] | m1 == v1 && haystack[s + d2] | m2 == v2 {
            return Some(s);
        }
        s += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use grep_regex::RegexMatcherBuilder;

    /// The premise: with case folding, an ASCII letter other than k and s
    /// matches its two ASCII cases and nothing else, as the regex engine in
    /// this build has it.
    #[test]
    fn ascii_letters_fold_to_their_two_cases_only_but_k_and_s() {
        for l in b'a'..=b'z' {
            let m = RegexMatcherBuilder::new()
                .case_insensitive(true)
                .fixed_strings(true)
                .build(&(l as char).to_string())
                .unwrap();
            let mut others = Vec::new();
            // Case partners of ASCII letters are all in the BMP.
            for c in (0..=0xffffu32).filter_map(char::from_u32) {
                let mut buf = [0; 4];
                if c.to_ascii_lowercase() as u32 != l as u32 && m.is_match(c.encode_utf8(&mut buf).as_bytes()).unwrap()
                {
                    others.push(c);
                }
            }
            match l {
                b'k' => assert_eq!(others, ['\u{212a}']),
                b's' => assert_eq!(others, ['\u{17f}']),
                _ => assert!(others.is_empty(), "{}: {others:?}", l as char),
            }
        }
    }

    /// The candidate lines found the fast way are the regex's (and, for a
    /// literal with `k` or `s`, lines holding a KELVIN SIGN or LONG S
    /// besides), on text with every case mix, near misses and non-ASCII; a
    /// line confirmed without the regex is one it matches.
    #[test]
    fn candidates_are_the_regex_matches() {
        let text = "errno\nERRNO x\nErrNo\nerrn\nrrno\nxerrnoy\nerr no\néerrnoé\n\u{212a}errno\nerrn\u{f6}\n".repeat(3);
        let text =
            format!("{text}unsafe\nun\u{17f}afe\nUN\u{17f}AFE x\nunsaf\nkind \u{212a}ind\nask\ns\u{212a}ip\nSKIP\n");
        for query in ["errno", "rno", "e", "o\tx", "x(y", "errno x", "unsafe", "kind", "ask", "skip"] {
            let regex = RegexMatcherBuilder::new()
                .case_insensitive(true)
                .fixed_strings(true)
                .line_terminator(Some(b'\n'))
                .build(query)
                .unwrap();
            let kind = QueryKind { literal: true, ignore_case: true, multiline: false, word: false };
            let fast = SearchMatcher::new(regex.clone(), query, kind);
            assert!(fast.literals.is_some(), "{query}");
            let (mut at, mut first_line) = (0, None);
            for line in text.split_inclusive('\n') {
                let matched = regex.is_match(line.as_bytes()).unwrap();
                let candidate = match fast.find_candidate_line(line.as_bytes()).unwrap() {
                    Some(LineMatchKind::Candidate(i)) => Some(i),
                    None => None,
                    Some(LineMatchKind::Confirmed(i)) => {
                        assert!(matched, "{query}: {line:?} confirmed");
                        Some(i)
                    }
                };
                let signs = line.contains(['\u{212a}', '\u{17f}']);
                assert!(candidate.is_none_or(|i| i < line.len()));
                assert!(!matched || candidate.is_some(), "{query}: missed {line:?}");
                assert!(matched || candidate.is_none() || signs, "{query}: {line:?} is no candidate");
                if candidate.is_some() && first_line.is_none() {
                    first_line = Some((at, at + line.len()));
                }
                at += line.len();
            }
            // Over the whole text: the first candidate is in the first line
            // that has one.
            let cand = match fast.find_candidate_line(text.as_bytes()).unwrap() {
                Some(LineMatchKind::Candidate(i) | LineMatchKind::Confirmed(i)) => Some(i),
                None => None,
            };
            let first = regex.find(text.as_bytes()).unwrap().map(|m| m.start());
            match (cand, first_line) {
                (Some(c), Some((a, b))) => assert!(a <= c && c < b, "{query}"),
                (c, l) => assert!(c.is_none() && l.is_none(), "{query}"),
            }
            // No match comes before the first candidate's line.
            assert!(first.is_none_or(|f| first_line.is_some_and(|(a, _)| a <= f)), "{query}");
        }
        for query in ["sks", "é", "a\nb", ""] {
            let regex = RegexMatcherBuilder::new().case_insensitive(true).fixed_strings(true).build("x").unwrap();
            let kind = QueryKind { literal: true, ignore_case: true, multiline: false, word: false };
            assert!(SearchMatcher::new(regex, query, kind).literals.is_none(), "{query:?}");
        }
    }

    /// Alternations of words, either case, also as whole words: every
    /// line the regex matches holds a candidate, and no other does (but
    /// lines with the signs, or the words inside others with `-w`); only
    /// lines the regex matches are confirmed.
    #[test]
    fn alternations_find_the_regex_lines() {
        let text =
            "Create\ncreate x\nSTART\nstart\nrestart\nstop\nCrea te\nsta\u{17f}t\n_Create_\n\u{212a}ind a\u{17f}k\n"
                .repeat(2);
        for word in [false, true] {
            for (query, ignore_case) in [
                ("Create|Start", false),
                ("create|start", true),
                ("a|Cr|x_", false),
                ("zz|yy", true),
                ("create|start|stop|ask|sta", true),
                ("Create|Start|te|x_", false),
                ("kind|ask|desk|k_s", true),
            ] {
                let regex = RegexMatcherBuilder::new()
                    .case_insensitive(ignore_case)
                    .word(word)
                    .line_terminator(Some(b'\n'))
                    .build(query)
                    .unwrap();
                let kind = QueryKind { literal: false, ignore_case, multiline: false, word };
                let fast = SearchMatcher::new(regex.clone(), query, kind);
                assert!(fast.literals.is_some(), "{query}");
                for line in text.split_inclusive('\n') {
                    let matched = regex.is_match(line.as_bytes()).unwrap();
                    let found = fast.find_candidate_line(line.as_bytes()).unwrap();
                    let candidate = found.is_some();
                    let signs = line.contains(['\u{212a}', '\u{17f}']);
                    assert!(matched || !matches!(found, Some(LineMatchKind::Confirmed(_))), "{query}: {line:?}");
                    assert!(matched || !candidate || word || (signs && ignore_case), "{query}: {line:?}");
                    assert!(!matched || candidate, "{query} (-w {word}): {line:?} missed");
                }
            }
        }
        // Not plain words, or one literal that heeds case: the regex's own way.
        for (query, literal, ignore_case) in
            [("a.b|c", false, false), ("(a|b)", false, true), ("abc", true, false), ("a|", false, true)]
        {
            let regex = RegexMatcherBuilder::new().build("x").unwrap();
            let kind = QueryKind { literal, ignore_case, multiline: false, word: false };
            let fast = SearchMatcher::new(regex, query, kind);
            assert!(fast.literals.is_none(), "{query}");
        }
    }
}
