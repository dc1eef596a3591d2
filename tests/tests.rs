//! Integration tests: the real `sandgrep` binary (real component, real host)
//! on temporary trees. One test binary; modules by concern.

mod util;

mod answers;
mod ast;
mod cli;
mod cluster;
mod conformance;
mod features;
mod files;
mod hostile;
mod hostile_server;
mod help;
mod hosts;
mod index;
mod json;
mod limits;
mod mcp;
mod parallel;
mod redaction;
mod rg_json;
mod rg_output;
mod rg_suite;
mod serve;
mod stdin;
mod wasi_http;
mod web;
