"""Exact token counts (``count_tokens``, ``count_message_tokens``) and the calibrated estimator.

The text samples the estimator is calibrated and checked on are built here (``token_samples``)
from the real pi sessions in ``../shared/fixtures/pi/`` (prose, code, JSON, shell output) and
from the Chinese, Japanese and Korean paragraphs below; ``benches/test_token_count.py`` loads
this module to fit the weights on the training split and to report the accuracy.
"""

# ruff: noqa: RUF001
# (the CJK paragraphs use full-width punctuation, as CJK text does)

from __future__ import annotations

import base64
import io
import json
import os
import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import clawctx
from benches.offline_tiktoken import CL100K_PAT, O200K_PAT
from clawctx import _core

# As `tests.conftest` (the repository root is on the path): benches/test_token_count.py loads
# this module by path, also when tests/ itself is not on sys.path.
from tests.conftest import SHARED

PI_FIXTURES = SHARED / "fixtures" / "pi"
FIXTURE_FILES = ("before-compaction.jsonl", "large-session.jsonl")

# ---- the calibration corpus --------------------------------------------------------------------

CHINESE = [
    "上周五下午，我们团队终于把新版本的会话存储迁移到了生产环境。迁移过程比预想的要顺利，但在凌晨两点左右，监控系统发出警报：有三台服务器的磁盘使用率突然超过了百分之九十。值班工程师立刻登录排查，发现是旧版本的日志没有按时清理，新旧两份数据同时占用空间。删除过期日志之后，一切恢复正常。",
    "读书的意义，并不在于记住多少内容，而在于它如何改变我们看待世界的方式。小时候读《西游记》，只觉得孙悟空神通广大；长大后重读，才发现书中写的其实是一群各有缺点的普通人，在漫长的旅途中互相扶持、慢慢成长的故事。",
    "如果你在运行测试时看到“连接被拒绝”的错误，请先确认数据库服务已经启动，并且配置文件中的端口号与实际监听的端口一致。很多时候，问题只是环境变量没有正确加载。可以在终端里执行一次初始化脚本，然后重新运行全部测试。",
    "杭州的春天来得很早。三月初，西湖边的柳树就已经抽出了嫩芽，游客们沿着苏堤慢慢散步，拍照，聊天。到了傍晚，湖面上泛起一层薄雾，远处的雷峰塔在夕阳里显得格外安静。本地人常说，晴湖不如雨湖，雨湖不如夜湖。",
    "机器学习模型的效果在很大程度上取决于训练数据的质量。如果数据中存在大量重复样本或者标注错误，模型往往会学到错误的规律。因此，在正式训练之前，我们通常会花相当多的时间清洗数据、统计分布，并且人工抽查一部分样本。",
    "这次重构的目标有三个：第一，把解析逻辑从界面代码中分离出来；第二，为每个模块补充单元测试；第三，减少不必要的内存拷贝。目前前两项已经完成，第三项还需要进一步的性能分析，预计下周可以提交第一版改动。",
    "奶奶做的红烧肉是全家人最喜欢的菜。她总是先把五花肉切成大小均匀的方块，用冷水下锅焯一遍，再放入冰糖慢慢炒出糖色。最后加入酱油、料酒和八角，小火炖上一个多小时，直到肉块变得软糯，汤汁浓稠发亮。",
    "长城并不是一次修建完成的。从春秋战国时期开始，各个诸侯国就在边境上修筑城墙，用来抵御外敌。秦始皇统一六国以后，把这些城墙连接起来，形成了最早的万里长城。现在我们看到的大部分城墙，其实是明朝重新修建的。",
    "用户反馈说，在手机上打开长对话时，页面会明显卡顿，有时甚至直接崩溃。我们复现之后发现，问题出在每次收到新消息时都会重新渲染整个列表。改成只更新最后几条消息之后，滚动变得流畅多了，内存占用也下降了大约一半。",
    "天气预报说明天有大到暴雨，局部地区可能出现雷电和短时强降水。请大家尽量减少外出，开车时注意减速慢行，远离广告牌和临时搭建的建筑物。学校已经通知，如果早上七点前发布红色预警，全天停课。",
    "在开源社区里，一个好的提交说明和好的代码同样重要。它应该简要说明改了什么、为什么要改，以及可能带来的影响。这样，几年以后有人翻看历史记录时，不需要猜测当初的想法，也能很快理解这段代码的来龙去脉。",
    "昨天晚上我们去看了一场话剧。演员们的表演非常投入，尤其是第二幕里父亲和儿子争吵的那一段，全场观众都屏住了呼吸。散场以后，大家在剧院门口讨论了很久，有人觉得结局太过悲伤，也有人认为这样才真实。",
]

