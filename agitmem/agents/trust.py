"""Whether an agent will run the hooks of a project: what can be read of
Codex's and Gemini CLI's trust decisions (docs/clients-codex.md,
docs/agents.md).  Codex's per-hook trust is kept by hash inside Codex and
cannot be read from here; its project trust and Gemini's folder trust can."""
from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

from agitmem.repo import read_regular

MAX_BYTES = 16 * 1024 * 1024  # a trust file is small; a link to /dev/zero is not


def codex_home(home: Path, environ: Mapping[str, str]) -> Path:
    configured = environ.get('CODEX_HOME')
    return Path(configured) if configured else home / '.codex'


def codex_project_trusted(
        root: Path, home: Path, environ: Mapping[str, str],
) -> bool | None:
    """`[projects."<root>"] trust_level = "trusted"` in $CODEX_HOME/
    config.toml (what `codex exec --trust` or the trust prompt writes).
    None when the file cannot be read."""
    path = codex_home(home, environ) / 'config.toml'
    try:
        data = tomllib.loads(read_regular(path, MAX_BYTES).decode())
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    projects = data.get('projects')
    if not isinstance(projects, dict):
        return False
    for name in {str(root), os.path.realpath(root)}:
        entry = projects.get(name)
        if isinstance(entry, dict) and entry.get('trust_level') == 'trusted':
            return True
    return False


def _read_json(path: Path) -> object:
    try:
        return json.loads(read_regular(path, MAX_BYTES))
    except (OSError, ValueError, RecursionError):
        return None


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def gemini_folder_trusted(
        root: Path, home: Path, environ: Mapping[str, str],
) -> bool:
    """Gemini CLI's folder trust, as it decides it without an IDE: the
    GEMINI_CLI_TRUST_WORKSPACE override, folder trust turned off in the
    user settings (it is on by default), else the longest rule in
    trustedFolders.json that holds the folder (TRUST_PARENT rules name a
    folder whose parent is trusted)."""
    if environ.get('GEMINI_CLI_TRUST_WORKSPACE', '').lower() == 'true':
        return True
    user = _read_json(home / '.gemini' / 'settings.json')
    if isinstance(user, dict):
        security = user.get('security')
        folder_trust = security.get('folderTrust') if isinstance(security, dict) else None
        if isinstance(folder_trust, dict) and folder_trust.get('enabled') is False:
            return True
    rules_path = environ.get('GEMINI_CLI_TRUSTED_FOLDERS_PATH')
    rules = _read_json(Path(rules_path) if rules_path else home / '.gemini' / 'trustedFolders.json')
    if not isinstance(rules, dict):
        return False
    here = os.path.realpath(root)
    best = -1
    trusted = False
    for rule, level in rules.items():
        if not isinstance(rule, str) or level not in ('TRUST_FOLDER', 'TRUST_PARENT', 'DO_NOT_TRUST'):
            continue
        folder = os.path.dirname(rule) if level == 'TRUST_PARENT' else rule
        if _within(here, os.path.realpath(folder)) and len(rule) > best:
            best = len(rule)
            trusted = level != 'DO_NOT_TRUST'
    return trusted
