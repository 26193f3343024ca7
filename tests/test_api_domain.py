"""Every public function refuses what it cannot compute (issue 42): the cases found on main at 14f4820, each a raw
exception, a NaN, a silently accepted input or an allocation bomb there, and here one ConfigError naming the argument,
its value and what is allowed; plus the shared validators of :mod:`iclab.domain` themselves."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from iclab.errors import ConfigError
from iclab.theory import categorical, dispersion, multihead, ood, temperature


@pytest.mark.parametrize(
    "call, field, words",
    [
        (lambda: temperature.tau_opt_isotropic(50, 0), "l", "an integer >= 1"),  # ZeroDivisionError on main
        (lambda: temperature.tau_opt_isotropic(0, 100), "d", "an integer >= 1"),  # 1.0 on main
        (lambda: temperature.tau_opt_isotropic(50, 100, sigma=float("nan")), "sigma", "finite"),  # NaN on main
        (lambda: temperature.tau_opt_isotropic(True, 100), "d", "an integer"),  # a boolean is no size
        (lambda: ood.count_table(0, 5), "K", "an integer in 1.."),  # ZeroDivisionError on main
        (lambda: dispersion.required_spread(10, 1.5), "eps", "(0, 1)"),  # NaN on main
        (lambda: dispersion.lemma21_bounds(1.0, 0), "n", ">= 1"),  # inf on main
        (lambda: multihead.mu_gamma(0.0, 5, 40, 0.1), "gamma", "> 0"),  # 0/0 = NaN on main
        (lambda: multihead.solution_manifold(0.5, 5, 40, 0.1, n_plus=0), "n_plus", "in 1.."),  # ZeroDivisionError
        (lambda: multihead.bayes_ratio_bound(1.0, 0.0), "sigma2", "> 0"),  # ZeroDivisionError on main
        (lambda: categorical.kernel_weights(np.ones((1, 2, 3)), np.ones((1, 4, 3)), "cosine", 1.0), "kernel", "one of"),
        (lambda: ood.feature_losses(np.zeros((3, 3)), p=[0.5, 0.5, float("nan")]), "p", "finite numbers"),  # NaN
    ],
)
def test_a_found_case_is_one_config_error_naming_the_argument(call, field, words):
    with pytest.raises(ConfigError) as info:
        call()
    assert info.value.field == field and words in str(info.value)


def _attention_and_hf_cases():
    """Found when the property suite reached iclab.attention and iclab.hf (issue 42, item 5): each was a raw
    exception or a NaN result on main at a0ddcf7."""
    import torch

    import iclab.attention as A
    import iclab.hf as H

    s = torch.randn(2, 3, 4)
    return [
        (lambda: A.visible_count(s, True), "mask", "a bool tensor"),  # TypeError from broadcast_to
        (lambda: A.polyval(True, torch.rand(3)), "coeffs", "finite numbers"),  # TypeError: not iterable
        (lambda: A.adaptive_beta(True), "H", "a torch.Tensor"),  # TypeError from zeros_like
        (lambda: A.row_sum_tolerance(True, 4), "dtype", "floating-point torch dtype"),  # TypeError from finfo
        (lambda: A.get_normaliser([]), "attention", "one of"),  # TypeError: unhashable
        (lambda: A.row_entropy(s, None, torch.ones(3)), "eps", "[0, 1)"),  # ambiguous truth value
        (lambda: A.max_coefficient(torch.tensor(1.5)), "weights", "(..., n_keys)"),  # IndexError
        (lambda: A.attention_entropy(torch.tensor([[-0.5, 1.5]])), "weights", ">= 0"),  # NaN
        (lambda: A.dispersion_bounds(1e308, 10.0), "delta", "fits in float64"),  # inf and NaN
        (lambda: A.dispersion_bounds(2.0, 0.0), "n", ">= 1"),  # inf
        (lambda: A.softmax(s, tau=np.ones((5, 7))), "tau", "broadcastable"),  # RuntimeError on sizes
        (lambda: A.register_normaliser("x", kind=True), "kind", "one of"),  # ValueError
        (lambda: H.givens_rotation(8, 0.3, None), "seed", "an integer"),  # RuntimeError from manual_seed
        (lambda: H.plane_rotation(8, [(0, 1), (1, 2)], 0.3), "pairs", "each coordinate in one pair"),  # accepted
        (lambda: H.plane_rotation(8, [(0, 1)], math.inf), "theta", "finite"),  # ValueError: math domain
        (lambda: H.best_tau_index(True, [1.0]), "grid", "numbers"),  # TypeError: no len()
        (lambda: H.fit_head(torch.nn.Linear(4, 3), torch.ones(5, 4), torch.zeros(5, dtype=torch.long), 3, 1e308),
         "lr", "stays finite"),  # NaN weights, silently
        (lambda: H.head_scores(torch.nn.Linear(4, 3), torch.ones(5, 4), torch.full((5,), 7)), "y", "labels in 0..2"),
        (lambda: dispersion.entropy_beta_derivative(np.ones((2, 3)), np.ones((2, 3))), "beta", "one inverse"),
    ]  # fmt: skip


@pytest.mark.parametrize("case", range(19))
def test_a_found_attention_or_hf_case_is_one_config_error(case):
    cases = _attention_and_hf_cases()
    assert len(cases) == 19
    call, field, words = cases[case]
    with pytest.raises(ConfigError) as info:
        call()
    assert info.value.field == field and words in str(info.value), str(info.value)


def test_a_non_model_is_named_not_an_attribute_error():
    from iclab.errors import UnsupportedModelError
    from iclab.hf import check_backend, native_scaling, reset_temperature

    for call in (
        lambda: reset_temperature(-math.inf),
        lambda: native_scaling(True),
        lambda: check_backend(1, "sdpa", "fixed"),
    ):
        with pytest.raises(UnsupportedModelError, match="is not a Hugging Face PreTrainedModel"):
            call()


def test_an_overflowing_activation_keeps_finite_weights_and_the_usual_path_bit_for_bit():
    """``affine_squared`` at C = 1e308 (NaN rows on main): the factor C² cancels, the weights are those of
    (s + 1/C)², finite; where nothing overflows the weights are what they were, bit for bit."""
    import torch

    from iclab.attention import affine_squared_attention_weights as sq

    s = torch.randn(3, 5, dtype=torch.float64)
    w = sq(s, C=1e308)
    assert torch.isfinite(w).all() and torch.allclose(w, (s**2) / (s**2).sum(-1, keepdim=True), rtol=1e-12)
    assert torch.equal(sq(s, C=0.7), ((1 + 0.7 * s) ** 2) / ((1 + 0.7 * s) ** 2).sum(-1, keepdim=True))


def test_sizes_that_cannot_fit_are_refused_before_allocating(monkeypatch):
    """bayes_risk at d = L = 1e5 tried to allocate 745 GiB on main; approx_dynamics(steps=1e12) ran on for
    minutes. Both are refused at once, naming the arguments, the estimate and the limit."""
    monkeypatch.setenv("ICLAB_MEMORY_LIMIT_GB", "8")
    start = time.perf_counter()
    with pytest.raises(
        ConfigError,
        match=r"invalid n_mc=4000, L=100000, d=100000: this call would need about .* of "
        r"memory, and this machine has 8 GB",
    ):
        multihead.bayes_risk(10**5, 10**5, 0.5)
    with pytest.raises(
        ConfigError, match=r"invalid steps=1000000000000, omega0='2 heads': this call would need about .* TB of memory"
    ):
        multihead.approx_dynamics([0.1, -0.1], [0.1, -0.1], 5, 40.0, 0.1, steps=10**12)
    with pytest.raises(ConfigError, match=r"invalid steps=1000000000000.* s of CPU, over the limit of 86400 s"):
        multihead.approx_dynamics([0.1], [0.1], 5, 40.0, 0.1, steps=10**12, every=10**12)  # a small record, long loop
    with pytest.raises(ConfigError, match=r"invalid max_steps=1000000000000"):
        ood.population_gd(np.zeros((3, 3)), max_steps=10**12)
    with pytest.raises(ConfigError, match=r"invalid n_draws=100000000"):
        multihead.risk_ratio_mc(2000, 2000, 0.5, n_draws=10**8)
    assert time.perf_counter() - start < 5.0  # refused, not attempted (each refusal takes milliseconds)


def test_the_settings_limit_moves_the_refusal(monkeypatch):
    """The same call is allowed or refused by ``ICLAB_CELL_SECONDS_LIMIT`` alone: the estimate, not a constant."""
    monkeypatch.setenv("ICLAB_CELL_SECONDS_LIMIT", "0.001")
    with pytest.raises(ConfigError, match="over the limit of 0.001 s"):
        multihead.approx_dynamics([0.1], [0.1], 5, 40.0, 0.1, steps=2000)
    monkeypatch.delenv("ICLAB_CELL_SECONDS_LIMIT")
    assert multihead.approx_dynamics([0.1], [0.1], 5, 40.0, 0.1, steps=20, every=10)["loss"].shape == (3,)


def test_a_diverging_descent_names_the_step_size():
    with pytest.raises(
        ConfigError,
        match=r"invalid lr=1000000.0: expected a step size at which GD stays finite \(it diverged at step \d+\)",
    ):
        multihead.approx_dynamics([0.5, -0.5], [0.5, -0.5], 5, 40.0, 0.1, lr=1e6, steps=50)


def test_an_overflowing_result_is_refused_not_returned_as_inf():
    with pytest.raises(ConfigError, match="overflows double precision"):
        dispersion.lemma21_bounds(800.0, 10, theta=1.0)
    with pytest.raises(ConfigError, match="overflows double precision"):
        multihead.approx_loss([3.0, 3.0], [1.0, 1.0], 100, 10.0, 0.1)
    low, high = dispersion.lemma21_bounds(700.0, 10, theta=1.0)  # just inside double precision: finite
    assert np.isfinite(low) and np.isfinite(high)


def test_in_domain_values_still_compute_what_they_did():
    assert temperature.tau_opt_isotropic(50, 100) == pytest.approx(1.5)
    assert temperature.tau_opt_isotropic(np.int64(50), np.int64(100), a=np.float64(2.0)) == pytest.approx(3.0)
    assert float(dispersion.required_spread(11, 0.5)) == pytest.approx(math.log(10))
    n, w = ood.count_table(2, 3)
    assert n.shape == (4, 2) and w.sum() == pytest.approx(1.0)
    assert multihead.bayes_ratio_bound(np.array([0.5, 1.0]), 0.25).shape == (2,)  # arrays broadcast, as before


def _validators():
    from iclab import domain  # imported here: on main (no iclab.domain) the cases above still run and fail

    return domain


@pytest.mark.parametrize(
    "check, value, allowed",
    [
        (lambda v: _validators().integer("k", v), True, "an integer >= 1"),
        (lambda v: _validators().integer("k", v), 2.0, "an integer >= 1"),
        (lambda v: _validators().number("x", v), float("inf"), "a finite number"),
        (lambda v: _validators().number("x", v), "1.5", "a finite number"),
        pytest.param(lambda v: _validators().number("x", v), 10**400, "a finite number", id="int-beyond-double"),
        (lambda v: _validators().probability("p", v), 1.0, "a finite number in (0, 1)"),
        (lambda v: _validators().real("x", v), None, "a real number"),
        (lambda v: _validators().array("a", v), [True, False], "numbers"),
        (lambda v: _validators().array("a", v, shape=(2, None)), np.ones((3, 2)), "shape (2, any)"),
        (lambda v: _validators().array("a", v, above=0), [1.0, -1.0], "finite numbers > 0"),
        (lambda v: _validators().array("a", v), [], "at least 1 entries"),
    ],
)
def test_each_validator_names_the_argument_and_what_is_allowed(check, value, allowed):
    with pytest.raises(ConfigError) as info:
        check(value)
    assert allowed in str(info.value) and str(info.value).startswith("invalid ")


def test_validators_return_the_value_in_the_form_the_formula_needs():
    d = _validators()
    integer, number, real, array, finite_result = d.integer, d.number, d.real, d.array, d.finite_result
    assert integer("k", np.int32(3)) == 3 and type(integer("k", np.int32(3))) is int
    assert number("x", np.float32(0.5)) == 0.5 and real("x", float("nan")) != real("x", float("nan"))
    assert array("a", [1, 2]).dtype == np.float64
    assert array("a", [1.0, float("nan")], finite=False, above=0).shape == (2,)  # NaN allowed, whatever the bounds
    value = (1.0, np.ones(2))
    assert finite_result(value, x=1) is value
    with pytest.raises(ConfigError, match="invalid x=1: the result overflows"):
        finite_result({"a": np.array([1.0, np.inf])}, x=1)


# ---- the review of issue 42: iclab.attention and iclab.hf entry checks (each test failed on the code before) --------


class _Tiny:
    """Tiny offline models: a byte-level tokenizer (256 bytes + pad + eos), and builders of a random Llama (``layers``
    layers; 0: a forward with no attention call) and a random BERT, both over its 258 ids."""

    def __init__(self):
        from tokenizers import Tokenizer, decoders, models
        from tokenizers.pre_tokenizers import ByteLevel
        from transformers import PreTrainedTokenizerFast

        vocab = {c: i for i, c in enumerate(sorted(ByteLevel.alphabet()))}
        vocab.update({"<pad>": 256, "<eos>": 257})
        tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
        tok.pre_tokenizer = ByteLevel(add_prefix_space=False, use_regex=False)
        tok.decoder = decoders.ByteLevel()
        self.tok = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")

    @staticmethod
    def llama(layers: int = 2):
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM

        torch.manual_seed(0)
        cfg = LlamaConfig(vocab_size=258, hidden_size=16, intermediate_size=24, num_hidden_layers=layers,
                          num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64, pad_token_id=256,
                          eos_token_id=257, bos_token_id=257, attn_implementation="sdpa")  # fmt: skip
        return LlamaForCausalLM(cfg).eval()

    @staticmethod
    def bert():
        import torch
        from transformers import BertConfig, BertModel

        torch.manual_seed(0)
        cfg = BertConfig(vocab_size=258, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=24, max_position_embeddings=64, attn_implementation="sdpa")  # fmt: skip
        return BertModel(cfg).eval()


@pytest.fixture(scope="module")
def tiny():
    pytest.importorskip("transformers")
    return _Tiny()


def _field(call) -> str:
    """The field of the one ConfigError ``call`` raises."""
    with pytest.raises(ConfigError) as info:
        call()
    return info.value.field


def test_probe_attention_refuses_a_bad_key_start_before_installing(tiny):
    """Case 1: iclab's attention stayed installed after a bad ``key_start`` (a later logit_spreads failed)."""
    import torch

    from iclab.hf import get_temperature, logit_spreads, probe_attention

    model = tiny.llama()
    with pytest.raises(ConfigError, match="key_start"):
        with probe_attention(model, key_start=-1):
            pass
    assert get_temperature(model) is None and model.config._attn_implementation == "sdpa"
    assert logit_spreads(model, torch.tensor([[1, 2, 3, 4]]), True).shape[:2] == (2, 2)


