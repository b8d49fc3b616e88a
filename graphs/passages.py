"""Pick the parts of a source that fit a token budget and best match a question.

No tokenizer download (tiktoken fetches its encodings on first use, which
fails offline): tokens are estimated at ~4 characters each, which is what the
budget is stated in. Ranking is BM25 over paragraph-sized passages — small,
deterministic and good enough to find the paragraphs that share the
question's words; it is hand-written because the alternatives here are
embedding models that need weights from a hub.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

CHARS_PER_TOKEN = 4
PASSAGE_CHARS = 1200

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    "a an and are as at be but by can do does for from has have how i in is it its of on or "
    "so that the this to was what when where which who why will with you your".split()
)


def estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN)) if text else 0


@dataclass(frozen=True)
class Passage:
    index: int  # position in the source, 0-based
    start: int  # character offset in the source
    text: str

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def split_passages(text: str, size: int = PASSAGE_CHARS) -> list[Passage]:
    """Paragraph-sized pieces, cut at blank lines, then lines, then spaces."""
    passages: list[Passage] = []
    buf_start, buf = 0, ""
    pos = 0
    for block in re.split(r"(\n\s*\n)", text):
        if not block.strip():
            pos += len(block)
            continue
        start = text.find(block, pos)
        pos = start + len(block)
        while len(block) > size:
            cut = max(block.rfind("\n", 0, size), block.rfind(" ", 0, size))
            cut = cut if cut > size // 2 else size
            if buf:
                passages.append(Passage(len(passages), buf_start, buf))
                buf = ""
            passages.append(Passage(len(passages), start, block[:cut].strip()))
            start += cut
            block = block[cut:]
            while block[:1].isspace():
                block, start = block[1:], start + 1
        if not block:
            continue
        if buf and len(buf) + len(block) + 2 > size:
            passages.append(Passage(len(passages), buf_start, buf))
            buf = ""
        if not buf:
            buf_start, buf = start, block
        else:
            buf = text[buf_start:start + len(block)]
    if buf:
        passages.append(Passage(len(passages), buf_start, buf))
    return passages


def _terms(text: str) -> list[str]:
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP]


def rank(passages: list[Passage], question: str) -> list[tuple[float, Passage]]:
    """BM25 scores, best first; ties keep source order."""
    query = set(_terms(question))
    docs = [Counter(_terms(p.text)) for p in passages]
    if not passages:
        return []
    avg = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
    df = Counter(t for d in docs for t in query if t in d)
    n = len(docs)
    k1, b = 1.5, 0.75
    scored = []
    for passage, doc in zip(passages, docs):
        length = sum(doc.values())
        score = 0.0
        for term in query:
            tf = doc.get(term, 0)
            if tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
        scored.append((score, passage))
    scored.sort(key=lambda sp: (-sp[0], sp[1].index))
    return scored


def select(text: str, question: str, token_budget: int) -> list[Passage]:
    """The passages to show the model, in source order, within ``token_budget``.

    A source that fits is used whole. Otherwise the best-matching passages are
    taken until the budget is spent; with no match at all (a greeting, "summarise
    this"), the opening of the source is the sensible context.
    """
    passages = split_passages(text)
    if estimate_tokens(text) <= token_budget:
        return passages
    scored = rank(passages, question)
    if not scored or scored[0][0] == 0:
        ordered = passages
    else:
        ordered = [p for s, p in scored if s > 0] + [p for s, p in scored if s == 0]
    chosen, used = [], 0
    for passage in ordered:
        cost = estimate_tokens(passage.text)
        if used + cost > token_budget:
            if chosen:
                continue
            # one passage bigger than the whole budget: take its head
            passage = Passage(passage.index, passage.start, passage.text[: token_budget * CHARS_PER_TOKEN])
            cost = estimate_tokens(passage.text)
        chosen.append(passage)
        used += cost
    return sorted(chosen, key=lambda p: p.index)
