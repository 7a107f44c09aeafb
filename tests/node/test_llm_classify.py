"""The optional LLM classifier (node/absorb/llm_classify.py): its request and answer as pure
functions, and its wiring into absorb against a tiny chat-completions server on loopback. No real
model is ever called; whatever goes wrong, the rules decide and the log says so in one line."""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
import urllib.request
from collections.abc import AsyncIterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from feral.node.absorb.llm_classify import LLMClassifier, build_request, needs_asking, parse_answer
from feral.node.node import Node
from feral.node.settings.config import LLMSettings, load_settings, save_settings
from feral.storage.absorb.absorb_store import Candidates
from feral.sync.errors import ConfigError

from .support import Mesh
from .test_summarise import FakeEndpoint, completion, endpoint  # noqa: F401 - the fixture

SETTINGS = LLMSettings("http://127.0.0.1:9/v1/", "tiny-model", "FERAL_TEST_KEY")
CHEN = {"id": "f-chen", "subject": "user", "predicate": "doctor", "object": "Dr. Chen",
        "archived": False, "deleted": False}  # fmt: skip
BOB = {"id": "f-bob", "subject": "Bob", "predicate": "doctor", "object": "Dr. Chen",
       "archived": False, "deleted": False}  # fmt: skip
ASKED = Candidates(("user", "doctor", "Dr. Lee"), None, [CHEN], None, [(BOB, 0.7)])


def answer(verdict: object) -> bytes:
    return completion(verdict if isinstance(verdict, str) else json.dumps(verdict))


def test_the_request_numbers_the_stored_facts_and_carries_the_key():
    request = build_request(SETTINGS, ASKED, {"FERAL_TEST_KEY": "sk-test"})
    assert request.full_url == "http://127.0.0.1:9/v1/chat/completions"
    assert request.get_header("Authorization") == "Bearer sk-test"
    body = json.loads(request.data)  # type: ignore[arg-type]
    assert (body["model"], body["temperature"]) == ("tiny-model", 0)
    question = body["messages"][1]["content"]
    assert question == "New fact: user doctor Dr. Lee\nStored facts:\n1. user doctor Dr. Chen\n" \
                       "2. Bob doctor Dr. Chen"  # fmt: skip
    assert "f-chen" not in json.dumps(body)  # ids never leave the device
    with pytest.raises(LookupError):
        build_request(SETTINGS, ASKED, {})


def test_an_answer_becomes_a_decision_held_to_what_the_rules_could_write():
    supersede = parse_answer(answer({"classification": "supersede", "targets": [1]}), ASKED)
    assert (supersede.classification, supersede.supersedes) == ("supersede", ("f-chen",))
    fenced = "```json\n" + json.dumps({"classification": "related", "targets": [2, 2]}) + "\n```"
    assert parse_answer(answer(fenced), ASKED).related == ("f-bob",)
    assert parse_answer(answer({"classification": "new"}), ASKED).classification == "new"
    duplicate = parse_answer(answer({"classification": "duplicate", "targets": [2]}), ASKED)
    assert duplicate.duplicate_of == "f-bob"


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        json.dumps({"choices": []}).encode(),
        answer("sure, it is new"),
        answer({"classification": "overwrite", "targets": [1]}),
        answer({"classification": "duplicate", "targets": [1, 2]}),
        answer({"classification": "duplicate", "targets": [3]}),
        answer({"classification": "related", "targets": ["1"]}),
        answer({"classification": "supersede", "targets": [2]}),  # Bob's doctor is not mine
        answer({"classification": "new", "targets": [1]}),
    ],
)
def test_garbage_or_an_overreaching_answer_is_refused(payload: bytes):
    with pytest.raises(ValueError):
        parse_answer(payload, ASKED)


def test_nothing_is_asked_for_an_exact_repeat_or_with_nothing_near():
    assert needs_asking(ASKED)
    assert not needs_asking(Candidates(ASKED.triple, None, [], None, []))
    assert not needs_asking(dataclasses.replace(ASKED, exact=CHEN))


