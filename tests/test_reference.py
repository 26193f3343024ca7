"""The shipped reference runs (the ``paper`` preset of each experiment, ``src/iclab/reference/``): every verdict,
re-judged by the current code, equals the committed snapshot ``tests/data/reference_verdicts.json`` — a changed
verdict is a reviewed diff (``make reference-snapshot`` rewrites it and prints what changed); each reference is a
``paper`` run with its provenance, opens read-only without side files, and all of them fit in 25 MB.

Then the reports: the paper-settings column beside each verdict ("—" where no reference is shipped), the counts of
both in the ledger, the paper-settings report alone (``iclab report --reference``) and its flag checks — on a
reference made here from a small fixture run (``ship_reference(..., root=tmp_path)``), never in ``src/``."""

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
from iclab.cli import main
from iclab.errors import RunFolderError
from iclab.experiments import Comparison, get_experiment, load_run
from iclab.claims._records import RAISED
from iclab.report import run_and_report, write_combined_report, write_reference_report
from iclab.report._reference import (
    REFERENCE_DIR,
    load_reference,
    reference_runs,
    reference_summary,
    reference_verdicts,
    ship_reference,
    verdict_changes,
)
from iclab.report._snapshot import write_snapshot
from iclab.runs import RunFolder, RunResult

SNAPSHOT = Path(__file__).parent / "data" / "reference_verdicts.json"
MAX_BYTES = 25 * 1024 * 1024


pytestmark = pytest.mark.usefixtures("fixture_experiments_env")


# --- the shipped reference runs ---------------------------------------------------------------------------------


def test_every_shipped_verdict_equals_the_committed_snapshot():
    changes = verdict_changes(json.loads(SNAPSHOT.read_text()))
    assert not changes, (
        "the current code judges the shipped reference runs differently from tests/data/reference_verdicts.json:\n  "
        + "\n  ".join(changes)
        + "\nif the change is intended, run `make reference-snapshot` and commit the diff for review"
    )


def test_no_shipped_verdict_is_a_judging_error():
    """A record whose judging raised reads "not judged" (:data:`iclab.claims._records.RAISED`) and the other
    claims are judged; on a real run that would be a bug the verdict snapshot cannot show (it stays "not judged")."""
    for name in reference_runs():
        rows = load_reference(name).rows
        assert not [cid for cid, c in rows.items() if RAISED in c.reason], name


def test_each_shipped_reference_is_a_paper_run_with_its_provenance():
    for name, folder in reference_runs().items():
        assert sorted(p.name for p in folder.iterdir()) == ["config.json", "reference.json", "results.sqlite"], name
        assert folder.name == f"{name}-paper" and json.loads((folder / "config.json").read_text())["preset"] == "paper"
        meta = json.loads((folder / "reference.json").read_text())
        assert meta["experiment"] == name and meta["preset"] == "paper", name
        assert re.fullmatch(r"[0-9a-f]{40}", str(meta["commit"])), (name, meta["commit"])
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}.*", str(meta.get("date") or meta["shipped"])), name
        assert meta["machine"] and meta["wall_seconds"] > 0 and meta["cells_done"] > 0, (name, meta)


def test_shipped_stores_open_read_only_without_side_files():
    for name, folder in reference_runs().items():
        before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
        run = load_run(folder)  # what the judge reads (its errors show in the snapshot test's diff)
        meta = json.loads((folder / "reference.json").read_text())
        assert run.experiment == name and run.preset == "paper", name
        assert (len(run.results), len(run.failed)) == (meta["cells_done"], meta["cells_failed"]), name
        assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before, name  # no -wal/-shm/-journal


def test_the_shipped_references_fit_in_25_mb():
    size = sum(p.stat().st_size for p in REFERENCE_DIR.rglob("*") if p.is_file())
    assert size <= MAX_BYTES, f"src/iclab/reference holds {size / 2**20:.1f} MB (at most 25 MB)"


