//! The cards every "fits" answer is about, each defined once, by the memory its driver reports.
//!
//! Question: how much memory does a "24 GB" card have? Method: the total `nvidia-smi` prints
//! for the card (`memory.total`, in MiB), as it appears in public logs of each card; the H200's
//! beside the total CUDA reported on the H200 this project measured on. Answer: [`CARDS`]; the
//! landing page, What fits, its calculator and `workbench estimate` all read these bytes, and
//! print them in one unit (GiB).

use serde::Serialize;

/// Bytes in a mebibyte, the unit `nvidia-smi` reports memory in.
pub const MIB: f64 = 1024.0 * 1024.0;

/// A card, by the memory its driver reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Card {
    /// Short id (`24gb`), for the command line and anchors.
    pub id: &'static str,
    /// The class it is sold as (`24 GB`).
    pub class: &'static str,
    /// The cards of that class whose figure this is.
    pub models: &'static str,
    /// Memory as the driver reports it, in MiB (`nvidia-smi`'s `memory.total`).
    pub reported_mib: u64,
}

impl Card {
    /// The card's memory in bytes.
    pub fn bytes(&self) -> f64 {
        self.reported_mib as f64 * MIB
    }
}

const fn card(id: &'static str, class: &'static str, models: &'static str, mib: u64) -> Card {
    Card {
        id,
        class,
        models,
        reported_mib: mib,
    }
}

// Each total is `nvidia-smi`'s `memory.total` as printed in public logs of the card (where the
// cards of one class differ, the smaller): RTX 4060 in many issue logs; RTX 3060
// (geerlingguy/raspberry-pi-pcie-devices#790); RTX 4080 and RTX A4000; RTX 4090; RTX 5090
// (noonghunna/club-3090#617); A100 40GB SXM4 and PCIe; RTX A6000; H100 80GB HBM3
// (NVIDIA/nccl#1264; an A100 80GB reports 81,920); H100 NVL
// (NVIDIA/gpu-admin-tools#4); RTX PRO 6000 Blackwell; H200.
const GB8: Card = card("8gb", "8 GB", "RTX 4060, RTX 4060 Ti 8GB", 8_188);
const GB12: Card = card("12gb", "12 GB", "RTX 3060 12GB", 12_288);
const GB16: Card = card("16gb", "16 GB", "RTX 4080, RTX A4000", 16_376);
const GB24: Card = card("24gb", "24 GB", "RTX 4090, RTX 3090", 24_564);
const GB32: Card = card("32gb", "32 GB", "RTX 5090", 32_607);
const GB40: Card = card("40gb", "40 GB", "A100 40GB", 40_960);
const GB48: Card = card("48gb", "48 GB", "RTX A6000, RTX 6000 Ada", 49_140);
const GB80: Card = card("80gb", "80 GB", "H100 80GB, A100 80GB", 81_559);
const GB94: Card = card("94gb", "94 GB", "H100 NVL", 95_830);
const GB96: Card = card("96gb", "96 GB", "RTX PRO 6000 Blackwell", 97_887);
const GB141: Card = card("141gb", "141 GB", "H200", 143_771);

/// Every card the guide names, smallest first: a size given as printed on the box (`12GB`) is
/// read as its card here ([`on_the_box`]).
pub const ALL: [Card; 11] = [
    GB8, GB12, GB16, GB24, GB32, GB40, GB48, GB80, GB94, GB96, GB141,
];

/// The cards of the training tables, smallest first.
pub const CARDS: [Card; 5] = [GB24, GB48, GB80, GB96, GB141];

/// A 12 GB consumer card, for the inference question (a 7B model on a smaller card): not in
/// the training tables.
pub const SMALL: Card = GB12;

/// The consumer card most out-of-memory reports come from: the landing page's order is at
/// its out-of-memory point.
pub const CONSUMER: Card = GB24;

/// The card of id `id`.
pub fn card_of(id: &str) -> Option<Card> {
    ALL.into_iter().find(|c| c.id == id)
}

/// The card whose box says `text` (`12GB`, `12 GB`, `12gb`): the size is sold in GB and the
/// card holds what its driver reports, not 12e9 bytes. `None` for any other text (`12GiB`,
/// `12e9`, `13GB`), which the caller takes as written.
pub fn on_the_box(text: &str) -> Option<Card> {
    let t = text.trim().to_ascii_lowercase();
    let number = t.strip_suffix("gb")?.trim();
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    card_of(&format!("{}gb", number.trim_start_matches('0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_24_gb_card_is_its_driver_s_24_564_mib() {
        assert_eq!(CONSUMER.bytes(), 24_564.0 * 1024.0 * 1024.0);
        assert!(CONSUMER.bytes() < 24.0 * 1024.0 * 1024.0 * 1024.0);
        assert!(CONSUMER.bytes() > 24e9);
        assert_eq!(card_of("141gb").map(|c| c.reported_mib), Some(143_771));
        let mut previous = 0;
        for c in ALL {
            assert!(c.reported_mib > previous);
            previous = c.reported_mib;
        }
        for c in CARDS {
            assert_eq!(card_of(c.id), Some(c));
        }
    }

    #[test]
    fn a_size_on_the_box_is_its_card_and_any_other_is_not() {
        assert_eq!(on_the_box("12GB"), Some(SMALL));
        assert_eq!(on_the_box(" 24 gb"), Some(CONSUMER));
        assert_eq!(on_the_box("141GB").map(|c| c.reported_mib), Some(143_771));
        for other in ["13GB", "12GiB", "12e9", "12.5GB", "GB", "", "-12GB"] {
            assert_eq!(on_the_box(other), None, "{other}");
        }
    }
}
