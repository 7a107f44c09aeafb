"""node/absorb/chat_endpoint.py: the one client of an OpenAI-compatible chat endpoint, against a
fake on loopback. Its callers (the LLM summariser and classifier) are tested in their own files."""

from __future__ import annotations

import urllib.request

import pytest

from feral.node.absorb.chat_endpoint import ChatEndpoint, ChatFailed
from feral.node.settings.config import LLMSettings

from .test_summarise import FakeEndpoint, completion, endpoint  # noqa: F401 - the fixture


def chat(base_url: str, **env: str) -> ChatEndpoint:
    no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    settings = LLMSettings(base_url, "tiny-model", "FERAL_TEST_KEY")
    return ChatEndpoint(settings, timeout=5, environ=env, opener=no_proxy.open)


def test_one_question_gets_the_answers_text(endpoint: str) -> None:  # noqa: F811
    FakeEndpoint.answers.append((200, completion("Porto, in May.")))
    assert (
        chat(endpoint, FERAL_TEST_KEY="sk-test").ask("be brief", "where?", 1024) == "Porto, in May."
    )
    [request] = FakeEndpoint.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "where?"},
    ]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ((500, b'{"error": "overloaded"}'), "HTTPError"),
        ((200, b"[1, 2]"), "not a chat-completions answer"),
        ((200, b'{"choices": [{"message": {"content": 7}}]}'), "not text"),
    ],
)
def test_every_failure_is_one_chat_failed_saying_why(
    endpoint: str,  # noqa: F811
    answer: tuple[int, bytes],
    reason: str,
) -> None:
    FakeEndpoint.answers.append(answer)
    with pytest.raises(ChatFailed, match=reason):
        chat(endpoint, FERAL_TEST_KEY="sk-test").ask("system", "user", 1024)


def test_a_missing_key_fails_before_anything_is_sent(endpoint: str) -> None:  # noqa: F811
    with pytest.raises(ChatFailed, match="FERAL_TEST_KEY"):
        chat(endpoint).ask("system", "user", 1024)
    assert FakeEndpoint.requests == []
