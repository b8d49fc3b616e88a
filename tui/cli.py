"""The ``tern`` command."""

from __future__ import annotations

import argparse
import sys

from graphs.config import ConfigError, default_database_path, load_settings, user_config_path
from tui import collector

DESCRIPTION = """\
tern — chat with large language models in your terminal.

Conversations are saved as you type; Esc stops an answer and keeps what was
written; the history panel (ctrl+g) lets you branch from any point.
"""

EPILOG = f"""\
configuration:
  --config PATH, else $TERN_CONFIG, else {user_config_path()}
  (if it exists), else the bundled defaults. Any key you set overrides the
  default; see config.toml in the tern sources for every key.

  [model] provider = "auto" uses an OpenAI-compatible endpoint when the key
  variable (default OPENAI_API_KEY) is set or base_url is given, and the
  offline built-in model otherwise. [storage] database sets the database
  (default {default_database_path()}).

keys: press f1 in the app, or ctrl+p for every command.
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tern", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    start = parser.add_mutually_exclusive_group()
    start.add_argument("-c", "--continue", dest="continue_last", action="store_true",
                       help="resume the most recent thread")
    start.add_argument("--thread", metavar="ID", help="open the thread with this id")
    start.add_argument("--source", metavar="PATH_OR_URL",
                       help="start a source chat about a file (text, Markdown, code, HTML, PDF) or http(s) URL")
    parser.add_argument("--config", metavar="PATH", help="use this config.toml")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"tern: configuration problem: {exc}", file=sys.stderr)
        return 2

    collector.hold_for_startup()  # see tui.collector
    try:
        from tui.app import StartRequest, create_app

        app = create_app(settings, start=StartRequest(args.continue_last, args.thread, args.source))
        if app.first_paint.problem:
            print(
                f"tern: cannot read the database {settings.database}: {app.first_paint.problem}.\n"
                f"If the file is damaged, move it aside (mv '{settings.database}' "
                f"'{settings.database}.broken') and tern will start a fresh one.",
                file=sys.stderr,
            )
            return 1
        app.run()
    finally:
        collector.release()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
