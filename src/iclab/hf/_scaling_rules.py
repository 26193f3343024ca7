r"""Named attention-scaling rules of released long-context models, for any Hugging Face model iclab controls.

Each rule multiplies the attention logits of the query at 0-based position :math:`p` (with :math:`n` visible keys)
by a factor, or caps them; every rule keeps the convention of the model that ships it (they differ by one):

- ``logn:L=2048`` — Qwen-1 log-n scaling: :math:`q \times \log_L(p+1)` when :math:`p+1 > L`, else 1.
- ``llama4:a=0.1:f=8192`` — Llama 4 temperature tuning (transformers ``llama4``, after arXiv:2501.19399):
  :math:`q \times (1 + a \ln(\lfloor (p+1)/f \rfloor + 1))`.
- ``ministral:beta=0.1:L=16384`` — Ministral 3 / Mistral 4: :math:`q \times (1 + \beta \ln(1 + \lfloor p/L \rfloor))`.
- ``yarn:s=4`` (or ``yarn:m=1.2``) — YaRN's constant attention factor (arXiv:2309.00071 §3.4):
  logits :math:`\times m^2`, :math:`m = 0.1 \ln s + 1` (1 for :math:`s \le 1`).
- ``ssmax:L=2048`` (or ``ssmax:s=0.13``) — Scalable-Softmax (arXiv:2501.19399): logits :math:`\times s \ln n`,
  :math:`s = 1/\ln L` by default (the stock scale at :math:`n = L`); :math:`n = p + 1` under a causal mask
  (at most the sliding window), the number of keys in a bidirectional encoder.
- ``softcap:c=50`` — Gemma 2 soft-capping: logits :math:`\to c \tanh(\text{logits}/c)`.

The first five only scale whole query rows (logits :math:`e_{ij} \times g_i = (g_i q_i)^\top k_j s`), so they run on
the model's own ``sdpa``/``eager``/``flex`` function with a rescaled query; ``softcap`` needs the logits and runs a
row-blocked dense attention on ``sdpa``/``eager`` (refused on ``flex_attention``). Rules compose with ``+``
(``logn:L=2048+softcap:c=30``: factors multiply, the cap comes last) and with a temperature τ
(:func:`iclab.hf.set_temperature`); ``:layers=3/7/11`` limits a query rule to those layers. Positions come from ``position_ids`` (else the cache length plus the row),
never from the query length, so cached decoding equals a full forward. A model whose config already applies a rule
of the same kind (:func:`native_scaling`) is refused with one line naming the config field
(docs/howto/hf-temperature.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import TYPE_CHECKING, Iterator, Sequence, TypeVar, Union

import torch

from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf._arguments import check_model
from iclab.hf._native_scaling import native_scaling
from iclab.hf._softcap import capped_attention
from iclab.hf._tau_setting import model_shape
from iclab.hf._temperature import _find, _install

if TYPE_CHECKING:
    from transformers import PreTrainedModel

__all__ = [
    "SCALING_RULES",
    "ScalingRule",
    "RuleSetting",
    "parse_scaling_rule",
    "set_scaling_rule",
    "get_scaling_rule",
    "with_scaling_rule",
]

ModelT = TypeVar("ModelT", bound="PreTrainedModel")
_INF = float("inf")
#: rule -> (kind, default parameters); a rule of a kind the model already applies is refused (no double scaling)
SCALING_RULES: dict[str, tuple[str, dict[str, float | None]]] = {
    "logn": ("context", {"L": 2048.0}),
    "llama4": ("context", {"a": 0.1, "f": 8192.0}),
    "ministral": ("context", {"beta": 0.1, "L": 16384.0}),
    "ssmax": ("context", {"L": 2048.0, "s": None}),
    "yarn": ("constant", {"s": 1.0, "m": None}),
    "softcap": ("cap", {"c": _INF}),
}
_DOMAIN = {  # (rule, parameter) -> (test, allowed)
    ("logn", "L"): (lambda v: 1 < v < _INF, "a finite number > 1"),
    ("llama4", "a"): (lambda v: 0 <= v < _INF, "a finite number >= 0"),
    ("llama4", "f"): (lambda v: 0 < v < _INF, "a finite number > 0"),
    ("ministral", "beta"): (lambda v: 0 <= v < _INF, "a finite number >= 0"),
    ("ministral", "L"): (lambda v: 0 < v < _INF, "a finite number > 0"),
    ("ssmax", "L"): (lambda v: 1 < v < _INF, "a finite number > 1"),
    ("ssmax", "s"): (lambda v: 0 < v < _INF, "a finite number > 0"),
    ("yarn", "s"): (lambda v: 0 < v < _INF, "a finite number > 0"),
    ("yarn", "m"): (lambda v: 0 < v < _INF, "a finite number > 0"),
    ("softcap", "c"): (lambda v: v > 0, "a number > 0 (inf: no cap)"),
}
_ALLOWED = "rules " + ", ".join(
    f"{r}:" + ":".join(f"{k}={v}" for k, v in p.items() if v is not None) for r, (_, p) in SCALING_RULES.items()
)


@dataclasses.dataclass(frozen=True)
class ScalingRule:
    """One named rule with its parameters (defaults from :data:`SCALING_RULES`), checked on construction.

    Fields: ``name`` — one of :data:`SCALING_RULES`; ``params`` — ``{parameter: value}`` overriding the defaults
    (``ssmax`` takes ``L`` or ``s``, ``yarn`` takes ``s`` or ``m``, not both); ``layers`` — the layer indices the
    rule applies to (``None``: every layer; Llama 4 tunes only its NoPE layers), ``layers=3/7/11`` in the string
    form; not for ``softcap``.
    """

    name: str
    params: tuple[tuple[str, float], ...] = ()
    layers: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.name not in SCALING_RULES:
            raise ConfigError("name", self.name, _ALLOWED)
        given = dict(self.params.items() if isinstance(self.params, dict) else self.params)
        if "layers" in given:
            object.__setattr__(self, "layers", given.pop("layers"))
        if self.layers is not None:
            object.__setattr__(self, "layers", _check_layers(self.name, self.layers))
        defaults = SCALING_RULES[self.name][1]
        for key, value in given.items():
            if key not in defaults:
                names = [*defaults, *(["layers"] if self.name != "softcap" else [])]
                raise ConfigError(f"{self.name}.{key}", value, f"parameters {', '.join(names)} of {self.name}")
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ConfigError(f"{self.name}.{key}", value, _DOMAIN[self.name, key][1]) from None
            if not _DOMAIN[self.name, key][0](value):
                raise ConfigError(f"{self.name}.{key}", value, _DOMAIN[self.name, key][1])
            given[key] = value
        if self.name in ("ssmax", "yarn") and len(given) > 1:
            raise ConfigError(self.name, given, f"one of {' or '.join(defaults)}, not both")
        object.__setattr__(self, "params", tuple(sorted(given.items())))

    @property
    def values(self) -> dict[str, float | None]:
        """Every parameter, defaults filled in."""
        return {**SCALING_RULES[self.name][1], **dict(self.params)}

    @property
    def kind(self) -> str:
        """``context`` (grows with position), ``constant`` or ``cap``."""
        return SCALING_RULES[self.name][0]

    @property
    def identity(self) -> bool:
        """True when the rule leaves every logit unchanged (``llama4:a=0``, ``yarn:s=1``, ``softcap:c=inf``, …)."""
        v = self.values
        if self.name == "yarn":
            return self.constant() == 1.0
        zero = {"llama4": "a", "ministral": "beta"}.get(self.name)
        return (zero is not None and v[zero] == 0) or (self.name == "softcap" and v["c"] == _INF)

    def constant(self) -> float:
        """``yarn``: the logit factor :math:`m^2`."""
        m, s = self.values["m"], self.values["s"]
        if m is None:
            m = 1.0 if s <= 1 else 0.1 * math.log(s) + 1.0
        return m * m

    def factor(self, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        """Logit factor of query rows at 0-based positions ``p`` with ``n`` visible keys (float64, same shape)."""
        v = self.values
        if self.name == "logn":
            return torch.where(p + 1 > v["L"], torch.log(p + 1) / math.log(v["L"]), torch.ones_like(p))
        if self.name == "llama4":
            return 1 + v["a"] * torch.log1p(torch.floor((p + 1) / v["f"]))
        if self.name == "ministral":
            return 1 + v["beta"] * torch.log1p(torch.floor(p / v["L"]))
        if self.name == "ssmax":
            s = v["s"] if v["s"] is not None else 1 / math.log(v["L"])
            return s * torch.log(n)
        if self.name == "yarn":
            return torch.full_like(p, self.constant())
        return torch.ones_like(p)

    def __str__(self) -> str:
        where = "" if self.layers is None else ":layers=" + "/".join(map(str, self.layers))
        return self.name + "".join(f":{k}={v:g}" for k, v in self.params) + where


def _check_layers(name: str, layers) -> tuple[int, ...]:
    """``3/7/11`` or a sequence of ints → sorted distinct layer indices ≥ 0; ConfigError otherwise."""
    allowed = "layer indices >= 0, e.g. layers=3/7/11 (not for softcap)"
    try:
        parts = layers.split("/") if isinstance(layers, str) else list(layers)
        out = tuple(sorted({int(str(x).strip()) for x in parts}))
    except (TypeError, ValueError):
        raise ConfigError(f"{name}.layers", layers, allowed) from None
    if not out or out[0] < 0 or name == "softcap" or any(isinstance(x, bool) for x in parts):
        raise ConfigError(f"{name}.layers", layers, allowed)
    return out


#: What :func:`set_scaling_rule` takes: ``"logn:L=2048+softcap:c=30"``, a :class:`ScalingRule`, a sequence of them,
#: or ``None`` (no rule).
RuleSetting = Union[str, ScalingRule, Sequence[ScalingRule], None]


def parse_scaling_rule(text: str) -> tuple[ScalingRule, ...]:
    """``"logn:L=2048+softcap:c=30"`` → rules (``+`` composes, ``:`` separates parameters; no comma, so the string
    survives lm-eval's ``model_args``). A bad name, parameter or value is one :class:`ConfigError`.

    Arguments: ``text`` a non-empty string ``name:param=value[:param=value]``, rules joined by ``+``: names of
    :data:`SCALING_RULES`, each at most once; their own parameters with values in range (``logn`` and ``ssmax`` ``L`` >
    1; ``llama4`` ``a`` and ``ministral`` ``beta`` >= 0; the others > 0; all finite but ``softcap`` ``c``, where inf is
    no cap; ``ssmax`` and ``yarn`` take one of their two); ``layers=`` indices >= 0, not for ``softcap`` (a bad value of
    a parameter is a ConfigError naming ``rule.param``, anything else one naming ``text``)."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError("text", text, _ALLOWED)
    rules = []
    for part in text.strip().split("+"):
        name, *items = part.strip().split(":")
        if name.strip() not in SCALING_RULES:
            raise ConfigError("text", name.strip(), _ALLOWED)
        params = []
        for item in items:
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise ConfigError("text", text, f"name:param=value[:param=value][+name…]; {_ALLOWED}")
            params.append((key.strip(), value.strip()))
        rules.append(ScalingRule(name.strip(), tuple(params)))
    return _check_composition(tuple(rules), "text")


def _check_composition(rules: tuple[ScalingRule, ...], field: str) -> tuple[ScalingRule, ...]:
    """``rules`` unless a name repeats or there are two caps (a ConfigError naming ``field``)."""
    names = [r.name for r in rules]
    if len(set(names)) != len(names) or sum(r.kind == "cap" for r in rules) > 1:
        raise ConfigError(field, "+".join(map(str, rules)), "each rule at most once")
    return rules


class _RuleRun:
    """The rules installed on one model: the query factor per call, and the capped attention when there is a cap."""

    def __init__(self, rules: tuple[ScalingRule, ...]):
        self.rules = tuple(r for r in rules if not (r.identity and r.kind == "cap"))
        self.scales = tuple(r for r in self.rules if r.kind != "cap")
        cap = [r.values["c"] for r in self.rules if r.kind == "cap"]
        self.cap = cap[0] if cap else None
        self._pos, self._cache = None, {}  # position_ids of the current forward, its factors per layer setting

    def scale_query(self, module, query: torch.Tensor, key: torch.Tensor, kwargs: dict, adaptive: bool):
        """``query (B, H, q, d)`` with each row times the product of the rules' factors at its position."""
        if self.cap is not None and adaptive:
            raise UnsupportedModelError("softcap cannot be combined with the adaptive temperature; use a fixed tau")
        if not self.scales:
            return query
        q = query.shape[2]
        pos = kwargs.get("position_ids")
        if not (torch.is_tensor(pos) and pos.ndim == 2 and pos.shape[-1] == q):
            pos = None
        active = self._active(module)
        if not active:
            return query
        window = kwargs.get("sliding_window") or getattr(module, "sliding_window", None)
        if pos is None or pos is not self._pos:  # a new forward: factors are cached per position_ids tensor
            self._pos, self._cache = pos, {}
        now = (active, window, None if pos is None else pos._version, query.device)
        factor = self._cache.get(now)
        if factor is None:
            factor = self._factor(module, pos, q, key.shape[2], window, query.device, active)
            if pos is not None:
                self._cache[now] = factor
        work = torch.promote_types(query.dtype, torch.float32)
        return (query * factor.to(work)).to(query.dtype)

    def _active(self, module) -> tuple[int, ...]:
        """Indices into ``self.scales`` of the rules that apply to this module's layer."""
        if all(r.layers is None for r in self.scales):
            return tuple(range(len(self.scales)))
        layer = getattr(module, "layer_idx", None)
        if not isinstance(layer, int):
            raise UnsupportedModelError(f"{type(module).__name__}: no layer_idx, so a rule's layers= cannot apply")
        return tuple(i for i, r in enumerate(self.scales) if r.layers is None or layer in r.layers)

    def _factor(self, module, pos, q: int, k: int, window, device, active) -> torch.Tensor:
        """``(B|1, 1, q, 1)`` float64 product of the factors; ``p`` from ``position_ids`` or cache length + row."""
        if pos is None:
            p = (torch.arange(q, device=device, dtype=torch.float64) + (k - q))[None]  # (1, q)
        else:
            p = pos.to(device, torch.float64)  # (B, q)
        n = p + 1 if getattr(module, "is_causal", True) else torch.full_like(p, float(k))  # keys a row sees
        if window is not None:
            n = n.clamp(max=float(window))
        out = torch.ones_like(p)
        for i in active:
            out = out * self.scales[i].factor(p, n.clamp(min=1))
        return out[:, None, :, None]

    def attention(self, module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        """The attention function when a cap is set: :func:`iclab.hf._softcap.capped_attention` with its ``c``."""
        if kwargs.get("s_aux") is not None or (
            attention_mask is None and kwargs.get("sliding_window") and key.shape[2] > kwargs["sliding_window"]
        ):
            raise UnsupportedModelError(f"{type(module).__name__}: softcap does not support sinks or unmasked windows")
        dropout = dropout if module.training else 0.0
        return capped_attention(module, query, key, value, attention_mask, scaling, dropout, self.cap)


def _as_rules(rule: RuleSetting) -> tuple[ScalingRule, ...]:
    if rule is None:
        return ()
    if isinstance(rule, str):
        try:
            return parse_scaling_rule(rule)
        except ConfigError as exc:
            if exc.field != "text":
                raise  # a parameter's own name (logn.L) says more than the argument's
            raise ConfigError("rule", exc.value, exc.allowed) from None
    if isinstance(rule, ScalingRule):
        return (rule,)
    if isinstance(rule, (list, tuple)) and all(isinstance(r, ScalingRule) for r in rule):
        return _check_composition(tuple(rule), "rule")
    raise ConfigError("rule", rule, f"a string such as 'logn:L=2048', a ScalingRule or None; {_ALLOWED}")


def set_scaling_rule(model: ModelT, rule: RuleSetting) -> ModelT:
    r"""Apply named scaling rules to every attention layer of ``model`` (in place; returns the model); ``None``
    removes them (a τ set by :func:`iclab.hf.set_temperature` stays). Composes with τ: logits
    :math:`q^\top k\, s\, g(p, n) / \tau_{\ell h}`, then the cap. Refused (:class:`UnsupportedModelError`, one line
    naming the config field) when the model's own config already applies a rule of the same kind.

    Arguments: ``rule`` None (remove), a string :func:`parse_scaling_rule` reads, a :class:`ScalingRule` or a list or
    tuple of them, each name once (else a ConfigError naming ``rule``, or ``rule.param`` for a parameter's value),
    ``layers`` below the model's layer count; ``model`` a Hugging Face model (:func:`~iclab.hf.model_shape`) whose
    attention goes through ``AttentionInterface``, whose config applies no rule of the same kind, and, for
    ``softcap``, on the ``sdpa`` or ``eager`` backend (else UnsupportedModelError)."""
    rules = _as_rules(rule)
    n_layers = model_shape(model)[0]
    for r in rules:
        if r.layers is not None and r.layers[-1] >= n_layers:
            raise ConfigError(f"{r.name}.layers", "/".join(map(str, r.layers)), f"layer indices 0..{n_layers - 1}")
    native = native_scaling(model)
    for r in rules:
        clash = [f"{f}={v!r}" for f, (kind, v) in native.items() if kind == r.kind]
        if clash:
            raise UnsupportedModelError(
                f"{type(model).__name__} already applies {r.kind} attention scaling ({', '.join(clash)}); "
                f"rule {r.name!r} would scale twice: turn that field off in the config, or use another kind of rule"
            )
    if any(r.kind == "cap" and not r.identity for r in rules):
        ctl = _find(model)
        base = ctl.base if ctl is not None else model.config._attn_implementation or "sdpa"
        if base not in ("sdpa", "eager"):
            raise UnsupportedModelError(
                f"{type(model).__name__}: softcap needs the attention logits, which attention implementation "
                f"{base!r} does not expose; load the model with attn_implementation='sdpa' or 'eager'"
            )
    if not rules and _find(model) is None:
        return model
    ctl = _install(model)
    ctl.rule = _RuleRun(rules) if rules else None
    return model


def get_scaling_rule(model: PreTrainedModel) -> tuple[ScalingRule, ...]:
    """The rules set on ``model`` (empty for none).

    Arguments: ``model`` a Hugging Face ``PreTrainedModel`` (else UnsupportedModelError); one without rules gives
    ``()``."""
    check_model(model)
    ctl = _find(model)
    run = getattr(ctl, "rule", None)
    return run.rules if run is not None else ()


@contextlib.contextmanager
def with_scaling_rule(model: ModelT, rule: RuleSetting) -> Iterator[ModelT]:
    """``with with_scaling_rule(model, "logn:L=2048"): model(**batch)``; the previous rules come back on exit.

    Arguments: ``model`` and ``rule`` as :func:`set_scaling_rule` takes them, checked when the ``with`` block is
    entered."""
    previous = get_scaling_rule(model)
    set_scaling_rule(model, rule)
    try:
        yield model
    finally:
        if _find(model) is not None:
            set_scaling_rule(model, previous or None)
