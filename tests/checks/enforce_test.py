from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

from agitmem.checks import Finding
from agitmem.checks.enforce import check
from agitmem.checks.enforce import clean_message
from agitmem.checks.enforce import MAX_PER_RULE
from agitmem.checks.enforce import normalize
from agitmem.config import enforce_rules
from agitmem.diffs import Added
from agitmem.diffs import added_lines
from agitmem.diffs import DIFF_ARGS
from agitmem.errors import AgitmemError

TATTOO = [
    (1, 'language: python'),
    (3, 'indent with 4 spaces, never tabs'),
    (4, 'commit messages start with a ticket id'),
    (5, 'no new dependencies without approval'),
]
TABS: dict[str, object] = {
    'rule': 'indent with 4 spaces, never tabs', 'forbid': '\t',
    'files': ['*.py'],
}
TICKET: dict[str, object] = {
    'rule': 'commit messages start with a ticket id',
    'commit_msg': '^[A-Z]+-[0-9]+ ',
}
DEPS: dict[str, object] = {
    'rule': 'no new dependencies without approval',
    'dependencies': ['requests', 'PyYAML', 'typing_extensions', 'left-pad'],
}


def _no_files(path: str) -> str | None:
    return None


def _check(
        rules: list[object],
        *,
        added: list[Added] | None = None,
        commit_msg: str | None = None,
        old: dict[str, str] | None = None,
        new: dict[str, str] | None = None,
        tattoo: list[tuple[int, str]] = TATTOO,
) -> list[Finding]:
    return check(
        enforce_rules(rules),
        tattoo_lines=tattoo,
        added=added or [],
        commit_msg=commit_msg,
        old_files=(old or {}).get,
        new_files=(new or {}).get,
    )


def _added(path: str, text: str) -> list[Added]:
    """Every line of a new file, as the staged diff adds them."""
    return [Added(path, i, s) for i, s in enumerate(text.splitlines(), 1)]


def _messages(findings: list[Finding]) -> list[str]:
    return [f.message for f in findings]


# validate


def test_validate_normalizes() -> None:
    rules = enforce_rules([
        {'rule': ' no tabs ', 'forbid': '\t', 'files': '*.py'},
        TICKET,
        {'rule': 'deps', 'dependencies': None},
    ])
    assert rules == [
        {'rule': 'no tabs', 'forbid': '\t', 'files': ['*.py']},
        TICKET,
        {'rule': 'deps', 'dependencies': []},
    ]


def test_validate_nothing() -> None:
    assert enforce_rules(None) == []
    assert enforce_rules([]) == []


@pytest.mark.parametrize(
    ('enforce', 'error'),
    [
        (
            {'rule': 'x', 'forbid': 'y'},
            'cfg.yaml: `enforce` must be a list of rules, not a dict',
        ),
        (['no tabs'], 'cfg.yaml: enforce rule 1 must be a mapping'),
        (
            [TICKET, {'forbid': '\t'}],
            'cfg.yaml: enforce rule 2: `rule:` is missing',
        ),
        ([{'rule': '', 'forbid': 'x'}], '`rule:` is missing'),
        (
            [{'rule': 'r'}],
            'cfg.yaml: enforce rule 1 ("r"): needs exactly one of `forbid:`, '
            '`commit_msg:`, `dependencies:` (found: none)',
        ),
        (
            [{'rule': 'r', 'forbid': 'x', 'commit_msg': 'y'}],
            '(found: `forbid`, `commit_msg`)',
        ),
        (
            [{'rule': 'r', 'forbid': '(unclosed'}],
            'cfg.yaml: enforce rule 1 ("r"): `forbid` regex \'(unclosed\' '
            'does not compile: missing ), unterminated subpattern',
        ),
        (
            [{'rule': 'r', 'commit_msg': '[A-Z'}],
            '`commit_msg` regex \'[A-Z\' does not compile',
        ),
        ([{'rule': 'r', 'forbid': 3}], '`forbid` must be a regex'),
        ([{'rule': 'r', 'forbid': ''}], '`forbid` must be a regex'),
        (
            [{'rule': 'r', 'forbid': 'x', 'file': '*.py'}],
            'cfg.yaml: enforce rule 1 ("r"): unknown key `file` (known: '
            'rule, forbid, commit_msg, dependencies, files)',
        ),
        (
            [{'rule': 'r', 'commit_msg': 'x', 'files': '*.py'}],
            '`files` only applies to `forbid`',
        ),
        (
            [{'rule': 'r', 'forbid': 'x', 'files': [1]}],
            '`files` must be a glob or a list of globs',
        ),
        (
            [{'rule': 'r', 'forbid': 'x', 'files': []}],
            '`files` must be a glob or a list of globs',
        ),
        (
            [{'rule': 'r', 'dependencies': {'requests': '*'}}],
            '`dependencies` must be a list of package names',
        ),
    ],
)
def test_validate_errors(enforce: object, error: str) -> None:
    with pytest.raises(AgitmemError) as excinfo:
        enforce_rules(enforce, source='cfg.yaml')
    message = str(excinfo.value)
    assert error in message
    assert '\n' not in message


