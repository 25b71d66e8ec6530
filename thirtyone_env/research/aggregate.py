"""Answers from a study's table (and from turn records), each with a 95% interval.

All functions take pandas DataFrames (a study's table,
:data:`~thirtyone_env.research.labelling.COLUMNS`, or turn and player-round records
from :mod:`~thirtyone_env.harness.analysis`) and return DataFrames, one row per group:

- :func:`gain_by_value`: the mean gain of an alternative by hand value (the knock-gain
  curve; grouped by turn it is the knock-gain surface, :func:`knock_surface`);
- :func:`break_even`: the hand value from which the alternative pays (where the mean
  gain, made non-decreasing in the value, crosses zero), with a bootstrap interval
  that resamples whole games;
- :func:`knock_timing`: a player's own knock threshold (the value from which it knocks
  more often than not) against the break-even: too early, too late or in line;
- :func:`choices`: how a player's own choices fare: the mean gain of the alternative
  where it took it (a knock that loses lives on average came too early) and where it
  did not (a positive gain there: it knocks too late);
- :func:`switch_by_turn`: how often a player switches suits by turn, what the switches
  it makes are worth and what those it passes up would have been, standardised to one
  mix of hand values (held fixed across turns);
- :func:`stratified_difference`: a difference of means between two groups within
  strata (hand values), pooled with the strata's weights: the observational
  comparison of turn records;
- :func:`discard_signal`: how well the seed's outward signal (a discard of another
  suit than the previous one) tells a real suit switch, per player: precision and
  recall with Wilson intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from thirtyone_env.harness.evaluation import t95

Z = 1.959963984540054  #: the normal quantile of a two-sided 95% interval
BOOTSTRAP = 200  #: bootstrap resamples of a break-even


def _groups(df: pd.DataFrame, by: Sequence[str]) -> Any:
    """``(key, frame)`` per group of ``by`` (one group, key ``()``, when ``by`` is empty)."""
    if not by:
        return [((), df)]
    return ((k if isinstance(k, tuple) else (k,), g) for k, g in df.groupby(list(by), sort=True))


def _mean_ci(x: np.ndarray) -> tuple[float, float, float, float]:
    """Mean, its standard error and 95% interval of ``x``."""
    n = len(x)
    if n == 0:
        return (np.nan,) * 4
    mean = float(x.mean())
    se = float(x.std(ddof=1) / np.sqrt(n)) if n > 1 else np.nan
    half = t95(n - 1) * se  # a few decisions' spread is uncertain too: Student's t
    return mean, se, mean - half, mean + half


def gain_by_value(df: pd.DataFrame, by: Sequence[str] = (), alternative: str | None = None) -> pd.DataFrame:
    """Mean gain by hand value (within each ``by`` group): decisions, gain, se, low, high."""
    rows = df if alternative is None else df[df["alternative"] == alternative]
    out = []
    for key, g in _groups(rows, [*by, "value"]):
        out.append((*key, len(g), *_mean_ci(g["gain"].to_numpy())))
    return pd.DataFrame(out, columns=[*by, "value", "decisions", "gain", "se", "low", "high"])


def knock_surface(df: pd.DataFrame) -> pd.DataFrame:
    """The knock-gain surface: mean gain of knocking, hand value (rows) by own turn
    (columns)."""
    curve = gain_by_value(df, ("turn",), "knock")
    return curve.pivot(index="value", columns="turn", values="gain")


def _isotonic(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The non-decreasing fit of ``y`` (weights ``w``) by pooling adjacent violators."""
    means, weights, sizes = [], [], []
    for yi, wi in zip(y, w, strict=True):
        means.append(yi)
        weights.append(wi)
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            w2 = weights[-2] + weights[-1]
            m = (means[-2] * weights[-2] + means[-1] * weights[-1]) / w2
            s = sizes[-2] + sizes[-1]
            del means[-1], weights[-1], sizes[-1]
            means[-1], weights[-1], sizes[-1] = m, w2, s
    return np.repeat(means, sizes)


def _crossing(values: np.ndarray, counts: np.ndarray, sums: np.ndarray, level: float = 0.0) -> float:
    """Where the non-decreasing fit of the means crosses ``level``: ``-inf`` when it is
    above at every value seen, ``inf`` when at none."""
    keep = counts > 0
    v, n = values[keep], counts[keep]
    if len(v) == 0:
        return np.nan
    f = _isotonic(sums[keep] / n, n) - level
    above = np.flatnonzero(f >= 0)
    if len(above) == 0:
        return np.inf
    b = above[0]
    if b == 0:
        return -np.inf
    v0, v1, f0, f1 = v[b - 1], v[b], f[b - 1], f[b]
    return float(v0 + (0 - f0) * (v1 - v0) / (f1 - f0))


