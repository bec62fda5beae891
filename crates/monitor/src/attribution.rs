//! What holds the memory at a step's peak: every large allocation traced to the code that made
//! it, on the CPU backend.
//!
//! While a [`Recorder`] is on, the counting allocator numbers every allocation event and, for
//! each allocation of at least [`THRESHOLD_BYTES`], keeps its size, the events that made and
//! freed it and the raw return addresses of its call stack, in buffers made statically:
//! recording allocates nothing. When the step ends the addresses are symbolised (the binary's
//! symbols and line tables) and each block is named by the code that asked for it: the innermost
//! frame of the model's code or of Burn's `nn` modules, the tensor operation, or the backward
//! node or the optimizer that made it. At the step's peak, and at each phase's, the live bytes
//! are summed by that name; allocations under the threshold (and the few bytes the process held
//! before the recorder started) are one row, so that the rows add up to the probe's peak.
//!
//! ```no_run
//! # fn build_model() {} fn warm_step() {} fn forward() {} fn backward() {} fn update() {}
//! use burn_step_monitor::attribution::Recorder;
//! let mut recorder = Recorder::start(); // before the model is built: its weights get a name
//! build_model();
//! warm_step(); // the optimizer's state is made in the first step
//! recorder.begin_step();
//! recorder.phase("forward");
//! forward();
//! recorder.phase("backward");
//! backward();
//! recorder.phase("optimizer");
//! update();
//! let report = recorder.end_step();
//! std::fs::write("peak.html", report.html("my model")).unwrap();
//! ```

use std::collections::{BTreeMap, HashMap};

mod html;

use crate::host::{self, Timeline};
use crate::probe::ReadMemory;
use crate::trace::{self, Block};
pub use crate::trace::{BLOCK_CAPACITY, FRAMES, THRESHOLD_BYTES};

/// Records which code made the blocks alive at a step's peak: start it before the model is
/// built, call [`Recorder::begin_step`], [`Recorder::phase`] and [`Recorder::end_step`] around
/// one step. Needs [`host::CountingAllocator`] as the global allocator; one recorder at a time
/// per process.
pub struct Recorder {
    names: Vec<&'static str>,
    step_start: u64,
    before_bytes: u64,
}

impl Recorder {
    /// Starts tracing every allocation of at least [`THRESHOLD_BYTES`].
    pub fn start() -> Self {
        Self::with_threshold(THRESHOLD_BYTES)
    }

    /// Starts tracing every allocation of at least `threshold_bytes` (a small model's tensors
    /// can all be under the default).
    pub fn with_threshold(threshold_bytes: u64) -> Self {
        // Room for the phases' names made now: nothing of the recorder is allocated in the
        // step.
        let names = Vec::with_capacity(16);
        let before_bytes = host::HostProbe.read().in_use_bytes;
        trace::start(threshold_bytes);
        Self {
            names,
            step_start: 0,
            before_bytes,
        }
    }

    /// The step begins: its peak is read from here, and its timeline recorded.
    pub fn begin_step(&mut self) {
        self.names.clear();
        host::HostProbe.reset_peak();
        host::start_timeline();
        self.step_start = host::events();
    }

    /// A phase of the step begins (`forward`, `backward`, `optimizer`).
    pub fn phase(&mut self, name: &'static str) {
        if self.names.len() < self.names.capacity() {
            self.names.push(name);
        }
        host::mark_phase();
    }

    /// Ends the step and the recording, symbolises the traced blocks and sums what was live at
    /// the step's peak and at each phase's.
    pub fn end_step(self) -> Report {
        let probe_peak_bytes = host::HostProbe.read().peak_in_use_bytes;
        let names: Vec<String> = self.names.iter().map(|n| n.to_string()).collect();
        self.end_step_of(&names, probe_peak_bytes)
    }

