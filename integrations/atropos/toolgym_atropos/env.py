"""``ToolgymEnv``: an Atropos ``BaseEnv`` whose rollouts are toolgym episodes, scored by toolgym's grade.

::

    toolgym serve finance --transport http --port 8000 &           # toolgym's venv; reads $TOOLGYM_TOKEN
    toolgym-atropos process --env.server http://127.0.0.1:8000 --env.tasks split:train \\
        --env.group_size 4 --env.total_steps 8 --env.tokenizer_name Qwen/Qwen3-0.6B --env.use_wandb false \\
        --env.data_path_to_save_groups groups.jsonl --env.records_dir records \\
        --openai.base_url http://127.0.0.1:9001/v1 --openai.model_name Qwen/Qwen3-0.6B --openai.api_key x

- **Items are task instances** (template × seed of ``--env.tasks`` × ``--env.seeds``), in the server's order,
  cycling; a group is ``group_size`` episodes of the same instance, played concurrently.
- **A rollout is an episode** (:mod:`toolgym_atropos.rollout`); its score is the grade's score, its tokens and
  masks the whole tool conversation with the tool schemas (:mod:`toolgym_atropos.tokens`), its ``overrides``
  entry ``{"toolgym": {episode_id, task, seed, passed, record}}``.
- ``--env.tokenizer_name toolgym-tiny`` tokenizes with a tiny tokenizer made at run time (:mod:`toolgym_atropos.tiny`)
  where no model hub is reachable; train with the policy model's own.
- **Infrastructure is never a score**: a group with a rollout lost to infrastructure is dropped (logged); after
  ``max_failed_groups`` such groups in a row the environment stops with the last error, rather than retry forever.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import httpx
from atroposlib.envs.base import APIServerConfig, BaseEnv, ScoredDataGroup
from toolgym_remote import ControlClient, EpisodeSession, RemoteError, check_server, parse_seeds, select_tasks

from toolgym_atropos.config import ToolgymEnvConfig
from toolgym_atropos.rollout import Rollout, RolloutFailed, Toolset, play
from toolgym_atropos.tiny import TINY, tiny_tokenizer_dir
from toolgym_atropos.tokens import tokens_and_masks

__all__ = ["ToolgymEnv", "main"]

log = logging.getLogger("toolgym_atropos")


class SetupError(SystemExit):
    """The toolgym server cannot be used as configured: one line on stderr, exit status 1, no traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(f"toolgym-atropos: error: {message}")


