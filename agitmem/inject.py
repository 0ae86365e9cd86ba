"""Build the injection block (DESIGN.md section 4) within its budget.

Order is fixed, init.d-style: user tattoo, project tattoo, state, snapshot
(Goal, In progress, Decisions), newest fragments, newest notes.  When over
budget, notes go first, then fragments, then snapshot sections; tattoo and
state are never cut for the budget (a warning says so when they alone
overflow).  Over the character cap, tattoo rules go, with a marker where
they were: the state is never cut, so it always reaches the agent."""
from __future__ import annotations

from agitmem import render
from agitmem import tokens
from agitmem.memory import snapshot as snapshot_mod
from agitmem.memory import tattoo as tattoo_mod

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from collections.abc import Sequence
    from typing import Any
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple

BEGIN = '===== AGENT MEMORY BEGIN ====='
END = '===== AGENT MEMORY END ====='
MAX_CHARS = tokens.INJECTION_MAX_CHARS
RESTATE = (
    'Your context was just compacted. Before doing anything else, restate '
    'current_goal and next_intent below verbatim, then continue from '
    'next_intent. The rules under TATTOO still hold.'
)
SNAPSHOT_SECTIONS = (
    snapshot_mod.GOAL, snapshot_mod.IN_PROGRESS, snapshot_mod.DECISIONS,
)
# cut order when over budget: the goal is repeated by state.current_goal,
# decisions (agreed interfaces) are kept longest
SNAPSHOT_CUT_ORDER = (
    snapshot_mod.GOAL, snapshot_mod.IN_PROGRESS, snapshot_mod.DECISIONS,
)
STATE_FIELDS = (
    'current_goal', 'current_file', 'current_symbol', 'last_action',
    'next_intent',
)
NEWEST = 5
RELATED_CHARS = 300  # an old item's text in RELATED, at most (recall shows it whole)


class Freshness(NamedTuple):
    """How state and verification relate to the working tree now."""
    state_age: str | None = None  # "3 min ago"
    state_changed: tuple[str, ...] | None = None  # None: fresh / unknown
    verification_changed: tuple[str, ...] | None = None
    # the memory shown is another branch's (no post-checkout ran yet)
    memory_of: str | None = None
    # why the working tree could not be compared (the block goes out anyway)
    unknown: str | None = None


class Memory(NamedTuple):
    user_tattoo: str = ''
    project_tattoo: str = ''
    state: dict[str, Any] = {}
    snapshot: str = ''
    fragments: list[dict[str, Any]] = []
    notes: list[str] = []
    # what the hooks saw (porcelain/observed.py): edits, commands, requests
    observed: dict[str, Any] = {}
    # after a compaction: older items of the memory history that match the
    # state's goal (porcelain/recall.py's hits), and the query that found them
    related: list[dict[str, Any]] = []
    recall_query: str = ''
    # a line when the search for them stopped at its deadline
    related_stopped: str = ''
    # one line per memory file holding bytes that are not UTF-8 (shown
    # escaped): named in the block, never cut
    unreadable: tuple[str, ...] = ()
    # after a compaction: the client's summary of it, and the user's last
    # request, read for a wait-for-me and for steps done the summary
    # calls pending (memory/directives.py)
    summary: str = ''


class Block(NamedTuple):
    text: str
    tokens: int
    warnings: tuple[str, ...]
    cut: dict[str, int]  # what was left out: notes, fragments, sections


def _changed(paths: tuple[str, ...]) -> str:
    shown = ', '.join(paths[:10])
    more = f' and {len(paths) - 10} more' if len(paths) > 10 else ''
    return f'{shown}{more}' if paths else 'files changed'


def tattoo_part(mem: Memory) -> list[str]:
    rules = tattoo_mod.combine(
        tattoo_mod.parse(mem.user_tattoo), tattoo_mod.parse(mem.project_tattoo),
    )
    if not rules:
        return []
    return [
        '## TATTOO: hard rules (violate one and the change is rolled back)',
        *(f'- {r.text}' for r in rules),
    ]


def state_part(mem: Memory, fresh: Freshness) -> list[str]:
    st = mem.state
    head = f'## STATE (step {st.get("step", 0)}'
    if fresh.state_age:
        head += f', updated {fresh.state_age}'
    head += ')'
    lines = [head]
    if fresh.state_changed is not None:
        lines.append(
            f'STALE: the working tree changed since this state was written: '
            f'{_changed(fresh.state_changed)}. Check those files before '
            f'trusting it.',
        )
    for key in STATE_FIELDS:
        value = st.get(key)
        if value not in (None, ''):
            lines.append(f'{key}: {value}')
    lv = st.get('last_verification')
    if isinstance(lv, dict) and lv.get('result'):
        line = (
            f'last_verification: {lv.get("result")} '
            f'(exit {lv.get("exit_code")}) `{lv.get("command", "")}`'
        )
        if lv.get('reason'):
            line += f': {lv["reason"]}'
        if lv.get('reported'):
            line += ' (reported by the agent, not run by agitmem)'
        if lv.get('at'):
            line += f' [at {lv["at"]}]'
        lines.append(line)
        if fresh.verification_changed is not None:
            lines.append(
                f'STALE verification: files changed since it ran: '
                f'{_changed(fresh.verification_changed)}. Run it again '
                f'before relying on the result.',
            )
    return lines


