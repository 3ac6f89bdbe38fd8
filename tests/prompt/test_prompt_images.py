"""Tests for clawctx.prompt.prompt_images (OpenClaw 2026.3.13 `src/agents/pi-embedded-runner/run/images.ts`; upstream cases from `run/images.test.ts`)."""

from __future__ import annotations

import base64
import copy
import io
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from clawctx.prompt import prompt_images
from clawctx.prompt.prompt_images import (
    IMAGE_EXTENSIONS,
    MAX_IMAGE_BYTES,
    ImageContent,
    ImageRef,
    detect_and_load_prompt_images,
    detect_image_references,
    inject_history_images_into_messages,
    load_image_ref,
    model_supports_images,
    sniff_image_mime_type,
)

T = TypeVar("T")
VISION = ["text", "image"]


def ref(raw: str, resolved: str | None = None, message_index: int | None = None) -> ImageRef:
    return ImageRef(
        raw=raw,
        type="path",
        resolved=raw if resolved is None else resolved,
        message_index=message_index,
    )


def image_bytes(fmt: str = "PNG", size: tuple[int, int] = (8, 6), color: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format=fmt)
    return out.getvalue()


def write_image(path: Path, fmt: str = "PNG", size: tuple[int, int] = (8, 6)) -> bytes:
    data = image_bytes(fmt, size)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def decoded_size(image: ImageContent) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(image.data))) as opened:
        return opened.size


def run_with_timeout(fn: Callable[[], T], timeout: float = 5.0) -> T:
    """Runs fn in a daemon thread; fails instead of hanging (FIFO tests)."""
    box: list[T] = []
    thread = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "call blocked"
    return box[0]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    return path


# ---------------------------------------------------------------------------------------------
# upstream run/images.test.ts cases: detection (detectImageReferences)


def test_8_4_01_absolute_path() -> None:
    prompt = "Check this image /path/to/screenshot.png and tell me what you see"
    assert detect_image_references(prompt) == [
        ImageRef(raw="/path/to/screenshot.png", type="path", resolved="/path/to/screenshot.png")
    ]


def test_8_4_02_relative_dot_slash() -> None:
    assert detect_image_references("Look at ./images/photo.jpg") == [ref("./images/photo.jpg")]


def test_8_4_02_relative_dot_dot_slash() -> None:
    refs = detect_image_references("The file is at ../screenshots/test.jpeg")
    assert refs == [ref("../screenshots/test.jpeg")]


def test_8_4_02_home_path_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    refs = detect_image_references("My photo is at ~/Pictures/vacation.png")
    assert refs == [ref("~/Pictures/vacation.png", f"{tmp_path}/home/Pictures/vacation.png")]
    assert not refs[0].resolved.startswith("~")


def test_8_4_03_remote_url_ignored() -> None:
    prompt = (
        "\n      Compare these two images:\n      1. /home/user/photo1.png\n"
        "      2. https://mysite.com/photo2.jpg\n    "
    )
    assert detect_image_references(prompt) == [ref("/home/user/photo1.png")]


@pytest.mark.parametrize("ext", ["png", "jpg", "jpeg", "gif", "webp", "bmp", "tiff", "heic"])
def test_8_4_04_extensions(ext: str) -> None:
    assert detect_image_references(f"Image: /test/image.{ext}") == [ref(f"/test/image.{ext}")]


@pytest.mark.parametrize("ext", ["tif", "heif", "PNG", "JpEg"])
def test_7_2_other_extensions_case_insensitive(ext: str) -> None:
    assert detect_image_references(f"Image: /test/image.{ext}") == [ref(f"/test/image.{ext}")]


