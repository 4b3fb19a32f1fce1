"""Generate the Unicode tables of HF tokenizers' normalizers and BERT-style pre-tokenizers,
read EMPIRICALLY from the installed `tokenizers` (0.23.3) itself:

- src/toksmith/_core/unicode_hf_flags.pxi: one uint16 of flags per code point (which
  class of normalizers/bert.rs, normalizers/strip.rs, pre_tokenizers/bert.rs, whitespace.rs
  and punctuation.rs the character is in, and whether each Unicode normalization form
  leaves it alone).
- src/toksmith/_core/unicode_hf_norm.pxi: canonical combining classes, canonical and
  compatibility decompositions, the canonical composition pairs (as the crate
  unicode-normalization-alignments 0.1.12 has them: its Unicode version is older than
  Python's), and Rust's `char::to_lowercase` (tokenizers' NormalizedString::lowercase:
  per character, full mappings, no final-sigma context).

Every value is what tokenizers does to a code point (or a probe string around it), never
what Python's unicodedata says; unicodedata only proposes candidates (combining classes,
first-level decompositions) that are then checked against tokenizers. Before writing, a
Python model of the algorithms over the tables is run against tokenizers on every code
point and on random sequences (combining marks out of order, Hangul jamo, composites).

Tables are two-level: INDEX[cp >> 8] picks a distinct 256-entry block of BLOCKS.

Usage: python tools/gen_hf_unicode_tables.py   (writes both files; takes ~1 minute)
"""
from __future__ import annotations

import random
import sys
import unicodedata
from pathlib import Path

import tokenizers
from tokenizers import normalizers as N
from tokenizers import pre_tokenizers as P

MAX_CP = 0x110000
BLOCK = 256
OUT = Path(__file__).resolve().parent.parent / "src" / "toksmith" / "_core"

# Flag bits (must match _core/unicode_hf.pxd).
F_DROP = 1 << 0          # BertNormalizer clean_text removes it (NUL, U+FFFD, is_control)
F_BERT_SPACE = 1 << 1    # BertNormalizer clean_text makes it ' ' (is_whitespace)
F_CHINESE = 1 << 2       # BertNormalizer handle_chinese_chars puts spaces around it
F_MN = 1 << 3            # general category Mn (BertNormalizer strip_accents drops it after NFD)
F_MARK = 1 << 4          # StripAccents drops it (is_combining_mark: Mn, Mc, Me)
F_LOWER = 1 << 5         # char::to_lowercase changes it
F_NFD_INERT = 1 << 6     # NFD keeps it and it never reorders (no decomposition, class 0)
F_NFKD_INERT = 1 << 7    # the same for NFKD
F_NFC_INERT = 1 << 8     # NFC keeps it, and it neither composes with what precedes it nor reorders
F_NFKC_INERT = 1 << 9    # the same for NFKC
F_WHITESPACE = 1 << 10   # char::is_whitespace (= Rust regex \s)
F_PUNCT = 1 << 11        # BERT punctuation: is_ascii_punctuation || unicode_categories is_punctuation
F_WORD = 1 << 12         # Rust regex \w (the Whitespace pre-tokenizer's \w+|[^\w\s]+)

S_BASE, L_BASE, V_BASE, T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
L_COUNT, V_COUNT, T_COUNT = 19, 21, 28
N_COUNT, S_COUNT = V_COUNT * T_COUNT, 19 * 21 * 28

CODE_POINTS = [cp for cp in range(MAX_CP) if not 0xD800 <= cp <= 0xDFFF]


def is_hangul_syllable(cp: int) -> bool:
    return S_BASE <= cp < S_BASE + S_COUNT


def _bert(clean=False, chinese=False, strip=False, lower=False):
    return N.BertNormalizer(clean_text=clean, handle_chinese_chars=chinese, strip_accents=strip, lowercase=lower)


# ---------------------------------------------------------------------- reading tokenizers

