"""Experiment ``temperature-llm`` (arXiv:2511.01292 §5.2, docs/papers/temperature.md §5.3–5.4): grouped prompts,
greedy exact match with a shared prefix against generation, the group-bootstrap statistics and verdicts on data
with a known answer, and an end-to-end run on a tiny random-init Llama with an offline byte tokenizer; one slow
test on the real Gemma 3 270M."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from iclab.errors import ConfigError
from iclab.experiments.temperature.llm import cells as E
from iclab.experiments import get_experiment
from iclab.experiments.temperature.llm.claims import claims
from iclab.experiments.temperature.llm.config import TemperatureLLMConfig
from iclab.experiments.temperature.llm.tables import summary_table, trend
from iclab.data import get_task, question_split
from iclab.hf import answer_argmax, greedy_match

compare = get_experiment("temperature-llm").compare


def _byte_tokenizer():
    """A byte-level tokenizer (256 byte tokens, no merges) + pad/eos, built offline."""
    from tokenizers import Tokenizer, decoders, models
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(sorted(ByteLevel.alphabet()))}
    vocab.update({"<pad>": 256, "<eos>": 257})
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=258,
        hidden_size=24,
        intermediate_size=40,
        num_hidden_layers=3,
        num_attention_heads=3,
        num_key_value_heads=1,
        max_position_embeddings=1024,
        pad_token_id=256,
        eos_token_id=257,
        bos_token_id=257,
    )
    model = LlamaForCausalLM(cfg)
    path = tmp_path_factory.mktemp("tiny_llama")
    model.save_pretrained(path)
    _byte_tokenizer().save_pretrained(path)
    return str(path)


def test_byte_tokenizer_round_trip():
    tok = _byte_tokenizer()
    text = "Country: Curaçao\nCapital: Willemstad\n\n"
    assert tok.decode(tok(text)["input_ids"]) == text


def test_shared_prefix_argmax_equals_full_forward(tiny_model_dir):
    """With the prefix cache, the argmax at the answer positions equals that of one plain forward over the whole
    prompt + answer (teacher forcing: greedy decoding follows the gold answer iff these argmaxes are its tokens),
    under any τ; and a gold answer that is the model's own argmax path scores EM 1 exactly when a line end follows."""
    from iclab.hf import shared_model, with_temperature

    model, tok, _ = shared_model(tiny_model_dir, causal=True)
    prefix = "Country: Peru\nCapital: Lima\n\nCountry: Chad\nCapital: Ndjamena\n\n"
    queries = ["Country: Fiji\nCapital:", "Country: Mali\nCapital:", "Country: Oman\nCapital:"]
    answers = [" Suva", " Bamako", " Muscat"]
    for tau in (1.0, 0.6, "adaptive"):
        with with_temperature(model, tau):
            shared = answer_argmax(model, tok, prefix, queries, answers, batch_size=2)
            for q, a, (gold, pred) in zip(queries, answers, shared):
                ids = tok(prefix + q + a, return_tensors="pt")["input_ids"]
                m = len(gold)
                assert ids[0, -m:].tolist() == gold
                with torch.no_grad():
                    full = model(input_ids=ids).logits[0].argmax(-1)  # (n,)
                assert pred[:-1] == full[-m - 1 : -1].tolist()
            em = greedy_match(model, tok, prefix, queries, answers, batch_size=2)
            assert em.tolist() == [
                float(p[:-1] == g and (p[-1] == 257 or tok.decode([p[-1]]).startswith("\n"))) for g, p in shared
            ]