def test_7_2_extension_list() -> None:
    assert IMAGE_EXTENSIONS == (
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
    assert MAX_IMAGE_BYTES == 6_291_456


def test_8_4_05_same_path_twice() -> None:
    prompt = "Look at /path/image.png and also /path/image.png again"
    assert detect_image_references(prompt) == [ref("/path/image.png")]


def test_8_4_05_no_images() -> None:
    assert detect_image_references("Just some text without any image references") == []


def test_8_4_05_non_image_extensions() -> None:
    assert detect_image_references("Check /path/to/document.pdf and /code/file.ts") == []


def test_8_4_06_quoted_path() -> None:
    assert detect_image_references('The file is at "/path/to/image.png"') == [
        ref("/path/to/image.png")
    ]


def test_8_4_06_path_in_parentheses() -> None:
    assert detect_image_references("See the image (./screenshot.png) for details") == [
        ref("./screenshot.png")
    ]


def test_8_4_07_image_source_marker() -> None:
    prompt = (
        "What does this image show?\n"
        "[Image: source: /Users/tyleryust/Library/Messages/Attachments/IMG_0043.jpeg]"
    )
    path = "/Users/tyleryust/Library/Messages/Attachments/IMG_0043.jpeg"
    assert detect_image_references(prompt) == [ref(path)]


def test_8_4_07_complex_attachment_path() -> None:
    path = (
        "/Users/tyleryust/Library/Messages/Attachments/23/03/AA4726EA-DB27-4269-BA56-"
        "1436936CC134/5E3E286A-F585-4E5E-9043-5BC2AFAFD81BIMG_0043.jpeg"
    )
    refs = detect_image_references(f"[Image: source: {path}]")
    assert refs == [ref(path)]
    assert "IMG_0043.jpeg" in refs[0].resolved


def test_8_4_08_media_attached_multiple_files() -> None:
    prompt = (
        "[media attached: 2 files]\n"
        "[media attached 1/2: /Users/tyleryust/.openclaw/media/IMG_6430.jpeg (image/jpeg)]\n"
        "[media attached 2/2: /Users/tyleryust/.openclaw/media/IMG_6431.jpeg (image/jpeg)]\n"
        "what about these images?"
    )
    assert detect_image_references(prompt) == [
        ref("/Users/tyleryust/.openclaw/media/IMG_6430.jpeg"),
        ref("/Users/tyleryust/.openclaw/media/IMG_6431.jpeg"),
    ]


def test_8_4_08_path_and_url_in_same_bracket_counted_once() -> None:
    prompt = "[media attached: /cache/IMG_6430.jpeg (image/jpeg) | /cache/IMG_6430.jpeg]"
    assert detect_image_references(prompt) == [ref("/cache/IMG_6430.jpeg")]


def test_8_4_08_remote_urls_ignored() -> None:
    prompt = (
        "To send an image: MEDIA:https://example.com/image.jpg\n"
        "Here is my actual image: /path/to/real.png\nAlso https://cdn.mysite.com/img.jpg"
    )
    assert detect_image_references(prompt) == [ref("/path/to/real.png")]


def test_8_4_08_single_file_with_url() -> None:
    prompt = (
        "[media attached: /cache/photo.jpeg (image/jpeg) | https://example.com/url]\nwhat is this?"
    )
    assert detect_image_references(prompt) == [ref("/cache/photo.jpeg")]


def test_8_4_08_path_with_spaces() -> None:
    prompt = (
        "[media attached: /Users/test/.openclaw/media/ChatGPT Image Apr 21, 2025.png (image/png)"
        " | https://example.com/same.png]\nwhat is this?"
    )
    refs = detect_image_references(prompt)
    assert refs == [ref("/Users/test/.openclaw/media/ChatGPT Image Apr 21, 2025.png")]
    assert "ChatGPT Image Apr 21, 2025.png" in refs[0].resolved


# ---------------------------------------------------------------------------------------------
# detection rules beyond the upstream cases (detectImageReferences)


def test_7_3_order_media_then_source_then_file_url_then_bare() -> None:
    prompt = (
        "/bare/d.png file:///url/c.png [Image: source: /src/b.png]"
        " [media attached: /media/a.png (image/png)]"
    )
    assert detect_image_references(prompt) == [
        ref("/media/a.png"),
        ref("/src/b.png"),
        ref("file:///url/c.png", "/url/c.png"),
        ref("/bare/d.png"),
    ]


def test_7_3_dedupe_is_case_insensitive_first_wins() -> None:
    assert detect_image_references("/a/Photo.PNG then /a/photo.png") == [ref("/a/Photo.PNG")]


def test_7_3_media_attached_header_variants_skipped() -> None:
    prompt = "[media attached: 1 file]\n[media attached: 3 FILES]\n[media attached: /x/y.gif]"
    assert detect_image_references(prompt) == [ref("/x/y.gif")]


def test_7_3_media_attached_relative_path_with_spaces() -> None:
    prompt = "[media attached: my photo.webp | extra]"
    assert detect_image_references(prompt) == [ref("my photo.webp")]


def test_7_3_media_attached_https_path_ignored() -> None:
    assert detect_image_references("[media attached: https://example.com/a.png]") == []


def test_7_3_media_attached_extension_must_end_path() -> None:
    # The extension must be followed by " (", "|" or the end: ".png.txt" is not a path here,
    # and the bare scan needs a leading "/", "./", "../" or "~/".
    assert detect_image_references("[media attached: a.png.txt]") == []


def test_7_3_file_url_conversion() -> None:
    prompt = (
        "file:///tmp/my%20shot.png file://localhost/x/./y/../z.jpg "
        "file:///%E6%97%A5.gif FILE:///upper/A.PNG"
    )
    assert detect_image_references(prompt) == [
        ref("file:///tmp/my%20shot.png", "/tmp/my shot.png"),
        ref("file://localhost/x/./y/../z.jpg", "/x/z.jpg"),
        ref("file:///%E6%97%A5.gif", "/日.gif"),
        ref("FILE:///upper/A.PNG", "/upper/A.PNG"),
    ]


@pytest.mark.parametrize(
    "url",
    [
        "file://remote-host/share/a.png",  # only an empty host or localhost is local
        "file:///bad%zz.png",  # "%" without two hex digits
        "file:///a%2Fb.png",  # encoded slash
        "file:///%FF.png",  # not UTF-8
    ],
)
def test_7_3_malformed_file_urls_skipped(url: str) -> None:
    assert detect_image_references(f"see {url} now") == []


def test_7_3_bare_path_needs_a_boundary() -> None:
    # Inside a word, after ":" (URLs) or after "=" there is no bare path.
    assert detect_image_references("abc/def.png x=/a/b.png MEDIA:/c/d.png") == []


def test_7_3_bare_path_stops_at_brackets_and_quotes() -> None:
    assert detect_image_references("(`/a/b.png`) '[./c.jpg]'") == [ref("/a/b.png")]


def test_7_3_js_whitespace_semantics() -> None:
    # U+2003 is whitespace in JavaScript regexes; U+001C is not (Python's \s would match it).
    assert detect_image_references("x\u2003/a.png") == [ref("/a.png")]
    assert detect_image_references("x\x1c/a.png") == []


def test_7_3_js_case_folding_only_ascii() -> None:
    # JS /i does not fold U+017F (long s) to "s"; Python's would without re.ASCII.
    assert detect_image_references("[Image: \u017fource: /a/my pic.png]") == []


def test_7_3_dotfile_has_no_extension() -> None:
    # Node's extname(".png") is "", extname("..png") is ".png".
    assert detect_image_references("/x/.png") == []
    assert detect_image_references("/x/..png") == [ref("/x/..png")]


def test_7_3_home_only_before_slash(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    refs = detect_image_references("~/a/../b.png")
    assert refs == [ref("~/a/../b.png", f"{tmp_path}/b.png")]


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab /.~()[]\"'`:|\n\u2003.pngjif")), max_size=60))
def test_7_3_detection_properties(text: str) -> None:
    refs = detect_image_references(text)
    keys = [r.raw.lower() for r in refs]
    assert len(keys) == len(set(keys))
    for found in refs:
        assert found.type == "path"
        assert found.raw == found.raw.strip()
        assert prompt_images._node_extname(found.raw).lower() in IMAGE_EXTENSIONS or (
            found.raw.lower().startswith("file://")
        )
        assert not found.raw.startswith(("http://", "https://"))


