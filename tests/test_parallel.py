"""--parallel on Ray (issue 5): a local instance, and a real two-node cluster started with `ray start`,
the worker node in its own network namespace; trials run the real db_bench on both nodes."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import optuna
import pytest

from objectives.workdir import proc_stat, process_alive
from tests.conftest import TINY, fast, leftovers, summary_of
from tuner.trials import TrialNode, TrialRecord

pytestmark = [pytest.mark.dbbench, pytest.mark.ray]
TUNER = [sys.executable, "-m", "tuner.cli"]
RAY = str(Path(sys.executable).with_name("ray"))


def _trials(out: Path) -> list[optuna.trial.FrozenTrial]:
    return summary_of(out).optuna_study().trials


def _node(trial: optuna.trial.FrozenTrial) -> TrialNode:
    """The node that ran ``trial``."""
    node = TrialRecord.of(trial).node
    assert node is not None, f"trial {trial.number} has no node"
    return node


def _span(node: TrialNode) -> tuple[float, float]:
    """When the node measured its trial."""
    assert node.measured_from is not None and node.measured_to is not None, node
    return node.measured_from, node.measured_to


def _overlap(a: TrialNode, b: TrialNode) -> bool:
    """Whether the two trials were measured at the same time."""
    (a_from, a_to), (b_from, b_to) = _span(a), _span(b)
    return a_from < b_to and b_from < a_to


def test_core_leases_never_share_a_core_and_free_on_release(tmp_path):
    from objectives.runner import RunFailed
    from tuner.executors._task import CoreLease

    cores = sorted(os.sched_getaffinity(0))
    first = CoreLease(1, tmp_path)
    got = first.acquire(time.monotonic() + 5)
    rest = CoreLease(len(cores) - 1, tmp_path).acquire(time.monotonic() + 5) if len(cores) > 1 else []
    assert sorted(got + rest) == cores  # every core handed out once
    with pytest.raises(RunFailed, match="no 1 free cores"):
        CoreLease(1, tmp_path).acquire(time.monotonic() + 0.5)
    stop = threading.Event()
    stop.set()
    with pytest.raises(RunFailed, match="^stopped: the study is stopping$"):  # at once, not after 600 s
        CoreLease(1, tmp_path).acquire(time.monotonic() + 600, stop)
    first.release()
    assert CoreLease(1, tmp_path).acquire(time.monotonic() + 5) == got
    with pytest.raises(RunFailed, match="has 2 cores" if len(cores) == 2 else "cores"):
        CoreLease(len(cores) + 1, tmp_path).acquire(time.monotonic() + 1)


def test_local_parallel_trials_run_at_once_on_distinct_cores(tmp_path, work_dir):
    out = tmp_path / "out"
    r = subprocess.run([*TUNER, "tune", "--no-drain", "--revalidate", "0", "--workload", "fillrandom", "--scale", "0.1",
                        "--trials", "6", "--seed", "2",
                        "--sampler", "tpe", "--parallel", "2", "--out", str(out), "--work-dir", str(work_dir),
                        "--no-plots"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "2 trials at once on Ray, 1 pinned core(s) each" in r.stderr
    done = [t for t in _trials(out) if TrialRecord.of(t).outcome == "complete"]
    assert len(done) == 6
    nodes = [_node(t) for t in done]
    assert all(len(n.cores_used or []) == 1 for n in nodes)
    pairs = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:] if _overlap(a, b)]
    assert pairs, "no two trials ran at the same time"
    assert all(a.cores_used != b.cores_used for a, b in pairs)
    for t in done:  # the worker's logs were shipped back to the driver's OUT
        assert (Path(TrialRecord.of(t).log_dir) / "fillrandom.stdout").is_file() or \
            (Path(TrialRecord.of(t).log_dir) / "load.stdout").is_file()
    assert leftovers(work_dir) == []


def test_ctrl_c_cancels_parallel_trials_and_resume_completes(tmp_path, work_dir):
    out = tmp_path / "out"
    args = [*TUNER, "tune", "--workload", "fillrandom", "--scale", "0.5", "--trials", "4", "--seed", "1",
            "--study", "par", "--parallel", "2", "--out", str(out), "--work-dir", str(work_dir), "--no-plots",
            "--no-drain", "--revalidate", "0"]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if line.startswith("trial "):
            time.sleep(0.5)
            proc.send_signal(signal.SIGINT)
            break
    _, rest = proc.communicate(timeout=120)
    assert proc.returncode == 130, rest
    time.sleep(1.0)
    assert subprocess.run(["pgrep", "-f", "--", f"--db={work_dir}"], capture_output=True).returncode == 1
    again = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    outcomes = [TrialRecord.of(t).outcome for t in _trials(out)]
    assert outcomes.count("complete") == 4 and outcomes.count("interrupted") >= 1
    assert leftovers(work_dir) == []


def test_pruner_needs_one_trial_at_a_time(tmp_path):
    r = subprocess.run([*TUNER, "tune", "--parallel", "2", "--pruner", "median", "--out", str(tmp_path / "x")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--pruner: needs --parallel 1" in r.stderr
    assert not (tmp_path / "x").exists()


# -- a two-node cluster ---------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


class Cluster:
    """A Ray head on this host and a worker node, the worker in network namespace ``ns`` when possible
    (a veth pair 10.231.x.1 <-> 10.231.x.2), else both on loopback; token authentication on. ``head_env``
    and ``worker_env``: what each node's processes get beside this process's environment."""

    def __init__(self, root: Path, worker_env: dict[str, str] | None = None, head_env: dict[str, str] | None = None):
        self.root = root
        self.ns: str | None = None
        token = root / "token"
        token.write_text(secrets.token_hex(32))
        self.ray_env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token), "RAY_USAGE_STATS_ENABLED": "0"}
        self.worker_extra = worker_env or {}
        self.head_extra = head_env or {}
        self.head_ip, self.worker_ip = "127.0.0.1", "127.0.0.1"
        if os.geteuid() == 0 and shutil.which("ip"):
            self._netns()
        self.port = _free_port()
        self.address = f"{self.head_ip}:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """This process's environment (as the test has set it) plus the cluster's token settings."""
        return {**os.environ, **self.ray_env}

    @property
    def worker_env(self) -> dict[str, str]:
        return {**self.env, **self.worker_extra}

    def _netns(self) -> None:
        n = os.getpid() % 200 + 20
        ns, host_if, ns_if = f"rtt{os.getpid()}", f"rth{os.getpid()}"[:15], f"rtw{os.getpid()}"[:15]
        steps = [["ip", "netns", "add", ns], ["ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if],
                 ["ip", "link", "set", ns_if, "netns", ns], ["ip", "addr", "add", f"10.231.{n}.1/24", "dev", host_if],
                 ["ip", "link", "set", host_if, "up"],
                 ["ip", "netns", "exec", ns, "ip", "addr", "add", f"10.231.{n}.2/24", "dev", ns_if],
                 ["ip", "netns", "exec", ns, "ip", "link", "set", ns_if, "up"],
                 ["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"]]
        for i, step in enumerate(steps):
            if subprocess.run(step, capture_output=True).returncode != 0:
                if i > 0:
                    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
                return  # no network namespaces here: loopback
        self.ns, self.head_ip, self.worker_ip = ns, f"10.231.{n}.1", f"10.231.{n}.2"

    def _in_ns(self, cmd: list[str]) -> list[str]:
        """``cmd`` in the worker's network namespace only: nsenter keeps the host's /sys (and its memory
        cgroups), where `ip netns exec` mounts a /sys of its own without them."""
        if not self.ns:
            return cmd
        if shutil.which("nsenter"):
            return ["nsenter", f"--net=/run/netns/{self.ns}", *cmd]
        return ["ip", "netns", "exec", self.ns, *cmd]

    def start(self) -> None:
        head = subprocess.run([RAY, "start", "--head", f"--node-ip-address={self.head_ip}", f"--port={self.port}",
                               "--num-cpus=1", "--include-dashboard=false", "--disable-usage-stats",
                               f"--temp-dir={self.root / 'ray'}"], env={**self.env, **self.head_extra},
                              capture_output=True, text=True,
                              timeout=120)
        assert head.returncode == 0, head.stderr[-2000:]
        worker = subprocess.run(self._in_ns([RAY, "start", f"--address={self.address}",
                                             f"--node-ip-address={self.worker_ip}", "--num-cpus=1",
                                             "--disable-usage-stats"]),
                                env=self.worker_env, capture_output=True, text=True, timeout=120)
        assert worker.returncode == 0, worker.stderr[-2000:]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status = subprocess.run([RAY, "status", f"--address={self.address}"], env=self.env, capture_output=True,
                                    text=True, timeout=60)
            if status.stdout.count(" node_") >= 2:
                return
            time.sleep(1)
        raise AssertionError(f"the worker node never joined: {status.stdout[-1000:]}")

    def processes(self) -> set[int]:
        """This cluster's processes: those whose environment holds its token path (both nodes' Ray
        processes, their workers, what those started) and their descendants (Ray's agents drop the
        variable), never this test's own."""
        marker = f"RAY_AUTH_TOKEN_PATH={self.ray_env['RAY_AUTH_TOKEN_PATH']}".encode()
        parent, marked = {}, set()
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit() and (fields := proc_stat(int(proc.name))):
                parent[int(proc.name)] = int(fields[1])  # state, then the parent's pid
                with contextlib.suppress(OSError):
                    if marker in (proc / "environ").read_bytes().split(b"\0"):
                        marked.add(int(proc.name))
        ours, grew = set(marked), True
        while grew:
            children = {pid for pid, ppid in parent.items() if ppid in ours} - ours
            ours |= children
            grew = bool(children)
        return ours - {os.getpid()}

    def stop(self) -> None:
        """Both nodes stopped and the namespace deleted: SIGTERM to this cluster's processes, SIGKILL to
        those left after 3 s (the GCS server outlives a SIGTERM). Not `ray stop`, which stops every Ray
        process on the host (another cluster's, a measurement's)."""
        pids = self.processes()
        for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + grace
            while (pids := {p for p in pids if process_alive(p)}) and time.monotonic() < deadline:
                time.sleep(0.2)
        if self.ns:
            subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)

    def tune(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([*TUNER, *fast(["tune", "--ray-address", self.address, *args])], env=self.env,
                              capture_output=True, text=True, timeout=timeout)


# Its own cluster (its worker runs another db_bench), before the module's shared one starts: one cluster at a time.
@pytest.mark.release_build  # the driver runs the release build, the worker Debian's assertion build
def test_nodes_with_another_db_bench_are_refused_unless_allowed(tmp_path_factory, tmp_path, work_dir, db_bench):
    other = Path("/usr/bin/db_bench")
    assert other.is_file() and other.resolve() != Path(db_bench.path).resolve(), \
        "needs Debian's /usr/bin/db_bench (make test-deps installs rocksdb-tools) beside the release build"
    c = Cluster(tmp_path_factory.mktemp("mixed"), worker_env={"ROCKSDB_TUNER_DB_BENCH": str(other)})
    try:
        c.start()
        args = ["--workload", "fillrandom", "--scale", str(TINY), "--trials", "2", "--parallel", "2",
                "--work-dir", str(work_dir), "--no-plots", "--no-mlflow"]
        refused = c.tune(*args, "--out", str(tmp_path / "refused"))
        assert refused.returncode == 2
        assert "has db_bench 7.8.3 (assertions) at /usr/bin/db_bench" in refused.stderr
        assert "--allow-mixed-db-bench" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
        # one trial per node: otherwise Ray may run both tiny trials on the head, one after the other
        allowed = c.tune(*args, "--allow-mixed-db-bench", "--one-trial-per-node", "--out", str(tmp_path / "allowed"))
        assert allowed.returncode == 0, allowed.stderr[-3000:]
        paths = {build.path for t in _trials(tmp_path / "allowed")
                 if TrialRecord.of(t).outcome == "complete" and (build := TrialRecord.of(t).build)}
        assert str(other) in paths, paths
    finally:
        c.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One two-node cluster for the module's tests that neither stop nor reconfigure it (starting one
    takes a while on 2 cores): the head's and the worker's processes each with a $TMPDIR of their own
    (short paths: Ray's sockets live there), so a study without --work-dir runs on nodes that share no
    work dir; stopped, its namespace deleted, when the module ends."""
    dirs = {name: tmp_path_factory.mktemp(name[0]) for name in ("head", "worker")}
    c = Cluster(tmp_path_factory.mktemp("c"), head_env={"TMPDIR": str(dirs["head"])},
                worker_env={"TMPDIR": str(dirs["worker"])})
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.mark.tracked  # the trials' MLflow runs are logged from the driver
def test_study_runs_on_both_nodes_of_a_two_node_cluster(cluster, tmp_path, work_dir, session_store):
    out = tmp_path / "out"
    r = cluster.tune("--workload", "fillrandom", "--scale", "0.2", "--trials", "6", "--seed", "3", "--parallel", "2",
                     "--one-trial-per-node", "--out", str(out), "--work-dir", str(work_dir), "--experiment", "cluster",
                     "--no-plots")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "one per node" in r.stderr
    done = [t for t in _trials(out) if TrialRecord.of(t).outcome == "complete"]
    assert len(done) == 6
    ips = {_node(t).ip for t in done}
    assert len({_node(t).node_id for t in done}) == 2, ips
    if cluster.ns:
        assert ips == {cluster.head_ip, cluster.worker_ip}
    # MLflow logging stayed on the driver: every trial has its run, with the node it ran on
    from mlflow import MlflowClient

    client = MlflowClient(session_store)
    exp = client.get_experiment_by_name("cluster")
    runs = client.search_runs([exp.experiment_id], "tags.role = 'trial' and tags.outcome = 'complete'",
                              max_results=100)
    assert len(runs) == 6 and {run.data.tags.get("node_ip") for run in runs} == ips  # (rejected ones ran nowhere)
    assert leftovers(work_dir) == []


def _work_dirs(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory,
               monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The default work dirs of a driver with a $TMPDIR of its own (set here), of the cluster's head node
    and of its worker node: none shared."""
    dirs = {"driver": tmp_path_factory.mktemp("d"), "head": Path(cluster.head_extra["TMPDIR"]),
            "worker": Path(cluster.worker_extra["TMPDIR"])}
    monkeypatch.setenv("TMPDIR", str(dirs["driver"]))
    return {name: path / f"rocksdb-tuner-work-{os.getuid()}" for name, path in dirs.items()}


def _apart(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
           *args: str) -> tuple[subprocess.CompletedProcess, dict[str, Path]]:
    """A study (``args``) on the two-node cluster, its nodes and driver sharing no work dir: no --work-dir,
    two trials at once, one per node; and the default work dirs of the driver, the head node and the
    worker node."""
    dirs = _work_dirs(cluster, tmp_path_factory, monkeypatch)
    return cluster.tune(*args, "--parallel", "2", "--one-trial-per-node", "--no-mlflow", "--no-plots"), dirs


def _built_apart(out: Path, dirs: dict[str, Path]) -> list[optuna.trial.FrozenTrial]:
    """The study's complete trials, checked to have run on both nodes, each node's first run having built
    the node's own preloaded DB (its logs in the run's ``preload/``) and no other run; every work dir left
    as it was."""
    trials = _trials(out)
    done = [t for t in trials if TrialRecord.of(t).outcome == "complete"]
    assert done and len({_node(t).node_id for t in done}) == 2, \
        [TrialRecord.of(t).fail_reason for t in trials]
    built = sorted(p.relative_to(out).parts[:2] for p in out.rglob("preload/*.command"))
    assert len(built) == 2, built  # once per node (the driver's own is OUT/preload-trials/)
    commands = [p.read_text() for p in out.rglob("preload/*.command")]
    for name in ("head", "worker"):  # each in its own node's default work dir
        assert sum(f"{dirs[name]}/" in command for command in commands) == 1, (name, commands)
    for name, work in dirs.items():
        assert work.is_dir() and not [p for p in os.listdir(work) if p.startswith("rocksdb-tuner-")], (name, work)
    return done


def test_each_node_builds_its_own_preloaded_db_once_and_removes_it(cluster, tmp_path, tmp_path_factory, monkeypatch):
    """A command study with --load on nodes that share no work dir: the driver builds its DB, each node its
    own copy once (its runs wait for it and reuse it), and when the study ends every work dir is as it
    was."""
    from tests.test_backends import AT_SIZE_LOAD, AT_SIZE_RUN

    (tmp_path / "load.py").write_text(AT_SIZE_LOAD)
    (tmp_path / "run.py").write_text(AT_SIZE_RUN)
    python = sys.executable
    r, dirs = _apart(cluster, tmp_path_factory, monkeypatch, "--backend", "command", "--load",
                     f"{python} {tmp_path / 'load.py'} {{db}} {{data_bytes}} {tmp_path / 'loads'}", "--command",
                     f"{python} {tmp_path / 'run.py'} {{options}} {{db}} {{data_bytes}} {{duration}}",
                     "--target-data", "64KiB", "--duration", "1s", "--trials", "4", "--sampler", "random", "--seed",
                     "1", "--no-starts", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr[-3000:]
    done = _built_apart(tmp_path / "out", dirs)
    assert len(done) == 4 and all(TrialRecord.of(t).metric("links") >= 2 for t in done)  # on a loaded DB's copy
    assert (tmp_path / "loads").read_text() == "xxx"  # the driver's, then once on each node


def test_the_rocksdict_example_at_a_target_on_two_nodes_each_on_its_own_db(cluster, tmp_path, tmp_path_factory,
                                                                           monkeypatch, memory_cgroup):
    """The shipped example as README's at-size form runs it, on two nodes that share no work dir: its DB
    loaded once by the driver and once by each node, every run within --target-memory (a memory cgroup
    on either node), tuned for its P99 (minimized), the answer re-validated at the target."""
    app, python = Path(__file__).resolve().parents[1] / "examples" / "rocksdict_app" / "app.py", sys.executable
    out = tmp_path / "out"
    r, dirs = _apart(cluster, tmp_path_factory, monkeypatch, "--backend", "command",
                     "--load", f"{python} {app} --load --options {{options}} --db {{db}} --data-bytes {{data_bytes}}",
                     "--command", f"{python} {app} --loaded --options {{options}} --db {{db}} --data-bytes "
                     "{data_bytes} --duration {duration}", "--target-data", "4MiB", "--target-memory", "128MiB",
                     "--duration", "1s", "--objective", "p99_us", "--trials", "2", "--sampler", "random", "--seed", "1",
                     "--no-starts", "--revalidate", "2", "--revalidate-rounds", "3", "--revalidate-max-rounds", "3",
                     "--no-ablation", "--out", str(out))
    assert r.returncode == 0, r.stderr[-3000:]
    done = _built_apart(out, dirs)
    assert all(TrialRecord.of(t).phases[0]["memory"]["memory_limit_bytes"] == 128 << 20 for t in done)
    summary = summary_of(out)
    assert summary.objective_metric == "p99_us" and summary.objective_maximize is False
    assert summary.revalidation is not None and summary.revalidation.rounds >= 3
    assert summary.revalidation.metric == "p99_us" and summary.answer is not None


def test_a_preloaded_workload_runs_on_a_cluster_each_node_on_its_own_db(cluster, tmp_path, tmp_path_factory,
                                                                        monkeypatch):
    """steady-overwrite with --ray-address, once refused: each node builds its preloaded DB once and
    removes it at the end."""
    r, dirs = _apart(cluster, tmp_path_factory, monkeypatch, "--workload", "steady-overwrite", "--scale", "0.005",
                     "--duration", "2s", "--trials", "3", "--seed", "1", "--no-starts", "--no-baselines",
                     "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(_built_apart(tmp_path / "out", dirs)) == 3


def test_ctrl_c_on_a_cluster_leaves_no_preloaded_db_on_any_node_and_resume_builds_again(
        cluster, tmp_path, tmp_path_factory, monkeypatch):
    """Stopped with Ctrl-C once the nodes run the study's trials, a study on nodes that share no work dir
    leaves no preloaded DB on the driver or on either node; resumed, it builds them again and completes."""
    from tests.test_backends import AT_SIZE_LOAD, AT_SIZE_RUN

    (tmp_path / "load.py").write_text(AT_SIZE_LOAD)
    (tmp_path / "run.py").write_text(AT_SIZE_RUN + "import time; time.sleep(float(seconds))\n")
    works = list(_work_dirs(cluster, tmp_path_factory, monkeypatch).values())
    python = sys.executable
    args = [*TUNER, *fast(["tune", "--ray-address", cluster.address, "--backend", "command", "--load",
                           f"{python} {tmp_path / 'load.py'} {{db}} {{data_bytes}} {tmp_path / 'loads'}", "--command",
                           f"{python} {tmp_path / 'run.py'} {{options}} {{db}} {{data_bytes}} {{duration}}",
                           "--target-data", "64KiB", "--duration", "2s", "--trials", "6", "--sampler", "random",
                           "--seed", "1", "--no-starts", "--study", "apart", "--parallel", "2", "--one-trial-per-node",
                           "--out", str(tmp_path / "out"), "--no-mlflow", "--no-plots"])]
    proc = subprocess.Popen(args, env=cluster.env, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    loads = tmp_path / "loads"
    for line in proc.stderr:  # once the driver and both nodes built theirs, and trials are under way
        if line.startswith("trial ") and loads.is_file() and loads.read_text() == "xxx":
            proc.send_signal(signal.SIGINT)
            break
    _, rest = proc.communicate(timeout=180)
    assert proc.returncode == 130, rest
    assert (tmp_path / "loads").read_text() == "xxx"
    for work in works:
        assert not [p for p in os.listdir(work) if p.startswith("rocksdb-tuner-")], work
    stopped = optuna.load_study(study_name="apart", storage=f"sqlite:///{tmp_path / 'out' / 'study.db'}")  # no summary yet
    before = {t.number for t in stopped.trials if TrialRecord.of(t).outcome == "complete"}
    again = subprocess.run(args, env=cluster.env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    trials = _trials(tmp_path / "out")
    assert [TrialRecord.of(t).outcome for t in trials].count("complete") == 6
    # built again: the driver's, and each node's that ran a trial of the resumed study (one only, when
    # the nodes had finished all but one trial before the Ctrl-C took effect)
    nodes = {_node(t).node_id for t in trials if t.number not in before and TrialRecord.of(t).outcome == "complete"}
    assert nodes and (tmp_path / "loads").read_text() == "xxx" + "x" * (1 + len(nodes))
    for work in works:
        assert not [p for p in os.listdir(work) if p.startswith("rocksdb-tuner-")], work


def test_a_killed_worker_process_is_retried_and_the_study_completes(cluster, tmp_path, work_dir):
    """Last of the shared cluster's tests: it kills one of the cluster's worker processes (Ray starts
    another; the cluster itself stays up)."""
    out = tmp_path / "out"
    proc = subprocess.Popen([*TUNER, "tune", "--no-drain", "--revalidate", "0", "--ray-address", cluster.address,
                             "--workload", "fillrandom",
                             "--scale", "0.5", "--trials", "3", "--seed", "4", "--parallel", "2", "--no-baselines",
                             "--out", str(out), "--work-dir", str(work_dir), "--no-plots"],
                            env=cluster.env, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline:
        if any(line.startswith("trial ") for line in lines):  # the baseline is done: trials are running
            found = subprocess.run(["pgrep", "-f", "--", f"--db={work_dir}/"], capture_output=True, text=True)
            pids = found.stdout.split()
            if pids:
                parent = int(Path(f"/proc/{pids[0]}/stat").read_text().rsplit(")", 1)[1].split()[1])
                # db_bench (exec'd by setpriv) is a child of the Ray worker: kill the worker process itself
                while "ray::" not in Path(f"/proc/{parent}/cmdline").read_text() and parent > 1:
                    parent = int(Path(f"/proc/{parent}/stat").read_text().rsplit(")", 1)[1].split()[1])
                os.kill(parent, signal.SIGKILL)
                killed = parent
        time.sleep(0.1)
    assert killed, "no db_bench of this study ever ran"
    proc.wait(timeout=600)
    reader.join(timeout=10)
    err = "".join(lines)
    assert proc.returncode == 0, err[-3000:]
    assert "retrying it once" in err
    trials = [t for t in _trials(out) if TrialRecord.of(t).outcome in ("complete", "failed")]
    assert [TrialRecord.of(t).outcome for t in trials].count("complete") == 3
    retried = [t for t in trials if TrialRecord.of(t).attempts == 2]
    assert len(retried) == 1 and 0 in TrialRecord.of(retried[0]).lost_attempts
    assert leftovers(work_dir) == []  # the killed worker's DB directory was removed by a later task
