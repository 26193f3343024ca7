"""Declared field rules (iclab.config._rules): each rule accepts exactly what its words say, the one validator
(check_fields) holds every config to the rules its fields declare, and the ``check_*`` helpers keep their messages."""

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iclab.config import (
    Choice,
    Config,
    Device,
    Each,
    Integer,
    Number,
    Scale,
    check_choice,
    check_device,
    check_int,
    check_nonnegative,
    check_ordered,
    check_positive,
    check_probability,
    check_scale,
    choice_field,
    choices_field,
    describe_fields,
    device_field,
    field_rule,
    int_field,
    ints_field,
    number_field,
    numbers_field,
    scale_field,
    scales_field,
)
from iclab.errors import ConfigError, short_repr
from iclab.experiments import paper_experiments

# anything a user or a caller could put in a field: numbers of every kind, booleans, None, text and lists of them
_SCALARS = st.one_of(
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 0.0, 1e-30, 1e30, 1e-31, 1e31, -0.0]),
    st.booleans(),
    st.none(),
    st.text(max_size=6),
    st.sampled_from(["cpu", "cuda", "cuda:0", "cuda:12", "cuda:x", "mps", "mps:0", "global", "kv", "gd"]),
)
_ANY = st.one_of(_SCALARS, st.lists(_SCALARS, max_size=4).map(tuple), st.lists(_SCALARS, max_size=3))
_BOUND = st.integers(-50, 50)


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@st.composite
def _integers(draw):
    low = draw(_BOUND)
    high = draw(st.one_of(st.none(), st.integers(low, low + 60)))
    return Integer(low, high, draw(st.booleans()))


@given(rule=_integers(), value=st.one_of(st.integers(-200, 200), _ANY))
def test_integer_accepts_exactly_the_integers_in_its_range(rule, value):
    integer = isinstance(value, int) and not isinstance(value, bool)
    in_range = integer and rule.low <= value and (rule.high is None or value <= rule.high)
    assert rule.ok(value) == (in_range or (rule.zero_ok and integer and value == 0))
    bound = f">= {rule.low}" if rule.high is None else f"in {rule.low}..{rule.high}"
    assert rule.words().endswith(f"an integer {bound}") and rule.words(many=True).endswith(f"integers {bound}")


@st.composite
def _numbers(draw):
    """A Number rule with any mix of closed/open, finite bounds (or none)."""
    lo, hi = sorted(draw(st.lists(st.floats(-100, 100), min_size=2, max_size=2)))
    lower = draw(st.sampled_from([{}, {"low": lo}, {"above": lo}]))
    upper = draw(st.sampled_from([{}, {"high": hi}, {"below": hi}]))
    return Number(**lower, **upper)


@given(rule=_numbers(), value=st.one_of(st.floats(-120, 120), _ANY))
def test_number_accepts_exactly_the_finite_numbers_in_its_interval(rule, value):
    expected = _is_number(value) and math.isfinite(value)
    for bound, holds in (
        (rule.low, lambda b: value >= b),
        (rule.high, lambda b: value <= b),
        (rule.above, lambda b: value > b),
        (rule.below, lambda b: value < b),
    ):
        expected = expected and (bound is None or holds(bound))
    assert rule.ok(value) == expected
    lower, upper = rule.low if rule.above is None else rule.above, rule.high if rule.below is None else rule.below
    if lower is not None and upper is not None:
        brackets = ("[" if rule.above is None else "(", "]" if rule.below is None else ")")
        assert rule.words() == f"a number in {brackets[0]}{lower:g}, {upper:g}{brackets[1]}"


@given(zero_ok=st.booleans(), value=st.one_of(st.floats(-1e31, 1e31), st.floats(-1e-29, 1e-29), _ANY))
def test_scale_accepts_numbers_in_double_precision_range_and_zero_only_when_allowed(zero_ok, value):
    inside = _is_number(value) and math.isfinite(value) and 1e-30 <= value <= 1e30
    assert Scale(zero_ok).ok(value) == (inside or (zero_ok and _is_number(value) and value == 0))


@given(options=st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=5, unique=True), data=st.data())
def test_choice_accepts_exactly_its_options(options, data):
    value = data.draw(st.one_of(st.sampled_from(options), _ANY))
    rule = Choice(tuple(options))
    assert rule.ok(value) == (value in options)
    if not rule.ok(value):
        with pytest.raises(ConfigError) as exc:
            rule.check("name", value)
        assert exc.value.field == "name" and all(repr(o) in exc.value.allowed for o in options)


@given(value=_ANY)
def test_device_accepts_cpu_cuda_cuda_n_and_mps(value):
    expected = isinstance(value, str) and (
        value in ("cpu", "cuda", "mps") or (value.startswith("cuda:") and value[5:].isdigit())
    )
    assert Device().ok(value) == expected


