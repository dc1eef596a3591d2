//! The CLI's text output against ripgrep's, byte for byte, flag by flag:
//! every flag set runs `rg --sort path FLAGS` and `sandgrep FLAGS` on the
//! same generated tree and compares standard output and exit status —
//! piped, and on a terminal (colors, headings, line numbers).

use std::path::Path;

use crate::conformance::rg;
use crate::util::{command, gzip, on_terminal, run, stdout, Tree};

/// Files with matches spread over lines and directories, context to show,
/// several matches per line, a file with more matching lines than one page
/// (and than the agent tools' per-file cap), CRLF, tabs, no final newline,
/// words and case variants, an ignored, a hidden and a binary file.
fn tree() -> Tree {
    let t = Tree::new();
    let mut seed = 11u64;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let words = ["foo", "bar", "foo bar foo", "Foo", "foobar", "baz\tfoo", "qux", "food", "x", "FOO"];
    for dir in ["", "src/", "src/deep/", "docs/"] {
        for f in 0..4 {
            let text: String =
                (0..5 + next(30)).map(|i| format!("{i} {}\n", words[next(words.len() as u64) as usize])).collect();
            t.write(&format!("{dir}f{f}.txt"), text);
        }
    }
    t.write("big.txt", (0..6000).map(|i| format!("foo {i}\n")).collect::<String>());
    t.write("crlf.txt", "foo\r\nbar\r\nfoo bar\r\n");
    t.write("last.txt", "bar\nfoo at the end");
    t.write("twice.txt", "foofoo barbar\n");
    t.write(".gitignore", "ignored.txt\n");
    t.write("ignored.txt", "foo ignored\n");
    t.write(".hidden.txt", "foo hidden\n");
    t.write("bin.dat", b"foo\0binary\n");
    t.write("-dash.txt", "foo dash\n");
    // Empty matches fall inside `ſ` (two bytes) with `x|`.
    t.write("utf8.txt", "ſkip foo\né\n");
    // Links: followed with -L only.
    std::os::unix::fs::symlink("f0.txt", t.path().join("linked.txt")).unwrap();
    std::os::unix::fs::symlink("src/deep", t.path().join("srclink")).unwrap();
    t
}

/// Every flag set in `sets` prints what rg prints, with its exit status
/// (all differences listed at once).
fn all_as_rgs(root: &Path, sets: &[&[&str]]) {
    let mut differ = Vec::new();
    for args in sets {
        let (theirs, ours) = both(root, args);
        if theirs != ours {
            differ.push(format!(
                "{args:?}: exit {:?} vs {:?}; {}",
                theirs.1,
                ours.1,
                first_difference(&theirs.0, &ours.0)
            ));
        }
    }
    assert!(differ.is_empty(), "{} of {} flag sets differ:\n{}", differ.len(), sets.len(), differ.join("\n"));
}

/// rg's and sandgrep's standard output and exit status for `args`.
fn both(root: &Path, args: &[&str]) -> ((String, Option<i32>), (String, Option<i32>)) {
    let mut with_sort = vec!["--sort", "path"];
    with_sort.extend_from_slice(args);
    let theirs = rg(root, &with_sort);
    let ours = run(root, args);
    ((stdout(&theirs), theirs.status.code()), (stdout(&ours), ours.status.code()))
}

