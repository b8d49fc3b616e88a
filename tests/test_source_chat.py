"""Source chat: grounded answers from passages that fit the budget."""

from __future__ import annotations

import pytest

from graphs.config import ModelSettings, Settings, SourceSettings
from graphs.conversations import Conversations, Token, TurnFinished
from graphs.passages import estimate_tokens, select, split_passages
from graphs.sources import SourceError

from .stub_openai import Reply, StubOpenAI

DOC = "\n\n".join(
    [f"Chapter {i}. " + ("Ordinary filler about the weather and the sea. " * 12) for i in range(40)]
    + ["The lighthouse keeper's cat is named Marmalade and sleeps on the lamp. " * 2]
    + [f"Appendix {i}. " + ("More filler about rope and tides. " * 12) for i in range(20)]
)


def test_passages_cover_the_text_and_selection_fits_the_budget():
    passages = split_passages(DOC)
    assert all(DOC[p.start:p.end] == p.text for p in passages)
    chosen = select(DOC, "What is the cat called?", token_budget=400)
    assert sum(estimate_tokens(p.text) for p in chosen) <= 400
    assert any("Marmalade" in p.text for p in chosen)
    assert [p.index for p in chosen] == sorted(p.index for p in chosen)


def test_short_sources_are_used_whole():
    assert [p.text for p in select("tiny text", "anything", 1000)] == ["tiny text"]


@pytest.fixture
def doc(tmp_path):
    path = tmp_path / "lighthouse.txt"
    path.write_text(DOC)
    return path


async def test_offline_source_chat_quotes_the_matching_passage(tmp_path, doc):
    settings = Settings(model=ModelSettings(provider="offline"),
                        source=SourceSettings(token_budget=400), database=tmp_path / "t.db")
    service = Conversations.open(settings)
    service.model().seconds_per_piece = 0
    try:
        thread = await service.new_source_chat(str(doc))
        assert thread.kind == "source" and thread.source_title == "lighthouse.txt"
        events = [e async for e in service.send(thread.id, "What is the cat called?")]
        answer = events[-1].message
        assert isinstance(events[-1], TurnFinished)
        assert "Marmalade" in answer.text
        used = answer.response_metadata["tern_passages"]
        assert used and all(set(u) == {"passage", "start", "end"} for u in used)
        assert any("Marmalade" in DOC[u["start"]:u["end"]] for u in used)
        # the source is stored once, by content; moving the file changes nothing
        doc.rename(tmp_path / "moved.txt")
        events = [e async for e in service.send(thread.id, "Where does the cat sleep?")]
        assert "lamp" in events[-1].message.text
        assert service.db.saver.conn.execute("SELECT COUNT(*) FROM sources").fetchone()[0] == 1
    finally:
        service.close()


async def test_source_context_reaches_a_real_endpoint(tmp_path, doc):
    with StubOpenAI() as stub:
        settings = Settings(model=ModelSettings(provider="openai", base_url=stub.base_url,
                                                api_key_env="X"),
                            source=SourceSettings(token_budget=400), database=tmp_path / "t.db")
        service = Conversations.open(settings)
        try:
            thread = await service.new_source_chat(str(doc))
            stub.push(Reply(text="It is Marmalade."))
            events = [e async for e in service.send(thread.id, "What is the cat called?")]
            assert "".join(e.text for e in events if isinstance(e, Token)) == "It is Marmalade."
            system = stub.requests[-1].body["messages"][0]
            assert system["role"] == "system" and "Marmalade" in system["content"]
            assert estimate_tokens(system["content"]) < 400 + 100
            # state holds the source id, not the text
            state = (await service.source_graph.aget_state(
                {"configurable": {"thread_id": thread.id,
                                  "checkpoint_id": await service.head(thread.id)}})).values
            assert state["source_id"] == thread.source_id and "Marmalade" not in str(state["source_id"])
        finally:
            service.close()


async def test_a_bad_source_stores_nothing(tmp_path):
    service = Conversations.open(Settings(model=ModelSettings(provider="offline"),
                                          database=tmp_path / "t.db"))
    try:
        with pytest.raises(SourceError):
            await service.new_source_chat(str(tmp_path / "nope.txt"))
        assert await service.list_threads() == []
        assert service.db.saver.conn.execute("SELECT COUNT(*) FROM sources").fetchone()[0] == 0
    finally:
        service.close()
