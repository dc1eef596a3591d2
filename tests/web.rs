//! The search page of `sandgrep serve` in headless Chromium (Debian's
//! `chromium`, driven by `playwright-core` from tests/web, both installed by
//! scripts/test): sign in, search as you type, grouped and highlighted
//! results, load more, open a hit, errors, the file finder, structural
//! search, and another tenant's token seeing only its own files.

use std::path::Path;
use std::process::Command;

use crate::serve::start;
use crate::util::Tree;

#[test]
fn the_search_page_works_end_to_end_in_chromium() {
    let t = Tree::new();
    for (tenant, n) in [("alpha", 30), ("beta", 3)] {
        for i in 0..n {
            let body: String = (1..=80)
                .map(|l| if l % 16 == 0 { format!("let x{l} = find(\"needle\");\n") } else { format!("line {l}\n") })
                .collect();
            t.write(&format!("{tenant}/{tenant}-{i}.txt"), &body);
            t.write(&format!("{tenant}/{tenant}-{i}.js"), "find(\"needle\");\n");
        }
    }
    let root = t.path().display();
    let config = format!(
        "listen = \"127.0.0.1:0\"\n[[tenant]]\nname = \"alpha\"\nworkspace = \"{root}/alpha\"\ntokens = [\"alpha-token-0123456789\"]\n\
         requests_per_second = 1000\n[[tenant]]\nname = \"beta\"\nworkspace = \"{root}/beta\"\ntokens = [\"beta-token-0123456789\"]\n"
    );
    let server = start(t.path(), &config);
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/web");
    assert!(web.join("node_modules/playwright-core").exists(), "run scripts/test (playwright-core)");
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("search-page.png");
    let out = Command::new("node")
        .current_dir(&web)
        .arg("e2e.mjs")
        .arg(format!("http://{}", server.addr))
        .args(["alpha-token-0123456789", "beta-token-0123456789"])
        .arg(&shot)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(shot.exists());
}