@pytest.mark.parametrize("name", ["logit_spreads", "attention_extremes"])
def test_logit_spreads_and_extremes_take_one_sequence_a_bool_causal_and_say_when_nothing_was_seen(tiny, name):
    """Case 2: a batch of 2 was read as its first sequence, ``causal=None`` passed, and a forward without an attention
    call was a bare RuntimeError."""
    import torch

    import iclab.hf as H
    from iclab.errors import IclabError

    fn, model = getattr(H, name), tiny.llama()
    assert _field(lambda: fn(model, torch.tensor([[1, 2, 3], [4, 5, 6]]), True)) == "input_ids"
    assert _field(lambda: fn(model, torch.tensor([[1, 2, 3]]), None)) == "causal"
    with pytest.raises(IclabError, match="no attention call"):
        fn(tiny.llama(layers=0), torch.tensor([[1, 2, 3]]), True)


def test_a_taken_normaliser_name_is_a_config_error():
    """Case 3: registering under a taken name was a ValueError."""
    import torch

    from iclab.attention import get_normaliser, register_normaliser, softmax

    with pytest.raises(ConfigError, match="taken") as info:
        register_normaliser("softmax")(lambda scores, mask=None: scores)
    assert info.value.field == "name" and get_normaliser("softmax") is softmax
    assert float(softmax(torch.zeros(1, 2)).sum()) == pytest.approx(1.0)


