"""Why the best configuration is faster: a plain-language line per tuned option.

After a re-validation with ablation, each line leads with the **measured** effect: the best against
itself with that one option put back to the reference's value, in the same paired rounds
(tuner.engine._revalidation): "matters", "no measurable effect", or "costs throughput on its own".
Each option is also set against the value RocksDB actually used in the ``rocksdb-default`` baseline
(read back from that run's OPTIONS file, not assumed, and shown in the option's own terms), and
described across the study's trials: the rank correlation of a numeric option with ops/s, or the
median ops/s per choice, and Optuna's fANOVA importance. Those are correlations over what the
sampler happened to try, not causes, and are labelled so.
"""

from __future__ import annotations

import math
import re
import statistics
import warnings
from typing import Any

import optuna
from optuna.trial import TrialState

from objectives.scores import label
from search_spaces.catalogue import by_flag
from search_spaces.parameters import CategoricalParam, Parameter
from tuner import options_file
from tuner.backends import default_config
from tuner.fmt import fmt_value
from tuner.model import DEFAULT_BASELINE, StudySnapshot
from tuner.outputs._optuna_view import as_optuna
from tuner.ranking import primary
from tuner.summary import Ablation, BestTrial, Revalidation
from tuner.trials import TrialRecord

MIN_TRIALS = 5


