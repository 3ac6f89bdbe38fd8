"""Image sanitization (OpenClaw 2026.3.13 `src/agents/pi-embedded-helpers/images.ts`,
``sanitizeSessionMessagesImages``, and `src/agents/tool-images.ts`): ``sanitize_image_block``,
``sanitize_images``,
the Rust scan/probe/replace functions and ``image_limits_from_config``.

Images are generated with Pillow. Pixel output depends on the image library, so outputs are
checked by dimensions, mime
type and byte bounds, never by bytes; the replacement texts are checked exactly. The JPEG
ladder order is checked by recording the encoder calls.
"""

from __future__ import annotations

import base64
import io
import json
import random
import re
import struct
import threading
import warnings
import zlib
from collections.abc import Callable
from typing import Any

import pytest
from PIL import Image

import clawctx
from clawctx import _core
from clawctx.history import images
from clawctx.history.images import sanitize_image_block, sanitize_images

MIB = 1024 * 1024
LABEL = "session:history"
Message = dict[str, Any]

# ---- image builders ---------------------------------------------------------------------------


def encode(image: Image.Image, fmt: str, **params: Any) -> str:
    out = io.BytesIO()
    image.save(out, format=fmt, **params)
    return base64.b64encode(out.getvalue()).decode("ascii")


def gradient(width: int, height: int, mode: str = "RGB") -> Image.Image:
    """A smooth image: compresses well, so only the dimension limit applies."""
    ramp = Image.linear_gradient("L").resize((width, height))
    if mode == "L":
        return ramp
    return Image.merge("RGB", (ramp, ramp.transpose(Image.Transpose.FLIP_LEFT_RIGHT), ramp))


