//! Median wall time of a warm `Sandbox::search_text` call (count output) on
//! a directory, for `scripts/bench`: `bench_small DIR PATTERN RUNS`.

use std::time::Instant;

use sandgrep::{OutputMode, Policy, Sandbox, SearchTextRequest};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, pattern, runs] = &args[..] else {
        eprintln!("usage: bench_small DIR PATTERN RUNS");
        std::process::exit(2);
    };
    let sandbox = Sandbox::open(dir, Policy::default()).expect("open the workspace");
    let mut request = SearchTextRequest::new(pattern.as_str());
    request.output = Some(OutputMode::Count);
    request.max_results = Some(5000);
    sandbox.search_text(&request).expect("warm-up search");
    let mut times: Vec<f64> = (0..runs.parse::<usize>().expect("RUNS is a number"))
        .map(|_| {
            let t = Instant::now();
            sandbox.search_text(&request).expect("search");
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!("{:.2} ms", times[times.len() / 2]);
}