JAPANESE = [
    "昨日の午後、久しぶりに近所の図書館へ行きました。新しく改装された閲覧室はとても明るく、窓際の席からは公園の桜がよく見えます。平日だったせいか利用者は少なく、静かな環境で三時間ほど集中して本を読むことができました。",
    "このライブラリを使う前に、まず設定ファイルを作成してください。ファイルにはサーバーのアドレス、ポート番号、タイムアウトの秒数を記入します。設定が正しくない場合、起動時にエラーメッセージが表示されるので、内容を確認してから再度実行してください。",
    "京都の秋は観光客でにぎわいます。特に紅葉の季節になると、有名なお寺の周辺は朝早くから長い行列ができます。混雑を避けたいなら、少し郊外にある小さな寺院を訪ねるのがおすすめです。静かな庭で色づいた木々を眺めていると、時間がゆっくり流れているように感じます。",
    "先週のミーティングでは、来月リリース予定の新機能について話し合いました。検索の速度を改善すること、古いデータを自動的に整理すること、そして管理画面をもっと使いやすくすることが主な目標です。担当者はそれぞれの作業の見積もりを金曜日までに提出する予定です。",
    "母は毎朝六時に起きて、家族全員のお弁当を作ります。卵焼き、焼き魚、ほうれん草のおひたし、そして小さなおにぎりが二つ。子どものころは当たり前だと思っていましたが、自分で料理をするようになってから、その大変さがよくわかるようになりました。",
    "テストが失敗する原因を調べたところ、タイムゾーンの違いによって日付の計算がずれていることがわかりました。開発者のパソコンは日本時間、継続的インテグレーションのサーバーは協定世界時で動いていたためです。日付を扱う処理をすべて協定世界時に統一することで、問題は解決しました。",
    "日本の鉄道は時間に正確なことで知られています。数分の遅れでも車内でお詫びのアナウンスが流れ、遅延証明書が発行されることもあります。その一方で、朝の通勤ラッシュの混雑はとても激しく、多くの人が満員電車での移動に疲れを感じています。",
    "小説を書くとき、私はまず登場人物の年表を作ります。どこで生まれ、どんな家庭で育ち、何を大切にしているのか。物語の中では書かれない部分まで考えておくと、人物の言葉や行動に自然な説得力が生まれるからです。",
    "地震が起きたときは、まず机の下にもぐって頭を守ってください。揺れがおさまったら、火の始末をして、ドアを開けて出口を確保します。あわてて外に飛び出すと、落ちてくるガラスや看板でけがをするおそれがあるので注意が必要です。",
    "このプルリクエストでは、セッションファイルの読み込み処理を見直しました。これまでは一行ずつ文字列に変換していましたが、バイト列のまま解析するように変更したため、大きなファイルでも読み込み時間が約三分の一になりました。既存のテストはすべて通過しています。",
    "北海道の冬は長く厳しいですが、その分楽しみもたくさんあります。雪まつりでは大きな雪像が並び、夜になるとライトアップされて幻想的な雰囲気になります。温かいラーメンを食べながら雪景色を眺める時間は、旅の中でも特に思い出に残ります。",
    "新しい言語を学ぶときに大切なのは、毎日少しずつでも続けることです。一度にたくさん覚えようとすると、すぐに疲れてしまいます。通勤の電車の中で単語を十個だけ復習する、寝る前に短い記事を一つ読む、といった小さな習慣が、やがて大きな力になります。",
]

