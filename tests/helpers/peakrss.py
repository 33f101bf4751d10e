"""A child-process script that runs ``mmverify score`` on a listing of files
and reports its own peak memory, shared by the batch tests and
``benchmarks/bench_batch.py``.

Run it as ``python -c SCRIPT LISTING [score options]``; LISTING holds one path
per line. Its last stderr line is ``PEAK <peak KiB> <children's peak KiB>
<exit code> <CPU s> <children's CPU s>`` (:func:`parse`).
"""
from __future__ import annotations

from typing import NamedTuple

SCRIPT = r"""
import resource, sys
from mmverify.cli import main
files = open(sys.argv[1], encoding="utf-8").read().split("\n")
code = 0
try:
    main(["score", *files, *sys.argv[2:]], prog_name="mmverify")
except SystemExit as exc:
    code = exc.code
# the peak of this process's own memory map (VmHWM; ru_maxrss on Linux also
# counts the parent's pages at the fork that started this process)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    with open("/proc/self/status", encoding="ascii") as fh:
        peak = next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:"))
except (OSError, StopIteration):
    pass
r, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.write("\nPEAK %d %d %s %f %f\n" % (peak, c.ru_maxrss, code, r.ru_utime + r.ru_stime,
                                               c.ru_utime + c.ru_stime))
"""


class Peak(NamedTuple):
    kib: int            # this process's peak (VmHWM)
    children_kib: int   # the largest child's ru_maxrss (worker processes)
    code: str           # the command's exit code
    cpu: float          # this process's CPU seconds
    children_cpu: float


def parse(stderr: str) -> Peak:
    """The PEAK line the script wrote last."""
    peak, children, code, cpu, children_cpu = stderr.rsplit("PEAK", 1)[1].split()[:5]
    return Peak(int(peak), int(children), code, float(cpu), float(children_cpu))
