//! The persistent index (SPEC §6) through the real binary: every ripgrep
//! oracle case answered the same indexed and scanned (results, pages,
//! cursors, warnings), after edits, deletions, renames and new ignore files
//! too, and a damaged or foreign index never changes an answer.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::conformance::{git_tree, plain_tree, CASES, PATH_CASES, UNCAPPED};
use crate::util::{json, run, Tree};

/// Past the window in which the index does not trust a file's times.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2200));
}

fn index(root: &Path) -> PathBuf {
    let v = json(root, &["index", "--json"]);
    assert!(v["files"].as_u64().unwrap() > 0, "{v}");
    PathBuf::from(v["index_dir"].as_str().unwrap())
}

/// A search's JSON, its stats (which say what the index did) apart.
fn search(root: &Path, scan: bool, args: &[&str]) -> (Value, Value) {
    let mut full = if scan { vec!["--no-index", "search"] } else { vec!["search"] };
    full.extend_from_slice(args);
    let mut v = json(root, &full);
    let stats = v["stats"].take();
    (v, stats)
}

/// Every case, whole and in pages of two, indexed and scanned; how many the
/// index served by leaving files unread.
fn same_answers(tree: &Tree, cases: &[&[&str]]) -> usize {
    let mut served = 0;
    for case in cases {
        let mut whole = UNCAPPED.to_vec();
        whole.extend_from_slice(case);
        let mut paged = vec!["--json-page", "--max-results", "2"];
        paged.extend_from_slice(case);
        for args in [whole, paged] {
            let (scanned, _) = search(tree.path(), true, &args);
            let (indexed, stats) = search(tree.path(), false, &args);
            assert_eq!(scanned, indexed, "{args:?}");
            if stats["index"] == "served" && stats["files_skipped_by_index"].as_u64() > Some(0) {
                served += 1;
            }
            // The next page too, by the cursor both handed out.
            if let Some(cursor) = scanned["next_cursor"].as_str() {
                let mut next = args.clone();
                next.extend_from_slice(&["--cursor", cursor]);
                assert_eq!(search(tree.path(), true, &next).0, search(tree.path(), false, &next).0, "{next:?}");
            }
        }
    }
    served
}

#[test]
fn every_oracle_case_answers_the_same_indexed_and_scanned() {
    let tree = git_tree();
    settle();
    index(tree.path());
    let served = same_answers(&tree, &[CASES, PATH_CASES].concat());
    // The index did its part: most cases left files unread.
    assert!(served > CASES.len() / 2, "only {served} searches were narrowed");
    let plain = plain_tree();
    settle();
    index(plain.path());
    same_answers(&plain, CASES);
}

#[test]
fn changes_since_the_index_are_in_every_answer() {
    let tree = git_tree();
    settle();
    index(tree.path());
    // An edit of the same size, a new file, a deletion, a rename, a new
    // ignore file and a removed one — none of it indexed.
    let edit = std::fs::read_to_string(tree.path().join("src/lib.rs")).unwrap().replacen("foo", "qux", 1);
    tree.write("src/lib.rs", edit);
    tree.write("src/fresh.rs", "let needle_fresh = foo;\n");
    std::fs::remove_file(tree.path().join("README.md")).ok();
    std::fs::rename(tree.path().join("web/app.ts"), tree.path().join("web/moved.ts")).ok();
    tree.write("sub/.ignore", "*.py\n");
    std::fs::remove_file(tree.path().join(".ignore")).ok();
    same_answers(&tree, &[&["foo"], &["qux"], &["needle_fresh"], &["-i", "needle"], &["-t", "py", "foo"]]);
    // Refreshed, and changed again within the time the index distrusts.
    index(tree.path());
    tree.write("src/fresh.rs", "let needle_later = foo;\n");
    same_answers(&tree, &[&["needle_later"], &["needle_fresh"]]);
}