#[test]
fn piped_output_is_rgs_byte_for_byte() {
    let t = tree();
    // Pattern files for -f, outside the tree.
    let outside = Tree::new();
    outside.write("patterns", "qux\n[0-9]+ x$\n").write("none", "");
    let patterns = outside.path().join("patterns").display().to_string();
    let no_patterns = outside.path().join("none").display().to_string();
    let sets: &[&[&str]] = &[
        &["foo"],
        &["-n", "foo"],
        &["-N", "foo"],
        &["--column", "foo"],
        &["-n", "--column", "foo"],
        &["-w", "foo"],
        &["-i", "-n", "foo"],
        &["-S", "Foo"],
        &["-S", "foo"],
        &["-F", "o b"],
        &["-e", "bar", "-e", "qux"],
        &["-F", "-e", "x", "-e", "foo bar"],
        &["-o", "foo"],
        &["-o", "-n", "--column", "fo+"],
        &["-o", "-C", "1", "baz"],
        &["-v", "foo"],
        &["-v", "-n", "--column", "o"],
        &["-v", "-C", "1", "-n", "o"],
        &["-c", "foo"],
        &["-c", "-v", "foo"],
        &["-l", "bar"],
        &["-l", "-v", "foo"],
        &["-A", "2", "-n", "qux"],
        &["-B", "3", "bar"],
        &["-C", "1", "-n", "food"],
        &["-C", "2", "--heading", "-n", "qux"],
        &["--heading", "bar"],
        &["--heading", "-c", "bar"],
        &["-m", "2", "foo"],
        &["-m", "3", "-c", "foo"],
        &["-m", "0", "foo"],
        &["-g", "*.txt", "-g", "!src/**", "-n", "bar"],
        &["-t", "txt", "-l", "qux"],
        &["-u", "-l", "foo"],
        &["-uu", "-l", "foo"],
        &["--hidden", "-c", "foo"],
        &["--no-ignore", "-c", "foo"],
        &["foo", "src"],
        &["-n", "foo", "src/f1.txt"],
        &["-H", "foo", "src/f1.txt"],
        &["-c", "foo", "src/f1.txt", "docs"],
        &["foo", "./src", "last.txt"],
        &["foo", "."],
        &["--color", "never", "foo"],
        &["--color", "always", "foo"],
        &["--color", "always", "-n", "--column", "--heading", "-C", "1", "bar"],
        &["--color", "always", "-o", "fo+"],
        &["--color", "always", "-l", "qux"],
        &["--color", "always", "-c", "qux"],
        &["--files"],
        &["--files", "src"],
        &["--files", "-g", "*1.txt"],
        &["x|", "utf8.txt"],
        &["-o", "x|", "utf8.txt"],
        &["--color", "always", "-o", "x|", "utf8.txt"],
        &["--count-matches", "foo"],
        &["--count-matches", "-m", "2", "-w", "foo"],
        &["-o", "-c", "-i", "foo"],
        &["-L", "--files"],
        &["-L", "-c", "foo"],
        &["nothing matches this"],
        &["-U", "-n", "bar\\n[0-9]+ foo"],
        &["^[0-9]+ x$"],
        &["-n", "end$"],
        &["-q", "foo"],
        &["-q", "nothing matches this"],
        &["--vimgrep", "foo"],
        &["--vimgrep", "-o", "-C", "1", "baz"],
        &["--vimgrep", "--color", "always", "foo", "src"],
        &["-0", "-C", "1", "qux"],
        &["-0", "-l", "bar"],
        &["-0", "-c", "--heading", "bar"],
        &["-0", "--files", "src"],
        &["--trim", "-n", "--column", "foo"],
        &["--trim", "--color", "always", "-C", "1", "baz"],
        &["-x", "[0-9]+ bar"],
        &["-x", "-F", "-i", "2 FOO"],
        &["-x", "-e", "0 qux", "-e", "1 x"],
        &["-f", &patterns, "-n"],
        &["-f", &patterns, "-e", "qux", "src"],
        &["-f", &no_patterns],
        &["--files-without-match", "-f", &no_patterns],
        &["-c", "--include-zero", "-f", &no_patterns],
        &["-M", "9", "-C", "1", "bar"],
        &["--max-columns", "9", "-n", "--column", "-v", "foo"],
        &["--max-columns", "9", "--color", "always", "foo", "src"],
        &["--max-columns", "9", "--vimgrep", "foo", "src"],
        &["-p", "qux"],
        &["--no-config", "--no-ignore-global", "--line-buffered", "-c", "bar"],
        &["-U", "--multiline-dotall", "-c", "bar.[0-9]"],
        &["-n", "foo", "src/f1.txt", "./src/f1.txt", "src"],
        &["-l", "foo", "src", "."],
        &["--max-depth", "1", "-c", "foo"],
        &["--max-depth", "2", "-l", "foo", "src"],
        &["--max-depth", "0", "foo"],
        &["--max-depth", "0", "-n", "foo", "src/f1.txt"],
        &["-T", "txt", "foo"],
        &["-t", "txt", "-T", "txt", "foo"],
        &["-g", "*.none", "foo"],
        &["--files", "-t", "txt", "src"],
        &["--files", "-T", "txt"],
        &["--files", "--max-depth", "1"],
        &["-r", "X", "foo"],
        &["-r", "<$1>", "-o", "-n", "f(o+)"],
        &["-r", "${w}$$", "--color", "always", "(?P<w>ba[rz])"],
        &["--replace", "", "-i", "-w", "-C", "1", "foo"],
        &["-r", "-", "x*", "utf8.txt"],
        &["-U", "-o", "-n", "bar\\n"],
        &["-U", "--column", "--color", "always", "bar\\n[0-9]"],
        &["--vimgrep", "-U", "bar\\n[0-9]+"],
        &["-M", "0", "foo", "src"],
        &["-o", "-M", "5", "foo bar|foo", "src"],
        &["-N", "--vimgrep", "qux"],
        &["-p", "--vimgrep", "qux"],
        &["-p", "--no-heading", "qux"],
        &["--no-heading", "-p", "-I", "qux"],
        &["-I", "--heading", "qux"],
        &["-c", "-l", "bar"],
        &["-l", "-c", "bar"],
        &["--count-matches", "--files-without-match", "qux"],
        &["--files-without-match", "-l", "qux"],
        &["-p", "--color", "never", "-c", "qux"],
        &["--heading", "-N", "-p", "qux"],
        &["-p", "-N", "--no-heading", "qux"],
        &["-C", "2", "-B", "0", "-n", "qux"],
        &["-A", "0", "-C", "1", "qux"],
        &["-d", "1", "-c", "foo"],
        &["-v", "-f", &no_patterns, "src"],
        &["-M", "9", "-r", "ZZ", "-n", "foo", "src"],
        &["-x", "-w", "[0-9]+ foo"],
        &["-w", "-x", "[0-9]+ foo"],
        &["-n", "-C", "2", "-A", "1", "qux"],
        &["-n", "-A", "1", "-B", "0", "qux"],
        &["-n", "-C", "0", "-A", "2", "qux"],
        &["qux", "missing.txt", "src"],
        &["-q", "qux", "missing.txt", "src"],
        &["--files-without-match", "qux"],
        &["--files-without-match", "foo", "src", "last.txt"],
        &["-l", "--files-without-match", "-v", "o"],
        &["--files-without-match", "-c", "qux"],
        &["-c", "--include-zero", "qux"],
        &["--count-matches", "--include-zero", "-0", "qux", "src"],
        &["--iglob", "*.TXT", "-c", "bar"],
        &["--glob-case-insensitive", "-g", "SRC/**", "-g", "!*[0-1].TXT", "-l", "foo"],
        &["--iglob", "!{F,L}[0-9A-Z]*", "--files"],
        &["-n", "-C", "1", "--context-separator", "\\t==", "--field-match-separator", "=>", "qux"],
        &["-C", "1", "--no-context-separator", "--field-context-separator", "", "--path-separator", "\\", "qux"],
        &["--files", "--path-separator", "|", "src"],
        &["--files", ".", "src/f1.txt", "./src/deep"],
        &["--files", "missing.txt", "src"],
        &["--files", "--color", "always", "src"],
        &["-t", "md", "foo", "src"],
        &["-M", "9", "-r", "Z", "foo", "src"],
        &["--include-zero", "-c", "qux", "src", "missing.txt", "docs"],
        &["-g", "!src/**", "-g", "*1.txt", "-l", "foo"],
        &["-g", "*1.txt", "-g", "!src/**", "-l", "foo"],
        &["--files", "-g", "!docs/**", "--iglob", "DOCS/F2*"],
        &["--files-without-match", "--max-depth", "0", "foo"],
        &["-H", "--field-match-separator", "\\xC3\\xA9", "--path-separator", "", "qux", "src"],
        &["-s", "-c", "foo"],
        &["-i", "-s", "-l", "FOO"],
        &["--max-filesize", "40", "-c", "foo"],
        &["--max-filesize", "1K", "-l", "bar"],
        &["--block-buffered", "-c", "bar"],
        &["--no-messages", "qux", "missing.txt", "src"],
        &["--type-list"],
        &["-M", "9", "--max-columns-preview", "-C", "1", "bar"],
        &["-M", "9", "--max-columns-preview", "-n", "--column", "foo", "src"],
        &["-M", "5", "--max-columns-preview", "--color", "always", "foo", "src"],
        &["-M", "6", "--max-columns-preview", "--vimgrep", "foo", "src"],
        &["-M", "9", "--max-columns-preview", "-r", "ZZ", "foo", "src"],
        &["-M", "9", "--max-columns-preview", "--no-max-columns-preview", "foo", "src"],
        &["-n", "foo", "docs/../src/deep", "./src/../last.txt"],
        &["--files", "src/deep/../../docs"],
        &["--color", "always", "--colors", "match:fg:blue", "--colors", "path:none", "-n", "--column", "foo", "src"],
        &["--color", "always", "--colors", "match:none", "--colors", "line:bg:0x10", "-C", "1", "qux"],
        &["--color=always", "--colors=column:fg:10,20,30", "--colors=match:style:underline", "--column", "-o", "fo+"],
        &["--colors", "path:fg:red", "--hyperlink-format=", "-H", "-N", "foo", "src"],
        // What editors pass to rg: telescope.nvim's live_grep and fzf.vim's :Rg.
        &["--color=never", "--no-heading", "--with-filename", "--line-number", "--column", "--smart-case", "--", "foo"],
        &["--column", "--line-number", "--no-heading", "--color=always", "--smart-case", "--", "Foo"],
        // rg's memory maps (see `memory_maps_are_rgs`), on text files.
        &["--mmap", "-c", "foo"],
        &["--no-mmap", "-n", "bar", "src"],
        // Flags that change nothing in sandgrep, accepted as rg's.
        &["--dfa-size-limit", "10", "--regex-size-limit", "1M", "-c", "fo+"],
        &["--engine", "auto", "-l", "qux"],
        &["--engine", "default", "-c", "qux"],
        &["--engine", "pcre2", "qux"],
        &["--no-unicode", "-n", "-w", "\\w+ foo"],
        &["--no-unicode", "--unicode", "-o", "\\w+", "utf8.txt"],
        &["--no-column", "--vimgrep", "foo", "src"],
        &["--column", "--no-column", "-n", "foo", "src"],
        &["--sort-files", "-c", "foo"],
        &["--no-sort-files", "foo", "src/f1.txt"],
        &["--no-ignore-exclude", "--ignore-exclude", "-l", "foo"],
        &["--no-ignore-messages", "--ignore-messages", "-c", "foo"],
        &["--max-filesize", "34359738368G", "--files"],
        &["--max-filesize", "1k", "-c", "foo"],
        // -b: each line's byte offset, each match's with -o and --vimgrep.
        &["-b", "-n", "-C", "1", "qux"],
        &["-b", "-o", "foo", "src"],
        &["-b", "--vimgrep", "foo", "src"],
        &["--byte-offset", "--no-byte-offset", "foo", "src"],
        // Sorting: the files in reverse path order, or by modification time.
        &["--sortr", "path", "-n", "bar"],
        &["--sortr", "path", "-c", "foo", "./src", "docs"],
        &["--sortr", "path", "--files"],
        &["--sortr", "path", "--heading", "-n", "qux", "src"],
        // The files a sorted search's walk found are searched as found (a
        // binary one stops at its NUL, unnamed), one named as named.
        &["--sortr", "path", "foo"],
        &["--sortr", "path", "foo", "bin.dat", "src"],
        &["--sortr", "path", "--files-without-match", "zzz"],
        &["--sortr", "path", "-c", "--include-zero", "zzz", "bin.dat", "."],
        &["--sortr", "path", "foo", "./twice.txt"],
        // rg's type `all`: every type defined.
        &["-t", "all", "-c", "foo"],
        &["-T", "all", "--files"],
        // Types defined, cleared and composed, in the order given.
        &["--type-add", "foo:*.txt", "-t", "foo", "-c", "bar"],
        &["--type-add", "dat:*.dat", "--type-add", "both:include:dat,txt", "-t", "both", "--files"],
        &["--type-clear", "txt", "--type-add", "txt:f1.*", "-t", "txt", "-l", "foo"],
        &["--type-add", "txt:f1.*", "--type-clear", "txt", "-t", "txt", "-l", "foo"],
        &["--type-add", "mine:*.txt", "--type-list"],
        &["--type-add", "bad", "foo"],
        &["--max-filesize", "100", "--files"],
        // A pattern that must match a NUL: an error under binary detection.
        &["foo\\x00?"],
        &["-a", "-c", "foo\\x00?"],
        &["-c", "[^\\x00]oo"],
        // The last of --context-separator and --no-context-separator wins.
        &["-A1", "--no-context-separator", "--context-separator", "AAA", "qux"],
        &["-A1", "--context-separator", "AAA", "--no-context-separator", "qux"],
        // rg's negations: the last given wins.
        &["--hidden", "--no-hidden", "-l", "foo"],
        &["--no-hidden", "--hidden", "-l", "foo"],
        &["-L", "--no-follow", "-l", "foo"],
        &["-F", "--no-fixed-strings", "-c", "f.o"],
        &["-v", "--no-invert-match", "-c", "foo"],
        &["-U", "--no-multiline", "-c", "foo$"],
        &["--multiline-dotall", "--no-multiline-dotall", "-U", "-c", "foo."],
        &["--trim", "--no-trim", "baz"],
        &["-c", "--include-zero", "--no-include-zero", "qux"],
        &["--glob-case-insensitive", "--no-glob-case-insensitive", "-g", "*.TXT", "-l", "foo"],
        &["--line-buffered", "--no-line-buffered", "--block-buffered", "--no-block-buffered", "-c", "foo"],
        &["--no-pcre2-unicode", "-c", "\\w+ foo"],
        &["--no-pre", "--pre-glob", "*.gz", "--debug", "-c", "foo"],
        // (Empty: rg's way to turn them off; sandgrep refuses a program.)
        &["--pre", "", "--hostname-bin", "", "--trace", "--no-one-file-system", "-c", "foo"],
        &["--stats", "--no-stats", "-c", "foo"],
        // A glob that starts with a dash.
        &["-g", "-dash*", "--files"],
        &["--iglob", "-DASH*", "-c", "foo"],
        // Inverted, with --crlf (its matcher and searcher end lines alike).
        &["--crlf", "-v", "-n", "foo", "crlf.txt", "last.txt"],
        // With --crlf, lines rg writes itself end in \r\n: counts, paths,
        // headings, separators (rg's in one thread, as --sort path).
        &["--crlf", "-c", "foo"],
        &["--crlf", "--count-matches", "foo", "crlf.txt"],
        &["--crlf", "-l", "foo"],
        &["--crlf", "--null", "-c", "foo"],
        &["--crlf", "--files-without-match", "bar"],
        &["--crlf", "--heading", "-n", "-A1", "foo", "crlf.txt", "twice.txt"],
        &["--crlf", "--no-heading", "-B1", "bar", "crlf.txt"],
        // rg's own line for one past --max-columns ends in `\r\n` too.
        &["--crlf", "-M", "5", "-n", "-C", "1", "foo", "crlf.txt"],
        &["--crlf", "-M", "5", "--max-columns-preview", "-A", "1", "foo", "crlf.txt"],
        &["--crlf", "-M", "5", "--vimgrep", "foo", "crlf.txt"],
        // Past -m, lines that match within the last result's after-context
        // are results too (rg 15), counted by -c as well.
        &["-n", "-m", "1", "-A", "2", "foo"],
        &["-m", "2", "-C", "1", "--heading", "foo", "src"],
        &["-c", "-m", "1", "-A", "3", "foo"],
        &["--count-matches", "-m", "1", "-A", "2", "foo"],
        &["-v", "-n", "-m", "1", "-A", "2", "foo", "src"],
        // (Not with PCRE2: rg's searcher then goes line by line, slowly,
        // and shows them as context.)
        &["-P", "-n", "-m", "1", "-A", "2", "foo"],
        // --stop-on-nonmatch and -U: the later wins.
        &["--stop-on-nonmatch", "-U", "-n", "foo"],
        &["-U", "--stop-on-nonmatch", "-n", "foo"],
        &["--stop-on-nonmatch", "-U", "-m", "2", "-n", "foo", "src"],
        // -u at most three times; PCRE2 makes no NUL check (finds nothing).
        &["-uuuu", "foo"],
        &["-P", "-c", "o\\x00b"],
        // The later of --crlf and --null-data wins.
        &["--null-data", "--crlf", "-c", "foo"],
        &["--crlf", "--null-data", "-c", "foo"],
        // -m 0 searches nothing, whatever the output.
        &["-m", "0", "--files-without-match", "qux"],
        &["-m", "0", "-c", "--include-zero", "foo"],
    ];
    all_as_rgs(t.path(), sets);
}

