"""``rocksdb-tuner ui``: the MLflow UI on the project's tracking store, on loopback by default."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tuner.observers.mlflow import DEFAULT_DIR, TrackingError, resolve_uri

_START_TIMEOUT = 120.0


def server_command(uri: str, host: str, port: int) -> list[str]:
    """``mlflow server`` on a SQLite store, artifacts served from the directory beside the DB file."""
    artifacts = Path(uri[len("sqlite:///"):]).parent
    return [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", uri,
            "--default-artifact-root", str(artifacts), "--host", host, "--port", str(port), "--workers", "1"]


def serve(explicit_uri: str | None, host: str, port: int) -> int:
    """Start the UI, print its address when it answers, and run until Ctrl-C."""
    uri, source = resolve_uri(explicit_uri)
    flag = "--mlflow-uri" if source in ("default", "--mlflow-uri") else source
    if uri.startswith(("http://", "https://")):
        print(f"{uri} is an MLflow server: its UI is at {uri}")
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
    # The server's own log goes to stderr, so stdout carries only the address line.
    proc = subprocess.Popen(server_command(uri, host, port), stdout=sys.stderr)
    address = f"http://{host}:{port}"
    try:
        deadline = time.monotonic() + _START_TIMEOUT
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(address + "/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        if proc.poll() is not None:
            print(f"rocksdb-tuner: error: mlflow server exited with code {proc.returncode}", file=sys.stderr)
            return 1
        print(f"MLflow UI on {uri}: {address}  (Ctrl-C stops it)", flush=True)
        return proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        return 0
