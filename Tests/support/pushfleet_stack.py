"""PushFleet as operators run it, for the observability suites: the embedded stack (`pushfleet demo
--stack-only`: Kafka's mock cluster, redis-server, the APNs simulator, the demo devices), and a
worker, the feedback worker and the API as processes of their own on its configuration, each with
its /metrics port. `campaigns()` then runs one campaign of each kind an operator sees.

PUSHFLEET_BIN is required: without it the suites fail (they are never skipped).
"""

import contextlib
import os
import queue
import re
import socket
import subprocess
import threading
import time
import urllib.error

import pytest
import yaml

import pushfleet_demo

STACK_LINE = re.compile(
    r"^PUSHFLEET_STACK config=(?P<config>\S+) app=(?P<app>\S+) key=(?P<key>\S+) device-key=(?P<device_key>\S+)"
    r" other-topic=(?P<other_topic>\S+) devices=(?P<devices>\d+) uninstalled-every=(?P<uninstalled_every>\d+)\s*$"
)
STARTUP_TIMEOUT = 180
# The Prometheus job of each process, as in deploy/prometheus/prometheus.yml.
JOBS = ("pushfleet-api", "pushfleet-worker", "pushfleet-feedback")


def token(n):
    """The demo's device tokens (DemoCommand.token)."""
    return "de" * 24 + f"{n:016x}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, key=None, headers=None, timeout=10):
    """(status, decoded body: JSON when it is JSON) of a request; HTTP errors are answers."""
    status, _, answer = pushfleet_demo.fetch(method, url, body, key=key, headers=headers, timeout=timeout)
    return status, answer


def eventually(what, probe, timeout=90, every=0.5):
    """The first truthy result of `probe` within `timeout` seconds; fails with the last result."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = probe()
        except (OSError, urllib.error.URLError) as error:
            last = error
        if last and not isinstance(last, Exception):
            return last
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout} s (last: {last!r})")
        time.sleep(every)


class Process:
    """A child process whose output is kept (its last lines, for failure messages)."""

    def __init__(self, name, arguments, environment=None):
        self.name = name
        self.lines = []
        self.found = queue.Queue()
        env = dict(os.environ)
        env.update(environment or {})
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        threading.Thread(target=pushfleet_demo.drain, args=(self.process.stdout, self.lines, self.found), daemon=True).start()

    def output(self):
        return f"--- {self.name} (exit {self.process.poll()}):\n" + "\n".join(self.lines[-60:])

    def wait_for_line(self, pattern, timeout):
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"no line matching {pattern.pattern} within {timeout} s\n{self.output()}")
            try:
                line = self.found.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                pytest.fail(f"{self.name} ended before printing its line\n{self.output()}")
            match = pattern.match(line)
            if match:
                return match

    def stop(self):
        """SIGTERM, then SIGKILL after 30 seconds; the exit status."""
        return pushfleet_demo.stop(self.process)


class Stack:
    """The running stack: its configuration, keys, processes and endpoints."""

    def __init__(self):
        self.processes = []
        self.ports = {}

    def start(self, name, arguments, environment=None):
        process = Process(name, arguments, environment)
        self.processes.append(process)
        return process

    def outputs(self):
        return "\n".join(process.output() for process in self.processes)

    def api(self, method, path, body=None, key=None, headers=None):
        return http(method, self.api_url + path, body, key=key or self.key, headers=headers)

    def job_state(self, job):
        status, answer = self.api("GET", f"/v1/apps/{self.app}/jobs/{job}")
        return answer.get("state") if status == 200 and isinstance(answer, dict) else None


@contextlib.contextmanager
def running(devices=300, uninstalled_every=50, certificate_days=None, environment=None):
    """The stack with its worker, feedback worker and API until the block ends (then SIGTERM to
    each, the stack last). `environment` is added to the three processes' (PUSHFLEET__… overrides)."""
    binary = os.environ.get("PUSHFLEET_BIN")
    if not binary:
        pytest.fail("PUSHFLEET_BIN is not set: point it at the pushfleet executable (these tests cannot run without it)")
    stack = Stack()
    try:
        arguments = [binary, "demo", "--stack-only", "--devices", str(devices), "--uninstalled-every", str(uninstalled_every)]
        if certificate_days is not None:
            arguments += ["--certificate-days", str(certificate_days)]
        match = stack.start("stack", arguments).wait_for_line(STACK_LINE, STARTUP_TIMEOUT)
        stack.config, stack.app, stack.key = match["config"], match["app"], match["key"]
        stack.device_key, stack.other_topic = match["device_key"], match["other_topic"]
        with open(stack.config, encoding="utf-8") as file:
            stack.bootstrap = yaml.safe_load(file)["kafka"]["bootstrap-servers"]

        stack.ports = {job: free_port() for job in JOBS}
        common = ["--config", stack.config, "--log-level", "warning"]
        shared = dict(environment or {})
        stack.start("worker", [binary, "worker", *common],
                    {**shared, "PUSHFLEET__METRICS__PORT": str(stack.ports["pushfleet-worker"])})
        stack.start("feedback", [binary, "feedback", *common],
                    {**shared, "PUSHFLEET__METRICS__PORT": str(stack.ports["pushfleet-feedback"])})
        stack.start("api", [binary, "api", *common], {**shared, "PUSHFLEET__API__PORT": str(stack.ports["pushfleet-api"])})
        stack.api_url = f"http://127.0.0.1:{stack.ports['pushfleet-api']}"
        for job, port in stack.ports.items():
            eventually(f"{job} ready", lambda port=port: http("GET", f"http://127.0.0.1:{port}/readyz")[0] == 200, timeout=60)
        yield stack
    except BaseException:
        print(stack.outputs())
        raise
    finally:
        for process in reversed(stack.processes):
            process.stop()


