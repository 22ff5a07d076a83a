"""What a finished study writes, from its snapshot: summary.json, OPTIONS.ini and the comparison
(:mod:`._report`), the explanation (:mod:`._explain`), plots (:mod:`._plots`), and export/verify of the
best configuration (:mod:`._export`). Outputs never import the engine. Their modules are private; what
the apps use is here."""

from tuner.outputs._answer import answer, beyond_guard
from tuner.outputs._export import FORMATS, ExportError, apply, load_best, render, verify
from tuner.outputs._plots import write_plots
from tuner.outputs._report import closing_table, write_outputs

__all__ = ["FORMATS", "ExportError", "answer", "apply", "beyond_guard", "closing_table",
           "load_best", "render", "verify", "write_outputs", "write_plots"]
