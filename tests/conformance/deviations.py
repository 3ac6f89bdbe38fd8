"""Deliberate differences from the recorded upstream behaviour: the one list.

Each entry names the conformance cases it covers, the reason (data safety, a security
hardening, or a crash upstream), and the test that shows the improvement. The cases run as
strict xfails: a case that starts to agree with upstream fails the run until its id is removed
here. ``test_deviations.py`` checks that every entry names real cases and an existing test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Reason = Literal["data safety", "security", "crash upstream"]
#: Which recorded suite a deviation's cases come from: ``../shared/conformance`` (hot path and
#: facade) or ``../shared/conformance-payload`` (pi-ai request bodies and transformMessages).
Suite = Literal["conformance", "conformance-payload"]


@dataclass(frozen=True)
class Deviation:
    """One deliberate difference: the cases, why, and the test showing the improvement.

    ``test`` is a pytest node id relative to the repository root, e.g.
    ``tests/history/test_repair.py::test_keeps_crlf_bytes``.
    """

    case_ids: tuple[str, ...]
    reason: Reason
    why: str
    test: str
    suite: Suite = "conformance"


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        case_ids=("queue_summary_line-049-random",),
        reason="data safety",
        why=(
            "buildQueueSummaryLine truncates in UTF-16 units and can leave a lone high surrogate "
            "before the ellipsis; such a str cannot be encoded to UTF-8, so the overflow summary "
            "would break the prompt and the transcript write. clawctx drops the whole character."
        ),
        test="tests/runtime/test_queues.py::test_summary_line_never_splits_a_surrogate_pair",
    ),
    Deviation(
        case_ids=(
            "repair_session_file-010-crlf_truncated",
            "repair_session_file-032-crlf_truncated",
            "repair_session_file-189-random_header",
            "repair_session_file-201-random_padded_path",
            "repair_session_file-202-random_padded_path",
        ),
        reason="data safety",
        why=(
            "A repair rewrites only the lines it drops or salvages; every kept line keeps its "
            "exact bytes (CRLF ending, spacing, escapes, key order) instead of being "
            "re-serialized with JSON.stringify, so nothing but the damage changes on disk."
        ),
        test="tests/history/test_repair.py::test_kept_lines_keep_their_bytes_when_the_file_is_rewritten",
    ),
    Deviation(
        case_ids=(
            "repair_session_file-015-invalid_utf8_line",
            "repair_session_file-037-invalid_utf8_line",
        ),
        reason="data safety",
        why=(
            "The backup holds the original bytes, and kept lines with invalid UTF-8 keep "
            "them; upstream decodes the file lossily, so its backup and rewrite replace the "
            "invalid bytes with U+FFFD for good."
        ),
        test="tests/history/test_repair.py::test_invalid_utf8_inside_a_message_string",
    ),
    Deviation(
        case_ids=("pi_session_open-045-v3_lone_cr", "pi_session_open-050-v3_broken_bom"),
        reason="data safety",
        why=(
            "A header behind a broken BOM or in a lone-CR file is recovered and the session "
            "opened; pi finds no header and overwrites the file with a fresh session, losing "
            "the whole history."
        ),
        test=(
            "tests/history/test_upstream_session_format.py::"
            "test_open_salvages_a_damaged_header_instead_of_resetting"
        ),
    ),
    Deviation(
        case_ids=(
            "pi_session_open-058-v1_truncated_last_line",
            "pi_session_open-059-v1_garbage_lines",
        ),
        reason="data safety",
        why=(
            "Writing a migrated file rewrites only the lines migration changed; torn and "
            "garbage lines keep their bytes for a later repair to salvage from, where pi's "
            "rewrite from the parsed entries deletes them."
        ),
        test="tests/history/test_upstream_session_format.py::test_migration_rewrite_keeps_damaged_lines",
    ),
    Deviation(
        case_ids=("pi_session_open-060-v1_non_object_json_lines",),
        reason="data safety",
        why=(
            "v1 migration skips a JSON line that is not an object and chains the next entry to "
            "the previous real one; pi gives the array an id that JSON.stringify never writes, "
            "so after reopening the next entry's parent is missing and the context breaks."
        ),
        test=(
            "tests/history/test_upstream_session_format.py::test_migration_chains_around_non_object_lines"
        ),
    ),
    Deviation(
        case_ids=(
            "validate_anthropic_turns-010-random",
            "validate_anthropic_turns-015-random",
            "validate_anthropic_turns-025-random",
            "validate_anthropic_turns-041-random",
            "validate_anthropic_turns-042-random",
            "validate_anthropic_turns-046-random",
        ),
        reason="data safety",
        why=(
            "Merging consecutive user turns (and Gemini's assistant turns) keeps a string "
            "content as a text block; upstream counts it as empty and deletes what the user "
            "said, and the emptied turn then changes on every later sanitize pass."
        ),
        test="tests/history/test_properties_history.py::test_merged_turns_keep_string_content",
    ),
    Deviation(
        case_ids=(
            "openai-responses/stream_simple/unicode/039",
            "transform-messages/transform_messages/unicode/013",
        ),
        reason="data safety",
        why=(
            "pi-ai keeps a lone surrogate that a replayed thinking block (or its reasoning "
            "item's summary) carries; a lone surrogate is not a Unicode scalar value, so the "
            "body cannot be encoded as UTF-8 (Python's str.encode and orjson refuse it, and "
            "providers reject the escaped form). clawctx drops it, as pi-ai's own "
            "sanitizeSurrogates does for every other text it sends."
        ),
        test=(
            "tests/payload/test_payload_api.py::"
            "test_replayed_lone_surrogates_are_dropped_so_the_body_is_utf8"
        ),
        suite="conformance-payload",
    ),
)


def deviating_case_ids(suite: Suite = "conformance") -> dict[str, Deviation]:
    """Case id -> the deviation that covers it, for the cases of one recorded suite."""
    by_case: dict[str, Deviation] = {}
    for deviation in DEVIATIONS:
        if deviation.suite != suite:
            continue
        for case_id in deviation.case_ids:
            assert case_id not in by_case, f"{case_id} is listed twice"
            by_case[case_id] = deviation
    return by_case
