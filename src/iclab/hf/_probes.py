r"""Score-moment probes for Hugging Face models: per layer and head, moments of the pre-softmax scores and the
attention entropy at chosen query positions — the inputs of the per-layer τ rules for arXiv:2511.01292's LLM
experiment (docs/papers/temperature.md §5.4) and the logit spread δ of arXiv:2410.01104 Lemma 2.1
(docs/papers/dispersion.md §3.2, §5.4).

For a probed query row with visible keys :math:`k = 1..n` and scores :math:`s_k = q^\top k_k\, s/\tau` (exactly the
logits the softmax sees) the probe accumulates running float64 sums over rows (no attention matrix is kept and
``output_attentions`` is not used): the pooled mean :math:`\bar s` and variance :math:`\mathrm{Var}(s)` over all
(row, key) pairs, the mean within-row variance, the spread :math:`\delta = \max_k s_k - \min_k s_k` (the quantity
that bounds sharpness, Lemma 2.1 of arXiv:2410.01104) and the entropy :math:`-\sum_k w_k \ln w_k` of the weights the
model actually uses (softmax, or the adaptive rule when it is on). It rides on the same ``AttentionInterface``
function as the temperature control, so it composes with any τ.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING, Iterator, Literal, Sequence

import numpy as np
import torch

from iclab.config import check_int
from iclab.errors import ConfigError
from iclab.hf._arguments import check_bool, check_device, check_text_list, check_tokenizer
from iclab.hf._backends import _scores, check_backend
from iclab.hf._prompt_length import check_prompts
from iclab.hf._tau_setting import AdaptiveTemperature, TauSetting, model_shape
from iclab.hf._temperature import _base_of, _find, _install, _uninstall

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers or pandas
    import pandas as pd
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = [
    "ScoreMoments",
    "ScoreProbe",
    "probe_attention",
    "probe_prompts",
    "tokenize_batch",
]

_SUMS = ("rows", "n", "s1", "s2", "row_var", "spread", "entropy")


@dataclasses.dataclass
class ScoreMoments:
    """Per-(layer, head) statistics of pre-softmax scores at the probed query rows; every array is ``(L, H)``.

    ``rows``: probed rows; ``n``: (row, key) pairs; ``mean``/``var``: pooled over all pairs; ``row_var``: mean
    within-row variance; ``spread``: mean δ = max − min; ``entropy``: mean attention entropy (nats).
    """

    rows: np.ndarray
    n: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    row_var: np.ndarray
    spread: np.ndarray
    entropy: np.ndarray
    layer_mean: np.ndarray  # (L,) pooled over heads
    layer_var: np.ndarray  # (L,)

    def rho(self) -> np.ndarray:
        """Per layer ρ_ℓ = Var(s)/mean(s), pooled over heads and rows (the Var/mean reading of the moment rule,
        docs/papers/temperature.md §5.4, ill posed where the mean is negative: §6.6); ``(L,)``."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.layer_var / self.layer_mean

    def layer_row_sd(self) -> np.ndarray:
        r"""Per layer the within-row standard deviation of the scores, :math:`\sqrt{\overline{\mathrm{Var}_k(s)}}`
        averaged over heads and rows; ``(L,)``. Shift-invariant, like the softmax itself
        (docs/papers/temperature.md §5.4)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.sqrt(np.average(self.row_var, axis=1, weights=np.maximum(self.rows, 1e-300)))

    def mean_entropy(self) -> float:
        """Attention entropy (nats) averaged over layers, heads and probed rows."""
        return float(np.average(self.entropy, weights=np.maximum(self.rows, 1)))

    def to_frame(self) -> pd.DataFrame:
        """Long pandas DataFrame: one row per (layer, head)."""
        import pandas as pd

        L, H = self.mean.shape
        layer, head = np.meshgrid(np.arange(L), np.arange(H), indexing="ij")
        cols = {k: getattr(self, k).ravel() for k in ("rows", "mean", "var", "row_var", "spread", "entropy")}
        return pd.DataFrame({"layer": layer.ravel(), "head": head.ravel(), **cols})


class ScoreProbe:
    """Running sums of score moments, fed by the iclab attention function; set ``positions`` before each forward.

    ``positions``: ``(B, P)`` long tensor of query positions (or an int / list of ints for every sample; negative
    counts from the end). ``key_start``: ignore keys before this position (e.g. 1 to skip a BOS attention sink).
    """

    def __init__(self, L: int, H: int, positions: int | Sequence[int] | torch.Tensor = -1, key_start: int = 0) -> None:
        check_int("key_start", key_start, 0)
        self.L, self.H, self.key_start = L, H, int(key_start)
        self.sums = {k: torch.zeros(L, H, dtype=torch.float64) for k in _SUMS}
        self.positions = positions

    @property
    def positions(self) -> int | Sequence[int] | torch.Tensor:
        """Query positions probed in the next forward: ``(B, P)`` long tensor, or ints for every sample."""
        return self._positions

    @positions.setter
    def positions(self, value: int | Sequence[int] | torch.Tensor) -> None:
        self._positions, self._rows_key = value, None

    def _rows(self, B: int, q: int, device) -> torch.Tensor:
        key = (B, q, device)
        if self._rows_key == key:  # validated for an earlier layer of this forward
            return self._rows_val
        self._rows_key, self._rows_val = key, self._check_rows(B, q, device)
        return self._rows_val

    def _check_rows(self, B: int, q: int, device) -> torch.Tensor:
        p = torch.as_tensor(self.positions, dtype=torch.long, device=device)
        p = p.view(1, -1).expand(B, -1) if p.ndim <= 1 else p  # (B, P)
        if p.shape[0] != B:
            raise ConfigError("positions", f"shape {tuple(p.shape)}", f"a ({B}, P) tensor or ints")
        p = torch.where(p < 0, p + q, p)
        if bool((p < 0).any()) or bool((p >= q).any()):
            raise ConfigError("positions", p.tolist(), f"query positions in [-{q}, {q})")
        return p

    @torch.no_grad()
    def observe(
        self,
        module: torch.nn.Module,
        layer: int,
        query: torch.Tensor,
        key: torch.Tensor,
        attention_mask: torch.Tensor | None,
        scaling: float | torch.Tensor,
        adaptive: AdaptiveTemperature | None,
        is_causal: bool | None,
    ) -> None:
        """Add the statistics of one attention call (layer ``layer``) at the probed rows: ``query (B, H, q, d)``,
        ``key (B, H_kv, k, d)``, ``scaling`` the effective logit scale (float or ``(H,)``, τ included), ``adaptive``
        the entropy rule when it is on (the weights' entropy is then that of the adaptive weights)."""
        from iclab.attention import normalise

        B, H, q, _ = query.shape
        rows = self._rows(B, q, query.device)
        s, vis = _scores(module, query, key, attention_mask, scaling, rows=rows, is_causal=is_causal)
        s = s.double()  # (B, H, P, k)
        vis = torch.broadcast_to(vis, s.shape).clone()
        vis[..., : self.key_start] = False
        if adaptive is not None:
            w = normalise("adaptive_softmax", s, vis, **adaptive.params())
        else:
            w = normalise("softmax", s, vis)
        cnt = vis.sum(-1).double()  # (B, H, P)
        ok = cnt > 0
        z = s.masked_fill(~vis, 0.0)
        s1 = z.sum(-1)
        s2 = (z * z).sum(-1)
        safe = cnt.clamp(min=1)
        row_var = s2 / safe - (s1 / safe) ** 2
        spread = s.masked_fill(~vis, -torch.inf).amax(-1) - s.masked_fill(~vis, torch.inf).amin(-1)
        ent = -(w * torch.log(torch.where(w > 0, w, torch.ones_like(w)))).sum(-1)
        S = self.sums
        if S["n"].device != s.device:  # running sums live on the model's device: no host sync per layer
            S = self.sums = {k: v.to(s.device) for k, v in S.items()}
        S["rows"][layer] += ok.sum((0, 2)).double()
        S["n"][layer] += cnt.sum((0, 2))
        S["s1"][layer] += s1.sum((0, 2))
        S["s2"][layer] += s2.sum((0, 2))
        S["row_var"][layer] += torch.where(ok, row_var, 0.0).sum((0, 2))
        S["spread"][layer] += torch.where(ok, spread, 0.0).sum((0, 2))
        S["entropy"][layer] += torch.where(ok, ent, 0.0).sum((0, 2))

    def result(self) -> ScoreMoments:
        """The moments of everything observed so far."""
        S = {k: v.cpu().numpy() for k, v in self.sums.items()}
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = S["s1"] / S["n"]
            var = S["s2"] / S["n"] - mean**2
            per_row = {k: S[k] / S["rows"] for k in ("row_var", "spread", "entropy")}
            ln = S["n"].sum(1)
            lm = S["s1"].sum(1) / ln
            lv = S["s2"].sum(1) / ln - lm**2
        return ScoreMoments(
            rows=S["rows"].copy(), n=S["n"].copy(), mean=mean, var=var, layer_mean=lm, layer_var=lv, **per_row
        )


@contextlib.contextmanager
def probe_attention(
    model: PreTrainedModel, positions: int | Sequence[int] | torch.Tensor = -1, key_start: int = 0
) -> Iterator[ScoreProbe]:
    """Attach a :class:`ScoreProbe` to ``model`` (through the iclab attention function) for the ``with`` block.

    Arguments: ``model`` a Hugging Face model (:func:`model_shape`) whose attention backend takes probes (``sdpa`` or
    ``eager``; else UnsupportedModelError); ``key_start`` an integer >= 0; ``positions`` an int, a list of ints or a
    ``(B, P)`` integer tensor of query positions (negative: from the end), checked at each forward: positions in
    ``[-q, q)`` and one row per batch entry. The rest is checked when the ``with`` block is entered, before anything
    is installed on ``model``."""
    L, H = model_shape(model)
    check_backend(model, _base_of(model), "probes")  # before the first forward
    probe = ScoreProbe(L, H, positions, key_start)  # checks key_start before iclab's attention is installed
    fresh = _find(model) is None
    ctl = _install(model)
    ctl.probes.append(probe)
    try:
        yield probe
    finally:
        ctl.probes.remove(probe)
        if fresh and not ctl.probes and ctl.table is None and ctl.adaptive is None:
            _uninstall(ctl)


def tokenize_batch(
    tokenizer: PreTrainedTokenizerBase,
    prompts: Sequence[str],
    device: str | torch.device = "cpu",
    add_special_tokens: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded ``(input_ids, attention_mask, last)`` for ``prompts``; ``last (B,)`` = last real token position.

    Pads with id 0 under ``attention_mask = 0`` (right padding never changes a causal model's real positions).

    Arguments: ``prompts`` a non-empty sequence (not a string) of strings; ``device`` a torch device (a
    ``torch.device`` or a string such as ``"cuda:1"``) that holds tensors here; ``add_special_tokens`` a bool, passed to
    the tokenizer; ``tokenizer`` a callable Hugging Face tokenizer returning ``input_ids`` (its own errors are its own;
    :func:`check_prompts` also checks lengths against a model). Every prompt must give at least one token.
    """
    check_text_list("prompts", prompts)
    if not prompts:
        raise ConfigError("prompts", prompts, "a non-empty list of strings")
    add_special_tokens = check_bool("add_special_tokens", add_special_tokens)
    device = check_device("device", device)
    check_tokenizer("tokenizer", tokenizer)
    ids = [tokenizer(p, add_special_tokens=add_special_tokens)["input_ids"] for p in prompts]
    empty = [i for i, x in enumerate(ids, 1) if len(x) == 0]
    if empty:
        raise ConfigError(
            "prompts", prompts[empty[0] - 1], f"prompts of at least one token (prompt {empty[0]} gives none)"
        )
    n = max(len(x) for x in ids)
    input_ids = torch.zeros(len(ids), n, dtype=torch.long)
    mask = torch.zeros(len(ids), n, dtype=torch.long)
    for i, x in enumerate(ids):
        input_ids[i, : len(x)] = torch.tensor(x)
        mask[i, : len(x)] = 1
    return input_ids.to(device), mask.to(device), (mask.sum(1) - 1).to(device)


@torch.no_grad()
def probe_prompts(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prompts: Sequence[str],
    *,
    positions: Literal["last"] | int | Sequence[int] | torch.Tensor = "last",
    batch_size: int = 8,
    key_start: int = 0,
    tau: TauSetting | None = None,
    progress: bool = False,
) -> ScoreMoments:
    """Score moments of ``model`` on ``prompts`` at ``positions`` (``"last"`` = the last prompt token, i.e. the
    answer-generating position; or an int for every prompt), batched, optionally under temperature ``tau``.

    Arguments: ``prompts`` as :func:`check_prompts` (with ``model`` and ``tokenizer``); ``model`` also a Hugging Face
    model whose backend takes probes (:func:`probe_attention`); ``positions`` ``"last"``, an int (negative: from the
    end; not a bool), a non-empty list of ints or a 1-D or ``(B, P)`` integer tensor or array of them (each in
    ``[-q, q)``, checked at each forward); ``key_start`` an integer >= 0, at most the probed position of the shortest
    prompt when ``positions`` is ``"last"`` or an int; ``tau`` None or a temperature :func:`~iclab.hf.set_temperature`
    takes; ``batch_size`` an integer >= 1; ``progress`` a bool (a progress bar)."""
    from tqdm.auto import tqdm

    from iclab.hf._temperature import with_temperature

    check_int("batch_size", batch_size, 1)
    check_bool("progress", progress)
    positions = _check_positions(positions)
    model_shape(model)  # a Hugging Face model, else UnsupportedModelError
    counts = check_prompts(model, tokenizer, prompts)
    _check_key_start(min(counts), positions, key_start)
    device = next(model.parameters()).device
    ctx = with_temperature(model, tau) if tau is not None else contextlib.nullcontext()
    body = getattr(model, "base_model", model)  # the attention stack without the LM head (Gemma's is 262k wide)
    with ctx, probe_attention(model, key_start=key_start) as probe:
        for i in tqdm(range(0, len(prompts), batch_size), disable=not progress, desc="probe", unit="batch"):
            ids, mask, last = tokenize_batch(tokenizer, prompts[i : i + batch_size], device)
            probe.positions = last[:, None] if positions == "last" else positions
            body(input_ids=ids, attention_mask=mask, use_cache=False)
    return probe.result()


def _check_positions(positions):
    """``positions`` as :func:`probe_prompts` uses it (an array becomes a tensor); a ConfigError unless it is
    ``"last"``, an int (not a bool), a non-empty list of ints, or a 1-D or 2-D integer tensor or array with values.
    Whether each position lies in ``[-q, q)`` is checked at each forward (it depends on the prompt)."""
    allowed = "'last', an int, a non-empty list of ints, or a 1-D or (B, P) integer tensor of query positions"
    if isinstance(positions, str):
        if positions != "last":
            raise ConfigError("positions", positions, allowed)
        return positions
    if isinstance(positions, (int, np.integer)) and not isinstance(positions, (bool, np.bool_)):
        return int(positions)
    if isinstance(positions, np.ndarray):
        if positions.dtype.kind not in "iu":
            raise ConfigError("positions", f"<array of dtype {positions.dtype}>", allowed)
        positions = torch.from_numpy(positions)
    if isinstance(positions, torch.Tensor):
        integral = not (positions.is_floating_point() or positions.is_complex() or positions.dtype == torch.bool)
        if not integral or positions.dim() not in (1, 2) or positions.numel() == 0 or positions.device.type == "meta":
            shown = f"<tensor of dtype {positions.dtype}, shape {tuple(positions.shape)}>"
            raise ConfigError("positions", shown, allowed)
        return positions
    if (
        isinstance(positions, (list, tuple))
        and positions
        and all(isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)) for p in positions)
    ):
        return [int(p) for p in positions]
    raise ConfigError("positions", positions, allowed)


def _check_key_start(n: int, positions, key_start: int) -> None:
    """Every probed row must keep at least one key: ``key_start`` at most the probed position of the shortest prompt
    (``n`` tokens)."""
    check_int("key_start", key_start, 0)
    row = (
        n - 1
        if positions == "last"
        else (
            positions
            if isinstance(positions, int) and positions >= 0
            else n + positions
            if isinstance(positions, int)
            else None
        )
    )
    if row is not None and key_start > row:
        raise ConfigError(
            "key_start",
            key_start,
            f"an integer in [0, {max(row, 0)}] (the shortest prompt has {n} "
            f"tokens; keys before key_start are ignored, so the probed row would see none)",
        )
