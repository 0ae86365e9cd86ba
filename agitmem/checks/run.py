"""Run the checks of DESIGN.md section 6: read the memory (the working
tree's `.agent/memory/`) and the change being committed, hand each check
the small part it needs, and collect the findings.

The change is either what is staged (`--staged`: the index git gave the
hook against HEAD; nothing walks the working tree) or the working tree
against HEAD.  git is asked only for what a check needs, and only once."""
from __future__ import annotations

import os
import stat

from agitmem import memory
from agitmem import repo as repo_mod
from agitmem.checks import Finding
from agitmem.checks import IDS
from agitmem.checks import merge_conflict
from agitmem.checks import progress_not_updated
from agitmem.checks import scanned
from agitmem.checks import schema
from agitmem.checks import size
from agitmem.checks import staged
from agitmem.checks import state_vs_worktree
from agitmem.checks import tattoo_size
from agitmem.checks import tattoo_vs_snapshot
from agitmem.checks import verification_stale
from agitmem.errors import AgitmemError
from agitmem.memory import state as state_mod
from agitmem.memory import tattoo as tattoo_mod
from agitmem.checks.commit_msg import enforce_rules
from agitmem.repo import Repo

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook imports this module, and typing is a tenth of its run
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any
    from typing import NamedTuple
    from typing import TypeVar
    T = TypeVar('T')
    from agitmem import diffs
    from agitmem.paths import Folding
else:
    from agitmem.tuples import NamedTuple

MEMORY = '.agent/memory/'
TATTOO = f'{MEMORY}{memory.TATTOO}'
SNAPSHOT = f'{MEMORY}{memory.SNAPSHOT}'
NEW_FILE_MAX = 16 * 1024 * 1024  # bytes of a working-tree file a check reads
STATE = f'{MEMORY}{memory.STATE}'
CONFIG = f'.agent/{memory.CONFIG}'
USER_TATTOO = f'~/.agent/memory/{memory.TATTOO}'


# -- the memory ---------------------------------------------------------------

class Memory(NamedTuple):
    files: dict[str, bytes]  # shown path -> content (within max_file_kb)
    sizes: dict[str, int]  # shown path -> size, every regular file
    unreadable: tuple[Finding, ...]  # symlinks and other non-files

    def text(self, path: str) -> str:
        """A file's text; '' when absent or not UTF-8/LF (schema says so)."""
        data = self.files.get(path)
        if data is None:
            return ''
        try:
            return memory.decode(data, path)
        except AgitmemError:
            return ''

    def texts(self) -> dict[str, str]:
        return {p: self.text(p) for p in self.files}


def _folding(repo: Repo) -> Folding:
    # asked only when a file the state names is not there as spelled
    from agitmem import paths
    return paths.folding(repo)


def read_memory(repo: Repo, *, max_file_kb: int) -> Memory:
    """Every file of .agent/memory/ and .agent/config.yaml, as they are:
    unlike `store.read_memory` this refuses nothing, so that each problem
    becomes a finding."""
    files: dict[str, bytes] = {}
    sizes: dict[str, int] = {}
    unreadable: list[Finding] = []
    limit = max_file_kb * 1024

    def add(path: str, shown: str) -> None:
        try:
            st = os.lstat(path)
        except OSError:
            return
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
            what = 'a symlink' if stat.S_ISLNK(st.st_mode) else 'not a file'
            unreadable.append(
                Finding(
                    schema.ID, 'error',
                    f'is {what}; memory files must be regular files inside '
                    f'the repository (agitmem save refuses it)',
                    path=shown,
                ),
            )
            return
        sizes[shown] = st.st_size
        if st.st_size <= limit:
            try:
                # swapped meanwhile for a link, a FIFO or a device: not read
                files[shown] = repo_mod.read_regular(path, limit, follow=False)
            except repo_mod.TooLarge:
                # grown past the limit since lstat (a note being appended):
                # over it, not checked as its first limit + 1 bytes
                sizes[shown] = limit + 1
            except OSError:
                return

    root = repo.memorydir
    if os.path.islink(root):
        add(root, MEMORY.rstrip('/'))
    else:
        for dirpath, dirnames, filenames in os.walk(root):
            # dot-names are atomic-write temp files and editor droppings
            dirnames[:] = sorted(d for d in dirnames if not d.startswith('.'))
            for name in sorted(
                    [*filenames, *(d for d in dirnames if os.path.islink(
                        os.path.join(dirpath, d),
                    ))],
            ):
                if not name.startswith('.'):
                    path = os.path.join(dirpath, name)
                    add(path, MEMORY + os.path.relpath(path, root).replace(os.sep, '/'))
    add(os.path.join(repo.agentdir, 'config.yaml'), CONFIG)
    return Memory(files, sizes, tuple(unreadable))