KOREAN = [
    "지난 주말에 친구들과 함께 제주도로 여행을 다녀왔습니다. 첫날에는 비가 많이 와서 숙소에서 쉬었지만, 둘째 날부터는 날씨가 맑아져서 한라산 근처의 오름을 올랐습니다. 정상에서 내려다본 바다와 들판의 풍경은 정말 잊을 수 없을 만큼 아름다웠습니다.",
    "이 프로그램을 실행하기 전에 먼저 필요한 패키지를 설치해야 합니다. 설치가 끝나면 설정 파일을 열어서 데이터베이스 주소와 사용자 이름을 입력하세요. 설정이 올바르지 않으면 프로그램이 시작되지 않고 오류 메시지를 출력합니다.",
    "우리 할머니는 매년 겨울이 되면 온 가족을 불러 김장을 하십니다. 배추를 소금에 절이고, 고춧가루와 마늘, 젓갈을 넣어 양념을 만드는 일은 하루 종일 걸립니다. 힘들지만 다 함께 모여 이야기를 나누며 일하는 그 시간이 저는 참 좋습니다.",
    "최근 서비스 응답 속도가 느려졌다는 문의가 많이 들어왔습니다. 원인을 분석해 보니 특정 요청에서 같은 데이터를 여러 번 조회하고 있었습니다. 조회 결과를 잠시 저장해 두는 캐시를 추가한 뒤에는 평균 응답 시간이 절반 이하로 줄었습니다.",
    "서울의 가을 하늘은 유난히 높고 푸릅니다. 주말이면 많은 사람들이 한강 공원에 나와 자전거를 타거나 돗자리를 펴고 소풍을 즐깁니다. 해가 지면 다리 위의 조명이 하나둘 켜지고, 강물에 비친 불빛이 도시를 더욱 아름답게 만듭니다.",
    "코드 리뷰를 할 때는 단순히 문제점을 지적하는 것보다 왜 그렇게 생각하는지 이유를 함께 설명하는 것이 좋습니다. 그래야 작성자가 의도를 이해하고 더 나은 방향으로 수정할 수 있습니다. 좋은 리뷰는 팀 전체의 실력을 높이는 가장 확실한 방법 중 하나입니다.",
    "조선 시대의 세종대왕은 백성들이 쉽게 글을 배울 수 있도록 훈민정음을 만들었습니다. 당시에는 한자를 아는 사람이 많지 않아서 대부분의 백성은 자신의 생각을 글로 표현하기 어려웠습니다. 한글은 과학적인 원리로 만들어져 지금도 세계적으로 높은 평가를 받고 있습니다.",
    "테스트 환경에서는 잘 동작하던 기능이 운영 환경에서만 실패하는 경우가 있습니다. 이번에도 그런 문제가 생겼는데, 확인해 보니 운영 서버의 파일 경로에 공백이 포함되어 있었습니다. 경로를 처리하는 부분을 수정하고 관련 테스트를 추가했습니다.",
    "건강을 지키기 위해 가장 중요한 것은 규칙적인 생활입니다. 매일 비슷한 시간에 잠자리에 들고, 아침을 거르지 않으며, 하루에 삼십 분 이상 걷는 것만으로도 몸의 변화를 느낄 수 있습니다. 무엇보다 꾸준히 실천하는 것이 중요합니다.",
    "어제 회의에서는 다음 분기의 목표를 정했습니다. 첫째, 사용자 가입 절차를 간단하게 만들고, 둘째, 모바일 화면의 속도를 개선하며, 셋째, 고객 문의에 대한 답변 시간을 하루 이내로 줄이는 것입니다. 각 팀은 다음 주까지 세부 계획을 제출하기로 했습니다.",
    "도서관에서 우연히 발견한 오래된 소설책 한 권이 제 인생을 바꾸어 놓았습니다. 주인공이 낯선 도시에서 새로운 삶을 시작하는 이야기였는데, 그 용기가 너무 부러웠습니다. 그 책을 읽은 지 일 년 뒤, 저도 다니던 회사를 그만두고 새로운 일을 시작했습니다.",
    "비가 오는 날에는 창가에 앉아 따뜻한 차를 마시며 음악을 듣는 것을 좋아합니다. 빗소리와 잔잔한 피아노 선율이 어우러지면 복잡했던 마음도 차분해집니다. 바쁜 일상 속에서 이런 조용한 시간은 저에게 꼭 필요한 휴식입니다.",
]

KINDS = ("prose", "code", "json", "cjk", "shell")
"""Text kinds of the corpus. The ±10% bound is promised for the first four; ``shell`` (tool
output of ``bash``: logs, listings, grep hits) is calibrated and reported too."""

CODE_EXTENSIONS = frozenset({".ts", ".tsx", ".js", ".mjs", ".py", ".rs", ".go", ".css", ".sh"})
SAMPLE_MIN_CHARS = 1000
SAMPLE_MAX_CHARS = 4000


@dataclass(frozen=True)
class Sample:
    kind: str
    held_out: bool
    text: str


def _json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _kind_of_path(path: str) -> str | None:
    ext = os.path.splitext(path)[1]
    if ext in CODE_EXTENSIONS:
        return "code"
    return {".json": "json", ".md": "prose"}.get(ext)


def _fixture_texts() -> list[tuple[str, bool, str]]:
    """(kind, held_out, text) of every text in the pi fixtures. Entry ``i`` of a file is held
    out when ``i % 5 == 4``: all texts of one entry fall on the same side."""
    texts: list[tuple[str, bool, str]] = []
    for name in FIXTURE_FILES:
        calls: dict[str, dict[str, Any]] = {}
        lines = (PI_FIXTURES / name).read_text(encoding="utf-8").splitlines()
        for index, line in enumerate(lines):
            held_out = index % 5 == 4
            if len(line) <= SAMPLE_MAX_CHARS:
                texts.append(("json", held_out, line))
            entry = json.loads(line)
            message = entry.get("message") if entry.get("type") == "message" else None
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks or []:
                kind: str | None = None
                text = ""
                if block.get("type") == "text" and role in ("user", "assistant"):
                    kind, text = "prose", block["text"]
                elif block.get("type") == "thinking":
                    kind, text = "prose", block["thinking"]
                elif block.get("type") == "toolCall":
                    args = block.get("arguments") or {}
                    calls[block.get("id", "")] = block
                    texts.append(("json", held_out, _json_text(args)))
                    path_kind = _kind_of_path(str(args.get("path", "")))
                    for key in ("content", "oldText", "newText"):
                        if path_kind and isinstance(args.get(key), str):
                            texts.append((path_kind, held_out, args[key]))
                    continue
                elif block.get("type") == "text" and role == "toolResult":
                    call = calls.get(message.get("toolCallId", ""), {})
                    args = call.get("arguments") or {}
                    if call.get("name") == "read":
                        kind = _kind_of_path(str(args.get("path", "")))
                    elif call.get("name") == "bash":
                        kind = "shell"
                    text = block["text"]
                if kind and text.strip():
                    texts.append((kind, held_out, text))
    return texts


