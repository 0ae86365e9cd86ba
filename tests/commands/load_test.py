from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import bad
from testing.util import git
from testing.util import mem
from testing.util import ok

BEGIN = '===== AGENT MEMORY BEGIN ====='
END = '===== AGENT MEMORY END ====='


def _big_memory(repo: Path) -> None:
    """The realistic memory of bench/hooks.py: 20 rules, a 300-line
    snapshot, 1,000 notes, 500 fragments."""
    mem(repo, 'tattoo.md').write_text(''.join(f'- rule {i}: keep {i}\n' for i in range(20)))
    lines = ['## Goal', 'ship the loader move', '## In progress']
    lines += [f'- step {i} of the work in `src/m{i}.py`' for i in range(100)]
    lines += ['## Decisions'] + [f'- decision {i}: value {i}' for i in range(100)]
    lines += ['## Todo'] + [f'- todo {i}' for i in range(95)]
    mem(repo, 'snapshot.md').write_text('\n'.join(lines) + '\n')
    mem(repo, 'notes.md').write_text(''.join(f'- 2026-11-30 10:00 note {i} ' + 'x' * 60 + '\n' for i in range(1000)))
    frags = [
        {'id': f'A-{i:03d}', 'at': '2026-11-30T10:00:00Z', 'goal': f'goal {i}', 'basis': 'b',
         'action': 'a' * 40, 'result': 'r', 'next': f'next {i}', 'refs': []}
        for i in range(1, 501)
    ]
    mem(repo, 'fragments.jsonl').write_text(''.join(json.dumps(f) + '\n' for f in frags))


def test_load_order_and_markers(memrepo: Path) -> None:
    mem(memrepo, 'snapshot.md').write_text(
        '## Goal\nmove the loader\n## Done\n- hidden done item\n## In progress\n'
        '- copying loadConfig\n## Todo\n- hidden todo\n## Decisions\n- error type: ConfigError\n',
    )
    ok('state', 'set', 'current_goal=move loader', 'next_intent=delete original', cwd=memrepo)
    ok('note', 'a note', cwd=memrepo)
    ok('fragment', 'add', '--goal', 'frag goal', '--next', 'frag next', cwd=memrepo)
    home_tattoo = Path(__import__('os').environ['AGITMEM_HOME']) / 'memory' / 'tattoo.md'
    home_tattoo.parent.mkdir(parents=True)
    home_tattoo.write_text('- user rule: mine\n- indent: tabs\n')
    mem(memrepo, 'tattoo.md').write_text('- indent: 4 spaces\n- project rule\n')
    out = ok('load', cwd=memrepo)
    assert out.startswith(BEGIN + '\n') and out.endswith(END + '\n')
    order = [out.index(s) for s in (
        '- user rule: mine', '- project rule', '## STATE', '### Goal', '### In progress',
        '### Decisions', '## FRAGMENTS', '## NOTES',
    )]
    assert order == sorted(order)
    # project's value wins for a key: value rule
    assert '- indent: 4 spaces' in out and 'indent: tabs' not in out
    assert 'hidden done item' not in out and 'hidden todo' not in out
    assert 'current_goal: move loader' in out and 'next_intent: delete original' in out
    assert 'restate' not in out
    assert (memrepo / '.agent' / 'injected_context.txt').read_text() == out


def test_load_is_idempotent(memrepo: Path) -> None:
    ok('state', 'set', 'current_goal=g', cwd=memrepo)
    outs = {ok('load', cwd=memrepo) for _ in range(10)}
    assert len(outs) == 1
    log = (memrepo / '.agent' / 'log' / 'memory.log').read_text()
    assert log.count('read load:') == 10


def test_load_after_compact_and_stale(memrepo: Path) -> None:
    ok('state', 'set', 'current_goal=g1', 'next_intent=n1', cwd=memrepo)
    ok('verify', '--', 'true', cwd=memrepo)
    fresh = ok('load', '--after-compact', cwd=memrepo)
    assert fresh.splitlines()[1].startswith('Your context was just compacted. Before doing anything else, restate')
    assert 'STALE' not in fresh
    (memrepo / 'src' / 'app.py').write_text('changed\n')
    (memrepo / 'src' / 'new.py').write_text('new\n')
    stale = ok('load', '--after-compact', cwd=memrepo)
    assert 'STALE: the working tree changed since this state was written: src/app.py, src/new.py.' in stale
    assert 'STALE verification: files changed since it ran: src/app.py, src/new.py.' in stale


def test_load_stale_names_at_most_ten_paths(memrepo: Path) -> None:
    ok('state', 'set', 'current_goal=g', cwd=memrepo)
    for i in range(15):
        (memrepo / f'f{i:02d}.txt').write_text('x\n')
    out = ok('load', cwd=memrepo)
    assert 'f09.txt and 5 more.' in out


def test_load_budget_on_large_memory(memrepo: Path) -> None:
    _big_memory(memrepo)
    data = json.loads(ok('load', '--json', cwd=memrepo))
    assert data['tokens'] <= 800
    assert data['chars'] <= 9500
    assert data['cut']['notes'] == 5  # notes go first
    text = data['text']
    assert '- rule 19: keep 19' in text  # tattoo never cut
    assert 'left out for size' in text


