"""`agitmem doctor`: is everything wired?  Each finding names the command
that fixes it.  Reads only: nothing is written, no memory is saved."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agitmem import config
from agitmem import githooks
from agitmem import inject
from agitmem import memory
from agitmem import platforms
from agitmem import render
from agitmem import repo as repo_mod
from agitmem import store
from agitmem import tokens
from agitmem.agents import launcher
from agitmem.agents import mcp_settings
from agitmem.agents import settings
from agitmem.agents import trust
from agitmem.checks import tattoo_size
from agitmem.errors import AgitmemError
from agitmem.memory import tattoo as tattoo_mod
from agitmem.porcelain import context
from agitmem.porcelain import read
from agitmem.porcelain import saved
from agitmem.porcelain import sharing
from agitmem.porcelain import write
from agitmem.repo import MEMORY_NS
from agitmem.repo import REMOTES_NS
from agitmem.repo import Repo

OK = 'ok'
WARNING = 'warning'
ERROR = 'error'

AGENTS = ('claude', 'codex', 'gemini')
CLAUDE_CHARS = 10_000  # Claude Code moves hook output over this to a file
CODEX_TOKENS = 2_500  # Codex spills hook text over about this to a file
# the agitmem pre-commit hook for each git hook (.pre-commit-hooks.yaml)
PRE_COMMIT_IDS = {
    'pre-commit': 'agitmem-check',
    'commit-msg': 'agitmem-commit-msg',
    'post-commit': 'agitmem-record',
    'pre-push': 'agitmem-push',
    'post-checkout': 'agitmem-branch',
    'post-merge': 'agitmem-merge',
    'post-rewrite': 'agitmem-rewrite',
}


@dataclass(frozen=True)
class Finding:
    check: str
    level: str
    message: str
    fix: str | None = None


@dataclass(frozen=True)
class Where:
    """An agent's settings file that holds agitmem hooks."""
    agent: str
    scope: str
    shown: str
    found: dict[str, list[str]]
    # what makes a project file's hooks run other code (settings.entry_problems)
    problems: tuple[str, ...] = ()


# -- agents -------------------------------------------------------------------

def installed_agents(repo: Repo, home: Path) -> tuple[list[Where], list[Finding]]:
    """(each agent's settings file holding agitmem hooks; an error for each
    that is there but cannot be read: its hooks, and whether they run what
    they should, cannot be known, and the client may read it otherwise,
    JSON with comments, or refuse it)."""
    ret = []
    unreadable = []
    for agent in AGENTS:
        seen: set[Path] = set()
        for scope in settings.SCOPES:
            path = settings.settings_file(agent, scope, repo.root, home)
            if path in seen:
                continue
            seen.add(path)
            found, why = settings.read_installed(agent, path)
            if why is not None:
                unreadable.append(Finding(
                    'agent-hooks', ERROR,
                    f'{agent}: {render.line(why)}: its hooks cannot be checked',
                    f'fix or remove {settings.relative(agent, scope)}, then `agitmem install {agent} --scope {scope}`',
                ))
            if found:
                # the user's own file is theirs to set an env in; a project's is a clone's
                problems = tuple(settings.inherited_env(agent, repo.root))
                if scope != 'user':
                    problems += tuple(settings.entry_problems(agent, path))
                ret.append(Where(agent, scope, settings.relative(agent, scope), found, problems))
    return ret, unreadable


def _reaches(
        command: str,
        path: list[str],
        here: subprocess.Popen[str] | None,
        cache: dict[str, str | None],
        root: Path | None = None,
) -> str | None:
    """None when hook `command` reaches a working agitmem on `path`; else
    what is wrong.  The command is parsed and resolved, never run: the only
    program run is this agitmem, when the command calls it."""
    if command not in cache:
        why, python = launcher.check(command, path, root)
        if why is None and python is not None:
            if _HERE not in cache:
                cache[_HERE] = launcher.runs_here(here)
            why = cache[_HERE]
        cache[command] = why
    return cache[command]


