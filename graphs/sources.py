"""Turn a file path or an http(s) URL into text tern can ground a chat on.

Every failure is a :class:`SourceError` whose message says what was wrong
and what to do; nothing is stored unless the whole load succeeded (the
caller stores the :class:`LoadedSource` this returns).
"""

from __future__ import annotations

import asyncio
import io
import re
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import httpx

TEXT_SUFFIXES = {
    ".txt", ".md", ".markdown", ".rst", ".org", ".csv", ".tsv", ".json", ".yaml", ".yml",
    ".toml", ".ini", ".cfg", ".log", ".xml", ".py", ".js", ".ts", ".tsx", ".jsx", ".rs",
    ".go", ".c", ".h", ".cpp", ".hpp", ".java", ".kt", ".rb", ".php", ".sh", ".sql", ".css",
    ".scss", ".lua", ".swift", ".r", ".tex", ".",
}
HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
TEXTUAL_TYPES = {"application/json", "application/xml", "application/x-yaml", "application/javascript"}


class SourceError(Exception):
    """A source that cannot be attached; the message says why and what to do."""


@dataclass(frozen=True)
class LoadedSource:
    title: str
    origin: str
    media_type: str
    text: str


def is_url(spec: str) -> bool:
    return urlparse(spec).scheme in ("http", "https")


async def load_source(spec: str, *, max_bytes: int, timeout: float = 20.0) -> LoadedSource:
    """Load a path or URL; file reads run on a worker thread."""
    spec = spec.strip()
    if not spec:
        raise SourceError("Give a file path or an http(s) URL to attach.")
    if is_url(spec):
        return await load_url(spec, max_bytes=max_bytes, timeout=timeout)
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", spec):
        raise SourceError(f"{spec}: only http:// and https:// URLs can be attached.")
    return await asyncio.to_thread(load_file, spec, max_bytes=max_bytes)


def _limit_text(max_bytes: int) -> str:
    return f"{max_bytes / (1024 * 1024):g} MB"


def load_file(spec: str | Path, *, max_bytes: int) -> LoadedSource:
    path = Path(spec).expanduser()
    shown = str(spec)
    if not path.exists():
        raise SourceError(f"{shown}: no such file. Check the path (Tab completes it).")
    if path.is_dir():
        raise SourceError(f"{shown} is a folder; attach one file inside it.")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise SourceError(
                f"{shown} is {size / (1024 * 1024):.1f} MB, over the {_limit_text(max_bytes)} limit. "
                "Attach a smaller part, or raise [source] max_megabytes in config.toml."
            )
        data = path.read_bytes()
    except PermissionError:
        raise SourceError(f"{shown}: permission denied. Check the file's permissions.") from None
    except OSError as exc:
        raise SourceError(f"{shown}: cannot read it ({exc.strerror or exc}).") from None
    suffix = path.suffix.lower()
    if suffix == ".pdf" or data[:5] == b"%PDF-":
        return LoadedSource(path.name, str(path.resolve()), "application/pdf", pdf_text(data, shown))
    if suffix in HTML_SUFFIXES:
        text = decode_text(data, shown)
        title, body = html_to_text(text)
        return LoadedSource(title or path.name, str(path.resolve()), "text/html", _require_text(body, shown))
    text = decode_text(data, shown)
    media = "text/markdown" if suffix in (".md", ".markdown") else "text/plain"
    return LoadedSource(path.name, str(path.resolve()), media, _require_text(text, shown))


