"""What the ``clawctx`` commands share: the printer (``rich`` on a terminal, plain text when
piped), the one-line error format, error sentences, argument types, and the provider and API
choices.

Layer: ``clawctx.cli`` (the top of the package).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import logging
import os
import re
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO, TypeVar

from clawctx import _core
from clawctx.errors import StoreError
from clawctx.history.foreign import detect_transcript_format
from clawctx.history.inspect import DEFAULT_CONTEXT_TOKENS
from clawctx.history.session import Session
from clawctx.history.store import is_store, open_store

#: pi-ai 0.58.3's known APIs (``KnownApi``, `packages/ai/src/types.ts`): what ``--model-api``
#: accepts.
MODEL_APIS: tuple[str, ...] = (
    "anthropic-messages",
    "bedrock-converse-stream",
    "google-generative-ai",
    "google-gemini-cli",
    "google-vertex",
    "openai-completions",
    "openai-responses",
    "azure-openai-responses",
    "openai-codex-responses",
    "mistral-conversations",
)

#: pi-ai 0.58.3's known providers (``KnownProvider``, `packages/ai/src/types.ts`) and the
#: others OpenClaw 2026.3.13's transcript policy names (`src/agents/provider-capabilities.ts`):
#: what ``--provider`` accepts.
PROVIDERS: tuple[str, ...] = (
    "anthropic",
    "amazon-bedrock",
    "openai",
    "openai-codex",
    "azure-openai-responses",
    "google",
    "google-gemini-cli",
    "google-antigravity",
    "google-vertex",
    "github-copilot",
    "openrouter",
    "mistral",
    "xai",
    "groq",
    "cerebras",
    "vercel-ai-gateway",
    "zai",
    "minimax",
    "minimax-cn",
    "huggingface",
    "opencode",
    "opencode-go",
    "kimi-coding",
    "kilocode",
)


#: The API a provider's models use when ``--model-api`` is not given (pi-ai 0.58.3's model
#: registry, `packages/ai/src/models.generated.ts`: the API of each provider's models; the
#: OpenAI-compatible providers use Chat Completions).
DEFAULT_API_BY_PROVIDER: dict[str, str] = {
    "anthropic": "anthropic-messages",
    "amazon-bedrock": "bedrock-converse-stream",
    "openai": "openai-responses",
    "openai-codex": "openai-codex-responses",
    "azure-openai-responses": "azure-openai-responses",
    "google": "google-generative-ai",
    "google-gemini-cli": "google-gemini-cli",
    "google-antigravity": "google-gemini-cli",
    "google-vertex": "google-vertex",
    "mistral": "mistral-conversations",
    "minimax": "anthropic-messages",
    "minimax-cn": "anthropic-messages",
    "kimi-coding": "anthropic-messages",
    "vercel-ai-gateway": "anthropic-messages",
}

#: A model id per API for ``assemble`` when ``--model`` is not given.
DEFAULT_MODEL_BY_API: dict[str, str] = {
    "anthropic-messages": "claude-sonnet-4-5",
    "bedrock-converse-stream": "anthropic.claude-sonnet-4-5",
    "openai-completions": "gpt-5",
    "openai-responses": "gpt-5",
    "azure-openai-responses": "gpt-5",
    "openai-codex-responses": "gpt-5-codex",
    "google-generative-ai": "gemini-2.5-pro",
    "google-gemini-cli": "gemini-2.5-pro",
    "google-vertex": "gemini-2.5-pro",
    "mistral-conversations": "mistral-large-latest",
}


def default_api(provider: str) -> str:
    """The API ``--provider`` alone selects (Chat Completions for OpenAI-compatible ones)."""
    return DEFAULT_API_BY_PROVIDER.get(provider, "openai-completions")


def foreign_format(path: Path) -> str | None:
    """``"claude-code"`` or ``"codex"`` when ``path`` is such a transcript, else ``None``."""
    try:
        if path.stat().st_size == 0:
            return None
        found = detect_transcript_format(path)
    except (OSError, ValueError):
        return None
    return found if found != "pi" else None


def convert_hint(path: Path, format_name: str) -> str:
    """What to say when a command that needs a pi session is given a foreign transcript."""
    label = "Claude Code" if format_name == "claude-code" else "Codex"
    return (
        f"a {label} transcript, not a pi session; convert it first: "
        f"clawctx convert {path} -o session.jsonl"
    )


def plural(count: int, noun: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def print_json(value: object) -> None:
    """A ``--json`` report on stdout: indented, non-ASCII characters kept as they are."""
    print(json.dumps(value, indent=2, ensure_ascii=False))


def load_tool_definitions(path: Path) -> list[dict[str, Any]] | None:
    """The tool definitions of a ``--tools`` JSON file (a list, or ``{"tools": [...]}``, in
    pi's or an SDK's shape) as pi-ai ``Tool`` dicts. Raises ``OSError`` for a file that cannot
    be read and ``ValueError`` for one that is not JSON or holds no valid definitions."""
    # Imported here: the wire stage only for the commands and options that send tools.
    from clawctx.wire import normalize_tools

    loaded = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(loaded, dict) and "tools" in loaded:
        loaded = loaded["tools"]
    return normalize_tools(loaded)


def use_rich(stream: TextIO) -> bool:
    """Colour only for a terminal, and never with ``NO_COLOR`` set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Printer:
    """Writes report lines to stdout: through ``rich`` on a terminal, as plain text otherwise.

    Lines are given plain; ``style`` only adds colour, so piped output is the same text.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self._console: Any = None
        if use_rich(self.stream):
            from rich.console import Console

            self._console = Console(file=self.stream, highlight=False, soft_wrap=True)

    def line(self, text: str = "", style: str | None = None) -> None:
        """One report line; ``style`` colours it on a terminal only."""
        if self._console is None:
            print(text, file=self.stream)
        else:
            from rich.text import Text

            self._console.print(Text(text, style=style or ""))

    def labelled(self, label: str, value: str, style: str | None = None) -> None:
        """``label`` padded to a column, then ``value`` (the report layout of ``inspect``)."""
        if self._console is None:
            print(f"{label:<9}{value}", file=self.stream)
        else:
            from rich.text import Text

            text = Text()
            text.append(f"{label:<9}", style="bold cyan")
            text.append(value, style=style or "")
            self._console.print(text)

    def heading(self, title: str) -> None:
        """A section heading (a rule on a terminal, ``=== title ===`` otherwise)."""
        if self._console is None:
            print(f"=== {title} ===", file=self.stream)
        else:
            self._console.rule(title, style="cyan")


def error(command: str, path: object, message: str) -> None:
    """One error line on stderr, naming the file once."""
    print(f"clawctx {command}: {path}: {message}", file=sys.stderr)


_OS_ERROR_SUFFIX = re.compile(r"\s*\(os error \d+\)")


def describe(err: BaseException, path: object) -> str:
    """A reader's sentence for ``err``: no ``[Errno N]``, no ``(os error N)``, no Rust ``Debug``
    text, and without the path (the caller names the file once)."""
    if isinstance(err, _core.SessionFormatError):
        reason = getattr(err, "reason", None) or str(err)
        line = getattr(err, "line", None)
        return f"line {line}: {reason}" if line else str(reason)
    if isinstance(err, OSError):
        text = err.strerror or str(err)
        names = {str(n) for n in (err.filename, err.filename2, path) if n}
    else:
        text = str(err)
        names = {str(path)}
    text = _OS_ERROR_SUFFIX.sub("", text)
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(f"{name}: ", "").replace(f": {name}", "").replace(f" ({name})", "")
    text = text.strip(" :")
    if not text:
        return type(err).__name__
    return text[0].lower() + text[1:] if text[:2] != text[:2].upper() else text


def check_readable(path: Path) -> str | None:
    """Why ``path`` cannot be a session file to read, or ``None``."""
    if not path.exists():
        return "no such file"
    if path.is_dir():
        return "is a directory, not a session file"
    return None


def pi_session_problem(path: Path) -> str | None:
    """Why a command that reads a pi session cannot take ``path`` (missing, a directory, or a
    Claude Code / Codex transcript to convert first), or ``None``."""
    problem = check_readable(path)
    if problem is not None:
        return problem
    foreign = foreign_format(path)
    return None if foreign is None else convert_hint(path, foreign)


def not_a_session_reason(path: Path) -> str | None:
    """What makes ``path`` unreadable as a session (the reason ``inspect`` gives), or ``None``.

    ``repair`` uses it for files it skips, so both commands reject the same files with the same
    reason: a binary file, a JSON array and a file without a header are not session files, and
    neither is an empty file (pi would start a new session in it; there is nothing to inspect).
    """
    try:
        Session.open(path, read_only=True)
    except (OSError, _core.ClawctxError) as err:
        return describe(err, path)
    return None


@contextlib.contextmanager
def clawctx_log(verbose: bool) -> Iterator[None]:
    """The library warns on the ``clawctx`` logger (as OpenClaw logs its repairs); the CLI
    already reports the same facts, so the warnings show only with ``--verbose``."""
    logger = logging.getLogger("clawctx")
    handler: logging.Handler
    if verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("clawctx: %(message)s"))
    else:
        handler = logging.NullHandler()
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def choice_error(option: str, value: str, choices: Sequence[str]) -> str:
    """The usage error for an unknown ``option`` value: a close match if any, then the choices."""
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"argument {option}: unknown value {value!r}{hint}; choose from {', '.join(choices)}"


def _whole_number_over_zero(text: str, bound: str) -> int:
    """A whole number above 0 from ``text``, else the usage error ``must be {bound}, got N``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be {bound}, got {value}")
    return value


