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
