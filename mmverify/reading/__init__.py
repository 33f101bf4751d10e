"""Reading an artifact: strict JSON bytes to exact values (:mod:`.artifact`,
:mod:`.jsonstrict`, :mod:`.numbers`, :mod:`.digest`), field paths read and
written as code (:mod:`.paths`, :mod:`.pathcode`), and labels (:mod:`.labels`).
Nothing here imports another stage."""
