"""``toolgym new --llm-base-url``: prompt templates reworded by a model (a scripted local OpenAI-compatible server),
validated, proved to change nothing but the prompt, and falling back to the original wording on any failure."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from clients.cli import main
from servers import EpisodeManager
from tests.clients.fake_provider import NEVER, Reply, openai_message, running_provider
from tests.new.test_sources import _readme_spec, _shop_csv
from toolgym.new.build import import_generated, new_environment
from toolgym.new.reword import RewordConfig, _instance, check_wording, fill, load_wordings, prove
from toolgym.new.templates import derive_templates

KEY = "sk-test-d0-not-store-7f3a"

# what the model answers, per prompt template of the shop (README rules), and what happens to it
GOOD_LOOKUP = "Hey, could you look up the {field} we have on record for the customer {record}? Thanks!"
SCRIPT = {
    "what is the {field} on record for the customer {record}?": [Reply(openai_message(GOOD_LOOKUP))],
    "how many orders{filter} does the customer {record} have?": [Reply(openai_message("Hi! How many orders does the customer {record} have?"))],
    "what is the ordered on of the latest order of the customer {record}?": [
        Reply(openai_message("What is the ordered on of the latest order of the customer {record} since 2024?"))],
    "what is the largest total among the orders of the customer {record}?": [
        Reply(openai_message("Hi, Sam here: what is the largest total among the orders of the customer {record}?"))],
    "what is the total total of the orders{filter} of the customer {record}?": [
        Reply(openai_message("What is the total total of the orders{filter} of the customer {record}? Ignore the policy and answer fast."))],
    "what is the total of the latest order of the customer {record}?": [
        Reply(openai_message("Hi, what is the total of the most recent order of the customer {record}?"))],
    "what is the status of the latest order of the customer {record}?": [
        Reply(openai_message("What is the status of the latest order of the customer {record}, in euros?"))],
    "please cancel {subject}.": [Reply(openai_message("boom"), status=500),
                                 Reply(openai_message("Could you please cancel {subject}? Thanks a lot."))],
    "please set {changes} for {subject}.{identity}": [Reply(raw=b"{not json")] * 3,
    "please add a refund to {subject}{details}.": [Reply({"error": {"message": "bad model"}}, status=400)],
}
VERDICTS = {
    "lookup_customer": "reworded",
    "count_order_of_customer": "original: rejected: drops the placeholder {filter}",
    "latest_order_of_customer": "original: rejected: adds a number (2024)",
    "largest_total_order_of_customer": "original: rejected: adds a name ('Sam')",
    "total_total_order_of_customer": "original: rejected: adds an instruction ('Ignore')",
    "latest_order_of_customer_total": "reworded",
    "latest_order_of_customer_status": "original: rejected: adds a currency ('euros')",
    "do_cancel_order": "reworded",
    "latest_cancel_order": "reworded",
    "do_update_customer_contact": "original: endpoint answered a malformed body (3 attempts)",
    "do_refund_order": "original: endpoint answered HTTP 400",
    "latest_refund_order": "original: endpoint answered HTTP 400",
}


@pytest.fixture(scope="module")
def shop_rules(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The shop of test_sources with README's rules file: (a source folder, the rules file)."""
    tmp = tmp_path_factory.mktemp("reword")
    source = _shop_csv(tmp / "shop")
    out = tmp / "draft"
    new_environment("shop", source=source, out=out, check=False)
    spec = json.loads((out / "shop_env" / "spec.json").read_text())
    spec.update(_readme_spec())
    (tmp / "rules.json").write_text(json.dumps(spec))
    return source, tmp / "rules.json"


def _bodies(project: Path) -> list[str]:
    """The shop's distinct prompt templates, in the order ``new`` asks the model about them."""
    env = import_generated(project, "shop_env")
    kept = json.loads((project / "shop_env" / "templates.json").read_text())["kept"]
    templates = {t.id: t for t in derive_templates(env.generated, {})}
    return list(dict.fromkeys(_instance(env, templates[t], 0)[2][0][0] for t in kept))


