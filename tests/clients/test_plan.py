"""Lazy planning (clients/plan.py, clients/selection.py): a huge seed range costs nothing until it is played."""

from __future__ import annotations

import argparse
import itertools
import time

import pytest

from clients.errors import RunError
from clients.flags import integer, number, seconds
from clients.plan import Plan
from clients.runner import episode_name
from clients.selection import MAX_SEED, parse_seeds


def test_a_hundred_million_seeds_are_a_range_not_a_list() -> None:
    started = time.process_time()  # CPU time: a busy machine stretches the wall clock, not this
    seeds = parse_seeds("0-100000000")
    plan = Plan("oracle", [(["a", "b"], seeds)], 3, episode_name)
    assert len(plan) == 2 * 100_000_001 * 3 and time.process_time() - started < 1.0  # a list would take minutes
    first = list(itertools.islice(plan, 4))
    assert [(i.task, i.seed, i.trial) for i in first] == [("a", 0, 0), ("a", 0, 1), ("a", 0, 2), ("a", 1, 0)]
    assert ("b", 99_999_999, 2, "oracle") in plan and ("b", 100_000_001, 0, "oracle") not in plan
    assert ("a", 5, 3, "oracle") not in plan and ("a", 5, 0, "other") not in plan
    done = {("a", 0, 0, "oracle"), ("a", 0, 1, "oracle"), ("zz", 0, 0, "oracle")}
    assert plan.count_done(done) == 2
    assert next(plan.todo(done)).trial == 2


def test_seeds_keep_their_order_and_play_each_seed_once() -> None:
    assert list(parse_seeds("5,0-9,3-12,20")) == [5, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 20]
    assert list(parse_seeds([3, 3, 1])) == [3, 1]
    for bad in ("-1", "3-1", "x", f"0-{MAX_SEED + 1}", ""):
        with pytest.raises(RunError):
            parse_seeds(bad)
    with pytest.raises(RunError):
        parse_seeds([True])


def test_numeric_flags_have_ranges() -> None:
    assert integer(1)("3") == 3 and number(0, 2)("0.5") == 0.5 and seconds("1.5") == 1.5
    for parse, text in ((integer(1), "0"), (integer(0, 100), "101"), (integer(1), "2.5"), (number(0, 2), "3"),
                        (number(0, 2), "nan"), (seconds, "-1"), (seconds, "0"), (seconds, "inf"), (seconds, "soon")):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)
