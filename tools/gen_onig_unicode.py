"""Generate src/toksmith/hf/onig_unicode_data.py: the Unicode classes of the Oniguruma that
HF tokenizers 0.23.3 compiles Split/Replace regexes with (onig 6.5.3 / onig_sys 69.9.3,
Unicode 16), read EMPIRICALLY from the installed `tokenizers`: every class is the set of
code points a `pre_tokenizers.Split(Regex(...))` of that class matches in the text of all
code points (surrogates excluded: a Rust str cannot hold them).

Written:
- PROPERTIES: every `\\p{...}` name Oniguruma accepts from a candidate list (general
  categories, scripts, binary and emoji properties, POSIX names, old blocks), keyed by
  Oniguruma's normalized name (lowercase, without ' ', '-', '_'), as an index into SETS;
- ESCAPES: `\\w \\s \\d \\h` and the POSIX brackets `[[:alpha:]]`...;
- FOLDS: the simple case-fold classes of `(?i)` (each class: the code points a
  case-insensitive literal of any of them matches), and MULTI_FOLDS: the characters whose
  case folding is several characters (`(?i)ß` also matches "ss"), with those strings.

Usage: python tools/gen_onig_unicode.py > src/toksmith/hf/onig_unicode_data.py   (~4 minutes)
"""
from __future__ import annotations

import base64
import sys

from tokenizers import NormalizedString, Regex, normalizers, pre_tokenizers

import tokenizers

ALL = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)

GENERAL_CATEGORIES = (
    "C Other Cc Control Cf Format Cn Unassigned Co Private_Use Cs Surrogate "
    "L Letter LC Cased_Letter Ll Lowercase_Letter Lm Modifier_Letter Lo Other_Letter Lt Titlecase_Letter "
    "Lu Uppercase_Letter M Mark Combining_Mark Mc Spacing_Mark Me Enclosing_Mark Mn Nonspacing_Mark "
    "N Number Nd Decimal_Number Nl Letter_Number No Other_Number P Punctuation Pc Connector_Punctuation "
    "Pd Dash_Punctuation Pe Close_Punctuation Pf Final_Punctuation Pi Initial_Punctuation Po Other_Punctuation "
    "Ps Open_Punctuation S Symbol Sc Currency_Symbol Sk Modifier_Symbol Sm Math_Symbol So Other_Symbol "
    "Z Separator Zl Line_Separator Zp Paragraph_Separator Zs Space_Separator Any Assigned ASCII "
    "Alnum Alpha Blank Cntrl Digit Graph Lower Print Punct Space Upper XDigit Word NEWLINE").split()

