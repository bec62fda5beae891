//! The recorded step as one HTML file for the reader's own model: what was live at the peak by
//! site (a stacked bar and its table), each phase's peak, and the step's timeline with its
//! largest blocks' lives drawn under it. Self-contained (no script, no network), readable on a
//! phone.

use std::fmt::Write;

use super::{Moment, Report};
use crate::bytes;

/// Sites a bar and a table show before the rest is summed as one row.
const ROWS: usize = 10;
/// Colours of the bar's segments, in order (the rest grey).
const COLOURS: [&str; ROWS] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#7f7f7f",
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\'', "&#39;")
}

/// The page of `report`, titled by `model`.
pub fn page(report: &Report, model: &str) -> String {
    let peak = &report.peak;
    let top = peak
        .sites
        .iter()
        .take(3)
        .map(|s| format!("{} ({})", escape(&s.site.label()), bytes(s.bytes as f64)))
        .collect::<Vec<_>>()
        .join("; ");
    let mut h = format!(
        "<!doctype html><html lang=en><meta charset=utf-8>\
         <meta name=viewport content='width=device-width,initial-scale=1'>\
         <title>What holds the peak: {m}</title><style>{CSS}</style><body><main>\
         <h1>What holds the peak: {m}</h1><p class=answer>At the step's peak {p} were in use \
         (the probe read {q}); the blocks of {t} or more, traced to the code that made them, \
         hold {s:.1}% of it. Largest: {top}.</p>",
        m = escape(model),
        p = bytes(peak.in_use_bytes as f64),
        q = bytes(report.probe_peak_bytes as f64),
        t = bytes(report.threshold_bytes as f64),
        s = 100.0 * peak.traced_share(),
    );
    h.push_str(&moment_html(
        "At the step's peak",
        peak,
        report.before_recording_bytes,
    ));
    h.push_str(&timeline_svg(report));
    for (name, m) in &report.phases {
        let _ = write!(
            h,
            "<details><summary>At the {} phase's peak ({})</summary>{}</details>",
            escape(name),
            bytes(m.in_use_bytes as f64),
            moment_html("", m, report.before_recording_bytes)
        );
    }
    let _ = write!(
        h,
        "<p class=note>Counted by a counting global allocator on the CPU backend: every heap \
         byte live, tensors and their bookkeeping. A GPU backend fuses some operations and \
         pools its memory, so its peak can be made of fewer, larger blocks; Burn's CPU backend \
         runs 16-bit matmuls in f32 buffers, which a GPU does not. {u} blocks were made after \
         the recorder's buffer was full and are counted with the small ones.</p></main></body></html>",
        u = report.untraced_blocks
    );
    h
}

/// A stacked bar of the sites live at `m`, and their table.
fn moment_html(title: &str, m: &Moment, before: u64) -> String {
    let total = m.in_use_bytes.max(1) as f64;
    let mut rows: Vec<(String, u64, u64)> = m
        .sites
        .iter()
        .take(ROWS - 2)
        .map(|s| (s.site.label(), s.bytes, s.blocks))
        .collect();
    let rest: u64 = m.sites.iter().skip(ROWS - 2).map(|s| s.bytes).sum();
    let rest_blocks: u64 = m.sites.iter().skip(ROWS - 2).map(|s| s.blocks).sum();
    if rest > 0 {
        rows.push(("other traced blocks".into(), rest, rest_blocks));
    }
    let own = before.min(m.untraced_bytes);
    rows.push((
        "blocks under the threshold".into(),
        m.untraced_bytes - own,
        0,
    ));
    rows.push(("held before recording began".into(), own, 0));
    let mut bar = String::from("<div class=bar>");
    let mut table = String::from(
        "<table><tr><th></th><th>made by</th><th>bytes</th><th>share</th><th>blocks</th></tr>",
    );
    for (i, (label, b, n)) in rows.iter().enumerate() {
        let colour = COLOURS.get(i).copied().unwrap_or("#ccc");
        let share = 100.0 * *b as f64 / total;
        let _ = write!(
            bar,
            "<span style='width:{share:.2}%;background:{colour}' title='{l}'></span>",
            l = escape(label)
        );
        let _ = write!(
            table,
            "<tr><td><i style='background:{colour}'></i></td><td>{l}</td><td>{b}</td>\
             <td>{share:.1}%</td><td>{n}</td></tr>",
            l = escape(label),
            b = bytes(*b as f64),
        );
    }
    let heading = if title.is_empty() {
        String::new()
    } else {
        format!("<h2>{title}</h2>")
    };
    format!("{heading}{bar}</div>{table}</table>")
}

/// The step's bytes in use over its events, the peak marked, and under it the largest blocks
/// live at the peak as bars from the event that made them to the one that freed them.
fn timeline_svg(report: &Report) -> String {
    let by_event = &report.timeline.bytes;
    let (w, plot_h, lane) = (640.0, 200.0, 14.0);
    let n = by_event.len().max(2) as f64;
    let max = by_event.iter().copied().max().unwrap_or(1).max(1) as f64;
    let x = |e: f64| (e.clamp(0.0, n) / n) * w;
    let y = |b: f64| plot_h - b / max * (plot_h - 10.0);
    let stride = (by_event.len() / 1200).max(1);
    let line: Vec<String> = by_event
        .iter()
        .enumerate()
        .step_by(stride)
        .map(|(i, &b)| format!("{:.1},{:.1}", x(i as f64), y(b as f64)))
        .collect();
    let height = plot_h + 16.0 + lane * report.largest.len() as f64;
    let mut svg = format!(
        "<h2>The step's timeline</h2><p>Bytes in use after each allocation event of the step \
         (the peak, {p}, marked); under it, the largest blocks live at the peak, from the event \
         that made them to the one that freed them.</p><svg viewBox='0 0 {w} {height}' \
         role=img aria-label='bytes in use over the step'>\
         <polyline fill=none stroke='#1f77b4' points='{pts}'/>\
         <circle cx='{cx:.1}' cy='{cy:.1}' r=4 fill='#d62728'/>",
        p = bytes(max),
        pts = line.join(" "),
        cx = x(report.peak.event as f64),
        cy = y(report.peak.in_use_bytes as f64),
    );
    for (i, s) in report.largest.iter().enumerate() {
        let top = plot_h + 12.0 + lane * i as f64;
        let from = x(s.made_event as f64);
        let to = x(s.freed_event.map_or(n, |f| f as f64));
        let _ = write!(
            svg,
            "<rect x='{from:.1}' y='{top:.1}' width='{:.1}' height='{:.1}' fill='#c5b0d5'/>\
             <text x='2' y='{:.1}' font-size='10'>{} {}</text>",
            (to - from).max(1.0),
            lane - 3.0,
            top + lane - 5.0,
            escape(&s.site.label()),
            bytes(s.bytes as f64)
        );
    }
    svg.push_str("</svg>");
    svg
}

const CSS: &str = "body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#222}\
main{max-width:60rem;margin:auto;padding:1rem}.bar{display:flex;height:1.6rem;\
border:1px solid #888;margin:.5rem 0}.bar span{display:block;height:100%}\
table{border-collapse:collapse;width:100%;font-size:.9rem}td,th{padding:.2rem .4rem;\
border-bottom:1px solid #ddd;text-align:left;overflow-wrap:anywhere}\
i{display:inline-block;width:.8rem;height:.8rem}svg{width:100%;height:auto;\
border:1px solid #ddd}.answer{font-size:1.1rem}.note{color:#555;font-size:.9rem}";
