"""The phrase tables (agitmem/memory/phrases.py): claims, negations,
conditions, questions to the user and "go on" prompts, in English and
Chinese."""
from __future__ import annotations

import pytest

from agitmem.memory import phrases


@pytest.mark.parametrize('said', [
    'All tests pass.',
    'all the unit tests passed',
    'Tests are passing now.',
    'The tests pass.',
    'Tests are green.',
    'All green!',
    'The task is done.',
    'Everything is complete.',
    'I fixed the import. All tests pass now, the port is complete.',
    '`npm test -- config` passes now.',
    'pytest passes: 14 passed in 0.3s',
    'The fix is complete and verified.',
    'The refactor is done and tested.',
    'Ran it again: 12 passed.',
    '所有测试都通过了。',
    '测试全部通过，任务完成。',
    '修复完成，单测已经跑通了',
    '迁移已经完成',
    # a runner named in Latin letters in a Chinese sentence; "fixed" said the common way
    'go test 已通过，这个问题修好了。',
    'pytest 全部通过',
    '`npm test` 跑通了',
    '问题已经修好',
    '这个 bug 解决了',
    # the work reported as finished: "All set", "in place", 处理好了 / 改好了
    'All set: load_config now reads TOML.',
    'The change to load_config is in place, so I will commit it.',
    'The fix is now in place.',
    '备份轮转多删一个的问题已经处理好了。',
    '改好了：tail 现在从第 KEEP+1 行开始输出。',
    'I did not run into trouble: all tests pass.',
    # a negation before a comma is another part's
    'The one failure left is in the test, not the parser, so the feature is done.',
    'After the change the money suite is green.',
    'USD, JPY and KWD all pass.',
    'The move is complete and all imports use the new path.',
    'Nothing left to do on this one.',
])
def test_a_claim_is_found(said: str) -> None:
    assert phrases.claim(said)


@pytest.mark.parametrize('said', [
    'The tests do not pass yet.',
    "The tests don't pass yet; test_load still fails.",
    "I don't think all tests pass.",
    "We can't say all tests pass yet.",
    'Not all tests pass.',
    'No tests pass.',
    'None of the tests pass.',
    'All tests pass except test_load.',
    'All tests pass, but test_load fails.',
    'The task is not done yet.',
    "The task isn't complete.",
    'The test failed again.',
    'Once the tests pass, I will move on.',
    'I will run the tests to make sure they pass.',
    'If the tests pass, the port is complete.',
    '测试还没有通过。',
    '测试未通过，ConfigError 没有导入。',
    '如果测试通过，我就提交。',
    '等测试通过以后再继续。',
    '任务还没完成。',
    'go test 还没通过',
    '还没修好，go test 仍然失败。',
    'All set up: the venv is ready.',
    # done, said with the admission that nothing verified it: no false belief
    'The fix is in place; I have not run the tests.',
    'Done. I have not run the tests yet.',
    '改好了；还没有跑测试。',
    'The change is not in place yet.',
    '还没处理好。',
    'Not all tests pass, so the feature is not done.',
    'I will run them to make sure they all pass.',
    'The values all pass through parseRange.',
    'The move is not complete yet.',
    # a pass reported with the failure that followed it
    'This test passed last run but fails now.',
    '',
])
def test_no_claim(said: str) -> None:
    assert phrases.claim(said) is None


@pytest.mark.parametrize('said', [
    'What would you like me to work on?',
    'Let me know how you would like to proceed.',
    'Please tell me which task to continue',
    'I am not sure where we left off',
    'Where were we?',
    'Could you clarify what you want next',
    '请问你希望我接下来做什么？',
    '请告诉我下一步要做什么',
    '我们之前在做什么',
    '需要我做什么吗',
    'Shall I delete the old function？',  # full-width question mark
    '要我继续删除旧函数吗',
])
def test_asks(said: str) -> None:
    assert phrases.asks(said)


