"""The harness layer: players at tables, built on :mod:`thirtyone_env.game`.

``driver`` (the one table loop: seat and reset players, advance to a seat's decision,
settle and deal), ``match`` (one game), ``evaluation`` (duplicate-deal tournaments and
their statistics), ``records`` and ``replay`` (game records on the engine), ``analysis``
(research records: knocks, turns, suit switches), ``report`` (results folders and
plots), ``files`` (atomic writes, destination probes, folder locks). Never imports
:mod:`thirtyone_env.envs`.
"""