SCRIPTS = (
    "Adlam Adlm Ahom Anatolian_Hieroglyphs Hluw Arabic Arab Armenian Armn Avestan Avst Balinese Bali Bamum Bamu "
    "Bassa_Vah Bass Batak Batk Bengali Beng Bhaiksuki Bhks Bopomofo Bopo Brahmi Brah Braille Brai Buginese Bugi "
    "Buhid Buhd Canadian_Aboriginal Cans Carian Cari Caucasian_Albanian Aghb Chakma Cakm Cham Cherokee Cher "
    "Chorasmian Chrs Common Zyyy Coptic Copt Qaac Cuneiform Xsux Cypriot Cprt Cypro_Minoan Cpmn Cyrillic Cyrl "
    "Deseret Dsrt Devanagari Deva Dives_Akuru Diak Dogra Dogr Duployan Dupl Egyptian_Hieroglyphs Egyp Elbasan "
    "Elba Elymaic Elym Ethiopic Ethi Garay Gara Georgian Geor Glagolitic Glag Gothic Goth Grantha Gran Greek Grek "
    "Gujarati Gujr Gunjala_Gondi Gong Gurmukhi Guru Gurung_Khema Gukh Han Hani Hangul Hang Hanifi_Rohingya Rohg "
    "Hanunoo Hano Hatran Hatr Hebrew Hebr Hiragana Hira Imperial_Aramaic Armi Inherited Zinh Qaai "
    "Inscriptional_Pahlavi Phli Inscriptional_Parthian Prti Javanese Java Kaithi Kthi Kannada Knda Katakana Kana "
    "Kawi Kayah_Li Kali Kharoshthi Khar Khitan_Small_Script Kits Khmer Khmr Khojki Khoj Khudawadi Sind Kirat_Rai "
    "Krai Lao Laoo Latin Latn Lepcha Lepc Limbu Limb Linear_A Lina Linear_B Linb Lisu Lycian Lyci Lydian Lydi "
    "Mahajani Mahj Makasar Maka Malayalam Mlym Mandaic Mand Manichaean Mani Marchen Marc Masaram_Gondi Gonm "
    "Medefaidrin Medf Meetei_Mayek Mtei Mende_Kikakui Mend Meroitic_Cursive Merc Meroitic_Hieroglyphs Mero Miao "
    "Plrd Modi Mongolian Mong Mro Mroo Multani Mult Myanmar Mymr Nabataean Nbat Nag_Mundari Nagm Nandinagari Nand "
    "New_Tai_Lue Talu Newa Nko Nkoo Nushu Nshu Nyiakeng_Puachue_Hmong Hmnp Ogham Ogam Ol_Chiki Olck Ol_Onal Onao "
    "Old_Hungarian Hung Old_Italic Ital Old_North_Arabian Narb Old_Permic Perm Old_Persian Xpeo Old_Sogdian Sogo "
    "Old_South_Arabian Sarb Old_Turkic Orkh Old_Uyghur Ougr Oriya Orya Osage Osge Osmanya Osma Pahawh_Hmong Hmng "
    "Palmyrene Palm Pau_Cin_Hau Pauc Phags_Pa Phag Phoenician Phnx Psalter_Pahlavi Phlp Rejang Rjng Runic Runr "
    "Samaritan Samr Saurashtra Saur Sharada Shrd Shavian Shaw Siddham Sidd SignWriting Sgnw Sinhala Sinh Sogdian "
    "Sogd Sora_Sompeng Sora Soyombo Soyo Sundanese Sund Sunuwar Sunu Syloti_Nagri Sylo Syriac Syrc Tagalog Tglg "
    "Tagbanwa Tagb Tai_Le Tale Tai_Tham Lana Tai_Viet Tavt Takri Takr Tamil Taml Tangsa Tnsa Tangut Tang Telugu "
    "Telu Thaana Thaa Thai Tibetan Tibt Tifinagh Tfng Tirhuta Tirh Todhri Todr Toto Tulu_Tigalari Tutg Ugaritic "
    "Ugar Unknown Zzzz Vai Vaii Vithkuqi Vith Wancho Wcho Warang_Citi Wara Yezidi Yezi Yi Yiii Zanabazar_Square "
    "Zanb Katakana_Or_Hiragana Hrkt").split()

BINARY = (
    "ASCII_Hex_Digit AHex Alphabetic Bidi_Control Bidi_C Case_Ignorable CI Cased Changes_When_Casefolded CWCF "
    "Changes_When_Casemapped CWCM Changes_When_Lowercased CWL Changes_When_Titlecased CWT Changes_When_Uppercased "
    "CWU Dash Default_Ignorable_Code_Point DI Deprecated Dep Diacritic Dia Extender Ext Grapheme_Base Gr_Base "
    "Grapheme_Extend Gr_Ext Grapheme_Link Gr_Link Hex_Digit Hex Hyphen IDS_Binary_Operator IDSB "
    "IDS_Trinary_Operator IDST IDS_Unary_Operator IDSU ID_Continue IDC ID_Start IDS Ideographic Ideo "
    "ID_Compat_Math_Continue ID_Compat_Math_Start InCB Join_Control Join_C Logical_Order_Exception LOE Lowercase "
    "Math Modifier_Combining_Mark MCM Noncharacter_Code_Point NChar Other_Alphabetic OAlpha "
    "Other_Default_Ignorable_Code_Point ODI Other_Grapheme_Extend OGr_Ext Other_ID_Continue OIDC Other_ID_Start "
    "OIDS Other_Lowercase OLower Other_Math OMath Other_Uppercase OUpper Pattern_Syntax Pat_Syn "
    "Pattern_White_Space Pat_WS Prepended_Concatenation_Mark PCM Quotation_Mark QMark Radical Regional_Indicator "
    "RI Sentence_Terminal STerm Soft_Dotted SD Terminal_Punctuation Term Unified_Ideograph UIdeo Uppercase "
    "Variation_Selector VS White_Space WSpace space XID_Continue XIDC XID_Start XIDS Emoji Emoji_Component "
    "EComp Emoji_Modifier EMod Emoji_Modifier_Base EBase Emoji_Presentation EPres Extended_Pictographic "
    "ExtPict").split()

