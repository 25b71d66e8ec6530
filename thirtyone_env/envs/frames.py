"""The ``"rgb_array"`` render mode: the table's text as an image.

A Gymnasium env that renders frames returns ``(height, width, 3)`` uint8 arrays of one
size, which video recorders (``gymnasium.wrappers.RecordVideo``, SB3's
``VecVideoRecorder``) join into a film; SB3's ``make_vec_env`` asks for this mode by
default. The frame is the ``"ansi"`` text drawn in a monospace font (matplotlib's
Agg, no display needed), cut to the lines and columns a frame holds.
"""

from __future__ import annotations

import numpy as np
from gymnasium.error import DependencyNotInstalled

#: A frame's size in pixels (height, width): every frame of an env has this one.
FRAME_SIZE = (480, 640)
#: The most lines and characters a line a frame shows (more are cut, marked ``...``).
MAX_LINES, MAX_COLUMNS = 24, 72


def text_frame(text: str) -> np.ndarray:
    """``text`` drawn dark on light, as a ``FRAME_SIZE + (3,)`` uint8 array."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise DependencyNotInstalled(
            'render_mode="rgb_array" draws with matplotlib, which is not installed: pip install matplotlib'
        ) from error

    lines = [
        line if len(line) <= MAX_COLUMNS else line[: MAX_COLUMNS - 3] + "..." for line in text.splitlines()
    ]
    if len(lines) > MAX_LINES:
        lines = [*lines[: MAX_LINES - 1], "..."]
    height, width = FRAME_SIZE
    dpi = 100
    figure = Figure(figsize=(width / dpi, height / dpi), dpi=dpi, facecolor="#f4f1e8")
    canvas = FigureCanvasAgg(figure)
    figure.text(0.02, 0.97, "\n".join(lines), family="monospace", fontsize=11, va="top", color="#1b1b1b")
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()
