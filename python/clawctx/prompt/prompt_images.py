"""Prompt image detection, loading and history re-injection (OpenClaw
2026.3.13 `src/agents/pi-embedded-runner/run/images.ts`, ``detectAndLoadPromptImages``; upstream
tests in `run/images.test.ts`).

A vision model gets the images a prompt refers to by local path: :func:`detect_image_references`
finds the references (``detectImageReferences``), :func:`load_image_ref` reads one file safely
(``loadImageFromRef``),
:func:`detect_and_load_prompt_images` does both for the prompt and for earlier user messages
(``detectAndLoadPromptImages``) and :func:`inject_history_images_into_messages` puts the history
images back into their messages (later OpenClaw run/attempt.ts, not in 2026.3.13).

Choices where the baseline leaves room, all on the safe side:

* Loading is confined to one root (``sandbox_root`` if given, else ``workspace_dir``) for every
  reference, absolute ones included; the file is opened by walking from a descriptor of the
  root without letting the kernel follow any symlink (symlinks staying inside the root are
  followed by clawctx itself), so swapping a directory for a symlink mid-load cannot escape the
  root. Upstream confines only sandboxed runs. Only regular files are read, their size is
  checked before reading, and the content must start with the magic bytes of PNG, JPEG, GIF,
  WebP, BMP, TIFF or HEIC/HEIF (upstream falls back to the file extension).
  The MIME type is the sniffed one.
* Caller-supplied ``existing_images`` always go through sanitization (upstream skips it when the
  prompt holds no reference); sanitizing an image already within limits returns it unchanged.
* History text is the message's string content, or its text blocks joined with ``\\n``.
"""

from __future__ import annotations

import base64
import errno
import logging
import os
import re
import stat
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from clawctx._js import JS_WHITESPACE, JS_WHITESPACE_CLASS
from clawctx._js import js_trim as _js_trim
from clawctx.history.images import DEFAULT_IMAGE_MAX_BYTES, sanitize_image_block

__all__ = [
    "IMAGE_EXTENSIONS",
    "MAX_IMAGE_BYTES",
    "PROMPT_IMAGES_LABEL",
    "ImageContent",
    "ImageRef",
    "PromptImagesResult",
    "detect_and_load_prompt_images",
    "detect_image_references",
    "history_images_label",
    "inject_history_images_into_messages",
    "load_image_ref",
    "model_supports_images",
    "sniff_image_mime_type",
]

_log = logging.getLogger("clawctx.prompt_images")

#: run/images.ts, IMAGE_EXTENSION_NAMES: extensions (lower case, with the dot) that mark a path as
#: an image.
IMAGE_EXTENSIONS: Final = (
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".webp",
    ".bmp",
    ".tiff",
    ".tif",
    ".heic",
    ".heif",
)
#: src/media/constants.ts, MAX_IMAGE_BYTES: the byte limit of one loaded file (6 MiB).
MAX_IMAGE_BYTES: Final = 6 * 1024 * 1024
#: run/images.ts, sanitizeImagesWithLog: the sanitization label of the prompt's images.
PROMPT_IMAGES_LABEL: Final = "prompt:images"

# JS whitespace as a character-class body (for negated classes) and as JS `\s`.
_JS_WS_CLASS: Final = JS_WHITESPACE
_S: Final = JS_WHITESPACE_CLASS
# JS `.` (no `s` flag): anything but a line terminator.
_DOT: Final = r"[^\n\r\u2028\u2029]"
_EXT: Final = r"(?:png|jpe?g|gif|webp|bmp|tiff?|heic|heif)"
# re.ASCII keeps case folding to ASCII as JS /i does (Python would also fold e.g. U+017F to
# "s"); every whitespace/digit class above is spelled out, so ASCII mode changes nothing else.
_FLAGS: Final = re.IGNORECASE | re.ASCII

