"""--warm-start and hand-found configurations first (issue 7), on the real db_bench."""

from __future__ import annotations

import optuna
import pytest

from objectives.defaults import defaults_of
from objectives.workloads import load_workload
from search_spaces import Context, MiB, load_space
from tests.conftest import TINY, printed_summary, summary_of
from tests.test_cli import tuner
from tuner.backends import Found
from tuner.engine import starts
from tuner.engine._attrs import Start
from tuner.engine._held import held
from tuner.engine._plan import Reference
from tuner.engine._warmstart import next_start
from tuner.trials import TrialRecord

pytestmark = pytest.mark.dbbench


def test_warm_start_learns_from_an_earlier_study_but_counts_and_names_only_its_own(tmp_path):
    base = ["tune", "--workload", "fillrandom", "--scale", str(TINY), "--sampler", "tpe", "--seed", "5"]
    assert tuner(*base, "--trials", "3", "--study", "first", "--out", "first").returncode == 0
    r = tuner(*base, "--trials", "2", "--study", "second", "--out", "second", "--warm-start", "first", "--json")
    assert r.returncode == 0, r.stderr
    assert "this new study learns from 3 trials of first" in r.stderr
    summary = printed_summary(r)
    assert summary.trials.complete == 2 and summary.trials.counts()["warm-start"] == 3
    trials = optuna.load_study(study_name="second", storage=summary.storage).trials
    earlier = optuna.load_study(study_name="first", storage=f"sqlite:///{tmp_path / 'first' / 'study.db'}").trials
    assert [t.params for t in trials[:3]] == [t.params for t in earlier]
    assert [t.values for t in trials[:3]] == [t.values for t in earlier]
    assert all(TrialRecord.of(t).outcome == "warm-start" for t in trials[:3])
    # the best is one of this study's own measured trials (a rejected proposal may take a number)
    assert summary.best is not None and summary.best.trial is not None
    assert TrialRecord.of(trials[summary.best.trial]).outcome == "complete"

    other = tuner("tune", "--workload", "fillrandom", "--scale", "0.03", "--trials", "1", "--out", "third",
                  "--warm-start", "first/summary.json")
    assert other.returncode == 2 and "--warm-start first/summary.json: study first has identity" in other.stderr
    missing = tuner(*base, "--trials", "1", "--out", "fourth", "--warm-start", "nosuch")
    assert missing.returncode == 2 and "--warm-start nosuch: no such study directory" in missing.stderr


def test_a_new_study_first_runs_the_defaults_benchmark_sh_and_the_hand_found_configuration(tmp_path, db_bench):
    r = tuner("tune", "--workload", "S2", "--scale", "0.05", "--trials", "3", "--seed", "1", "--out", "o", "--json")
    assert r.returncode == 0, r.stderr
    assert "this new study runs rocksdb-default, benchmark.sh, hand-found:S2 first" in r.stderr
    summary = printed_summary(r)
    trials = summary.optuna_study().trials
    assert [TrialRecord.of(t).enqueued for t in trials[:3]] == ["rocksdb-default", "benchmark.sh", "hand-found:S2"]
    defaults, bsh, hand = (t.params for t in trials[:3])
    # the defaults every run starts from (the library's of this version, where db_bench's differ), else
    # db_bench's --help default, as they are
    library = defaults_of(db_bench).flags
    assert defaults["max_background_jobs"] == int(db_bench.default("max_background_jobs")) == 2
    assert defaults["compression_type"] == library.get("compression_type", db_bench.default("compression_type"))
    assert defaults["cache_size"] == int(library.get("cache_size", db_bench.default("cache_size")))
    # db_bench's -1 is the library's default filter, none: the space's 0, so its range holds it
    assert db_bench.default("bloom_bits") == "-1" and defaults["bloom_bits"] == 0
    assert not any(w.startswith("bloom_bits") for w in (summary.space_searched or {})["widened"])
    assert bsh["compression_type"] == "zstd" and bsh["bloom_bits"] == 10
    assert bsh["max_background_jobs"] == defaults["max_background_jobs"]  # what benchmark.sh leaves as is
    assert hand["max_write_buffer_number"] == 4
    none = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "1", "--seed", "1",
                 "--out", "none", "--no-starts", "--json")
    assert none.returncode == 0 and "runs" not in none.stderr.split("first")[0].split("\n")[-1]
    trial = printed_summary(none).optuna_study().trials[0]
    assert TrialRecord.of(trial).enqueued is None


