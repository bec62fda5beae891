//! Snapshots of the rendered `<main>` of every page, from the committed fixture records.

use workbench::record::load_dir;
use workbench::site::context::SiteContext;
use workbench::site::HtmlRenderer;

use crate::main_element;

#[test]
fn index_main() {
    let records = load_dir(&crate::fixtures()).unwrap();
    let html = HtmlRenderer
        .index_html(&SiteContext::new(&records))
        .unwrap();
    insta::assert_snapshot!("index_main", main_element(&html));
}

#[test]
fn experiment_pages_main() {
    let records = load_dir(&crate::fixtures()).unwrap();
    let context = SiteContext::new(&records);
    for (i, page) in context.pages.iter().enumerate() {
        let html = HtmlRenderer.experiment_html(&context, i).unwrap();
        insta::assert_snapshot!(format!("page_{}_main", page.id), main_element(&html));
    }
}

#[test]
fn failed_points_are_shown_with_their_stderr() {
    let mut records = load_dir(&crate::fixtures()).unwrap();
    let record = &mut records[0];
    record.points[0].outcome = experiments::Outcome::Failed {
        reason: "the child was killed by signal 9".into(),
        stderr_tail: "memory allocation of 17179869184 bytes failed".into(),
    };
    let context = SiteContext::new(&records);
    let html = HtmlRenderer.experiment_html(&context, 0).unwrap();
    assert!(html.contains("Failed points"));
    assert!(html.contains("killed by signal 9"));
    assert!(html.contains("memory allocation of 17179869184 bytes failed"));
    let index = HtmlRenderer.index_html(&context).unwrap();
    assert!(index.contains("1 failed points"));
}

#[test]
fn pages_make_no_network_request() {
    let records = load_dir(&crate::fixtures()).unwrap();
    let context = SiteContext::new(&records);
    let mut pages = vec![HtmlRenderer.index_html(&context).unwrap()];
    for i in 0..context.pages.len() {
        pages.push(HtmlRenderer.experiment_html(&context, i).unwrap());
    }
    for html in pages {
        for attr in [
            "src=\"http",
            "href=\"http",
            "src=\"//",
            "href=\"//",
            "@import",
        ] {
            assert!(!html.contains(attr), "remote reference {attr}");
        }
    }
}
