"""The memory operations `agitmem mcp` serves as MCP tools: their names,
descriptions and JSON schemas, and each call on the same porcelain as the
command line (the one write path, the writers' lock, the secret scan).

Free of the `mcp` SDK: the command wires these into it, the tests and
`doctor` can read them without it.  Memory text in a result is untrusted:
it is rendered (render.py) before the model sees it."""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any
from typing import NamedTuple

from agitmem import render
from agitmem.errors import AgitmemError
from agitmem.porcelain import context
from agitmem.porcelain import verifying
from agitmem.porcelain.context import Context

VERIFY_TIMEOUT = 600  # seconds: the longest a verify tool call may run
COMMAND_MAX = 4096  # characters of a verify command line
RECALL_MAX = 50


class Tool(NamedTuple):
    name: str
    description: str
    schema: dict[str, Any]


class Answer(NamedTuple):
    """A tool's result: the text the model reads, and the same as JSON."""
    text: str
    data: dict[str, Any]


def _string(description: str, **more: Any) -> dict[str, Any]:
    return {'type': 'string', 'description': description, **more}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {
        'type': 'object',
        'properties': properties,
        'additionalProperties': False,
    }
    if required:
        schema['required'] = list(required)
    return schema


_STATE_KEYS = {
    'current_goal': 'what the task is, in one sentence',
    'current_file': 'the file being worked on',
    'current_symbol': 'the function or class being worked on',
    'last_action': 'what was just done',
    'next_intent': 'what comes next',
}

TOOLS = (
    Tool(
        'load',
        'The agent memory block (tattoo rules, state, snapshot, newest '
        'fragments and notes) as the hooks inject it.',
        _object({'after_compact': {
            'type': 'boolean',
            'description': 'the form given after a compaction (restate goal and intent; STALE marks)',
            'default': False,
        }}),
    ),
    Tool(
        'state_set',
        'Update the structured state (state.json) and commit it to the memory '
        'ref; step, updated_at and tree are set by agitmem.',
        {
            **_object(
                {
                    **{k: _string(v) for k, v in _STATE_KEYS.items()},
                    'other': {
                        'type': 'object',
                        'description': 'other keys to set (a dotted key sets inside an object)',
                    },
                },
            ),
            'minProperties': 1,
        },
    ),
    Tool(
        'note',
        'Append a scratch note to notes.md and commit it.',
        _object({'text': _string('the note, one line', minLength=1)}, ('text',)),
    ),
    Tool(
        'fragment_add',
        'Append a self-contained memory fragment (fragments.jsonl) and commit '
        'it; returns its id.',
        _object(
            {
                'goal': _string('the goal this fragment serves', minLength=1),
                'next': _string('what comes next', minLength=1),
                'basis': _string('what the action was based on'),
                'action': _string('what was done'),
                'result': _string('what came of it'),
                'refs': {
                    'type': 'array', 'items': {'type': 'string'},
                    'description': 'ids of earlier fragments this one follows (e.g. A-014)',
                },
            },
            ('goal', 'next'),
        ),
    ),
    Tool(
        'verify',
        'Record a test run as the state\'s last_verification (result, exit code, '
        'the reason from its output).  Ran it yourself: give command, exit_code '
        'and the end of its output; it is recorded as you report it.  Without '
        'exit_code, agitmem runs command itself only when the user\'s own '
        'agitmem config lists it under verify_commands; any other command is refused.',
        _object(
            {
                'command': _string('the command line, e.g. "pytest -q"', minLength=1, maxLength=COMMAND_MAX),
                'exit_code': {
                    # what a process can end with anywhere (Windows' are 32-bit)
                    'type': 'integer', 'minimum': -2**31, 'maximum': 2**32 - 1,
                    'description': 'how the run you made ended (then nothing is run)',
                },
                'output': _string(
                    'the end of that run\'s output (with exit_code)', maxLength=verifying.REPORT_MAX,
                ),
                'timeout_seconds': {
                    'type': 'number', 'exclusiveMinimum': 0, 'maximum': VERIFY_TIMEOUT,
                    'description': f'stop a run agitmem makes after this long (default {VERIFY_TIMEOUT})',
                },
            },
            ('command',),
        ),
    ),
    Tool(
        'recall',
        'Search the whole memory history (notes, fragments by id with their '
        'refs, Decisions, archived snapshots, tattoo history), best match first.',
        _object(
            {
                'query': _string('words to look for, or a fragment id', minLength=1),
                'limit': {
                    'type': 'integer', 'minimum': 1, 'maximum': RECALL_MAX, 'default': 10,
                    'description': 'at most this many hits',
                },
                'all_branches': {
                    'type': 'boolean', 'default': False,
                    'description': 'every memory ref and the attic, not only this branch\'s',
                },
            },
            ('query',),
        ),
    ),
    Tool(
        'recovery',
        'The compactions in this worktree and how the agent recovered from each; '
        'with n, compaction n in full.',
        _object({'n': {'type': 'integer', 'minimum': 1, 'description': 'one compaction, by number'}}),
    ),
)
BY_NAME = {t.name: t for t in TOOLS}


