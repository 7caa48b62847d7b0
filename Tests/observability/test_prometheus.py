"""A real Prometheus against a running PushFleet: the embedded stack (`pushfleet demo
--stack-only`), a worker, the feedback worker and the API as processes of their own, and Debian's
`prometheus` scraping them with deploy/prometheus/alerts.yaml loaded. After one small campaign of
each kind an operator sees (a broadcast with uninstalled devices, receipts, a job the circuit
breaker pauses, a malformed job dead-lettered), it checks:

- every series docs/operations.md lists is there, with exactly the labels it documents, and no
  label carries a device token or a job id;
- every panel of deploy/grafana/pushfleet.json parses and returns series;
- every alert rule evaluates without error, and the alerts that this run should raise (a job paused
  by the breaker, a certificate expiring within 14 days, dead letters) are raised, the others not.

Needs PUSHFLEET_BIN (the pushfleet executable), `prometheus` and `kcat` on PATH
(scripts/ensure-deps.sh installs them); without them the tests fail, they are never skipped. The
stack and its campaigns: Tests/support/pushfleet_stack.py.
"""

import json
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "support"))
from pushfleet_stack import JOBS, campaigns, eventually, free_port, http, running  # noqa: E402

ALERTS = str(ROOT / "deploy" / "prometheus" / "alerts.yaml")
DASHBOARD = str(ROOT / "deploy" / "grafana" / "pushfleet.json")
OPERATIONS = str(ROOT / "docs" / "operations.md")
# Prometheus scrapes and evaluates every second here; the queries read rates over a minute.
SCRAPE_INTERVAL = "1s"
RATE_INTERVAL = "1m"
# Labels a PushFleet series may carry (Prometheus adds job and instance; histograms le). Anything
# else would be new and unreviewed: a label of unbounded cardinality shows up here first.
BOUNDED_LABELS = {
    "app", "outcome", "reason", "by", "state", "change", "environment", "topic", "group", "partition",
    "event", "route", "method", "status", "dependency", "job", "instance", "le",
}


class Observed:
    """The stack, the Prometheus scraping it, and the campaigns' job ids."""

    def __init__(self, stack, prometheus, jobs):
        self.stack = stack
        self.prometheus = prometheus
        self.jobs = jobs

    def query(self, expression):
        """The result of an instant query; fails on a query Prometheus refuses."""
        status, answer = http("GET", self.prometheus + "/api/v1/query?" + urllib.parse.urlencode({"query": expression}))
        assert status == 200 and isinstance(answer, dict) and answer.get("status") == "success", \
            f"Prometheus refused {expression!r}: {status} {answer}"
        return answer["data"]["result"]

    def series(self, name):
        """Every series of the metric `name` (histograms: of its _bucket, _sum and _count)."""
        selector = '{__name__=~"' + re.escape(name).replace("\\", "\\\\") + '(_bucket|_sum|_count)?"}'
        status, answer = http("GET", self.prometheus + "/api/v1/series?" + urllib.parse.urlencode({"match[]": selector}))
        assert status == 200 and answer.get("status") == "success", f"series {name}: {status} {answer}"
        return answer["data"]


def documented_series():
    """{metric: set of labels} from the table of docs/operations.md ("Health and metrics")."""
    documented = {}
    with open(OPERATIONS, encoding="utf-8") as file:
        text = file.read()
    section = text.split("## Health and metrics", 1)[1].split("\n## ", 1)[0]
    for row in section.splitlines():
        if not row.startswith("| `"):
            continue
        first_cell = row.split("|")[1]
        for name, labels in re.findall(r"`([a-z_]+)(?:\{([a-z_, ]*)\})?`", first_cell):
            documented[name] = {label.strip() for label in labels.split(",") if label.strip()}
    assert len(documented) >= 20, f"the metrics table of docs/operations.md was not read: {documented}"
    return documented


@pytest.fixture(scope="module")
def run():
    if not shutil.which("prometheus") or not shutil.which("kcat"):
        pytest.fail("prometheus and kcat must be on PATH: scripts/ensure-deps.sh installs them")
    directory = tempfile.mkdtemp(prefix="pushfleet-prometheus-")
    # The certificate of app news expires in 10 days: the expiry alert must fire.
    with running(certificate_days=10) as stack:
        try:
            prometheus_port = free_port()
            configuration = {
                "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL},
                "rule_files": [ALERTS],
                "scrape_configs": [
                    {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]} for job, port in stack.ports.items()
                ],
            }
            config_path = os.path.join(directory, "prometheus.yml")
            with open(config_path, "w", encoding="utf-8") as file:
                yaml.safe_dump(configuration, file)
            stack.start("prometheus", [
                "prometheus", f"--config.file={config_path}", f"--storage.tsdb.path={os.path.join(directory, 'data')}",
                f"--web.listen-address=127.0.0.1:{prometheus_port}"])
            prometheus = f"http://127.0.0.1:{prometheus_port}"
            eventually("Prometheus ready", lambda: http("GET", prometheus + "/-/ready")[0] == 200, timeout=60)
            observed = Observed(stack, prometheus, list(campaigns(stack)))
            eventually("the malformed job is dead-lettered",
                       lambda: observed.query('sum(pushfleet_worker_events_total{event="dead-lettered-messages"})'))
            yield observed
        finally:
            shutil.rmtree(directory, ignore_errors=True)


