"""Generated blocks in the docs: the text between a begin and an end marker of a file, rewritten in place from the
code and the runs (``docs/gen_reference.py``'s verdict blocks, ``docs/gen_measured.py``'s performance numbers).
A file without exactly one pair of a block's markers, in order, is refused and never rewritten."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

#: ``(text of a file, what to put in it, its path) -> the new text``
Splice = Callable[[str, Any, Path], str]


def splice(text: str, begin: str, end: str, block: str, path: Path) -> str:
    """``text`` with the part between ``begin`` and ``end`` replaced by ``block``; refused (``SystemExit``) unless
    there is exactly one pair of them, in order."""
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise SystemExit(
            f"{path}: needs exactly one {begin} … {end} pair (found {text.count(begin)}/{text.count(end)})"
        )
    head, rest = text.split(begin)
    return head + begin + block + end + rest.split(end, 1)[1]


def stale(generated: dict[str, Any], put: Splice, root: Path) -> list[str]:
    """The files under ``root`` (``generated``'s keys) whose text ``put`` would change."""
    return [name for name, value in generated.items() if _new(root / name, value, put) != (root / name).read_text()]


def write(generated: dict[str, Any], put: Splice, root: Path) -> list[str]:
    """Rewrite the out-of-date files under ``root``; return their names. Every file is checked for its markers before
    any is written."""
    new = {name: _new(root / name, value, put) for name, value in generated.items()}
    changed = [name for name, text in new.items() if text != (root / name).read_text()]
    for name in changed:
        (root / name).write_text(new[name])
    return changed


def _new(path: Path, value: Any, put: Splice) -> str:
    return put(path.read_text(), value, path)
