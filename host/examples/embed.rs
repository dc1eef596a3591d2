//! The README's embedding example, built by CI with the library alone
//! (`cargo check -p sandgrep --no-default-features --example embed`):
//! `cargo run --example embed -- DIR` searches DIR for `fn main`.

fn main() -> Result<(), sandgrep::Error> {
    let repo = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    // README example: begin
    use sandgrep::{Policy, Sandbox, SearchTextRequest};

    let sandbox = Sandbox::open(repo, Policy::default())?;
    let mut request = SearchTextRequest::new("fn main");
    request.include_globs = vec!["*.rs".into()];
    let response = sandbox.search_text(&request)?;
    let listing = sandbox.list_files(&sandgrep::ListFilesRequest::new("."))?;
    let calls = sandbox.search_ast(&sandgrep::SearchAstRequest::new("$X.unwrap()"))?;
    // README example: end
    for m in &response.matches {
        println!("{}:{}:{}", m.path, m.line, m.text);
    }
    println!("{} entries listed, {} unwrap() calls", listing.entries.len(), calls.matches.len());
    Ok(())
}