# tattoo lines


def test_rule_in_no_tattoo_line() -> None:
    rule = {'rule': 'never use eval', 'forbid': r'\beval\('}
    added = [Added('a.py', 1, 'eval(x)')]
    assert _check([rule], added=added) == [
        Finding(
            'enforce', 'error',
            'enforce rule "never use eval" matches no tattoo line; add '
            '"- never use eval" to tattoo.md or remove the rule from '
            'config.yaml',
        ),
    ]


def test_rule_is_a_substring_of_a_tattoo_line() -> None:
    rule = {'rule': 'NEVER   tabs', 'forbid': '\t'}
    tattoo = [(7, 'indent with 4 spaces, never tabs (violate it: roll back)')]
    finding, = _check([rule], added=[Added('a.py', 2, '\tx')], tattoo=tattoo)
    assert 'tattoo rule "indent with 4 spaces, never tabs (violate it: ' \
        'roll back)" (tattoo.md:7)' in finding.message


# forbid


def test_forbid_message() -> None:
    added = [Added('src/app.py', 11, '    ok'), Added('src/app.py', 12, '\tx')]
    assert _check([TABS], added=added) == [
        Finding(
            'enforce', 'error',
            'src/app.py:12: added line breaks tattoo rule "indent with 4 '
            'spaces, never tabs" (tattoo.md:3); remove the match of /\\t/',
            path='src/app.py', line=12,
        ),
    ]


def test_forbid_files_glob() -> None:
    added = [
        Added('Makefile', 1, '\tcc'),
        Added('docs/a.md', 1, '\tcode'),
        Added('pkg/sub/m.py', 4, '\treturn'),
    ]
    assert [(f.path, f.line) for f in _check([TABS], added=added)] == [
        ('pkg/sub/m.py', 4),
    ]


def test_forbid_glob_on_path_or_basename() -> None:
    added = [Added('src/a.py', 1, 'x'), Added('tests/a.py', 1, 'x')]

    def hits(files: object) -> list[str]:
        rule = {'rule': 'never tabs', 'forbid': 'x', 'files': files}
        return [f.path or '' for f in _check([rule], added=added)]

    assert hits('src/*') == ['src/a.py']
    assert hits('a.py') == ['src/a.py', 'tests/a.py']
    assert hits(['tests/*.py', '*.md']) == ['tests/a.py']
    assert hits('*.js') == []


def test_forbid_without_files_applies_everywhere() -> None:
    rule = {'rule': 'never tabs', 'forbid': '\t'}
    added = [Added('Makefile', 1, '\tcc'), Added('a.md', 2, 'no tab')]
    assert [f.path for f in _check([rule], added=added)] == ['Makefile']


def test_forbid_shows_regex_readably() -> None:
    rule = {'rule': 'never tabs', 'forbid': '\\s+$|\x01'}
    finding, = _check([rule], added=[Added('a', 1, 'x ')])
    assert finding.message.endswith('remove the match of /\\s+$|\\x01/')


def test_forbid_caps_findings() -> None:
    added = [Added('a.py', i, '\tx') for i in range(1, 101)]
    findings = _check([TABS], added=added)
    assert len(findings) == MAX_PER_RULE + 1
    assert findings[-1].message.startswith(
        f'{100 - MAX_PER_RULE} more added lines break tattoo rule',
    )
    assert all(f.severity == 'error' for f in findings)


# commit_msg


