"""`c4sim.web(agent)` in a real browser: headless Debian Chromium driven
through chromedriver's WebDriver protocol (plain HTTP and JSON, no client
library), playing a whole game by clicks against a Python agent.

Skipped without Chromium unless ``C4SIM_REQUIRE_BROWSER=1`` (``.ci/run``
installs it and sets that)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM = "/usr/bin/chromium"


def browser_present() -> bool:
    present = os.path.exists(CHROMEDRIVER) and os.path.exists(CHROMIUM)
    if not present and os.environ.get("C4SIM_REQUIRE_BROWSER") == "1":
        pytest.fail("the browser test needs Debian's chromium and chromium-driver")
    return present


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} did not listen on {port}")
            time.sleep(0.05)


class WebDriver:
    """The few WebDriver commands the test needs."""

    def __init__(self, port: int):
        self.base = f"http://127.0.0.1:{port}"
        caps = {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=820,1100", "--force-prefers-reduced-motion"]}}}}
        for attempt in range(5):  # chromedriver may reset the first request on a busy machine
            try:
                self.session = self.call("POST", "/session", caps)["sessionId"]
                break
            except OSError:
                if attempt == 4:
                    raise
                time.sleep(0.5)

    def call(self, method: str, path: str, body: dict | None = None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())["value"]

    def s(self, method: str, path: str, body: dict | None = None):
        return self.call(method, f"/session/{self.session}{path}", body)

    def goto(self, url: str) -> None:
        self.s("POST", "/url", {"url": url})

    def find(self, css: str):
        try:
            found = self.s("POST", "/elements", {"using": "css selector", "value": css})
        except urllib.error.HTTPError:
            return []
        return [next(iter(e.values())) for e in found]

    def click(self, css: str) -> None:
        (el,) = self.find(css)[:1]
        self.s("POST", f"/element/{el}/click", {})

    def attr(self, css: str, name: str):
        els = self.find(css)
        if not els:
            return None
        kind = "attribute" if name.startswith("data-") else "property"
        return self.s("GET", f"/element/{els[0]}/{kind}/{name}")

    def wait_attr(self, css: str, name: str, ok, seconds: float = 30):
        deadline = time.monotonic() + seconds
        while True:
            v = self.attr(css, name)
            if v is not None and ok(v):
                return v
            if time.monotonic() > deadline:
                raise AssertionError(f"{css} [{name}] stayed {v!r}")
            time.sleep(0.05)

    def close(self) -> None:
        try:
            self.s("DELETE", "")
        except OSError:
            pass


AGENT = textwrap.dedent("""
    import sys
    import numpy as np
    import c4sim

    log = open(sys.argv[2], "a", buffering=1)

    def leftmost(obs):
        col = int(np.flatnonzero(obs["action_mask"])[0])
        log.write(f"{col}\\n")
        return col

    c4sim.web(leftmost, bind=sys.argv[1])
""")


def test_the_page_plays_a_game_against_a_python_agent(tmp_path: Path):
    if not browser_present():
        pytest.skip("no Chromium here")
    calls = tmp_path / "calls.txt"
    web_port, driver_port = free_port(), free_port()
    server = subprocess.Popen([sys.executable, "-c", AGENT, f"127.0.0.1:{web_port}", str(calls)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    driver = subprocess.Popen([CHROMEDRIVER, f"--port={driver_port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    b = None
    try:
        wait_listening(web_port, "c4sim.web")
        wait_listening(driver_port, "chromedriver")
        b = WebDriver(driver_port)
        b.goto(f"http://127.0.0.1:{web_port}/")
        b.wait_attr("#status", "textContent", lambda t: "New game" in t)
        b.click("#new-game")  # Red: the person; Yellow: the server's player, the agent
        for played in range(4):
            b.wait_attr("#board", "data-your-turn", lambda v: v == "true")
            b.click('#board button[data-col="3"]')
            if played < 3:
                want = ",".join(["3,0"] * (played + 1))
                b.wait_attr("#board", "data-moves", lambda m, w=want: m == w)
        b.wait_attr("#board", "data-over", lambda v: v == "true")
        assert b.attr("#status", "textContent") == "You win."
        assert calls.read_text().split() == ["0", "0", "0"], "the agent answered each of its three turns"
    finally:
        if b is not None:
            b.close()
        driver.kill()
        server.kill()
        server.wait()
        driver.wait()
