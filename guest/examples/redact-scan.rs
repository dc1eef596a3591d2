//! Redaction over a tree, natively, for measuring precision fast: prints
//! every line that redaction changes as `path:line:\t<redacted>` (with
//! `--orig`, the original line under it), then a count on stderr.
//! Honours .gitignore like a search. Not the product: `scripts/redaction-report`
//! measures the real binary.
//!
//!   cargo run --release -p sandgrep-guest --example redact-scan -- [--orig] DIR...
use std::io::Write;

#[path = "../src/redact/mod.rs"]
#[allow(dead_code)]
mod redact;

fn main() {
    let mut orig = false;
    let mut dirs = Vec::new();
    for a in std::env::args().skip(1) {
        if a == "--orig" {
            orig = true;
        } else {
            dirs.push(a);
        }
    }
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let (mut files, mut lines) = (0usize, 0usize);
    for d in dirs {
        for entry in ignore::WalkBuilder::new(&d).hidden(false).build().flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(bytes) = std::fs::read(entry.path()) else { continue };
            if bytes.len() > 8 << 20 || bytes[..bytes.len().min(8192)].contains(&0) {
                continue;
            }
            files += 1;
            let (shown, edits) = redact::redact_lines(b"", &bytes);
            if edits.is_empty() {
                continue;
            }
            let a: Vec<&[u8]> = bytes.split(|&c| c == b'\n').collect();
            let b: Vec<&[u8]> = shown.split(|&c| c == b'\n').collect();
            for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                if x != y {
                    lines += 1;
                    let _ = out.write_all(format!("{}:{}:\t", entry.path().display(), i + 1).as_bytes());
                    let _ = out.write_all(y);
                    let _ = out.write_all(b"\n");
                    if orig {
                        let _ = out.write_all(b"\t<<< ");
                        let _ = out.write_all(x);
                        let _ = out.write_all(b"\n");
                    }
                }
            }
        }
    }
    drop(out);
    eprintln!("{lines} lines changed in {files} files");
}
