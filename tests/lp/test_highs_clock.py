"""HiGHS's time limit is read on a run clock that keeps counting over every ``run`` of one model
(found in the mutual-information column generation): loops that re-solve a warm model must set
the limit past the clock (:func:`mechdesign.lp.highs.set_seconds_left`), not to the seconds left."""

from __future__ import annotations

import highspy
import numpy as np

from mechdesign.lp.highs import new_highs, set_seconds_left


def _random_lp(n: int, seed: int):
    rng = np.random.default_rng(seed)
    h = new_highs()
    for _ in range(n):
        h.addVar(0.0, highspy.kHighsInf)
    idx = np.arange(n, dtype=np.int32)
    for row in rng.random((n, n)):
        h.addRow(1.0, highspy.kHighsInf, n, idx, row)
    return h, rng, idx


def _resolve(h, rng, idx):
    h.changeColsCost(len(idx), idx, rng.random(len(idx)))
    h.run()
    return h.getModelStatus(), int(h.getInfo().simplex_iteration_count)


def test_the_run_clock_counts_over_solves_and_the_limit_is_set_past_it():
    h, rng, idx = _random_lp(200, 0)
    _resolve(h, rng, idx)
    _resolve(h, rng, idx)
    spent = h.getRunTime()
    assert spent > 0
    # the premise: a limit below the clock's reading stops the next solve before its first iteration
    h.setOptionValue("time_limit", spent / 2)
    status, iterations = _resolve(h, rng, idx)
    assert status == highspy.HighsModelStatus.kTimeLimit and iterations == 0
    # set_seconds_left gives the next solve its own seconds: it reaches the optimum
    set_seconds_left(h, 60.0)
    status, iterations = _resolve(h, rng, idx)
    assert status == highspy.HighsModelStatus.kOptimal and iterations > 0