def noise(width: int, height: int, seed: int = 1) -> Image.Image:
    """Random pixels: JPEG cannot make these small."""
    return Image.frombytes(
        "RGB", (width, height), random.Random(seed).randbytes(width * height * 3)
    )


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_claiming(width: int, height: int) -> str:
    """A small, well-formed PNG file whose header claims the given dimensions."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", ihdr)
        + png_chunk(b"IDAT", zlib.compress(b"\0" * 64))
        + png_chunk(b"IEND", b"")
    )
    return base64.b64encode(data).decode("ascii")


def decoded(block: dict[str, str]) -> tuple[Image.Image, int]:
    """The image of an image block, and its decoded size."""
    assert block["type"] == "image", block
    raw = base64.b64decode(block["data"], validate=True)
    image = Image.open(io.BytesIO(raw))
    image.load()
    return image, len(raw)


def omitted(text: str, label: str = LABEL) -> dict[str, str]:
    return {"type": "text", "text": f"[{label}] omitted image payload: {text}"}


# ---- sanitize_image_block: empty payload, mime from prefix, within limits (tool-images.ts) -----


def test_image_within_limits_is_kept_with_trimmed_data_and_inferred_mime() -> None:
    data = encode(gradient(100, 50), "PNG")
    assert sanitize_image_block(data, "image/png") == {
        "type": "image",
        "data": data,
        "mimeType": "image/png",
    }
    # inferMimeTypeFromBase64: the prefix wins over the block's mime type; within limits
    # (resizeImageBase64IfNeeded) the data is trimmed
    # (JavaScript's trim: U+FEFF and U+3000 are whitespace).
    block = sanitize_image_block(f"\ufeff \n{data}\u3000\t", "image/jpeg")
    assert block == {"type": "image", "data": data, "mimeType": "image/png"}


@pytest.mark.parametrize(
    ("fmt", "prefix", "mime"),
    [("JPEG", "/9j/", "image/jpeg"), ("PNG", "iVBOR", "image/png"), ("GIF", "R0lGOD", "image/gif")],
)
def test_mime_is_inferred_from_the_base64_prefix(fmt: str, prefix: str, mime: str) -> None:
    data = encode(gradient(64, 48), fmt)
    assert data.startswith(prefix)
    assert sanitize_image_block(data, "application/octet-stream")["mimeType"] == mime


@pytest.mark.parametrize(("fmt", "mime"), [("WEBP", "image/webp"), ("BMP", "image/bmp")])
def test_unknown_prefix_keeps_the_block_mime_type(fmt: str, mime: str) -> None:
    data = encode(gradient(64, 48), fmt)
    assert sanitize_image_block(data, mime) == {"type": "image", "data": data, "mimeType": mime}
    # The mime type is only inferred, never checked against the content.
    assert sanitize_image_block(data, "image/tiff")["mimeType"] == "image/tiff"


@pytest.mark.parametrize("data", ["", "   ", "\n\t\ufeff"])
def test_empty_payload_is_replaced_by_text(data: str) -> None:
    assert sanitize_image_block(data, "image/png") == {
        "type": "text",
        "text": "[session:history] omitted empty image payload",
    }
    assert sanitize_image_block(data, "image/png", label="tool:read")["text"] == (
        "[tool:read] omitted empty image payload"
    )


def test_dimension_and_byte_limits_are_inclusive() -> None:
    data = encode(gradient(1200, 1200), "PNG")
    size = len(base64.b64decode(data))
    kept = {"type": "image", "data": data, "mimeType": "image/png"}
    assert sanitize_image_block(data, "image/png") == kept
    assert sanitize_image_block(data, "image/png", max_bytes=size) == kept
    assert (
        sanitize_image_block(data, "image/png", max_dimension_px=1199)["mimeType"] == "image/jpeg"
    )
    assert sanitize_image_block(data, "image/png", max_bytes=size - 1)["mimeType"] == "image/jpeg"


# ---- sanitize_image_block: the JPEG ladder (tool-images.ts: resizeImageBase64IfNeeded) ----------


@pytest.mark.parametrize(
    ("size", "expected"), [((4000, 3000), (1200, 900)), ((3000, 4000), (900, 1200))]
)
def test_large_image_is_reencoded_to_jpeg_at_the_maximum_side(
    size: tuple[int, int], expected: tuple[int, int]
) -> None:
    block = sanitize_image_block(encode(gradient(*size), "PNG"), "image/png")
    assert block["mimeType"] == "image/jpeg"
    assert block["data"].startswith("/9j/")
    image, nbytes = decoded(block)
    assert (image.format, image.mode, image.size) == ("JPEG", "RGB", expected)
    assert nbytes <= 5 * MIB


def test_configured_maximum_side_and_no_enlargement() -> None:
    block = sanitize_image_block(
        encode(gradient(4000, 3000), "PNG"), "image/png", max_dimension_px=500
    )
    assert decoded(block)[0].size == (500, 375)
    # Over the byte limit but within the side: re-encoded at its own size, never enlarged.
    data = encode(noise(700, 500), "PNG")
    assert len(base64.b64decode(data)) > 1 * MIB
    block = sanitize_image_block(data, "image/png", max_bytes=1 * MIB)
    image, nbytes = decoded(block)
    assert image.size == (700, 500)
    assert nbytes <= 1 * MIB


Attempt = tuple[tuple[int, int], int, int]


@pytest.fixture
def encoder_calls(monkeypatch: pytest.MonkeyPatch) -> list[Attempt]:
    """Records each JPEG encoding of the ladder: (size, quality, output bytes)."""
    calls: list[Attempt] = []
    real = images._encode_jpeg

    def recording(image: Image.Image, quality: int) -> bytes:
        out = real(image, quality)
        calls.append((image.size, quality, len(out)))
        return out

    monkeypatch.setattr(images, "_encode_jpeg", recording)
    return calls


QUALITIES = [85, 75, 65, 55, 45, 35]


@pytest.mark.parametrize(
    ("size", "max_side", "sizes"),
    [
        ((1600, 1200), 1200, [(1200, 900), (1000, 750), (800, 600)]),
        (
            (2400, 1800),
            2000,
            [
                (2000, 1500),
                (1800, 1350),
                (1600, 1200),
                (1400, 1050),
                (1200, 900),
                (1000, 750),
                (800, 600),
            ],
        ),
        ((3000, 1000), 1500, [(1500, 500), (1400, 467), (1200, 400), (1000, 333), (800, 267)]),
        ((1300, 100), 1250, [(1250, 96), (1200, 92), (1000, 77), (800, 62)]),
        # Smaller than every side: one size, tried once per quality (the repeats would give
        # the same bytes).
        ((500, 400), 1500, [(500, 400)]),
        ((100, 80), 1, [(1, 1)]),
    ],
)
def test_ladder_order_when_nothing_fits(
    encoder_calls: list[Attempt],
    size: tuple[int, int],
    max_side: int,
    sizes: list[tuple[int, int]],
) -> None:
    # Even a 1x1 JPEG is over 100 bytes: every step is tried.
    block = sanitize_image_block(
        encode(gradient(*size), "PNG"), "image/png", max_dimension_px=max_side, max_bytes=100
    )
    assert [(s, q) for s, q, _ in encoder_calls] == [(s, q) for s in sizes for q in QUALITIES]
    best = min(n for _, _, n in encoder_calls)
    assert block == omitted(f"Error: Image could not be reduced below 0MB (got {best / MIB:.2f}MB)")


def test_first_output_within_the_limit_wins(encoder_calls: list[Attempt]) -> None:
    data = encode(noise(1300, 1000, seed=7), "PNG")
    # Calibrate: a limit that q85 at 1200 px misses and a later step meets.
    probe = sanitize_image_block(data, "image/png", max_bytes=1)
    assert probe["type"] == "text"
    sizes = {(s, q): n for s, q, n in encoder_calls}
    limit = (sizes[((1200, 923), 85)] + sizes[((1200, 923), 65)]) // 2
    encoder_calls.clear()
    block = sanitize_image_block(data, "image/png", max_bytes=limit)
    image, nbytes = decoded(block)
    assert [n <= limit for _, _, n in encoder_calls] == [False] * (len(encoder_calls) - 1) + [True]
    assert image.size == encoder_calls[-1][0] == encoder_calls[0][0] == (1200, 923)
    assert nbytes == encoder_calls[-1][2] <= limit
    assert encoder_calls[-1][1] < 85


def test_failure_text_uses_javascript_to_fixed(monkeypatch: pytest.MonkeyPatch) -> None:
    # 0.5 MB and 1.125 MB sit exactly between two roundings: toFixed rounds both up (Python's
    # format would give "0" and "1.12").
    monkeypatch.setattr(
        images, "_encode_jpeg", lambda image, quality: b"\0" * (1179648 + 85 - quality)
    )
    data = encode(gradient(2000, 100), "PNG")
    block = sanitize_image_block(data, "image/png", max_bytes=MIB // 2, label="tool:x")
    assert block == {
        "type": "text",
        "text": "[tool:x] omitted image payload: Error: Image could not be reduced below 1MB (got 1.13MB)",
    }


def test_noisy_image_that_cannot_be_reduced() -> None:
    block = sanitize_image_block(encode(noise(1500, 1500), "PNG"), "image/png", max_bytes=20_000)
    match = re.fullmatch(
        r"\[session:history\] omitted image payload: Error: Image could not be reduced below 0MB \(got (\d+\.\d\d)MB\)",
        block["text"],
    )
    assert match is not None, block
    assert float(match.group(1)) > 20_000 / MIB


def test_limits_below_one_count_as_one() -> None:
    data = encode(gradient(3, 2), "PNG")
    assert decoded(sanitize_image_block(data, "image/png", max_dimension_px=0))[0].size == (1, 1)
    assert decoded(sanitize_image_block(data, "image/png", max_dimension_px=1.9))[0].size == (1, 1)
    assert decoded(sanitize_image_block(data, "image/png", max_dimension_px=2.9))[0].size == (2, 1)
    text = sanitize_image_block(data, "image/png", max_bytes=-5)["text"]
    assert text.startswith(
        "[session:history] omitted image payload: Error: Image could not be reduced below 0MB (got 0.00MB)"
    )


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"max_dimension_px": "1200"}, TypeError),
        ({"max_bytes": True}, TypeError),
        ({"max_dimension_px": float("nan")}, ValueError),
        ({"max_bytes": float("inf")}, ValueError),
    ],
)
def test_bad_limits_are_errors(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        sanitize_image_block(encode(gradient(4, 4), "PNG"), "image/png", **kwargs)


# ---- image modes and orientation ---------------------------------------------------------------


def test_transparency_is_flattened_onto_white() -> None:
    image = Image.new("RGBA", (2400, 1200), (0, 0, 0, 0))
    image.paste((200, 0, 0, 255), (0, 0, 1200, 1200))
    out, _ = decoded(sanitize_image_block(encode(image, "PNG"), "image/png"))
    assert (out.mode, out.size) == ("RGB", (1200, 600))
    red, background = out.getpixel((100, 300)), out.getpixel((1100, 300))
    assert isinstance(red, tuple) and isinstance(background, tuple)
    assert red[0] > 150 and red[1] < 60, red
    assert min(background) > 240, background


@pytest.mark.parametrize(
    ("make", "fmt"),
    [
        (lambda: gradient(1600, 800).convert("P"), "PNG"),
        (lambda: gradient(1600, 800).convert("P"), "GIF"),
        (lambda: gradient(1600, 800, "L"), "PNG"),
        (lambda: gradient(1600, 800, "L").convert("LA"), "PNG"),
        (lambda: gradient(1600, 800, "L").convert("1"), "PNG"),
        (lambda: gradient(1600, 800).convert("CMYK"), "JPEG"),
        (lambda: gradient(1600, 800).convert("RGBA"), "WEBP"),
        (lambda: gradient(1600, 800).convert("RGBA"), "TIFF"),
    ],
)
def test_every_mode_becomes_an_rgb_jpeg(make: Callable[[], Image.Image], fmt: str) -> None:
    source = make()
    out, _ = decoded(sanitize_image_block(encode(source, fmt), "image/x"))
    assert (out.format, out.mode, out.size) == ("JPEG", "RGB", (1200, 600)), source.mode


def test_sixteen_bit_grayscale_is_scaled_not_clipped() -> None:
    image = Image.new("I;16", (1600, 100), 0)
    image.paste(Image.new("I;16", (800, 100), 32768), (800, 0))
    assert image.getpixel((1000, 50)) == 32768
    out, _ = decoded(sanitize_image_block(encode(image, "PNG"), "image/png"))
    assert out.size == (1200, 75)
    dark, mid = out.getpixel((100, 40)), out.getpixel((1100, 40))
    assert isinstance(dark, tuple) and isinstance(mid, tuple)
    assert max(dark) < 10 and 110 < mid[0] < 145, (dark, mid)


def test_exif_orientation_is_applied() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise when shown
    data = encode(gradient(2000, 1000), "JPEG", exif=exif.tobytes())
    out, _ = decoded(sanitize_image_block(data, "image/jpeg"))
    assert out.size == (600, 1200)


def test_large_jpeg_is_reduced() -> None:
    data = encode(noise(3000, 2000, seed=3), "JPEG", quality=95)
    assert len(base64.b64decode(data)) > 5 * MIB
    out, nbytes = decoded(sanitize_image_block(data, "image/jpeg"))
    assert out.size == (1200, 800)
    assert nbytes <= 5 * MIB


# ---- bad data: never a crash -------------------------------------------------------------------

UNSUPPORTED = omitted("Error: Input buffer contains unsupported image format")


@pytest.mark.parametrize(
    "data",
    [
        "!!!not base64???",
        "QUJD",  # "ABC"
        base64.b64encode(random.Random(5).randbytes(5000)).decode(),
        base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 40).decode(),  # a PNG signature only
        "iVBORw0KGgo=",  # the PNG prefix, too short
    ],
)
def test_garbage_is_replaced_by_text(data: str) -> None:
    assert sanitize_image_block(data, "image/png") == UNSUPPORTED


def test_header_cut_short_is_replaced_by_text() -> None:
    block = sanitize_image_block("/9j/4AAQSkZJRgABAQ", "image/jpeg")  # no frame header
    assert block["type"] == "text"
    assert block["text"].startswith(
        "[session:history] omitted image payload: Error: Image data could not be decoded: "
    ), block


def test_base64_is_decoded_like_node() -> None:
    data = encode(gradient(1600, 900), "PNG")
    # Whitespace inside, URL-safe characters, no padding: Node decodes all of these.
    messy = "\n".join(data[i : i + 76] for i in range(0, len(data), 76))
    messy = messy.replace("+", "-").replace("/", "_").rstrip("=")
    out, _ = decoded(sanitize_image_block(messy, "image/png"))
    assert out.size == (1200, 675)


def test_decode_image_base64() -> None:
    raw = random.Random(2).randbytes(3001)
    data = base64.b64encode(raw).decode()
    assert clawctx.history.decode_image_base64(data) == raw
    messy = " ".join(data[i : i + 5] for i in range(0, len(data), 5)).replace("/", "_")
    assert clawctx.history.decode_image_base64(messy.rstrip("=") + "\n") == raw
    assert clawctx.history.decode_image_base64("QUJD=QUJD") == b"ABC"
    assert clawctx.history.decode_image_base64("QUJDR") == b"ABC"


def test_truncated_image_needing_reencoding_is_replaced() -> None:
    raw = base64.b64decode(encode(gradient(2000, 1500), "PNG"))
    data = base64.b64encode(raw[: len(raw) // 2]).decode()
    block = sanitize_image_block(data, "image/png")
    assert block["type"] == "text"
    assert block["text"].startswith(
        "[session:history] omitted image payload: Error: Image data could not be decoded: "
    ), block


def test_truncated_image_within_limits_is_kept_like_upstream() -> None:
    # Only the header decides (upstream reads metadata): a damaged body is not noticed.
    raw = base64.b64decode(encode(noise(300, 200), "PNG"))
    data = base64.b64encode(raw[: len(raw) // 2]).decode()
    assert sanitize_image_block(data, "image/png") == {
        "type": "image",
        "data": data,
        "mimeType": "image/png",
    }


BOMB = omitted("Error: Image dimensions exceed the maximum allowed pixel count")


def test_decompression_bomb_header_is_refused_without_decoding() -> None:
    # 10^10 pixels: Pillow refuses it when opening (over twice MAX_IMAGE_PIXELS).
    assert _core.probe_base64_image(png_claiming(100_000, 100_000)) is not None
    assert sanitize_image_block(png_claiming(100_000, 100_000), "image/png") == BOMB


def test_bomb_between_pillows_warning_and_error_limits() -> None:
    data = png_claiming(10_000, 10_000)  # 10^8 pixels: Pillow only warns
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        assert sanitize_image_block(data, "image/png") == BOMB
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        assert sanitize_image_block(data, "image/png") == omitted(
            "Error: Image dimensions exceed the maximum allowed pixel count (10000x10000)"
        )


def test_pixel_limit_applies_to_images_that_are_decoded() -> None:
    data = encode(gradient(4000, 3000), "PNG")
    assert sanitize_image_block(data, "image/png", max_pixels=1_000_000) == omitted(
        "Error: Image dimensions exceed the maximum allowed pixel count (4000x3000)"
    )
    assert decoded(sanitize_image_block(data, "image/png", max_pixels=12_000_000))[0].size == (
        1200,
        900,
    )
    # An image kept as it is is never decoded, so the pixel limit does not apply.
    small = encode(gradient(100, 100), "PNG")
    assert sanitize_image_block(small, "image/png", max_pixels=10)["type"] == "image"


def test_payload_size_is_checked_before_decoding() -> None:
    data = encode(gradient(100, 100), "PNG")
    estimate = len(data) * 3 // 4
    assert sanitize_image_block(data, "image/png", max_input_bytes=estimate - 1) == omitted(
        f"Error: Image payload too large to decode ({estimate} bytes, limit {estimate - 1} bytes)"
    )
    assert sanitize_image_block(data, "image/png", max_input_bytes=estimate)["type"] == "image"


def test_unexpected_errors_become_text(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(image: Image.Image) -> Image.Image:
        raise RuntimeError("boom")

    monkeypatch.setattr(images, "_to_rgb", broken)
    block = sanitize_image_block(encode(gradient(2000, 100), "PNG"), "image/png")
    assert block == omitted("Error: Image data could not be decoded: boom")

    def encoder_fails(image: Image.Image, quality: int) -> bytes:
        raise OSError("disk full")

    monkeypatch.undo()
    monkeypatch.setattr(images, "_encode_jpeg", encoder_fails)
    block = sanitize_image_block(encode(gradient(2000, 100), "PNG"), "image/png")
    assert block == omitted("Error: Image could not be encoded as JPEG: disk full")


# ---- the Rust header probe ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "fmt", "params"),
    [
        (lambda: gradient(1201, 37), "PNG", {}),
        (lambda: gradient(37, 1201).convert("P"), "GIF", {}),
        (lambda: gradient(640, 480), "JPEG", {"progressive": True}),
        (lambda: gradient(641, 479), "JPEG", {"exif": b"Exif\0\0" + b"\0" * 30000}),
        (lambda: gradient(800, 600), "WEBP", {"quality": 50}),
        (lambda: gradient(801, 601), "WEBP", {"lossless": True}),
        (lambda: gradient(802, 602).convert("RGBA"), "WEBP", {"exif": b"Exif\0\0MM"}),
    ],
)
def test_probe_agrees_with_pillow(
    make: Callable[[], Image.Image], fmt: str, params: dict[str, Any]
) -> None:
    data = encode(make(), fmt, **params)
    raw = base64.b64decode(data)
    pillow = Image.open(io.BytesIO(raw))
    assert pillow.format == fmt
    assert _core.probe_base64_image(data) == (*pillow.size, len(raw))
    # Only plain base64 is probed; the rest goes to Pillow.
    assert _core.probe_base64_image(data[:40] + "\n" + data[40:]) is None
    assert _core.probe_base64_image(encode(make().convert("RGB"), "BMP")) is None
    assert _core.probe_base64_image(encode(make().convert("RGB"), "TIFF")) is None


# ---- sanitize_images (pi-embedded-helpers/images.ts: sanitizeSessionMessagesImages) ---------------

BIG = encode(gradient(2400, 1600), "PNG")
SMALL = encode(gradient(120, 80), "PNG")


def image_block(data: str, mime: str = "image/png", **extra: Any) -> Message:
    return {"type": "image", "data": data, "mimeType": mime, **extra}


def user(*blocks: Any) -> Message:
    return {"role": "user", "content": list(blocks), "timestamp": 1}


def assistant(*blocks: Any, stop: str = "stop") -> Message:
    return {"role": "assistant", "content": list(blocks), "stopReason": stop, "timestamp": 2}


def tool_result(*blocks: Any, details: Any = None) -> Message:
    message: Message = {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read",
        "content": list(blocks),
        "isError": False,
        "timestamp": 3,
    }
    if details is not None:
        message["details"] = details
    return message


def content(messages: clawctx.Transcript, index: int) -> Any:
    return messages[index]["content"]


def test_roles_that_are_sanitized() -> None:
    text = {"type": "text", "text": "look"}
    messages = [
        user(text, image_block(BIG)),
        assistant(image_block(BIG), stop="error"),
        assistant(text, image_block(BIG)),
        tool_result(text, image_block(BIG)),
        {"role": "custom", "customType": "x", "content": [image_block(BIG)], "display": True},
        {"role": "toolResult", "toolCallId": "c", "content": "plain text result"},
        {"role": "bashExecution", "command": "ls", "output": "", "content": [image_block(BIG)]},
    ]
    out = sanitize_images(messages)
    for index, position in [(0, 1), (1, 0), (2, 1), (3, 1)]:
        block = content(out, index)[position]
        assert block["mimeType"] == "image/jpeg", index
        assert decoded(block)[0].size == (1200, 800)
    assert content(out, 0)[0] == text
    # sanitizeSessionMessagesImages leaves other roles unchanged; a string tool result keeps its string (upstream
    # would replace it by [], a quirk not copied).
    assert out[4] == messages[4] and out[5] == messages[5] and out[6] == messages[6]


def test_replacements_keep_other_fields_and_order() -> None:
    messages = [
        user(
            {"type": "text", "text": "a"},
            image_block(BIG, "image/whatever", cacheControl={"type": "ephemeral"}),
            image_block(""),
            image_block("!!bad!!"),
        )
    ]
    out = sanitize_images(messages, label="tool:read")
    blocks = content(out, 0)
    assert list(blocks[1]) == ["type", "data", "mimeType", "cacheControl"]
    assert blocks[1]["cacheControl"] == {"type": "ephemeral"}
    assert blocks[1]["mimeType"] == "image/jpeg"
    assert blocks[2] == {"type": "text", "text": "[tool:read] omitted empty image payload"}
    assert blocks[3] == omitted(
        "Error: Input buffer contains unsupported image format", "tool:read"
    )


def test_blocks_that_are_not_image_blocks_are_left_alone() -> None:
    messages = [
        user(
            {"type": "image", "data": BIG},  # no mimeType
            {"type": "image", "data": 5, "mimeType": "image/png"},
            {"type": "image", "source": {"type": "base64", "data": BIG}},
            "string block",
            {"type": "imageUrl", "data": BIG, "mimeType": "image/png"},
        )
    ]
    transcript = clawctx.Transcript(messages)
    assert _core.find_image_blocks(transcript) == []
    assert sanitize_images(transcript) is transcript


def test_per_result_limit_overrides() -> None:
    messages = [
        tool_result(image_block(BIG), details={"imageSanitization": {"maxDimensionPx": 500}}),
        tool_result(image_block(BIG), details={"imageSanitization": {"maxBytes": 100}}),
        tool_result(image_block(BIG), details={"imageSanitization": {"maxDimensionPx": 3000}}),
        tool_result(image_block(BIG), details={"imageSanitization": {"maxDimensionPx": "500"}}),
        tool_result(image_block(BIG), details={"imageSanitization": [500]}),
        tool_result(image_block(BIG), details={"other": 1}),
        # Only tool results carry overrides.
        {**user(image_block(BIG)), "details": {"imageSanitization": {"maxDimensionPx": 500}}},
    ]
    out = sanitize_images(messages, max_dimension_px=800)
    assert decoded(content(out, 0)[0])[0].size == (500, 333)
    assert content(out, 1)[0]["text"].startswith(
        "[session:history] omitted image payload: Error: Image could not be reduced below 0MB (got "
    )
    assert content(out, 2)[0] == image_block(BIG)  # 2400 px is within the raised limit
    for index in (3, 4, 5, 6):
        assert decoded(content(out, index)[0])[0].size == (800, 533), index


def test_find_image_blocks_reports_positions_roles_and_overrides() -> None:
    messages = [
        user({"type": "text", "text": "x"}, image_block(SMALL, "image/jpeg")),
        {"role": "user", "content": "text only"},
        tool_result(
            image_block(BIG),
            image_block(" " + SMALL),
            details={"imageSanitization": {"maxDimensionPx": 640.5, "maxBytes": 1000}},
        ),
        assistant(image_block(SMALL), stop="error"),
    ]
    refs = clawctx.history.find_image_blocks(messages)
    assert [(r.message_index, r.block_index, r.role) for r in refs] == [
        (0, 1, "user"),
        (2, 0, "toolResult"),
        (2, 1, "toolResult"),
        (3, 0, "assistant"),
    ]
    assert [r.mime_type for r in refs] == ["image/jpeg", "image/png", "image/png", "image/png"]
    assert refs[2].data == " " + SMALL
    assert (refs[1].max_dimension_px, refs[1].max_bytes) == (640.5, 1000.0)
    assert (refs[0].max_dimension_px, refs[0].max_bytes) == (None, None)
    # Skipping blocks kept as they are: the mime fix and the trim still need Python.
    kept = clawctx.history.find_image_blocks(messages, skip_within_limits=True)
    assert [(r.message_index, r.block_index) for r in kept] == [(0, 1), (2, 0), (2, 1)]
    assert [
        (r.message_index, r.block_index)
        for r in clawctx.history.find_image_blocks(
            messages, skip_within_limits=True, max_dimension_px=100
        )
    ] == [(0, 1), (2, 0), (2, 1), (3, 0)]


def test_blocks_kept_as_they_are_never_reach_python(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = images.sanitize_image_block

    def recording(data: str, mime_type: str, **kwargs: Any) -> dict[str, str]:
        seen.append(data)
        return real(data, mime_type, **kwargs)

    monkeypatch.setattr(images, "sanitize_image_block", recording)
    jpeg = encode(gradient(300, 200), "JPEG")
    gif = encode(gradient(300, 200).convert("P"), "GIF")
    webp = encode(gradient(300, 200), "WEBP")
    transcript = clawctx.Transcript(
        [
            user(image_block(SMALL), image_block(jpeg, "image/jpeg")),
            assistant(image_block(gif, "image/gif")),
            tool_result(image_block(webp, "image/webp")),
        ]
    )
    assert sanitize_images(transcript) is transcript
    assert seen == []
    changed = clawctx.Transcript(
        [user(image_block(SMALL, "image/jpeg"), image_block(BIG), image_block(SMALL))]
    )
    out = sanitize_images(changed)
    assert seen == [SMALL, BIG]
    assert content(out, 0)[0] == image_block(SMALL)  # mime type fixed from the base64 prefix


def test_identity_when_nothing_changes() -> None:
    transcript = clawctx.Transcript(
        [
            user({"type": "text", "text": "hi"}),
            user(image_block(SMALL)),
            {"role": "user", "content": "plain"},
            tool_result(image_block(encode(gradient(30, 30), "BMP"), "image/bmp")),
        ]
    )
    assert sanitize_images(transcript) is transcript
    assert sanitize_images(clawctx.Transcript()) == clawctx.Transcript()
    from_list = sanitize_images(transcript.to_list())
    assert isinstance(from_list, clawctx.Transcript)
    assert from_list == transcript
    # The Rust replace hands back the input when there is nothing to replace.
    assert _core.replace_content_blocks(transcript, []) is transcript


def test_untouched_messages_keep_their_exact_bytes() -> None:
    texts = [
        '{"role": "user",  "content": [{"type":"text","text":"caf\\u00e9"}], "n": 1.50}',
        json.dumps(user(image_block(BIG))),
        '{ "role":"toolResult", "content":[{"type":"image","data":"'
        + SMALL
        + '","mimeType":"image/png"}], "x": 1e2 }',
        '{"role":"assistant","content":[{"type":"image","data":"","mimeType":"image/png"}],"stopReason":"error"}',
    ]
    transcript = clawctx.Transcript.from_json("[" + ",\n".join(texts) + "]")
    out = sanitize_images(transcript)
    for index in (0, 2):
        assert out[index : index + 1].to_json() == transcript[index : index + 1].to_json()
        assert out[index : index + 1].to_json() == b"[" + texts[index].encode() + b"]"
    assert out[1]["content"][0]["mimeType"] == "image/jpeg"
    assert out[3]["content"] == [
        {"type": "text", "text": "[session:history] omitted empty image payload"}
    ]
    assert out[3]["stopReason"] == "error"


def test_parallel_equals_sequential(monkeypatch: pytest.MonkeyPatch) -> None:
    threads: set[str] = set()
    real = images.sanitize_image_block

    def recording(data: str, mime_type: str, **kwargs: Any) -> dict[str, str]:
        threads.add(threading.current_thread().name)
        return real(data, mime_type, **kwargs)

    monkeypatch.setattr(images, "sanitize_image_block", recording)
    blocks = [image_block(encode(gradient(1300 + 50 * i, 900), "PNG")) for i in range(4)] + [
        image_block(""),
        image_block("???"),
        image_block(encode(noise(900, 900, seed=9), "PNG")),
    ]
    messages = [
        user(*blocks[:3]),
        tool_result(*blocks[3:5], details={"imageSanitization": {"maxBytes": 50_000}}),
        user(*blocks[5:]),
    ]
    transcript = clawctx.Transcript(messages)
    sequential = sanitize_images(transcript, max_workers=1)
    assert threads == {threading.current_thread().name}
    threads.clear()
    parallel = sanitize_images(transcript, max_workers=4)
    assert any(name.startswith("clawctx-images") for name in threads), threads
    assert parallel.to_json() == sequential.to_json()
    # Each block of the result is what sanitize_image_block gives for it alone.
    for ref in _core.find_image_blocks(transcript):
        limits: dict[str, Any] = {}
        if ref.max_bytes is not None:
            limits["max_bytes"] = ref.max_bytes
        expected = real(ref.data, ref.mime_type, **limits)
        got = parallel[ref.message_index]["content"][ref.block_index]
        assert got == expected or got == {
            **messages[ref.message_index]["content"][ref.block_index],
            **expected,
        }


def test_max_workers_must_be_positive() -> None:
    for bad in (0, -1, True):
        with pytest.raises(ValueError):
            sanitize_images([user(image_block(SMALL))], max_workers=bad)


def test_replace_content_blocks_checks_its_arguments() -> None:
    transcript = clawctx.Transcript([user(image_block(SMALL)), {"role": "user", "content": "s"}])
    with pytest.raises(ValueError, match="message index 2 out of range"):
        clawctx.history.replace_content_blocks(transcript, [(2, 0, {})])
    with pytest.raises(ValueError, match="block index 1 out of range"):
        clawctx.history.replace_content_blocks(transcript, [(0, 1, {})])
    with pytest.raises(ValueError, match="no content array"):
        clawctx.history.replace_content_blocks(transcript, [(1, 0, {})])
    with pytest.raises(TypeError):
        clawctx.history.replace_content_blocks(transcript, [(0, 0)])
    with pytest.raises(TypeError):
        clawctx.history.replace_content_blocks(transcript, [(0, 0, "text", True)])
    merged = clawctx.history.replace_content_blocks(
        transcript, [(0, 0, {"mimeType": "image/x", "z": 1}, True)]
    )
    assert merged[0]["content"] == [{**image_block(SMALL, "image/x"), "z": 1}]
    replaced = clawctx.history.replace_content_blocks(
        transcript, [(0, 0, {"type": "text", "text": "t"})]
    )
    assert replaced[0]["content"] == [{"type": "text", "text": "t"}]
    assert replaced[1:].to_json() == transcript[1:].to_json()


# ---- configuration -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (800, {"max_dimension_px": 800}),
        (800.9, {"max_dimension_px": 800}),
        (0.5, {"max_dimension_px": 1}),
        (-20, {"max_dimension_px": 1}),
        ("800", {}),
        (True, {}),
        (None, {}),
        (float("inf"), {}),
        (float("nan"), {}),
    ],
)
def test_image_limits_from_config(value: Any, expected: dict[str, int]) -> None:
    config = {"agents": {"defaults": {"imageMaxDimensionPx": value}}}
    assert clawctx.history.image_limits_from_config(config) == expected


def test_image_limits_from_config_without_the_setting() -> None:
    for config in (
        None,
        {},
        {"agents": None},
        {"agents": {"defaults": []}},
        {"agents": {"list": []}},
    ):
        assert clawctx.history.image_limits_from_config(config) == {}


def test_config_limit_applies_to_sanitize_images() -> None:
    limits = clawctx.history.image_limits_from_config(
        {"agents": {"defaults": {"imageMaxDimensionPx": 640.7}}}
    )
    out = sanitize_images([user(image_block(BIG))], **limits)
    assert decoded(content(out, 0)[0])[0].size == (640, 427)


def test_defaults_match_the_spec() -> None:
    assert clawctx.history.DEFAULT_IMAGE_MAX_DIMENSION_PX == 1200
    assert clawctx.history.DEFAULT_IMAGE_MAX_BYTES == 5 * 1024 * 1024