BLOCKS = (
    "Basic_Latin Latin_1_Supplement Latin_Extended_A Latin_Extended_B IPA_Extensions Spacing_Modifier_Letters "
    "Combining_Diacritical_Marks Greek_and_Coptic Cyrillic Cyrillic_Supplement Armenian Hebrew Arabic Syriac "
    "Arabic_Supplement Thaana NKo Samaritan Mandaic Syriac_Supplement Arabic_Extended_A Devanagari Bengali "
    "Gurmukhi Gujarati Oriya Tamil Telugu Kannada Malayalam Sinhala Thai Lao Tibetan Myanmar Georgian Hangul_Jamo "
    "Ethiopic Ethiopic_Supplement Cherokee Unified_Canadian_Aboriginal_Syllabics Ogham Runic Tagalog Hanunoo "
    "Buhid Tagbanwa Khmer Mongolian Unified_Canadian_Aboriginal_Syllabics_Extended Limbu Tai_Le New_Tai_Lue "
    "Khmer_Symbols Buginese Tai_Tham Combining_Diacritical_Marks_Extended Balinese Sundanese Batak Lepcha "
    "Ol_Chiki Cyrillic_Extended_C Georgian_Extended Sundanese_Supplement Vedic_Extensions Phonetic_Extensions "
    "Phonetic_Extensions_Supplement Combining_Diacritical_Marks_Supplement Latin_Extended_Additional "
    "Greek_Extended General_Punctuation Superscripts_and_Subscripts Currency_Symbols "
    "Combining_Diacritical_Marks_for_Symbols Letterlike_Symbols Number_Forms Arrows Mathematical_Operators "
    "Miscellaneous_Technical Control_Pictures Optical_Character_Recognition Enclosed_Alphanumerics Box_Drawing "
    "Block_Elements Geometric_Shapes Miscellaneous_Symbols Dingbats Miscellaneous_Mathematical_Symbols_A "
    "Supplemental_Arrows_A Braille_Patterns Supplemental_Arrows_B Miscellaneous_Mathematical_Symbols_B "
    "Supplemental_Mathematical_Operators Miscellaneous_Symbols_and_Arrows Glagolitic Latin_Extended_C Coptic "
    "Georgian_Supplement Tifinagh Ethiopic_Extended Cyrillic_Extended_A Supplemental_Punctuation "
    "CJK_Radicals_Supplement Kangxi_Radicals Ideographic_Description_Characters CJK_Symbols_and_Punctuation "
    "Hiragana Katakana Bopomofo Hangul_Compatibility_Jamo Kanbun Bopomofo_Extended CJK_Strokes "
    "Katakana_Phonetic_Extensions Enclosed_CJK_Letters_and_Months CJK_Compatibility "
    "CJK_Unified_Ideographs_Extension_A Yijing_Hexagram_Symbols CJK_Unified_Ideographs Yi_Syllables Yi_Radicals "
    "Lisu Vai Cyrillic_Extended_B Bamum Modifier_Tone_Letters Latin_Extended_D Syloti_Nagri "
    "Common_Indic_Number_Forms Phags_pa Saurashtra Devanagari_Extended Kayah_Li Rejang Hangul_Jamo_Extended_A "
    "Javanese Myanmar_Extended_B Cham Myanmar_Extended_A Tai_Viet Meetei_Mayek_Extensions Ethiopic_Extended_A "
    "Latin_Extended_E Cherokee_Supplement Meetei_Mayek Hangul_Syllables Hangul_Jamo_Extended_B High_Surrogates "
    "High_Private_Use_Surrogates Low_Surrogates Private_Use_Area CJK_Compatibility_Ideographs "
    "Alphabetic_Presentation_Forms Arabic_Presentation_Forms_A Variation_Selectors Vertical_Forms "
    "Combining_Half_Marks CJK_Compatibility_Forms Small_Form_Variants Arabic_Presentation_Forms_B "
    "Halfwidth_and_Fullwidth_Forms Specials Linear_B_Syllabary Linear_B_Ideograms Aegean_Numbers "
    "Ancient_Greek_Numbers Ancient_Symbols Phaistos_Disc Lycian Carian Coptic_Epact_Numbers Old_Italic Gothic "
    "Old_Permic Ugaritic Old_Persian Deseret Shavian Osmanya Osage Elbasan Caucasian_Albanian Linear_A "
    "Cypriot_Syllabary Imperial_Aramaic Palmyrene Nabataean Hatran Phoenician Lydian Meroitic_Hieroglyphs "
    "Meroitic_Cursive Kharoshthi Old_South_Arabian Old_North_Arabian Manichaean Avestan Inscriptional_Parthian "
    "Inscriptional_Pahlavi Psalter_Pahlavi Old_Turkic Old_Hungarian Hanifi_Rohingya Rumi_Numeral_Symbols "
    "Old_Sogdian Sogdian Brahmi Kaithi Sora_Sompeng Chakma Mahajani Sharada Sinhala_Archaic_Numbers Khojki "
    "Multani Khudawadi Grantha Newa Tirhuta Siddham Modi Mongolian_Supplement Takri Ahom Dogra Warang_Citi "
    "Zanabazar_Square Soyombo Pau_Cin_Hau Bhaiksuki Marchen Masaram_Gondi Gunjala_Gondi Makasar Cuneiform "
    "Cuneiform_Numbers_and_Punctuation Early_Dynastic_Cuneiform Egyptian_Hieroglyphs Anatolian_Hieroglyphs "
    "Bamum_Supplement Mro Bassa_Vah Pahawh_Hmong Medefaidrin Miao Ideographic_Symbols_and_Punctuation Tangut "
    "Tangut_Components Kana_Supplement Kana_Extended_A Nushu Duployan Shorthand_Format_Controls "
    "Byzantine_Musical_Symbols Musical_Symbols Ancient_Greek_Musical_Notation Mayan_Numerals "
    "Tai_Xuan_Jing_Symbols Counting_Rod_Numerals Mathematical_Alphanumeric_Symbols Sutton_SignWriting "
    "Glagolitic_Supplement Mende_Kikakui Adlam Indic_Siyaq_Numbers Arabic_Mathematical_Alphabetic_Symbols "
    "Mahjong_Tiles Domino_Tiles Playing_Cards Enclosed_Alphanumeric_Supplement Enclosed_Ideographic_Supplement "
    "Miscellaneous_Symbols_and_Pictographs Emoticons Ornamental_Dingbats Transport_and_Map_Symbols "
    "Alchemical_Symbols Geometric_Shapes_Extended Supplemental_Arrows_C Supplemental_Symbols_and_Pictographs "
    "Chess_Symbols CJK_Unified_Ideographs_Extension_B CJK_Unified_Ideographs_Extension_C "
    "CJK_Unified_Ideographs_Extension_D CJK_Unified_Ideographs_Extension_E CJK_Unified_Ideographs_Extension_F "
    "CJK_Compatibility_Ideographs_Supplement Tags Variation_Selectors_Supplement "
    "Supplementary_Private_Use_Area_A Supplementary_Private_Use_Area_B No_Block").split()