_HERE = '\0this agitmem'  # the cache's key for whether this agitmem runs


def check_agents(
        wheres: list[Where],
        path: list[str],
        here: subprocess.Popen[str] | None = None,
        root: Path | None = None,
) -> list[Finding]:
    if not wheres:
        return [Finding(
            'agent-hooks', WARNING,
            'no agent has agitmem hooks: memory is not reloaded after a compaction',
            'agitmem install claude   (or codex, gemini)',
        )]
    ret = []
    cache: dict[str, str | None] = {}
    for w in wheres:
        reinstall = f'agitmem install {w.agent} --scope {w.scope}'
        missing = settings.missing_events(w.agent, w.found)
        if missing:
            ret.append(Finding(
                'agent-hooks', ERROR,
                f'{w.agent}: {w.shown} lacks agitmem\'s {", ".join(missing)} hook(s)',
                reinstall,
            ))
        commands = sorted({c for cs in w.found.values() for c in cs})
        broken: dict[str, list[str]] = {}
        for c in commands:
            why = _reaches(c, path, here, cache, root)
            if why is not None:
                broken.setdefault(why, []).append(c)
        for why, cs in broken.items():
            more = f' (and {len(cs) - 1} more like it)' if len(cs) > 1 else ''
            ret.append(Finding(
                'agent-hooks', ERROR,
                f'{w.agent}: the hook command `{render.line(cs[0])}`{more} in {w.shown}: {why}',
                f'{reinstall}   (or install agitmem as a tool: see the README)',
            ))
        for problem in w.problems:
            ret.append(Finding(
                'agent-hooks', ERROR,
                f'{w.agent}: {w.shown}: {render.line(problem)}: the hooks would not run agitmem alone',
                f'remove that env from {w.shown} (agitmem writes none), then `{reinstall}`',
            ))
        if not missing and not broken and not w.problems:
            launchers = sorted({shlex.join(launcher.launcher(shlex.split(c)) or []) for c in commands})
            ret.append(Finding(
                'agent-hooks', OK,
                f'{w.agent}: {len(w.found)} hooks in {w.shown}, `{", ".join(launchers)}` '
                f'reaches agitmem on the PATH an agent client gets',
            ))
            if launchers == ['agitmem'] and launcher.hook_program(path) is not None:
                ret.append(Finding(
                    'agent-hooks', WARNING,
                    f'{w.agent}: the hooks in {w.shown} start through agitmem\'s console script, '
                    f'whose wrapper costs about half of Python\'s own start on every hook; '
                    f'`{launcher.HOOK_PROGRAM}` (installed beside it) does not',
                    reinstall,
                ))
    return ret


MCP_TIMEOUT = 30  # seconds for this agitmem's MCP server to answer the handshake


