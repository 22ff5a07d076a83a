"""Why the best configuration is faster: a plain-language line per tuned option.

After a re-validation with ablation, each line leads with the **measured** effect: the best against
itself with that one option put back to the reference's value, in the same paired rounds
(tuner.engine._revalidation): "matters", "no measurable effect", or "costs throughput on its own".
Each option is also set against the value RocksDB actually used in the ``rocksdb-default`` baseline
(read back from that run's OPTIONS file, not assumed), and described across the study's trials: the
rank correlation of a numeric option with ops/s, or the median ops/s per choice, and Optuna's
fANOVA importance. Those are correlations over what the sampler happened to try, not causes, and
are labelled so.
"""

from __future__ import annotations

import math
import statistics
import warnings
from typing import Any

import optuna
from optuna.trial import TrialState

from search_spaces.parameters import CategoricalParam
from tuner import options_file
from tuner.model import DEFAULT_BASELINE, StudySnapshot
from tuner.outputs._optuna_view import as_optuna
from tuner.ranking import ops as _ops

MIN_TRIALS = 5


def importance(snapshot: StudySnapshot) -> dict[str, float]:
    """fANOVA importance of each parameter for ops/s (empty with fewer than MIN_TRIALS complete trials)."""
    complete = [t for t in snapshot.trials if t.state == TrialState.COMPLETE]
    if len(complete) < MIN_TRIALS:
        return {}
    evaluator = optuna.importance.FanovaImportanceEvaluator(seed=snapshot.config.search.seed or 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            found = optuna.importance.get_param_importances(as_optuna(snapshot), evaluator=evaluator, target=_ops)
        except (ValueError, RuntimeError):
            return {}
    return {k: float(v) for k, v in found.items()}


def _default_values(snapshot: StudySnapshot) -> dict[str, str | None]:
    """Each parameter's value in the rocksdb-default baseline's OPTIONS file (None when not there)."""
    path = snapshot.out / "baselines" / DEFAULT_BASELINE / "OPTIONS"
    sections = options_file.parse_options(path.read_text()) if path.is_file() else {}
    return {p.name: options_file.lookup(sections, p.options_key) if sections else None for p in snapshot.space.parameters}


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _spearman(xs: list[float], ys: list[float]) -> float | None:
    from scipy.stats import spearmanr

    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    rho = spearmanr(xs, ys).statistic
    return None if math.isnan(rho) else float(rho)


def _measured(ablation: dict[str, Any] | None, reference: str) -> str | None:
    """The ablation's verdict on one option, in words."""
    if not ablation or ablation.get("ratio") is None or not ablation.get("ci95"):
        return None
    low, high = ablation["ci95"]
    figure = f"{ablation['ratio']:.2f}x, 95 % CI {low:.2f}-{high:.2f}"
    return {"faster": f"matters: the best is {figure} as fast as with {reference}'s value",
            "tie": f"no measurable effect (the best with {reference}'s value instead: {figure})",
            "slower": f"costs throughput on its own: the best is {figure} as fast as with {reference}'s value",
            }.get(ablation["verdict"])


def explain(snapshot: StudySnapshot, best: dict[str, Any]) -> dict[str, Any]:
    """``{"importance": {...}, "options": [{param, best, default, direction, ablation, effect, text}, ...]}``."""
    weights = importance(snapshot)
    defaults = _default_values(snapshot)
    reval = snapshot.revalidation or {}
    ablations = {a["param"]: a for a in reval.get("ablation", [])} if reval.get("best_trial") == best["trial"] else {}
    complete = [t for t in snapshot.trials if t.state == TrialState.COMPLETE]
    rows = []
    for name, value in best["params"].items():
        param = snapshot.space.parameter(name)
        default = defaults.get(name)
        with_it = [t for t in complete if name in t.params]
        row: dict[str, Any] = {"param": name, "best": value, "default": default, "importance": weights.get(name)}
        if isinstance(param, CategoricalParam):
            by_choice = {str(c): [_ops(t) for t in with_it if t.params[name] == c] for c in param.choices}
            row["median_ops_per_sec_by_choice"] = {c: statistics.median(v) for c, v in by_choice.items() if v}
            row["trials_by_choice"] = {c: len(v) for c, v in by_choice.items() if v}
            same = default is not None and str(value).lower() in default.lower()
            row["direction"] = "same as default" if same else "changed"
            effect = ", ".join(f"{c} {m:,.0f} ({row['trials_by_choice'][c]} trials)"
                               for c, m in sorted(row["median_ops_per_sec_by_choice"].items(), key=lambda kv: -kv[1]))
            measured = f"median ops/s by choice: {effect}" if effect else "no complete trial to compare"
        else:
            base = _number(default)
            if base is None:
                row["direction"] = "set (the default has none)" if default == "nullptr" else "set"
            else:
                row["direction"] = "same as default" if base == value else "higher" if value > base else "lower"
            row["spearman_rho"] = _spearman([float(t.params[name]) for t in with_it], [_ops(t) for t in with_it])
            rho = row["spearman_rho"]
            measured = ("no measurable trend" if rho is None or abs(rho) < 0.1 else
                        f"higher values went with {'higher' if rho > 0 else 'lower'} ops/s (Spearman rho {rho:+.2f} "
                        f"over {len(with_it)} trials)")
        weight = f"; importance {row['importance']:.2f}" if row["importance"] is not None else ""
        row["ablation"] = ablations.get(name)
        effect = _measured(row["ablation"], reval.get("reference", ""))
        trend = f"across trials (correlation, not cause): {measured}{weight}"
        row["text"] = (f"{name} = {value} (default {default if default is not None else 'n/a'}): {row['direction']}; "
                       + (f"{effect}; {trend}" if effect else trend))
        rows.append(row)
    order = {"faster": 0, "slower": 1, "tie": 2}
    rows.sort(key=lambda r: (order.get((r["ablation"] or {}).get("verdict"), 3),
                             -((r["ablation"] or {}).get("ratio") or 0.0), -(r["importance"] or 0.0)))
    return {"importance": weights, "options": rows}
