#!/usr/bin/env bash
# The main job: builds `pushfleet` and runs `pushfleet demo` on the embedded stack
# (embedded Kafka in process, a local redis-server). Arguments go to `pushfleet demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-deps.sh
swift build --product pushfleet
exec .build/debug/pushfleet demo "$@"