# --- a reference made here from a fixture run ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def made_up(tmp_path_factory):
    """A ``paper`` fixture run shipped as the reference of fx_sweep under ``tmp/ref`` (fx_other: none), and a quick
    run of each fixture experiment to report beside it."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ICLAB_EXPERIMENT_MODULES", "fixtures_experiments")
    tmp = tmp_path_factory.mktemp("ref")
    kw = dict(executor="serial", progress=False)
    # few samples per cell: the paper-settings run judges the mean differently from the quick run
    paper = run_and_report("fx_sweep", "paper", {"n_samples": 2}, out=tmp / "paper", **kw)
    shipped = ship_reference(paper.path, root=tmp / "ref", cpu_seconds=1.5)
    quick = run_and_report("fx_sweep", out=tmp / "quick", **kw)
    other = run_and_report("fx_other", out=tmp / "other", **kw)
    mp.undo()
    return tmp, shipped, quick, other


def test_ship_reference_refuses_a_run_of_another_preset(made_up, tmp_path):
    tmp, _, quick, _ = made_up
    with pytest.raises(RunFolderError, match="a reference run is a 'paper' run"):
        ship_reference(quick.path, root=tmp_path)
    assert not any(tmp_path.iterdir())


def test_a_made_up_reference_is_judged_once_and_read_back(made_up):
    tmp, shipped, _, _ = made_up
    root = tmp / "ref"
    assert reference_runs(root) == {"fx_sweep": shipped} and reference_summary("fx_other", root) is None
    ref = load_reference("fx_sweep", root)
    assert ref.shipped and ref.meta["cpu_seconds"] == 1.5 and ref.meta["cells_done"] == 8
    assert set(ref.rows) == {"lognormal-mean", "grows-with-1/tau", "needs-many-cells"}
    first = reference_summary("fx_sweep", root)
    first["comparisons"][0]["verdict"] = "changed by a caller"  # each call gets its own copy of the cached rows
    assert reference_summary("fx_sweep", root)["comparisons"][0]["verdict"] != "changed by a caller"
    assert not load_reference("fx_other", root).shipped


def test_verdict_changes_and_the_snapshot_command(made_up, tmp_path):
    tmp, _, _, _ = made_up
    root = tmp / "ref"
    path = tmp_path / "verdicts.json"
    assert len(write_snapshot(path, root)) == 3  # every verdict is new to an empty snapshot
    snap = json.loads(path.read_text())
    assert snap == reference_verdicts(root) and verdict_changes(snap, root) == []
    was = snap["fx_sweep"]["grows-with-1/tau"]
    other = "agrees" if was != "agrees" else "disagrees"
    snap["fx_sweep"]["grows-with-1/tau"] = other
    (line,) = verdict_changes(snap, root)
    assert line.startswith(f"fx_sweep / grows-with-1/tau: {other} -> {was}")
    snap["gone"] = {"x": "agrees"}
    assert "gone: reference run no longer shipped (snapshot has 1 claims)" in verdict_changes(snap, root)


def _cells(md: str, header: str) -> list[list[str]]:
    """The rows of the markdown table whose header line is ``header``."""
    lines = md.splitlines()
    start = lines.index(header) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows


def test_the_combined_report_puts_the_paper_settings_verdict_beside_each(made_up, tmp_path):
    tmp, _, quick, other = made_up
    root = tmp / "ref"
    page = write_combined_report([quick.path, other.path], tmp_path / "report", reference_root=root)
    ref = load_reference("fx_sweep", root)
    mine = {c.id: c for c in map(lambda d: Comparison(**d), _summary(quick.path))}
    assert any(ref.rows[i].verdict != mine[i].verdict for i in mine)  # the column shows something of its own
    md = (tmp_path / "report" / "report.md").read_text()
    # fx_sweep's table: the last column is the reference's verdict with its measured value; fx_other's reads "—"
    header = (
        "| claim | kind | paper reports | iclab measures | test | statistic | verdict |"
        " paper-settings verdict (reference run) |"
    )
    sweep, other_rows = _cells(md, header), _cells(md[md.index("### Fixture sweep (fx_other)") :], header)
    for row, c in zip(sweep, mine.values()):
        r = ref.rows[c.id]
        assert row[-1].replace("**", "").startswith(f"{r.verdict}: measured {r.measured}"), row[-1]
    assert [row[-1] for row in other_rows] == ["— (no reference shipped)"] * 3
    assert "Paper-settings verdicts: the reference run of `fx_sweep`" in md and ", 8 cells done, 0 failed;" in md
    assert f"commit `{str(ref.meta['commit'])[:7]}`" in md
    assert "No paper-settings reference run is shipped for `fx_other`: its column reads —." in md
    # the ledger: both counts; headline claims show the paper-settings verdict first, the others this run's first
    ledger = md[md.index("## Claims ledger") : md.index("## Summary")]
    counts = {v: sum(r.verdict == v for r in ref.rows.values()) for v in ("agrees", "disagrees", "not judged")}
    assert (
        f"Reference runs (paper settings): {counts['agrees']} agree, {counts['disagrees']} disagree, "
        f"{counts['not judged']} not judged." in ledger
    )
    assert "Reference runs (paper settings): 0 agree, 0 disagree, 0 not judged; 3 with no reference verdict" in ledger
    (head,) = _cells(ledger, "| paper-settings verdict (reference run) | this run | claim | experiment | kind |")[:1]
    assert head[0] == ref.rows["lognormal-mean"].verdict and head[1] == mine["lognormal-mean"].verdict
    assert head[2].startswith("★")
    others = _cells(ledger, "| this run | paper-settings verdict (reference run) | claim | experiment | kind |")
    assert [r[1] for r in others[:2]] == [ref.rows[i].verdict for i in ("grows-with-1/tau", "needs-many-cells")]
    html = page.read_text()
    assert html.count("<th>paper-settings verdict (reference run)</th>") == 2 + 2 + 2  # ledger ×2 per paper, tables
    assert html.count("— (no reference shipped)") >= 3 + 3 + 1  # fx_other: ledger, table, summary
    csv = pd.read_csv(tmp_path / "report" / "comparisons.csv", keep_default_na=False)
    got = dict(zip(csv["experiment"] + "/" + csv["claim"], csv["paper_settings_verdict"]))
    assert got[f"fx_sweep/{ref.rows['lognormal-mean'].claim}"] == ref.rows["lognormal-mean"].verdict
    assert got[f"fx_other/{ref.rows['lognormal-mean'].claim}"] == "— (no reference shipped)"


def test_claims_only_the_reference_has_are_listed_in_the_ledger_and_the_csv(made_up, tmp_path):
    """A quick run that lacks two of the reference's claims (one headline): both appear in the headline table and
    the other claims' table of the ledger, and in comparisons.csv, marked "paper settings only" beside the
    reference's verdict; the counts include them."""
    tmp, _, quick, _ = made_up
    folder = tmp_path / "quick"
    shutil.copytree(quick.path, folder)
    summary = json.loads((folder / "summary.json").read_text())
    summary["comparisons"] = [c for c in summary["comparisons"] if c["id"] == "grows-with-1/tau"]
    (folder / "summary.json").write_text(json.dumps(summary))
    page = write_combined_report([folder], tmp_path / "report", reference_root=tmp / "ref")
    ref = load_reference("fx_sweep", tmp / "ref")
    md = (tmp_path / "report" / "report.md").read_text()
    ledger = md[md.index("## Claims ledger") : md.index("## Summary")]
    (head,) = _cells(ledger, "| paper-settings verdict (reference run) | this run | claim | experiment | kind |")
    assert head[:3] == [
        ref.rows["lognormal-mean"].verdict,
        "paper settings only",
        "★ " + ref.rows["lognormal-mean"].claim,
    ]
    others = _cells(ledger, "| this run | paper-settings verdict (reference run) | claim | experiment | kind |")
    assert [r[:3] for r in others] == [
        [summary["comparisons"][0]["verdict"], ref.rows["grows-with-1/tau"].verdict, "the mean falls as τ grows"],
        ["paper settings only", ref.rows["needs-many-cells"].verdict, ref.rows["needs-many-cells"].claim],
    ]
    assert "This run: 1 claims:" in ledger and "2 of them paper settings only" in ledger
    html = page.read_text()
    assert html.count("<td class='na'>paper settings only</td>") == 2
    assert {h[1:] for h in re.findall(r"href='(#[^']+)'", html)} <= set(re.findall(r"id='([^']+)'", html))
    csv = pd.read_csv(tmp_path / "report" / "comparisons.csv", keep_default_na=False).set_index("id")
    assert sorted(csv.index) == sorted(ref.rows)
    for cid in ("lognormal-mean", "needs-many-cells"):
        row = csv.loc[cid]
        assert row["verdict"] == "paper settings only" and row["measured"] == "" and row["statistic"] == ""
        assert row["paper_settings_verdict"] == ref.rows[cid].verdict and row["claim"] == ref.rows[cid].claim
    assert csv.loc["grows-with-1/tau", "verdict"] == summary["comparisons"][0]["verdict"]


