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
    // with what was walked and read, then the same report.
    let line = format!(
        "{} --root {} index",
        env!("CARGO_BIN_EXE_sandgrep"),
        t.path().display() // (a temporary directory: no characters a shell would read)
    );
    let out = crate::util::on_terminal(&line);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("indexing: ") && shown.contains("entries looked at"), "{shown}");
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

/// `sandgrep --root ROOT ARGS...` with a cache of its own (listing and
/// pruning then see only this test's indexes); its JSON, when it printed one.
fn in_cache(cache: &Path, root: &Path, env: &[(&str, &str)], args: &[&str]) -> (std::process::Output, Value) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sandgrep"))
        .env("SANDGREP_CACHE_DIR", cache)
        .envs(env.iter().copied())
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, v)
}

/// The component's header checksum (`guest/src/index`), to forge an index
/// of another format that is otherwise whole.
fn header_checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in chunks.by_ref() {
        h = (h ^ u64::from_le_bytes(c.try_into().unwrap())).wrapping_mul(0x0100_0000_01b3).rotate_left(29);
    }
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3).rotate_left(29);
    }
    h ^ (h >> 31)
}

fn workspaces(v: &Value, list: &str) -> Vec<String> {
    v[list].as_array().unwrap().iter().filter_map(|i| i["workspace"].as_str()).map(str::to_string).collect()
}

#[test]
fn a_delta_of_no_index_there_is_a_leftover_and_a_current_one_is_kept() {
    let cache = tempfile::tempdir().unwrap();
    let t = Tree::new();
    for i in 0..20 {
        t.write(&format!("f{i:02}.txt"), &format!("file {i} says hello\n"));
    }
    // Past the window in which the index trusts no file's times.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    let (_, v) = in_cache(cache.path(), t.path(), &[], &["index", "--json"]);
    let dir = PathBuf::from(v["index_dir"].as_str().unwrap());
    // One file of twenty read again: a delta beside the index.
    t.write("f07.txt", "file 7 now says goodbye, at more length\n");
    in_cache(cache.path(), t.path(), &[], &["index", "--json"]);
    let delta = dir.join("index.v1.delta");
    assert!(delta.is_file(), "no delta written");
    let leftovers = || {
        let (_, v) = in_cache(cache.path(), t.path(), &[], &["index", "--list", "--json"]);
        v["indexes"][0]["leftover_files"].as_u64().unwrap()
    };
    assert_eq!(leftovers(), 0);
    let (_, v) = in_cache(cache.path(), t.path(), &[], &["index", "--prune", "--json"]);
    assert_eq!(v["removed"], serde_json::json!([]), "{v}");
    assert!(delta.is_file(), "--prune removed a delta in use");
    // The delta now names another index (as one left by a refresh stopped
    // between writing a new index and removing it).
    let mut bytes = std::fs::read(&delta).unwrap();
    bytes[16] ^= 0xff;
    let sum = header_checksum(&bytes[..80]);
    bytes[80..88].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&delta, &bytes).unwrap();
    assert_eq!(leftovers(), 1);
    // Searches pass it by (the index alone, and the files changed since read).
    let (_, v) = in_cache(cache.path(), t.path(), &[], &["search", "--json-page", "goodbye"]);
    assert_eq!((&v["stats"]["index"], v["matches"].as_array().map(Vec::len)), (&"served".into(), Some(1)), "{v}");
    let (_, v) = in_cache(cache.path(), t.path(), &[], &["index", "--prune", "--json"]);
    assert_eq!(v["removed"][0]["reason"], "leftovers", "{v}");
    assert!(!delta.exists() && dir.join("index.v1").is_file());
    assert_eq!(leftovers(), 0);
}

