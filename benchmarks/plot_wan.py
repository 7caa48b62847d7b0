#!/usr/bin/env python3
"""Draws the WAN capacity benchmark's chart: notifications per second against the round trip
for PushFleet (one worker, default configuration), h2load's best and aioapns through the same
path (left; the first round as a line, later rounds as dots), and each first-round broadcast's
throughput over time with the pool's open connections (right), from the JSON pushfleet-bench
wrote.

    python3 benchmarks/plot_wan.py benchmarks/results/capacity-wan.json benchmarks/results/capacity-wan.png
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
    figure, (by_distance, over_time) = plt.subplots(1, 2, figsize=(13, 4.8))
    first_round = [run for run in report["runs"] if run.get("round", 1) == 1]
    later_rounds = [run for run in report["runs"] if run.get("round", 1) > 1]
    for payload in sorted({run["payloadBytes"] for run in report["runs"]}):
        runs = sorted((run for run in first_round if run["payloadBytes"] == payload), key=lambda run: run["roundTripMilliseconds"])
        trips = [run["roundTripMilliseconds"] for run in runs]
        marker = "o" if payload == report["payloadBytes"] else "s"
        line, = by_distance.plot(trips, [run["notificationsPerSecond"] for run in runs], marker=marker, label=f"PushFleet, {payload} B")
        others = [run for run in later_rounds if run["payloadBytes"] == payload]
        if others:
            by_distance.scatter(
                [run["roundTripMilliseconds"] for run in others], [run["notificationsPerSecond"] for run in others],
                marker=marker, s=12, color=line.get_color(), alpha=0.5, label=f"PushFleet, {payload} B, rounds 2 and later")
        with_h2load = [run for run in runs if run.get("h2load")]
        by_distance.plot(
            [run["roundTripMilliseconds"] for run in with_h2load],
            [run["h2load"]["notificationsPerSecond"] for run in with_h2load],
            marker=marker, linestyle="--", color="grey", label=f"h2load's best, {payload} B")
        with_peer = [run for run in runs if run.get("aioapns")]
        if with_peer:
            by_distance.plot(
                [run["roundTripMilliseconds"] for run in with_peer],
                [run["aioapns"]["notificationsPerSecond"] for run in with_peer],
                marker=marker, linestyle=":", color="grey", label=f"aioapns, {payload} B")
    by_distance.set_xlabel("round trip to APNs (ms)")
    by_distance.set_ylabel("notifications accepted per second")
    by_distance.set_ylim(bottom=0)
    by_distance.set_title(f'One worker, broadcast to {report["devices"]:,} devices')
    by_distance.legend(fontsize="small")
    connections = over_time.twinx()
    for run in first_round:
        label = f'{run["roundTripMilliseconds"]} ms, {run["payloadBytes"]} B'
        samples = run["samples"]
        # Rates over one-second windows: the samples come every 250 ms.
        times, rates = [], []
        previous_time, previous_accepted = 0.0, 0
        for sample in samples:
            span = sample["seconds"] - previous_time
            if span < 1.0 and sample is not samples[-1]:
                continue
            times.append(sample["seconds"])
            rates.append((sample["accepted"] - previous_accepted) / span if span > 0 else 0)
            previous_time, previous_accepted = sample["seconds"], sample["accepted"]
        line, = over_time.plot(times, rates, label=label)
        connections.plot([sample["seconds"] for sample in samples], [sample["pool"]["connectionsOpen"] for sample in samples], color=line.get_color(), linestyle=":", linewidth=1)
    over_time.set_xlabel("seconds since the job was published")
    over_time.set_ylabel("notifications accepted per second")
    connections.set_ylabel("open APNs connections (dotted)")
    over_time.set_title("Throughput over time, and the pool's connections")
    over_time.legend(fontsize="small")
    figure.suptitle(f'{machine.get("cpuModel", "")} · {machine.get("cores", "")} cores · {machine.get("date", "")}', fontsize="small")
    figure.tight_layout()
    figure.savefig(target, dpi=100)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
