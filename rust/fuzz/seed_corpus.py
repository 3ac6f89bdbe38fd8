#!/usr/bin/env python3
"""Write the fuzz corpora (``corpus/<target>/``, not committed) from the recorded upstream cases
(``../shared/conformance``) and the real session fixtures (``../shared/fixtures``), on top of the
small committed seed set in ``seeds/<target>/``.

Usage: ``python3 rust/fuzz/seed_corpus.py [--shared PATH]`` (default: the ``shared`` folder next
to the repository, as the tests use it). Inputs longer than ``MAX_LEN`` bytes are cut at a line
end (session files) or skipped (JSON), so the fuzzers run at the ``-max_len`` the scripts pass.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MAX_LEN = 16384
TARGETS = ("session_bytes", "transcript_json", "tool_call_inputs", "token_count")
# session_bytes' first byte: bit 0 = prepend a valid header, the rest = where the bytes that a
# second writer appends start (0xFE: no header, nothing appended).
WHOLE_FILE = b"\xfe"
HALF_APPENDED = b"\x80"


def _write(corpus: Path, target: str, data: bytes) -> None:
    if not data or len(data) > MAX_LEN:
        return
    folder = corpus / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def _session_chunks(text: bytes) -> list[bytes]:
    """A long session file as pieces of at most MAX_LEN - 1 bytes, cut at line ends; the first
    keeps the header."""
    chunks, current = [], b""
    for line in text.split(b"\n"):
        line += b"\n"
        if current and len(current) + len(line) >= MAX_LEN - 1:
            chunks.append(current)
            current = b""
        current += line[: MAX_LEN - 2]
    if current:
        chunks.append(current)
    return chunks


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    return []


def seed(shared: Path, corpus: Path) -> dict[str, int]:
    if corpus.exists():
        shutil.rmtree(corpus)
    for target in TARGETS:
        for path in sorted((HERE / "seeds" / target).glob("*")):
            _write(corpus, target, path.read_bytes())
    for path in sorted((shared / "conformance").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            case = json.loads(line)
            inputs = case.get("input", {})
            if "file_text" in inputs or "file_b64" in inputs:
                raw = (
                    inputs["file_text"].encode()
                    if "file_text" in inputs
                    else base64.b64decode(inputs["file_b64"])
                )
                for chunk in _session_chunks(raw)[:2]:
                    _write(corpus, "session_bytes", WHOLE_FILE + chunk)
                    _write(corpus, "session_bytes", HALF_APPENDED + chunk)
            for key in ("messages", "entries"):
                if isinstance(inputs.get(key), list):
                    data = json.dumps(inputs[key], ensure_ascii=False).encode()
                    _write(corpus, "transcript_json", data)
                    _write(corpus, "tool_call_inputs", data)
            if isinstance(inputs.get("message"), dict):
                _write(corpus, "token_count", json.dumps(inputs["message"]).encode())
            for text in _texts(inputs)[:8]:
                _write(corpus, "token_count", text.encode()[:MAX_LEN])
    for path in sorted((shared / "fixtures" / "pi").glob("*.jsonl")):
        for chunk in _session_chunks(path.read_bytes())[:12]:
            _write(corpus, "session_bytes", WHOLE_FILE + chunk)
    return {t: len(list((corpus / t).glob("*"))) for t in TARGETS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    parser.add_argument("--corpus", type=Path, default=HERE / "corpus")
    args = parser.parse_args()
    if not (args.shared / "conformance").is_dir():
        raise SystemExit(f"no recorded cases at {args.shared / 'conformance'}")
    for target, count in seed(args.shared, args.corpus).items():
        print(f"{target}: {count} inputs")


if __name__ == "__main__":
    main()
