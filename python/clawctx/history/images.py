"""Image sanitization of transcripts (OpenClaw 2026.3.13
`src/agents/pi-embedded-helpers/images.ts` and `src/agents/tool-images.ts`) with Pillow.

:func:`sanitize_images` is OpenClaw's ``sanitizeSessionMessagesImages`` image pass: the Rust core
finds the image blocks it sanitizes (tool results, user array content, errored assistants,
other assistants' array content) without building Python objects for other messages; each block
goes through :func:`sanitize_image_block` (tool-images.ts, ``resizeImageBase64IfNeeded``), in
parallel threads when there are several (Pillow releases the GIL while decoding, resizing and
encoding); the changed blocks are written back by the Rust core, which keeps every other message's
exact text.

Choices where upstream leaves room (pixel output depends on the image library, so compare
dimensions, mime types and byte bounds, not bytes):

* Errors other than "could not be reduced" are reported as ``Error: <message>`` (JavaScript's
  ``String(err)``), with these messages: ``Input buffer contains unsupported image format``
  (not an image Pillow can read; sharp's text), ``Image dimensions exceed the maximum allowed
  pixel count (<W>x<H>)`` (decompression-bomb guard), ``Image payload too large to decode
  (<N> bytes, limit <M> bytes)`` (checked on the base64 length before decoding), ``Image data
  could not be decoded: <Pillow's message>`` (corrupt or truncated data) and ``Image could not
  be encoded as JPEG: <message>``.
* Only the header is read to decide whether an image is within the limits (as upstream reads
  metadata): an image whose header is valid and within limits is kept even if its pixel data
  is damaged. PNG, GIF, JPEG and WebP headers of plain base64 payloads are read in Rust
  (``_core.probe_base64_image``), decoding only the header bytes; :func:`sanitize_images` uses
  the same probe to leave blocks that stay as they are in Rust, so only blocks that change or
  need Pillow become Python objects. Other formats are opened with Pillow (header only).
  Full decoding happens only for images that need re-encoding, and only when their pixel
  count is at most ``max_pixels`` (default: Pillow's ``Image.MAX_IMAGE_PIXELS``; Pillow itself
  refuses images over twice that when opening them).
* Base64 is decoded like Node's ``Buffer.from(data, "base64")`` (in Rust, without the GIL):
  whitespace and characters outside the alphabet are skipped, URL-safe ``-``/``_`` are
  accepted, decoding stops at the first ``=``.
* Re-encoding applies the EXIF orientation (sharp's ``rotate()``), flattens transparency onto
  white, converts every mode to RGB (16-bit grayscale scaled to 8 bits), resizes with Lanczos
  to fit a ``side`` x ``side`` box without enlarging, and writes baseline JPEG with optimized
  Huffman tables. Ladder steps whose output size equals an earlier step's are not encoded
  again (they would give the same bytes). Large JPEGs are decoded at a reduced DCT scale that
  still covers the first ladder side.
* A tool result whose ``content`` is a string keeps it (upstream replaces it with ``[]``).
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import io
import math
import os
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any, Final, TypedDict

from clawctx import _core
from clawctx._js import js_trim as _js_trim
from clawctx.errors import ClawctxError

if TYPE_CHECKING:
    from PIL import Image

__all__ = [
    "DEFAULT_IMAGE_LABEL",
    "DEFAULT_IMAGE_MAX_BYTES",
    "DEFAULT_IMAGE_MAX_DIMENSION_PX",
    "DEFAULT_MAX_INPUT_BYTES",
    "IMAGE_REDUCE_QUALITY_STEPS",
    "IMAGE_RESIZE_SIDES",
    "ImageLimits",
    "image_limits_from_config",
    "sanitize_image_block",
    "sanitize_images",
]

#: Default longest side in pixels (image-sanitization.ts, DEFAULT_IMAGE_MAX_DIMENSION_PX; config
#: ``agents.defaults.imageMaxDimensionPx``).
DEFAULT_IMAGE_MAX_DIMENSION_PX: Final = 1200
#: Default maximum decoded size of an image in bytes (image-sanitization.ts,
#: DEFAULT_IMAGE_MAX_BYTES).
DEFAULT_IMAGE_MAX_BYTES: Final = 5 * 1024 * 1024
#: The label OpenClaw uses for session history (tool-images.ts, sanitizeContentBlocksImages).
DEFAULT_IMAGE_LABEL: Final = "session:history"
#: Payloads whose decoded size would exceed this are replaced without being decoded.
DEFAULT_MAX_INPUT_BYTES: Final = 64 * 1024 * 1024
#: JPEG qualities tried at each side (tool-images.ts, resizeImageBase64IfNeeded).
IMAGE_REDUCE_QUALITY_STEPS: Final = (85, 75, 65, 55, 45, 35)
#: Fixed sides of the resize ladder after the image's own capped side (resizeImageBase64IfNeeded).
IMAGE_RESIZE_SIDES: Final = (1800, 1600, 1400, 1200, 1000, 800)

_MIB: Final = 1024 * 1024


class ImageLimits(TypedDict, total=False):
    """Keyword arguments of :func:`sanitize_images` taken from OpenClaw's config."""

    max_dimension_px: int