def check_mcp(
        repo: Repo,
        wheres: list[Where],
        path: list[str],
        home: Path,
        environ: Mapping[str, str],
        *,
        timeout: float = MCP_TIMEOUT,
) -> list[Finding]:
    """agitmem's MCP server entries: parsed by launcher's rules (never
    run); when one calls this agitmem, this agitmem's own `mcp` is started
    and asked `initialize` and `tools/list` within `timeout`."""
    from agitmem.porcelain import mcp_tools
    ret = []
    seen: set[tuple[Path, tuple[str, ...]]] = set()
    registered: set[str] = set()
    handshake: tuple[list[str] | None, str | None] | None = None
    for agent in AGENTS:
        for scope in mcp_settings.SCOPES:
            where = mcp_settings.place(agent, scope, repo.root, home, environ)
            if (where.path, where.keys) in seen:
                continue
            seen.add((where.path, where.keys))
            entry = mcp_settings.installed(agent, scope, repo.root, home, environ)
            if entry is None:
                continue
            registered.add(agent)
            reinstall = f'agitmem install {agent} --scope {scope} --mcp'
            argv = mcp_settings.argv_of(entry)
            shown = render.line(shlex.join(argv)) if argv else 'no command'
            if not mcp_settings.is_ours(entry):
                ret.append(Finding(
                    'mcp-server', WARNING,
                    f'{agent}: the MCP server named agitmem in {where.shown} is not agitmem\'s: `{shown}`',
                    f'rename or remove it, then `{reinstall}`',
                ))
                continue
            assert argv is not None
            in_repo = where.base == repo.root  # a clone's file, not the user's
            # what makes it run the project's code is said first: it is
            # never started, whatever its command line
            why, python = (launcher.entry_problem(entry) if in_repo else None), None
            if why is None:
                why, python = launcher.check_mcp(argv, path, repo.root if in_repo else None)
            if why is None and python is not None:
                if handshake is None:
                    handshake = launcher.mcp_tools_here(timeout)
                tools, why = handshake
                lacking = [t.name for t in mcp_tools.TOOLS if tools is not None and t.name not in tools]
                if why is None and lacking:
                    why = f'its server lacks the tools {", ".join(lacking)}'
            if why is not None:
                ret.append(Finding(
                    'mcp-server', ERROR,
                    f'{agent}: the MCP server `{shown}` in {where.shown}: {render.line(why)}',
                    f'{reinstall}   (the MCP server needs `pip install "agitmem[mcp]"`)',
                ))
            else:
                ret.append(Finding(
                    'mcp-server', OK,
                    f'{agent}: MCP server agitmem in {where.shown} starts and lists its tools',
                ))
    hooked = sorted({w.agent for w in wheres} - registered)
    if hooked:
        ret.append(Finding(
            'mcp-server', OK,
            f'{", ".join(hooked)}: no agitmem MCP server (optional: memory as tools)',
        ))
    return ret


def check_trust(repo: Repo, wheres: list[Where], home: Path, environ: Mapping[str, str]) -> list[Finding]:
    ret = []
    codex = [w for w in wheres if w.agent == 'codex']
    if codex:
        ret.append(Finding(
            'codex-trust', WARNING,
            'codex: Codex runs new or changed hooks only after you trust them, '
            'and skips untrusted ones without a word; agitmem cannot read that trust',
            'in `codex`, run /hooks and trust the agitmem hooks (or run '
            '`codex exec --trust --dangerously-bypass-hook-trust ...`)',
        ))
        if any(w.scope != 'user' for w in codex):
            trusted = trust.codex_project_trusted(repo.root, home, environ)
            where = trust.codex_home(home, environ) / 'config.toml'
            if trusted is None:
                ret.append(Finding(
                    'codex-trust', WARNING, f'codex: {where} cannot be read: project trust unknown',
                ))
            elif not trusted:
                ret.append(Finding(
                    'codex-trust', ERROR,
                    f'codex: this project is not trusted in {where}: Codex does '
                    f'not load .codex/hooks.json',
                    f'start `codex` in {repo.root} and trust the project (or '
                    f'`codex exec --trust ...` once)',
                ))
            else:
                ret.append(Finding('codex-trust', OK, 'codex: the project is trusted'))
    if any(w.agent == 'gemini' for w in wheres):
        if trust.gemini_folder_trusted(repo.root, home, environ):
            ret.append(Finding('gemini-trust', OK, 'gemini: the folder is trusted'))
        else:
            ret.append(Finding(
                'gemini-trust', ERROR,
                'gemini: this folder is not trusted: Gemini CLI ignores its '
                'settings and hooks (and exits 55 headless)',
                f'start `gemini` in {repo.root} and trust the folder (or add '
                f'"{repo.root}": "TRUST_FOLDER" to ~/.gemini/trustedFolders.json, '
                f'or set GEMINI_CLI_TRUST_WORKSPACE=true)',
            ))
    return ret


