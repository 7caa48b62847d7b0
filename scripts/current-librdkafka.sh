#!/usr/bin/env bash
# Prints a directory holding a current librdkafka as `librdkafka.so.1`, for LD_LIBRARY_PATH.
# It is the library the confluent-kafka wheel ships (statically linked against its own SSL and
# compression libraries; scripts/ensure-deps.sh installs the wheel). The test runs on the Tansu
# broker load it because Debian 12's librdkafka 2.0.2 cannot read Tansu's ApiVersion answer;
# what the product links is unchanged (docs/operations.md, "Kafka brokers and librdkafka").
#
#   LD_LIBRARY_PATH=$(./scripts/current-librdkafka.sh) PUSHFLEET_TEST_KAFKA=tansu swift test ...
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
library=$("$PYTHON" - <<'PY'
import glob, os, confluent_kafka
libs = os.path.join(os.path.dirname(os.path.dirname(confluent_kafka.__file__)), "confluent_kafka.libs")
found = sorted(glob.glob(os.path.join(libs, "librdkafka*.so*")))
if not found:
    raise SystemExit(f"no librdkafka in {libs}: reinstall confluent-kafka from its manylinux wheel")
print(found[-1])
PY
)
directory=${1:-.build/librdkafka-current}
mkdir -p "$directory"
ln -sfn "$library" "$directory/librdkafka.so.1"
cd "$directory" && pwd
