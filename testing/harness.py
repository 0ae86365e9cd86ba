"""What running a real agent client offline is the same for all three.

``testing.claude_cli``, ``testing.codex_harness`` and ``testing.gemini_cli``
keep only their client's own parts (the command line, its environment, its
settings file, how its output reads).  This module is the rest: a scratch git
repository with a private ``HOME``, the environment cleaned of the outer
session's variables, hooks that log their payloads, and a client process run
in its own session with a wall-clock bound (a timeout ends the hooks it
started too)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from testing import loopback

CLI_TIMEOUT = 120  # seconds, per CLI run


@dataclass
class Run:
    """One finished client run and the requests the stand-in saw during it."""
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[Any]  # the stand-in's recorded requests, in order
    result: dict[str, Any] = field(default_factory=dict)  # the JSON result, where the client prints one

    def of_kind(self, kind: str) -> list[Any]:
        """The requests the stand-in classified as ``kind`` ("main", "summary", ...)."""
        return [r for r in self.requests if r.kind == kind]

    @property
    def model_requests(self) -> list[Any]:
        return self.of_kind("main")

    @property
    def session_id(self) -> str:
        return str(self.result.get("session_id", ""))

    def describe(self) -> str:
        return (
            f"$ {' '.join(self.args)}\nexit {self.returncode} after {self.seconds:.1f}s\n"
            f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-3000:]}\n"
            f"requests: {[f'{r.method} {r.path} [{r.kind}]' for r in self.requests]}"
        )


@dataclass
class Running:
    """A client started in the background (``Harness.start``)."""
    proc: subprocess.Popen[str]
    args: list[str]
    started: float
    timeout: float
    seen: int  # how many requests the stand-in had recorded before it

    @property
    def wall(self) -> float:
        """The wall-clock time it started (requests are stamped with time.time())."""
        return time.time() - (time.monotonic() - self.started)


RunT = TypeVar("RunT", bound=Run)
ServerT = TypeVar("ServerT", bound="loopback.Server[Any, Any]")


class Harness(Generic[ServerT, RunT]):
    """A scratch repo, a private HOME, a model-API stand-in and a client CLI."""

    # prefixes of the outer session's variables that must not reach the client
    # (an outer agent's own settings; git's GIT_DIR would redirect the repo)
    drop_prefixes: ClassVar[tuple[str, ...]] = ("AGITMEM_", "GIT_")
    # a hook's output when it only logs (Gemini CLI parses a hook's stdout as JSON)
    log_echo: ClassVar[str] = ""

    def __init__(self, cli: str, base: Path, server: ServerT) -> None:
        self.cli = cli
        self.server = server
        self.base = base
        self.repo = base / "repo"
        self.home = base / "home"
        self.hook_log = base / "hook-log"
        for d in (self.repo, self.home, self.hook_log):
            d.mkdir(parents=True, exist_ok=True)
        self.env = self._make_env()
        self.runs: list[RunT] = []

    # -- the environment ------------------------------------------------------
    # the client's own variables: the one that points it at the stand-in,
    # and the rest (a key, offline switches)
    base_url_var: ClassVar[str | None] = None
    client_vars: ClassVar[dict[str, str]] = {}

    def client_env(self) -> dict[str, str]:
        env = dict(self.client_vars)
        if self.base_url_var:
            env[self.base_url_var] = self.server.url
        return env

    def _make_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith(self.drop_prefixes)}
        # The agitmem of this interpreter first: hooks call `agitmem` by name,
        # and a pyenv shim would look under the private HOME.
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            AGITMEM_HOME=str(self.home / ".agent"),
            NO_COLOR="1",
        )
        env.update(self.client_env())
        return env

    # -- the scratch repository ---------------------------------------------
    def init_repo(self, files: dict[str, str] | None = None) -> None:
        """``git init -b main`` with one commit holding ``files``."""
        self.git("init", "-q", "-b", "main")
        for rel, text in (files or {"README.md": "# scratch\n"}).items():
            path = self.repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.git("add", "-A")
        self.git("-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-q", "-m", "initial")

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.repo), *args], check=True, capture_output=True, text=True, env=self.env,
        ).stdout

    # -- agitmem in the scratch repository ------------------------------------
    def agitmem(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run this interpreter's agitmem in the repo, as the client's hooks do."""
        script = Path(sys.executable).parent / "agitmem"
        argv = [str(script)] if script.exists() else [sys.executable, "-P", "-m", "agitmem"]
        proc = subprocess.run(
            [*argv, *args], cwd=self.repo, env=self.env, capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL, check=False,
        )
        if check:
            assert proc.returncode == 0, (
                f"agitmem {' '.join(args)} exited {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
            )
        return proc

    # -- the project's settings file (hooks live there) -----------------------
    @property
    def settings_path(self) -> Path:
        raise NotImplementedError

    def read_settings(self) -> dict[str, Any]:
        if not self.settings_path.exists():
            return {}
        settings: dict[str, Any] = json.loads(self.settings_path.read_text())
        return settings

    def write_settings(self, settings: dict[str, Any]) -> None:
        self.settings_path.parent.mkdir(parents=True, exist_ok=True)
        self.settings_path.write_text(json.dumps(settings, indent=2) + "\n")

    # -- hooks that log their payloads ---------------------------------------
    def log_command(self, event: str) -> str:
        """A shell command that saves its stdin payload under ``hook_log``."""
        command = f'cat > "{self.hook_log}/{event}-$(date +%s%N).json"'
        return f"{command}; echo '{self.log_echo}'" if self.log_echo else command

    def logging_hook(self, event: str) -> dict[str, Any]:
        return {"type": "command", "command": self.log_command(event)}

    def hook_payloads(self, event: str | None = None, session: str | None = None) -> list[dict[str, Any]]:
        """Logged payloads in the order the hooks ran, optionally of one event
        or one session."""
        found = []
        for path in self.hook_log.glob("*.json"):
            name, _, stamp = path.stem.rpartition("-")
            if event is not None and name != event:
                continue
            try:
                payload = json.loads(path.read_text())
            except ValueError:
                payload = {"unparsable": path.read_text()}
            if session is None or payload.get("session_id") == session:
                found.append((int(stamp) if stamp.isdigit() else 0, payload))
        return [payload for _, payload in sorted(found, key=lambda item: item[0])]

    # -- running the client ----------------------------------------------------
    def start(self, args: list[str], *, env: dict[str, str] | None = None, timeout: float = CLI_TIMEOUT) -> Running:
        """Start the client in the background, in its own session; ``finish`` waits."""
        seen = len(self.server.requests)
        proc = subprocess.Popen(
            args,
            cwd=self.repo,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # so a timeout can end the hooks it started too
        )
        return Running(proc, args, time.monotonic(), timeout, seen)

    def wait(self, running: Running) -> tuple[str, str, float]:
        """(stdout, stderr, seconds) of a started client; past its bound the
        whole session is killed and the test fails with what it printed."""
        proc = running.proc
        left = max(1.0, running.timeout - (time.monotonic() - running.started))
        try:
            stdout, stderr = proc.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            raise AssertionError(
                f"{Path(self.cli).name} did not finish within {running.timeout}s: {' '.join(running.args)}\n"
                f"stdout: {stdout[-2000:]}\nstderr: {stderr[-2000:]}\n"
                f"requests: {self.server.endpoints()[running.seen:]}"
            ) from None
        return stdout, stderr, time.monotonic() - running.started

    # a headless run: the flags after `-p PROMPT`, the run's class, and the
    # key of its JSON result that says the run failed
    headless_flags: ClassVar[tuple[str, ...]] = ()
    error_key: ClassVar[str] = "error"

    def headless(
        self,
        prompt: str,
        kind: type[RunT],
        *,
        resume: str | None = None,
        extra_args: tuple[str, ...] = (),
        timeout: float = CLI_TIMEOUT,
        check: bool = True,
    ) -> RunT:
        """``CLI -p PROMPT`` printing one JSON result; with ``check`` it must
        exit 0 with a result that reports no error."""
        args = [self.cli, "-p", prompt, *self.headless_flags]
        if resume:
            args += ["--resume", resume]
        run = self.run_json([*args, *extra_args], kind, timeout=timeout)
        if check:
            assert run.returncode == 0, run.describe()
            assert run.result, "no JSON result on stdout\n" + run.describe()
            assert not run.result.get(self.error_key), run.describe()
        return run

    def run_json(self, args: list[str], kind: type[RunT], *, timeout: float = CLI_TIMEOUT) -> RunT:
        """Run a headless client that prints one JSON result; the run holds the
        requests the stand-in saw meanwhile."""
        running = self.start(args, timeout=timeout)
        stdout, stderr, seconds = self.wait(running)
        run = kind(
            args=self.shown_args(args),
            returncode=running.proc.returncode,
            stdout=stdout,
            stderr=stderr,
            seconds=seconds,
            requests=list(self.server.requests[running.seen:]),
            result=json_result(stdout),
        )
        self.runs.append(run)
        return run

    def shown_args(self, args: list[str]) -> list[str]:
        """The command line as a failure message shows it (the CLI by name)."""
        return [os.path.basename(a) if a == self.cli else a for a in args]


def json_result(stdout: str) -> dict[str, Any]:
    """The JSON object a headless client printed, or {}."""
    try:
        parsed = json.loads(stdout)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