_MEDIA_ATTACHED_RE: Final = re.compile(
    rf"\[media attached(?:{_S}+[0-9]+/[0-9]+)?:{_S}*([^\]]+)\]", _FLAGS
)
_MEDIA_ATTACHED_HEADER_RE: Final = re.compile(rf"[0-9]+{_S}+files?", _FLAGS)
# `\Z` is JS `$` without the m flag (Python's `$` also matches before a final newline).
_MEDIA_ATTACHED_PATH_RE: Final = re.compile(rf"{_S}*({_DOT}+?\.{_EXT}){_S}*(?:\(|\Z|\|)", _FLAGS)
_MESSAGE_IMAGE_RE: Final = re.compile(rf"\[Image:{_S}*source:{_S}*([^\]]+\.{_EXT})\]", _FLAGS)
_FILE_URL_RE: Final = re.compile(rf"file://[^{_JS_WS_CLASS}<>\"'`\]]+\.{_EXT}", _FLAGS)
_BARE_PATH_RE: Final = re.compile(
    rf"(?:^|{_S}|[\"'`(])((?:\.\.?/|[~/])[^{_JS_WS_CLASS}\"'`()\[\]]*\.{_EXT})", _FLAGS
)
_HOME_PREFIX_RE: Final = re.compile(r"~(?=\Z|[\\/])")
_URL_SCHEME_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_BAD_PERCENT_RE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_WINDOWS_DRIVE_RE: Final = re.compile(r"[A-Za-z][:|]")

# ISO-BMFF brands of HEIC/HEIF files and their MIME types.
_HEIF_BRANDS: Final = {
    b"heic": "image/heic",
    b"heix": "image/heic",
    b"heim": "image/heic",
    b"heis": "image/heic",
    b"hevc": "image/heic-sequence",
    b"hevx": "image/heic-sequence",
    b"hevm": "image/heic-sequence",
    b"hevs": "image/heic-sequence",
    b"mif1": "image/heif",
    b"msf1": "image/heif-sequence",
}
# BITMAPCOREHEADER .. BITMAPV5HEADER sizes: a "BM" text file is not a bitmap.
_BMP_DIB_HEADER_SIZES: Final = frozenset({12, 16, 40, 52, 56, 64, 108, 124})


@dataclass(frozen=True, slots=True)
class ImageRef:
    """A local image reference found in text (``detectImageReferences``; run/images.test.ts gives
    the shape).

    ``raw`` is the matched text, ``resolved`` the filesystem path (``~`` expanded, ``file://``
    URLs converted). ``message_index`` is set on references found in history: the index
    of the message they came from.
    """

    raw: str
    type: Literal["path"]
    resolved: str
    message_index: int | None = field(default=None)


@dataclass(frozen=True, slots=True)
class ImageContent:
    """An image for the model: base64 ``data`` and its ``mime_type`` (``loadImageFromRef``)."""

    data: str
    mime_type: str

    def to_block(self) -> dict[str, str]:
        """The content block: ``{"type": "image", "data": ..., "mimeType": ...}``."""
        return {"type": "image", "data": self.data, "mimeType": self.mime_type}


@dataclass(frozen=True, slots=True)
class PromptImagesResult:
    """What :func:`detect_and_load_prompt_images` returns (``detectAndLoadPromptImages``'s result).

    ``images``: existing + prompt images, sanitized. ``history_images_by_index``: message index
    -> sanitized images for that history message (indices with no image left are absent).
    ``detected_refs``: prompt references, then history references. ``loaded_count`` /
    ``skipped_count``: references loaded / not loaded. ``dropped``: the replacement text of
    each image sanitization dropped (``sanitizeImagesWithLog``).
    """

    images: tuple[ImageContent, ...]
    history_images_by_index: Mapping[int, tuple[ImageContent, ...]]
    detected_refs: tuple[ImageRef, ...]
    loaded_count: int
    skipped_count: int
    dropped: tuple[str, ...]


def history_images_label(message_index: int) -> str:
    """The sanitization label of one history message's images (``sanitizeImagesWithLog``)."""
    return f"history:images:{message_index}"


def model_supports_images(model: Mapping[str, Any] | Sequence[str] | None) -> bool:
    """Whether the model declares image input (``modelSupportsImages``).

    Accepts a model mapping (its ``"input"`` list must contain ``"image"``) or the input kinds
    themselves; a plain string counts as one kind. ``None``, a missing or non-list ``input``
    and an empty list are ``False``.
    """
    if model is None:
        return False
    kinds: object = model.get("input") if isinstance(model, Mapping) else model
    if isinstance(kinds, str):
        return kinds == "image"
    if isinstance(kinds, (Sequence, frozenset, set)) and not isinstance(kinds, (bytes, bytearray)):
        return "image" in kinds
    return False


