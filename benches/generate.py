"""Deterministic generator of realistic pi/OpenClaw v3 session files of a requested size.

    python benches/generate.py --size 100MB out.jsonl [--seed 0] [--damage]

or, from Python, ``generate_session(path, 100_000_000, seed=0, damage=False)``.

What a file holds (one coding-agent session, written as pi writes it: one compact
``JSON.stringify`` line per entry, every line ending in ``"\\n"``):

- tool loops: a user asks; assistants answer with thinking, text and 1-3 tool calls with
  realistic arguments (read, bash, edit, write, grep, web_fetch, screenshot); tool results from a
  few bytes to 200 KB: code, logs, JSON, diffs, bash output; a final assistant text ends the turn;
- base64 PNG images (100 KB-2 MB of base64, valid files built here with zlib) pasted in user
  messages and returned by the read and screenshot tools: about 15% of the file's bytes;
- CJK and emoji in user, assistant and tool text (UTF-16 lengths differ from code points);
- branches: abandoned side branches (the user rewinds to an earlier turn), most with a
  ``branch_summary`` entry; compactions where pi would make them (the context estimate reaches
  200k - 16k tokens, the most recent ~20k tokens are kept via ``firstKeptEntryId``);
- model and thinking-level changes, labels, ``custom`` entries (``openclaw.cache-ttl``),
  ``custom_message`` entries, ``session_info``, ``bashExecution`` messages;
- rare transcript defects real files have: an aborted or errored assistant, a tool result that
  was never written, a user message that arrived between a tool call and its result, a tool
  result written twice, an errored turn whose tools ran anyway, a tool name with spaces;
- with ``damage=True``: garbage lines (a torn record, invalid UTF-8, stray text), a run of NUL
  bytes in front of a record, and a torn last line without a newline.

Message text comes from the real pi sessions in ``../shared/fixtures/pi/`` when they are
present (a built-in corpus otherwise). The output is identical for the same seed, size,
options and fixture files.
"""

# The CJK sample texts use full-width punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import struct
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

PI_FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "pi"

#: pi's auto-compaction trigger: contextWindow - reserveTokens (200k window, 16,384 reserve).
DEFAULT_COMPACT_AT_TOKENS = 200_000 - 16_384
#: pi's keepRecentTokens default.
KEEP_RECENT_TOKENS = 20_000
#: Share of the file's bytes that are base64 images.
IMAGE_SHARE = 0.15
#: Base64 lengths of the images used (each is a valid PNG of that size).
IMAGE_SIZES = (100_000, 180_000, 300_000, 500_000, 800_000, 1_300_000, 2_000_000)
IMAGE_WEIGHTS = (30, 25, 16, 12, 8, 6, 3)
MAX_TOOL_OUTPUT = 200_000
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z

_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3}
_UNITS.update({"kib": 1024, "mib": 1024**2, "gib": 1024**3, "k": 1000, "m": 1000**2, "g": 1000**3})


def parse_size(text: str) -> int:
    """``"100MB"`` → 100_000_000 (decimal units; KiB/MiB/GiB are binary)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (use e.g. 1MB, 250KB, 1GB)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def format_size(n: int) -> str:
    for unit, factor in (("GB", 1000**3), ("MB", 1000**2), ("KB", 1000)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{unit}"
    return f"{n}B"


# ---- text corpus --------------------------------------------------------------------------

CJK_TEXTS = (
    "请帮我看一下这个函数为什么在大文件上这么慢，谢谢 🙏",
    "这个错误信息是什么意思？“会话文件已损坏，无法解析第 42 行”",
    "ファイルを読み込むときにメモリが足りなくなります。ストリーミングで処理できますか？",
    "テストが全部通りました ✅ 次はドキュメントを更新してください。",
    "이 커밋을 되돌리고 다시 시도해 주세요. 빌드가 깨졌어요 😅",
    "用 Rust 重写解析器之后，速度提升了大约二十倍 🚀🚀",
    "日志里有很多“超时”错误，能不能把重试次数调高一点？",
    "𠮷野家のメニューを表示するページで文字化けが発生しています 🍜",
)
EMOJI = ("✅", "🚀", "👍", "🔥", "🐛", "📦", "⚠️", "🎉", "🤔", "😅", "🧪", "📝", "👀", "💡")

FALLBACK_USER = (
    "read src/session.ts and explain how the leaf is chosen when the file has branches",
    "the tests in packages/agent are failing after the last refactor, can you fix them?",
    "add a --json flag to the inspect command and print the token estimate by role",
    "ok, that works. now make the repair streaming so it does not load the whole file",
    "why is the context builder slow on a 100 MB session? profile it first",
    "commit this with a good message and push",
)
FALLBACK_ASSISTANT = (
    "I'll start by reading the relevant files to understand the current structure.",
    "The failure comes from the pairing repair: results that arrive after a user message are "
    "treated as orphans. I'll move them up to their assistant turn instead.",
    "Done. The parser now streams the file line by line and keeps only byte offsets in memory.",
    "All tests pass. Summary of the changes:\n\n1. `session.ts`: build the index once\n"
    "2. `repair.ts`: stream lines\n3. tests for torn last lines",
)
FALLBACK_CODE = """import { readFileSync } from "fs";
import { join } from "path";