def test_commit_msg_not_checked_without_a_message() -> None:
    assert _check([TICKET], commit_msg=None) == []


def test_commit_msg_ok() -> None:
    assert _check([TICKET], commit_msg='ABC-12 fix the loader\n') == []


def test_commit_msg_bad() -> None:
    assert _check([TICKET], commit_msg='fix the loader\n') == [
        Finding(
            'enforce', 'error',
            'commit message breaks tattoo rule "commit messages start with a '
            'ticket id" (tattoo.md:4); reword it to match /^[A-Z]+-[0-9]+ /',
        ),
    ]


def test_commit_msg_ignores_git_comments() -> None:
    msg = (
        '# Please enter the commit message\n'
        '\n'
        'ABC-1 subject\n'
        '\n'
        '# On branch main\n'
        '# ABC-2 not this\n'
    )
    assert _check([TICKET], commit_msg=msg) == []
    only_comments = '# ABC-2 a comment\n\nfix it\n'
    assert len(_check([TICKET], commit_msg=only_comments)) == 1


def test_commit_msg_is_not_multiline() -> None:
    msg = 'fix it\n\nABC-3 in the body\n'
    assert len(_check([TICKET], commit_msg=msg)) == 1


def test_clean_message_drops_verbose_diff() -> None:
    msg = (
        'ABC-1 subject\n\n'
        '# ------------------------ >8 ------------------------\n'
        '# Do not modify or remove the line above.\n'
        'diff --git a/x b/x\n'
    )
    assert clean_message(msg) == 'ABC-1 subject'


# dependencies


def test_normalize() -> None:
    assert normalize('PyYAML') == 'pyyaml'
    assert normalize('typing_extensions') == 'typing-extensions'
    assert normalize('Foo.-_Bar') == 'foo-bar'


OLD_PYPROJECT = '''\
[project]
name = "app"
description = "uses httpx and requests"
dependencies = ["requests>=2"]
'''
NEW_PYPROJECT = '''\
[project]
name = "app"
description = "uses httpx and requests"
dependencies = [
    "requests>=2",
    "PyYAML>=6",
    "httpx[http2]>=0.27; python_version >= '3.11'",
]

[project.optional-dependencies]
test = ["pytest>=7", "Typing_Extensions"]

[dependency-groups]
lint = ["ruff", {include-group = "test"}]

[tool.poetry.dependencies]
python = "^3.11"
Django = "^5"

[tool.poetry.group.dev.dependencies]
black = "*"
'''


def test_pyproject() -> None:
    findings = _check(
        [DEPS],
        added=_added('pyproject.toml', NEW_PYPROJECT)[4:],
        old={'pyproject.toml': OLD_PYPROJECT},
        new={'pyproject.toml': NEW_PYPROJECT},
    )
    assert [(f.path, f.line) for f in findings] == [
        ('pyproject.toml', 7),
        ('pyproject.toml', 11),
        ('pyproject.toml', 14),
        ('pyproject.toml', 18),
        ('pyproject.toml', 21),
    ]
    assert findings[0] == Finding(
        'enforce', 'error',
        'pyproject.toml:7: new dependency "httpx" breaks tattoo rule "no new '
        'dependencies without approval" (tattoo.md:5); remove it, or add it '
        "to the rule's `dependencies:` in config.yaml once it is approved",
        path='pyproject.toml', line=7,
    )
    assert [f.message.split('"')[1] for f in findings] == [
        'httpx', 'pytest', 'ruff', 'Django', 'black',
    ]


def test_requirements_txt() -> None:
    old = 'requests==2.31\n'
    new = (
        '# pinned\n'
        'requests==2.31\n'
        'Flask[async]>=3 ; python_version>"3.8"  # web\n'
        '-r base.txt\n'
        '--hash=sha256:abc\n'
        '-e git+https://example.invalid/x.git#egg=x\n'
        'https://example.invalid/pkg.whl\n'
        './local/path\n'
        'numpy \\\n'
        '    >=1.26\n'
        'pyyaml\n'
        'attrs @ https://example.invalid/attrs.whl\n'
    )
    findings = _check(
        [DEPS],
        added=_added('ci/requirements-dev.txt', new)[2:],
        old={'ci/requirements-dev.txt': old},
        new={'ci/requirements-dev.txt': new},
    )
    assert [(f.message.split('"')[1], f.line) for f in findings] == [
        ('Flask', 3), ('numpy', 9), ('attrs', 12),
    ]