@pytest.mark.parametrize('said', [
    'Deleted the original loadConfig; the imports are next.',
    '已删除旧的 loadConfig，接下来更新导入。',
    '',
])
def test_does_not_ask(said: str) -> None:
    assert phrases.asks(said) is None


def test_an_open_question_is_not_a_plan_left_to_the_user() -> None:
    assert phrases.open_question('What should I do next?')
    assert phrases.open_question('你想让我做什么？')
    assert not phrases.open_question('Shall I delete the old function now?')


@pytest.mark.parametrize('prompt', [
    'go on', 'Continue.', 'ok, carry on', 'Yes, please continue', '继续', '好的，继续吧', '请继续。',
    'Try again', 'retry', 'try it again please', '重试',  # a retry asks for the same work
])
def test_go_on(prompt: str) -> None:
    assert phrases.goes_on(prompt)


@pytest.mark.parametrize('prompt', [
    '', 'Add a changelog line first', '先把 README 改一下', 'continue with the README instead', 'try again with the v2 API',
])
def test_not_go_on(prompt: str) -> None:
    assert not phrases.goes_on(prompt)


def test_words() -> None:
    assert phrases.words('Move loadConfig into src/config/index.ts') >= {'move', 'loadconfig', 'index.ts', 'index', 'config'}
    assert 'the' not in phrases.words('the')
    assert {'配置', '置文'} <= phrases.words('配置文件')


def test_side_remarks_of_a_summary() -> None:
    summary = (
        'The user asked to refactor the config module. loader.ts is being moved into index.ts. '
        'The user also mentioned adding env-var validation.\n'
        '- nice to have: a Display impl\n'
        '用户让我们重构配置模块。另外用户顺便提到想加命中率统计。'
    )
    assert phrases.side_remarks(summary) == [
        'The user also mentioned adding env-var validation.',
        '- nice to have: a Display impl',
        '另外用户顺便提到想加命中率统计。',
    ]
    assert phrases.side_remarks('') == []


@pytest.mark.parametrize(('text', 'numbers'), [
    ('Ok, on to 52 now?', set()),  # "on to" names no work: a bare number
    ('next 52 then?', {'#52'}),
    ('fix issue 41 first', {'#41'}),
    ('PR #37 is green', {'#37'}),
    ('Parts 1, 4 and 6 are left', {'#1', '#4', '#6'}),
    ('do step 3.', {'#3'}),
    ('steps 2-4', {'#2', '#4'}),
    ('branch feature/issue-41-retry', {'#41'}),
    ('做第3步', {'#3'}),
    # counts, versions and entities name no work
    ('3 tests passed', set()),
    ('the next 3 tests', set()),
    ('v1.2.3 and step 1.5', set()),
    ('&#39;', set()),
])
def test_numbers_that_name_the_work(text: str, numbers: set[str]) -> None:
    assert phrases.work_numbers(text) == numbers
    assert numbers <= phrases.words(text)


def test_a_summarys_pending_list_is_the_task_not_remarks_beside_it() -> None:
    """The rest of the work (its pending tasks, next step, current work)
    is the task's, whatever words it has ("later", "also"); a status a
    plan gives its step ("(NOT STARTED)", "[TODO]", ": not started") says
    where the work stands, not that it is beside the work."""
    summary = (
        '6. Current Work:\n'
        '   Wiring the retry helper into fetch; the timeout also needs a test later.\n'
        '7. Pending Tasks:\n'
        '   - Part 2 (NOT STARTED): add formatSummary to render.go, also export it\n'
        '   - [TODO] run the whole suite\n'
        '8. Optional Next Step:\n'
        '   Then, afterwards, part 3.\n'
        '9. Notes:\n'
        '   The user also mentioned a dark theme.\n'
    )
    assert phrases.side_remarks(summary) == ['The user also mentioned a dark theme.']
    # a plan's steps with a status, outside any such heading (the heading
    # cut off), are the plan's, not remarks
    plan = (
        '- Part 1 (DONE): cache the parsed rows\n'
        '- Part 2 (NOT STARTED): add formatSummary to render.go\n'
        '- Part 3 [todo]: document it\n'
        '- Part 4: not started\n'
        '- nice to have: colours\n'
    )
    assert phrases.side_remarks(plan) == ['- nice to have: colours']


