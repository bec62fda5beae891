//! One claim, one source, read off the rendered pages as a reader sees them.
//!
//! Every page tags a figure or verdict that another page prints too (`data-claim`, keys from
//! `guide::claims`): a fix's verdict, a card's memory, a model's largest batch on a card. Over
//! the committed site and over the fixtures' render: each key carries one value on every page;
//! what the landing page claims, What fits or a technique page claims too; every table's parts
//! add up to its peak and every change and share follows from the figures printed beside it.
//! The checks return their problems, so that a test can show each one fails on a broken page.

use std::collections::BTreeMap;
use std::path::Path;

use guide::{HtmlRenderer, Renderer};
use regex::Regex;
use results::{Contradiction, Fix};

/// A tagged claim: the page, its key and the value printed.
#[derive(Debug)]
struct Claim {
    page: String,
    key: String,
    value: String,
}

fn pages(site: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(site)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (
                name,
                crate::without_terms(&std::fs::read_to_string(&p).unwrap()),
            )
        })
        .collect()
}

/// An element's text: its tags taken out, its spaces folded.
fn text(html: &str) -> String {
    let tags = Regex::new(r"<[^>]+>").unwrap();
    tags.replace_all(html, "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every tagged claim of every page: an element's `data-value`, else its text.
fn claims(pages: &BTreeMap<String, String>) -> Vec<Claim> {
    let tag = Regex::new(r#"<(\w+)([^>]*?) data-claim="([^"]+)"([^>]*)>"#).unwrap();
    let value = Regex::new(r#"data-value="([^"]*)""#).unwrap();
    let mut out = Vec::new();
    for (page, html) in pages {
        for m in tag.captures_iter(html) {
            let attributes = format!("{}{}", &m[2], &m[4]);
            let rest = &html[m.get(0).unwrap().end()..];
            let inner = &rest[..rest.find(&format!("</{}>", &m[1])).unwrap_or(0)];
            out.push(Claim {
                page: page.clone(),
                key: m[3].to_string(),
                value: value
                    .captures(&attributes)
                    .map_or_else(|| text(inner), |v| v[1].to_string()),
            });
        }
    }
    out
}

/// Keys printed with two values, with where each was printed.
fn disagreements(claims: &[Claim]) -> Vec<String> {
    let mut by_key: BTreeMap<&str, Vec<&Claim>> = BTreeMap::new();
    for c in claims {
        by_key.entry(&c.key).or_default().push(c);
    }
    by_key
        .into_iter()
        .filter(|(_, cs)| cs.iter().any(|c| c.value != cs[0].value))
        .map(|(key, cs)| {
            let said: Vec<String> = cs
                .iter()
                .map(|c| format!("{:?} on {}", c.value, c.page))
                .collect();
            format!("{key}: {}", said.join(", "))
        })
        .collect()
}

/// Claims of the landing page that no other page makes: a verdict no technique page states,
/// a card or a largest batch What fits does not print.
fn unmatched(claims: &[Claim]) -> Vec<String> {
    claims
        .iter()
        .filter(|c| c.page == "index.html")
        .filter(|c| {
            !claims
                .iter()
                .any(|o| o.key == c.key && o.page != "index.html")
        })
        .map(|c| format!("{} ({:?}) is on the landing page alone", c.key, c.value))
        .collect()
}

/// Bytes as the guide prints them (`1.82 GiB`), with half the last printed digit: the
/// rounding the figure carries.
fn bytes(s: &str) -> Option<(f64, f64)> {
    let m = Regex::new(r"^(-?[\d,]+(?:\.(\d+))?) (B|KiB|MiB|GiB|TiB)$")
        .unwrap()
        .captures(s.trim())?;
    let unit = match &m[3] {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0f64.powi(2),
        "GiB" => 1024.0f64.powi(3),
        _ => 1024.0f64.powi(4),
    };
    let decimals = m.get(2).map_or(0, |d| d.as_str().len()) as i32;
    let value: f64 = m[1].replace(',', "").parse().ok()?;
    Some((value * unit, 0.5 * 10f64.powi(-decimals) * unit))
}

fn percent(s: &str) -> Option<(f64, f64)> {
    let m = Regex::new(r"^([+-]?\d+(?:\.(\d+))?)%$")
        .unwrap()
        .captures(s.trim())?;
    let decimals = m.get(2).map_or(0, |d| d.as_str().len()) as i32;
    Some((m[1].parse().ok()?, 0.5 * 10f64.powi(-decimals)))
}

/// A table row's cells by their `data-label`, as text.
fn cells(row: &str) -> BTreeMap<String, String> {
    Regex::new(r#"(?s)<td data-label="([^"]+)"[^>]*>(.*?)</td>"#)
        .unwrap()
        .captures_iter(row)
        .map(|c| (c[1].to_string(), text(&c[2])))
        .collect()
}

fn rows(html: &str) -> Vec<&str> {
    Regex::new(r"(?s)<tr[ >].*?</tr>")
        .unwrap()
        .find_iter(html)
        .map(|m| m.as_str())
        .collect()
}

/// Rows of the measured tables (peak, held before, kept, added) whose parts do not add up to
/// the peak, or whose change does not follow from its peak and the base's.
fn parts_problems(page: &str, html: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut base: Option<(f64, f64)> = None;
    for row in rows(html) {
        let c = cells(row);
        let (Some(peak), Some(before), Some(kept), Some(added)) = (
            c.get("peak").and_then(|s| bytes(s)),
            c.get("held before")
                .and_then(|s| bytes(s.split(" (").next().unwrap_or(s))),
            c.get("kept").and_then(|s| bytes(s)),
            c.get("added").and_then(|s| bytes(s)),
        ) else {
            continue;
        };
        let fix = c.get("fix").cloned().unwrap_or_default();
        let sum = before.0 + kept.0 + added.0;
        if (sum - peak.0).abs() > before.1 + kept.1 + added.1 + peak.1 {
            problems.push(format!(
                "{page}, {fix}: its parts add up to {sum:.0} B, its peak is {:.0} B",
                peak.0
            ));
        }
        match c.get("change").map(String::as_str) {
            Some("the base") => base = Some(peak),
            Some(change) => {
                let (Some((pct, pct_rounding)), Some(b)) = (percent(change), base) else {
                    continue;
                };
                let exact = (peak.0 - b.0) / b.0 * 100.0;
                let rounding = pct_rounding + 100.0 * (peak.1 / b.0 + peak.0 * b.1 / (b.0 * b.0));
                if (pct - exact).abs() > rounding {
                    problems.push(format!(
                        "{page}, {fix}: change {change}, its peak and the base's give {exact:.1}%"
                    ));
                }
            }
            None => {}
        }
    }
    problems
}

/// The landing page's share of the fixed part: its percentage from the two figures printed
/// beside it, and those figures the plain row's.
fn share_problems(index: &str) -> Vec<String> {
    let Some(m) =
        Regex::new(r#"(?s)<span class="share">(\d+)%\s+of the peak: (.*?) of (.*?)</span>"#)
            .unwrap()
            .captures(index)
    else {
        return vec!["the landing page states no share of the fixed part".into()];
    };
    let (Some(part), Some(whole)) = (bytes(&m[2]), bytes(&m[3])) else {
        return vec![format!("unreadable figures beside the share: {:?}", &m[0])];
    };
    let pct: f64 = m[1].parse().unwrap();
    let exact = part.0 / whole.0 * 100.0;
    let mut problems = Vec::new();
    if (pct - exact).abs() > 0.5 + 100.0 * (part.1 / whole.0 + part.0 * whole.1 / whole.0.powi(2)) {
        problems.push(format!(
            "the share says {pct}%, its figures give {exact:.1}%"
        ));
    }
    let plain = rows(index)
        .into_iter()
        .map(cells)
        .find(|c| c.get("change").is_some_and(|s| s == "the base"));
    match plain {
        Some(c) if c["peak"] == m[3] && c["held before"].contains(&format!("({})", &m[2])) => {}
        _ => problems.push(format!(
            "the share's figures ({} of {}) are not the plain row's",
            &m[2], &m[3]
        )),
    }
    problems
}

/// The cards' memory as the pages print it against `results::cards` and the calculator's
/// rules, which `workbench estimate` reads too.
fn card_problems(claims: &[Claim], pages: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    let rules = pages.get("what-fits.html").and_then(|html| {
        let m = Regex::new(
            r#"(?s)<script type="application/json" id="calculator-rules">(.*?)</script>"#,
        )
        .unwrap()
        .captures(html)?;
        serde_json::from_str::<serde_json::Value>(&m[1].replace("<\\/", "</")).ok()
    });
    for card in results::cards::CARDS {
        let key = guide::claims::card(card.class);
        let printed = format!("{} MiB", results::format::thousands(card.reported_mib));
        for c in claims.iter().filter(|c| c.key == key && c.value != printed) {
            problems.push(format!(
                "{} prints {key} as {:?}, not {printed:?}",
                c.page, c.value
            ));
        }
        if let Some(rules) = &rules {
            let bytes = rules["cards"]
                .as_array()
                .and_then(|cards| cards.iter().find(|c| c["name"] == card.class))
                .and_then(|c| c["bytes"].as_f64());
            if bytes != Some(card.bytes()) {
                problems.push(format!(
                    "the calculator's {key} is {bytes:?} B, not {}",
                    card.bytes()
                ));
            }
        }
    }
    problems
}

/// Everything that makes two pages of `site` disagree, one line each.
fn site_problems(site: &Path) -> Vec<String> {
    let pages = pages(site);
    let claims = claims(&pages);
    let mut problems = disagreements(&claims);
    problems.extend(unmatched(&claims));
    problems.extend(card_problems(&claims, &pages));
    for (page, html) in &pages {
        problems.extend(parts_problems(page, html));
    }
    if let Some(index) = pages.get("index.html") {
        problems.extend(share_problems(index));
    }
    for kind in ["verdict ", "card ", "largest batch "] {
        if !claims.iter().any(|c| c.key.starts_with(kind)) {
            problems.push(format!("no page tags a claim of kind {kind:?}"));
        }
    }
    problems
}

/// The order's rows of `fixes` (ids) that do not say their rule is contradicted, or that rank
/// above a row without a label.
fn contradiction_problems(index: &str, fixes: &[&str]) -> Vec<String> {
    let row = Regex::new(r#"(?s)<tr data-fix="([^"]+)"( class="off")?>(.*?)</tr>"#).unwrap();
    let order: Vec<(String, bool, String)> = row
        .captures_iter(index)
        .map(|c| (c[1].to_string(), c.get(2).is_some(), text(&c[3])))
        .collect();
    let mut problems = Vec::new();
    for fix in fixes {
        let Some(at) = order.iter().position(|(id, _, _)| id == fix) else {
            problems.push(format!("{fix} is not in the order"));
            continue;
        };
        let (_, labelled, words) = &order[at];
        if !labelled || !words.contains("contradicted (") {
            problems.push(format!(
                "{fix}'s row does not say its rule is contradicted: {words}"
            ));
        }
        if let Some((below, _, _)) = order[at + 1..].iter().find(|(_, off, _)| !off) {
            problems.push(format!(
                "{fix} is ranked above {below}, whose row has no label"
            ));
        }
    }
    problems
}

/// The fixes whose rule a measurement of `records` contradicts.
fn contradicted<T>(records: &[results::Analysed<T>]) -> Vec<&'static str> {
    let mut fixes: Vec<&'static str> = records
        .iter()
        .filter_map(|r| r.analysis.fix_table.as_ref()?.projection.as_ref())
        .flat_map(|p| &p.cells)
        .filter(|c| c.contradiction().is_some())
        .map(|c| c.fix.id())
        .collect();
    fixes.sort_unstable();
    fixes.dedup();
    fixes
}

#[test]
fn the_committed_site_says_each_claim_once_and_labels_each_contradiction() {
    let site = crate::repo().join("site");
    let problems = site_problems(&site);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let records = crate::analysed(results::record::load_dir(&site.join("data")).unwrap());
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    let problems = contradiction_problems(&index, &contradicted(&records));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_committed_site_data_is_of_clean_commits() {
    let data = crate::repo().join("site/data");
    for record in results::record::load_dir(&data).unwrap() {
        let commit = &record.provenance.git_commit;
        assert!(
            !commit.ends_with("-dirty"),
            "{} ({:?}) was measured on an uncommitted tree: {commit}",
            record.experiment,
            record.device.kind
        );
    }
}

fn render(records: &[results::Analysed<results::Text>], out: &Path) {
    let capacity = workbench::analyse::analyse_capacity(
        results::CapacityRecord::load(&crate::fixtures().join(results::CAPACITY_FILE)).unwrap(),
    );
    HtmlRenderer.render(records, Some(&capacity), out).unwrap();
}

#[test]
fn the_fixtures_render_says_each_claim_once_and_a_disagreeing_page_fails() {
    let dir = tempfile::tempdir().unwrap();
    render(&crate::fixture_analyses(), dir.path());
    let problems = site_problems(dir.path());
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // One page printing another verdict, batch or card size than the rest: found.
    let breaks = [
        (
            "gpt2-small.html",
            r#"(data-claim="verdict cpu half-batch"[^>]*>)passed"#,
            "${1}failed",
        ),
        (
            "what-fits.html",
            r#"(data-claim="largest batch 24 GB gpt2-124m f32, Adam">)6"#,
            "${1}7",
        ),
        (
            "what-fits.html",
            r#"(data-claim="card 24 GB">)24,564"#,
            "${1}24,000",
        ),
        (
            "index.html",
            r#"(<td data-label="added" class="num">)[\d.]+ (\w+)"#,
            "${1}1.00 GiB",
        ),
    ];
    for (page, pattern, replacement) in breaks {
        let broken = tempfile::tempdir().unwrap();
        for (name, html) in pages(dir.path()) {
            let html = if name == page {
                let re = Regex::new(pattern).unwrap();
                assert!(re.is_match(&html), "{pattern} is not on {page}");
                re.replace(&html, replacement).into_owned()
            } else {
                html
            };
            std::fs::write(broken.path().join(name), html).unwrap();
        }
        assert!(
            !site_problems(broken.path()).is_empty(),
            "{page} broken by {pattern} passed"
        );
    }
}

#[test]
fn a_contradicted_rule_is_labelled_in_its_row_and_ranked_below_the_rest() {
    // The fixtures' mixed bf16, as Flex measures it in the regime: the rule's -45% not seen.
    let mut records = crate::fixture_analyses();
    let cell = records
        .iter_mut()
        .filter_map(|r| r.analysis.fix_table.as_mut()?.projection.as_mut())
        .flat_map(|p| p.cells.iter_mut())
        .find(|c| c.fix == Fix::MixedBf16)
        .expect("the fixtures project mixed bf16");
    let rule = cell
        .rule
        .as_mut()
        .expect("its rule is checked in the fixtures");
    rule.measured_change_pct = 0.5;
    rule.contradiction = Some(Contradiction::Bf16MatmulViaF32);
    assert_eq!(contradicted(&records), vec![Fix::MixedBf16.id()]);

    let dir = tempfile::tempdir().unwrap();
    render(&records, dir.path());
    let index =
        crate::without_terms(&std::fs::read_to_string(dir.path().join("index.html")).unwrap());
    let problems = contradiction_problems(&index, &contradicted(&records));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        index.contains("Flex multiplies bf16 in f32 buffers"),
        "the row says why"
    );

    // The same page without the label, and with the row ranked first: both found.
    let unlabelled = index.replace("contradicted (", "measured (");
    assert!(!contradiction_problems(&unlabelled, &[Fix::MixedBf16.id()]).is_empty());
    let first = Regex::new(r#"(?s)(<tr data-fix="mixed-bf16") class="off">(.*?)</tr>"#)
        .unwrap()
        .replace(&index, "$1>$2</tr>")
        .into_owned();
    assert!(!contradiction_problems(&first, &[Fix::MixedBf16.id()]).is_empty());
}
