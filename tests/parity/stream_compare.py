"""toksmith's stream decoder against llama_detokenize: each chunking of an id list, and the
texts that give llama.cpp's clean_spaces passes work (test_stream_decode_gguf.py,
test_wordpiece_gguf.py)."""
from __future__ import annotations

import random
import re

from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import reference_decode

# what llama.cpp's clean_spaces passes rewrite: a space before ?!., or an apostrophe
PASS_BYTES = re.compile(rb" [?!.,']")
CHUNK_SIZES = (1, 2, 3, 7)


def pass_texts() -> list[str]:
    """Texts made for the clean-up passes, each also with trailing spaces (which a chunk may end on)."""
    texts = []
    for p in "?!.,":
        texts += [f"word {p}", f"a {p} b", f"a  {p}", f" {p}", f"{p} ", f"x {p}{p} {p}", f"Really {p}{p}{p} Yes {p}"]
    for tail in ("s", "m", "re", "ve", "t", "d", "ll", "S", "RE", "x", "", "r", "v"):
        texts += [f"it '{tail}", f"it '{tail} more", f" '{tail}", f"it  '{tail}", f"it ' {tail}", f"it '{tail}."]
    texts += [
        "don't", "don 't", " n't", "can n't", "I 'm here , you 're there . We 've won !",
        "' ", " ' ", "a ' b", "a ' ' b", " ' ' ' ", "'' ''", "a ' 's", "x ' 're", "' '",
        "\" quoted \" , and 'single' ' quotes ' .", "\u00ab a \u00bb , \u2018 b \u2019 .", "``hi'' ,",
        "a   .", "   '   ", "\t.", " \n.", "a \u3000.", "\u00e9 .", "\u65e5\u672c 's\u3060",
        "\U0001f600 ' \U0001f600", "tail ", "tail  ", "tail '", "tail 'r", "tail 'v", "x , y , z ...",
        "Hello , world ! How are you ? I 'm fine .", "print ( 'a' , 'b' )", "x = ' , '.join ( y )",
    ]
    return texts + [t + "  " for t in texts]


def chunkings(ids: list[int], rnd: random.Random):
    """(name, feeds): fixed chunk sizes, then two random chunkings."""
    for size in CHUNK_SIZES:
        yield f"size {size}", [ids[i:i + size] for i in range(0, len(ids), size)]
    for k in range(2):
        feeds, start = [], 0
        while start < len(ids):
            size = rnd.randint(1, 6)
            feeds.append(ids[start:start + size])
            start += size
        yield f"random #{k}", feeds


def streamed(tok, feeds, skip_special: bool) -> str:
    stream = tok.stream_decoder(skip_special=skip_special)
    return "".join(stream.feed(feed) for feed in feeds) + stream.finish()


def compare_streams(check: Comparison, tok, ref, ids: list[int], rnd: random.Random) -> None:
    """The stream's text for each chunking of `ids`, both skip_special values, against llama_detokenize."""
    for skip_special in (False, True):
        want = reference_decode(ref, ids, skip_special)
        for name, feeds in chunkings(ids, rnd):
            check.one(ids, streamed(tok, feeds, skip_special), want,
                      what=f"skip_special={skip_special}, chunks of {name}")
