"""Gymnasium spaces of the observation encodings (:mod:`thirtyone_env.game.encoding`
lays the features out; this module is the envs' view of them as spaces)."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from thirtyone_env.game.encoding import ObsLayout


def flat_space(layout: ObsLayout) -> spaces.Box:
    return spaces.Box(0.0, 1.0, shape=(layout.size,), dtype=np.float32)


def dict_space(layout: ObsLayout) -> spaces.Dict:
    """Each part flattened to 1-D (row-major: seat rows one after another), the shape
    SB3's ``MultiInputPolicy`` expects."""
    return spaces.Dict(
        {
            n: spaces.Box(0.0, 1.0, shape=(s.stop - s.start,), dtype=np.float32)
            for n, s in layout.slices.items()
        }
    )