ESCAPES = {"w": r"\w", "s": r"\s", "d": r"\d", "h": r"\h"}
POSIX = "alnum alpha ascii blank cntrl digit graph lower print punct space upper xdigit word".split()


def normalize_name(name: str) -> str:
    """Oniguruma's property-name key: case and ' ', '-', '_' ignored."""
    return "".join(ch for ch in name.lower() if ch not in " -_")


def compiles(pattern: str) -> bool:
    try:
        pre_tokenizers.Split(Regex(pattern), "isolated")
        return True
    except Exception:
        return False


_ALL_NS = None


def class_of(complement: str) -> list[tuple[int, int]]:
    """The code point ranges of a one-character class, given by the class of its
    COMPLEMENT (`\\P{L}` for `\\p{L}`). The text of all code points is split around runs
    of the complement; what remains are runs of consecutive code points in the class
    (code point = position, but for the surrogate gap)."""
    global _ALL_NS
    if _ALL_NS is None:
        _ALL_NS = NormalizedString(ALL)
    out: list[tuple[int, int]] = []
    for piece in _ALL_NS.split(Regex(f"(?:{complement})+"), "removed"):
        text = piece.original
        if not text:
            continue
        lo, hi = ord(text[0]), ord(text[-1])
        spans = [(lo, hi)] if not (lo < 0xD800 <= hi) else [(lo, 0xD7FF), (0xE000, hi)]
        for a, b in spans:
            if out and out[-1][1] + 1 == a:
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
    return out


def encode(ranges: list[tuple[int, int]]) -> str:
    """Ranges as base64 of LEB128 deltas (start - previous end, length - 1)."""
    out = bytearray()
    prev = -1
    for lo, hi in ranges:
        for value in (lo - prev - 1, hi - lo):
            while True:
                byte = value & 0x7F
                value >>= 7
                out.append(byte | (0x80 if value else 0))
                if not value:
                    break
        prev = hi
    return base64.b64encode(bytes(out)).decode("ascii")


