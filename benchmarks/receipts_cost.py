#!/usr/bin/env python3
"""The cost of counting receipts, through the HTTP API.

Against `$PUSHFLEET_BIN demo --serve` (its embedded Redis and Kafka), with `wrk` as the client:
`POST /v1/apps/{app}/receipts` for a tag campaign,
- counted: every request names a registered device not seen before in the run or earlier runs,
  so each is counted (the job's receipts set and statistics, the app's and the tag's hour, and the
  device's own receipt hours);
- repeated: every request names the same device, so after the first none is counted and none
  writes an hour: the path as it was before the hour-of-day statistics;
- reference: `GET /healthz` in the same run, the server's HTTP ceiling on this machine.
Rounds alternate the three; the medians and their ratios go to receipts.md and receipts.json.
On demand, not in CI (docs/benchmarks.md).

    PUSHFLEET_BIN=.build/release/pushfleet python3 benchmarks/receipts_cost.py [--rounds 5] [--seconds 8] \
        [--before OTHER_PUSHFLEET --before-is "what it lacks"] [--results DIR]
"""

import argparse
import contextlib
import datetime
import json
import os
import pathlib
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "support"))
import pushfleet_demo  # noqa: E402

COUNTED = r"""
local counter = 0
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
function init(args)
  path, key, job, run, span = args[1], args[2], args[3], tonumber(args[4]), tonumber(args[5])
end
request = function()
  counter = counter + 1
  -- The demo's device n (`de` × 24, then n in 16 hex digits); each run and thread has its range.
  local token = string.rep("de", 24) .. string.format("%016x", ((run - 1) * 2 + id) * span + counter)
  local body = '{"job":"' .. job .. '","token":"' .. token .. '","event":"delivered"}'
  return wrk.format("POST", path, {["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json"}, body)
end
"""

REPEATED = r"""
function init(args)
  path, key, job = args[1], args[2], args[3]
  body = '{"job":"' .. job .. '","token":"' .. string.rep("ab", 32) .. '","event":"delivered"}'
end
request = function()
  return wrk.format("POST", path, {["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json"}, body)
end
"""

RESPONSES = r"""
done = function(summary, latency, requests)
  io.write(string.format("PF_RESULT requests=%d non2xx=%d errors=%d seconds=%.3f p99_us=%d\n",
    summary.requests, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration / 1e6, latency:percentile(99)))
end
"""


def machine():
    model = "unknown CPU"
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    memory = 0
    for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            memory = int(line.split()[1]) / 1024 / 1024
    return f"{model}, {os.cpu_count()} cores, {memory:.1f} GiB, {platform.platform()}"


def wrk(script, url, arguments, seconds, connections):
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as file:
        file.write(script + RESPONSES)
        path = file.name
    try:
        output = subprocess.run(
            ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "-s", path, url, "--", *arguments],
            check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    match = re.search(r"PF_RESULT requests=(\d+) non2xx=(\d+) errors=(\d+) seconds=([\d.]+) p99_us=(\d+)", output)
    if not match:
        raise SystemExit(f"wrk printed no result:\n{output}")
    requests, non2xx, errors, elapsed, p99 = match.groups()
    if int(non2xx) or int(errors):
        raise SystemExit(f"wrk saw {non2xx} non-2xx answers and {errors} errors:\n{output}")
    return {"per-second": int(requests) / float(elapsed), "requests": int(requests), "p99-ms": int(p99) / 1000}


def h2load(url, seconds, connections):
    output = subprocess.run(["h2load", "--h1", "-c", str(connections), "-t", "2", "-D", str(seconds), url],
                            check=True, capture_output=True, text=True).stdout
    match = re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", output)
    if not match:
        raise SystemExit(f"h2load printed no rate:\n{output}")
    return {"per-second": float(match.group(1))}


# The tag of the campaign receipts are posted for: no device carries it, so the campaign sends
# nothing while the rounds run, and its hours are counted for it.
TAG = "receipts-bench"


