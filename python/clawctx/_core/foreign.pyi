"""Foreign transcripts: Claude Code and Codex files read as pi messages (core stage ``foreign``;
public home: ``clawctx.history.foreign``).
"""

import os
from typing import Literal, final

from .transcript import Transcript

__all__ = [
    "ImportedTranscript",
    "detect_transcript_format_bytes",
    "read_transcript_bytes",
    "read_transcript_file",
]

@final
class ImportedTranscript:
    """A transcript imported from a file of any of the three formats, and the file's facts."""

    @property
    def format(self) -> Literal["pi", "claude-code", "codex"]:
        """`"pi"`, `"claude-code"` or `"codex"`."""
    @property
    def messages(self) -> Transcript:
        """The main thread as pi messages, a `Transcript`."""
    @property
    def lines(self) -> int:
        """Non-blank lines in the file."""
    @property
    def damaged_lines(self) -> int:
        """Non-blank lines that are not a JSON object (skipped), the torn last line included."""
    @property
    def torn_last_line(self) -> bool:
        """Whether the last line has no newline and is not a JSON object (a write cut short)."""
    @property
    def dropped_sidechain_lines(self) -> int:
        """Claude Code sub-agent lines (`isSidechain: true`), not part of the main thread."""
    @property
    def off_path_lines(self) -> int:
        """Claude Code main-thread lines not on the path from the leaf: abandoned branches
        (rewinds, edits) and what a compaction boundary cut off.
        """
    @property
    def compactions(self) -> int:
        """Compactions the file records (Claude `compact_boundary`/summary lines, Codex
        `compacted` lines).
        """
    @property
    def branches(self) -> int:
        """Claude Code entries with more than one child (a rewind or an edit started a branch)."""
    @property
    def model(self) -> str | None:
        """The last model that answered (Claude `message.model`, Codex `turn_context.model`)."""
    @property
    def first_timestamp(self) -> str | None:
        """The first line's timestamp, as the file writes it."""
    @property
    def last_timestamp(self) -> str | None:
        """The last line's timestamp, as the file writes it."""
    @property
    def session_id(self) -> str | None:
        """The session id the file records."""
    @property
    def cwd(self) -> str | None:
        """The working directory the file records."""
    @property
    def version(self) -> str | None:
        """The writing tool's version (Claude `version`, Codex `cli_version`)."""

def detect_transcript_format_bytes(data: bytes) -> Literal["pi", "claude-code", "codex"]:
    """The format of a transcript from its first records: `"pi"`, `"claude-code"` or `"codex"`.
    Bytes without a single complete record are Claude Code's (the only tool that leaves
    message-less files). Raises `ValueError` when no early record fits any format.
    """

def read_transcript_bytes(
    data: bytes, *, format: Literal["auto", "pi", "claude-code", "codex"] = "auto"
) -> ImportedTranscript:
    """Imports a transcript from its bytes; `format` is `"auto"` (detected), `"pi"`,
    `"claude-code"` or `"codex"`.
    """

def read_transcript_file(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto", "pi", "claude-code", "codex"] = "auto",
) -> ImportedTranscript:
    """Imports the transcript file at `path` (read-only: the file is never written)."""