# -- arguments ------------------------------------------------------------------

_TYPES: dict[str, tuple[type, ...]] = {
    'string': (str,),
    'boolean': (bool,),
    'object': (dict,),
    'array': (list,),
    'number': (int, float),
    'integer': (int,),
}


def check_args(tool: Tool, args: object) -> dict[str, Any]:
    """The arguments, checked against the tool's schema (the subset of
    JSON Schema the schemas above use)."""
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise AgitmemError(f'{tool.name}: arguments must be a JSON object')
    schema = tool.schema
    props: dict[str, Any] = schema['properties']
    for key in args:
        if key not in props:
            raise AgitmemError(
                f'{tool.name}: unknown argument "{render.line(str(key))}" '
                f'(expected {", ".join(props)})',
            )
    for key in schema.get('required', ()):
        if key not in args:
            raise AgitmemError(f'{tool.name}: "{key}" is required')
    if len(args) < schema.get('minProperties', 0):
        raise AgitmemError(f'{tool.name}: give at least one of {", ".join(props)}')
    for key, value in args.items():
        _check_value(f'{tool.name}: "{key}"', props[key], value)
    return args


def _check_value(where: str, spec: dict[str, Any], value: object) -> None:
    kind = spec['type']
    # a JSON true is not a number here, as in JSON Schema
    if not isinstance(value, _TYPES[kind]) or (isinstance(value, bool) and kind != 'boolean'):
        raise AgitmemError(f'{where} must be a JSON {kind}')
    if kind == 'string' and len(value) < spec.get('minLength', 0):  # type: ignore[arg-type]
        raise AgitmemError(f'{where} must not be empty')
    if kind == 'string' and len(value) > spec.get('maxLength', len(value)):  # type: ignore[arg-type]
        raise AgitmemError(f'{where} is over {spec["maxLength"]:,} characters')
    if kind == 'array':
        assert isinstance(value, list)
        if len(value) < spec.get('minItems', 0):
            raise AgitmemError(f'{where} must not be empty')
        for item in value:
            _check_value(f'{where} items', spec['items'], item)
    if kind in ('number', 'integer'):
        assert isinstance(value, (int, float))
        # the SDK reads NaN and Infinity, which no comparison below refuses
        if not math.isfinite(value):
            raise AgitmemError(f'{where} must be a finite number')
        if 'minimum' in spec and value < spec['minimum']:
            raise AgitmemError(f'{where} must be at least {spec["minimum"]}')
        if 'exclusiveMinimum' in spec and value <= spec['exclusiveMinimum']:
            raise AgitmemError(f'{where} must be more than {spec["exclusiveMinimum"]}')
        if 'maximum' in spec and value > spec['maximum']:
            raise AgitmemError(f'{where} must be at most {spec["maximum"]}')


# -- the tools ------------------------------------------------------------------------

def _load(ctx: Context, args: dict[str, Any]) -> Answer:
    from agitmem.porcelain import read
    # leniently, as the agent hooks: the agent asks for its memory, and a
    # file that cannot be read is named in the block, the rest given
    block = read.injection(
        ctx.repo, ctx.cfg, after_compact=bool(args.get('after_compact')), ref=ctx.ref, lenient=True,
    )
    # the block is rendered as it is built (inject.py), as the hooks give it
    return Answer(block.text, {
        'text': block.text, 'tokens': block.tokens, 'warnings': [render.line(w) for w in block.warnings],
    })


def _state_set(ctx: Context, args: dict[str, Any]) -> Answer:
    from agitmem.porcelain import state
    changes = {k: v for k, v in args.items() if k != 'other'}
    other = args.get('other') or {}
    for key in other:
        if key in changes:
            raise AgitmemError(f'state_set: "{render.line(key)}" is given twice')
    changes.update(other)
    new = state.set_values(ctx, changes, save=True)
    return Answer(
        f'state updated (step {new["step"]}): {", ".join(render.line(k) for k in sorted(changes))}',
        {'step': new['step'], 'updated': sorted(render.line(k) for k in changes)},
    )


def _note(ctx: Context, args: dict[str, Any]) -> Answer:
    from agitmem.porcelain import notes
    count = notes.add(ctx, args['text'], save=True)
    return Answer(f'noted ({count} notes)', {'notes': count})