def test_grid_search_tau_checks_grid_and_score_first(tiny):
    """Case 4: a word in ``grid`` was a ValueError, None a TypeError; ``score`` was never checked."""
    from iclab.hf import get_temperature, grid_search_tau

    model = tiny.llama()
    assert _field(lambda: grid_search_tau(model, lambda m: 1.0, grid=["a"])) == "grid"
    assert _field(lambda: grid_search_tau(model, lambda m: 1.0, grid=[None])) == "grid"
    assert _field(lambda: grid_search_tau(model, lambda m: 1.0, grid=[True, 2.0])) == "grid"
    assert _field(lambda: grid_search_tau(model, None)) == "score"
    assert _field(lambda: grid_search_tau(model, "exact match")) == "score"
    assert get_temperature(model) is None


def _moments(L: int, H: int = 2):
    from iclab.hf import ScoreMoments

    one = np.ones((L, H))
    return ScoreMoments(rows=one, n=one * 4, mean=one, var=one, row_var=one, spread=one, entropy=one,
                        layer_mean=np.ones(L), layer_var=np.ones(L))  # fmt: skip


@pytest.mark.parametrize("name", ["moment_rule_tau", "spread_rule_tau"])
def test_the_moment_rules_check_clip_and_the_layer_counts(name):
    """Case 5: a ``clip`` that is not two numbers was a raw error (True passed as 1); layer counts were not compared
    (one layer broadcast silently against three)."""
    import iclab.hf as H

    fn = getattr(H, name)
    for clip in ("ab", (None, 2.0), (True, 2.0), (0.5,), (2.0, 3.0)):
        assert _field(lambda clip=clip: fn(_moments(3), _moments(3), clip)) == "clip", clip
    assert _field(lambda: fn(_moments(3), _moments(1))) == "shifted"
    assert _field(lambda: fn("clean", _moments(3))) == "clean"
    tau, ratio, valid = fn(_moments(3), _moments(3))
    assert tau.shape == (3,) and valid.all()


