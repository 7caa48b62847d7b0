#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test tier —
# unit, integration (real redis-server and real Redis Clusters, embedded Kafka, separate consumer processes,
# the APNs client against the simulator over HTTP/2 + TLS), the schema agreement tests
# (Python jsonschema vs the Swift validator), the aioapns interoperability tests against
# apns-sim, the demo, and the checks of deploy/ (linters and schemas, Tests/deploy).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-deps.sh

# Release mode with testability: the end-to-end tests push 100,000 notifications through
# SwiftNIO, swift-nio-http2 and the pipeline, which unoptimised builds run ~25x slower; the
# build takes a few minutes longer and the tests many minutes less.
BUILD_FLAGS=(-c release -Xswiftc -enable-testing)
swift build "${BUILD_FLAGS[@]}" --build-tests
BIN_DIR=$(swift build "${BUILD_FLAGS[@]}" --show-bin-path)

echo "== Swift tests"
PUSHFLEET_BIN_DIR="$BIN_DIR" swift test "${BUILD_FLAGS[@]}" --skip-build

echo "== the store suites again, on a Redis Cluster (each test starts its own, 3 masters)"
PUSHFLEET_TEST_REDIS=cluster PUSHFLEET_BIN_DIR="$BIN_DIR" swift test "${BUILD_FLAGS[@]}" --skip-build --filter PushStoreTests

echo "== pushfleet demo (embedded stack)"
"$BIN_DIR/pushfleet" demo

echo "== capacity benchmark, quick mode (100,000 devices; keeps the harness working)"
QUICK_RESULTS=$(mktemp -d)
"$BIN_DIR/pushfleet-bench" capacity --quick --pushfleet "$BIN_DIR/pushfleet" --results "$QUICK_RESULTS"
for file in capacity-quick.json capacity-quick.md capacity-quick.png; do
  test -s "$QUICK_RESULTS/$file" || { echo "the quick capacity benchmark did not write $file" >&2; exit 1; }
done
rm -rf "$QUICK_RESULTS"

echo "== Python tests (schema agreement, aioapns against apns-sim, deploy/ manifests, the API against schemas/openapi.yaml)"
PUSHFLEET_BIN="$BIN_DIR/pushfleet" APNS_SIM_BIN="$BIN_DIR/apns-sim" python3 -m pytest -q Tests/schema Tests/interop Tests/deploy Tests/api