@given(
    inner=st.one_of(_integers(), _numbers(), st.builds(Scale, st.booleans())),
    distinct=st.booleans(),
    at_least=st.integers(0, 3),
    values=st.one_of(st.lists(st.integers(-60, 60), max_size=5), st.lists(_SCALARS, max_size=4), _SCALARS),
)
def test_each_holds_every_element_to_its_rule(inner, distinct, at_least, values):
    rule = Each(inner, distinct=distinct, at_least=at_least)
    expected = isinstance(values, list) and len(values) >= at_least and all(inner.ok(v) for v in values)
    expected = expected and (not distinct or len(set(values)) == len(values))
    assert rule.ok(values) == expected == rule.ok(tuple(values) if isinstance(values, list) else values)
    if not expected:
        with pytest.raises(ConfigError) as exc:
            rule.check("xs", values)
        assert exc.value.value is values and exc.value.allowed.endswith(inner.words(many=True))


def test_each_contains():
    rule = Each(Number(above=0), contains=1.0, why="the stock model")
    assert rule.ok((0.5, 1.0)) and rule.ok([1]) and not rule.ok((0.5, 2.0)) and not rule.ok((0.0, 1.0))
    assert rule.allowed() == "finite numbers > 0 including 1.0 (the stock model)"


@dataclasses.dataclass(frozen=True)
class _Declared(Config):
    n: int = int_field(3, low=2)
    k: int = int_field(0, low=2, high=9, zero_ok=True, why="0: off")
    rate: float = number_field(0.5, low=0, below=1)
    clip: float | None = number_field(None, above=0)
    sigma: float = scale_field(1.0, zero_ok=True)
    sizes: tuple[int, ...] = ints_field((4, 8), low=1, distinct=True)
    probs: tuple[float, ...] = numbers_field((0.2, 1.0), low=0, high=1, contains=1.0)
    scales: tuple[float, ...] = scales_field((2.0,))
    mode: str = choice_field("a", ("a", "b"))
    modes: tuple[str, ...] = choices_field(("a",), ("a", "b", "c"), at_least=1)
    device: str = device_field()
    tau_min: float = 0.5
    tau_max: float = 2.0
    plain: int = 7  # no rule: anything goes
    seed: int = 0

    def __post_init__(self):
        check_ordered(self, "tau_min", "tau_max")


_RULED = [f for f in dataclasses.fields(_Declared) if field_rule(f) is not None]


@given(data=st.data())
def test_the_one_validator_rejects_what_a_declared_rule_rejects_and_accepts_the_rest(data):
    """Any declared constraint: a config with one field changed is refused, naming that field and the rule's words
    (plus "or None" for an optional field), exactly when the rule (or the list rule) refuses the value."""
    field = data.draw(st.sampled_from(_RULED))
    rule, optional = field_rule(field), field.name == "clip"
    value = data.draw(_ANY)
    is_list = isinstance(field.default, tuple)
    blank = is_list and isinstance(value, (tuple, list)) and any(isinstance(v, str) and not v.strip() for v in value)
    list_rule = is_list and (not isinstance(value, (tuple, list)) or not value or blank)
    refused = list_rule or not (rule.ok(value) or (optional and value is None))
    if not refused:
        assert getattr(dataclasses.replace(_Declared(), **{field.name: value}), field.name) == value
        return
    with pytest.raises(ConfigError) as exc:
        dataclasses.replace(_Declared(), **{field.name: value})
    assert exc.value.field == field.name and exc.value.value is value
    if not list_rule:
        assert str(exc.value) == f"invalid {field.name}={short_repr(value)}: expected {rule.allowed(optional)}"


def test_declared_words_reach_the_error_and_iclab_show():
    assert _Declared(plain="anything").plain == "anything"
    cases = {
        "k": (1, "0 or an integer in 2..9 (0: off)"),
        "rate": (1.0, "a number in [0, 1)"),
        "clip": (0.0, "a finite number > 0 or None"),
        "sizes": ((4, 4), "distinct integers >= 1"),
        "probs": ((0.2,), "numbers in [0, 1] including 1.0"),
        "scales": ((0.0,), "numbers in [1e-30, 1e30]"),
        "modes": (("d",), "values among 'a', 'b', 'c'"),
        "device": ("gpu", "'cpu', 'cuda', 'cuda:N' or 'mps'"),
    }
    for name, (value, allowed) in cases.items():
        with pytest.raises(ConfigError) as exc:
            _Declared(**{name: value})
        assert (exc.value.field, exc.value.allowed) == (name, allowed)
    with pytest.raises(ConfigError, match=r"invalid tau_max=0.1: expected a value > tau_min=0.5"):
        _Declared(tau_max=0.1)  # a rule between fields, in the config's own __post_init__
    shown = {f.name: f.allowed for f in describe_fields(_Declared())}
    assert all(shown[name] == allowed for name, (_, allowed) in cases.items())