def test_the_cache_paths_refuse_what_is_not_a_path_or_an_alias():
    """Case 6: ``cache_dir(123)`` and an unhashable alias were TypeErrors."""
    from iclab.hf import cache_dir, converted_cache

    assert _field(lambda: cache_dir(123)) == "cache_dir"
    assert _field(lambda: converted_cache([])) == "alias"
    assert _field(lambda: converted_cache("smollm2", 1.5)) == "cache"
    assert converted_cache("minilm") is None


def test_greedy_answers_checks_its_sizes_and_restores_the_tokenizer(tiny):
    """Case 7: ``batch_size=0`` was a ValueError from range(), a string was read as its characters, and the
    tokenizer was left padding on the left."""
    from iclab.hf import greedy_answers

    model = tiny.llama()
    assert _field(lambda: greedy_answers(model, tiny.tok, ["a b"], batch_size=0)) == "batch_size"
    assert _field(lambda: greedy_answers(model, tiny.tok, ["a b"], batch_size=True)) == "batch_size"
    assert _field(lambda: greedy_answers(model, tiny.tok, ["a b"], max_new_tokens=0)) == "max_new_tokens"
    assert _field(lambda: greedy_answers(model, tiny.tok, "a b")) == "prompts"
    assert _field(lambda: greedy_answers(model, tiny.tok, ["a", 3])) == "prompts"
    assert greedy_answers(model, tiny.tok, []) == []
    assert tiny.tok.padding_side == "right"
    out = greedy_answers(model, tiny.tok, ["ab", "abc d"], max_new_tokens=2, batch_size=1)
    assert len(out) == 2 and all(isinstance(t, str) for t in out)
    assert tiny.tok.padding_side == "right"