def test_package_json() -> None:
    old = json.dumps({'dependencies': {'left-pad': '1'}}, indent=2)
    new = json.dumps(
        {
            'name': 'app',
            'dependencies': {'left-pad': '1', 'react': '18'},
            'devDependencies': {'@types/node': '20'},
            'peerDependencies': {'react-dom': '18'},
            'optionalDependencies': {'fsevents': '2'},
            'scripts': {'test': 'jest'},
        },
        indent=2,
    )
    findings = _check(
        [DEPS],
        added=_added('web/package.json', new),
        old={'web/package.json': old},
        new={'web/package.json': new},
    )
    assert [(f.message.split('"')[1], f.line) for f in findings] == [
        ('react', 5), ('@types/node', 8), ('react-dom', 11), ('fsevents', 14),
    ]


def test_new_manifest_every_dependency_is_new() -> None:
    new = 'requests\nboto3\n'
    findings = _check(
        [DEPS],
        added=_added('requirements.txt', new),
        new={'requirements.txt': new},
    )
    assert _messages(findings)[0].startswith(
        'requirements.txt:2: new dependency "boto3"',
    )
    assert len(findings) == 1


def test_allow_list_is_normalized() -> None:
    new = 'pyyaml\ntyping-extensions\nRequests\nLeft_Pad\n'
    assert _check(
        [DEPS],
        added=_added('requirements.txt', new),
        old={'requirements.txt': ''},
        new={'requirements.txt': new},
    ) == []


def test_not_a_manifest_or_deleted() -> None:
    added = [Added('notes/requirements.md', 1, 'boto3')]
    assert _check(
        [DEPS], added=added, new={'notes/requirements.md': 'boto3\n'},
    ) == []
    # a deleted manifest adds nothing; new_files has no such path
    assert _check([DEPS], added=[Added('requirements.txt', 1, 'x')]) == []


def test_existing_dependency_moved_is_not_new() -> None:
    old = 'boto3\nrequests\n'
    new = 'requests\nboto3>=1\n'
    assert _check(
        [DEPS],
        added=[Added('requirements.txt', 2, 'boto3>=1')],
        old={'requirements.txt': old},
        new={'requirements.txt': new},
    ) == []


def test_manifest_that_does_not_parse_warns() -> None:
    findings = _check(
        [DEPS],
        added=[Added('pyproject.toml', 2, 'dependencies = ["boto3"')],
        old={'pyproject.toml': '[project]\n'},
        new={'pyproject.toml': '[project]\ndependencies = ["boto3"\n'},
    )
    finding, = findings
    assert finding.severity == 'warning'
    assert finding.path == 'pyproject.toml'
    assert finding.message.startswith('pyproject.toml: cannot read its ')
    assert finding.message.endswith(
        'fix its syntax so that new dependencies can be checked',
    )

    finding, = _check(
        [DEPS],
        added=[Added('package.json', 3, '  "a": 1,')],
        new={'package.json': '{\n  "dependencies": {\n  "a": 1,\n}\n'},
    )
    assert (finding.severity, finding.path) == ('warning', 'package.json')
    finding, = _check(
        [DEPS],
        added=[Added('package.json', 1, '[]')],
        new={'package.json': '[]'},
    )
    assert finding.severity == 'warning'


def test_a_manifest_nested_too_deeply_is_a_warning_not_a_crash() -> None:
    deep = '{"dependencies": ' + '[' * 100_000 + ']' * 100_000 + '}'
    finding, = _check(
        [DEPS],
        added=[Added('package.json', 1, deep)],
        new={'package.json': deep},
    )
    assert (finding.severity, finding.path) == ('warning', 'package.json')
    assert '(nested too deeply)' in finding.message
    # and at HEAD: every dependency is new to it
    findings = _check(
        [DEPS],
        added=[Added('package.json', 1, '{"dependencies": {"a": "1"}}')],
        old={'package.json': deep},
        new={'package.json': '{"dependencies": {"a": "1"}}'},
    )
    assert [f.severity for f in findings] == ['error']


