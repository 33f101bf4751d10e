"""The Lean 4 layer: gate instances -> closed integer obligations -> kernel check.

Modules
-------
``syntax``      the proposition subset (AST, printer, parser, exact evaluator)
``ir``          obligations from a gate report: exact scaling, the claim of each form,
                polarity (a violated gate is stated as ``¬ claim``), names
``emit``        one deterministic Lean file per (task, artifact)
``wellformed``  an independent checker of emitted files (shape, subset, forbidden words)
``project``     every anchor's files, the committed ``LeanProofs/`` project and its drift
``runner``      finding Lean, one process per batch, results by exact declaration name,
                the axiom audit (allowed: propext, Quot.sound)
``check``       gate/Lean agreement over a set of files; the ledger (kernel obligations,
                tautologies left, replay- and label-vouched records)
``falsify``     one artifact value that breaks a gate and flips its statement
``mutate``      the mutation suite (killed / stillborn / survived)
``testing``     ``require_lean()`` for Lean-marked tests

Typical use::

    from mmverify.lean_gen import project, check
    files = project.anchor_files()            # no Lean needed
    report = check.check_files(files)         # needs Lean (runner.LeanNotFound otherwise)
    assert report.ok
"""
