"""The `toksmith` command line, run as ``python -m toksmith.cli`` in a subprocess.

Expected ids and pieces come from sentencepiece on the same model file (the
embedded SentencePiece demo model, given with -m unless a test asks for the
command's default, o200k_base, which is checked against tiktoken). Errors must exit
with status 1 and print one line, "toksmith: error: ...", on stderr, never a traceback.
"""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import pytest

import toksmith
from tests.conftest import fixture_file

import sentencepiece as spm

TEXTS = ["Hello, world", "  two  spaces  ", "café ＡＢＣ ①", "日本語のテキスト", "emoji 😀 🇯🇵", "tab\there", ""]


@pytest.fixture(scope="module")
def sp():
    return spm.SentencePieceProcessor(model_file=toksmith.embedded_model_path())


def with_demo_model(args: tuple[str, ...]) -> tuple[str, ...]:
    """`args` with ``-m <SentencePiece demo model>`` after the command when no model is named."""
    if not args or args[0] not in ("encode", "decode", "inspect") or "-m" in args or "--model" in args:
        return args
    if args[0] == "inspect" and any(not a.startswith("-") for a in args[1:]):
        return args
    return (args[0], "-m", toksmith.embedded_model_path(), *args[1:])


def cli(*args: str, stdin: bytes | None = None, env: dict | None = None,
        default_model: bool = False) -> subprocess.CompletedProcess:
    """Run the command; without `default_model`, on the SentencePiece demo model."""
    if not default_model:
        args = with_demo_model(args)
    full_env = dict(os.environ)
    full_env.pop("PYTHONIOENCODING", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "toksmith.cli", *args], input=stdin if stdin is not None else b"",
                          capture_output=True, timeout=120, env=full_env)


def out_lines(result: subprocess.CompletedProcess) -> list[str]:
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert b"Traceback" not in result.stderr
    return result.stdout.decode("utf-8").split("\n")[:-1]


def assert_cli_error(result: subprocess.CompletedProcess, *fragments: str) -> str:
    stderr = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 1, (result.returncode, stderr)
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("toksmith: error:"), stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, stderr)
    return lines[0]


def ids_line(ids) -> str:
    return " ".join(map(str, ids))


# ----------------------------------------------------------------- encode


def test_encode_text_argument(sp):
    assert out_lines(cli("encode", "Hello, world")) == [ids_line(sp.encode("Hello, world"))]


@pytest.mark.parametrize("text", TEXTS)
def test_encode_ids_pieces_and_json(sp, text):
    assert out_lines(cli("encode", "--", text)) == [ids_line(sp.encode(text))]
    assert out_lines(cli("encode", "--pieces", "--", text)) == [" ".join(sp.encode(text, out_type=str))]
    assert json.loads(out_lines(cli("encode", "--json", "--", text))[0]) == sp.encode(text)
    assert json.loads(out_lines(cli("encode", "--pieces", "--json", "--", text))[0]) == sp.encode(text, out_type=str)


def test_encode_no_special_on_a_model_without_default_specials(sp):
    # A .model adds no BOS/EOS by default, so --no-special changes nothing.
    assert out_lines(cli("encode", "--no-special", "Hello, world")) == [ids_line(sp.encode("Hello, world"))]


def test_encode_file(sp, tmp_path):
    lines = [t.encode() for t in TEXTS] + [b"caf\xff\xfe invalid", b"\xc3", b"last line"]
    path = tmp_path / "input.txt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert out_lines(cli("encode", "-f", str(path))) == [ids_line(sp.encode(raw)) for raw in lines]
    got = out_lines(cli("encode", "--json", "--file", str(path)))
    assert [json.loads(line) for line in got] == [sp.encode(raw) for raw in lines]