#[test]
fn a_rewrite_that_puts_the_times_back_is_seen() {
    // A hostile writer changes a file in place, same size, and sets its
    // modification time back: only the status-change time (which no writer
    // can set) moves, and the host must report the real one.
    let tree = Tree::new();
    tree.write("a.txt", "quiet words here\n").write("b.txt", "other words\n");
    settle();
    index(tree.path());
    let file = tree.path().join("a.txt");
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, "xyzzy words here\n").unwrap();
    std::fs::File::options().write(true).open(&file).unwrap().set_modified(mtime).unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), mtime);
    let (v, stats) = search(tree.path(), false, &["--json-page", "xyzzy"]);
    assert_eq!(stats["index"], "served", "{stats}");
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v, search(tree.path(), true, &["--json-page", "xyzzy"]).0);
}

#[test]
fn a_damaged_or_foreign_index_never_changes_an_answer() {
    let tree = git_tree();
    let other = plain_tree();
    settle();
    let dir = index(tree.path());
    let file = dir.join("index.v1");
    let good = std::fs::read(&file).unwrap();
    let check = |what: &str| {
        for case in [&["foo"][..], &["-i", "needle"], &["-w", "bar"]] {
            let mut args = UNCAPPED.to_vec();
            args.extend_from_slice(case);
            assert_eq!(search(tree.path(), true, &args).0, search(tree.path(), false, &args).0, "{what} {case:?}");
        }
    };
    // Bytes flipped all through it (checksums catch them), cut short, zeroed.
    for at in (0..good.len()).step_by(good.len() / 13 + 1) {
        let mut bad = good.clone();
        bad[at] ^= 0x5a;
        std::fs::write(&file, &bad).unwrap();
        check(&format!("byte {at} flipped"));
    }
    std::fs::write(&file, &good[..good.len() / 2]).unwrap();
    check("truncated");
    std::fs::write(&file, vec![0u8; good.len()]).unwrap();
    check("zeroed");
    // Another workspace's index in this one's place: its entries' times are
    // not these files', so nothing is skipped on its word.
    let foreign = index(other.path()).join("index.v1");
    std::fs::copy(&foreign, &file).unwrap();
    check("foreign");
    // A refresh replaces what it cannot trust.
    let v = json(tree.path(), &["index", "--json"]);
    assert!(v["rebuilt"].is_string() || v["files_read"].as_u64() > Some(0), "{v}");
    check("rebuilt");
    // The index lives outside the workspace, which stays untouched.
    assert!(!dir.starts_with(tree.path()));
    let out = run(tree.path(), &["--no-index", "ls", "--hidden", "--no-ignore"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("index.v1"));
}

#[test]
fn sandgrep_index_shows_its_progress_on_a_terminal_only() {
    let t = Tree::new();
    for i in 0..50 {
        t.write(&format!("f{i}.txt"), "some text\n");
    }
    // Piped: the report alone.
    let piped = run(t.path(), &["index"]);
    assert!(piped.status.success());
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("indexing:"));
    // On a terminal (`script` gives the command one): the progress line,
    // with what was looked at, then the same report.
    let line = format!(
        "{} --root {} index",
        env!("CARGO_BIN_EXE_sandgrep"),
        t.path().display() // (a temporary directory: no characters a shell would read)
    );
    let out = crate::util::on_terminal(&line);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("indexing: ") && shown.contains("files looked at"), "{shown}");
    assert!(shown.contains("indexed 50 files"), "{shown}");
}

