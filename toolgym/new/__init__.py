"""``toolgym new``: an environment generated from a database and a declarative spec (rules as data).

- :mod:`toolgym.new.introspect` reads a SQLite file or a folder of CSV tables;
- :mod:`toolgym.new.spec` is the spec a person edits (entities, columns shown, actions, rules) and its default;
- :mod:`toolgym.new.rules` evaluates the spec's rules (``order.status in [delivered]``, ``amount <= order.total``);
- :mod:`toolgym.new.runtime` builds the :class:`~servers.environment.Environment` (fixture, tools, policy) from a
  generated package's folder; :mod:`toolgym.new.templates` derives its task templates;
- :mod:`toolgym.new.build` writes the package and proves its templates with ``toolgym check``.
"""

from toolgym.new.errors import NewError

__all__ = ["NewError"]
