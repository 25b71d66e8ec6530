"""A web table on the user's own machine: play against the agents in the browser,
step through recorded games, look at results folders (``thirtyone-web``).

:mod:`apps.web.session` (one game, what its seat may see), :mod:`apps.web.watch`
(records as frames, results folders), :mod:`apps.web.app` (the HTTP API and pages),
:mod:`apps.web.server` (the command line). Needs the ``web`` extra (FastAPI, uvicorn).
"""