    /// [`Recorder::end_step`] for a caller that marked the phases itself
    /// ([`host::mark_phase`], named `names` in order) and read the step's peak from the probe
    /// (`probe_peak_bytes`: the highest of its phases' peaks where it reset the peak per phase).
    pub fn end_step_of(self, names: &[String], probe_peak_bytes: u64) -> Report {
        let timeline = host::stop_timeline();
        trace::stop();
        let (blocks, untraced) = trace::take();
        let started = std::time::Instant::now();
        let frames = symbolise(&blocks);
        let symbolise_s = started.elapsed().as_secs_f64();
        let phases: Vec<(String, u64)> = names
            .iter()
            .zip(&timeline.phase_starts)
            .map(|(n, &s)| (n.clone(), self.step_start + s as u64))
            .collect();
        let mut report = Report::new(self.step_start, &phases, timeline, &blocks, &frames);
        report.probe_peak_bytes = probe_peak_bytes;
        report.untraced_blocks = untraced as u64;
        report.symbolise_s = symbolise_s;
        report.before_recording_bytes = self.before_bytes;
        report
    }

    /// Ends the recording without reading it (a recorded step timed for the recording's
    /// cost).
    pub fn discard(self) {
        host::stop_timeline();
        trace::stop();
    }
}

/// Where a block was made: the code that asked for it and the operation, or the backward
/// node or optimizer that made it, and when.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Site {
    /// The innermost frame of the model's code or of Burn's modules (`Linear::forward`), or
    /// `backward` or the optimizer (`Adam`).
    pub code: String,
    /// The tensor operation or backward node (`matmul`, `Matmul`), empty where none was seen.
    pub op: String,
    /// The step's phase in which it was made, or `before the step`.
    pub made_in: String,
}

impl Site {
    /// One line: `Linear::forward · matmul (forward)`.
    pub fn label(&self) -> String {
        let op = if self.op.is_empty() {
            String::new()
        } else {
            format!(" · {}", self.op)
        };
        format!("{}{op} ({})", self.code, self.made_in)
    }
}

/// The bytes a site's blocks held at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteBytes {
    /// Where they were made.
    pub site: Site,
    /// Bytes held.
    pub bytes: u64,
    /// Blocks held.
    pub blocks: u64,
}

/// What was live at one moment of the step: the traced blocks by site, largest first, and the
/// rest (blocks under the threshold, and what the process held before the recorder started).
#[derive(Debug, Clone, PartialEq)]
pub struct Moment {
    /// The event (counted from the step's start) at which it was read.
    pub event: u64,
    /// Bytes in use then.
    pub in_use_bytes: u64,
    /// The traced blocks live then, by site.
    pub sites: Vec<SiteBytes>,
    /// `in_use_bytes` less the traced blocks' bytes.
    pub untraced_bytes: u64,
}

impl Moment {
    /// The traced bytes' share of the bytes in use.
    pub fn traced_share(&self) -> f64 {
        1.0 - self.untraced_bytes as f64 / self.in_use_bytes.max(1) as f64
    }
}

/// A traced block of the step, as the timeline labels it.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Where it was made.
    pub site: Site,
    /// Its bytes.
    pub bytes: u64,
    /// The event that made it, counted from the step's start (negative: before the step).
    pub made_event: i64,
    /// The event that freed it, from the step's start; `None` if it outlived the step.
    pub freed_event: Option<i64>,
}

/// One recorded step: its peak and each phase's, by site, its timeline and its largest blocks.
#[derive(Debug, Clone)]
pub struct Report {
    /// The threshold blocks were traced above.
    pub threshold_bytes: u64,
    /// The step's peak as the probe read it (the counting allocator's high-water mark).
    pub probe_peak_bytes: u64,
    /// The step's peak, by site.
    pub peak: Moment,
    /// Each phase's peak, by site, in the order run.
    pub phases: Vec<(String, Moment)>,
    /// Bytes in use after each event of the step.
    pub timeline: Timeline,
    /// The largest blocks live at the step's peak, largest first (at most [`Report::SPANS`]).
    pub largest: Vec<Span>,
    /// Blocks made after the buffer was full (not traced; counted in the untraced bytes).
    pub untraced_blocks: u64,
    /// Seconds spent symbolising the stacks after the step (not part of the step).
    pub symbolise_s: f64,
    /// Bytes in use when the recorder started (the process's own: its runtime, thread pool and
    /// workspaces), part of every moment's untraced bytes while they live.
    pub before_recording_bytes: u64,
}

