"""tokenizer.json decoders vs tokenizers 0.23.3 on every corpus line, and in whole files.

1. Every line of every corpus, tokenized by each fixture vocabulary's own library (GPT-2's
   BPE in tokenizers, ruT5 and MiniLM's tokenizer.json, Llama 2's sentencepiece model),
   decoded by each decoder of tests/hf_decoders_reference.CONFIGS natively and by
   tokenizers; decode_bytes is the text's bytes (or, where tokenizers' text has U+FFFD,
   the raw bytes it replaced: DECODE_BYTES_KEEPS_INVALID_UTF8, bounded); every 25th line
   also streamed in random feeds.
2. Whole tokenizer.json files built with tokenizers' API from the real GPT-2 vocabulary
   and merges (byte-level BPE, which toksmith runs natively) with decoders other than
   ByteLevel alone (Strip, Replace, Fuse, ByteFallback over added `<0xHH>` tokens, none,
   ...) and added tokens (special, normalized, byte-token look-alikes): decode with both
   skip_special values of the ids of 1,000 lines of each corpus (added tokens spliced
   in), of random id lists with added tokens, and streams.
"""
from __future__ import annotations

import random

import pytest
import tokenizers
from tokenizers import AddedToken
from tokenizers import decoders as D
from tokenizers import models, pre_tokenizers, processors

import toksmith
from tests.conftest import LONG_RUNS, fixture_file, multilingual_sample, report
from tests.hf_decoders_reference import (CONFIGS, REFUSED, Reference, describe, native, ours_or_refused, real_ids,
                                         reference_or_refused, vocabulary)
from tests.parity.comparison import Comparison
from tests.parity.excuses.hf_a import DECODE_BYTES_KEEPS_INVALID_UTF8
from tests.parity.llama_cpp_compare import spliced
from toksmith._core.detokenizer import StreamDecoder

TOKENIZERS = f"tokenizers {tokenizers.__version__}"


# Most times per decoder that decode_bytes may be raw invalid UTF-8 where tokenizers' text has
# U+FFFD, on the ids of every corpus line (DECODE_BYTES_KEEPS_INVALID_UTF8); 0 for the others.
# Replace("Ġ", " ") before ByteLevel leaves " " where GPT-2's byte for U+0120 was, splitting
# a character's bytes (e.g. "Ä" -> b"\xc3\x83" + b"\x84"): today 18262.
INVALID_UTF8_BOUNDS = {describe(D.Sequence([D.Replace("\u0120", " "), D.ByteLevel()])): 18600}


def _all_lines(corpus_lines) -> list[str]:
    return [line for lines in corpus_lines.values() for line in lines]


def _stream(decoder_or_tok, ids, rnd, **kwargs) -> str:
    """Random feeds of 1 to 5 ids, joined."""
    stream = decoder_or_tok.stream_decoder(**kwargs) if hasattr(decoder_or_tok, "stream_decoder") \
        else StreamDecoder(decoder_or_tok)
    out, i = [], 0
    while i < len(ids):
        k = rnd.randint(1, 5)
        out.append(stream.feed(ids[i:i + k]))
        i += k
    return "".join(out) + stream.finish()


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_corpus_line_decodes_like_tokenizers(fixtures, corpus_lines, name):
    texts = vocabulary(fixtures, name)
    lines = _all_lines(corpus_lines)
    seqs = real_ids(fixtures, name, lines)
    rnd = random.Random(7)
    for ref in CONFIGS[name]:
        decoder = native(ref, texts)
        label = f"hf decoder {describe(ref)[:70]} on {name} ids of every corpus line"
        want = [REFUSED if w is None else w for w in Reference(ref, texts).decode_batch(seqs)]
        decoded = Comparison(f"{label}: decode (a refusal where tokenizers panics)", against=TOKENIZERS)
        as_bytes = Comparison(f"{label}: decode_bytes against the UTF-8 of tokenizers' text", against=TOKENIZERS,
                              excuses={DECODE_BYTES_KEEPS_INVALID_UTF8: INVALID_UTF8_BOUNDS.get(describe(ref), 0)})
        streamed = Comparison(f"{label}: every 25th streamed in random feeds", against=TOKENIZERS)
        decoded.all(lines, ours=[ours_or_refused(decoder.decode, ids) for ids in seqs], theirs=want)
        for k, (line, ids, w) in enumerate(decoded.pairs(lines, seqs, want)):
            if w is not REFUSED:        # a refusal was compared above: there are no bytes to compare
                as_bytes.one(line, decoder.decode_bytes(ids), w.encode("utf-8", "surrogatepass"))
                if k % 25 == 0:
                    streamed.one(line, _stream(decoder, ids, rnd), w)
        refused = want.count(REFUSED)
        report(f"{label}: {refused} where tokenizers panics, refused alike")
        decoded.finish()
        as_bytes.finish(at_least=len(lines) - refused)
        streamed.finish(at_least=0 if refused == len(lines) else 1)


