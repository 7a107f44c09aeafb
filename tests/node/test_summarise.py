from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from feral.node.assistant import summarise
from feral.node.assistant.summarise import (
    MAX_ENTITIES,
    MAX_SUMMARY_CHARS,
    ExtractiveSummariser,
    LLMSummariser,
    Summary,
    extract_entities,
    extractive_summary,
    split_sentences,
    summariser_for,
)
from feral.node.assistant.working_memory import Message
from feral.node.settings.config import LLMSettings, MemorySettings
from feral.storage.search import query as search

from .transcripts import transcript


def messages(*texts: str) -> list[Message]:
    return [Message("s", "user", text) for text in texts]


# Sentences


def test_sentences_split_after_end_marks_and_at_line_breaks_but_not_after_titles():
    text = "My doctor is Dr. Chen. He lives on J. Smith Street! Ok?\nNew line e.g. this one."
    assert split_sentences(text) == [
        "My doctor is Dr. Chen.",
        "He lives on J. Smith Street!",
        "Ok?",
        "New line e.g. this one.",
    ]


def test_white_space_is_collapsed_and_empty_sentences_dropped():
    assert split_sentences("  a   b.  \n\n  ") == ["a b."]


# Extractive summaries


def test_the_summary_keeps_the_sentences_about_what_the_conversation_is_about():
    summary = extractive_summary(
        [
            "The kitchen cabinets will be painted green.",
            "Nice weather today.",
            "The kitchen counter is quartz, and the cabinets get brass handles.",
            "Lol.",
            "Kitchen work starts Monday; the cabinets come first.",
        ],
        limit=170,
    )
    assert summary == (
        "The kitchen cabinets will be painted green. "
        "The kitchen counter is quartz, and the cabinets get brass handles. "
        "Kitchen work starts Monday; the cabinets come first."
    )


def test_chosen_sentences_stay_in_their_original_order():
    texts = ["Zebra zebra stripes.", "Filler here.", "Zebra stripes zebra herd."]
    assert extractive_summary(texts, limit=46) == "Zebra zebra stripes. Zebra stripes zebra herd."


def test_sentences_far_less_informative_than_the_best_are_left_out_even_with_room():
    texts = ["Porto trip: Porto flights, Porto hotel.", "Nice weather.", "Porto again."]
    assert extractive_summary(texts) == "Porto trip: Porto flights, Porto hotel. Porto again."


def test_repeated_and_near_repeated_sentences_appear_once():
    texts = ["Alice paints the kitchen green."] * 3 + ["Alice paints the kitchen green today."]
    assert extractive_summary(texts) == "Alice paints the kitchen green."


def test_the_summary_is_capped_and_an_overlong_sentence_is_cut_at_a_word():
    long = "word " * 400 + "end."
    summary = extractive_summary([long])
    assert len(summary) <= MAX_SUMMARY_CHARS
    assert summary.endswith("word…")


def test_the_same_messages_give_the_same_summary():
    batch = list(transcript(60))
    assert ExtractiveSummariser().summarise(batch) == ExtractiveSummariser().summarise(batch)


def test_messages_without_text_still_make_a_summary():
    assert ExtractiveSummariser().summarise(messages("", "  ")) == Summary(
        "2 messages without text", ()
    )


# Entities


def test_names_titles_handles_and_dates_are_entities_in_order_of_appearance():
    text = (
        "Yesterday Alice met Dr. Chen in New York on May 4th, 2024. "
        "I asked @bob_s about the Bank of America loan (2024-06-01), and Mary O'Brien too."
    )
    assert extract_entities([text]) == (
        "Alice",
        "Dr. Chen",
        "New York",
        "May 4th, 2024",
        "@bob_s",
        "Bank of America",
        "2024-06-01",
        "Mary O'Brien",
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Porto is lovely.", ()),
        ("We love Porto.", ("Porto",)),
        ("The Eiffel Tower is tall.", ("Eiffel Tower",)),
        ("Mail bob@example.com today.", ()),
        ("See you on Monday in Lisbon.", ("Lisbon",)),
        ("Dinner on 4 May with Ana.", ("4 May", "Ana")),
        ("Alice's dog met Bob's cat.", ("Bob",)),
        ("I think so.", ()),
    ],
)
def test_entity_rules(text, expected):
    assert extract_entities([text]) == expected


def test_entities_repeat_once_in_their_first_spelling():
    assert extract_entities(["I met Ana Lima.", "Then ANA LIMA left.", "so did Ana Lima"]) == (
        "Ana Lima",
    )


