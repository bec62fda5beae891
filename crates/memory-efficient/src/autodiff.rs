//! The two ops on Burn's autodiff backend: one graph node each, whose backward recomputes the
//! chunks instead of keeping them.
//!
//! The node keeps its inputs through the checkpointer (as Burn's own matmul does, so balanced
//! checkpointing may recompute them), and only a small tensor of its own: each query row's or
//! token's logsumexp. Every intermediate of a chunk is freed before the next chunk starts.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::tensor::{BoolTensor, FloatTensor, IntTensor};
use burn::backend::Backend;

use crate::cross_entropy::Head;
use crate::{attention, cross_entropy, AttentionMask, AttentionOptions, MemoryEfficientOps};

#[derive(Debug)]
struct ChunkedAttention;

impl<B: Backend> Backward<B, 3> for ChunkedAttention {
    /// The inputs' nodes, the mask, the logsumexp and the options.
    type State = (
        [NodeId; 3],
        Option<BoolTensor<B>>,
        FloatTensor<B>,
        AttentionOptions,
    );

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, c: &mut Checkpointer) {
        let ([q, k, v], mask, logsumexp, options) = ops.state;
        let [q, k, v] = [q, k, v].map(|id| c.retrieve_node_output::<FloatTensor<B>>(id));
        let grad_output = grads.consume::<B>(&ops.node);
        let wanted = ops.parents.each_ref().map(Option::is_some);
        let g = attention::backward::<B>(q, k, v, mask, logsumexp, grad_output, &options, wanted);
        let [pq, pk, pv] = ops.parents;
        for (parent, grad) in [(pq, g.query), (pk, g.key), (pv, g.value)] {
            if let (Some(node), Some(grad)) = (parent, grad) {
                grads.register::<B>(node.id, grad);
            }
        }
    }
}

/// The linear cross-entropy's node: `N` inputs, hidden, weight and (`N = 3`) bias.
#[derive(Debug)]
struct LinearCrossEntropy<const N: usize>;

impl<B: Backend, const N: usize> Backward<B, N> for LinearCrossEntropy<N> {
    /// The inputs' nodes, the targets, the logsumexp, the chunk, and a frozen head's
    /// gradients computed with the loss.
    type State = (
        [NodeId; N],
        IntTensor<B>,
        FloatTensor<B>,
        usize,
        Option<cross_entropy::Grads<B>>,
    );

    fn backward(self, ops: Ops<Self::State, N>, grads: &mut Gradients, c: &mut Checkpointer) {
        let (ids, targets, logsumexp, chunk, eager) = ops.state;
        let grad_loss = grads.consume::<B>(&ops.node);
        let g = match eager {
            Some(eager) => eager.scaled(grad_loss),
            None => {
                let mut wanted = [false; 3];
                for (w, p) in wanted.iter_mut().zip(&ops.parents) {
                    *w = p.is_some();
                }
                let inputs = ids.map(|id| c.retrieve_node_output::<FloatTensor<B>>(id));
                let hidden = inputs[0].clone();
                let head = Head {
                    weight: inputs[1].clone(),
                    bias: inputs.get(2).cloned(),
                };
                cross_entropy::backward::<B>(
                    hidden, head, targets, logsumexp, grad_loss, chunk, wanted,
                )
            }
        };
        for (parent, grad) in ops.parents.into_iter().zip([g.hidden, g.weight, g.bias]) {
            if let (Some(node), Some(grad)) = (parent, grad) {
                grads.register::<B>(node.id, grad);
            }
        }
    }
}

/// The loss's node over `inputs` (hidden, weight and maybe bias), or the loss alone where no
/// input takes a gradient.
fn linear_cross_entropy<B: Backend, C: CheckpointStrategy, const N: usize>(
    inputs: [FloatTensor<Autodiff<B, C>>; N],
    targets: IntTensor<B>,
    chunk: usize,
) -> FloatTensor<Autodiff<B, C>> {
    let guards = inputs.each_ref().map(|t| t.node());
    let mut wanted = [false; 3];
    inputs
        .iter()
        .enumerate()
        .for_each(|(i, t)| wanted[i] = t.is_tracked());
    let prep = LinearCrossEntropy::<N>
        .prepare::<C>(guards)
        .compute_bound()
        .stateful();
    let (ids, prep) = match prep {
        OpsKind::Tracked(mut prep) => {
            let ids = inputs.each_ref().map(|t| prep.checkpoint(t));
            (Some(ids), Ok(prep))
        }
        OpsKind::UnTracked(prep) => (None, Err(prep)),
    };
    let mut primitives = inputs.map(|t| t.into_primitive()).into_iter();
    let hidden = primitives.next().expect("hidden");
    let head = Head {
        weight: primitives.next().expect("weight"),
        bias: primitives.next(),
    };
    let eager = ids.is_some().then_some(wanted);
    let forward = cross_entropy::forward::<B>(hidden, head, targets.clone(), chunk, eager);
    match (prep, ids) {
        (Ok(prep), Some(ids)) => {
            let state = (ids, targets, forward.logsumexp, chunk, forward.eager);
            prep.finish(state, forward.loss)
        }
        (Err(prep), _) => prep.finish(forward.loss),
        (Ok(_), None) => unreachable!("a tracked node has its inputs' ids"),
    }
}

impl<B: Backend + MemoryEfficientOps, C: CheckpointStrategy> MemoryEfficientOps for Autodiff<B, C> {
    fn chunked_attention(
        query: FloatTensor<Self>,
        key: FloatTensor<Self>,
        value: FloatTensor<Self>,
        mask: AttentionMask<Self>,
        options: AttentionOptions,
    ) -> FloatTensor<Self> {
        let mask = mask.into_option();
        let guards = [query.node(), key.node(), value.node()];
        match ChunkedAttention
            .prepare::<C>(guards)
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let ids = [&query, &key, &value].map(|t| prep.checkpoint(t));
                let forward = attention::forward::<B>(
                    query.into_primitive(),
                    key.into_primitive(),
                    value.into_primitive(),
                    mask.clone(),
                    &options,
                );
                prep.finish((ids, mask, forward.logsumexp, options), forward.output)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::chunked_attention(
                query.into_primitive(),
                key.into_primitive(),
                value.into_primitive(),
                mask.into(),
                options,
            )),
        }
    }

    fn linear_cross_entropy(
        hidden: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        targets: IntTensor<Self>,
        chunk: usize,
    ) -> FloatTensor<Self> {
        linear_cross_entropy::<B, C, 2>([hidden, weight], targets, chunk)
    }

    fn linear_cross_entropy_with_bias(
        hidden: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        targets: IntTensor<Self>,
        chunk: usize,
    ) -> FloatTensor<Self> {
        linear_cross_entropy::<B, C, 3>([hidden, weight, bias], targets, chunk)
    }
}