def _screen_row(harm: float, Q=40, G=8, seed=1, task="continent-label"):
    """A screening cell where noisy demonstrations lower EM by ``harm`` (paired: those questions flip 1 -> 0)."""
    rng = np.random.default_rng(seed)
    clean = (rng.random(Q) < 0.7).astype(int)
    noisy = clean.copy()
    noisy[rng.permutation(np.flatnonzero(clean))[: int(round(harm * Q))]] = 0  # spread over the groups
    return {
        "part": "screen",
        "model": "m",
        "task": task,
        "noise_ratio": 0.8,
        "n_demos": 6,
        "em_clean": clean.tolist(),
        "em_noisy": noisy.tolist(),
        "group": [i // (Q // G) for i in range(Q)],
        "source": "synthetic",
    }


def _synthetic_rows(taus, noise, gain_at, Q=120, G=12, seed=0, harm: float | None = 0.25):
    """EM (T, Q) where τ = gain_at[r] beats τ = 1 by ~25 points at noise r, with group structure; plus a screening
    cell where noise costs ``harm`` of EM (None: no screening cell)."""
    rng = np.random.default_rng(seed)
    rows = [] if harm is None else [_screen_row(harm)]
    for r in noise:
        base = (rng.random(Q) < 0.5).astype(int)
        em = np.tile(base, (len(taus), 1))
        j = taus.index(gain_at[r])
        flip = (base == 0) & (rng.random(Q) < 0.5)
        em[j, flip] = 1
        rows.append(
            {
                "part": "noise",
                "model": "m",
                "task": "continent-label",
                "noise_ratio": r,
                "n_demos": 6,
                "em": em.tolist(),
                "group": [i // (Q // G) for i in range(Q)],
                "source": "synthetic",
                "em_moment": em[j].tolist(),
                "layer_tau": [gain_at[r]] * 3,
            }
        )
    return pd.DataFrame(rows)


def test_statistics_and_verdicts_on_a_known_effect():
    taus = (0.7, 1.0, 1.4, 2.0)
    cfg = TemperatureLLMConfig(
        models=("m",), tasks=("continent-label",), noise_ratios=(0.0, 0.4, 0.8), taus=taus, demo_counts=()
    )
    df = _synthetic_rows(list(taus), cfg.noise_ratios, {0.0: 1.0, 0.4: 1.4, 0.8: 2.0})
    tab = summary_table(cfg, df).set_index("noise_ratio")
    assert tab.loc[0.8, "best_tau"] == 2.0 and tab.loc[0.0, "best_tau"] == 1.0
    assert tab.loc[0.8, "heldout_lo"] > 0.1 and tab.loc[0.8, "best_tau_lo"] == 2.0
    slope, lo, hi, cells = trend(cfg, df)
    assert cells == 3 and slope > 0 and lo > 0
    verdicts = compare(cfg, df)
    assert {c.id for c in claims(cfg)} == set(verdicts)
    assert verdicts["m/continent-label/trend"].verdict == "agrees"
    assert verdicts["m/continent-label/gain/0.8"].verdict == "agrees"
    assert verdicts["m/continent-label/moment"].verdict == "agrees"
    flat = _synthetic_rows(list(taus), cfg.noise_ratios, {0.0: 1.0, 0.4: 1.0, 0.8: 1.0})
    v = compare(cfg, flat)
    # no answer changed among 120 questions: the rule of three keeps the interval ±3/120 = ±0.025 wide, which
    # cannot exclude a 2-point gain; 600 questions can
    assert v["m/continent-label/gain/0.8"].verdict == "not judged"
    flat = _synthetic_rows(list(taus), cfg.noise_ratios, {0.0: 1.0, 0.4: 1.0, 0.8: 1.0}, Q=600, G=60)
    v = compare(cfg, flat)
    assert v["m/continent-label/gain/0.8"].verdict == "disagrees"  # no gain: the CI excludes 2 points
    assert v["m/continent-label/noise-hurts"].verdict == "agrees"  # the screen passed (25 points of harm)


def test_the_question_group_is_the_unit_and_the_row_level_calibration_simulates_it():
    """Issue 43 item 3: questions of a group share its demonstrations, so the claims read one row per group
    (``judged_rows``) and combine the groups. Four questions harmed by noise in three of 8 groups of 5: as 40
    questions the band would lie above 0 ([0.003, 0.197]); as 8 groups it does not, and the screen is not passed.
    The gains and the harm are simulated at the level of these rows; the trend (an argmax per cell) places its noise
    cells at no trend itself."""
    from iclab.claims._calibrate_rows import calibrate_records
    from iclab.experiments.temperature.llm.claims import judged_rows

    taus = (0.7, 1.0, 1.4, 2.0)
    cfg = TemperatureLLMConfig(
        models=("m",), tasks=("continent-label",), noise_ratios=(0.0, 0.4, 0.8), taus=taus, demo_counts=()
    )
    df = _synthetic_rows(list(taus), cfg.noise_ratios, {0.0: 1.0, 0.4: 1.4, 0.8: 2.0})
    uneven = df.copy()
    uneven.at[0, "em_clean"] = [1] * 40
    uneven.at[0, "em_noisy"] = [0 if q in (0, 10, 25, 26) else 1 for q in range(40)]
    uneven.at[0, "group"] = [q // 5 for q in range(40)]
    harm = compare(cfg, uneven)["m/continent-label/noise-hurts"]
    assert "band across 8 question groups (40 questions)" in harm.statistic
    assert harm.verdict == "not judged" and "contains zero" in harm.reason
    cals = {c.claim: c for c in calibrate_records(claims(cfg), cfg, judged_rows(cfg, df), experiment="t", draws=200)}
    for cid in ("noise-hurts", "gain/0.4", "gain/0.8", "moment"):
        c = cals[f"m/continent-label/{cid}"]
        assert not c.why and c.passes, c
    trend = cals["m/continent-label/trend"]  # its noise cells made exchangeable: no trend
    assert trend.passes and "rows placed by its combine rule" in trend.truth, trend


def test_the_screen_judges_only_where_noise_hurts():
    """Where noisy demonstrations do not lower EM there is nothing for τ to repair: a flat table reads "not judged"
    (not "disagrees"), and so does a real gain, naming the screen record; without the screening cell the
    claims read "not measured"; with the screen off (``screen_questions=0``) they are judged as before."""
    taus = (0.7, 1.0, 1.4, 2.0)
    cfg = TemperatureLLMConfig(
        models=("m",), tasks=("continent-label",), noise_ratios=(0.0, 0.4, 0.8), taus=taus, demo_counts=()
    )
    gain = {0.0: 1.0, 0.4: 1.4, 0.8: 2.0}
    flat = {0.0: 1.0, 0.4: 1.0, 0.8: 1.0}
    for harm, effect in ((0.0, flat), (0.0, gain), (0.025, gain)):  # no harm; harm below screen_harm (1 question)
        v = compare(cfg, _synthetic_rows(list(taus), cfg.noise_ratios, effect, Q=600, G=60, harm=harm))
        for claim in ("trend", "gain/0.4", "gain/0.8", "moment"):
            assert v[f"m/continent-label/{claim}"].verdict == "not judged", (harm, claim)
            assert "screened out: `m/continent-label/noise-hurts`" in v[f"m/continent-label/{claim}"].reason
        assert v["m/continent-label/noise-hurts"].verdict != "agrees"
    v = compare(cfg, _synthetic_rows(list(taus), cfg.noise_ratios, gain, harm=None))
    assert v["m/continent-label/gain/0.8"].verdict == "not judged"
    assert v["m/continent-label/gain/0.8"].reason.startswith("not measured: its screen `m/continent-label/noise-hurts`")
    off = TemperatureLLMConfig(**{**cfg.to_dict(), "screen_questions": 0})
    v = compare(off, _synthetic_rows(list(taus), cfg.noise_ratios, gain, harm=None))
    assert v["m/continent-label/gain/0.8"].verdict == "agrees" and "m/continent-label/noise-hurts" not in v
    assert {c.id for c in claims(off)} == set(v)


def test_the_claims_are_records_and_every_judged_verdict_carries_its_test():
    """Issue 21: every claim is a record read by the generic judge, so every "agrees"/"disagrees" carries the test
    record that ``iclab calibrate`` and the chance count replay; a screened-out claim is gated (never counted as
    judged) and keeps what the test gave."""
    from iclab.experiments import get_experiment, judge_run
    from iclab.claims._judge import family_summary
    from iclab.claims._records import ClaimRecord

    exp = get_experiment("temperature-llm")
    for preset in ("quick", "paper"):
        assert all(isinstance(c, ClaimRecord) for c in exp.claims(exp.config(preset)))
    taus = (0.7, 1.0, 1.4, 2.0)
    cfg = TemperatureLLMConfig(
        models=("m",), tasks=("continent-label",), noise_ratios=(0.0, 0.4, 0.8), taus=taus, demo_counts=()
    )
    for harm in (0.25, 0.0):  # the screen passes; it fails
        df = _synthetic_rows(list(taus), cfg.noise_ratios, {0.0: 1.0, 0.4: 1.4, 0.8: 2.0}, harm=harm)
        rows, errors = judge_run(
            paper="temperature",
            experiment=exp.name,
            config=cfg,
            results=df,
            failed=df.iloc[:0],
            claims=claims,
            compare=compare,
        )
        assert not errors and len(rows) == 5
        decided = [r for r in rows if r.verdict in ("agrees", "disagrees")]
        assert all(r.test_record is not None for r in decided)
        gated = [r for r in rows if (r.test_record or {}).get("gate")]
        assert family_summary(rows, draws=20)["chance_agrees"]["judged"] == len(rows) - len(gated) - sum(
            r.test_record is None for r in rows
        )
        if harm == 0.0:
            assert len(gated) == 4 and all("(at these settings the test gave: agrees)" in r.reason for r in gated)
        else:
            assert len(decided) == 5 and not gated


def test_a_repeated_cell_is_one_cell():
    """Issue 21 item 2: a cell run twice (or a table merged twice) is one cell; the trend's slope was taken over the
    repeated noise cells as if they were more noise ratios."""
    taus = (0.7, 1.0, 1.4, 2.0)
    cfg = TemperatureLLMConfig(
        models=("m",), tasks=("continent-label",), noise_ratios=(0.0, 0.4, 0.8), taus=taus, demo_counts=()
    )
    df = _synthetic_rows(list(taus), cfg.noise_ratios, {0.0: 1.0, 0.4: 1.4, 0.8: 2.0})
    once, twice = compare(cfg, df), compare(cfg, pd.concat([df, df.iloc[1:3]], ignore_index=True))
    assert once == twice and once["m/continent-label/trend"].verdict == "agrees"


def test_the_screening_questions_come_from_the_pool_never_the_evaluation():
    from iclab.experiments.temperature.llm.cells import screen_split

    task = get_task("capital")
    questions, pool = question_split(task, 120, seed=0)
    screen, own_pool = screen_split(pool, 40, 6)
    assert len(screen) == 40 and not set(screen) & set(questions) and not set(screen) & set(own_pool)
    assert set(screen) | set(own_pool) == set(pool)
    with pytest.raises(ConfigError, match="screen_questions"):
        screen_split(pool, len(pool) - 5, 6)
    with pytest.raises(ConfigError, match=r"n_questions=200: expected at most 193 for task 'capital' \(250 items, 57"):
        E.budget(TemperatureLLMConfig(tasks=("capital",), n_questions=200, screen_questions=45))  # 45 + 12 kept


def test_config_errors():
    with pytest.raises(ConfigError, match="taus"):
        TemperatureLLMConfig(taus=(0.5, 2.0))
    with pytest.raises(ConfigError, match="tasks"):
        TemperatureLLMConfig(tasks=("rivers",))
    with pytest.raises(ConfigError, match="noise_ratios"):
        TemperatureLLMConfig(noise_ratios=(0.2, 1.3))
    with pytest.raises(ConfigError, match="n_questions"):
        TemperatureLLMConfig(n_questions=1)
    with pytest.raises(ConfigError, match="dtype.*'auto' or one of float32"):
        TemperatureLLMConfig(dtype="int4")
    with pytest.raises(ConfigError, match="models"):
        TemperatureLLMConfig(models=())
    with pytest.raises(ConfigError, match="screen_questions"):
        TemperatureLLMConfig(screen_questions=1)
    with pytest.raises(ConfigError, match="screen_harm"):
        TemperatureLLMConfig(screen_harm=5)


def test_device_checked_once_in_the_driver():
    from iclab.experiments import run_experiment

    with pytest.raises(ConfigError, match="visible CUDA"):
        run_experiment("temperature-llm", "quick", {"device": "cuda:3"}, executor="serial", progress=False)


def test_cells_cover_models_tasks_noise_and_demos():
    cfg = TemperatureLLMConfig(
        models=("a", "b"),
        tasks=("capital", "antonym"),
        noise_ratios=(0.0, 0.6),
        n_demos=6,
        demo_counts=(2, 6, 8),
        demo_noise=0.6,
    )
    cells = E.cells(cfg)
    assert len([c for c in cells if c["part"] == "noise"]) == 2 * 2 * 2
    assert len([c for c in cells if c["part"] == "demos"]) == 2 * 2 * 2  # k=6 at noise 0.6 is in the noise sweep
    screens = [c for c in cells if c["part"] == "screen"]
    assert len(screens) == 2 * 2 and all(c["noise_ratio"] == 0.6 and c["n_demos"] == 6 for c in screens)
    # the models take turns (the local pool's two workers start on different models), cell for cell alike
    assert [c["model"] for c in cells] == ["a", "b"] * (len(cells) // 2)
    assert [c | {"model": "b"} for c in cells[0::2]] == cells[1::2]
    assert json.loads(json.dumps(cells)) == cells


def test_end_to_end_tiny_llama(tiny_model_dir, tmp_path):
    from iclab.report import run_and_report

    over = {
        "models": (tiny_model_dir,),
        "tasks": ("continent-label",),
        "noise_ratios": (0.0, 0.5),
        "n_demos": 5,
        "demo_counts": (2,),
        "demo_noise": 0.5,
        "taus": (0.5, 1.0, 2.0),
        "n_questions": 12,
        "group_size": 4,
        "probe_questions": 4,
        "batch_size": 4,
        "adaptive": True,
        "moment_rule": True,
    }
    res = run_and_report("temperature-llm", "quick", over, out=tmp_path / "run", executor="serial", progress=False)
    df = res.results
    assert len(df) == 4 and len(res.failed) == 0
    from iclab.hf import parse_dtype

    assert res.config.dtype == "auto"  # the default: bf16 where the CPU computes it natively; each cell says which
    assert set(df["dtype"]) == {str(parse_dtype("auto", "cpu")).removeprefix("torch.")}
    (screen,) = df[df["part"] == "screen"].to_dict("records")
    assert len(screen["em_clean"]) == len(screen["em_noisy"]) == len(screen["group"]) == 40
    for _, r in df[df["part"] != "screen"].iterrows():
        assert np.asarray(r["em"]).shape == (3, 12) and len(r["group"]) == 12 and len(r["em_adaptive"]) == 12
        assert len(r["layer_tau"]) == 3 and all(t > 0 for t in r["layer_tau"])
        if r["noise_ratio"] == 0.0:
            assert r["layer_tau"] == [1.0, 1.0, 1.0] and r["em_moment"] == r["em"][1]
    figs = sorted(p.name for p in (res.path / "figures").glob("*.png"))
    assert figs == ["llm_best_tau_vs_noise.png", "llm_em_vs_demos.png", "llm_em_vs_tau.png"]
    report = (res.path / "report.md").read_text()
    assert "best τ grows with the noise ratio" in report and "bootstrap" in report and "Screen (" in report


@pytest.mark.slow
def test_real_gemma3_capital_cell():
    cfg = TemperatureLLMConfig(
        models=("gemma3-270m",),
        tasks=("capital",),
        taus=(1.0, 3.0),
        n_questions=8,
        group_size=4,
        adaptive=False,
        moment_rule=True,
        probe_questions=4,
        demo_counts=(),
    )
    out = E.run_cell(
        cfg, {"part": "noise", "model": "gemma3-270m", "task": "capital", "noise_ratio": 0.5, "n_demos": 4}, None
    )
    em = np.asarray(out["em"])
    assert "Gemma 3 270M" in out["source"] and em.shape == (2, 8)
    assert em[0].mean() >= 0.5 and em[0].mean() > em[1].mean()  # knows capitals; τ = 3 flattens attention
    assert len(out["layer_tau"]) == 18 and out["moment_valid"] == 1.0


@pytest.mark.parametrize("preset", ["quick", "paper", "full"])
def test_every_preset_leaves_room_for_its_screen(preset):
    """The demonstration pool of every task of every preset holds the screening questions plus one prompt's
    demonstrations (the full preset asks for every other item as a question: ``n_questions = 0``)."""
    from iclab.data import question_split
    from iclab.experiments.temperature.llm.cells import _check_task_sizes, pool_reserve, qa_task
    from iclab.experiments.temperature.llm.config import PRESETS

    cfg = PRESETS[preset]
    _check_task_sizes(cfg)  # raises ConfigError when a task or a pool is too small
    for name in cfg.tasks:
        task = qa_task(cfg, name)  # the task as the cells ask it (antonym at the preset's antonym_min_tagged)
        questions, pool = question_split(task, cfg.n_questions, cfg.seed, pool_reserve(cfg))
        assert len(pool) >= cfg.screen_questions + max([cfg.n_demos, *cfg.demo_counts])
        assert len(questions) == (cfg.n_questions or len(task.items) - len(pool))
        if cfg.n_questions:  # an explicit size keeps its questions: the reference runs are not moved
            assert questions == question_split(task, cfg.n_questions, cfg.seed)[0]


def test_every_quick_claim_has_its_paper_settings_counterpart():
    """The quick run judges the reference run's task (``antonym``, where noisy demonstrations hurt both models), so
    each of its claim ids is one the ``paper`` preset declares and the shipped reference run judged; the paper
    preset's extra noise ratios are its own (the report lists them as "paper settings only")."""
    from iclab.experiments.temperature.llm.claims import claims
    from iclab.experiments.temperature.llm.config import PAPER, QUICK

    quick, paper = {c.id for c in claims(QUICK)}, {c.id for c in claims(PAPER)}
    reference = set(
        json.loads((Path(__file__).parent / "data" / "reference_verdicts.json").read_text())["temperature-llm"]
    )
    assert QUICK.tasks == PAPER.tasks == ("antonym",) and len(quick) == 10
    assert quick <= paper and paper == reference
    assert {c.split("/")[-1] for c in paper - quick} == {"0.2", "0.6"}


def test_more_questions_than_a_task_holds_is_one_error_naming_the_limit():
    """``antonym`` has 227 items (its common pairs, ``antonym_min_tagged`` = 2); 40 screening questions and 12
    demonstrations per prompt keep 52 of them for the pool, so 175 questions fit and 176 are refused before the run
    (the data layer would quietly ask 175)."""
    from iclab.experiments.temperature.llm.cells import _check_task_sizes
    from iclab.experiments.temperature.llm.config import PAPER as WIDE

    PAPER = dataclasses.replace(WIDE, antonym_min_tagged=2, screen_questions=40, demo_counts=(2, 4, 8, 12))
    _check_task_sizes(dataclasses.replace(PAPER, n_questions=175))
    with pytest.raises(ConfigError, match=r"invalid n_questions=176: expected at most 175 for task 'antonym' \(227"):
        _check_task_sizes(dataclasses.replace(PAPER, n_questions=176))
    _check_task_sizes(dataclasses.replace(PAPER, n_questions=187, screen_questions=0))  # 40 kept: 187 fit
    with pytest.raises(ConfigError, match="at most 187"):
        _check_task_sizes(dataclasses.replace(PAPER, n_questions=188, screen_questions=0))
    with pytest.raises(ConfigError, match=r"invalid screen_questions=214: expected at most 213 for task 'antonym'"):
        _check_task_sizes(dataclasses.replace(PAPER, screen_questions=214))  # the screen leaves no two questions


def test_the_paper_preset_widens_antonym_and_asks_the_most_it_gives():
    """``antonym_min_tagged`` = 1 keeps the 874 WordNet pairs whose words both have a SemCor-tagged sense, the 227
    common pairs (= 2) among them; the paper preset's 612 questions are what they give beside 256 screening questions
    and 6 demonstrations a prompt, so 613 is refused naming that limit. The cells ask the widened task."""
    from iclab.experiments.temperature.llm.cells import _check_task_sizes, pool_reserve, qa_task, question_split
    from iclab.experiments.temperature.llm.config import PAPER, QUICK

    wide, common = qa_task(PAPER, "antonym"), qa_task(QUICK, "antonym")
    assert (PAPER.antonym_min_tagged, QUICK.antonym_min_tagged) == (1, 2)
    assert (len(wide.items), len(common.items)) == (874, 227)
    assert {i.question for i in common.items} < {i.question for i in wide.items}
    assert (PAPER.n_questions, PAPER.screen_questions, PAPER.demo_counts) == (612, 256, ())
    _check_task_sizes(PAPER)
    with pytest.raises(ConfigError, match=r"invalid n_questions=613: expected at most 612 for task 'antonym' \(874"):
        _check_task_sizes(dataclasses.replace(PAPER, n_questions=613))
    questions, pool = question_split(wide, PAPER.n_questions, PAPER.seed, pool_reserve(PAPER))
    assert len(questions) == 612 and len(pool) == 262 and not set(questions) & set(pool)
