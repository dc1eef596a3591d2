//! What each way of getting the component's machine code costs a process
//! (BENCHMARKS.md, "no compiled code from disk"): compiling it in memory,
//! deserializing bytes the binary holds (what sandgrep did until it ran
//! them in place, BENCHMARKS.md "the component run in place"), and mapping a
//! file (the disk cache it no longer keeps). `bench_load RUNS`.

use std::time::Instant;

use wasmtime::component::Component;
use wasmtime::{Config, Engine};

fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

fn main() {
    let runs: usize = std::env::args().nth(1).map_or(20, |r| r.parse().expect("RUNS is a number"));
    // The host's configuration (host/src/engine_config.rs).
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.max_wasm_stack(1 << 20);
    let engine = Engine::new(&config).unwrap();
    let wasm = sandgrep::component();
    let t = Instant::now();
    let code = engine.precompile_component(wasm).unwrap();
    println!(
        "compile in memory: {:.0} ms ({} bytes of wasm -> {} bytes of code)",
        t.elapsed().as_secs_f64() * 1e3,
        wasm.len(),
        code.len()
    );
    let file = std::env::temp_dir().join(format!("bench-load-{}.cwasm", std::process::id()));
    std::fs::write(&file, &code).unwrap();
    let time = |f: &dyn Fn() -> Component| {
        median(
            (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    drop(f());
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect(),
        )
    };
    // SAFETY: the bytes and the file are what this engine just compiled.
    let bytes = time(&|| unsafe { Component::deserialize(&engine, &code) }.unwrap());
    let mapped = time(&|| unsafe { Component::deserialize_file(&engine, &file) }.unwrap());
    std::fs::remove_file(&file).unwrap();
    println!("deserialize from bytes (the binary's): {bytes:.2} ms median of {runs}");
    println!("deserialize a file by mmap (the old disk cache): {mapped:.2} ms median of {runs}");
}
