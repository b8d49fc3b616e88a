"""An OpenAI-compatible chat completions server on 127.0.0.1 for tests and benchmarks.

Streams SSE chunks at an adjustable pace, answers with error statuses,
stalls, streams tool-call fragments, and records when each client
disconnected (``time.perf_counter()``, the same clock the caller uses), so
tests can check that a cancel really closed the HTTP stream.

    with StubOpenAI() as stub:
        stub.push(Reply(text="hello", pace=0.01))
        ChatOpenAI(base_url=stub.base_url, api_key="x", model="stub")
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import uvicorn


@dataclass
class Reply:
    text: str = "Hello from the stub."
    pace: float = 0.0  # seconds between chunks
    chunk_chars: int = 0  # 0: a word per chunk
    status: int | None = None  # answer with this HTTP error instead
    stall_after: int | None = None  # stop sending (but keep the socket) after N chunks
    tool_call: bool = False  # stream a tool call's fragments after the text
    usage: bool = True


@dataclass
class Request_:
    body: dict
    received: float


@dataclass
class Disconnect:
    at: float
    chunks_sent: int


@dataclass
class StubState:
    replies: deque = field(default_factory=deque)
    default: Reply = field(default_factory=Reply)
    requests: list = field(default_factory=list)
    disconnects: list = field(default_factory=list)
    completed: int = 0
    first_chunk_at: list = field(default_factory=list)
    last_chunk_at: list = field(default_factory=list)


def _pieces(reply: Reply) -> list[str]:
    if reply.chunk_chars:
        return [reply.text[i:i + reply.chunk_chars] for i in range(0, len(reply.text), reply.chunk_chars)]
    out, word = [], ""
    for ch in reply.text:
        word += ch
        if ch == " ":
            out.append(word)
            word = ""
    if word:
        out.append(word)
    return out


def _chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> str:
    payload = {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "stub-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else [],
    }
    if usage is not None:
        payload["usage"] = usage
    return f"data: {json.dumps(payload)}\n\n"


def build_app(state: StubState):
    """A raw ASGI app: a watcher task reads ``http.disconnect`` the moment the
    client goes away, so a disconnect is recorded when it happens, not at the
    next write (Starlette's StreamingResponse no longer listens for it under
    newer ASGI spec versions, which made disconnects look missed)."""

    async def respond_json(send, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        if scope["path"] != "/v1/chat/completions" or scope["method"] != "POST":
            await respond_json(send, 404, {"error": {"message": "not found"}})
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        body = json.loads(raw or b"{}")
        state.requests.append(Request_(body, time.perf_counter()))
        reply = state.replies.popleft() if state.replies else state.default
        if reply.status is not None:
            await respond_json(send, reply.status, {
                "error": {"message": f"stub error {reply.status}", "type": "stub", "code": reply.status}})
            return
        if not body.get("stream"):
            await respond_json(send, 200, {
                "id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()),
                "model": "stub-model",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
            })
            return

        sent = 0
        gone = asyncio.Event()

        async def watch() -> None:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    state.disconnects.append(Disconnect(time.perf_counter(), sent))
                    gone.set()
                    return

        async def write(text: str) -> None:
            await send({"type": "http.response.body", "body": text.encode(), "more_body": True})

        async def pause(seconds: float) -> None:
            # sleep, but wake at once if the client goes away
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(gone.wait(), seconds)

        watcher = asyncio.create_task(watch())
        try:
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream"),
                                    (b"cache-control", b"no-cache")]})
            await write(_chunk({"role": "assistant", "content": ""}))
            for piece in _pieces(reply):
                if reply.stall_after is not None and sent >= reply.stall_after:
                    await pause(3600)
                if reply.pace:
                    await pause(reply.pace)
                if gone.is_set():
                    return
                if sent == 0:
                    state.first_chunk_at.append(time.perf_counter())
                await write(_chunk({"content": piece}))
                sent += 1
            state.last_chunk_at.append(time.perf_counter())
            if reply.tool_call:
                await write(_chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                     "function": {"name": "lookup", "arguments": ""}}]}))
                await pause(reply.pace or 0.01)
                await write(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": "ha'}}]}))
                if reply.stall_after is not None:
                    await pause(3600)
                if gone.is_set():
                    return
            await write(_chunk({}, finish="stop"))
            if reply.usage:
                words = len(reply.text.split())
                await write(_chunk({}, usage={"prompt_tokens": 5, "completion_tokens": words,
                                              "total_tokens": 5 + words}))
            await write("data: [DONE]\n\n")
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            state.completed += 1
        finally:
            watcher.cancel()

    return app


class StubOpenAI:
    def __init__(self) -> None:
        self.state = StubState()
        config = uvicorn.Config(build_app(self.state), host="127.0.0.1", port=0,
                                log_level="error", lifespan="off", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.port = 0

    def __enter__(self) -> StubOpenAI:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the stub OpenAI server did not start")
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.server.force_exit = True
        self.thread.join(10)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *replies: Reply) -> None:
        self.state.replies.extend(replies)

    @property
    def requests(self) -> list:
        return self.state.requests

    @property
    def disconnects(self) -> list:
        return self.state.disconnects

    def wait_for_disconnect(self, count: int = 1, timeout: float = 5.0) -> Disconnect:
        deadline = time.monotonic() + timeout
        while len(self.state.disconnects) < count:
            if time.monotonic() > deadline:
                raise AssertionError("the client never disconnected")
            time.sleep(0.001)
        return self.state.disconnects[count - 1]


if __name__ == "__main__":  # a manual server: uv run python -m tests.stub_openai
    with StubOpenAI() as stub:
        stub.state.default = Reply(text="This is the stub server answering slowly. " * 20, pace=0.05)
        print(f"stub OpenAI server at {stub.base_url}; Ctrl+C to stop", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