def user_tattoo_path() -> str:
    from agitmem import config
    return os.path.join(config.user_home_at(), 'memory', memory.TATTOO)


def _user_rules(cfg: dict[str, Any]) -> list[tattoo_mod.Rule]:
    if not cfg['user_tattoo']:
        return []
    try:
        data = repo_mod.read_regular(user_tattoo_path(), 1 << 20)  # never a FIFO's hang
        return tattoo_mod.parse(memory.decode(data, USER_TATTOO))
    except (OSError, AgitmemError):
        return []


SECRETS = 'secrets'  # checks/secrets.py's ID, imported only to scan
ENFORCE = 'enforce'  # checks/enforce.py's, imported only for rules


def scanned_check(repo: Repo, texts: dict[str, str], cfg: dict[str, Any]) -> list[Finding]:
    """The secrets check of texts (shown path -> content), the texts
    scanned clean before (checks/scanned.py) left out: when all are, the
    scanner is not even imported.  A text with an allowed finding is no
    clean one: it is scanned every time."""
    key = scanned.scanner_key()
    known = scanned.clean(repo, key)
    done = set(known)
    todo = {p: t for p, t in texts.items() if scanned.digest(t) not in done}
    if not todo:
        return []
    from agitmem.checks import secrets
    found, flagged = secrets.scanned(todo, secrets.allowlist(cfg))
    scanned.remember(repo, key, known, [scanned.digest(t) for p, t in todo.items() if p not in flagged])
    return found


def _state(text: str) -> dict[str, Any]:
    try:
        return state_mod.parse(text) if text.strip() else {}
    except AgitmemError:
        return {}


# -- the change ---------------------------------------------------------------

class Change:
    """What is being committed, compared with HEAD: the index (`staged`;
    `index` is the index file git gave the hook, None for the repository's
    own) or the working tree."""

    def __init__(
            self,
            repo: Repo,
            head: str | None,
            *,
            staged: bool,
            index: str | None = None,
    ) -> None:
        self.repo = repo
        self.head = head
        self.staged = staged
        self.index = index
        self._known: dict[str, Any] = {}

    def _once(self, name: str, make: Callable[[], T]) -> T:
        # what functools.cached_property keeps, without functools (which
        # imports collections) on the pre-commit hook's path
        if name not in self._known:
            self._known[name] = make()
        return self._known[name]  # type: ignore[no-any-return]

    def _git(self, *args: str, check: bool = True) -> str:
        env = {'GIT_INDEX_FILE': self.index} if self.index else None
        return repo_mod.git(
            *args, cwd=self.repo.top, env=env, check=check,
        ).stdout

    @property
    def tree(self) -> str:
        return self._once('tree', self._tree)

    def _tree(self) -> str:
        """The working tree's tree id (.agent/ excluded); unstaged only."""
        return repo_mod.worktree_tree(self.repo)

    def same_tree(self, tree: str) -> bool | None:
        """Whether the tree being committed is `tree`.  Staged, the index
        is compared with it (no tree is written); a tree git no longer has
        is other code."""
        if not self.staged:
            return self.tree == tree
        if not repo_mod.is_oid(tree):
            return False
        if self.head is None:
            return staged.same_index_tree(self.repo, self.index, tree)
        # a code path is the same in both when neither changes it from
        # HEAD, or both change it alike: no second read of the index
        moved = staged.moved(self.repo, self.head, tree)
        return moved is not None and moved == self.index_changes

    @property
    def index_changes(self) -> dict[str, tuple[str, str]]:
        return self._once('index_changes', self._index_changes)

    def _index_changes(self) -> dict[str, tuple[str, str]]:
        """Staged, with a HEAD: the code paths the index changes (mode
        and blob id each), without the patch."""
        assert self.head is not None
        return staged.changes(self.repo, self.index, self.head)

    @property
    def diff(self) -> str:
        return self._once('diff', self._diff)

    def _diff(self) -> str:
        if self.staged:
            return staged.diff(self.repo, self.index)
        base = self.head or repo_mod.git(
            'hash-object', '-t', 'tree', '--stdin', cwd=self.repo.top, stdin='',
        ).stdout.strip()
        from agitmem import diffs
        return self._git('diff', *diffs.DIFF_ARGS[2:], base, self.tree)

    @property
    def added(self) -> list[diffs.Added]:
        return self._once('added', self._added)

    def _added(self) -> list[diffs.Added]:
        from agitmem import diffs
        return [a for a in diffs.added_lines(self.diff) if not _ours(a.path)]

    @property
    def code_paths(self) -> list[str]:
        return self._once('code_paths', self._code_paths)

    def _code_paths(self) -> list[str]:
        if self.staged and self.head is not None:
            return list(self.index_changes)
        from agitmem import diffs
        return [p for p in diffs.changed_paths(self.diff) if not _ours(p)]

    def old_file(self, path: str) -> str | None:
        if self.head is None:
            return None
        return self._blob(f'{self.head}:{path}')

    def new_file(self, path: str) -> str | None:
        if self.staged:
            return self._blob(f':{path}')
        try:
            # a worktree file may be a link to a device: bounded, regular only
            return repo_mod.read_regular(os.path.join(self.repo.top, path), NEW_FILE_MAX).decode('utf-8', 'replace')
        except OSError:
            return None

    def _blob(self, spec: str) -> str | None:
        proc = repo_mod.git(
            'cat-file', 'blob', spec, cwd=self.repo.top, check=False,
            env={'GIT_INDEX_FILE': self.index} if self.index else None,
        )
        return proc.stdout if proc.returncode == 0 else None


