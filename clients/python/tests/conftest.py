"""Fixtures: a real coordinator (``gamesolver serve``) and a real worker (``gamesolver-worker``),
the release binaries of this repository, on a free port of 127.0.0.1 with a fresh SQLite store
in a temporary folder, an API token and a worker token. Every process started here is stopped
by a finalizer (SIGTERM, then SIGKILL), whatever the tests do.

The binaries are looked up in ``GAMESOLVER_BIN_DIR``, else ``target/release`` of the repository
(``cargo build --release -p gamesolver -p gamesolver-worker`` makes them).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
CLIENT_DIR = REPO / "clients" / "python"
BIN_DIR = Path(os.environ.get("GAMESOLVER_BIN_DIR") or REPO / "target" / "release")
API_TOKEN = "py-client-test-token"
WORKER_TOKEN = "py-client-worker-token"
START_WAIT = 30.0
"""Longest wait for a process to come up, seconds (a bound, not a measurement)."""


def binary(name: str) -> Path:
    p = BIN_DIR / name
    if not p.exists():
        pytest.fail(
            f"{p} not found: build it with `cargo build --release -p gamesolver -p gamesolver-worker`"
            " or set GAMESOLVER_BIN_DIR"
        )
    return p


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def base_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GAMESOLVER_API_TOKEN", "GAMESOLVER_WORKER_TOKEN", "GAMESOLVER_URL")
    }
    env["RUST_LOG"] = "error"
    env["RUST_BACKTRACE"] = "0"
    return env


class Proc:
    """A child process, stopped by :meth:`stop` (SIGTERM, then SIGKILL after 5 s)."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.name = name
        self.p = subprocess.Popen(
            args, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
        )
        self.lines: list[str] = []
        # Drain the output so the child never blocks on a full pipe; keep it for failures.
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.lines.append(line.rstrip("\n"))

    def alive(self) -> bool:
        return self.p.poll() is None

    def kill9(self) -> None:
        if self.alive():
            self.p.kill()
        self.p.wait(10)

    def stop(self) -> None:
        if self.alive():
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(10)


@dataclass
class Service:
    """A coordinator and its workers."""

    url: str
    coordinator: Proc
    workers: list[Proc] = field(default_factory=list)
    folder: Path = Path(".")

    def stop(self) -> None:
        for w in self.workers:
            w.stop()
        self.coordinator.stop()


def start_service(folder: Path, workers: int = 1, threads: int = 2) -> Service:
    """A coordinator on a fresh store in ``folder`` and ``workers`` worker processes of
    ``threads`` slots, up and registered; stopped again if anything fails on the way."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = base_env()
    env["GAMESOLVER_API_TOKEN"] = API_TOKEN
    env["GAMESOLVER_WORKER_TOKEN"] = WORKER_TOKEN
    coord = Proc(
        "coordinator",
        [
            str(binary("gamesolver")), "serve", "--listen", f"127.0.0.1:{port}",
            "--db", str(folder / "db.sqlite"), "--local-workers", "0",
            # Heartbeats every second: running tasks report progress often.
            "--lease-ms", "3000",
        ],
        env, folder,
    )
    service = Service(url, coord, folder=folder)
    try:
        wait_for(lambda: healthy(url), f"coordinator at {url}", coord)
        wenv = base_env()
        wenv["GAMESOLVER_WORKER_TOKEN"] = WORKER_TOKEN
        for i in range(workers):
            service.workers.append(
                Proc(
                    f"worker {i}",
                    [str(binary("gamesolver-worker")), "--coordinator", url, "--threads", str(threads)],
                    wenv, folder,
                )
            )
        wait_for(lambda: registered(url) >= workers, f"{workers} workers registered", coord)
    except BaseException:
        service.stop()
        raise
    return service


def healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def registered(url: str) -> int:
    try:
        r = httpx.get(
            f"{url}/v1/status", headers={"Authorization": f"Bearer {API_TOKEN}"}, timeout=2
        )
        return len(r.json().get("workers", []))
    except (httpx.HTTPError, ValueError):
        return 0


def wait_for(cond: object, what: str, proc: Proc) -> None:
    assert callable(cond)
    end = time.monotonic() + START_WAIT
    while time.monotonic() < end:
        if cond():
            return
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited: " + "\n".join(proc.lines[-20:]))
        time.sleep(0.05)
    raise RuntimeError(f"no {what} within {START_WAIT} s: " + "\n".join(proc.lines[-20:]))


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One coordinator and one worker (2 slots) for the session."""
    s = start_service(tmp_path_factory.mktemp("service"))
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def token_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The API token in the environment, where the client reads it (as the CLI does)."""
    monkeypatch.setenv("GAMESOLVER_API_TOKEN", API_TOKEN)


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs the ``gamesolver`` command line (in-process jobs) to its end."""
    return subprocess.run(
        [str(binary("gamesolver")), *args], env=base_env(), cwd=cwd, capture_output=True,
        text=True, timeout=120,
    )
