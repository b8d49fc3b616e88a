"""A conversation's current branch as a Markdown document."""

from __future__ import annotations

from datetime import datetime

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from graphs.storage import SourceRow, ThreadRow


def to_markdown(thread: ThreadRow, messages: list[AnyMessage], source: SourceRow | None = None) -> str:
    lines = [f"# {thread.title or 'Untitled conversation'}", ""]
    created = datetime.fromtimestamp(thread.created_at).strftime("%Y-%m-%d %H:%M")
    lines.append(f"*Exported from tern — started {created}.*")
    if source is not None:
        lines.append(f"*Source: {source.title} ({source.origin}).*")
    lines.append("")
    for message in messages:
        if isinstance(message, HumanMessage):
            lines += ["## You", "", str(message.text), ""]
        elif isinstance(message, AIMessage):
            heading = "## Assistant"
            if message.response_metadata.get("finish_reason") == "cancelled":
                heading += " (cancelled)"
            lines += [heading, "", str(message.text), ""]
    return "\n".join(lines).rstrip() + "\n"
