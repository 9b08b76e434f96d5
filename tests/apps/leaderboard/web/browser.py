"""Debian's headless Chromium driven over the DevTools protocol: a tiny client on `websockets`
(no Playwright: it downloads its own browsers). Enough to open a page, wait for something in
it, run a script, and take a screenshot."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)


class Browser:
    """One headless Chromium with one page; `close()` ends the process."""

    def __init__(self, profile: Path, width: int = 1400, height: int = 1800) -> None:
        from websockets.sync.client import connect

        assert CHROMIUM is not None
        profile.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and len(port_file.read_text().splitlines()) >= 2):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.process.kill()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        self._ids = itertools.count(1)
        self._socket = connect(f"ws://127.0.0.1:{port}{path}", max_size=None).__enter__()
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def _call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"id": next(self._ids), "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._socket.send(json.dumps(message))
        while True:
            answer = json.loads(self._socket.recv(timeout=60))
            if answer.get("id") == message["id"]:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A DevTools command on the page."""
        return self._call(method, params, self._session)

    def open(self, url: str) -> None:
        self.call("Page.navigate", {"url": url})

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited when a promise)."""
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> Any:
        """Poll until `expression` is truthy; its value. Fails naming the expression."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for: {expression}")
            time.sleep(0.1)

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) in the middle of the element."""
        box = self.evaluate(
            f"""(() => {{
              const element = document.querySelector({selector!r});
              element.scrollIntoView({{block: 'center'}});
              const r = element.getBoundingClientRect();
              return [r.left + r.width / 2, r.top + r.height / 2];
            }})()"""
        )
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1},
            )

    def type(self, selector: str, text: str) -> None:
        """Click into the element and type `text` as a keyboard would."""
        self.click(selector)
        for character in text:
            self.call(
                "Input.dispatchKeyEvent", {"type": "keyDown", "text": character, "key": character}
            )
            self.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": character})

    def upload(self, selector: str, path: Path) -> None:
        """Choose `path` in the file input `selector`, as the file dialog would."""
        root = self.call("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        node = self.call("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        if not node:
            raise AssertionError(f"no element {selector}")
        self.call("DOM.setFileInputFiles", {"files": [str(path)], "nodeId": node})

    def download_into(self, folder: Path) -> None:
        """Save what the page downloads into `folder`."""
        self._call(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)}
        )

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the browser may close before it answers
            self._call("Browser.close")
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
