"""Transcripts written by other agents: Claude Code sessions and OpenAI Codex CLI rollouts.

``import_transcript`` reads the main thread of either (or of a pi session) as pi messages: a
``Transcript`` that every transcript operation accepts. ``read_transcript`` gives the same
messages with what the file says about itself (format, damaged lines, sub-agent lines,
compactions, branches, model, timestamps), the facts a fleet scan reports. Files are only
read, never written. The mapping is documented in the README ("Claude Code and Codex
transcripts").
"""

from __future__ import annotations

import os
from typing import BinaryIO, Literal

from clawctx import _core
from clawctx._core import ImportedTranscript, Transcript

#: The formats ``detect_transcript_format`` tells apart.
TranscriptFormat = Literal["pi", "claude-code", "codex"]

#: Bytes read at first to detect a format; doubled while no complete record is in them.
_HEAD_BYTES = 64 * 1024

__all__ = [
    "ImportedTranscript",
    "TranscriptFormat",
    "detect_transcript_format",
    "import_transcript",
    "import_transcript_bytes",
    "read_transcript",
]


def detect_transcript_format(path: str | os.PathLike[str]) -> TranscriptFormat:
    """``"pi"``, ``"claude-code"`` or ``"codex"``, from the first records of the file at ``path``.

    Reads only the start of the file (more while its first line is longer). An empty or blank
    file is ``"claude-code"``: Claude Code is the only one of the three that leaves
    message-less files behind. Raises ``ValueError`` when no early record fits any format.
    """
    size = _HEAD_BYTES
    with open(path, "rb") as file:
        head = file.read(size)
        while True:
            complete = head[: head.rfind(b"\n") + 1]
            more = file.read(size)
            if not more:
                return _core.detect_transcript_format_bytes(head)
            if complete.strip():
                try:
                    return _core.detect_transcript_format_bytes(complete)
                except ValueError:
                    if len(head) >= 64 * _HEAD_BYTES:
                        raise
            head += more
            size *= 2


def _bytes_of(data: bytes | bytearray | memoryview | BinaryIO) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    read = getattr(data, "read", None)
    if read is None:
        raise TypeError(f"expected bytes or a binary file object, not {type(data).__name__}")
    content = read()
    if not isinstance(content, bytes):
        raise TypeError("the file object must be opened in binary mode")
    return content


def read_transcript(
    source: str | os.PathLike[str] | bytes | bytearray | memoryview | BinaryIO,
    *,
    format: Literal["auto", "pi", "claude-code", "codex"] = "auto",
) -> ImportedTranscript:
    """The transcript in ``source`` (a path, bytes, or a binary file object such as an
    fsspec/S3 file) with the file's facts. ``format="auto"`` detects it.

    Raises ``FileNotFoundError``/``OSError`` for unreadable paths and ``ValueError`` for data
    in none of the three formats. Damaged lines (a torn last line included) are skipped and
    counted, never fatal.
    """
    if isinstance(source, (str, os.PathLike)):
        return _core.read_transcript_file(source, format=format)
    return _core.read_transcript_bytes(_bytes_of(source), format=format)


def import_transcript(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto", "pi", "claude-code", "codex"] = "auto",
) -> Transcript:
    """The main thread of the transcript file at ``path`` as pi messages (read-only).

    Claude Code: the ``parentUuid`` chain from the last message (sub-agent lines and abandoned
    branches left out; one API response split over several lines is one assistant message).
    Codex: the ``response_item`` history as Codex rebuilds it on resume. pi: the session's
    context at its leaf. ``read_transcript`` gives the same with the file's facts.
    """
    return read_transcript(path, format=format).messages


def import_transcript_bytes(
    data: bytes | bytearray | memoryview | BinaryIO,
    *,
    format: Literal["auto", "pi", "claude-code", "codex"] = "auto",
) -> Transcript:
    """``import_transcript`` of a transcript's bytes or binary file object (object stores)."""
    return _core.read_transcript_bytes(_bytes_of(data), format=format).messages