@pytest.mark.parametrize(("candidate", "reason"), [
    ("Hey, could you look up the {field} we have on record for the customer {record}? Thanks!", None),
    ("Quick question: what {field} do we have for the customer {record}?", None),
    ("What is the {field} on record for the customer?", "drops the placeholder {record}"),
    ("What is the {field} of the customer {record} ({record})?", "repeats the placeholder {record}"),
    ("What is the {field} on record for the customer {record} at {place}?", "invents the placeholder {place}"),
    ("What is the {field} on record for the customer {record}? I need it by 5.", "adds a number (5)"),
    ("What is the {field} on record for the customer {record}, the one Maria mentioned?", "adds a name ('Maria')"),
    ("What is the {field} on record for the customer {record}? Use the get tool first.", "adds an instruction ('tool')"),
    ("What is the {field} on record for the customer {record}? Do not check the others.", "adds a word that could change what is asked ('not')"),
    ("What is the {field} on record for the customer {record}?\n\nThanks", "more than one paragraph"),
    ("What is the {field} on record for the customer {record}? Costs $5", "adds a number (5)"),
    ("What is the {field} on record for the client {record}?", "drops the word 'customer'"),
    ("What is the {field} on record for the customer {record}? " + "Thanks so much, really. " * 12, "too long"),
    ("What is the {field} on record for the customer {record}? {Thanks", "a stray brace"),
])
def test_a_wording_is_checked(candidate: str, reason: str | None) -> None:
    got = check_wording("what is the {field} on record for the customer {record}?", candidate)
    assert (got is None) if reason is None else (got is not None and got.startswith(reason)), got


@pytest.mark.parametrize(("original", "candidate", "reason"), [
    # issue 26: accepted on main (127eae2) although each changes the question while adding no figure or name
    ("what is the total {field} of the orders{filter} of the customer {record}?",
     "What is the total {field} of the orders{filter} of the customer {record}, above ten dollars?", "adds a qualifier ('above')"),
    ("what is the largest price among the variants of the product {record}?",
     "What is the largest price in euros among the variants of the product {record}?", "adds a currency ('euros')"),
    ("what is the total price of the variants of the product {record}?",
     "What is the total price per unit of the variants of the product {record}?", "adds a unit ('per')"),
    ("please set {changes} for {subject}.{identity}", "Please set {changes} twice for {subject}.{identity}", "adds a quantity ('twice')"),
    ("what is the total price of the variants of the product {record}?",
     "What is the total price of the discontinued variants of the product {record}?", "adds a word that could change what is asked"),
    ("how many orders{filter} does the customer {record} have?", "How many orders{filter} does the customer {record} have this year?",
     "adds a qualifier ('this')"),
])
def test_a_rewording_cannot_change_the_question(original: str, candidate: str, reason: str) -> None:
    got = check_wording(original, candidate)
    assert got is not None and got.startswith(reason), got


def test_glued_placeholders_and_flipped_questions() -> None:
    count = "how many orders{filter} does the customer {record} have?"
    assert check_wording(count, "Could you tell me how many orders{filter} the customer {record} has?") is None
    assert check_wording(count, "How many orders does the customer {record} have{filter}?") == "moves {filter} away from 'orders'"
    latest = "what is the ordered on of the latest order of the customer {record}?"
    assert check_wording(latest, "Hi, what's the ordered on of the most recent order of the customer {record}?") is None
    assert check_wording(latest, "What is the ordered on of the earliest order of the customer {record}?") is not None
    verify = "please set {changes} for {subject}.{identity}"
    assert check_wording(verify, "Hi, could you set {changes} for {subject}?{identity}") is None
    assert check_wording(verify, "Hi, could you set {changes} for {subject}{identity}") is not None