def _chunks(text: str, max_chars: int) -> list[str]:
    """``text`` cut into pieces of at most ``max_chars``, at a line end when one lies in the
    last quarter of the window."""
    out = []
    while len(text) > max_chars:
        cut = text.rfind("\n", max_chars * 3 // 4, max_chars)
        cut = cut + 1 if cut > 0 else max_chars
        out.append(text[:cut])
        text = text[cut:]
    out.append(text)
    return out


def token_samples(
    min_chars: int = SAMPLE_MIN_CHARS, max_chars: int = SAMPLE_MAX_CHARS
) -> list[Sample]:
    """The calibration corpus: fixture texts of ``min_chars`` to ``max_chars`` characters
    (long texts cut, short texts of one kind and split joined with a blank line), of each kind,
    each on the training side or held out, and the CJK paragraphs above (90 to 140 characters,
    75 to 105 tokens; paragraph ``i`` of each language is held out when ``i % 4 == 3``).
    Deterministic."""
    samples: list[Sample] = []
    pending: dict[tuple[str, bool], str] = {}
    for kind, held_out, text in _fixture_texts():
        for chunk in _chunks(text, max_chars):
            key = (kind, held_out)
            joined = f"{pending[key]}\n\n{chunk}" if key in pending else chunk
            if len(joined) >= min_chars:
                samples.append(Sample(kind, held_out, joined))
                pending.pop(key, None)
            else:
                pending[key] = joined
    for paragraphs in (CHINESE, JAPANESE, KOREAN):
        samples.extend(Sample("cjk", i % 4 == 3, p) for i, p in enumerate(paragraphs))
    return samples


# ---- tests -------------------------------------------------------------------------------------

ENCODINGS = ("o200k_base", "cl100k_base")


def _fixtures_present() -> bool:
    return all((PI_FIXTURES / name).is_file() for name in FIXTURE_FILES)


needs_fixtures = pytest.mark.skipif(
    not _fixtures_present(), reason=f"{PI_FIXTURES} not found: the shared fixtures live in CI"
)


# Known counts from public sources: OpenAI's "How to count tokens with tiktoken" cookbook and
# tiktoken usage write-ups (cl100k_base: GPT-4, GPT-3.5-turbo), and the brief's o200k example.
@pytest.mark.parametrize(
    ("text", "encoding", "count"),
    [
        ("hello world", "o200k_base", 2),
        ("hello world", "cl100k_base", 2),
        ("tiktoken is great!", "cl100k_base", 6),
        ("お誕生日おめでとう", "cl100k_base", 9),
        ("China is great!", "cl100k_base", 4),
        ("Hello, how are you doing today?", "cl100k_base", 8),
        ("The quick brown fox jumps over the lazy dog.", "cl100k_base", 10),
        ("", "o200k_base", 0),
        ("", "cl100k_base", 0),
    ],
)
def test_known_counts(text: str, encoding: str, count: int) -> None:
    assert clawctx.count_tokens(text, encoding) == count
    assert clawctx.count_tokens(text, encoding=encoding, estimator="exact") == count


def test_default_encoding_is_o200k() -> None:
    text = "お誕生日おめでとう " * 10
    assert clawctx.count_tokens(text) == clawctx.count_tokens(text, "o200k_base")


def test_encodings_differ_where_expected() -> None:
    # o200k's larger vocabulary covers Japanese better; cl100k has no multi-digit-group tokens
    # beyond three digits either, but o200k merges longer whitespace and code runs.
    assert clawctx.count_tokens("お誕生日おめでとう", "o200k_base") < 9
    for paragraphs in (CHINESE, JAPANESE, KOREAN):
        text = "\n".join(paragraphs)
        assert clawctx.count_tokens(text, "o200k_base") < clawctx.count_tokens(text, "cl100k_base")
    # cl100k cuts contractions as separate pieces, o200k keeps them on the word.
    assert clawctx.count_tokens("don't", "cl100k_base") == 2
    assert clawctx.count_tokens("HelloWorld", "o200k_base") >= 2


def test_vocabulary_export() -> None:
    o200k = _core._token_vocabulary("o200k_base")
    cl100k = _core._token_vocabulary("cl100k_base")
    # Public facts of the vocabularies: 199,998 and 100,256 ordinary tokens (the special
    # tokens come after them), the first ranks are the printable ASCII bytes, and the sorted
    # o200k vocabulary starts with NUL, NUL NUL, 0x01 and holds runs of tabs.
    assert len(o200k) == 199_998
    assert len(cl100k) == 100_256
    assert o200k[:3] == cl100k[:3] == [b"!", b'"', b"#"]
    assert sorted(o200k)[:3] == [b"\x00", b"\x00\x00", b"\x01"]
    assert b"\t\t\t\t" in set(o200k)
    assert len(set(o200k)) == len(o200k)
    assert clawctx.count_tokens("\t\t\t\t") == 1


# ---- exact counts against tiktoken ---------------------------------------------------------


_TIKTOKEN: dict[str, Any] = {}


def tiktoken_encoding(name: str) -> Any:
    """tiktoken with the vocabulary clawctx ships (tiktoken cannot download its own here)."""
    tiktoken = pytest.importorskip("tiktoken")
    if name not in _TIKTOKEN:
        ranks = {token: rank for rank, token in enumerate(_core._token_vocabulary(name))}
        pattern = O200K_PAT if name == "o200k_base" else CL100K_PAT
        _TIKTOKEN[name] = tiktoken.Encoding(
            name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={}
        )
    return _TIKTOKEN[name]


EDGE_TEXTS = [
    " ",
    "  ",
    "\n",
    "\r\n\r\n",
    "a",
    "don't I'M they'RE we'll you'd it's 'tis",
    "  hello",
    "hello  ",
    "hello  \n  world\n\n\t\tend",
    "\t\tfoo\n\t\t\tbar(baz);\n",
    "1234567890 12 1234",
    "x\n\n\ny",
    "camelCaseIdentifiers and HTTPServer XMLHttpRequest ALLCAPS",
    "a.b,c;d:e!f?g/h\\i|j",
    '{"key":"value","n":[1,2,3],"nested":{"a":null}}',
    "path/to/file.ts // comment\n/* block */",
    "  .foo  (bar  -baz  123",
    "café naïve résumé Ωmega Привет мир",
    "emoji 😀👍🏽 family 👨‍👩‍👧 flags 🇯🇵",
    "combining e\u0301 and zero\u200bwidth",
    "tabs\tin\tline\t1\t22",
    "\x00\x01 control \x1f chars \x7f",
    "<|endoftext|> is plain text here",
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "mixed 中文 text and 日本語のテキスト, 한국어 텍스트 too",
    "\u3000全角スペース\u3000と、句読点。",
    "trailing space before end ",
    "line\u2028separator\u0085next",
    "a" * 5000,
    "ab" * 3000,
    " " * 100 + "x",
]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_exact_counts_match_tiktoken_on_edge_cases(encoding: str) -> None:
    enc = tiktoken_encoding(encoding)
    for text in EDGE_TEXTS:
        assert clawctx.count_tokens(text, encoding) == len(enc.encode_ordinary(text)), text[:60]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_exact_counts_match_tiktoken_on_random_text(encoding: str) -> None:
    """Random strings over an alphabet rich in the characters the pre-tokenizer treats
    specially (the ASCII fast path and the cut points between it and the regex path)."""
    enc = tiktoken_encoding(encoding)
    alphabet = list("aAbBsStTdDlLmMrRvVeE'0123456789 \t\n\r\x0b.,;:/\\\"{}()-_+=#") + list(
        "é中あ한😀\u00a0"
    )
    rng = random.Random(6)
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 120)))
        assert clawctx.count_tokens(text, encoding) == len(enc.encode_ordinary(text)), repr(text)


