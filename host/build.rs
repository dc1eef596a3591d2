//! Builds the guest crate to `sandgrep.wasm` (a wasm32-wasip2 component) with
//! a nested `cargo build`, and compiles that component to this machine's code
//! with wasmtime, so the host embeds both and the CLI ships as one file that
//! never loads compiled code from disk. No hand-run prebuild step. Also
//! builds the runaway test guest, and the `wasi:http` component (the front
//! in http/ composed with sandgrep.wasm; see [`compose_http`]).

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
        "http",
        // Compiled into the wasi:http front too (http/src/tools.rs).
        "host/src/tools/args.rs",
        "host/src/tools/requests.rs",
        "host/src/tools/schema.rs",
        "host/src/json.rs",
        "host/src/defaults.rs",
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
        // The runaway guest is only for the host's limit tests (not embedded);
        // the wasi:http front is composed with the component below.
        .args(["build", "--release", "-p", "sandgrep-guest", "-p", "sandgrep-runaway", "-p", "sandgrep-http"])
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
    for (var, file) in [
        ("SANDGREP_WASM", "sandgrep_guest.wasm"),
        ("SANDGREP_RUNAWAY_WASM", "sandgrep_runaway.wasm"),
        ("SANDGREP_HTTP_FRONT_WASM", "sandgrep_http.wasm"),
    ] {
        let wasm = target_dir.join("wasm32-wasip2/release").join(file);
        assert!(wasm.exists(), "guest build produced no {}", wasm.display());
        println!("cargo:rustc-env={var}={}", wasm.display());
    }
    // The component compiled with the host's engine configuration, for the
    // machine that builds (cranelift's default: this CPU's features). A
    // build for another target gets none: its host compiles in memory.
    let wasm = std::fs::read(target_dir.join("wasm32-wasip2/release/sandgrep_guest.wasm")).unwrap();
    compose_http(&target_dir.join("wasm32-wasip2/release"), &out_dir, &wasm);
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

/// The `wasi:http` component (docs/deploy.md): the front (http/), which
/// imports `sandgrep:search/search` and `files`, plugged with sandgrep.wasm's
/// exports by wasm-compose. It exports `wasi:http/incoming-handler` alone
/// (checked here): the search component's policy-taking functions are
/// hidden inside. wasm-compose copies both components whole, so the binary
/// keeps sandgrep.wasm once: `SANDGREP_HTTP_HEAD` and `SANDGREP_HTTP_TAIL`
/// are the composition's bytes before and after it, which `sandgrep
/// component --http` puts back around the embedded component.
fn compose_http(release: &std::path::Path, out_dir: &std::path::Path, wasm: &[u8]) {
    let dir = out_dir.join("compose");
    std::fs::create_dir_all(&dir).unwrap();
    // wasm-compose names components after their files, which must be kebab case.
    let front = dir.join("sandgrep-http-front.wasm");
    let search = dir.join("sandgrep.wasm");
    std::fs::copy(release.join("sandgrep_http.wasm"), &front).unwrap();
    std::fs::write(&search, wasm).unwrap();
    let config = wasm_compose::config::Config { dir: dir.clone(), definitions: vec![search], ..Default::default() };
    let composed = wasm_compose::composer::ComponentComposer::new(&front, &config)
        .compose()
        .unwrap_or_else(|e| panic!("composing the wasi:http component (http/ with sandgrep.wasm): {e:#}"));
    let exports = component_exports(&composed);
    assert!(
        exports.len() == 1 && exports[0].starts_with("wasi:http/incoming-handler@0.2."),
        "the wasi:http component must export the incoming handler alone, not {exports:?}"
    );
    let at = composed.windows(wasm.len()).position(|w| w == wasm);
    let at = at.expect("wasm-compose copies sandgrep.wasm into the composition whole");
    for (var, file, bytes) in [
        ("SANDGREP_HTTP_HEAD", "sandgrep-http.head", &composed[..at]),
        ("SANDGREP_HTTP_TAIL", "sandgrep-http.tail", &composed[at + wasm.len()..]),
    ] {
        std::fs::write(out_dir.join(file), bytes).unwrap();
        println!("cargo:rustc-env={var}={}", out_dir.join(file).display());
    }
}

/// The names a component exports (its own, not those of the components
/// nested in it).
fn component_exports(component: &[u8]) -> Vec<String> {
    use wasmparser::{Parser, Payload};
    let mut depth = 0usize;
    let mut names = Vec::new();
    for payload in Parser::new(0).parse_all(component) {
        match payload.expect("a valid component") {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentExportSection(exports) if depth == 0 => {
                names.extend(exports.into_iter().map(|e| e.expect("a valid export").name.name.to_string()));
            }
            _ => {}
        }
    }
    names
}
