"""mmverify where its users work: RL trainers, inspect_ai and the Harbor harness.

* :mod:`mmverify.integrations.rl`: TRL ``reward_funcs`` and verl
  ``compute_score`` reward functions (no trl, verl or torch needed);
* :mod:`mmverify.integrations.extract`: the artifact in a model's free text;
* :mod:`mmverify.integrations.inspect`: an inspect_ai scorer and task factory
  (needs the ``inspect`` extra);
* :mod:`mmverify.integrations.harbor`: Harbor task folders
  (``mmverify export harbor``).

Every score comes from the one pipeline (:func:`mmverify.pipeline.evaluate.score_artifact`),
so it equals what ``mmverify score`` reports for the same artifact. See
``docs/integrations.md``.
"""