def _finite(x: float) -> float:
    return x if np.isfinite(x) else np.nan


def break_even(
    df: pd.DataFrame,
    by: Sequence[str] = ("turn", "position"),
    alternative: str = "knock",
    resamples: int = BOOTSTRAP,
    seed: int = 0,
    min_decisions: int = 20,
) -> pd.DataFrame:
    """The break-even hand value of ``alternative`` per ``by`` group: decisions,
    break_even, low, high (95% percentile interval over ``resamples`` bootstrap
    resamples of whole games) and ``verdict``: ``"crosses"``, ``"always"`` (it pays at
    every value seen: the break-even lies below them, NaN), ``"never"`` (at none: NaN)
    or ``"too few"`` (under ``min_decisions``). An interval bound is NaN where resamples
    fall off the values seen."""
    rows = df[df["alternative"] == alternative]
    rng = np.random.default_rng(seed)
    out = []
    for key, g in _groups(rows, by):
        n = len(g)
        if n < min_decisions:
            out.append((*key, n, np.nan, np.nan, np.nan, "too few"))
            continue
        values, bins = np.unique(g["value"].to_numpy(), return_inverse=True)
        gain = g["gain"].to_numpy()
        games, game_of = np.unique(g["game"].to_numpy(), return_inverse=True)
        k = len(values)
        point = _crossing(values, np.bincount(bins, minlength=k).astype(float), np.bincount(bins, gain, k))
        boot = np.empty(resamples)
        for r in range(resamples):
            w = rng.multinomial(len(games), np.full(len(games), 1 / len(games)))[game_of].astype(float)
            boot[r] = _crossing(values, np.bincount(bins, w, k), np.bincount(bins, w * gain, k))
        boot = boot[~np.isnan(boot)]
        # bounds are resamples themselves (no interpolation): one that never crosses is infinite
        low, high = (
            np.quantile(boot, [0.025, 0.975], method="inverted_cdf") if len(boot) else (np.nan, np.nan)
        )
        verdict = "always" if point == -np.inf else "never" if point == np.inf else "crosses"
        out.append((*key, n, _finite(point), _finite(float(low)), _finite(float(high)), verdict))
    return pd.DataFrame(out, columns=[*by, "decisions", "break_even", "low", "high", "verdict"])


def _threshold_and_break_even(
    values: np.ndarray, bins: np.ndarray, took: np.ndarray, gain: np.ndarray, w: np.ndarray
) -> tuple[float, float]:
    """The value from which the (weighted) share taken reaches one half, and where the
    mean gain crosses zero."""
    k = len(values)
    counts = np.bincount(bins, w, k)
    return (
        _crossing(values, counts, np.bincount(bins, w * took, k), 0.5),
        _crossing(values, counts, np.bincount(bins, w * gain, k)),
    )


def knock_timing(
    df: pd.DataFrame,
    by: Sequence[str] = ("turn",),
    alternative: str = "knock",
    resamples: int = BOOTSTRAP,
    seed: int = 0,
    min_decisions: int = 20,
) -> pd.DataFrame:
    """Whether a player takes ``alternative`` too early or too late, per ``by`` group:
    its ``threshold`` (the hand value from which it takes it more often than not, the
    share made non-decreasing in the value) against the oracle's ``break_even`` (see
    :func:`break_even`), and ``difference`` = threshold - break-even with its 95%
    interval (the same bootstrap resamples of whole games for both). ``verdict``:
    ``"too early"`` (the interval below 0: it knocks on hands that lose by knocking),
    ``"too late"`` (above 0), ``"in line"`` (both bounds around 0), ``"unclear"`` (one
    bound open: resamples where a value did not cross), or ``"too few"``, ``"no threshold"`` (its
    choices follow no hand value, as ``random``'s) or ``"no crossing"`` (the break-even
    lies outside the values seen)."""
    rows = df[df["alternative"] == alternative]
    rng = np.random.default_rng(seed)
    out = []
    for key, g in _groups(rows, by):
        n = len(g)
        values, bins = np.unique(g["value"].to_numpy(), return_inverse=True)
        gain, took = g["gain"].to_numpy(), g["chosen"].to_numpy(float)
        games, game_of = np.unique(g["game"].to_numpy(), return_inverse=True)
        threshold, even = _threshold_and_break_even(values, bins, took, gain, np.ones(n))
        if n < min_decisions or not (np.isfinite(threshold) and np.isfinite(even)):
            verdict = (
                "too few"
                if n < min_decisions
                else "no threshold"
                if not np.isfinite(threshold)
                else "no crossing"
            )
            out.append((*key, n, _finite(threshold), _finite(even), np.nan, np.nan, np.nan, verdict))
            continue
        diffs = []
        for _ in range(resamples):
            w = rng.multinomial(len(games), np.full(len(games), 1 / len(games)))[game_of].astype(float)
            a, b = _threshold_and_break_even(values, bins, took, gain, w)
            diffs.append(a - b)
        d = np.asarray(diffs, dtype=float)
        d = d[~np.isnan(d)]
        low, high = np.quantile(d, [0.025, 0.975], method="inverted_cdf") if len(d) else (np.nan, np.nan)
        low, high = _finite(float(low)), _finite(float(high))
        if high < 0:
            verdict = "too early"
        elif low > 0:
            verdict = "too late"
        else:  # a NaN bound: resamples with no crossing leave that side of the interval open
            verdict = "in line" if np.isfinite(low) and np.isfinite(high) else "unclear"
        out.append((*key, n, threshold, even, threshold - even, low, high, verdict))
    cols = ["decisions", "threshold", "break_even", "difference", "low", "high", "verdict"]
    return pd.DataFrame(out, columns=[*by, *cols])


