"""Offline re-grading of saved records, and every way a record or an episode can be ungradable."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from fixtures.changes import LoggedChange
from fixtures.errors import GradingError, RecordError, TaskError
from fixtures.world import World
from graders.grading import grade_episode, grade_record
from graders.play import play
from graders.replay import apply_changes
from graders.tasks import TaskDraft, TaskTemplate, call
from servers.environment import Environment
from servers.episodes import Episode, EpisodeManager
from tests.graders.conftest import Run
from tests.graders.toy import tasks as toy_tasks


async def _saved(run: Run, tmp_path: Path, task: str = "transfer_funds", seed: int = 3, calls: object = "oracle") -> tuple[Episode, Path]:
    path = tmp_path / f"{task}-{seed}.jsonl"
    episode = await run(task, seed, calls, record_path=path)
    return episode, path


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


async def test_regrading_a_saved_record_gives_the_same_grade(run: Run, tmp_path: Path, toy: Environment) -> None:
    for calls in ("oracle", [call("verify_identity", customer_id=1, passcode="0000"), call("freeze_account", account_id=2, reason="r")]):
        episode, path = await _saved(run, tmp_path, calls=calls)
        live = await grade_episode(episode)
        offline = await grade_record(toy, path)
        assert offline.to_json() == live.to_json()
    assert offline.passed is False and live.passed is False  # the second script is wrong, and graded the same offline


async def test_truncated_records_are_refused(run: Run, tmp_path: Path, toy: Environment) -> None:
    _, path = await _saved(run, tmp_path)
    lines = _lines(path)
    no_footer = _write(tmp_path / "no_footer.jsonl", lines[:-1])
    with pytest.raises(RecordError, match=r"no_footer.jsonl has no 'closed' line: the episode was not closed \(truncated file\?\)"):
        await grade_record(toy, no_footer)
    cut = tmp_path / "cut.jsonl"
    cut.write_text(path.read_text()[: -len(json.dumps(lines[-1])) // 2 - 1])
    with pytest.raises(RecordError, match=r"cut.jsonl: line 4 is not a valid event \(truncated file\?\)"):
        await grade_record(toy, cut)
    missing_call = _write(tmp_path / "missing.jsonl", [lines[0], lines[2], lines[3]])
    with pytest.raises(RecordError, match=r"is incomplete: its footer counts 2 tool calls, the file holds 1 \(seqs \[2\]\)"):
        await grade_record(toy, missing_call)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(RecordError, match="is empty"):
        await grade_record(toy, empty)


async def test_records_from_elsewhere_are_refused(run: Run, tmp_path: Path, toy: Environment) -> None:
    _, path = await _saved(run, tmp_path)
    lines = _lines(path)
    other_env = _write(tmp_path / "other.jsonl", [{**lines[0], "env": "finance"}, *lines[1:]])
    with pytest.raises(RecordError, match="is from environment 'finance', not 'grader-toy'"):
        await grade_record(toy, other_env)
    old_fixture = _write(tmp_path / "old.jsonl", [{**lines[0], "fixture_version": "000000000000"}, *lines[1:]])
    with pytest.raises(RecordError, match="was made with fixture version 000000000000, this code builds"):
        await grade_record(toy, old_fixture)
    unknown = _write(tmp_path / "unknown.jsonl", [{**lines[0], "task": "wire_everything"}, *lines[1:]])
    with pytest.raises(TaskError, match="has no task template 'wire_everything'"):
        await grade_record(toy, unknown)


async def test_an_edited_record_does_not_reproduce_its_end_hash(run: Run, tmp_path: Path, toy: Environment) -> None:
    _, path = await _saved(run, tmp_path)
    lines = _lines(path)
    wire = lines[2]
    changes = wire["changes"]  # type: ignore[index]
    changes[0]["after"]["balance_minor"] += 1  # type: ignore[index]
    edited = _write(tmp_path / "edited.jsonl", lines)
    with pytest.raises(RecordError, match=r"replaying its logged changes gives sha256:[0-9a-f]+, but the record says the episode ended at sha256:"):
        await grade_record(toy, edited)


async def test_a_changed_template_is_detected(run: Run, tmp_path: Path, toy: Environment) -> None:
    _, path = await _saved(run, tmp_path, task="freeze_compromised", seed=1)

    def reworded(world: World, rng: random.Random) -> TaskDraft:
        draft = toy_tasks.freeze_compromised(world, rng)
        return draft.model_copy(update={"prompt": draft.prompt + " Please."})

    def resetup(world: World, rng: random.Random) -> TaskDraft:
        draft = toy_tasks.freeze_compromised(world, rng)
        world.execute("UPDATE customers SET name = 'Zed' WHERE id = 1")
        return draft

    for build, message in ((reworded, "now produces a different prompt"), (resetup, "now starts from sha256:")):
        changed = toy.with_templates([TaskTemplate(build, id="freeze_compromised", tools=["freeze_account"])])
        with pytest.raises(RecordError, match=message):
            await grade_record(changed, path)


async def test_free_play_and_released_episodes_cannot_be_graded(manager: EpisodeManager, tmp_path: Path, toy: Environment) -> None:
    free = manager.create(seed=0, record_path=tmp_path / "free.jsonl")
    with pytest.raises(GradingError, match=r"episode 'ep-[0-9a-f]+' is free play \(no task\)"):
        await grade_episode(free)
    manager.close(free.id)
    with pytest.raises(RecordError, match=r"is free play \(no task\): there is no rubric"):
        await grade_record(toy, tmp_path / "free.jsonl")
    task = manager.create(task="balance_lookup", seed=0)
    manager.release(task.id)
    with pytest.raises(GradingError, match="was released and its world freed; grade its record with grade_record"):
        await grade_episode(task)
    assert (await grade_record(toy, manager.record(task.id))).passed is False


async def test_a_live_episode_can_be_graded_so_far(manager: EpisodeManager) -> None:
    episode = manager.create(task="freeze_compromised", seed=0)
    assert episode.task is not None
    await play(episode, episode.task.oracle)
    grade = await grade_episode(episode)
    assert grade.passed and grade.end_hash is None  # no footer yet: the end hash is only known once closed


def test_changes_naming_unknown_tables_are_refused(toy: Environment) -> None:
    world = toy.fixture.world(0)
    try:
        bogus = LoggedChange(seq=1, table="ledger", key=[1], op="delete", before={"id": 1}, after=None)
        with pytest.raises(RecordError, match="change #1 writes table 'ledger', which this environment's world does not have"):
            apply_changes(world, [bogus])
        ghost = LoggedChange(seq=2, table="accounts", key=[999], op="update", before={"id": 999}, after={"id": 999, "status": "x"})
        with pytest.raises(RecordError, match=r"change #2 updates accounts\[999\], which does not exist"):
            apply_changes(world, [ghost])
    finally:
        world.close()
