"""SHA-256 without loading OpenSSL.

``hashlib`` links OpenSSL's libcrypto when it is imported, which costs about
as much as the rest of a short ``mmverify score`` start-up put together. The
interpreter's own SHA-256 module gives the same digests and loads in a
fraction of that; the digests taken here (an artifact's bytes, a cache key)
are small, so OpenSSL's faster hashing does not pay for its loading.
``hashlib`` is the fallback where that module is absent.
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