def test_the_list_rule_refuses_a_value_that_is_not_a_list():
    with pytest.raises(ConfigError, match=r"invalid sizes='48': expected a list$"):
        _Declared(sizes="48")


def test_the_check_helpers_keep_their_words():
    for call, message in [
        (lambda: check_int("d", 0), "invalid d=0: expected an integer >= 1"),
        (lambda: check_int("seeds", 1001, 1, 1000), "invalid seeds=1001: expected an integer in 1..1000"),
        (lambda: check_int("d", True), "invalid d=True: expected an integer >= 1"),
        (lambda: check_positive("lr", -1.0), "invalid lr=-1.0: expected a finite number > 0"),
        (lambda: check_nonnegative("wd", math.nan), "invalid wd=nan: expected a finite number >= 0"),
        (lambda: check_probability("p", 1.5), "invalid p=1.5: expected a number in [0, 1]"),
        (lambda: check_scale("s", 1e31), "invalid s=1e+31: expected a number in [1e-30, 1e30]"),
        (lambda: check_scale("s", -1, zero_ok=True), "invalid s=-1: expected 0 or a number in [1e-30, 1e30]"),
        (lambda: check_choice("c", "z", ("a", "b")), "invalid c='z': expected one of 'a', 'b'"),
        (lambda: check_device("device", "gpu"), "invalid device='gpu': expected 'cpu', 'cuda', 'cuda:N' or 'mps'"),
    ]:
        with pytest.raises(ConfigError) as exc:
            call()
        assert str(exc.value) == message
    check_scale("s", 0, zero_ok=True)
    check_device("device", "cuda:3")


def _valid(rule):
    """Values a rule accepts (a strategy), for drawing settings of a real config."""
    if isinstance(rule, Integer):
        high = rule.high if rule.high is not None else rule.low + 10**6
        return st.one_of(st.integers(rule.low, high), st.just(0)) if rule.zero_ok else st.integers(rule.low, high)
    if isinstance(rule, Number):
        low = rule.low if rule.low is not None else rule.above
        high = rule.high if rule.high is not None else rule.below
        return st.floats(
            -1e6 if low is None else low,
            1e6 if high is None else high,
            exclude_min=rule.above is not None,
            exclude_max=rule.below is not None,
        )
    if isinstance(rule, Scale):
        return st.one_of(st.floats(1e-30, 1e30), st.just(0.0)) if rule.zero_ok else st.floats(1e-30, 1e30)
    if isinstance(rule, Choice):
        return st.sampled_from(rule.options)
    if isinstance(rule, Device):
        return st.sampled_from(["cpu", "cuda", "cuda:1", "mps"])
    size = max(rule.at_least, 1)
    values = st.lists(_valid(rule.rule), min_size=size, max_size=size + 3, unique=rule.distinct)
    return values.map(lambda v: tuple(v) + ((rule.contains,) if rule.contains not in (None, *v) else ()))


_EXPERIMENT_FIELDS = [
    (e.name, f) for e in paper_experiments() for f in dataclasses.fields(e.config_cls) if field_rule(f) is not None
]


@given(data=st.data())
def test_every_experiment_config_holds_each_declared_rule(data):
    """For every declared field of the seven experiment configs: a value the rule refuses is refused naming that
    field with the rule's words; a value it allows is never refused by that rule (only, at most, by a rule between
    fields, in other words)."""
    name, field = data.draw(st.sampled_from(_EXPERIMENT_FIELDS), label="field")
    rule, base = field_rule(field), next(e for e in paper_experiments() if e.name == name).presets["quick"]
    value = data.draw(st.one_of(_valid(rule), _ANY), label="value")
    optional = value is None and "None" in str(field.type)
    try:
        changed = dataclasses.replace(base, **{field.name: value})
    except ConfigError as exc:
        assert not (rule.ok(value) or optional) or exc.allowed != rule.allowed("None" in str(field.type))
        assert rule.ok(value) or optional or exc.field == field.name
    else:
        assert (rule.ok(value) or optional) and getattr(changed, field.name) == value


def test_every_experiment_config_declares_its_field_rules():
    """Each of the seven configs states most constraints on the fields (the rules between fields stay in
    __post_init__), and what iclab show prints for a declared field is the validator's own words."""
    for exp in paper_experiments():
        fields = dataclasses.fields(exp.config_cls)
        ruled = [f for f in fields if field_rule(f) is not None]
        assert len(ruled) >= len(fields) // 2, exp.name
        shown = {f.name: f.allowed for f in describe_fields(exp.presets["quick"])}
        for f in ruled:
            assert shown[f.name] == field_rule(f).allowed("None" in str(f.type)), (exp.name, f.name)