def positive_int(text: str) -> int:
    """Argument type: a positive number of tokens."""
    return _whole_number_over_zero(text, "a positive number of tokens")


def positive_number(text: str) -> int:
    """Argument type: a positive whole number (``report --top`` / ``--jobs``)."""
    return _whole_number_over_zero(text, "a positive number")


def at_least_one(text: str) -> int:
    """Argument type: a count of at least 1 (``scan --jobs`` / ``--top``)."""
    return _whole_number_over_zero(text, "at least 1")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps hyphenated names (``vercel-ai-gateway``) whole when option help wraps."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def wrap(text: str) -> str:
    """A command description filled to 88 columns."""
    return textwrap.fill(text, 88)


class Command(Protocol):
    """What each command module declares (as pip's ``Command`` classes do); ``build_parser``
    turns it into the subcommand ``clawctx NAME``."""

    SUMMARY: str
    """Its line in ``clawctx --help``."""
    DESCRIPTION: str
    """Its description in ``clawctx NAME --help``, filled to 88 columns."""
    EXAMPLES: str
    """Its examples, shown after the options as written."""

    def add_arguments(self, parser: argparse.ArgumentParser, /) -> None:
        """Adds the command's arguments to its parser."""

    def run(self, args: argparse.Namespace, /) -> int:
        """Runs the command on the parsed arguments; returns the exit status."""


