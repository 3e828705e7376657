"""toolgym's entry points into other frameworks' APIs (imports nothing by itself).

``toolgym.gym`` registers every environment with Gymnasium (install the ``gym`` extra). verifiers and
OpenEnv adapters are separate packages under ``integrations/`` (their pins conflict with toolgym's own):
they talk to a running toolgym server over HTTP.
"""

__all__: list[str] = []