def campaigns(stack, traceparent=None, malformed_traceparent=None):
    """A broadcast (the uninstalled devices answer 410 and the feedback worker removes them),
    receipts for it, a campaign to a topic none of the devices belongs to (the circuit breaker
    pauses it), and a malformed job straight to Kafka (dead-lettered). The broadcast's request
    carries `traceparent` and the malformed job's Kafka message `malformed_traceparent` (a header),
    when given. Answers the ids of the two campaigns."""
    notification = {"aps": {"alert": {"title": "Observed", "body": "PushFleet"}}}
    headers = {"traceparent": traceparent} if traceparent else None
    status, answer = stack.api("POST", f"/v1/apps/{stack.app}/push", {
        "environment": "sandbox", "audience": {"broadcast": True}, "notification": notification,
        "headers": {"push-type": "alert"}}, headers=headers)
    assert status == 202, answer
    broadcast = answer["job"]
    eventually("the broadcast completes", lambda: stack.job_state(broadcast) == "complete")
    for n in (1, 2, 3):
        for event in ("delivered", "opened"):
            status, answer = stack.api("POST", f"/v1/apps/{stack.app}/receipts",
                                       {"job": broadcast, "token": token(n), "event": event}, key=stack.device_key)
            assert status == 200 and answer == {"counted": True}, answer

    status, answer = stack.api("POST", f"/v1/apps/{stack.app}/push", {
        "environment": "sandbox", "audience": {"broadcast": True}, "notification": notification,
        "headers": {"push-type": "alert", "topic": stack.other_topic}})
    assert status == 202, answer
    wrong_topic = answer["job"]
    eventually("the breaker pauses the campaign to the wrong topic", lambda: stack.job_state(wrong_topic) == "paused")

    header = ["-H", f"traceparent={malformed_traceparent}"] if malformed_traceparent else []
    produced = subprocess.run(["kcat", "-P", "-b", stack.bootstrap, "-t", "push.jobs", *header],
                              input=b"{this is not a job", capture_output=True, timeout=60)
    assert produced.returncode == 0, produced.stderr.decode(errors="replace")
    return broadcast, wrong_topic
