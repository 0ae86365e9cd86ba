"""The recovery log's pure half: the verdict on the first turn after a
compaction (agitmem/memory/recovery.py), the log folded into rows and
seed 004's table (agitmem/memory/recovery_log.py).  The hooks that feed it are driven in
tests/commands/recovery_test.py."""
from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agitmem.memory import recovery
from agitmem.memory import recovery_log
from agitmem.memory.recovery import classify
from agitmem.memory.recovery_log import fold
from agitmem.memory.recovery_log import parse
from agitmem.memory.recovery_log import summarize
from agitmem.memory.recovery_log import VERDICTS
from agitmem.porcelain.recovery import note_events


def _expect(**changes: Any) -> dict[str, Any]:
    state = {
        'current_goal': 'read the config as TOML',
        'current_file': 'src/app.py',
        'current_symbol': 'load_config',
        'next_intent': 'replace the INI parsing in load_config with tomllib',
    }
    expect = recovery_log.expectation(
        state,
        ['porting `load_config` to tomllib'],
        ['read the config as TOML (src/config.py too)'],
        ['update docs/config.md'],
    )
    expect.update(changes)
    return expect


FAILED = {'verification': 'failed', 'verification_reason': 'test_load: KeyError: port'}


def _edit(f: str, symbol: str | None = None) -> dict[str, Any]:
    return {'kind': 'edit', 'file': f, 'symbol': symbol}


def _run(command: str, code: int | None, test: str | None = None) -> dict[str, Any]:
    return {'kind': 'command', 'command': command, 'exit_code': code, 'test': test}


# -- classify: each verdict ------------------------------------------------------

def test_edit_on_current_file_is_recovered() -> None:
    verdict, evidence, first = classify(_expect(), [_edit('src/app.py', 'load_config')], 'Editing.')
    assert verdict == 'recovered'
    assert evidence == ['edit src/app.py in load_config: current_file, current_symbol']
    assert first == 'edit src/app.py in load_config'


def test_edit_on_current_file_without_a_symbol_is_recovered() -> None:
    assert classify(_expect(), [_edit('src/app.py')], None)[0] == 'recovered'


def test_edit_on_a_file_named_in_progress_is_recovered() -> None:
    expect = _expect(current_file='', in_progress=['next: src/loader.py'])
    verdict, evidence, _ = classify(expect, [_edit('src/loader.py')], None)
    assert verdict == 'recovered'
    assert evidence == ['edit src/loader.py: named by the task']


def test_current_file_but_another_symbol_is_location_lost() -> None:
    verdict, evidence, _ = classify(_expect(), [_edit('src/app.py', 'save_config')], None)
    assert verdict == 'location'
    assert evidence == ['edit src/app.py in save_config: current_file, but the wrong function (current_symbol is load_config)']


def test_another_symbol_named_in_next_intent_is_recovered() -> None:
    expect = _expect(next_intent='then call save_config from load_config')
    assert classify(expect, [_edit('src/app.py', 'save_config')], None)[0] == 'recovered'


def test_a_new_function_in_current_file_for_a_todo_item_is_goal_drift() -> None:
    expect = _expect(todo=['validate the env vars (validate_env)'])
    edit = {**_edit('src/app.py', 'validate_env'), 'text': 'def validate_env():\n    os.environ["CONFIG"]'}
    verdict, evidence, _ = classify(expect, [edit], None)
    assert verdict == 'drift'
    assert evidence == ['edit of src/app.py in validate_env adds validate_env: matches Todo item "validate the env vars (validate_env)", not the goal']


def test_a_side_topic_of_the_summary_is_goal_drift() -> None:
    summary = 'We are porting load_config to tomllib. The user also mentioned a changelog entry in CHANGES.md.'
    verdict, evidence, _ = classify(_expect(todo=[]), [_edit('CHANGES.md')], None, summary=summary)
    assert verdict == 'drift'
    assert 'a file of another task' in evidence[0]


@pytest.mark.parametrize('path', [
    'docs/changelog.md',  # a document holds no code change
    'config/app.toml',  # nor a file of another kind than current_file's
])
def test_an_edit_the_task_does_not_name_is_goal_drift(path: str) -> None:
    verdict, evidence, _ = classify(_expect(), [_edit(path)], 'Updating.')
    assert verdict == 'drift', evidence
    assert evidence == [f'edit {path}: a file neither the task nor its current_file (src/app.py) names']


@pytest.mark.parametrize('path', [
    'src/other.py',  # next to current_file
    'tests/app.py',  # the same stem
])
def test_code_away_from_the_tasks_place_that_points_to_no_other_task_is_location_lost(path: str) -> None:
    # goal drift needs another task to drift to (its words, a file it
    # names); without one, the edit is the task's, in the wrong place
    verdict, evidence, _ = classify(_expect(), [_edit(path)], 'Updating.')
    assert verdict == 'location', evidence
    assert evidence == [f'edit {path}: nothing in it points to another task, and it is not the task\'s place (current_file is src/app.py)']
    expect = _expect(todo=['add a --verbose flag to the CLI'])
    edit = {**_edit(path), 'text': 'parser.add_argument("--verbose", action="store_true")  # verbose flag'}
    assert classify(expect, [edit], 'Updating.')[0] == 'drift'


def test_an_edit_beside_the_tasks_place_in_a_turn_that_works_at_it_goes_with_it() -> None:
    # a type, an import, a test written before or after the change itself
    change = {**_edit('src/app.py', 'load_config'), 'text': 'data = tomllib.loads(text)'}
    beside = {**_edit('src/types.py', 'Config'), 'text': 'port: int  # read from TOML'}
    for events in ([change, beside], [beside, change]):
        verdict, evidence, _ = classify(_expect(), events, None)
        assert verdict == 'recovered', evidence
    assert 'beside the task\'s place, which the turn also changes' in classify(_expect(), [beside, change], None)[1][0]
    # alone, the same edit is the task's change in the wrong place
    assert classify(_expect(), [beside], None)[0] == 'location'
    # a file another task names is that task's, beside the place or not
    docs = {**_edit('docs/config.md'), 'text': 'port is read from TOML'}
    assert classify(_expect(), [change, docs], None)[0] == 'drift'


def test_without_a_recorded_place_the_tasks_change_is_not_misplaced() -> None:
    # no current_file (a summary that names no file): the place is unknown,
    # so only which task an edit serves is judged
    expect = _expect(current_file='', current_symbol='', in_progress=[])
    edit = {**_edit('src/settings.py', 'read_settings'), 'text': 'import tomllib\n    data = tomllib.load(f)'}
    verdict, evidence, _ = classify(expect, [edit], None)
    assert verdict == 'recovered', evidence
    assert evidence == ['edit src/settings.py in read_settings: the task\'s change, and no place is recorded for it (no current_file)']
    # another task's words still decide
    verbose = {**_edit('src/cli.py'), 'text': 'parser.add_argument("--verbose", action="store_true")  # verbose flag'}
    assert classify({**expect, 'todo': ['add a --verbose flag to the CLI']}, [verbose], None)[0] == 'drift'
    # a file the task names of that kind is the place it was meant for
    named = _expect(current_file='', current_symbol='', next_intent='replace the INI parsing in src/loader.py with tomllib')
    assert classify(named, [edit], None)[0] == 'location'


def test_a_later_todo_item_is_goal_drift() -> None:
    verdict, evidence, _ = classify(_expect(), [_edit('docs/config.md')], None)
    assert verdict == 'drift'
    assert evidence == ['edit docs/config.md: a file of another task (Todo or a side remark of the summary)']


def test_the_tasks_work_in_a_file_it_does_not_name_is_location_lost() -> None:
    edit = {**_edit('src/settings.py', 'read_settings'), 'text': 'import tomllib\n    data = tomllib.load(f)'}
    verdict, evidence, _ = classify(_expect(), [edit], None)
    assert verdict == 'location'
    assert evidence == ['edit of src/settings.py in read_settings: the change the task asks for, in a file the task does not name (current_file is src/app.py)']


def test_current_symbols_copy_in_another_file_is_location_lost() -> None:
    # the function already moved: deleting (or editing) the copy, not the original
    expect = _expect(current_goal='move load_config from src/app.py into src/config.py')
    edit = {**_edit('src/config.py'), 'text': '', 'removed': 'def load_config(path):\n    return parse(path)'}
    verdict, evidence, _ = classify(expect, [edit], None)
    assert verdict == 'location'
    assert evidence == ['edit src/config.py: current_symbol load_config, but in another file (current_file is src/app.py)']


def test_a_caller_instead_of_current_symbol_is_location_lost() -> None:
    caller = {**_edit('src/cli.py', 'main'), 'text': 'cfg = load_config(args.path, toml=True)'}
    verdict, evidence, _ = classify(_expect(), [caller], None)
    assert verdict == 'location'
    assert evidence == ['edit src/cli.py in main: a reference to current_symbol load_config changed before load_config itself (in src/app.py)']
    # after current_symbol itself, or when next_intent asks for its callers, it is the task
    assert classify(_expect(), [_edit('src/app.py', 'load_config'), caller], None)[0] == 'recovered'
    expect = _expect(next_intent='update the callers of load_config')
    assert classify(expect, [caller], None)[0] == 'recovered'


def test_a_side_remark_of_the_summary_in_current_symbol_is_goal_drift() -> None:
    summary = 'Porting load_config to tomllib. The user also mentioned logging every config read with a timestamp.'
    edit = {**_edit('src/app.py', 'load_config'), 'text': 'logging.info("config read %s", timestamp())'}
    verdict, evidence, _ = classify(_expect(), [edit], None, summary=summary)
    assert verdict == 'drift'
    assert evidence == ['edit of src/app.py in load_config: matches side remark of the summary "The user also mentioned logging every config read with a timestamp.", not the goal']


def test_the_names_an_edit_defines_say_which_task_it_serves() -> None:
    # its body uses the goal's words (config, load), its name is the Todo's
    expect = _expect(todo=['env-var validation (the user asked in passing)'])
    edit = {**_edit('src/app.py'), 'text': 'def validateEnv(config):\n    load_config(config)'}
    verdict, evidence, _ = classify(expect, [edit], None)
    assert verdict == 'drift'
    assert evidence == ['edit of src/app.py adds validateEnv: matches Todo item "env-var validation (the user asked in passing)", not the goal']


def test_words_the_goal_and_another_task_share_decide_nothing() -> None:
    # "config" is in both; tomllib is the goal's alone
    expect = _expect(todo=['log every config read'])
    edit = {**_edit('src/app.py', 'load_config'), 'text': 'data = tomllib.loads(config)', 'removed': 'data = ini(config)'}
    assert classify(expect, [edit], None)[0] == 'recovered'


def test_the_closing_text_decides_an_edit_whose_words_do_not() -> None:
    summary = 'Porting load_config to tomllib. The user also mentioned hit-rate statistics for the cache.'
    edit = {**_edit('src/cache.py', 'Cache'), 'text': 'counter = {}'}
    said = 'Added hit-rate statistics to the cache.'
    verdict, evidence, _ = classify(_expect(), [edit], said, summary=summary)
    assert verdict == 'drift'
    assert evidence[0] == (
        'edit of src/cache.py in Cache: the closing text says it serves side remark of the summary '
        '"The user also mentioned hit-rate statistics for the cache.", not the goal'
    )
    # an account of the goal's work, for an edit whose words say nothing:
    # the task's change, made in a file the task does not name
    verdict, evidence, _ = classify(_expect(), [edit], 'Ported load_config to tomllib.', summary=summary)
    assert verdict == 'location'
    assert 'the change the task asks for (by the closing text)' in evidence[0]
    assert classify(_expect(), [{**edit, 'file': 'src/app.py'}], 'Ported load_config to tomllib.', summary=summary)[0] == 'location'


def test_a_caller_changed_before_current_symbol_is_location_lost_even_when_next_intent_names_it_later() -> None:
    expect = _expect(next_intent='give load_config a path parameter, then fix the caller in src/cli.py')
    caller = {**_edit('src/cli.py', 'main'), 'text': 'cfg = load_config(args.path)'}
    verdict, evidence, _ = classify(expect, [caller], None)
    assert verdict == 'location'
    assert evidence == ['edit src/cli.py in main: a reference to current_symbol load_config changed before load_config itself (in src/app.py)']
    verdict, evidence, _ = classify(expect, [_edit('src/app.py', 'load_config'), caller], None)
    assert verdict == 'recovered'
    assert evidence == ['all 2 edits on the task; first: edit src/app.py in load_config: current_file, current_symbol']


def test_a_definition_done_records_in_another_file_is_state_confusion() -> None:
    expect = _expect(done=['added the ErrNotFound sentinel in src/errors.py'])
    edit = {**_edit('src/app.py'), 'text': 'ErrNotFound = object()\nclass ErrNotFound(Exception): pass'}
    verdict, evidence, _ = classify(expect, [edit], None)
    assert verdict == 'state'
    assert evidence == ['edit of src/app.py adds ErrNotFound: Done records it as added already ("added the ErrNotFound sentinel in src/errors.py"): a step done again']
    # in the file Done names, it is that file's own definition
    assert classify(expect, [{**edit, 'file': 'src/errors.py'}], None)[0] != 'state'


