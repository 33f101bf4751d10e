"""Labels (strings compared as answers): one normalisation for the whole engine.

Scoring (``exact_value``), the ``finite_domain`` gate, the Lean emitter and the
leak scanner all compare labels after trimming, collapsing inner whitespace
and case-folding: ``"  Mixed\\tUse "`` equals ``"mixed use"``.
"""


def normalise_label(text: str) -> str:
    """``text`` trimmed, inner whitespace collapsed to one space, case-folded."""
    return " ".join(text.split()).casefold()
