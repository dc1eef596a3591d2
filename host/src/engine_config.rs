//! The engine's configuration, in one place for the host and for `build.rs`,
//! which precompiles the embedded component with it: a compiled artifact
//! loads only into an engine configured the same way.

/// The guest's wasm stack: deep recursion in the guest traps instead of
/// exhausting the host.
const STACK_LIMIT: usize = 1 << 20;

pub fn config() -> wasmtime::Config {
    let mut config = wasmtime::Config::new();
    // How a call's deadline stops the guest (see `engine::Runtime::call`).
    config.epoch_interruption(true);
    config.max_wasm_stack(STACK_LIMIT);
    config
}
