"""schemas/openapi.yaml describes the HTTP API `pushfleet api` serves, and the server keeps to it.

Static checks (no server needed):
1. openapi-spec-validator accepts the spec, external references to push-job.schema.json included;
2. every operation has a unique operationId; every /v1 operation needs the bearer key and nothing
   else does; every 4xx (and every /v1 503) response is an Error; the push request is the job
   schema's own pieces by reference, so the two cannot drift apart.

Live checks, against `$PUSHFLEET_BIN demo --serve --devices 200`, which prints
`PUSHFLEET_API url=… app=APP key=KEY other-app=APP2 other-key=KEY2 device-key=DKEY console=…/console/` once it serves
(DKEY: a device key of APP, which may only bind, tag and post receipts):
3. a few requests with urllib: health, readiness, metrics, 401/403/404 and their Error bodies,
   400 for a bad path parameter, the Idempotency-Key replay and conflict;
4. schemathesis (`python -m schemathesis.cli run`) fuzzes every operation with APP's key, the path
   parameter `app` pinned to APP, a fixed seed and PUSHFLEET_FUZZ_EXAMPLES (default 25) examples
   per operation, checking for server errors, undocumented status codes and content types, and
   responses that violate their schema. A device and a scheduled job created beforehand are offered
   as dictionary values for the `token`, `job` and `tag` parameters (half of the time), so the
   fuzzer gets past "unknown device/job" 404s; its stateful phase follows the links it infers
   (push → job status, bind → device).
5. schemathesis again with no key, with APP2's key and with DKEY (PUSHFLEET_FUZZ_DENIED_EXAMPLES,
   default 10): no server errors, and the check in fuzz_hooks.py: no 2xx on a /v1 operation the
   key grants nothing on (every one without a key or with APP2's key; every one but the device
   operations with DKEY). Without a key and with APP2's key, APP's device count, tags, known
   device and a scheduled job read the same before and after: no cross-app read or write.

PUSHFLEET_BIN is required: without it the live checks fail (they are never skipped).
PUSHFLEET_FUZZ_SEED overrides the seed.
"""

import datetime
import json
import os
import pathlib
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from xml.etree import ElementTree

import pytest
import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate as validate_spec
from referencing import Registry, Resource

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "support"))
import pushfleet_demo  # noqa: E402  (the shared `demo --serve` fixture)

SPEC_PATH = ROOT / "schemas" / "openapi.yaml"
JOB_SCHEMA_PATH = ROOT / "schemas" / "push-job.schema.json"
JOB_SCHEMA_REF = "./push-job.schema.json"

SPEC = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
JOB_SCHEMA = json.loads(JOB_SCHEMA_PATH.read_text(encoding="utf-8"))

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
OPERATIONS = [
    (path, method, operation)
    for path, item in SPEC["paths"].items()
    for method, operation in item.items()
    if method in HTTP_METHODS
]
OPERATION_IDS = [f"{method.upper()} {path}" for path, method, _ in OPERATIONS]
V1_OPERATIONS = [op for op in OPERATIONS if op[0].startswith("/v1/")]
V1_IDS = [f"{method.upper()} {path}" for path, method, _ in V1_OPERATIONS]

FUZZ_CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
FUZZ_TIMEOUT = 1800
# A device token the live tests bind before fuzzing (64 hex digits, like a real APNs token).
KNOWN_TOKEN = "5f" * 8 + "0123456789abcdef" * 3
KNOWN_TAG = "fuzz"