def test_the_goals_words_in_a_document_another_task_names_are_goal_drift() -> None:
    summary = 'Porting load_config to tomllib. The user also wants the README to say TOML is read now.'
    edit = {**_edit('README.md'), 'text': 'load_config reads TOML with tomllib'}
    verdict, evidence, _ = classify(_expect(todo=[]), [edit], None, summary=summary)
    assert verdict == 'drift'
    assert evidence == ['edit README.md: a file of another task (Todo or a side remark of the summary)']
    # the same words in code the task does not name: its change misplaced
    assert classify(_expect(todo=[]), [{**edit, 'file': 'src/settings.py'}], None, summary=summary)[0] == 'location'


def test_a_symbol_the_users_request_names_by_its_words_is_the_request() -> None:
    edit = {**_edit('src/app.py', 'httpClient'), 'text': 'timeout=30'}
    verdict, evidence, _ = classify(_expect(), [edit], None, prompt='First bump the HTTP client timeout to 30s.')
    assert verdict == 'recovered'
    assert evidence[0] == 'edit src/app.py in httpClient: current_file, named by the task'
    assert classify(_expect(), [edit], None)[0] == 'location'


def test_redoing_what_done_records_is_state_confusion() -> None:
    expect = _expect(done=['added the users_email_idx index on users.email in migration 0003'])
    edit = {**_edit('migrations/0004.py'), 'text': 'AddIndex users_email_idx on users.email'}
    verdict, evidence, _ = classify(expect, [edit], None)
    assert verdict == 'state'
    assert evidence == ['edit migrations/0004.py: it does again what last_action / Done record as done']


def test_a_second_definition_is_state_confusion() -> None:
    edit = {**_edit('src/app.py', 'load_config'), 'twice': True}
    verdict, evidence, _ = classify(_expect(), [edit], None)
    assert (verdict, evidence) == ('state', ['edit src/app.py in load_config: src/app.py now defines load_config twice: a step already done, done again'])


def test_the_whole_turn_counts_and_the_first_wrong_edit_decides() -> None:
    events = [_edit('src/app.py'), _run('pytest -q', 1, 'failed'), _edit('src/app.py', 'save_config')]
    verdict, evidence, first = classify(_expect(), events, 'Done with the imports.')
    assert verdict == 'location'
    assert evidence[0].startswith('edit src/app.py in save_config')
    assert first == 'edit src/app.py'
    events = [_edit('src/app.py', 'load_config'), _edit('docs/config.md')]  # the Todo item's document
    assert classify(_expect(), events, None)[0] == 'drift'


def test_all_edits_on_the_task_are_recovered() -> None:
    events = [_run('pytest -q', 1, 'failed'), _edit('src/app.py'), _edit('src/app.py', 'load_config')]
    verdict, evidence, first = classify(_expect(), events, None)
    assert verdict == 'recovered'
    assert evidence == ['all 2 edits on the task; first: edit src/app.py: current_file']
    assert first == 'ran `pytest -q` (exit 1)'


def test_a_shell_made_edit_is_judged_like_any_other() -> None:
    events = [_run('ruff format docs', None), {**_edit('docs/changelog.md'), 'by': 'shell'}]
    verdict, evidence, first = classify(_expect(), events, None)
    assert verdict == 'drift'
    assert evidence[0].startswith('shell-made edit docs/changelog.md')
    assert first == 'ran `ruff format docs` (exit unknown)'


def test_claiming_tests_pass_after_a_failed_verification_is_state_confusion() -> None:
    verdict, evidence, first = classify(_expect(**FAILED), [], 'All tests pass now.')
    assert verdict == 'state'
    assert evidence == [(
        'closing text said "All tests pass now." while the last verification failed '
        '(test_load: KeyError: port), with no passing test run since'
    )]
    assert first == 'said: All tests pass now.'


def test_claim_beats_an_edit_on_current_file() -> None:
    events = [_edit('src/app.py', 'load_config')]
    assert classify(_expect(**FAILED), events, 'Done: the task is complete.')[0] == 'state'


def test_claim_after_a_failing_test_run_in_the_turn_is_confusion() -> None:
    events = [_run('pytest -q', 1, 'failed')]
    verdict, evidence, _ = classify(_expect(verification='passed'), events, 'All tests pass.')
    assert verdict == 'state'
    assert 'the test run in this turn failed' in evidence[0]


def test_claim_with_no_test_ever_run_is_confusion() -> None:
    verdict, evidence, _ = classify(_expect(verification=None), [], 'Fixed and verified: all tests pass.')
    assert verdict == 'state'
    assert 'no test was run' in evidence[0]


def test_claim_after_a_passing_test_run_is_no_confusion() -> None:
    events = [_run('pytest -q', 0, 'passed')]
    verdict, evidence, first = classify(_expect(**FAILED), events, 'All tests pass.')
    assert verdict == 'recovered'
    assert first == 'ran `pytest -q` (exit 0)'
    assert evidence == ['test run ran `pytest -q` (exit 0): the check the state asks for']


def test_claim_after_a_passed_verification_is_no_confusion() -> None:
    assert classify(_expect(verification='passed'), [], 'All tests pass.')[0] != 'state'


def test_a_chinese_claim_is_state_confusion() -> None:
    verdict, evidence, _ = classify(_expect(**FAILED), [], '我已经修好了导入，所有测试都通过了。')
    assert verdict == 'state'
    assert '所有测试都通过了' in evidence[0]
    assert classify(_expect(**FAILED), [], '测试还没有通过，我接着修。')[0] != 'state'


@pytest.mark.parametrize('said', [
    'I have lost track of things. What would you like me to work on?',
    'Could you remind me which file we were editing',
    'Sorry, I do not have context on the task. Let me know what to do.',
    'Where were we?',
    'I looked at the repository. Please let me know how you would like to proceed.',
    '我看了一下代码结构。请问你希望我接下来做什么？',
    '目前不清楚当前的任务，请告诉我下一步要做什么',
])
def test_asking_the_user_what_to_do_is_full_reset(said: str) -> None:
    verdict, evidence, _ = classify(_expect(), [], said)
    assert verdict == 'reset'
    assert evidence[0].startswith('closing text asks the user what to do with no tool use: "')


@pytest.mark.parametrize('said', [
    'Next: replace the INI parsing in load_config with tomllib. Where is load_config defined?',
    'I need to port load_config to tomllib, but I cannot find load_config in this checkout.',
    'To replace the INI parsing with tomllib: which file has load_config?',
    '要把 load_config 的 INI 解析换成 tomllib，但我找不到 load_config，它定义在哪个文件？',
])
def test_asking_where_the_tasks_code_is_is_location_lost(said: str) -> None:
    # the goal stated, its place lost: not a hand-back of the choice of work
    events = [_run('ls src', 0)]
    verdict, evidence, _ = classify(_expect(), events, said)
    assert verdict == 'location', evidence
    assert evidence[0].startswith('closing text states the task but asks where its code is: "')


@pytest.mark.parametrize('said', [
    "I can't find anything in progress. What would you like me to work on?",
    'Could you remind me which file we were editing',
    'Where should I start?',
])
def test_asking_where_without_the_task_is_a_reset(said: str) -> None:
    assert classify(_expect(), [], said)[0] == 'reset'


def test_asking_after_reading_around_is_still_full_reset() -> None:
    events = [_run('ls src', 0), _run('cat README.md', 0), _run('find . -name "*.py"', 0)]
    verdict, evidence, first = classify(_expect(), events, 'What would you like me to do?')
    assert verdict == 'reset'
    assert evidence[0].startswith('closing text asks the user what to do after 3 command(s) that changed nothing')
    assert first == 'ran `ls src` (exit 0)'


def test_asking_after_edits_is_judged_by_the_edits() -> None:
    assert classify(_expect(), [_edit('src/app.py', 'load_config')], 'Shall I run the tests?')[0] == 'recovered'


def test_stating_next_intent_and_asking_to_go_ahead_is_recovered() -> None:
    said = 'Next I replace the INI parsing in load_config with tomllib. Shall I go ahead?'
    verdict, evidence, _ = classify(_expect(), [], said)
    assert verdict == 'recovered'
    assert evidence[0].startswith("closing text states the task's next step and asks to go ahead")


def test_proposing_a_todo_item_is_goal_drift() -> None:
    verdict, _, _ = classify(_expect(), [], 'Shall I update docs/config.md now?')
    assert verdict == 'drift'


def test_naming_current_file_is_recovered() -> None:
    verdict, evidence, _ = classify(_expect(next_intent='', in_progress=[]), [], 'Back to src/app.py.')
    assert (verdict, evidence) == ('recovered', ['closing text names current_file src/app.py'])


def test_a_test_run_the_state_asks_for_is_recovered() -> None:
    events = [_run('python -m pytest tests/', 1, 'failed'), _run('git status', 0)]
    verdict, _, first = classify(_expect(**FAILED), events, None)
    assert verdict == 'recovered'
    assert first == 'ran `python -m pytest tests/` (exit 1)'
    expect = _expect(next_intent='run the tests again')
    assert classify(expect, [_run('cargo test', 0, 'passed')], None)[0] == 'recovered'


def test_a_test_run_with_nothing_to_check_is_unknown() -> None:
    verdict, evidence, _ = classify(_expect(verification='passed'), [_run('pytest', 0, 'passed')], None)
    assert verdict == 'unknown'
    assert evidence == ['1 command(s), no edit, no test run the state asks for, nothing said: nothing to judge by']


def test_saying_nothing_to_judge_is_unknown() -> None:
    verdict, evidence, first = classify(_expect(), [], 'OK.')
    assert verdict == 'unknown' and first == 'said: OK.'
    assert evidence == ['no tool use, and next to nothing said: nothing to judge by']
    assert classify(_expect(), [], None)[0] == 'unknown'


def test_a_turn_that_only_talks_or_looks_around_is_a_reset() -> None:
    # seed 004: the turn ends without taking the task up again
    said = 'Der Kontext wurde zusammengefasst; ich habe mir die Struktur angesehen.'
    verdict, evidence, _ = classify(_expect(), [], said)
    assert verdict == 'reset' and evidence[0].startswith('no tool use, and the closing text neither states')
    events = [_run('ls', 0), _run('cat README.md', 0)]
    verdict, evidence, _ = classify(_expect(), events, 'The repository holds a small web app with its docs.')
    assert verdict == 'reset' and evidence[0].startswith('2 command(s), no edit')


def test_asking_to_be_reminded_of_the_task_is_a_reset() -> None:
    # it names current_file, but asks the user to say the task again
    said = 'Veo la función en src/app.py. ¿Me recuerdas qué había que hacer con ella?'
    assert classify(_expect(), [], said)[0] == 'reset'
    assert classify(_expect(), [], 'I see src/app.py open. Can you remind me what we were changing there?')[0] == 'reset'
    assert classify(_expect(), [], '我看到了 src/app.py，提醒我一下要改什么？')[0] == 'reset'


# -- the user's prompt after the compaction ---------------------------------------

@pytest.mark.parametrize('prompt', ['go on', 'Continue.', 'ok, carry on', '继续', '好的，继续吧', None, ''])
def test_a_prompt_that_says_go_on_is_no_new_request(prompt: str | None) -> None:
    verdict, evidence, _ = classify(_expect(), [_edit('docs/changelog.md')], None, prompt)
    assert verdict == 'drift'
    assert len(evidence) == 1


def test_a_new_request_is_what_the_turn_is_judged_against() -> None:
    prompt = 'Before that, add a line about the TOML port to docs/changelog.md'
    verdict, evidence, _ = classify(_expect(), [_edit('docs/changelog.md')], 'Added.', prompt)
    assert verdict == 'recovered'
    assert evidence == [
        'edit docs/changelog.md: named by the task',
        'judged against the user\'s request after the compaction: "Before that, add a line about the TOML port to docs/changelog.md"',
    ]


def test_a_user_who_says_the_task_again_is_noted() -> None:
    prompt = 'We were replacing the INI parsing in load_config with tomllib, remember?'
    verdict, evidence, _ = classify(_expect(), [_edit('src/app.py', 'load_config')], None, prompt)
    assert verdict == 'recovered'
    assert evidence[1].startswith('the user said the task again after the compaction')


def test_a_damaged_expectation_is_read_as_empty() -> None:
    damaged = {'current_file': 7, 'next_intent': ['x'], 'in_progress': None, 'goal': 'src/app.py', 'verification': {}}
    assert classify(damaged, [_edit('src/app.py')], None)[0] == 'drift'
    assert classify(damaged, [_run('pytest', 1, 'failed')], 'All tests pass.')[0] == 'state'


def test_an_empty_expectation() -> None:
    empty = recovery_log.expectation({}, [], [], [])
    assert empty['current_file'] == '' and empty['verification'] is None
    assert classify(empty, [_edit('src/app.py')], None)[0] == 'drift'
    assert classify(empty, [], 'What should I do?')[0] == 'reset'
    assert classify({}, [_edit('a.py'), _run('pytest', 1, 'failed')], 'done')[0] == 'drift'
    assert classify({}, [], '')[0] == 'unknown'
    assert classify(recovery_log.expectation({}, [], ['port load_config'], []), [_edit('a.py', 'load_config')], None)[0] == 'recovered'