def authority(mem: Memory, fresh: Freshness) -> str:
    """After a compaction: the state, not the summary, says where things
    stand (seed 004 section 6.3), with its step and age to weigh it by."""
    when = f', updated {fresh.state_age}' if fresh.state_age else ''
    line = (
        f'Where the summary of the conversation disagrees with STATE, STATE '
        f'is authoritative (step {mem.state.get("step", 0)}{when})'
    )
    if fresh.state_changed is not None:
        line += ', except where it is marked STALE'
    return line + '.'


def observed_part(mem: Memory, fresh: Freshness = Freshness()) -> list[str]:
    """OBSERVED: facts the hooks recorded, and one line where the state
    disagrees with them (seed 004: a stale state misleads recovery)."""
    obs = mem.observed
    edits = [e for e in obs.get('edits', ()) if isinstance(e, dict) and e.get('file')]
    lv = mem.state.get('last_verification')
    requests = [r for r in obs.get('requests', ()) if isinstance(r, dict) and r.get('text')]
    lines = []
    for e in reversed(edits):
        where = e['file']
        if isinstance(e.get('lines'), list) and e['lines'][0] is not None:
            where += f':{e["lines"][0]}-{e["lines"][1]}'
        lines.append(f'- edited {where}' + (f' in {e["symbol"]}' if e.get('symbol') else ''))
    if isinstance(lv, dict) and lv.get('observed') and lv.get('result'):
        lines.append(f'- last test run: {lv["result"]} `{lv.get("command", "")}`' + (f': {lv["reason"]}' if lv.get('reason') else ''))
    if requests:
        lines.append(f'- user\'s last request: {requests[-1]["text"]}')
    current = mem.state.get('current_file')
    if current and edits:
        latest = edits[-1]['file']
        run = 0
        for e in reversed(edits):
            if e['file'] != latest:
                break
            run += 1
        if latest != current and current not in {e['file'] for e in edits}:
            age = f', {fresh.state_age}' if fresh.state_age else ''
            lines.append(
                f'state says current_file {current} (step {mem.state.get("step", 0)}{age}), '
                f'but ' + (f'the last {run} edits were' if run > 1 else 'the last edit was') + f' to {latest}',
            )
    return ['## OBSERVED (recorded by hooks, not by you)', *lines] if lines else []


def snapshot_parts(mem: Memory) -> dict[str, list[str]]:
    snap = snapshot_mod.parse(mem.snapshot)
    ret = {}
    for name in SNAPSHOT_SECTIONS:
        lines = [t for _, t in snapshot_mod.content_lines(snap.get(name))]
        if lines:
            ret[name] = [f'### {name}', *lines]
    return ret


def fragment_line(f: dict[str, Any]) -> str:
    parts = [f'{f.get("id")}: {f.get("goal", "")}']
    for key in ('action', 'result'):
        if f.get(key):
            parts.append(f'{key}: {f[key]}')
    if f.get('next'):
        parts.append(f'next: {f["next"]}')
    return '- ' + '; '.join(parts)


def related_part(mem: Memory) -> list[str]:
    """RELATED: what recall found for the goal, each with where it is
    from, and the command that shows more."""
    lines = []
    for h in mem.related:
        what = f'{h["kind"]} {h["id"]}' if h.get('id') else h['kind']
        where = f'{str(h["commit"])[:8]} {str(h["date"])[:10]}'
        state = 'current' if h.get('current') else 'removed since'
        text = h['text'] if len(h['text']) <= RELATED_CHARS else h['text'][:RELATED_CHARS] + '...'
        lines.append(f'- {what} ({state}, {where}, {h["file"]}): {text}')
    if mem.related_stopped:
        lines.append(mem.related_stopped)
    if not lines:
        return []
    head = (
        f'## RELATED (older memory matching current_goal and next_intent; more: '
        f'`agitmem recall "{mem.recall_query}"`)'
    )
    return [head, *lines]


