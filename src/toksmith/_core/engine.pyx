"""The compiled tokenizer pipeline: it runs the stages it was given, knowing no model by name.

    special-token splitter -> normalizer -> pre-tokenizer (optional) -> model
    -> post-processor (add_special) ; decoder for decode

Each stage is a compiled object behind a small .pxd contract (specials.pxd,
normalizer.pxd, pretokenizer.pxd, model.pxd, postprocessor.pxd, detokenizer.pxd)
chosen once at load time (toksmith.models). `Engine` holds them, immutable;
every call keeps its working memory in a per-thread scratch area, so one engine
serves any number of threads. The scratch holds generic buffers, the
pre-tokenizer's work and a few model works found by their `WorkHeader.kind`, so it
does not grow with each model added. A call re-entered on the same thread (from a
warnings hook, a finalizer, a signal handler) gets a private scratch of its own.
Batches run on the core's thread pool (`_core/threadpool`), which survives fork.
`toksmith.Tokenizer` holds one engine.

    >>> engine = Engine(n_pieces, types, splitter=None, normalizer=normalizer,   # doctest: +SKIP
    ...                 pretokenizer=None, model=model, postprocessor=BosEos(1, -1),
    ...                 decoder=decoder)
"""
import operator
import os

cimport cython
from libc.stdint cimport int32_t, uint8_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy
from cpython.list cimport PyList_New

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_append, bytebuf_free, idbuf_free,
                                     idbuf_reserve)
from toksmith._core.detokenizer cimport Decoder, StreamDecoder
from toksmith._core.errors cimport ERR_NO_MEMORY, ERR_TOO_LONG
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.normalizer cimport NORMALIZED_LATE_START, TEXT_UNCHANGED, Normalizer
from toksmith._core.postprocessor cimport PostProcessor
from toksmith._core.pretokenizer cimport (PRETOK_REWRITTEN, PreTokenizer, PreTokenizerWork, pretok_work_bytes,
                                          pretok_work_free)
from toksmith._core.specials cimport SpecialSplitter, SplitWork, split_work_free
from toksmith._core.text cimport TextRef, text_ref, utf8_of
from toksmith._core.threadpool cimport parallel_for_hooked
from toksmith._core.token_types cimport TYPE_UNKNOWN

import gc
import warnings

from toksmith._core.errors import raise_for_status

cdef extern from "Python.h":
    ctypedef struct PyObject
    void Py_INCREF_RAW "Py_INCREF" (PyObject* o)
    void Py_XDECREF_RAW "Py_XDECREF" (PyObject* o)
    PyObject* PyLong_FromLong_RAW "PyLong_FromLong" (long v)   # a new reference, or NULL
    void PyList_SET_ITEM(object lst, Py_ssize_t i, PyObject* item)
    void PyObject_GC_UnTrack(void* op)

cdef extern from "<pthread.h>" nogil:
    ctypedef unsigned int pthread_key_t
    int pthread_key_create(pthread_key_t* key, void (*destructor)(void*))
    void* pthread_getspecific(pthread_key_t key)
    int pthread_setspecific(pthread_key_t key, const void* value)

# Past this size a thread's scratch memory is released after the call.
cdef Py_ssize_t SCRATCH_KEEP_BYTES = 8 << 20
cdef Py_ssize_t MAX_NORMALIZED_BYTES = 0x7FFFFFF0
# encode() releases the GIL for texts of at least this many UTF-8 bytes.
cdef Py_ssize_t GIL_RELEASE_MIN_BYTES = 256
# encode_batch uses one more thread per this many characters of input.
cdef Py_ssize_t BATCH_BYTES_PER_THREAD = 16384
# encode_batch's threads claim chunks of texts, large ones first (threadpool), and
# publish the results of each run of this many texts of a chunk at once, their ids
# in one allocation.
cdef enum:
    BATCH_RUN = 16
# A bound on a model work's bytes per byte of text (see _trim_scratch).
cdef Py_ssize_t MODEL_WORK_BYTES_PER_BYTE = 128
# A thread keeps the works of this many kinds of model (most recently used first).
cdef enum:
    MAX_MODEL_WORKS = 4


cdef struct Scratch:
    ByteBuf text             # UTF-8 of a non-ASCII str
    IdBuf out                # the ids of the call
    ByteBuf norm             # one fragment's normalized text
    ByteBuf norm_all         # every fragment's normalized text, for tokenize's spans
    IdBuf spans              # (start, end) in norm_all of each id, for tokenize
    IdBuf segments           # the special-token splitter's (id, start, end) triples
    IdBuf segments2          # the same for the splitter of normalized text
    IdBuf pre_ends           # the pre-tokenizer's end offsets
    SplitWork split
    SplitWork split2         # the splitter of normalized text's
    PreTokenizerWork pretok
    void* works[MAX_MODEL_WORKS]   # model works (each starts with a WorkHeader)
    Py_ssize_t largest_fragment    # bytes of the longest text a model encoded since the last trim
    bint valid_utf8          # the call's text is well-formed UTF-8 (it came from a str)
    bint busy                # a call on this thread is using it
    bint private             # made for a nested call; freed when that call ends


