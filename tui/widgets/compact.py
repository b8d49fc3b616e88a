"""Compact Textual widgets, made so without styling them before they mount."""

from __future__ import annotations

from typing import TypeVar

from textual.widget import Widget

W = TypeVar("W", bound=Widget)


def compact(widget: W) -> W:
    """Turn on a TextArea's or Input's `compact` reactive, as Textual's own Footer does.

    Passing `compact=True` to their constructors toggles a CSS class, and
    toggling a class restyles the widget at once, mounted or not; mounting
    then styles it again. Set quietly, the class is styled once, at mount.
    """
    widget.set_reactive(type(widget).compact, True)
    widget.set_class(True, "-textual-compact", update=False)
    return widget
