//! The search page of `sandgrep serve` in headless Chromium (Debian's
//! `chromium`, driven by `playwright-core` from tests/web, both installed by
//! scripts/test): sign in, search as you type, grouped and highlighted
//! results, load more, open a hit, errors, the file finder, structural
//! search, and another tenant's token seeing only its own files; at a
//! phone's width and a desktop's, light and dark, with the layout checked
//! for overlap, cut-off text, unnamed controls and contrast.

use std::path::Path;
use std::process::Command;

use crate::serve::start;
use crate::util::Tree;

/// The tree the page is tried on: more hits than a page, hits next to each
/// other (one line is context of one hit and a hit itself), twelve copies of
/// the same file (folded), a vendored file (the "skip generated" chip), a
/// binary file (a note, not an error), a path too long for a phone's width,
/// numbered versions of a note (folded by name), a hit far right on a long line,
/// direction and control characters in a name and a line.
/// Returns the number of `needle` matches and the files holding them.
fn tree(t: &Tree, tenant: &str, n: usize) -> (usize, usize) {
    let (mut matches, mut files) = (0, 0);
    let mut put = |path: String, body: String| {
        let m = body.matches("needle").count();
        (matches, files) = (matches + m, files + usize::from(m > 0));
        t.write(&format!("{tenant}/{path}"), &body);
    };
    for i in 0..n {
        // Names and hits differ from file to file (nothing to fold): "aa", "ab", …
        let id: String = [b'a' + (i / 26) as u8, b'a' + (i % 26) as u8].iter().map(|&b| char::from(b)).collect();
        let body: String =
            (1..=80)
                .map(|l| {
                    if l % 16 == 0 {
                        format!("let x{l} = find(\"needle\", \"{id}\");\n")
                    } else {
                        format!("line {l}\n")
                    }
                })
                .collect();
        put(format!("work/{tenant}-{id}.txt"), body);
        put(format!("work/{tenant}-{id}.js"), format!("find(\"needle\", \"{id}\");\n"));
    }
    if tenant == "alpha" {
        let merged: String =
            (1..=20).map(|l| if [5, 6, 8].contains(&l) { format!("needle {l}\n") } else { format!("{l}\n") }).collect();
        put("merge.txt".into(), merged);
        for v in 30..42 {
            put(format!("api/docs/v1.{v}.yaml"), "a: 1\n  needle: ContainerCreate\nb: 2\n  also needle here\n".into());
        }
        for v in 1..=3 {
            put(format!("notes/release-{v}.md"), format!("# Release {v}\n\nneedle fixed in {v}\n"));
        }
        put("long/line.txt".into(), format!("let s = \"{}\"; // needle, far to the right\n", "word ".repeat(40)));
        put("vendor/lib/dep.go".into(), "package lib // needle\n".into());
        put(
            "trojan/a\u{202e}txt.go\u{1}".into(),
            "admin := false /* bidi-check \u{202e} } \u{2066} \u{e0041} */\n".into(),
        );
        // Numbered neighbours with different hits: not folded.
        put("pkg/setup_ipv4.go".into(), "// fold-check: routes\n// fold-check: table\n".into());
        put("pkg/setup_ipv6.go".into(), "// fold-check: neighbours\n// fold-check: solicit\n".into());
        put(
            "src/a-directory-name-long-enough-to-wrap/on-a-phone-screen/handler_with_a_rather_long_name.go".into(),
            "package p\n\nfunc needle() {}\n".into(),
        );
        t.write("alpha/blob.bin", "needle\0binary");
    }
    (matches, files)
}

#[test]
fn the_search_page_works_end_to_end_in_chromium() {
    let t = Tree::new();
    let (matches, files) = tree(&t, "alpha", 30);
    tree(&t, "beta", 3);
    let root = t.path().display();
    let config = format!(
        "listen = \"127.0.0.1:0\"\n[[tenant]]\nname = \"alpha\"\nworkspace = \"{root}/alpha\"\ntokens = [\"alpha-token-0123456789\"]\n\
         requests_per_second = 1000\n[[tenant]]\nname = \"beta\"\nworkspace = \"{root}/beta\"\ntokens = [\"beta-token-0123456789\"]\n"
    );
    let server = start(t.path(), &config);
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/web");
    assert!(web.join("node_modules/playwright-core").exists(), "run scripts/test (playwright-core)");
    // Screenshots (two widths, light and dark) go to the test's output directory.
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("search-page");
    std::fs::create_dir_all(&shots).unwrap();
    let out = Command::new("node")
        .current_dir(&web)
        .arg("e2e.mjs")
        .arg(format!("http://{}", server.addr))
        .args(["alpha-token-0123456789", "beta-token-0123456789"])
        .arg(&shots)
        .env("EXPECTED", format!("{matches} {files}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    for shot in ["1400-light", "1400-dark", "360-light", "360-dark"] {
        assert!(shots.join(format!("{shot}.png")).exists(), "{shot}");
    }
}
