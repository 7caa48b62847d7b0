"""Online-first delivery end to end: the embedded stack with its worker and API, two gateways
(`gw-a`, `gw-b`) as processes of their own, and app instances played by the `websockets` library.

What it checks, with the job's report and the gateways' counters (never a timing):
- a device connected to a gateway gets its notification as a `push` frame; its ack ends the
  notification `online` (and counts a `delivered` receipt); APNs never gets it;
- a device not connected gets it through APNs at once; a connected device that never acks gets
  it through APNs after the ack timeout; one whose connection ends before the ack gets it through
  APNs when the connection ends (the gateway hands it back);
- presence lost in Redis (its keys deleted under connected devices): everything goes through
  APNs, nothing missed;
- a gateway SIGKILLed while its sends wait for acks loses nothing: their resend-buffer entries
  fall due and APNs takes them;
- each notification ends once: online + APNs outcomes add up to the audience;
- online-only: never APNs; a connected device that acks ends `online`, the others `inboxed`, and
  each gets its message replayed from its inbox (`"replay": true`) when it connects next; an ack
  of a replay counts `inbox-read` and removes it, so the next connection does not get it again;
  an online-only job whose expiration has passed is dead-lettered, not kept.

Needs PUSHFLEET_BIN (the pushfleet executable); without it the tests fail, they are never skipped.
"""

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import websockets
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "support"))
from pushfleet_stack import eventually, free_port, http, running, token  # noqa: E402

CONSUMING = re.compile(r".*gateway consuming push\.online")
ACK_TIMEOUT_MS = 1000
SHARED = {"PUSHFLEET__GATEWAY__ACK_TIMEOUT_MS": str(ACK_TIMEOUT_MS)}
NOTIFICATION = {"aps": {"alert": {"title": "Online", "body": "PushFleet"}}}


def start_gateway(stack, gateway_id):
    binary = os.environ["PUSHFLEET_BIN"]
    port, metrics = free_port(), free_port()
    process = stack.start(
        gateway_id,
        [binary, "gateway", "--config", stack.config, "--log-level", "info", "--port", str(port)],
        {**SHARED, "PUSHFLEET__GATEWAY__ID": gateway_id, "PUSHFLEET__METRICS__PORT": str(metrics)},
    )
    process.wait_for_line(CONSUMING, 60)
    process.url = f"ws://127.0.0.1:{port}/v1/apps/{stack.app}/connect"
    process.metrics = f"http://127.0.0.1:{metrics}/metrics"
    return process


@pytest.fixture(scope="module")
def online():
    with running(devices=100, environment=SHARED) as stack:
        stack.gw_a = start_gateway(stack, "gw-a")
        stack.gw_b = start_gateway(stack, "gw-b")
        yield stack


def connect_token(stack, device):
    status, answer = stack.api("POST", f"/v1/apps/{stack.app}/devices/{token(device)}/connect-token", None, key=stack.device_key)
    assert status == 201, answer
    return answer["connect-token"]


def presence(stack, device):
    status, answer = stack.api("GET", f"/v1/apps/{stack.app}/devices/{token(device)}/presence", key=stack.device_key)
    assert status == 200, answer
    return answer


def publish(stack, devices, delivery="online-first", expiration=None):
    headers = {"push-type": "alert"} if expiration is None else {"push-type": "alert", "expiration": expiration}
    status, answer = stack.api("POST", f"/v1/apps/{stack.app}/push", {
        "environment": "sandbox", "audience": {"tokens": [token(d) for d in devices]}, "notification": NOTIFICATION,
        "headers": headers, "delivery": delivery})
    assert status == 202, answer
    return answer["job"]


def report(stack, job):
    status, answer = stack.api("GET", f"/v1/apps/{stack.app}/jobs/{job}")
    assert status == 200, answer
    return answer


def complete(stack, job):
    return eventually(f"job {job} complete", lambda: (lambda r: r if r["state"] == "complete" else None)(report(stack, job)), 60, 0.2)


def counter(gateway, name, **labels):
    """A counter of a gateway's /metrics (0 when absent)."""
    status, text = http("GET", gateway.metrics)
    assert status == 200, text
    wanted = ",".join(f'{key}="{value}"' for key, value in labels.items())
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and (not wanted or wanted in line):
            total += float(line.rsplit(" ", 1)[1])
    return total


async def open_connection(stack, gateway, device):
    connection = await websockets.connect(gateway.url, additional_headers={"Authorization": f"Bearer {connect_token(stack, device)}"})
    assert json.loads(await connection.recv())["type"] == "welcome"
    return connection


