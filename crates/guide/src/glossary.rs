//! Every term the guide uses, defined once, and linked at its first use on each page.
//!
//! Question: a reader with an out-of-memory error meets "the fixed part", "a bracket", "the A/A
//! control": where is each defined? Method: one list of terms ([`TERMS`]), each with the
//! phrases that name it; the glossary page prints them, and every other page, once rendered,
//! has the first phrase of each term in its main text (outside links, code and headings)
//! turned into a link to the term's entry. Answer: `glossary.html`, and a link at each term's
//! first use.

use serde::Serialize;

/// The glossary page's file.
pub const HREF: &str = "glossary.html";

/// A term: its anchor, its name, the phrases that name it in the pages' text, and its
/// definition.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Term {
    /// Anchor on the glossary page.
    pub id: &'static str,
    /// The term as the glossary names it.
    pub term: &'static str,
    /// Phrases that name it in running text, matched as whole words, the first letter in
    /// either case.
    #[serde(skip)]
    pub phrases: &'static [&'static str],
    /// Its definition.
    pub definition: &'static str,
}

/// Every term, in the order the glossary lists them.
pub const TERMS: &[Term] = &[
    Term {
        id: "peak",
        term: "peak",
        phrases: &["peak"],
        definition: "The most bytes live tensors held at one moment of a step or phase (PyTorch's \
                     max_memory_allocated). On the CPU every allocation is counted, so the peak is \
                     exact; on wgpu and CUDA it is a bracket.",
    },
    Term {
        id: "reserved",
        term: "bytes reserved",
        phrases: &["bytes reserved", "reserved"],
        definition: "What a device's memory pool holds, in use or cached for reuse (PyTorch's \
                     memory_reserved). The CPU backend has no pool.",
    },
    Term {
        id: "fixed-part",
        term: "fixed part",
        phrases: &["fixed part"],
        definition: "Weights, gradients and optimizer state (and mixed precision's 16-bit weight \
                     copies): bytes per parameter, whatever the batch. Adam in f32 takes 16 bytes \
                     a parameter: 4 of weights, 4 of gradients, 8 of state. No fix that saves \
                     activations lowers it.",
    },
    Term {
        id: "activations",
        term: "activations",
        phrases: &["activations"],
        definition: "What the forward pass keeps for backward: it grows with the batch and the \
                     sequence, and is what batch size, accumulation, checkpointing and mixed \
                     precision save.",
    },
    Term {
        id: "peak-parts",
        term: "parts of a peak",
        phrases: &["parts"],
        definition: "A measured peak split into what was live before the step (weights, \
                     optimizer state, inputs), what the phases before the peak's left alive into \
                     it (on a training step, the activations), and what the peak's phase added \
                     (backward's gradients and transients, less the activations it had freed). \
                     They add up to the peak.",
    },
    Term {
        id: "transient",
        term: "transient",
        phrases: &["transient"],
        definition: "Bytes a step holds for a moment and frees: the loss's logits-sized buffers, \
                     backward's per-sequence weight gradients before they are summed.",
    },
    Term {
        id: "bracket",
        term: "bracket",
        phrases: &["bracket"],
        definition: "On wgpu and CUDA, where CubeCL keeps no high-water mark, a phase's peak is \
                     given as two bounds: the highest reading seen (at the phase's boundaries \
                     and by a sampling thread) and the pool's reserved bytes right after the \
                     phase, the pool emptied before it. A prediction between them has no error.",
    },
    Term {
        id: "estimator",
        term: "estimator",
        phrases: &["estimator"],
        definition: "The byte rules of `workbench estimate` (and the What fits calculator): a \
                     step's weights, gradients, optimizer state, activations, transients and \
                     inputs from the model's shape, the batch and the techniques. Every page sets \
                     its measured steps beside them and states the error.",
    },
    Term {
        id: "safety-margin",
        term: "safety margin",
        phrases: &["safety margin"],
        definition: "The share of a card left free for the estimator's error before any \"fits\" \
                     answer (10% in f32, 15% in mixed bf16, 25% in bf16), after the CUDA context.",
    },
    Term {
        id: "cuda-context",
        term: "CUDA context",
        phrases: &["CUDA context"],
        definition: "Memory a GPU loses before the first tensor: 1,343 MB read after CUDA's \
                     initialisation on a V100 in the Hugging Face single-GPU guide. Every \"fits\" \
                     answer takes it off the card.",
    },
    Term {
        id: "regime",
        term: "regime",
        phrases: &["regime"],
        definition: "The share of a step's peak that activations are. At a card's out-of-memory \
                     point activations are most of it; on a small batch the fixed part is. A \
                     rule is checked in the regime it is used in: the landing page's order \
                     against a step whose activations are at least three quarters of its peak.",
    },
    Term {
        id: "contradicted",
        term: "contradicted rule",
        phrases: &["contradicted", "contradicts"],
        definition: "A rule whose predicted saving a measurement in the same regime does not \
                     show: less than half of it was measured. The row says so, with the backend, \
                     and ranks after the rows no measurement contradicts.",
    },
    Term {
        id: "check",
        term: "check",
        phrases: &["check"],
        definition: "A comparison that can fail, proving a technique computes the same thing: \
                     the same gradients as the plain step, a loss that falls, a loss curve within \
                     the yardstick, outputs within a tolerance. A fix fails when any check of it \
                     fails, on whichever page it was made.",
    },
    Term {
        id: "yardstick",
        term: "yardstick",
        phrases: &["yardstick"],
        definition: "How far f32's loss curve drifts from itself when only the initial weights \
                     change: a precision whose curve drifts further has changed the result.",
    },
    Term {
        id: "paired",
        term: "timed in pairs",
        phrases: &["timed in pairs", "paired"],
        definition: "A time comparison measured as one: the baseline, the technique and the \
                     baseline again take turns in fresh processes, and the cost is a ratio with \
                     its 95% interval over those builds.",
    },
    Term {
        id: "aa-control",
        term: "A/A control",
        phrases: &["A/A control"],
        definition: "The baseline timed against a second copy of itself in the same builds: its \
                     interval should hold 0, and its width is the smallest difference the \
                     comparison can resolve.",
    },
    Term {
        id: "not-resolved",
        term: "not resolved",
        phrases: &["not resolved", "no difference resolved"],
        definition: "A time difference whose 95% interval holds 0: the machine's noise is larger \
                     than the difference, whose largest possible size is given.",
    },
    Term {
        id: "mixed-bf16",
        term: "mixed bf16",
        phrases: &["mixed bf16"],
        definition: "Mixed precision: weights, gradients and optimizer state in f32, the forward \
                     pass in bf16 from 16-bit copies of the weights.",
    },
    Term {
        id: "bf16-storage",
        term: "bf16 storage",
        phrases: &["bf16 storage"],
        definition: "Every tensor stored in bf16: weights, gradients, optimizer state and \
                     activations.",
    },
    Term {
        id: "checkpointing",
        term: "checkpointing",
        phrases: &["checkpointing"],
        definition: "Recomputing activations in backward instead of keeping them: Burn's \
                     balanced strategy, device.autodiff().gradient_checkpointing().",
    },
    Term {
        id: "memory-efficient-attention",
        term: "memory-efficient attention",
        phrases: &["memory-efficient attention"],
        definition: "Attention computed over chunks of query rows (burn-memory-efficient, this \
                     workspace's crate): the graph keeps the queries, keys, values and each \
                     row's logsumexp instead of the scores, and backward recomputes each \
                     chunk's scores (FlashAttention-2's backward). Its bytes grow with sequence \
                     x chunk, not sequence².",
    },
    Term {
        id: "chunked-loss",
        term: "chunked loss",
        phrases: &["chunked loss"],
        definition: "The head's matmul and the cross-entropy over chunks of tokens \
                     (burn-memory-efficient's linear_cross_entropy): the [tokens, vocabulary] \
                     logits never exist whole; under LoRA the hidden states' gradient is made \
                     with the loss, otherwise backward recomputes each chunk.",
    },
    Term {
        id: "accumulation",
        term: "accumulation",
        phrases: &["accumulation"],
        definition: "The batch split into micro-batches whose gradients are summed before one \
                     optimizer step: a micro-batch's activations, plus one more copy of the \
                     gradients.",
    },
    Term {
        id: "flex",
        term: "Flex",
        phrases: &["Flex"],
        definition: "Burn 0.22's CPU backend. Its bf16 and f16 matrix products work in f32 \
                     buffers of their own, so 16-bit activations cost it more than a GPU.",
    },
    Term {
        id: "cubecl",
        term: "CubeCL",
        phrases: &["CubeCL"],
        definition: "The runtime under Burn's wgpu and CUDA backends: a memory pool per stream, \
                     and a stream per thread.",
    },
    Term {
        id: "device-wide",
        term: "device-wide reading",
        phrases: &["every pool"],
        definition: "Bytes in use and reserved over every pool of the device (one per stream \
                     that worked on it; Burn 0.22's Device::memory_pool_usage()), with the \
                     driver's used memory on CUDA, where the usual reading sees only the \
                     calling thread's stream.",
    },
    Term {
        id: "software-driver",
        term: "software driver",
        phrases: &["software driver", "lavapipe"],
        definition: "Mesa's lavapipe: Vulkan on the CPU. Its memory figures are real, its times \
                     are the CPU's, so no time is compared on it.",
    },
];

