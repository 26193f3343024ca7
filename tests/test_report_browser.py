"""The combined report in real headless Chromium: it loads with no console errors, every figure renders
(naturalWidth > 0), and a screenshot is saved. The checker itself is shown to catch a broken page.

Chromium is required (``make install``, and so ``make test``, installs Debian's ``chromium``): a missing browser FAILS
this test, it never skips.
"""

import shutil
import struct

import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
from iclab.report import check_page, check_pages, write_combined_report
from iclab.report import run_and_report

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chromium():
    path = shutil.which("chromium")
    if path is None:
        pytest.fail(
            "chromium is not installed, but the HTML report must be checked in a real browser: "
            "`make install` installs Debian's chromium (apt-get install -y chromium as root)"
        )
    return path


def _png_size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_report_page_renders_in_chromium(chromium, tmp_path, monkeypatch):
    monkeypatch.setenv("ICLAB_EXPERIMENT_MODULES", "fixtures_experiments")
    runs = [
        run_and_report(name, overrides={"n_cells": 5}, out=tmp_path / name, executor="serial", progress=False)
        for name in ("fx_sweep", "fx_other")
    ]
    page = write_combined_report([r.path for r in runs], tmp_path / "report")
    shot = tmp_path / "report" / "screenshot.png"
    check = check_page(page, shot, chromium=chromium)
    assert check.errors == []
    assert len(check.images) == 2 and check.broken_images == []
    assert all(i["width"] > 100 and i["height"] > 100 for i in check.images)
    assert check.title == "iclab reproduction report"
    assert _png_size(shot) == (1280, 1600) and shot.stat().st_size > 20_000


def test_checker_catches_console_errors_and_broken_images(chromium, tmp_path):
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>bad</title>"
        "<link rel='icon' href='data:,'></head><body><img alt='gone' src='missing.png'>"
        "<script>console.error('boom'); no_such_function();</script></body></html>"
    )
    check = check_page(page, chromium=chromium)
    assert not check.ok and [i["alt"] for i in check.broken_images] == ["gone"]
    text = " | ".join(check.errors)
    assert "boom" in text and "no_such_function" in text and "missing.png" in text


def test_pages_checked_in_one_browser_keep_their_own_errors_and_screenshots(chromium, tmp_path):
    """``check_pages``: each page in its own tab of one browser; a page's console errors, images, title and value are
    its own (a clean page after a bad one, and before it, reads clean), as ``check_page`` alone gives them."""
    bad, good = tmp_path / "bad.html", tmp_path / "good.html"
    bad.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>bad</title><link rel='icon' href='data:,'></head>"
        "<body><img alt='gone' src='missing.png'><script>console.error('boom'); no_such_function();</script>"
        "</body></html>"
    )
    good.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>good</title><link rel='icon' href='data:,'></head>"
        "<body><p id='x'>fine</p></body></html>"
    )
    shots = [tmp_path / "s0.png", None, tmp_path / "s2.png"]
    checks = check_pages([good, bad, good], shots, chromium=chromium, evaluate="document.title.length")
    assert [c.title for c in checks] == ["good", "bad", "good"]
    assert [c.value for c in checks] == [4, 3, 4]
    assert checks[0].ok and checks[2].ok and checks[0].errors == checks[2].errors == []
    alone = check_page(bad, chromium=chromium, evaluate="document.title.length")
    assert sorted(checks[1].errors) == sorted(alone.errors) and "boom" in " | ".join(alone.errors)
    assert checks[1].broken_images == alone.broken_images != []
    assert _png_size(shots[0]) == _png_size(shots[2]) == (1280, 1600) and checks[1].screenshot is None
    with pytest.raises(ValueError, match="2 pages but 1 screenshots"):
        check_pages([good, bad], [None], chromium=chromium)
