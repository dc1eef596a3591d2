use super::*;
use crate::{BinaryMode, QueryMode, SearchTextRequest, SearchTextResponse};

/// A workspace of `files` whose times are past the racy window, and an
/// index directory beside it.
fn setup(files: &[(&str, &[u8])]) -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    for (name, text) in files {
        write(ws.path(), name, text);
    }
    std::thread::sleep(std::time::Duration::from_nanos(RACY_NS + 100_000_000));
    (ws, tempfile::tempdir().unwrap())
}

fn write(root: &Path, name: &str, text: &[u8]) {
    let p = root.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn answer(r: &SearchTextResponse) -> String {
    let mut r = r.clone();
    r.stats = crate::page::empty_stats();
    format!("{r:?}")
}

fn regex(query: &str) -> SearchTextRequest {
    SearchTextRequest { mode: Some(QueryMode::Regex), ..SearchTextRequest::new(query) }
}

#[test]
fn a_search_in_another_encoding_or_of_every_line_reads_every_file() {
    let utf16: Vec<u8> = "needle in UTF-16\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let (root, idx) = setup(&[("latin1.txt", b"un caf\xe9 noir\n"), ("utf16.txt", &utf16), ("utf8.txt", b"needle\n")]);
    let scan = Workspace::new(root.path());
    let indexed = Workspace::new(root.path()).with_index_dir(idx.path());
    indexed.refresh_index().unwrap();
    for (encoding, query, found) in
        [("latin1", "café", "latin1.txt"), ("utf-16le", "needle", "utf16.txt"), ("none", "needle", "utf8.txt")]
    {
        let request = SearchTextRequest { encoding: Some(encoding.into()), ..SearchTextRequest::new(query) };
        let a = scan.search_text(request.clone()).unwrap();
        let b = indexed.search_text(request).unwrap();
        assert_eq!(answer(&a), answer(&b), "-E {encoding}");
        assert!(b.matches.iter().any(|m| m.path == found), "-E {encoding}: {b:?}");
    }
    // rg's --passthru prints every line of every file, a match or not.
    let request = SearchTextRequest { passthru: true, ..SearchTextRequest::new("café") };
    let (a, b) = (scan.search_text(request.clone()).unwrap(), indexed.search_text(request).unwrap());
    assert_eq!(answer(&a), answer(&b), "--passthru");
    assert!(b.matches.iter().any(|m| m.path == "utf8.txt"), "{b:?}");
}

#[test]
fn utf16_files_are_indexed_as_the_text_they_transcode_to() {
    let le = |t: &str| [&[0xff, 0xfe][..], &t.encode_utf16().flat_map(u16::to_le_bytes).collect::<Vec<u8>>()].concat();
    let be = |t: &str| [&[0xfe, 0xff][..], &t.encode_utf16().flat_map(u16::to_be_bytes).collect::<Vec<u8>>()].concat();
    // (\u{6e65} is the bytes `en` in UTF-16LE: the raw bytes spell what
    // the text does not.)
    let odd = [le("\u{6e65}\u{6c64}x"), vec![0xd8, 0x00, 0x41]].concat();
    let (root, idx) = setup(&[
        ("le.txt", &le("a needle in UTF-16LE, café\n")),
        ("be.txt", &be("another needle, big-endian\n")),
        ("nul.txt", &le("needle\0after a NUL\n")),
        ("odd.txt", &odd),
        ("plain.txt", b"nothing here\n"),
    ]);
    let scan = Workspace::new(root.path());
    let indexed = Workspace::new(root.path()).with_index_dir(idx.path());
    indexed.refresh_index().unwrap();
    let requests = [
        SearchTextRequest::new("needle"),
        SearchTextRequest::new("café"),
        SearchTextRequest::new("nowhere at all"),
        regex("(?-u)\\xef\\xbf\\xbd"),
        regex("endl"),
        regex("\u{feff}"),
        SearchTextRequest { multiline: true, ..regex("needle(.|\n)*big") },
        SearchTextRequest { encoding: Some("none".into()), binary: Some(BinaryMode::Text), ..regex("(?-u)n\\x00e") },
        SearchTextRequest { encoding: Some("none".into()), binary: Some(BinaryMode::Text), ..regex("endl") },
        SearchTextRequest { encoding: Some("utf-16le".into()), ..SearchTextRequest::new("needle") },
    ];
    for request in requests {
        let a = scan.search_text(request.clone()).unwrap();
        let b = indexed.search_text(request.clone()).unwrap();
        assert_eq!(answer(&a), answer(&b), "{request:?}");
    }
    // Read only where the text may match (nul.txt, whose text holds a NUL,
    // is always read): no longer every UTF-16 file.
    let r = indexed.search_text(SearchTextRequest::new("nowhere at all")).unwrap();
    assert_eq!((r.stats.index, r.stats.files_scanned), (IndexUse::Served, 1));
    let r = indexed.search_text(SearchTextRequest::new("big-endian")).unwrap();
    assert_eq!((r.stats.files_scanned, r.matches.len()), (2, 1));
}

#[test]
fn an_indexed_search_reads_only_candidates_and_answers_as_a_scan() {
    let big: String = (0..300).map(|i| format!("line {i} of filler text\n")).collect();
    let (root, idx) = setup(&[
        ("a.txt", b"needle here\n"),
        ("b.txt", big.as_bytes()),
        ("c/d.rs", b"fn main() { let NEEDLE = 1; }\n"),
        ("e.bin", b"needle\0binary\n"),
        ("f.txt", b"nothing\n"),
    ]);
    let scan = Workspace::new(root.path());
    let indexed = Workspace::new(root.path()).with_index_dir(idx.path());
    let report = indexed.refresh_index().unwrap();
    assert_eq!((report.files, report.files_read), (5, 5));
    assert!(report.rebuilt.as_deref().is_some_and(|r| r.contains("there was none")), "{report:?}");
    for request in [
        SearchTextRequest::new("needle"),
        SearchTextRequest::new("filler"),
        regex("need(le|xx)"),
        regex("line [0-9]+ of"),
        regex("e"),
        SearchTextRequest { max_results: Some(1), ..SearchTextRequest::new("needle") },
    ] {
        let a = scan.search_text(request.clone()).unwrap();
        let b = indexed.search_text(request.clone()).unwrap();
        assert_eq!(answer(&a), answer(&b), "{}", request.query);
        assert_eq!(a.stats.index, IndexUse::None);
        let narrowed = plan(&crate::request::TextQuery::from_request(request.clone(), &mut Vec::new()).unwrap());
        assert_eq!(b.stats.index, if narrowed.is_some() { IndexUse::Served } else { IndexUse::CannotNarrow });
    }
    // A search that does not leave binary files out (rg's way, -a,
    // --binary) reads them: the index knows of a NUL, not where it is.
    for binary in [BinaryMode::AsRg, BinaryMode::Text, BinaryMode::Search] {
        let request = SearchTextRequest { binary: Some(binary), ..SearchTextRequest::new("needle") };
        let (a, b) = (scan.search_text(request.clone()).unwrap(), indexed.search_text(request).unwrap());
        assert_eq!(answer(&a), answer(&b), "{binary:?}");
        assert_eq!(a.stats.skipped, b.stats.skipped, "{binary:?}");
    }
    // `needle` (either case) is in a, c/d and e (binary): b and f are left unread,
    // and e is skipped as binary without being read.
    let r = indexed.search_text(SearchTextRequest::new("needle")).unwrap();
    assert_eq!((r.stats.files_skipped_by_index, r.stats.files_scanned, r.stats.skipped.binary), (3, 2, 1));
}

#[test]
fn changes_after_the_index_was_built_are_in_the_answer() {
    let (root, idx) =
        setup(&[("a.txt", b"alpha\n"), ("b.txt", b"beta\n"), ("c.txt", b"other\n"), ("gone.txt", b"gamma\n")]);
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    ws.refresh_index().unwrap();
    // Same size, new content; a new file; a deletion; a new ignore rule.
    write(root.path(), "a.txt", b"delta\n");
    write(root.path(), "new.txt", b"delta too\n");
    std::fs::remove_file(root.path().join("gone.txt")).unwrap();
    write(root.path(), ".ignore", b"b.txt\n");
    let found = |ws: &Workspace, q: &str| -> Vec<String> {
        ws.search_text(SearchTextRequest::new(q)).unwrap().matches.iter().map(|m| m.path.clone()).collect()
    };
    assert_eq!(found(&ws, "delta"), ["a.txt", "new.txt"]);
    assert!(found(&ws, "gamma").is_empty());
    assert!(found(&ws, "beta").is_empty());
    // A refresh reads only what changed, and drops what is gone.
    std::thread::sleep(std::time::Duration::from_nanos(RACY_NS + 100_000_000));
    let report = ws.refresh_index().unwrap();
    assert_eq!((report.files, report.files_read, report.files_removed, report.rebuilt), (3, 2, 2, None));
    // (a.txt and new.txt read, c.txt kept; b.txt ignored now, gone.txt gone.)
    let r = ws.search_text(SearchTextRequest::new("delta")).unwrap();
    assert_eq!((r.stats.files_scanned, r.stats.files_skipped_by_index), (2, 1));
}

#[test]
fn files_written_within_the_racy_window_are_always_read() {
    let root = tempfile::tempdir().unwrap();
    let idx = tempfile::tempdir().unwrap();
    write(root.path(), "a.txt", b"one\n");
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    ws.refresh_index().unwrap();
    // Rewritten at once, same size: the times may not have moved.
    write(root.path(), "a.txt", b"two\n");
    let r = ws.search_text(SearchTextRequest::new("two")).unwrap();
    assert_eq!((r.matches.len(), r.stats.files_skipped_by_index), (1, 0));
}

#[test]
fn a_damaged_index_is_not_used_and_is_rebuilt() {
    let (root, idx) = setup(&[("a.txt", b"needle\n"), ("b.txt", b"other\n")]);
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    ws.refresh_index().unwrap();
    let path = idx.path().join(FILE);
    let good = std::fs::read(&path).unwrap();
    let damaged: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", good[..good.len() - 3].to_vec()),
        ("a flipped posting byte", {
            let mut b = good.clone();
            b[HEADER + 2] ^= 0x40;
            b
        }),
        ("a flipped table byte", {
            let mut b = good.clone();
            let last = b.len() - 1;
            b[last] ^= 0x01;
            b
        }),
        ("another format", {
            let mut b = good.clone();
            b[8] = 9;
            b
        }),
        ("empty", Vec::new()),
        ("a trigram past 24 bits, its checksums made to match", {
            let mut b = good.clone();
            let fields = HEADER - 64;
            let (table_len, post_len) = (u64_at(&b, fields + 24) as usize, u64_at(&b, fields + 32) as usize);
            let table = HEADER + post_len..HEADER + post_len + table_len;
            // (The last dictionary entry's trigram, its top byte.)
            b[table.end - 20 + 3] = 1;
            let sum = checksum(&b[table]);
            b[fields + 40..fields + 48].copy_from_slice(&sum.to_le_bytes());
            let sum = checksum(&b[..HEADER - 8]);
            b[HEADER - 8..HEADER].copy_from_slice(&sum.to_le_bytes());
            b
        }),
    ];
    for (what, bytes) in damaged {
        std::fs::write(&path, &bytes).unwrap();
        let r = ws.search_text(SearchTextRequest::new("needle")).unwrap();
        assert_eq!(r.matches.len(), 1, "{what}");
        let report = ws.refresh_index().unwrap();
        assert!(report.rebuilt.is_some(), "{what}: {report:?}");
        assert_eq!(report.files, 2, "{what}");
        let r = ws.search_text(SearchTextRequest::new("needle")).unwrap();
        assert_eq!((r.matches.len(), r.stats.index), (1, IndexUse::Served), "{what}");
    }
    // Built under another denylist: not used.
    let other = Workspace::new(root.path())
        .with_policy(&crate::Policy {
            redact: true,
            extra_deny: vec!["*.txt".into()],
            inside_git_repository: false,
            cursor_key: String::new(),
            disabled_redaction_rules: vec![],
        })
        .unwrap()
        .with_index_dir(idx.path());
    assert_eq!(other.search_text(SearchTextRequest::new("needle")).unwrap().stats.index, IndexUse::None);
}

