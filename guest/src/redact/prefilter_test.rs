//! The prefilter's tests: it finds every line a rule needs, and redaction
//! through it is redaction of every line.

use super::prefilter::*;
use super::*;

/// The lines of `text` that hold a gate literal, found one by one.
fn naive(text: &[u8]) -> Vec<Line> {
    let gates = gates();
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = newline(&text[start..]).map_or(text.len(), |i| start + i);
        let line = &text[start..end];
        let rules = gates
            .iter()
            .filter(|(_, fold, w)| {
                let w = w.as_bytes();
                line.windows(w.len()).any(|x| if *fold { x.eq_ignore_ascii_case(w) } else { x == w })
            })
            .fold(0, |acc, (rule, _, _)| acc | rule);
        if rules != 0 {
            out.push(Line { start, end, rules });
        }
        start = end + 1;
    }
    out
}

/// `text`'s edits with the prefilter and its shortcuts, and reading every line.
fn both(before: &[u8], text: &[u8]) -> (Vec<Edit>, Vec<Edit>) {
    let gated = find(before, text, before.len() as u64, &mut Memo::default());
    EVERY_LINE.set(true);
    let every = find(before, text, before.len() as u64, &mut Memo::default());
    EVERY_LINE.set(false);
    (gated, every)
}

#[test]
fn gates_cover_their_patterns() {
    use regex_syntax::hir::literal::Extractor;
    // Every match of each pattern starts with one of its literal prefixes
    // (a finite set: what the regex crate's own prefilter looks for); each
    // prefix holds one of the rule's gate literals.
    let gates = gates();
    for (rule, pattern) in [(FORMAT, formats_pattern()), (AUTH, AUTH_PAT.to_string()), (ATTR, ATTR_PAT.to_string())] {
        let hir = regex_syntax::ParserBuilder::new().utf8(false).build().parse(&pattern).unwrap();
        let seq = Extractor::new().limit_total(20_000).extract(&hir);
        let prefixes = seq.literals().unwrap_or_else(|| panic!("no finite prefixes for {pattern}"));
        assert!(!prefixes.is_empty());
        for p in prefixes {
            let p = p.as_bytes();
            let held = gates.iter().filter(|(r, _, _)| *r == rule).any(|(_, fold, w)| {
                let w = w.as_bytes();
                p.windows(w.len()).any(|x| if *fold { x.eq_ignore_ascii_case(w) } else { x == w })
            });
            assert!(held, "prefix {:?} of rule {rule} holds no gate", String::from_utf8_lossy(p));
        }
    }
    // The keyword scan finds the words of `KEYWORDS`, in any case, and no
    // others; each is a gate.
    let words: Vec<&str> = KEYWORDS.split_ascii_whitespace().collect();
    for w in &words {
        assert!(gates.contains(&(KEYWORD, true, w.to_string())), "{w}");
    }
    let text = "access auth api bearer credential creds key password passwd passphrase pass pwd secret token";
    let found: Vec<&str> = keywords(text.as_bytes()).map(|(s, e)| &text[s..e]).collect();
    assert_eq!(found.len(), words.len());
    for w in found {
        assert!(words.contains(&w), "{w}");
    }
}

#[test]
fn the_scan_finds_a_literal_at_every_offset_and_case() {
    for (rule, fold, w) in gates() {
        for variant in [w.clone(), w.to_ascii_uppercase(), w.to_ascii_lowercase()] {
            let found = !fold && variant != w;
            for pad in 0..40 {
                for tail in [0, 1, 2, 17, 40] {
                    // (Around it, bytes no literal holds: `#`, and non-ASCII
                    // bytes whose case bit differs from a letter's.)
                    let mut text = vec![b'#'; pad];
                    if pad % 3 == 1 {
                        text[pad.saturating_sub(1)..].fill(0xe1);
                    }
                    text.extend_from_slice(variant.as_bytes());
                    text.extend(std::iter::repeat_n(if tail % 2 == 0 { b'#' } else { 0xc1 }, tail));
                    let lines = lines(&text);
                    assert_eq!(lines, naive(&text), "{variant:?} after {pad}, {tail} after");
                    if !found {
                        assert!(lines.iter().any(|l| l.rules & rule != 0), "{variant:?} after {pad}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_scan_finds_the_lines_one_by_one_would() {
    let gates = gates();
    let mut seed = 7u64;
    let mut next = |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    for _ in 0..400 {
        let mut text = Vec::new();
        for _ in 0..next(40) {
            match next(10) {
                0..=2 => {
                    let (_, _, w) = &gates[next(gates.len())];
                    let w = w.as_bytes();
                    // Cut, or in another case, at times.
                    let cut = if next(4) == 0 { next(w.len()) + 1 } else { w.len() };
                    text.extend(w[..cut].iter().map(|&b| if next(3) == 0 { b ^ 0x20 } else { b }));
                }
                3 => text.push(b'\n'),
                4 => text.push(0x80 + next(128) as u8),
                _ => text.extend((0..next(20)).map(|_| b" aeiopstkyAPKSTnm_-.=\"'~Q~"[next(26)])),
            }
        }
        assert_eq!(lines(&text), naive(&text), "{:?}", String::from_utf8_lossy(&text));
    }
}

#[test]
fn gated_redaction_is_redaction_of_every_line() {
    // Real files: this crate's sources, the tests' samples among them.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut dirs = vec![root.join("src"), root.join("../host/src"), root.join("../docs"), root.join("../tests")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                files.push(bytes);
            }
        }
    }
    assert!(files.len() > 20);
    let mut redacted = 0;
    for file in &files {
        let (gated, every) = both(b"", file);
        assert_eq!(gated, every);
        redacted += gated.len();
        // In pieces, with the lines before.
        let mut start = 0;
        while start < file.len() {
            let end = file[start..]
                .iter()
                .enumerate()
                .filter(|(_, &c)| c == b'\n')
                .nth(37)
                .map_or(file.len(), |(i, _)| start + i + 1);
            let before = &file[start.saturating_sub(LOOKBACK)..start];
            let (gated, every) = both(before, &file[start..end]);
            assert_eq!(gated, every);
            start = end;
        }
    }
    assert!(redacted > 50, "{redacted}");
}

#[test]
fn gated_redaction_of_a_value_far_below_a_keyword() {
    // The walk up from a value stops `MAX_VALUE_LINES` lines above it.
    for gap in [60, 62, 63, 64, 65, 66, 70] {
        let mut file = String::from("config:\n  password:\n");
        for _ in 0..gap {
            file += "    # k\n";
        }
        file += "    Zq8rT3vL0xN7aB2cQ9\n";
        let (gated, every) = both(b"", file.as_bytes());
        assert_eq!(gated, every, "{gap}");
        assert_eq!(gated.is_empty(), gap > 63, "{gap}");
    }
}

#[test]
fn harmless_names_are_looked_for_where_their_words_start() {
    // `harmless_name` looks only where a name's byte is one of these letters.
    let letters = b"ackprst";
    let words = ["author", "rapid", "capital", "random"];
    let stems = BEFORE.iter().chain(AFTER.iter()).map(|(stem, _)| *stem);
    for w in words.into_iter().chain(stems) {
        assert!(letters.contains(&w.as_bytes()[0]), "{w}");
    }
}