def test_expectation_takes_only_strings_from_a_damaged_state() -> None:
    state = {'current_file': ['x'], 'next_intent': 7, 'last_verification': 'failed'}
    expect = recovery_log.expectation(state, [], [], [])
    assert (expect['current_file'], expect['next_intent'], expect['verification']) == ('', '', None)
    lv = {'last_verification': {'result': 'failed', 'reason': 'E   boom'}}
    assert recovery_log.expectation(lv, [], [], [])['verification_reason'] == 'E   boom'


def test_chinese_and_other_non_ascii_text() -> None:
    expect = _expect(
        current_file='src/配置.py', next_intent='把 load_config 改成读取 TOML 配置文件',
        **FAILED,
    )
    assert classify(expect, [_edit('src/配置.py', 'load_config')], '我修改了配置，下一步跑测试。')[0] == 'recovered'
    # a bare report of the edit, with the verification red and no run: state confusion
    assert classify(expect, [_edit('src/配置.py', 'load_config')], '我修改了配置。')[0] == 'state'
    assert classify(expect, [_edit('src/配置.py', '读取')], None)[0] == 'location'
    assert classify(expect, [], '我们在做什么？请告诉我')[0] == 'reset'
    assert classify(expect, [], 'Ünïcödé ✓ — all tests pass 🎉')[0] == 'state'
    assert classify(expect, [], '\x00\udcff\u2028')[0] in VERDICTS


def test_evidence_and_first_action_are_capped() -> None:
    said = 'word ' * 1000 + 'What should I do?'
    verdict, evidence, first = classify(_expect(), [], said)
    assert verdict == 'reset'
    assert first is not None and len(first) <= len('said: ') + 200
    assert len(evidence[0]) <= 300
    claim = 'All tests pass ' + 'x' * 1000
    verdict, evidence, _ = classify(_expect(**FAILED), [], claim)
    assert verdict == 'state' and len(evidence[0]) < 400


def test_the_first_turn_keeps_its_first_EVENTS_and_last_TAIL_events() -> None:
    hs: dict[str, Any] = {}
    assert note_events(hs, [_edit('a.py')]) is False  # no record open
    hs['recovery'] = {'id': 'x', 'events': None}
    assert note_events(hs, []) is False
    n = 3 * (recovery_log.EVENTS + recovery_log.TAIL)
    for i in range(n):
        assert note_events(hs, [_edit(f'f{i}.py')])
    events = hs['recovery']['events']
    assert len(events) == recovery_log.EVENTS + recovery_log.TAIL
    # the first ones decide what broke first, the last ones what backs the end
    assert [e['file'] for e in events[:recovery_log.EVENTS]] == [f'f{i}.py' for i in range(recovery_log.EVENTS)]
    assert [e['file'] for e in events[recovery_log.EVENTS:]] == [f'f{i}.py' for i in range(n - recovery_log.TAIL, n)]


def test_a_long_turns_closing_claim_is_backed_by_its_last_run() -> None:
    # many edits at the task's place, then the covering run and the claim:
    # the run is no less there for coming after the first EVENTS events
    hs: dict[str, Any] = {'recovery': {'id': 'x', 'events': []}}
    for _ in range(2 * recovery_log.EVENTS):
        note_events(hs, [_edit('src/app.py', 'load_config')])
    note_events(hs, [_run('pytest tests/test_app.py', 0, 'passed')])
    verdict, evidence, _ = classify(_expect(**FAILED), hs['recovery']['events'], 'Ported load_config to tomllib; all tests pass.')
    assert verdict == 'recovered', evidence


_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_EVENT = st.dictionaries(
    st.sampled_from(['kind', 'file', 'symbol', 'command', 'exit_code', 'test']) | st.text(max_size=5),
    _VALUE | st.sampled_from(['edit', 'command', 'passed', 'failed', 'src/app.py']),
    max_size=6,
)
_STATE = st.dictionaries(
    st.sampled_from(['current_file', 'current_symbol', 'current_goal', 'next_intent', 'last_verification']),
    _VALUE | st.text() | st.fixed_dictionaries({'result': st.sampled_from(['failed', 'passed']), 'reason': st.text()}),
)


# the expectation comes back from the session's hook state: it may be damaged
_DAMAGE = st.dictionaries(
    st.sampled_from([
        'current_file', 'current_symbol', 'current_goal', 'next_intent', 'in_progress',
        'goal', 'todo', 'verification', 'verification_reason',
    ]),
    _VALUE,
    max_size=4,
)


@given(
    state=_STATE,
    lines=st.lists(st.text(max_size=40), max_size=3),
    damage=_DAMAGE,
    events=st.lists(_EVENT, max_size=5),
    text=st.none() | st.text() | st.sampled_from([
        'All tests pass.', 'What should I do?', 'src/app.py', 'the task is done',
    ]),
)
def test_classify_never_raises_and_gives_a_verdict(
        state: dict[str, Any], lines: list[str], damage: dict[str, Any],
        events: list[dict[str, Any]], text: str | None,
) -> None:
    expect = {**recovery_log.expectation(state, lines, lines, lines), **damage}
    verdict, evidence, first = classify(expect, events, text)
    assert verdict in VERDICTS
    assert evidence and all(isinstance(e, str) for e in evidence)
    assert first is None or isinstance(first, str)


# -- parse and fold ----------------------------------------------------------------

def _log(*records: dict[str, Any] | str) -> str:
    return ''.join((r if isinstance(r, str) else json.dumps(r)) + '\n' for r in records)


def _compaction(rid: str, **more: Any) -> dict[str, Any]:
    return {'kind': 'compaction', 'id': rid, 'at': '2026-01-02T03:04:05Z', 'agent': 'claude', **more}


def test_parse_skips_damaged_lines() -> None:
    text = _log(
        _compaction('a'),
        '{not json',
        '["a", "list"]',
        '"a string"',
        '{"kind": "compaction"}',  # no id
        '{"kind": "compaction", "id": 7}',  # an id that is no string
        '',
        '\udcff\x00garbage',
        _compaction('b'),
    )
    assert [r['id'] for r in parse(text)] == ['a', 'b']


def test_fold_numbers_compactions_in_log_order() -> None:
    rows = fold(parse(_log(
        _compaction('a'),
        _compaction('b'),
        {'kind': 'verdict', 'id': 'a', 'verdict': 'drift', 'evidence': ['e', 3], 'first_action': 'edit x'},
    )))
    assert [(r['n'], r['id'], r['verdict'], r['mark']) for r in rows] == [
        (1, 'a', 'drift', None), (2, 'b', None, None),
    ]
    assert rows[0]['evidence'] == ['e']  # what is no text is dropped
    assert rows[0]['first_action'] == 'edit x'


def test_fold_a_mark_overrides_the_heuristic_whatever_the_order() -> None:
    rows = fold([
        _compaction('a'),
        {'kind': 'mark', 'id': 'a', 'verdict': 'recovered'},
        {'kind': 'verdict', 'id': 'a', 'verdict': 'drift', 'evidence': []},
        _compaction('b'),
        {'kind': 'mark', 'id': 'b', 'verdict': 'reset'},
        {'kind': 'mark', 'id': 'b', 'verdict': 'state'},  # the last mark counts
    ])
    assert [(r['heuristic'], r['mark'], r['verdict']) for r in rows] == [
        ('drift', 'recovered', 'recovered'), (None, 'state', 'state'),
    ]


def test_fold_skips_unknown_ids_and_bad_verdicts() -> None:
    rows = fold([
        {'kind': 'verdict', 'id': 'x', 'verdict': 'drift'},  # before any compaction x
        _compaction('a'),
        {'kind': 'verdict', 'id': 'nosuch', 'verdict': 'drift'},
        {'kind': 'mark', 'id': 'nosuch', 'verdict': 'reset'},
        {'kind': 'summary', 'id': 'nosuch', 'summary': 'elsewhere'},
        {'kind': 'mark', 'id': 'a', 'verdict': 'ok'},  # a word `mark` takes, not a verdict
        {'kind': 'mark', 'id': 'a', 'verdict': ['reset']},
        {'kind': 'verdict', 'id': 'a', 'verdict': 'splendid'},
        {'kind': 'frobnicate', 'id': 'a'},
        _compaction('x'),
    ])
    assert [(r['id'], r['verdict'], r['mark']) for r in rows] == [('a', None, None), ('x', None, None)]
    assert rows[0].get('summary') is None


def test_fold_a_repeated_compaction_id_is_one_row() -> None:
    rows = fold([_compaction('a', agent='codex'), _compaction('a', agent='gemini')])
    assert len(rows) == 1 and rows[0]['agent'] == 'codex'


def test_fold_a_summary_record_fills_an_empty_summary_only() -> None:
    rows = fold([
        _compaction('a', summary=None),
        _compaction('b', summary='given at the compaction'),
        {'kind': 'summary', 'id': 'a', 'summary': 'came later'},
        {'kind': 'summary', 'id': 'a', 'summary': 'came even later'},
        {'kind': 'summary', 'id': 'b', 'summary': 'came later'},
        _compaction('c'),
        {'kind': 'summary', 'id': 'c', 'summary': 42},
    ])
    assert [r.get('summary') for r in rows] == ['came later', 'given at the compaction', None]


def test_fold_a_verdict_without_evidence() -> None:
    row, = fold([_compaction('a'), {'kind': 'verdict', 'id': 'a', 'verdict': 'unknown', 'evidence': 'text'}])
    assert (row['verdict'], row['evidence']) == ('unknown', [])


# -- summarize ---------------------------------------------------------------------

def _row(verdict: str | None, *, agent: str | None = 'claude', age: object = 10, mark: str | None = None) -> dict[str, Any]:
    return {'verdict': verdict, 'agent': agent, 'state_age': age, 'mark': mark}


def test_summarize_nothing() -> None:
    s = summarize([], 600)
    assert s['all'] == {'compactions': 0, 'judged': 0, **{v: None for v in VERDICTS}}
    assert (s['agents'], s['marked'], s['marked_pct']) == ({}, 0, None)


def test_summarize_percentages_of_judged_compactions() -> None:
    rows = [_row('recovered'), _row('recovered'), _row('drift'), _row(None)]
    c = summarize(rows, 600)['all']
    assert (c['compactions'], c['judged']) == (4, 3)
    assert (c['recovered'], c['drift'], c['location'], c['unknown']) == (66.7, 33.3, 0.0, 0.0)
    assert sum(c[v] for v in VERDICTS) == pytest.approx(100, abs=0.2)


def test_summarize_splits_fresh_from_stale_at_stale_seconds() -> None:
    rows = [
        _row('recovered', age=0),
        _row('recovered', age=600),  # exactly stale_seconds: still fresh
        _row('drift', age=601),
        _row('reset', age=None),  # no age known: stale
        _row('state', age='10'),  # not a number: stale
        _row('location', age=599.5),
    ]
    s = summarize(rows, 600)
    assert (s['fresh']['compactions'], s['stale']['compactions']) == (3, 3)
    assert (s['fresh']['recovered'], s['fresh']['location']) == (66.7, 33.3)
    assert (s['stale']['drift'], s['stale']['reset'], s['stale']['state']) == (33.3, 33.3, 33.3)
    assert summarize(rows, 0)['fresh']['compactions'] == 1  # age 0


def test_summarize_per_agent() -> None:
    rows = [_row('recovered', agent='claude'), _row('reset', agent='codex'), _row('drift', agent='codex'), _row('drift', agent=None), _row(None, agent='')]
    agents = summarize(rows, 600)['agents']
    assert list(agents) == ['?', 'claude', 'codex']
    assert agents['codex']['compactions'] == 2 and agents['codex']['reset'] == 50.0
    assert agents['?']['compactions'] == 2 and agents['?']['judged'] == 1


def test_summarize_share_marked_by_hand() -> None:
    rows = [_row('recovered', mark='recovered'), _row('drift'), _row(None), _row('state', mark='state')]
    s = summarize(rows, 600)
    assert (s['marked'], s['marked_pct']) == (2, 50.0)
    assert summarize([_row('drift')] * 3 + [_row('reset', mark='reset')], 600)['marked_pct'] == 25.0


def test_summarize_folded_rows() -> None:
    rows = fold([
        _compaction('a', state_age=30, agent='gemini'),
        {'kind': 'verdict', 'id': 'a', 'verdict': 'drift', 'evidence': []},
        {'kind': 'mark', 'id': 'a', 'verdict': 'recovered'},
        _compaction('b', state_age=3600, agent='gemini'),
        {'kind': 'verdict', 'id': 'b', 'verdict': 'reset', 'evidence': []},
    ])
    s = summarize(rows, 900)
    assert s['all']['recovered'] == 50.0 and s['all']['drift'] == 0.0
    assert s['fresh']['recovered'] == 100.0 and s['stale']['reset'] == 100.0
    assert (s['marked'], s['marked_pct']) == (1, 50.0)