def _node_extname(path: str) -> str:
    """Node's ``path.posix.extname``: ``""`` for dotfiles such as ``.png``, ``.png`` for
    ``..png`` (Python's ``splitext`` says ``""`` there)."""
    start_dot = -1
    start_part = 0
    end = -1
    matched_slash = True
    # 0: no dot seen before the extension's dot; 1: another dot seen; -1: a non-dot seen.
    pre_dot_state = 0
    for i in range(len(path) - 1, -1, -1):
        char = path[i]
        if char == "/":
            if not matched_slash:
                start_part = i + 1
                break
            continue
        if end == -1:
            matched_slash = False
            end = i + 1
        if char == ".":
            if start_dot == -1:
                start_dot = i
            elif pre_dot_state != 1:
                pre_dot_state = 1
        elif start_dot != -1:
            pre_dot_state = -1
    if (
        start_dot == -1
        or end == -1
        or pre_dot_state == 0
        or (pre_dot_state == 1 and start_dot == end - 1 and start_dot == start_part + 1)
    ):
        return ""
    return path[start_dot:end]


def _is_image_path(path: str) -> bool:
    return _node_extname(path).lower() in IMAGE_EXTENSIONS


def _node_path_resolve(path: str) -> str:
    """Node's ``path.resolve`` for one POSIX path: absolute, normalized, no trailing slash."""
    joined = os.path.join(os.getcwd(), path)
    normalized = os.path.normpath(joined)
    # POSIX normpath keeps exactly two leading slashes; Node collapses them.
    if normalized.startswith("//") and not normalized.startswith("///"):
        normalized = normalized[1:]
    return normalized


def _resolve_user_path(path: str) -> str:
    """``resolveUserPath``: a leading ``~`` (alone or before a slash) becomes the home dir,
    then the path is made absolute (``detectImageReferences``)."""
    if _HOME_PREFIX_RE.match(path):
        path = os.path.expanduser("~") + path[1:]
    return _node_path_resolve(path)


def _remove_dot_segments(path: str) -> str:
    """WHATWG URL path parsing of an absolute path: ``.``/``..`` segments (also spelled with
    ``%2e``) are resolved."""
    segments: list[str] = []
    parts = path.split("/")[1:]
    for position, segment in enumerate(parts):
        last = position == len(parts) - 1
        lowered = segment.lower()
        if lowered in ("..", ".%2e", "%2e.", "%2e%2e"):
            if segments:
                segments.pop()
            if last:
                segments.append("")
        elif lowered in (".", "%2e"):
            if last:
                segments.append("")
        else:
            segments.append(segment)
    return "/" + "/".join(segments)


def _file_url_to_path(url: str) -> str | None:
    """``new URL`` + Node's POSIX ``fileURLToPath``; ``None`` for a malformed URL
    (``detectImageReferences``'s ``file://`` handling).

    The host must be empty or ``localhost``; ``%2F`` in the path, a ``%`` not followed by two
    hex digits and percent-escapes that are not UTF-8 are malformed.
    """
    rest = url[len("file://") :].replace("\\", "/")
    host_end = len(rest)
    for stop in "/?#":
        found = rest.find(stop)
        if found != -1:
            host_end = min(host_end, found)
    host, tail = rest[:host_end], rest[host_end:]
    if _WINDOWS_DRIVE_RE.fullmatch(host):
        # WHATWG: `file://C:/x` has no host; the drive letter is the first path segment.
        tail = "/" + host + tail
        host = ""
    if host:
        try:
            decoded_host = urllib.parse.unquote(host, errors="strict").lower()
        except UnicodeDecodeError:
            return None
        if decoded_host != "localhost":
            return None
    for stop in "?#":
        found = tail.find(stop)
        if found != -1:
            tail = tail[:found]
    path = _remove_dot_segments(tail if tail.startswith("/") else "/" + tail)
    if "%2f" in path.lower() or _BAD_PERCENT_RE.search(path):
        return None
    try:
        return urllib.parse.unquote(path, errors="strict")
    except UnicodeDecodeError:
        return None


