"""The online channel against real WebSocket clients: the embedded stack, the API and
`pushfleet gateway` as processes of their own, and app instances played by the `websockets`
library (PyPI) and, where a client must misbehave in ways that library refuses to (never answer
a ping, send an unmasked or oversized frame), by a raw socket speaking RFC 6455 by hand.

What it checks: a connect token from the API opens a connection (welcome, presence online in the
API, pings on the heartbeat interval); every refusal closes with its code and reason (no token, a
forged or expired token, another app's token, an unknown app, a binary frame, a frame too large,
too many frames, no pong within the idle timeout); a bad frame leaves the gateway serving others;
a device connecting again replaces its older connection; a closed connection's presence goes;
SIGTERM drains every client with 1001 and releases their presence.

Needs PUSHFLEET_BIN (the pushfleet executable); without it the tests fail, they are never skipped.
"""

import asyncio
import base64
import json
import os
import re
import socket
import struct
import sys
import time
from pathlib import Path

import pytest
import websockets
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "support"))
from pushfleet_stack import eventually, free_port, http, running, token  # noqa: E402

LISTENING = re.compile(r".*gateway listening")
PING_SECONDS = 1
IDLE_SECONDS = 3
GATEWAY_ENVIRONMENT = {
    "PUSHFLEET__GATEWAY__PING_INTERVAL_SECONDS": str(PING_SECONDS),
    "PUSHFLEET__GATEWAY__IDLE_TIMEOUT_SECONDS": str(IDLE_SECONDS),
    "PUSHFLEET__GATEWAY__MAX_FRAME_BYTES": "1024",
    "PUSHFLEET__GATEWAY__MESSAGES_PER_SECOND": "5",
    "PUSHFLEET__GATEWAY__MESSAGE_BURST": "10",
}


@pytest.fixture(scope="module")
def online():
    """The stack with its API and one gateway (id `gw-a`), for the whole module."""
    with running(devices=100) as stack:
        binary = os.environ["PUSHFLEET_BIN"]
        port = free_port()
        gateway = stack.start(
            "gateway",
            [binary, "gateway", "--config", stack.config, "--log-level", "info", "--port", str(port)],
            {**GATEWAY_ENVIRONMENT, "PUSHFLEET__GATEWAY__ID": "gw-a"},
        )
        gateway.wait_for_line(LISTENING, 60)
        stack.gateway = gateway
        stack.gateway_url = f"ws://127.0.0.1:{port}"
        stack.gateway_port = port
        with open(stack.config, encoding="utf-8") as file:
            stack.other_app = next(app for app in yaml.safe_load(file)["apps"] if app != stack.app)
        yield stack


def connect_token(stack, device, body=None):
    status, answer = stack.api("POST", f"/v1/apps/{stack.app}/devices/{token(device)}/connect-token", body, key=stack.device_key)
    assert status == 201, answer
    assert answer["path"] == f"/v1/apps/{stack.app}/connect"
    assert answer["token"] == token(device)
    return answer["connect-token"]


def presence(stack, device):
    status, answer = stack.api("GET", f"/v1/apps/{stack.app}/devices/{token(device)}/presence", key=stack.device_key)
    assert status == 200, answer
    return answer


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


async def closed_with(connection):
    """(code, reason) of the close the gateway sends, after reading whatever came before it."""
    try:
        while True:
            await connection.recv()
    except websockets.ConnectionClosed as closed:
        assert closed.rcvd is not None, f"the connection ended without a close frame: {closed!r}"
        return closed.rcvd.code, closed.rcvd.reason


def test_connect_token_opens_a_connection_and_presence_follows_it(online):
    stack = online

    async def scenario():
        url = f"{stack.gateway_url}/v1/apps/{stack.app}/connect"
        headers = {"Authorization": f"Bearer {connect_token(stack, 1)}"}
        async with websockets.connect(url, additional_headers=headers) as connection:
            welcome = json.loads(await connection.recv())
            assert welcome["type"] == "welcome"
            assert welcome["gateway"] == "gw-a"
            assert welcome["ping-interval-seconds"] == PING_SECONDS
            assert welcome["idle-timeout-seconds"] == IDLE_SECONDS
            online_now = await asyncio.to_thread(eventually, "presence online", lambda: presence(stack, 1)["online"], 10, 0.1)
            assert online_now is True
            assert presence(stack, 1)["gateway"] == "gw-a"
            # An unknown message type is answered, and the connection stays.
            await connection.send(json.dumps({"type": "hello"}))
            answer = json.loads(await connection.recv())
            assert answer == {"type": "error", "reason": "unknown message type 'hello'"}
            # Past the idle timeout the library's pongs keep the connection open.
            await asyncio.sleep(IDLE_SECONDS + 1)
            await connection.ping()
        # Closed by the client: the presence goes.
        await asyncio.to_thread(eventually, "presence offline", lambda: not presence(stack, 1)["online"], 10, 0.1)

    run(scenario())
    # A token in the query opens the same (browsers cannot set headers).
    async def query():
        url = f"{stack.gateway_url}/v1/apps/{stack.app}/connect?token={connect_token(stack, 2)}"
        async with websockets.connect(url) as connection:
            assert json.loads(await connection.recv())["type"] == "welcome"

    run(query())