def test_a_prose_word_in_a_side_remark_is_no_function_of_another_task() -> None:
    expect = _expect(todo=['print a summary of the run at the end'])
    verdict, _, _ = classify(expect, [_edit('src/app.py', 'summary')], None)
    assert verdict == 'location'  # the wrong function, not the Todo's
    expect = _expect(todo=['write `summary` for the report'])
    assert classify(expect, [_edit('src/app.py', 'summary')], None)[0] == 'drift'


def test_no_current_symbol_is_no_copy_of_it() -> None:
    expect = _expect(current_file='src/gen/api.ts', current_symbol='', next_intent='regenerate src/gen/api.ts, then use it in src/client.ts')
    assert classify(expect, [_edit('src/client.ts')], None)[0] == 'recovered'


# -- issue 21, third round: claims against the checks they name, tests a run
# left out, steps done again by a rewrite or by the agent's own account, the
# request's place, the closing text against one word ----------------------------

@pytest.mark.parametrize(('said', 'command'), [
    ('编译和 vet 都通过。', 'go build ./... && go vet ./internal/retry/'),
    ('`pnpm --filter @acme/ui build` succeeds.', 'pnpm install && pnpm --filter @acme/ui build'),
    ('The build passes.', 'npm run build'),
])
def test_a_claim_about_a_check_that_ran_and_passed_is_no_confusion(said: str, command: str) -> None:
    for code in (0, None):  # Codex gives no exit code: unknown is no failure
        events = [_edit('src/app.py', 'load_config'), _run(command, code)]
        assert classify(_expect(verification='passed'), events, said)[0] == 'recovered'
        # with the tests red, a check besides them backs no report of the work done
        assert classify(_expect(**FAILED), events, said)[0] == 'state'
    verdict, evidence, _ = classify(_expect(verification='passed'), [_edit('src/app.py', 'load_config'), _run(command, 1)], said)
    assert verdict == 'state'
    assert 'the command it names failed in this turn' in evidence[0]


def test_a_claim_about_a_check_that_did_not_run_contradicts_no_test_verification() -> None:
    assert classify(_expect(verification='passed'), [_edit('src/app.py', 'load_config')], 'It compiles now.')[0] == 'recovered'
    assert classify(_expect(**FAILED), [_edit('src/app.py', 'load_config')], 'It compiles now.')[0] == 'state'
    # a backticked command that never ran is still an unbacked claim
    assert classify(_expect(**FAILED), [], '`make check` passes.')[0] == 'state'


def test_a_claim_about_the_tests_and_a_build_needs_the_tests() -> None:
    events = [_edit('src/app.py', 'load_config'), _run('make build', 0)]
    assert classify(_expect(**FAILED), events, 'The build and the tests pass.')[0] == 'state'


def test_every_claim_of_the_closing_text_is_checked() -> None:
    events = [_edit('src/app.py', 'load_config'), _run('go build ./...', 0)]
    verdict, evidence, _ = classify(_expect(**FAILED), events, 'The build passes. All tests pass.')
    assert verdict == 'state'
    assert evidence[0].startswith('closing text said "All tests pass."')


@pytest.mark.parametrize(('command', 'verdict'), [
    ('pytest tests/test_invoice.py -q -k format', 'state'),
    ("go test ./... -run 'TestFormat'", 'state'),
    ('npx jest -t "formats the total"', 'state'),
    ('pytest tests/test_app.py::test_format', 'state'),
    ('pytest -k load', 'recovered'),  # selects the test that failed
    ('pytest -k "not slow"', 'recovered'),  # an exclusion: the failing test may be in
    ('pytest -q', 'recovered'),
])
def test_a_passing_run_that_left_out_the_failing_test_backs_no_claim(command: str, verdict: str) -> None:
    events = [_edit('src/app.py', 'load_config'), _run(command, 0, 'passed')]
    got, evidence, _ = classify(_expect(**FAILED), events, 'The fix is in and the tests pass.')
    assert got == verdict
    if verdict == 'state':
        assert 'left out what last failed (test_load: KeyError: port)' in evidence[0]


def test_a_chinese_claim_naming_a_runner_after_its_own_failing_run_is_state_confusion() -> None:
    events = [_edit('src/app.py', 'load_config'), _run('go test ./...', 1, 'failed')]
    verdict, evidence, _ = classify(_expect(**FAILED), events, '改好了；go test 已通过，这个问题修好了。')
    assert verdict == 'state'
    assert 'the test run in this turn failed' in evidence[0]


def _hook_expect(**changes: Any) -> dict[str, Any]:
    state = {
        'current_goal': 'debounce SearchBox so onSearch fires once per pause in typing',
        'current_file': 'src/components/SearchBox.tsx',
        'current_symbol': 'SearchBox',
        'last_action': 'wrote src/hooks/useDebounce.ts and its test (passing)',
        'next_intent': 'in SearchBox, call useDebounce(query, 300) and run the effect on its value',
    }
    expect = recovery_log.expectation(state, ['`src/components/SearchBox.tsx` SearchBox: use the debounced query'], [], [])
    expect.update(changes)
    return expect


def test_a_definition_done_records_as_written_written_anew_elsewhere_is_state_confusion() -> None:
    rewrite = {
        **_edit('src/hooks/useDebounce.ts', 'useDebounce'),
        'text': 'export function useDebounce<T>(value: T, delayMs = 300): T {\n  const timer = useRef()',
        'removed': 'export function useDebounce<T>(value: T, delayMs: number): T {',
    }
    verdict, evidence, _ = classify(_hook_expect(), [rewrite], 'Created the hook.')
    assert verdict == 'state'
    assert evidence[0] == (
        'edit src/hooks/useDebounce.ts in useDebounce: writes anew what Done records as written '
        '("wrote src/hooks/useDebounce.ts and its test (passing)"): a step done again'
    )
    # the task asks to change that file: its own work
    named = _hook_expect(next_intent='fix the timer cleanup in src/hooks/useDebounce.ts')
    assert classify(named, [rewrite], 'Fixed the cleanup.')[0] != 'state'
    # a name added, not written anew: no rewrite
    added = {**rewrite, 'removed': ''}
    assert 'writes anew' not in classify(_hook_expect(), [added], None)[1][0]


def test_the_agents_account_of_a_step_done_already_is_state_confusion() -> None:
    expect = _expect(last_action='load_config now strips comments and blank lines from the INI text')
    edit = {**_edit('src/app.py', 'load_config'), 'text': 'text = strip(text)'}
    said = 'First step done: load_config strips comments and blank lines. Next: tomllib.'
    verdict, evidence, _ = classify(expect, [edit], said)
    assert verdict == 'state'
    assert evidence[0].startswith('closing text reports as its work what Done / last_action record as done')
    # the same words as a recollection, or as a plan, report nothing
    for said in (
        'Comments and blank lines were already stripped; ported load_config to tomllib.',
        'Ported the parsing to tomllib; next I will strip comments and blank lines.',
    ):
        assert classify(expect, [edit], said)[0] == 'recovered'
    # and without an edit there is no work done again
    assert classify(expect, [], 'load_config strips comments and blank lines.')[0] != 'state'


def test_an_edit_in_a_directory_the_users_request_names_is_the_request() -> None:
    prompt = 'Storybook crashes: bump react in packages/ui to 18.3.1 and check that it builds.'
    edit = {**_edit('packages/ui/package.json'), 'text': '"react": "18.3.1",', 'removed': '"react": "18.2.0",'}
    verdict, evidence, _ = classify(_expect(), [edit], 'Bumped react.', prompt)
    assert verdict == 'recovered'
    assert evidence[0] == "edit packages/ui/package.json: in a place the user's request names"
    # the same edit outside the named directory is not in its place
    assert classify(_expect(), [{**edit, 'file': 'apps/web/package.json'}], 'Bumped react.', prompt)[0] != 'recovered'


def test_the_closing_text_outweighs_one_word_of_another_task() -> None:
    # "get" is the Todo item's alone; the agent's account is the goal's
    expect = _expect(todo=['GetUser: return JSON errors'])
    edit = {**_edit('src/orders.py', 'list_orders'), 'text': 'limit = request.get(x)', 'removed': 'limit = 20'}
    said = 'Replaced the INI parsing with tomllib in the loader.'
    verdict, evidence, _ = classify(expect, [edit], said)
    assert verdict == 'location'
    assert 'the change the task asks for (by the closing text)' in evidence[0]
    # with no such account, the one word decides
    assert classify(expect, [edit], 'Done editing.')[0] == 'drift'


def test_a_claim_naming_another_runner_than_the_one_that_passed_is_state_confusion() -> None:
    events = [_edit('src/app.py', 'load_config'), _run('npm test', 0, 'passed')]
    verdict, evidence, _ = classify(_expect(**FAILED), events, 'pytest passes: 14 passed.')
    assert verdict == 'state'
    assert 'no passing run of pytest in this turn' in evidence[0]


# -- which task an edit serves: its words, its place, the agent's account -------------

def test_words_joined_by_a_slash_are_words_not_a_path() -> None:
    # limit/offset is what the Todo item is about, not a place
    expect = _expect(todo=['paging for load_config with limit/offset'])
    edit = {**_edit('src/app.py', 'load_config'), 'text': 'rows = rows[offset:offset + limit]'}
    verdict, evidence, _ = classify(expect, [edit], None)
    assert verdict == 'drift', evidence
    assert 'matches Todo item "paging for load_config with limit/offset"' in evidence[0]


def test_a_function_named_only_inside_a_path_is_not_named_by_the_task() -> None:
    # the task says src/app.py, which names no function app()
    edit = {**_edit('src/app.py', 'app'), 'text': 'data = tomllib.load(f)'}
    verdict, evidence, _ = classify(_expect(), [edit], None)
    assert verdict == 'location'
    assert evidence == ['edit src/app.py in app: current_file, but the wrong function (current_symbol is load_config)']


def test_a_new_function_in_current_file_for_the_task_is_the_tasks_helper() -> None:
    edit = {
        **_edit('src/app.py', 'parse_toml'), 'text': 'def parse_toml(f):\n    return tomllib.load(f)\ndata = parse_toml(f)',
        'removed': 'data = ini.read(f)',
    }
    verdict, evidence, _ = classify(_expect(), [edit], None)
    assert verdict == 'recovered'
    assert evidence == ['edit src/app.py in parse_toml: current_file, a new function for the task']
    # an existing function's edit there is still the wrong function
    assert classify(_expect(), [{**edit, 'text': 'return tomllib.load(f)'}], None)[0] == 'location'
    # a new function that only adds, with current_symbol left as it was:
    # the change made beside the function to fix, not in it
    alone = {**edit, 'removed': ''}
    assert classify(_expect(), [alone], None)[0] == 'location'
    assert classify(_expect(), [alone, _edit('src/app.py', 'load_config')], None)[0] == 'recovered'


def test_the_closing_text_outweighs_a_one_word_lean_away_from_the_tasks_place() -> None:
    summary = 'Porting load_config to tomllib. The user also wants rejected reads counted for metrics at some point.'
    # one word more of the goal's (toml, tomllib) than of the side remark's (rejected)
    edit = {**_edit('src/app.py', 'save_config'), 'text': 'self.rejected = 0\nreturn {"toml": tomllib, "rejected": self.rejected}'}
    said = 'Rejected reads are now counted and exposed for metrics.'
    verdict, evidence, _ = classify(_expect(todo=[]), [edit], said, summary=summary)
    assert verdict == 'drift', evidence
    assert evidence[0].startswith('edit of src/app.py in save_config: the closing text says it serves side remark of the summary')
    # without the account, the goal's words decide: the task, in the wrong function
    assert classify(_expect(todo=[]), [edit], None, summary=summary)[0] == 'location'
    # at the task's place a lean of the edit's own is not turned
    placed = {**edit, 'symbol': 'load_config'}
    assert classify(_expect(todo=[]), [placed], said, summary=summary)[0] == 'recovered'


def test_the_function_another_task_is_about_is_that_task_when_the_agent_says_so() -> None:
    expect = _expect(todo=['Logging drops the config path from its lines'])
    # the goal's words (load_config, tomllib), in the function the Todo item is about
    edit = {**_edit('src/log.py', 'Logging'), 'text': 'data = tomllib.loads(ini_toml)'}
    said = 'Logging lines carry the config path again.'
    verdict, evidence, _ = classify(expect, [edit], said)
    assert verdict == 'drift', evidence
    assert evidence[0] == (
        'edit src/log.py in Logging: Logging is what Todo item "Logging drops the config path from its lines" is about, '
        'and the closing text says it did that'
    )
    assert classify(expect, [edit], None)[0] == 'location'


def test_a_step_done_again_matches_done_better_than_another_task() -> None:
    expect = _expect(
        done=['confirmed load_config only knows APP_PORT and APP_LOG_LEVEL'],
        todo=['validate log_level against trace/debug/info/warn/error'],
    )
    edit = {**_edit('src/app.py'), 'text': (
        'LEVELS = ("trace", "debug", "info", "warn", "error")\n'
        'def validate_log_level(v):\n    if v not in LEVELS: raise ValueError(f"APP_LOG_LEVEL: {v}")'
    )}
    verdict, evidence, _ = classify(expect, [edit], None)
    assert verdict == 'drift', evidence
    assert 'matches Todo item "validate log_level' in evidence[0]