def test_manifest_broken_at_head() -> None:
    findings = _check(
        [DEPS],
        added=[Added('pyproject.toml', 2, 'dependencies = ["boto3"]')],
        old={'pyproject.toml': '[project\n'},
        new={'pyproject.toml': '[project]\ndependencies = ["boto3"]\n'},
    )
    assert [(f.severity, f.line) for f in findings] == [('error', 2)]


def test_odd_but_valid_manifests_do_not_crash() -> None:
    odd = {
        'pyproject.toml': (
            '[project]\ndependencies = "requests"\n'
            '[project.optional-dependencies]\nx = 3\n'
            '[tool]\npoetry = 1\n'
        ),
        'package.json': '{"dependencies": ["a"], "devDependencies": null}',
    }
    added = [Added(path, 1, 'x') for path in odd]
    assert _check([DEPS], added=added, new=odd) == []


def test_two_dependency_rules_read_manifests_once() -> None:
    calls = []

    def new_files(path: str) -> str | None:
        calls.append(path)
        return '{"dependencies": {"react": "18"}}'

    rules = enforce_rules([DEPS, {**DEPS, 'dependencies': ['react']}])
    findings = check(
        rules, tattoo_lines=TATTOO, added=[Added('package.json', 1, '{')],
        commit_msg=None, old_files=_no_files, new_files=new_files,
    )
    assert calls == ['package.json']
    assert len(findings) == 1


def test_rules_together() -> None:
    findings = _check(
        [TABS, TICKET, DEPS],
        added=[Added('a.py', 3, '\tx'), Added('requirements.txt', 1, 'boto3')],
        commit_msg='wip',
        new={'requirements.txt': 'boto3\n'},
    )
    assert [(f.path, f.line) for f in findings] == [
        ('a.py', 3), (None, None), ('requirements.txt', 1),
    ]


# the real thing: a staged change in a git repository


def _git(repo: pathlib.Path, *args: str) -> str | None:
    env = {
        **os.environ,
        'GIT_CONFIG_GLOBAL': os.devnull, 'GIT_CONFIG_NOSYSTEM': '1',
        'GIT_AUTHOR_NAME': 't', 'GIT_AUTHOR_EMAIL': 't@example.invalid',
        'GIT_COMMITTER_NAME': 't', 'GIT_COMMITTER_EMAIL': 't@example.invalid',
    }
    proc = subprocess.run(
        ('git', *args), cwd=repo, env=env, capture_output=True,
    )
    return proc.stdout.decode() if proc.returncode == 0 else None


def test_staged_change_in_a_real_repo(tmp_path: pathlib.Path) -> None:
    _git(tmp_path, 'init', '-q')
    (tmp_path / 'app.py').write_text('def f():\n    return 1\n')
    (tmp_path / 'requirements.txt').write_text('requests\n')
    _git(tmp_path, 'add', '-A')
    _git(tmp_path, 'commit', '-q', '-m', 'ABC-1 base')

    (tmp_path / 'app.py').write_text('def f():\n\treturn 2\n')
    (tmp_path / 'requirements.txt').write_text('requests\nboto3\n')
    (tmp_path / 'notes.md').write_text('\tindented prose\n')
    _git(tmp_path, 'add', '-A')
    diff = _git(tmp_path, *DIFF_ARGS)
    assert diff is not None

    findings = check(
        enforce_rules([TABS, TICKET, DEPS]),
        tattoo_lines=TATTOO,
        added=added_lines(diff),
        commit_msg='fix f\n# Please enter the commit message\n',
        old_files=lambda path: _git(tmp_path, 'show', f'HEAD:{path}'),
        new_files=lambda path: _git(tmp_path, 'show', f':{path}'),
    )
    assert _messages(findings) == [
        'app.py:2: added line breaks tattoo rule "indent with 4 spaces, '
        'never tabs" (tattoo.md:3); remove the match of /\\t/',
        'commit message breaks tattoo rule "commit messages start with a '
        'ticket id" (tattoo.md:4); reword it to match /^[A-Z]+-[0-9]+ /',
        'requirements.txt:2: new dependency "boto3" breaks tattoo rule "no '
        'new dependencies without approval" (tattoo.md:5); remove it, or add '
        "it to the rule's `dependencies:` in config.yaml once it is approved",
    ]
