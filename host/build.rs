//! Builds the guest crate to `sandgrep.wasm` (a wasm32-wasip2 component) with
//! a nested `cargo build`, and compiles that component to this machine's code
//! with wasmtime, so the host embeds both and the CLI ships as one file that
//! never loads compiled code from disk. No hand-run prebuild step. Also
//! builds the runaway test guest.

use std::env;
use std::path::PathBuf;
use std::process::Command;

#[path = "src/engine_config.rs"]
mod engine_config;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let workspace = manifest_dir.parent().unwrap().to_path_buf();
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    // A target dir of its own: the outer build holds the lock on the main one.
    let target_dir = out_dir.join("guest-target");
    for p in [
        "guest/src",
        "guest/Cargo.toml",
        "contract",
        "tests/runaway",
        "wit",
        "Cargo.lock",
        "Cargo.toml",
        "host/src/engine_config.rs",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(p).display());
    }

    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&workspace)
        // The runaway guest is only for the host's limit tests (not embedded).
        .args(["build", "--release", "-p", "sandgrep-guest", "-p", "sandgrep-runaway"])
        .args(["--target", "wasm32-wasip2", "--target-dir"])
        .arg(&target_dir);
    // The outer build's settings are not the guest's: drop what would leak.
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("CARGO_") && key != "CARGO_HOME" && key != "CARGO_NET_OFFLINE" || key == "RUSTFLAGS" {
            cmd.env_remove(&key);
        }
    }
    for key in ["RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTDOCFLAGS"] {
        cmd.env_remove(key);
    }
    // The grammars to compile in (structural search): all by default, or a
    // comma-separated list such as `rust,python` (see guest/Cargo.toml).
    println!("cargo:rerun-if-env-changed=SANDGREP_LANGS");
    if let Ok(langs) = env::var("SANDGREP_LANGS") {
        let features: Vec<String> = langs
            .split(',')
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| format!("sandgrep-guest/lang-{l}"))
            .collect();
        cmd.arg("--no-default-features");
        if !features.is_empty() {
            cmd.args(["--features", &features.join(",")]);
        }
    }
    // tree-sitter's C code, built for wasm32-wasip2 with clang against a WASI
    // sysroot (scripts/setup installs them): Debian's `wasi-libc` under /usr,
    // or on macOS Homebrew's llvm, wasi-libc and wasi-runtimes (untested).
    let defaults = if cfg!(target_os = "macos") {
        let prefix = env::var("HOMEBREW_PREFIX").unwrap_or_else(|_| {
            if cfg!(target_arch = "aarch64") {
                "/opt/homebrew".into()
            } else {
                "/usr/local".into()
            }
        });
        [
            format!("{prefix}/opt/llvm/bin/clang"),
            format!(
                "--target=wasm32-wasi --sysroot={prefix}/share/wasi-sysroot -resource-dir={prefix}/share/wasi-runtimes"
            ),
        ]
    } else {
        ["clang".into(), "--target=wasm32-wasi --sysroot=/usr".into()]
    };
    for (key, default) in ["CC_wasm32_wasip2", "CFLAGS_wasm32_wasip2"].into_iter().zip(defaults) {
        println!("cargo:rerun-if-env-changed={key}");
        let mut value = env::var_os(key).unwrap_or_else(|| default.into());
        // PCRE2 (-P), built with the same clang: pcre2-sys asks for its JIT on
        // every target but a few, and wasm can run no code it makes; the
        // flags given in the environment come after its `-DSUPPORT_JIT`, so
        // this takes it back (PCRE2's interpreter, as `pcre2_config` then
        // says and the pcre2 crate heeds). And the heap one match may use,
        // in KiB, `limits::PCRE2_HEAP` (tests/limits.rs checks) (PCRE2's default, 20 GB, is past any instance's memory
        // cap: a runaway match would end the whole call out of memory,
        // where this ends it as an error of the file searched).
        if key.starts_with("CFLAGS") {
            value.push(" -USUPPORT_JIT -DHEAP_LIMIT=65536");
        }
        cmd.env(key, value);
    }
    // pcre2-sys: the vendored C source, never a library pkg-config finds.
    cmd.env("PCRE2_SYS_STATIC", "1");
    println!("cargo:rerun-if-env-changed=HOMEBREW_PREFIX");
    // SIMD in the guest's regex engine: 10-20% faster searches.
    cmd.env("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-feature=+simd128");
    let status = cmd.status().expect("failed to run cargo for the guest");
    if !status.success() {
        panic!(
            "building the guest component failed; run scripts/setup (it adds the wasm32-wasip2 target and installs \
             clang, lld and wasi-libc for the grammars)"
        );
    }
    for (var, file) in [("SANDGREP_WASM", "sandgrep_guest.wasm"), ("SANDGREP_RUNAWAY_WASM", "sandgrep_runaway.wasm")] {
        let wasm = target_dir.join("wasm32-wasip2/release").join(file);
        assert!(wasm.exists(), "guest build produced no {}", wasm.display());
        println!("cargo:rustc-env={var}={}", wasm.display());
    }
    // The component compiled with the host's engine configuration, for the
    // machine that builds (cranelift's default: this CPU's features). A
    // build for another target gets none: its host compiles in memory.
    let wasm = std::fs::read(target_dir.join("wasm32-wasip2/release/sandgrep_guest.wasm")).unwrap();
    let cwasm = out_dir.join("sandgrep.cwasm");
    let code = if env::var("TARGET").ok() == env::var("HOST").ok() {
        let engine = wasmtime::Engine::new(&engine_config::config()).expect("wasmtime engine");
        engine.precompile_component(&wasm).expect("compiling the guest component")
    } else {
        Vec::new()
    };
    std::fs::write(&cwasm, code).unwrap();
    println!("cargo:rustc-env=SANDGREP_CWASM={}", cwasm.display());
}
