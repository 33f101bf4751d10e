"""The one root of the errors mmverify raises on purpose.

Every error type the engine defines derives from :class:`MmverifyError`, so a
caller can catch the engine's errors in one clause while each keeps its
specific type (and its old built-in base, e.g. ``ValueError``). The time caps
(``ScoreTimeout``, ``ReplayTimeout``) are deliberately ``BaseException``s so
that no ``except Exception`` inside scoring can swallow them; they never leave
the engine's own batch and replay runners.
"""


class MmverifyError(Exception):
    """Base class of every error mmverify raises by design."""