export interface SessionEntry {
\ttype: string;
\tid: string;
\tparentId: string | null;
\ttimestamp: string;
}

export function loadEntries(path: string): SessionEntry[] {
\tconst text = readFileSync(path, "utf8");
\tconst entries: SessionEntry[] = [];
\tfor (const line of text.trim().split("\\n")) {
\t\tif (!line.trim()) continue;
\t\ttry {
\t\t\tentries.push(JSON.parse(line));
\t\t} catch {
\t\t\t// skip malformed lines
\t\t}
\t}
\treturn entries;
}

export function buildIndex(entries: SessionEntry[]): Map<string, SessionEntry> {
\tconst byId = new Map<string, SessionEntry>();
\tfor (const entry of entries) byId.set(entry.id, entry);
\treturn byId;
}
"""
FALLBACK_SUMMARY = """# Context Checkpoint

## Goal
Make session loading fast on large files and keep the transcript valid for every provider.

## Progress
- [x] Streaming parser for JSONL session files
- [x] Pairing repair of tool calls and results
- [ ] Incremental reload after appends

## Key Decisions
1. Keep messages as raw JSON text; build dicts only when asked.
2. Never drop a damaged line silently: salvage what can be read and report the rest.

## Files
- src/session.ts (modified)
- src/repair.ts (modified)
- test/session.test.ts (new)
"""
SOURCE_DIRS = ("src", "src/core", "src/tui", "packages/agent/src", "packages/ai/src", "test")
SOURCE_NAMES = (
    "session-manager.ts",
    "agent-loop.ts",
    "compaction.ts",
    "messages.ts",
    "main.ts",
    "tui-renderer.ts",
    "settings.ts",
    "repair.ts",
    "tools.ts",
    "index.ts",
    "utils.py",
)
LOG_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")
LOG_MESSAGES = (
    "request completed status=200 duration_ms={n}",
    "cache miss key=session:{h} size={n}",
    "retrying provider call attempt={d} reason=overloaded_error",
    "compaction finished tokens_before={n} tokens_after={d}000",
    "wrote {n} bytes to transcript",
    "tool exec finished name=bash exit_code=0 duration_ms={n}",
    "用户会话已保存 id={h} 🚀",
    "heartbeat ok ✅ latency_ms={d}",
)


@dataclass
class Corpus:
    user: list[str] = field(default_factory=list)
    assistant: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    bash_output: list[str] = field(default_factory=list)
    bash_commands: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    edits: list[tuple[str, str]] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    from_fixtures: bool = False


def load_corpus(fixtures: Path | None = PI_FIXTURES) -> Corpus:
    """Message text of the real pi sessions in ``fixtures`` (a built-in corpus if absent)."""
    corpus = Corpus()
    files = sorted(fixtures.glob("*.jsonl")) if fixtures is not None and fixtures.is_dir() else []
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            if entry.get("type") == "compaction" and isinstance(entry.get("summary"), str):
                corpus.summaries.append(entry["summary"])
            message = entry.get("message")
            if entry.get("type") != "message" or not isinstance(message, dict):
                continue
            _collect(message, corpus)
    corpus.from_fixtures = bool(corpus.user and corpus.code)
    if not corpus.user:
        corpus.user = list(FALLBACK_USER)
    if not corpus.assistant:
        corpus.assistant = list(FALLBACK_ASSISTANT)
    if not corpus.thinking:
        corpus.thinking = list(corpus.assistant)
    if not corpus.code:
        corpus.code = [FALLBACK_CODE]
    if not corpus.bash_output:
        corpus.bash_output = ["total 48\ndrwxr-xr-x  8 dev dev 4096 Jan  1 00:00 src\n"]
    if not corpus.bash_commands:
        corpus.bash_commands = ["ls -la", "npm test", "git status", "cargo build --release"]
    if not corpus.paths:
        corpus.paths = [f"/home/dev/project/{d}/{n}" for d in SOURCE_DIRS for n in SOURCE_NAMES]
    if not corpus.edits:
        corpus.edits = [("return entries;", "return entries.filter(Boolean);")]
    if not corpus.summaries:
        corpus.summaries = [FALLBACK_SUMMARY]
    return corpus


def _collect(message: dict[str, Any], corpus: Corpus) -> None:
    role = message.get("role")
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    texts = [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
    if role == "user":
        corpus.user.extend(t for t in texts if t.strip())
        if isinstance(content, str) and content.strip():
            corpus.user.append(content)
    elif role == "assistant":
        corpus.assistant.extend(t for t in texts if t.strip())
        for b in blocks:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "thinking" and isinstance(b.get("thinking"), str):
                corpus.thinking.append(b["thinking"])
            args = b.get("arguments")
            if b.get("type") != "toolCall" or not isinstance(args, dict):
                continue
            if isinstance(args.get("path"), str):
                corpus.paths.append(args["path"])
            if isinstance(args.get("command"), str):
                corpus.bash_commands.append(args["command"])
            if isinstance(args.get("oldText"), str) and isinstance(args.get("newText"), str):
                corpus.edits.append((args["oldText"], args["newText"]))
    elif role == "toolResult":
        text = "\n".join(texts)
        if message.get("toolName") == "read" and len(text) > 200:
            corpus.code.append(text)
        elif message.get("toolName") == "bash" and text:
            corpus.bash_output.append(text)
    elif role == "bashExecution" and isinstance(message.get("output"), str):
        corpus.bash_output.append(message["output"])


class TextPool:
    """A long text to cut slices of any length from, starting at line boundaries."""

    def __init__(self, parts: list[str], minimum: int = 2 * MAX_TOOL_OUTPUT) -> None:
        text = "\n".join(p.rstrip("\n") for p in parts) + "\n"
        while len(text) < minimum:
            text += text
        self.text = text + text  # any slice of length <= len(text) is contiguous

    def take(self, rng: random.Random, length: int) -> str:
        half = len(self.text) // 2
        start = rng.randrange(half)
        newline = self.text.find("\n", start, start + 200)
        if newline >= 0:
            start = newline + 1
        return self.text[start : start + min(length, half)]


def _log_pool(rng: random.Random) -> TextPool:
    lines = []
    ms = START_MS
    for i in range(12_000):
        ms += rng.randrange(1, 900)
        stamp = _iso(ms)
        message = rng.choice(LOG_MESSAGES).format(
            n=rng.randrange(1, 100_000), d=rng.randrange(1, 9), h=f"{rng.getrandbits(32):08x}"
        )
        lines.append(f"{stamp} {rng.choice(LOG_LEVELS):5} [worker-{i % 4}] {message}")
        if i % 997 == 13:
            lines.append("Error: ENOENT: no such file or directory, open '/tmp/x.json'")
            lines.extend(f"    at Object.openSync (node:fs:{600 + k}:3)" for k in range(6))
    return TextPool(lines)


def _json_pool(rng: random.Random) -> TextPool:
    records = []
    for i in range(1500):
        records.append(
            {
                "id": f"{rng.getrandbits(48):012x}",
                "name": rng.choice(SOURCE_NAMES),
                "size": rng.randrange(0, 10**6),
                "tags": rng.sample(["core", "tui", "ai", "agent", "test", "docs", "ci"], 3),
                "owner": {"login": rng.choice(["badlogic", "dev", "octocat", "李雷"]), "id": i},
                "description": rng.choice(FALLBACK_ASSISTANT)[:120],
                "draft": rng.random() < 0.2,
            }
        )
    return TextPool([json.dumps(records, indent=2, ensure_ascii=False)])


def _diff_pool(rng: random.Random, code: TextPool) -> TextPool:
    hunks = []
    for _ in range(400):
        name = f"{rng.choice(SOURCE_DIRS)}/{rng.choice(SOURCE_NAMES)}"
        lines = code.take(rng, 1200).splitlines()[:30]
        start = rng.randrange(1, 900)
        hunks.append(
            f"diff --git a/{name} b/{name}\nindex {rng.getrandbits(28):07x}..{rng.getrandbits(28):07x} 100644"
        )
        hunks.append(
            f"--- a/{name}\n+++ b/{name}\n@@ -{start},{len(lines)} +{start},{len(lines) + 1} @@"
        )
        for k, line in enumerate(lines):
            mark = "-" if k % 7 == 3 else "+" if k % 7 == 4 else " "
            hunks.append(mark + line)
        hunks.append("+\t// " + rng.choice(EMOJI) + " handled")
    return TextPool(hunks)


# ---- images -------------------------------------------------------------------------------


def png_of_size(rng: random.Random, base64_length: int, width: int = 256) -> bytes:
    """A valid RGB PNG (noise pixels, stored zlib blocks) whose base64 text is about
    ``base64_length`` characters."""
    target = base64_length * 3 // 4
    row = 1 + 3 * width
    # PNG and zlib framing: ~70 bytes, plus 5 bytes per stored 64 KiB deflate block.
    height = max(1, int((target - 70) / (row * (1 + 5 / 65535))))
    pixels = rng.randbytes(3 * width * height)
    raw = b"".join(b"\x00" + pixels[y * 3 * width : (y + 1) * 3 * width] for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw, 0))
        + chunk(b"IEND", b"")
    )


# ---- the generator ------------------------------------------------------------------------


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


MODELS = (
    ("anthropic", "claude-sonnet-4-5", "anthropic-messages", "toolu_"),
    ("anthropic", "claude-opus-4-5", "anthropic-messages", "toolu_"),
    ("openai", "gpt-5", "openai-responses", "call_"),
    ("google", "gemini-2.5-pro", "google-generative-ai", "call_"),
)
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high")
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


@dataclass
class GeneratedSession:
    """What was written."""

    path: Path
    #: The size asked for.
    target: int
    #: The size written (the generator stops at the first turn boundary past the target).
    size: int
    lines: int
    seed: int
    leaf_id: str
    counts: dict[str, int]
    damaged: bool
    #: Entries on the root→leaf path (the generator's own view).
    path_length: int = 0


@dataclass
class _PathNode:
    id: str
    tokens: int  # pi's chars/4 estimate of what the entry adds to the context
    kind: str  # "user", "turn_end", "compaction" or "other"


class SessionGenerator:
    """Writes entries one turn at a time through ``write(line_bytes)``."""

    def __init__(
        self,
        write: Callable[[bytes], None],
        *,
        seed: int = 0,
        target_size: int = 10_000_000,
        corpus: Corpus | None = None,
        compact_at_tokens: int | None = DEFAULT_COMPACT_AT_TOKENS,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        self.write_raw = write
        self.rng = random.Random(seed)
        self.corpus = corpus if corpus is not None else load_corpus()
        self.target = target_size
        self.compact_at = compact_at_tokens
        self.id_factory = id_factory
        self.used_ids: set[str] = set()
        self.now_ms = START_MS
        self.written = 0
        self.lines = 0
        self.image_bytes = 0
        self.leaf: str | None = None
        self.path: list[_PathNode] = []
        self.counts: dict[str, int] = {}
        self.model = MODELS[0]
        self.thinking_level = "medium"
        self.context_tokens = 0
        self.pending_prefix = b""
        self.max_output = max(200, min(MAX_TOOL_OUTPUT, target_size // 8))
        pool_rng = random.Random(seed ^ 0x5EED)
        self.code = TextPool(self.corpus.code)
        self.bash = TextPool(self.corpus.bash_output)
        self.logs = _log_pool(pool_rng)
        self.json = _json_pool(pool_rng)
        self.diffs = _diff_pool(pool_rng, self.code)
        self.images = self._image_pool(pool_rng)

    # -- basics

    def _image_pool(self, rng: random.Random) -> list[str]:
        cap = max(IMAGE_SIZES[0], self.target // 8)
        sizes = [s for s in IMAGE_SIZES if s <= cap] or [IMAGE_SIZES[0]]
        return [base64.b64encode(png_of_size(rng, s)).decode("ascii") for s in sizes]

    def new_id(self) -> str:
        if self.id_factory is not None:
            return self.id_factory()
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.used_ids:
                self.used_ids.add(candidate)
                return candidate

    def tick(self, low: int = 200, high: int = 30_000) -> int:
        self.now_ms += self.rng.randrange(low, high)
        return self.now_ms

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def write_line(self, obj: dict[str, Any]) -> None:
        line = self.pending_prefix + orjson.dumps(obj) + b"\n"
        self.pending_prefix = b""
        self.write_raw(line)
        self.written += len(line)
        self.lines += 1

    def entry(
        self, type_: str, fields: dict[str, Any], *, tokens: int = 0, kind: str = "other"
    ) -> str:
        entry_id = self.new_id()
        obj = {
            "type": type_,
            "id": entry_id,
            "parentId": self.leaf,
            "timestamp": _iso(self.tick(50, 2000)),
        }
        obj.update(fields)
        self.write_line(obj)
        self.leaf = entry_id
        self.path.append(_PathNode(entry_id, tokens, kind))
        self.context_tokens += tokens
        self.count(type_ if type_ != "message" else "message:" + fields["message"]["role"])
        return entry_id

    def message(self, message: dict[str, Any], *, kind: str = "other") -> str:
        message.setdefault("timestamp", self.now_ms)
        tokens = _rough_tokens(message)
        return self.entry("message", {"message": message}, tokens=tokens, kind=kind)

    # -- content

    def sprinkle(self, text: str, rate: float = 0.15) -> str:
        r = self.rng.random()
        if r < rate / 2:
            return text + " " + self.rng.choice(EMOJI)
        if r < rate:
            return self.rng.choice(CJK_TEXTS) + "\n\n" + text
        return text

    def want_image(self) -> bool:
        return self.image_bytes < IMAGE_SHARE * self.written

    def image_block(self) -> dict[str, Any]:
        data = self.rng.choices(self.images, weights=IMAGE_WEIGHTS[: len(self.images)])[0]
        self.image_bytes += len(data)
        self.count("images")
        return {"type": "image", "data": data, "mimeType": "image/png"}

    def output_length(self) -> int:
        r = self.rng.random()
        if r < 0.55:
            n = int(10 ** self.rng.uniform(1, 2.7))  # 10-500 B
        elif r < 0.85:
            n = int(10 ** self.rng.uniform(2.7, 3.7))  # 0.5-5 KB
        elif r < 0.985:
            n = int(10 ** self.rng.uniform(3.7, 4.7))  # 5-50 KB
        else:
            n = self.rng.randrange(50_000, MAX_TOOL_OUTPUT + 1)
        return min(n, self.max_output)

    def path_name(self) -> str:
        return self.rng.choice(self.corpus.paths)

    def tool_call(
        self,
    ) -> tuple[dict[str, Any], Callable[[], tuple[list[dict[str, Any]], dict[str, Any] | None]]]:
        """A tool call block and a function producing its result content (and details)."""
        rng = self.rng
        prefix = self.model[3]
        call_id = prefix + "".join(rng.choice(B62) for _ in range(24))
        r = rng.random()
        if r < 0.30:
            name = "read"
            path = self.path_name()
            args: dict[str, Any] = {"path": path}
            if rng.random() < 0.3:
                args.update(offset=rng.randrange(1, 2000), limit=rng.choice((100, 200, 500)))
            if self.want_image() and rng.random() < 0.5:
                args["path"] = path.rsplit("/", 1)[0] + "/screenshot.png"

                def result() -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
                    if not self.want_image():
                        return [{"type": "text", "text": "Error: file not found"}], None
                    return [
                        {"type": "text", "text": "Read image file [image/png]"},
                        self.image_block(),
                    ], None
            else:

                def result() -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
                    return [
                        {"type": "text", "text": self.code.take(rng, self.output_length())}
                    ], None

        elif r < 0.62:
            name = "bash"
            command = rng.choice(self.corpus.bash_commands)
            args = {"command": command}
            if rng.random() < 0.3:
                args["timeout"] = rng.choice((30, 60, 120, 600))
            source = rng.choice((self.bash, self.logs, self.logs, self.diffs, self.json))

            def result() -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
                n = self.output_length()
                text = "(no output)" if n < 12 else source.take(rng, n)
                return [{"type": "text", "text": text}], None

        elif r < 0.80:
            name = "edit"
            old, new = rng.choice(self.corpus.edits)
            path = self.path_name()
            args = {"path": path, "oldText": old, "newText": self.sprinkle(new, 0.05)}

            def result() -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
                diff = "\n".join(
                    ["-" + line for line in old.splitlines()[:40]]
                    + ["+" + line for line in new.splitlines()[:40]]
                )
                text = f"Successfully replaced text in {path}."
                return [{"type": "text", "text": text}], {
                    "diff": diff,
                    "firstChangedLine": rng.randrange(1, 900),
                }

        elif r < 0.85:
            name = "write"
            path = self.path_name()
            content = self.code.take(rng, min(self.output_length() * 2, self.max_output))
            args = {"path": path, "content": content}

            def result() -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
                return [
                    {
                        "type": "text",
                        "text": f"Successfully wrote {len(content.encode())} bytes to {path}",
                    }
                ], None

        elif r < 0.92:
            name = "grep"
            args = {
                "pattern": rng.choice(
                    ("buildSessionContext", "TODO", "firstKeptEntryId", "会话", "parentId")
                ),
                "path": ".",
            }

            def result() -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
                lines = self.code.take(rng, self.output_length()).splitlines()
                text = "\n".join(
                    f"{self.path_name()}:{rng.randrange(1, 999)}: {line}" for line in lines
                )
                return [{"type": "text", "text": text or "No matches found"}], None

        elif r < 0.97:
            name = "web_fetch"
            args = {
                "url": f"https://api.github.com/repos/badlogic/pi-mono/issues?page={rng.randrange(1, 40)}"
            }

            def result() -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
                return [{"type": "text", "text": self.json.take(rng, self.output_length())}], None

        else:
            name = "screenshot"
            args = {"url": "http://localhost:5173/", "fullPage": rng.random() < 0.5}

            def result() -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
                if not self.want_image():
                    return [
                        {
                            "type": "text",
                            "text": f"Screenshot saved to /tmp/shot-{rng.randrange(10**6)}.png",
                        }
                    ], None
                return [
                    {"type": "text", "text": "Screenshot of http://localhost:5173/"},
                    self.image_block(),
                ], None

        return {"type": "toolCall", "id": call_id, "name": name, "arguments": args}, result

    def assistant(
        self, blocks: list[dict[str, Any]], stop_reason: str, **extra: Any
    ) -> dict[str, Any]:
        provider, model, api, _ = self.model
        out_tokens = max(1, sum(len(orjson.dumps(b)) for b in blocks) // 4)
        cache_read = self.rng.randrange(0, max(1, self.context_tokens))
        usage = {
            "input": max(1, self.context_tokens - cache_read),
            "output": out_tokens,
            "cacheRead": cache_read,
            "cacheWrite": self.rng.randrange(0, 4000),
        }
        usage["totalTokens"] = sum(usage.values())
        usage["cost"] = {
            "input": usage["input"] * 3e-6,
            "output": out_tokens * 1.5e-5,
            "cacheRead": cache_read * 3e-7,
            "cacheWrite": usage["cacheWrite"] * 3.75e-6,
        }
        usage["cost"]["total"] = sum(usage["cost"].values())
        message = {
            "role": "assistant",
            "content": blocks,
            "api": api,
            "provider": provider,
            "model": model,
            "usage": usage,
            "stopReason": stop_reason,
            "timestamp": self.tick(500, 40_000),
        }
        message.update(extra)
        return message

    def thinking_block(self) -> dict[str, Any]:
        text = self.rng.choice(self.corpus.thinking)
        signature = base64.b64encode(self.rng.randbytes(self.rng.randrange(150, 700))).decode()
        return {"type": "thinking", "thinking": text, "thinkingSignature": signature}

    def user(self) -> str:
        text = self.sprinkle(self.rng.choice(self.corpus.user), 0.2)
        if self.rng.random() < 0.5:
            content: Any = [{"type": "text", "text": text}]
        else:
            content = text
        if self.want_image() and self.rng.random() < 0.3:
            content = [{"type": "text", "text": text}, self.image_block()]
        return self.message(
            {"role": "user", "content": content, "timestamp": self.tick()}, kind="user"
        )

    # -- one turn

    def turn(self) -> None:
        """A user request and the agent's tool loop until its final answer, with the
        bookkeeping entries and rare defects real sessions have."""
        rng = self.rng
        self.maybe_bookkeeping()
        self.user()
        steps = min(12, int(rng.expovariate(1 / 2.5)) + 1)
        for _ in range(steps):
            blocks: list[dict[str, Any]] = []
            if self.thinking_level != "off" and rng.random() < 0.7:
                blocks.append(self.thinking_block())
            if rng.random() < 0.6:
                blocks.append(
                    {"type": "text", "text": self.sprinkle(rng.choice(self.corpus.assistant), 0.1)}
                )
            calls = [self.tool_call() for _ in range(rng.choice((1, 1, 1, 2, 2, 3)))]
            blocks.extend(c for c, _ in calls)
            defect = rng.random()
            if defect < 0.012:
                # Aborted by the user while the tools were being called: no results follow.
                self.message(self.assistant(blocks, "aborted", errorMessage="Request was aborted"))
                self.count("defect:aborted")
                self.message(
                    {"role": "user", "content": "continue", "timestamp": self.tick()}, kind="user"
                )
                continue
            if defect < 0.02:
                self.message(
                    self.assistant([], "error", errorMessage='529 {"type":"overloaded_error"}')
                )
                self.count("defect:error")
                continue
            # The stream failed after the tool calls were emitted, and the tools ran anyway.
            errored_with_results = 0.035 <= defect < 0.039
            if errored_with_results:
                self.count("defect:errored_with_results")
            stop_reason = "error" if errored_with_results else "toolUse"
            self.message(self.assistant(blocks, stop_reason))
            results = []
            for call, make in calls:
                content, details = make()
                result = {
                    "role": "toolResult",
                    "toolCallId": call["id"],
                    "toolName": call["name"],
                    "content": content,
                    "isError": rng.random() < 0.04,
                    "timestamp": self.tick(50, 20_000),
                }
                if details is not None:
                    result["details"] = details
                results.append(result)
            if defect < 0.027:
                results.pop()  # the process died before the result was written
                self.count("defect:missing_result")
            elif defect < 0.032:
                # A steering message arrived while the tools ran.
                self.message(
                    {
                        "role": "user",
                        "content": "also check the tests please",
                        "timestamp": self.tick(),
                    },
                    kind="user",
                )
                self.count("defect:interleaved_user")
            elif defect < 0.035:
                results.append(dict(results[0]))
                self.count("defect:duplicate_result")
            elif 0.039 <= defect < 0.041:
                results[0]["toolName"] = f" {results[0]['toolName']} "
                self.count("defect:padded_tool_name")
            for result in results:
                self.message(result)
        blocks = []
        if self.thinking_level != "off" and rng.random() < 0.5:
            blocks.append(self.thinking_block())
        blocks.append(
            {"type": "text", "text": self.sprinkle(rng.choice(self.corpus.assistant), 0.15)}
        )
        self.message(self.assistant(blocks, "stop"), kind="turn_end")
        if rng.random() < 0.35:
            provider, model = self.model[0], self.model[1]
            self.entry(
                "custom",
                {
                    "customType": "openclaw.cache-ttl",
                    "data": {"timestamp": self.now_ms, "provider": provider, "modelId": model},
                },
            )
        self.path[-1].kind = "turn_end"

    def maybe_bookkeeping(self) -> None:
        rng = self.rng
        r = rng.random()
        if r < 0.02:
            self.model = rng.choice(MODELS)
            self.entry("model_change", {"provider": self.model[0], "modelId": self.model[1]})
        elif r < 0.04:
            self.thinking_level = rng.choice(THINKING_LEVELS)
            self.entry("thinking_level_change", {"thinkingLevel": self.thinking_level})
        elif r < 0.05 and len(self.path) > 3:
            target = rng.choice(self.path).id
            self.entry(
                "label",
                {
                    "targetId": target,
                    "label": rng.choice(("checkpoint", "before refactor", "good state ✅", "")),
                },
            )
        elif r < 0.07:
            text = rng.choice(
                (
                    "Remember: run the tests before committing.",
                    "The user is on a metered connection.",
                    "会话将在 5 分钟后超时。",
                )
            )
            self.entry(
                "custom_message",
                {"customType": "openclaw.reminder", "content": text, "display": rng.random() < 0.5},
                tokens=len(text) // 4,
            )
        elif r < 0.09:
            output = self.bash.take(rng, self.output_length())
            self.message(
                {
                    "role": "bashExecution",
                    "command": rng.choice(self.corpus.bash_commands),
                    "output": output,
                    "exitCode": rng.choice((0, 0, 0, 1)),
                    "cancelled": False,
                    "truncated": False,
                    "timestamp": self.tick(),
                    **({"excludeFromContext": True} if rng.random() < 0.2 else {}),
                }
            )

    # -- branches and compactions

    def branch_back(self) -> None:
        """The user rewinds to the end of an earlier turn: what came after stays in the file as
        an abandoned side branch; most rewinds leave a branch summary."""
        ends = [i for i, node in enumerate(self.path) if node.kind == "turn_end"][-6:-1]
        if not ends:
            return
        cut = self.rng.choice(ends)
        abandoned = len(self.path) - cut - 1
        del self.path[cut + 1 :]
        self.leaf = self.path[-1].id
        self.recompute_context_tokens()
        self.count("abandoned_entries", abandoned)
        if self.rng.random() < 0.7:
            summary = (
                "The user explored an alternative approach: "
                + self.rng.choice(self.corpus.assistant)[:1500]
            )
            self.entry(
                "branch_summary",
                {"fromId": self.leaf, "summary": summary},
                tokens=len(summary) // 4,
            )

    def recompute_context_tokens(self) -> None:
        start = 0
        for i in range(len(self.path) - 1, -1, -1):
            if self.path[i].kind == "compaction":
                start = i
                break
        self.context_tokens = sum(node.tokens for node in self.path[start:])

    def compact(self) -> None:
        """A compaction as pi makes it: the summary replaces everything before the first kept
        entry, a user turn start with at least ~20k tokens after it."""
        kept = 0
        first_kept = None
        for i in range(len(self.path) - 1, -1, -1):
            node = self.path[i]
            if node.kind == "compaction":
                break
            kept += node.tokens
            if node.kind == "user" and kept >= KEEP_RECENT_TOKENS:
                first_kept = i
                break
        if first_kept is None:
            return
        summary = self.rng.choice(self.corpus.summaries)
        details = {
            "readFiles": sorted({self.path_name() for _ in range(6)}),
            "modifiedFiles": sorted({self.path_name() for _ in range(3)}),
        }
        before = self.context_tokens
        self.entry(
            "compaction",
            {
                "summary": summary,
                "firstKeptEntryId": self.path[first_kept].id,
                "tokensBefore": before,
                "details": details,
            },
            tokens=len(summary) // 4,
            kind="compaction",
        )
        # The context now holds the summary and the kept entries.
        self.path[-1].tokens = len(summary) // 4 + kept
        self.context_tokens = self.path[-1].tokens

    def step(self) -> None:
        """One turn, preceded now and then by a branch or followed by a compaction."""
        if len(self.path) > 40 and self.rng.random() < 0.03:
            self.branch_back()
        self.turn()
        if self.compact_at is not None and self.context_tokens >= self.compact_at:
            self.compact()

    def header(self, session_id: str, cwd: str = "/home/dev/project") -> None:
        self.write_line(
            {
                "type": "session",
                "version": 3,
                "id": session_id,
                "timestamp": _iso(self.now_ms),
                "cwd": cwd,
            }
        )
        self.entry("model_change", {"provider": self.model[0], "modelId": self.model[1]})
        self.entry("thinking_level_change", {"thinkingLevel": self.thinking_level})
        self.entry("session_info", {"name": "refactor session loading"})


def _rough_tokens(message: dict[str, Any]) -> int:
    """pi's estimate, roughly (for compaction timing only)."""
    content = message.get("content")
    if isinstance(content, str):
        return len(content) // 4
    if message.get("role") == "bashExecution":
        return (len(message.get("command", "")) + len(message.get("output", ""))) // 4
    total = 0
    for block in content or []:
        kind = block.get("type")
        if kind == "image":
            total += 1200
        elif kind == "text":
            total += len(block["text"]) // 4
        elif kind == "thinking":
            total += len(block["thinking"]) // 4
        elif kind == "toolCall":
            total += len(orjson.dumps(block["arguments"])) // 4
    return total


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def generate_session(
    path: str | Path,
    size: int | str,
    *,
    seed: int = 0,
    damage: bool = False,
    fixtures: Path | None = PI_FIXTURES,
    compact_at_tokens: int | None = DEFAULT_COMPACT_AT_TOKENS,
) -> GeneratedSession:
    """Writes a session of at least ``size`` bytes (it ends at the first turn boundary after
    that) to ``path``. ``compact_at_tokens=None`` disables compactions."""
    path = Path(path)
    target = parse_size(size) if isinstance(size, str) else int(size)
    corpus = load_corpus(fixtures)
    with path.open("wb", buffering=1 << 20) as out:
        gen = SessionGenerator(
            out.write,
            seed=seed,
            target_size=target,
            corpus=corpus,
            compact_at_tokens=compact_at_tokens,
        )
        gen.header(_uuid(gen.rng))
        damage_plan = _damage_plan(gen.rng, target) if damage else []
        # Damage goes in at its planned offset; every damage is followed by a turn.
        while gen.written < target or damage_plan:
            while damage_plan and (gen.written >= damage_plan[0][0] or gen.written >= target):
                _damage(gen, damage_plan.pop(0)[1])
            gen.step()
        if damage:
            _damage(gen, "torn_last_line")
    counts = dict(sorted(gen.counts.items()))
    return GeneratedSession(
        path=path,
        target=target,
        size=path.stat().st_size,
        lines=gen.lines,
        seed=seed,
        leaf_id=gen.leaf or "",
        counts=counts,
        damaged=damage,
        path_length=len(gen.path),
    )


