"""Check an HTML report in real headless Chromium and take a screenshot.

Talks the Chrome DevTools Protocol over ``--remote-debugging-pipe`` (file descriptors 3 and 4, messages
separated by NUL bytes), so it needs nothing beyond the standard library and a ``chromium`` binary: it loads
the page from ``file://``, collects console errors and uncaught exceptions, reads every ``<img>``'s
``naturalWidth``/``naturalHeight`` after the ``load`` event, optionally evaluates one JavaScript expression
(awaiting its promise: e.g. MathJax's typesetting, ``tests/test_docs_math.py``), and saves a PNG screenshot.
:func:`check_pages` checks several pages in one browser, each in its own tab.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from iclab.settings import setting

__all__ = ["PageCheck", "check_page", "check_pages", "find_chromium"]

_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_IMAGES_JS = (
    "JSON.stringify(Array.from(document.images).map(i => ({alt: i.alt, complete: i.complete, "
    "width: i.naturalWidth, height: i.naturalHeight})))"
)


@dataclass
class PageCheck:
    """What the browser saw: console errors, images (alt, naturalWidth, naturalHeight), page title, and the value
    of ``check_page``'s ``evaluate`` expression."""

    errors: list[str] = field(default_factory=list)
    images: list[dict] = field(default_factory=list)
    title: str = ""
    screenshot: Path | None = None
    value: object = None

    @property
    def broken_images(self) -> list[dict]:
        return [i for i in self.images if not (i["complete"] and i["width"] > 0 and i["height"] > 0)]

    @property
    def ok(self) -> bool:
        return not self.errors and not self.broken_images


def find_chromium() -> str | None:
    """Path of a Chromium/Chrome binary on ``PATH`` (``ICLAB_CHROMIUM`` overrides), or None."""
    if setting("ICLAB_CHROMIUM"):
        return shutil.which(setting("ICLAB_CHROMIUM"))
    return next((p for p in map(shutil.which, _CANDIDATES) if p), None)


class _Pipe:
    """A minimal CDP client over the two pipes of ``--remote-debugging-pipe``."""

    def __init__(self, to_browser: int, from_browser: int, deadline: float):
        self.w, self.r, self.deadline = to_browser, from_browser, deadline
        self.buf, self.next_id, self.events = b"", 0, []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        reply = self.wait(lambda m: m.get("id") == self.next_id)
        if "error" in reply:
            raise RuntimeError(f"CDP {method} failed: {reply['error']}")
        return reply.get("result", {})

    def wait(self, pred) -> dict:
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "method" in msg:
                    self.events.append(msg)
                if pred(msg):
                    return msg
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise TimeoutError("headless chromium did not answer in time")
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise RuntimeError("headless chromium closed its DevTools pipe (crashed?)")
            self.buf += chunk


