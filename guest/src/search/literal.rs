//! The matcher a search runs: the regex matcher, with a faster way to find
//! candidate lines for the commonest query of all, a case-insensitive
//! literal (the agent tools' default).
//!
//! Natively the regex engine finds such a literal with Teddy, a SIMD
//! multi-literal search; wasm has no Teddy, and the engine falls back to an
//! Aho-Corasick automaton that steps a byte at a time over every case
//! variant (`errno`, `Errno`, … 32 of them). Here a case-insensitive ASCII
//! literal is found instead by `memchr2` (SIMD in wasm too) on its rarest
//! byte in both cases, then a comparison of the bytes around it. Every
//! ASCII letter folds to its two ASCII cases only, but `k` (also U+212A
//! KELVIN SIGN) and `s` (also U+017F LONG S): the rare byte is never one of
//! those, and where the comparison fails but the bytes around could hold
//! one of the two signs, the line is a candidate all the same. The searcher
//! confirms every candidate line with the regex itself (word boundaries
//! and all), so the prefilter only has to miss nothing.

use grep_matcher::{LineMatchKind, LineTerminator, Match, Matcher, NoError};
use grep_regex::{RegexCaptures, RegexMatcher};

pub struct SearchMatcher {
    regex: RegexMatcher,
    literal: Option<Literal>,
}

/// A case-insensitive ASCII literal, lower-cased; where its rarest byte is
/// (never `k` or `s`); how many `k`s and `s`s are before and after it.
struct Literal {
    lower: Vec<u8>,
    rare: usize,
    signs: (usize, usize),
}

/// Whether the ASCII letter `b` also matches a non-ASCII sign.
fn has_sign(b: u8) -> bool {
    matches!(b | 0x20, b'k' | b's')
}

impl SearchMatcher {
    /// `regex`, and for a case-insensitive, line-by-line search of `query`
    /// as a literal, the fast way to its candidate lines.
    pub fn new(regex: RegexMatcher, query: &str, literal_ci: bool) -> SearchMatcher {
        let fits = literal_ci && query.bytes().all(|b| b.is_ascii() && b != b'\n' && b != b'\r');
        let lower = query.to_ascii_lowercase().into_bytes();
        let rare = (0..lower.len()).filter(|&i| !has_sign(lower[i])).min_by_key(|&i| rank(lower[i]));
        let literal = rare.filter(|_| fits).map(|rare| {
            let before = lower[..rare].iter().filter(|&&b| has_sign(b)).count();
            let after = lower[rare..].iter().filter(|&&b| has_sign(b)).count();
            Literal { lower, rare, signs: (before, after) }
        });
        SearchMatcher { regex, literal }
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
    type Captures = RegexCaptures;
    type Error = NoError;

    fn find_at(&self, haystack: &[u8], at: usize) -> Result<Option<Match>, NoError> {
        self.regex.find_at(haystack, at)
    }

    fn new_captures(&self) -> Result<RegexCaptures, NoError> {
        self.regex.new_captures()
    }

    fn capture_count(&self) -> usize {
        self.regex.capture_count()
    }

    fn capture_index(&self, name: &str) -> Option<usize> {
        self.regex.capture_index(name)
    }

    fn captures_at(&self, haystack: &[u8], at: usize, caps: &mut RegexCaptures) -> Result<bool, NoError> {
        self.regex.captures_at(haystack, at, caps)
    }

    fn shortest_match_at(&self, haystack: &[u8], at: usize) -> Result<Option<usize>, NoError> {
        self.regex.shortest_match_at(haystack, at)
    }

    fn non_matching_bytes(&self) -> Option<&grep_matcher::ByteSet> {
        self.regex.non_matching_bytes()
    }

    fn line_terminator(&self) -> Option<LineTerminator> {
        self.regex.line_terminator()
    }

    fn find_candidate_line(&self, haystack: &[u8]) -> Result<Option<LineMatchKind>, NoError> {
        let Some(lit) = &self.literal else { return self.regex.find_candidate_line(haystack) };
        let (n, k) = (lit.lower.len(), lit.rare);
        let r = lit.lower[k];
        let mut from = k;
        while from < haystack.len() {
            let Some(i) = memchr::memchr2(r, r.to_ascii_uppercase(), &haystack[from..]) else { break };
            let at = from + i;
            let start = at - k;
            if haystack.get(start..start + n).is_some_and(|w| w.eq_ignore_ascii_case(&lit.lower)) {
                return Ok(Some(LineMatchKind::Candidate(start)));
            }
            // A KELVIN SIGN (E2 84 AA) or LONG S (C5 BF) where a `k` or `s`
            // could be: let the regex judge the line (it holds `at`).
            if lit.signs != (0, 0) {
                // Within the line of `at` (a match never crosses one).
                let lo = at.saturating_sub(k + 2 * lit.signs.0);
                let lo = memchr::memrchr(b'\n', &haystack[lo..at]).map_or(lo, |i| lo + i + 1);
                let hi = (at + n - k + 2 * lit.signs.1).min(haystack.len());
                let hi = memchr::memchr(b'\n', &haystack[at..hi]).map_or(hi, |i| at + i);
                if memchr::memchr2(0xe2, 0xc5, &haystack[lo..hi]).is_some() {
                    return Ok(Some(LineMatchKind::Candidate(at)));
                }
            }
            from = at + 1;
        }
        Ok(None)
    }
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
            let m = RegexMatcherBuilder::new().case_insensitive(true).fixed_strings(true).build(&(l as char).to_string()).unwrap();
            let mut others = Vec::new();
            // Case partners of ASCII letters are all in the BMP.
            for c in (0..=0xffffu32).filter_map(char::from_u32) {
                let mut buf = [0; 4];
                if c.to_ascii_lowercase() as u32 != l as u32 && m.is_match(c.encode_utf8(&mut buf).as_bytes()).unwrap() {
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
    /// besides), on text with every case mix, near misses and non-ASCII.
    #[test]
    fn candidates_are_the_regex_matches() {
        let text = "errno\nERRNO x\nErrNo\nerrn\nrrno\nxerrnoy\nerr no\néerrnoé\n\u{212a}errno\nerrn\u{f6}\n".repeat(3);
        let text = format!("{text}unsafe\nun\u{17f}afe\nUN\u{17f}AFE x\nunsaf\nkind \u{212a}ind\nask\ns\u{212a}ip\nSKIP\n");
        for query in ["errno", "rno", "e", "o\tx", "x(y", "errno x", "unsafe", "kind", "ask", "skip"] {
            let regex = RegexMatcherBuilder::new()
                .case_insensitive(true)
                .fixed_strings(true)
                .line_terminator(Some(b'\n'))
                .build(query)
                .unwrap();
            let fast = SearchMatcher::new(regex.clone(), query, true);
            assert!(fast.literal.is_some(), "{query}");
            let (mut at, mut first_line) = (0, None);
            for line in text.split_inclusive('\n') {
                let matched = regex.is_match(line.as_bytes()).unwrap();
                let candidate = match fast.find_candidate_line(line.as_bytes()).unwrap() {
                    Some(LineMatchKind::Candidate(i)) => Some(i),
                    None => None,
                    Some(LineMatchKind::Confirmed(_)) => panic!("only candidates"),
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
                Some(LineMatchKind::Candidate(i)) => Some(i),
                _ => None,
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
            assert!(SearchMatcher::new(regex, query, true).literal.is_none(), "{query:?}");
        }
    }
}