@needs_fixtures
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_exact_counts_match_tiktoken_on_real_sessions(encoding: str) -> None:
    enc = tiktoken_encoding(encoding)
    for sample in token_samples()[::7]:
        assert clawctx.count_tokens(sample.text, encoding) == len(enc.encode_ordinary(sample.text))


@needs_fixtures
def test_long_text_counted_in_parallel_is_exact() -> None:
    """Texts of 1 MB and more are cut at line starts and counted on several threads."""
    enc = tiktoken_encoding("o200k_base")
    text = (PI_FIXTURES / "large-session.jsonl").read_text(encoding="utf-8")
    text = (text * (1_500_000 // len(text) + 1))[:1_500_000]
    assert clawctx.count_tokens(text) == len(enc.encode_ordinary(text))
    lines = "\n".join(s.text for s in token_samples() if s.kind == "code")
    assert clawctx.count_tokens(lines * 2) == len(enc.encode_ordinary(lines * 2))


def test_long_inputs_without_whitespace() -> None:
    enc = tiktoken_encoding("o200k_base")
    rng = random.Random(1)
    b64 = base64.b64encode(rng.randbytes(300_000)).decode()
    minified = json.dumps(
        [{"id": i, "name": f"item{i}", "tags": ["a", "b"], "v": i / 7} for i in range(5000)],
        separators=(",", ":"),
    )
    for text in (b64, minified, "x" * 200_000):
        assert clawctx.count_tokens(text) == len(enc.encode_ordinary(text))


# ---- messages ----------------------------------------------------------------------------------


def count(text: str, encoding: str = "o200k_base") -> int:
    return clawctx.count_tokens(text, encoding)


def png(width: int, height: int, noise: bool = False) -> str:
    image = Image.new("RGB", (width, height), (200, 30, 30))
    if noise:
        rng = random.Random(width * height)
        image = Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


def encoded(width: int, height: int, fmt: str) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (10, 120, 200)).save(out, format=fmt)
    return base64.b64encode(out.getvalue()).decode()


def test_message_counting_rules() -> None:
    args = {"path": "src/main.rs", "offset": 1, "limit": 20}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Please read the file.", "timestamp": 1},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "first part"},
                {"type": "text", "text": "second part"},
                {"type": "unknown", "text": "not counted"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "thinking",
                    "thinking": "I should read it.",
                    "thinkingSignature": "x" * 500,
                },
                {"type": "text", "text": "Reading now."},
                {"type": "toolCall", "id": "call_1", "name": "read", "arguments": args},
            ],
            "usage": {"input": 100, "output": 20},
            "model": "gpt-4o",
        },
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "read",
            "content": [{"type": "text", "text": "fn main() {}\n"}],
            "details": {"ignored": "x" * 1000},
            "isError": False,
        },
        {"role": "bashExecution", "command": "ls -la", "output": "total 0\n", "exitCode": 0},
        {"role": "compactionSummary", "summary": "We read the file.", "tokensBefore": 5000},
        {"role": "branchSummary", "summary": "Tried another branch.", "fromId": "abc"},
        {"role": "custom", "customType": "note", "content": "custom text", "display": True},
        {"role": "system", "content": "system prompt text"},
        {"role": "assistant", "content": []},
    ]
    expected = [
        count("Please read the file."),
        count("first part") + count("second part"),
        count("I should read it.")
        + count("Reading now.")
        + count("read")
        + count(json.dumps(args, separators=(",", ":"))),
        count("fn main() {}\n"),
        count("ls -la") + count("total 0\n"),
        count("We read the file."),
        count("Tried another branch."),
        count("custom text"),
        count("system prompt text"),
        0,
    ]
    counts = clawctx.count_message_tokens(messages)
    assert isinstance(counts, np.ndarray)
    assert counts.dtype == np.int64
    assert counts.tolist() == expected
    assert clawctx.count_tokens(messages) == sum(expected)
    assert clawctx.count_tokens(clawctx.Transcript.from_list(messages)) == sum(expected)
    assert clawctx.count_message_tokens(clawctx.Transcript.from_list(messages)).tolist() == expected
    assert clawctx.count_tokens(messages[2]) == expected[2]
    assert clawctx.count_message_tokens([]).tolist() == []


