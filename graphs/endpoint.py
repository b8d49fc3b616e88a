"""What the status line says about the model: cheap, no model client imported.

The first paint happens before LangGraph or langchain-openai load, so the
label is derived from settings alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from graphs.config import ModelSettings

OFFLINE_MODEL_NAME = "tern-offline"


@dataclass(frozen=True)
class ModelInfo:
    name: str
    endpoint: str  # "offline" or the base URL
    offline: bool

    @property
    def label(self) -> str:
        return "offline model" if self.offline else f"{self.name} @ {self.endpoint}"


def resolve_provider(settings: ModelSettings, environ: Any = os.environ) -> str:
    """"auto" means the endpoint when a key or a base_url is set, else offline."""
    if settings.provider != "auto":
        return settings.provider
    return "openai" if (environ.get(settings.api_key_env) or settings.base_url) else "offline"


def model_info(settings: ModelSettings, environ: Any = os.environ) -> ModelInfo:
    if resolve_provider(settings, environ) == "offline":
        return ModelInfo(OFFLINE_MODEL_NAME, "offline", True)
    return ModelInfo(settings.name, settings.base_url or "https://api.openai.com/v1", False)