def test_refusals_close_with_their_code_and_reason(online):
    stack = online
    app_url = f"{stack.gateway_url}/v1/apps/{stack.app}/connect"

    async def refused(url, headers=None):
        async with websockets.connect(url, additional_headers=headers or {}) as connection:
            return await closed_with(connection)

    async def scenario():
        assert await refused(app_url) == (4001, "a valid connect token is required")
        assert await refused(app_url, {"Authorization": "Bearer v1.AAAA.AAAA"}) == (4001, "a valid connect token is required")
        real = connect_token(stack, 3)
        version, claims, mac = real.split(".")
        forged_claims = base64.urlsafe_b64encode(f"{stack.app}\n{token(4)}\n99999999999".encode()).rstrip(b"=").decode()
        assert await refused(app_url, {"Authorization": f"Bearer {version}.{forged_claims}.{mac}"}) == (
            4001, "a valid connect token is required")
        other_app_url = f"{stack.gateway_url}/v1/apps/{stack.other_app}/connect"
        assert await refused(other_app_url, {"Authorization": f"Bearer {real}"}) == (4003, "connect token issued for another app")
        assert await refused(f"{stack.gateway_url}/v1/apps/nope/connect", {"Authorization": f"Bearer {real}"}) == (4004, "unknown app")
        short = connect_token(stack, 5, {"ttl-seconds": 1})
        await asyncio.sleep(2.2)
        assert await refused(app_url, {"Authorization": f"Bearer {short}"}) == (4002, "connect token expired")

        async def opened(device):
            connection = await websockets.connect(app_url, additional_headers={"Authorization": f"Bearer {connect_token(stack, device)}"})
            assert json.loads(await connection.recv())["type"] == "welcome"
            return connection

        connection = await opened(6)
        await connection.send(b"\x00\x01")
        assert await closed_with(connection) == (1003, "binary frames are not accepted: send JSON text")
        connection = await opened(7)
        await connection.send("not json")
        assert await closed_with(connection) == (1007, "not a PushFleet message: not JSON")
        connection = await opened(8)
        try:
            for _ in range(30):
                await connection.send(json.dumps({"type": "hello"}))
        except websockets.ConnectionClosed:
            pass  # the close came while frames were still going out
        code, reason = await closed_with(connection)
        assert (code, reason) == (4029, "too many frames: slow down")
        # None of that took the gateway down: a new connection is welcomed.
        connection = await opened(9)
        await connection.close()

    run(scenario())
    assert stack.gateway.process.poll() is None, stack.gateway.output()


def test_plain_http_requests_are_answered_with_the_apis_error_shape(online):
    base = f"http://127.0.0.1:{online.gateway_port}"
    status, answer = http("GET", f"{base}/healthz")
    assert status == 404
    assert answer["error"]["code"] == "not-found" and "/v1/apps/{app}/connect" in answer["error"]["message"]
    status, answer = http("GET", f"{base}/v1/apps/{online.app}/connect")
    assert status == 426
    assert answer["error"]["code"] == "upgrade-required"


