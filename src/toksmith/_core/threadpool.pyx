"""A small pthread worker pool for batch encoding: fork-safe, shared by all callers.

A call to `parallel_for` queues one job asking for `threads - 1` helpers and
then works on the job itself. Chunks are claimed from an atomic counter, so
the caller finishes the job even when every worker is busy with other
callers' jobs; helpers that joined are waited for, helpers that did not are
never let in afterwards. Any number of threads may call at once.

Workers are started on first need and then kept, so their thread-local
scratch (and the SPM-BPE word cache in it) stays warm between batches. A
forked child has none of the parent's threads: an atfork handler empties
the pool and re-initialises its lock and condition variables there, and the
child starts its own workers when it first needs them.

    parallel_for(n_items, 4, threads, encode_range, &ctx)   # cdef, nogil
"""
from libc.string cimport memset

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_t:
        pass
    ctypedef struct pthread_attr_t:
        pass
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    int pthread_attr_init(pthread_attr_t* attr)
    int pthread_attr_setdetachstate(pthread_attr_t* attr, int state)
    int pthread_attr_destroy(pthread_attr_t* attr)
    int PTHREAD_CREATE_DETACHED
    int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                       void* (*start)(void*) noexcept nogil, void* arg)
    int pthread_mutex_init(pthread_mutex_t* m, const void* attr)
    int pthread_mutex_lock(pthread_mutex_t* m)
    int pthread_mutex_unlock(pthread_mutex_t* m)
    int pthread_cond_init(pthread_cond_t* c, const void* attr)
    int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m)
    int pthread_cond_signal(pthread_cond_t* c)
    int pthread_cond_broadcast(pthread_cond_t* c)
    int pthread_atfork(void (*prepare)() noexcept nogil, void (*parent)() noexcept nogil,
                       void (*child)() noexcept nogil)

cdef extern from *:
    """
    static inline Py_ssize_t toksmith_load_relaxed(Py_ssize_t* p) {
        return __atomic_load_n(p, __ATOMIC_RELAXED);
    }
    static inline int toksmith_cas(Py_ssize_t* p, Py_ssize_t* expected, Py_ssize_t desired) {
        return __atomic_compare_exchange_n(p, expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
    """
    Py_ssize_t toksmith_load_relaxed(Py_ssize_t* p) nogil
    bint toksmith_cas(Py_ssize_t* p, Py_ssize_t* expected, Py_ssize_t desired) nogil

# More workers than this are never started, however many callers ask at once.
cdef int MAX_WORKERS = 64


cdef struct Job:
    RangeFn fn
    void* ctx
    Py_ssize_t n
    Py_ssize_t chunk        # the smallest claim
    Py_ssize_t split        # a claim takes 1/split of what is left (2 per thread)
    Py_ssize_t next         # first unclaimed index (atomic)
    int wanted              # helpers still wanted; the job is queued while > 0
    int active              # helpers inside the job
    Job* link               # next queued job


cdef pthread_mutex_t _lock
cdef pthread_cond_t _work_ready      # a job was queued
cdef pthread_cond_t _helper_left     # a helper finished its part of a job
cdef Job* _queue = NULL
cdef int _n_workers = 0
cdef int _n_idle = 0


cdef void _init_pool_state() noexcept nogil:
    global _queue, _n_workers, _n_idle
    memset(&_lock, 0, sizeof(_lock))
    pthread_mutex_init(&_lock, NULL)
    pthread_cond_init(&_work_ready, NULL)
    pthread_cond_init(&_helper_left, NULL)
    _queue = NULL
    _n_workers = 0
    _n_idle = 0


cdef void _after_fork_in_child() noexcept nogil:
    # The workers (and any caller on another thread) did not survive the fork;
    # the lock may have been held by one of them. Forget them all.
    _init_pool_state()


_init_pool_state()
if pthread_atfork(NULL, NULL, _after_fork_in_child) != 0:
    raise ImportError("toksmith: cannot register the thread pool's fork handler")


