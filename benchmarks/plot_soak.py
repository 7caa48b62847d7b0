#!/usr/bin/env python3
"""Draws the soak's chart: throughput, worker RSS, open file descriptors, Redis memory and the
resend buffer's depth over the run, one panel each, with the early and late windows the verdict
compares shaded, from the JSON `pushfleet-bench soak` wrote.

    python3 benchmarks/plot_soak.py benchmarks/results/soak.json benchmarks/results/soak.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(source: str, target: str) -> None:
    with open(source) as handle:
        report = json.load(handle)["result"]
    plan = report["plan"]
    samples = report["samples"]
    minutes = [s["seconds"] / 60 for s in samples]
    total = plan["minutes"]
    panels = [
        ("accepted / s", [s["perSecond"] for s in samples], plan["rate"]),
        ("worker RSS, MB (each)", None, None),
        ("open fds (each worker)", None, None),
        ("Redis used memory, MB", [s["redisUsedMegabytes"] for s in samples], None),
        ("resend buffer depth", [s["resendDepth"] for s in samples], None),
    ]
    figure, axes = plt.subplots(len(panels), 1, figsize=(9, 2.1 * len(panels)), sharex=True)
    for axis, (title, values, target_line) in zip(axes, panels):
        if title.startswith("worker RSS"):
            for worker in range(max(len(s["workerRSSMegabytes"]) for s in samples)):
                axis.plot(minutes, [s["workerRSSMegabytes"][worker] if worker < len(s["workerRSSMegabytes"]) else None for s in samples],
                          linewidth=1, label=f"worker {worker + 1}")
            axis.legend(fontsize=7, loc="lower right")
        elif title.startswith("open fds"):
            for worker in range(max(len(s["workerOpenFiles"]) for s in samples)):
                axis.plot(minutes, [s["workerOpenFiles"][worker] if worker < len(s["workerOpenFiles"]) else None for s in samples],
                          linewidth=1, label=f"worker {worker + 1}")
            axis.legend(fontsize=7, loc="lower right")
        else:
            axis.plot(minutes, values, linewidth=1)
        if target_line is not None:
            axis.axhline(target_line, color="gray", linestyle="--", linewidth=0.8)
        axis.axvspan(0.2 * total, 0.4 * total, color="tab:green", alpha=0.08)
        axis.axvspan(0.8 * total, total, color="tab:orange", alpha=0.08)
        axis.set_ylabel(title, fontsize=8)
        highest = max((y for line in axis.get_lines() for y in line.get_ydata() if y is not None), default=0)
        axis.set_ylim(0, max(highest, target_line or 0, 1) * 1.15)
        axis.tick_params(labelsize=7)
    axes[-1].set_xlabel("minutes (early window green, late window orange)", fontsize=8)
    verdict = "flat" if not report["violations"] else "below expectations: " + "; ".join(report["violations"])
    figure.suptitle(
        f'soak: {report["campaigns"]} broadcasts of {plan["devices"]:,} devices at {int(plan["rate"]):,}/s, '
        f'{plan["workers"]} workers, answers in {plan["latencyMilliseconds"]} ms ({verdict})', fontsize=9)
    figure.tight_layout()
    figure.savefig(target, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
