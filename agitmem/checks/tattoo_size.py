"""`tattoo-size`: a tattoo is read in full after every compaction, so it must
stay short: over `max_rules` rules warns, over 200 lines errors, and rules
(the user's and the project's) over their share of the injection cap
error: past it they would crowd the state out of the injection."""
from __future__ import annotations

from agitmem import tokens
from agitmem.checks import Finding
from agitmem.memory import bullets
from agitmem.memory import tattoo as tattoo_mod

ID = 'tattoo-size'
MAX_LINES = 200


def over_bound(rules: list[tattoo_mod.Rule]) -> str | None:
    """What is wrong when the rules, as injected, pass the tattoo's share
    of the injection cap; None when they fit."""
    chars = tattoo_mod.injected_chars(rules)
    if chars <= tokens.TATTOO_MAX_CHARS:
        return None
    return (
        f'the tattoo takes {chars:,} characters of the injection, over its '
        f'{tokens.TATTOO_MAX_CHARS:,} (the rest of the '
        f'{tokens.INJECTION_MAX_CHARS:,} cap is the state\'s)'
    )


def check(
        text: str,
        *,
        max_rules: int,
        path: str,
        user: list[tattoo_mod.Rule] | None = None,
) -> list[Finding]:
    """`user`: the user-level tattoo's rules, injected with these."""
    ret = []
    rules = bullets(text)
    if len(rules) > max_rules:
        first_extra, _ = rules[max_rules]
        ret.append(
            Finding(
                ID, 'warning',
                f'{len(rules)} rules, over max_rules ({max_rules}); merge or '
                f'drop rules so that each one still gets read (or raise '
                f'max_rules in .agent/config.yaml)',
                path=path, line=first_extra,
            ),
        )
    lines = len(text.splitlines())
    if lines > MAX_LINES:
        ret.append(
            Finding(
                ID, 'error',
                f'{lines} lines, over the limit of {MAX_LINES}; keep only the '
                f'rules that must never be broken and move the rest to '
                f'snapshot.md or notes.md',
                path=path, line=MAX_LINES + 1,
            ),
        )
    project = tattoo_mod.parse(text)
    injected = tattoo_mod.combine(user or [], project)
    why = over_bound(injected)
    if why is not None:
        ret.append(
            Finding(
                ID, 'error',
                f'{why}; shorten or drop rules, or move them to snapshot.md '
                f'or notes.md',
                path=path, line=_passes_at(injected, project),
            ),
        )
    return ret


def _passes_at(rules: list[tattoo_mod.Rule], project: list[tattoo_mod.Rule]) -> int:
    """The line of the project rule at which the rules pass the bound (the
    user's come first); the first line when the user's alone do."""
    chars = tattoo_mod.injected_chars(rules) - tattoo_mod.injected_chars(project)
    for r in project:
        chars += tattoo_mod.injected_chars([r])
        if chars > tokens.TATTOO_MAX_CHARS:
            return r.line
    return 1
