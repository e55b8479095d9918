"""Time-series helpers shared by foot placement, metrics and the built-in data.

- :mod:`~ikrig.signal.springs`: critically damped springs with a half-life (a named bank of
  value, velocity and last goal; the same kernel offline and live).
- :mod:`~ikrig.signal.filters`: offline zero-lag smoothing, running maximum, upper envelope,
  angular jerk.
- :mod:`~ikrig.signal.easing`: smoothstep, smootherstep, swing bump, smooth min and max.
- :mod:`~ikrig.signal.spans`: runs of True, hysteresis, span cleaning.
- :mod:`~ikrig.signal.stats`: a fast percentile of a 1-D sample.

Arrays are NumPy, time runs along axis 0 (``(F, ...)``), times are in seconds.
"""

from .easing import smoothstep
from .filters import angular_jump, jerk_excess, running_max, upper_envelope, zero_lag_smooth
from .spans import clean_spans, spans
from .springs import RATE, SPRING, Spring, SpringBank, smooth, spring_bank, spring_rate
from .stats import percentile

__all__ = [
    "RATE",
    "SPRING",
    "Spring",
    "SpringBank",
    "angular_jump",
    "clean_spans",
    "jerk_excess",
    "percentile",
    "running_max",
    "smooth",
    "smoothstep",
    "spans",
    "spring_bank",
    "spring_rate",
    "upper_envelope",
    "zero_lag_smooth",
]
