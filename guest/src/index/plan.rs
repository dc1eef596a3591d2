//! From a query to the three-byte sequences a matching file must hold: a
//! boolean query over the index's postings (after Russ Cox's "Regular
//! Expression Matching with a Trigram Index", simplified).
//!
//! The index keeps bytes as they are. A case-sensitive plan asks for them
//! as written; a case-insensitive one folds ASCII letters and asks, for
//! each trigram, for any of its ASCII case variants. Case rules beyond
//! ASCII come from the regex parser itself (with case insensitivity on,
//! `k` is the class `[Kk\u{212A}]`), so they are in the plan as the
//! alternatives they are. Either way the plan asks for a superset of the
//! files that can match, never fewer.

use std::collections::BTreeSet;

use regex_syntax::hir::{Class, Hir, HirKind};

use crate::request::TextQuery;
use crate::{CaseMode, QueryMode};

/// A condition on a file's trigrams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Query {
    /// Any file.
    All,
    Trigram(u32),
    And(Vec<Query>),
    Or(Vec<Query>),
}

/// A class with more members than this, or a set of strings larger than
/// `MAX_SET`, is not spelled out.
const MAX_CLASS: usize = 32;
const MAX_SET: usize = 32;
/// Exact strings longer than this are turned into their trigrams.
const MAX_EXACT: usize = 16;

/// The plan for `q`, or `None` when no trigram is required (every file must
/// be read).
pub fn plan(q: &TextQuery) -> Option<Query> {
    // Any file may hold a line that does not match.
    if q.invert {
        return None;
    }
    let pattern = match q.mode {
        QueryMode::Literal => regex_syntax::escape(&q.query),
        QueryMode::Regex => q.query.clone(),
    };
    let insensitive = match q.case {
        CaseMode::Sensitive => false,
        CaseMode::Insensitive => true,
        CaseMode::Smart => !any_uppercase_literal(&pattern),
    };
    // As the matcher parses it (a pattern it refuses never gets here; one
    // this parser refuses is scanned).
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(insensitive)
        .multi_line(true)
        .unicode(true)
        .utf8(false)
        .octal(false)
        .build()
        .parse(&pattern)
        .ok()?;
    match info(&hir, insensitive).query(insensitive) {
        Query::All => None,
        query => Some(query),
    }
}

/// Whether smart case makes the matcher case-sensitive for `pattern`: it
/// does when any literal of the pattern, in a class or not, is upper case
/// (grep-regex 0.1.14 `ast.rs`, `AstAnalysis`). Escapes such as `\W` are
/// not literals. A pattern that does not parse is planned insensitive
/// (the wider plan).
fn any_uppercase_literal(pattern: &str) -> bool {
    use regex_syntax::ast::{self, Ast, ClassSetItem};
    struct Upper(bool);
    impl ast::Visitor for Upper {
        type Output = bool;
        type Err = ();
        fn finish(self) -> Result<bool, ()> {
            Ok(self.0)
        }
        fn visit_pre(&mut self, a: &Ast) -> Result<(), ()> {
            if let Ast::Literal(l) = a {
                self.0 |= l.c.is_uppercase();
            }
            Ok(())
        }
        fn visit_class_set_item_pre(&mut self, item: &ClassSetItem) -> Result<(), ()> {
            match item {
                ClassSetItem::Literal(l) => self.0 |= l.c.is_uppercase(),
                ClassSetItem::Range(r) => self.0 |= r.start.c.is_uppercase() || r.end.c.is_uppercase(),
                _ => {}
            }
            Ok(())
        }
    }
    let Ok(parsed) = ast::parse::ParserBuilder::new().octal(false).build().parse(pattern) else { return false };
    ast::visit(&parsed, Upper(false)).unwrap_or(false)
}

type Set = BTreeSet<Vec<u8>>;

