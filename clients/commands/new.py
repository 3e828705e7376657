"""``toolgym new NAME --from SOURCE``: generate an environment from a database, then keep the templates that pass the check."""

from __future__ import annotations

import argparse
import sqlite3
import sys

from clients.flags import integer
from toolgym.new.build import new_environment

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run"]

NAME = "new"
HELP = "generate an environment package from a SQLite file or a folder of CSV/JSON tables (tools, policy, task templates), proved by the check"
DESCRIPTION = (
    "Reads SOURCE (a SQLite file or a folder of CSV/JSON tables: tables, keys, foreign keys, money, dates, statuses), writes an "
    "installable environment package to --out (default ./NAME): the data, spec.json (entities, columns shown, actions and "
    "their rules; edit it and run again), the policy rendered from it, and task templates (look-ups, joins, aggregates, "
    "actions with a refusal twin per rule, multi-step requests). Then runs `toolgym check` on every template and keeps only "
    "those that pass on every seed, listing what was dropped and why; when none is kept it says why and exits 2. Run again without --from to regenerate from an edited spec.json; "
    "pyproject.toml, spec.json and tasks.py are never overwritten."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``new NAME [--from SOURCE] [--out DIR] [--spec FILE] [--sample N] [--scrub COLUMN ...] [--seeds N] [--jobs N] [--no-check]
    [--llm-base-url URL [--llm-model M] [--llm-api-key-env VAR]]``."""
    parser.add_argument("name", metavar="NAME", help="the environment's name: lower-case letters, digits and '-', starting "
                        "with a letter (no '_': the package is NAME with '-' as '_' plus '_env')")
    parser.add_argument("--from", dest="source", metavar="SOURCE", help="SQLite file, or folder of CSV/JSON tables (omit to regenerate)")
    parser.add_argument("--out", metavar="DIR", help="project folder to write (default ./NAME)")
    parser.add_argument("--spec", metavar="FILE", help="use this spec file (JSON) instead of the one written from the database")
    parser.add_argument("--sample", type=integer(1, 10_000_000), metavar="N", help="keep a connected subset: N rows per top-level table")
    parser.add_argument("--scrub", nargs="+", default=[], metavar="COLUMN", help="replace these columns' values (COLUMN or TABLE.COLUMN) with generated ones")
    parser.add_argument("--seeds", type=integer(1, 1000), default=10, metavar="N", help="seeds the check plays per template (default 10)")
    parser.add_argument("--jobs", type=integer(1, 1024), default=1, metavar="N",
                        help="run the check in N processes (default 1; one per core is fastest)")
    parser.add_argument("--no-check", action="store_true", help="write the package without checking its templates")
    parser.add_argument("--no-attacks", action="store_true", help="check oracles, no-ops and negatives only (faster)")
    parser.add_argument("--llm-base-url", metavar="URL", help="with this OpenAI-compatible endpoint (e.g. http://localhost:8000/v1): "
                        "propose further workflows from the schema and the policy, kept only when the check proves them "
                        "(proposals.json), and reword each template's prompt, kept only when validated and proved to change "
                        "only the prompt (wordings.json says why not)")
    parser.add_argument("--llm-model", metavar="MODEL", default="gpt-4o-mini", help="the model to ask (default gpt-4o-mini)")
    parser.add_argument("--llm-api-key-env", metavar="VAR", default="OPENAI_API_KEY",
                        help="environment variable holding the endpoint's API key (default OPENAI_API_KEY; never written to disk)")
    parser.add_argument("--llm-timeout", type=integer(1, 600), default=30, metavar="S", help="seconds per request (default 30)")


def run(args: argparse.Namespace) -> int:
    reword = None
    if args.llm_base_url:
        from toolgym.new.reword import RewordConfig

        if not args.llm_base_url.startswith(("http://", "https://")):
            print(f"toolgym new: --llm-base-url {args.llm_base_url!r}: give an http(s) URL, e.g. http://localhost:8000/v1", file=sys.stderr)
            return 2

        reword = RewordConfig(base_url=args.llm_base_url, model=args.llm_model, api_key_env=args.llm_api_key_env or None,
                              timeout=float(args.llm_timeout))
    try:
        report = new_environment(args.name, source=args.source, out=args.out, spec_file=args.spec, sample=args.sample,
                                 scrub=args.scrub, seeds=args.seeds, check=not args.no_check, attacks=not args.no_attacks,
                                 reword=reword, jobs=args.jobs, progress=lambda msg: print(f"toolgym new: {msg}", flush=True))
    except sqlite3.DatabaseError as exc:  # damage in the source found late: one line, like every bad source
        print(f"toolgym new: error: the source database cannot be read ({exc}); repair it first (sqlite3 SOURCE .recover)",
              file=sys.stderr)
        return 2
    print(report.summary())
    print(f"next: pip install -e {report.project}   then   toolgym check {args.name} --seeds 20   and   toolgym run {args.name} --agent oracle")
    print(f"  (or without installing: cd {report.project} && toolgym check {report.package}:environment)")
    return 0  # nothing kept is a NewError: one line, exit 2 (toolgym.new.build.nothing_kept)