def test_answer_argmax_and_greedy_match_check_sizes_and_types(tiny):
    """Case 7: ``batch_size=0`` was a ValueError from range(); strings were read as lists of characters."""
    from iclab.hf import answer_argmax, greedy_match

    model = tiny.llama()
    for fn in (answer_argmax, greedy_match):
        assert _field(lambda fn=fn: fn(model, tiny.tok, "x ", ["a"], [" b"], batch_size=0)) == "batch_size"
        assert _field(lambda fn=fn: fn(model, tiny.tok, "x ", "ab", "cd")) == "queries"
        assert _field(lambda fn=fn: fn(model, tiny.tok, None, ["a"], [" b"])) == "prefix"
        assert _field(lambda fn=fn: fn(model, tiny.tok, "x ", ["a"], [3])) == "answers"
    assert greedy_match(model, tiny.tok, "x ", ["a", "b"], [" c", " d"], batch_size=1).shape == (2,)


def test_tokenize_batch_checks_its_arguments(tiny):
    """Case 7: no prompt was a ValueError from max(); a number reached the tokenizer."""
    from iclab.hf import tokenize_batch

    assert _field(lambda: tokenize_batch(tiny.tok, [])) == "prompts"
    assert _field(lambda: tokenize_batch(tiny.tok, [1])) == "prompts"
    assert _field(lambda: tokenize_batch(tiny.tok, ["a"], device="nowhere")) == "device"
    assert _field(lambda: tokenize_batch(tiny.tok, ["a"], add_special_tokens="yes")) == "add_special_tokens"
    ids, mask, last = tokenize_batch(tiny.tok, ["ab", "a"])
    assert ids.shape == (2, 2) and last.tolist() == [1, 0]


