"""A tiny Chrome DevTools Protocol client over `--remote-debugging-pipe` (fd 3: commands in, fd 4:
responses and events out, each a JSON message terminated by NUL). Enough to drive headless Chromium
in tests without playwright or selenium."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
    "--autoplay-policy=no-user-gesture-required", "--remote-debugging-pipe",
]


class CDPError(RuntimeError):
    pass


def _high_pipe() -> tuple[int, int]:
    """A pipe whose fds are above 4, so wiring them onto fds 3 and 4 in the child cannot clobber one."""
    pair = []
    for fd in os.pipe():
        pair.append(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10))
        os.close(fd)
    return pair[0], pair[1]


class Browser:
    """One headless Chromium process; `call` sends a command and waits for its result."""

    def __init__(self, user_data_dir: Path, extra_flags: list[str] | None = None, window: str = "1280,900") -> None:
        cmd_r, self._cmd_w = _high_pipe()  # we write commands, Chromium reads fd 3
        self._out_r, out_w = _high_pipe()  # Chromium writes fd 4, we read
        user_data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = user_data_dir / "chromium.log"
        args = [str(CHROMIUM), *FLAGS, f"--user-data-dir={user_data_dir}", f"--window-size={window}",
                *(extra_flags or []), "about:blank"]

        def wire_fds() -> None:  # in the child, before exec
            os.dup2(cmd_r, 3)
            os.dup2(out_w, 4)

        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         pass_fds=(3, 4), preexec_fn=wire_fds)
        os.close(cmd_r)
        os.close(out_w)
        self._next_id = 0
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._results: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read_forever, daemon=True)
        self._reader.start()
        self.session_id: str | None = None

    def _read_forever(self) -> None:
        buf = b""
        while chunk := os.read(self._out_r, 1 << 16):
            buf += chunk
            *messages, buf = buf.split(b"\0")
            for raw in messages:
                msg = json.loads(raw)
                with self._cond:
                    if "id" in msg:
                        self._results[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0,
             session: bool = True) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            msg_id = self._next_id
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session and self.session_id:
            msg["sessionId"] = self.session_id
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while msg_id not in self._results:
                left = deadline - time.monotonic()
                if left <= 0 or not self._reader.is_alive():
                    raise CDPError(f"{method}: no answer within {timeout} s")
                self._cond.wait(left)
            result = self._results.pop(msg_id)
        if "error" in result:
            raise CDPError(f"{method}: {result['error']}")
        return result.get("result", {})

    def open_page(self, url: str) -> str:
        """Attach to a new tab showing `url`; later `call`s go to that page (its session id, for `use`)."""
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session_id = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                    session=False)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Page.navigate", {"url": url})
        return self.session_id

    def use(self, session_id: str) -> None:
        """Send later `call`s to the tab `open_page` returned this session id for."""
        self.session_id = session_id

    def evaluate(self, expression: str, user_gesture: bool = False, timeout: float = 30.0) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True, "userGesture": user_gesture}, timeout)
        if "exceptionDetails" in result:
            raise CDPError(f"page error: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0, poll: float = 0.1) -> Any:
        """Poll a JS expression until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"{expression!r} still falsy after {timeout} s")
            time.sleep(poll)

    def console_messages(self) -> list[str]:
        with self._lock:
            return [" ".join(str(a.get("value", a.get("description", ""))) for a in e["params"]["args"])
                    for e in self.events if e.get("method") == "Runtime.consoleAPICalled"]

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(CDPError, OSError):
            self.call("Browser.close", session=False, timeout=5)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        self._reader.join(5)
        os.close(self._out_r)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
