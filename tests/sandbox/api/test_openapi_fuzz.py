"""Fuzz every /api operation of a real sandbox (loopback HTTP) from its own ``/openapi.json``.

Schemathesis generates requests per operation, sent with the demo user's key; every response
must be free of 5xx and match the schema documented for its status. Three kinds of case:

- ``positive`` and ``negative``: requests that follow, or break, the documented schema;
- ``grounded``: positive requests whose ids name real objects (an image, a style and a collection
  the demo user may use), so handlers run past their lookups into charging and the engines.

The ``/sandbox`` controls are fuzzed the same way (positive, negative, and grounded on a real
enterprise user) against a sandbox of their own: they move the clock and inject faults for the whole
instance. Hypothesis is driven through ``operation.as_strategy()`` rather than
``schemathesis.pytest.from_fixture(...).parametrize()``, whose lazy loader reads
``request.node._nodeid``, gone in pytest 9.2 (schemathesis 4.32.5).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings, strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from imagekit.sandbox import EmbeddedSandbox
from tests.helpers import TLS

pytestmark = pytest.mark.slow(1)  # each case a second or so; 73 of them

OPERATIONS = [
    ("GET", "/api/users/me"), ("GET", "/api/users/me/usage"), ("GET", "/api/users/me/styles"),
    ("GET", "/api/users/me/collectionCount"), ("POST", "/api/images/create"), ("GET", "/api/images/{id}"),
    ("GET", "/api/images/{id}/binary"), ("POST", "/api/images/{id}/enhance"), ("POST", "/api/images/{id}/outpaint"),
    ("POST", "/api/images/{id}/retry"), ("POST", "/api/images/{id}/fill"), ("POST", "/api/images/{id}/cleanUp"),
    ("POST", "/api/images/{id}/removeBg"), ("POST", "/api/images/{id}/vectorize"),
    ("POST", "/api/images/{id}/upsize"), ("POST", "/api/images/cancelEdit/{requestId}"),
    ("POST", "/api/images/textToPrompt"), ("POST", "/api/images/imageToPrompt"),
]
"""The interface's operations (the spec's summary table)."""

_INPUTLESS = {path for _, path in OPERATIONS if path.startswith("/api/users/me")}
_GROUNDED = {path for _, path in OPERATIONS if "{id}" in path} | {
    "/api/images/create", "/api/images/textToPrompt", "/api/images/imageToPrompt"}
CASES = (
    [(method, path, "positive") for method, path in OPERATIONS]
    + [(method, path, "negative") for method, path in OPERATIONS if path not in _INPUTLESS]
    + [(method, path, "grounded") for method, path in OPERATIONS if path in _GROUNDED]
)
"""Negative cases need an input to break (the /api/users/me operations take none); grounded
cases need an id to pin."""

CONTROLS = [
    ("GET", "/sandbox/clock"), ("POST", "/sandbox/clock/advance"), ("GET", "/sandbox/faults"),
    ("POST", "/sandbox/faults"), ("DELETE", "/sandbox/faults"), ("POST", "/sandbox/users"),
    ("POST", "/sandbox/users/{user_id}/keys"), ("POST", "/sandbox/sessions"),
    ("POST", "/sandbox/users/{user_id}/credits"), ("PATCH", "/sandbox/users/{user_id}/enterprise"),
    ("GET", "/sandbox/stats"),
]
"""The sandbox-only controls."""

CONTROL_CASES = (
    [(method, path, kind) for method, path in CONTROLS for kind in ("positive", "negative")]
    + [(method, path, "grounded") for method, path in CONTROLS if "{user_id}" in path or path == "/sandbox/sessions"]
)

FUZZ = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

CONTROL_FUZZ = FUZZ
"""Controls get as many cases as the API: though they answer in milliseconds, schemathesis's own
work (making and checking a case) costs some 25 ms of CPU apiece, and 50 a control cost 36 CPU-s."""


@dataclass(frozen=True)
class Grounds:
    """Real objects of the demo user that grounded cases point at."""

    image_id: int
    style_id: int
    collection_id: int

    def pin(self, case, source: str):
        """``case`` with its ids replaced by real ones; a create keeps only ``source`` as its mode."""
        if "id" in (case.path_parameters or {}):
            case.path_parameters["id"] = self.image_id
        if isinstance(case.body, dict):
            real = {"styleId": self.style_id, "collectionId": self.collection_id,
                    "image": f"/api/images/{self.image_id}/binary", "imageId": self.image_id}
            if case.operation.path == "/api/images/create":
                for name in ("styleId", "collectionId", "image"):
                    case.body.pop(name, None)
                case.body[source] = real[source]
            for name in real.keys() & case.body.keys():
                case.body[name] = real[name]
        return case


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory) -> Iterator[EmbeddedSandbox]:
    """A sandbox of its own (the fuzz spends the demo user's credit); 256 px images keep it quick."""
    with EmbeddedSandbox(tmp_path_factory.mktemp("fuzz"), base_size=256) as running:
        yield running


def schema_of(box: EmbeddedSandbox, **headers: str):
    """The sandbox's own /openapi.json, aimed at it with ``headers``."""
    schema = schemathesis.openapi.from_url(f"{box.url}/openapi.json")
    schema.config.update(base_url=box.url, headers=headers)
    return schema


def fuzz(cases, config=FUZZ) -> None:
    """Every generated case answers without a 5xx and as its documented schema says."""
    @config
    @given(case=cases)
    def check(case):
        case.call_and_validate(checks=[not_a_server_error, response_schema_conformance], timeout=60)

    check()


@pytest.fixture(scope="module")
def api_schema(fuzzed: EmbeddedSandbox):
    return schema_of(fuzzed, **{"X-Api-Key": fuzzed.api_key})


@pytest.fixture(scope="module")
def grounds(fuzzed: EmbeddedSandbox) -> Grounds:
    with httpx.Client(base_url=fuzzed.url, headers={"X-Api-Key": fuzzed.api_key}, timeout=60, verify=TLS) as api:
        style_id = api.get("/api/users/me/styles").raise_for_status().json()[0]["styleId"]
        created = api.post("/api/images/create", json={"prompt": "a lighthouse at dusk", "styleId": style_id})
        image_id = created.raise_for_status().json()["images"][0]["imageId"]
    return Grounds(image_id=image_id, style_id=style_id, collection_id=1)  # 1: the public "Sunset Coast"


def test_every_api_operation_is_fuzzed(api_schema):
    served = {(op.method.upper(), op.path) for op in (result.ok() for result in api_schema.get_all_operations())
              if not op.path.startswith("/sandbox")}
    assert served == set(OPERATIONS)


@pytest.mark.parametrize(("method", "path", "kind"), CASES, ids=[" ".join(case) for case in CASES])
def test_no_server_error_and_documented_responses(api_schema, grounds: Grounds, method: str, path: str, kind: str):
    operation = api_schema[path][method]
    mode = GenerationMode.NEGATIVE if kind == "negative" else GenerationMode.POSITIVE
    cases = operation.as_strategy(generation_mode=mode)
    if kind == "grounded":
        cases = st.tuples(cases, st.sampled_from(["styleId", "collectionId", "image"])).map(lambda pair: grounds.pin(*pair))
    fuzz(cases)


@pytest.fixture(scope="module")
def controlled(tmp_path_factory) -> Iterator[EmbeddedSandbox]:
    """A sandbox whose clock, faults and users the control fuzz may change at will."""
    with EmbeddedSandbox(tmp_path_factory.mktemp("fuzz-controls"), base_size=256) as running:
        yield running


@pytest.fixture(scope="module")
def control_schema(controlled: EmbeddedSandbox):
    return schema_of(controlled)


@pytest.fixture(scope="module")
def enterprise_user(controlled: EmbeddedSandbox) -> int:
    made = httpx.post(f"{controlled.url}/sandbox/users", json={"email": "fuzz@x.io", "plan": "enterprise"}, verify=TLS, timeout=120)
    return made.raise_for_status().json()["userId"]


def _grounded_on(user_id: int):
    def pin(case):
        if "user_id" in (case.path_parameters or {}):
            case.path_parameters["user_id"] = user_id
        if isinstance(case.body, dict) and "userId" in case.body:
            case.body["userId"] = user_id
        return case
    return pin


def test_every_control_is_fuzzed(control_schema):
    served = {(op.method.upper(), op.path) for op in (result.ok() for result in control_schema.get_all_operations())
              if op.path.startswith("/sandbox")}
    assert served == set(CONTROLS)


@pytest.mark.parametrize(("method", "path", "kind"), CONTROL_CASES, ids=[" ".join(case) for case in CONTROL_CASES])
def test_controls_have_no_server_error(control_schema, enterprise_user: int, method: str, path: str, kind: str):
    operation = control_schema[path][method]
    cases = operation.as_strategy(generation_mode=GenerationMode.NEGATIVE if kind == "negative" else GenerationMode.POSITIVE)
    if kind == "grounded":
        cases = cases.map(_grounded_on(enterprise_user))
    fuzz(cases, CONTROL_FUZZ)