def folds() -> tuple[list[list[int]], dict[int, str]]:
    """(simple case-fold classes of more than one code point, {cp: multi-char fold})."""
    cased = sorted({cp for lo, hi in class_of(r"[^\p{Cased}\p{CWCF}\p{CWCM}\p{CI}]") for cp in range(lo, hi + 1)})
    text = "\x00".join(chr(c) for c in cased)
    classes: dict[int, frozenset[int]] = {}
    for cp in cased:
        got = N_REPLACE(f"(?i)\\x{{{cp:X}}}", text)
        members = frozenset(cased[k] for k, hit in enumerate(got) if hit)
        assert cp in members, hex(cp)
        classes[cp] = members
    for cp, members in classes.items():
        for other in members:
            assert classes[other] == members, (hex(cp), hex(other))
    # Nothing outside `cased` folds to anything in it.
    wide = class_of("(?i)[^" + "".join(f"\\x{{{c:X}}}" for c in cased) + "]")
    assert {cp for lo, hi in wide for cp in range(lo, hi + 1)} == set(cased)
    multi: dict[int, str] = {}
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        full = chr(cp).casefold()
        if len(full) > 1 and N_MATCHES_WHOLE(f"(?i)\\x{{{cp:X}}}", full):
            multi[cp] = full
    for cp in cased:
        if cp not in multi and len(chr(cp).casefold()) > 1:
            raise AssertionError(f"{cp:X}: Python folds to several characters, Oniguruma not")
    unique = sorted({tuple(sorted(m)) for m in classes.values() if len(m) > 1})
    return [list(u) for u in unique], multi


def N_REPLACE(pattern: str, text: str) -> list[bool]:
    """For text = chars joined by NUL: whether each char is a whole match of pattern."""
    marked = normalizers.Replace(Regex(pattern), "\x01").normalize_str(text)
    return [part == "\x01" for part in marked.split("\x00")]


def N_MATCHES_WHOLE(pattern: str, text: str) -> bool:
    pieces = pre_tokenizers.Split(Regex(pattern), "removed", invert=True).pre_tokenize_str(text)
    return [o for _, o in pieces] == [(0, len(text))]


def main() -> None:
    sets: list[str] = []
    set_index: dict[str, int] = {}

    def add(ranges: list[tuple[int, int]]) -> int:
        code = encode(ranges)
        if code not in set_index:
            set_index[code] = len(sets)
            sets.append(code)
        return set_index[code]

    properties: dict[str, int] = {}
    for name in GENERAL_CATEGORIES + SCRIPTS + BINARY + ["In_" + b for b in BLOCKS]:
        key = normalize_name(name)
        if key in properties or not compiles(rf"\p{{{name}}}"):
            continue
        properties[key] = add(class_of(rf"\P{{{name}}}"))
    escapes = {k: add(class_of(v.upper())) for k, v in ESCAPES.items()}
    posix = {k: add(class_of(f"[[:^{k}:]]")) for k in POSIX}
    fold_classes, multi = folds()
    w = sys.stdout.write
    w(f'"""Generated by tools/gen_onig_unicode.py from tokenizers {tokenizers.__version__}\'s Oniguruma; do not edit.\n\n'
      "Sets are ranges encoded by tools/gen_onig_unicode.py:encode (see onig_unicode.decode_ranges).\n"
      '"""\n\n')
    w("SETS = [\n")
    for code in sets:
        w(f"    {code!r},\n")
    w("]\n\n# Oniguruma's normalized \\p{...} name -> index into SETS\nPROPERTIES = {\n")
    for key in sorted(properties):
        w(f"    {key!r}: {properties[key]},\n")
    w("}\n\n# \\w \\s \\d \\h -> index into SETS\nESCAPES = {\n")
    for key, value in escapes.items():
        w(f"    {key!r}: {value},\n")
    w("}\n\n# [[:name:]] -> index into SETS\nPOSIX_BRACKETS = {\n")
    for key, value in posix.items():
        w(f"    {key!r}: {value},\n")
    w("}\n\n# (?i): code points a case-insensitive literal of any member matches (classes of 2+)\nFOLD_CLASSES = [\n")
    for members in fold_classes:
        w(f"    {tuple(members)!r},\n")
    w("]\n\n# (?i): characters that also match a string of several characters (their case folding)\nMULTI_FOLDS = {\n")
    for cp in sorted(multi):
        w(f"    0x{cp:X}: {multi[cp]!r},\n")
    w("}\n")


if __name__ == "__main__":
    main()
