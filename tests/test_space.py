"""Search spaces: loading, validation with field names, host scaling, constraints, suggestion."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import optuna
import pytest

from objectives import workdir
from search_spaces import Context, GiB, IntParam, MiB, SearchSpace, SpaceError, load_space
from search_spaces.catalogue import catalogue, held_bytes, holding
from search_spaces.config import Config, Setting
from search_spaces.context import ExpressionError, evaluate
from search_spaces.space import without
from tuner.engine import _prepare
from tuner.engine._baseline_file import load_baseline
from tuner.engine._prepare import _direct_io, _unread
from tuner.model import UsageError
from tuner.options_file import decode, encode
from tuner.outputs._export import ExportError, as_python


@pytest.fixture
def ctx(host: Context) -> Context:
    return replace(host, data=200 * MiB, budget=4 * GiB)


def test_default_space_scales_to_host_and_data(ctx):
    space = load_space("default").resolve(ctx)
    assert [p.name for p in space.parameters] == [
        "subcompactions", "max_background_jobs", "write_buffer_size", "max_write_buffer_number",
        "min_write_buffer_number_to_merge", "cache_size", "bloom_bits", "compression_type", "compression_level",
    ]
    assert space.parameter("subcompactions").high == ctx.cores
    assert space.parameter("write_buffer_size").high == 100 * MiB  # data / 2
    assert space.parameter("cache_size").high == 200 * MiB  # data
    bigger = load_space("default").resolve(replace(ctx, data=40 * GiB, budget=2 * GiB))
    assert bigger.parameter("write_buffer_size").high == 2 * GiB // 8  # budget / 8
    assert all(p.options_key for p in space.parameters)


def test_constraints(ctx):
    space = load_space("default").resolve(ctx)
    ok = {"write_buffer_size": 64 * MiB, "max_write_buffer_number": 4, "min_write_buffer_number_to_merge": 2,
          "cache_size": 64 * MiB}
    assert space.violations(ok) == []
    bad_merge = {**ok, "min_write_buffer_number_to_merge": 4}
    (why,) = space.violations(bad_merge)
    assert why.startswith("merge_below_max") and "min_write_buffer_number_to_merge=4" in why
    too_big = {**ok, "write_buffer_size": 1 * GiB, "max_write_buffer_number": 8}
    assert space.violations(too_big)[0].startswith("memory_budget")


def test_compression_level_only_with_zstd(ctx):
    space = load_space("default").resolve(ctx)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    seen = set()
    for _ in range(40):
        params = space.suggest(study.ask())
        seen.add(params["compression_type"])
        assert ("compression_level" in params) == (params["compression_type"] == "zstd")
        for p in space.parameters:
            if p.name in params:
                assert p.contains(params[p.name])
    assert "zstd" in seen and len(seen) > 2


def test_a_configuration_names_each_option_as_every_backend_does(ctx):
    """The catalogue's name, db_bench's flag and the OPTIONS key, from the space's parameters; a record of
    flags reads back as the same configuration, and a flag the tool knows no OPTIONS key of keeps none."""
    space = load_space("default").resolve(ctx)
    config = space.config({"subcompactions": 3, "compression_type": "zstd", "compression_level": 7})
    assert config.settings == (Setting("subcompactions", 3, "subcompactions", "DBOptions.max_subcompactions"),
                               Setting("compression_type", "zstd", "compression_type", "CFOptions.compression"),
                               Setting("compression_level", 7, "compression_level", "CFOptions.compression_opts.level"))
    flags = config.flags()
    assert flags == {"subcompactions": "3", "compression_type": "zstd", "compression_level": "7"}
    assert space.config_of(flags) == config and config.flags() == flags
    given = space.config_of({"options_file": "/etc/OPTIONS", "cache_size": str(8 << 20), "num_multi_db": "2",
                             "cache_index_and_filter_blocks": "true", "block_size": "4096"})
    assert given.options_file == "/etc/OPTIONS"
    assert [(s.name, s.value, s.options_key) for s in given.settings] == [
        ("cache_size", 8 << 20, "TableOptions/BlockBasedTable.block_cache"), ("num_multi_db", "2", None),
        ("cache_index_and_filter_blocks", True, "TableOptions/BlockBasedTable.cache_index_and_filter_blocks"),
        ("block_size", 4096, "TableOptions/BlockBasedTable.block_size")]
    assert given.flags()["options_file"] == "/etc/OPTIONS" and given.flags()["cache_index_and_filter_blocks"] == "true"
    # typed only where that renders the same: what a backend gets is what was recorded
    kept = {"bloom_bits": "9.9", "max_bytes_for_level_multiplier": "10", "block_size": "1e3"}
    assert space.config_of(kept).values() == kept and space.config_of(kept).flags() == kept
    choices = SearchSpace.from_dict({"parameters": {"cache_index_and_filter_blocks": {
        "type": "categorical", "choices": ["0", "1"]}}})
    assert choices.config_of({"cache_index_and_filter_blocks": True}).flags() == {"cache_index_and_filter_blocks": "true"}


def test_a_baseline_file_of_flags_reads_as_the_configuration_it_names(tmp_path: Path):
    """--baseline FILE of db_bench flags: its values of the searched options typed as the space's parameters
    (as a study's record of flags reads back), the flags kept as given; a searched number that is none is
    refused naming the flag."""
    space = load_space("default")
    given = tmp_path / "flags.txt"
    given.write_text("--max_background_jobs=4 --compression_type=zstd  # today's\n--cache_size=1048576\n"
                     "--bloom_bits=9.5 --num_levels=7\n")
    flags, values, words = load_baseline(given, space)
    assert flags == {"max_background_jobs": "4", "compression_type": "zstd", "cache_size": "1048576",
                     "bloom_bits": "9.5", "num_levels": "7"}
    # typed where that renders the same: an int parameter's 9.5 stays as given, as db_bench gets it
    assert values == {"max_background_jobs": 4, "compression_type": "zstd", "cache_size": 1 << 20, "bloom_bits": "9.5"}
    assert words == f"your configuration: the db_bench flags in {given}"
    given.write_text("--max_background_jobs=four\n")
    with pytest.raises(UsageError, match=r"--baseline .*: --max_background_jobs=four is not a number"):
        load_baseline(given, space)


def test_yaml_and_toml_give_the_same_space(tmp_path: Path, ctx):
    (tmp_path / "s.yaml").write_text(
        "parameters:\n  subcompactions: {type: int, low: 1, high: '2 * cores', options_key: DBOptions.max_subcompactions}\n"
        "  compression_type: {type: categorical, choices: [lz4, zstd], options_key: CFOptions.compression}\n"
    )
    (tmp_path / "s.toml").write_text(
        '[parameters.subcompactions]\ntype = "int"\nlow = 1\nhigh = "2 * cores"\noptions_key = "DBOptions.max_subcompactions"\n'
        '[parameters.compression_type]\ntype = "categorical"\nchoices = ["lz4", "zstd"]\noptions_key = "CFOptions.compression"\n'
    )
    a, b = (load_space(tmp_path / f).resolve(ctx) for f in ("s.yaml", "s.toml"))
    assert a.parameters == b.parameters
    subcompactions = a.parameter("subcompactions")
    assert isinstance(subcompactions, IntParam) and subcompactions.high == 2 * ctx.cores


BAD_SPACES = [
    ({"parameters": {"x": {"type": "int", "low": 1, "high": 4, "options_key": "CFOptions.x", "lo": 1}}},
     "parameters.x: unknown field(s) lo"),
    ({"parameters": {"x": {"type": "integer", "low": 1, "high": 4, "options_key": "CFOptions.x"}}}, "parameters.x.type"),
    ({"parameters": {"x": {"type": "int", "low": [1], "high": 4, "options_key": "CFOptions.x"}}}, "parameters.x.low"),
    ({"parameters": {"x": {"type": "int", "high": 4, "options_key": "CFOptions.x"}}}, "parameters.x.low: missing"),
    ({"parameters": {"x": {"type": "int", "low": 1, "high": 4}}}, "parameters.x.options_key"),
    ({"parameters": {"x": {"type": "categorical", "choices": [], "options_key": "CFOptions.x"}}},
     "parameters.x.choices"),
    ({"parameters": {"x": {"type": "int", "low": 1, "high": 4, "options_key": "CFOptions.x", "when": {"y": "a"}}}},
     "parameters.x.when"),
    ({"parameters": {"x": {"type": "int", "low": 1, "high": 4, "options_key": "CFOptions.x", "flag": "a; rm -rf /"}}},
     "parameters.x.flag"),
    ({"parameters": {"x": {"type": "int", "low": 1, "high": 4, "options_key": "x"}}}, "parameters.x.options_key: 'x' is not"),
    ({"parameters": {}}, "parameters: expected a non-empty table"),
    ({"parameters": {"x": {"type": "int", "low": 1, "high": 4, "options_key": "CFOptions.x"}}, "extra": 1},
     "unknown top-level field(s) extra"),
    ({"parameters": {"x": {"type": "int", "low": 1, "high": 4, "options_key": "CFOptions.x"}},
      "constraints": [{"name": "c", "expr": "x < nosuch"}]}, "constraints[0].expr"),
    ({"parameters": {"x": {"type": "int", "low": 1, "high": 4, "options_key": "CFOptions.x"}},
      "constraints": [{"name": "c", "expr": "__import__('os')"}]}, "constraints[0].expr"),
]


@pytest.mark.parametrize("data, message", BAD_SPACES)
def test_invalid_space_names_the_field(data, message):
    with pytest.raises(SpaceError) as err:
        SearchSpace.from_dict(data)
    assert message in str(err.value)


def test_empty_range_on_this_host(ctx):
    space = SearchSpace.from_dict(
        {"parameters": {"x": {"type": "int", "low": "4 * cores", "high": 2, "options_key": "CFOptions.x"}}})
    with pytest.raises(SpaceError, match=r"parameters.x: empty range, low \d+ > high 2"):
        space.resolve(ctx)


def test_constraints_that_leave_nothing_feasible(ctx):
    space = SearchSpace.from_dict({
        "parameters": {"a": {"type": "int", "low": 1, "high": 4, "options_key": "CFOptions.x"},
                       "b": {"type": "int", "low": 1, "high": 4, "options_key": "CFOptions.y"}},
        "constraints": [{"name": "impossible", "expr": "a + b > 100"}],
    })
    with pytest.raises(SpaceError, match="no configuration satisfies"):
        space.resolve(ctx)


def test_huge_write_buffer_is_infeasible_under_the_budget(ctx):
    space = load_space("default").resolve(ctx)
    huge = {"write_buffer_size": 1024 * GiB, "max_write_buffer_number": 2, "min_write_buffer_number_to_merge": 1,
            "cache_size": 8 * MiB}
    assert space.violations(huge)
    assert not space.parameter("write_buffer_size").contains(huge["write_buffer_size"])


def test_bad_files(tmp_path: Path):
    (tmp_path / "broken.toml").write_text("parameters = [")
    with pytest.raises(SpaceError, match="not valid TOML"):
        load_space(tmp_path / "broken.toml")
    (tmp_path / "space.json").write_text("{}")
    with pytest.raises(SpaceError, match="expected a .toml, .yaml or .yml"):
        load_space(tmp_path / "space.json")
    with pytest.raises(SpaceError, match="unknown space 'nope'"):
        load_space("nope")


def test_expressions_are_arithmetic_only():
    assert evaluate("min(512 * MiB, data / 2)", {"MiB": MiB, "data": 100 * MiB}) == 50 * MiB
    for text in ("open('x')", "x.__class__", "[1, 2]", "1 if 1 else 2", "lambda: 1"):
        with pytest.raises(ExpressionError):
            evaluate(text, {"x": 1})


def test_repair_moves_only_the_parameters_of_broken_constraints(ctx):
    space = load_space("default").resolve(ctx)
    proposal = {"subcompactions": 3, "max_background_jobs": 2, "write_buffer_size": 8 * MiB,
                "max_write_buffer_number": 3, "min_write_buffer_number_to_merge": 4, "cache_size": 64 * MiB,
                "bloom_bits": 10, "compression_type": "zstd", "compression_level": 3}
    repaired = space.repair(proposal, seed=1)
    assert space.violations(repaired) == []
    unchanged = set(proposal) - {"max_write_buffer_number", "min_write_buffer_number_to_merge"}
    assert {k: repaired[k] for k in unchanged} == {k: proposal[k] for k in unchanged}
    # nearest: one step on one of the two counts, not a random jump
    assert (repaired["max_write_buffer_number"], repaired["min_write_buffer_number_to_merge"]) in {(3, 2), (5, 4), (4, 3), (3, 1)}


# -- the option catalogue ---------------------------------------------------------------------------
RECORDED_OPTIONS = Path(__file__).parents[1] / "experiments" / "default_job" / "results" / "default-job" / "OPTIONS.ini"


def test_every_catalogued_options_key_is_one_rocksdb_writes():
    """Read against an OPTIONS file db_bench 9.11.2 wrote (the default job's, a recorded real file)."""
    from search_spaces.catalogue import catalogue
    from tuner import options_file

    sections = options_file.parse_options(RECORDED_OPTIONS.read_text())
    missing = [o.options_key for o in catalogue().values() if o.options_key
               and o.options_key not in options_file.NOT_SERIALIZED
               and options_file.lookup(sections, o.options_key) is None]
    assert not missing


def test_every_catalogued_rocksdict_call_exists_in_rocksdict():
    import rocksdict

    from search_spaces.catalogue import catalogue

    objects = {"options": rocksdict.Options, "table": rocksdict.BlockBasedOptions}
    calls = {name: o.rocksdict_call() for name, o in catalogue().items() if o.rocksdict}
    assert {"write_buffer_size", "cache_size", "bloom_bits", "compression_level"} <= set(calls)
    assert not [name for name, (obj, method, _) in calls.items() if not hasattr(objects[obj], method)]


def test_a_catalogued_option_needs_no_key_of_its_own_and_an_unknown_one_is_named(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[parameters.cache_size]\ntype = "int"\nlow = 1\nhigh = 4\n'
                    '[parameters.block_size]\ntype = "int"\nlow = 1024\nhigh = 4096\ndoc = "mine"\n')
    space = load_space(str(path))
    assert space.parameter("cache_size").options_key == "TableOptions/BlockBasedTable.block_cache"
    assert space.parameter("cache_size").doc.startswith("Block cache bytes")
    assert space.parameter("block_size").doc == "mine"
    path.write_text('[parameters.mystery]\ntype = "int"\nlow = 1\nhigh = 4\n')
    with pytest.raises(SpaceError, match="parameters.mystery.options_key: missing, and 'mystery' is not in the option "
                                         "catalogue"):
        load_space(str(path))


def test_what_a_configuration_holds_in_memory_is_read_by_the_catalogues_roles():
    """Memtable bytes x memtables + the block cache, whichever names the values come by; None when one is missing."""
    held = holding({"write_buffer_size": "64000000", "max_write_buffer_number": 3, "cache_size": 8 * MiB, "x": 1})
    assert held == {"memtable": 64_000_000, "memtables": 3, "cache": 8 * MiB}
    assert held_bytes(held) == 192_000_000 + 8 * MiB
    assert holding({"write_buffer_size": 1, "max_write_buffer_number": 2}) is None
    assert holding({"write_buffer_size": 1, "max_write_buffer_number": 2, "cache_size": -1}) == \
        {"memtable": 1, "memtables": 2, "cache": 0}


def test_a_catalogued_memory_size_beyond_ram_is_refused(ctx):
    space = SearchSpace.from_dict({"parameters": {"db_write_buffer_size": {"type": "int", "low": 1, "high": ctx.ram * 2}}})
    with pytest.raises(SpaceError, match="more than this host's RAM"):
        space.resolve(ctx)


# -- a space widened to hold the reference (issue 42) -------------------------------------------------
# db_bench's defaults of the default space's options (64 MB memtables, no bloom filter, snappy).
DEFAULTS = {"subcompactions": 1, "max_background_jobs": 2, "write_buffer_size": 64 * MiB, "max_write_buffer_number": 2,
            "min_write_buffer_number_to_merge": 1, "cache_size": 8 * MiB, "bloom_bits": -1, "compression_type": "snappy"}


def test_a_space_that_excludes_the_defaults_widens_just_enough_to_hold_them(host):
    """256 MiB of data within a 96 MiB budget: write_buffer_size is capped at budget / 8 = 12 MiB and
    the memory constraint at 96 MiB, both below the defaults' 64 MB memtables (2 x 64 + 8 MiB)."""
    space = load_space("default").resolve(replace(host, data=256 * MiB, budget=96 * MiB))
    assert space.parameter("write_buffer_size").high == 12 * MiB and space.violations(DEFAULTS)
    wider = space.holding({"rocksdb-default": DEFAULTS})
    assert wider.violations(DEFAULTS) == []
    assert all(wider.parameter(n).contains(v) for n, v in DEFAULTS.items())
    wbs, bloom = wider.parameter("write_buffer_size"), wider.parameter("bloom_bits")
    assert (wbs.low, wbs.high, wbs.log) == (1 * MiB, 64 * MiB, True) and (bloom.low, bloom.high) == (-1, 16)
    unchanged = {"subcompactions", "max_background_jobs", "max_write_buffer_number", "cache_size", "compression_type"}
    assert all(wider.parameter(n) == space.parameter(n) for n in unchanged)
    memory = {c.name: c for c in wider.constraints}["memory_budget"]
    assert memory.expr == "write_buffer_size * max_write_buffer_number + cache_size - budget <= 40 * MiB"
    one_byte_more = {**DEFAULTS, "cache_size": 8 * MiB + 1}  # relaxed just enough: not a byte more
    assert [v.split(":")[0] for v in wider.violations(one_byte_more)] == ["memory_budget"]
    assert space.holding({"rocksdb-default": {**DEFAULTS, "write_buffer_size": 4 * MiB,
                                              "bloom_bits": 10}}).parameters == space.parameters  # held already


def test_a_user_configuration_outside_the_space_is_held_too(ctx):
    space = load_space("default").resolve(ctx)
    mine = {**DEFAULTS, "write_buffer_size": 512 * MiB, "max_write_buffer_number": 12, "compression_type": "lz4hc",
            "compression_level": 40, "cache_size": 64 * MiB}  # compression_level: not active with lz4hc
    wider = space.holding({"rocksdb-default": DEFAULTS, "current": mine})
    assert wider.parameter("write_buffer_size").high == 512 * MiB and wider.parameter("max_write_buffer_number").high == 12
    assert wider.parameter("compression_type").choices == ("none", "snappy", "lz4", "zstd", "lz4hc")
    assert wider.parameter("compression_level") == space.parameter("compression_level")
    assert wider.violations(mine) == [] and wider.violations(DEFAULTS) == []


def test_every_comparison_relaxes_and_another_constraint_is_refused_in_one_line(ctx):
    def two(expr: str) -> SearchSpace:
        return SearchSpace.from_dict({
            "parameters": {"a": {"type": "int", "low": 1, "high": 8, "options_key": "CFOptions.x"},
                           "b": {"type": "int", "low": 1, "high": 8, "options_key": "CFOptions.y"}},
            "constraints": [{"name": "c", "expr": expr}]}).resolve(ctx)

    held = {"current": {"a": 6, "b": 2}}
    assert two("a < b").holding(held).constraints[0].expr == "a - b <= 4"
    assert two("2 * b >= a + 3").holding(held).constraints[0].expr == "2 * b - (a + 3) >= -5"
    assert two("a <= b").holding({"current": {"a": 2, "b": 6}}).constraints[0].expr == "a <= b"  # it holds
    for expr in ("a == b", "a < b < 8", "a < b or b > 3"):
        with pytest.raises(SpaceError, match=r"^space 'space': constraints.c: .* cannot be relaxed to hold current's "
                                             r"values \(only a single <, <=, > or >= comparison can be\)"):
            two(expr).holding(held)
    log = SearchSpace.from_dict({"parameters": {"a": {"type": "int", "low": 1, "high": 8, "log": True,
                                                      "options_key": "CFOptions.x"}}}).resolve(ctx)
    with pytest.raises(SpaceError, match="parameters.a: a log range cannot hold current's value 0"):
        log.holding({"current": {"a": 0}})


def test_compaction_style_reads_and_writes_as_rocksdb_and_db_bench_name_it():
    """db_bench takes the style's number, the OPTIONS file its enum name, rocksdict its method's name."""
    key = "CFOptions.compaction_style"
    assert [encode(key, style) for style in (0, "1", 2)] == [
        "kCompactionStyleLevel", "kCompactionStyleUniversal", "kCompactionStyleFIFO"]
    assert [decode(key, encode(key, style)) for style in (0, 1, 2)] == [0, 1, 2]
    assert decode(key, "kCompactionStyleNone") is None
    assert "options.set_compaction_style(DBCompactionStyle.universal())" in as_python({"compaction_style": 1})
    with pytest.raises(ExportError, match="compaction_style 3"):
        as_python({"compaction_style": 3})
    assert "compaction_style" not in {p.name for p in load_space("default").parameters}  # 30 s cannot judge it
    own = SearchSpace.from_dict({"parameters": {"compaction_style": {"type": "categorical", "choices": [0, 1]}}})
    style = own.parameter("compaction_style")
    assert style.flag == "compaction_style" and style.options_key == key and style.choices == (0, 1)


DIRECT_IO = {"use_direct_io_for_flush_and_compaction": {"type": "categorical", "choices": [False, True]}}


def test_a_choice_left_out_leaves_the_others_and_the_last_one_cannot_go():
    space = SearchSpace.from_dict({"parameters": {"compression_type": {"type": "categorical",
                                                                       "choices": ["lz4", "zstd"]}, **DIRECT_IO}})
    off = space.without_choice("use_direct_io_for_flush_and_compaction", True)
    assert off.parameter("use_direct_io_for_flush_and_compaction").choices == (False,)
    assert [p for p in off.parameters if p.name != "use_direct_io_for_flush_and_compaction"] == [
        p for p in space.parameters if p.name != "use_direct_io_for_flush_and_compaction"]
    assert space.without_choice("compression_type", "brotli") == space  # no such choice: unchanged
    with pytest.raises(SpaceError, match="use_direct_io_for_flush_and_compaction has no choice but false"):
        off.without_choice("use_direct_io_for_flush_and_compaction", False)


def test_the_direct_io_probe_answers_and_leaves_nothing(tmp_path):
    """The probe writes one O_DIRECT block: a disk filesystem takes it, /proc (which takes no new file)
    does not; either way nothing of it stays."""
    assert workdir.takes_direct_io(tmp_path) is True and list(tmp_path.iterdir()) == []
    assert workdir.takes_direct_io(Path("/proc")) is False


def test_a_work_dir_refusing_o_direct_leaves_direct_io_out_of_the_space(host, tmp_path, monkeypatch):
    default = load_space("default").resolve(replace(host, data=200 * MiB, budget=GiB))
    monkeypatch.setattr(workdir, "takes_direct_io", lambda path: pytest.fail("probed for a space without it"))
    assert _direct_io(default, tmp_path) == (default, ())
    space = SearchSpace.from_dict({"parameters": DIRECT_IO})
    monkeypatch.setattr(workdir, "takes_direct_io", lambda path: True)
    assert _direct_io(space, tmp_path) == (space, ())
    monkeypatch.setattr(workdir, "takes_direct_io", lambda path: False)
    narrowed, notes = _direct_io(space, tmp_path)
    assert narrowed.parameter("use_direct_io_for_flush_and_compaction").choices == (False,)
    assert notes == (f"use_direct_io_for_flush_and_compaction left off: the work dir {tmp_path} refuses O_DIRECT "
                     "(give --work-dir on a disk filesystem such as ext4 or xfs to search it)",)


def _service(host: Context) -> SearchSpace:
    return load_space("service").resolve(replace(host, cores=2, data=2 * GiB, budget=768 * MiB,
                                                   extra={"write_bytes": 7_200_000.0}))


def test_a_space_without_a_parameter_holds_it_at_its_value_in_every_constraint(host):
    """``without``: the held parameters leave the space and the constraints read their values: memtables that
    fill the budget with a 32 MiB cache beside them break it; a parameter searched only by a held one's value
    cannot be kept."""
    service = _service(host)
    held = without(service, {"cache_size": 32.0 * MiB, "bloom_bits": None})
    assert {p.name for p in service.parameters} - {p.name for p in held.parameters} == {"cache_size", "bloom_bits"}
    fills = {**service.sample(random.Random(1)), "level0_file_num_compaction_trigger": 4,
             "level0_slowdown_writes_trigger": 20, "level0_stop_writes_trigger": 36, "write_buffer_size": 94 * MiB,
             "max_write_buffer_number": 8, "min_write_buffer_number_to_merge": 1}
    assert service.violations({**fills, "cache_size": 4 * MiB}) == []
    assert held.violations({k: v for k, v in fills.items() if k not in ("cache_size", "bloom_bits")}) == [
        "memory_budget: write_buffer_size * max_write_buffer_number + cache_size <= budget is false for "
        f"max_write_buffer_number=8, write_buffer_size={94 * MiB}, budget={768 * MiB}, cache_size={32.0 * MiB}"]
    with pytest.raises(SpaceError, match="compression_level is searched only by a value of compression_type"):
        without(service, {"compression_type": None})


def test_options_that_serve_reads_alone_are_held_at_the_defaults_when_no_read_is_offered(host, monkeypatch):
    """A study whose runs read nothing holds the catalogue's read-only options at rocksdb-default's values
    and says so; one whose default is not known stays searched where a constraint names it."""
    assert {n for n, o in catalogue().items() if o.serves == "reads"} == {
        "cache_size", "bloom_bits", "cache_index_and_filter_blocks", "partition_index_and_filters", "row_cache_size",
        "compressed_cache_size"}
    service = _service(host)
    given = {"cache_size": 33554432, "bloom_bits": 0}
    monkeypatch.setattr(_prepare, "default_config", lambda found, task, flags: Config.of(
        {f: v for f, v in given.items() if f in flags}, service.parameters))
    space, said = _unread(service, None, None)  # the defaults are given above
    assert not {"cache_size", "bloom_bits"} & {p.name for p in space.parameters}
    assert space.context is not None and space.context.extra["cache_size"] == 33554432
    assert said == ("not searched, since the runs offer no reads: cache_size 33554432, bloom_bits 0 "
                    "(rocksdb-default's; a search would see only what they cost the writes)",)
    given = {"bloom_bits": 0}
    space, said = _unread(service, None, None)
    assert "cache_size" in {p.name for p in space.parameters} and "bloom_bits" not in {p.name for p in space.parameters}
    plain = without(service, {"cache_size": None, "bloom_bits": None})
    assert _unread(plain, None, None) == (plain, ())


def test_a_users_constraint_is_never_relaxed_a_presets_is(tmp_path, ctx):
    """A constraint in the user's own space file is theirs: holding the defaults' 2 x 64 MiB memtables
    widens the range but leaves `<= 64 * MiB` as written, so the defaults break it (and run as no
    trial); a preset's constraints relax as before."""
    path = tmp_path / "mine.toml"
    path.write_text('[parameters.write_buffer_size]\ntype = "int"\nlow = 1048576\nhigh = 33554432\n'
                    '[parameters.max_write_buffer_number]\ntype = "int"\nlow = 2\nhigh = 4\n'
                    '[[constraints]]\nname = "memtables"\nexpr = "write_buffer_size * max_write_buffer_number <= 64 * MiB"\n')
    mine = load_space(path).resolve(ctx)
    assert [c.declared for c in mine.constraints] == [True]
    defaults = {"write_buffer_size": 64 * MiB, "max_write_buffer_number": 2}
    held = mine.holding({"rocksdb-default": defaults})
    assert held.parameter("write_buffer_size").high == 64 * MiB
    assert held.constraints == mine.constraints and [v.split(":")[0] for v in held.violations(defaults)] == ["memtables"]
    assert held.constraints[0].explain(defaults, ctx) == ("memtables: write_buffer_size * max_write_buffer_number <= "
                                                          "64 * MiB is false for max_write_buffer_number=2, "
                                                          "write_buffer_size=67108864")
    preset = load_space("default").resolve(replace(ctx, data=256 * MiB, budget=96 * MiB))
    assert not any(c.declared for c in preset.constraints)
    assert preset.holding({"rocksdb-default": DEFAULTS}).violations(DEFAULTS) == []


# -- the rate limiter: a choice scaled to the offered writes, "none" among them ----------------------
def test_a_numeric_options_choices_may_be_expressions_of_the_studys_names(ctx):
    space = SearchSpace.from_dict({"parameters": {"rate_limiter_bytes_per_sec": {
        "type": "categorical", "choices": [0, "3 * write_bytes", "2 * write_bytes + write_bytes"]}}})
    resolved = space.resolve(replace(ctx, extra={"write_bytes": 1000}))
    assert resolved.parameter("rate_limiter_bytes_per_sec").choices == (0, 3000)  # equal ones kept once
    with pytest.raises(SpaceError, match=r"parameters\.rate_limiter_bytes_per_sec\.choices: unknown name "
                                         r"'write_bytes'.*tune --rate"):
        space.resolve(ctx)
    names = SearchSpace.from_dict({"parameters": {"compression_type": {"type": "categorical",
                                                                       "choices": ["none", "lz4"]}}})
    assert names.resolve(ctx).parameter("compression_type").choices == ("none", "lz4")  # words stay words


def test_the_service_space_scales_its_rate_limiter_to_the_rate_and_holds_no_limit(ctx):
    from tuner.backends import BACKENDS
    from tuner.model import TuneConfig

    extra = BACKENDS["rate"].context_names(TuneConfig(rate=40_000))
    assert extra == {"write_bytes": 40_000 * 420}  # 20-byte keys, 400-byte values
    limiter = load_space("service").resolve(replace(ctx, extra=extra)).parameter("rate_limiter_bytes_per_sec")
    assert limiter.choices == (0, 42_000_000, 50_400_000, 67_200_000, 100_800_000)
    assert limiter.value_of("0") == 0 and limiter.value_of("50400000") == 50_400_000


def test_a_limiter_of_0_is_no_line_in_the_options_file_and_no_rocksdict_call():
    from tuner import options_file

    text = "[DBOptions]\n  max_background_jobs=2\n[CFOptions \"default\"]\n  write_buffer_size=1\n"
    key = options_file.RATE_LIMITER_KEY
    limited = options_file.with_values(text, {key: 50_400_000})
    assert "  rate_limiter_bytes_per_sec=50400000" in limited.splitlines()
    assert "rate_limiter" not in options_file.with_values(limited, {key: 0})  # RocksDB would read 0 bytes/s
    unwritten = options_file.with_unwritten(text, {key: 7, "CFOptions.write_buffer_size": 5})
    assert "rate_limiter_bytes_per_sec=7" in unwritten and "write_buffer_size=1" in unwritten
    assert "set_ratelimiter(50400000, 100000, 10)" in as_python({"rate_limiter_bytes_per_sec": 50_400_000})
    assert "ratelimiter" not in as_python({"rate_limiter_bytes_per_sec": 0})
    assert options_file.with_unwritten("", {options_file.BLOCK_CACHE_KEY: 8}) == "\n"  # a program that wrote none


OPTIONS_TEXT = """# This is a RocksDB option file.
[Version]
  rocksdb_version=11.8.1
  options_file_version=1.1

[DBOptions]
  max_background_jobs=2
  bytes_per_sync=0

[CFOptions "default"]
  write_buffer_size=67108864
  compression_opts={level=32767;strategy=0;}
  num_levels=7

[TableOptions/BlockBasedTable "default"]
  filter_policy=nullptr

[CFOptions "other"]
  write_buffer_size=1
"""


def test_an_options_file_cut_to_the_options_an_answer_changed_keeps_what_rocksdb_needs_to_load_it():
    """OPTIONS.minimal.ini without a measured ablation: the [Version] section, the default column family's
    section headers, and the lines of the keys asked for (a struct's whole line for one of its fields)."""
    from tuner import options_file

    ours = options_file.with_values(OPTIONS_TEXT, {"CFOptions.write_buffer_size": 4194304,
                                                   "CFOptions.compression_opts.level": 8})
    keys = {"CFOptions.write_buffer_size", "CFOptions.compression_opts.level", "DBOptions.max_background_jobs"}
    assert options_file.differing(ours, OPTIONS_TEXT, keys) == keys - {"DBOptions.max_background_jobs"}
    cut = options_file.only(ours, {"CFOptions.write_buffer_size", "CFOptions.compression_opts.level"})
    assert cut.splitlines() == ["[Version]", "  rocksdb_version=11.8.1", "  options_file_version=1.1", "",
                                "[DBOptions]", "", '[CFOptions "default"]', "  write_buffer_size=4194304",
                                "  compression_opts={strategy=0;level=8;}", "", '[TableOptions/BlockBasedTable "default"]']
    sections = options_file.parse_options(options_file.with_unwritten(cut, {options_file.BLOCK_CACHE_KEY: 8}))
    assert sections["TableOptions/BlockBasedTable"] == {"block_cache": "8"} and sections["DBOptions"] == {}