@settings(max_examples=100, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("abcXYZ019_-")), min_size=1, max_size=12),
    st.sampled_from(IMAGE_EXTENSIONS),
)
def test_7_3_bare_absolute_path_found_exactly(name: str, ext: str) -> None:
    path = f"/dir/{name}{ext}"
    assert detect_image_references(f"look {path} please") == [ref(path)]


# ---------------------------------------------------------------------------------------------
# model gate (images.ts: modelSupportsImages)


def test_8_4_09_model_supports_images() -> None:
    assert model_supports_images({"input": ["text", "image"]}) is True
    assert model_supports_images({"input": ["text"]}) is False
    assert model_supports_images({}) is False
    assert model_supports_images({"input": []}) is False


def test_7_1_model_supports_images_other_shapes() -> None:
    assert model_supports_images(["text", "image"]) is True
    assert model_supports_images(("text",)) is False
    assert model_supports_images(None) is False
    assert model_supports_images({"input": None}) is False
    assert model_supports_images({"input": 3}) is False


# ---------------------------------------------------------------------------------------------
# loading (images.ts: loadImageFromRef; src/media/constants.ts MAX_IMAGE_BYTES)


def test_7_4_loads_relative_png_inside_workspace(workspace: Path) -> None:
    data = write_image(workspace / "pics" / "a.png")
    image = load_image_ref(ref("./pics/a.png"), workspace_dir=workspace)
    assert image == ImageContent(data=b64(data), mime_type="image/png")
    assert image.to_block() == {"type": "image", "data": b64(data), "mimeType": "image/png"}


