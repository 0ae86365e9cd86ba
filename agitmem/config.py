""".agent/config.yaml: all settings optional; defaults below."""
from __future__ import annotations

import os
import sys

from agitmem import repo as repo_mod
from agitmem.errors import AgitmemError
from agitmem.repo import Repo

# typing and pathlib are not imported at run time: the agent hooks import
# this module (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULTS: dict[str, Any] = {
    'budget_tokens': 800,  # injection budget, estimated tokens
    'stale_minutes': 10,  # snapshot/state older than this is stale
    'reload_every': 20,  # re-inject every N prompts
    'compaction_drop': 0.4,  # a context drop over this fraction = compaction
    'checkpoint_at': 0.7,  # ask for a checkpoint at this share of the window
    'push_strict': False,  # pre-push fails when the memory could not be pushed
    # seconds a fetch or push of memory may take before it is stopped
    # ($AGITMEM_NETWORK_TIMEOUT wins)
    'network_timeout': 30,
    # seconds RELATED (after a compaction) may search memory history not
    # read before; clamped to 0.05..5 (a hook must answer well within a
    # client's limit: Gemini CLI stops one at 15 s)
    'related_seconds': 1.0,
    'context_window': None,  # tokens; None: the agent's own (see hook.py)
    'max_rules': 20,  # tattoo rules before `tattoo-size` warns
    'max_file_kb': 256,  # a memory file larger than this is refused
    'require_progress_update': False,
    'block_stop_without_progress': False,
    'user_tattoo': True,  # load ~/.agent/memory/tattoo.md first
    'ref': None,  # override the memory ref
    'fetch_refspec': True,  # init adds the memory fetch refspec to each remote
    'enforce': [],
    # shell commands the hooks record as test runs (None: pytest, tox, nox,
    # npm/yarn/pnpm test, jest, vitest, go/cargo/mvn/gradle/make test, ctest, rspec,
    # and the runners of more languages: verification.DEFAULT_COMMANDS)
    'verification_commands': None,
    # false alarms of the secret scanner dismissed: `allow:` fingerprints
    # of values (`patterns:` only in the user's own config: user_secrets)
    'secrets': None,
}
MAX_BYTES = 1024 * 1024  # a config.yaml is a few hundred bytes
_TYPES: dict[str, tuple[type, ...]] = {
    'budget_tokens': (int,),
    'stale_minutes': (int, float),
    'reload_every': (int,),
    'compaction_drop': (float, int),
    'checkpoint_at': (float, int),
    'push_strict': (bool,),
    'network_timeout': (int, float),
    'related_seconds': (int, float),
    'context_window': (int, type(None)),
    'max_rules': (int,),
    'max_file_kb': (int,),
    'require_progress_update': (bool,),
    'block_stop_without_progress': (bool,),
    'user_tattoo': (bool,),
    'ref': (str, type(None)),
    'fetch_refspec': (bool,),
    'enforce': (list,),
    'verification_commands': (list, type(None)),
    'secrets': (dict, type(None)),
}


