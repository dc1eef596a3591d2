//! `-j`: a search spread over several instances returns what one instance
//! returns — matches, files and counts, truncation, cursors, skip counts and
//! warnings — page after page, on generated trees.

use serde_json::Value;

use crate::util::{command, json, run, stderr, stdout, Tree};

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

/// The CLI's output lines but times, and the bytes of the file after a
/// page's end, which each page reads as far as it needs: work done, not
/// the answer.
fn lines(out: &std::process::Output) -> Vec<String> {
    let work = |l: &str| l.contains("seconds") || l.ends_with(" bytes searched");
    stdout(out).lines().filter(|l| !work(l)).map(str::to_string).collect()
}

fn first_difference(a: &[String], b: &[String]) -> String {
    let at = a.iter().zip(b).position(|(a, b)| a != b).unwrap_or(a.len().min(b.len()));
    format!("line {at} of {} and {}: {:?} against {:?}", a.len(), b.len(), a.get(at), b.get(at))
}

/// The CLI's `args` over two and three instances print and say what one
/// instance does.
fn same_over_instances(t: &Tree, args: &[&str]) {
    let one = run(t.path(), &[&["-j1"], args].concat());
    for jobs in ["-j2", "-j3"] {
        let many = run(t.path(), &[&[jobs], args].concat());
        let (a, b) = (lines(&one), lines(&many));
        assert!(a == b, "{args:?} {jobs}: {}", first_difference(&a, &b));
        assert_eq!(stderr(&one), stderr(&many), "{args:?} {jobs}");
    }
}

