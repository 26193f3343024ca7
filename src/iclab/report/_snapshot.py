"""``python -m iclab.report._snapshot PATH`` (``make reference-snapshot``): re-judge every shipped reference run with
the installed code and write ``{experiment: {claim id: verdict}}`` to PATH (``tests/data/reference_verdicts.json``),
printing each verdict that changed against the file's previous content — the lines a reviewer reads in the diff.
``tests/test_reference.py`` fails while the committed snapshot and the installed judge differ."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from iclab.files import write_text_atomic
from iclab.report._reference import reference_verdicts, verdict_changes

__all__ = ["write_snapshot"]


def write_snapshot(path: str | Path, root: Path | None = None) -> list[str]:
    """Write the verdict snapshot of the reference runs under ``root`` (default: the shipped ones) to ``path``;
    return the changed verdicts against the previous file (every verdict counts as new when there was none)."""
    path = Path(path)
    old = json.loads(path.read_text()) if path.is_file() else {}
    changes = verdict_changes(old, root)
    write_text_atomic(path, json.dumps(reference_verdicts(root), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return changes


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python -m iclab.report._snapshot PATH (e.g. tests/data/reference_verdicts.json)", file=sys.stderr)
        return 2
    changes = write_snapshot(argv[0])
    print("\n".join(changes) if changes else "no verdict changed")
    print(f"wrote {argv[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