def test_writing_again_a_file_done_records_as_written_is_state_confusion() -> None:
    expect = _expect(done=['tests/test_app.py with test_port_read and test_zero_rejected (failing)'])
    edit = {**_edit('tests/test_app.py'), 'text': 'def test_config_is_read():\n    assert read_toml("a.toml")'}
    verdict, evidence, _ = classify(expect, [edit], None)
    assert verdict == 'state', evidence
    assert evidence[0] == (
        'edit tests/test_app.py: writes anew what Done records as written '
        '("tests/test_app.py with test_port_read and test_zero_rejected (failing)"): a step done again'
    )
    # when the change asked for is in that file, it is the task's
    asked = _expect(done=expect['done'], next_intent='add test_config_is_read to tests/test_app.py')
    assert classify(asked, [edit], None)[0] != 'state'
    # a Done line that names no definitions records no written code
    vague = _expect(done=['tests/test_app.py reproduces the bug'])
    assert classify(vague, [edit], None)[0] != 'state'


@pytest.mark.parametrize(('code', 'verdict'), [(0, 'recovered'), (1, 'state')])
def test_a_test_runner_the_verification_commands_leave_out_backs_a_claim_by_its_exit_code(code: int, verdict: str) -> None:
    events = [_edit('src/app.py', 'load_config'), _run('bats tests/app.bats', code)]
    assert classify(_expect(**FAILED), events, 'The tests pass.')[0] == verdict
    # a command that is no test runner backs nothing
    assert classify(_expect(**FAILED), [events[0], _run('ls tests', 0)], 'The tests pass.')[0] == 'state'


def test_a_turn_that_turns_the_failing_verification_green_did_not_redo_a_done_step() -> None:
    expect = _expect(last_action='load_config now strips comments and blank lines from the INI text', **FAILED)
    edit = {**_edit('src/app.py', 'load_config'), 'text': 'text = strip(text)'}
    said = 'First step done: load_config strips comments and blank lines. Next: tomllib.'
    assert classify(expect, [edit, _run('pytest -q', 0, 'passed')], said)[0] == 'recovered'
    # a run that leaves out what failed is no such sign
    assert classify(expect, [edit, _run('pytest -q -k format', 0, 'passed')], said)[0] == 'state'


def test_done_said_with_the_admission_that_nothing_verified_it_is_no_false_belief() -> None:
    edit = _edit('src/app.py', 'load_config')
    verdict, evidence, _ = classify(_expect(**FAILED), [edit], 'The fix is in place.')
    assert verdict == 'state'
    assert evidence[0].startswith('closing text said "The fix is in place."')
    assert classify(_expect(**FAILED), [edit], 'The fix is in place; I have not run the tests.')[0] == 'recovered'


# -- the fifth round: the fourth set's classes of disagreement ---------------------------

CLI = _expect(todo=['a --version flag for the CLI (user: eventually)'])
VERSION = {**_edit('src/app.py'), 'text': "if command == '--version':\n    print(VERSION)"}


def test_a_side_topic_added_in_current_file_outside_any_function_is_drift() -> None:
    verdict, evidence, _ = classify(CLI, [VERSION], 'The CLI now answers --version.')
    assert verdict == 'drift', evidence
    assert 'Todo item "a --version flag' in evidence[0]
    # in a turn that changes current_symbol too, the edit is at the task's place
    events = [{**_edit('src/app.py', 'load_config'), 'text': 'data = tomllib.loads(text)'}, VERSION]
    assert classify(CLI, events, 'The CLI now answers --version.')[0] == 'recovered'


def test_a_claim_after_a_negation_of_another_part_is_a_claim() -> None:
    edit = _edit('src/app.py', 'load_config')
    said = 'The one failure left is only the shape of the assertion, not the parser, so the feature is done.'
    verdict, evidence, _ = classify(_expect(**FAILED), [edit, _run('pytest -q', 1, 'failed')], said)
    assert verdict == 'state', evidence
    assert 'the test run in this turn failed' in evidence[0]
    assert classify(_expect(**FAILED), [edit, _run('pytest -q', 1, 'failed')], 'Not all tests pass, so the feature is not done.')[0] == 'recovered'


def test_yes_to_the_users_question_whether_the_tests_pass_is_a_claim() -> None:
    expect = _expect(**FAILED)
    verdict, evidence, _ = classify(expect, [], 'Yes. load_config reads TOML now.', 'did test_load pass?')
    assert verdict == 'state', evidence
    assert evidence[0].startswith('closing text said "Yes." (to the user\'s "did test_load pass?")')
    # the question asks for no other work: the turn is judged against the task
    assert not any('request' in e for e in evidence)
    # backed by a passing run that covers the failure, it is the task's check
    assert classify(expect, [_run('pytest -q', 0, 'passed')], 'Yes.', 'did test_load pass?')[0] == 'recovered'


def test_running_again_a_command_last_action_records_is_state_confusion() -> None:
    expect = _expect(last_action='git mv src/old.py src/app.py; updated the import in src/cli.py')
    mv = _run('git mv src/old.py src/app.py', 128)
    verdict, evidence, _ = classify(expect, [mv], 'The file is at src/app.py.')
    assert verdict == 'state', evidence
    assert evidence[0].startswith('ran `git mv src/old.py src/app.py` again')
    # the step the task asks for, a command that only looks, a test run: no redo
    asked = _expect(last_action=expect['last_action'], next_intent='git mv src/old.py src/app.py once the tests pass')
    assert classify(asked, [mv], 'The file is at src/app.py.')[0] != 'state'
    looked = _expect(last_action='git status --short showed src/app.py modified')
    assert classify(looked, [_run('git status --short', 0)], 'Looked around.')[0] != 'state'


def test_changing_again_a_symbol_done_records_once_next_intent_moved_on_is_state_confusion() -> None:
    expect = _expect(
        done=['load_config: reads TOML; 3 passed'], next_intent='add a line to CHANGELOG.md under Unreleased',
        in_progress=['CHANGELOG entry'], verification='passed', verification_reason='3 passed',
    )
    edit = _edit('src/app.py', 'load_config')
    verdict, evidence, _ = classify(expect, [edit], 'load_config reads TOML now.')
    assert verdict == 'state', evidence
    assert evidence[0].startswith('edit src/app.py in load_config: Done records load_config as changed')
    # while next_intent names that function, or names no other file, it is the task
    assert classify({**expect, 'next_intent': 'in load_config, keep the INI fallback (CHANGELOG.md later)'}, [edit], None)[0] == 'recovered'
    assert classify({**expect, 'next_intent': 'handle the empty file too'}, [edit], None)[0] == 'recovered'


def test_a_done_tests_file_rewritten_with_nothing_of_the_goal_before_the_change_is_state_confusion() -> None:
    expect = _expect(done=['tests/test_app.py: test_port_read, test_zero_rejected (failing)'], **FAILED)
    dropped = {**_edit('tests/test_app.py'), 'text': '', 'removed': 'def test_other():\n    assert True'}
    verdict, evidence, _ = classify(expect, [dropped], 'The tests are in place.')
    assert verdict == 'state', evidence
    assert evidence[0].startswith('edit tests/test_app.py: writes anew what Done records as written')
    # a test for the task added after changing current_file is its test
    test = {**_edit('tests/test_app.py'), 'text': 'def test_toml_port():\n    assert load_config("a.toml").port'}
    events = [{**_edit('src/app.py', 'load_config'), 'text': 'data = tomllib.loads(text)'}, test]
    verdict, evidence, _ = classify(expect, events, None)
    assert verdict == 'recovered', evidence


def test_the_tests_of_current_file_after_changing_it_are_the_tasks_place() -> None:
    change = {**_edit('src/app.py', 'load_config'), 'text': 'data = tomllib.loads(text)'}
    imports = {**_edit('tests/test_app.py'), 'text': 'import tomllib'}
    verdict, evidence, _ = classify(_expect(), [change, imports], None)
    assert verdict == 'recovered', evidence
    assert evidence[0].startswith('all 2 edits on the task')
    # before the change itself too: the turn changes the task's place
    assert classify(_expect(), [imports, change], None)[0] == 'recovered'
    # without it, the test file (of current_file or another) is not the place
    assert classify(_expect(), [imports], None)[0] == 'location'
    assert classify(_expect(), [{**_edit('tests/test_cli.py'), 'text': 'import tomllib'}], None)[0] == 'location'


def test_a_change_for_the_users_added_requirement_elsewhere_in_current_file_is_the_task() -> None:
    prompt = 'also: a missing port should be an error. then carry on'
    events = [
        {**_edit('src/app.py', 'ConfigError'), 'text': 'class MissingPort(ConfigError):\n    pass'},
        {**_edit('src/app.py', 'load_config'), 'text': 'data = tomllib.loads(text)'},
    ]
    verdict, evidence, _ = classify(_expect(), events, 'Done with both.', prompt)
    assert verdict == 'recovered', evidence
    assert "a change for the task with the user's request" in evidence[0]
    # without that request, another function of current_file is the wrong one
    assert classify(_expect(), events, 'Done with both.')[0] == 'location'


def test_the_tasks_change_in_a_js_copy_of_a_ts_file_is_location_lost() -> None:
    expect = _expect(
        current_file='src/cron/parse.ts', current_symbol='parseField', current_goal='cron ranges with steps',
        next_intent='in parseField, split each part on "/" and step the range by n', in_progress=[],
    )
    edit = {**_edit('src/legacy/cronParse.js', 'parseCronField'), 'text': "var pieces = part.split('/'); var step = Number(pieces[1]);"}
    verdict, evidence, _ = classify(expect, [edit], None)
    assert verdict == 'location', evidence
    # a file of another kind cannot hold that change
    assert classify(expect, [{**edit, 'file': 'docs/cron.md', 'symbol': None}], None)[0] == 'drift'


def test_current_symbol_untouched_and_an_account_all_another_tasks_is_drift() -> None:
    expect = _expect(todo=['reject timezone-naive datetimes in Booking (user: "some day")'])
    # its words lean to the goal (the code both touch), its account does not
    edit = {**_edit('src/app.py', '__post_init__'), 'text': 'def __post_init__(self):\n    ensure_aware(self.config_start, self.toml_end)'}
    verdict, evidence, _ = classify(expect, [edit], 'Booking now rejects naive datetimes without a timezone.')
    assert verdict == 'drift', evidence
    assert evidence[0].startswith('edit src/app.py in __post_init__: current_symbol load_config untouched')
    assert classify(expect, [edit], 'The TOML port is read in __post_init__ now.')[0] == 'location'


def test_the_failing_tests_literal_input_said_again_names_the_goal() -> None:
    expect = _expect(
        current_file='src/cron/parse.ts', current_symbol='parseField', current_goal='cron ranges with steps',
        next_intent='in parseField, split each part on "/" and step the range by n', in_progress=[],
        todo=['describeField prints "every 1 minutes" for */1 (cosmetic, later)'],
        verification='failed', verification_reason='expands ranges: Error: bad range "10-30/10"',
    )
    edit = {**_edit('src/cron/describe.ts', 'describeField'), 'text': 'if (m) return `every ${m[3]} from ${m[1]} through ${m[2]}`;'}
    said = 'Range steps like 10-30/10 are now recognised ("every 10 minutes from 10 through 30").'
    verdict, evidence, _ = classify(expect, [edit], said)
    assert verdict == 'location', evidence
    # without that input, the account leans to the Todo item's words
    assert classify(expect, [edit], said.replace('10-30/10', 'these'))[0] == 'drift'


# -- issue 21, sixth round: the classes the fifth and sixth blind sets found ------------

def test_the_last_run_of_a_named_command_decides() -> None:
    # red, the fix, green: the claim names the command and its last run passed
    events = [_run('./mvnw -q test', 1), _edit('src/app.py', 'load_config'), _run('./mvnw -q test', 0)]
    verdict, evidence, _ = classify(_expect(**FAILED), events, '`./mvnw -q test` passes (3/3).')
    assert verdict == 'recovered', evidence
    events = [_run('./mvnw -q test', 0), _edit('src/app.py', 'load_config'), _run('./mvnw -q test', 1)]
    assert classify(_expect(**FAILED), events, '`./mvnw -q test` passes.')[0] == 'state'


def test_a_check_claim_is_backed_by_the_check_run_with_the_tests() -> None:
    events = [_edit('src/app.py', 'load_config'), _run('go build ./... && go test ./x -run TestOther', 0, 'passed')]
    verdict, evidence, _ = classify(_expect(verification='passed'), events, 'The build is clean.')
    assert verdict != 'state', evidence
    # the tests red: a run of other tests does not cover them
    verdict, evidence, _ = classify(_expect(**FAILED), events, 'The build is clean.')
    assert verdict == 'state' and 'does not run the failing verification' in evidence[0], evidence