class ToolgymEnv(BaseEnv):
    """See the module docstring."""

    name = "toolgym"
    env_config_cls = ToolgymEnvConfig  # type: ignore[assignment]

    def __init__(self, config: ToolgymEnvConfig, server_configs: Any, slurm: bool = False, testing: bool = False) -> None:
        if config.tokenizer_name == TINY:
            config.tokenizer_name = str(tiny_tokenizer_dir())
        super().__init__(config, server_configs, slurm=slurm, testing=testing)
        self.config: ToolgymEnvConfig = config
        self.items: list[tuple[str, int]] = []
        self.eval_items: list[tuple[str, int]] = []
        self.toolset: Toolset | None = None
        self.failed_groups = 0
        self.graded: list[dict[str, Any]] = []
        """Grades since the last wandb log (score, passed)."""
        self._next = 0
        self._http: httpx.AsyncClient | None = None
        self._control: ControlClient | None = None

    @classmethod
    def config_init(cls) -> tuple[ToolgymEnvConfig, list[APIServerConfig]]:
        """Defaults for the CLI: groups of 4, no wandb, one OpenAI-compatible inference server on localhost:9001."""
        config = ToolgymEnvConfig(group_size=4, use_wandb=False, max_token_length=8192, steps_per_eval=100)
        server = APIServerConfig(base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:9001/v1"), model_name="default", api_key="x")
        return config, [server]

    async def setup(self) -> None:
        """Check the toolgym server, select the training and evaluation instances, read the tools once.

        Raises:
            SetupError: the server cannot be used, or a selection names nothing (one line).
        """
        config = self.config
        try:
            info = check_server(config.server, token_variable=config.token_variable)
            templates = select_tasks(info.tasks, config.tasks)
            seeds = parse_seeds(config.seeds)
            self.items = [(t, s) for t in templates for s in seeds]
            try:
                self.eval_items = [(t, s) for t in select_tasks(info.tasks, config.eval_tasks) for s in parse_seeds(config.eval_seeds)]
            except ValueError:
                self.eval_items = []  # an environment without such a split evaluates nothing
            self._http = httpx.AsyncClient(timeout=120.0)
            self._control = ControlClient(info.url, token_variable=config.token_variable, client=self._http)
            self.toolset = await self._read_toolset(templates[0])
        except (RemoteError, ValueError) as exc:
            raise SetupError(str(exc)) from None
        log.info("toolgym %s at %s: %d training instance(s), %d evaluation instance(s)", info.env, info.url, len(self.items), len(self.eval_items))

    async def _read_toolset(self, template: str) -> Toolset:
        """The instructions, tools and answer tools every episode of the server shows."""
        assert self._control is not None
        described = await self._control.environment()
        created = await self._control.create(template, 0)
        try:
            async with EpisodeSession(created.mcp_url, client=self._http) as session:
                listed = await session.list_tools()
                instructions = session.instructions
        finally:
            await self._control.release(created.id)
        tools = [
            {"type": "function", "function": {"name": t["name"], "description": t.get("description") or "",
                                              "parameters": t.get("inputSchema") or {"type": "object", "properties": {}}}}
            for t in listed
        ]
        return Toolset(instructions=instructions, tools=tools, answer_tools=frozenset(described.get("answer_tools") or ()))

    async def get_next_item(self) -> tuple[str, int]:
        """The next training instance (template, seed), cycling through the selection."""
        item = self.items[self._next % len(self.items)]
        self._next += 1
        return item

    async def _play(self, item: tuple[str, int], *, split: str = "train") -> Rollout:
        assert self._control is not None and self._http is not None and self.toolset is not None
        sampling: dict[str, Any] = {"temperature": self.config.temperature, "split": split}
        if self.config.max_tokens_per_turn is not None:
            sampling["max_tokens"] = self.config.max_tokens_per_turn
        return await play(
            self.server, self._control, self._http, self.toolset, item[0], item[1], max_turns=self.config.max_turns,
            sampling=sampling, records_dir=self.config.records_dir,
        )

    async def collect_trajectories(self, item: tuple[str, int]) -> tuple[ScoredDataGroup | None, list[Any]]:
        """``group_size`` episodes of the instance, played concurrently; the group, or None when any rollout was lost
        to infrastructure (a partial group would skew the group's advantages).

        Raises:
            RuntimeError: ``max_failed_groups`` groups in a row were lost (the last error says why).
        """
        results = await asyncio.gather(*(self._play(item) for _ in range(self.config.group_size)), return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        for failure in failures:
            if not isinstance(failure, RolloutFailed):
                raise failure  # a bug of ours: loud
        if failures:
            self.failed_groups += 1
            log.warning("toolgym: group of %s#%s dropped: %s", item[0], item[1], failures[0])
            if self.failed_groups >= self.config.max_failed_groups:
                raise RuntimeError(f"toolgym: {self.failed_groups} groups in a row lost to infrastructure; last: {failures[0]}")
            return None, []
        self.failed_groups = 0
        rollouts: list[Rollout] = [r for r in results if isinstance(r, Rollout)]
        return self._group(rollouts), []

    def _group(self, rollouts: list[Rollout]) -> ScoredDataGroup:
        assert self.toolset is not None
        group = ScoredDataGroup(tokens=[], masks=[], scores=[], messages=[], overrides=[], advantages=None, ref_logprobs=None,
                                group_overrides={}, images=None)
        for rollout in rollouts:
            tokens, masks = tokens_and_masks(self.tokenizer, rollout.messages, self.toolset.tools)
            group["tokens"].append(tokens)
            group["masks"].append(masks)
            group["scores"].append(float(rollout.grade["score"]))
            group["messages"].append(rollout.messages)
            group["overrides"].append({"toolgym": {
                "episode_id": rollout.episode_id, "task": rollout.task, "seed": rollout.seed,
                "passed": bool(rollout.grade["passed"]), "record": rollout.record,
            }})
            self.graded.append({"score": float(rollout.grade["score"]), "passed": bool(rollout.grade["passed"])})
        if not self.config.include_messages:
            group["messages"] = None
        return group

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        """One episode per evaluation instance (``eval_tasks`` × ``eval_seeds``); logs mean score and pass rate."""
        if not self.eval_items:
            return
        results = await asyncio.gather(*(self._play(item, split="eval") for item in self.eval_items), return_exceptions=True)
        rollouts = [r for r in results if isinstance(r, Rollout)]
        lost = len(results) - len(rollouts)
        metrics = {"eval/errored": float(lost)}
        if rollouts:
            metrics["eval/score"] = sum(float(r.grade["score"]) for r in rollouts) / len(rollouts)
            metrics["eval/pass_rate"] = sum(1.0 for r in rollouts if r.grade["passed"]) / len(rollouts)
        samples = [{"task": r.task, "seed": r.seed, "episode_id": r.episode_id, "score": r.grade["score"], "passed": r.grade["passed"]}
                   for r in rollouts]
        await self.evaluate_log(metrics=metrics, task_name=f"toolgym/{self.config.eval_tasks}", samples=samples)

    async def wandb_log(self, wandb_metrics: dict[str, Any] | None = None) -> None:
        """Add toolgym's mean score and pass rate over the rollouts since the last log."""
        wandb_metrics = dict(wandb_metrics or {})
        if self.graded:
            wandb_metrics["train/toolgym_score"] = sum(g["score"] for g in self.graded) / len(self.graded)
            wandb_metrics["train/toolgym_pass_rate"] = sum(1.0 for g in self.graded if g["passed"]) / len(self.graded)
            self.graded = []
        await super().wandb_log(wandb_metrics)


def main() -> None:
    """``toolgym-atropos serve|process|evaluate ...``: Atropos's own CLI for :class:`ToolgymEnv`."""
    ToolgymEnv.cli()


if __name__ == "__main__":
    main()
