"""Token type codes of the core (see token_types.pxd), visible to Python for the agreement test.

>>> TokenTypeCode.TYPE_BYTE.value
6
"""
