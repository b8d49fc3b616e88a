"""Attaching files and URLs: what loads, and a clear error for what does not."""

from __future__ import annotations

import io
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from graphs.sources import SourceError, load_source

MB = 1024 * 1024


def make_pdf(text: str | None) -> bytes:
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(width=300, height=300)
    if text is not None:
        font = DictionaryObject({NameObject("/Type"): NameObject("/Font"),
                                 NameObject("/Subtype"): NameObject("/Type1"),
                                 NameObject("/BaseFont"): NameObject("/Helvetica")})
        page[NameObject("/Resources")] = DictionaryObject({
            NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})})
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 12 Tf 20 200 Td ({text}) Tj ET".encode())
        page[NameObject("/Contents")] = writer._add_object(stream)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


async def test_text_markdown_code_html_pdf(tmp_path):
    (tmp_path / "a.txt").write_text("plain words")
    (tmp_path / "b.md").write_text("# Title\n\nbody")
    (tmp_path / "c.py").write_text("print('hi')\n")
    (tmp_path / "d.html").write_text("<html><title>Page</title><body><p>Hello <b>web</b></p>"
                                     "<script>x()</script></body></html>")
    (tmp_path / "e.pdf").write_bytes(make_pdf("Portable words"))
    loaded = {p: await load_source(str(tmp_path / p), max_bytes=MB) for p in
              ("a.txt", "b.md", "c.py", "d.html", "e.pdf")}
    assert loaded["a.txt"].text == "plain words"
    assert loaded["b.md"].media_type == "text/markdown"
    assert "print('hi')" in loaded["c.py"].text
    assert loaded["d.html"].title == "Page" and loaded["d.html"].text == "Hello web"
    assert "Portable words" in loaded["e.pdf"].text


@pytest.mark.parametrize("case, match", [
    ("missing", "no such file"),
    ("folder", "is a folder"),
    ("binary", "binary"),
    ("empty", "no text"),
    ("image_pdf", "no text layer"),
    ("huge", "over the 1 MB limit"),
    ("latin1", "not UTF-8"),
    ("unreadable", "permission denied"),
    ("scheme", "only http"),
])
async def test_bad_files_say_what_to_do(tmp_path, monkeypatch, case, match):
    path = tmp_path / case
    if case == "folder":
        path.mkdir()
    elif case == "binary":
        path.write_bytes(b"\x7fELF\x00\x01\x02" * 10)
    elif case == "empty":
        path.write_text("   \n")
    elif case == "image_pdf":
        path.write_bytes(make_pdf(None))
    elif case == "huge":
        path.write_bytes(b"a" * (MB + 1))
    elif case == "latin1":
        path.write_bytes("café crème".encode("latin-1"))
    elif case == "unreadable":
        path.write_text("secret")
        path.chmod(0)
        if os.geteuid() == 0:  # root reads every file: make the read fail as it would
            def denied(self):
                raise PermissionError(13, "Permission denied", str(self))
            monkeypatch.setattr("pathlib.Path.read_bytes", denied)
    spec = "ftp://example.invalid/x" if case == "scheme" else str(path)
    with pytest.raises(SourceError, match=match):
        await load_source(spec, max_bytes=MB)


class _Pages(BaseHTTPRequestHandler):
    routes: dict = {}

    def do_GET(self):  # noqa: N802
        status, ctype, body = self.routes.get(self.path, (404, "text/plain", b"nope"))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def pages():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Pages.routes = {
        "/page": (200, "text/html; charset=utf-8",
                  b"<html><head><title>Stub page</title></head><body><nav>menu</nav>"
                  b"<h1>Heading</h1><p>Some text.</p></body></html>"),
        "/doc.pdf": (200, "application/pdf", make_pdf("Remote pdf")),
        "/image": (200, "image/png", b"\x89PNG...."),
        "/big": (200, "text/plain", b"x" * (MB + 10)),
        "/down": (503, "text/plain", b"down"),
    }
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def test_urls(pages):
    page = await load_source(pages + "/page", max_bytes=MB)
    assert page.title == "Stub page" and page.text == "# Heading\n\nSome text."
    pdf = await load_source(pages + "/doc.pdf", max_bytes=MB)
    assert "Remote pdf" in pdf.text
    for path, match in (("/image", "image/png"), ("/big", "limit"), ("/down", "HTTP 503"),
                        ("/missing", "HTTP 404")):
        with pytest.raises(SourceError, match=match):
            await load_source(pages + path, max_bytes=MB)


async def test_unreachable_url():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(SourceError, match="Could not reach"):
        await load_source(f"http://127.0.0.1:{port}/", max_bytes=MB)
