"""Scoring one artifact, stage by stage: :mod:`.evaluate` wires replay -> gates
-> schema (:mod:`.validate`, with the generated :mod:`.precheck`) -> verdict
(:mod:`.violations`) -> panel -> :mod:`.report`; :mod:`.statuses` names the
outcomes and :mod:`.timecap` bounds a replay's or an artifact's time."""
