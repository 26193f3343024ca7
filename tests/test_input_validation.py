"""Bad input fails where it enters with one ConfigError/RunFolderError, before any work is done."""

import pytest
import torch

from iclab.cli import main
from iclab.data._features import feature_basis, in_span_rotation
from iclab.errors import ConfigError, RunFolderError
from iclab.models import ICLAttention, MultiHeadRegressionAttention, TinyTransformer
from iclab.runs import RunFolder
from iclab.runs import _folder
from iclab.train import TrainConfig, train


def test_attention_params_checked_at_construction():
    with pytest.raises(ConfigError, match=r"attention_params\['tua'\].*one of tau"):
        TinyTransformer(3, attention_params={"tua": 2.0})
    with pytest.raises(ConfigError, match="tau"):
        TinyTransformer(3, attention_params={"tau": -1.0})
    with pytest.raises(ConfigError, match="linear attention has no temperature"):
        ICLAttention(3, "linear", tau=2.0)
    with pytest.raises(ConfigError, match="max_len"):
        TinyTransformer(3, max_len=4)(torch.zeros(1, 5, 3))
    with pytest.raises(ConfigError, match="n_out"):
        MultiHeadRegressionAttention.from_omega_mu(3, [0.1], [1.0], n_out=2)


def test_rotation_plane_must_be_two_distinct_features():
    V, _ = feature_basis(5, 3)
    with pytest.raises(ConfigError, match="other than i"):
        in_span_rotation(V, 1, 1, 0.3)
    with pytest.raises(ConfigError, match="0..2"):
        in_span_rotation(V, 0, 3, 0.3)


def test_duplicate_grid_values_are_a_config_error(tmp_path, capsys):
    assert main(["run", "temperature", "--set", "l_values=10,10", "--out", str(tmp_path / "r")]) == 2
    assert "same cell twice" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()  # refused before the run folder was made


def test_folder_of_other_code_is_never_resumed(tmp_path, monkeypatch):
    kw = dict(experiment="x", preset="quick", config={"a": 1}, config_hash="h", seed=0)
    RunFolder.open(tmp_path, **kw)
    RunFolder.open(tmp_path, **kw)  # same code: reopened
    monkeypatch.setattr(_folder, "code_hash", lambda: "0000000000000000")
    with pytest.raises(RunFolderError, match="source changed"):
        RunFolder.open(tmp_path, **kw)
    assert RunFolder.open(tmp_path, force=True, **kw).meta["code_hash"] == "0000000000000000"


class _Data:
    def sample(self, batch, generator):
        x = torch.randn(batch, 3, generator=generator)
        return x, x.sum(-1, keepdim=True)


def _loss(model, batch):
    x, y = batch
    return ((model(x) - y) ** 2).mean()


def test_resume_with_other_steps_refused_for_a_decaying_schedule(tmp_path):
    cfg = TrainConfig(steps=20, lr=0.01, schedule="cosine", checkpoint_every=10)
    train(torch.nn.Linear(3, 1), _Data(), _loss, cfg, run_dir=tmp_path)
    with pytest.raises(ConfigError, match="steps"):
        train(torch.nn.Linear(3, 1), _Data(), _loss, cfg.with_overrides({"steps": 40}), run_dir=tmp_path, resume=True)
    constant = TrainConfig(steps=20, lr=0.01, checkpoint_every=10)
    train(torch.nn.Linear(3, 1), _Data(), _loss, constant, run_dir=tmp_path / "c")
    res = train(
        torch.nn.Linear(3, 1),
        _Data(),
        _loss,
        constant.with_overrides({"steps": 30}),
        run_dir=tmp_path / "c",
        resume=True,
    )
    assert res.steps == 30


def test_feature_class_prompts_draw_every_example_of_unequal_classes():
    from iclab.data import FeatureClassPrompts, generator_for

    labels = torch.tensor([0] * 3 + [1] * 9 + [2] * 3)  # class 1 is three times larger
    feats = torch.arange(15, dtype=torch.float64)[:, None]  # feature = row index
    data = FeatureClassPrompts(feats, labels, classes=(0, 1, 2), n_way=2, shots=2, n_queries=1)
    batch = data.sample(4000, generator_for(0, "t"))
    rows = set(batch.x.flatten().long().tolist()) | set(batch.x_query.flatten().long().tolist())
    assert rows == set(range(15))  # before: class 1 was truncated to its first 3 examples
