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

/// The cards of the tables, smallest first.
pub const CARDS: [Card; 5] = [
    Card {
        id: "24gb",
        class: "24 GB",
        models: "RTX 4090, RTX 3090",
        reported_mib: 24_564,
    },
    Card {
        id: "48gb",
        class: "48 GB",
        models: "RTX A6000, RTX 6000 Ada",
        reported_mib: 49_140,
    },
    Card {
        id: "80gb",
        class: "80 GB",
        models: "A100 80GB",
        reported_mib: 81_920,
    },
    Card {
        id: "96gb",
        class: "96 GB",
        models: "RTX PRO 6000 Blackwell",
        reported_mib: 97_887,
    },
    Card {
        id: "141gb",
        class: "141 GB",
        models: "H200",
        reported_mib: 143_771,
    },
];

/// A 12 GB consumer card, for the inference question (a 7B model on a smaller card): not in
/// the training tables.
pub const SMALL: Card = Card {
    id: "12gb",
    class: "12 GB",
    models: "RTX 3060 12GB",
    reported_mib: 12_288,
};

/// The consumer card most out-of-memory reports come from: the landing page's order is at
/// its out-of-memory point.
pub const CONSUMER: Card = CARDS[0];

/// The card of id `id`.
pub fn card(id: &str) -> Option<Card> {
    CARDS.into_iter().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_24_gb_card_is_its_driver_s_24_564_mib() {
        assert_eq!(CONSUMER.bytes(), 24_564.0 * 1024.0 * 1024.0);
        assert!(CONSUMER.bytes() < 24.0 * 1024.0 * 1024.0 * 1024.0);
        assert!(CONSUMER.bytes() > 24e9);
        assert_eq!(card("141gb").map(|c| c.reported_mib), Some(143_771));
        let mut previous = 0;
        for c in CARDS {
            assert!(c.reported_mib > previous);
            previous = c.reported_mib;
        }
    }
}