cdef void _free_scratch(void* p) noexcept nogil:
    cdef Scratch* sc = <Scratch*>p
    cdef int i
    if sc == NULL:
        return
    bytebuf_free(&sc.norm)
    bytebuf_free(&sc.norm_all)
    bytebuf_free(&sc.text)
    idbuf_free(&sc.out)
    idbuf_free(&sc.spans)
    idbuf_free(&sc.segments)
    idbuf_free(&sc.segments2)
    idbuf_free(&sc.pre_ends)
    split_work_free(&sc.split)
    split_work_free(&sc.split2)
    pretok_work_free(&sc.pretok)
    for i in range(MAX_MODEL_WORKS):
        if sc.works[i] != NULL:
            (<WorkHeader*>sc.works[i]).free(sc.works[i])
    free(sc)


cdef pthread_key_t _scratch_key
if pthread_key_create(&_scratch_key, _free_scratch) != 0:
    raise ImportError("toksmith: cannot create thread-local storage key")


cdef Scratch* _acquire_scratch() noexcept nogil:
    """This thread's scratch, or a private one when a call on this thread already uses it
    (re-entered from a hook or finalizer); NULL when out of memory. Pair with `_release_scratch`."""
    cdef Scratch* sc = <Scratch*>pthread_getspecific(_scratch_key)
    if sc == NULL:
        sc = <Scratch*>calloc(1, sizeof(Scratch))
        if sc != NULL and pthread_setspecific(_scratch_key, sc) != 0:
            sc.private = True
    elif sc.busy:
        sc = <Scratch*>calloc(1, sizeof(Scratch))
        if sc != NULL:
            sc.private = True
    if sc != NULL:
        sc.busy = True
    return sc


cdef void _release_scratch(Scratch* sc, Model model) noexcept nogil:
    """End a call: free a private scratch, or trim this thread's (`model`'s work included)."""
    if sc == NULL:
        return
    if sc.private:
        _free_scratch(sc)
    else:
        _trim_scratch(sc, model)
        sc.busy = False


cdef void _trim_scratch(Scratch* sc, Model model) noexcept nogil:
    if sc.norm.cap > SCRATCH_KEEP_BYTES:
        bytebuf_free(&sc.norm)
    if sc.norm_all.cap > SCRATCH_KEEP_BYTES:
        bytebuf_free(&sc.norm_all)
    if sc.text.cap > SCRATCH_KEEP_BYTES:
        bytebuf_free(&sc.text)
    if sc.out.cap * 4 > SCRATCH_KEEP_BYTES or sc.spans.cap * 4 > SCRATCH_KEEP_BYTES:
        idbuf_free(&sc.out)
        idbuf_free(&sc.spans)
        idbuf_free(&sc.segments)
        idbuf_free(&sc.segments2)
    if sc.pre_ends.cap * 4 > SCRATCH_KEEP_BYTES:
        idbuf_free(&sc.pre_ends)
    if sc.split.claimed.cap > SCRATCH_KEEP_BYTES:
        split_work_free(&sc.split)
    if sc.split2.claimed.cap > SCRATCH_KEEP_BYTES:
        split_work_free(&sc.split2)
    if pretok_work_bytes(&sc.pretok) > SCRATCH_KEEP_BYTES:
        pretok_work_free(&sc.pretok)
    # A model's work grows with the text it encodes, by well under
    # MODEL_WORK_BYTES_PER_BYTE per byte: after short texts there is nothing to trim.
    if sc.largest_fragment > SCRATCH_KEEP_BYTES // MODEL_WORK_BYTES_PER_BYTE:
        if sc.works[0] != NULL and (<WorkHeader*>sc.works[0]).kind == model.work_kind:
            model.trim_work(sc.works[0], SCRATCH_KEEP_BYTES)
        sc.largest_fragment = 0


cdef void* _model_work(Scratch* sc, Model model) noexcept nogil:
    """The thread's work for `model` (made on first use, moved to the front); NULL when
    out of memory. The least recently used work is freed when all slots are taken."""
    cdef int i, k
    cdef void* w
    for i in range(MAX_MODEL_WORKS):
        w = sc.works[i]
        if w == NULL:
            break
        if (<WorkHeader*>w).kind == model.work_kind:
            for k in range(i, 0, -1):
                sc.works[k] = sc.works[k - 1]
            sc.works[0] = w
            return w
    w = model.new_work()
    if w == NULL:
        return NULL
    if sc.works[MAX_MODEL_WORKS - 1] != NULL:
        (<WorkHeader*>sc.works[MAX_MODEL_WORKS - 1]).free(sc.works[MAX_MODEL_WORKS - 1])
    for k in range(MAX_MODEL_WORKS - 1, 0, -1):
        sc.works[k] = sc.works[k - 1]
    sc.works[0] = w
    return w


