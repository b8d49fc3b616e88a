"""The offline built-in model: no network, no key, a real streamed answer.

It is a LangChain chat model, so it runs through exactly the graph path a
real endpoint does (callbacks, ``stream_mode="messages"``, cancellation,
checkpoints). For a source chat it answers with the passages of the source
that best match the question; for a plain chat it says honestly what it is
and how to connect a real model.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from graphs.endpoint import OFFLINE_MODEL_NAME
from graphs.passages import Passage, estimate_tokens, rank


#: Marks each passage in a source chat's system message; the offline model
#: reads passages back through it, a real model just sees tidy headings.
PASSAGE_HEADER = re.compile(r"^\[passage (\d+)\]$", re.MULTILINE)


def _last_human(messages: list[BaseMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text if hasattr(message, "text") else str(message.content)
    return ""


def _passages_in(messages: list[BaseMessage]) -> tuple[str, list[Passage]]:
    for message in messages:
        if isinstance(message, SystemMessage):
            text = str(message.content)
            headers = list(PASSAGE_HEADER.finditer(text))
            if not headers:
                continue
            title_match = re.search(r"^Source: (.+)$", text, re.MULTILINE)
            passages = []
            for i, header in enumerate(headers):
                end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
                body = text[header.end():end].strip()
                passages.append(Passage(int(header.group(1)), 0, body))
            return (title_match.group(1) if title_match else "the source"), passages
    return "", []


def offline_answer(messages: list[BaseMessage]) -> str:
    question = _last_human(messages).strip()
    title, passages = _passages_in(messages)
    if passages:
        scored = [(s, p) for s, p in rank(passages, question) if s > 0][:3]
        if not scored:
            scored = [(0.0, p) for p in passages[:2]]
            lead = (f"None of {title} matches those words closely, so here is how it begins "
                    "(offline model: it quotes, it does not reason):")
        else:
            lead = (f"The passages of {title} that best match your question "
                    "(offline model: it quotes, it does not reason):")
        quoted = "\n\n".join(
            f"**Passage {p.index + 1}**\n\n" + "\n".join("> " + line for line in p.text.splitlines())
            for _, p in sorted(scored, key=lambda sp: sp[1].index)
        )
        return f"{lead}\n\n{quoted}"
    words = len(question.split())
    return (
        "This is tern's **offline built-in model**: it runs without a network or an API key, "
        "so it cannot really answer you"
        + (f" (your message had {words} word{'s' if words != 1 else ''})" if words else "")
        + ".\n\n"
        "To chat with a real model, either:\n\n"
        "- set `OPENAI_API_KEY` in your environment, or\n"
        "- point `[model] base_url` in `config.toml` at any OpenAI-compatible server, "
        "e.g. `http://localhost:11434/v1` for Ollama,\n\n"
        "then restart tern. Meanwhile, the offline model can answer from a file or web page: "
        "start a source chat (`tern --source FILE`) and ask about it."
    )


def _pieces(text: str) -> list[str]:
    """Word-sized pieces that concatenate back to exactly ``text``."""
    return re.findall(r"\S+\s*|\s+", text)


class OfflineChatModel(BaseChatModel):
    """Streams :func:`offline_answer` a word at a time at a human pace."""

    seconds_per_piece: float = 0.012

    @property
    def _llm_type(self) -> str:
        return OFFLINE_MODEL_NAME

    def _final_chunk(self, messages: list[BaseMessage], text: str) -> ChatGenerationChunk:
        prompt = sum(estimate_tokens(str(m.content)) for m in messages)
        completion = estimate_tokens(text)
        return ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                response_metadata={"finish_reason": "stop", "model_name": OFFLINE_MODEL_NAME},
                usage_metadata={"input_tokens": prompt, "output_tokens": completion,
                                "total_tokens": prompt + completion},
                chunk_position="last",
            )
        )

    def _generate(self, messages: list[BaseMessage], stop: Any = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        text = offline_answer(messages)
        final = self._final_chunk(messages, text).message
        return ChatResult(generations=[ChatGeneration(message=AIMessage(
            content=text, response_metadata=final.response_metadata,
            usage_metadata=final.usage_metadata))])

    def _stream(self, messages: list[BaseMessage], stop: Any = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        text = offline_answer(messages)
        for piece in _pieces(text):
            time.sleep(self.seconds_per_piece)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
        yield self._final_chunk(messages, text)

    async def _astream(self, messages: list[BaseMessage], stop: Any = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        text = offline_answer(messages)
        for piece in _pieces(text):
            await asyncio.sleep(self.seconds_per_piece)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager:
                await run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
        yield self._final_chunk(messages, text)
