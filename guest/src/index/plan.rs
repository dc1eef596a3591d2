//! From a query to the three-byte sequences a matching file must hold: a
//! boolean query over the index's postings (after Russ Cox's "Regular
//! Expression Matching with a Trigram Index", simplified).
//!
//! The index folds ASCII letters to lower case, so the plan does too: it
//! asks for a superset of the files that can match, never fewer. Case
//! rules beyond ASCII come from the regex parser itself (with case
//! insensitivity on, `k` is the class `[Kk\u{212A}]`), so they are in the
//! plan as the alternatives they are.

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
const MAX_CLASS: usize = 8;
const MAX_SET: usize = 32;
/// Exact strings longer than this are turned into their trigrams.
const MAX_EXACT: usize = 16;

/// The plan for `q`, or `None` when no trigram is required (every file must
/// be read).
pub fn plan(q: &TextQuery) -> Option<Query> {
    // Smart case is planned as insensitive: the matcher's rule for it
    // (upper-case literals only, escapes and classes aside) is not this
    // module's to copy, and insensitive plans ask for more files, not fewer.
    let insensitive = q.case != CaseMode::Sensitive;
    let pattern = match q.mode {
        QueryMode::Literal => regex_syntax::escape(&q.query),
        QueryMode::Regex => q.query.clone(),
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
    match info(&hir).query() {
        Query::All => None,
        query => Some(query),
    }
}

/// What is known of the strings a piece of the pattern matches.
struct Info {
    /// All of them (folded), when there are few.
    exact: Option<BTreeSet<Vec<u8>>>,
    /// What any of them requires, beyond `exact`.
    query: Query,
}

impl Info {
    fn exact(set: BTreeSet<Vec<u8>>) -> Info {
        Info { exact: Some(set), query: Query::All }
    }

    fn any() -> Info {
        Info { exact: None, query: Query::All }
    }

    /// Everything this piece requires, as a query.
    fn query(self) -> Query {
        let exact = match self.exact {
            Some(set) => or(set.iter().map(|s| trigrams_of(s)).collect()),
            None => Query::All,
        };
        and(vec![self.query, exact])
    }

    /// The exact set turned into a query (when it has grown too large).
    fn settle(self) -> Info {
        Info { exact: None, query: self.query() }
    }
}

fn fold(bytes: &[u8]) -> Vec<u8> {
    bytes.to_ascii_lowercase()
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::exact(BTreeSet::from([Vec::new()])),
        HirKind::Literal(lit) => Info::exact(BTreeSet::from([fold(&lit.0)])),
        HirKind::Class(class) => match class_strings(class) {
            Some(set) => Info::exact(set),
            None => Info::any(),
        },
        HirKind::Capture(cap) => info(&cap.sub),
        HirKind::Repetition(rep) if rep.min == 0 => Info::any(),
        HirKind::Repetition(rep) => Info { exact: None, query: info(&rep.sub).query() },
        HirKind::Concat(subs) => {
            let mut acc = Info::exact(BTreeSet::from([Vec::new()]));
            for sub in subs {
                let next = info(sub);
                acc = match (acc.exact, next.exact) {
                    (Some(a), Some(b)) if a.len() * b.len() <= MAX_SET => {
                        let set: BTreeSet<Vec<u8>> =
                            a.iter().flat_map(|x| b.iter().map(move |y| [x.as_slice(), y].concat())).collect();
                        let query = and(vec![acc.query, next.query]);
                        let joined = Info { exact: Some(set), query };
                        let longest = joined.exact.as_ref().map_or(0, |s| s.iter().map(Vec::len).max().unwrap_or(0));
                        if longest > MAX_EXACT {
                            joined.settle()
                        } else {
                            joined
                        }
                    }
                    (a, b) => {
                        // What spans the join is given up; each side's
                        // own requirements hold.
                        let left = Info { exact: a, query: acc.query }.query();
                        Info { exact: b, query: and(vec![left, next.query]) }
                    }
                };
            }
            acc
        }
        HirKind::Alternation(subs) => {
            let infos: Vec<Info> = subs.iter().map(info).collect();
            let total: Option<usize> = infos.iter().map(|i| i.exact.as_ref().map(BTreeSet::len)).sum();
            if total.is_some_and(|n| n <= MAX_SET) && infos.iter().all(|i| i.query == Query::All) {
                Info::exact(infos.into_iter().flat_map(|i| i.exact.unwrap_or_default()).collect())
            } else {
                Info { exact: None, query: or(infos.into_iter().map(Info::query).collect()) }
            }
        }
    }
}

/// The strings a small class matches, folded.
fn class_strings(class: &Class) -> Option<BTreeSet<Vec<u8>>> {
    let mut set = BTreeSet::new();
    match class {
        Class::Unicode(c) => {
            let n: u32 = c.ranges().iter().map(|r| r.end() as u32 - r.start() as u32 + 1).sum();
            if n as usize > MAX_CLASS {
                return None;
            }
            for r in c.ranges() {
                for ch in r.start()..=r.end() {
                    set.insert(fold(ch.to_string().as_bytes()));
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
                    set.insert(fold(&[b]));
                }
            }
        }
    }
    Some(set)
}

/// The trigrams of a folded string (`All` when it is shorter than three bytes).
fn trigrams_of(s: &[u8]) -> Query {
    and(s.windows(3).map(|w| Query::Trigram(trigram(w[0], w[1], w[2]))).collect())
}

pub fn trigram(a: u8, b: u8, c: u8) -> u32 {
    u32::from(a) << 16 | u32::from(b) << 8 | u32::from(c)
}

fn and(parts: Vec<Query>) -> Query {
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
        _ => Query::Or(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::TextQuery;

    fn q(query: &str, mode: QueryMode, case: CaseMode) -> TextQuery {
        let mut r = crate::request::text_request(query);
        r.mode = Some(mode);
        r.case = Some(case);
        TextQuery::from_request(r, &mut Vec::new()).unwrap()
    }

    fn t(s: &str) -> Query {
        let b = s.as_bytes();
        Query::Trigram(trigram(b[0], b[1], b[2]))
    }

    #[test]
    fn literals_need_all_their_trigrams_folded() {
        let p = plan(&q("Errno", QueryMode::Literal, CaseMode::Sensitive)).unwrap();
        assert_eq!(p, Query::And(vec![t("err"), t("rrn"), t("rno")]));
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
        // A large class splits the literal; each side stands.
        let p = plan(&q("abc[a-z]+def", QueryMode::Regex, CaseMode::Sensitive)).unwrap();
        assert_eq!(p, Query::And(vec![t("abc"), t("def")]));
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
        assert_eq!(p, Query::Or(vec![t("kin"), trigrams_of(&[kelvin, b"in"].concat())]));
    }
}