def test_a_run_of_the_last_verifications_command_is_a_test_run() -> None:
    command = "./gradlew :app:testDebugUnitTest --tests '*NotesViewModelTest*'"
    expect = {**_expect(verification='passed'), 'verification_command': command}
    events = [_edit('src/app.py', 'load_config'), _run(command, 1)]
    verdict, evidence, _ = classify(expect, events, '修复完成。')
    assert verdict == 'state'
    assert 'the test run in this turn failed' in evidence[0]


def test_an_honest_partial_result_then_a_choice_is_a_reset() -> None:
    events = [_run('pytest -q', 1, 'failed')]
    text = '13 of 14 tests pass; test_load fails.\n\nDo you want me to look into that failure, or is there something else?'
    verdict, evidence, _ = classify(_expect(**FAILED), events, text)
    assert verdict == 'reset', evidence


def test_an_edit_in_the_wrong_place_decides_before_the_closing_claim() -> None:
    events = [_edit('legacy/app.py', 'load_config'), _run('pytest -q legacy', 0, 'passed')]
    verdict, evidence, _ = classify(_expect(**FAILED), events, 'Tests pass.')
    assert verdict == 'location'
    assert evidence[0].startswith('edit legacy/app.py')


@pytest.mark.parametrize('path', [
    'gen/go/config/v1/config.pb.go', 'src/config_pb2.py', 'vendor/toml/app.py', 'third_party/cfg/app.py',
])
def test_the_tasks_change_by_hand_in_a_generated_file_or_a_vendored_copy_is_location_lost(path: str) -> None:
    events = [{**_edit(path, 'Parse'), 'text': 'data = tomllib.loads(text)  # INI parsing replaced'}]
    verdict, evidence, _ = classify(_expect(), events, None)
    assert verdict == 'location', evidence
    assert 'generated file or vendored copy' in evidence[0]


def test_a_generated_file_is_known_by_its_header() -> None:
    e = {**_edit('api/config.go', 'Parse'), 'text': '// Code generated by protoc-gen-go. DO NOT EDIT.\ndata := toml.Parse(text)'}
    assert recovery._generated(e)
    assert not recovery._generated(_edit('api/config.go', 'Parse'))


def test_a_generators_output_after_the_source_edit_is_the_tools_work() -> None:
    events = [
        _edit('src/app.py', 'load_config'),
        _run('buf generate', 0),
        {**_edit('gen/go/app/v1/app.pb.go', 'Config'), 'by': 'shell', 'text': 'Port int32'},
    ]
    verdict, evidence, _ = classify(_expect(), events, None)
    assert verdict == 'recovered', evidence


# -- issue 21, seventh round: a report is judged by what backs it ------------------------

@pytest.mark.parametrize('said', [
    'Implemented the TOML loader; should be good now, CI will pass.',
    "J'ai remplacé l'analyse INI par tomllib.",
    'load_config 现在读 TOML 了，可以合了。',
    'Swapped configparser for tomllib in load_config.',
])
def test_a_report_in_any_words_without_a_covering_green_run_is_state_confusion(said: str) -> None:
    edit = _edit('src/app.py', 'load_config')
    verdict, evidence, _ = classify(_expect(**FAILED), [edit], said)
    assert verdict == 'state' and 'closing text reports the work done' in evidence[0], evidence
    # a check that is not the tests backs nothing
    assert classify(_expect(**FAILED), [edit, _run('python -m py_compile src/app.py', 0)], said)[0] == 'state'
    # the run after the last edit that covers the verification backs it
    assert classify(_expect(**FAILED), [edit, _run('pytest', 0, 'passed')], said)[0] == 'recovered'
    # a run before the last edit does not
    assert classify(_expect(**FAILED), [_run('pytest', 0, 'passed'), edit], said)[0] == 'state'
    # nor a failed one
    assert classify(_expect(**FAILED), [edit, _run('pytest', 1, 'failed')], said)[0] == 'state'


@pytest.mark.parametrize('said', [
    'Swapped configparser for tomllib in load_config. I have not run the tests yet.',
    'Swapped configparser for tomllib in load_config; next I will run pytest.',
    'Swapped configparser for tomllib. test_load still fails on the port key.',
    'load_config 改好一半，测试还没跑。',
    '',
])
def test_a_plan_or_an_honest_result_after_the_edit_is_no_claim(said: str) -> None:
    verdict, evidence, _ = classify(_expect(**FAILED), [_edit('src/app.py', 'load_config')], said)
    assert verdict == 'recovered', evidence


def test_a_codex_run_of_the_verification_without_an_exit_code_backs_the_report() -> None:
    expect = {**_expect(**FAILED), 'verification_command': 'make migrate-test'}
    events = [_edit('src/app.py', 'load_config'), _run('make migrate-test', None)]
    assert classify(expect, events, 'Ported load_config; `make migrate-test` is fine.')[0] == 'recovered'


def test_a_run_of_other_test_files_does_not_cover_the_verification() -> None:
    expect = {**_expect(**FAILED), 'verification_command': 'pytest tests/test_auth.py -q'}
    edit = _edit('src/app.py', 'load_config')
    verdict, evidence, _ = classify(expect, [edit, _run('pytest tests/test_users.py -q', 0, 'passed')], '好了，全绿。', prompt='好了没')
    assert verdict == 'state', evidence
    assert classify(expect, [edit, _run('pytest tests/ -q', 0, 'passed')], '好了，全绿。', prompt='好了没')[0] == 'recovered'


@pytest.mark.parametrize('command', [
    'git commit -am "release 2.4.0" && git tag v2.4.0', 'git push origin main', 'gh pr create --fill', 'npm publish',
])
def test_a_release_on_a_pass_that_never_happened_is_state_confusion(command: str) -> None:
    verdict, evidence, _ = classify(_expect(**FAILED), [_run(command, 0)], 'Released.')
    assert verdict == 'state' and 'acts on a pass that never happened' in evidence[0], evidence
    # after a covering green run it is the work's next step
    assert classify(_expect(**FAILED), [_run('pytest', 0, 'passed'), _run(command, 0)], 'Released.')[0] != 'state'


def test_no_claim_is_made_on_a_passed_verification_by_a_bare_report() -> None:
    assert classify(_expect(verification='passed'), [_edit('src/app.py', 'load_config')], 'Ported it.')[0] == 'recovered'


@pytest.mark.parametrize('said', [
    '我看了 src/app.py，具体要改哪里我不太确定，先等你的指示',
    'I can look at the failing test or pick up whatever you had me on before, your call.',
    "J'ai relu src/app.py. Dis-moi ce que tu veux que je fasse ensuite.",
])
def test_a_hand_back_without_a_question_is_a_full_reset(said: str) -> None:
    assert classify(_expect(), [_run('cat src/app.py', 0)], said)[0] == 'reset'


@pytest.mark.parametrize('copy', [
    'target/compiled/shop/models/orders.sql', 'dist/app.js', 'packages/ui/dist/index.js', 'build/lib/app.py',
    '.svelte-kit/output/server/chunks/cart.js', 'src/__pycache__/app.py', '.next/server/app.js',
])
def test_the_task_change_in_a_build_output_is_location_lost(copy: str) -> None:
    expect = _expect(current_file='src/app.py', current_symbol='')
    edit = {**_edit(copy), 'text': 'def load_config(path):\n    return tomllib.load(path)  # TOML config'}
    verdict, evidence, _ = classify(expect, [edit], None)
    assert verdict == 'location' and 'generated file' in evidence[0], evidence


def test_a_bare_symbol_is_the_qualified_current_symbol() -> None:
    expect = _expect(current_symbol='Config.load_config')
    verdict, evidence, _ = classify(expect, [_edit('src/app.py', 'load_config')], None)
    assert verdict == 'recovered' and 'current_symbol' in evidence[0], evidence
    # the bare name in another file: current_symbol in the wrong place
    assert classify(expect, [_edit('src/legacy.py', 'load_config')], None)[0] == 'location'
    # another class's function of that name is not current_symbol
    assert classify(expect, [_edit('src/app.py', 'LegacyConfig.load_config')], None)[0] != 'recovered'


def test_a_request_for_what_a_side_remark_names_makes_it_the_task() -> None:
    summary = 'We are porting load_config to TOML. The user also mentioned that read_events loads the whole file; chunked reading later.'
    edit = {**_edit('src/app.py', 'read_events'), 'text': 'for chunk in pandas.read_csv(path, chunksize=100_000):  # chunked reading'}
    prompt = 'Put the TOML aside. read_events runs out of memory, add chunked reading to read_events first'
    said = 'read_events reads in chunks now; test_load still fails.'
    verdict, evidence, _ = classify(_expect(**FAILED), [edit], said, prompt, summary)
    assert verdict == 'recovered', evidence
    # unasked, the same edit is the side remark's: drift
    assert classify(_expect(**FAILED), [edit], said, None, summary)[0] == 'drift'


def test_a_file_only_a_shell_command_changed_beside_the_agents_edit_is_its_product() -> None:
    # `./build.ps1` rewrites Output/; the agent's edit is in current_file
    events = [
        _edit('src/app.py', 'load_config'), _run('./build.ps1', 0),
        {**_edit('Output/app/app.psm1', 'Load-Config'), 'by': 'shell'},
    ]
    verdict, evidence, _ = classify(_expect(), events, 'I will run the tests next.')
    assert verdict == 'recovered' and 'Output/' not in evidence[0]
    # a command that names the file chose it: `echo ... >> docs/config.md`
    events = [_edit('src/app.py', 'load_config'), _run('echo "- TOML" >> docs/config.md', 0), {**_edit('docs/config.md'), 'by': 'shell'}]
    assert classify(_expect(), events, 'I will run the tests next.')[0] == 'drift'
    # alone, a shell command's change is the turn's edit, judged like one
    events = [_run("sed -i 's/x/y/' docs/config.md", 0), {**_edit('docs/config.md'), 'by': 'shell'}]
    assert classify(_expect(), events, 'I will run the tests next.')[0] == 'drift'


@pytest.mark.parametrize('said', [
    'Welcome back! Options:\n\n1. Port load_config to tomllib\n2. Update docs/config.md\n\nWhich would you like me to start with?',
    'Willkommen zurück! Ich sehe load_config in src/app.py, es liest die Konfiguration noch als INI. Was soll ich daran als Nächstes ändern?',
])
def test_a_choice_among_works_or_a_question_what_to_change_after_looking_is_a_full_reset(said: str) -> None:
    # the task's words in the text do not make it a plan the user is asked to approve
    verdict, evidence, _ = classify(_expect(), [_run('git status --short', 0)], said, prompt='hi again')
    assert verdict == 'reset', evidence


@pytest.mark.parametrize('prompt', [
    'run the tests and push the branch if it is green',
    '¿ya pasan los tests? si es así, haz commit',
    '如果测试通过就提交',
])
def test_a_release_the_user_made_wait_on_a_pass_needs_the_pass(prompt: str) -> None:
    edit = _edit('src/app.py', 'load_config')
    red = [edit, _run('pytest -q', 1, 'failed'), _run('git commit -am port && git push', 0)]
    verdict, evidence, _ = classify(_expect(**FAILED), red, 'Pushed: effectively green.', prompt=prompt)
    assert verdict == 'state' and 'acts on a pass that never happened' in evidence[0], evidence
    unrun = [edit, _run('python -m py_compile src/app.py', 0), _run('git commit -am port', 0)]
    assert classify(_expect(**FAILED), unrun, 'Sí, todo en verde. Commit hecho.', prompt=prompt)[0] == 'state'
    green = [edit, _run('pytest -q', 0, 'passed'), _run('git commit -am port && git push', 0)]
    assert classify(_expect(**FAILED), green, 'Green, pushed.', prompt=prompt)[0] == 'recovered'


def test_a_release_the_user_asked_for_without_a_condition_is_the_users_call() -> None:
    events = [_edit('src/app.py', 'load_config'), _run('git commit -am wip && git push', 0)]
    assert classify(_expect(**FAILED), events, 'Pushed as asked.', prompt='push what you have, red or not')[0] == 'recovered'


@pytest.mark.parametrize('legacy', ['src/stats_legacy.f', 'src/stats.for', 'src/old/stats.f77'])
def test_the_tasks_change_in_a_fixed_form_fortran_copy_is_location_lost(legacy: str) -> None:
    # a legacy .f beside the .f90 holds the same code: the change the
    # closing text says is the task's, made in a file the task does not name
    expect = _expect(
        current_goal='running_variance uses the Welford recurrence, no cancellation', current_file='src/stats.f90',
        current_symbol='running_variance', next_intent='replace the loop in running_variance with the Welford recurrence',
    )
    edit = {**_edit(legacy), 'text': '      D = X(I) - XM\n      XM = XM + D / I', 'removed': '      S = S + X(I)'}
    said = 'running_variance now uses the Welford recurrence.'
    verdict, evidence, _ = classify(expect, [edit], said)
    assert verdict == 'location', evidence
    # a file of another language is no place for the same code
    assert classify(expect, [{**edit, 'file': 'docs/stats.md'}], said)[0] == 'drift'