def detect_image_references(text: str) -> list[ImageRef]:
    """Finds local image references in text, in the order of ``detectImageReferences``
    (upstream cases in run/images.test.ts).

    1. ``[media attached: …]`` / ``[media attached i/N: …]`` brackets (``N files`` headers are
       skipped; the path is the text up to the first image extension followed by `` (``, ``|``
       or the end); 2. ``[Image: source: <path>]``; 3. ``file://`` URLs, converted to paths
       (malformed ones skipped); 4. bare ``./``, ``../``, ``~/`` and ``/`` paths at the start,
       after whitespace or after ``"`` ``'`` `````` ``(``.

    References are deduplicated by lower-cased raw text (first wins); ``http://`` and
    ``https://`` references are ignored; paths must end in an image extension
    (:data:`IMAGE_EXTENSIONS`); ``~`` is expanded to the home directory.
    """
    refs: list[ImageRef] = []
    seen: set[str] = set()

    def add_path(raw: str) -> None:
        trimmed = _js_trim(raw)
        key = trimmed.lower()
        if not trimmed or key in seen:
            return
        if trimmed.startswith(("http://", "https://")):
            return
        if not _is_image_path(trimmed):
            return
        seen.add(key)
        resolved = _resolve_user_path(trimmed) if trimmed.startswith("~") else trimmed
        refs.append(ImageRef(raw=trimmed, type="path", resolved=resolved))

    for match in _MEDIA_ATTACHED_RE.finditer(text):
        content = match.group(1)
        if _MEDIA_ATTACHED_HEADER_RE.fullmatch(_js_trim(content)):
            continue
        path_match = _MEDIA_ATTACHED_PATH_RE.match(content)
        if path_match:
            add_path(path_match.group(1))

    for match in _MESSAGE_IMAGE_RE.finditer(text):
        add_path(match.group(1))

    for match in _FILE_URL_RE.finditer(text):
        raw = match.group(0)
        key = raw.lower()
        if key in seen:
            continue
        seen.add(key)  # a malformed URL is still "seen", as upstream
        resolved = _file_url_to_path(raw)
        if resolved is not None:
            refs.append(ImageRef(raw=raw, type="path", resolved=resolved))

    for match in _BARE_PATH_RE.finditer(text):
        add_path(match.group(1))

    return refs


def sniff_image_mime_type(head: bytes) -> str | None:
    """The image MIME type the first bytes of a file show, or ``None`` (``loadImageFromRef``:
    non-image media are skipped). Knows PNG, JPEG, GIF, WebP, BMP, TIFF and HEIC/HEIF (``ftyp``
    brands).
    """
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "image/tiff"
    if (
        len(head) >= 18
        and head[:2] == b"BM"
        and int.from_bytes(head[14:18], "little") in _BMP_DIB_HEADER_SIZES
    ):
        return "image/bmp"
    if len(head) >= 12 and head[4:8] == b"ftyp":
        return _HEIF_BRANDS.get(head[8:12])
    return None


def _read_at_most(fd: int, limit: int) -> bytes:
    """Reads until end of file or ``limit`` bytes."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


_OPEN_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
# A FIFO or device swapped in must not block the open.
_FILE_FLAGS: Final = _OPEN_FLAGS | getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS: Final = _OPEN_FLAGS | getattr(os, "O_DIRECTORY", 0)
#: Symlinks followed while resolving one reference inside the root (Linux's MAXSYMLINKS is 40).
_MAX_SYMLINKS: Final = 40


def _read_open_file(fd: int, label: str, *, max_bytes: int) -> bytes | None:
    """Reads an open descriptor only if it is a regular file of at most ``max_bytes`` bytes
    (``fstat`` before reading, read capped at ``max_bytes + 1``)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        _log.debug("Native image: not a regular file: %s", label)
        return None
    if info.st_size > max_bytes:
        _log.debug("Native image: file too large (%d bytes): %s", info.st_size, label)
        return None
    data = _read_at_most(fd, max_bytes + 1)
    if len(data) > max_bytes:
        _log.debug("Native image: file grew past %d bytes: %s", max_bytes, label)
        return None
    return data


