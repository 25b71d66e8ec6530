"""The game layer: Thirty-One as plain functions over a compact state.

``cards`` (ids, values, the hand-value lookup), ``rules`` (every option, the presets),
``actions`` (the action ids and their one decoder), ``events`` (what a history holds),
``engine`` (the public face of ``state``, ``settle``, ``turns``, ``deal``, ``play``
and ``positions``: the state, settlement, turns, deal, legal actions and play, and
positions built by hand), ``table_moves`` (the variants'
exchanges with the table), ``views`` (what one seat may see), ``encoding`` (a seat's
view as features), ``rewards`` (a settled round's reward), ``policies`` and
``table_strategy`` (the built-in heuristic players). Imports nothing outside this
layer but NumPy; never Gymnasium.
"""
