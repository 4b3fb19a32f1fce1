"""Generate src/toksmith/_core/unicode_llama.pxi and unicode_tiktoken.pxi: per-codepoint flag tables of the pre-tokenizers.

Two tables, one byte of flags per codepoint, stored two-level (a block index per 256
codepoints, then the distinct 256-byte blocks). Each comes from its reference's OWN
Unicode data, never from Python's (a newer Unicode splits differently on the code points
it added):

- LLAMA: llama.cpp's own categories and whitespace set, parsed from its unicode-data.cpp
  (llama-cpp-python 0.3.36's vendor/llama.cpp/src/unicode-data.cpp).
- TIKTOKEN: the Unicode properties tiktoken's patterns use (\\p{L}, \\p{N}, \\p{M}, the o200k
  letter classes, \\s = White_Space), parsed from the tables of the Rust crate regex-syntax
  that tiktoken 0.14.0's wheel links (fancy-regex 0.19.0 -> regex-automata 0.4.18 ->
  regex-syntax 0.8.11, read from the crate paths in its _tiktoken*.so; tiktoken ships no
  Cargo.lock). regex-syntax 0.8.11 has Unicode 16.0.0 (its unicode_tables/*.rs say so; the
  generator checks the version line). Also checked: the only non-ASCII character whose
  simple case folding reaches a letter of the contractions' (?i:...) is U+017F (pretok_tiktoken's fold()).

Usage:
  pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36   (unpack it)
  git clone https://github.com/rust-lang/regex && git -C regex checkout regex-syntax-0.8.11
  python tools/gen_unicode_tables.py LLAMA_CPP/src/unicode-data.cpp regex/regex-syntax/src/unicode_tables
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

MAX_CP = 0x110000
BLOCK = 256

# Flag bits, shared low bits (must match _core/pretok_common.pxd)
LETTER, NUMBER, MARK, SPACE = 1, 2, 4, 8
L_LETTER, L_NUMBER, L_MARK, L_SPACE, L_PUNCT, L_SYMBOL, L_DEFINED = LETTER, NUMBER, MARK, SPACE, 16, 32, 64
T_LETTER, T_NUMBER, T_MARK, T_SPACE, T_UPPERISH, T_LOWERISH = LETTER, NUMBER, MARK, SPACE, 16, 32


def llama_flags(unicode_data_cpp: str) -> bytearray:
    text = Path(unicode_data_cpp).read_text()
    ranges_src = text.split("unicode_ranges_flags = {", 1)[1].split("};", 1)[0]
    ranges = [(int(a, 16), int(b, 16)) for a, b in re.findall(r"\{(0x[0-9A-Fa-f]+), (0x[0-9A-Fa-f]+)\}", ranges_src)]
    ws_src = text.split("unicode_set_whitespace = {", 1)[1].split("};", 1)[0]
    spaces = [int(x, 16) for x in re.findall(r"0x[0-9A-Fa-f]+", ws_src)]
    table = bytearray(MAX_CP)
    for (start, flags), (end, _) in zip(ranges, ranges[1:]):
        b = L_DEFINED  # every codepoint's flags are non-zero in llama.cpp (UNDEFINED is a bit too)
        if flags & 0x0002: b |= L_NUMBER
        if flags & 0x0004: b |= L_LETTER
        if flags & 0x0010: b |= L_MARK
        if flags & 0x0020: b |= L_PUNCT
        if flags & 0x0040: b |= L_SYMBOL
        for cp in range(start, end):
            table[cp] = b
    for cp in spaces:
        table[cp] |= L_SPACE
    # The contraction checks lower-case with unicode_tolower: make sure only ASCII letters
    # lower to s t m d r v e l (so the splitters may test ASCII only).
    lower_src = text.split("unicode_map_lowercase = {", 1)[1].split("};", 1)[0]
    for a, b in re.findall(r"\{(0x[0-9A-Fa-f]+), (0x[0-9A-Fa-f]+)\}", lower_src):
        if chr(int(b, 16)) in "stmdrvel" and int(a, 16) >= 0x80:
            raise SystemExit(f"non-ASCII {a} lowers to {chr(int(b, 16))}: the splitters assume none")
    return table


# The Rust crate regex-syntax whose Unicode tables tiktoken 0.14.0 runs on (see the module docstring).
REGEX_SYNTAX_VERSION = "0.8.11"
REGEX_SYNTAX_UNICODE = "16.0.0"
_RUST_CHAR = r"'(\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^'\\])'"  # one char literal, its body captured
_RUST_RANGE = re.compile(rf"\({_RUST_CHAR}, {_RUST_CHAR}\)")
_RUST_ESCAPES = {"\\0": 0, "\\t": 9, "\\n": 10, "\\r": 13, "\\'": 39, '\\"': 34, "\\\\": 92}


def rust_char(literal: str) -> int:
    """The code point of a Rust char literal's body: `a`, `\\u{1acf}`, `\\'`, `\\t`..."""
    if literal.startswith("\\u{"):
        return int(literal[3:-1], 16)
    if literal.startswith("\\x"):
        return int(literal[2:], 16)
    if literal.startswith("\\"):
        return _RUST_ESCAPES[literal]
    if len(literal) != 1:
        raise SystemExit(f"unexpected Rust char literal {literal!r}")
    return ord(literal)


def rust_table(tables_dir: str, file_name: str, const: str) -> list[tuple[int, int]]:
    """The inclusive (first, last) ranges of `pub const CONST: &'static [(char, char)]` in a
    regex-syntax unicode_tables/*.rs file, after checking the file's Unicode version."""
    text = (Path(tables_dir) / file_name).read_text()
    version = re.search(r"// Unicode version: ([0-9.]+)\.", text)
    if not version or version.group(1) != REGEX_SYNTAX_UNICODE:
        raise SystemExit(f"{file_name}: Unicode {version and version.group(1)}, expected {REGEX_SYNTAX_UNICODE} "
                         f"(regex-syntax {REGEX_SYNTAX_VERSION})")
    body = text.split(f"pub const {const}: &'static [(char, char)] = &[", 1)[1].split("];", 1)[0]
    ranges = [(rust_char(a), rust_char(b)) for a, b in _RUST_RANGE.findall(body)]
    if not ranges or any(a > b for a, b in ranges):
        raise SystemExit(f"{file_name}: no or bad ranges for {const}")
    return ranges


def check_contraction_folds(tables_dir: str) -> None:
    """pretok_tiktoken's fold() knows one non-ASCII folding: U+017F -> s. Check that regex-syntax's
    simple case folding adds no other non-ASCII character to a letter of the contractions."""
    text = (Path(tables_dir) / "case_folding_simple.rs").read_text()
    for key, targets in re.findall(rf"\({_RUST_CHAR}, &\[([^\]]*)\]\)", text):
        chars = {rust_char(key)} | {rust_char(t) for t in re.findall(_RUST_CHAR, targets)}
        letters = {c for c in chars if chr(c) in "sdmtlvre"}
        if letters and any(c >= 0x80 for c in chars) and chars - letters - {c - 32 for c in letters} != {0x17F}:
            raise SystemExit(f"case folding links {sorted(map(hex, chars))}: pretok_tiktoken's fold() knows only U+017F")


def tiktoken_flags(tables_dir: str) -> bytearray:
    def cats(*names: str) -> list[tuple[int, int]]:
        return [r for name in names for r in rust_table(tables_dir, "general_category.rs", name)]

    props = [(T_LETTER, cats("LETTER")), (T_NUMBER, cats("NUMBER")), (T_MARK, cats("MARK")),
             (T_SPACE, rust_table(tables_dir, "perl_space.rs", "WHITE_SPACE")),
             (T_UPPERISH, cats("UPPERCASE_LETTER", "TITLECASE_LETTER", "MODIFIER_LETTER", "OTHER_LETTER", "MARK")),
             (T_LOWERISH, cats("LOWERCASE_LETTER", "MODIFIER_LETTER", "OTHER_LETTER", "MARK"))]
    check_contraction_folds(tables_dir)
    table = bytearray(MAX_CP)
    for bit, ranges in props:
        for first, last in ranges:
            for cp in range(first, last + 1):
                if not 0xD800 <= cp < 0xE000:
                    table[cp] |= bit
    return table


def two_level(name: str, table: bytearray) -> str:
    blocks: dict[bytes, int] = {}
    index = []
    for i in range(0, MAX_CP, BLOCK):
        blk = bytes(table[i:i + BLOCK])
        index.append(blocks.setdefault(blk, len(blocks)))
    assert len(blocks) < 65536
    out = [f"static const unsigned short {name}_INDEX[{len(index)}] = {{"]
    for i in range(0, len(index), 24):
        out.append(",".join(str(x) for x in index[i:i + 24]) + ",")
    out.append("};")
    out.append(f"static const unsigned char {name}_BLOCKS[{len(blocks) * BLOCK}] = {{")
    for blk in blocks:
        for i in range(0, BLOCK, 64):
            out.append(",".join(str(x) for x in blk[i:i + 64]) + ",")
    out.append("};")
    return "\n".join(out)


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    src, rust_tables = sys.argv[1], sys.argv[2]
    core = Path(__file__).resolve().parents[1] / "src/toksmith/_core"
    for name, table, source in [
            ("LLAMA", llama_flags(src), "llama.cpp's unicode-data.cpp (llama-cpp-python 0.3.36)"),
            ("TIKTOKEN", tiktoken_flags(rust_tables),
             f"the Rust crate regex-syntax {REGEX_SYNTAX_VERSION} (Unicode {REGEX_SYNTAX_UNICODE}, tiktoken 0.14.0's)")]:
        out = core / f"unicode_{name.lower()}.pxi"
        out.write_text(
            f"# GENERATED by tools/gen_unicode_tables.py from {source}; do not edit.\n"
            "# One byte of flags per codepoint: BLOCKS[INDEX[cp >> 8] * 256 + (cp & 255)].\n"
            'cdef extern from *:\n    """\n' + two_level(f"TOKSMITH_{name}_FLAGS", table) + '\n    """\n'
            f"    const unsigned short* {name}_FLAGS_INDEX \"TOKSMITH_{name}_FLAGS_INDEX\"\n"
            f"    const unsigned char* {name}_FLAGS_BLOCKS \"TOKSMITH_{name}_FLAGS_BLOCKS\"\n")
        print(out, out.stat().st_size)


if __name__ == "__main__":
    main()
