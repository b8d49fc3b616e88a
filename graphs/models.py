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


def describe_model_error(exc: BaseException, settings: ModelSettings | None = None) -> ModelProblem:
    """Map provider-neutral ``langchain_core`` model errors to a readable problem."""
    key_env = settings.api_key_env if settings else "OPENAI_API_KEY"
    endpoint = (settings.base_url if settings and settings.base_url else "the model endpoint")
    status = _status(exc)
    suffix = f" (HTTP {status})" if status else ""
    if isinstance(exc, ModelAuthenticationError):
        return ModelProblem("auth", f"The endpoint rejected the API key{suffix}.",
                            f"Check ${key_env} (or [model] api_key_env in config.toml), then retry.")
    if isinstance(exc, ModelPermissionDeniedError):
        return ModelProblem("permission", f"This key may not use that model{suffix}.",
                            "Check the key's permissions or [model] name, then retry.")
    if isinstance(exc, ModelNotFoundError):
        return ModelProblem("not_found", f"The endpoint does not know that model{suffix}.",
                            "Check [model] name and base_url in config.toml.")
    if isinstance(exc, ModelRateLimitError):
        return ModelProblem("rate_limit", f"The endpoint is rate-limiting requests{suffix}.",
                            "Wait a moment, then retry (ctrl+r).")
    if isinstance(exc, ContextOverflowError):
        return ModelProblem("context", "The conversation is too long for this model.",
                            "Start a new thread, or branch from an earlier point.")
    if isinstance(exc, ModelTimeoutError):
        return ModelProblem("timeout", "The model stopped answering (timed out).",
                            "Retry (ctrl+r); raise [model] timeout if it keeps happening.")
    if isinstance(exc, ModelConnectionError):
        return ModelProblem("connection", f"Could not reach {endpoint}.",
                            "Check the server is running and [model] base_url is right, then retry.")
    if isinstance(exc, ModelInvalidRequestError):
        return ModelProblem("request", f"The endpoint refused the request{suffix}: {_detail(exc)}",
                            "Check [model] settings; retry after changing them.")
    if isinstance(exc, ModelAPIError) or (status and status >= 500):
        return ModelProblem("server", f"The endpoint had an error{suffix}.",
                            "It is usually temporary: retry (ctrl+r).")
    if isinstance(exc, ModelError):
        return ModelProblem("model", f"The model failed: {_detail(exc)}", "Retry (ctrl+r).")
    if isinstance(exc, (ConnectionError, OSError)):
        return ModelProblem("connection", f"Could not reach {endpoint}: {exc}.",
                            "Check the server is running, then retry.")
    return ModelProblem("internal", f"Something went wrong: {type(exc).__name__}: {_detail(exc)}",
                        "Retry (ctrl+r); your message is saved.")


def _detail(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