def wait_part(mem: Memory) -> list[str]:
    """WAIT, first of all: the user's last request or the summary asks the
    agent to wait for the user's decision (a client's "continue without
    asking" overrode that in real sessions)."""
    from agitmem.memory import directives
    requests = [r for r in mem.observed.get('requests', ()) if isinstance(r, dict) and r.get('text')]
    for where, text in (('their last request', requests[-1]['text'] if requests else ''), ('the summary', mem.summary)):
        said = directives.wait_request(text) if isinstance(text, str) else None
        if said:
            return [
                f'WAIT: the user asked you to wait for their decision before acting '
                f'({where}: "{said}"); ask, do not act. This comes before next_intent.',
            ]
    return []


def done_part(mem: Memory, fresh: Freshness) -> list[str]:
    """Where the summary calls pending a step the memory records as done:
    which is true, with the step and its time."""
    from agitmem.memory import directives
    if not mem.summary:
        return []
    st = mem.state
    when = str(st.get('updated_at') or '')[11:16]
    at = f'step {st.get("step", 0)}' + (f', {when}' if when else '')
    done = [v for v in (st.get('last_action'),) if isinstance(v, str) and v]
    snap_done = [t.lstrip('-* ').strip() for _, t in snapshot_mod.content_lines(
        snapshot_mod.parse(mem.snapshot).get(snapshot_mod.DONE))]
    lines = []
    for item, _ in directives.done_but_pending(mem.summary, done + snap_done)[:3]:
        who = f'STATE ({at})' if item in done else 'the snapshot\'s Done'
        lines.append(
            f"The summary calls '{item}' pending; {who} records it done: it is done"
            + (' (unless marked STALE below).' if fresh.state_changed is not None else '.'),
        )
    return lines


def _render(
        head: list[str],
        tattoo: list[str],
        state: list[str],
        observed: list[str],
        sections: dict[str, list[str]],
        fragments: list[str],
        notes: list[str],
        omitted: list[str],
        related: Sequence[str] = (),
) -> str:
    out = [BEGIN, *head, *tattoo, *state, *observed]
    if sections:
        out.append('## SNAPSHOT')
        for name in SNAPSHOT_SECTIONS:
            out.extend(sections.get(name, ()))
    if fragments:
        out.append(f'## FRAGMENTS (newest {len(fragments)})')
        out.extend(fragments)
    if notes:
        out.append(f'## NOTES (newest {len(notes)}, may be stale)')
        out.extend(notes)
    out.extend(related)
    out.extend(omitted)
    out.append(END)
    return '\n'.join(out) + '\n'