def importance(snapshot: StudySnapshot, left_out: set[str]) -> dict[str, float]:
    """fANOVA importance of each parameter but ``left_out`` for the first objective (ops/s, or
    --objective's metric); empty with fewer than MIN_TRIALS complete trials."""
    complete = [t for t in snapshot.trials if t.state == TrialState.COMPLETE]
    if len(complete) < MIN_TRIALS:
        return {}
    evaluator = optuna.importance.FanovaImportanceEvaluator(seed=snapshot.config.search.seed or 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            found = optuna.importance.get_param_importances(as_optuna(snapshot), evaluator=evaluator, target=primary)
        except (ValueError, RuntimeError):
            return {}
    return {k: float(v) for k, v in found.items() if k not in left_out}


def not_applied(snapshot: StudySnapshot) -> set[str]:
    """The searched options some measured DB did not take as asked (tuner.options_file.mismatches):
    what the trials say of them is not what they asked, so they are left out of the importance and the why."""
    return {name for t in snapshot.trials if t.state == TrialState.COMPLETE
            for name in options_file.mismatched(TrialRecord.of(t).options_mismatch or [])}


def _default_values(snapshot: StudySnapshot) -> dict[str, tuple[object | None, str]]:
    """Each parameter's value in the rocksdb-default baseline in its own terms, and in words: read back
    from that run's OPTIONS file (lz4, not kLZ4Compression; 0 bits per key, not nullptr), else the value
    it ran (the block cache's capacity, which RocksDB does not write: tuner.backends.default_config); None
    where the library chose (the default compression level), the file's text names no value of the
    parameter (said as written), or nothing says (a program's own cache)."""
    path = snapshot.out / "baselines" / DEFAULT_BASELINE / "OPTIONS"
    sections = options_file.parse_options(path.read_text()) if path.is_file() else {}
    params = snapshot.space.parameters
    ran = default_config(snapshot.found, snapshot.workload, [p.flag for p in params]).flags()
    values: dict[str, tuple[object | None, str]] = {}
    for p in params:
        text = None if p.options_key in options_file.NOT_SERIALIZED else options_file.lookup(sections, p.options_key)
        if options_file.library_default(p.options_key, text):
            values[p.name] = None, "the library's default level"
            continue
        flag = ran.get(p.flag) if text is None else options_file.decode(p.options_key, text)
        value = p.value_of(flag) if flag is not None else None
        values[p.name] = value, _in_words(p, value) if value is not None else text or "not in its OPTIONS file"
    return values


def _in_words(param: Parameter, value: object) -> str:
    """A default as the why shows it: 0 with what it means where the option's doc says (0: no filter)."""
    info = by_flag(param.flag)
    meaning = re.search(r"\(0: ([^)]+)\)", info.doc) if info is not None and value == 0 else None
    return f"0: {meaning[1]}" if meaning else str(value)


def _spearman(xs: list[float], ys: list[float]) -> float | None:
    from scipy.stats import spearmanr

    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    rho = spearmanr(xs, ys).statistic
    return None if math.isnan(rho) else float(rho)


def _measured(ablation: Ablation | None, reference: str, metric: str) -> str | None:
    """The ablation's verdict on one option, in words (``metric``: the study's, its gain a ratio of it)."""
    if not ablation or ablation.ratio is None or not ablation.ci95:
        return None
    low, high = ablation.ci95
    figure = f"{ablation.ratio:.2f}x, 95 % CI {low:.2f}-{high:.2f}"
    if metric != "ops_per_sec":
        return {"faster": f"matters: the best's {metric} is {figure} better than with {reference}'s value",
                "tie": f"no measurable effect on {metric} (the best with {reference}'s value instead: {figure})",
                "slower": f"costs {metric} on its own: the best's is {figure} as good as with {reference}'s value",
                }.get(str(ablation.verdict))
    return {"faster": f"matters: the best is {figure} as fast as with {reference}'s value",
            "tie": f"no measurable effect (the best with {reference}'s value instead: {figure})",
            "slower": f"costs throughput on its own: the best is {figure} as fast as with {reference}'s value",
            }.get(str(ablation.verdict))


def explain(snapshot: StudySnapshot, best: BestTrial, reval: Revalidation | None) -> dict[str, Any]:
    """``{"importance": {...}, "options": [{param, best, default, direction, ablation, effect, text}, ...]}``."""
    left_out = not_applied(snapshot)
    weights = importance(snapshot, left_out)
    defaults = _default_values(snapshot)
    ablations = {a.param: a for a in reval.ablation} if reval and reval.best_trial == best.trial else {}
    complete = [t for t in snapshot.trials if t.state == TrialState.COMPLETE]
    metric, shown_as, sign = snapshot.score.metric, label(snapshot.score.metric), 1 if snapshot.score.maximize else -1
    rows = []
    for name, value in best.params.items():
        if name in left_out:
            continue
        param = snapshot.space.parameter(name)
        default, shown = defaults[name]
        with_it = [t for t in complete if name in t.params]
        row: dict[str, Any] = {"param": name, "best": value, "default": default, "importance": weights.get(name)}
        if isinstance(param, CategoricalParam):
            by_choice = {str(c): [primary(t) for t in with_it if t.params[name] == c] for c in param.choices}
            medians = row[f"median_{metric}_by_choice"] = {c: statistics.median(v) for c, v in by_choice.items() if v}
            row["trials_by_choice"] = {c: len(v) for c, v in by_choice.items() if v}
            row["direction"] = "same as default" if default == value else "changed"
            listed = ", ".join(f"{c} {fmt_value(m)} ({row['trials_by_choice'][c]} trials)"
                               for c, m in sorted(medians.items(), key=lambda kv: -sign * kv[1]))
            measured = f"median {shown_as} by choice: {listed}" if listed else "no complete trial to compare"
        else:
            if not isinstance(default, (int, float)):
                row["direction"] = "set"
            else:
                row["direction"] = "same as default" if default == value else "higher" if value > default else "lower"
            row["spearman_rho"] = _spearman([float(t.params[name]) for t in with_it], [primary(t) for t in with_it])
            rho = row["spearman_rho"]
            measured = ("no measurable trend" if rho is None or abs(rho) < 0.1 else
                        f"higher values went with {'higher' if rho > 0 else 'lower'} {shown_as} (Spearman rho {rho:+.2f} "
                        f"over {len(with_it)} trials)")
        weight = f"; importance {row['importance']:.2f}" if row["importance"] is not None else ""
        row["ablation"] = ablations.get(name)
        effect = _measured(row["ablation"], (reval.reference if reval else None) or "", metric)
        trend = f"across trials (correlation, not cause): {measured}{weight}"
        row["text"] = (f"{name} = {value} (default {shown}): {row['direction']}; "
                       + (f"{effect}; {trend}" if effect else trend))
        rows.append(row)
    order: dict[str | None, int] = {"faster": 0, "slower": 1, "tie": 2}
    rows.sort(key=lambda r: (order.get(r["ablation"].verdict if r["ablation"] else None, 3),
                             -((r["ablation"].ratio if r["ablation"] else None) or 0.0), -(r["importance"] or 0.0)))
    return {"importance": weights, "options": rows}
