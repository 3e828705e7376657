"""``toolgym play``: a person (or a program) plays one task instance by hand, sees its grade, and says if it is fair.

- :mod:`clients.play.game` — the instance's episode, a real MCP client on it, and the run folder it leaves;
- :mod:`clients.play.lines` — what the player types, parsed and checked before it reaches the world;
- :mod:`clients.play.schema_text` — a tool's input schema in words (``help TOOL``);
- :mod:`clients.play.output` — text for a person, JSON lines for a program;
- :mod:`clients.play.session` — session files: one command per process, replayed and verified;
- :mod:`clients.play.driver` — the loop, the session step, and how an episode ends (grade, run, validation).

Validation files, which plays feed, are :mod:`clients.validation`.
"""