class _ImageError(ClawctxError):
    """A failure reported in the replacement text as ``Error: <message>``."""


def image_limits_from_config(config: Mapping[str, Any] | None) -> ImageLimits:
    """``resolveImageSanitizationLimits``: ``agents.defaults.imageMaxDimensionPx`` floored, at
    least 1, when it is a finite number (image-sanitization.ts); ``{}`` otherwise.

    The result is meant to be spread into :func:`sanitize_images`:
    ``sanitize_images(messages, **image_limits_from_config(config))``.
    """
    agents = config.get("agents") if isinstance(config, Mapping) else None
    defaults = agents.get("defaults") if isinstance(agents, Mapping) else None
    value = defaults.get("imageMaxDimensionPx") if isinstance(defaults, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return {}
    return {"max_dimension_px": max(1, math.floor(value))}


def _infer_mime_type(trimmed: str) -> str | None:
    """The mime type a base64 payload's first characters identify (tool-images.ts,
    inferMimeTypeFromBase64)."""
    if trimmed.startswith("/9j/"):
        return "image/jpeg"
    if trimmed.startswith("iVBOR"):
        return "image/png"
    if trimmed.startswith("R0lGOD"):
        return "image/gif"
    return None


def _to_fixed(value: float, digits: int) -> str:
    """JavaScript's ``Number.prototype.toFixed`` (half up on the exact binary value)."""
    quantum = Decimal(1).scaleb(-digits)
    return format(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP), "f")


def _number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, not {value!r}")
    return value


def _decoded_size_estimate(trimmed: str) -> int:
    return len(trimmed) * 3 // 4


def _text_block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _image_block(data: str, mime_type: str) -> dict[str, str]:
    return {"type": "image", "data": data, "mimeType": mime_type}


def _fit_inside(size: tuple[int, int], side: int) -> tuple[int, int]:
    """The size fitting a ``side`` x ``side`` box, keeping the aspect ratio, never larger."""
    width, height = size
    if max(width, height) <= side:
        return size
    if width >= height:
        return side, max(1, math.floor(height * side / width + 0.5))
    return max(1, math.floor(width * side / height + 0.5)), side


def _to_rgb(image: Image.Image) -> Image.Image:
    """The image as RGB, transparency flattened onto white (JPEG has no alpha)."""
    from PIL import Image

    mode = image.mode
    if mode == "RGB":
        return image
    if mode.startswith("I;16") or mode == "I":
        # 16-bit grayscale: scale to 8 bits instead of clipping.
        image = image.convert("I").point(lambda v: v * (1 / 256)).convert("L")
        return image.convert("RGB")
    if mode == "F":
        return image.convert("L").convert("RGB")
    has_alpha = mode in ("RGBA", "LA", "PA", "RGBa", "La") or (
        mode == "P" and "transparency" in image.info
    )
    if has_alpha:
        rgba = image.convert("RGBA")
        flat = Image.new("RGB", rgba.size, (255, 255, 255))
        flat.paste(rgba, mask=rgba.getchannel("A"))
        return flat
    return image.convert("RGB")


def _encode_jpeg(image: Image.Image, quality: int) -> bytes:
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=quality, optimize=True)
    return out.getvalue()


def _require_pillow() -> None:
    """Pillow (the ``images`` extra) checks and re-encodes image payloads.

    Called before any payload is looked at, outside the handlers that turn a failing image
    into a placeholder, so that a missing Pillow never silently replaces images.
    """
    try:
        importlib.import_module("PIL.Image")
    except ImportError as exc:
        raise ImportError(
            'clawctx needs Pillow to check and shrink images: pip install "clawctx[images]"',
            name="PIL",
        ) from exc


def _open(raw: bytes) -> Image.Image:
    """Opens an image reading its header only; bombs and unknown formats are `_ImageError`."""
    from PIL import Image, UnidentifiedImageError

    try:
        return Image.open(io.BytesIO(raw))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        # The warning is an exception only when warnings are turned into errors; otherwise
        # Pillow warns and the pixel check in _reencode refuses the image.
        raise _ImageError("Image dimensions exceed the maximum allowed pixel count") from exc
    except UnidentifiedImageError as exc:
        raise _ImageError("Input buffer contains unsupported image format") from exc
    except Exception as exc:
        raise _ImageError(f"Image data could not be decoded: {exc}") from exc