@contextlib.contextmanager
def serving(binary, devices):
    """`pushfleet demo --serve` of `binary` with `devices` devices, and a tag campaign to post
    receipts for: (server, job)."""
    saved = os.environ.get("PUSHFLEET_BIN")
    os.environ["PUSHFLEET_BIN"] = binary
    try:
        with pushfleet_demo.serving(devices=devices) as server:
            status, _, answer = pushfleet_demo.request(server, "POST", f"/v1/apps/{server.app}/push", {
                "environment": "sandbox", "audience": {"tags": {"any": [TAG]}},
                "notification": {"aps": {"alert": "receipts"}}, "headers": {"push-type": "alert"}}, key=server.key)
            if status != 202:
                raise SystemExit(f"the campaign was refused: {status} {answer}")
            yield server, answer["job"]
    finally:
        if saved is None:
            os.environ.pop("PUSHFLEET_BIN", None)
        else:
            os.environ["PUSHFLEET_BIN"] = saved


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--span", type=int, default=40_000,
                        help="devices registered per round and wrk thread (more than a thread posts in a round)")
    parser.add_argument("--before", help="another pushfleet (an earlier commit), measured alternately")
    parser.add_argument("--before-is", default="a build without the change measured",
                        help="what the --before build is, for the results")
    parser.add_argument("--results", default=str(ROOT / "benchmarks" / "results"))
    options = parser.parse_args()
    for tool in ("wrk", "h2load"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is missing: apt-get install -y {'wrk' if tool == 'wrk' else 'nghttp2-client'}")
    after = os.environ.get("PUSHFLEET_BIN")
    if not after:
        raise SystemExit("PUSHFLEET_BIN is required: the pushfleet to measure")
    builds = {"after": after} | ({"before": options.before} if options.before else {})
    runs = {f"{build} {kind}": [] for build in builds for kind in ("counted", "repeated")} | {"healthz": []}
    with contextlib.ExitStack() as stack:
        devices = options.rounds * 2 * options.span + 1
        served = {build: stack.enter_context(serving(binary, devices)) for build, binary in builds.items()}
        for round_number in range(1, options.rounds + 1):
            for build, (server, job) in served.items():
                receipts = f"{server.url}/v1/apps/{server.app}/receipts"
                # Each round's devices are new (a range of their own): every receipt is counted.
                arguments = [f"/v1/apps/{server.app}/receipts", server.key, job, str(round_number), str(options.span)]
                runs[f"{build} counted"].append(wrk(COUNTED, receipts, arguments, options.seconds, options.connections))
                runs[f"{build} repeated"].append(wrk(REPEATED, receipts, arguments, options.seconds, options.connections))
            runs["healthz"].append(h2load(f"{served['after'][0].url}/healthz", options.seconds, options.connections))
            print(f"round {round_number}: " + ", ".join(f"{name} {values[-1]['per-second']:.0f}/s" for name, values in runs.items()),
                  flush=True)
        server, _ = served["after"]
        _, _, hours = pushfleet_demo.request(server, "GET", f"/v1/apps/{server.app}/stats/hours?days=1&tag={TAG}", key=server.key)
        counted_hours = sum(cell["delivered"] for cell in hours["hours"])
        # The 501st device of each round and thread got one receipt (past the first hundred,
        # which the demo's own campaign posts receipts for, and not a multiple of 50, which the
        # demo uninstalls): its own hours say so.
        device_hours = []
        for round_number in range(1, options.rounds + 1):
            for thread in range(2):
                sample = ((round_number - 1) * 2 + thread) * options.span + 501
                status, _, device = pushfleet_demo.request(
                    server, "GET", f"/v1/apps/{server.app}/devices/{'de' * 24}{sample:016x}", key=server.key)
                device_hours.append((sample, status, sum(device.get("receipt-hours", {}).get("utc", []))))
    medians = {name: statistics.median(run["per-second"] for run in values) for name, values in runs.items()}
    counted_total = sum(run["requests"] for run in runs["after counted"])
    if counted_hours < counted_total:
        raise SystemExit(f"{counted_total} receipts were posted as new, and the tag's hours count {counted_hours} delivered")
    if any(count != 1 for _, _, count in device_hours):
        raise SystemExit(f"the 501st device of each round and thread should have one receipt in its hours "
                         f"(device, status, receipts): {device_hours}")
    result = {
        "machine": machine(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "rounds": options.rounds, "seconds": options.seconds, "connections": options.connections,
        "runs": runs, "medians": medians,
        "receipts-counted": counted_total, "delivered-in-the-tag-hours": counted_hours,
        "registered-devices": devices, "before-is": options.before_is if options.before else None,
    }
    if "before counted" in medians:
        result["counted-after-vs-before"] = medians["after counted"] / medians["before counted"]
    results = pathlib.Path(options.results)
    results.mkdir(parents=True, exist_ok=True)
    (results / "receipts.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# receipts", "",
        f"Machine: {result['machine']}, {result['date']}", "",
        f"`POST /v1/apps/{{app}}/receipts` through `pushfleet demo --serve` (embedded Redis and Kafka), wrk with 2 threads and "
        f"{options.connections} connections, {options.rounds} alternating rounds of {options.seconds} s; medians. "
        f"Counted: a new registered device each time (of {devices:,}), counted into the job's receipts, the app's and the tag's "
        "hour, and the device's receipt hours. "
        "Repeated: the same device each time, not counted after the first. "
        + (f"Before: {options.before_is}, served beside the one measured, in the same rounds. " if options.before else "")
        + "Reference: `GET /healthz` with h2load in the same run.", "",
        "| requests | per second (median) | p99 (ms, median) | rounds |", "|---|---:|---:|---|",
    ]
    for name in runs:
        if name == "healthz":
            continue
        lines.append(f"| {name} | {medians[name]:.0f} | {statistics.median(r['p99-ms'] for r in runs[name]):.1f} | "
                     + ", ".join(f"{r['per-second']:.0f}" for r in runs[name]) + " |")
    lines.append(f"| `GET /healthz` (h2load) | {medians['healthz']:.0f} | | "
                 + ", ".join(f"{r['per-second']:.0f}" for r in runs["healthz"]) + " |")
    lines.append("")
    if "counted-after-vs-before" in result:
        lines.append(f"Counted receipts after against before: {100 * result['counted-after-vs-before']:.0f}%.")
    lines += [f"Counted against `/healthz`: {100 * medians['after counted'] / medians['healthz']:.0f}%. {counted_total:,} receipts "
              f"posted as new to the build measured; its tag's hours read {counted_hours:,} delivered afterwards, and the 501st "
              f"device of each round and thread has 1 receipt in its own hours.", ""]
    (results / "receipts.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
