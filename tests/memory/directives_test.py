from __future__ import annotations

import pytest

from agitmem.memory import directives

WAITS = [
    'Please wait for my go-ahead before deleting anything.',
    "Don't do anything until I confirm.",
    'do not change the schema until I have reviewed it',
    'Ask me before you push.',
    'Check with me first.',
    'Wait for my approval on the migration plan.',
    'wait until I say so',
    'Hold off on the refactor until tomorrow.',
    'Get my sign-off before merging.',
    "Let me decide first which loader to keep.",
    '先改好测试，然后等我确认再删除旧代码。',
    '在我确认之前不要提交',
    '先问我再动数据库',
    '先别动 loader.ts',
    '私の確認を待ってください',
    'Espera mi confirmación antes de borrar.',
    'No hagas nada hasta que revise el diff.',
    "Attends ma confirmation avant de supprimer.",
    'Ne fais rien avant que je valide.',
    'Warte auf meine Freigabe.',
    'Mach nichts, bevor ich es gesehen habe.',
    'Aguarde minha aprovação.',
    'Fix the test. Then wait for my decision before touching the API.',
]
NOT_WAITS = [
    "Don't wait for my go-ahead, just do it.",
    'No need to wait for my approval.',
    'You do not have to ask me before each step.',
    'Continue without asking.',
    'Go ahead and delete loadConfig from loader.ts.',
    'The tests wait for the server to start.',
    'I confirmed the plan; proceed.',
    'Waiting on CI is slow.',
    '不用等我确认，直接删。',
    'No esperes, hazlo.',
    "N'attends pas, supprime-le.",
    'Du musst nicht warten.',
    'Ask the linter before committing? no, just run it',
    '',
]


@pytest.mark.parametrize('text', WAITS)
def test_wait_requests(text: str) -> None:
    assert directives.wait_request(text) is not None


@pytest.mark.parametrize('text', NOT_WAITS)
def test_not_wait_requests(text: str) -> None:
    assert directives.wait_request(text) is None


def test_the_sentence_is_quoted() -> None:
    said = directives.wait_request('Fix the test first. Then wait for my decision before touching the API.\nThanks')
    assert said == 'Then wait for my decision before touching the API.'


SUMMARY = """Summary:
1. Primary Request and Intent:
   Move the config loader into index.ts.
2. Pending Tasks:
   - Delete loadConfig from loader.ts
   - Update the README
3. Current Work:
   Moving parseArgs.
"""


def test_done_but_pending() -> None:
    got = directives.done_but_pending(SUMMARY, ['deleted loadConfig from loader.ts', 'moved parseArgs', 'ok'])
    assert got == [('deleted loadConfig from loader.ts', '- Delete loadConfig from loader.ts')]
    assert directives.done_but_pending('Next step: update the README.', ['updated the readme file']) == [
        ('updated the readme file', 'update the README.'),
    ]
    # done elsewhere than in a pending line: nothing to say
    assert directives.done_but_pending('We moved parseArgs into index.ts.', ['moved parseArgs into index.ts']) == []