def _read_regular_file(
    path: str, *, max_bytes: int, expected_identity: tuple[int, int] | None
) -> bytes | None:
    """Opens ``path`` without blocking or following a final symlink, and reads it only if it is
    the regular file checked before (same device and inode) and at most ``max_bytes`` long."""
    fd = os.open(path, _FILE_FLAGS)
    try:
        if expected_identity is not None:
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) != expected_identity:
                _log.debug("Native image: file changed while loading: %s", path)
                return None
        return _read_open_file(fd, path, max_bytes=max_bytes)
    finally:
        os.close(fd)


def _path_parts(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def _parts_inside_root(path: str, roots: Sequence[str]) -> list[str] | None:
    """The components of absolute ``path`` below the first of ``roots`` it starts with
    (compared component by component, nothing resolved), or None when it starts with none."""
    parts = _path_parts(path)
    for root in roots:
        root_parts = _path_parts(root)
        if parts[: len(root_parts)] == root_parts:
            return parts[len(root_parts) :]
    return None


def _open_inside_root(root_fd: int, parts: list[str], roots: Sequence[str]) -> int | None:
    """Opens the file ``parts`` names below the root descriptor without ever leaving the root.

    Every directory is opened ``O_NOFOLLOW | O_DIRECTORY`` relative to its parent's descriptor
    and the file ``O_NOFOLLOW | O_NONBLOCK``, so a directory swapped for a symlink between two
    steps is never followed by the kernel. A symlink met on the way is read (``readlink``) and
    its target walked the same way: a relative target from the link's directory, an absolute
    one only when it names a path under the root (``roots``); ``..`` never climbs above the
    root; at most :data:`_MAX_SYMLINKS` links. Returns the file's descriptor, or None.
    """
    stack: list[int] = []  # descriptors of the directories below the root, outermost first
    pending = list(reversed(parts))
    links = 0
    try:
        while pending:
            name = pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if not stack:
                    return None  # above the root
                os.close(stack.pop())
                continue
            current = stack[-1] if stack else root_fd
            last = not any(part not in ("", ".") for part in pending)
            try:
                fd = os.open(name, _FILE_FLAGS if last else _DIR_FLAGS, dir_fd=current)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise
                # A symlink (or not a directory): readlink fails with EINVAL on a non-link.
                target = os.readlink(name, dir_fd=current)
                links += 1
                if links > _MAX_SYMLINKS:
                    return None
                if target.startswith("/"):
                    inside = _parts_inside_root(target, roots)
                    if inside is None:
                        return None
                    while stack:
                        os.close(stack.pop())
                    pending.extend(reversed(inside))
                else:
                    pending.extend(reversed(target.split("/")))
                continue
            if last:
                return fd
            stack.append(fd)
        return None  # the path names the root itself
    finally:
        for fd in stack:
            os.close(fd)


def load_image_ref(
    ref: ImageRef,
    *,
    workspace_dir: str | os.PathLike[str],
    sandbox_root: str | os.PathLike[str] | None = None,
    max_bytes: int = MAX_IMAGE_BYTES,
) -> ImageContent | None:
    """Loads one local image reference as base64 (``loadImageFromRef``); ``None`` on any failure.

    The root is ``sandbox_root`` if given, else ``workspace_dir`` (its own symlinks are
    resolved once). Relative paths resolve against it; an absolute (or ``~``) path must name a
    path under the root, spelled with the root as given or with its real path. The file is then
    reached from a descriptor of the root one component at a time (``O_NOFOLLOW |
    O_DIRECTORY`` per directory relative to its parent, ``O_NOFOLLOW | O_NONBLOCK`` for the
    file), so a directory swapped for a symlink while loading is never followed out of the
    root. Symlinks inside the root are honoured when their targets stay inside it: clawctx reads
    and walks them itself, at most 40 per reference; ``..`` never climbs above the root. Only
    regular files of at most ``max_bytes`` bytes are read (``fstat`` of the open descriptor
    before reading, read capped at ``max_bytes + 1``), and only if their magic bytes show an
    image (:func:`sniff_image_mime_type`). URLs are never fetched. Failures are debug-logged,
    never raised.
    """
    try:
        return _load_image_ref(ref, workspace_dir, sandbox_root, max_bytes)
    except (OSError, ValueError) as exc:
        # Missing files, permission errors, NUL bytes in paths, symlink loops.
        _log.debug("Native image: failed to load %s: %s", ref.resolved, exc)
        return None


def _load_image_ref(
    ref: ImageRef,
    workspace_dir: str | os.PathLike[str],
    sandbox_root: str | os.PathLike[str] | None,
    max_bytes: int,
) -> ImageContent | None:
    target = ref.resolved
    if ref.type != "path" or _URL_SCHEME_RE.match(target):
        _log.debug("Native image: rejecting remote URL (local-only): %s", target)
        return None
    if target.startswith("~"):
        target = _resolve_user_path(target)
    root = os.fspath(sandbox_root if sandbox_root is not None else workspace_dir)
    root_real = os.path.realpath(root, strict=True)
    roots = (root_real, os.path.abspath(root))
    if os.path.isabs(target):
        parts = _parts_inside_root(target, roots)
        if parts is None:
            _log.debug("Native image: path escapes %s: %s", root_real, ref.resolved)
            return None
    else:
        parts = target.split("/")
    root_fd = os.open(root_real, _DIR_FLAGS)
    try:
        fd = _open_inside_root(root_fd, parts, roots)
    finally:
        os.close(root_fd)
    if fd is None:
        _log.debug("Native image: path escapes %s or is no file: %s", root_real, ref.resolved)
        return None
    try:
        data = _read_open_file(fd, ref.resolved, max_bytes=max_bytes)
    finally:
        os.close(fd)
    if data is None:
        return None
    mime_type = sniff_image_mime_type(data[:32])
    if mime_type is None:
        _log.debug("Native image: not an image file: %s", ref.resolved)
        return None
    return ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)