#[test]
fn a_damaged_delta_is_not_used_and_one_of_another_index_is_ignored() {
    let names: Vec<String> = (0..20).map(|i| format!("f{i:02}.txt")).collect();
    let texts: Vec<String> = (0..20).map(|i| format!("file {i} other\n")).collect();
    let files: Vec<(&str, &[u8])> = names.iter().zip(&texts).map(|(n, t)| (n.as_str(), t.as_bytes())).collect();
    let (root, idx) = setup(&files);
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    ws.refresh_index().unwrap();
    let settle = || std::thread::sleep(std::time::Duration::from_nanos(RACY_NS + 100_000_000));
    write(root.path(), "f03.txt", b"needle\n");
    settle();
    ws.refresh_index().unwrap();
    let path = idx.path().join(DELTA_NAME);
    let served = |what: &str| {
        let r = ws.search_text(SearchTextRequest::new("needle")).unwrap();
        assert_eq!((r.matches.len(), r.stats.index, r.stats.files_scanned), (1, IndexUse::Served, 1), "{what}");
    };
    served("a delta");
    // (Each made from the delta of the moment: one of another index is
    // ignored, below.)
    let damaged: Vec<(&str, fn(&mut Vec<u8>))> = vec![
        ("truncated", |b| b.truncate(b.len() - 3)),
        ("a flipped posting byte", |b| b[DELTA_HEADER + 1] ^= 0x40),
        ("a flipped table byte", |b| *b.last_mut().unwrap() ^= 0x01),
        ("a newer format", |b| b[8] = 99),
        ("empty", |b| b.clear()),
    ];
    for (what, damage) in damaged {
        let mut bytes = std::fs::read(&path).unwrap();
        damage(&mut bytes);
        std::fs::write(&path, &bytes).unwrap();
        // (A list the query does not read is not checked.)
        let r = ws.search_text(SearchTextRequest::new("needle")).unwrap();
        assert_eq!(r.matches.len(), 1, "{what}");
        let report = ws.refresh_index().unwrap();
        assert!(report.rebuilt.is_some(), "{what}: {report:?}");
        // (Rebuilt as a whole: no delta.)
        assert!(!path.exists(), "{what}");
        served(what);
        write(root.path(), "f05.txt", format!("{what}\n").as_bytes());
        settle();
        ws.refresh_index().unwrap();
        assert!(path.exists(), "{what}");
    }
    // A delta of another index (a refresh stopped after writing a new
    // index, before removing the delta): ignored, the index alone is used
    // (every record checked against the file).
    let stale = std::fs::read(&path).unwrap();
    for name in &names[..10] {
        write(root.path(), name, b"rewritten\n");
    }
    settle();
    ws.refresh_index().unwrap();
    assert!(!path.exists());
    std::fs::write(&path, &stale).unwrap();
    let r = ws.search_text(SearchTextRequest::new("rewritten")).unwrap();
    assert_eq!((r.matches.len(), r.stats.index, r.stats.files_scanned), (10, IndexUse::Served, 10));
    assert_eq!(ws.search_text(SearchTextRequest::new("needle")).unwrap().matches.len(), 0);
}

