r"""A GPT-2 transformer for in-context linear regression, fed the token matrix of arXiv:2511.01292 (Demir & Doğan).

The paper runs a GPT-2 architecture on its regression tasks to show that the one-layer trends carry over (§5,
footnote; docs/papers/temperature.md §5.2). Its size is not given; this is ``transformers.GPT2Model`` between a
linear read-in and read-out, as in Garg et al. (2022), but with the paper's tokens (Eq. 3): one column
:math:`\mathbf z_i=(\mathbf x_i, y_i)` per context pair and :math:`\mathbf z_l=(\mathbf x_l, 0)` for the query,
so a single attention layer could already implement the paper's predictor. Attention temperature is applied from
outside by :func:`iclab.hf.with_temperature` on :attr:`GPT2Regressor.backbone`.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["GPT2Regressor"]


class GPT2Regressor(nn.Module):
    r"""``GPT2Model`` between a read-in :math:`\mathbb R^{d+1}\to\mathbb R^{\rm width}` and a read-out
    :math:`\mathbb R^{\rm width}\to\mathbb R`.

    ``forward(batch) -> (B,)`` reads the prediction of :math:`y_l` at the query token of
    :func:`iclab.data.token_matrix` (query label slot 0). GPT-2's causal mask lets the query, the last token, see
    every token, as in the paper. Dropout is off.

    Args:
        d: input dimension.
        n_positions: tokens per prompt, ``l = n + 1``.
        n_embd: GPT-2 width (head dimension ``n_embd / n_head``).
        n_layer: GPT-2 depth.
        n_head: GPT-2 heads per layer.
    """

    def __init__(self, d: int, n_positions: int, n_embd: int, n_layer: int, n_head: int):
        super().__init__()
        from transformers import GPT2Config, GPT2Model

        cfg = GPT2Config(
            n_positions=n_positions,
            n_embd=n_embd,
            n_layer=n_layer,
            n_head=n_head,
            vocab_size=1,
            bos_token_id=None,
            eos_token_id=None,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            use_cache=False,
        )
        self.read_in = nn.Linear(d + 1, n_embd)
        self.backbone = GPT2Model(cfg)
        self.read_out = nn.Linear(n_embd, 1)

    def forward(self, batch) -> torch.Tensor:
        from iclab.data import token_matrix

        z = token_matrix(batch).transpose(1, 2)  # (B, l, d+1), query label slot 0
        h = self.backbone(inputs_embeds=self.read_in(z)).last_hidden_state  # (B, l, width)
        return self.read_out(h[:, -1]).squeeze(-1)  # (B,)
