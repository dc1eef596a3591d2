//! Fuzzes the guest's request handling natively: any search-text,
//! list-files or read-file request, against a small fixed tree with ignore
//! files, links, binary, UTF-16 and denylisted files. A panic is a bug.
#![no_main]

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use sandgrep_guest::{
    CaseMode, ListFilesRequest, OutputMode, Policy, QueryMode, RangeType, ReadFileRequest, SearchTextRequest, Workspace,
};

#[derive(Arbitrary, Debug)]
struct Input {
    op: u8,
    text: String,
    paths: Vec<String>,
    globs: Vec<String>,
    cursor: Option<String>,
    numbers: [u32; 6],
    big: [u64; 3],
    flags: u16,
    extra_deny: Vec<String>,
}

fn tree() -> &'static tempfile::TempDir {
    static TREE: OnceLock<tempfile::TempDir> = OnceLock::new();
    TREE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let w = |p: &str, b: &[u8]| {
            let p = dir.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b).unwrap();
        };
        w(".git/HEAD", b"ref: x\n");
        w(".gitignore", b"*.log\n!keep.log\nbuild/\n");
        w("src/lib.rs", b"fn main() {\n    let key = \"AKIAIOSFODNN7EXAMPLE\";\n}\n");
        w("src/a.log", b"log line foo\n");
        w("keep.log", b"foo\r\nbar\r\n");
        w("build/out.txt", b"foo\n");
        w("bin.dat", b"foo\x00bar");
        w("latin1.txt", b"caf\xe9 foo\n");
        w("utf16.txt", &[0xFF, 0xFE, b'f', 0, b'o', 0, b'o', 0, b'\n', 0]);
        w(".env", b"SECRET=1\n");
        w("deep/a/b/c/d.txt", "ü foo\n".repeat(100).as_bytes());
        w("long.txt", format!("{}foo\n", "x".repeat(100_000)).as_bytes());
        let _ = std::os::unix::fs::symlink("src", dir.path().join("link"));
        let _ = std::os::unix::fs::symlink("..", dir.path().join("up"));
        let _ = std::os::unix::fs::symlink("loop", dir.path().join("loop"));
        dir
    })
}

fn bit(flags: u16, n: u16) -> bool {
    flags & (1 << n) != 0
}

fn opt<T>(flags: u16, n: u16, v: T) -> Option<T> {
    bit(flags, n).then_some(v)
}

fuzz_target!(|input: Input| {
    let policy = Policy {
        redact: !bit(input.flags, 15),
        extra_deny: input.extra_deny.clone(),
        inside_git_repository: bit(input.flags, 14),
        cursor_key: String::new(),
    };
    let Ok(ws) = Workspace::new(tree().path()).with_policy(&policy) else { return };
    let [n0, n1, n2, n3, n4, n5] = input.numbers;
    let f = input.flags;
    match input.op % 3 {
        0 => {
            let r = SearchTextRequest {
                query: input.text,
                mode: opt(f, 0, if bit(f, 1) { QueryMode::Regex } else { QueryMode::Literal }),
                case: opt(f, 2, [CaseMode::Sensitive, CaseMode::Insensitive, CaseMode::Smart][n0 as usize % 3]),
                word: bit(f, 3),
                multiline: bit(f, 4),
                paths: input.paths,
                include_globs: input.globs.iter().filter(|g| !g.starts_with('!')).cloned().collect(),
                exclude_globs: input.globs.iter().filter(|g| g.starts_with('!')).cloned().collect(),
                types: if bit(f, 5) { vec!["rust".into()] } else { vec![] },
                hidden: bit(f, 6),
                no_ignore: bit(f, 7),
                follow_symlinks: bit(f, 8),
                context_before: opt(f, 9, n1 % 16),
                context_after: opt(f, 9, n2 % 16),
                output: opt(
                    f,
                    10,
                    [OutputMode::Content, OutputMode::FilesWithMatches, OutputMode::Count][n0 as usize % 3],
                ),
                max_results: opt(f, 11, n3),
                max_matches_per_file: opt(f, 11, n4),
                max_columns: opt(f, 12, n5),
                max_filesize: opt(f, 12, input.big[0]),
                timeout_ms: Some(2000),
                cursor: input.cursor,
                skip: opt(f, 13, n1),
                invert_match: bit(f, 14),
                streaming: bit(f, 15),
            };
            let _ = ws.search_text(r);
        }
        1 => {
            let r = ListFilesRequest {
                root: input.paths.into_iter().next(),
                recursive: opt(f, 0, bit(f, 1)),
                include_globs: input.globs.iter().filter(|g| !g.starts_with('!')).cloned().collect(),
                exclude_globs: input.globs.iter().filter(|g| g.starts_with('!')).cloned().collect(),
                include_dirs: bit(f, 2),
                include_metadata: bit(f, 3),
                hidden: bit(f, 4),
                no_ignore: bit(f, 5),
                max_results: opt(f, 6, n0),
                skip: opt(f, 7, n1),
                cursor: input.cursor,
            };
            let _ = ws.list_files(r);
        }
        _ => {
            let r = ReadFileRequest {
                path: input.text,
                range_type: opt(f, 0, if bit(f, 1) { RangeType::Lines } else { RangeType::Bytes }),
                offset_bytes: opt(f, 2, input.big[0]),
                max_bytes: opt(f, 3, input.big[1]),
                start_line: opt(f, 4, input.big[2]),
                max_lines: opt(f, 5, u64::from(n0)),
            };
            let _ = ws.read_file(r);
        }
    }
});