def test_prometheus_scrapes_every_process(run):
    def scraped():
        up = run.query("up")
        return up if {result["metric"]["job"] for result in up} == set(JOBS) else None

    up = eventually("every process scraped", scraped)
    assert all(result["value"][1] == "1" for result in up), f"a target is down: {up}"


def test_every_documented_series_is_there_with_its_labels(run):
    documented = documented_series()

    def missing():
        return [name for name in sorted(documented) if not run.series(name)]

    deadline = time.monotonic() + 60
    absent = missing()
    while absent and time.monotonic() < deadline:
        time.sleep(1)
        absent = missing()
    assert not absent, f"series docs/operations.md lists that no process exports: {absent}"
    problems = []
    for name, labels in sorted(documented.items()):
        for series in run.series(name):
            found = set(series) - {"__name__", "job", "instance", "le"}
            if found != labels:
                problems.append(f"{series['__name__']}: labels {sorted(found)}, documented {sorted(labels)}")
    assert not problems, "\n".join(sorted(set(problems)))


def test_no_label_carries_a_token_or_a_job_id(run):
    status, answer = http("GET", run.prometheus + "/api/v1/series?" + urllib.parse.urlencode(
        {"match[]": '{__name__=~"pushfleet_.*|process_start_time_seconds"}'}))
    assert status == 200 and answer["data"], answer
    values = set()
    for series in answer["data"]:
        unexpected = set(series) - BOUNDED_LABELS - {"__name__"}
        assert not unexpected, f"{series['__name__']} has labels outside the bounded set: {sorted(unexpected)}"
        values.update(value for key, value in series.items() if key != "__name__")
    hexadecimal = re.compile(r"[0-9a-f]{32,}")
    assert not [value for value in values if hexadecimal.search(value)], "a label value looks like a device token"
    assert not [value for value in values if any(job in value for job in run.jobs)], "a label value carries a job id"


def test_every_dashboard_panel_returns_series(run):
    with open(DASHBOARD, encoding="utf-8") as file:
        dashboard = json.load(file)
    panels = []
    for panel in dashboard["panels"]:
        panels.extend(panel.get("panels", [panel]))
    expressions = [(panel["title"], target["expr"]) for panel in panels if panel.get("type") != "row"
                   for target in panel.get("targets", [])]
    assert len(expressions) >= 10, f"the dashboard has too few queries: {expressions}"
    # A rate needs two samples in its window: the freshest series may take a few scrapes.
    def empty_panels():
        return [f"{title}: {expr}" for title, expr in expressions if not run.query(expr.replace("$__rate_interval", RATE_INTERVAL))]

    deadline = time.monotonic() + 60
    empty = empty_panels()
    while empty and time.monotonic() < deadline:
        time.sleep(1)
        empty = empty_panels()
    assert not empty, "panels whose query returned no series after a campaign:\n" + "\n".join(empty)


def test_alert_rules_evaluate_and_the_expected_alerts_fire(run):
    status, answer = http("GET", run.prometheus + "/api/v1/rules")
    assert status == 200, answer
    rules = [rule for group in answer["data"]["groups"] for rule in group["rules"]]
    with open(ALERTS, encoding="utf-8") as file:
        defined = [rule["alert"] for group in yaml.safe_load(file)["groups"] for rule in group["rules"] if "alert" in rule]
    assert sorted(rule["name"] for rule in rules if rule["type"] == "alerting") == sorted(defined)

    expected = {"PushFleetJobPausedByBreaker", "PushFleetCertificateExpiringSoon", "PushFleetDeadLetters"}
    not_expected = {"PushFleetCertificateExpired", "PushFleetRedisUnreachable", "PushFleetKafkaUnreachable",
                    "PushFleetAppSuspended", "PushFleetProcessRestarting"}
    assert expected | not_expected <= set(defined), f"alerts missing from {ALERTS}"

    def raised():
        status, answer = http("GET", run.prometheus + "/api/v1/alerts")
        assert status == 200, answer
        alerts = {alert["labels"]["alertname"] for alert in answer["data"]["alerts"] if alert["state"] in ("pending", "firing")}
        return alerts if alerts >= expected else None

    alerts = eventually("the breaker, certificate and dead-letter alerts raised", raised, timeout=60)
    assert not alerts & not_expected, f"alerts raised that this run gives no cause for: {sorted(alerts & not_expected)}"
    # Every rule has been evaluated by now, and none failed (a query error shows as health "err").
    _, answer = http("GET", run.prometheus + "/api/v1/rules")
    broken = [(rule["name"], rule.get("lastError")) for group in answer["data"]["groups"] for rule in group["rules"]
              if rule.get("health") != "ok"]
    assert not broken, broken