def test_7_4_loads_absolute_jpeg_inside_workspace(workspace: Path) -> None:
    data = write_image(workspace / "b.jpg", "JPEG")
    image = load_image_ref(ref(str(workspace / "b.jpg")), workspace_dir=str(workspace))
    assert image == ImageContent(data=b64(data), mime_type="image/jpeg")


def test_7_4_dot_dot_escape_refused(workspace: Path, outside: Path) -> None:
    write_image(outside / "outside.png")
    assert load_image_ref(ref("../outside/outside.png"), workspace_dir=workspace) is None
    write_image(workspace.parent / "outside.png")
    assert load_image_ref(ref("../outside.png"), workspace_dir=workspace) is None


def test_7_4_absolute_path_outside_refused(workspace: Path, outside: Path) -> None:
    write_image(outside / "x.png")
    assert load_image_ref(ref(str(outside / "x.png")), workspace_dir=workspace) is None


def test_7_4_prefix_sibling_directory_refused(tmp_path: Path) -> None:
    # "/tmp/ws-evil" starts with "/tmp/ws" but is not inside it.
    workspace = tmp_path / "ws"
    workspace.mkdir()
    write_image(tmp_path / "ws-evil" / "x.png")
    assert load_image_ref(ref(str(tmp_path / "ws-evil" / "x.png")), workspace_dir=workspace) is None


def test_7_4_symlink_pointing_outside_refused(workspace: Path, outside: Path) -> None:
    write_image(outside / "secret.png")
    (workspace / "link.png").symlink_to(outside / "secret.png")
    assert load_image_ref(ref("./link.png"), workspace_dir=workspace) is None
    (workspace / "dirlink").symlink_to(outside, target_is_directory=True)
    assert load_image_ref(ref("./dirlink/secret.png"), workspace_dir=workspace) is None


def test_7_4_symlink_pointing_inside_allowed(workspace: Path) -> None:
    data = write_image(workspace / "real" / "a.png")
    (workspace / "link.png").symlink_to(workspace / "real" / "a.png")
    image = load_image_ref(ref("./link.png"), workspace_dir=workspace)
    assert image == ImageContent(data=b64(data), mime_type="image/png")


def test_7_4_symlinked_workspace_root_allowed(tmp_path: Path, workspace: Path) -> None:
    data = write_image(workspace / "a.png")
    alias = tmp_path / "alias"
    alias.symlink_to(workspace, target_is_directory=True)
    assert load_image_ref(ref(str(alias / "a.png")), workspace_dir=alias) == ImageContent(
        b64(data), "image/png"
    )
    assert load_image_ref(ref(str(workspace / "a.png")), workspace_dir=alias) is not None