/// Where the term `id` is defined.
pub fn href(id: &str) -> String {
    format!("{HREF}#{id}")
}

/// Elements whose text is never linked: links, code, headings, the page's own chrome.
const SKIPPED: [&str; 10] = [
    "a", "code", "pre", "script", "style", "svg", "h1", "h2", "summary", "th",
];

/// The position and length of the first whole-word use of `phrase` in `text`, its first letter
/// in either case.
fn find_phrase(text: &str, phrase: &str) -> Option<(usize, usize)> {
    let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() && c != '_');
    let rest: String = phrase.chars().skip(1).collect();
    let first = phrase.chars().next()?;
    let mut from = 0;
    while let Some(i) = text[from..].find(rest.as_str()).map(|i| i + from) {
        let start = text[..i].char_indices().next_back();
        if let Some((s, c)) = start {
            let before = text[..s].chars().next_back();
            let after = text[i + rest.len()..].chars().next();
            if c.eq_ignore_ascii_case(&first) && boundary(before) && boundary(after) {
                return Some((s, i + rest.len() - s));
            }
        }
        from = i + rest.len().max(1);
    }
    None
}

/// `main`'s HTML (the page's `<main>` content) with the first use of each term in its text
/// linked to the glossary; the glossary page itself is left as it is.
pub fn link_first_uses(html: &str) -> String {
    let mut linked: Vec<&str> = Vec::new();
    let mut out = String::with_capacity(html.len() + 1024);
    let mut skip_depth: Vec<&str> = Vec::new();
    let mut rest = html;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            out.push_str(&link_text(rest, &skip_depth, &mut linked));
            break;
        };
        out.push_str(&link_text(&rest[..lt], &skip_depth, &mut linked));
        let gt = rest[lt..].find('>').map_or(rest.len(), |g| lt + g + 1);
        let tag = &rest[lt..gt];
        track(tag, &mut skip_depth);
        out.push_str(tag);
        rest = &rest[gt..];
    }
    out
}

