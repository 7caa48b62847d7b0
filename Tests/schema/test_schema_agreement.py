"""The push job schema and the Swift validator agree on every example.

Checks, for schemas/examples/*.json (valid) and schemas/examples/invalid/*.json (one rejection
each, expectations in schemas/examples/invalid/expectations.json):

1. python-jsonschema (Draft 2020-12, date-time format checked) accepts every valid example and
   rejects every invalid one, except the invalid examples marked "swift-only", which the schema
   cannot reject (it must accept them, or the mark is stale);
2. the Swift validator, run as `$PUSHFLEET_BIN job validate --json FILE...`, accepts every valid
   example and rejects every invalid one with the expected field and code, and exits 0 or 1
   accordingly.

PUSHFLEET_BIN is required: without it the agreement cannot be checked and the tests fail.
"""

import json
import os
import pathlib
import subprocess

import pytest
from jsonschema import Draft202012Validator

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA_PATH = ROOT / "schemas" / "push-job.schema.json"
EXAMPLES = ROOT / "schemas" / "examples"
INVALID = EXAMPLES / "invalid"
EXPECTATIONS_PATH = INVALID / "expectations.json"

VALID_FILES = sorted(EXAMPLES.glob("*.json"))
INVALID_FILES = sorted(p for p in INVALID.glob("*.json") if p != EXPECTATIONS_PATH)
EXPECTATIONS = json.loads(EXPECTATIONS_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def schema_errors(validator, path):
    """The schema's error messages for a file; a file that is not JSON is one error."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        return [f"not JSON: {error}"]
    return [error.message for error in validator.iter_errors(document)]


def run_swift(paths):
    """Runs the Swift validator on `paths`; returns (exit code, {file name: result})."""
    binary = os.environ.get("PUSHFLEET_BIN")
    if not binary:
        pytest.fail("PUSHFLEET_BIN is not set: point it at the pushfleet executable")
    completed = subprocess.run(
        [binary, "job", "validate", "--json", *map(str, paths)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    lines = [line for line in completed.stdout.splitlines() if line.strip()]
    results = [json.loads(line) for line in lines]
    assert [r["file"] for r in results] == [str(p) for p in paths], completed.stderr
    return completed.returncode, {pathlib.Path(r["file"]).name: r for r in results}


@pytest.fixture(scope="module")
def swift_valid():
    return run_swift(VALID_FILES)


@pytest.fixture(scope="module")
def swift_invalid():
    return run_swift(INVALID_FILES)


def test_examples_exist():
    assert len(VALID_FILES) >= 10
    assert len(INVALID_FILES) >= 10


def test_every_invalid_example_has_an_expectation():
    assert sorted(p.name for p in INVALID_FILES) == sorted(EXPECTATIONS)


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: p.name)
def test_schema_accepts_valid_example(validator, path):
    assert schema_errors(validator, path) == []


@pytest.mark.parametrize("path", INVALID_FILES, ids=lambda p: p.name)
def test_schema_verdict_on_invalid_example(validator, path):
    errors = schema_errors(validator, path)
    reason = EXPECTATIONS[path.name].get("swift-only")
    if reason:
        assert errors == [], f"marked swift-only ({reason}) but the schema rejects it: {errors}"
    else:
        assert errors, "the schema accepts an example the Swift validator must reject"


def test_swift_exit_code_all_valid(swift_valid):
    code, _ = swift_valid
    assert code == 0


def test_swift_exit_code_any_invalid(swift_invalid):
    code, _ = swift_invalid
    assert code == 1


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: p.name)
def test_swift_accepts_valid_example(swift_valid, path):
    _, results = swift_valid
    result = results[path.name]
    assert result["valid"] is True, result
    assert result["field"] is None and result["code"] is None
    assert result["job"]["payload-bytes"] > 0


@pytest.mark.parametrize("path", INVALID_FILES, ids=lambda p: p.name)
def test_swift_rejects_invalid_example_at_expected_field(swift_invalid, path):
    _, results = swift_invalid
    result = results[path.name]
    expected = EXPECTATIONS[path.name]
    assert result["valid"] is False, result
    assert (result["field"], result["code"]) == (expected["field"], expected["code"]), result["message"]
    assert result["message"]
