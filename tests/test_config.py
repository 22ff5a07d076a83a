"""TuneConfig in parts: built and replaced by flat field names, read by part or flat, and `tune --help`
grouped by the same parts. No db_bench."""

from __future__ import annotations

import argparse
import copy
from dataclasses import FrozenInstanceError, fields, replace

import pytest

from tuner.cli import build_parser, tune_config
from tuner.engine._plan import Plan
from tuner.model import PARTS, MeasurementConfig, RevalidationConfig, SearchConfig, TuneConfig

# tune --help's group titles, in order, and the part of TuneConfig each stands for
GROUPS = {"measurement": "measurement", "the target": "target", "search": "search",
          "re-validation": "revalidation", "the db_bench backend": "execution", "your program": "measurement",
          "execution": "execution", "tracking and outputs": "tracking"}  # --help's groups, in order, by the part they set
START = "start here"  # tune --help's first group: the flags a study sets first, each a setting of one part
NOT_CONFIG = {"help", "json", "study_file"}  # tune's options that are not settings of the study


def _tune_parser() -> argparse.ArgumentParser:
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["tune"]


def test_flat_fields_land_in_their_parts_and_are_read_there():
    names = [f.name for part in PARTS.values() for f in fields(part)]
    assert len(names) == len(set(names))  # a flat name says which part holds it
    config = TuneConfig(workload="ycsb-a", trials=5, target_data=2**30, revalidate=0, parallel=2, study="s",
                        tags={"who": "test"})
    assert (config.measurement.workload, config.search.trials, config.target.target_data) == ("ycsb-a", 5, 2**30)
    assert (config.revalidation.revalidate, config.execution.parallel, config.tracking.study) == (0, 2, "s")
    assert config.execution.on_ray
    for name, kind in PARTS.items():
        part = getattr(config, name)
        assert isinstance(part, kind)
        assert not any(hasattr(config, f.name) for f in fields(kind))  # read from its part: a typo is an error
    assert copy.deepcopy(config) == config


def test_replace_changes_one_field_of_its_part():
    config = TuneConfig(workload="fillrandom", trials=5, seed=1)
    scaled = replace(config, scale=2.0)
    assert scaled.measurement == replace(config.measurement, scale=2.0)
    assert [getattr(scaled, p) for p in PARTS if p != "measurement"] == \
        [getattr(config, p) for p in PARTS if p != "measurement"]
    assert replace(scaled, scale=None) == config
    given = TuneConfig(search=SearchConfig(trials=7, sampler="tpe"), seed=3)  # a part whole, then a field of it
    assert (given.search.trials, given.search.sampler, given.search.seed) == (7, "tpe", 3)
    assert replace(given, search=SearchConfig()).search == SearchConfig()


def test_unknown_names_and_writes_are_refused():
    with pytest.raises(TypeError, match="unexpected keyword argument 'trails'"):
        TuneConfig(trails=3)
    with pytest.raises(AttributeError, match="no attribute 'trails'"):
        TuneConfig().trails  # noqa: B018
    with pytest.raises(FrozenInstanceError):
        TuneConfig().trials = 3


def test_the_revalidation_plan_reads_its_part():
    part = RevalidationConfig(revalidate=2, revalidate_rounds=4, revalidate_max_rounds=8, interval_target=0.2,
                              ablation=False, confirm_scale=0.5)
    assert Plan.of(part, 7, None) == Plan(k=2, min_rounds=4, max_rounds=8, target=0.2, ablation=False, seed=7,
                                          confirm_scale=0.5)


def test_the_cli_defaults_are_the_api_defaults():
    assert tune_config(build_parser().parse_args(["tune"])) == TuneConfig()


def _other_value(option: argparse.Action) -> str:
    """A value of ``option`` that parses to something other than its default."""
    for text in option.choices or ["5", "6", "0.5,1", "ops=1", "multi", "p99_us<=5"]:
        try:
            value = (option.type if callable(option.type) else str)(text)
        except (argparse.ArgumentTypeError, ValueError):
            continue
        if value not in (option.default, _UNSET.get(option.dest)):
            return str(text)
    raise AssertionError(f"no value for {option.option_strings[0]}")


# What a flag whose parser default is None (decided by another flag) is when not given.
_UNSET = {"backend": MeasurementConfig.backend}


def _changed(option: argparse.Action) -> set[str]:
    """The parts of TuneConfig that ``tune OPTION [VALUE]`` sets away from their defaults."""
    argv = [option.option_strings[0]] + ([] if option.nargs == 0 else [_other_value(option)])
    config, default = tune_config(build_parser().parse_args(["tune", *argv])), TuneConfig()
    return {p for p in PARTS if getattr(config, p) != getattr(default, p)}


def test_tune_help_groups_its_options_by_part():
    tune = _tune_parser()
    text = tune.format_help()
    where = [text.index(f"\n{title}:\n") for title in (START, *GROUPS)]
    assert where == sorted(where)
    assert set(GROUPS.values()) == set(PARTS)
    for group in tune._action_groups:
        for option in group._group_actions:
            if option.dest in NOT_CONFIG:
                continue
            if group.title == START:
                assert len(_changed(option)) == 1, f"{option.option_strings[0]} sets one part"
            else:
                assert _changed(option) == {GROUPS[group.title]}, f"{option.option_strings[0]} in group {group.title}"
    ungrouped = [g for g in tune._action_groups if g.title in ("options", "optional arguments")]
    assert [a.dest for g in ungrouped for a in g._group_actions] == ["help"]


def test_more_rounds_asked_alone_raise_the_most_rounds_with_them():
    """The resolution line of a tie asks for --revalidate-rounds N: alone, N above the default at most (10) runs."""
    config = tune_config(build_parser().parse_args(["tune", "--revalidate-rounds", "16"])).revalidation
    assert (config.revalidate_rounds, config.revalidate_max_rounds) == (16, 16)
    config = tune_config(build_parser().parse_args(["tune", "--revalidate-rounds", "3"])).revalidation
    assert (config.revalidate_rounds, config.revalidate_max_rounds) == (3, TuneConfig().revalidation.revalidate_max_rounds)
    config = tune_config(build_parser().parse_args(["tune", "--revalidate-rounds", "6", "--revalidate-max-rounds", "8"]))
    assert (config.revalidation.revalidate_rounds, config.revalidation.revalidate_max_rounds) == (6, 8)
