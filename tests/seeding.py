"""Fill a database with conversations, for app tests and benchmarks."""

from __future__ import annotations

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from graphs.config import Settings
from graphs.conversations import Conversations
from graphs.database import open_database


def _answers():
    n = 0
    while True:
        n += 1
        yield AIMessage(f"Answer number {n}: " + "lorem ipsum dolor sit amet " * 6)


async def fill_thread(settings: Settings, turns: int, title: str = "",
                      thread_id: str | None = None, start: int = 0) -> str:
    """A thread of ``turns`` question/answer pairs (or more turns on ``thread_id``)."""
    model = GenericFakeChatModel(messages=_answers())
    service = Conversations(open_database(settings.database), settings, model_factory=lambda: model)
    try:
        thread = await service.get_thread(thread_id) if thread_id else await service.create_thread(title=title)
        for i in range(start, start + turns):
            async for _ in service.send(thread.id, f"Question {i}: what about item {i}?"):
                pass
        return thread.id
    finally:
        service.close()
