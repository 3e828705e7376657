"""``toolgym play`` as a person or a program uses it: a real subprocess, commands piped on stdin, typed at a
pseudo-terminal, or given one per invocation with a session file; the grade, the run folder, the validation line."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from clients.cli import main
from clients.results import read_results
from clients.validation import read_validations
from clients.view.terminal import find_episode
from servers.environment import Environment
from servers.record import read_record
from servers.registry import load_environment
from tests.clients.play_helpers import PlayPackages, Terminal, make_packages, strip_ansi
from tests.toy_env import environment as toy

TOY = "playtoy:environment"


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> PlayPackages:
    return make_packages(tmp_path_factory.mktemp("play-packages"))


def oracle_lines(environment: Environment, task: str, seed: int) -> list[str]:
    """The instance's oracle as the lines a player would type (the test may see it; the player never does)."""
    world, instance = environment.instantiate_task(task, seed)
    world.release()
    return [f"{step.tool} {json.dumps(step.arguments)}" if step.arguments else step.tool for step in instance.oracle]


@pytest.fixture
def in_process(
    packages: PlayPackages, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
):
    """``toolgym ARGV`` run in this process (stdin piped from a string, in ``tmp_path``): what a subprocess does,
    without its second of start-up, for the checks that do not need a process of their own."""
    monkeypatch.syspath_prepend(str(packages.root))
    monkeypatch.chdir(tmp_path)

    def toolgym(*argv: str, stdin: str = "") -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        with pytest.raises(SystemExit) as done:
            main(list(argv))
        out, err = capsys.readouterr()
        return int(done.value.code or 0), out, err

    return toolgym


def only_run(cwd: Path) -> Path:
    runs = [p for p in (cwd / "runs").iterdir() if p.name.startswith("play-")]
    assert len(runs) == 1, runs
    return runs[0]


