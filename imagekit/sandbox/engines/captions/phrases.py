"""Render :class:`ImageFacts` as an English or Korean caption from a bilingual phrase table.

Every table entry pairs an English phrase with its Korean counterpart, so both captions always
say the same thing. Only the assembly differs: English runs "a vivid landscape image dominated by
blue, bright, ..."; Korean puts modifiers first ("파란색이 주를 이루는 선명한 가로 이미지, 밝은 분위기, ...")
and picks particles (과/와, 이/가, ...) by the preceding syllable.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from .language import SUPPORTED_LANGUAGES
from .measure import Composition, ImageFacts
from .palette import NamedColour

Phrase = tuple[str, str]
"""(English, Korean); the helpers below take ``i``, the index of the language in a Phrase."""

_COLOUR: dict[str, Phrase] = {
    "black": ("black", "검은색"), "grey": ("grey", "회색"), "white": ("white", "흰색"),
    "red": ("red", "빨간색"), "orange": ("orange", "주황색"), "yellow": ("yellow", "노란색"),
    "green": ("green", "초록색"), "teal": ("teal", "청록색"), "blue": ("blue", "파란색"),
    "purple": ("purple", "보라색"), "pink": ("pink", "분홍색"), "brown": ("brown", "갈색"),
    "beige": ("beige", "베이지색"),
}  # fmt: skip
_SHADE: dict[str | None, Phrase] = {None: ("", ""), "deep": ("deep", "진한"), "light": ("light", "연한")}
_SATURATION: dict[str, Phrase] = {
    "monochrome": ("monochrome", "무채색의"), "muted": ("muted", "차분한 색감의"),
    "moderate": ("", ""), "vivid": ("vivid", "선명한"),
}  # fmt: skip
_ORIENTATION: dict[str, Phrase] = {
    "tall": ("tall", "세로로 긴"), "portrait": ("portrait", "세로"), "square": ("square", "정사각형"),
    "landscape": ("landscape", "가로"), "panoramic": ("panoramic", "파노라마"),
}  # fmt: skip
_BRIGHTNESS: dict[str, Phrase] = {
    "dark": ("dark", "어두운 분위기"), "dim": ("dim", "어둑한 분위기"), "balanced": ("evenly lit", "적당한 밝기"),
    "bright": ("bright", "밝은 분위기"), "high-key": ("high-key", "아주 밝은 하이키 분위기"),
}  # fmt: skip
_CONTRAST: dict[str, Phrase] = {
    "low": ("low contrast", "낮은 대비"), "normal": ("", ""), "high": ("high contrast", "강한 대비"),
}  # fmt: skip
_DETAIL: dict[str, Phrase] = {
    "minimal": ("smooth, minimal detail", "매끄럽고 단순한 질감"), "moderate": ("moderate detail", "적당한 디테일"),
    "detailed": ("fine detail", "섬세한 디테일"), "busy": ("busy, dense texture", "복잡하고 빽빽한 질감"),
}  # fmt: skip
_HORIZONTAL: dict[str, Phrase] = {"left": ("left", "왼쪽"), "centre": ("", ""), "right": ("right", "오른쪽")}
_VERTICAL: dict[str, Phrase] = {"top": ("upper", "위"), "middle": ("", ""), "bottom": ("lower", "아래")}
_EDGE: dict[str, Phrase] = {"top": ("top", "위쪽"), "bottom": ("bottom", "아래쪽")}
_SUBJECT_SHARE: tuple[tuple[float, Phrase], ...] = (
    (0.06, ("", "")),  # below this the subject is just "small"
    (0.15, ("about a tenth of the frame", "화면의 약 10분의 1을")),
    (0.29, ("about a quarter of the frame", "화면의 약 4분의 1을")),
    (0.42, ("about a third of the frame", "화면의 약 3분의 1을")),
    (0.65, ("about half of the frame", "화면의 절반가량을")),
    (2.00, ("most of the frame", "화면 대부분을")),
)
_HORIZON: tuple[tuple[float, Phrase], ...] = (
    (0.4, ("a clear horizon in the upper third", "화면 위쪽의 뚜렷한 수평선")),
    (0.6, ("a clear horizon across the middle", "화면 가운데를 가로지르는 뚜렷한 수평선")),
    (2.0, ("a clear horizon in the lower third", "화면 아래쪽의 뚜렷한 수평선")),
)
_NO_SUBJECT: Phrase = ("no distinct subject", "뚜렷한 피사체 없음")
_TRANSPARENT: Phrase = ("on a transparent background", "투명한 배경")
_SYMMETRIC: Phrase = ("a symmetric composition", "좌우 대칭 구도")
_WEIGHT: Phrase = ("visual weight {place}", "{place}에 무게가 실린 구도")
_CENTRE: Phrase = ("centred", "중앙")
_SOLID_SHARE = 0.9
_MAIN_COLOUR_SHARE = 0.05


def _pick(bands: tuple[tuple[float, Phrase], ...], value: float) -> Phrase:
    return bands[bisect_right([bound for bound, _ in bands], value)][1]


def _josa(word: str, with_batchim: str, without: str) -> str:
    """Attach the particle form that fits the last syllable (이/가, 과/와, 으로/로, ...)."""
    code = ord(word[-1]) - 0xAC00
    final = code % 28 if 0 <= code < 11172 else 0  # 0: ends in a vowel (or is not Hangul)
    # 으로 is the one particle that treats a final ㄹ (index 8) like a vowel.
    consonant = final != 0 and not (with_batchim == "으로" and final == 8)
    return word + (with_batchim if consonant else without)


def _join(words: Sequence[str], lang: str) -> str:
    """"a, b and c" / "a, b와 c" (the particle goes on the word before the last)."""
    if len(words) == 1:
        return words[0]
    if lang == "en":
        return ", ".join(words[:-1]) + " and " + words[-1]
    return ", ".join([*words[:-2], _josa(words[-2], "과", "와")]) + " " + words[-1]


def _colour_word(colour: NamedColour, i: int) -> str:
    """The colour with its shade: "deep blue" / "진한 파란색"."""
    return " ".join(filter(None, (_SHADE[colour.shade][i], _COLOUR[colour.name][i])))


def _colour_words(colours: Sequence[NamedColour], i: int) -> list[str]:
    """Up to three main colours; always at least one."""
    main = [c for c in colours[:3] if c.share >= _MAIN_COLOUR_SHARE] or list(colours[:1])
    return [_colour_word(c, i) for c in main]


def _place(comp: Composition, i: int) -> str:
    """Where something sits: "in the upper left" / "왼쪽 위", "on the left", "at the top", "" for centre."""
    h, v = _HORIZONTAL[comp.horizontal][i], _VERTICAL[comp.vertical][i]
    if i == 1:
        return " ".join(filter(None, (h, v))) if h else _EDGE.get(comp.vertical, ("", ""))[1]
    if h and v:
        return f"in the {v} {h}"
    return f"on the {h}" if h else (f"at the {_EDGE[comp.vertical][0]}" if v else "")


def _subject(facts: ImageFacts, i: int) -> str:
    """"a small red subject in the lower left" / "왼쪽 아래의 작은 빨간색 피사체"."""
    if facts.subject_box is None:
        return _NO_SUBJECT[i]
    place, fill = _place(facts.composition, i), _pick(_SUBJECT_SHARE, facts.subject_share)[i]
    small = not fill
    colour = _colour_word(facts.subject_colour, i) if facts.subject_colour else ""
    if i == 1:
        words = [f"{fill} 차지하는" if fill else "", f"{place or _CENTRE[i]}의", "작은" if small else "", colour, "피사체"]
    else:
        centred = "" if place else _CENTRE[i]
        words = ["a", "small" if small else "", centred, colour, "subject", place, f"filling {fill}" if fill else ""]
    return " ".join(filter(None, words))


def _layout(facts: ImageFacts, i: int) -> list[str]:
    """Composition cues beyond the subject: symmetry, horizon, and where the weight sits otherwise."""
    comp, cues = facts.composition, []
    if comp.symmetric:
        cues.append(_SYMMETRIC[i])
    if comp.horizon is not None:
        cues.append(_pick(_HORIZON, comp.horizon)[i])
    elif facts.subject_box is None and (place := _place(comp, i)):
        cues.append(_WEIGHT[i].format(place=place))
    return cues


def render(facts: ImageFacts, lang: str) -> str:
    """The caption of ``facts`` in ``lang`` (one of ``SUPPORTED_LANGUAGES``, in Phrase order)."""
    i = SUPPORTED_LANGUAGES.index(lang)
    words = _colour_words(facts.colours, i)
    colours = _join(words, lang)
    solid = len(words) == 1 and facts.colours[0].share >= _SOLID_SHARE
    kind = " ".join(filter(None, (_SATURATION[facts.saturation][i], _ORIENTATION[facts.orientation][i])))
    if lang == "en":
        head = f"a {kind} image " + (f"filled almost entirely with {colours}" if solid else f"dominated by {colours}")
        subject = "with " + _subject(facts, i)
    else:
        lead = f"거의 {_josa(colours, '으로', '로')} 채워진" if solid else f"{_josa(colours, '이', '가')} 주를 이루는"
        head, subject = f"{lead} {kind} 이미지", _subject(facts, i)
    parts = [head, _BRIGHTNESS[facts.brightness][i], _CONTRAST[facts.contrast][i], subject]
    parts += [_TRANSPARENT[i] if facts.transparent else "", *_layout(facts, i), _DETAIL[facts.detail][i]]
    return ", ".join(filter(None, parts))