def choices(df: pd.DataFrame, by: Sequence[str] = ("player",), alternative: str = "knock") -> pd.DataFrame:
    """How a player's own choices fare against the oracle, per ``by`` group: where it
    took ``alternative`` (``taken``, and the mean gain of it there, with its interval:
    below zero, it takes it too early) and where it did not (``passed``: above zero, it
    takes it too late)."""
    rows = df[df["alternative"] == alternative]
    out = []
    for key, g in _groups(rows, by):
        took = g["chosen"].to_numpy(bool)
        gain = g["gain"].to_numpy()
        t = _mean_ci(gain[took])
        p = _mean_ci(gain[~took])
        out.append((*key, int(took.sum()), t[0], t[2], t[3], int((~took).sum()), p[0], p[2], p[3]))
    cols = [
        "taken",
        "gain_taken",
        "low_taken",
        "high_taken",
        "passed",
        "gain_passed",
        "low_passed",
        "high_passed",
    ]
    return pd.DataFrame(out, columns=[*by, *cols])


def regret(df: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """The player's mean loss a decision against the oracle's best option (the
    ``regret`` column, one value a decision), per ``by`` group: decisions, regret, se,
    low, high. Zero: its choices are the best the oracle measures; the more, the more
    it gives away there (in the study's objective: lives a decision)."""
    one = df.drop_duplicates(["game", "round", "turn"]) if len(df) else df
    one = one[np.isfinite(one["regret"].to_numpy(float))] if len(one) else one
    out = []
    for key, g in _groups(one, by):
        out.append((*key, len(g), *_mean_ci(g["regret"].to_numpy(float))))
    return pd.DataFrame(out, columns=[*by, "decisions", "regret", "se", "low", "high"])


def _value_bands(values: pd.Series, width: float) -> pd.Series:
    return (np.floor(values.to_numpy() / width) * width).astype(float)


SWITCH_COLUMNS = (
    "decisions",
    "switch_rate",
    "rate_low",
    "rate_high",
    "made_gain",
    "made_low",
    "made_high",
    "passed_gain",
    "passed_low",
    "passed_high",
)


def _standardised(x: np.ndarray, bands: np.ndarray, weights: pd.Series) -> tuple[float, float, float]:
    """The mean of ``x`` within each value band, pooled with the study's band weights
    (bands with fewer than two values left out), and its 95% interval."""
    est, var, covered = 0.0, 0.0, 0.0
    for b, w in weights.items():
        xb = x[bands == b]
        if len(xb) > 1:
            est += w * xb.mean()
            var += w**2 * xb.var(ddof=1) / len(xb)
            covered += w
    if covered == 0:
        return np.nan, np.nan, np.nan
    est, se = est / covered, np.sqrt(var) / covered
    return est, est - Z * se, est + Z * se


def switch_by_turn(df: pd.DataFrame, by: Sequence[str] = ("turn",), band: float = 3.0) -> pd.DataFrame:
    """Suit switches of a ``switch`` study by ``by`` group: ``decisions`` (discards where
    a switch was possible), ``switch_rate`` (share where the player switched, with its
    interval), ``made_gain`` (what the switches it made were worth over staying) and
    ``passed_gain`` (what the best switch on offer would have been worth where it
    stayed). Both gains are standardised to the study's mix of hand values in bands of
    ``band`` points (weights: the decisions of each band in the whole study), so that
    groups (turns) are compared holding the hand value fixed; each has its interval."""
    if df.empty:
        return pd.DataFrame(columns=[*by, *SWITCH_COLUMNS])
    d = df.copy()
    d["band"] = _value_bands(d["value"], band)
    d["switched"] = d["own"].str.startswith("switch")
    ids = ["game", "round", "seat", "turn"]
    chosen = d[d["chosen"]].groupby(ids)["gain"].first()
    best = d.groupby(ids)["gain"].max()
    per = d.groupby(ids).agg(
        band=("band", "first"),
        switched=("switched", "first"),
        **{k: (k, "first") for k in by if k not in ids},
    )
    per = per.reset_index()
    key = pd.MultiIndex.from_frame(per[ids])
    per["gain"] = np.where(per["switched"], chosen.reindex(key).to_numpy(), best.reindex(key).to_numpy())
    weights = per["band"].value_counts(normalize=True)
    out = []
    for k, g in _groups(per, by):
        n = len(g)
        rate = _wilson(int(g["switched"].sum()), n)
        made = g[g["switched"]]
        passed = g[~g["switched"]]
        out.append(
            (
                *k,
                n,
                *rate,
                *_standardised(made["gain"].to_numpy(), made["band"].to_numpy(), weights),
                *_standardised(passed["gain"].to_numpy(), passed["band"].to_numpy(), weights),
            )
        )
    return pd.DataFrame(out, columns=[*by, *SWITCH_COLUMNS])


def stratified_difference(
    df: pd.DataFrame, outcome: str, group: str, strata: str, by: Sequence[str] = ()
) -> pd.DataFrame:
    """Mean ``outcome`` where ``group`` is true minus where it is false, within each
    stratum of ``strata``, pooled over strata with their sizes as weights (strata
    where either group has fewer than two rows are left out): per ``by`` group,
    ``rows``, ``difference``, ``se``, ``low``, ``high``."""
    out = []
    for key, g in _groups(df, by):
        est, var, weight = 0.0, 0.0, 0
        for _, s in g.groupby(strata):
            yes = s.loc[s[group].astype(bool), outcome].to_numpy(float)
            no = s.loc[~s[group].astype(bool), outcome].to_numpy(float)
            if len(yes) < 2 or len(no) < 2:
                continue
            w = len(s)
            est += w * (yes.mean() - no.mean())
            var += w**2 * (yes.var(ddof=1) / len(yes) + no.var(ddof=1) / len(no))
            weight += w
        if weight == 0:
            out.append((*key, len(g), np.nan, np.nan, np.nan, np.nan))
            continue
        d, se = est / weight, np.sqrt(var) / weight
        out.append((*key, len(g), d, se, d - Z * se, d + Z * se))
    return pd.DataFrame(out, columns=[*by, "rows", "difference", "se", "low", "high"])


def _wilson(k: int, n: int) -> tuple[float, float, float]:
    """Share ``k / n`` and its Wilson 95% interval."""
    if n == 0:
        return np.nan, np.nan, np.nan
    p = k / n
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z * np.sqrt(p * (1 - p) / n + Z**2 / (4 * n * n)) / (1 + Z**2 / n)
    # At p = 0 or 1 the exact bound is p itself; rounding can put it a hair past p (a
    # negative error bar, a share below 0), so the interval is held to [0, 1] around p.
    return p, max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p))


def discard_signal(turns: pd.DataFrame, by: Sequence[str] = ("player",)) -> pd.DataFrame:
    """The seed's discard-suit signal per ``by`` group, from turn records (draw turns
    with a previous discard to compare): ``precision`` (a signalled turn is a real
    switch) and ``recall`` (a real switch is signalled), each with its interval."""
    t = turns[turns["discard_suit_changed"].notna()]
    out = []
    for key, g in _groups(t, by):
        signal = g["discard_suit_changed"].astype(bool).to_numpy()
        switched = g["switched"].astype(bool).to_numpy()
        both = int((signal & switched).sum())
        p = _wilson(both, int(signal.sum()))
        r = _wilson(both, int(switched.sum()))
        out.append((*key, len(g), int(signal.sum()), int(switched.sum()), *p, *r))
    cols = ["turns", "signalled", "switches", "precision", "precision_low", "precision_high"]
    return pd.DataFrame(out, columns=[*by, *cols, "recall", "recall_low", "recall_high"])