def test_tool_call_variants_and_escapes() -> None:
    block_input = {"type": "toolUse", "id": "t", "name": "bash", "input": {"command": 'echo "hi"'}}
    message = {"role": "assistant", "content": [block_input]}
    assert clawctx.count_tokens(message) == count("bash") + count('{"command":"echo \\"hi\\""}')
    # Non-ASCII stays as is in the arguments' JSON, as JSON.stringify writes it.
    call = {"type": "toolCall", "id": "t", "name": "say", "arguments": {"text": "日本語"}}
    assert clawctx.count_tokens({"role": "assistant", "content": [call]}) == count("say") + count(
        '{"text":"日本語"}'
    )


def test_messages_with_cl100k_and_calibrated() -> None:
    messages = [{"role": "user", "content": "\n".join(JAPANESE)}]
    assert clawctx.count_message_tokens(messages, "cl100k_base").tolist() == [
        count("\n".join(JAPANESE), "cl100k_base")
    ]
    calibrated = clawctx.count_message_tokens(messages, estimator="calibrated").tolist()
    assert calibrated == [clawctx.count_tokens("\n".join(JAPANESE), estimator="calibrated")]


# ---- images ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "height", "tokens"),
    [
        (100, 100, 85 + 170 * 1),  # one tile
        (512, 512, 85 + 170 * 1),
        (513, 512, 85 + 170 * 2),
        (1024, 1024, 85 + 170 * 4),  # shorter side 1024 → 768: 768 x 768, 2 x 2 tiles
        (4096, 2048, 85 + 170 * 6),  # fit 2048 x 1024, then 1536 x 768: 3 x 2 tiles
        (2048, 4096, 85 + 170 * 6),
        (800, 600, 85 + 170 * 4),  # already within: 2 x 2 tiles
        (10000, 100, 85 + 170 * 4),  # fit 2048 x 20: 4 x 1 tiles
        (1, 1, 85 + 170),
    ],
)
def test_image_tokens_rule(width: int, height: int, tokens: int) -> None:
    assert clawctx.history.image_tokens(width, height) == tokens


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_images_are_charged_by_their_dimensions(fmt: str) -> None:
    data = encoded(1024, 600, fmt)
    for role in ("user", "toolResult"):
        message = {"role": role, "content": [{"type": "image", "data": data, "mimeType": "x"}]}
        assert clawctx.count_tokens(message) == clawctx.history.image_tokens(1024, 600)


