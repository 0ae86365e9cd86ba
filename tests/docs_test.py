"""The docs stay true: every command and option the CLI lists is in
docs/commands.md, every check id in docs/checks.md, every link resolves."""
from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

from testing.util import ok

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / 'README.md', *sorted((ROOT / 'docs').glob('*.md'))]
LINK = re.compile(r'(?<!!)\[[^\]]*\]\(([^)\s]+)\)')


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r'[^\w\- ]', '', heading.strip().lower())
    return text.replace(' ', '-')


def _anchors(page: Path) -> set[str]:
    text = re.sub(r'```.*?```', '', page.read_text(), flags=re.S)
    return {_slug(m[1]) for m in re.finditer(r'^#{1,6} (.+)$', text, re.M)}


def _commands() -> list[str]:
    out = ok('--help', cwd=ROOT)
    block = out.split('positional arguments:', 1)[1].split('options:', 1)[0]
    return re.findall(r'^ {4}(\w[\w-]*)', block, re.M)


def test_readme_is_a_landing_page() -> None:
    assert len((ROOT / 'README.md').read_text().splitlines()) <= 200


@pytest.mark.parametrize('page', PAGES, ids=lambda p: p.name)
def test_every_link_resolves(page: Path) -> None:
    text = re.sub(r'```.*?```', '', page.read_text(), flags=re.S)
    for target in LINK.findall(text):
        if re.match(r'[a-z]+:', target):
            continue  # https:, mailto: (no network here)
        path, _, anchor = target.partition('#')
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f'{page.name}: {target}: no such file'
        if anchor and dest.suffix == '.md':
            assert anchor in _anchors(dest), f'{page.name}: {target}: no such heading'


def test_every_command_and_option_is_documented() -> None:
    doc = (ROOT / 'docs' / 'commands.md').read_text()
    commands = _commands()
    assert 'save' in commands and 'doctor' in commands
    missing = []
    for command in commands:
        if f'agitmem {command}' not in doc and f'`{command}' not in doc:
            missing.append(command)
            continue
        if command == 'hook':
            continue  # called by agents and git, documented in docs/hooks.md
        help_text = ok(command, '--help', cwd=ROOT)
        for option in sorted(set(re.findall(r'(?<![\w-])(--[a-z][\w-]*)', help_text)) - {'--help'}):
            if option not in doc:
                missing.append(f'{command} {option}')
    assert not missing, f'not in docs/commands.md: {missing}'


def test_every_check_id_is_documented() -> None:
    import agitmem.checks
    doc = (ROOT / 'docs' / 'checks.md').read_text()
    ids = []
    for info in pkgutil.iter_modules(agitmem.checks.__path__):
        module = importlib.import_module(f'agitmem.checks.{info.name}')
        if isinstance(getattr(module, 'ID', None), str):
            ids.append(module.ID)
    assert len(ids) >= 10
    assert not [i for i in ids if f'`{i}`' not in doc]


def test_ci_runs_the_readmes_test_command() -> None:
    readme = (ROOT / 'README.md').read_text()
    command = re.search(r"^pip install -e '\.\[test\]' && .+$", readme, re.M)
    assert command is not None, 'README.md: no test command'
    ci = (ROOT / '.ci' / 'run').read_text().rstrip().splitlines()
    assert ci[-1] == command[0]
