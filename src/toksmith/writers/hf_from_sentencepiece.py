def hf_spec_from_sentencepiece(spec):
    raise NotImplementedError