def _require_text(text: str, shown: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise SourceError(f"{shown} has no text in it.")
    return text


def decode_text(data: bytes, shown: str, charset: str | None = None) -> str:
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SourceError(f"{shown} looks like a binary file; attach text, Markdown, code, HTML or PDF.")
    for encoding in ([charset] if charset else []) + ["utf-8-sig"]:
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    raise SourceError(
        f"{shown} is not UTF-8 text. Convert it first, e.g. `iconv -f latin1 -t utf-8 FILE > FILE.txt`."
    )


def pdf_text(data: bytes, shown: str) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise SourceError(f"{shown} is an encrypted PDF; save an unlocked copy and attach that.")
        pages = [page.extract_text() or "" for page in reader.pages]
    except SourceError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise SourceError(f"{shown} is not a readable PDF ({exc}).") from None
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text.strip():
        raise SourceError(
            f"{shown} has no text layer (an empty or scanned, image-only PDF). "
            "Run OCR on it first (e.g. `ocrmypdf`), then attach the result."
        )
    return text


class _TextExtractor(HTMLParser):
    """Readable text from HTML: block elements become line breaks, chrome is dropped.

    stdlib's parser is enough here; a full readability library would be a
    heavy dependency for what is "the words of the page, in order".
    """

    SKIP = {"script", "style", "noscript", "template", "svg", "nav", "footer", "head", "form", "button"}
    BLOCK = {"p", "div", "section", "article", "main", "br", "li", "ul", "ol", "tr", "table",
             "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "hr", "header", "dd", "dt"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self.SKIP:
            self._skip += 1
        if tag in self.BLOCK:
            self.parts.append("\n")
        if tag in ("h1", "h2", "h3") and not self._skip:
            self.parts.append("#" * int(tag[1]) + " ")
        if tag == "li" and not self._skip:
            self.parts.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self.SKIP and self._skip:
            self._skip -= 1
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    lines = [re.sub(r"[ \t\f\v]+", " ", line).strip() for line in text.splitlines()]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return unescape(" ".join(parser.title.split())), text


async def load_url(url: str, *, max_bytes: int, timeout: float = 20.0) -> LoadedSource:
    try:
        async with httpx.AsyncClient(follow_redirects=True, timeout=timeout,
                                     headers={"User-Agent": "tern (terminal chat)"}) as client:
            async with client.stream("GET", url) as response:
                if response.status_code >= 400:
                    raise SourceError(
                        f"{url} answered HTTP {response.status_code} {response.reason_phrase}. "
                        "Check the address, or download the page and attach the file."
                    )
                media = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if not (media.startswith("text/") or media in TEXTUAL_TYPES or media == "application/pdf"
                        or media == "application/xhtml+xml" or not media):
                    raise SourceError(
                        f"{url} is {media}, not a web page or document; tern attaches HTML, text and PDF."
                    )
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > max_bytes:
                    raise SourceError(f"{url} is over the {_limit_text(max_bytes)} limit; "
                                      "raise [source] max_megabytes in config.toml to attach it.")
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body.extend(chunk)
                    if len(body) > max_bytes:
                        raise SourceError(f"{url} is over the {_limit_text(max_bytes)} limit; "
                                          "raise [source] max_megabytes in config.toml to attach it.")
                charset = response.charset_encoding
                final_url = str(response.url)
    except SourceError:
        raise
    except httpx.TimeoutException:
        raise SourceError(f"{url} did not answer within {timeout:g} s. Try again later.") from None
    except httpx.HTTPError as exc:
        raise SourceError(f"Could not reach {url} ({type(exc).__name__}: {exc}). "
                          "Check the address and your connection.") from None
    data = bytes(body)
    if media == "application/pdf" or data[:5] == b"%PDF-":
        name = Path(urlparse(final_url).path).name or final_url
        return LoadedSource(name, final_url, "application/pdf", pdf_text(data, url))
    text = decode_text(data, url, charset)
    if media in ("text/html", "application/xhtml+xml") or (not media and "<html" in text[:2000].lower()):
        title, body_text = html_to_text(text)
        return LoadedSource(title or final_url, final_url, "text/html", _require_text(body_text, url))
    return LoadedSource(Path(urlparse(final_url).path).name or final_url, final_url,
                        media or "text/plain", _require_text(text, url))