def test_mean_pooled_embeddings_checks_sizes_and_pools_nothing_to_nothing(tiny):
    """Case 7: no sentence was a RuntimeError from torch.cat; ``batch=0`` a ValueError from range()."""
    from iclab.hf import mean_pooled_embeddings

    bert = tiny.bert()
    assert mean_pooled_embeddings(bert, tiny.tok, []).shape == (0, 16)
    assert _field(lambda: mean_pooled_embeddings(bert, tiny.tok, ["a"], batch=0)) == "batch"
    assert _field(lambda: mean_pooled_embeddings(bert, tiny.tok, ["a"], max_length=False)) == "max_length"
    assert _field(lambda: mean_pooled_embeddings(bert, tiny.tok, "a b")) == "sents"
    assert mean_pooled_embeddings(bert, tiny.tok, ["a b", "c"], batch=1).shape == (2, 16)


def test_the_encoder_passes_check_layers_sizes_and_tensors(tiny):
    """Case 7: ``L`` past the last layer ran the layers there are, ``bucket=0`` was a ValueError from range(), and
    bad tensors failed inside the layers."""
    import torch

    from iclab.hf import encode_to_layer, rotated_pooled_features, run_encoder_layers

    bert = tiny.bert()
    assert _field(lambda: encode_to_layer(bert, tiny.tok, ["a b"], 3)) == "L"
    assert _field(lambda: encode_to_layer(bert, tiny.tok, ["a b"], 1, bucket=0)) == "bucket"
    assert _field(lambda: encode_to_layer(bert, tiny.tok, "a b", 1)) == "sents"
    assert encode_to_layer(bert, tiny.tok, [], 1) == []
    buckets = encode_to_layer(bert, tiny.tok, ["a b", "c"], 1)
    h, mask = buckets[0][1], buckets[0][2]
    layers = bert.encoder.layer[1:]
    assert _field(lambda: run_encoder_layers(layers, h.tolist(), mask)) == "h"
    assert _field(lambda: run_encoder_layers(layers, h, mask[:, :1])) == "mask"
    assert _field(lambda: run_encoder_layers(3, h, mask)) == "layers"
    assert _field(lambda: rotated_pooled_features(bert, buckets, 3, None, 2)) == "L"
    assert _field(lambda: rotated_pooled_features(bert, buckets, 1, torch.eye(3), 2)) == "R"
    assert _field(lambda: rotated_pooled_features(bert, buckets, 1, None, 1)) == "n"
    assert rotated_pooled_features(bert, buckets, 1, torch.eye(16), 2).shape == (2, 16)


def test_attention_scores_checks_its_tensors(tiny):
    """Case 7: a 3-D query, rows past the query length and a NaN scaling failed inside torch or gave NaN."""
    import torch

    from iclab.hf import attention_scores

    module = tiny.llama().model.layers[0].self_attn
    q, k = torch.randn(1, 2, 4, 8), torch.randn(1, 1, 4, 8)
    assert _field(lambda: attention_scores(module, q[0], k, None, 0.3)) == "query"
    assert _field(lambda: attention_scores(module, q, k.double(), None, 0.3)) == "key"
    assert _field(lambda: attention_scores(module, q, k, None, float("nan"))) == "scaling"
    assert _field(lambda: attention_scores(module, q, k, None, 0.3, rows=torch.tensor([[4]]))) == "rows"
    assert _field(lambda: attention_scores(module, q, k, None, 0.3, is_causal="yes")) == "is_causal"
    assert _field(lambda: attention_scores(module, q, k, torch.ones(1, 1, 4), 0.3)) == "attention_mask"
    scores, visible = attention_scores(module, q, k, None, 0.3, rows=torch.tensor([[3]]))
    assert scores.shape == (1, 2, 1, 4) and visible.dtype == torch.bool