async def online_on(stack, gateway_id, devices):
    await asyncio.to_thread(
        eventually, f"devices {devices} online on {gateway_id}",
        lambda: all(presence(stack, d).get("gateway") == gateway_id for d in devices), 10, 0.05)


async def next_push(connection):
    while True:
        frame = json.loads(await connection.recv())
        if frame["type"] == "push":
            return frame


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 90))


def test_connected_devices_get_it_online_the_others_through_apns(online):
    stack = online

    async def scenario():
        acking = await open_connection(stack, stack.gw_a, 11)
        silent = await open_connection(stack, stack.gw_b, 12)
        await online_on(stack, "gw-a", [11])
        await online_on(stack, "gw-b", [12])
        job = await asyncio.to_thread(publish, stack, [11, 12, 13])
        pushed = await next_push(acking)
        assert pushed["job"] == job
        assert pushed["push-type"] == "alert"
        # The payload as APNs would carry it (the API adds the job id for receipts).
        assert pushed["notification"] == {**NOTIFICATION, "pushfleet": {"job": job}}
        await acking.send(json.dumps({"type": "ack", "id": pushed["id"]}))
        unacked = await next_push(silent)
        assert unacked["job"] == job and unacked["id"] != pushed["id"]
        final = await asyncio.to_thread(complete, stack, job)
        await acking.close()
        await silent.close()
        return final

    final = run(scenario())
    # 11 acked online; 12 (never acked) and 13 (not connected) through APNs, each once.
    assert final["online-sent"] == 2, final
    assert final["online"] == 1, final
    assert final["accepted"] == 2 and final["sent"] == 2, final
    assert final["delivered"] == 1, final
    assert final["online"] + final["accepted"] + final["failed"] == 3, final
    assert counter(stack.gw_a, "pushfleet_gateway_online_sends_total", outcome="acked") >= 1
    assert counter(stack.gw_b, "pushfleet_gateway_online_sends_total", outcome="no-ack") >= 1


def test_a_connection_that_ends_before_its_ack_hands_the_send_back(online):
    stack = online
    before = counter(stack.gw_a, "pushfleet_gateway_online_sends_total", outcome="connection-lost")

    async def scenario():
        connection = await open_connection(stack, stack.gw_a, 14)
        await online_on(stack, "gw-a", [14])
        job = await asyncio.to_thread(publish, stack, [14])
        await next_push(connection)
        await connection.close()
        return await asyncio.to_thread(complete, stack, job)

    final = run(scenario())
    assert final["online-sent"] == 1 and final["online"] == 0, final
    assert final["accepted"] == 1, final
    assert counter(stack.gw_a, "pushfleet_gateway_online_sends_total", outcome="connection-lost") == before + 1


def test_an_ack_of_an_unknown_or_settled_send_changes_nothing(online):
    stack = online
    before = counter(stack.gw_a, "pushfleet_gateway_late_acks_total")

    async def scenario():
        connection = await open_connection(stack, stack.gw_a, 15)
        await connection.send(json.dumps({"type": "ack", "id": "no-such-job:1"}))
        await connection.send(json.dumps({"type": "ack"}))
        answer = json.loads(await connection.recv())
        assert answer == {"type": "error", "reason": "an ack needs the string 'id' of the push it acknowledges"}
        await connection.close()

    run(scenario())
    assert counter(stack.gw_a, "pushfleet_gateway_late_acks_total") == before + 1