impl Report {
    /// Blocks [`Report::largest`] keeps.
    pub const SPANS: usize = 12;

    /// The recorded step as one self-contained HTML page, titled by `model`.
    pub fn html(&self, model: &str) -> String {
        html::page(self, model)
    }

    fn new(
        step_start: u64,
        phases: &[(String, u64)],
        timeline: Timeline,
        blocks: &[Block],
        frames: &[Vec<String>],
    ) -> Self {
        let made_in = |event: u64| {
            phases
                .iter()
                .rev()
                .find(|(_, start)| *start <= event)
                .map_or("before the step", |(name, _)| name.as_str())
                .to_string()
        };
        let sites: Vec<Site> = blocks
            .iter()
            .zip(frames)
            .map(|(b, frames)| site_of(frames, made_in(b.made)))
            .collect();
        let moment =
            |from: usize, to: usize| moment(&timeline.bytes, from, to, step_start, blocks, &sites);
        let peak = moment(0, timeline.bytes.len());
        // A phase that began after the timeline's buffer was full has no events to read.
        let phase_moments = phases
            .iter()
            .enumerate()
            .filter(|(_, (_, start))| ((start - step_start) as usize) < timeline.bytes.len())
            .map(|(i, (name, start))| {
                let from = (start - step_start) as usize;
                let to = phases
                    .get(i + 1)
                    .map_or(timeline.bytes.len(), |(_, s)| (s - step_start) as usize);
                (name.clone(), moment(from, to.max(from + 1)))
            })
            .collect();
        let largest = largest(blocks, &sites, step_start + peak.event, step_start);
        Self {
            threshold_bytes: trace::threshold_bytes(),
            probe_peak_bytes: 0,
            peak,
            phases: phase_moments,
            timeline,
            largest,
            untraced_blocks: 0,
            symbolise_s: 0.0,
            before_recording_bytes: 0,
        }
    }
}

/// What was live at the highest event of `bytes[from..to]` (the step's events).
fn moment(
    bytes: &[u64],
    from: usize,
    to: usize,
    step_start: u64,
    blocks: &[Block],
    sites: &[Site],
) -> Moment {
    let to = to.min(bytes.len());
    let (event, in_use_bytes) =
        bytes[from.min(to)..to]
            .iter()
            .enumerate()
            .fold(
                (from, 0),
                |best, (i, &b)| {
                    if b > best.1 {
                        (from + i, b)
                    } else {
                        best
                    }
                },
            );
    let at = step_start + event as u64;
    let mut by_site: BTreeMap<&Site, (u64, u64)> = BTreeMap::new();
    for (b, s) in blocks.iter().zip(sites).filter(|(b, _)| b.live_at(at)) {
        let e = by_site.entry(s).or_default();
        e.0 += b.bytes;
        e.1 += 1;
    }
    let mut sites: Vec<SiteBytes> = by_site
        .into_iter()
        .map(|(site, (bytes, blocks))| SiteBytes {
            site: site.clone(),
            bytes,
            blocks,
        })
        .collect();
    sites.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.site.cmp(&b.site)));
    let traced: u64 = sites.iter().map(|s| s.bytes).sum();
    Moment {
        event: event as u64,
        in_use_bytes,
        sites,
        untraced_bytes: in_use_bytes.saturating_sub(traced),
    }
}

/// The largest blocks live at event `at`, with their lives counted from the step's start.
fn largest(blocks: &[Block], sites: &[Site], at: u64, step_start: u64) -> Vec<Span> {
    let mut live: Vec<(&Block, &Site)> = blocks
        .iter()
        .zip(sites)
        .filter(|(b, _)| b.live_at(at))
        .collect();
    live.sort_by(|a, b| b.0.bytes.cmp(&a.0.bytes).then(a.0.made.cmp(&b.0.made)));
    let rel = |e: u64| e as i64 - step_start as i64;
    live.into_iter()
        .take(Report::SPANS)
        .map(|(b, s)| Span {
            site: s.clone(),
            bytes: b.bytes,
            made_event: rel(b.made),
            freed_event: b.freed.map(rel),
        })
        .collect()
}