def test_stop_token_mask_checks_the_vocabulary_width(tiny):
    """Case 7: ``vocab=-1`` was a RuntimeError from torch.zeros; a non-tokenizer an AttributeError."""
    from iclab.hf import stop_token_mask

    assert _field(lambda: stop_token_mask(tiny.tok, -1)) == "vocab"
    assert _field(lambda: stop_token_mask(tiny.tok, True)) == "vocab"
    assert _field(lambda: stop_token_mask(None, 8)) == "tokenizer"
    assert stop_token_mask(tiny.tok, 258)[257]  # EOS ends a line


def test_adaptive_attention_checks_mask_causal_and_detach_beta():
    """Case 8: a float mask was read as ``mask.bool()``, a mask of the wrong shape passed when there was no key,
    and ``causal``/``detach_beta`` were read as truth values."""
    import torch

    from iclab.attention import adaptive_attention

    q, k = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 5, 4)
    assert _field(lambda: adaptive_attention(q, k, k, mask=torch.ones(1, 1, 3, 5))) == "mask"
    assert _field(lambda: adaptive_attention(q, k[..., :0, :], k[..., :0, :], mask=torch.ones(7, 7).bool())) == "mask"
    assert _field(lambda: adaptive_attention(q, k, k, causal="yes")) == "causal"
    assert _field(lambda: adaptive_attention(q, k, k, detach_beta=1)) == "detach_beta"
    assert adaptive_attention(q, k, k, mask=torch.ones(1, 1, 3, 5, dtype=torch.bool)).shape == (1, 2, 3, 4)


@pytest.mark.parametrize("coeffs", ["12", True, [True, 1.0], np.array([True, False]), [[1.0, 2.0]], [1.0, "2"]])
def test_check_coeffs_refuses_strings_and_booleans(coeffs):
    """Case 9: the string "12" was read as (1.0, 2.0) and booleans as numbers."""
    from iclab.attention import check_coeffs

    assert _field(lambda: check_coeffs(coeffs, 0.5)) == "coeffs"


def test_check_coeffs_still_takes_sequences_of_numbers():
    import torch

    from iclab.attention import PAPER_COEFFS, check_coeffs

    assert check_coeffs(PAPER_COEFFS, 0.5) == PAPER_COEFFS
    assert check_coeffs(np.array([1, 2]), np.float32(0.5)) == (1.0, 2.0)
    assert check_coeffs(torch.tensor([2.0]), -1) == (2.0,)
    assert check_coeffs(iter([1.0, 2.0]), 0.5) == (1.0, 2.0)
    assert _field(lambda: check_coeffs([1.0], True)) == "threshold"


@pytest.mark.parametrize(
    "tau",
    [np.array([True]), np.array(["1"]), np.array([1 + 0j]), "tau_bool_tensor"],
)
def test_check_tau_refuses_arrays_that_are_not_numbers(tau):
    """Case 10: a NumPy bool array came back as a bool tensor; a NumPy string array was a TypeError."""
    import torch

    from iclab.attention import check_tau

    tau = torch.ones(2, dtype=torch.bool) if isinstance(tau, str) else tau
    assert _field(lambda: check_tau(tau)) == "tau"


def test_activation_slope_checks_C_whatever_the_name():
    """Case 11: ``C`` was ignored (NaN accepted) for ``softmax`` and ``one_plus_tanh``."""
    from iclab.attention import activation_slope

    for name in ("softmax", "one_plus_tanh", "affine"):
        assert _field(lambda name=name: activation_slope(name, C=float("nan"))) == "C"
    assert activation_slope("one_plus_tanh") == 1.0 and activation_slope("affine_squared", C=0.5) == 1.0