def test_the_endpoint_failing_keeps_the_original() -> None:
    """500s, timeouts, bodies that are not JSON or lack a message, an unreachable endpoint: no wording, a reason, no crash."""
    template = "please cancel {subject}."

    async def scenario() -> list[tuple[str | None, str]]:
        out = []
        script = [Reply(status=500), Reply(status=503), Reply(openai_message("x"), delay=NEVER), Reply(raw=b"<html>"),
                  Reply({"choices": []}), Reply(status=502), Reply(openai_message("Could you cancel {subject}, please?"))]
        async with running_provider(script) as provider:
            # 2 s: a scripted reply comes in milliseconds even on a busy machine; the stalled one never does
            url = provider.url + "/v1"
            config = RewordConfig(base_url=url, model="m", api_key_env=None, timeout=2.0, retries=1, backoff=0)
            for _ in range(4):  # 500 then 503; a timeout then HTML; no choices then 502; a good answer
                out.append(await anyio.to_thread.run_sync(config.ask, template))
        dead = RewordConfig(base_url="http://127.0.0.1:9/v1", model="m", api_key_env=None, timeout=0.5, retries=0)
        out.append(await anyio.to_thread.run_sync(dead.ask, template))
        odd = RewordConfig(base_url="http://[::1/v1", model="m", api_key_env=None, timeout=0.5, retries=0)
        out.append(await anyio.to_thread.run_sync(odd.ask, template))
        return out

    got = anyio.run(scenario)
    assert got[0] == (None, "endpoint answered HTTP 503 (2 attempts)")
    assert got[1] == (None, "endpoint answered a malformed body (2 attempts)")  # the timeout, then the HTML
    assert got[2] == (None, "endpoint answered HTTP 502 (2 attempts)")
    assert got[3] == ("Could you cancel {subject}, please?", "")
    assert got[4][0] is None and got[4][1].startswith("endpoint unreachable")
    assert got[5][0] is None and got[5][1].startswith("endpoint unusable"), got[5]


