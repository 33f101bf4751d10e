"""SHA-256 without loading OpenSSL.

``hashlib`` links OpenSSL's libcrypto when it is imported: about 5 ms, a
twentieth of a short ``mmverify score`` or ``verify`` start. The interpreter's
own SHA-256 module gives the same digests and loads in a fraction of that; it
hashes more slowly (about 0.4 ms more for a 150 KB artifact), which the digests
taken at a start (an artifact, a cache key, the oracle check) do not make up.
``hashlib`` is the fallback where that module is absent. It pays only when no
module of a start imports ``hashlib``.
"""
from __future__ import annotations

try:
    from _sha256 import sha256            # CPython <= 3.11
except ImportError:  # pragma: no cover - depends on the interpreter
    try:
        from _sha2 import sha256          # CPython >= 3.12
    except ImportError:
        from hashlib import sha256

__all__ = ["sha256"]