def _reencode(
    image: Image.Image, max_side: int, max_bytes: float, max_pixels: int
) -> dict[str, str]:
    """The JPEG ladder of ``resizeImageBase64IfNeeded`` (tool-images.ts): sides and qualities
    tried in order, an error when nothing fits."""
    from PIL import Image, ImageOps

    width, height = image.size
    if width * height > max_pixels:
        raise _ImageError(
            f"Image dimensions exceed the maximum allowed pixel count ({width}x{height})"
        )
    largest = max(width, height)
    side_start = min(max_side, largest) if largest > 0 else max_side
    sides = sorted(
        {min(max_side, side) for side in (side_start, *IMAGE_RESIZE_SIDES)}, reverse=True
    )
    try:
        if image.format in ("JPEG", "MPO") and largest > sides[0]:
            # Decode at the smallest DCT scale that still covers the first ladder size.
            image.draft(None, _fit_inside((width, height), sides[0]))
        image.load()
    except MemoryError as exc:
        raise _ImageError("Image data could not be decoded: out of memory") from exc
    except Exception as exc:
        raise _ImageError(f"Image data could not be decoded: {exc}") from exc
    with contextlib.suppress(Exception):  # unreadable orientation: keep the stored one
        ImageOps.exif_transpose(image, in_place=True)
    try:
        rgb = _to_rgb(image)
    except Exception as exc:
        raise _ImageError(f"Image data could not be decoded: {exc}") from exc

    tried: set[tuple[int, int]] = set()
    smallest: int | None = None
    try:
        for side in sides:
            size = _fit_inside(rgb.size, side)
            if size in tried:
                continue  # same size as an earlier step: the same output again
            tried.add(size)
            resized = (
                rgb
                if size == rgb.size
                else rgb.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
            )
            for quality in IMAGE_REDUCE_QUALITY_STEPS:
                out = _encode_jpeg(resized, quality)
                if smallest is None or len(out) < smallest:
                    smallest = len(out)
                if len(out) <= max_bytes:
                    return _image_block(base64.b64encode(out).decode("ascii"), "image/jpeg")
    except MemoryError as exc:
        raise _ImageError("Image could not be encoded as JPEG: out of memory") from exc
    except Exception as exc:
        raise _ImageError(f"Image could not be encoded as JPEG: {exc}") from exc
    best = smallest if smallest is not None else 0
    raise _ImageError(
        f"Image could not be reduced below {_to_fixed(max_bytes / _MIB, 0)}MB"
        f" (got {_to_fixed(best / _MIB, 2)}MB)"
    )


def sanitize_image_block(
    data: str,
    mime_type: str,
    *,
    max_dimension_px: float = DEFAULT_IMAGE_MAX_DIMENSION_PX,
    max_bytes: float = DEFAULT_IMAGE_MAX_BYTES,
    label: str = DEFAULT_IMAGE_LABEL,
    max_pixels: int | None = None,
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
) -> dict[str, str]:
    """Sanitizes one image block's payload (tool-images.ts, ``resizeImageBase64IfNeeded``); never
    raises for bad image data.

    Returns the content block to use: ``{"type": "image", "data", "mimeType"}`` or, when the
    image is dropped, ``{"type": "text", "text"}``:

    * ``data`` blank after trimming: ``"[<label>] omitted empty image payload"``;
    * the mime type is inferred from the payload's first characters (``/9j/`` JPEG, ``iVBOR``
      PNG, ``R0lGOD`` GIF), else ``mime_type``;
    * width and height at most ``max_dimension_px`` and decoded size at most ``max_bytes``:
      the trimmed data with that mime type;
    * otherwise the first JPEG of the ladder (sides: the capped longest side, 1800 … 800 capped
      at ``max_dimension_px``, descending; qualities 85 … 35) of at most ``max_bytes``;
    * nothing fits: ``"[<label>] omitted image payload: Error: Image could not be reduced below
      <max MB, 0 decimals>MB (got <smallest MB, 2 decimals>MB)"``; any other failure:
      ``"[<label>] omitted image payload: Error: <message>"`` (see the module docstring).

    Limits below 1 count as 1; ``max_dimension_px`` is floored. ``max_pixels`` (default:
    Pillow's ``Image.MAX_IMAGE_PIXELS``) bounds the images that are decoded, ``max_input_bytes``
    the payloads that are base64-decoded at all.
    """
    max_side = max(1, math.floor(_number(max_dimension_px, "max_dimension_px")))
    byte_limit = max(_number(max_bytes, "max_bytes"), 1)
    _require_pillow()
    if max_pixels is None:
        from PIL import Image

        pixel_limit = Image.MAX_IMAGE_PIXELS or 2**62
    else:
        pixel_limit = max(1, int(_number(max_pixels, "max_pixels")))
    input_limit = int(_number(max_input_bytes, "max_input_bytes"))

    trimmed = _js_trim(data)
    if not trimmed:
        return _text_block(f"[{label}] omitted empty image payload")
    mime = _infer_mime_type(trimmed) or mime_type
    try:
        estimate = _decoded_size_estimate(trimmed)
        if estimate > input_limit:
            raise _ImageError(
                f"Image payload too large to decode ({estimate} bytes, limit {input_limit} bytes)"
            )
        probe = _core.probe_base64_image(trimmed)
        if probe is not None:
            # PNG, GIF, JPEG and WebP headers are read in Rust, without decoding the payload.
            width, height, size = probe
            if width <= max_side and height <= max_side and size <= byte_limit:
                return _image_block(trimmed, mime)
        raw = _core.decode_image_base64(trimmed)  # without the GIL
        with _open(raw) as image:
            width, height = image.size
            if (
                width > 0
                and height > 0
                and len(raw) <= byte_limit
                and width <= max_side
                and height <= max_side
            ):
                return _image_block(trimmed, mime)
            return _reencode(image, max_side, byte_limit, pixel_limit)
    except _ImageError as exc:
        return _text_block(f"[{label}] omitted image payload: Error: {exc}")
    except Exception as exc:  # anything unforeseen in Pillow: a replacement, never a crash
        message = str(exc) or type(exc).__name__
        return _text_block(f"[{label}] omitted image payload: Error: {message}")