# -- git hooks ------------------------------------------------------------------

TEXT_MAX = 4 * 1024 * 1024  # bytes of a hook, config or conflicts file doctor reads


def _text(path: Path) -> str | None:
    """A file's text; None when it is missing, no regular file (a clone's
    link to /dev/zero or /dev/stdin), unreadable or over TEXT_MAX."""
    try:
        return repo_mod.read_regular(path, TEXT_MAX).decode('utf-8', 'replace')
    except OSError:
        return None


def _pre_commit_config(repo: Repo) -> tuple[set[str], list[str]] | None:
    """(hook ids, default_install_hook_types) of .pre-commit-config.yaml."""
    text = _text(repo.root / '.pre-commit-config.yaml')
    if text is None:
        return None
    import yaml
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    ids = set()
    for r in data.get('repos') or []:
        for h in (r.get('hooks') or []) if isinstance(r, dict) else []:
            if isinstance(h, dict) and isinstance(h.get('id'), str):
                ids.add(h['id'])
    types = data.get('default_install_hook_types') or ['pre-commit']
    return ids, [t for t in types if isinstance(t, str)]


def check_git_hooks(repo: Repo) -> list[Finding]:
    d = githooks.hooks_dir(repo)
    pc = _pre_commit_config(repo)
    ours = set(PRE_COMMIT_IDS.values())
    uses_pre_commit = pc is not None and bool(pc[0] & ours)
    # why each missing stage is missing: no hook id, not a hook type, not installed
    no_id: list[str] = []
    no_type: list[str] = []
    not_installed: list[str] = []
    for name in githooks.HOOKS:
        text = _text(d / name)
        if githooks.is_ours(text) or githooks.is_ours(_text(d / f'{name}{githooks.LEGACY}')):
            continue
        if pc is None or not uses_pre_commit or PRE_COMMIT_IDS[name] not in pc[0]:
            no_id.append(name)
        elif name not in pc[1]:
            no_type.append(name)
        elif text is None or githooks.PRE_COMMIT_MARK not in text:
            not_installed.append(name)
    ret = []
    if no_id and uses_pre_commit:
        ids = ', '.join(PRE_COMMIT_IDS[n] for n in no_id)
        ret.append(Finding(
            'git-hooks', ERROR, f'git hooks missing: {", ".join(no_id)}',
            f'add {ids} to the agitmem repo\'s hooks in .pre-commit-config.yaml, '
            f'then `pre-commit install`',
        ))
    elif no_id:
        ret.append(Finding(
            'git-hooks', ERROR, f'git hooks missing: {", ".join(no_id)}',
            'agitmem install git',
        ))
    if no_type:
        ret.append(Finding(
            'git-hooks', ERROR, f'git hooks missing: {", ".join(no_type)}',
            f'add {", ".join(no_type)} to default_install_hook_types in '
            f'.pre-commit-config.yaml, then `pre-commit install`',
        ))
    if not_installed:
        ret.append(Finding(
            'git-hooks', ERROR, f'git hooks missing: {", ".join(not_installed)}',
            'pre-commit install ' + ' '.join(f'--hook-type {n}' for n in not_installed),
        ))
    if not ret:
        ret.append(Finding('git-hooks', OK, f'git hooks: all {len(githooks.HOOKS)} in place'))
    return ret


