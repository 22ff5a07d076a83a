"""``rocksdb-tuner ui``: the MLflow UI on the project's tracking store, on loopback by default.

It prints, for each study in the store, the address that opens its trials (see
:mod:`tuner.observers._mlflow_views`), led by its answer once it has one, and MLflow's comparison of
the answer and the best trials after it; ``--open`` opens the newest study's in a browser. SIGINT,
SIGTERM and SIGHUP stop the server and all of its workers (they run in a process group of their own).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import webbrowser
from pathlib import Path
from typing import Any

from tuner.observers import (
    ALL_TRIALS,
    DEFAULT_DIR,
    PREFIX,
    RANK,
    TrackingError,
    compare_url,
    leads_with_answer,
    resolve_uri,
    study_key,
    view_url,
)

_START_TIMEOUT = 120.0
_STOP_GRACE = 10.0
MAX_STUDIES = 10


def server_command(uri: str, host: str, port: int) -> list[str]:
    """``mlflow server`` on a SQLite store, artifacts served from the directory beside the DB file."""
    artifacts = Path(uri[len("sqlite:///"):]).parent
    return [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", uri,
            "--default-artifact-root", str(artifacts), "--host", host, "--port", str(port), "--workers", "1"]


def links(uri: str, base: str) -> list[tuple[str, str]]:
    """(what, address) for the newest studies of the store: their trials, their best three side by
    side, and every trial of each experiment."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    found: list[tuple[float, str, str]] = []
    for exp in client.search_experiments():
        if PREFIX + ALL_TRIALS not in exp.tags:
            continue
        for parent in client.search_runs([exp.experiment_id], "tags.role = 'study'", max_results=MAX_STUDIES):
            uid = parent.data.tags.get("study_uid", "")
            view = exp.tags.get(PREFIX + study_key(uid))
            if view is None:
                continue
            name = f"{parent.info.run_name} (experiment {exp.name})"
            answer = client.search_runs([exp.experiment_id], f"tags.study_uid = '{uid}' and tags.answer = 'true'",
                                        max_results=1) if leads_with_answer(view) else []
            if answer:
                top = client.search_runs([exp.experiment_id], f"tags.study_uid = '{uid}' and metrics.{RANK} >= 1",
                                         order_by=[f"metrics.{RANK} ASC"], max_results=3)
                what = f"{name}: its {answer[0].info.run_name}, then its trials, best first"
                side = f"{name}: its answer and the {len(top) - 1} best trials after it side by side"
            else:
                top = client.search_runs([exp.experiment_id], f"tags.role = 'trial' and tags.study_uid = '{uid}'",
                                         order_by=["metrics.ops_per_sec DESC"], max_results=3)
                what, side = f"{name}: its trials, best first", f"{name}: its {len(top)} best trials side by side"
            found.append((parent.info.start_time, what, view_url(base, exp.experiment_id, study_key(uid))))
            if len(top) > 1:
                found.append((parent.info.start_time - 1e-3, side,
                              compare_url(base, exp.experiment_id, [r.info.run_id for r in top])))
        found.append((-1.0, f"every trial of experiment {exp.name}", view_url(base, exp.experiment_id, ALL_TRIALS)))
    return [(what, url) for _, what, url in sorted(found, key=lambda f: -f[0])]


def serve(explicit_uri: str | None, host: str, port: int, open_browser: bool = False) -> int:
    """Start the UI, print its addresses when it answers, and run until a signal stops it."""
    uri, source = resolve_uri(explicit_uri)
    flag = "--mlflow-uri" if source in ("default", "--mlflow-uri") else source
    if uri.startswith(("http://", "https://")):
        print(f"{uri} is an MLflow server: its UI is at {uri}")
        _print_links(uri, uri, open_browser)
        return 0
    if not uri.startswith("sqlite:///"):
        raise TrackingError(f"{flag}: {uri!r}: the UI needs sqlite:///PATH or an http(s) server")
    db = Path(uri[len("sqlite:///"):])
    if not db.is_file():
        hint = f" (no {DEFAULT_DIR}/ here: run it where you ran `rocksdb-tuner tune`)" if source == "default" else ""
        raise TrackingError(f"{flag}: no MLflow store at {db}{hint}")
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise TrackingError(f"--port: cannot listen on {host}:{port}: {exc.strerror}") from None
    # The server's own log goes to stderr, so stdout carries only the addresses. Its own session, so
    # that stopping it reaches gunicorn/uvicorn workers too.
    proc = subprocess.Popen(server_command(uri, host, port), stdout=sys.stderr, start_new_session=True)
    address = f"http://{host}:{port}"
    stop = _stop_on_signals()
    try:
        if not _wait_healthy(proc, address):
            print(f"rocksdb-tuner: error: mlflow server exited with code {proc.returncode}", file=sys.stderr)
            return 1
        print(f"MLflow UI on {uri}: {address}  (Ctrl-C stops it)", flush=True)
        _print_links(uri, address, open_browser)
        while proc.poll() is None and not stop:
            time.sleep(0.2)
        return proc.returncode if not stop and proc.returncode is not None else 0
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(proc)


def _print_links(uri: str, address: str, open_browser: bool) -> None:
    found = links(uri, address)
    for what, url in found:
        print(f"  {what}: {url}", flush=True)
    if not found:
        print("  (no study tracked here yet)", flush=True)
    if open_browser and found:
        webbrowser.open(found[0][1])


def _wait_healthy(proc: subprocess.Popen[Any], address: str) -> bool:
    deadline = time.monotonic() + _START_TIMEOUT
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(address + "/health", timeout=2):
                return True
        except OSError:
            time.sleep(0.5)
    return False


def _stop_on_signals() -> list[int]:
    """SIGTERM and SIGHUP end the UI as Ctrl-C does; the list records which signal came."""
    received: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        received.append(signum)

    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, handler)
    return received


def _stop(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM the server's process group; SIGKILL what is left after a grace period."""
    for sig, wait in ((signal.SIGTERM, _STOP_GRACE), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        deadline = time.monotonic() + wait  # the leader is gone: give its workers the same grace
        while time.monotonic() < deadline and _group_alive(proc.pid):
            time.sleep(0.1)
        if not _group_alive(proc.pid):
            break


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