def test_every_shipped_reference_claim_appears_in_a_report_of_runs_without_them(tmp_path):
    """Runs of every experiment with a shipped reference that judged no claim at all: the combined report still
    lists each of the reference runs' claims (the snapshot's, all of them) in the ledger and comparisons.csv."""
    snapshot = json.loads(SNAPSHOT.read_text())
    folders = []
    for name, ref in reference_runs().items():
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(ref / "config.json", folder / "config.json")
        (folder / "summary.json").write_text(json.dumps({"comparisons": []}))
        folders.append(folder)
    write_combined_report(folders, tmp_path / "report")
    csv = pd.read_csv(tmp_path / "report" / "comparisons.csv", keep_default_na=False)
    total = sum(map(len, snapshot.values()))
    assert len(csv) == total and (csv["verdict"] == "paper settings only").all()
    assert set(zip(csv["experiment"], csv["id"])) == {(e, cid) for e, ids in snapshot.items() for cid in ids}
    assert dict(zip(zip(csv["experiment"], csv["id"]), csv["paper_settings_verdict"])) == {
        (e, cid): v for e, ids in snapshot.items() for cid, v in ids.items()
    }
    md = (tmp_path / "report" / "report.md").read_text()
    ledger = md[md.index("## Claims ledger") : md.index("## Summary")]
    assert ledger.count("| paper settings only |") == total
    assert "This run: 0 claims:" in md and f"{total} of them paper settings only" in md