def test_piped_commands_play_grade_and_save_a_run(packages: PlayPackages, tmp_path: Path) -> None:
    transfer, answer = oracle_lines(toy, "pay_back", 3)
    bad = [
        "trasnfer {}",  # unknown tool (a suggestion follows)
        'transfer {"from_account": ',  # JSON cut short
        "transfer [1, 2]",  # not an object
        'transfer {"from_account": "acc-003"}',  # arguments the schema refuses
        'transfer {"from_account": "acc-003", "to_account": "acc-004", "amount": "1.00", "memo": "x"}',  # unknown argument
        "help nosuch",
        "tools please",
    ]
    script = [
        "# a comment",
        "",
        "tools",
        "help transfer",
        "policy",
        "prompt",
        "list_accounts",
        *bad,
        "calls",
        transfer,
        answer,
    ]
    done = packages.toolgym(
        "play", TOY, "--task", "pay_back", "--seed", "3", stdin="\n".join(script) + "\n", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Account acc-003 owes" in out and "Move money between accounts" in out  # prompt and instructions
    assert "list_accounts  read" in out and "transfer       writes" in out  # the tool list
    assert "from_account  required · string" in out and "pattern ^acc-[0-9]{3}$" in out  # help transfer
    assert "Toy bank policy" in out
    assert '"owner": "cyd (owes)"' in out  # list_accounts' result, pretty JSON
    errors = done.stderr.strip().splitlines()
    assert len(errors) == len(bad), done.stderr  # one line per bad input, nothing else
    assert "no tool or command 'trasnfer' (did you mean transfer?)" in errors[0]
    assert "not valid JSON" in errors[1] and "must be a JSON object" in errors[2]
    assert "'to_account' is a required property" in errors[3] and "'memo' was unexpected" in errors[4]
    assert "no tool named 'nosuch'" in errors[5] and "takes no arguments" in errors[6]
    assert "grade: " in out and "debt paid once" in out and "evidence" in out  # the grade, every criterion
    run = only_run(tmp_path)
    (line,) = read_results(run / "results.jsonl").lines
    assert line.status == "graded" and line.agent == "play" and line.task == "pay_back" and line.seed == 3
    assert (run / "summary.json").is_file()
    record = read_record(run / line.record, require_closed=True)
    assert [c.tool for c in record.tool_calls] == [
        "list_accounts",
        "transfer",
        "submit_answer",
    ]  # bad input never reached it
    assert record.closed.reason == "submitted"
    criteria = {c["name"]: c["passed"] for c in line.grade["criteria"]}
    assert criteria["debt paid once"] is True
    assert find_episode(run, line.episode_id).grade == line.grade  # `toolgym show` reads it as any run


def test_json_lines_for_programs_and_errors_with_class_code_message(packages: PlayPackages, tmp_path: Path) -> None:
    script = [
        "tools",
        "help submit_answer",
        'transfer {"from_account": "acc-003", "to_account": "acc-004", "amount": "999999.00"}',  # overdraws: refused
        'get_account {"account_id": "acc-999"}',
        "nosuch",
        "quit",
        "list_accounts",  # after quit: never played
    ]
    done = packages.toolgym(
        "play",
        TOY,
        "--task",
        "pay_back",
        "--seed",
        "3",
        "--json",
        "--out",
        str(tmp_path / "run"),
        stdin="\n".join(script) + "\n",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["type"] for e in events] == ["start", "tools", "help", "result", "result", "input_error", "end"]
    start = events[0]
    assert set(start) == {
        "type",
        "env",
        "task",
        "seed",
        "instructions",
        "prompt",
        "tools",
        "answer_tools",
    }  # no oracle, rubric
    assert events[2]["input_schema"]["required"] == ["text"]
    refused, missing = events[3], events[4]
    assert (
        refused["ok"] is False
        and refused["error"]["class"] == "refused"
        and refused["error"]["code"] == "insufficient_funds"
    )
    assert "acc-003 holds" in refused["error"]["message"]
    assert missing["error"]["code"] == "account_not_found"
    end = events[-1]
    assert end["reason"] == "quit" and end["tool_calls"] == 2 and end["grade"]["passed"] is False
    assert Path(end["run"]) == tmp_path / "run" and Path(end["record"]).is_file()


def test_a_counterpart_answers_through_its_tools_and_the_oracle_played_by_hand_passes(
    packages: PlayPackages, tmp_path: Path
) -> None:
    support = load_environment("support")
    lines = oracle_lines(support, "late_not_lost", 4)
    assert lines[0].startswith("ask_customer")
    done = packages.toolgym(
        "play",
        "playsup:environment",
        "--task",
        "late_not_lost",
        "--seed",
        "4",
        "--json",
        stdin="\n".join(lines) + "\n",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    asked = events[1]
    assert asked["tool"] == "ask_customer" and asked["ok"] and asked["result"]  # the customer's answer, as any call's
    end = events[-1]
    assert end["type"] == "end" and end["reason"] == "submitted"
    assert end["grade"]["passed"] is True and end["grade"]["score"] == 1.0


def test_session_mode_plays_one_command_per_invocation(packages: PlayPackages, in_process, tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    transfer, answer = oracle_lines(toy, "pay_back", 5)

    def play(*argv: str) -> tuple[int, str, str]:
        return in_process("play", TOY, "--session", str(session), *argv)

    def play_apart(
        *argv: str,
    ) -> tuple[int, str, str]:  # a process of its own: the world is rebuilt from the file alone
        done = packages.toolgym("play", TOY, "--session", str(session), *argv, cwd=tmp_path)
        return done.returncode, done.stdout, done.stderr

    code, out, err = play("--task", "pay_back", "--seed", "5", "--json")
    start = json.loads(out)
    assert code == 0 and start["type"] == "start" and "owes" in start["prompt"]
    header = session.read_text()
    assert json.loads(header)["type"] == "session" and header.count("\n") == 1
    code, out, err = play_apart("list_accounts")  # task and seed come from the session now
    assert code == 0 and '"accounts"' in out, err
    code, out, err = play('transfer {"from_account": "acc-001"}')  # bad input: one line, exit 2, nothing appended
    assert code == 2 and out == "" and err.count("\n") == 1 and "'to_account' is a required property" in err
    code, out, err = play("--seed", "6", "list_accounts")
    assert code == 2 and "plays seed 5, not 6" in err
    code, out, err = play(*transfer.split(" ", 1))  # TOOL and its JSON as two words
    assert code == 0 and "#2 transfer  ok" in out
    assert len(session.read_text().splitlines()) == 3
    code, out, err = play("calls")
    assert code == 0 and "#1 list_accounts" in out and "#2 transfer" in out
    # a session whose recorded result the world no longer gives is refused, and left as it was
    lines = session.read_text().splitlines()
    tampered = json.loads(lines[1])
    tampered["result"]["accounts"][0]["balance"] = "0.01"
    session.write_text("\n".join([lines[0], json.dumps(tampered), *lines[2:]]) + "\n")
    code, out, err = play("calls")
    assert code == 2 and "call #1 (list_accounts) answered differently on replay" in err and err.count("\n") == 1
    session.write_text("\n".join(lines) + "\n")
    code, out, err = play_apart(
        answer, "--json", "--validate", "--player", "claude-test", "--player-kind", "agent", "--fair"
    )
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["type"] for e in events] == ["result", "end", "validation"]
    end = json.loads(session.read_text().splitlines()[-1])
    assert end["type"] == "end" and end["reason"] == "submitted" and end["score"] == events[1]["grade"]["score"]
    record = read_record(tmp_path / events[1]["record"], require_closed=True)
    assert [c.tool for c in record.tool_calls] == ["list_accounts", "transfer", "submit_answer"]
    (line,) = read_validations(packages.validation_file("playtoy"), "toy")
    assert line.player == "claude-test" and line.player_kind == "agent" and line.defect is None and line.seed == 5
    code, out, err = play("list_accounts")
    assert code == 2 and "has ended" in err
    packages.validation_file("playtoy").unlink()


def test_validation_asked_at_a_terminal_with_history_and_a_pasted_object(
    packages: PlayPackages, tmp_path: Path
) -> None:
    transfer, answer = oracle_lines(toy, "pay_back", 7)
    tool, arguments = transfer.split(" ", 1)
    fields = json.loads(arguments)
    terminal = Terminal(
        packages,
        "play",
        TOY,
        "--task",
        "pay_back",
        "--seed",
        "7",
        "--validate",
        "--player",
        "ada",
        "--out",
        str(tmp_path / "run"),
        cwd=tmp_path,
    )
    try:
        terminal.expect("play> ")
        terminal.send("nosuch")
        terminal.expect("no tool or command 'nosuch'")
        # an object pasted over two lines is read whole
        terminal.send(f'{tool} {{"from_account": "{fields["from_account"]}",')
        terminal.expect("... ")
        terminal.send(f'"to_account": "{fields["to_account"]}", "amount": "{fields["amount"]}"}}')
        terminal.expect("#1 transfer  ok")
        terminal.send(answer)
        terminal.expect("Was the task fair")
        terminal.send("maybe")
        terminal.send("n")
        terminal.expect("What is wrong with it")
        terminal.send("the prompt does not say which currency")
        seen = terminal.expect("validation v-")
        assert terminal.finish() == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
    assert "grade: " in seen and "debt paid once" in seen
    (line,) = read_validations(packages.validation_file("playtoy"), "toy")
    assert (
        line.player == "ada" and line.player_kind == "human" and line.defect == "the prompt does not say which currency"
    )
    history = (tmp_path / "toolgym" / "play-history").read_text()
    assert "nosuch" in history and "submit_answer" in history
    packages.validation_file("playtoy").unlink()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--task", "no_such_task"], "has no task template 'no_such_task'"),
        (["--seed", "1"], "--task is required"),
        (["--task", "pay_back", "list_accounts"], "needs --session FILE"),
        (["--task", "pay_back", "--validate"], "--validate needs --player NAME"),
        (["--task", "pay_back", "--validate", "--player", "x"], "needs --player-kind human|agent"),
        (
            ["--task", "pay_back", "--validate", "--player", "x", "--player-kind", "agent"],
            "needs --fair or --defect TEXT",
        ),
        (["--task", "pay_back", "--player", "x"], "add --validate"),
        (
            ["--task", "pay_back", "--validate", "--player", "a\tb", "--player-kind", "agent", "--fair"],
            "player: String should match pattern",
        ),
    ],
)
def test_bad_command_lines_are_one_line_before_anything_is_played(
    in_process, tmp_path: Path, argv: list[str], message: str
) -> None:
    code, out, err = in_process("play", TOY, *argv, stdin="list_accounts\n")
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "runs").exists()