def raw_connect(stack, device):
    """A hand-made WebSocket client: the upgrade request, then the socket (nothing answered)."""
    sock = socket.create_connection(("127.0.0.1", stack.gateway_port), timeout=20)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET /v1/apps/{stack.app}/connect HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {connect_token(stack, device)}\r\n\r\n"
    )
    sock.sendall(request.encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def read_frame(sock):
    """(opcode, payload) of the next server frame."""
    def exactly(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            assert chunk, "the gateway closed the socket before the frame"
            data += chunk
        return data

    first, second = exactly(2)
    length = second & 0x7F
    if length == 126:
        length = struct.unpack(">H", exactly(2))[0]
    elif length == 127:
        length = struct.unpack(">Q", exactly(8))[0]
    assert not second & 0x80, "a server frame must not be masked"
    return first & 0x0F, exactly(length)


def masked_frame(opcode, payload):
    mask = os.urandom(4)
    length = len(payload)
    header = bytes([0x80 | opcode])
    if length < 126:
        header += bytes([0x80 | length])
    else:
        header += bytes([0x80 | 126]) + struct.pack(">H", length)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def frames_until_close(sock):
    """The opcodes read, and the close frame's (code, reason)."""
    opcodes = []
    while True:
        opcode, payload = read_frame(sock)
        opcodes.append(opcode)
        if opcode == 0x8:
            return opcodes, (struct.unpack(">H", payload[:2])[0], payload[2:].decode())


def test_a_client_that_never_answers_pings_is_closed_at_the_idle_timeout(online):
    sock = raw_connect(online, 10)
    started = time.monotonic()
    opcode, payload = read_frame(sock)
    assert opcode == 0x1 and json.loads(payload)["type"] == "welcome"
    opcodes, close = frames_until_close(sock)
    elapsed = time.monotonic() - started
    assert close == (4008, "idle timeout: no frame or pong received")
    assert opcodes.count(0x9) >= 1, opcodes  # pinged before
    assert elapsed >= IDLE_SECONDS, elapsed
    sock.close()


def test_oversized_and_fragmented_frames_close_with_their_code(online):
    sock = raw_connect(online, 11)
    assert read_frame(sock)[0] == 0x1
    sock.sendall(masked_frame(0x1, b"x" * 2000))
    assert frames_until_close(sock)[1] == (1009, "frame larger than 1024 bytes")
    sock.close()

    sock = raw_connect(online, 12)
    assert read_frame(sock)[0] == 0x1
    unfinished = bytearray(masked_frame(0x1, b'{"type":'))
    unfinished[0] &= 0x7F  # FIN cleared: the first fragment of a message
    sock.sendall(bytes(unfinished))
    assert frames_until_close(sock)[1] == (1003, "fragmented messages are not accepted: send each message in one frame")
    sock.close()


def test_a_device_connecting_again_replaces_its_older_connection(online):
    stack = online

    async def scenario():
        url = f"{stack.gateway_url}/v1/apps/{stack.app}/connect"
        first = await websockets.connect(url, additional_headers={"Authorization": f"Bearer {connect_token(stack, 13)}"})
        welcome = json.loads(await first.recv())
        second = await websockets.connect(url, additional_headers={"Authorization": f"Bearer {connect_token(stack, 13)}"})
        newer = json.loads(await second.recv())
        assert int(newer["connection"]) > int(welcome["connection"])
        assert await closed_with(first) == (4009, "replaced by a newer connection of this device")
        # The older connection's end does not take the newer one's presence. Presence changes are
        # written in order, so once a later connection's release shows, the older one's end
        # (had it released anything) has been written too.
        await asyncio.to_thread(eventually, "device 13 online", lambda: presence(stack, 13)["online"], 10, 0.1)
        later = await websockets.connect(url, additional_headers={"Authorization": f"Bearer {connect_token(stack, 14)}"})
        assert json.loads(await later.recv())["type"] == "welcome"
        await asyncio.to_thread(eventually, "device 14 online", lambda: presence(stack, 14)["online"], 10, 0.1)
        await later.close()
        await asyncio.to_thread(eventually, "device 14 offline", lambda: not presence(stack, 14)["online"], 10, 0.1)
        assert presence(stack, 13) == {"token": token(13), "online": True, "gateway": "gw-a"}
        await second.close()

    run(scenario())


def test_sigterm_drains_every_client_with_1001_and_releases_presence(online):
    """Last in the module: it stops the gateway."""
    stack = online

    async def scenario():
        url = f"{stack.gateway_url}/v1/apps/{stack.app}/connect"
        connections = []
        for device in range(20, 30):
            connection = await websockets.connect(url, additional_headers={"Authorization": f"Bearer {connect_token(stack, device)}"})
            assert json.loads(await connection.recv())["type"] == "welcome"
            connections.append(connection)
        await asyncio.to_thread(
            eventually, "ten devices online", lambda: all(presence(stack, d)["online"] for d in range(20, 30)), 10, 0.1)
        stack.gateway.process.terminate()
        closes = await asyncio.gather(*(closed_with(connection) for connection in connections))
        assert set(closes) == {(1001, "gateway stopping: reconnect")}

    run(scenario())
    assert stack.gateway.process.wait(timeout=30) == 0, stack.gateway.output()
    assert not any(presence(stack, d)["online"] for d in range(20, 30))
