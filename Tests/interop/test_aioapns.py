"""Interop: the independent Python client aioapns against `apns-sim`.

Starts the simulator binary (APNS_SIM_BIN, default .build/debug/apns-sim) on a free port with a
freshly generated CA and a generated ES256 key, then sends token-authenticated notifications
with aioapns. aioapns has no host/port option, so its sandbox protocol class is pointed at the
simulator and its SSL context trusts the simulator's CA; certificate and hostname verification
stay on.
"""

import asyncio
import json
import os
import signal
import ssl
import subprocess
import time
from pathlib import Path

import pytest
from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsDevelopmentClientProtocol
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

KEY_ID = "INTEROP001"
TEAM_ID = "TEAMINTEROP"
BUNDLE_ID = "com.example.interop"
VALID_TOKEN = "a1" * 32
UNREGISTERED_TOKEN = "b2" * 32


@pytest.fixture(scope="module")
def simulator(tmp_path_factory):
    directory = tmp_path_factory.mktemp("apns-sim")
    key = ec.generate_private_key(ec.SECP256R1())
    key_path = directory / "key.p8"
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    binary = os.environ.get("APNS_SIM_BIN", ".build/debug/apns-sim")
    ports_path = directory / "ports.json"
    ca_path = directory / "ca.pem"
    process = subprocess.Popen(
        [
            binary, "--port", "0", "--control-port", "0", "--ports-out", str(ports_path),
            "--ca-out", str(ca_path), "--key", f"{KEY_ID}:{TEAM_ID}:{key_path}",
            "--bundle-id", BUNDLE_ID, "--unregistered", UNREGISTERED_TOKEN,
        ],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not ports_path.exists():
        assert process.poll() is None, "apns-sim exited"
        assert time.monotonic() < deadline, "apns-sim did not start"
        time.sleep(0.05)
    ports = json.loads(ports_path.read_text())
    yield {"port": ports["port"], "control_port": ports["controlPort"], "ca": ca_path, "key": key_path.read_text()}
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)


def make_client(simulator) -> APNs:
    APNsDevelopmentClientProtocol.APNS_SERVER = "localhost"
    APNsDevelopmentClientProtocol.APNS_PORT = simulator["port"]
    context = ssl.create_default_context(cafile=str(simulator["ca"]))
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    return APNs(
        key=simulator["key"], key_id=KEY_ID, team_id=TEAM_ID, topic=BUNDLE_ID, use_sandbox=True, ssl_context=context
    )


def send(simulator, requests):
    async def run():
        client = make_client(simulator)
        return [await client.send_notification(request) for request in requests]

    return asyncio.run(run())


def counters(simulator) -> dict:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{simulator['control_port']}/counters") as response:
        return json.loads(response.read())


def test_accepted(simulator):
    results = send(
        simulator,
        [NotificationRequest(device_token=VALID_TOKEN, message={"aps": {"alert": "hi"}}, push_type=PushType.ALERT)]
        * 3,
    )
    assert [result.status for result in results] == ["200"] * 3
    assert counters(simulator)["acceptedPerToken"][VALID_TOKEN] == 3


def test_unregistered_has_timestamp(simulator):
    (result,) = send(
        simulator,
        [NotificationRequest(device_token=UNREGISTERED_TOKEN, message={"aps": {"alert": "hi"}})],
    )
    assert result.status == "410"
    assert result.description == "Unregistered"
    assert isinstance(result.timestamp, int) and result.timestamp > 1_600_000_000_000


def test_payload_too_large(simulator):
    (result,) = send(
        simulator,
        [NotificationRequest(device_token=VALID_TOKEN, message={"aps": {"alert": "x" * 4100}})],
    )
    assert result.status == "413"
    assert result.description == "PayloadTooLarge"
