"""The RL environments, built on :mod:`thirtyone_env.game` and the table driver.

``env`` (the Gymnasium single env, Python or compiled backend), ``vector`` (N games
stepped at once, and its SB3 ``VecEnv``), ``kernel_games`` / ``batch_kernels`` /
``batch_rng`` / ``kernel_rules`` (the numba engine behind them and which rules it
plays), ``multiagent`` (the PettingZoo AEC env), ``spaces`` (the observation spaces),
``env_options`` (the options the envs share).
"""