def test_7_4_sandbox_root_replaces_workspace(tmp_path: Path, workspace: Path) -> None:
    sandbox = tmp_path / "sandbox"
    sandbox_data = write_image(sandbox / "a.png", size=(3, 3))
    write_image(workspace / "a.png", size=(5, 5))
    image = load_image_ref(ref("./a.png"), workspace_dir=workspace, sandbox_root=sandbox)
    assert image == ImageContent(b64(sandbox_data), "image/png")
    # The workspace is outside the sandbox: refused.
    refused = load_image_ref(
        ref(str(workspace / "a.png")), workspace_dir=workspace, sandbox_root=sandbox
    )
    assert refused is None


def test_7_4_home_path_must_be_inside_root(
    monkeypatch: pytest.MonkeyPatch, workspace: Path, outside: Path
) -> None:
    data = write_image(workspace / "a.png")
    write_image(outside / "a.png")
    monkeypatch.setenv("HOME", str(workspace))
    assert load_image_ref(ref("~/a.png", "~/a.png"), workspace_dir=workspace) == ImageContent(
        b64(data), "image/png"
    )
    monkeypatch.setenv("HOME", str(outside))
    [home_ref] = detect_image_references("~/a.png")
    assert load_image_ref(home_ref, workspace_dir=workspace) is None


def test_7_4_file_url_ref_loads_inside(workspace: Path) -> None:
    data = write_image(workspace / "my shot.png")
    [file_ref] = detect_image_references(f"file://{workspace}/my%20shot.png")
    assert load_image_ref(file_ref, workspace_dir=workspace) == ImageContent(b64(data), "image/png")