def _key_line(text: str, key: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith(f'{key}:') or line.startswith(f'{key} :'):
            return i
    return 1


def _is_blank(text: str) -> bool:
    # the template as shipped is all comments: no need to load yaml
    # (a noticeable part of a hook's run time)
    return all(not ln.strip() or ln.lstrip().startswith('#') for ln in text.splitlines())


# text -> its parsed YAML, for texts read in this process (a check of the
# same config.yaml then needs no yaml either)
_PARSED: dict[str, object] = {}


def parse(text: str, path: str = 'config.yaml') -> dict[str, Any]:
    if _is_blank(text):
        return dict(DEFAULTS)
    raw = _PARSED[text] if text in _PARSED else _yaml(text, path)
    cfg = settings(raw, text, path)
    _PARSED[text] = raw
    return cfg


def _yaml(text: str, path: str) -> object:
    import yaml
    try:
        raw = yaml.load(text, Loader=getattr(yaml, 'CSafeLoader', yaml.SafeLoader))
    except yaml.YAMLError as e:
        mark = getattr(e, 'problem_mark', None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(e, 'problem', None) or 'not valid YAML'
        raise AgitmemError(f'{path}:{line}: not valid YAML: {problem}')
    return raw


def settings(raw: object, text: str, path: str) -> dict[str, Any]:
    """The settings of a parsed config.yaml, checked (`text` for line
    numbers)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise AgitmemError(f'{path}:1: must be a mapping of settings')
    cfg = dict(DEFAULTS)
    for key, value in raw.items():
        line = _key_line(text, str(key))
        if key not in DEFAULTS:
            known = ', '.join(DEFAULTS)
            raise AgitmemError(
                f'{path}:{line}: unknown setting "{key}" (known: {known})',
            )
        types = _TYPES[key]
        if (
                not isinstance(value, types) or
                (isinstance(value, bool) and bool not in types)
        ):
            want = ' or '.join(
                'null' if t is type(None) else t.__name__ for t in types
            )
            raise AgitmemError(f'{path}:{line}: "{key}" must be {want}')
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            # NaN and infinity (YAML's .nan, .inf) are out of range too
            if not 0 < value < float('inf') or (key == 'compaction_drop' and value >= 1):
                raise AgitmemError(
                    f'{path}:{line}: "{key}" is out of range: {value}',
                )
        cfg[key] = value
    commands = cfg['verification_commands']
    if commands is not None and not all(isinstance(c, str) and c.strip() for c in commands):
        raise AgitmemError(
            f'{path}:{_key_line(text, "verification_commands")}: '
            f'"verification_commands" must be a list of commands',
        )
    if cfg['secrets'] is not None:
        cfg['secrets'] = secrets_allow(
            cfg['secrets'], f'{path}:{_key_line(text, "secrets")}', user=False,
        )
    # enforce rules are checked now: a config `check` cannot apply is never
    # saved
    if cfg['enforce']:
        cfg['enforce'] = enforce_rules(
            cfg['enforce'], source=f'{path}:{_key_line(text, "enforce")}',
        )
    return cfg


# -- enforce: tattoo rules git checks on the staged change (checks/enforce.py)

ENFORCE_KINDS = ('forbid', 'commit_msg', 'dependencies')
ENFORCE_KEYS = ('rule', *ENFORCE_KINDS, 'files')


def _rule_where(n: int, item: dict[object, object]) -> str:
    rule = item.get('rule')
    text = f' ("{rule}")' if isinstance(rule, str) else ''
    return f'enforce rule {n}{text}'


def _rule_regex(value: object, key: str, where: str) -> str:
    import re  # here only: not on the hooks' paths (agitmem/jsontext.py)
    if not isinstance(value, str) or not value:
        raise AgitmemError(f'{where}: `{key}` must be a regex (a string)')
    try:
        re.compile(value)
    except re.error as e:
        raise AgitmemError(
            f'{where}: `{key}` regex {value!r} does not compile: {e}',
        )
    from agitmem import redos  # only a config with enforce rules pays for it
    why = redos.problem(value)
    if why is not None:
        raise AgitmemError(
            f'{where}: `{key}` regex {value!r} can take exponential time on '
            f'some lines: it holds {why}; rewrite it (e.g. `(a+)+` as `a+`)',
        )
    return value


def _rule_strings(value: object, key: str, what: str, where: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if (
            not isinstance(value, list) or
            not all(isinstance(s, str) and s for s in value) or
            (key == 'files' and not value)
    ):
        raise AgitmemError(f'{where}: `{key}` must be {what}')
    return list(value)


def enforce_rules(
        enforce: object,
        *,
        source: str = 'config.yaml',
) -> list[dict[str, object]]:
    """The `enforce:` value of the config, checked and normalized (`files`
    is a list); raises AgitmemError naming the first problem."""
    if enforce is None:  # `enforce:` with nothing under it
        return []
    if not isinstance(enforce, list):
        raise AgitmemError(
            f'{source}: `enforce` must be a list of rules, '
            f'not a {type(enforce).__name__}',
        )

    ret: list[dict[str, object]] = []
    for n, item in enumerate(enforce, 1):
        if not isinstance(item, dict):
            raise AgitmemError(
                f'{source}: enforce rule {n} must be a mapping with `rule:` '
                f'and one of `forbid:`, `commit_msg:`, `dependencies:`',
            )
        where = f'{source}: {_rule_where(n, item)}'
        for key in item:
            if key not in ENFORCE_KEYS:
                raise AgitmemError(
                    f'{where}: unknown key `{key}` '
                    f'(known: {", ".join(ENFORCE_KEYS)})',
                )
        rule = item.get('rule')
        if not isinstance(rule, str) or not rule.strip():
            raise AgitmemError(
                f'{where}: `rule:` is missing; give the text of the tattoo '
                f'line the rule enforces',
            )
        kinds = [kind for kind in ENFORCE_KINDS if kind in item]
        if len(kinds) != 1:
            found = ', '.join(f'`{k}`' for k in kinds) or 'none'
            raise AgitmemError(
                f'{where}: needs exactly one of `forbid:`, `commit_msg:`, '
                f'`dependencies:` (found: {found})',
            )
        kind, = kinds

        out: dict[str, object] = {'rule': rule.strip()}
        if kind == 'dependencies':
            out[kind] = _rule_strings(
                [] if item[kind] is None else item[kind],
                kind, 'a list of package names', where,
            )
        else:
            out[kind] = _rule_regex(item[kind], kind, where)
        if 'files' in item:
            if kind != 'forbid':
                raise AgitmemError(
                    f'{where}: `files` only applies to `forbid`',
                )
            out['files'] = _rule_strings(
                item['files'], 'files', 'a glob or a list of globs', where,
            )
        ret.append(out)
    return ret


# -- secrets: the scanner's allowlist (secrets.Allow) ------------------------

# compiled on first use by re's own cache: not at import, on every hook's path
_FINGERPRINT = r'sha256:[0-9a-f]{64}'


def secrets_allow(value: object, where: str, *, user: bool) -> dict[str, list[str]]:
    """A `secrets:` setting, checked: `allow`, fingerprints of values the
    scanner printed; `patterns`, regexes a whole value matches, only in
    the user's own config (`user`): a memory config comes with a clone or
    a fetch, and a pattern there (`.*`) would dismiss every finding."""
    import re  # here only: not on the hooks' paths (agitmem/jsontext.py)
    if not isinstance(value, dict):
        raise AgitmemError(f'{where}: "secrets" must be a mapping (allow: [...])')
    known = ('allow', 'patterns') if user else ('allow',)
    for key in value:
        if key == 'patterns' and not user:
            raise AgitmemError(
                f'{where}: "secrets: patterns" is honoured only in your own '
                f'config ($AGITMEM_HOME/config.yaml, else ~/.agent/config.yaml), '
                f'never in a memory config; list fingerprints under `allow:`',
            )
        if key not in known:
            raise AgitmemError(f'{where}: unknown key "secrets: {key}" (known: {", ".join(known)})')
    allow = value.get('allow') or []
    if not isinstance(allow, list) or not all(
            isinstance(f, str) and re.fullmatch(_FINGERPRINT, f) for f in allow
    ):
        raise AgitmemError(
            f'{where}: "secrets: allow" must be a list of fingerprints '
            f'(sha256: and 64 hex digits, as `agitmem check` prints them)',
        )
    patterns = value.get('patterns') or []
    if not isinstance(patterns, list):
        raise AgitmemError(f'{where}: "secrets: patterns" must be a list of regexes')
    for n, pattern in enumerate(patterns, 1):
        _rule_regex(pattern, 'patterns', f'{where}: secrets pattern {n}')
        if re.fullmatch(pattern, ''):
            raise AgitmemError(
                f'{where}: secrets pattern {n} {pattern!r} matches an empty '
                f'value: it would dismiss any finding; make it match the values',
            )
    return {'allow': list(allow), 'patterns': list(patterns)}


def user_secrets() -> dict[str, list[str]]:
    """The `secrets:` of the user's own config (user_settings), checked;
    empty lists when there is none."""
    raw, text = _user_read()
    if raw.get('secrets') is None:
        return {'allow': [], 'patterns': []}
    return secrets_allow(raw['secrets'], f'{user_config_shown()}:{_key_line(text, "secrets")}', user=True)


def cache_path(repo: Repo) -> str:
    return os.path.join(repo.gitdir, 'agitmem', 'config-cache.json')


def load(repo: Repo) -> dict[str, Any]:
    return load_read(repo)[0]


def load_read(repo: Repo) -> tuple[dict[str, Any], bytes | None]:
    """`load`, and the bytes of config.yaml it read (None: no file).

    The settings in .agent/config.yaml.  Its YAML, once parsed, is kept
    in this worktree's git dir (`cache_path`) under the SHA-1 of the
    file's bytes, so that a command or hook does not import yaml (about
    12 ms) while the file is unchanged; the settings are checked every
    time.

    Not beside config.yaml, where it was: .agent/ is the agent's to edit,
    and there an unversioned parse that switched an `enforce` rule off
    went unseen while config.yaml still showed the rule.  A parse cannot
    be verified without parsing (what the cache saves), so it is kept
    where git keeps the hooks that run the checks: whoever can forge it
    there can as well delete the pre-commit hook, so it opens no new way
    round a check."""
    from agitmem import caches
    from agitmem.memory import decode
    from agitmem.memory import decode_shown
    path = os.path.join(repo.agentdir, 'config.yaml')
    shown = '.agent/config.yaml'
    if not os.path.lexists(path):
        return dict(DEFAULTS), None
    # a cloned repository can track config.yaml as a link to /dev/zero (read
    # without end) or a FIFO (waits for ever): a regular file, bounded
    data = caches.read(path, MAX_BYTES)
    if data is None:
        if not os.path.exists(path):
            return dict(DEFAULTS), None  # a dangling link: no settings
        raise AgitmemError(
            f'{shown}: not a regular file of at most {MAX_BYTES // 1024} KB '
            f'(a link to a device or a pipe?): make it one, or remove it',
        )
    replaced = data.decode('utf-8', 'replace')
    if replaced.encode() != data:
        # the settings still hold (a cloned one may carry a stray byte in a
        # comment): YAML takes no surrogate, so each such byte is read as
        # U+FFFD, and said so; a BOM, NUL or CRLF is refused as ever
        said = (decode_shown(data, shown)[1] or '').split(', shown as')[0]
        print(f'agitmem: {said}, read as U+FFFD', file=sys.stderr)
    text = decode(replaced.encode(), shown)
    if _is_blank(text) or text in _PARSED:
        return parse(text, shown), data
    cache = cache_path(repo)
    key = repo_mod.sha1(data)
    known = _kept(cache, key, text)
    cfg = parse(text, shown)
    if not known:
        try:
            import json
            repo_mod.atomic_write(
                cache, json.dumps({'sha1': key, 'raw': _PARSED[text]}).encode(), durable=False,
            )
        except (OSError, TypeError, ValueError):
            pass  # a value JSON cannot hold (a date): parsed again next time
        # the cache an older agitmem kept beside config.yaml: never read
        try:
            os.unlink(os.path.join(repo.agentdir, '.config-cache.json'))
        except FileNotFoundError:
            pass
    return cfg, data


def _kept(cache: str, key: str, text: str) -> bool:
    """Whether the cache holds the YAML of the config.yaml whose bytes
    hash to `key` (then in _PARSED for `text`; `parse` checks its settings
    like any other)."""
    # (never a FIFO's hang, nor /dev/zero's memory, nor a damaged file's error)
    from agitmem import caches
    kept = caches.read_json(cache)
    if not isinstance(kept, dict) or kept.get('sha1') != key:
        return False
    _PARSED[text] = kept.get('raw')
    return True


# -- the user's own config ($AGITMEM_HOME/config.yaml, ~/.agent/config.yaml)
#
# Written by the user alone: no clone, fetched memory or model writes it,
# so what it allows is what the user confirmed.  Only its own keys are
# read here; a repository's .agent/config.yaml never reaches them.

class NoHome(AgitmemError):
    """The user has no home directory agitmem can name: the user's own
    config and tattoo are none (nothing of theirs to read)."""


def user_home_at() -> str:
    """$AGITMEM_HOME, else ~/.agent (no pathlib: load reads the user's
    tattoo there).  Its `~` is expanded (an MCP or hook entry's env reaches
    agitmem unexpanded); a relative one is refused, and a home that names
    no absolute directory is none (NoHome): either would name a directory
    of the project agitmem runs in, whose files a clone writes (its
    verify_commands run, its patterns allow)."""
    home = os.environ.get('AGITMEM_HOME')
    if not home:
        path = os.path.expanduser('~')
        if not os.path.isabs(path):
            # HOME unset with a uid no passwd entry names (a container's
            # CI job), or HOME relative: `~/.agent` would be a directory
            # of the project agitmem runs in, whose files a clone writes
            raise NoHome('no home directory ($HOME unset or relative): your own config is not read')
        return os.path.join(path, '.agent')
    path = os.path.expanduser(home)
    if path.startswith('~'):
        raise RuntimeError('Could not determine home directory.')  # (as pathlib's expanduser)
    if not os.path.isabs(path):
        raise AgitmemError(
            'AGITMEM_HOME is a relative path: it would name a directory of the '
            'project agitmem runs in; make it absolute (your own config is not read)',
        )
    return path


def user_config_shown() -> str:
    return '$AGITMEM_HOME/config.yaml' if os.environ.get('AGITMEM_HOME') else '~/.agent/config.yaml'


def user_settings() -> dict[str, Any]:
    """The user's config as a mapping ({} when there is none)."""
    return _user_read()[0]


def _user_read() -> tuple[dict[str, Any], str]:
    """The user's config ($AGITMEM_HOME/config.yaml, else
    ~/.agent/config.yaml) and its text.  Read like a clone's file
    (bounded, a regular file only): a dotfile manager's symlink is
    followed, a device or a pipe is refused."""
    from agitmem import caches
    from agitmem.memory import decode
    try:
        path = os.path.join(user_home_at(), 'config.yaml')  # (no pathlib: the pre-commit hook reads it)
    except NoHome:
        return {}, ''
    shown = user_config_shown()
    if not os.path.exists(path):
        return {}, ''
    data = caches.read(path, MAX_BYTES)
    if data is None:
        raise AgitmemError(
            f'{shown}: not a regular file of at most {MAX_BYTES // 1024} KB: make it one, or remove it',
        )
    text = decode(data, shown)
    raw = {} if _is_blank(text) else _yaml(text, shown)
    if raw is None:
        return {}, text
    if not isinstance(raw, dict):
        raise AgitmemError(f'{shown}:1: must be a mapping of settings')
    return raw, text


def user_verify_commands() -> list[list[str]]:
    """The commands the user's own config lets the MCP `verify` tool run
    (`verify_commands:`, each a command line, split as a shell would,
    never run through one)."""
    import shlex
    raw = user_settings().get('verify_commands')
    if raw is None:
        return []
    shown = user_config_shown()
    if not isinstance(raw, list):
        raise AgitmemError(f'{shown}: "verify_commands" must be a list of command lines')
    ret = []
    for item in raw:
        try:
            argv = shlex.split(item) if isinstance(item, str) else []
        except ValueError:
            argv = []
        if not argv:
            raise AgitmemError(f'{shown}: "verify_commands" must be a list of command lines')
        ret.append(argv)
    return ret
