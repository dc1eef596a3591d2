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
const MAX_CLASS: usize = 8;
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

/// What is known of the strings a piece of the pattern matches.
struct Info {
    /// All of them (folded when the plan folds), when there are few.
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
    fn query(self, fold: bool) -> Query {
        let exact = match self.exact {
            Some(set) => or(set.iter().map(|s| trigrams_of(s, fold)).collect()),
            None => Query::All,
        };
        and(vec![self.query, exact])
    }

    /// The exact set turned into a query (when it has grown too large).
    fn settle(self, fold: bool) -> Info {
        Info { exact: None, query: self.query(fold) }
    }
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
        HirKind::Empty | HirKind::Look(_) => Info::exact(BTreeSet::from([Vec::new()])),
        HirKind::Literal(lit) => Info::exact(BTreeSet::from([folded(&lit.0, fold)])),
        HirKind::Class(class) => match class_strings(class, fold) {
            Some(set) => Info::exact(set),
            None => Info::any(),
        },
        HirKind::Capture(cap) => info(&cap.sub, fold),
        HirKind::Repetition(rep) if rep.min == 0 => Info::any(),
        HirKind::Repetition(rep) => Info { exact: None, query: info(&rep.sub, fold).query(fold) },
        HirKind::Concat(subs) => {
            let mut acc = Info::exact(BTreeSet::from([Vec::new()]));
            for sub in subs {
                let next = info(sub, fold);
                acc = match (acc.exact, next.exact) {
                    (Some(a), Some(b)) if a.len() * b.len() <= MAX_SET => {
                        let set: BTreeSet<Vec<u8>> =
                            a.iter().flat_map(|x| b.iter().map(move |y| [x.as_slice(), y].concat())).collect();
                        let query = and(vec![acc.query, next.query]);
                        let joined = Info { exact: Some(set), query };
                        let longest = joined.exact.as_ref().map_or(0, |s| s.iter().map(Vec::len).max().unwrap_or(0));
                        if longest > MAX_EXACT {
                            joined.settle(fold)
                        } else {
                            joined
                        }
                    }
                    (a, b) => {
                        // What spans the join is given up; each side's
                        // own requirements hold.
                        let left = Info { exact: a, query: acc.query }.query(fold);
                        Info { exact: b, query: and(vec![left, next.query]) }
                    }
                };
            }
            acc
        }
        HirKind::Alternation(subs) => {
            let infos: Vec<Info> = subs.iter().map(|s| info(s, fold)).collect();
            let total: Option<usize> = infos.iter().map(|i| i.exact.as_ref().map(BTreeSet::len)).sum();
            if total.is_some_and(|n| n <= MAX_SET) && infos.iter().all(|i| i.query == Query::All) {
                Info::exact(infos.into_iter().flat_map(|i| i.exact.unwrap_or_default()).collect())
            } else {
                Info { exact: None, query: or(infos.into_iter().map(|i| i.query(fold)).collect()) }
            }
        }
    }
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
        assert_eq!(p, or(vec![trigrams_of(b"kin", true), trigrams_of(&[kelvin, b"in"].concat(), true)]));
    }
}