def _damage_plan(rng: random.Random, target: int) -> list[tuple[int, str]]:
    plan = [
        (int(target * 0.25), "torn_record"),
        (int(target * 0.45), "invalid_utf8"),
        (int(target * 0.6), "nul_run"),
        (int(target * 0.75), "stray_text"),
    ]
    return sorted(plan)


def _damage(gen: SessionGenerator, kind: str) -> None:
    """Damage as crashes, disks and people leave it."""
    rng = gen.rng
    gen.count("damage:" + kind)
    if kind == "nul_run":
        # A crash left a hole of zeros; the next record was appended right after it.
        gen.pending_prefix = b"\x00" * rng.choice((512, 4096))
        return
    probe = orjson.dumps(
        {
            "type": "message",
            "id": "deadbeef",
            "parentId": gen.leaf,
            "timestamp": _iso(gen.now_ms),
            "message": {
                "role": "toolResult",
                "toolCallId": "toolu_lost",
                "toolName": "bash",
                "content": [{"type": "text", "text": gen.logs.take(rng, 3000)}],
                "isError": False,
            },
        }
    )
    if kind == "torn_record":
        data = probe[: len(probe) * 2 // 3] + b"\n"
    elif kind == "invalid_utf8":
        data = bytes(b for b in rng.randbytes(300) if b != 0x0A) + b"\xff\xfe\n"
    elif kind == "stray_text":
        data = b"Error: ENOSPC: no space left on device, write\n"
    elif kind == "torn_last_line":
        data = probe[: len(probe) // 2]
    else:
        raise ValueError(kind)
    gen.write_raw(data)
    gen.written += len(data)
    gen.lines += 1


class TurnAppender:
    """Appends realistic turns to an existing session file as another writer would (one
    complete line per entry), continuing from ``leaf_id``. Ids are ``z0000001``, ... so they
    never collide with the generator's hex ids."""

    def __init__(
        self, path: str | Path, leaf_id: str, *, seed: int = 1, fixtures: Path | None = PI_FIXTURES
    ) -> None:
        self.path = Path(path)
        self.buffer: list[bytes] = []
        counter = iter(range(1, 1 << 28))
        self.gen = SessionGenerator(
            self.buffer.append,
            seed=seed,
            target_size=1_000_000,
            corpus=load_corpus(fixtures),
            compact_at_tokens=None,
            id_factory=lambda: f"z{next(counter):07x}",
        )
        self.gen.leaf = leaf_id
        self.gen.now_ms = START_MS + 400 * 86_400_000

    def append_turn(self) -> int:
        """Appends one turn (user, tool loop, final answer); returns the bytes appended."""
        self.buffer.clear()
        self.gen.turn()
        data = b"".join(self.buffer)
        with self.path.open("ab") as out:
            out.write(data)
        return len(data)

    @property
    def leaf_id(self) -> str:
        return self.gen.leaf or ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="output .jsonl path")
    parser.add_argument("--size", default="10MB", help="target size, e.g. 1MB, 100MB, 1GB")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--damage", action="store_true", help="add garbage lines, a NUL run and a torn last line"
    )
    parser.add_argument(
        "--no-compaction", action="store_true", help="never compact (one ever-growing context)"
    )
    parser.add_argument(
        "--fixtures", type=Path, default=PI_FIXTURES, help="directory of real pi sessions"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    info = generate_session(
        args.out,
        parse_size(args.size),
        seed=args.seed,
        damage=args.damage,
        fixtures=args.fixtures,
        compact_at_tokens=None if args.no_compaction else DEFAULT_COMPACT_AT_TOKENS,
    )
    elapsed = time.perf_counter() - started
    print(
        f"wrote {info.path}: {info.size:,} bytes, {info.lines:,} lines, leaf {info.leaf_id} "
        f"({elapsed:.1f} s)",
        file=sys.stderr,
    )
    print(json.dumps(info.counts, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