def _rendered(value: Any) -> Any:
    """Each string of a memory value on one line, escaped (render.line)."""
    if isinstance(value, str):
        return render.line(value)
    if isinstance(value, dict):
        return {k: _rendered(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_rendered(v) for v in value)
    return value


def _unkeyed(observed: dict[str, Any]) -> dict[str, Any]:
    """The observed entries without the session key that says whose each
    is (`agent NUL id`), which no part of the block shows: escaping it
    would compile render's pattern (a millisecond) on every load after a
    hook ran."""
    return {
        k: [{f: v for f, v in e.items() if f != 'session'} if isinstance(e, dict) else e for e in entries]
        if isinstance(entries, list) else entries
        for k, entries in observed.items()
    }


def rendered(mem: Memory, fresh: Freshness) -> tuple[Memory, Freshness]:
    """The memory as the agent may see it (of its notes and fragments, the
    newest, which build shows): text from a cloned memory ref
    or a payload has its control, bidi and zero-width characters escaped
    (DESIGN.md section 12), once, before the budget measures it."""
    mem = mem._replace(
        user_tattoo=render.text(mem.user_tattoo),
        project_tattoo=render.text(mem.project_tattoo),
        state=_rendered(mem.state),
        snapshot=render.text(mem.snapshot),
        # only the newest are shown (build): the rest of a memory of a
        # thousand notes is not escaped for five
        fragments=_rendered(mem.fragments[-NEWEST:]),
        notes=_rendered(mem.notes[-NEWEST:]),
        observed=_rendered(_unkeyed(mem.observed)),
        related=_rendered(mem.related),
        recall_query=render.line(mem.recall_query),
        related_stopped=render.line(mem.related_stopped),
        summary=render.text(mem.summary),
    )
    fresh = fresh._replace(
        state_changed=_rendered(fresh.state_changed),
        verification_changed=_rendered(fresh.verification_changed),
        memory_of=_rendered(fresh.memory_of),
    )
    return mem, fresh
def _fit_tattoo(
        tattoo: list[str], size: Callable[[list[str]], int],
) -> tuple[list[str], int]:
    """The tattoo's heading and the rules that fit the cap, in their order
    (a long rule is skipped, the short ones after it still go in), with a
    marker line where rules were left out; (lines, rules left out)."""
    head, rules = tattoo[:1], tattoo[1:]

    def marker(n: int) -> list[str]:
        return [f'- [{n} more rule(s) left out for size: read .agent/memory/tattoo.md in full]']

    kept: list[str] = []
    for rule in rules:
        # measured with the longest marker it could end with
        if size(head + kept + [rule] + marker(len(rules))) <= MAX_CHARS:
            kept.append(rule)
    n = len(rules) - len(kept)
    return head + kept + (marker(n) if n else []), n


def build(
        mem: Memory,
        *,
        budget_tokens: int,
        after_compact: bool = False,
        fresh: Freshness = Freshness(),
) -> Block:
    mem, fresh = rendered(mem, fresh)
    head = [RESTATE, authority(mem, fresh)] if after_compact else []
    if after_compact:
        head[:0] = wait_part(mem)
        head.extend(done_part(mem, fresh))
    if fresh.memory_of:
        head.append(fresh.memory_of)
    head.extend(f'NOTE: {u}' for u in mem.unreadable)
    tattoo = tattoo_part(mem)
    state = state_part(mem, fresh)
    observed = observed_part(mem, fresh)
    sections = snapshot_parts(mem)
    fragments = [fragment_line(f) for f in mem.fragments[-NEWEST:]]
    notes = [f'- {n}' for n in mem.notes[-NEWEST:]]
    related = related_part(mem)
    cut = {'related': 0, 'notes': 0, 'fragments': 0, 'observed': 0, 'snapshot_sections': 0}

    def render() -> str:
        omitted = []
        # (RELATED is not memory to read again: `recall` finds it)
        if any(n for k, n in cut.items() if k != 'related'):
            what = ', '.join(f'{n} {k.replace("_", " ")}' for k, n in cut.items() if n and k != 'related')
            omitted.append(
                f'(left out for size: {what}; read them in .agent/memory/)',
            )
        return _render(head, tattoo, state, observed, sections, fragments, notes, omitted, related)

    def fits(text: str) -> bool:
        return tokens.estimate(text) <= budget_tokens and len(text) <= MAX_CHARS

    text = render()
    # RELATED is a pointer to more (`recall`): it goes before anything
    # the injection guarantees
    if not fits(text) and related:
        cut['related'] = len(mem.related)
        related.clear()
        text = render()
    # oldest first within each layer, layers in the fixed cut order
    while not fits(text) and notes:
        notes.pop(0)
        cut['notes'] += 1
        text = render()
    while not fits(text) and fragments:
        fragments.pop(0)
        cut['fragments'] += 1
        text = render()
    # facts the hooks saw go before the agent's own snapshot: the snapshot
    # says what the agent meant to do, which a summary loses first
    if not fits(text) and observed:
        cut['observed'] = len(observed) - 1
        observed.clear()
        text = render()
    for name in SNAPSHOT_CUT_ORDER:
        if fits(text):
            break
        if sections.pop(name, None) is not None:
            cut['snapshot_sections'] += 1
            text = render()
    if not fits(text) and not sections and not fragments and not notes and not observed:
        # all that could go is gone: the "left out" notice must not be
        # what pushes the block over
        core = _render(head, tattoo, state, [], {}, [], [], [])
        if fits(core):
            text = core
    if len(text) > MAX_CHARS and len(tattoo) > 1:
        # the tattoo would push the state past the cap: rules go instead
        tattoo[:], cut['tattoo_rules'] = _fit_tattoo(
            tattoo, lambda t: len(_render(head, t, state, [], {}, [], [], [])),
        )
        text = _render(head, tattoo, state, [], {}, [], [], [])
    warnings = list(mem.unreadable)
    if fresh.unknown:
        warnings.append(f'state and working tree not compared: {fresh.unknown}')
    if not fits(text):
        warnings.append(
            f'tattoo and state alone are {tokens.estimate(text)} tokens / '
            f'{len(text)} characters, over the budget of {budget_tokens} '
            f'tokens: they are not cut for the budget; shorten tattoo.md or state.json',
        )
    if cut.get('tattoo_rules'):
        warnings.append(
            f'{cut["tattoo_rules"]} tattoo rule(s) left out: the tattoo is over '
            f'what the {MAX_CHARS:,}-character cap leaves it next to the state; '
            f'shorten tattoo.md (`agitmem check` names the limit)',
        )
    if len(text) > MAX_CHARS:
        # the state alone is over the cap: past it the client hides the text
        marker = (
            f'\n[cut at {MAX_CHARS} characters: read .agent/memory/state.json '
            f'in full]\n{END}\n'
        )
        text = text[:MAX_CHARS - len(marker)] + marker
        warnings.append(
            f'the block was cut at {MAX_CHARS} characters (the size at which '
            f'Claude Code moves hook output to a file)',
        )
    return Block(text, tokens.estimate(text), tuple(warnings), cut)
