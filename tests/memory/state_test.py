from __future__ import annotations

import pytest

from agitmem.errors import AgitmemError
from agitmem.memory import state as state_mod

_DEEP = b'[' * 10000 + b']' * 10000


def test_same_but_observed_of_a_state_nested_too_deeply() -> None:
    # an observed test run the only change: carried by the next save
    before = b'{"step": 1}'
    assert state_mod.same_but_observed(before, b'{"step": 1, "last_verification": {"observed": true}}')
    # past json's depth it is no state block (parse says so): not the same,
    # and no RecursionError out of the pre-commit hook or `status`
    deep = b'{"step": 1, "last_verification": {"observed": true, "x": ' + _DEEP + b'}}'
    assert state_mod.same_but_observed(before, deep) is False
    assert state_mod.same_but_observed(deep, before) is False
    with pytest.raises(AgitmemError, match='nested too deeply to be a state block'):
        state_mod.parse(deep.decode())


@pytest.mark.parametrize('depth', (150, 600, 900))
def test_parse_refuses_a_value_nested_deeper_than_a_state_block_shows(depth: int) -> None:
    """json reads a value nested 600 deep (under its recursion limit), but
    escaping it for the injection recursed past the limit: `load` ended on
    a RecursionError traceback and the agent hooks injected nothing."""
    text = '{"current_goal": "g", "x": ' + '[' * depth + ']' * depth + '}'
    with pytest.raises(AgitmemError, match='nested too deeply to be a state block'):
        state_mod.parse(text)
    state_mod.parse('{"current_goal": "g", "x": ' + '[' * 50 + ']' * 50 + '}')  # deep, not too deep
