"""A schemathesis check for the runs that fuzz the API with a key that must not grant access.

`schemathesis` imports this module when SCHEMATHESIS_HOOKS names it. PUSHFLEET_FUZZ_GRANT says
what the run's key may do with the fuzzed app:
- `none` (no key, or another app's key): every /v1 answer is a 4xx, never a 2xx;
- `device` (a device key of the app): operations without `x-key-scope: device` in the spec
  answer 4xx, never 2xx; device operations may succeed.
Operations outside /v1 (health, readiness, metrics) need no key and are not judged here.
"""

import os
import pathlib

import schemathesis
import yaml

SPEC = yaml.safe_load((pathlib.Path(__file__).resolve().parents[2] / "schemas" / "openapi.yaml").read_text(encoding="utf-8"))
DEVICE_OPERATIONS = {
    (method.upper(), path)
    for path, item in SPEC["paths"].items()
    for method, operation in item.items()
    if isinstance(operation, dict) and operation.get("x-key-scope") == "device"
}


def denied(method, path, grant):
    """Whether a key with `grant` must be refused at this operation."""
    if not path.startswith("/v1/"):
        return False
    if grant == "device":
        return (method.upper(), path) not in DEVICE_OPERATIONS
    assert grant == "none", f"PUSHFLEET_FUZZ_GRANT must be none or device, not {grant!r}"
    return True


@schemathesis.check
def no_access_beyond_the_key(ctx, response, case):
    """A key is refused (4xx) wherever it grants nothing."""
    grant = os.environ.get("PUSHFLEET_FUZZ_GRANT", "none")
    if denied(case.operation.method, case.operation.path, grant) and not 400 <= response.status_code < 500:
        raise AssertionError(
            f"{case.operation.method.upper()} {case.operation.path} answered {response.status_code} "
            f"to a key that grants {grant!r} here: it must be refused with a 4xx"
        )