def _ours(path: str) -> bool:
    return not repo_mod.is_code(path)


# -- running ------------------------------------------------------------------

def run(
        repo: Repo,
        cfg: dict[str, Any],
        ref: str,
        head: str | None,
        change: Change,
        *,
        skip: frozenset[str],
) -> list[Finding]:
    """Every check but the skipped ones, in the order of IDS."""
    mem = read_memory(repo, max_file_kb=cfg['max_file_kb'])
    tattoo = mem.text(TATTOO)
    snapshot = mem.text(SNAPSHOT)
    state_text = mem.text(STATE)
    state = _state(state_text)

    def tattoo_size_() -> list[Finding]:
        return tattoo_size.check(
            tattoo, max_rules=cfg['max_rules'], path=TATTOO,
            user=_user_rules(cfg),
        )

    def tattoo_vs_snapshot_() -> list[Finding]:
        rules = [(USER_TATTOO, r) for r in _user_rules(cfg)]
        rules.extend((TATTOO, r) for r in tattoo_mod.parse(tattoo))
        return tattoo_vs_snapshot.check(
            rules, snapshot, state, snapshot_path=SNAPSHOT,
            state_path=STATE, state_text=state_text,
        )

    def state_vs_worktree_() -> list[Finding]:
        return state_vs_worktree.check(
            state, snapshot, root=repo.top, state_path=STATE,
            snapshot_path=SNAPSHOT, state_text=state_text,
            fold=lambda: _folding(repo),
        )

    def verification_stale_() -> list[Finding]:
        return verification_stale.check(
            state, change.same_tree, state_path=STATE,
            state_text=state_text,
        )

    # the memory recorded at HEAD (its history begun ahead: checks/staged.py),
    # and its progress files' ids begun now, read while the staged diff
    # reads the index (on a big repository the longest of the hook's reads)
    recorded = None
    if head is not None and progress_not_updated.ID not in skip:
        recorded = progress_not_updated.recorded_at(repo, ref, head)
        if recorded is not None:
            progress_not_updated.begin_blobs(repo, recorded)

    def progress_not_updated_() -> list[Finding]:
        if head is None or not change.code_paths:
            return []
        progress_changed = recorded is not None and progress_not_updated.changed(
            repo,
            {
                name: mem.files.get(f'{MEMORY}{name}')
                for name in progress_not_updated.PROGRESS
            },
            progress_not_updated.blobs(repo, recorded),
            recorded,
        )
        return progress_not_updated.check(
            code_paths=change.code_paths, progress_changed=progress_changed,
            recorded=recorded, required=cfg['require_progress_update'],
        )

    def enforce_() -> list[Finding]:
        rules, _ = enforce_rules(cfg)  # a bad rule is a schema finding
        if not rules:
            return []
        # (its patterns compile as it imports: only for rules)
        from agitmem.checks import enforce
        return enforce.check(
            rules, tattoo_lines=memory.bullets(tattoo), added=change.added,
            commit_msg=None, old_files=change.old_file,
            new_files=change.new_file,
        )

    def secrets_() -> list[Finding]:
        return scanned_check(repo, mem.texts(), cfg)

    def size_() -> list[Finding]:
        return size.check(mem.sizes, max_file_kb=cfg['max_file_kb'])

    def schema_() -> list[Finding]:
        return [*mem.unreadable, *schema.check(mem.files)]

    def merge_conflict_() -> list[Finding]:
        return merge_conflict.check(mem.texts(), state=state, state_path=STATE)

    checks: dict[str, Callable[[], list[Finding]]] = {
        tattoo_size.ID: tattoo_size_,
        tattoo_vs_snapshot.ID: tattoo_vs_snapshot_,
        state_vs_worktree.ID: state_vs_worktree_,
        verification_stale.ID: verification_stale_,
        progress_not_updated.ID: progress_not_updated_,
        ENFORCE: enforce_,
        SECRETS: secrets_,
        size.ID: size_,
        schema.ID: schema_,
        merge_conflict.ID: merge_conflict_,
    }
    findings: list[Finding] = []
    for check_id in IDS:
        if check_id not in skip:
            findings.extend(checks[check_id]())
    return findings
