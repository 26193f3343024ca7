"""Config parsing: --set overrides are typed by field, unknown keys and bad values give one clear error."""

from dataclasses import dataclass

import pytest

from iclab.config import Config, check_choice, check_int, check_positive, config_hash, parse_overrides
from iclab.errors import ConfigError


@dataclass(frozen=True)
class _Cfg(Config):
    d: int = 5
    lr: float = 0.1
    name: str = "a"
    flag: bool = False
    ls: tuple[int, ...] = (1, 2)
    opt: float | None = None
    seed: int = 0

    def __post_init__(self):
        check_int("d", self.d)
        check_positive("lr", self.lr)
        check_choice("name", self.name, ("a", "b"))


def test_overrides_are_typed():
    cfg = _Cfg().with_overrides(parse_overrides(["d=7", "lr=0.5", "flag=true", "ls=3,5,7", "opt=none", "name=b"]))
    assert cfg == _Cfg(d=7, lr=0.5, name="b", flag=True, ls=(3, 5, 7), opt=None)
    assert _Cfg().with_overrides({"opt": "2.5"}).opt == 2.5
    assert _Cfg().with_overrides({"ls": "[4, 6]"}).ls == (4, 6)


def test_round_trip_and_hash():
    cfg = _Cfg(d=3, ls=(7,))
    assert _Cfg.from_dict(cfg.to_dict()) == cfg
    assert cfg.hash == _Cfg(d=3, ls=(7,)).hash != _Cfg(d=4).hash
    assert config_hash({"a": 1, "b": 2}) == config_hash({"b": 2, "a": 1})


@pytest.mark.parametrize(
    "pairs, match",
    [
        (["nope=1"], "unknown key 'nope'.*allowed keys: d, flag"),
        (["d=x"], "invalid d='x'.*int"),
        (["d=0"], "invalid d=0.*>= 1"),
        (["lr=-1"], "invalid lr=-1.0.*> 0"),
        (["name=c"], "invalid name='c'.*one of 'a', 'b'"),
        (["flag=maybe"], "invalid flag"),
        (["d"], "--set.*key=value"),
    ],
)
def test_bad_overrides_name_field_and_allowed(pairs, match):
    with pytest.raises(ConfigError, match=match):
        _Cfg().with_overrides(parse_overrides(pairs))


def test_from_dict_rejects_unknown():
    with pytest.raises(ConfigError, match="zzz"):
        _Cfg.from_dict({"zzz": 1})


@dataclass(frozen=True)
class _Lists(Config):
    xs: tuple[float, ...] = (1.0, 2.0)
    names: tuple[str, ...] = ("a",)
    skip: tuple[int, ...] = (3,)
    extra: tuple[int, ...] = ()  # an empty default says empty is a setting
    maybe: tuple[int, ...] | None = None
    MAY_BE_EMPTY = ("skip",)


@dataclass(frozen=True)
class _ListsChild(_Lists):
    more: tuple[int, ...] = (1,)


@pytest.mark.parametrize(
    "pairs, match",
    [
        (["xs="], r"invalid xs=\(\): expected a non-empty list"),  # noise_sigmas= dropped Fig. 2a (issue 24)
        (["xs=[]"], r"invalid xs=\(\): expected a non-empty list"),
        (["xs=10,,20"], "invalid xs='10,,20': expected a comma-separated list without empty elements"),
        (["xs=10,"], "without empty elements"),
        (["xs=,10"], "without empty elements"),
        (["names=a, ,b"], "without empty elements"),
        (['names=["a", " "]'], "invalid names=.*expected a list without empty elements"),
        (["maybe="], "invalid maybe=.*non-empty list"),
    ],
)
def test_list_fields_refuse_empty_lists_and_empty_elements_by_one_rule(pairs, match):
    with pytest.raises(ConfigError, match=match):
        _Lists().with_overrides(parse_overrides(pairs))


def test_an_empty_list_where_the_config_says_what_it_means():
    assert _Lists().with_overrides(parse_overrides(["skip=", "extra=", "maybe=none"])).skip == ()
    assert _Lists(extra=()).extra == () and _Lists(maybe=(4,)).maybe == (4,)
    with pytest.raises(ConfigError, match="names"):
        _Lists(names=("",))  # the Python API is held to the same rule
    with pytest.raises(ConfigError, match="more"):
        _ListsChild(more=())  # and so is a subclass without a __post_init__ of its own
    with pytest.raises(ConfigError, match="d="):
        _Cfg(d=0, ls=(1,))  # a config's own __post_init__ still runs after the rule


def test_every_experiment_config_holds_the_list_rule():
    """The experiments' presets all pass; the fields where empty means 'skip' (real-model parts) say so."""
    from iclab.experiments import all_experiments

    allowed = {e.name: getattr(e.config_cls, "MAY_BE_EMPTY", ()) for e in all_experiments()}
    assert allowed["temperature-llm"] == ("demo_counts",) and allowed["dispersion"] == (
        "delta_models",
        "lookup_models",
        "real_models",
    )
    with pytest.raises(ConfigError, match="noise_sigmas"):
        next(e for e in all_experiments() if e.name == "temperature").config_cls(noise_sigmas=())