def check_git_shims(repo: Repo, path: list[str]) -> list[Finding]:
    """agitmem's shims run `agitmem` from PATH, else the interpreter that
    installed them: one of the two must be there (read, not run).  Shims
    an older agitmem wrote still run, without what it has learned since
    (v4: a relative PATH entry, a directory of the repository, is never
    searched for agitmem; v5: post-commit starts no Python while the
    memory is saved as it is): a warning."""
    d = githooks.hooks_dir(repo)
    texts = [_text(d / name) for name in githooks.HOOKS]
    old = [
        name for name, text in zip(githooks.HOOKS, texts)
        if (v := githooks.shim_version(text)) is not None and v < githooks.VERSION
    ]
    ret = [Finding(
        'git-hooks', WARNING,
        f'git hooks written by an older agitmem: {", ".join(old)}', 'agitmem install git',
    )] if old else []
    if launcher.which('agitmem', path) is not None:
        return ret
    gone = sorted({
        python for text in texts
        if (python := githooks.shim_python(text)) is not None and
        not os.access(python, os.X_OK)
    })
    if not gone:
        return ret
    return [*ret, Finding(
        'git-hooks', ERROR,
        f'the git hooks fall back to {render.line(gone[0])}, which is gone, and '
        f'`agitmem` is not on your login shell\'s PATH: every hook fails',
        'agitmem install git',
    )]


# -- memory -----------------------------------------------------------------------

_RENAMED = re.compile(r'^Branch: renamed refs/heads/(.+) to refs/heads/(.+)$')


def _renamed_from(ctx: context.Context) -> str | None:
    """The branch this one was renamed from, when that rename is the last
    thing its reflog records."""
    if ctx.branch is None:
        return None
    last = repo_mod.git_out(ctx.repo, 'log', '-g', '-1', '--format=%gs', f'refs/heads/{ctx.branch}')
    m = _RENAMED.match(last)
    return m[1] if m and m[2] == ctx.branch else None


def check_memory(ctx: context.Context) -> list[Finding]:
    pr = store.open_repo(ctx.repo)
    top = store.tip(pr, ctx.ref)
    name = ctx.branch or 'detached HEAD'
    ret = []
    held = write.foreign(ctx)
    renamed = _renamed_from(ctx) if top is None and held is not None else None
    if renamed is not None and held == repo_mod.memory_ref(ctx.repo, renamed):
        # `git branch -m` runs no hook: the next write carries the memory over
        ret.append(Finding(
            'memory-ref', WARNING,
            f'{renamed} was renamed to {name}: its memory ({held}) moves to {ctx.ref} '
            f'at the next save',
            'agitmem save',
        ))
        held = top = None
    elif top is None:
        ret.append(Finding(
            'memory-ref', ERROR, f'{ctx.ref} does not exist: the memory of {name} is saved nowhere',
            'agitmem save',
        ))
    if held is not None:
        ret.append(Finding(
            'memory-ref', ERROR,
            f'.agent/memory holds the memory of {repo_mod.short_ref(held)} ({held}), '
            f'not of {name} (a branch switch no post-checkout hook saw)',
            'agitmem save   (saves it to its branch, checks out this one\'s)',
        ))
    if top is not None and held is None:
        ret.append(Finding('memory-ref', OK, f'memory of {name} on {ctx.ref} ({str(top.id)[:12]})'))

    try:
        files = store.read_memory(ctx.repo, max_file_kb=ctx.cfg['max_file_kb'])
    except AgitmemError as e:
        ret.append(Finding('unsaved', ERROR, str(e), 'fix the file named, then `agitmem save`'))
    else:
        against = store.base(ctx.repo, pr) or top
        old = store.tree_files(pr, against.tree) if against is not None else {}
        changed = sorted(p for p in set(old) | set(files) if old.get(p) != files.get(p))
        if changed:
            more = f' and {len(changed) - 5} more' if len(changed) > 5 else ''
            ret.append(Finding(
                'unsaved', WARNING,
                f'unsaved memory: {", ".join(render.line(c) for c in changed[:5])}{more}', 'agitmem save',
            ))
        else:
            ret.append(Finding('unsaved', OK, 'no unsaved memory'))

    from agitmem import caches
    # agitmem's own file: a link (to a file outside the repository) is none
    kept = caches.own(saved.conflicts_path(ctx.repo), TEXT_MAX)
    conflicts = None if kept is None else kept.decode('utf-8', 'replace')
    if conflicts and conflicts.strip():
        lines = conflicts.strip().splitlines()
        ret.append(Finding(
            'conflicts', ERROR,
            f'{len(lines)} unresolved memory conflict(s): {render.line(lines[0])}',
            'resolve the conflict markers in .agent/memory/, then `agitmem save`',
        ))
    else:
        ret.append(Finding('conflicts', OK, 'no unresolved memory conflicts'))
    return ret


