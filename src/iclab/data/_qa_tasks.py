r"""In-context question answering with noisy demonstrations from offline data: the evaluation harness of the
LLM experiment of arXiv:2511.01292 (Demir & Doğan, §5.2 and Fig. 3; docs/papers/temperature.md §5.3).

The paper corrupts SciQ demonstrations with "relevant but wrong" answers (following Gao et al., 2024). SciQ is not
available offline, so these tasks build the same kind of noise from installed data. Each item is a question, its
gold answer and wrong answers of the same type:

- ``capital``: country → capital (``countryinfo``); wrong answers are capitals of other countries of the
  same sub-region (else region).
- ``antonym``: adjective → antonym, parsed from WordNet 3.0's ``data.adj`` (Debian ``wordnet-base``, pointer
  ``!``); wrong answers are near-synonyms of the cue (its synset mates and "similar to" ``&`` satellites),
  e.g. ``hot → warm`` instead of ``cold``; else the antonym of another cue.
- ``continent``: country → region (Africa, Americas, Asia, Europe, Oceania); wrong answer another region.
- ``demonym``: country → demonym (``France → French``); wrong answers demonyms of same-sub-region countries.
- ``continent-label``: country → an arbitrary word for its region (``Peru → river``): only the demonstrations
  can give the mapping, so wrong ones hurt; wrong answers are the other regions' words.

The prompts built from these tasks (``k`` demonstrations, exactly :math:`\lfloor rk + 1/2\rfloor` of them
wrong) are in :mod:`iclab.data._qa_prompts`. Scoring: exact match after lower-casing, stripping and dropping trailing punctuation (HF
``exact_match`` style); the model side (greedy decoding, teacher-forced greedy match) is in :mod:`iclab.hf`.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence


from iclab.errors import ConfigError, IclabError

__all__ = [
    "QAItem",
    "QATask",
    "QA_TASKS",
    "get_task",
    "capital_task",
    "continent_task",
    "demonym_task",
    "antonym_task",
    "continent_label_task",
    "LABEL_WORDS",
    "parse_wordnet_antonyms",
    "parse_wordnet_tagged",
    "wordnet_adj_path",
    "normalise_answer",
    "exact_match",
]

QA_TASKS = ("capital", "antonym", "continent", "demonym", "continent-label")
LABEL_WORDS = ("apple", "river", "candle", "violin", "pebble")  # continent-label: arbitrary names of the 5 regions
_WORDNET_DIRS = ("/usr/share/wordnet", "/usr/share/wordnet/dict", "/usr/local/share/wordnet")


@dataclass(frozen=True)
class QAItem:
    """One question: ``question`` → ``answer``; ``wrong`` = plausible wrong answers (never equal to it)."""

    question: str
    answer: str
    wrong: tuple[str, ...]


@dataclass(frozen=True)
class QATask:
    r"""A named list of items and the two-line template ``"{in_label}: q\n{out_label}: a\n\n"``."""

    name: str
    in_label: str
    out_label: str
    items: tuple[QAItem, ...]
    source: str

    def block(self, question: str, answer: str | None) -> str:
        """One demonstration (``answer`` given) or the open query (``answer=None``)."""
        head = f"{self.in_label}: {question}\n{self.out_label}:"
        return head if answer is None else f"{head} {answer}\n\n"


def _norm(s: str) -> str:
    return s.strip().lower()


def _finalise(name, in_label, out_label, rows: Iterable[tuple[str, str, list[str]]], source: str) -> QATask:
    """Drop duplicates/empties; keep wrong answers that differ from the gold one (case-insensitive)."""
    items, seen = [], set()
    for q, a, wrong in rows:
        q, a = (q or "").strip(), (a or "").strip()
        if not q or not a or _norm(q) in seen:
            continue
        ws = tuple(dict.fromkeys(w.strip() for w in wrong if w and w.strip() and _norm(w) != _norm(a)))
        if ws:
            seen.add(_norm(q))
            items.append(QAItem(q, a, ws))
    return QATask(name, in_label, out_label, tuple(items), source)


@functools.lru_cache(maxsize=1)
def _countries() -> tuple[dict, ...]:
    import countryinfo

    rows = []
    for c in countryinfo.all_countries():
        info = c.info()
        if info.get("name") and info.get("region"):
            rows.append(info)
    return tuple(sorted(rows, key=lambda i: i["name"]))


def _text(v) -> str:
    """A countryinfo field as one string (some fields are lists: take the first entry)."""
    if isinstance(v, (list, tuple)):
        v = v[0] if v else ""
    return v.strip() if isinstance(v, str) else ""


def _same_group(infos, key: str, value_of) -> list[tuple[str, str, list[str]]]:
    """(country, value, values of other countries of the same sub-region, else region, else all)."""
    rows = []
    for info in infos:
        v = _text(value_of(info))
        if not v:
            continue
        wrong: list[str] = []
        for group in ("subregion", "region", None):
            peers = [
                _text(value_of(o))
                for o in infos
                if o is not info and (group is None or o.get(group) == info.get(group))
            ]
            wrong = [p for p in peers if p and _norm(p) != _norm(v)]
            if len(wrong) >= 2:
                break
        rows.append((info["name"], v, sorted(set(wrong))))
    return rows


@functools.lru_cache(maxsize=None)
def capital_task() -> QATask:
    """Country → capital; wrong = capitals of same-sub-region countries (``countryinfo``)."""
    return _finalise(
        "capital", "Country", "Capital", _same_group(_countries(), "capital", lambda i: i.get("capital")), "countryinfo"
    )


@functools.lru_cache(maxsize=None)
def demonym_task() -> QATask:
    """Country → demonym; wrong = demonyms of same-sub-region countries (``countryinfo``)."""
    return _finalise(
        "demonym", "Country", "Demonym", _same_group(_countries(), "demonym", lambda i: i.get("demonym")), "countryinfo"
    )


@functools.lru_cache(maxsize=None)
def continent_task() -> QATask:
    """Country → region (5 values); wrong = the other regions (``countryinfo``)."""
    infos = _countries()
    regions = sorted({i["region"] for i in infos})
    return _finalise(
        "continent",
        "Country",
        "Continent",
        [(i["name"], i["region"], [r for r in regions if r != i["region"]]) for i in infos],
        "countryinfo",
    )


def wordnet_adj_path() -> Path:
    """Path of WordNet 3.0 ``data.adj``; raises a clear error if the Debian package is missing."""
    candidates = [Path(d) / "data.adj" for d in _WORDNET_DIRS]
    if shutil.which("dpkg"):
        try:
            out = subprocess.run(["dpkg", "-L", "wordnet-base"], capture_output=True, text=True, timeout=10).stdout
            candidates = [Path(p) for p in out.split() if p.endswith("/data.adj")] + candidates
        except (OSError, subprocess.SubprocessError):
            pass
    for p in candidates:
        if p.is_file():
            return p
    raise IclabError(
        "WordNet data.adj not found: install the Debian package 'wordnet-base' "
        "(apt-get install -y wordnet-base) for the antonym task"
    )


_LEMMA_MARKER = re.compile(r"\((a|p|ip)\)$")


def parse_wordnet_antonyms(lines: Iterable[str]) -> list[tuple[str, str, list[str]]]:
    """``(cue, antonym, near-synonyms of cue)`` from WordNet ``data.adj`` lines (format: wndb(5WN)).

    A data line is ``offset lex_filenum ss_type w_cnt(hex) {word lex_id(hex)} p_cnt(3 digits)
    {symbol offset pos source/target(4 hex)} | gloss``. The antonym pointer ``!`` is lexical: source/target
    ``sstt`` names word ``ss`` of this synset and word ``tt`` of the target. Near-synonyms are the cue synset's
    other words and the words of its ``&`` ("similar to") satellites (may be empty). Only single-word lower-case
    alphabetic lemmas are kept; the first antonym of each cue wins.
    """
    synsets: dict[str, tuple[list[str], list[tuple[str, str, str]]]] = {}
    for line in lines:
        if not line or line.startswith(" ") or "|" not in line:
            continue
        f = line.split("|", 1)[0].split()
        try:
            off, w_cnt = f[0], int(f[3], 16)
            words = [_LEMMA_MARKER.sub("", f[4 + 2 * i]) for i in range(w_cnt)]
            pos = 4 + 2 * w_cnt
            p_cnt = int(f[pos])
            ptrs = [(f[pos + 1 + 4 * j], f[pos + 2 + 4 * j], f[pos + 4 + 4 * j]) for j in range(p_cnt)]
        except (IndexError, ValueError):
            continue
        synsets[off] = (words, ptrs)

    def ok(w: str) -> bool:
        return w.isalpha() and w.islower()

    rows, seen = [], set()
    for words, ptrs in synsets.values():
        similar = [w for sym, o, _ in ptrs if sym == "&" and o in synsets for w in synsets[o][0]]
        for sym, o, st in ptrs:
            if sym != "!" or o not in synsets:
                continue
            s, t = int(st[:2], 16), int(st[2:], 16)
            if s == 0 or t == 0 or s > len(words) or t > len(synsets[o][0]):
                continue
            cue, ant = words[s - 1], synsets[o][0][t - 1]
            if not (ok(cue) and ok(ant)) or cue in seen or cue == ant:
                continue
            seen.add(cue)
            near = [w for w in words + similar if ok(w) and w not in (cue, ant)]
            rows.append((cue, ant, list(dict.fromkeys(near))))
    return rows


def _borrow_wrong(rows: list[tuple[str, str, list[str]]]) -> list[tuple[str, str, list[str]]]:
    """Cues without near-synonyms get the antonyms of three other cues (same type, certainly wrong)."""
    answers = sorted({a for _, a, _ in rows})
    out = []
    for i, (cue, ant, near) in enumerate(rows):
        if not near:
            near = [w for w in (answers[(i * 7919 + j * 31) % len(answers)] for j in range(4)) if w not in (cue, ant)]
        out.append((cue, ant, near))
    return out


def parse_wordnet_tagged(lines: Iterable[str]) -> dict[str, int]:
    """``lemma -> tagsense_cnt`` from WordNet ``index.adj`` (senses tagged in SemCor: a commonness proxy).

    Line format: ``lemma pos synset_cnt p_cnt {ptr_symbol} sense_cnt tagsense_cnt {synset_offset}``.
    """
    out = {}
    for line in lines:
        if not line or line.startswith(" "):
            continue
        f = line.split()
        try:
            out[f[0]] = int(f[5 + int(f[3])])
        except (IndexError, ValueError):
            continue
    return out


@functools.lru_cache(maxsize=None)
def antonym_task(path: str | None = None, min_tagged: int = 2) -> QATask:
    """Adjective → antonym from WordNet ``data.adj`` (see :func:`parse_wordnet_antonyms`).

    Keeps pairs whose cue and antonym both have ``>= min_tagged`` SemCor-tagged senses (``index.adj``), i.e.
    common adjectives (227 pairs at 2; 3271 at 0), so a 135M model has a chance to know them.
    """
    p = Path(path) if path else wordnet_adj_path()
    with open(p, encoding="latin-1") as fh:
        rows = parse_wordnet_antonyms(fh)
    if min_tagged > 0:
        index = p.with_name("index.adj")
        if not index.is_file():
            raise IclabError(f"WordNet index.adj not found beside {p}: reinstall the Debian package 'wordnet-base'")
        with open(index, encoding="latin-1") as fh:
            tagged = parse_wordnet_tagged(fh)
        rows = [r for r in rows if min(tagged.get(r[0], 0), tagged.get(r[1], 0)) >= min_tagged]
    return _finalise("antonym", "Word", "Antonym", _borrow_wrong(sorted(rows)), f"WordNet 3.0 {p}")


@functools.lru_cache(maxsize=None)
def continent_label_task() -> QATask:
    """Country → an arbitrary word naming its region (Africa → apple, Americas → river, …; :data:`LABEL_WORDS`).

    The model knows the regions from pretraining but not the words: only the demonstrations can tell which word
    names which region, so wrong demonstrations (another region's word) hurt — the setting in which the paper's
    noisy-demonstration claim can be tested at all. Wrong answers: the other four words."""
    infos = _countries()
    regions = sorted({i["region"] for i in infos})
    word = dict(zip(regions, LABEL_WORDS))
    return _finalise(
        "continent-label",
        "Country",
        "Group",
        [(i["name"], word[i["region"]], [word[r] for r in regions if r != i["region"]]) for i in infos],
        "countryinfo regions renamed by arbitrary words",
    )


def get_task(name: str) -> QATask:
    """The task called ``name`` (one of :data:`QA_TASKS`)."""
    builders = {
        "capital": capital_task,
        "antonym": antonym_task,
        "continent": continent_task,
        "demonym": demonym_task,
        "continent-label": continent_label_task,
    }
    if name not in builders:
        raise ConfigError("task", name, "one of " + ", ".join(QA_TASKS))
    return builders[name]()


def normalise_answer(text: str) -> str:
    """First line, lower-cased, stripped of spaces and trailing/leading punctuation."""
    first = text.strip().split("\n", 1)[0] if text.strip() else ""
    return first.strip().lower().strip(" .,;:!?\"'")


def exact_match(predictions: Sequence[str], answers: Sequence[str]) -> list[float]:
    """1.0 where the normalised prediction equals the normalised gold answer, else 0.0."""
    return [float(normalise_answer(p) == normalise_answer(a)) for p, a in zip(predictions, answers)]