# ---------------------------------------------------------------------- whole files

BYTE_TOKENS = ["<0xE3>", "<0x81>", "<0x82>", "<0x80>", "<0x41>"]

FILE_DECODERS = {
    "bytelevel-strip": D.Sequence([D.ByteLevel(), D.Strip(" ", 1, 0)]),
    "replace-bytelevel": D.Sequence([D.Replace("\u0120", " "), D.ByteLevel()]),
    "bytefallback-bytelevel": D.Sequence([D.ByteFallback(), D.ByteLevel()]),
    "bytelevel-replace-strip": D.Sequence([D.ByteLevel(), D.Replace(" the", " THE"), D.Strip("\n", 0, 1)]),
    "fuse": D.Fuse(),
    "none": None,
    "metaspace": D.Metaspace(replacement="\u0120"),
    "wordpiece": D.WordPiece(prefix="\u0120"),
    "fallback-fuse-bytelevel-strip": D.Sequence([D.ByteFallback(), D.Fuse(), D.ByteLevel(), D.Strip(" ", 1, 1)]),
}


def _gpt2_file(fixtures, folder, name: str, decoder) -> tuple[str, tokenizers.Tokenizer]:
    vocab, merges = fixture_file(fixtures, "hf/gpt2/vocab.json"), fixture_file(fixtures, "hf/gpt2/merges.txt")
    tok = tokenizers.Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoder
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False),
                            AddedToken("<sep/>", special=True, lstrip=True, normalized=False)])
    tok.add_tokens([AddedToken(" New York", lstrip=True),
                    *[AddedToken(t, normalized=False) for t in BYTE_TOKENS]])
    eot = tok.token_to_id("<|endoftext|>")
    tok.post_processor = processors.TemplateProcessing(single="$A <|endoftext|>",
                                                       special_tokens=[("<|endoftext|>", eot)])
    path = folder / f"{name}.json"
    tok.save(str(path))
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    return str(path), ref


def _reference_decodes(ref: tokenizers.Tokenizer, seqs, skip: bool) -> list:
    """tokenizers' decode of each id list, REFUSED where it panics (then one list at a time)."""
    want = reference_or_refused(ref.decode_batch, seqs, skip_special_tokens=skip)
    if want is REFUSED:
        want = [reference_or_refused(ref.decode, ids, skip_special_tokens=skip) for ids in seqs]
    return want


@pytest.mark.parametrize("name", list(FILE_DECODERS))
def test_tokenizer_json_files_decode_like_tokenizers(fixtures, corpus_lines, tmp_path, name):
    path, ref = _gpt2_file(fixtures, tmp_path, name, FILE_DECODERS[name])
    tok = toksmith.load(path)
    added = ["<|endoftext|>", "<sep/>", " New York", *BYTE_TOKENS]
    lines = spliced(multilingual_sample(corpus_lines, 1000) + LONG_RUNS, added, seed=3)
    seqs = [e.ids for e in ref.encode_batch(lines, add_special_tokens=True)]
    rnd = random.Random(5)
    n_vocab = ref.get_vocab_size()
    seqs += [[rnd.randrange(n_vocab) for _ in range(rnd.randint(0, 10))] for _ in range(2000)]
    byte_ids = [ref.token_to_id(t) for t in BYTE_TOKENS]
    seqs += [[rnd.choice(byte_ids + [50256, ref.token_to_id(" New York"), 220, 262]) for _ in range(rnd.randint(0, 8))]
             for _ in range(2000)]
    label = (f"tokenizer.json (GPT-2 BPE, decoder {name}): {len(seqs)} id lists ({len(lines)} lines with added "
             f"tokens spliced in, 4000 random) x skip_special 2")
    decoded = Comparison(f"{label}, decode (a refusal where tokenizers panics)", against=TOKENIZERS)
    streamed = Comparison(f"{label}, every 20th streamed", against=TOKENIZERS)
    refused = 0
    for skip in (False, True):
        want = _reference_decodes(ref, seqs, skip)
        for k, (ids, w) in enumerate(decoded.pairs(seqs, want)):
            decoded.one(ids, ours_or_refused(tok.decode, ids, skip_special=skip), w, what=f"skip_special={skip}")
            if w is REFUSED:
                refused += 1
            elif k % 20 == 0:
                streamed.one(ids, _stream(tok, ids, rnd, skip_special=skip), w, what=f"skip_special={skip}")
    report(f"{label}: {refused} where tokenizers panics, refused alike")
    decoded.finish(at_least=2 * len(seqs))
    streamed.finish()
