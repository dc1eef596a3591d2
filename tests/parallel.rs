//! `-j`: a search spread over several instances returns what one instance
//! returns — matches, files and counts, truncation, cursors, skip counts and
//! warnings — page after page, on generated trees.

use serde_json::Value;

use crate::util::{json, run, Tree};

/// A tree of `files` files over nested directories (names chosen to test
/// path order: `a`, `a-b`, `a.b`, `a.txt`, `a+`), with matches spread unevenly, a
/// binary file, a denied file, an ignored directory and a long line.
fn generated(seed: u64, files: usize) -> Tree {
    let mut s = seed;
    let mut next = move |n: usize| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 33) as usize % n
    };
    let t = Tree::new();
    let dirs = ["", "a/", "a-b/", "a/b/", "a/b/c/", "z/", "vendor/", "a.b/", "a+/", "a/b.c/"];
    let words = ["needle", "hay", "needle needle", "Needle", "stack", "x"];
    for i in 0..files {
        let mut text = String::new();
        for line in 0..next(40) {
            text.push_str(&format!("{line} {} {}\n", words[next(words.len())], words[next(words.len())]));
        }
        t.write(&format!("{}f{i}.txt", dirs[next(dirs.len())]), text);
    }
    t.write("a.txt", "needle\n".repeat(30));
    t.write("a/bin.dat", b"needle\n\0needle\n");
    t.write("a/.env", "needle\n");
    t.write(".ignore", "vendor/\n");
    t.write("z/long.txt", format!("{}needle{}\n", "y".repeat(5000), "y".repeat(5000)));
    t
}

/// Every page of `args`, following cursors; timings (work done, not the
/// answer) zeroed.
fn pages(t: &Tree, jobs: &str, args: &[&str]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut full = vec![jobs, "search", "--json-page"];
        full.extend_from_slice(args);
        if let Some(c) = &cursor {
            full.extend_from_slice(&["--cursor", c]);
        }
        let mut v = json(t.path(), &full);
        v["stats"]["elapsed_ms"] = 0.into();
        v["stats"]["bytes_searched"] = 0.into();
        cursor = v["next_cursor"].as_str().map(str::to_string);
        out.push(v);
        if cursor.is_none() || out.len() > 200 {
            return out;
        }
    }
}

#[test]
fn several_instances_return_what_one_returns() {
    for (seed, files) in [(1, 60), (2, 150)] {
        let t = generated(seed, files);
        for args in [
            &["needle", "--max-results", "7"][..],
            &["needle", "--max-results", "13", "-m", "2", "-C", "1"],
            &["needle", "--max-results", "5", "--skip", "3", "-B", "2"],
            &["-i", "needle", "--max-results", "40", "--max-columns", "20"],
            &["-l", "needle", "--max-results", "4"],
            &["-c", "needle", "--max-results", "6", "-m", "3"],
            &["-w", "needle", "--hidden", "--max-results", "1000"],
            &["no such text"],
        ] {
            let one = pages(&t, "-j1", args);
            assert!(!one.is_empty());
            for jobs in ["-j2", "-j3"] {
                let many = pages(&t, jobs, args);
                assert_eq!(many.len(), one.len(), "{args:?} {jobs}: pages");
                for (i, (a, b)) in one.iter().zip(&many).enumerate() {
                    assert_eq!(a, b, "{args:?} {jobs}: page {i} differs");
                }
            }
        }
    }
}

#[test]
fn a_subdirectory_and_several_paths_split_the_same_way() {
    let t = generated(3, 80);
    for args in [&["needle", "a", "--max-results", "9"][..], &["-c", "needle", "z", "a/b", "a.txt"]] {
        assert_eq!(pages(&t, "-j1", args), pages(&t, "-j2", args), "{args:?}");
    }
}

#[test]
fn a_tree_walked_in_many_batches_returns_what_one_returns() {
    // More files than one batch of the walk (256) holds, many times over.
    let t = generated(4, 1500);
    for args in [
        &["needle", "--max-results", "2000", "-m", "1"][..],
        &["-c", "needle", "--max-results", "400"],
        &["-l", "Needle", "--max-results", "300"],
        // Pages that end batches into the tree, after skipping some.
        &["needle", "--max-results", "300", "--skip", "450", "-m", "1"],
        &["-c", "needle", "--max-results", "200", "--skip", "500"],
        &["-w", "stack", "--max-results", "10"],
        &["no such text"],
    ] {
        assert_eq!(pages(&t, "-j1", args), pages(&t, "-j2", args), "{args:?}");
    }
}

#[test]
fn a_bad_pattern_is_refused_with_no_file_to_search() {
    let t = Tree::new();
    for jobs in ["-j1", "-j2"] {
        let out = run(t.path(), &[jobs, "search", "a(b"]);
        assert_eq!(out.status.code(), Some(2), "{jobs}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("column"), "{jobs}: {out:?}");
    }
}
