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
