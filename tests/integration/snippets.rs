//! Every code block a reader copies from the guide is a file the workspace compiles against the
//! pinned Burn: a `<pre><code>` block of the committed site (or of a guide rendered from the
//! fixtures) must be, character for character, one of the techniques' `snippet.rs` files,
//! which the `experiments` crate builds. A snippet that drifts from its file, or a hand-written
//! block, fails here.

use std::collections::BTreeSet;
use std::path::Path;

/// Every technique's `snippet.rs`, trimmed at the end as the guide shows it.
fn compiled_snippets() -> BTreeSet<String> {
    let techniques = crate::repo().join("crates/experiments/src/techniques");
    let mut snippets = BTreeSet::new();
    for entry in std::fs::read_dir(&techniques).unwrap() {
        let file = entry.unwrap().path().join("snippet.rs");
        if file.exists() {
            snippets.insert(
                std::fs::read_to_string(&file)
                    .unwrap()
                    .trim_end()
                    .to_string(),
            );
        }
    }
    snippets
}

/// The text of every `<pre><code>` block of `html`, its entities decoded.
fn code_blocks(html: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<pre><code>") {
        let after = &rest[start + "<pre><code>".len()..];
        let end = after.find("</code></pre>").expect("a closed code block");
        blocks.push(unescape(&after[..end]));
        rest = &after[end..];
    }
    blocks
}

/// The HTML escapes minijinja writes, decoded.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("&amp;", "&")
}

/// The pages of `site` whose code blocks are not compiled files, with the first line of each
/// such block.
fn uncompiled_blocks(site: &Path) -> Vec<String> {
    let snippets = compiled_snippets();
    let mut found = Vec::new();
    for entry in std::fs::read_dir(site).unwrap() {
        let page = entry.unwrap().path();
        if page.extension().is_none_or(|e| e != "html") {
            continue;
        }
        let html = std::fs::read_to_string(&page).unwrap();
        for block in code_blocks(&html) {
            if !snippets.contains(&block) {
                let first = block.lines().next().unwrap_or("").to_string();
                found.push(format!("{}: {first}", page.display()));
            }
        }
    }
    found
}

#[test]
fn every_code_block_of_the_committed_guide_is_a_compiled_file() {
    let site = crate::repo().join("site");
    let blocks: usize = std::fs::read_dir(&site)
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
        .map(|html| code_blocks(&html).len())
        .sum();
    assert!(
        blocks >= 17,
        "one block per technique page at least: {blocks}"
    );
    let uncompiled = uncompiled_blocks(&site);
    assert!(uncompiled.is_empty(), "not compiled files: {uncompiled:#?}");
}

#[test]
fn a_block_edited_by_hand_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let snippet = compiled_snippets().into_iter().next().unwrap();
    let escaped = snippet
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let page = |code: &str| format!("<main><pre><code>{code}</code></pre></main>");
    std::fs::write(dir.path().join("same.html"), page(&escaped)).unwrap();
    assert!(uncompiled_blocks(dir.path()).is_empty());
    // A commented-out setting shown as code, or one changed word, is not the compiled file.
    let edited = escaped.replacen("use ", "// use ", 1);
    std::fs::write(dir.path().join("edited.html"), page(&edited)).unwrap();
    assert_eq!(uncompiled_blocks(dir.path()).len(), 1);
}
