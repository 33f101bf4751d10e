"""The Lean 4 layer: gate instances -> closed integer obligations -> kernel check.

Design notes: `docs/architecture.md` (this module's section).
"""