def check_remotes(ctx: context.Context) -> list[Finding]:
    remotes = repo_mod.remotes(ctx.repo)
    if not remotes:
        return [Finding('fetch-refspec', OK, 'no remotes: memory stays here')]
    ret = []
    if ctx.cfg['fetch_refspec']:
        for remote in remotes:
            if sharing.has_fetch_spec(ctx.repo, remote):
                ret.append(Finding('fetch-refspec', OK, f'git fetch {remote} brings memory'))
            else:
                ret.append(Finding(
                    'fetch-refspec', ERROR,
                    f'git fetch {remote} does not bring memory (`review` and a '
                    f'pull find none)',
                    f"git config --add remote.{remote}.fetch '{sharing.fetch_spec(remote)}'",
                ))
    remote = sharing.default_remote(ctx)
    if remote in remotes and ctx.ref.startswith(MEMORY_NS):
        name = ctx.ref.removeprefix(MEMORY_NS)
        theirs_ref = f'{REMOTES_NS}{remote}/{name}'
        pr = store.open_repo(ctx.repo)
        theirs = store.tip(pr, theirs_ref)
        ours = store.tip(pr, ctx.ref)
        if theirs is None:
            ret.append(Finding(
                'remote-memory', WARNING,
                f'{remote} has no memory of {name} (as of the last fetch): '
                f'`review` of this branch finds none there',
                f'agitmem push {remote}',
            ))
        elif ours is not None and ours.id != theirs.id and not store.contains(pr, theirs.id, ours.id):
            ret.append(Finding(
                'remote-memory', WARNING,
                f'{remote} lacks memory commits of {name} (as of the last fetch)',
                f'agitmem push {remote}',
            ))
        else:
            ret.append(Finding('remote-memory', OK, f'{remote} has the memory of {name}'))
    if remote in remotes:
        from agitmem.porcelain import forge
        ret.extend(Finding(
            'unmerged-memory', WARNING,
            repo_mod.shown(f'the memory of {b} is kept: its branch is gone but its memory is in no base'),
            repo_mod.shown(f'{render.command("merge", b)} (on the base), or `agitmem prune` once its code landed'),
        ) for b in forge.unmerged_orphans(ctx, remote))
    return ret


def check_injection(ctx: context.Context, codex: bool) -> list[Finding]:
    try:
        mem = read.layers(ctx.repo, ctx.cfg)
        fresh = read.freshness(ctx.repo, mem.state, ctx.ref)
    except AgitmemError as e:
        return [Finding('injection', ERROR, f'the injection cannot be built: {e}', 'agitmem check')]
    budget = ctx.cfg['budget_tokens']
    # the larger form: the one given after a compaction
    block = inject.build(mem, budget_tokens=budget, after_compact=True, fresh=fresh)
    chars = len(block.text)
    ret = []
    said = f'{block.tokens} tokens (budget {budget}), {chars:,} characters'
    fix = 'shorten tattoo.md and state.json (they are never cut), or raise budget_tokens in .agent/config.yaml'
    if block.tokens > budget:
        ret.append(Finding('injection', ERROR, f'injection over budget: {said}', fix))
    if chars > CLAUDE_CHARS or chars > inject.MAX_CHARS:
        ret.append(Finding(
            'injection', ERROR,
            f'injection {chars:,} characters: over the {inject.MAX_CHARS:,} cap '
            f'(Claude Code moves hook output over {CLAUDE_CHARS:,} to a file)',
            'shorten tattoo.md and state.json',
        ))
    if codex and block.tokens > CODEX_TOKENS:
        ret.append(Finding(
            'injection', ERROR,
            f'injection {block.tokens} tokens: Codex moves hook text over about '
            f'{CODEX_TOKENS:,} tokens to a file',
            f'set budget_tokens to {CODEX_TOKENS} or less in .agent/config.yaml',
        ))
    elif codex and budget > CODEX_TOKENS:
        ret.append(Finding(
            'injection', WARNING,
            f'budget_tokens {budget} lets the injection grow past what Codex '
            f'shows in full (about {CODEX_TOKENS:,} tokens)',
            f'set budget_tokens to {CODEX_TOKENS} or less in .agent/config.yaml',
        ))
    for w in block.warnings:
        ret.append(Finding('injection', WARNING, w))
    if not ret:
        ret.append(Finding(
            'injection', OK,
            f'injection {said}: within every client\'s cap (Claude Code {CLAUDE_CHARS:,} '
            f'characters, Codex ~{CODEX_TOKENS:,} tokens)',
        ))
    return ret