cdef list _id_list(const int32_t* ids, Py_ssize_t n, PyObject** objects):
    """Python list of `ids` (all in range), reusing the engine's int objects.

    `objects[id]` is made on the first use of `id` and kept: the ints a text needs are
    then allocated in the order the ids first appear, so the frequent ones sit together
    in memory, where building lists finds them in cache (made in id order, 128k ints
    spread over 4 MB and most touches missed).

    The list is out of the cyclic garbage collector's sight (as `pieces.untrack_flat_list`
    does for a vocabulary's lists): it holds only ints, so it closes no reference cycle,
    and every collection would otherwise visit each id of every list a program keeps; on
    GPT-2, one call per line with the results kept, those visits were a fifth of the
    pass. A list the caller later makes part of a cycle (ids.append(ids)) is then not
    freed by the collector; list(ids) is an ordinary, tracked copy (README: Use)."""
    cdef list out = PyList_New(n)   # its items are NULL until set (a list frees NULL items)
    cdef Py_ssize_t i
    cdef PyObject* item
    for i in range(n):
        item = objects[ids[i]]
        if item == NULL:
            item = PyLong_FromLong_RAW(ids[i])   # the reference `objects` keeps
            if item == NULL:
                raise MemoryError()
            objects[ids[i]] = item
        Py_INCREF_RAW(item)
        PyList_SET_ITEM(out, i, item)   # steals the reference
    PyObject_GC_UnTrack(<void*>out)
    return out


cdef object _as_text(object text):
    """`text` itself if it is str or bytes, else bytes of a bytes-like object."""
    if type(text) is str or type(text) is bytes:
        return text
    if isinstance(text, str):
        return str(text)
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError(f"text must be str or bytes, not {type(text).__name__}")


cdef _check_texts(object texts):
    """TypeError when `texts` is one text (or no iterable) where a sequence of texts is expected."""
    if isinstance(texts, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"texts must be an iterable of texts (str or bytes), not one "
                        f"{type(texts).__name__}; use encode() for a single text")
    try:
        iter(texts)
    except TypeError:
        raise TypeError(f"texts must be an iterable of texts (str or bytes), not "
                        f"{type(texts).__name__}") from None


cdef struct BatchWork:
    void* engine             # the Engine, kept alive by encode_batch
    const TextRef* refs
    IdBuf* results           # ids of each text: the first text of a run owns the run's
                             # allocation (cap > 0), the others are views into it (cap 0)
    int* status              # BATCH_PENDING until the text's result is published
    Py_ssize_t n
    bint add_special
    bint parse_special
    # the calling thread's side (_build_ready_lists), under the GIL:
    void* out                # the list of id lists being filled
    Py_ssize_t built         # texts [0, built) have their id list in out
    bint stop_building       # an error: the rest is left to encode_texts
    bint double_bos          # a built text started with two BOS ids (add_special only)


cdef extern from *:
    """
    static inline void toksmith_store_release(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline int toksmith_load_acquire(const int* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    """
    # a text's status is stored after its result: a thread that reads the status
    # (acquire) then sees the whole result
    void store_release "toksmith_store_release"(int* p, int v) noexcept nogil
    int load_acquire "toksmith_load_acquire"(const int* p) noexcept nogil

cdef int BATCH_PENDING = 1       # a status no encode returns (they return 0 or < 0)
# The calling thread takes the GIL to build id lists once this many texts are ready.
cdef Py_ssize_t BATCH_BUILD_MIN = 64


cdef bint _flag(object value, str name) except -1:
    """The value of a flag argument, which must be a bool: TypeError naming the flag for
    anything else (a str such as "yes" or "no" would otherwise count as true)."""
    if value is True:
        return True
    if value is False:
        return False
    kind = type(value)
    if kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool"):
        return bool(value)      # numpy's bool scalar
    raise TypeError(f"{name} must be a bool (True or False), not {kind.__name__} {value!r:.60}")