def test_entities_are_capped():
    names = " ".join(f"and Person{chr(65 + i // 26)}{chr(97 + i % 26)}" for i in range(50))
    assert len(extract_entities([f"I met {names}."])) == MAX_ENTITIES


# The LLM summariser: never called for real, only against a fake on loopback


class FakeEndpoint(BaseHTTPRequestHandler):
    """An OpenAI-compatible ``/chat/completions`` that answers what the test queued."""

    answers: list[tuple[int, bytes]] = []
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server naming
        length = int(self.headers["Content-Length"])
        body = json.loads(self.rfile.read(length))
        type(self).requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        status, payload = type(self).answers.pop(0)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    FakeEndpoint.answers, FakeEndpoint.requests = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeEndpoint)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def completion(text: str) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()


def llm(base_url: str, key_env: str | None = "FERAL_TEST_KEY", **env: str) -> LLMSummariser:
    no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    settings = LLMSettings(base_url, "tiny-model", key_env)
    return LLMSummariser(settings, environ=env, opener=no_proxy.open, timeout=5)


def test_the_llm_request_posts_the_transcript_to_chat_completions_with_the_key():
    summariser = llm("http://127.0.0.1:9/v1/", FERAL_TEST_KEY="sk-test")
    request = summariser.build_request(messages("We fly to Porto."))
    assert request.full_url == "http://127.0.0.1:9/v1/chat/completions"
    assert request.get_method() == "POST"
    assert request.get_header("Authorization") == "Bearer sk-test"
    assert request.data is not None
    body = json.loads(request.data)
    assert body["model"] == "tiny-model" and body["temperature"] == 0
    assert body["messages"][-1] == {"role": "user", "content": "user: We fly to Porto."}


def test_no_key_variable_means_no_authorization_header():
    request = llm("http://127.0.0.1:9/v1", key_env=None).build_request(messages("hi"))
    assert request.get_header("Authorization") is None


def test_the_llm_answer_is_the_summary_and_entities_stay_deterministic(endpoint):
    FakeEndpoint.answers.append((200, completion("  They planned a trip\n to Porto. ")))
    summariser = llm(endpoint, FERAL_TEST_KEY="sk-test")
    summary = summariser.summarise(messages("We fly to Porto with Dr. Chen."))
    assert summary == Summary("They planned a trip to Porto.", ("Porto", "Dr. Chen"))
    assert summariser.last_error is None
    [request] = FakeEndpoint.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    "answer",
    [
        (500, b'{"error": "overloaded"}'),
        (200, b"not json"),
        (200, b'{"choices": []}'),
        (200, b'{"choices": [{"message": {"content": "   "}}]}'),
        (200, b"[1, 2]"),
    ],
)
def test_any_llm_failure_falls_back_to_the_extractive_summary(endpoint, answer):
    FakeEndpoint.answers.append(answer)
    batch = messages("We fly to Porto with Dr. Chen.")
    summariser = llm(endpoint, FERAL_TEST_KEY="sk-test")
    assert summariser.summarise(batch) == ExtractiveSummariser().summarise(batch)
    assert summariser.last_error


def test_a_missing_key_falls_back_without_calling_the_endpoint(endpoint):
    summariser = llm(endpoint)
    batch = messages("We fly to Porto.")
    assert summariser.summarise(batch) == ExtractiveSummariser().summarise(batch)
    assert summariser.last_error is not None and "FERAL_TEST_KEY" in summariser.last_error
    assert FakeEndpoint.requests == []


def test_an_unreachable_endpoint_falls_back():
    summariser = llm("http://127.0.0.1:9/v1", key_env=None)
    batch = messages("We fly to Porto.")
    assert summariser.summarise(batch) == ExtractiveSummariser().summarise(batch)
    assert summariser.last_error


def test_the_settings_choose_the_summariser():
    assert isinstance(summariser_for(MemorySettings()), ExtractiveSummariser)
    llm_settings = LLMSettings("http://127.0.0.1:11434/v1", "tiny")
    chosen = summariser_for(MemorySettings(compaction_strategy="llm", llm=llm_settings))
    assert isinstance(chosen, LLMSummariser)
    configured_but_unused = MemorySettings(llm=llm_settings)
    assert isinstance(summariser_for(configured_but_unused), ExtractiveSummariser)


def test_the_summary_stop_words_extend_the_query_stop_words_rather_than_restate_them():
    assert search.STOP_WORDS < summarise.STOP_WORDS