def resolve_local(reference):
    """The object a `#/…` reference of the spec points at."""
    assert reference.startswith("#/"), reference
    node = SPEC
    for part in reference[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def resolve_job_schema(reference):
    """The part of push-job.schema.json a `./push-job.schema.json#/…` reference points at."""
    document, _, pointer = reference.partition("#")
    assert document == JOB_SCHEMA_REF, reference
    node = JOB_SCHEMA
    for part in pointer.lstrip("/").split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def walk_refs(node):
    if isinstance(node, dict):
        if "$ref" in node:
            yield node["$ref"]
        for value in node.values():
            yield from walk_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk_refs(value)


def response_schema(response):
    if "$ref" in response:
        response = resolve_local(response["$ref"])
    return response.get("content", {}).get("application/json", {}).get("schema")


# ---------------------------------------------------------------------------------------------
# Static checks


def test_spec_is_valid_openapi_3_1():
    assert SPEC["openapi"] == "3.1.0"
    assert SPEC["info"]["title"] == "PushFleet API" and SPEC["info"]["version"] == "1.0.0"
    assert SPEC["servers"] == [{"url": "http://127.0.0.1:8080"}]
    validate_spec(SPEC, base_uri=SPEC_PATH.as_uri())


def test_spec_validation_follows_the_external_references():
    """Guards the test above: a reference into push-job.schema.json that points nowhere is caught."""
    broken = json.loads(json.dumps(SPEC))
    broken["components"]["schemas"]["PushRequest"]["properties"]["audience"]["$ref"] = (
        JOB_SCHEMA_REF + "#/$defs/no-such-definition"
    )
    with pytest.raises(Exception, match="no-such-definition"):
        validate_spec(broken, base_uri=SPEC_PATH.as_uri())


def test_dead_letters_are_the_push_dlq_shape():
    """The letters the dead-letter routes answer are push.dlq's: the component is push-dlq.schema.json."""
    own = json.loads((ROOT / "schemas" / "push-dlq.schema.json").read_text(encoding="utf-8"))
    for key in ("$schema", "$id", "title"):
        own.pop(key)
    assert SPEC["components"]["schemas"]["DeadLetter"] == own
    for name, key in (("JobDeadLetters", "job"), ("AppDeadLetters", "app")):
        answer = SPEC["components"]["schemas"][name]
        assert answer["properties"]["letters"]["items"] == {"$ref": "#/components/schemas/DeadLetter"}
        assert key in answer["required"] and "letters" in answer["required"]


def test_the_documented_components_exist():
    schemas = SPEC["components"]["schemas"]
    for name in ["Error", "Device", "DeviceBinding", "Tags", "TagCounts", "DeviceCount", "PushRequest",
                 "PushAccepted", "JobStatus", "Receipt", "ReceiptResult", "Health", "Readiness"]:
        assert name in schemas, name
    bearer = SPEC["components"]["securitySchemes"]["bearer"]
    assert (bearer["type"], bearer["scheme"]) == ("http", "bearer")


def test_the_routes_are_the_contracts():
    routes = sorted(f"{method.upper()} {path}" for path, method, _ in OPERATIONS)
    assert routes == sorted([
        "GET /healthz", "GET /readyz", "GET /metrics",
        "PUT /v1/apps/{app}/devices/{token}", "DELETE /v1/apps/{app}/devices/{token}",
        "GET /v1/apps/{app}/devices/{token}", "GET /v1/apps/{app}/devices/{token}/tags",
        "POST /v1/apps/{app}/devices/{token}/tags", "DELETE /v1/apps/{app}/devices/{token}/tags/{tag}",
        "GET /v1/apps/{app}/devices", "GET /v1/apps/{app}/tags", "POST /v1/apps/{app}/push",
        "GET /v1/apps/{app}/jobs/{job}", "POST /v1/apps/{app}/jobs/{job}/cancel",
        "POST /v1/apps/{app}/jobs/{job}/pause", "POST /v1/apps/{app}/jobs/{job}/resume",
        "POST /v1/apps/{app}/jobs/{job}/abort", "PUT /v1/apps/{app}/jobs/{job}/rate",
        "POST /v1/apps/{app}/devices/{token}/restore",
        "POST /v1/apps/{app}/receipts",
        "GET /v1/apps/{app}/devices/export", "GET /v1/apps/{app}/users/{openid}",
        "DELETE /v1/apps/{app}/users/{openid}", "DELETE /v1/apps/{app}/tags/{tag}",
        "POST /v1/apps/{app}/channels/{environment}", "GET /v1/apps/{app}/channels/{environment}",
        "GET /v1/apps/{app}/channels/{environment}/{channel}", "DELETE /v1/apps/{app}/channels/{environment}/{channel}",
        "PUT /v1/apps/{app}/tokens/{kind}/{token}", "GET /v1/apps/{app}/tokens/{kind}/{token}",
        "DELETE /v1/apps/{app}/tokens/{kind}/{token}", "GET /v1/apps/{app}/tokens/{kind}",
        "PUT /v1/apps/{app}/activities/{environment}/{activity}/tokens/{token}",
        "DELETE /v1/apps/{app}/activities/{environment}/{activity}/tokens/{token}",
        "GET /v1/apps/{app}/activities/{environment}/{activity}",
        "GET /v1/apps/{app}/jobs", "POST /v1/apps/{app}/audience/estimate", "GET /v1/apps/{app}/jobs/{job}/events",
        "POST /v1/apps/{app}/push/check", "POST /v1/apps/{app}/push/test",
        "GET /v1/apps/{app}/jobs/{job}/dead-letters", "GET /v1/apps/{app}/dead-letters",
        "GET /v1/apps/{app}/devices/{token}/campaigns",
        "GET /v1/apps/{app}/devices/{token}/badge", "PUT /v1/apps/{app}/devices/{token}/badge",
        "GET /v1/apps/{app}/devices/{token}/location", "PUT /v1/apps/{app}/devices/{token}/location",
        "DELETE /v1/apps/{app}/devices/{token}/location",
        "GET /v1/apps/{app}/stats/hours",
        "POST /v1/apps/{app}/jobs/{job}/recall",
        "POST /v1/apps/{app}/devices/{token}/connect-token", "GET /v1/apps/{app}/devices/{token}/presence",
        "GET /v1/apps/{app}/online",
    ])


def test_operation_ids_are_present_and_unique():
    ids = [operation.get("operationId") for _, _, operation in OPERATIONS]
    assert all(ids), [name for name, i in zip(OPERATION_IDS, ids) if not i]
    assert len(set(ids)) == len(ids)


def test_no_global_security():
    assert "security" not in SPEC, "security is per operation: /healthz, /readyz and /metrics need no key"


@pytest.mark.parametrize("path,method,operation", OPERATIONS, ids=OPERATION_IDS)
def test_security_is_the_bearer_key_on_v1_only(path, method, operation):
    if path.startswith("/v1/"):
        assert operation.get("security") == [{"bearer": []}]
    else:
        assert operation.get("security") in (None, [])


@pytest.mark.parametrize("path,method,operation", OPERATIONS, ids=OPERATION_IDS)
def test_every_4xx_response_is_an_error(path, method, operation):
    responses = operation["responses"]
    errors = {status: response for status, response in responses.items() if str(status).startswith("4")}
    if path.startswith("/v1/"):
        errors.update({status: responses[status] for status in responses if str(status) == "503"})
    for status, response in errors.items():
        assert response_schema(response) == {"$ref": "#/components/schemas/Error"}, status


@pytest.mark.parametrize("path,method,operation", V1_OPERATIONS, ids=V1_IDS)
def test_v1_operations_document_the_common_errors(path, method, operation):
    statuses = set(map(str, operation["responses"]))
    assert {"400", "401", "403", "404"} <= statuses
    if "requestBody" in operation:
        assert {"413", "415"} <= statuses
    if operation["operationId"] in ("publishPush", "cancelJob", "recallJob"):
        assert "409" in statuses
    success = [s for s in statuses if s.startswith("2")]
    created = {"publishPush": ["202"], "recallJob": ["202"], "createChannel": ["201"], "issueConnectToken": ["201"]}
    assert success == created.get(operation["operationId"], ["200"])


def test_readyz_documents_503_as_readiness():
    responses = SPEC["paths"]["/readyz"]["get"]["responses"]
    for status, state in (("200", "ready"), ("503", "unavailable")):
        schema = responses[status]["content"]["application/json"]["schema"]
        assert schema["allOf"][0] == {"$ref": "#/components/schemas/Readiness"}
        assert schema["allOf"][1]["properties"]["status"] == {"const": state}


def test_path_parameters_keep_the_contracts_patterns():
    parameters = SPEC["components"]["parameters"]
    assert parameters["App"]["schema"]["pattern"] == "^[A-Za-z0-9._-]{1,64}$"
    assert parameters["Token"]["schema"]["pattern"] == "^([0-9a-fA-F]{2}){8,100}$"
    assert parameters["Job"]["schema"]["pattern"] == "^[A-Za-z0-9._:-]{1,128}$"
    assert SPEC["components"]["schemas"]["JobId"]["pattern"] == parameters["Job"]["schema"]["pattern"]
    assert SPEC["components"]["schemas"]["Token"]["pattern"] == parameters["Token"]["schema"]["pattern"]
    tag = parameters["Tag"]["schema"]
    assert (tag["minLength"], tag["maxLength"]) == (1, 128)
    tag_pattern = re.compile(tag["pattern"])
    assert tag_pattern.search("vip") and tag_pattern.search("größe ✓")
    for bad in ("a/b", "a\nb", "a\x7fb", "a\x85b", "\x00"):
        assert not tag_pattern.search(bad), repr(bad)
    key = parameters["IdempotencyKey"]
    assert (key["in"], key["name"], key["required"]) == ("header", "Idempotency-Key", False)
    assert (key["schema"]["minLength"], key["schema"]["maxLength"]) == (1, 128)
    push = SPEC["paths"]["/v1/apps/{app}/push"]["post"]
    assert {"$ref": "#/components/parameters/IdempotencyKey"} in push["parameters"]


def test_every_path_parameter_is_declared():
    for path, item in SPEC["paths"].items():
        declared = {resolve_local(p["$ref"])["name"] for p in item.get("parameters", [])}
        assert declared == set(re.findall(r"\{(\w+)\}", path)), path


def test_external_references_point_into_the_job_schema():
    external = [ref for ref in walk_refs(SPEC) if not ref.startswith("#")]
    assert external, "PushRequest must reuse push-job.schema.json by reference"
    for reference in external:
        resolve_job_schema(reference)  # raises when the pointer leads nowhere


def test_push_request_is_the_job_schema_without_id_and_with_optional_app():
    """PushRequest takes every property of the job schema but `id` and `recall` (a recall is asked
    for with POST …/jobs/{job}/recall), each by reference to the job schema's own definition of it,
    the same required properties but `app`, and the same allOf rules."""
    request = SPEC["components"]["schemas"]["PushRequest"]
    assert request["type"] == JOB_SCHEMA["type"] == "object"
    assert request["additionalProperties"] is False and JOB_SCHEMA["additionalProperties"] is False
    assert set(request["properties"]) == set(JOB_SCHEMA["properties"]) - {"id", "recall"}
    for name, schema in request["properties"].items():
        # The job schema's own property, or the definition that property refers to.
        own = JOB_SCHEMA["properties"][name]
        allowed = {f"{JOB_SCHEMA_REF}#/properties/{name}"}
        if list(own) == ["$ref"]:
            allowed.add(JOB_SCHEMA_REF + own["$ref"])
        assert schema == {"$ref": schema.get("$ref")} and schema["$ref"] in allowed, (name, schema, allowed)
    assert sorted(request["required"]) == sorted(set(JOB_SCHEMA["required"]) - {"app"})
    assert [resolve_job_schema(item["$ref"]) for item in request["allOf"]] == JOB_SCHEMA["allOf"]


def component_validator(name):
    """A JSON Schema validator for components/schemas/NAME, external references resolved."""
    spec_uri = SPEC_PATH.resolve().as_uri()
    job = Resource.from_contents(JOB_SCHEMA)
    registry = Registry().with_resources([
        (spec_uri, Resource.from_contents(SPEC, default_specification=job._specification)),
        (JOB_SCHEMA_PATH.resolve().as_uri(), job),
        (JOB_SCHEMA["$id"], job),
    ])
    return Draft202012Validator(
        {"$ref": f"{spec_uri}#/components/schemas/{name}"},
        registry=registry,
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


def test_push_request_accepts_the_job_examples_without_id():
    validator = component_validator("PushRequest")
    examples = sorted((ROOT / "schemas" / "examples").glob("*.json"))
    assert examples
    for path in examples:
        job = json.loads(path.read_text(encoding="utf-8"))
        job.pop("id", None)
        assert [e.message for e in validator.iter_errors(job)] == [], path.name
        job.pop("app")
        assert [e.message for e in validator.iter_errors(job)] == [], path.name
        assert list(validator.iter_errors({**job, "id": "given"})), f"{path.name}: id must be refused"


# ---------------------------------------------------------------------------------------------
# The live server


@pytest.fixture(scope="module")
def server():
    with pushfleet_demo.serving(devices=200) as running:
        yield running


request = pushfleet_demo.request


def assert_schema(name, document):
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in component_validator(name).iter_errors(document)]
    assert errors == [], f"{name}: {document}"


def assert_error(response, status, code, field):
    got_status, ctype, body = response
    assert (got_status, ctype.split(";")[0].strip()) == (status, "application/json"), response
    assert_schema("Error", body)
    assert (body["error"]["code"], body["error"]["field"]) == (code, field), body
    assert body["error"]["message"]


def job_body(**extra):
    return {
        "environment": "sandbox",
        "audience": {"tokens": [KNOWN_TOKEN]},
        "notification": {"aps": {"alert": "PushFleet API test"}},
        "headers": {"push-type": "alert"},
        **extra,
    }


def test_healthz(server):
    status, ctype, body = request(server, "GET", "/healthz")
    assert (status, ctype.split(";")[0]) == (200, "application/json")
    assert body == {"status": "ok"}


def test_readyz_is_ready(server):
    status, ctype, body = request(server, "GET", "/readyz")
    assert (status, ctype.split(";")[0]) == (200, "application/json"), body
    assert_schema("Readiness", body)
    assert body == {"status": "ready", "checks": {"kafka": "ok", "redis": "ok"}}


def test_metrics_are_prometheus_text(server):
    status, ctype, body = request(server, "GET", "/metrics")
    assert status == 200
    assert ctype.replace(" ", "").startswith("text/plain;version=0.0.4"), ctype


def test_v1_without_a_key_is_401(server):
    assert_error(request(server, "GET", f"/v1/apps/{server.app}/devices"), 401, "unauthorized", "Authorization")


def test_v1_with_a_malformed_authorization_header_is_401(server):
    response = request(server, "GET", f"/v1/apps/{server.app}/devices", headers={"Authorization": server.key})
    assert_error(response, 401, "unauthorized", "Authorization")


def test_another_apps_key_is_403(server):
    response = request(server, "GET", f"/v1/apps/{server.other_app}/devices", key=server.key)
    assert_error(response, 403, "forbidden", "Authorization")


def test_unknown_app_is_404_before_auth(server):
    assert_error(request(server, "GET", "/v1/apps/no-such-app/devices"), 404, "not-found", "app")


def test_unknown_route_is_404(server):
    status, ctype, body = request(server, "GET", "/v1/no-such-route", key=server.key)
    assert (status, ctype.split(";")[0].strip()) == (404, "application/json"), body
    assert_schema("Error", body)
    assert body["error"]["code"] == "not-found"


def test_bad_path_parameter_is_400(server):
    response = request(server, "GET", f"/v1/apps/{server.app}/devices/xyz", key=server.key)
    assert_error(response, 400, "invalid-token", "token")


def test_unknown_job_is_404(server):
    response = request(server, "GET", f"/v1/apps/{server.app}/jobs/no-such-job", key=server.key)
    assert_error(response, 404, "not-found", "job")


def test_bind_then_get_device(server):
    path = f"/v1/apps/{server.app}/devices/{KNOWN_TOKEN}"
    status, _, bound = request(server, "PUT", path, {"environment": "sandbox", "tags": [KNOWN_TAG]}, key=server.key)
    assert status == 200, bound
    assert_schema("Device", bound)
    assert (bound["token"], bound["environment"], bound["tags"]) == (KNOWN_TOKEN, "sandbox", [KNOWN_TAG])
    status, _, device = request(server, "GET", path, key=server.key)
    assert (status, device) == (200, bound)


def test_tags_are_utf8_and_percent_decoded(server):
    """Tags may hold any character but controls (and "/" in a path): the tag parameter is
    percent-decoded, and the limit is 128 bytes of UTF-8, not 128 characters."""
    token = "7e" * 32
    path = f"/v1/apps/{server.app}/devices/{token}"
    tags = ["größe ✓", "a b", "é" * 64]  # the last one is 128 bytes
    status, _, device = request(server, "PUT", path, {"environment": "sandbox", "tags": tags}, key=server.key)
    assert status == 200, device
    assert sorted(device["tags"]) == sorted(tags)
    encoded = urllib.parse.quote("größe ✓", safe="")
    status, _, now = request(server, "DELETE", f"{path}/tags/{encoded}", key=server.key)
    assert (status, sorted(now["tags"])) == (200, sorted(["a b", "é" * 64])), now
    status, _, body = request(server, "POST", f"{path}/tags", {"tags": ["é" * 64 + "x"]}, key=server.key)
    assert status == 400, body
    assert_schema("Error", body)
    bell = urllib.parse.quote("a\u0007b", safe="")
    assert_error(request(server, "DELETE", f"{path}/tags/{bell}", key=server.key), 400, "invalid-field", "tag")
    status, _, body = request(server, "DELETE", path, key=server.key)
    assert (status, body) == (200, {"token": token, "removed": True})
    assert_error(request(server, "GET", path, key=server.key), 404, "not-found", "token")


def test_idempotency_key_replays_and_conflicts(server):
    path = f"/v1/apps/{server.app}/push"
    key = {"Idempotency-Key": f"api-test-{time.time_ns()}"}
    first = request(server, "POST", path, job_body(), key=server.key, headers=key)
    assert first[0] == 202, first
    assert_schema("PushAccepted", first[2])
    assert first[2]["replayed"] is False
    assert first[2]["status"] == f"/v1/apps/{server.app}/jobs/{first[2]['job']}"
    again = request(server, "POST", path, job_body(), key=server.key, headers=key)
    assert (again[0], again[2]) == (202, {**first[2], "replayed": True})
    other = request(server, "POST", path, job_body(notification={"aps": {"alert": "other"}}), key=server.key, headers=key)
    assert_error(other, 409, "conflict", "Idempotency-Key")
    status, _, job = request(server, "GET", first[2]["status"], key=server.key)
    assert status == 200, job
    assert_schema("JobStatus", job)
    assert (job["job"], job["app"]) == (first[2]["job"], server.app)


def test_push_with_an_id_is_400(server):
    status, ctype, body = request(server, "POST", f"/v1/apps/{server.app}/push", job_body(id="mine"), key=server.key)
    assert (status, ctype.split(";")[0].strip()) == (400, "application/json"), body
    assert_schema("Error", body)
    assert body["error"]["field"] == "id"


def test_push_for_another_app_in_the_body_is_400(server):
    status, _, body = request(server, "POST", f"/v1/apps/{server.app}/push", job_body(app=server.other_app), key=server.key)
    assert status == 400, body
    assert_schema("Error", body)
    assert body["error"]["field"] == "app"


def _toml(value):
    return json.dumps(value)  # a JSON string or list of strings is a valid TOML basic string / array


def known_device_and_jobs(server):
    """Binds the known device and publishes a job scheduled six hours ahead and one sent now,
    with APP's key; returns the jobs' ids."""
    bound = request(server, "PUT", f"/v1/apps/{server.app}/devices/{KNOWN_TOKEN}",
                    {"environment": "sandbox", "tags": [KNOWN_TAG]}, key=server.key)
    assert bound[0] == 200, bound
    send_at = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=6)).strftime("%Y-%m-%dT%H:%M:%SZ")
    scheduled = request(server, "POST", f"/v1/apps/{server.app}/push", job_body(**{"send-at": send_at}), key=server.key)
    assert scheduled[0] == 202, scheduled
    immediate = request(server, "POST", f"/v1/apps/{server.app}/push", job_body(), key=server.key)
    assert immediate[0] == 202, immediate
    return [scheduled[2]["job"], immediate[2]["job"]]