@cython.final
cdef class Engine:
    """The compiled stages of one tokenizer. Use `toksmith.load` to get one."""

    cdef readonly SpecialSplitter splitter        # None when no special text is ever split
    cdef readonly SpecialSplitter normalized_splitter   # added tokens matched after the normalizer, or None
    cdef readonly Normalizer normalizer           # None: the text is not rewritten
    cdef readonly PreTokenizer pretokenizer       # None: each fragment is one pre-token
    cdef readonly Model model
    cdef readonly PostProcessor postprocessor
    cdef readonly Decoder decoder
    cdef readonly Py_ssize_t n_pieces
    cdef uint8_t* piece_types
    cdef bint warned_double_bos
    cdef list _piece_strs
    cdef object _token_text  # id -> the str tokenize() shows, or None (see __init__)
    cdef bint _unknown_as_text
    cdef int32_t _text_shown_id
    cdef PyObject** _id_objects   # the Python int of every id once used (see _id_list), or NULL
    cdef bint configured
    cdef readonly bint joins_surrogates   # see __init__

    def __cinit__(self, *args, **kwargs):
        self.piece_types = NULL
        self._id_objects = NULL
        self.configured = False

    def __dealloc__(self):
        cdef Py_ssize_t i
        free(self.piece_types)
        if self._id_objects != NULL:
            for i in range(self.n_pieces):
                Py_XDECREF_RAW(self._id_objects[i])
            free(self._id_objects)

    def __init__(self, Py_ssize_t n_pieces, bytes types, *, SpecialSplitter splitter,
                 Normalizer normalizer, PreTokenizer pretokenizer, Model model not None,
                 PostProcessor postprocessor not None, Decoder decoder not None,
                 SpecialSplitter normalized_splitter=None, token_text=None, bint unknown_as_text=True,
                 int32_t text_shown_id=-1, bint joins_surrogates=False):
        """Hold the stages of one tokenizer over a vocabulary of `n_pieces` with `types`
        (one token type per piece). `normalized_splitter` splits tokens out of each
        fragment's normalized text (tokenizer.json's added tokens marked `normalized`).
        tokenize() shows `token_text(id)` for every id when given (tokenizer.json: the
        vocabulary's token strings, as tokenizers' Encoding.tokens), otherwise the
        decoder's text of each piece; except that a piece of type unknown (with
        `unknown_as_text`: sentencepiece's EncodeAsPieces) and the id `text_shown_id`
        (tokenizers' Unigram unk_id) show the normalized text they stand for.
        `joins_surrogates`: a str's surrogate pairs are read as their character and its
        lone surrogates as U+FFFD (tiktoken's Encoding.encode); otherwise a str with a
        surrogate raises UnicodeEncodeError, as str.encode("utf-8") does."""
        cdef Py_ssize_t i
        if self.configured:
            raise RuntimeError("engine is already configured")
        if n_pieces == 0 or len(types) != n_pieces:
            raise ValueError("pieces and types must be non-empty and of equal length")
        # The model may know fewer ids than the vocabulary (tiktoken's special tokens come
        # after the ranks and only the splitter emits them); the decoder must know all.
        if not (0 < model.n_pieces <= n_pieces) or decoder.n_pieces != n_pieces:
            raise ValueError(f"the model ({model.n_pieces} pieces) and decoder ({decoder.n_pieces}) "
                             f"must fit the vocabulary of {n_pieces} pieces")
        self.piece_types = <uint8_t*>malloc(n_pieces)
        if self.piece_types == NULL:
            raise MemoryError()
        for i in range(n_pieces):
            self.piece_types[i] = types[i]
        self.n_pieces = n_pieces
        self.splitter = splitter
        self.normalized_splitter = normalized_splitter
        self.normalizer = normalizer
        self.pretokenizer = pretokenizer
        self.model = model
        self.postprocessor = postprocessor
        self.decoder = decoder
        self._piece_strs = None   # made on first use (tokenize)
        self._token_text = token_text
        self._unknown_as_text = unknown_as_text
        self._text_shown_id = text_shown_id
        self.joins_surrogates = joins_surrogates
        self._id_objects = <PyObject**>calloc(n_pieces, sizeof(PyObject*))
        if self._id_objects == NULL:
            raise MemoryError()
        self.configured = True

    # ------------------------------------------------------------------ encode

    cdef int _encode(self, const unsigned char* s, Py_ssize_t n, bint add_special,
                     bint parse_special, Scratch* sc, IdBuf* out, bint want_spans) noexcept nogil:
        """Encode s[:n] into `out` (cleared first). Returns 0 or a negative error code."""
        cdef int rc = 0
        cdef Py_ssize_t k, start, text_start
        cdef int32_t token
        cdef IdBuf* spans = &sc.spans if want_spans else NULL
        cdef void* work = _model_work(sc, self.model)
        if work == NULL:
            return ERR_NO_MEMORY
        out.size = 0
        sc.spans.size = 0
        sc.norm_all.size = 0
        if add_special:
            rc = self.postprocessor.begin(out, spans)
            if rc < 0:
                return rc
        text_start = out.size
        if self.splitter is not None and (parse_special or self.splitter.has_always):
            if self.splitter.split(s, n, parse_special, &sc.split, &sc.segments) < 0:
                return ERR_NO_MEMORY
            for k in range(0, sc.segments.size, 3):
                token = sc.segments.data[k]
                if token >= 0:
                    if _push_special(out, spans, token) < 0:
                        return ERR_NO_MEMORY
                else:
                    start = sc.segments.data[k + 1]
                    rc = self._encode_fragment(s + start, sc.segments.data[k + 2] - start, start == 0,
                                               parse_special, sc, work, out, spans)
                    if rc < 0:
                        return rc
        else:
            rc = self._encode_fragment(s, n, True, parse_special, sc, work, out, spans)
            if rc < 0:
                return rc
        return self.postprocessor.finish(out, spans, text_start, add_special)

    cdef int _encode_fragment(self, const unsigned char* s, Py_ssize_t n, bint at_input_start,
                              bint parse_special, Scratch* sc, void* work, IdBuf* out,
                              IdBuf* spans) noexcept nogil:
        """Append the ids of one raw-text fragment: normalize, split out the added tokens
        matched in normalized text, pre-tokenize, model. `at_input_start`: the fragment
        starts the input."""
        cdef int rc
        cdef Py_ssize_t k, start, size
        cdef int32_t token
        cdef const unsigned char* norm
        if n == 0:
            return 0
        if self.normalizer is not None and not (sc.valid_utf8 and self.normalizer.repairs_utf8_only):
            rc = self.normalizer.normalize(s, n, &sc.norm)
            if rc < 0:
                return rc
            if rc == TEXT_UNCHANGED:
                norm = s
                size = n
            else:
                if sc.norm.size > MAX_NORMALIZED_BYTES:
                    return ERR_TOO_LONG
                norm = <const unsigned char*>sc.norm.data
                size = sc.norm.size
                if rc == NORMALIZED_LATE_START:
                    at_input_start = False
        else:
            if n > MAX_NORMALIZED_BYTES:
                return ERR_TOO_LONG   # offsets are int32
            norm = s
            size = n
        if size == 0:
            return 0
        if size > sc.largest_fragment:
            sc.largest_fragment = size
        if self.normalized_splitter is None or not (parse_special or self.normalized_splitter.has_always):
            return self._encode_normalized(norm, size, at_input_start, sc, work, out, spans)
        # Parity: tokenizers AddedVocabulary::extract_and_normalize matches the added tokens
        # marked `normalized` in the normalized text of each fragment.
        if self.normalized_splitter.split(norm, size, parse_special, &sc.split2, &sc.segments2) < 0:
            return ERR_NO_MEMORY
        for k in range(0, sc.segments2.size, 3):
            token = sc.segments2.data[k]
            if token >= 0:
                if _push_special(out, spans, token) < 0:
                    return ERR_NO_MEMORY
            else:
                start = sc.segments2.data[k + 1]
                rc = self._encode_normalized(norm + start, sc.segments2.data[k + 2] - start,
                                             at_input_start and start == 0, sc, work, out, spans)
                if rc < 0:
                    return rc
        return 0

    cdef int _encode_normalized(self, const unsigned char* norm, Py_ssize_t size, bint at_input_start,
                                Scratch* sc, void* work, IdBuf* out, IdBuf* spans) noexcept nogil:
        """Append the ids of normalized text: pre-tokenize, then the model on each pre-token."""
        cdef int rc
        cdef Py_ssize_t base
        if size == 0:
            return 0
        if self.pretokenizer is None:
            base = sc.norm_all.size
            if spans != NULL and bytebuf_append(&sc.norm_all, <const char*>norm, size) < 0:
                return ERR_NO_MEMORY
            return self.model.encode(norm, size, work, out, spans, base)
        sc.pre_ends.size = 0
        sc.pretok.at_input_start = at_input_start
        rc = self.pretokenizer.split(norm, size, &sc.pretok, &sc.pre_ends)
        if rc < 0:
            return rc
        if rc == PRETOK_REWRITTEN:
            norm = <const unsigned char*>sc.pretok.text.data
            size = sc.pretok.text.size
            if size > MAX_NORMALIZED_BYTES:
                return ERR_TOO_LONG
        base = sc.norm_all.size
        if spans != NULL and bytebuf_append(&sc.norm_all, <const char*>norm, size) < 0:
            return ERR_NO_MEMORY
        return self.model.encode_pieces(norm, sc.pre_ends.data, sc.pre_ends.size, work, out, spans, base)

    cdef _check_ready(self):
        if not self.configured:
            raise RuntimeError("tokenizer is not configured; use toksmith.load()")

    cdef inline bint _double_bos(self, const IdBuf* ids) noexcept:
        cdef int32_t bos = self.postprocessor.leading_id
        return bos >= 0 and ids.size >= 2 and ids.data[0] == bos and ids.data[1] == bos

    cdef _warn_double_bos(self, const IdBuf* ids):
        """Call when add_special added a leading id."""
        if self._double_bos(ids):
            self._warn_double_bos_now()

    cdef _warn_double_bos_now(self):
        """Parity: llama.cpp warns when the prompt already started with BOS (once per
        tokenizer here)."""
        if not self.warned_double_bos:
            self.warned_double_bos = True
            warnings.warn("the text starts with a BOS token and add_special=True added "
                          "another, so the ids start with two BOS tokens; pass "
                          "add_special=False if the text has its own",
                          stacklevel=1)   # compiled frames add no Python frame: the caller's line

    cdef list encode_text(self, object text, bint add_special, bint parse_special):
        cdef TextRef ref
        cdef Scratch* sc
        cdef int rc
        cdef list ids
        if not self.configured:
            self._check_ready()
        if type(text) is not str:
            text = _as_text(text)
        text_ref(text, &ref)
        if ref.length * (ref.kind if ref.kind else 1) < GIL_RELEASE_MIN_BYTES:
            # Short texts: handing the GIL over would cost more than the work.
            sc = _acquire_scratch()
            rc = self._encode_text(&ref, add_special, parse_special, sc)
        else:
            with nogil:
                sc = _acquire_scratch()
                rc = self._encode_text(&ref, add_special, parse_special, sc)
        # The scratch stays ours until released: a warnings hook or a finalizer
        # that encodes from here on gets a scratch of its own.
        try:
            if rc < 0:
                _raise_encode_error(rc, text)
            if add_special and self.postprocessor.leading_id >= 0:
                self._warn_double_bos(&sc.out)
            ids = _id_list(sc.out.data, sc.out.size, self._id_objects)
        finally:
            _release_scratch(sc, self.model)
        return ids

    cdef int _encode_text(self, const TextRef* ref, bint add_special, bint parse_special,
                          Scratch* sc, bint want_spans=False) noexcept nogil:
        """Encode one text into sc.out (spans into sc.spans); 0 or a negative error code."""
        cdef const unsigned char* data
        cdef Py_ssize_t n
        cdef int rc
        if sc == NULL:
            return ERR_NO_MEMORY
        rc = utf8_of(ref, &sc.text, &data, &n, self.joins_surrogates)
        if rc < 0:
            return rc
        sc.valid_utf8 = ref.from_str
        return self._encode(data, n, add_special, parse_special, sc, &sc.out, want_spans)

    cdef list encode_texts(self, object texts, bint add_special, bint parse_special,
                           object num_threads):
        _check_texts(texts)
        cdef list items = list(texts)
        cdef Py_ssize_t n = len(items), i
        cdef TextRef* refs
        cdef IdBuf* results
        cdef int* status
        cdef int threads
        cdef Py_ssize_t total_units = 0, min_chunk
        cdef BatchWork work
        cdef list out
        if not self.configured:
            self._check_ready()
        threads = _resolve_threads(num_threads, n)
        if n == 0:
            return []
        refs = <TextRef*>malloc(n * sizeof(TextRef))
        results = <IdBuf*>calloc(n, sizeof(IdBuf))
        status = <int*>calloc(n, sizeof(int))
        try:
            if refs == NULL or results == NULL or status == NULL:
                raise MemoryError()
            for i in range(n):
                item = items[i]
                if type(item) is not str and type(item) is not bytes:
                    item = _as_text(item)
                    items[i] = item   # keeps the converted object alive
                text_ref(item, &refs[i])
                total_units += refs[i].length
            # Waking a thread costs more than encoding a few kilobytes.
            if threads > 1 + total_units // BATCH_BYTES_PER_THREAD:
                threads = <int>(1 + total_units // BATCH_BYTES_PER_THREAD)
            work.engine = <void*>self
            work.refs = refs
            work.results = results
            work.status = status
            work.n = n
            work.add_special = add_special
            work.parse_special = parse_special
            for i in range(n):
                status[i] = BATCH_PENDING
            # Lists of ints cannot form cycles: building thousands of them should
            # not trigger full passes of the cyclic garbage collector.
            gc_was_enabled = gc.isenabled()
            gc.disable()
            try:
                out = [None] * n
                work.out = <void*>out
                work.built = 0
                work.stop_building = False
                work.double_bos = False
                # The smallest chunk: a run, or less when a few (long) texts are all
                # there is, so that they still spread over the threads.
                min_chunk = max(1, min(<Py_ssize_t>BATCH_RUN, n // (4 * threads)))
                # The calling thread builds the lists of finished texts while the
                # workers encode the next ones (_build_ready_lists).
                with nogil:
                    parallel_for_hooked(n, min_chunk, threads, _encode_batch_range, &work,
                                        _build_ready_lists)
                for i in range(n):
                    if status[i] < 0:
                        _raise_encode_error(status[i], items[i])
                work.stop_building = False
                self._build_lists(&work, n)
                if work.built < n:
                    raise MemoryError()
                if work.double_bos:
                    self._warn_double_bos_now()
            finally:
                if gc_was_enabled:
                    gc.enable()
            return out
        finally:
            if results != NULL:
                for i in range(n):
                    if results[i].cap > 0:
                        idbuf_free(&results[i])
            free(results)
            free(status)
            free(refs)

    cdef void _build_lists(self, BatchWork* work, Py_ssize_t upto) noexcept:
        """Id lists of the finished texts [work.built, upto) into work.out. Stops at a failed
        text or a failed list (MemoryError), setting stop_building: encode_texts raises for
        it afterwards. The ids are freed by encode_texts at the end: freeing them here, while
        a worker allocates in the same malloc arena, makes the two threads wait on its lock."""
        cdef list out = <list>work.out
        cdef Py_ssize_t i = work.built
        cdef IdBuf* ids
        try:
            while i < upto and not work.stop_building:
                if work.status[i] < 0:
                    work.stop_building = True
                    break
                ids = &work.results[i]
                if work.add_special and self._double_bos(ids):
                    work.double_bos = True
                out[i] = _id_list(ids.data, ids.size, self._id_objects)
                i += 1
        except BaseException:
            work.stop_building = True
        work.built = i

    cdef list tokenize_text(self, object text, bint add_special, bint parse_special):
        cdef TextRef ref
        cdef Scratch* sc
        cdef int rc
        cdef list pieces
        cdef int32_t pid, a, b
        cdef Py_ssize_t i, k
        self._check_ready()
        if type(text) is not str:
            text = _as_text(text)
        text_ref(text, &ref)
        with nogil:
            sc = _acquire_scratch()
            rc = self._encode_text(&ref, add_special, parse_special, sc, True)
        try:
            if rc < 0:
                _raise_encode_error(rc, text)
            if self._piece_strs is None:
                self._piece_strs = [self._token_text(k) for k in range(self.n_pieces)] \
                    if self._token_text is not None else \
                    [self.decoder.piece(k).decode("utf-8", "replace") for k in range(self.n_pieces)]
            pieces = []
            for i in range(sc.out.size):
                pid = sc.out.data[i]
                a = sc.spans.data[2 * i]
                b = sc.spans.data[2 * i + 1]
                if b > a and (pid == self._text_shown_id or
                              (self._unknown_as_text and self.piece_types[pid] == TYPE_UNKNOWN)):
                    pieces.append(sc.norm_all.data[a:b].decode("utf-8", "replace"))
                else:
                    pieces.append(self._piece_strs[pid])
            return pieces
        finally:
            _release_scratch(sc, self.model)

    # ------------------------------------------------------------------ decode

    cdef str decode_ids(self, object ids, bint skip_special):
        self._check_ready()
        return self.decoder.decode(ids, skip_special=skip_special)

    cdef bytes decode_ids_bytes(self, object ids, bint skip_special):
        self._check_ready()
        return self.decoder.decode_bytes(ids, skip_special=skip_special)

    cdef StreamDecoder new_stream_decoder(self, bint skip_special):
        self._check_ready()
        return StreamDecoder(self.decoder, skip_special=skip_special)

    # ------------------------------------------------------------------ Python API
    # The same methods as toksmith.Tokenizer (documented there), for an Engine used alone.

    def encode(self, text, *, add_special=True, parse_special=False):
        """Token ids of `text`: see `toksmith.Tokenizer.encode`."""
        return self.encode_text(text, _flag(add_special, "add_special"), _flag(parse_special, "parse_special"))

    def encode_batch(self, texts, *, add_special=True, parse_special=False,
                     num_threads=None):
        """Ids of many texts on a thread pool: see `toksmith.Tokenizer.encode_batch`."""
        return self.encode_texts(texts, _flag(add_special, "add_special"), _flag(parse_special, "parse_special"), num_threads)

    def tokenize(self, text, *, add_special=False, parse_special=False):
        """Pieces of `text`: see `toksmith.Tokenizer.tokenize`."""
        return self.tokenize_text(text, _flag(add_special, "add_special"), _flag(parse_special, "parse_special"))

    def decode(self, ids, *, skip_special=False):
        """Text of `ids`: see `toksmith.Tokenizer.decode`."""
        return self.decode_ids(ids, _flag(skip_special, "skip_special"))

    def decode_bytes(self, ids, *, skip_special=False):
        """Bytes of `ids`: see `toksmith.Tokenizer.decode_bytes`."""
        return self.decode_ids_bytes(ids, _flag(skip_special, "skip_special"))

    def stream_decoder(self, *, skip_special=False):
        """A `StreamDecoder`: see `toksmith.Tokenizer.stream_decoder`."""
        return self.new_stream_decoder(_flag(skip_special, "skip_special"))


cdef class TokenizerCore:
    """The compiled half of `toksmith.Tokenizer`: it holds the tokenizer's `Engine`
    (composition) and exposes the engine's methods with no Python frame in between,
    so a call costs what a call into the engine costs.

    `sparse_ids`: None, or a tokenizer.json's `toksmith.hf.sparse_ids.SparseIds` when its
    ids are not 0..n-1: the engine's ids are then 0..n-1 and the ids given and taken here
    the file's (one check per call; a dense file pays nothing per token)."""

    cdef readonly Engine engine
    cdef readonly object sparse_ids

    cdef _check_engine(self):
        if self.engine is None:
            raise RuntimeError("tokenizer is not configured; use toksmith.load()")

    def _attach_engine(self, Engine engine not None, sparse_ids=None):
        """Install the compiled pipeline (once, when the Tokenizer is built)."""
        if self.engine is not None:
            raise RuntimeError("this tokenizer already has its engine")
        self.engine = engine
        self.sparse_ids = sparse_ids

    def encode(self, text, *, add_special=True, parse_special=False, pair=None):
        """Token ids of `text` (str, or bytes that may hold invalid UTF-8).

        add_special adds BOS/EOS as the model says; parse_special turns
        special-token texts such as "<s>" into their ids (llama_tokenize's flags).
        pair: a second text, for tokenizers whose post-processor has a pair template
        (tokenizer.json); add_special then applies that template.

        >>> tok.encode("Hello world")          # doctest: +SKIP
        [8774, 296]
        """
        if self.engine is None:
            self._check_engine()
        if pair is not None:
            ids = self._encode_pair(text, pair, _flag(add_special, "add_special"), _flag(parse_special, "parse_special"))
        else:
            ids = self.engine.encode_text(text, _flag(add_special, "add_special"), _flag(parse_special, "parse_special"))
        if self.sparse_ids is not None:
            return self.sparse_ids.outward(ids)
        return ids

    def _encode_pair(self, text, pair, bint add_special, bint parse_special):
        raise ValueError("this tokenizer has no pair template: pair= needs a tokenizer.json "
                         "whose post-processor defines one")

    def encode_batch(self, texts, *, add_special=True, parse_special=False,
                     num_threads=None):
        """Encode many texts on `num_threads` threads (None: all cores), GIL released.

        Returns exactly ``[self.encode(t, add_special=..., parse_special=...) for t in texts]``.
        `texts` is an iterable of texts; one str or bytes is a TypeError.

        >>> tok.encode_batch(["Hello", "world"], num_threads=2)   # doctest: +SKIP
        [[8774], [296]]
        """
        self._check_engine()
        batch = self.engine.encode_texts(texts, _flag(add_special, "add_special"), _flag(parse_special, "parse_special"), num_threads)
        if self.sparse_ids is not None:
            return list(map(self.sparse_ids.outward, batch))
        return batch

    def tokenize(self, text, *, add_special=False, parse_special=False):
        """Pieces of `text` as strings; unknown runs show their normalized text.

        >>> tok.tokenize("Hello world")        # doctest: +SKIP
        ['▁Hello', '▁world']
        """
        self._check_engine()
        return self.engine.tokenize_text(text, _flag(add_special, "add_special"), _flag(parse_special, "parse_special"))

    def decode(self, ids, *, skip_special=False):
        """Text of `ids`, as the model's reference decodes them.

        The decoder stage decides: under sentencepiece's rules control pieces are
        always invisible; under llama.cpp's, skip_special=False renders special
        tokens (unparse_special) and True drops them and the BOS/EOS the model
        adds (remove_special).

        >>> tok.decode(tok.encode("Hello world"))   # doctest: +SKIP
        'Hello world'
        """
        self._check_engine()
        if self.sparse_ids is not None:
            ids = self.sparse_ids.inward(ids)
        return self.engine.decode_ids(ids, _flag(skip_special, "skip_special"))

    def decode_bytes(self, ids, *, skip_special=False):
        """The bytes `decode` reads as UTF-8, before that step: byte-level tokens may end
        inside a character (llama_detokenize's output, tiktoken's decode_bytes).

        >>> tok.decode_bytes(tok.encode("héllo"))     # doctest: +SKIP
        b'h\xc3\xa9llo'
        """
        self._check_engine()
        if self.sparse_ids is not None:
            ids = self.sparse_ids.inward(ids)
        return self.engine.decode_ids_bytes(ids, _flag(skip_special, "skip_special"))

    def stream_decoder(self, *, skip_special=False):
        """A `StreamDecoder`: feed ids one at a time, get text as soon as it is complete.

        >>> stream = tok.stream_decoder()                      # doctest: +SKIP
        >>> "".join(map(stream.feed, ids)) + stream.finish()   # doctest: +SKIP
        'Hello world'
        """
        self._check_engine()
        stream = self.engine.new_stream_decoder(_flag(skip_special, "skip_special"))
        if self.sparse_ids is not None:
            return self.sparse_ids.stream_decoder(stream)
        return stream


cdef void _encode_batch_range(void* p, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """Encode texts [start, end) of a batch (a `parallel_for` chunk) into their results."""
    cdef BatchWork* work = <BatchWork*>p
    cdef Scratch* sc = _acquire_scratch()
    cdef Py_ssize_t run_end
    while start < end:
        run_end = min(start + <Py_ssize_t>BATCH_RUN, end)
        _encode_run(work, sc, start, run_end)
        start = run_end
    _release_scratch(sc, (<Engine>work.engine).model)


cdef void _encode_run(BatchWork* work, Scratch* sc, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """Encode texts [start, end) (at most BATCH_RUN) and publish their results. Their ids
    are copied back to back into one allocation, sized for the run up front (a malloc
    per text, or reallocs as it grows, cost more than the copy); results[start] owns it,
    the others are views into it. The shared arrays are written once at the end: their
    cache lines border another thread's runs."""
    cdef IdBuf block
    cdef Py_ssize_t i, at = 0, units = 0
    cdef int rc[BATCH_RUN]
    cdef Py_ssize_t size[BATCH_RUN]
    block.data = NULL
    block.size = 0
    block.cap = 0
    for i in range(start, end):
        units += work.refs[i].length
    idbuf_reserve(&block, units // 3 + 16)      # most texts need fewer ids; more grows it
    for i in range(start, end):
        rc[i - start] = (<Engine>work.engine)._encode_text(&work.refs[i], work.add_special,
                                                          work.parse_special, sc)
        size[i - start] = 0
        if rc[i - start] == 0:
            if idbuf_reserve(&block, sc.out.size) < 0:
                rc[i - start] = ERR_NO_MEMORY
            else:
                memcpy(block.data + block.size, sc.out.data, sc.out.size * sizeof(int32_t))
                block.size += sc.out.size
                size[i - start] = sc.out.size
    for i in range(start, end):
        work.results[i].data = block.data + at
        work.results[i].size = size[i - start]
        at += size[i - start]
    work.results[start].cap = block.cap
    for i in range(start, end):
        store_release(&work.status[i], rc[i - start])


cdef void _build_ready_lists(void* p) noexcept nogil:
    """The calling thread's hook between its chunks: when enough texts from work.built on
    are finished, take the GIL and build their id lists."""
    cdef BatchWork* work = <BatchWork*>p
    cdef Py_ssize_t ready = work.built
    if work.stop_building:
        return
    while ready < work.n and load_acquire(&work.status[ready]) != BATCH_PENDING:
        ready += 1
    if ready - work.built < BATCH_BUILD_MIN:
        return
    with gil:
        (<Engine>work.engine)._build_lists(work, ready)


cdef inline int _push_special(IdBuf* out, IdBuf* spans, int32_t token) noexcept nogil:
    """Append a special token's id (with an empty span when spans are kept)."""
    if idbuf_reserve(out, 1) < 0:
        return -1
    out.data[out.size] = token
    out.size += 1
    if spans != NULL:
        if idbuf_reserve(spans, 2) < 0:
            return -1
        spans.data[spans.size] = 0
        spans.data[spans.size + 1] = 0
        spans.size += 2
    return 0


cdef _raise_encode_error(int rc, object text):
    raise_for_status(rc, text)


cdef int _resolve_threads(object num_threads, Py_ssize_t n_items) except -1:
    """Threads for a batch: `num_threads` (an int >= 1, or None for all usable cores),
    at most the usable cores and the number of texts.

    >>> tok.encode_batch(texts, num_threads=True)   # doctest: +SKIP
    TypeError: num_threads must be an int >= 1 or None, not bool
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if num_threads is None:
        wanted = cores
    else:
        if isinstance(num_threads, bool) or not hasattr(type(num_threads), "__index__"):
            raise TypeError(f"num_threads must be an int >= 1 or None, not {type(num_threads).__name__}")
        wanted = operator.index(num_threads)
        if wanted < 1:
            raise ValueError(f"num_threads must be an int >= 1 or None, not {wanted}")
    return <int>max(1, min(wanted, cores, n_items))
