"""Plots of a finished study, as PNG (matplotlib) and one self-contained HTML page (plotly).

Optimization history, parameter importance (fANOVA), parallel coordinates and slices, and the
Pareto front in multi-objective mode. A plot Optuna cannot draw yet (e.g. importance from fewer
than two complete trials) is left out and named in the returned notes.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import optuna
from optuna.trial import FrozenTrial, TrialState

if TYPE_CHECKING:
    from tuner.study import Study

PLOTS_DIR = "plots"
HTML_NAME = "plots.html"


def _ops(trial: FrozenTrial) -> float:
    return float(trial.user_attrs.get("metrics", {}).get("ops_per_sec") or 0.0)


def _specs(study: Study) -> list[tuple[str, str, Callable[[Any], Any], dict[str, Any]]]:
    """(file stem, title, plotting function of a module, keyword arguments) for each plot."""
    multi = len(study.score.directions) > 1
    target = {"target": _ops, "target_name": "ops/s"} if multi else {"target_name": "ops/s"}
    importance = optuna.importance.FanovaImportanceEvaluator(seed=study.config.seed or 0)
    specs = [
        ("optimization_history", "Optimization history", lambda m: m.plot_optimization_history, target),
        ("param_importances", "Parameter importance (fANOVA, ops/s)", lambda m: m.plot_param_importances,
         {**target, "evaluator": importance}),
        ("parallel_coordinate", "Parallel coordinates", lambda m: m.plot_parallel_coordinate, target),
        ("slice", "Slices: ops/s against each parameter", lambda m: m.plot_slice, target),
    ]
    if multi:
        names = list(study.score.labels)
        specs.append(("pareto_front", "Pareto front", lambda m: m.plot_pareto_front, {"target_names": names}))
    return specs


def write_plots(study: Study) -> tuple[Path, list[str]]:
    """Write ``OUT/plots/*.png`` and ``OUT/plots/plots.html``; return the directory and notes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from optuna.visualization import matplotlib as mpl_plots
    import optuna.visualization as plotly_plots

    dest = study.out / PLOTS_DIR
    dest.mkdir(parents=True, exist_ok=True)
    complete = study.optuna_study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    notes: list[str] = []
    sections: list[str] = []
    if not complete:
        return dest, ["no complete trial: nothing to plot"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna's ExperimentalWarning for its matplotlib backend
        for stem, title, pick, kwargs in _specs(study):
            try:
                ax = pick(mpl_plots)(study.optuna_study, **kwargs)
                figure = (ax.flat[0] if hasattr(ax, "flat") else ax).figure
                figure.set_size_inches(max(figure.get_size_inches()[0], 9), max(figure.get_size_inches()[1], 5))
                figure.suptitle(f"{study.name}: {title}")
                figure.savefig(dest / f"{stem}.png", dpi=100, bbox_inches="tight")
                plt.close(figure)
                fig = pick(plotly_plots)(study.optuna_study, **kwargs)
                fig.update_layout(title=f"{study.name}: {title}")
                sections.append(fig.to_html(full_html=False, include_plotlyjs=not sections))
            except (ValueError, RuntimeError, ZeroDivisionError) as exc:
                plt.close("all")
                notes.append(f"{stem}: not drawn ({exc})")
    page = "<!doctype html><html><head><meta charset='utf-8'><title>{}</title></head><body>{}</body></html>"
    _write_atomic(dest / HTML_NAME, page.format(study.name, "\n".join(sections)))
    return dest, notes


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