/// Each block's frames as function names, innermost first (inlined frames included where the
/// binary has line tables), each address resolved once.
fn symbolise(blocks: &[Block]) -> Vec<Vec<String>> {
    let mut cache: HashMap<usize, Vec<String>> = HashMap::new();
    blocks
        .iter()
        .map(|b| {
            b.frames
                .iter()
                .flat_map(|&ip| {
                    cache
                        .entry(ip)
                        .or_insert_with(|| {
                            let mut names = Vec::new();
                            backtrace::resolve(ip as *mut std::ffi::c_void, |s| {
                                if let Some(n) = s.name() {
                                    names.push(format!("{n:#}"));
                                }
                            });
                            names
                        })
                        .clone()
                })
                .collect()
        })
        .collect()
}

/// Crates whose frames are machinery, not the code a reader wrote or named: the standard
/// library and the crates it is made of, and (by prefix) every crate of Burn and CubeCL but
/// the `nn` modules.
const MACHINERY: [&str; 11] = [
    "std",
    "core",
    "alloc",
    "backtrace",
    "rayon",
    "rayon_core",
    "bytemuck",
    "hashbrown",
    "main",
    "dyn_stack",
    "pulp",
];

/// Frames of the workbench's own driver (its set-up, steps, timers and points), which wraps
/// every model alike.
const DRIVER: [&str; 7] = [
    "::Touch as ",
    "harness::train",
    "harness::paired",
    "harness::timing",
    "harness::backend",
    "experiments::techniques",
    "OnBackend",
];

/// Where a block of `frames` (innermost first) was made, from the names on its stack.
pub fn site_of(frames: &[String], made_in: String) -> Site {
    let op = frames.iter().find_map(|f| op_of(f)).unwrap_or_default();
    let code = if let Some(opt) = frames.iter().find_map(|f| optimizer_of(f)) {
        opt
    } else if frames
        .iter()
        .any(|f| f.contains("burn_autodiff::ops::backward::Backward<"))
    {
        "backward".to_string()
    } else {
        model_code(frames)
    };
    let drawn = frames.iter().any(|f| f.contains("module::initializer"));
    let (code, op) = match (drawn, code.as_str()) {
        // Drawn outside the model's own code (a visitor reading every parameter once).
        (true, "elsewhere") => ("parameters".to_string(), "weights drawn".to_string()),
        (true, _) => (code, "weights drawn".to_string()),
        _ => (code, op),
    };
    Site { code, op, made_in }
}

/// The innermost frame of the model's code (Burn's `nn` modules and any crate that is not
/// machinery), with the frame that called it where it is one of Burn's modules
/// (`Block::forward › Linear::forward`: which of the model's layers).
fn model_code(frames: &[String]) -> String {
    let mut names: Vec<String> = Vec::new();
    for f in frames.iter().filter(|f| is_model_code(f)) {
        let name = last_segments(&display_name(f), 2);
        if names.last() != Some(&name) {
            names.push(name);
        }
        if names.len() == 2 || !is_module(f) {
            break;
        }
    }
    names.reverse();
    if names.is_empty() {
        "elsewhere".into()
    } else {
        names.join(" › ")
    }
}

/// Whether a frame is one of Burn's `nn` modules (`Linear`, `MultiHeadAttention`).
fn is_module(f: &str) -> bool {
    f.trim_start_matches('<').starts_with("burn_nn::modules")
}

fn crate_of(frame: &str) -> &str {
    frame
        .trim_start_matches('<')
        .split("::")
        .next()
        .unwrap_or("")
}

/// Whether a frame is the model's code. A name without a path (`alloc_impl_runtime`,
/// `try_allocate_in<alloc::alloc::Global>`) is a function inlined into a crate built with line
/// tables only (`debug = "line-tables-only"`), whose crate the binary does not say: never the
/// model's code.
fn is_model_code(f: &str) -> bool {
    let krate = crate_of(f);
    is_module(f)
        || !(!has_path(f)
            || MACHINERY.contains(&krate)
            || krate.starts_with("burn")
            || krate.starts_with("cubecl")
            || krate.starts_with("gemm")
            || krate.starts_with('_')
            || krate.contains(' ')
            || DRIVER.iter().any(|d| f.contains(d)))
}