def test_encode_file_without_final_newline_and_crlf(sp, tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(b"first\r\nsecond")
    # Lines split on \n; the \r stays part of the first line (as the parity tests read corpora).
    assert out_lines(cli("encode", "-f", str(path))) == [ids_line(sp.encode("first\r")), ids_line(sp.encode("second"))]


def test_encode_stdin_lines(sp):
    stdin = "Hello\nworld\n\n日本語\nno newline at end"
    want = [ids_line(sp.encode(line)) for line in stdin.split("\n")]
    assert out_lines(cli("encode", stdin=stdin.encode())) == want
    assert out_lines(cli("encode", "-f", "-", stdin=stdin.encode())) == want
    pieces = out_lines(cli("encode", "--pieces", stdin=stdin.encode()))
    assert pieces == [" ".join(sp.encode(line, out_type=str)) for line in stdin.split("\n")]


def test_encode_stdin_invalid_utf8(sp):
    stdin = b"caf\xff\xfe ok\nplain\n"
    want = [ids_line(sp.encode(raw)) for raw in stdin.split(b"\n")[:-1]]
    assert out_lines(cli("encode", stdin=stdin, env={"LC_ALL": "C.UTF-8"})) == want


def test_encode_stdin_invalid_utf8_with_strict_locale(sp):
    stdin = b"caf\xff\xfe ok\nplain\n"
    want = [ids_line(sp.encode(raw)) for raw in stdin.split(b"\n")[:-1]]
    assert out_lines(cli("encode", stdin=stdin, env={"PYTHONIOENCODING": "utf-8:strict"})) == want


def test_encode_with_model_option(fixtures):
    path = fixture_file(fixtures, "spm/t5_base_japanese_spiece.model")
    ref = spm.SentencePieceProcessor(model_file=str(path))
    for text in ("吾輩は猫である。", "Hello, world"):
        assert out_lines(cli("encode", "-m", str(path), text)) == [ids_line(ref.encode(text))]
        assert out_lines(cli("encode", "--model", str(path), "--pieces", text)) == \
            [" ".join(ref.encode(text, out_type=str))]


def test_encode_output_stops_quietly_when_reader_goes_away(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("hello world line\n" * 200_000)
    proc = subprocess.Popen([sys.executable, "-m", "toksmith.cli", "encode", "-f", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == 0
    assert first.strip()
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr, stderr


# ----------------------------------------------------------------- decode


@pytest.mark.parametrize("text", [t for t in TEXTS if t])   # no ids at all means "read stdin"
def test_decode_round_trip(sp, text):
    ids = sp.encode(text)
    assert out_lines(cli("decode", *map(str, ids))) == [sp.decode(ids)]


def test_decode_list_syntax_and_stdin(sp):
    ids = sp.encode("Hello, world")
    assert out_lines(cli("decode", json.dumps(ids))) == ["Hello, world"]
    assert out_lines(cli("decode", ",".join(map(str, ids)))) == ["Hello, world"]
    stdin = "\n".join(ids_line(sp.encode(t)) for t in ("Hello", "world", "日本")) + "\n"
    assert out_lines(cli("decode", stdin=stdin.encode())) == ["Hello", "world", "日本"]


def test_encode_then_decode_pipeline(sp, tmp_path):
    path = tmp_path / "in.txt"
    texts = [t for t in TEXTS if t]
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    encoded = cli("encode", "-f", str(path))
    decoded = out_lines(cli("decode", stdin=encoded.stdout))
    assert decoded == [sp.decode(sp.encode(t)) for t in texts]


# ----------------------------------------------------------------- inspect


def test_inspect_embedded(sp):
    lines = out_lines(cli("inspect"))
    fields = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in lines if ":" in line}
    assert fields["vocab_size"] == str(sp.get_piece_size())
    assert fields["format"] == "sentencepiece"
    info = json.loads(cli("inspect", "--json").stdout)
    assert info["vocab_size"] == sp.get_piece_size()
    assert info["format"] == "sentencepiece"
    assert info["byte_fallback"] is True


def test_inspect_gguf(tmp_path):
    def s(text):
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    tokens = ["<pad>", "</s>", "<unk>", "\u2581", "a", "b", "\u2581ab"]
    kvs = [s("general.architecture") + struct.pack("<I", 8) + s("t5"),   # required, as llama.cpp does
           s("tokenizer.ggml.model") + struct.pack("<I", 8) + s("t5"),
           s("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, len(tokens)) + b"".join(s(t) for t in tokens)]
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))
    for args in (["inspect", str(path), "--json"], ["inspect", "-m", str(path), "--json"]):
        result = cli(*args)
        out_lines(result)
        info = json.loads(result.stdout)
        assert info["format"] == "gguf" and info["vocab_size"] == len(tokens)


# ----------------------------------------------------------------- errors


def test_error_missing_model_file(tmp_path):
    missing = str(tmp_path / "missing.model")
    assert_cli_error(cli("encode", "-m", missing, "hello"), missing)
    assert_cli_error(cli("decode", "-m", missing, "5"), missing)
    assert_cli_error(cli("inspect", missing), missing)


def test_error_bad_model_file(tmp_path):
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"this is not a sentencepiece model\n" * 3)
    assert_cli_error(cli("encode", "-m", str(bad), "hello"), str(bad))
    folder = tmp_path / "empty"
    folder.mkdir()
    assert_cli_error(cli("inspect", str(folder)), str(folder))
    broken = tmp_path / "tokenizer.json"
    broken.write_text('{"model": {"type": "BPE"}}')
    assert_cli_error(cli("encode", "-m", str(broken), "hello"), "$.model")


@pytest.mark.parametrize("bad", ["abc", "1.5", "0x10", "5a"])
def test_error_bad_id(bad):
    assert_cli_error(cli("decode", "5", bad), bad)


@pytest.mark.parametrize("bad", ["-1", "8000", str(2**70), str(-(2**70))])
def test_error_out_of_range_id(sp, bad):
    assert sp.get_piece_size() == 8000
    assert_cli_error(cli("decode", "-q", "259", bad), bad)
    assert_cli_error(cli("decode", "--quiet", stdin=f"259\n{bad}\n".encode()), bad)


def test_error_missing_input_file(tmp_path):
    assert_cli_error(cli("encode", "-f", str(tmp_path / "nope.txt")), "nope.txt")


def test_error_conflicting_arguments(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("x\n")
    assert_cli_error(cli("encode", "text", "-f", str(path)))
    assert_cli_error(cli("inspect", toksmith.embedded_model_path(), "-m", toksmith.embedded_model_path()))


def test_usage_error_has_no_traceback():
    result = cli()
    assert result.returncode == 2
    assert b"usage" in result.stderr and b"Traceback" not in result.stderr
    result = cli("frobnicate")
    assert result.returncode == 2 and b"Traceback" not in result.stderr


def test_main_in_process(capsys, sp):
    from toksmith.cli import main
    assert main(["encode", "-m", toksmith.embedded_model_path(), "--json", "Hello, world"]) == 0
    assert json.loads(capsys.readouterr().out) == sp.encode("Hello, world")
    assert main(["decode", "-q", "259", "999999"]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("toksmith: error:") and "999999" in captured.err


# ----------------------------------------------------------------- id words


@pytest.mark.parametrize("bad", ["1_5043", "\u0661\u0662\u0663", "\uff11\uff12", "12\u0663", "\u00b2", "+-1", "1e3"])
def test_error_non_ascii_digit_ids(bad):
    # int() takes "1_5043" as 15043 and Arabic-Indic / fullwidth digits as numbers; a token id
    # on the command line is ASCII decimal digits only.
    assert_cli_error(cli("decode", "-q", "259", bad), repr(bad))
    assert_cli_error(cli("decode", "-q", stdin=f"259 {bad}\n".encode()), repr(bad))


def test_signed_ids(sp):
    assert out_lines(cli("decode", "-q", "+259", "2372")) == [sp.decode([259, 2372])]
    assert_cli_error(cli("decode", "-q", "259", "-0259"), "-259")   # negative: out of range, named


# ----------------------------------------------------------------- closed output


def test_stdout_closed_is_one_clean_error_line():
    result = subprocess.run(f"'{sys.executable}' -m toksmith.cli encode -q hi >&-", shell=True,
                            capture_output=False, stderr=subprocess.PIPE, timeout=120)
    stderr = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 1, stderr
    assert stderr.splitlines() == ["toksmith: error: standard output is closed"], stderr


@pytest.mark.parametrize("args", [["encode", "-q", "hi"], ["decode", "-q", "259"], ["inspect", "-q"],
                                  ["encode", "-q", "-f", "-"]], ids=" ".join)
def test_reader_gone_before_the_first_write(args):
    # The read end of the pipe is closed before toksmith starts: every write fails with EPIPE,
    # small outputs only when Python flushes stdout at exit. `| head -1` does this in a race.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run([sys.executable, "-m", "toksmith.cli", *args], stdout=write_end,
                                stderr=subprocess.PIPE, input=b"hello\nworld\n", timeout=120)
    finally:
        os.close(write_end)
    assert result.stderr == b"", result.stderr.decode("utf-8", "replace")
    assert result.returncode == 0


# ----------------------------------------------------------------- the embedded default


EMBEDDED_NOTICE = ("toksmith: no -m given: using the embedded o200k_base (OpenAI's GPT-4o encoding); "
                   "-q hides this notice")


@pytest.fixture(scope="module")
def o200k(fixtures):
    from tests.tiktoken_reference import encoding
    return encoding("o200k_base", fixtures)


def test_default_model_is_o200k(o200k):
    """`toksmith encode "Hello, world"` prints GPT-4o's ids (tiktoken's, no file, no network)."""
    texts = ["Hello, world", *TEXTS[1:-1]]
    for text in texts:
        assert out_lines(cli("encode", "-q", text, default_model=True)) == [ids_line(o200k.encode_ordinary(text))]
    ids = o200k.encode_ordinary("Hello, world")
    assert out_lines(cli("decode", "-q", *map(str, ids), default_model=True)) == ["Hello, world"]


@pytest.mark.parametrize("args", [["encode", "Hello, world"], ["encode", "--pieces", "Hello"],
                                  ["decode", "13225", "11"], ["inspect"]], ids=" ".join)
def test_embedded_model_notice_on_stderr(args):
    result = cli(*args, default_model=True)
    assert result.returncode == 0
    assert result.stdout   # the output itself is unchanged and on stdout
    assert result.stderr.decode("utf-8").splitlines() == [EMBEDDED_NOTICE]


def test_embedded_model_notice_once_for_many_lines(o200k):
    result = cli("encode", stdin=b"one\ntwo\nthree\n", default_model=True)
    assert result.stdout.decode().splitlines() == [ids_line(o200k.encode_ordinary(t)) for t in ("one", "two", "three")]
    assert result.stderr.decode("utf-8").splitlines() == [EMBEDDED_NOTICE]


@pytest.mark.parametrize("quiet", ["-q", "--quiet"])
def test_embedded_model_notice_silenced_by_quiet(quiet):
    for args in (["encode", quiet, "Hello, world"], ["decode", quiet, "13225", "11"], ["inspect", quiet]):
        result = cli(*args, default_model=True)
        assert result.returncode == 0 and result.stdout
        assert result.stderr == b"", args


def test_no_notice_with_an_explicit_model():
    path = toksmith.embedded_model_path()
    for args in (["encode", "-m", path, "Hello"], ["decode", "-m", path, "259"], ["inspect", path]):
        result = cli(*args)
        assert result.returncode == 0 and result.stdout
        assert result.stderr == b"", args


def test_convert_refuses_an_unknown_suffix_and_a_missing_folder(tmp_path):
    demo = toksmith.embedded_model_path()
    assert_cli_error(cli("convert", demo, str(tmp_path / "out.bin")), "'.bin' names no format")
    assert_cli_error(cli("convert", demo, str(tmp_path / "missing" / "out.model")), "does not exist")
    assert_cli_error(cli("convert", str(tmp_path / "nothing.model"), str(tmp_path / "out.model")), "no such file")
    assert sorted(os.listdir(tmp_path)) == []


def test_convert_writes_a_file_the_target_reference_reads(tmp_path, sp):
    import tokenizers
    out = tmp_path / "demo.json"
    result = cli("convert", toksmith.embedded_model_path(), str(out))
    assert result.returncode == 0, result.stderr
    assert f"wrote {out}" in result.stderr.decode()
    ref = tokenizers.Tokenizer.from_file(str(out))
    for text in TEXTS:
        assert ref.encode(text, add_special_tokens=False).ids == sp.encode(text), text


def test_convert_refusal_names_what_is_missing_and_writes_nothing(tmp_path):
    out = tmp_path / "demo.tiktoken"
    assert_cli_error(cli("convert", toksmith.embedded_model_path(), str(out)), "cannot be written as",
                     "unigram")
    assert not out.exists()


# ----------------------------------------------------------------- encode -f and stdin (issue 30, item 12)

# CRLF, a lone CR (mid-line, at a line's start and at the very end), invalid UTF-8 and no final newline.
MIXED_LINE_ENDINGS = (b"crlf line\r\nlone\rcr inside\ninvalid \xff\xfe utf8\r\n\rstarts with cr\n"
                      b"\n\xc3\nno final newline\r")


@pytest.mark.parametrize("flags", [(), ("--pieces",), ("--json",), ("--pieces", "--json")])
def test_encode_file_and_stdin_agree_byte_for_byte(sp, tmp_path, flags):
    path = tmp_path / "mixed.txt"
    path.write_bytes(MIXED_LINE_ENDINGS)
    from_file = cli("encode", *flags, "-f", str(path))
    from_stdin = cli("encode", *flags, stdin=MIXED_LINE_ENDINGS)
    assert from_file.returncode == from_stdin.returncode == 0, (from_file.stderr, from_stdin.stderr)
    assert from_file.stdout == from_stdin.stdout
    if not flags:
        # Lines split at b"\n" only, each as sentencepiece encodes its bytes.
        want = [ids_line(sp.encode(raw)) for raw in MIXED_LINE_ENDINGS.split(b"\n")]
        assert out_lines(from_file) == want


# Runs a command with stdin from a file and prints its peak resident set size (KiB).
_PEAK_RSS = ("import resource, subprocess, sys\n"
             "with open(sys.argv[1], 'rb') as f:\n"
             "    subprocess.run(sys.argv[2:], stdin=f, stdout=subprocess.DEVNULL, check=True)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def _peak_rss_kib(stdin_path, *args: str) -> int:
    result = subprocess.run([sys.executable, "-c", _PEAK_RSS, str(stdin_path), sys.executable, "-m",
                             "toksmith.cli", *with_demo_model(args)], capture_output=True, timeout=300)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return int(result.stdout)


def test_encode_file_streams_in_bounded_memory(tmp_path):
    line = (b"streaming lines " * 4096)[:65535] + b"\n"         # 64 KiB lines
    big, small = tmp_path / "big.txt", tmp_path / "small.txt"
    big.write_bytes(line * 384)                                  # 24 MiB
    small.write_bytes(line)
    baseline = _peak_rss_kib(small, "encode", "-f", str(small))
    # Reading the whole file would hold its 24 MiB (as str) at least; one line at a time
    # holds a line and its ids.
    assert _peak_rss_kib(small, "encode", "-f", str(big)) - baseline < 12 * 1024
    assert _peak_rss_kib(big, "encode") - baseline < 12 * 1024


def test_convert_errors_name_the_cli_flags(tmp_path):
    demo = toksmith.embedded_model_path()
    line = assert_cli_error(cli("convert", demo, str(tmp_path / "out.bin")), "'.bin' names no format", "--format")
    assert "format=" not in line
    line = assert_cli_error(cli("convert", "--encoding", "cl100k_base", demo, str(tmp_path / "out.json")),
                            "--encoding")
    assert "encoding=" not in line
    line = assert_cli_error(cli("convert", "--pre", "qwen2", demo, str(tmp_path / "out.json")), "--pre")
    assert "pre=" not in line
    assert sorted(os.listdir(tmp_path)) == []
