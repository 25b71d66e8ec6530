"""How the command-line tools end a run: one line on stderr and an exit status, never
a traceback (0 done, 2 an error, 130 interrupted)."""

from __future__ import annotations

import sys
from collections.abc import Callable


def run_command(prog: str, what: str, body: Callable[[], int], interrupted: str = "interrupted") -> int:
    """``body()``'s exit status; a bad folder, option or illegal move (``ValueError``,
    ``OSError``) and a player's own failure (any other exception, named with ``what``
    stopped) become ``prog: error: ...`` and status 2, Ctrl-C ``prog: <interrupted>``
    and status 130."""
    try:
        return body()
    except KeyboardInterrupt:
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return 130
    except (ValueError, OSError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # a player's own failure: named, never a traceback
        print(f"{prog}: error: {what} stopped: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