/// Whether a frame's name says its path (`a::b::f`, `<a::B as c::D>::f`), type parameters
/// aside.
fn has_path(f: &str) -> bool {
    f.starts_with('<') || f.split('<').next().is_some_and(|name| name.contains("::"))
}

/// The tensor operation a frame is (`matmul`, from `burn_tensor`'s API), or the backward
/// node it runs (`Matmul`, from an `impl Backward for Matmul`).
fn op_of(frame: &str) -> Option<String> {
    if frame.contains(" as burn_autodiff::ops::backward::Backward<") {
        let node = frame.split(" as ").next()?.trim_start_matches('<');
        return Some(last_segments(&strip_generics(node), 1));
    }
    let api = frame.strip_prefix("burn_tensor::tensor::")?;
    Some(last_segments(&strip_generics(api), 1))
}

/// The optimizer a frame runs (`Adam`), from `burn_optim`'s optimizers.
fn optimizer_of(frame: &str) -> Option<String> {
    if crate_of(frame) != "burn_optim" {
        return None;
    }
    let kind = [
        ("optim::adamw::", "AdamW"),
        ("optim::adam::", "Adam"),
        ("optim::sgd::", "SGD"),
        ("optim::momentum::", "SGD momentum"),
    ]
    .iter()
    .find(|(path, _)| frame.contains(path))
    .map_or("optimizer", |(_, name)| name);
    Some(kind.to_string())
}

/// A frame as a reader names it: `<a::B<T> as c::D>::e` as `a::B::e` (the type, not the
/// trait), type parameters left out.
fn display_name(frame: &str) -> String {
    if let (Some(rest), Some(at)) = (frame.strip_prefix('<'), frame.find(" as ")) {
        let ty = strip_generics(&rest[..at - 1]);
        let method = frame.rsplit(">::").next().unwrap_or("");
        return format!("{ty}::{}", strip_generics(method));
    }
    strip_generics(frame)
}

/// `a::B<T>::c<U>` as `a::B::c`: the type parameters a reader does not need.
fn strip_generics(name: &str) -> String {
    let mut depth = 0usize;
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// The last `n` `::` segments of a path (`Linear::forward`), closures left out.
fn last_segments(path: &str, n: usize) -> String {
    let parts: Vec<&str> = path
        .split("::")
        .filter(|p| !p.is_empty() && !p.starts_with('{'))
        .collect();
    parts[parts.len().saturating_sub(n)..].join("::")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(frames: &[&str]) -> Vec<String> {
        frames.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_forward_block_is_named_by_its_module_and_operation() {
        let site = site_of(
            &names(&[
                "alloc::raw_vec::RawVec<T,A>::with_capacity",
                // Inlined into a crate built with line tables only: no path, not the model's.
                "alloc_impl_runtime",
                "try_allocate_in<alloc::alloc::Global>",
                "burn_flex::ops::matmul::matmul",
                "burn_tensor::tensor::api::base::Tensor<B,_,K>::matmul",
                "burn_nn::modules::linear::Linear<B>::forward",
                "my_model::Net<B>::forward",
            ]),
            "forward".into(),
        );
        assert_eq!(site.code, "Net::forward › Linear::forward");
        assert_eq!(site.op, "matmul");
        assert_eq!(
            site.label(),
            "Net::forward › Linear::forward · matmul (forward)"
        );
    }

    #[test]
    fn backward_and_optimizer_blocks_are_named_by_what_made_them() {
        let backward = site_of(
            &names(&[
                "burn_flex::ops::matmul::matmul",
                "<burn_autodiff::ops::tensor::float_matmul::Matmul as burn_autodiff::ops::backward::Backward<B,2>>::backward",
                "burn_autodiff::runtime::server::AutodiffServer::backward",
            ]),
            "backward".into(),
        );
        assert_eq!(
            (backward.code.as_str(), backward.op.as_str()),
            ("backward", "Matmul")
        );
        let adam = site_of(
            &names(&["burn_optim::optim::adam::AdaptiveMomentum::transform"]),
            "optimizer".into(),
        );
        assert_eq!(adam.code, "Adam");
    }
}
