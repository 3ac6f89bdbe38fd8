"""Workspace bootstrap files and their Project Context budgets (OpenClaw 2026.3.13 `src/agents/workspace.ts`,
``loadWorkspaceBootstrapFiles``; `src/agents/pi-embedded-helpers/bootstrap.ts`,
``buildBootstrapContextFiles``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawctx.prompt import (
    BootstrapBudgetAnalysis,
    BootstrapInjectionStat,
    analyze_bootstrap_budget,
    build_bootstrap_injection_stats,
    build_bootstrap_prompt_warning,
    build_bootstrap_truncation_report_meta,
    build_bootstrap_truncation_signature,
    format_bootstrap_truncation_warning_lines,
    resolve_bootstrap_prompt_truncation_warning_mode,
    resolve_bootstrap_warning_signatures_seen,
)
from clawctx.prompt.system_prompt import ContextFile, SystemPromptParams, build_system_prompt
from clawctx.prompt.workspace import (
    DEFAULT_BOOTSTRAP_MAX_CHARS,
    DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS,
    MEMORY_BOOTSTRAP_FILE_NAMES,
    MIN_BOOTSTRAP_FILE_BUDGET_CHARS,
    SUBAGENT_BOOTSTRAP_ALLOWLIST,
    WORKSPACE_BOOTSTRAP_FILE_NAMES,
    WorkspaceBootstrapFile,
    build_bootstrap_context_files,
    load_workspace_bootstrap_files,
    trim_bootstrap_content,
    utf16_length,
)

needs_symlinks = pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges")


def present(name: str, content: str, path: str | None = None) -> WorkspaceBootstrapFile:
    return WorkspaceBootstrapFile(
        name=name, path=path or f"/ws/{name}", content=content, missing=False
    )


def absent(name: str) -> WorkspaceBootstrapFile:
    return WorkspaceBootstrapFile(name=name, path=f"/ws/{name}", content=None, missing=True)


# ---------------------------------------------------------------------------------------------
# truncation (pi-embedded-helpers/bootstrap.ts: trimBootstrapContent)
# ---------------------------------------------------------------------------------------------


def test_8_6_09_bootstrap_truncation() -> None:
    result = trim_bootstrap_content("a" * 250, "AGENTS.md", 100)
    assert result.content == (
        "a" * 70
        + "\n\n[...truncated, read AGENTS.md for full content...]\n"
        + "…(truncated AGENTS.md: kept 70+20 chars of 250)…\n\n"
        + "a" * 20
    )
    assert result.truncated
    assert (result.original_length, result.kept_head, result.kept_tail) == (250, 70, 20)
    [built] = build_bootstrap_context_files([present("AGENTS.md", "a" * 250)], max_chars=100)
    assert built == ContextFile(path="/ws/AGENTS.md", content=result.content)


def test_trim_keeps_head_and_tail_in_place() -> None:
    content = "H" * 10 + "m" * 80 + "T" * 10 + "  \n\t\u3000"
    result = trim_bootstrap_content(content, "SOUL.md", 50)
    head, _, tail = result.content.partition("\n\n[...truncated")
    assert head == "H" * 10 + "m" * 25
    assert result.content.endswith("…\n\n" + "T" * 10)
    assert "kept 35+10 chars of 100)" in result.content  # length after right-trim
    assert tail


def test_trim_right_trims_and_keeps_fitting_content() -> None:
    """trimBootstrapContent: right-trim (JS whitespace incl. U+3000 / U+FEFF) first; fits → unchanged."""
    result = trim_bootstrap_content("  keep leading\n\n \ufeff\u3000", "USER.md", 100)
    assert result.content == "  keep leading"
    assert not result.truncated
    assert (result.original_length, result.kept_head, result.kept_tail) == (14, 14, 0)
    exact = trim_bootstrap_content("x" * 100, "USER.md", 100)
    assert exact.content == "x" * 100
    assert not exact.truncated


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF)))
def test_utf16_length_is_js_length(text: str) -> None:
    # JS `length`: one unit per code point, two for one beyond the BMP; a lone surrogate is one.
    assert utf16_length(text) == sum(2 if ord(c) > 0xFFFF else 1 for c in text)
    assert utf16_length(text + "\ud83d") == utf16_length(text) + 1


def test_trim_counts_utf16_units_without_splitting_pairs() -> None:
    """Lengths are UTF-16 units (an emoji counts 2); a cut never splits a surrogate pair."""
    emoji = "😀"
    assert utf16_length(emoji * 3) == 6
    fits = trim_bootstrap_content(emoji * 50, "A.md", 100)
    assert not fits.truncated
    over = trim_bootstrap_content(emoji * 60, "A.md", 101)  # head 70 units, tail 20 units
    assert "kept 70+20 chars of 120)" in over.content
    assert over.content.startswith(emoji * 35 + "\n\n[...")
    assert over.content.endswith("\n\n" + emoji * 10)
    odd = trim_bootstrap_content("x" + emoji * 60, "A.md", 101)  # cut falls inside a pair
    assert odd.content.startswith("x" + emoji * 34 + "\n\n[...")
    assert odd.content.endswith("…\n\n" + emoji * 10)


def test_trim_zero_tail_is_empty() -> None:
    """floor(4 * 0.2) = 0 tail units keep nothing (not the whole text, as JS slice(-0) would)."""
    result = trim_bootstrap_content("abcdefgh", "A.md", 4)
    assert (
        result.content
        == "ab\n\n[...truncated, read A.md for full content...]\n…(truncated A.md: kept 2+0 chars of 8)…\n\n"
    )


def test_trim_rejects_nonpositive_budget() -> None:
    with pytest.raises(ValueError):
        trim_bootstrap_content("x", "A.md", 0)
    with pytest.raises(ValueError):
        build_bootstrap_context_files([], max_chars=0)


@given(st.text(max_size=300), st.integers(min_value=5, max_value=400))
def test_trim_never_exceeds_budget_plus_marker(content: str, max_chars: int) -> None:
    result = trim_bootstrap_content(content, "F.md", max_chars)
    if not result.truncated:
        assert result.content == content.rstrip(
            "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
            "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
        )
        assert utf16_length(result.content) <= max_chars
    else:
        head, marker_and_tail = result.content.split("\n\n[...truncated", 1)
        tail = marker_and_tail.split(")…\n\n", 1)[1]
        assert utf16_length(head) <= int(max_chars * 0.7)
        assert utf16_length(tail) <= int(max_chars * 0.2)
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in result.content)


# ---------------------------------------------------------------------------------------------
# budgets (pi-embedded-helpers/bootstrap.ts: buildBootstrapContextFiles, clampToBudget)
# ---------------------------------------------------------------------------------------------


def test_missing_marker() -> None:
    """buildBootstrapContextFiles: a missing file becomes ``[MISSING] Expected at: <path>``."""
    assert build_bootstrap_context_files([absent("AGENTS.md")]) == [
        ContextFile(path="/ws/AGENTS.md", content="[MISSING] Expected at: /ws/AGENTS.md")
    ]


def test_missing_marker_clamped_then_stop() -> None:
    """buildBootstrapContextFiles / clampToBudget: a missing marker is clamped to the remaining budget (cut + …); once nothing is
    left the walk stops."""
    files = [absent("AGENTS.md"), absent("SOUL.md")]
    assert build_bootstrap_context_files(files, total_max_chars=10) == [
        ContextFile(path="/ws/AGENTS.md", content="[MISSING]…")
    ]
    assert build_bootstrap_context_files(files, total_max_chars=3) == [
        ContextFile(path="/ws/AGENTS.md", content="[MI")
    ]


def test_empty_and_blank_content_skipped() -> None:
    files = [present("AGENTS.md", ""), present("SOUL.md", " \n\t "), present("TOOLS.md", "t")]
    assert build_bootstrap_context_files(files) == [ContextFile("/ws/TOOLS.md", "t")]


def test_blank_path_skipped_with_warning() -> None:
    warnings: list[str] = []
    files = [present("AGENTS.md", "a", path="   "), present("SOUL.md", "s", path="  /ws/SOUL.md ")]
    assert build_bootstrap_context_files(files, warn=warnings.append) == [
        ContextFile("/ws/SOUL.md", "s")
    ]
    assert warnings == [
        'skipping bootstrap file "AGENTS.md" — missing or invalid "path" field (hook may have '
        'used "filePath" instead)'
    ]


def test_truncation_warning_text() -> None:
    """clampToBudget: empty when no budget is left, hard cut up to 3, else cut and ``…``."""
    warnings: list[str] = []
    build_bootstrap_context_files(
        [present("SOUL.md", "x" * 500)], max_chars=200, warn=warnings.append
    )
    assert warnings == [
        "workspace bootstrap file SOUL.md is 500 chars (limit 200); truncating in injected context"
    ]


def test_total_budget_shared_and_min_64_stops() -> None:
    """buildBootstrapContextFiles: each file gets min(per-file, remaining); below 64 remaining a file with content
    is not started (warning), but the walk stops there."""
    warnings: list[str] = []
    files = [
        present("AGENTS.md", "a" * 100),
        present("SOUL.md", "b" * 100),
        present("TOOLS.md", "c"),
    ]
    built = build_bootstrap_context_files(
        files, max_chars=1000, total_max_chars=160, warn=warnings.append
    )
    assert built[0] == ContextFile("/ws/AGENTS.md", "a" * 100)
    assert len(built) == 1
    assert warnings == [
        f"remaining bootstrap budget is 60 chars (<{MIN_BOOTSTRAP_FILE_BUDGET_CHARS}); skipping "
        "additional bootstrap files"
    ]
    # exactly 64 left: the next file starts, truncated to the remaining budget
    built = build_bootstrap_context_files(files, max_chars=1000, total_max_chars=164)
    assert len(built) == 2
    # head 44 + tail 12 + marker overflow the 64 left, so the result is clamped to 63 + "…"
    trimmed = trim_bootstrap_content("b" * 100, "SOUL.md", 64).content
    assert trimmed.startswith("b" * 44 + "\n\n[...truncated, read SOUL.md")
    assert built[1] == ContextFile("/ws/SOUL.md", trimmed[:63] + "…")


def test_missing_files_do_not_need_64() -> None:
    files = [present("AGENTS.md", "a" * 100), absent("SOUL.md")]
    built = build_bootstrap_context_files(files, total_max_chars=110)
    assert built[1] == ContextFile("/ws/SOUL.md", "[MISSING]…")


def test_default_total_budget() -> None:
    """resolveBootstrapTotalMaxChars: unset total = max(per-file, 150 000)."""
    big = present("AGENTS.md", "a" * 200_000)
    [built] = build_bootstrap_context_files([big], max_chars=180_000)
    # floor(180000 * 0.7) is 125999 with IEEE doubles, in JS as in Python
    assert "kept 125999+36000 chars of 200000" in built.content
    three = [present(f"F{i}.md", "z" * 60_000) for i in range(3)]
    built3 = build_bootstrap_context_files(three, max_chars=DEFAULT_BOOTSTRAP_MAX_CHARS * 3)
    assert sum(utf16_length(f.content) for f in built3) <= DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS
    # the third file gets min(per-file, remaining) = 30 000 and is truncated to fit
    assert [utf16_length(f.content) for f in built3[:2]] == [60_000, 60_000]
    assert "kept 21000+6000 chars of 60000" in built3[2].content


# ---------------------------------------------------------------------------------------------
# loading (workspace.ts: loadWorkspaceBootstrapFiles, filterBootstrapFilesForSession)
# ---------------------------------------------------------------------------------------------


def test_load_order_and_missing(tmp_path: Path) -> None:
    (tmp_path / "SOUL.md").write_text("soul", encoding="utf-8")
    (tmp_path / "AGENTS.md").write_text("agents\n", encoding="utf-8")
    files = load_workspace_bootstrap_files(tmp_path)
    assert [f.name for f in files] == list(WORKSPACE_BOOTSTRAP_FILE_NAMES)
    assert WORKSPACE_BOOTSTRAP_FILE_NAMES == (
        "AGENTS.md",
        "SOUL.md",
        "TOOLS.md",
        "IDENTITY.md",
        "USER.md",
        "HEARTBEAT.md",
        "BOOTSTRAP.md",
    )
    assert files[0] == WorkspaceBootstrapFile(
        "AGENTS.md", str(tmp_path / "AGENTS.md"), "agents\n", False
    )
    assert files[1].content == "soul"
    assert all(f.missing and f.content is None for f in files[2:])
    assert files[2].path == os.path.join(str(tmp_path), "TOOLS.md")
    built = build_bootstrap_context_files(files)
    assert built[2] == ContextFile(
        str(tmp_path / "TOOLS.md"), f"[MISSING] Expected at: {tmp_path / 'TOOLS.md'}"
    )


def test_load_memory_files(tmp_path: Path) -> None:
    (tmp_path / "memory.md").write_text("lower", encoding="utf-8")
    names = [f.name for f in load_workspace_bootstrap_files(tmp_path)]
    assert names[-1] == "memory.md"
    assert len(names) == 8
    (tmp_path / "MEMORY.md").write_text("upper", encoding="utf-8")
    both = load_workspace_bootstrap_files(tmp_path)
    if os.path.samefile(tmp_path / "MEMORY.md", tmp_path / "memory.md"):
        pytest.skip("case-insensitive file system")
    assert [f.name for f in both[-2:]] == list(MEMORY_BOOTSTRAP_FILE_NAMES)
    assert [f.content for f in both[-2:]] == ["upper", "lower"]


@needs_symlinks
def test_load_memory_deduped_by_realpath(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("mem", encoding="utf-8")
    (tmp_path / "memory.md").symlink_to(tmp_path / "MEMORY.md")
    files = load_workspace_bootstrap_files(tmp_path)
    assert [f.name for f in files if f.name.lower() == "memory.md"] == ["MEMORY.md"]
    assert files[-1].content == "mem"


def test_load_no_memory_files(tmp_path: Path) -> None:
    assert len(load_workspace_bootstrap_files(tmp_path)) == 7


def test_load_subagent_allowlist(tmp_path: Path) -> None:
    """filterBootstrapFilesForSession: sub-agents keep only AGENTS.md and TOOLS.md (no memory)."""
    for name in (*WORKSPACE_BOOTSTRAP_FILE_NAMES, "MEMORY.md"):
        (tmp_path / name).write_text(name, encoding="utf-8")
    files = load_workspace_bootstrap_files(tmp_path, subagent=True)
    assert [f.name for f in files] == ["AGENTS.md", "TOOLS.md"]
    assert {"AGENTS.md", "TOOLS.md"} == SUBAGENT_BOOTSTRAP_ALLOWLIST
    assert [f.content for f in files] == ["AGENTS.md", "TOOLS.md"]


@needs_symlinks
def test_load_refuses_symlink_escape(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET", encoding="utf-8")
    (workspace / "AGENTS.md").symlink_to(secret)
    (workspace / "MEMORY.md").symlink_to(secret)
    (workspace / "notes.md").write_text("inside", encoding="utf-8")
    (workspace / "SOUL.md").symlink_to(workspace / "notes.md")  # stays inside: allowed
    files = {f.name: f for f in load_workspace_bootstrap_files(workspace)}
    assert files["AGENTS.md"].missing and files["AGENTS.md"].content is None
    assert files["MEMORY.md"].missing
    assert files["SOUL.md"].content == "inside"
    built = build_bootstrap_context_files(list(files.values()))
    assert all("TOP SECRET" not in f.content for f in built)


@needs_symlinks
def test_load_through_symlinked_workspace(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "AGENTS.md").write_text("via link", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(real)
    files = load_workspace_bootstrap_files(link)
    assert files[0].content == "via link"
    assert files[0].path == str(link / "AGENTS.md")


def test_load_non_regular_files_are_missing(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").mkdir()
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "SOUL.md")  # reading it would block
    files = load_workspace_bootstrap_files(tmp_path)
    assert files[0].missing
    if hasattr(os, "mkfifo"):
        assert files[1].missing


def test_load_decodes_invalid_utf8_with_replacement(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_bytes(b"ok \xff\xfe end \xe2\x82")
    assert load_workspace_bootstrap_files(tmp_path)[0].content == "ok \ufffd\ufffd end \ufffd"


def test_load_expands_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "USER.md").write_text("me", encoding="utf-8")
    files = load_workspace_bootstrap_files("~/ws")
    assert files[4].content == "me"
    assert files[4].path == str(tmp_path / "ws" / "USER.md")


def _built_both_ways(tmp_path: Path, data: bytes, max_chars: int) -> tuple[list[ContextFile], ...]:
    (tmp_path / "AGENTS.md").write_bytes(data)
    whole = load_workspace_bootstrap_files(tmp_path)
    sampled = load_workspace_bootstrap_files(tmp_path, max_file_bytes=512)
    return (
        build_bootstrap_context_files(whole, max_chars=max_chars),
        build_bootstrap_context_files(sampled, max_chars=max_chars),
    )


def test_large_file_sampled_gives_same_context(tmp_path: Path) -> None:
    """Files over max_file_bytes are read once in chunks keeping only head and tail windows,
    and still truncate exactly as if read whole (true length in the marker)."""
    body = ("αβγ😀 line\n" * 400 + "TAIL END").encode() + b"  \n\n\t"
    whole, sampled = _built_both_ways(tmp_path, body, max_chars=100)
    assert sampled == whole
    assert f"of {utf16_length(body.decode().rstrip())})…" in whole[0].content
    sample = load_workspace_bootstrap_files(tmp_path, max_file_bytes=512)[0]
    assert sample.content_length == utf16_length(body.decode().rstrip())
    assert sample.content is not None and len(sample.content.encode()) <= 512


@settings(max_examples=40, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab é\n😀中\t"), min_size=600, max_size=3000),
    st.integers(min_value=5, max_value=150),
)
def test_large_file_sampling_property(
    tmp_path_factory: pytest.TempPathFactory, text: str, max_chars: int
) -> None:
    tmp_path = tmp_path_factory.mktemp("ws")
    data = text.encode()
    if len(data) <= 512 or not text.rstrip():
        return
    trailing_ws = len(text) - len(text.rstrip(" \n\t"))
    if trailing_ws * 4 >= 256:  # beyond the documented limit (whitespace longer than a window)
        return
    whole, sampled = _built_both_ways(tmp_path, data, max_chars)
    assert sampled == whole


def test_loaded_files_feed_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Be careful.", encoding="utf-8")
    (tmp_path / "SOUL.md").write_text("Cheerful.", encoding="utf-8")
    context = build_bootstrap_context_files(load_workspace_bootstrap_files(tmp_path))
    prompt = build_system_prompt(
        SystemPromptParams(workspace_dir=str(tmp_path), context_files=tuple(context))
    )
    assert (
        f"## {tmp_path / 'AGENTS.md'}\nBe careful.\n## {tmp_path / 'SOUL.md'}\nCheerful." in prompt
    )
    assert "If SOUL.md is present, embody its persona" in prompt
    assert f"## {tmp_path / 'TOOLS.md'}\n[MISSING] Expected at: {tmp_path / 'TOOLS.md'}" in prompt


# --- bootstrap budget and truncation warning (OpenClaw 2026.3.13 src/agents/bootstrap-budget.ts) ---


LIMITS_HINT = (
    "If unintentional, raise agents.defaults.bootstrapMaxChars and/or "
    "agents.defaults.bootstrapTotalMaxChars."
)


def _stat(name: str, raw: int, injected: int, *, path: str | None = None) -> BootstrapInjectionStat:
    return BootstrapInjectionStat(
        name=name,
        path=path or f"/ws/{name}",
        missing=False,
        raw_chars=raw,
        injected_chars=injected,
        truncated=injected < raw,
    )


def test_injection_stats_compare_raw_and_injected_lengths() -> None:
    files = [
        WorkspaceBootstrapFile("AGENTS.md", " /ws/AGENTS.md ", "a" * 250 + "  \n", False),
        WorkspaceBootstrapFile("SOUL.md", "/ws/SOUL.md", None, True),
        WorkspaceBootstrapFile("TOOLS.md", "/ws/TOOLS.md", "tools", False),
        # Found by base name (buildBootstrapInjectionStats's last lookup).
        WorkspaceBootstrapFile("USER.md", "", "\U0001f600" * 10, False),
        # Not injected at all (budget exhausted): counts as truncated.
        WorkspaceBootstrapFile("MEMORY.md", "/ws/MEMORY.md", "m" * 10, False),
    ]
    injected = build_bootstrap_context_files(files[:3], max_chars=100)
    injected.append(ContextFile(path="/elsewhere/USER.md", content="\U0001f600" * 5))
    stats = build_bootstrap_injection_stats(files, injected)
    assert [(s.name, s.path, s.raw_chars, s.injected_chars, s.truncated) for s in stats] == [
        ("AGENTS.md", "/ws/AGENTS.md", 250, utf16_length(injected[0].content), True),
        ("SOUL.md", "/ws/SOUL.md", 0, len("[MISSING] Expected at: /ws/SOUL.md"), False),
        ("TOOLS.md", "/ws/TOOLS.md", 5, 5, False),
        ("USER.md", "USER.md", 20, 10, True),  # UTF-16 lengths; no path → the name
        ("MEMORY.md", "/ws/MEMORY.md", 10, 0, True),
    ]
    # A sampled large file reports the length of its whole text.
    sampled = WorkspaceBootstrapFile("AGENTS.md", "/ws/AGENTS.md", "ab", False, content_length=9)
    assert build_bootstrap_injection_stats([sampled], [])[0].raw_chars == 9


def test_analysis_causes_and_near_limit_flags() -> None:
    analysis = analyze_bootstrap_budget(
        [
            _stat("AGENTS.md", 150, 100),
            _stat("SOUL.md", 90, 60),
            BootstrapInjectionStat("TOOLS.md", "/ws/TOOLS.md", True, 0, 30, False),
        ],
        bootstrap_max_chars=100,
        bootstrap_total_max_chars=160,
    )
    agents, soul, tools = analysis.files
    assert agents.causes == ("per-file-limit", "total-limit")
    assert soul.causes == ("total-limit",)  # within max/file, cut by the total
    assert (agents.near_limit, soul.near_limit, tools.near_limit) == (True, True, False)
    assert tools.causes == ()
    assert [f.name for f in analysis.truncated_files] == ["AGENTS.md", "SOUL.md"]
    # Totals count present files only: 160 injected reaches ceil(160 * 0.85) = 136 and 160.
    assert (analysis.raw_chars, analysis.injected_chars, analysis.truncated_chars) == (240, 160, 80)
    assert analysis.total_near_limit is True
    # Under the total: a file cut for another reason gets no cause; odd limits become 1.
    quiet = analyze_bootstrap_budget(
        [_stat("AGENTS.md", 50, 40)], bootstrap_max_chars=100, bootstrap_total_max_chars=1000
    )
    assert quiet.truncated_files[0].causes == ()
    odd = analyze_bootstrap_budget(
        [], bootstrap_max_chars=float("nan"), bootstrap_total_max_chars=-5, near_limit_ratio=2
    )
    assert (odd.bootstrap_max_chars, odd.bootstrap_total_max_chars) == (1, 1)
    assert odd.near_limit_ratio == 0.85
    assert odd.has_truncation is False


def test_warning_lines_format() -> None:
    analysis = analyze_bootstrap_budget(
        [_stat("AGENTS.md", 25_000, 20_000), _stat("SOUL.md", 3, 2)],
        bootstrap_max_chars=20_000,
        bootstrap_total_max_chars=150_000,
    )
    # ~20% and ~33.3% → 33 (Math.round); no cause for SOUL.md.
    assert format_bootstrap_truncation_warning_lines(analysis) == [
        "AGENTS.md: 25000 raw -> 20000 injected (~20% removed; max/file).",
        "SOUL.md: 3 raw -> 2 injected (~33% removed).",
        LIMITS_HINT,
    ]
    half = analyze_bootstrap_budget(
        [_stat("AGENTS.md", 8, 7)], bootstrap_max_chars=100, bootstrap_total_max_chars=1000
    )
    # 12.5 rounds half up, as Math.round does (Python's round would give 12).
    assert format_bootstrap_truncation_warning_lines(half)[0] == (
        "AGENTS.md: 8 raw -> 7 injected (~13% removed)."
    )
    many = analyze_bootstrap_budget(
        [
            _stat("AGENTS.md", 10, 5, path="/tmp/a/AGENTS.md"),
            _stat("AGENTS.md", 10, 5, path="/tmp/b/AGENTS.md"),
            _stat("SOUL.md", 10, 5),
            _stat("TOOLS.md", 10, 5),
        ],
        bootstrap_max_chars=100,
        bootstrap_total_max_chars=1000,
    )
    assert format_bootstrap_truncation_warning_lines(many) == [
        "AGENTS.md (/tmp/a/AGENTS.md): 10 raw -> 5 injected (~50% removed).",
        "AGENTS.md (/tmp/b/AGENTS.md): 10 raw -> 5 injected (~50% removed).",
        "SOUL.md: 10 raw -> 5 injected (~50% removed).",
        "+1 more truncated file(s).",
        LIMITS_HINT,
    ]
    assert len(format_bootstrap_truncation_warning_lines(many, max_files=1)) == 3
    assert len(format_bootstrap_truncation_warning_lines(many, max_files=0)) == 5  # default 3
    clean = analyze_bootstrap_budget(
        [_stat("AGENTS.md", 10, 10)], bootstrap_max_chars=100, bootstrap_total_max_chars=1000
    )
    assert format_bootstrap_truncation_warning_lines(clean) == []
    assert build_bootstrap_truncation_signature(clean) is None


def test_signature_is_compact_json_sorted_by_path() -> None:
    analysis = analyze_bootstrap_budget(
        [_stat("SOUL.md", 150, 100), _stat("AGENTS.md", 150, 100)],
        bootstrap_max_chars=100,
        bootstrap_total_max_chars=1000,
    )
    assert build_bootstrap_truncation_signature(analysis) == (
        '{"bootstrapMaxChars":100,"bootstrapTotalMaxChars":1000,"files":['
        '{"path":"/ws/AGENTS.md","rawChars":150,"injectedChars":100,"causes":["per-file-limit"]},'
        '{"path":"/ws/SOUL.md","rawChars":150,"injectedChars":100,"causes":["per-file-limit"]}]}'
    )
    other_limit = analyze_bootstrap_budget(
        [_stat("SOUL.md", 150, 100), _stat("AGENTS.md", 150, 100)],
        bootstrap_max_chars=120,
        bootstrap_total_max_chars=1000,
    )
    assert build_bootstrap_truncation_signature(other_limit) != (
        build_bootstrap_truncation_signature(analysis)
    )


def _truncated(raw: int = 150) -> BootstrapBudgetAnalysis:
    return analyze_bootstrap_budget(
        [_stat("AGENTS.md", raw, 100)], bootstrap_max_chars=100, bootstrap_total_max_chars=1000
    )


def test_prompt_warning_modes_and_dedupe() -> None:
    first = build_bootstrap_prompt_warning(_truncated(), "once")
    assert first.warning_shown is True
    assert first.lines == (
        "AGENTS.md: 150 raw -> 100 injected (~33% removed; max/file).",
        LIMITS_HINT,
    )
    assert first.warning_signatures_seen == (first.signature,)
    # Same situation again: once mode stays quiet, always mode repeats.
    second = build_bootstrap_prompt_warning(
        _truncated(), "once", seen_signatures=first.warning_signatures_seen
    )
    assert (second.warning_shown, second.lines) == (False, ())
    assert second.warning_signatures_seen == first.warning_signatures_seen
    again = build_bootstrap_prompt_warning(
        _truncated(), "always", seen_signatures=first.warning_signatures_seen
    )
    assert again.warning_shown is True and again.lines == first.lines
    # previous_signature alone counts as seen.
    by_previous = build_bootstrap_prompt_warning(
        _truncated(), "once", previous_signature=first.signature
    )
    assert by_previous.warning_shown is False
    # A changed situation warns again.
    changed = build_bootstrap_prompt_warning(
        _truncated(160), "once", seen_signatures=first.warning_signatures_seen
    )
    assert changed.warning_shown is True
    assert changed.warning_signatures_seen == (first.signature, changed.signature)
    # Off: nothing shown, nothing remembered.
    off = build_bootstrap_prompt_warning(_truncated(), "off", seen_signatures=[" a ", "", "a"])
    assert (off.warning_shown, off.lines, off.warning_signatures_seen) == (False, (), ("a",))
    with pytest.raises(ValueError, match="mode"):
        build_bootstrap_prompt_warning(_truncated(), "ONCE")  # type: ignore[arg-type]


def test_seen_signatures_keep_the_last_32() -> None:
    seen = [f"sig-{i}" for i in range(32)]
    warning = build_bootstrap_prompt_warning(_truncated(), "once", seen_signatures=seen)
    assert warning.warning_shown is True
    assert len(warning.warning_signatures_seen) == 32
    assert warning.warning_signatures_seen[0] == "sig-1"
    assert warning.warning_signatures_seen[-1] == warning.signature


def test_mode_from_config_and_report_round_trip() -> None:
    assert resolve_bootstrap_prompt_truncation_warning_mode(None) == "once"
    config = {"agents": {"defaults": {"bootstrapPromptTruncationWarning": "always"}}}
    assert resolve_bootstrap_prompt_truncation_warning_mode(config) == "always"
    for raw in ("ALWAYS", "never", 1, None):
        bad = {"agents": {"defaults": {"bootstrapPromptTruncationWarning": raw}}}
        assert resolve_bootstrap_prompt_truncation_warning_mode(bad) == "once"
    analysis = _truncated()
    warning = build_bootstrap_prompt_warning(analysis, "once")
    meta = build_bootstrap_truncation_report_meta(analysis, "once", warning)
    assert meta == {
        "warningMode": "once",
        "warningShown": True,
        "promptWarningSignature": warning.signature,
        "warningSignaturesSeen": [warning.signature],
        "truncatedFiles": 1,
        "nearLimitFiles": 1,
        "totalNearLimit": False,
    }
    report = {"bootstrapTruncation": meta}
    assert resolve_bootstrap_warning_signatures_seen(report) == [warning.signature]
    legacy = {"bootstrapTruncation": {"promptWarningSignature": " legacy-only "}}
    assert resolve_bootstrap_warning_signatures_seen(legacy) == ["legacy-only"]
    off = {"bootstrapTruncation": {"warningMode": "off", "promptWarningSignature": "x"}}
    assert resolve_bootstrap_warning_signatures_seen(off) == []
    assert resolve_bootstrap_warning_signatures_seen(None) == []


def test_warning_lines_render_in_the_system_prompt() -> None:
    warning = build_bootstrap_prompt_warning(_truncated(), "always")
    prompt = build_system_prompt(
        SystemPromptParams(workspace_dir="/ws", bootstrap_truncation_warning_lines=warning.lines)
    )
    assert (
        "⚠ Bootstrap truncation warning:\n"
        "- AGENTS.md: 150 raw -> 100 injected (~33% removed; max/file).\n"
        f"- {LIMITS_HINT}\n"
    ) in prompt


# ---------------------------------------------------------------------------------------------
# loading: bounded reads and files changing while they are loaded
# ---------------------------------------------------------------------------------------------


def _bytes_read_by_process() -> int | None:
    """Linux: bytes this process has read through read-like system calls so far."""
    try:
        with open("/proc/self/io", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def test_huge_sparse_file_reads_only_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2 GiB sparse AGENTS.md costs one cap's worth of reading, not 2 GiB."""
    from clawctx.prompt.workspace import MAX_BOOTSTRAP_FILE_BYTES

    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"head line\n")
    size = 2 * 1024**3
    os.truncate(path, size)
    observed: list[int] = []
    real_read, real_pread = os.read, os.pread

    def counting_read(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        observed.append(len(data))
        return data

    def counting_pread(fd: int, n: int, offset: int) -> bytes:
        data = real_pread(fd, n, offset)
        observed.append(len(data))
        return data

    before = _bytes_read_by_process()
    monkeypatch.setattr(os, "read", counting_read)
    monkeypatch.setattr(os, "pread", counting_pread)
    files = load_workspace_bootstrap_files(tmp_path)
    monkeypatch.undo()
    after = _bytes_read_by_process()
    if before is not None and after is not None:
        assert after - before <= MAX_BOOTSTRAP_FILE_BYTES + 1 + 64 * 1024
    assert sum(observed) <= MAX_BOOTSTRAP_FILE_BYTES + 1
    agents = files[0]
    assert agents.content is not None and agents.content.startswith("head line\n\x00")
    assert agents.content_length == size  # NUL is not whitespace: nothing is trimmed
    [built, *_] = build_bootstrap_context_files(files)
    assert f"chars of {size})…" in built.content


@needs_symlinks
@pytest.mark.parametrize("swap", ["remove", "regular file", "escaping symlink"])
def test_file_changing_between_listing_and_open_counts_as_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str
) -> None:
    """A bootstrap file (here an in-workspace symlink) that disappears or is replaced while the
    loader resolves it is a missing file, not an exception that fails the prompt build."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    (workspace / "notes.md").write_text("inside", encoding="utf-8")
    for name in ("AGENTS.md", "MEMORY.md"):
        (workspace / name).symlink_to(workspace / "notes.md")
    real_readlink = os.readlink
    swapped: set[str] = set()

    def racing_readlink(path: object, *args: object, **kwargs: object) -> object:
        name = os.path.basename(os.fspath(path))  # type: ignore[call-overload]
        if name in ("AGENTS.md", "MEMORY.md") and name not in swapped:
            swapped.add(name)
            target = workspace / name
            target.unlink()
            if swap == "regular file":
                target.write_text("swapped", encoding="utf-8")
            elif swap == "escaping symlink":
                target.symlink_to(tmp_path / "secret.txt")
        return real_readlink(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "readlink", racing_readlink)
    files = {f.name: f for f in load_workspace_bootstrap_files(workspace)}
    monkeypatch.undo()
    assert files["AGENTS.md"].missing and files["AGENTS.md"].content is None
    assert "MEMORY.md" not in files or files["MEMORY.md"].missing
    built = build_bootstrap_context_files(list(files.values()))
    assert built[0].content == f"[MISSING] Expected at: {workspace / 'AGENTS.md'}"
    assert all("TOP SECRET" not in f.content and "swapped" not in f.content for f in built)


@pytest.mark.parametrize("swap", ["remove", "escaping symlink"])
def test_file_replaced_right_before_open_counts_as_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    (workspace / "AGENTS.md").write_text("agents", encoding="utf-8")
    (workspace / "MEMORY.md").write_text("memory", encoding="utf-8")
    real_open = os.open

    def racing_open(path: object, *args: object, **kwargs: object) -> int:
        name = os.path.basename(os.fspath(path))  # type: ignore[call-overload]
        target = workspace / name
        if name in ("AGENTS.md", "MEMORY.md") and target.is_file() and not target.is_symlink():
            target.unlink()
            if swap == "escaping symlink" and sys.platform != "win32":
                target.symlink_to(tmp_path / "secret.txt")
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(os, "open", racing_open)
    files = {f.name: f for f in load_workspace_bootstrap_files(workspace)}
    monkeypatch.undo()
    assert files["AGENTS.md"].missing
    assert "MEMORY.md" not in files or files["MEMORY.md"].missing
    built = build_bootstrap_context_files(list(files.values()))
    assert built[0].content == f"[MISSING] Expected at: {workspace / 'AGENTS.md'}"
    assert all("TOP SECRET" not in f.content for f in built)


def test_length_estimated_past_the_scan_limit(tmp_path: Path) -> None:
    """Past max_scan_bytes only the two windows are read; the length is estimated from them
    (exact for ASCII text), so the truncated context is the same as when read whole."""
    body = ("plain ascii line\n" * 200 + "TAIL END").encode() + b"  \n"
    (tmp_path / "AGENTS.md").write_bytes(body)
    estimated = load_workspace_bootstrap_files(tmp_path, max_file_bytes=512, max_scan_bytes=0)
    whole = load_workspace_bootstrap_files(tmp_path)
    assert estimated[0].content_length == utf16_length(body.decode().rstrip())
    assert build_bootstrap_context_files(estimated, max_chars=100) == (
        build_bootstrap_context_files(whole, max_chars=100)
    )
    with pytest.raises(ValueError, match="max_scan_bytes"):
        load_workspace_bootstrap_files(tmp_path, max_scan_bytes=-1)
