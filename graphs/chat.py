"""The chat graph: START -> model -> END over a message list."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graphs.state import MODEL_NODE, ChatState


def build_chat_graph(
    checkpointer: BaseCheckpointSaver,
    model: Callable[[], BaseChatModel],
    system_prompt: Callable[[], str] = lambda: "",
) -> CompiledStateGraph:
    """``model`` is called per turn, so a settings change applies to the next turn."""

    async def call_model(state: ChatState) -> dict:
        prompt = system_prompt()
        messages = ([SystemMessage(prompt)] if prompt else []) + state["messages"]
        answer = await model().ainvoke(messages)
        return {"messages": [answer]}

    return single_model_graph(ChatState, call_model, checkpointer)


def single_model_graph(state: type, call_model, checkpointer: BaseCheckpointSaver) -> CompiledStateGraph:
    """START -> model -> END: the shape both of tern's graphs have."""
    builder = StateGraph(state)
    builder.add_node(MODEL_NODE, call_model)
    builder.add_edge(START, MODEL_NODE)
    builder.add_edge(MODEL_NODE, END)
    return builder.compile(checkpointer=checkpointer)