/// Keeps the stack of skipped elements the text is inside up to date with `tag`.
fn track(tag: &str, stack: &mut Vec<&str>) {
    let name: String = tag
        .trim_start_matches('<')
        .trim_start_matches('/')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let Some(skipped) = SKIPPED.iter().find(|s| **s == name) else {
        return;
    };
    if tag.starts_with("</") {
        if let Some(i) = stack.iter().rposition(|s| s == skipped) {
            stack.truncate(i);
        }
    } else if !tag.ends_with("/>") {
        stack.push(skipped);
    }
}

/// A run of text with the first use of every term not yet linked made a link, in the order
/// the terms appear, unless the text is inside a skipped element.
fn link_text(text: &str, skipped: &[&str], linked: &mut Vec<&'static str>) -> String {
    if !skipped.is_empty() || text.trim().is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        // The earliest use, in what is left, of a term not linked yet (the longer phrase where
        // two start together).
        let next = TERMS
            .iter()
            .filter(|t| !linked.contains(&t.id))
            .flat_map(|t| {
                t.phrases
                    .iter()
                    .filter_map(move |p| find_phrase(rest, p).map(|(s, l)| (s, l, t)))
            })
            .min_by_key(|(s, l, _)| (*s, std::cmp::Reverse(*l)));
        let Some((start, len, term)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..start]);
        out.push_str(&format!(
            "<a class=\"term\" href=\"{}\">{}</a>",
            href(term.id),
            &rest[start..start + len]
        ));
        linked.push(term.id);
        rest = &rest[start + len..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_term_is_linked_once_at_its_first_use_outside_code_and_links() {
        let html = "<p>The <code>fixed part</code> and the fixed part; the peak, the Peak.</p>\
                    <a href=\"x\">regime</a> <p>a regime</p>";
        let out = link_first_uses(html);
        assert_eq!(out.matches("glossary.html#fixed-part").count(), 1, "{out}");
        assert!(out.contains("<code>fixed part</code>"), "{out}");
        assert_eq!(out.matches("glossary.html#peak").count(), 1, "{out}");
        assert!(
            out.contains("<a href=\"x\">regime</a> <p>a <a class=\"term\""),
            "{out}"
        );
    }

    #[test]
    fn a_phrase_inside_a_word_is_not_a_use() {
        assert_eq!(find_phrase("peaks and a peak.", "peak"), Some((12, 4)));
        assert_eq!(find_phrase("unchecked", "check"), None);
        assert_eq!(find_phrase("Checkpointing", "checkpointing"), Some((0, 13)));
        let ids: Vec<&str> = TERMS.iter().map(|t| t.id).collect();
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "one entry per term");
    }
}