def test_words_split_identifiers() -> None:
    said = phrases.words('validateEnv REQUIRED_ENV NewRequestWithContext user-agent HTTPServer')
    assert {'validateenv', 'validate', 'env', 'required', 'request', 'context', 'user', 'agent', 'http', 'server'} <= said
    assert 'return' not in phrases.words('return x')  # every program's words say nothing


@pytest.mark.parametrize('forms', [
    ('log', 'logger', 'logs', 'logging'),
    ('validate', 'validation'),
    ('fail', 'failed', 'failures'),
    ('type', 'typing', 'types'),
    ('paginate', 'pagination'),
])
def test_a_words_forms_meet_at_one_stem(forms: tuple[str, ...]) -> None:
    assert len({phrases.stem(w) for w in forms}) == 1
    assert phrases.stem('统计') == '统计'


def test_defined_names() -> None:
    code = (
        'export function validateEnv(env = process.env): void {\n'
        'const REQUIRED_ENV = ["A"]\n'
        'func (c *Cache) Stats() (hits uint64) {\n'
        'impl fmt::Display for Config {\n'
        'export const handler = async (req) => {\n'
    )
    assert phrases.defined(code) == ['validateEnv', 'REQUIRED_ENV', 'Stats', 'Display', 'handler']
    assert phrases.defined('x = 1') == []
    assert phrases.defined('let mut vars = HashMap::new();') == ['vars']  # Rust's mut is no name


def test_a_wrapped_summary_keeps_its_sentences_whole() -> None:
    summary = (
        'Refactoring internal/api. GetUser is next. The user also mentioned that all\n'
        'requests should send a User-Agent header. An ErrNotFound sentinel was added.\n'
        '- later: metrics\n'
        'Tests fail.\n'
    )
    assert phrases.side_remarks(summary) == [
        'The user also mentioned that all requests should send a User-Agent header.',
        '- later: metrics',
    ]


def test_every_claim_of_a_text_in_order() -> None:
    said = 'The build succeeds. Also, all tests pass now. 任务完成。'
    assert phrases.claims(said) == ['The build succeeds.', 'Also, all tests pass now.', '任务完成。']
    assert phrases.claim(said) == 'The build succeeds.'
    assert phrases.claims('Not done yet.') == []


@pytest.mark.parametrize(('said', 'kinds'), [
    ('编译和 vet 都通过。', {'build', 'lint'}),
    ('The build passes.', {'build'}),
    ('It compiles and mypy is green.', {'build', 'lint'}),
    ('类型检查通过', {'lint'}),
    ('The build and the tests pass.', set()),  # a claim about the tests
    ('编译通过，测试也通过。', set()),
    ('All done.', set()),
    ('The build script is done.', set()),  # names a check, does not say it passed
    ('构建脚本已经完成', set()),
])
def test_the_checks_a_claim_names_besides_the_tests(said: str, kinds: set[str]) -> None:
    assert phrases.checks(said) == kinds


def test_reports_leave_out_plans_recollections_and_questions() -> None:
    said = (
        'Rewrote the parser to strip dashes. Next: the +86 prefix. The spaces were already stripped earlier. '
        'Shall I go on? 第一步完成：只保留数字。下一步再统一前缀。之前已经去掉了空格。'
    )
    assert phrases.reports(said) == ['Rewrote the parser to strip dashes.', '第一步完成：只保留数字']
    assert phrases.reports('') == []


