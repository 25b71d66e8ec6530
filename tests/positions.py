"""Stacked positions shared by the tests."""

from thirtyone_env.cards import parse_cards
from thirtyone_env.engine import DRAW, GameState, from_position
from thirtyone_env.rules import Rules


def heads_up_known(me: str, opponent: str, lives: int) -> GameState:
    """Heads-up, standard rules, seat 0 to draw on its fourth turn: the opponent took its
    three cards from the pile (so seat 0 knows them) while seat 0 discarded 7s, 8c and
    9d onto 5s."""
    rules = Rules.resolve("standard")
    mine, theirs = parse_cards(me), parse_cards(opponent)
    pile = parse_cards("5s 7s 8c 9d")
    used = set(mine + theirs + pile)
    stock = [c for c in rules.deck_cards if c not in used]
    discards = [(0, theirs[0]), (1, pile[1]), (0, theirs[1]), (1, pile[2]), (0, theirs[2]), (1, pile[3])]
    return from_position(
        rules,
        hands=[mine, theirs],
        stock=stock,
        discard=pile,
        current=0,
        phase=DRAW,
        dealer=1,
        lives=[lives, lives],
        active=[True, True],
        turns_played=6,
        known=[0, sum(1 << c for c in theirs)],
        discards=discards,
    )
