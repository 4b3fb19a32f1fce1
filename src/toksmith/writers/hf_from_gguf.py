def hf_spec_from_gguf(spec):
    raise NotImplementedError
def hf_spec_from_byte_level(spec):
    raise NotImplementedError
