"""A campaign is one trace: the stack's worker, feedback worker and API export their spans over
OTLP/HTTP to a receiver in this test, which decodes them with `opentelemetry-proto`. A broadcast
sent with a producer's own `traceparent` must come back as one trace under that parent: the API
request, the job on push.jobs, each shard task, each chunk on push.deliveries, each APNs batch (with
its answers by status) and the feedback events, each span the child of the one that published its
message; a malformed job produced to Kafka with its own `traceparent` has its dead letter in that trace;
no span per notification.

Needs PUSHFLEET_BIN and kcat (Tests/support/pushfleet_stack.py); never skipped.
"""

import secrets
import sys
import threading
from collections import defaultdict
from pathlib import Path

import pytest
from opentelemetry.proto.trace.v1 import trace_pb2

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "support"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from otlp_sink import OTLPReceiver  # noqa: E402  (the OTLP/HTTP endpoint the tracing benchmark uses too)
from pushfleet_stack import campaigns, eventually, running  # noqa: E402

DEVICES = 300
UNINSTALLED_EVERY = 50


class Receiver:
    """The spans an OTLP/HTTP endpoint (benchmarks/otlp_sink.py) was sent, as ``Span``s."""

    def __init__(self):
        self.spans = []
        self.lock = threading.Lock()
        self.endpoint = OTLPReceiver(self.add)
        self.port = self.endpoint.port

    def add(self, request, size):
        with self.lock:
            for resource_spans in request.resource_spans:
                service = next((a.value.string_value for a in resource_spans.resource.attributes if a.key == "service.name"), "")
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(Span(span, service))

    def snapshot(self):
        with self.lock:
            return list(self.spans)


class Span:
    def __init__(self, span, service):
        self.trace = span.trace_id.hex()
        self.id = span.span_id.hex()
        self.parent = span.parent_span_id.hex()
        self.name = span.name
        self.kind = span.kind
        self.service = service
        self.attributes = {}
        for attribute in span.attributes:
            value = attribute.value
            self.attributes[attribute.key] = value.int_value if value.HasField("int_value") else value.string_value

    def __repr__(self):
        return f"<{self.service} {self.name} {self.id}<-{self.parent} {self.attributes}>"


@pytest.fixture(scope="module")
def traced():
    receiver = Receiver()
    environment = {
        "PUSHFLEET__TRACING__OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.port}/v1/traces",
        "PUSHFLEET__TRACING__SAMPLE_RATE": "1",
    }
    trace_id, parent_id = secrets.token_hex(16), secrets.token_hex(8)
    # The malformed job is produced to Kafka with a traceparent of its own producer.
    job_trace, job_parent = secrets.token_hex(16), secrets.token_hex(8)
    with running(devices=DEVICES, uninstalled_every=UNINSTALLED_EVERY, environment=environment) as stack:
        broadcast, wrong_topic = campaigns(
            stack, traceparent=f"00-{trace_id}-{parent_id}-01", malformed_traceparent=f"00-{job_trace}-{job_parent}-01")
        uninstalled = len(range(0, DEVICES, UNINSTALLED_EVERY))

        def summary(spans):
            ours = [s for s in spans if s.trace == trace_id]
            counts = defaultdict(int)
            for span in ours:
                counts[span.name] += 1
                for key, value in span.attributes.items():
                    if key.startswith("apns.status."):
                        counts[key] += value
            counts["dead letters, any trace"] = sum(
                1 for s in spans if s.name == "dead letters" and s.attributes.get("pushfleet.reason") == "malformed-json")
            # Each process exports on its own schedule: the API's spans may come after the workers'.
            counts["push requests, any trace"] = sum(1 for s in spans if s.name == "POST /v1/apps/{app}/push")
            return dict(counts)

        def parents_arrived(spans):
            # A parent ends after its children, so it may be exported after them.
            ids = {span.id for span in spans}
            return all(span.parent in ids or span.parent in ("", parent_id, job_parent) for span in spans)

        def complete():
            spans = receiver.snapshot()
            counts = summary(spans)
            ours = [span for span in spans if span.trace == trace_id]
            done = (parents_arrived(spans)
                    and sum(s.attributes.get("pushfleet.tokens", 0) for s in ours if s.name == "send chunk") == DEVICES
                    and counts.get("apns.status.200", 0) + counts.get("apns.status.410", 0) == DEVICES
                    and counts.get("feedback event", 0) == uninstalled and counts["dead letters, any trace"] >= 1
                    and counts["push requests, any trace"] >= 2)
            return spans if done else None

        try:
            spans = eventually("every span of the campaigns exported", complete, timeout=60)
        except BaseException:
            print("spans of the broadcast's trace by name:", summary(receiver.snapshot()), "of", len(receiver.snapshot()))
            raise
        yield {"spans": spans, "trace": trace_id, "parent": parent_id, "job_trace": job_trace, "job_parent": job_parent,
               "broadcast": broadcast,
               "wrong_topic": wrong_topic, "uninstalled": uninstalled}
    receiver.endpoint.stop()