class SlowEndpoint(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the http.server naming
        time.sleep(2)
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_timeout_lets_the_rules_decide_with_one_log_line(caplog):
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowEndpoint)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        classifier = LLMClassifier(LLMSettings(url, "tiny"), opener=no_proxy.open, timeout=0.2)
        with caplog.at_level(logging.WARNING, logger="feral.classify"):
            assert classifier.classify(ASKED) is None
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith("! the LLM classifier failed, the rules decide:")


# -- wired into absorb, on a real node -------------------------------------------------------


@pytest.fixture
async def llm_node(
    tmp_path: Path,
    endpoint: str,  # noqa: F811 - the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Node]:
    monkeypatch.setenv("no_proxy", "*")
    monkeypatch.setenv("FERAL_TEST_KEY", "sk-test")
    mesh = Mesh(tmp_path)
    mesh.add("a")
    settings = load_settings(mesh.home("a"))
    memory = dataclasses.replace(
        settings.memory, classifier="llm", llm=LLMSettings(endpoint, "tiny", "FERAL_TEST_KEY")
    )
    save_settings(mesh.home("a"), dataclasses.replace(settings, memory=memory))
    node = await mesh.open("a")
    yield node
    await mesh.aclose()


async def test_the_models_duplicate_is_what_remember_answers(llm_node: Node):
    first = await llm_node.absorb(text="I like green tea")  # nothing near: no question asked
    assert first.classification == "new" and FakeEndpoint.requests == []
    FakeEndpoint.answers.append((200, answer({"classification": "duplicate", "targets": [1]})))
    again = await llm_node.absorb(text="green tea is what I like")
    assert (again.classification, again.memory_id) == ("duplicate", first.memory_id)
    (request,) = FakeEndpoint.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    assert "1. user likes green tea" in request["body"]["messages"][1]["content"]


@pytest.mark.parametrize(
    "reply", [(500, b"{}"), (200, b"<html>oops</html>"), (200, answer("it is new, I think"))]
)
async def test_an_endpoint_that_fails_leaves_the_rules_to_decide(llm_node: Node, reply, caplog):
    first = await llm_node.absorb(text="I like green tea")
    FakeEndpoint.answers.append(reply)
    with caplog.at_level(logging.WARNING, logger="feral.classify"):
        again = await llm_node.absorb(text="green tea is what I like")
    assert again.classification != "duplicate" or again.memory_id == first.memory_id
    assert len(FakeEndpoint.requests) == 1
    lines = [r.getMessage() for r in caplog.records if r.name == "feral.classify"]
    assert len(lines) == 1 and lines[0].startswith("! the LLM classifier failed")


def test_the_llm_classifier_needs_an_endpoint(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"memory": {"classifier": "llm"}}))
    with pytest.raises(ConfigError, match="classifier"):
        load_settings(home)
    (home / "settings.json").write_text(json.dumps({"memory": {"classifier": "magic"}}))
    with pytest.raises(ConfigError, match="classifier"):
        load_settings(home)
    assert load_settings(tmp_path / "fresh").memory.classifier == "rules"  # the default


async def test_a_models_duplicate_that_changes_a_number_or_unit_is_written_and_related(
    llm_node: Node,
):
    said = "take {} of melatonin every night before bed with warm water and honey"
    first = await llm_node.absorb(text=said.format("5 mg"))
    FakeEndpoint.answers.append((200, answer({"classification": "duplicate", "targets": [1]})))
    again = await llm_node.absorb(text=said.format("5 g"))
    assert len(FakeEndpoint.requests) == 1  # the model was asked, and said "duplicate"
    assert again.classification == "related" and again.memory_id != first.memory_id
    assert [(e["type"], e["to_id"]) for e in again.edges] == [("related_to", first.memory_id)]
