"""Which chat model a conversation talks to, and what its failures mean.

``ChatOpenAI`` covers OpenAI and every OpenAI-compatible server (Ollama,
vLLM, llama.cpp, LM Studio) through ``base_url``; the offline model covers
"no key, no network". ``langchain_openai`` takes ~1 s to import, so it is
imported only when a real endpoint is actually used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from langchain_core.exceptions import (
    ContextOverflowError,
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelError,
    ModelInvalidRequestError,
    ModelNotFoundError,
    ModelPermissionDeniedError,
    ModelRateLimitError,
    ModelTimeoutError,
)
from langchain_core.language_models import BaseChatModel

from graphs.config import ModelSettings
from graphs.endpoint import ModelInfo, model_info, resolve_provider
from graphs.offline import OfflineChatModel

__all__ = ["ModelInfo", "model_info", "resolve_provider", "make_chat_model", "describe_model_error"]


def make_chat_model(settings: ModelSettings, environ: Any = os.environ) -> BaseChatModel:
    if resolve_provider(settings, environ) == "offline":
        return OfflineChatModel()
    from langchain_openai import ChatOpenAI

    key = environ.get(settings.api_key_env)
    return ChatOpenAI(
        model=settings.name,
        base_url=settings.base_url or None,
        # Local servers need no key, but the client insists on one.
        api_key=key or "not-needed",
        temperature=settings.temperature,
        # A per-read timeout (a steady stream never trips it).
        timeout=settings.timeout,
        # Retries would hide a 429/5xx behind a long silent wait; tern shows
        # the error at once and offers a retry instead.
        max_retries=0,
        streaming=True,
        stream_usage=True,
        # Off on purpose: langchain-openai enforces it with asyncio.wait_for
        # around each chunk, and on Python 3.11 wait_for swallows a
        # cancellation that arrives as a chunk completes — Esc then left the
        # answer streaming on (seen in about half of the app's cancel runs).
        # Stalls are still caught by `timeout` above (per read).
        stream_chunk_timeout=None,
    )


@dataclass(frozen=True)
class ModelProblem:
    """A model failure, said so a person knows what happened and what to do."""

    kind: str  # auth, permission, not_found, rate_limit, server, connection, timeout, ...
    message: str
    hint: str

    def __str__(self) -> str:
        return f"{self.message} {self.hint}"


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    if code is None and (response := getattr(exc, "response", None)) is not None:
        code = getattr(response, "status_code", None)
    return code if isinstance(code, int) else None


#: (error type, kind, what happened, what to do), most specific first. The
#: texts are formatted with {suffix} (" (HTTP 429)"), {endpoint}, {key_env}
#: and {detail}. The "server" row also takes any error with an HTTP status
#: of 500 or more, before the generic rows below it.
_PROBLEMS: list[tuple[type[BaseException] | tuple[type[BaseException], ...], str, str, str]] = [
    (ModelAuthenticationError, "auth", "The endpoint rejected the API key{suffix}.",
     "Check ${key_env} (or [model] api_key_env in config.toml), then retry."),
    (ModelPermissionDeniedError, "permission", "This key may not use that model{suffix}.",
     "Check the key's permissions or [model] name, then retry."),
    (ModelNotFoundError, "not_found", "The endpoint does not know that model{suffix}.",
     "Check [model] name and base_url in config.toml."),
    (ModelRateLimitError, "rate_limit", "The endpoint is rate-limiting requests{suffix}.",
     "Wait a moment, then retry (ctrl+r)."),
    (ContextOverflowError, "context", "The conversation is too long for this model.",
     "Start a new thread, or branch from an earlier point."),
    (ModelTimeoutError, "timeout", "The model stopped answering (timed out).",
     "Retry (ctrl+r); raise [model] timeout if it keeps happening."),
    (ModelConnectionError, "connection", "Could not reach {endpoint}.",
     "Check the server is running and [model] base_url is right, then retry."),
    (ModelInvalidRequestError, "request", "The endpoint refused the request{suffix}: {detail}",
     "Check [model] settings; retry after changing them."),
    (ModelAPIError, "server", "The endpoint had an error{suffix}.",
     "It is usually temporary: retry (ctrl+r)."),
    (ModelError, "model", "The model failed: {detail}", "Retry (ctrl+r)."),
    ((ConnectionError, OSError), "connection", "Could not reach {endpoint}: {detail}.",
     "Check the server is running, then retry."),
]


def describe_model_error(exc: BaseException, settings: ModelSettings | None = None) -> ModelProblem:
    """Map provider-neutral ``langchain_core`` model errors to a readable problem."""
    status = _status(exc)
    fields = {
        "suffix": f" (HTTP {status})" if status else "",
        "endpoint": settings.base_url if settings and settings.base_url else "the model endpoint",
        "key_env": settings.api_key_env if settings else "OPENAI_API_KEY",
        "detail": _detail(exc),
    }
    server_status = status is not None and status >= 500
    for error_type, kind, message, hint in _PROBLEMS:
        if isinstance(exc, error_type) or (kind == "server" and server_status):
            return ModelProblem(kind, message.format(**fields), hint.format(**fields))
    return ModelProblem("internal", f"Something went wrong: {type(exc).__name__}: {fields['detail']}",
                        "Retry (ctrl+r); your message is saved.")


def _detail(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