def add_context_window(
    parser: argparse.ArgumentParser, help: str, *, default: int | None = DEFAULT_CONTEXT_TOKENS
) -> None:
    """The ``--context-window TOKENS`` option of a command (a positive number of tokens), with
    the command's own ``help``."""
    parser.add_argument(
        "--context-window", type=positive_int, default=default, metavar="TOKENS", help=help
    )


def is_store_path(path: Path) -> bool:
    """Whether a command's file argument is an OpenClaw SQLite store (``openclaw-agent.sqlite``
    or any SQLite file not named ``*.jsonl``) rather than a JSONL session."""
    return path.suffix != ".jsonl" and path.is_file() and is_store(path)


def store_label(store: Path, session_id: str) -> str:
    """How reports name one session of a store: ``STORE#SESSION_ID`` (as ``clawctx scan``)."""
    return f"{store}#{session_id}"


@contextlib.contextmanager
def store_session_file(store: Path, session_id: str) -> Iterator[Path]:
    """The session ``session_id`` of ``store`` as a temporary JSONL file (its records in
    ``seq`` order, read in one read-only transaction), removed afterwards: the commands read
    files, and the store itself is never written. Raises ``StoreError`` for a store that
    cannot be read or an unknown session."""
    with open_store(store) as opened:
        try:
            data = opened.records(session_id)
        except KeyError:
            known = ", ".join(w.session_id for w in opened.sessions()) or "none"
            raise StoreError(
                f"{store}: no session {session_id!r} in the store (sessions: {known})",
                path=str(store),
                session_id=session_id,
            ) from None
    with tempfile.TemporaryDirectory(prefix="clawctx-store-") as tmp:
        path = Path(tmp) / "session.jsonl"
        path.write_bytes(data)
        yield path


_Read = TypeVar("_Read")


def read_session_file(
    path: Path, session_id: str | None, read: Callable[[Path], _Read]
) -> tuple[_Read | None, str | None]:
    """``(read(path), None)``, or ``(None, reason)`` when the file cannot be read (missing, a
    directory, or ``read`` raised ``OSError`` / ``ClawctxError``). With ``session_id``, ``path``
    is a store and ``read`` gets that session as a temporary file (:func:`store_session_file`)."""
    problem = check_readable(path)
    if problem is not None:
        return None, problem
    try:
        if session_id is None:
            return read(path), None
        with store_session_file(path, session_id) as local:
            return read(local), None
    except (OSError, _core.ClawctxError) as err:
        return None, describe(err, path)


def read_or_report(
    command: str, path: Path, session_id: str | None, read: Callable[[Path], _Read]
) -> tuple[str, _Read | None, str | None]:
    """:func:`read_session_file` for a command that reports many files: ``(label, result,
    None)``, or ``(label, None, reason)`` after the error line for ``label`` is printed. The
    label is the path, or ``STORE#SESSION_ID`` (:func:`store_label`) with ``session_id``."""
    label = str(path) if session_id is None else store_label(path, session_id)
    result, problem = read_session_file(path, session_id, read)
    if result is None:
        error(command, label, problem or "unreadable")
    return label, result, problem


def missing_session(command: str, store: Path) -> int:
    """The error when a store is given where one session is meant without ``--session``."""
    error(
        command,
        store,
        "an OpenClaw session store: pick a session with --session ID "
        f"(clawctx inspect {store} lists them)",
    )
    return 1