def test_online_only_never_uses_apns_and_replays_the_inbox_on_connect(online):
    stack = online

    async def scenario():
        acking = await open_connection(stack, stack.gw_a, 21)
        silent = await open_connection(stack, stack.gw_b, 22)
        await online_on(stack, "gw-a", [21])
        await online_on(stack, "gw-b", [22])
        job = await asyncio.to_thread(publish, stack, [21, 22, 23], "online-only")
        pushed = await next_push(acking)
        assert pushed["job"] == job and "replay" not in pushed
        await acking.send(json.dumps({"type": "ack", "id": pushed["id"]}))
        await next_push(silent)
        final = await asyncio.to_thread(complete, stack, job)
        await silent.close()
        await acking.close()

        # 23 was offline: it connects and gets the message from its inbox; its ack reads it.
        late = await open_connection(stack, stack.gw_a, 23)
        replayed = await next_push(late)
        assert replayed["job"] == job and replayed["replay"] is True, replayed
        assert replayed["notification"] == {**NOTIFICATION, "pushfleet": {"job": job}}
        await late.send(json.dumps({"type": "ack", "id": replayed["id"]}))
        await asyncio.to_thread(eventually, "a read from the inbox", lambda: report(stack, job)["inbox-read"] == 1, 30, 0.1)
        await late.close()
        # 22 never acked: it reconnects (to the other gateway) and gets it again, from its inbox.
        again = await open_connection(stack, stack.gw_a, 22)
        replayed = await next_push(again)
        assert replayed["job"] == job and replayed["replay"] is True, replayed
        await again.send(json.dumps({"type": "ack", "id": replayed["id"]}))
        read = await asyncio.to_thread(eventually, "two reads", lambda: (lambda r: r if r["inbox-read"] == 2 else None)(report(stack, job)), 30, 0.1)
        await again.close()

        # What was read is gone: the next message 23 gets is a newer job's, not this one again.
        newer = await asyncio.to_thread(publish, stack, [23], "online-only")
        await asyncio.to_thread(complete, stack, newer)
        back = await open_connection(stack, stack.gw_b, 23)
        first = await next_push(back)
        assert first["job"] == newer and first["replay"] is True, first
        await back.close()
        return final, read

    final, read = run(scenario())
    assert final["delivery"] == "online-only", final
    assert final["online-sent"] == 2 and final["online"] == 1, final
    assert final["inboxed"] == 2, final
    assert final["sent"] == 0 and final["accepted"] == 0 and final["failed"] == 0, final
    assert final["online"] + final["inboxed"] == 3, final
    assert read["delivered"] == 3, read


def test_an_online_only_job_past_its_expiration_is_dead_lettered(online):
    stack = online
    job = publish(stack, [24, 25], "online-only", expiration=1)
    final = complete(stack, job)
    assert final["dead-lettered"] == 2 and final["inboxed"] == 0 and final["sent"] == 0, final


def online_count(stack):
    status, answer = stack.api("GET", f"/v1/apps/{stack.app}/online")
    assert status == 200, answer
    return answer


def delete_presence(stack):
    """Deletes every presence record of the stack's Redis (as a Redis failover without replicas
    would lose them); answers how many."""
    with open(stack.config, encoding="utf-8") as file:
        redis = yaml.safe_load(file).get("redis") or {}
    cli = ["redis-cli", "-h", str(redis.get("host", "127.0.0.1")), "-p", str(redis.get("port", 6379))]
    keys = subprocess.run([*cli, "--scan", "--pattern", "pf:{on:*"], check=True, capture_output=True, text=True).stdout.split()
    for key in keys:
        subprocess.run([*cli, "DEL", key], check=True, capture_output=True)
    return len(keys)


def test_presence_lost_sends_everything_through_apns(online):
    stack = online
    devices = [26, 27, 28]
    before = counter(stack.gw_a, "pushfleet_gateway_online_sends_total")

    async def scenario():
        connections = [await open_connection(stack, stack.gw_a, d) for d in devices]
        await online_on(stack, "gw-a", devices)
        # The gateways' counts (what the console's overview shows): gw-a's 3, gw-b's 0.
        await asyncio.to_thread(eventually, "the online count", lambda: online_count(stack) == {"devices": 3, "gateways": 2}, 10, 0.1)
        assert await asyncio.to_thread(delete_presence, stack) >= len(devices)
        assert not any(presence(stack, d)["online"] for d in devices)
        job = await asyncio.to_thread(publish, stack, devices)
        final = await asyncio.to_thread(complete, stack, job)
        for connection in connections:
            await connection.close()
        await asyncio.to_thread(eventually, "the online count back to 0", lambda: online_count(stack)["devices"] == 0, 10, 0.1)
        return final

    final = run(scenario())
    # The devices look offline: every notification goes through APNs at once, none is missed.
    assert final["online-sent"] == 0 and final["online"] == 0, final
    assert final["accepted"] == len(devices), final
    assert counter(stack.gw_a, "pushfleet_gateway_online_sends_total") == before


def test_a_gateway_killed_before_the_acks_loses_nothing(online):
    """Last in the module: it kills gw-b."""
    stack = online
    devices = list(range(31, 41))

    async def scenario():
        connections = [await open_connection(stack, stack.gw_b, d) for d in devices]
        await online_on(stack, "gw-b", devices)
        job = await asyncio.to_thread(publish, stack, devices)
        for connection in connections:
            await next_push(connection)
        stack.gw_b.process.send_signal(signal.SIGKILL)
        stack.gw_b.process.wait(timeout=30)
        return await asyncio.to_thread(complete, stack, job)

    final = run(scenario())
    # Every send was on gw-b when it died; each ends once, through APNs.
    assert final["online-sent"] == len(devices), final
    assert final["online"] == 0, final
    assert final["accepted"] == len(devices), final