def _summary(run_dir: Path) -> list[dict]:
    return json.loads((run_dir / "summary.json").read_text())["comparisons"]


def test_the_run_report_has_the_column_and_says_where_none_is_shipped(made_up, tmp_path):
    from iclab.report import write_run_report

    tmp, _, quick, _ = made_up
    folder = tmp_path / "run"
    shutil.copytree(quick.path, folder)
    run = load_run(folder)
    result = RunResult(RunFolder(run.path, run.meta), run.config, run.results, run.failed, 0, 0)
    exp = get_experiment("fx_sweep")
    md = write_run_report(exp, run.config, result, load_reference("fx_sweep", tmp / "ref")).read_text()
    ref = load_reference("fx_sweep", tmp / "ref")
    assert "| verdict | paper-settings verdict (reference run) |" in md and "This run: 3 claims:" in md
    assert f"{ref.rows['grows-with-1/tau'].verdict}: measured {ref.rows['grows-with-1/tau'].measured}" in md
    md = write_run_report(exp, run.config, result).read_text()  # the package ships no fixture reference
    assert md.count("| — (no reference shipped) |") == 3 and "its column reads —" in md


def test_the_paper_settings_report_alone(made_up, tmp_path):
    tmp, _, _, _ = made_up
    page = write_reference_report(tmp_path / "reference", root=tmp / "ref")
    md = (tmp_path / "reference" / "report.md").read_text()
    ref = load_reference("fx_sweep", tmp / "ref")
    assert md.startswith("# iclab paper-settings report (reference runs)")
    assert "1 reference run(s)" in md and "No reference run is shipped for: " in md and "fx_other" in md
    (row,) = _cells(
        md,
        "| paper | experiment | commit | date | machine | device | wall time | CPU time | cells done "
        "| failed | agrees | disagrees | not judged |",
    )
    assert row[:3] == ["temperature", "fx_sweep", str(ref.meta["commit"])[:7]] and row[8:10] == ["8", "0"]
    assert "paper-settings verdict (reference run)" not in md  # the reference is the verdict itself
    html = page.read_text()
    assert "<title>iclab paper-settings report (reference runs)</title>" in html
    assert {h[1:] for h in re.findall(r"href='(#[^']+)'", html)} <= set(re.findall(r"id='([^']+)'", html))
    empty = write_reference_report(tmp_path / "none", root=tmp_path / "no-such-folder").read_text()
    assert "0 reference run(s)" in empty and "No reference run is shipped for: " in empty