#[test]
fn index_list_and_prune_manage_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let (kept, gone, old, busy) = (Tree::new(), Tree::new(), Tree::new(), Tree::new());
    let real = |t: &Tree| std::fs::canonicalize(t.path()).unwrap().display().to_string();
    let names = [real(&kept), real(&gone), real(&old), real(&busy)];
    let mut dirs = Vec::new();
    for t in [&kept, &gone, &old, &busy] {
        t.write("a.txt", "some text\n").write("b.txt", "more text\n");
        let (_, v) = in_cache(cache.path(), t.path(), &[], &["index", "--json"]);
        dirs.push(PathBuf::from(v["index_dir"].as_str().unwrap()));
    }
    let [kept_dir, gone_dir, old_dir, busy_dir] = &dirs[..] else { unreachable!() };
    // Listed: each workspace, there, current (this build's format), its
    // files, its size; a total.
    let (out, v) = in_cache(cache.path(), kept.path(), &[], &["index", "--list", "--json"]);
    assert_eq!(workspaces(&v, "indexes").iter().collect::<std::collections::BTreeSet<_>>(), names.iter().collect());
    for i in v["indexes"].as_array().unwrap() {
        assert_eq!(
            (&i["workspace_exists"], &i["format"], &i["files"]),
            (&true.into(), &"current".into(), &2.into()),
            "{i}"
        );
        assert!(i["bytes"].as_u64() > Some(0) && i["built"].as_u64() > Some(0), "{i}");
    }
    let sum: u64 = v["indexes"].as_array().unwrap().iter().map(|i| i["bytes"].as_u64().unwrap()).sum();
    assert_eq!(v["total_bytes"].as_u64(), Some(sum), "{}", String::from_utf8_lossy(&out.stdout));
    let (out, _) = in_cache(cache.path(), kept.path(), &[], &["index", "--list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(names.iter().all(|n| text.contains(n.as_str())) && text.contains("4 indexes"), "{text}");

    // A workspace gone; an index of an older format (checksums and all);
    // leftovers of an interrupted build beside a good index, next to files
    // that are not sandgrep's; a workspace gone whose index another process
    // holds, leftovers and all.
    drop(gone);
    let file = old_dir.join("index.v1");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[8..12].copy_from_slice(&4u32.to_le_bytes());
    let sum = header_checksum(&bytes[..72]);
    bytes[72..80].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&file, &bytes).unwrap();
    for leftover in ["index.v1.0123456789abcdef.tmp", "index.v1.0123456789abcdef.run0"] {
        std::fs::write(kept_dir.join(leftover), vec![7u8; 100_000]).unwrap();
        std::fs::write(busy_dir.join(leftover), "x").unwrap();
    }
    for foreign in ["precious", "index.v1.bak", "index.v1.0123456789abcdef.tmp.keep"] {
        std::fs::write(kept_dir.join(foreign), "mine").unwrap();
    }
    drop(busy);
    let lock = std::fs::File::options().write(true).open(busy_dir.join("lock")).unwrap();
    lock.lock().unwrap();
    // Not sandgrep's, though named alike: a directory with a file of its
    // own, and a link to a directory outside the cache.
    let root = kept_dir.parent().unwrap();
    let stranger = root.join("stranger-0123456789abcdef");
    std::fs::create_dir(&stranger).unwrap();
    std::fs::write(stranger.join("workspace"), "/nonexistent/workspace").unwrap();
    std::fs::write(stranger.join("lock"), "").unwrap();
    std::fs::write(stranger.join("precious"), "mine").unwrap();
    let outside = tempfile::tempdir().unwrap();
    for (f, text) in [("workspace", "/nonexistent/workspace"), ("lock", ""), ("index.v1.0123456789abcdef.tmp", "x")] {
        std::fs::write(outside.path().join(f), text).unwrap();
    }
    std::os::unix::fs::symlink(outside.path(), root.join("link-0123456789abcdef")).unwrap();

    let (_, listed) = in_cache(cache.path(), kept.path(), &[], &["index", "--list", "--json"]);
    let by_dir = |d: &Path| {
        listed["indexes"].as_array().unwrap().iter().find(|i| i["dir"] == d.display().to_string()).unwrap().clone()
    };
    assert_eq!(by_dir(gone_dir)["workspace_exists"], false);
    assert_eq!((&by_dir(old_dir)["format"], &by_dir(old_dir)["version"]), (&"old".into(), &4.into()));
    assert_eq!(by_dir(kept_dir)["leftover_files"], 2);

    let (_, v) = in_cache(cache.path(), kept.path(), &[], &["index", "--prune", "--json"]);
    let reasons: Vec<(String, String)> = v["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["dir"].as_str().unwrap().to_string(), r["reason"].as_str().unwrap().to_string()))
        .collect();
    let d = |p: &Path| p.display().to_string();
    assert!(reasons.contains(&(d(gone_dir), "workspace_gone".into())), "{v}");
    assert!(reasons.contains(&(d(old_dir), "old_format".into())), "{v}");
    assert!(reasons.contains(&(d(kept_dir), "leftovers".into())), "{v}");
    assert_eq!(reasons.len(), 3, "{v}");
    let kept_back: Vec<(String, String)> = v["kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["dir"].as_str().unwrap().to_string(), r["reason"].as_str().unwrap().to_string()))
        .collect();
    assert!(kept_back.contains(&(d(busy_dir), "locked".into())), "{v}");
    assert!(kept_back.contains(&(d(&stranger), "foreign_files".into())), "{v}");
    assert!(v["freed_bytes"].as_u64() >= Some(200_000), "{v}");
    // What it said it removed is gone; the rest is as it was.
    assert!(!gone_dir.exists() && !old_dir.exists());
    assert!(kept_dir.join("index.v1").is_file() && !kept_dir.join("index.v1.0123456789abcdef.run0").exists());
    for foreign in ["precious", "index.v1.bak", "index.v1.0123456789abcdef.tmp.keep"] {
        assert!(kept_dir.join(foreign).is_file(), "{foreign}");
    }
    assert!(busy_dir.join("index.v1").is_file() && busy_dir.join("index.v1.0123456789abcdef.tmp").is_file());
    assert!(stranger.join("precious").is_file() && stranger.join("workspace").is_file());
    assert!(outside.path().join("index.v1.0123456789abcdef.tmp").is_file() && outside.path().join("lock").is_file());
    // Once the lock is let go, the busy one goes too; then nothing is left to prune.
    drop(lock);
    let (out, _) = in_cache(cache.path(), kept.path(), &[], &["index", "--prune"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(workspace gone)") && text.contains("freed "), "{text}");
    assert!(!busy_dir.exists());
    let (_, v) = in_cache(cache.path(), kept.path(), &[], &["index", "--prune", "--json"]);
    assert_eq!(v["removed"], serde_json::json!([]), "{v}");
    // (Searches still use the index that stayed.)
    let (_, v) = in_cache(cache.path(), kept.path(), &[], &["search", "--json-page", "some"]);
    assert_eq!(v["stats"]["index"], "served", "{v}");
}

#[test]
fn over_the_cache_cap_the_least_recently_used_index_goes() {
    let cache = tempfile::tempdir().unwrap();
    let trees = [Tree::new(), Tree::new(), Tree::new()];
    for t in &trees {
        t.write("a.txt", "some text\n").write("b.txt", "more text\n");
    }
    let [first, second, third] = &trees;
    let dir = |t: &Tree| {
        PathBuf::from(in_cache(cache.path(), t.path(), &[], &["index", "--json"]).1["index_dir"].as_str().unwrap())
    };
    let (first_dir, second_dir) = (dir(first), dir(second));
    // Both last used two hours ago (the second built after the first)...
    for (d, hours) in [(&first_dir, 3), (&second_dir, 2)] {
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(hours * 3600);
        for f in ["index.v1", "used"] {
            std::fs::File::options().write(true).open(d.join(f)).unwrap().set_modified(then).unwrap();
        }
    }
    // ...then a search uses the first: the second is the least recently used.
    let (_, v) = in_cache(cache.path(), first.path(), &[], &["search", "--json-page", "some"]);
    assert_eq!(v["stats"]["index"], "served", "{v}");
    let (_, listed) = in_cache(cache.path(), first.path(), &[], &["index", "--list", "--json"]);
    let one = listed["indexes"][0]["bytes"].as_u64().unwrap();
    // Room for two and a half: the third's build removes the second, and
    // says so.
    let cap = (one * 5 / 2).to_string();
    let (_, v) = in_cache(cache.path(), third.path(), &[("SANDGREP_CACHE_MAX", &cap)], &["index", "--json"]);
    let second_name = std::fs::canonicalize(second.path()).unwrap().display().to_string();
    assert_eq!(workspaces(&v, "evicted"), [second_name], "{v}");
    assert_eq!(v["evicted"][0]["reason"], "over_cap", "{v}");
    assert!(!second_dir.exists() && first_dir.join("index.v1").is_file());
    assert!(PathBuf::from(v["index_dir"].as_str().unwrap()).join("index.v1").is_file());
    // Under the cap, nothing goes; with a cap of one byte, everything but
    // the index just built goes, and the text report says so.
    let (_, v) = in_cache(cache.path(), third.path(), &[("SANDGREP_CACHE_MAX", &cap)], &["index", "--json"]);
    assert_eq!(v["evicted"], serde_json::json!([]), "{v}");
    let (out, _) = in_cache(cache.path(), third.path(), &[("SANDGREP_CACHE_MAX", "1")], &["index"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("least recently used") && !first_dir.exists(), "{text}");
    let (_, listed) = in_cache(cache.path(), third.path(), &[], &["index", "--list", "--json"]);
    assert_eq!(listed["indexes"].as_array().map(Vec::len), Some(1), "{listed}");
}

/// -z reads compressed files' text, which no index holds (it indexes the
/// bytes on disk, and those look binary): such a search reads every file,
/// and answers as a scan does.
#[test]
fn a_search_of_compressed_files_never_uses_the_index() {
    let tree = Tree::new();
    tree.write("plain.txt", "needle in plain text\n");
    tree.write("logs/a.gz", crate::util::gzip(b"needle in compressed text\n"));
    settle();
    index(tree.path());
    let (plain, stats) = search(tree.path(), false, &["--json-page", "needle"]);
    assert_eq!(stats["index"], "served", "{stats}");
    assert_eq!(plain["matches"].as_array().unwrap().len(), 1, "{plain}");
    for args in [&["--json-page", "-z", "needle"][..], &["--json-page", "-z", "-c", "compressed"]] {
        let (scanned, _) = search(tree.path(), true, args);
        let (indexed, stats) = search(tree.path(), false, args);
        assert_eq!(scanned, indexed, "{args:?}");
        assert_eq!(stats["index"], "none", "{args:?}: {stats}");
        assert!(indexed.to_string().contains("logs/a.gz"), "{args:?}: {indexed}");
    }
}
