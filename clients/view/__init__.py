"""``toolgym view``: self-contained HTML reports of runs, comparisons of runs and single records.

A report is one HTML file with everything inline (styles, script, data): no server, no network, no CDN,
so it can be mailed, attached to a ticket or opened offline. Its data is one escaped JSON block that the
page's own script renders on demand (episode details only when an episode is opened). ``toolgym show``
prints one episode in the terminal instead (:mod:`clients.view.terminal`).
"""

from __future__ import annotations

from clients.view.report import (
    Report,
    build_report,
    compare_report,
    default_out,
    is_record_file,
    record_report,
    run_report,
)

__all__ = ["Report", "build_report", "run_report", "compare_report", "record_report", "is_record_file", "default_out"]
