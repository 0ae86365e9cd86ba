"""`agitmem recovery [--json] [--since DATE]`, `recovery show N`,
`recovery mark N VERDICT`: the compactions in this worktree and how the
agent recovered from each (seed 004's table, on the user's own sessions)."""
from __future__ import annotations

import json
from typing import Any

from agitmem import audit
from agitmem import render
from agitmem.errors import AgitmemError
from agitmem.memory import recovery_log as log_format
from agitmem.memory import state as state_mod
from agitmem.porcelain import recovery as recovery_mod
from agitmem.porcelain.context import Context

USAGE = 'usage: agitmem recovery [--json] [--since DATE] | show N | mark N ok|drift|location|state|reset'


def _number(word: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise AgitmemError(f'"{word}" is not a compaction number (see `agitmem recovery`)')


def _pct(value: object) -> str:
    return f'{value:5.1f}%' if isinstance(value, (int, float)) else '     -'


def _table(summary: dict[str, Any], stale_minutes: int) -> list[str]:
    cols = log_format.VERDICTS
    head = f'{"":22} {"n":>4} ' + ' '.join(f'{log_format.TITLES[v]:>15}' for v in cols)
    lines = [head]

    def row(name: str, c: dict[str, Any]) -> None:
        lines.append(f'{name:22} {c["compactions"]:>4} ' + ' '.join(f'{_pct(c[v]):>15}' for v in cols))

    row('all', summary['all'])
    row('state fresh', summary['fresh'])
    row(f'state > {stale_minutes} min old', summary['stale'])
    for agent, c in summary['agents'].items():
        row(f'agent {render.line(str(agent))}', c)  # a name from the log
    return lines


def _report(ctx: Context, since: str | None, as_json: bool) -> int:
    rows = recovery_mod.since(recovery_mod.rows(ctx.repo), since)
    stale = ctx.cfg['stale_minutes']
    summary = log_format.summarize(rows, stale * 60)
    audit.log(ctx.repo.agent_dir, 'read recovery', f'{len(rows)} compactions')
    if as_json:
        listed = [
            {k: r.get(k) for k in (
                'n', 'id', 'at', 'agent', 'session', 'trigger', 'tokens_before', 'tokens_after',
                'checkpoint', 'state_step', 'state_age', 'stale', 'verdict', 'heuristic', 'mark',
                'first_action', 'evidence', 'prompt',
            )}
            for r in rows
        ]
        print(json.dumps({'compactions': listed, 'summary': summary}, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print('no compactions recorded yet (.agent/log/recovery.jsonl): the agent hooks record each one')
        return 0
    print(f'{len(rows)} compaction(s); {summary["marked"]} verdict(s) marked by hand ({_pct(summary["marked_pct"]).strip()})')
    for line in _table(summary, stale):
        print(line)
    print()
    for r in rows:
        verdict = r.get('verdict') or 'pending'
        hand = ' (marked)' if r.get('mark') else ''
        title = log_format.TITLES.get(verdict, verdict)
        # the log's text (a cloned or hand-edited one): each value on its line
        at, agent, trigger, first = (
            render.line(str(r.get(k) or '-')) for k in ('at', 'agent', 'trigger', 'first_action')
        )
        print(f'{r["n"]:>3}. {at} {agent} {trigger}: {title}{hand}; first: {first}')
    print('one in full: `agitmem recovery show N`; correct a verdict: `agitmem recovery mark N ok|drift|location|state|reset`')
    return 0


def _tokens(agent: object, before: object, after: object) -> str:
    """The context sizes around the compaction; the ones the client did
    not give said missing once."""
    given = [f'{v} {k}' for k, v in (('before', before), ('after', after)) if isinstance(v, int)]
    missing = [k for k, v in (('before', before), ('after', after)) if not isinstance(v, int)]
    if missing:
        given.append(f'{" and ".join(missing)} not given by {agent or "the client"}')
    return ', '.join(given)


def _show(ctx: Context, n: int, as_json: bool) -> int:
    r = recovery_mod.one(ctx.repo, n)
    if as_json:
        print(json.dumps(r, indent=2, ensure_ascii=False))
        return 0
    verdict = r.get('verdict')
    title = log_format.TITLES.get(verdict, verdict) if verdict else 'pending (the first turn after it has not ended)'
    if r.get('mark'):
        title += f' (marked by hand; the heuristic said {r.get("heuristic") or "nothing"})'
    expect = r.get('expect')
    expect = expect if isinstance(expect, dict) else {}
    before, after = r.get('tokens_before'), r.get('tokens_after')
    rid, at, checkpoint = (render.line(str(r.get(k) or '-')) for k in ('id', 'at', 'checkpoint'))
    print(f'compaction {r["n"]} ({rid}) at {at}')
    agent, session, trigger = (render.line(str(r.get(k))) for k in ('agent', 'session', 'trigger'))
    print(f'agent: {agent}, session {session}, trigger {trigger}')
    print(f'tokens: {_tokens(render.line(str(r.get("agent") or "")), before, after)}')
    print(f'checkpoint: {checkpoint}')
    age = r.get('state_age')
    updated = state_mod.human_age(age if isinstance(age, (int, float)) else None)
    print(f'state: step {render.line(str(r.get("state_step")))}, updated {updated}{" (stale)" if r.get("stale") else ""}')
    for key in ('current_goal', 'current_file', 'current_symbol', 'next_intent', 'verification'):
        if expect.get(key):
            print(f'  {key}: {render.line(str(expect[key]))}')
    print(f'verdict: {title}')
    for e in r.get('evidence') or ():
        print(f'  evidence: {render.line(str(e))}')
    prompt = r.get('prompt')
    said = render.line(prompt) if isinstance(prompt, str) and prompt else 'nothing (the agent went on by itself)'
    print(f'user said after the compaction: {said}')
    print(f'first action: {render.line(str(r.get("first_action") or "-"))}')
    if r.get('text'):
        print(f'agent said:\n{_block(render.text(str(r["text"])))}')
    print('--- the client\'s summary ---')
    print(_block(render.text(str(r.get('summary') or '(none recorded)'))))
    print('--- the injection given ---')
    # as it was given: rendered already (the stream's net still stands)
    print(_block(str(r.get('injection') or '(none recorded)').rstrip('\n')))
    return 0


def _block(text: str) -> str:
    """Text of many lines from the log, each indented as git indents a
    commit message: none of its lines can pass for a header of the page
    (`--- the injection given ---`, `verdict: recovered`)."""
    return '\n'.join(f'  {ln}' if ln else '' for ln in text.split('\n'))


def recovery(ctx: Context, words: list[str], since: str | None, as_json: bool) -> int:
    if not words:
        return _report(ctx, since, as_json)
    action, rest = words[0], words[1:]
    if action == 'show' and len(rest) == 1:
        return _show(ctx, _number(rest[0]), as_json)
    if action == 'mark' and len(rest) == 2:
        n = _number(rest[0])
        row = recovery_mod.mark(ctx.repo, n, rest[1])
        verdict = log_format.MARKS[rest[1]]
        audit.log(ctx.repo.agent_dir, 'write recovery', f'mark {n} {verdict}')
        was = row.get('verdict')
        print(f'compaction {n}: marked {log_format.TITLES[verdict]} (was {log_format.TITLES.get(was, was) if was else "pending"})')
        return 0
    raise AgitmemError(USAGE)
