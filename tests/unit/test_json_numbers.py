"""tokenizer.json numbers read as tokenizers reads them (serde_json without
`float_roundtrip`, which is not correctly rounded): checked against tokenizers itself on
Unigram scores, the numbers whose last bit decides Viterbi ties.
"""
from __future__ import annotations

import json
import random

import pytest
import tokenizers

from toksmith.hf.json_numbers import serde_json_f64
from toksmith.hf.reader import read_hf_json


def _tokenizers_values(tmp_path, tokens: list[str]) -> list[float]:
    vocab = ",".join(f'["p{i}", {token}]' for i, token in enumerate(tokens))
    path = tmp_path / "scores.json"
    path.write_text('{"version": "1.0", "model": {"type": "Unigram", "unk_id": 0, "vocab": [%s]}}' % vocab)
    model = json.loads(tokenizers.Tokenizer.from_file(str(path)).to_str())["model"]
    return [score for _, score in model["vocab"]]


def _random_tokens(seed: int, n: int) -> list[str]:
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        k = rnd.random()
        if k < 0.4:
            out.append(repr(-rnd.random() * rnd.choice([1, 10, 30, 1e-5])))
        elif k < 0.6:
            out.append("-%d.%s" % (rnd.randrange(100), "".join(rnd.choice("0123456789")
                                                              for _ in range(rnd.randrange(1, 30)))))
        elif k < 0.7:
            out.append("%de%d" % (rnd.randrange(1, 10 ** rnd.randrange(1, 25)), rnd.randrange(-400, 280)))
        elif k < 0.8:
            out.append("%d.%de-%d" % (rnd.randrange(10 ** rnd.randrange(15, 25)), rnd.randrange(10 ** 5),
                                      rnd.randrange(0, 360)))
        elif k < 0.9:
            out.append("-%d%d.%d" % (rnd.randrange(10 ** 19, 10 ** 21), rnd.randrange(10),
                                     rnd.randrange(10 ** rnd.randrange(1, 8))))
        else:
            out.append("%s.%sE%s%d" % (rnd.choice(["0", "1", "18446744073709551615", "18446744073709551616"]),
                                       rnd.choice(["5", "0", "12345678901234567890"]),
                                       rnd.choice(["", "+", "-"]), rnd.randrange(0, 30)))
    return [t for t in out if abs(float(t)) < 1e300]


def test_scores_read_like_tokenizers(tmp_path):
    tokens = _random_tokens(3, 20000)
    want = _tokenizers_values(tmp_path, tokens)
    got = [serde_json_f64(t) for t in tokens]
    assert [repr(x) for x in got] == [repr(x) for x in want]
    # the point of it: Python's own float() differs on many of them
    assert sum(float(t) != w for t, w in zip(tokens, want)) > 1000


@pytest.mark.parametrize("token", ["1e309", "1.8e308", "-1e309", "1e99999999999", "1.7976931348623158e308"])
def test_out_of_range_is_an_error_as_in_tokenizers(tmp_path, token):
    with pytest.raises(Exception):
        _tokenizers_values(tmp_path, [token])
    with pytest.raises(ValueError, match="out of range"):
        serde_json_f64(token)


@pytest.mark.parametrize("token", ["0e99999999999", "1e-99999999999", "0.0e9999999999", "1e-400", "2e-324",
                                   "123456789012345678901234567890e-10", "17976931348623157e292", "-0.0", "-0e5"])
def test_edge_values(tmp_path, token):
    assert repr(serde_json_f64(token)) == repr(_tokenizers_values(tmp_path, [token])[0])


def test_integer_scores_read_like_tokenizers(tmp_path):
    # integers past u64 are parsed as floats by serde_json (digits past the u64 dropped)
    tokens = ["0", "-3", "18446744073709551615", "18446744073709551616", "-9223372036854775809",
              "184467440737095516160", "-123456789012345678901234567890"]
    want = _tokenizers_values(tmp_path, tokens)
    got = [score for _, score in read_hf_json((tmp_path / "scores.json").read_bytes(), "scores.json").model.vocab]
    assert [repr(x) for x in got] == [repr(x) for x in want]
