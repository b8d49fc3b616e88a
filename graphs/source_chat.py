"""The source-chat graph: answers grounded on an attached file or page.

State carries only the source's id; its text lives once in the sources
table. Each turn the model node picks the passages that fit the token budget
and best match the question, puts them in a system message, and records in
the answer's ``response_metadata["tern_passages"]`` which ones it used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from graphs.chat import single_model_graph
from graphs.passages import Passage, select
from graphs.state import SourceChatState
from graphs.storage import SourceRow

INSTRUCTIONS = (
    "Answer using the source below. Quote or cite passages by number when you use them, "
    "and say so plainly when the source does not contain the answer."
)


def source_context(source: SourceRow, passages: list[Passage]) -> str:
    body = "\n\n".join(f"[passage {p.index}]\n{p.text}" for p in passages)
    return f"{INSTRUCTIONS}\n\nSource: {source.title}\nOrigin: {source.origin}\n\n{body}"


def passages_metadata(passages: list[Passage]) -> list[dict]:
    return [{"passage": p.index, "start": p.start, "end": p.end} for p in passages]


def build_source_chat_graph(
    checkpointer: BaseCheckpointSaver,
    model: Callable[[], BaseChatModel],
    get_source: Callable[[str], SourceRow | None],
    token_budget: Callable[[], int],
) -> CompiledStateGraph:

    async def call_model(state: SourceChatState) -> dict:
        source = await asyncio.to_thread(get_source, state["source_id"])
        if source is None:
            raise LookupError(f"the source {state['source_id'][:12]} is missing from the database")
        question = next(
            (m.text for m in reversed(state["messages"]) if isinstance(m, HumanMessage)), ""
        )
        passages = select(source.text, question, token_budget())
        messages = [SystemMessage(source_context(source, passages)), *state["messages"]]
        answer = await model().ainvoke(messages)
        answer.response_metadata["tern_passages"] = passages_metadata(passages)
        return {"messages": [answer]}

    return single_model_graph(SourceChatState, call_model, checkpointer)