def _message_has_image(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, Mapping) and part.get("type") == "image" for part in content
    )


def _message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return _js_trim(content)
    if isinstance(content, list):
        texts = [
            part["text"]
            for part in content
            if isinstance(part, Mapping)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        ]
        return _js_trim("\n".join(texts))
    return ""


def _detect_history_refs(messages: Sequence[Mapping[str, Any]]) -> list[ImageRef]:
    """``detectAndLoadPromptImages``: references in user messages without an image block; global
    dedupe by lower-cased resolved path (the first message wins)."""
    found: list[ImageRef] = []
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        if _message_has_image(message):
            continue  # its images were injected on an earlier turn
        text = _message_text(message)
        if not text:
            continue
        for ref in detect_image_references(text):
            key = ref.resolved.lower()
            if key in seen:
                continue
            seen.add(key)
            found.append(ImageRef(ref.raw, ref.type, ref.resolved, message_index=index))
    return found


def _as_image_content(image: ImageContent | Mapping[str, Any]) -> ImageContent:
    if isinstance(image, ImageContent):
        return image
    data, mime_type = image.get("data"), image.get("mimeType")
    if not isinstance(data, str) or not isinstance(mime_type, str):
        raise TypeError("an existing image needs string 'data' and 'mimeType'")
    return ImageContent(data=data, mime_type=mime_type)


def _sanitize(
    images: Sequence[ImageContent],
    label: str,
    max_dimension_px: int,
    max_bytes: float,
    dropped: list[str],
) -> tuple[ImageContent, ...]:
    """``sanitizeImagesWithLog``: each image through :func:`sanitize_image_block`; a dropped one's
    text is kept."""
    kept: list[ImageContent] = []
    dropped_here = 0
    for image in images:
        block = sanitize_image_block(
            image.data,
            image.mime_type,
            max_dimension_px=max_dimension_px,
            max_bytes=max_bytes,
            label=label,
        )
        if block["type"] == "image":
            kept.append(ImageContent(data=block["data"], mime_type=block["mimeType"]))
        else:
            dropped.append(block["text"])
            dropped_here += 1
    if dropped_here:
        _log.warning(
            "Native image: dropped %d image(s) after sanitization (%s).", dropped_here, label
        )
    return tuple(kept)