#[test]
fn trigrams_keep_their_case_and_are_listed_once() {
    let mut seen = vec![0u64; 1 << 18];
    let mut out = Vec::new();
    let t = |s: &[u8]| plan::trigram(s[0], s[1], s[2]);
    let n = trigrams(b"AbCabcabc", &mut seen, &mut out);
    assert_eq!(out[..n], [t(b"AbC"), t(b"bCa"), t(b"Cab"), t(b"abc"), t(b"bca"), t(b"cab")]);
    assert!(seen.iter().all(|&w| w == 0));
    // Past ASCII, and into a longer buffer than needed.
    let n = trigrams("\x7f\u{e9}a\x7f\u{e9}".as_bytes(), &mut seen, &mut out);
    assert_eq!(out[..n], [t(b"\x7f\xc3\xa9"), t(b"\xc3\xa9a"), t(b"\xa9a\x7f"), t(b"a\x7f\xc3")]);
    assert!(seen.iter().all(|&w| w == 0));
}

#[test]
fn multiline_searches_read_binary_files_and_files_with_secrets_are_indexed_as_shown() {
    // A NUL far past the match: a multiline search reads the file (whatever
    // it then makes of the NUL, it is the scan's answer).
    let mut late_nul = b"needle\nhere\n".to_vec();
    late_nul.extend(std::iter::repeat_n(b'x', 2_000_000));
    late_nul.push(0);
    let (root, idx) = setup(&[("late.bin", &late_nul), ("keys.env.txt", b"aws_key = \"AKIAIOSFODNN7EXAMPLE\"\n")]);
    let scan = Workspace::new(root.path());
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    ws.refresh_index().unwrap();
    let multi = SearchTextRequest { multiline: true, paths: vec!["late.bin".into()], ..regex("needle\\nhere") };
    assert_eq!(answer(&scan.search_text(multi.clone()).unwrap()), answer(&ws.search_text(multi.clone()).unwrap()));
    assert_eq!(ws.search_text(multi).unwrap().stats.files_skipped_by_index, 0);
    // A file with secrets is indexed as callers see it, redacted: a guess at
    // the secret is skipped right or wrong (the skip count is no oracle), and
    // every answer is a scan's.
    for q in ["AKIZZZ", "AKIAIOSFODNN7", "aws_key", "REDACTED"] {
        let r = SearchTextRequest { paths: vec!["keys.env.txt".into()], ..SearchTextRequest::new(q) };
        assert_eq!(answer(&scan.search_text(r.clone()).unwrap()), answer(&ws.search_text(r.clone()).unwrap()), "{q}");
        let skipped = ws.search_text(r).unwrap().stats.files_skipped_by_index;
        assert_eq!(skipped, u64::from(q.starts_with("AKI")), "{q}");
    }
}