def test_7_4_oversized_file_refused_without_reading(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    big = workspace / "big.png"
    with big.open("wb") as handle:
        handle.write(image_bytes())
        handle.truncate(MAX_IMAGE_BYTES + 1)  # sparse: no 6 MiB written

    def no_read(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("the file must not be opened or read")

    monkeypatch.setattr(prompt_images, "_read_regular_file", no_read)
    monkeypatch.setattr(prompt_images, "_read_at_most", no_read)
    assert load_image_ref(ref("./big.png"), workspace_dir=workspace) is None


def test_7_4_fstat_size_checked_before_reading(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    path = workspace / "a.png"
    write_image(path)

    def no_read(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("must not read")

    monkeypatch.setattr(prompt_images, "_read_at_most", no_read)
    read = prompt_images._read_regular_file(str(path), max_bytes=10, expected_identity=None)
    assert read is None


def test_7_4_size_limit_boundary(workspace: Path) -> None:
    data = write_image(workspace / "a.png")
    assert load_image_ref(ref("./a.png"), workspace_dir=workspace, max_bytes=len(data)) is not None
    assert load_image_ref(ref("./a.png"), workspace_dir=workspace, max_bytes=len(data) - 1) is None


def test_7_4_read_capped_at_max_bytes_plus_one(workspace: Path) -> None:
    path = workspace / "a.bin"
    path.write_bytes(b"x" * 100)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert prompt_images._read_at_most(fd, 11) == b"x" * 11
    finally:
        os.close(fd)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_7_4_fifo_refused_without_hanging(workspace: Path) -> None:
    fifo = workspace / "pipe.png"
    os.mkfifo(fifo)
    assert (
        run_with_timeout(lambda: load_image_ref(ref("./pipe.png"), workspace_dir=workspace)) is None
    )
    # Even past the stat check (a FIFO swapped in), the non-blocking open + fstat refuses it.
    direct = run_with_timeout(
        lambda: prompt_images._read_regular_file(str(fifo), max_bytes=100, expected_identity=None)
    )
    assert direct is None


def test_7_4_swapped_file_refused(workspace: Path) -> None:
    first = workspace / "a.png"
    second = workspace / "b.png"
    write_image(first)
    write_image(second)
    info = os.stat(second)
    read = prompt_images._read_regular_file(
        str(first), max_bytes=MAX_IMAGE_BYTES, expected_identity=(info.st_dev, info.st_ino)
    )
    assert read is None


def test_7_4_text_disguised_as_png_refused(workspace: Path) -> None:
    (workspace / "fake.png").write_text("definitely not an image\n")
    assert load_image_ref(ref("./fake.png"), workspace_dir=workspace) is None
    (workspace / "bm.bmp").write_text("BM is not enough to be a bitmap header here")
    assert load_image_ref(ref("./bm.bmp"), workspace_dir=workspace) is None


def test_7_4_directory_missing_and_bad_paths(workspace: Path) -> None:
    (workspace / "dir.png").mkdir()
    assert load_image_ref(ref("./dir.png"), workspace_dir=workspace) is None
    assert load_image_ref(ref("./missing.png"), workspace_dir=workspace) is None
    assert load_image_ref(ref("./nul\x00.png"), workspace_dir=workspace) is None
    assert load_image_ref(ref("./a.png"), workspace_dir=workspace / "no-such-root") is None
    (workspace / "loop.png").symlink_to(workspace / "loop.png")
    assert load_image_ref(ref("./loop.png"), workspace_dir=workspace) is None


def test_7_4_remote_urls_never_loaded(workspace: Path) -> None:
    # A local file at the path a URL would name relative to the workspace: still refused.
    write_image(workspace / "https:" / "example.com" / "a.png")
    write_image(workspace / "http:" / "example.com" / "a.png")
    for url in ("https://example.com/a.png", "http://example.com/a.png"):
        assert load_image_ref(ref(url), workspace_dir=workspace) is None


@pytest.mark.parametrize(
    ("fmt", "mime"),
    [
        ("PNG", "image/png"),
        ("JPEG", "image/jpeg"),
        ("GIF", "image/gif"),
        ("WEBP", "image/webp"),
        ("BMP", "image/bmp"),
        ("TIFF", "image/tiff"),
    ],
)
def test_7_4_sniff_real_images(fmt: str, mime: str) -> None:
    assert sniff_image_mime_type(image_bytes(fmt)[:32]) == mime


def test_7_4_sniff_heif_brands_and_non_images() -> None:
    assert sniff_image_mime_type(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00") == "image/heic"
    assert sniff_image_mime_type(b"\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00") == "image/heif"
    assert sniff_image_mime_type(b"\x00\x00\x00\x18ftypisom\x00\x00\x00\x00") is None  # MP4
    assert sniff_image_mime_type(b"%PDF-1.7") is None
    assert sniff_image_mime_type(b"") is None


def test_7_4_load_gif_and_webp(workspace: Path) -> None:
    for name, fmt, mime in (("a.gif", "GIF", "image/gif"), ("b.webp", "WEBP", "image/webp")):
        data = write_image(workspace / name, fmt)
        assert load_image_ref(ref(f"./{name}"), workspace_dir=workspace) == ImageContent(
            b64(data), mime
        )


# ---------------------------------------------------------------------------------------------
# detect_and_load_prompt_images (images.ts: detectAndLoadPromptImages)


def test_8_4_10_non_vision_model_drops_everything(workspace: Path) -> None:
    write_image(workspace / "a.png")
    result = detect_and_load_prompt_images(
        prompt="ignore ./a.png",
        workspace_dir=workspace,
        model_input={"input": ["text"]},
        existing_images=[ImageContent("abc", "image/png")],
        history_messages=[{"role": "user", "content": "see ./a.png"}],
    )
    assert result.images == ()
    assert result.detected_refs == ()
    assert dict(result.history_images_by_index) == {}
    assert (result.loaded_count, result.skipped_count, result.dropped) == (0, 0, ())


def test_8_4_11_history_message_with_image_block_skipped(workspace: Path) -> None:
    write_image(workspace / "should-not-load.png")
    result = detect_and_load_prompt_images(
        prompt="no images here",
        workspace_dir=workspace,
        model_input={"input": VISION},
        history_messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "See ./should-not-load.png"},
                    {"type": "image", "data": "abc", "mimeType": "image/png"},
                ],
            }
        ],
    )
    assert result.detected_refs == ()
    assert result.images == ()
    assert dict(result.history_images_by_index) == {}


def test_7_7_prompt_images_after_existing(workspace: Path) -> None:
    existing = ImageContent(b64(image_bytes(size=(2, 2))), "image/png")
    data = write_image(workspace / "a.png")
    result = detect_and_load_prompt_images(
        prompt="look at ./a.png and ./missing.png",
        workspace_dir=workspace,
        model_input=VISION,
        existing_images=[existing],
    )
    assert result.images == (existing, ImageContent(b64(data), "image/png"))
    assert result.detected_refs == (ref("./a.png"), ref("./missing.png"))
    assert (result.loaded_count, result.skipped_count) == (1, 1)
    assert dict(result.history_images_by_index) == {}
    assert result.dropped == ()


def test_7_7_no_refs_returns_existing(workspace: Path) -> None:
    existing = {"type": "image", "data": b64(image_bytes()), "mimeType": "image/png"}
    result = detect_and_load_prompt_images(
        prompt="hello",
        workspace_dir=workspace,
        model_input={"input": VISION},
        existing_images=[existing],
    )
    assert result.images == (ImageContent(existing["data"], "image/png"),)
    assert result.detected_refs == ()


def test_7_6_large_image_downscaled(workspace: Path) -> None:
    write_image(workspace / "wide.png", size=(2000, 40))
    result = detect_and_load_prompt_images(
        prompt="./wide.png", workspace_dir=workspace, model_input=VISION
    )
    [image] = result.images
    assert image.mime_type == "image/jpeg"
    assert max(decoded_size(image)) <= 1200
    small = detect_and_load_prompt_images(
        prompt="./wide.png", workspace_dir=workspace, model_input=VISION, max_dimension_px=300
    )
    assert max(decoded_size(small.images[0])) <= 300


def test_7_6_existing_images_sanitized(workspace: Path) -> None:
    big = ImageContent(b64(image_bytes(size=(1600, 30))), "image/png")
    result = detect_and_load_prompt_images(
        prompt="nothing", workspace_dir=workspace, model_input=VISION, existing_images=[big]
    )
    assert max(decoded_size(result.images[0])) <= 1200


def test_7_6_undecodable_image_dropped_with_text(workspace: Path) -> None:
    (workspace / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10)
    result = detect_and_load_prompt_images(
        prompt="./broken.png", workspace_dir=workspace, model_input=VISION
    )
    assert result.images == ()
    assert result.loaded_count == 1
    [text] = result.dropped
    assert text.startswith("[prompt:images] omitted image payload: Error: ")


def test_7_5_history_scan_dedupe_and_prompt_exclusion(workspace: Path) -> None:
    a = write_image(workspace / "a.png", size=(2, 2))
    write_image(workspace / "b.png", size=(3, 3))
    c = write_image(workspace / "c.png", size=(4, 4))
    d = write_image(workspace / "d.png", size=(5, 5))
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "first ./a.png and ./b.png"},
        {"role": "assistant", "content": [{"type": "text", "text": "./d.png"}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "again ./A.png"},
                {"type": "text", "text": "./c.png"},
            ],
        },
        {"role": "user", "content": "./d.png"},
    ]
    result = detect_and_load_prompt_images(
        prompt="now ./b.png",
        workspace_dir=workspace,
        model_input=VISION,
        history_messages=history,
    )
    assert result.detected_refs == (
        ref("./b.png"),
        ref("./a.png", message_index=0),
        ref("./c.png", message_index=2),
        ref("./d.png", message_index=3),
    )
    assert dict(result.history_images_by_index) == {
        0: (ImageContent(b64(a), "image/png"),),
        2: (ImageContent(b64(c), "image/png"),),
        3: (ImageContent(b64(d), "image/png"),),
    }
    assert len(result.images) == 1
    assert (result.loaded_count, result.skipped_count) == (4, 0)


