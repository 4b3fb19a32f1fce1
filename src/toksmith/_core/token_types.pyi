# Type stub of token_types.pyx.
from enum import IntEnum

class TokenTypeCode(IntEnum):
    TYPE_UNDEFINED = 0
    TYPE_NORMAL = 1
    TYPE_UNKNOWN = 2
    TYPE_CONTROL = 3
    TYPE_USER_DEFINED = 4
    TYPE_UNUSED = 5
    TYPE_BYTE = 6
