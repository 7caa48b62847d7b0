#!/usr/bin/env python3
"""Draws the fault suite's chart: for each scenario, notifications accepted per second over the
campaign (1-second windows) with its faults shaded and the baseline's rate as a dashed line,
from the JSON `pushfleet-bench faults` wrote.

    python3 benchmarks/plot_faults.py benchmarks/results/faults.json benchmarks/results/faults.png
"""
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def per_second(samples):
    """Accepted per second over trailing 1-second windows, at each sample."""
    times, rates = [], []
    for index, sample in enumerate(samples):
        start = index
        while start > 0 and sample["seconds"] - samples[start - 1]["seconds"] <= 1.0:
            start -= 1
        earlier = samples[start - 1] if start > 0 else {"seconds": 0.0, "accepted": 0}
        span = sample["seconds"] - earlier["seconds"]
        times.append(sample["seconds"])
        rates.append((sample["accepted"] - earlier["accepted"]) / span if span > 0 else 0)
    return times, rates


def main(source: str, target: str) -> None:
    with open(source) as handle:
        envelope = json.load(handle)
    report = envelope["result"]
    scenarios = report["scenarios"]
    columns = 3
    rows = math.ceil(len(scenarios) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3 * rows), squeeze=False, sharey=True)
    baseline = next((s for s in scenarios if s["scenario"] == "baseline"), None)
    for index, scenario in enumerate(scenarios):
        axis = axes[index // columns][index % columns]
        times, rates = per_second(scenario["samples"])
        axis.plot(times, rates, linewidth=1)
        for window in scenario["windows"]:
            if window["end"] - window["start"] < 0.3:
                axis.axvline(window["start"], color="tab:red", linewidth=1)
            else:
                axis.axvspan(window["start"], window["end"], color="tab:red", alpha=0.2)
        if baseline is not None:
            axis.axhline(baseline["notificationsPerSecond"], color="gray", linestyle="--", linewidth=0.8)
        verdict = "ok" if not scenario["violations"] else "below expectations"
        axis.set_title(f'{scenario["scenario"]}: missed {scenario["missed"]}, twice {scenario["sentTwice"]} ({verdict})', fontsize=9)
        axis.set_xlabel("seconds since the job was published", fontsize=8)
        axis.set_ylabel("accepted / s", fontsize=8)
        axis.tick_params(labelsize=7)
    for index in range(len(scenarios), rows * columns):
        axes[index // columns][index % columns].axis("off")
    figure.suptitle(f'{report["devices"]:,} devices at {int(report["rate"]):,}/s, 3 workers: faults shaded (red lines: kills)', fontsize=10)
    figure.tight_layout()
    figure.savefig(target, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