def fuzz_config(server, directory, key, jobs):
    """A schemathesis.toml: `key` as the bearer key (none when None), `app` pinned, and the known
    token, `jobs` and the known tag offered as dictionaries."""
    auth = ["[auth.openapi.bearer]", f"bearer = {_toml(key)}"] if key is not None else []
    path = directory / "schemathesis.toml"
    path.write_text(
        "\n".join([
            "request-timeout = 60",
            "[cache]",
            "enabled = false",
            "[generation]",
            'database = "none"',
            *auth,
            "[parameters]",
            f'"path.app" = {_toml(server.app)}',
            '"path.token" = { dictionary = "tokens", probability = 0.5 }',
            '"body.token" = { dictionary = "tokens", probability = 0.5 }',
            '"path.job" = { dictionary = "jobs", probability = 0.5 }',
            '"body.job" = { dictionary = "jobs", probability = 0.5 }',
            '"path.tag" = { dictionary = "tags", probability = 0.5 }',
            "[dictionaries.tokens]",
            f"values = {_toml([KNOWN_TOKEN])}",
            "[dictionaries.jobs]",
            f"values = {_toml(jobs)}",
            "[dictionaries.tags]",
            f"values = {_toml([KNOWN_TAG])}",
            "",
        ]),
        encoding="utf-8",
    )
    return path


