#!/usr/bin/env python3
"""An OTLP/HTTP traces endpoint: accepts POST /v1/traces (protobuf, optionally gzipped) and hands
each ExportTraceServiceRequest to a callback. Run as a program, it counts the spans and bytes it
is sent and prints the totals as one JSON line when stopped (SIGTERM or SIGINT): the tracing cost
benchmark points the workers at it (benchmarks/tracing_cost.sh). Tests/observability/test_traces.py
receives a campaign's trace with the same class. Needs `opentelemetry-proto`
(scripts/ensure-deps.sh).

    python3 benchmarks/otlp_sink.py --port 4318
"""

import argparse
import gzip
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


class OTLPReceiver:
    """Serves POST /v1/traces on 127.0.0.1:`port` (0: a free port, then read `.port`) in a thread
    of its own; `on_request(request, size)` gets each decoded request and its size on the wire."""

    def __init__(self, on_request, port=0):
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                size = len(body)
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces" or "protobuf" not in self.headers.get("Content-Type", ""):
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                request = trace_service_pb2.ExportTraceServiceRequest()
                request.ParseFromString(body)
                on_request(request, size)
                answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *arguments):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.thread.join()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=4318)
    arguments = parser.parse_args()
    totals = {"requests": 0, "spans": 0, "bytes": 0}
    lock = threading.Lock()

    def count(request, size):
        spans = sum(len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans)
        with lock:
            totals["requests"] += 1
            totals["spans"] += spans
            totals["bytes"] += size

    receiver = OTLPReceiver(count, port=arguments.port)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    print(f"otlp sink on http://127.0.0.1:{receiver.port}/v1/traces", flush=True)
    stopped.wait()
    receiver.stop()
    with lock:
        print(json.dumps(totals), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
