"""One definition of token types: the core's (_core/token_types.pxd) and vocab.TokenType agree."""
from toksmith._core.token_types import TokenTypeCode
from toksmith.vocab import TokenType


def test_core_token_types_mirror_vocab_token_type():
    core = {member.name.removeprefix("TYPE_"): member.value for member in TokenTypeCode}
    python = {member.name: member.value for member in TokenType}
    assert core == python