#[test]
fn each_policy_keeps_its_own_index() {
    let t = Tree::new();
    t.write("a.txt", "needle\n");
    t.write("b.txt", "hay\n");
    settle();
    let redacting = index(t.path());
    let v = json(t.path(), &["--no-redact", "index", "--json"]);
    let plain = PathBuf::from(v["index_dir"].as_str().unwrap());
    assert_ne!(redacting, plain);
    // Neither rebuilds the other's: both serve, and a refresh reads nothing.
    for policy in [&[][..], &["--no-redact"], &["--deny", "*.env"]] {
        let mut args = policy.to_vec();
        args.extend_from_slice(&["index", "--json"]);
        json(t.path(), &args);
        let refreshed = json(t.path(), &args);
        assert_eq!(refreshed["files_read"], 0, "{policy:?}: {refreshed}");
        let mut args = policy.to_vec();
        args.extend_from_slice(&["search", "--json-page", "needle"]);
        let v = json(t.path(), &args);
        assert_eq!((&v["stats"]["index"], &v["stats"]["files_skipped_by_index"]), (&"served".into(), &1.into()), "{v}");
    }
}

#[test]
fn the_index_of_a_workspace_gone_for_a_week_is_removed() {
    // Indexes live in the user's cache, one per workspace: one whose
    // workspace is gone, and which was not written for a week, goes at the
    // next `sandgrep index` (of any workspace); the others stay.
    let (gone, kept, other) = (Tree::new(), Tree::new(), Tree::new());
    for t in [&gone, &kept, &other] {
        t.write("a.txt", "text\n");
    }
    let (gone_dir, kept_dir) = (index(gone.path()), index(kept.path()));
    let gone_path = std::fs::canonicalize(gone.path()).unwrap();
    drop(gone);
    // Not sandgrep's, though it looks alike: never touched.
    let stranger = gone_dir.with_file_name("notmine");
    std::fs::create_dir(&stranger).unwrap();
    for f in ["workspace", "lock", "precious"] {
        std::fs::write(stranger.join(f), if f == "workspace" { "/nonexistent" } else { "" }).unwrap();
    }
    let age = |dir: &Path| {
        for f in std::fs::read_dir(dir).unwrap() {
            let month_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(30 * 24 * 3600);
            std::fs::File::open(f.unwrap().path()).unwrap().set_modified(month_ago).unwrap();
        }
    };
    age(&stranger);
    let pruned = |v: &Value| -> Vec<String> {
        v["pruned"].as_array().unwrap().iter().filter_map(Value::as_str).map(str::to_string).collect()
    };
    // Gone, but written recently: kept (a drive may come back).
    let v = json(other.path(), &["index", "--json"]);
    assert!(!pruned(&v).contains(&gone_path.to_string_lossy().into_owned()), "{v}");
    assert!(gone_dir.join("index.v1").is_file());
    age(&gone_dir);
    let v = json(other.path(), &["index", "--json"]);
    assert!(pruned(&v).contains(&gone_path.to_string_lossy().into_owned()), "{v}");
    assert!(!gone_dir.exists() && kept_dir.join("index.v1").is_file() && stranger.join("precious").is_file());
    std::fs::remove_dir_all(&stranger).unwrap();
}

#[test]
fn indexed_answers_come_in_rgs_path_order() {
    // Names whose whole-path bytewise order is not rg's (`git/x.go` before
    // `git.go`): the index's table of files is in path order, and its
    // answers, whole and paged, are the scan's and rg's.
    let tree = crate::rg_output::order_tree();
    settle();
    index(tree.path());
    let cases: &[&[&str]] = &[&["-n", "foo"], &["-l", "foo"], &["-c", "foo"], &["foo", "a", "git"]];
    assert!(same_answers(&tree, cases) >= cases.len(), "the index left too few files unread");
    let rg = crate::util::rg_command().args(["--sort", "path", "-n", "foo"]).current_dir(tree.path()).output().unwrap();
    let out = run(tree.path(), &["-n", "foo"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), String::from_utf8(rg.stdout).unwrap());
    let (v, stats) = search(tree.path(), false, &["--json-page", "-l", "foo"]);
    assert_eq!(stats["index"], "served", "{stats}");
    let files: Vec<&str> = v["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    let mut want: Vec<&str> = crate::rg_output::ORDER_FILES.to_vec();
    want.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
    assert_eq!(files, want);
}
