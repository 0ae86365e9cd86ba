"""Finding the real agent clients the end-to-end tests drive (Claude Code,
Codex, Gemini CLI): one search order for all three."""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def find_cli(
        command: str,
        *,
        label: str,
        env_var: str,
        ci_dir: str,
        package: str,
        version: Callable[[str], str | None],
) -> tuple[str | None, str]:
    """(path, why) of a working CLI, or (None, the reason to skip).

    Tried in order: ``$<env_var>``, the pinned install under ``<ci_dir>``
    (``bash .ci/install-<command>``), then PATH; ``version(path)`` says
    whether one runs (its version line) or not (None)."""
    candidates: list[tuple[str, str]] = []
    env_path = os.environ.get(env_var)
    if env_path:
        candidates.append((env_path, f"${env_var}"))
    candidates.append((str(REPO_ROOT / ci_dir / "bin" / command), ci_dir))
    on_path = shutil.which(command)
    if on_path:
        candidates.append((on_path, "PATH"))
    tried = []
    for path, origin in candidates:
        if not os.path.exists(path):
            tried.append(f"{path} ({origin}): missing")
            continue
        found = version(path)
        if found:
            return path, f"{found} from {origin}"
        tried.append(f"{path} ({origin}): does not run")
    hint = (
        f"run `bash .ci/install-{command}`"
        if shutil.which("npm")
        else f"npm is not installed, so .ci/install-{command} cannot fetch {package}"
    )
    return None, f"{label} not available ({hint}; or set {env_var}). Tried: " + "; ".join(tried or ["nothing"])


def version_line(path: str, *, env: dict[str, str] | None = None, timeout: float = 30) -> str | None:
    """The first line ``PATH --version`` prints, or None when it does not run."""
    try:
        proc = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL, env=env, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = proc.stdout.strip().splitlines()
    return lines[0].strip() if proc.returncode == 0 and lines else None
