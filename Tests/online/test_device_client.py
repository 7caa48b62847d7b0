"""PushFleetClient, the Swift device library, against real gateways: `pushfleet-device` (the
library on its SwiftNIO transport) connects one device through connect tokens it asks the API
for, beside the embedded stack, its worker and API, and two gateways (`gw-a`, `gw-b`).

What it checks, from the client's own event lines and the jobs' reports (never a timing):
- the client connects to the first gateway it is given and acknowledges what it gets: an
  online-only message sent while it is connected ends `online`;
- its gateway SIGKILLed, the client sees the connection drop, reconnects to the other gateway by
  its backoff, and gets the next message there;
- a second device that was offline connects and gets the message kept in its inbox
  (`replay`), acknowledges it (`inbox-read`) and sends an `opened` receipt through the API;
- SIGTERM stops the client cleanly (its last event is `stopped`).

Needs PUSHFLEET_BIN and PUSHFLEET_DEVICE_BIN (the pushfleet and pushfleet-device executables);
without them the tests fail, they are never skipped.
"""

import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from pushfleet_stack import eventually, token  # noqa: E402
# The stack with two gateways (a module-scoped fixture: this module gets a stack of its own).
from test_online_delivery import complete, online, publish, report  # noqa: E402,F401


def event(name, **fields):
    """A pattern for one of pushfleet-device's JSON lines (keys sorted)."""
    wanted = "".join(f'.*"{key}":{json.dumps(value)}' for key, value in sorted(fields.items()))
    return re.compile(rf'^\{{.*"event":"{name}"{wanted}.*\}}$' if fields else rf'^\{{.*"event":"{name}".*\}}$')


def start_device(stack, device, gateways, *flags):
    binary = os.environ.get("PUSHFLEET_DEVICE_BIN")
    if not binary:
        pytest.fail("PUSHFLEET_DEVICE_BIN is not set: point it at the pushfleet-device executable")
    return stack.start(
        f"device-{device}",
        [binary, "--api", stack.api_url, "--app", stack.app, "--device", token(device), "--backoff-base-ms", "200",
         *[argument for gateway in gateways for argument in ("--gateway", gateway.url)], *flags],
        {"PUSHFLEET_DEVICE_KEY": stack.device_key})


def test_the_swift_client_acks_reconnects_to_another_gateway_and_replays_its_inbox(online):
    stack = online
    client = start_device(stack, 61, [stack.gw_a, stack.gw_b])
    client.wait_for_line(event("connected", gateway="gw-a"), 30)

    # Connected: an online-only message reaches it live, and its ack ends it online.
    first = publish(stack, [61, 62], "online-only")
    message = json.loads(client.wait_for_line(event("message", job=first), 30).string)
    assert message["replay"] is False and message["push-type"] == "alert", message
    assert message["notification"]["aps"]["alert"]["title"] == "Online", message
    done = complete(stack, first)
    assert done["online"] == 1 and done["inboxed"] == 1, done  # 62 is offline

    # Its gateway dies: it reconnects, by its backoff, to the other one, and gets what comes next there.
    stack.gw_a.process.send_signal(signal.SIGKILL)
    stack.gw_a.process.wait(timeout=30)
    dropped = json.loads(client.wait_for_line(event("disconnected"), 30).string)
    assert dropped["code"] is None and dropped["reconnect-in-ms"] >= 0, dropped
    client.wait_for_line(event("connected", gateway="gw-b"), 30)
    second = publish(stack, [61], "online-only")
    client.wait_for_line(event("message", job=second), 30)
    assert complete(stack, second)["online"] == 1

    # 62 connects: its inbox is replayed; it acks and reports the message opened.
    late = start_device(stack, 62, [stack.gw_b], "--opened")
    late.wait_for_line(event("connected", gateway="gw-b"), 30)
    replayed = json.loads(late.wait_for_line(event("message", job=first), 30).string)
    assert replayed["replay"] is True, replayed
    read = eventually("the replayed message read and opened",
                      lambda: (lambda r: r if r["inbox-read"] == 1 and r["opened"] == 1 else None)(report(stack, first)), 30, 0.1)
    assert read["delivered"] == 2, read

    # SIGTERM stops a client: its last event says so, and it exits 0.
    late.process.send_signal(signal.SIGTERM)
    late.wait_for_line(event("stopped"), 30)
    assert late.process.wait(timeout=30) == 0
    client.process.send_signal(signal.SIGTERM)
    client.wait_for_line(event("stopped"), 30)
    assert client.process.wait(timeout=30) == 0
