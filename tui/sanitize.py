"""Make model and source text safe to put on a terminal.

Textual strips only a few control characters: ESC passes through every
widget, so a model could write OSC 52 (set the clipboard) or OSC 8 (links)
straight to the user's terminal. Every C0 control except newline and tab,
DEL, and every C1 control is removed before text reaches a widget.
"""

from __future__ import annotations

_CONTROLS = {c: None for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)) if c not in (0x09, 0x0A)}


def clean(text: str) -> str:
    if text.isprintable():
        return text
    return text.replace("\r\n", "\n").translate(_CONTROLS)