def test_load_budget_cut_order(memrepo: Path) -> None:
    _big_memory(memrepo)
    (memrepo / '.agent' / 'config.yaml').write_text('budget_tokens: 2000\n')
    data = json.loads(ok('load', '--json', cwd=memrepo))
    assert data['tokens'] <= 2000
    assert data['cut']['notes'] == 0
    assert '## NOTES (newest 5' in data['text']


def test_load_tattoo_over_budget_warns_never_cuts(memrepo: Path) -> None:
    mem(memrepo, 'tattoo.md').write_text(''.join(f'- rule number {i} is long enough\n' for i in range(100)))
    proc = agitmem('load', cwd=memrepo)
    assert proc.returncode == 0
    assert 'rule number 99' in proc.stdout
    assert 'warning: tattoo and state alone are' in proc.stderr


def test_load_hard_cap_9500_chars_cuts_tattoo_rules_not_the_state(memrepo: Path) -> None:
    mem(memrepo, 'tattoo.md').write_text(''.join(f'- {"r" * 90} {i}\n' for i in range(200)))
    (memrepo / '.agent' / 'config.yaml').write_text('budget_tokens: 100000\n')
    ok('state', 'set', 'current_goal=ship the loader', 'next_intent=run the tests', cwd=memrepo)
    proc = agitmem('load', cwd=memrepo)
    assert proc.returncode == 0
    assert len(proc.stdout) <= 9500
    assert proc.stdout.endswith(END + '\n')
    lines = proc.stdout.splitlines()
    assert 'current_goal: ship the loader' in lines
    assert 'next_intent: run the tests' in lines
    assert f'- {"r" * 90} 0' in lines  # the first rules stay, in order
    [marker] = [line for line in lines if 'left out for size' in line]
    n = int(marker.split()[1].lstrip('['))
    assert marker == f'- [{n} more rule(s) left out for size: read .agent/memory/tattoo.md in full]'
    assert f"- {'r' * 90} {199 - n}" in lines and f"- {'r' * 90} {200 - n}" not in lines
    assert f'warning: {n} tattoo rule(s) left out' in proc.stderr
    assert 'cut at' not in proc.stdout


def test_load_one_huge_rule_leaves_the_state_and_the_short_rules(memrepo: Path) -> None:
    # issue 19 item 8: one promoted note longer than the cap on its own
    mem(memrepo, 'tattoo.md').write_text(f'- keep it short\n- {"x" * 12_000}\n- no tabs\n')
    ok('state', 'set', 'current_goal=ship the loader', cwd=memrepo)
    for how in ('load', 'hook'):
        if how == 'load':
            out = ok('load', cwd=memrepo)
        else:
            out = json.loads(ok('hook', 'session-start', '--agent', 'claude', cwd=memrepo, input='{}'))
            out = out['hookSpecificOutput']['additionalContext']
        lines = out.splitlines()
        assert len(out) <= 9500
        assert 'current_goal: ship the loader' in lines
        assert '- keep it short' in lines and '- no tabs' in lines
        assert '- [1 more rule(s) left out for size: read .agent/memory/tattoo.md in full]' in lines


def test_load_a_state_over_the_cap_is_cut_with_a_marker(memrepo: Path) -> None:
    ok('state', 'set', f'current_goal={"g" * 12_000}', cwd=memrepo)
    proc = agitmem('load', cwd=memrepo)
    assert proc.returncode == 0
    assert len(proc.stdout) <= 9500
    assert proc.stdout.endswith(f'[cut at 9500 characters: read .agent/memory/state.json in full]\n{END}\n')
    assert 'the block was cut at 9500 characters' in proc.stderr


def test_load_cjk_budget(memrepo: Path) -> None:
    # 5 notes of 200 CJK characters: ~1,000 tokens, though only 1,000
    # characters; the same length in ASCII is ~250 tokens and fits
    mem(memrepo, 'notes.md').write_text(''.join(f'- 笔记{i}' + '中文内容' * 50 + '\n' for i in range(5)))
    data = json.loads(ok('load', '--json', cwd=memrepo))
    assert data['tokens'] <= 800
    assert data['cut']['notes'] >= 1
    mem(memrepo, 'notes.md').write_text(''.join(f'- note{i}' + 'abcd' * 50 + '\n' for i in range(5)))
    data = json.loads(ok('load', '--json', cwd=memrepo))
    assert data['cut']['notes'] == 0


def test_load_chinese_snapshot_headings(memrepo: Path) -> None:
    mem(memrepo, 'snapshot.md').write_text('## 目标\n迁移配置加载\n## 已完成\n- 读完\n## 进行中\n- 复制函数\n## 关键决策\n- 错误类型: ConfigError\n')
    out = ok('load', cwd=memrepo)
    assert '### Goal\n迁移配置加载' in out
    assert '### In progress\n- 复制函数' in out
    assert '### Decisions\n- 错误类型: ConfigError' in out
    assert '读完' not in out