cdef inline void _run_chunks(Job* job, ChunkHook after_chunk) noexcept nogil:
    """Claim chunks until none is left. A claim takes a share of what is left ("guided"
    scheduling): large chunks first, so each thread works through long runs of
    neighbouring items (their words repeat, and its caches keep them), and chunks of
    `job.chunk` at the end, so the threads finish together."""
    cdef Py_ssize_t start, end, size
    start = toksmith_load_relaxed(&job.next)
    while True:
        if start >= job.n:
            return
        size = (job.n - start) // job.split
        if size < job.chunk:
            size = job.chunk
        end = start + size
        if end > job.n:
            end = job.n
        if not toksmith_cas(&job.next, &start, end):
            continue        # another thread claimed first: start now holds the new next
        job.fn(job.ctx, start, end)
        if after_chunk != NULL:
            after_chunk(job.ctx)
        start = toksmith_load_relaxed(&job.next)


cdef void _unqueue(Job* job) noexcept nogil:
    """Remove `job` from the queue (the lock is held)."""
    global _queue
    cdef Job** at = &_queue
    while at[0] != NULL:
        if at[0] == job:
            at[0] = job.link
            break
        at = &at[0].link
    job.wanted = 0


cdef void* _worker(void* unused) noexcept nogil:
    global _n_idle
    cdef Job* job
    cdef bint counted = True     # _start_workers counted this new worker as idle
    pthread_mutex_lock(&_lock)
    while True:
        if not counted:
            _n_idle += 1
        counted = False
        while _queue == NULL:
            pthread_cond_wait(&_work_ready, &_lock)
        _n_idle -= 1
        job = _queue
        job.active += 1
        job.wanted -= 1
        if job.wanted == 0:
            _unqueue(job)
        pthread_mutex_unlock(&_lock)
        _run_chunks(job, NULL)
        pthread_mutex_lock(&_lock)
        job.active -= 1
        if job.active == 0:
            pthread_cond_broadcast(&_helper_left)
    return NULL


cdef void _start_workers(int wanted) noexcept nogil:
    """Start workers until `wanted` are idle (the lock is held); stop at the first failure."""
    global _n_workers, _n_idle
    cdef pthread_attr_t attr
    cdef pthread_t thread
    if _n_idle >= wanted or _n_workers >= MAX_WORKERS:
        return
    pthread_attr_init(&attr)
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED)
    while _n_idle < wanted and _n_workers < MAX_WORKERS:
        if pthread_create(&thread, &attr, _worker, NULL) != 0:
            break
        _n_workers += 1
        _n_idle += 1     # counted now, so that the next caller does not start another
    pthread_attr_destroy(&attr)


cdef void parallel_for(Py_ssize_t n, Py_ssize_t chunk, int threads, RangeFn fn,
                       void* ctx) noexcept nogil:
    """Run fn(ctx, start, end) over [0, n) in chunks of at least `chunk` items (larger first),
    on up to `threads` threads."""
    parallel_for_hooked(n, chunk, threads, fn, ctx, NULL)


cdef void parallel_for_hooked(Py_ssize_t n, Py_ssize_t chunk, int threads, RangeFn fn,
                              void* ctx, ChunkHook after_own_chunk) noexcept nogil:
    """parallel_for; the calling thread runs after_own_chunk(ctx) (if not NULL) after each
    chunk it ran."""
    cdef Job job
    cdef Job** tail
    cdef int helpers = threads - 1
    if chunk < 1:
        chunk = 1
    if helpers > (n - 1) // chunk:
        helpers = <int>((n - 1) // chunk)   # no more threads than chunks
    job.fn = fn
    job.ctx = ctx
    job.n = n
    job.chunk = chunk
    job.split = 2 * threads if threads > 1 else 1
    job.next = 0
    job.active = 0
    job.wanted = 0
    job.link = NULL
    if helpers > 0:
        pthread_mutex_lock(&_lock)
        job.wanted = helpers
        tail = &_queue
        while tail[0] != NULL:
            tail = &tail[0].link
        tail[0] = &job
        _start_workers(helpers)
        if helpers == 1:
            pthread_cond_signal(&_work_ready)
        else:
            pthread_cond_broadcast(&_work_ready)
        pthread_mutex_unlock(&_lock)
    _run_chunks(&job, after_own_chunk)
    if helpers > 0:
        pthread_mutex_lock(&_lock)
        if job.wanted > 0:
            _unqueue(&job)
        while job.active > 0:
            pthread_cond_wait(&_helper_left, &_lock)
        pthread_mutex_unlock(&_lock)
