"""Programs for people built on the players: the web table (:mod:`apps.web`) and the
terminal game (:mod:`apps.play`). Nothing in ``agents`` or ``thirtyone_env`` imports
them."""
