#!/usr/bin/env python3
"""Draws the capacity benchmark's chart: throughput over time per worker count (left) and the
distribution of job publish -> acceptance latency (right), from the JSON pushfleet-bench wrote.

    python3 benchmarks/plot_capacity.py benchmarks/results/capacity.json benchmarks/results/capacity.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(source: str, target: str) -> None:
    with open(source) as handle:
        envelope = json.load(handle)
    report = envelope["result"]
    machine = envelope.get("machine", {})
    figure, (throughput, latency) = plt.subplots(1, 2, figsize=(12, 4.5))
    for run in report["runs"]:
        label = f'{run["workers"]} worker(s)'
        samples = run["samples"]
        times = [sample["seconds"] for sample in samples]
        rates = []
        previous_time, previous_accepted = 0.0, 0
        for sample in samples:
            span = sample["seconds"] - previous_time
            rates.append((sample["accepted"] - previous_accepted) / span if span > 0 else 0)
            previous_time, previous_accepted = sample["seconds"], sample["accepted"]
        throughput.plot(times, rates, label=f'{label}: {run["notificationsPerSecond"]:,.0f}/s')
        percentiles = run["latencyPercentiles"]
        latency.plot([pair[1] / 1000 for pair in percentiles], [pair[0] for pair in percentiles], label=label)
    reference = report["h2load"]["notificationsPerSecond"]
    throughput.axhline(reference, color="grey", linestyle="--", label=f"h2load {reference:,.0f}/s")
    peer = report["aioapns"]["notificationsPerSecond"]
    throughput.axhline(peer, color="grey", linestyle=":", label=f"aioapns {peer:,.0f}/s")
    throughput.set_xlabel("seconds since the job was published")
    throughput.set_ylabel("notifications accepted per second")
    throughput.set_title(f'Broadcast to {report["devices"]:,} devices')
    throughput.legend(fontsize="small")
    latency.set_xlabel("job publish -> acceptance (s)")
    latency.set_ylabel("percent of notifications")
    latency.set_title("Latency distribution")
    latency.legend(fontsize="small")
    figure.suptitle(f'{machine.get("cpuModel", "")} · {machine.get("cores", "")} cores · {machine.get("date", "")}', fontsize="small")
    figure.tight_layout()
    figure.savefig(target, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot_capacity.py RESULT.json CHART.png")
    main(sys.argv[1], sys.argv[2])
