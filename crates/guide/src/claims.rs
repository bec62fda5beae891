//! The keys a page tags its claims with (`data-claim` attributes): one key names one figure or
//! verdict, whichever page prints it.
//!
//! Question: do two pages ever print two values for one claim (a fix's verdict, a card's
//! size, the largest batch of a model on a card)? Method: every page that prints such a claim
//! tags the element with its key; a test over the rendered site collects every tag and fails
//! where one key carries two values. The keys are built here alone, so that two pages cannot
//! spell one claim two ways.

use results::{DeviceKind, Fix};

/// A fix's verdict on one device.
pub fn verdict(fix: Fix, device: DeviceKind) -> String {
    format!("verdict {} {}", device.name(), fix.id())
}

/// A card's memory as its driver reports it; `class`: the class it is sold as (`24 GB`).
pub fn card(class: &str) -> String {
    format!("card {class}")
}

/// The largest batch of a preset trained one way (a "What fits" way, `f32, Adam`) on a card.
pub fn largest_batch(card: &str, preset: &str, way: &str) -> String {
    format!("largest batch {card} {preset} {way}")
}