#[test]
fn the_clis_first_two_pages_over_instances_are_one_instances() {
    // More files with a match than the CLI's first page holds (200), in
    // several directories: when that page is shown, an instance walking a
    // later directory has searched past its end, and the next page goes on
    // from what it found, each file counted once (files searched, entries
    // withheld, matches), the file the page ended in from where it ended.
    // Files of one match and of three, each beside two with none.
    let t = Tree::new();
    for d in ["a", "b", "c", "d"] {
        t.write(&format!("{d}/0.txt"), "needle 1\nneedle 2\n");
        for i in 0..300 {
            let hits = if i % 2 == 0 { 3 } else { 1 };
            t.write(&format!("{d}/{i:03}.txt"), format!("x\n{}y\n", format!("needle {d}{i}\n").repeat(hits)));
            t.write(&format!("{d}/{i:03}.q1"), "nothing\n");
            t.write(&format!("{d}/{i:03}.q2"), "nothing\n");
        }
        t.write(&format!("{d}/.env"), "needle\n");
    }
    for args in [&["-c", "needle"][..], &["-n", "needle"], &["-l", "needle"], &["--stats", "-n", "needle"]] {
        same_over_instances(&t, args);
    }
    let rg = crate::conformance::rg(t.path(), &["--sort", "path", "-n", "needle"]);
    let path = |l: &str| l.split(':').next().unwrap().to_string();
    let rg_lines: Vec<String> = stdout(&rg).lines().map(path).collect();
    assert_eq!(rg_lines[199], rg_lines[200], "the first page ends inside a file");
    let (a, b) = (lines(&rg), lines(&run(t.path(), &["-j2", "-n", "needle"])));
    assert!(a == b, "rg: {}", first_difference(&a, &b));
    // A reader that goes away after the first line ends the search.
    let mut child = command(t.path())
        .args(["-j2", "-n", "needle"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut first).unwrap();
    assert_eq!(Some(first.trim_end()), stdout(&rg).lines().next());
    assert!(child.wait().is_ok());
}

#[test]
fn a_stream_of_many_pages_over_instances_is_one_instances() {
    // Four pages of `-n` (200, 4800, 5000 and the rest): the instances walk
    // past each page's end, and the next page goes on from what they found.
    // `m` alone holds more results than a page: a part of it fills a page
    // of its own, its last file cut, and pages end inside files. Two files
    // beside each with matches have none (the answer is not dense: it stays
    // divided).
    let t = Tree::new();
    for d in ["a", "b", "c", "x", "y", "z"] {
        for i in 0..200 {
            let hits = if i % 2 == 0 { 3 } else { 1 };
            t.write(&format!("{d}/{i:03}.txt"), format!("x\n{}y\n", format!("needle {d}{i}\n").repeat(hits)));
            t.write(&format!("{d}/{i:03}.q1"), "nothing\n");
            t.write(&format!("{d}/{i:03}.q2"), "nothing\n");
        }
    }
    for i in 0..4600 {
        t.write(&format!("m/{}/{i:04}.txt", i / 500), format!("needle m{i}\nx\nneedle again\n"));
        t.write(&format!("m/{}/{i:04}.q1", i / 500), "nothing\n");
        t.write(&format!("m/{}/{i:04}.q2", i / 500), "nothing\n");
    }
    t.write("m/.env", "needle\n");
    for args in [&["-n", "needle"][..], &["-c", "needle"], &["--stats", "-n", "needle"]] {
        same_over_instances(&t, args);
    }
    let rg = crate::conformance::rg(t.path(), &["--sort", "path", "-n", "needle"]);
    assert_eq!(stdout(&rg).lines().count(), 11600);
    let (a, b) = (lines(&rg), lines(&run(t.path(), &["-j2", "-n", "needle"])));
    assert!(a == b, "rg: {}", first_difference(&a, &b));
}

#[test]
fn a_reader_that_takes_its_time_sees_the_tree_as_it_is_when_it_asks() {
    // The second page (4800 lines) waits on a full pipe while `d30`, just
    // past its end, is renamed `z30`: what the instances walked past that
    // page's end before the rename is not shown; each file is printed once,
    // under the name it has when its page is asked for, as one instance
    // prints it.
    let t = Tree::new();
    for d in 0..40 {
        for i in 0..300 {
            t.write(&format!("d{d:02}/f{i:03}.txt"), if i % 2 == 0 { "foo\n" } else { "nope\n" });
        }
        for i in 0..20 {
            t.write(&format!("d{d:02}/s/g{i:02}.txt"), "foo\n");
        }
    }
    let mut child = command(t.path())
        .args(["-j2", "-n", "foo"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut lines = vec![String::new()];
    std::io::BufRead::read_line(&mut out, &mut lines[0]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    std::fs::rename(t.path().join("d30"), t.path().join("z30")).unwrap();
    lines.extend(std::io::BufRead::lines(out).map(Result::unwrap));
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let files: std::collections::BTreeSet<&str> = lines.iter().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!((lines.len(), files.len()), (6800, 6800), "each file once");
    assert!(!files.iter().any(|f| f.starts_with("d30/")));
    assert_eq!(files.iter().filter(|f| f.starts_with("z30/")).count(), 170);
}

#[test]
fn files_too_large_are_counted_once_over_pages() {
    // Pages of `-c` (the first of 200 results), files over --max-filesize
    // on each: one warning, their number in all.
    let t = Tree::new();
    let mut large = 0;
    for i in 0..900 {
        let text = "needle\n".repeat(1 + i % 3);
        large += usize::from(text.len() > 10);
        t.write(&format!("{}/{i:03}.txt", ["a", "b", "c"][i % 3]), text);
    }
    for jobs in ["-j1", "-j2"] {
        let out = run(t.path(), &[jobs, "-c", "--max-filesize", "10", "needle"]);
        let said: Vec<String> =
            stderr(&out).lines().filter(|l| l.contains("max-filesize")).map(str::to_string).collect();
        assert_eq!(
            said,
            [format!("sandgrep: warning: {large} file(s) skipped as larger than max-filesize (10 bytes)")]
        );
        assert_eq!(stdout(&out).lines().count(), 900 - large, "{jobs}");
    }
}

#[test]
fn the_file_the_first_page_ended_in_changed_before_the_next_page() {
    // The first page ends inside `a/150.txt`, which is emptied or removed
    // once its first line is read: the walk that goes on to the next page
    // counted that file's results, which are gone, and must still find
    // every later file.
    let t = Tree::new();
    for i in 0..150 {
        t.write(&format!("a/{i:03}.txt"), format!("x\nneedle a{i}\n"));
        t.write(&format!("a/{i:03}.q"), "nothing\n");
    }
    for i in 0..6000 {
        t.write(&format!("b/{i:04}.txt"), format!("x\nneedle b{i}\n"));
        t.write(&format!("b/{i:04}.q"), "nothing\n");
    }
    let end = t.path().join("a/150.txt");
    for change in ["empty", "remove"] {
        for jobs in ["-j1", "-j2"] {
            std::fs::write(&end, "needle F\n".repeat(1000)).unwrap();
            let mut child = command(t.path())
                .args([jobs, "-n", "needle"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
            let mut line = String::new();
            std::io::BufRead::read_line(&mut out, &mut line).unwrap();
            match change {
                "empty" => std::fs::write(&end, "").unwrap(),
                _ => std::fs::remove_file(&end).unwrap(),
            }
            let mut rest = String::new();
            std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
            assert!(child.wait().unwrap().success(), "{change} {jobs}");
            assert_eq!(rest.lines().filter(|l| l.contains("needle b")).count(), 6000, "{change} {jobs}");
        }
    }
}

#[test]
fn a_file_after_a_full_page_is_counted_on_the_next_one_only() {
    // `-c` pages of 200 files, then the rest: the file that meets a full
    // page is searched again by the next, and counted there alone, as rg
    // counts each file once.
    let t = Tree::new();
    for i in 0..900 {
        t.write(&format!("{}/{i:03}.txt", ["a", "b", "c"][i % 3]), "needle\n".repeat(1 + i % 3));
    }
    let searched =
        |out: &std::process::Output| stdout(out).lines().find(|l| l.ends_with(" files searched")).map(str::to_string);
    let rg = crate::conformance::rg(t.path(), &["--stats", "-c", "needle"]);
    assert_eq!(searched(&rg).as_deref(), Some("900 files searched"));
    for jobs in ["-j1", "-j2"] {
        assert_eq!(searched(&run(t.path(), &[jobs, "--stats", "-c", "needle"])), searched(&rg), "{jobs}");
    }
}
