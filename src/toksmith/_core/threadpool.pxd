# A small pool of worker threads owned by the compiled core (no OpenMP).
#
# `parallel_for` splits [0, n) into chunks (large ones first, none smaller than
# `chunk` items) and runs `fn(ctx, start, end)` on the calling thread plus up
# to `threads - 1` pool workers; it returns when every chunk is done. Workers
# are created on first use, kept for later calls (so their thread-local scratch
# and word caches stay warm), and forgotten in a forked child, where the pool
# starts empty again.

ctypedef void (*RangeFn)(void* ctx, Py_ssize_t start, Py_ssize_t end) noexcept nogil
ctypedef void (*ChunkHook)(void* ctx) noexcept nogil

cdef void parallel_for(Py_ssize_t n, Py_ssize_t chunk, int threads, RangeFn fn,
                       void* ctx) noexcept nogil
# parallel_for, where the calling thread also runs after_own_chunk(ctx) after each chunk
# it ran itself (e.g. to hand finished results to Python while the workers go on).
cdef void parallel_for_hooked(Py_ssize_t n, Py_ssize_t chunk, int threads, RangeFn fn,
                              void* ctx, ChunkHook after_own_chunk) noexcept nogil
