"""The time cap of one artifact (:func:`time_cap`): on the main thread of a
POSIX process by ``SIGALRM``, on any other thread (a Dask worker's task
threads) by an asynchronous exception. Used by the batch engine
(:mod:`mmverify.batch.engine`) per artifact and by the replay stage per replay.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator


class ScoreTimeout(BaseException):
    """Raised by the time cap. A BaseException, so that no ``except Exception``
    in the scoring code can swallow it."""


def _signal_cap_available() -> bool:
    import signal          # only when a cap is asked for: its enums cost every start that needs none

    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _thread_cap_available() -> bool:
    import ctypes          # only off the main thread: a plain start never loads it

    return hasattr(ctypes, "pythonapi") and hasattr(ctypes.pythonapi, "PyThreadState_SetAsyncExc")


def time_cap_available() -> bool:
    """Whether :func:`time_cap` can interrupt code running on this thread."""
    return _signal_cap_available() or _thread_cap_available()


# After the deadline the alarm repeats at this interval until the block is
# left: an exception raised where Python cannot propagate it (a garbage
# collector callback, a ``__del__``, a weakref callback) is printed and
# dropped, and a single alarm lost there would let the block run uncapped.
REPEAT_S = 0.1


@contextmanager
def time_cap(seconds: float | None, exc: type[BaseException] = ScoreTimeout) -> Iterator[None]:
    """Raise ``exc`` (:class:`ScoreTimeout`) in the block after ``seconds`` of
    wall time, and again every :data:`REPEAT_S` until the block is left (a
    no-op when ``seconds`` is None). On the main thread of a POSIX process this
    is ``SIGALRM``, which also interrupts a blocking system call; on another
    thread a watchdog raises the exception asynchronously, between bytecodes.
    Either way one long C call finishes first (bounded by the size caps).

    Caps nest on the main thread: inside an outer cap that ends sooner, an
    inner one sets no timer (the outer fires first); otherwise the outer timer
    and handler are restored, less the time spent, when the block is left."""
    if not seconds:
        yield
    elif _signal_cap_available():
        with _signal_cap(seconds, exc):
            yield
    elif _thread_cap_available():
        with _thread_cap(seconds, exc):
            yield
    else:  # pragma: no cover - not CPython
        yield


@contextmanager
def _signal_cap(seconds: float, exc: type[BaseException]) -> Iterator[None]:
    import signal

    outer_left, outer_repeat = signal.getitimer(signal.ITIMER_REAL)
    if outer_left and outer_left <= seconds:
        yield
        return

    def on_alarm(signum, frame):
        raise exc()

    start = time.monotonic()
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left:
            left = max(outer_left - (time.monotonic() - start), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, outer_repeat)


@contextmanager
def _thread_cap(seconds: float, exc: type[BaseException]) -> Iterator[None]:
    import ctypes

    target = ctypes.c_ulong(threading.get_ident())
    lock = threading.Lock()
    left = threading.Event()
    active = [True]

    def watchdog():
        if left.wait(seconds):
            return
        while True:
            with lock:
                if not active[0]:
                    return
                ctypes.pythonapi.PyThreadState_SetAsyncExc(target, ctypes.py_object(exc))
            if left.wait(REPEAT_S):
                return

    dog = threading.Thread(target=watchdog, name="mmverify-time-cap", daemon=True)
    dog.start()
    try:
        yield
    finally:
        with lock:
            active[0] = False
            left.set()
            # an exception set but not yet raised must not escape the block
            ctypes.pythonapi.PyThreadState_SetAsyncExc(target, None)