#[test]
fn pairs_sort_as_a_comparison_sort_sorts_them() {
    let mut seed = 11u64;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut scratch = Vec::new();
    // Files in order, each with its trigrams once (some in every file, some
    // spread over the whole range and some sharing a byte): the radix sort;
    // then the same out of order, and repeated, for the comparison sort.
    for in_order in [true, false] {
        let mut pairs = Vec::new();
        for file in 0..300u64 {
            let mut tris: Vec<u64> = (0..next(40)).map(|_| next(1 << 24)).collect();
            tris.extend([0x616263, 0x616264, 0x000001, 0xffffff]);
            tris.extend((0..next(8)).map(|i| 0x20_2000 | i));
            tris.sort_unstable();
            tris.dedup();
            let number = if in_order { file } else { (file * 7919) % 300 };
            pairs.extend(tris.iter().map(|&t| t << 32 | number));
            if !in_order && file % 50 == 0 {
                pairs.extend(tris.iter().map(|&t| t << 32 | number));
            }
        }
        let mut want = pairs.clone();
        want.sort_unstable();
        want.dedup();
        sort_pairs(&mut pairs, &mut scratch, in_order);
        assert_eq!(pairs, want, "in order: {in_order}");
    }
    // All of one trigram, and none.
    let mut one: Vec<u64> = (0..10).map(|f| 0x414243 << 32 | f).collect();
    let want = one.clone();
    sort_pairs(&mut one, &mut scratch, true);
    assert_eq!(one, want);
    let mut none = Vec::new();
    sort_pairs(&mut none, &mut scratch, true);
    assert!(none.is_empty());
}

#[test]
fn smart_case_is_planned_without_case() {
    // `\W` holds an upper-case letter, yet the matcher ignores case: the
    // KELVIN SIGN line must be found indexed as scanned.
    let (root, idx) = setup(&[("k.txt", "x \u{212A}elvin\n".as_bytes())]);
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    ws.refresh_index().unwrap();
    let r = SearchTextRequest { case: Some(crate::CaseMode::Smart), ..regex("\\Wkelvin") };
    let scanned = Workspace::new(root.path()).search_text(r.clone()).unwrap();
    assert_eq!(answer(&scanned), answer(&ws.search_text(r).unwrap()));
}

#[test]
fn case_decides_which_files_are_read() {
    let (root, idx) = setup(&[
        ("upper.txt", b"return EINVAL;\n"),
        ("mixed.txt", b"EinVal\n"),
        ("lower.txt", b"reinvent the invalid\n"),
        ("kelvin.txt", "\u{212A}ELVIN\n".as_bytes()),
    ]);
    let scan = Workspace::new(root.path());
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    ws.refresh_index().unwrap();
    let with = |query: &str, case| SearchTextRequest { case: Some(case), ..SearchTextRequest::new(query) };
    use crate::CaseMode::{Insensitive, Sensitive, Smart};
    // (request, files read: the rest are skipped)
    for (r, read) in [
        (with("EINVAL", Sensitive), 1),
        (with("EINVAL", Smart), 1),
        // (`reinvent the invalid` holds every trigram of `einval`.)
        (with("einval", Smart), 3),
        (with("einval", Insensitive), 3),
        (with("kelvin", Insensitive), 1),
        (with("KELVIN", Sensitive), 0),
        (SearchTextRequest { case: Some(Smart), ..regex("E[I]NVAL|\\bkelvin") }, 1),
        (SearchTextRequest { case: Some(Sensitive), ..regex("(?i)einval") }, 3),
    ] {
        let got = ws.search_text(r.clone()).unwrap();
        assert_eq!(answer(&scan.search_text(r.clone()).unwrap()), answer(&got), "{r:?}");
        assert_eq!(got.stats.files_scanned, read, "{r:?}");
    }
}

#[test]
fn a_kept_instance_reuses_its_walk_while_the_host_vouches_for_the_tree() {
    let (root, idx) = setup(&[("a.txt", b"needle one\n"), ("b/c.txt", b"needle two\nhay\n"), ("d.txt", b"hay\n")]);
    let scan = Workspace::new(root.path());
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    ws.refresh_index().unwrap();
    let first = SearchTextRequest { max_results: Some(1), ..SearchTextRequest::new("needle") };
    let cases =
        [SearchTextRequest::new("needle"), SearchTextRequest::new("hay"), first, regex("ne+dle|zzz"), regex("\\w+")];
    crate::session::unchanged_since(Some(7));
    for _ in 0..2 {
        for r in &cases {
            assert_eq!(answer(&scan.search_text(r.clone()).unwrap()), answer(&ws.search_text(r.clone()).unwrap()));
        }
    }
    // What it kept stands for the tree until the host says otherwise: a
    // file added behind the host's back is not seen, and is once it does.
    write(root.path(), "e.txt", b"needle three\n");
    assert_eq!(ws.search_text(SearchTextRequest::new("needle")).unwrap().matches.len(), 2);
    crate::session::unchanged_since(None);
    assert_eq!(ws.search_text(SearchTextRequest::new("needle")).unwrap().matches.len(), 3);
}