def test_7_6_history_drop_uses_history_label(workspace: Path) -> None:
    (workspace / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"junk" * 10)
    result = detect_and_load_prompt_images(
        prompt="hi",
        workspace_dir=workspace,
        model_input=VISION,
        history_messages=[
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": "./broken.png"},
        ],
    )
    assert dict(result.history_images_by_index) == {}
    [text] = result.dropped
    assert text.startswith("[history:images:1] omitted image payload: Error: ")


def test_7_4_loading_confined_in_pipeline(workspace: Path, outside: Path) -> None:
    write_image(outside / "x.png")
    result = detect_and_load_prompt_images(
        prompt=f"{outside}/x.png ../outside/x.png", workspace_dir=workspace, model_input=VISION
    )
    assert result.images == ()
    assert (result.loaded_count, result.skipped_count) == (0, 2)


# ---------------------------------------------------------------------------------------------
# history re-injection (later upstream; not in 2026.3.13)

IMAGE = ImageContent(data="abc", mime_type="image/png")


def test_7_8_string_content_becomes_text_and_image_blocks() -> None:
    messages = [{"role": "user", "content": "See /tmp/photo.png"}]
    original = copy.deepcopy(messages)
    new, changed = inject_history_images_into_messages(messages, {0: [IMAGE]})
    assert changed is True
    assert new == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "See /tmp/photo.png"},
                {"type": "image", "data": "abc", "mimeType": "image/png"},
            ],
        }
    ]
    assert messages == original


