"""Setting up .agent/ in a worktree: `agitmem init`, and a new worktree's
post-checkout."""
from __future__ import annotations

import os
import re
import shutil
import sys

from agitmem import audit
from agitmem import config
from agitmem import memory
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.errors import AgitmemError
from agitmem.porcelain import context
from agitmem.porcelain import write
from agitmem.porcelain.sharing import add_fetch_specs
from agitmem.porcelain.sharing import fetch_on_init
from agitmem.repo import Repo
from agitmem.resources import resource_dir


# settings that bound what memory may cost or hide from the user: a
# config.yaml that came with fetched memory (whoever can push to the remote
# wrote it) may tighten them, never loosen them for this clone: the user
# raises one in their own .agent/config.yaml
BOUNDS = ('max_file_kb', 'budget_tokens', 'network_timeout', 'max_rules')
KEPT_ON = ('user_tattoo',)  # the user's own tattoo, loaded first


def _loosened(cfg: dict[str, object]) -> list[str]:
    return [
        k for k in (*BOUNDS, *KEPT_ON)
        if (cfg[k] is False if k in KEPT_ON else cfg[k] > config.DEFAULTS[k])
    ]


def fetched_config(data: bytes, ref: str, default: bytes) -> bytes:
    """The config.yaml to adopt from memory fetched on `ref`: a setting
    that loosens a bound is commented out (the default holds), one line on
    stderr each; a file where that cannot be done line by line (a flow
    mapping) is not adopted: the template (`default`) is.  Refuses (one
    line) a file that is no valid config, before anything is written."""
    from agitmem.memory import decode
    shown = f'.agent/config.yaml on {repo_mod.short_ref(ref)}'
    # a byte that is not UTF-8 (in a comment, most likely) is adopted as
    # it is, read as U+FFFD (config.load says so); a BOM, NUL or CRLF is not
    text = decode(data.decode('utf-8', 'replace').encode(), shown)
    loose = _loosened(config.parse(text, shown))
    if not loose:
        return data
    cfg = config.parse(text, shown)
    text = data.decode('utf-8', 'surrogateescape')  # commented out, the bytes kept
    for key in loose:
        print(
            f'agitmem: {shown}: {key}: {cfg[key]} not taken (the default '
            f'{config.DEFAULTS[key]} holds): fetched memory may tighten a '
            f'bound, not loosen it; set it in .agent/config.yaml yourself',
            file=sys.stderr,
        )
    key_line = re.compile(rf'^(?:{"|".join(loose)})\s*:')
    kept = ''.join(
        f'# not taken from fetched memory (agitmem init): {line}' if key_line.match(line) else line
        for line in text.splitlines(keepends=True)
    )
    adopted = kept.encode('utf-8', 'surrogateescape')
    if _loosened(config.parse(adopted.decode('utf-8', 'replace'), shown)):
        print(f'agitmem: {shown}: not adopted, the default settings are written', file=sys.stderr)
        return default
    return adopted


