//! What the forward pass keeps for backward: the plan's checkpointing, as Burn names it.

/// Which tensors the autodiff backend keeps for backward.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Checkpointing {
    /// `Device::autodiff()`: every tensor a backward step needs is kept from the forward pass.
    #[default]
    None,
    /// `Device::autodiff().gradient_checkpointing()` (Burn's balanced strategy): outputs of
    /// memory-bound ops are recomputed during backward from the nearest kept (compute-bound)
    /// ancestor instead of being kept.
    Balanced,
}