def read_tables():
    nfd, nfkd, nfc, nfkc = N.NFD(), N.NFKD(), N.NFC(), N.NFKC()
    low, strip_accents = N.Lowercase(), N.StripAccents()
    clean, chinese, strip_mn = _bert(clean=True), _bert(chinese=True), _bert(strip=True)
    ws_split, whitespace, punct = P.WhitespaceSplit(), P.Whitespace(), P.Punctuation()
    t = {"nfd": {}, "nfkd": {}, "lower": {}, "flags": [0] * MAX_CP, "ccc": [0] * MAX_CP}
    nfc_of, nfkc_of = {}, {}
    for cp in CODE_POINTS:
        c = chr(cp)
        f = 0
        d = nfd.normalize_str(c)
        kd = nfkd.normalize_str(c)
        if d != c and not is_hangul_syllable(cp):
            t["nfd"][cp] = d
        if kd != c and not is_hangul_syllable(cp):
            t["nfkd"][cp] = kd
        nfc_of[cp] = nfc.normalize_str(c)
        nfkc_of[cp] = nfkc.normalize_str(c)
        lc = low.normalize_str(c)
        if lc != c:
            t["lower"][cp] = lc
            f |= F_LOWER
        cleaned = clean.normalize_str(c)
        if cleaned == "":
            f |= F_DROP
        elif cleaned == " " and c != " ":
            f |= F_BERT_SPACE
        else:
            assert cleaned == c, hex(cp)
        if chinese.normalize_str(c) == f" {c} ":
            f |= F_CHINESE
        if d == c and strip_mn.normalize_str(c) == "":
            f |= F_MN
        if strip_accents.normalize_str(c) == "":
            f |= F_MARK
        if ws_split.pre_tokenize_str(c) == []:
            f |= F_WHITESPACE
            assert whitespace.pre_tokenize_str(c) == [], hex(cp)     # Rust regex \s == is_whitespace
        else:
            pieces = [p for p, _ in whitespace.pre_tokenize_str("a" + c)]
            if pieces == ["a" + c]:
                f |= F_WORD
            else:
                assert pieces == ["a", c], hex(cp)
        pieces = [p for p, _ in punct.pre_tokenize_str("a" + c)]
        if pieces == ["a", c]:
            f |= F_PUNCT
        else:
            assert pieces == ["a" + c], hex(cp)
        t["flags"][cp] = f
    t["ccc"] = read_combining_classes(nfd, t)
    t["pairs"] = read_composition_pairs(nfc, t)
    return t, nfc_of, nfkc_of


def read_combining_classes(nfd, t) -> list[int]:
    """The crate's canonical combining class of every character that NFD keeps (only
    those ever reach its ordering). unicodedata proposes; reordering probes decide."""
    ccc = [0] * MAX_CP
    reps = {240: 0x0345}    # one character per class that the crate knows (it reorders)
    for cp in CODE_POINTS:
        v = unicodedata.combining(chr(cp))
        if v and v not in reps and cp not in t["nfd"] \
                and nfd.normalize_str(chr(0x0345) + chr(cp)) == chr(cp) + chr(0x0345):
            reps[v] = cp
    values = sorted(reps)
    for cp in CODE_POINTS:
        if cp in t["nfd"] or is_hangul_syllable(cp):
            continue
        c = chr(cp)
        moved = nfd.normalize_str(chr(0x0345) + c) == c + chr(0x0345)
        guess = unicodedata.combining(c)
        if not moved and guess != 240:
            continue
        assert guess, f"U+{cp:04X} reorders but unicodedata gives it class 0"
        for v in values:
            r = chr(reps[v])
            want_before = c + r if guess < v else r + c
            assert nfd.normalize_str(r + c) == want_before, (hex(cp), v)
            want_after = r + c if v < guess else c + r
            assert nfd.normalize_str(c + r) == want_after, (hex(cp), v)
        ccc[cp] = guess
    return ccc


def read_composition_pairs(nfc, t) -> dict[tuple[int, int], int]:
    """(first, second) -> composite, for the first-level canonical decompositions that
    tokenizers' NFC composes back (composition exclusions and characters newer than the
    crate drop out). Hangul is algorithmic and not listed."""
    pairs = {}
    for cp in CODE_POINTS:
        parts = unicodedata.decomposition(chr(cp)).split()
        if len(parts) != 2 or parts[0].startswith("<"):
            continue
        a, b = int(parts[0], 16), int(parts[1], 16)
        if nfc.normalize_str(chr(a) + chr(b)) == chr(cp) and cp in t["nfd"]:
            pairs[(a, b)] = cp
    return pairs


# ---------------------------------------------------------------------- the model, checked