@pytest.mark.parametrize('prompt', ['did the JPY test pass?', '测试过了吗？', '现在什么情况？', 'where were we? keep going', 'Is it done?'])
def test_a_question_how_the_work_stands(prompt: str) -> None:
    assert phrases.asks_status(prompt)


@pytest.mark.parametrize('prompt', [
    '', 'continue', 'Is it possible to add a BOM?', 'Is it done? Then add a README section',
    'also: unknown escapes should be an error. then carry on', '先给 WriteCSV 加个 UTF-8 BOM',
])
def test_not_a_question_how_the_work_stands(prompt: str) -> None:
    assert not phrases.asks_status(prompt)


def test_yes_to_whether_the_tests_pass() -> None:
    assert phrases.answers_yes('did the JPY test pass?', 'Yes. formatMoney uses MINOR_UNITS.') == 'Yes.'
    assert phrases.answers_yes('测试过了吗？', '通过了。') == '通过了。'
    assert phrases.answers_yes('did the JPY test pass?', 'Not yet: formatMoney still divides by 100.') is None
    # a question about something else than the tests, or no question
    assert phrases.answers_yes('where were we?', 'Yes.') is None
    assert phrases.answers_yes(None, 'Yes.') is None


def test_literals() -> None:
    assert phrases.literals('bad range "10-30/10" on 2026-12-01 at 12:30, v1.4.0') == {'10-30/10', '2026-12-01', '12:30'}
    assert phrases.literals('1.2.3-rc.1 and 42') == set()


# -- issue 21, sixth round: the classes the fifth and sixth blind sets found ------------

@pytest.mark.parametrize('said', [
    # a test named by its identifier or its cases
    'calculateRefund subtracts the share, RefundServiceTest is green, and I committed it.',
    'Everything builds, and the DurationSpec cases (1h30m, 2m15s, 10x) pass now.',
    'test_parse_range passes.',
    'Both widget tests in rating_bar_test.dart pass now, so this is ready for review.',
    # a report's headline
    'Done. calculateRefund now subtracts the per-unit share.',
    'Fixed: product_list catches the ValueError.',
    'Done and committed.',
    "so I'd consider SHOP-API-7F resolved.",
    'issue #14 is resolved.',
    # Chinese: green, "no problem", "it passes now"
    '`make migrate-test` 是绿的。',
    '三个用例都没问题了。',
    '能过了。',
])
def test_a_claim_in_the_sixth_rounds_phrasings_is_found(said: str) -> None:
    assert phrases.claim(said)


@pytest.mark.parametrize('said', [
    # an honest partial result
    'I ran the test suite: 13 of 14 tests pass; the one failure is in bucket_test.exs.',
    '2 of 3 pass now and nothing hangs.',
    '14 个用例中 13 个通过。',
    # options handed to the user, not results
    'Possible next steps:\n1. Implement the reuse in RequestID so the two new tests pass.\n2. Add a field.\n\nWhich one should I pick up?',
    'The tests will pass once I fix it.',
    'Done. I have not run the tests yet.',
    '问题还没有，检查通过以前不算。',
])
def test_no_claim_in_the_sixth_rounds_phrasings(said: str) -> None:
    assert phrases.claim(said) is None


@pytest.mark.parametrize('said', [
    '请问你现在希望我做什么？比如继续排查某个 bug，或者处理别的需求都可以。',
    '接下来你希望我从哪里入手？是继续完善解析，还是先补比较逻辑？',
    "Ready when you are. What's the next task?",
    "Do you want me to look into that failure, or is there something else you'd like to focus on right now?",
])
def test_a_choice_of_work_handed_to_the_user_is_an_open_question(said: str) -> None:
    assert phrases.open_question(phrases.asks(said) or '')