def test_image_charge_does_not_depend_on_base64_length() -> None:
    flat, noisy = png(400, 300), png(400, 300, noise=True)
    assert len(noisy) > 10 * len(flat)
    charge = [
        clawctx.count_tokens({"role": "user", "content": [{"type": "image", "data": data}]})
        for data in (flat, noisy)
    ]
    assert charge == [clawctx.history.image_tokens(400, 300)] * 2
    for estimator in ("exact", "calibrated"):
        mixed = {
            "role": "toolResult",
            "content": [{"type": "text", "text": "screenshot"}, {"type": "image", "data": noisy}],
        }
        assert clawctx.count_tokens(mixed, estimator=estimator) == clawctx.count_tokens(
            "screenshot", estimator=estimator
        ) + clawctx.history.image_tokens(400, 300)


def test_image_sources_and_unreadable_images() -> None:
    data = png(2000, 1000)
    expected = clawctx.history.image_tokens(2000, 1000)
    as_url = {"type": "image", "data": "data:image/png;base64," + data}
    anthropic = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": data},
    }
    for block in (as_url, anthropic):
        assert clawctx.count_tokens({"role": "user", "content": [block]}) == expected
    # What cannot be read is charged the most the rule gives (2 x 4 tiles), never its length.
    unreadable = [
        {"type": "image", "data": "bm90IGFuIGltYWdl"},
        {"type": "image", "data": "%%% not base64"},
        {"type": "image", "url": "https://example.invalid/cat.png"},
    ]
    for block in unreadable:
        assert clawctx.count_tokens({"role": "user", "content": [block]}) == 85 + 170 * 8


# ---- the calibrated estimator -----------------------------------------------------------------


def test_calibrated_basics() -> None:
    assert clawctx.count_tokens("", estimator="calibrated") == 0
    assert clawctx.count_tokens("a", estimator="calibrated") >= 1
    names = _core._token_feature_names()
    assert len(names) == len(_core._token_features("hello world"))
    assert len(set(names)) == len(names)
    features = dict(zip(names, _core._token_features("Hello 世界 123"), strict=True))
    assert features["letters"] == 5
    assert features["han"] == 2
    assert features["digits"] == 3


@needs_fixtures
@pytest.mark.parametrize("kind", ["prose", "code", "json", "cjk", "shell"])
def test_calibrated_within_ten_percent_on_held_out_samples(kind: str) -> None:
    """The promise: within ±10% of the exact o200k_base count on every held-out sample of
    prose, code, JSON and CJK (and of shell output, which is calibrated too)."""
    held = [s for s in token_samples() if s.held_out and s.kind == kind]
    assert len(held) >= 9
    for sample in held:
        exact = clawctx.count_tokens(sample.text)
        estimate = clawctx.count_tokens(sample.text, estimator="calibrated")
        assert abs(estimate - exact) <= 0.10 * exact, (kind, exact, estimate, sample.text[:200])


def test_calibrated_on_cjk_paragraphs_without_fixtures() -> None:
    for paragraphs in (CHINESE, JAPANESE, KOREAN):
        for paragraph in paragraphs[3::4]:
            exact = clawctx.count_tokens(paragraph)
            assert (
                abs(clawctx.count_tokens(paragraph, estimator="calibrated") - exact) <= 0.1 * exact
            )