def _messages(events: list[dict], session: str) -> list[str]:
    """The errors among the events of the tab attached as ``session``."""
    out = []
    for ev in events:
        if ev.get("sessionId") != session:
            continue
        p = ev.get("params", {})
        if ev["method"] == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("uncaught: " + str(d.get("exception", {}).get("description") or d.get("text")))
        elif ev["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console.error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
        elif ev["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            out.append(f"{e.get('source')}: {e.get('text')} {e.get('url', '')}".strip())
    return out


def _chromium_args(binary: str, profile: str, width: int, height: int) -> list[str]:
    """The command line of a headless Chromium driven over ``--remote-debugging-pipe`` with its own profile."""
    return [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--no-first-run",
        "--no-default-browser-check",
        "--mute-audio",
        f"--user-data-dir={profile}",
        "--remote-debugging-pipe",
        f"--window-size={width},{height}",
        "about:blank",
    ]


def _inspect(
    cdp: "_Pipe", url: str, width: int, height: int, screenshot: str | Path | None, evaluate: str | None = None
) -> PageCheck:
    """Open ``url`` in a new tab of the browser behind ``cdp``: images, title, ``evaluate``'s value, console errors,
    a screenshot."""
    target = cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    sid = cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log"):
        cdp.send(f"{domain}.enable", session=sid)
    cdp.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        session=sid,
    )
    cdp.events.clear()
    cdp.send("Page.navigate", {"url": url}, session=sid)
    cdp.wait(lambda m: m.get("method") == "Page.loadEventFired")
    images = json.loads(
        cdp.send("Runtime.evaluate", {"expression": _IMAGES_JS, "returnByValue": True}, session=sid)["result"]["value"]
    )
    title = cdp.send("Runtime.evaluate", {"expression": "document.title", "returnByValue": True}, session=sid)[
        "result"
    ].get("value", "")
    result = PageCheck(images=images, title=title)
    if evaluate is not None:
        params = {"expression": evaluate, "returnByValue": True, "awaitPromise": True}
        result.value = cdp.send("Runtime.evaluate", params, session=sid)["result"].get("value")
    if screenshot is not None:
        png = cdp.send("Page.captureScreenshot", {"format": "png"}, session=sid)["data"]
        shot = Path(screenshot)
        shot.parent.mkdir(parents=True, exist_ok=True)
        shot.write_bytes(base64.b64decode(png))
        result.screenshot = shot
    result.errors = _messages(cdp.events, sid)
    cdp.send("Target.closeTarget", {"targetId": target})
    return result


def check_page(
    html: str | Path,
    screenshot: str | Path | None = None,
    *,
    width: int = 1280,
    height: int = 1600,
    timeout: float = 60.0,
    chromium: str | None = None,
    evaluate: str | None = None,
) -> PageCheck:
    """Load ``html`` in headless Chromium; return console errors and image sizes; optionally save a screenshot.

    ``evaluate``: a JavaScript expression run after the ``load`` event (a promise is awaited, before the screenshot);
    its JSON value is ``PageCheck.value``.

    Raises ``FileNotFoundError`` when no Chromium is installed.
    """
    shots = None if screenshot is None else [screenshot]
    return check_pages(
        [html], shots, width=width, height=height, timeout=timeout, chromium=chromium, evaluate=evaluate
    )[0]


def check_pages(
    pages: Sequence[str | Path],
    screenshots: Sequence[str | Path | None] | None = None,
    *,
    width: int = 1280,
    height: int = 1600,
    timeout: float = 60.0,
    chromium: str | None = None,
    evaluate: str | None = None,
) -> list[PageCheck]:
    """:func:`check_page` for each of ``pages`` in turn, in one browser: each page in a fresh tab that is closed
    before the next opens (so a page's console errors are its own), ``timeout`` seconds for each page; one
    browser start instead of one per page.

    Raises ``FileNotFoundError`` when no Chromium is installed.
    """
    binary = chromium or find_chromium()
    if binary is None:
        raise FileNotFoundError("chromium not found on PATH (Debian: apt-get install chromium)")
    shots = [None] * len(pages) if screenshots is None else list(screenshots)
    if len(shots) != len(pages):
        raise ValueError(f"{len(pages)} pages but {len(shots)} screenshots")
    to_r, to_w = os.pipe()  # we write -> browser reads on fd 3
    from_r, from_w = os.pipe()  # browser writes on fd 4 -> we read

    def _fds() -> None:  # in the child: put the pipe ends on fds 3 and 4
        a, b = os.dup(to_r), os.dup(from_w)
        os.dup2(a, 3)
        os.dup2(b, 4)

    with tempfile.TemporaryDirectory(prefix="iclab-chromium-") as profile:
        args = _chromium_args(binary, profile, width, height)
        log = open(Path(profile) / "chromium.log", "wb")
        proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=_fds, close_fds=False
        )  # our fds are CLOEXEC; 3, 4 are not
        os.close(to_r)
        os.close(from_w)
        cdp = _Pipe(to_w, from_r, time.monotonic() + timeout)
        try:
            results = []
            for page, shot in zip(pages, shots):
                cdp.deadline = time.monotonic() + timeout
                results.append(_inspect(cdp, Path(page).resolve().as_uri(), width, height, shot, evaluate))
            try:
                cdp.send("Browser.close")
            except (RuntimeError, TimeoutError, OSError):
                pass
            return results
        except (RuntimeError, TimeoutError) as exc:
            log.flush()
            tail = (Path(profile) / "chromium.log").read_text(errors="replace")[-1500:]
            raise RuntimeError(f"{exc}; chromium said:\n{tail}") from None
        finally:
            log.close()
            os.close(to_w)
            os.close(from_r)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