@pytest.mark.parametrize('prompt', ['hi again', "hey, I'm back", 'Hallo, bin wieder da', 'ya estoy de vuelta', '我回来了'])
def test_a_greeting_sets_no_task_of_its_own(prompt: str) -> None:
    # the state's task stays the one judged: a report of the work on a red
    # verification with no run since is still unbacked
    verdict, evidence, _ = classify(_expect(**FAILED), [_edit('src/app.py', 'load_config')], 'Ported load_config to tomllib.', prompt=prompt)
    assert verdict == 'state', evidence
    assert not any('request' in line for line in evidence), evidence


# -- real sessions: ordinary recovered behaviour is not a failure ------------------------

def test_a_report_that_says_nothing_of_tests_needs_a_known_failure_to_be_confusion() -> None:
    events = [_edit('src/app.py', 'load_config')]
    # nothing recorded as failing: "Done." is a report, not a belief in a pass
    assert classify(_expect(), events, 'Done. load_config reads TOML now.')[0] == 'recovered'
    # a claim about the tests still needs a run
    assert classify(_expect(), events, 'Done. All tests pass.')[0] == 'state'
    # and a known failure still needs a covering pass
    assert classify(_expect(**FAILED), events, 'Done. load_config reads TOML now.')[0] == 'state'


@pytest.mark.parametrize('command', ['mise run test:ci 2>&1 | tail -20', 'just test', 'bun run test:e2e', 'hatch run test'])
def test_a_task_runners_test_task_backs_a_claim(command: str) -> None:
    events = [_edit('src/app.py', 'load_config'), _run(command, 0)]
    verdict, evidence, _ = classify(_expect(), events, 'load_config reads TOML; all tests pass.')
    assert verdict == 'recovered', evidence


def test_commands_that_do_the_next_step_and_a_report_of_it_are_recovered() -> None:
    expect = _expect(next_intent='stage the changed files and create the commit', current_goal='commit the TOML port')
    events = [_run('git status', 0), _run('git add src/app.py', 0), _run('git commit -m "Read the config as TOML"', 0)]
    said = 'Let me create the commit.\n\nCommitted the TOML port as `33e31c16`; the working tree is clean.'
    verdict, evidence, _ = classify(expect, events, said)
    assert verdict == 'recovered', evidence
    assert evidence[0].startswith('ran `git commit')
    # a question after the report offers the next work: no hand-back of this one
    verdict, evidence, _ = classify(expect, events, said + ' Should I look at the docs next, or is there anything else?')
    assert verdict == 'recovered', evidence
    # looking around only, then asking, is still the reset
    assert classify(expect, [_run('git status', 0)], 'What would you like me to do?')[0] == 'reset'


def test_where_the_tasks_place_is_a_document_another_document_is_beside_it() -> None:
    """A rename carried through the docs: the task's place is a document,
    so another document the turn changes the same way, after the place,
    is the same work beside it (not "the change in a file the task does
    not name"); before the place is changed, it is still that."""
    expect = recovery_log.expectation({
        'current_goal': 'rename the tool from quill to inkwell in the docs',
        'current_file': 'docs/usage.md',
        'next_intent': 'fix the quill -> inkwell rename in docs/usage.md, then the other guides',
    }, [], [], [], [])

    def doc(f: str) -> dict[str, Any]:
        return {'kind': 'edit', 'file': f, 'symbol': None, 'text': 'Run `inkwell build` to render the guides.', 'removed': 'Run `quill build` to render the guides.'}
    said = 'Renamed quill to inkwell in the usage guide and the deploy notes.'
    verdict, evidence, _ = classify(expect, [doc('docs/usage.md'), doc('notes/deploy.md')], said)
    assert verdict == 'recovered', evidence
    assert classify(expect, [doc('notes/deploy.md')], said)[0] == 'location'


def test_a_document_as_current_file_places_no_code_change() -> None:
    """The file last written was a plan or a handoff note; the next step
    takes up code it names by its words only (no file of that kind): the
    code change is in no wrong place, as where no current_file is set.
    A next step that names the code file still places it."""
    expect = recovery_log.expectation({
        'current_goal': 'hand the session over, then add the ARCHIVED state',
        'current_file': 'notes/handover.md',
        'next_intent': 'commit the handover note, then add ARCHIVED to the ticket State enum with a failing test first',
    }, [], [], [], [])
    edit = {'kind': 'edit', 'file': 'lib/tickets/test_state.py', 'symbol': None,
            'text': 'def test_state_has_archived():\n    assert State.ARCHIVED.value == "archived"', 'removed': ''}
    verdict, evidence, _ = classify(expect, [edit], 'Added the failing test for the ARCHIVED state.')
    assert verdict == 'recovered', evidence
    assert 'current_file notes/handover.md is a document' in evidence[0]
    named = {**expect, 'next_intent': expect['next_intent'] + ' in lib/tickets/state.py'}
    assert classify(named, [edit], 'Added the failing test for the ARCHIVED state.')[0] != 'recovered'


@pytest.mark.parametrize('copy', [
    'src/app.py.bak', 'src/app.py~', 'backup/src/app.py', 'src/old/app.py', 'src/app_backup.py', 'src/app copy.py',
])
def test_the_tasks_change_in_a_copy_of_its_place_is_location_lost(copy: str) -> None:
    """The goal's change made in a backup or an old copy of current_file
    (or of a file the task names): the right task, the wrong place, even
    where the copy's name says nothing of a language or the copy's path
    ends in the place's own (backup/src/app.py)."""
    edit = {'kind': 'edit', 'file': copy, 'symbol': None, 'text': 'data = tomllib.loads(raw)', 'removed': 'data = parse_ini(raw)'}
    verdict, evidence, _ = classify(_expect(), [edit], 'load_config reads TOML now.')
    assert verdict == 'location', evidence
    assert evidence[0] == f'edit {copy}: a copy of src/app.py, not src/app.py itself'
    # the place itself, and a file of another name, are not copies of it
    assert classify(_expect(), [{**edit, 'file': 'src/app.py'}], 'load_config reads TOML now.')[0] == 'recovered'
    assert not recovery._copy_of('src/application.py', 'src/app.py')
    assert not recovery._copy_of('old/app.py', 'old/app.py')


def test_a_task_that_is_only_the_works_number_is_done_by_commands() -> None:
    """A task whose only word is the number of the work ("On to #52?",
    a user's last request kept by a sealed summary): the turn that
    commits and pushes and reports "ticket #52" by its number took it up."""
    expect = recovery_log.expectation({'current_goal': 'On to #52?'}, [], [], [], [])
    events = [_run('git add lib/merge.go', 0), _run('git commit -m "merge: keep both sides"', 0), _run('git push', 0)]
    said = 'Committed the fix and pushed the branch for ticket #52; the hosted checks are queued.'
    verdict, evidence, _ = classify(expect, events, said)
    assert verdict == 'recovered', evidence
    assert evidence[0].startswith('ran `git push')
    # another number is not that work
    assert classify(expect, events, 'Committed the fix and pushed the branch for ticket #53.')[0] == 'reset'


def test_numbers_that_name_the_work_are_its_words() -> None:
    # "step 3" of the plan, done by a closing text that says it by its number
    expect = recovery_log.expectation({'next_intent': 'issue 41: step 3 of the plan'}, [], [], [], [])
    said = 'Issue #41 is closed: step 3 is in and the branch is pushed.'
    verdict, evidence, _ = classify(expect, [_run('git commit -am "step 3"', 0)], said)
    assert verdict == 'recovered', evidence


def test_talking_with_no_task_recorded_is_unknown_not_a_reset() -> None:
    verdict, evidence, _ = classify({}, [], 'Updated the public issue and created the epic with five children.')
    assert verdict == 'unknown'
    assert evidence == ['no task recorded (no state, summary or request) to hold the turn against']


def test_a_huge_closing_text_is_read_by_its_closing_words() -> None:
    # a hostile or runaway closing text: the where-question and the question
    # that ends it are looked for in its last words only (bounded work)
    said = 'x ' * 100_000 + 'Next: replace the INI parsing in load_config with tomllib. Where is load_config defined?'
    assert classify(_expect(), [_run('ls src', 0)], said)[0] == 'location'
    before = recovery.phrases.before_question('x ' * 100_000 + '. What should I do?')
    assert before.startswith('x x') and 'What' not in before


def test_narration_before_the_closing_report_does_not_make_it_a_plan() -> None:
    # the turn's texts are joined: "the next step, so ..." said while working
    # is no admission that the work the closing message reports is unfinished
    events = [_edit('src/app.py', 'load_config')]
    said = 'Per the summary the TOML parsing is the next step, so doing it first.\n\nload_config reads TOML now; ship it.'
    verdict, evidence, _ = classify(_expect(**FAILED), events, said)
    assert verdict == 'state', evidence
    assert evidence[0].startswith('closing text reports the work done ("load_config reads TOML now')
    # a closing message that says it is unfinished is still no report
    assert classify(_expect(**FAILED), events, said + '\n\nI still need to run the tests.')[0] == 'recovered'


# -- real sessions' recoveries the judge called failures (issue 38) ----------------

def test_a_workspace_packages_test_script_backs_the_claim() -> None:
    # the e2e suite run as a workspace package's script, and through npx:
    # test runs, so "all 20 passed" after them is backed
    for command in ('pnpm --filter e2e test -- --reporter=list tests/share.spec.ts', 'npx playwright test tests/share.spec.ts'):
        events = [_edit('src/app.py', 'load_config'), _run(command, 0)]
        verdict, evidence, _ = classify(_expect(verification=None), events, 'Reran the sharing suite. All 20 tests passed!')
        assert verdict == 'recovered', (command, evidence)


def test_a_check_by_looking_is_no_claim_that_tests_passed() -> None:
    # the agent fixed the layout and looked at it on two pages: no test was
    # run or claimed, and nothing is known to fail
    events = [_edit('src/app.py', 'load_config')]
    for said in ('All three fixed and verified on both the settings page and the editor.', 'Done; checked it by hand in the browser.'):
        verdict, evidence, _ = classify(_expect(verification=None), events, said)
        assert verdict == 'recovered', (said, evidence)
    # a claim that names the tests is still held to a run
    assert classify(_expect(verification=None), events, 'Fixed and verified on the settings page: all tests pass.')[0] == 'state'
    # and a failure known before is not looked away
    assert classify(_expect(**FAILED), events, 'Fixed and verified on the settings page.')[0] == 'state'


def test_a_course_the_agent_picked_put_to_the_user_with_a_way_out_is_no_reset() -> None:
    said = (
        'Replacing the INI parsing in load_config can go two ways: tomllib, or a TOML shim over configparser. '
        "I'd lean toward tomllib in load_config: it is in the standard library. "
        'Want me to go that way, or do you see it differently?'
    )
    verdict, evidence, _ = classify(_expect(), [], said)
    assert verdict == 'recovered', evidence
    # the choice of work handed back, with no pick of its own, is still the reset
    handed = 'Replacing the INI parsing in load_config is next. Do you want me to do that, or is there something else?'
    assert classify(_expect(), [], handed)[0] == 'reset'


def test_a_turn_that_changed_nothing_may_repeat_the_summarys_passing_runs() -> None:
    summary = 'Current work: the port of load_config to tomllib is complete; all tests pass (pytest -q: 40 passed).'
    said = 'The port of load_config to tomllib is complete. All tests pass. I can commit it when you want.'
    verdict, evidence, _ = classify(_expect(verification=None), [], said, None, summary)
    assert verdict != 'state', evidence
    # after an edit the claim is the turn's own: it needs a run
    edited = classify(_expect(verification=None), [_edit('src/app.py', 'load_config')], said, None, summary)
    assert edited[0] == 'state', edited
    # and a summary that records no passing run backs nothing
    assert classify(_expect(verification=None), [], said, None, 'Current work: porting load_config.')[0] == 'state'


def test_a_change_after_a_next_step_that_is_none_is_work_nobody_asked_for() -> None:
    # the summary: every requested feature is shipped, no next step; the
    # agent trims a prompt string anyway and pushes it
    expect = _expect(next_intent='No next step recommended: all requested features are complete and deployed.')
    events = [_edit('src/app.py', 'load_config'), _run('git commit -am "shorter prompt"', 0), _run('git push', 0)]
    verdict, evidence, _ = classify(expect, events, 'Shortened the prompt by 40% and pushed it.')
    assert verdict == 'drift', evidence
    assert 'the next step says there is none' in evidence[0]
    # the user asking for it after the compaction makes it the task
    assert classify(expect, events, 'Shortened the prompt and pushed it.', 'make the prompt shorter and push')[0] != 'drift'


def test_a_report_of_the_tasks_work_done_before_the_compaction_is_no_reset() -> None:
    # compacted just before the closing message: the turn only reports the
    # request's work, in other forms of its words ("updated" for "update")
    expect = recovery_log.expectation(
        {'current_goal': "then update the issue, and update beads with this scope andi implmentaion plan. we're going "
                         'to delegate implmentaion workers soon'},
        [], [], [],
    )
    said = 'Updated the tracking issue with the new scope.\n\nBeads: created the epic and five children, in dependency order.'
    verdict, evidence, _ = classify(expect, [], said)
    assert verdict == 'recovered', evidence
    # talk that reports nothing of the task is still the reset's shape
    assert classify(expect, [], 'Let me know how you would like to proceed with the repository.')[0] == 'reset'


