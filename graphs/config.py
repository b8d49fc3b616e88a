"""tern's configuration: the bundled ``config.toml`` overlaid with the user's.

A broken file stops tern before the UI starts, with the file, the line and
the problem, so nothing the user typed in the app can be lost to it.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import platformdirs

APP_NAME = "tern"
BUNDLED_CONFIG = Path(__file__).resolve().parent.parent / "config.toml"

Provider = Literal["auto", "openai", "offline"]


class ConfigError(Exception):
    """A configuration problem, phrased for the person who has to fix it."""


@dataclass(frozen=True)
class ModelSettings:
    provider: Provider = "auto"
    name: str = "gpt-4o-mini"
    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.7
    timeout: float = 60.0
    system_prompt: str = ""


@dataclass(frozen=True)
class SourceSettings:
    token_budget: int = 3000
    max_megabytes: float = 20

    @property
    def max_bytes(self) -> int:
        return int(self.max_megabytes * 1024 * 1024)


@dataclass(frozen=True)
class Settings:
    model: ModelSettings = field(default_factory=ModelSettings)
    source: SourceSettings = field(default_factory=SourceSettings)
    database: Path = field(default_factory=lambda: default_database_path())
    theme: str = "textual-dark"
    config_path: Path | None = None


def default_database_path() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "tern.db"


def user_config_path() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def find_config(explicit: str | Path | None = None) -> Path | None:
    """--config, else $TERN_CONFIG, else the user config file if it exists."""
    if explicit:
        return Path(explicit).expanduser()
    if env := os.environ.get("TERN_CONFIG"):
        return Path(env).expanduser()
    user = user_config_path()
    return user if user.exists() else None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file. Create it or drop --config/$TERN_CONFIG.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc}).") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib says "... (at line 3, column 7)"; lead with file:line like a compiler.
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        where = f"{path}:{match.group(1)}:{match.group(2)}" if match else str(path)
        problem = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise ConfigError(f"{where}: {problem}. Fix the file and start tern again.") from None


_SCHEMA: dict[str, dict[str, type | tuple[type, ...]]] = {
    "model": {
        "provider": str, "name": str, "base_url": str, "api_key_env": str,
        "temperature": (int, float), "timeout": (int, float), "system_prompt": str,
    },
    "source": {"token_budget": int, "max_megabytes": (int, float)},
    "storage": {"database": str},
    "ui": {"theme": str},
}


def _line_of(path: Path, section: str, key: str | None) -> str:
    """'path:line' of a key (or section) for error messages, best effort."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return str(path)
    current = None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("["):
            current = stripped.strip("[] ")
            if key is None and current == section:
                return f"{path}:{number}"
        elif key and current == section and re.match(rf"{re.escape(key)}\s*=", stripped):
            return f"{path}:{number}"
    return str(path)


def _validate(data: dict[str, Any], path: Path) -> None:
    for section, values in data.items():
        if section not in _SCHEMA:
            raise ConfigError(
                f"{_line_of(path, section, None)}: unknown section [{section}]; "
                f"known sections are {', '.join('[' + s + ']' for s in _SCHEMA)}."
            )
        if not isinstance(values, dict):
            raise ConfigError(f"{_line_of(path, section, None)}: [{section}] must be a table.")
        for key, value in values.items():
            expected = _SCHEMA[section].get(key)
            if expected is None:
                raise ConfigError(
                    f"{_line_of(path, section, key)}: unknown key {key!r} in [{section}]; "
                    f"known keys are {', '.join(_SCHEMA[section])}."
                )
            if isinstance(value, bool) or not isinstance(value, expected):
                kind = "a number" if expected == (int, float) else (
                    "a whole number" if expected is int else "a string")
                raise ConfigError(
                    f"{_line_of(path, section, key)}: [{section}] {key} must be {kind}, "
                    f"not {value!r}."
                )
    model = data.get("model", {})
    if model.get("provider", "auto") not in ("auto", "openai", "offline"):
        raise ConfigError(
            f"{_line_of(path, 'model', 'provider')}: [model] provider must be "
            f"\"auto\", \"openai\" or \"offline\", not {model['provider']!r}."
        )
    if model.get("base_url") and not re.match(r"https?://", model["base_url"]):
        raise ConfigError(
            f"{_line_of(path, 'model', 'base_url')}: [model] base_url must start with "
            f"http:// or https://, e.g. \"http://localhost:11434/v1\"."
        )
    for section, key in (("model", "timeout"), ("source", "token_budget"), ("source", "max_megabytes")):
        value = data.get(section, {}).get(key)
        if value is not None and value <= 0:
            raise ConfigError(f"{_line_of(path, section, key)}: [{section}] {key} must be above 0.")


def load_settings(explicit: str | Path | None = None) -> Settings:
    """Bundled defaults, overlaid key by key with the user's file if there is one."""
    merged: dict[str, dict[str, Any]] = {s: {} for s in _SCHEMA}
    path = find_config(explicit)
    for source in (BUNDLED_CONFIG, path):
        if source is None:
            continue
        data = _read_toml(source)
        _validate(data, source)
        for section, values in data.items():
            merged[section].update(values)
    database = merged["storage"].get("database") or ""
    db_path = Path(database).expanduser() if database else default_database_path()
    if database and not db_path.is_absolute() and path is not None:
        db_path = path.parent / db_path  # relative to the file that named it
    return Settings(
        model=ModelSettings(**merged["model"]),
        source=SourceSettings(**merged["source"]),
        database=db_path,
        theme=merged["ui"].get("theme", "textual-dark"),
        config_path=path,
    )