/// What is known of the strings a piece of the pattern matches.
struct Info {
    /// All of them (folded when the plan folds), when there are few.
    exact: Option<Set>,
    /// When not `exact`: strings of at most two bytes one of which starts
    /// (`prefix`) or ends (`suffix`) every match — all a neighbour needs to
    /// find the trigrams across the join; `{""}` when nothing is known.
    prefix: Set,
    suffix: Set,
    /// What any of them requires, beyond `exact`.
    query: Query,
}

impl Info {
    fn exact(set: Set) -> Info {
        Info { exact: Some(set), prefix: nothing(), suffix: nothing(), query: Query::All }
    }

    fn any() -> Info {
        Info { exact: None, prefix: nothing(), suffix: nothing(), query: Query::All }
    }

    /// How every match starts, two bytes at most.
    fn starts(&self) -> Set {
        self.exact.as_ref().map_or_else(|| self.prefix.clone(), front)
    }

    /// How every match ends, two bytes at most.
    fn ends(&self) -> Set {
        self.exact.as_ref().map_or_else(|| self.suffix.clone(), back)
    }

    /// Everything this piece requires, as a query.
    fn query(self, fold: bool) -> Query {
        let exact = match self.exact {
            Some(set) => strings(&set, fold),
            None => Query::All,
        };
        and(vec![self.query, exact])
    }

    /// The exact set turned into a query (when it has grown too large).
    fn settle(self, fold: bool) -> Info {
        let (prefix, suffix) = (self.starts(), self.ends());
        Info { exact: None, prefix, suffix, query: self.query(fold) }
    }
}

/// The set that says nothing: every string starts with "".
fn nothing() -> Set {
    BTreeSet::from([Vec::new()])
}

/// Every string of `a` followed by every string of `b`, when there are few.
fn cross(a: &Set, b: &Set) -> Option<Set> {
    (a.len() * b.len() <= MAX_SET)
        .then(|| a.iter().flat_map(|x| b.iter().map(move |y| [x.as_slice(), y].concat())).collect())
}

/// The first two bytes of each string.
fn front(set: &Set) -> Set {
    set.iter().map(|s| s[..s.len().min(2)].to_vec()).collect()
}

/// The last two bytes of each string.
fn back(set: &Set) -> Set {
    set.iter().map(|s| s[s.len().saturating_sub(2)..].to_vec()).collect()
}

/// Any of `set`, by trigrams.
fn strings(set: &Set, fold: bool) -> Query {
    or(set.iter().map(|s| trigrams_of(s, fold)).collect())
}

/// Strings as the plan keeps them: ASCII folded to lower case when `fold`.
fn folded(bytes: &[u8], fold: bool) -> Vec<u8> {
    if fold {
        bytes.to_ascii_lowercase()
    } else {
        bytes.to_vec()
    }
}

fn info(hir: &Hir, fold: bool) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::exact(nothing()),
        HirKind::Literal(lit) => Info::exact(BTreeSet::from([folded(&lit.0, fold)])),
        HirKind::Class(class) => match class_strings(class, fold) {
            Some(set) => Info::exact(set),
            None => Info::any(),
        },
        HirKind::Capture(cap) => info(&cap.sub, fold),
        HirKind::Repetition(rep) if rep.min == 0 => Info::any(),
        HirKind::Repetition(rep) => {
            let sub = info(&rep.sub, fold);
            let (prefix, suffix) = (sub.starts(), sub.ends());
            Info { exact: None, prefix, suffix, query: sub.query(fold) }
        }
        HirKind::Concat(subs) => {
            subs.iter().fold(Info::exact(nothing()), |acc, sub| concat(acc, info(sub, fold), fold))
        }
        HirKind::Alternation(subs) => {
            let infos: Vec<Info> = subs.iter().map(|s| info(s, fold)).collect();
            let total: Option<usize> = infos.iter().map(|i| i.exact.as_ref().map(BTreeSet::len)).sum();
            if total.is_some_and(|n| n <= MAX_SET) {
                return Info::exact(infos.into_iter().flat_map(|i| i.exact.unwrap_or_default()).collect());
            }
            let bounded = |set: Set| if set.len() <= MAX_SET { set } else { nothing() };
            let prefix = bounded(infos.iter().flat_map(Info::starts).collect());
            let suffix = bounded(infos.iter().flat_map(Info::ends).collect());
            Info { exact: None, prefix, suffix, query: or(infos.into_iter().map(|i| i.query(fold)).collect()) }
        }
    }
}