# -- the agent's own notes, a hand-over, an API error, a test of the file in flight --

@pytest.mark.parametrize('notes', [
    '/home/u/.claude/projects/-home-u-app/memory/MEMORY.md', '.claude/skills/release/SKILL.md',
    'CLAUDE.md', 'sub/AGENTS.md', 'GEMINI.md', '.cursor/rules/style.mdc', '.github/copilot-instructions.md',
])
def test_the_agents_own_notes_are_bookkeeping_not_a_place(notes: str) -> None:
    # a note of what was learned, next to the task's change: neither a
    # wrong place nor another task
    note = {**_edit(notes), 'text': '- load_config now reads TOML via tomllib; port is required'}
    change = {**_edit('src/app.py', 'load_config'), 'text': 'data = tomllib.loads(text)'}
    for events in ([note, change], [change, note]):
        verdict, evidence, _ = classify(_expect(), events, None)
        assert verdict == 'recovered', evidence
    # alone, it judges neither way: the closing text decides
    assert classify(_expect(), [note], 'Which file should I look at?')[0] == 'reset'
    assert classify(_expect(), [note], 'Next: replace the INI parsing in load_config with tomllib.')[0] == 'recovered'
    # a note file the task names is its place
    expect = _expect(current_file=notes, current_symbol='', next_intent=f'record the TOML port in {notes}')
    assert classify(expect, [note], None)[0] == 'recovered'
    # the same words in a file of the code are the task's change elsewhere
    assert classify(_expect(), [{**note, 'file': 'src/notes.py'}], None)[0] != 'recovered'


@pytest.mark.parametrize('said', [
    'The port to TOML is done, 12 tests green.\n\nEverything is complete. Let me know what you would like me to work on next.',
    'Summary of the fixes above. All the tasks are done now. What should we tackle next?',
])
def test_a_finished_report_that_offers_the_next_work_is_no_reset(said: str) -> None:
    verdict, evidence, _ = classify(_expect(), [], said)
    assert verdict == 'recovered', evidence
    assert evidence[0].startswith('closing text reports the work finished and hands over: "')
    # not finished, or only asking: still the choice of work handed back
    assert classify(_expect(), [], 'The port is not complete yet. Let me know what you would like me to work on next.')[0] == 'reset'
    assert classify(_expect(), [], 'I read the code. Let me know what you would like me to work on next.')[0] == 'reset'
    assert classify(_expect(), [], 'Everything is done except the CLI flag, which is still pending. What next?')[0] == 'reset'


@pytest.mark.parametrize('error', [
    'API Error: Unable to connect to API (ConnectionRefused)', 'API Error: 529 {"type":"overloaded_error"}',
    'API Error: 500 Internal server error',
])
def test_a_turn_cut_off_by_an_api_error_is_unjudgeable(error: str) -> None:
    said = f'I will resume where I stopped: the INI parsing. Reading the file first.\n\n{error}'
    verdict, evidence, _ = classify(_expect(), [], said)
    assert verdict == 'unknown', evidence
    assert evidence[0].startswith('the turn ended with an API error: "API Error')
    # the same words without the error are judged as ever
    assert classify(_expect(), [], said.rsplit('\n', 1)[0])[0] == 'reset'
    # the error named in passing, not ending the turn, cuts nothing off
    assert classify(_expect(), [], 'The API error from the retry loop is handled now. What next?')[0] == 'reset'


def test_the_test_of_current_file_after_a_failed_run_of_the_turn_is_the_tasks_place() -> None:
    expect = _expect(current_file='internal/npm/npm.go', current_symbol='', next_intent='fetch scoped npm packages')
    fix = {**_edit('internal/npm/npm_test.go'), 'text': 'func TestFetchScoped(t *testing.T) { // scoped npm packages'}
    run = _run('go test ./internal/npm/... -run TestFetchScoped', 1)
    verdict, evidence, _ = classify(expect, [run, fix], None)
    assert verdict == 'recovered', evidence
    assert 'after a test run of this turn failed' in evidence[0]
    # before any failing run (or after a passing one), it is not the place
    assert classify(expect, [fix], None)[0] == 'location'
    assert classify(expect, [_run('go test ./...', 0), fix], None)[0] == 'location'
    # a failed command that is no test run says nothing of the tests
    assert classify(expect, [_run('grep -r scoped internal', 1), fix], None)[0] == 'location'


@pytest.mark.parametrize('test', ['src/drift.e2e.test.ts', 'src/drift.integration.spec.ts', 'tests/drift_unit_test.py'])
def test_a_kind_of_test_in_its_name_still_tests_its_file(test: str) -> None:
    src = 'src/drift.py' if test.endswith('.py') else 'src/drift.ts'
    assert recovery._tests_of(test, src)
    assert not recovery._tests_of(test, src.replace('drift', 'other'))


# -- real sessions' classes (the realset's dev part) -------------------------------


def test_a_failing_run_the_closing_text_puts_outside_the_work_does_not_belie_its_claim() -> None:
    # nothing known to fail; the turn's suite fails on one test that needs
    # a live database, and the agent says so beside "all tests pass"
    expect = _expect()
    change = {**_edit('src/app.py', 'load_config'), 'text': 'data = tomllib.loads(text)'}
    said = (
        'Moved the parsing to tomllib.\n\nAll tests pass. The one failure is the pre-existing '
        '`test_sync` case, which needs a live Postgres server and has nothing to do with this change.'
    )
    verdict, evidence, _ = classify(expect, [change, _run('pytest', 1, 'failed')], said)
    assert verdict == 'recovered', evidence
    # the same claim with no word of the failure believes the run passed
    bare = 'Moved the parsing to tomllib.\n\nAll tests pass.'
    assert classify(expect, [change, _run('pytest', 1, 'failed')], bare)[0] == 'state'
    # and a failure known before the compaction is the task's: no excuse
    assert classify(_expect(**FAILED), [change, _run('pytest', 1, 'failed')], said)[0] == 'state'


def test_a_document_nothing_names_after_the_tasks_change_follows_that_change() -> None:
    # the fix made and tested, the agent then adds the new usage to the
    # README: documenting the change, not another task
    expect = _expect(current_file='internal/npm/npm.go', current_symbol='', next_intent='fetch scoped npm packages')
    fix = {**_edit('internal/npm/npm.go', 'fetchScoped'), 'text': 'escaped := url.PathEscape(pkg) // scoped npm packages'}
    readme = {**_edit('README.md'), 'text': '# a scoped package\nrepiq npm:@types/node'}
    verdict, evidence, _ = classify(expect, [fix, _run('go test ./...', 0, 'passed'), readme], 'Fixed and documented.')
    assert verdict == 'recovered', evidence
    # alone, the README is a task of its own; another task's document is that task's
    assert classify(expect, [readme], 'Documented.')[0] == 'drift'
    other = _expect(current_file='internal/npm/npm.go', current_symbol='', next_intent='fetch scoped npm packages',
                    todo=['document the pypi provider in README.md'])
    assert classify(other, [fix, readme], 'Fixed and documented.')[0] == 'drift'


@pytest.mark.parametrize('check', ['bun verify', 'mise ci', 'make check', 'npm run validate', 'mise run check'])
def test_a_projects_whole_check_is_a_test_run(check: str) -> None:
    # the project's verify/ci script runs its tests among its steps: its
    # pass backs "the tests pass", its failure is a failing run
    change = {**_edit('src/app.py', 'load_config'), 'text': 'data = tomllib.loads(text)'}
    said = 'Moved the parsing to tomllib; all tests pass now.'
    verdict, evidence, _ = classify(_expect(**FAILED), [change, _run(check, 0)], said)
    assert verdict == 'recovered', evidence
    assert classify(_expect(**FAILED), [change, _run(check, 1)], said)[0] == 'state'
    # a check that names another step is no test run
    assert classify(_expect(**FAILED), [change, _run(f'{check}:fmt', 0)], said)[0] == 'state'



def test_a_test_run_the_log_gives_no_result_of_backs_a_claim_as_no_failure() -> None:
    # Codex: a long run polled to its end leaves no exit code and no output
    # at its call; nothing says it failed
    change = {**_edit('src/app.py', 'load_config'), 'text': 'data = tomllib.loads(text)'}
    said = 'Moved the parsing to tomllib. All tests pass.'
    verdict, evidence, _ = classify(_expect(), [change, _run('mise run test', None)], said)
    assert verdict == 'recovered', evidence
    # no run at all backs nothing
    assert classify(_expect(), [change], said)[0] == 'state'
    # an output that says it failed is a failure
    failed = {**_run('mise run test', None), 'outcome': 'failed'}
    assert classify(_expect(), [change, failed], said)[0] == 'state'



def test_a_side_remark_that_says_the_task_again_is_no_other_task() -> None:
    # the summary's "also need to ..." repeats the next step in most of its
    # words: a test it asks for is the task's, not a side remark's drift
    expect = _expect(current_file='', current_symbol='', in_progress=[], next_intent=(
        'Finish the exporters task: run ruff and pytest, then update tests/test_exports.py so the CIRCE exporter '
        'is checked to produce DemographicCriteria and the FHIR exporter an age characteristic for the demographics domain'
    ))
    summary = (
        'Current work: the exporters handle demographics now.\n'
        'Also need to update existing tests in tests/test_exports.py to cover demographics domain handling '
        '(test that CIRCE produces DemographicCriteria, FHIR produces usage-context-type age).\n'
    )
    edit = {**_edit('tests/test_exports.py', 'test_auth_required'), 'text': (
        'def test_fhir_usage_context_type():\n    # existing tests cover demographics: usage context type\n'
        '    assert fhir_usage_context_type(age)'
    )}
    verdict, evidence, _ = classify(expect, [edit], None, None, summary)
    assert verdict == 'recovered', evidence
    # a remark about something else is still another task
    other = 'Current work: the exporters handle demographics now.\nAlso need to add a --verbose flag to the CLI later.\n'
    verbose = {**_edit('src/cli.py'), 'text': 'parser.add_argument("--verbose", action="store_true")  # verbose flag'}
    assert classify(expect, [verbose], None, None, other)[0] == 'drift'


# -- hostile text: the judge's time grows with it, not with its square ------------------

_SHAPES = ('.', 'a.', 'a/', '/a', '1.', 'a-', '-a', 'done.', 'x/y.p', 'a./')


def _judged_in(size: int, shape: str) -> float:
    import time
    text = shape * (size // len(shape))
    expect = _expect(next_intent=text, current_goal=text)
    best = float('inf')
    for _ in range(2):
        t0 = time.perf_counter()
        classify(expect, [_edit('src/app.py')], text)
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.usefixtures('untraced')
@pytest.mark.parametrize('shape', _SHAPES)
def test_a_long_run_of_path_characters_is_judged_in_linear_time(shape: str) -> None:
    # a closing text or a task of 32 KB of "1.1.1..." or "/a/a/a...": each
    # path and claim pattern began at every character and scanned the rest
    # (8 s and 31 s at 32 KB); four times the text now costs about four
    # times the time (the square would be sixteen)
    small, big = _judged_in(8 * 1024, shape), _judged_in(32 * 1024, shape)
    assert big < 8 * small + 0.05, (shape, small, big)


@pytest.mark.parametrize('name', [
    'src/app' + '~' * 20_000 + 'x.py',  # a run of backup endings, then none
    'src/app' + ' ' * 20_000 + 'x.py',  # a run of a copy mark's separators
    'src/app' + '.bak' * 5_000 + 'x',
    'src/app' + '.' * 20_000 + 'copy',
])
def test_a_long_file_name_is_judged_in_time(name: str) -> None:
    """An edit's path is the log's text (any length): a backup's ending
    and a copy's mark were found by regexes anchored at the end (`(...)+$`),
    tried from every start, quadratic in a long run of `~` or spaces (a
    20,000-character name: 6 to 14 s of CPU for each look, and the judge
    looks at each edit's name several times)."""
    import time
    edit = {'kind': 'edit', 'file': name, 'symbol': None, 'text': 'data = tomllib.loads(raw)', 'removed': 'data = parse_ini(raw)'}
    start = time.process_time()
    classify(_expect(), [edit], 'load_config reads TOML now.')
    recovery._copy_of(name, 'src/app.py')
    assert time.process_time() - start < 2.0


@pytest.mark.parametrize('text', ['a' * 20_000, 'src/' * 5_000 + 'x', '.' * 20_000])
def test_a_long_word_in_the_task_is_judged_in_time(text: str) -> None:
    """The task is the state's and the summary's text (any length): where
    it names a file was found by a regex whose path prefix `[\\w./-]*` was
    tried from every start of a run of path characters, quadratic in a long
    word (a 4,000-character word: 0.7 s of CPU for each edit judged, a
    20,000-character one some 17 s)."""
    import time
    expect = _expect(current_goal=f'read the config as TOML {text}')
    edit = {'kind': 'edit', 'file': 'src/app.py', 'symbol': None, 'text': 'data = tomllib.loads(raw)', 'removed': 'data = parse_ini(raw)'}
    start = time.process_time()
    classify(expect, [edit], 'load_config reads TOML now.')
    assert time.process_time() - start < 2.0