def test_a_seed_that_is_no_seed_is_argparses_error(in_process) -> None:
    code, out, err = in_process("play", TOY, "--task", "pay_back", "--seed", "-1", stdin="list_accounts\n")
    assert code == 2 and out == "" and err.splitlines()[-1].startswith("toolgym play: error: argument --seed: must be an integer")


def test_a_malformed_validation_file_refuses_validate_before_playing(
    packages: PlayPackages, in_process, tmp_path: Path
) -> None:
    file = packages.validation_file("playtoy")
    file.write_text('{"schema_version": 1, "type": "validation"}\n')
    try:
        code, out, err = in_process(
            "play",
            TOY,
            "--task",
            "pay_back",
            "--validate",
            "--player",
            "x",
            "--player-kind",
            "human",
            "--fair",
            stdin="list_accounts\n",
        )
    finally:
        file.unlink()
    assert code == 2 and out == ""
    assert f"{file} line 1: id: Field required" in err and err.count("\n") == 1
    assert not (tmp_path / "runs").exists()


def test_an_existing_run_in_out_is_refused_before_playing(in_process, tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, _, err = in_process("play", TOY, "--task", "pay_back", "--out", str(out), stdin="quit\n")
    assert code == 0, err
    code, printed, err = in_process("play", TOY, "--task", "pay_back", "--out", str(out), stdin="quit\n")
    assert code == 2 and "already holds a run" in err and printed == ""
    code, printed, err = in_process(
        "play", TOY, "--task", "pay_back", "--seed", "2", "--out", str(out), "--overwrite", stdin=""
    )
    assert code == 0, err  # the end of input ends the episode too
    assert "end of input" in strip_ansi(printed)
    (line,) = read_results(out / "results.jsonl").lines
    assert line.seed == 2 and line.stop_reason == "quit"