def test_7_8_duplicate_data_not_appended() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "See"},
            {"type": "image", "data": "abc", "mimeType": "image/png"},
        ],
    }
    new, changed = inject_history_images_into_messages([message], {0: [IMAGE]})
    assert changed is False
    assert new[0] is message
    assert len(message["content"]) == 2


def test_7_8_list_content_appended_without_mutating_input() -> None:
    other = {"role": "assistant", "content": "hi"}
    message = {"role": "user", "content": [{"type": "text", "text": "See"}], "id": 7}
    new, changed = inject_history_images_into_messages([other, message], {1: (IMAGE,)})
    assert changed is True
    assert new[0] is other
    assert new[1] == {
        "role": "user",
        "content": [{"type": "text", "text": "See"}, IMAGE.to_block()],
        "id": 7,
    }
    assert message["content"] == [{"type": "text", "text": "See"}]


def test_7_8_out_of_range_and_non_user_ignored() -> None:
    messages = [{"role": "assistant", "content": "noop"}]
    new, changed = inject_history_images_into_messages(
        messages, {1: [IMAGE], -1: [IMAGE], 0: [IMAGE]}
    )
    assert changed is False
    assert new == [{"role": "assistant", "content": "noop"}]


def test_7_8_empty_map_changes_nothing() -> None:
    messages = [{"role": "user", "content": "x"}]
    assert inject_history_images_into_messages(messages, {}) == (messages, False)


def test_7_8_end_to_end(workspace: Path) -> None:
    data = write_image(workspace / "a.png")
    history = [{"role": "user", "content": "see ./a.png"}, {"role": "assistant", "content": "ok"}]
    result = detect_and_load_prompt_images(
        prompt="and now?", workspace_dir=workspace, model_input=VISION, history_messages=history
    )
    new, changed = inject_history_images_into_messages(history, result.history_images_by_index)
    assert changed is True
    assert new[0]["content"][1] == {"type": "image", "data": b64(data), "mimeType": "image/png"}
    # The next turn: the message now holds an image block, so it is not scanned again.
    again = detect_and_load_prompt_images(
        prompt="and now?", workspace_dir=workspace, model_input=VISION, history_messages=new
    )
    assert again.detected_refs == ()


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="needs O_NOFOLLOW")
def test_7_4_directory_swapped_for_symlink_never_escapes(workspace: Path, outside: Path) -> None:
    """A thread keeps swapping a workspace directory for a symlink to an outside directory whose
    file of the same name holds a known secret; no load may ever return the outside file."""
    inside_data = write_image(workspace / "d" / "a.png", size=(2, 2))
    secret = write_image(outside / "a.png", size=(7, 7))
    assert secret != inside_data
    (workspace / "d_link").symlink_to(outside, target_is_directory=True)
    stop = threading.Event()

    def flip() -> None:
        d, parked_dir, parked_link = workspace / "d", workspace / "d_dir", workspace / "d_link"
        while not stop.is_set():
            os.rename(d, parked_dir)
            os.rename(parked_link, d)
            os.rename(d, parked_link)
            os.rename(parked_dir, d)

    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    leaked = loaded = 0
    try:
        deadline = time.monotonic() + 2.0
        for _ in range(20_000):
            if time.monotonic() > deadline:
                break
            image = load_image_ref(ref("./d/a.png"), workspace_dir=workspace)
            if image is not None:
                loaded += 1
                leaked += image.data == b64(secret)
    finally:
        stop.set()
        flipper.join(5)
    assert leaked == 0
    assert loaded > 0