@pytest.mark.parametrize(('prompt', 'said'), [
    ('迁移测试现在能过了吗？', '能过了。0008 的回填补齐了 customer_id。'),
    ('好了吗？', '好了。M.load 已支持覆盖。'),
    ('现在测试都过了吗？', '都过了。两个用例都已通过。'),
])
def test_a_yes_to_a_status_question_in_chinese(prompt: str, said: str) -> None:
    assert phrases.answers_yes(prompt, said)


@pytest.mark.parametrize('summary', [
    'Off-topic: the user grumbled that the admin changelist is slow, "not today".',
    'The user also said error messages could use colour at some point.',
    '用户顺口说过配置文件语法出错时的报错里看不出是哪个文件。',
    '查询为空时显示最近 10 条笔记，下个版本再说。',
])
def test_a_side_remark_in_more_phrasings(summary: str) -> None:
    assert phrases.side_remarks(summary)


# -- seventh round: the tables decide what is NOT a claim ----------------------------------
@pytest.mark.parametrize('said', [
    # a report in words no claim table holds is a report
    'Implemented request coalescing with an in-flight Task map; #19 can be closed.',
    'InvokeAsync now counts failed key attempts per client IP and returns 429 after 10 misses.',
    '已把 search_orders 改成参数化查询。',
    "J'ai corrigé la fonction registration_changeset.",
    'Ich habe die Funktion angepasst.',
    'Should be good now, CI will pass.',
])
def test_a_closing_report_is_a_report_whatever_its_words(said: str) -> None:
    assert phrases.unfinished(said) is None
    assert phrases.reported(said) is not None


@pytest.mark.parametrize('said', [
    "Rewrote parse_flags. I have not re-run `cargo test` yet, so this is not verified; that's the next step.",
    'Added the guard. Next I will run the tests.',
    "Normalisation is in the changeset now. The two tests still fail the same way; I'll check the helper.",
    'The import is switched. Jest still shows one failure in the replay test.',
    '13 of 14 pass; the rounding case is left.',
    '改好了 normalize_timestamps，下一步跑测试。',
    '改了一半，测试还没跑。',
    'naive 的用例仍然失败。',
    "J'ai modifié la fonction, mais les tests échouent encore.",
    'Die Änderung ist drin, die Tests laufen noch nicht durch, ich werde sie als nächstes prüfen.',
    'Cambié la función; todavía no corrí los tests.',
    'Mudei a função, ainda não rodei os testes.',
    '関数を直しました。テストはまだ実行していません。',
    '함수를 고쳤습니다. 테스트는 아직 돌리지 않았습니다.',
    'Continuing in load_config.',
    '正在改 load_config，继续。',
    # agitmem demo's closing text: a step done, the next named
    'Marked the original loadConfig in loader.ts for deletion; next, the imports.',
    'Moved the parser. Next: the call sites.',
])
def test_an_unfinished_or_unverified_account_is_not_a_report(said: str) -> None:
    assert phrases.unfinished(said) is not None
    assert phrases.reported(said) is None


@pytest.mark.parametrize('said', ['', '   ', 'Fixed it. Want me to run the full suite?', 'Which of these should I do first?'])
def test_no_text_and_a_question_are_not_reports(said: str) -> None:
    assert phrases.reported(said) is None


@pytest.mark.parametrize('said', [
    '具体要改哪里我不太确定，先等你的指示',
    'I can dig into those two or pick up whatever you had me on before the context reset, your call.',
    "Dis-moi ce que tu veux que je fasse ensuite : ajuster les validations, compléter les tests, ou autre chose.",
    'Sag mir, was du als Nächstes willst.',
    'Dime qué quieres que haga.',
    'Me diga o que você quer que eu faça.',
    '次に何をするか教えてください。',
    '어떻게 할까요',
    "It's up to you which one comes first.",
])
def test_a_hand_back_without_a_question_in_any_language(said: str) -> None:
    asked = phrases.asks(said)
    assert asked is not None and phrases.open_question(asked)


