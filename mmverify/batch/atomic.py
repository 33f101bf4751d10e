"""One atomic file replacement for the engine's outputs (batch files, reward files).

A private temporary name in the same folder (``O_EXCL``; no ``tempfile``, whose
imports cost a verifier's start), the bytes written and fsynced, a rename over
the target, then an fsync of the folder so the rename itself survives a crash.
A reader sees the old file or the new one, never a torn one.

``durable=False`` keeps the rename (no torn file) and skips both fsyncs: for
files a reader takes as soon as the writing process exits, such as a harness
verifier's reward files, where a machine crash loses the run anyway and the
two disk flushes would be most of the verifier's wall time.
"""
from __future__ import annotations

import os
from typing import Iterable


def replace_file(path: str, chunks: Iterable[bytes], *, durable: bool = True) -> None:
    """Replace ``path`` by the concatenation of ``chunks``, atomically (and,
    when ``durable``, flushed to disk before and after the rename)."""
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        sync_folder(folder)


def sync_folder(folder: str) -> None:
    """fsync a folder, so that a rename or a new file in it survives a crash
    (best effort: a file system that cannot is left as it is)."""
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
