"""The schemas of push.deliveries, push.feedback and push.dlq accept the example messages in
schemas/messages/ (which PushCoreTests decode with the Swift models), and reject broken ones."""

import copy
import json
import pathlib

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"
MESSAGES = SCHEMAS / "messages"


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


REGISTRY = Registry().with_resources(
    (schema["$id"].rsplit("/", 1)[-1], Resource.from_contents(schema))
    for schema in (load(p) for p in SCHEMAS.glob("*.schema.json"))
)

CASES = {
    "push.deliveries.json": "push-delivery.schema.json",
    "push.feedback.json": "push-feedback.schema.json",
    "push.dlq-message.json": "push-dlq.schema.json",
    "push.dlq-notification.json": "push-dlq.schema.json",
}


def validator(name):
    schema = load(SCHEMAS / name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=REGISTRY)


@pytest.mark.parametrize("example,schema", sorted(CASES.items()))
def test_example_is_valid(example, schema):
    errors = list(validator(schema).iter_errors(load(MESSAGES / example)))
    assert errors == [], [e.message for e in errors]


def test_every_example_is_checked():
    assert sorted(p.name for p in MESSAGES.glob("*.json")) == sorted(CASES)


@pytest.mark.parametrize(
    "example,schema,breakage",
    [
        ("push.deliveries.json", "push-delivery.schema.json", lambda m: m.pop("chunk")),
        ("push.deliveries.json", "push-delivery.schema.json", lambda m: m.pop("positions")),
        ("push.deliveries.json", "push-delivery.schema.json", lambda m: m.update(positions=[-1, 2])),
        ("push.deliveries.json", "push-delivery.schema.json", lambda m: m.update(positions=[2**32, 2])),
        ("push.deliveries.json", "push-delivery.schema.json", lambda m: m.update(audience={"broadcast": True})),
        ("push.deliveries.json", "push-delivery.schema.json", lambda m: m["audience"].update(tokens=["ab"] * 1001)),
        ("push.deliveries.json", "push-delivery.schema.json", lambda m: m["headers"].update(priority=7)),
        ("push.feedback.json", "push-feedback.schema.json", lambda m: m.update(token="xyz")),
        ("push.feedback.json", "push-feedback.schema.json", lambda m: m.pop("invalid-since")),
        ("push.dlq-message.json", "push-dlq.schema.json", lambda m: m.update(extra=1)),
        ("push.dlq-notification.json", "push-dlq.schema.json", lambda m: m.pop("reason")),
    ],
)
def test_broken_message_is_rejected(example, schema, breakage):
    message = copy.deepcopy(load(MESSAGES / example))
    breakage(message)
    assert list(validator(schema).iter_errors(message)), "the schema accepted a broken message"
