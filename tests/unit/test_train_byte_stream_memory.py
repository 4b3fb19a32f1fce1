"""Peak memory of the byte-stream trainer on one long run of a byte (issue 30 item 10),
measured in a fresh process: the layout is 2 bytes a corpus byte and the places of the
first pair 4; merging (a, a) once wrote every place of (aa, aa) while all of (a, a)'s
were still held (10.5 bytes per corpus byte in all)."""
from __future__ import annotations

from tests.peak_rss import run_measured

# Prints the growth of the peak RSS (bytes) from the corpus read to the end of training.
_TRAIN_PEAK = """
import sys
from toksmith._core.byte_stream_trainer import ByteStreamTrainer
trainer = ByteStreamTrainer(False)
trainer.add(b"a" * int(sys.argv[1]))
before = reset_peak()
trainer.prepare(32000, 0, 1)
while not trainer.run(1024):
    pass
print(peak() - before, len(trainer.merges()))
"""


def test_training_on_one_run_of_a_byte_stays_under_9_bytes_per_corpus_byte():
    size = 8_000_000
    growth, merges = map(int, run_measured(_TRAIN_PEAK, str(size)).split())
    # a, aa, aaaa, ... up to the run's length, and the odd remainders joined to them
    assert merges > 22
    # measured 7.8 since the merge drops the places it has walked (10.5 before)
    assert growth < 9 * size, f"training grew the peak RSS by {growth / size:.1f} bytes per corpus byte"