def test_load_bad_input(repo: Path, memrepo: Path) -> None:
    mem(memrepo, 'state.json').write_text('{')
    assert 'state.json:1: not valid JSON' in bad('load', cwd=memrepo)


@pytest.mark.parametrize('version', ['2', '4'])
def test_committed_install_files_are_not_code(memrepo: Path, version: str) -> None:
    # agitmem's install files, even committed (a team's .claude/settings.json),
    # never make the state STALE; index v4 compresses paths, so it is asked
    git('config', 'index.version', version, cwd=memrepo)
    settings = memrepo / '.claude' / 'settings.json'
    settings.parent.mkdir()
    settings.write_text('{}\n')
    git('add', '-A', cwd=memrepo)
    git('commit', '-qm', 'team settings', cwd=memrepo)
    ok('state', 'set', 'current_goal=g', cwd=memrepo)
    settings.write_text('{"hooks": {}}\n')
    git('add', '-A', cwd=memrepo)
    git('commit', '-qm', 'hooks', cwd=memrepo)
    assert 'STALE' not in ok('load', cwd=memrepo)
    (memrepo / 'src' / 'app.py').write_text('changed\n')
    assert 'STALE: the working tree changed since this state was written: src/app.py.' in ok('load', cwd=memrepo)


def _checked(repo: Path) -> Path:
    return repo / '.git' / 'agitmem' / 'fragments-checked'


def test_load_checks_every_fragment_line_though_it_reads_the_newest(memrepo: Path) -> None:
    """A load reads only the newest fragments of a fragments.jsonl it found
    valid whole before (the same text, by its SHA-1): a line broken anywhere
    since is named, as on the first load."""
    _big_memory(memrepo)
    (memrepo / '.agent' / 'config.yaml').write_text('budget_tokens: 2000\n')
    first = ok('load', cwd=memrepo)
    assert _checked(memrepo).is_file()
    assert ok('load', cwd=memrepo) == first
    assert 'A-500' in first and 'A-496' in first and 'A-495' not in first
    path = mem(memrepo, 'fragments.jsonl')
    whole = path.read_text()
    lines = whole.splitlines(keepends=True)
    for broken, says in (
            ('{"id": "A-003", oops}\n', 'fragments.jsonl:3: not valid JSON'),
            ('{"id": "A-001"}\n', 'fragments.jsonl:3: duplicate id A-001'),
            ('[1]\n', 'fragments.jsonl:3: each line must be a JSON object'),
    ):
        path.write_text(''.join([*lines[:2], broken, *lines[3:]]))
        assert says in bad('load', cwd=memrepo)
        assert says in bad('load', cwd=memrepo)
    path.write_text(whole)
    assert ok('load', cwd=memrepo) == first


@pytest.mark.parametrize('odd', ('forged', 'symlink', 'hardlink', 'directory', 'huge'))
def test_load_trusts_no_check_record_but_its_own(memrepo: Path, tmp_path: Path, odd: str) -> None:
    """The record of a valid fragments.jsonl is a file of agitmem's own:
    one that is not (a link, a directory, a record of other text) leaves
    the whole file checked."""
    import hashlib
    path = mem(memrepo, 'fragments.jsonl')
    path.write_text('{"id": "A-001"}\n{"id": "A-001"}\n')
    right = hashlib.sha1(path.read_bytes()).hexdigest().encode() + b'\n'
    record = _checked(memrepo)
    record.parent.mkdir(exist_ok=True)
    outside = tmp_path / 'record'
    outside.write_bytes(right)
    if odd == 'forged':
        record.write_bytes(hashlib.sha1(b'other').hexdigest().encode() + b'\n')
    elif odd == 'symlink':
        record.symlink_to(outside)
    elif odd == 'hardlink':
        record.hardlink_to(outside)
    elif odd == 'directory':
        record.mkdir()
    else:
        record.write_bytes(right + b'x' * 10_000)
    assert 'fragments.jsonl:2: duplicate id A-001' in bad('load', cwd=memrepo)
    path.write_text('{"id": "A-001"}\n')
    assert '- A-001: ' in ok('load', cwd=memrepo)
    assert outside.read_bytes() == right  # never written through the link


def test_a_memory_file_too_large_to_read_is_one_line(memrepo: Path) -> None:
    """A memory file of tens of MB (sparse here: no disk) is not read
    whole into memory by load and the commands that edit a layer: past
    read.READ_MAX it is one line (a 3 GB notes.md ended load in a
    MemoryError under a memory limit, and took its size in memory
    without one)."""
    with open(mem(memrepo, 'notes.md'), 'r+b') as f:
        f.truncate(80 << 20)
    out = agitmem('load', cwd=memrepo)
    assert 'Traceback' not in out.stderr, out.stderr
    assert '.agent/memory/notes.md: over 64 MB' in out.stdout + out.stderr
    assert '.agent/memory/notes.md: over 64 MB' in bad('note', 'one more', cwd=memrepo)