def test_calibrated_long_text_is_close_to_its_parts() -> None:
    """Texts of 1 MB and more are estimated on several threads; the sum stays the same up to
    a token per cut."""
    text = "\n".join(CHINESE + JAPANESE + KOREAN) + "\nThe quick brown fox.\n"
    long_text = text * (1_100_000 // len(text.encode()) + 1)
    one = clawctx.count_tokens(text, estimator="calibrated")
    repeats = long_text.count(text)
    assert abs(clawctx.count_tokens(long_text, estimator="calibrated") - one * repeats) <= repeats


# ---- the estimator's guarantee: 0.8-2x the exact count on every kind of text -----------------


def _kind_texts(chars: int, seed: int) -> dict[str, str]:
    """Deterministic texts of ``chars`` characters of every kind the guarantee covers."""
    rng = random.Random(seed)

    def repeat(unit: str) -> str:
        return (unit * (chars // len(unit) + 1))[:chars]

    def pick(alphabet: str | list[str]) -> str:
        return "".join(rng.choice(alphabet) for _ in range(chars))[:chars]

    def span(first: int, last: int) -> list[str]:
        return [chr(c) for c in range(first, last + 1)]

    raw = rng.randbytes(chars)
    return {
        "newlines": "\n" * chars,
        "crlf": repeat("\r\n"),
        "spaces": " " * chars,
        "tabs": "\t" * chars,
        "mixed whitespace": pick(" \t\n"),
        "dots": "." * chars,
        "dashes": "-" * chars,
        "punctuation": pick("!@#$%^&*()-=+[]{};:'\",.<>/?\\|`~"),
        "backslashes": "\\" * chars,
        "control": pick("\x00\x01\x02\x1b"),
        "chinese random": pick(span(0x4E00, 0x9FA5)),
        "chinese common": pick(
            "的一是不了人我在有他这为之大来以个中上们到说时地也子就道而要出和能对"
        ),
        "chinese repeated": "中" * chars,
        "chinese prose": repeat("这是一个测试。我们正在检查估计器的准确性，"),
        "japanese kana": pick(span(0x3041, 0x3096) + span(0x30A1, 0x30FA)),
        "japanese prose": repeat("日本語のテキストです。これはテストです。"),
        "korean random": pick(span(0xAC00, 0xD7A3)),
        "korean prose": repeat("안녕하세요 반갑습니다 "),
        "combining marks": repeat("a\u0301\u0302\u0303e\u0300"),
        "lone combining marks": "\u0301" * chars,
        "zalgo": repeat("z\u0336\u0337\u0338"),
        "emoji": pick(span(0x1F600, 0x1F64F)),
        "emoji repeated": "😀" * chars,
        "emoji zwj": repeat("👨\u200d👩\u200d👧\u200d👦"),
        "flags": repeat("🇺🇸🇯🇵"),
        "astral han": pick(span(0x20000, 0x200FF)),
        "private use": pick(span(0xE000, 0xE0FF)),
        "box drawing": pick("─│┌┐└┘├┤┬┴┼"),
        "math": pick("∀∂∃∅∇∈∉∋∏∑−∕∗∘√∝∞"),
        "base64": base64.b64encode(raw).decode()[:chars],
        "hex": raw.hex()[:chars],
        "digits": pick("0123456789"),
        "letters": pick("abcdefghijklmnopqrstuvwxyz"),
        "one letter": "a" * chars,
        "one capital": "A" * chars,
        "python": repeat(
            "def foo(x, y):\n    return [i * 2 for i in range(x) if i % y]\n\n"
            "class Bar:\n    pass\n"
        ),
        "rust": repeat(
            "fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * 2).collect();\n"
            '    println!("{:?}", v);\n}\n'
        ),
        "json": repeat(json.dumps({"key": [1, 2.5, "v"], "nested": {"a": None}}, indent=2)),
        "minified js": repeat("function(a,b){return a&&b?a.map(function(c){return c*2}):null};"),
        "english": repeat("The quick brown fox jumps over the lazy dog. "),
        "german": repeat("Größere Übungen für Straßenbahnfahrer sind schön. "),
        "french": repeat("Ça a été très élégant, n'est-ce pas ? "),
        "russian": repeat("Съешь же ещё этих мягких французских булок, да выпей чаю. "),
        "greek": repeat("Αυτή είναι μια δοκιμαστική πρόταση. "),
        "arabic": repeat("مرحبا بكم في هذا الاختبار للتقدير. "),
        "hindi": repeat("यह एक परीक्षण वाक्य है। "),
        "thai": repeat("นี่คือประโยคทดสอบภาษาไทย "),
        "mixed": pick(["hello ", "世界", "\n", "😀", "123", "...", "  ", "é", "\t", "def ", "{}"]),
        "mixed blocks": repeat(
            "Some prose here.\n\n" + "\n" * 40 + "中文字符" * 20 + " " * 60 + "😀" * 10
        ),
    }


def _assert_in_band(text: str, low: float, high: float, label: str) -> None:
    exact = clawctx.count_tokens(text)
    estimate = clawctx.count_tokens(text, estimator="calibrated")
    assert low * exact <= estimate <= high * exact, (label, len(text), exact, estimate)


@pytest.mark.parametrize("chars", [1, 2, 3, 5, 10, 30, 100, 300, 3_000, 30_000])
def test_calibrated_within_band_on_every_kind_of_small_text(chars: int) -> None:
    """The guarantee of ``count_tokens``' docstring: 0.8-2 times the exact o200k_base count."""
    for seed in (1, 2):
        for kind, text in _kind_texts(chars, seed).items():
            _assert_in_band(text, 0.8, 2.0, kind)


def test_calibrated_within_band_on_every_kind_of_long_text() -> None:
    for kind, text in _kind_texts(1_100_000, 3).items():
        _assert_in_band(text, 0.8, 2.0, kind)


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=3_000))
def test_calibrated_within_band_on_random_unicode(text: str) -> None:
    """Random code points (every script, surrogates excluded) in any order: the same band."""
    _assert_in_band(text, 0.8, 2.0, "random")


# ---- errors ------------------------------------------------------------------------------------


def test_errors() -> None:
    with pytest.raises(ValueError, match="unknown encoding"):
        clawctx.count_tokens("x", "p50k_base")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown estimator"):
        clawctx.count_tokens("x", estimator="chars/4")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown encoding"):
        clawctx.count_message_tokens([], "gpt2")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        clawctx.count_tokens(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        clawctx.count_tokens(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        clawctx.count_tokens(["not a message"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        clawctx.count_message_tokens("text")
    with pytest.raises(TypeError):
        clawctx.count_message_tokens({"role": "user", "content": "x"})
    with pytest.raises(ValueError, match="unknown encoding"):
        _core._token_vocabulary("r50k_base")  # type: ignore[arg-type]
