"""The ``ikrig`` command line (click): :mod:`~ikrig.cli.commands` (the group, ``demo``,
``foot``), :mod:`~ikrig.cli.clips` (``info``, ``convert``), :mod:`~ikrig.cli.viz`
(``plot``, ``view``), :mod:`~ikrig.cli.playground` (``playground``), :mod:`~ikrig.cli.batch`
(``batch``), :mod:`~ikrig.cli.warmup` (``warmup``), :mod:`~ikrig.cli.ahead` (compiling ahead
on a second core) and :mod:`~ikrig.cli.common` (the options and steps the commands share, one
definition each). The console script is ``ikrig.cli:main``.
"""

from .commands import main

__all__ = ["main"]