def test_the_getters_refuse_what_is_not_a_model():
    """Case 12: ``get_temperature`` and ``get_scaling_rule`` returned None and () for any object."""
    from iclab.errors import UnsupportedModelError
    from iclab.hf import get_scaling_rule, get_temperature

    for fn in (get_temperature, get_scaling_rule):
        with pytest.raises(UnsupportedModelError, match="not a Hugging Face PreTrainedModel"):
            fn("model")


def test_estimate_tau_checks_every_argument_before_a_forward(tiny):
    """Case 13: ``clip`` was checked after the probes' forward passes, ``grid`` only with a ``score``."""
    from iclab.hf import estimate_tau

    model = tiny.llama()
    forwards = []
    model.model.register_forward_pre_hook(lambda *a: forwards.append(1))
    prompts = ["abc d", "efg h"]
    for kw, field in [
        ({"clip": (2.0, 1.0)}, "clip"),
        ({"grid": [-1.0]}, "grid"),
        ({"score": "em"}, "score"),
        ({"batch_size": 0}, "batch_size"),
        ({"key_start": 4}, "key_start"),
    ]:
        shifted = ["ab", "cd"] if field == "key_start" else prompts  # the shifted prompts are shorter
        assert _field(lambda kw=kw, s=shifted: estimate_tau(model, tiny.tok, prompts, s, **kw)) == field
    assert forwards == []
    assert estimate_tau(model, tiny.tok, prompts, prompts).layer_tau.shape == (2,) and forwards


def test_shared_model_checks_the_device_first_and_reads_auto_for_it(tiny, monkeypatch):
    """Case 14: ``dtype="auto"`` was resolved for the CPU whatever ``device``, and ``device`` was checked only by
    ``model.to`` after loading."""
    import iclab.hf._loading as loading
    import iclab.hf._model_cache as cache

    loads, asked = [], []
    monkeypatch.setattr(cache, "_CACHE", {})
    monkeypatch.setattr(cache, "load_model", lambda *a, **k: loads.append(a) or (tiny.llama(), tiny.tok, "tiny"))
    monkeypatch.setattr(loading, "_native_bf16", lambda device: asked.append(device) or False)
    assert _field(lambda: cache.shared_model("tiny", device="nowhere")) == "device"
    assert _field(lambda: cache.shared_model("tiny", device=3.5)) == "device"
    assert _field(lambda: cache.shared_model("", device="cpu")) == "name"
    assert loads == []
    cache.shared_model("tiny", dtype="auto", device="cpu")
    assert asked == ["cpu"] and len(loads) == 1


def _attention():
    import iclab.attention

    return iclab.attention


def _hf():
    import iclab.hf

    return iclab.hf


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: _hf().load_model(None), "name_or_path"),
        (lambda: _attention().activation_slope("nope"), "name"),
        (lambda: _attention().row_entropy("x"), "logits"),
        (lambda: _hf().parse_scaling_rule(""), "text"),
        (lambda: _hf().parse_scaling_rule("nope:L=3"), "text"),
        (lambda: _hf().parse_scaling_rule("logn+logn"), "text"),
        (lambda: _hf().set_scaling_rule(None, 3), "rule"),
        (lambda: _hf().set_scaling_rule(None, "nope"), "rule"),
        (lambda: ood.check_gammas([2.0]), "gammas"),
        (lambda: ood.forgets_k2([0.1]), "gammas"),
        (lambda: ood.forgetting_pairs([]), "gammas"),
        (lambda: ood.count_table(10, 40), "N"),
    ],
)
def test_each_error_names_the_real_parameter(call, field):
    """Case 15: these errors named another argument (``model``, ``attention``, ``scores``, ``tau_rule``, ``gamma``,
    ``n_tokens``) than the function's parameter."""
    assert _field(call) == field


def test_load_model_checks_causal_for_every_model(tmp_path):
    """Case 16: ``causal`` was read as a truth value for models that are not built-in aliases."""
    from iclab.hf import load_model

    assert _field(lambda: load_model(str(tmp_path / "none"), causal="yes")) == "causal"


def test_registered_normalisers_show_their_parameters_keyword_only():
    """Case 17: a normaliser takes ``tau``, ``C``… by keyword only, but its signature showed them positional."""
    import inspect

    import iclab.attention as A

    for name in A.normaliser_names():
        params = list(inspect.signature(A.get_normaliser(name)).parameters.values())
        assert [p.name for p in params[:2]] == ["scores", "mask"], name
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[2:]), name