def initialize(repo: Repo, ref: str | None) -> list[str]:
    """Create .agent/ (memory already on the ref wins over the templates),
    exclude it, make the first memory commit.  Idempotent: existing files
    are never overwritten.  Returns what to tell the user."""
    if repo.agent_dir.is_symlink() or repo.memory_dir.is_symlink():
        raise AgitmemError(
            '.agent/memory is a symlink; agitmem keeps memory in a real '
            'directory inside the repository',
        )
    for sub in ('hooks', 'log'):
        # what init writes there would land wherever the link points (a
        # cloned repository can track one)
        if (repo.agent_dir / sub).is_symlink():
            raise AgitmemError(
                f'.agent/{sub} is a symlink; agitmem writes its {sub} in a real '
                f'directory inside the repository: remove it and run init again',
            )
    if not repo.agent_dir.exists():
        context.refuse_over_stash(repo)
    if repo.memory_dir.is_dir():
        # memory already there is checked before anything is created: a
        # broken file is reported, not half an init written around it
        store.read_memory(
            repo, max_file_kb=config.load(repo)['max_file_kb'],
        )
    templates = resource_dir('templates')
    created = []
    adopted = None
    branch, head = repo_mod.head(repo)
    # memory that already exists on the ref (a clone, a re-init) wins over
    # the templates, its config.yaml included; existing files are never
    # overwritten
    fetch_on_init(repo)  # a fresh clone: the memory refs its remote has
    pr = store.open_repo(repo)
    early = ref or os.environ.get('AGITMEM_REF')
    top_ref = repo_mod.memory_ref(repo, branch, override=early)
    if branch is None:
        context.settle_detached(repo, top_ref)
    top = store.tip(pr, top_ref)
    # a fetched tree is untrusted: refused entries stop init before it
    # writes, a file over the bound of the config that will hold (the one
    # here, else the fetched one within the defaults) too
    source = store.tree_files(pr, top.tree) if top is not None else {}
    adopt = None
    if not repo.config_path.exists() and memory.CONFIG in source:
        adopt = fetched_config(
            source[memory.CONFIG], top_ref, (templates / memory.CONFIG).read_bytes(),
        )
    bound = config.parse(adopt.decode('utf-8', 'replace')) if adopt is not None else config.load(repo)
    if top is not None:
        store.check_tree(pr, top.tree, max_file_kb=bound['max_file_kb'])
    repo.memory_dir.mkdir(parents=True, exist_ok=True)
    if not repo.config_path.exists():
        if adopt is not None:
            repo_mod.atomic_write(repo.config_path, adopt)
            adopted = top
        else:
            shutil.copyfile(templates / memory.CONFIG, repo.config_path)
        created.append('.agent/config.yaml')
    cfg = config.load(repo)
    ctx = context.make(repo, cfg, ref, head=(branch, head))
    if cfg['ref'] and not early:  # the ref named in the config just read
        top = store.tip(pr, ctx.ref)
        source = store.tree_files(pr, top.tree, max_file_kb=cfg['max_file_kb']) if top is not None else {}
    for name in memory.LAYERS:
        target = repo.memory_dir / name
        if target.exists() or target.is_symlink():
            continue
        if name in source:
            repo_mod.atomic_write(target, source[name])
        else:
            shutil.copyfile(templates / name, target)
        created.append(f'.agent/memory/{name}')
    archived = {
        path for path in source
        if path.startswith(f'{memory.ARCHIVE}/') and not (repo.memory_dir / path).exists()
    }
    if archived:
        # through store's safe-path check, as every checkout
        store.checkout(repo, source, only=archived)

    hooks = resource_dir('hooks')
    if hooks.is_dir():
        for shim in sorted(hooks.glob('*.sh')):
            target = repo.agent_dir / 'hooks' / shim.name
            if not target.exists():
                repo_mod.atomic_write(target, shim.read_bytes(), mode=0o755)
                created.append(f'.agent/hooks/{shim.name}')
    (repo.agent_dir / 'log').mkdir(exist_ok=True)
    if repo_mod.exclude_agent_dir(repo):
        created.append('/.agent/ in .git/info/exclude')

    oid = write.save(ctx, 'init: agitmem memory', event='init')
    specs = add_fetch_specs(repo) if cfg['fetch_refspec'] else []
    audit.log(repo.agent_dir, 'write init', ', '.join(created) or 'nothing new')
    said = [f'created {c}' for c in created] + specs
    if adopted is not None:
        rules = config.load(repo).get('enforce') or []
        said.append(
            f'.agent/config.yaml is the one on {top_ref} (commit '
            f'{str(adopted.id)[:12]} by {adopted.author.name}): review it, it '
            f'came with the memory ({len(rules)} enforce rule(s) run on every commit)',
        )
    if oid is not None:
        said.append(f'memory committed to {ctx.ref} ({str(oid)[:12]})')
    elif not created and not specs:
        said.append(f'already initialised: memory on {ctx.ref}')
    return said
