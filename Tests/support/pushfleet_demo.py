"""Starts `$PUSHFLEET_BIN demo --serve` for the Python suites that need a live server (the API
contract tests, the console's browser tests) and reads the line it prints once it serves:

    PUSHFLEET_API url=… app=APP key=KEY other-app=APP2 other-key=KEY2 device-key=DKEY console=…/console/

PUSHFLEET_BIN is required: without it those suites fail (they are never skipped).
"""

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

API_LINE = re.compile(
    r"^PUSHFLEET_API url=(?P<url>http://127\.0\.0\.1:\d+) app=(?P<app>\S+) key=(?P<key>\S+)"
    r" other-app=(?P<other_app>\S+) other-key=(?P<other_key>\S+) device-key=(?P<device_key>\S+)"
    r" console=(?P<console>http://127\.0\.0\.1:\d+/console/)\s*$"
)
STARTUP_TIMEOUT = 180
STOP_TIMEOUT = 30


class Server:
    """The serving demo: its process, what its PUSHFLEET_API line says, and its recent output."""

    def __init__(self, process, match, lines):
        self.process = process
        self.url = match["url"]
        self.app = match["app"]
        self.key = match["key"]
        self.other_app = match["other_app"]
        self.other_key = match["other_key"]
        self.device_key = match["device_key"]
        self.console = match["console"]
        self.lines = lines


def drain(stream, lines, found):
    """Reads `stream` to its end: each line into `lines` (the last 1,000 to 2,000 kept) and onto the
    queue `found`, then None onto it."""
    for line in stream:
        lines.append(line.rstrip("\n"))
        if len(lines) > 2000:
            del lines[:1000]
        found.put(line)
    found.put(None)


@contextlib.contextmanager
def serving(devices=200):
    """Runs `pushfleet demo --serve --devices N` until the block ends (then SIGTERM)."""
    binary = os.environ.get("PUSHFLEET_BIN")
    if not binary:
        pytest.fail("PUSHFLEET_BIN is not set: point it at the pushfleet executable (these tests cannot run without it)")
    process = subprocess.Popen([binary, "demo", "--serve", "--devices", str(devices)], stdout=subprocess.PIPE, text=True)
    lines = []
    found = queue.Queue()
    # Keeps reading stdout for the whole run, so the server never blocks on a full pipe.
    threading.Thread(target=drain, args=(process.stdout, lines, found), daemon=True).start()
    deadline = time.monotonic() + STARTUP_TIMEOUT
    match = None
    try:
        while match is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"no PUSHFLEET_API line within {STARTUP_TIMEOUT} s; output so far:\n" + "\n".join(lines))
            try:
                line = found.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                process.wait(timeout=STOP_TIMEOUT)
                pytest.fail(
                    f"pushfleet demo --serve exited with {process.returncode} before serving; output:\n" + "\n".join(lines)
                )
            if line.startswith("PUSHFLEET_API "):
                match = API_LINE.match(line.rstrip("\n"))
                if match is None:
                    pytest.fail(f"malformed PUSHFLEET_API line: {line!r}")
        yield Server(process, match, lines)
    finally:
        stop(process)


def stop(process, timeout=STOP_TIMEOUT):
    """SIGTERM, then SIGKILL after `timeout` seconds; the exit status."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def request(server, method, path, body=None, key=None, headers=None, content_type="application/json"):
    """Sends one request to the serving demo; returns (status, Content-Type, decoded body: JSON
    when it is JSON)."""
    return fetch(method, server.url + path, body, key=key, headers=headers, content_type=content_type)


def fetch(method, url, body=None, key=None, headers=None, content_type="application/json", timeout=30):
    """Sends one request to `url`; returns (status, Content-Type, decoded body: JSON when it is
    JSON). HTTP errors are answers, not exceptions."""
    data = None
    all_headers = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        all_headers["Content-Type"] = content_type
    if key is not None:
        all_headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(url, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            status, ctype, raw = response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        status, ctype, raw = error.code, error.headers.get("Content-Type", ""), error.read()
    if ctype.split(";")[0].strip() == "application/json":
        return status, ctype, json.loads(raw)
    return status, ctype, raw.decode("utf-8", "replace")
