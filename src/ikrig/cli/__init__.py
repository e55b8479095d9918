"""The ``ikrig`` command line (click): :mod:`~ikrig.cli.main` (the group, loading each
command when it runs), :mod:`~ikrig.cli.commands` (``demo``, ``foot``),
:mod:`~ikrig.cli.clips` (``info``, ``convert``), :mod:`~ikrig.cli.viz` (``plot``,
``view``), :mod:`~ikrig.cli.playground` (``playground``), :mod:`~ikrig.cli.batch`
(``batch``), :mod:`~ikrig.cli.warmup` (``warmup``), :mod:`~ikrig.cli.look` (``look``),
:mod:`~ikrig.cli.body` (``fit``, ``pin``), :mod:`~ikrig.cli.ahead` (compiling ahead on a
second core), :mod:`~ikrig.cli.common` (the options and steps the commands share, one
definition each) and :mod:`~ikrig.cli.text`. The console script is ``ikrig.cli:main``.
"""

from .main import main

__all__ = ["main"]