def test_the_defaults_start_runs_what_the_baseline_runs(db_bench):
    """S0 scales its memtable with the data (2.56 MB); the rocksdb-default start keeps that memtable, as
    the baseline does, instead of db_bench's 64 MB (S0's runs of 2026-11-24 and -25 started from 64 MB
    under that name, and it ran 17 % slower than the baseline)."""
    host = Context.of_host()
    workload = load_workload("S0").resolve(1.0, host)
    space = load_space("default").resolve(Context(cores=host.cores, ram=host.ram, data=workload.data_bytes(),
                                                  scale=1.0, budget=host.ram // 4))
    (name, defaults), (_, bsh) = starts(space, Found("db_bench", db_bench), workload)
    assert name == "rocksdb-default" and defaults["write_buffer_size"] == workload.flags["write_buffer_size"]
    assert defaults["write_buffer_size"] < 3 * 2**20 < bsh["write_buffer_size"]  # benchmark.sh sets its own


def test_the_space_holds_the_defaults_and_the_users_configuration_whose_starts_run_unclipped(db_bench):
    """256 MiB of data within a 96 MiB budget (a 128 MiB target) capped write_buffer_size at budget / 8 =
    12 MiB and memtables plus cache at 96 MiB: the rocksdb-default start ran 12 MB memtables while the
    baseline ran the defaults' 64 MB (45,277 against 94,520 ops/s), and no trial could reach it. The
    space now holds the defaults and the user's configuration, and their starts run them as they are."""
    host = Context.of_host()
    workload = load_workload("fillrandom").resolve(TINY, host)
    space = load_space("default").resolve(Context(cores=host.cores, ram=host.ram, data=256 * MiB, budget=96 * MiB))
    user = Reference("current", {}, {"write_buffer_size": 256 * MiB, "compression_type": "lz4hc", "cache_size": None})
    wider, notes = held(space, Found("db_bench", db_bench), workload, user=user)
    (first, defaults), (mine, current), (bsh, _) = starts(wider, Found("db_bench", db_bench), workload, user=user)
    assert (first, mine, bsh) == ("rocksdb-default", "current", "benchmark.sh")
    clipped = dict(starts(space, Found("db_bench", db_bench), workload))["rocksdb-default"]
    assert clipped["write_buffer_size"] == 12 * MiB < defaults["write_buffer_size"] == 64 * MiB
    assert current == {**defaults, "write_buffer_size": 256 * MiB, "compression_type": "lz4hc"}
    for params in (defaults, current):
        assert wider.violations(params) == [] and all(wider.parameter(n).contains(v) for n, v in params.items())
    assert notes[0] == ("write_buffer_size's range widened to 1.0 MiB..64 MiB (from 1.0 MiB..12 MiB) to hold "
                        "rocksdb-default's value")
    assert "compression_type gains the choice lz4hc, current's" in notes
    relaxed = [n.split(" to hold ")[1] for n in notes if n.startswith("constraint memory_budget relaxed to ")]
    assert relaxed == ["rocksdb-default's values", "current's values"]


def test_a_constraint_in_the_users_space_file_holds_for_every_trial_and_the_answer(tmp_path):
    """The user's space caps memtables at 64 MiB in all, below the defaults' 2 x 64 MiB: the defaults are
    measured as the baseline but run as no trial, and the answer is the best within the cap, whatever
    the re-validation found against the defaults."""
    (tmp_path / "mine.toml").write_text(
        '[parameters.write_buffer_size]\ntype = "int"\nlow = 1048576\nhigh = 33554432\nlog = true\n'
        '[parameters.max_write_buffer_number]\ntype = "int"\nlow = 2\nhigh = 4\n[[constraints]]\nname = "memtables"\n'
        'expr = "write_buffer_size * max_write_buffer_number <= 64 * MiB"\n')
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--space", "mine.toml", "--trials", "3",
              "--seed", "1", "--out", "o", "--no-mlflow", "--revalidate", "1", "--revalidate-rounds", "2",
              "--revalidate-max-rounds", "2", "--no-ablation", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "space mine: rocksdb-default breaks your constraint memtables: " in r.stderr
    summary = summary_of(tmp_path / "o")
    assert list(summary.breaks) == ["rocksdb-default"]
    ran = [t.params for t in summary.optuna_study().trials if TrialRecord.of(t).outcome == "complete"]
    assert len(ran) == 3 and all(p["write_buffer_size"] * p["max_write_buffer_number"] <= 64 * MiB for p in ran)
    assert summary.answer is not None and summary.answer.recommend == "best"
    assert summary.answer.why.startswith("rocksdb-default breaks your constraint memtables: ")
    assert "not recommended" not in r.stdout


def test_warm_start_auto_picks_the_most_similar_study_of_the_library(tmp_path):
    """The same workload and scale: its trials are copied. Another workload: its best configurations
    are measured first here (their values are not copied). The excluded study is never picked."""
    base = ["tune", "--scale", str(TINY), "--sampler", "random", "--seed", "2", "--trials", "3", "--no-starts"]
    assert tuner(*base, "--workload", "fillrandom", "--study", "fill", "--out", "lib/fill").returncode == 0
    assert tuner(*base, "--workload", "S2", "--study", "s2", "--out", "lib/s2").returncode == 0
    same = tuner(*base, "--workload", "fillrandom", "--study", "same", "--out", "same", "--warm-start", "auto",
                 "--library", "lib", "--json")
    assert same.returncode == 0, same.stderr
    assert "learns from 3 trials of lib/fill" in same.stderr and printed_summary(same).trials.counts()["warm-start"] == 3
    six = [a if a != "3" else "6" for a in base]  # room for the 3 configurations within half of the trials
    near = tuner(*six, "--workload", "overwrite", "--study", "near", "--out", "near", "--warm-start", "auto",
                 "--library", "lib", "--json")
    assert near.returncode == 0, near.stderr
    assert "then runs the 3 best configurations of" in near.stderr
    trials = optuna.load_study(study_name="near", storage=printed_summary(near).storage).trials
    assert all((TrialRecord.of(t).enqueued or "").split("#")[0] in ("fill", "s2") for t in trials[:3])
    assert "warm-start" not in printed_summary(near).trials.counts()


def test_the_starts_leave_the_sampler_at_least_half_of_a_small_search(tmp_path):
    """db_bench's defaults and benchmark.sh always run first; another study's configurations only
    while the starts take at most half of the trials (S1's 115 s once went to 7 starts)."""
    lib = ["tune", "--scale", str(TINY), "--sampler", "random", "--seed", "2", "--no-starts"]
    assert tuner(*lib, "--trials", "3", "--workload", "fillrandom", "--study", "fill", "--out", "lib/fill").returncode == 0
    r = tuner("tune", "--scale", str(TINY), "--seed", "3", "--sampler", "random", "--trials", "6",
              "--workload", "overwrite", "--study", "small", "--out", "small", "--warm-start", "auto",
              "--library", "lib", "--json")
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    trials = optuna.load_study(study_name="small", storage=summary.storage).trials
    names = [TrialRecord.of(t).enqueued for t in trials]
    assert names[:3] == ["rocksdb-default", "benchmark.sh", names[2]] and names[2].startswith("fill#")
    assert names[3:] == [None] * (len(trials) - 3)  # the sampler's: 3 of 6
    left_out = [n for n in summary.seeded if n.startswith("left out")]
    assert len(left_out) == 1 and "at most 50 % of the 6 trials expected" in left_out[0], summary.seeded
    assert left_out[0].count("fill#") == 2 and left_out[0] in r.stderr


def _start(name: str | None = None, outcome: str = "complete", **attrs) -> optuna.trial.FrozenTrial:
    return optuna.trial.create_trial(value=1.0, user_attrs={"outcome": outcome, **attrs,
                                                            **({"enqueued": name} if name else {})})


def test_next_start_runs_the_required_first_and_the_optional_within_their_share():
    queue = [Start("rocksdb-default", {}), Start("benchmark.sh", {}), *(Start(f"w#{i}", {}, optional=True) for i in range(3))]
    # required ones run whatever the share (expected 1 trial), in order, passing those run
    assert next_start(queue, [], 1) == (queue[0], [])
    assert next_start(queue, [_start("rocksdb-default")], 1) == (queue[1], [])
    two = [_start("rocksdb-default"), _start("benchmark.sh")]
    # an optional one while the starts, it included, are at most half of the expected trials
    assert next_start(queue, two, 6) == (queue[2], [])
    assert next_start(queue, [*two, _start("w#0")], 6) == (None, ["w#1", "w#2"])
    assert next_start(queue, two, None) == (queue[2], [])  # run length not known yet: it runs
    # copies from an earlier study and repaired starts are not the sampler's; a proposal of its own is
    copied = [*two, _start(outcome="warm-start"), _start(repaired_from=1)]
    assert next_start(queue, copied, 100) == (queue[2], [])
    assert next_start(queue, [*two, _start()], 100) == (None, [])  # the sampler took over: nothing left out now
    assert next_start(queue, [*two, *(_start(f"w#{i}") for i in range(3))], 100) == (None, [])