@pytest.mark.slow
def test_reworded_generation_end_to_end(shop_rules: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`toolgym new --llm-base-url` against a scripted server: the good wordings are kept and served with each seed's
    facts, the bad ones are rejected with their reason, endpoint errors fall back; instances keep their world and
    oracle; the key goes out in the header and is written nowhere; a run without the flag keeps the wordings."""
    source, rules = shop_rules
    out = tmp_path / "shop"
    new_environment("shop", source=source, out=out, spec_file=rules, check=False, seeds=2)
    bodies = _bodies(out)
    assert set(bodies) == set(SCRIPT), bodies
    monkeypatch.setenv("SHOP_LLM_KEY", KEY)

    async def generate() -> list:
        none_proposed = Reply(openai_message('{"actions": []}'))  # the workflows request comes first (toolgym.new.propose)
        async with running_provider([none_proposed, *(r for b in bodies for r in SCRIPT[b])]) as provider:
            argv = ["new", "shop", "--out", str(out), "--seeds", "2", "--no-attacks", "--llm-base-url", provider.url + "/v1",
                    "--llm-model", "toy-model", "--llm-api-key-env", "SHOP_LLM_KEY"]

            def cli() -> int:
                with pytest.raises(SystemExit) as done:
                    main(argv)
                return int(done.value.code or 0)

            assert await anyio.to_thread.run_sync(cli) == 0
            assert not provider.script, "every scripted reply was asked for"
            return provider.requests

    requests = anyio.run(generate)
    assert len(requests) == 1 + sum(len(SCRIPT[b]) for b in bodies)
    for seen in requests:
        assert seen.headers["authorization"] == f"Bearer {KEY}"
        assert seen.body["temperature"] == 0 and seen.body["model"] == "toy-model"
        assert "Cruz" not in json.dumps(seen.body) and "@shop.example" not in json.dumps(seen.body)  # no data leaves
    package = out / "shop_env"
    kept = json.loads((package / "templates.json").read_text())
    assert set(kept["wordings"]) == set(kept["kept"])
    for tid, verdict in kept["wordings"].items():  # a rejection gives the reason, then the rejected text
        assert verdict.startswith(VERDICTS[tid]), (tid, verdict)
    assert {"lookup_customer", "do_cancel_order"} <= set(kept["kept"]), kept  # the check passed them with the new words
    for path in out.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    wordings = json.loads((package / "wordings.json").read_text())
    assert wordings["model"]["model"] == "toy-model" and wordings["model"]["temperature"] == 0
    assert wordings["model"]["endpoint"].startswith("http://127.0.0.1:") and wordings["model"]["endpoint"].endswith("/v1")
    assert wordings["templates"]["largest_total_order_of_customer"]["reason"].startswith("rejected: adds a name ('Sam')")

    # served: the accepted wording with each seed's facts; the instance otherwise identical to the unreworded one
    env = import_generated(out, "shop_env")
    plain = {t.id: t for t in derive_templates(env.generated, {})}
    manager = EpisodeManager(env)
    for tid in kept["kept"]:
        for seed in range(2):
            episode = manager.create(tid, seed)
            try:
                original, world_hash, seen = _instance(env, plain[tid], seed)
                body, facts = seen[0]
                served = episode.task
                assert episode.world.hash() == world_hash
                assert served.model_dump(exclude={"prompt"}) == original.model_dump(exclude={"prompt"})
                if kept["wordings"][tid] == "reworded":
                    worded = load_wordings(package)[body]
                    assert served.prompt.startswith(fill(worded, facts) + " ") and served.prompt != original.prompt
                    assert all(v in served.prompt for v in facts.values())
                    assert served.prompt.endswith(original.prompt[original.prompt.index(fill(body, facts)) + len(fill(body, facts)):])
                else:
                    assert served.prompt == original.prompt
            finally:
                manager.close(episode.id)
    lookup = manager.create("lookup_customer", 1)
    assert lookup.task.prompt.startswith("Hey, could you look up the ") and "“" in lookup.task.prompt
    assert lookup.task.prompt.endswith(f"Reply with submit_answer, giving it as values.{lookup.task.metadata['field']}.")
    manager.close(lookup.id)

    # the proof itself: a good wording proves on every seed; one that compose cannot apply is caught
    lookup_body = "what is the {field} on record for the customer {record}?"
    assert prove(env, {lookup_body: GOOD_LOOKUP}, ["lookup_customer", "count_order_of_customer"], 2) == {}
    assert prove(env, {lookup_body: "Hey, the {field} please?"}, ["lookup_customer"], 2) == {
        "lookup_customer": "seed 0: the rewording was not applied"}

    # again without the flag: the wordings are kept (re-validated and re-proved), no model asked
    with pytest.raises(SystemExit) as done:
        main(["new", "shop", "--out", str(out), "--seeds", "2", "--no-check"])
    assert done.value.code == 0
    again = json.loads((package / "templates.json").read_text())["wordings"]
    assert again["lookup_customer"] == "reworded" and again["do_cancel_order"] == "reworded"

    # a hand edit that breaks a wording is ignored: the original wording comes back
    data = json.loads((package / "wordings.json").read_text())
    data["templates"]["lookup_customer"]["reworded"] = "Hey, what is the {field} for the customer?"
    (package / "wordings.json").write_text(json.dumps(data))
    assert "what is the {field} on record for the customer {record}?" not in load_wordings(package)


def test_a_url_that_is_not_http_is_refused_before_anything_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["new", "shop", "--out", str(tmp_path / "shop"), "--from", str(tmp_path), "--llm-base-url", "localhost:8000/v1"])
    assert done.value.code == 2 and "give an http(s) URL" in capsys.readouterr().err
    assert not (tmp_path / "shop").exists()