/// `a` then `b`: their exact strings joined while few, else what each
/// requires and the trigrams across the join (how `a` ends, then how `b`
/// starts).
fn concat(a: Info, b: Info, fold: bool) -> Info {
    if let (Some(x), Some(y)) = (&a.exact, &b.exact) {
        if let Some(set) = cross(x, y) {
            let longest = set.iter().map(Vec::len).max().unwrap_or(0);
            let joined = Info::exact(set);
            return if longest > MAX_EXACT { joined.settle(fold) } else { joined };
        }
    }
    let across = cross(&a.ends(), &b.starts()).map_or(Query::All, |set| strings(&set, fold));
    let prefix = match &a.exact {
        Some(x) => cross(x, &b.starts()).map_or_else(|| a.starts(), |set| front(&set)),
        None => a.prefix.clone(),
    };
    let suffix = match &b.exact {
        Some(y) => cross(&a.ends(), y).map_or_else(|| b.ends(), |set| back(&set)),
        None => b.suffix.clone(),
    };
    Info { exact: None, prefix, suffix, query: and(vec![a.query(fold), b.query(fold), across]) }
}

/// The strings a small class matches.
fn class_strings(class: &Class, fold: bool) -> Option<BTreeSet<Vec<u8>>> {
    let mut set = BTreeSet::new();
    match class {
        Class::Unicode(c) => {
            let n: u32 = c.ranges().iter().map(|r| r.end() as u32 - r.start() as u32 + 1).sum();
            if n as usize > MAX_CLASS {
                return None;
            }
            for r in c.ranges() {
                for ch in r.start()..=r.end() {
                    set.insert(folded(ch.to_string().as_bytes(), fold));
                }
            }
        }
        Class::Bytes(c) => {
            let n: usize = c.ranges().iter().map(|r| usize::from(r.end() - r.start()) + 1).sum();
            if n > MAX_CLASS {
                return None;
            }
            for r in c.ranges() {
                for b in r.start()..=r.end() {
                    set.insert(folded(&[b], fold));
                }
            }
        }
    }
    Some(set)
}

/// The trigrams of a string (`All` when it is shorter than three bytes);
/// when `fold`, each as any of its ASCII case variants.
pub(super) fn trigrams_of(s: &[u8], fold: bool) -> Query {
    let cases = |b: u8| if fold && b.is_ascii_lowercase() { vec![b, b.to_ascii_uppercase()] } else { vec![b] };
    let variants = |w: &[u8]| {
        let mut all = Vec::new();
        for a in cases(w[0]) {
            for b in cases(w[1]) {
                all.extend(cases(w[2]).into_iter().map(|c| Query::Trigram(trigram(a, b, c))));
            }
        }
        or(all)
    };
    and(s.windows(3).map(variants).collect())
}

pub fn trigram(a: u8, b: u8, c: u8) -> u32 {
    u32::from(a) << 16 | u32::from(b) << 8 | u32::from(c)
}

pub(super) fn and(parts: Vec<Query>) -> Query {
    let mut out = Vec::new();
    for p in parts {
        match p {
            Query::All => {}
            Query::And(inner) => out.extend(inner),
            p => out.push(p),
        }
    }
    out.dedup();
    match out.len() {
        0 => Query::All,
        1 => out.pop().unwrap_or(Query::All),
        _ => Query::And(out),
    }
}