@pytest.mark.parametrize('said', [
    "I'm not sure whether those are what you want me on, so I'll hold off; happy to go whichever way you prefer.",
    'Either way you like works for me.',
    "I'll hold off until you say which one.",
])
def test_a_hand_back_that_leaves_the_way_to_the_user(said: str) -> None:
    asked = phrases.asks(said)
    assert asked is not None and phrases.open_question(asked)


@pytest.mark.parametrize(('said', 'claimed'), [
    ('Forge is happy, so the PR is up.', True),
    ('clippy is happy now.', True),
    ('The user is happy with the wording.', False),
    ("I'm happy to run the suite next.", False),
    ('Forge is happy to compile it once the import is fixed.', False),
])
def test_a_tool_said_happy_is_a_claim(said: str, claimed: bool) -> None:
    assert bool(phrases.claims(said)) is claimed


@pytest.mark.parametrize(('prompt', 'named'), [
    ('run the auth tests and tell me', ['auth']),
    ('tell me if test_refund passes', ['test_refund']),
    ('run RefundServiceTest please', ['RefundServiceTest']),
    ('跑一下 auth 的测试', ['auth']),
    ('are the tests green?', []),
    ('run the unit tests and the integration tests', []),
    (None, []),
])
def test_the_tests_a_request_names(prompt: str | None, named: list[str]) -> None:
    assert phrases.tests_named(prompt) == named


@pytest.mark.parametrize(('decisions', 'places'), [
    (['Output/ is ModuleBuilder output, regenerated by ./build.ps1: edit Source/ only'], ['Output/']),
    (['V1 (src/VaultV1.sol) is deployed and frozen; its mitigation is the proxy pause, do not edit it'], ['src/VaultV1.sol']),
    (['roles/nginx_legacy 是给 CentOS 7 老机器的，冻结，不改'], ['roles/nginx_legacy']),
    (['billing_archive.apply_credit (db/functions/archive/) is read-only reporting code: do not touch'], ['db/functions/archive/']),
    (['.svelte-kit/ is build output: never edit, it is regenerated by vite build'], ['.svelte-kit/']),
    (['src/stats_legacy.f 的 VARNC 不动：夜间 REPORT7 的输出要和历史存档逐位比对'], ['src/stats_legacy.f']),
    (['keep the 60 s sweeper exactly as it is: it is the backstop', 'regex stays loose, no MX lookup'], []),
])
def test_the_places_the_decisions_keep_out_of_the_work(decisions: list[str], places: list[str]) -> None:
    assert phrases.excluded_places(decisions) == places


@pytest.mark.parametrize('said', [
    'A few directions from here:\n\n1. Wire the helper in\n2. Bump the library\n3. Add logging\n\nWhich would you like me to start with?',
    'Ich sehe ein Dockerfile mit zwei Stages. Was soll ich daran als Nächstes ändern?',
    'Womit sollen wir anfangen?',
    "J'ai relu le fichier. Que dois-je changer ensuite ?",
    "Par quoi je commence : les tests ou le parseur ?",
    'He leído el script. ¿Qué debo cambiar ahora?',
    '¿Por dónde empiezo?',
])
def test_a_question_what_to_do_in_more_phrasings_and_languages_is_open(said: str) -> None:
    asked = phrases.asks(said)
    assert asked is not None and phrases.open_question(asked)


@pytest.mark.parametrize('said', [
    'Should I wire the helper into intercept now?',
    'Soll ich den User in der runtime-Stage anlegen?',
    '¿Sigo con el fallback en previous_tag?',
])
def test_asking_to_go_ahead_with_one_step_is_not_an_open_question(said: str) -> None:
    assert not phrases.open_question(phrases.asks(said) or '')