#[test]
fn a_file_with_another_name_is_always_read() {
    // Written through its other name (outside the workspace), it changes
    // where no watcher of the workspace looks.
    let (root, idx) = setup(&[("a.txt", b"one\n"), ("b.txt", b"two\n")]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::hard_link(root.path().join("b.txt"), outside.path().join("b.txt")).unwrap();
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    ws.refresh_index().unwrap();
    let r = ws.search_text(SearchTextRequest::new("nothing")).unwrap();
    assert_eq!((r.stats.files_skipped_by_index, r.stats.files_scanned), (1, 1));
}

#[test]
fn a_build_in_runs_and_a_refresh_merged_from_them_answer_as_a_scan() {
    // Many runs per build (a few pairs each in tests), the old index's
    // lists merged with new files', files removed, renamed and edited.
    let text = |i: usize| format!("file {i} holds word{} and word{}\nline two {}\n", i % 7, i % 11, i * 31);
    let names: Vec<String> = (0..60).map(|i| format!("d{}/f{i}.txt", i % 5)).collect();
    let texts: Vec<String> = (0..60).map(text).collect();
    let files: Vec<(&str, &[u8])> = names.iter().zip(&texts).map(|(n, t)| (n.as_str(), t.as_bytes())).collect();
    let (root, idx) = setup(&files);
    let scan = Workspace::new(root.path());
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    let queries = ["word3", "word10", "holds", "f17", "line two 31", "nowhere", "file 4[0-9] ", "word(1|5) and"];
    let check = |what: &str| {
        for q in queries {
            let (a, b) = (scan.search_text(regex(q)).unwrap(), ws.search_text(regex(q)).unwrap());
            assert_eq!(answer(&a), answer(&b), "{what}: {q}");
            assert_eq!(b.stats.index, IndexUse::Served, "{what}: {q}");
        }
    };
    // Nothing of a build is left beside the index (and its delta).
    let left = || {
        let mut left: Vec<_> =
            std::fs::read_dir(idx.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        left
    };
    let inode = || std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(idx.path().join(FILE)).unwrap());
    let built = ws.refresh_index().unwrap();
    assert_eq!((built.files, built.files_read), (60, 60));
    check("built");
    assert_eq!(left(), [FILE]);
    let index = inode();
    let skipped = ws.search_text(SearchTextRequest::new("word3")).unwrap().stats.files_skipped_by_index;
    assert!(skipped > 40, "{skipped}");
    for i in (0..60).step_by(9) {
        std::fs::remove_file(root.path().join(&names[i])).unwrap();
    }
    std::fs::rename(root.path().join(&names[1]), root.path().join("d0/renamed.txt")).unwrap();
    write(root.path(), &names[2], b"now word3 only\n");
    write(root.path(), "new/a.txt", b"a new word10 file\n");
    std::thread::sleep(std::time::Duration::from_nanos(RACY_NS + 100_000_000));
    let refreshed = ws.refresh_index().unwrap();
    assert_eq!((refreshed.files, refreshed.files_read, refreshed.files_removed), (54, 3, 8));
    // Three files read of 54: a delta beside the index, which stays as it was.
    check("refreshed");
    assert_eq!((left(), inode()), (vec![FILE.to_string(), DELTA_NAME.to_string()], index));
    // Again: the delta holds what the last one held (the file written
    // then, untouched since) and what was read now (that one edited
    // again, a new one, one of the index's own edited).
    write(root.path(), "new/a.txt", b"word10 again, and word5\n");
    write(root.path(), "new/b.txt", b"a second new file: word3 and word1\n");
    write(root.path(), &names[3], b"edited: word1 and holds\n");
    std::thread::sleep(std::time::Duration::from_nanos(RACY_NS + 100_000_000));
    let again = ws.refresh_index().unwrap();
    assert_eq!((again.files, again.files_read, again.files_removed), (55, 3, 0));
    check("a second delta");
    assert_eq!((left().len(), inode()), (2, index));
    // Nothing changed: nothing written.
    let unchanged = ws.refresh_index().unwrap();
    assert_eq!(
        (unchanged.files_read, unchanged.trigrams, unchanged.index_bytes),
        (0, again.trigrams, again.index_bytes)
    );
    // Many files read since the index (more than one in DELTA_SHARE): a new
    // index, holding the delta's lists, and no delta.
    for i in (4..60).step_by(4) {
        if std::fs::metadata(root.path().join(&names[i])).is_ok() {
            write(root.path(), &names[i], format!("rewritten {i}: word{}\n", i % 13).as_bytes());
        }
    }
    std::thread::sleep(std::time::Duration::from_nanos(RACY_NS + 100_000_000));
    let folded = ws.refresh_index().unwrap();
    assert!(folded.files_read > 55 / DELTA_SHARE as u64, "{folded:?}");
    check("folded into a new index");
    assert_eq!(left(), [FILE]);
    assert_ne!(inode(), index);
}

#[test]
fn a_refresh_with_nothing_changed_rewrites_nothing() {
    // Files the index cannot trust whatever it reads (another name, too
    // large) are read again only once they change: a long-lived
    // host refreshing after unrelated changes must not rewrite the index
    // each time because of them.
    let big = vec![b'x'; INDEX_FILESIZE as usize + 1];
    let (root, idx) = setup(&[("a.txt", b"one\n"), ("big.txt", &big), ("utf16.txt", b"\xff\xfet\0w\0o\0")]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::hard_link(root.path().join("a.txt"), outside.path().join("a.txt")).unwrap();
    write(root.path(), "b.txt", b"two\n");
    std::thread::sleep(std::time::Duration::from_nanos(RACY_NS + 100_000_000));
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    let inode = || std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(idx.path().join(FILE)).unwrap());
    let first = ws.refresh_index().unwrap();
    // (a.txt, b.txt and the UTF-16 file, indexed as its text.)
    assert_eq!((first.files, first.files_read), (4, 3));
    let written = inode();
    let again = ws.refresh_index().unwrap();
    assert_eq!((again.files, again.files_read, inode()), (4, 0, written));
    // A change is read, and the index written anew.
    write(root.path(), "b.txt", b"three\n");
    std::thread::sleep(std::time::Duration::from_nanos(RACY_NS + 100_000_000));
    let changed = ws.refresh_index().unwrap();
    assert_eq!(changed.files_read, 1);
    assert_ne!(inode(), written);
    // (b.txt and the UTF-16 file left unread; a.txt has another name.)
    let r = ws.search_text(SearchTextRequest::new("nothing")).unwrap();
    assert_eq!(r.stats.files_skipped_by_index, 2);
}

#[test]
fn structural_searches_read_only_files_with_the_patterns_words() {
    let (root, idx) = setup(&[
        ("a.rs", b"fn main() { foo.bar(1); }\n"),
        ("b.rs", b"fn other() { baz(2); }\n"),
        ("c.rs", b"fn main() { foo(1); bar(2); }\n"),
        ("d.rs", b"fn main() { foo.bar(1); }\0\n"),
        ("e.rs", b"fn main() { FOO.BAR(1); }\n"),
    ]);
    let scan = Workspace::new(root.path());
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    ws.refresh_index().unwrap();
    let request = |pattern: &str| crate::SearchAstRequest::new(pattern);
    let without_stats = |mut r: crate::SearchAstResponse| {
        let stats = std::mem::replace(&mut r.stats, crate::page::empty_stats());
        (format!("{r:?}"), stats)
    };
    // (pattern, files the index lets it leave unread)
    for (pattern, skipped) in [("foo.bar($A)", 3), ("$X.bar($$$)", 3), ("$F($$$A)", 1)] {
        let (want, _) = without_stats(scan.search_ast(request(pattern)).unwrap());
        let (got, stats) = without_stats(ws.search_ast(request(pattern)).unwrap());
        assert_eq!(want, got, "{pattern}");
        assert_eq!(stats.files_skipped_by_index, skipped, "{pattern}: {stats:?}");
        let served = if skipped > 1 { IndexUse::Served } else { IndexUse::CannotNarrow };
        assert_eq!(stats.index, served, "{pattern}");
    }
}

#[test]
fn the_policy_fingerprint_covers_the_redaction_rules_switched_off() {
    let fp = |redact: bool, rules: &[&str]| {
        let rules: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
        super::policy_fingerprint(&[], false, redact, &rules)
    };
    assert_ne!(fp(true, &[]), fp(true, &["jwt"]));
    assert_ne!(fp(true, &["jwt"]), fp(true, &["github-token"]));
    assert_ne!(fp(true, &[]), fp(false, &[]));
    assert_eq!(fp(false, &[]), fp(false, &["jwt"]), "nothing is redacted either way");
}

#[test]
fn the_table_of_files_is_in_path_order_and_an_index_of_the_old_order_is_rebuilt() {
    // Names whose whole-path bytewise order differs from path order.
    let names = ["git/x.go", "git.go", "git-x", "a/b", "a+", "a.b/c", "ab", "a!", "a-", "a.", "a/b!/c", "a/c/d/e"];
    let files: Vec<(&str, &[u8])> = names.iter().map(|n| (*n, &b"needle here\n"[..])).collect();
    let (root, idx) = setup(&files);
    let scan = Workspace::new(root.path());
    let indexed = Workspace::new(root.path()).with_index_dir(idx.path());
    assert_eq!(indexed.refresh_index().unwrap().files, names.len() as u64);
    let loaded = Loaded::open(idx.path(), indexed.index_policy()).unwrap();
    let table: Vec<&str> = loaded.files.iter().map(|f| f.path.as_str()).collect();
    let mut want = names.to_vec();
    want.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
    assert_eq!(table, want);
    drop(loaded);
    // Indexed answers come in the scan's order, page after page.
    for max in [None, Some(1), Some(5)] {
        let mut cursor = None;
        loop {
            let request =
                SearchTextRequest { max_results: max, cursor: cursor.clone(), ..SearchTextRequest::new("needle") };
            let (a, b) = (scan.search_text(request.clone()).unwrap(), indexed.search_text(request).unwrap());
            assert_eq!(answer(&a), answer(&b), "{max:?} {cursor:?}");
            assert_eq!(b.stats.index, IndexUse::Served);
            cursor = b.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
    }
    let all = scan.search_text(SearchTextRequest::new("needle")).unwrap();
    assert_eq!(all.matches.iter().map(|m| m.path.as_str()).collect::<Vec<_>>(), want);
    // An index of format 3 (the table bytewise by whole path), checksums
    // and all, is another format: not used, rebuilt.
    let path = idx.path().join(FILE);
    let mut old = std::fs::read(&path).unwrap();
    old[8..12].copy_from_slice(&3u32.to_le_bytes());
    let sum = checksum(&old[..72]);
    old[72..80].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&path, &old).unwrap();
    assert_eq!(Loaded::open(idx.path(), indexed.index_policy()).err().as_deref(), Some("it had another format"));
    // One of a later format (a newer sandgrep's) is said to be that.
    let mut newer = old.clone();
    newer[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    let sum = checksum(&newer[..72]);
    newer[72..80].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&path, &newer).unwrap();
    let why = Loaded::open(idx.path(), indexed.index_policy()).err().unwrap_or_default();
    assert_eq!(
        why,
        format!("it was written by a newer sandgrep (index format {}; this one reads {VERSION})", VERSION + 1)
    );
    std::fs::write(&path, &old).unwrap();
    assert_eq!(indexed.search_text(SearchTextRequest::new("needle")).unwrap().stats.index, IndexUse::None);
    let report = indexed.refresh_index().unwrap();
    assert!(report.rebuilt.as_deref().is_some_and(|r| r.contains("another format")), "{report:?}");
    assert_eq!(indexed.search_text(SearchTextRequest::new("needle")).unwrap().stats.index, IndexUse::Served);
}

#[test]
fn a_vouched_first_page_replays_the_walk_the_index_recorded() {
    let (root, idx) = setup(&[
        (".ignore", b"skipped.txt\nlogs/\n"),
        ("a.txt", b"needle one\n"),
        ("b/c.txt", b"needle two\nhay\n"),
        ("b/skipped.txt", b"needle ignored\n"),
        ("b/.hidden.txt", b"needle hidden\n"),
        ("logs/x.txt", b"needle in an ignored directory\n"),
        ("m/id_rsa", b"needle denied\n"),
        ("z.txt", b"hay\n"),
        ("zz/id_rsa", b"denied after the last file\n"),
    ]);
    let scan = Workspace::new(root.path());
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    ws.refresh_index().unwrap();
    let loaded = Loaded::open(idx.path(), ws.index_policy()).unwrap();
    assert!(loaded.walk.whole && loaded.walk.tail == Skips { denied: 1, ..Skips::default() }, "{:?}", loaded.walk);
    let first = SearchTextRequest { max_results: Some(1), ..SearchTextRequest::new("needle") };
    let cases =
        [SearchTextRequest::new("needle"), SearchTextRequest::new("hay"), first, regex("ne+dle|zzz"), regex("\\w+")];
    for generation in [11, 12] {
        crate::session::unchanged_since(Some(generation));
        for r in &cases {
            let (a, b) = (scan.search_text(r.clone()).unwrap(), ws.search_text(r.clone()).unwrap());
            assert_eq!(answer(&a), answer(&b), "{}", r.query);
            assert_eq!(a.stats.skipped, b.stats.skipped, "{}", r.query);
        }
    }
    // The first call at a new generation walks nothing: a file made behind
    // the host's back is not seen (it is, once the host no longer vouches).
    crate::session::unchanged_since(Some(13));
    write(root.path(), "new.txt", b"needle three\n");
    let r = ws.search_text(SearchTextRequest::new("needle")).unwrap();
    assert_eq!((r.matches.len(), r.stats.files_scanned), (2, 2));
    // Other walks than the index's are walked (hidden files too here).
    let hidden = SearchTextRequest { hidden: true, ..SearchTextRequest::new("needle") };
    assert_eq!(ws.search_text(hidden).unwrap().matches.len(), 4);
    crate::session::unchanged_since(None);
    assert_eq!(ws.search_text(SearchTextRequest::new("needle")).unwrap().matches.len(), 3);
}

/// PCRE2 (asked for, or chosen by `auto`) reads a syntax the plan's parser
/// does not know: such a search is never narrowed (every file is read) and
/// answers as a scan; `auto` with a pattern the default engine builds is.
#[test]
fn a_pcre2_search_is_never_narrowed_and_answers_as_a_scan() {
    use crate::RegexEngine::{Auto, Pcre2};
    let (root, idx) =
        setup(&[("a.txt", b"needle here\n"), ("b.txt", b"haystack\n"), ("c.txt", b"need le\n"), ("d.txt", b"ee\n")]);
    let scan = Workspace::new(root.path());
    let indexed = Workspace::new(root.path()).with_index_dir(idx.path());
    indexed.refresh_index().unwrap();
    for (engine, query) in [
        (Pcre2, "needle"),
        (Pcre2, "need(?=le)"),
        (Pcre2, r"\Qneed\E\s?le"),
        (Pcre2, r"(e)\1"),
        (Pcre2, r"ne\Ked"),
        (Auto, "(?<=need)le"),
        (Auto, "needle"),
    ] {
        let request = SearchTextRequest { engine: Some(engine), ..regex(query) };
        let a = scan.search_text(request.clone()).unwrap();
        let b = indexed.search_text(request).unwrap();
        assert_eq!(answer(&a), answer(&b), "{query}");
        assert!(!a.matches.is_empty(), "{query}");
        let want = if (engine, query) == (Auto, "needle") { IndexUse::Served } else { IndexUse::CannotNarrow };
        assert_eq!(b.stats.index, want, "{query}");
    }
}

#[test]
fn a_build_spread_over_instances_writes_the_index_one_instance_writes() {
    let mut files: Vec<(String, Vec<u8>)> = (0..60)
        .map(|i| (format!("d{}/f{i}.txt", i % 4), format!("word{i} common text {}\n", i * 7).into_bytes()))
        .collect();
    files.push(("bin.dat".into(), b"needle\0binary\n".to_vec()));
    files.push(("conf.env.example".into(), b"API_TOKEN=sk_live_4f9a8b7c6d5e4f3a2b1c0d9e\n".to_vec()));
    files.push(("utf16.txt".into(), b"\xff\xfet\0w\0o\0".to_vec()));
    let named: Vec<(&str, &[u8])> = files.iter().map(|(n, t)| (n.as_str(), t.as_slice())).collect();
    let (root, one) = setup(&named);
    let two = tempfile::tempdir().unwrap();
    let whole = Workspace::new(root.path()).with_index_dir(one.path()).refresh_index().unwrap();
    // Instance A walks, and reads every other batch; instance B (a thread
    // of its own: its own state, as another instance has) reads the rest.
    let spread = |root: &Path, dir: &Path| {
        let (to_b, batches) = std::sync::mpsc::channel::<Vec<crate::IndexFile>>();
        let (root_b, dir_b) = (root.to_path_buf(), dir.to_path_buf());
        let b = std::thread::spawn(move || {
            let ws = Workspace::new(&root_b).with_index_dir(&dir_b);
            let mut parts: Vec<_> = batches.into_iter().map(|batch| read_batch(&ws, batch, false).unwrap()).collect();
            parts.push(read_batch(&ws, Vec::new(), true).unwrap());
            parts
        });
        let ws = Workspace::new(root).with_index_dir(dir);
        let mut parts = Vec::new();
        for n in 0.. {
            let batch = walk_batch(&ws, n == 0, 200).unwrap();
            if n % 2 == 0 {
                to_b.send(batch.files).unwrap();
            } else {
                parts.push(read_batch(&ws, batch.files, false).unwrap());
            }
            if batch.done {
                break;
            }
        }
        drop(to_b);
        parts.push(read_batch(&ws, Vec::new(), true).unwrap());
        parts.extend(b.join().unwrap());
        // Three ranges merged: the first here, the others in threads of
        // their own (as other instances), which open the old index.
        let plan = split(&ws, parts, 3).unwrap();
        let ranges = plan.bounds.len().saturating_sub(1) as u32;
        let others: Vec<_> = (1..ranges)
            .map(|range| {
                let (plan, root, dir) = (plan.clone(), root.to_path_buf(), dir.to_path_buf());
                std::thread::spawn(move || merge_range(&Workspace::new(&root).with_index_dir(&dir), &plan, range))
            })
            .collect();
        let mut merged = Vec::new();
        if ranges > 0 {
            merged.push(merge_range(&ws, &plan, 0).unwrap());
        }
        merged.extend(others.into_iter().map(|t| t.join().unwrap().unwrap()));
        (finish(&ws, merged).unwrap(), plan.bounds)
    };
    let (r, bounds) = spread(root.path(), two.path());
    // (Three ranges, none empty.)
    assert!(bounds.len() == 4 && bounds.windows(2).all(|w| w[0] < w[1]), "{bounds:?}");
    let key = |r: &IndexReport| (r.files, r.files_read, r.bytes_read, r.trigrams, r.index_bytes, r.rebuilt.clone());
    assert_eq!(key(&r), key(&whole));
    // The same table and postings (the header differs by its build time),
    // and no run left beside it.
    let (a, b) = (std::fs::read(one.path().join(FILE)).unwrap(), std::fs::read(two.path().join(FILE)).unwrap());
    assert!(a[HEADER..] == b[HEADER..]);
    let names: Vec<_> = std::fs::read_dir(two.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, [FILE]);
    // A spread refresh with one change reads that file only.
    write(root.path(), "d1/f1.txt", b"changed\n");
    std::thread::sleep(std::time::Duration::from_nanos(RACY_NS + 100_000_000));
    let (again, bounds) = spread(root.path(), two.path());
    assert_eq!((again.files, again.files_read, again.rebuilt, bounds.len()), (63, 1, None, 4));
    let ws = Workspace::new(root.path()).with_index_dir(two.path());
    assert_eq!(ws.search_text(SearchTextRequest::new("changed")).unwrap().stats.files_scanned, 1);
    // More changes than a delta holds: every range merges the old lists,
    // renumbered, with the runs: the index a build from scratch writes.
    let change_many = |round: usize| {
        for i in (round..60).step_by(3) {
            write(root.path(), &format!("d{}/f{i}.txt", i % 4), format!("rewritten {round} {i}\n").as_bytes());
        }
        write(root.path(), &format!("d0/new{round}.txt"), b"a new file\n");
        std::fs::remove_file(root.path().join(format!("d2/f{}.txt", 2 + 4 * round))).unwrap();
        std::thread::sleep(std::time::Duration::from_nanos(RACY_NS + 100_000_000));
    };
    let from_scratch = || {
        let dir = tempfile::tempdir().unwrap();
        Workspace::new(root.path()).with_index_dir(dir.path()).refresh_index().unwrap();
        std::fs::read(dir.path().join(FILE)).unwrap()
    };
    let listed = || std::fs::read_dir(two.path()).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>();
    change_many(0);
    let (many, _) = spread(root.path(), two.path());
    assert_eq!((many.files, many.files_read, many.rebuilt), (63, 21, None));
    assert!(std::fs::read(two.path().join(FILE)).unwrap()[HEADER..] == from_scratch()[HEADER..]);
    assert_eq!(listed(), [FILE]);
    // A damaged list in the last range, found by the instance merging it
    // (which opened the old index itself): built again from scratch.
    let old = Loaded::open(two.path(), ws.index_policy()).unwrap();
    let at = HEADER as u64 + old.base.dict.last().unwrap().1;
    let mut bytes = std::fs::read(two.path().join(FILE)).unwrap();
    bytes[at as usize] ^= 0x7f;
    std::fs::write(two.path().join(FILE), bytes).unwrap();
    change_many(1);
    let (rebuilt, _) = spread(root.path(), two.path());
    assert_eq!(rebuilt.rebuilt.as_deref(), Some("built from scratch: it was corrupt"));
    assert!(std::fs::read(two.path().join(FILE)).unwrap()[HEADER..] == from_scratch()[HEADER..]);
    assert_eq!(listed(), [FILE]);
}

#[test]
fn a_build_stopped_early_is_an_index_a_refresh_goes_on_from() {
    let files: Vec<(String, Vec<u8>)> =
        (0..40).map(|i| (format!("f{i:02}.txt"), format!("text {i} needle\n").into_bytes())).collect();
    let named: Vec<(&str, &[u8])> = files.iter().map(|(n, t)| (n.as_str(), t.as_slice())).collect();
    let (root, idx) = setup(&named);
    let ws = Workspace::new(root.path()).with_index_dir(idx.path());
    // Two batches walked, the first read, then stopped.
    let first = walk_batch(&ws, true, 100).unwrap().files;
    let second = walk_batch(&ws, false, 100).unwrap().files;
    assert!(!first.is_empty() && !second.is_empty());
    let parts = vec![read_batch(&ws, first.clone(), false).unwrap(), read_batch(&ws, Vec::new(), true).unwrap()];
    let plan = split(&ws, parts, 1).unwrap();
    let stopped = finish(&ws, vec![merge_range(&ws, &plan, 0).unwrap()]).unwrap();
    let walked = (first.len() + second.len()) as u64;
    assert_eq!((stopped.files, stopped.files_read), (walked, first.len() as u64));
    assert!(stopped.warnings.iter().any(|w| w.starts_with("stopped:")), "{:?}", stopped.warnings);
    // A search answers as a scan; the refresh reads what was not read.
    let scan = Workspace::new(root.path());
    let (a, b) = (
        scan.search_text(SearchTextRequest::new("needle")).unwrap(),
        ws.search_text(SearchTextRequest::new("needle")).unwrap(),
    );
    assert_eq!(answer(&a), answer(&b));
    let resumed = ws.refresh_index().unwrap();
    assert_eq!((resumed.files, resumed.files_read), (40, 40 - first.len() as u64));
    assert!(Loaded::open(idx.path(), ws.index_policy()).unwrap().walk.whole);
}

#[test]
fn runs_of_files_merge_as_a_sort_sorts_them() {
    let (mut scratch, mut bounds) = (Vec::new(), Vec::new());
    let mut seed = 7u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as u32
    };
    for case in 0..400 {
        // Up to 7 sources, each its files in order (some files in two).
        let mut ids = Vec::new();
        for _ in 0..1 + case % 7 {
            let mut run: Vec<u32> = (0..next() % 40).map(|_| next() % 100).collect();
            run.sort_unstable();
            run.dedup();
            ids.extend(run);
        }
        let mut want = ids.clone();
        want.sort_unstable();
        want.dedup();
        merge_runs(&mut ids, &mut scratch, &mut bounds);
        assert_eq!(ids, want);
    }
}