fn or(parts: Vec<Query>) -> Query {
    let mut out = Vec::new();
    for p in parts {
        match p {
            Query::All => return Query::All,
            Query::Or(inner) => out.extend(inner),
            p => out.push(p),
        }
    }
    out.dedup();
    match out.len() {
        0 => Query::All,
        1 => out.pop().unwrap_or(Query::All),
        _ => factored(out),
    }
}

/// Any of `parts` (two or more), with what all of them require taken out
/// once: `(a AND x) OR (a AND y)` is `a AND (x OR y)`, the same files for
/// fewer lookups (`New[A-Z]` is 26 alternatives sharing `New`'s trigrams).
fn factored(parts: Vec<Query>) -> Query {
    let conjuncts = |q: &Query| match q {
        Query::And(inner) => inner.clone(),
        q => vec![q.clone()],
    };
    let mut common = conjuncts(&parts[0]);
    for p in &parts[1..] {
        let theirs = conjuncts(p);
        common.retain(|c| theirs.contains(c));
    }
    if common.is_empty() {
        return Query::Or(parts);
    }
    let rest = parts.iter().map(|p| and(conjuncts(p).into_iter().filter(|c| !common.contains(c)).collect())).collect();
    common.push(or(rest));
    and(common)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::TextQuery;

    fn q(query: &str, mode: QueryMode, case: CaseMode) -> TextQuery {
        let mut r = crate::SearchTextRequest::new(query);
        r.mode = Some(mode);
        r.case = Some(case);
        TextQuery::from_request(r, &mut Vec::new()).unwrap()
    }

    fn t(s: &str) -> Query {
        let b = s.as_bytes();
        Query::Trigram(trigram(b[0], b[1], b[2]))
    }

    #[test]
    fn literals_need_all_their_trigrams_in_their_case() {
        let p = plan(&q("Errno", QueryMode::Literal, CaseMode::Sensitive)).unwrap();
        assert_eq!(p, Query::And(vec![t("Err"), t("rrn"), t("rno")]));
        // Without case: any ASCII case of each.
        let p = plan(&q("Ab1", QueryMode::Literal, CaseMode::Insensitive)).unwrap();
        assert_eq!(p, Query::Or(vec![t("ab1"), t("aB1"), t("Ab1"), t("AB1")]));
        // Smart case follows the matcher: upper-case literals make it
        // sensitive, escapes like `\W` do not.
        assert_eq!(plan(&q("Ab1", QueryMode::Literal, CaseMode::Smart)).unwrap(), t("Ab1"));
        let class = |case| plan(&q("x[A-C]yz", QueryMode::Regex, case));
        assert_eq!(class(CaseMode::Smart), class(CaseMode::Sensitive));
        assert!(matches!(plan(&q("\\Wab1", QueryMode::Regex, CaseMode::Smart)).unwrap(), Query::Or(_)));
        // Too short to look up.
        assert_eq!(plan(&q("ab", QueryMode::Literal, CaseMode::Sensitive)), None);
    }

    #[test]
    fn alternations_classes_and_repetitions() {
        let p = plan(&q("foo|barx", QueryMode::Regex, CaseMode::Sensitive)).unwrap();
        assert_eq!(p, Query::Or(vec![Query::And(vec![t("bar"), t("arx")]), t("foo")]));
        // One short alternative: any file may match.
        assert_eq!(plan(&q("foo|ba", QueryMode::Regex, CaseMode::Sensitive)), None);
        // A small class is spelled out.
        let p = plan(&q("ab[cd]", QueryMode::Regex, CaseMode::Sensitive)).unwrap();
        assert_eq!(p, Query::Or(vec![t("abc"), t("abd")]));
        // Alternatives' common trigrams are looked up once.
        let p = plan(&q("abcd[X-Z]", QueryMode::Regex, CaseMode::Sensitive)).unwrap();
        assert_eq!(p, Query::And(vec![t("abc"), t("bcd"), Query::Or(vec![t("cdX"), t("cdY"), t("cdZ")])]));
        let p = plan(&q("abcd|abcde", QueryMode::Regex, CaseMode::Sensitive)).unwrap();
        assert_eq!(p, Query::And(vec![t("abc"), t("bcd")]));
        // A large class splits the literal; each side stands.
        let p = plan(&q("abc[a-zA-Z]+def", QueryMode::Regex, CaseMode::Sensitive)).unwrap();
        assert_eq!(p, Query::And(vec![t("abc"), t("def")]));
        // A smaller one is spelled out across both joins: how `abc` ends
        // then any letter, any letter then how `def` starts.
        let p = plan(&q("abc[a-z]+def", QueryMode::Regex, CaseMode::Sensitive)).unwrap();
        let letters = |f: &dyn Fn(char) -> String| or((b'a'..=b'z').map(|c| t(&f(c as char))).collect());
        assert_eq!(p, and(vec![t("abc"), letters(&|c| format!("bc{c}")), t("def"), letters(&|c| format!("{c}de"))]));
        // A group's strings are all of it, not its last part: `x` is not
        // next to `def` in `xabcqdefy`.
        let p = plan(&q("x(abc[a-z]+def)y", QueryMode::Regex, CaseMode::Sensitive)).unwrap();
        assert!(passes(&p, b"xabcqdefy"), "{p:?}");
        let Query::And(parts) = p else { panic!("{p:?}") };
        assert!(parts.contains(&t("xab")) && parts.contains(&t("efy")), "{parts:?}");
        // Optional parts require nothing.
        assert_eq!(plan(&q("(abc)?x*", QueryMode::Regex, CaseMode::Sensitive)), None);
        assert_eq!(plan(&q(".*", QueryMode::Regex, CaseMode::Sensitive)), None);
        let p = plan(&q("(abcd)+", QueryMode::Regex, CaseMode::Sensitive)).unwrap();
        assert_eq!(p, Query::And(vec![t("abc"), t("bcd")]));
    }

    #[test]
    fn case_insensitive_plans_keep_the_unicode_case_partners() {
        // KELVIN SIGN matches `k` without case: files with it must not be
        // left out.
        let p = plan(&q("kin", QueryMode::Literal, CaseMode::Insensitive)).unwrap();
        let kelvin = "\u{212A}".as_bytes();
        assert_eq!(p, or(vec![trigrams_of(b"kin", true), trigrams_of(&[kelvin, b"in"].concat(), true)]));
    }

    /// Whether a file holding exactly the trigrams of `s` passes `q`.
    fn passes(q: &Query, s: &[u8]) -> bool {
        match q {
            Query::All => true,
            Query::Trigram(t) => s.windows(3).any(|w| trigram(w[0], w[1], w[2]) == *t),
            Query::And(qs) => qs.iter().all(|q| passes(q, s)),
            Query::Or(qs) => qs.iter().any(|q| passes(q, s)),
        }
    }

    /// xorshift: a number below `n`.
    fn next(rng: &mut u64, n: u64) -> u64 {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        *rng % n
    }

    /// A random pattern over a few letters, as pieces: literals, classes,
    /// anchors, groups (capturing or not) of alternatives, repeated.
    enum Piece {
        Lit(&'static str),
        Class(&'static str, &'static [u8]),
        Anchor(&'static str),
        Group(bool, Vec<Vec<Piece>>),
        Rep(Box<Piece>, &'static str, u64, u64),
    }

    fn seq(rng: &mut u64, depth: u32) -> Vec<Piece> {
        let classes: [(&str, &[u8]); 6] = [
            ("[ab]", b"ab"),
            ("[a-c]", b"abc"),
            ("[a-z]", b"abcxyz"),
            ("[A-C]", b"ABC"),
            ("[^a]", b"bcx B"),
            (".", b"abcxA "),
        ];
        let reps = [("?", 0, 1), ("*", 0, 3), ("+", 1, 3), ("{2}", 2, 2), ("{1,3}", 1, 3)];
        (0..1 + next(rng, 4))
            .map(|_| {
                let piece = match next(rng, if depth > 0 { 12 } else { 8 }) {
                    0..=2 => Piece::Lit(["ab", "abc", "b", "ca", "Ab", "bcab"][next(rng, 6) as usize]),
                    3 => {
                        let (c, members) = classes[next(rng, 6) as usize];
                        Piece::Class(c, members)
                    }
                    4 => return Piece::Anchor(["^", "$", "\\b"][next(rng, 3) as usize]),
                    5..=7 => Piece::Lit(["a", "c", "x"][next(rng, 3) as usize]),
                    8 | 9 => Piece::Group(true, vec![seq(rng, depth - 1)]),
                    k => Piece::Group(k == 10, vec![seq(rng, depth - 1), seq(rng, depth - 1)]),
                };
                match next(rng, 8) as usize {
                    r @ 0..=4 => {
                        let (s, min, max) = reps[r];
                        Piece::Rep(Box::new(piece), s, min, max)
                    }
                    _ => piece,
                }
            })
            .collect()
    }

    fn render(seq: &[Piece]) -> String {
        seq.iter().map(render_one).collect()
    }

    fn render_one(p: &Piece) -> String {
        match p {
            Piece::Lit(s) | Piece::Class(s, _) | Piece::Anchor(s) => s.to_string(),
            Piece::Group(capture, alts) => {
                let inner: Vec<String> = alts.iter().map(|a| render(a)).collect();
                format!("({}{})", if *capture { "" } else { "?:" }, inner.join("|"))
            }
            // A literal of several letters is grouped so that the
            // repetition covers all of it.
            Piece::Rep(p, rep, ..) => format!("(?:{}){rep}", render_one(p)),
        }
    }

    /// A text the pieces can match (anchors aside: the regex decides).
    fn sample(seq: &[Piece], rng: &mut u64, out: &mut Vec<u8>) {
        for p in seq {
            sample_one(p, rng, out);
        }
    }

    fn sample_one(p: &Piece, rng: &mut u64, out: &mut Vec<u8>) {
        match p {
            Piece::Lit(s) => out.extend_from_slice(s.as_bytes()),
            Piece::Class(_, members) => out.push(members[next(rng, members.len() as u64) as usize]),
            Piece::Anchor(_) => {}
            Piece::Group(_, alts) => sample(&alts[next(rng, alts.len() as u64) as usize], rng, out),
            Piece::Rep(p, _, min, max) => {
                for _ in 0..min + next(rng, max - min + 1) {
                    sample_one(p, rng, out);
                }
            }
        }
    }

    #[test]
    fn plans_never_leave_out_a_matching_text() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut checked = 0;
        for _ in 0..4000 {
            let seq = seq(&mut rng, 2);
            let pat = render(&seq);
            for case in [CaseMode::Sensitive, CaseMode::Insensitive] {
                let Some(plan) = plan(&q(&pat, QueryMode::Regex, case)) else { continue };
                let re = regex::bytes::RegexBuilder::new(&pat)
                    .case_insensitive(case == CaseMode::Insensitive)
                    .multi_line(true)
                    .build()
                    .unwrap();
                let noise = |rng: &mut u64| -> Vec<u8> {
                    (0..next(rng, 4)).map(|_| b"abcxAB \n"[next(rng, 8) as usize]).collect()
                };
                for _ in 0..20 {
                    let mut text = noise(&mut rng);
                    sample(&seq, &mut rng, &mut text);
                    text.extend(noise(&mut rng));
                    if re.is_match(&text) {
                        checked += 1;
                        assert!(
                            passes(&plan, &text),
                            "{pat:?} ({case:?}) matches {:?}, its plan {plan:?} leaves it out",
                            String::from_utf8_lossy(&text)
                        );
                    }
                }
            }
        }
        assert!(checked > 10_000, "only {checked} matching texts");
    }
}