def test_cli_report_reference_writes_the_shipped_report_and_refuses_bad_flags(tmp_path, capsys):
    assert main(["report", "--reference", "--root", str(tmp_path)]) == 0
    page = tmp_path / "reference" / "index.html"
    assert page.is_file() and (tmp_path / "reference" / "report.md").is_file()
    assert f"paper-settings report: {page}" in capsys.readouterr().out
    for name in reference_runs():
        assert f"id='{name}'" in page.read_text()
    ledger = (tmp_path / "reference" / "report.md").read_text()  # each paper's chance line, from the re-judging
    chance = re.findall(r"Expected agreements by chance under no effect: ([^ ]+)", ledger)
    assert chance and all(re.fullmatch(r"\d+\.\d\d", c) for c in chance), chance
    assert main(["report", "--reference", "--root", str(tmp_path)]) == 0  # its own folder: rewritten
    foreign = tmp_path / "mine"
    (foreign / "reference").mkdir(parents=True)
    (foreign / "reference" / "notes.txt").write_text("keep me")
    bad = [
        (["report", "--reference", "--root", str(foreign)], "holds files iclab did not write"),
        (["report", str(tmp_path), "--reference"], "invalid RUN_DIR="),
        (["report", "--reference", "--force"], "invalid --force="),
        (["report", "--root", str(tmp_path)], "invalid --root="),
        (["report"], "a run folder, or --reference"),
        (["report", "--reference", "--root", " "], "a folder path (not empty)"),
    ]
    for argv, message in bad:
        capsys.readouterr()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, err)
    assert (foreign / "reference" / "notes.txt").read_text() == "keep me" and len(list(foreign.rglob("*"))) == 2


def test_reproduce_says_where_the_paper_settings_verdicts_come_from(tmp_path, capsys):
    root = tmp_path / "runs"
    assert main(["reproduce", "--only", "fx_sweep", "--root", str(root), "--executor", "serial"]) == 0
    said = capsys.readouterr().out
    assert "paper-settings verdicts beside this run's: reference runs shipped for 0 of 1 experiment(s)" in said
    md = (root / "report" / "report.md").read_text()
    assert md.count("| — (no reference shipped) |") == 3 + 3 + 1  # ledger rows, comparison rows, summary row
    assert "Reference runs are shipped for 0 of these 1 experiment(s)." in md
