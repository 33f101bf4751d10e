"""Many artifacts: ``score --output`` (:mod:`.score_files`) and run manifests
(:mod:`.manifest`, :mod:`.manifest_rows`) on one engine (:mod:`.engine`:
chunks, resumable output), run where :mod:`.executors` says; :mod:`.atomic`
replaces files whole."""
