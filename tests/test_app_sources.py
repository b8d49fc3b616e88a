"""Source chats in the app: attach a file or URL, see errors inline, ask offline."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tui.app import StartRequest
from tui.cli import main as cli_main
from tui.screens.dialogs import PromptScreen, TextScreen
from tui.widgets.answer import AssistantMessage
from tui.widgets.status_line import StatusLine

from .test_app import SIZE, idle, make_app, ready, type_and_send, wait_for

DOC = "\n\n".join(
    ["Filler about the harbour and the boats. " * 8 for _ in range(30)]
    + ["The lighthouse keeper's cat is named Marmalade."]
)


async def attach_via_prompt(pilot, spec):
    app = pilot.app
    await pilot.press("ctrl+o")
    await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
    app.screen.query_one("#answer").value = spec
    await pilot.press("enter")


async def test_attach_a_file_and_ask_offline(tmp_path):
    doc = tmp_path / "harbour.md"
    doc.write_text(DOC)
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.service.model().seconds_per_piece = 0
        await attach_via_prompt(pilot, str(doc))
        await wait_for(pilot, lambda: app.current is not None and app.current.kind == "source")
        status = app.main.query_one(StatusLine)
        assert "harbour.md" in status.source and "chars" in status.source
        await type_and_send(pilot, "What is the cat called?")
        await wait_for(pilot, lambda: idle(app) and app.main.query(AssistantMessage))
        await wait_for(pilot, lambda: idle(app))
        answer = app.main.query(AssistantMessage).last()
        assert "Marmalade" in answer.text
        assert "passages" in str(answer.border_subtitle)
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: isinstance(app.screen, TextScreen))
        assert app.screen.body == DOC


async def test_bad_path_shows_the_problem_inline_and_keeps_what_was_typed(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        missing = str(tmp_path / "nope.txt")
        await attach_via_prompt(pilot, missing)
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen) and app.screen.problem)
        assert "no such file" in app.screen.problem
        assert app.screen.query_one("#answer").value == missing
        await pilot.press("escape")
        assert app.current is None and await app.service.list_threads() == []


@pytest.fixture
def page_server():
    class Page(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = (f"<html><head><title>Harbour notes</title></head><body><p>{DOC}</p>"
                    "</body></html>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/notes"
    server.shutdown()
    server.server_close()


async def test_source_flag_attaches_a_url(tmp_path, page_server):
    app = make_app(tmp_path, start=StartRequest(source=page_server))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: app.current is not None)
        assert app.current.kind == "source" and app.current.source_title == "Harbour notes"
        assert app.current.title == "Harbour notes"


def test_broken_config_stops_before_the_ui(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text('[model]\ntemperature = "warm"\n')
    assert cli_main(["--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"{config}:2" in err and "must be a number" in err


def test_unreadable_database_is_reported_before_the_ui(tmp_path, capsys):
    db = tmp_path / "tern.db"
    db.write_bytes(b"this is not a database" * 100)
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\ndatabase = "{db}"\n')
    assert cli_main(["--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert "move it aside" in err
    assert db.read_bytes() == b"this is not a database" * 100  # nothing overwritten
