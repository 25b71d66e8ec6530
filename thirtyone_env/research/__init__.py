"""Research tools: when to knock and when to switch suits, answered with intervals.

The fourth layer of the package (it imports :mod:`thirtyone_env.game` and
:mod:`thirtyone_env.harness`, nothing above): a decision oracle that measures what a
move is worth by playing it out, studies that sample a player's decisions at any table
and aggregate them, and a command line (``python -m thirtyone_env.research``).

- :mod:`~thirtyone_env.research.questions`: what each question sets against each other
  (knock vs wait, switch suits vs stay, take the discard vs draw);
- :mod:`~thirtyone_env.research.oracle`: paired play-outs of the options on copies of
  the true position, the real players continuing (common random numbers);
- :mod:`~thirtyone_env.research.config`: :class:`StudyConfig`, what a study is;
- :mod:`~thirtyone_env.research.labelling`: one job: games at the table, the studied
  seat's decisions measured (the table's columns, :data:`COLUMNS`);
- :mod:`~thirtyone_env.research.study`: the jobs on worker processes, one table
  (:func:`run_study` gives a pandas DataFrame);
- :mod:`~thirtyone_env.research.aggregate`: break-even values, gain curves and
  surfaces, switch rates and costs, the discard signal, each with a 95% interval;
- :mod:`~thirtyone_env.research.folder`, :mod:`~thirtyone_env.research.report`,
  :mod:`~thirtyone_env.research.plots`: the results folder, summary and PNGs;

The command line's player specs are read by the spec reader an installed package
registers (:mod:`thirtyone_env.harness.player_specs`; this project's is
``agents.from_spec``).

Players are passed in by the caller (``make_player(spec)``), so this layer never
imports a player package.
"""

from __future__ import annotations

from thirtyone_env.research.config import StudyConfig
from thirtyone_env.research.labelling import COLUMNS
from thirtyone_env.research.oracle import gains, measure
from thirtyone_env.research.questions import QUESTIONS, options
from thirtyone_env.research.study import run_study

__all__ = ["COLUMNS", "QUESTIONS", "StudyConfig", "gains", "measure", "options", "run_study"]
