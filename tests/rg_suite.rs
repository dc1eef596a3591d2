//! ripgrep's own integration tests with sandgrep in rg's place, as a
//! ratchet: `scripts/rg-suite` runs ripgrep 15.2.0's suite (built once by
//! `scripts/test`) with a shim named `rg` that execs this sandgrep, less the
//! tests in `tests/rg-suite-exclusions.txt`, and prints `passed/run` last.
//! Fewer passing than `tests/rg-suite-passed` records fails; more is
//! progress: raise the record (docs/rg-suite.md).

use std::path::Path;
use std::process::Command;

use crate::util::cache_dir;

#[test]
fn ripgreps_own_tests_pass_no_fewer_than_recorded() {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new(checkout.join("scripts/rg-suite"))
        .args(["--no-build", "--sandgrep", env!("CARGO_BIN_EXE_sandgrep")])
        .env("SANDGREP_CACHE_DIR", cache_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "scripts/rg-suite did not run the suite (scripts/test builds it):\n{stderr}");
    let last = stdout.lines().last().unwrap_or("");
    let (passed, run) = last
        .split_once('/')
        .and_then(|(p, r)| Some((p.parse::<usize>().ok()?, r.parse::<usize>().ok()?)))
        .unwrap_or_else(|| panic!("scripts/rg-suite's last line is not passed/run:\n{stdout}"));
    let record = std::fs::read_to_string(checkout.join("tests/rg-suite-passed")).unwrap();
    let recorded: usize = record.trim().parse().expect("tests/rg-suite-passed holds a number");
    let failing: String = stdout.lines().filter(|l| l.starts_with("failed: ")).map(|l| format!("{l}\n")).collect();
    assert!(
        passed >= recorded,
        "ripgrep's own tests: {passed}/{run} pass with sandgrep, fewer than the {recorded} recorded in \
         tests/rg-suite-passed. Failing (scripts/rg-suite -v NAME shows why):\n{failing}"
    );
    if passed > recorded {
        eprintln!(
            "ripgrep's own tests: {passed}/{run} pass, {recorded} recorded: raise tests/rg-suite-passed to {passed}"
        );
    }
}