class Model:
    """The algorithms of unicode-normalization-alignments over the tables (as the
    Cython code runs them): decompose + stable sort by class, then recompose."""

    def __init__(self, t):
        self.t = t
        self.seconds = {b for (_, b) in t["pairs"]}

    def decomp(self, cp: int, compat: bool) -> list[int]:
        if is_hangul_syllable(cp):
            s = cp - S_BASE
            out = [L_BASE + s // N_COUNT, V_BASE + (s % N_COUNT) // T_COUNT]
            if s % T_COUNT:
                out.append(T_BASE + s % T_COUNT)
            return out
        table = self.t["nfkd"] if compat else self.t["nfd"]
        return [ord(x) for x in table.get(cp, chr(cp))]

    def decompose(self, text: str, compat: bool) -> list[int]:
        out, pending = [], []
        ccc = self.t["ccc"]
        for ch in text:
            for d in self.decomp(ord(ch), compat):
                if ccc[d] == 0:
                    out += sorted(pending, key=lambda x: ccc[x])
                    pending = []
                    out.append(d)
                else:
                    pending.append(d)
        return out + sorted(pending, key=lambda x: ccc[x])

    def compose_pair(self, a: int, b: int):
        if L_BASE <= a < L_BASE + L_COUNT and V_BASE <= b < V_BASE + V_COUNT:
            return S_BASE + ((a - L_BASE) * V_COUNT + b - V_BASE) * T_COUNT
        if is_hangul_syllable(a) and (a - S_BASE) % T_COUNT == 0 and T_BASE < b < T_BASE + T_COUNT:
            return a + b - T_BASE
        return self.t["pairs"].get((a, b))

    def compose(self, cps: list[int]) -> list[int]:
        # Parity: unicode-normalization recompose.rs Recompositions::next
        out, buffer = [], []
        composee, last_ccc = None, None
        ccc = self.t["ccc"]
        for ch in cps:
            cls = ccc[ch]
            if composee is None:
                if cls != 0:
                    out.append(ch)
                    continue
                composee = ch
                continue
            if last_ccc is None:
                r = self.compose_pair(composee, ch)
                if r is not None:
                    composee = r
                    continue
                if cls == 0:
                    out.append(composee)
                    composee = ch
                    continue
                buffer.append(ch)
                last_ccc = cls
            else:
                if last_ccc >= cls:
                    if cls == 0:
                        out.append(composee)
                        out += buffer
                        buffer = []
                        composee, last_ccc = ch, None
                        continue
                    buffer.append(ch)
                    last_ccc = cls
                    continue
                r = self.compose_pair(composee, ch)
                if r is not None:
                    composee = r
                    continue
                buffer.append(ch)
                last_ccc = cls
        if composee is not None:
            out.append(composee)
        return out + buffer

    def normalize(self, form: str, text: str) -> str:
        d = self.decompose(text, compat=form in ("NFKD", "NFKC"))
        if form in ("NFC", "NFKC"):
            d = self.compose(d)
        return "".join(map(chr, d))


def add_inert_flags(t, nfc_of, nfkc_of) -> None:
    model = Model(t)
    seconds = model.seconds | set(range(V_BASE, V_BASE + V_COUNT)) | set(range(T_BASE + 1, T_BASE + T_COUNT))
    ccc, flags = t["ccc"], t["flags"]
    for cp in CODE_POINTS:
        c = chr(cp)
        d = model.decomp(cp, False)
        kd = model.decomp(cp, True)
        if d == [cp] and ccc[cp] == 0:
            flags[cp] |= F_NFD_INERT
        if kd == [cp] and ccc[cp] == 0:
            flags[cp] |= F_NFKD_INERT
        if nfc_of[cp] == c and ccc[d[0]] == 0 and d[0] not in seconds:
            flags[cp] |= F_NFC_INERT
        if nfkc_of[cp] == c and ccc[kd[0]] == 0 and kd[0] not in seconds:
            flags[cp] |= F_NFKC_INERT
        if flags[cp] & F_CHINESE:
            # BertNormalizer copies a Chinese character as it is unless NFD changes it
            # (unicode_normalizers.pyx; the compatibility ideographs decompose)
            assert not flags[cp] & (F_LOWER | F_MN | F_MARK | F_DROP | F_BERT_SPACE), hex(cp)


def check_model(t) -> None:
    """The model over the tables == tokenizers, on every code point and random sequences."""
    model = Model(t)
    forms = {name: getattr(N, name)() for name in ("NFD", "NFKD", "NFC", "NFKC")}
    for cp in CODE_POINTS:
        for name, ref in forms.items():
            want = ref.normalize_str(chr(cp))
            assert model.normalize(name, chr(cp)) == want, (name, hex(cp))
    marks = [cp for cp in CODE_POINTS if t["ccc"][cp]]
    composites = sorted(set(t["pairs"].values()))
    firsts = sorted({a for a, _ in t["pairs"]})
    jamo = list(range(L_BASE, L_BASE + L_COUNT)) + list(range(V_BASE, V_BASE + V_COUNT)) \
        + list(range(T_BASE, T_BASE + T_COUNT)) + [S_BASE, S_BASE + 1, S_BASE + T_COUNT]
    compat = sorted(t["nfkd"])
    pools = [marks, composites, firsts, jamo, compat, list(range(0x41, 0x7B))]
    rnd = random.Random(12345)
    for _ in range(200_000):
        text = "".join(chr(rnd.choice(rnd.choice(pools))) for _ in range(rnd.randint(1, 8)))
        for name, ref in forms.items():
            assert model.normalize(name, text) == ref.normalize_str(text), (name, [hex(ord(x)) for x in text])


# ---------------------------------------------------------------------- emitting C

def two_level(name: str, ctype: str, values: list[int]) -> str:
    blocks: dict[tuple, int] = {}
    index = []
    for start in range(0, MAX_CP, BLOCK):
        block = tuple(values[start:start + BLOCK])
        index.append(blocks.setdefault(block, len(blocks)))
    assert len(blocks) < 65536
    flat = [v for block in blocks for v in block]
    return (f"static const uint16_t {name}_INDEX[{len(index)}] = {{\n{c_list(index)}\n}};\n"
            f"static const {ctype} {name}_BLOCKS[{len(flat)}] = {{\n{c_list(flat)}\n}};\n")


def c_list(values, per_line=24) -> str:
    return "\n".join(",".join(str(v) for v in values[i:i + per_line]) + ","
                     for i in range(0, len(values), per_line)).rstrip(",")


def header(what: str) -> str:
    return (f"# GENERATED by tools/gen_hf_unicode_tables.py from tokenizers {tokenizers.__version__} "
            f"(read empirically); do not edit.\n# {what}\n")


def flags_pxi(t) -> str:
    return header("One uint16 of flags per code point: BLOCKS[INDEX[cp >> 8] * 256 + (cp & 255)]; "
                  "bits in unicode_hf.pxd.") + f'''from libc.stdint cimport uint16_t, uint32_t

cdef extern from *:
    """
#include <stdint.h>
{two_level("TOKSMITH_HF_FLAGS", "uint16_t", t["flags"])}
static inline uint16_t toksmith_hf_flags(uint32_t cp) {{
    return cp < 0x110000 ? TOKSMITH_HF_FLAGS_BLOCKS[TOKSMITH_HF_FLAGS_INDEX[cp >> 8] * 256 + (cp & 255)] : 0;
}}
    """
    uint16_t hf_flags "toksmith_hf_flags"(uint32_t cp) nogil
'''


def norm_pxi(t) -> str:
    # decompositions: POOL[i] = length, followed by the code points; index 0 = none
    pool, where = [0], {}

    def entry(text: str) -> int:
        if text not in where:
            where[text] = len(pool)
            pool.append(len(text))
            pool.extend(ord(x) for x in text)
        return where[text]

    nfd = [0] * MAX_CP
    nfkd = [0] * MAX_CP
    for cp, text in t["nfd"].items():
        nfd[cp] = entry(text)
    for cp, text in t["nfkd"].items():
        nfkd[cp] = entry(text)
    assert len(pool) < 65536
    lower = [0] * MAX_CP
    multi = []
    for cp, text in t["lower"].items():
        if len(text) == 1:
            lower[cp] = ord(text) - cp
        else:
            lower[cp] = LOWER_MULTI
            multi.append((cp, entry_lower(text)))
    assert len(multi) <= 4, multi
    keys = sorted(t["pairs"])
    pair_keys = [(a << 21) | b for a, b in keys]
    pair_values = [t["pairs"][k] for k in keys]
    multi_cps = [cp for cp, _ in multi] + [0] * (4 - len(multi))
    multi_text = [s for _, s in multi] + [[]] * (4 - len(multi))
    return header("Combining classes, decompositions (POOL: length then code points), composition pairs "
                  "and lowercase deltas.") + f'''from libc.stdint cimport int32_t, uint8_t, uint16_t, uint32_t, uint64_t

cdef extern from *:
    """
#include <stdint.h>
{two_level("TOKSMITH_HF_CCC", "uint8_t", t["ccc"])}
{two_level("TOKSMITH_HF_NFD", "uint16_t", nfd)}
{two_level("TOKSMITH_HF_NFKD", "uint16_t", nfkd)}
static const uint32_t TOKSMITH_HF_DECOMP_POOL[{len(pool)}] = {{
{c_list(pool)}
}};
{two_level("TOKSMITH_HF_LOWER", "int32_t", lower)}
/* characters whose lowercase is several: (code point, length, up to 3 code points) */
static const uint32_t TOKSMITH_HF_LOWER_MULTI_CP[4] = {{{c_list(multi_cps)}}};
static const uint32_t TOKSMITH_HF_LOWER_MULTI_TEXT[4][4] = {{{",".join("{" + c_list([len(m)] + m + [0] * (3 - len(m))) + "}" for m in multi_text)}}};
#define TOKSMITH_HF_LOWER_MULTI {LOWER_MULTI}
/* canonical composition: (first << 21 | second) sorted, and the composite of each */
#define TOKSMITH_HF_N_PAIRS {len(keys)}
static const uint64_t TOKSMITH_HF_PAIR_KEYS[{len(keys)}] = {{
{c_list([f"{k}ULL" for k in pair_keys], 8)}
}};
static const uint32_t TOKSMITH_HF_PAIR_VALUES[{len(keys)}] = {{
{c_list(pair_values)}
}};
static inline uint8_t toksmith_hf_ccc(uint32_t cp) {{
    return cp < 0x110000 ? TOKSMITH_HF_CCC_BLOCKS[TOKSMITH_HF_CCC_INDEX[cp >> 8] * 256 + (cp & 255)] : 0;
}}
static inline const uint32_t* toksmith_hf_decomposition(uint32_t cp, int compat) {{
    uint16_t i;
    if (cp >= 0x110000) return 0;
    i = compat ? TOKSMITH_HF_NFKD_BLOCKS[TOKSMITH_HF_NFKD_INDEX[cp >> 8] * 256 + (cp & 255)]
               : TOKSMITH_HF_NFD_BLOCKS[TOKSMITH_HF_NFD_INDEX[cp >> 8] * 256 + (cp & 255)];
    return i ? TOKSMITH_HF_DECOMP_POOL + i : 0;
}}
static inline int32_t toksmith_hf_lower_delta(uint32_t cp) {{
    return cp < 0x110000 ? TOKSMITH_HF_LOWER_BLOCKS[TOKSMITH_HF_LOWER_INDEX[cp >> 8] * 256 + (cp & 255)] : 0;
}}
static inline const uint32_t* toksmith_hf_lower_multi(uint32_t cp) {{
    int i;
    for (i = 0; i < 4; i++) if (TOKSMITH_HF_LOWER_MULTI_CP[i] == cp && cp) return TOKSMITH_HF_LOWER_MULTI_TEXT[i];
    return 0;
}}
static inline uint32_t toksmith_hf_compose_pair(uint32_t a, uint32_t b) {{
    uint64_t key = ((uint64_t)a << 21) | b;
    int lo = 0, hi = TOKSMITH_HF_N_PAIRS - 1, mid;
    while (lo <= hi) {{
        mid = (lo + hi) >> 1;
        if (TOKSMITH_HF_PAIR_KEYS[mid] == key) return TOKSMITH_HF_PAIR_VALUES[mid];
        if (TOKSMITH_HF_PAIR_KEYS[mid] < key) lo = mid + 1; else hi = mid - 1;
    }}
    return 0;
}}
    """
    uint8_t hf_ccc "toksmith_hf_ccc"(uint32_t cp) nogil
    # NULL, or a pointer p: p[0] code points follow at p[1..]
    const uint32_t* hf_decomposition "toksmith_hf_decomposition"(uint32_t cp, int compat) nogil
    # lowercase = cp + delta; HF_LOWER_MULTI: see hf_lower_multi
    int32_t hf_lower_delta "toksmith_hf_lower_delta"(uint32_t cp) nogil
    const uint32_t* hf_lower_multi "toksmith_hf_lower_multi"(uint32_t cp) nogil
    int32_t HF_LOWER_MULTI "TOKSMITH_HF_LOWER_MULTI"
    # the composite of the pair, 0 for none (Hangul is algorithmic, not listed)
    uint32_t hf_compose_pair "toksmith_hf_compose_pair"(uint32_t a, uint32_t b) nogil
'''


LOWER_MULTI = 0x7FFFFFFF


def entry_lower(text: str) -> list[int]:
    assert len(text) <= 3
    return [ord(x) for x in text]


def main() -> None:
    sys.stderr.write("reading tokenizers...\n")
    t, nfc_of, nfkc_of = read_tables()
    add_inert_flags(t, nfc_of, nfkc_of)
    sys.stderr.write(f"{len(t['nfd'])} canonical, {len(t['nfkd'])} compatibility decompositions, "
                     f"{len(t['pairs'])} pairs, {sum(1 for x in t['ccc'] if x)} marks, "
                     f"{len(t['lower'])} lowercase mappings; checking the model...\n")
    check_model(t)
    (OUT / "unicode_hf_flags.pxi").write_text(flags_pxi(t))
    (OUT / "unicode_hf_norm.pxi").write_text(norm_pxi(t))
    sys.stderr.write("written\n")


if __name__ == "__main__":
    main()
