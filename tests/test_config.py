"""Configuration: defaults, overlays, and errors that name file, line and problem."""

from __future__ import annotations

import pytest

from graphs.config import ConfigError, load_settings
from graphs.models import describe_model_error, model_info, resolve_provider
from graphs.config import ModelSettings


def write(tmp_path, text):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_defaults_come_from_the_bundled_file(monkeypatch, tmp_path):
    monkeypatch.delenv("TERN_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    settings = load_settings()
    assert settings.model.provider == "auto"
    assert settings.source.token_budget == 3000
    assert settings.database.name == "tern.db"


def test_user_file_overrides_key_by_key(tmp_path):
    path = write(tmp_path, '[model]\nname = "llama3"\n[storage]\ndatabase = "db/t.db"\n')
    settings = load_settings(path)
    assert settings.model.name == "llama3" and settings.model.temperature == 0.7
    assert settings.database == tmp_path / "db" / "t.db"


def test_env_variable_names_the_file(tmp_path, monkeypatch):
    path = write(tmp_path, '[ui]\ntheme = "nord"\n')
    monkeypatch.setenv("TERN_CONFIG", str(path))
    assert load_settings().theme == "nord"


@pytest.mark.parametrize("text, where, says", [
    ('[model]\nname = "x\n', ":2:", "Fix the file"),
    ('[model]\ntemperature = "hot"\n', ":2", "must be a number"),
    ('[model]\nprovider = "anthropic"\n', ":2", '"auto", "openai" or "offline"'),
    ('[modle]\nname = "x"\n', ":1", "unknown section [modle]"),
    ('[model]\n\nbase = "x"\n', ":3", "unknown key 'base'"),
    ('[model]\nbase_url = "localhost:11434"\n', ":2", "http://"),
    ('[source]\ntoken_budget = 0\n', ":2", "above 0"),
])
def test_broken_files_say_where_and_what(tmp_path, text, where, says):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    message = str(info.value)
    assert message.startswith(str(path) + where) and says in message


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        load_settings(tmp_path / "nope.toml")


def test_auto_provider():
    settings = ModelSettings()
    assert resolve_provider(settings, {}) == "offline"
    assert resolve_provider(settings, {"OPENAI_API_KEY": "k"}) == "openai"
    assert resolve_provider(ModelSettings(base_url="http://127.0.0.1:1/v1"), {}) == "openai"
    assert model_info(settings, {}).label == "offline model"


def test_unknown_errors_still_read_well():
    problem = describe_model_error(RuntimeError("boom"))
    assert problem.kind == "internal" and "boom" in problem.message and "saved" in problem.hint


def test_a_5xx_status_reads_as_a_server_error_whatever_the_error_type():
    from langchain_core.exceptions import ModelError

    class Upstream(ModelError):
        status_code = 502

    unreachable = OSError("bad gateway")
    unreachable.status_code = 502
    for exc in (Upstream("bad gateway"), unreachable):
        problem = describe_model_error(exc)
        assert problem.kind == "server" and "(HTTP 502)" in problem.message, exc


def test_chat_model_has_no_wait_for_chunk_timeout():
    """langchain-openai's per-chunk timeout wraps reads in asyncio.wait_for,
    which on Python 3.11 can swallow the cancel that Esc sends."""
    from graphs.models import make_chat_model

    model = make_chat_model(ModelSettings(provider="openai", base_url="http://127.0.0.1:9/v1"), {})
    assert not model.stream_chunk_timeout
    assert model.max_retries == 0 and model.request_timeout == 60.0
