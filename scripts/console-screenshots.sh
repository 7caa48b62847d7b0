#!/usr/bin/env bash
# Refreshes the console's screenshots in docs/console/ (the README shows them) by running the
# console's browser tests (Tests/console) against a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-deps.sh
swift build -c release -Xswiftc -enable-testing --product pushfleet
env PUSHFLEET_BIN="$(swift build -c release -Xswiftc -enable-testing --show-bin-path)/pushfleet" PUSHFLEET_CONSOLE_SCREENSHOTS=docs/console \
  python3 -m pytest -q Tests/console