#[test]
fn sorted_by_modification_and_access_time_as_rgs() {
    // Times milliseconds apart within one second (rg orders by the
    // nanosecond), not in path order; access times in another order.
    let t = Tree::new();
    let times = [("a.txt", 30), ("b.txt", 10), ("dir/c.txt", 20), ("dir/d.txt", 40), ("e.txt", 60), ("f.txt", 50)];
    for (name, _) in times {
        t.write(name, "test\nmore\n");
    }
    let at = |ms: u64| std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_600_000_000_000 + ms);
    // Access times set before each run: a search's reads move them (on a
    // relatime mount too, as setting them moves the status-change time).
    let recent = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let set_times = || {
        for (name, ms) in times {
            let file = std::fs::File::options().write(true).open(t.path().join(name)).unwrap();
            let accessed = recent + std::time::Duration::from_millis(100 - ms);
            file.set_times(std::fs::FileTimes::new().set_modified(at(ms)).set_accessed(accessed)).unwrap();
        }
    };
    let sets: &[&[&str]] = &[
        &["--sort", "modified", "test"],
        &["--sortr", "modified", "-n", "test"],
        &["--sort", "modified", "--files"],
        &["--sortr", "modified", "-c", "test", "dir", "a.txt"],
        &["--sort", "modified", "--sortr", "path", "-l", "test"],
        &["--sort", "accessed", "test"],
        &["--sortr", "accessed", "--files"],
    ];
    for args in sets {
        set_times();
        let ours = run(t.path(), args);
        set_times();
        let theirs = rg(t.path(), args);
        let output = |o: &std::process::Output| (stdout(o), o.status.code());
        assert_eq!(output(&ours), output(&theirs), "{args:?}");
    }
    // created: refused, in a line saying why.
    let out = run(t.path(), &["--sort", "created", "test"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no file's creation time"));
}

/// `--files-without-match` and `--include-zero` name every file rg read:
/// empty ones, ones that are only a byte order mark (nothing to read once
/// it is dropped), and with `-a` or `--binary` binary ones too; a binary
/// file counts as read without a match in the exit status, one past
/// `--max-filesize` is never read.
#[test]
fn files_without_a_match_are_the_files_rg_read() {
    let t = Tree::new();
    t.write("empty.txt", "")
        .write("bom8.txt", b"\xEF\xBB\xBF")
        .write("bom16le.txt", b"\xFF\xFE")
        .write("bom16be.txt", b"\xFE\xFF")
        .write("bom8-line.txt", b"\xEF\xBB\xBF\n")
        .write("half.txt", b"\xEF\xBB")
        .write("nul2.bin", b"\0\0")
        .write("nul.bin", b"a\0b\n")
        .write("sub/bom8.txt", b"\xEF\xBB\xBF")
        .write("text.txt", "a line\n");
    all_as_rgs(
        t.path(),
        &[
            &["--files-without-match", "zz"],
            &["-c", "--include-zero", "zz"],
            &["--count-matches", "--include-zero", "-e", "^"],
            &["--files-without-match", "zz", "bom8.txt", "nul2.bin", "sub"],
            &["--files-without-match", "-E", "utf-16le", "zz"],
            &["--files-without-match", "-E", "none", "zz"],
            &["--files-without-match", "--max-filesize", "2", "zz"],
            &["--files-without-match", "-j2", "zz"],
            &["--files-without-match", "-a", "zz"],
            &["-c", "--include-zero", "--binary", "zz"],
            &["--files-without-match", "--binary", "a"],
            // (--include-zero counts only with -c.)
            &["--include-zero", "--files-without-match", "zz"],
        ],
    );
    // A binary file is read (to its NUL) and has no match; one past
    // --max-filesize is not read at all: with nothing else, no file was.
    let t = Tree::new();
    t.write("x.bin", b"a\0b\n").write("big.txt", "zz\n".repeat(100));
    all_as_rgs(
        t.path(),
        &[
            &["--files-without-match", "zz", "-g", "x.bin"],
            &["-c", "--include-zero", "zz", "-g", "x.bin"],
            &["--files-without-match", "zz", "--max-filesize", "100"],
            &["--files-without-match", "zz", "--max-filesize", "100", "-g", "big.txt"],
            &["-c", "zz", "--max-filesize", "100", "-g", "big.txt"],
            &["zz", "--max-filesize", "100", "-g", "big.txt"],
        ],
    );
    // One past sandgrep's own cap (rg has none) is not read: not named, and
    // said so, never "no files were searched".
    t.write("huge.txt", "x\n".repeat(4_500_000));
    for args in
        [&["--files-without-match", "zz", "-g", "huge.txt"][..], &["-c", "--include-zero", "zz", "-g", "huge.txt"]]
    {
        let out = run(t.path(), args);
        let err = crate::util::stderr(&out);
        assert_eq!((stdout(&out).as_str(), out.status.code()), ("", Some(1)), "{args:?}: {err}");
        assert!(err.contains("1 file(s) skipped as larger than max-filesize"), "{args:?}: {err}");
    }
}

/// Where two outputs part: the line number and both lines.
fn first_difference(theirs: &str, ours: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (theirs.split_inclusive('\n').collect(), ours.split_inclusive('\n').collect());
    let i = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    format!("line {}: rg {:?}, sandgrep {:?} ({} vs {} lines)", i + 1, a.get(i), b.get(i), a.len(), b.len())
}

#[test]
fn stats_count_as_rgs_do() {
    let t = tree();
    // (Where a page boundary splits a file, sandgrep reads it again and its
    // bytes count twice: these fit one page.)
    // rg counts matches and matched lines whatever it prints: -l, -c and -q
    // included, every line a multi-line match spans, no match in a line -v
    // shows.
    let sets: &[&[&str]] = &[
        &["--stats", "bar"],
        &["--stats", "-n", "-w", "foo", "src"],
        &["--stats", "-l", "bar"],
        &["--stats", "-c", "bar"],
        &["--stats", "--count-matches", "bar"],
        &["--stats", "-o", "-c", "o", "src"],
        &["--stats", "-q", "bar"],
        &["--stats", "-v", "foo", "src"],
        &["--stats", "-c", "-v", "foo", "src"],
        &["--stats", "-l", "-v", "foo", "src"],
        &["--stats", "-q", "-v", "foo", "src"],
        &["--stats", "--count-matches", "-v", "foo", "src"],
        &["--stats", "-U", "bar\\n[0-9]+ foo"],
        &["--stats", "-U", "-c", "bar\\n[0-9]+ foo"],
        &["--stats", "-U", "bar\\n"],
        &["--stats", "--color", "always", "bar", "src"],
        &["--stats", "bar", "missing.txt", "src"],
        &["--stats", "bar", "missing.txt"],
        &["--stats", "--files-without-match", "qux", "src"],
        &["--stats", "-c", "--include-zero", "qux", "src", "last.txt"],
        // A binary file named, or --binary: rg counts the match it stops
        // at past the NUL (unprinted), inverted or not.
        &["--stats", "foo", "bin.dat"],
        &["--stats", "-v", "foo", "bin.dat"],
        &["--stats", "--binary", "foo", "-g", "bin.dat"],
        // … and with -c, -l, -q every match, past the NUL too.
        &["--stats", "-c", "o", "bin.dat"],
        &["--stats", "-l", "o", "bin.dat"],
        &["--stats", "-q", "o", "bin.dat"],
    ];
    for args in sets {
        let (theirs, ours) = both(t.path(), args);
        // The output, and the block but for the two timings.
        let split = |s: &str| {
            let lines: Vec<&str> = s.split_inclusive('\n').collect();
            let n = lines.len();
            assert!(n >= 9 && lines[n - 9] == "\n", "{args:?}: {s}");
            (lines[..n - 9].concat(), lines[n - 8..n - 2].concat())
        };
        assert_eq!(split(&ours.0), split(&theirs.0), "{args:?}");
        assert_eq!(ours.1, theirs.1, "{args:?}");
        // The timings' lines, worded as rg's.
        for out in [&ours.0, &theirs.0] {
            assert!(out.ends_with(" seconds total\n") && out.contains(" seconds spent searching\n"), "{args:?}: {out}");
        }
    }
}

#[test]
fn every_result_streams_past_the_page_and_per_file_caps() {
    let t = tree();
    let out = run(t.path(), &["-c", "foo", "big.txt"]);
    assert_eq!(stdout(&out), "6000\n");
    let out = run(t.path(), &["foo", "big.txt"]);
    assert_eq!(stdout(&out).lines().count(), 6000);
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    // Bounded when asked: the rest is a cursor away.
    let out = run(t.path(), &["--max-results", "6100", "foo"]);
    assert_eq!(stdout(&out).lines().count(), 6100);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cursor"));
}

#[test]
fn on_a_terminal_output_is_rgs_with_colors_headings_and_line_numbers() {
    let t = tree();
    // Each command on a terminal of its own.
    let shown =
        |program: &str, args: &str| stdout(&on_terminal(&format!("cd {} && {program} {args}", t.path().display())));
    let sandgrep = format!("{} --root .", env!("CARGO_BIN_EXE_sandgrep"));
    // The oracle's rg (15.2), not whichever `rg` the shell finds first.
    let rg = crate::util::rg_command().get_program().to_string_lossy().into_owned();
    // Warm the compiled component's cache first (its first load is slow, not different).
    let _ = command(t.path()).arg("x").output();
    for args in
        ["qux", "-C 1 qux", "-i 'foo bar'", "-o -w foo src", "--no-heading qux", "-N qux", "-c qux", "--vimgrep qux"]
    {
        let theirs = shown(&format!("{rg} --no-config --no-ignore-global --sort path"), args);
        let ours = shown(&sandgrep, args);
        assert!(theirs.contains('\x1b'), "rg colors on a terminal: {theirs}");
        assert_eq!(ours, theirs, "{args}");
    }
}

/// Names whose order differs between whole paths compared bytewise and
/// `rg --sort path`'s (component by component: a directory's contents come
/// right after it): a directory named as a prefix of its siblings' names,
/// names with bytes below `/` (`!`, `+`, `-`, `.`), deep nesting, other
/// scripts and cases. Every file holds `foo` on lines 1 and 3; `bar*` files
/// do not.
pub(crate) const ORDER_FILES: &[&str] = &[
    "git/x.go",
    "git.go",
    "git-x",
    "git/x/y.go",
    "git/x.go.d/z",
    "a/b/c0",
    "a+",
    "a.b/c",
    "ab",
    "a!",
    "a-",
    "a.",
    "a0",
    "a/b!/c",
    "a/b.c",
    "a/b-",
    "a/b/c.d/e",
    "a/b/c!",
    "a/b/c/d/e/f/g/h/i/j/k",
    "a/b/c/d!",
    "A/x",
    "B",
    "b/c",
    "sp ace/x",
    "sp/ace",
    "ü/x",
    "u/x",
    "u-/x",
    "-x/y",
    "=",
    "~",
];

/// A tree of [`ORDER_FILES`], and as many files without a match beside
/// them (an index has files to leave unread).
pub(crate) fn order_tree() -> Tree {
    let t = Tree::new();
    for f in ORDER_FILES {
        t.write(f, format!("foo {f}\nbar\nfoo again\n"));
        t.write(&format!("{f}.bar"), "bar\n");
    }
    t
}

/// `rg --sort path`'s and sandgrep's standard output for each of `sets`,
/// with sandgrep run as `jobs`: the sets that differ.
fn order_differences(root: &Path, jobs: &str, sets: &[&[&str]]) -> Vec<String> {
    let mut differ = Vec::new();
    for args in sets {
        let mut with_sort = vec!["--sort", "path"];
        with_sort.extend_from_slice(args);
        let theirs = rg(root, &with_sort);
        let mut full = vec![jobs];
        full.extend_from_slice(args);
        let ours = run(root, &full);
        let (theirs, ours) = ((stdout(&theirs), theirs.status.code()), (stdout(&ours), ours.status.code()));
        assert!(!theirs.0.is_empty(), "{args:?}: rg found nothing");
        if theirs != ours {
            differ.push(format!("{jobs} {args:?}: {}", first_difference(&theirs.0, &ours.0)));
        }
    }
    differ
}

#[test]
fn results_come_in_rgs_path_order() {
    let t = order_tree();
    // A link to a directory (followed with -L) sorts by its own name.
    std::os::unix::fs::symlink("a", t.path().join("l")).unwrap();
    t.write("l-", "foo\n").write("l.x", "foo\n");
    let sets: &[&[&str]] = &[
        &["foo"],
        &["-n", "foo"],
        &["--heading", "-n", "foo"],
        &["-l", "foo"],
        &["-c", "foo"],
        &["--files-without-match", "foo"],
        &["-n", "-C", "1", "bar"],
        &["--files"],
        &["--files", "a", "git"],
        &["-L", "--files"],
        &["-L", "-n", "foo"],
        &["-n", "foo", "a"],
        &["-c", "foo", "a/b", "a.b"],
        // Several roots: in the order given, each in path order.
        &["-n", "foo", "git.go", "git", "a+", "a"],
        &["--files", "u", "ü", "./-x", "a/b"],
        &["-l", "foo", "a", "a/b"],
        &["-g", "!a/b/**", "-l", "foo"],
    ];
    let mut differ = order_differences(t.path(), "-j1", sets);
    differ.extend(order_differences(t.path(), "-j2", sets));
    assert!(differ.is_empty(), "{} differ:\n{}", differ.len(), differ.join("\n"));
}

#[test]
fn results_past_one_page_come_in_rgs_path_order() {
    // More matching lines than one page of the component holds (5000): the
    // CLI pages through cursors, which resume in the same order.
    let t = Tree::new();
    let dirs = ["a/", "a/b/", "a.b/", "a+/", "a-/", "git/", "git.go.d/", ""];
    for (i, d) in dirs.iter().enumerate() {
        for f in ["git.go", "git-x", "git/x.go", "a!", "a/b", "ab"] {
            t.write(&format!("{d}{i}/{f}"), "foo\n".repeat(60));
            t.write(&format!("{d}{i}.{f}"), "foo\n".repeat(60));
            t.write(&format!("{d}{i}{f}"), "foo\n".repeat(60));
        }
    }
    let differ = [
        order_differences(t.path(), "-j1", &[&["-n", "foo"], &["-c", "foo"]]),
        order_differences(t.path(), "-j2", &[&["-n", "foo"]]),
    ]
    .concat();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(stdout(&rg(t.path(), &["-n", "foo"])).lines().count() > 5000);
}

/// `rg -n PATTERN`'s lines as (path, line number).
fn rg_lines(root: &Path, pattern: &str) -> Vec<(String, u64)> {
    stdout(&rg(root, &["--sort", "path", "-n", pattern]))
        .lines()
        .map(|l| {
            let mut parts = l.splitn(3, ':');
            (parts.next().unwrap().to_string(), parts.next().unwrap().parse().unwrap())
        })
        .collect()
}

#[test]
fn pages_through_cursors_come_in_rgs_path_order() {
    let t = order_tree();
    let want = rg_lines(t.path(), "foo");
    assert_eq!(want.len(), 2 * ORDER_FILES.len());
    // The CLI's pages (one instance and two), a cursor from each to the next.
    for jobs in ["-j1", "-j2"] {
        for max in ["1", "2", "7"] {
            let mut got = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let mut args = vec![jobs, "search", "--json-page", "--max-results", max, "foo"];
                if let Some(c) = &cursor {
                    args.extend_from_slice(&["--cursor", c]);
                }
                let v = crate::util::json(t.path(), &args);
                for m in v["matches"].as_array().unwrap() {
                    got.push((m["path"].as_str().unwrap().to_string(), m["line"].as_u64().unwrap()));
                }
                cursor = v["next_cursor"].as_str().map(str::to_string);
                if cursor.is_none() {
                    break;
                }
            }
            assert_eq!(got, want, "{jobs}, pages of {max}");
        }
    }
    // The library's pages.
    let sandbox = sandgrep::Sandbox::open(t.path(), sandgrep::Policy::default()).unwrap();
    for max in [1, 3] {
        let mut r = sandgrep::SearchTextRequest::new("foo");
        r.max_results = Some(max);
        let mut got = Vec::new();
        loop {
            let page = sandbox.search_text(&r).unwrap();
            got.extend(page.matches.iter().map(|m| (m.path.clone(), m.line)));
            match page.next_cursor {
                Some(c) => r.cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(got, want, "library, pages of {max}");
        // Files with matches, a page of one at a time.
        let mut r = sandgrep::SearchTextRequest::new("foo");
        (r.max_results, r.output) = (Some(max), Some(sandgrep::OutputMode::FilesWithMatches));
        let mut files = Vec::new();
        loop {
            let page = sandbox.search_text(&r).unwrap();
            files.extend(page.files.iter().map(|f| f.path.clone()));
            match page.next_cursor {
                Some(c) => r.cursor = Some(c),
                None => break,
            }
        }
        let mut want_files: Vec<String> = want.iter().map(|w| w.0.clone()).collect();
        want_files.dedup();
        assert_eq!(files, want_files, "library -l, pages of {max}");
    }
}

/// How files are read, as rg reads them: binary files (a NUL byte past rg's
/// first 64 KiB buffer, matches before and after it; found by the walk or
/// named; -a, --binary, -uuu), CRLF line ends (--crlf), encodings (-E,
/// UTF-16 with a BOM). --no-mmap where a file is named: rg (and sandgrep)
/// would map it, and look for NUL bytes elsewhere (`memory_maps_are_rgs`).
#[test]
fn files_are_read_as_rg_reads_them() {
    let t = Tree::new();
    let mut hay = String::new();
    for i in 0..4000 {
        match i {
            0 => hay.push_str("needle at the start\n"),
            3400 => hay.push_str("needle before the NUL, in its buffer\n"),
            3500 => hay.push_str("abc\0def\n"),
            3800 => hay.push_str("needle late, past the NUL\n"),
            _ => hay.push_str(&format!("line {i:05} of plain text\n")),
        }
    }
    t.write("hay", hay);
    t.write("small.bin", b"foo\0bar\nfoo\0baz\n");
    t.write("text.txt", "foo needle\nbar\n");
    t.write("crlf.txt", "foo\r\nbar foo\r\nfoo bar\r\n");
    let utf16: Vec<u8> =
        [0xFF, 0xFE].into_iter().chain("foo\nbar foo\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
    t.write("utf16.txt", utf16);
    let utf16_nobom: Vec<u8> = "foo\nbar\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
    t.write("nobom.txt", utf16_nobom);
    t.write("latin1.txt", b"caf\xe9 foo\n");
    let sets: &[&[&str]] = &[
        &["-n", "needle"],
        &["-n", "needle", "-g", "hay"],
        &["-n", "late", "-g", "hay"],
        &["--no-mmap", "-n", "needle", "hay"],
        &["--no-mmap", "-n", "late", "hay"],
        &["--no-mmap", "-n", "before the NUL", "hay"],
        &["--no-mmap", "-n", "-C", "1", "needle", "hay", "text.txt"],
        &["-n", "--binary", "needle", "-g", "hay"],
        &["-n", "--binary", "late"],
        &["--binary", "--no-binary", "-n", "needle"],
        &["-c", "needle"],
        &["-c", "--binary", "needle"],
        &["-l", "needle"],
        &["-l", "late"],
        &["-c", "-a", "needle"],
        &["-n", "--text", "late", "-g", "hay"],
        &["-a", "--no-text", "-n", "needle"],
        // -a, --no-text, --binary and --no-binary: one mode, the last wins.
        &["-a", "--no-binary", "-c", "foo"],
        &["--binary", "--no-text", "-c", "foo"],
        &["-a", "--binary", "--no-binary", "-c", "foo"],
        &["--no-binary", "-a", "-c", "foo"],
        &["-uuu", "foo"],
        &["--no-mmap", "foo", "small.bin"],
        &["--no-mmap", "-c", "foo", "small.bin"],
        // Files without a match are read to their end: a NUL past the first
        // buffer makes one the walk found binary (left out), not one named.
        &["--files-without-match", "zzz"],
        &["-c", "--include-zero", "zzz"],
        &["--files-without-match", "zzz", "hay", "./small.bin", "text.txt"],
        &["--sortr", "path", "-n", "late"],
        &["--sortr", "path", "-n", "late", "hay"],
        // Inverted, a named binary file's first result past its NUL.
        &["-v", "foo", "small.bin"],
        &["-v", "needle", "hay"],
        &["--binary", "-v", "-n", "foo"],
        &["--crlf", "-n", "foo$"],
        &["--crlf", "-o", "foo$"],
        &["--crlf", "--no-crlf", "foo$"],
        &["foo$", "crlf.txt"],
        &["-n", "foo", "utf16.txt"],
        &["-E", "utf-16le", "-n", "bar", "nobom.txt"],
        &["--encoding=latin1", "café"],
        &["-E", "none", "-c", "foo", "utf16.txt"],
        &["-E", "utf-16le", "--no-encoding", "-c", "bar", "nobom.txt"],
        // -E none: a UTF-16 file's bytes as they are (NULs and all), also
        // where the search reads the whole file (PCRE2, stop-on-nonmatch).
        &["-E", "none", "-c", "--include-zero", "foo", "-g", "utf16.txt"],
        &["-E", "none", "-a", "--pcre2", "-c", "bar foo", "utf16.txt"],
        &["-E", "none", "-a", "--pcre2", "--count-matches", "f.o.o", "utf16.txt"],
        &["-E", "none", "-a", "--stop-on-nonmatch", "--count-matches", "f.o", "utf16.txt"],
        &["-E", "none", "-a", "-U", "--count-matches", "o.\\n.b", "utf16.txt"],
    ];
    all_as_rgs(t.path(), sets);
}

/// rg's `--mmap`, and its own choice of it (at most 10 PATHs, all files):
/// each file searched as one slice, NUL bytes looked for only in its first
/// 64 KiB and in the lines printed. On a file as rg's `sherlock-nul.txt`:
/// a NUL deep in text (past rg's first buffer), matches before it, on its
/// line and after it; found by the walk or named; -n, -c, -l, --binary,
/// -a, -z, --no-mmap and --mmap overriding each other.
#[test]
fn memory_maps_are_rgs() {
    let t = Tree::new();
    let mut hay = String::new();
    for i in 0..4000 {
        match i {
            0 => hay.push_str("needle at the start\n"),
            3400 => hay.push_str("needle before the NUL\n"),
            3500 => hay.push_str("needle on the NUL\0 line\n"),
            3800 => hay.push_str("needle late, past the NUL\n"),
            _ => hay.push_str(&format!("line {i:05} of plain text\n")),
        }
    }
    t.write("hay", &hay);
    t.write("text.txt", "foo needle\nbar\n");
    t.write("sub/other.txt", "bar\n");
    t.write("early.bin", b"needle\0 at once\nneedle again\n");
    // (rg decompresses with gzip: the text is read as a stream.)
    t.write("hay.gz", gzip(hay.as_bytes()));
    let sets: &[&[&str]] = &[
        &["--mmap", "-n", "needle", "-g", "hay"],
        &["--mmap", "-n", "needle", "hay"],
        &["--mmap", "-n", "needle at the start"],
        &["--mmap", "-n", "late"],
        &["--mmap", "-n", "NUL", "-g", "hay"],
        &["--mmap", "-n", "on the NUL", "hay"],
        &["--mmap", "-c", "needle", "hay"],
        &["--mmap", "-c", "needle"],
        &["--mmap", "-c", "late", "-g", "hay"],
        &["--mmap", "-l", "needle"],
        &["--mmap", "-l", "on the NUL"],
        &["--mmap", "-n", "--binary", "needle", "-g", "hay"],
        &["--mmap", "-n", "--binary", "late"],
        &["--mmap", "-c", "-a", "needle"],
        &["--mmap", "-c", "--text", "on the NUL", "-g", "hay"],
        &["--mmap", "-n", "needle", "early.bin"],
        &["--mmap", "-n", "needle", "-g", "early.bin"],
        &["--mmap", "-z", "-n", "late", "hay.gz"],
        &["--mmap", "-z", "-c", "needle"],
        &["--mmap", "-n", "-C", "1", "late", "hay", "text.txt"],
        // Context up to the NUL's line (rg looks at each line it prints):
        // the lines before it, a `--` where they do not follow the last.
        &["--mmap", "-n", "-B", "1", "-e", "needle at", "-e", "03501", "hay"],
        &["--mmap", "-n", "-B", "2", "-e", "needle at", "-e", "03501", "hay"],
        &["--mmap", "-n", "-C", "1", "-e", "before the", "-e", "03501", "hay"],
        &["--mmap", "-n", "-B", "1", "-e", "needle at", "-e", "on the NUL", "hay"],
        &["--mmap", "--no-mmap", "-n", "needle", "hay"],
        &["--no-mmap", "--mmap", "-n", "needle", "-g", "hay"],
        // rg's own choice: a few files named are mapped, a directory never.
        &["-n", "needle", "hay"],
        &["-n", "late", "hay", "text.txt"],
        &["-n", "needle", "hay", "."],
        &["-n", "needle", "./hay", "sub/../hay"],
    ];
    all_as_rgs(t.path(), sets);
}

/// rg's ignore flags (`--no-ignore-vcs`, `--ignore-file` …) on a tree with
/// every kind of ignore file: `.rgignore`, `.ignore`, `.gitignore` (CRLF
/// lines), a repository's `.git/info/exclude`, a `.gitignore` outside any
/// repository, files for `--ignore-file`.
#[test]
fn ignore_flags_are_rgs() {
    let t = Tree::new();
    for f in ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "MIXED.txt", "x.log", "keep.log"] {
        t.write(f, "foo\n");
        t.write(&format!("repo/{f}"), "foo\n");
        t.write(&format!("repo/sub/{f}"), "foo\n");
    }
    // Outside a repository: only with --no-require-git.
    t.write(".gitignore", "a.txt\n");
    t.write(".ignore", "b.txt\n");
    t.write(".rgignore", "c.txt\n");
    t.mkdir("repo/.git/info");
    t.write("repo/.git/info/exclude", "d.txt\n");
    t.write("repo/.gitignore", "e.txt\r\nsub/x.log\r\n");
    t.write("repo/sub/.ignore", "!e.txt\n");
    t.write("rules/one", "*.log\nmixed.txt\n");
    t.write("rules/two", "!keep.log\n");
    let sets: &[&[&str]] = &[
        &["--files"],
        &["--no-ignore-vcs", "--files"],
        &["--no-ignore-vcs", "--ignore-vcs", "--files"],
        &["--no-ignore-dot", "--files"],
        &["--no-ignore-dot", "--ignore-dot", "-c", "foo"],
        &["--no-ignore-exclude", "--files"],
        &["--no-ignore", "--ignore-exclude", "--files"],
        &["--no-ignore", "--ignore-vcs", "--files"],
        &["--no-ignore", "--ignore", "--files"],
        &["-u", "--ignore-dot", "--files"],
        &["--no-require-git", "--files"],
        &["--no-require-git", "--require-git", "-l", "foo"],
        &["--ignore-file", "rules/one", "--files"],
        &["--ignore-file", "rules/one", "--ignore-file", "rules/two", "-l", "foo"],
        &["--ignore-file", "rules/two", "--ignore-file", "rules/one", "--files"],
        &["--no-ignore-files", "--ignore-file", "rules/one", "--files"],
        &["--no-ignore-files", "--ignore-files", "--ignore-file", "rules/one", "--files"],
        &["-u", "--ignore-file", "rules/one", "--files"],
        &["--ignore-file", "rules/one", "--ignore-file-case-insensitive", "--files"],
        &["--ignore-file-case-insensitive", "--files", "repo"],
        &["--ignore-file-case-insensitive", "--no-ignore-file-case-insensitive", "-c", "foo", "repo"],
        &["--no-ignore-parent", "--files", "repo/sub"],
        &["--no-ignore-parent", "--ignore-parent", "-l", "foo", "repo/sub"],
        &["--no-ignore-global", "--files", "repo"],
        &["--no-ignore-global", "--ignore-global", "-c", "foo", "repo"],
        &["--no-ignore-vcs", "--no-ignore-dot", "--ignore-file", "rules/one", "--files"],
    ];
    all_as_rgs(t.path(), sets);
}

/// rg's --passthru (every line, those without a match as context),
/// --null-data (NUL-terminated records, NUL after each printed line) and
/// --stop-on-nonmatch, with the output modes and flags they meet; a file
/// longer than a page passes through whole.
#[test]
fn passthru_null_data_and_stop_on_nonmatch_are_rgs() {
    let t = tree();
    t.write("records.dat", b"foo\0bar\0\0\0baz foo\0qux\0foo again\0tail");
    t.write("runs.txt", "foo 1\nfoo 2\nbar\nfoo 3\n");
    // Named, a NUL past rg's first buffer (and past a page of lines): the
    // lines before it pass through, then rg stops; its notice only after a
    // match.
    let lines: String = (0..20000).map(|i| format!("{i}\n")).collect();
    t.write("late-nul.bin", format!("{lines}x\0y\n12345 again\n"));
    let sets: &[&[&str]] = &[
        &["--passthru", "-n", "nothing-is-here", "late-nul.bin"],
        &["--passthru", "again", "late-nul.bin"],
        &["--passthru", "^19999$", "late-nul.bin"],
        &["--passthru", "foo"],
        &["--passthru", "-n", "bar"],
        &["--passthrough", "-n", "qux"],
        &["--passthru", "nothing-is-here"],
        &["--passthru", "-v", "-n", "foo"],
        &["--passthru", "-o", "-n", "foo"],
        &["--passthru", "-r", "X", "foo"],
        &["--passthru", "-c", "foo"],
        &["--passthru", "-l", "bar"],
        &["--passthru", "--heading", "-n", "qux"],
        &["--passthru", "-m", "1", "-n", "foo"],
        &["--passthru", "-b", "-n", "bar", "crlf.txt", "last.txt"],
        &["--passthru", "-C", "1", "qux"],
        &["-C", "1", "--passthru", "qux"],
        &["--passthru", "-A", "1", "-n", "qux"],
        &["-B", "1", "--passthru", "-n", "qux"],
        &["-U", "--passthru", "-n", "foo\\nbar"],
        &["--passthru", "-n", "foo", "big.txt"],
        &["--null-data", "-n", "foo", "records.dat"],
        &["--null-data", "-x", "bar", "records.dat"],
        &["--null-data", "-c", "foo", "records.dat", "runs.txt"],
        &["--null-data", "-l", "binary"],
        &["--null-data", "-o", "-n", "--column", "fo+", "records.dat"],
        &["--null-data", "-C", "1", "-n", "baz", "records.dat"],
        &["--null-data", "-v", "-n", "foo", "records.dat"],
        &["--null-data", "--heading", "-n", "foo", "records.dat", "bin.dat"],
        &["--null-data", "--passthru", "-n", "qux", "records.dat"],
        &["--stop-on-nonmatch", "-n", "foo", "runs.txt"],
        &["--stop-on-nonmatch", "-n", "-A", "1", "foo", "runs.txt"],
        &["--stop-on-nonmatch", "-c", "foo"],
        &["--stop-on-nonmatch", "-v", "-n", "bar", "runs.txt"],
        &["--stop-on-nonmatch", "-n", "[0-9]", "big.txt"],
        &["--stop-on-nonmatch", "--passthru", "-n", "foo", "runs.txt"],
    ];
    all_as_rgs(t.path(), sets);
}

/// `-r` with line breaks in the replacement, as rg prints them: as they
/// are when the search goes line by line; with -U and a pattern that can
/// match a line break, the match line by line, numbered on from its first
/// (rg's r2095), with -o, --column, colors and context.
#[test]
fn replacements_with_line_breaks_are_rgs() {
    let t = Tree::new();
    t.write("test", "zero=one\n\na=one\n\nif true; then\n\ta=(\n\t\ta\n\t\tb\n\t)\n\ttrue\nfi\n\na=two\nfoo bar\n");
    let value = r"^(?P<indent>\s*)a=(?P<value>(?ms:[(].*?[)])|.*?)$";
    let sets: &[&[&str]] = &[
        &["-n", "-U", "-o", "-r", "${value}", value, "test"],
        &["-n", "-U", "-r", "${value}", value, "test"],
        &["-n", "-U", "--column", "-o", "-r", "${value}", value, "test"],
        &["-n", "-r", "X\nY", "bar", "test"],
        &["-n", "-o", "-r", "X\nY", "bar", "test"],
        &["-n", "-U", "-o", "-r", "X\nY", "bar", "test"],
        &["-n", "-U", "-r", "X\nY", "(?s)b.*c|bar", "test"],
        &["-n", "-U", "-B", "1", "-r", "<$1>", "(?s)(a=\\(.*?\\))", "test"],
        &["-U", "--color", "always", "-r", "${value}", value, "test"],
        &["--color", "always", "-n", "-r", "X\nY", "bar", "test"],
    ];
    all_as_rgs(t.path(), sets);
}

/// Compressed files made with the command-line tools rg's -z runs (a
/// format whose tool is missing is left out: rg could not read it either).
fn compressed_tree() -> Tree {
    let t = tree();
    let text: String = (0..300).map(|i| format!("{i} {}\n", ["foo", "bar", "qux foo", "x"][i % 4])).collect();
    t.write("plain.log", &text);
    let tools: [(&str, &[&str], &[&str]); 8] = [
        ("gzip", &["-c", "-n"], &["a.gz", "d/b.tgz"]),
        ("bzip2", &["-c"], &["a.bz2", "d/b.tbz2"]),
        ("xz", &["-c"], &["a.xz", "d/b.txz"]),
        ("xz", &["--format=lzma", "-c"], &["a.lzma"]),
        ("lz4", &["-q", "-c"], &["a.lz4"]),
        ("brotli", &["-c"], &["a.br"]),
        ("zstd", &["-q", "-c"], &["a.zst", "d/b.zstd"]),
        ("compress", &["-c"], &["a.Z"]),
    ];
    let compress = |tool: &str, args: &[&str], input: &[u8]| -> Option<Vec<u8>> {
        use std::io::Write;
        let mut child = std::process::Command::new(tool)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .ok()?;
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        out.status.success().then_some(out.stdout)
    };
    for (tool, args, names) in tools {
        let Some(bytes) = compress(tool, args, text.as_bytes()) else {
            eprintln!("{tool} is not installed: its files are left out");
            continue;
        };
        for name in names {
            t.write(name, &bytes);
        }
    }
    if let Some(gz) = compress("gzip", &["-c", "-n"], text.as_bytes()) {
        // Two members, a binary text, a line over two lines, a stream cut
        // short (its first lines decode), an empty file and plain text
        // named .gz: rg prints what the decompressor wrote, then its error.
        t.write("twice.gz", [gz.clone(), gz.clone()].concat());
        let long: String = (0..20000).map(|i| format!("{i} foo\n")).collect();
        let long = compress("gzip", &["-c", "-n"], long.as_bytes()).unwrap();
        t.write("broken/cut.gz", &long[..long.len() / 2]);
        t.write("broken/empty.gz", "");
        t.write("broken/plain.gz", "foo is not gzip\n");
        t.write("bin.gz", compress("gzip", &["-c"], b"foo\nbar\0baz\nfoo\n").unwrap());
        // A stream cut inside a line (every line matches `^[0-9]`): rg
        // never searches the part decoded.
        t.write("broken/midline.gz", &gz[..gz.len() - 12]);
        if let Some(lz4) = compress("lz4", &["-q", "-c"], text.as_bytes()) {
            // lz4's skippable frames (user data) around and between frames:
            // the lz4 tool reads past them.
            let skippable = [&[0x5a, 0x2a, 0x4d, 0x18, 4, 0, 0, 0][..], b"skip"].concat();
            t.write("skip.lz4", [&skippable[..], &lz4, &skippable, &lz4].concat());
        }
        t.write("utf16.gz", {
            let utf16: Vec<u8> = [0xFF, 0xFE]
                .into_iter()
                .chain("foo bar\nqux foo\n".encode_utf16().flat_map(u16::to_le_bytes))
                .collect();
            compress("gzip", &["-c"], &utf16).unwrap()
        });
    }
    t
}

/// rg's -z/--search-zip and --no-search-zip: compressed files searched as
/// the text they hold (every format rg decompresses, by name), binary
/// detection and encodings on that text, and broken streams.
#[test]
fn search_zip_is_rgs() {
    let t = compressed_tree();
    let sets: &[&[&str]] = &[
        &["-z", "foo"],
        &["-z", "-n", "qux"],
        &["--search-zip", "-c", "foo"],
        &["-z", "-l", "bar"],
        &["-z", "-C", "1", "-n", "qux", "a.gz", "a.Z", "a.zst"],
        &["-z", "-v", "-c", "foo"],
        &["-z", "-o", "-n", "--column", "fo+", "d"],
        &["-z", "-U", "-n", "bar\\n[0-9]+ qux", "a.xz", "a.lzma"],
        &["-z", "--no-search-zip", "-c", "foo"],
        &["-z", "--no-search-zip", "foo", "a.gz"],
        &["-c", "foo"],
        &["-z", "-g", "*.gz", "--files"],
        &["-z", "-n", "foo", "bin.gz"],
        &["-z", "-a", "-c", "foo", "bin.gz"],
        &["-z", "foo", "utf16.gz"],
        &["-z", "-n", "foo", "twice.gz"],
        &["-z", "-c", "foo", "broken"],
        &["-z", "-l", "foo", "broken"],
        &["-z", "foo", "broken/empty.gz", "broken/plain.gz"],
        &["-z", "-n", "5 foo$", "broken/cut.gz"],
        &["-z", "-n", "^[0-9]", "broken/midline.gz"],
        &["-z", "-c", "^[0-9]", "broken/midline.gz", "a.gz"],
        &["-z", "-c", "foo", "skip.lz4"],
        &["-z", "-n", "qux", "skip.lz4"],
    ];
    all_as_rgs(t.path(), sets);
}

/// rg's -P/--pcre2, --no-pcre2, --engine (and its deprecated
/// --auto-hybrid-regex) and --pcre2-version: PCRE2 10.45 compiled into the
/// component (no JIT), against rg built with its `pcre2` feature — look-
/// around, backreferences and PCRE2's syntax with the flags that shape a
/// search, invalid patterns, text that is not UTF-8, and `auto` choosing
/// PCRE2 only where the default engine cannot build the pattern.
#[test]
fn pcre2_is_rgs() {
    let t = tree();
    t.write("words.txt", "the the cat\nfoo bar\nfoobar baz\nbar foo\nα β αα\nabc abc abd\nFoo Bar\n");
    t.write("latin1.txt", b"caf\xe9 foo\nfoo\xff bar\n\xff\xfe\n");
    let sets: &[&[&str]] = &[
        &["-P", "(?<=foo)bar"],
        &["-P", "foo(?=bar)"],
        &["-P", "(?<!foo)bar"],
        &["-P", "-n", r"\b(\w+) \1\b"],
        &["--pcre2", "-o", r"(\w+)(?= abc)"],
        &["-P", "-w", "foo"],
        &["-P", "-w", "-o", r"\w+"],
        &["-P", "-i", "-n", "foo(?= bar)"],
        &["-P", "-S", "foo"],
        &["-P", "-S", "Foo"],
        &["-P", "-x", r"\d+ foo"],
        &["-P", "-F", "a.b", "words.txt"],
        &["-P", "-o", "-n", "--column", r"fo+(?=\w)"],
        &["-P", "-r", "[$1]", r"(fo+)(?=bar)"],
        &["-P", "-o", "-r", "$1$1", r"(o+)"],
        &["-P", "-c", "foo(?!bar)"],
        &["-P", "--count-matches", "o(?=o)"],
        &["-P", "-v", "-c", "(?<=foo)"],
        &["-P", "-v", "-n", "-C", "1", r"^\d+ (?!foo)", "src"],
        &["-P", "-A", "1", "-B", "2", "-n", "(?<=baz\t)foo"],
        &["-P", "-l", r"(\w)\1"],
        &["-P", "-U", "-n", r"bar\r?\n(?=\d+ qux)"],
        &["-P", "-U", "-c", r"(?s)foo.*?bar"],
        &["-P", "--crlf", "-n", "bar$", "crlf.txt"],
        &["-P", "-e", "(?<=foo)bar", "-e", "qux"],
        &["-P", "-m", "2", "-n", "foo(?= )"],
        &["-P", "--passthru", "-n", "(?<=the )cat", "words.txt"],
        &["-P", r"\p{Greek}+(?= )", "words.txt"],
        &["-P", "-o", r"\X", "words.txt"],
        &["-P", "-n", "foo", "latin1.txt"],
        &["-P", "-o", r"\w+", "latin1.txt"],
        &["-P", "-c", "foo", "bin.dat"],
        &["-P", "foo", "bin.dat"],
        &["-P", "--null-data", "-c", "binary"],
        &["-P", "(", "words.txt"],
        &["-P", r"\k<nope>", "words.txt"],
        &["-P", "--no-pcre2", "-c", "foo"],
        &["-P", "--engine", "default", "(?<=foo)bar"],
        &["--engine", "pcre2", "-c", "(?<=foo)bar"],
        &["--engine=pcre2", "--no-pcre2", "-c", "foo"],
        &["--engine", "auto", "-n", "(?<=foo)bar"],
        &["--engine", "auto", "-c", "foo|bar"],
        &["--engine", "auto", "(", "words.txt"],
        &["--auto-hybrid-regex", "-n", r"(\w+) \1"],
        &["--auto-hybrid-regex", "--no-auto-hybrid-regex", r"(\w+) \1"],
    ];
    all_as_rgs(t.path(), sets);
}

/// `--pcre2-version` says what rg says of the same PCRE2, but that the
/// component's has no JIT (wasm runs no code made at run time).
#[test]
fn pcre2_version_is_rgs_but_the_jit() {
    let t = Tree::new();
    let (theirs, ours) = both(t.path(), &["--pcre2-version"]);
    assert_eq!(theirs.0.replace("(JIT is available)", "(JIT is unavailable)"), ours.0);
    assert_eq!(theirs.1, ours.1);
    assert!(ours.0.starts_with("PCRE2 10."), "{}", ours.0);
}
