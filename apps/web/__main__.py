"""``python -m apps.web``: the web table's server, as ``thirtyone-web`` starts it."""

import sys

from apps.web.server import main

sys.exit(main())