def run_schemathesis(server, directory, key, jobs, checks, examples, grant=None):
    """Fuzzes every operation of the spec against the server with `key`, offering `jobs` as job
    ids; fails with schemathesis' output when a check fails, when an operation was left out, or
    when the server exited."""
    config = fuzz_config(server, directory, key, jobs)
    seed = os.environ.get("PUSHFLEET_FUZZ_SEED", "5")
    junit = directory / "junit.xml"
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "--no-color",
        "run", str(SPEC_PATH), "--url", server.url,
        "--checks", checks, "--max-examples", examples, "--seed", seed,
        "--report", "junit", "--report-junit-path", str(junit),
    ]
    environment = dict(os.environ)
    if grant is not None:
        # The check of fuzz_hooks.py, imported from this directory.
        environment.update(
            SCHEMATHESIS_HOOKS="fuzz_hooks", PUSHFLEET_FUZZ_GRANT=grant,
            PYTHONPATH=os.pathsep.join(filter(None, [str(pathlib.Path(__file__).parent), environment.get("PYTHONPATH")])),
        )
    # cwd: schemathesis and Hypothesis keep their files (.hypothesis/) in the working directory.
    completed = subprocess.run(
        command, cwd=directory, env=environment, capture_output=True, text=True, timeout=FUZZ_TIMEOUT, check=False,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, (
        f"schemathesis failed (exit {completed.returncode}):\n{' '.join(command)}\n"
        f"(configuration: {config})\n\n{output}"
    )
    # Every operation of the spec was exercised (a filter or a loading problem would drop some).
    tested = {case.get("name") for case in ElementTree.parse(junit).getroot().iter("testcase")}
    assert set(OPERATION_IDS) <= tested, (sorted(set(OPERATION_IDS) - tested), output)
    assert server.process.poll() is None, "the server exited during the fuzz:\n" + "\n".join(server.lines[-50:])


def app_state(server, jobs):
    """What a foreign key must not change: APP's device count, its tags, the known device, and
    the status of `jobs` (scheduled ones: nothing else moves them)."""
    state = {}
    for name, path in [
        ("devices", f"/v1/apps/{server.app}/devices"),
        ("tags", f"/v1/apps/{server.app}/tags"),
        ("device", f"/v1/apps/{server.app}/devices/{KNOWN_TOKEN}"),
    ] + [(f"job {job}", f"/v1/apps/{server.app}/jobs/{job}") for job in jobs]:
        status, _, body = request(server, "GET", path, key=server.key)
        assert status == 200, (path, status, body)
        state[name] = body
    return state


def test_schemathesis_fuzz(server, tmp_path):
    run_schemathesis(
        server, tmp_path, server.key, known_device_and_jobs(server), FUZZ_CHECKS, os.environ.get("PUSHFLEET_FUZZ_EXAMPLES", "25"),
    )


@pytest.mark.parametrize("who", ["no key", "another app's key"])
def test_schemathesis_fuzz_without_access(server, tmp_path, who):
    """Every operation fuzzed with no key, or with the other app's key against APP: no 5xx, no
    2xx on /v1, and APP's devices, tags and scheduled job unchanged afterwards."""
    key = None if who == "no key" else server.other_key
    scheduled = known_device_and_jobs(server)[:1]
    # Queued until the worker reads it from Kafka and files it in the schedule.
    deadline = time.monotonic() + 60
    while (before := app_state(server, scheduled))[f"job {scheduled[0]}"]["state"] != "scheduled":
        assert time.monotonic() < deadline, before
        time.sleep(0.2)
    run_schemathesis(
        server, tmp_path, key, scheduled, "not_a_server_error,no_access_beyond_the_key",
        os.environ.get("PUSHFLEET_FUZZ_DENIED_EXAMPLES", "10"), grant="none",
    )
    assert app_state(server, scheduled) == before


def test_schemathesis_fuzz_with_a_device_key(server, tmp_path):
    """Every operation fuzzed with APP's device key: no 5xx, and no 2xx outside the device
    operations (a key shipped in an app cannot publish or steer a campaign)."""
    run_schemathesis(
        server, tmp_path, server.device_key, known_device_and_jobs(server), "not_a_server_error,no_access_beyond_the_key",
        os.environ.get("PUSHFLEET_FUZZ_DENIED_EXAMPLES", "10"), grant="device",
    )
