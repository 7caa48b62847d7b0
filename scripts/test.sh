#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test tier —
# unit, integration (real redis-server, embedded Kafka, separate consumer processes,
# the APNs client against the simulator over HTTP/2 + TLS), the schema agreement tests
# (Python jsonschema vs the Swift validator), the aioapns interoperability tests against
# apns-sim, and the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-deps.sh

swift build --build-tests
BIN_DIR=$(swift build --show-bin-path)

echo "== Swift tests"
PUSHFLEET_BIN_DIR="$BIN_DIR" swift test --skip-build

echo "== pushfleet demo (embedded stack)"
"$BIN_DIR/pushfleet" demo

echo "== Python tests (schema agreement, aioapns against apns-sim)"
PUSHFLEET_BIN="$BIN_DIR/pushfleet" APNS_SIM_BIN="$BIN_DIR/apns-sim" python3 -m pytest -q Tests/schema Tests/interop
