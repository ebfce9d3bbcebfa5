import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from tests.fakes.model_server import SCHEMA_DIR, SYSTEMONE_REQUEST_SCHEMA, SYSTEMONE_RESPONSE_SCHEMA
from verifier.backends.systemone import systemone_probabilities, systemone_request_body
from verifier.prompts import question_document

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "reference" / "system-one"


@pytest.mark.parametrize("name", ["system-one-request-v1.schema.json", "system-one-response-v1.schema.json"])
def test_vendored_schema_equals_the_shared_reference(name):
    if not (SHARED / name).exists():
        pytest.skip("the shared reference directory is not beside this checkout")
    assert json.loads((SCHEMA_DIR / name).read_text()) == json.loads((SHARED / name).read_text())


def test_recorded_exchange_matches_the_schemas():
    if not (SHARED / "example-exchange.json").exists():
        pytest.skip("the shared reference directory is not beside this checkout")
    exchange = json.loads((SHARED / "example-exchange.json").read_text())
    assert list(Draft202012Validator(SYSTEMONE_REQUEST_SCHEMA).iter_errors(exchange["request"])) == []
    assert list(Draft202012Validator(SYSTEMONE_RESPONSE_SCHEMA).iter_errors(exchange["response"])) == []
    assert systemone_probabilities(exchange["response"], checks=("positive",)) == {"positive": 0.99}


def test_built_request_matches_the_request_schema():
    document = question_document(text="Q?", options=("a", "b"), correct_index=1, explanation="e")
    body = systemone_request_body(
        model="jev-1.13.0", document_field="document", document=document, checks=("answer_correct", "explanation_true")
    )
    assert list(Draft202012Validator(SYSTEMONE_REQUEST_SCHEMA).iter_errors(body)) == []
