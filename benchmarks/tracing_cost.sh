#!/usr/bin/env bash
# The cost of tracing: the quick capacity benchmark's broadcast through one worker with tracing off,
# on at a 1% sample rate and on at 100%, each exporting to benchmarks/otlp_sink.py, in alternating
# rounds. Writes tracing.md and tracing.json to the results directory: worker CPU seconds per
# 100,000 notifications and the rate of every run, the medians per setting, and the spans the sink
# received (docs/benchmarks.md, "Tracing"). With a fourth argument, a `pushfleet` built without
# tracing runs too in every round ("before"): what tracing off costs against no tracing code at all.
# On demand, not in CI.
#
#   ./benchmarks/tracing_cost.sh [rounds=5] [devices=300000] [results=benchmarks/results] [pushfleet-before]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
DEVICES=${2:-300000}
RESULTS=${3:-benchmarks/results}
BEFORE=${4:-}
SETTINGS=(off 0.01 1)
if [[ -n $BEFORE ]]; then SETTINGS=(before off 0.01 1); fi
BIN_DIR=$(swift build -c release -Xswiftc -enable-testing --show-bin-path)
RUNS=$(mktemp -d)
trap 'rm -rf "$RUNS"' EXIT
mkdir -p "$RESULTS"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for round in $(seq 1 "$ROUNDS"); do
  for rate in "${SETTINGS[@]}"; do
    name="tracing-$rate-round$round"
    environment=()
    sink_pid=""
    binary="$BIN_DIR/pushfleet"
    if [[ $rate == before ]]; then binary=$BEFORE; fi
    if [[ $rate != off && $rate != before ]]; then
      python3 benchmarks/otlp_sink.py --port "$PORT" >"$RUNS/$name.sink" &
      sink_pid=$!
      environment=(PUSHFLEET__TRACING__OTLP_ENDPOINT="http://127.0.0.1:$PORT/v1/traces" PUSHFLEET__TRACING__SAMPLE_RATE="$rate")
    fi
    env "${environment[@]}" "$BIN_DIR/pushfleet-bench" capacity --quick --devices "$DEVICES" --workers 1 --name "$name" \
      --pushfleet "$binary" --results "$RUNS" >"$RUNS/$name.log" 2>&1
    if [[ -n $sink_pid ]]; then
      kill -TERM "$sink_pid"
      wait "$sink_pid" || true
    fi
    echo "round $round, tracing $rate: done"
  done
done
python3 - "$RUNS" "$RESULTS" "$ROUNDS" "$DEVICES" "${SETTINGS[@]}" <<'PY'
import json, os, statistics, sys
runs, results, rounds, devices = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
settings = sys.argv[5:]
rows, machine = [], None
for round in range(1, rounds + 1):
    for rate in settings:
        name = f"tracing-{rate}-round{round}"
        document = json.load(open(os.path.join(runs, name + ".json")))
        machine = document["machine"]
        run = document["result"]["runs"][0]
        spans = None
        sink = os.path.join(runs, name + ".sink")
        if os.path.exists(sink):
            totals = [json.loads(line) for line in open(sink) if line.startswith("{")]
            spans = totals[-1]["spans"] if totals else None
        rows.append({"round": round, "tracing": rate, "notificationsPerSecond": run["notificationsPerSecond"],
                     "workerCPUSecondsPer100k": run["workerCPUSecondsPer100k"], "spansExported": spans})
medians = {rate: statistics.median(r["workerCPUSecondsPer100k"] for r in rows if r["tracing"] == rate) for rate in settings}
json.dump({"machine": machine, "devices": devices, "rounds": rows, "medianWorkerCPUSecondsPer100k": medians},
          open(os.path.join(results, "tracing.json"), "w"), indent=2)
label = {"before": "no tracing code (before)", "off": "off", "0.01": "on, 1%", "1": "on, 100%"}
lines = [
    "# Tracing cost",
    "",
    f"{machine['cpuModel']}, {machine['cores']} cores, {machine['memoryGiB']} GiB, {machine['swiftVersion']}, {machine['date']}.",
    f"A {devices:,}-device broadcast through one worker (`pushfleet-bench capacity --quick`), spans exported over OTLP/HTTP",
    "to benchmarks/otlp_sink.py; settings alternate within each round (benchmarks/tracing_cost.sh).",
    "",
    "| tracing | median worker CPU s / 100k | vs off | runs (CPU s / 100k, notifications/s, spans) |",
    "|---|---|---|---|",
]
for rate in settings:
    mine = [r for r in rows if r["tracing"] == rate]
    detail = "; ".join(f"{r['workerCPUSecondsPer100k']:.2f}, {r['notificationsPerSecond']:.0f}/s, {r['spansExported'] if r['spansExported'] is not None else '-'}" for r in mine)
    lines.append(f"| {label[rate]} | {medians[rate]:.2f} | {medians[rate] / medians['off'] * 100 - 100:+.0f}% | {detail} |")
open(os.path.join(results, "tracing.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
