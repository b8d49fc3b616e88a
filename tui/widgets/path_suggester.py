"""Completes file paths in an Input (right arrow / end accepts the suggestion)."""

from __future__ import annotations

import os
from pathlib import Path

from textual.suggester import Suggester


class PathSuggester(Suggester):
    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        if not value or "://" in value:
            return None
        expanded = os.path.expanduser(value)
        folder, prefix = os.path.split(expanded)
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            return None
        for name in names:
            if name.startswith(prefix) and name != prefix and (prefix.startswith(".") or not name.startswith(".")):
                completed = value[: len(value) - len(prefix)] + name
                if (Path(folder or ".") / name).is_dir():
                    completed += os.sep
                return completed
        return None