def by_name(spans, name):
    return [span for span in spans if span.name == name]


def test_the_broadcast_is_one_trace_under_the_producers_parent(traced):
    spans = [span for span in traced["spans"] if span.trace == traced["trace"]]
    broadcast = traced["broadcast"]
    [request] = [s for s in by_name(spans, "POST /v1/apps/{app}/push")]
    assert request.parent == traced["parent"], "the API request continues the producer's traceparent"
    assert request.service == "pushfleet.api" and request.kind == trace_pb2.Span.SPAN_KIND_SERVER
    assert request.attributes["http.response.status_code"] == 202 and request.attributes["pushfleet.app"] == "news"

    [job] = by_name(spans, "expand job")
    assert job.parent == request.id, "the job on push.jobs is the request's child"
    assert job.service == "pushfleet.worker" and job.kind == trace_pb2.Span.SPAN_KIND_CONSUMER
    assert job.attributes["pushfleet.job"] == broadcast and job.attributes["messaging.destination.name"] == "push.jobs"

    shards = by_name(spans, "expand shard task")
    assert shards and all(shard.parent == job.id for shard in shards), shards
    assert all(shard.attributes["pushfleet.job"] == broadcast for shard in shards)

    chunks = by_name(spans, "send chunk")
    shard_ids = {shard.id for shard in shards}
    assert chunks and all(chunk.parent in shard_ids for chunk in chunks), "each chunk is its shard task's child"
    assert sum(chunk.attributes["pushfleet.tokens"] for chunk in chunks) == DEVICES

    batches = by_name(spans, "apns batch")
    chunk_ids = {chunk.id for chunk in chunks}
    assert batches and all(batch.parent in chunk_ids for batch in batches), "each APNs batch is its chunk's child"
    assert all(batch.kind == trace_pb2.Span.SPAN_KIND_CLIENT for batch in batches)
    assert sum(batch.attributes.get("apns.status.410", 0) for batch in batches) == traced["uninstalled"]
    assert sum(batch.attributes.get("apns.status.200", 0) for batch in batches) == DEVICES - traced["uninstalled"]
    assert sum(batch.attributes["pushfleet.notifications"] for batch in batches) == DEVICES
    assert len(batches) < DEVICES / 10, "spans per batch, never per notification"

    feedback = by_name(spans, "feedback event")
    assert len(feedback) == traced["uninstalled"]
    assert all(event.service == "pushfleet.feedback" and event.parent in chunk_ids for event in feedback), \
        "each feedback event is the child of the chunk whose answer it reports"
    assert {event.attributes["pushfleet.feedback-reason"] for event in feedback} == {"Unregistered"}

    # Every span naming the broadcast belongs to this one trace.
    strays = [span for span in traced["spans"] if span.attributes.get("pushfleet.job") == broadcast and span.trace != traced["trace"]]
    assert not strays, strays


def test_a_campaign_without_a_traceparent_starts_its_own_trace(traced):
    spans = traced["spans"]
    jobs = [s for s in by_name(spans, "expand job") if s.attributes.get("pushfleet.job") == traced["wrong_topic"]]
    assert len(jobs) >= 1, "the campaign the breaker paused has its expand span"
    trace = jobs[0].trace
    assert trace != traced["trace"]
    requests = [s for s in spans if s.trace == trace and s.name == "POST /v1/apps/{app}/push"]
    assert len(requests) == 1 and requests[0].parent == "", "the API request is the root of its own trace"
    assert jobs[0].parent == requests[0].id


def test_a_dead_letter_is_a_span_of_the_malformed_jobs_trace(traced):
    spans = traced["spans"]
    [letter] = [s for s in by_name(spans, "dead letters") if s.attributes.get("pushfleet.reason") == "malformed-json"]
    parents = [s for s in spans if s.id == letter.parent]
    assert len(parents) == 1 and parents[0].name == "expand job" and parents[0].trace == letter.trace
    # The job came straight to Kafka with its producer's traceparent: the trace continues it.
    assert letter.trace == traced["job_trace"] and parents[0].parent == traced["job_parent"]
    assert letter.attributes["pushfleet.dead-letters"] == 1