def detect_and_load_prompt_images(
    *,
    prompt: str,
    workspace_dir: str | os.PathLike[str],
    model_input: Sequence[str] | Mapping[str, Any] | None,
    existing_images: Sequence[ImageContent | Mapping[str, Any]] = (),
    history_messages: Sequence[Mapping[str, Any]] | None = None,
    sandbox_root: str | os.PathLike[str] | None = None,
    max_bytes: int = MAX_IMAGE_BYTES,
    max_dimension_px: int = 1200,
    sanitize_max_bytes: float = DEFAULT_IMAGE_MAX_BYTES,
) -> PromptImagesResult:
    """Detects and loads the images of a prompt and of earlier user messages (run/images.ts,
    ``detectAndLoadPromptImages``; upstream cases in run/images.test.ts).

    * ``modelSupportsImages``: a model without image input gets nothing at all, not even
      ``existing_images``.
    * Prompt references come first; history references (from ``history_messages``) whose
      lower-cased resolved path is also a prompt reference's are dropped.
    * Each reference is loaded with :func:`load_image_ref`; failures count as skipped.
    * ``sanitizeImagesWithLog``: ``existing_images`` + prompt images are sanitized under
      ``"prompt:images"``, each history message's images under ``"history:images:<index>"``
      (``max_dimension_px``, ``sanitize_max_bytes``); dropped images are left out and their text
      kept in ``dropped``.
    """
    empty: Mapping[int, tuple[ImageContent, ...]] = MappingProxyType({})
    if not model_supports_images(model_input):
        return PromptImagesResult((), empty, (), 0, 0, ())

    existing = [_as_image_content(image) for image in existing_images]
    prompt_refs = detect_image_references(prompt)
    prompt_keys = {ref.resolved.lower() for ref in prompt_refs}
    history_refs = [
        ref
        for ref in (_detect_history_refs(history_messages) if history_messages else [])
        if ref.resolved.lower() not in prompt_keys
    ]

    prompt_images = list(existing)
    history_loaded: dict[int, list[ImageContent]] = {}
    loaded_count = 0
    skipped_count = 0
    for ref in (*prompt_refs, *history_refs):
        image = load_image_ref(
            ref, workspace_dir=workspace_dir, sandbox_root=sandbox_root, max_bytes=max_bytes
        )
        if image is None:
            skipped_count += 1
            continue
        loaded_count += 1
        _log.debug("Native image: loaded %s %s", ref.type, ref.resolved)
        if ref.message_index is None:
            prompt_images.append(image)
        else:
            history_loaded.setdefault(ref.message_index, []).append(image)

    dropped: list[str] = []
    images = _sanitize(
        prompt_images, PROMPT_IMAGES_LABEL, max_dimension_px, sanitize_max_bytes, dropped
    )
    history: dict[int, tuple[ImageContent, ...]] = {}
    for index, loaded in history_loaded.items():
        sanitized = _sanitize(
            loaded, history_images_label(index), max_dimension_px, sanitize_max_bytes, dropped
        )
        if sanitized:
            history[index] = sanitized
    return PromptImagesResult(
        images=images,
        history_images_by_index=MappingProxyType(history),
        detected_refs=(*prompt_refs, *history_refs),
        loaded_count=loaded_count,
        skipped_count=skipped_count,
        dropped=tuple(dropped),
    )


def inject_history_images_into_messages(
    messages: Sequence[Mapping[str, Any]],
    history_images_by_index: Mapping[int, Sequence[ImageContent]],
) -> tuple[list[dict[str, Any]], bool]:
    """Puts history images back into their user messages (later OpenClaw
    run/attempt.ts, not in 2026.3.13).

    For each index within bounds whose message has role ``user``: string content becomes
    ``[{"type": "text", "text": <content>}]``; each image whose ``data`` is not already in one
    of the message's image blocks is appended (as upstream, the check is against the blocks
    present before this call). Returns a new list, where only changed messages are new dicts
    (the input is never mutated), and whether anything changed.
    """
    result: list[dict[str, Any]] = [
        message if isinstance(message, dict) else dict(message) for message in messages
    ]
    changed = False
    for index, images in history_images_by_index.items():
        if isinstance(index, bool) or not 0 <= index < len(result):
            continue
        message = result[index]
        if message.get("role") != "user":
            continue
        content = message.get("content")
        message_changed = False
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
            message_changed = True
        elif isinstance(content, list):
            blocks = list(content)
        else:
            continue
        present = {
            part["data"]
            for part in blocks
            if isinstance(part, Mapping)
            and part.get("type") == "image"
            and isinstance(part.get("data"), str)
        }
        for image in images:
            if image.data not in present:
                blocks.append(image.to_block())
                message_changed = True
        if message_changed:
            result[index] = {**message, "content": blocks}
            changed = True
    return result, changed