def _fragment_add(ctx: Context, args: dict[str, Any]) -> Answer:
    from agitmem.porcelain import fragments
    fid = fragments.add(
        ctx, goal=args['goal'], next_=args['next'], basis=args.get('basis'),
        action=args.get('action'), result=args.get('result'), refs=args.get('refs') or [],
        save=True,
    )
    return Answer(f'added fragment {fid}', {'id': fid})


def _verify(ctx: Context, args: dict[str, Any]) -> Answer:
    if 'exit_code' in args:
        if 'timeout_seconds' in args:
            raise AgitmemError('verify: timeout_seconds is for a run agitmem makes, not one you report')
        done = verifying.report(ctx, args['command'], args['exit_code'], args.get('output', ''), save=True)
        how = 'recorded as reported'
    else:
        if 'output' in args:
            raise AgitmemError('verify: output goes with exit_code (a run you made and report)')
        argv = verifying.confirmed(args['command'])
        timeout = float(args.get('timeout_seconds') or VERIFY_TIMEOUT)
        done = verifying.run(ctx, argv, save=True, timeout=timeout)
        how = f'timed out after {timeout:g}s, stopped' if done.timed_out else 'run by agitmem'
    result = 'timed out' if done.timed_out else done.result
    text = f'verification {result} (exit {done.exit_code}, {how}): {render.line(done.reason)}'
    return Answer(text, {
        'result': done.result, 'exit_code': done.exit_code, 'reason': render.line(done.reason),
        'timed_out': done.timed_out, 'reported': 'exit_code' in args,
    })


def _hit(hit: Any) -> dict[str, Any]:
    ret = {}
    for key in ('kind', 'id', 'commit', 'date', 'file', 'ref', 'score', 'current', 'text'):
        value = getattr(hit, key, None)
        ret[key] = render.text(value) if isinstance(value, str) else value
    return ret


def _recall(ctx: Context, args: dict[str, Any]) -> Answer:
    from agitmem.porcelain import recall
    hits = [_hit(h) for h in recall.search(
        ctx, args['query'], limit=int(args.get('limit') or 10),
        all_branches=bool(args.get('all_branches')),
    )]
    if not hits:
        return Answer(f'nothing in memory matches {render.line(args["query"])!r}', {'hits': []})
    lines = []
    for h in hits:
        where = ' '.join(str(h[k]) for k in ('file', 'commit', 'date') if h.get(k))
        head = f'[{h["kind"]}{" " + h["id"] if h.get("id") else ""}] {where}'
        lines.append(f'{head}\n{h["text"]}')
    return Answer('\n\n'.join(lines), {'hits': hits})


def _recovery(ctx: Context, args: dict[str, Any]) -> Answer:
    from agitmem.memory import recovery_log as log_format
    from agitmem.porcelain import recovery
    if 'n' in args:
        row = recovery.one(ctx.repo, args['n'])
        shown = {k: v for k, v in row.items() if k not in ('injection', 'summary')}
        text = json.dumps(shown, indent=2, ensure_ascii=False)
        # JSON escapes what a terminal acts on; render the rest (bidi, zero-width)
        return Answer(render.controls(text), {'compaction': json.loads(render.controls(text))})
    rows = recovery.rows(ctx.repo)
    summary = log_format.summarize(rows, ctx.cfg['stale_minutes'] * 60)
    listed = [
        f'{r["n"]}. {r.get("at")} {r.get("agent")} {r.get("trigger")}: '
        f'{r.get("verdict") or "pending"}; first: {render.line(str(r.get("first_action") or "-"))}'
        for r in rows
    ]
    head = f'{len(rows)} compaction(s) recorded' if rows else 'no compactions recorded yet'
    return Answer('\n'.join([head, *listed]), {'summary': summary, 'compactions': len(rows)})


_CALLS: dict[str, Callable[[Context, dict[str, Any]], Answer]] = {
    'load': _load,
    'state_set': _state_set,
    'note': _note,
    'fragment_add': _fragment_add,
    'verify': _verify,
    'recall': _recall,
    'recovery': _recovery,
}


def call(name: str, args: object, *, cwd: str | None = None) -> Answer:
    """Run tool `name` with `args` in the repository at `cwd`; an
    AgitmemError says what is wrong, in one line."""
    tool = BY_NAME.get(name)
    if tool is None:
        raise AgitmemError(f'unknown tool "{render.line(name)}" (expected {", ".join(BY_NAME)})')
    checked = check_args(tool, args)
    # the context is read on every call: the branch (and so the memory
    # ref) may have changed since the last one
    ctx = context.get(cwd=cwd, need_memory=True)
    return _CALLS[name](ctx, checked)
