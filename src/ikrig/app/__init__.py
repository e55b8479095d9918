"""One clip placed and reported, as ``ikrig foot`` and ``ikrig batch`` do it:
:mod:`~ikrig.app.placement` (read, stand, place on a named ground), :mod:`~ikrig.app.report`
(each result's metrics beside the baseline), :mod:`~ikrig.app.demo` (the built-in walk on
the built-in stairs) and :mod:`~ikrig.app.warmup` (compiling every kernel ahead of time).
"""
