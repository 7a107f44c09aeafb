"""The one client of an OpenAI-compatible chat endpoint (``memory.llm``): a question, an answer.

Both optional LLM features ask through it: the summaries of compacted working memory
(node/assistant/summarise.py) and absorb's classifier (node/absorb/llm_classify.py). It posts one
``{base_url}/chat/completions`` request with the standard library's urllib (no client library:
one request with a timeout needs nothing more) and returns the answer's message text. Whatever
goes wrong (no key, a refused connection, a timeout, an HTTP error status, a reply that is not a
chat completion) is one :class:`ChatFailed`, so each caller has one thing to fall back on.

urllib and its HTTP stack are imported only when a request is made: a node with no endpoint
configured never loads them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from feral.node.settings.config import LLMSettings

if TYPE_CHECKING:
    import urllib.request

__all__ = ["ChatEndpoint", "ChatFailed", "Opener", "Response", "answer_text", "chat_request"]


class Response(Protocol):
    """What an opener's answer is read through: the body, at most ``amt`` bytes."""

    def read(self, amt: int, /) -> bytes: ...


class Opener(Protocol):
    """``urllib.request.urlopen``-shaped (an ``OpenerDirector``'s ``open``): ``opener(request,
    timeout=...)`` returns a response to use in a ``with``."""

    def __call__(
        self, request: urllib.request.Request, /, *, timeout: float
    ) -> AbstractContextManager[Response]: ...


class ChatFailed(Exception):
    """The endpoint gave no usable answer; the message says why in one short line."""


def chat_request(
    settings: LLMSettings, system: str, user: str, environ: Mapping[str, str]
) -> urllib.request.Request:
    """The ``POST {base_url}/chat/completions`` of one system and one user message, at
    temperature 0, with ``Authorization: Bearer`` from ``settings.api_key_env`` when it names one.

    Raises:
        LookupError: ``api_key_env`` names a variable that is not set.
    """
    import urllib.request

    body = {
        "model": settings.model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
    }
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if settings.api_key_env is not None:
        key = environ.get(settings.api_key_env)
        if not key:
            raise LookupError(f"the environment variable {settings.api_key_env} is not set")
        headers["Authorization"] = f"Bearer {key}"
    url = settings.base_url.rstrip("/") + "/chat/completions"
    return urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")


def answer_text(payload: bytes) -> str:
    """The first choice's message text of a chat-completions answer.

    Raises:
        ValueError: not JSON, not UTF-8, or not of that shape.
    """
    try:
        content = json.loads(payload.decode("utf-8"))["choices"][0]["message"]["content"]
    except (LookupError, TypeError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a chat-completions answer: {_reason(exc)}") from exc
    if not isinstance(content, str):
        raise ValueError("the answer's message content is not text")
    return content


class ChatEndpoint:
    """``memory.llm``'s endpoint. ``environ`` (where the key is read) and ``opener`` are for
    tests; ``timeout`` is the seconds one request may take."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        timeout: float,
        environ: Mapping[str, str] | None = None,
        opener: Opener | None = None,
    ) -> None:
        import os

        self.settings = settings
        self.timeout = timeout
        self.environ = os.environ if environ is None else environ
        self._opener = opener

    def request(self, system: str, user: str) -> urllib.request.Request:
        """The request :meth:`ask` sends (see :func:`chat_request`)."""
        return chat_request(self.settings, system, user, self.environ)

    def ask(self, system: str, user: str, max_bytes: int) -> str:
        """The answer's text (blocks: run it on a worker thread, never inside a transaction).

        Raises:
            ChatFailed: no key, no answer in time, an error status, or not a chat completion.
        """
        from http.client import HTTPException

        try:
            request = self.request(system, user)
            with self._open(request) as response:
                payload = response.read(max_bytes)
            return answer_text(payload)
        except (OSError, HTTPException, LookupError, ValueError) as exc:
            # OSError: refused, timed out, an HTTP error status. HTTPException: not HTTP.
            raise ChatFailed(_reason(exc)) from exc

    def _open(self, request: urllib.request.Request) -> AbstractContextManager[Response]:
        if self._opener is None:
            import urllib.request

            self._opener = urllib.request.build_opener().open
        return self._opener(request, timeout=self.timeout)


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
