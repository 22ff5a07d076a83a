"""Plots of a finished study, as PNG (matplotlib) and one self-contained HTML page (plotly).

Optimization history, parameter importance (fANOVA), parallel coordinates and slices, and the
Pareto front in multi-objective mode. A plot Optuna cannot draw yet (e.g. importance from fewer
than two complete trials) is left out and named in the returned notes.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import TrialState

from tuner.model import StudySnapshot
from tuner.outputs._optuna_view import as_optuna
from tuner.outputs._report import write_atomic
from tuner.ranking import primary

PLOTS_DIR = "plots"
HTML_NAME = "plots.html"
CURVE = "slo_curve"  # --slo: the SLO's metric against the offered rate, per configuration


def _specs(snapshot: StudySnapshot) -> list[tuple[str, str, Callable[[Any], Any], dict[str, Any]]]:
    """(file stem, title, plotting function of a module, keyword arguments) for each plot."""
    multi = len(snapshot.directions) > 1
    name = snapshot.score.labels[0]
    target = {"target": primary, "target_name": name} if multi else {"target_name": name}
    importance = optuna.importance.FanovaImportanceEvaluator(seed=snapshot.config.search.seed or 0)
    specs: list[tuple[str, str, Callable[[Any], Any], dict[str, Any]]] = [
        ("optimization_history", "Optimization history", lambda m: m.plot_optimization_history, target),
        ("param_importances", f"Parameter importance (fANOVA, {name})", lambda m: m.plot_param_importances,
         {**target, "evaluator": importance}),
        ("parallel_coordinate", "Parallel coordinates", lambda m: m.plot_parallel_coordinate, target),
        ("slice", f"Slices: {name} against each parameter", lambda m: m.plot_slice, target),
    ]
    if multi:
        names = list(snapshot.score.labels)
        specs.append(("pareto_front", "Pareto front", lambda m: m.plot_pareto_front, {"target_names": names}))
    return specs


def write_plots(snapshot: StudySnapshot) -> tuple[Path, list[str]]:
    """Write ``OUT/plots/*.png`` and ``OUT/plots/plots.html``; return the directory and notes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import optuna.visualization as plotly_plots
    from optuna.visualization import matplotlib as mpl_plots

    dest = snapshot.out / PLOTS_DIR
    dest.mkdir(parents=True, exist_ok=True)
    complete = [t for t in snapshot.trials if t.state == TrialState.COMPLETE]
    notes: list[str] = []
    sections: list[str] = []
    if not complete:
        return dest, ["no complete trial: nothing to plot"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna's ExperimentalWarning for its matplotlib backend
        study = as_optuna(snapshot)
        for stem, title, pick, kwargs in _specs(snapshot):
            try:
                ax = pick(mpl_plots)(study, **kwargs)
                figure = (ax.flat[0] if hasattr(ax, "flat") else ax).figure
                figure.set_size_inches(max(figure.get_size_inches()[0], 9), max(figure.get_size_inches()[1], 5))
                figure.suptitle(f"{snapshot.name}: {title}")
                figure.savefig(dest / f"{stem}.png", dpi=100, bbox_inches="tight")
                plt.close(figure)
                fig = pick(plotly_plots)(study, **kwargs)
                fig.update_layout(title=f"{snapshot.name}: {title}")
                sections.append(fig.to_html(full_html=False, include_plotlyjs=not sections))
            except (ValueError, RuntimeError, ZeroDivisionError) as exc:
                plt.close("all")
                notes.append(f"{stem}: not drawn ({exc})")
    if snapshot.capacity is not None:
        sections.append(_capacity_curve(snapshot, dest, plt, include_plotlyjs=not sections))
    page = "<!doctype html><html><head><meta charset='utf-8'><title>{}</title></head><body>{}</body></html>"
    write_atomic(dest / HTML_NAME, page.format(snapshot.name, "\n".join(sections)))
    return dest, notes


def _capacity_curve(snapshot: StudySnapshot, dest: Path, plt: Any, include_plotlyjs: bool) -> str:
    """``CURVE.png`` and its plotly section: each configuration's SLO metric at every offered rate its
    capacity search tried (filled where the rate held the SLO), one line per round of --capacity-rounds in the
    configuration's colour (rounds try other rates: joined across rounds, one rate's runs would read as a jump),
    the SLO's bound as a line."""
    import plotly.graph_objects as go  # type: ignore[import-untyped]
    from matplotlib.colors import to_hex

    cap = snapshot.capacity
    assert cap is not None
    rounds = sorted({p.round for c in cap.configurations for p in c.probes})
    title = f"{snapshot.name}: {cap.metric} against the offered rate ({cap.slo}" + (
        f", a line per round of {len(rounds)})" if len(rounds) > 1 else ")")
    figure, ax = plt.subplots(figsize=(9, 5))
    fig = go.Figure()
    for c in cap.configurations:
        color: str | None = None
        for r in rounds:
            probes = sorted((p for p in c.probes if p.value is not None and p.round == r), key=lambda p: p.offered)
            if not probes:
                continue
            xs, ys = [p.offered for p in probes], [p.value for p in probes]
            line = ax.plot(xs, ys, "-", color=color, label=None if color else c.name)[0]
            color = color or to_hex(line.get_color())
            ax.scatter(xs, ys, c=[color if p.held else "white" for p in probes], edgecolors=color, zorder=3)
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", legendgroup=c.name, line={"color": color},
                                     name=c.name + (f", round {r}" if len(rounds) > 1 else ""),
                                     text=["held" if p.held else "did not hold" for p in probes]))
    ax.axhline(cap.bound, color="grey", linestyle="--", label=cap.slo)
    fig.add_hline(y=cap.bound, line_dash="dash", annotation_text=cap.slo)
    ax.set(xscale="linear", yscale="log", xlabel="offered ops/s", ylabel=cap.metric, title=title)
    ax.legend()
    figure.savefig(dest / f"{CURVE}.png", dpi=100, bbox_inches="tight")
    plt.close(figure)
    fig.update_layout(title=title, xaxis_title="offered ops/s", yaxis_title=cap.metric, yaxis_type="log")
    return str(fig.to_html(full_html=False, include_plotlyjs=include_plotlyjs))