def sanitize_images(
    messages: _core.Transcript | Iterable[Mapping[str, Any]],
    *,
    max_dimension_px: float = DEFAULT_IMAGE_MAX_DIMENSION_PX,
    max_bytes: float = DEFAULT_IMAGE_MAX_BYTES,
    label: str = DEFAULT_IMAGE_LABEL,
    max_workers: int | None = None,
    max_pixels: int | None = None,
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
) -> _core.Transcript:
    """The image pass of ``sanitizeSessionMessagesImages`` (images.ts; blocks by tool-images.ts).

    Every image block of a tool result, a user message with array content, an errored
    assistant or another assistant with array content goes through
    :func:`sanitize_image_block`. A tool result's ``details.imageSanitization.maxDimensionPx``
    and ``.maxBytes`` (numbers) replace ``max_dimension_px`` / ``max_bytes`` for its blocks.
    A kept or re-encoded image keeps its other fields (only ``data`` and ``mimeType`` change);
    a dropped one becomes a text block.

    Several blocks are processed in a thread pool of ``max_workers`` threads (default: one per
    CPU, at most one per block; ``1`` runs them in the calling thread); each thread may hold
    one decoded image of up to ``max_pixels`` pixels at a time. Returns a
    ``Transcript``: the input itself when it is a ``Transcript`` and nothing changed. Messages
    not touched keep their exact text.
    """
    if max_workers is not None and (isinstance(max_workers, bool) or max_workers < 1):
        raise ValueError(f"max_workers must be at least 1, not {max_workers!r}")
    if max_pixels is not None:
        _number(max_pixels, "max_pixels")
    transcript = messages if isinstance(messages, _core.Transcript) else _core.Transcript(messages)
    # Blocks the Rust header probe shows to be kept as they are never reach Python.
    refs = _core.find_image_blocks(
        transcript,
        skip_within_limits=True,
        max_dimension_px=_number(max_dimension_px, "max_dimension_px"),
        max_bytes=_number(max_bytes, "max_bytes"),
        max_input_bytes=_number(max_input_bytes, "max_input_bytes"),
    )
    if not refs:
        return transcript

    def sanitize(ref: _core.ImageBlockRef) -> dict[str, str]:
        return sanitize_image_block(
            ref.data,
            ref.mime_type,
            max_dimension_px=max_dimension_px
            if ref.max_dimension_px is None
            else ref.max_dimension_px,
            max_bytes=max_bytes if ref.max_bytes is None else ref.max_bytes,
            label=label,
            max_pixels=max_pixels,
            max_input_bytes=max_input_bytes,
        )

    workers = min(len(refs), max_workers or os.cpu_count() or 1)
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="clawctx-images") as pool:
            blocks = list(pool.map(sanitize, refs))
    else:
        blocks = [sanitize(ref) for ref in refs]

    replacements: list[tuple[int, int, dict[str, str], bool]] = []
    for ref, block in zip(refs, blocks, strict=True):
        if block["type"] == "image":
            if block["data"] != ref.data or block["mimeType"] != ref.mime_type:
                fields = {"data": block["data"], "mimeType": block["mimeType"]}
                replacements.append((ref.message_index, ref.block_index, fields, True))
        else:
            replacements.append((ref.message_index, ref.block_index, block, False))
    return _core.replace_content_blocks(transcript, replacements)
