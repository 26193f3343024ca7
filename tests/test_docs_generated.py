"""The paper-settings verdicts in the docs are generated, never typed: ``docs/gen_reference.py`` re-judges the
reference runs shipped in ``src/iclab/reference/`` with the installed code and writes one block into every paper
note and the README. The committed blocks must equal what it writes now (a changed verdict, a new reference run or
a new claim makes this fail until the docs are regenerated), it must work for any subset of shipped runs, none
included, and no verdict count may be typed outside the blocks."""

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from iclab.experiments import paper_experiments
from iclab.report._reference import reference_runs, reference_summary

pytestmark = pytest.mark.slow  # judging the reference runs takes seconds each

ROOT = Path(__file__).resolve().parents[1]
REGENERATE = "run `python docs/gen_reference.py` (make docs-gen) and commit the result"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "docs" / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


@pytest.fixture(scope="module")
def generated():
    """The blocks from the shipped reference runs (judged once for the module)."""
    return GEN.blocks()


def _copy_docs(dest: Path) -> Path:
    (dest / "docs" / "papers").mkdir(parents=True)
    shutil.copy(ROOT / "README.md", dest / "README.md")
    shutil.copy(ROOT / "docs" / "calibration.md", dest / "docs" / "calibration.md")
    for note in (ROOT / "docs" / "papers").glob("*.md"):
        shutil.copy(note, dest / "docs" / "papers" / note.name)
    return dest


def test_committed_docs_equal_the_generated_blocks(generated):
    assert set(generated) == {
        "README.md",
        "docs/calibration.md",
        *(f"docs/papers/{e.paper}.md" for e in paper_experiments()),
    }
    assert GEN.stale(generated) == [], REGENERATE


def test_a_hand_edited_block_is_out_of_date_and_regenerated(generated, tmp_path):
    root = _copy_docs(tmp_path)
    note = root / "docs" / "papers" / "temperature.md"
    text = note.read_text()
    note.write_text(text.replace(GEN.BEGIN + "\n", GEN.BEGIN + "\n12 claims, typed by hand\n", 1))
    assert GEN.stale(generated, root) == ["docs/papers/temperature.md"]
    assert GEN.write(generated, root) == ["docs/papers/temperature.md"]
    assert note.read_text() == text and GEN.stale(generated, root) == []


def test_every_shipped_reference_verdict_is_in_its_note_and_counted_in_the_readme(generated):
    shipped = reference_runs()
    assert shipped, "no reference run is shipped"
    readme = generated["README.md"]
    for exp in paper_experiments():
        if exp.name not in shipped:
            continue
        summary = reference_summary(exp.name)
        rows = summary["comparisons"]
        note = generated[f"docs/papers/{exp.paper}.md"]
        section = note.split(f"### `{exp.name}`\n", 1)[1].split("\n### ", 1)[0]
        assert str(summary["meta"]["commit"])[:7] in section
        for row in rows:
            line = next(x for x in section.splitlines() if x.startswith(("| `", "| ★ `")) and f"`{row['id']}`:" in x)
            assert line.rstrip(" |").split("| ")[-1].replace("**", "").startswith(row["verdict"]), row["id"]
        n = {v: sum(r["verdict"] == v for r in rows) for v in ("agrees", "disagrees", "not judged")}
        assert f"| `{exp.name}` |" in readme
        cells = next(x for x in readme.splitlines() if x.startswith(f"| `{exp.name}` |")).strip(" |").split(" | ")
        assert cells[-4:] == [str(len(rows)), str(n["agrees"]), str(n["disagrees"]), str(n["not judged"])]


@pytest.mark.parametrize("ship", [(), ("temperature",)], ids=["none", "temperature-only"])
def test_any_subset_of_reference_runs_renders_and_names_the_missing_ones(tmp_path, ship):
    refs = tmp_path / "reference"
    refs.mkdir()
    for name in ship:
        shutil.copytree(reference_runs()[name], refs / f"{name}-paper")
    generated = GEN.blocks(refs)
    readme = generated["README.md"]
    for exp in paper_experiments():
        note = generated[f"docs/papers/{exp.paper}.md"]
        section = note.split(f"### `{exp.name}`\n", 1)[1].split("\n### ", 1)[0]
        ids = [c.id for c in exp.claims(exp.config("paper"))]
        assert all(f"`{i}`:" in section for i in ids), exp.name  # every declared claim, verdict or not
        row = next(x for x in readme.splitlines() if x.startswith(f"| `{exp.name}` |"))
        if exp.name in ship:
            assert "Reference run:" in section and GEN.NOT_SHIPPED not in section and GEN.NOT_SHIPPED not in row
        else:
            assert f"No reference run of `{exp.name}`" in section and section.count(GEN.NOT_SHIPPED) == len(ids)
            assert GEN.NOT_SHIPPED in row and f"| {len(ids)} |" in row


def test_a_file_without_markers_is_refused_and_left_alone(generated, tmp_path):
    root = _copy_docs(tmp_path)
    note = root / "docs" / "papers" / "ood.md"
    note.write_text(note.read_text().replace(GEN.END, ""))
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    with pytest.raises(SystemExit, match="ood.md: needs exactly one"):
        GEN.write(generated, root)
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before  # nothing written, not even the other files


# "12 claims: 5 agree", "3 agree, 1 disagrees", "14 not judged": verdict counts belong to the generated blocks.
COUNT = re.compile(r"\b\d+ claims?: \d+ agree|\b\d+ (?:agree|agrees|disagree|disagrees), \d+ (?:disagree|not judged)")


def test_no_verdict_count_is_typed_outside_the_generated_blocks():
    """In the README and the paper notes, the files whose paper-settings counts the generator writes."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs" / "papers").glob("*.md"))]:
        text = path.read_text()
        if GEN.BEGIN in text:
            text = text.split(GEN.BEGIN)[0] + text.split(GEN.END, 1)[1]
        found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in COUNT.finditer(text)]
    assert not found, "verdict counts typed by hand (the generated blocks give them): " + "; ".join(found)


def test_experiments_of_other_modules_stay_out_of_the_generated_docs(monkeypatch):
    """A user's or a test's experiment (``ICLAB_EXPERIMENT_MODULES``, here the fixtures) is registered beside the
    paper packages but has no reference run and no paper note: the generated docs cover the paper packages only."""
    import fixtures_experiments  # noqa: F401 - registers fx_sweep and fx_other

    from iclab.experiments import all_experiments

    names = {e.name for e in paper_experiments()}
    assert {"fx_sweep", "fx_other"} <= {e.name for e in all_experiments()}
    assert not names & {"fx_sweep", "fx_other"} and "temperature" in names


def test_the_calibration_table_lists_every_shipped_claim(generated):
    """docs/calibration.md's generated table has one row per claim of every shipped reference run, each simulated
    (a rate) or marked as having no test record; none is silently dropped."""
    block = generated["docs/calibration.md"]
    for name in reference_runs():
        ids = [c["id"] for c in reference_summary(name)["comparisons"]]
        rows = [line for line in block.splitlines() if line.startswith(f"| `{name}` |")]
        assert len(rows) == len(ids) and all(f"`{i}`" in "".join(rows) for i in ids)