def check_tattoo(ctx: context.Context) -> list[Finding]:
    """A tattoo over its share of the injection cap: beside a state that
    needs the rest, rules are cut from the injection so the state stays in
    (with a short state they may all still fit: a warning, not an error)."""
    try:
        rules = tattoo_mod.combine(
            tattoo_mod.parse(read.user_tattoo(ctx.cfg)),
            tattoo_mod.parse(read.layer(ctx.repo, memory.TATTOO)),
        )
    except AgitmemError:
        return []  # check_injection says what cannot be read
    why = tattoo_size.over_bound(rules)
    if why is None:
        return [Finding('tattoo-size', OK, f'tattoo: {len(rules)} rules, within its share of the injection')]
    return [Finding(
        'tattoo-size', WARNING,
        f'{why}: whenever tattoo and state pass the {tokens.INJECTION_MAX_CHARS:,}-character cap, '
        'rules that do not fit beside the state are left out of the injection',
        'shorten or drop rules in .agent/memory/tattoo.md (`agitmem check` shows where it passes)',
    )]


# -- all of it -----------------------------------------------------------------------

def diagnose(
        repo: Repo,
        *,
        home: Path | None = None,
        environ: Mapping[str, str] | None = None,
) -> list[Finding]:
    home = home or Path.home()
    environ = os.environ if environ is None else environ
    wheres, unreadable = installed_agents(repo, home)
    # the login shell answers while the other checks run
    login = launcher.start_login(environ)
    here = launcher.start_here() if wheres else None
    trust = check_trust(repo, wheres, home, environ)
    git = check_git_hooks(repo)
    memory = _check_memory_all(repo, codex=any(w.agent == 'codex' for w in wheres))
    try:
        path = launcher.client_path(environ, login)
        agents = check_agents(wheres, path, here, repo.root)
        agents += check_mcp(repo, wheres, path, home, environ)
        git += check_git_shims(repo, path)
    finally:
        if here is not None and here.poll() is None:  # no hook called it
            here.kill()
            here.communicate()
    return unreadable + agents + trust + git + memory + check_platform()


def check_platform() -> list[Finding]:
    """Which platform this is, and what doctor cannot check on it."""
    return [Finding('platform', OK, platforms.describe())] + [
        Finding('platform', WARNING, f'not checked on this platform: {what}') for what in platforms.unchecked()
    ]


def _check_memory_all(repo: Repo, *, codex: bool) -> list[Finding]:
    try:
        context.require_memory(repo)
        cfg: dict[str, Any] = config.load(repo)
    except AgitmemError as e:
        return [Finding('memory-ref', ERROR, str(e), 'agitmem init')]
    ctx = context.make(repo, cfg)
    return check_memory(ctx) + check_remotes(ctx) + check_injection(ctx, codex=codex) + check_tattoo(ctx)