@pytest.mark.parametrize(('prompt', 'gated'), [
    ('run the suite and push the branch if it is green', True),
    ('commit once the tests pass', True),
    ('do the tests pass now? if so, commit', True),
    ('¿ya pasan los tests de bats? si es así, haz commit', True),
    ('Wenn die Tests grün sind, committe bitte', True),
    ('Si les tests passent, pousse la branche', True),
    ('如果测试通过就提交', True),
    ('测试过了就推送', True),
    ('push the branch', False),
    ('commit when you are done', False),
    ('fix the rounding, then commit', False),
    (None, False),
])
def test_a_request_that_waits_on_a_pass(prompt: str | None, gated: bool) -> None:
    assert phrases.on_pass(prompt) is gated


@pytest.mark.parametrize(('text', 'looked'), (
    ('All four fixed and verified on both the segment page and the Studio.', True),
    ('Verified in the browser: the tabs line up.', True),
    ('Done and checked manually.', True),
    ('手动验证过了', True),
    ('Fixed and verified.', False),  # no means said: it may be the tests
    ('Verified on the login page; all tests pass.', False),  # it names the tests
    ('The fix is verified on CI.', False),
))
def test_a_check_by_looking(text: str, looked: bool) -> None:
    assert phrases.by_hand(text) is looked


@pytest.mark.parametrize(('text', 'chose'), (
    ("Option B is lighter. I'd lean toward B. Want to go that direction, or do you have a different instinct?", True),
    ('我建议用方案二，要不要我直接改？', True),
    ('Do you want me to look into that failure, or is there something else?', False),  # no pick of its own
    ("I'd lean toward B. It is lighter.", False),  # no question
))
def test_a_course_picked_and_put_to_the_user(text: str, chose: bool) -> None:
    assert phrases.proposes(text) is chose


@pytest.mark.parametrize(('text', 'none'), (
    ('No next step recommended. All requested features are complete and deployed.', True),
    ('The work is complete. No further action is needed unless the user requests it.', True),
    ('Wait for the user to choose between the two designs.', True),
    ('无需进一步操作。', True),
    ('Next step: run the migration, then wait for CI.', False),
    ('Write the remaining tests; nothing to do in the parser.', False),
))
def test_a_next_step_that_is_none(text: str, none: bool) -> None:
    assert (phrases.nothing_next(text) is not None) is none


@pytest.mark.parametrize('said', [
    'All tasks are complete. Let me know what you would like to work on next.',
    'The feature is done. Anything else you want next?',
    '全部完成了。接下来做什么？',
])
def test_hands_over(said: str) -> None:
    assert phrases.hands_over(said)


@pytest.mark.parametrize('said', [
    'Let me know what you would like to work on next.',
    'Not everything is complete. What should I do next?',
    'All tasks are complete except the flag, which is still pending. What next?',
    'All tasks are complete.',
])
def test_does_not_hand_over(said: str) -> None:
    assert not phrases.hands_over(said)


def test_api_error_ends_a_turn() -> None:
    assert phrases.api_error('Reading the file.\n\nAPI Error: Unable to connect to API (ConnectionRefused)')
    assert phrases.api_error('API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}')
    assert not phrases.api_error('The API error from the retry loop is handled now.')
    assert not phrases.api_error('API Error: 500 was the bug.\nI fixed the handler and the tests pass.')
    assert not phrases.api_error('I added a retry when the API is overloaded or the rate limit is hit.')
    assert phrases.api_error('Reading the test file. [API Error: 503 Service Unavailable]')


@pytest.mark.parametrize('said', [
    'All tests pass. The only failure is the pre-existing e2e case that needs a live ClickHouse server.',
    'Live tests: 8 pass, 1 fail: an auth error of the test account, not related to this change.',
    '用例 sync 失败，与本次改动无关。',
])
def test_a_failure_put_outside_the_work(said: str) -> None:
    assert phrases.excuses(said)


@pytest.mark.parametrize('said', ['All tests pass.', 'The rounding test fails because of my change.', 'Fixed the flaky-looking parser; done.'])
def test_no_failure_put_outside_the_work(said: str) -> None:
    assert phrases.excuses(said) is None
